//! PointSet level (`PointSetTopologyModifier`, `PointSetTopologyContainer`).

use super::DynTopo;

/// SOFA's `removePoints`: sorts `ids` in decreasing order (`removePointsWarning`), logs the
/// removal, then removes each point by swap-with-last, renaming the moved point in every
/// element list and shell of every level (hooks of the higher levels first).
pub fn remove_points(t: &mut DynTopo, ids: Vec<usize>) {
    let _ = (t, ids);
    todo!("point removal")
}

/// SOFA's `addPoints`: appends `count` points (each made from `ancestors`/`coefs` when given).
pub fn add_points(t: &mut DynTopo, count: usize, ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) {
    let _ = (t, count, ancestors, coefs);
    todo!("point addition")
}
