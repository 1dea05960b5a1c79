//! Masses.

mod common;
mod diagonal_mass;
mod fem_mass;
#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod follow_tests;
pub mod geometry;
mod mesh_matrix_mass;
mod nodal_mass_density;
pub mod rigid_mass;
mod uniform_mass;

pub use diagonal_mass::DiagonalMass;
pub use fem_mass::FEMMass;
pub use mesh_matrix_mass::MeshMatrixMass;
pub use rigid_mass::CompliantRigidMass;
pub use uniform_mass::{RigidMass, UniformMass};

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<UniformMass>();
    f.add::<DiagonalMass>();
    f.add::<MeshMatrixMass>();
    f.add::<FEMMass>();
    f.add::<nodal_mass_density::NodalMassDensity>();
    f.add::<CompliantRigidMass>();
}
