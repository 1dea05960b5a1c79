//! Linear solvers (mechanics spec §4): the conjugate gradient in its matrix-free
//! (`GraphScattered`) and assembled forms, PCG and MINRES, the direct sparse solvers over the
//! assembled system, the ordering-method components they read, and the linear-system components
//! SOFA scenes declare.
//!
//! The iterative algorithms are written once over [`space::VectorSpace`] with SOFA's `vOp`
//! arithmetic and are public, so they can be tested (and reused) on plain CRS matrices through
//! [`space::AssembledSpace`].

pub mod btd;
pub mod cg;
mod common;
pub mod composite;
pub mod direct;
pub mod minres;
pub mod ordering;
pub mod pcg;
pub mod precomputed;
pub mod preconditioner;
pub mod space;
pub mod system;

pub use cg::{cg, CgEnd, CgLinearSolver, CgParams, CgReport};
pub use composite::CompositeLinearSystem;
pub use direct::{copy_non_zeros, DirectLinearSolver};
pub use minres::{minres, MinResLinearSolver, MinResReport};
pub use ordering::OrderingMethod;
pub use pcg::{pcg, PcgLinearSolver, PcgReport};
pub use space::{AssembledSpace, GraphSpace, VectorSpace};

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&btd::CLASS);
    f.register(&cg::CLASS);
    f.register(&pcg::CLASS);
    f.register(&minres::CLASS);
    f.register(&direct::SPARSE_LDL);
    f.register(&direct::EIGEN_LDLT);
    f.register(&direct::EIGEN_LLT);
    f.register(&direct::EIGEN_LU);
    f.register(&direct::EIGEN_QR);
    f.register(&ordering::NATURAL);
    f.register(&ordering::AMD);
    f.register(&ordering::COLAMD);
    f.register(&system::MATRIX_LINEAR_SYSTEM);
    f.register(&system::CONSTANT_SPARSITY_PATTERN_SYSTEM);
    f.register(&system::PRECONDITIONED_MATRIX_FREE_SYSTEM);
    f.register(&composite::CLASS);
    f.register(&preconditioner::JACOBI);
    f.register(&preconditioner::BLOCK_JACOBI);
    f.register(&preconditioner::SSOR);
    f.register(&preconditioner::WARP);
    f.register(&preconditioner::ROTATION_MATRIX_SYSTEM);
    f.register(&precomputed::PRECOMPUTED_LINEAR_SOLVER);
    f.register(&precomputed::PRECOMPUTED_WARP);
    f.register(&precomputed::PRECOMPUTED_MATRIX_SYSTEM);
}
