//! HexahedronSet level (`HexahedronSetTopologyModifier`, `HexahedronSetTopologyContainer`).

use super::DynTopo;

/// SOFA's `removeHexahedra(ids, removeIsolatedItems)` (`removeItems` uses true).
pub fn remove_hexahedra(t: &mut DynTopo, ids: Vec<usize>, remove_isolated: bool) {
    let _ = (t, ids, remove_isolated);
    todo!()
}

/// SOFA's `addHexahedra`.
pub fn add_hexahedra(t: &mut DynTopo, hexahedra: &[[usize; 8]]) {
    let _ = (t, hexahedra);
    todo!()
}

/// Hexahedron-level part of a point removal.
pub(crate) fn on_points_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Hexahedron-level part of an edge removal.
pub(crate) fn on_edges_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Hexahedron-level part of a quad removal.
pub(crate) fn on_quads_removed(t: &mut DynTopo, ids: &[usize]) {
    let _ = (t, ids);
    todo!()
}

/// Hexahedron-level part of a point addition.
pub(crate) fn on_points_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}

/// Hexahedron-level part of an edge addition.
pub(crate) fn on_edges_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}

/// Hexahedron-level part of a quad addition.
pub(crate) fn on_quads_added(t: &mut DynTopo, count: usize) {
    let _ = (t, count);
    todo!()
}
