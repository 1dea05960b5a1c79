//! RungeKutta2Solver on a linear oscillator, against the closed form of its discrete map, and
//! under constant acceleration.

use settee_core::simulation::{animate, init_root};
use settee_core::testing::add;
use settee_core::{Factory, Scene, StateId, VecId, VecKind};

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

/// `(re, im)` complex power.
fn cpow(z: (f64, f64), n: usize) -> (f64, f64) {
    let mut r = (1.0, 0.0);
    for _ in 0..n {
        r = (r.0 * z.0 - r.1 * z.1, r.0 * z.1 + r.1 * z.0);
    }
    r
}

#[test]
fn rk2_is_the_midpoint_method() {
    // On y' = Ay the midpoint method multiplies the modes by R = 1 + z + z²/2, z = iωh:
    // q_n = A·Re(Rⁿ), v_n = −ωA·Im(Rⁿ).
    let omega = (K / M).sqrt();
    let mut errors = Vec::new();
    for steps in [400usize, 800, 1600] {
        let h = 1.0 / steps as f64;
        let (mut s, st) = oscillator("RungeKutta2Solver", &[], h);
        for _ in 0..steps {
            animate(&mut s, h).unwrap();
        }
        let (q, v) = qv(&s, st);
        let th = omega * h;
        let rn = cpow((1.0 - th * th / 2.0, th), steps);
        assert!((q - A * rn.0).abs() < 1e-12, "h = {h}: {q} vs {}", A * rn.0);
        assert!((v + omega * A * rn.1).abs() < 1e-11, "h = {h}: {v} vs {}", -omega * A * rn.1);
        errors.push((q - A * omega.cos()).abs());
    }
    // Global error O(h²).
    for w in errors.windows(2) {
        let ratio = w[0] / w[1];
        assert!((3.8..4.2).contains(&ratio), "{ratio} ({errors:?})");
    }
}

#[test]
fn rk2_is_exact_under_constant_acceleration_and_frees_its_temporaries() {
    let h = 0.05;
    let f = factory();
    let mut s = Scene::new("root");
    let g = [0.0, -9.81, 0.0];
    s.node_mut(Scene::ROOT).context.gravity = g;
    add(&mut s, &f, Scene::ROOT, "RungeKutta2Solver", &[]);
    let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 1 0"), ("velocity", "1 2 0.5")]);
    add(&mut s, &f, Scene::ROOT, "UniformMass", &[("totalMass", "2")]);
    init_root(&mut s, &f).unwrap();
    let st = s.state_of(mo).unwrap();
    for n in 1..=40 {
        animate(&mut s, h).unwrap();
        let t = n as f64 * h;
        let x = s.vec(st, VecId::POSITION);
        let expected = [t, 1.0 + 2.0 * t + 0.5 * g[1] * t * t, 0.5 * t];
        for c in 0..3 {
            assert!((x[c] - expected[c]).abs() < 1e-12, "step {n}: {x:?} vs {expected:?}");
        }
        assert!((s.vec(st, VecId::VELOCITY)[1] - (2.0 + g[1] * t)).abs() < 1e-12);
    }
    let ms = s.store.get(st);
    for i in VecId::FIRST_DYNAMIC_DERIV..VecId::FIRST_DYNAMIC_DERIV + 4 {
        assert!(!ms.is_set(VecId { kind: VecKind::Deriv, index: i }), "deriv {i} still set");
    }
    assert!(!ms.is_set(VecId::coord(VecId::FIRST_DYNAMIC_COORD)));
}
