//! Constraint corrections (Sofa.Component.Constraint.Lagrangian.Correction).

mod common;
pub mod generic;
pub mod linear_solver;
pub mod precomputed;
pub mod uncoupled;

pub use generic::GenericConstraintCorrection;
pub use linear_solver::LinearSolverConstraintCorrection;
pub use precomputed::PrecomputedConstraintCorrection;
pub use uncoupled::UncoupledConstraintCorrection;

/// Registers the classes of this module.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&generic::CLASS);
    f.register(&linear_solver::CLASS);
    f.register(&precomputed::CLASS);
    f.register(&uncoupled::CLASS);
}
