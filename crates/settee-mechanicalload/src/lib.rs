//! Mechanical loads: external forces applied to DOFs.

mod constant_force_field;

pub use constant_force_field::ConstantForceField;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&constant_force_field::CLASS);
}
