//! The Compliant mappings in assembled systems: the assembled `P(mM + bB + kK)P`, with the
//! mapped springs projected through their Jacobians and the mappings' geometric stiffness, equals
//! the matrix-free product column by column (same check as `assembly.rs`).

mod support;

use settee_core::mechanics::MechScope;
use settee_core::{Mbk, Scene, VecId};

const F: Mbk = Mbk { m: 1.3, b: -0.02, k: -0.7 };

fn points(mapped: &str) -> String {
    format!(
        r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
  <CGLinearSolver iterations="200" tolerance="1e-12" threshold="1e-14"/>
  <MechanicalObject name="pts" position="1 0 0  0 1 0.5  -0.5 0 1  0.2 0.3 0.4" velocity="0 0 0  0.5 1 -2  0 0 0  1 0 0"/>
  <UniformMass totalMass="2"/>
  <Node name="mapped">
{mapped}
  </Node>
</Node>"#
    )
}

#[test]
fn dot_product_and_safe_distance_assemble_like_matrix_free() {
    let f = support::factory();
    for mapped in [
        r#"<MechanicalObject template="Vec1" name="out"/>
    <DotProductMapping pairs="0 1  2 3  1 1"/>
    <RestShapeSpringsForceField template="Vec1" stiffness="20"/>"#,
        r#"<MechanicalObject template="Vec1" name="out"/>
    <SafeDistanceMapping pairs="0 1  2 3  3 0" restLengths="0.5 2 1" geometricStiffness="Exact"/>
    <RestShapeSpringsForceField template="Vec1" stiffness="20"/>"#,
        r#"<MechanicalObject template="Vec1" name="out"/>
    <SafeDistanceMapping pairs="0 1  2 3  3 0" restLengths="0.5 2 1" geometricStiffness="Stabilized"/>
    <RestShapeSpringsForceField template="Vec1" stiffness="20"/>"#,
        r#"<MechanicalObject template="Vec1" name="out"/>
    <SafeDistanceFromTargetMapping indices="0 2" targets="0 0 0  1 1 1" restLengths="0.5 2" geometricStiffness="Exact"/>
    <RestShapeSpringsForceField template="Vec1" stiffness="20"/>"#,
        r#"<MechanicalObject name="out"/>
    <NormalizationMapping/>
    <RestShapeSpringsForceField stiffness="20"/>"#,
    ] {
        assert_eq!(support::columns_after_steps("compliant-points", &points(mapped), &f, 10, F), 12, "{mapped}");
    }
}

#[test]
fn assembled_rigid_rigid_assembles_like_matrix_free() {
    let f = support::factory();
    for gs in ["None", "Exact", "Stabilized"] {
        let text = format!(
            r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
  <CGLinearSolver iterations="200" tolerance="1e-12" threshold="1e-14"/>
  <MechanicalObject name="rigid" template="Rigid3" position="0 0 0 0 0 0 1  1 0.5 0 0 0 0.3826834 0.9238795" velocity="0 0 0 0.5 1 -2  0 0 0 0 0 0"/>
  <UniformMass totalMass="2"/>
  <Node name="offsets">
    <MechanicalObject name="frames" template="Rigid3"/>
    <AssembledRigidRigidMapping source="0 1 0 0 0 0 0 1  1 0 0.5 0.2 0 0.3826834 0 0.9238795  0 0 0 -1 0 0 0 1" geometricStiffness="{gs}"/>
    <Node name="points">
      <MechanicalObject name="pts" position="0.5 0 0  0 0.5 0  0 0 0.5" rest_position="0.6 0 0  0 0.4 0.1  0 0 0.5"/>
      <RigidMapping rigidIndexPerPoint="0 1 2" geometricStiffness="Exact"/>
      <RestShapeSpringsForceField stiffness="50"/>
    </Node>
  </Node>
</Node>"#
        );
        assert_eq!(support::columns_after_steps(&format!("compliant-rigid-rigid-{gs}"), &text, &f, 10, F), 12, "geometricStiffness {gs}");
    }
}

/// Two states mapped together: `{mapping}` in a child of `a`, reading `a` and `b` (`b` comes
/// first so that its size is known when the mapping initialises).
fn two_states(a: &str, b: &str, template: &str, mapping: &str) -> String {
    format!(
        r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
  <CGLinearSolver iterations="200" tolerance="1e-12" threshold="1e-14"/>
  <Node name="b">
    <MechanicalObject template="{template}" name="xb" position="{b}"/>
    <UniformMass totalMass="3"/>
  </Node>
  <Node name="a">
    <MechanicalObject template="{template}" name="xa" position="{a}"/>
    <UniformMass totalMass="2"/>
    <Node name="mapped">
      <MechanicalObject template="Vec1" name="out"/>
      {mapping}
      <RestShapeSpringsForceField template="Vec1" stiffness="20"/>
    </Node>
  </Node>
</Node>"#
    )
}

fn out_of(scene: &Scene) -> Vec<f64> {
    let scope = MechScope::build(scene, Scene::ROOT);
    scene.store.get(scope.mapped_states[0]).read(VecId::POSITION).to_vec()
}

/// §14.4 DotProductMultiMapping (default pairs (0,i)·(1,i)) and WinchMultiMapping (factor 0.25:
/// 0.25·2 − 1 = −0.5) loaded from scenes, then assembled like matrix-free.
#[test]
fn multi_mappings_from_scenes() {
    let f = support::factory();
    let text =
        two_states("1 1 1  65 3 -51", "23 35 -4  -100 100 20", "Vec3", r#"<DotProductMultiMapping input="@../xa @../../b/xb" output="@out"/>"#);
    let mut scene = support::load_text("compliant-dot-multi", &text, &f);
    assert_eq!(out_of(&scene), vec![54.0, -7220.0]);
    support::run(&mut scene, 3);
    assert_eq!(support::assembled_equals_matrix_free(&mut scene, F), 12);

    let text = two_states("1 4", "2 -3 5", "Vec1", r#"<WinchMultiMapping input="@../xa @../../b/xb" output="@out" factor="0.25"/>"#);
    let mut scene = support::load_text("compliant-winch", &text, &f);
    assert_eq!(out_of(&scene), vec![-0.5, -4.75]);
    support::run(&mut scene, 3);
    assert_eq!(support::assembled_equals_matrix_free(&mut scene, F), 5);
}
