//! Mappings in scenes: template deduction (`In,Out` from the input and output states), the
//! `@../` / `@./` defaults, visual mappings (accepted, no effect), `isMechanical`, and a rigid
//! body spinning with its mapped points.
#![allow(clippy::disallowed_methods)] // tests check output Data by name

mod support;

use settee_core::component::Mapping;
use settee_core::mechanics::MechScope;
use settee_core::{role, Scene, VecId};

fn component<'a>(scene: &'a Scene, class: &str) -> &'a settee_core::scene::ComponentEntry {
    scene.components.values().find(|e| e.class.name == class).unwrap_or_else(|| panic!("no {class}"))
}

#[test]
fn templates_are_deduced_from_input_and_output() {
    let f = support::factory();
    let text = r#"<Node name="root" gravity="0 0 0">
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-20"/>
  <MechanicalObject name="rigid" template="Rigid3" position="0 0 0 0 0 0 1"/>
  <UniformMass totalMass="1"/>
  <Node name="pts">
    <MechanicalObject name="p" position="1 0 0  0 1 0  0 0 1"/>
    <RigidMapping/>
    <Node name="len">
      <MeshTopology name="t" edges="0 1 1 2"/>
      <MechanicalObject template="Vec1"/>
      <DistanceMapping/>
    </Node>
    <Node name="copy">
      <MechanicalObject/>
      <IdentityMapping input="@.." output="@."/>
    </Node>
    <Node name="visual">
      <OglModel name="vm"/>
      <IdentityMapping input="@../p" output="@vm"/>
    </Node>
  </Node>
</Node>"#;
    let scene = support::load_text("templates", text, &f);
    assert_eq!(component(&scene, "RigidMapping").template, "Rigid3d,Vec3d");
    assert_eq!(component(&scene, "DistanceMapping").template, "Vec3d,Vec1d");
    let ids: Vec<_> = scene.components.values().filter(|e| e.class.name == "IdentityMapping").map(|e| e.template.clone()).collect();
    assert_eq!(ids, ["Vec3d,Vec3d", "Vec3d,Vec3d"]);

    // Mechanical mappings top-down; the visual one is left out; mapped states are flagged.
    let scope = MechScope::build(&scene, Scene::ROOT);
    let names: Vec<&str> = scope.mappings.iter().map(|c| scene.entry(*c).class.name).collect();
    assert_eq!(names, ["RigidMapping", "DistanceMapping", "IdentityMapping"]);
    assert_eq!(scope.main_states.len(), 1);
    assert_eq!(scope.mapped_states.len(), 3);
    // Output sizes follow the mappings: 3 points, 2 edges, 3 copies.
    let sizes: Vec<usize> = scope.mapped_states.iter().map(|s| scene.store.get(*s).size).collect();
    assert_eq!(sizes, [3, 2, 3]);
    // Mapped values at init: lengths √2 (rest lengths are the initial lengths: 0 output).
    let len = scene.store.get(scope.mapped_states[1]).read(VecId::POSITION).to_vec();
    assert!(len.iter().all(|l| l.abs() < 1e-15), "{len:?}");
    let copy = scene.store.get(scope.mapped_states[2]).read(VecId::POSITION).to_vec();
    assert_eq!(copy, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    // Visual mapping: a MAPPING for the dump selection, but not mechanical.
    let vis =
        scene.components.iter().find(|(_, e)| e.class.name == "IdentityMapping" && scene.node(e.node).name == "visual").map(|(id, _)| id).unwrap();
    assert!(scene.components[vis].plays(role::MAPPING));
    let m = scene.role::<dyn Mapping>(vis).unwrap();
    assert!(!m.is_mechanical() && m.output().is_none());
}

#[test]
fn is_mechanical_false_clears_the_three_flags() {
    let f = support::factory();
    let text = r#"<Node name="root">
  <MechanicalObject name="a" position="0 0 0  1 0 0"/>
  <Node name="b">
    <MechanicalObject name="b"/>
    <IdentityMapping isMechanical="false"/>
  </Node>
</Node>"#;
    let scene = support::load_text("ismech", text, &f);
    let e = component(&scene, "IdentityMapping");
    for flag in ["mapForces", "mapConstraints", "mapMasses"] {
        assert!(!e.data.bool(flag), "{flag}");
    }
}

#[test]
fn a_mapping_without_own_output_state_is_an_error() {
    let f = support::factory();
    let text = r#"<Node name="root">
  <MechanicalObject name="a" position="0 0 0"/>
  <Node name="b">
    <IdentityMapping/>
  </Node>
</Node>"#;
    let p = settee_testkit::temp_scene("noout", text);
    let mut scene = settee_scene::load_scene(&p, &f, &settee_scene::DataPath::default()).unwrap();
    let r = settee_core::simulation::init_root(&mut scene, &f);
    let e = r.expect_err("the mapping's input and output are the same state");
    assert!(e.to_string().contains("same state"), "{e}");
}

/// A rigid frame spinning about z (no gravity, no torque) carries its mapped points on circles:
/// radius and height stay constant while the frame turns.
#[test]
fn rigid_mapping_of_a_spinning_frame_moves_points_on_circles() {
    let f = support::factory();
    let text = r#"<Node name="root" gravity="0 0 0" dt="0.01">
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="50" tolerance="1e-14" threshold="1e-30"/>
  <MechanicalObject name="rigid" template="Rigid3" position="0.5 -1 2 0 0 0 1" velocity="0 0 0 0 0 3"/>
  <UniformMass totalMass="1"/>
  <Node name="pts">
    <MechanicalObject name="p" position="1.5 -1 2  0.5 1 2.5  -0.5 -1.5 1"/>
    <RigidMapping globalToLocalCoords="true"/>
  </Node>
</Node>"#;
    let mut scene = support::load_text("spin", text, &f);
    let scope = MechScope::build(&scene, Scene::ROOT);
    let (rigid, pts) = (scope.main_states[0], scope.mapped_states[0]);
    let local: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.5], [-1.0, -0.5, -1.0]];
    let x0 = scene.store.get(pts).read(VecId::POSITION).to_vec();
    assert!((x0[0] - 1.5).abs() < 1e-15 && (x0[4] - 1.0).abs() < 1e-15, "{x0:?}");
    let mut angle = 0.0;
    for step in 1..=100 {
        settee_core::simulation::animate(&mut scene, 0.01).unwrap();
        let c = scene.store.get(rigid).read(VecId::POSITION).to_vec();
        let x = scene.store.get(pts).read(VecId::POSITION).to_vec();
        for (i, p) in local.iter().enumerate() {
            let r = [x[3 * i] - c[0], x[3 * i + 1] - c[1], x[3 * i + 2] - c[2]];
            let rho = (p[0] * p[0] + p[1] * p[1]).sqrt();
            assert!(((r[0] * r[0] + r[1] * r[1]).sqrt() - rho).abs() < 1e-12, "step {step}: radius");
            assert!((r[2] - p[2]).abs() < 1e-12, "step {step}: height");
        }
        // The centre does not move; the first point turned by 3 rad/s.
        assert!((c[0] - 0.5).abs() < 1e-12 && (c[1] + 1.0).abs() < 1e-12 && (c[2] - 2.0).abs() < 1e-12);
        let r0 = [x[0] - c[0], x[1] - c[1]];
        angle = r0[1].atan2(r0[0]);
        let expected = (3.0 * 0.01 * step as f64 + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI) - std::f64::consts::PI;
        assert!((angle - expected).abs() < 1e-9, "step {step}: angle {angle} vs {expected}");
        // Mapped velocities: ω × r.
        let v = scene.store.get(pts).read(VecId::VELOCITY).to_vec();
        assert!((v[0] + 3.0 * r0[1]).abs() < 1e-9 && (v[1] - 3.0 * r0[0]).abs() < 1e-9);
    }
    assert!(angle.abs() > 0.1);
}

/// CenterOfMassMapping reads the masses of the input's UniformMass (vertexMass 2 for each frame)
/// and SkinningMapping finds its weights from the rest frames at init; the Rigid3 → Rigid3
/// RigidMapping takes its local frames from initialPoints (7 reals each).
#[test]
fn center_of_mass_skinning_and_rigid_frames_from_initial_points() {
    let f = support::factory();
    let text = r#"<Node name="root" gravity="0 0 0" dt="0.01">
  <MechanicalObject name="rigid" template="Rigid3" position="0 0 0 0 0 0 1  2 0 0 0 0 0 1  2 4 0 0 0 0 1"/>
  <UniformMass vertexMass="2 1 [1 0 0,0 1 0,0 0 1]"/>
  <Node name="com">
    <MechanicalObject name="c" position="9 9 9"/>
    <CenterOfMassMapping/>
  </Node>
  <Node name="skin">
    <MechanicalObject name="s" position="1 0 0  2 4 0"/>
    <SkinningMapping nbRef="2" input="@../rigid" output="@s"/>
  </Node>
  <Node name="frames">
    <MechanicalObject name="f" template="Rigid3" position="0 0 0 0 0 0 1"/>
    <RigidMapping initialPoints="1 0 0 0 0 0.7071067811865476 0.7071067811865476" rigidIndexPerPoint="1"/>
  </Node>
</Node>"#;
    let scene = support::load_text("com", text, &f);
    let read = |class: &str| {
        let e = component(&scene, class);
        let mo = scene.slot(e.node, role::MECHANICAL_STATE).unwrap();
        scene.store.get(scene.state_of(mo).unwrap()).read(VecId::POSITION).to_vec()
    };
    let c = read("CenterOfMassMapping");
    assert_eq!(c, vec![4.0 / 3.0, 4.0 / 3.0, 0.0]);
    // (1 0 0) is at distance 1 from frames 0 and 1: weights 1/2 each, frame 2 (distance √17) left out
    let skin = component(&scene, "SkinningMapping");
    assert_eq!(skin.data.indices("indices"), &[1, 0, 2, 1]);
    let w = skin.data.reals("weight");
    assert!((w[0] - 0.5).abs() < 1e-15 && (w[1] - 0.5).abs() < 1e-15);
    // (2 4 0) sits on frame 2: its weight is the largest real, the other ~0
    assert!((w[2] - 1.0).abs() < 1e-15 && w[3] < 1e-300);
    let s = read("SkinningMapping");
    for (a, b) in s.iter().zip([1.0, 0.0, 0.0, 2.0, 4.0, 0.0]) {
        assert!((a - b).abs() < 1e-12, "{s:?}");
    }
    // frame 1 at (2 0 0) carries the local frame (1 0 0), turned by 90° about z
    let fr = read("RigidMapping");
    let h = std::f64::consts::FRAC_1_SQRT_2;
    for (a, b) in fr.iter().zip([3.0, 0.0, 0.0, 0.0, 0.0, h, h]) {
        assert!((a - b).abs() < 1e-12, "{fr:?}");
    }
}

/// DeformableOnRigidFrameMapping resolves input1 (local points) and input2 (frames) and places
/// the points in the frame at init; a missing input2 is a positioned error.
#[test]
fn deformable_on_rigid_frame_links_and_init() {
    let f = support::factory();
    let text = r#"<Node name="root" gravity="0 0 0" dt="0.01">
  <MechanicalObject name="rigid" template="Rigid3" position="1 2 3 0 0 0.7071067811865476 0.7071067811865476"/>
  <Node name="local">
    <MechanicalObject name="p" position="1 0 0  0 2 0"/>
    <Node name="world">
      <MechanicalObject name="w"/>
      <DeformableOnRigidFrameMapping input1="@.." input2="@../../rigid" output="@w"/>
    </Node>
  </Node>
</Node>"#;
    let scene = support::load_text("dorf", text, &f);
    let e = component(&scene, "DeformableOnRigidFrameMapping");
    let mo = scene.slot(e.node, role::MECHANICAL_STATE).unwrap();
    let x = scene.store.get(scene.state_of(mo).unwrap()).read(VecId::POSITION).to_vec();
    // 90° about z: (1 0 0) → (0 1 0), (0 2 0) → (−2 0 0), then + (1 2 3)
    for (a, b) in x.iter().zip([1.0, 3.0, 3.0, -1.0, 2.0, 3.0]) {
        assert!((a - b).abs() < 1e-12, "{x:?}");
    }
    let bad = text.replace(r#" input2="@../../rigid""#, "");
    let path = settee_testkit::temp_scene("dorf_bad", &bad);
    let dp = settee_scene::DataPath::new(Vec::<std::path::PathBuf>::new());
    let mut scene = settee_scene::load_scene(&path, &f, &dp).unwrap();
    let err = settee_core::simulation::init_root(&mut scene, &f).unwrap_err();
    assert!(err.to_string().contains("input2 is not set"), "{err}");
}
