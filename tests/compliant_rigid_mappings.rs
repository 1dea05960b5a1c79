//! End-to-end tests of the Compliant plugin's rigid mappings, RigidMass and the safe distance
//! mapping in scenes: a rigid pendulum pinned by a RigidJointMapping constraint (the layout of
//! the plugin's Pendulum.scn, with a direct KKT solver), the output of a SafeDistanceMapping
//! resized between steps, and positioned errors for bad indices.

mod common;

use common::load;
use settee_core::role;
use settee_core::{Scene, StateId, VecId};
use settee_tests::temp_scene;

/// The state of the mechanical object named `name`.
fn state(scene: &Scene, name: &str) -> StateId {
    for n in scene.preorder(Scene::ROOT) {
        if let Some(c) = scene.slot(n, role::MECHANICAL_STATE) {
            if scene.entry(c).name == name {
                return scene.state_of(c).expect("state");
            }
        }
    }
    panic!("no state named {name}")
}

/// A body of mass m and inertia (I₁, I₂, I₃) at (−0.5, 0, 0), pinned at the origin: the frame
/// at +0.5 along its x axis (an AssembledRigidRigidMapping offset) is tied to a fixed frame at
/// the origin by the translation part of a RigidJointMapping with a (near) zero compliance.
const PENDULUM: &str = r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <Node name="scene">
    <CompliantImplicitSolver stabilization="false"/>
    <LDLTSolver/>
    <MechanicalObject template="Rigid3d" name="bodies" position="-0.5 0 0 0 0 0 1  0 0 0 0 0 0 1"/>
    <FixedConstraint indices="1"/>
    <RigidMass template="Rigid3d" mass="15.118914645401" inertia="0.0047246608266878 1.2622718841968 1.2622718841968"/>
    <Node name="joints">
      <MechanicalObject template="Rigid3d" name="frames" position="0 0 0 0 0 0 1 0 0 0 0 0 0 1"/>
      <AssembledRigidRigidMapping template="Rigid,Rigid" source="0 0.5 0 0 0 0 0 1  1 0 0 0 0 0 0 1"/>
      <Node name="joint_translation">
        <MechanicalObject template="Vec6d" name="joint" position="0 0 0 0 0 0"/>
        <RigidJointMapping template="Rigid,Vec6d" pairs="0 1" rotation="false"/>
        <UniformCompliance template="Vec6d" compliance="1e-12"/>
      </Node>
    </Node>
  </Node>
</Node>"#;

/// The pendulum turns about the pin: its centre stays at 0.5 from the origin, at the angle its
/// orientation has turned; the pinned frames coincide (the joint output stays ~0); released
/// horizontal, it swings to the other horizontal and, after about one period (≈ 1.9 s), back.
#[test]
fn rigid_pendulum_turns_about_its_pin() {
    let mut s = load("compliant-rigid-pendulum", PENDULUM);
    let (bodies, joint) = (state(&s, "bodies"), state(&s, "joint"));
    let (m, izz) = (15.118914645401, 1.2622718841968);
    let energy = |s: &Scene| -> f64 {
        let x = s.store.get(bodies).read(VecId::POSITION);
        let v = s.store.get(bodies).read(VecId::VELOCITY);
        0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * izz * v[5] * v[5] + m * 9.81 * x[1]
    };
    let e0 = energy(&s);
    let (mut lowest, mut highest): (f64, f64) = (0.0, 0.0);
    for step in 1..=200 {
        settee_core::simulation::animate(&mut s, 0.01).expect("step");
        let x = s.store.get(bodies).read(VecId::POSITION).to_vec();
        let r = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
        assert!((r - 0.5).abs() < 1e-3, "step {step}: the centre is at {r} from the pin");
        // Planar rotation about z by θ: centre = R(θ)·(−0.5, 0, 0).
        assert!(x[3].abs() < 1e-12 && x[4].abs() < 1e-12 && x[2].abs() < 1e-12);
        let theta = 2.0 * x[5].atan2(x[6]);
        assert!((x[0] + 0.5 * theta.cos()).abs() < 2e-3 && (x[1] + 0.5 * theta.sin()).abs() < 2e-3, "step {step}: θ = {theta}, x = {x:?}");
        let j = s.store.get(joint).read(VecId::POSITION);
        assert!(j.iter().all(|v| v.abs() < 1e-3), "step {step}: joint {j:?}");
        assert!(j[3..].iter().all(|v| *v == 0.0), "rotation=false leaves the rotation part at 0");
        let e = energy(&s);
        // Measured at (x_{n+1}, v_{n+1}) the energy of the implicit scheme oscillates with the
        // phase by O(h·m·g·|v|) (±1.3 J here); no secular gain.
        assert!((e - e0).abs() <= 0.03 * m * 9.81 * 0.5, "step {step}: energy {e}, initially {e0}");
        highest = highest.max(theta);
        lowest = lowest.min(x[1]);
    }
    // It swung through the bottom (y = −0.5) to the other horizontal, nearly without loss, and
    // came back near the start.
    assert!(lowest < -0.49, "lowest centre height {lowest}");
    assert!((highest - std::f64::consts::PI).abs() < 0.02, "largest angle {highest}");
    let x = s.store.get(bodies).read(VecId::POSITION);
    assert!(x[1] > -0.1, "after 2 s the centre is at {x:?}");
}

/// Two points start together: the SafeDistanceMapping maps them to their difference (3 values);
/// once apart, the output is resized to the distance (1 value) at the start of the next step.
#[test]
fn safe_distance_output_is_resized_between_steps() {
    let text = r#"<Node name="root" dt="0.1" gravity="0 0 0">
  <EulerImplicitSolver rayleighMass="0" rayleighStiffness="0"/>
  <CGLinearSolver iterations="25" tolerance="1e-20" threshold="1e-30"/>
  <MechanicalObject name="points" position="1 2 3  1 2 3" velocity="0 0 0  1 0 0"/>
  <UniformMass totalMass="2"/>
  <Node name="d">
    <MechanicalObject template="Vec1d" name="dist"/>
    <SafeDistanceMapping pairs="0 1" restLengths="0"/>
  </Node>
</Node>"#;
    let mut s = load("compliant-safe-distance", text);
    let dist = state(&s, "dist");
    assert_eq!(s.store.get(dist).size, 3);
    assert_eq!(s.store.get(dist).read(VecId::POSITION), &[0.0, 0.0, 0.0]);
    settee_core::simulation::animate(&mut s, 0.1).expect("step");
    // Mapped at the end of step 1 with the layout of its start: the difference.
    assert_eq!(s.store.get(dist).size, 3);
    let d = s.store.get(dist).read(VecId::POSITION).to_vec();
    assert!((d[0] - 0.1).abs() < 1e-12 && d[1] == 0.0 && d[2] == 0.0, "{d:?}");
    settee_core::simulation::animate(&mut s, 0.1).expect("step");
    assert_eq!(s.store.get(dist).size, 1);
    let d = s.store.get(dist).read(VecId::POSITION).to_vec();
    assert!((d[0] - 0.2).abs() < 1e-12, "{d:?}");
    let v = s.store.get(dist).read(VecId::VELOCITY).to_vec();
    assert!((v[0] - 1.0).abs() < 1e-12, "{v:?}");
}

/// Indices out of range are init errors positioned at the component, with the reason.
#[test]
fn bad_indices_are_positioned_errors() {
    let rigid = r#"<MechanicalObject template="Rigid3d" name="r" position="0 0 0 0 0 0 1  1 0 0 0 0 0 1"/>"#;
    let points = r#"<MechanicalObject name="p" position="0 0 0  1 0 0"/>"#;
    let cases = [
        (
            rigid,
            r#"<MechanicalObject template="Vec6d"/><RigidJointMapping pairs="0 2"/>"#,
            "pair 0 (0 2) refers to frame 2, but the input has 2 frames",
        ),
        (rigid, r#"<MechanicalObject template="Rigid3d"/><AssembledRigidRigidMapping source="3 0 0 0 0 0 0 1"/>"#, "source 0 refers to frame 3"),
        (
            points,
            r#"<MechanicalObject template="Vec1d"/><DotProductMapping pairs="0 1 1 2"/>"#,
            "product 1 refers to vector 2, but the input has 2 vectors",
        ),
        (
            points,
            r#"<MechanicalObject template="Vec1d"/><DotProductFromTargetMapping indices="0 5" targets="1 1 1"/>"#,
            "product 1 refers to vector 5",
        ),
        (points, r#"<MechanicalObject/><NormalizationMapping indices="2"/>"#, "indices[0] = 2, but the input has 2 vectors"),
        (points, r#"<MechanicalObject template="Vec1d"/><SafeDistanceMapping pairs="0 7"/>"#, "pair 0 (0 7) refers to point 7"),
        (points, r#"<MechanicalObject template="Vec1d"/><SafeDistanceFromTargetMapping indices="0 1" targets="0 0 0"/>"#, "1 targets for 2 indices"),
        (rigid, r#"<MechanicalObject template="Rigid3d"/><RigidMass mass="1 2" inertia="1 1 1"/>"#, "2 masses but 1 inertias"),
    ];
    for (i, (input, mapped, expected)) in cases.iter().enumerate() {
        let text = format!("<Node name=\"root\">\n  {input}\n  <Node name=\"m\">\n    {mapped}\n  </Node>\n</Node>\n");
        let path = temp_scene(&format!("compliant-bad-{i}"), &text);
        let failure = settee::load(&path, &settee::factory(), &[]).err().unwrap_or_else(|| panic!("case {i} loaded: {text}"));
        let e = failure.first_error();
        assert!(e.contains(expected), "case {i}: {e}");
        assert!(e.contains(&format!("{}:4:", path.display())), "case {i}: not positioned at line 4: {e}");
    }
}
