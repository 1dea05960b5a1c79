//! `LinearSolverConstraintCorrection` (lagrangian-constraints spec §2): the exact compliance
//! `W = factor·J·A⁻¹·Jᵀ` of one state through the linear solver that solved its free motion, and
//! the motion `A⁻¹·Jᵀλ` by solving again with the same system.

use settee_core::constraint::{ConstraintCorrection, ConstraintJacobian, ConstraintParams, DenseMatrix};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::role;
use settee_core::{data_group, Component, ComponentId, InitCtx, LinearSolver, OdeSolver, Scene, SimError, SimResult, StateId, VecId};

use super::common::{
    add_jminvjt, apply_correction, ode_factors, ode_solver_local_or_root, regularize, reset_contact_force, step_error, with_linear_solver, Apply,
};

/// The linear solver a correction uses: its `linearSolver` link, else the first linear solver of
/// its node; a matrix-free (`GraphScattered`) one is refused as SOFA does.
pub(crate) fn resolve_linear_solver(cx: &InitCtx) -> SimResult<ComponentId> {
    let ls = cx.link_targets("linearSolver").first().copied().or_else(|| cx.scene.find_local(cx.node(), role::LINEAR_SOLVER)).ok_or_else(|| {
        cx.error("no linear solver found in this node")
            .hint("put the object's linear solver (e.g. SparseLDLSolver) in the same node or set linearSolver=\"@...\"")
    })?;
    let e = cx.scene.entry(ls);
    if e.template == "GraphScattered" {
        return Err(cx
            .error(format!("cannot use the linear solver {} because it is templated on GraphScattered (matrix-free)", e.label()))
            .hint("use a direct solver (SparseLDLSolver…) or an assembled template such as CompressedRowSparseMatrixd"));
    }
    Ok(ls)
}

/// The ODE solver a correction takes its factors from: its `ODESolver` link, else the node's,
/// else the first one from the root.
pub(crate) fn resolve_ode_solver(cx: &InitCtx) -> SimResult<ComponentId> {
    cx.link_targets("ODESolver").first().copied().or_else(|| ode_solver_local_or_root(cx.scene, cx.node())).ok_or_else(|| {
        cx.error("no ODE solver found in this node nor in the scene").hint("add an ODE solver (e.g. EulerImplicitSolver) or set ODESolver=\"@...\"")
    })
}

/// SOFA's `regularizationTerm` of the corrections that solve with a linear solver.
#[data_group(data = {
    /// Add regularization factor times the identity matrix to the compliance W when solving
    /// constraints
    regularizationTerm: Real = "0",
})]
pub struct RegularizationData;

/// `#[component(...)]` of the corrections that solve with a linear solver
/// (`LinearSolverConstraintCorrection`, `GenericConstraintCorrection`): the correction role, the
/// class's Data then [`RegularizationData`], and the `linearSolver` and `ODESolver` links that
/// [`SolverLinks`] resolves.
macro_rules! linear_solver_correction {
    ($(#[doc = $doc:literal])* #[component($($key:tt)*)] $item:item) => {
        #[settee_core::component(
            roles = [ConstraintCorrection],
            inherit = [Self, RegularizationData],
            links = {
                /// Link towards the linear solver used to compute the compliance matrix, requiring the
                /// inverse of the linear system matrix
                linearSolver: LinearSolver,
                /// Link towards the ODE solver used to recover the integration factors
                #[search_up]
                ODESolver: OdeSolver,
            },
            $($key)*
        )]
        $(#[doc = $doc])*
        $item
    };
}
pub(crate) use linear_solver_correction;

/// What the corrections that solve with a linear solver hold in common: their id, the linear
/// and ODE solvers they use and their `regularizationTerm`.
#[derive(Clone, Default)]
pub(crate) struct SolverLinks {
    pub me: Option<ComponentId>,
    pub linear_solver: Option<ComponentId>,
    pub ode: Option<ComponentId>,
    pub regularization: f64,
}

impl SolverLinks {
    /// Resolves the links ([`resolve_linear_solver`], [`resolve_ode_solver`]) and reads
    /// [`RegularizationData`].
    pub fn init(&mut self, cx: &InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.linear_solver = Some(resolve_linear_solver(cx)?);
        self.ode = Some(resolve_ode_solver(cx)?);
        self.regularization = cx.data().get(RegularizationData::REGULARIZATION_TERM);
        Ok(())
    }
}

linear_solver_correction! {
    /// Constraint correction computing the compliance J·A⁻¹·Jᵀ with the linear solver of the object
    #[component(
    module = "Sofa.Component.Constraint.Lagrangian.Correction",
        templates = ["Vec3d", "Vec2d", "Vec1d", "Rigid3d"],
        template_rule = FromState,
        data = {
            /// constraints are reordered along a wire-like topology (from tip to base)
            wire_optimization: Bool = "false",
        },
    )]
    #[derive(Clone, Default)]
    pub struct LinearSolverConstraintCorrection {
        solver: SolverLinks,
        state: Option<StateId>,
        /// `J` of the last compliance, in the solver's global columns.
        jacobian: ConstraintJacobian,
        /// `J` of one block (the unbuilt path), kept for the next.
        block_jacobian: ConstraintJacobian,
        /// The unbuilt path: `Jᵀf` accumulated on this state (its DOFs), the displacement
        /// `A⁻¹Jᵀf` of the last solve, and whether the force changed since.
        unbuilt_force: Vec<f64>,
        unbuilt_disp: Vec<f64>,
        unbuilt_stale: bool,
        /// The ODE solver's position integration factor of the current solve.
        unbuilt_position_factor: f64,
    }
}

impl LinearSolverConstraintCorrection {
    fn ids(&self) -> SimResult<(ComponentId, StateId, ComponentId, ComponentId)> {
        match (self.solver.me, self.state, self.solver.linear_solver, self.solver.ode) {
            (Some(me), Some(s), Some(ls), Some(ode)) => Ok((me, s, ls, ode)),
            _ => Err(SimError::new("LinearSolverConstraintCorrection used before init")),
        }
    }

    /// The scope the linear solver solves over (the subtree of its node) and this state's offset
    /// in it.
    fn scope(&self, scene: &mut Scene) -> SimResult<(std::sync::Arc<MechScope>, usize)> {
        let (me, s, ls, _) = self.ids()?;
        let scope = scene.scope(scene.entry(ls).node);
        let off = scope.offset(s).ok_or_else(|| {
            step_error(scene, me, format!("the corrected state is not an unknown of the linear solver {}", scene.entry(ls).label()))
                .hint("the state must be an independent (not mapped) state below the linear solver's node")
        })?;
        Ok((scope, off))
    }

    /// `unbuilt_disp := A⁻¹·unbuilt_force` through the linked solver's current factorisation
    /// (the other states of its system get a zero force).
    fn solve_unbuilt(&mut self, scene: &mut Scene) -> SimResult {
        let (_, s, ls, _) = self.ids()?;
        let (scope, _) = self.scope(scene)?;
        let force = mech::alloc_deriv(scene, &scope);
        let disp = mech::alloc_deriv(scene, &scope);
        for &st in &scope.main_states {
            scene.store.get_mut(st).write(force).fill(0.0);
        }
        scene.store.get_mut(s).write(force).copy_from_slice(&self.unbuilt_force);
        let r = with_linear_solver(scene, ls, |solver, scene| solver.solve_again(scene, &scope, force, disp));
        if r.is_ok() {
            self.unbuilt_disp.clear();
            self.unbuilt_disp.extend_from_slice(scene.store.get(s).read(disp));
            self.unbuilt_stale = false;
        }
        mech::free_vec(scene, &scope, force);
        mech::free_vec(scene, &scope, disp);
        r
    }
}

impl Component for LinearSolverConstraintCorrection {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.state = Some(cx.require_state()?);
        self.solver.init(cx)?;
        if cx.data().get(Self::WIRE_OPTIMIZATION) {
            cx.warn("wire_optimization only reorders constraints for UnbuiltGaussSeidelConstraintSolver with a BTDLinearSolver; it is ignored here");
        }
        Ok(())
    }
}

impl ConstraintCorrection for LinearSolverConstraintCorrection {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_compliance_in_constraint_space(&mut self, scene: &mut Scene, cp: &ConstraintParams, w: &mut DenseMatrix) -> SimResult {
        let (me, s, ls, ode) = self.ids()?;
        let factor = ode_factors(scene, ode, cp.dt).for_order(cp.order);
        let (scope, off) = self.scope(scene)?;
        self.jacobian.reset(scope.size);
        self.jacobian.add_state_rows(&scene.store.get(s).constraint, off);
        if add_jminvjt(scene, me, ls, &scope, &self.jacobian, factor, w)? {
            regularize(w, self.jacobian.rows.iter().map(|(r, _)| *r), self.solver.regularization);
        }
        Ok(())
    }

    fn compute_motion_correction(&mut self, scene: &mut Scene, _cp: &ConstraintParams, dx: VecId, f: VecId) -> SimResult {
        let (_, _, ls, _) = self.ids()?;
        let (scope, _) = self.scope(scene)?;
        with_linear_solver(scene, ls, |solver, scene| solver.solve_again(scene, &scope, f, dx))
    }

    fn apply_motion_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, v: VecId, dx: VecId, correction: VecId) -> SimResult {
        let (_, s, _, ode) = self.ids()?;
        let f = ode_factors(scene, ode, cp.dt);
        apply_correction(scene, s, cp, Apply::Motion, x, v, dx, correction, f.position, f.velocity)
    }

    fn apply_position_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, dx: VecId, correction: VecId) -> SimResult {
        let (_, s, _, ode) = self.ids()?;
        let f = ode_factors(scene, ode, cp.dt);
        apply_correction(scene, s, cp, Apply::Position, x, VecId::VELOCITY, dx, correction, f.position, f.velocity)
    }

    fn apply_velocity_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, v: VecId, dv: VecId, correction: VecId) -> SimResult {
        let (_, s, _, ode) = self.ids()?;
        let f = ode_factors(scene, ode, cp.dt);
        apply_correction(scene, s, cp, Apply::Velocity, VecId::POSITION, v, dv, correction, f.position, f.velocity)
    }

    fn reset_contact_force(&mut self, scene: &mut Scene) -> SimResult {
        let (_, s, _, _) = self.ids()?;
        reset_contact_force(scene, s, VecId::FORCE)
    }

    /// SOFA's `applyContactForce`: `dx := A⁻¹·Jᵀλ` (a temporary force vector holds `Jᵀλ`), then
    /// `x = x_free ⊕ p·dx`, `v = v_free + q·dx`, `dx := p·dx` on the state's own vectors.
    fn apply_contact_force(&mut self, scene: &mut Scene, cp: &ConstraintParams, lambda: &[f64]) -> SimResult {
        let (_, s, ls, ode) = self.ids()?;
        let (scope, _) = self.scope(scene)?;
        let force = mech::alloc_deriv(scene, &scope);
        for &st in &scope.main_states {
            scene.store.get_mut(st).write(force).fill(0.0);
        }
        for &st in &scope.main_states {
            scene.store.get_mut(st).write(VecId::DX).fill(0.0);
        }
        settee_core::constraint::add_jt_lambda(scene, s, force, lambda);
        let r = with_linear_solver(scene, ls, |solver, scene| solver.solve_again(scene, &scope, force, VecId::DX));
        mech::free_vec(scene, &scope, force);
        r?;
        let f = ode_factors(scene, ode, cp.dt);
        let lcp = ConstraintParams { x: VecId::FREE_POSITION, v: VecId::FREE_VELOCITY, ..*cp };
        apply_correction(scene, s, &lcp, Apply::Motion, VecId::POSITION, VecId::VELOCITY, VecId::DX, VecId::DX, f.position, f.velocity)
    }
    // ----- The unbuilt path (UnbuiltGaussSeidelConstraintSolver). SOFA solves only the DOFs a
    // block needs with BTDLinearSolver's partial solve and does nothing useful with any other
    // solver; here every displacement comes from a full solve with the current factorisation,
    // redone only when a block's force has changed since the last one. `end` is inclusive.

    fn reset_for_unbuilt_resolution(&mut self, scene: &mut Scene, cp: &ConstraintParams, f: &[f64], _sequence: &mut Vec<usize>) -> SimResult {
        let (_, s, _, ode) = self.ids()?;
        self.unbuilt_position_factor = ode_factors(scene, ode, cp.dt).position;
        let st = scene.store.get(s);
        let ds = st.constraint.deriv_size;
        self.unbuilt_force.clear();
        self.unbuilt_force.resize(st.size * ds, 0.0);
        st.constraint.add_transpose_mul(&mut self.unbuilt_force, |r| f.get(r).copied().unwrap_or(0.0));
        self.unbuilt_stale = true;
        Ok(())
    }

    fn has_constraint_number(&self, scene: &Scene, row: usize) -> bool {
        self.state.is_some_and(|s| scene.store.get(s).constraint.has_row(row))
    }

    fn add_block_diagonal_compliance(
        &mut self,
        scene: &mut Scene,
        cp: &ConstraintParams,
        w: &mut DenseMatrix,
        begin: usize,
        end: usize,
    ) -> SimResult {
        let (me, s, ls, ode) = self.ids()?;
        let factor = ode_factors(scene, ode, cp.dt).for_order(cp.order);
        let (scope, off) = self.scope(scene)?;
        // A block's rows, in a Jacobian kept for the next block.
        let mut j = std::mem::take(&mut self.block_jacobian);
        j.reset(scope.size);
        j.add_state_rows(&scene.store.get(s).constraint, off);
        j.retain_rows(|r| (begin..=end).contains(&r) && r < w.n);
        let r = add_jminvjt(scene, me, ls, &scope, &j, factor, w);
        if matches!(r, Ok(true)) {
            regularize(w, j.rows.iter().map(|(r, _)| *r), self.solver.regularization);
        }
        self.block_jacobian = j;
        r.map(|_| ())
    }

    /// `d_i += J_i · (p · A⁻¹Jᵀf)` for the rows `begin..=end` (p: the position integration
    /// factor, as SOFA), each DOF's product summed before it is added.
    fn add_constraint_displacement(&mut self, scene: &mut Scene, d: &mut [f64], begin: usize, end: usize) -> SimResult {
        if self.unbuilt_stale {
            self.solve_unbuilt(scene)?;
        }
        let (_, s, _, _) = self.ids()?;
        let p = self.unbuilt_position_factor;
        let st = scene.store.get(s);
        let ds = st.constraint.deriv_size;
        for r in begin..=end.min(d.len().saturating_sub(1)) {
            for (dof, b) in st.constraint.row(r) {
                let Some(disp) = self.unbuilt_disp.get(dof * ds..dof * ds + ds) else { continue };
                let mut v = 0.0;
                for (x, y) in b.iter().zip(disp) {
                    v += x * (y * p);
                }
                d[r] += v;
            }
        }
        Ok(())
    }

    fn set_constraint_dforce(&mut self, scene: &mut Scene, df: &[f64], begin: usize, end: usize, update: bool) -> SimResult {
        if !update {
            return Ok(());
        }
        let (_, s, _, _) = self.ids()?;
        let st = scene.store.get(s);
        let ds = st.constraint.deriv_size;
        let rows = df.iter().enumerate().take(end.saturating_add(1)).skip(begin);
        for (r, &dfr) in rows {
            for (dof, b) in st.constraint.row(r) {
                if let Some(out) = self.unbuilt_force.get_mut(dof * ds..dof * ds + ds) {
                    out.iter_mut().zip(b).for_each(|(o, x)| *o += x * dfr);
                    self.unbuilt_stale = true;
                }
            }
        }
        Ok(())
    }
}
