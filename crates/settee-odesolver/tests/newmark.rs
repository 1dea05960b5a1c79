//! NewmarkImplicitSolver on a linear oscillator, against the closed forms
//! of their discrete maps.

use settee_core::simulation::{animate, init_root};
use settee_core::testing::add;
use settee_core::{Factory, Scene, StateId, VecId};

fn factory() -> Factory {
    settee_statecontainer::factory_with(&[
        settee_mass::register,
        settee_projective::register,
        settee_animationloop::register,
        settee_spring::register,
        settee_linearsolver::register,
        settee_odesolver::register,
    ])
}

const K: f64 = 100.0;
const M: f64 = 1.0;
const L: f64 = 1.0;
const A: f64 = 0.2;

/// A fixed particle at the origin and a free one at (L + A, 0, 0) on a spring of stiffness `K`
/// and rest length `L`, no gravity: along x, q = x − L oscillates at ω = √(K/M).
fn oscillator(solver: &str, attrs: &[(&str, &str)], h: f64) -> (Scene, StateId) {
    let f = factory();
    let mut s = Scene::new("root");
    s.node_mut(Scene::ROOT).context.gravity = [0.0; 3];
    s.node_mut(Scene::ROOT).context.dt = h;
    add(&mut s, &f, Scene::ROOT, solver, attrs);
    add(&mut s, &f, Scene::ROOT, "SparseLDLSolver", &[]);
    let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", &format!("0 0 0  {} 0 0", L + A))]);
    add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", &M.to_string())]);
    add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0")]);
    add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", &format!("0 1 {K} 0 {L}"))]);
    init_root(&mut s, &f).unwrap();
    let st = s.state_of(mo).unwrap();
    (s, st)
}

/// q and v of the free particle.
fn qv(s: &Scene, st: StateId) -> (f64, f64) {
    (s.vec(st, VecId::POSITION)[3] - L, s.vec(st, VecId::VELOCITY)[3])
}

fn energy(q: f64, v: f64) -> f64 {
    0.5 * M * v * v + 0.5 * K * q * q
}

#[test]
fn newmark_average_acceleration_is_the_trapezoidal_rule() {
    // γ = ½, β = ¼ on a linear system is the trapezoidal rule: each step rotates the mode by
    // θ = 2·atan(ωh/2), so q_n = A cos(nθ), v_n = −Aω sin(nθ), and the energy is conserved.
    let h = 0.01;
    let omega = (K / M).sqrt();
    let theta = 2.0 * (omega * h / 2.0).atan();
    let (mut s, st) = oscillator("NewmarkImplicitSolver", &[], h);
    let e0 = energy(A, 0.0);
    for n in 1..=1000 {
        animate(&mut s, h).unwrap();
        let (q, v) = qv(&s, st);
        let nt = n as f64 * theta;
        assert!((q - A * nt.cos()).abs() < 1e-11, "step {n}: q = {q} vs {}", A * nt.cos());
        assert!((v + A * omega * nt.sin()).abs() < 1e-10, "step {n}: v = {v} vs {}", -A * omega * nt.sin());
        assert!((energy(q, v) - e0).abs() < 1e-12 * e0, "step {n}: energy {} vs {e0}", energy(q, v));
    }
    // The fixed particle and the transverse coordinates stay.
    let x = s.vec(st, VecId::POSITION);
    assert_eq!((&x[..3], x[4], x[5]), (&[0.0, 0.0, 0.0][..], 0.0, 0.0));
}

#[test]
fn newmark_rayleigh_mass_damping_dissipates_energy() {
    let h = 0.01;
    let (mut s, st) = oscillator("NewmarkImplicitSolver", &[("rayleighMass", "0.5")], h);
    let mut e = energy(A, 0.0);
    for n in 1..=300 {
        animate(&mut s, h).unwrap();
        let (q, v) = qv(&s, st);
        let en = energy(q, v);
        assert!(en < e, "step {n}: {en} ≥ {e}");
        e = en;
    }
    // M q'' = −K q − r_M M q': the energy decays as exp(−r_M t), by exp(−1.5) after 3 s.
    let expected = energy(A, 0.0) * (-0.5 * 3.0f64).exp();
    assert!((e / expected - 1.0).abs() < 0.05, "{e} vs {expected}");
}

#[test]
fn newmark_fox_goodwin_has_second_order_error() {
    // γ = ½, β = 1/12 (Fox-Goodwin): a different discrete map, at least second order: halving h
    // divides the error at t = 1 by 4 or more.
    let omega = (K / M).sqrt();
    let mut errors = Vec::new();
    for steps in [200usize, 400, 800] {
        let h = 1.0 / steps as f64;
        let (mut s, st) = oscillator("NewmarkImplicitSolver", &[("beta", "0.0833333333333333")], h);
        for _ in 0..steps {
            animate(&mut s, h).unwrap();
        }
        errors.push((qv(&s, st).0 - A * omega.cos()).abs());
    }
    for w in errors.windows(2) {
        assert!(w[0] / w[1] > 3.8, "{errors:?}");
    }
}
