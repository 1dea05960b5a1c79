//! ODE solvers: implicit and explicit Euler, Newmark, Runge-Kutta 2 and 4, the static solver
//! and BDF with their Newton-Raphson solver.

mod bdf;
mod damp_velocity;
mod euler_explicit;
mod euler_implicit;
mod newmark;
pub mod newton_raphson;
mod runge_kutta2;
mod runge_kutta4;
mod static_solver;
mod variational_symplectic;

pub use bdf::{bdf_coefficients, BDFOdeSolver};
pub use damp_velocity::DampVelocitySolver;
pub use newmark::NewmarkImplicitSolver;
pub use runge_kutta2::RungeKutta2Solver;
pub use static_solver::StaticSolver;
pub use variational_symplectic::VariationalSymplecticSolver;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<euler_implicit::EulerImplicitSolver>();
    f.add::<euler_explicit::EulerExplicitSolver>();
    f.add::<runge_kutta4::RungeKutta4Solver>();
    f.add::<newton_raphson::NewtonRaphsonSolver>();
    f.add::<static_solver::StaticSolver>();
    f.add::<bdf::BDFOdeSolver>();
    f.add::<newmark::NewmarkImplicitSolver>();
    f.add::<runge_kutta2::RungeKutta2Solver>();
    f.add::<DampVelocitySolver>();
    f.add::<VariationalSymplecticSolver>();
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use settee_core::component::{LinearSolver, Mass};
    use settee_core::mechanics::{self as mech, MechScope};
    use settee_core::simulation::{animate, init_root};
    use settee_core::{
        Attr, Component, ComponentId, Factory, ForceField, ForceIo, InitCtx, MatrixAccumulator, Mbk, MechParams, NodeId, Scene, SimError, SimResult,
        StateId, VecId, VecKind,
    };

    fn factory() -> Factory {
        let mut f = settee_statecontainer::factory_with(&[
            settee_mass::register,
            settee_projective::register,
            settee_animationloop::register,
            settee_spring::register,
            settee_mechanicalload::register,
            super::register,
        ]);
        f.add::<TestCoupledMass>();
        f.add::<TestDenseSolver>();
        f
    }

    fn add(scene: &mut Scene, f: &Factory, node: NodeId, class: &str, attrs: &[(&str, &str)]) -> ComponentId {
        let attrs = attrs.iter().map(|(n, v)| Attr { name: n.to_string(), value: v.to_string(), pos: None }).collect();
        let id = f.create(scene, node, class, None, attrs, None, Path::new(".")).expect("component created");
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        id
    }

    fn new_scene(gravity: [f64; 3], dt: f64) -> Scene {
        let mut s = Scene::new("root");
        s.node_mut(Scene::ROOT).context.gravity = gravity;
        s.node_mut(Scene::ROOT).context.dt = dt;
        s
    }

    fn state(scene: &Scene, mo: ComponentId) -> StateId {
        scene.state_of(mo).expect("a state")
    }

    const G: [f64; 3] = [0.0, -9.81, 0.0];

    // ----- explicit Euler -----------------------------------------------------------------------

    fn free_particle(symplectic: bool, separate_gravity: bool, h: f64) -> (Scene, StateId) {
        let f = factory();
        let mut s = new_scene(G, h);
        add(&mut s, &f, Scene::ROOT, "EulerExplicitSolver", &[("symplectic", if symplectic { "true" } else { "false" })]);
        let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 1 0"), ("velocity", "1 2 0.5")]);
        add(&mut s, &f, Scene::ROOT, "UniformMass", &[("totalMass", "3"), ("separateGravity", if separate_gravity { "1" } else { "0" })]);
        init_root(&mut s, &f).expect("init");
        let st = state(&s, mo);
        (s, st)
    }

    /// EulerExplicit then DampVelocitySolver in one node, no gravity: each step the particle moves
    /// with its velocity, then the velocity is multiplied by exp(−rate·h), and set to zero once
    /// shorter than the threshold.
    #[test]
    fn damp_velocity_solver_decays_then_cancels_the_velocity() {
        let h = 0.05;
        let f = factory();
        let mut s = new_scene([0.0; 3], h);
        add(&mut s, &f, Scene::ROOT, "EulerExplicitSolver", &[]);
        add(&mut s, &f, Scene::ROOT, "DampVelocitySolver", &[("rate", "0.9"), ("threshold", "0.5")]);
        let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0"), ("velocity", "0.6 0 0.3  0.1 0.2 0.2")]);
        add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", "1")]);
        init_root(&mut s, &f).expect("init");
        let st = state(&s, mo);
        let decay = (-0.9f64 * h).exp();
        let (mut x, mut v) = ([0.0, 0.0, 0.0, 1.0, 0.0, 0.0], [0.6, 0.0, 0.3, 0.1, 0.2, 0.2]);
        for step in 0..40 {
            animate(&mut s, h).expect("step");
            for c in 0..6 {
                x[c] += v[c] * h;
                v[c] *= decay;
            }
            for p in 0..2 {
                let n2: f64 = v[3 * p..3 * p + 3].iter().map(|c| c * c).sum();
                if n2 < 0.25 {
                    v[3 * p..3 * p + 3].fill(0.0);
                }
            }
            assert_eq!(s.vec(st, VecId::POSITION), &x, "step {step}");
            assert_eq!(s.vec(st, VecId::VELOCITY), &v, "step {step}");
        }
        // the second particle (speed 0.3) stopped after its first step, the first one (0.67)
        // after a while
        assert_eq!(x[3..], [1.0 + 0.1 * h, 0.2 * h, 0.2 * h]);
        assert_eq!(v, [0.0; 6]);
        assert!(x[0] > 0.1);
    }

    #[test]
    fn explicit_euler_free_fall_matches_closed_form() {
        let h = 0.01;
        let (x0, v0) = ([0.0, 1.0, 0.0], [1.0, 2.0, 0.5]);
        for symplectic in [true, false] {
            let (mut s, st) = free_particle(symplectic, false, h);
            // The exact floating-point sequence of SOFA's scheme: a = (g·m)/m, v ← v + a·h, x ← x + v·h.
            let m = 3.0;
            let (mut x, mut v) = (x0, v0);
            for n in 1..=200 {
                animate(&mut s, h).expect("step");
                for c in 0..3 {
                    let a = (G[c] * m) / m;
                    if symplectic {
                        v[c] += a * h;
                        x[c] += v[c] * h;
                    } else {
                        x[c] += v[c] * h;
                        v[c] += a * h;
                    }
                }
                let (px, pv) = (s.vec(st, VecId::POSITION), s.vec(st, VecId::VELOCITY));
                assert_eq!(px, &x, "symplectic={symplectic}, step {n}");
                assert_eq!(pv, &v, "symplectic={symplectic}, step {n}");
                // Closed form: symplectic x_n = x0 + n h v0 + h² g n(n+1)/2; standard n(n−1)/2.
                let nf = n as f64;
                let tri = if symplectic { nf * (nf + 1.0) / 2.0 } else { nf * (nf - 1.0) / 2.0 };
                for c in 0..3 {
                    let xe = x0[c] + nf * h * v0[c] + h * h * G[c] * tri;
                    let ve = v0[c] + nf * h * G[c];
                    assert!((px[c] - xe).abs() < 1e-11, "x[{c}] = {} vs {xe} (step {n})", px[c]);
                    assert!((pv[c] - ve).abs() < 1e-11, "v[{c}] = {} vs {ve} (step {n})", pv[c]);
                }
            }
        }
    }

    #[test]
    fn explicit_euler_separate_gravity_is_added_before_the_update() {
        // With separateGravity the velocity already holds v + g·h when the positions are updated,
        // so even the non-symplectic scheme gives x_n = x0 + n h v0 + h² g n(n+1)/2.
        let h = 0.02;
        for symplectic in [true, false] {
            let (mut s, st) = free_particle(symplectic, true, h);
            for n in 1..=50 {
                animate(&mut s, h).unwrap();
                let nf = n as f64;
                let y = s.vec(st, VecId::POSITION)[1];
                let ye = 1.0 + nf * h * 2.0 + h * h * G[1] * nf * (nf + 1.0) / 2.0;
                assert!((y - ye).abs() < 1e-11, "symplectic={symplectic} step {n}: {y} vs {ye}");
            }
        }
    }

    #[test]
    fn explicit_euler_fixed_dof_and_constant_force() {
        // Two particles, the first fixed; a ConstantForceField pulls the second along +x.
        let h = 0.01;
        let f = factory();
        let mut s = new_scene([0.0; 3], h);
        add(&mut s, &f, Scene::ROOT, "EulerExplicitSolver", &[]);
        let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0")]);
        add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", "2")]);
        add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0")]);
        add(&mut s, &f, Scene::ROOT, "ConstantForceField", &[("force", "4 0 0")]);
        init_root(&mut s, &f).unwrap();
        let st = state(&s, mo);
        for _ in 0..10 {
            animate(&mut s, h).unwrap();
        }
        let x = s.vec(st, VecId::POSITION);
        assert_eq!(&x[..3], &[0.0, 0.0, 0.0]);
        // a = 2, symplectic: x = 1 + h² a n(n+1)/2.
        assert!((x[3] - (1.0 + h * h * 2.0 * 55.0)).abs() < 1e-13, "{x:?}");
    }

    // A non-diagonal test mass: M = m·[[2,1],[1,2]] ⊗ I3 on a two-particle Vec3 state.
    #[settee_core::component(
        name = "TestCoupledMass",
        description = "test only",
        roles = [Mass, ForceField],
        templates = ["Vec3d"],
        default_template = "Vec3d",
        template_rule = FromState,
        create = |_| TestCoupledMass { state: None, m: 1.0 },
        data = {
            /// scale
            m: Real = "1",
        },
    )]
    struct TestCoupledMass {
        state: Option<StateId>,
        m: f64,
    }

    impl TestCoupledMass {
        fn entry(&self, i: usize, j: usize) -> f64 {
            self.m * if i == j { 2.0 } else { 1.0 }
        }
    }

    impl Component for TestCoupledMass {
        fn init(&mut self, cx: &mut InitCtx) -> SimResult {
            self.state = Some(cx.require_state()?);
            self.m = cx.data().get(Self::M);
            Ok(())
        }
    }

    impl ForceField for TestCoupledMass {
        fn states(&self) -> settee_core::StateSet {
            self.state.into_iter().collect()
        }
        fn add_force(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
            for i in 0..2 {
                for j in 0..2 {
                    for c in 0..3 {
                        io.f[0][3 * i + c] += self.entry(i, j) * p.gravity[c];
                    }
                }
            }
            Ok(())
        }
        fn add_dforce(&mut self, _: &MechParams, _: &mut ForceIo, _: f64, _: f64) -> SimResult {
            Ok(())
        }
        fn is_mass(&self) -> bool {
            true
        }
    }

    impl Mass for TestCoupledMass {
        fn state(&self) -> StateId {
            self.state.unwrap()
        }
        fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
            for i in 0..2 {
                for j in 0..2 {
                    for c in 0..3 {
                        res[3 * i + c] += self.entry(i, j) * factor * dx[3 * j + c];
                    }
                }
            }
        }
        fn acc_from_f(&self, _: &mut [f64], _: &[f64]) -> SimResult {
            Err(SimError::new("TestCoupledMass is not diagonal"))
        }
        fn add_gravity_to_v(&self, _: &mut [f64], _: [f64; 3], _: f64) {}
        fn add_m_to_matrix(&self, acc: &mut MatrixAccumulator, factor: f64) -> SimResult {
            let s = self.state.unwrap();
            for i in 0..2 {
                for j in 0..2 {
                    for c in 0..3 {
                        acc.add(s, 3 * i + c, s, 3 * j + c, self.entry(i, j) * factor);
                    }
                }
            }
            Ok(())
        }
        fn is_diagonal(&self) -> bool {
            false
        }
        fn separate_gravity(&self) -> bool {
            false
        }
        fn rayleigh_mass(&self) -> f64 {
            0.0
        }
        fn kinetic_energy(&self, _: &[f64]) -> f64 {
            0.0
        }
    }

    // A dense test linear solver: assembles P(mM + bB + kK)P and solves by Gaussian elimination.
    #[settee_core::component(
        name = "TestDenseSolver",
        description = "test only",
        roles = [LinearSolver],
        create = |_| TestDenseSolver { calls: Vec::new() },
    )]
    struct TestDenseSolver {
        calls: Vec<Mbk>,
    }

    impl Component for TestDenseSolver {}

    impl LinearSolver for TestDenseSolver {
        fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
            self.calls.push(factors);
            let mut b = settee_linalg::MatrixBuilder::new(0);
            mech::assemble(scene, scope, factors, &mut b)?;
            let a = b.matrix().to_dense();
            let mut r = Vec::new();
            mech::gather(scene, scope, rhs, &mut r);
            let x = settee_linearsolver::testing::dense_solve(&a, &r);
            mech::scatter(scene, scope, solution, &x);
            Ok(())
        }
    }

    #[test]
    fn explicit_euler_non_diagonal_mass_uses_the_linear_solver() {
        let h = 0.01;
        let f = factory();
        let mut s = new_scene(G, h);
        add(&mut s, &f, Scene::ROOT, "EulerExplicitSolver", &[("optimizedForDiagonalMatrix", "false")]);
        let ls = add(&mut s, &f, Scene::ROOT, "TestDenseSolver", &[]);
        let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0")]);
        add(&mut s, &f, Scene::ROOT, "TestCoupledMass", &[("m", "0.5")]);
        add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0")]);
        init_root(&mut s, &f).unwrap();
        let st = state(&s, mo);
        for n in 1..=20 {
            animate(&mut s, h).unwrap();
            // f1 = (M g)_1 = 3 m g; the projected system gives M_11 a_1 = 3 m g, a_1 = 1.5 g.
            let nf = n as f64;
            let x = s.vec(st, VecId::POSITION);
            assert_eq!(&x[..3], &[0.0, 0.0, 0.0]);
            let ye = 1.5 * G[1] * h * h * nf * (nf + 1.0) / 2.0;
            assert!((x[4] - ye).abs() < 1e-13, "step {n}: {} vs {ye}", x[4]);
            assert_eq!(x[3], 1.0);
        }
        let solver = s.get::<TestDenseSolver>(ls).unwrap();
        assert_eq!(solver.calls.len(), 20);
        assert!(solver.calls.iter().all(|c| *c == Mbk { m: 1.0, b: 0.0, k: 0.0 }));
    }

    #[test]
    fn explicit_euler_non_diagonal_mass_without_linear_solver_is_an_error() {
        let f = factory();
        let mut s = new_scene(G, 0.01);
        add(&mut s, &f, Scene::ROOT, "EulerExplicitSolver", &[]);
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0")]);
        add(&mut s, &f, Scene::ROOT, "TestCoupledMass", &[]);
        init_root(&mut s, &f).unwrap();
        let e = animate(&mut s, 0.01).unwrap_err();
        assert!(e.diagnostic().message.contains("linear solver"), "{e}");
        assert!(e.diagnostic().hint.is_some());
    }

    #[test]
    fn explicit_euler_linear_solver_is_searched_upwards() {
        // The solver in a child node finds the linear solver of the root (SOFA's upward search),
        // and a linear solver below the solver node is not used.
        let h = 0.01;
        let f = factory();
        let mut s = new_scene(G, h);
        let ls = add(&mut s, &f, Scene::ROOT, "TestDenseSolver", &[]);
        let child = s.add_node(Scene::ROOT, "child");
        add(&mut s, &f, child, "EulerExplicitSolver", &[]);
        add(&mut s, &f, child, "MechanicalObject", &[("position", "0 0 0  1 0 0")]);
        add(&mut s, &f, child, "TestCoupledMass", &[]);
        init_root(&mut s, &f).unwrap();
        animate(&mut s, h).unwrap();
        assert_eq!(s.get::<TestDenseSolver>(ls).unwrap().calls.len(), 1);
    }

    // ----- Runge-Kutta 4 ------------------------------------------------------------------------

    /// A fixed particle at the origin and a free one at (L + A, 0, 0) joined by a spring of
    /// stiffness k and rest length L; no gravity.
    fn oscillator(h: f64, k: f64, mass: f64, l: f64, amp: f64) -> (Scene, StateId) {
        let f = factory();
        let mut s = new_scene([0.0; 3], h);
        add(&mut s, &f, Scene::ROOT, "RungeKutta4Solver", &[]);
        let pos = format!("0 0 0  {} 0 0", l + amp);
        let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", &pos)]);
        add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", &mass.to_string())]);
        add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0")]);
        let spring = format!("0 1 {k} 0 {l}");
        add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", &spring)]);
        init_root(&mut s, &f).unwrap();
        let st = state(&s, mo);
        (s, st)
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
    fn rk4_spring_oscillator_has_fourth_order_error() {
        let (k, mass, l, amp, t_end): (f64, f64, f64, f64, f64) = (100.0, 1.0, 1.0, 0.2, 1.0);
        let omega = (k / mass).sqrt();
        let mut errors = Vec::new();
        for steps in [100usize, 200, 400] {
            let h = t_end / steps as f64;
            let (mut s, st) = oscillator(h, k, mass, l, amp);
            for _ in 0..steps {
                animate(&mut s, h).unwrap();
            }
            let x = s.vec(st, VecId::POSITION)[3] - l;
            let v = s.vec(st, VecId::VELOCITY)[3];
            // RK4 on y' = A y multiplies the modes by R(z) = 1 + z + z²/2 + z³/6 + z⁴/24, z = iωh:
            // q_n = A·Re(Rⁿ), v_n = Re(iωA·Rⁿ).
            let th = omega * h;
            let r = (1.0 - th * th / 2.0 + th.powi(4) / 24.0, th - th.powi(3) / 6.0);
            let rn = cpow(r, steps);
            let (q_rk4, v_rk4) = (amp * rn.0, -omega * amp * rn.1);
            assert!((x - q_rk4).abs() < 1e-12, "h={h}: {x} vs discrete RK4 {q_rk4}");
            assert!((v - v_rk4).abs() < 1e-11, "h={h}: {v} vs discrete RK4 {v_rk4}");
            // The other coordinates and the fixed particle do not move.
            let p = s.vec(st, VecId::POSITION);
            assert_eq!(&p[..3], &[0.0, 0.0, 0.0]);
            assert_eq!(&p[4..], &[0.0, 0.0]);
            let exact = amp * (omega * t_end).cos();
            errors.push((x - exact).abs());
            // Leading terms: per step RK4 lags the phase by θ⁵/120 and damps the amplitude by
            // θ⁶/144, so x − exact ≈ A·sin(ωT)·nθ⁵/120 − A·cos(ωT)·nθ⁶/144.
            let nf = steps as f64;
            let predicted = amp * (omega * t_end).sin() * nf * th.powi(5) / 120.0 - amp * (omega * t_end).cos() * nf * th.powi(6) / 144.0;
            assert!(((x - exact) / predicted - 1.0).abs() < 0.02, "h={h}: error {} vs predicted {predicted}", x - exact);
        }
        // Global error O(h⁴): halving h divides it by ~16.
        for w in errors.windows(2) {
            let ratio = w[0] / w[1];
            assert!((14.5..17.5).contains(&ratio), "error ratio {ratio} ({errors:?})");
        }
    }

    #[test]
    fn rk4_is_exact_for_constant_acceleration_and_frees_its_temporaries() {
        let h = 0.05;
        let f = factory();
        let mut s = new_scene(G, h);
        add(&mut s, &f, Scene::ROOT, "RungeKutta4Solver", &[]);
        let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 1 0"), ("velocity", "1 2 0.5")]);
        add(&mut s, &f, Scene::ROOT, "UniformMass", &[("totalMass", "2")]);
        init_root(&mut s, &f).unwrap();
        let st = state(&s, mo);
        for n in 1..=40 {
            animate(&mut s, h).unwrap();
            let t = n as f64 * h;
            let x = s.vec(st, VecId::POSITION);
            let xe = [t, 1.0 + 2.0 * t + 0.5 * G[1] * t * t, 0.5 * t];
            for c in 0..3 {
                assert!((x[c] - xe[c]).abs() < 1e-12, "step {n}: {x:?} vs {xe:?}");
            }
            assert!((s.vec(st, VecId::VELOCITY)[1] - (2.0 + G[1] * t)).abs() < 1e-12);
        }
        // Temporaries are freed: no dynamic vector remains set.
        let ms = s.store.get(st);
        for i in VecId::FIRST_DYNAMIC_DERIV..VecId::FIRST_DYNAMIC_DERIV + 8 {
            assert!(!ms.is_set(VecId { kind: VecKind::Deriv, index: i }), "deriv {i} still set");
        }
        assert!(!ms.is_set(VecId::coord(VecId::FIRST_DYNAMIC_COORD)));
        // `force` holds the last stage's force (SOFA's computeAcc writes into `force`).
        assert_eq!(s.vec(st, VecId::FORCE), &[0.0, G[1] * 2.0, 0.0]);
    }

    #[test]
    fn rk4_stage_sequence_matches_sofa_bit_for_bit() {
        // One free particle on a spring to a fixed point, with damping: replicate SOFA's exact
        // stage arithmetic (1D along x) and compare bitwise.
        let (k, kd, l, h) = (30.0, 0.7, 0.5, 0.013);
        let f = factory();
        let mut s = new_scene([0.0; 3], h);
        add(&mut s, &f, Scene::ROOT, "RungeKutta4Solver", &[]);
        let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  0.9 0 0"), ("velocity", "0 0 0  0.3 0 0")]);
        add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", "1.7")]);
        add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0")]);
        add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", &format!("0 1 {k} {kd} {l}"))]);
        init_root(&mut s, &f).unwrap();
        let st = state(&s, mo);
        let m = 1.7;
        // Acceleration of the free particle (x > 0 so û = +x).
        let acc = |x: f64, v: f64| {
            let d = (x * x).sqrt();
            let inv = 1.0 / d;
            let u = x * inv;
            let fi = k * (d - l) + kd * (u * v);
            (-(u * fi)) / m
        };
        let (mut x, mut v) = (0.9f64, 0.3f64);
        for _ in 0..30 {
            animate(&mut s, h).unwrap();
            let (h2, h3, h6) = (h / 2.0, h / 3.0, h / 6.0);
            let k1v = v;
            let k1a = acc(x, v);
            let (nx, k2v) = (x + k1v * h2, v + k1a * h2);
            let k2a = acc(nx, k2v);
            let (nx, k3v) = (x + k2v * h2, v + k2a * h2);
            let k3a = acc(nx, k3v);
            let (nx, k4v) = (x + k3v * h, v + k3a * h);
            let k4a = acc(nx, k4v);
            x = x + k1v * h6 + k2v * h3 + k3v * h3 + k4v * h6;
            v = v + k1a * h6 + k2a * h3 + k3a * h3 + k4a * h6;
            assert_eq!(s.vec(st, VecId::POSITION)[3], x);
            assert_eq!(s.vec(st, VecId::VELOCITY)[3], v);
        }
    }
}
