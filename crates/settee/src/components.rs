//! The factory with every component Settee supports.

use settee_core::Factory;

/// A factory with all of Settee's component classes registered.
pub fn factory() -> Factory {
    settee_statecontainer::factory_with(&[
        settee_mass::register,
        settee_projective::register,
        settee_animationloop::register,
        settee_visual::register,
        settee_linearsolver::register,
        settee_odesolver::register,
        settee_spring::register,
        settee_mechanicalload::register,
        settee_fem::register,
        settee_topology::register,
        settee_engine::register,
        settee_loader::register,
        settee_mapping::register,
        settee_collision::register,
        settee_constraint::register,
        settee_exporter::register,
        settee_compliant::register,
    ])
}
