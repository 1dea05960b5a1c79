//! PointSet level (`PointSetTopologyModifier`, `PointSetTopologyContainer`).
//!
//! The point level only counts points: removing or adding points changes `nb_points` (and the
//! container's rest positions when it has one per point). Every element list that names the
//! points lives in a higher level, which renames its elements through its hook before the count
//! changes, as SOFA's `removePointsProcess` overrides do before calling their parent's.

use super::{edge, hexahedron, quad, tetrahedron, triangle, DynTopo};
use settee_core::topology_change::ElementKind;

/// True when a container of `t`'s kind is, in SOFA's class hierarchy, a container of `level`
/// (PointSet ⊂ EdgeSet ⊂ TriangleSet ⊂ TetrahedronSet, EdgeSet ⊂ QuadSet ⊂ HexahedronSet): its
/// modifier has that level's overrides.
pub(crate) fn has_level(t: &DynTopo, level: ElementKind) -> bool {
    use ElementKind::*;
    match level {
        Point => true,
        Edge => t.kind != Point,
        Triangle => matches!(t.kind, Triangle | Tetrahedron),
        Quad => matches!(t.kind, Quad | Hexahedron),
        Tetrahedron => t.kind == Tetrahedron,
        Hexahedron => t.kind == Hexahedron,
    }
}

/// A level's part of a removal of lower items (their ids in decreasing order).
pub(crate) type RemovalHook = fn(&mut DynTopo, &[usize]);

/// A level's part of an addition of lower items (their count).
pub(crate) type AdditionHook = fn(&mut DynTopo, usize);

/// Calls the hooks of the levels `t`'s container has, in the order given: each level's part of
/// a change made at a lower level.
pub(crate) fn run_hooks<H: Copy>(t: &mut DynTopo, hooks: &[(ElementKind, H)], call: impl Fn(&mut DynTopo, H)) {
    for &(level, hook) in hooks {
        if has_level(t, level) {
            call(t, hook);
        }
    }
}

/// The ids of a removal as SOFA's `remove*Warning` leaves them: in decreasing order. Ids naming
/// no element (`>= len`) are dropped (SOFA's `removeTriangles`/`removeEdges` filter them with a
/// warning) and so are repeats (removing an index twice would remove the element swapped in).
pub(crate) fn removal_order(mut ids: Vec<usize>, len: usize) -> Vec<usize> {
    ids.retain(|&i| i < len);
    ids.sort_unstable_by(|a, b| b.cmp(a));
    ids.dedup();
    ids
}

/// SOFA's `removePoints`: sorts `ids` in decreasing order (`removePointsWarning`), logs the
/// removal, then removes each point by swap-with-last, renaming the moved point in every
/// element list and shell of every level (hooks of the higher levels first).
pub fn remove_points(t: &mut DynTopo, ids: Vec<usize>) {
    let ids = removal_order(ids, t.nb_points);
    if ids.is_empty() {
        return;
    }
    t.log_removed(ElementKind::Point, &ids);
    remove_points_process(t, &ids);
}

/// SOFA's `removePointsProcess` chain for `ids` already in decreasing order: each level renames
/// the last point into the removed one (most-derived level first), then the count shrinks.
pub(crate) fn remove_points_process(t: &mut DynTopo, ids: &[usize]) {
    use ElementKind::*;
    let hooks: [(ElementKind, RemovalHook); 5] = [
        (Tetrahedron, tetrahedron::on_points_removed),
        (Hexahedron, hexahedron::on_points_removed),
        (Triangle, triangle::on_points_removed),
        (Quad, quad::on_points_removed),
        (Edge, edge::on_points_removed),
    ];
    run_hooks(t, &hooks, |t, hook| hook(t, ids));
    if t.mesh.points.len() == t.nb_points {
        for &i in ids {
            if i < t.mesh.points.len() {
                t.mesh.points.swap_remove(i);
            }
        }
    }
    t.nb_points -= ids.len().min(t.nb_points);
}

/// SOFA's `addPoints`: appends `count` points (each made from `ancestors`/`coefs` when given).
pub fn add_points(t: &mut DynTopo, count: usize, ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) {
    if count == 0 {
        return;
    }
    add_points_process(t, count, &ancestors, &coefs);
    t.log_added(ElementKind::Point, Vec::new(), count, ancestors, coefs);
}

/// SOFA's `addPointsProcess` chain: the count grows, then every level's point shells grow.
/// The rest positions (when there is one per point) get the ancestors' weighted combination
/// (uniform weights when no coefficients are given), or the origin for points without
/// ancestors.
pub(crate) fn add_points_process(t: &mut DynTopo, count: usize, ancestors: &[Vec<usize>], coefs: &[Vec<f64>]) {
    if t.mesh.points.len() == t.nb_points {
        let old = t.mesh.points.len();
        for k in 0..count {
            let a = ancestors.get(k).map(Vec::as_slice).unwrap_or(&[]);
            let w = coefs.get(k).map(Vec::as_slice).unwrap_or(&[]);
            let mut p = [0.0; 3];
            let known: Vec<usize> = a.iter().copied().filter(|&i| i < old).collect();
            for (j, &i) in a.iter().enumerate() {
                if i >= old {
                    continue;
                }
                let c = if w.len() == a.len() { w[j] } else { 1.0 / known.len() as f64 };
                for (x, y) in p.iter_mut().zip(t.mesh.points[i]) {
                    *x += c * y;
                }
            }
            t.mesh.points.push(p);
        }
    }
    t.nb_points += count;
    use ElementKind::*;
    let hooks: [(ElementKind, AdditionHook); 5] = [
        (Edge, edge::on_points_added),
        (Triangle, triangle::on_points_added),
        (Quad, quad::on_points_added),
        (Tetrahedron, tetrahedron::on_points_added),
        (Hexahedron, hexahedron::on_points_added),
    ];
    run_hooks(t, &hooks, |t, hook| hook(t, count));
}

#[cfg(test)]
mod tests {
    use super::*;
    use settee_core::topology_change::TopologyChange;
    use settee_core::MeshData;

    #[test]
    fn a_point_set_removes_by_swap_with_last_in_decreasing_order() {
        let points = (0..5).map(|i| [i as f64, 0.0, 0.0]).collect();
        let mut t = DynTopo::new(ElementKind::Point, 5, MeshData { points, ..MeshData::default() });
        remove_points(&mut t, vec![1, 3, 9]);
        // 9 does not exist; 3 then 1: [0,1,2,4] then [0,4,2].
        assert_eq!(t.nb_points, 3);
        assert_eq!(t.mesh.points.iter().map(|p| p[0]).collect::<Vec<_>>(), vec![0.0, 4.0, 2.0]);
        assert_eq!(t.log, vec![TopologyChange::Removed { kind: ElementKind::Point, indices: vec![3, 1], elements: vec![vec![], vec![]] }]);
    }

    #[test]
    fn added_points_interpolate_their_ancestors() {
        let points = vec![[0.0, 0.0, 0.0], [2.0, 4.0, 0.0]];
        let mut t = DynTopo::new(ElementKind::Point, 2, MeshData { points, ..MeshData::default() });
        add_points(&mut t, 2, vec![vec![0, 1]], vec![vec![0.25, 0.75]]);
        assert_eq!(t.nb_points, 4);
        assert_eq!(t.mesh.points[2], [1.5, 3.0, 0.0]);
        assert_eq!(t.mesh.points[3], [0.0, 0.0, 0.0]);
        assert!(matches!(&t.log[0], TopologyChange::Added { kind: ElementKind::Point, count: 2, .. }));
    }
}
