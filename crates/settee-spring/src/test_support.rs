//! Helpers shared by the tests of this crate: the shared ones of `settee_core::testing`, and a
//! factory with the classes these tests use.

pub use settee_core::testing::*;
use settee_core::Factory;

pub fn factory() -> Factory {
    let mut f = Factory::new();
    settee_statecontainer::register(&mut f);
    settee_topology::register(&mut f);
    settee_animationloop::register(&mut f);
    crate::register(&mut f);
    f
}
