//! Helpers shared by the tests of this crate: the shared ones of `settee_core::testing`, and a
//! factory with the classes these tests use.

pub use settee_core::testing::*;
use settee_core::Factory;

pub fn factory() -> Factory {
    settee_statecontainer::factory_with(&[settee_topology::register, settee_animationloop::register, crate::register])
}

/// The factory of these tests and a root scene holding a `MechanicalObject` of `attrs` (the
/// setup most tests start from).
pub fn state_scene(attrs: &[(&str, &str)]) -> (Factory, settee_core::Scene) {
    let f = factory();
    let mut s = settee_core::Scene::new("root");
    add(&mut s, &f, settee_core::Scene::ROOT, "MechanicalObject", attrs);
    (f, s)
}
