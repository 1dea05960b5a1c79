//! VariationalSymplecticSolver on a linear oscillator and on a free two-body system.

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
/// and rest length `L`, no gravity.
fn oscillator(attrs: &[(&str, &str)], linear_solver: &str, h: f64) -> (Scene, StateId) {
    let f = factory();
    let mut s = Scene::new("root");
    s.node_mut(Scene::ROOT).context.gravity = [0.0; 3];
    s.node_mut(Scene::ROOT).context.dt = h;
    add(&mut s, &f, Scene::ROOT, "VariationalSymplecticSolver", attrs);
    add(&mut s, &f, Scene::ROOT, linear_solver, &[]);
    let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", &format!("0 0 0  {} 0 0", L + A))]);
    add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", &M.to_string())]);
    add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0")]);
    add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", &format!("0 1 {K} 0 {L}"))]);
    init_root(&mut s, &f).unwrap();
    let st = s.state_of(mo).unwrap();
    (s, st)
}

/// On a linear system the scheme is the implicit midpoint rule in (q, p): each step rotates the
/// mode by θ = 2·atan(ωh/2), so q_n = A cos(nθ) and p_n = −AMω sin(nθ); the stored velocity is
/// the step's mean momentum over M, (p_{n−1} + p_n)/2M. The Newton loop converges in two
/// iterations (the second changes nothing).
#[test]
fn linear_oscillator_is_the_midpoint_rule() {
    let h = 0.01;
    let omega = (K / M).sqrt();
    let theta = 2.0 * (omega * h / 2.0).atan();
    for linear_solver in ["SparseLDLSolver", "SVDLinearSolver"] {
        let (mut s, st) = oscillator(&[("newtonError", "1e-12")], linear_solver, h);
        for n in 1..=500 {
            animate(&mut s, h).unwrap();
            let nf = n as f64;
            let q = s.vec(st, VecId::POSITION)[3] - L;
            let v = s.vec(st, VecId::VELOCITY)[3];
            let vq = -A * omega * (((nf - 1.0) * theta).sin() + (nf * theta).sin()) / 2.0;
            assert!((q - A * (nf * theta).cos()).abs() < 1e-10, "{linear_solver} step {n}: q = {q}");
            assert!((v - vq).abs() < 1e-9, "{linear_solver} step {n}: v = {v} vs {vq}");
            assert_eq!(&s.vec(st, VecId::POSITION)[..3], &[0.0; 3]);
        }
    }
}

/// The explicit variant on the same oscillator: p_{n+1} = p_n + h f(q_n), v = p_{n+1}/M,
/// q_{n+1} = q_n + h v (symplectic Euler).
#[test]
fn explicit_variant_is_symplectic_euler() {
    let h = 0.01;
    let (mut s, st) = oscillator(&[("explicitIntegration", "true")], "SparseLDLSolver", h);
    let (mut q, mut p) = (A, 0.0);
    for n in 1..=300 {
        animate(&mut s, h).unwrap();
        // a = M⁻¹(f + p/h), v = h·a
        let v = h * ((-K * q + p / h) / M);
        q += h * v;
        p = M * v;
        let (xq, xv) = (s.vec(st, VecId::POSITION)[3] - L, s.vec(st, VecId::VELOCITY)[3]);
        assert!((xq - q).abs() < 1e-12 && (xv - v).abs() < 1e-11, "step {n}: {xq} vs {q}, {xv} vs {v}");
    }
}

/// Two free particles on a stiff spring, no gravity, with CG: the total momentum M(v₁ + v₂) is
/// conserved (each step's force is internal) while the spring vibrates.
#[test]
fn free_two_body_system_conserves_momentum() {
    let f = factory();
    let mut s = Scene::new("root");
    s.node_mut(Scene::ROOT).context.gravity = [0.0; 3];
    let h = 0.02;
    s.node_mut(Scene::ROOT).context.dt = h;
    add(&mut s, &f, Scene::ROOT, "VariationalSymplecticSolver", &[("newtonError", "1e-12"), ("steps", "4")]);
    add(&mut s, &f, Scene::ROOT, "CGLinearSolver", &[("iterations", "100"), ("tolerance", "1e-16"), ("threshold", "1e-30")]);
    let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1.3 0.2 0"), ("velocity", "0.5 1 0  -0.2 0 0.4")]);
    add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", "2")]);
    add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", "0 1 500 0 1")]);
    init_root(&mut s, &f).unwrap();
    let st = s.state_of(mo).unwrap();
    let momentum = |s: &Scene| {
        let v = s.vec(st, VecId::VELOCITY);
        [2.0 * (v[0] + v[3]), 2.0 * (v[1] + v[4]), 2.0 * (v[2] + v[5])]
    };
    let p0 = momentum(&s);
    let mut moved = 0.0f64;
    for _ in 0..100 {
        animate(&mut s, h).unwrap();
        let p = momentum(&s);
        for c in 0..3 {
            assert!((p[c] - p0[c]).abs() < 1e-9, "{p:?} vs {p0:?}");
        }
        let x = s.vec(st, VecId::POSITION);
        moved = moved.max(((x[3] - x[0]).powi(2) + (x[4] - x[1]).powi(2) + (x[5] - x[2]).powi(2)).sqrt() - 1.0);
    }
    assert!(moved > 0.1, "the spring stretched by {moved}");
}
