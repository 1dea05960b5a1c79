//! Constraint laws (SOFA's Sofa.Component.Constraint.Lagrangian.Model).

/// Registers the classes of this module.
pub fn register(_f: &mut settee_core::Factory) {}
