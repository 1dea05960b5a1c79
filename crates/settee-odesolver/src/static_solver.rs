//! `StaticSolver`: the static equilibrium `f(x) = 0`, solved by a `NewtonRaphsonSolver`
//! (mechanics spec §3.8).
//!
//! The residual is the projected force `P f(x)` at the positions `x` (the result vector); the
//! Newton correction solves `−K dx = P f` (system factors `m = 0, b = 0, k = −1`) with the linear
//! solver; the guess moves by `x += α dx` and the positions are propagated to the mapped states.
//! Velocities are not touched.

use settee_core::component::{LinearSolver, OdeSolver};
use settee_core::data_ref::Real;
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{component, Component, ComponentId, DataRef, InitCtx, Mbk, Scene, SimError, SimResult, VecId};

use crate::euler_implicit::{check_solves_systems, find_linear_solver};
use crate::newton_raphson::{NonLinearFunction, NonLinearSolver, NON_LINEAR_SOLVER};

/// Static ODE Solver
#[component(
    module = "Sofa.Component.ODESolver.Backward",
    roles = [OdeSolver],
    data = {
        /// removed from SOFA (v25.12): set maxNbIterationsNewton on the NewtonRaphsonSolver; still forwarded to a Newton solver this solver creates
        newton_iterations: Real,
        /// removed from SOFA (v25.12): set absoluteEstimateDifferenceThreshold on the NewtonRaphsonSolver; still forwarded to a Newton solver this solver creates
        absolute_correction_tolerance_threshold: Real,
        /// removed from SOFA (v25.12): set relativeEstimateDifferenceThreshold on the NewtonRaphsonSolver; still forwarded to a Newton solver this solver creates
        relative_correction_tolerance_threshold: Real,
        /// removed from SOFA (v25.12): set absoluteResidualStoppingThreshold on the NewtonRaphsonSolver; still forwarded to a Newton solver this solver creates
        absolute_residual_tolerance_threshold: Real,
        /// removed from SOFA (v25.12): forwarded, as SOFA does, to relativeEstimateDifferenceThreshold of a Newton solver this solver creates
        relative_residual_tolerance_threshold: Real,
        /// removed from SOFA (v25.12) and ignored
        should_diverge_when_residual_is_growing: Real,
    },
    links = {
        /// Link to a NewtonRaphsonSolver (default: the first one found from the node downwards; if none, one is created with default Data)
        newtonSolver: NonLinearSolver,
        /// Linear solver used by this component (default: the first linear solver found from the node downwards)
        linearSolver: LinearSolver,
    },
)]
#[derive(Clone, Default)]
pub struct StaticSolver {
    newton: Option<ComponentId>,
    linear_solver: Option<ComponentId>,
}

/// The deprecated attributes and the NewtonRaphsonSolver Data SOFA forwards them to.
const FORWARDED: [(DataRef<Real>, &str); 5] = [
    (StaticSolver::NEWTON_ITERATIONS, "maxNbIterationsNewton"),
    (StaticSolver::ABSOLUTE_CORRECTION_TOLERANCE_THRESHOLD, "absoluteEstimateDifferenceThreshold"),
    (StaticSolver::RELATIVE_CORRECTION_TOLERANCE_THRESHOLD, "relativeEstimateDifferenceThreshold"),
    (StaticSolver::ABSOLUTE_RESIDUAL_TOLERANCE_THRESHOLD, "absoluteResidualStoppingThreshold"),
    (StaticSolver::RELATIVE_RESIDUAL_TOLERANCE_THRESHOLD, "relativeEstimateDifferenceThreshold"),
];

/// The `newtonSolver` link, else the first nonlinear solver found from the node downwards.
pub(crate) fn find_newton_solver(cx: &InitCtx) -> Option<ComponentId> {
    cx.link_targets("newtonSolver").first().copied().or_else(|| cx.scene.find_down(cx.node(), NON_LINEAR_SOLVER))
}

impl Component for StaticSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let mut given: Vec<(&str, String)> = Vec::new();
        for (old, new) in FORWARDED {
            if cx.data().is_given(old) {
                given.push((new, settee_core::data::format_real(cx.data().get(old))));
                cx.warn(format!(
                    "the attribute '{}' is no longer defined in this component: define '{new}' in the NewtonRaphsonSolver associated with this StaticSolver",
                    old.name()
                ));
            }
        }
        if cx.data().is_given(Self::SHOULD_DIVERGE_WHEN_RESIDUAL_IS_GROWING) {
            cx.warn("the attribute 'should_diverge_when_residual_is_growing' was removed from SOFA: ignored");
        }
        self.linear_solver = find_linear_solver(cx);
        let Some(ls) = self.linear_solver else {
            return Err(cx.error("a linear solver is required by this component but none was found in this node or below").hint(
                "add e.g. <SparseLDLSolver template=\"CompressedRowSparseMatrixMat3x3d\"/> or <CGLinearSolver iterations=\"25\" tolerance=\"1e-9\" threshold=\"1e-9\"/> next to the solver",
            ));
        };
        check_solves_systems(cx, ls)?;
        self.newton = find_newton_solver(cx);
        if self.newton.is_none() {
            // As SOFA: create one with default Data, set from the deprecated attributes.
            let node = cx.node();
            let attrs: Vec<(&str, &str)> = given.iter().map(|(n, v)| (*n, v.as_str())).collect();
            let id = cx.scene.create_component(node, "NewtonRaphsonSolver", None, &attrs)?;
            settee_core::simulation::init_components(cx.scene, &[id])?;
            cx.warn("a NewtonRaphsonSolver is required by this component but none was found: one was created with default Data");
            self.newton = Some(id);
        }
        Ok(())
    }
}

/// SOFA's `StaticResidualFunction`: `r(x) = P f(x)`, Jacobian `−K`.
struct StaticResidual<'a> {
    scope: &'a MechScope,
    x: VecId,
    v: VecId,
    linear_solver: ComponentId,
}

impl NonLinearFunction for StaticResidual<'_> {
    fn evaluate(&mut self, scene: &mut Scene) -> SimResult {
        settee_core::simulation::timed(scene, "compute force", |s| mech::compute_force(s, self.scope, VecId::FORCE, self.x, self.v))?;
        mech::project_response(scene, self.scope, VecId::FORCE)
    }
    fn squared_norm_last_evaluation(&self, scene: &Scene) -> f64 {
        mech::v_dot(scene, self.scope, VecId::FORCE, VecId::FORCE)
    }
    fn compute_gradient(&mut self, _scene: &mut Scene) -> SimResult {
        // The linear solver assembles −K when it solves.
        Ok(())
    }
    fn solve_linear_equation(&mut self, scene: &mut Scene) -> SimResult {
        let (ls, scope) = (self.linear_solver, self.scope);
        let factors = Mbk { m: 0.0, b: 0.0, k: -1.0 };
        settee_core::simulation::timed(scene, "linear solve", |s| {
            if s.role::<dyn LinearSolver>(ls).is_none() {
                return Err(SimError::new("StaticSolver: its linear solver cannot solve systems (a preconditioner)"));
            }
            s.with_role::<dyn LinearSolver, _>(ls, |l, s| l.solve_system(s, scope, factors, VecId::FORCE, VecId::DX))
        })
    }
    fn update_guess(&mut self, scene: &mut Scene, alpha: f64) -> SimResult {
        mech::v_op(scene, self.scope, self.x, Some(self.x), Some(VecId::DX), alpha);
        mech::propagate_position(scene, self.scope, self.x)
    }
    fn squared_norm_dx(&self, scene: &Scene) -> f64 {
        mech::v_dot(scene, self.scope, VecId::DX, VecId::DX)
    }
    fn squared_norm_guess(&self, scene: &Scene) -> f64 {
        mech::v_dot(scene, self.scope, self.x, self.x)
    }
}

impl OdeSolver for StaticSolver {
    /// SOFA: velocity factor 1, position factor `dt`.
    fn integration_factors(&self, dt: f64) -> settee_core::constraint::IntegrationFactors {
        settee_core::constraint::IntegrationFactors { position: dt, velocity: 1.0 }
    }
    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, _h: f64, x_result: VecId, _v_result: VecId) -> SimResult {
        let (Some(newton), Some(linear_solver)) = (self.newton, self.linear_solver) else {
            return Err(SimError::new("StaticSolver was not initialised"));
        };
        mech::realloc(scene, scope, VecId::DX);
        let mut residual = StaticResidual { scope, x: x_result, v: VecId::VELOCITY, linear_solver };
        scene.with_role::<dyn NonLinearSolver, _>(newton, |n, s| n.solve_nonlinear(s, &mut residual))
    }
}
