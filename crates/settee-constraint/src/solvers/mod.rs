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

use settee_core::{Component, ComponentClass, CreateArgs, Roles, TemplateRule};

pub use block_gauss_seidel::{block_gauss_seidel, gauss_seidel_sweep, BlockGaussSeidel};
pub use generic::{GenericConstraintSolver, SolveOutcome, SolverMethod, UnbuiltOps, UnbuiltProblem};
pub use improved_jacobi::{improved_jacobi, ImprovedJacobi, ImprovedJacobiOptions};
pub use lcp::{
    gauss_seidel_lcp1, lcp_gauss_seidel_unbuilt, nlcp_gauss_seidel, nlcp_gauss_seidel_unbuilt, LcpConstraintSolver, LcpOutcome, NlcpOptions,
};
pub use nncg::{nncg, Nncg};
pub use pcr::{preconditioned_conjugate_residual, PreconditionedConjugateResidual};
pub use unbuilt_gs::{unbuilt_gauss_seidel, UnbuiltGaussSeidel};

use generic::{built_reads::BUILT_READS, BUILT_DATA, GENERIC_DATA, GENERIC_READS};

pub type BlockGaussSeidelConstraintSolver = GenericConstraintSolver<BlockGaussSeidel>;
pub type NNCGConstraintSolver = GenericConstraintSolver<Nncg>;
pub type PreconditionedConjugateResidualSolver = GenericConstraintSolver<PreconditionedConjugateResidual>;
pub type UnbuiltGaussSeidelConstraintSolver = GenericConstraintSolver<UnbuiltGaussSeidel>;
pub type ImprovedJacobiConstraintSolver = GenericConstraintSolver<ImprovedJacobi>;

fn create<M: SolverMethod + Send + Sync>(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(GenericConstraintSolver::<M>::default())
}

macro_rules! solver_class {
    ($name:ident, $class:literal, $desc:literal, $m:ty, $data:expr, $reads:expr) => {
        pub static $name: ComponentClass = ComponentClass {
            name: $class,
            description: $desc,
            roles: Roles::CONSTRAINT_SOLVER,
            templates: &[],
            default_template: "",
            template_rule: TemplateRule::Default,
            data: $data,
            links: &[],
            create: create::<$m>,
            preparse: None,
            no_src_link: &[],
            reads: $reads,
        };
    };
}

solver_class!(
    BLOCK_GAUSS_SEIDEL_CLASS,
    "BlockGaussSeidelConstraintSolver",
    "A Constraint Solver using the Linear Complementarity Problem formulation to solve Constraint based components using a Block Gauss-Seidel iterative method",
    BlockGaussSeidel,
    &[GENERIC_DATA, BUILT_DATA],
    BUILT_READS
);
solver_class!(
    NNCG_CLASS,
    "NNCGConstraintSolver",
    "A Constraint Solver using the Linear Complementarity Problem formulation to solve Constraint based components using the Non-smooth Non-linear Conjugate Gradient method",
    Nncg,
    &[GENERIC_DATA, BUILT_DATA],
    BUILT_READS
);
solver_class!(
    PCR_CLASS,
    "PreconditionedConjugateResidual",
    "A Constraint Solver treating every constraint as bilateral, solved by a Jacobi-preconditioned conjugate residual method",
    PreconditionedConjugateResidual,
    &[GENERIC_DATA, BUILT_DATA],
    BUILT_READS
);
solver_class!(
    UNBUILT_GAUSS_SEIDEL_CLASS,
    "UnbuiltGaussSeidelConstraintSolver",
    "A Constraint Solver using the Linear Complementarity Problem formulation to solve Constraint based components using an Unbuilt Gauss-Seidel iterative method",
    UnbuiltGaussSeidel,
    &[GENERIC_DATA],
    GENERIC_READS
);
solver_class!(
    IMPROVED_JACOBI_CLASS,
    "ImprovedJacobiConstraintSolver",
    "A Constraint Solver using the Linear Complementarity Problem formulation to solve Constraint based components using a Projected Jacobi iterative method",
    ImprovedJacobi,
    &[GENERIC_DATA, BUILT_DATA, improved_jacobi::IJ_DATA],
    improved_jacobi::IJ_READS
);

/// Registers the classes of this module. (`GenericConstraintSolver` is refused by the factory
/// with SOFA's migration message, `settee_core::names`.)
pub fn register(f: &mut settee_core::Factory) {
    f.register(&BLOCK_GAUSS_SEIDEL_CLASS);
    f.register(&NNCG_CLASS);
    f.register(&PCR_CLASS);
    f.register(&UNBUILT_GAUSS_SEIDEL_CLASS);
    f.register(&IMPROVED_JACOBI_CLASS);
    f.register(&lcp::CLASS);
}
