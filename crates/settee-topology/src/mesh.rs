//! Lower-dimensional element lists that SOFA's `MeshTopology` builds when they are not given,
//! in SOFA's exact orders (`MeshTopology::EdgeUpdate`, `TriangleUpdate`, `QuadUpdate`, and the
//! local element tables of `sofa/core/topology/Topology.cpp`).
//!
//! * **edges** (when empty): from the volume if the mesh has tetrahedra or hexahedra — each
//!   tetrahedron's 6 edges ([`EDGES_IN_TETRAHEDRON`]) then each hexahedron's 12 edges
//!   ([`EDGES_IN_HEXAHEDRON`]), stored **sorted** `(min, max)`, first appearance wins;
//!   otherwise from the surface — each triangle's edges `(t[j+1], t[j+2])` in their original
//!   orientation, then each quad's edges `(q[j+1], q[j+2])` (mod 4) stored sorted; duplicates
//!   are detected on the sorted pair.
//! * **triangles** (when empty): each tetrahedron's faces ([`TRIANGLES_IN_TETRAHEDRON`]),
//!   cyclically rotated so the smallest index comes first; a face is skipped when the same
//!   triangle with the **opposite** orientation was already stored (SOFA only looks that one
//!   up, so a face repeated with the same orientation is stored twice).
//! * **quads** (when empty): each hexahedron's faces ([`QUADS_IN_HEXAHEDRON`]), rotated so the
//!   smallest index comes first, skipped when already stored with either orientation.

use std::collections::HashSet;

/// Local vertex pairs of the 6 edges of a tetrahedron.
pub const EDGES_IN_TETRAHEDRON: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];
/// Local vertex pairs of the 12 edges of a hexahedron.
pub const EDGES_IN_HEXAHEDRON: [[usize; 2]; 12] = [[0, 1], [0, 3], [0, 4], [1, 2], [1, 5], [2, 3], [2, 6], [3, 7], [4, 5], [4, 7], [5, 6], [6, 7]];
/// Local vertices of the 4 faces of a tetrahedron (face `j` is opposite vertex `j`).
pub const TRIANGLES_IN_TETRAHEDRON: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [1, 3, 0], [0, 2, 1]];
/// Local vertices of the 6 faces of a hexahedron.
pub const QUADS_IN_HEXAHEDRON: [[usize; 4]; 6] = [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]];

#[inline]
fn sorted(a: usize, b: usize) -> [usize; 2] {
    if a < b {
        [a, b]
    } else {
        [b, a]
    }
}

/// Edges of a volume mesh: tetrahedra first, then hexahedra; sorted pairs, first appearance.
pub fn edges_from_volume(tetrahedra: &[[usize; 4]], hexahedra: &[[usize; 8]]) -> Vec<[usize; 2]> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut push = |a: usize, b: usize| {
        let e = sorted(a, b);
        if seen.insert(e) {
            out.push(e);
        }
    };
    for t in tetrahedra {
        for [i, j] in EDGES_IN_TETRAHEDRON {
            push(t[i], t[j]);
        }
    }
    for h in hexahedra {
        for [i, j] in EDGES_IN_HEXAHEDRON {
            push(h[i], h[j]);
        }
    }
    out
}

/// Edges of a surface mesh: triangle edges in their orientation, then quad edges sorted.
pub fn edges_from_surface(triangles: &[[usize; 3]], quads: &[[usize; 4]]) -> Vec<[usize; 2]> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for t in triangles {
        for j in 0..3 {
            let (a, b) = (t[(j + 1) % 3], t[(j + 2) % 3]);
            if seen.insert(sorted(a, b)) {
                out.push([a, b]);
            }
        }
    }
    for q in quads {
        for j in 0..4 {
            let e = sorted(q[(j + 1) % 4], q[(j + 2) % 4]);
            if seen.insert(e) {
                out.push(e);
            }
        }
    }
    out
}

/// Rotates `v` cyclically until its first entry is not greater than any other (SOFA's loop).
fn rotate_min_first<const K: usize>(mut v: [usize; K]) -> [usize; K] {
    // Terminates after at most K-1 rotations: the minimum reaches the front.
    while v[1..].iter().any(|&x| v[0] > x) {
        v.rotate_left(1);
    }
    v
}

/// Triangles of the faces of the tetrahedra (see the module documentation).
pub fn triangles_from_tetrahedra(tetrahedra: &[[usize; 4]]) -> Vec<[usize; 3]> {
    let mut stored: HashSet<[usize; 3]> = HashSet::new();
    let mut out = Vec::new();
    for t in tetrahedra {
        for f in TRIANGLES_IN_TETRAHEDRON {
            let v = rotate_min_first([t[f[0]], t[f[1]], t[f[2]]]);
            if !stored.contains(&[v[0], v[2], v[1]]) {
                stored.insert(v);
                out.push(v);
            }
        }
    }
    out
}

/// Quads of the faces of the hexahedra (see the module documentation).
pub fn quads_from_hexahedra(hexahedra: &[[usize; 8]]) -> Vec<[usize; 4]> {
    let mut stored: HashSet<[usize; 4]> = HashSet::new();
    let mut out = Vec::new();
    for h in hexahedra {
        for f in QUADS_IN_HEXAHEDRON {
            let v = rotate_min_first([h[f[0]], h[f[1]], h[f[2]], h[f[3]]]);
            let reversed = [v[0], v[3], v[2], v[1]];
            if !stored.contains(&reversed) {
                stored.insert(reversed);
                stored.insert(v);
                out.push(v);
            }
        }
    }
    out
}

/// Which lists [`complete_lists`] built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DerivedLists {
    pub edges: bool,
    pub triangles: bool,
    pub quads: bool,
}

/// Fills the empty edge, triangle and quad lists of a mesh as SOFA's `MeshTopology` does.
/// Triangles and quads are derived first (they only depend on the volume); edges come from the
/// volume when there is one, else from the surface.
pub fn complete_lists(mesh: &mut settee_core::MeshData) -> DerivedLists {
    let mut d = DerivedLists::default();
    let has_volume = !mesh.tetrahedra.is_empty() || !mesh.hexahedra.is_empty();
    let has_surface = !mesh.triangles.is_empty() || !mesh.quads.is_empty();
    if mesh.edges.is_empty() {
        if has_volume {
            mesh.edges = edges_from_volume(&mesh.tetrahedra, &mesh.hexahedra);
        } else if has_surface {
            mesh.edges = edges_from_surface(&mesh.triangles, &mesh.quads);
        }
        d.edges = true;
    }
    if mesh.triangles.is_empty() {
        mesh.triangles = triangles_from_tetrahedra(&mesh.tetrahedra);
        d.triangles = true;
    }
    if mesh.quads.is_empty() {
        mesh.quads = quads_from_hexahedra(&mesh.hexahedra);
        d.quads = true;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_tetrahedra_sharing_a_face() {
        let tets = [[0, 1, 2, 3], [1, 2, 3, 4]];
        let e = edges_from_volume(&tets, &[]);
        assert_eq!(e, vec![[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3], [1, 4], [2, 4], [3, 4]]);
        let t = triangles_from_tetrahedra(&tets);
        // tet 0: (1,2,3) (0,3,2) (1,3,0)->(0,1,3) (0,2,1)
        assert_eq!(&t[..4], &[[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]]);
        // tet 1 faces: (2,3,4) (1,4,3) (2,4,1)->(1,2,4) (1,3,2)->(1,3,2) is (1,2,3) reversed: skipped
        assert_eq!(&t[4..], &[[2, 3, 4], [1, 4, 3], [1, 2, 4]]);
    }

    #[test]
    fn unit_hexahedron() {
        let h = [[0, 1, 2, 3, 4, 5, 6, 7]];
        let e = edges_from_volume(&[], &h);
        assert_eq!(e.len(), 12);
        assert_eq!(e[1], [0, 3]);
        assert_eq!(e[7], [3, 7]);
        let q = quads_from_hexahedra(&h);
        assert_eq!(q, vec![[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [0, 4, 7, 3]]);
        // a second hexahedron stacked on top shares face 4 5 6 7 (seen reversed from below)
        let h2 = [[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 6, 7, 8, 9, 10, 11]];
        let q2 = quads_from_hexahedra(&h2);
        assert_eq!(q2.len(), 11);
        assert_eq!(q2[6], [8, 9, 10, 11]);
    }

    #[test]
    fn surface_edges_keep_triangle_orientation_and_sort_quads() {
        let e = edges_from_surface(&[[2, 1, 0]], &[[3, 2, 0, 4]]);
        assert_eq!(e, vec![[1, 0], [0, 2], [2, 1], [0, 4], [3, 4], [2, 3]]);
    }
}
