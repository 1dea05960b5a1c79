//! `CGLinearSolver`: SOFA's conjugate gradient (mechanics spec §4.2), matrix-free
//! (`GraphScattered`) or on an assembled matrix.

use settee_core::component::LinearSolver;
use settee_core::mechanics::MechScope;
use settee_core::role::LinearSystem;
use settee_core::{Component, ComponentId, CreateArgs, InitCtx, Mbk, Scene, SimResult, VecId};

use crate::common::{iterative_solver_component, step_warning, AssembledSystem, MatrixSolverData, ResidualGraphData, GRAPH_SCATTERED};
use crate::space::{with_temps, AssembledSpace, GraphSpace, VectorSpace};

/// Parameters of [`cg`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgParams {
    /// Maximum number of iterations.
    pub iterations: u64,
    /// Stop when `‖r‖/‖b‖ ≤ tolerance`.
    pub tolerance: f64,
    /// Stop when `|pᵀAp| ≤ threshold` (tested before the update of `x`).
    pub threshold: f64,
    /// Start from the given `x` instead of 0.
    pub warm_start: bool,
}

impl Default for CgParams {
    fn default() -> Self {
        CgParams { iterations: 25, tolerance: 1e-5, threshold: 1e-5, warm_start: false }
    }
}

/// Why [`cg`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CgEnd {
    /// The iteration cap was reached.
    #[default]
    Iterations,
    /// `‖r‖/‖b‖ ≤ tolerance`.
    Tolerance,
    /// `|pᵀAp| ≤ threshold`.
    Threshold,
    /// `pᵀAp = 0`.
    ZeroDenominator,
    /// `b = 0`: nothing done.
    NullRhs,
}

/// What one [`cg`] call did.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CgReport {
    /// Number of updates of `x` (CG steps actually applied).
    pub updates: usize,
    /// Number of products `A·p` computed.
    pub products: usize,
    pub end: CgEnd,
    /// `‖r‖/‖b‖` at the start of each iteration (SOFA's `graph["Error"]`, without its leading 1).
    pub errors: Vec<f64>,
    /// `pᵀAp` of each iteration (SOFA's `graph["Denominator"]`).
    pub denominators: Vec<f64>,
    /// Warnings SOFA prints (tests skipped at the first iteration of the first solve).
    pub warnings: Vec<&'static str>,
}

/// SOFA's `CGLinearSolver::solve(A, x, b)`. `first_solve` is SOFA's `timeStepCount == 0`: the
/// tolerance and threshold tests are then skipped at the first iteration.
pub fn cg<S: VectorSpace>(s: &mut S, x: S::V, b: S::V, params: &CgParams, first_solve: bool) -> SimResult<CgReport> {
    cg_reusing(s, x, b, params, first_solve, CgReport::default())
}

/// [`cg`] writing its report into the lists of a previous one (a solver keeps its last report:
/// the step then allocates nothing for it).
pub fn cg_reusing<S: VectorSpace>(s: &mut S, x: S::V, b: S::V, params: &CgParams, first_solve: bool, mut rep: CgReport) -> SimResult<CgReport> {
    rep.updates = 0;
    rep.products = 0;
    rep.end = CgEnd::Iterations;
    rep.errors.clear();
    rep.denominators.clear();
    rep.warnings.clear();
    with_temps(s, |s, [p, q, r]| cg_inner(s, x, b, p, q, r, params, first_solve, rep))
}

#[allow(clippy::too_many_arguments)]
fn cg_inner<S: VectorSpace>(
    s: &mut S,
    x: S::V,
    b: S::V,
    p: S::V,
    q: S::V,
    r: S::V,
    params: &CgParams,
    first_solve: bool,
    mut rep: CgReport,
) -> SimResult<CgReport> {
    if params.warm_start {
        s.mul(x, r)?;
        rep.products += 1;
        s.v_op(r, Some(b), Some(r), -1.0); // r = b - A x
    } else {
        s.v_op(x, None, None, 1.0);
        s.v_op(r, Some(b), None, 1.0);
    }
    let normb = s.dot(b, b).sqrt();
    if normb == 0.0 {
        // SOFA only checks the threshold on the very first solve (a warning, no effect on x).
        rep.end = CgEnd::NullRhs;
        return Ok(rep);
    }
    let mut rho_1 = 0.0;
    let mut it: u64 = 1;
    while it <= params.iterations {
        let rho = s.dot(r, r);
        let err = rho.sqrt() / normb;
        rep.errors.push(err);
        if err <= params.tolerance {
            if it == 1 && first_solve {
                rep.warnings.push("tolerance reached at first iteration of CG: check the 'tolerance' data field, you might decrease it");
            } else {
                rep.end = CgEnd::Tolerance;
                break;
            }
        }
        if it == 1 {
            s.v_op(p, Some(r), None, 1.0);
        } else {
            let beta = rho / rho_1;
            s.v_op(p, Some(r), Some(p), beta); // p = p·β + r
        }
        s.mul(p, q)?;
        rep.products += 1;
        let den = s.dot(p, q);
        rep.denominators.push(den);
        if den == 0.0 {
            rep.warnings.push("den = 0.0, break the iterations");
            rep.end = CgEnd::ZeroDenominator;
            break;
        }
        if den.abs() <= params.threshold {
            if it == 1 && first_solve {
                rep.warnings.push("denominator threshold reached at first iteration of CG: check the 'threshold' data field, you might decrease it");
            } else {
                rep.end = CgEnd::Threshold;
                break;
            }
        }
        let alpha = rho / den;
        s.v_op(x, Some(x), Some(p), alpha);
        s.v_op(r, Some(r), Some(q), -alpha);
        rep.updates += 1;
        rho_1 = rho;
        it += 1;
    }
    Ok(rep)
}

fn create(args: &CreateArgs) -> CgLinearSolver {
    CgLinearSolver { assembled: args.template != GRAPH_SCATTERED && !args.template.is_empty(), ..Default::default() }
}

/// Reads SOFA's unsigned `iterations`.
pub(crate) fn read_iterations(cx: &InitCtx, iterations: settee_core::DataRef<settee_core::data_ref::Int>) -> SimResult<u64> {
    let n = cx.data().get(iterations);
    u64::try_from(n)
        .map_err(|_| cx.error(format!("iterations = {n} is negative")).hint("give the maximum number of iterations as a non-negative integer"))
}

/// Reads a tolerance that SOFA resets to 1e-5 when negative.
pub(crate) fn read_positive_or_default(cx: &mut InitCtx, r: settee_core::DataRef<settee_core::data_ref::Real>) -> f64 {
    let (v, name) = (cx.data().get(r), r.name());
    if v < 0.0 {
        cx.warn(format!("'{name}' must be a positive value: default value used: 1e-5"));
        cx.data_mut().put(r, 1e-5);
        return 1e-5;
    }
    v
}

iterative_solver_component! {
    /// Linear system solver using the conjugate gradient iterative algorithm
    ///
    /// SOFA's `CGLinearSolver`. Its templates are those of SOFA's iterative `MatrixLinearSolver`s
    /// (CG, MinRes): matrix-free first, then the assembled matrix types.
    #[component(
        name = "CGLinearSolver", module = "Sofa.Component.LinearSolver.Iterative",
        data = {
            /// Maximum number of iterations of the Conjugate Gradient solution
            iterations: Int = "25",
            /// Desired accuracy of the Conjugate Gradient solution evaluating: |r|²/|b|² (ratio of current residual norm over initial residual norm)
            tolerance: Real = "1e-5",
            /// Minimum value of the denominator (pT A p)^ in the conjugate Gradient solution
            threshold: Real = "1e-5",
            /// Use previous solution as initial solution
            warmStart: Bool = "false",
        },
    )]
    #[derive(Clone, Default)]
    pub struct CgLinearSolver {
        assembled: bool,
        params: CgParams,
        /// SOFA's `timeStepCount`: number of completed solves.
        time_step_count: u64,
        system: AssembledSystem,
        me: Option<ComponentId>,
        last: Option<CgReport>,
        reported: Vec<&'static str>,
    }
}

impl CgLinearSolver {
    /// The report of the last solve.
    pub fn last_report(&self) -> Option<&CgReport> {
        self.last.as_ref()
    }
    /// Number of solves performed since init.
    pub fn solve_count(&self) -> u64 {
        self.time_step_count
    }
    pub fn params(&self) -> &CgParams {
        &self.params
    }
    pub fn is_assembled(&self) -> bool {
        self.assembled
    }
}

impl Component for CgLinearSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.system.set_link(cx);
        self.params = CgParams {
            iterations: read_iterations(cx, Self::ITERATIONS)?,
            tolerance: read_positive_or_default(cx, Self::TOLERANCE),
            threshold: read_positive_or_default(cx, Self::THRESHOLD),
            warm_start: cx.data().get(Self::WARM_START),
        };
        self.time_step_count = 0;
        self.last = None;
        Ok(())
    }
}

impl LinearSolver for CgLinearSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
        let first = self.time_step_count == 0;
        let params = self.params;
        let kept = self.last.take().unwrap_or_default();
        let report = if self.assembled {
            self.system
                .solve_with(scene, scope, factors, rhs, solution, |sp| cg_reusing(sp, AssembledSpace::X, AssembledSpace::B, &params, first, kept))?
        } else {
            let mut sp = GraphSpace::new(scene, scope, factors);
            cg_reusing(&mut sp, solution, rhs, &params, first, kept)?
        };
        self.time_step_count += 1;
        for w in &report.warnings {
            // Each distinct warning once (SOFA prints the zero-denominator one at every solve).
            if !self.reported.contains(w) {
                self.reported.push(w);
                step_warning(scene, self.me, *w);
            }
        }
        self.last = Some(report);
        Ok(())
    }

    fn solve_again(&mut self, scene: &mut Scene, scope: &MechScope, rhs: VecId, solution: VecId) -> SimResult {
        let mut x = Vec::new();
        let mut b = Vec::new();
        settee_core::mechanics::gather(scene, scope, solution, &mut x);
        settee_core::mechanics::gather(scene, scope, rhs, &mut b);
        let x = self.solve_kept(scene, scope, x, &b)?;
        settee_core::mechanics::scatter(scene, scope, solution, &x);
        Ok(())
    }

    /// SOFA's generic `addJMInvJt`: one CG solve per constraint row (empty rows included), each
    /// starting from the solution vector the previous solve left (with `warmStart`).
    fn add_jminvjt(
        &mut self,
        scene: &mut Scene,
        scope: &MechScope,
        j: &settee_core::constraint::ConstraintJacobian,
        factor: f64,
        w: &mut settee_core::constraint::DenseMatrix,
    ) -> SimResult {
        let mut x = std::mem::take(&mut self.system.x);
        x.resize(scope.size, 0.0);
        let r = j.add_jminvjt_generic(w, factor, false, |rhs, y| {
            x = self.solve_kept(scene, scope, std::mem::take(&mut x), rhs)?;
            y.clear();
            y.extend_from_slice(&x);
            Ok(())
        });
        self.system.x = x;
        r
    }
}

impl CgLinearSolver {
    /// A CG solve on the matrix assembled by the last `solve_system` (assembled template only),
    /// from `x` (used as the start with `warmStart`).
    fn solve_kept(&mut self, scene: &mut Scene, scope: &MechScope, x: Vec<f64>, b: &[f64]) -> SimResult<Vec<f64>> {
        let me = self.me;
        if !self.assembled {
            return Err(crate::common::unsupported(crate::common::step_error(
                scene,
                me,
                "a GraphScattered CGLinearSolver cannot serve a constraint correction (SOFA marks it invalid)",
            ))
            .hint("give the CGLinearSolver an assembled template, e.g. template=\"CompressedRowSparseMatrixd\""));
        }
        let Some(builder) = self.system.builder.as_ref() else {
            return Err(crate::common::step_error(
                scene,
                me,
                "no assembled system yet: the constraint correction runs before the free motion solved it",
            ));
        };
        if builder.matrix().nrows() != scope.size {
            return Err(crate::common::step_error(scene, me, "the assembled system does not match the constraint correction's scope"));
        }
        let first = self.time_step_count == 0;
        let params = self.params;
        let mut sp = AssembledSpace::new(builder.matrix(), x, b.to_vec())?;
        let report = cg(&mut sp, AssembledSpace::X, AssembledSpace::B, &params, first)?;
        self.time_step_count += 1;
        self.last = Some(report);
        Ok(sp.into_parts().0)
    }
}
