//! TetrahedronSet level (`TetrahedronSetTopologyModifier`, `TetrahedronSetTopologyContainer`).
//!
//! Shells of this level: `edges_in_tetrahedron` (edge `j` of a tetrahedron is the local pair
//! [`EDGES`]`[j]`), `triangles_in_tetrahedron` (face `j` is the face opposite vertex `j`,
//! [`FACES`]`[j]`), and the tetrahedra around each vertex, edge and triangle.
//!
//! SOFA's container builds all of them at init when it has tetrahedra; a shell still absent when
//! a tetrahedron operation starts is built then from the (unchanged) lists, which gives the same
//! arrays. The operations below then keep them as SOFA's modifier does.

use super::DynTopo;
use settee_core::topology_change::ElementKind;

/// Local vertex pairs of the 6 edges of a tetrahedron (SOFA's `edgesInTetrahedronArray`).
pub const EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];
/// Local vertices of the 4 faces of a tetrahedron, face `j` opposite vertex `j`, oriented
/// (SOFA's `trianglesOrientationInTetrahedronArray`).
pub const FACES: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [1, 3, 0], [0, 2, 1]];

/// SOFA's `removeTetrahedra(ids, removeIsolatedItems)` (`removeItems` uses true), with the
/// modifier's `removeIsolated` Data at its default (true).
pub fn remove_tetrahedra(t: &mut DynTopo, ids: Vec<usize>, remove_isolated: bool) {
    remove_tetrahedra_with(t, ids, remove_isolated, true);
}

/// `removeTetrahedra` with the modifier's `removeIsolated` Data (`remove_isolated_vertices`):
/// isolated vertices go only when both flags are set; isolated triangles and edges go with
/// `remove_isolated_items` alone.
pub fn remove_tetrahedra_with(t: &mut DynTopo, ids: Vec<usize>, remove_isolated_items: bool, remove_isolated_vertices: bool) {
    // SOFA drops out-of-range indices (with a warning) and sorts the rest in decreasing order.
    let ids = super::point::removal_order(ids, t.mesh.tetrahedra.len());
    ensure_built(t);
    t.log_removed(ElementKind::Tetrahedron, &ids);
    remove_process(t, &ids, remove_isolated_items, remove_isolated_vertices);
}

/// SOFA's `removeTetrahedraProcess`: `ids` sorted in decreasing order.
fn remove_process(t: &mut DynTopo, ids: &[usize], remove_isolated_items: bool, remove_isolated_vertices: bool) {
    if t.mesh.tetrahedra.is_empty() {
        return;
    }
    let rm_vertices = remove_isolated_items && remove_isolated_vertices;
    let rm_edges = remove_isolated_items && !t.mesh.edges.is_empty();
    let rm_triangles = remove_isolated_items && !t.mesh.triangles.is_empty();
    if rm_vertices && t.tetrahedra_around_vertex.is_none() {
        create_tetrahedra_around_vertex(t);
    }
    if rm_edges && t.tetrahedra_around_edge.is_none() {
        create_tetrahedra_around_edge(t);
    }
    if rm_triangles && t.tetrahedra_around_triangle.is_none() {
        create_tetrahedra_around_triangle(t);
    }

    let mut triangles_out = Vec::new();
    let mut edges_out = Vec::new();
    let mut vertices_out = Vec::new();
    let mut last = t.mesh.tetrahedra.len() - 1;
    for &i in ids {
        // Leave the shells of the removed tetrahedron's vertices, edges and faces (those left
        // empty are isolated); the last tetrahedron takes the removed one's place: rename it in
        // its shells.
        super::leave_shells(t.tetrahedra_around_vertex.as_mut(), Some(&t.mesh.tetrahedra), i, last, rm_vertices, &mut vertices_out);
        super::leave_shells(t.tetrahedra_around_edge.as_mut(), t.edges_in_tetrahedron.as_deref(), i, last, rm_edges, &mut edges_out);
        super::leave_shells(t.tetrahedra_around_triangle.as_mut(), t.triangles_in_tetrahedron.as_deref(), i, last, rm_triangles, &mut triangles_out);
        if let Some(tin) = t.triangles_in_tetrahedron.as_mut() {
            tin.swap_remove(i);
        }
        if let Some(ein) = t.edges_in_tetrahedron.as_mut() {
            ein.swap_remove(i);
        }
        t.mesh.tetrahedra.swap_remove(i);
        last = last.wrapping_sub(1);
    }

    // SOFA warns about both lists before removing either; the triangle removal leaves the
    // edges alone, so removing the triangles then the edges logs the same events.
    if !triangles_out.is_empty() {
        super::triangle::remove_triangles(t, triangles_out, false, false);
    }
    super::remove_isolated(t, edges_out, vertices_out);
}

/// SOFA's `addTetrahedra`: appends each tetrahedron, creating its missing faces (oriented as
/// [`FACES`]) and edges (as the local pairs [`EDGES`] give them) on the way, each with its own
/// event, then logs the tetrahedra.
pub fn add_tetrahedra(t: &mut DynTopo, tetrahedra: &[[usize; 4]]) {
    ensure_built(t);
    for &tet in tetrahedra {
        add_one(t, tet);
    }
    t.log_added(ElementKind::Tetrahedron, tetrahedra.iter().map(|x| x.to_vec()).collect(), tetrahedra.len(), Vec::new(), Vec::new());
}

/// SOFA's `addTetrahedronProcess`.
fn add_one(t: &mut DynTopo, tet: [usize; 4]) {
    let index = t.mesh.tetrahedra.len();
    // Indices beyond the points grow the point count (no point event, as in SOFA).
    for v in tet {
        if v + 1 > t.nb_points {
            t.nb_points = v + 1;
        }
    }
    super::attach(&mut t.tetrahedra_around_vertex, t.nb_points, &tet, index);

    super::reserve_row(&mut t.triangles_in_tetrahedron, index, usize::MAX);
    for (j, f) in FACES.iter().enumerate() {
        let face = [tet[f[0]], tet[f[1]], tet[f[2]]];
        let add = |t: &mut DynTopo| super::triangle::add_triangles(t, &[face], Vec::new(), Vec::new());
        let Some(tri) = super::find_or_add(t, |t| find_triangle(t, face), add) else { continue };
        super::record_item(t.triangles_in_tetrahedron.as_mut(), &mut t.tetrahedra_around_triangle, t.mesh.triangles.len(), index, j, tri);
    }

    super::reserve_row(&mut t.edges_in_tetrahedron, index, usize::MAX);
    for (j, p) in EDGES.iter().enumerate() {
        let (a, b) = (tet[p[0]], tet[p[1]]);
        let Some(edge) = super::find_or_add(t, |t| find_edge(t, a, b), |t| super::edge::add_edges(t, &[[a, b]])) else { continue };
        super::record_item(t.edges_in_tetrahedron.as_mut(), &mut t.tetrahedra_around_edge, t.mesh.edges.len(), index, j, edge);
    }

    t.mesh.tetrahedra.push(tet);
}

/// Tetrahedron-level part of a point removal (`ids` in decreasing order, the point count not
/// yet reduced): the last point takes each removed point's index in the tetrahedra around it.
pub(crate) fn on_points_removed(t: &mut DynTopo, ids: &[usize]) {
    if t.mesh.tetrahedra.is_empty() && t.tetrahedra_around_vertex.is_none() {
        return;
    }
    if t.tetrahedra_around_vertex.is_none() {
        create_tetrahedra_around_vertex(t);
    }
    let Some(shells) = t.tetrahedra_around_vertex.as_mut() else { return };
    let count = shells.len();
    super::rename_last_in_rows(shells, &mut t.mesh.tetrahedra, count, ids);
}

/// Tetrahedron-level part of an edge removal (`ids` in decreasing order, the edge list not yet
/// changed): the last edge takes each removed edge's index in the tetrahedra around it.
pub(crate) fn on_edges_removed(t: &mut DynTopo, ids: &[usize]) {
    let ensure = |t: &mut DynTopo| {
        if t.tetrahedra_around_edge.is_none() {
            create_tetrahedra_around_edge(t);
        }
    };
    super::rename_removed_items(t, ids, None, ensure, |t| (&mut t.tetrahedra_around_edge, &mut t.edges_in_tetrahedron));
}

/// Tetrahedron-level part of a triangle removal (`ids` in decreasing order, the triangle list
/// not yet changed): the last triangle takes each removed triangle's index in the tetrahedra
/// around it.
pub(crate) fn on_triangles_removed(t: &mut DynTopo, ids: &[usize]) {
    let ensure = |t: &mut DynTopo| {
        if t.tetrahedra_around_triangle.is_none() {
            create_tetrahedra_around_triangle(t);
        }
    };
    super::rename_removed_items(t, ids, None, ensure, |t| (&mut t.tetrahedra_around_triangle, &mut t.triangles_in_tetrahedron));
}

/// Tetrahedron-level part of a point addition (the points already counted).
pub(crate) fn on_points_added(t: &mut DynTopo, count: usize) {
    super::grow_shells(&mut t.tetrahedra_around_vertex, count, 0);
}

/// Tetrahedron-level part of an edge addition.
pub(crate) fn on_edges_added(t: &mut DynTopo, count: usize) {
    super::grow_shells(&mut t.tetrahedra_around_edge, count, 0);
}

/// Tetrahedron-level part of a triangle addition.
pub(crate) fn on_triangles_added(t: &mut DynTopo, count: usize) {
    super::grow_shells(&mut t.tetrahedra_around_triangle, count, 0);
}

// ----- shells (SOFA's create*Array of TetrahedronSetTopologyContainer) -----------------------

/// Builds the shells of this level that are not built yet (what SOFA's container builds at
/// init).
pub(crate) fn ensure_built(t: &mut DynTopo) {
    // SOFA's tetrahedron container builds the lower levels' shells first.
    super::triangle::init_shells(t);
    super::edge::init_shells(t);
    if t.tetrahedra_around_vertex.is_none() {
        create_tetrahedra_around_vertex(t);
    }
    if t.triangles_in_tetrahedron.is_none() {
        create_triangles_in_tetrahedron(t);
    }
    if t.edges_in_tetrahedron.is_none() {
        create_edges_in_tetrahedron(t);
    }
    if t.tetrahedra_around_triangle.is_none() {
        create_tetrahedra_around_triangle(t);
    }
    if t.tetrahedra_around_edge.is_none() {
        create_tetrahedra_around_edge(t);
    }
}

fn create_tetrahedra_around_vertex(t: &mut DynTopo) {
    let n = t.nb_points.max(t.mesh.tetrahedra.iter().flatten().map(|&v| v + 1).max().unwrap_or(0));
    t.tetrahedra_around_vertex = Some(super::shells_from_rows(n, &t.mesh.tetrahedra));
}

/// Face `j` of each tetrahedron = the triangle with the vertices of [`FACES`]`[j]` (either
/// orientation). Left unbuilt when a face is missing from the triangles (SOFA clears the array
/// and reports an error).
fn create_triangles_in_tetrahedron(t: &mut DynTopo) {
    let index: std::collections::HashMap<[usize; 3], usize> = t.mesh.triangles.iter().enumerate().rev().map(|(k, tri)| (sorted3(*tri), k)).collect();
    let mut out = Vec::with_capacity(t.mesh.tetrahedra.len());
    for tet in &t.mesh.tetrahedra {
        let mut row = [0; 4];
        for (j, f) in FACES.iter().enumerate() {
            match index.get(&sorted3([tet[f[0]], tet[f[1]], tet[f[2]]])) {
                Some(&k) => row[j] = k,
                None => return,
            }
        }
        out.push(row);
    }
    t.triangles_in_tetrahedron = Some(out);
}

/// Edge `j` of each tetrahedron = the edge joining the vertices of [`EDGES`]`[j]`. Left unbuilt
/// when an edge is missing.
fn create_edges_in_tetrahedron(t: &mut DynTopo) {
    let index: std::collections::HashMap<[usize; 2], usize> =
        t.mesh.edges.iter().enumerate().rev().map(|(k, e)| ([e[0].min(e[1]), e[0].max(e[1])], k)).collect();
    let mut out = Vec::with_capacity(t.mesh.tetrahedra.len());
    for tet in &t.mesh.tetrahedra {
        let mut row = [0; 6];
        for (j, p) in EDGES.iter().enumerate() {
            let (a, b) = (tet[p[0]], tet[p[1]]);
            match index.get(&[a.min(b), a.max(b)]) {
                Some(&k) => row[j] = k,
                None => return,
            }
        }
        out.push(row);
    }
    t.edges_in_tetrahedron = Some(out);
}

fn create_tetrahedra_around_edge(t: &mut DynTopo) {
    if t.edges_in_tetrahedron.is_none() {
        create_edges_in_tetrahedron(t);
    }
    let Some(ein) = t.edges_in_tetrahedron.as_ref() else { return };
    t.tetrahedra_around_edge = Some(super::shells_from_rows(t.mesh.edges.len(), ein));
}

fn create_tetrahedra_around_triangle(t: &mut DynTopo) {
    if t.triangles_in_tetrahedron.is_none() {
        create_triangles_in_tetrahedron(t);
    }
    let Some(tin) = t.triangles_in_tetrahedron.as_ref() else { return };
    t.tetrahedra_around_triangle = Some(super::shells_from_rows(t.mesh.triangles.len(), tin));
}

fn sorted3(mut v: [usize; 3]) -> [usize; 3] {
    v.sort_unstable();
    v
}

/// SOFA's `getTriangleIndex`: the triangle with these three vertices, in any order.
pub(crate) fn find_triangle(t: &DynTopo, v: [usize; 3]) -> Option<usize> {
    let key = sorted3(v);
    let same = |k: usize| sorted3(t.mesh.triangles[k]) == key;
    match t.triangles_around_vertex.as_ref() {
        Some(s) if v[0] < s.len() => s[v[0]].iter().copied().find(|&k| same(k)),
        Some(_) => None,
        None => (0..t.mesh.triangles.len()).find(|&k| same(k)),
    }
}

/// SOFA's `getEdgeIndex`: the edge joining `a` and `b`, in either direction.
pub(crate) fn find_edge(t: &DynTopo, a: usize, b: usize) -> Option<usize> {
    let same = |k: usize| {
        let e = t.mesh.edges[k];
        (e[0] == a && e[1] == b) || (e[0] == b && e[1] == a)
    };
    match t.edges_around_vertex.as_ref() {
        Some(s) if a < s.len() => s[a].iter().copied().find(|&k| same(k)),
        Some(_) => None,
        None => (0..t.mesh.edges.len()).find(|&k| same(k)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::{hexahedra_to_tetrahedra, triangles_from_tetrahedra_unique};
    use crate::mesh::edges_from_volume;
    use proptest::prelude::*;
    use settee_core::topology_change::TopologyChange;
    use settee_core::MeshData;

    /// A tetrahedron container as its init leaves it (lower lists derived in SOFA's orders).
    fn container(tetrahedra: Vec<[usize; 4]>) -> DynTopo {
        let edges = edges_from_volume(&tetrahedra, &[]);
        let triangles = triangles_from_tetrahedra_unique(&tetrahedra).0;
        let nb = tetrahedra.iter().flatten().max().map_or(0, |m| m + 1);
        DynTopo::new(ElementKind::Tetrahedron, nb, MeshData { tetrahedra, triangles, edges, ..MeshData::default() })
    }

    fn removed(kind: ElementKind, indices: Vec<usize>, elements: Vec<Vec<usize>>) -> TopologyChange {
        TopologyChange::Removed { kind, indices, elements }
    }

    /// Two tetrahedra sharing the face {1, 2, 3}.
    fn two() -> DynTopo {
        let t = container(vec![[0, 1, 2, 3], [1, 2, 3, 4]]);
        assert_eq!(t.mesh.edges, [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3], [1, 4], [2, 4], [3, 4]]);
        assert_eq!(t.mesh.triangles, [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1], [2, 3, 4], [1, 4, 3], [1, 2, 4]]);
        t
    }

    #[test]
    fn removing_one_of_two_tetrahedra_removes_its_own_faces_edges_and_vertex() {
        let mut t = two();
        remove_tetrahedra(&mut t, vec![0], true);
        // Faces 1, 2, 3 (only in tetrahedron 0) go in decreasing order by swap-with-last:
        // 3 ← 6, 2 ← 5, 1 ← 4. Edges 0, 1, 2 likewise: 2 ← 8, 1 ← 7, 0 ← 6. Point 0 ← 4.
        assert_eq!(t.mesh.tetrahedra, [[1, 2, 3, 0]]);
        assert_eq!(t.mesh.triangles, [[1, 2, 3], [2, 3, 0], [1, 0, 3], [1, 2, 0]]);
        assert_eq!(t.mesh.edges, [[1, 0], [2, 0], [3, 0], [1, 2], [1, 3], [2, 3]]);
        assert_eq!(t.nb_points, 4);
        let log = t.take_log();
        assert_eq!(
            log,
            [
                removed(ElementKind::Tetrahedron, vec![0], vec![vec![0, 1, 2, 3]]),
                removed(ElementKind::Triangle, vec![3, 2, 1], vec![vec![0, 2, 1], vec![0, 1, 3], vec![0, 3, 2]]),
                removed(ElementKind::Edge, vec![2, 1, 0], vec![vec![0, 3], vec![0, 2], vec![0, 1]]),
                removed(ElementKind::Point, vec![0], vec![vec![]]),
            ]
        );
        // Shells renamed with the elements: face k of the tetrahedron is opposite vertex k.
        assert_eq!(t.triangles_in_tetrahedron, Some(vec![[1, 2, 3, 0]]));
        assert_eq!(t.edges_in_tetrahedron, Some(vec![[3, 4, 0, 5, 1, 2]]));
        assert_eq!(t.tetrahedra_around_vertex, Some(vec![vec![0]; 4]));
        assert_eq!(t.tetrahedra_around_triangle, Some(vec![vec![0]; 4]));
        assert_eq!(t.tetrahedra_around_edge, Some(vec![vec![0]; 6]));
    }

    #[test]
    fn removing_without_isolated_items_keeps_the_lower_lists() {
        let mut t = two();
        remove_tetrahedra(&mut t, vec![0, 7], false);
        assert_eq!(t.mesh.tetrahedra, [[1, 2, 3, 4]]);
        assert_eq!(t.mesh.triangles.len(), 7);
        assert_eq!(t.mesh.edges.len(), 9);
        assert_eq!(t.take_log(), [removed(ElementKind::Tetrahedron, vec![0], vec![vec![0, 1, 2, 3]])]);
        assert_eq!(t.triangles_in_tetrahedron, Some(vec![[4, 5, 6, 0]]));
        assert_eq!(t.tetrahedra_around_triangle, Some(vec![vec![0], vec![], vec![], vec![], vec![0], vec![0], vec![0]]));
        assert_eq!(t.tetrahedra_around_vertex, Some(vec![vec![], vec![0], vec![0], vec![0], vec![0]]));
        // A later triangle removal renames the last triangle in the tetrahedron.
        on_triangles_removed(&mut t, &[1]);
        assert_eq!(t.triangles_in_tetrahedron, Some(vec![[4, 5, 1, 0]]));
        assert_eq!(t.tetrahedra_around_triangle.as_ref().unwrap().len(), 6);
    }

    #[test]
    fn the_modifier_data_can_keep_isolated_vertices() {
        let mut t = two();
        remove_tetrahedra_with(&mut t, vec![1], true, false);
        assert_eq!(t.mesh.tetrahedra, [[0, 1, 2, 3]]);
        assert_eq!(t.nb_points, 5);
        assert_eq!(t.mesh.triangles.len(), 4);
        assert_eq!(t.mesh.edges.len(), 6);
        assert!(t.take_log().iter().all(|c| c.kind() != ElementKind::Point));
    }

    #[test]
    fn adding_a_tetrahedron_creates_its_missing_faces_and_edges_in_order() {
        let mut t = container(vec![[0, 1, 2, 3]]);
        add_tetrahedra(&mut t, &[[1, 2, 3, 4]]);
        assert_eq!(t.nb_points, 5);
        // Faces (2 3 4), (1 4 3), (2 4 1) are new; (1 3 2) is triangle 0. Each new triangle's
        // missing sides are created first, as (t1 t2), (t2 t0), (t0 t1).
        assert_eq!(t.mesh.triangles[4..], [[2, 3, 4], [1, 4, 3], [2, 4, 1]]);
        assert_eq!(t.mesh.edges[6..], [[3, 4], [4, 2], [1, 4]]);
        let added = |kind, e: Vec<Vec<usize>>| TopologyChange::Added { kind, count: e.len(), elements: e, ancestors: vec![], coefs: vec![] };
        assert_eq!(
            t.take_log(),
            [
                added(ElementKind::Edge, vec![vec![3, 4]]),
                added(ElementKind::Edge, vec![vec![4, 2]]),
                added(ElementKind::Triangle, vec![vec![2, 3, 4]]),
                added(ElementKind::Edge, vec![vec![1, 4]]),
                added(ElementKind::Triangle, vec![vec![1, 4, 3]]),
                added(ElementKind::Triangle, vec![vec![2, 4, 1]]),
                added(ElementKind::Tetrahedron, vec![vec![1, 2, 3, 4]]),
            ]
        );
        assert_eq!(t.triangles_in_tetrahedron, Some(vec![[0, 1, 2, 3], [4, 5, 6, 0]]));
        assert_eq!(t.edges_in_tetrahedron, Some(vec![[0, 1, 2, 3, 4, 5], [3, 4, 8, 5, 7, 6]]));
        assert_eq!(t.tetrahedra_around_triangle.as_ref().unwrap()[0], [0, 1]);
        assert_eq!(t.tetrahedra_around_vertex.as_ref().unwrap()[4], [1]);
        check(&t);
    }

    /// Lists and shells agree: every element's vertices exist, each "in tetrahedron" entry names
    /// the right sub-element, each "around" shell holds exactly the tetrahedra using it, and
    /// (after removals with isolated items) every triangle, edge and point is used.
    fn check(t: &DynTopo) {
        let n = t.mesh.tetrahedra.len();
        for tet in &t.mesh.tetrahedra {
            assert!(tet.iter().all(|&v| v < t.nb_points), "{tet:?} with {} points", t.nb_points);
        }
        for e in &t.mesh.edges {
            assert!(e.iter().all(|&v| v < t.nb_points));
        }
        for tri in &t.mesh.triangles {
            assert!(tri.iter().all(|&v| v < t.nb_points));
        }
        let tin = t.triangles_in_tetrahedron.as_ref().unwrap();
        let ein = t.edges_in_tetrahedron.as_ref().unwrap();
        assert_eq!((tin.len(), ein.len()), (n, n));
        let mut tat = vec![Vec::new(); t.mesh.triangles.len()];
        let mut tae = vec![Vec::new(); t.mesh.edges.len()];
        let mut tav = vec![Vec::new(); t.nb_points];
        for (i, tet) in t.mesh.tetrahedra.iter().enumerate() {
            for (j, f) in FACES.iter().enumerate() {
                assert_eq!(sorted3(t.mesh.triangles[tin[i][j]]), sorted3([tet[f[0]], tet[f[1]], tet[f[2]]]));
                tat[tin[i][j]].push(i);
            }
            for (j, p) in EDGES.iter().enumerate() {
                let e = t.mesh.edges[ein[i][j]];
                assert_eq!([e[0].min(e[1]), e[0].max(e[1])], [tet[p[0]].min(tet[p[1]]), tet[p[0]].max(tet[p[1]])]);
                tae[ein[i][j]].push(i);
            }
            for &v in tet {
                tav[v].push(i);
            }
        }
        let sorted = |s: &[Vec<usize>]| {
            s.iter()
                .map(|v| {
                    let mut v = v.clone();
                    v.sort();
                    v
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(sorted(t.tetrahedra_around_triangle.as_ref().unwrap()), tat);
        assert_eq!(sorted(t.tetrahedra_around_edge.as_ref().unwrap()), tae);
        assert_eq!(sorted(t.tetrahedra_around_vertex.as_ref().unwrap()), tav);
    }

    /// The 12 tetrahedra of a 2×1×1-cell grid (3×2×2 points).
    fn block() -> DynTopo {
        let p = |x: usize, y: usize, z: usize| x + 3 * y + 6 * z;
        let hexa = |x| [p(x, 0, 0), p(x + 1, 0, 0), p(x + 1, 1, 0), p(x, 1, 0), p(x, 0, 1), p(x + 1, 0, 1), p(x + 1, 1, 1), p(x, 1, 1)];
        container(hexahedra_to_tetrahedra(&[hexa(0), hexa(1)], false, 2, 1))
    }

    proptest! {
        #[test]
        fn random_removals_keep_lists_and_shells_consistent(steps in prop::collection::vec(prop::collection::vec(0usize..100, 1..4), 1..6)) {
            let mut t = block();
            for raw in steps {
                let n = t.mesh.tetrahedra.len();
                if n == 0 { break; }
                let ids: Vec<usize> = raw.iter().map(|r| r % n).collect();
                remove_tetrahedra(&mut t, ids, true);
                check(&t);
                // Every remaining triangle, edge and point belongs to a tetrahedron.
                prop_assert!(t.tetrahedra_around_triangle.as_ref().unwrap().iter().all(|s| !s.is_empty()));
                prop_assert!(t.tetrahedra_around_edge.as_ref().unwrap().iter().all(|s| !s.is_empty()));
                prop_assert!(t.tetrahedra_around_vertex.as_ref().unwrap().iter().all(|s| !s.is_empty()));
            }
        }
    }
}
