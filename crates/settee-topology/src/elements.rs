//! Element-order algorithms of SOFA's dynamic topology containers and topological mappings
//! (`Sofa/Component/Topology/Container/Dynamic`, `Sofa/Component/Topology/Mapping`), as pure
//! functions over index lists.
//!
//! * Derived lists of the `*SetTopologyContainer`s reuse [`crate::mesh`] where SOFA's orders are
//!   the same as `MeshTopology`'s; the one difference is [`triangles_from_tetrahedra_unique`]
//!   (a face repeated with the same orientation is skipped, not stored twice).
//! * Adjacency is found as SOFA finds it: a tetrahedron face is the triangle having the same
//!   three vertices (`getTriangleIndex`: exactly one such triangle, else no match), a hexahedron
//!   face the quad having the same four vertices, a triangle side the **first** edge (lowest
//!   index) joining the two vertices in either orientation.
//! * Boundary extraction (`Tetra2Triangle`, `Hexa2Quad`, `Triangle2Edge`) keeps the input order
//!   and orientation of the elements having exactly one adjacent higher element.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use crate::mesh::{EDGES_IN_TETRAHEDRON, QUADS_IN_HEXAHEDRON, TRIANGLES_IN_TETRAHEDRON};

/// Corner pairs of a hexahedron along x, y and z (`sofa::geometry::Hexahedron::{x,y,z}Edges`),
/// exchanged by the `swapping` option of the hexahedron → tetrahedra splits.
pub const HEXA_X_EDGES: [[usize; 2]; 4] = [[0, 1], [4, 5], [3, 2], [7, 6]];
pub const HEXA_Y_EDGES: [[usize; 2]; 4] = [[4, 7], [5, 6], [1, 2], [0, 3]];
pub const HEXA_Z_EDGES: [[usize; 2]; 4] = [[4, 0], [5, 1], [6, 2], [7, 3]];

/// Six tetrahedra of a hexahedron (local corners), used when the number of swaps is even.
pub const HEXA_TO_TETRA: [[usize; 4]; 6] = [[0, 5, 1, 6], [0, 1, 3, 6], [1, 3, 6, 2], [6, 3, 0, 7], [6, 7, 0, 5], [7, 5, 4, 0]];
/// The same tetrahedra with two vertices exchanged, used when the number of swaps is odd (a
/// mirrored cell), so that every tetrahedron keeps the orientation of the unswapped split.
pub const HEXA_TO_TETRA_SWAPPED: [[usize; 4]; 6] = [[0, 5, 6, 1], [0, 1, 6, 3], [1, 3, 2, 6], [6, 3, 7, 0], [6, 7, 5, 0], [7, 5, 0, 4]];

fn sorted<const K: usize>(mut v: [usize; K]) -> [usize; K] {
    v.sort_unstable();
    v
}

/// Rotates `v` cyclically until its first entry is not greater than any other.
fn rotate_min_first<const K: usize>(mut v: [usize; K]) -> [usize; K] {
    while v[1..].iter().any(|&x| v[0] > x) {
        v.rotate_left(1);
    }
    v
}

/// A tetrahedron face found again with the same orientation: `(tetrahedron, min-rotated face)`.
pub type RepeatedFace = (usize, [usize; 3]);

/// Triangles of the faces of the tetrahedra as `TetrahedronSetTopologyContainer` builds them
/// (`createTriangleSetArray`): faces `(1,2,3) (0,3,2) (1,3,0) (0,2,1)` of each tetrahedron,
/// min-rotated, skipped when already stored with either orientation. The second list holds the
/// `(tetrahedron, face)` pairs found again with the **same** orientation (SOFA reports them as
/// "Duplicate triangle" errors: an inverted or repeated tetrahedron).
pub fn triangles_from_tetrahedra_unique(tetrahedra: &[[usize; 4]]) -> (Vec<[usize; 3]>, Vec<RepeatedFace>) {
    let mut stored: HashSet<[usize; 3]> = HashSet::new();
    let mut out = Vec::new();
    let mut duplicates = Vec::new();
    for (i, t) in tetrahedra.iter().enumerate() {
        for f in TRIANGLES_IN_TETRAHEDRON {
            let v = rotate_min_first([t[f[0]], t[f[1]], t[f[2]]]);
            if stored.contains(&[v[0], v[2], v[1]]) {
                continue;
            }
            if stored.insert(v) {
                out.push(v);
            } else {
                duplicates.push((i, v));
            }
        }
    }
    (out, duplicates)
}

/// Map from sorted vertex set to the element having it; `None` when several elements share it.
fn unique_index<const K: usize>(list: &[[usize; K]]) -> HashMap<[usize; K], Option<usize>> {
    let mut m: HashMap<[usize; K], Option<usize>> = HashMap::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        match m.entry(sorted(*e)) {
            Entry::Vacant(v) => {
                v.insert(Some(i));
            }
            Entry::Occupied(mut o) => {
                o.insert(None);
            }
        }
    }
    m
}

/// Map from sorted vertex pair to the first edge joining them.
fn first_edge_index(edges: &[[usize; 2]]) -> HashMap<[usize; 2], usize> {
    let mut m = HashMap::with_capacity(edges.len());
    for (i, e) in edges.iter().enumerate() {
        m.entry(sorted(*e)).or_insert(i);
    }
    m
}

/// An element side that the lower-dimensional list does not contain (exactly once for faces).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingSide {
    /// Index of the element (tetrahedron, hexahedron or triangle).
    pub element: usize,
    /// Local index of the side.
    pub side: usize,
    pub vertices: Vec<usize>,
    /// True when several lower elements have these vertices (no unique match).
    pub ambiguous: bool,
}

impl std::fmt::Display for MissingSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v: Vec<String> = self.vertices.iter().map(|x| x.to_string()).collect();
        if self.ambiguous {
            write!(f, "side {} [{}] of element {} matches several elements", self.side, v.join(" "), self.element)
        } else {
            write!(f, "side {} [{}] of element {} is missing", self.side, v.join(" "), self.element)
        }
    }
}

/// Number of tetrahedra around each triangle (`getTetrahedraAroundTriangle(i).size()`): face `j`
/// of a tetrahedron is the triangle with the vertices `t[j+1], t[j+2], t[j+3]` (mod 4).
pub fn tetrahedra_around_triangles(triangles: &[[usize; 3]], tetrahedra: &[[usize; 4]]) -> Result<Vec<usize>, MissingSide> {
    let index = unique_index(triangles);
    let mut count = vec![0; triangles.len()];
    for (i, t) in tetrahedra.iter().enumerate() {
        for j in 0..4 {
            let face = [t[(j + 1) % 4], t[(j + 2) % 4], t[(j + 3) % 4]];
            match index.get(&sorted(face)) {
                Some(Some(k)) => count[*k] += 1,
                other => return Err(MissingSide { element: i, side: j, vertices: face.to_vec(), ambiguous: other.is_some() }),
            }
        }
    }
    Ok(count)
}

/// Number of hexahedra around each quad (`getHexahedraAroundQuad(i).size()`); the faces of a
/// hexahedron are [`QUADS_IN_HEXAHEDRON`].
pub fn hexahedra_around_quads(quads: &[[usize; 4]], hexahedra: &[[usize; 8]]) -> Result<Vec<usize>, MissingSide> {
    let index = unique_index(quads);
    let mut count = vec![0; quads.len()];
    for (i, h) in hexahedra.iter().enumerate() {
        for (j, f) in QUADS_IN_HEXAHEDRON.iter().enumerate() {
            let face = [h[f[0]], h[f[1]], h[f[2]], h[f[3]]];
            match index.get(&sorted(face)) {
                Some(Some(k)) => count[*k] += 1,
                other => return Err(MissingSide { element: i, side: j, vertices: face.to_vec(), ambiguous: other.is_some() }),
            }
        }
    }
    Ok(count)
}

/// Number of triangles around each edge (`getTrianglesAroundEdge(i).size()`): side `j` of a
/// triangle is the first edge joining `t[j+1]` and `t[j+2]` (mod 3).
pub fn triangles_around_edges(edges: &[[usize; 2]], triangles: &[[usize; 3]]) -> Result<Vec<usize>, MissingSide> {
    let index = first_edge_index(edges);
    let mut count = vec![0; edges.len()];
    for (i, t) in triangles.iter().enumerate() {
        for j in 0..3 {
            let side = [t[(j + 1) % 3], t[(j + 2) % 3]];
            match index.get(&sorted(side)) {
                Some(k) => count[*k] += 1,
                None => return Err(MissingSide { element: i, side: j, vertices: side.to_vec(), ambiguous: false }),
            }
        }
    }
    Ok(count)
}

/// The first edge of a tetrahedron (local order [`EDGES_IN_TETRAHEDRON`]) missing from `edges`.
pub fn missing_tetrahedron_edge(edges: &[[usize; 2]], tetrahedra: &[[usize; 4]]) -> Option<MissingSide> {
    let index = first_edge_index(edges);
    for (i, t) in tetrahedra.iter().enumerate() {
        for (j, [a, b]) in EDGES_IN_TETRAHEDRON.iter().enumerate() {
            if !index.contains_key(&sorted([t[*a], t[*b]])) {
                return Some(MissingSide { element: i, side: j, vertices: vec![t[*a], t[*b]], ambiguous: false });
            }
        }
    }
    None
}

/// Indices of the elements counted exactly once.
pub fn on_border(counts: &[usize]) -> Vec<usize> {
    counts.iter().enumerate().filter(|(_, &c)| c == 1).map(|(i, _)| i).collect()
}

/// `Hexa2TetraTopologicalMapping`: six tetrahedra per hexahedron, in hexahedron order.
///
/// With `swapping`, the corners of hexahedron `i` are first exchanged along x when `i % nx` is
/// even, along y when `(i / nx) % ny` is odd and along z when `i / (nx·ny)` is odd (in that
/// order; `nx, ny` = cells per axis of a grid input, else 2 and 1), and an odd number of
/// exchanges selects [`HEXA_TO_TETRA_SWAPPED`].
pub fn hexahedra_to_tetrahedra(hexahedra: &[[usize; 8]], swapping: bool, nx: usize, ny: usize) -> Vec<[usize; 4]> {
    let (nx, ny) = (nx.max(1), ny.max(1));
    let mut out = Vec::with_capacity(hexahedra.len() * 6);
    for (i, h) in hexahedra.iter().enumerate() {
        let mut c = *h;
        let mut swapped = false;
        if swapping {
            let mut exchange = |pairs: &[[usize; 2]; 4]| {
                for [a, b] in pairs {
                    c.swap(*a, *b);
                }
                swapped = !swapped;
            };
            if (i % nx) % 2 == 0 {
                exchange(&HEXA_X_EDGES);
            }
            if (i / nx) % ny % 2 == 1 {
                exchange(&HEXA_Y_EDGES);
            }
            if (i / (nx * ny)) % 2 == 1 {
                exchange(&HEXA_Z_EDGES);
            }
        }
        let pattern = if swapped { &HEXA_TO_TETRA_SWAPPED } else { &HEXA_TO_TETRA };
        out.extend(pattern.iter().map(|p| [c[p[0]], c[p[1]], c[p[2]], c[p[3]]]));
    }
    out
}

/// `Quad2TriangleTopologicalMapping`: two triangles per quad, in quad order. With `swapping`,
/// quad `i` with `(i % scale) XOR (i / scale)` odd gives `(q0,q1,q3), (q2,q3,q1)`; otherwise
/// `(q1,q2,q0), (q3,q0,q2)`. `scale` is the number of cells along x of a grid input (along y if
/// that is 0), else 2.
pub fn quads_to_triangles(quads: &[[usize; 4]], swapping: bool, scale: usize) -> Vec<[usize; 3]> {
    let scale = scale.max(1);
    let mut out = Vec::with_capacity(quads.len() * 2);
    for (i, q) in quads.iter().enumerate() {
        if swapping && ((i % scale) ^ (i / scale)) & 1 == 1 {
            out.push([q[0], q[1], q[3]]);
            out.push([q[2], q[3], q[1]]);
        } else {
            out.push([q[1], q[2], q[0]]);
            out.push([q[3], q[0], q[2]]);
        }
    }
    out
}

/// Largest index used by a list, plus one (0 for an empty list).
pub fn count_points<const K: usize>(list: &[[usize; K]]) -> usize {
    list.iter().flatten().max().map_or(0, |m| m + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid;

    #[test]
    fn unique_tetrahedron_faces_skip_same_orientation_repeats() {
        // the same tetrahedron twice: MeshTopology would store its faces twice, the set container
        // stores them once and reports the repeats
        let (t, dup) = triangles_from_tetrahedra_unique(&[[0, 1, 2, 3], [0, 1, 2, 3]]);
        assert_eq!(t, vec![[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]]);
        assert_eq!(dup.len(), 4);
        assert_eq!(dup[0], (1, [1, 2, 3]));
        // two tetrahedra sharing face (1,2,3) with opposite orientations
        let (t, dup) = triangles_from_tetrahedra_unique(&[[0, 1, 2, 3], [1, 2, 3, 4]]);
        assert_eq!(t, vec![[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1], [2, 3, 4], [1, 4, 3], [1, 2, 4]]);
        assert!(dup.is_empty());
    }

    #[test]
    fn adjacency_counts() {
        let tets = [[0, 1, 2, 3], [1, 2, 3, 4]];
        let (tris, _) = triangles_from_tetrahedra_unique(&tets);
        let c = tetrahedra_around_triangles(&tris, &tets).unwrap();
        assert_eq!(c, vec![2, 1, 1, 1, 1, 1, 1]);
        assert_eq!(on_border(&c), vec![1, 2, 3, 4, 5, 6]);
        // a face absent from the list
        let e = tetrahedra_around_triangles(&tris[1..], &tets).unwrap_err();
        assert_eq!((e.element, e.side, e.ambiguous), (0, 0, false));
        // a face present twice
        let mut twice = tris.clone();
        twice.push([3, 2, 1]);
        assert!(tetrahedra_around_triangles(&twice, &tets).unwrap_err().ambiguous);

        let edges = [[0, 1], [1, 2], [2, 0], [1, 3], [3, 2], [2, 1]];
        let c = triangles_around_edges(&edges, &[[0, 1, 2], [2, 1, 3]]).unwrap();
        // the repeated edge (2,1) is never used: sides take the first match
        assert_eq!(c, vec![1, 2, 1, 1, 1, 0]);
        assert!(triangles_around_edges(&edges[..3], &[[0, 1, 2], [2, 1, 3]]).is_err());

        let hexa = grid::hexahedra([3, 2, 2]);
        let quads = crate::mesh::quads_from_hexahedra(&hexa);
        let c = hexahedra_around_quads(&quads, &hexa).unwrap();
        assert_eq!(quads.len(), 11);
        assert_eq!(c.iter().filter(|&&k| k == 2).count(), 1);
        assert_eq!(on_border(&c).len(), 10);
    }

    #[test]
    fn quad_split_alternates_in_a_checkerboard() {
        let q = [[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]];
        let t = quads_to_triangles(&q, true, 2);
        assert_eq!(t[..2], [[1, 4, 0], [3, 0, 4]]);
        assert_eq!(t[2..4], [[1, 2, 4], [5, 4, 2]]);
        assert_eq!(t[4..6], [[3, 4, 6], [7, 6, 4]]);
        assert_eq!(t[6..], [[5, 8, 4], [7, 4, 8]]);
        let t = quads_to_triangles(&q, false, 2);
        assert_eq!(t[2..4], [[2, 5, 1], [4, 1, 5]]);
    }
}
