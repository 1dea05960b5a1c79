//! The mesh-loader component shared by every file format (SOFA's `MeshLoader` life cycle).
//!
//! * At creation (`parsed`, SOFA's `parse`): the file is read into raw buffers, then processed
//!   (transform, sub-elements, isolated points, normals) and written into the Data, so that any
//!   component created later sees final values through `src=` or `@loader.data` links (SOFA
//!   processes lazily whenever the outputs are read, which amounts to the same).
//! * At `init` (SOFA's `reinit`): the processing is redone from the raw buffers (its inputs may
//!   come through links), so it never applies twice.
//! * Without `filename`, the Data given as attributes (or links) are the raw buffers.

use std::path::Path;

use settee_core::data::scan_real;
use settee_core::role::Loader;
use settee_core::{component, Component, DataSet, InitCtx, SimResult};

use crate::mesh::{process, FileData, LoadedMesh, MeshLoaderData, Processing};

/// Reads a file into raw buffers; the Data give the reader options (`flipNormals`, …).
pub type ReadFn = fn(&Path, &DataSet) -> Result<LoadedMesh, String>;
/// Generates the raw buffers from the Data (procedural creators).
pub type GenerateFn = fn(&DataSet) -> Result<LoadedMesh, String>;

/// Where a loader's raw mesh comes from.
pub enum Source {
    File(ReadFn),
    Generated(GenerateFn),
}

/// A mesh format: its source and its defaults.
pub struct Format {
    pub source: Source,
    /// `createSubelements` is true unless the scene sets it (MeshGmshLoader).
    pub subelements_by_default: bool,
}

/// The element and position Data that are the raw input when no file is read.
const MESH_INPUTS: &[&str] = &[
    "position",
    "polylines",
    "edges",
    "triangles",
    "quads",
    "polygons",
    "tetrahedra",
    "hexahedra",
    "prisms",
    "pyramids",
    "normals",
    "highOrderEdgePositions",
    "highOrderTrianglePositions",
    "highOrderQuadPositions",
    "highOrderTetrahedronPositions",
    "highOrderHexahedronPositions",
];

/// A mesh loader component: one struct for every mesh format, the class choosing the format.
/// Every class has the Data of a file loader ([`FileData`]) and of SOFA's `MeshLoader`
/// ([`MeshLoaderData`]), then its own.
#[component(
    markers = [Loader],
    inherit = [FileData, MeshLoaderData, Self],
    preparse = preparse_scale,
    no_src_link = ["flipNormals", "triangulate", "createSubelements", "onlyAttachedPoints", "translation", "rotation", "scale3d", "transformation"],
    class(
        name = "MeshGmshLoader", module = "Sofa.Component.IO.Mesh",
        description = "Loader of Gmsh mesh files (.msh formats 1, 2 and 4.1, ASCII).",
        create = |_| MeshLoader::new(&crate::gmsh::FORMAT),
    ),
    class(
        name = "MeshOBJLoader", module = "Sofa.Component.IO.Mesh",
        description = "Loader of Wavefront OBJ mesh files.",
        create = |_| MeshLoader::new(&crate::obj::FORMAT),
        data = {
            /// duplicate the vertices having several texture coordinates or normals
            handleSeams: Bool = "false",
            /// read the material library (only the material names are used)
            loadMaterial: Bool = "true",
            /// default material (rendering only)
            #[alias("material")]
            defaultMaterial: Str,
            /// output: names of the materials of the library
            materials: Strings,
            /// output: vertex references of each face
            faceList: Str,
            /// output: texture coordinate references of each face
            texcoordsIndex: Str,
            /// vertex positions definition (not filled, as in SOFA)
            positionsDefinition: RealTuples(3),
            /// output: texture coordinates of the file
            texcoordsDefinition: RealTuples(2),
            /// output: normal references of each face
            normalsIndex: Str,
            /// output: normals of the file
            normalsDefinition: RealTuples(3),
            /// output: texture coordinates of the vertices
            texcoords: RealTuples(2),
            /// export the face indices of each material (not supported)
            computeMaterialFaces: Bool = "false",
            /// output (handleSeams): position of the file each vertex comes from
            vertPosIdx: Indices,
            /// output (handleSeams): normal index of each vertex
            vertNormIdx: Indices,
        },
    ),
    class(
        name = "MeshVTKLoader", module = "Sofa.Component.IO.Mesh",
        description = "Loader of VTK mesh files (legacy ASCII and XML ASCII unstructured grids / poly data).",
        create = |_| MeshLoader::new(&crate::vtk::FORMAT),
    ),
    class(
        name = "MeshSTLLoader", module = "Sofa.Component.IO.Mesh",
        description = "Loader of STL surface meshes (ASCII or binary).",
        create = |_| MeshLoader::new(&crate::stl::FORMAT),
        data = {
            /// size of the header of a binary file (before the facet count)
            headerSize: Int = "80",
            /// read the file as binary even if it starts with `solid`
            forceBinary: Bool = "false",
            /// merge duplicated positions with a map (same result either way)
            mergePositionUsingMap: Bool = "true",
        },
    ),
    class(
        name = "GIDMeshLoader", module = "Sofa.Component.IO.Mesh",
        description = "Loader of GiD mesh files (.gidmsh).",
        create = |_| MeshLoader::new(&crate::gid::FORMAT),
    ),
    class(
        name = "MeshTrianLoader", module = "Sofa.Component.IO.Mesh",
        description = "Loader of .trian surface meshes (triangles with their neighbours).",
        create = |_| MeshLoader::new(&crate::trian::FORMAT),
        data = {
            /// if true, the file is in the trian2 format (not supported)
            trian2: Bool = "false",
            /// output: the 3 neighbours of each triangle (-1 on a border)
            neighborTable: RealTuples(3),
            /// output: the border edges
            edgesOnBorder: IndexTuples(2),
            /// output: the triangles with a border edge
            trianglesOnBorderList: Indices,
        },
    ),
    class(
        name = "MeshOffLoader", module = "Sofa.Component.IO.Mesh",
        description = "Loader of OFF mesh files.",
        create = |_| MeshLoader::new(&crate::off::FORMAT),
    ),
    class(
        name = "StringMeshCreator", module = "Sofa.Component.IO.Mesh",
        description = "Procedural creation of a one-dimensional mesh (a string of points and edges along x).",
        create = |_| MeshLoader::new(&crate::string_mesh::FORMAT),
        data = {
            /// number of vertices
            "resolution" as STRING_RESOLUTION: Int = "2",
        },
    ),
    class(
        name = "GridMeshCreator", module = "Sofa.Component.IO.Mesh",
        description = "Procedural creation of a two-dimensional mesh (a grid of quads or triangles in the unit square).",
        create = |_| MeshLoader::new(&crate::grid_mesh::FORMAT),
        data = {
            /// Number of vertices in each direction
            "resolution" as GRID_RESOLUTION: Fixed(2) = "2 2",
            /// 0: no triangles, 1: alternate triangles, 2: upward triangles, 3: downward triangles
            trianglePattern: Int = "2",
        },
    ),
)]
#[derive(Clone)]
pub struct MeshLoader {
    format: &'static Format,
    /// The buffers as read (before processing); `None` when the file could not be read.
    raw: Option<LoadedMesh>,
    /// True when the raw buffers are the component's own Data (no file).
    raw_from_data: bool,
}

impl MeshLoader {
    pub fn new(format: &'static Format) -> MeshLoader {
        MeshLoader { format, raw: None, raw_from_data: false }
    }

    /// The raw buffers (after `parsed`), for tests and tools.
    pub fn raw(&self) -> Option<&LoadedMesh> {
        self.raw.as_ref()
    }

    fn load(&mut self, cx: &mut InitCtx) -> SimResult {
        if self.format.subelements_by_default && !cx.data().is_given(MeshLoaderData::CREATE_SUBELEMENTS) {
            cx.data_mut().put(MeshLoaderData::CREATE_SUBELEMENTS, true);
        }
        let mesh = match &self.format.source {
            Source::Generated(generate) => generate(cx.data()).map_err(|e| cx.error(e))?,
            Source::File(read) => {
                let name = cx.data().get(FileData::FILENAME).trim().to_string();
                if name.is_empty() {
                    self.raw_from_data = true;
                    let m = LoadedMesh::from_data(cx.data());
                    if m.positions.is_empty() {
                        cx.warn("no file to load (Data 'filename' is not set) and no 'position' given: the mesh is empty");
                    }
                    m
                } else {
                    let path = cx.resolve_file(&name)?;
                    match read(&path, cx.data()) {
                        Ok(m) => m,
                        Err(e) => {
                            // SOFA clears the buffers of a load that failed.
                            LoadedMesh::default().write(cx.data_mut());
                            return Err(cx.error(e).hint("the file is malformed or truncated; fix it or load another file"));
                        }
                    }
                }
            }
        };
        for w in &mesh.warnings {
            cx.warn(w.clone());
        }
        self.raw = Some(mesh);
        Ok(())
    }

    /// Processes the raw buffers with the current Data and writes the outputs.
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let Some(raw) = &self.raw else { return Ok(()) };
        let mut m = raw.clone();
        m.warnings.clear();
        let p = Processing::from_data(cx.data());
        match process(&mut m, &p) {
            Ok(Some(w)) => cx.warn(w),
            Ok(None) => {}
            Err(e) => return Err(cx.error(e).hint("check that the element lists and `position` describe the same mesh")),
        }
        m.write(cx.data_mut());
        Ok(())
    }
}

impl Component for MeshLoader {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.load(cx)?;
        self.update(cx)
    }

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let relink = self.raw_from_data && MESH_INPUTS.iter().any(|n| cx.data().field(n).is_some_and(|f| f.link.is_some()));
        if relink {
            self.raw = Some(LoadedMesh::from_data(cx.data()));
        }
        if let Source::Generated(generate) = &self.format.source {
            if self.raw.is_some() {
                self.raw = Some(generate(cx.data()).map_err(|e| cx.error(e))?);
            }
        }
        self.update(cx)
    }
}

/// SOFA's `MeshLoader::parse`: an attribute `scale="s"` multiplies `scale3d` by `s`, read as a
/// single-precision float (`strtof`; the whole text must be a number, else 1). The matrix syntax
/// of `transformation` (`[a b c d, e f g h, …]`) is reduced to its 16 numbers.
pub fn preparse_scale(attrs: &mut Vec<(String, String)>) {
    for (n, v) in attrs.iter_mut() {
        if n == "transformation" && !v.trim_start().starts_with('@') {
            *v = v.replace(['[', ']', ','], " ");
        }
    }
    let Some(i) = attrs.iter().position(|(n, _)| n == "scale") else { return };
    let (_, text) = attrs.remove(i);
    let s = text.trim_start().parse::<f32>().map(f64::from).unwrap_or(1.0);
    let current = attrs.iter().position(|(n, _)| n == "scale3d");
    let base: Vec<f64> = match current {
        Some(j) if !attrs[j].1.trim_start().starts_with('@') => {
            let mut v: Vec<f64> = attrs[j].1.split_whitespace().take(3).map(|t| scan_real(t).map(|(x, _)| x).unwrap_or(0.0)).collect();
            v.resize(3, 1.0);
            v
        }
        Some(_) => return, // a link: the factor cannot be folded in
        None => vec![1.0; 3],
    };
    let text = base.iter().map(|x| format!("{:?}", x * s)).collect::<Vec<_>>().join(" ");
    attrs.retain(|(n, _)| n != "scale3d");
    attrs.push(("scale3d".into(), text));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_attribute_multiplies_scale3d_in_single_precision() {
        let mut a = vec![("scale".to_string(), "0.3".to_string())];
        preparse_scale(&mut a);
        let s = 0.3f32 as f64;
        assert_eq!(a, vec![("scale3d".to_string(), format!("{s:?} {s:?} {s:?}"))]);
        let mut a = vec![("scale3d".to_string(), "1 2 4".to_string()), ("scale".to_string(), "10".to_string())];
        preparse_scale(&mut a);
        assert_eq!(a, vec![("scale3d".to_string(), "10.0 20.0 40.0".to_string())]);
        let mut a = vec![("scale".to_string(), "2x".to_string())];
        preparse_scale(&mut a);
        assert_eq!(a, vec![("scale3d".to_string(), "1.0 1.0 1.0".to_string())]);
        let mut a = vec![("transformation".to_string(), "[1 0 0 1,0 1 0 2,0 0 1 3,0 0 0 1]".to_string())];
        preparse_scale(&mut a);
        let v: Vec<&str> = a[0].1.split_whitespace().collect();
        assert_eq!(v, ["1", "0", "0", "1", "0", "1", "0", "2", "0", "0", "1", "3", "0", "0", "0", "1"]);
    }
}
