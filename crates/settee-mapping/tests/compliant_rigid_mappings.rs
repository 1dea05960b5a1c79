//! The Compliant plugin's mappings (spec compliant §9) against the numbers of its unit tests
//! (§14.4), the Jacobian against central finite differences of `apply`, `apply_jt` as the adjoint
//! of `apply_j`, the assembled Jacobians against `apply_j`, and the geometric stiffness against
//! finite differences of `Jᵀ(x)·f`; and SOFA's RigidMapping between rigid frames with the same
//! checks.

#![allow(clippy::needless_range_loop)] // small matrices written with indices

mod support;

use settee_core::component::Mapping;
use settee_core::math::dot_n as dot;
use settee_core::types::{quat_from_euler, quat_mul, quat_rotate};
use settee_core::Layout;
use settee_mapping::common::GeometricStiffness;
use settee_mapping::rigid_joint::{AssembledRigidRigidMapping, RigidJointMapping};
use settee_mapping::se3::{self, Frame};
use settee_mapping::RigidMapping;
use support::{apply, jacobians_times, jtf, jv, S0, S1, S2};

/// A small deterministic generator (xorshift) for the test vectors.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

/// `x ⊕ h·v` element by element (the rigid exponential map for Rigid3).
fn shift(x: &[f64], v: &[f64], h: f64, l: Layout) -> Vec<f64> {
    let (cs, ds) = (l.coord_size(), l.deriv_size());
    let mut y = x.to_vec();
    for i in 0..x.len() / cs {
        l.coord_add_scaled(&mut y[cs * i..cs * i + cs], &v[ds * i..ds * i + ds], h);
    }
    y
}

/// `(o₊ ⊖ o₋)/2h` per element: for Rigid3 the centre difference and the world rotation vector
/// `log(q₊·q₋⁻¹)`.
fn out_rate(op: &[f64], om: &[f64], h: f64, l: Layout) -> Vec<f64> {
    if l != Layout::Rigid3 {
        return op.iter().zip(om).map(|(a, b)| (a - b) / (2.0 * h)).collect();
    }
    let mut d = Vec::new();
    for i in 0..op.len() / 7 {
        for c in 0..3 {
            d.push((op[7 * i + c] - om[7 * i + c]) / (2.0 * h));
        }
        let w = se3::log(quat_mul(se3::quat_at(op, i), se3::conjugate(se3::quat_at(om, i))));
        d.extend(w.iter().map(|x| x / (2.0 * h)));
    }
    d
}

/// The checks every mapping passes at configuration `x`: J·v equals the central finite difference
/// of `apply` (relative tolerance `tol`), ⟨J·v, f⟩ = ⟨v, Jᵀ·f⟩, and the assembled Jacobians give
/// `apply_j`. `outs = (coordinate count, derivative count, layout)` of the output.
fn check_jacobian(m: &mut dyn Mapping, ins: &[Layout], x: &[Vec<f64>], outs: (usize, usize, Layout), tol: f64, seed: u64) {
    let (n_coord, n_deriv, lo) = outs;
    let mut rng = Rng(seed);
    let dsizes: Vec<usize> = x.iter().zip(ins).map(|(xi, l)| xi.len() / l.coord_size() * l.deriv_size()).collect();
    for _ in 0..3 {
        let v: Vec<Vec<f64>> = dsizes.iter().map(|&n| rng.vec(n)).collect();
        let f = rng.vec(n_deriv);
        let h = 1e-6;
        let xp: Vec<Vec<f64>> = x.iter().zip(&v).zip(ins).map(|((a, b), l)| shift(a, b, h, *l)).collect();
        let xm: Vec<Vec<f64>> = x.iter().zip(&v).zip(ins).map(|((a, b), l)| shift(a, b, -h, *l)).collect();
        let op = apply(m, n_coord, &xp);
        let om = apply(m, n_coord, &xm);
        let fd = out_rate(&op, &om, h, lo);
        apply(m, n_coord, x);
        let a = jv(m, n_deriv, &v);
        for (i, (p, q)) in a.iter().zip(&fd).enumerate() {
            assert!((p - q).abs() <= tol * (1.0 + q.abs()), "row {i}: J·v = {p} but the finite difference is {q}");
        }
        let b = jtf(m, &dsizes, &f);
        let lhs = dot(&a, &f);
        let rhs: f64 = v.iter().zip(&b).map(|(p, q)| dot(p, q)).sum();
        assert!((lhs - rhs).abs() <= 1e-11 * (1.0 + lhs.abs()), "⟨Jv,f⟩ = {lhs} but ⟨v,Jᵀf⟩ = {rhs}");
        let js = m.jacobians().unwrap();
        assert_eq!(js.len(), v.len());
        for (j, vi) in js.iter().zip(&v) {
            assert_eq!(j.ncols, vi.len());
            assert_eq!(j.nrows(), n_deriv);
        }
        let sum = jacobians_times(&js, &v, n_deriv);
        for (p, q) in a.iter().zip(&sum) {
            assert!((p - q).abs() <= 1e-12 * (1.0 + p.abs()), "apply_j {p} vs J·v {q}");
        }
    }
}

/// `apply_djt(dx, f)` equals the central finite difference of `Jᵀ(x ⊕ ε·dx)·f`.
fn check_geometric_stiffness(m: &mut dyn Mapping, ins: &[Layout], x: &[Vec<f64>], n_coord: usize, f: &[f64], tol: f64, seed: u64) {
    let mut rng = Rng(seed);
    let dsizes: Vec<usize> = x.iter().zip(ins).map(|(xi, l)| xi.len() / l.coord_size() * l.deriv_size()).collect();
    let dx: Vec<Vec<f64>> = dsizes.iter().map(|&n| rng.vec(n)).collect();
    let h = 1e-6;
    let xp: Vec<Vec<f64>> = x.iter().zip(&dx).zip(ins).map(|((a, b), l)| shift(a, b, h, *l)).collect();
    let xm: Vec<Vec<f64>> = x.iter().zip(&dx).zip(ins).map(|((a, b), l)| shift(a, b, -h, *l)).collect();
    apply(m, n_coord, &xp);
    let gp = jtf(m, &dsizes, f);
    apply(m, n_coord, &xm);
    let gm = jtf(m, &dsizes, f);
    apply(m, n_coord, x);
    let mut djt: Vec<Vec<f64>> = dsizes.iter().map(|&n| vec![0.0; n]).collect();
    {
        let mut s: Vec<&mut [f64]> = djt.iter_mut().map(|v| v.as_mut_slice()).collect();
        let d: Vec<&[f64]> = dx.iter().map(|v| v.as_slice()).collect();
        m.apply_djt(&mut s, &d, f, 1.0).unwrap();
    }
    let mut nonzero = false;
    for (p, ((a, b), c)) in gp.iter().zip(&gm).zip(&djt).enumerate() {
        for i in 0..a.len() {
            let fd = (a[i] - b[i]) / (2.0 * h);
            nonzero |= fd.abs() > 1e-3;
            assert!((fd - c[i]).abs() <= tol * (1.0 + fd.abs()), "input {p} dof {i}: DJT {} vs FD {fd}", c[i]);
        }
    }
    assert!(nonzero, "the test configuration has no geometric stiffness to check");
}

fn rigid(c: [f64; 3], q: [f64; 4]) -> Vec<f64> {
    vec![c[0], c[1], c[2], q[0], q[1], q[2], q[3]]
}

// ----- RigidJointMapping ------------------------------------------------------------------------

/// §14.4 RigidJointMapping_test: two frames with the same orientation (Euler π/2, π/8, π/4),
/// centres (0,1,1) and (0,3,0), pair (0,1): the output is log(g₀⁻¹·g₁) = (R₀ᵀ(0,2,−1), 0), and
/// the Jacobian matches finite differences there.
#[test]
fn rigid_joint_spec_values_and_jacobian() {
    use std::f64::consts::PI;
    let q = quat_from_euler([PI / 2.0, PI / 8.0, PI / 4.0]);
    let mut x = rigid([0.0, 1.0, 1.0], q);
    x.extend(rigid([0.0, 3.0, 0.0], q));
    let mut m = RigidJointMapping::build(S0, S1, 2, vec![[0, 1]], true, true, false).unwrap();
    let out = apply(&mut m, 6, std::slice::from_ref(&x));
    let t = quat_rotate(se3::conjugate(q), [0.0, 2.0, -1.0]);
    for c in 0..3 {
        assert!((out[c] - t[c]).abs() < 1e-14, "{out:?} vs {t:?}");
        assert!(out[3 + c].abs() < 1e-14, "{out:?}");
    }
    // The relative translation keeps the distance between the centres.
    assert!((out[..3].iter().map(|v| v * v).sum::<f64>().sqrt() - 5f64.sqrt()).abs() < 1e-14);
    check_jacobian(&mut m, &[Layout::Rigid3], &[x], (6, 6, Layout::Vec6), 1e-7, 7);
}

/// Away from equal orientations, the translation rows are exact and `exact_dlog` makes the
/// rotation rows exact too; `rotation`/`translation` zero the other half of the output and J.
#[test]
fn rigid_joint_exact_dlog_and_flags() {
    let mut x = rigid([0.3, -1.0, 2.0], quat_from_euler([0.4, -1.1, 0.7]));
    x.extend(rigid([1.5, 0.5, -0.5], quat_from_euler([-0.9, 0.3, 2.1])));
    x.extend(rigid([-2.0, 0.0, 1.0], quat_from_euler([0.1, 0.2, -0.3])));
    let pairs = vec![[0, 1], [2, 0], [1, 2]];
    let mut m = RigidJointMapping::build(S0, S1, 3, pairs.clone(), true, true, true).unwrap();
    let out = apply(&mut m, 18, std::slice::from_ref(&x));
    // Output = (R_pᵀ(c_c − c_p), log(q_p⁻¹ q_c)), and exp of the log gives back the relative rotation.
    for (i, &[p, c]) in pairs.iter().enumerate() {
        let (gp, gc) = (Frame::at(&x, p), Frame::at(&x, c));
        let t = quat_rotate(se3::conjugate(gp.q), [gc.c[0] - gp.c[0], gc.c[1] - gp.c[1], gc.c[2] - gp.c[2]]);
        let rel = quat_mul(se3::conjugate(gp.q), gc.q);
        let back = se3::exp([out[6 * i + 3], out[6 * i + 4], out[6 * i + 5]]);
        let d = (dot(&back, &rel)).abs();
        assert!((d - 1.0).abs() < 1e-13, "pair {i}: exp(log) ≠ relative rotation");
        for k in 0..3 {
            assert!((out[6 * i + k] - t[k]).abs() < 1e-13);
        }
    }
    check_jacobian(&mut m, &[Layout::Rigid3], std::slice::from_ref(&x), (18, 18, Layout::Vec6), 1e-6, 11);

    // Approximate dlog: translation rows still exact, rotation rows differ from the derivative.
    let mut a = RigidJointMapping::build(S0, S1, 3, pairs.clone(), true, true, false).unwrap();
    apply(&mut a, 18, std::slice::from_ref(&x));
    let (je, ja) = (m.jacobians().unwrap(), a.jacobians().unwrap());
    for r in 0..18 {
        if r % 6 < 3 {
            assert_eq!(je[0].rows[r], ja[0].rows[r], "translation row {r}");
        }
    }
    assert!((0..18).any(|r| r % 6 >= 3 && je[0].rows[r] != ja[0].rows[r]));

    for (rotation, translation) in [(false, true), (true, false)] {
        let mut f = RigidJointMapping::build(S0, S1, 3, pairs.clone(), rotation, translation, true).unwrap();
        let o = apply(&mut f, 18, std::slice::from_ref(&x));
        let j = f.jacobians().unwrap();
        for r in 0..18 {
            let kept = if r % 6 < 3 { translation } else { rotation };
            assert_eq!(o[r], if kept { out[r] } else { 0.0 }, "flags ({rotation}, {translation}) row {r}");
            if !kept {
                assert!(j[0].rows[r].is_empty());
            } else {
                assert_eq!(j[0].rows[r], je[0].rows[r]);
            }
        }
        check_jacobian(&mut f, &[Layout::Rigid3], std::slice::from_ref(&x), (18, 18, Layout::Vec6), 1e-6, 13);
    }
}

#[test]
fn rigid_joint_bad_pair_is_an_error() {
    let e = RigidJointMapping::build(S0, S1, 2, vec![[0, 1], [1, 2]], true, true, false).err().expect("frame 2 does not exist");
    assert!(e.to_string().contains("pair 1 (1 2) refers to frame 2, but the input has 2 frames"), "{e}");
}

// ----- AssembledRigidRigidMapping ---------------------------------------------------------------

/// §14.4 AssembledRigidRigidMapping_test: input rotation exp(π/3·x), centre (1,−5,20); offset
/// rotation exp(π/4·y), centre (0,1,0) ⇒ the composed frame (q·q_h, c + q·t_h); J and the
/// (non-symmetric, mode 1) geometric stiffness against finite differences.
#[test]
fn assembled_rigid_rigid_spec_values() {
    use std::f64::consts::PI;
    let q = se3::exp([PI / 3.0, 0.0, 0.0]);
    let x = rigid([1.0, -5.0, 20.0], q);
    let h = Frame { c: [0.0, 1.0, 0.0], q: se3::exp([0.0, PI / 4.0, 0.0]) };
    let mut m = AssembledRigidRigidMapping::build(S0, S1, 1, vec![(0, h)], GeometricStiffness::Exact).unwrap();
    let out = apply(&mut m, 7, std::slice::from_ref(&x));
    // exp(π/3·x) turns (0,1,0) into (0, cos π/3, sin π/3).
    let expected_c = [1.0, -5.0 + 0.5, 20.0 + 3f64.sqrt() / 2.0];
    let expected_q = quat_mul(q, h.q);
    for c in 0..3 {
        assert!((out[c] - expected_c[c]).abs() < 1e-14, "{out:?}");
    }
    for c in 0..4 {
        assert!((out[3 + c] - expected_q[c]).abs() < 1e-15, "{out:?}");
    }
    check_jacobian(&mut m, &[Layout::Rigid3], std::slice::from_ref(&x), (7, 6, Layout::Rigid3), 1e-7, 3);
    let f = [0.3, -1.2, 0.7, 0.2, 0.1, -0.4];
    check_geometric_stiffness(&mut m, &[Layout::Rigid3], std::slice::from_ref(&x), 7, &f, 1e-6, 5);
}

/// Several offsets on several parents (the Pendulum's `source` layout); Stabilized keeps a
/// symmetric negative semi-definite block, None adds nothing.
#[test]
fn assembled_rigid_rigid_several_frames_and_stabilized() {
    let mut x = rigid([0.5, 0.0, -1.0], quat_from_euler([0.3, 0.2, -0.5]));
    x.extend(rigid([-1.0, 2.0, 0.0], quat_from_euler([1.0, -0.4, 0.9])));
    let src = vec![
        (0, Frame { c: [0.5, 0.0, 0.0], q: [0.0, 0.0, 0.0, 1.0] }),
        (1, Frame { c: [0.0, -0.3, 0.2], q: quat_from_euler([0.1, 0.5, 0.0]) }),
        (0, Frame { c: [0.0, 0.0, 1.0], q: quat_from_euler([0.0, 0.0, 1.2]) }),
    ];
    let mut m = AssembledRigidRigidMapping::build(S0, S1, 2, src.clone(), GeometricStiffness::Exact).unwrap();
    apply(&mut m, 21, std::slice::from_ref(&x));
    check_jacobian(&mut m, &[Layout::Rigid3], std::slice::from_ref(&x), (21, 18, Layout::Rigid3), 1e-7, 17);
    let f: Vec<f64> = Rng(23).vec(18);
    check_geometric_stiffness(&mut m, &[Layout::Rigid3], std::slice::from_ref(&x), 21, &f, 1e-6, 19);

    let mut s = AssembledRigidRigidMapping::build(S0, S1, 2, src.clone(), GeometricStiffness::Stabilized).unwrap();
    apply(&mut s, 21, std::slice::from_ref(&x));
    // The stabilized block: K·e_k for each rotation DOF, symmetric, with ⟨dw, K dw⟩ ≤ 0.
    for frame in 0..2 {
        let mut k = [[0.0; 3]; 3];
        for c in 0..3 {
            let mut dx = vec![0.0; 12];
            dx[6 * frame + 3 + c] = 1.0;
            let mut r = vec![0.0; 12];
            s.apply_djt(&mut [r.as_mut_slice()], &[&dx], &f, 1.0).unwrap();
            for a in 0..3 {
                k[a][c] = r[6 * frame + 3 + a];
            }
            assert!(r[6 * frame..6 * frame + 3].iter().all(|v| *v == 0.0));
        }
        for a in 0..3 {
            for c in 0..3 {
                assert!((k[a][c] - k[c][a]).abs() < 1e-12);
            }
        }
        let mut rng = Rng(29 + frame as u64);
        for _ in 0..20 {
            let w = rng.vec(3);
            let q: f64 = (0..3).map(|a| w[a] * (0..3).map(|c| k[a][c] * w[c]).sum::<f64>()).sum();
            assert!(q <= 1e-12, "stabilized block not NSD: {q}");
        }
    }
    let mut n = AssembledRigidRigidMapping::build(S0, S1, 2, src, GeometricStiffness::None).unwrap();
    apply(&mut n, 21, std::slice::from_ref(&x));
    let mut r = vec![0.0; 12];
    n.apply_djt(&mut [r.as_mut_slice()], &[&[1.0; 12]], &f, 1.0).unwrap();
    assert!(r.iter().all(|v| *v == 0.0));
    let _ = S2;
}

// ----- Dot products -----------------------------------------------------------------------------

use settee_mapping::dot_product::{DotProductMapping, Kind as DotKind};
use settee_mapping::normalization::NormalizationMapping;
use settee_mapping::winch::WinchMultiMapping;

fn dot_points() -> Vec<f64> {
    vec![1.0, 1.0, 1.0, 5.0, 6.0, 7.0, 12.0, -3.0, 6.0, 8.0, -2.0, -4.0]
}

/// §14.4 DotProductMapping_test: pairs (0,1), (2,3), (0,3) ⇒ (18, 78, 2); J and the geometric
/// stiffness against finite differences (a self pair (2,2) included: `|x|²`).
#[test]
fn dot_product_spec_values() {
    let x = dot_points();
    let ends = vec![[(0, 0), (0, 1)], [(0, 2), (0, 3)], [(0, 0), (0, 3)]];
    let mut m = DotProductMapping::build(DotKind::Pairs, &[(S0, 4)], S1, ends.clone(), vec![]).unwrap();
    assert_eq!(apply(&mut m, 3, std::slice::from_ref(&x)), vec![18.0, 78.0, 2.0]);
    check_jacobian(&mut m, &[Layout::Vec3], std::slice::from_ref(&x), (3, 3, Layout::Vec1), 1e-6, 31);
    check_geometric_stiffness(&mut m, &[Layout::Vec3], std::slice::from_ref(&x), 3, &[0.5, -1.5, 2.0], 1e-7, 37);

    let mut s = DotProductMapping::build(DotKind::Pairs, &[(S0, 4)], S1, vec![[(0, 2), (0, 2)], [(0, 3), (0, 1)]], vec![]).unwrap();
    assert_eq!(apply(&mut s, 2, std::slice::from_ref(&x)), vec![189.0, 0.0]);
    check_jacobian(&mut s, &[Layout::Vec3], std::slice::from_ref(&x), (2, 2, Layout::Vec1), 1e-6, 41);
    check_geometric_stiffness(&mut s, &[Layout::Vec3], std::slice::from_ref(&x), 2, &[0.7, -0.3], 1e-7, 43);

    let e = DotProductMapping::build(DotKind::Pairs, &[(S0, 4)], S1, vec![[(0, 0), (0, 4)]], vec![]).err().unwrap();
    assert!(e.to_string().contains("product 0 refers to vector 4, but the input has 4 vectors"), "{e}");
}

/// §14.4 MultiMapping: parents [(1,1,1),(65,3,−51)] and [(23,35,−4),(−100,100,20)], default pairs
/// (0,i)·(1,i) ⇒ (54, −7220).
#[test]
fn dot_product_multi_spec_values() {
    let x0 = vec![1.0, 1.0, 1.0, 65.0, 3.0, -51.0];
    let x1 = vec![23.0, 35.0, -4.0, -100.0, 100.0, 20.0];
    let ends = vec![[(0, 0), (1, 0)], [(0, 1), (1, 1)]];
    let mut m = DotProductMapping::build(DotKind::Multi, &[(S0, 2), (S1, 2)], S2, ends, vec![]).unwrap();
    let xs = [x0.clone(), x1.clone()];
    assert_eq!(apply(&mut m, 2, &xs), vec![54.0, -7220.0]);
    check_jacobian(&mut m, &[Layout::Vec3, Layout::Vec3], &xs, (2, 2, Layout::Vec1), 1e-6, 47);
    check_geometric_stiffness(&mut m, &[Layout::Vec3, Layout::Vec3], &xs, 2, &[0.25, -0.5], 1e-7, 53);
    // Across and inside parents.
    let mut c = DotProductMapping::build(DotKind::Multi, &[(S0, 2), (S1, 2)], S2, vec![[(1, 1), (0, 0)], [(1, 0), (1, 1)]], vec![]).unwrap();
    assert_eq!(apply(&mut c, 2, &xs), vec![20.0, -2300.0 + 3500.0 - 80.0]);
    check_jacobian(&mut c, &[Layout::Vec3, Layout::Vec3], &xs, (2, 2, Layout::Vec1), 1e-6, 59);
    check_geometric_stiffness(&mut c, &[Layout::Vec3, Layout::Vec3], &xs, 2, &[1.0, 0.5], 1e-7, 61);
    let e = DotProductMapping::build(DotKind::Multi, &[(S0, 2), (S1, 2)], S2, vec![[(2, 0), (0, 0)]], vec![]).err().unwrap();
    assert!(e.to_string().contains("refers to input 2, but the mapping has 2 inputs"), "{e}");
}

/// §14.4 FromTarget: indices (0,1,2), targets (10,−20,30), (1,1,1) (the last repeated) ⇒
/// (20, 18, 15). Linear: no geometric stiffness.
#[test]
fn dot_product_from_target_spec_values() {
    let x = dot_points();
    let ends = (0..3).map(|i| [(0, i), (0, i)]).collect();
    let mut m = DotProductMapping::build(DotKind::FromTarget, &[(S0, 4)], S1, ends, vec![[10.0, -20.0, 30.0], [1.0, 1.0, 1.0]]).unwrap();
    assert_eq!(apply(&mut m, 3, std::slice::from_ref(&x)), vec![20.0, 18.0, 15.0]);
    check_jacobian(&mut m, &[Layout::Vec3], std::slice::from_ref(&x), (3, 3, Layout::Vec1), 1e-6, 67);
    let mut r = vec![0.0; 12];
    m.apply_djt(&mut [r.as_mut_slice()], &[&[1.0; 12]], &[1.0, 1.0, 1.0], 1.0).unwrap();
    assert!(r.iter().all(|v| *v == 0.0));
    let e = DotProductMapping::build(DotKind::FromTarget, &[(S0, 4)], S1, vec![[(0, 0), (0, 0)]], vec![]).err().unwrap();
    assert!(e.to_string().contains("no targets"), "{e}");
}

/// §14.4 NormalizationMapping_test: (1,1,1) ⇒ (1,1,1)/√3, (5,6,7) ⇒ (5,6,7)/√110.
#[test]
fn normalization_spec_values() {
    let x = vec![1.0, 1.0, 1.0, 5.0, 6.0, 7.0];
    let mut m = NormalizationMapping::build(S0, S1, 2, vec![]).unwrap();
    let out = apply(&mut m, 6, std::slice::from_ref(&x));
    let expected = [1.0 / 3f64.sqrt(), 1.0 / 3f64.sqrt(), 1.0 / 3f64.sqrt(), 5.0 / 110f64.sqrt(), 6.0 / 110f64.sqrt(), 7.0 / 110f64.sqrt()];
    for (o, e) in out.iter().zip(expected) {
        assert!((o - e).abs() < 1e-15, "{out:?}");
    }
    check_jacobian(&mut m, &[Layout::Vec3], std::slice::from_ref(&x), (6, 6, Layout::Vec3), 1e-8, 71);
    // A selection, in another order.
    let mut s = NormalizationMapping::build(S0, S1, 2, vec![1, 0, 1]).unwrap();
    let out = apply(&mut s, 9, std::slice::from_ref(&x));
    assert!((out[0] - expected[3]).abs() < 1e-15 && (out[3] - expected[0]).abs() < 1e-15);
    check_jacobian(&mut s, &[Layout::Vec3], std::slice::from_ref(&x), (9, 9, Layout::Vec3), 1e-8, 73);
    let e = NormalizationMapping::build(S0, S1, 2, vec![2]).err().unwrap();
    assert!(e.to_string().contains("indices[0] = 2, but the input has 2 vectors"), "{e}");
}

/// §14.4 WinchMultiMapping_test: in0 = 1, in1 = 2, factor 0.25 ⇒ −0.5.
#[test]
fn winch_spec_values() {
    let mut m = WinchMultiMapping::build([(S0, 1), (S1, 1)], S2, 0.25).unwrap();
    assert_eq!(apply(&mut m, 1, &[vec![1.0], vec![2.0]]), vec![-0.5]);
    let xs = [vec![1.0, -3.0], vec![2.0, 0.5, 7.0]];
    let mut w = WinchMultiMapping::build([(S0, 2), (S1, 3)], S2, 0.25).unwrap();
    assert_eq!(apply(&mut w, 2, &xs), vec![-0.5, 3.125]);
    check_jacobian(&mut w, &[Layout::Vec1, Layout::Vec1], &xs, (2, 2, Layout::Vec1), 1e-6, 79);
    let e = WinchMultiMapping::build([(S0, 2), (S1, 1)], S2, 0.25).err().unwrap();
    assert!(e.to_string().contains("the second input has 1 values but the first has 2"), "{e}");
}

// ----- Safe distances ---------------------------------------------------------------------------

use settee_mapping::safe_distance::{Kind as SafeKind, Row, SafeDistanceMapping};

fn norm3(v: &[f64]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// §14.4 SafeDistanceMapping_test: pairs (0,1), (0,2), (0,2), rest (0, 0, 1), GS exact;
/// x0 = 0, x1 = (325, 23, −54), x2 = (1e-5, −1e-5, 1e-7) ⇒ (|x1|, x2 (difference failsafe:
/// 3 rows), |x2| − 1): 5 values.
#[test]
fn safe_distance_spec_values() {
    let x = vec![0.0, 0.0, 0.0, 325.0, 23.0, -54.0, 1e-5, -1e-5, 1e-7];
    let pairs = vec![[0, 1], [0, 2], [0, 2]];
    let mut m =
        SafeDistanceMapping::build(SafeKind::Pairs, S0, S1, &x, pairs, vec![], vec![], vec![0.0, 0.0, 1.0], GeometricStiffness::Exact).unwrap();
    assert_eq!(m.modes(), &[Row::Distance, Row::Difference, Row::Distance]);
    let out = apply(&mut m, 5, std::slice::from_ref(&x));
    let expected = [norm3(&x[3..6]), 1e-5, -1e-5, 1e-7, norm3(&x[6..9]) - 1.0];
    for (o, e) in out.iter().zip(expected) {
        assert!((o - e).abs() < 1e-14 * (1.0 + e.abs()), "{out:?} vs {expected:?}");
    }
    // Below ε with a rest length: the arbitrary direction (1,1,1)/√3.
    let j = m.jacobians().unwrap();
    let p = 1.0 / 3f64.sqrt();
    assert_eq!(j[0].rows[4], vec![(0, -p), (1, -p), (2, -p), (6, p), (7, p), (8, p)]);
    assert_eq!(j[0].rows[2], vec![(1, -1.0), (7, 1.0)]);
    // The rows that are differentiable there against finite differences, and the exact GS.
    let mut d =
        SafeDistanceMapping::build(SafeKind::Pairs, S0, S1, &x, vec![[0, 1], [0, 2]], vec![], vec![], vec![0.0, 0.0], GeometricStiffness::Exact)
            .unwrap();
    check_jacobian(&mut d, &[Layout::Vec3], std::slice::from_ref(&x), (4, 4, Layout::Vec1), 1e-6, 83);
    check_geometric_stiffness(&mut d, &[Layout::Vec3], std::slice::from_ref(&x), 4, &[-500.0, 1.0, 2.0, 3.0], 1e-6, 89);
    let e =
        SafeDistanceMapping::build(SafeKind::Pairs, S0, S1, &x, vec![[0, 3]], vec![], vec![], vec![0.0], GeometricStiffness::Exact).err().unwrap();
    assert!(e.to_string().contains("pair 0 (0 3) refers to point 3, but the input has 3 points"), "{e}");
}

/// Away from null lengths, with pairs in both orders: J and the geometric stiffness (Exact)
/// against finite differences; Stabilized keeps only the rows in tension (f < 0).
#[test]
fn safe_distance_regular_configuration() {
    let x = vec![0.1, 0.2, -0.3, 1.0, -0.5, 0.7, -0.8, 1.1, 0.4, 0.3, 0.3, 0.3];
    let pairs = vec![[0, 1], [2, 1], [3, 0]];
    let rest = vec![0.5, 0.0, 1.0];
    let mut m =
        SafeDistanceMapping::build(SafeKind::Pairs, S0, S1, &x, pairs.clone(), vec![], vec![], rest.clone(), GeometricStiffness::Exact).unwrap();
    assert_eq!(SafeDistanceMapping::size_of(m.modes()), 3);
    check_jacobian(&mut m, &[Layout::Vec3], std::slice::from_ref(&x), (3, 3, Layout::Vec1), 1e-6, 97);
    check_geometric_stiffness(&mut m, &[Layout::Vec3], std::slice::from_ref(&x), 3, &[0.8, -1.3, 0.6], 1e-6, 101);
    let djt = |gs: GeometricStiffness, f: &[f64]| -> Vec<f64> {
        let mut m = SafeDistanceMapping::build(SafeKind::Pairs, S0, S1, &x, pairs.clone(), vec![], vec![], rest.clone(), gs).unwrap();
        apply(&mut m, 3, std::slice::from_ref(&x));
        let mut r = vec![0.0; 12];
        m.apply_djt(&mut [r.as_mut_slice()], &[&Rng(3).vec(12)], f, 1.0).unwrap();
        r
    };
    assert_eq!(djt(GeometricStiffness::Stabilized, &[0.8, -1.3, 0.6]), djt(GeometricStiffness::Exact, &[0.0, -1.3, 0.0]));
    assert!(djt(GeometricStiffness::None, &[0.8, -1.3, 0.6]).iter().all(|v| *v == 0.0));
}

/// The layout follows the configuration when the output vector has the new size, and keeps the
/// current one otherwise (the state is resized at the next step's start).
#[test]
fn safe_distance_layout_switches_with_the_configuration() {
    let near = vec![0.0, 0.0, 0.0, 1e-5, 0.0, 0.0];
    let far = vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0];
    let mut m =
        SafeDistanceMapping::build(SafeKind::Pairs, S0, S1, &near, vec![[0, 1]], vec![], vec![], vec![0.0], GeometricStiffness::Exact).unwrap();
    assert_eq!(m.modes(), &[Row::Difference]);
    // A 3-value output vector: the difference, even far apart.
    assert_eq!(apply(&mut m, 3, std::slice::from_ref(&far)), vec![2.0, 0.0, 0.0]);
    assert_eq!(m.modes(), &[Row::Difference]);
    // A 1-value output vector: the distance.
    assert_eq!(apply(&mut m, 1, std::slice::from_ref(&far)), vec![2.0]);
    assert_eq!(m.modes(), &[Row::Distance]);
    assert_eq!(m.jacobians().unwrap()[0].rows, vec![vec![(0, -1.0), (3, 1.0)]]);
    // Back to a null length: the 1-value vector keeps the distance with the fallback direction.
    assert_eq!(apply(&mut m, 1, std::slice::from_ref(&near)), vec![1e-5]);
    let mut out = vec![0.0; 2];
    let e = m.apply(&mut out, &[&near]).expect_err("neither layout has 2 values");
    assert!(e.to_string().contains("the output has 2 values"), "{e}");
}

/// §14.4 SafeDistanceFromTargetMapping tests: the difference failsafe (5 values) and given
/// directions (3 values: the distance is always computed; J is minus the given direction where
/// the length is null, as in the plugin).
#[test]
fn safe_distance_from_target_spec_values() {
    let x = vec![325.0, 23.0, -54.0, 1e-5, -1e-5, 1e-7];
    let targets = vec![[0.0; 3]; 3];
    let idx = vec![[0, 0], [1, 1], [1, 1]];
    let rest = vec![0.0, 0.0, 1.0];
    let mut m =
        SafeDistanceMapping::build(SafeKind::FromTarget, S0, S1, &x, idx.clone(), targets.clone(), vec![], rest.clone(), GeometricStiffness::Exact)
            .unwrap();
    let out = apply(&mut m, 5, std::slice::from_ref(&x));
    let expected = [norm3(&x[..3]), 1e-5, -1e-5, 1e-7, norm3(&x[3..]) - 1.0];
    for (o, e) in out.iter().zip(expected) {
        assert!((o - e).abs() < 1e-14 * (1.0 + e.abs()), "{out:?}");
    }
    assert_eq!(m.jacobians().unwrap()[0].rows[1], vec![(3, 1.0)]);
    let dirs = vec![[325.0, 23.0, -54.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]];
    let mut g = SafeDistanceMapping::build(SafeKind::FromTarget, S0, S1, &x, idx, targets, dirs, rest, GeometricStiffness::Exact).unwrap();
    let out = apply(&mut g, 3, std::slice::from_ref(&x));
    let expected = [norm3(&x[..3]), norm3(&x[3..]), norm3(&x[3..]) - 1.0];
    for (o, e) in out.iter().zip(expected) {
        assert!((o - e).abs() < 1e-14 * (1.0 + e.abs()), "{out:?}");
    }
    let j = g.jacobians().unwrap();
    assert_eq!(j[0].rows[1], vec![(3, -1.0)]);
    let n = norm3(&x[..3]);
    for c in 0..3 {
        assert!((j[0].rows[0][c].1 - x[c] / n).abs() < 1e-15);
    }
    // Regular configuration: J and GS against finite differences.
    let y = vec![1.0, -0.5, 0.7, -0.8, 1.1, 0.4];
    let mut r = SafeDistanceMapping::build(
        SafeKind::FromTarget,
        S0,
        S1,
        &y,
        vec![[0, 0], [1, 1], [0, 0]],
        vec![[0.2, 0.1, 0.0], [1.0, 1.0, 1.0], [-1.0, 0.0, 2.0]],
        vec![],
        vec![0.3, 0.0, 1.0],
        GeometricStiffness::Exact,
    )
    .unwrap();
    check_jacobian(&mut r, &[Layout::Vec3], std::slice::from_ref(&y), (3, 3, Layout::Vec1), 1e-6, 103);
    check_geometric_stiffness(&mut r, &[Layout::Vec3], std::slice::from_ref(&y), 3, &[0.9, -1.1, 0.4], 1e-6, 107);
    let e = SafeDistanceMapping::build(
        SafeKind::FromTarget,
        S0,
        S1,
        &y,
        vec![[0, 0], [1, 1]],
        vec![[0.0; 3]],
        vec![],
        vec![0.0, 0.0],
        GeometricStiffness::Exact,
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("1 targets for 2 indices"), "{e}");
}

// ----- RigidMapping, Rigid3d → Rigid3d ---------------------------------------------------------

/// Output frames are the input frame composed with their local frame (centre `c + q·p`,
/// orientation `q·o`), and the Jacobian, its transpose and the assembled Jacobian agree with
/// finite differences (SOFA's `RigidMapping<Rigid3, Rigid3>`).
#[test]
fn rigid_mapping_between_frames_composes_and_derives() {
    use std::f64::consts::PI;
    let q0 = quat_from_euler([PI / 5.0, -PI / 7.0, PI / 3.0]);
    let q1 = quat_from_euler([0.3, 0.2, -0.4]);
    let o = quat_from_euler([-0.5, 0.1, 0.7]);
    let local = vec![[0.5, -1.0, 2.0, o[0], o[1], o[2], o[3]], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]];
    let mut m = RigidMapping::build_frames(S0, S1, 2, local.clone(), vec![0, 1]);
    let x = vec![[rigid([1.0, 2.0, 3.0], q0), rigid([-1.0, 0.0, 0.5], q1)].concat()];
    let out = apply(&mut m, 14, &x);
    let c = quat_rotate(q0, [0.5, -1.0, 2.0]);
    let expected_o = quat_mul(q0, o);
    for k in 0..3 {
        assert!((out[k] - ([1.0, 2.0, 3.0][k] + c[k])).abs() < 1e-15);
    }
    for k in 0..4 {
        assert!((out[3 + k] - expected_o[k]).abs() < 1e-15);
    }
    check_jacobian(&mut m, &[Layout::Rigid3], &x, (14, 12, Layout::Rigid3), 1e-6, 7);
}
