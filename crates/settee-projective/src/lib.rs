//! Projective constraints: project positions, velocities and increments onto the constrained
//! subspace.

mod fixed;
pub mod point;
pub mod subspace;

pub use fixed::FixedProjectiveConstraint;
pub use point::PointProjectiveConstraint;
pub use subspace::{Subspace, SubspaceProjectiveConstraint};

/// Data every projective constraint has.
pub static PROJECTIVE_BASE: &[settee_core::DataDecl] = &[
    settee_core::data::decl("endTime", settee_core::DataKind::Real, "-1", "the constraint stops acting after this time (-1: never)"),
    settee_core::data::decl("group", settee_core::DataKind::Int, "0", "ID of the group containing this constraint"),
];

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&fixed::CLASS);
    f.register(&point::CLASS);
    f.register(&subspace::LINE_CLASS);
    f.register(&subspace::PLANE_CLASS);
}
