//! Helpers for the tests of this crate: attribute lists and a minimal scene initialisation.

use std::path::PathBuf;

use settee_core::{Attr, InitCtx, Scene, SimResult};

pub fn attrs(pairs: &[(&str, &str)]) -> Vec<Attr> {
    pairs.iter().map(|(n, v)| Attr { name: n.to_string(), value: v.to_string(), pos: None }).collect()
}

/// `init` of every component, top-down in object order (SOFA's init visitor, without the
/// animation loop and the bottom-up pass).
pub fn init_scene(scene: &mut Scene) -> SimResult {
    scene.resolve_all_links();
    for n in scene.preorder(Scene::ROOT) {
        for c in scene.node(n).objects.clone() {
            scene.pull_links(c);
            scene.with_taken(c, |obj, scene| obj.init(&mut InitCtx { scene, id: c }))?;
            scene.entry_mut(c).initialized = true;
        }
    }
    Ok(())
}

/// The SOFA suite: `$SETTEE_SUITE`, else `../shared/sofa-suite` beside the repository, when it
/// holds `scenes/`, `references/` and `data/`. When it does not, the calling test skips with a
/// note (`None`) — unless `CI` or `SETTEE_REQUIRE_SUITE` is set, where it fails instead: a
/// test that could not compare anything must not count as passed.
pub fn suite() -> Option<PathBuf> {
    let dir = std::env::var_os("SETTEE_SUITE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join("../shared/sofa-suite"));
    if ["scenes", "references", "data"].iter().all(|d| dir.join(d).is_dir()) {
        return Some(dir);
    }
    use std::io::Write;
    // CI services set `CI`; `.ci/run` also sets SETTEE_REQUIRE_SUITE.
    let required =
        ["SETTEE_REQUIRE_SUITE", "CI"].iter().any(|k| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false")));
    assert!(!required, "SOFA suite not found at {} (set SETTEE_SUITE) and CI or SETTEE_REQUIRE_SUITE is set: this test needs it", dir.display());
    // Written to the stream itself, in one piece: the test harness would capture `eprintln!`.
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let note = format!("note: SOFA suite not found at {} (set SETTEE_SUITE); test skipped: {test}\n", dir.display());
    let _ = std::io::stderr().write_all(note.as_bytes());
    None
}
