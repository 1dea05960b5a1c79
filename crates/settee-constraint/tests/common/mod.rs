//! What the integration tests of this crate share: the factory, the scenes of the
//! constraint-correction tests and the hand-built problems of the solver tests.
#![allow(dead_code)] // every test file uses its own part

use settee_core::constraint::{ConstraintCorrection, ConstraintOrder, ConstraintParams, ConstraintProblem, ConstraintResolution, DenseMatrix};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::simulation::{self, IsolatedInteractions};
use settee_core::{ComponentId, Factory, NodeId, Scene, SimResult, StateId, VecId};

/// The time step of the correction tests' scenes.
pub const DT: f64 = 0.01;
/// The mass of each particle of [`particle_pair`] in the tests that use one mass.
pub const MASS: f64 = 2.5;
/// The `rayleighMass` of [`euler_implicit`].
pub const RAYLEIGH_MASS: f64 = 0.3;

/// A factory with the states, masses, ODE solvers, linear solvers and this crate's classes.
pub fn factory() -> Factory {
    settee_statecontainer::factory_with(&[
        settee_mass::register,
        settee_odesolver::register,
        settee_linearsolver::register,
        settee_constraint::register,
    ])
}

pub fn add(scene: &mut Scene, f: &Factory, node: NodeId, class: &str, attrs: &[(&str, &str)]) -> ComponentId {
    settee_core::testing::add(scene, f, node, class, attrs)
}

/// An empty scene whose root has the time step `dt` and the given gravity.
pub fn root(dt: f64, gravity: [f64; 3]) -> Scene {
    let mut scene = Scene::new("root");
    scene.node_mut(Scene::ROOT).context.dt = dt;
    scene.node_mut(Scene::ROOT).context.gravity = gravity;
    scene
}

/// Adds to `n` an EulerImplicitSolver with `rayleighMass` [`RAYLEIGH_MASS`] and no Rayleigh
/// stiffness.
pub fn euler_implicit(scene: &mut Scene, f: &Factory, n: NodeId) {
    let rm = RAYLEIGH_MASS.to_string();
    add(scene, f, n, "EulerImplicitSolver", &[("rayleighMass", &rm), ("rayleighStiffness", "0")]);
}

/// Adds to `n` the particle pair of the correction tests: a Vec3 MechanicalObject at
/// `(0, 0, 0), (1, 0.5, −2)` moving at `(1, −2, 0.5), (0, 3, −1)`, with a UniformMass of `mass`
/// per particle. Returns the MechanicalObject.
pub fn particle_pair(scene: &mut Scene, f: &Factory, n: NodeId, mass: f64) -> ComponentId {
    let ms = add(scene, f, n, "MechanicalObject", &[("template", "Vec3d"), ("position", "0 0 0  1 0.5 -2"), ("velocity", "1 -2 0.5  0 3 -1")]);
    let m = mass.to_string();
    add(scene, f, n, "UniformMass", &[("vertexMass", &m)]);
    ms
}

/// Propagates the context and initialises the scene; returns the store id of `ms`.
pub fn init(scene: &mut Scene, f: &Factory, ms: ComponentId) -> SimResult<StateId> {
    scene.propagate_context();
    simulation::init_root(scene, f)?;
    Ok(scene.state_of(ms).unwrap())
}

/// The constraint parameters on the free state, with the multipliers' vector `lambda`.
pub fn cparams(lambda: VecId, order: ConstraintOrder, dt: f64) -> ConstraintParams {
    ConstraintParams { x: VecId::FREE_POSITION, v: VecId::FREE_VELOCITY, dx: VecId::DX, lambda, order, dt, time: 0.0 }
}

/// The free motion of the scene, then Jacobian rows written by hand: `(state, row, dof, block)`,
/// each state's rows replaced.
pub fn free_motion_and_rows(scene: &mut Scene, dt: f64, rows: &[(StateId, usize, usize, [f64; 3])]) -> SimResult {
    simulation::solve_all(scene, dt, VecId::FREE_POSITION, VecId::FREE_VELOCITY, IsolatedInteractions::AddToExternalForce)?;
    for &(st, ..) in rows {
        scene.store.get_mut(st).constraint = settee_core::ConstraintRows::new(3);
    }
    for &(st, r, dof, b) in rows {
        scene.store.get_mut(st).constraint.add(r, dof, &b);
    }
    Ok(())
}

/// A Λ vector over the root's scope, zeroed on its main states when `zero`.
pub fn lambda_vector(scene: &mut Scene, zero: bool) -> VecId {
    let scope = MechScope::build(scene, Scene::ROOT);
    let lambda = mech::alloc_deriv(scene, &scope);
    if zero {
        for &st in &scope.main_states {
            scene.store.get_mut(st).write(lambda).fill(0.0);
        }
    }
    lambda
}

/// The compliance W (`n` rows) of correction `c`.
pub fn compliance_of(scene: &mut Scene, c: ComponentId, cp: &ConstraintParams, n: usize) -> SimResult<DenseMatrix> {
    let mut w = DenseMatrix::zeros(n);
    scene.with_role::<dyn ConstraintCorrection, _>(c, |cc, scene| cc.add_compliance_in_constraint_space(scene, cp, &mut w))?;
    Ok(w)
}

/// The motion correction of `lambda` by correction `c`, applied to the positions and
/// velocities (and `dx` into DX).
pub fn correct_motion(scene: &mut Scene, c: ComponentId, cp: &ConstraintParams, lambda: &[f64]) -> SimResult {
    scene.with_role::<dyn ConstraintCorrection, _>(c, |cc, scene| {
        cc.compute_motion_correction_from_lambda(scene, cp, lambda)?;
        cc.apply_motion_correction(scene, cp, VecId::POSITION, VecId::VELOCITY, VecId::DX, VecId::DX)
    })
}

/// Checks W against `expected` (row-major), plus `regularization` on the diagonal of every row
/// but the empty row 2, and that row and column 2 are zero.
pub fn assert_w(w: &DenseMatrix, expected: &[f64], regularization: f64) {
    let n = w.n;
    for r in 0..n {
        for c in 0..n {
            let mut want = expected[r * n + c];
            if r == c && r != 2 {
                want += regularization;
            }
            let got = w.get(r, c);
            assert!((got - want).abs() <= 1e-15 * want.abs().max(1e-3), "W[{r}][{c}] = {got}, expected {want}");
        }
    }
    // Row and column 2 have no entry: nothing is added there.
    for k in 0..n {
        assert_eq!(w.get(2, k), 0.0);
        assert_eq!(w.get(k, 2), 0.0);
    }
}

/// The error of a set-up that must fail: the init error, or the scene's messages.
pub fn failure(r: SimResult<Scene>) -> String {
    match r {
        Err(e) => e.to_string(),
        Ok(scene) => scene.messages.iter().map(|m| m.to_string()).collect::<Vec<_>>().join("\n"),
    }
}

/// A problem on `w` with `dfree`, the resolutions in row order and the solver settings (no
/// over-relaxation, `allVerified` off); returns it with the number of rows the resolutions
/// cover.
pub fn problem(
    w: DenseMatrix,
    dfree: &[f64],
    res: Vec<Box<dyn ConstraintResolution>>,
    tol: f64,
    max_it: usize,
    scale_tolerance: bool,
) -> (ConstraintProblem, usize) {
    let mut p = ConstraintProblem::default();
    p.clear(w.n);
    p.w = w;
    p.dfree = dfree.to_vec();
    let mut line = 0;
    for r in res {
        let nb = r.nb_lines();
        p.resolutions[line] = Some(r);
        line += nb;
    }
    p.tolerance = tol;
    p.max_iterations = max_it;
    p.scale_tolerance = scale_tolerance;
    p.all_verified = false;
    p.sor = 1.0;
    (p, line)
}
