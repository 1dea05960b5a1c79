//! `MeshTopology`: a constant topology given by explicit lists (usually linked from a loader with
//! `src="@loader"`); missing edges, triangles and quads are derived as SOFA does (see
//! [`crate::mesh`]).
//!
//! With `filename` the component reads the file itself, as SOFA's `BaseMeshTopology::load`
//! does through `helper::io::MeshTopologyLoader` (only `.obj`/`.trian` are read here): the file
//! replaces every list; the positions are the file's `v` lines in order (all of them, referenced
//! or not); each `f`/`l` record of 2 references is an edge stored sorted, of 4 a quad (kept, not
//! triangulated), otherwise a triangle fan `(v0, v[j-1], v[j])`; normals and texture coordinates
//! are ignored. Missing edges (and triangles/quads) are then derived as for any MeshTopology.

use settee_core::role::Topology;
use settee_core::topology::{group, points_from_flat};
use settee_core::{component, Component, DataSet, InitCtx, MeshData, SimError, SimResult};

use crate::mesh::{complete_lists, DerivedLists};

/// The Data every mesh topology container has (SOFA's `MeshTopology`, base of the grids).
#[settee_core::data_group(data = {
    /// list of point positions
    #[alias("points")]
    position: RealTuples(3),
    /// list of edge indices
    #[alias("lines")]
    edges: IndexTuples(2),
    /// list of triangle indices
    triangles: IndexTuples(3),
    /// list of quad indices
    quads: IndexTuples(4),
    /// list of tetrahedron indices
    #[alias("tetras")]
    tetrahedra: IndexTuples(4),
    /// list of hexahedron indices
    #[alias("hexas")]
    hexahedra: IndexTuples(8),
    /// list of prism indices (stored, unused)
    prisms: IndexTuples(6),
    /// list of pyramid indices (stored, unused)
    pyramids: IndexTuples(5),
    /// list of uv coordinates (rendering only)
    #[alias("texcoords")]
    uv: RealTuples(2),
    /// compute all cross-element buffers at init (no effect here)
    computeAllBuffers: Bool = "false",
    /// draw the edges (rendering only)
    drawEdges: Bool = "false",
    /// draw the triangles (rendering only)
    drawTriangles: Bool = "false",
    /// draw the quads (rendering only)
    drawQuads: Bool = "false",
    /// draw the tetrahedra (rendering only)
    drawTetrahedra: Bool = "false",
    /// draw the hexahedra (rendering only)
    drawHexahedra: Bool = "false",
})]
pub struct MeshTopologyData;

/// Generic constant topology given by explicit element lists (typically linked from a mesh loader).
///
/// The MeshTopology component.
#[component(
    module = "Sofa.Component.Topology.Container.Constant",
    roles = [Topology],
    inherit = [MeshTopologyData, Self],
    data = {
        /// mesh file to read (.obj/.trian), replacing the element lists
        #[alias("fileTopology")]
        filename: FileName,
    },
)]
#[derive(Clone, Default)]
pub struct MeshTopology {
    mesh: MeshData,
    /// Lists this component derived itself (and wrote into its Data) at the last computation.
    derived: DerivedLists,
    /// The `filename` whose content was last written into the Data.
    loaded: Option<String>,
}

/// Reads the element lists of a mesh-topology DataSet.
pub fn mesh_from_data(d: &DataSet) -> MeshData {
    MeshData {
        points: points_from_flat(d.get(MeshTopologyData::POSITION), 3),
        edges: group::<2>(d.get(MeshTopologyData::EDGES)),
        triangles: group::<3>(d.get(MeshTopologyData::TRIANGLES)),
        quads: group::<4>(d.get(MeshTopologyData::QUADS)),
        tetrahedra: group::<4>(d.get(MeshTopologyData::TETRAHEDRA)),
        hexahedra: group::<8>(d.get(MeshTopologyData::HEXAHEDRA)),
    }
}

fn flat<const K: usize>(v: &[[usize; K]]) -> Vec<usize> {
    v.iter().flatten().copied().collect()
}

/// Writes the lists of `mesh` selected by `which` into the Data of the component (so that Data
/// links such as `@topo.edges` see the derived lists).
pub fn write_lists(d: &mut DataSet, mesh: &MeshData, which: DerivedLists) {
    if which.edges {
        d.put(MeshTopologyData::EDGES, flat(&mesh.edges));
    }
    if which.triangles {
        d.put(MeshTopologyData::TRIANGLES, flat(&mesh.triangles));
    }
    if which.quads {
        d.put(MeshTopologyData::QUADS, flat(&mesh.quads));
    }
}

/// Reads a mesh file as SOFA's `MeshTopologyLoader` fills a `MeshTopology`.
fn read_mesh_file(path: &std::path::Path) -> Result<MeshData, String> {
    let name = path.to_string_lossy();
    if !(name.ends_with(".obj") || name.ends_with(".trian")) {
        return Err(format!("reading '{name}' directly is supported for .obj and .trian files only"));
    }
    let text = settee_loader::text::read_text(path)?;
    // helper::io::MeshOBJ keeps the file's vertices and faces as they are: no seam handling, no
    // triangulation of quads, no flipping; the materials are irrelevant to the topology.
    let m = settee_loader::obj::parse(path, &text, settee_loader::obj::ObjOptions::default())?;
    Ok(MeshData { points: m.positions, edges: m.edges, triangles: m.triangles, quads: m.quads, tetrahedra: Vec::new(), hexahedra: Vec::new() })
}

impl MeshTopology {
    /// Loads `filename` (when set and not loaded yet) into the Data, replacing every list as
    /// SOFA's `clear()` + `load()` do.
    fn load_file(&mut self, cx: &mut InitCtx) -> SimResult {
        let file = cx.data().get(Self::FILENAME).trim().to_string();
        if file.is_empty() || self.loaded.as_deref() == Some(file.as_str()) {
            return Ok(());
        }
        let path = cx.resolve_file(&file)?;
        let mesh = read_mesh_file(&path).map_err(|e| {
            if e.contains("supported for") {
                SimError::unsupported(format!("{}: {e}", cx.label()))
                    .hint("load the file with a loader (MeshGmshLoader, MeshVTKLoader, …) and write <MeshTopology src=\"@loader\"/>")
            } else {
                cx.error(e).hint("the file is malformed or truncated; fix it or load another file")
            }
        })?;
        let d = cx.data_mut();
        type M = MeshTopologyData;
        d.put(M::POSITION, mesh.points.iter().flatten().copied().collect());
        d.put(M::EDGES, flat(&mesh.edges));
        d.put(M::TRIANGLES, flat(&mesh.triangles));
        d.put(M::QUADS, flat(&mesh.quads));
        for field in [M::TETRAHEDRA, M::HEXAHEDRA, M::PRISMS, M::PYRAMIDS] {
            d.put(field, Vec::new());
        }
        d.put(M::UV, Vec::new());
        // The file's lists are inputs, not lists derived by this component.
        self.derived = DerivedLists::default();
        self.loaded = Some(file);
        Ok(())
    }

    fn compute(&mut self, cx: &mut InitCtx) {
        let d = cx.data();
        let mut mesh = mesh_from_data(d);
        // Lists derived at a previous call are outputs, not inputs, unless a link refilled them.
        let unlinked = |name: &str| d.field(name).is_some_and(|f| f.link.is_none());
        if self.derived.edges && unlinked("edges") {
            mesh.edges.clear();
        }
        if self.derived.triangles && unlinked("triangles") {
            mesh.triangles.clear();
        }
        if self.derived.quads && unlinked("quads") {
            mesh.quads.clear();
        }
        self.derived = complete_lists(&mut mesh);
        write_lists(cx.data_mut(), &mesh, self.derived);
        self.mesh = mesh;
    }

    fn check_indices(&self, cx: &InitCtx) -> SimResult {
        let n = self.mesh.points.len();
        if n == 0 {
            return Ok(());
        }
        let m = &self.mesh;
        let lists: [(&str, Option<usize>); 5] = [
            ("edges", m.edges.iter().flatten().max().copied()),
            ("triangles", m.triangles.iter().flatten().max().copied()),
            ("quads", m.quads.iter().flatten().max().copied()),
            ("tetrahedra", m.tetrahedra.iter().flatten().max().copied()),
            ("hexahedra", m.hexahedra.iter().flatten().max().copied()),
        ];
        for (name, max) in lists {
            if let Some(max) = max.filter(|&i| i >= n) {
                return Err(cx
                    .error(format!("{name} refer to point {max} but the topology has only {n} points"))
                    .hint("check that the element lists and `position` come from the same mesh"));
            }
        }
        Ok(())
    }
}

impl Component for MeshTopology {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        // SOFA reads the file at init; reading it here too lets the components created later
        // (a MechanicalObject taking the topology's positions) see it, as they see a loader's.
        self.load_file(cx)?;
        self.compute(cx);
        Ok(())
    }

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.load_file(cx)?;
        self.compute(cx);
        self.check_indices(cx)
    }
}

mesh_field_topology!(MeshTopology);

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use crate::test_util::{attrs, create, factory_and_scene, init_scene};
    use settee_core::Scene;

    #[test]
    fn derives_lists_and_feeds_src_links() {
        let (f, mut scene) = factory_and_scene();
        let a =
            create(&f, &mut scene, "MeshTopology", &[("name", "a"), ("position", "0 0 0 1 0 0 0 1 0 0 0 1 1 1 1"), ("tetras", "0 1 2 3 1 2 3 4")]);
        let b = create(&f, &mut scene, "MeshTopology", &[("name", "b"), ("src", "@a")]);
        let mo = create(&f, &mut scene, "MechanicalObject", &[("name", "dofs")]);
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        init_scene(&mut scene).unwrap();
        let ma = scene.mesh_of(a).unwrap().clone();
        assert_eq!(ma.points.len(), 5);
        assert_eq!(ma.tetrahedra.len(), 2);
        assert_eq!(ma.edges.len(), 9);
        assert_eq!(ma.triangles.len(), 7);
        assert!(ma.quads.is_empty());
        // b sees a's derived lists through the src= links
        assert_eq!(scene.mesh_of(b).unwrap(), &ma);
        assert_eq!(scene.entry(b).data.indices("edges").len(), 18);
        // the MechanicalObject takes the topology of its node (the last one added)
        let s = scene.state_of(mo).unwrap();
        assert_eq!(scene.store.get(s).size, 5);
    }

    #[test]
    fn bad_indices_and_files_are_errors() {
        let (f, mut scene) = factory_and_scene();
        create(&f, &mut scene, "MeshTopology", &[("position", "0 0 0 1 0 0"), ("edges", "0 1 1 2")]);
        let e = init_scene(&mut scene).unwrap_err();
        assert!(e.to_string().contains("point 2"), "{e}");

        // a format MeshTopology does not read itself
        let tmp = std::env::temp_dir().join(format!("settee-meshtopo-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(tmp.join("m.msh"), "$MeshFormat\n").unwrap();
        let mut scene = Scene::new("root");
        f.create(&mut scene, Scene::ROOT, "MeshTopology", None, attrs(&[("filename", "m.msh")]), None, &tmp).unwrap();
        let d = scene.messages.iter().find(|d| d.unsupported).expect("an unsupported-feature diagnostic");
        assert!(d.message.contains(".obj and .trian"), "{}", d.message);
        // a missing file
        let mut scene = Scene::new("root");
        f.create(&mut scene, Scene::ROOT, "MeshTopology", None, attrs(&[("filename", "nothere.obj")]), None, &tmp).unwrap();
        assert!(scene.has_errors());
        assert!(scene.messages.iter().any(|d| d.message.contains("nothere.obj") && d.message.contains("not found")), "{:?}", scene.messages);
    }

    /// An OBJ file read by the topology itself: all `v` lines become points (even unreferenced),
    /// a 4-reference face stays a quad, a 5-reference face is a fan of 3 triangles, a 2-reference
    /// `l` is an edge stored sorted; the missing edges are derived from the faces.
    #[test]
    fn reads_obj_files_as_sofa_meshtopologyloader() {
        let tmp = std::env::temp_dir().join(format!("settee-meshtopo-obj-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let obj = "# test\no x\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0.5 1.5 0\nv 9 9 9\nvn 0 0 1\n\
                   usemtl M\nf 1//1 2//1 3//1 4//1\nf 4 3 5 1 2\nl 3 1\n";
        std::fs::write(tmp.join("m.obj"), obj).unwrap();
        let (f, mut scene) = factory_and_scene();
        let t = f.create(&mut scene, Scene::ROOT, "MeshTopology", None, attrs(&[("filename", "m.obj")]), None, &tmp).unwrap();
        let mo = f.create(&mut scene, Scene::ROOT, "MechanicalObject", None, attrs(&[("name", "dofs")]), None, &tmp).unwrap();
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        init_scene(&mut scene).unwrap();
        let m = scene.mesh_of(t).unwrap().clone();
        assert_eq!(m.points.len(), 6);
        assert_eq!(m.points[4], [0.5, 1.5, 0.0]);
        assert_eq!(m.points[5], [9.0, 9.0, 9.0]);
        assert_eq!(m.quads, vec![[0, 1, 2, 3]]);
        assert_eq!(m.triangles, vec![[3, 2, 4], [3, 4, 0], [3, 0, 1]]);
        // the file's one edge is kept as given (sorted); no other edge is derived since the list
        // is not empty (SOFA's EdgeUpdate only runs on an empty list)
        assert_eq!(m.edges, vec![[0, 2]]);
        let s = scene.state_of(mo).unwrap();
        assert_eq!(scene.store.get(s).size, 6);
    }

    /// SOFA's cube.obj (12 triangles on 8 points): the 18 edges are derived from the triangles.
    #[test]
    fn reads_the_suite_cube() {
        let Some(suite) = settee_testkit::suite() else { return };
        let (f, mut scene) = factory_and_scene();
        let data = suite.join("data");
        let t = f.create(&mut scene, Scene::ROOT, "MeshTopology", None, attrs(&[("filename", "mesh/cube.obj")]), None, &data).unwrap();
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        init_scene(&mut scene).unwrap();
        let m = scene.mesh_of(t).unwrap();
        assert_eq!(m.points.len(), 8);
        assert_eq!(m.points[5], [0.999999, 1.0, 1.000001]);
        assert_eq!(m.triangles.len(), 12);
        assert_eq!(m.triangles[0], [4, 0, 7]);
        assert!(m.quads.is_empty());
        assert_eq!(m.edges.len(), 18);
    }
}
