//! Constraint solvers (Sofa.Component.Constraint.Lagrangian.Solver).

/// Registers the classes of this module.
pub fn register(_f: &mut settee_core::Factory) {}
