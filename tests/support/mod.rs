//! Helpers shared by the end-to-end tests in `tests/`.

use std::path::PathBuf;

/// The SOFA conformance suite beside the repository (`../shared/sofa-suite`), when present.
pub fn suite() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/sofa-suite");
    p.is_dir().then_some(p)
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
