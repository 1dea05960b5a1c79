//! `LinearSolverConstraintCorrection` (lagrangian-constraints spec §2): the exact compliance
//! `W = factor·J·A⁻¹·Jᵀ` of one state through the linear solver that solved its free motion, and
//! the motion `A⁻¹·Jᵀλ` by solving again with the same system.

use settee_core::component::link;
use settee_core::constraint::{ConstraintCorrection, ConstraintJacobian, ConstraintParams, DenseMatrix};
use settee_core::data::{decl, DataKind::*};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{
    component_any, Component, ComponentClass, ComponentId, CreateArgs, DataDecl, InitCtx, LinkDecl, Roles, Scene, SimError, SimResult, StateId,
    TemplateRule, VecId,
};

use super::common::{apply_correction, ode_factors, ode_solver_local_or_root, step_error, Apply, STATE_TEMPLATES};

static DATA: &[DataDecl] = &[
    decl("wire_optimization", Bool, "false", "constraints are reordered along a wire-like topology (from tip to base)"),
    decl("regularizationTerm", Real, "0", "Add regularization factor times the identity matrix to the compliance W when solving constraints"),
];

pub(crate) const LINEAR_SOLVER_LINK: LinkDecl = link(
    "linearSolver",
    Roles::LINEAR_SOLVER,
    "Link towards the linear solver used to compute the compliance matrix, requiring the inverse of the linear system matrix",
);
pub(crate) const ODE_SOLVER_LINK: LinkDecl =
    link("ODESolver", Roles::ODE_SOLVER, "Link towards the ODE solver used to recover the integration factors");

static LINKS: &[LinkDecl] = &[LINEAR_SOLVER_LINK, ODE_SOLVER_LINK];

settee_core::data_refs! {
    static READS;
    WIRE_OPTIMIZATION: Bool = "wire_optimization";
    REGULARIZATION_TERM: Real = "regularizationTerm";
}

pub static CLASS: ComponentClass = ComponentClass {
    name: "LinearSolverConstraintCorrection",
    description: "Constraint correction computing the compliance J·A⁻¹·Jᵀ with the linear solver of the object",
    roles: Roles::CONSTRAINT_CORRECTION,
    templates: STATE_TEMPLATES,
    default_template: "Vec3d",
    template_rule: TemplateRule::FromState,
    data: &[DATA],
    links: LINKS,
    create,
    preparse: None,
    no_src_link: &[],
    reads: READS,
};

fn create(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(LinearSolverConstraintCorrection::default())
}

/// The linear solver a correction uses: its `linearSolver` link, else the first linear solver of
/// its node; a matrix-free (`GraphScattered`) one is refused as SOFA does.
pub(crate) fn resolve_linear_solver(cx: &InitCtx) -> SimResult<ComponentId> {
    let ls = cx.link_targets("linearSolver").first().copied().or_else(|| cx.scene.find_local(cx.node(), Roles::LINEAR_SOLVER)).ok_or_else(|| {
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

#[derive(Default)]
pub struct LinearSolverConstraintCorrection {
    me: Option<ComponentId>,
    state: Option<StateId>,
    linear_solver: Option<ComponentId>,
    ode: Option<ComponentId>,
    regularization: f64,
    /// `J` of the last compliance, in the solver's global columns.
    jacobian: ConstraintJacobian,
}

impl LinearSolverConstraintCorrection {
    fn ids(&self) -> SimResult<(ComponentId, StateId, ComponentId, ComponentId)> {
        match (self.me, self.state, self.linear_solver, self.ode) {
            (Some(me), Some(s), Some(ls), Some(ode)) => Ok((me, s, ls, ode)),
            _ => Err(SimError::new("LinearSolverConstraintCorrection used before init")),
        }
    }

    /// The scope the linear solver solves over (the subtree of its node) and this state's offset
    /// in it.
    fn scope(&self, scene: &Scene) -> SimResult<(MechScope, usize)> {
        let (me, s, ls, _) = self.ids()?;
        let scope = MechScope::build(scene, scene.entry(ls).node);
        let off = scope.offset(s).ok_or_else(|| {
            step_error(scene, me, format!("the corrected state is not an unknown of the linear solver {}", scene.entry(ls).label()))
                .hint("the state must be an independent (not mapped) state below the linear solver's node")
        })?;
        Ok((scope, off))
    }
}

impl Component for LinearSolverConstraintCorrection {
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.state = Some(cx.require_state()?);
        self.linear_solver = Some(resolve_linear_solver(cx)?);
        self.ode = Some(resolve_ode_solver(cx)?);
        let d = cx.data();
        self.regularization = d.get(REGULARIZATION_TERM);
        if d.get(WIRE_OPTIMIZATION) {
            cx.warn("wire_optimization only reorders constraints for UnbuiltGaussSeidelConstraintSolver with a BTDLinearSolver; it is ignored here");
        }
        Ok(())
    }

    fn constraint_correction(&mut self) -> Option<&mut dyn ConstraintCorrection> {
        Some(self)
    }
}

impl ConstraintCorrection for LinearSolverConstraintCorrection {
    fn states(&self) -> Vec<StateId> {
        self.state.into_iter().collect()
    }

    fn add_compliance_in_constraint_space(&mut self, scene: &mut Scene, cp: &ConstraintParams, w: &mut DenseMatrix) -> SimResult {
        let (me, s, ls, ode) = self.ids()?;
        let factor = ode_factors(scene, ode, cp.dt).for_order(cp.order);
        let (scope, off) = self.scope(scene)?;
        self.jacobian.ncols = scope.size;
        self.jacobian.rows.clear();
        self.jacobian.add_state_rows(&scene.store.get(s).constraint, off);
        if let Some((r, _)) = self.jacobian.rows.last() {
            if *r >= w.n {
                return Err(step_error(scene, me, format!("constraint row {r} is beyond the {} rows of the compliance matrix", w.n)));
            }
        }
        if self.jacobian.rows.is_empty() {
            return Ok(());
        }
        let j = &self.jacobian;
        scene.with_taken(ls, |obj, scene| match obj.linear_solver() {
            Some(solver) => solver.add_jminvjt(scene, &scope, j, factor, w),
            None => Err(SimError::new("the linearSolver link does not point to a linear solver")),
        })?;
        if self.regularization > f64::EPSILON {
            for (r, _) in &self.jacobian.rows {
                w.add(*r, *r, self.regularization);
            }
        }
        Ok(())
    }

    fn compute_motion_correction(&mut self, scene: &mut Scene, _cp: &ConstraintParams, dx: VecId, f: VecId) -> SimResult {
        let (_, _, ls, _) = self.ids()?;
        let (scope, _) = self.scope(scene)?;
        scene.with_taken(ls, |obj, scene| match obj.linear_solver() {
            Some(solver) => solver.solve_again(scene, &scope, f, dx),
            None => Err(SimError::new("the linearSolver link does not point to a linear solver")),
        })
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
        scene.store.get_mut(s).write(VecId::FORCE).fill(0.0);
        Ok(())
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
        let r = scene.with_taken(ls, |obj, scene| match obj.linear_solver() {
            Some(solver) => solver.solve_again(scene, &scope, force, VecId::DX),
            None => Err(SimError::new("the linearSolver link does not point to a linear solver")),
        });
        mech::free_vec(scene, &scope, force);
        r?;
        let f = ode_factors(scene, ode, cp.dt);
        let lcp = ConstraintParams { x: VecId::FREE_POSITION, v: VecId::FREE_VELOCITY, ..*cp };
        apply_correction(scene, s, &lcp, Apply::Motion, VecId::POSITION, VecId::VELOCITY, VecId::DX, VecId::DX, f.position, f.velocity)
    }
}
