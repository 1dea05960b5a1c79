//! The two crashes the mutation campaign of issue 18 found, as regression tests: nothing reaches a
//! component that was never initialised (a deactivated node is skipped as SOFA skips it), and a
//! size a scene sets is bounded before anything is allocated.

use settee::{load_with, LoadOptions};
use settee_core::{Severity, VecId};
use settee_tests::temp_scene;

/// A small FEM beam with SOFA's consistent FEM mass (the component that was reached
/// uninitialised), under gravity.
fn fem_mass_scene(root_attrs: &str, beam_attrs: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0" {root_attrs}>
  <DefaultAnimationLoop/>
  <Node name="beam" {beam_attrs}>
    <EulerImplicitSolver/>
    <SparseLDLSolver/>
    <RegularGridTopology name="grid" min="0 0 0" max="1 0.2 0.2" n="6 2 2"/>
    <TetrahedronSetTopologyContainer name="tetras"/>
    <TetrahedronSetTopologyModifier/>
    <Hexa2TetraTopologicalMapping input="@grid" output="@tetras"/>
    <MechanicalObject name="dofs" position="@grid.position"/>
    <NodalMassDensity property="1000"/>
    <FEMMass template="Vec3d,Tetrahedron" topology="@tetras"/>
    <TetrahedralCorotationalFEMForceField youngModulus="1e5" poissonRatio="0.3" topology="@tetras"/>
    <FixedProjectiveConstraint indices="0 6 12 18"/>
  </Node>
</Node>
"#
    )
}

/// Loads (SOFA's `check`), then runs 5 steps; returns the warnings and the beam's positions
/// before and after.
fn load_and_run(name: &str, text: &str) -> (Vec<String>, Vec<f64>, Vec<f64>) {
    let path = temp_scene(name, text);
    let mut l = load_with(&path, &settee::factory(), &LoadOptions::default()).unwrap_or_else(|f| panic!("{name}: {:?}", f.diagnostics));
    let warnings = l.scene.messages.iter().filter(|m| m.severity == Severity::Warning).map(|m| m.message.clone()).collect();
    let dofs = l.scene.components.iter().find(|(_, e)| e.name == "dofs").map(|(c, _)| c).expect("the beam's state");
    let st = l.scene.state_of(dofs).unwrap();
    let before = l.scene.store.get(st).read(VecId::POSITION).to_vec();
    settee::run::simulate(&mut l.scene, 5, &mut []).unwrap_or_else(|e| panic!("{name}: {e}"));
    let after = l.scene.store.get(st).read(VecId::POSITION).to_vec();
    (warnings, before, after)
}

#[test]
fn a_deactivated_root_loads_and_runs_without_reaching_its_components() {
    // Active: the beam sags.
    let (_, before, after) = load_and_run("fem-active", &fem_mass_scene("", ""));
    assert!(after.iter().zip(&before).any(|(a, b)| (a - b).abs() > 1e-9), "the active beam must move");
    // The root deactivated: nothing is initialised or simulated, and the run says so.
    let (warnings, before, after) = load_and_run("fem-root-off", &fem_mass_scene(r#"activated="0""#, ""));
    assert!(warnings.iter().any(|w| w.contains("root node is deactivated")), "{warnings:?}");
    assert_eq!(before, after, "a deactivated scene does not move");
}

#[test]
fn a_deactivated_node_is_skipped_as_sofa_skips_it() {
    let (_, before, after) = load_and_run("fem-beam-off", &fem_mass_scene("", r#"activated="0""#));
    assert_eq!(before, after, "a deactivated node does not move");
}

/// A ball falling on a plane, with a given bounding-tree depth.
fn ball_positions(depth: &str) -> Vec<f64> {
    let text = format!(
        r#"<Node name="root" dt="0.01" gravity="0 -10 0">
  <CollisionPipeline depth="{depth}"/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <NewProximityIntersection alarmDistance="1" contactDistance="0.5"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="ball">
    <EulerImplicitSolver rayleighMass="20"/>
    <CGLinearSolver iterations="50" tolerance="1e-20" threshold="1e-30"/>
    <MechanicalObject name="dofs" position="1 1.9 -2  2 1.8 -2  3 1.7 -2"/>
    <UniformMass totalMass="2"/>
    <SphereCollisionModel radius="1" contactStiffness="10"/>
  </Node>
  <Node name="plane">
    <MechanicalObject position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0" contactStiffness="300"/>
  </Node>
</Node>
"#
    );
    let path = temp_scene(&format!("depth-{depth}"), &text);
    let mut l = load_with(&path, &settee::factory(), &LoadOptions::default()).unwrap_or_else(|f| panic!("depth {depth}: {:?}", f.diagnostics));
    settee::run::simulate(&mut l.scene, 50, &mut []).unwrap();
    let dofs = l.scene.components.iter().find(|(_, e)| e.name == "dofs").map(|(c, _)| c).unwrap();
    l.scene.store.get(l.scene.state_of(dofs).unwrap()).read(VecId::POSITION).to_vec()
}

#[test]
fn a_huge_bounding_tree_depth_is_bounded_and_changes_nothing() {
    // `<CollisionPipeline depth="182445946"/>` aborted on a 4.4 GB allocation. A tree fills at
    // most 64 levels (each box splits in halves), so any deeper request builds the same tree.
    let deep = ball_positions("182445946");
    assert_eq!(deep, ball_positions("64"));
    assert_eq!(ball_positions("4294967295"), deep);
    assert!(deep[1] < 1.9, "the ball fell: {deep:?}");
}
