use super::*;
use crate::intersection::{NewProximityIntersection, PairSupport, StoredNormalWrite};
use PrimitiveKind::*;

fn np() -> NewProximityIntersection {
    NewProximityIntersection::default()
}

fn np_ll() -> NewProximityIntersection {
    NewProximityIntersection { use_line_line: true, ..np() }
}

#[test]
fn defaults_and_registration() {
    let m = np();
    assert_eq!((m.alarm_distance, m.contact_distance), (1.0, 0.5));
    assert!(!m.use_line_line);
    assert_eq!(m.name(), "NewProximityIntersection");
    let sup = |swap| PairSupport::Supported { swap };
    assert_eq!(m.support(Triangle, Triangle), sup(false));
    assert_eq!(m.support(Line, Triangle), sup(true));
    assert_eq!(m.support(Point, Triangle), sup(true));
    assert_eq!(m.support(Line, Line), sup(false));
    assert_eq!(m.support(Point, RigidSphere), sup(true));
    assert_eq!(m.support(Sphere, RigidSphere), sup(false));
    assert_eq!(m.support(RigidSphere, Triangle), sup(true));
    assert_eq!(m.support(Sphere, Line), sup(true));
    assert_eq!(m.support(Point, Tetrahedron), sup(true));
    assert_eq!(m.support(Tetrahedron, Line), PairSupport::Unknown);
}

#[test]
fn sphere_sphere_points_are_centres_and_alarm_is_strict() {
    // Rigid spheres r = 1 at 0 and (2.5,0,0): alarm = 1 + 1 + 1 = 3; value = 2.5 − (0.5+1+1)
    // = 0; both points are the centres (unlike MinProximity); id = bigger-model id.
    let g1 = rigid_spheres(1, &[v(0.0, 0.0, 0.0), v(9.0, 0.0, 0.0)], &[1.0, 1.0]);
    let g2 = rigid_spheres(2, &[v(2.5, 0.0, 0.0)], &[1.0]);
    let out = run(&np(), &g1, 0, &g2, 0);
    assert_eq!(out, vec![DetectionOutput { elem: (0, 0), id: 0, point: [v(0.0, 0.0, 0.0), v(2.5, 0.0, 0.0)], normal: v(1.0, 0.0, 0.0), value: 0.0 }]);
    // d = 3 = alarm: `norm2 >= dist2` rejects (MinProximity keeps touching spheres).
    let g3 = spheres(2, &[v(3.0, 0.0, 0.0)], &[1.0]);
    let g0 = spheres(1, &[v(0.0, 0.0, 0.0)], &[1.0]);
    assert!(run(&np(), &g0, 0, &g3, 0).is_empty());
}

#[test]
fn point_point_has_no_zero_distance_guard() {
    let p = points(1, &[v(1.0, 2.0, 3.0)]);
    let q = points(2, &[v(1.0, 2.0, 3.0)]);
    let out = run(&np(), &p, 0, &q, 0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].value, -0.5);
    assert!(out[0].normal.iter().all(|c| c.is_nan()));
}

#[test]
fn line_point_clamps_and_ids_the_point() {
    // Segment 0–(2,0,0), point (2.5,0.5,0): α = 5/4 clamped to 1, p = (2,0,0),
    // pq = (0.5,0.5,0): value √0.5 − 0.5; id = point index.
    let l = lines(1, &[v(0.0, 0.0, 0.0), v(2.0, 0.0, 0.0)], &[[0, 1]]);
    let p = points(2, &[v(0.0, 0.0, 0.0), v(2.5, 0.5, 0.0)]);
    let out = run(&np(), &l, 0, &p, 1);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].elem, out[0].id), ((0, 1), 1));
    assert_eq!(out[0].point, [v(2.0, 0.0, 0.0), v(2.5, 0.5, 0.0)]);
    assert_eq!(out[0].value, 0.5f64.sqrt() - 0.5);
    assert_eq!(out[0].normal, v(0.5 / 0.5f64.sqrt(), 0.5 / 0.5f64.sqrt(), 0.0));
}

#[test]
fn line_line_crossing_parallel_and_window() {
    // As MinProximity: α = β = ½, points (1,0,0) and (1,0,0.5), value 0.
    let l1 = lines(1, &[v(0.0, 0.0, 0.0), v(2.0, 0.0, 0.0)], &[[0, 1]]);
    let l2 = lines(2, &[v(1.0, -1.0, 0.5), v(1.0, 1.0, 0.5)], &[[0, 1]]);
    let out = run(&np(), &l1, 0, &l2, 0);
    assert_eq!(out[0].point, [v(1.0, 0.0, 0.0), v(1.0, 0.0, 0.5)]);
    assert_eq!(out[0].value, 0.0);
    // Parallel: det = 0 ≤ 1e-12, midpoints.
    let l3 = lines(2, &[v(0.0, 0.75, 0.0), v(2.0, 0.75, 0.0)], &[[0, 1]]);
    assert_eq!(run(&np(), &l1, 0, &l3, 0)[0].value, 0.25);
    // β = 0 (line touching the end of the other): rejected by the [1e-6, 0.999999] window.
    let l4 = lines(2, &[v(1.0, 0.0, 0.5), v(1.0, 2.0, 0.5)], &[[0, 1]]);
    assert!(run(&np(), &l1, 0, &l4, 0).is_empty());
}

/// Outputs of NewProximity Triangle–Point on the unit triangle with `flags`, for point `q`.
fn tp(flags: u32, q: Vec3) -> Vec<DetectionOutput> {
    run(&np(), &unit_triangle(flags), 0, &points(2, &[q]), 0)
}

#[test]
fn triangle_point_regions_and_ownership() {
    // Each case: the point, the owning flag its region needs, the closest point p.
    // Interior (¼,¼): α = β = ¼, no flag needed.
    // A: α = −¼, β = −¼ → pAB = pAC = −¼ < ε: P1, p = A.
    // AB: α = ½, β = −¼ → pAB = ½ ∈ [ε, 1−ε), β < ε: E12, p = (½,0,0).
    // AC: α = −¼, β = ½ → pAB = −¼ (not AB), pAC = ½, α < ε: E31, p = (0,½,0).
    // BC: α = β = ¾ (sum 1.5) → pAB = pAC = ¾ but β, α ≥ ε;
    //     pBC = (¾ − ¾ + 1 − 0)/(1 + 1 − 0) = ½: E23, (α,β) = (½,½), p = (½,½,0).
    // B: α = 1.5, β = −¼ → pAB = 1.5 ≥ 1−ε, pAC = −¼ < ε; pBC = (−¼ − 1.5 + 1)/2 = −0.375: P2.
    // C: α = −¼, β = 1.5 → pBC = (1.5 + ¼ + 1)/2 = 1.375 > 1−ε: P3.
    let cases = [
        (v(0.25, 0.25, 0.5), 0, v(0.25, 0.25, 0.0)),
        (v(-0.25, -0.25, 0.5), tf::P1, v(0.0, 0.0, 0.0)),
        (v(0.5, -0.25, 0.5), tf::E12, v(0.5, 0.0, 0.0)),
        (v(-0.25, 0.5, 0.5), tf::E31, v(0.0, 0.5, 0.0)),
        (v(0.75, 0.75, 0.5), tf::E23, v(0.5, 0.5, 0.0)),
        (v(1.5, -0.25, 0.5), tf::P2, v(1.0, 0.0, 0.0)),
        (v(-0.25, 1.5, 0.5), tf::P3, v(0.0, 1.0, 0.0)),
    ];
    for (q, need, p) in cases {
        let out = tp(need, q);
        assert_eq!(out.len(), 1, "{q:?} with its flag");
        assert_eq!(out[0].point, [p, q], "{q:?}");
        let d = q - p;
        let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        assert_eq!(out[0].value, dist - 0.5, "{q:?}");
        assert_eq!(out[0].normal, v(d[0] / dist, d[1] / dist, d[2] / dist));
        assert_eq!((out[0].elem, out[0].id), ((0, 0), 0));
        if need != 0 {
            // Every other flag but the one needed: no output.
            assert!(tp(ALL_FLAGS & !need, q).is_empty(), "{q:?} without its flag");
        }
    }
}

#[test]
fn triangle_point_exactly_above_vertices_and_edges() {
    // Above A: α = β = 0 < ε → corner A (P1). Above the middle of AB: β = 0 → E12.
    // Above B: α = 1, β = 0: pAB = 1 ≥ 1−ε, so not the AB branch; pBC = (0 − 1 + 1)/2 = 0 < ε:
    // corner B (P2).
    assert_eq!(tp(tf::P1, v(0.0, 0.0, 0.5))[0].point[0], v(0.0, 0.0, 0.0));
    assert!(tp(ALL_FLAGS & !tf::P1, v(0.0, 0.0, 0.5)).is_empty());
    assert_eq!(tp(tf::E12, v(0.5, 0.0, 0.5))[0].point[0], v(0.5, 0.0, 0.0));
    assert!(tp(ALL_FLAGS & !tf::E12, v(0.5, 0.0, 0.5)).is_empty());
    assert_eq!(tp(tf::P2, v(1.0, 0.0, 0.5))[0].point[0], v(1.0, 0.0, 0.0));
    assert!(tp(ALL_FLAGS & !tf::P2, v(1.0, 0.0, 0.5)).is_empty());
}

#[test]
fn shared_edge_is_reported_by_its_owner_only() {
    // Square split along (1,2): triangle 0 = (0,1,2) traverses edge (1,2) in its stored
    // direction, so it owns it (first in trianglesAroundEdge); triangle 1 = (2,1,3) does not.
    // A point above the middle of the shared edge projects onto that edge for both triangles
    // (triangle 0: α + β = 1 → BC branch, E23; triangle 1: β = 0... → AB branch, E12 of edge
    // (2,1)); only triangle 0 reports it.
    let x = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0), v(1.0, 1.0, 0.0)];
    let mesh = MeshData {
        points: vec![[0.0; 3]; 4],
        edges: vec![[1, 2], [2, 0], [0, 1], [1, 3], [3, 2]],
        triangles: vec![[0, 1, 2], [2, 1, 3]],
        ..Default::default()
    };
    let tri = from_mesh(Triangle, 1, &x, &mesh);
    let q = points(2, &[v(0.5, 0.5, 0.25)]);
    let o0 = run(&np(), &tri, 0, &q, 0);
    let o1 = run(&np(), &tri, 1, &q, 0);
    assert_eq!(o0.len(), 1);
    assert_eq!(o0[0].point[0], v(0.5, 0.5, 0.0));
    assert_eq!(o0[0].value, 0.25 - 0.5);
    assert!(o1.is_empty());
    // Vertex 2 belongs to both triangles and is owned by triangle 0 (first around it).
    let above2 = points(2, &[v(0.0, 1.0, 0.25)]);
    assert_eq!(run(&np(), &tri, 0, &above2, 0).len(), 1);
    assert!(run(&np(), &tri, 1, &above2, 0).is_empty());
    // Vertex 3 only belongs to triangle 1.
    let above3 = points(2, &[v(1.0, 1.0, 0.25)]);
    assert_eq!(run(&np(), &tri, 1, &above3, 0).len(), 1);
}

#[test]
fn triangle_line_blocks_and_line_line_option() {
    // Flags E12 only; line q1 = (½,−½,¼), q2 = (½,½,¼).
    // Vertex tests: none (no P flag).
    // TrianglePoint(q1): α = ½, β = −½ → AB branch (E12 owned): p = (½,0,0),
    //   pq = (0,−½,¼), value √0.3125.
    // TrianglePoint(q2): α = β = ½, sum 1 > 1−ε; neither AB nor AC; pBC = ½ → needs E23: none.
    // LineLine(AB, q1q2) with useLineLine: α = β = ½, p = (½,0,0), q = (½,0,¼), value ¼.
    // All: id = line index (1), elem (0,1), value − 0.5.
    let tri = unit_triangle(tf::E12);
    let l = lines(2, &[v(9.0, 9.0, 9.0), v(0.5, -0.5, 0.25), v(0.5, 0.5, 0.25)], &[[0, 0], [1, 2]]);
    let out = run(&np(), &tri, 0, &l, 1);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].point, [v(0.5, 0.0, 0.0), v(0.5, -0.5, 0.25)]);
    assert_eq!(out[0].value, 0.3125f64.sqrt() - 0.5);
    assert_eq!((out[0].elem, out[0].id), ((0, 1), 1));
    let out = run(&np_ll(), &tri, 0, &l, 1);
    assert_eq!(out.len(), 2);
    assert_eq!(out[1].point, [v(0.5, 0.0, 0.0), v(0.5, 0.0, 0.25)]);
    assert_eq!(out[1].normal, v(0.0, 0.0, 1.0));
    assert_eq!(out[1].value, 0.25 - 0.5);
    assert_eq!((out[1].elem, out[1].id), ((0, 1), 1));
}

#[test]
fn triangle_line_vertex_blocks_are_swapped() {
    // Flags P1 only, vertical line at x = y = ¼ from z = ½ to z = 2: vertex A against the
    // line: closest point q1 (α clamped to 0), output point[0] = A (triangle side),
    // point[1] = q1, normal from A to q1; then TrianglePoint(q1) inside: p = (¼,¼,0), value ½.
    let tri = unit_triangle(tf::P1);
    let l = lines(2, &[v(0.25, 0.25, 0.5), v(0.25, 0.25, 2.0)], &[[0, 1]]);
    let out = run(&np(), &tri, 0, &l, 0);
    assert_eq!(out.len(), 2);
    let d = 0.375f64.sqrt();
    assert_eq!(out[0].point, [v(0.0, 0.0, 0.0), v(0.25, 0.25, 0.5)]);
    // −pq/|pq| with pq = A − q1 = (−¼,−¼,−½).
    assert_eq!(out[0].normal, v(0.25 / d, 0.25 / d, 0.5 / d));
    assert_eq!(out[0].value, d - 0.5);
    assert_eq!(out[1].point, [v(0.25, 0.25, 0.0), v(0.25, 0.25, 0.5)]);
    assert_eq!(out[1].value, 0.0);
}

#[test]
fn triangle_triangle_tests_first_vertex_unconditionally() {
    // e1 = the unit triangle (model of 1, flags 0), e2 = vertical triangle q1 = (¼,¼,½),
    // q2 = (¼,¼,3), q3 = (1¼,¼,3), element 2 of a model of 3, flags P1.
    // ids: id1 = 3·0 = 0, id2 = 3·1 + 12·2 = 27.
    // 1. p1 = A against e2 (no flag needed on e1, AS IMPLEMENTED): AB = (0,0,2.5),
    //    AC = (1,0,2.5), AQ = (−¼,−¼,−½): a00 = 6.25, a11 = 7.25, a01 = 6.25, b0 = −1.25,
    //    b1 = −1.5, det = 6.25; α = 0.05, β = −0.25 < ε → pAB = −0.2, pAC < 0: corner q1 (P1
    //    of e2, owned). Swapped: point[0] = A, point[1] = q1, normal (q1 − A)/|q1 − A|,
    //    value √0.375 − 0.5.
    // 2. p2, p3: e1 has no flags, skipped.
    // 3. q1 (P1 of e2) against e1: inside, p = (¼,¼,0), no swap, normal +z, value 0.
    let e1m = unit_triangle(0);
    let x2 = [v(0.25, 0.25, 0.5), v(0.25, 0.25, 3.0), v(1.25, 0.25, 3.0)];
    let e2m = triangles(2, &x2, &[[0, 1, 2], [0, 1, 2], [0, 1, 2]], tf::P1);
    let out = run(&np(), &e1m, 0, &e2m, 2);
    assert_eq!(out.len(), 2);
    let d = 0.375f64.sqrt();
    assert_eq!(
        out[0],
        DetectionOutput {
            elem: (0, 2),
            id: 0,
            point: [v(0.0, 0.0, 0.0), v(0.25, 0.25, 0.5)],
            normal: v(0.25 / d, 0.25 / d, 0.5 / d),
            value: d - 0.5,
        }
    );
    assert_eq!(
        out[1],
        DetectionOutput { elem: (0, 2), id: 27, point: [v(0.25, 0.25, 0.0), v(0.25, 0.25, 0.5)], normal: v(0.0, 0.0, 1.0), value: 0.0 }
    );
}

#[test]
fn triangle_triangle_edge_pairs_with_line_line() {
    // e1 = unit triangle with E12 only; e2 = triangle in the plane x = ½ with
    // q1 = (½,−½,¼), q2 = (½,½,¼), q3 = (½,0,3), E12 only; both models of one element.
    // 1. p1 against e2 (unconditional): its projection (½,0,0) is below edge q1q2:
    //    AB = (0,1,0), AC = (0,½,2.75), AQ = (−½,½,−¼): α = 4.125/7.5625, β = −0.6875/7.5625
    //    → pAB = ½, β < ε: E12 owned, p = (½,0,¼); swapped: point[0] = p1,
    //    normal (½,0,¼)/√0.3125, value √0.3125 − 0.5, id 0.
    // 2. No vertex flags anywhere else.
    // 3. useLineLine: E12 × E12: (0,0,0)–(1,0,0) against q1q2: α = β = ½, points (½,0,0) and
    //    (½,0,¼), value ¼ − 0.5, id = id2 + 3 + 0 = 3·1 + 3 = 6.
    let e1m = unit_triangle(tf::E12);
    let x2 = [v(0.5, -0.5, 0.25), v(0.5, 0.5, 0.25), v(0.5, 0.0, 3.0)];
    let e2m = triangles(2, &x2, &[[0, 1, 2]], tf::E12);
    let out = run(&np(), &e1m, 0, &e2m, 0);
    assert_eq!(out.len(), 1);
    let d = 0.3125f64.sqrt();
    assert_eq!(out[0].id, 0);
    assert_eq!(out[0].point, [v(0.0, 0.0, 0.0), v(0.5, 0.0, 0.25)]);
    assert_eq!(out[0].normal, v(0.5 / d, 0.0, 0.25 / d));
    assert_eq!(out[0].value, d - 0.5);
    let out = run(&np_ll(), &e1m, 0, &e2m, 0);
    assert_eq!(out.len(), 2);
    assert_eq!(out[1].id, 6);
    assert_eq!(out[1].point, [v(0.5, 0.0, 0.0), v(0.5, 0.0, 0.25)]);
    assert_eq!(out[1].value, -0.25);
    // Edge-pair ids: e1 owning only E31 = (p3,p1) against e2's E12 gives id2 + 3 + 3·2 + 0
    // = 12 (e2 in the plane y = ½ this time).
    let e1b = unit_triangle(tf::E31);
    let x3 = [v(-0.5, 0.5, 0.25), v(0.5, 0.5, 0.25), v(0.0, 0.5, 3.0)];
    let e2b = triangles(2, &x3, &[[0, 1, 2]], tf::E12);
    let out = run(&np_ll(), &e1b, 0, &e2b, 0);
    let ll: Vec<_> = out.iter().filter(|o| o.id == 12).collect();
    assert_eq!(ll.len(), 1);
    // Edge p3p1 = (0,1,0)→(0,0,0) meets q1q2 at α = β = ½: points (0,½,0) and (0,½,¼).
    assert_eq!(ll[0].point, [v(0.0, 0.5, 0.0), v(0.0, 0.5, 0.25)]);
}

#[test]
fn triangle_triangle_neighbours_of_one_model_are_skipped() {
    let x = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0), v(1.0, 1.0, 0.1), v(0.25, 0.25, 0.3), v(0.75, 0.25, 0.3)];
    let m = triangles(1, &x, &[[0, 1, 2], [2, 1, 3], [4, 5, 3]], ALL_FLAGS);
    // 0 and 1 share vertices 1, 2; 1 and 2 share vertex 3.
    assert!(run(&np(), &m, 0, &m, 1).is_empty());
    assert!(run(&np(), &m, 1, &m, 2).is_empty());
    // 0 and 2 share nothing: tested (vertex 4 is 0.3 above triangle 0).
    assert!(!run(&np(), &m, 0, &m, 2).is_empty());
    // A copy is another model: sharing indices does not matter.
    let copy = m.clone();
    assert!(!run(&np(), &m, 0, &copy, 1).is_empty());
}

#[test]
fn triangle_triangle_normal_side_effect() {
    let a = unit_triangle(0);
    let mut b = unit_triangle(0);
    b.triangle_normals[0] = v(0.0, 1.0, 0.0);
    let m = np();
    // Neither bothSide: e2's normal becomes −n(e1).
    assert_eq!(m.triangle_normal_side_effect(&a, 0, &b, 0), Some(StoredNormalWrite { model: 1, element: 0, normal: v(0.0, 0.0, -1.0) }));
    // First bothSide, second not: e1's normal becomes −n(e2).
    let mut a2 = a.clone();
    a2.both_side = true;
    assert_eq!(m.triangle_normal_side_effect(&a2, 0, &b, 0), Some(StoredNormalWrite { model: 0, element: 0, normal: v(0.0, -1.0, 0.0) }));
    // Both bothSide: nothing; neighbours of one model: nothing.
    let mut b2 = b.clone();
    b2.both_side = true;
    assert_eq!(m.triangle_normal_side_effect(&a2, 0, &b2, 0), None);
    assert_eq!(m.triangle_normal_side_effect(&a, 0, &a, 0), None);
}

#[test]
fn sphere_point_and_line_sphere() {
    // Rigid sphere r = ½ at 0, point (0,0,1.25): alarm = 1 + ½; PointPoint: point[0] = centre
    // (even for a rigid sphere), value 1.25 − (0.5 + 0.5) = 0.25; id = bigger-model id (the
    // point model has 2 elements: e2 = 1).
    let rs = rigid_spheres(1, &[v(0.0, 0.0, 0.0)], &[0.5]);
    let q = points(2, &[v(5.0, 5.0, 5.0), v(0.0, 0.0, 1.25)]);
    let out = run(&np(), &rs, 0, &q, 1);
    assert_eq!(out[0].point, [v(0.0, 0.0, 0.0), v(0.0, 0.0, 1.25)]);
    assert_eq!(out[0].value, 0.25);
    assert_eq!(out[0].id, 1);
    // Line 0–(2,0,0) against a sphere r = ½ at (1, 1.25, 0): LinePoint α = ½, p = (1,0,0),
    // point[1] = centre, value 1.25 − 1 = 0.25, id = sphere index.
    let l = lines(1, &[v(0.0, 0.0, 0.0), v(2.0, 0.0, 0.0)], &[[0, 1]]);
    let s = rigid_spheres(2, &[v(7.0, 7.0, 7.0), v(1.0, 1.25, 0.0)], &[0.5, 0.5]);
    let out = run(&np(), &l, 0, &s, 1);
    assert_eq!(out[0].point, [v(1.0, 0.0, 0.0), v(1.0, 1.25, 0.0)]);
    assert_eq!((out[0].elem, out[0].id, out[0].value), ((0, 1), 1, 0.25));
}

#[test]
fn triangle_sphere_interior_and_plane_centre() {
    // Sphere r = ½ at (¼,¼,¾): p = (¼,¼,0), value ¾ − 1 = −¼; Vec3 point[1] = centre; rigid
    // point[1] = centre − n·r = (¼,¼,¼).
    let tri = unit_triangle(0);
    let s = spheres(2, &[v(0.25, 0.25, 0.75)], &[0.5]);
    let out = run(&np(), &tri, 0, &s, 0);
    assert_eq!(out[0].point, [v(0.25, 0.25, 0.0), v(0.25, 0.25, 0.75)]);
    assert_eq!(out[0].value, -0.25);
    let rs = rigid_spheres(2, &[v(0.25, 0.25, 0.75)], &[0.5]);
    assert_eq!(run(&np(), &tri, 0, &rs, 0)[0].point[1], v(0.25, 0.25, 0.25));
    // Centre on the triangle: guarded normal (1,0,0), value −1, point[1] = c − (½,0,0).
    let rs = rigid_spheres(2, &[v(0.25, 0.25, 0.0)], &[0.5]);
    let out = run(&np(), &tri, 0, &rs, 0);
    assert_eq!(out[0].normal, v(1.0, 0.0, 0.0));
    assert_eq!(out[0].value, -1.0);
    assert_eq!(out[0].point[1], v(-0.25, 0.25, 0.0));
}

#[test]
fn triangle_sphere_flags_as_implemented() {
    let s = |c: Vec3| spheres(2, &[c], &[0.25]);
    let ts = |flags: u32, c: Vec3| run(&np(), &unit_triangle(flags), 0, &s(c), 0);
    // Near edge AC (α < 1e-6, pAC = ½): SOFA asks for E12, not E31.
    let ac = v(-0.25, 0.5, 0.25);
    assert!(ts(ALL_FLAGS & !tf::E12, ac).is_empty());
    assert_eq!(ts(tf::E12, ac)[0].point[0], v(0.0, 0.5, 0.0));
    // Near edge BC (pBC = ½): E31 instead of E23.
    let bc = v(0.75, 0.75, 0.25);
    assert!(ts(ALL_FLAGS & !tf::E31, bc).is_empty());
    assert_eq!(ts(tf::E31, bc)[0].point[0], v(0.5, 0.5, 0.0));
    // The AB branch has no lower bound on pAB: c = (−¼, 5e-7, ½) misses the corner test
    // (pAC = 5e-7 ≥ 1e-7) and takes the AB branch (β = 5e-7 < 1e-6) with α = pAB = −¼:
    // p = (−¼,0,0), outside the triangle.
    let out = ts(tf::E12, v(-0.25, 5e-7, 0.5));
    assert_eq!(out[0].point[0], v(-0.25, 0.0, 0.0));
    close(out[0].value, 0.5 - 0.75, 1e-12);
    // NewProximity's Triangle–Point on the same position takes the AC branch (E31).
    let o = tp(tf::E31, v(-0.25, 5e-7, 0.5));
    assert_eq!(o[0].point[0], v(0.0, 5e-7, 0.0));
}

#[test]
fn contact_distance_adds_the_first_model_skin_first() {
    // Triangle skin 0.2, point skin 0.1: contact = (0.5 + 0.2) + 0.1 = 0.7999999999999999
    // (MinProximity adds the point's skin first and gets 0.8); |pq| = 1.
    let mut tri = unit_triangle(0);
    tri.contact_distance = 0.2;
    let mut p = points(2, &[v(0.25, 0.25, 1.0)]);
    p.contact_distance = 0.1;
    let out = run(&np(), &tri, 0, &p, 0);
    assert_eq!(out[0].value, 1.0 - ((0.5 + 0.2) + 0.1));
    assert_ne!(out[0].value, 1.0 - ((0.5 + 0.1) + 0.2));
}
