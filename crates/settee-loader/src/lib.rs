//! Mesh loaders, procedural mesh creators and `TransformEngine`.
//!
//! Loaders read their file when they are created (SOFA reads at parse time), so any component
//! created later sees their outputs through `src="@loader"` or `@loader.position` links. A
//! malformed or truncated file is an error naming `file:line` and what was expected.
//!
//! | Class | Formats |
//! |---|---|
//! | `MeshGmshLoader` | Gmsh `.msh` 1, 2 (ASCII), 4.1 (ASCII) |
//! | `MeshOBJLoader` | Wavefront `.obj` |
//! | `MeshVTKLoader` | legacy ASCII `.vtk`, XML ASCII `.vtu`/`.vtp` |
//! | `MeshSTLLoader` | `.stl`, ASCII or binary |
//! | `MeshOffLoader` | `.off` |
//! | `SphereLoader` | `.sph` sphere lists |
//! | `StringMeshCreator` | procedural string of edges |
//! | `GridMeshCreator` | procedural grid of quads or triangles |
//! | `TransformEngine` | scale / rotate / translate coordinates |

pub mod gid;
pub mod gmsh;
pub mod grid_mesh;
pub mod loader;
pub mod mesh;
pub mod obj;
pub mod off;
pub mod sphere;
pub mod stl;
pub mod string_mesh;
pub mod text;
pub mod transform;
pub mod transform_engine;
pub mod trian;
pub mod voxel;
pub mod vtk;

pub use loader::MeshLoader;
pub use mesh::LoadedMesh;
pub use sphere::SphereLoader;
pub use transform_engine::TransformEngine;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<MeshLoader>();
    f.add::<SphereLoader>();
    f.add::<voxel::VoxelGridLoader>();
    f.add::<TransformEngine>();
}
