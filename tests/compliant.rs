//! The Compliant formulation end to end: the unit-test recipes of the Compliant plugin (compliant
//! spec §14.1–§14.3), the primary example scenes against the numbers derived in the spec's §13,
//! equivalences between stiffness and compliance, and the set-ups that cannot work.

mod common;

use common::{load, state};
use settee_compliant::CompliantImplicitSolver;
use settee_core::compliant::AssembledSystem;
use settee_core::simulation::animate;
use settee_core::{Scene, VecId};
use settee_tests::temp_scene;

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
    <Node name="{name}_d">
      <MechanicalObject template="Vec1d" name="{name}_ext"/>
      <EdgeSetTopologyContainer edges="{}"/>
      <DistanceMapping/>
      <UniformCompliance template="Vec1d" compliance="0"/>
      {child_extra}
    </Node>
    {extra}
  </Node>"#,
        pos.join("  "),
        edges.join("  ")
    )
}

/// A node `link` joining two particles by a hard distance (compliance 0): `pair` picks them from
/// `input` by `index_pairs` (SubsetMultiMapping).
fn hard_link(input: &str, index_pairs: &str) -> String {
    format!(
        r#"<Node name="link">
    <MechanicalObject name="pair"/>
    <SubsetMultiMapping input="{input}" output="@pair" indexPairs="{index_pairs}"/>
    <Node name="link_d">
      <MechanicalObject template="Vec1d" name="link_ext"/>
      <EdgeSetTopologyContainer edges="0 1"/>
      <DistanceMapping/>
      <UniformCompliance template="Vec1d" compliance="0"/>
    </Node>
  </Node>"#
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

// ----- equivalences (issue acceptance 3) ---------------------------------------------------------

/// A chain of `n` links of length 0.1 (`n + 1` particles of mass 0.1) hanging from its first
/// particle, released from a line tilted by 0.05 rad, each link a distance constraint of the
/// given compliance.
fn chain(n: usize, solver: &str, stabilization: &str, compliance: &str, value: &str) -> String {
    // Hanging from its first particle, tilted by 0.05 rad from the vertical.
    let (sa, ca) = (0.05f64.sin(), 0.05f64.cos());
    let pos: Vec<String> = (0..=n).map(|i| format!("{} {} 0", i as f64 * 0.1 * sa, -(i as f64) * 0.1 * ca)).collect();
    let edges: Vec<String> = (0..n).map(|i| format!("{} {}", i, i + 1)).collect();
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <CompliantImplicitSolver stabilization="{stabilization}"/>
  {solver}
  <MechanicalObject name="chain" position="{}"/>
  <UniformMass vertexMass="0.1"/>
  <FixedConstraint indices="0"/>
  <Node name="links">
    <MechanicalObject template="Vec1d" name="lengths"/>
    <EdgeSetTopologyContainer edges="{}"/>
    <DistanceMapping/>
    <UniformCompliance template="Vec1d" compliance="{compliance}"/>
    {value}
  </Node>
</Node>"#,
        pos.join("  "),
        edges.join("  ")
    )
}

/// The largest |length − 0.1| of the chain's links.
fn worst_link(s: &Scene) -> f64 {
    x(s, "chain")
        .chunks(3)
        .collect::<Vec<_>>()
        .windows(2)
        .map(|w| {
            let d = [w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]];
            ((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() - 0.1).abs()
        })
        .fold(0.0, f64::max)
}

#[test]
fn hanging_chain_of_20_hard_links_keeps_its_lengths_with_ldlt() {
    // Post-stabilization re-assembled at the end of the step: the lengths hold to round-off.
    let mut s = load("chain20_ldlt", &chain(20, "<LDLTSolver/>", "post-stabilization assembly", "0", ""));
    let mut kkt = load("chain20_ldlt_kkt", &chain(20, r#"<LDLTSolver schur="false"/>"#, "post-stabilization assembly", "0", ""));
    let mut worst = 0.0f64;
    for _ in 0..1000 {
        step(&mut s);
        step(&mut kkt);
        worst = worst.max(worst_link(&s)).max(worst_link(&kkt));
    }
    assert!(worst < 1e-8, "worst length error {worst:e}");
    // The chain swung: the tip moved by centimetres.
    let tip = x(&s, "chain")[60];
    assert!((tip - 20.0 * 0.1 * 0.05f64.sin()).abs() > 1e-2, "tip x {tip}");
    // Schur complement and full KKT factorization agree.
    let (a, b) = (x(&s, "chain"), x(&kkt, "chain"));
    let d = a.iter().zip(&b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
    assert!(d < 1e-9, "Schur vs KKT: {d:e}");
}

#[test]
fn compliance_to_zero_converges_to_the_hard_constraint() {
    // The same elastic value (ψ = −φ/h) for every compliance, hard included.
    let value = "<ConstraintValue/>";
    let run = |c: &str| {
        let mut s = load(&format!("chain_c{c}"), &chain(5, "<LDLTSolver/>", "pre-stabilization", c, value));
        let mut traj = Vec::new();
        for _ in 0..1000 {
            step(&mut s);
            traj.extend(x(&s, "chain"));
        }
        (traj, worst_link(&s))
    };
    let (hard, hard_err) = run("0");
    let mut last = f64::INFINITY;
    for c in ["1e-6", "1e-9", "1e-12"] {
        let (t, err) = run(c);
        let d = t.iter().zip(&hard).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        assert!(d < last, "c = {c}: {d:e} does not shrink (previous {last:e})");
        last = d;
        if c == "1e-12" {
            assert!(d < 1e-9, "c = 1e-12 departs from the hard constraint by {d:e}");
            assert!((err - hard_err).abs() < 1e-9, "{err:e} vs {hard_err:e}");
        }
    }
}

#[test]
fn stiff_springs_and_compliances_of_one_over_k_agree() {
    // A vertical chain stretched beyond its rest lengths, oscillating along y under gravity:
    // SpringForceField of stiffness k against distance constraints of compliance 1/k.
    let n = 6;
    let pos: Vec<String> = (0..=n).map(|i| format!("0 {} 0", -(i as f64) * 0.12)).collect();
    let springs: Vec<String> = (0..n).map(|i| format!("{} {} 1000 0 0.1", i, i + 1)).collect();
    let edges: Vec<String> = (0..n).map(|i| format!("{} {}", i, i + 1)).collect();
    let head = |body: &str| {
        format!(
            r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <CompliantImplicitSolver implicitVelocity="0.5"/>
  <LDLTSolver/>
  <MechanicalObject name="chain" position="{}"/>
  <UniformMass vertexMass="0.1"/>
  <FixedConstraint indices="0"/>
  {body}
</Node>"#,
            pos.join("  ")
        )
    };
    let stiff = head(&format!(r#"<SpringForceField spring="{}"/>"#, springs.join("  ")));
    let compliant = head(&format!(
        r#"<Node name="links"><MechanicalObject template="Vec1d" name="l"/><EdgeSetTopologyContainer edges="{}"/><DistanceMapping restLengths="{}"/><UniformCompliance template="Vec1d" compliance="1e-3"/></Node>"#,
        edges.join("  "),
        vec!["0.1"; n].join(" ")
    ));
    let (mut a, mut b) = (load("springs_k", &stiff), load("springs_c", &compliant));
    let (mut worst, mut travel) = (0.0f64, 0.0f64);
    let y0 = x(&a, "chain")[3 * n + 1];
    for _ in 0..1000 {
        step(&mut a);
        step(&mut b);
        let (p, q) = (x(&a, "chain"), x(&b, "chain"));
        worst = p.iter().zip(&q).map(|(u, w)| (u - w).abs()).fold(worst, f64::max);
        travel = travel.max((p[3 * n + 1] - y0).abs());
    }
    assert!(worst < 1e-10, "trajectories differ by {worst:e}");
    assert!(travel > 1e-2, "the chain hardly moved ({travel:e})");
}

// ----- set-ups that cannot work (issue acceptance 5) ---------------------------------------------

/// Loads `text` and steps until an error; returns it (load errors included).
fn first_error(name: &str, text: &str) -> String {
    let path = temp_scene(name, text);
    let mut s = match settee::load(&path, &settee::factory(), &[]) {
        Ok(l) => l.scene,
        Err(f) => return f.first_error(),
    };
    for _ in 0..5 {
        let dt = s.root().context.dt;
        if let Err(e) = animate(&mut s, dt) {
            return e.to_string();
        }
    }
    panic!("{name}: no error")
}

#[test]
fn a_compliance_without_a_path_to_a_solved_state_is_refused_at_its_line() {
    // The constraint's state is mapped from an object no solver integrates.
    let text = r#"<Node name="root" dt="0.01" gravity="0 -1 0">
  <Node name="obstacle">
    <MechanicalObject name="wall" position="0 0 0  1 0 0"/>
  </Node>
  <Node name="solved">
    <CompliantImplicitSolver/>
    <LDLTSolver/>
    <MechanicalObject name="body" position="0 1 0"/>
    <UniformMass vertexMass="1"/>
    <Node name="link">
      <MechanicalObject template="Vec1d" name="d"/>
      <EdgeSetTopologyContainer edges="0 1"/>
      <DistanceMapping input="@/obstacle/wall" output="@d"/>
      <UniformCompliance template="Vec1d" compliance="0"/>
    </Node>
  </Node>
</Node>"#;
    let e = first_error("no_path", text);
    assert!(e.contains("no_path.scn:14:7") && e.contains("UniformCompliance") && e.contains("no mechanical mapping connects"), "{e}");
    assert!(e.contains("hint:"), "{e}");
}

#[test]
fn a_singular_kkt_system_is_refused_at_the_solver() {
    // The same hard constraint twice: Σ = J A⁻¹ Jᵀ is singular without regularization.
    let text = r#"<Node name="root" dt="0.01" gravity="0 -1 0">
  <CompliantImplicitSolver/>
  <LDLTSolver/>
  <MechanicalObject name="p" position="0 0 0  1 0 0"/>
  <UniformMass vertexMass="1"/>
  <FixedConstraint indices="0"/>
  <Node name="links">
    <MechanicalObject template="Vec1d" name="d"/>
    <EdgeSetTopologyContainer edges="0 1  0 1"/>
    <DistanceMapping/>
    <UniformCompliance template="Vec1d" compliance="0"/>
  </Node>
</Node>"#;
    let e = first_error("singular", text);
    assert!(e.contains("singular.scn:3:3") && e.contains("LDLTSolver") && e.contains("singular"), "{e}");
    // With a compliance the same system is regular and runs.
    let ok = text.replace(r#"compliance="0""#, r#"compliance="1e-6""#);
    let mut s = load("singular_regularised", &ok);
    for _ in 0..5 {
        step(&mut s);
    }
}

#[test]
fn a_compliant_solver_without_kkt_solver_is_refused_at_init() {
    let text = r#"<Node name="root" dt="0.01">
  <CompliantImplicitSolver/>
  <MechanicalObject position="0 0 0"/>
  <UniformMass vertexMass="1"/>
</Node>"#;
    let e = first_error("no_kkt", text);
    assert!(e.contains("no_kkt.scn:2:3") && e.contains("no KKT solver") && e.contains("LDLTSolver"), "{e}");
}

#[test]
fn a_uniform_mass_without_mass_takes_sofa_2021s_total_mass_of_one_with_a_warning() {
    // The Compliant plugin's scenes (SOFA v21.06) rely on it: CompliantCloth, stops, …
    let text = r#"<Node name="root" dt="0.01" gravity="0 -10 0">
  <EulerExplicitSolver/>
  <MechanicalObject name="p" position="0 0 0  1 0 0"/>
  <UniformMass/>
</Node>"#;
    let mut s = load("mass_default", text);
    let w = s.messages.iter().find(|m| m.message.contains("totalMass = 1")).expect("a warning");
    assert!(w.to_string().contains("mass_default.scn:4:3"), "{w}");
    step(&mut s);
    // Free fall: the mass does not change the motion, but it is there (gravity acts).
    assert!(close(v(&s, "p")[1], -0.1, 1e-12));
    let e = s.components.values().find(|e| e.class.name == "UniformMass").unwrap();
    assert_eq!(e.data.field("vertexMass").map(|f| f.value.clone()), Some(settee_core::data::Value::Reals { arity: 1, v: vec![0.5] }));
}

// ----- §14.3 with multi-mappings and rigid bodies --------------------------------------------------

#[test]
fn assembly_constrained_hard_string() {
    // Particle 0 held at the origin by a distance-to-target constraint instead of a projection.
    let target = r#"<Node name="anchor">
      <MechanicalObject template="Vec1d" name="anchor_d"/>
      <DistanceFromTargetMapping indices="0" targetPositions="0 0 0" restLengths="0"/>
      <UniformCompliance template="Vec1d" compliance="0"/>
    </Node>"#;
    let body = hard_string("s", 4, 0.0, target, "");
    let mut s = load("constrained_string", &assembly_scene("10 0 0", &body));
    step(&mut s);
    let sys = system(&s);
    assert_eq!((sys.n, sys.m), (4, 12));
    assert!(sys.free.iter().all(|&f| f));
    let last: Vec<f64> = (0..12).map(|c| sys.j.get(3, c)).collect();
    let mut want = vec![0.0; 12];
    want[0] = 1.0;
    assert_all_close(&last, &want, "J's last row");
    let (lambda, vel) = lambda_and_v(&s, &sys);
    assert_all_close(&lambda, &[-30.0, -20.0, -10.0, -40.0], "λ");
    assert_all_close(&vel, &[0.0; 12], "v");
}

#[test]
fn assembly_externally_constrained_hard_string() {
    // Particle 0 linked to a particle outside the solver's sub-tree: that parent is ignored.
    let text = format!(
        r#"<Node name="root" dt="1" gravity="10 0 0">
  <Node name="outside">
    <MechanicalObject name="ext" position="-1 0 0"/>
  </Node>
  <Node name="solved">
    <CompliantImplicitSolver implicitVelocity="1" implicitPosition="1"/>
    <LDLTSolver/>
    <LDLTResponse/>
    {}
    {}
  </Node>
</Node>"#,
        hard_string("s", 2, 0.0, "", ""),
        hard_link("@/outside/ext @/solved/s/s", "0 0  1 0")
    );
    let mut s = load("external_string", &text);
    step(&mut s);
    let sys = system(&s);
    assert_eq!((sys.n, sys.m), (2, 6));
    let last: Vec<f64> = (0..6).map(|c| sys.j.get(1, c)).collect();
    assert_all_close(&last, &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], "J's last row");
    let (lambda, _) = lambda_and_v(&s, &sys);
    assert_all_close(&lambda, &[-10.0, -20.0], "λ");
}

#[test]
fn assembly_attached_connected_hard_strings() {
    let body = format!(
        "{}\n  {}\n  {}",
        hard_string("a", 2, 0.0, r#"<FixedConstraint indices="0"/>"#, ""),
        hard_string("b", 2, 2.0, "", ""),
        hard_link("@/a/a @/b/b", "0 1  1 0")
    );
    let mut s = load("connected_strings", &assembly_scene("10 0 0", &body));
    step(&mut s);
    let sys = system(&s);
    let id12: Vec<f64> = (0..144).map(|k| if k % 13 == 0 { 1.0 } else { 0.0 }).collect();
    assert_all_close(&dense(&sys.h), &id12, "M");
    assert_eq!(sys.free, (0..12).map(|i| i >= 3).collect::<Vec<_>>(), "P");
    let (lambda, _) = lambda_and_v(&s, &sys);
    assert_all_close(&lambda, &[-30.0, -10.0, -20.0], "λ");
}

#[test]
fn assembly_rigid_connected_to_string() {
    let text = format!(
        r#"<Node name="root" dt="1" gravity="10 0 0">
  <CompliantImplicitSolver implicitVelocity="1" implicitPosition="1"/>
  <LDLTSolver/>
  <LDLTResponse/>
  <Node name="rigid">
    <MechanicalObject template="Rigid3d" name="rigid" position="2 0 0  0 0 0 1"/>
    <UniformMass template="Rigid3d" vertexMass="1 1  1 0 0  0 1 0  0 0 1"/>
    <Node name="point">
      <MechanicalObject name="point" position="0 0 0"/>
      <RigidMapping/>
    </Node>
  </Node>
  <Node name="s">
    <MechanicalObject name="s" position="0 0 0  1 0 0"/>
    <UniformMass vertexMass="1"/>
    <FixedConstraint indices="0"/>
    <Node name="s_d">
      <MechanicalObject template="Vec1d" name="s_ext"/>
      <EdgeSetTopologyContainer edges="0 1"/>
      <DistanceMapping/>
      <UniformCompliance template="Vec1d" compliance="0"/>
    </Node>
  </Node>
  {}
</Node>"#,
        hard_link("@/s/s @/rigid/point/point", "0 1  1 0")
    );
    let mut s = load("rigid_string", &text);
    step(&mut s);
    let sys = system(&s);
    assert_eq!((sys.m, sys.n), (12, 2));
    let id12: Vec<f64> = (0..144).map(|k| if k % 13 == 0 { 1.0 } else { 0.0 }).collect();
    assert_all_close(&dense(&sys.h), &id12, "M");
    assert_eq!(sys.free, (0..12).map(|i| !(6..9).contains(&i)).collect::<Vec<_>>(), "P");
    let mut j = vec![0.0; 24];
    j[6] = -1.0;
    j[9] = 1.0;
    j[12 + 9] = -1.0;
    j[12] = 1.0;
    assert_all_close(&dense(&sys.j), &j, "J");
    let (lambda, _) = lambda_and_v(&s, &sys);
    assert_all_close(&lambda, &[-20.0, -10.0], "λ");
}

/// §14.3 testDecomposedString: two unit masses at (0,0,0) and (2,0,0), rest length 1, stiffness
/// 1e4 as a stiffness; five ways to write it give the same H.
#[test]
fn assembly_decomposed_string_gives_one_h() {
    let head = |body: &str| {
        format!(
            r#"<Node name="root" dt="1" gravity="0 0 0">
  <CompliantImplicitSolver implicitVelocity="1" implicitPosition="1"/>
  <LDLTSolver/>
  <LDLTResponse/>
  {body}
</Node>"#
        )
    };
    let two_states = r#"<Node name="p0"><MechanicalObject name="p0" position="0 0 0"/><UniformMass vertexMass="1"/></Node>
  <Node name="p1"><MechanicalObject name="p1" position="2 0 0"/><UniformMass vertexMass="1"/></Node>"#;
    let one_state = r#"<MechanicalObject name="p" position="0 0 0  2 0 0"/><UniformMass vertexMass="1"/>"#;
    let stiffness = r#"<UniformCompliance template="Vec1d" compliance="1e-4" isCompliance="0"/>"#;
    let variants = [
        format!(
            r#"{two_states}
  <Node name="pair"><MechanicalObject name="pair"/><SubsetMultiMapping input="@/p0/p0 @/p1/p1" output="@pair" indexPairs="0 0  1 0"/>
    <Node name="d"><MechanicalObject template="Vec1d"/><EdgeSetTopologyContainer edges="0 1"/><DistanceMapping restLengths="1"/>{stiffness}</Node></Node>"#
        ),
        format!(
            r#"{two_states}
  <Node name="d"><MechanicalObject template="Vec1d"/><EdgeSetTopologyContainer edges="0 1"/>
    <DistanceMultiMapping input="@/p0/p0 @/p1/p1" output="@." indexPairs="0 0  1 0" restLengths="1"/>{stiffness}</Node>"#
        ),
        format!(r#"{one_state}<SpringForceField spring="0 1 1e4 0 1"/>"#),
        format!(r#"{two_states}<SpringForceField object1="@p0/p0" object2="@p1/p1" spring="0 0 1e4 0 1"/>"#),
        format!(
            r#"{one_state}
  <Node name="d"><MechanicalObject template="Vec1d"/><EdgeSetTopologyContainer edges="0 1"/><DistanceMapping restLengths="1"/>{stiffness}</Node>"#
        ),
    ];
    let k = [1e4, 5000.0, 5000.0];
    let mut want = vec![0.0; 36];
    for p in 0..2 {
        for q in 0..2 {
            for c in 0..3 {
                let v = if p == q { k[c] } else { -k[c] };
                want[(3 * p + c) * 6 + 3 * q + c] = v + if p == q { 1.0 } else { 0.0 };
            }
        }
    }
    for (i, body) in variants.iter().enumerate() {
        let mut s = load(&format!("decomposed{i}"), &head(body));
        step(&mut s);
        let h = dense(&system(&s).h);
        assert_eq!(h.len(), 36, "variant {i}");
        for (a, b) in h.iter().zip(&want) {
            assert!(close(*a, *b, 100.0 * f64::EPSILON * 1e4), "variant {i}: H = {h:?}");
        }
    }
}

#[test]
fn empty_mapped_states_are_skipped() {
    // §14.1 EmptyMState: two mapped Vec1 states of size 0 (a compliance and a stiffness).
    let text = r#"<Node name="root" dt="0.1" gravity="0 -1 0">
  <CompliantImplicitSolver/>
  <LDLTSolver/>
  <MechanicalObject name="p" position="0 0 0  1 0 0"/>
  <UniformMass vertexMass="1"/>
  <Node name="c"><MechanicalObject template="Vec1d" name="c"/><DistanceFromTargetMapping/><UniformCompliance template="Vec1d" compliance="0"/></Node>
  <Node name="k"><MechanicalObject template="Vec1d" name="k"/><DistanceFromTargetMapping/><UniformCompliance template="Vec1d" compliance="1e-3" isCompliance="0"/></Node>
</Node>"#;
    let mut s = load("empty_mstate", text);
    for _ in 0..3 {
        step(&mut s);
    }
    assert!(!s.has_errors(), "{:?}", s.messages);
    assert_eq!(system(&s).n, 0);
    assert!(close(v(&s, "p")[1], -0.3, 1e-12), "{:?}", v(&s, "p"));
}

#[test]
fn a_response_written_after_its_direct_solver_is_used() {
    // DiagonalResponse approximates A⁻¹ by diag(A)⁻¹: with a stiff spring coupling the two
    // particles the result differs from the exact LDLᵀ response, which shows it was read.
    let scene = |kkt: &str| {
        format!(
            r#"<Node name="root" dt="0.01" gravity="0 -10 0">
  <CompliantImplicitSolver/>
  {kkt}
  <MechanicalObject name="p" position="0 0 0  1 0 0"/>
  <UniformMass vertexMass="1"/>
  <SpringForceField spring="0 1 1000 0 1"/>
  <Node name="hold"><MechanicalObject template="Vec1d"/><DistanceFromTargetMapping indices="0" targetPositions="0 0 0" restLengths="0"/><UniformCompliance template="Vec1d" compliance="0"/></Node>
</Node>"#
        )
    };
    let mut exact = load("resp_exact", &scene("<LDLTSolver/>"));
    let mut after = load("resp_after", &scene("<LDLTSolver/><DiagonalResponse/>"));
    let mut before = load("resp_before", &scene("<DiagonalResponse/><LDLTSolver/>"));
    let mut ldlt_after = load("resp_ldlt_after", &scene("<LDLTSolver/><LDLTResponse/>"));
    for _ in 0..3 {
        step(&mut exact);
        step(&mut after);
        step(&mut before);
        step(&mut ldlt_after);
    }
    let (e, a, b) = (x(&exact, "p"), x(&after, "p"), x(&before, "p"));
    assert_eq!(x(&ldlt_after, "p"), e, "an LDLTResponse after the solver is the default exact response");
    assert_eq!(a, b, "the response's place in the node does not matter");
    assert!(e.iter().zip(&a).any(|(p, q)| (p - q).abs() > 1e-9), "{e:?} vs {a:?}");
}

// ----- §14.6 scene tests (Python in the plugin, written here directly) ---------------------------

#[test]
fn uniform_compliance_under_an_identity_mapping_follows_the_implicit_recurrence() {
    // scene_UniformCompliance.py: a unit mass at (−1, 0, 0) pulled to the origin by a compliance
    // of 1e-3 on its own position; MINRES (100 iterations, precision 0) on the KKT system, no
    // stabilization, no warm start. After t ≥ 1, every step: v⁺ = (m v − h k q)/(m + h² k).
    let text = r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <CompliantImplicitSolver stabilization="no stabilization" warm_start="false"/>
  <MinresSolver iterations="100" precision="0"/>
  <Node name="p">
    <MechanicalObject name="p" position="-1 0 0"/>
    <UniformMass vertexMass="1"/>
    <Node name="sub">
      <MechanicalObject name="sub" position="0 0 0"/>
      <IdentityMapping template="Vec3d,Vec3d"/>
      <UniformCompliance template="Vec3d" compliance="1e-3" damping="0"/>
    </Node>
  </Node>
</Node>"#;
    let mut s = load("uniform_compliance_py", text);
    let (m, k, h) = (1.0, 1e3, 0.01);
    let mut checked = 0;
    let mut moved = 0.0f64;
    for _ in 0..200 {
        let (v0, q0) = (v(&s, "p"), x(&s, "p"));
        step(&mut s);
        moved = moved.max((x(&s, "p")[0] + 1.0).abs());
        if s.root().context.time < 1.0 {
            continue;
        }
        let v1 = v(&s, "p");
        let err = (0..3).map(|c| ((m * v0[c] - h * k * q0[c]) / (m + h * h * k) - v1[c]).powi(2)).sum::<f64>().sqrt();
        assert!(err < 1e-14, "t = {}: velocity error {err:e}", s.root().context.time);
        checked += 1;
    }
    assert!(checked > 90 && moved > 0.5, "{checked} steps checked, moved {moved}");
}

#[test]
fn constraint_forces_propagate_to_a_rigid_joint_and_its_body() {
    // After scene_lambda_propagation.py, with the two unit masses hanging from the body by hard
    // attachments instead of lying on it through contacts: a unit rigid body held to a fixed
    // ground frame by a hard RigidJointMapping joint, g = (0, −1, 0), constraint_forces =
    // propagate, SequentialSolver (200 iterations) + DiagonalResponse. Once settled, the joint
    // carries the weight of all three (0, 3, 0, 0, 0, 0) and the net constraint force on the body
    // balances its own weight: (0, 1, 0, 0, 0, 0).
    let text = r#"<Node name="root" dt="0.01" gravity="0 -1 0">
  <CompliantImplicitSolver constraint_forces="propagate" warm_start="false"/>
  <SequentialSolver iterations="200" precision="0"/>
  <DiagonalResponse/>
  <Node name="ground">
    <MechanicalObject template="Rigid3d" name="ground" position="0 0 0  0 0 0 1"/>
    <UniformMass template="Rigid3d" vertexMass="1 1  1 0 0  0 1 0  0 0 1"/>
    <FixedConstraint indices="0"/>
  </Node>
  <Node name="body">
    <MechanicalObject template="Rigid3d" name="body" position="0 0 0  0 0 0 1"/>
    <UniformMass template="Rigid3d" vertexMass="1 1  1 0 0  0 1 0  0 0 1"/>
    <Node name="anchors">
      <MechanicalObject name="anchors" position="-1 0 0  1 0 0"/>
      <RigidMapping/>
    </Node>
  </Node>
  <Node name="frames">
    <MechanicalObject template="Rigid3d" name="frames"/>
    <SubsetMultiMapping template="Rigid3d,Rigid3d" input="@/ground/ground @/body/body" output="@frames" indexPairs="0 0  1 0"/>
    <Node name="joint">
      <MechanicalObject template="Vec6d" name="joint"/>
      <RigidJointMapping template="Rigid3d,Vec6d" pairs="0 1"/>
      <UniformCompliance template="Vec6d" compliance="0"/>
    </Node>
  </Node>
  <Node name="masses">
    <MechanicalObject name="masses" position="-1 0 0  1 0 0"/>
    <UniformMass vertexMass="1"/>
  </Node>
  <Node name="attach">
    <MechanicalObject name="gaps"/>
    <DifferenceMultiMapping input="@/body/anchors/anchors @/masses/masses" output="@gaps" pairs="0 0  1 1"/>
    <UniformCompliance compliance="0"/>
  </Node>
</Node>"#;
    let mut s = load("lambda_propagation", text);
    let mut checked = 0;
    for _ in 0..150 {
        step(&mut s);
        if s.root().context.time <= 1.0 {
            continue;
        }
        let joint = state(&s, "joint").read(VecId::FORCE).to_vec();
        let body = state(&s, "body").read(VecId::FORCE).to_vec();
        assert_eq!(joint.len(), 6);
        let want_joint = [0.0, 3.0, 0.0, 0.0, 0.0, 0.0];
        let want_body = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        for c in 0..6 {
            assert!(close(joint[c], want_joint[c], 1e-10), "joint force {joint:?}");
            assert!(close(body[c], want_body[c], 1e-10), "net force on the body {body:?}");
        }
        checked += 1;
    }
    assert!(checked > 40);
}

#[test]
fn hanging_chain_of_20_hard_links_keeps_its_lengths_with_the_sequential_solver() {
    // Projected Gauss-Seidel instead of a factorization: the lengths hold to what its stopping
    // test leaves (sqrt(Σ‖δλ‖²)/n ≤ precision), and the motion follows LDLᵀ's. Gauss-Seidel
    // converges slowly along a chain (500 iterations leave 2e-7 on the lengths), hence 5,000.
    let seq = r#"<SequentialSolver iterations="5000" precision="1e-14"/><LDLTResponse/>"#;
    let mut s = load("chain20_seq", &chain(20, seq, "post-stabilization assembly", "0", ""));
    let mut d = load("chain20_seq_ref", &chain(20, "<LDLTSolver/>", "post-stabilization assembly", "0", ""));
    let (mut worst, mut apart) = (0.0f64, 0.0f64);
    for _ in 0..1000 {
        step(&mut s);
        step(&mut d);
        worst = worst.max(worst_link(&s));
        apart = x(&s, "chain").iter().zip(x(&d, "chain")).map(|(p, q)| (p - q).abs()).fold(apart, f64::max);
    }
    assert!(worst < 1e-8, "worst length error {worst:e}");
    assert!(apart < 1e-6, "SequentialSolver departs from LDLᵀ by {apart:e}");
}
