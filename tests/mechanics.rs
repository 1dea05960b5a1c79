//! End-to-end mechanics with analytic answers.
#![allow(clippy::disallowed_methods)] // tests check output Data by name

mod common;

use common::{load, steps as step};
use settee_core::{Scene, VecId};

fn position(scene: &Scene) -> Vec<f64> {
    scene.store.nth(0).read(VecId::POSITION).to_vec()
}

#[test]
fn implicit_euler_free_fall_follows_the_semi_implicit_recurrence() {
    // v_{n+1} = v_n + h g ; x_{n+1} = x_n + h v_{n+1}  =>  x_n = h² g n(n+1)/2
    let mut s = load(
        "fall",
        r#"<Node name="root" dt="0.01" gravity="0 -10 0">
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-20"/>
  <MechanicalObject position="0 0 0"/>
  <UniformMass totalMass="2"/>
</Node>"#,
    );
    step(&mut s, 50);
    let y = position(&s)[1];
    let expected = 0.01f64 * 0.01 * -10.0 * 50.0 * 51.0 / 2.0;
    assert!((y - expected).abs() < 1e-12, "{y} vs {expected}");
}

#[test]
fn explicit_euler_free_fall_non_symplectic() {
    // x_{n+1} = x_n + h v_n ; v_{n+1} = v_n + h g  =>  x_n = h² g n(n-1)/2
    let mut s = load(
        "fallx",
        r#"<Node name="root" dt="0.01" gravity="0 -10 0">
  <EulerExplicitSolver symplectic="false"/>
  <MechanicalObject position="0 0 0"/>
  <UniformMass vertexMass="3"/>
</Node>"#,
    );
    step(&mut s, 20);
    let y = position(&s)[1];
    let expected = 0.01f64 * 0.01 * -10.0 * 20.0 * 19.0 / 2.0;
    assert!((y - expected).abs() < 1e-13, "{y} vs {expected}");
}

#[test]
fn fixed_points_do_not_move_and_spring_reaches_static_equilibrium() {
    // A mass hanging from a fixed point by a spring of stiffness k, rest length L:
    // equilibrium elongation m g / k. Heavy damping makes it settle.
    let mut s = load(
        "hang",
        r#"<Node name="root" dt="0.01" gravity="0 -10 0">
  <EulerImplicitSolver rayleighMass="2" rayleighStiffness="0.1"/>
  <SparseLDLSolver/>
  <MechanicalObject position="0 0 0  0 -1 0"/>
  <UniformMass vertexMass="0.5"/>
  <FixedProjectiveConstraint indices="0"/>
  <SpringForceField spring="0 1 100 0 1"/>
</Node>"#,
    );
    step(&mut s, 3000);
    let x = position(&s);
    assert_eq!(&x[0..3], &[0.0, 0.0, 0.0]);
    let elongation = -x[4] - 1.0;
    assert!((elongation - 0.5 * 10.0 / 100.0).abs() < 1e-6, "elongation {elongation}");
}

#[test]
fn rigid_frame_rotates_with_the_exponential_map() {
    // No gravity, an initial angular velocity: the orientation after n steps is the rotation by
    // n·h·ω about z, whatever the integrator, since nothing acts on the body.
    let mut s = load(
        "spin",
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <EulerExplicitSolver/>
  <MechanicalObject template="Rigid3" position="0 0 0 0 0 0 1" velocity="0 0 0 0 0 2"/>
  <UniformMass totalMass="1"/>
</Node>"#,
    );
    step(&mut s, 100);
    let x = position(&s);
    let angle = 100.0 * 0.01 * 2.0;
    assert!((x[5] - (angle / 2.0f64).sin()).abs() < 1e-12, "{x:?}");
    assert!((x[6] - (angle / 2.0f64).cos()).abs() < 1e-12, "{x:?}");
}

#[test]
fn data_links_and_engine_outputs_reach_their_readers() {
    // BoxROI selects the points with x < 0.5; the constraint takes them through @box.indices.
    let s = load(
        "links",
        r#"<Node name="root" dt="0.01">
  <EulerImplicitSolver/>
  <CGLinearSolver iterations="25" tolerance="1e-9" threshold="1e-9"/>
  <MechanicalObject name="dofs" position="0 0 0  1 0 0  0 1 0  1 1 0"/>
  <UniformMass totalMass="4"/>
  <BoxROI name="box" box="-0.5 -0.5 -0.5  0.5 1.5 0.5"/>
  <FixedProjectiveConstraint name="fix" indices="@box.indices"/>
</Node>"#,
    );
    let fix = s.components.iter().find(|(_, c)| c.name == "fix").map(|(id, _)| id).unwrap();
    assert_eq!(s.components[fix].data.indices("indices"), &[0, 2]);
}
