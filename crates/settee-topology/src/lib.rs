//! Topology containers: SOFA's `MeshTopology`, `GridTopology` and `RegularGridTopology`, with
//! the element orderings SOFA produces (grid math in [`grid`], derived lists in [`mesh`]); the
//! dynamic `*SetTopologyContainer`s ([`set_container`]) with their modifiers and geometry
//! algorithms ([`set_algorithms`], accepted without behaviour: no topological changes yet);
//! the topological mappings ([`topological_mapping`], [`mesh2point`], orders in [`elements`]);
//! and `SparseGridTopology` ([`sparse_grid`], voxelisation test in [`polygon_cube`]).

/// `Topology` for a static container whose lists are its `mesh` field.
macro_rules! mesh_field_topology {
    ($container:ty) => {
        impl settee_core::role::Topology for $container {
            fn mesh(&self) -> &settee_core::MeshData {
                &self.mesh
            }
        }
    };
}

pub mod change_processor;
pub mod cube_topology;
pub mod edge2quad;
pub mod elements;
pub mod grid;
pub mod grid_topology;
pub mod mapping_changes;
pub mod mesh;
pub mod mesh2point;
pub mod mesh_topology;
pub mod modifier;
pub mod polygon_cube;
pub mod set_algorithms;
pub mod set_container;
pub mod simple_tesselated_tetra;
pub mod sparse_grid;
pub mod sparse_grid_ramification;
pub mod subset_topological;
pub mod testing;
pub mod topological_mapping;

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod test_util;

pub use grid_topology::GridTopology;
pub use mesh_topology::MeshTopology;
pub use set_container::{SetKind, SetTopologyContainer};
pub use sparse_grid::SparseGridTopology;
pub use sparse_grid_ramification::SparseGridRamificationTopology;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<MeshTopology>();
    f.add::<GridTopology>();
    f.add::<SetTopologyContainer>();
    f.add::<set_algorithms::SetModifier>();
    f.add::<set_algorithms::SetAlgorithms>();
    f.add::<topological_mapping::TopologicalMapping>();
    f.add::<mesh2point::Mesh2PointTopologicalMapping>();
    f.add::<edge2quad::Edge2QuadTopologicalMapping>();
    f.add::<subset_topological::SubsetTopologicalMapping>();
    f.add::<simple_tesselated_tetra::SimpleTesselatedTetraTopologicalMapping>();
    f.add::<SparseGridTopology>();
    f.add::<SparseGridRamificationTopology>();
    f.add::<cube_topology::CubeTopology>();
    f.add::<change_processor::TopologicalChangeProcessor>();
}
