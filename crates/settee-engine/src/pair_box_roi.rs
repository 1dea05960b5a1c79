//! `PairBoxROI`: the points inside an outer box and outside an inner one (a frame, the border of a
//! patch).
//!
//! Follows SOFA's `PairBoxROI` (Vec3d, Rigid3d, Vec6d):
//! * input `position` (alias `rest_position`; when not set: the `rest_position` of the node's
//!   first mechanical state, else the `position` of the node's first loader, else the
//!   `rest_position` of the nearest state above);
//! * both boxes are normalised (min ≤ max); a point (its first three coordinates) is selected
//!   when `inclusiveBox` holds it and `includedBox` does not, bounds inclusive;
//! * when either box is all zeros (the default) nothing is computed and the outputs stay empty;
//! * computed at init and again when the positions change.

use settee_core::role::{self, Engine};
use settee_core::{component, Component, ComponentId, InitCtx, Layout, SimResult};

/// `min ≤ p ≤ max` on the three axes.
fn in_box(p: &[f64], b: &[f64; 6]) -> bool {
    p[0] >= b[0] && p[0] <= b[3] && p[1] >= b[1] && p[1] <= b[4] && p[2] >= b[2] && p[2] <= b[5]
}

/// The box with its corners ordered.
fn normalised(b: &[f64]) -> [f64; 6] {
    [b[0].min(b[3]), b[1].min(b[4]), b[2].min(b[5]), b[0].max(b[3]), b[1].max(b[4]), b[2].max(b[5])]
}

/// The indices of the points (`coord_size` reals each) inside `outer` and not inside `inner`.
pub fn select(coords: &[f64], coord_size: usize, outer: &[f64; 6], inner: &[f64; 6]) -> Vec<usize> {
    coords.chunks_exact(coord_size).enumerate().filter(|(_, p)| in_box(p, outer) && !in_box(p, inner)).map(|(i, _)| i).collect()
}

/// Find the primitives inside a given box.
///
/// The PairBoxROI engine: points between an inclusive and an included box.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d", "Rigid3d", "Vec6d"],
    template_rule = FromStateWhenNotGiven,
    create = |args| PairBoxROI { layout: args.layout.unwrap_or(Layout::Vec3) },
    data = {
        /// Inclusive box defined by xmin,ymin,zmin, xmax,ymax,zmax
        inclusiveBox: Fixed(6) as Reals = "0 0 0 0 0 0",
        /// Included box defined by xmin,ymin,zmin, xmax,ymax,zmax
        includedBox: Fixed(6) as Reals = "0 0 0 0 0 0",
        /// Rest position coordinates of the degrees of freedom (default: the context state's rest positions)
        #[alias("rest_position")]
        position: Coords,
        /// Vertices of the mesh loaded (unused, as in SOFA)
        meshPosition: Coords,
        /// output: Indices of the points contained in the ROI
        indices: Indices,
        /// output: Points contained in the ROI
        #[alias("pointsInBox")]
        pointsInROI: Coords,
        /// Draw Inclusive Box (rendering only)
        drawInclusiveBox: Bool = "false",
        /// Draw Included Box (rendering only)
        drawIncludedBox: Bool = "false",
        /// Draw Points (rendering only)
        drawPoints: Bool = "false",
        /// Draw Size (rendering only)
        drawSize: Real = "0",
    },
)]
#[derive(Clone)]
pub struct PairBoxROI {
    layout: Layout,
}

impl PairBoxROI {
    /// The component whose Data feeds `position` when it is not set, and the Data name.
    fn position_source(cx: &InitCtx) -> Option<(ComponentId, &'static str)> {
        let node = cx.node();
        if let Some(ms) = cx.scene.find_local(node, role::MECHANICAL_STATE) {
            return Some((ms, "rest_position"));
        }
        if let Some(l) = cx.scene.find_local(node, role::LOADER) {
            return Some((l, "position"));
        }
        cx.scene.find_up(node, role::MECHANICAL_STATE).map(|ms| (ms, "rest_position"))
    }

    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let (outer, inner) = (d.get(Self::INCLUSIVE_BOX).to_vec(), d.get(Self::INCLUDED_BOX).to_vec());
        if outer.iter().all(|&v| v == 0.0) || inner.iter().all(|&v| v == 0.0) {
            return Ok(());
        }
        let (outer, inner) = (normalised(&outer), normalised(&inner));
        let cs = self.layout.coord_size();
        let coords = d.get(Self::POSITION);
        let indices = select(coords, cs, &outer, &inner);
        let points: Vec<f64> = indices.iter().flat_map(|&i| coords[i * cs..(i + 1) * cs].to_vec()).collect();
        let out = cx.data_mut();
        out.put(Self::INCLUSIVE_BOX, outer.to_vec());
        out.put(Self::INCLUDED_BOX, inner.to_vec());
        out.put(Self::INDICES, indices);
        out.put(Self::POINTS_IN_ROI, points);
        Ok(())
    }
}

impl Component for PairBoxROI {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if !cx.data().is_given(Self::POSITION) {
            let Some((src, field)) = Self::position_source(cx) else {
                return Err(cx
                    .error("no positions: `position` is not set and there is no MechanicalObject or mesh loader in this node or above")
                    .hint("set `position=\"@dofs.rest_position\"` or add a MechanicalObject before the PairBoxROI"));
            };
            cx.scene.link_data(cx.id, "position", src, field)?;
        }
        self.update(cx)
    }

    /// A DataEngine: the selection follows the positions.
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    /// The 3×3 grid of the unit square (step 0.5): the frame between the boxes [-0.1, 1.1]² and
    /// [0.1, 0.9]² is the 8 points around the centre (4).
    #[test]
    fn frame_of_a_grid() {
        let mut x = Vec::new();
        for j in 0..3 {
            for i in 0..3 {
                x.extend([i as f64 * 0.5, j as f64 * 0.5, 0.0]);
            }
        }
        let outer = normalised(&[1.1, 1.1, 0.0, -0.1, -0.1, 0.0]);
        let inner = normalised(&[0.1, 0.1, 0.0, 0.9, 0.9, 0.0]);
        assert_eq!(select(&x, 3, &outer, &inner), [0, 1, 2, 3, 5, 6, 7, 8]);
        // an inner box touching the point 4 only on its bound excludes it too (inclusive)
        assert_eq!(select(&x, 3, &outer, &[0.5, 0.5, 0.0, 0.6, 0.6, 0.0]), [0, 1, 2, 3, 5, 6, 7, 8]);
        // a point exactly on the outer bound is selected
        assert_eq!(select(&[1.1, 0.0, 0.0], 3, &outer, &inner), [0]);
    }

    /// In a scene, as in PatchTestConstraint.scn: the node's state's rest positions, boxes
    /// normalised, `pointsInROI` the selected coordinates; a zero box computes nothing.
    #[test]
    fn scene_reads_the_local_state() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "RegularGridTopology", &[("n", "3 3 1"), ("min", "0 0 0"), ("max", "1 1 0")]);
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[]);
        let e = add(&mut s, &f, Scene::ROOT, "PairBoxROI", &[("inclusiveBox", "1.1 1.1 0  -0.1 -0.1 0"), ("includedBox", "0.1 0.1 0 0.9 0.9 0")]);
        let z = add(&mut s, &f, Scene::ROOT, "PairBoxROI", &[("inclusiveBox", "-1 -1 -1 2 2 2")]);
        init_scene(&mut s).unwrap();
        let d = &s.entry(e).data;
        assert_eq!(d.indices("indices"), [0, 1, 2, 3, 5, 6, 7, 8]);
        assert_eq!(d.reals("inclusiveBox"), [-0.1, -0.1, 0.0, 1.1, 1.1, 0.0]);
        assert_eq!(&d.reals("pointsInROI")[9..12], [0.0, 0.5, 0.0]);
        assert!(s.entry(z).data.indices("indices").is_empty());
    }

    #[test]
    fn missing_positions_is_an_error() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "PairBoxROI", &[]);
        let e = init_scene(&mut s).unwrap_err();
        assert!(e.diagnostic().message.contains("no positions"));
    }
}
