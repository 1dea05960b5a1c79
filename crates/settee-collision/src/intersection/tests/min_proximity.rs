use super::*;
use crate::intersection::{MinProximityIntersection, PairSupport};
use crate::Aabb;
use PrimitiveKind::*;

fn mp() -> MinProximityIntersection {
    MinProximityIntersection::default()
}

#[test]
fn defaults_match_sofa() {
    let m = mp();
    assert_eq!((m.alarm_distance, m.contact_distance), (1.0, 0.5));
    assert!(m.use_sphere_triangle && m.use_point_point && m.use_line_point && m.use_line_line);
    assert!(!m.use_surface_normals);
    assert_eq!(m.name(), "MinProximityIntersection");
}

#[test]
fn registration_table_follows_the_flags() {
    let sup = |swap| PairSupport::Supported { swap };
    let m = mp();
    assert_eq!(m.support(Point, Point), sup(false));
    assert_eq!(m.support(Point, Line), sup(true));
    assert_eq!(m.support(Line, Line), sup(false));
    assert_eq!(m.support(Point, Triangle), sup(true));
    assert_eq!(m.support(Triangle, Line), PairSupport::Ignored);
    assert_eq!(m.support(Line, Triangle), PairSupport::Ignored);
    assert_eq!(m.support(Triangle, Triangle), PairSupport::Ignored);
    assert_eq!(m.support(Point, Sphere), sup(true));
    assert_eq!(m.support(RigidSphere, Point), sup(false));
    assert_eq!(m.support(RigidSphere, Triangle), sup(true));
    assert_eq!(m.support(Line, RigidSphere), sup(false));
    assert_eq!(m.support(RigidSphere, Sphere), sup(true));
    assert_eq!(m.support(Point, Tetrahedron), sup(true));
    assert_eq!(m.support(Line, Tetrahedron), PairSupport::Unknown);
    let off = MinProximityIntersection { use_sphere_triangle: false, use_point_point: false, use_line_point: false, use_line_line: false, ..mp() };
    for (a, b) in [
        (Point, Point),
        (Line, Point),
        (Line, Line),
        (Sphere, Point),
        (RigidSphere, Point),
        (Triangle, Sphere),
        (Triangle, RigidSphere),
        (Line, Sphere),
        (Line, RigidSphere),
    ] {
        assert_eq!(off.support(a, b), PairSupport::Ignored, "{a:?}-{b:?}");
    }
    // An ignored pair produces nothing even when called directly.
    let p = points(1, &[v(0.0, 0.0, 0.0)]);
    let q = points(2, &[v(0.1, 0.0, 0.0)]);
    assert!(run(&off, &p, 0, &q, 0).is_empty());
    assert_eq!(run(&mp(), &p, 0, &q, 0).len(), 1);
}

#[test]
fn box_test_adds_alarm_and_both_skins() {
    // D = 1 + 0.25 + 0.5 = 1.75: a gap of exactly 1.75 overlaps (strict >), 1.75 + 2⁻⁴⁰ not.
    let m = mp();
    let mut ga = points(1, &[]);
    let mut gb = points(2, &[]);
    ga.contact_distance = 0.25;
    gb.contact_distance = 0.5;
    let a = Aabb { min: v(0.0, 0.0, 0.0), max: v(1.0, 1.0, 1.0) };
    let b = |x: f64| Aabb { min: v(x, 0.0, 0.0), max: v(x + 1.0, 1.0, 1.0) };
    assert!(m.boxes_overlap(&a, &ga, &b(2.75), &gb, false));
    assert!(!m.boxes_overlap(&a, &ga, &b(2.75 + 2f64.powi(-40)), &gb, false));
    assert!(!m.boxes_overlap(&b(2.75 + 2f64.powi(-40)), &gb, &a, &ga, false));
}

#[test]
fn sphere_sphere_adds_skins_and_touching_counts() {
    // Skins 0.125 and 0.25: alarm = 1.375, alarm' = 1.375 + 2 = 3.375, contact = 0.875.
    // d = 3.25: value = 3.25 − 2 − 0.875 = 0.375.
    let mut g1 = spheres(1, &[v(0.0, 0.0, 0.0)], &[1.0]);
    let mut g2 = spheres(2, &[v(3.25, 0.0, 0.0)], &[1.0]);
    g1.contact_distance = 0.125;
    g2.contact_distance = 0.25;
    let out = run(&mp(), &g1, 0, &g2, 0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].value, 0.375);
    assert_eq!(out[0].normal, v(1.0, 0.0, 0.0));
    assert_eq!(out[0].point, [v(0.0, 0.0, 0.0), v(3.25, 0.0, 0.0)]);
    // d = 3.375 exactly is kept (`>` test), value 0.5.
    g2.x[0] = v(3.375, 0.0, 0.0);
    assert_eq!(run(&mp(), &g1, 0, &g2, 0)[0].value, 0.5);
    g2.x[0] = v(3.375 + 2f64.powi(-40), 0.0, 0.0);
    assert!(run(&mp(), &g1, 0, &g2, 0).is_empty());
}

#[test]
fn rigid_sphere_pairs_use_surface_points() {
    // RigidSphere r = 1 at 0 and r = 0.5 at (0,0,2): alarm' = 1 + 1.5; n = (0,0,1);
    // point[0] = 0 + n·1, point[1] = (0,0,2) − n·0.5; value = 2 − 1.5 − 0.5 = 0.
    let g1 = rigid_spheres(1, &[v(0.0, 0.0, 0.0)], &[1.0]);
    let g2 = rigid_spheres(2, &[v(0.0, 0.0, 2.0)], &[0.5]);
    let out = run(&mp(), &g1, 0, &g2, 0);
    assert_eq!(out[0].point, [v(0.0, 0.0, 1.0), v(0.0, 0.0, 1.5)]);
    assert_eq!(out[0].value, 0.0);
    let s = spheres(3, &[v(0.0, 0.0, 0.0)], &[1.0]);
    let out = run(&mp(), &s, 0, &g2, 0);
    assert_eq!(out[0].point, [v(0.0, 0.0, 0.0), v(0.0, 0.0, 1.5)]);
}

#[test]
fn point_point() {
    // PQ = (0, 0.75, 0): 0.5625 < 1; normal (0,1,0); value 0.75 − 0.5 = 0.25; model 1 is
    // bigger (2 > 1): id = e1 = 1.
    let p = points(1, &[v(5.0, 5.0, 5.0), v(0.0, 0.0, 0.0)]);
    let q = points(2, &[v(0.0, 0.75, 0.0)]);
    let out = run(&mp(), &p, 1, &q, 0);
    assert_eq!(
        out,
        vec![DetectionOutput { elem: (1, 0), id: 1, point: [v(0.0, 0.0, 0.0), v(0.0, 0.75, 0.0)], normal: v(0.0, 1.0, 0.0), value: 0.25 }]
    );
}

#[test]
fn point_point_alarm_is_strict_and_zero_distance_is_guarded() {
    let p = points(1, &[v(0.0, 0.0, 0.0)]);
    // |PQ|² = 1 = alarm²: rejected (`>=`).
    let q = points(2, &[v(0.0, 0.0, 1.0)]);
    assert!(run(&mp(), &p, 0, &q, 0).is_empty());
    // Coincident points: |PQ| = 0 ≤ 1e-15, normal (1,0,0), value 0 − 0.5.
    let q = points(2, &[v(0.0, 0.0, 0.0)]);
    let out = run(&mp(), &p, 0, &q, 0);
    assert_eq!(out[0].normal, v(1.0, 0.0, 0.0));
    assert_eq!(out[0].value, -0.5);
}

#[test]
fn line_point_interior_and_clamped() {
    // Segment (0,0,0)–(2,0,0), P = (0.5,0.5,0): α = (0.5·2)/4 = ¼, Q = (0.5,0,0),
    // QP = (0,0.5,0): value 0; normal (0,1,0); elem (line, point); id = point index.
    let l = lines(1, &[v(0.0, 0.0, 0.0), v(2.0, 0.0, 0.0)], &[[0, 1]]);
    let p = points(2, &[v(7.0, 7.0, 7.0), v(0.5, 0.5, 0.0)]);
    let out = run(&mp(), &l, 0, &p, 1);
    assert_eq!(out, vec![DetectionOutput { elem: (0, 1), id: 1, point: [v(0.5, 0.0, 0.0), v(0.5, 0.5, 0.0)], normal: v(0.0, 1.0, 0.0), value: 0.0 }]);
    // Beyond B: α = 1.25 ≥ 1, Q = B, QP = (0.5,0,0).
    let p = points(2, &[v(2.5, 0.0, 0.0)]);
    let out = run(&mp(), &l, 0, &p, 0);
    assert_eq!(out[0].point[0], v(2.0, 0.0, 0.0));
    assert_eq!(out[0].normal, v(1.0, 0.0, 0.0));
    // Before A: α < 0, Q = A, QP = (−0.375, 0, 0.5), |QP| = 0.625: value 0.125,
    // normal (−0.6, 0, 0.8).
    let p = points(2, &[v(-0.375, 0.0, 0.5)]);
    let out = run(&mp(), &l, 0, &p, 0);
    assert_eq!(out[0].point[0], v(0.0, 0.0, 0.0));
    assert_eq!(out[0].value, 0.125);
    close_v(&out[0].normal, &v(-0.6, 0.0, 0.8), 1e-16);
    // The point's skin is added before the line's: alarm = (1 + 0.25) + 0.5 = 1.75.
    let mut p = points(2, &[v(1.0, 1.625, 0.0)]);
    let mut l2 = l.clone();
    p.contact_distance = 0.25;
    l2.contact_distance = 0.5;
    let out = run(&mp(), &l2, 0, &p, 0);
    assert_eq!(out[0].value, 1.625 - 1.25);
}

#[test]
fn line_line_crossing_and_parallel() {
    // AB = (2,0,0) from 0; CD = (0,2,0) from C = (1,−1,0.5): a00 = a11 = 4, a01 = 0, b0 = 2,
    // b1 = 2, det = 16: α = β = ½, P = (1,0,0), Q = (1,0,0.5): value 0.5 − 0.5 = 0;
    // normal (0,0,1). Model 2 has more lines: id = e2.
    let l1 = lines(1, &[v(0.0, 0.0, 0.0), v(2.0, 0.0, 0.0)], &[[0, 1]]);
    let l2 = lines(2, &[v(1.0, -1.0, 0.5), v(1.0, 1.0, 0.5)], &[[0, 1], [1, 0]]);
    let out = run(&mp(), &l1, 0, &l2, 0);
    assert_eq!(out, vec![DetectionOutput { elem: (0, 0), id: 0, point: [v(1.0, 0.0, 0.0), v(1.0, 0.0, 0.5)], normal: v(0.0, 0.0, 1.0), value: 0.0 }]);
    // Parallel lines (det = 16 − 16 = 0): α = β = ½, midpoints (1,0,0) and (1,0.75,0),
    // value 0.75 − 0.5.
    let l3 = lines(2, &[v(0.0, 0.75, 0.0), v(2.0, 0.75, 0.0)], &[[0, 1]]);
    let out = run(&mp(), &l1, 0, &l3, 0);
    assert_eq!(out[0].point, [v(1.0, 0.0, 0.0), v(1.0, 0.75, 0.0)]);
    assert_eq!(out[0].value, 0.25);
    // Closest points beyond an end (α = 1.5 for a crossing line at x = 3): rejected.
    let l4 = lines(2, &[v(3.0, -1.0, 0.5), v(3.0, 1.0, 0.5)], &[[0, 1]]);
    assert!(run(&mp(), &l1, 0, &l4, 0).is_empty());
}

#[test]
fn triangle_point_interior() {
    // AB = (1,0,0), AC = (0,1,0), AP = (¼,¼,½): α = β = ¼, Q = (¼,¼,0), QP = (0,0,½):
    // value 0; normal (0,0,1); elem (triangle, point); id = point index.
    let tri = unit_triangle(0);
    let p = points(2, &[v(0.0, 0.0, 9.0), v(0.25, 0.25, 0.5)]);
    let out = run(&mp(), &tri, 0, &p, 1);
    assert_eq!(
        out,
        vec![DetectionOutput { elem: (0, 1), id: 1, point: [v(0.25, 0.25, 0.0), v(0.25, 0.25, 0.5)], normal: v(0.0, 0.0, 1.0), value: 0.0 }]
    );
    // Below the triangle: normal −z; with useSurfaceNormals the stored normal +z instead.
    let below = points(2, &[v(0.25, 0.25, -0.75)]);
    let out = run(&mp(), &tri, 0, &below, 0);
    assert_eq!(out[0].normal, v(0.0, 0.0, -1.0));
    assert_eq!(out[0].value, 0.25);
    let sn = MinProximityIntersection { use_surface_normals: true, ..mp() };
    let out = run(&sn, &tri, 0, &below, 0);
    assert_eq!(out[0].normal, v(0.0, 0.0, 1.0));
    assert_eq!(out[0].value, 0.25);
}

#[test]
fn triangle_point_leaves_edges_and_corners_to_other_pairs() {
    let tri = unit_triangle(ALL_FLAGS);
    // Over edge AB (β = 0 < 1e-6), over vertex A (α = β = 0), beyond BC (α + β = 1.5).
    for p in [v(0.5, 0.0, 0.5), v(0.0, 0.0, 0.5), v(0.75, 0.75, 0.5)] {
        assert!(run(&mp(), &tri, 0, &points(2, &[p]), 0).is_empty(), "{p:?}");
    }
    // α = 1e-6 exactly is kept (`<` test): P = (1e-6, 0.5, 0.5).
    let out = run(&mp(), &tri, 0, &points(2, &[v(1e-6, 0.5, 0.5)]), 0);
    assert_eq!(out.len(), 1);
}

#[test]
fn triangle_point_alarm_boundary_and_skin_order() {
    let mut tri = unit_triangle(0);
    // |QP|² = 1 = alarm²: rejected; 0.999 accepted.
    assert!(run(&mp(), &tri, 0, &points(2, &[v(0.25, 0.25, 1.0)]), 0).is_empty());
    assert_eq!(run(&mp(), &tri, 0, &points(2, &[v(0.25, 0.25, 0.999)]), 0).len(), 1);
    // Skins: point 0.125, triangle 0.25: alarm = 1.375, contact = 0.875; z = 1.25 gives
    // value 1.25 − 0.875 = 0.375.
    tri.contact_distance = 0.25;
    let mut p = points(2, &[v(0.25, 0.25, 1.25)]);
    p.contact_distance = 0.125;
    assert_eq!(run(&mp(), &tri, 0, &p, 0)[0].value, 0.375);
}

#[test]
fn degenerate_triangle_gives_nan_as_sofa() {
    // Collinear vertices: det = 4 − 4 = 0 and α = β = 0/0 = NaN pass every window test, the
    // output has NaN value and the (1,0,0) fallback normal (AS IMPLEMENTED).
    let tri = triangles(1, &[v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(2.0, 0.0, 0.0)], &[[0, 1, 2]], 0);
    let out = run(&mp(), &tri, 0, &points(2, &[v(0.5, 0.5, 0.0)]), 0);
    assert_eq!(out.len(), 1);
    assert!(out[0].value.is_nan());
    assert_eq!(out[0].normal, v(1.0, 0.0, 0.0));
    // Its stored normal is the zero cross product, left as is by SOFA's normalize.
    assert_eq!(tri.triangle_normals[0], Vec3::zeros());
}

#[test]
fn sphere_point_contact_point_on_the_sphere() {
    // c = 0, r = 0.5, Q = (0,0,1.25): alarm = 1 + 0.5; value = 1.25 − (0.5 + 0.5) = 0.25;
    // id = sphere index even though the point model is bigger.
    let s = spheres(1, &[v(0.0, 0.0, 0.0)], &[0.5]);
    let q = points(2, &[v(0.0, 0.0, 1.25), v(1.0, 1.0, 1.0), v(2.0, 2.0, 2.0)]);
    let out = run(&mp(), &s, 0, &q, 0);
    assert_eq!(
        out,
        vec![DetectionOutput { elem: (0, 0), id: 0, point: [v(0.0, 0.0, 0.0), v(0.0, 0.0, 1.25)], normal: v(0.0, 0.0, 1.0), value: 0.25 }]
    );
    // Rigid: point[0] = c − (−n)·r = (0,0,0.5).
    let rs = rigid_spheres(1, &[v(0.0, 0.0, 0.0)], &[0.5]);
    let out = run(&mp(), &rs, 0, &q, 0);
    assert_eq!(out[0].point[0], v(0.0, 0.0, 0.5));
    // Strict alarm: |PQ| = 1.5.
    let far = points(2, &[v(0.0, 1.5, 0.0)]);
    assert!(run(&mp(), &s, 0, &far, 0).is_empty());
}

#[test]
fn triangle_sphere() {
    // x13 = (−1,0,0), x23 = (0,−1,0), x03 = p1 − c = (−¼,−¼,−¾): A = I, b = (¼,¼):
    // α = β = ¼, Q = p1 − x13/4 − x23/4 = (¼,¼,0); QP = (0,0,¾); alarm = 1.5;
    // value = 0.75 − 1 = −0.25; id = sphere index; point[1] = c (Vec3) or c − n·r (rigid).
    let tri = unit_triangle(0);
    let s = spheres(2, &[v(0.25, 0.25, 0.75)], &[0.5]);
    let out = run(&mp(), &tri, 0, &s, 0);
    assert_eq!(
        out,
        vec![DetectionOutput { elem: (0, 0), id: 0, point: [v(0.25, 0.25, 0.0), v(0.25, 0.25, 0.75)], normal: v(0.0, 0.0, 1.0), value: -0.25 }]
    );
    let rs = rigid_spheres(2, &[v(0.25, 0.25, 0.75)], &[0.5]);
    assert_eq!(run(&mp(), &tri, 0, &rs, 0)[0].point[1], v(0.25, 0.25, 0.25));
}

#[test]
fn sphere_centred_on_the_triangle_plane() {
    // QP = 0: guarded normal (1,0,0); value = 0 − (0.5 + 0.5) = −1; a rigid sphere's point is
    // c − (1,0,0)·0.5.
    let tri = unit_triangle(0);
    let rs = rigid_spheres(2, &[v(0.25, 0.25, 0.0)], &[0.5]);
    let out = run(&mp(), &tri, 0, &rs, 0);
    assert_eq!(out[0].normal, v(1.0, 0.0, 0.0));
    assert_eq!(out[0].value, -1.0);
    assert_eq!(out[0].point, [v(0.25, 0.25, 0.0), v(-0.25, 0.25, 0.0)]);
}

#[test]
fn line_sphere_point_is_mirrored() {
    // Segment p1 = 0, p2 = (4,0,0); sphere c = (1,1,0), r = ½, alarm 2 → 2.5:
    // x32 = (−4,0,0), x31 = (−3,1,0): α = 12/16 = ¾ measured from p2, but Q = p1 − x32·¾
    // = (3,0,0), the mirror of the true closest point (1,0,0) (AS IMPLEMENTED).
    // QP = (−2,1,0): value = √5 − (0.5 + 0.5); normal (−2,1,0)/√5; id = sphere index.
    let m = MinProximityIntersection { alarm_distance: 2.0, ..mp() };
    let l = lines(1, &[v(0.0, 0.0, 0.0), v(4.0, 0.0, 0.0)], &[[0, 1]]);
    let s = spheres(2, &[v(1.0, 1.0, 0.0)], &[0.5]);
    let out = run(&m, &l, 0, &s, 0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].point, [v(3.0, 0.0, 0.0), v(1.0, 1.0, 0.0)]);
    let r5 = 5f64.sqrt();
    assert_eq!(out[0].value, r5 - 1.0);
    assert_eq!(out[0].normal, v(-2.0 / r5, 1.0 / r5, 0.0));
    assert_eq!((out[0].elem, out[0].id), ((0, 0), 0));
    // At the midpoint the mirror is harmless: c = (2, 0.75, 0) gives Q = (2,0,0).
    let s = spheres(2, &[v(2.0, 0.75, 0.0)], &[0.5]);
    assert_eq!(run(&mp(), &l, 0, &s, 0)[0].point[0], v(2.0, 0.0, 0.0));
    // Outside the parameter window (beyond p2): nothing.
    let s = spheres(2, &[v(4.5, 0.0, 0.0)], &[0.5]);
    assert!(run(&mp(), &l, 0, &s, 0).is_empty());
}

#[test]
fn tetrahedron_point_is_inherited() {
    let mut tet = ModelGeometry::new(Tetrahedron, "tetra", 1);
    tet.x = vec![v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0), v(0.0, 0.0, 1.0)];
    tet.tetrahedra = vec![[0, 1, 2, 3]];
    let mut p = points(2, &[v(0.1, 0.1, 0.2)]);
    p.point_normals = vec![v(0.0, 0.0, 1.0)];
    let out = run(&mp(), &tet, 0, &p, 0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].value, -0.2);
}

#[test]
fn sums_keep_sofa_order() {
    // |PQ|² is (x² + y²) + z²: for (0.1, 0.1, 0.3) that is 0.11, whereas (z² + y²) + x² is
    // 0.11000000000000001, and their square roots differ in the last bit.
    let p = points(1, &[v(0.0, 0.0, 0.0)]);
    let q = points(2, &[v(0.1, 0.1, 0.3)]);
    let out = run(&mp(), &p, 0, &q, 0);
    let d = (0.1f64 * 0.1 + 0.1 * 0.1 + 0.3 * 0.3).sqrt();
    assert_ne!(d, (0.3f64 * 0.3 + 0.1 * 0.1 + 0.1 * 0.1).sqrt());
    assert_eq!(out[0].value, d - 0.5);
    assert_eq!(out[0].normal, v(0.1 / d, 0.1 / d, 0.3 / d));
    // Triangle–Point's contact distance is (0.5 + cd(point)) + cd(triangle): with 0.1 and 0.2
    // that is 0.8, not (0.5 + 0.2) + 0.1 = 0.7999999999999999 (NewProximity's order).
    let mut tri = unit_triangle(0);
    tri.contact_distance = 0.2;
    let mut p = points(2, &[v(0.25, 0.25, 1.0)]);
    p.contact_distance = 0.1;
    let out = run(&mp(), &tri, 0, &p, 0);
    assert_eq!(out[0].value, 1.0 - ((0.5 + 0.1) + 0.2));
    assert_ne!(out[0].value, 1.0 - ((0.5 + 0.2) + 0.1));
}
