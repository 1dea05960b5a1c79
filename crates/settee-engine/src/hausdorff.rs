//! `HausdorffDistance`: the directed distances between two point clouds — `d12`, the largest
//! distance from a point of `points1` to its nearest point of `points2`, `d21` the other way —
//! and the symmetric Hausdorff distance `max`, their larger.
//!
//! As in SOFA, computed at init, then at each step start only when `update` is set (the
//! component listens by default). An empty cloud gives 0 distances from it.

use settee_core::role::Engine;
use settee_core::{component, Component, ComponentId, InitCtx, Scene, SimResult};

/// Largest distance from a point of `a` to its nearest point of `b` (`k` reals per point).
pub fn directed(a: &[f64], b: &[f64], k: usize) -> f64 {
    let mut max = 0.0;
    for p in a.chunks_exact(k) {
        let mut min = f64::MAX;
        for q in b.chunks_exact(k) {
            let d = p.iter().zip(q).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt();
            if d < min {
                min = d;
            }
        }
        if min > max {
            max = min;
        }
    }
    max
}

/// Compute the Hausdorff distance of two point clouds.
#[component(
    module = "Sofa.Component.Engine.Analyze",
    markers = [Engine],
    templates = ["Vec3d", "Vec2d", "Vec1d"],
    create = |_| HausdorffDistance,
    data = {
        /// Points belonging to the first point cloud
        points1: Coords,
        /// Points belonging to the second point cloud
        points2: Coords,
        /// Distance from point cloud 1 to 2
        d12: Real = "0",
        /// Distance from point cloud 2 to 1
        d21: Real = "0",
        /// Symmetrical Hausdorff distance
        max: Real = "0",
        /// Recompute every time step
        update: Bool = "false",
    },
)]
#[derive(Clone)]
pub struct HausdorffDistance;

impl HausdorffDistance {
    fn compute(scene: &mut Scene, me: ComponentId) {
        let d = &scene.entry(me).data;
        let k = d.arity().coord.max(1);
        let (p1, p2) = (d.get(Self::POINTS1), d.get(Self::POINTS2));
        let (d12, d21) = (directed(p1, p2, k), directed(p2, p1, k));
        let dm = &mut scene.entry_mut(me).data;
        dm.put(Self::D12, d12);
        dm.put(Self::D21, d21);
        dm.put(Self::MAX, if d21 > d12 { d21 } else { d12 });
    }
}

impl Component for HausdorffDistance {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        Self::compute(cx.scene, cx.id);
        Ok(())
    }

    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        if scene.entry(me).data.get(Self::UPDATE) {
            Self::compute(scene, me);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::factory;
    use settee_core::simulation::init_root;
    use settee_core::testing::add;

    /// The unit square's corners against its centre (0.5, 0.5) and (3, 0.5): every corner is
    /// √0.5 from the centre; (3, 0.5) is √4.25 from its nearest corner. Cases 5–7 of the SOFA
    /// scene: 10 in 1, 2 and 3 dimensions; points {1, 4} against {0}: d12 = 4, d21 = 1.
    #[test]
    fn directed_and_symmetric_distances() {
        let square = [0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
        let other = [0.5, 0.5, 3.0, 0.5];
        assert_eq!(directed(&square, &other, 2), 0.5f64.sqrt());
        assert_eq!(directed(&other, &square, 2), (4.0f64 + 0.25).sqrt());
        let f = factory();
        let mut s = Scene::new("root");
        let ids: Vec<_> = [("Vec3d", "10 0 0", "0 0 0"), ("Vec2d", "10 0", "0 0"), ("Vec1d", "10", "0")]
            .into_iter()
            .map(|(t, a, b)| add(&mut s, &f, Scene::ROOT, "HausdorffDistance", &[("template", t), ("points1", a), ("points2", b)]))
            .collect();
        let moving =
            add(&mut s, &f, Scene::ROOT, "HausdorffDistance", &[("template", "Vec1d"), ("points1", "1 4"), ("points2", "0"), ("update", "true")]);
        init_root(&mut s, &f).unwrap();
        for c in ids {
            let d = &s.entry(c).data;
            assert_eq!((d.get(HausdorffDistance::D12), d.get(HausdorffDistance::D21), d.get(HausdorffDistance::MAX)), (10.0, 10.0, 10.0));
        }
        let d = &s.entry(moving).data;
        assert_eq!((d.get(HausdorffDistance::D12), d.get(HausdorffDistance::D21), d.get(HausdorffDistance::MAX)), (4.0, 1.0, 4.0));
        // With update set, a step start recomputes: points2 at 10 gives d12 = 9, d21 = 6.
        s.entry_mut(moving).data.put(HausdorffDistance::POINTS2, vec![10.0]);
        settee_core::simulation::animate_begin(&mut s).unwrap();
        let d = &s.entry(moving).data;
        assert_eq!((d.get(HausdorffDistance::D12), d.get(HausdorffDistance::D21), d.get(HausdorffDistance::MAX)), (9.0, 6.0, 9.0));
    }
}
