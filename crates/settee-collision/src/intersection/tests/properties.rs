//! Identities that hold for every input, checked on random geometry.

use proptest::prelude::*;

use super::*;
use crate::intersection::{DiscreteIntersection, LocalMinDistance, MinProximityIntersection, NewProximityIntersection};

fn coord() -> impl Strategy<Value = f64> {
    -2.0f64..2.0
}

fn point3() -> impl Strategy<Value = Vec3> {
    (coord(), coord(), coord()).prop_map(|(x, y, z)| v(x, y, z))
}

fn norm(a: &Vec3) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// Twice the area of the triangle.
fn area2(a: &Vec3, b: &Vec3, c: &Vec3) -> f64 {
    (b - a).cross(&(c - a)).norm()
}

fn methods() -> Vec<Box<dyn IntersectionMethod>> {
    vec![
        Box::new(DiscreteIntersection),
        Box::new(MinProximityIntersection::default()),
        Box::new(NewProximityIntersection::default()),
        Box::new(LocalMinDistance::default()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Swapping two Vec3 spheres flips the normal exactly and keeps the gap (the sums of radii
    /// and distances may be formed in another order: 1e-12).
    #[test]
    fn swapping_spheres_flips_the_normal(
        c1 in point3(), c2 in point3(), r1 in 0.1f64..1.0, r2 in 0.1f64..1.0,
    ) {
        let g1 = spheres(1, &[c1], &[r1]);
        let g2 = spheres(2, &[c2], &[r2]);
        let d = norm(&(c2 - c1));
        // Stay away from the alarm boundaries, where rounding may decide differently.
        for edge in [r1 + r2, 1.0 + r1 + r2] {
            prop_assume!((d - edge).abs() > 1e-9);
        }
        prop_assume!(d > 1e-9);
        for m in methods() {
            let a = run(m.as_ref(), &g1, 0, &g2, 0);
            let b = run(m.as_ref(), &g2, 0, &g1, 0);
            prop_assert_eq!(a.len(), b.len(), "{}", m.name());
            if let (Some(a), Some(b)) = (a.first(), b.first()) {
                prop_assert_eq!(a.normal, -b.normal, "{}", m.name());
                prop_assert!((a.value - b.value).abs() <= 1e-12, "{}", m.name());
                prop_assert_eq!(a.point, [b.point[1], b.point[0]], "{}", m.name());
            }
        }
    }

    /// MinProximity Triangle–Point: the triangle's contact point lies in the triangle's plane
    /// and strictly inside it, the point's is P itself, the normal is (P − Q)/|P − Q| and
    /// value = |P − Q| − contact.
    #[test]
    fn min_proximity_triangle_point_identities(
        a in point3(), b in point3(), c in point3(), p in point3(),
    ) {
        prop_assume!(area2(&a, &b, &c) > 0.1);
        let tri = triangles(1, &[a, b, c], &[[0, 1, 2]], 0);
        let pts = points(2, &[p]);
        let m = MinProximityIntersection { alarm_distance: 4.0, ..Default::default() };
        for o in run(&m, &tri, 0, &pts, 0) {
            let n = tri.triangle_normals[0];
            prop_assert!((o.point[0] - a).dot(&n).abs() <= 1e-12);
            prop_assert_eq!(o.point[1], p);
            let d = o.point[1] - o.point[0];
            prop_assert!((o.value - (norm(&d) - 0.5)).abs() <= 1e-12);
            prop_assert!((o.normal * norm(&d) - d).norm() <= 1e-12);
            // QP is orthogonal to the plane: the normal is ±n (when QP is not tiny).
            if norm(&d) > 1e-6 {
                prop_assert!((o.normal.dot(&n).abs() - 1.0).abs() <= 1e-9);
            }
        }
    }

    /// NewProximity Triangle–Point with every flag: the contact point is the closest point of
    /// the closed triangle (no vertex and no sampled point is closer), and the output exists
    /// exactly when that distance is below the alarm distance.
    #[test]
    fn new_proximity_triangle_point_is_the_closest_point(
        a in point3(), b in point3(), c in point3(), p in point3(),
        s in 0.0f64..1.0, t in 0.0f64..1.0,
    ) {
        prop_assume!(area2(&a, &b, &c) > 0.1);
        let tri = triangles(1, &[a, b, c], &[[0, 1, 2]], ALL_FLAGS);
        let pts = points(2, &[p]);
        let m = NewProximityIntersection { alarm_distance: 8.0, ..Default::default() };
        let out = run(&m, &tri, 0, &pts, 0);
        prop_assert_eq!(out.len(), 1);
        let o = &out[0];
        let dist = norm(&(p - o.point[0]));
        prop_assert!((o.value - (dist - 0.5)).abs() <= 1e-12);
        let (u, w) = if s + t > 1.0 { (1.0 - s, 1.0 - t) } else { (s, t) };
        let sample = a + (b - a) * u + (c - a) * w;
        for x in [a, b, c, sample] {
            prop_assert!(dist <= norm(&(p - x)) + 1e-9);
        }
    }

    /// LocalMinDistance Triangle–Point keeps only points in front of the triangle.
    #[test]
    fn local_min_distance_triangle_point_front_side(
        a in point3(), b in point3(), c in point3(), p in point3(),
    ) {
        prop_assume!(area2(&a, &b, &c) > 0.1);
        let tri = triangles(1, &[a, b, c], &[[0, 1, 2]], 0);
        let pts = points(2, &[p]);
        let m = LocalMinDistance { alarm_distance: 4.0, ..Default::default() };
        for o in run(&m, &tri, 0, &pts, 0) {
            prop_assert!((p - o.point[0]).dot(&tri.triangle_normals[0]) >= 0.0);
            let d = o.point[1] - o.point[0];
            prop_assert!((o.value - (norm(&d) - 0.5)).abs() <= 1e-12);
        }
    }

    /// MinProximity Line–Line: away from the parallel case, PQ is orthogonal to both lines.
    #[test]
    fn min_proximity_line_line_is_orthogonal(
        a in point3(), b in point3(), c in point3(), d in point3(),
    ) {
        let (ab, cd) = (b - a, d - c);
        prop_assume!(ab.norm() > 0.1 && cd.norm() > 0.1);
        prop_assume!(ab.cross(&cd).norm() > 0.05 * ab.norm() * cd.norm());
        let l1 = lines(1, &[a, b], &[[0, 1]]);
        let l2 = lines(2, &[c, d], &[[0, 1]]);
        let m = MinProximityIntersection { alarm_distance: 8.0, ..Default::default() };
        for o in run(&m, &l1, 0, &l2, 0) {
            let pq = o.point[1] - o.point[0];
            prop_assert!(pq.dot(&ab).abs() <= 1e-9);
            prop_assert!(pq.dot(&cd).abs() <= 1e-9);
            prop_assert!((o.value - (norm(&pq) - 0.5)).abs() <= 1e-12);
        }
    }

    /// NewProximity Line–Point: the contact point lies on the segment and no end is closer.
    #[test]
    fn new_proximity_line_point_on_segment(a in point3(), b in point3(), p in point3()) {
        prop_assume!((b - a).norm() > 0.1);
        let l = lines(1, &[a, b], &[[0, 1]]);
        let m = NewProximityIntersection { alarm_distance: 8.0, ..Default::default() };
        let out = run(&m, &l, 0, &points(2, &[p]), 0);
        prop_assert_eq!(out.len(), 1);
        let q = out[0].point[0];
        prop_assert!(((q - a).norm() + (b - q).norm() - (b - a).norm()).abs() <= 1e-9);
        let dist = norm(&(p - q));
        prop_assert!(dist <= norm(&(p - a)) + 1e-12 && dist <= norm(&(p - b)) + 1e-12);
    }
}
