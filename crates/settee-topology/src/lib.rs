//! Topology containers: SOFA's `MeshTopology`, `GridTopology` and `RegularGridTopology`, with
//! the element orderings SOFA produces (grid math in [`grid`], derived lists in [`mesh`]).

pub mod grid;
pub mod grid_topology;
pub mod mesh;
pub mod mesh_topology;

#[cfg(test)]
mod test_util;

pub use grid_topology::GridTopology;
pub use mesh_topology::MeshTopology;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&mesh_topology::CLASS);
    f.register(&grid_topology::GRID_CLASS);
    f.register(&grid_topology::REGULAR_CLASS);
}
