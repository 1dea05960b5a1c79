#![allow(clippy::needless_range_loop)]
mod common;

use settee_linalg::{CsrMatrix, LinalgError};

/// [[4, 0, 1],
///  [0, 3, 0],
///  [2, 0, 5],
///  [0, 7, 6]]   (4x3)
fn hand() -> CsrMatrix {
    CsrMatrix::try_from_parts(4, 3, vec![0, 2, 3, 5, 7], vec![0, 2, 1, 0, 2, 1, 2], vec![4.0, 1.0, 3.0, 2.0, 5.0, 7.0, 6.0]).unwrap()
}

#[test]
fn mul_vec_hand_written() {
    let a = hand();
    let x = [1.0, -2.0, 0.5];
    let mut y = [f64::NAN; 4];
    a.mul_vec(&x, &mut y).unwrap();
    assert_eq!(y, [4.0 + 0.5, -6.0, 2.0 + 2.5, -14.0 + 3.0]);
}

#[test]
fn mul_vec_accumulates_in_column_order_from_zero() {
    // Row [1e16, 1, -1e16] times ones: ((0 + 1e16) + 1) - 1e16 = 0 in f64
    // (1e16 + 1 rounds to 1e16); any other order would give 1.
    let a = CsrMatrix::try_from_parts(1, 3, vec![0, 3], vec![0, 1, 2], vec![1e16, 1.0, -1e16]).unwrap();
    let mut y = [0.0];
    a.mul_vec(&[1.0, 1.0, 1.0], &mut y).unwrap();
    assert_eq!(y[0], 0.0);
    // An empty row gives +0.0.
    let z = CsrMatrix::zeros(2, 2);
    let mut y = [f64::NAN, f64::NAN];
    z.mul_vec(&[1.0, 2.0], &mut y).unwrap();
    assert_eq!(y, [0.0, 0.0]);
}

/// Rows of different lengths (empty ones included), triples of rows sharing their columns (as
/// 3×3 blocks give) and rows that do not: every entry of `y` has the bits of its row summed
/// alone, left to right from 0.0.
#[test]
fn mul_vec_sums_each_row_alone_whatever_the_lengths() {
    let (nrows, ncols) = (11, 9);
    let mut seed = 0x5eed_u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        seed >> 33
    };
    let (mut row_ptr, mut col_idx, mut values) = (vec![0], Vec::new(), Vec::new());
    let mut shared = vec![false; ncols];
    for i in 0..nrows {
        // Rows 0–2 and 3–5 share a pattern (row 3's starts the second triple).
        if i == 0 || i == 3 {
            shared = (0..ncols).map(|_| next() % 2 == 0).collect();
        }
        for j in 0..ncols {
            // Row 7 empty, row 8 full, the others about half full.
            let stored = if i < 6 { shared[j] } else { i != 7 && (i == 8 || next() % 2 == 0) };
            if stored {
                col_idx.push(j);
                // Magnitudes spread over 1e-8..1e8, so that any other order changes bits.
                values.push((next() as f64 / 4.0e9 - 0.5) * 10f64.powi((next() % 17) as i32 - 8));
            }
        }
        row_ptr.push(col_idx.len());
    }
    let a = CsrMatrix::try_from_parts(nrows, ncols, row_ptr.clone(), col_idx.clone(), values.clone()).unwrap();
    let x: Vec<f64> = (0..ncols).map(|_| (next() as f64 / 4.0e9 - 0.5) * 10f64.powi((next() % 9) as i32 - 4)).collect();
    let mut y = vec![f64::NAN; nrows];
    a.mul_vec(&x, &mut y).unwrap();
    for i in 0..nrows {
        let mut acc = 0.0f64;
        for p in row_ptr[i]..row_ptr[i + 1] {
            acc += values[p] * x[col_idx[p]];
        }
        assert_eq!(y[i].to_bits(), acc.to_bits(), "row {i}");
    }
}

/// The product remembers which row triples share their columns; a pattern change made by
/// `apply_dirichlet` (a missing diagonal slot inserted in row 4 only) must be seen by the next
/// product: row 4 no longer shares the columns of rows 3 and 5.
#[test]
fn mul_vec_follows_a_pattern_change() {
    // Two 3×3 blocks per block row, on block columns 0 and 2 for block row 1 (no diagonal).
    let mut t = Vec::new();
    for (bi, bj) in [(0, 0), (0, 1), (1, 0), (1, 2), (2, 1), (2, 2)] {
        for k in 0..9 {
            t.push((3 * bi + k / 3, 3 * bj + k % 3, 1.0 + (3 * bi + k) as f64 * 0.37 + bj as f64 * 1e-9));
        }
    }
    let mut a = CsrMatrix::from_triplets(9, 9, &t).unwrap();
    let x: Vec<f64> = (0..9).map(|i| 1.0 / (i as f64 + 1.3)).collect();
    let row_sums = |a: &CsrMatrix| -> Vec<u64> {
        (0..a.nrows())
            .map(|i| {
                let mut acc = 0.0f64;
                for (c, v) in a.row(i) {
                    acc += v * x[c];
                }
                acc.to_bits()
            })
            .collect()
    };
    let mut y = vec![f64::NAN; 9];
    a.mul_vec(&x, &mut y).unwrap();
    assert_eq!(y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), row_sums(&a));
    assert!(a.apply_dirichlet(&[4]).unwrap(), "the diagonal slot (4, 4) is inserted");
    a.values_mut().iter_mut().enumerate().for_each(|(k, v)| *v += k as f64 * 0.01);
    a.mul_vec(&x, &mut y).unwrap();
    assert_eq!(y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), row_sums(&a));
}

#[test]
fn mul_vec_dimension_mismatch_is_an_error() {
    let a = hand();
    let mut y = [0.0; 4];
    assert!(matches!(a.mul_vec(&[1.0, 2.0], &mut y), Err(LinalgError::DimensionMismatch { .. })));
    let mut y3 = [0.0; 3];
    assert!(matches!(a.mul_vec(&[1.0, 2.0, 3.0], &mut y3), Err(LinalgError::DimensionMismatch { .. })));
}

#[test]
fn accessors_get_diag_rows() {
    let a = hand();
    assert_eq!(a.nrows(), 4);
    assert_eq!(a.ncols(), 3);
    assert_eq!(a.nnz(), 7);
    assert_eq!(a.get(0, 0), 4.0);
    assert_eq!(a.get(0, 1), 0.0);
    assert_eq!(a.get(3, 2), 6.0);
    assert_eq!(a.get(10, 10), 0.0);
    assert_eq!(a.find(2, 2), Some(4));
    assert_eq!(a.diagonal(), vec![4.0, 3.0, 5.0]);
    assert_eq!(a.row(3).collect::<Vec<_>>(), vec![(1, 7.0), (2, 6.0)]);
    assert_eq!(a.row(99).count(), 0);
    assert_eq!(a.row_cols(2), &[0, 2]);
    assert_eq!(a.row_values(2), &[2.0, 5.0]);
    let all: Vec<_> = a.iter().collect();
    assert_eq!(all.len(), 7);
    assert_eq!(all[6], (3, 2, 6.0));
}

#[test]
fn transpose_and_dense() {
    let a = hand();
    let t = a.transpose();
    assert_eq!(t.nrows(), 3);
    assert_eq!(t.ncols(), 4);
    let d = a.to_dense();
    let dt = t.to_dense();
    for i in 0..4 {
        for j in 0..3 {
            assert_eq!(d[i * 3 + j], dt[j * 4 + i]);
        }
    }
    assert_eq!(d, vec![4.0, 0.0, 1.0, 0.0, 3.0, 0.0, 2.0, 0.0, 5.0, 0.0, 7.0, 6.0]);
    assert_eq!(t.transpose(), a);
    // columns sorted in the transpose
    for i in 0..t.nrows() {
        assert!(t.row_cols(i).windows(2).all(|w| w[0] < w[1]));
    }
    assert_eq!(CsrMatrix::from_dense(4, 3, &d).unwrap(), a);
}

#[test]
fn invalid_structures_are_rejected() {
    // unsorted columns
    assert!(CsrMatrix::try_from_parts(1, 3, vec![0, 2], vec![2, 1], vec![1.0, 1.0]).is_err());
    // duplicate column
    assert!(CsrMatrix::try_from_parts(1, 3, vec![0, 2], vec![1, 1], vec![1.0, 1.0]).is_err());
    // column out of range
    assert!(matches!(CsrMatrix::try_from_parts(1, 2, vec![0, 1], vec![2], vec![1.0]), Err(LinalgError::IndexOutOfBounds { .. })));
    // bad row_ptr length / end
    assert!(CsrMatrix::try_from_parts(2, 2, vec![0, 1], vec![0], vec![1.0]).is_err());
    assert!(CsrMatrix::try_from_parts(1, 2, vec![0, 2], vec![0], vec![1.0]).is_err());
    assert!(CsrMatrix::try_from_parts(1, 2, vec![1, 1], vec![0], vec![1.0]).is_err());
    // value/col length mismatch
    assert!(CsrMatrix::try_from_parts(1, 2, vec![0, 1], vec![0], vec![1.0, 2.0]).is_err());
    // from_dense size mismatch
    assert!(CsrMatrix::from_dense(2, 2, &[1.0; 3]).is_err());
    // triplet out of range
    assert!(CsrMatrix::from_triplets(2, 2, &[(0, 2, 1.0)]).is_err());
}

#[test]
fn from_triplets_sums_duplicates_in_order() {
    let a = CsrMatrix::from_triplets(2, 2, &[(1, 0, 1e16), (0, 1, 3.0), (1, 0, 1.0), (1, 0, -1e16)]).unwrap();
    assert_eq!(a.nnz(), 2);
    assert_eq!(a.get(0, 1), 3.0);
    assert_eq!(a.get(1, 0), 0.0); // (0 + 1e16 + 1) - 1e16 = 0 in insertion order
    assert!(a.find(1, 0).is_some());
}

#[test]
fn apply_dirichlet_expected_dense() {
    // Full symmetric 4x4 with a structurally missing diagonal at (3,3).
    let dense = [
        4.0, -1.0, 0.0, 2.0, //
        -1.0, 5.0, -2.0, 0.0, //
        0.0, -2.0, 6.0, -3.0, //
        2.0, 0.0, -3.0, 0.0,
    ];
    let mut a = CsrMatrix::from_dense(4, 4, &dense).unwrap();
    let nnz0 = a.nnz();
    let changed = a.apply_dirichlet(&[1, 3, 1]).unwrap();
    assert!(changed, "diagonal (3,3) had to be inserted");
    assert_eq!(a.nnz(), nnz0 + 1);
    let expected = [
        4.0, 0.0, 0.0, 0.0, //
        0.0, 1.0, 0.0, 0.0, //
        0.0, 0.0, 6.0, 0.0, //
        0.0, 0.0, 0.0, 1.0,
    ];
    assert_eq!(a.to_dense(), expected.to_vec());
    // pattern kept: cleared entries remain stored as explicit zeros
    assert!(a.find(0, 1).is_some());
    assert_eq!(a.get(0, 1), 0.0);
    assert!(a.find(2, 3).is_some());
    // second application: nothing inserted
    assert!(!a.apply_dirichlet(&[3]).unwrap());
    // out of range: error, matrix untouched
    let before = a.clone();
    assert!(matches!(a.apply_dirichlet(&[0, 4]), Err(LinalgError::IndexOutOfBounds { .. })));
    assert_eq!(a, before);
}

#[test]
fn symmetric_check() {
    let a = common::laplacian_1d(5);
    assert!(a.is_symmetric(0.0));
    assert!(!hand().is_symmetric(0.0));
}

mod block_rows {
    use proptest::prelude::*;
    use settee_linalg::CsrMatrix;

    /// The product summed row by row, each row in increasing column order from 0.0.
    fn reference(a: &CsrMatrix, x: &[f64]) -> Vec<f64> {
        (0..a.nrows())
            .map(|i| {
                let mut acc = 0.0f64;
                for (c, v) in a.row(i) {
                    acc += v * x[c];
                }
                acc
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Whether rows share their columns (3×3 blocks, as assembled mechanical matrices) or
        /// not, the product, which sums several rows at once, has the bits of the row-by-row sums.
        #[test]
        fn mul_vec_has_the_bits_of_the_row_by_row_sums(
            nb in 1usize..7,
            blocks in proptest::collection::vec((0usize..7, 0usize..7, proptest::collection::vec(-1e3f64..1e3, 9)), 0..30),
            loose in proptest::collection::vec((0usize..21, 0usize..21, -1e8f64..1e8), 0..20),
            x in proptest::collection::vec(-1e4f64..1e4, 21),
        ) {
            let n = 3 * nb;
            let mut t = Vec::new();
            for (bi, bj, vals) in &blocks {
                let (bi, bj) = (bi % nb, bj % nb);
                for k in 0..9 {
                    t.push((3 * bi + k / 3, 3 * bj + k % 3, vals[k]));
                }
            }
            let block = CsrMatrix::from_triplets(n, n, &t).unwrap();
            for (i, j, v) in &loose {
                t.push((i % n, j % n, *v));
            }
            let mixed = CsrMatrix::from_triplets(n, n, &t).unwrap();
            for a in [&block, &mixed] {
                let mut y = vec![f64::NAN; n];
                a.mul_vec(&x[..n], &mut y).unwrap();
                let r = reference(a, &x[..n]);
                prop_assert_eq!(y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), r.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
            }
        }
    }
}
