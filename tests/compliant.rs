//! The Compliant formulation end to end: the unit-test recipes of the Compliant plugin (compliant
//! spec §14.1–§14.3), the primary example scenes against the numbers derived in the spec's §13,
//! equivalences between stiffness and compliance, and the set-ups that cannot work.

use settee_compliant::CompliantImplicitSolver;
use settee_core::compliant::AssembledSystem;
use settee_core::simulation::animate;
use settee_core::{Scene, VecId};
use settee_tests::temp_scene;

fn load(name: &str, text: &str) -> Scene {
    let path = temp_scene(name, text);
    settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene
}

fn state<'a>(s: &'a Scene, name: &str) -> &'a settee_core::state::MState {
    s.store.states.values().find(|m| m.name == name).unwrap_or_else(|| panic!("no state {name}"))
}

fn x(s: &Scene, name: &str) -> Vec<f64> {
    state(s, name).read(VecId::POSITION).to_vec()
}

fn v(s: &Scene, name: &str) -> Vec<f64> {
    state(s, name).read(VecId::VELOCITY).to_vec()
}

fn step(s: &mut Scene) {
    let dt = s.root().context.dt;
    animate(s, dt).unwrap_or_else(|e| panic!("step: {e}"));
}

/// The system the scene's CompliantImplicitSolver assembled at its last step.
fn system(s: &Scene) -> AssembledSystem {
    let e = s.components.values().find(|e| e.class.name == "CompliantImplicitSolver").expect("a CompliantImplicitSolver");
    let solver = e.obj.as_ref().expect("solver").as_any().downcast_ref::<CompliantImplicitSolver>().expect("its type");
    solver.last_system().expect("a step was made").clone()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

// ----- §14.1 CompliantImplicitSolver_test ------------------------------------------------------

/// Two particles (0,0,0)–(x1,0,0) of mass 1, the first fixed, joined by a distance of rest length
/// 1 with compliance 1e-3 (k = 1000), no gravity, LDLTSolver + LDLTResponse, α = β = 1.
fn two_particles(is_compliance: bool, x1: f64, v1: f64, dt: f64, forces: &str) -> String {
    format!(
        r#"<Node name="root" dt="{dt}" gravity="0 0 0">
  <CompliantImplicitSolver implicitVelocity="1" implicitPosition="1" constraint_forces="{forces}"/>
  <LDLTSolver/>
  <LDLTResponse/>
  <MechanicalObject name="dofs" position="0 0 0  {x1} 0 0" velocity="0 0 0  {v1} 0 0"/>
  <UniformMass totalMass="2"/>
  <FixedConstraint indices="0"/>
  <Node name="extension">
    <MechanicalObject template="Vec1d" name="ext"/>
    <EdgeSetTopologyContainer edges="0 1"/>
    <DistanceMapping restLengths="1"/>
    <UniformCompliance template="Vec1d" compliance="1e-3" isCompliance="{}"/>
  </Node>
</Node>"#,
        is_compliance as u8
    )
}

/// One step of the fixture; checks SOFA's post-condition (an explicit step backwards with the
/// end-of-step spring force returns to the start) and returns particle 1's (x, v).
fn one_step(name: &str, is_compliance: bool, x1: f64, v1: f64, dt: f64) -> (f64, f64) {
    let mut s = load(name, &two_particles(is_compliance, x1, v1, dt, "no"));
    step(&mut s);
    let (p, u) = (x(&s, "dofs"), v(&s, "dofs"));
    let (xe, ve) = (p[3], u[3]);
    assert_eq!(&p[..3], &[0.0; 3], "the fixed particle stays");
    assert!(close(xe - dt * ve, x1, 1e-6), "backward position step: {} vs {x1}", xe - dt * ve);
    let f = -1000.0 * (xe - 1.0);
    assert!(close(ve - dt * f, v1, 1e-6), "backward velocity step: {} vs {v1}", ve - dt * f);
    (xe, ve)
}

#[test]
fn one_fixed_one_stiffness_spring_v100() {
    let (xe, ve) = one_step("stiff_v100", false, 1.0, 1.0, 0.1);
    assert!(close(ve, 1.0 / 11.0, 1e-12) && close(xe, 1.00909090909091, 1e-12), "{xe} {ve}");
}

#[test]
fn one_fixed_one_compliance_spring_v100() {
    let (xe, ve) = one_step("comp_v100", true, 1.0, 1.0, 0.1);
    assert!(close(ve, 1.0 / 11.0, 1e-12) && close(xe, 1.00909090909091, 1e-12), "{xe} {ve}");
}

#[test]
fn one_fixed_one_stiffness_spring_x200() {
    let (xe, ve) = one_step("stiff_x200", false, 2.0, 0.0, 0.1);
    assert!(close(ve, -100.0 / 11.0, 1e-11) && close(xe, 1.09090909090909, 1e-12) && xe > 1.0, "{xe} {ve}");
}

#[test]
fn one_fixed_one_compliance_spring_x200_and_its_constraint_forces() {
    let (xe, ve) = one_step("comp_x200", true, 2.0, 0.0, 1.0);
    assert!(close(ve, -1000.0 / 1001.0, 1e-12) && close(xe, 1.000999000999, 1e-12) && xe > 1.0, "{xe} {ve}");

    // Without output, the independent force vector holds only the (zero) forces of the step.
    let mut s = load("comp_x200_no", &two_particles(true, 2.0, 0.0, 1.0, "no"));
    step(&mut s);
    assert!(state(&s, "dofs").read(VecId::FORCE).iter().all(|&f| f == 0.0));
    // `propagate` writes P·Jᵀλ/h: the spring's pull on particle 1, nothing on the fixed one.
    let mut s = load("comp_x200_propagate", &two_particles(true, 2.0, 0.0, 1.0, "propagate"));
    step(&mut s);
    let f = state(&s, "dofs").read(VecId::FORCE).to_vec();
    assert_eq!(&f[..3], &[0.0; 3]);
    assert!(close(f[3], -0.999001, 1e-6) && f[4] == 0.0 && f[5] == 0.0, "{f:?}");
}

// ----- §14.2 DampedOscillator_test --------------------------------------------------------------

/// The exact oscillator (x0 = 1, v0 = 0, k = m = 1, viscous damping d: ζ = d/2, ω₀ = 1).
fn damped_exact(t: f64, d: f64) -> f64 {
    let (z, w0) = (d / 2.0, 1.0f64);
    let w = w0 * (1.0 - z * z).sqrt();
    (-z * w0 * t).exp() * ((z * w0 / w) * (w * t).sin() + (w * t).cos())
}

/// The plugin's test: the undamped oscillator for the explicit schemes (its UniformCompliance
/// adds no damping force), damping 1 for the implicit ones.
fn oscillator(solver: &str, compliance_child: bool, d: f64) -> String {
    let ff = format!(r#"<UniformCompliance template="Vec1d" compliance="1" damping="{d}" isCompliance="0"/>"#);
    let (own, child) = if compliance_child {
        (
            String::new(),
            format!(
                r#"<Node name="c"><MechanicalObject template="Vec1d" name="cq"/><IdentityMapping/><UniformCompliance template="Vec1d" compliance="1" damping="{d}" isCompliance="1"/></Node>"#
            ),
        )
    } else {
        (ff, String::new())
    };
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  {solver}
  <MechanicalObject template="Vec1d" name="q" position="1" velocity="0"/>
  <UniformMass template="Vec1d" vertexMass="1"/>
  {own}
  {child}
</Node>"#
    )
}

/// Runs the 1-D oscillator while t < 7 (701 steps, as SOFA's floating loop) and returns the
/// largest error against the exact solution, and x at t = 0.01, 0.02 and 1.
fn run_oscillator(solver: &str, compliance_child: bool, d: f64) -> (f64, [f64; 3]) {
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut s = load(&format!("damped{k}"), &oscillator(solver, compliance_child, d));
    let (mut t, mut worst, mut at) = (0.0f64, 0.0f64, [0.0; 3]);
    let mut n = 0;
    while t < 7.0 {
        step(&mut s);
        t += 0.01;
        n += 1;
        let q = x(&s, "q")[0];
        worst = worst.max((q - damped_exact(t, d)).abs());
        match n {
            1 => at[0] = q,
            2 => at[1] = q,
            100 => at[2] = q,
            _ => {}
        }
    }
    assert_eq!(n, 701);
    (worst, at)
}

const COMPLIANT_1: &str = r#"<CompliantImplicitSolver implicitVelocity="1" implicitPosition="1"/><LDLTSolver/>"#;
const COMPLIANT_HALF: &str = r#"<CompliantImplicitSolver implicitVelocity="0.5" implicitPosition="1"/><LDLTSolver/>"#;

#[test]
fn damped_oscillator_explicit_and_symplectic_euler() {
    let (e, _) = run_oscillator(r#"<EulerExplicitSolver symplectic="0"/>"#, false, 0.0);
    assert!(e < 0.04, "explicit Euler error {e}");
    let (e, _) = run_oscillator(r#"<EulerExplicitSolver symplectic="1"/>"#, false, 0.0);
    assert!(e < 0.006, "symplectic Euler error {e}");
}

#[test]
fn damped_oscillator_stiffness_first_degree() {
    let (e, at) = run_oscillator(COMPLIANT_1, false, 1.0);
    assert!(e < 0.04 && close(e, 3.887e-3, 1e-6), "error {e}");
    assert!(close(at[0], 0.999900999901, 1e-12) && close(at[1], 0.999703999406999, 1e-12) && close(at[2], 0.6590843698143, 1e-12), "{at:?}");
}

#[test]
fn damped_oscillator_stiffness_and_compliance_second_degree() {
    let (e, at) = run_oscillator(COMPLIANT_HALF, false, 1.0);
    assert!(e < 0.003 && close(e, 2.213e-3, 1e-6), "error {e}");
    assert!(close(at[0], 0.999900502462564, 1e-12) && close(at[1], 0.999702512213328, 1e-12) && close(at[2], 0.657511578684763, 1e-12), "{at:?}");
    // The same law as a compliance under an IdentityMapping: the same trajectory.
    let (ec, atc) = run_oscillator(COMPLIANT_HALF, true, 1.0);
    assert!(close(ec, e, 1e-12), "{ec} vs {e}");
    for k in 0..3 {
        assert!(close(atc[k], at[k], 1e-12), "{atc:?} vs {at:?}");
    }
}

// ----- §14.3 Assembly_test ------------------------------------------------------------------------

/// A string of `n` unit-mass particles on x, hard distance constraints (compliance 0).
fn hard_string(name: &str, n: usize, x0: f64, extra: &str, child_extra: &str) -> String {
    let pos: Vec<String> = (0..n).map(|i| format!("{} 0 0", x0 + i as f64)).collect();
    let edges: Vec<String> = (0..n - 1).map(|i| format!("{} {}", i, i + 1)).collect();
    format!(
        r#"<Node name="{name}">
    <MechanicalObject name="{name}" position="{}"/>
    <UniformMass vertexMass="1"/>
    {extra}
    <Node name="{name}_d">
      <MechanicalObject template="Vec1d" name="{name}_ext"/>
      <EdgeSetTopologyContainer edges="{}"/>
      <DistanceMapping/>
      <UniformCompliance template="Vec1d" compliance="0"/>
      {child_extra}
    </Node>
  </Node>"#,
        pos.join("  "),
        edges.join("  ")
    )
}

fn assembly_scene(gravity: &str, body: &str) -> String {
    format!(
        r#"<Node name="root" dt="1" gravity="{gravity}">
  <CompliantImplicitSolver implicitVelocity="1" implicitPosition="1"/>
  <LDLTSolver/>
  <LDLTResponse/>
  {body}
</Node>"#
    )
}

fn dense(m: &settee_linalg::CsrMatrix) -> Vec<f64> {
    m.to_dense()
}

/// λ of the last step, and the dynamics velocity of the masters.
fn lambda_and_v(s: &Scene, sys: &AssembledSystem) -> (Vec<f64>, Vec<f64>) {
    let e = s.components.values().find(|e| e.class.name == "CompliantImplicitSolver").unwrap();
    let solver = e.obj.as_ref().unwrap().as_any().downcast_ref::<CompliantImplicitSolver>().unwrap();
    let lambda = solver.last_lambda().to_vec();
    let mut vel = Vec::new();
    for &(st, _) in &sys.masters {
        vel.extend_from_slice(s.store.get(st).read(VecId::VELOCITY));
    }
    (lambda, vel)
}

const TOL: f64 = 100.0 * f64::EPSILON;

fn assert_all_close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: {a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!(close(*x, *y, TOL * y.abs().max(1.0)), "{what}: {a:?} vs {b:?}");
    }
}

#[test]
fn assembly_hard_string() {
    let body = hard_string("s", 3, 0.0, r#"<ConstantForceField indices="0 2" forces="-1 0 0  1 0 0"/>"#, "");
    let mut s = load("hard_string", &assembly_scene("0 0 0", &body));
    step(&mut s);
    let sys = system(&s);
    let id9: Vec<f64> = (0..81).map(|k| if k % 10 == 0 { 1.0 } else { 0.0 }).collect();
    assert_all_close(&dense(&sys.h), &id9, "M");
    assert!(sys.free.iter().all(|&f| f), "P = I");
    assert_eq!(sys.c.nnz(), 0, "C = 0");
    let mut j = vec![0.0; 2 * 9];
    for i in 0..2 {
        j[i * 9 + 3 * i] = -1.0;
        j[i * 9 + 3 * (i + 1)] = 1.0;
    }
    assert_all_close(&dense(&sys.j), &j, "J");
    let (lambda, vel) = lambda_and_v(&s, &sys);
    assert_all_close(&lambda, &[-1.0, -1.0], "λ");
    assert_all_close(&vel, &[0.0; 9], "v");
}

#[test]
fn assembly_attached_hard_string() {
    let body = hard_string("s", 3, 0.0, r#"<FixedConstraint indices="0"/>"#, "");
    let mut s = load("attached_string", &assembly_scene("10 0 0", &body));
    step(&mut s);
    let sys = system(&s);
    let free: Vec<bool> = (0..9).map(|i| i >= 3).collect();
    assert_eq!(sys.free, free, "P");
    let (lambda, vel) = lambda_and_v(&s, &sys);
    assert_all_close(&lambda, &[-20.0, -10.0], "λ");
    assert_all_close(&vel, &[0.0; 9], "v");
}

// ----- §13 primary example scenes ------------------------------------------------------------------

fn compliant_scene(name: &str) -> Option<Scene> {
    let suite = settee_tests::suite()?;
    let path = suite.join("../compliant-scenes").join(name);
    assert!(path.is_file(), "{} is missing", path.display());
    Some(settee::load(&path, &settee::factory(), &[suite.join("data")]).unwrap_or_else(|f| panic!("{name}: {}", f.first_error())).scene)
}

#[test]
fn compliant_oscillator_matches_the_recurrence() {
    let Some(mut s) = compliant_scene("CompliantOscillator.scn") else { return };
    let expect = [(1, 1.00009999500025), (2, 1.00029997000225), (3, 1.00059990001075), (100, 1.46313552781351), (200, 2.41631255048281)];
    for n in 1..=200 {
        step(&mut s);
        if let Some(&(_, e)) = expect.iter().find(|(k, _)| *k == n) {
            let p = x(&s, "defoDOF")[3];
            assert!(close(p, e, 1e-10), "step {n}: {p} vs {e}");
        }
        if n == 100 {
            let u = v(&s, "defoDOF")[3];
            assert!(close(u, 0.839366434865547, 1e-10), "v at step 100: {u}");
        }
    }
}

#[test]
fn compliant_pendulum_matches_the_derived_numbers() {
    let Some(mut s) = compliant_scene("CompliantPendulum.scn") else { return };
    let expect: [(usize, [f64; 4]); 4] = [
        (1, [0.5, -1e-4, 1.0, -1e-4]),
        (2, [0.499999950000004, -0.000299999980000002, 0.999999950000004, -0.0003]),
        (10, [0.499970751971131, -0.00549972929659602, 0.999970751971073, -0.00549999999777769]),
        (100, [0.324092916762467, -0.380798842300291, 0.809949397732591, -0.499002224431019]),
    ];
    for n in 1..=100 {
        step(&mut s);
        if let Some((_, e)) = expect.iter().find(|(k, _)| *k == n) {
            let p = x(&s, "defoDOF");
            let got = [p[3], p[4], p[6], p[7]];
            for k in 0..4 {
                assert!(close(got[k], e[k], 1e-10), "step {n}: {got:?} vs {e:?}");
            }
        }
    }
}
