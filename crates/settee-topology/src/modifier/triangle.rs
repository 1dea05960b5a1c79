//! TriangleSet level (`TriangleSetTopologyModifier`, `TriangleSetTopologyContainer`).

use super::DynTopo;

/// SOFA's `removeTriangles(ids, removeIsolatedEdges, removeIsolatedPoints)` (`removeItems` uses
/// true, true).
pub fn remove_triangles(t: &mut DynTopo, ids: Vec<usize>, remove_isolated_edges: bool, remove_isolated_points: bool) {
    let _ = (t, ids, remove_isolated_edges, remove_isolated_points);
    todo!()
}

/// SOFA's `addTriangles` (with optional ancestors and coefficients).
pub fn add_triangles(t: &mut DynTopo, triangles: &[[usize; 3]], ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) {
    let _ = (t, triangles, ancestors, coefs);
    todo!()
}

/// Triangle-level part of a point removal.
pub(crate) fn on_points_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Triangle-level part of an edge removal (`edges_in_triangle`, `triangles_around_edge`).
pub(crate) fn on_edges_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Triangle-level part of a point addition.
pub(crate) fn on_points_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}

/// Triangle-level part of an edge addition (`triangles_around_edge` grows).
pub(crate) fn on_edges_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}
