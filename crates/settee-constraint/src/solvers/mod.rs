//! Constraint solvers (Sofa.Component.Constraint.Lagrangian.Solver).
//!
//! The algorithms are plain functions over a [`ConstraintProblem`](settee_core::constraint::ConstraintProblem)
//! (`block_gauss_seidel`, `nncg`, `preconditioned_conjugate_residual`, `unbuilt_gauss_seidel`,
//! `improved_jacobi`, the LCP kernels), so they can be tested and benchmarked without a scene;
//! the components wrap them in the shared machinery of [`generic`].
#![allow(clippy::needless_range_loop)]

pub mod block_gauss_seidel;
pub mod generic;
pub mod improved_jacobi;
pub mod lcp;
pub mod nncg;
pub mod pcr;
pub mod spectrum;
pub mod unbuilt_gs;

pub use block_gauss_seidel::{block_gauss_seidel, gauss_seidel_sweep, BlockGaussSeidel};
pub use generic::{GenericConstraintSolver, SolveOutcome, SolverMethod, UnbuiltOps, UnbuiltProblem};
pub use improved_jacobi::{improved_jacobi, ImprovedJacobi, ImprovedJacobiOptions};
pub use lcp::{
    gauss_seidel_lcp1, lcp_gauss_seidel_unbuilt, nlcp_gauss_seidel, nlcp_gauss_seidel_unbuilt, LcpConstraintSolver, LcpOutcome, NlcpOptions,
};
pub use nncg::{nncg, Nncg};
pub use pcr::{preconditioned_conjugate_residual, PreconditionedConjugateResidual};
pub use unbuilt_gs::{unbuilt_gauss_seidel, UnbuiltGaussSeidel};

pub type BlockGaussSeidelConstraintSolver = GenericConstraintSolver<BlockGaussSeidel>;
pub type NNCGConstraintSolver = GenericConstraintSolver<Nncg>;
pub type PreconditionedConjugateResidualSolver = GenericConstraintSolver<PreconditionedConjugateResidual>;
pub type UnbuiltGaussSeidelConstraintSolver = GenericConstraintSolver<UnbuiltGaussSeidel>;
pub type ImprovedJacobiConstraintSolver = GenericConstraintSolver<ImprovedJacobi>;

/// Registers the classes of this module: the one declaration of [`GenericConstraintSolver`]
/// gives the five classes of its algorithms. (`GenericConstraintSolver` is refused by the factory
/// with SOFA's migration message, `settee_core::names`.)
pub fn register(f: &mut settee_core::Factory) {
    f.add::<BlockGaussSeidelConstraintSolver>();
    f.add::<LcpConstraintSolver>();
}
