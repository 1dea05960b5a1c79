//! Mechanical mappings (spec forcefields-mappings §5): `IdentityMapping`, `SubsetMapping`,
//! `BarycentricMapping`, `RigidMapping`, `DistanceMapping`, `DistanceMultiMapping` and
//! `SquareDistanceMapping`, and those the Compliant formulation uses (compliant spec §9):
//! `DistanceFromTargetMapping`, `SubsetMultiMapping`, `DifferenceMapping`, `DifferenceMultiMapping`,
//! `DifferenceFromTargetMapping`, `MaskMapping`, `ProjectionMapping`, `RigidJointMapping`,
//! `AssembledRigidRigidMapping`, `DotProductMapping`, `DotProductMultiMapping`,
//! `DotProductFromTargetMapping`, `NormalizationMapping`, `SafeDistanceMapping`,
//! `SafeDistanceFromTargetMapping` and `WinchMultiMapping`; and `TubularMapping`, `SkinningMapping`,
//! `CenterOfMassMapping`, `DeformableOnRigidFrameMapping`,
//! `SimpleTesselatedTetraMechanicalMapping`, `IdentityMultiMapping`, `DistanceToPlaneMapping`, `AreaMapping`,
//! `VolumeMapping` and `SquareMapping`.
//!
//! A mapping resolves its `input` (default `@../`) and `output` (default `@./`) at init, flags a
//! mechanical output state as *mapped* (the solvers then integrate only the main states) and
//! applies itself to positions and velocities. The mechanical stages of `settee_core::mechanics`
//! call `apply`/`apply_j` top-down and `apply_jt`/`apply_djt` bottom-up; assembled solvers project
//! the matrices of mapped components with the Jacobians (`jacobians`) and add the geometric
//! stiffness (`add_geometric_stiffness`). A mapping whose output is a visual model (`OglModel`)
//! is accepted and does nothing: Settee does not render.

pub mod assembled;
pub mod barycentric;
pub mod beam_linear;
pub mod center_of_mass;
pub mod common;
pub mod deformable_on_rigid;
pub mod difference;
pub mod distance;
pub mod distance_from_target;
pub mod distance_to_plane;
pub mod dot_product;
pub mod element_measure;
pub mod identity;
pub mod identity_multi;
pub mod mask;
pub mod normalization;
pub mod rigid;
pub mod rigid_joint;
pub mod safe_distance;
pub mod se3;
pub mod simple_tesselated_tetra;
pub mod skinning;
pub mod square;
pub mod subset;
pub mod subset_multi;
pub mod tubular;
pub mod winch;

pub use barycentric::BarycentricMapping;
pub use difference::DifferenceMapping;
pub use distance::DistanceMapping;
pub use distance_from_target::DistanceFromTargetMapping;
pub use identity::IdentityMapping;
pub use rigid::RigidMapping;
pub use subset::SubsetMapping;
pub use subset_multi::SubsetMultiMapping;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<identity::IdentityMapping>();
    f.add::<subset::SubsetMapping>();
    f.add::<barycentric::BarycentricMapping>();
    f.add::<rigid::RigidMapping>();
    f.add::<beam_linear::BeamLinearMapping>();
    // DistanceMapping, DistanceMultiMapping, SquareDistanceMapping.
    f.add::<distance::DistanceMapping>();
    f.add::<distance_from_target::DistanceFromTargetMapping>();
    f.add::<subset_multi::SubsetMultiMapping>();
    // DifferenceMapping, DifferenceMultiMapping, DifferenceFromTargetMapping.
    f.add::<difference::DifferenceMapping>();
    // MaskMapping, ProjectionMapping.
    f.add::<mask::ScalarMapping>();
    f.add::<rigid_joint::RigidJointMapping>();
    f.add::<rigid_joint::AssembledRigidRigidMapping>();
    // DotProductMapping, DotProductMultiMapping, DotProductFromTargetMapping.
    f.add::<dot_product::DotProductMapping>();
    f.add::<normalization::NormalizationMapping>();
    f.add::<winch::WinchMultiMapping>();
    // SafeDistanceMapping, SafeDistanceFromTargetMapping.
    f.add::<safe_distance::SafeDistanceMapping>();
    f.add::<tubular::TubularMapping>();
    f.add::<skinning::SkinningMapping>();
    f.add::<center_of_mass::CenterOfMassMapping>();
    f.add::<deformable_on_rigid::DeformableOnRigidFrameMapping>();
    f.add::<simple_tesselated_tetra::SimpleTesselatedTetraMechanicalMapping>();
    f.add::<identity_multi::IdentityMultiMapping>();
    f.add::<distance_to_plane::DistanceToPlaneMapping>();
    // AreaMapping, VolumeMapping.
    f.add::<element_measure::ElementMeasureMapping>();
    f.add::<square::SquareMapping>();
}
