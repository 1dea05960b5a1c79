//! Known-answer tests of the constraint laws (lagrangian-constraints spec §5): rows, violations
//! and resolutions on tiny hand-made states, through the core stages a solver calls
//! (`build_constraint_matrix`, `constraint_violation`, `collect_resolutions`,
//! `store_law_lambdas`).

use settee_core::constraint::{
    build_constraint_matrix, collect_resolutions, constraint_violation, store_law_lambdas, ConstraintBuildIo, ConstraintLaw, ConstraintOrder,
    ConstraintParams, ConstraintProblem, DenseMatrix, ViolationIo,
};
use settee_core::simulation::init_root;
use settee_core::testing::add;
use settee_core::{ComponentId, ConstraintRows, Factory, NodeId, Scene, StateId, VecId};

fn factory() -> Factory {
    settee_statecontainer::factory_with(&[settee_constraint::register])
}

fn cp(order: ConstraintOrder, dt: f64) -> ConstraintParams {
    ConstraintParams { x: VecId::FREE_POSITION, v: VecId::FREE_VELOCITY, dx: VecId::DX, lambda: VecId::DFORCE, order, dt, time: 0.0 }
}

fn pos_cp() -> ConstraintParams {
    cp(ConstraintOrder::PosAndVel, 0.01)
}

/// The store id of a MechanicalObject component.
fn state(s: &Scene, c: ComponentId) -> StateId {
    s.state_of(c).expect("a mechanical state")
}

fn set(s: &mut Scene, st: StateId, id: VecId, v: &[f64]) {
    s.store.get_mut(st).set_vec(id, v.to_vec());
}

type Attrs<'a> = &'a [(&'a str, &'a str)];

/// A scene with two child nodes of the root, `A` and `B`.
fn scene_ab() -> (Scene, NodeId, NodeId) {
    let mut s = Scene::new("root");
    let a = s.add_node(Scene::ROOT, "A");
    let b = s.add_node(Scene::ROOT, "B");
    (s, a, b)
}

/// A scene with one MechanicalObject (`mo`) and one law (`class`, `law`) at the root,
/// initialised; returns the scene, the law and the store id of the state.
fn one_state(f: &Factory, mo: Attrs, class: &str, law: Attrs) -> (Scene, ComponentId, StateId) {
    let mut s = Scene::new("root");
    let m = add(&mut s, f, Scene::ROOT, "MechanicalObject", mo);
    let law = add(&mut s, f, Scene::ROOT, class, law);
    let [st] = init_states(&mut s, f, [m]);
    (s, law, st)
}

/// Two child nodes of the root named `nodes`, each with a MechanicalObject named `name` (then
/// the attributes `mos`), and a law of `class` at the root between them (`object1` and
/// `object2` set, then the attributes `law`). Returns the scene, the law and the two
/// MechanicalObjects, before init.
fn pair_scene(f: &Factory, nodes: [&str; 2], name: &str, mos: [Attrs; 2], class: &str, law: Attrs) -> (Scene, ComponentId, [ComponentId; 2]) {
    let mut s = Scene::new("root");
    let [a, b] = nodes.map(|n| s.add_node(Scene::ROOT, n));
    let mut object = |node, attrs: Attrs| {
        let all: Vec<(&str, &str)> = [("name", name)].into_iter().chain(attrs.iter().copied()).collect();
        add(&mut s, f, node, "MechanicalObject", &all)
    };
    let objects = [object(a, mos[0]), object(b, mos[1])];
    let links = nodes.map(|n| format!("@{n}/{name}"));
    let all: Vec<(&str, &str)> = [("object1", links[0].as_str()), ("object2", links[1].as_str())].into_iter().chain(law.iter().copied()).collect();
    let law = add(&mut s, f, Scene::ROOT, class, &all);
    (s, law, objects)
}

/// Nodes `A` and `B` of the root, each with a MechanicalObject (attributes `mos[k]`) and a law of
/// `class` (attributes `laws[k]`), initialised; returns the scene and the two states.
fn laws_in_ab(f: &Factory, class: &str, mos: [Attrs; 2], laws: [Attrs; 2]) -> (Scene, [StateId; 2]) {
    let (mut s, a, b) = scene_ab();
    let mut objects = Vec::new();
    for ((node, mo), law) in [a, b].into_iter().zip(mos).zip(laws) {
        objects.push(add(&mut s, f, node, "MechanicalObject", mo));
        add(&mut s, f, node, class, law);
    }
    let states = init_states(&mut s, f, [objects[0], objects[1]]);
    (s, states)
}

/// Initialises the scene and returns the store ids of the MechanicalObjects `mos`.
fn init_states<const N: usize>(s: &mut Scene, f: &Factory, mos: [ComponentId; N]) -> [StateId; N] {
    init_root(s, f).unwrap();
    mos.map(|m| state(s, m))
}

/// Sets the free positions of `st` to its current positions.
fn free_at_current(s: &mut Scene, st: StateId) {
    let x = s.store.get(st).read(VecId::POSITION).to_vec();
    set(s, st, VecId::FREE_POSITION, &x);
}

/// `v` on the diagonal of an `n`×`n` matrix, zero elsewhere.
fn diag(n: usize, v: f64) -> DenseMatrix {
    DenseMatrix { n, data: (0..n * n).map(|k| if k % (n + 1) == 0 { v } else { 0.0 }).collect() }
}

/// The multipliers written by every resolution's `init` (the warm start).
fn warm_start(pb: &mut ConstraintProblem, w: &DenseMatrix) -> Vec<f64> {
    let mut l = vec![0.0; w.n];
    for (line, _) in pb.blocks() {
        pb.resolutions[line].as_mut().unwrap().init(line, w, &mut l);
    }
    l
}

/// Builds the rows of a law between two states with 3-real derivatives at `x`, from row
/// `first_row`; returns the row count and the rows of both states.
fn build_rows(law: &mut impl ConstraintLaw, c: &ConstraintParams, x: [&[f64]; 2], first_row: usize) -> (usize, [ConstraintRows; 2]) {
    let (mut r1, mut r2) = (ConstraintRows::new(3), ConstraintRows::new(3));
    let n = law
        .build_constraint_matrix(c, &mut ConstraintBuildIo { x: x.into_iter().collect(), rows: [&mut r1, &mut r2].into_iter().collect() }, first_row)
        .unwrap();
    (n, [r1, r2])
}

/// The violation of a law at positions `x` and velocities `v` of its two states, written over `d`.
fn violation(law: &mut impl ConstraintLaw, c: &ConstraintParams, x: [&[f64]; 2], v: [&[f64]; 2], rows: &[ConstraintRows; 2], d: &mut [f64]) {
    law.constraint_violation(c, &ViolationIo { x: x.into_iter().collect(), v: v.into_iter().collect(), rows: rows.iter().collect() }, d).unwrap();
}

/// A row of a state as `(dof, block)` pairs.
type Row = Vec<(usize, Vec<f64>)>;

fn rows_of(s: &Scene, st: StateId) -> Vec<(usize, Row)> {
    s.store.get(st).constraint.rows().map(|(r, e)| (r, e.map(|(d, b)| (d, b.to_vec())).collect())).collect()
}

/// Builds the rows, the violation and the resolutions of every law of the scene as a solver
/// does; returns the problem (its `dfree`, `resolutions`, `laws`).
fn pose(s: &mut Scene, cp: &ConstraintParams) -> ConstraintProblem {
    let mut pb = ConstraintProblem::default();
    let mut laws = Vec::new();
    let n = build_constraint_matrix(s, cp, &mut laws).unwrap();
    pb.clear(n);
    pb.laws = laws;
    let mut dfree = vec![0.0; n];
    constraint_violation(s, cp, &pb.laws, &mut dfree).unwrap();
    pb.dfree = dfree;
    collect_resolutions(s, cp, &mut pb).unwrap();
    // The resolutions cover every row exactly.
    assert_eq!(pb.blocks().iter().map(|b| b.1).sum::<usize>(), n);
    pb
}

/// Block starts and line counts of the problem's resolutions.
fn blocks(pb: &ConstraintProblem) -> Vec<(usize, usize)> {
    pb.blocks()
}

fn unit(ds: usize, j: usize) -> Vec<f64> {
    let mut e = vec![0.0; ds];
    e[j] = 1.0;
    e
}

fn close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= tol, "entry {i}: {x} vs {y} ({a:?} vs {b:?})");
    }
}

/// Quaternion `x y z w` of a rotation of `angle` about a unit `axis`.
fn axis_angle(axis: [f64; 3], angle: f64) -> [f64; 4] {
    let (s, c) = (angle / 2.0).sin_cos();
    [axis[0] * s, axis[1] * s, axis[2] * s, c]
}

fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    settee_core::types::quat_mul(a, b)
}

// ---------------------------------------------------------------------------------------------
// FixedLagrangianConstraint

/// Two laws on two Vec3 states: `indices="0 2"` on a 3-point state (rows 0–5) and `fixAll` on
/// a 1-point state (rows 6–8). Each fixed point gets three unit rows; the violation is
/// `x_free − x_rest`; each point is one warm-started 3-line block.
#[test]
fn fixed_vec3_rows_violation_and_blocks() {
    let f = factory();
    let mos: [Attrs; 2] = [&[("position", "0 0 0  1 0 0  2 0 0"), ("rest_position", "0 0.5 0  1 0 0  2 1 -1")], &[("position", "5 5 5")]];
    let (mut s, [sa, sb]) = laws_in_ab(&f, "FixedLagrangianConstraint", mos, [&[("indices", "0 2")], &[("fixAll", "true")]]);
    set(&mut s, sa, VecId::FREE_POSITION, &[0.1, 0.2, 0.3, 9.0, 9.0, 9.0, 2.5, 1.25, -0.5]);
    set(&mut s, sb, VecId::FREE_POSITION, &[5.0, 4.0, 7.5]);

    let pb = pose(&mut s, &pos_cp());
    assert_eq!(pb.n, 9);
    let expect_a: Vec<(usize, Row)> = (0..6).map(|r| (r, vec![(if r < 3 { 0 } else { 2 }, unit(3, r % 3))])).collect();
    assert_eq!(rows_of(&s, sa), expect_a);
    let expect_b: Vec<(usize, Row)> = (0..3).map(|j| (6 + j, vec![(0, unit(3, j))])).collect();
    assert_eq!(rows_of(&s, sb), expect_b);
    // x_free − x_rest (rest of B defaults to its position).
    close(&pb.dfree, &[0.1, 0.2 - 0.5, 0.3, 0.5, 0.25, 0.5, 0.0, -1.0, 2.5], 0.0);
    assert_eq!(blocks(&pb), vec![(0, 3), (3, 3), (6, 3)]);
}

/// The multipliers stored after a solve are written back by the next solve's `init` (SOFA's
/// `m_prevForces`), per fixed point.
#[test]
fn fixed_vec3_warm_starts_from_stored_multipliers() {
    let f = factory();
    let (mut s, _, st) = one_state(&f, &[("position", "0 0 0  1 0 0")], "FixedLagrangianConstraint", &[("indices", "1 0")]);
    set(&mut s, st, VecId::FREE_POSITION, &[0.0, -1.0, 0.0, 1.0, 0.0, 2.0]);
    let c = pos_cp();
    let pb = pose(&mut s, &c);
    // Row order follows `indices`: DOF 1 first.
    assert_eq!(rows_of(&s, st)[0], (0, vec![(1, unit(3, 0))]));
    close(&pb.dfree, &[0.0, 0.0, 2.0, 0.0, -1.0, 0.0], 0.0);
    let lambda = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    store_law_lambdas(&mut s, &c, &pb.laws, &lambda, true).unwrap();

    let mut pb = pose(&mut s, &c);
    let w = diag(6, 2.0);
    let mut l = warm_start(&mut pb, &w);
    assert_eq!(l, lambda);
    // One Gauss-Seidel update of the first block with W = 2·I: λ −= d/2.
    let mut d = vec![2.0, -4.0, 6.0, 0.0, 0.0, 0.0];
    let dfree = d.clone();
    pb.resolutions[0].as_mut().unwrap().resolution(0, &w, &mut d, &mut l, &dfree);
    assert_eq!(&l[..3], &[0.0, 4.0, 0.0]);
}

/// Rigid3: six unit rows per DOF (translation then rotation) and the violation
/// `(c_free − c_rest, toEulerVector(q_free·q_rest⁻¹))`; two 3-line blocks per DOF.
#[test]
fn fixed_rigid3_rows_and_euler_violation() {
    let f = factory();
    let qr = axis_angle([0.0, 0.0, 1.0], std::f64::consts::FRAC_PI_2);
    let rest = format!("1 2 3 {} {} {} {}", qr[0], qr[1], qr[2], qr[3]);
    let mo = [("template", "Rigid3d"), ("position", &rest), ("rest_position", &rest)];
    let (mut s, law, st) = one_state(&f, &mo, "FixedLagrangianConstraint", &[("indices", "0")]);
    assert_eq!(s.entry(law).template, "Rigid3d");
    // Free pose: translated by (0.5, 0, −0.5) and turned by 0.2 rad about x (world frame).
    let q = qmul(axis_angle([1.0, 0.0, 0.0], 0.2), qr);
    set(&mut s, st, VecId::FREE_POSITION, &[1.5, 2.0, 2.5, q[0], q[1], q[2], q[3]]);
    let pb = pose(&mut s, &pos_cp());
    assert_eq!(pb.n, 6);
    let expect: Vec<(usize, Row)> = (0..6).map(|r| (r, vec![(0, unit(6, r))])).collect();
    assert_eq!(rows_of(&s, st), expect);
    close(&pb.dfree, &[0.5, 0.0, -0.5, 0.2, 0.0, 0.0], 1e-15);
    assert_eq!(blocks(&pb), vec![(0, 3), (3, 3)]);

    // Warm start: the translation and rotation halves of the stored multipliers.
    let c = pos_cp();
    store_law_lambdas(&mut s, &c, &pb.laws, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], true).unwrap();
    let mut pb = pose(&mut s, &c);
    assert_eq!(warm_start(&mut pb, &diag(6, 1.0)), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

/// Vec1 and Vec2 give one N-line block per DOF (no warm start).
#[test]
fn fixed_vec1_and_vec2_blocks() {
    let f = factory();
    let mos: [Attrs; 2] = [&[("template", "Vec1d"), ("position", "1 2 3")], &[("template", "Vec2d"), ("position", "1 2  3 4")]];
    let (mut s, [s1, s2]) = laws_in_ab(&f, "FixedLagrangianConstraint", mos, [&[("indices", "2 0")], &[("fixAll", "1")]]);
    set(&mut s, s1, VecId::FREE_POSITION, &[1.5, 2.0, 2.0]);
    set(&mut s, s2, VecId::FREE_POSITION, &[0.0, 2.0, 3.0, 5.0]);
    let pb = pose(&mut s, &pos_cp());
    assert_eq!(rows_of(&s, s1), vec![(0, vec![(2, vec![1.0])]), (1, vec![(0, vec![1.0])])]);
    assert_eq!(rows_of(&s, s2)[3], (5, vec![(1, vec![0.0, 1.0])]));
    close(&pb.dfree, &[-1.0, 0.5, -1.0, 0.0, 0.0, 1.0], 0.0);
    assert_eq!(blocks(&pb), vec![(0, 1), (1, 1), (2, 2), (4, 2)]);
}

/// An index beyond the state is refused at init with a message, not a panic.
#[test]
fn fixed_rejects_out_of_range_index() {
    let f = factory();
    let mut s = Scene::new("root");
    add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0")]);
    add(&mut s, &f, Scene::ROOT, "FixedLagrangianConstraint", &[("indices", "3")]);
    let e = init_root(&mut s, &f).unwrap_err();
    assert!(e.to_string().contains("beyond"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// BilateralLagrangianConstraint

/// Two Vec3 states in child nodes, the law at the root (as the example scenes write it):
/// `first_point="2 0"`, `second_point="1 0 1"` (two pairs: the shorter list counts),
/// `rest_vector` for the first pair only. Rows: object 1 `−e_j`, object 2 `+e_j`; violation
/// `x₂f − x₁f − rest`; one 3-line block per pair.
#[test]
fn bilateral_vec3_rows_violation_and_blocks() {
    let f = factory();
    let mos: [Attrs; 2] = [&[("position", "0 0 0  1 0 0  2 0 0")], &[("position", "0 1 0  1 1 0")]];
    let attrs = [("template", "Vec3"), ("first_point", "2 0"), ("second_point", "1 0 1"), ("rest_vector", "0.5 0 0")];
    let (mut s, law, mos) = pair_scene(&f, ["A", "B"], "mstate", mos, "BilateralLagrangianConstraint", &attrs);
    assert_eq!(s.entry(law).template, "Vec3d");
    let [sa, sb] = init_states(&mut s, &f, mos);
    set(&mut s, sa, VecId::FREE_POSITION, &[0.0, 0.0, 0.25, 9.0, 9.0, 9.0, 2.0, 0.5, 0.0]);
    set(&mut s, sb, VecId::FREE_POSITION, &[-1.0, 2.0, 0.5, 3.0, 1.0, 0.0]);
    let pb = pose(&mut s, &pos_cp());
    assert_eq!(pb.n, 6);
    let neg = |j: usize| unit(3, j).iter().map(|v| -v).collect::<Vec<f64>>();
    let ra: Vec<(usize, Row)> = (0..6).map(|r| (r, vec![(if r < 3 { 2 } else { 0 }, neg(r % 3))])).collect();
    let rb: Vec<(usize, Row)> = (0..6).map(|r| (r, vec![(if r < 3 { 1 } else { 0 }, unit(3, r % 3))])).collect();
    assert_eq!(rows_of(&s, sa), ra);
    assert_eq!(rows_of(&s, sb), rb);
    // Pair 0: x_B[1] − x_A[2] − (0.5, 0, 0) = (3−2−0.5, 1−0.5, 0); pair 1: x_B[0] − x_A[0].
    close(&pb.dfree, &[0.5, 0.5, 0.0, -1.0, 2.0, 0.25], 0.0);
    assert_eq!(blocks(&pb), vec![(0, 3), (3, 3)]);
}

/// Both objects on one state: the first row of a pair is added (−e_x + e_x on a shared DOF
/// cancels), the two others are set (the object-2 entry overwrites the object-1 entry).
#[test]
fn bilateral_vec3_on_one_state_adds_then_sets() {
    let f = factory();
    let law = [("first_point", "0 1"), ("second_point", "1 1")];
    let (mut s, _, st) = one_state(&f, &[("position", "0 0 0  1 2 3")], "BilateralLagrangianConstraint", &law);
    set(&mut s, st, VecId::FREE_POSITION, &[0.5, 0.0, 0.0, 1.0, 2.0, 4.0]);
    let pb = pose(&mut s, &pos_cp());
    let rows = rows_of(&s, st);
    assert_eq!(rows[0], (0, vec![(0, vec![-1.0, 0.0, 0.0]), (1, vec![1.0, 0.0, 0.0])]));
    assert_eq!(rows[1], (1, vec![(0, vec![0.0, -1.0, 0.0]), (1, vec![0.0, 1.0, 0.0])]));
    assert_eq!(rows[3], (3, vec![(1, vec![0.0, 0.0, 0.0])]));
    assert_eq!(rows[4], (4, vec![(1, vec![0.0, 1.0, 0.0])]));
    assert_eq!(rows[5], (5, vec![(1, vec![0.0, 0.0, 1.0])]));
    close(&pb.dfree, &[0.5, 2.0, 4.0, 0.0, 0.0, 0.0], 0.0);
}

/// VEL order: `(v₂f − v₁f) + ((x₂ − x₁) + rest)/dt` with the current positions (SOFA's sign of
/// the rest vector there is the opposite of the position violation's).
#[test]
fn bilateral_vec3_velocity_violation() {
    let f = factory();
    let mos: [Attrs; 2] = [&[("position", "1 0 0")], &[("position", "1 0.5 0")]];
    let attrs = [("first_point", "0"), ("second_point", "0"), ("rest_vector", "0 0.25 1")];
    let (mut s, _, mos) = pair_scene(&f, ["A", "B"], "m", mos, "BilateralLagrangianConstraint", &attrs);
    let [sa, sb] = init_states(&mut s, &f, mos);
    for (st, v) in [(sa, [0.0, 0.0, 0.0]), (sb, [2.0, -1.0, 0.5])] {
        set(&mut s, st, VecId::FREE_POSITION, &[7.0, 7.0, 7.0]);
        set(&mut s, st, VecId::FREE_VELOCITY, &v);
    }
    let pb = pose(&mut s, &cp(ConstraintOrder::Vel, 0.5));
    // dpos = (0, 0.5, 0) + (0, 0.25, 1) = (0, 0.75, 1), ·(1/0.5) = (0, 1.5, 2).
    close(&pb.dfree, &[2.0, 0.5, 2.5], 0.0);
}

/// Warm start and load: the next solve's `init` writes the stored multipliers, and an update
/// is scaled by `load`; `activate="false"` removes every row.
#[test]
fn bilateral_vec3_warm_start_load_and_activate() {
    let f = factory();
    let attrs = [("first_point", "0"), ("second_point", "1"), ("load", "0.5")];
    let (mut s, law, st) = one_state(&f, &[("position", "0 0 0  1 0 0")], "BilateralLagrangianConstraint", &attrs);
    set(&mut s, st, VecId::FREE_POSITION, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
    let c = pos_cp();
    let pb = pose(&mut s, &c);
    store_law_lambdas(&mut s, &c, &pb.laws, &[0.1, 0.2, 0.3], true).unwrap();
    let mut pb = pose(&mut s, &c);
    let w = DenseMatrix { n: 3, data: vec![4.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0] };
    let mut l = vec![0.0; 3];
    let r = pb.resolutions[0].as_mut().unwrap();
    r.init(0, &w, &mut l);
    assert_eq!(l, [0.1, 0.2, 0.3]);
    let mut d = vec![4.0, 2.0, 1.0];
    let dfree = d.clone();
    r.resolution(0, &w, &mut d, &mut l, &dfree);
    // λ −= load·W⁻¹·d = 0.5·(1, 1, 1).
    close(&l, &[0.1 - 0.5, 0.2 - 0.5, 0.3 - 0.5], 1e-16);

    s.components[law].data.put(settee_constraint::laws::BilateralLagrangianConstraint::ACTIVATE, false);
    let mut live = s.components[law].obj.take().unwrap();
    {
        let mut cx = settee_core::InitCtx { scene: &mut s, id: law };
        live.data_changed(&mut cx).unwrap();
    }
    s.components[law].obj = Some(live);
    let pb = pose(&mut s, &c);
    assert_eq!(pb.n, 0);
    assert!(rows_of(&s, st).is_empty());
}

/// Rigid3: six rows per pair (translation then rotation, object 1 negative); the violation is
/// `(c₂ − c₁, q₁·rotvec(q₁⁻¹·q₂))`, the rotation from 1 to 2 in the world frame, here 0.2 rad
/// about x; two 3-line blocks per pair.
#[test]
fn bilateral_rigid3_rows_and_world_rotation_violation() {
    let f = factory();
    let q1 = axis_angle([0.0, 0.0, 1.0], 0.3);
    let q2 = qmul(axis_angle([1.0, 0.0, 0.0], 0.2), q1);
    let pose1 = format!("1 0 0 {} {} {} {}", q1[0], q1[1], q1[2], q1[3]);
    let pose2 = format!("1.5 1 -1 {} {} {} {}", q2[0], q2[1], q2[2], q2[3]);
    let mos: [Attrs; 2] = [&[("template", "Rigid3"), ("position", &pose1)], &[("template", "Rigid3"), ("position", &pose2)]];
    let attrs = [("template", "Rigid3"), ("first_point", "0"), ("second_point", "0"), ("rest_vector", "0 1 0 0 0 0.05")];
    let (mut s, law, mos) = pair_scene(&f, ["A", "B"], "m", mos, "BilateralLagrangianConstraint", &attrs);
    assert_eq!(s.entry(law).template, "Rigid3d");
    let [sa, sb] = init_states(&mut s, &f, mos);
    free_at_current(&mut s, sa);
    free_at_current(&mut s, sb);
    let pb = pose(&mut s, &pos_cp());
    assert_eq!(pb.n, 6);
    let ra: Vec<(usize, Row)> = (0..6).map(|r| (r, vec![(0, unit(6, r).iter().map(|v| -v).collect())])).collect();
    let rb: Vec<(usize, Row)> = (0..6).map(|r| (r, vec![(0, unit(6, r))])).collect();
    assert_eq!(rows_of(&s, sa), ra);
    assert_eq!(rows_of(&s, sb), rb);
    close(&pb.dfree, &[0.5, 0.0, -1.0, 0.2, 0.0, -0.05], 1e-15);
    assert_eq!(blocks(&pb), vec![(0, 3), (3, 3)]);
}

/// Rigid3 `keepOrientationDifference`: the offset and relative orientation at `bwd_init` are
/// kept (rest_vector is ignored): zero violation at the initial poses, then a 0.1 rad turn of
/// object 2 about z appears as (0, 0, 0.1) in the rotation rows.
#[test]
fn bilateral_rigid3_keeps_initial_orientation_difference() {
    let f = factory();
    let q1 = axis_angle([0.0, 1.0, 0.0], 0.7);
    let q2 = axis_angle([1.0, 0.0, 0.0], -0.4);
    let pose1 = format!("0 0 0 {} {} {} {}", q1[0], q1[1], q1[2], q1[3]);
    let pose2 = format!("2 0 1 {} {} {} {}", q2[0], q2[1], q2[2], q2[3]);
    let mos: [Attrs; 2] = [&[("template", "Rigid3d"), ("position", &pose1)], &[("template", "Rigid3d"), ("position", &pose2)]];
    let attrs =
        [("template", "Rigid3d"), ("first_point", "0"), ("second_point", "0"), ("keepOrientationDifference", "true"), ("rest_vector", "9 9 9 9 9 9")];
    let (mut s, _, mos) = pair_scene(&f, ["A", "B"], "m", mos, "BilateralLagrangianConstraint", &attrs);
    let [sa, sb] = init_states(&mut s, &f, mos);
    assert!(s.messages.iter().any(|m| m.message.contains("rest_vector will be ignored")));
    free_at_current(&mut s, sa);
    free_at_current(&mut s, sb);
    let pb = pose(&mut s, &pos_cp());
    close(&pb.dfree, &[0.0; 6], 1e-15);
    let q2b = qmul(axis_angle([0.0, 0.0, 1.0], 0.1), q2);
    set(&mut s, sb, VecId::FREE_POSITION, &[2.0, 0.5, 1.0, q2b[0], q2b[1], q2b[2], q2b[3]]);
    let pb = pose(&mut s, &pos_cp());
    close(&pb.dfree, &[0.0, 0.5, 0.0, 0.0, 0.0, 0.1], 1e-15);
}

/// Programmatic pairs (SOFA's `addContact`, used by stick contacts): the rest offset is
/// `Q − P` with `P = x₂[m2]`, `Q = x₁[m1]`, so the violation at those positions is `2·(x₂ − x₁)`
/// (SOFA's sign); rows are numbered from the given first row.
#[test]
fn bilateral_add_contact_rest_is_q_minus_p() {
    use settee_constraint::laws::BilateralLagrangianConstraint;
    use settee_core::Layout;
    let (s1, s2) = (StateId::first_in_slot(0), StateId::first_in_slot(1));
    let mut law = BilateralLagrangianConstraint::new(Layout::Vec3, s1, s2).unwrap();
    let x1 = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    let x2 = [3.0, 2.0, 1.0];
    law.add_contact(1, 0, &x2[0..3], &x1[3..6]).unwrap();
    assert!(law.add_contact(0, 0, &x2[0..2], &x1[0..3]).is_err());
    let c = pos_cp();
    let (n, rows) = build_rows(&mut law, &c, [&x1, &x2], 10);
    assert_eq!(n, 3);
    assert_eq!(rows[0].rows().map(|(r, _)| r).collect::<Vec<_>>(), vec![10, 11, 12]);
    let mut d = [7.0; 3];
    violation(&mut law, &c, [&x1, &x2], [&[0.0; 6], &[0.0; 3]], &rows, &mut d);
    // rest = q − p = x1[1] − x2[0]; violation = x2[0] − x1[1] − rest = −2·rest.
    close(&d, &[4.0, 2.0, 0.0], 0.0);
    let mut res = Vec::new();
    law.resolutions(&c, &mut res);
    assert_eq!(res.iter().map(|r| r.nb_lines()).sum::<usize>(), n);
}

// ---------------------------------------------------------------------------------------------
// UniformLagrangianConstraint

/// Vec1, three DOFs: one unit row per DOF; violation `x_free` (POS) and `v_free + x/dt` (VEL,
/// current positions); `iterative` gives three 1-line blocks, otherwise one 3-line block.
#[test]
fn uniform_vec1_rows_violations_and_blocks() {
    let f = factory();
    let (mut s, a, b) = scene_ab();
    let m1 = add(&mut s, &f, a, "MechanicalObject", &[("template", "Vec1"), ("position", "0.1 -0.2 0.3")]);
    let law = add(&mut s, &f, a, "UniformLagrangianConstraint", &[("template", "Vec1")]);
    assert_eq!(s.entry(law).template, "Vec1d");
    let m2 = add(&mut s, &f, b, "MechanicalObject", &[("template", "Vec1"), ("position", "1 2"), ("rest_position", "0.5 0.25")]);
    add(&mut s, &f, b, "UniformLagrangianConstraint", &[("iterative", "false"), ("constrainToRestPos", "true")]);
    let [s1, s2] = init_states(&mut s, &f, [m1, m2]);
    set(&mut s, s1, VecId::FREE_POSITION, &[0.5, 0.0, -1.0]);
    set(&mut s, s1, VecId::FREE_VELOCITY, &[1.0, 2.0, 3.0]);
    set(&mut s, s2, VecId::FREE_POSITION, &[1.5, 1.0]);
    set(&mut s, s2, VecId::FREE_VELOCITY, &[0.0, -1.0]);
    let pb = pose(&mut s, &pos_cp());
    assert_eq!(pb.n, 5);
    assert_eq!(rows_of(&s, s1), vec![(0, vec![(0, vec![1.0])]), (1, vec![(1, vec![1.0])]), (2, vec![(2, vec![1.0])])]);
    assert_eq!(rows_of(&s, s2), vec![(3, vec![(0, vec![1.0])]), (4, vec![(1, vec![1.0])])]);
    close(&pb.dfree, &[0.5, 0.0, -1.0, 1.0, 0.75], 0.0);
    assert_eq!(blocks(&pb), vec![(0, 1), (1, 1), (2, 1), (3, 2)]);

    let pb = pose(&mut s, &cp(ConstraintOrder::Vel, 0.1));
    // v_free + (1/dt)·x, and with the rest: v_free + (1/dt)·(x − x_rest).
    let inv = 1.0 / 0.1;
    close(&pb.dfree, &[1.0 + inv * 0.1, 2.0 + inv * -0.2, 3.0 + inv * 0.3, inv * 0.5, -1.0 + inv * 1.75], 0.0);
}

/// The non-iterative block solves its rows exactly: with `W = [[2, 1], [1, 2]]` and
/// `d = (3, 3)`, one update gives `λ = −W⁻¹·d = (−1, −1)`.
#[test]
fn uniform_block_resolution_is_exact() {
    let f = factory();
    let (mut s, _, st) = one_state(&f, &[("template", "Vec1"), ("position", "1 2")], "UniformLagrangianConstraint", &[("iterative", "0")]);
    set(&mut s, st, VecId::FREE_POSITION, &[1.0, 2.0]);
    let mut pb = pose(&mut s, &pos_cp());
    let w = DenseMatrix { n: 2, data: vec![2.0, 1.0, 1.0, 2.0] };
    let mut l = vec![0.0; 2];
    let r = pb.resolutions[0].as_mut().unwrap();
    assert_eq!(r.nb_lines(), 2);
    r.init(0, &w, &mut l);
    let mut d = vec![3.0, 3.0];
    let dfree = d.clone();
    r.resolution(0, &w, &mut d, &mut l, &dfree);
    close(&l, &[-1.0, -1.0], 1e-15);
}

// ---------------------------------------------------------------------------------------------
// SlidingLagrangianConstraint

/// P = (0.5, 1, 0) above the segment A = (0,0,0), B = (2,0,0): u = e_x, r = 0.5, β = 0.25,
/// dirProj = e_y, dirOrtho = e_y × e_x = −e_z. Rows: two bilateral directions (object 2 split
/// 0.75 on A, 0.25 on B), then the end stops +u (A) and −u (B); object 1 positive, object 2
/// negative. Violations at the free positions with the build's β.
#[test]
fn sliding_rows_violation_blocks_and_force() {
    let f = factory();
    let mos: [Attrs; 2] = [&[("position", "9 9 9  0.5 1 0")], &[("position", "2 0 0  7 7 7  0 0 0")]];
    let attrs = [("template", "Vec3"), ("sliding_point", "1"), ("axis_1", "2"), ("axis_2", "0")];
    let (mut s, law, mos) = pair_scene(&f, ["Point", "Line"], "points", mos, "SlidingLagrangianConstraint", &attrs);
    let [sp, sl] = init_states(&mut s, &f, mos);
    set(&mut s, sp, VecId::FREE_POSITION, &[0.0, 0.0, 0.0, 3.0, 0.5, 0.25]);
    set(&mut s, sl, VecId::FREE_POSITION, &[2.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let c = pos_cp();
    let mut pb = pose(&mut s, &c);
    assert_eq!(pb.n, 4);
    assert_eq!(
        rows_of(&s, sp),
        vec![
            (0, vec![(1, vec![0.0, 1.0, 0.0])]),
            (1, vec![(1, vec![0.0, 0.0, -1.0])]),
            (2, vec![(1, vec![1.0, 0.0, 0.0])]),
            (3, vec![(1, vec![-1.0, 0.0, 0.0])]),
        ]
    );
    assert_eq!(
        rows_of(&s, sl),
        vec![
            (0, vec![(0, vec![0.0, -0.25, 0.0]), (2, vec![0.0, -0.75, 0.0])]),
            (1, vec![(0, vec![0.0, 0.0, 0.25]), (2, vec![0.0, 0.0, 0.75])]),
            (2, vec![(2, vec![-1.0, 0.0, 0.0])]),
            (3, vec![(0, vec![1.0, 0.0, 0.0])]),
        ]
    );
    // newProj = B·0.25 + A·0.75 = (0.5, 0.125, 0); P − newProj = (2.5, 0.375, 0.25).
    close(&pb.dfree, &[0.375, -0.25, 3.0, -1.0], 0.0);
    assert_eq!(blocks(&pb), vec![(0, 1), (1, 1), (2, 1), (3, 1)]);
    // Rows 0–1 are bilateral, 2–3 unilateral (a negative multiplier is clamped to 0).
    let w = diag(4, 1.0);
    let mut l = vec![0.0; 4];
    let mut d = vec![1.0; 4];
    let dfree = d.clone();
    for (line, _) in pb.blocks() {
        let r = pb.resolutions[line].as_mut().unwrap();
        r.init(line, &w, &mut l);
        r.resolution(line, &w, &mut d, &mut l, &dfree);
    }
    assert_eq!(l, [-1.0, -1.0, 0.0, 0.0]);

    // The force is Σ dirᵢ·λᵢ, and Jᵀλ is kept out of the states' Λ.
    store_law_lambdas(&mut s, &c, &pb.laws, &[1.0, 2.0, 3.0, 4.0], true).unwrap();
    settee_core::constraint::store_constraint_lambdas(&mut s, &c, &pb.laws, &[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert!(s.store.get(sp).read(c.lambda).iter().all(|v| *v == 0.0));
    let law_obj = s.components[law].obj.as_ref().unwrap().as_any().downcast_ref::<settee_constraint::laws::SlidingLagrangianConstraint>().unwrap();
    assert_eq!(law_obj.force(), [-1.0, 1.0, -2.0]);
}

/// A degenerate axis (A = B) ties P to A with three bilateral world-axis rows; P on the axis
/// takes the fallback direction `(1,1,0) × u` when `e_x × u` vanishes.
#[test]
fn sliding_degenerate_axis_and_point_on_axis() {
    use settee_constraint::laws::SlidingLagrangianConstraint;
    use settee_core::Layout;
    let c = pos_cp();
    let (s1, s2) = (StateId::first_in_slot(0), StateId::first_in_slot(1));

    let mut law = SlidingLagrangianConstraint::new(Layout::Vec3, s1, s2, 0, 0, 1).unwrap();
    let xp = [0.5, 0.25, 2.0];
    let xl = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
    let (n, rows) = build_rows(&mut law, &c, [&xp, &xl], 0);
    assert_eq!(n, 3);
    let e2: Vec<(usize, Row)> = rows[1].rows().map(|(r, e)| (r, e.map(|(d, b)| (d, b.to_vec())).collect())).collect();
    assert_eq!(e2, vec![(0, vec![(0, vec![-1.0, -0.0, -0.0])]), (1, vec![(0, vec![0.0, -1.0, 0.0])]), (2, vec![(0, vec![0.0, 0.0, -1.0])])]);
    let mut d = [0.0; 3];
    violation(&mut law, &c, [&xp, &xl], [&[0.0; 3], &[0.0; 6]], &rows, &mut d);
    close(&d, &[-0.5, -0.75, 1.0], 0.0);
    let mut res = Vec::new();
    law.resolutions(&c, &mut res);
    assert_eq!(res.len(), 3);
    assert!(res.iter().all(|r| r.nb_lines() == 1));

    let mut law = SlidingLagrangianConstraint::new(Layout::Vec3, s1, s2, 0, 0, 1).unwrap();
    let xp = [0.5, 0.0, 0.0];
    let xl = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    build_rows(&mut law, &c, [&xp, &xl], 0);
    assert_eq!(law.directions(), &[[0.0, 0.0, -1.0], [0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [-1.0, -0.0, -0.0]]);
}

// ---------------------------------------------------------------------------------------------
// UnilateralLagrangianConstraint

/// Two contacts added as a response does it (positions read from the states): a frictional
/// one along n = e_z (tangents t = e_x, s = e_y: rows −n,−t,−s on object 1 and +n,+t,+s on
/// object 2) and a frictionless one along e_x (one row). Blocks: one friction cone of 3 lines
/// carrying the custom tolerance, one unilateral line.
#[test]
fn unilateral_rows_blocks_and_status() {
    use settee_constraint::laws::UnilateralLagrangianConstraint;
    let f = factory();
    let mos: [Attrs; 2] = [&[("position", "5 5 5  0 0 0")], &[("position", "0 0 0.0625  6 5 5")]];
    let (mut s, law, mos) = pair_scene(&f, ["A", "B"], "m", mos, "UnilateralLagrangianConstraint", &[]);
    let [sa, sb] = init_states(&mut s, &f, mos);
    s.with_taken(law, |obj, scene| {
        let u = obj.as_any_mut().downcast_mut::<UnilateralLagrangianConstraint>().unwrap();
        u.set_custom_tolerance(1e-4);
        u.clear_contacts(2);
        u.add_contact(scene, 0.5, [0.0, 0.0, 1.0], 0.125, 1, 0, 42, 7)?;
        u.add_contact(scene, 0.0, [1.0, 0.0, 0.0], 0.5, 0, 1, 43, 8)?;
        assert!(u.add_contact(scene, 0.0, [1.0, 0.0, 0.0], 0.5, 2, 1, 44, 9).is_err());
        let c = u.contacts()[0];
        assert_eq!((c.t, c.s, c.p, c.q), ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0625], [0.0, 0.0, 0.0]));
        assert_eq!((u.contacts()[1].t, u.contacts()[1].s), ([0.0, 1.0, 0.0], [0.0, 0.0, 1.0]));
        Ok::<(), settee_core::SimError>(())
    })
    .unwrap();
    free_at_current(&mut s, sa);
    set(&mut s, sb, VecId::FREE_POSITION, &[0.25, 0.125, 0.0, 6.0, 5.0, 5.0]);
    let c = pos_cp();
    let pb = pose(&mut s, &c);
    assert_eq!(pb.n, 4);
    assert_eq!(
        rows_of(&s, sa),
        vec![
            (0, vec![(1, vec![-0.0, -0.0, -1.0])]),
            (1, vec![(1, vec![-1.0, -0.0, -0.0])]),
            (2, vec![(1, vec![-0.0, -1.0, -0.0])]),
            (3, vec![(0, vec![-1.0, -0.0, -0.0])]),
        ]
    );
    assert_eq!(
        rows_of(&s, sb),
        vec![
            (0, vec![(0, vec![0.0, 0.0, 1.0])]),
            (1, vec![(0, vec![1.0, 0.0, 0.0])]),
            (2, vec![(0, vec![0.0, 1.0, 0.0])]),
            (3, vec![(1, vec![1.0, 0.0, 0.0])]),
        ]
    );
    // Contact 0 stays penetrating (delta = −0.0625, dfree = −0.125, τ = −1): the full tangential
    // displacement (0.25, 0.125). Contact 1: (6,5,5)·e_x − (5,5,5)·e_x − 0.5 = 0.5.
    close(&pb.dfree, &[-0.125, 0.25, 0.125, 0.5], 0.0);
    assert_eq!(blocks(&pb), vec![(0, 3), (3, 1)]);
    assert_eq!(pb.resolutions[0].as_ref().unwrap().tolerance(), 1e-4);
    assert_eq!(pb.resolutions[3].as_ref().unwrap().tolerance(), 0.0);

    store_law_lambdas(&mut s, &c, &pb.laws, &[0.5, 0.1, 0.0, 0.3], true).unwrap();
    let u = s.components[law].obj.as_mut().unwrap().as_any_mut().downcast_mut::<UnilateralLagrangianConstraint>().unwrap();
    // Only friction contacts report a status (SOFA's frictionless resolution has no store).
    assert_eq!(u.contacts_status(), &[true, false]);
    assert!(u.is_active());
    let info = u.constraint_info().unwrap();
    assert_eq!((info.const0, info.nb_lines, info.nb_groups, info.ids), (0, 3, 2, vec![-42, -43]));
    assert_eq!(u.constraint_info().unwrap().ids, vec![42, 43]);
}

/// The tangential violation by case (one frictional contact along e_z, Q fixed at the origin,
/// d = 0.125): reached during the step (τ = 0.5: half the tangential motion), separated
/// (zero), and the VEL violation `n·((v₂ − v₁) + (x₂ − x₁)/dt) − d/dt`, `t·(v₂ − v₁)`.
#[test]
fn unilateral_violation_cases() {
    use settee_constraint::laws::UnilateralLagrangianConstraint;
    let (s1, s2) = (StateId::first_in_slot(0), StateId::first_in_slot(1));
    let x1 = [0.0, 0.0, 0.0];
    let run = |p: [f64; 3], pf: [f64; 3], c: ConstraintParams, v2: [f64; 3]| -> Vec<f64> {
        let mut law = UnilateralLagrangianConstraint::between(s1, s2);
        law.add_contact_with_points(0.3, [0.0, 0.0, 1.0], p, [0.0; 3], 0.125, 0, 0, 1, 1);
        let (n, rows) = build_rows(&mut law, &c, [&x1, &p], 5);
        assert_eq!(n, 3);
        let mut d = vec![9.0; 3];
        violation(&mut law, &c, [&x1, &pf], [&[0.0; 3], &v2], &rows, &mut d);
        d
    };
    // delta = 0.125, dfree = −0.125 → τ = 0.5.
    close(&run([0.0, 0.0, 0.25], [0.5, 0.25, 0.0], pos_cp(), [0.0; 3]), &[-0.125, 0.25, 0.125], 0.0);
    // delta = 0.125, dfree = 0.375 → τ = −0.5, no contact: no tangential violation.
    close(&run([0.0, 0.0, 0.25], [0.5, 0.25, 0.5], pos_cp(), [0.0; 3]), &[0.375, 0.0, 0.0], 0.0);
    // VEL, dt = 0.5: ((0,0,0.25)·2 + (1,2,−0.5))·n − 0.125·2 = 0.5 − 0.5 − 0.25.
    close(&run([0.0, 0.0, 0.25], [7.0; 3], cp(ConstraintOrder::Vel, 0.5), [1.0, 2.0, -0.5]), &[-0.25, 1.0, 2.0], 0.0);
}

// ---------------------------------------------------------------------------------------------
// StopperLagrangianConstraint

/// One unit row on `index`, violation `x_free[index]`; the resolution zeroes λ in `init`, then
/// pushes the value back to the nearest bound (W = 2): g = 3 > max = 1 gives λ = −1, g = −2 <
/// min = −0.5 gives λ = 0.75, inside gives 0.
#[test]
fn stopper_row_violation_and_two_sided_resolution() {
    let f = factory();
    let attrs = [("index", "2"), ("min", "-0.5"), ("max", "1")];
    let (mut s, _, st) = one_state(&f, &[("template", "Vec1"), ("position", "0 0 0")], "StopperLagrangianConstraint", &attrs);
    set(&mut s, st, VecId::FREE_POSITION, &[9.0, 9.0, 1.5]);
    let mut pb = pose(&mut s, &pos_cp());
    assert_eq!(rows_of(&s, st), vec![(0, vec![(2, vec![1.0])])]);
    assert_eq!(pb.dfree, vec![1.5]);
    assert_eq!(blocks(&pb), vec![(0, 1)]);
    let w = DenseMatrix { n: 1, data: vec![2.0] };
    let r = pb.resolutions[0].as_mut().unwrap();
    let mut l = vec![5.0];
    r.init(0, &w, &mut l);
    assert_eq!(l, [0.0]);
    for (d, lam, expect) in [(3.0, 0.0, -1.0), (-1.0, 0.5, 0.75), (0.5, 0.25, 0.0)] {
        let mut l = vec![lam];
        let mut dv = vec![d];
        r.resolution(0, &w, &mut dv, &mut l, &[0.0]);
        assert_eq!(l, [expect], "d = {d}, λ = {lam}");
    }
}

/// Every law is registered under SOFA's name with SOFA's templates.
#[test]
fn laws_are_registered_with_sofa_names_and_templates() {
    let f = factory();
    for (name, templates) in [
        ("FixedLagrangianConstraint", &["Vec6d", "Vec3d", "Vec2d", "Vec1d", "Rigid3d"][..]),
        ("BilateralLagrangianConstraint", &["Vec3d", "Rigid3d"][..]),
        ("UniformLagrangianConstraint", &["Vec1d"][..]),
        ("SlidingLagrangianConstraint", &["Vec3d", "Rigid3d"][..]),
        ("UnilateralLagrangianConstraint", &["Vec3d"][..]),
        ("StopperLagrangianConstraint", &["Vec1d"][..]),
    ] {
        let class = f.class(name).unwrap_or_else(|| panic!("{name} is not registered"));
        assert_eq!(class.templates, templates, "{name}");
        assert!(class.plays(settee_core::role::CONSTRAINT_LAW));
    }
}
