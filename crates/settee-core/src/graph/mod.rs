//! The graph: nodes, components, Data and links, the factory, the arenas, the state store and
//! the step plan. Everything else in the core builds on it; it imports nothing above it (the
//! layering is checked by `tests/layers.rs`).

pub mod arena;
pub mod component;
pub mod constraint_rows;
pub mod data;
pub mod data_ref;
pub mod factory;
pub mod names;
pub mod plan;
pub mod role;
pub mod scene;
pub mod snapshot;
pub mod state;
pub mod topology;
pub mod types;
