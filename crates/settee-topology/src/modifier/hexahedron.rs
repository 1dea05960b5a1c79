//! HexahedronSet level (`HexahedronSetTopologyModifier`, `HexahedronSetTopologyContainer`).
//!
//! Shells of this level: `quads_in_hexahedron` (face `i` is
//! [`crate::mesh::QUADS_IN_HEXAHEDRON`]`[i]`), `edges_in_hexahedron` (edge `k` is
//! [`crate::mesh::EDGES_IN_HEXAHEDRON`]`[k]`), `hexahedra_around_vertex`, `hexahedra_around_edge`,
//! `hexahedra_around_quad`; built from the lists when first needed (see [`super::quad`]).

use super::quad::{self, edge_index, quad_index, MISSING};
use super::{point, DynTopo};
use crate::mesh::{EDGES_IN_HEXAHEDRON, QUADS_IN_HEXAHEDRON};
use settee_core::topology_change::ElementKind;

// ----- shells --------------------------------------------------------------------------------

/// SOFA's `createHexahedraAroundVertexArray`.
pub(crate) fn ensure_hexahedra_around_vertex(t: &mut DynTopo) {
    super::ensure_around_vertex(&mut t.hexahedra_around_vertex, &t.mesh.hexahedra, t.nb_points);
}

/// SOFA's `createQuadsInHexahedronArray` (faces found with `getQuadIndex`).
pub(crate) fn ensure_quads_in_hexahedron(t: &mut DynTopo) {
    if t.quads_in_hexahedron.is_some() || t.mesh.hexahedra.is_empty() {
        return;
    }
    let n = t.mesh.hexahedra.len();
    let out = super::item_rows(t, n, |t, hi, i| quad_index(t, QUADS_IN_HEXAHEDRON[i].map(|k| t.mesh.hexahedra[hi][k])));
    t.quads_in_hexahedron = Some(out);
}

/// SOFA's `createEdgesInHexahedronArray`.
pub(crate) fn ensure_edges_in_hexahedron(t: &mut DynTopo) {
    if t.edges_in_hexahedron.is_some() || t.mesh.hexahedra.is_empty() {
        return;
    }
    let n = t.mesh.hexahedra.len();
    let out = super::item_rows(t, n, |t, hi, k| {
        let (h, [a, b]) = (t.mesh.hexahedra[hi], EDGES_IN_HEXAHEDRON[k]);
        edge_index(t, h[a], h[b])
    });
    t.edges_in_hexahedron = Some(out);
}

/// The shells of the hexahedra around lower items, when missing and there are hexahedra: from
/// the "items in hexahedron" rows (built by `ensure_rows`), for `count` items.
fn ensure_around_items<const N: usize>(
    t: &mut DynTopo,
    count: fn(&DynTopo) -> usize,
    ensure_rows: fn(&mut DynTopo),
    parts: for<'a> fn(&'a mut DynTopo) -> super::ItemRows<'a, N>,
) {
    if parts(t).0.is_some() || t.mesh.hexahedra.is_empty() {
        return;
    }
    ensure_rows(t);
    let n = count(t);
    let (shells, rows) = parts(t);
    let Some(rows) = rows.as_ref() else { return };
    *shells = Some(super::shells_from_rows(n, rows));
}

/// SOFA's `createHexahedraAroundEdgeArray`.
pub(crate) fn ensure_hexahedra_around_edge(t: &mut DynTopo) {
    ensure_around_items(t, |t| t.mesh.edges.len(), ensure_edges_in_hexahedron, |t| (&mut t.hexahedra_around_edge, &mut t.edges_in_hexahedron));
}

/// SOFA's `createHexahedraAroundQuadArray`.
pub(crate) fn ensure_hexahedra_around_quad(t: &mut DynTopo) {
    ensure_around_items(t, |t| t.mesh.quads.len(), ensure_quads_in_hexahedron, |t| (&mut t.hexahedra_around_quad, &mut t.quads_in_hexahedron));
}

// ----- removal -------------------------------------------------------------------------------

/// SOFA's `removeHexahedra(ids)` = `removeHexahedraWarning` + `removeHexahedraProcess(ids,
/// remove_isolated)` (`removeItems` uses true). `remove_isolated` also stands for the
/// modifier's `removeIsolated` Data (default true), which SOFA requires for removing the
/// isolated points; isolated quads and edges go with `remove_isolated` alone. Indices out of
/// range are dropped (SOFA reports them), repeats are dropped.
pub fn remove_hexahedra(t: &mut DynTopo, ids: Vec<usize>, remove_isolated: bool) {
    remove_hexahedra_with(t, ids, remove_isolated, remove_isolated);
}

/// [`remove_hexahedra`] with the modifier's `removeIsolated` Data given apart.
pub fn remove_hexahedra_with(t: &mut DynTopo, ids: Vec<usize>, remove_isolated_items: bool, remove_isolated_points: bool) {
    let ids = point::removal_order(ids, t.mesh.hexahedra.len());
    if ids.is_empty() {
        return;
    }
    t.log_removed(ElementKind::Hexahedron, &ids);
    remove_hexahedra_process(t, &ids, remove_isolated_items, remove_isolated_items && remove_isolated_points);
}

/// SOFA's `removeHexahedraProcess`; `ids` sorted decreasing and distinct.
fn remove_hexahedra_process(t: &mut DynTopo, ids: &[usize], remove_isolated: bool, remove_vertices: bool) {
    if t.mesh.hexahedra.is_empty() {
        return;
    }
    let remove_edges = remove_isolated && !t.mesh.edges.is_empty();
    let remove_quads = remove_isolated && !t.mesh.quads.is_empty();
    if remove_vertices {
        ensure_hexahedra_around_vertex(t);
    }
    if remove_edges {
        ensure_hexahedra_around_edge(t);
    }
    if remove_quads {
        ensure_hexahedra_around_quad(t);
    }

    let mut quads_to_remove = Vec::new();
    let mut edges_to_remove = Vec::new();
    let mut points_to_remove = Vec::new();
    for &i in ids {
        // The last hexahedron takes the place of the removed one.
        let last = t.mesh.hexahedra.len() - 1;
        super::leave_shells(t.hexahedra_around_vertex.as_mut(), Some(&t.mesh.hexahedra), i, last, remove_vertices, &mut points_to_remove);
        super::leave_shells(t.hexahedra_around_edge.as_mut(), t.edges_in_hexahedron.as_deref(), i, last, remove_edges, &mut edges_to_remove);
        super::leave_shells(t.hexahedra_around_quad.as_mut(), t.quads_in_hexahedron.as_deref(), i, last, remove_quads, &mut quads_to_remove);
        super::swap_remove_row(t.quads_in_hexahedron.as_mut(), i, last);
        super::swap_remove_row(t.edges_in_hexahedron.as_mut(), i, last);
        t.mesh.hexahedra.swap_remove(i);
    }

    // SOFA logs both removals, then removes the quads and the edges without looking for isolated
    // items; the quad removal does not change the edges, so doing them one after the other
    // logs the same events.
    if !quads_to_remove.is_empty() {
        quad::remove_quads(t, quads_to_remove, false, false);
    }
    super::remove_isolated(t, edges_to_remove, points_to_remove);
}

// ----- addition ------------------------------------------------------------------------------

/// SOFA's `addHexahedra`: each hexahedron is appended, creating its missing faces (quads, each
/// logged with the edges it creates) and then its missing edges (each logged); then the
/// hexahedra's addition is logged.
pub fn add_hexahedra(t: &mut DynTopo, hexahedra: &[[usize; 8]]) {
    add_hexahedra_with(t, hexahedra, Vec::new(), Vec::new());
}

/// [`add_hexahedra`] with ancestors and coefficients.
pub fn add_hexahedra_with(t: &mut DynTopo, hexahedra: &[[usize; 8]], ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) {
    let process = |t: &mut DynTopo, hexahedra: &[[usize; 8]]| {
        for &h in hexahedra {
            add_hexahedron_process(t, h);
        }
    };
    super::add_logged(t, ElementKind::Hexahedron, hexahedra, ancestors, coefs, process);
}

/// SOFA's `addHexahedronProcess` (without the optional `checkTopology` assertions).
fn add_hexahedron_process(t: &mut DynTopo, h: [usize; 8]) {
    ensure_hexahedra_around_vertex(t);
    ensure_hexahedra_around_quad(t);
    ensure_hexahedra_around_edge(t);

    let hi = t.mesh.hexahedra.len();
    super::attach_new(t, &h, hi, |t| &mut t.hexahedra_around_vertex);

    super::reserve_row(&mut t.quads_in_hexahedron, hi, MISSING);
    for (i, face) in QUADS_IN_HEXAHEDRON.iter().enumerate() {
        let q = face.map(|k| h[k]);
        let Some(qi) = super::find_or_add(t, |t| quad_index(t, q), |t| quad::add_quads(t, &[q])) else { continue };
        super::record_item(t.quads_in_hexahedron.as_mut(), &mut t.hexahedra_around_quad, t.mesh.quads.len(), hi, i, qi);
    }

    let ends = EDGES_IN_HEXAHEDRON.map(|[a, b]| [h[a], h[b]]);
    super::record_edges(t, hi, ends, |t| (&mut t.hexahedra_around_edge, &mut t.edges_in_hexahedron));
    t.mesh.hexahedra.push(h);
}

// ----- hooks of the lower levels ---------------------------------------------------------------

/// Hexahedron-level part of a point removal (`ids` sorted decreasing, `t.nb_points` not yet
/// reduced): hexahedra using the last point are given the removed point's index.
pub(crate) fn on_points_removed(t: &mut DynTopo, ids: &[usize]) {
    super::rename_points_in(t, ids, ensure_hexahedra_around_vertex, |t| (&mut t.hexahedra_around_vertex, &mut t.mesh.hexahedra));
}

/// Hexahedron-level part of an edge removal (`ids` sorted decreasing, the edge list not yet
/// shortened).
pub(crate) fn on_edges_removed(t: &mut DynTopo, ids: &[usize]) {
    let n = t.mesh.edges.len();
    if n > 0 {
        super::rename_removed_items(t, ids, Some(n), ensure_hexahedra_around_edge, |t| (&mut t.hexahedra_around_edge, &mut t.edges_in_hexahedron));
    }
}

/// Hexahedron-level part of a quad removal (`ids` sorted decreasing, the quad list not yet
/// shortened).
pub(crate) fn on_quads_removed(t: &mut DynTopo, ids: &[usize]) {
    let n = t.mesh.quads.len();
    if n > 0 {
        super::rename_removed_items(t, ids, Some(n), ensure_hexahedra_around_quad, |t| (&mut t.hexahedra_around_quad, &mut t.quads_in_hexahedron));
    }
}

/// Hexahedron-level part of a point addition: the vertex shells grow to the number of points.
pub(crate) fn on_points_added(t: &mut DynTopo, count: usize) {
    super::grow_shells(&mut t.hexahedra_around_vertex, count, t.nb_points);
}

/// Hexahedron-level part of an edge addition: the edge shells grow to the number of edges.
pub(crate) fn on_edges_added(t: &mut DynTopo, count: usize) {
    super::grow_shells(&mut t.hexahedra_around_edge, count, t.mesh.edges.len());
}

/// Hexahedron-level part of a quad addition (called after the quads are appended): the quad
/// shells grow to the number of quads.
pub(crate) fn on_quads_added(t: &mut DynTopo, _count: usize) {
    super::grow_shells(&mut t.hexahedra_around_quad, 0, t.mesh.quads.len());
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::mesh::{edges_from_surface, edges_from_volume, quads_from_hexahedra};
    use proptest::prelude::*;
    use settee_core::topology_change::TopologyChange;
    use settee_core::MeshData;

    /// A hexahedron container as its init leaves it (derived edges and quads, no shells).
    pub(crate) fn hexa_topo(nb_points: usize, hexahedra: Vec<[usize; 8]>) -> DynTopo {
        let mesh = MeshData { edges: edges_from_volume(&[], &hexahedra), quads: quads_from_hexahedra(&hexahedra), hexahedra, ..MeshData::default() };
        DynTopo::new(ElementKind::Hexahedron, nb_points, mesh)
    }

    /// Two unit cubes side by side along x: A = [0,1,4,3,6,7,10,9], B = [1,2,5,4,7,8,11,10]
    /// (bottom layer 0..6 on a 3×2 grid, top layer 6..12).
    fn two_cubes() -> DynTopo {
        hexa_topo(12, vec![[0, 1, 4, 3, 6, 7, 10, 9], [1, 2, 5, 4, 7, 8, 11, 10]])
    }

    fn kinds(log: &[TopologyChange]) -> Vec<(ElementKind, bool)> {
        log.iter().map(|c| (c.kind(), matches!(c, TopologyChange::Added { .. }))).collect()
    }

    /// The kind and indices of each event of a log of removals.
    fn removed_indices(log: &[TopologyChange]) -> Vec<(ElementKind, Vec<usize>)> {
        log.iter()
            .map(|c| match c {
                TopologyChange::Removed { kind, indices, .. } => (*kind, indices.clone()),
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    /// The kind and elements of each event of a log of additions.
    fn added_elements(log: &[TopologyChange]) -> Vec<(ElementKind, Vec<Vec<usize>>)> {
        log.iter()
            .map(|c| match c {
                TopologyChange::Added { kind, elements, .. } => (*kind, elements.clone()),
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    fn sorted_shells(s: &[Vec<usize>]) -> Vec<Vec<usize>> {
        s.iter()
            .map(|v| {
                let mut v = v.clone();
                v.sort_unstable();
                v
            })
            .collect()
    }

    /// Every element's vertices exist, every lower face of an element exists, and every shell
    /// present holds what a fresh build from the lists gives (as sets).
    pub(crate) fn check_consistent(t: &DynTopo) -> Result<(), String> {
        let n = t.nb_points;
        let m = &t.mesh;
        let bad = |what: &str, i: usize| Err(format!("{what} {i} names a missing point ({n} points)"));
        for (i, e) in m.edges.iter().enumerate() {
            if e.iter().any(|&v| v >= n) {
                return bad("edge", i);
            }
        }
        for (i, q) in m.quads.iter().enumerate() {
            if q.iter().any(|&v| v >= n) {
                return bad("quad", i);
            }
        }
        for (i, h) in m.hexahedra.iter().enumerate() {
            if h.iter().any(|&v| v >= n) {
                return bad("hexahedron", i);
            }
        }
        let mut fresh = DynTopo::new(t.kind, t.nb_points, t.mesh.clone());
        for qi in 0..m.quads.len() {
            let q = m.quads[qi];
            for j in 0..4 {
                if edge_index(&mut fresh, q[(j + 1) % 4], q[(j + 2) % 4]).is_none() {
                    return Err(format!("side {j} of quad {qi} {q:?} has no edge"));
                }
            }
        }
        for hi in 0..m.hexahedra.len() {
            let h = m.hexahedra[hi];
            for f in QUADS_IN_HEXAHEDRON {
                if quad_index(&mut fresh, f.map(|k| h[k])).is_none() {
                    return Err(format!("a face of hexahedron {hi} {h:?} has no quad"));
                }
            }
        }
        quad::ensure_edges_in_quad(&mut fresh);
        quad::ensure_quads_around_edge(&mut fresh);
        ensure_hexahedra_around_vertex(&mut fresh);
        ensure_hexahedra_around_edge(&mut fresh);
        ensure_hexahedra_around_quad(&mut fresh);
        macro_rules! same {
            ($f:ident, $shell:expr) => {
                if let (Some(a), Some(b)) = (t.$f.as_ref(), fresh.$f.as_ref()) {
                    let (a, b) = if $shell { (sorted_shells(a), sorted_shells(b)) } else { (a.clone(), b.clone()) };
                    if a != b {
                        return Err(format!("{} differs from a fresh build:\n{a:?}\n{b:?}", stringify!($f)));
                    }
                }
            };
        }
        same!(edges_around_vertex, true);
        same!(quads_around_vertex, true);
        same!(quads_around_edge, true);
        same!(hexahedra_around_vertex, true);
        same!(hexahedra_around_edge, true);
        same!(hexahedra_around_quad, true);
        if let (Some(a), Some(b)) = (&t.edges_in_quad, &fresh.edges_in_quad) {
            if a != b {
                return Err(format!("edges_in_quad differs: {a:?} / {b:?}"));
            }
        }
        if let (Some(a), Some(b)) = (&t.quads_in_hexahedron, &fresh.quads_in_hexahedron) {
            if a != b {
                return Err(format!("quads_in_hexahedron differs: {a:?} / {b:?}"));
            }
        }
        if let (Some(a), Some(b)) = (&t.edges_in_hexahedron, &fresh.edges_in_hexahedron) {
            if a != b {
                return Err(format!("edges_in_hexahedron differs: {a:?} / {b:?}"));
            }
        }
        Ok(())
    }

    #[test]
    fn two_cubes_derive_eleven_quads_and_twenty_edges() {
        let t = two_cubes();
        assert_eq!(t.mesh.quads.len(), 11);
        assert_eq!(t.mesh.quads[3], [1, 4, 10, 7], "the shared face is A's face 3");
        assert_eq!(t.mesh.edges.len(), 20);
    }

    /// Removing A: its 4 own vertices, 8 own edges and 5 own faces go, in SOFA's order
    /// (hexahedra, quads, edges, points, each list decreasing, each element by swap-with-last).
    #[test]
    fn removing_one_of_two_cubes() {
        let mut t = two_cubes();
        remove_hexahedra(&mut t, vec![0], true);
        let idx = removed_indices(&t.log);
        assert_eq!(
            idx,
            vec![
                (ElementKind::Hexahedron, vec![0]),
                (ElementKind::Quad, vec![5, 4, 2, 1, 0]),
                (ElementKind::Edge, vec![11, 9, 8, 7, 5, 2, 1, 0]),
                (ElementKind::Point, vec![9, 6, 3, 0]),
            ]
        );
        // Removed elements keep their vertices as they were.
        let TopologyChange::Removed { elements, .. } = &t.log[1] else { unreachable!() };
        assert_eq!(elements[0], vec![0, 6, 9, 3]);
        // Points 9, 6, 3, 0 go: 11 → 9 → 3, 10 → 6, 8 → 0.
        assert_eq!(t.nb_points, 8);
        assert_eq!(t.mesh.hexahedra, vec![[1, 2, 5, 4, 7, 0, 3, 6]]);
        assert_eq!(t.mesh.quads, vec![[1, 4, 5, 2], [7, 0, 3, 6], [1, 2, 0, 7], [1, 4, 6, 7], [2, 5, 3, 0], [4, 6, 3, 5]]);
        assert_eq!(t.mesh.edges, vec![[1, 2], [2, 5], [2, 0], [1, 4], [1, 7], [4, 5], [4, 6], [5, 3], [7, 0], [0, 3], [7, 6], [6, 3]]);
        assert_eq!(t.quads_in_hexahedron.as_ref().unwrap()[0], [0, 1, 2, 4, 5, 3]);
        check_consistent(&t).unwrap();
    }

    #[test]
    fn removing_without_isolated_items_keeps_faces_edges_and_points() {
        let mut t = two_cubes();
        remove_hexahedra(&mut t, vec![1, 7], false);
        assert_eq!(kinds(&t.log), vec![(ElementKind::Hexahedron, false)]);
        assert_eq!(t.mesh.hexahedra, vec![[0, 1, 4, 3, 6, 7, 10, 9]]);
        assert_eq!((t.mesh.quads.len(), t.mesh.edges.len(), t.nb_points), (11, 20, 12));
        check_consistent(&t).unwrap();
    }

    /// Adding B next to A creates B's 5 new faces in face order, each after the edges it
    /// creates, and reuses the shared face and edges.
    #[test]
    fn adding_a_cube_next_to_another() {
        let mut t = hexa_topo(8, vec![[0, 1, 4, 3, 6, 7, 10, 9]]);
        t.nb_points = 11;
        add_hexahedra(&mut t, &[[1, 2, 5, 4, 7, 8, 11, 10]]);
        let added = added_elements(&t.log);
        use ElementKind::{Edge as E, Hexahedron as H, Quad as Q};
        assert_eq!(
            added,
            vec![
                (E, vec![vec![4, 5]]),
                (E, vec![vec![5, 2]]),
                (E, vec![vec![2, 1]]),
                (Q, vec![vec![1, 4, 5, 2]]),
                (E, vec![vec![8, 11]]),
                (E, vec![vec![11, 10]]),
                (E, vec![vec![7, 8]]),
                (Q, vec![vec![7, 8, 11, 10]]),
                (E, vec![vec![2, 8]]),
                (Q, vec![vec![1, 2, 8, 7]]),
                (E, vec![vec![5, 11]]),
                (Q, vec![vec![2, 5, 11, 8]]),
                (Q, vec![vec![5, 4, 10, 11]]),
                (H, vec![vec![1, 2, 5, 4, 7, 8, 11, 10]]),
            ]
        );
        assert_eq!(t.nb_points, 12);
        assert_eq!(t.mesh.quads.len(), 11);
        assert_eq!(t.mesh.edges.len(), 20);
        assert_eq!(t.quads_in_hexahedron.as_ref().unwrap()[1], [6, 7, 8, 9, 10, 3]);
        check_consistent(&t).unwrap();
    }

    #[test]
    fn adding_a_quad_creates_its_missing_sides_in_side_order() {
        let quads = vec![[0, 1, 2, 3]];
        let mesh = MeshData { edges: edges_from_surface(&[], &quads), quads, ..MeshData::default() };
        let mut t = DynTopo::new(ElementKind::Quad, 4, mesh);
        assert_eq!(t.mesh.edges, vec![[1, 2], [2, 3], [0, 3], [0, 1]]);
        quad::add_quads(&mut t, &[[1, 4, 5, 2]]);
        assert_eq!(t.mesh.edges[4..], [[4, 5], [5, 2], [1, 4]]);
        assert_eq!(t.edges_in_quad.as_ref().unwrap()[1], [4, 5, 0, 6]);
        assert_eq!(t.quads_around_edge.as_ref().unwrap()[0], vec![0, 1]);
        assert_eq!(t.nb_points, 6);
        assert_eq!(kinds(&t.log), vec![(ElementKind::Edge, true), (ElementKind::Edge, true), (ElementKind::Edge, true), (ElementKind::Quad, true)]);
        check_consistent(&t).unwrap();
    }

    /// Removing quads from a quad container: isolated edges, then isolated points.
    #[test]
    fn removing_a_quad_of_two() {
        let quads = vec![[0, 1, 2, 3], [1, 4, 5, 2]];
        let mesh = MeshData { edges: edges_from_surface(&[], &quads), quads, ..MeshData::default() };
        let mut t = DynTopo::new(ElementKind::Quad, 6, mesh);
        // Edges: [1,2] [2,3] [0,3] [0,1] [4,5] [2,5] [1,4].
        quad::remove_quads(&mut t, vec![0], true, true);
        let idx = removed_indices(&t.log);
        assert_eq!(idx, vec![(ElementKind::Quad, vec![0]), (ElementKind::Edge, vec![3, 2, 1]), (ElementKind::Point, vec![3, 0])]);
        // Edges: remove 3 ([0,1] ← [1,4]), 2 ([0,3] ← [2,5]), 1 ([2,3] ← [4,5]); points: remove 3
        // (5 → 3), then 0 (4 → 0).
        assert_eq!(t.mesh.quads, vec![[1, 0, 3, 2]]);
        assert_eq!(t.mesh.edges, vec![[1, 2], [0, 3], [2, 3], [1, 0]]);
        assert_eq!(t.nb_points, 4);
        check_consistent(&t).unwrap();
    }

    /// A block of nx × ny × nz unit cubes.
    pub(crate) fn block(nx: usize, ny: usize, nz: usize) -> DynTopo {
        hexa_topo((nx + 1) * (ny + 1) * (nz + 1), crate::grid::hexahedra([nx + 1, ny + 1, nz + 1]))
    }

    proptest! {
        /// Random removals (and re-additions of removed cubes) keep a hexahedron container
        /// consistent.
        #[test]
        fn random_removals_and_additions_stay_consistent(ops in prop::collection::vec((any::<bool>(), prop::collection::vec(0usize..1000, 1..4)), 1..6)) {
            let mut t = block(3, 2, 2);
            let mut removed: Vec<[usize; 8]> = Vec::new();
            for (add, raw) in ops {
                let n = t.mesh.hexahedra.len();
                if add && !removed.is_empty() {
                    // Re-adding needs its points: only when no point was removed since.
                    let h = removed.pop().unwrap();
                    if h.iter().all(|&v| v < t.nb_points) {
                        add_hexahedra(&mut t, &[h]);
                    }
                } else if n > 0 {
                    let ids: Vec<usize> = raw.iter().map(|r| r % n).collect();
                    for &i in &ids { removed.push(t.mesh.hexahedra[i]); }
                    remove_hexahedra(&mut t, ids, true);
                }
                prop_assert!(check_consistent(&t).is_ok(), "{}", check_consistent(&t).unwrap_err());
            }
        }
    }
}
