use super::test_support::*;
use super::*;
use crate::geometry::{Aabb, ModelGeometry, PrimitiveKind, Vec3};

fn v(x: f64, y: f64, z: f64) -> Vec3 {
    Vec3::new(x, y, z)
}

fn settings(depth: u32) -> DetectionSettings {
    DetectionSettings { depth, ..DetectionSettings::default() }
}

/// Elements of a span of leaf boxes, in leaf order.
fn leaf_elements(t: &BoundingTree, s: Span) -> Vec<u32> {
    assert_eq!(s.level, LEAF_LEVEL);
    t.leaves()[s.start as usize..s.end as usize].iter().map(|b| b.children.0).collect()
}

fn build(g: &ModelGeometry, depth: u32) -> BoundingTree {
    let mut t = BoundingTree::new();
    t.update(0, g, depth, false).unwrap();
    t
}

fn aabb(min: Vec3, max: Vec3) -> Aabb {
    Aabb { min, max }
}

// ---------------------------------------------------------------- trees

#[test]
fn six_points_split_on_x_with_stable_ties() {
    // Extents (2, 1, 1): split on x. Keys min.x + max.x = 4, 0, 4, 0, 2, 4: the stable sort
    // gives e1, e3, e4, e0, e2, e5; the middle is (6 + 1) / 2 = 3.
    let g = points("p", 1, &[v(2., 0., 0.), v(0., 0., 0.), v(2., 1., 0.), v(0., 1., 0.), v(1., 0., 0.), v(2., 0., 1.)]);
    let t = build(&g, 1);
    assert_eq!(t.levels().len(), 2);
    let root = t.root().unwrap();
    assert_eq!(root.aabb, aabb(v(0., 0., 0.), v(2., 1., 1.)));
    assert_eq!(root.subcells, Span { level: 1, start: 0, end: 2 });
    let l1 = &t.levels()[1];
    assert_eq!(leaf_elements(&t, l1[0].subcells), vec![1, 3, 4]);
    assert_eq!(leaf_elements(&t, l1[1].subcells), vec![0, 2, 5]);
    assert_eq!(l1[0].aabb, aabb(v(0., 0., 0.), v(1., 1., 0.)));
    assert_eq!(l1[1].aabb, aabb(v(2., 0., 0.), v(2., 1., 1.)));
    assert_eq!(t.parent_of(), &[3, 0, 4, 1, 2, 5]);
}

#[test]
fn ten_points_on_a_line_three_levels() {
    // x = 9 0 7 2 5 4 3 6 1 8: sorted leaf order e1 e8 e3 e6 e5 | e4 e7 e2 e9 e0 (middle 5);
    // each half of 5 splits again at (5 + 1) / 2 = 3; halves of 3 and 2 are not split.
    let xs = [9., 0., 7., 2., 5., 4., 3., 6., 1., 8.];
    let g = points("p", 1, &xs.map(|x| v(x, 0., 0.)));
    let t = build(&g, 3);
    assert_eq!(t.levels().len(), 4);
    assert_eq!(t.levels()[0][0].subcells, Span { level: 1, start: 0, end: 2 });
    let l1 = &t.levels()[1];
    assert_eq!(l1[0].subcells, Span { level: 2, start: 0, end: 2 });
    assert_eq!(l1[1].subcells, Span { level: 2, start: 2, end: 4 });
    let l2 = &t.levels()[2];
    let spans: Vec<_> = l2.iter().map(|b| (b.subcells.start, b.subcells.end)).collect();
    assert_eq!(spans, vec![(0, 3), (3, 5), (5, 8), (8, 10)]);
    assert!(l2.iter().all(|b| b.subcells.level == LEAF_LEVEL));
    assert!(t.levels()[3].is_empty());
    let xs_of = |b: &CubeBox| (b.aabb.min.x, b.aabb.max.x);
    assert_eq!(l2.iter().map(xs_of).collect::<Vec<_>>(), vec![(0., 2.), (3., 4.), (5., 7.), (8., 9.)]);
    // Leaf i holds the element at x = i, so parentOf[e] = x[e].
    assert_eq!(t.parent_of(), &[9, 0, 7, 2, 5, 4, 3, 6, 1, 8]);
    assert_eq!(leaf_elements(&t, l2[0].subcells), vec![1, 8, 3]);
}

#[test]
fn split_axis_ties_prefer_the_later_axis() {
    // Extents (1, 1, 0): x > y fails, y > z holds: axis y.
    let pts = [v(0., 1., 0.), v(1., 0., 0.), v(0.5, 0.5, 0.), v(1., 1., 0.), v(0., 0., 0.)];
    let t = build(&points("p", 1, &pts), 1);
    let l1 = &t.levels()[1];
    assert_eq!(leaf_elements(&t, l1[0].subcells), vec![1, 4, 2]);
    assert_eq!(leaf_elements(&t, l1[1].subcells), vec![0, 3]);
    // Extents (1, 1, 1): axis z.
    let zs = [0.2, 1.0, 0.0, 0.6, 0.4];
    let pts: Vec<Vec3> = pts.iter().zip(zs).map(|(p, z)| v(p.x, p.y, z)).collect();
    let t = build(&points("p", 1, &pts), 1);
    let l1 = &t.levels()[1];
    assert_eq!(leaf_elements(&t, l1[0].subcells), vec![2, 0, 4]);
    assert_eq!(leaf_elements(&t, l1[1].subcells), vec![3, 1]);
}

#[test]
fn leaf_boxes_follow_each_models_arithmetic() {
    // Sphere: centre ∓ (r + cd); (0.3 - 0.1) - 0.7 would give -0.5 exactly.
    let mut s = spheres("s", 1, &[v(0.3, 0.3, 0.3)], 0.1);
    s.contact_distance = 0.7;
    let t = build(&s, 0);
    let b = t.leaves()[0].aabb;
    assert_eq!(b.min.x, -0.49999999999999994);
    assert_ne!(b.min.x, (0.3 - 0.1) - 0.7);
    assert_eq!(b.max.x, 1.0999999999999999);
    // Point: p ∓ cd.
    let mut p = points("p", 1, &[v(1., 2., 3.)]);
    p.contact_distance = 0.25;
    assert_eq!(build(&p, 0).leaves()[0].aabb, aabb(v(0.75, 1.75, 2.75), v(1.25, 2.25, 3.25)));
    // Line: min/max of the ends, then ∓ cd.
    let mut l = ModelGeometry::new(PrimitiveKind::Line, "l", 1);
    l.x = vec![v(1., -1., 0.), v(0., 2., 0.5)];
    l.edges = vec![[0, 1]];
    l.contact_distance = 0.5;
    assert_eq!(build(&l, 0).leaves()[0].aabb, aabb(v(-0.5, -1.5, -0.5), v(1.5, 2.5, 1.0)));
    // Triangle: same over three vertices.
    let mut tr = ModelGeometry::new(PrimitiveKind::Triangle, "t", 1);
    tr.x = vec![v(0., 0., 0.), v(2., -1., 1.), v(1., 3., -2.)];
    tr.triangles = vec![[0, 1, 2]];
    tr.contact_distance = 0.1;
    assert_eq!(build(&tr, 0).leaves()[0].aabb, aabb(v(-0.1, -1.1, -2.1), v(2.1, 3.1, 1.1)));
    // Tetrahedron: no contact distance.
    let mut te = ModelGeometry::new(PrimitiveKind::Tetrahedron, "te", 1);
    te.x = vec![v(0., 0., 0.), v(1., 0., 0.), v(0., 1., 0.), v(0., 0., 1.), v(5., 5., 5.)];
    te.tetrahedra = vec![[0, 1, 2, 3]];
    te.contact_distance = 0.3;
    let t = build(&te, 2);
    assert_eq!(t.leaves()[0].aabb, aabb(v(0., 0., 0.), v(1., 1., 1.)));
    // Depth 0: one leaf box around every DOF (also the unused one) holding all tetrahedra.
    let t = build(&te, 0);
    assert!(t.root_is_leaf() && t.levels().is_empty());
    assert_eq!(t.root().unwrap().aabb, aabb(v(0., 0., 0.), v(5., 5., 5.)));
    assert_eq!(t.root().unwrap().children, (0, 1));
    // Depth 0 for other models: a root over all leaf boxes, never split.
    let xs = [9., 0., 7., 2., 5., 4., 3.];
    let t = build(&points("p", 1, &xs.map(|x| v(x, 0., 0.))), 0);
    assert_eq!(t.levels().len(), 1);
    assert_eq!(t.root().unwrap().subcells, Span { level: LEAF_LEVEL, start: 0, end: 7 });
    assert_eq!(t.parent_of(), &[0, 1, 2, 3, 4, 5, 6]);
}

#[test]
fn refit_keeps_the_partition_and_non_moving_trees_stay() {
    let xs = [9., 0., 7., 2., 5., 4., 3., 6., 1., 8.];
    let mut g = points("p", 1, &xs.map(|x| v(x, 0., 0.)));
    let mut t = build(&g, 3);
    let parent = t.parent_of().to_vec();
    // Mirror the points: x' = 9 - x. The leaf order stays; boxes are refitted.
    for p in &mut g.x {
        p.x = 9. - p.x;
    }
    assert_eq!(t.update(0, &g, 3, false).unwrap(), TreeUpdate::Refitted);
    assert_eq!(t.parent_of(), parent.as_slice());
    let l2 = &t.levels()[2];
    // First box still holds e1, e8, e3, now at x' = 9, 8, 7.
    assert_eq!(leaf_elements(&t, l2[0].subcells), vec![1, 8, 3]);
    assert_eq!((l2[0].aabb.min.x, l2[0].aabb.max.x), (7., 9.));
    assert_eq!((l2[3].aabb.min.x, l2[3].aabb.max.x), (0., 1.));
    assert_eq!((t.levels()[1][0].aabb.min.x, t.levels()[1][0].aabb.max.x), (5., 9.));
    assert_eq!(t.root().unwrap().aabb, aabb(v(0., 0., 0.), v(9., 0., 0.)));
    for (e, &leaf) in parent.iter().enumerate() {
        assert_eq!(t.leaves()[leaf as usize].aabb.min.x, 9. - xs[e]);
    }

    // A non-moving model keeps its first boxes.
    let mut fixed = points("p", 1, &xs.map(|x| v(x, 0., 0.)));
    fixed.moving = false;
    let mut t = build(&fixed, 3);
    let before = t.levels().to_vec();
    for p in &mut fixed.x {
        p.y += 1.0;
    }
    assert_eq!(t.update(0, &fixed, 3, false).unwrap(), TreeUpdate::Skipped);
    assert_eq!(t.levels(), before.as_slice());

    // A size change rebuilds from element order.
    let mut g = points("p", 1, &xs.map(|x| v(x, 0., 0.)));
    let mut t = build(&g, 3);
    g.x.push(v(-1., 0., 0.));
    assert_eq!(t.update(0, &g, 3, false).unwrap(), TreeUpdate::Built);
    assert_eq!(t.parent_of(), &[10, 1, 8, 3, 6, 5, 4, 7, 2, 9, 0]);
}

#[test]
fn depth_change_rebuilds_from_the_current_leaf_order() {
    let pts = [v(2., 0., 0.), v(0., 0., 0.), v(2., 1., 0.), v(0., 1., 0.), v(1., 0., 0.), v(2., 0., 1.)];
    let mut g = points("p", 1, &pts);
    let mut t = build(&g, 1);
    assert_eq!(t.parent_of(), &[3, 0, 4, 1, 2, 5]);
    // All keys tie now: a stable sort keeps the leaf order of the first build (element order
    // would give the identity).
    for p in &mut g.x {
        *p = v(0., 0., 0.);
    }
    g.x[5] = v(0., 0., 1.);
    assert_eq!(t.update(0, &g, 2, false).unwrap(), TreeUpdate::Built);
    assert_eq!(t.levels().len(), 3);
    assert_eq!(t.parent_of(), &[3, 0, 4, 1, 2, 5]);
}

#[test]
fn bad_geometry_is_an_error() {
    let mut tr = ModelGeometry::new(PrimitiveKind::Triangle, "t", 1);
    tr.x = vec![v(0., 0., 0.); 3];
    tr.triangles = vec![[0, 1, 2], [0, 1, 3]];
    let mut t = BoundingTree::new();
    let err = t.update(4, &tr, 2, false).unwrap_err();
    assert_eq!(err, DetectionError::BadElement { model: 4, name: "t".into(), element: 1, vertices: 3 });
    assert!(err.to_string().contains("element 1"));
    let mut s = spheres("s", 1, &[v(0., 0., 0.); 3], 1.0);
    s.radius.pop();
    let mut d = Detection::new();
    let m = TestProximity::new(0.1);
    assert!(matches!(d.run(&[s], &m, &settings(2)), Err(DetectionError::MissingRadius { spheres: 3, radii: 2, .. })));
}

// ---------------------------------------------------------------- broad phase

/// Nine one-sphere models at the origin with the flags of the broad-phase test.
fn broad_models() -> Vec<ModelGeometry> {
    let one = |name: &str, node: u64| spheres(name, node, &[v(0., 0., 0.)], 1.0);
    let a = one("A", 1);
    let mut b = one("B", 2);
    b.self_collision = true;
    let mut c = one("C", 3);
    c.simulated = false;
    let mut d = one("D", 4);
    d.simulated = false;
    let mut e = one("E", 5);
    e.groups = vec![1];
    let mut f = one("F", 6);
    f.groups = vec![1, 2];
    let g = one("G", 1);
    let mut h = one("H", 7);
    h.active = false;
    let mut i = one("I", 2);
    i.self_collision = true;
    vec![a, b, c, d, e, f, g, h, i]
}

#[test]
fn brute_force_pair_order_and_rules() {
    let models = broad_models();
    let m = TestProximity::new(0.0);
    let mut d = Detection::new();
    d.run(&models, &m, &settings(2)).unwrap();
    let expected = vec![
        (1, 1),
        (1, 0),
        (2, 0),
        (2, 1),
        (3, 0),
        (3, 1),
        (4, 0),
        (4, 1),
        (4, 2),
        (4, 3),
        (5, 0),
        (5, 1),
        (5, 2),
        (5, 3),
        (6, 1),
        (6, 2),
        (6, 3),
        (6, 4),
        (6, 5),
        (8, 8),
        (8, 0),
        (8, 1),
        (8, 2),
        (8, 3),
        (8, 4),
        (8, 5),
        (8, 6),
    ];
    assert_eq!(d.broad_pairs(), expected.as_slice());

    let mut s = settings(2);
    s.broad_phase = BroadPhaseKind::ParallelBruteForce;
    d.run(&models, &m, &s).unwrap();
    let mut parallel = vec![(1, 1), (8, 8)];
    parallel.extend(expected.iter().copied().filter(|(a, b)| a != b));
    assert_eq!(d.broad_pairs(), parallel.as_slice());
}

#[test]
fn broad_phase_box_filter_and_far_roots() {
    let mut models = broad_models();
    models.truncate(3);
    models[2].simulated = true;
    models[2].x[0] = v(10.5, 10.5, 10.5);
    let m = TestProximity::new(0.0);
    let mut d = Detection::new();
    // Far apart roots: no pair with model 2.
    d.run(&models, &m, &settings(2)).unwrap();
    assert_eq!(d.broad_pairs(), &[(1, 1), (1, 0)]);
    // The box keeps only the model it touches.
    let mut s = settings(2);
    s.box_filter = [v(10., 10., 10.), v(11., 11., 11.)];
    d.run(&models, &m, &s).unwrap();
    assert_eq!(d.broad_pairs(), &[] as &[(usize, usize)]);
    models[1].x[0] = v(8.4, 8.4, 8.4); // box up to 9.4: touches neither the box nor model 2
    models[0].x[0] = v(9.1, 9.1, 9.1); // box up to 10.1
    d.run(&models, &m, &s).unwrap();
    assert_eq!(d.broad_pairs(), &[(2, 0)]);
    // box[0].x >= box[1].x disables the filter.
    s.box_filter = [v(11., 10., 10.), v(11., 11., 11.)];
    d.run(&models, &m, &s).unwrap();
    assert_eq!(d.broad_pairs(), &[(1, 1), (1, 0), (2, 0)]);
    // Empty models take no part.
    models[0].x.clear();
    models[0].radius.clear();
    d.run(&models, &m, &s).unwrap();
    assert_eq!(d.broad_pairs(), &[(1, 1)]);
}

// ---------------------------------------------------------------- narrow phase

fn elems(outputs: &[crate::output::DetectionOutput]) -> Vec<(usize, usize)> {
    outputs.iter().map(|o| o.elem).collect()
}

#[test]
fn hand_traced_output_order() {
    // Two rows of six spheres (radius 0.6, 1 apart, rows 0.1 apart), depth 1: each root
    // splits into leaves 0-2 and 3-5. Scanning the 2×2 level-1 block pushes
    // P1 = (B0-2, A0-2), P2 = (B0-2, A3-5), P3 = (B3-5, A0-2), P4 = (B3-5, A3-5) (all four
    // boxes overlap: [-0.6, 2.6] meets [2.4, 5.6]); the stack pops P4, P3, P2, P1, each
    // block scanned row by row.
    let a = spheres("A", 1, &(0..6).map(|i| v(i as f64, 0., 0.)).collect::<Vec<_>>(), 0.6);
    let b = spheres("B", 2, &(0..6).map(|i| v(i as f64, 0.1, 0.)).collect::<Vec<_>>(), 0.6);
    let models = vec![a, b];
    let expected =
        vec![(3, 3), (3, 4), (4, 3), (4, 4), (4, 5), (5, 4), (5, 5), (3, 2), (2, 3), (0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (2, 1), (2, 2)];
    for discrete in [false, true] {
        let m = TestProximity { alarm: 0.0, discrete_boxes: discrete };
        for (search_min, parallel) in [(usize::MAX, false), (0, false), (0, true), (usize::MAX, true)] {
            let mut d = Detection::new();
            let s = DetectionSettings { depth: 1, search_min, parallel, parallel_min_work: 0, ..DetectionSettings::default() };
            let out = d.run(&models, &m, &s).unwrap();
            assert_eq!(out.len(), 1);
            assert_eq!((out[0].model1, out[0].model2), (1, 0));
            assert_eq!(elems(&out[0].outputs), expected);
            assert_eq!(d.stats().narrow.units, 4);
            if parallel {
                assert!(d.stats().narrow.parallel_chunks >= 1);
            }
        }
    }
}

#[test]
fn swap_rule_ignored_and_unknown_pairs() {
    // (Triangle, Sphere) registered: a later sphere model is swapped behind the triangles.
    let mut tri = ModelGeometry::new(PrimitiveKind::Triangle, "T", 1);
    tri.x = vec![v(0., 0., 0.), v(1., 0., 0.), v(0., 1., 0.), v(1., 1., 0.)];
    tri.triangles = vec![[0, 1, 2], [1, 3, 2]];
    let mut tri2 = tri.clone();
    tri2.node = 3;
    let sph = spheres("S", 2, &[v(0.2, 0.2, 0.1), v(0.8, 0.8, 0.1), v(5., 5., 5.)], 0.2);
    let mut line = ModelGeometry::new(PrimitiveKind::Line, "L", 4);
    line.x = vec![v(0., 0., 0.), v(1., 1., 0.)];
    line.edges = vec![[0, 1]];
    let models = vec![tri, sph, tri2, line];
    let m = TestProximity::new(0.0);
    let mut d = Detection::new();
    let out = d.run(&models, &m, &settings(3)).unwrap();
    // Broad: (1,0) (2,0) (2,1) (3,0) (3,1) (3,2). Narrow: (1,0) swapped to (0,1); (2,0)
    // Triangle–Triangle ignored; (2,1) kept; Line–Triangle, Line–Sphere unknown.
    let keys: Vec<_> = out.iter().map(|e| (e.model1, e.model2)).collect();
    assert_eq!(keys, vec![(0, 1), (2, 1)]);
    assert_eq!(elems(&out[0].outputs), vec![(0, 0), (1, 1)]);
    assert_eq!(out[0].outputs[0].point[1], v(0.2, 0.2, 0.1));
    assert_eq!(d.unknown_pairs(), &[(PrimitiveKind::Line, PrimitiveKind::Triangle), (PrimitiveKind::Line, PrimitiveKind::Sphere)]);
}

#[test]
fn outputs_map_order_follows_gcc_stable_ids() {
    // Models P0 (points), T (triangle), P2 (points). Broad pairs (1,0) (2,0) (2,1). Entries:
    // (1,0) into the empty map (no ids); (2,0) compared with (1,0): ids 0→0, 1→1, 2→2;
    // (2,1) is Point–Triangle, swapped to (1,2). Map order by ids: (1,0) (1,2) (2,0), not
    // insertion order (1,0) (2,0) (1,2).
    let mut t = ModelGeometry::new(PrimitiveKind::Triangle, "T", 2);
    t.x = vec![v(-5., -5., 0.), v(5., -5., 0.), v(0., 5., 0.)];
    t.triangles = vec![[0, 1, 2]];
    let mut p0 = points("P0", 1, &[v(0., 0., 0.3)]);
    let p2 = points("P2", 3, &[v(0., 0.2, 0.3)]);
    let m = TestProximity::new(0.5);
    let mut d = Detection::new();
    let keys = |d: &Detection| d.outputs().iter().map(|e| (e.model1, e.model2)).collect::<Vec<_>>();
    d.run(&[p0.clone(), t.clone(), p2.clone()], &m, &settings(2)).unwrap();
    assert_eq!(keys(&d), vec![(1, 0), (1, 2), (2, 0)]);
    let ids = d.outputs_map().ids();
    assert_eq!((ids.id(0), ids.id(1), ids.id(2)), (Some(0), Some(1), Some(2)));
    // P0 leaves: its two entries are erased, the ids stay.
    p0.x[0] = v(0., 0., 3.);
    d.run(&[p0.clone(), t.clone(), p2.clone()], &m, &settings(2)).unwrap();
    assert_eq!(keys(&d), vec![(1, 2)]);
    p0.x[0] = v(0., 0., 0.3);
    d.run(&[p0, t, p2], &m, &settings(2)).unwrap();
    assert_eq!(keys(&d), vec![(1, 0), (1, 2), (2, 0)]);
    assert_eq!(d.outputs_map().ids().id(2), Some(2));
}

#[test]
fn stable_order_map_first_key_ids_come_second_model_first() {
    struct K(usize, usize);
    impl PairKeyed for K {
        fn pair_key(&self) -> (usize, usize) {
            (self.0, self.1)
        }
    }
    let keys = |m: &StableOrderMap<K>| m.entries().iter().map(|k| (k.0, k.1)).collect::<Vec<_>>();
    // End-hinted: (0,1) gets no ids; inserting (2,0) presents 1, 0, then 0, 2: ids 1→0, 0→1,
    // 2→2. Then (1,2) = (0,2) sorts first.
    let mut m = StableOrderMap::new();
    m.insert_with_end_hint((0, 1), || K(0, 1));
    assert_eq!(m.ids().id(0), None);
    m.insert_with_end_hint((2, 0), || K(2, 0));
    assert_eq!((m.ids().id(1), m.ids().id(0), m.ids().id(2)), (Some(0), Some(1), Some(2)));
    let (i, created) = m.insert_with_end_hint((1, 2), || K(1, 2));
    assert_eq!((i, created), (0, true));
    assert_eq!(keys(&m), vec![(1, 2), (0, 1), (2, 0)]);
    assert_eq!(m.insert_with_end_hint((0, 1), || K(9, 9)), (1, false));
    // Plain insertion compares the new key first: (0,1) then (2,0) gives ids 0, 2, then 1.
    let mut m = StableOrderMap::new();
    m.insert((0, 1), || K(0, 1));
    m.insert((2, 0), || K(2, 0));
    assert_eq!((m.ids().id(0), m.ids().id(2), m.ids().id(1)), (Some(0), Some(1), Some(2)));
    assert_eq!(keys(&m), vec![(0, 1), (2, 0)]);
    // A failed find still hands out ids.
    assert_eq!(m.find((3, 4)), None);
    assert_eq!((m.ids().id(4), m.ids().id(3)), (Some(3), Some(4)));
    assert_eq!(m.find((0, 1)), Some(0));
}

#[test]
fn self_collision_element_rules() {
    // One node: a triangle model and a point model on its vertices plus a free point, both
    // self-colliding. Triangle–Point must skip the triangle's own vertices; a point model
    // against itself never produces pairs (i > j and i < j).
    let mut tri = ModelGeometry::new(PrimitiveKind::Triangle, "T", 7);
    tri.x = vec![v(0., 0., 0.), v(1., 0., 0.), v(0., 1., 0.), v(0.2, 0.2, 0.05)];
    tri.triangles = vec![[0, 1, 2]];
    tri.self_collision = true;
    let mut pts = points("P", 7, &tri.x.clone());
    pts.self_collision = true;
    let m = TestProximity::new(0.2);
    let mut d = Detection::new();
    let out = d.run(&[tri.clone(), pts.clone()], &m, &settings(2)).unwrap();
    let keys: Vec<_> = out.iter().map(|e| (e.model1, e.model2)).collect();
    assert_eq!(keys, vec![(0, 1)]);
    assert_eq!(elems(&out[0].outputs), vec![(0, 3)]);
    assert_eq!(d.broad_pairs(), &[(0, 0), (1, 1), (1, 0)]);
}

#[test]
fn depth_zero_tetrahedra_have_no_coarse_intersector() {
    let mut te = ModelGeometry::new(PrimitiveKind::Tetrahedron, "te", 1);
    te.x = vec![v(0., 0., 0.), v(1., 0., 0.), v(0., 1., 0.), v(0., 0., 1.)];
    te.tetrahedra = vec![[0, 1, 2, 3]];
    let p = points("p", 2, &[v(0.1, 0.1, 0.1)]);
    let m = TestProximity::new(0.0);
    let mut d = Detection::new();
    let out = d.run(&[te, p], &m, &settings(0)).unwrap();
    assert!(out.is_empty());
    assert_eq!(d.broad_pairs(), &[(1, 0)]);
    assert_eq!(d.stats().narrow_pairs, 1);
    assert_eq!(d.stats().narrow.missing_coarse, 1);
    assert_eq!(d.stats().narrow.units, 0);
}

// ---------------------------------------------------------------- large scenes

/// A bumpy 60×60 surface (7,200 triangles), 1,600 spheres in a sheet crossing it, a
/// self-colliding cluster of 400 spheres and a point cloud, moved by `t`.
fn big_scene(t: f64) -> Vec<ModelGeometry> {
    let surf = surface("surf", 1, 60, 60, 0.1, 0.05);
    let mut rng = Rng(7);
    let mut sheet = Vec::new();
    for j in 0..40 {
        for i in 0..40 {
            let (x, y) = (0.15 * i as f64 + 0.05 * t.sin(), 0.15 * j as f64);
            sheet.push(v(x, y, 0.02 * (x * 3.0 + t).sin() + 0.01 * rng.next()));
        }
    }
    let sheet = spheres("sheet", 2, &sheet, 0.06);
    let cluster: Vec<Vec3> = (0..400).map(|_| v(2.0 + rng.next() + 0.1 * t.cos(), 2.0 + rng.next(), 0.5 * rng.next() - 0.1)).collect();
    let mut cluster = spheres("cluster", 3, &cluster, 0.05);
    cluster.self_collision = true;
    let cloud: Vec<Vec3> = (0..800).map(|_| v(6.0 * rng.next(), 6.0 * rng.next(), 0.2 * rng.next() - 0.1 + 0.02 * t)).collect();
    let cloud = points("cloud", 4, &cloud);
    vec![surf, sheet, cluster, cloud]
}

/// Outputs of the literal SOFA traversal for every broad pair (in the registered order of
/// its models), keeping the pairs with outputs, sorted by the map's ids.
fn reference_outputs(d: &Detection, models: &[ModelGeometry], m: &dyn crate::intersection::IntersectionMethod) -> Vec<PairOutputs> {
    use crate::intersection::PairSupport;
    let mut all: Vec<PairOutputs> = d
        .broad_pairs()
        .iter()
        .filter_map(|&(a, b)| match m.support(models[a].kind, models[b].kind) {
            PairSupport::Supported { swap } => Some(if swap { (b, a) } else { (a, b) }),
            _ => None,
        })
        .map(|(m1, m2)| PairOutputs {
            model1: m1,
            model2: m2,
            outputs: reference_pair(d.tree(m1).unwrap(), &models[m1], d.tree(m2).unwrap(), &models[m2], m1 == m2, m),
        })
        .filter(|p| !p.outputs.is_empty())
        .collect();
    let ids = d.outputs_map().ids();
    all.sort_by_key(|p| (ids.id(p.model1), ids.id(p.model2)));
    all
}

#[test]
fn parallel_equals_sequential_equals_reference_on_large_scenes() {
    let m = TestProximity::new(0.02);
    for step in 0..3 {
        let models = big_scene(step as f64 * 0.7);
        let mut base = Detection::new();
        let s = DetectionSettings { depth: 6, search_min: usize::MAX, ..Default::default() };
        let expected = base.run(&models, &m, &s).unwrap().to_vec();
        let total: usize = expected.iter().map(|e| e.outputs.len()).sum();
        assert!(expected.len() >= 4 && total > 2000, "{} pairs, {total} outputs", expected.len());
        // Every pair with outputs, and only those, in SOFA's traversal order.
        assert_eq!(reference_outputs(&base, &models, &m), expected);
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                for (search_min, parallel) in [(64, false), (64, true), (0, true), (usize::MAX, true)] {
                    let mut d = Detection::new();
                    let s = DetectionSettings { depth: 6, search_min, parallel, parallel_min_work: 1000, ..Default::default() };
                    let out = d.run(&models, &m, &s).unwrap();
                    assert_eq!(out, expected.as_slice(), "threads {threads} search {search_min}");
                    let searched = d.stats().narrow.searched_units;
                    assert_eq!(searched > 0, search_min != usize::MAX, "{searched}");
                    if parallel {
                        assert!(d.stats().narrow.parallel_chunks > 1);
                    } else {
                        assert_eq!(d.stats().narrow.parallel_chunks, 0);
                    }
                }
            });
        }
    }
}

#[test]
fn nan_positions_follow_sofas_box_tests_without_panicking() {
    // A NaN centre makes boxes SOFA's tests accept against everything; the block grids are
    // bypassed and the scan gives the reference pairs.
    let mut models: Vec<_> = big_scene(0.0).into_iter().take(2).collect();
    models[1].x[17] = v(f64::NAN, 1.0, 0.0);
    let m = TestProximity::new(0.02);
    for parallel in [false, true] {
        let mut d = Detection::new();
        let s = DetectionSettings { parallel, parallel_min_work: 0, search_min: 0, ..Default::default() };
        let out = d.run(&models, &m, &s).unwrap().to_vec();
        assert_eq!(d.stats().narrow.searched_units, 0);
        let reference = reference_outputs(&d, &models, &m);
        assert_eq!(out.len(), reference.len());
        for (a, b) in out.iter().zip(&reference) {
            assert_eq!(elems(&a.outputs), elems(&b.outputs));
        }
        // The NaN sphere's box meets the triangle boxes it is scanned against, and the test
        // method lets NaN distances through.
        let nan: Vec<_> = out[0].outputs.iter().filter(|o| o.elem.1 == 17).collect();
        assert!(!nan.is_empty() && nan.iter().all(|o| o.value.is_nan()));
    }
}

/// Every box pair the proximity box test accepts becomes an output (so outputs show exactly
/// which leaf pairs a traversal found), on point and sphere models.
struct EveryAcceptedPair(f64);

impl crate::intersection::IntersectionMethod for EveryAcceptedPair {
    fn name(&self) -> &'static str {
        "EveryAcceptedPair"
    }
    fn alarm_distance(&self) -> f64 {
        self.0
    }
    fn contact_distance(&self) -> f64 {
        0.0
    }
    fn boxes_overlap(&self, a: &Aabb, ga: &ModelGeometry, b: &Aabb, gb: &ModelGeometry, same_box: bool) -> bool {
        TestProximity::new(self.0).boxes_overlap(a, ga, b, gb, same_box)
    }
    fn support(&self, _: PrimitiveKind, _: PrimitiveKind) -> crate::intersection::PairSupport {
        crate::intersection::PairSupport::Supported { swap: false }
    }
    fn intersect(&self, _: &ModelGeometry, e1: usize, _: &ModelGeometry, e2: usize, out: &mut Vec<crate::output::DetectionOutput>) -> usize {
        out.push(crate::output::DetectionOutput { elem: (e1, e2), id: 0, point: [Vec3::zeros(); 2], normal: Vec3::zeros(), value: 0.0 });
        1
    }
}

#[test]
fn the_block_grids_find_every_pair_the_box_test_accepts() {
    // Layouts where a grid could lose pairs: lattices whose spacing equals the alarm distance
    // (pairs exactly at the box test's boundary, decided by rounding), far from the origin
    // (rounding of 1e7 + 0.1·i), boxes of sizes spread over four orders of magnitude (one
    // huge sphere), zero-size boxes (points, no contact distance), a flat layer, and self
    // collision. The grid search must give the scan's outputs, pair for pair, also when the
    // first model does not move (its grids are kept) while the second does.
    let mut rng = Rng(11);
    let mut layouts: Vec<(f64, Vec<ModelGeometry>)> = Vec::new();
    for offset in [0.0, 1e7] {
        let lattice = |shift: f64| -> Vec<Vec3> {
            let mut p = Vec::new();
            for i in 0..30 {
                for j in 0..30 {
                    p.push(v(offset + 0.1 * i as f64 + shift, offset + 0.1 * j as f64, 0.0));
                }
            }
            p
        };
        let a = points("a", 1, &lattice(0.0));
        let b = points("b", 2, &lattice(0.05));
        layouts.push((0.1, vec![a, b]));
    }
    let mut sizes = spheres("sizes", 1, &(0..600).map(|_| v(4.0 * rng.next(), 4.0 * rng.next(), 0.4 * rng.next())).collect::<Vec<_>>(), 0.01);
    for (k, r) in sizes.radius.iter_mut().enumerate() {
        *r = if k == 17 { 1.5 } else { 0.001 + 0.1 * rng.next() };
    }
    let mut flat = spheres("flat", 2, &(0..500).map(|_| v(4.0 * rng.next(), 4.0 * rng.next(), 0.0)).collect::<Vec<_>>(), 0.05);
    flat.self_collision = true;
    layouts.push((0.02, vec![sizes, flat]));
    for (alarm, models) in &layouts {
        let m = EveryAcceptedPair(*alarm);
        for depth in [0, 2, 4] {
            let mut scan = Detection::new();
            let s = DetectionSettings { depth, search_min: usize::MAX, ..Default::default() };
            let expected = scan.run(models, &m, &s).unwrap().to_vec();
            assert_eq!(reference_outputs(&scan, models, &m), expected);
            let total: usize = expected.iter().map(|e| e.outputs.len()).sum();
            assert!(total > 1000, "depth {depth}: {total} pairs");
            for parallel in [false, true] {
                let mut d = Detection::new();
                let s = DetectionSettings { depth, search_min: 0, parallel, parallel_min_work: 0, ..Default::default() };
                assert_eq!(d.run(models, &m, &s).unwrap(), expected.as_slice());
                assert!(d.stats().narrow.searched_units > 0);
                let mut moved = models.clone();
                moved[0].moving = false;
                for p in &mut moved[1].x {
                    p[0] += 0.013;
                    p[1] -= 0.007;
                }
                let expected = Detection::new().run(&moved, &m, &DetectionSettings { depth, search_min: usize::MAX, ..s.clone() }).unwrap().to_vec();
                assert_eq!(d.run(&moved, &m, &s).unwrap(), expected.as_slice());
                assert_eq!((d.stats().trees_skipped, d.stats().trees_refitted), (1, 1));
            }
        }
    }
}

#[test]
fn one_huge_pair_is_split_across_threads() {
    // Depth 0: the whole pair is a single 7,200 × 1,600 leaf block, split by rows.
    let models: Vec<_> = big_scene(0.3).into_iter().take(2).collect();
    let m = TestProximity::new(0.02);
    let mut seq = Detection::new();
    let s = DetectionSettings { depth: 0, ..Default::default() };
    let expected = seq.run(&models, &m, &s).unwrap().to_vec();
    assert_eq!(seq.stats().narrow.units, 1);
    assert_eq!(seq.stats().narrow.searched_units, 1);
    assert_eq!(seq.stats().narrow.row_searches, 0);
    assert_eq!(expected.len(), 1);
    assert!(expected[0].outputs.len() > 1000);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| {
        let mut d = Detection::new();
        let s = DetectionSettings { depth: 0, parallel: true, parallel_min_work: 10_000, ..Default::default() };
        assert_eq!(d.run(&models, &m, &s).unwrap(), expected.as_slice());
        assert!(d.stats().narrow.parallel_chunks >= 8);
        // Row ranges of the one unit, each searched row by row.
        assert_eq!(d.stats().narrow.row_searches, d.stats().narrow.searched_units);
        assert!(d.stats().narrow.row_searches >= 8);
    });
}

#[test]
fn memory_stays_flat_over_ten_thousand_steps() {
    // Periodic motion (period 97 steps, positions from a table, so each period repeats
    // exactly): after the first periods no buffer may grow.
    let base = big_scene(0.0);
    let mut models: Vec<ModelGeometry> = base
        .iter()
        .map(|g| {
            let mut g = g.clone();
            g.x.truncate(g.x.len().min(300));
            g.radius.truncate(g.x.len());
            if g.kind == PrimitiveKind::Triangle {
                g.triangles.retain(|t| t.iter().all(|&i| i < 300));
            }
            g
        })
        .collect();
    let period = 97;
    let table: Vec<f64> = (0..period).map(|k| (k as f64 * std::f64::consts::TAU / period as f64).sin()).collect();
    let m = TestProximity::new(0.02);
    let mut d = Detection::new();
    let s = DetectionSettings { parallel: true, parallel_min_work: 500, ..Default::default() };
    let mut cap_after_warmup = 0;
    let mut outputs_seen = std::collections::BTreeSet::new();
    for step in 0..10_000 {
        let a = table[step % period];
        for (g, b) in models.iter_mut().zip(&base) {
            for (p, q) in g.x.iter_mut().zip(&b.x) {
                *p = q + v(0.3 * a, 0.1 * a, 0.05 * a);
            }
        }
        // Keep the surface still so contacts come and go.
        let n0 = models[0].x.len();
        models[0].x.copy_from_slice(&base[0].x[..n0]);
        let out = d.run(&models, &m, &s).unwrap();
        outputs_seen.insert(out.iter().map(|e| e.outputs.len()).sum::<usize>());
        if step == 3 * period {
            cap_after_warmup = d.capacity();
        }
    }
    assert!(outputs_seen.len() > 10, "contacts should vary: {outputs_seen:?}");
    assert_eq!(d.capacity(), cap_after_warmup);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn scene(seed: u64, n1: usize, n2: usize, self_coll: bool) -> Vec<ModelGeometry> {
        let mut rng = Rng(seed);
        let mut cloud = |n: usize, s: f64| -> Vec<Vec3> { (0..n).map(|_| v(s * rng.next(), s * rng.next(), 0.3 * s * rng.next())).collect() };
        let a = cloud(n1, 3.0);
        let b = cloud(n2, 3.0);
        let centres = cloud(n2 / 2 + 1, 3.0);
        let jitter = cloud(3 * centres.len(), 0.4);
        let mut a = spheres("a", 1, &a, 0.15);
        a.self_collision = self_coll;
        a.contact_distance = 0.01;
        let b = spheres("b", 2, &b, 0.1);
        // A triangle soup: three jittered corners around each centre.
        let mut c = ModelGeometry::new(PrimitiveKind::Triangle, "c", 3);
        for (k, p) in centres.iter().enumerate() {
            for q in &jitter[3 * k..3 * k + 3] {
                c.x.push(p + q);
            }
            c.triangles.push([3 * k, 3 * k + 1, 3 * k + 2]);
        }
        c.contact_distance = 0.05;
        vec![a, b, c]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn any_settings_give_the_reference_outputs(
            seed in 0u64..1000,
            n1 in 1usize..120,
            n2 in 1usize..120,
            depth in 0u32..6,
            self_coll in any::<bool>(),
            discrete in any::<bool>(),
        ) {
            let models = scene(seed, n1, n2, self_coll);
            let m = TestProximity { alarm: 0.05, discrete_boxes: discrete };
            let mut base = Detection::new();
            let s = DetectionSettings { depth, search_min: usize::MAX, ..Default::default() };
            let expected = base.run(&models, &m, &s).unwrap().to_vec();
            prop_assert_eq!(reference_outputs(&base, &models, &m), expected.clone());
            for (search_min, parallel) in [(0, false), (0, true), (16, true)] {
                let mut d = Detection::new();
                let s = DetectionSettings {
                    depth, search_min, parallel, parallel_min_work: 0, ..Default::default()
                };
                prop_assert_eq!(d.run(&models, &m, &s).unwrap(), expected.as_slice());
            }
        }
    }
}
