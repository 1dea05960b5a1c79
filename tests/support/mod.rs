//! Helpers shared by the end-to-end tests in `tests/`.

use std::path::PathBuf;

/// The SOFA suite: `$SETTEE_SUITE`, else `../shared/sofa-suite` beside the repository, when it
/// holds `scenes/`, `references/` and `data/`. When it does not, the calling test skips with a
/// note (`None`) — unless `CI` or `SETTEE_REQUIRE_SUITE` is set ([`suite_required`]), where it
/// fails instead: a test that could not compare anything must not count as passed.
#[allow(dead_code)] // not every test file needs the suite
pub fn suite() -> Option<PathBuf> {
    let dir =
        std::env::var_os("SETTEE_SUITE").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/sofa-suite"));
    if ["scenes", "references", "data"].iter().all(|d| dir.join(d).is_dir()) {
        return Some(dir);
    }
    use std::io::Write;
    assert!(
        !suite_required(),
        "SOFA suite not found at {} (set SETTEE_SUITE) and CI or SETTEE_REQUIRE_SUITE is set: this test needs it",
        dir.display()
    );
    // Written to the stream itself, in one piece: the test harness would capture `eprintln!`.
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let note = format!("note: SOFA suite not found at {} (set SETTEE_SUITE); skipped: {test}\n", dir.display());
    let _ = std::io::stderr().write_all(note.as_bytes());
    None
}

/// True when a missing suite must fail the tests that need it: under CI (`CI` set to anything
/// but `false`/`0`, as CI services set it) or with `SETTEE_REQUIRE_SUITE=1`.
pub fn suite_required() -> bool {
    let set = |var: &str| std::env::var(var).is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"));
    set("SETTEE_REQUIRE_SUITE") || set("CI")
}

/// Writes a scene text into a fresh temporary file and returns its path.
#[allow(dead_code)] // not every test file writes scenes
pub fn temp_scene(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("settee-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(format!("{name}.scn"));
    std::fs::write(&p, text).expect("write scene");
    p
}
