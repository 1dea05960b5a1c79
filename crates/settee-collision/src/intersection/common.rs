//! Pieces shared by the intersection methods: the registration tables, sphere accessors, contact
//! identifiers, the guarded normalisation and the box tests.

use super::kernels::{cross, div, norm, normalized};
use super::PairSupport;
use crate::geometry::{Aabb, ModelGeometry, PrimitiveKind, Vec3};
use crate::output::DetectionOutput;

/// An entry of an intersector table (SOFA's `IntersectorMap`): a registered intersector or a
/// pair registered as ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    Run,
    Ignore,
}

/// SOFA's lookup (`IntersectorMap::get`, spec §5.2): the key (k1, k2) first, then (k2, k1).
pub(crate) fn lookup(table: impl Fn(PrimitiveKind, PrimitiveKind) -> Option<Entry>, k1: PrimitiveKind, k2: PrimitiveKind) -> PairSupport {
    match table(k1, k2) {
        Some(Entry::Run) => PairSupport::Supported { swap: false },
        Some(Entry::Ignore) => PairSupport::Ignored,
        None => match table(k2, k1) {
            Some(Entry::Run) => PairSupport::Supported { swap: true },
            Some(Entry::Ignore) => PairSupport::Ignored,
            None => PairSupport::Unknown,
        },
    }
}

/// The entries every method inherits from `DiscreteIntersection`'s constructor and its
/// extension table (Mesh: Triangle–Line; Tetrahedron: Tetrahedron–Point; spec §7.1). Ray pairs
/// are out of scope.
pub(crate) fn discrete_table(k1: PrimitiveKind, k2: PrimitiveKind) -> Option<Entry> {
    use PrimitiveKind::*;
    match (k1, k2) {
        (Cube, Cube) | (Sphere, Sphere) | (RigidSphere, RigidSphere) | (Sphere, RigidSphere) | (Triangle, Line) | (Tetrahedron, Point) => {
            Some(Entry::Run)
        }
        _ => None,
    }
}

pub(crate) fn is_sphere(k: PrimitiveKind) -> bool {
    matches!(k, PrimitiveKind::Sphere | PrimitiveKind::RigidSphere)
}

/// Whether both elements exist in their models (SOFA's Triangle–Triangle code checks this and
/// gives no output otherwise; the other pairs would read out of bounds).
pub(crate) fn in_range(g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize) -> bool {
    e1 < g1.len() && e2 < g2.len()
}

/// The radius of sphere `i` (`TSphere::r`).
#[inline]
pub(crate) fn radius(g: &ModelGeometry, i: usize) -> f64 {
    g.radius[i]
}

/// `TSphere::getContactPointByNormal(n)`: the centre for `Vec3` spheres (specialisation in
/// [GEO]`SphereCollisionModel.cpp`), `centre − n·r` for rigid spheres.
#[inline]
pub(crate) fn contact_point_by_normal(g: &ModelGeometry, i: usize, n: &Vec3) -> Vec3 {
    let c = g.x[i];
    if g.kind == PrimitiveKind::RigidSphere {
        c - n * radius(g, i)
    } else {
        c
    }
}

/// "Bigger-model id": the element of the model with more elements (`e2` on ties).
#[inline]
pub(crate) fn bigger_model_id(g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize) -> i64 {
    if g1.len() > g2.len() {
        e1 as i64
    } else {
        e2 as i64
    }
}

/// `normal = v; value = |v|; if value > 1e-15 { normal /= value } else { normal = (1,0,0) }`
/// (MinProximity and NewProximity Triangle–Sphere; SOFA also warns "Null distance between
/// contact detected").
#[inline]
pub(crate) fn guarded_unit(v: &Vec3) -> (Vec3, f64) {
    let value = norm(v);
    if value > 1e-15 {
        (div(v, value), value)
    } else {
        (Vec3::new(1.0, 0.0, 0.0), value)
    }
}

/// The stored normal of triangle `i` of a triangle model, or — for a snapshot without stored
/// normals — the same formula computed from the current positions.
pub(crate) fn stored_triangle_normal(g: &ModelGeometry, i: usize) -> Vec3 {
    match g.triangle_normals.get(i) {
        Some(n) => *n,
        None => {
            let t = g.triangles[i];
            let (p1, p2, p3) = (&g.x[t[0]], &g.x[t[1]], &g.x[t[2]]);
            normalized(cross(&(p2 - p1), &(p3 - p1)))
        }
    }
}

/// The vertices of triangle `i` of a triangle model.
pub(crate) fn triangle_points(g: &ModelGeometry, i: usize) -> [Vec3; 3] {
    let t = g.triangles[i];
    [g.x[t[0]], g.x[t[1]], g.x[t[2]]]
}

/// The ends of line `i` of a line model.
pub(crate) fn line_points(g: &ModelGeometry, i: usize) -> [Vec3; 2] {
    let [a, b] = g.edges[i];
    [g.x[a], g.x[b]]
}

/// The projection `Q = p1 + AB·α + AC·β` of `p` on the plane of triangle `e` of `g` when it is
/// strictly inside (α, β ≥ 1e-6, α + β ≤ 0.999999; the NaN α, β of a degenerate triangle pass,
/// AS IMPLEMENTED), else `None` (MinProximity and LocalMinDistance Triangle–Point).
pub(crate) fn strict_triangle_projection(g: &ModelGeometry, e: usize, p: &Vec3) -> Option<Vec3> {
    let [p1, p2, p3] = triangle_points(g, e);
    let (sys, ab, ac) = super::kernels::Normal2::triangle(&p1, &p2, &p3, p);
    let alpha = sys.alpha();
    let beta = sys.beta();
    if alpha < 0.000001 || beta < 0.000001 || alpha + beta > 0.999999 {
        return None;
    }
    Some(p1 + ab * alpha + ac * beta)
}

/// Sets `elem` and subtracts the contact distance on the outputs appended since `start` (the
/// tail of every NewProximity pair function).
pub(crate) fn finish(out: &mut [DetectionOutput], elem: (usize, usize), contact: f64) {
    for o in out {
        o.elem = elem;
        o.value -= contact;
    }
}

/// An output with `elem` unset (the NewProximity building blocks).
#[inline]
pub(crate) fn output(id: i64, p0: Vec3, p1: Vec3, normal: Vec3, value: f64) -> DetectionOutput {
    DetectionOutput { elem: (0, 0), id, point: [p0, p1], normal, value }
}

/// `BaseProximityIntersection::testIntersection(Cube, Cube)`: with
/// `D = alarm + cd(M1) + cd(M2)`, disjoint when for some axis `min1 > max2 + D` or
/// `min2 > max1 + D`.
pub(crate) fn proximity_boxes_overlap(alarm: f64, a: &Aabb, ga: &ModelGeometry, b: &Aabb, gb: &ModelGeometry) -> bool {
    let d = alarm + ga.contact_distance + gb.contact_distance;
    for i in 0..3 {
        if a.min[i] > b.max[i] + d || b.min[i] > a.max[i] + d {
            return false;
        }
    }
    true
}

/// `DiscreteIntersection::computeIntersectionSphere` with the given alarm and contact distances
/// (spec §7.2, §7.4 and the "discrete code" sphere entries of LocalMinDistance): `r = r1 + r2`,
/// no contact if `|c2 − c1|² > (alarm + r)²` (touching counts), `normal = (c2 − c1)/|c2 − c1|`,
/// points on each sphere along ∓normal (centres for `Vec3` spheres), `value = |c2 − c1| − r −
/// contact`, id = bigger-model id.
pub(crate) fn sphere_sphere_discrete(
    g1: &ModelGeometry,
    e1: usize,
    g2: &ModelGeometry,
    e2: usize,
    alarm: f64,
    contact: f64,
    out: &mut Vec<DetectionOutput>,
) -> usize {
    let r = radius(g1, e1) + radius(g2, e2);
    let my_alarm = alarm + r;
    let dist = g2.x[e2] - g1.x[e1];
    let norm2 = super::kernels::norm2(&dist);
    if norm2 > my_alarm * my_alarm {
        return 0;
    }
    let d = norm2.sqrt();
    let normal = div(&dist, d);
    out.push(DetectionOutput {
        elem: (e1, e2),
        id: bigger_model_id(g1, e1, g2, e2),
        point: [contact_point_by_normal(g1, e1, &-normal), contact_point_by_normal(g2, e2, &normal)],
        normal,
        value: d - r - contact,
    });
    1
}

/// [`IntersectionMethod`](super::IntersectionMethod) for a proximity method (a type with
/// `alarm_distance` and `contact_distance` fields, a `table(&self, k1, k2)` of its pairs and a
/// `run(&self, g1, e1, g2, e2, out)` computing a pair the table runs): the proximity box test
/// with the method's alarm distance, SOFA's lookup in the table, and no output for an element
/// out of range or a pair the table does not run.
macro_rules! proximity_intersection_method {
    ($method:ty, $name:literal) => {
        impl $crate::intersection::IntersectionMethod for $method {
            fn name(&self) -> &'static str {
                $name
            }

            fn alarm_distance(&self) -> f64 {
                self.alarm_distance
            }

            fn contact_distance(&self) -> f64 {
                self.contact_distance
            }

            fn boxes_overlap(
                &self,
                a: &$crate::geometry::Aabb,
                ga: &$crate::geometry::ModelGeometry,
                b: &$crate::geometry::Aabb,
                gb: &$crate::geometry::ModelGeometry,
                _same_box: bool,
            ) -> bool {
                $crate::intersection::common::proximity_boxes_overlap(self.alarm_distance, a, ga, b, gb)
            }

            fn support(&self, k1: $crate::geometry::PrimitiveKind, k2: $crate::geometry::PrimitiveKind) -> $crate::intersection::PairSupport {
                $crate::intersection::common::lookup(|a, b| self.table(a, b), k1, k2)
            }

            fn intersect(
                &self,
                g1: &$crate::geometry::ModelGeometry,
                e1: usize,
                g2: &$crate::geometry::ModelGeometry,
                e2: usize,
                out: &mut Vec<$crate::output::DetectionOutput>,
            ) -> usize {
                if !$crate::intersection::common::in_range(g1, e1, g2, e2)
                    || self.table(g1.kind, g2.kind) != Some($crate::intersection::common::Entry::Run)
                {
                    return 0;
                }
                self.run(g1, e1, g2, e2, out)
            }
        }
    };
}
pub(crate) use proximity_intersection_method;
