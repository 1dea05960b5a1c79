//! Lagrangian constraints end to end (FreeMotionAnimationLoop, constraint laws, corrections and
//! solvers): analytic contact and friction answers, a bilateral pendulum over 10,000 steps, and
//! the set-ups that cannot work being reported.

mod common;

use common::{load, state, steps};
use settee_core::data::Value;
use settee_core::simulation::animate;
use settee_core::{Scene, Severity, VecId};
use settee_tests::temp_scene;

/// The multipliers of the last solve of the scene's constraint solver.
fn multipliers(s: &Scene) -> Vec<f64> {
    let solver = s.components.values().find(|e| e.class.name == "BlockGaussSeidelConstraintSolver").expect("a BlockGaussSeidel solver");
    match solver.data.field("constraintForces").map(|f| &f.value) {
        Some(Value::Reals { v, .. }) => v.clone(),
        other => panic!("constraintForces: {other:?}"),
    }
}

/// A particle of mass 2 above a static horizontal square (y = 0), frictional contact with
/// coefficient `mu`, gravity `g` (a vector: tilting gravity tilts the slope). The particle is
/// kept off the square's diagonal: SOFA's triangle–point proximity leaves points on an edge to
/// the line models.
fn particle_on_plane(mu: f64, g: [f64; 3], y0: f64) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="{} {} {}">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver tolerance="1e-12" maxIterations="1000" computeConstraintForces="true"/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.5" contactDistance="0.1"/>
  <CollisionResponse response="FrictionContactConstraint" responseParams="mu={mu}"/>
  <Node name="particle">
    <EulerImplicitSolver rayleighMass="0" rayleighStiffness="0"/>
    <SparseLDLSolver template="CompressedRowSparseMatrixd"/>
    <MechanicalObject name="particle" position="1 {y0} -3"/>
    <UniformMass totalMass="2"/>
    <PointCollisionModel/>
    <LinearSolverConstraintCorrection/>
  </Node>
  <Node name="plane">
    <MechanicalObject name="plane" position="-50 0 -50  50 0 -50  50 0 50  -50 0 50"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0"/>
  </Node>
</Node>"#,
        g[0], g[1], g[2]
    )
}

#[test]
fn a_particle_dropped_on_a_plane_rests_without_penetration_under_its_weight() {
    let mut s = load("particle-drop", &particle_on_plane(0.0, [0.0, -10.0, 0.0], 0.3));
    steps(&mut s, 300);
    let x = state(&s, "particle").read(VecId::POSITION).to_vec();
    let v = state(&s, "particle").read(VecId::VELOCITY).to_vec();
    // At rest exactly at the contact distance (0.1): no penetration, no drift.
    assert!((x[1] - 0.1).abs() < 1e-10, "rests at y = {}", x[1]);
    assert!(v.iter().all(|c| c.abs() < 1e-9), "velocity {v:?}");
    // The multiplier is an impulse over the step: force = λ/dt = m·g = 20.
    let lambda = multipliers(&s);
    assert_eq!(lambda.len(), 1, "one frictionless contact row");
    assert!((lambda[0] / 0.01 - 20.0).abs() < 1e-8, "contact force {}", lambda[0] / 0.01);
}

#[test]
fn at_velocity_level_the_dropped_particle_rests_the_same_way() {
    // solveVelocityConstraintFirst: the problem is posed on velocities (the unilateral violation
    // is n·Δv + (n·Δx − d)/dt) and positions follow from the corrected velocities.
    let text = particle_on_plane(0.0, [0.0, -10.0, 0.0], 0.3)
        .replace("<FreeMotionAnimationLoop/>", r#"<FreeMotionAnimationLoop solveVelocityConstraintFirst="true"/>"#);
    let mut s = load("particle-drop-vel", &text);
    steps(&mut s, 300);
    let x = state(&s, "particle").read(VecId::POSITION).to_vec();
    assert!((x[1] - 0.1).abs() < 1e-10, "rests at y = {}", x[1]);
    assert!(state(&s, "particle").read(VecId::VELOCITY).iter().all(|c| c.abs() < 1e-9));
    let lambda = multipliers(&s);
    assert!((lambda[0] / 0.01 - 20.0).abs() < 1e-8, "contact force {}", lambda[0] / 0.01);
}

/// Gravity at angle θ from the plane's normal: a slope of angle θ.
fn slope_gravity(theta: f64) -> [f64; 3] {
    [10.0 * theta.sin(), -10.0 * theta.cos(), 0.0]
}

#[test]
fn a_block_on_a_slope_sticks_when_mu_reaches_tan_theta() {
    let theta: f64 = 0.3;
    let mut s = load("slope-stick", &particle_on_plane(theta.tan() + 0.05, slope_gravity(theta), 0.1));
    steps(&mut s, 200);
    let x = state(&s, "particle").read(VecId::POSITION);
    assert!((x[0] - 1.0).abs() < 1e-9 && (x[1] - 0.1).abs() < 1e-9 && (x[2] + 3.0).abs() < 1e-9, "moved to {x:?}");
    // Normal and tangential impulses balance the weight: λn = m·g·cos θ·dt, |λt| = m·g·sin θ·dt.
    let l = multipliers(&s);
    assert!((l[0] - 2.0 * 10.0 * theta.cos() * 0.01).abs() < 1e-9, "{l:?}");
    assert!(((l[1] * l[1] + l[2] * l[2]).sqrt() - 2.0 * 10.0 * theta.sin() * 0.01).abs() < 1e-9, "{l:?}");
}

#[test]
fn a_block_on_a_slope_slides_with_the_coulomb_acceleration() {
    let (theta, mu): (f64, f64) = (0.5, 0.3);
    let mut s = load("slope-slide", &particle_on_plane(mu, slope_gravity(theta), 0.1));
    steps(&mut s, 10);
    let v10 = state(&s, "particle").read(VecId::VELOCITY)[0];
    steps(&mut s, 100);
    let v110 = state(&s, "particle").read(VecId::VELOCITY)[0];
    let a = (v110 - v10) / 1.0;
    let expected = 10.0 * (theta.sin() - mu * theta.cos());
    assert!((a - expected).abs() < 1e-6 * expected, "a = {a}, g(sin θ − μ cos θ) = {expected}");
    let x = state(&s, "particle").read(VecId::POSITION);
    assert!((x[1] - 0.1).abs() < 1e-9, "stays on the slope: y = {}", x[1]);
    // Sliding: the friction impulse is on the cone's edge.
    let l = multipliers(&s);
    assert!(((l[1] * l[1] + l[2] * l[2]).sqrt() - mu * l[0]).abs() < 1e-12, "{l:?}");
}

#[test]
fn a_pendulum_held_by_a_bilateral_constraint_keeps_its_length_over_10000_steps() {
    // A rigid bob (centre 1 m from the pivot) whose mapped point sits on the pivot, glued to a
    // fixed point by a BilateralLagrangianConstraint.
    let text = r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver tolerance="1e-12" maxIterations="200"/>
  <Node name="pivot">
    <MechanicalObject name="pivot" position="0 0 0"/>
  </Node>
  <Node name="bob">
    <EulerImplicitSolver rayleighMass="0" rayleighStiffness="0"/>
    <SparseLDLSolver template="CompressedRowSparseMatrixd"/>
    <MechanicalObject name="bob" template="Rigid3d" position="1 0 0 0 0 0 1"/>
    <UniformMass totalMass="1"/>
    <LinearSolverConstraintCorrection/>
    <Node name="hinge">
      <MechanicalObject name="hinge" position="-1 0 0"/>
      <RigidMapping globalToLocalCoords="false"/>
    </Node>
  </Node>
  <BilateralLagrangianConstraint template="Vec3d" object1="@pivot/pivot" object2="@bob/hinge/hinge" first_point="0" second_point="0"/>
</Node>"#;
    let mut s = load("pendulum", text);
    // Each step corrects the violation exactly at first order (the solver converges to 1e-12),
    // so the length error is the linearisation error of one step's rotation, at most
    // L·(ω·dt)²/2 with the largest angular speed ω = √(2g/L), and it must not build up.
    let bound = 0.5 * (2.0f64 * 9.81).sqrt().powi(2) * 0.01f64.powi(2);
    let mut first: f64 = 0.0;
    let mut last: f64 = 0.0;
    let mut lowest: f64 = 0.0;
    for step in 0..10_000 {
        steps(&mut s, 1);
        let x = state(&s, "bob").read(VecId::POSITION);
        let error = ((x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt() - 1.0).abs();
        assert!(error < bound, "after {} steps the length is off by {error} (bound {bound})", step + 1);
        if step < 1000 {
            first = first.max(error);
        }
        if step >= 9000 {
            last = last.max(error);
        }
        lowest = lowest.min(x[1]);
    }
    assert!(last <= 1.05 * first, "the length error grew from {first} to {last}");
    assert!(lowest < -0.9, "the bob swung down to y = {lowest}");
    let solver = s.components.values().find(|e| e.class.name == "BlockGaussSeidelConstraintSolver").expect("solver");
    match solver.data.field("currentError").map(|f| &f.value) {
        Some(Value::Real(e)) => assert!(*e < 3e-12, "last solve's error {e}"),
        other => panic!("currentError: {other:?}"),
    }
}

fn warnings(s: &Scene) -> String {
    s.messages.iter().filter(|m| m.severity == Severity::Warning).map(|m| m.to_string()).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_constrained_object_without_a_constraint_correction_is_reported() {
    let text = r#"<Node name="root" dt="0.01">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver/>
  <Node name="body">
    <EulerImplicitSolver/>
    <SparseLDLSolver template="CompressedRowSparseMatrixd"/>
    <MechanicalObject name="body" position="0 0 0  1 0 0"/>
    <UniformMass totalMass="1"/>
    <FixedLagrangianConstraint indices="0"/>
  </Node>
</Node>"#;
    let s = load("no-correction", text);
    let w = warnings(&s);
    assert!(w.contains("no-correction.scn:9:5") && w.contains("has no constraint correction"), "{w}");
}

#[test]
fn constraints_under_the_default_animation_loop_are_reported_as_ignored() {
    let text = r#"<Node name="root" dt="0.01">
  <BlockGaussSeidelConstraintSolver/>
  <Node name="body">
    <EulerImplicitSolver/>
    <SparseLDLSolver template="CompressedRowSparseMatrixd"/>
    <MechanicalObject position="0 0 0"/>
    <UniformMass totalMass="1"/>
    <LinearSolverConstraintCorrection/>
  </Node>
</Node>"#;
    let s = load("default-loop", text);
    let w = warnings(&s);
    assert!(w.contains("default-loop.scn:2:3") && w.contains("DefaultAnimationLoop does not solve Lagrangian constraints"), "{w}");
}

#[test]
fn a_constraint_on_a_dof_that_cannot_move_is_reported_not_a_panic() {
    // The DOF is fixed by a projective constraint, so the Lagrangian rows are projected to zero
    // and W has a zero diagonal.
    let text = r#"<Node name="root" dt="0.01" gravity="0 -10 0">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver maxIterations="50"/>
  <Node name="body">
    <EulerImplicitSolver/>
    <SparseLDLSolver template="CompressedRowSparseMatrixd"/>
    <MechanicalObject name="body" position="0 0 0  1 0 0"/>
    <UniformMass totalMass="1"/>
    <FixedProjectiveConstraint indices="0"/>
    <FixedLagrangianConstraint indices="0"/>
    <LinearSolverConstraintCorrection/>
  </Node>
</Node>"#;
    let mut s = load("singular", text);
    let dt = s.root().context.dt;
    let r = animate(&mut s, dt);
    let w = warnings(&s);
    assert!(w.contains("singular.scn:3:3") && w.contains("has no compliance"), "{w}");
    // Whatever the multipliers became, the step ends with an error or finite states, never a panic.
    if r.is_ok() {
        assert!(state(&s, "body").read(VecId::POSITION).iter().all(|x| x.is_finite()));
    }
}

#[test]
fn a_free_motion_loop_without_a_constraint_solver_gets_block_gauss_seidel_with_a_warning() {
    let text = particle_on_plane(0.0, [0.0, -10.0, 0.0], 0.3)
        .replace(r#"<BlockGaussSeidelConstraintSolver tolerance="1e-12" maxIterations="1000" computeConstraintForces="true"/>"#, "");
    let mut s = load("no-solver", &text);
    assert!(warnings(&s).contains("a BlockGaussSeidelConstraintSolver with default Data was added"), "{}", warnings(&s));
    assert_eq!(s.components.values().filter(|e| e.class.name == "BlockGaussSeidelConstraintSolver").count(), 1);
    steps(&mut s, 300);
    // Default tolerance 1e-3 (scaled by the row count): the particle still rests on the plane.
    assert!((state(&s, "particle").read(VecId::POSITION)[1] - 0.1).abs() < 1e-6);
}

/// A chain of three particles on springs held at both ends by bilateral constraints, its
/// compliance through SparseLDL (LinearSolverConstraintCorrection), solved by `solver`.
fn spring_chain_held_at_both_ends(solver: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  <{solver} tolerance="1e-14" maxIterations="2000"/>
  <Node name="pivots">
    <MechanicalObject name="pivots" position="0 0 0  3 0 0"/>
  </Node>
  <Node name="chain">
    <EulerImplicitSolver rayleighMass="0" rayleighStiffness="0"/>
    <SparseLDLSolver template="CompressedRowSparseMatrixd"/>
    <MechanicalObject name="chain" position="0 0 0  1 0.2 0  2 -0.1 0  3 0 0"/>
    <UniformMass totalMass="4"/>
    <SpringForceField spring="0 1 200 0.5 1  1 2 200 0.5 1  2 3 200 0.5 1"/>
    <LinearSolverConstraintCorrection/>
  </Node>
  <BilateralLagrangianConstraint template="Vec3d" object1="@pivots/pivots" object2="@chain/chain" first_point="0 1" second_point="0 3"/>
</Node>"#
    )
}

#[test]
fn the_unbuilt_path_through_a_linear_solver_correction_matches_the_built_one() {
    // UnbuiltGaussSeidel asks the correction for each block's displacement from the current
    // forces (a solve with the linear solver's factorisation) instead of a built W: converged
    // to 1e-14, both paths hold the chain the same way.
    let mut built = load("chain_built", &spring_chain_held_at_both_ends("BlockGaussSeidelConstraintSolver"));
    let mut unbuilt = load("chain_unbuilt", &spring_chain_held_at_both_ends("UnbuiltGaussSeidelConstraintSolver"));
    for _ in 0..50 {
        steps(&mut built, 1);
        steps(&mut unbuilt, 1);
    }
    let (a, b) = (state(&built, "chain").read(VecId::POSITION), state(&unbuilt, "chain").read(VecId::POSITION));
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-9, "built {a:?} vs unbuilt {b:?}");
    }
    // Both ends stay on their pivots and the middle sagged.
    assert!(a[0].abs() < 1e-9 && a[1].abs() < 1e-9 && (a[9] - 3.0).abs() < 1e-9 && a[10].abs() < 1e-9, "{a:?}");
    assert!(a[4] < 0.0 && a[7] < -0.1, "the chain sags under gravity: {a:?}");
    assert!(b[0].abs() < 1e-9 && (b[9] - 3.0).abs() < 1e-9, "{b:?}");
}

/// The particle-on-plane scene with StickContactConstraint as the response.
fn particle_stuck_on_plane(g: [f64; 3], y0: f64, params: &str) -> String {
    particle_on_plane(0.0, g, y0).replace(
        r#"response="FrictionContactConstraint" responseParams="mu=0""#,
        &format!(r#"response="StickContactConstraint" responseParams="{params}""#),
    )
}

#[test]
fn a_stick_contact_holds_a_particle_where_it_was_first_detected() {
    // Gravity tilted by 30° from the normal: with FrictionContact and mu = 0 the particle
    // would slide; StickContactConstraint glues it, at its detected offset, from the first
    // step its point is within the alarm distance (0.5), so it never falls further.
    let g = [-5.0, -5.0 * 3f64.sqrt(), 0.0];
    let text = particle_stuck_on_plane(g, 0.8, "");
    assert!(text.contains("StickContactConstraint"));
    let mut s = load("particle-stick", &text);
    let mut glued: Option<Vec<f64>> = None;
    for _ in 0..300 {
        steps(&mut s, 1);
        let x = state(&s, "particle").read(VecId::POSITION).to_vec();
        match &glued {
            None if x[1] < 0.5 => glued = Some(x),
            Some(at) => assert!(x.iter().zip(at).all(|(a, b)| (a - b).abs() < 1e-10), "moved from {at:?} to {x:?}"),
            None => {}
        }
    }
    let at = glued.expect("the particle reached the alarm distance");
    assert!(at[1] > 0.4 && at[0] < 1.0, "caught on its way down: {at:?}");
    // Three bilateral rows; the constraint force balances the whole weight, 2·|g| = 20.
    let lambda = multipliers(&s);
    assert_eq!(lambda.len(), 3, "one glued pair: {lambda:?}");
    let force = lambda.iter().map(|l| (l / 0.01).powi(2)).sum::<f64>().sqrt();
    assert!((force - 20.0).abs() < 1e-8, "constraint force {force}");
}

#[test]
fn a_stick_contact_with_a_bad_parameter_is_refused_at_its_place_in_the_scene() {
    let text = particle_stuck_on_plane([0.0, -10.0, 0.0], 0.3, "keepAlive=maybe");
    let path = temp_scene("particle-stick-bad", &text);
    let failure = match settee::load(&path, &settee::factory(), &[]) {
        Ok(_) => panic!("keepAlive=maybe is not a boolean"),
        Err(f) => f.first_error(),
    };
    assert!(failure.contains("keepAlive") && failure.contains(":8:"), "{failure}");
}
