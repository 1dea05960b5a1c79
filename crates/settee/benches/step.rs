//! Time per step of whole scenes, by stage of the pipeline (criterion: statistically sound
//! timings with warm-up and outlier detection, which timed tests cannot give).
//!
//! `cargo bench -p settee` — the SOFA suite scenes run only when ../shared/sofa-suite exists.

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};
use settee_core::Scene;

fn load(path: &Path, data: &[PathBuf]) -> Option<Scene> {
    let l = settee::load(path, &settee::factory(), data).ok()?;
    Some(l.scene)
}

fn bench_scene(c: &mut Criterion, name: &str, path: PathBuf, data: &[PathBuf]) {
    let Some(mut scene) = load(&path, data) else {
        eprintln!("skipping {name}: {} does not load", path.display());
        return;
    };
    let dt = scene.root().context.dt;
    for _ in 0..3 {
        settee_core::simulation::animate(&mut scene, dt).expect("warm-up step");
    }
    c.bench_function(name, |b| b.iter(|| settee_core::simulation::animate(&mut scene, dt).expect("step")));
}

fn steps(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    bench_scene(c, "hex beam 10x10x40 (SparseLDL)", root.join("scenes/beam_10x10x40.scn"), &[]);
    let suite = root.join("../shared/sofa-suite");
    if suite.is_dir() {
        let data = [suite.join("data")];
        for s in [
            "Component/LinearSolver/Direct/FEMBAR_SparseLDLSolver.scn",
            "Component/LinearSolver/Iterative/FEMBAR_CGLinearSolver.scn",
            "Component/LinearSolver/Preconditioner/FEMBAR_PCG_NoPreconditioner.scn",
            "Component/SolidMechanics/FEM/TetrahedronFEMForceField.scn",
        ] {
            bench_scene(c, s, suite.join("scenes").join(s), &data);
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = steps
}
criterion_main!(benches);
