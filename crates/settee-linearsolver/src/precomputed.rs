//! `PrecomputedLinearSolver` (mechanics spec §4.5) and `PrecomputedWarpPreconditioner` with its
//! `PrecomputedMatrixSystem` (§4.3.1).

use settee_core::component::LinearSolver;
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::role::LinearSystem;
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimResult, VecId};
use settee_linalg::{dense_inverse, MatrixBuilder, RowPanels};

use crate::common::{step_error, unsupported, MatrixSolverData};
use crate::preconditioner::Preconditioner;

/// Linear solver based on the dense inverse of the system matrix of the first step, reused for every later step.
///
/// Inverts the first step's matrix densely, then only multiplies: the matrix is frozen, as in
/// SOFA (which disables the assembly of its system after the first inversion).
#[component(
    module = "Sofa.Component.LinearSolver.Direct",
    roles = [LinearSolver],
    templates = ["CompressedRowSparseMatrixd"],
    inherit = [MatrixSolverData],
    data = {
        /// Use two step algorithm to compute JMinvJt
        jmjt_twostep: Bool = "true",
        /// Dump the inverted system matrix into a file to reuse it (Settee recomputes it: same numbers)
        use_file: Bool = "true",
    },
    links = {
        /// The linear system to solve
        linearSystem: LinearSystem,
    },
)]
#[derive(Clone, Default)]
pub struct PrecomputedLinearSolver {
    me: Option<ComponentId>,
    /// The dense inverse, row `i` of the product being column `i` of the inverse as computed,
    /// stored in row panels (the product streams through it once).
    minv: Option<RowPanels>,
    n: usize,
    b: Vec<f64>,
    x: Vec<f64>,
}

impl Component for PrecomputedLinearSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.minv = None;
        self.n = 0;
        Ok(())
    }
}

impl LinearSolver for PrecomputedLinearSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
        if self.minv.is_none() {
            let mut builder = MatrixBuilder::new(scope.size);
            mech::assemble(scene, scope, factors, &mut builder)?;
            let minv = dense_inverse(builder.matrix()).map_err(|e| {
                step_error(scene, self.me, format!("inverting the first step's system matrix failed: {e}"))
                    .hint("the system matrix must be symmetric positive definite")
            })?;
            // `minv` is column-major (chunk j = A⁻¹e_j): read row-major, row i is column i.
            self.minv = Some(RowPanels::from_row_major(&minv, scope.size, scope.size));
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
        if let Some(m) = &self.minv {
            m.mul(&self.b, &mut self.x);
        }
        mech::scatter(scene, scope, solution, &self.x);
        Ok(())
    }
}

// ----- PrecomputedWarpPreconditioner -------------------------------------------------------------

/// Preconditioner using a precomputed inverse of the system matrix, warped by the rotations of the elements.
///
/// In SOFA the linear system of this preconditioner is a `PrecomputedMatrixSystem`, which never
/// assembles: the precomputation sees an empty matrix and the preconditioner returns zero, so the
/// PCG it preconditions makes no update at all. Settee reproduces that (and says so).
#[component(
    module = "Sofa.Component.LinearSolver.Preconditioner",
    roles = [Preconditioner],
    templates = ["Vec3d"],
    inherit = [MatrixSolverData],
    data = {
        /// Use two step algorithm to compute JMinvJt
        jmjt_twostep: Bool = "true",
        /// Dump system matrix in a file
        use_file: Bool = "true",
        /// Share the compliance matrix in memory if they are related to the same file (same geometry)
        share_matrix: Bool = "true",
        /// Use Rotations around the preconditioner
        use_rotations: Bool = "true",
        /// Scale rotations in draw function (rendering only)
        draw_rotations_scale: Real = "0",
    },
    links = {
        /// The linear system to solve
        linearSystem: LinearSystem,
        /// linear solver used to precompute the inverse
        linearSolver: LinearSolver,
    },
)]
#[derive(Clone, Default)]
pub struct PrecomputedWarpPreconditioner;

impl Component for PrecomputedWarpPreconditioner {
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

/// Linear system that never assembles its matrix (used by PrecomputedWarpPreconditioner).
///
/// `PrecomputedMatrixSystem`: accepted, never assembles.
#[component(
    module = "Sofa.Component.LinearSolver.Preconditioner",
    markers = [LinearSystem],
    templates = ["CompressedRowSparseMatrixd"],
)]
#[derive(Clone, Default)]
pub struct PrecomputedMatrixSystem;

impl Component for PrecomputedMatrixSystem {}
