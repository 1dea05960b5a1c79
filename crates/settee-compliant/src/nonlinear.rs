//! `CompliantNLImplicitSolver` (compliant spec §11; aliases `CompliantNonLinearImplicitSolver`,
//! `NewtonSolver`): the implicit step of [`CompliantImplicitSolver`] solved to a given precision
//! by Newton iterations on the nonlinear equations, the linearized step being the first guess.
//!
//! Unknowns: the end velocity `v` of the master DOFs and the constraint impulses `μ` (the force of
//! a constraint is `Jᵀμ/h`). With `x⁺ = x₀ + h(βv + (1−β)v₀)` and `ψ⁺` the constraint values'
//! right-hand side at the end state (`−φ⁺/h` for an elastic constraint), the residual is
//!
//! ```text
//! r_v = P·( M(v − v₀) − h(α f(x⁺, v) + (1−α) f₀) − J(x⁺)ᵀμ )
//! r_λ = C'μ − (ψ⁺/α − (1−β)u⁺)/β          (C' = C/(h²αβ), u⁺ = J v)
//! ```
//!
//! whose Jacobian is the KKT matrix `[[H, −Jᵀ],[J, C']]` the base solver assembles (with the
//! mappings' geometric stiffness of the current constraint forces). Each iteration solves
//! `KKT·d = −r` and applies `d` with a backtracking line search on `‖r‖∞`
//! (`newtonStepLength = 1`) or in fixed sub-steps of `newtonStepLength·d` while `‖r‖∞` decreases.
//! If the final residual is larger than the first guess's, the first guess is kept. Positions
//! end at `x₀ + βh·v` as in the base solver.
//!
//! As in the plugin, the pre-stabilization pass is replaced by a post-stabilization with
//! assembly (any stabilization other than none), unilateral constraints are treated as an active
//! set of bilateral ones during the iterations (rows of non-violated ones have no residual), and
//! `neglecting_compliance_forces_in_geometric_stiffness` defaults to false.

use settee_core::compliant::AssembledSystem;
use settee_core::component::OdeSolver;
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{component, Component, InitCtx, Mbk, Scene, SimError, SimResult, StateId, VecId, VecKind};

use crate::solver::{self, CompliantImplicitSolver, CompliantImplicitSolverData, Formulation, Stabilization};
use crate::values;

/// Registers the class.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<CompliantNLImplicitSolver>();
}

/// Implicit Compliant integrator with Newton iterations (and line search) on the nonlinear implicit equations.
///
/// The solver.
#[component(
    module = "Compliant",
    roles = [OdeSolver],
    inherit = [CompliantImplicitSolverData, Self],
    preparse = solver::preparse,
    data = {
        /// stop criterion of the Newton iterations: infinity norm of the residual
        precision: Real = "1e-6",
        /// the precision is relative to the residual of the first guess
        relative: Bool = "false",
        /// maximum number of Newton iterations (1: the linearized step only)
        iterations: Int = "10",
        /// part of the Newton correction applied at once, repeated while the residual decreases; 1 performs a line search
        newtonStepLength: Real = "1",
    },
)]
#[derive(Clone, Default)]
pub struct CompliantNLImplicitSolver {
    base: CompliantImplicitSolver,
    precision: f64,
    relative: bool,
    iterations: usize,
    step_length: f64,
    /// Newton iterations of the last step and its final residual norm.
    last_iterations: usize,
    last_residual: f64,
}

impl CompliantNLImplicitSolver {
    /// Newton iterations performed at the last step.
    pub fn last_iterations(&self) -> usize {
        self.last_iterations
    }
    /// `‖r‖∞` at the end of the last step.
    pub fn last_residual(&self) -> f64 {
        self.last_residual
    }
}

impl Component for CompliantNLImplicitSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.base.init(cx)?;
        let d = cx.data();
        if !d.is_given(CompliantImplicitSolverData::NEGLECTING_COMPLIANCE_FORCES_IN_GEOMETRIC_STIFFNESS) {
            // The constraint forces' geometric stiffness matters to Newton's convergence.
            self.base.neglecting = false;
        }
        self.precision = d.get(Self::PRECISION);
        self.relative = d.get(Self::RELATIVE);
        let it = d.get(Self::ITERATIONS);
        self.step_length = d.get(Self::NEWTON_STEP_LENGTH);
        if it < 0 {
            return Err(cx.error(format!("iterations = {it} is negative")).hint("give the maximum number of Newton iterations, e.g. 10"));
        }
        self.iterations = it as usize;
        if !(self.step_length > 0.0 && self.step_length <= 1.0) {
            return Err(cx
                .error(format!("newtonStepLength = {} is outside (0, 1]", self.step_length))
                .hint("1 performs a line search; a smaller value applies that part of each correction repeatedly"));
        }
        if self.base.stabilization != Stabilization::None {
            self.base.stabilization = Stabilization::PostAssembly;
        }
        Ok(())
    }
}

/// The state of an iteration: master velocities and constraint impulses.
#[derive(Clone)]
struct Iterate {
    v: Vec<f64>,
    mu: Vec<f64>,
}

impl Iterate {
    fn axpy(&self, a: f64, d: &[f64]) -> Iterate {
        let m = self.v.len();
        Iterate { v: self.v.iter().zip(&d[..m]).map(|(v, d)| v + a * d).collect(), mu: self.mu.iter().zip(&d[m..]).map(|(l, d)| l + a * d).collect() }
    }
}

/// What a Newton update reads: the scope of the system, the start of the step and the KKT
/// system of the current iterate.
struct Newton<'a> {
    scope: &'a MechScope,
    st: &'a Start,
    sys: &'a AssembledSystem,
}

/// What the residual needs from the start of the step.
struct Start {
    h: f64,
    /// Positions of the main states.
    x0: Vec<(StateId, Vec<f64>)>,
    v0: Vec<f64>,
    /// Forces at the start (only when α ≠ 1).
    f0: Vec<f64>,
    x_res: VecId,
    v_res: VecId,
    /// Per constraint block: true for a unilateral one (it had a projector).
    unilateral: Vec<bool>,
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

impl CompliantNLImplicitSolver {
    /// Puts the iterate into the scene: end positions `x₀ + h(βv + (1−β)v₀)` (or `x₀ + βh·v` with
    /// `final_positions`), velocities, propagated to the mapped states, and the impulses in the
    /// base solver's multiplier vector.
    fn set_state(&self, scene: &mut Scene, scope: &MechScope, st: &Start, it: &Iterate, sys: &AssembledSystem, final_positions: bool) -> SimResult {
        let beta = self.base.beta;
        for (s, x) in &st.x0 {
            scene.store.get_mut(*s).write(st.x_res).copy_from_slice(x);
        }
        let w: Vec<f64> =
            if final_positions || beta == 1.0 { it.v.clone() } else { it.v.iter().zip(&st.v0).map(|(v, v0)| v + (1.0 - beta) / beta * v0).collect() };
        self.base.integrate_positions(scene, scope, st.h, st.x_res, &w)?;
        mech::scatter(scene, scope, st.v_res, &it.v);
        mech::propagate_position_velocity(scene, scope, st.x_res, st.v_res)?;
        if let Some(l) = self.base.lagrange {
            for blk in &sys.blocks {
                let w = scene.store.get_mut(blk.state).write(l);
                let k = blk.rows.min(w.len());
                w[..k].copy_from_slice(&it.mu[blk.offset..blk.offset + k]);
            }
        }
        Ok(())
    }

    /// The residual at `it` (see the module documentation); leaves the scene at that state.
    fn residual(&self, scene: &mut Scene, scope: &MechScope, st: &Start, it: &Iterate, sys: &AssembledSystem) -> SimResult<(Vec<f64>, f64)> {
        let (h, alpha, beta) = (st.h, self.base.alpha, self.base.beta);
        let (m, n) = (sys.m, sys.n);
        self.set_state(scene, scope, st, it, sys, false)?;
        mech::compute_force(scene, scope, VecId::FORCE, st.x_res, st.v_res)?;
        let mut f = Vec::new();
        mech::gather(scene, scope, VecId::FORCE, &mut f);

        // Jᵀμ at the end positions, and M(v − v₀).
        let tmp = scene.store.alloc(&scope.states, VecKind::Deriv);
        let r = (|| -> SimResult<(Vec<f64>, Vec<f64>)> {
            for blk in &sys.blocks {
                let w = scene.store.get_mut(blk.state).write(tmp);
                let k = blk.rows.min(w.len());
                w[..k].copy_from_slice(&it.mu[blk.offset..blk.offset + k]);
            }
            mech::accumulate_up(scene, scope, tmp)?;
            let mut jt_mu = Vec::new();
            mech::gather(scene, scope, tmp, &mut jt_mu);
            for &s in &scope.states {
                scene.store.get_mut(s).write(tmp).fill(0.0);
            }
            let dv: Vec<f64> = it.v.iter().zip(&st.v0).map(|(a, b)| a - b).collect();
            mech::scatter(scene, scope, VecId::DX, &dv);
            mech::propagate_dx(scene, scope, VecId::DX)?;
            mech::add_mbkdx(scene, scope, tmp, VecId::DX, Mbk { m: 1.0, b: 0.0, k: 0.0 }, true)?;
            let mut mdv = Vec::new();
            mech::gather(scene, scope, tmp, &mut mdv);
            Ok((jt_mu, mdv))
        })();
        scene.store.free(&scope.states, tmp);
        let (jt_mu, mdv) = r?;

        let mut res = vec![0.0; m + n];
        for i in 0..m {
            if sys.free[i] {
                let fa = if alpha == 1.0 { f[i] } else { alpha * f[i] + (1.0 - alpha) * st.f0[i] };
                res[i] = mdv[i] - h * fa - jt_mu[i];
            }
        }
        // Constraint rows: C'μ − b(x⁺, v⁺).
        for (r, c, v) in sys.c.iter() {
            res[m + r] += v * it.mu[c];
        }
        let stabilized = self.base.stabilization != Stabilization::None;
        for (bi, blk) in sys.blocks.iter().enumerate() {
            let state = scene.store.get(blk.state);
            let (phi, u) = (state.read(st.x_res).to_vec(), state.read(st.v_res).to_vec());
            let mut b = vec![0.0; blk.rows];
            values::dynamics(&blk.value, &blk.mask, stabilized, &phi, &u, blk.dof_size, h, &mut b).map_err(SimError::new)?;
            let unilateral = st.unilateral.get(bi).copied().unwrap_or(false);
            for (k, bk) in b.iter().enumerate() {
                let uk = u.get(k).copied().unwrap_or(0.0);
                let rhs = (bk / alpha - (1.0 - beta) * uk) / beta;
                let row = m + blk.offset + k;
                let dof = k / blk.dof_size.max(1);
                // A unilateral constraint that is not violated has no error.
                let inactive = unilateral && phi.get(dof * blk.dof_size.max(1)).is_some_and(|&p| p >= 0.0);
                res[row] = if inactive { 0.0 } else { res[row] - rhs };
            }
        }
        let norm = inf_norm(&res);
        Ok((res, norm))
    }

    /// The Jacobian of the residual at the scene's current state: forces and geometric stiffness
    /// (with the constraint forces of the current impulses), the KKT assembly with unilateral
    /// constraints as bilateral ones, and its factorization.
    fn jacobian(&self, scene: &mut Scene, scope: &MechScope, h: f64, kkt: settee_core::ComponentId) -> SimResult<AssembledSystem> {
        let lagrange = self.base.lagrange.ok_or_else(|| SimError::new("CompliantNLImplicitSolver: no multipliers"))?;
        self.base.compute_forces(scene, scope, h, lagrange)?;
        let mut sys = self.base.assemble(scene, scope, h)?;
        for blk in &mut sys.blocks {
            if blk.projector.take().is_some() {
                blk.mask.clear();
            }
        }
        solver::with_kkt(scene, kkt, |k| k.factor(&sys))?;
        Ok(sys)
    }

    /// Applies `it + λ·d` for a decreasing λ until `‖r‖∞` decreases enough; `None` when no step
    /// improves (the scene is then left at `it`).
    fn line_search(
        &self,
        scene: &mut Scene,
        nw: &Newton,
        it: &Iterate,
        norm: f64,
        d: &mut [f64],
        stpmax: f64,
    ) -> SimResult<Option<(Iterate, Vec<f64>, f64)>> {
        let (scope, st, sys) = (nw.scope, nw.st, nw.sys);
        const SUFFICIENT: f64 = 1e-4;
        let min_step = f64::EPSILON.powf(0.25);
        let len = d.iter().map(|x| x * x).sum::<f64>().sqrt();
        if len > stpmax {
            d.iter_mut().for_each(|x| *x *= stpmax / len);
        }
        let mut lam = 1.0;
        loop {
            let trial = it.axpy(lam, d);
            let (r, nr) = self.residual(scene, scope, st, &trial, sys)?;
            if nr <= (1.0 - SUFFICIENT * lam) * norm {
                return Ok(Some((trial, r, nr)));
            }
            if lam < min_step {
                self.residual(scene, scope, st, it, sys)?;
                return Ok(None);
            }
            lam *= 0.5;
        }
    }

    /// Applies `s·d` repeatedly (at most `1/s` times) while `‖r‖∞` decreases; `None` when the
    /// first sub-step already increases it (the scene is then left at `it`).
    fn sub_steps(&self, scene: &mut Scene, nw: &Newton, it: &Iterate, norm: f64, d: &[f64]) -> SimResult<Option<(Iterate, Vec<f64>, f64)>> {
        let (scope, st, sys) = (nw.scope, nw.st, nw.sys);
        let s = self.step_length;
        let mut cur = it.axpy(s, d);
        let (mut r, mut nr) = self.residual(scene, scope, st, &cur, sys)?;
        if nr > norm {
            self.residual(scene, scope, st, it, sys)?;
            return Ok(None);
        }
        let mut i = 1;
        while (i as f64) < 1.0 / s {
            let next = cur.axpy(s, d);
            let (r2, n2) = self.residual(scene, scope, st, &next, sys)?;
            if n2 > nr {
                // Back to the last improving sub-step (its forces are the scene's again).
                self.residual(scene, scope, st, &cur, sys)?;
                break;
            }
            (cur, r, nr) = (next, r2, n2);
            i += 1;
        }
        Ok(Some((cur, r, nr)))
    }
}

impl OdeSolver for CompliantNLImplicitSolver {
    fn integration_factors(&self, dt: f64) -> settee_core::constraint::IntegrationFactors {
        self.base.integration_factors(dt)
    }

    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, h: f64, x_result: VecId, v_result: VecId) -> SimResult {
        self.last_iterations = 0;
        self.last_residual = 0.0;
        if self.iterations <= 1 {
            return self.base.solve(scene, scope, h, x_result, v_result);
        }
        let kkt = self.base.kkt.ok_or_else(|| SimError::new("CompliantNLImplicitSolver has no KKT solver"))?;
        // The start of the step.
        if x_result != VecId::POSITION {
            mech::v_op(scene, scope, x_result, Some(VecId::POSITION), None, 1.0);
        }
        let x0: Vec<(StateId, Vec<f64>)> = scope.main_states.iter().map(|&s| (s, scene.store.get(s).read(VecId::POSITION).to_vec())).collect();
        let mut v0 = Vec::new();
        mech::gather(scene, scope, VecId::VELOCITY, &mut v0);
        let mut f0 = Vec::new();
        if self.base.alpha != 1.0 {
            mech::compute_force(scene, scope, VecId::FORCE, VecId::POSITION, VecId::VELOCITY)?;
            mech::gather(scene, scope, VecId::FORCE, &mut f0);
        }
        // No warm start of the multipliers: the iterations correct them.
        if let Some(l) = self.base.lagrange {
            mech::realloc(scene, scope, l);
            for &s in &scope.states {
                scene.store.get_mut(s).write(l).fill(0.0);
            }
        }

        // First guess: the linearized step (its positions are recomputed below).
        self.base.solve(scene, scope, h, x_result, v_result)?;
        let mut sys = self.base.last.clone().ok_or_else(|| SimError::new("the first guess assembled no system"))?;
        let lagrange = self.base.lagrange.ok_or_else(|| SimError::new("the first guess allocated no multipliers"))?;
        let mut v = Vec::new();
        mech::gather(scene, scope, v_result, &mut v);
        let mut mu = vec![0.0; sys.n];
        let impulse = if self.base.formulation == Formulation::Acc { h } else { 1.0 };
        for blk in &sys.blocks {
            let l = scene.store.get(blk.state).read(lagrange);
            for k in 0..blk.rows.min(l.len()) {
                mu[blk.offset + k] = impulse * l[k];
            }
        }
        let first = Iterate { v, mu };
        let unilateral = sys.blocks.iter().map(|b| b.projector.is_some()).collect();
        let st = Start { h, x0, v0, f0, x_res: x_result, v_res: v_result, unilateral };

        let (mut res, mut norm) = self.residual(scene, scope, &st, &first, &sys)?;
        let norm_first = norm;
        let tol = if self.relative { self.precision * norm } else { self.precision };
        let stpmax = 100.0 * st.v0.iter().map(|x| x * x).sum::<f64>().sqrt().max(sys.m as f64);
        let mut it = first.clone();
        let mut num = 1;
        while num < self.iterations && norm > tol {
            sys = self.jacobian(scene, scope, h, kkt)?;
            if sys.n != it.mu.len() || sys.m != it.v.len() {
                return Err(SimError::new("the constraints changed during the Newton iterations"));
            }
            let mut d = vec![0.0; sys.m + sys.n];
            solver::with_kkt(scene, kkt, |k| k.solve(&sys, &mut d, &res))?;
            d.iter_mut().for_each(|x| *x = -*x);
            for (x, &free) in d.iter_mut().zip(&sys.free) {
                if !free {
                    *x = 0.0;
                }
            }
            num += 1;
            let nw = Newton { scope, st: &st, sys: &sys };
            let step = if self.step_length == 1.0 {
                self.line_search(scene, &nw, &it, norm, &mut d, stpmax)?
            } else {
                self.sub_steps(scene, &nw, &it, norm, &d)?
            };
            match step {
                Some((next, r, nr)) => (it, res, norm) = (next, r, nr),
                None => break,
            }
        }
        if norm > norm_first {
            it = first;
            norm = norm_first;
        }
        self.last_iterations = num - 1;
        self.last_residual = norm;

        // The end state: x = x₀ + βh·v.
        self.set_state(scene, scope, &st, &it, &sys, true)?;
        let n = sys.n;
        if n > 0 && self.base.forces != solver::ForceOutput::No {
            self.base.write_constraint_forces(scene, scope, &sys, lagrange, h)?;
        }
        self.base.last = Some(sys);
        if n > 0 && self.base.stabilization != Stabilization::None {
            self.base.post_stabilization(scene, scope, kkt, h, x_result, v_result, lagrange)?;
        }
        Ok(())
    }
}
