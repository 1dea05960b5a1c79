//! StaticSolver and NewtonRaphsonSolver: static equilibria known in closed form, the Newton
//! status and iteration counts, the line search and the stopping criteria.

use settee_core::simulation::{animate, init_root};
use settee_core::testing::add;
use settee_core::{ComponentId, Factory, Scene, SimResult, StateId, VecId};
use settee_odesolver::newton_raphson::{newton_raphson, NewtonParams, NewtonRaphsonSolver, NonLinearFunction};

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

/// A chain of `N` free particles hanging below a fixed one: springs of stiffness `K` and rest
/// length `L`, masses `M` under gravity `G` (along −y) and a load `F` (along −y) on the last
/// particle.
const N: usize = 4;
const K: f64 = 100.0;
const L: f64 = 1.0;
const M: f64 = 0.2;
const G: f64 = 9.81;
const F: f64 = 5.0;

/// Equilibrium height of particle `i`: spring `j` (above particle `j`) carries the load and the
/// weight of particles `j..=N`, so it is stretched by `(F + (N − j + 1)·M·G)/K`.
fn hanging_y(i: usize) -> f64 {
    -(1..=i).map(|j| L + (F + (N - j + 1) as f64 * M * G) / K).sum::<f64>()
}

struct Chain {
    scene: Scene,
    state: StateId,
    newton: Option<ComponentId>,
}

/// The chain, its particles first placed at `start(i)`; `newton` holds the NewtonRaphsonSolver's
/// attributes (`None`: no NewtonRaphsonSolver in the scene).
fn chain(start: impl Fn(usize) -> [f64; 3], newton: Option<&[(&str, &str)]>, static_attrs: &[(&str, &str)]) -> Chain {
    let f = factory();
    let mut s = Scene::new("root");
    s.node_mut(Scene::ROOT).context.gravity = [0.0, -G, 0.0];
    s.node_mut(Scene::ROOT).context.dt = 1.0;
    let newton = newton.map(|attrs| add(&mut s, &f, Scene::ROOT, "NewtonRaphsonSolver", attrs));
    add(&mut s, &f, Scene::ROOT, "StaticSolver", static_attrs);
    add(&mut s, &f, Scene::ROOT, "SparseLDLSolver", &[("template", "CompressedRowSparseMatrixd")]);
    let pos: Vec<String> = (0..=N).map(|i| start(i).map(|c| c.to_string()).join(" ")).collect();
    let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", &pos.join("  "))]);
    add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", &M.to_string())]);
    add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0")]);
    let springs: Vec<String> = (1..=N).map(|i| format!("{} {i} {K} 0 {L}", i - 1)).collect();
    add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", &springs.join("  "))]);
    add(&mut s, &f, Scene::ROOT, "ConstantForceField", &[("indices", &N.to_string()), ("force", &format!("0 {} 0", -F))]);
    init_root(&mut s, &f).expect("init");
    let state = s.state_of(mo).unwrap();
    Chain { scene: s, state, newton }
}

fn status(s: &Scene, newton: ComponentId) -> String {
    s.entry(newton).data.get(NewtonRaphsonSolver::STATUS).to_string()
}

fn residuals(s: &Scene, newton: ComponentId) -> Vec<f64> {
    s.entry(newton).data.get(NewtonRaphsonSolver::RESIDUAL_GRAPH).to_vec()
}

fn warnings(s: &Scene, text: &str) -> usize {
    s.messages.iter().filter(|m| m.severity == settee_core::Severity::Warning && m.message.contains(text)).count()
}

/// The straight chain, each spring stretched by 2 % (at its rest length a spring has no
/// transverse stiffness, and −K would be singular).
fn straight(i: usize) -> [f64; 3] {
    [0.0, -(i as f64) * L * 1.02, 0.0]
}

/// The chain tilted by 0.3 rad and stretched by 10 %.
fn tilted(i: usize) -> [f64; 3] {
    let r = i as f64 * L * 1.1;
    [r * 0.3f64.sin(), -r * 0.3f64.cos(), 0.0]
}

fn assert_hanging(c: &Chain, tol: f64) {
    let x = c.scene.vec(c.state, VecId::POSITION);
    for i in 0..=N {
        let (px, py, pz) = (x[3 * i], x[3 * i + 1], x[3 * i + 2]);
        assert!((py - hanging_y(i)).abs() < tol, "particle {i}: y = {py}, expected {}", hanging_y(i));
        assert!(px.abs() < tol && pz.abs() < tol, "particle {i}: x = {px}, z = {pz}");
    }
}

#[test]
fn straight_chain_reaches_its_equilibrium_in_one_newton_iteration() {
    // Along the chain the springs are linear: one Newton step is exact.
    let mut c = chain(straight, Some(&[]), &[]);
    let newton = c.newton.unwrap();
    animate(&mut c.scene, 1.0).unwrap();
    assert_hanging(&c, 1e-12);
    // The last particle moved by Σ_j (F + (N − j + 1) M G)/K = (4·5 + 10·0.2·9.81)/100.
    let y = c.scene.vec(c.state, VecId::POSITION)[3 * N + 1];
    assert!((y - (-4.0 - (4.0 * F + 10.0 * M * G) / K)).abs() < 1e-12, "{y}");
    // Initial residual: the tensions (K·0.02·L) cancel on the inner particles, which keep their
    // weights; the last one has its weight and the load, less one tension.
    let r = residuals(&c.scene, newton);
    let tension = K * 0.02 * L;
    let r0 = 3.0 * (M * G) * (M * G) + (M * G + F - tension) * (M * G + F - tension);
    assert_eq!(r.len(), 2, "{r:?}");
    assert!((r[0] - r0).abs() < 1e-12 * r0, "{} vs {r0}", r[0]);
    assert!(r[1] < 1e-20, "{r:?}");
    assert_eq!(status(&c.scene, newton), "ConvergedResidualSuccessiveRatio");
    assert_eq!(c.scene.get::<NewtonRaphsonSolver>(newton).unwrap().iterations(), 1);
    // The residual is the projected force: zero at the equilibrium, and the velocities are
    // untouched.
    assert!(c.scene.vec(c.state, VecId::FORCE).iter().all(|f| f.abs() < 1e-10));
    assert!(c.scene.vec(c.state, VecId::VELOCITY).iter().all(|v| *v == 0.0));

    // The next step starts at the equilibrium: nothing to iterate.
    animate(&mut c.scene, 1.0).unwrap();
    assert_eq!(status(&c.scene, newton), "ConvergedEquilibrium");
    assert_eq!(residuals(&c.scene, newton).len(), 1);
    assert_eq!(c.scene.get::<NewtonRaphsonSolver>(newton).unwrap().iterations(), 0);
    assert_hanging(&c, 1e-12);
}

#[test]
fn tilted_chain_converges_to_the_hanging_equilibrium() {
    let attrs = [
        ("maxNbIterationsNewton", "50"),
        ("absoluteResidualStoppingThreshold", "1e-11"),
        ("relativeSuccessiveStoppingThreshold", "0"),
        ("relativeInitialStoppingThreshold", "0"),
    ];
    let mut c = chain(tilted, Some(&attrs), &[]);
    let newton = c.newton.unwrap();
    animate(&mut c.scene, 1.0).unwrap();
    assert_eq!(status(&c.scene, newton), "ConvergedAbsoluteResidual");
    let r = residuals(&c.scene, newton);
    let iterations = c.scene.get::<NewtonRaphsonSolver>(newton).unwrap().iterations();
    assert_eq!(r.len(), iterations + 1);
    assert!(iterations >= 3, "a nonlinear problem: {iterations} iterations ({r:?})");
    assert!(*r.last().unwrap() < 1e-22, "{r:?}");
    // Newton converges quadratically at the end: the last ratios of the norms collapse.
    let n = r.len();
    assert!(r[n - 1] / r[n - 2] < 1e-6, "{r:?}");
    assert_hanging(&c, 1e-9);
}

#[test]
fn one_newton_iteration_on_a_nonlinear_problem_diverges_and_warns_once() {
    // Default Data: maxNbIterationsNewton = 1.
    let mut c = chain(tilted, Some(&[]), &[]);
    let newton = c.newton.unwrap();
    for _ in 0..3 {
        animate(&mut c.scene, 1.0).unwrap();
        assert_eq!(status(&c.scene, newton), "DivergedMaxIterations");
        assert_eq!(residuals(&c.scene, newton).len(), 2);
        assert_eq!(c.scene.get::<NewtonRaphsonSolver>(newton).unwrap().iterations(), 1);
    }
    assert_eq!(warnings(&c.scene, "failed to converge"), 1);
    // Each step still lowers the residual: the steps converge to the equilibrium.
    for _ in 0..30 {
        animate(&mut c.scene, 1.0).unwrap();
    }
    assert_hanging(&c, 1e-9);
}

#[test]
fn without_a_newton_solver_one_is_created_from_the_deprecated_attributes() {
    let mut c = chain(tilted, None, &[("newton_iterations", "50"), ("absolute_residual_tolerance_threshold", "1e-11")]);
    let created: Vec<ComponentId> =
        c.scene.node(Scene::ROOT).objects.iter().copied().filter(|&id| c.scene.entry(id).class.name == "NewtonRaphsonSolver").collect();
    assert_eq!(created.len(), 1);
    let newton = created[0];
    let d = &c.scene.entry(newton).data;
    assert_eq!(d.get(NewtonRaphsonSolver::MAX_NB_ITERATIONS_NEWTON), 50);
    assert_eq!(d.get(NewtonRaphsonSolver::ABSOLUTE_RESIDUAL_STOPPING_THRESHOLD), 1e-11);
    assert_eq!(warnings(&c.scene, "no longer defined"), 2);
    assert_eq!(warnings(&c.scene, "one was created"), 1);
    animate(&mut c.scene, 1.0).unwrap();
    // The relative tests (1e-5 by default) stop it before the absolute one.
    assert_eq!(status(&c.scene, newton), "ConvergedResidualInitialRatio");
    assert!(c.scene.get::<NewtonRaphsonSolver>(newton).unwrap().iterations() > 1);
    assert_hanging(&c, 1e-4);
}

#[test]
fn a_newton_solver_below_the_static_solver_is_found_by_the_downward_search() {
    let f = factory();
    let mut s = Scene::new("root");
    s.node_mut(Scene::ROOT).context.gravity = [0.0, -G, 0.0];
    add(&mut s, &f, Scene::ROOT, "StaticSolver", &[]);
    add(&mut s, &f, Scene::ROOT, "SparseLDLSolver", &[]);
    add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  0 -1.1 0")]);
    add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", "1")]);
    add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0")]);
    add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", "0 1 10 0 1")]);
    let child = s.add_node(Scene::ROOT, "below");
    let newton = add(&mut s, &f, child, "NewtonRaphsonSolver", &[]);
    init_root(&mut s, &f).unwrap();
    animate(&mut s, 1.0).unwrap();
    assert_eq!(status(&s, newton), "ConvergedResidualSuccessiveRatio");
    assert_eq!(warnings(&s, "one was created"), 0);
}

#[test]
fn static_solver_without_linear_solver_is_a_positioned_error() {
    let f = factory();
    let mut s = Scene::new("root");
    let solver = add(&mut s, &f, Scene::ROOT, "StaticSolver", &[]);
    add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0")]);
    let e = init_root(&mut s, &f).unwrap_err();
    assert!(e.diagnostic().message.contains("linear solver"), "{e}");
    assert_eq!(e.diagnostic().subject.as_deref(), Some(s.entry(solver).label().as_str()));
}

/// `r(x) = atan(x − root)` on one unknown: Newton overshoots from |x − root| > 1.39, which the
/// line search corrects.
struct Atan {
    root: f64,
    x: f64,
    r: f64,
    dx: f64,
    /// Every guess the method evaluated.
    evaluated: Vec<f64>,
}

impl NonLinearFunction for Atan {
    fn evaluate(&mut self, _: &mut Scene) -> SimResult {
        self.r = (self.x - self.root).atan();
        self.evaluated.push(self.x);
        Ok(())
    }
    fn squared_norm_last_evaluation(&self, _: &Scene) -> f64 {
        self.r * self.r
    }
    fn compute_gradient(&mut self, _: &mut Scene) -> SimResult {
        Ok(())
    }
    fn solve_linear_equation(&mut self, _: &mut Scene) -> SimResult {
        let e = self.x - self.root;
        self.dx = -self.r * (1.0 + e * e);
        Ok(())
    }
    fn update_guess(&mut self, _: &mut Scene, alpha: f64) -> SimResult {
        self.x += alpha * self.dx;
        Ok(())
    }
    fn squared_norm_dx(&self, _: &Scene) -> f64 {
        self.dx * self.dx
    }
    fn squared_norm_guess(&self, _: &Scene) -> f64 {
        self.x * self.x
    }
}

fn atan(x: f64) -> Atan {
    Atan { root: 0.0, x, r: 0.0, dx: 0.0, evaluated: Vec::new() }
}

#[test]
fn line_search_halves_the_step_until_the_residual_decreases() {
    let mut scene = Scene::new("root");
    let p = NewtonParams { max_iterations: 1, max_line_search: 4, ..NewtonParams::default() };
    let mut f = atan(2.0);
    let out = newton_raphson(&mut scene, &mut f, &p).unwrap();
    // dx = −atan(2)·5; the full step lands at 2 + dx ≈ −3.54 (|r| grows), the half step at
    // 2 + dx/2 ≈ −0.77 (|r| drops): two line-search evaluations after the initial one.
    let dx = -2f64.atan() * 5.0;
    assert_eq!(f.evaluated.len(), 3);
    assert_eq!(f.evaluated[1], 2.0 + dx);
    assert_eq!(f.evaluated[2], 2.0 + dx + (0.5 - 1.0) * dx);
    let (r0, r1) = (2f64.atan(), f.evaluated[2].atan());
    assert_eq!(out.residuals, vec![r0 * r0, r1 * r1]);
    assert!(out.line_search_failures.is_empty());
    assert_eq!(out.iterations, 1);
    assert_eq!(out.status, "DivergedMaxIterations");

    // Without line search the full step is kept, the failure recorded, and Newton diverges.
    let mut f = atan(2.0);
    let p = NewtonParams { max_iterations: 3, ..NewtonParams::default() };
    let out = newton_raphson(&mut scene, &mut f, &p).unwrap();
    assert_eq!(out.line_search_failures, vec![0, 1, 2]);
    assert!(out.residuals.windows(2).all(|w| w[1] > w[0]), "{:?}", out.residuals);
    assert_eq!(out.status, "DivergedMaxIterations");

    // A line search that never succeeds goes back to the full step.
    let mut f = atan(2.0);
    let p = NewtonParams { max_iterations: 1, max_line_search: 2, line_search_coefficient: 1.5, ..NewtonParams::default() };
    let out = newton_raphson(&mut scene, &mut f, &p).unwrap();
    assert_eq!(out.line_search_failures, vec![0]);
    assert_eq!(f.evaluated.len(), 4);
    assert!((f.evaluated[3] - (2.0 + dx)).abs() < 1e-15, "{:?}", f.evaluated);
}

#[test]
fn stopping_criteria_are_tested_in_sofas_order() {
    let mut scene = Scene::new("root");
    // From x = 0.5 Newton converges; the successive ratio test comes first.
    let base = NewtonParams { max_iterations: 20, ..NewtonParams::default() };
    let out = newton_raphson(&mut scene, &mut atan(0.5), &base).unwrap();
    assert_eq!(out.status, "ConvergedResidualSuccessiveRatio");
    assert_eq!(out.iterations, 3);
    // Only the absolute residual: r² < (1e-5)².
    let p = NewtonParams { relative_successive: 0.0, relative_initial: 0.0, ..base };
    let out = newton_raphson(&mut scene, &mut atan(0.5), &p).unwrap();
    assert_eq!(out.status, "ConvergedAbsoluteResidual");
    assert!(*out.residuals.last().unwrap() < 1e-10);
    assert!(out.residuals[out.residuals.len() - 2] >= 1e-10);
    // Only the estimate differences (the residual tests off), on atan(x − 1) from x = 1.5: the
    // corrections are −0.58, 0.080, −3.3e-4, so |dx| < 1e-3 and |dx| < 1e-2·|x_prev| both first
    // hold at the third iteration.
    let shifted = || Atan { root: 1.0, ..atan(1.5) };
    let p = NewtonParams { relative_successive: 0.0, relative_initial: 0.0, absolute_residual: 0.0, absolute_estimate_difference: 1e-3, ..base };
    let out = newton_raphson(&mut scene, &mut shifted(), &p).unwrap();
    assert_eq!((out.status, out.iterations), ("ConvergedAbsoluteEstimateDifference", 3));
    let p = NewtonParams { absolute_estimate_difference: 0.0, relative_estimate_difference: 1e-2, ..p };
    let out = newton_raphson(&mut scene, &mut shifted(), &p).unwrap();
    assert_eq!((out.status, out.iterations), ("ConvergedRelativeEstimateDifference", 3));
    // The relative test is relative to the guess: around the root 0 the corrections are as large
    // as the guesses and it never holds.
    let out = newton_raphson(&mut scene, &mut atan(0.5), &p).unwrap();
    assert_eq!(out.status, "DivergedMaxIterations");
    // Already at the root: the iterations do not start.
    let out = newton_raphson(&mut scene, &mut atan(1e-6), &base).unwrap();
    assert_eq!((out.status, out.iterations, out.residuals.len()), ("ConvergedEquilibrium", 0, 1));
}
