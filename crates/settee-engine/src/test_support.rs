//! Helpers for the tests of this crate: a factory with the classes the tests use, and those of
//! [`settee_topology::testing`].

use settee_core::Factory;

pub use settee_topology::testing::{attrs, init_scene};

/// This crate's classes, the topologies and the mechanical state.
pub fn factory() -> Factory {
    settee_statecontainer::factory_with(&[crate::register, settee_topology::register])
}
