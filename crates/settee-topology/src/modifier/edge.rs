//! EdgeSet level (`EdgeSetTopologyModifier`, `EdgeSetTopologyContainer`).
//!
//! Shell of this level: `edges_around_vertex` (the edges using each point, in the order they
//! were attached). SOFA builds it when the container is initialised with edges, and whenever
//! an operation needs it and it is missing; the modifiers keep it up to date.

use super::point::{self, has_level, removal_order, AdditionHook, RemovalHook};
use super::{hexahedron, quad, tetrahedron, triangle, DynTopo};
use settee_core::topology_change::ElementKind;

/// SOFA's `createEdgesAroundVertexArray`: one shell per point, the edges in index order (edges
/// naming a point beyond the count are skipped, as SOFA does with a warning).
pub(crate) fn create_edges_around_vertex(t: &mut DynTopo) {
    let n = t.nb_points;
    let mut shells = vec![Vec::new(); n];
    for (i, e) in t.mesh.edges.iter().enumerate() {
        if e[0] >= n || e[1] >= n {
            continue;
        }
        shells[e[0]].push(i);
        shells[e[1]].push(i);
    }
    t.edges_around_vertex = Some(shells);
}

/// The shells SOFA's `init` builds for a container holding edges (`computeCrossElementBuffers`
/// of the edge level), built here at the first operation if they do not exist yet: the lists
/// are still the initial ones then, so the result is the one SOFA maintained since init.
pub(crate) fn init_shells(t: &mut DynTopo) {
    if t.edges_around_vertex.is_none() && !t.mesh.edges.is_empty() {
        create_edges_around_vertex(t);
    }
}

/// SOFA's `getEdgeIndex(v1, v2)`: the first edge around `v1` whose other end is `v2` (the shell
/// is created when missing).
pub(crate) fn edge_index(t: &mut DynTopo, v1: usize, v2: usize) -> Option<usize> {
    if t.mesh.edges.is_empty() {
        return None;
    }
    if t.edges_around_vertex.is_none() {
        create_edges_around_vertex(t);
    }
    let shells = t.edges_around_vertex.as_ref()?;
    let shell = shells.get(v1)?;
    shell.iter().copied().find(|&e| t.mesh.edges.get(e).is_some_and(|e| e[0] == v2 || e[1] == v2))
}

/// SOFA's `removeEdges(ids, removeIsolatedPoints)`.
pub fn remove_edges(t: &mut DynTopo, ids: Vec<usize>, remove_isolated_points: bool) {
    init_levels(t);
    let ids = removal_order(ids, t.mesh.edges.len());
    if ids.is_empty() {
        return;
    }
    t.log_removed(ElementKind::Edge, &ids);
    remove_edges_process(t, &ids, remove_isolated_points);
}

/// Builds the init shells of every level this file owns that the container has.
fn init_levels(t: &mut DynTopo) {
    if has_level(t, ElementKind::Triangle) {
        triangle::init_shells(t);
    }
    if has_level(t, ElementKind::Edge) {
        init_shells(t);
    }
}

/// SOFA's `removeEdgesProcess` chain for `ids` already in decreasing order (and logged): the
/// higher levels rename the last edge in their edge shells first, then the edges go by
/// swap-with-last, and the points left without edges are removed (when asked) in decreasing
/// order, with their own event.
pub(crate) fn remove_edges_process(t: &mut DynTopo, ids: &[usize], remove_isolated_points: bool) {
    use ElementKind::*;
    let hooks: [(ElementKind, RemovalHook); 4] = [
        (Tetrahedron, tetrahedron::on_edges_removed),
        (Hexahedron, hexahedron::on_edges_removed),
        (Triangle, triangle::on_edges_removed),
        (Quad, quad::on_edges_removed),
    ];
    point::run_hooks(t, &hooks, |t, hook| hook(t, ids));
    if t.mesh.edges.is_empty() {
        return;
    }
    if remove_isolated_points && t.edges_around_vertex.is_none() {
        create_edges_around_vertex(t);
    }
    let mut isolated = Vec::new();
    for (i, last) in super::swaps(ids, t.mesh.edges.len()) {
        super::leave_shells(t.edges_around_vertex.as_mut(), Some(&t.mesh.edges), i, last, remove_isolated_points, &mut isolated);
        t.mesh.edges.swap_remove(i);
    }
    if !isolated.is_empty() {
        point::remove_points(t, isolated);
    }
}

/// SOFA's `addEdges`.
pub fn add_edges(t: &mut DynTopo, edges: &[[usize; 2]]) {
    let process = |t: &mut DynTopo, edges: &[[usize; 2]]| {
        init_levels(t);
        add_edges_process(t, edges);
    };
    super::add_logged(t, ElementKind::Edge, edges, Vec::new(), Vec::new(), process);
}

/// SOFA's `addEdgesProcess` chain: each edge is appended and attached to the shells of its
/// points (the point count grows silently when an edge names a point beyond it, as SOFA's
/// `addEdgeProcess` does), then the higher levels' edge shells grow.
pub(crate) fn add_edges_process(t: &mut DynTopo, edges: &[[usize; 2]]) {
    for e in edges {
        let needed = e[0].max(e[1]) + 1;
        if needed > t.nb_points {
            t.nb_points = needed;
        }
        let n = t.nb_points;
        let id = t.mesh.edges.len();
        let shells = t.edges_around_vertex.get_or_insert_with(Vec::new);
        if shells.len() != n {
            shells.resize(n, Vec::new());
        }
        shells[e[0]].push(id);
        shells[e[1]].push(id);
        t.mesh.edges.push(*e);
    }
    use ElementKind::*;
    let hooks: [(ElementKind, AdditionHook); 4] = [
        (Triangle, triangle::on_edges_added),
        (Quad, quad::on_edges_added),
        (Tetrahedron, tetrahedron::on_edges_added),
        (Hexahedron, hexahedron::on_edges_added),
    ];
    let n = edges.len();
    point::run_hooks(t, &hooks, |t, hook| hook(t, n));
}

/// Edge-level part of a point removal (called by [`super::point::remove_points`] for each
/// level, higher levels first): renames the last point in the edges and `edges_around_vertex`.
pub(crate) fn on_points_removed(t: &mut DynTopo, ids: &[usize]) {
    let ensure = |t: &mut DynTopo| {
        if t.edges_around_vertex.is_none() {
            create_edges_around_vertex(t);
        }
    };
    super::rename_removed_points(t, ids, ensure, |t| (&mut t.edges_around_vertex, &mut t.mesh.edges));
}

/// Edge-level part of a point addition (`edges_around_vertex` grows).
pub(crate) fn on_points_added(t: &mut DynTopo, _count: usize) {
    let n = t.nb_points;
    if let Some(shells) = t.edges_around_vertex.as_mut() {
        shells.resize(n, Vec::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use settee_core::topology_change::TopologyChange;
    use settee_core::MeshData;

    /// A path 0-1-2-3 plus a separate edge 4-5.
    fn path() -> DynTopo {
        let edges = vec![[0, 1], [1, 2], [2, 3], [4, 5]];
        DynTopo::new(ElementKind::Edge, 6, MeshData { edges, ..MeshData::default() })
    }

    #[test]
    fn removing_edges_renumbers_by_swap_with_last_and_drops_isolated_points() {
        let mut t = path();
        remove_edges(&mut t, vec![0, 3], true);
        // Edge 3 ([4,5]) goes first (decreasing order), isolating 4 and 5; then edge 0 ([0,1])
        // takes the last edge [2,3], isolating 0. Points removed in decreasing order 5, 4, 0:
        // 5 and 4 are the last points; then 0 takes point 3 (the last one left), renamed in
        // the edge [2,3] now at slot 0.
        assert_eq!(t.mesh.edges, vec![[2, 0], [1, 2]]);
        assert_eq!(t.nb_points, 3);
        assert_eq!(t.edges_around_vertex, Some(vec![vec![0], vec![1], vec![1, 0]]));
        assert_eq!(
            t.log,
            vec![
                TopologyChange::Removed { kind: ElementKind::Edge, indices: vec![3, 0], elements: vec![vec![4, 5], vec![0, 1]] },
                TopologyChange::Removed { kind: ElementKind::Point, indices: vec![5, 4, 0], elements: vec![vec![], vec![], vec![]] },
            ]
        );
    }

    #[test]
    fn removing_edges_without_isolated_points_keeps_the_points() {
        let mut t = path();
        remove_edges(&mut t, vec![1], false);
        assert_eq!(t.mesh.edges, vec![[0, 1], [4, 5], [2, 3]]);
        assert_eq!(t.nb_points, 6);
        assert_eq!(t.edges_around_vertex, Some(vec![vec![0], vec![0], vec![2], vec![2], vec![1], vec![1]]));
    }

    #[test]
    fn added_edges_attach_to_their_points_and_grow_the_count() {
        let mut t = path();
        add_edges(&mut t, &[[3, 6]]);
        assert_eq!(t.nb_points, 7);
        assert_eq!(t.edges_around_vertex.as_ref().unwrap()[3], vec![2, 4]);
        assert_eq!(t.edges_around_vertex.as_ref().unwrap()[6], vec![4]);
        assert_eq!(
            t.log,
            vec![TopologyChange::Added { kind: ElementKind::Edge, count: 1, elements: vec![vec![3, 6]], ancestors: vec![], coefs: vec![] }]
        );
    }
}
