//! Masses.

mod uniform_mass;

pub use uniform_mass::{RigidMass, UniformMass};

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&uniform_mass::CLASS);
}
