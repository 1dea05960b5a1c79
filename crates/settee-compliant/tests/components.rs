//! The compliance and stiffness components (compliant spec §5.2–§5.6, §14.4): forces, K against
//! finite differences of the force, the assembled K and B, the compliance entries and the
//! damping rules.

mod support;

use settee_core::component::ForceField;
use settee_core::mechanics::MechScope;
use settee_core::simulation::init_root;
use settee_core::testing::{self, add, assert_close, check_derivatives, dforce_mbk, forces};
use settee_core::{ComponentId, Scene, SimResult};
use support::factory;

/// A root (dt 0.01) with one state of `template` at `position` and one component of `class`,
/// and the result of its init.
fn build(template: &str, position: &str, class: &str, attrs: &[(&str, &str)]) -> (Scene, ComponentId, SimResult) {
    let f = factory();
    let mut s = Scene::new("root");
    s.node_mut(Scene::ROOT).context.dt = 0.01;
    add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", template), ("position", position)]);
    let c = add(&mut s, &f, Scene::ROOT, class, attrs);
    let r = init_root(&mut s, &f);
    (s, c, r)
}

/// [`build`], initialised without error.
fn scene(template: &str, position: &str, class: &str, attrs: &[(&str, &str)]) -> (Scene, ComponentId) {
    let (s, c, r) = build(template, position, class, attrs);
    r.expect("init");
    assert!(!s.has_errors(), "{:?}", s.messages);
    (s, c)
}

/// The init error of [`build`] (`why`: the reason the init must fail).
/// Init fails (`why`: what the test expects) with an error containing `needle`.
fn assert_init_error(template: &str, position: &str, class: &str, attrs: &[(&str, &str)], why: &str, needle: &str) {
    let e = build(template, position, class, attrs).2.expect_err(why).to_string();
    assert!(e.contains(needle), "{e}");
}

fn force_field(s: &Scene, c: ComponentId) -> &dyn ForceField {
    s.role::<dyn ForceField>(c).expect("a force field")
}

/// The compliance entries `(row, col, value)` of component `c` on `rows` rows.
fn compliance(s: &Scene, c: ComponentId, rows: usize) -> Vec<(usize, usize, f64)> {
    let mut out = Vec::new();
    let p = s.params(Scene::ROOT);
    force_field(s, c).add_compliance(&p, rows, &mut out).unwrap();
    out
}

fn scope(s: &Scene) -> MechScope {
    MechScope::build(s, Scene::ROOT)
}

#[test]
fn uniform_stiffness_force_is_minus_k_x() {
    // §14.4 UniformStiffness_test: Vec1, k = 10, x = 7 ⇒ f = −70.
    let (mut s, c) = scene("Vec1d", "7", "UniformStiffness", &[("stiffness", "10")]);
    let sc = scope(&s);
    assert_eq!(forces(&mut s, &sc), vec![-70.0]);
    assert!(!force_field(&s, c).is_compliance(), "UniformStiffness is a stiffness by default");
    check_derivatives(&mut s, &[1.0], 1e-6, 1e-8);
}

#[test]
fn uniform_stiffness_damping_and_compliance() {
    let (mut s, c) = scene("Vec3d", "1 2 3  -4 5 0.5", "UniformStiffness", &[("stiffness", "4"), ("damping", "0.5")]);
    let sc = scope(&s);
    assert_close(&forces(&mut s, &sc), &[-4.0, -8.0, -12.0, 16.0, -20.0, -2.0], 0.0);
    check_derivatives(&mut s, &testing::random_vec(6, 3), 1e-6, 1e-8);
    // B = −d·I.
    let dx = testing::random_vec(6, 7);
    let db = dforce_mbk(&mut s, &sc, &dx, 0.0, 1.0);
    assert_close(&db, &dx.iter().map(|v| -0.5 * v).collect::<Vec<_>>(), 1e-15);
    assert!(compliance(&s, c, 6).is_empty());

    // As a compliance: C = (1/k)·I, and 1e100 for k = 0.
    let (s, c) = scene("Vec1d", "1 2", "UniformStiffness", &[("stiffness", "4"), ("isCompliance", "1")]);
    assert!(force_field(&s, c).is_compliance());
    assert_eq!(compliance(&s, c, 2), vec![(0, 0, 0.25), (1, 1, 0.25)]);
    let (s, c) = scene("Vec1d", "1", "UniformStiffness", &[("isCompliance", "1")]);
    assert_eq!(compliance(&s, c, 1), vec![(0, 0, 1e100)]);
}

#[test]
fn diagonal_stiffness_force_per_component() {
    // §14.4 DiagonalStiffness_test: k = (10, 100, 7), x = (0, −1, 7) ⇒ f = (0, 100, −49).
    let (mut s, _) = scene("Vec3d", "0 -1 7", "DiagonalStiffness", &[("stiffness", "10 100 7")]);
    let sc = scope(&s);
    assert_close(&forces(&mut s, &sc), &[0.0, 100.0, -49.0], 0.0);
    check_derivatives(&mut s, &[0.3, -0.7, 0.2], 1e-6, 1e-8);
}

#[test]
fn diagonal_stiffness_damping_is_clamped_per_row() {
    let (mut s, c) = scene("Vec3d", "0 -1 7", "DiagonalStiffness", &[("stiffness", "10 0 7"), ("damping", "1 2"), ("isCompliance", "true")]);
    let sc = scope(&s);
    let db = dforce_mbk(&mut s, &sc, &[1.0, 1.0, 1.0], 0.0, 1.0);
    assert_close(&db, &[-1.0, -2.0, -2.0], 0.0);
    assert_eq!(compliance(&s, c, 3), vec![(0, 0, 0.1), (1, 1, 1e100), (2, 2, 1.0 / 7.0)]);
}

#[test]
fn diagonal_stiffness_too_few_values_is_an_error() {
    assert_init_error("Vec3d", "0 0 0 1 1 1", "DiagonalStiffness", &[("stiffness", "1 2 3")], "3 values for 6 rows", "3 values for 6 scalar rows");
}

#[test]
fn diagonal_compliance_entries_stiffness_and_damping() {
    let (mut s, c) = scene("Vec3d", "1 -2 3", "DiagonalCompliance", &[("compliance", "0.5 0 0.25"), ("damping", "0.5")]);
    assert!(force_field(&s, c).is_compliance());
    // Zero compliance entries are not stored (hard rows).
    assert_eq!(compliance(&s, c, 3), vec![(0, 0, 0.5), (2, 2, 0.25)]);
    // Uniform damping 0.5 on every row (a single positive entry counts).
    let sc = scope(&s);
    let db = dforce_mbk(&mut s, &sc, &[1.0, 2.0, 3.0], 0.0, 1.0);
    assert_close(&db, &[-0.5, -1.0, -1.5], 0.0);
    // A compliance adds no stiffness to the implicit matrix (the core skips it).
    let dk = dforce_mbk(&mut s, &sc, &[1.0, 1.0, 1.0], 1.0, 0.0);
    assert_close(&dk, &[0.0; 3], 0.0);
    // As a stiffness, K = −1/c, and −1/ε for c = 0.
    let (mut s, _) = scene("Vec3d", "1 -2 3", "DiagonalCompliance", &[("compliance", "0.5 0 0.25"), ("isCompliance", "0")]);
    let sc = scope(&s);
    let dk = dforce_mbk(&mut s, &sc, &[1.0, 1.0, 1.0], 1.0, 0.0);
    assert_close(&dk, &[-2.0, -1.0 / f64::EPSILON, -4.0], 0.0);

    // As a stiffness: f = −x/c, K matches finite differences.
    let (mut s, c) = scene("Vec1d", "1 -2", "DiagonalCompliance", &[("compliance", "0.5 0.25"), ("isCompliance", "0")]);
    assert!(!force_field(&s, c).is_compliance());
    assert!(compliance(&s, c, 2).is_empty());
    let sc = scope(&s);
    assert_close(&forces(&mut s, &sc), &[-2.0, 8.0], 0.0);
    check_derivatives(&mut s, &[0.4, -1.0], 1e-6, 1e-8);
    // Damping "0" (the default) adds no B.
    let db = dforce_mbk(&mut s, &sc, &[1.0, 1.0], 0.0, 1.0);
    assert_close(&db, &[0.0, 0.0], 0.0);
}

#[test]
fn full_compliance_inverts_the_given_matrix() {
    // K given, C = K⁻¹ = (1/5)·[[3, −1], [−1, 2]].
    let (s, c) = scene("Vec1d", "1 2", "FullCompliance", &[("K", "2 1 1 3")]);
    let mut cm = compliance(&s, c, 2);
    cm.sort_by_key(|e| (e.0, e.1));
    let expect = [(0, 0, 0.6), (0, 1, -0.2), (1, 0, -0.2), (1, 1, 0.4)];
    assert_eq!(cm.len(), 4);
    for (a, b) in cm.iter().zip(expect) {
        assert!(a.0 == b.0 && a.1 == b.1 && (a.2 - b.2).abs() < 1e-15, "{cm:?}");
    }
    // Force −K·x (K given with a positive sign), as a stiffness.
    let (mut s, c) = scene("Vec1d", "1 2", "FullCompliance", &[("K", "2 1 1 3"), ("isCompliance", "0")]);
    assert!(compliance(&s, c, 2).is_empty());
    let sc = scope(&s);
    assert_close(&forces(&mut s, &sc), &[-4.0, -7.0], 0.0);
    check_derivatives(&mut s, &[0.3, -0.8], 1e-6, 1e-8);

    // C given, K = C⁻¹: the force of a stiffness is −C⁻¹·x.
    let (mut s, _) = scene("Vec1d", "1 2", "FullCompliance", &[("C", "0.6 -0.2 -0.2 0.4"), ("isCompliance", "false")]);
    let sc = scope(&s);
    assert_close(&forces(&mut s, &sc), &[-4.0, -7.0], 1e-12);

    // Neither: K = I, and C = 0 (a hard constraint).
    let (s, c) = scene("Vec1d", "1 2", "FullCompliance", &[]);
    assert!(compliance(&s, c, 2).is_empty());
    let (mut s, _) = scene("Vec1d", "1 2", "FullCompliance", &[("isCompliance", "0")]);
    let sc = scope(&s);
    assert_close(&forces(&mut s, &sc), &[-1.0, -2.0], 0.0);
    // Damping per row, clamped.
    let (mut s, _) = scene("Vec1d", "1 2 3", "FullCompliance", &[("damping", "3 1")]);
    let sc = scope(&s);
    assert_close(&dforce_mbk(&mut s, &sc, &[1.0, 1.0, 1.0], 0.0, 1.0), &[-3.0, -1.0, -1.0], 0.0);
}

#[test]
fn linear_diagonal_compliance_is_recomputed_once_per_time() {
    // c_i = cmin below errorMin, cmin·|x_i|/errorMin above. As a stiffness the force is −x/c.
    let (mut s, _) =
        scene("Vec1d", "0.05 0.3 -0.2", "LinearDiagonalCompliance", &[("complianceMin", "1e-5"), ("errorMin", "0.1"), ("isCompliance", "0")]);
    let sc = scope(&s);
    let expect = |x: &[f64], c: &[f64]| x.iter().zip(c).map(|(x, c)| -x / c).collect::<Vec<_>>();
    let c0 = [1e-5, 3e-5, 2e-5];
    let f = forces(&mut s, &sc);
    assert_close(&f, &expect(&[0.05, 0.3, -0.2], &c0), 1e-6);
    // Same time, other positions: the compliances stay.
    let st = s.state_of(s.context_state(Scene::ROOT).unwrap()).unwrap();
    s.store.get_mut(st).write(settee_core::VecId::POSITION).copy_from_slice(&[0.4, 0.01, 0.2]);
    assert_close(&forces(&mut s, &sc), &expect(&[0.4, 0.01, 0.2], &c0), 1e-6);
    // A new time: recomputed from the current errors.
    s.node_mut(Scene::ROOT).context.time = 0.01;
    assert_close(&forces(&mut s, &sc), &expect(&[0.4, 0.01, 0.2], &[4e-5, 1e-5, 2e-5]), 1e-6);
}

#[test]
fn linear_diagonal_compliance_uses_the_norm_of_each_dof() {
    let (s, c) = scene("Vec3d", "0.3 0.4 0  0 0 0.01", "LinearDiagonalCompliance", &[("complianceMin", "2"), ("errorMin", "0.1")]);
    // Before the first step: complianceMin everywhere.
    assert_eq!(compliance(&s, c, 6).iter().map(|e| e.2).collect::<Vec<_>>(), vec![2.0; 6]);
    let mut s = s;
    settee_core::simulation::animate_begin(&mut s).unwrap();
    let got: Vec<f64> = compliance(&s, c, 6).iter().map(|e| e.2).collect();
    assert_close(&got, &[10.0, 10.0, 10.0, 2.0, 2.0, 2.0], 1e-12);
}

#[test]
fn linear_diagonal_compliance_needs_a_positive_error_min() {
    assert_init_error("Vec1d", "0", "LinearDiagonalCompliance", &[("complianceMin", "1e-5")], "errorMin = 0", "errorMin");
}

#[test]
fn damping_compliance_is_dt_over_damping() {
    let (mut s, c) = scene("Vec6d", "0 0 0 0 0 0", "DampingCompliance", &[("damping", "5")]);
    assert!(force_field(&s, c).is_compliance());
    let cm = compliance(&s, c, 6);
    assert_eq!(cm.len(), 6);
    for (i, e) in cm.iter().enumerate() {
        assert_eq!((e.0, e.1), (i, i));
        assert!((e.2 - 0.01 / 5.0).abs() < 1e-18, "{cm:?}");
    }
    // Follows dt.
    s.node_mut(Scene::ROOT).context.dt = 0.1;
    assert!((compliance(&s, c, 6)[0].2 - 0.02).abs() < 1e-17);
    // No force, no stiffness.
    let sc = scope(&s);
    assert_close(&forces(&mut s, &sc), &[0.0; 6], 0.0);

    // damping = 0: not a compliance, nothing at all.
    let (s, c) = scene("Vec1d", "0", "DampingCompliance", &[]);
    assert!(!force_field(&s, c).is_compliance());
    assert!(compliance(&s, c, 1).is_empty());
}

#[test]
fn penalty_acts_on_negative_entries_only() {
    let (mut s, _) = scene("Vec1d", "-0.5 0.3 -1", "CompliantPenaltyForceField", &[("stiffness", "100"), ("damping", "2")]);
    let sc = scope(&s);
    assert_close(&forces(&mut s, &sc), &[50.0, 0.0, 100.0], 0.0);
    let dk = dforce_mbk(&mut s, &sc, &[1.0, 1.0, 1.0], 1.0, 0.0);
    assert_close(&dk, &[-100.0, 0.0, -100.0], 0.0);
    let db = dforce_mbk(&mut s, &sc, &[1.0, 1.0, 1.0], 0.0, 1.0);
    assert_close(&db, &[-2.0, 0.0, -2.0], 0.0);
    // Away from x = 0 the force is smooth: K matches finite differences.
    check_derivatives(&mut s, &[0.3, -0.2, 0.5], 1e-6, 1e-8);
}
