//! TriangleSet level (`TriangleSetTopologyModifier`, `TriangleSetTopologyContainer`).
//!
//! Shells of this level: `edges_in_triangle` (the edge of each side j, opposite vertex j),
//! `triangles_around_vertex` and `triangles_around_edge`. SOFA builds all three when the
//! container is initialised with triangles, and the operations rebuild a missing one when they
//! need it; they keep every existing one up to date.

use super::point::{self, has_level, removal_order};
use super::{edge, tetrahedron, DynTopo};
use settee_core::topology_change::ElementKind;

/// Side `j` of a triangle: the two vertices other than `j`, in SOFA's order.
fn side(t: &[usize; 3], j: usize) -> (usize, usize) {
    (t[(j + 1) % 3], t[(j + 2) % 3])
}

/// SOFA's `createEdgesInTriangleArray`: for each side, the first edge (in index order) joining
/// its two vertices, either way round. When the container has no edges yet they are created
/// from the triangles (first appearance, oriented as the side). A side without an edge leaves
/// the shell absent (SOFA reports the inconsistency and clears it; the container's init
/// already refused such a mesh).
pub(crate) fn create_edges_in_triangle(t: &mut DynTopo) {
    if t.mesh.edges.is_empty() {
        let mut known: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
        let mut eit = Vec::with_capacity(t.mesh.triangles.len());
        for tri in &t.mesh.triangles {
            let mut sides = [0; 3];
            for (j, s) in sides.iter_mut().enumerate() {
                let (a, b) = side(tri, j);
                let key = (a.min(b), a.max(b));
                *s = *known.entry(key).or_insert_with(|| {
                    t.mesh.edges.push([a, b]);
                    t.mesh.edges.len() - 1
                });
            }
            eit.push(sides);
        }
        t.edges_in_triangle = Some(eit);
        return;
    }
    // Edges around each vertex in index order (SOFA's temporary multimap).
    let mut around: std::collections::HashMap<usize, Vec<usize>> = std::collections::HashMap::new();
    for (i, e) in t.mesh.edges.iter().enumerate() {
        around.entry(e[0]).or_default().push(i);
        around.entry(e[1]).or_default().push(i);
    }
    let mut eit = Vec::with_capacity(t.mesh.triangles.len());
    for tri in &t.mesh.triangles {
        let mut sides = [0; 3];
        for (j, s) in sides.iter_mut().enumerate() {
            let (a, b) = side(tri, j);
            let found = around.get(&a).and_then(|es| {
                es.iter().copied().find(|&e| {
                    let e = t.mesh.edges[e];
                    (e[0] == a && e[1] == b) || (e[0] == b && e[1] == a)
                })
            });
            match found {
                Some(e) => *s = e,
                None => {
                    t.edges_in_triangle = None;
                    return;
                }
            }
        }
        eit.push(sides);
    }
    t.edges_in_triangle = Some(eit);
}

/// SOFA's `createTrianglesAroundVertexArray`: triangles in index order (a triangle naming a
/// point beyond the count is skipped).
pub(crate) fn create_triangles_around_vertex(t: &mut DynTopo) {
    let n = t.nb_points;
    let mut shells = vec![Vec::new(); n];
    for (i, tri) in t.mesh.triangles.iter().enumerate() {
        if tri.iter().any(|&v| v >= n) {
            continue;
        }
        for &v in tri {
            shells[v].push(i);
        }
    }
    t.triangles_around_vertex = Some(shells);
}

/// SOFA's `createTrianglesAroundEdgeArray`: a triangle that sees the edge in its own direction
/// (the edge starts at the side's first vertex) goes first, the others after.
pub(crate) fn create_triangles_around_edge(t: &mut DynTopo) {
    if t.mesh.triangles.is_empty() || t.mesh.edges.is_empty() {
        return;
    }
    if t.edges_in_triangle.is_none() {
        create_edges_in_triangle(t);
    }
    let Some(eit) = t.edges_in_triangle.as_ref() else { return };
    let mut shells: Vec<Vec<usize>> = vec![Vec::new(); t.mesh.edges.len()];
    for (i, tri) in t.mesh.triangles.iter().enumerate() {
        let Some(sides) = eit.get(i) else { break };
        for (j, &e) in sides.iter().enumerate() {
            let Some(shell) = shells.get_mut(e) else { continue };
            if t.mesh.edges[e][0] == tri[(j + 1) % 3] {
                shell.insert(0, i);
            } else {
                shell.push(i);
            }
        }
    }
    t.triangles_around_edge = Some(shells);
}

/// The shells SOFA's `init` builds for a container holding triangles
/// (`computeCrossElementBuffers`), built at the first operation if they do not exist yet.
pub(crate) fn init_shells(t: &mut DynTopo) {
    if t.mesh.triangles.is_empty() {
        return;
    }
    edge::init_shells(t);
    if t.edges_in_triangle.is_none() {
        create_edges_in_triangle(t);
        if t.edges_around_vertex.is_none() && !t.mesh.edges.is_empty() {
            // Edges were just derived from the triangles.
            edge::create_edges_around_vertex(t);
        }
    }
    if t.triangles_around_vertex.is_none() {
        create_triangles_around_vertex(t);
    }
    if t.triangles_around_edge.is_none() {
        create_triangles_around_edge(t);
    }
}

fn init_levels(t: &mut DynTopo) {
    if has_level(t, ElementKind::Triangle) {
        init_shells(t);
    }
    if has_level(t, ElementKind::Edge) {
        edge::init_shells(t);
    }
}

/// SOFA's `removeTriangles(ids, removeIsolatedEdges, removeIsolatedPoints)` (`removeItems` uses
/// true, true).
pub fn remove_triangles(t: &mut DynTopo, ids: Vec<usize>, remove_isolated_edges: bool, remove_isolated_points: bool) {
    init_levels(t);
    let ids = removal_order(ids, t.mesh.triangles.len());
    if ids.is_empty() {
        return;
    }
    t.log_removed(ElementKind::Triangle, &ids);
    remove_triangles_process(t, &ids, remove_isolated_edges, remove_isolated_points);
}

/// SOFA's `removeTrianglesProcess` for `ids` already in decreasing order (and logged): each
/// triangle goes by swap-with-last, leaving the shells of its vertices and edges; the edges
/// whose triangle shell empties are removed next (without looking for isolated points), then
/// the points whose triangle shell emptied, each with its own event.
pub(crate) fn remove_triangles_process(t: &mut DynTopo, ids: &[usize], remove_isolated_edges: bool, remove_isolated_points: bool) {
    if has_level(t, ElementKind::Tetrahedron) {
        tetrahedron::on_triangles_removed(t, ids);
    }
    if t.mesh.triangles.is_empty() {
        return;
    }
    if !t.mesh.edges.is_empty() && remove_isolated_edges {
        if t.edges_in_triangle.is_none() {
            create_edges_in_triangle(t);
        }
        if t.triangles_around_edge.is_none() {
            create_triangles_around_edge(t);
        }
    }
    if remove_isolated_points && t.triangles_around_vertex.is_none() {
        create_triangles_around_vertex(t);
    }

    let mut isolated_edges = Vec::new();
    let mut isolated_points = Vec::new();
    for (i, last) in super::swaps(ids, t.mesh.triangles.len()) {
        super::leave_shells(t.triangles_around_vertex.as_mut(), Some(&t.mesh.triangles), i, last, remove_isolated_points, &mut isolated_points);
        super::leave_shells(t.triangles_around_edge.as_mut(), t.edges_in_triangle.as_deref(), i, last, remove_isolated_edges, &mut isolated_edges);
        super::swap_remove_row(t.edges_in_triangle.as_mut(), i, last);
        t.mesh.triangles.swap_remove(i);
    }

    if !isolated_edges.is_empty() {
        let edges = removal_order(isolated_edges, t.mesh.edges.len());
        t.log_removed(ElementKind::Edge, &edges);
        edge::remove_edges_process(t, &edges, false);
    }
    if !isolated_points.is_empty() {
        point::remove_points(t, isolated_points);
    }
}

/// SOFA's `addTriangles` (with optional ancestors and coefficients).
pub fn add_triangles(t: &mut DynTopo, triangles: &[[usize; 3]], ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) {
    let process = |t: &mut DynTopo, triangles: &[[usize; 3]]| {
        init_levels(t);
        add_triangles_process(t, triangles);
    };
    super::add_logged(t, ElementKind::Triangle, triangles, ancestors, coefs, process);
}

/// SOFA's `addTrianglesProcess`: the triangles one after the other (each side's missing edge
/// is created, and logged, before the next side is looked at), then the higher level's
/// triangle shells grow.
pub(crate) fn add_triangles_process(t: &mut DynTopo, triangles: &[[usize; 3]]) {
    for tri in triangles {
        add_triangle_process(t, *tri);
    }
    if has_level(t, ElementKind::Tetrahedron) {
        tetrahedron::on_triangles_added(t, triangles.len());
    }
}

/// SOFA's `addTriangleProcess`.
fn add_triangle_process(t: &mut DynTopo, tri: [usize; 3]) {
    let id = t.mesh.triangles.len();
    // The count grows silently when the triangle names a point beyond it.
    let needed = tri.iter().max().map_or(0, |m| m + 1);
    if needed > t.nb_points {
        t.nb_points = needed;
    }
    super::attach(&mut t.triangles_around_vertex, t.nb_points, &tri, id);
    super::reserve_row(&mut t.edges_in_triangle, id, usize::MAX);
    for j in 0..3 {
        let (a, b) = side(&tri, j);
        let e = match edge::edge_index(t, a, b) {
            Some(e) => e,
            None => {
                edge::add_edges_process(t, &[[a, b]]);
                t.log_added(ElementKind::Edge, vec![vec![a, b]], 1, Vec::new(), Vec::new());
                t.mesh.edges.len() - 1
            }
        };
        super::record_item(t.edges_in_triangle.as_mut(), &mut t.triangles_around_edge, t.mesh.edges.len(), id, j, e);
    }
    t.mesh.triangles.push(tri);
}

/// Triangle-level part of a point removal: renames the last point in the triangles around it
/// and moves its shell (`triangles_around_vertex` is built when missing).
pub(crate) fn on_points_removed(t: &mut DynTopo, ids: &[usize]) {
    let ensure = |t: &mut DynTopo| {
        if t.triangles_around_vertex.is_none() {
            create_triangles_around_vertex(t);
        }
    };
    super::rename_removed_points(t, ids, ensure, |t| (&mut t.triangles_around_vertex, &mut t.mesh.triangles));
}

/// Triangle-level part of an edge removal (`edges_in_triangle`, `triangles_around_edge`): the
/// last edge's triangles now name the edge taking its place. Runs before the edge list shrinks.
pub(crate) fn on_edges_removed(t: &mut DynTopo, ids: &[usize]) {
    let ensure = |t: &mut DynTopo| {
        if t.triangles_around_edge.is_none() {
            create_triangles_around_edge(t);
        }
    };
    let n = t.mesh.edges.len();
    super::rename_removed_items(t, ids, Some(n), ensure, |t| (&mut t.triangles_around_edge, &mut t.edges_in_triangle));
}

/// Triangle-level part of a point addition.
pub(crate) fn on_points_added(t: &mut DynTopo, _count: usize) {
    let n = t.nb_points;
    if let Some(shells) = t.triangles_around_vertex.as_mut() {
        shells.resize(n, Vec::new());
    }
}

/// Triangle-level part of an edge addition (`triangles_around_edge` grows).
pub(crate) fn on_edges_added(t: &mut DynTopo, count: usize) {
    super::grow_shells(&mut t.triangles_around_edge, count, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use settee_core::topology_change::TopologyChange;
    use settee_core::MeshData;

    /// T0 = [0,1,2], T1 = [0,2,3], T2 = [2,1,4] with the edges SOFA derives from them (each
    /// side (t[j+1], t[j+2]) at its first appearance): E0 [1,2], E1 [2,0], E2 [0,1], E3 [2,3],
    /// E4 [3,0], E5 [1,4], E6 [4,2].
    fn fan() -> DynTopo {
        let triangles = vec![[0, 1, 2], [0, 2, 3], [2, 1, 4]];
        let edges = vec![[1, 2], [2, 0], [0, 1], [2, 3], [3, 0], [1, 4], [4, 2]];
        DynTopo::new(ElementKind::Triangle, 5, MeshData { edges, triangles, ..MeshData::default() })
    }

    #[test]
    fn shells_are_built_as_sofa_builds_them() {
        let mut t = fan();
        init_shells(&mut t);
        assert_eq!(t.edges_in_triangle, Some(vec![[0, 1, 2], [3, 4, 1], [5, 6, 0]]));
        assert_eq!(t.triangles_around_vertex, Some(vec![vec![0, 1], vec![0, 2], vec![0, 1, 2], vec![1], vec![2]]));
        // A triangle seeing the edge in its own direction goes first.
        assert_eq!(t.triangles_around_edge, Some(vec![vec![0, 2], vec![0, 1], vec![0], vec![1], vec![1], vec![2], vec![2]]));
        assert_eq!(t.edges_around_vertex, Some(vec![vec![1, 2, 4], vec![0, 2, 5], vec![0, 1, 3, 6], vec![3, 4], vec![5, 6]]));
    }

    #[test]
    fn removing_a_triangle_removes_its_isolated_edges_then_points() {
        let mut t = fan();
        remove_triangles(&mut t, vec![1], true, true);
        // T2 takes slot 1; E3 and E4 lose their only triangle and go (4 then 3: E6 takes slot
        // 4, E5 slot 3); point 3 loses its only triangle and goes (point 4 takes its place).
        assert_eq!(t.mesh.triangles, vec![[0, 1, 2], [2, 1, 3]]);
        assert_eq!(t.mesh.edges, vec![[1, 2], [2, 0], [0, 1], [1, 3], [3, 2]]);
        assert_eq!(t.nb_points, 4);
        assert_eq!(t.edges_in_triangle, Some(vec![[0, 1, 2], [3, 4, 0]]));
        assert_eq!(t.triangles_around_vertex, Some(vec![vec![0], vec![0, 1], vec![0, 1], vec![1]]));
        assert_eq!(t.triangles_around_edge, Some(vec![vec![0, 1], vec![0], vec![0], vec![1], vec![1]]));
        assert_eq!(t.edges_around_vertex, Some(vec![vec![1, 2], vec![0, 2, 3], vec![0, 1, 4], vec![3, 4]]));
        assert_eq!(
            t.log,
            vec![
                TopologyChange::Removed { kind: ElementKind::Triangle, indices: vec![1], elements: vec![vec![0, 2, 3]] },
                TopologyChange::Removed { kind: ElementKind::Edge, indices: vec![4, 3], elements: vec![vec![3, 0], vec![2, 3]] },
                TopologyChange::Removed { kind: ElementKind::Point, indices: vec![3], elements: vec![vec![]] },
            ]
        );
    }

    #[test]
    fn removing_without_isolated_items_keeps_edges_and_points() {
        let mut t = fan();
        remove_triangles(&mut t, vec![0, 2], false, false);
        assert_eq!(t.mesh.triangles, vec![[0, 2, 3]]);
        assert_eq!(t.mesh.edges.len(), 7);
        assert_eq!(t.nb_points, 5);
        assert_eq!(t.edges_in_triangle, Some(vec![[3, 4, 1]]));
        assert_eq!(t.triangles_around_edge, Some(vec![vec![], vec![0], vec![], vec![0], vec![0], vec![], vec![]]));
        assert_eq!(t.log.len(), 1);
    }

    #[test]
    fn adding_a_triangle_creates_its_missing_edges_first() {
        let triangles = vec![[0, 1, 2]];
        let edges = vec![[1, 2], [2, 0], [0, 1]];
        let mut t = DynTopo::new(ElementKind::Triangle, 4, MeshData { edges, triangles, ..MeshData::default() });
        add_triangles(&mut t, &[[0, 2, 3]], vec![], vec![]);
        // Sides (2,3) and (3,0) are new edges 3 and 4; side (0,2) is edge 1 ([2,0]).
        assert_eq!(t.mesh.edges, vec![[1, 2], [2, 0], [0, 1], [2, 3], [3, 0]]);
        assert_eq!(t.edges_in_triangle, Some(vec![[0, 1, 2], [3, 4, 1]]));
        assert_eq!(t.triangles_around_edge, Some(vec![vec![0], vec![0, 1], vec![0], vec![1], vec![1]]));
        assert_eq!(t.triangles_around_vertex, Some(vec![vec![0, 1], vec![0], vec![0, 1], vec![1]]));
        let added = |kind, e: Vec<usize>| TopologyChange::Added { kind, count: 1, elements: vec![e], ancestors: vec![], coefs: vec![] };
        assert_eq!(
            t.log,
            vec![added(ElementKind::Edge, vec![2, 3]), added(ElementKind::Edge, vec![3, 0]), added(ElementKind::Triangle, vec![0, 2, 3])]
        );
    }

    #[test]
    fn an_empty_container_grows_its_shells_with_its_first_triangles() {
        let mut t = DynTopo::new(ElementKind::Triangle, 3, MeshData::default());
        add_triangles(&mut t, &[[0, 1, 2], [1, 3, 2]], vec![], vec![]);
        assert_eq!(t.nb_points, 4);
        assert_eq!(t.mesh.edges, vec![[1, 2], [2, 0], [0, 1], [3, 2], [1, 3]]);
        assert_eq!(t.edges_in_triangle, Some(vec![[0, 1, 2], [3, 0, 4]]));
        assert_eq!(t.triangles_around_edge, Some(vec![vec![0, 1], vec![0], vec![0], vec![1], vec![1]]));
        consistent(&t).unwrap();
    }

    /// Every element's vertices exist, and every existing shell lists exactly the elements
    /// using each point/edge (adjacency symmetric with the lists).
    pub(crate) fn consistent(t: &DynTopo) -> Result<(), String> {
        let n = t.nb_points;
        for (i, e) in t.mesh.edges.iter().enumerate() {
            if e.iter().any(|&v| v >= n) {
                return Err(format!("edge {i} {e:?} names a point beyond {n}"));
            }
        }
        for (i, tri) in t.mesh.triangles.iter().enumerate() {
            if tri.iter().any(|&v| v >= n) {
                return Err(format!("triangle {i} {tri:?} names a point beyond {n}"));
            }
        }
        let check = |name: &str, shells: &Vec<Vec<usize>>, expected: Vec<Vec<usize>>| -> Result<(), String> {
            if shells.len() != expected.len() {
                return Err(format!("{name} has {} entries for {}", shells.len(), expected.len()));
            }
            for (k, (s, e)) in shells.iter().zip(&expected).enumerate() {
                let (mut s, mut e) = (s.clone(), e.clone());
                s.sort_unstable();
                e.sort_unstable();
                if s != e {
                    return Err(format!("{name}[{k}] = {s:?}, the lists say {e:?}"));
                }
            }
            Ok(())
        };
        if let Some(eav) = &t.edges_around_vertex {
            let mut exp = vec![Vec::new(); n];
            for (i, e) in t.mesh.edges.iter().enumerate() {
                exp[e[0]].push(i);
                exp[e[1]].push(i);
            }
            check("edges_around_vertex", eav, exp)?;
        }
        if let Some(tav) = &t.triangles_around_vertex {
            let mut exp = vec![Vec::new(); n];
            for (i, tri) in t.mesh.triangles.iter().enumerate() {
                for &v in tri {
                    exp[v].push(i);
                }
            }
            check("triangles_around_vertex", tav, exp)?;
        }
        if let Some(eit) = &t.edges_in_triangle {
            if eit.len() != t.mesh.triangles.len() {
                return Err(format!("edges_in_triangle has {} entries for {} triangles", eit.len(), t.mesh.triangles.len()));
            }
            for (i, (tri, sides)) in t.mesh.triangles.iter().zip(eit).enumerate() {
                for (j, &e) in sides.iter().enumerate() {
                    let (a, b) = side(tri, j);
                    let Some(edge) = t.mesh.edges.get(e) else { return Err(format!("triangle {i} side {j} names edge {e}")) };
                    if !((edge[0] == a && edge[1] == b) || (edge[0] == b && edge[1] == a)) {
                        return Err(format!("triangle {i} {tri:?} side {j} is edge {e} {edge:?}"));
                    }
                }
            }
            if let Some(tae) = &t.triangles_around_edge {
                let mut exp = vec![Vec::new(); t.mesh.edges.len()];
                for (i, sides) in eit.iter().enumerate() {
                    for &e in sides {
                        exp[e].push(i);
                    }
                }
                check("triangles_around_edge", tae, exp)?;
            }
        }
        Ok(())
    }

    mod random {
        use super::super::*;
        use super::consistent;
        use proptest::prelude::*;
        use settee_core::MeshData;

        /// A grid of 3×3 squares, two triangles each (16 points, 18 triangles).
        fn grid() -> DynTopo {
            let mut triangles = Vec::new();
            for y in 0..3 {
                for x in 0..3 {
                    let p = y * 4 + x;
                    triangles.push([p, p + 1, p + 5]);
                    triangles.push([p, p + 5, p + 4]);
                }
            }
            let edges = crate::mesh::edges_from_surface(&triangles, &[]);
            let points = (0..16).map(|i| [(i % 4) as f64, (i / 4) as f64, 0.0]).collect();
            DynTopo::new(ElementKind::Triangle, 16, MeshData { points, edges, triangles, ..MeshData::default() })
        }

        proptest! {
            #[test]
            /// Removals either all remove the isolated edges and points or none does (mixing
            /// them leaves, as in SOFA, points of kept edges without triangles, which a later
            /// removal deletes under the edge).
            fn random_removals_and_additions_keep_the_topology_consistent(
                isolate in any::<bool>(),
                ops in prop::collection::vec((0u8..4, prop::collection::vec(0usize..1000, 1..6), any::<bool>()), 1..25)
            ) {
                let mut t = grid();
                for (op, raw, flag) in ops {
                    match op {
                        0 | 1 => {
                            let n = t.mesh.triangles.len();
                            if n == 0 { continue; }
                            let ids = raw.iter().map(|r| r % n).collect();
                            remove_triangles(&mut t, ids, isolate, isolate);
                        }
                        2 => {
                            // New triangles on three distinct existing points (or a new one).
                            let n = t.nb_points;
                            if n < 3 { continue; }
                            let mut tris = Vec::new();
                            for r in raw.chunks(3).filter(|c| c.len() == 3) {
                                let a = r[0] % n;
                                let b = (a + 1 + r[1] % (n - 1)) % n;
                                let c = if flag { n } else { (0..n).find(|&c| c != a && c != b && (c + r[2]) % 2 == 0).unwrap_or_else(|| (0..n).find(|&c| c != a && c != b).unwrap()) };
                                tris.push([a, b, c]);
                            }
                            add_triangles(&mut t, &tris, vec![], vec![]);
                        }
                        _ => {
                            let count = raw.len();
                            let a = raw[0] % t.nb_points.max(1);
                            point::add_points(&mut t, count, vec![vec![a]], vec![vec![1.0]]);
                        }
                    }
                    if let Err(e) = consistent(&t) {
                        prop_assert!(false, "{e}");
                    }
                }
            }
        }
    }
}
