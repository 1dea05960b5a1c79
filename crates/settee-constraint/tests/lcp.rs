#![allow(clippy::needless_range_loop)]
//! LCPConstraintSolver's kernels on hand-built problems: known answers, complementarity,
//! the Coulomb cone, agreement with BlockGaussSeidel and between the built and unbuilt paths,
//! the `minW`/`maxF` filters and the persistent-id warm start.

mod common;

use settee_constraint::resolution::{UnilateralResolution, UnilateralWithFrictionResolution};
use settee_constraint::solvers::generic::DenseUnbuilt;
use settee_constraint::solvers::lcp::{BlockInfo, ForceHistory};
use settee_constraint::solvers::{
    block_gauss_seidel, gauss_seidel_lcp1, lcp_gauss_seidel_unbuilt, nlcp_gauss_seidel, nlcp_gauss_seidel_unbuilt, NlcpOptions,
};
use settee_core::arena::Arena;
use settee_core::constraint::{ConstraintResolution, DenseMatrix};
use settee_core::ComponentId;

/// `W = J·M⁻¹·Jᵀ` for `n` rows over 12 DOFs with a fixed pseudo-random J and masses in [1, 2]:
/// symmetric positive (semi-)definite, dense, as a compliance is.
fn compliance(n: usize, seed: u64) -> DenseMatrix {
    let mut s = seed;
    let mut rnd = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let m = 12;
    let j: Vec<f64> = (0..n * m).map(|_| rnd()).collect();
    let minv: Vec<f64> = (0..m).map(|k| 1.0 / (1.5 + 0.5 * ((k as f64) * 0.7).sin())).collect();
    let mut w = DenseMatrix::zeros(n);
    for a in 0..n {
        for b in 0..n {
            let mut acc = 0.0;
            for k in 0..m {
                acc += j[a * m + k] * minv[k] * j[b * m + k];
            }
            w.set(a, b, acc);
        }
    }
    w
}

fn mul(w: &DenseMatrix, f: &[f64], q: &[f64]) -> Vec<f64> {
    (0..w.n).map(|i| q[i] + (0..w.n).map(|k| w.get(i, k) * f[k]).sum::<f64>()).collect()
}

fn opts(mu: f64, tol: f64) -> NlcpOptions {
    NlcpOptions { mu, tolerance: tol, max_iterations: 10000, use_initial_f: false, min_w: 0.0, max_f: 0.0 }
}

fn bgs(w: &DenseMatrix, dfree: &[f64], res: Vec<Box<dyn ConstraintResolution>>, tol: f64) -> Vec<f64> {
    let (mut p, _) = common::problem(w.clone(), dfree, res, tol, 10000, false);
    assert!(block_gauss_seidel(&mut p).converged);
    p.lambda
}

#[test]
fn frictionless_known_answers() {
    // One contact: λ = −q/W = 2.
    let w = DenseMatrix { n: 1, data: vec![2.0] };
    let mut f = vec![0.0];
    let o = gauss_seidel_lcp1(&[-4.0], &w, &mut f, 1e-12, 100, 0.0, 0.0).unwrap();
    assert!(o.converged);
    assert_eq!(f, vec![2.0]);
    // Two coupled contacts, both active: [[2,1],[1,2]]λ = [3,3] → λ = (1, 1).
    let w = DenseMatrix { n: 2, data: vec![2.0, 1.0, 1.0, 2.0] };
    let mut f = vec![0.0; 2];
    gauss_seidel_lcp1(&[-3.0, -3.0], &w, &mut f, 1e-14, 1000, 0.0, 0.0).unwrap();
    assert!((f[0] - 1.0).abs() < 1e-12 && (f[1] - 1.0).abs() < 1e-12, "{f:?}");
    // Second contact separating: λ = (1.5, 0), its gap 1.5 + 5.
    let mut f = vec![0.0; 2];
    gauss_seidel_lcp1(&[-3.0, 5.0], &w, &mut f, 1e-14, 1000, 0.0, 0.0).unwrap();
    assert_eq!(f, vec![1.5, 0.0]);
    assert_eq!(mul(&w, &f, &[-3.0, 5.0]), vec![0.0, 6.5]);
}

#[test]
fn frictionless_complementarity_and_agreement_with_block_gauss_seidel() {
    let n = 8;
    let w = compliance(n, 7);
    let q: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { 0.4 } else { -1.0 + 0.1 * i as f64 }).collect();
    let mut f = vec![0.0; n];
    let o = gauss_seidel_lcp1(&q, &w, &mut f, 1e-13, 100000, 0.0, 0.0).unwrap();
    assert!(o.converged, "{:?}", o.errors.last());
    let d = mul(&w, &f, &q);
    let mut active = 0;
    for i in 0..n {
        assert!(f[i] >= 0.0);
        assert!(d[i] >= -1e-9, "row {i}: w = {}", d[i]);
        assert!((f[i] * d[i]).abs() < 1e-9, "row {i}: λ·w = {}", f[i] * d[i]);
        if f[i] > 0.0 {
            active += 1;
        }
    }
    assert!(active > 0 && active < n, "a mixed problem: {active} active rows of {n}");
    let res: Vec<Box<dyn ConstraintResolution>> = (0..n).map(|_| Box::new(UnilateralResolution::new()) as Box<dyn ConstraintResolution>).collect();
    let l = bgs(&w, &q, res, 1e-14);
    for i in 0..n {
        assert!((l[i] - f[i]).abs() < 1e-8, "row {i}: LCP {} vs BGS {}", f[i], l[i]);
    }
    // The unbuilt kernel (W through the "corrections", only its diagonal given) agrees.
    let mut wdiag = DenseMatrix::zeros(n);
    for i in 0..n {
        wdiag.set(i, i, w.get(i, i));
    }
    let mut fu = vec![0.0; n];
    let mut ops = DenseUnbuilt { w: w.clone(), f: vec![0.0; n] };
    let seq: Vec<usize> = (0..n).collect();
    let o = lcp_gauss_seidel_unbuilt(&q, &wdiag, &mut fu, &seq, 1e-14, 100000, &mut ops).unwrap();
    assert!(o.converged);
    for i in 0..n {
        assert!((fu[i] - f[i]).abs() < 1e-8, "row {i}: unbuilt {} vs built {}", fu[i], f[i]);
        // The corrections' accumulated force is the solution itself.
        assert!((ops.f[i] - fu[i]).abs() < 1e-14);
    }
}

#[test]
fn friction_single_contact_stick_and_slip() {
    let w = DenseMatrix { n: 3, data: vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0] };
    // Stick: the tangential force 0.1 lies inside the cone 0.5·1.
    let mut f = vec![0.0; 3];
    let o = nlcp_gauss_seidel(&[-1.0, -0.1, 0.0], &w, &mut f, &opts(0.5, 1e-12)).unwrap();
    assert!(o.converged);
    assert_eq!(f, vec![1.0, 0.1, 0.0]);
    // Slip: the tangential force 2 is scaled onto the cone, 0.5.
    let mut f = vec![0.0; 3];
    nlcp_gauss_seidel(&[-1.0, -2.0, 0.0], &w, &mut f, &opts(0.5, 1e-12)).unwrap();
    assert_eq!(f, vec![1.0, 0.5, 0.0]);
    // Separating: no force.
    let mut f = vec![3.0, 1.0, 1.0];
    nlcp_gauss_seidel(&[0.2, -2.0, 0.0], &w, &mut f, &opts(0.5, 1e-12)).unwrap();
    assert_eq!(f, vec![0.0; 3]);
}

#[test]
fn friction_cone_complementarity_and_agreement() {
    let nc = 4;
    let n = 3 * nc;
    let w = compliance(n, 11);
    let mut q = vec![0.0; n];
    for c in 0..nc {
        q[3 * c] = if c == 2 { 0.3 } else { -0.5 - 0.2 * c as f64 };
        q[3 * c + 1] = 0.3 - 0.25 * c as f64;
        q[3 * c + 2] = -0.1 * c as f64;
    }
    let mu = 0.4;
    let mut f = vec![0.0; n];
    let o = nlcp_gauss_seidel(&q, &w, &mut f, &opts(mu, 1e-13)).unwrap();
    assert!(o.converged, "{:?}", o.errors.last());
    assert_eq!(o.errors.len(), o.iterations);
    assert_eq!(o.violations.len(), o.iterations);
    assert!(o.violations.iter().all(|v| *v >= 0.0));
    let d = mul(&w, &f, &q);
    for c in 0..nc {
        let (fn_, ft, fs) = (f[3 * c], f[3 * c + 1], f[3 * c + 2]);
        assert!(fn_ >= 0.0);
        assert!((ft * ft + fs * fs).sqrt() <= mu * fn_ * (1.0 + 1e-12) + 1e-15, "contact {c} outside the cone");
        assert!(d[3 * c] >= -1e-9, "contact {c}: normal gap {}", d[3 * c]);
        assert!((fn_ * d[3 * c]).abs() < 1e-9);
    }
    assert!(f.iter().any(|x| *x != 0.0));
    // BlockGaussSeidel with SOFA's friction resolution reaches the same forces.
    let res: Vec<Box<dyn ConstraintResolution>> =
        (0..nc).map(|_| Box::new(UnilateralWithFrictionResolution::new(mu)) as Box<dyn ConstraintResolution>).collect();
    let l = bgs(&w, &q, res, 1e-14);
    for i in 0..n {
        assert!((l[i] - f[i]).abs() < 1e-7, "row {i}: LCP {} vs BGS {}", f[i], l[i]);
    }
    // The unbuilt kernel, given the 3×3 diagonal blocks, agrees too.
    let mut wdiag = DenseMatrix::zeros(n);
    for c in 0..nc {
        for a in 0..3 {
            for b in 0..3 {
                wdiag.set(3 * c + a, 3 * c + b, w.get(3 * c + a, 3 * c + b));
            }
        }
    }
    let mut fu = vec![0.0; n];
    let mut ops = DenseUnbuilt { w: w.clone(), f: vec![0.0; n] };
    let seq: Vec<usize> = (0..n).collect();
    let o = nlcp_gauss_seidel_unbuilt(&q, &wdiag, &mut fu, &seq, mu, 1e-14, 100000, &mut ops).unwrap();
    assert!(o.converged);
    for i in 0..n {
        assert!((fu[i] - f[i]).abs() < 1e-7, "row {i}: unbuilt {} vs built {}", fu[i], f[i]);
    }
}

#[test]
fn warm_start_stop_test_and_size_check() {
    let w = DenseMatrix { n: 3, data: vec![2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0] };
    // Started at the solution, the first sweep changes nothing: converged after one sweep.
    let mut f = vec![0.5, 0.0, 0.0];
    let o = nlcp_gauss_seidel(&[-1.0, 0.0, 0.0], &w, &mut f, &NlcpOptions { use_initial_f: true, ..opts(0.3, 1e-9) }).unwrap();
    assert_eq!((o.converged, o.iterations, o.errors.clone()), (true, 1, vec![0.0]));
    // Without the initial force, the first sweep's error is |Δu| = 1 ≥ tol·(1 + 1).
    let mut f = vec![0.5, 0.0, 0.0];
    let o = nlcp_gauss_seidel(&[-1.0, 0.0, 0.0], &w, &mut f, &opts(0.3, 0.1)).unwrap();
    assert_eq!(o.errors, vec![1.0, 0.0]);
    assert_eq!(f, vec![0.5, 0.0, 0.0]);
    // Not a multiple of 3 rows: an error, the forces untouched.
    let w2 = DenseMatrix::zeros(2);
    let mut f2 = vec![1.0, 2.0];
    assert!(nlcp_gauss_seidel(&[0.0, 0.0], &w2, &mut f2, &opts(0.3, 0.1)).is_err());
    assert_eq!(f2, vec![1.0, 2.0]);
}

#[test]
fn min_w_and_max_f_filters() {
    // Contact 0 has W_nn = 1e-3 ≤ minW: no force; contact 1 is solved.
    let mut w = DenseMatrix::zeros(6);
    for (i, v) in [1e-3, 1.0, 1.0, 1.0, 1.0, 1.0].iter().enumerate() {
        w.set(i, i, *v);
    }
    let q = [-1.0, 0.0, 0.0, -2.0, 0.0, 0.0];
    let mut f = vec![0.0; 6];
    nlcp_gauss_seidel(&q, &w, &mut f, &NlcpOptions { min_w: 1e-2, ..opts(0.5, 1e-12) }).unwrap();
    assert_eq!(f, vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
    // maxF = 1.5 zeroes contact 1 (force 2) after convergence; contact 0 (force 1000) too.
    let mut f = vec![0.0; 6];
    nlcp_gauss_seidel(&q, &w, &mut f, &NlcpOptions { max_f: 1.5, ..opts(0.5, 1e-12) }).unwrap();
    assert_eq!(f, vec![0.0; 6]);
    let mut f = vec![0.0; 6];
    nlcp_gauss_seidel(&q, &w, &mut f, &NlcpOptions { max_f: 5.0, ..opts(0.5, 1e-12) }).unwrap();
    assert_eq!(f, vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
    // Frictionless: same filters.
    let w1 = DenseMatrix { n: 2, data: vec![1e-3, 0.0, 0.0, 1.0] };
    let mut f = vec![0.0; 2];
    gauss_seidel_lcp1(&[-1.0, -2.0], &w1, &mut f, 1e-12, 100, 1e-2, 0.0).unwrap();
    assert_eq!(f, vec![0.0, 2.0]);
    let mut f = vec![0.0; 2];
    gauss_seidel_lcp1(&[-1.0, -2.0], &w1, &mut f, 1e-12, 100, 0.0, 1.5).unwrap();
    assert_eq!(f, vec![0.0, 0.0]);
}

#[test]
fn persistent_id_initial_guess() {
    let mut ids: Arena<ComponentId, ()> = Arena::new();
    let law = ids.insert(());
    let other = ids.insert(());
    let mut h = ForceHistory::default();
    // Step 1: law has contacts 10, 11 (3 rows each) from row 0; other has contact 10 at row 6.
    let infos = vec![
        BlockInfo { parent: law, const0: 0, nb_lines: 3, ids: vec![10, 11] },
        BlockInfo { parent: other, const0: 6, nb_lines: 3, ids: vec![10] },
    ];
    let f1: Vec<f64> = (1..=9).map(|x| x as f64).collect();
    h.keep(&infos, &f1);
    // Step 2: law has contacts 11, 12, 10 from row 3; other lost its contact; rows 0..3 belong
    // to a law without ids.
    let infos2 = vec![BlockInfo { parent: law, const0: 3, nb_lines: 3, ids: vec![11, 12, 10] }];
    let mut f = vec![9.0; 12];
    h.initial_guess(&infos2, 0.5, &mut f);
    assert_eq!(f, vec![0.0, 0.0, 0.0, 4.0, 5.0, 6.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0]);
    h.keep(&infos2, &f);
    // Step 3: other's contact 10 was not seen at step 2 (its row is −1): no warm start. With
    // 1 line per contact now, only min(1, 3) value per contact is copied at const0 + c·1.
    let infos3 = vec![
        BlockInfo { parent: law, const0: 0, nb_lines: 1, ids: vec![10, 11] },
        BlockInfo { parent: other, const0: 2, nb_lines: 1, ids: vec![10] },
    ];
    let mut f = vec![7.0; 3];
    h.initial_guess(&infos3, 0.0, &mut f);
    assert_eq!(f, vec![1.0, 4.0, 0.0]);
}
