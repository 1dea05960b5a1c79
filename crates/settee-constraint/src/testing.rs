//! Helpers shared by the tests of this crate (no part of a simulation).

use settee_core::constraint::DenseMatrix;

/// The `n × n` Gram matrix of the rows of `b` (`n` rows of `cols` reals, row-major):
/// `W[i][j] = finish(i, j, Σ_c b[i][c]·b[j][c])`, each sum in column order.
pub fn gram(b: &[f64], n: usize, cols: usize, finish: impl Fn(usize, usize, f64) -> f64) -> DenseMatrix {
    let mut w = DenseMatrix::zeros(n);
    for i in 0..n {
        for j in 0..n {
            let mut acc = 0.0;
            for c in 0..cols {
                acc += b[i * cols + c] * b[j * cols + c];
            }
            w.data[i * n + j] = finish(i, j, acc);
        }
    }
    w
}
