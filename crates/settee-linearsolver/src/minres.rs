//! `MinResLinearSolver`: MINRES without preconditioner (port of tminres), mechanics spec §4.4.

use settee_core::component::LinearSolver;
use settee_core::mechanics::MechScope;
use settee_core::role::LinearSystem;
use settee_core::{Component, CreateArgs, InitCtx, Mbk, Scene, SimResult, VecId};

use crate::cg::read_iterations;
use crate::common::{iterative_solver_component, AssembledSystem, MatrixSolverData, ResidualGraphData, GRAPH_SCATTERED};
use crate::space::{with_temps, AssembledSpace, GraphSpace, VectorSpace};

/// What one [`minres`] call did.
#[derive(Clone, Debug, PartialEq)]
pub struct MinResReport {
    /// Number of updates of `x`.
    pub updates: usize,
    /// `test1 = φ̄/(‖A‖‖x‖)` of each iteration (SOFA's `graph["Error"]` without its leading 1).
    pub errors: Vec<f64>,
}

/// SOFA's `MinResLinearSolver::solve(A, x, b)`, starting from the given `x` (warm start).
pub fn minres<S: VectorSpace>(s: &mut S, x: S::V, b: S::V, max_iter: u64, tol: f64) -> SimResult<MinResReport> {
    with_temps(s, |s, [r1, r2, y, w, w2, v]| {
        let mut rep = MinResReport { updates: 0, errors: Vec::new() };
        let (mut r1, mut r2, mut w, mut w2) = (r1, r2, w, w2);
        s.mul(x, r1)?;
        s.v_op(r1, Some(b), Some(r1), -1.0); // r1 = b - A x
        let mut beta1 = s.dot(r1, r1);
        if beta1 <= 0.0 {
            return Ok(rep);
        }
        beta1 = beta1.sqrt();
        s.v_op(y, Some(r1), None, 1.0);
        let eps = f64::EPSILON;
        let (mut oldb, mut beta, mut dbar, mut epsln) = (0.0f64, beta1, 0.0f64, 0.0f64);
        let mut phibar = beta1;
        let mut tnorm2 = 0.0f64;
        let (mut cs, mut sn) = (-1.0f64, 0.0f64);
        let (mut gmax, mut gmin) = (0.0f64, f64::MAX);
        let mut itn: u64 = 0;
        while itn < max_iter {
            s.v_op(r2, Some(y), None, 1.0);
            let sc = 1.0 / beta;
            s.v_op(v, None, Some(y), sc); // v = y·(1/β)
            s.mul(v, y)?;
            if itn > 0 {
                s.v_op(y, Some(y), Some(r1), -beta / oldb);
            }
            let alpha = s.dot(v, y);
            s.v_op(y, Some(y), Some(r2), -alpha / beta);
            std::mem::swap(&mut r1, &mut r2);
            oldb = beta;
            beta = s.dot(y, y);
            if beta < 0.0 {
                break;
            }
            beta = beta.sqrt();
            tnorm2 += alpha * alpha + oldb * oldb + beta * beta;

            let oldeps = epsln;
            let delta = cs * dbar + sn * alpha;
            let gbar = sn * dbar - cs * alpha;
            epsln = sn * beta;
            dbar = -cs * beta;
            let root = (gbar * gbar + dbar * dbar).sqrt();

            let gamma = (gbar * gbar + beta * beta).sqrt().max(eps);
            let denom = 1.0 / gamma;
            cs = gbar * denom;
            sn = beta * denom;
            let phi = cs * phibar;
            phibar *= sn;

            std::mem::swap(&mut w, &mut w2);
            s.v_op(w, None, Some(w), -oldeps);
            s.v_op(w, Some(w), Some(w2), -delta);
            s.v_op(w, Some(w), Some(v), 1.0);
            s.v_op(w, None, Some(w), denom);
            s.v_op(x, Some(x), Some(w), phi);
            rep.updates += 1;

            if itn == 0 && beta / beta1 < 10.0 * eps {
                break;
            }
            let anorm = tnorm2.sqrt();
            let ynorm = s.dot(x, x).sqrt();
            let test1 = phibar / (anorm * ynorm);
            rep.errors.push(test1);
            gmax = gmax.max(gamma);
            gmin = gmin.min(gamma);
            let test2 = root / anorm;
            if test1 <= 0.0
                || test2 <= 0.0
                || itn >= max_iter - 1
                || gmax / gmin >= 0.1 / eps
                || anorm * eps * ynorm >= beta1
                || test2 <= tol
                || test1 <= tol
            {
                break;
            }
            itn += 1;
        }
        Ok(rep)
    })
}

fn create(args: &CreateArgs) -> MinResLinearSolver {
    MinResLinearSolver { assembled: args.template != GRAPH_SCATTERED && !args.template.is_empty(), ..Default::default() }
}

iterative_solver_component! {
    /// Linear system solver using the MINRES iterative algorithm
    ///
    /// SOFA's `MinResLinearSolver`, matrix-free or on an assembled matrix (the templates of the
    /// iterative `MatrixLinearSolver`s).
    #[component(
    module = "Sofa.Component.LinearSolver.Iterative",
        data = {
            /// maximum number of iterations of the Conjugate Gradient solution
            iterations: Int = "25",
            /// desired precision of the Conjugate Gradient Solution (ratio of current residual norm over initial residual norm)
            tolerance: Real = "1e-5",
        },
    )]
    #[derive(Clone, Default)]
    pub struct MinResLinearSolver {
        assembled: bool,
        iterations: u64,
        tolerance: f64,
        system: AssembledSystem,
        last: Option<MinResReport>,
    }
}

impl MinResLinearSolver {
    pub fn last_report(&self) -> Option<&MinResReport> {
        self.last.as_ref()
    }
}

impl Component for MinResLinearSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.system.set_link(cx);
        self.iterations = read_iterations(cx, Self::ITERATIONS)?;
        self.tolerance = cx.data().get(Self::TOLERANCE);
        self.last = None;
        Ok(())
    }
}

impl LinearSolver for MinResLinearSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
        let (it, tol) = (self.iterations, self.tolerance);
        let rep = if self.assembled {
            self.system.solve_with(scene, scope, factors, rhs, solution, |sp| minres(sp, AssembledSpace::X, AssembledSpace::B, it, tol))?
        } else {
            let mut sp = GraphSpace::new(scene, scope, factors);
            minres(&mut sp, solution, rhs, it, tol)?
        };
        self.last = Some(rep);
        Ok(())
    }
}
