//! `NewProximityIntersection` with the `MeshNewProximityIntersection` pairs (spec §7.5;
//! [INT]`NewProximityIntersection.h/.inl/.cpp`, `MeshNewProximityIntersection.h/.inl/.cpp`).
//!
//! The building blocks (`PointPoint`, `LinePoint`, `LineLine`, `TrianglePoint`) append at most
//! one output with `value = |q − p|`; each pair function then sets `elem` and subtracts its
//! contact distance from every output it produced. Sums of distances follow SOFA's order:
//! `alarm + cd(M1) + cd(M2)` in the registered order, radii added last.
#![allow(clippy::manual_range_contains)]

use super::common::{
    bigger_model_id, contact_point_by_normal, discrete_table, finish, in_range, is_sphere, line_points, output, proximity_intersection_method,
    radius, triangle_points, Entry,
};
use super::discrete::tetrahedron_point;
use super::kernels::{div, dot, norm2, Normal2};
use crate::geometry::triangle_flags::{E12, E23, E31, P1, P2, P3};
use crate::geometry::{ModelGeometry, PrimitiveKind, Vec3};
use crate::output::DetectionOutput;

/// `NewProximityIntersection`: proximity between the vertices, edges and faces of meshes, each
/// vertex and edge being tested only by the triangle that owns it (triangle flags).
#[derive(Clone, Debug, PartialEq)]
pub struct NewProximityIntersection {
    /// `alarmDistance` (1.0).
    pub alarm_distance: f64,
    /// `contactDistance` (0.5).
    pub contact_distance: f64,
    /// `useLineLine` (false): adds edge–edge tests inside Triangle–Line and Triangle–Triangle
    /// (the Line–Line model pair is registered regardless).
    pub use_line_line: bool,
}

impl Default for NewProximityIntersection {
    fn default() -> Self {
        NewProximityIntersection { alarm_distance: 1.0, contact_distance: 0.5, use_line_line: false }
    }
}

/// A write that SOFA's Triangle–Triangle test makes into a triangle model's stored normals
/// (spec §7.5, AS IMPLEMENTED), see [`NewProximityIntersection::triangle_normal_side_effect`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoredNormalWrite {
    /// 0: the normal of `e1` in the first model is overwritten; 1: the normal of `e2` in the
    /// second model.
    pub model: usize,
    /// The element whose stored normal changes.
    pub element: usize,
    /// Its new stored normal.
    pub normal: Vec3,
}

/// `doIntersectionPointPoint`: `pq = q − p`; none if `|pq|² ≥ dist2`; no guard against a zero
/// distance.
fn point_point(dist2: f64, p: &Vec3, q: &Vec3, id: i64, out: &mut Vec<DetectionOutput>) -> usize {
    push_closest(dist2, *p, *q, id, false, out)
}

/// The common end of the building blocks: `p` on the first element, `q` on the second,
/// `pq = q − p`; none if `|pq|² ≥ dist2`, else one output with `value = |pq|` and the normal
/// `pq/|pq|` (no guard against a zero distance); with `swap` the point `q` comes first and the
/// normal is reversed.
fn push_closest(dist2: f64, p: Vec3, q: Vec3, id: i64, swap: bool, out: &mut Vec<DetectionOutput>) -> usize {
    let pq = q - p;
    let n2 = norm2(&pq);
    if n2 >= dist2 {
        return 0;
    }
    let value = n2.sqrt();
    if swap {
        out.push(output(id, q, p, div(&-pq, value), value));
    } else {
        out.push(output(id, p, q, div(&pq, value), value));
    }
    1
}

/// `doIntersectionLinePoint`: α clamped to [0, 1]; with `swap` the point comes first and the
/// normal points from it to the line.
fn line_point(dist2: f64, p1: &Vec3, p2: &Vec3, q: &Vec3, id: i64, swap: bool, out: &mut Vec<DetectionOutput>) -> usize {
    let ab = p2 - p1;
    let aq = q - p1;
    // Same as SOFA's `if (alpha < 0) alpha = 0; else if (alpha > 1) alpha = 1;`, NaN included.
    let alpha = (dot(&aq, &ab) / dot(&ab, &ab)).clamp(0.0, 1.0);
    push_closest(dist2, p1 + ab * alpha, *q, id, swap, out)
}

/// `doIntersectionLineLine`: `|det| > 1e-12` for the solve (else α = β = 0.5), then α, β must
/// lie in [1e-6, 0.999999].
fn line_line(dist2: f64, p1: &Vec3, p2: &Vec3, q1: &Vec3, q2: &Vec3, id: i64, out: &mut Vec<DetectionOutput>) -> usize {
    let (sys, ab, cd, _ac) = Normal2::lines(p1, p2, q1, q2);
    let (mut alpha, mut beta) = (0.5, 0.5);
    if sys.det < -0.000000000001 || sys.det > 0.000000000001 {
        alpha = sys.alpha();
        beta = sys.beta();
        if alpha < 0.000001 || alpha > 0.999999 || beta < 0.000001 || beta > 0.999999 {
            return 0;
        }
    }
    push_closest(dist2, p1 + ab * alpha, q1 + cd * beta, id, false, out)
}

/// `doIntersectionTrianglePoint`: the closest point of the triangle to `q` with machine-epsilon
/// thresholds; when it lies on an edge or a corner, that edge or vertex must be owned by the
/// triangle (`flags`), else no output.
#[allow(clippy::too_many_arguments)]
fn triangle_point(dist2: f64, flags: u32, p1: &Vec3, p2: &Vec3, p3: &Vec3, q: &Vec3, id: i64, swap: bool, out: &mut Vec<DetectionOutput>) -> usize {
    let (sys, ab, ac) = Normal2::triangle(p1, p2, p3, q);
    let snap = Snap { eps: f64::EPSILON, corner_ac: f64::EPSILON, edge_from: f64::EPSILON, ac_edge: E31, bc_edge: E23 };
    let Some((alpha, beta)) = snap.owned(&sys, flags) else {
        return 0;
    };
    push_closest(dist2, p1 + ab * alpha + ac * beta, *q, id, swap, out)
}

/// The thresholds and edge flags with which a triangle test moves the projection `(α, β)` of a
/// point onto the triangle's border, SOFA's `doIntersectionTrianglePoint` (machine epsilon) or
/// its Triangle–Sphere variant (fixed thresholds and other flags, AS IMPLEMENTED).
struct Snap {
    /// Inside when `α ≥ eps`, `β ≥ eps` and `α + β ≤ 1 − eps`; the same thresholds on the edges.
    eps: f64,
    /// Corner A needs `pAB < eps` and `pAC < corner_ac`.
    corner_ac: f64,
    /// The AB and AC edges need `pAB ≥ edge_from` (resp. `pAC`).
    edge_from: f64,
    /// The flag owning the AC edge.
    ac_edge: u32,
    /// The flag owning the BC edge.
    bc_edge: u32,
}

impl Snap {
    /// `(α, β)` of the closest point: the projection when inside, else the point of the edge or
    /// corner it lies on, when the triangle owns that edge or vertex (`flags`); else `None`.
    fn owned(&self, sys: &Normal2, flags: u32) -> Option<(f64, f64)> {
        let eps = self.eps;
        let alpha = sys.alpha();
        let beta = sys.beta();
        if !(alpha < eps || beta < eps || alpha + beta > 1.0 - eps) {
            return Some((alpha, beta));
        }
        // The closest point is on an edge or a corner.
        let p_ab = sys.b0 / sys.a00;
        let p_ac = sys.b1 / sys.a11;
        let (flag, at) = if p_ab < eps && p_ac < self.corner_ac {
            (P1, (0.0, 0.0))
        } else if p_ab < 1.0 - eps && p_ab >= self.edge_from && beta < eps {
            (E12, (p_ab, 0.0))
        } else if p_ac < 1.0 - eps && p_ac >= self.edge_from && alpha < eps {
            (self.ac_edge, (0.0, p_ac))
        } else {
            let p_bc = (sys.b1 - sys.b0 + sys.a00 - sys.a01) / (sys.a00 + sys.a11 - 2.0 * sys.a01);
            if p_bc < eps {
                (P2, (1.0, 0.0))
            } else if p_bc > 1.0 - eps {
                (P3, (0.0, 1.0))
            } else {
                (self.bc_edge, (1.0 - p_bc, p_bc))
            }
        };
        (flags & flag != 0).then_some(at)
    }
}

fn flags_of(g: &ModelGeometry, i: usize) -> u32 {
    g.triangle_flags.get(i).copied().unwrap_or(0)
}

impl NewProximityIntersection {
    pub fn new() -> NewProximityIntersection {
        NewProximityIntersection::default()
    }

    fn table(&self, k1: PrimitiveKind, k2: PrimitiveKind) -> Option<Entry> {
        use PrimitiveKind::*;
        match (k1, k2) {
            (Point, Point)
            | (Line, Point)
            | (Line, Line)
            | (Triangle, Point)
            | (Triangle, Line)
            | (Triangle, Triangle)
            | (Sphere, Point)
            | (RigidSphere, Point)
            | (Line, RigidSphere)
            | (Line, Sphere)
            | (Triangle, RigidSphere)
            | (Triangle, Sphere) => Some(Entry::Run),
            _ => discrete_table(k1, k2),
        }
    }

    /// `alarm + cd(M1) + cd(M2)`.
    fn alarm(&self, g1: &ModelGeometry, g2: &ModelGeometry) -> f64 {
        self.alarm_distance + g1.contact_distance + g2.contact_distance
    }

    /// `contact + cd(M1) + cd(M2)`.
    fn contact(&self, g1: &ModelGeometry, g2: &ModelGeometry) -> f64 {
        self.contact_distance + g1.contact_distance + g2.contact_distance
    }

    /// The write into the stored triangle normals that SOFA's Triangle–Triangle test performs
    /// (spec §7.5, AS IMPLEMENTED) before testing a pair that is not a pair of neighbours: unless
    /// both models are `bothSide`, the normal of `e2` becomes minus the normal of `e1` when the
    /// first model is not `bothSide`, else the normal of `e1` becomes minus that of `e2`. The
    /// outputs of this method never read stored normals, so [`IntersectionMethod::intersect`]
    /// does not depend on it; a caller that keeps stored normals across steps (non-moving
    /// triangle models, `useSurfaceNormals`, display) can apply it. `None` when nothing is
    /// written (or the models have no stored normals).
    pub fn triangle_normal_side_effect(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize) -> Option<StoredNormalWrite> {
        if g1.kind != PrimitiveKind::Triangle || g2.kind != PrimitiveKind::Triangle || !in_range(g1, e1, g2, e2) || neighbours(g1, e1, g2, e2) {
            return None;
        }
        match (g1.both_side, g2.both_side) {
            (true, true) => None,
            (false, _) => Some(StoredNormalWrite { model: 1, element: e2, normal: -*g1.triangle_normals.get(e1)? }),
            (true, false) => Some(StoredNormalWrite { model: 0, element: e1, normal: -*g2.triangle_normals.get(e2)? }),
        }
    }

    fn sphere_sphere(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let (r1, r2) = (radius(g1, e1), radius(g2, e2));
        let alarm2 = self.alarm(g1, g2) + r1 + r2;
        let start = out.len();
        let n = point_point(alarm2 * alarm2, &g1.x[e1], &g2.x[e2], bigger_model_id(g1, e1, g2, e2), out);
        let contact2 = self.contact(g1, g2) + r1 + r2;
        finish(&mut out[start..], (e1, e2), contact2);
        n
    }

    fn point_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let alarm = self.alarm(g1, g2);
        let start = out.len();
        let n = point_point(alarm * alarm, &g1.x[e1], &g2.x[e2], bigger_model_id(g1, e1, g2, e2), out);
        finish(&mut out[start..], (e1, e2), self.contact(g1, g2));
        n
    }

    fn line_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let alarm = self.alarm(g1, g2);
        let [a, b] = line_points(g1, e1);
        let start = out.len();
        let n = line_point(alarm * alarm, &a, &b, &g2.x[e2], e2 as i64, false, out);
        finish(&mut out[start..], (e1, e2), self.contact(g1, g2));
        n
    }

    fn line_line(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let alarm = self.alarm(g1, g2);
        let [a, b] = line_points(g1, e1);
        let [c, d] = line_points(g2, e2);
        let start = out.len();
        let n = line_line(alarm * alarm, &a, &b, &c, &d, bigger_model_id(g1, e1, g2, e2), out);
        finish(&mut out[start..], (e1, e2), self.contact(g1, g2));
        n
    }

    fn triangle_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let alarm = self.alarm(g1, g2);
        let [p1, p2, p3] = triangle_points(g1, e1);
        let start = out.len();
        let n = triangle_point(alarm * alarm, flags_of(g1, e1), &p1, &p2, &p3, &g2.x[e2], e2 as i64, false, out);
        finish(&mut out[start..], (e1, e2), self.contact(g1, g2));
        n
    }

    /// Triangle–Line: the owned triangle vertices against the line, both line ends against the
    /// triangle, and with `useLineLine` the owned triangle edges against the line; id = line
    /// index for all.
    fn triangle_line(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let alarm = self.alarm(g1, g2);
        let dist2 = alarm * alarm;
        let [p1, p2, p3] = triangle_points(g1, e1);
        let [q1, q2] = line_points(g2, e2);
        let f1 = flags_of(g1, e1);
        let id = e2 as i64;
        let start = out.len();
        let mut n = 0;
        for (flag, pk) in [(P1, &p1), (P2, &p2), (P3, &p3)] {
            if f1 & flag != 0 {
                n += line_point(dist2, &q1, &q2, pk, id, true, out);
            }
        }
        n += triangle_point(dist2, f1, &p1, &p2, &p3, &q1, id, false, out);
        n += triangle_point(dist2, f1, &p1, &p2, &p3, &q2, id, false, out);
        if self.use_line_line {
            for (flag, a, b) in [(E12, &p1, &p2), (E23, &p2, &p3), (E31, &p3, &p1)] {
                if f1 & flag != 0 {
                    n += line_line(dist2, a, b, &q1, &q2, id, out);
                }
            }
        }
        finish(&mut out[start..], (e1, e2), self.contact(g1, g2));
        n
    }

    /// Triangle–Triangle: no output for two triangles of one model that share a vertex; ids
    /// `3·e1 + k` for the vertices of e1 and `3·size(M1) + 12·e2 + …` for the vertices and edges
    /// of e2. The first vertex of e1 is tested whatever its ownership flag (AS IMPLEMENTED).
    fn triangle_triangle(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        if neighbours(g1, e1, g2, e2) {
            return 0;
        }
        let alarm = self.alarm(g1, g2);
        let dist2 = alarm * alarm;
        let [p1, p2, p3] = triangle_points(g1, e1);
        let [q1, q2, q3] = triangle_points(g2, e2);
        let f1 = flags_of(g1, e1);
        let f2 = flags_of(g2, e2);
        let id1 = 3 * e1 as i64;
        let id2 = 3 * g1.len() as i64 + 12 * e2 as i64;
        let start = out.len();
        let mut n = 0;
        n += triangle_point(dist2, f2, &q1, &q2, &q3, &p1, id1, true, out);
        if f1 & P2 != 0 {
            n += triangle_point(dist2, f2, &q1, &q2, &q3, &p2, id1 + 1, true, out);
        }
        if f1 & P3 != 0 {
            n += triangle_point(dist2, f2, &q1, &q2, &q3, &p3, id1 + 2, true, out);
        }
        for (k, (flag, qk)) in [(P1, &q1), (P2, &q2), (P3, &q3)].into_iter().enumerate() {
            if f2 & flag != 0 {
                n += triangle_point(dist2, f1, &p1, &p2, &p3, qk, id2 + k as i64, false, out);
            }
        }
        if self.use_line_line {
            let edges1 = [(E12, &p1, &p2), (E23, &p2, &p3), (E31, &p3, &p1)];
            let edges2 = [(E12, &q1, &q2), (E23, &q2, &q3), (E31, &q3, &q1)];
            for (i, &(fa, a, b)) in edges1.iter().enumerate() {
                if f1 & fa == 0 {
                    continue;
                }
                for (j, &(fc, c, d)) in edges2.iter().enumerate() {
                    if f2 & fc != 0 {
                        let id = id2 + 3 + 3 * i as i64 + j as i64;
                        n += line_line(dist2, a, b, c, d, id, out);
                    }
                }
            }
        }
        finish(&mut out[start..], (e1, e2), self.contact(g1, g2));
        n
    }

    /// Sphere–Point: the centre against the point; id = bigger-model id; `point[0]` is the
    /// centre, also for rigid spheres.
    fn sphere_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let r = radius(g1, e1);
        let alarm = self.alarm(g1, g2) + r;
        let start = out.len();
        let n = point_point(alarm * alarm, &g1.x[e1], &g2.x[e2], bigger_model_id(g1, e1, g2, e2), out);
        finish(&mut out[start..], (e1, e2), self.contact(g1, g2) + r);
        n
    }

    /// Line–Sphere: the segment against the centre (`point[1]` is the centre); id = sphere
    /// index.
    fn line_sphere(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let r = radius(g2, e2);
        let alarm = self.alarm(g1, g2) + r;
        let [a, b] = line_points(g1, e1);
        let start = out.len();
        let n = line_point(alarm * alarm, &a, &b, &g2.x[e2], e2 as i64, false, out);
        finish(&mut out[start..], (e1, e2), self.contact(g1, g2) + r);
        n
    }

    /// Triangle–Sphere: `TrianglePoint` with fixed thresholds and, AS IMPLEMENTED, other flags
    /// (AB and AC edges both need `E12`, BC needs `E31`; corner A uses 1e-7 for pAC); the
    /// distance is guarded; `point[1]` is the sphere's contact point along the normal.
    fn triangle_sphere(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let flags = flags_of(g1, e1);
        let r = radius(g2, e2);
        let alarm = self.alarm(g1, g2) + r;
        let dist2 = alarm * alarm;
        let [p1, p2, p3] = triangle_points(g1, e1);
        let c = g2.x[e2];
        let (sys, ab, ac) = Normal2::triangle(&p1, &p2, &p3, &c);
        // No lower bound on the edge parameters: `p ≥ −∞` holds for every value but NaN, which
        // the upper bound `p < 0.999999` already rejects.
        let snap = Snap { eps: 0.000001, corner_ac: 0.0000001, edge_from: f64::NEG_INFINITY, ac_edge: E12, bc_edge: E31 };
        let Some((alpha, beta)) = snap.owned(&sys, flags) else {
            return 0;
        };
        let p = p1 + ab * alpha + ac * beta;
        let pq = c - p;
        let n2 = norm2(&pq);
        if n2 >= dist2 {
            return 0;
        }
        let mut value = n2.sqrt();
        let normal = if value > 1e-15 { div(&pq, value) } else { Vec3::new(1.0, 0.0, 0.0) };
        value -= self.contact(g1, g2) + r;
        out.push(DetectionOutput { elem: (e1, e2), id: e2 as i64, point: [p, contact_point_by_normal(g2, e2, &normal)], normal, value });
        1
    }
}

/// Two triangles of one model sharing a vertex index (no Triangle–Triangle test).
fn neighbours(g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize) -> bool {
    if !std::ptr::eq(g1, g2) {
        return false;
    }
    let (a, b) = (g1.triangles[e1], g2.triangles[e2]);
    a.iter().any(|v| b.contains(v))
}

proximity_intersection_method!(NewProximityIntersection, "NewProximityIntersection");

impl NewProximityIntersection {
    /// A pair the table runs, both elements in range. Two triangle models are "the same model"
    /// (neighbour pruning of Triangle–Triangle) when `g1` and `g2` are the same reference.
    fn run(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        use PrimitiveKind::*;
        match (g1.kind, g2.kind) {
            (k1, k2) if is_sphere(k1) && is_sphere(k2) => self.sphere_sphere(g1, e1, g2, e2, out),
            (Point, Point) => self.point_point(g1, e1, g2, e2, out),
            (Line, Point) => self.line_point(g1, e1, g2, e2, out),
            (Line, Line) => self.line_line(g1, e1, g2, e2, out),
            (Triangle, Point) => self.triangle_point(g1, e1, g2, e2, out),
            (Triangle, Line) => self.triangle_line(g1, e1, g2, e2, out),
            (Triangle, Triangle) => self.triangle_triangle(g1, e1, g2, e2, out),
            (Sphere, Point) | (RigidSphere, Point) => self.sphere_point(g1, e1, g2, e2, out),
            (Line, Sphere) | (Line, RigidSphere) => self.line_sphere(g1, e1, g2, e2, out),
            (Triangle, Sphere) | (Triangle, RigidSphere) => self.triangle_sphere(g1, e1, g2, e2, out),
            (Tetrahedron, Point) => tetrahedron_point(g1, e1, g2, e2, out),
            _ => 0,
        }
    }
}
