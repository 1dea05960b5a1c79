//! The scene shared by `benches/collision.rs` and `examples/sheet_profile.rs`.

/// `scenes/spheres_on_sheet.scn` grown `k` times along x and z: `k`² times the sheet's quads
/// and spheres, at the same spacing (so the same number of candidate pairs per primitive).
pub fn sheet_scene(k: usize) -> String {
    let sheet = 71 * k + 1;
    let spheres = 32 * k;
    let kf = k as f64;
    let base =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenes/spheres_on_sheet.scn")).expect("scenes/spheres_on_sheet.scn");
    base.replace(
        "n=\"72 1 72\" min=\"-10 0 -10\" max=\"10 0 10\"",
        &format!("n=\"{sheet} 1 {sheet}\" min=\"{} 0 {}\" max=\"{} 0 {}\"", -10.0 * kf, -10.0 * kf, 10.0 * kf, 10.0 * kf),
    )
    .replace(
        "n=\"32 1 32\" min=\"-7.93 0.5 -8.07\" max=\"8.07 0.5 7.93\"",
        &format!(
            "n=\"{spheres} 1 {spheres}\" min=\"{} 0.5 {}\" max=\"{} 0.5 {}\"",
            -8.0 * kf + 0.07,
            -8.0 * kf - 0.07,
            8.0 * kf + 0.07,
            8.0 * kf - 0.07
        ),
    )
    .replace("totalMass=\"10.24\"", &format!("totalMass=\"{}\"", 0.01 * (spheres * spheres) as f64))
}
