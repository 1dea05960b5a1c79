//! `NewtonRaphsonSolver`: SOFA's generic Newton-Raphson method with a backtracking line search
//! (mechanics spec §3.8). It is not an ODE solver: `StaticSolver` and `BDFOdeSolver` hand it
//! their nonlinear function ([`NonLinearFunction`]) and it iterates until one of its stopping
//! criteria holds or `maxNbIterationsNewton` is reached.
//!
//! All norms are squared, as in SOFA: each threshold `t` is compared as `t²`.

use settee_core::role::RoleId;
use settee_core::{component, Component, ComponentId, Diagnostic, InitCtx, Scene, SimResult};

/// A nonlinear function `r(x)` whose root the Newton-Raphson method looks for. The function owns
/// its guess `x`, its last evaluation `r(x)` and the Newton correction `dx` (in the scene's
/// state vectors); the method only sees squared norms.
pub trait NonLinearFunction {
    /// Evaluates `r` at the current guess.
    fn evaluate(&mut self, scene: &mut Scene) -> SimResult;
    /// `r·r` of the last evaluation.
    fn squared_norm_last_evaluation(&self, scene: &Scene) -> f64;
    /// Builds what the linear equation `J_r dx = −r` needs at the current guess.
    fn compute_gradient(&mut self, scene: &mut Scene) -> SimResult;
    /// Solves `J_r dx = −r` for the Newton correction.
    fn solve_linear_equation(&mut self, scene: &mut Scene) -> SimResult;
    /// `x += α·dx`.
    fn update_guess(&mut self, scene: &mut Scene, alpha: f64) -> SimResult;
    /// `dx·dx`.
    fn squared_norm_dx(&self, scene: &Scene) -> f64;
    /// `x·x` of the current guess (the reference of the relative estimate-difference test).
    fn squared_norm_guess(&self, scene: &Scene) -> f64;
}

/// The role of a nonlinear solver: what `StaticSolver` and `BDFOdeSolver` call.
pub trait NonLinearSolver {
    fn solve_nonlinear(&mut self, scene: &mut Scene, function: &mut dyn NonLinearFunction) -> SimResult;
}

/// The [`NonLinearSolver`] role, for lookups.
pub const NON_LINEAR_SOLVER: RoleId = RoleId::of::<dyn NonLinearSolver>("NonLinearSolver");

/// SOFA's `NewtonStatus` items.
const STATUS: &[&str] = &[
    "Undefined",
    "Running",
    "ConvergedEquilibrium",
    "DivergedLineSearch",
    "DivergedMaxIterations",
    "ConvergedResidualSuccessiveRatio",
    "ConvergedResidualInitialRatio",
    "ConvergedAbsoluteResidual",
    "ConvergedRelativeEstimateDifference",
    "ConvergedAbsoluteEstimateDifference",
];

/// Generic Newton-Raphson algorithm solving nonlinear equations.
#[component(
    module = "Sofa.Component.ODESolver.Backward",
    roles = [NonLinearSolver],
    data = {
        /// Maximum number of iterations of the Newton's method if it has not converged.
        maxNbIterationsNewton: Int = "1",
        /// Threshold for the relative successive progress criterion: the iterations stop when the norm of the residual at iteration k over its norm at iteration k-1 is lower than this threshold.
        relativeSuccessiveStoppingThreshold: Real = "1e-5",
        /// Threshold for the relative initial progress criterion: the iterations stop when the norm of the residual at iteration k over its norm at iteration 0 is lower than this threshold.
        relativeInitialStoppingThreshold: Real = "1e-5",
        /// Threshold for the absolute function value stopping criterion: the iterations stop when the norm of the residual is lower than this threshold.
        absoluteResidualStoppingThreshold: Real = "1e-5",
        /// Threshold for the relative change in root estimate criterion: the iterations stop when the difference between two successive estimates divided by the previous estimate is smaller than this threshold (0: not tested).
        relativeEstimateDifferenceThreshold: Real = "0",
        /// Threshold for the absolute change in root estimate criterion: the iterations stop when the difference between two successive estimates is smaller than this threshold (0: not tested).
        absoluteEstimateDifferenceThreshold: Real = "0",
        /// Maximum number of iterations of the line search method if it has not converged (values below 1 count as 1).
        maxNbIterationsLineSearch: Int = "1",
        /// Line search coefficient
        lineSearchCoefficient: Real = "0.5",
        /// Update the states within the last iteration even if the iterative process is considered diverged (SOFA does not read it either).
        updateStateWhenDiverged: Bool = "true",
        /// status of the last solve (output): Undefined, Running, ConvergedEquilibrium, DivergedLineSearch, DivergedMaxIterations, ConvergedResidualSuccessiveRatio, ConvergedResidualInitialRatio, ConvergedAbsoluteResidual, ConvergedRelativeEstimateDifference or ConvergedAbsoluteEstimateDifference
        status: Options(STATUS) = "Undefined",
        /// Graph of the residual over the iterations (output): the squared residual norm before the first iteration and after each one
        residualGraph: Reals,
        /// Trigger a warning if line search fails
        warnWhenLineSearchFails: Bool = "true",
        /// Trigger a warning if Newton-Raphson diverges
        warnWhenDiverge: Bool = "true",
    },
)]
#[derive(Clone, Default)]
pub struct NewtonRaphsonSolver {
    me: Option<ComponentId>,
    params: NewtonParams,
    /// Newton iterations of the last solve.
    iterations: usize,
    warned_line_search: bool,
    warned_diverged: bool,
}

/// The Data the algorithm reads.
#[derive(Clone, Copy, Debug)]
pub struct NewtonParams {
    pub max_iterations: usize,
    pub relative_successive: f64,
    pub relative_initial: f64,
    pub absolute_residual: f64,
    pub relative_estimate_difference: f64,
    pub absolute_estimate_difference: f64,
    pub max_line_search: usize,
    pub line_search_coefficient: f64,
    pub warn_line_search: bool,
    pub warn_diverge: bool,
}

impl Default for NewtonParams {
    fn default() -> Self {
        NewtonParams {
            max_iterations: 1,
            relative_successive: 1e-5,
            relative_initial: 1e-5,
            absolute_residual: 1e-5,
            relative_estimate_difference: 0.0,
            absolute_estimate_difference: 0.0,
            max_line_search: 1,
            line_search_coefficient: 0.5,
            warn_line_search: true,
            warn_diverge: true,
        }
    }
}

/// What one solve did: its final status, the squared residual norms (initial, then one per
/// iteration) and the number of Newton iterations.
#[derive(Clone, Debug, PartialEq)]
pub struct NewtonOutcome {
    pub status: &'static str,
    pub residuals: Vec<f64>,
    pub iterations: usize,
    /// Iterations whose line search failed.
    pub line_search_failures: Vec<usize>,
}

impl NewtonRaphsonSolver {
    /// Newton iterations of the last solve.
    pub fn iterations(&self) -> usize {
        self.iterations
    }
}

impl Component for NewtonRaphsonSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        let d = cx.data();
        let count = |v: i64| v.max(0) as usize;
        self.params = NewtonParams {
            max_iterations: count(d.get(Self::MAX_NB_ITERATIONS_NEWTON)),
            relative_successive: d.get(Self::RELATIVE_SUCCESSIVE_STOPPING_THRESHOLD),
            relative_initial: d.get(Self::RELATIVE_INITIAL_STOPPING_THRESHOLD),
            absolute_residual: d.get(Self::ABSOLUTE_RESIDUAL_STOPPING_THRESHOLD),
            relative_estimate_difference: d.get(Self::RELATIVE_ESTIMATE_DIFFERENCE_THRESHOLD),
            absolute_estimate_difference: d.get(Self::ABSOLUTE_ESTIMATE_DIFFERENCE_THRESHOLD),
            max_line_search: count(d.get(Self::MAX_NB_ITERATIONS_LINE_SEARCH)).max(1),
            line_search_coefficient: d.get(Self::LINE_SEARCH_COEFFICIENT),
            warn_line_search: d.get(Self::WARN_WHEN_LINE_SEARCH_FAILS),
            warn_diverge: d.get(Self::WARN_WHEN_DIVERGE),
        };
        if d.get(Self::MAX_NB_ITERATIONS_NEWTON) < 0 || d.get(Self::MAX_NB_ITERATIONS_LINE_SEARCH) < 0 {
            return Err(cx.error("maxNbIterationsNewton and maxNbIterationsLineSearch are unsigned in SOFA: a negative value is refused"));
        }
        Ok(())
    }
}

/// A threshold is tested only when positive; it is compared squared.
fn measured(threshold: f64) -> Option<f64> {
    (threshold > 0.0).then_some(threshold * threshold)
}

/// SOFA's Newton-Raphson loop on `function` (with its line search and its stopping criteria in
/// SOFA's order), independent of any component.
pub fn newton_raphson(scene: &mut Scene, function: &mut dyn NonLinearFunction, p: &NewtonParams) -> SimResult<NewtonOutcome> {
    function.evaluate(scene)?;
    let mut r = function.squared_norm_last_evaluation(scene);
    let mut out = NewtonOutcome { status: "Running", residuals: vec![r], iterations: 0, line_search_failures: Vec::new() };

    if p.absolute_residual > 0.0 && r <= p.absolute_residual * p.absolute_residual {
        out.status = "ConvergedEquilibrium";
        return Ok(out);
    }
    let first = r;
    let mut converged = false;
    while out.iterations < p.max_iterations {
        let previous = r;
        let previous_guess = measured(p.relative_estimate_difference).map(|_| function.squared_norm_guess(scene));
        function.compute_gradient(scene)?;
        function.solve_linear_equation(scene)?;

        // Backtracking: x moves by the difference between the new and the previous step length.
        let (mut alpha, mut previous_alpha) = (1.0, 0.0);
        let mut success = false;
        for _ in 0..p.max_line_search {
            function.update_guess(scene, alpha - previous_alpha)?;
            function.evaluate(scene)?;
            r = function.squared_norm_last_evaluation(scene);
            if r < previous {
                success = true;
                break;
            }
            previous_alpha = alpha;
            alpha *= p.line_search_coefficient;
        }
        if !success {
            out.line_search_failures.push(out.iterations);
            out.status = "DivergedLineSearch";
            if p.max_line_search > 1 {
                // Back to the full step.
                function.update_guess(scene, 1.0 - previous_alpha)?;
                function.evaluate(scene)?;
                r = function.squared_norm_last_evaluation(scene);
            }
        }
        out.residuals.push(r);

        let status = if measured(p.relative_successive).is_some_and(|t| r < t * previous) {
            Some("ConvergedResidualSuccessiveRatio")
        } else if measured(p.relative_initial).is_some_and(|t| r < t * first) {
            Some("ConvergedResidualInitialRatio")
        } else if measured(p.absolute_residual).is_some_and(|t| r < t) {
            Some("ConvergedAbsoluteResidual")
        } else {
            let rel = measured(p.relative_estimate_difference);
            let abs = measured(p.absolute_estimate_difference);
            if rel.is_some() || abs.is_some() {
                let dx = function.squared_norm_dx(scene);
                let reference = previous_guess.unwrap_or(0.0);
                if rel.is_some_and(|t| reference > 0.0 && dx < reference * t) {
                    Some("ConvergedRelativeEstimateDifference")
                } else if abs.is_some_and(|t| dx < t) {
                    Some("ConvergedAbsoluteEstimateDifference")
                } else {
                    None
                }
            } else {
                None
            }
        };
        if let Some(s) = status {
            out.status = s;
            converged = true;
            break;
        }
        out.iterations += 1;
    }
    if converged {
        // The iteration that converged left the loop before being counted.
        out.iterations += 1;
    } else {
        out.status = "DivergedMaxIterations";
    }
    Ok(out)
}

impl NonLinearSolver for NewtonRaphsonSolver {
    fn solve_nonlinear(&mut self, scene: &mut Scene, function: &mut dyn NonLinearFunction) -> SimResult {
        let me = self.me;
        if let Some(me) = me {
            scene.entry_mut(me).data.put(Self::STATUS, "Running".to_string());
        }
        let out = newton_raphson(scene, function, &self.params)?;
        self.iterations = out.iterations;
        let Some(me) = me else { return Ok(()) };
        if !out.line_search_failures.is_empty() && self.params.warn_line_search && !self.warned_line_search {
            self.warned_line_search = true;
            let it = out.line_search_failures[0];
            self.warn(scene, me, format!("line search failed at Newton iteration {it} (reported once)"));
        }
        if out.status == "DivergedMaxIterations" && self.params.warn_diverge && !self.warned_diverged {
            self.warned_diverged = true;
            let r = out.residuals.last().copied().unwrap_or(0.0);
            self.warn(
                scene,
                me,
                format!(
                    "Newton-Raphson method failed to converge after {} iteration(s) with residual squared norm = {r:e} (reported once)",
                    out.iterations
                ),
            );
        }
        let data = &mut scene.entry_mut(me).data;
        data.put(Self::STATUS, out.status.to_string());
        data.put(Self::RESIDUAL_GRAPH, out.residuals);
        Ok(())
    }
}

impl NewtonRaphsonSolver {
    fn warn(&self, scene: &mut Scene, me: ComponentId, message: String) {
        let e = scene.entry(me);
        let d = Diagnostic::warning(message).at(e.pos.clone()).subject(e.label());
        scene.report(d);
    }
}
