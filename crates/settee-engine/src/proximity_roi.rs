//! `ProximityROI`: at most `N` points, the nearest to spheres' centres, inside the spheres.
//!
//! Follows SOFA's `ProximityROI` (Vec3d):
//! * a point is a candidate when its distance to a centre is below (strictly) that sphere's
//!   radius; its key is the smallest such distance;
//! * the candidates are kept in a max-heap of at most `N` entries, visited in point order: SOFA
//!   uses `std::push_heap`/`std::pop_heap` of libstdc++ and lists `indices` in the heap's storage
//!   order, which is reproduced here step by step, as is the index SOFA adds to `indicesOut` when
//!   the heap is full (the heap's new largest, read after the removal);
//! * missing radii repeat the last one (written back into `radii`); no centre leaves the outputs
//!   as they are; no radius or `N = 0` is reported (SOFA's error, which does not stop the scene)
//!   and leaves them too;
//! * `position` (alias `rest_position`) defaults to the `rest_position` of the nearest Vec3 state,
//!   else the `position` of the nearest loader. Computed at init and when an input changes.

use settee_core::role::{self, Engine};
use settee_core::{component, Component, InitCtx, SimResult};

use crate::subset_topology::context_state_of_template;

/// One heap entry: a point and its distance (ordered by distance).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    index: usize,
    distance: f64,
}

/// libstdc++'s `__push_heap`: moves `value` up from `hole` towards `top`.
fn sift_up(heap: &mut [Entry], mut hole: usize, top: usize, value: Entry) {
    while hole > top {
        let parent = (hole - 1) / 2;
        if heap[parent].distance < value.distance {
            heap[hole] = heap[parent];
            hole = parent;
        } else {
            break;
        }
    }
    heap[hole] = value;
}

/// `std::push_heap` after a push at the end.
fn push_heap(heap: &mut [Entry]) {
    let last = heap.len() - 1;
    let value = heap[last];
    sift_up(heap, last, 0, value);
}

/// `std::pop_heap`: moves the largest to the end (libstdc++'s `__adjust_heap`).
fn pop_heap(heap: &mut [Entry]) {
    let len = heap.len() - 1;
    if len == 0 {
        return;
    }
    let value = heap[len];
    heap[len] = heap[0];
    let mut hole = 0;
    let mut child = 0;
    while len > 0 && child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if heap[child].distance < heap[child - 1].distance {
            child -= 1;
        }
        heap[hole] = heap[child];
        hole = child;
    }
    if len.is_multiple_of(2) && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        heap[hole] = heap[child - 1];
        hole = child - 1;
    }
    sift_up(&mut heap[..len], hole, 0, value);
}

/// The selection: `(indices, distances, indicesOut)`.
pub fn proximity(points: &[f64], spheres: &[([f64; 3], f64)], max: usize) -> (Vec<usize>, Vec<f64>, Vec<usize>) {
    let mut heap: Vec<Entry> = Vec::new();
    let mut out = Vec::new();
    for (i, p) in points.chunks_exact(3).enumerate() {
        let mut best = f64::MAX;
        for &(c, r) in spheres {
            let d = ((c[0] - p[0]).powi(2) + (c[1] - p[1]).powi(2) + (c[2] - p[2]).powi(2)).sqrt();
            if d < r && best > d {
                best = d;
            }
        }
        if best == f64::MAX {
            out.push(i);
            continue;
        }
        let entry = Entry { index: i, distance: best };
        if heap.is_empty() {
            heap.push(entry);
            push_heap(&mut heap);
        } else if heap[0].distance >= best {
            if heap.len() >= max {
                pop_heap(&mut heap);
                let removed = heap.pop().expect("non-empty heap");
                // SOFA reads the removed entry through a reference to the first slot.
                out.push(heap.first().unwrap_or(&removed).index);
            }
            heap.push(entry);
            push_heap(&mut heap);
        } else if heap.len() < max {
            heap.push(entry);
            push_heap(&mut heap);
        } else {
            out.push(i);
        }
    }
    (heap.iter().map(|e| e.index).collect(), heap.iter().map(|e| e.distance).collect(), out)
}

/// Find the N closest primitives from a given position
///
/// The ProximityROI engine.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| ProximityROI,
    data = {
        /// Center(s) of the sphere(s)
        centers: RealTuples(3),
        /// Radius(i) of the sphere(s)
        radii: Reals,
        /// Maximum number of points to select
        "N" as N: Int = "0",
        /// Rest position coordinates of the degrees of freedom (default: the context state's rest positions)
        #[alias("rest_position")]
        position: Coords,
        /// output: Indices of the points contained in the ROI
        #[alias("pointIndices")]
        indices: Indices = "0",
        /// output: Points contained in the ROI
        pointsInROI: Coords,
        /// output: distance between the points contained in the ROI and the closest center.
        distance: Reals,
        /// output: Indices of the points not contained in the ROI
        indicesOut: Indices,
        /// Draw sphere(s) (rendering only)
        #[alias("isVisible")]
        drawSphere: Bool = "false",
        /// Draw Points (rendering only)
        drawPoints: Bool = "false",
        /// rendering size for box and topological elements (rendering only)
        drawSize: Real = "1",
    },
)]
#[derive(Clone)]
pub struct ProximityROI;

impl Component for ProximityROI {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if !cx.data().is_given(Self::POSITION) {
            if let Some(ms) = context_state_of_template(cx, "Vec3d") {
                cx.scene.link_data(cx.id, "position", ms, "rest_position")?;
            } else if let Some(l) = cx.scene.find_up(cx.node(), role::LOADER) {
                cx.scene.link_data(cx.id, "position", l, "position")?;
            }
        }
        self.update(cx)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

impl ProximityROI {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let centers: Vec<[f64; 3]> = d.get(Self::CENTERS).chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        let mut radii = d.get(Self::RADII).to_vec();
        let max = d.get(Self::N);
        if centers.is_empty() {
            return Ok(());
        }
        let Some(&last) = radii.last() else {
            cx.warn("`radii` must hold at least one value: this ROI selects nothing");
            return Ok(());
        };
        if max <= 0 {
            cx.warn("`N` must be greater than zero: this ROI selects nothing");
            return Ok(());
        }
        if centers.len() > radii.len() {
            radii.resize(centers.len(), last);
            cx.data_mut().put(Self::RADII, radii.clone());
        } else if centers.len() < radii.len() {
            cx.warn("`radii` has more values than `centers`: the extra ones are ignored");
        }
        let spheres: Vec<([f64; 3], f64)> = centers.into_iter().zip(radii).collect();
        let x = cx.data().get(Self::POSITION).to_vec();
        let (indices, distances, out) = proximity(&x, &spheres, max as usize);
        let points: Vec<f64> = indices.iter().flat_map(|&i| x[i * 3..i * 3 + 3].to_vec()).collect();
        let o = cx.data_mut();
        o.put(Self::INDICES, indices);
        o.put(Self::DISTANCE, distances);
        o.put(Self::POINTS_IN_ROI, points);
        o.put(Self::INDICES_OUT, out);
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

    fn on_x(xs: &[f64]) -> Vec<f64> {
        xs.iter().flat_map(|&x| [x, 0.0, 0.0]).collect()
    }

    /// libstdc++'s heap order, worked by hand: distances 5, 3, 4, 1, 2 pushed give the storage
    /// 5 3 4 1 2; popping moves 5 to the end and rebuilds 4 3 2 1.
    #[test]
    fn heap_operations_follow_libstdcxx() {
        let mut h: Vec<Entry> = Vec::new();
        for (i, d) in [5.0, 3.0, 4.0, 1.0, 2.0].into_iter().enumerate() {
            h.push(Entry { index: i, distance: d });
            push_heap(&mut h);
        }
        assert_eq!(h.iter().map(|e| e.distance).collect::<Vec<_>>(), [5.0, 3.0, 4.0, 1.0, 2.0]);
        pop_heap(&mut h);
        assert_eq!(h.iter().map(|e| e.distance).collect::<Vec<_>>(), [4.0, 3.0, 2.0, 1.0, 5.0]);
        // increasing pushes rise to the top: 1, then 2 over it, then 3
        let mut g: Vec<Entry> = Vec::new();
        for d in [1.0, 2.0, 3.0] {
            g.push(Entry { index: 0, distance: d });
            push_heap(&mut g);
        }
        assert_eq!(g.iter().map(|e| e.distance).collect::<Vec<_>>(), [3.0, 1.0, 2.0]);
    }

    /// Points at x = 0.5, 0.1, 0.3, 0.9, 0.2, 2 around the origin, radius 1, N = 3: the three
    /// nearest (0.1, 0.2, 0.3) stay. Heap: [0.5] → [0.5 0.1] → [0.5 0.1 0.3]; 0.9 ≥ 0.5: out;
    /// 0.2: pop 0.5 → [0.3 0.1], the reported index is then the new top (point 2, as SOFA),
    /// push 0.2 → [0.3 0.1 0.2]; 2 is outside the sphere.
    #[test]
    fn keeps_the_n_nearest() {
        let x = on_x(&[0.5, 0.1, 0.3, 0.9, 0.2, 2.0]);
        let (idx, dist, out) = proximity(&x, &[([0.0; 3], 1.0)], 3);
        assert_eq!(idx, [2, 1, 4]);
        assert_eq!(dist, [0.3, 0.1, 0.2]);
        assert_eq!(out, [3, 2, 5]);
        // N = 1 with a single candidate in the heap: the removed one is reported
        let (idx, _, out) = proximity(&on_x(&[0.5, 0.1]), &[([0.0; 3], 1.0)], 1);
        assert_eq!(idx, [1]);
        assert_eq!(out, [0]);
    }

    #[test]
    fn scene_defaults_and_reports() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0.5 0 0  0.1 0 0  3 0 0  3.05 0 0")]);
        let e = add(&mut s, &f, Scene::ROOT, "ProximityROI", &[("centers", "0 0 0  3 0 0"), ("radii", "1"), ("N", "10")]);
        let z = add(&mut s, &f, Scene::ROOT, "ProximityROI", &[("centers", "0 0 0"), ("radii", "1")]);
        init_scene(&mut s).unwrap();
        let d = &s.entry(e).data;
        assert_eq!(d.reals("radii"), [1.0, 1.0]);
        // heap: [0.5] → [0.5 0.1] → point 2 at the second centre: [0.5 0.1 0] → 0.05 below its
        // parent 0.1: [0.5 0.1 0 0.05]
        assert_eq!(d.indices("indices"), [0, 1, 2, 3]);
        assert!((d.reals("distance")[3] - 0.05).abs() < 1e-12);
        assert!(d.indices("indicesOut").is_empty());
        assert_eq!(s.entry(z).data.indices("indices"), [0]);
        assert!(s.messages.iter().any(|m| m.to_string().contains("`N` must be greater than zero")));
    }
}
