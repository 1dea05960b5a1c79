//! The factory with every component Settee supports.

use settee_core::Factory;

/// A factory with all of Settee's component classes registered.
pub fn factory() -> Factory {
    let mut f = Factory::new();
    settee_statecontainer::register(&mut f);
    settee_mass::register(&mut f);
    settee_projective::register(&mut f);
    settee_animationloop::register(&mut f);
    settee_visual::register(&mut f);
    settee_linearsolver::register(&mut f);
    settee_odesolver::register(&mut f);
    settee_spring::register(&mut f);
    settee_mechanicalload::register(&mut f);
    settee_fem::register(&mut f);
    settee_topology::register(&mut f);
    settee_engine::register(&mut f);
    settee_loader::register(&mut f);
    settee_mapping::register(&mut f);
    settee_collision::register(&mut f);
    settee_constraint::register(&mut f);
    settee_exporter::register(&mut f);
    settee_compliant::register(&mut f);
    f
}
