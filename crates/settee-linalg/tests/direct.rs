#![allow(clippy::needless_range_loop)]
mod common;

use common::{dense_solve, laplacian_1d, random_spd, random_vec, rel_err, Uniform};
use proptest::prelude::*;
use settee_linalg::{dense_inverse, det3, invert3, mul3_vec, mul3t_vec, CsrMatrix, DirectKind, DirectSolver, LinalgError, MatrixBuilder, Ordering};

const KINDS: [DirectKind; 4] = [DirectKind::Ldlt, DirectKind::Llt, DirectKind::Lu, DirectKind::Qr];
const ORDERINGS: [Ordering; 4] = [Ordering::Natural, Ordering::Amd, Ordering::Colamd, Ordering::NestedDissection];

fn solve_with(kind: DirectKind, ord: Ordering, a: &CsrMatrix, b: &[f64]) -> Vec<f64> {
    let mut s = DirectSolver::new(kind, ord);
    s.factorize(a).unwrap_or_else(|e| panic!("{kind:?}/{ord:?}: {e}"));
    let mut x = b.to_vec();
    s.solve_in_place(&mut x).unwrap();
    x
}

/// Every kind with every ordering solves `a·x = b` as dense Gauss elimination does, to `tol`
/// (relative); `case` names the system in the messages.
fn assert_all_kinds_match_dense(a: &CsrMatrix, b: &[f64], tol: f64, case: &str) {
    let n = a.nrows();
    let xd = dense_solve(n, &a.to_dense(), b);
    for kind in KINDS {
        for ord in ORDERINGS {
            let x = solve_with(kind, ord, a, b);
            let e = rel_err(&x, &xd);
            assert!(e < tol, "{case} {kind:?}/{ord:?}: err {e}");
        }
    }
}

#[test]
fn laplacian_1d_all_kinds_match_dense_gauss() {
    for n in [1usize, 2, 3, 10, 57] {
        let a = laplacian_1d(n);
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() + 1.0).collect();
        assert_all_kinds_match_dense(&a, &b, 1e-12, &format!("n={n}"));
    }
}

#[test]
fn laplacian_known_solution() {
    // A x = b with x_i = i+1 exactly: b = A x computed by hand:
    // b_0 = 2*1 - 2 = 0, b_i = -(i) + 2(i+1) - (i+2) = 0, b_{n-1} = -(n-1) + 2n = n+1
    let n = 6;
    let a = laplacian_1d(n);
    let mut b = vec![0.0; n];
    b[n - 1] = (n + 1) as f64;
    for kind in KINDS {
        let x = solve_with(kind, Ordering::Natural, &a, &b);
        for (i, xi) in x.iter().enumerate() {
            assert!((xi - (i + 1) as f64).abs() < 1e-12, "{kind:?}: x[{i}] = {xi}");
        }
    }
}

#[test]
fn random_spd_all_kinds_match_dense_gauss() {
    for (seed, n, per_row) in [(1u64, 20usize, 2usize), (2, 50, 3), (3, 120, 4), (4, 5, 5)] {
        let a = random_spd(n, per_row, 0.5, seed);
        assert!(a.is_symmetric(0.0));
        let b = random_vec(n, seed + 100);
        assert_all_kinds_match_dense(&a, &b, 1e-11, &format!("seed={seed}"));
    }
}

#[test]
fn ldlt_natural_fill_of_tridiagonal() {
    let a = laplacian_1d(10);
    let mut s = DirectSolver::new(DirectKind::Ldlt, Ordering::Natural);
    s.factorize(&a).unwrap();
    assert_eq!(s.l_nnz(), Some(9)); // no fill for a tridiagonal matrix
    assert_eq!(s.ldlt_permutation().unwrap(), (0..10).collect::<Vec<_>>().as_slice());
}

#[test]
fn symbolic_analysis_only_when_pattern_changes() {
    for kind in KINDS {
        let n = 30;
        let mut s = DirectSolver::new(kind, Ordering::Amd);
        let a1 = random_spd(n, 3, 1.0, 7);
        s.factorize(&a1).unwrap();
        assert_eq!(s.symbolic_count(), 1);
        // Same pattern, new values.
        let mut a2 = a1.clone();
        for v in a2.values_mut() {
            *v *= 2.0;
        }
        s.factorize(&a2).unwrap();
        assert_eq!(s.symbolic_count(), 1, "{kind:?}");
        let b = random_vec(n, 3);
        let mut x = b.clone();
        s.solve_in_place(&mut x).unwrap();
        let xd = dense_solve(n, &a2.to_dense(), &b);
        assert!(rel_err(&x, &xd) < 1e-12, "{kind:?}");
        // Different pattern.
        let a3 = random_spd(n, 3, 1.0, 8);
        s.factorize(&a3).unwrap();
        assert_eq!(s.symbolic_count(), 2, "{kind:?}");
        let mut x = b.clone();
        s.solve_in_place(&mut x).unwrap();
        let xd = dense_solve(n, &a3.to_dense(), &b);
        assert!(rel_err(&x, &xd) < 1e-12, "{kind:?}");
    }
}

/// `a` without the off-diagonal entries `(i, j)` for which `drop(i, j)` (symmetric in use).
fn without(a: &CsrMatrix, drop: impl Fn(usize, usize) -> bool) -> CsrMatrix {
    let mut b = MatrixBuilder::new(a.nrows());
    for i in 0..a.nrows() {
        for (j, v) in a.row(i) {
            if i == j || !drop(i, j) {
                b.add(i, j, v).unwrap();
            }
        }
    }
    b.into_matrix()
}

/// Exact zeros that come and go (SOFA's copy drops them) leave a pattern inside the analysed
/// factor's: the analysis is kept and the solve stays exact. An entry outside the factor's
/// pattern gets a new analysis.
#[test]
fn a_pattern_inside_the_factor_keeps_the_analysis() {
    for kind in [DirectKind::Ldlt, DirectKind::Llt] {
        for ord in ORDERINGS {
            let n = 60;
            let full = random_spd(n, 4, 0.5, 11);
            let thinned = without(&full, |i, j| (i + j) % 3 == 0);
            assert!(thinned.nnz() < full.nnz());
            let b = random_vec(n, 12);
            let mut s = DirectSolver::new(kind, ord);
            s.keep_analysis_across_patterns(true);
            for (round, a) in [&full, &thinned, &full, &thinned].into_iter().enumerate() {
                s.factorize(a).unwrap();
                assert_eq!((s.symbolic_count(), s.refit_count()), (1, round), "{kind:?}/{ord:?}");
                let mut x = b.clone();
                s.solve_in_place(&mut x).unwrap();
                let e = rel_err(&x, &dense_solve(n, &a.to_dense(), &b));
                assert!(e < 1e-12, "{kind:?}/{ord:?} round {round}: err {e}");
            }
        }
        // A tridiagonal matrix has no fill: a corner entry lies outside its factor.
        let n = 12;
        let mut s = DirectSolver::new(kind, Ordering::Natural);
        s.keep_analysis_across_patterns(true);
        s.factorize(&laplacian_1d(n)).unwrap();
        let mut b = MatrixBuilder::new(n);
        for i in 0..n {
            for (j, v) in laplacian_1d(n).row(i) {
                b.add(i, j, v).unwrap();
            }
        }
        b.add(0, n - 1, -0.5).unwrap();
        b.add(n - 1, 0, -0.5).unwrap();
        let corner = b.into_matrix();
        s.factorize(&corner).unwrap();
        assert_eq!((s.symbolic_count(), s.refit_count()), (2, 0), "{kind:?}");
        let rhs = random_vec(n, 5);
        let mut x = rhs.clone();
        s.solve_in_place(&mut x).unwrap();
        assert!(rel_err(&x, &dense_solve(n, &corner.to_dense(), &rhs)) < 1e-12, "{kind:?}");
    }
}

#[test]
fn dirichlet_system_fem_like() {
    // Block-3 assembly + Dirichlet on the first node, solved by every kind.
    let nodes = 8;
    let n = 3 * nodes;
    let mut b = MatrixBuilder::new(n);
    let mut rng = common::Rng(42);
    for e in 0..nodes - 1 {
        let mut k = [[0.0; 3]; 3];
        for (r, row) in k.iter_mut().enumerate() {
            for (c, v) in row.iter_mut().enumerate() {
                *v = if r == c { 5.0 } else { 0.0 } + rng.range(-0.3, 0.3);
            }
        }
        // symmetrize
        for r in 0..3 {
            for c in 0..r {
                k[r][c] = k[c][r];
            }
        }
        let neg = k.map(|row| row.map(|v| -v));
        b.add_block3(3 * e, 3 * e, &k).unwrap();
        b.add_block3(3 * e, 3 * e + 3, &neg).unwrap();
        b.add_block3(3 * e + 3, 3 * e, &neg).unwrap();
        b.add_block3(3 * e + 3, 3 * e + 3, &k).unwrap();
    }
    for i in 0..n {
        b.add(i, i, 1.0).unwrap();
    }
    b.finish();
    b.apply_dirichlet(&[0, 1, 2]).unwrap();
    let a = b.matrix().clone();
    let mut rhs = random_vec(n, 5);
    rhs[..3].iter_mut().for_each(|v| *v = 0.0); // projected RHS
    let xd = dense_solve(n, &a.to_dense(), &rhs);
    for kind in KINDS {
        for ord in ORDERINGS {
            let x = solve_with(kind, ord, &a, &rhs);
            assert!(rel_err(&x, &xd) < 1e-12, "{kind:?}/{ord:?}");
            assert_eq!(&x[..3], &[0.0, 0.0, 0.0]);
        }
    }
}

#[test]
fn llt_rejects_non_spd_without_panicking() {
    // Symmetric indefinite.
    let a = CsrMatrix::from_dense(2, 2, &[1.0, 2.0, 2.0, 1.0]).unwrap();
    for ord in ORDERINGS {
        let mut s = DirectSolver::new(DirectKind::Llt, ord);
        let r = s.factorize(&a);
        assert!(matches!(r, Err(LinalgError::NotPositiveDefinite { .. })), "{ord:?}: {r:?}");
        let mut x = vec![1.0, 1.0];
        assert!(matches!(s.solve_in_place(&mut x), Err(LinalgError::NotFactorized)));
    }
    // Negative definite.
    let a = CsrMatrix::from_dense(2, 2, &[-2.0, 0.0, 0.0, -1.0]).unwrap();
    let mut s = DirectSolver::new(DirectKind::Llt, Ordering::Natural);
    assert!(s.factorize(&a).is_err());
    assert!(dense_inverse(&a).is_err());
    // LDLT handles the symmetric indefinite one (nonzero pivots).
    let a = CsrMatrix::from_dense(2, 2, &[1.0, 2.0, 2.0, 1.0]).unwrap();
    let x = solve_with(DirectKind::Ldlt, Ordering::Natural, &a, &[3.0, 3.0]);
    assert!((x[0] - 1.0).abs() < 1e-15 && (x[1] - 1.0).abs() < 1e-15);
}

#[test]
fn singular_matrices_give_errors() {
    // Zero pivot for LDLT: [[0,1],[1,0]] in natural order.
    let a = CsrMatrix::from_dense(2, 2, &[0.0, 1.0, 1.0, 0.0]).unwrap();
    let mut s = DirectSolver::new(DirectKind::Ldlt, Ordering::Natural);
    assert!(matches!(s.factorize(&a), Err(LinalgError::ZeroPivot { index: 0 })));
    // Rank-deficient matrix for LU / QR / LDLT / LLT.
    let a = CsrMatrix::from_dense(3, 3, &[1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]).unwrap();
    for kind in KINDS {
        let mut s = DirectSolver::new(kind, Ordering::Natural);
        let r = s.factorize(&a).and_then(|_| {
            let mut x = vec![1.0, 2.0, 3.0];
            s.solve_in_place(&mut x)
        });
        assert!(r.is_err(), "{kind:?} accepted a singular matrix");
    }
    // Structurally empty row.
    let a = CsrMatrix::from_dense(2, 2, &[1.0, 0.0, 0.0, 0.0]).unwrap();
    for kind in KINDS {
        let mut s = DirectSolver::new(kind, Ordering::Amd);
        let r = s.factorize(&a).and_then(|_| {
            let mut x = vec![1.0, 2.0];
            s.solve_in_place(&mut x)
        });
        assert!(r.is_err(), "{kind:?} accepted a singular matrix");
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let rect = CsrMatrix::zeros(2, 3);
    for kind in KINDS {
        let mut s = DirectSolver::new(kind, Ordering::Natural);
        assert!(matches!(s.solve_in_place(&mut [1.0]), Err(LinalgError::NotFactorized)));
        assert!(matches!(s.factorize(&rect), Err(LinalgError::NotSquare { .. })));
        s.factorize(&laplacian_1d(4)).unwrap();
        assert!(matches!(s.solve_in_place(&mut [1.0; 3]), Err(LinalgError::DimensionMismatch { .. })));
        assert!(matches!(s.solve(&[1.0; 4], &mut [0.0; 3]), Err(LinalgError::DimensionMismatch { .. })));
        assert!(matches!(s.solve_many_in_place(&mut [1.0; 7], 2), Err(LinalgError::DimensionMismatch { .. })));
        // empty system
        s.factorize(&CsrMatrix::zeros(0, 0)).unwrap();
        s.solve_in_place(&mut []).unwrap();
        assert_eq!(s.dense_inverse().unwrap(), Vec::<f64>::new());
    }
    assert!(dense_inverse(&rect).is_err());
}

#[test]
fn solve_many_matches_single_solves() {
    let n = 25;
    let a = random_spd(n, 3, 0.3, 11);
    for kind in KINDS {
        let mut s = DirectSolver::new(kind, Ordering::Amd);
        s.factorize(&a).unwrap();
        let mut many = random_vec(3 * n, 12);
        let cols: Vec<Vec<f64>> = many.chunks(n).map(|c| c.to_vec()).collect();
        s.solve_many_in_place(&mut many, 3).unwrap();
        for (j, c) in cols.iter().enumerate() {
            let mut x = c.clone();
            s.solve_in_place(&mut x).unwrap();
            assert!(rel_err(&many[j * n..(j + 1) * n], &x) < 1e-14, "{kind:?}");
        }
    }
}

#[test]
fn dense_inverse_is_the_inverse() {
    let n = 15;
    let a = random_spd(n, 3, 0.5, 21);
    let inv = dense_inverse(&a).unwrap();
    assert_eq!(inv.len(), n * n);
    let d = a.to_dense();
    // A * inv = I (inv column-major: inv[j*n + i] = (A^-1)_ij)
    for i in 0..n {
        for j in 0..n {
            let mut s = 0.0;
            for k in 0..n {
                s += d[i * n + k] * inv[j * n + k];
            }
            let e = if i == j { 1.0 } else { 0.0 };
            assert!((s - e).abs() < 1e-12, "({i},{j}): {s}");
        }
    }
    // symmetric inverse
    for i in 0..n {
        for j in 0..n {
            assert!((inv[j * n + i] - inv[i * n + j]).abs() < 1e-13);
        }
    }
    // Matches each DirectKind's inverse.
    for kind in KINDS {
        let mut s = DirectSolver::new(kind, Ordering::Natural);
        s.factorize(&a).unwrap();
        let other = s.dense_inverse().unwrap();
        assert!(rel_err(&other, &inv) < 1e-12, "{kind:?}");
    }
}

#[test]
fn factorization_is_deterministic() {
    let n = 80;
    let a = random_spd(n, 4, 0.2, 31);
    let b = random_vec(n, 32);
    for kind in KINDS {
        let x1 = solve_with(kind, Ordering::Amd, &a, &b);
        let x2 = solve_with(kind, Ordering::Amd, &a, &b);
        assert!(x1.iter().zip(&x2).all(|(p, q)| p.to_bits() == q.to_bits()), "{kind:?}");
    }
}

#[test]
fn invert3_values() {
    let m = [[4.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.5, -1.0, 2.0]];
    let inv = invert3(&m).unwrap();
    for i in 0..3 {
        for j in 0..3 {
            let s: f64 = (0..3).map(|k| m[i][k] * inv[k][j]).sum();
            let e = if i == j { 1.0 } else { 0.0 };
            assert!((s - e).abs() < 1e-15, "({i},{j})");
        }
    }
    // det = 4*(6-1) - 1*(2+0.5) + 0.5*(-1-1.5) = 20 - 2.5 - 1.25 = 16.25
    assert!((det3(&m) - 16.25).abs() < 1e-14);
    // diag(2, 4, 8) -> diag(0.5, 0.25, 0.125) exactly
    let d = invert3(&[[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 8.0]]).unwrap();
    assert_eq!(d, [[0.5, 0.0, 0.0], [0.0, 0.25, 0.0], [0.0, 0.0, 0.125]]);
    assert!(invert3(&[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]]).is_none());
    assert!(invert3(&[[f64::NAN, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).is_none());
    assert_eq!(mul3_vec(&m, &[1.0, 0.0, 0.0]), [4.0, 1.0, 0.5]);
    assert_eq!(mul3t_vec(&m, &[0.0, 1.0, 0.0]), [1.0, 3.0, -1.0]);
}

fn kind_strategy() -> impl Strategy<Value = DirectKind> {
    prop_oneof![Just(DirectKind::Ldlt), Just(DirectKind::Llt), Just(DirectKind::Lu), Just(DirectKind::Qr)]
}

fn ordering_strategy() -> impl Strategy<Value = Ordering> {
    prop_oneof![Just(Ordering::Natural), Just(Ordering::Amd), Just(Ordering::Colamd), Just(Ordering::NestedDissection)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// solve(A, A x) ≈ x for every kind/ordering on random sparse SPD matrices.
    #[test]
    fn prop_solve_of_product_recovers_x(
        n in 1usize..40,
        per_row in 0usize..5,
        seed in any::<u64>(),
        kind in kind_strategy(),
        ord in ordering_strategy(),
    ) {
        let a = random_spd(n, per_row, 0.25, seed);
        let x = random_vec(n, seed ^ 0xABCD);
        let mut b = vec![0.0; n];
        a.mul_vec(&x, &mut b).unwrap();
        let mut s = DirectSolver::new(kind, ord);
        s.factorize(&a).unwrap();
        s.solve_in_place(&mut b).unwrap();
        prop_assert!(rel_err(&b, &x) < 1e-10, "err {}", rel_err(&b, &x));
    }

    /// Pattern reuse in the builder is bitwise identical to a fresh build for
    /// any sequence of insertions replayed with new values.
    #[test]
    fn prop_builder_replay_equals_fresh(
        entries in proptest::collection::vec((0usize..6, 0usize..6, -10.0f64..10.0), 0..60),
        scale in -3.0f64..3.0,
    ) {
        let mut b = MatrixBuilder::new(6);
        for &(i, j, v) in &entries { b.add(i, j, v).unwrap(); }
        b.finish();
        b.clear_values();
        for &(i, j, v) in &entries { b.add(i, j, v * scale).unwrap(); }
        let replayed = b.finish().clone();
        prop_assert!(b.rebuild_count() == 1);
        let scaled: Vec<_> = entries.iter().map(|&(i, j, v)| (i, j, v * scale)).collect();
        let f = CsrMatrix::from_triplets(6, 6, &scaled).unwrap();
        prop_assert!(replayed.same_pattern(&f));
        prop_assert!(replayed.values().iter().zip(f.values()).all(|(p, q)| p.to_bits() == q.to_bits()));
        // and the dense result is the plain sum
        let mut d = vec![0.0; 36];
        for &(i, j, v) in &scaled { d[i * 6 + j] += v; }
        prop_assert_eq!(replayed.to_dense(), d);
    }
}

#[test]
fn solver_and_builder_are_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<DirectSolver>();
    check::<MatrixBuilder>();
    check::<CsrMatrix>();
}

/// Global matrix of a hexahedral grid of `nx × ny × nz` nodes with 3 DOFs
/// each (per element: (8 I - 1 1ᵀ) ⊗ S_e, plus a diagonal mass, Dirichlet on
/// the nodes of the `z = 0` end, explicit zeros dropped), the structure of
/// SOFA's FEM systems. `shift` is subtracted from the diagonal of the free DOFs.
fn hex_grid_matrix(nx: usize, ny: usize, nz: usize, shift: f64) -> CsrMatrix {
    let n = 3 * nx * ny * nz;
    let mut b = MatrixBuilder::new(n);
    common::assemble_hex_grid(&mut b, &common::hex_grid_elements(nx, ny, nz), n, 1.0, 0.5 - shift, &common::hex_grid_fixed(nx, ny));
    b.matrix().without_zeros()
}

#[test]
fn fem_grid_matches_dense_solve() {
    for (nx, ny, nz) in [(3usize, 3usize, 6usize), (2, 4, 5), (4, 4, 4)] {
        let a = hex_grid_matrix(nx, ny, nz, 0.0);
        let n = a.nrows();
        let b = random_vec(n, 77);
        let xd = dense_solve(n, &a.to_dense(), &b);
        for kind in [DirectKind::Ldlt, DirectKind::Llt] {
            for ord in ORDERINGS {
                let x = solve_with(kind, ord, &a, &b);
                let e = rel_err(&x, &xd);
                assert!(e < 1e-12, "{nx}x{ny}x{nz} {kind:?}/{ord:?}: err {e}");
                // Bitwise reproducible, also through a reused solver.
                let mut s = DirectSolver::new(kind, ord);
                s.factorize(&a).unwrap();
                s.factorize(&a).unwrap();
                let mut y = b.clone();
                s.solve_in_place(&mut y).unwrap();
                assert!(x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()));
            }
        }
    }
}

#[test]
fn fem_grid_indefinite_ldlt_works_llt_refuses() {
    // Shifted by more than the smallest eigenvalue: symmetric indefinite,
    // with (generically) nonzero pivots.
    let a = hex_grid_matrix(3, 3, 5, 4.0);
    let n = a.nrows();
    let b = random_vec(n, 78);
    let xd = dense_solve(n, &a.to_dense(), &b);
    for ord in ORDERINGS {
        let x = solve_with(DirectKind::Ldlt, ord, &a, &b);
        let e = rel_err(&x, &xd);
        assert!(e < 1e-10, "{ord:?}: err {e}");
        let mut s = DirectSolver::new(DirectKind::Llt, ord);
        assert!(matches!(s.factorize(&a), Err(LinalgError::NotPositiveDefinite { .. })), "{ord:?}");
    }
}

/// The dense inverse (unit columns, pruned forward substitution) has the same bits as full
/// solves of the unit columns, and the transposed dense product the same bits as the plain
/// row-by-row dot product.
#[test]
fn dense_inverse_and_product_match_plain_loops_bitwise() {
    for (nx, ny, nz) in [(2, 2, 3), (3, 4, 5)] {
        let a = hex_grid_matrix(nx, ny, nz, 0.5);
        let n = a.nrows();
        let mut s = DirectSolver::new(DirectKind::Llt, Ordering::Amd);
        s.factorize(&a).unwrap();
        let inv = s.dense_inverse().unwrap();
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            s.solve_in_place(&mut e).unwrap();
            let got: Vec<u64> = inv[j * n..(j + 1) * n].iter().map(|v| v.to_bits()).collect();
            let want: Vec<u64> = e.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "column {j}");
        }
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.71).cos()).collect();
        let mut plain = vec![0.0; n];
        for (i, p) in plain.iter_mut().enumerate() {
            let mut acc = 0.0;
            for k in 0..n {
                acc += inv[i * n + k] * b[k];
            }
            *p = acc;
        }
        let t = settee_linalg::transpose_dense(&inv, n, n);
        let mut x = vec![0.0; n];
        settee_linalg::gemv_transposed(&t, n, n, &b, &mut x);
        assert_eq!(x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), plain.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        // The panel layout gives the same bits.
        let panels = settee_linalg::RowPanels::from_row_major(&inv, n, n);
        let mut y = vec![f64::NAN; n];
        panels.mul(&b, &mut y);
        assert_eq!(y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), plain.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    }
}
