//! Projective constraints: project positions, velocities and increments onto the constrained
//! subspace.

mod fixed;

pub use fixed::FixedProjectiveConstraint;

/// Data every projective constraint has.
pub static PROJECTIVE_BASE: &[settee_core::DataDecl] = &[
    settee_core::data::decl("endTime", settee_core::DataKind::Real, "-1", "the constraint stops acting after this time (-1: never)"),
    settee_core::data::decl("group", settee_core::DataKind::Int, "0", "ID of the group containing this constraint"),
];

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&fixed::CLASS);
}
