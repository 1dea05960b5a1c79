//! Every scene shipped in `scenes/` loads without warnings and runs.

use settee_core::{Severity, VecId};

#[test]
fn shipped_scenes_load_cleanly_and_run() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let factory = settee::factory();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("scenes/") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "scn") {
            continue;
        }
        let mut l = settee::load(&path, &factory, &[]).unwrap_or_else(|f| panic!("{}: {}", path.display(), f.first_error()));
        // Files the scene's exporters write go to a scratch directory, not the working tree.
        l.scene.output_dir = std::env::temp_dir().join(format!("settee-example-output-{}", std::process::id()));
        let warnings: Vec<_> = l.scene.messages.iter().filter(|m| m.severity >= Severity::Warning).collect();
        assert!(warnings.is_empty(), "{}: {warnings:?}", path.display());
        let dt = l.scene.root().context.dt;
        for _ in 0..20 {
            settee_core::simulation::animate(&mut l.scene, dt).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        // Something falls or hangs under gravity (-y in every shipped scene): some node of
        // some 3-D state has moved down.
        let moved_down = l.scene.store.states.values().any(|st| {
            let (x, x0) = (st.read(VecId::POSITION), st.read(VecId::REST_POSITION));
            st.layout == settee_core::Layout::Vec3
                && x0.len() == x.len()
                && x.chunks_exact(3).zip(x0.chunks_exact(3)).any(|(p, p0)| p[1] < p0[1] - 1e-6)
        });
        assert!(moved_down, "{}", path.display());
        count += 1;
    }
    assert!(count >= 2);
}
