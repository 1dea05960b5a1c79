//! Constraint corrections (Sofa.Component.Constraint.Lagrangian.Correction).

/// Registers the classes of this module.
pub fn register(_f: &mut settee_core::Factory) {}
