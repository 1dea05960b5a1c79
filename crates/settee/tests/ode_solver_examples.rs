//! SOFA's example scenes of the Newton-based ODE solvers run, and their solvers report what
//! they did.

use std::path::PathBuf;

use settee_core::scene::ComponentEntry;
use settee_core::Scene;
use settee_odesolver::newton_raphson::NewtonRaphsonSolver;

/// Loads an example scene with SOFA's data directories and runs it for `steps` steps.
fn run(rel: &str, steps: usize) -> Option<Scene> {
    let root = settee_testkit::shared_dir("sofa-examples")?;
    let path = root.join("examples").join(rel);
    let dirs: Vec<PathBuf> = vec![root.join("share"), root.join("examples")];
    let mut loaded = settee::run::load(&path, &settee::factory(), &dirs).unwrap_or_else(|e| panic!("{rel}: {}", e.first_error()));
    let dt = loaded.scene.root().context.dt;
    for step in 0..steps {
        settee_core::simulation::animate(&mut loaded.scene, dt).unwrap_or_else(|e| panic!("{rel}, step {step}: {e}"));
    }
    Some(loaded.scene)
}

fn named<'a>(scene: &'a Scene, name: &str) -> &'a ComponentEntry {
    scene.components.iter().map(|(_, e)| e).find(|e| e.name == name).unwrap_or_else(|| panic!("no component '{name}'"))
}

#[test]
fn static_solver_scene_reaches_its_equilibria() {
    let Some(scene) = run("Component/ODESolver/Backward/StaticSolver.scn", 10) else { return };
    // Each of the three objects (springs, corotational FEM, linear FEM) is at its equilibrium
    // after the first step: the next ones start there.
    for name in ["newtonSolver_springs", "newtonSolver_corot", "newtonSolver_lin"] {
        let d = &named(&scene, name).data;
        assert_eq!(d.get(NewtonRaphsonSolver::STATUS), "ConvergedEquilibrium", "{name}");
        let r = d.get(NewtonRaphsonSolver::RESIDUAL_GRAPH);
        assert!(r.len() == 1 && r[0] <= 1e-10, "{name}: {r:?}");
    }
}
