//! Pieces shared by the linear solvers: base Data, the assembled system they solve on, and
//! step-time diagnostics.

use settee_core::data_group;
use settee_core::mechanics::{self as mech, AssemblyOptions, MechScope};
use settee_core::{ComponentId, Diagnostic, Mbk, Scene, SimError, SimResult, VecId};
use settee_linalg::MatrixBuilder;

use crate::space::{AssembledSpace, KeptVectors};

/// Data of SOFA's `MatrixLinearSolver` base class.
#[data_group(data = {
    /// Parallelize the computation of the product J*M^{-1}*J^T where M is the matrix of the linear system and J is any matrix with compatible dimensions
    parallelInverseProduct: Bool = "false",
})]
pub struct MatrixSolverData;

/// The residual graph of SOFA's iterative linear solvers (CG, MinRes, PCG), after their own Data.
#[data_group(data = {
    /// Graph of residuals at each iteration (output, not filled by Settee)
    graph: Str,
})]
pub struct ResidualGraphData;

/// The template of the matrix-free iterative solvers (the first of their templates).
pub(crate) const GRAPH_SCATTERED: &str = "GraphScattered";

/// Marks an error as "not supported by Settee" (listed by `settee check`).
pub(crate) fn unsupported(mut e: SimError) -> SimError {
    e.0.unsupported = true;
    e
}

/// A warning about component `me`, recorded in the scene's messages during a step.
pub(crate) fn step_warning(scene: &mut Scene, me: Option<ComponentId>, message: impl Into<String>) {
    let mut d = Diagnostic::warning(message);
    if let Some(c) = me {
        d = d.subject(scene.entry(c).label()).at(scene.entry(c).pos.clone());
    }
    scene.report(d);
}

/// An error about component `me` raised during a step.
pub(crate) fn step_error(scene: &Scene, me: Option<ComponentId>, message: impl Into<String>) -> SimError {
    let mut d = Diagnostic::error(message);
    if let Some(c) = me {
        d = d.subject(scene.entry(c).label()).at(scene.entry(c).pos.clone());
    }
    SimError(Box::new(d))
}

/// SOFA's `MatrixLinearSystem` as seen by one solver: the global matrix (its sparsity pattern is
/// kept from step to step) and the global solution and right-hand-side vectors.
#[derive(Clone, Default)]
pub(crate) struct AssembledSystem {
    pub builder: Option<MatrixBuilder>,
    pub x: Vec<f64>,
    pub b: Vec<f64>,
    /// The solver's `linearSystem` link target (a `CompositeLinearSystem` makes the solver build
    /// its other systems too).
    pub link: Option<ComponentId>,
    /// The systems built alongside, resolved at the first assembly.
    side: Option<Vec<ComponentId>>,
    /// The vectors of the last solve's space (its temporaries are reused).
    kept: KeptVectors,
}

impl AssembledSystem {
    /// Records the solver's `linearSystem` link (call from the solver's `init`).
    pub fn set_link(&mut self, cx: &settee_core::InitCtx) {
        self.link = cx.link_targets("linearSystem").first().copied();
        self.side = None;
    }

    /// Builds the systems a `CompositeLinearSystem` assembles next to the solved one.
    fn build_side(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        let link = self.link;
        let side = self.side.get_or_insert_with(|| link.map(|c| crate::composite::side_systems(scene, c)).unwrap_or_default());
        for &c in side.iter() {
            crate::composite::build_side_system(scene, c, scope, factors)?;
        }
        Ok(())
    }

    /// Builds `P(mM + bB + kK)P` into the kept builder.
    pub fn assemble(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult<&mut MatrixBuilder> {
        self.assemble_with(scene, scope, factors, &AssemblyOptions::default())
    }

    /// Builds the contributions `opts` selects into the kept builder.
    pub fn assemble_with(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, opts: &AssemblyOptions) -> SimResult<&mut MatrixBuilder> {
        self.build_side(scene, scope, factors)?;
        let builder = self.builder.get_or_insert_with(|| MatrixBuilder::new(scope.size));
        mech::assemble_with(scene, scope, factors, opts, builder)?;
        Ok(builder)
    }

    /// Assembles the system, copies `solution` and `rhs` into global vectors, runs `f` on them
    /// and copies the solution back (SOFA's `setSystemMBKMatrix`, `setSystemSolution`,
    /// `setRHS`, `solveSystem`, `dispatchSystemSolution`).
    pub fn solve_with<R>(
        &mut self,
        scene: &mut Scene,
        scope: &MechScope,
        factors: Mbk,
        rhs: VecId,
        solution: VecId,
        f: impl FnOnce(&mut AssembledSpace) -> SimResult<R>,
    ) -> SimResult<R> {
        self.build_side(scene, scope, factors)?;
        let Self { builder, x, b, kept, .. } = self;
        let builder = builder.get_or_insert_with(|| MatrixBuilder::new(scope.size));
        mech::assemble(scene, scope, factors, builder)?;
        mech::gather(scene, scope, solution, x);
        mech::gather(scene, scope, rhs, b);
        let mut space = AssembledSpace::reusing(builder.matrix(), std::mem::take(x), std::mem::take(b), std::mem::take(kept))?;
        let r = f(&mut space);
        let (xv, bv, vecs) = space.into_all();
        *kept = vecs;
        if r.is_ok() {
            mech::scatter(scene, scope, solution, &xv);
        }
        *x = xv;
        *b = bv;
        r
    }
}

/// `#[component(...)]` of SOFA's iterative `MatrixLinearSolver`s (CG, MinRes): the
/// [`LinearSolver`](settee_core::LinearSolver) role, their templates (matrix-free first, then the
/// assembled matrix types) made by the module's `create`, the base Data around the class's own
/// and the `linearSystem` link.
macro_rules! iterative_solver_component {
    ($(#[doc = $doc:literal])* #[component($($key:tt)*)] $item:item) => {
        #[settee_core::component(
            roles = [LinearSolver],
            default_template = "GraphScattered",
            create = create,
            inherit = [MatrixSolverData, Self, ResidualGraphData],
            links = {
                /// The linear system to solve
                linearSystem: LinearSystem,
            },
            templates = [
                "GraphScattered",
                "FullMatrix",
                "SparseMatrix",
                "CompressedRowSparseMatrixd",
                "CompressedRowSparseMatrixMat2x2d",
                "CompressedRowSparseMatrixMat3x3d",
                "CompressedRowSparseMatrixMat4x4d",
                "CompressedRowSparseMatrixMat6x6d",
                "CompressedRowSparseMatrixMat8x8d",
            ],
            $($key)*
        )]
        $(#[doc = $doc])*
        $item
    };
}
pub(crate) use iterative_solver_component;

/// `#[component(...)]` with the templates of SOFA's assembled linear systems (the compressed
/// row block sizes, then the dense and sparse matrices), followed by `extra` ones.
macro_rules! linear_system_component {
    ([$($extra:literal),*] $(#[doc = $doc:literal])* #[component($($key:tt)*)] $item:item) => {
        #[settee_core::component(
            templates = [
                "CompressedRowSparseMatrixd",
                "CompressedRowSparseMatrixMat2x2d",
                "CompressedRowSparseMatrixMat3x3d",
                "CompressedRowSparseMatrixMat4x4d",
                "CompressedRowSparseMatrixMat6x6d",
                "CompressedRowSparseMatrixMat8x8d",
                "FullMatrix",
                "SparseMatrix",
                $($extra),*
            ],
            $($key)*
        )]
        $(#[doc = $doc])*
        $item
    };
}
pub(crate) use linear_system_component;
