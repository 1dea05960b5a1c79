//! BuiltConstraintSolver's `useSVDForRegularization` (lagrangian-solvers spec §2.4): only the rows
//! of W's near-null space are regularised.

use settee_constraint::solvers::generic::svd_regularization;
use settee_core::constraint::DenseMatrix;

/// A symmetric W whose rows 1 and 2 are identical: its null space is spanned by (0, 1, -1, 0)/√2.
fn w_with_two_equal_rows() -> DenseMatrix {
    #[rustfmt::skip]
    let data = vec![
        2.0, 0.5, 0.5, 0.0,
        0.5, 1.0, 1.0, 0.2,
        0.5, 1.0, 1.0, 0.2,
        0.0, 0.2, 0.2, 3.0,
    ];
    DenseMatrix { n: 4, data }
}

#[test]
fn only_the_rows_of_the_null_space_are_regularised() {
    let mut w = w_with_two_equal_rows();
    let before = w.clone();
    let marked = svd_regularization(&mut w, 1e-3, 0.01, 0.001);
    assert_eq!(marked, vec![1, 2]);
    for i in 0..4 {
        for j in 0..4 {
            let expect = before.get(i, j) + if i == j && (i == 1 || i == 2) { 1e-3 } else { 0.0 };
            assert_eq!(w.get(i, j), expect, "W[{i}][{j}]");
        }
    }
    // The regularised matrix is now invertible: det ≠ 0 (pivot of the 2×2 block [[1+ε,1],[1,1+ε]]).
    let m = nalgebra::DMatrix::from_row_slice(4, 4, &w.data);
    assert!(m.determinant().abs() > 1e-4, "det = {}", m.determinant());
}

#[test]
fn a_well_conditioned_w_is_left_alone() {
    let mut w = DenseMatrix { n: 3, data: vec![2.0, 0.1, 0.0, 0.1, 1.5, 0.2, 0.0, 0.2, 1.0] };
    let before = w.clone();
    assert!(svd_regularization(&mut w, 1e-3, 0.01, 0.001).is_empty());
    assert_eq!(w, before);
}

#[test]
fn a_tiny_regularization_term_is_a_no_op() {
    let mut w = w_with_two_equal_rows();
    let before = w.clone();
    assert!(svd_regularization(&mut w, 0.0, 0.01, 0.001).is_empty());
    assert!(svd_regularization(&mut w, f64::EPSILON, 0.01, 0.001).is_empty());
    assert_eq!(w, before);
}

#[test]
fn the_value_criterion_selects_small_but_nonzero_singular_values() {
    // σ = 10, 1, 0.05 on the diagonal: with factor 0.01 (threshold 0.1) only row 2 is in the null
    // space; with factor 0.2 (threshold 2) rows 1 and 2 are.
    let w0 = DenseMatrix { n: 3, data: vec![10.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.05] };
    let mut w = w0.clone();
    assert_eq!(svd_regularization(&mut w, 0.5, 0.01, 0.001), vec![2]);
    assert_eq!(w.get(2, 2), 0.55);
    assert_eq!(w.get(1, 1), 1.0);
    let mut w = w0.clone();
    assert_eq!(svd_regularization(&mut w, 0.5, 0.2, 0.001), vec![1, 2]);
    assert_eq!(w.get(0, 0), 10.0);
}
