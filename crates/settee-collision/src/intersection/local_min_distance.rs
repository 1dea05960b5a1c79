//! `LocalMinDistance` (spec §7.6; [INT]`LocalMinDistance.h/.cpp`): proximity pairs kept only
//! when both elements see the other inside a cone built from the neighbouring geometry.
//!
//! Sums of distances follow SOFA's order, which differs per pair (e.g. Triangle–Point adds the
//! point's skin before the triangle's; Sphere–Sphere interleaves radii and skins). Rigid-sphere
//! pairs run the `DiscreteIntersection` sphere code with the method's own distances (spec §7.1).
#![allow(clippy::manual_range_contains)]

use super::common::{
    bigger_model_id, discrete_table, proximity_intersection_method, radius, sphere_sphere_discrete, strict_triangle_projection, Entry,
};
use super::discrete::tetrahedron_point;
use super::kernels::{cross, div, dot, norm, norm2, normalize, normalized, Normal2};
use crate::geometry::{ModelGeometry, PrimitiveKind, Vec3};
use crate::output::DetectionOutput;

/// `LocalMinDistance`.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalMinDistance {
    /// `alarmDistance` (1.0).
    pub alarm_distance: f64,
    /// `contactDistance` (0.5).
    pub contact_distance: f64,
    /// `filterIntersection` (true): enables the validity cones; when false every `valid` test
    /// holds.
    pub filter_intersection: bool,
    /// `angleCone` (0.0): extra cone half-width, as a cosine offset.
    pub angle_cone: f64,
    /// `coneFactor` (0.5): scales the cone computed from the neighbouring geometry.
    pub cone_factor: f64,
    /// `useLMDFilters` (false): when true the validity tests are skipped.
    pub use_lmd_filters: bool,
}

impl Default for LocalMinDistance {
    fn default() -> Self {
        LocalMinDistance {
            alarm_distance: 1.0,
            contact_distance: 0.5,
            filter_intersection: true,
            angle_cone: 0.0,
            cone_factor: 0.5,
            use_lmd_filters: false,
        }
    }
}

impl LocalMinDistance {
    pub fn new() -> LocalMinDistance {
        LocalMinDistance::default()
    }

    fn table(&self, k1: PrimitiveKind, k2: PrimitiveKind) -> Option<Entry> {
        use PrimitiveKind::*;
        match (k1, k2) {
            (Sphere, Point) | (Point, Point) | (Line, Line) | (Line, Point) | (Line, Sphere) | (Triangle, Point) | (Triangle, Sphere) => {
                Some(Entry::Run)
            }
            (Triangle, Line) | (Triangle, Triangle) => Some(Entry::Ignore),
            _ => discrete_table(k1, k2),
        }
    }

    /// Validity of a point model's vertex `i` seeing the other element along `v`
    /// (`testValidity(Point&, PQ)`). Skipped (true) without filtering or when no line model is
    /// found in the point model's node or its ancestors.
    pub fn valid_point(&self, g: &ModelGeometry, i: usize, v: &Vec3) -> bool {
        if !self.filter_intersection || !g.has_line_model {
            return true;
        }
        let pt = g.x[i];
        let empty: &[usize] = &[];
        let (tav, eav) = match &g.adjacency {
            Some(adj) => {
                (adj.triangles_around_vertex.get(i).map_or(empty, |l| l.as_slice()), adj.edges_around_vertex.get(i).map_or(empty, |l| l.as_slice()))
            }
            None => (empty, empty),
        };
        let mut n_mean = Vec3::zeros();
        for &t in tav {
            let Some(tri) = g.triangles.get(t) else {
                continue;
            };
            let (a, b, c) = (g.x[tri[0]], g.x[tri[1]], g.x[tri[2]]);
            n_mean += normalized(cross(&(b - a), &(c - a)));
        }
        if tav.is_empty() {
            for &e in eav {
                let Some(ed) = g.edges.get(e) else {
                    continue;
                };
                n_mean += normalized((pt - g.x[ed[0]]) + (pt - g.x[ed[1]]));
            }
        }
        if norm(&n_mean) > 0.0000000001 {
            normalize(&mut n_mean);
            if dot(&n_mean, v) < -self.angle_cone * norm(v) && !g.both_side {
                return false;
            }
        }
        for &e in eav {
            let Some(ed) = g.edges.get(e) else {
                continue;
            };
            let l = normalized((pt - g.x[ed[0]]) + (pt - g.x[ed[1]]));
            let mut cone = dot(&n_mean, &l) * self.cone_factor;
            if cone < 0.0 {
                cone = 0.0;
            }
            cone += self.angle_cone;
            if dot(&l, v) < -cone * norm(v) {
                return false;
            }
        }
        true
    }

    /// Validity of line `i` seeing the other element along `v` (`testValidity(Line&, PQ)`):
    /// with exactly two triangles around the edge, `v` must be on the front of their mean normal
    /// (unless `bothSide`) and inside the cones of both tangents; otherwise `v` must be nearly
    /// orthogonal to the line (`|AB·v̂| ≤ angleCone + 1e-4`).
    pub fn valid_line(&self, g: &ModelGeometry, i: usize, v: &Vec3) -> bool {
        if !self.filter_intersection {
            return true;
        }
        let [i1, i2] = g.edges[i];
        let ab = normalized(g.x[i2] - g.x[i1]);
        let tae: &[usize] = g.adjacency.as_ref().and_then(|adj| adj.triangles_around_edge.get(i)).map_or(&[], |l| l.as_slice());
        let pair = match tae {
            [t0, t1] => g.triangles.get(*t0).zip(g.triangles.get(*t1)),
            _ => None,
        };
        if let Some((tri0, tri1)) = pair {
            let t0_is_left = (i1 == tri0[0] && i2 == tri0[1]) || (i1 == tri0[1] && i2 == tri0[2]) || (i1 == tri0[2] && i2 == tri0[0]);
            let (left, right) = if t0_is_left { (tri0, tri1) } else { (tri1, tri0) };
            let unit_normal = |t: &[usize; 3]| {
                let (a, b, c) = (g.x[t[0]], g.x[t[1]], g.x[t[2]]);
                normalized(cross(&(b - a), &(c - a)))
            };
            let n1 = unit_normal(right);
            let mut n_mean = n1;
            let t1 = normalized(cross(&n1, &ab));
            let n2 = unit_normal(left);
            n_mean += n2;
            let t2 = normalized(cross(&ab, &n2));
            normalize(&mut n_mean);
            if dot(&n_mean, v) < 0.0 && !g.both_side {
                return false;
            }
            for t in [t1, t2] {
                let mut cone = dot(&n_mean, &t) * self.cone_factor;
                if cone < 0.0 {
                    cone = 0.0;
                }
                cone += self.angle_cone;
                if dot(&t, v) < -cone * norm(v) {
                    return false;
                }
            }
        } else {
            let n1 = normalized(*v);
            if dot(&ab, &n1).abs() > self.angle_cone + 0.0001 {
                return false;
            }
        }
        true
    }

    /// Validity of triangle `i` seeing the other element along `v`
    /// (`testValidity(Triangle&, PQ)`): true with `bothSide`, else
    /// `((p2 − p1) × (p3 − p1))·v ≥ 0`.
    pub fn valid_triangle(&self, g: &ModelGeometry, i: usize, v: &Vec3) -> bool {
        if !self.filter_intersection || g.both_side {
            return true;
        }
        let t = g.triangles[i];
        let (p1, p2, p3) = (g.x[t[0]], g.x[t[1]], g.x[t[2]]);
        dot(&cross(&(p2 - p1), &(p3 - p1)), v) >= 0.0
    }

    /// `testValidity` of any element kind (spheres are always valid).
    fn valid(&self, g: &ModelGeometry, i: usize, v: &Vec3) -> bool {
        match g.kind {
            PrimitiveKind::Point => self.valid_point(g, i, v),
            PrimitiveKind::Line => self.valid_line(g, i, v),
            PrimitiveKind::Triangle => self.valid_triangle(g, i, v),
            _ => true,
        }
    }

    /// The filters of a candidate: `valid(a, v)` then `valid(b, −v)`, unless `useLMDFilters`.
    fn filters_pass(&self, ga: &ModelGeometry, a: usize, gb: &ModelGeometry, b: usize, v: &Vec3) -> bool {
        self.use_lmd_filters || (self.valid(ga, a, v) && self.valid(gb, b, &-v))
    }

    /// The output tail shared by all pairs: `normal = v/|v|` (unguarded), `value = |v| − contact`.
    fn push(out: &mut Vec<DetectionOutput>, elem: (usize, usize), id: i64, points: [Vec3; 2], v: &Vec3, contact: f64) -> usize {
        let value = norm(v);
        out.push(DetectionOutput { elem, id, point: points, normal: div(v, value), value: value - contact });
        1
    }

    /// Line–Line: `|det| > 1e-30` for the solve (else α = β = 0.5), α and β in
    /// [1e-15, 1 − 1e-15].
    fn line_line(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let alarm = self.alarm_distance + g1.contact_distance + g2.contact_distance;
        let [i1, i2] = g1.edges[e1];
        let [j1, j2] = g2.edges[e2];
        let (a, b, c, d) = (g1.x[i1], g1.x[i2], g2.x[j1], g2.x[j2]);
        let (sys, ab, cd, _ac) = Normal2::lines(&a, &b, &c, &d);
        let (alpha, beta);
        if sys.det < -1.0e-30 || sys.det > 1.0e-30 {
            alpha = sys.alpha();
            beta = sys.beta();
            if alpha < 1e-15 || alpha > (1.0 - 1e-15) || beta < 1e-15 || beta > (1.0 - 1e-15) {
                return 0;
            }
        } else {
            alpha = 0.5;
            beta = 0.5;
        }
        let p = a + ab * alpha;
        let q = c + cd * beta;
        let pq = q - p;
        if norm2(&pq) >= alarm * alarm {
            return 0;
        }
        if !self.filters_pass(g1, e1, g2, e2, &pq) {
            return 0;
        }
        let contact = self.contact_distance + g1.contact_distance + g2.contact_distance;
        let id = bigger_model_id(g1, e1, g2, e2);
        Self::push(out, (e1, e2), id, [p, q], &pq, contact)
    }

    /// Triangle–Point and Triangle–Sphere (`r` = 0 for a point): strict interior projection
    /// (α, β ≥ 1e-6, α + β ≤ 0.999999), filters `valid(point, PQ)` and `valid(triangle, QP)`.
    fn triangle_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let sphere = g2.kind == PrimitiveKind::Sphere;
        let (alarm, contact) = self.distances_with_radius(g2, e2, g1, sphere);
        let p = g2.x[e2];
        let Some(q) = strict_triangle_projection(g1, e1, &p) else {
            return 0;
        };
        let pq = q - p;
        if norm2(&pq) >= alarm * alarm {
            return 0;
        }
        let qp = -pq;
        if !self.filters_pass(g2, e2, g1, e1, &pq) {
            return 0;
        }
        Self::push(out, (e1, e2), e2 as i64, [q, p], &qp, contact)
    }

    /// Line–Point and Line–Sphere (`r` = 0 for a point): no output for a segment shorter than
    /// `1e-12·|AP|`, α must lie in [1e-6, 0.999999] (no clamping); filters `valid(point, PQ)`
    /// and `valid(line, QP)`.
    fn line_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let sphere = g2.kind == PrimitiveKind::Sphere;
        let (alarm, contact) = self.distances_with_radius(g2, e2, g1, sphere);
        let [i1, i2] = g1.edges[e1];
        let a = g1.x[i1];
        let p = g2.x[e2];
        let ab = g1.x[i2] - a;
        let ap = p - a;
        if norm(&ab) < 0.000000000001 * norm(&ap) {
            return 0;
        }
        let alpha = dot(&ap, &ab) / dot(&ab, &ab);
        if alpha < 0.000001 || alpha > 0.999999 {
            return 0;
        }
        let q = a + ab * alpha;
        let pq = q - p;
        let qp = -pq;
        if norm2(&pq) >= alarm * alarm {
            return 0;
        }
        if !self.filters_pass(g2, e2, g1, e1, &pq) {
            return 0;
        }
        Self::push(out, (e1, e2), e2 as i64, [q, p], &qp, contact)
    }

    /// `alarm (+ r) + cd(point-like) + cd(other)` and the same for contact: the order of
    /// SOFA's Triangle/Line–Point/Sphere functions, whose first parameter is the point or
    /// sphere.
    fn distances_with_radius(&self, gp: &ModelGeometry, ep: usize, gother: &ModelGeometry, sphere: bool) -> (f64, f64) {
        if sphere {
            let r = radius(gp, ep);
            (
                self.alarm_distance + r + gp.contact_distance + gother.contact_distance,
                self.contact_distance + r + gp.contact_distance + gother.contact_distance,
            )
        } else {
            (
                self.alarm_distance + gp.contact_distance + gother.contact_distance,
                self.contact_distance + gp.contact_distance + gother.contact_distance,
            )
        }
    }

    /// Point–Point, Sphere–Point and Sphere–Sphere (`Vec3` spheres): centres and points,
    /// `PQ = Q − P`, filters `valid(e1, PQ)` and `valid(e2, QP)`, id = bigger-model id.
    fn point_like(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let (cd1, cd2) = (g1.contact_distance, g2.contact_distance);
        let (alarm, contact) = match (g1.kind, g2.kind) {
            (PrimitiveKind::Sphere, PrimitiveKind::Sphere) => {
                let (r1, r2) = (radius(g1, e1), radius(g2, e2));
                (self.alarm_distance + r1 + cd1 + r2 + cd2, self.contact_distance + r1 + cd1 + r2 + cd2)
            }
            (PrimitiveKind::Sphere, _) => {
                let r = radius(g1, e1);
                (self.alarm_distance + r + cd1 + cd2, self.contact_distance + r + cd1 + cd2)
            }
            _ => (self.alarm_distance + cd1 + cd2, self.contact_distance + cd1 + cd2),
        };
        let p = g1.x[e1];
        let q = g2.x[e2];
        let pq = q - p;
        if norm2(&pq) >= alarm * alarm {
            return 0;
        }
        if !self.filters_pass(g1, e1, g2, e2, &pq) {
            return 0;
        }
        let id = bigger_model_id(g1, e1, g2, e2);
        Self::push(out, (e1, e2), id, [p, q], &pq, contact)
    }
}

proximity_intersection_method!(LocalMinDistance, "LocalMinDistance");

impl LocalMinDistance {
    /// A pair the table runs, both elements in range.
    fn run(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        use PrimitiveKind::*;
        match (g1.kind, g2.kind) {
            (Sphere, Sphere) | (Sphere, Point) | (Point, Point) => self.point_like(g1, e1, g2, e2, out),
            // Entries of DiscreteIntersection's constructor, never overridden: the discrete
            // sphere formula with this method's distances (model skins not added).
            (RigidSphere, RigidSphere) | (Sphere, RigidSphere) => {
                sphere_sphere_discrete(g1, e1, g2, e2, self.alarm_distance, self.contact_distance, out)
            }
            (Line, Line) => self.line_line(g1, e1, g2, e2, out),
            (Line, Point) | (Line, Sphere) => self.line_point(g1, e1, g2, e2, out),
            (Triangle, Point) | (Triangle, Sphere) => self.triangle_point(g1, e1, g2, e2, out),
            (Tetrahedron, Point) => tetrahedron_point(g1, e1, g2, e2, out),
            _ => 0,
        }
    }
}
