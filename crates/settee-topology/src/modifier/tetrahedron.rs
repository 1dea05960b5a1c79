//! TetrahedronSet level (`TetrahedronSetTopologyModifier`, `TetrahedronSetTopologyContainer`).

use super::DynTopo;

/// SOFA's `removeTetrahedra(ids, removeIsolatedItems)` (`removeItems` uses true).
pub fn remove_tetrahedra(t: &mut DynTopo, ids: Vec<usize>, remove_isolated: bool) {
    let _ = (t, ids, remove_isolated);
    todo!()
}

/// SOFA's `addTetrahedra`.
pub fn add_tetrahedra(t: &mut DynTopo, tetrahedra: &[[usize; 4]]) {
    let _ = (t, tetrahedra);
    todo!()
}

/// Tetrahedron-level part of a point removal.
pub(crate) fn on_points_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Tetrahedron-level part of an edge removal.
pub(crate) fn on_edges_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Tetrahedron-level part of a triangle removal.
pub(crate) fn on_triangles_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Tetrahedron-level part of a point addition.
pub(crate) fn on_points_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}

/// Tetrahedron-level part of an edge addition.
pub(crate) fn on_edges_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}

/// Tetrahedron-level part of a triangle addition.
pub(crate) fn on_triangles_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}
