//! Error type shared by the whole crate.

use thiserror::Error;

/// Errors reported by the linear-algebra building blocks.
///
/// No public function of this crate panics on bad input: dimension mismatches,
/// out-of-range indices, malformed structures and numerical breakdowns are all
/// reported through this type.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LinalgError {
    /// A vector or matrix has the wrong length / size.
    #[error("dimension mismatch for {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// Which operand was wrong.
        what: &'static str,
        /// The length that was required.
        expected: usize,
        /// The length that was given.
        found: usize,
    },
    /// An entry index lies outside the matrix.
    #[error("index ({row}, {col}) out of bounds for a {nrows}x{ncols} matrix")]
    IndexOutOfBounds {
        /// Row index given.
        row: usize,
        /// Column index given.
        col: usize,
        /// Number of rows of the matrix.
        nrows: usize,
        /// Number of columns of the matrix.
        ncols: usize,
    },
    /// The operation needs a square matrix.
    #[error("matrix is not square ({nrows}x{ncols})")]
    NotSquare {
        /// Number of rows.
        nrows: usize,
        /// Number of columns.
        ncols: usize,
    },
    /// A CSR structure given by the caller is malformed.
    #[error("invalid sparse structure: {0}")]
    InvalidStructure(String),
    /// `solve` was called before a successful `factorize`.
    #[error("no valid factorization available (factorize first, or the last factorization failed)")]
    NotFactorized,
    /// A zero pivot `D(k,k)` was met by the LDLᵀ factorization (in permuted numbering).
    #[error("LDL^T factorization failed: zero pivot at (permuted) index {index}")]
    ZeroPivot {
        /// Permuted index of the pivot.
        index: usize,
    },
    /// The LLᵀ factorization met a non-positive pivot: the matrix is not SPD.
    #[error("LL^T factorization failed: matrix is not positive definite (pivot {index})")]
    NotPositiveDefinite {
        /// Index of the failing pivot (in faer's permuted numbering).
        index: usize,
    },
    /// The matrix is (numerically or structurally) singular.
    #[error("matrix is singular: {0}")]
    Singular(String),
    /// Any other failure reported by faer (out of memory, index overflow, ...).
    #[error("faer error: {0}")]
    Faer(String),
}

/// Convenience alias.
pub type Result<T, E = LinalgError> = core::result::Result<T, E>;

/// The length `rows · cols` of a dense array that `found` values must fill: a
/// [`LinalgError::DimensionMismatch`] naming `overflow` when the product overflows, `what` when
/// `found` differs.
pub(crate) fn dense_len(rows: usize, cols: usize, found: usize, overflow: &'static str, what: &'static str) -> Result<usize> {
    let expected = rows.checked_mul(cols).ok_or(LinalgError::DimensionMismatch { what: overflow, expected: usize::MAX, found })?;
    if found != expected {
        return Err(LinalgError::DimensionMismatch { what, expected, found });
    }
    Ok(expected)
}
