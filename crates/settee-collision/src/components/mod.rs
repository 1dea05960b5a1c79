//! The collision family's scene components: collision models, intersection methods, pipelines
//! and their phases, contact managers and the penalty contact force field.

pub mod intersections;
pub mod models;
pub mod penalty;
pub mod pipeline;
pub mod response;

/// Registers every class of the collision family.
pub fn register(f: &mut settee_core::Factory) {
    models::register(f);
    intersections::register(f);
    pipeline::register(f);
    response::register(f);
    f.add::<penalty::PenalityContactForceField>();
}
