//! QuadSet level (`QuadSetTopologyModifier`, `QuadSetTopologyContainer`).

use super::DynTopo;

/// SOFA's `removeQuads(ids, removeIsolatedEdges, removeIsolatedPoints)` (`removeItems` uses
/// true, true).
pub fn remove_quads(t: &mut DynTopo, ids: Vec<usize>, remove_isolated_edges: bool, remove_isolated_points: bool) {
    let _ = (t, ids, remove_isolated_edges, remove_isolated_points);
    todo!()
}

/// SOFA's `addQuads`.
pub fn add_quads(t: &mut DynTopo, quads: &[[usize; 4]]) {
    let _ = (t, quads);
    todo!()
}

/// Quad-level part of a point removal.
pub(crate) fn on_points_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Quad-level part of an edge removal.
pub(crate) fn on_edges_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Quad-level part of a point addition.
pub(crate) fn on_points_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}

/// Quad-level part of an edge addition.
pub(crate) fn on_edges_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}
