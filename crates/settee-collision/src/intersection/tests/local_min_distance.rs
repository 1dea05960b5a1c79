use super::*;
use crate::intersection::{LocalMinDistance, MinProximityIntersection, PairSupport};
use PrimitiveKind::*;

fn lmd() -> LocalMinDistance {
    LocalMinDistance::default()
}

#[test]
fn defaults_and_registration() {
    let m = lmd();
    assert_eq!((m.alarm_distance, m.contact_distance), (1.0, 0.5));
    assert!(m.filter_intersection && !m.use_lmd_filters);
    assert_eq!((m.angle_cone, m.cone_factor), (0.0, 0.5));
    assert_eq!(m.name(), "LocalMinDistance");
    let sup = |swap| PairSupport::Supported { swap };
    assert_eq!(m.support(Triangle, Line), PairSupport::Ignored);
    assert_eq!(m.support(Line, Triangle), PairSupport::Ignored);
    assert_eq!(m.support(Triangle, Triangle), PairSupport::Ignored);
    assert_eq!(m.support(Point, Triangle), sup(true));
    assert_eq!(m.support(Point, Line), sup(true));
    assert_eq!(m.support(Point, Sphere), sup(true));
    assert_eq!(m.support(Sphere, Sphere), sup(false));
    assert_eq!(m.support(RigidSphere, RigidSphere), sup(false));
    assert_eq!(m.support(RigidSphere, Sphere), sup(true));
    assert_eq!(m.support(RigidSphere, Point), PairSupport::Unknown);
    assert_eq!(m.support(Triangle, RigidSphere), PairSupport::Unknown);
    assert_eq!(m.support(Line, RigidSphere), PairSupport::Unknown);
    assert_eq!(m.support(Point, Tetrahedron), sup(true));
}

/// A point model on the triangle (0,0,0), (1,0,0), (0,1,0) with its edges; a line model is
/// present in its node.
fn fan_points() -> ModelGeometry {
    let x = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0)];
    let mesh = MeshData { points: vec![[0.0; 3]; 3], edges: vec![[0, 1], [1, 2], [2, 0]], triangles: vec![[0, 1, 2]], ..Default::default() };
    let mut g = from_mesh(Point, 1, &x, &mesh);
    g.has_line_model = true;
    g
}

#[test]
fn point_filter_by_normal_and_edge_cones() {
    // Vertex 0: nMean = unit normal of its only triangle = (0,0,1). Edges around it: (0,1)
    // with l = normalize((0,0,0) + (−1,0,0)) = (−1,0,0), and (2,0) with l = (0,−1,0); their
    // cones are max(0, (nMean·l)·0.5) + angleCone = angleCone.
    let m = lmd();
    let g = fan_points();
    // Straight above: nMean·v = ½ ≥ 0, l·v = 0 ≥ −0: valid.
    assert!(m.valid_point(&g, 0, &v(0.0, 0.0, 0.5)));
    // Below: nMean·v = −½ < 0.
    assert!(!m.valid_point(&g, 0, &v(0.0, 0.0, -0.5)));
    // Leaning over edge (0,1): l·v = −¼ < −0·|v|.
    let lean = v(0.25, 0.0, 0.5);
    assert!(!m.valid_point(&g, 0, &lean));
    // angleCone widens every cone: with 0.5, −¼ ≥ −0.5·|v| = −0.5·√0.3125 ≈ −0.2795 (valid);
    // with 0.4, −¼ < −0.4·√0.3125 ≈ −0.2236 (rejected).
    let wide = LocalMinDistance { angle_cone: 0.5, ..lmd() };
    assert!(wide.valid_point(&g, 0, &lean));
    let narrower = LocalMinDistance { angle_cone: 0.4, ..lmd() };
    assert!(!narrower.valid_point(&g, 0, &lean));
    // bothSide skips the normal test only.
    let mut both = g.clone();
    both.both_side = true;
    assert!(m.valid_point(&both, 0, &v(0.0, 0.0, -0.5)));
    assert!(!m.valid_point(&both, 0, &lean));
    // No line model in the node: no filtering; filterIntersection off: no filtering.
    let mut no_line = g.clone();
    no_line.has_line_model = false;
    assert!(m.valid_point(&no_line, 0, &v(0.0, 0.0, -0.5)));
    let off = LocalMinDistance { filter_intersection: false, ..lmd() };
    assert!(off.valid_point(&g, 0, &v(0.0, 0.0, -0.5)));
}

#[test]
fn point_filter_on_a_polyline() {
    // Points 0, (1,0,0), (2,0,0), edges (0,1), (1,2), no triangle.
    let x = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(2.0, 0.0, 0.0)];
    let mesh = MeshData { points: vec![[0.0; 3]; 3], edges: vec![[0, 1], [1, 2]], ..Default::default() };
    let mut g = from_mesh(Point, 1, &x, &mesh);
    g.has_line_model = true;
    let m = lmd();
    // Middle vertex: the two edge directions (1,0,0) and (−1,0,0) cancel: |nMean| = 0, no
    // normal test; each edge cone is 0, so v must be orthogonal to the line.
    assert!(m.valid_point(&g, 1, &v(0.0, 0.5, 0.0)));
    assert!(!m.valid_point(&g, 1, &v(0.1, 0.5, 0.0)));
    assert!(!m.valid_point(&g, 1, &v(-0.1, 0.5, 0.0)));
    // End vertex 2: nMean = l = (1,0,0), cone = ½: ahead or sideways is valid, behind is not.
    assert!(m.valid_point(&g, 2, &v(0.5, 0.0, 0.0)));
    assert!(m.valid_point(&g, 2, &v(0.0, 1.0, 0.0)));
    assert!(!m.valid_point(&g, 2, &v(-0.1, 1.0, 0.0)));
}

#[test]
fn point_point_with_filters() {
    // Vertex 0 of the fan against a lone point (no line model): PQ = (0,0,½): output with
    // points (P, Q), normal (0,0,1), value 0; model 1 bigger (3 > 1): id = e1.
    let g = fan_points();
    let q = points(2, &[v(0.0, 0.0, 0.5)]);
    let out = run(&lmd(), &g, 0, &q, 0);
    assert_eq!(out, vec![DetectionOutput { elem: (0, 0), id: 0, point: [v(0.0, 0.0, 0.0), v(0.0, 0.0, 0.5)], normal: v(0.0, 0.0, 1.0), value: 0.0 }]);
    // Below the fan: rejected; accepted with useLMDFilters (filters skipped).
    let below = points(2, &[v(0.0, 0.0, -0.5)]);
    assert!(run(&lmd(), &g, 0, &below, 0).is_empty());
    let ext = LocalMinDistance { use_lmd_filters: true, ..lmd() };
    assert_eq!(run(&ext, &g, 0, &below, 0)[0].normal, v(0.0, 0.0, -1.0));
    // The second element is checked with −PQ: the fan seen from the lone point.
    let out = run(&lmd(), &below, 0, &g, 0);
    assert!(out.is_empty());
    let above = run(&lmd(), &q, 0, &g, 0);
    assert_eq!(above.len(), 1);
    assert_eq!(above[0].normal, v(0.0, 0.0, -1.0));
}

/// A line model on two triangles sharing edge 0 = (0,1): triangle 0 = (0,1,2) on its left,
/// triangle 1 = (1,0,3) on its right, with vertices 2 = (½,1,z) and 3 = (½,−1,z).
fn hinge(z: f64) -> ModelGeometry {
    let x = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.5, 1.0, z), v(0.5, -1.0, z)];
    let mesh = MeshData {
        points: vec![[0.0; 3]; 4],
        edges: vec![[0, 1], [1, 2], [2, 0], [0, 3], [3, 1]],
        triangles: vec![[0, 1, 2], [1, 0, 3]],
        ..Default::default()
    };
    from_mesh(Line, 1, &x, &mesh)
}

#[test]
fn line_filter_on_a_flat_hinge() {
    // Flat (z = 0): both normals (0,0,1); right n1 gives t1 = n1 × AB = (0,1,0), left n2
    // gives t2 = AB × n2 = (0,−1,0); nMean = (0,0,1); cones are max(0, 0·½) + 0 = 0, so v
    // must be in the half-plane y = 0, z ≥ 0.
    let m = lmd();
    let g = hinge(0.0);
    assert_eq!(g.adjacency.as_ref().unwrap().triangles_around_edge[0], vec![0, 1]);
    assert!(m.valid_line(&g, 0, &v(0.0, 0.0, 0.5)));
    assert!(!m.valid_line(&g, 0, &v(0.0, 0.1, 0.5)));
    assert!(!m.valid_line(&g, 0, &v(0.0, -0.1, 0.5)));
    assert!(!m.valid_line(&g, 0, &v(0.0, 0.0, -0.5)));
    let mut both = g.clone();
    both.both_side = true;
    assert!(m.valid_line(&both, 0, &v(0.0, 0.0, -0.5)));
    // Boundary edge (1,2) (one triangle): v must be orthogonal to the edge within 1e-4.
    assert!(m.valid_line(&g, 1, &v(0.0, 0.0, 1.0)));
    assert!(!m.valid_line(&g, 1, &v(1.0, 0.0, 0.0)));
}

#[test]
fn line_filter_cone_on_a_ridge() {
    // Ridge (z = −1): left normal (0,1,1)/√2, right (0,−1,1)/√2; t1 = (0,1,1)/√2,
    // t2 = (0,−1,1)/√2, nMean = (0,0,1); cones = max(0, (nMean·t)·coneFactor) = 0.5/√2.
    let g = hinge(-1.0);
    let m = lmd();
    // (0,½,½): t1·v = 1/√2 > 0, t2·v = 0: valid (the flat hinge rejects it).
    assert!(m.valid_line(&g, 0, &v(0.0, 0.5, 0.5)));
    assert!(!m.valid_line(&hinge(0.0), 0, &v(0.0, 0.5, 0.5)));
    // (0,1,0.1): t2·v = −0.9/√2 ≈ −0.636 < −(0.5/√2)·|v| ≈ −0.355: rejected; with
    // coneFactor 2 the cone is 2/√2 and −0.636 ≥ −1.42: accepted.
    let lean = v(0.0, 1.0, 0.1);
    assert!(!m.valid_line(&g, 0, &lean));
    let wide = LocalMinDistance { cone_factor: 2.0, ..lmd() };
    assert!(wide.valid_line(&g, 0, &lean));
}

#[test]
fn line_point_through_the_line_filter() {
    // Hinge edge 0 = (0,0,0)–(1,0,0), point P = (½,0,½): α = ½, Q = (½,0,0), PQ = (0,0,−½);
    // the point (no line model) is valid, the line sees QP = (0,0,½): valid. Output:
    // elem (line, point), id = point index, points (Q, P), normal (0,0,1), value 0.
    let g = hinge(0.0);
    let p = points(2, &[v(0.5, 0.0, 0.5)]);
    let out = run(&lmd(), &g, 0, &p, 0);
    assert_eq!(out, vec![DetectionOutput { elem: (0, 0), id: 0, point: [v(0.5, 0.0, 0.0), v(0.5, 0.0, 0.5)], normal: v(0.0, 0.0, 1.0), value: 0.0 }]);
    // Off the hinge's plane of symmetry: rejected by t2.
    let side = points(2, &[v(0.5, 0.1, 0.5)]);
    assert!(run(&lmd(), &g, 0, &side, 0).is_empty());
    // Ridge with coneFactor 2 and alarm 2: P = (½,1,0.1) accepted, rejected with 0.5.
    let ridge = hinge(-1.0);
    let far = points(2, &[v(0.5, 1.0, 0.1)]);
    let m2 = LocalMinDistance { alarm_distance: 2.0, cone_factor: 2.0, ..lmd() };
    assert_eq!(run(&m2, &ridge, 0, &far, 0).len(), 1);
    let m05 = LocalMinDistance { alarm_distance: 2.0, ..lmd() };
    assert!(run(&m05, &ridge, 0, &far, 0).is_empty());
}

#[test]
fn line_point_degenerate_segment_and_window() {
    // |AB| = 1e-13 < 1e-12·|AP| ≈ 7.1e-13: no output.
    let l = lines(1, &[v(0.0, 0.0, 0.0), v(1e-13, 0.0, 0.0)], &[[0, 1]]);
    let p = points(2, &[v(0.5, 0.5, 0.0)]);
    assert!(run(&lmd(), &l, 0, &p, 0).is_empty());
    // No clamping: a point beyond the end gives nothing.
    let l = lines(1, &[v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0)], &[[0, 1]]);
    assert!(run(&lmd(), &l, 0, &points(2, &[v(1.25, 0.0, 0.25)]), 0).is_empty());
}

#[test]
fn triangle_point_front_side_only() {
    // Unit triangle, P = (¼,¼,½): Q = (¼,¼,0), QP = (0,0,½); n·QP = ½ ≥ 0: output.
    let tri = unit_triangle(0);
    let p = points(2, &[v(0.0, 0.0, 9.0), v(0.25, 0.25, 0.5)]);
    let out = run(&lmd(), &tri, 0, &p, 1);
    assert_eq!(
        out,
        vec![DetectionOutput { elem: (0, 1), id: 1, point: [v(0.25, 0.25, 0.0), v(0.25, 0.25, 0.5)], normal: v(0.0, 0.0, 1.0), value: 0.0 }]
    );
    // Behind: (0,0,1)·(0,0,−½) < 0, rejected unless the triangle model is bothSide.
    let below = points(2, &[v(0.25, 0.25, -0.5)]);
    assert!(run(&lmd(), &tri, 0, &below, 0).is_empty());
    let mut both = tri.clone();
    both.both_side = true;
    let out = run(&lmd(), &both, 0, &below, 0);
    assert_eq!(out[0].normal, v(0.0, 0.0, -1.0));
    // Projection on an edge: nothing.
    assert!(run(&lmd(), &tri, 0, &points(2, &[v(0.5, 0.0, 0.5)]), 0).is_empty());
    // Strict alarm: |QP| = 1.
    assert!(run(&lmd(), &tri, 0, &points(2, &[v(0.25, 0.25, 1.0)]), 0).is_empty());
}

#[test]
fn line_line_window_and_parallel_filter() {
    // Crossing lines without topology (boundary branch: PQ ⟂ both lines passes).
    let l1 = lines(1, &[v(0.0, 0.0, 0.0), v(2.0, 0.0, 0.0)], &[[0, 1]]);
    let l2 = lines(2, &[v(1.0, -1.0, 0.5), v(1.0, 1.0, 0.5)], &[[0, 1]]);
    let out = run(&lmd(), &l1, 0, &l2, 0);
    assert_eq!(out[0].point, [v(1.0, 0.0, 0.0), v(1.0, 0.0, 0.5)]);
    assert_eq!((out[0].normal, out[0].value), (v(0.0, 0.0, 1.0), 0.0));
    // β = 2⁻²¹ ≈ 4.8e-7: inside LMD's [1e-15, 1 − 1e-15] window but outside MinProximity's
    // [1e-6, 0.999999]. C = (1, −2⁻²⁰, ½), CD = (0,2,0): b1 = 2⁻¹⁹, β = 4·2⁻¹⁹/16 = 2⁻²¹,
    // Q = C + CD·2⁻²¹ = (1,0,½).
    let e = 2f64.powi(-20);
    let l3 = lines(2, &[v(1.0, -e, 0.5), v(1.0, 2.0 - e, 0.5)], &[[0, 1]]);
    let out = run(&lmd(), &l1, 0, &l3, 0);
    assert_eq!(out[0].point[1], v(1.0, 0.0, 0.5));
    assert!(run(&MinProximityIntersection::default(), &l1, 0, &l3, 0).is_empty());
    // Offset parallel lines, alarm 2: det = 0, midpoints (1,0,0) and (2,0.75,0),
    // PQ = (1,0.75,0), |AB·PQ̂| = 0.8 > 1e-4: rejected by the line filter; without filtering
    // the output has value 1.25 − 0.5.
    let l4 = lines(2, &[v(1.0, 0.75, 0.0), v(3.0, 0.75, 0.0)], &[[0, 1]]);
    let m2 = LocalMinDistance { alarm_distance: 2.0, ..lmd() };
    assert!(run(&m2, &l1, 0, &l4, 0).is_empty());
    let unfiltered = LocalMinDistance { filter_intersection: false, ..m2.clone() };
    let out = run(&unfiltered, &l1, 0, &l4, 0);
    assert_eq!(out[0].point, [v(1.0, 0.0, 0.0), v(2.0, 0.75, 0.0)]);
    assert_eq!(out[0].value, 0.75);
}

#[test]
fn vec3_sphere_pairs() {
    // Sphere–Sphere: alarm = 1 + r1 + cd1 + r2 + cd2 = 2; d = 1.75: value = 1.75 − 1.5;
    // points are the centres; d = 2 is rejected (strict).
    let s1 = spheres(1, &[v(0.0, 0.0, 0.0)], &[0.5]);
    let s2 = spheres(2, &[v(1.75, 0.0, 0.0)], &[0.5]);
    let out = run(&lmd(), &s1, 0, &s2, 0);
    assert_eq!(out[0].point, [v(0.0, 0.0, 0.0), v(1.75, 0.0, 0.0)]);
    assert_eq!((out[0].normal, out[0].value), (v(1.0, 0.0, 0.0), 0.25));
    let s3 = spheres(2, &[v(2.0, 0.0, 0.0)], &[0.5]);
    assert!(run(&lmd(), &s1, 0, &s3, 0).is_empty());
    // Sphere–Point: alarm 1.5, value 1.25 − 1 = 0.25; id = bigger-model id (2 points → e2).
    let q = points(2, &[v(9.0, 9.0, 9.0), v(0.0, 0.0, 1.25)]);
    let out = run(&lmd(), &s1, 0, &q, 1);
    assert_eq!(out[0].point, [v(0.0, 0.0, 0.0), v(0.0, 0.0, 1.25)]);
    assert_eq!((out[0].id, out[0].value), (1, 0.25));
    // Line–Sphere (line without topology): α = ½, Q = (1,0,0); the line sees (0,1.25,0),
    // orthogonal: valid; points (Q, centre), value 0.25, id = sphere index.
    let l = lines(1, &[v(0.0, 0.0, 0.0), v(2.0, 0.0, 0.0)], &[[0, 1]]);
    let s = spheres(2, &[v(5.0, 5.0, 5.0), v(1.0, 1.25, 0.0)], &[0.5, 0.5]);
    let out = run(&lmd(), &l, 0, &s, 1);
    assert_eq!(out[0].point, [v(1.0, 0.0, 0.0), v(1.0, 1.25, 0.0)]);
    assert_eq!((out[0].elem, out[0].id, out[0].value), ((0, 1), 1, 0.25));
    assert_eq!(out[0].normal, v(0.0, 1.0, 0.0));
    // Triangle–Sphere: value ¾ − 1, points (Q, centre).
    let tri = unit_triangle(0);
    let s = spheres(2, &[v(0.25, 0.25, 0.75)], &[0.5]);
    let out = run(&lmd(), &tri, 0, &s, 0);
    assert_eq!(out[0].point, [v(0.25, 0.25, 0.0), v(0.25, 0.25, 0.75)]);
    assert_eq!(out[0].value, -0.25);
}

#[test]
fn rigid_spheres_run_the_discrete_code_without_skins() {
    // r = ½ each, skins 1 each (ignored): alarm' = 1 + 1 = 2. d = 1.75: value = 1.75 − 1 − 0.5;
    // surface points c1 + n/2 and c2 − n/2. d = 2 is kept (touching); d = 2.5 is not,
    // although MinProximity (alarm 1 + 1 + 1 + 1 = 4) would keep it.
    let mut s1 = rigid_spheres(1, &[v(0.0, 0.0, 0.0)], &[0.5]);
    let mut s2 = rigid_spheres(2, &[v(1.75, 0.0, 0.0)], &[0.5]);
    s1.contact_distance = 1.0;
    s2.contact_distance = 1.0;
    let out = run(&lmd(), &s1, 0, &s2, 0);
    assert_eq!(out[0].point, [v(0.5, 0.0, 0.0), v(1.25, 0.0, 0.0)]);
    assert_eq!(out[0].value, 0.25);
    s2.x[0] = v(2.0, 0.0, 0.0);
    assert_eq!(run(&lmd(), &s1, 0, &s2, 0)[0].value, 0.5);
    s2.x[0] = v(2.5, 0.0, 0.0);
    assert!(run(&lmd(), &s1, 0, &s2, 0).is_empty());
    assert_eq!(run(&MinProximityIntersection::default(), &s1, 0, &s2, 0).len(), 1);
    // Vec3–Rigid also runs the discrete code.
    let v1 = spheres(1, &[v(0.0, 0.0, 0.0)], &[0.5]);
    let out = run(&lmd(), &v1, 0, &s2, 0);
    assert!(out.is_empty());
    s2.x[0] = v(0.75, 0.0, 0.0);
    let out = run(&lmd(), &v1, 0, &s2, 0);
    assert_eq!(out[0].point, [v(0.0, 0.0, 0.0), v(0.25, 0.0, 0.0)]);
    assert_eq!(out[0].value, 0.75 - 1.0 - 0.5);
}
