//! The mappings of the Compliant formulation (spec compliant §9): DistanceFromTargetMapping,
//! SubsetMultiMapping, DifferenceMapping, DifferenceMultiMapping, DifferenceFromTargetMapping,
//! MaskMapping and ProjectionMapping.
//!
//! Each is checked on given numbers, then on pseudo-random states: `apply_j` against the central
//! finite difference of `apply`, `apply_jt` as the adjoint of `apply_j`, the assembled Jacobians
//! against `apply_j`, and (DistanceFromTargetMapping) `apply_djt` against the finite difference
//! of `Jᵀ(x)·f`. Scenes check the init-time values and the positioned errors of bad indices.
#![allow(clippy::disallowed_methods)] // tests read output Data by name

mod support;

use settee_core::component::Mapping;
use settee_core::math::dot_n as dot;
use settee_core::{Layout, Scene, VecId};
use settee_mapping::common::GeometricStiffness;
use settee_mapping::difference::Kind as DiffKind;
use settee_mapping::mask::ScalarMapping;
use settee_mapping::{DifferenceMapping, DistanceFromTargetMapping, SubsetMultiMapping};
use support::{jtf, S0, S1, S2};

// ----- helpers ---------------------------------------------------------------------------------

/// A small deterministic generator of values in [−r, r].
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        settee_testkit::lcg(&mut self.0)
    }
    fn vec(&mut self, n: usize, r: f64) -> Vec<f64> {
        (0..n).map(|_| r * self.next()).collect()
    }
}

/// `apply` into NaN values: every output value must be written.
fn apply(m: &mut dyn Mapping, n_out: usize, x: &[Vec<f64>]) -> Vec<f64> {
    support::map_into(m, false, vec![f64::NAN; n_out], x)
}

/// `apply_j` into NaN values: every output value must be written.
fn jv(m: &mut dyn Mapping, n_out: usize, v: &[Vec<f64>]) -> Vec<f64> {
    support::map_into(m, true, vec![f64::NAN; n_out], v)
}

/// Coordinates displaced by `s·v` (translation part only for rigid elements, whose rotational
/// derivatives are left at zero by the callers).
fn shift(x: &[Vec<f64>], v: &[Vec<f64>], s: f64, layout: Layout) -> Vec<Vec<f64>> {
    let (cs, ds, sp) = (layout.coord_size(), layout.deriv_size(), layout.spatial_size());
    x.iter()
        .zip(v)
        .map(|(x, v)| {
            let mut y = x.clone();
            for i in 0..x.len() / cs {
                for c in 0..if layout.is_rigid() { sp } else { cs } {
                    y[i * cs + c] += s * v[i * ds + c];
                }
            }
            y
        })
        .collect()
}

/// At `x`: `J·v` = FD of `apply`, ⟨J·v, f⟩ = ⟨v, Jᵀ·f⟩, and the assembled blocks give `J·v`.
fn check_linearization(m: &mut dyn Mapping, layout: Layout, x: &[Vec<f64>], n_out: usize, rng: &mut Rng) {
    let ds = layout.deriv_size();
    let dsizes: Vec<usize> = x.iter().map(|x| x.len() / layout.coord_size() * ds).collect();
    let v: Vec<Vec<f64>> = dsizes
        .iter()
        .map(|&n| {
            let mut v = rng.vec(n, 1.0);
            if layout.is_rigid() {
                // translations only: the coordinates are then displaced exactly
                v.iter_mut().enumerate().filter(|(i, _)| i % ds >= 3).for_each(|(_, x)| *x = 0.0);
            }
            v
        })
        .collect();
    let f = rng.vec(n_out, 1.0);
    let h = 1e-6;
    let op = apply(m, n_out, &shift(x, &v, h, layout));
    let om = apply(m, n_out, &shift(x, &v, -h, layout));
    apply(m, n_out, x);
    let a = jv(m, n_out, &v);
    for i in 0..n_out {
        let fd = (op[i] - om[i]) / (2.0 * h);
        assert!((fd - a[i]).abs() < 1e-6 * (1.0 + fd.abs()), "output {i}: J·v = {} but the finite difference is {fd}", a[i]);
    }
    let b = jtf(m, &dsizes, &f);
    let (lhs, rhs) = (dot(&a, &f), v.iter().zip(&b).map(|(v, b)| dot(v, b)).sum::<f64>());
    assert!((lhs - rhs).abs() < 1e-12 * (1.0 + lhs.abs()), "⟨Jv,f⟩ = {lhs} but ⟨v,Jᵀf⟩ = {rhs}");
    let js = m.jacobians().unwrap();
    assert_eq!(js.len(), x.len());
    for (j, v) in js.iter().zip(&v) {
        assert_eq!((j.nrows(), j.ncols), (n_out, v.len()));
    }
    let jv2 = support::jacobians_times(&js, &v, n_out);
    for (p, q) in a.iter().zip(&jv2) {
        assert!((p - q).abs() < 1e-14 * (1.0 + p.abs()), "apply_j {p} vs assembled J·v {q}");
    }
}

fn approx(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol, "{a:?} vs {b:?}");
    }
}

// ----- DistanceFromTargetMapping ---------------------------------------------------------------

#[test]
fn distance_from_target_values_directions_and_stiffness() {
    // Point 0 at 5 from its target along (0.6, 0.8, 0), rest 1; point 1 on its target (null
    // distance: direction (1, 0, 0), no stiffness); point 2 is not mapped.
    let x = vec![3.0, 4.0, 0.0, 1.0, 1.0, 1.0, 9.0, 9.0, 9.0];
    let targets = vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    let mut m = DistanceFromTargetMapping::build(S0, Layout::Vec3, 3, S1, vec![0, 1], targets, vec![1.0], GeometricStiffness::Exact);
    assert_eq!(m.rest_lengths(), &[1.0, 0.0]);
    assert_eq!(apply(&mut m, 2, std::slice::from_ref(&x)), [4.0, 0.0]);
    let j = &m.jacobians().unwrap()[0];
    // u = gap·(1/ℓ), as SOFA scales it
    assert_eq!(j.rows[0], [(0, 3.0 * (1.0 / 5.0)), (1, 4.0 * (1.0 / 5.0)), (2, 0.0)]);
    assert_eq!(j.rows[1], [(3, 1.0), (4, 0.0), (5, 0.0)]);
    // Geometric stiffness for f = (−2, 3): (I − uuᵀ)·(−2/5)·k on point 0 only.
    let dx = vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
    let mut g = [vec![0.0; 9]];
    {
        let mut s: Vec<&mut [f64]> = g.iter_mut().map(|v| v.as_mut_slice()).collect();
        m.apply_djt(&mut s, &[&dx], &[-2.0, 3.0], 0.5).unwrap();
    }
    let s = -2.0 / 5.0 * 0.5;
    approx(&g[0], &[(1.0 - 0.36) * s, -0.48 * s, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-16);
    // Stabilized: a positive (compressive) force gives nothing.
    let mut m = DistanceFromTargetMapping::build(S0, Layout::Vec3, 3, S1, vec![0], vec![0.0; 3], vec![], GeometricStiffness::Stabilized);
    apply(&mut m, 1, std::slice::from_ref(&x));
    let mut g = [vec![0.0; 9]];
    let mut s: Vec<&mut [f64]> = g.iter_mut().map(|v| v.as_mut_slice()).collect();
    m.apply_djt(&mut s, &[&dx], &[2.0], 1.0).unwrap();
    assert!(g[0].iter().all(|v| *v == 0.0));
}

#[test]
fn distance_from_target_vec1_is_the_absolute_offset() {
    // stops.scn: a Vec1 coordinate at 7 and at 1 against the target 3.
    let mut m = DistanceFromTargetMapping::build(S0, Layout::Vec1, 2, S1, vec![0, 1], vec![3.0, 3.0], vec![0.5], GeometricStiffness::Stabilized);
    assert_eq!(apply(&mut m, 2, &[vec![7.0, 1.0]]), [3.5, 2.0]);
    assert_eq!(jv(&mut m, 2, &[vec![1.0, 1.0]]), [1.0, -1.0]);
}

#[test]
fn distance_from_target_linearization_and_geometric_stiffness() {
    let mut rng = Rng(7);
    for layout in [Layout::Vec3, Layout::Vec1, Layout::Rigid3] {
        for _ in 0..20 {
            let (cs, ds) = (layout.coord_size(), layout.deriv_size());
            let mut x = rng.vec(4 * cs, 3.0);
            if layout.is_rigid() {
                for i in 0..4 {
                    x[i * 7 + 3..i * 7 + 7].copy_from_slice(&[0.0, 0.0, 0.6, 0.8]);
                }
            }
            let indices = vec![2, 0, 3];
            let targets = rng.vec(3 * cs, 3.0);
            // keep away from the targets (the direction is arbitrary there)
            let far = indices
                .iter()
                .enumerate()
                .all(|(i, &p)| (0..layout.spatial_size()).map(|c| (x[p * cs + c] - targets[i * cs + c]).powi(2)).sum::<f64>().sqrt() > 0.1);
            if !far {
                continue;
            }
            let mut m = DistanceFromTargetMapping::build(S0, layout, 4, S1, indices, targets, vec![0.2, 0.0, 1.0], GeometricStiffness::Exact);
            check_linearization(&mut m, layout, std::slice::from_ref(&x), 3, &mut rng);
            if layout.is_rigid() {
                continue; // SOFA's block also has (f/ℓ)·I on the rotations, which no apply follows
            }
            // apply_djt = d/dε Jᵀ(x + ε dx)·f
            let (dx, f, h) = (rng.vec(4 * ds, 1.0), rng.vec(3, 1.0), 1e-6);
            apply(&mut m, 3, &shift(std::slice::from_ref(&x), std::slice::from_ref(&dx), h, layout));
            let gp = jtf(&mut m, &[4 * ds], &f);
            apply(&mut m, 3, &shift(std::slice::from_ref(&x), std::slice::from_ref(&dx), -h, layout));
            let gm = jtf(&mut m, &[4 * ds], &f);
            apply(&mut m, 3, std::slice::from_ref(&x));
            let mut g = [vec![0.0; 4 * ds]];
            {
                let mut s: Vec<&mut [f64]> = g.iter_mut().map(|v| v.as_mut_slice()).collect();
                m.apply_djt(&mut s, &[&dx], &f, 1.0).unwrap();
            }
            for i in 0..4 * ds {
                let fd = (gp[0][i] - gm[0][i]) / (2.0 * h);
                assert!((fd - g[0][i]).abs() < 1e-5 * (1.0 + fd.abs()), "{layout:?} dof {i}: DJT {} vs FD {fd}", g[0][i]);
            }
        }
    }
}

// ----- SubsetMultiMapping ----------------------------------------------------------------------

#[test]
fn subset_multi_gathers_from_several_inputs() {
    let a = vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
    let b = vec![10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0];
    let pairs = vec![(1, 2), (0, 0), (1, 0), (0, 1)];
    let mut m = SubsetMultiMapping::build(&[(S0, 2), (S1, 3)], Layout::Vec3, S2, Layout::Vec3, pairs);
    let out = apply(&mut m, 12, &[a.clone(), b.clone()]);
    assert_eq!(out, [16.0, 17.0, 18.0, 0.0, 1.0, 2.0, 10.0, 11.0, 12.0, 3.0, 4.0, 5.0]);
    // Forces go back to their sources, adding up.
    let f: Vec<f64> = (1..=12).map(f64::from).collect();
    let g = jtf(&mut m, &[6, 9], &f);
    assert_eq!(g[0], [4.0, 5.0, 6.0, 10.0, 11.0, 12.0]);
    assert_eq!(g[1], [7.0, 8.0, 9.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0]);
    let mut rng = Rng(11);
    check_linearization(&mut m, Layout::Vec3, &[a, b], 12, &mut rng);
}

#[test]
fn subset_multi_of_rigid_frames_to_points_takes_the_centres() {
    let a = vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.6, 0.8];
    let b = vec![4.0, 5.0, 6.0, 0.6, 0.0, 0.0, 0.8, 7.0, 8.0, 9.0, 0.0, 0.0, 0.0, 1.0];
    let mut m = SubsetMultiMapping::build(&[(S0, 1), (S1, 2)], Layout::Rigid3, S2, Layout::Vec3, vec![(1, 1), (0, 0)]);
    assert_eq!(apply(&mut m, 6, &[a.clone(), b.clone()]), [7.0, 8.0, 9.0, 1.0, 2.0, 3.0]);
    let g = jtf(&mut m, &[6, 12], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(g[0], [4.0, 5.0, 6.0, 0.0, 0.0, 0.0]);
    assert_eq!(g[1][6..], [1.0, 2.0, 3.0, 0.0, 0.0, 0.0]);
    let mut rng = Rng(12);
    check_linearization(&mut m, Layout::Rigid3, &[a, b.clone()], 6, &mut rng);
    // Rigid → Rigid copies whole frames.
    let mut m = SubsetMultiMapping::build(&[(S0, 1), (S1, 2)], Layout::Rigid3, S2, Layout::Rigid3, vec![(1, 0)]);
    assert_eq!(apply(&mut m, 7, &[vec![0.0; 7], b.clone()]), b[..7]);
}

// ----- Difference mappings ---------------------------------------------------------------------

#[test]
fn difference_of_pairs_with_an_empty_row_for_a_self_pair() {
    let x = vec![1.0, 2.0, 3.0, 5.0, 7.0, 11.0, -1.0, 0.0, 4.0];
    let mut m = DifferenceMapping::with_pairs(DiffKind::Pairs, &[(S0, 3)], Layout::Vec3, S1, &[(0, 1), (2, 2), (1, 0)]);
    assert_eq!(apply(&mut m, 9, std::slice::from_ref(&x)), [4.0, 5.0, 8.0, 0.0, 0.0, 0.0, -4.0, -5.0, -8.0]);
    let j = &m.jacobians().unwrap()[0];
    assert_eq!(j.rows[0], [(0, -1.0), (3, 1.0)]);
    assert!(j.rows[3..6].iter().all(|r| r.is_empty()));
    // entries by increasing column, whichever end comes first
    assert_eq!(j.rows[8], [(2, 1.0), (5, -1.0)]);
    let mut rng = Rng(21);
    check_linearization(&mut m, Layout::Vec3, &[x], 9, &mut rng);
    // Rigid3 → Vec3: the centres' difference.
    let r = vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 2.0, 2.0, 2.0, 0.0, 0.6, 0.0, 0.8];
    let mut m = DifferenceMapping::with_pairs(DiffKind::Pairs, &[(S0, 2)], Layout::Rigid3, S1, &[(1, 0)]);
    assert_eq!(apply(&mut m, 3, std::slice::from_ref(&r)), [-1.0, 0.0, 1.0]);
    check_linearization(&mut m, Layout::Rigid3, &[r], 3, &mut rng);
}

#[test]
fn difference_multi_subtracts_input_0_from_input_1() {
    let a = vec![1.0, 2.0, 4.0];
    let b = vec![10.0, 20.0];
    let mut m = DifferenceMapping::with_pairs(DiffKind::Multi, &[(S0, 3), (S1, 2)], Layout::Vec1, S2, &[(2, 0), (0, 1)]);
    assert_eq!(apply(&mut m, 2, &[a.clone(), b.clone()]), [6.0, 19.0]);
    let g = jtf(&mut m, &[3, 2], &[1.0, 10.0]);
    assert_eq!(g, [vec![-10.0, 0.0, -1.0], vec![1.0, 10.0]]);
    let mut rng = Rng(22);
    check_linearization(&mut m, Layout::Vec1, &[a, b], 2, &mut rng);
}

#[test]
fn difference_from_target_selects_targets_and_inverts() {
    let x = vec![1.0, 2.0, 3.0, 4.0];
    // indices (3, 0, 1), targets (10, 20): the third element reuses the last target
    let t = [vec![10.0], vec![20.0], vec![20.0]];
    let mut m = DifferenceMapping::with_targets((S0, 4), Layout::Vec1, S1, &[3, 0, 1], &t, false);
    assert_eq!(apply(&mut m, 3, std::slice::from_ref(&x)), [-6.0, -19.0, -18.0]);
    let mut rng = Rng(23);
    check_linearization(&mut m, Layout::Vec1, std::slice::from_ref(&x), 3, &mut rng);
    let mut m = DifferenceMapping::with_targets((S0, 4), Layout::Vec1, S1, &[3, 0, 1], &t, true);
    assert_eq!(apply(&mut m, 3, std::slice::from_ref(&x)), [6.0, 19.0, 18.0]);
    assert_eq!(jv(&mut m, 3, &[vec![1.0, 2.0, 3.0, 4.0]]), [-4.0, -1.0, -2.0]);
    check_linearization(&mut m, Layout::Vec1, &[x], 3, &mut rng);
}

// ----- MaskMapping and ProjectionMapping -------------------------------------------------------

#[test]
fn mask_keeps_the_unmasked_components() {
    let x: Vec<f64> = (1..=9).map(f64::from).collect();
    // one mask for all elements
    let mut m = ScalarMapping::mask((S0, 3), Layout::Vec3, S1, &[0.0, 1.0, 1.0]);
    assert_eq!(apply(&mut m, 6, std::slice::from_ref(&x)), [2.0, 3.0, 5.0, 6.0, 8.0, 9.0]);
    // per-element masks, the last one repeated
    let mut m = ScalarMapping::mask((S0, 3), Layout::Vec3, S1, &[1.0, 0.0, 0.0, 0.0, 0.0, -2.0]);
    assert_eq!(apply(&mut m, 3, std::slice::from_ref(&x)), [1.0, 6.0, 9.0]);
    let mut rng = Rng(31);
    check_linearization(&mut m, Layout::Vec3, &[x], 3, &mut rng);
    let y = rng.vec(12, 2.0);
    let mut m = ScalarMapping::mask((S0, 2), Layout::Vec6, S1, &[1.0, 1.0, 1.0, 0.0, 0.0, 1.0]);
    assert_eq!(apply(&mut m, 8, std::slice::from_ref(&y)), [y[0], y[1], y[2], y[5], y[6], y[7], y[8], y[11]]);
    check_linearization(&mut m, Layout::Vec6, &[y], 8, &mut rng);
}

#[test]
fn projection_is_a_dot_product_minus_an_offset() {
    let x = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.5, 0.0, 0.0, 0.0, 0.0, -1.0];
    let set = vec![(1, vec![1.0, 0.0, 0.0, 0.0, 0.0, 2.0]), (0, vec![0.0, 1.0, 1.0, 0.0, 0.0, 0.0]), (0, vec![1.0; 6])];
    let mut m = ScalarMapping::projection((S0, 2), Layout::Vec6, S1, &set, &[0.25, 1.0]);
    assert_eq!(apply(&mut m, 3, std::slice::from_ref(&x)), [0.5 - 2.0 - 0.25, 5.0 - 1.0, 21.0 - 1.0]);
    let mut rng = Rng(41);
    check_linearization(&mut m, Layout::Vec6, &[x], 3, &mut rng);
    let mut m = ScalarMapping::projection((S0, 1), Layout::Vec3, S1, &[(0, vec![0.0, 0.0, 2.0])], &[]);
    assert_eq!(apply(&mut m, 1, &[vec![1.0, 2.0, 3.0]]), [6.0]);
}

// ----- scenes ----------------------------------------------------------------------------------

fn state_named<'a>(scene: &'a Scene, node: &str) -> &'a [f64] {
    let n = scene.preorder(Scene::ROOT).into_iter().find(|&n| scene.node(n).name == node).unwrap_or_else(|| panic!("no node {node}"));
    let s = scene.slot(n, settee_core::role::MECHANICAL_STATE).unwrap_or_else(|| panic!("no state in {node}"));
    scene.store.get(scene.state_of(s).unwrap()).read(VecId::POSITION)
}

/// The chains of stops.scn (second body) and of CompliantPenaltyForceField.scn, evaluated at init.
#[test]
fn compliant_example_chains_map_at_init() {
    let f = support::factory();
    let text = r#"<Node name="root" gravity="0 0 0">
  <MechanicalObject template="Vec3d" position="5 2 -1"/>
  <Node name="yz">
    <MechanicalObject template="Vec1d"/>
    <MaskMapping dofs="0 1 1"/>
    <Node name="sliding">
      <MechanicalObject template="Vec1d" position="0 0"/>
      <DifferenceFromTargetMapping targets="3 0"/>
    </Node>
  </Node>
  <Node name="stops">
    <MechanicalObject template="Vec1d"/>
    <MaskMapping dofs="1 0 0"/>
    <Node name="leftandright">
      <MechanicalObject template="Vec1d" position="0"/>
      <DistanceFromTargetMapping indices="0" targetPositions="3" restLengths="0"/>
      <Node name="offset">
        <MechanicalObject template="Vec1d" position="0"/>
        <DifferenceFromTargetMapping targets="6" inverted="1"/>
      </Node>
    </Node>
  </Node>
  <Node name="diff">
    <MechanicalObject template="Vec3d"/>
    <OffsetMapping offsets="1 1 1"/>
    <Node name="diffY">
      <MechanicalObject template="Vec1d"/>
      <MaskMapping dofs="0 1 0"/>
    </Node>
  </Node>
  <Node name="initial">
    <MechanicalObject template="Vec3d"/>
    <DifferenceFromTargetMapping/>
  </Node>
</Node>"#;
    let scene = support::load_text("compliant-chains", text, &f);
    assert_eq!(state_named(&scene, "yz"), [2.0, -1.0]);
    assert_eq!(state_named(&scene, "sliding"), [-1.0, -1.0]);
    assert_eq!(state_named(&scene, "stops"), [5.0]);
    assert_eq!(state_named(&scene, "leftandright"), [2.0]);
    assert_eq!(state_named(&scene, "offset"), [4.0]);
    assert_eq!(state_named(&scene, "diff"), [4.0, 1.0, -2.0]);
    assert_eq!(state_named(&scene, "diffY"), [1.0]);
    // no targets: the initial positions, so a zero offset
    assert_eq!(state_named(&scene, "initial"), [0.0, 0.0, 0.0]);
}

#[test]
fn subset_multi_and_difference_multi_in_a_scene() {
    let f = support::factory();
    let text = r#"<Node name="root" gravity="0 0 0">
  <Node name="a"><MechanicalObject name="dofs" position="0 0 0  1 0 0"/></Node>
  <Node name="b"><MechanicalObject name="dofs" position="-1 0 0  5 5 5"/></Node>
  <Node name="both">
    <MechanicalObject name="dofs"/>
    <SubsetMultiMapping input="@../a/dofs @../b/dofs" output="@dofs" indexPairs="1 0  0 1  1 1"/>
    <Node name="d">
      <MechanicalObject template="Vec3d"/>
      <DifferenceMapping pairs="0 1  1 2"/>
    </Node>
  </Node>
  <Node name="dm">
    <MechanicalObject name="dofs"/>
    <DifferenceMultiMapping input="@../a/dofs @../b/dofs" output="@dofs"/>
  </Node>
</Node>"#;
    let scene = support::load_text("subset-multi", text, &f);
    assert_eq!(state_named(&scene, "both"), [-1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 5.0, 5.0, 5.0]);
    assert_eq!(state_named(&scene, "d"), [2.0, 0.0, 0.0, 4.0, 5.0, 5.0]);
    // no pairs and equal sizes: (0,0), (1,1)
    assert_eq!(state_named(&scene, "dm"), [-1.0, 0.0, 0.0, 4.0, 5.0, 5.0]);
}

/// Initialises `body` under a root with a 2-point Vec3 state; returns the init error.
fn init_error(name: &str, body: &str) -> String {
    let f = support::factory();
    let text = format!(
        "<Node name=\"root\">\n  <MechanicalObject name=\"x\" position=\"0 0 0  1 0 0\"/>\n  <Node name=\"b\"><MechanicalObject name=\"y\" position=\"0 0 0\"/></Node>\n  <Node name=\"m\">\n    {body}\n  </Node>\n</Node>"
    );
    let p = settee_testkit::temp_scene(name, &text);
    let mut scene = settee_scene::load_scene(&p, &f, &settee_scene::DataPath::default()).unwrap();
    let e = settee_core::simulation::init_root(&mut scene, &f).expect_err("bad indices must stop the init");
    let msg = e.to_string();
    // positioned at the mapping's element (line 5 of the file)
    assert!(msg.contains(&format!("{name}.scn:5:")), "{msg}");
    msg
}

#[test]
fn bad_indices_are_positioned_errors() {
    let e = init_error(
        "dft",
        r#"<MechanicalObject template="Vec1d"/><DistanceFromTargetMapping input="@../x" indices="0 2" targetPositions="0 0 0  1 1 1"/>"#,
    );
    assert!(e.contains("indices[1] = 2, but the input has 2 points"), "{e}");
    let e =
        init_error("dft2", r#"<MechanicalObject template="Vec1d"/><DistanceFromTargetMapping input="@../x" indices="0 1" targetPositions="0 0 0"/>"#);
    assert!(e.contains("2 indices but 1 target positions"), "{e}");
    let e = init_error("smm", r#"<MechanicalObject/><SubsetMultiMapping input="@../x @../b/y" indexPairs="0 1  1 1"/>"#);
    assert!(e.contains("indexPairs[1] = (1, 1): input 1 has 1 elements"), "{e}");
    let e = init_error("smm2", r#"<MechanicalObject/><SubsetMultiMapping input="@../x @../b/y" indexPairs="2 0"/>"#);
    assert!(e.contains("names input 2, but the mapping has 2 inputs"), "{e}");
    let e = init_error("diff", r#"<MechanicalObject/><DifferenceMapping input="@../x" pairs="0 1  1 3"/>"#);
    assert!(e.contains("pairs[1] = (1, 3): index 3 is out of range"), "{e}");
    let e = init_error("dmm", r#"<MechanicalObject/><DifferenceMultiMapping input="@../x @../b/y" pairs="1 1"/>"#);
    assert!(e.contains("input 1 has 1 elements"), "{e}");
    let e = init_error("dmm1", r#"<MechanicalObject/><DifferenceMultiMapping input="@../x"/>"#);
    assert!(e.contains("maps two inputs, 1 given"), "{e}");
    let e = init_error("dftm", r#"<MechanicalObject/><DifferenceFromTargetMapping input="@../x" indices="5"/>"#);
    assert!(e.contains("indices[0] = 5, but the input has 2 elements"), "{e}");
    let e = init_error("dftm2", r#"<MechanicalObject/><DifferenceFromTargetMapping input="@../x" targets="0 0 0" targetIndices="0 1"/>"#);
    assert!(e.contains("targetIndices[1] = 1, but there are 1 targets"), "{e}");
    let e = init_error("mask", r#"<MechanicalObject template="Vec1d"/><MaskMapping input="@../x" dofs="1 0"/>"#);
    assert!(e.contains("dofs holds 2 values"), "{e}");
    let e = init_error("proj", r#"<MechanicalObject template="Vec1d"/><ProjectionMapping input="@../x" set="2 1 0 0"/>"#);
    assert!(e.contains("set[0] designates element 2, but the input has 2 elements"), "{e}");
}

/// Velocities are mapped at init, also when forces are not (`isMechanical="false"`).
#[test]
fn velocities_are_mapped_whatever_map_forces() {
    let f = support::factory();
    for mechanical in ["true", "false"] {
        let text = format!(
            r#"<Node name="root" gravity="0 0 0">
  <MechanicalObject position="0 0 0  1 0 0" velocity="1 2 3  4 5 7"/>
  <Node name="d">
    <MechanicalObject/>
    <DifferenceMapping pairs="0 1" isMechanical="{mechanical}"/>
  </Node>
  <Node name="t">
    <MechanicalObject template="Vec1d"/>
    <DistanceFromTargetMapping indices="1" targetPositions="0 0 0" isMechanical="{mechanical}"/>
  </Node>
</Node>"#
        );
        let scene = support::load_text(&format!("velocities-{mechanical}"), &text, &f);
        let vel = |node: &str| {
            let n = scene.preorder(Scene::ROOT).into_iter().find(|&n| scene.node(n).name == node).unwrap();
            let s = scene.slot(n, settee_core::role::MECHANICAL_STATE).unwrap();
            scene.store.get(scene.state_of(s).unwrap()).read(VecId::VELOCITY).to_vec()
        };
        assert_eq!(vel("d"), [3.0, 3.0, 4.0], "isMechanical={mechanical}");
        assert_eq!(vel("t"), [4.0], "isMechanical={mechanical}");
    }
}

/// Constraint rows on the output are carried to the inputs as `J_iᵀ·row`.
#[test]
fn constraint_rows_follow_the_jacobians() {
    use settee_core::ConstraintRows;
    let collect = |r: &ConstraintRows, row: usize| -> Vec<(usize, Vec<f64>)> { r.row(row).map(|(d, b)| (d, b.to_vec())).collect() };
    // SubsetMultiMapping: output point 0 is point 2 of input 1, point 1 is point 0 of input 0.
    let mut m = SubsetMultiMapping::build(&[(S0, 2), (S1, 3)], Layout::Vec3, S2, Layout::Vec3, vec![(1, 2), (0, 0)]);
    let mut out = ConstraintRows::new(3);
    out.add(4, 0, &[1.0, 2.0, 3.0]);
    out.add(4, 1, &[-1.0, 0.0, 0.5]);
    let (mut a, mut b) = (ConstraintRows::new(3), ConstraintRows::new(3));
    m.apply_jt_constraints(&mut [&mut a, &mut b], &out).unwrap();
    assert_eq!(collect(&a, 4), [(0, vec![-1.0, 0.0, 0.5])]);
    assert_eq!(collect(&b, 4), [(2, vec![1.0, 2.0, 3.0])]);
    // DifferenceMapping (0, 1): a row r on the output gives −r on point 0 and +r on point 1.
    let mut m = DifferenceMapping::with_pairs(DiffKind::Pairs, &[(S0, 2)], Layout::Vec3, S1, &[(0, 1)]);
    let mut out = ConstraintRows::new(3);
    out.add(0, 0, &[1.0, 2.0, 3.0]);
    let mut a = ConstraintRows::new(3);
    m.apply_jt_constraints(&mut [&mut a], &out).unwrap();
    assert_eq!(collect(&a, 0), [(0, vec![-1.0, -2.0, -3.0]), (1, vec![1.0, 2.0, 3.0])]);
}
