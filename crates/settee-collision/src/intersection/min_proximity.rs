//! `MinProximityIntersection` with the `MeshMinProximityIntersection` pairs (spec §7.4;
//! [INT]`MinProximityIntersection.h/.cpp`, `MeshMinProximityIntersection.h/.cpp`).
//!
//! Sums of distances are written in SOFA's order: every function adds the method's distance,
//! then (for spheres) the radius, then the skins of its two C++ parameters in declaration order
//! — which for Triangle–Point, Line–Point, Triangle–Sphere and Line–Sphere is the *second*
//! model of the registered pair first.
//!
//! Parameter windows are written as two comparisons, not range tests: a NaN parameter (from a
//! degenerate element) must pass them, as it does in SOFA.
#![allow(clippy::manual_range_contains)]

use super::common::{
    contact_point_by_normal, discrete_table, guarded_unit, is_sphere, line_points, proximity_intersection_method, radius, sphere_sphere_discrete,
    stored_triangle_normal, strict_triangle_projection, triangle_points, Entry,
};
use super::discrete::tetrahedron_point;
use super::kernels::{dot, norm2, Normal2};
use crate::geometry::{ModelGeometry, PrimitiveKind, Vec3};
use crate::output::DetectionOutput;

/// `MinProximityIntersection`: closest points of primitives within the alarm distance;
/// edge/corner projections of Triangle–Point are left to Line–Point and Point–Point.
#[derive(Clone, Debug, PartialEq)]
pub struct MinProximityIntersection {
    /// `alarmDistance` (1.0).
    pub alarm_distance: f64,
    /// `contactDistance` (0.5).
    pub contact_distance: f64,
    /// `useSphereTriangle` (true): registers the sphere–mesh pairs, else ignores them.
    pub use_sphere_triangle: bool,
    /// `usePointPoint` (true).
    pub use_point_point: bool,
    /// `useSurfaceNormals` (false): Triangle–Point outputs take the triangle's stored normal.
    pub use_surface_normals: bool,
    /// `useLinePoint` (true).
    pub use_line_point: bool,
    /// `useLineLine` (true).
    pub use_line_line: bool,
}

impl Default for MinProximityIntersection {
    fn default() -> Self {
        MinProximityIntersection {
            alarm_distance: 1.0,
            contact_distance: 0.5,
            use_sphere_triangle: true,
            use_point_point: true,
            use_surface_normals: false,
            use_line_point: true,
            use_line_line: true,
        }
    }
}

fn flag(on: bool) -> Option<Entry> {
    Some(if on { Entry::Run } else { Entry::Ignore })
}

impl MinProximityIntersection {
    pub fn new() -> MinProximityIntersection {
        MinProximityIntersection::default()
    }

    fn table(&self, k1: PrimitiveKind, k2: PrimitiveKind) -> Option<Entry> {
        use PrimitiveKind::*;
        match (k1, k2) {
            (Point, Point) => flag(self.use_point_point),
            (Line, Point) => flag(self.use_line_point),
            (Line, Line) => flag(self.use_line_line),
            (Triangle, Point) => Some(Entry::Run),
            (Triangle, Line) | (Triangle, Triangle) => Some(Entry::Ignore),
            (Sphere, Point) | (RigidSphere, Point) | (Triangle, Sphere) | (Triangle, RigidSphere) | (Line, Sphere) | (Line, RigidSphere) => {
                flag(self.use_sphere_triangle)
            }
            _ => discrete_table(k1, k2),
        }
    }

    /// `alarm + cd(a) + cd(b)`.
    fn alarm(&self, a: &ModelGeometry, b: &ModelGeometry) -> f64 {
        self.alarm_distance + a.contact_distance + b.contact_distance
    }

    /// `contact + cd(a) + cd(b)`.
    fn contact(&self, a: &ModelGeometry, b: &ModelGeometry) -> f64 {
        self.contact_distance + a.contact_distance + b.contact_distance
    }

    /// Point–Point: `PQ = Q − P`; none if `|PQ|² ≥ alarm²`.
    fn point_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        self.closest(g1, e1, g2, e2, [g1.x[e1], g2.x[e2]], out)
    }

    /// The end of Point–Point and Line–Line from the closest points `P` of `e1` and `Q` of `e2`:
    /// `PQ = Q − P`; none if `|PQ|² ≥ alarm²`; id = bigger-model id.
    fn closest(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, [p, q]: [Vec3; 2], out: &mut Vec<DetectionOutput>) -> usize {
        let alarm = self.alarm(g1, g2);
        let pq = q - p;
        if norm2(&pq) >= alarm * alarm {
            return 0;
        }
        let (normal, value) = guarded_unit(&pq);
        out.push(DetectionOutput {
            elem: (e1, e2),
            id: super::common::bigger_model_id(g1, e1, g2, e2),
            point: [p, q],
            normal,
            value: value - self.contact(g1, g2),
        });
        1
    }

    /// The end of Triangle–Point and Line–Point from the closest point `Q` of the mesh element
    /// `e1` to the point `P = x₂[e2]`: `QP = P − Q`; none if `|QP|² ≥ alarm²`; id = point index.
    fn to_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, q: Vec3, out: &mut Vec<DetectionOutput>) -> usize {
        let alarm = self.alarm(g2, g1);
        let p = g2.x[e2];
        let qp = p - q;
        if norm2(&qp) >= alarm * alarm {
            return 0;
        }
        let (normal, value) = guarded_unit(&qp);
        out.push(DetectionOutput { elem: (e1, e2), id: e2 as i64, point: [q, p], normal, value: value - self.contact(g2, g1) });
        1
    }

    /// The end of the pairs with a sphere: sphere `es` of `gs` (centre `C`, radius `r`) against
    /// the point `X` of the other element (model `go`), the sphere first in the pair when
    /// `sphere_first`. The normal goes from the first element to the second (`X − C` or
    /// `C − X`); none if its length² ≥ `(alarm + r + cd(sphere) + cd(other))²`; the sphere's
    /// point is its contact point along the normal seen from it; id = sphere index.
    #[allow(clippy::too_many_arguments)]
    fn sphere_end(
        &self,
        gs: &ModelGeometry,
        es: usize,
        go: &ModelGeometry,
        x: Vec3,
        sphere_first: bool,
        elem: (usize, usize),
        out: &mut Vec<DetectionOutput>,
    ) -> usize {
        let r = radius(gs, es);
        let alarm = self.alarm_distance + r + gs.contact_distance + go.contact_distance;
        let c = gs.x[es];
        let d = if sphere_first { x - c } else { c - x };
        if norm2(&d) >= alarm * alarm {
            return 0;
        }
        let contact = self.contact_distance + r + gs.contact_distance + go.contact_distance;
        let (normal, value) = guarded_unit(&d);
        let point = if sphere_first { [contact_point_by_normal(gs, es, &-normal), x] } else { [x, contact_point_by_normal(gs, es, &normal)] };
        out.push(DetectionOutput { elem, id: es as i64, point, normal, value: value - contact });
        1
    }

    /// Line–Line: closest points of the two lines; `|det| > 1e-15` required for the solve
    /// (else α = β = 0.5), then α, β must lie in [1e-6, 0.999999].
    fn line_line(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let [e1p1, e1p2] = line_points(g1, e1);
        let [e2p1, e2p2] = line_points(g2, e2);
        let (sys, ab, cd, _ac) = Normal2::lines(&e1p1, &e1p2, &e2p1, &e2p2);
        let (mut alpha, mut beta) = (0.5, 0.5);
        if sys.det < -1.0e-15 || sys.det > 1.0e-15 {
            alpha = sys.alpha();
            beta = sys.beta();
            // Written as comparisons (not a range test) so that NaN passes, as in SOFA.
            if alpha < 0.000001 || alpha > 0.999999 || beta < 0.000001 || beta > 0.999999 {
                return 0;
            }
        }
        self.closest(g1, e1, g2, e2, [e1p1 + ab * alpha, e2p1 + cd * beta], out)
    }

    /// Triangle–Point: projection on the triangle's plane, rejected unless strictly inside
    /// (α, β ≥ 1e-6, α + β ≤ 0.999999); a degenerate triangle gives NaN α, β that pass (AS
    /// IMPLEMENTED).
    fn triangle_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let Some(q) = strict_triangle_projection(g1, e1, &g2.x[e2]) else {
            return 0;
        };
        let n = self.to_point(g1, e1, g2, e2, q, out);
        if n == 1 && self.use_surface_normals {
            out.last_mut().expect("the output just pushed").normal = stored_triangle_normal(g1, e1);
        }
        n
    }

    /// Line–Point: the projection parameter is clamped to the segment (Q = an end when α ≤ 0
    /// or α ≥ 1).
    fn line_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let [a, b] = line_points(g1, e1);
        let ab = b - a;
        let ap = g2.x[e2] - a;
        let alpha = dot(&ap, &ab) / dot(&ab, &ab);
        let q = if alpha <= 0.0 {
            a
        } else if alpha >= 1.0 {
            b
        } else {
            a + ab * alpha
        };
        self.to_point(g1, e1, g2, e2, q, out)
    }

    /// Sphere–Point (Vec3 or rigid sphere): `point[0]` is the sphere's contact point along
    /// −normal (the centre for a `Vec3` sphere, `c + r·normal` for a rigid one); id = sphere
    /// index.
    fn sphere_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        self.sphere_end(g1, e1, g2, g2.x[e2], true, (e1, e2), out)
    }

    /// Triangle–Sphere: the same projection as Triangle–Point written with
    /// `x13 = p1 − p2, x23 = p1 − p3, x03 = p1 − c` and `Q = p1 − x13·α − x23·β`.
    fn triangle_sphere(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let [p1, p2, p3] = triangle_points(g1, e1);
        let c = g2.x[e2];
        let x13 = p1 - p2;
        let x23 = p1 - p3;
        let x03 = p1 - c;
        let sys = Normal2::new(dot(&x13, &x13), dot(&x23, &x23), dot(&x13, &x23), dot(&x13, &x03), dot(&x23, &x03));
        let alpha = sys.alpha();
        let beta = sys.beta();
        if alpha < 0.000001 || beta < 0.000001 || alpha + beta > 0.999999 {
            return 0;
        }
        self.sphere_end(g2, e2, g1, p1 - x13 * alpha - x23 * beta, false, (e1, e2), out)
    }

    /// Line–Sphere, AS IMPLEMENTED: α is the projection parameter of the centre measured from
    /// p2 (`x32 = p1 − p2`, `x31 = c − p2`, `α = x32·x31 / x32·x32`, rejected outside
    /// [1e-6, 0.999999]) but `Q = p1 − x32·α` starts from p1, so Q is the mirror of the closest
    /// point about the segment's midpoint.
    fn line_sphere(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let [p1, p2] = line_points(g1, e1);
        let c = g2.x[e2];
        let x32 = p1 - p2;
        let x31 = c - p2;
        let alpha = dot(&x32, &x31) / dot(&x32, &x32);
        if alpha < 0.000001 || alpha > 0.999999 {
            return 0;
        }
        self.sphere_end(g2, e2, g1, p1 - x32 * alpha, false, (e1, e2), out)
    }
}

proximity_intersection_method!(MinProximityIntersection, "MinProximityIntersection");

impl MinProximityIntersection {
    /// A pair the table runs, both elements in range.
    fn run(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        use PrimitiveKind::*;
        match (g1.kind, g2.kind) {
            (k1, k2) if is_sphere(k1) && is_sphere(k2) => {
                let alarm = self.alarm(g1, g2);
                let contact = self.contact(g1, g2);
                sphere_sphere_discrete(g1, e1, g2, e2, alarm, contact, out)
            }
            (Point, Point) => self.point_point(g1, e1, g2, e2, out),
            (Line, Line) => self.line_line(g1, e1, g2, e2, out),
            (Line, Point) => self.line_point(g1, e1, g2, e2, out),
            (Triangle, Point) => self.triangle_point(g1, e1, g2, e2, out),
            (Sphere, Point) | (RigidSphere, Point) => self.sphere_point(g1, e1, g2, e2, out),
            (Triangle, Sphere) | (Triangle, RigidSphere) => self.triangle_sphere(g1, e1, g2, e2, out),
            (Line, Sphere) | (Line, RigidSphere) => self.line_sphere(g1, e1, g2, e2, out),
            (Tetrahedron, Point) => tetrahedron_point(g1, e1, g2, e2, out),
            _ => 0,
        }
    }
}
