//! Helpers shared by the tests of this crate: the shared ones of `settee_core::testing`, and a
//! factory with the classes these tests use.

pub use settee_core::testing::*;
use settee_core::Factory;

pub fn factory() -> Factory {
    settee_statecontainer::factory_with(&[settee_topology::register, settee_engine::register, settee_animationloop::register, crate::register])
}
