//! `DiscreteIntersection` (spec §7.2) and the discrete intersectors every method inherits:
//! Triangle–Line ([INT]`MeshDiscreteIntersection.cpp`) and Tetrahedron–Point
//! ([INT]`TetrahedronDiscreteIntersection.cpp`, spec §7.8).

use super::common::{discrete_table, in_range, lookup, sphere_sphere_discrete, stored_triangle_normal, Entry};
use super::kernels::{invert3, mat3_mul, Mat3};
use super::{IntersectionMethod, PairSupport};
use crate::geometry::{Aabb, ModelGeometry, PrimitiveKind, Vec3};
use crate::output::DetectionOutput;

/// `DiscreteIntersection`: exact overlap tests, no alarm or contact distance (model
/// `contactDistance`s are ignored). No Data.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DiscreteIntersection;

impl DiscreteIntersection {
    pub fn new() -> DiscreteIntersection {
        DiscreteIntersection
    }

    fn table(k1: PrimitiveKind, k2: PrimitiveKind) -> Option<Entry> {
        discrete_table(k1, k2)
    }
}

impl IntersectionMethod for DiscreteIntersection {
    fn name(&self) -> &'static str {
        "DiscreteIntersection"
    }

    fn alarm_distance(&self) -> f64 {
        0.0
    }

    fn contact_distance(&self) -> f64 {
        0.0
    }

    /// `DiscreteIntersection::testIntersection(Cube, Cube)`: a box against itself overlaps when
    /// its normal-cone angle is at least π/2 — always with the default cone (2π, no
    /// `useCurvature`), which is what this returns; otherwise `min1 ≤ max2` and `min2 ≤ max1` on
    /// every axis (alarm distance 0, model skins ignored).
    fn boxes_overlap(&self, a: &Aabb, _ga: &ModelGeometry, b: &Aabb, _gb: &ModelGeometry, same_box: bool) -> bool {
        if same_box {
            return true;
        }
        let alarm = 0.0;
        for i in 0..3 {
            if a.min[i] > b.max[i] + alarm || b.min[i] > a.max[i] + alarm {
                return false;
            }
        }
        true
    }

    fn support(&self, k1: PrimitiveKind, k2: PrimitiveKind) -> PairSupport {
        lookup(Self::table, k1, k2)
    }

    fn intersect(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        use PrimitiveKind::*;
        if !in_range(g1, e1, g2, e2) {
            return 0;
        }
        match (g1.kind, g2.kind) {
            (Sphere, Sphere) | (RigidSphere, RigidSphere) | (Sphere, RigidSphere) => sphere_sphere_discrete(g1, e1, g2, e2, 0.0, 0.0, out),
            (Triangle, Line) => triangle_line(g1, e1, g2, e2, out),
            (Tetrahedron, Point) => tetrahedron_point(g1, e1, g2, e2, out),
            _ => 0,
        }
    }
}

/// `MeshDiscreteIntersection::computeIntersection(Triangle, Line)`: solves
/// `A + u·AB + v·AC = P + t·PQ` by inverting the 3×3 matrix of columns (AB, AC, −PQ); no output
/// if it is singular (`|det| ≤ ε`) or unless `u ≥ 0, v ≥ 0, u + v ≤ 1, 0 ≤ t ≤ 1`. Output:
/// both points `X = P + PQ·t`, the triangle's stored normal, value 0, id = line index.
pub(crate) fn triangle_line(g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
    let t = g1.triangles[e1];
    let a = g1.x[t[0]];
    let ab = g1.x[t[1]] - a;
    let ac = g1.x[t[2]] - a;
    let l = g2.edges[e2];
    let p = g2.x[l[0]];
    let pq = g2.x[l[1]] - p;
    let mut m: Mat3 = [[0.0; 3]; 3];
    let mut right = Vec3::zeros();
    for i in 0..3 {
        m[i][0] = ab[i];
        m[i][1] = ac[i];
        m[i][2] = -pq[i];
        right[i] = p[i] - a[i];
    }
    let Some(minv) = invert3(&m) else {
        return 0;
    };
    let bary = mat3_mul(&minv, &right);
    if bary[0] < 0.0 || bary[1] < 0.0 || bary[0] + bary[1] > 1.0 {
        return 0;
    }
    if bary[2] < 0.0 || bary[2] > 1.0 {
        return 0;
    }
    let x = p + pq * bary[2];
    out.push(DetectionOutput { elem: (e1, e2), id: e2 as i64, point: [x, x], normal: stored_triangle_normal(g1, e1), value: 0.0 });
    1
}

/// The barycentric transform TetrahedronCollisionModel stores per element at each bounding-tree
/// update: `coord0 = p1` and the inverse of the matrix whose columns are `p2 − p1, p3 − p1,
/// p4 − p1` (the zero matrix when it is singular: SOFA's default-initialised `minv` is left
/// untouched by a failed inversion).
pub(crate) fn tetrahedron_coord2bary(g: &ModelGeometry, i: usize) -> (Vec3, Mat3) {
    let t = g.tetrahedra[i];
    let p1 = g.x[t[0]];
    let cols = [g.x[t[1]] - p1, g.x[t[2]] - p1, g.x[t[3]] - p1];
    let mut m: Mat3 = [[0.0; 3]; 3];
    for (c, col) in cols.iter().enumerate() {
        for r in 0..3 {
            m[r][c] = col[r];
        }
    }
    (p1, invert3(&m).unwrap_or([[0.0; 3]; 3]))
}

/// `TetrahedronDiscreteIntersection::computeIntersection(Tetrahedron, Point)` (spec §7.8):
/// needs the point model's normals; no output for a zero normal, for a point that is a vertex of
/// the tetrahedron when both models share their state (taken here as: the same node), or for a
/// point whose barycentric coordinates are outside (SOFA returns 1 there without appending an
/// output; this returns the number appended, 0). Otherwise the ray from P along −n meets the
/// faces at distance `l` (0 if none within 1e9): `point[0] = P − n·l`, `point[1] = P`,
/// `normal = −n`, `value = −l`, id = point index.
pub(crate) fn tetrahedron_point(g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
    let n = g2.point_normals.get(e2).copied().unwrap_or_else(Vec3::zeros);
    if n == Vec3::zeros() {
        return 0;
    }
    if g1.node == g2.node && g1.tetrahedra[e1].contains(&e2) {
        return 0;
    }
    let p = g2.x[e2];
    let (coord0, coord2bary) = tetrahedron_coord2bary(g1, e1);
    let b0 = mat3_mul(&coord2bary, &(p - coord0));
    if b0[0] < 0.0 || b0[1] < 0.0 || b0[2] < 0.0 || (b0[0] + b0[1] + b0[2]) > 1.0 {
        return 0;
    }
    let bdir = mat3_mul(&coord2bary, &-n);
    let mut l1 = 1.0e10;
    for c in 0..3 {
        if bdir[c] < -1.0e-10 {
            let l = -b0[c] / bdir[c];
            if l < l1 {
                l1 = l;
            }
        }
    }
    // Fourth face: b0 + b1 + b2 = 1.
    let bd = bdir[0] + bdir[1] + bdir[2];
    if bd > 1.0e-10 {
        let l = (1.0 - (b0[0] + b0[1] + b0[2])) / bd;
        if l < l1 {
            l1 = l;
        }
    }
    if l1 >= 1.0e9 {
        l1 = 0.0;
    }
    let l = l1;
    out.push(DetectionOutput { elem: (e1, e2), id: e2 as i64, point: [p - n * l, p], normal: -n, value: -l });
    1
}
