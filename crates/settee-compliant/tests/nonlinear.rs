//! CompliantNLImplicitSolver (compliant spec §11, §14.5) on the particle strings of §14.1: after
//! one backward-Euler step, an explicit step backwards with the forces at the end state (the
//! compliance counted as a stiffness) returns to the start.

mod support;

use settee_compliant::nonlinear::CompliantNLImplicitSolver;
use settee_core::simulation::{animate, init_root};
use settee_core::testing::add;
use settee_core::{ComponentId, Scene, StateId, VecId};
use support::factory;

const COMPLIANCE: f64 = 1e-3;

struct Fixture {
    scene: Scene,
    solver: ComponentId,
    dofs: StateId,
    /// Edges and their rest length.
    edges: Vec<(usize, usize)>,
    rest: f64,
    fixed: Vec<usize>,
    mass: f64,
    gravity: [f64; 3],
    dt: f64,
}

/// A string of particles (§14 fixture): `positions` (3 per particle), unit mass per particle,
/// consecutive edges with rest length `rest`, a DistanceMapping and a UniformCompliance
/// `compliance` ([`COMPLIANCE`] but for hard strings).
#[allow(clippy::too_many_arguments)] // the scene's parameters
fn string(
    solver_class: &str,
    solver: &[(&str, &str)],
    positions: &[f64],
    velocities: &[f64],
    rest: f64,
    fixed: &[usize],
    is_compliance: bool,
    compliance: f64,
    gravity: [f64; 3],
    dt: f64,
) -> Fixture {
    let f = factory();
    let mut s = Scene::new("root");
    s.node_mut(Scene::ROOT).context.gravity = gravity;
    s.node_mut(Scene::ROOT).context.dt = dt;
    let solver = add(&mut s, &f, Scene::ROOT, solver_class, solver);
    // The response before the KKT solver: DirectKktSolver reads the node's response kind at its
    // own init, before a later LDLTResponse has read its Data.
    add(&mut s, &f, Scene::ROOT, "LDLTResponse", &[]);
    add(&mut s, &f, Scene::ROOT, "LDLTSolver", &[]);
    let node = s.add_node(Scene::ROOT, "string");
    let txt = |v: &[f64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ");
    let n = positions.len() / 3;
    let mo = add(&mut s, &f, node, "MechanicalObject", &[("template", "Vec3d"), ("position", &txt(positions)), ("velocity", &txt(velocities))]);
    add(&mut s, &f, node, "UniformMass", &[("totalMass", &n.to_string())]);
    let idx = fixed.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" ");
    add(&mut s, &f, node, "FixedConstraint", &[("indices", &idx)]);
    let child = s.add_node(node, "distances");
    let edges: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
    let etxt = edges.iter().map(|(a, b)| format!("{a} {b}")).collect::<Vec<_>>().join(" ");
    add(&mut s, &f, child, "EdgeSetTopologyContainer", &[("edges", &etxt)]);
    add(&mut s, &f, child, "MechanicalObject", &[("template", "Vec1d")]);
    let rtxt = vec![rest.to_string(); edges.len()].join(" ");
    add(&mut s, &f, child, "DistanceMapping", &[("restLengths", &rtxt)]);
    add(&mut s, &f, child, "UniformCompliance", &[("compliance", &compliance.to_string()), ("isCompliance", if is_compliance { "1" } else { "0" })]);
    init_root(&mut s, &f).expect("init");
    assert!(!s.has_errors(), "{:?}", s.messages);
    let dofs = s.state_of(mo).unwrap();
    Fixture { scene: s, solver, dofs, edges, rest, fixed: fixed.to_vec(), mass: 1.0, gravity, dt }
}

impl Fixture {
    /// The force at positions `x` (compliance as a stiffness 1/c, plus gravity).
    fn force(&self, x: &[f64]) -> Vec<f64> {
        let k = 1.0 / COMPLIANCE;
        let mut f = vec![0.0; x.len()];
        for p in 0..x.len() / 3 {
            for c in 0..3 {
                f[3 * p + c] += self.mass * self.gravity[c];
            }
        }
        for &(a, b) in &self.edges {
            let d: Vec<f64> = (0..3).map(|c| x[3 * b + c] - x[3 * a + c]).collect();
            let l = d.iter().map(|v| v * v).sum::<f64>().sqrt();
            for c in 0..3 {
                let fc = -k * (l - self.rest) * d[c] / l;
                f[3 * b + c] += fc;
                f[3 * a + c] -= fc;
            }
        }
        f
    }

    /// One step; returns `(x0, v0, x1, v1)` of the particles.
    fn step(&mut self) -> [Vec<f64>; 4] {
        let x0 = self.scene.vec(self.dofs, VecId::POSITION).to_vec();
        let v0 = self.scene.vec(self.dofs, VecId::VELOCITY).to_vec();
        animate(&mut self.scene, self.dt).expect("step");
        let x1 = self.scene.vec(self.dofs, VecId::POSITION).to_vec();
        let v1 = self.scene.vec(self.dofs, VecId::VELOCITY).to_vec();
        [x0, v0, x1, v1]
    }

    /// `(max |x1 − h v1 − x0|, max |v1 − h f(x1)/m − v0|)` over the free particles.
    fn backward_errors(&self, [x0, v0, x1, v1]: &[Vec<f64>; 4]) -> (f64, f64) {
        let f1 = self.force(x1);
        let h = self.dt;
        let (mut ex, mut ev) = (0.0f64, 0.0f64);
        for i in 0..x0.len() {
            if self.fixed.contains(&(i / 3)) {
                assert_eq!(x1[i], x0[i]);
                assert_eq!(v1[i], 0.0);
                continue;
            }
            ex = ex.max((x1[i] - h * v1[i] - x0[i]).abs());
            ev = ev.max((v1[i] - h * f1[i] / self.mass - v0[i]).abs());
        }
        (ex, ev)
    }

    fn solver(&self) -> &CompliantNLImplicitSolver {
        self.scene.get::<CompliantNLImplicitSolver>(self.solver).expect("the NL solver")
    }
}

const ONE_ITERATION: &[(&str, &str)] = &[("iterations", "1"), ("precision", "1e-6"), ("stabilization", "0")];

/// The §14.1 spring along x: particle 0 fixed at the origin, particle 1 at `x` moving at `v`,
/// rest length 1, no gravity, dt = 0.1, one iteration of CompliantNLImplicitSolver.
fn linear_spring(x: f64, v: f64, is_compliance: bool) -> Fixture {
    string(
        "CompliantNLImplicitSolver",
        ONE_ITERATION,
        &[0., 0., 0., x, 0., 0.],
        &[0., 0., 0., v, 0., 0.],
        1.0,
        &[0],
        is_compliance,
        COMPLIANCE,
        [0.0; 3],
        0.1,
    )
}

#[test]
fn linear_v100_one_iteration_is_the_linear_step() {
    // §14.1 numbers: v = 1/11, x = 1 + 0.1/11.
    for is_compliance in [false, true] {
        let mut fx = linear_spring(1.0, 1.0, is_compliance);
        let st = fx.step();
        assert!((st[3][3] - 1.0 / 11.0).abs() < 1e-12, "v = {}", st[3][3]);
        assert!((st[2][3] - (1.0 + 0.1 / 11.0)).abs() < 1e-12, "x = {}", st[2][3]);
        let (ex, ev) = fx.backward_errors(&st);
        assert!(ex < 1e-6 && ev < 1e-6, "compliance={is_compliance}: backward errors {ex:e} {ev:e}");
    }
}

#[test]
fn linear_x200_one_iteration_returns_backwards() {
    for is_compliance in [false, true] {
        let mut fx = linear_spring(2.0, 0.0, is_compliance);
        let st = fx.step();
        assert!((st[3][3] + 100.0 / 11.0).abs() < 1e-9, "v = {}", st[3][3]);
        assert!(st[2][3] > 1.0, "the spring must not invert: x = {}", st[2][3]);
        let (ex, ev) = fx.backward_errors(&st);
        assert!(ex < 1e-6 && ev < 1e-6, "compliance={is_compliance}: backward errors {ex:e} {ev:e}");
    }
}

#[test]
fn gravity_orthogonal_to_the_spring_converges_in_three_iterations() {
    // §14.5: g = (0, 100, 0), dt = 4.1, 3 iterations, newtonStepLength 0.1 for the compliance.
    for (is_compliance, step) in [(false, "1"), (true, "0.1")] {
        let attrs = [
            ("iterations", "3"),
            ("precision", "1e-6"),
            ("newtonStepLength", step),
            ("stabilization", "0"),
            ("neglecting_compliance_forces_in_geometric_stiffness", "0"),
        ];
        let mut fx = string(
            "CompliantNLImplicitSolver",
            &attrs,
            &[0., 0., 0., 1., 0., 0.],
            &[0.0; 6],
            1.0,
            &[0],
            is_compliance,
            COMPLIANCE,
            [0.0, 100.0, 0.0],
            4.1,
        );
        let st = fx.step();
        let (ex, ev) = fx.backward_errors(&st);
        let s = fx.solver();
        assert!(
            ex < 1e-6 && ev < 1e-6,
            "compliance={is_compliance}: backward errors {ex:e} {ev:e} after {} iterations (residual {:e})",
            s.last_iterations(),
            s.last_residual()
        );
        // The problem is nonlinear: the linearized step alone is not a solution.
        assert!(s.last_iterations() >= 1);
    }
}

#[test]
fn gravity_case_with_one_iteration_is_not_converged() {
    // The same scene with the linearized step only fails the backward check: the Newton
    // iterations are what makes the test above pass.
    let attrs = [("iterations", "1"), ("stabilization", "0")];
    let mut fx =
        string("CompliantNLImplicitSolver", &attrs, &[0., 0., 0., 1., 0., 0.], &[0.0; 6], 1.0, &[0], false, COMPLIANCE, [0.0, 100.0, 0.0], 4.1);
    let st = fx.step();
    let (ex, ev) = fx.backward_errors(&st);
    assert!(ex.max(ev) > 1e-3, "backward errors {ex:e} {ev:e}");
}

#[test]
fn nonlinear_v_shape_converges() {
    // §14.5: 3 particles, both ends fixed, the middle one pulled by the stretched second spring.
    for is_compliance in [false, true] {
        let attrs = [("iterations", "10"), ("precision", "1e-6"), ("stabilization", "0")];
        let mut fx =
            string("NewtonSolver", &attrs, &[0., 0., 0., 1., 0., 0., 0., 1., 0.], &[0.0; 9], 1.0, &[0, 2], is_compliance, COMPLIANCE, [0.0; 3], 1.0);
        let st = fx.step();
        let (ex, ev) = fx.backward_errors(&st);
        assert!(ex < 1e-6 && ev < 1e-5, "compliance={is_compliance}: backward errors {ex:e} {ev:e}");
    }
}

/// The hard V: particles (0,0,0), (1,0,0), (0,1,0) at rest, the two ends fixed, edges of rest
/// length 1 with compliance 0, no gravity, dt = 1, the solver's Data `attrs`.
fn hard_v_shape(attrs: &[(&str, &str)]) -> Fixture {
    string("CompliantNonLinearImplicitSolver", attrs, &[0., 0., 0., 1., 0., 0., 0., 1., 0.], &[0.0; 9], 1.0, &[0, 2], true, 0.0, [0.0; 3], 1.0)
}

/// The distance between particles `a` and `b` of `x`.
fn length(x: &[f64], a: usize, b: usize) -> f64 {
    (0..3).map(|c| (x[3 * b + c] - x[3 * a + c]).powi(2)).sum::<f64>().sqrt()
}

#[test]
fn hard_v_shape_reaches_the_rest_lengths() {
    // compliance 0 (hard constraints), no stabilization: the Newton iterations solve φ(x1) = 0,
    // so after one step both edges have their rest length, the middle particle sits where the
    // unit circles around (0,0,0) and (0,1,0) meet, (√3/2, 1/2, 0), and x1 = x0 + h·v1.
    let attrs = [("stabilization", "0")];
    let mut fx = hard_v_shape(&attrs);
    let [x0, _, x1, v1] = fx.step();
    for (a, b) in [(0, 1), (1, 2)] {
        let l = length(&x1, a, b);
        assert!((l - 1.0).abs() < 1e-6, "edge {a}-{b}: length {l}");
    }
    for i in 3..6 {
        assert!((x1[i] - x0[i] - v1[i]).abs() < 1e-12, "x1 − x0 − h v1 = {}", x1[i] - x0[i] - v1[i]);
    }
    let expect = [3f64.sqrt() / 2.0, 0.5, 0.0];
    for c in 0..3 {
        assert!((x1[3 + c] - expect[c]).abs() < 1e-6, "{:?}", &x1[3..6]);
    }
    assert!(fx.solver().last_iterations() > 1, "a nonlinear problem");

    // With the default Data (pre-stabilization, run as a post-stabilization with assembly) the
    // step runs and the post-stabilization brings the violation well below the initial √2 − 1.
    let mut fx = hard_v_shape(&[]);
    let [_, _, x1, _] = fx.step();
    let l = length(&x1, 1, 2);
    assert!((l - 1.0).abs() < 0.2, "edge 1-2: length {l}");
}
