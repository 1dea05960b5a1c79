//! SOFA's dynamic topology containers: `PointSetTopologyContainer`, `EdgeSet…`, `TriangleSet…`,
//! `QuadSet…`, `TetrahedronSet…` and `HexahedronSet…` (`DYN/*SetTopologyContainer.cpp`).
//!
//! Hierarchy: PointSet ⊂ EdgeSet ⊂ TriangleSet ⊂ TetrahedronSet and EdgeSet ⊂ QuadSet ⊂
//! HexahedronSet; each class has the Data of its ancestors plus its own element list.
//!
//! **Init** (SOFA's `init` of the class, which does not call the parent's `init`):
//! * number of points: `position.size()` if `position` is set (given or linked, e.g. by
//!   `src="@loader"`), otherwise `nbPoints` grown to 1 + the largest index of the class's own
//!   element list (the hexahedron container applies both). A point-set container only grows
//!   `nbPoints` to `position.size()`.
//! * when the class's own list is not empty, the missing lower lists are created in SOFA's
//!   orders and written back into the Data (so `@container.edges` links see them):
//!   * triangles → edges `(t[j+1], t[j+2])` in their orientation, first appearance;
//!   * quads → edges `(q[j+1], q[j+2])` stored sorted, first appearance;
//!   * tetrahedra → edges from the 6 local pairs, sorted; triangles from the faces, min-rotated,
//!     skipped when present with either orientation;
//!   * hexahedra → edges from the 12 local pairs, sorted; quads from the 6 faces, min-rotated,
//!     skipped when present with either orientation.
//!
//!   Lists given in the scene or by a loader are kept as they are.
//! * consistency checks SOFA makes while building its adjacency buffers: a triangle side
//!   missing from the edges, or a tetrahedron/hexahedron face not found exactly once, is an
//!   error (SOFA marks the container invalid).
//!
//! Topological changes (adding/removing elements) are not supported yet: the lists stay as
//! initialised (or as a topological mapping filled them).

use crate::modifier::DynTopo;
use settee_core::data::DataSet;
use settee_core::data_ref::{self, DataRef};
use settee_core::role::Topology;
use settee_core::topology::{group, points_from_flat};
use settee_core::topology_change::ElementKind;
use settee_core::{component, Component, InitCtx, MeshData, SimError, SimResult};

use crate::elements::{
    count_points, hexahedra_around_quads, missing_tetrahedron_edge, tetrahedra_around_triangles, triangles_around_edges,
    triangles_from_tetrahedra_unique,
};
use crate::mesh::{edges_from_surface, edges_from_volume, quads_from_hexahedra};

/// The element type of a container (SOFA's `getTopologyType()`), ordered by dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SetKind {
    Point,
    Edge,
    Triangle,
    Quad,
    Tetrahedron,
    Hexahedron,
}

impl SetKind {
    /// The element kind of the change log.
    pub fn element_kind(self) -> ElementKind {
        match self {
            SetKind::Point => ElementKind::Point,
            SetKind::Edge => ElementKind::Edge,
            SetKind::Triangle => ElementKind::Triangle,
            SetKind::Quad => ElementKind::Quad,
            SetKind::Tetrahedron => ElementKind::Tetrahedron,
            SetKind::Hexahedron => ElementKind::Hexahedron,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SetKind::Point => "point",
            SetKind::Edge => "edge",
            SetKind::Triangle => "triangle",
            SetKind::Quad => "quad",
            SetKind::Tetrahedron => "tetrahedron",
            SetKind::Hexahedron => "hexahedron",
        }
    }

    /// True when a container of this kind is (in SOFA's class hierarchy) a `base` container.
    pub fn derives_from(self, base: SetKind) -> bool {
        use SetKind::*;
        match base {
            Point => true,
            Edge => self != Point,
            Triangle => matches!(self, Triangle | Tetrahedron),
            Quad => matches!(self, Quad | Hexahedron),
            Tetrahedron => self == Tetrahedron,
            Hexahedron => self == Hexahedron,
        }
    }

    /// The element lists (Data names) a container of this kind holds.
    pub fn lists(self) -> &'static [&'static str] {
        match self {
            SetKind::Point => &[],
            SetKind::Edge => &["edges"],
            SetKind::Triangle => &["edges", "triangles"],
            SetKind::Quad => &["edges", "quads"],
            SetKind::Tetrahedron => &["edges", "triangles", "tetrahedra"],
            SetKind::Hexahedron => &["edges", "quads", "hexahedra"],
        }
    }
}

/// The type of the highest-dimensional elements of a mesh (`MeshTopology`'s upper element type;
/// prisms and pyramids are not represented in [`MeshData`]).
pub fn upper_element_type(m: &MeshData) -> SetKind {
    if !m.hexahedra.is_empty() {
        SetKind::Hexahedron
    } else if !m.tetrahedra.is_empty() {
        SetKind::Tetrahedron
    } else if !m.quads.is_empty() {
        SetKind::Quad
    } else if !m.triangles.is_empty() {
        SetKind::Triangle
    } else if !m.edges.is_empty() {
        SetKind::Edge
    } else {
        SetKind::Point
    }
}

/// The Data of `PointSetTopologyContainer`, base of every container (also read from an output
/// container by the topological mappings).
#[settee_core::data_group(data = {
    /// initial position of the points
    #[alias("points")]
    position: RealTuples(3),
    /// number of points
    nbPoints: Int = "0",
    /// check the topology after changes (no effect here)
    checkTopology: Bool = "false",
    /// mesh file to read at init (.msh, .obj, .vtk): its points and element lists
    #[alias("fileTopology")]
    filename: FileName,
})]
pub struct PointSetData;

/// The Data `EdgeSetTopologyContainer` adds.
#[settee_core::data_group(data = {
    /// list of edge indices
    edges: IndexTuples(2),
    /// check that the mesh is connected (no effect here)
    checkConnexity: Bool = "false",
})]
pub struct EdgeSetData;

/// The Data `TriangleSetTopologyContainer` adds.
#[settee_core::data_group(data = {
    /// list of triangle indices
    triangles: IndexTuples(3),
})]
pub struct TriangleSetData;

/// The Data `QuadSetTopologyContainer` adds.
#[settee_core::data_group(data = {
    /// list of quad indices
    quads: IndexTuples(4),
})]
pub struct QuadSetData;

/// The Data `TetrahedronSetTopologyContainer` adds.
#[settee_core::data_group(data = {
    /// force the creation of the triangles of the tetrahedra (they are always created here)
    createTriangleArray: Bool = "false",
    /// list of tetrahedron indices
    #[alias("tetras")]
    tetrahedra: IndexTuples(4),
})]
pub struct TetrahedronSetData;

/// The Data `HexahedronSetTopologyContainer` adds.
#[settee_core::data_group(data = {
    /// force the creation of the quads of the hexahedra (they are always created here)
    createQuadArray: Bool = "false",
    /// list of hexahedron indices
    #[alias("hexas")]
    hexahedra: IndexTuples(8),
})]
pub struct HexahedronSetData;

/// A `*SetTopologyContainer`.
#[component(
    roles = [Topology],
    class(
        name = "PointSetTopologyContainer", module = "Sofa.Component.Topology.Container.Dynamic",
        description = "Topology container of a point set (dynamic in SOFA; static here).",
        create = |_| SetTopologyContainer::new(SetKind::Point),
        inherit = [PointSetData],
    ),
    class(
        name = "EdgeSetTopologyContainer", module = "Sofa.Component.Topology.Container.Dynamic",
        description = "Topology container of an edge set.",
        create = |_| SetTopologyContainer::new(SetKind::Edge),
        inherit = [PointSetData, EdgeSetData],
    ),
    class(
        name = "TriangleSetTopologyContainer", module = "Sofa.Component.Topology.Container.Dynamic",
        description = "Topology container of a triangle set (edges derived from the triangles when not given).",
        create = |_| SetTopologyContainer::new(SetKind::Triangle),
        inherit = [PointSetData, EdgeSetData, TriangleSetData],
    ),
    class(
        name = "QuadSetTopologyContainer", module = "Sofa.Component.Topology.Container.Dynamic",
        description = "Topology container of a quad set (edges derived from the quads when not given).",
        create = |_| SetTopologyContainer::new(SetKind::Quad),
        inherit = [PointSetData, EdgeSetData, QuadSetData],
    ),
    class(
        name = "TetrahedronSetTopologyContainer", module = "Sofa.Component.Topology.Container.Dynamic",
        description = "Topology container of a tetrahedron set (edges and triangles derived when not given).",
        create = |_| SetTopologyContainer::new(SetKind::Tetrahedron),
        inherit = [PointSetData, EdgeSetData, TriangleSetData, TetrahedronSetData],
    ),
    class(
        name = "HexahedronSetTopologyContainer", module = "Sofa.Component.Topology.Container.Dynamic",
        description = "Topology container of a hexahedron set (edges and quads derived when not given).",
        create = |_| SetTopologyContainer::new(SetKind::Hexahedron),
        inherit = [PointSetData, EdgeSetData, QuadSetData, HexahedronSetData],
    ),
)]
#[derive(Clone)]
pub struct SetTopologyContainer {
    kind: SetKind,
    /// The lists, SOFA's `getNbPoints()` (which may exceed the number of positions: containers
    /// filled by a topological mapping have no positions) and the shells the modifiers keep.
    topo: DynTopo,
}

impl SetTopologyContainer {
    pub fn new(kind: SetKind) -> SetTopologyContainer {
        SetTopologyContainer { kind, topo: DynTopo::new(kind.element_kind(), 0, MeshData::default()) }
    }

    pub fn kind(&self) -> SetKind {
        self.kind
    }

    /// Number of points (SOFA's `getNbPoints()`), which [`MeshData`] cannot carry when there
    /// are no positions.
    pub fn nb_points(&self) -> usize {
        self.topo.nb_points
    }

    /// The lists and shells, for the modifiers ([`crate::modifier::modify`]).
    pub fn topo_mut(&mut self) -> &mut DynTopo {
        &mut self.topo
    }

    pub fn topo(&self) -> &DynTopo {
        &self.topo
    }

    /// Writes the lists back into the Data after a change, so `@container.triangles` links and
    /// `nbPoints` see the new topology. Only the lists `wanted` names are copied: copying a list
    /// nobody reads would make every change cost as much as the whole mesh.
    pub fn write_back(&self, d: &mut DataSet, wanted: impl Fn(&str) -> bool) {
        let m = &self.topo.mesh;
        for name in self.kind.lists() {
            if !wanted(name) {
                continue;
            }
            put_list(d, name, m);
        }
        d.put(PointSetData::NB_POINTS, self.topo.nb_points as i64);
    }

    /// Rebuilds the mesh from the Data as they are, without deriving anything (what SOFA's
    /// accessors return between a change of the Data and the next `init`).
    pub fn refresh(&mut self, d: &DataSet) {
        self.topo = DynTopo::new(self.kind.element_kind(), d.get(PointSetData::NB_POINTS).max(0) as usize, lists_from_data(self.kind, d));
    }

    fn initialize(&mut self, cx: &mut InitCtx) -> SimResult {
        let kind = self.kind;
        let d = cx.data();
        let file = d.get(PointSetData::FILENAME).trim().to_string();
        if !file.is_empty() {
            self.load_file(cx, &file)?;
        }
        let d = cx.data();
        let mut mesh = lists_from_data(kind, d);
        let mut nb = d.get(PointSetData::NB_POINTS).max(0) as usize;
        let positions_set = d.is_given(PointSetData::POSITION) || !file.is_empty();

        // Number of points.
        let own_count = match kind {
            SetKind::Point => 0,
            SetKind::Edge => count_points(&mesh.edges),
            SetKind::Triangle => count_points(&mesh.triangles),
            SetKind::Quad => count_points(&mesh.quads),
            SetKind::Tetrahedron => count_points(&mesh.tetrahedra),
            SetKind::Hexahedron => count_points(&mesh.hexahedra),
        };
        match kind {
            SetKind::Point => nb = nb.max(mesh.points.len()),
            SetKind::Hexahedron => {
                if positions_set {
                    nb = mesh.points.len();
                }
                nb = nb.max(own_count);
            }
            _ => {
                if positions_set {
                    nb = mesh.points.len();
                } else {
                    nb = nb.max(own_count);
                }
            }
        }

        // Lower lists derived from the class's own list, in SOFA's orders.
        let mut derived: Vec<&'static str> = Vec::new();
        let own_empty = own_count == 0;
        if !own_empty {
            match kind {
                SetKind::Point | SetKind::Edge => {}
                SetKind::Triangle => {
                    if mesh.edges.is_empty() {
                        mesh.edges = edges_from_surface(&mesh.triangles, &[]);
                        derived.push("edges");
                    }
                }
                SetKind::Quad => {
                    if mesh.edges.is_empty() {
                        mesh.edges = edges_from_surface(&[], &mesh.quads);
                        derived.push("edges");
                    }
                }
                SetKind::Tetrahedron => {
                    if mesh.edges.is_empty() {
                        mesh.edges = edges_from_volume(&mesh.tetrahedra, &[]);
                        derived.push("edges");
                    }
                    if mesh.triangles.is_empty() {
                        let (triangles, duplicates) = triangles_from_tetrahedra_unique(&mesh.tetrahedra);
                        if let Some((t, f)) = duplicates.first() {
                            cx.warn(format!(
                                "{} face(s) appear twice with the same orientation (first: triangle {:?} of tetrahedron {t}); the repeats are skipped (SOFA reports \"Duplicate triangle\")",
                                duplicates.len(),
                                f
                            ));
                        }
                        mesh.triangles = triangles;
                        derived.push("triangles");
                    }
                }
                SetKind::Hexahedron => {
                    if mesh.edges.is_empty() {
                        mesh.edges = edges_from_volume(&[], &mesh.hexahedra);
                        derived.push("edges");
                    }
                    if mesh.quads.is_empty() {
                        mesh.quads = quads_from_hexahedra(&mesh.hexahedra);
                        derived.push("quads");
                    }
                }
            }
        }

        self.check(cx, &mesh, nb, own_empty)?;

        let d = cx.data_mut();
        for name in &derived {
            put_list(d, name, &mesh);
        }
        d.put(PointSetData::NB_POINTS, nb as i64);
        self.topo = DynTopo::new(kind.element_kind(), nb, mesh);
        Ok(())
    }

    /// The checks SOFA makes while building the adjacency buffers of a non-empty container.
    fn check(&self, cx: &mut InitCtx, m: &MeshData, nb: usize, own_empty: bool) -> SimResult {
        if own_empty {
            return Ok(());
        }
        let inconsistent = |what: &str, e: crate::elements::MissingSide| {
            cx.error(format!("the {what} are inconsistent: {e}"))
                .hint("fix the mesh, or give only the highest-dimensional elements and let the container derive the others")
        };
        match self.kind {
            SetKind::Triangle | SetKind::Tetrahedron => {
                triangles_around_edges(&m.edges, &m.triangles).map_err(|e| inconsistent("edges and triangles", e))?;
            }
            _ => {}
        }
        match self.kind {
            SetKind::Tetrahedron => {
                tetrahedra_around_triangles(&m.triangles, &m.tetrahedra).map_err(|e| inconsistent("triangles and tetrahedra", e))?;
                if let Some(e) = missing_tetrahedron_edge(&m.edges, &m.tetrahedra) {
                    cx.warn(format!("the edge list lacks an edge of a tetrahedron: {e}"));
                }
            }
            SetKind::Hexahedron => {
                hexahedra_around_quads(&m.quads, &m.hexahedra).map_err(|e| inconsistent("quads and hexahedra", e))?;
            }
            _ => {}
        }
        let max =
            [count_points(&m.edges), count_points(&m.triangles), count_points(&m.quads), count_points(&m.tetrahedra), count_points(&m.hexahedra)]
                .into_iter()
                .max()
                .unwrap_or(0);
        if max > nb {
            cx.warn(format!("elements refer to point {} but the container has {nb} points (SOFA's adjacency buffers skip these elements)", max - 1));
        }
        Ok(())
    }
}

/// Flat indices of a list.
fn flat<const K: usize>(v: &[[usize; K]]) -> Vec<usize> {
    v.iter().flatten().copied().collect()
}

/// Writes the element list `name` of `m` into the Data of a container that has it.
fn put_list(d: &mut DataSet, name: &str, m: &MeshData) {
    match name {
        "edges" => d.put(EdgeSetData::EDGES, flat(&m.edges)),
        "triangles" => d.put(TriangleSetData::TRIANGLES, flat(&m.triangles)),
        "quads" => d.put(QuadSetData::QUADS, flat(&m.quads)),
        "tetrahedra" => d.put(TetrahedronSetData::TETRAHEDRA, flat(&m.tetrahedra)),
        _ => d.put(HexahedronSetData::HEXAHEDRA, flat(&m.hexahedra)),
    }
}

/// The positions and element lists a container of `kind` holds, read from its Data.
fn lists_from_data(kind: SetKind, d: &DataSet) -> MeshData {
    let has = |r: DataRef<data_ref::Indices>| kind.lists().contains(&r.name());
    let (edges, triangles, quads) = (EdgeSetData::EDGES, TriangleSetData::TRIANGLES, QuadSetData::QUADS);
    let (tetrahedra, hexahedra) = (TetrahedronSetData::TETRAHEDRA, HexahedronSetData::HEXAHEDRA);
    MeshData {
        points: points_from_flat(d.get(PointSetData::POSITION), 3),
        edges: if has(edges) { group::<2>(d.get(edges)) } else { Vec::new() },
        triangles: if has(triangles) { group::<3>(d.get(triangles)) } else { Vec::new() },
        quads: if has(quads) { group::<4>(d.get(quads)) } else { Vec::new() },
        tetrahedra: if has(tetrahedra) { group::<4>(d.get(tetrahedra)) } else { Vec::new() },
        hexahedra: if has(hexahedra) { group::<8>(d.get(hexahedra)) } else { Vec::new() },
    }
}

/// Reads a mesh file as SOFA's `MeshTopologyLoader` does for a container's `filename`: the
/// points and every element list of the file (Gmsh `.msh`, `.obj`, legacy ASCII `.vtk`).
fn read_mesh_file(path: &std::path::Path) -> Result<settee_loader::mesh::LoadedMesh, String> {
    let name = path.to_string_lossy().to_lowercase();
    let text = settee_loader::text::read_text(path)?;
    if name.ends_with(".msh") {
        settee_loader::gmsh::parse(path, &text)
    } else if name.ends_with(".obj") {
        settee_loader::obj::parse(path, &text, settee_loader::obj::ObjOptions::default())
    } else if name.ends_with(".vtk") {
        settee_loader::vtk::parse(path, &text, false)
    } else {
        Err(format!("reading '{}' directly is supported for .msh, .obj and .vtk files only", path.display()))
    }
}

impl SetTopologyContainer {
    /// SOFA's `loadFromMeshFile`: the file's points and the element lists this container holds
    /// replace the Data (elements of levels it does not have are not kept).
    fn load_file(&mut self, cx: &mut InitCtx, file: &str) -> SimResult {
        let path = cx.resolve_file(file)?;
        let m = read_mesh_file(&path).map_err(|e| {
            if e.contains("supported for") {
                SimError::unsupported(format!("{}: {e}", cx.label()))
                    .hint("load the file with a loader (MeshGmshLoader, MeshOBJLoader, …) and write src=\"@loader\"")
            } else {
                cx.error(e)
            }
        })?;
        let has = |name: &str| self.kind.lists().contains(&name);
        let d = cx.data_mut();
        d.put(PointSetData::POSITION, m.positions.iter().flatten().copied().collect());
        if has("edges") {
            d.put(EdgeSetData::EDGES, m.edges.iter().flatten().copied().collect());
        }
        if has("triangles") {
            d.put(TriangleSetData::TRIANGLES, m.triangles.iter().flatten().copied().collect());
        }
        if has("quads") {
            d.put(QuadSetData::QUADS, m.quads.iter().flatten().copied().collect());
        }
        if has("tetrahedra") {
            d.put(TetrahedronSetData::TETRAHEDRA, m.tetrahedra.iter().flatten().copied().collect());
        }
        if has("hexahedra") {
            d.put(HexahedronSetData::HEXAHEDRA, m.hexahedra.iter().flatten().copied().collect());
        }
        Ok(())
    }
}

impl Component for SetTopologyContainer {
    /// Positions and given lists are readable from creation on (SOFA's accessors read the Data);
    /// nothing is derived before `init`.
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.refresh(cx.data());
        Ok(())
    }

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.initialize(cx)
    }
}

impl Topology for SetTopologyContainer {
    fn mesh(&self) -> &MeshData {
        &self.topo.mesh
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_util::{attrs, create, factory_and_scene, init_scene};
    use settee_core::Scene;

    fn one(class: &str, a: &[(&str, &str)]) -> (Scene, settee_core::ComponentId, settee_core::SimResult) {
        let (f, mut scene) = factory_and_scene();
        let id = f.create(&mut scene, Scene::ROOT, class, None, attrs(a), None, std::path::Path::new(".")).unwrap();
        let r = init_scene(&mut scene);
        (scene, id, r)
    }

    fn container(scene: &Scene, id: settee_core::ComponentId) -> &SetTopologyContainer {
        scene.get::<SetTopologyContainer>(id).unwrap()
    }

    /// `filename`: the file's points and the lists the container holds, as SOFA's
    /// MeshTopologyLoader fills them (two tetrahedra sharing a face, in Gmsh's format); the
    /// triangle and edge lists are completed from the tetrahedra.
    #[test]
    fn a_container_reads_its_mesh_file() {
        let dir = std::env::temp_dir().join(format!("settee-set-container-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("two.msh");
        let msh = "$NOD\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n$ENDNOD\n$ELM\n2\n\
                   1 4 1 1 4 1 2 3 4\n2 4 1 1 4 2 3 4 5\n$ENDELM\n";
        std::fs::write(&path, msh).unwrap();
        let file = path.to_string_lossy().to_string();
        let (scene, id, r) = one("TetrahedronSetTopologyContainer", &[("filename", &file)]);
        r.unwrap();
        let t = container(&scene, id).topo();
        assert_eq!(t.nb_points, 5);
        assert_eq!(t.mesh.points[4], [1.0, 1.0, 1.0]);
        assert_eq!(t.mesh.tetrahedra, vec![[0, 1, 2, 3], [1, 2, 3, 4]]);
        // 4 + 4 faces, one shared: 7 triangles; 9 edges.
        assert_eq!(t.mesh.triangles.len(), 7);
        assert_eq!(t.mesh.edges.len(), 9);
        // A point set keeps the points only; an unknown format is refused by name.
        let (scene, id, r) = one("PointSetTopologyContainer", &[("filename", &file)]);
        r.unwrap();
        assert_eq!(container(&scene, id).topo().nb_points, 5);
        let (_, _, r) = one("TetrahedronSetTopologyContainer", &[("filename", &dir.join("x.xyz").to_string_lossy())]);
        assert!(r.is_err());
    }

    #[test]
    fn triangle_set_derives_oriented_edges() {
        let (scene, id, r) = one("TriangleSetTopologyContainer", &[("triangles", "0 1 2  2 1 3")]);
        r.unwrap();
        let m = scene.mesh_of(id).unwrap();
        assert_eq!(m.edges, vec![[1, 2], [2, 0], [0, 1], [1, 3], [3, 2]]);
        assert_eq!(scene.entry(id).data.indices("edges"), &[1, 2, 2, 0, 0, 1, 1, 3, 3, 2]);
        let c = container(&scene, id);
        assert_eq!(c.nb_points(), 4);
        assert!(m.points.is_empty());
        assert_eq!(scene.entry(id).data.int("nbPoints"), 4);
    }

    #[test]
    fn quad_set_derives_sorted_edges() {
        let (scene, id, r) = one("QuadSetTopologyContainer", &[("quads", "3 2 0 4")]);
        r.unwrap();
        // (q1,q2) (q2,q3) (q3,q0) (q0,q1), sorted
        assert_eq!(scene.mesh_of(id).unwrap().edges, vec![[0, 2], [0, 4], [3, 4], [2, 3]]);
    }

    #[test]
    fn tetrahedron_set_derives_edges_and_triangles() {
        let (scene, id, r) =
            one("TetrahedronSetTopologyContainer", &[("position", "0 0 0 1 0 0 0 1 0 0 0 1 1 1 1 5 5 5"), ("tetras", "0 1 2 3 1 2 3 4")]);
        r.unwrap();
        let m = scene.mesh_of(id).unwrap();
        assert_eq!(m.edges, vec![[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3], [1, 4], [2, 4], [3, 4]]);
        assert_eq!(m.triangles, vec![[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1], [2, 3, 4], [1, 4, 3], [1, 2, 4]]);
        assert!(m.quads.is_empty() && m.hexahedra.is_empty());
        // the positions fix the point count, even with an unused point
        assert_eq!(container(&scene, id).nb_points(), 6);
        assert_eq!(m.points.len(), 6);
        assert_eq!(scene.entry(id).data.indices("triangles").len(), 21);
    }

    #[test]
    fn hexahedron_set_derives_edges_and_quads() {
        let (scene, id, r) = one("HexahedronSetTopologyContainer", &[("hexas", "0 1 2 3 4 5 6 7 4 5 6 7 8 9 10 11")]);
        r.unwrap();
        let m = scene.mesh_of(id).unwrap();
        assert_eq!(m.edges.len(), 20);
        assert_eq!(m.edges[..3], [[0, 1], [0, 3], [0, 4]]);
        assert_eq!(m.quads.len(), 11);
        assert_eq!(m.quads[..2], [[0, 3, 2, 1], [4, 5, 6, 7]]);
        assert_eq!(container(&scene, id).nb_points(), 12);
    }

    #[test]
    fn given_lists_are_kept_and_checked() {
        // edges given in another order are kept
        let (scene, id, r) = one("TriangleSetTopologyContainer", &[("triangles", "0 1 2"), ("edges", "0 1 1 2 2 0")]);
        r.unwrap();
        assert_eq!(scene.mesh_of(id).unwrap().edges, vec![[0, 1], [1, 2], [2, 0]]);
        // an edge missing: error
        let (_, _, r) = one("TriangleSetTopologyContainer", &[("triangles", "0 1 2"), ("edges", "0 1 1 2")]);
        assert!(r.unwrap_err().to_string().contains("inconsistent"));
        // a tetrahedron face missing from the given triangles: error
        let (_, _, r) = one("TetrahedronSetTopologyContainer", &[("tetrahedra", "0 1 2 3"), ("triangles", "1 2 3")]);
        assert!(r.is_err());
        // an empty container is fine
        let (scene, id, r) = one("PointSetTopologyContainer", &[("nbPoints", "7")]);
        r.unwrap();
        assert_eq!(container(&scene, id).nb_points(), 7);
    }

    #[test]
    fn mechanical_object_takes_the_container_positions() {
        let (f, mut scene) = factory_and_scene();
        create(&f, &mut scene, "TriangleSetTopologyContainer", &[("position", "0 0 0 1 0 0 0 1 0"), ("triangles", "0 1 2")]);
        let mo = create(&f, &mut scene, "MechanicalObject", &[]);
        init_scene(&mut scene).unwrap();
        assert_eq!(scene.store.get(scene.state_of(mo).unwrap()).size, 3);
    }
}
