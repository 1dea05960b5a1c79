//! Finite-element force fields: the pure element kernels ([`hexa`]) and the components built on
//! them ([`hexahedron_fem`]).

pub mod hexa;
pub mod hexahedron_fem;

pub use hexahedron_fem::HexahedronFEMForceField;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&hexahedron_fem::CLASS);
}
