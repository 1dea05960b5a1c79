//! Mesh data shared by topology containers and the components that read them.

/// The elements of a mesh topology, in the container's order (iterative solvers and element
/// loops depend on SOFA's exact orderings).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    pub points: Vec<[f64; 3]>,
    pub edges: Vec<[usize; 2]>,
    pub triangles: Vec<[usize; 3]>,
    pub quads: Vec<[usize; 4]>,
    pub tetrahedra: Vec<[usize; 4]>,
    pub hexahedra: Vec<[usize; 8]>,
}

impl MeshData {
    pub fn nb_points(&self) -> usize {
        self.points.len()
    }
}

/// Groups a flat index list into fixed-size tuples (a trailing partial tuple is dropped).
pub fn group<const K: usize>(flat: &[usize]) -> Vec<[usize; K]> {
    flat.chunks_exact(K)
        .map(|c| {
            let mut a = [0; K];
            a.copy_from_slice(c);
            a
        })
        .collect()
}

/// Groups flat reals into 3D points; 1D and 2D inputs are padded with zeros.
pub fn points_from_flat(flat: &[f64], arity: usize) -> Vec<[f64; 3]> {
    let k = arity.max(1);
    flat.chunks_exact(k).map(|c| [c[0], c.get(1).copied().unwrap_or(0.0), c.get(2).copied().unwrap_or(0.0)]).collect()
}

/// Cross-element lists of a mesh (SOFA's topology "shells"), built in SOFA's orders: the
/// `…_around_vertex` lists in increasing element order, `triangles_around_edge` with the triangle
/// that traverses the edge in its stored direction at the front, `edges_in_triangle[t][j]` the
/// edge opposite vertex `j` (MeshTopology and the set containers share these rules; see the
/// forcefields-mappings spec §3). Collision models read them for triangle ownership flags,
/// self-collision pruning and the local-minimum-distance filters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Adjacency {
    pub edges_around_vertex: Vec<Vec<usize>>,
    pub triangles_around_vertex: Vec<Vec<usize>>,
    pub quads_around_vertex: Vec<Vec<usize>>,
    pub triangles_around_edge: Vec<Vec<usize>>,
    /// Per triangle, the index of the edge opposite each vertex (`usize::MAX` when the mesh has
    /// no such edge).
    pub edges_in_triangle: Vec<[usize; 3]>,
}

impl Adjacency {
    /// Builds the lists of `mesh` for `nb_points` vertices (at least the mesh's own point count
    /// and every index its elements use).
    pub fn build(mesh: &MeshData, nb_points: usize) -> Adjacency {
        let used =
            mesh.edges.iter().flatten().chain(mesh.triangles.iter().flatten()).chain(mesh.quads.iter().flatten()).map(|&i| i + 1).max().unwrap_or(0);
        let n = nb_points.max(mesh.points.len()).max(used);
        let mut a = Adjacency {
            edges_around_vertex: vec![Vec::new(); n],
            triangles_around_vertex: vec![Vec::new(); n],
            quads_around_vertex: vec![Vec::new(); n],
            triangles_around_edge: vec![Vec::new(); mesh.edges.len()],
            edges_in_triangle: Vec::with_capacity(mesh.triangles.len()),
        };
        let mut edge_of: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::with_capacity(mesh.edges.len());
        for (e, &[p, q]) in mesh.edges.iter().enumerate() {
            a.edges_around_vertex[p].push(e);
            if q != p {
                a.edges_around_vertex[q].push(e);
            }
            edge_of.entry((p.min(q), p.max(q))).or_insert(e);
        }
        for (t, tri) in mesh.triangles.iter().enumerate() {
            for (j, &v) in tri.iter().enumerate() {
                if !tri[..j].contains(&v) {
                    a.triangles_around_vertex[v].push(t);
                }
            }
            let mut in_tri = [usize::MAX; 3];
            for j in 0..3 {
                let (p, q) = (tri[(j + 1) % 3], tri[(j + 2) % 3]);
                if let Some(&e) = edge_of.get(&(p.min(q), p.max(q))) {
                    in_tri[j] = e;
                    if mesh.edges[e][0] == p {
                        a.triangles_around_edge[e].insert(0, t);
                    } else {
                        a.triangles_around_edge[e].push(t);
                    }
                }
            }
            a.edges_in_triangle.push(in_tri);
        }
        for (q, quad) in mesh.quads.iter().enumerate() {
            for (j, &v) in quad.iter().enumerate() {
                if !quad[..j].contains(&v) {
                    a.quads_around_vertex[v].push(q);
                }
            }
        }
        a
    }
}

#[cfg(test)]
mod adjacency_tests {
    use super::*;

    #[test]
    fn shells_follow_sofa_orders() {
        // Two triangles sharing edge (1,2): triangle 0 traverses it as 1→2, triangle 1 as 2→1.
        let mesh = MeshData {
            points: vec![[0.0; 3]; 4],
            edges: vec![[1, 2], [2, 0], [0, 1], [1, 3], [3, 2]],
            triangles: vec![[0, 1, 2], [2, 1, 3]],
            ..Default::default()
        };
        let a = Adjacency::build(&mesh, 4);
        assert_eq!(a.edges_in_triangle, vec![[0, 1, 2], [3, 4, 0]]);
        // Edge 0 is stored 1→2: triangle 0 (which has 1→2) goes in front even though triangle 1
        // was met later and pushed to the back.
        assert_eq!(a.triangles_around_edge[0], vec![0, 1]);
        assert_eq!(a.triangles_around_vertex[2], vec![0, 1]);
        assert_eq!(a.edges_around_vertex[2], vec![0, 1, 4]);
        assert_eq!(a.triangles_around_vertex[3], vec![1]);
    }

    #[test]
    fn missing_edges_are_marked() {
        let mesh = MeshData { triangles: vec![[0, 1, 2]], ..Default::default() };
        let a = Adjacency::build(&mesh, 0);
        assert_eq!(a.edges_in_triangle, vec![[usize::MAX; 3]]);
        assert_eq!(a.triangles_around_vertex.len(), 3);
    }
}

// ----- topological changes, as data (their rules: `crate::topology_change`) -----------------

/// The element types, in SOFA's order of events (points first, then edges, …).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementKind {
    #[default]
    Point,
    Edge,
    Triangle,
    Quad,
    Tetrahedron,
    Hexahedron,
}

impl ElementKind {
    pub const ALL: [ElementKind; 6] =
        [ElementKind::Point, ElementKind::Edge, ElementKind::Triangle, ElementKind::Quad, ElementKind::Tetrahedron, ElementKind::Hexahedron];

    /// Vertices per element.
    pub fn arity(self) -> usize {
        match self {
            ElementKind::Point => 1,
            ElementKind::Edge => 2,
            ElementKind::Triangle => 3,
            ElementKind::Quad | ElementKind::Tetrahedron => 4,
            ElementKind::Hexahedron => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ElementKind::Point => "point",
            ElementKind::Edge => "edge",
            ElementKind::Triangle => "triangle",
            ElementKind::Quad => "quad",
            ElementKind::Tetrahedron => "tetrahedron",
            ElementKind::Hexahedron => "hexahedron",
        }
    }
}

/// One event of a container's change log.
#[derive(Clone, Debug, PartialEq)]
pub enum TopologyChange {
    /// `count` elements appended after the existing ones. New element `k` may be described as
    /// a weighted combination of existing elements (`ancestors[k]` with `coefs[k]`; both empty,
    /// or shorter than `count`, for elements without ancestors): per-element data of the new
    /// element is interpolated from its ancestors'. `elements` holds the new elements' vertices
    /// (empty for points, and for holders that only count).
    Added { kind: ElementKind, count: usize, elements: Vec<Vec<usize>>, ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>> },
    /// Elements removed one after the other, in the order given, each by swap-with-last.
    /// `elements` holds each removed element's vertices as they were when it was removed
    /// (empty for points): a holder that subtracts an element's contribution (a lumped mass,
    /// springs on its edges) needs them, and the container no longer has them.
    Removed { kind: ElementKind, indices: Vec<usize>, elements: Vec<Vec<usize>> },
    /// Elements renumbered: new element `i` is old element `old_of_new[i]` (a permutation).
    Renumbered { kind: ElementKind, old_of_new: Vec<usize> },
}

impl TopologyChange {
    pub fn kind(&self) -> ElementKind {
        match self {
            TopologyChange::Added { kind, .. } | TopologyChange::Removed { kind, .. } | TopologyChange::Renumbered { kind, .. } => *kind,
        }
    }
}

/// Why a change cannot be applied: it names elements that do not exist.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeError(pub String);

impl std::fmt::Display for ChangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a component did with a change of the topology it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// Its per-point and per-element data now match the changed topology.
    Followed,
    /// It holds nothing that depends on the topology.
    NotConcerned,
    /// It does not know how to follow (the default): the step stops with a positioned error
    /// if the component holds per-point or per-element data (force fields, masses, mappings,
    /// projective constraints, collision models, engines).
    Unsupported,
}
