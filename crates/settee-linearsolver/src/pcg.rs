//! `PCGLinearSolver` (formerly `ShewchukPCGLinearSolver`), mechanics spec §4.3: matrix-free
//! preconditioned CG with warm start. Only the case without preconditioner is supported so far.

use settee_core::component::link;
use settee_core::data::{decl, DataKind::*};
use settee_core::mechanics::MechScope;
use settee_core::{component_any, Component, ComponentClass, CreateArgs, DataDecl, InitCtx, LinkDecl, Mbk, Roles, Scene, SimResult, TemplateRule, VecId};

use crate::cg::read_iterations;
use crate::common::{unsupported, GRAPH_SCATTERED, LINEAR_SYSTEM_LINK, MATRIX_SOLVER_DATA};
use crate::space::{with_temps, GraphSpace, VectorSpace};

/// What one [`pcg`] call did.
#[derive(Clone, Debug, PartialEq)]
pub struct PcgReport {
    /// Number of updates of `x`.
    pub updates: usize,
    /// `rᵀz / bᵀb` before the loop and after each iteration (SOFA's `graph["Error k"]`).
    pub errors: Vec<f64>,
}

/// SOFA's `PCGLinearSolver::solve(A, x, b)` without preconditioner (`z = r`): starts from the
/// given `x` (warm start), stops when `rᵀr ≤ tolerance·bᵀb` or after `iterations` iterations.
pub fn pcg<S: VectorSpace>(s: &mut S, x: S::V, b: S::V, iterations: u64, tolerance: f64) -> SimResult<PcgReport> {
    with_temps(s, |s, [r, w, q]| {
        let mut rep = PcgReport { updates: 0, errors: Vec::new() };
        let b_norm = s.dot(b, b);
        let tol = tolerance * b_norm;
        s.mul(x, r)?;
        s.v_op(r, Some(b), Some(r), -1.0); // r = b - A x
        s.v_op(w, Some(r), None, 1.0); // w = precond(r) = r
        let mut r_norm = s.dot(r, w);
        rep.errors.push(r_norm / b_norm);
        let mut it: u64 = 1;
        while it <= iterations && r_norm > tol {
            s.mul(w, q)?;
            let dtq = s.dot(w, q);
            let alpha = r_norm / dtq;
            s.v_op(x, Some(x), Some(w), alpha);
            s.v_op(r, Some(r), Some(q), -alpha);
            s.v_op(q, Some(r), None, 1.0); // s = precond(r) = r
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

static DATA: &[DataDecl] = &[
    decl("iterations", Int, "25", "Maximum number of iterations after which the iterative descent of the Conjugate Gradient must stop"),
    decl(
        "tolerance",
        Real,
        "1e-5",
        "Desired accuracy of the Conjugate Gradient solution evaluating: |r|²/|b|² (ratio of current residual norm over initial residual norm)",
    ),
    decl("use_precond", Bool, "true", "Use a preconditioner"),
    decl("graph", Str, "", "Graph of residuals at each iteration (output, not filled by Settee)"),
];

static LINKS: &[LinkDecl] = &[
    LINEAR_SYSTEM_LINK,
    link("preconditioner", Roles::LINEAR_SOLVER, "Link towards the linear solver used to precondition the conjugate gradient"),
];

pub static CLASS: ComponentClass = ComponentClass {
    name: "PCGLinearSolver",
    description: "Linear system solver using the preconditioned conjugate gradient iterative algorithm",
    roles: Roles::LINEAR_SOLVER,
    templates: &[GRAPH_SCATTERED],
    default_template: GRAPH_SCATTERED,
    template_rule: TemplateRule::Default,
    data: &[MATRIX_SOLVER_DATA, DATA],
    links: LINKS,
    create,
    preparse: None,
    no_src_link: &[],
};

fn create(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(PcgLinearSolver::default())
}

#[derive(Default)]
pub struct PcgLinearSolver {
    iterations: u64,
    tolerance: f64,
    last: Option<PcgReport>,
}

impl PcgLinearSolver {
    pub fn last_report(&self) -> Option<&PcgReport> {
        self.last.as_ref()
    }
}

impl Component for PcgLinearSolver {
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.iterations = read_iterations(cx)?;
        self.tolerance = cx.data().real("tolerance");
        let use_precond = cx.data().bool("use_precond");
        if use_precond && cx.scene.link_is_set(cx.id, "preconditioner") {
            let what = match cx.link_targets("preconditioner").first() {
                Some(p) => cx.scene.entry(*p).label(),
                None => "the linked preconditioner".to_string(),
            };
            return Err(unsupported(cx.error(format!("preconditioning with {what} is not supported yet")).hint(
                "remove the 'preconditioner' link or set use_precond=\"false\" (the solve is then an unpreconditioned CG with warm start; the trajectory differs from SOFA's)",
            )));
        }
        self.last = None;
        Ok(())
    }

    fn linear_solver(&mut self) -> Option<&mut dyn settee_core::component::LinearSolver> {
        Some(self)
    }
}

impl settee_core::component::LinearSolver for PcgLinearSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
        let mut sp = GraphSpace::new(scene, scope, factors);
        self.last = Some(pcg(&mut sp, solution, rhs, self.iterations, self.tolerance)?);
        Ok(())
    }
}
