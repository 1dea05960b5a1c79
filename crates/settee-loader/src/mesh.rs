//! The mesh buffers every mesh loader fills, their Data (SOFA's `MeshLoader` base), and the
//! processing a loader applies at init: transform, sub-element creation, removal of isolated
//! points and vertex normals.

use std::collections::{BTreeSet, HashSet};

use settee_core::data::{decl, decl_alias, DataKind::*, DataSet, Value};
use settee_core::DataDecl;

use crate::transform;

/// The `filename` Data of every file loader (SOFA's `BaseLoader`).
pub static FILE_DATA: &[DataDecl] = &[decl("filename", FileName, "", "file to load (resolved against the scene directory, then the data path)")];

/// Data of SOFA's `MeshLoader`, shared by every mesh loader.
///
/// Representation notes: `polylines` and `polygons` (lists of variable-length lists) are stored
/// flat, each element written as its vertex count followed by its vertices (VTK's cell layout);
/// the `*Groups` lists are text, each group printed as SOFA prints a `PrimitiveGroup`
/// (`groupName materialName materialId first count`).
pub static MESH_LOADER_DATA: &[DataDecl] = &[
    decl("position", RealTuples(3), "", "vertices of the mesh loaded"),
    decl("polylines", Indices, "", "polylines of the mesh loaded (flat: vertex count, then the vertices, for each polyline)"),
    decl("edges", IndexTuples(2), "", "edges of the mesh loaded"),
    decl("triangles", IndexTuples(3), "", "triangles of the mesh loaded"),
    decl("quads", IndexTuples(4), "", "quads of the mesh loaded"),
    decl("polygons", Indices, "", "polygons of the mesh loaded (flat: vertex count, then the vertices, for each polygon)"),
    decl("highOrderEdgePositions", IndexTuples(4), "", "high order edge points of the mesh loaded (point, edge, 1, 1)"),
    decl("highOrderTrianglePositions", IndexTuples(5), "", "high order triangle points of the mesh loaded"),
    decl("highOrderQuadPositions", IndexTuples(6), "", "high order quad points of the mesh loaded"),
    decl_alias("tetrahedra", &["tetras"], IndexTuples(4), "", "tetrahedra of the mesh loaded"),
    decl_alias("hexahedra", &["hexas"], IndexTuples(8), "", "hexahedra of the mesh loaded"),
    decl_alias("prisms", &["pentas", "pentahedra"], IndexTuples(6), "", "prisms of the mesh loaded"),
    decl("highOrderTetrahedronPositions", IndexTuples(6), "", "high order tetrahedron points of the mesh loaded"),
    decl("highOrderHexahedronPositions", IndexTuples(8), "", "high order hexahedron points of the mesh loaded"),
    decl("pyramids", IndexTuples(5), "", "pyramids of the mesh loaded"),
    decl("normals", RealTuples(3), "", "vertex normals (read from the file, else computed at init from triangles and quads)"),
    decl("edgesGroups", Str, "", "groups of edges"),
    decl("trianglesGroups", Str, "", "groups of triangles"),
    decl("quadsGroups", Str, "", "groups of quads"),
    decl("polygonsGroups", Str, "", "groups of polygons"),
    decl("tetrahedraGroups", Str, "", "groups of tetrahedra"),
    decl("hexahedraGroups", Str, "", "groups of hexahedra"),
    decl_alias("prismsGroups", &["pentahedraGroups"], Str, "", "groups of prisms"),
    decl("pyramidsGroups", Str, "", "groups of pyramids"),
    decl("flipNormals", Bool, "false", "reverse the vertex order of the triangles and quads read"),
    decl("triangulate", Bool, "false", "divide all quads (and polygons) into triangles"),
    decl("createSubelements", Bool, "false", "add the missing boundary elements (faces of volumes, edges of faces); MeshGmshLoader: true unless set"),
    decl("onlyAttachedPoints", Bool, "false", "only keep the points used by an element (renumbered in increasing order)"),
    decl("translation", Fixed(3), "0 0 0", "translation of the points"),
    decl("rotation", Fixed(3), "0 0 0", "rotation of the points, Euler angles in degrees (x applied first, then y, then z)"),
    decl("scale3d", Fixed(3), "1 1 1", "scale of the points in 3 dimensions (attribute `scale=\"s\"` multiplies it by s)"),
    decl(
        "transformation",
        Fixed(16),
        "1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1",
        "4×4 homogeneous matrix (row-major) applied to the points; when not the identity it replaces translation, rotation and scale3d",
    ),
];

// The Data every mesh loader (a `MeshLoader` component) reads: `filename`, the mesh buffers
// when no file is given, the processing options and whether the groups are given. Each mesh
// loader class lists these and its own.
settee_core::data_refs! {
    pub static MESH_LOADER_READS;
    FILENAME: Text = "filename";
    POSITION: Reals = "position";
    POLYLINES: Indices = "polylines";
    EDGES: Indices = "edges";
    TRIANGLES: Indices = "triangles";
    QUADS: Indices = "quads";
    POLYGONS: Indices = "polygons";
    HIGH_ORDER_EDGE_POSITIONS: Indices = "highOrderEdgePositions";
    HIGH_ORDER_TRIANGLE_POSITIONS: Indices = "highOrderTrianglePositions";
    HIGH_ORDER_QUAD_POSITIONS: Indices = "highOrderQuadPositions";
    TETRAHEDRA: Indices = "tetrahedra";
    HEXAHEDRA: Indices = "hexahedra";
    PRISMS: Indices = "prisms";
    PYRAMIDS: Indices = "pyramids";
    HIGH_ORDER_TETRAHEDRON_POSITIONS: Indices = "highOrderTetrahedronPositions";
    HIGH_ORDER_HEXAHEDRON_POSITIONS: Indices = "highOrderHexahedronPositions";
    NORMALS: Reals = "normals";
    EDGES_GROUPS: Text = "edgesGroups";
    TRIANGLES_GROUPS: Text = "trianglesGroups";
    QUADS_GROUPS: Text = "quadsGroups";
    POLYGONS_GROUPS: Text = "polygonsGroups";
    TETRAHEDRA_GROUPS: Text = "tetrahedraGroups";
    HEXAHEDRA_GROUPS: Text = "hexahedraGroups";
    PRISMS_GROUPS: Text = "prismsGroups";
    PYRAMIDS_GROUPS: Text = "pyramidsGroups";
    FLIP_NORMALS: Bool = "flipNormals";
    TRIANGULATE: Bool = "triangulate";
    CREATE_SUBELEMENTS: Bool = "createSubelements";
    ONLY_ATTACHED_POINTS: Bool = "onlyAttachedPoints";
    TRANSLATION: Vec3 = "translation";
    ROTATION: Vec3 = "rotation";
    SCALE3D: Vec3 = "scale3d";
    TRANSFORMATION: Reals = "transformation";
}

/// The `reads` of a mesh loader class with Data of its own: [`MESH_LOADER_READS`] followed by
/// the class's references (a crate test checks that every mesh loader class lists them all).
macro_rules! mesh_loader_reads {
    ($($own:expr),* $(,)?) => {
        &[
            $crate::mesh::FILENAME.erased(),
            $crate::mesh::POSITION.erased(),
            $crate::mesh::POLYLINES.erased(),
            $crate::mesh::EDGES.erased(),
            $crate::mesh::TRIANGLES.erased(),
            $crate::mesh::QUADS.erased(),
            $crate::mesh::POLYGONS.erased(),
            $crate::mesh::HIGH_ORDER_EDGE_POSITIONS.erased(),
            $crate::mesh::HIGH_ORDER_TRIANGLE_POSITIONS.erased(),
            $crate::mesh::HIGH_ORDER_QUAD_POSITIONS.erased(),
            $crate::mesh::TETRAHEDRA.erased(),
            $crate::mesh::HEXAHEDRA.erased(),
            $crate::mesh::PRISMS.erased(),
            $crate::mesh::PYRAMIDS.erased(),
            $crate::mesh::HIGH_ORDER_TETRAHEDRON_POSITIONS.erased(),
            $crate::mesh::HIGH_ORDER_HEXAHEDRON_POSITIONS.erased(),
            $crate::mesh::NORMALS.erased(),
            $crate::mesh::EDGES_GROUPS.erased(),
            $crate::mesh::TRIANGLES_GROUPS.erased(),
            $crate::mesh::QUADS_GROUPS.erased(),
            $crate::mesh::POLYGONS_GROUPS.erased(),
            $crate::mesh::TETRAHEDRA_GROUPS.erased(),
            $crate::mesh::HEXAHEDRA_GROUPS.erased(),
            $crate::mesh::PRISMS_GROUPS.erased(),
            $crate::mesh::PYRAMIDS_GROUPS.erased(),
            $crate::mesh::FLIP_NORMALS.erased(),
            $crate::mesh::TRIANGULATE.erased(),
            $crate::mesh::CREATE_SUBELEMENTS.erased(),
            $crate::mesh::ONLY_ATTACHED_POINTS.erased(),
            $crate::mesh::TRANSLATION.erased(),
            $crate::mesh::ROTATION.erased(),
            $crate::mesh::SCALE3D.erased(),
            $crate::mesh::TRANSFORMATION.erased(),
            $($own.erased(),)*
        ]
    };
}
pub(crate) use mesh_loader_reads;

/// Mesh-loader Data that `src=` never links (SOFA disables their auto-link).
pub static NO_SRC_LINK: &[&str] =
    &["flipNormals", "triangulate", "createSubelements", "onlyAttachedPoints", "translation", "rotation", "scale3d", "transformation"];

/// SOFA's `PrimitiveGroup`: a run of consecutive elements sharing a tag or material.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PrimitiveGroup {
    pub p0: i64,
    pub nbp: i64,
    pub material_name: String,
    pub group_name: String,
    pub material_id: i64,
}

impl PrimitiveGroup {
    pub fn new(p0: i64, nbp: i64, material_name: &str, group_name: &str, material_id: i64) -> PrimitiveGroup {
        PrimitiveGroup { p0, nbp, material_name: material_name.into(), group_name: group_name.into(), material_id }
    }
}

/// Prints groups as SOFA prints a `vector<PrimitiveGroup>`.
pub fn groups_text(groups: &[PrimitiveGroup]) -> String {
    groups.iter().map(|g| format!("{} {} {} {} {}", g.group_name, g.material_name, g.material_id, g.p0, g.nbp)).collect::<Vec<_>>().join(" ")
}

/// Gmsh's tag grouping: consecutive or not, elements of the same tag are counted together.
pub fn add_in_group(groups: &mut Vec<PrimitiveGroup>, tag: i64) {
    if let Some(g) = groups.iter_mut().find(|g| g.p0 == tag) {
        g.nbp += 1;
        return;
    }
    groups.push(PrimitiveGroup::new(tag, 1, "", "", -1));
}

/// Replaces the tags held in `p0` by the first element index of each group.
pub fn normalize_groups(groups: &mut [PrimitiveGroup]) {
    let mut start = 0;
    for g in groups {
        g.p0 = start;
        start += g.nbp;
    }
}

/// Element groups of a mesh.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Groups {
    pub edges: Vec<PrimitiveGroup>,
    pub triangles: Vec<PrimitiveGroup>,
    pub quads: Vec<PrimitiveGroup>,
    pub polygons: Vec<PrimitiveGroup>,
    pub tetrahedra: Vec<PrimitiveGroup>,
    pub hexahedra: Vec<PrimitiveGroup>,
    pub prisms: Vec<PrimitiveGroup>,
    pub pyramids: Vec<PrimitiveGroup>,
}

/// The outputs of a mesh loader.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadedMesh {
    pub positions: Vec<[f64; 3]>,
    pub polylines: Vec<Vec<usize>>,
    pub edges: Vec<[usize; 2]>,
    pub triangles: Vec<[usize; 3]>,
    pub quads: Vec<[usize; 4]>,
    pub polygons: Vec<Vec<usize>>,
    pub high_order_edges: Vec<[usize; 4]>,
    pub high_order_triangles: Vec<[usize; 5]>,
    pub high_order_quads: Vec<[usize; 6]>,
    pub tetrahedra: Vec<[usize; 4]>,
    pub hexahedra: Vec<[usize; 8]>,
    pub prisms: Vec<[usize; 6]>,
    pub pyramids: Vec<[usize; 5]>,
    pub high_order_tetrahedra: Vec<[usize; 6]>,
    pub high_order_hexahedra: Vec<[usize; 8]>,
    pub normals: Vec<[f64; 3]>,
    pub groups: Groups,
    /// Loader-specific outputs (texture coordinates, …), written as they are.
    pub extra: Vec<(&'static str, Value)>,
    /// Problems that do not prevent loading (SOFA's warnings), reported by the component.
    pub warnings: Vec<String>,
}

fn reversed<const K: usize>(mut e: [usize; K]) -> [usize; K] {
    e.reverse();
    e
}

impl LoadedMesh {
    /// SOFA's `addTriangle`: reversed when `flip`.
    pub fn add_triangle(&mut self, t: [usize; 3], flip: bool) {
        self.triangles.push(if flip { reversed(t) } else { t });
    }

    /// SOFA's `addQuad`: reversed when `flip`.
    pub fn add_quad(&mut self, q: [usize; 4], flip: bool) {
        self.quads.push(if flip { reversed(q) } else { q });
    }

    /// The first element index that refers to a point beyond the position list, as a message.
    pub fn bad_index(&self) -> Option<String> {
        let n = self.positions.len();
        fn first_bad<'a, I: IntoIterator<Item = &'a usize>>(it: I, n: usize) -> Option<usize> {
            it.into_iter().copied().find(|&i| i >= n)
        }
        let lists: [(&str, Option<usize>); 10] = [
            ("edges", first_bad(self.edges.iter().flatten(), n)),
            ("triangles", first_bad(self.triangles.iter().flatten(), n)),
            ("quads", first_bad(self.quads.iter().flatten(), n)),
            ("tetrahedra", first_bad(self.tetrahedra.iter().flatten(), n)),
            ("hexahedra", first_bad(self.hexahedra.iter().flatten(), n)),
            ("prisms", first_bad(self.prisms.iter().flatten(), n)),
            ("pyramids", first_bad(self.pyramids.iter().flatten(), n)),
            ("polygons", first_bad(self.polygons.iter().flatten(), n)),
            ("polylines", first_bad(self.polylines.iter().flatten(), n)),
            ("high order edge points", first_bad(self.high_order_edges.iter().map(|h| &h[0]), n)),
        ];
        lists.iter().find_map(|(name, bad)| bad.map(|i| format!("{name} refer to point {i} but there are only {n} points")))
    }

    /// Reads the mesh held in the Data of a component (attributes or links, when no file is read).
    pub fn from_data(d: &DataSet) -> LoadedMesh {
        LoadedMesh {
            positions: tuples_f(d.get(POSITION)),
            polylines: unflatten(d.get(POLYLINES)),
            edges: tuples(d.get(EDGES)),
            triangles: tuples(d.get(TRIANGLES)),
            quads: tuples(d.get(QUADS)),
            polygons: unflatten(d.get(POLYGONS)),
            high_order_edges: tuples(d.get(HIGH_ORDER_EDGE_POSITIONS)),
            high_order_triangles: tuples(d.get(HIGH_ORDER_TRIANGLE_POSITIONS)),
            high_order_quads: tuples(d.get(HIGH_ORDER_QUAD_POSITIONS)),
            tetrahedra: tuples(d.get(TETRAHEDRA)),
            hexahedra: tuples(d.get(HEXAHEDRA)),
            prisms: tuples(d.get(PRISMS)),
            pyramids: tuples(d.get(PYRAMIDS)),
            high_order_tetrahedra: tuples(d.get(HIGH_ORDER_TETRAHEDRON_POSITIONS)),
            high_order_hexahedra: tuples(d.get(HIGH_ORDER_HEXAHEDRON_POSITIONS)),
            normals: tuples_f(d.get(NORMALS)),
            ..LoadedMesh::default()
        }
    }

    /// Writes the mesh into the Data of a component. Groups are written only when the mesh has
    /// some or the Data is not given by the scene.
    pub fn write(&self, d: &mut DataSet) {
        d.set("position", flat_f(&self.positions));
        d.set("polylines", Value::Indices { arity: 1, v: flatten(&self.polylines) });
        d.set("edges", flat(&self.edges));
        d.set("triangles", flat(&self.triangles));
        d.set("quads", flat(&self.quads));
        d.set("polygons", Value::Indices { arity: 1, v: flatten(&self.polygons) });
        d.set("highOrderEdgePositions", flat(&self.high_order_edges));
        d.set("highOrderTrianglePositions", flat(&self.high_order_triangles));
        d.set("highOrderQuadPositions", flat(&self.high_order_quads));
        d.set("tetrahedra", flat(&self.tetrahedra));
        d.set("hexahedra", flat(&self.hexahedra));
        d.set("prisms", flat(&self.prisms));
        d.set("pyramids", flat(&self.pyramids));
        d.set("highOrderTetrahedronPositions", flat(&self.high_order_tetrahedra));
        d.set("highOrderHexahedronPositions", flat(&self.high_order_hexahedra));
        d.set("normals", flat_f(&self.normals));
        let g = &self.groups;
        for (field, list) in [
            (EDGES_GROUPS, &g.edges),
            (TRIANGLES_GROUPS, &g.triangles),
            (QUADS_GROUPS, &g.quads),
            (POLYGONS_GROUPS, &g.polygons),
            (TETRAHEDRA_GROUPS, &g.tetrahedra),
            (HEXAHEDRA_GROUPS, &g.hexahedra),
            (PRISMS_GROUPS, &g.prisms),
            (PYRAMIDS_GROUPS, &g.pyramids),
        ] {
            if !list.is_empty() || !d.is_given(field) {
                d.set(field.name(), Value::Str(groups_text(list)));
            }
        }
        for (name, v) in &self.extra {
            d.set(name, v.clone());
        }
    }
}

pub fn tuples<const K: usize>(v: &[usize]) -> Vec<[usize; K]> {
    settee_core::topology::group::<K>(v)
}

pub fn tuples_f(v: &[f64]) -> Vec<[f64; 3]> {
    v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

pub fn flat<const K: usize>(v: &[[usize; K]]) -> Value {
    Value::Indices { arity: K, v: v.iter().flatten().copied().collect() }
}

pub fn flat_f(v: &[[f64; 3]]) -> Value {
    Value::Reals { arity: 3, v: v.iter().flatten().copied().collect() }
}

fn flatten(v: &[Vec<usize>]) -> Vec<usize> {
    let mut out = Vec::new();
    for e in v {
        out.push(e.len());
        out.extend_from_slice(e);
    }
    out
}

fn unflatten(v: &[usize]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let n = v[i];
        let end = (i + 1 + n).min(v.len());
        out.push(v[i + 1..end].to_vec());
        i = end;
    }
    out
}

/// The inputs of the init-time processing.
#[derive(Clone, Debug, PartialEq)]
pub struct Processing {
    pub flip_normals: bool,
    pub triangulate: bool,
    pub create_subelements: bool,
    pub only_attached_points: bool,
    pub translation: [f64; 3],
    pub rotation: [f64; 3],
    pub scale: [f64; 3],
    pub transformation: transform::Mat4,
}

impl Processing {
    pub fn from_data(d: &DataSet) -> Processing {
        Processing {
            flip_normals: d.get(FLIP_NORMALS),
            triangulate: d.get(TRIANGULATE),
            create_subelements: d.get(CREATE_SUBELEMENTS),
            only_attached_points: d.get(ONLY_ATTACHED_POINTS),
            translation: d.get(TRANSLATION),
            rotation: d.get(ROTATION),
            scale: d.get(SCALE3D),
            transformation: transform::from_flat(d.get(TRANSFORMATION)),
        }
    }
}

fn sorted<const K: usize>(mut e: [usize; K]) -> [usize; K] {
    e.sort_unstable();
    e
}

/// Appends the elements of `new` whose sorted vertex set is not in `set` yet (and records them).
fn add_missing<const K: usize>(list: &mut Vec<[usize; K]>, set: &mut HashSet<[usize; K]>, new: &[[usize; K]]) {
    for e in new {
        if set.insert(sorted(*e)) {
            list.push(*e);
        }
    }
}

fn set_of<const K: usize>(list: &[[usize; K]]) -> HashSet<[usize; K]> {
    list.iter().map(|e| sorted(*e)).collect()
}

/// SOFA's `MeshLoader::reinit` on the loaded buffers: transform the points, create the
/// sub-elements, drop the isolated points, compute the normals. Returns a warning, if any.
pub fn process(m: &mut LoadedMesh, p: &Processing) -> Result<Option<String>, String> {
    let mut warning = None;
    // 1. Transform: the explicit matrix when it is not the identity, else T·R·S.
    let matrix = if !transform::is_identity(&p.transformation) { p.transformation } else { transform::trs(p.translation, p.rotation, p.scale) };
    if !transform::is_identity(&matrix) {
        if transform::is_transform(&matrix) {
            for x in &mut m.positions {
                *x = transform::apply(&matrix, *x);
            }
        } else {
            warning = Some("the transformation matrix is not homogeneous (last row ≠ 0 0 0 1): it is ignored".to_string());
        }
    }
    if let Some(bad) = m.bad_index() {
        return Err(bad);
    }
    update_elements(m, p);
    update_points(m, p);
    update_normals(m);
    Ok(warning)
}

fn update_elements(m: &mut LoadedMesh, p: &Processing) {
    if p.triangulate {
        let quads = std::mem::take(&mut m.quads);
        for q in quads {
            m.add_triangle([q[0], q[1], q[2]], p.flip_normals);
            m.add_triangle([q[0], q[2], q[3]], p.flip_normals);
        }
    }
    if !p.create_subelements {
        return;
    }
    if !m.hexahedra.is_empty() {
        let mut set = set_of(&m.quads);
        for h in m.hexahedra.clone() {
            let faces = [
                [h[0], h[3], h[2], h[1]],
                [h[4], h[5], h[6], h[7]],
                [h[0], h[1], h[5], h[4]],
                [h[1], h[2], h[6], h[5]],
                [h[2], h[3], h[7], h[6]],
                [h[3], h[0], h[4], h[7]],
            ];
            add_missing(&mut m.quads, &mut set, &faces);
        }
    }
    if !m.prisms.is_empty() {
        let mut qset = set_of(&m.quads);
        let mut tset = set_of(&m.triangles);
        for p in m.prisms.clone() {
            add_missing(&mut m.quads, &mut qset, &[[p[0], p[3], p[4], p[1]], [p[0], p[2], p[5], p[3]]]);
            add_missing(&mut m.quads, &mut qset, &[[p[1], p[4], p[5], p[2]]]);
            add_missing(&mut m.triangles, &mut tset, &[[p[0], p[1], p[2]], [p[4], p[3], p[5]]]);
        }
    }
    if !m.pyramids.is_empty() {
        let mut qset = set_of(&m.quads);
        let mut tset = set_of(&m.triangles);
        for p in m.pyramids.clone() {
            add_missing(&mut m.quads, &mut qset, &[[p[0], p[3], p[2], p[1]]]);
            add_missing(&mut m.triangles, &mut tset, &[[p[0], p[1], p[4]], [p[1], p[2], p[4]], [p[3], p[4], p[2]], [p[0], p[4], p[3]]]);
        }
    }
    if !m.tetrahedra.is_empty() {
        let mut set = set_of(&m.triangles);
        for t in m.tetrahedra.clone() {
            add_missing(&mut m.triangles, &mut set, &[[t[0], t[2], t[1]], [t[0], t[1], t[3]], [t[0], t[3], t[2]], [t[1], t[2], t[3]]]);
        }
    }
    if !m.quads.is_empty() {
        let mut set = set_of(&m.edges);
        for q in m.quads.clone() {
            add_missing(&mut m.edges, &mut set, &[[q[1], q[2]], [q[2], q[3]], [q[3], q[0]], [q[0], q[1]]]);
        }
    }
    if !m.triangles.is_empty() {
        let mut set = set_of(&m.edges);
        for t in m.triangles.clone() {
            add_missing(&mut m.edges, &mut set, &[[t[1], t[2]], [t[2], t[0]], [t[0], t[1]]]);
        }
    }
}

fn update_points(m: &mut LoadedMesh, p: &Processing) {
    if !p.only_attached_points {
        return;
    }
    let mut attached: BTreeSet<usize> = BTreeSet::new();
    attached.extend(m.edges.iter().flatten());
    attached.extend(m.triangles.iter().flatten());
    attached.extend(m.quads.iter().flatten());
    attached.extend(m.tetrahedra.iter().flatten());
    attached.extend(m.prisms.iter().flatten());
    attached.extend(m.pyramids.iter().flatten());
    attached.extend(m.hexahedra.iter().flatten());
    if attached.len() == m.positions.len() {
        return;
    }
    let mut old2new = vec![0usize; m.positions.len()];
    for (new, &old) in attached.iter().enumerate() {
        old2new[old] = new;
        m.positions[new] = m.positions[old];
    }
    m.positions.truncate(attached.len());
    fn remap<const K: usize>(list: &mut [[usize; K]], old2new: &[usize]) {
        for e in list.iter_mut().flatten() {
            *e = old2new[*e];
        }
    }
    remap(&mut m.edges, &old2new);
    remap(&mut m.triangles, &old2new);
    remap(&mut m.quads, &old2new);
    remap(&mut m.tetrahedra, &old2new);
    remap(&mut m.prisms, &old2new);
    remap(&mut m.pyramids, &old2new);
    remap(&mut m.hexahedra, &old2new);
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// SOFA's `Vec::normalize`: divides by the norm when it exceeds the machine epsilon.
pub fn normalize(v: &mut [f64; 3]) {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if n > f64::EPSILON {
        for c in v.iter_mut() {
            *c /= n;
        }
    }
}

fn add_to(a: &mut [f64; 3], b: [f64; 3]) {
    for c in 0..3 {
        a[c] += b[c];
    }
}

/// Vertex normals, unless the file gave one per vertex: the existing list is resized to the
/// point count (keeping its first entries, as SOFA does) and accumulates the normalised triangle
/// normals and quad corner normals, then each is normalised.
fn update_normals(m: &mut LoadedMesh) {
    let n = m.positions.len();
    if m.normals.len() == n {
        return;
    }
    m.normals.resize(n, [0.0; 3]);
    let x = &m.positions;
    for t in &m.triangles {
        let (v1, v2, v3) = (x[t[0]], x[t[1]], x[t[2]]);
        let mut nn = cross(sub(v2, v1), sub(v3, v1));
        normalize(&mut nn);
        for &i in t {
            add_to(&mut m.normals[i], nn);
        }
    }
    for q in &m.quads {
        let (v1, v2, v3, v4) = (x[q[0]], x[q[1]], x[q[2]], x[q[3]]);
        let mut n1 = cross(sub(v2, v1), sub(v4, v1));
        let mut n2 = cross(sub(v3, v2), sub(v1, v2));
        let mut n3 = cross(sub(v4, v3), sub(v2, v3));
        let mut n4 = cross(sub(v1, v4), sub(v3, v4));
        for nn in [&mut n1, &mut n2, &mut n3, &mut n4] {
            normalize(nn);
        }
        add_to(&mut m.normals[q[0]], n1);
        add_to(&mut m.normals[q[1]], n2);
        add_to(&mut m.normals[q[2]], n3);
        add_to(&mut m.normals[q[3]], n4);
    }
    for nn in &mut m.normals {
        normalize(nn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every mesh loader class (a `MeshLoader` component) lists the references the shared
    /// loading code reads, with the same types.
    #[test]
    fn mesh_loader_classes_list_the_shared_references() {
        for class in [&crate::gmsh::CLASS, &crate::obj::CLASS, &crate::vtk::CLASS, &crate::stl::CLASS, &crate::off::CLASS, &crate::string_mesh::CLASS]
        {
            for r in MESH_LOADER_READS {
                assert!(class.reads.iter().any(|o| o.name == r.name && o.type_name == r.type_name), "{} does not list {r:?}", class.name);
            }
            settee_core::factory::check_reads(class).unwrap();
        }
        let own = |class: &settee_core::ComponentClass| class.reads.len() - MESH_LOADER_READS.len();
        assert_eq!([own(&crate::obj::CLASS), own(&crate::stl::CLASS), own(&crate::string_mesh::CLASS)], [2, 2, 1]);
    }

    fn no_op() -> Processing {
        Processing {
            flip_normals: false,
            triangulate: false,
            create_subelements: true,
            only_attached_points: false,
            translation: [0.0; 3],
            rotation: [0.0; 3],
            scale: [1.0; 3],
            transformation: transform::identity(),
        }
    }

    #[test]
    fn tetrahedron_subelements_follow_sofa_order() {
        let mut m = LoadedMesh {
            positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            tetrahedra: vec![[0, 1, 2, 3]],
            triangles: vec![[1, 0, 2]],
            ..Default::default()
        };
        process(&mut m, &no_op()).unwrap();
        // the existing triangle stays first; (0,2,1) is the same set and is skipped
        assert_eq!(m.triangles, vec![[1, 0, 2], [0, 1, 3], [0, 3, 2], [1, 2, 3]]);
        // edges from the triangles: (t1,t2), (t2,t0), (t0,t1), first appearance kept as written
        assert_eq!(m.edges, vec![[0, 2], [2, 1], [1, 0], [1, 3], [3, 0], [3, 2]]);
        assert_eq!(m.normals.len(), 4);
    }

    #[test]
    fn hexahedron_gives_six_quads_and_twelve_edges() {
        let mut m = LoadedMesh { positions: vec![[0.0; 3]; 8], hexahedra: vec![[0, 1, 2, 3, 4, 5, 6, 7]], ..Default::default() };
        process(&mut m, &no_op()).unwrap();
        assert_eq!(m.quads[0], [0, 3, 2, 1]);
        assert_eq!(m.quads.len(), 6);
        assert_eq!(m.edges.len(), 12);
        assert_eq!(&m.edges[..4], &[[3, 2], [2, 1], [1, 0], [0, 3]]);
    }

    #[test]
    fn triangulate_flips_and_isolated_points_go() {
        let mut p = no_op();
        p.triangulate = true;
        p.flip_normals = true;
        p.create_subelements = false;
        p.only_attached_points = true;
        let mut m = LoadedMesh {
            positions: vec![[9.0; 3], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
            quads: vec![[1, 2, 3, 4]],
            ..Default::default()
        };
        process(&mut m, &p).unwrap();
        assert!(m.quads.is_empty());
        assert_eq!(m.triangles, vec![[2, 1, 0], [3, 2, 0]]);
        assert_eq!(m.positions.len(), 4);
        assert_eq!(m.positions[0], [0.0, 0.0, 0.0]);
        // flipped triangles: normals point to −z
        for n in &m.normals {
            assert!((n[2] + 1.0).abs() < 1e-15, "{n:?}");
        }
    }

    #[test]
    fn quad_corner_normals() {
        let mut m = LoadedMesh {
            positions: vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
            quads: vec![[0, 1, 2, 3]],
            ..Default::default()
        };
        process(&mut m, &Processing { create_subelements: false, ..no_op() }).unwrap();
        assert_eq!(m.normals, vec![[0.0, 0.0, 1.0]; 4]);
    }

    #[test]
    fn bad_indices_are_reported() {
        let mut m = LoadedMesh { positions: vec![[0.0; 3]; 2], edges: vec![[0, 5]], ..Default::default() };
        let e = process(&mut m, &no_op()).unwrap_err();
        assert!(e.contains("edges refer to point 5"), "{e}");
    }

    #[test]
    fn flat_lists_round_trip() {
        let v = vec![vec![1, 2, 3], vec![], vec![4, 5]];
        assert_eq!(unflatten(&flatten(&v)), v);
        let mut g = Vec::new();
        add_in_group(&mut g, 7);
        add_in_group(&mut g, 3);
        add_in_group(&mut g, 7);
        normalize_groups(&mut g);
        assert_eq!(groups_text(&g), "  -1 0 2   -1 2 1");
    }
}
