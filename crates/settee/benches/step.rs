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

/// A `TetrahedronFEMForceField` (large) step on SOFA's liver mesh, without collision: the mesh is
/// read from the suite at bench time; the scene itself is written to a temporary file.
const LIVER_SCENE: &str = r#"<Node name="root" dt="0.02" gravity="0 -9.81 0">
    <DefaultAnimationLoop/>
    <Node name="Liver">
        <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
        <CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>
        <MeshGmshLoader name="loader" filename="mesh/liver.msh"/>
        <MeshTopology src="@loader"/>
        <MechanicalObject src="@loader" name="dofs"/>
        <UniformMass totalMass="60"/>
        <TetrahedronFEMForceField name="FEM" youngModulus="3000" poissonRatio="0.3" method="large"/>
        <FixedProjectiveConstraint indices="3 39 64"/>
    </Node>
</Node>
"#;

fn bench_liver(c: &mut Criterion, suite: &Path) {
    let data = [suite.join("data")];
    if !data[0].join("mesh/liver.msh").is_file() {
        eprintln!("skipping the liver bench: {} has no mesh/liver.msh", data[0].display());
        return;
    }
    let path = std::env::temp_dir().join(format!("settee-bench-liver-{}.scn", std::process::id()));
    if let Err(e) = std::fs::write(&path, LIVER_SCENE) {
        eprintln!("skipping the liver bench: cannot write {}: {e}", path.display());
        return;
    }
    bench_scene(c, "liver TetrahedronFEMForceField large (EulerImplicit + CG 25)", path.clone(), &data);
    let _ = std::fs::remove_file(&path);
}

fn steps(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    bench_scene(c, "hex beam 10x10x40 (SparseLDL)", root.join("scenes/beam_10x10x40.scn"), &[]);
    let suite = root.join("../shared/sofa-suite");
    if suite.is_dir() {
        bench_liver(c, &suite);
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
