//! Test-only intersection method, model builders and a literal transcription of SOFA's
//! `BVHNarrowPhase` traversal used as the oracle for the planned/swept/parallel one.

use crate::geometry::{Aabb, ModelGeometry, PrimitiveKind, Vec3};
use crate::intersection::{IntersectionMethod, PairSupport};
use crate::output::DetectionOutput;
use crate::testing::{closest_on_triangle, height_field};

use super::tree::{BoundingTree, Span};

/// A small proximity method: the BaseProximityIntersection box test (or the Discrete one),
/// and closest-point tests between a point-like element (sphere or point) and a sphere,
/// point, segment or triangle.
pub(crate) struct TestProximity {
    pub alarm: f64,
    /// DiscreteIntersection's box test (margin = alarm only, same box ⇔ cone angle ≥ π/2).
    pub discrete_boxes: bool,
}

impl TestProximity {
    pub fn new(alarm: f64) -> Self {
        TestProximity { alarm, discrete_boxes: false }
    }
}

fn closest_on_segment(p: Vec3, a: Vec3, b: Vec3) -> Vec3 {
    let ab = b - a;
    let l2 = ab.dot(&ab);
    if l2 <= 0.0 {
        return a;
    }
    let t = ((p - a).dot(&ab) / l2).clamp(0.0, 1.0);
    a + ab * t
}

/// Centre and radius of a point-like element.
fn point_like(g: &ModelGeometry, e: usize) -> Option<(Vec3, f64)> {
    match g.kind {
        PrimitiveKind::Sphere | PrimitiveKind::RigidSphere => Some((g.x[e], g.radius[e])),
        PrimitiveKind::Point => Some((g.x[e], 0.0)),
        _ => None,
    }
}

impl IntersectionMethod for TestProximity {
    fn name(&self) -> &'static str {
        "TestProximity"
    }
    fn alarm_distance(&self) -> f64 {
        self.alarm
    }
    fn contact_distance(&self) -> f64 {
        0.0
    }
    fn boxes_overlap(&self, a: &Aabb, ga: &ModelGeometry, b: &Aabb, gb: &ModelGeometry, same_box: bool) -> bool {
        let d = if self.discrete_boxes {
            if same_box {
                return true;
            }
            self.alarm
        } else {
            self.alarm + ga.contact_distance + gb.contact_distance
        };
        for i in 0..3 {
            if a.min[i] > b.max[i] + d || b.min[i] > a.max[i] + d {
                return false;
            }
        }
        true
    }
    fn support(&self, k1: PrimitiveKind, k2: PrimitiveKind) -> PairSupport {
        use PrimitiveKind::*;
        match (k1, k2) {
            (Cube, Cube) | (Sphere, Sphere) | (Triangle, Sphere) | (Point, Point) | (Triangle, Point) | (Line, Point) | (Tetrahedron, Point) => {
                PairSupport::Supported { swap: false }
            }
            (Sphere, Triangle) | (Point, Triangle) | (Point, Line) | (Point, Tetrahedron) => PairSupport::Supported { swap: true },
            (Triangle, Triangle) => PairSupport::Ignored,
            _ => PairSupport::Unknown,
        }
    }
    fn intersect(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        if g1.kind == PrimitiveKind::Tetrahedron {
            return 0;
        }
        let (q2, r2) = point_like(g2, e2).expect("second element is point-like");
        let (q1, r1) = match g1.kind {
            PrimitiveKind::Triangle => {
                let [a, b, c] = g1.triangles[e1];
                (closest_on_triangle(q2, g1.x[a], g1.x[b], g1.x[c]), 0.0)
            }
            PrimitiveKind::Line => {
                let [a, b] = g1.edges[e1];
                (closest_on_segment(q2, g1.x[a], g1.x[b]), 0.0)
            }
            _ => point_like(g1, e1).expect("point-like first element"),
        };
        let d = q2 - q1;
        let dist = d.norm();
        let alarm = self.alarm + g1.contact_distance + g2.contact_distance;
        if dist - r1 - r2 >= alarm || dist == 0.0 {
            return 0;
        }
        out.push(DetectionOutput { elem: (e1, e2), id: (e1 * 1_000_003 + e2) as i64, point: [q1, q2], normal: d / dist, value: dist - r1 - r2 });
        1
    }
}

/// A sphere model at the given centres.
pub(crate) fn spheres(name: &str, node: u64, centres: &[Vec3], r: f64) -> ModelGeometry {
    let mut g = ModelGeometry::new(PrimitiveKind::Sphere, name, node);
    g.x = centres.to_vec();
    g.radius = vec![r; centres.len()];
    g
}

/// A point model at the given positions.
pub(crate) fn points(name: &str, node: u64, pts: &[Vec3]) -> ModelGeometry {
    let mut g = ModelGeometry::new(PrimitiveKind::Point, name, node);
    g.x = pts.to_vec();
    g
}

/// A triangulated `nx × ny` grid of squares of side `h` in the plane z = `z`, with a bump
/// `amp·sin(x)·cos(y)`.
pub(crate) fn surface(name: &str, node: u64, nx: usize, ny: usize, h: f64, amp: f64) -> ModelGeometry {
    height_field(name, node, nx, ny, h, |x, y| amp * x.sin() * y.cos())
}

/// Deterministic pseudo-random numbers in [0, 1) (SplitMix64).
pub(crate) struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// SOFA's `BVHNarrowPhase::addCollisionPair` traversal transcribed literally (queue of
/// external cells, LIFO stack, row-major scans with immediate primitive tests), for trees of
/// the standard shape and a cube/cube intersector registered as (Cube, Cube).
pub(crate) fn reference_pair(
    t1: &BoundingTree,
    g1: &ModelGeometry,
    t2: &BoundingTree,
    g2: &ModelGeometry,
    same_model: bool,
    method: &dyn IntersectionMethod,
) -> Vec<DetectionOutput> {
    let mut out = Vec::new();
    let self_node = g1.node == g2.node;
    let (Some(r1), Some(r2)) = (t1.root(), t2.root()) else {
        return out;
    };
    let mut queue = std::collections::VecDeque::new();
    if !r1.subcells.is_empty() && !r2.subcells.is_empty() {
        queue.push_back((r1.subcells, r2.subcells));
    }
    while let Some(cell) = queue.pop_front() {
        let mut stack: Vec<(Span, Span)> = vec![cell];
        while let Some((s1, s2)) = stack.pop() {
            for e1 in s1.start..s1.end {
                for e2 in s2.start..s2.end {
                    let b1 = &t1.level(s1.level)[e1 as usize];
                    let b2 = &t2.level(s2.level)[e2 as usize];
                    let same_box = same_model && s1.level == s2.level && e1 == e2;
                    if !method.boxes_overlap(&b1.aabb, g1, &b2.aabb, g2, same_box) {
                        continue;
                    }
                    let (c1, c2) = (b1.subcells, b2.subcells);
                    if !c1.is_empty() && !c2.is_empty() {
                        stack.push((c1, c2));
                    } else if !c1.is_empty() {
                        stack.push((c1, Span { start: e2, end: e2 + 1, ..s2 }));
                    } else if !c2.is_empty() {
                        stack.push((Span { start: e1, end: e1 + 1, ..s1 }, c2));
                    } else {
                        for p1 in b1.children.0..b1.children.1 {
                            for p2 in b2.children.0..b2.children.1 {
                                let (p1, p2) = (p1 as usize, p2 as usize);
                                if !self_node || ((!same_model || p1 < p2) && g1.can_collide_elements(p1, g2, p2, same_model)) {
                                    method.intersect(g1, p1, g2, p2, &mut out);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}
