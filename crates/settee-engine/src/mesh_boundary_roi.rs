//! `MeshBoundaryROI`: the points on the boundary of a triangle/quad surface.
//!
//! Follows SOFA's `MeshBoundaryROI`: the elements whose points are all in `inputROI` (every
//! element when it is empty) count their sides; a side used by exactly one element is on the
//! boundary, and `indices` lists the points of the boundary sides in increasing order, once each.
//! `triangles` and `quads` default to the lists of the node's topology. Computed at init and
//! when an input changes.

use std::collections::{BTreeMap, BTreeSet};

use settee_core::role::{self, Engine};
use settee_core::{component, Component, InitCtx, SimResult};

/// The boundary points of the surface made of `triangles` and `quads` (flat lists).
pub fn boundary_points(triangles: &[usize], quads: &[usize], roi: &[usize]) -> Vec<usize> {
    let in_roi = |v: usize| roi.is_empty() || roi.contains(&v);
    let mut count: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for element in triangles.chunks_exact(3).chain(quads.chunks_exact(4)) {
        if element.iter().all(|&v| in_roi(v)) {
            for j in 0..element.len() {
                let (a, b) = (element[j], element[(j + 1) % element.len()]);
                *count.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
    }
    let points: BTreeSet<usize> = count.into_iter().filter(|&(_, n)| n == 1).flat_map(|((a, b), _)| [a, b]).collect();
    points.into_iter().collect()
}

/// Outputs indices of boundary vertices of a triangle/quad mesh
///
/// The MeshBoundaryROI engine.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    create = |_| MeshBoundaryROI,
    data = {
        /// input triangles (default: the node's topology's)
        triangles: IndexTuples(3),
        /// input quads (default: the node's topology's)
        quads: IndexTuples(4),
        /// optional subset of the input mesh
        inputROI: Indices,
        /// output: Index lists of the closing vertices
        indices: Indices,
    },
)]
#[derive(Clone)]
pub struct MeshBoundaryROI;

impl Component for MeshBoundaryROI {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let missing = [(!d.is_given(Self::TRIANGLES), "triangles"), (!d.is_given(Self::QUADS), "quads")];
        match cx.scene.find_local(cx.node(), role::TOPOLOGY) {
            Some(topo) => {
                for (_, name) in missing.iter().filter(|m| m.0) {
                    if cx.scene.entry(topo).data.index_of(name).is_some() {
                        cx.scene.link_data(cx.id, name, topo, name)?;
                    }
                }
            }
            None if missing.iter().all(|m| m.0) => cx.warn("no topology given: no mesh to process"),
            None => {}
        }
        self.update(cx)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

impl MeshBoundaryROI {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let indices = boundary_points(d.get(Self::TRIANGLES), d.get(Self::QUADS), d.get(Self::INPUT_ROI));
        cx.data_mut().put(Self::INDICES, indices);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    /// A 3×3 grid of quads (points 0..15, row by row): the 12 points around it, not the 4 inner
    /// ones (5, 6, 9, 10).
    #[test]
    fn grid_boundary() {
        let mut quads = Vec::new();
        for j in 0..3 {
            for i in 0..3 {
                let a = j * 4 + i;
                quads.extend([a, a + 1, a + 5, a + 4]);
            }
        }
        assert_eq!(boundary_points(&[], &quads, &[]), [0, 1, 2, 3, 4, 7, 8, 11, 12, 13, 14, 15]);
        // restricted to the first quad's points: that quad alone, all four on its boundary
        assert_eq!(boundary_points(&[], &quads, &[0, 1, 5, 4]), [0, 1, 4, 5]);
        // two triangles of a square: the diagonal is shared, the 4 corners are on the boundary
        assert_eq!(boundary_points(&[0, 1, 2, 0, 2, 3], &[], &[]), [0, 1, 2, 3]);
        // a closed tetrahedron surface has no boundary
        assert!(boundary_points(&[0, 1, 2, 0, 3, 1, 1, 3, 2, 0, 2, 3], &[], &[]).is_empty());
    }

    #[test]
    fn scene_reads_the_node_topology() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 2  0 2 3  2 4 3")]);
        let e = add(&mut s, &f, Scene::ROOT, "MeshBoundaryROI", &[]);
        init_scene(&mut s).unwrap();
        assert_eq!(s.entry(e).data.indices("indices"), [0, 1, 2, 3, 4]);
    }
}
