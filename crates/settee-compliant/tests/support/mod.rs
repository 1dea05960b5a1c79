//! What the tests of this crate share: a factory with the component crates their scenes use.

use settee_core::Factory;

/// The component crates the tests' scenes use, and this crate.
pub fn factory() -> Factory {
    settee_statecontainer::factory_with(&[
        settee_mass::register,
        settee_projective::register,
        settee_mapping::register,
        settee_topology::register,
        settee_mechanicalload::register,
        settee_animationloop::register,
        settee_compliant::register,
    ])
}
