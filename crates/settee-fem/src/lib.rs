//! Finite-element force fields: the pure element kernels ([`hexa`], [`tetra`],
//! [`hyperelastic::material`], [`decompose`]) and the components built on them
//! ([`hexahedron_fem`], [`hexahedron_fem_and_mass`], [`tetrahedron_fem`],
//! [`tetrahedral_corotational`], [`hyperelastic`]).

pub mod beam_fem;
mod common;
pub mod decompose;
pub mod element_fem;
pub mod fast_tetrahedral_corotational;
mod follow;
pub mod hexa;
pub mod hexahedral_fem;
pub mod hexahedral_fem_and_mass;
pub mod hexahedron_fem;
pub mod hexahedron_fem_and_mass;
pub mod hyperelastic;
pub mod quad_bending_fem;
#[cfg(test)]
mod test_support;
pub mod tetra;
mod tetra_common;
pub mod tetrahedral_corotational;
pub mod tetrahedron_fem;
pub mod triangle_fem;
pub mod triangular_fem;
pub mod triangular_fem_optim;

pub use element_fem::ElementFEMForceField;
pub use fast_tetrahedral_corotational::FastTetrahedralCorotationalForceField;
pub use hexahedral_fem::HexahedralFEMForceField;
pub use hexahedral_fem_and_mass::HexahedralFEMForceFieldAndMass;
pub use hexahedron_fem::HexahedronFEMForceField;
pub use hexahedron_fem_and_mass::HexahedronFEMForceFieldAndMass;
pub use hyperelastic::standard::StandardTetrahedralFEMForceField;
pub use hyperelastic::TetrahedronHyperelasticityFEMForceField;
#[doc(hidden)]
pub use tetra_common::element_loop_counts;
pub use tetrahedral_corotational::TetrahedralCorotationalFEMForceField;
pub use tetrahedron_fem::TetrahedronFEMForceField;
pub use triangle_fem::TriangleFEMForceField;
pub use triangular_fem_optim::TriangularFEMForceFieldOptim;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<beam_fem::BeamFEMForceField>();
    f.add::<HexahedronFEMForceField>();
    f.add::<HexahedralFEMForceField>();
    f.add::<HexahedralFEMForceFieldAndMass>();
    f.add::<HexahedronFEMForceFieldAndMass>();
    f.add::<TetrahedronFEMForceField>();
    f.add::<TetrahedralCorotationalFEMForceField>();
    f.add::<FastTetrahedralCorotationalForceField>();
    f.add::<TetrahedronHyperelasticityFEMForceField>();
    f.add::<StandardTetrahedralFEMForceField>();
    f.add::<TriangularFEMForceFieldOptim>();
    f.add::<triangular_fem::TriangularFEMForceField>();
    f.add::<triangle_fem::TriangleFEMForceField>();
    f.add::<quad_bending_fem::QuadBendingFEMForceField>();
    f.add::<ElementFEMForceField>();
}
