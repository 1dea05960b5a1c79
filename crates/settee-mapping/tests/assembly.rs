//! Matrix assembly through mappings: the assembled `P(mM + bB + kK)P`, with mapped components
//! projected as `Jᵀ·K·J` and the mappings' geometric stiffness, must equal the matrix-free
//! product column by column (`mbk_product` goes through `apply_j`, `add_dforce`, `apply_jt` and
//! `apply_djt`). Also: a direct solver on an assembled mapped system follows the CG trajectory.

mod support;

use settee_core::mechanics::{self, MechScope};
use settee_core::{Mbk, Scene, VecId};
use settee_linalg::MatrixBuilder;

const F: Mbk = Mbk { m: 1.3, b: -0.02, k: -0.7 };

fn suite_scene(rel: &str) -> Option<String> {
    let p = support::suite()?.join("scenes").join(rel);
    Some(std::fs::read_to_string(p).unwrap())
}

/// The suite scene `rel`, edited by `edit`, after 20 steps: its assembled matrix equals the
/// matrix-free products on some columns.
fn suite_scene_assembles_like_matrix_free(rel: &str, name: &str, edit: fn(String) -> String) {
    let Some(text) = suite_scene(rel) else { return };
    assert!(support::columns_after_steps(name, &edit(text), &support::factory(), 20, F) > 0);
}

#[test]
fn distance_mapping_stabilized_assembles_like_matrix_free() {
    suite_scene_assembles_like_matrix_free("Component/Mapping/NonLinear/DistanceMapping.scn", "dm", |text| text);
}

#[test]
fn square_distance_mapping_exact_assembles_like_matrix_free() {
    suite_scene_assembles_like_matrix_free("Component/Mapping/NonLinear/SquareDistanceMapping.scn", "sdm", |text| text);
}

#[test]
fn distance_multi_mapping_assembles_like_matrix_free() {
    // Exercise the geometric stiffness too (the scene disables it).
    suite_scene_assembles_like_matrix_free("Component/Mapping/NonLinear/DistanceMultiMapping.scn", "dmm", |text| {
        text.replace("geometricStiffness=\"0\"", "geometricStiffness=\"Exact\"")
    });
}

/// A rigid body carrying points with springs and a mapped mass, then a distance mapping on those
/// points: the global Jacobian is the product of the two mappings' Jacobians.
fn rigid_chain(gs: &str) -> String {
    format!(
        r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
  <CGLinearSolver iterations="200" tolerance="1e-12" threshold="1e-14"/>
  <MechanicalObject name="rigid" template="Rigid3" position="0 0 0 0 0 0 1  1 0.5 0 0 0 0.3826834 0.9238795" velocity="0 0 0 0.5 1 -2  0 0 0 0 0 0"/>
  <UniformMass totalMass="2"/>
  <Node name="points">
    <MechanicalObject name="pts" template="Vec3" position="1 0 0  0 1 0.5  -0.5 0 1  0.2 0.3 0.4" rest_position="1.1 0 0  0 1 0.4  -0.5 0.2 1  0.2 0.3 0.4"/>
    <RigidMapping input="@../rigid" output="@pts" rigidIndexPerPoint="0 0 1 1" geometricStiffness="{gs}"/>
    <RestShapeSpringsForceField stiffness="50"/>
    <UniformMass vertexMass="0.1"/>
    <Node name="lengths">
      <MechanicalObject name="len" template="Vec1"/>
      <MeshTopology name="topo" edges="0 1  1 2  2 3  3 0"/>
      <DistanceMapping topology="@topo" geometricStiffness="Exact"/>
      <RestShapeSpringsForceField template="Vec1" stiffness="200"/>
    </Node>
  </Node>
</Node>"#
    )
}

#[test]
fn rigid_and_distance_chain_assembles_like_matrix_free() {
    let f = support::factory();
    for gs in ["None", "Exact", "Stabilized"] {
        assert_eq!(support::columns_after_steps(&format!("chain-{gs}"), &rigid_chain(gs), &f, 10, F), 12, "geometricStiffness {gs}");
    }
}

#[test]
fn barycentric_mapped_springs_assemble_like_matrix_free() {
    let f = support::factory();
    let text = r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="200" tolerance="1e-12" threshold="1e-14"/>
  <RegularGridTopology name="grid" n="3 2 2" min="0 0 0" max="2 1 1"/>
  <MechanicalObject name="dofs"/>
  <UniformMass totalMass="1"/>
  <FixedProjectiveConstraint indices="0 3"/>
  <Node name="inner">
    <MechanicalObject name="inside" position="0.5 0.5 0.5  1.5 0.2 0.7  1.9 0.9 0.1" rest_position="0.4 0.5 0.5  1.5 0.3 0.7  1.9 0.9 0.2"/>
    <BarycentricMapping/>
    <RestShapeSpringsForceField stiffness="30"/>
    <UniformMass vertexMass="0.2"/>
  </Node>
</Node>"#;
    assert!(support::columns_after_steps("bary", text, &f, 5, F) > 0);
}

/// SOFA's DistanceMapping scene solved with a direct solver on the assembled system follows the
/// trajectory of a fully converged CG (the scene's own CG stops early on its `threshold`).
#[test]
fn distance_mapping_scene_with_a_direct_solver() {
    let Some(suite) = support::suite() else { return };
    let rel = "Component/Mapping/NonLinear/DistanceMapping.scn";
    let text = std::fs::read_to_string(suite.join("scenes").join(rel)).unwrap();
    let cg_line = r#"<CGLinearSolver iterations="2500" name="linear solver" tolerance="1.0e-9" threshold="1.0e-9" />"#;
    assert!(text.contains(cg_line));
    let direct_text = text.replace(cg_line, r#"<SparseLDLSolver name="linear solver"/>"#);
    let cg_text = text.replace(cg_line, r#"<CGLinearSolver iterations="5000" name="linear solver" tolerance="1e-15" threshold="1e-40" />"#);
    let f = support::factory();
    let mut direct = support::load_text("dm-direct", &direct_text, &f);
    let mut cg = support::load_text("dm-cg", &cg_text, &f);
    support::run(&mut direct, 100);
    support::run(&mut cg, 100);
    let s = support::selected_states(&cg)[0].0.state;
    let (a, b) = (cg.store.get(s).read(VecId::POSITION), direct.store.get(s).read(VecId::POSITION));
    let diff = a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    eprintln!("max |x_CG − x_LDL| after 100 steps: {diff:e}");
    assert!(diff < 1e-8, "direct and CG trajectories differ by {diff}");
    // The points did move.
    assert!(a.iter().any(|y| y.abs() > 0.1));
}

/// The assembled matrix of node `A` of `text` under `f` (forces computed first).
fn assembled_at(text: &str, name: &str, f: Mbk) -> settee_linalg::CsrMatrix {
    let fac = support::factory();
    let mut scene = support::load_text(name, text, &fac);
    let a = scene.preorder(Scene::ROOT).into_iter().find(|&n| scene.node(n).name == "A").unwrap();
    let scope = MechScope::build(&scene, a);
    mechanics::compute_force(&mut scene, &scope, VecId::FORCE, VecId::POSITION, VecId::VELOCITY).unwrap();
    let mut builder = MatrixBuilder::new(scope.size);
    mechanics::assemble(&mut scene, &scope, f, &mut builder).unwrap();
    builder.matrix().clone()
}

/// A spring between a state outside the solver's sub-tree (`B/out`) and a state of the sub-tree:
/// SOFA's `MatrixLinearSystem` takes the outside state for a mapped state without inputs and
/// projects the spring's blocks on it unprojected, so row (column) `i` of the outside state lands
/// on row (column) `i` of the main state — when the sub-tree holds a mapping; without one, those
/// blocks are dropped.
#[test]
fn interaction_with_a_state_outside_the_subtree_lands_on_its_raw_rows() {
    let scene = |mapped: bool| {
        let inner = if mapped {
            r#"<Node name="M">
                <MechanicalObject template="Vec3d" name="mapped" position="0 0 0  1 0 0  2 0 0"/>
                <IdentityMapping/>
                <SpringForceField object1="@/B/out" object2="@/A/M/mapped" spring="0 2 100 0 3"/>
            </Node>"#
        } else {
            r#"<SpringForceField object1="@/B/out" object2="@/A/main" spring="0 2 100 0 3"/>"#
        };
        format!(
            r#"<Node name="root" dt="0.01" gravity="0 0 0">
    <Node name="A">
        <MechanicalObject template="Vec3d" name="main" position="0 0 0  1 0 0  2 0 0"/>
        <UniformMass vertexMass="2"/>
        {inner}
    </Node>
    <Node name="B">
        <MechanicalObject template="Vec3d" name="out" position="5 0 0"/>
    </Node>
</Node>"#
        )
    };
    // The spring is at rest along x: df/dx = ±100·x xᵀ; A = 1.3·M − 0.7·K.
    let f = Mbk { m: 1.3, b: 0.0, k: -0.7 };
    for mapped in [true, false] {
        let a = assembled_at(&scene(mapped), if mapped { "outside-mapped" } else { "outside-plain" }, f);
        // The spring's own block on point 2 (x) is there in both cases.
        assert_eq!(a.get(6, 6), 1.3 * 2.0 + -0.7 * -100.0, "mapped={mapped}");
        assert_eq!(a.get(7, 7), 1.3 * 2.0);
        // The blocks on the outside point 0 never reach point 0's diagonal...
        assert_eq!(a.get(0, 0), 1.3 * 2.0);
        // ...but with a mapping in the sub-tree they couple point 0 (x) with point 2 (x).
        let coupling = if mapped { 100.0 * -0.7 } else { 0.0 };
        assert_eq!((a.get(0, 6), a.get(6, 0)), (coupling, coupling), "mapped={mapped}");
        assert_eq!((a.get(1, 7), a.get(0, 3)), (0.0, 0.0));
    }
}
