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
pub mod dense;
pub mod direct;
pub mod minres;
pub mod ordering;
pub mod pcg;
pub mod precomputed;
pub mod preconditioner;
pub mod space;
pub mod system;
#[doc(hidden)]
pub mod testing;

pub use cg::{cg, cg_reusing, CgEnd, CgLinearSolver, CgParams, CgReport};
pub use composite::CompositeLinearSystem;
pub use dense::{DenseDirectSolver, DenseKind};
pub use direct::{DirectLinearSolver, SparseLdlData};
pub use minres::{minres, MinResLinearSolver, MinResReport};
pub use ordering::OrderingMethod;
pub use pcg::{pcg, pcg_reusing, PcgLinearSolver, PcgReport};
pub use preconditioner::{Preconditioner, PRECONDITIONER};
pub use space::{AssembledSpace, GraphSpace, VectorSpace};

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<btd::BtdLinearSolver>();
    f.add::<CgLinearSolver>();
    f.add::<PcgLinearSolver>();
    f.add::<MinResLinearSolver>();
    f.add::<DirectLinearSolver>();
    f.add::<DenseDirectSolver>();
    f.add::<OrderingMethod>();
    f.add::<system::MatrixLinearSystem>();
    f.add::<system::MatrixProjectionMethod>();
    f.add::<system::PreconditionedMatrixFreeSystem>();
    f.add::<CompositeLinearSystem>();
    f.add::<preconditioner::JacobiPreconditioner>();
    f.add::<preconditioner::BlockJacobiPreconditioner>();
    f.add::<preconditioner::SsorPreconditioner>();
    f.add::<preconditioner::WarpPreconditioner>();
    f.add::<preconditioner::RotationMatrixSystem>();
    f.add::<precomputed::PrecomputedLinearSolver>();
    f.add::<precomputed::PrecomputedWarpPreconditioner>();
    f.add::<precomputed::PrecomputedMatrixSystem>();
}
