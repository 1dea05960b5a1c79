//! EdgeSet level (`EdgeSetTopologyModifier`, `EdgeSetTopologyContainer`).

use super::DynTopo;

/// SOFA's `removeEdges(ids, removeIsolatedPoints)`.
pub fn remove_edges(t: &mut DynTopo, ids: Vec<usize>, remove_isolated_points: bool) {
    let _ = (t, ids, remove_isolated_points);
    todo!()
}

/// SOFA's `addEdges`.
pub fn add_edges(t: &mut DynTopo, edges: &[[usize; 2]]) {
    let _ = (t, edges);
    todo!()
}

/// Edge-level part of a point removal (called by [`super::point::remove_points`] for each
/// level, higher levels first): renames the last point in the edges and `edges_around_vertex`.
pub(crate) fn on_points_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Edge-level part of a point addition (`edges_around_vertex` grows).
pub(crate) fn on_points_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}
