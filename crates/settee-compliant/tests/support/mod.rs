//! What the tests of this crate share: a factory with the component crates their scenes use.

use settee_core::Factory;

/// The component crates the tests' scenes use, and this crate.
pub fn factory() -> Factory {
    let mut f = Factory::new();
    settee_statecontainer::register(&mut f);
    settee_mass::register(&mut f);
    settee_projective::register(&mut f);
    settee_mapping::register(&mut f);
    settee_topology::register(&mut f);
    settee_mechanicalload::register(&mut f);
    settee_animationloop::register(&mut f);
    settee_compliant::register(&mut f);
    f
}
