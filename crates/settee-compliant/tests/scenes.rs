//! The iterative KKT solvers inside CompliantImplicitSolver, on scenes given as text: a
//! unilateral stop solved by SequentialSolver, MINRES (Schur and KKT modes) against LDLTSolver
//! on a small hanging chain, and the positioned error of a preconditioned CG meeting
//! constraints.

mod support;

use std::path::PathBuf;

use settee_core::{role, Scene, VecId};
use support::factory;

/// Writes a scene under a unique name (tests run in parallel).
fn write(name: &str, text: &str) -> PathBuf {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    settee_testkit::temp_scene(&format!("{name}-{k}"), text)
}

fn load(name: &str, text: &str) -> (Scene, PathBuf) {
    let f = factory();
    let p = write(name, text);
    let mut scene = settee_scene::load_scene(&p, &f, &settee_scene::DataPath::new(Vec::<PathBuf>::new())).unwrap_or_else(|e| panic!("{e}"));
    assert!(!scene.has_errors(), "{:#?}", scene.messages);
    settee_core::simulation::init_root(&mut scene, &f).unwrap_or_else(|e| panic!("init: {e}"));
    (scene, p)
}

/// Positions of the first mechanical state found under `node_name` (the root when empty).
fn positions(scene: &Scene) -> Vec<f64> {
    let ms = scene
        .slot(Scene::ROOT, role::MECHANICAL_STATE)
        .or_else(|| scene.preorder(Scene::ROOT).into_iter().find_map(|n| scene.slot(n, role::MECHANICAL_STATE)));
    let s = scene.state_of(ms.unwrap()).unwrap();
    scene.store.get(s).read(VecId::POSITION).to_vec()
}

fn step(scene: &mut Scene) {
    let dt = scene.root().context.dt;
    settee_core::simulation::animate(scene, dt).unwrap_or_else(|e| panic!("{e}"));
}

const STOP: &str = r#"<?xml version="1.0"?>
<Node name="Root" gravity="0 -10 0" dt="0.01">
  <CompliantImplicitSolver/>
  <SOLVER/>
  <LDLTResponse/>
  <MechanicalObject name="dofs" template="Vec3d" position="0 0 0  0 1.5 0"/>
  <FixedConstraint indices="0"/>
  <UniformMass vertexMass="1"/>
  <Node name="stop">
    <MechanicalObject template="Vec1d" name="d"/>
    <EdgeSetTopologyContainer edges="0 1"/>
    <DistanceMapping restLengths="1"/>
    <UniformCompliance compliance="0"/>
    <UnilateralConstraint/>
  </Node>
</Node>
"#;

#[test]
fn a_unilateral_stop_holds_a_falling_particle() {
    for solver in [r#"<SequentialSolver iterations="100" precision="1e-12"/>"#, r#"<NNCGSolver iterations="100" precision="1e-12"/>"#] {
        let (mut scene, _) = load("stop", &STOP.replace("<SOLVER/>", solver));
        let mut lowest = f64::INFINITY;
        let mut y = 0.0;
        for k in 0..100 {
            step(&mut scene);
            y = positions(&scene)[4];
            if k > 40 {
                lowest = lowest.min(y);
            }
        }
        // Free fall until the stop (0.5 m in ~0.32 s), then held: the mask is φ < 0, so the
        // particle alternates between the surface and one step of free fall below it (g·h²).
        assert!(lowest >= 1.0 - 0.001 - 1e-9, "{solver}: fell to {lowest}");
        assert!((y - 1.0).abs() <= 0.001 + 1e-9, "{solver}: y = {y}");
    }
    // Without the projector the constraint is bilateral: the particle is pulled up too.
    let (mut scene, _) = load(
        "bilateral",
        &STOP.replace("<SOLVER/>", r#"<SequentialSolver iterations="100" precision="1e-12"/>"#).replace("<UnilateralConstraint/>", ""),
    );
    step(&mut scene);
    let y = positions(&scene)[4];
    assert!((y - 1.0).abs() < 1e-6, "bilateral: y = {y}");
}

/// A chain of 6 particles hanging from a fixed one, hard or soft distance constraints; with
/// `stiff`, bending springs (a compliance used as a stiffness) make H non-diagonal.
fn chain(solver: &str, compliance: &str, stiff: bool) -> String {
    let pos: Vec<String> = (0..7).map(|i| format!("{} 0 0", 0.2 * i as f64)).collect();
    let edges: Vec<String> = (0..6).map(|i| format!("{} {}", i, i + 1)).collect();
    let bend: Vec<String> = (0..5).map(|i| format!("{} {}", i, i + 2)).collect();
    let bending = if stiff {
        format!(
            r#"<Node name="bend">
    <MechanicalObject template="Vec1d"/>
    <EdgeSetTopologyContainer edges="{}"/>
    <DistanceMapping/>
    <UniformCompliance compliance="1e-2" isCompliance="false"/>
  </Node>"#,
            bend.join(" ")
        )
    } else {
        String::new()
    };
    format!(
        r#"<?xml version="1.0"?>
<Node name="Root" gravity="0 -9.8 0" dt="0.01">
  <CompliantImplicitSolver/>
  {solver}
  <MechanicalObject name="dofs" template="Vec3d" position="{}"/>
  <FixedConstraint indices="0"/>
  <UniformMass vertexMass="0.1"/>
  <Node name="ext">
    <MechanicalObject template="Vec1d"/>
    <EdgeSetTopologyContainer edges="{}"/>
    <DistanceMapping/>
    <UniformCompliance compliance="{compliance}"/>
  </Node>
  {bending}
</Node>
"#,
        pos.join("  "),
        edges.join(" ")
    )
}

fn run(text: &str, steps: usize) -> Vec<f64> {
    let (mut scene, _) = load("chain", text);
    for _ in 0..steps {
        step(&mut scene);
    }
    positions(&scene)
}

#[test]
fn iterative_solvers_follow_ldlt_on_a_chain() {
    for stiff in [false, true] {
        for compliance in ["0", "1e-4"] {
            let reference = run(&chain(r#"<LDLTSolver/>"#, compliance, stiff), 30);
            let mut solvers = vec![
                r#"<MinresSolver iterations="500" precision="1e-12"/>"#,
                r#"<MinresSolver iterations="500" precision="1e-12"/><LDLTResponse/>"#,
                r#"<BiCgStabSolver iterations="500" precision="1e-12"/><LDLTResponse/>"#,
                r#"<CgSolver iterations="500" precision="1e-12"/><LLTResponse/>"#,
                r#"<SequentialSolver iterations="5000" precision="1e-15"/><LDLTResponse/>"#,
                r#"<SequentialSolver iterations="5000" precision="1e-15" iterateOnBilaterals="false"/>"#,
            ];
            // A diagonal response is exact only for a diagonal H.
            if !stiff {
                solvers.push(r#"<CgSolver iterations="500" precision="1e-12"/><DiagonalResponse/>"#);
            }
            for solver in solvers {
                let x = run(&chain(solver, compliance, stiff), 30);
                let d = x.iter().zip(&reference).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
                assert!(d < 1e-7, "stiff={stiff}, compliance {compliance}, {solver}: {d:e} from LDLT");
            }
            // The chain has swung: the comparison is not between two rest states.
            assert!(reference[3 * 6 + 1] < -0.1, "{reference:?}");
        }
    }
    // With bending springs a diagonal response is an approximation: the Schur solve differs.
    let reference = run(&chain(r#"<LDLTSolver/>"#, "0", true), 30);
    let x = run(&chain(r#"<CgSolver iterations="500" precision="1e-12"/><DiagonalResponse/>"#, "0", true), 30);
    let d = x.iter().zip(&reference).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(d > 1e-4, "{d:e}");
}

#[test]
fn a_preconditioner_with_constraints_is_a_positioned_error() {
    let text = chain(
        r#"<PreconditionedCgSolver iterations="100" precision="1e-10"/>
  <CompliantJacobiPreconditioner name="jacobi"/>"#,
        "0",
        false,
    );
    let (mut scene, path) = load("preconditioned", &text);
    let dt = scene.root().context.dt;
    let e = settee_core::simulation::animate(&mut scene, dt).unwrap_err().to_string();
    let file = path.display().to_string();
    assert!(e.contains(&format!("{file}:4:3")), "the solver's position: {e}");
    assert!(e.contains("PreconditionedCgSolver"), "{e}");
    assert!(e.contains(&format!("CompliantJacobiPreconditioner 'jacobi' ({file}:5:3)")), "{e}");
    assert!(e.contains("6 constraint row"), "{e}");
    // Unconstrained (the compliance as a stiffness), the preconditioned CG follows LDLT.
    let soft = |s: &str| {
        chain(s, "1e-3", true).replace("<UniformCompliance compliance=\"1e-3\"/>", "<UniformCompliance compliance=\"1e-3\" isCompliance=\"false\"/>")
    };
    let reference = run(&soft(r#"<LDLTSolver/>"#), 20);
    let x = run(&soft(r#"<PreconditionedCgSolver iterations="200" precision="1e-13"/><CompliantJacobiPreconditioner/>"#), 20);
    let d = x.iter().zip(&reference).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(d < 1e-8, "{d:e}");
}
