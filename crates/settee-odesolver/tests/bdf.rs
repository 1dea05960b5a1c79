//! BDFOdeSolver: its coefficients, order 1 against backward Euler, and SOFA's order ramp.

use settee_core::simulation::{animate, init_root};
use settee_core::testing::add;
use settee_core::{ComponentId, Factory, Scene, StateId, VecId};
use settee_odesolver::newton_raphson::NewtonRaphsonSolver;
use settee_odesolver::{bdf_coefficients, BDFOdeSolver};

fn factory() -> Factory {
    settee_statecontainer::factory_with(&[
        settee_mass::register,
        settee_projective::register,
        settee_animationloop::register,
        settee_spring::register,
        settee_mechanicalload::register,
        settee_linearsolver::register,
        settee_odesolver::register,
    ])
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

#[test]
fn coefficients_are_the_classical_bdf_ones_on_uniform_steps() {
    let cases: [(&[f64], &[f64], f64); 3] = [
        (&[0.0, 0.1], &[-1.0, 1.0], 1.0),
        (&[12.0, 13.0, 14.0], &[1.0 / 3.0, -4.0 / 3.0, 1.0], 2.0 / 3.0),
        (&[0.0, 0.01, 0.02, 0.03], &[-2.0 / 11.0, 9.0 / 11.0, -18.0 / 11.0, 1.0], 6.0 / 11.0),
    ];
    for (samples, a_expected, b_last) in cases {
        let (a, b) = bdf_coefficients(samples);
        assert_eq!(a.len(), samples.len());
        for (x, y) in a.iter().zip(a_expected) {
            assert!(close(*x, *y, 1e-12), "{samples:?}: a = {a:?}");
        }
        assert!(close(*b.last().unwrap(), b_last, 1e-12), "{samples:?}: b = {b:?}");
        assert!(b[..b.len() - 1].iter().all(|x| *x == 0.0));
    }
}

#[test]
fn coefficients_on_variable_steps_are_exact_for_polynomials_of_the_order() {
    // Σ a_j p(t_j) = h·b_s·p'(t_s) for every polynomial p of degree ≤ s.
    let samples = [0.3, 0.37, 0.52, 0.55];
    for s in 1..=3 {
        let t = &samples[..=s];
        let (a, b) = bdf_coefficients(t);
        let h = t[s] - t[s - 1];
        for degree in 0..=s as i32 {
            let lhs: f64 = a.iter().zip(t).map(|(aj, tj)| aj * tj.powi(degree)).sum();
            let rhs = if degree == 0 { 0.0 } else { h * b[s] * degree as f64 * t[s].powi(degree - 1) };
            assert!((lhs - rhs).abs() < 1e-12, "order {s}, degree {degree}: {lhs} vs {rhs}");
        }
    }
    // Variable-step BDF2 in closed form, ω = h_n / h_{n−1}: a = (ω²/(1+2ω), −(1+ω)²/(1+2ω), 1),
    // b_2 = (1+ω)/(1+2ω).
    let (a, b) = bdf_coefficients(&[0.0, 0.2, 0.3]);
    let w: f64 = 0.5;
    let d = 1.0 + 2.0 * w;
    assert!(close(a[0], w * w / d, 1e-14) && close(a[1], -(1.0 + w) * (1.0 + w) / d, 1e-14), "{a:?}");
    assert!(close(b[2], (1.0 + w) / d, 1e-14), "{b:?}");
}

/// A fixed particle and a free one on a spring along x (damping `kd`), with gravity along x: a
/// linear oscillator (the spring stays aligned, so its force is linear in the free particle's
/// x and vx).
fn oscillator(solver: &str, attrs: &[(&str, &str)], newton: &[(&str, &str)], h: f64, kd: f64) -> (Scene, StateId, Option<ComponentId>) {
    let f = factory();
    let mut s = Scene::new("root");
    s.node_mut(Scene::ROOT).context.gravity = [-2.0, 0.0, 0.0];
    s.node_mut(Scene::ROOT).context.dt = h;
    add(&mut s, &f, Scene::ROOT, solver, attrs);
    let n = (solver == "BDFOdeSolver").then(|| add(&mut s, &f, Scene::ROOT, "NewtonRaphsonSolver", newton));
    add(&mut s, &f, Scene::ROOT, "SparseLDLSolver", &[]);
    let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1.3 0 0"), ("velocity", "0 0 0  0.4 0 0")]);
    add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", "0.5")]);
    add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0")]);
    add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", &format!("0 1 80 {kd} 1"))]);
    init_root(&mut s, &f).unwrap();
    let st = s.state_of(mo).unwrap();
    (s, st, n)
}

/// The free particle's x and vx.
fn free(s: &Scene, st: StateId) -> (f64, f64) {
    (s.vec(st, VecId::POSITION)[3], s.vec(st, VecId::VELOCITY)[3])
}

#[test]
fn order_one_is_backward_euler() {
    let h = 0.01;
    // A tight residual threshold: with the default 1e-5 a step starting close to equilibrium
    // would not iterate at all.
    let newton = [("absoluteResidualStoppingThreshold", "1e-14")];
    for rayleigh in [[("rayleighStiffness", "0"), ("rayleighMass", "0")], [("rayleighStiffness", "0.02"), ("rayleighMass", "0.3")]] {
        let mut bdf_attrs = vec![("order", "1")];
        bdf_attrs.extend(rayleigh);
        for kd in [0.0, 0.3] {
            let (mut bdf, bst, n) = oscillator("BDFOdeSolver", &bdf_attrs, &newton, h, kd);
            let (mut euler, est, _) = oscillator("EulerImplicitSolver", &rayleigh, &[], h, kd);
            let n = n.unwrap();
            for step in 1..=200 {
                animate(&mut bdf, h).unwrap();
                animate(&mut euler, h).unwrap();
                let ((xb, vb), (xe, ve)) = (free(&bdf, bst), free(&euler, est));
                assert!(close(xb, xe, 1e-13) && close(vb, ve, 1e-12), "{rayleigh:?}, kd {kd}, step {step}: BDF ({xb}, {vb}) vs Euler ({xe}, {ve})");
                assert_eq!(bdf.get::<NewtonRaphsonSolver>(n).unwrap().iterations(), 1);
                // Without spring damping one Newton iteration solves the linear problem; the
                // spring's damping has no matrix (as in SOFA), so its linearisation is not exact.
                let status = bdf.entry(n).data.get(NewtonRaphsonSolver::STATUS).to_string();
                let expected = if kd == 0.0 { "ConvergedResidualSuccessiveRatio" } else { "DivergedMaxIterations" };
                assert_eq!(status, expected, "{rayleigh:?}, kd {kd}, step {step}");
            }
        }
    }
}

#[test]
fn order_one_converges_at_first_order_to_the_exact_oscillation() {
    // Undamped: x'' = −(k/m)(x − L) + g, exact x(t) = L + g m/k + A cos(ωt) + (v0/ω) sin(ωt).
    let (k, m, l, g): (f64, f64, f64, f64) = (80.0, 0.5, 1.0, -2.0);
    let omega = (k / m).sqrt();
    let x_eq = l + g * m / k;
    let (amp, v0) = (1.3 - x_eq, 0.4);
    let t_end = 0.5;
    let mut errors = Vec::new();
    for steps in [400usize, 800, 1600] {
        let h = t_end / steps as f64;
        let f = factory();
        let mut s = Scene::new("root");
        s.node_mut(Scene::ROOT).context.gravity = [g, 0.0, 0.0];
        add(&mut s, &f, Scene::ROOT, "BDFOdeSolver", &[]);
        add(&mut s, &f, Scene::ROOT, "NewtonRaphsonSolver", &[("absoluteResidualStoppingThreshold", "0")]);
        add(&mut s, &f, Scene::ROOT, "SparseLDLSolver", &[]);
        let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1.3 0 0"), ("velocity", "0 0 0  0.4 0 0")]);
        add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", &m.to_string())]);
        add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0")]);
        add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", &format!("0 1 {k} 0 {l}"))]);
        init_root(&mut s, &f).unwrap();
        let st = s.state_of(mo).unwrap();
        for _ in 0..steps {
            animate(&mut s, h).unwrap();
        }
        let exact = x_eq + amp * (omega * t_end).cos() + v0 / omega * (omega * t_end).sin();
        errors.push((free(&s, st).0 - exact).abs());
    }
    for w in errors.windows(2) {
        let ratio = w[0] / w[1];
        assert!((1.9..2.1).contains(&ratio), "error ratio {ratio} ({errors:?})");
    }
}

#[test]
fn higher_orders_follow_sofas_order_ramp() {
    // SOFA's slots: once the order ramps up, every slot below s is the state's own vector, so
    // the earlier samples are the current state. With constant steps, order s then integrates
    // as backward Euler on steps of b_s·h: the first step (order 1) takes h, the next ones
    // 2h/3 (order 2) or 6h/11 (order 3, after one step of 2h/3).
    let h = 0.01;
    let newton = [("absoluteResidualStoppingThreshold", "1e-14")];
    for (order, scaled) in [("2", vec![1.0, 2.0 / 3.0]), ("3", vec![1.0, 2.0 / 3.0, 6.0 / 11.0])] {
        let (mut bdf, bst, _) = oscillator("BDFOdeSolver", &[("order", order), ("rayleighMass", "0.3")], &newton, h, 0.3);
        let (mut euler, est, _) = oscillator("EulerImplicitSolver", &[("rayleighMass", "0.3")], &[], h, 0.3);
        // The fixed particle and the other coordinates stay.
        let x = bdf.vec(bst, VecId::POSITION);
        assert_eq!((&x[..3], x[4], x[5]), (&[0.0, 0.0, 0.0][..], 0.0, 0.0));
        for step in 0..100 {
            let factor = scaled[step.min(scaled.len() - 1)];
            animate(&mut bdf, h).unwrap();
            // The Euler solver runs the scaled steps (its context time is not used).
            animate(&mut euler, factor * h).unwrap();
            let ((xb, vb), (xe, ve)) = (free(&bdf, bst), free(&euler, est));
            assert!(close(xb, xe, 1e-11) && close(vb, ve, 1e-10), "order {order} step {step}: BDF ({xb}, {vb}) vs Euler ({xe}, {ve})");
        }
    }
}

#[test]
fn order_zero_is_set_to_one_and_missing_newton_solver_is_an_error() {
    let f = factory();
    let mut s = Scene::new("root");
    let bdf = add(&mut s, &f, Scene::ROOT, "BDFOdeSolver", &[("order", "0")]);
    add(&mut s, &f, Scene::ROOT, "NewtonRaphsonSolver", &[]);
    add(&mut s, &f, Scene::ROOT, "SparseLDLSolver", &[]);
    add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0")]);
    add(&mut s, &f, Scene::ROOT, "UniformMass", &[]);
    init_root(&mut s, &f).unwrap();
    assert_eq!(s.entry(bdf).data.get(BDFOdeSolver::ORDER), 1);
    assert!(s.messages.iter().any(|m| m.message.contains("cannot have order 0")));

    let mut s = Scene::new("root");
    let bdf = add(&mut s, &f, Scene::ROOT, "BDFOdeSolver", &[]);
    add(&mut s, &f, Scene::ROOT, "SparseLDLSolver", &[]);
    add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0")]);
    let e = init_root(&mut s, &f).unwrap_err();
    assert!(e.diagnostic().message.contains("Newton-Raphson solver is required"), "{e}");
    assert_eq!(e.diagnostic().subject.as_deref(), Some(s.entry(bdf).label().as_str()));
}
