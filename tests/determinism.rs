//! The same scene gives bit-identical states, whatever the number of threads.
//!
//! The FEM force fields run their element loops on rayon's pool only from a number of elements on
//! (256 hexahedra or element-FEM elements, 2048 tetrahedra): the scene is sized above those
//! thresholds, and the test checks that every element loop took the parallel branch when several
//! threads were available (and none with one thread), so it compares two different code paths.

mod support;

use settee_core::VecId;

/// Three cantilevers under gravity, each with its own implicit solver: HexahedronFEMForceField on
/// 4×4×19 = 304 hexahedra, TetrahedronFEMForceField on 7×7×7 cells split into 2058 tetrahedra,
/// CorotationalFEMForceField on 304 hexahedra.
const SCENE: &str = r#"<Node name="root" dt="0.02" gravity="0 -10 0">
    <DefaultAnimationLoop/>
    <Node name="hexa">
        <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
        <CGLinearSolver iterations="200" threshold="1e-12" tolerance="1e-12"/>
        <RegularGridTopology name="grid" nx="5" ny="5" nz="20" xmin="-9" xmax="-6" ymin="0" ymax="3" zmin="0" zmax="19"/>
        <MechanicalObject/>
        <UniformMass totalMass="500"/>
        <BoxROI name="box" box="-10 -1 -0.0001  -5 4 0.0001"/>
        <FixedProjectiveConstraint indices="@box.indices"/>
        <HexahedronFEMForceField youngModulus="4000" poissonRatio="0.45" method="large"/>
    </Node>
    <Node name="tetra">
        <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
        <CGLinearSolver iterations="200" threshold="1e-12" tolerance="1e-12"/>
        <RegularGridTopology name="grid" n="8 8 8" min="0 0 0" max="3 3 19"/>
        <MechanicalObject/>
        <UniformMass totalMass="500"/>
        <BoxROI name="box" box="-1 -1 -0.0001  4 4 0.0001"/>
        <FixedProjectiveConstraint indices="@box.indices"/>
        <TetrahedronFEMForceField youngModulus="4000" poissonRatio="0.45" method="large"/>
    </Node>
    <Node name="corotational">
        <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
        <CGLinearSolver iterations="200" threshold="1e-12" tolerance="1e-12"/>
        <RegularGridTopology name="grid" nx="5" ny="5" nz="20" xmin="6" xmax="9" ymin="0" ymax="3" zmin="0" zmax="19"/>
        <MechanicalObject/>
        <UniformMass totalMass="500"/>
        <BoxROI name="box" box="5 -1 -0.0001  10 4 0.0001"/>
        <FixedProjectiveConstraint indices="@box.indices"/>
        <CorotationalFEMForceField template="Vec3,Hexahedron" topology="@grid" youngModulus="4000" poissonRatio="0.45"/>
    </Node>
</Node>
"#;

/// The positions of every state after 20 steps, and the `(loops, parallel)` element-loop counts of
/// the run.
fn run_with_threads(threads: usize) -> (Vec<f64>, (usize, usize)) {
    let path = support::temp_scene(&format!("determinism-{threads}"), SCENE);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
    pool.install(|| {
        let mut l = settee::load(&path, &settee::factory(), &[]).expect("scene loads");
        let dt = l.scene.root().context.dt;
        let before = settee_fem::element_loop_counts();
        for _ in 0..20 {
            settee_core::simulation::animate(&mut l.scene, dt).expect("step");
        }
        let after = settee_fem::element_loop_counts();
        let x = l.scene.store.states.values().flat_map(|s| s.read(VecId::POSITION).to_vec()).collect();
        (x, (after.0 - before.0, after.1 - before.1))
    })
}

#[test]
fn thread_count_does_not_change_a_single_bit() {
    let (a, (loops1, parallel1)) = run_with_threads(1);
    let (b, (loops3, parallel3)) = run_with_threads(3);
    assert_eq!(a.len(), 3 * (2 * 5 * 5 * 20 + 8 * 8 * 8));
    // The beams have moved (the comparison is not between rest states).
    let rest = run_rest();
    assert!(a.iter().zip(&rest).any(|(x, r)| (x - r).abs() > 1e-3));
    println!("element loops: {loops1} with one thread ({parallel1} parallel), {loops3} with three ({parallel3} parallel)");
    assert_eq!(parallel1, 0, "one thread: {loops1} element loops, {parallel1} parallel");
    assert!(loops3 > 100 && parallel3 == loops3, "three threads: {loops3} element loops, {parallel3} parallel");
    assert_eq!(loops1, loops3);
    let differing = a.iter().zip(&b).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
    assert_eq!(differing, 0, "{differing} of {} reals differ", a.len());
}

/// The positions before any step.
fn run_rest() -> Vec<f64> {
    let path = support::temp_scene("determinism-rest", SCENE);
    let l = settee::load(&path, &settee::factory(), &[]).expect("scene loads");
    l.scene.store.states.values().flat_map(|s| s.read(VecId::POSITION).to_vec()).collect()
}
