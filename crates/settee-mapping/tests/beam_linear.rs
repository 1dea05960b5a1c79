//! BeamLinearMapping: adjointness `⟨J·v, f⟩ = ⟨v, Jᵀ·f⟩`, Jacobian = `apply_j`, `apply_j` = the
//! finite difference of `apply`, constraint rows, and the placement of points along the beams.

use proptest::prelude::*;
use settee_core::component::Mapping;
use settee_core::math::dot_n as dot;
use settee_core::types::{quat_from_euler, rigid3_integrate};
use settee_core::{ConstraintRows, StateId};
use settee_mapping::beam_linear::{rfloor, BeamLinearMapping};

fn vec_strategy(n: usize, r: f64) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-r..r, n)
}

/// A chain of 4 frames: centers roughly along x (spacing 1.5) plus `c`, orientations from `a`.
fn chain(c: &[f64], a: &[f64]) -> Vec<f64> {
    let mut x = Vec::new();
    for k in 0..4 {
        let q = quat_from_euler([a[3 * k], a[3 * k + 1], a[3 * k + 2]]);
        x.extend_from_slice(&[1.5 * k as f64 + c[3 * k], c[3 * k + 1], c[3 * k + 2], q[0], q[1], q[2], q[3]]);
    }
    x
}

fn apply(m: &mut BeamLinearMapping, n_out: usize, x: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; 3 * n_out];
    m.apply(&mut out, &[x]).unwrap();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn beam_linear(c in vec_strategy(12, 0.3), a in vec_strategy(12, 0.5), a2 in vec_strategy(12, 1.0), pts in vec_strategy(18, 1.0),
                   v in vec_strategy(24, 1.0), f in vec_strategy(18, 1.0)) {
        // init configuration (lengths), then a different current one
        let x_init = chain(&c, &a);
        let x = chain(&c, &a2);
        // beam coordinates spread over the chain, some beyond its ends (clamped beams)
        let points: Vec<[f64; 3]> = pts.chunks(3).enumerate().map(|(i, p)| [-0.4 + 0.7 * i as f64 + 0.3 * p[0], 0.2 * p[1], 0.2 * p[2]]).collect();
        let mut m = BeamLinearMapping::build(StateId::first_in_slot(0), StateId::first_in_slot(1), &x_init, points);
        let n = 6;
        let out = apply(&mut m, n, &x);

        // adjointness
        let mut jv = vec![0.0; 3 * n];
        m.apply_j(&mut jv, &[&v]).unwrap();
        let mut jtf = vec![0.0; 24];
        m.apply_jt(&mut [jtf.as_mut_slice()], &f).unwrap();
        let (lhs, rhs) = (dot(&jv, &f), dot(&v, &jtf));
        prop_assert!((lhs - rhs).abs() <= 1e-12 * (1.0 + lhs.abs().max(rhs.abs())), "⟨Jv,f⟩ = {lhs} but ⟨v,Jᵀf⟩ = {rhs}");

        // assembled Jacobian
        let js = m.jacobians().unwrap();
        prop_assert_eq!(js.len(), 1);
        let mut jv2 = vec![0.0; 3 * n];
        js[0].mul(&mut jv2, &v);
        for (p, q) in jv.iter().zip(&jv2) {
            prop_assert!((p - q).abs() <= 1e-12 * (1.0 + p.abs()), "apply_j {p} vs J·v {q}");
        }

        // constraint rows: (Jᵀr)·v = r·(Jv) row by row
        let mut rows = ConstraintRows::new(3);
        for d in 0..n {
            rows.add(0, d, &f[3 * d..3 * d + 3]);
            if d % 2 == 0 {
                rows.add(4, d, &[f[3 * d + 2], -f[3 * d], 0.5]);
            }
        }
        let mut up = ConstraintRows::new(6);
        m.apply_jt_constraints(&mut [&mut up], &rows).unwrap();
        for r in [0, 4] {
            let (l, rr) = (up.row_dot(r, &v), rows.row_dot(r, &jv));
            prop_assert!((l - rr).abs() <= 1e-12 * (1.0 + l.abs()), "row {r}: {l} vs {rr}");
        }

        // apply_j is the derivative of apply (central differences through the exponential map)
        let h = 1e-6;
        let mut fd = vec![0.0; 3 * n];
        for sign in [1.0, -1.0] {
            let mut xs = x.clone();
            for k in 0..4 {
                let d = &v[6 * k..6 * k + 6];
                rigid3_integrate(&mut xs[7 * k..7 * k + 7], [d[0] * h * sign, d[1] * h * sign, d[2] * h * sign], [d[3] * h * sign, d[4] * h * sign, d[5] * h * sign]);
            }
            let mut o = vec![0.0; 3 * n];
            let mut m2 = BeamLinearMapping::build(StateId::first_in_slot(0), StateId::first_in_slot(1), &x_init, m.points().to_vec());
            m2.apply(&mut o, &[&xs]).unwrap();
            for k in 0..3 * n {
                fd[k] += sign * o[k] / (2.0 * h);
            }
        }
        // apply at x again (m2 above is separate; m keeps the cache of x)
        prop_assert_eq!(apply(&mut m, n, &x), out);
        for (p, q) in jv.iter().zip(&fd) {
            prop_assert!((p - q).abs() <= 1e-6 * (1.0 + p.abs()), "apply_j {p} vs finite difference {q}");
        }
    }
}

/// Points on a straight chain of unit beams at rest: beam coordinates are world coordinates
/// (frames at x = 0, 1, 2, identity orientations), the smooth blend does not move them, and a
/// force on a point at a beam's quarter is shared 1 − s : s with s = 3t² − 2t³.
#[test]
fn straight_chain_places_points_and_shares_forces() {
    let mut x = Vec::new();
    for k in 0..3 {
        x.extend_from_slice(&[k as f64, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0]);
    }
    let points = vec![[0.25, 0.1, -0.1], [1.5, -0.1, 0.1], [2.0, 0.1, 0.1], [-0.5, 0.0, 0.0]];
    let mut m = BeamLinearMapping::build(StateId::first_in_slot(0), StateId::first_in_slot(1), &x, points.clone());
    assert_eq!(m.lengths(), &[1.0, 1.0, 1.0]);
    let out = apply(&mut m, 4, &x);
    for (o, p) in out.chunks(3).zip(&points) {
        assert!((o[0] - p[0]).abs() < 1e-15 && (o[1] - p[1]).abs() < 1e-15 && (o[2] - (p[2] - 1.0)).abs() < 1e-15, "{o:?} {p:?}");
    }
    let mut f = vec![0.0; 18];
    m.apply_jt(&mut [f.as_mut_slice()], &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
    let s = 3.0 * 0.0625 - 2.0 * 0.015625;
    assert_eq!(f[1], 1.0 - s);
    assert_eq!(f[7], s);
    // moments about each frame: r0 = (0.25, 0.1, −0.1), r1 = (−0.75, 0.1, −0.1); r × (0,1,0) = (−r_z, 0, r_x)
    assert!((f[3] - 0.1 * (1.0 - s)).abs() < 1e-15 && (f[5] - 0.25 * (1.0 - s)).abs() < 1e-15);
    assert!((f[9] - 0.1 * s).abs() < 1e-15 && (f[11] + 0.75 * s).abs() < 1e-15);
}

/// SOFA's `rfloor` rounds to 2⁻¹⁶ before flooring.
#[test]
fn rfloor_matches_sofa() {
    assert_eq!(rfloor(2.0), 2);
    assert_eq!(rfloor(1.999), 1);
    assert_eq!(rfloor(1.0 - 1e-9), 1);
    assert_eq!(rfloor(-0.5), -1);
    assert_eq!(rfloor(0.0), 0);
    assert_eq!(rfloor(6.75), 6);
}
