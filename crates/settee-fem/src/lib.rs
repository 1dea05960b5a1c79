//! Finite-element force fields: the pure element kernels ([`hexa`], [`tetra`],
//! [`hyperelastic::material`], [`decompose`]) and the components built on them
//! ([`hexahedron_fem`], [`hexahedron_fem_and_mass`], [`tetrahedron_fem`],
//! [`tetrahedral_corotational`], [`hyperelastic`]).

pub mod decompose;
mod tetra_common;
#[cfg(test)]
mod test_support;
pub mod hexa;
pub mod hexahedron_fem;
pub mod hexahedron_fem_and_mass;
pub mod hyperelastic;
pub mod tetra;
pub mod tetrahedral_corotational;
pub mod tetrahedron_fem;

pub use hexahedron_fem::HexahedronFEMForceField;
pub use hexahedron_fem_and_mass::HexahedronFEMForceFieldAndMass;
pub use hyperelastic::TetrahedronHyperelasticityFEMForceField;
pub use tetrahedral_corotational::TetrahedralCorotationalFEMForceField;
pub use tetrahedron_fem::TetrahedronFEMForceField;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&hexahedron_fem::CLASS);
    f.register(&hexahedron_fem_and_mass::CLASS);
    f.register(&tetrahedron_fem::CLASS);
    f.register(&tetrahedral_corotational::CLASS);
    f.register(&hyperelastic::CLASS);
}
