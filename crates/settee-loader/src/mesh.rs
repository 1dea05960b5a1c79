//! The mesh buffers every mesh loader fills, their Data (SOFA's `MeshLoader` base), and the
//! processing a loader applies at init: transform, sub-element creation, removal of isolated
//! points and vertex normals.

use std::collections::{BTreeSet, HashSet};

use settee_core::data::DataSet;
use settee_core::data_ref::{self, DataRef};

use crate::transform;
use settee_core::math::{cross, sub};

/// The `filename` Data of every file loader (SOFA's `BaseLoader`).
#[settee_core::data_group(data = {
    /// file to load (resolved against the scene directory, then the data path)
    filename: FileName,
})]
pub struct FileData;

/// Data of SOFA's `MeshLoader`, shared by every mesh loader.
///
/// Representation notes: `polylines` and `polygons` (lists of variable-length lists) are stored
/// flat, each element written as its vertex count followed by its vertices (VTK's cell layout);
/// the `*Groups` lists are text, each group printed as SOFA prints a `PrimitiveGroup`
/// (`groupName materialName materialId first count`).
#[settee_core::data_group(data = {
    /// vertices of the mesh loaded
    position: RealTuples(3),
    /// polylines of the mesh loaded (flat: vertex count, then the vertices, for each polyline)
    polylines: Indices,
    /// edges of the mesh loaded
    edges: IndexTuples(2),
    /// triangles of the mesh loaded
    triangles: IndexTuples(3),
    /// quads of the mesh loaded
    quads: IndexTuples(4),
    /// polygons of the mesh loaded (flat: vertex count, then the vertices, for each polygon)
    polygons: Indices,
    /// high order edge points of the mesh loaded (point, edge, 1, 1)
    highOrderEdgePositions: IndexTuples(4),
    /// high order triangle points of the mesh loaded
    highOrderTrianglePositions: IndexTuples(5),
    /// high order quad points of the mesh loaded
    highOrderQuadPositions: IndexTuples(6),
    /// tetrahedra of the mesh loaded
    #[alias("tetras")]
    tetrahedra: IndexTuples(4),
    /// hexahedra of the mesh loaded
    #[alias("hexas")]
    hexahedra: IndexTuples(8),
    /// prisms of the mesh loaded
    #[alias("pentas", "pentahedra")]
    prisms: IndexTuples(6),
    /// high order tetrahedron points of the mesh loaded
    highOrderTetrahedronPositions: IndexTuples(6),
    /// high order hexahedron points of the mesh loaded
    highOrderHexahedronPositions: IndexTuples(8),
    /// pyramids of the mesh loaded
    pyramids: IndexTuples(5),
    /// vertex normals (read from the file, else computed at init from triangles and quads)
    normals: RealTuples(3),
    /// groups of edges
    edgesGroups: Str,
    /// groups of triangles
    trianglesGroups: Str,
    /// groups of quads
    quadsGroups: Str,
    /// groups of polygons
    polygonsGroups: Str,
    /// groups of tetrahedra
    tetrahedraGroups: Str,
    /// groups of hexahedra
    hexahedraGroups: Str,
    /// groups of prisms
    #[alias("pentahedraGroups")]
    prismsGroups: Str,
    /// groups of pyramids
    pyramidsGroups: Str,
    /// reverse the vertex order of the triangles and quads read
    flipNormals: Bool = "false",
    /// divide all quads (and polygons) into triangles
    triangulate: Bool = "false",
    /// add the missing boundary elements (faces of volumes, edges of faces); MeshGmshLoader: true unless set
    createSubelements: Bool = "false",
    /// only keep the points used by an element (renumbered in increasing order)
    onlyAttachedPoints: Bool = "false",
    /// translation of the points
    translation: Fixed(3) = "0 0 0",
    /// rotation of the points, Euler angles in degrees (x applied first, then y, then z)
    rotation: Fixed(3) = "0 0 0",
    /// scale of the points in 3 dimensions (attribute `scale="s"` multiplies it by s)
    scale3d: Fixed(3) = "1 1 1",
    /// 4×4 homogeneous matrix (row-major) applied to the points; when not the identity it replaces translation, rotation and scale3d
    transformation: Fixed(16) = "1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1",
})]
pub struct MeshLoaderData;

/// Mesh-loader Data that `src=` never links (SOFA disables their auto-link); the declaration of
/// [`crate::MeshLoader`] lists the same names.
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

/// A loader-specific output: a Data of the loader's class and the value it receives.
#[derive(Clone)]
pub enum Extra {
    Reals(DataRef<data_ref::Reals>, Vec<f64>),
    Indices(DataRef<data_ref::Indices>, Vec<usize>),
    Text(DataRef<data_ref::Text>, String),
    Words(DataRef<data_ref::Words>, Vec<String>),
}

impl Extra {
    /// The name of the Data it goes to.
    pub fn name(&self) -> &'static str {
        match self {
            Extra::Reals(r, _) => r.name(),
            Extra::Indices(r, _) => r.name(),
            Extra::Text(r, _) => r.name(),
            Extra::Words(r, _) => r.name(),
        }
    }

    fn write(&self, d: &mut DataSet) {
        match self {
            Extra::Reals(r, v) => d.put(*r, v.clone()),
            Extra::Indices(r, v) => d.put(*r, v.clone()),
            Extra::Text(r, v) => d.put(*r, v.clone()),
            Extra::Words(r, v) => d.put(*r, v.clone()),
        }
    }
}

impl std::fmt::Debug for Extra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Extra::Reals(r, v) => write!(f, "{}: {v:?}", r.name()),
            Extra::Indices(r, v) => write!(f, "{}: {v:?}", r.name()),
            Extra::Text(r, v) => write!(f, "{}: {v:?}", r.name()),
            Extra::Words(r, v) => write!(f, "{}: {v:?}", r.name()),
        }
    }
}

impl PartialEq for Extra {
    fn eq(&self, o: &Extra) -> bool {
        match (self, o) {
            (Extra::Reals(a, x), Extra::Reals(b, y)) => a.name() == b.name() && x == y,
            (Extra::Indices(a, x), Extra::Indices(b, y)) => a.name() == b.name() && x == y,
            (Extra::Text(a, x), Extra::Text(b, y)) => a.name() == b.name() && x == y,
            (Extra::Words(a, x), Extra::Words(b, y)) => a.name() == b.name() && x == y,
            _ => false,
        }
    }
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
    pub extra: Vec<Extra>,
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
            positions: tuples_f(d.get(MeshLoaderData::POSITION)),
            polylines: unflatten(d.get(MeshLoaderData::POLYLINES)),
            edges: tuples(d.get(MeshLoaderData::EDGES)),
            triangles: tuples(d.get(MeshLoaderData::TRIANGLES)),
            quads: tuples(d.get(MeshLoaderData::QUADS)),
            polygons: unflatten(d.get(MeshLoaderData::POLYGONS)),
            high_order_edges: tuples(d.get(MeshLoaderData::HIGH_ORDER_EDGE_POSITIONS)),
            high_order_triangles: tuples(d.get(MeshLoaderData::HIGH_ORDER_TRIANGLE_POSITIONS)),
            high_order_quads: tuples(d.get(MeshLoaderData::HIGH_ORDER_QUAD_POSITIONS)),
            tetrahedra: tuples(d.get(MeshLoaderData::TETRAHEDRA)),
            hexahedra: tuples(d.get(MeshLoaderData::HEXAHEDRA)),
            prisms: tuples(d.get(MeshLoaderData::PRISMS)),
            pyramids: tuples(d.get(MeshLoaderData::PYRAMIDS)),
            high_order_tetrahedra: tuples(d.get(MeshLoaderData::HIGH_ORDER_TETRAHEDRON_POSITIONS)),
            high_order_hexahedra: tuples(d.get(MeshLoaderData::HIGH_ORDER_HEXAHEDRON_POSITIONS)),
            normals: tuples_f(d.get(MeshLoaderData::NORMALS)),
            ..LoadedMesh::default()
        }
    }

    /// Writes the mesh into the Data of a component. Groups are written only when the mesh has
    /// some or the Data is not given by the scene.
    pub fn write(&self, d: &mut DataSet) {
        type M = MeshLoaderData;
        d.put(M::POSITION, flat_f(&self.positions));
        d.put(M::POLYLINES, flatten(&self.polylines));
        d.put(M::EDGES, flat(&self.edges));
        d.put(M::TRIANGLES, flat(&self.triangles));
        d.put(M::QUADS, flat(&self.quads));
        d.put(M::POLYGONS, flatten(&self.polygons));
        d.put(M::HIGH_ORDER_EDGE_POSITIONS, flat(&self.high_order_edges));
        d.put(M::HIGH_ORDER_TRIANGLE_POSITIONS, flat(&self.high_order_triangles));
        d.put(M::HIGH_ORDER_QUAD_POSITIONS, flat(&self.high_order_quads));
        d.put(M::TETRAHEDRA, flat(&self.tetrahedra));
        d.put(M::HEXAHEDRA, flat(&self.hexahedra));
        d.put(M::PRISMS, flat(&self.prisms));
        d.put(M::PYRAMIDS, flat(&self.pyramids));
        d.put(M::HIGH_ORDER_TETRAHEDRON_POSITIONS, flat(&self.high_order_tetrahedra));
        d.put(M::HIGH_ORDER_HEXAHEDRON_POSITIONS, flat(&self.high_order_hexahedra));
        d.put(M::NORMALS, flat_f(&self.normals));
        let g = &self.groups;
        for (field, list) in [
            (M::EDGES_GROUPS, &g.edges),
            (M::TRIANGLES_GROUPS, &g.triangles),
            (M::QUADS_GROUPS, &g.quads),
            (M::POLYGONS_GROUPS, &g.polygons),
            (M::TETRAHEDRA_GROUPS, &g.tetrahedra),
            (M::HEXAHEDRA_GROUPS, &g.hexahedra),
            (M::PRISMS_GROUPS, &g.prisms),
            (M::PYRAMIDS_GROUPS, &g.pyramids),
        ] {
            if !list.is_empty() || !d.is_given(field) {
                d.put(field, groups_text(list));
            }
        }
        for e in &self.extra {
            e.write(d);
        }
    }
}

pub fn tuples<const K: usize>(v: &[usize]) -> Vec<[usize; K]> {
    settee_core::topology::group::<K>(v)
}

pub fn tuples_f(v: &[f64]) -> Vec<[f64; 3]> {
    v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

pub fn flat<const K: usize>(v: &[[usize; K]]) -> Vec<usize> {
    v.iter().flatten().copied().collect()
}

pub fn flat_f(v: &[[f64; 3]]) -> Vec<f64> {
    v.iter().flatten().copied().collect()
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
            flip_normals: d.get(MeshLoaderData::FLIP_NORMALS),
            triangulate: d.get(MeshLoaderData::TRIANGULATE),
            create_subelements: d.get(MeshLoaderData::CREATE_SUBELEMENTS),
            only_attached_points: d.get(MeshLoaderData::ONLY_ATTACHED_POINTS),
            translation: d.get(MeshLoaderData::TRANSLATION),
            rotation: d.get(MeshLoaderData::ROTATION),
            scale: d.get(MeshLoaderData::SCALE3D),
            transformation: transform::from_flat(d.get(MeshLoaderData::TRANSFORMATION)),
        }
    }
}

fn sorted<const K: usize>(mut e: [usize; K]) -> [usize; K] {
    e.sort_unstable();
    e
}

/// Appends the elements of `new` whose sorted vertex set is not in `set` yet (and records them).
/// The mid-node edges of a quadratic element: each local edge `local[j]` (a pair of corners of
/// `nodes`) not in `edge_set` yet is appended (sorted) to the edges, with its mid-node
/// `nodes[first_mid + j]` as a high-order edge.
pub(crate) fn add_mid_edges(m: &mut LoadedMesh, nodes: &[usize], local: &[[usize; 2]], first_mid: usize, edge_set: &mut HashSet<[usize; 2]>) {
    for (j, e) in local.iter().enumerate() {
        let (a, b) = (nodes[e[0]], nodes[e[1]]);
        let edge = [a.min(b), a.max(b)];
        if edge_set.insert(edge) {
            m.edges.push(edge);
            m.high_order_edges.push([nodes[j + first_mid], m.edges.len() - 1, 1, 1]);
        }
    }
}

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

    /// Every mesh loader class (a `MeshLoader` component) has the Data the shared loading code
    /// reads: the file loader's and SOFA's `MeshLoader` Data first, then its own; and the same
    /// preparse and Data that `src=` does not link.
    #[test]
    fn mesh_loader_classes_have_the_shared_data() {
        use settee_core::component::Declared;
        use settee_core::DataGroup;
        let names = |t: &[settee_core::DataDecl]| t.iter().map(|d| d.name).collect::<Vec<_>>();
        let classes = <crate::MeshLoader as Declared>::CLASSES;
        let class_names: Vec<&str> = classes.iter().map(|c| c.name).collect();
        assert_eq!(
            class_names,
            [
                "MeshGmshLoader",
                "MeshOBJLoader",
                "MeshVTKLoader",
                "MeshSTLLoader",
                "GIDMeshLoader",
                "MeshTrianLoader",
                "MeshOffLoader",
                "StringMeshCreator",
                "GridMeshCreator"
            ]
        );
        for class in classes {
            assert_eq!(names(class.data[0]), names(FileData::TABLE), "{}", class.name);
            assert_eq!(names(class.data[1]), names(MeshLoaderData::TABLE), "{}", class.name);
            assert!(class.plays(settee_core::role::LOADER), "{}", class.name);
            assert!(class.preparse.is_some(), "{}", class.name);
            assert_eq!(class.no_src_link, NO_SRC_LINK, "{}", class.name);
        }
        let own = |k: usize| classes[k].data[2..].iter().map(|t| t.len()).sum::<usize>();
        assert_eq!((0..9).map(own).collect::<Vec<_>>(), [0, 14, 0, 3, 0, 4, 0, 1, 2]);
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
