//! `PCGLinearSolver` (formerly `ShewchukPCGLinearSolver`), mechanics spec §4.3: matrix-free
//! preconditioned CG with warm start, with or without a preconditioner
//! (see [`crate::preconditioner`]).

use settee_core::component::LinearSolver;
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::role::LinearSystem;
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimResult, VecId};

use crate::cg::read_iterations;
use crate::common::{unsupported, MatrixSolverData};
use crate::preconditioner::{Preconditioner, PRECONDITIONER};
use crate::space::{with_temps, GraphSpace, VectorSpace};
use crate::system::PreconditionedMatrixFreeSystem;

/// What one [`pcg`] call did.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PcgReport {
    /// Number of updates of `x`.
    pub updates: usize,
    /// `rᵀz / bᵀb` before the loop and after each iteration (SOFA's `graph["Error k"]`).
    pub errors: Vec<f64>,
}

/// `z = P⁻¹·r` for [`pcg`].
pub type Precond<'a, S> = &'a mut dyn FnMut(&mut S, <S as VectorSpace>::V, <S as VectorSpace>::V) -> SimResult;

/// SOFA's `PCGLinearSolver::solve(A, x, b)`: starts from the given `x` (warm start), stops when
/// `rᵀz ≤ tolerance·bᵀb` (z the preconditioned residual; `z = r` without preconditioner) or
/// after `iterations` iterations.
pub fn pcg<S: VectorSpace>(s: &mut S, x: S::V, b: S::V, iterations: u64, tolerance: f64, precond: Option<Precond<S>>) -> SimResult<PcgReport> {
    pcg_reusing(s, x, b, iterations, tolerance, precond, PcgReport::default())
}

/// [`pcg`] writing its report into the list of a previous one (a solver keeps its last report:
/// the step then allocates nothing for it).
pub fn pcg_reusing<S: VectorSpace>(
    s: &mut S,
    x: S::V,
    b: S::V,
    iterations: u64,
    tolerance: f64,
    mut precond: Option<Precond<S>>,
    mut rep: PcgReport,
) -> SimResult<PcgReport> {
    rep.updates = 0;
    rep.errors.clear();
    with_temps(s, |s, [r, w, q]| {
        let b_norm = s.dot(b, b);
        let tol = tolerance * b_norm;
        s.mul(x, r)?;
        s.v_op(r, Some(b), Some(r), -1.0); // r = b - A x
        match precond.as_mut() {
            Some(p) => p(s, r, w)?,
            None => s.v_op(w, Some(r), None, 1.0), // w = r
        }
        let mut r_norm = s.dot(r, w);
        rep.errors.push(r_norm / b_norm);
        let mut it: u64 = 1;
        while it <= iterations && r_norm > tol {
            s.mul(w, q)?;
            let dtq = s.dot(w, q);
            let alpha = r_norm / dtq;
            s.v_op(x, Some(x), Some(w), alpha);
            s.v_op(r, Some(r), Some(q), -alpha);
            match precond.as_mut() {
                Some(p) => p(s, r, q)?,
                None => s.v_op(q, Some(r), None, 1.0), // s = r
            }
            let delta_old = r_norm;
            r_norm = s.dot(r, q);
            rep.errors.push(r_norm / b_norm);
            let beta = r_norm / delta_old;
            s.v_op(w, Some(q), Some(w), beta); // w = s + w·β
            rep.updates += 1;
            it += 1;
        }
        Ok(rep)
    })
}

/// Linear system solver using the preconditioned conjugate gradient iterative algorithm
///
/// SOFA's `PCGLinearSolver`: the `preconditioner` link accepts any component, and init checks that
/// it plays the [`Preconditioner`] role (so that linking another kind of solver is a clear error).
#[component(
    name = "PCGLinearSolver", module = "Sofa.Component.LinearSolver.Iterative",
    roles = [LinearSolver],
    templates = ["GraphScattered"],
    inherit = [MatrixSolverData],
    data = {
        /// Maximum number of iterations after which the iterative descent of the Conjugate Gradient must stop
        iterations: Int = "25",
        /// Desired accuracy of the Conjugate Gradient solution evaluating: |r|²/|b|² (ratio of current residual norm over initial residual norm)
        tolerance: Real = "1e-5",
        /// Use a preconditioner
        use_precond: Bool = "true",
        /// Graph of residuals at each iteration (output, not filled by Settee)
        graph: Str,
    },
    links = {
        /// The linear system to solve
        linearSystem: LinearSystem,
        /// Link towards the linear solver used to precondition the conjugate gradient
        preconditioner: _,
    },
)]
#[derive(Clone, Default)]
pub struct PcgLinearSolver {
    iterations: u64,
    tolerance: f64,
    preconditioner: Option<ComponentId>,
    assembling_rate: u64,
    refresh_counter: u64,
    /// Global vectors lent to the preconditioner.
    r_global: Vec<f64>,
    z_global: Vec<f64>,
    last: Option<PcgReport>,
}

impl PcgLinearSolver {
    pub fn last_report(&self) -> Option<&PcgReport> {
        self.last.as_ref()
    }
}

impl Component for PcgLinearSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.iterations = read_iterations(cx, Self::ITERATIONS)?;
        self.tolerance = cx.data().get(Self::TOLERANCE);
        self.preconditioner = None;
        if cx.data().get(Self::USE_PRECOND) {
            if let Some(&p) = cx.link_targets("preconditioner").first() {
                if !cx.scene.entry(p).plays(PRECONDITIONER) {
                    return Err(unsupported(
                        cx.error(format!("{} cannot be used as a preconditioner yet", cx.scene.entry(p).label()))
                            .hint("supported preconditioners: JacobiPreconditioner, BlockJacobiPreconditioner, SSORPreconditioner, WarpPreconditioner and the direct solvers"),
                    ));
                }
                self.preconditioner = Some(p);
            }
        }
        // The preconditioner is rebuilt every `assemblingRate` solves of the matrix-free system.
        let system =
            cx.link_targets("linearSystem").first().copied().or_else(|| {
                cx.scene.node(cx.node()).objects.iter().copied().find(|c| cx.scene.entry(*c).class.name == "PreconditionedMatrixFreeSystem")
            });
        let rate = PreconditionedMatrixFreeSystem::ASSEMBLING_RATE;
        self.assembling_rate = system.map(|s| &cx.scene.entry(s).data).filter(|d| d.has(rate)).map_or(1, |d| d.get(rate).max(0) as u64);
        self.refresh_counter = self.assembling_rate;
        self.last = None;
        Ok(())
    }
}

impl LinearSolver for PcgLinearSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
        let Some(p) = self.preconditioner else {
            let mut sp = GraphSpace::new(scene, scope, factors);
            let kept = self.last.take().unwrap_or_default();
            self.last = Some(pcg_reusing(&mut sp, solution, rhs, self.iterations, self.tolerance, None, kept)?);
            return Ok(());
        };
        self.refresh_counter += 1;
        if self.refresh_counter >= self.assembling_rate {
            scene.with_role::<dyn Preconditioner, _>(p, |pc, scene| pc.refresh(scene, scope, factors))?;
            self.refresh_counter = 0;
        }
        let (rg, zg) = (&mut self.r_global, &mut self.z_global);
        let mut apply = |sp: &mut GraphSpace, r: VecId, z: VecId| -> SimResult {
            mech::gather(sp.scene, sp.scope, r, rg);
            zg.clear();
            zg.resize(rg.len(), 0.0);
            sp.scene.with_role::<dyn Preconditioner, _>(p, |pc, scene| pc.apply(scene, rg, zg))?;
            mech::scatter(sp.scene, sp.scope, z, zg);
            Ok(())
        };
        let mut sp = GraphSpace::new(scene, scope, factors);
        let kept = self.last.take().unwrap_or_default();
        self.last = Some(pcg_reusing(&mut sp, solution, rhs, self.iterations, self.tolerance, Some(&mut apply), kept)?);
        Ok(())
    }
}
