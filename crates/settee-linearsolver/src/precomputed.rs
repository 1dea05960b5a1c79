//! `PrecomputedLinearSolver` (mechanics spec §4.5) and `PrecomputedWarpPreconditioner` with its
//! `PrecomputedMatrixSystem` (§4.3.1).

use settee_core::component::link;
use settee_core::data::{decl, DataKind::*};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{
    component_any, Component, ComponentClass, ComponentId, DataDecl, InitCtx, LinkDecl, Mbk, Roles, Scene, SimResult, TemplateRule, VecId,
};
use settee_linalg::{dense_inverse, gemv_transposed, transpose_dense, MatrixBuilder};

use crate::common::{step_error, unsupported, LINEAR_SYSTEM_LINK, MATRIX_SOLVER_DATA};
use crate::preconditioner::Preconditioner;

static PRECOMPUTED_DATA: &[DataDecl] = &[
    decl("jmjt_twostep", Bool, "true", "Use two step algorithm to compute JMinvJt"),
    decl("use_file", Bool, "true", "Dump the inverted system matrix into a file to reuse it (Settee recomputes it: same numbers)"),
];

pub static PRECOMPUTED_LINEAR_SOLVER: ComponentClass = ComponentClass {
    name: "PrecomputedLinearSolver",
    description: "Linear solver based on the dense inverse of the system matrix of the first step, reused for every later step.",
    roles: Roles::LINEAR_SOLVER,
    templates: &["CompressedRowSparseMatrixd"],
    default_template: "CompressedRowSparseMatrixd",
    template_rule: TemplateRule::Default,
    data: &[MATRIX_SOLVER_DATA, PRECOMPUTED_DATA],
    links: &[LINEAR_SYSTEM_LINK],
    create: |_| Box::new(PrecomputedLinearSolver::default()),
    preparse: None,
    no_src_link: &[],
    reads: &[],
};

/// Inverts the first step's matrix densely, then only multiplies: the matrix is frozen, as in
/// SOFA (which disables the assembly of its system after the first inversion).
#[derive(Default)]
pub struct PrecomputedLinearSolver {
    me: Option<ComponentId>,
    /// Transpose of the stored dense inverse (`minv_t[k·n + i]` = entry `(i, k)` used for row `i`
    /// of the product), laid out for [`gemv_transposed`].
    minv: Vec<f64>,
    n: usize,
    b: Vec<f64>,
    x: Vec<f64>,
}

impl Component for PrecomputedLinearSolver {
    component_any!();
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.minv.clear();
        self.n = 0;
        Ok(())
    }
    fn linear_solver(&mut self) -> Option<&mut dyn settee_core::component::LinearSolver> {
        Some(self)
    }
}

impl settee_core::component::LinearSolver for PrecomputedLinearSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
        if self.minv.is_empty() {
            let mut builder = MatrixBuilder::new(scope.size);
            mech::assemble(scene, scope, factors, &mut builder)?;
            let minv = dense_inverse(builder.matrix()).map_err(|e| {
                step_error(scene, self.me, format!("inverting the first step's system matrix failed: {e}"))
                    .hint("the system matrix must be symmetric positive definite")
            })?;
            self.minv = transpose_dense(&minv, scope.size, scope.size);
            self.n = scope.size;
        }
        if scope.size != self.n {
            return Err(unsupported(step_error(
                scene,
                self.me,
                format!("the system changed size ({} → {}) after the matrix was precomputed", self.n, scope.size),
            )));
        }
        mech::gather(scene, scope, rhs, &mut self.b);
        self.x.clear();
        self.x.resize(self.n, 0.0);
        // x = Minv·b, row by row (Minv is symmetric, so row i is column i of the inverse as
        // computed); each x_i is summed in column order, as the plain dot product.
        gemv_transposed(&self.minv, self.n, self.n, &self.b, &mut self.x);
        mech::scatter(scene, scope, solution, &self.x);
        Ok(())
    }
}

// ----- PrecomputedWarpPreconditioner -------------------------------------------------------------

static WARP_DATA: &[DataDecl] = &[
    decl("jmjt_twostep", Bool, "true", "Use two step algorithm to compute JMinvJt"),
    decl("use_file", Bool, "true", "Dump system matrix in a file"),
    decl("share_matrix", Bool, "true", "Share the compliance matrix in memory if they are related to the same file (same geometry)"),
    decl("use_rotations", Bool, "true", "Use Rotations around the preconditioner"),
    decl("draw_rotations_scale", Real, "0", "Scale rotations in draw function (rendering only)"),
];

static WARP_LINKS: &[LinkDecl] = &[LINEAR_SYSTEM_LINK, link("linearSolver", Roles::LINEAR_SOLVER, "linear solver used to precompute the inverse")];

pub static PRECOMPUTED_WARP: ComponentClass = ComponentClass {
    name: "PrecomputedWarpPreconditioner",
    description: "Preconditioner using a precomputed inverse of the system matrix, warped by the rotations of the elements.",
    roles: Roles::LINEAR_SOLVER,
    templates: &["Vec3d"],
    default_template: "Vec3d",
    template_rule: TemplateRule::Default,
    data: &[MATRIX_SOLVER_DATA, WARP_DATA],
    links: WARP_LINKS,
    create: |_| Box::new(PrecomputedWarpPreconditioner),
    preparse: None,
    no_src_link: &[],
    reads: &[],
};

/// In SOFA the linear system of this preconditioner is a `PrecomputedMatrixSystem`, which never
/// assembles: the precomputation sees an empty matrix and the preconditioner returns zero, so the
/// PCG it preconditions makes no update at all. Settee reproduces that (and says so).
#[derive(Default)]
pub struct PrecomputedWarpPreconditioner;

impl Component for PrecomputedWarpPreconditioner {
    component_any!();
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if let Some(&s) = cx.link_targets("linearSystem").first() {
            if cx.scene.entry(s).class.name != "PrecomputedMatrixSystem" {
                return Err(unsupported(
                    cx.error(format!("a PrecomputedWarpPreconditioner on {} is not supported yet", cx.scene.entry(s).label()))
                        .hint("SOFA uses a PrecomputedMatrixSystem here (the default)"),
                ));
            }
        }
        cx.warn("its PrecomputedMatrixSystem never assembles, so nothing is precomputed and the preconditioner returns zero: the preconditioned CG makes no update (SOFA behaves the same)");
        Ok(())
    }
}

impl Preconditioner for PrecomputedWarpPreconditioner {
    fn refresh(&mut self, _scene: &mut Scene, _scope: &MechScope, _factors: Mbk) -> SimResult {
        Ok(())
    }
    fn apply(&mut self, _scene: &mut Scene, _r: &[f64], z: &mut [f64]) -> SimResult {
        z.fill(0.0);
        Ok(())
    }
}

pub static PRECOMPUTED_MATRIX_SYSTEM: ComponentClass = ComponentClass {
    name: "PrecomputedMatrixSystem",
    description: "Linear system that never assembles its matrix (used by PrecomputedWarpPreconditioner).",
    roles: Roles::LINEAR_SYSTEM,
    templates: &["CompressedRowSparseMatrixd"],
    default_template: "CompressedRowSparseMatrixd",
    template_rule: TemplateRule::Default,
    data: &[],
    links: &[],
    create: |_| Box::new(PrecomputedMatrixSystem),
    preparse: None,
    no_src_link: &[],
    reads: &[],
};

pub struct PrecomputedMatrixSystem;

impl Component for PrecomputedMatrixSystem {
    component_any!();
}
