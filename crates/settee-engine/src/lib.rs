//! Data engines: components that compute Data from other Data at init (SOFA's `DataEngine`s).

pub mod average_coord;
pub mod box_roi;
pub mod difference_norm;
pub mod displacement;
pub mod generate_cylinder;
pub mod generate_grid;
pub mod generate_rigid_mass;
pub mod hausdorff;
pub mod index_value_mapper;
pub mod mesh_boundary_roi;
pub mod mesh_closing;
pub mod mesh_roi;
pub mod mesh_sampler;
pub mod mesh_subset_engine;
pub mod nearest_point_roi;
pub mod pair_box_roi;
pub mod plane_roi;
pub mod points_from_indices;
pub mod proximity_roi;
pub mod smooth_mesh;
pub mod sphere_roi;
pub mod spiral;
pub mod subset_topology;
#[cfg(test)]
mod test_support;
pub mod transform_matrix;
pub mod transform_position;
pub mod values_from_indices;
pub mod values_from_positions;
pub mod vertex2frame;
pub mod volume;

pub use box_roi::BoxROI;
pub use generate_grid::GenerateGrid;
pub use index_value_mapper::IndexValueMapper;
pub use mesh_boundary_roi::MeshBoundaryROI;
pub use mesh_roi::MeshROI;
pub use mesh_subset_engine::MeshSubsetEngine;
pub use nearest_point_roi::NearestPointROI;
pub use pair_box_roi::PairBoxROI;
pub use plane_roi::PlaneROI;
pub use points_from_indices::PointsFromIndices;
pub use proximity_roi::ProximityROI;
pub use sphere_roi::SphereROI;
pub use spiral::Spiral;
pub use subset_topology::SubsetTopology;
pub use transform_matrix::{InvertTransformMatrixEngine, RotateTransformMatrixEngine, ScaleTransformMatrixEngine, TranslateTransformMatrixEngine};
pub use volume::{VolumeFromTriangles, VolumeFromVolumetricElements};

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<average_coord::AverageCoord>();
    f.add::<BoxROI>();
    f.add::<generate_cylinder::GenerateCylinder>();
    f.add::<GenerateGrid>();
    f.add::<generate_rigid_mass::GenerateRigidMass>();
    f.add::<IndexValueMapper>();
    f.add::<MeshBoundaryROI>();
    f.add::<MeshROI>();
    f.add::<MeshSubsetEngine>();
    f.add::<NearestPointROI>();
    f.add::<PairBoxROI>();
    f.add::<PlaneROI>();
    f.add::<PointsFromIndices>();
    f.add::<ProximityROI>();
    f.add::<SphereROI>();
    f.add::<Spiral>();
    f.add::<SubsetTopology>();
    f.add::<TranslateTransformMatrixEngine>();
    f.add::<ScaleTransformMatrixEngine>();
    f.add::<RotateTransformMatrixEngine>();
    f.add::<InvertTransformMatrixEngine>();
    f.add::<transform_position::TransformPosition>();
    f.add::<values_from_indices::ValuesFromIndices>();
    f.add::<vertex2frame::Vertex2Frame>();
    f.add::<displacement::DisplacementTransformEngine>();
    f.add::<difference_norm::DifferenceEngine>();
    f.add::<difference_norm::NormEngine>();
    f.add::<smooth_mesh::SmoothMeshEngine>();
    f.add::<hausdorff::HausdorffDistance>();
    f.add::<values_from_positions::ValuesFromPositions>();
    f.add::<mesh_closing::MeshClosingEngine>();
    f.add::<mesh_sampler::MeshSampler>();
    f.add::<displacement::DisplacementMatrixEngine>();
    f.add::<VolumeFromTriangles>();
    f.add::<VolumeFromVolumetricElements>();
}
