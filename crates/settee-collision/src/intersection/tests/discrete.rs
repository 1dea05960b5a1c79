use super::*;
use crate::intersection::{DiscreteIntersection, PairSupport};
use crate::Aabb;
use PrimitiveKind::*;

#[test]
fn registration_table_and_swap_rule() {
    let m = DiscreteIntersection::new();
    let sup = |swap| PairSupport::Supported { swap };
    assert_eq!(m.support(Cube, Cube), sup(false));
    assert_eq!(m.support(Sphere, Sphere), sup(false));
    assert_eq!(m.support(RigidSphere, RigidSphere), sup(false));
    assert_eq!(m.support(Sphere, RigidSphere), sup(false));
    assert_eq!(m.support(RigidSphere, Sphere), sup(true));
    assert_eq!(m.support(Triangle, Line), sup(false));
    assert_eq!(m.support(Line, Triangle), sup(true));
    assert_eq!(m.support(Point, Tetrahedron), sup(true));
    assert_eq!(m.support(Triangle, Point), PairSupport::Unknown);
    assert_eq!(m.support(Triangle, Triangle), PairSupport::Unknown);
    assert_eq!(m.support(Line, Line), PairSupport::Unknown);
    assert_eq!(m.name(), "DiscreteIntersection");
    assert_eq!((m.alarm_distance(), m.contact_distance()), (0.0, 0.0));
}

#[test]
fn box_test_ignores_skins_and_is_inclusive() {
    let m = DiscreteIntersection::new();
    let mut g = points(1, &[]);
    g.contact_distance = 5.0;
    let a = Aabb { min: v(0.0, 0.0, 0.0), max: v(1.0, 1.0, 1.0) };
    // Touching faces (min2.x = max1.x = 1) overlap; a gap of 0.5 does not, skins ignored.
    let touching = Aabb { min: v(1.0, 0.0, 0.0), max: v(2.0, 1.0, 1.0) };
    let apart = Aabb { min: v(1.5, 0.0, 0.0), max: v(2.0, 1.0, 1.0) };
    assert!(m.boxes_overlap(&a, &g, &touching, &g, false));
    assert!(!m.boxes_overlap(&a, &g, &apart, &g, false));
    assert!(!m.boxes_overlap(&apart, &g, &a, &g, false));
    // A box against itself: the default normal cone (2π ≥ π/2) overlaps.
    assert!(m.boxes_overlap(&a, &g, &a, &g, true));
}

#[test]
fn vec3_spheres_overlapping() {
    // c1 = 0, r1 = 1; c2 = (1.5, 0, 0), r2 = 1: d = 1.5 ≤ R = 2; n = (1,0,0);
    // value = 1.5 − 2 = −0.5; Vec3 spheres' contact points are their centres. Model 2 has more
    // spheres (3 > 1): id = e2 = 2.
    let g1 = spheres(1, &[v(0.0, 0.0, 0.0)], &[1.0]);
    let g2 = spheres(2, &[v(9.0, 9.0, 9.0), v(8.0, 8.0, 8.0), v(1.5, 0.0, 0.0)], &[1.0, 1.0, 1.0]);
    let out = run(&DiscreteIntersection, &g1, 0, &g2, 2);
    assert_eq!(
        out,
        vec![DetectionOutput { elem: (0, 2), id: 2, point: [v(0.0, 0.0, 0.0), v(1.5, 0.0, 0.0)], normal: v(1.0, 0.0, 0.0), value: -0.5 }]
    );
    // Model 1 bigger: id = e1.
    let out = run(&DiscreteIntersection, &g2, 2, &g1, 0);
    assert_eq!(out[0].id, 2);
    assert_eq!(out[0].normal, v(-1.0, 0.0, 0.0));
}

#[test]
fn spheres_touching_count_and_model_skins_are_ignored() {
    // d = R = 2 exactly: `|d|² > R²` is false, so a contact with value 0.
    let mut g1 = spheres(1, &[v(0.0, 0.0, 0.0)], &[1.0]);
    let mut g2 = spheres(2, &[v(0.0, 0.0, 2.0)], &[1.0]);
    let out = run(&DiscreteIntersection, &g1, 0, &g2, 0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].value, 0.0);
    assert_eq!(out[0].normal, v(0.0, 0.0, 1.0));
    // The next double above 2: |d|² = 4.000000000000001 > 4, no contact even with huge skins.
    g1.contact_distance = 10.0;
    g2.contact_distance = 10.0;
    g2.x[0] = v(0.0, 0.0, f64::from_bits(2.0f64.to_bits() + 1));
    assert!(run(&DiscreteIntersection, &g1, 0, &g2, 0).is_empty());
}

#[test]
fn rigid_spheres_contact_points_on_surfaces() {
    // c1 = 0, r1 = 1; c2 = (0, 1.5, 0), r2 = 1: n = (0,1,0); point[0] = c1 + n·r1 = (0,1,0),
    // point[1] = c2 − n·r2 = (0,0.5,0); value = 1.5 − 2 = −0.5.
    let g1 = rigid_spheres(1, &[v(0.0, 0.0, 0.0)], &[1.0]);
    let g2 = rigid_spheres(2, &[v(0.0, 1.5, 0.0)], &[1.0]);
    let out = run(&DiscreteIntersection, &g1, 0, &g2, 0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].point, [v(0.0, 1.0, 0.0), v(0.0, 0.5, 0.0)]);
    assert_eq!(out[0].value, -0.5);
    // Sphere–RigidSphere (registered order): the Vec3 sphere keeps its centre.
    let g0 = spheres(3, &[v(0.0, 0.0, 0.0)], &[1.0]);
    let out = run(&DiscreteIntersection, &g0, 0, &g2, 0);
    assert_eq!(out[0].point, [v(0.0, 0.0, 0.0), v(0.0, 0.5, 0.0)]);
    // RigidSphere–Sphere is not the registered order: nothing.
    assert!(run(&DiscreteIntersection, &g2, 0, &g0, 0).is_empty());
}

#[test]
fn triangle_line_crossing() {
    // Unit triangle, line from (¼,¼,−1) to (¼,¼,1): columns AB = (1,0,0), AC = (0,1,0),
    // −PQ = (0,0,−2), right = P − A = (¼,¼,−1); det = −2; the solution is u = v = ¼,
    // t = ½; X = P + PQ·½ = (¼,¼,0); normal = stored (0,0,1); value 0; id = line index.
    let tri = unit_triangle(ALL_FLAGS);
    let l = lines(2, &[v(9.0, 9.0, 9.0), v(0.25, 0.25, -1.0), v(0.25, 0.25, 1.0)], &[[0, 0], [1, 2]]);
    let out = run(&DiscreteIntersection, &tri, 0, &l, 1);
    assert_eq!(
        out,
        vec![DetectionOutput { elem: (0, 1), id: 1, point: [v(0.25, 0.25, 0.0), v(0.25, 0.25, 0.0)], normal: v(0.0, 0.0, 1.0), value: 0.0 }]
    );
}

#[test]
fn triangle_line_misses() {
    let tri = unit_triangle(ALL_FLAGS);
    // Through (¾,¾,0): u + v = 1.5 > 1.
    let outside = lines(2, &[v(0.75, 0.75, -1.0), v(0.75, 0.75, 1.0)], &[[0, 1]]);
    assert!(run(&DiscreteIntersection, &tri, 0, &outside, 0).is_empty());
    // Segment above the plane: −2t = 1 gives t = −½ < 0.
    let above = lines(2, &[v(0.25, 0.25, 1.0), v(0.25, 0.25, 3.0)], &[[0, 1]]);
    assert!(run(&DiscreteIntersection, &tri, 0, &above, 0).is_empty());
    // Segment lying in the plane: third column (−0.1,0,0) is parallel to AB, det = 0.
    let inplane = lines(2, &[v(0.1, 0.1, 0.0), v(0.2, 0.1, 0.0)], &[[0, 1]]);
    assert!(run(&DiscreteIntersection, &tri, 0, &inplane, 0).is_empty());
}

/// Tetrahedron (0,0,0), (1,0,0), (0,1,0), (0,0,1): its barycentric transform is the identity.
fn unit_tetra(node: u64) -> ModelGeometry {
    let mut g = ModelGeometry::new(Tetrahedron, "tetra", node);
    g.x = vec![v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0), v(0.0, 0.0, 1.0)];
    g.tetrahedra = vec![[0, 1, 2, 3]];
    g
}

fn point_with_normal(node: u64, p: Vec3, n: Vec3) -> ModelGeometry {
    let mut g = points(node, &[p]);
    g.point_normals = vec![n];
    g
}

#[test]
fn tetrahedron_point_exit_through_a_coordinate_face() {
    // P = (0.1,0.1,0.2), n = (0,0,1): b0 = P; bdir = −n = (0,0,−1); only c = 2 has
    // bdir < −1e-10: l = −0.2/−1 = 0.2; the 4th face has bd = −1 (not > 1e-10). X = P − n·0.2
    // = (0.1,0.1,0); normal = −n; value = −0.2; id = point index.
    let tet = unit_tetra(1);
    let p = point_with_normal(2, v(0.1, 0.1, 0.2), v(0.0, 0.0, 1.0));
    let out = run(&DiscreteIntersection, &tet, 0, &p, 0);
    assert_eq!(
        out,
        vec![DetectionOutput { elem: (0, 0), id: 0, point: [v(0.1, 0.1, 0.0), v(0.1, 0.1, 0.2)], normal: v(0.0, 0.0, -1.0), value: -0.2 }]
    );
}

#[test]
fn tetrahedron_point_exit_through_the_slanted_face() {
    // n = (0,0,−1): bdir = (0,0,1), no coordinate face ahead; bd = 1 > 1e-10:
    // l = (1 − (0.1+0.1+0.2))/1 = 0.6; X = P + (0,0,0.6) = (0.1,0.1,0.8) on x+y+z = 1.
    let tet = unit_tetra(1);
    let p = point_with_normal(2, v(0.1, 0.1, 0.2), v(0.0, 0.0, -1.0));
    let out = run(&DiscreteIntersection, &tet, 0, &p, 0);
    assert_eq!(out.len(), 1);
    close(out[0].value, -0.6, 1e-15);
    close_v(&out[0].point[0], &v(0.1, 0.1, 0.8), 1e-15);
    assert_eq!(out[0].normal, v(0.0, 0.0, 1.0));
}

#[test]
fn tetrahedron_point_rejections() {
    let tet = unit_tetra(1);
    // Outside (b0 sum 1.2 > 1): SOFA returns 1 without an output; nothing appended here.
    let p = point_with_normal(2, v(0.4, 0.4, 0.4), v(0.0, 0.0, 1.0));
    assert!(run(&DiscreteIntersection, &tet, 0, &p, 0).is_empty());
    // No normal (computeNormals off, or a zero normal).
    let mut p = points(2, &[v(0.1, 0.1, 0.2)]);
    assert!(run(&DiscreteIntersection, &tet, 0, &p, 0).is_empty());
    p.point_normals = vec![Vec3::zeros()];
    assert!(run(&DiscreteIntersection, &tet, 0, &p, 0).is_empty());
    // Same state (same node) and the point is a vertex of the tetrahedron.
    let mut own = point_with_normal(1, v(0.0, 0.0, 0.0), v(0.0, 0.0, 1.0));
    own.x = tet.x.clone();
    own.point_normals = vec![v(0.0, 0.0, 1.0); 4];
    assert!(run(&DiscreteIntersection, &tet, 0, &own, 3).is_empty());
}

#[test]
fn degenerate_tetrahedron_has_a_zero_transform() {
    // A flat tetrahedron cannot be inverted: the stored transform stays zero, so b0 = 0 is
    // "inside", bdir = 0, l = 1e10 ≥ 1e9 becomes 0: X = P, value = −0.
    let mut tet = unit_tetra(1);
    tet.x[3] = v(1.0, 1.0, 0.0);
    let p = point_with_normal(2, v(3.0, 4.0, 5.0), v(0.0, 1.0, 0.0));
    let out = run(&DiscreteIntersection, &tet, 0, &p, 0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].point, [v(3.0, 4.0, 5.0), v(3.0, 4.0, 5.0)]);
    assert_eq!(out[0].value, 0.0);
    assert!(out[0].value.is_sign_negative());
}

#[test]
fn out_of_range_elements_give_nothing() {
    let g1 = spheres(1, &[v(0.0, 0.0, 0.0)], &[1.0]);
    let g2 = spheres(2, &[v(0.5, 0.0, 0.0)], &[1.0]);
    assert!(run(&DiscreteIntersection, &g1, 1, &g2, 0).is_empty());
    assert!(run(&DiscreteIntersection, &g1, 0, &g2, 7).is_empty());
}
