//! Mechanical mappings (spec forcefields-mappings §5): `IdentityMapping`, `SubsetMapping`,
//! `BarycentricMapping`, `RigidMapping`, `DistanceMapping`, `DistanceMultiMapping` and
//! `SquareDistanceMapping`, and those the Compliant formulation uses (compliant spec §9):
//! `DistanceFromTargetMapping`, `SubsetMultiMapping`, `DifferenceMapping`, `DifferenceMultiMapping`,
//! `DifferenceFromTargetMapping`, `MaskMapping`, `ProjectionMapping`, `RigidJointMapping`,
//! `AssembledRigidRigidMapping`, `DotProductMapping`, `DotProductMultiMapping`,
//! `DotProductFromTargetMapping`, `NormalizationMapping`, `SafeDistanceMapping`,
//! `SafeDistanceFromTargetMapping` and `WinchMultiMapping`.
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
pub mod common;
pub mod difference;
pub mod distance;
pub mod distance_from_target;
pub mod dot_product;
pub mod identity;
pub mod mask;
pub mod normalization;
pub mod rigid;
pub mod rigid_joint;
pub mod safe_distance;
pub mod se3;
pub mod subset;
pub mod subset_multi;
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
    f.register(&identity::CLASS);
    f.register(&subset::CLASS);
    f.register(&barycentric::CLASS);
    f.register(&rigid::CLASS);
    f.register(&beam_linear::CLASS);
    f.register(&distance::DISTANCE_CLASS);
    f.register(&distance::DISTANCE_MULTI_CLASS);
    f.register(&distance::SQUARE_DISTANCE_CLASS);
    f.register(&distance_from_target::CLASS);
    f.register(&subset_multi::CLASS);
    f.register(&difference::DIFFERENCE_CLASS);
    f.register(&difference::DIFFERENCE_MULTI_CLASS);
    f.register(&difference::DIFFERENCE_FROM_TARGET_CLASS);
    f.register(&mask::MASK_CLASS);
    f.register(&mask::PROJECTION_CLASS);
    f.register(&rigid_joint::JOINT_CLASS);
    f.register(&rigid_joint::RIGID_RIGID_CLASS);
    f.register(&dot_product::DOT_CLASS);
    f.register(&dot_product::DOT_MULTI_CLASS);
    f.register(&dot_product::DOT_TARGET_CLASS);
    f.register(&normalization::CLASS);
    f.register(&winch::CLASS);
    f.register(&safe_distance::CLASS);
    f.register(&safe_distance::FROM_TARGET_CLASS);
}
