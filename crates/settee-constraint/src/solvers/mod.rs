//! Constraint solvers (Sofa.Component.Constraint.Lagrangian.Solver).
//!
//! The algorithms are plain functions over a [`ConstraintProblem`](settee_core::constraint::ConstraintProblem)
//! (`block_gauss_seidel`, `nncg`, `preconditioned_conjugate_residual`, `unbuilt_gauss_seidel`,
//! `improved_jacobi`, the LCP kernels), so they can be tested and benchmarked without a scene;
//! the components wrap them in the shared machinery of [`generic`].
#![allow(clippy::needless_range_loop)]

pub mod block_gauss_seidel;
pub mod generic;

use settee_core::{Component, ComponentClass, CreateArgs, Roles, TemplateRule};

pub use block_gauss_seidel::{block_gauss_seidel, gauss_seidel_sweep, BlockGaussSeidel};
pub use generic::{GenericConstraintSolver, SolveOutcome, SolverMethod, UnbuiltOps, UnbuiltProblem};

use generic::{built_reads::BUILT_READS, BUILT_DATA, GENERIC_DATA};

pub type BlockGaussSeidelConstraintSolver = GenericConstraintSolver<BlockGaussSeidel>;

fn create_bgs(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(BlockGaussSeidelConstraintSolver::default())
}

pub static BLOCK_GAUSS_SEIDEL_CLASS: ComponentClass = ComponentClass {
    name: "BlockGaussSeidelConstraintSolver",
    description: "A Constraint Solver using the Linear Complementarity Problem formulation to solve Constraint based components using a Block Gauss-Seidel iterative method",
    roles: Roles::CONSTRAINT_SOLVER,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[GENERIC_DATA, BUILT_DATA],
    links: &[],
    create: create_bgs,
    preparse: None,
    no_src_link: &[],
    reads: BUILT_READS,
};

/// Registers the classes of this module. (`GenericConstraintSolver` is refused by the factory
/// with SOFA's migration message, `settee_core::names`.)
pub fn register(f: &mut settee_core::Factory) {
    f.register(&BLOCK_GAUSS_SEIDEL_CLASS);
}
