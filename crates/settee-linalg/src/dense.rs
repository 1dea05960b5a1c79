//! Small dense helpers: 3x3 blocks used by the preconditioners, and the dense product of
//! `PrecomputedLinearSolver`.

/// Determinant of a 3x3 matrix, with SOFA's term order
/// (`sofa::type::determinant(Mat<3,3>)`):
/// `m00 m11 m22 + m10 m21 m02 + m20 m01 m12 − m00 m21 m12 − m10 m01 m22 − m20 m11 m02`.
#[inline]
pub fn det3(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * m[1][1] * m[2][2] + m[1][0] * m[2][1] * m[0][2] + m[2][0] * m[0][1] * m[1][2]
        - m[0][0] * m[2][1] * m[1][2]
        - m[1][0] * m[0][1] * m[2][2]
        - m[2][0] * m[1][1] * m[0][2]
}

/// Inverse of a 3x3 matrix by cofactors divided by the determinant, with the
/// same expressions as SOFA's `invertMatrix(Mat<3,3>&, const Mat<3,3>&)`.
/// Returns `None` when `|det| <= f64::EPSILON` (SOFA's `equalsZero`) or when
/// the determinant is not finite.
#[inline]
pub fn invert3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let det = det3(m);
    if det.abs() <= f64::EPSILON || !det.is_finite() {
        return None;
    }
    let mut d = [[0.0; 3]; 3];
    d[0][0] = (m[1][1] * m[2][2] - m[2][1] * m[1][2]) / det;
    d[1][0] = (m[1][2] * m[2][0] - m[2][2] * m[1][0]) / det;
    d[2][0] = (m[1][0] * m[2][1] - m[2][0] * m[1][1]) / det;
    d[0][1] = (m[2][1] * m[0][2] - m[0][1] * m[2][2]) / det;
    d[1][1] = (m[2][2] * m[0][0] - m[0][2] * m[2][0]) / det;
    d[2][1] = (m[2][0] * m[0][1] - m[0][0] * m[2][1]) / det;
    d[0][2] = (m[0][1] * m[1][2] - m[1][1] * m[0][2]) / det;
    d[1][2] = (m[0][2] * m[1][0] - m[1][2] * m[0][0]) / det;
    d[2][2] = (m[0][0] * m[1][1] - m[1][0] * m[0][1]) / det;
    Some(d)
}

/// `m v` for a 3x3 matrix, each component accumulated left to right
/// (`m[i][0] v0 + m[i][1] v1 + m[i][2] v2`).
pub fn mul3_vec(m: &[[f64; 3]; 3], v: &[f64; 3]) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (o, row) in out.iter_mut().zip(m) {
        *o = row[0] * v[0] + row[1] * v[1] + row[2] * v[2];
    }
    out
}

/// `mᵀ v` for a 3x3 matrix (`m[0][i] v0 + m[1][i] v1 + m[2][i] v2`).
pub fn mul3t_vec(m: &[[f64; 3]; 3], v: &[f64; 3]) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (i, o) in out.iter_mut().enumerate() {
        *o = m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2];
    }
    out
}

/// `x = A·b` for a dense `rows × cols` matrix `A` given **transposed**, row-major:
/// `at[k * rows + i] = A[i][k]`. Every `x_i` is summed exactly as the plain dot product
/// `((0 + A[i][0]·b[0]) + A[i][1]·b[1]) + …` in increasing `k` (no fused multiply-add, no
/// reassociation), so the result has the same bits as that loop; the speed comes from computing
/// many rows at once (independent sums in vector lanes), each row of `at` read once.
///
/// Panics if `at.len() != rows * cols`, `b.len() != cols` or `x.len() != rows`.
pub fn gemv_transposed(at: &[f64], rows: usize, cols: usize, b: &[f64], x: &mut [f64]) {
    assert_eq!(at.len(), rows * cols, "gemv_transposed: matrix size");
    assert_eq!(b.len(), cols, "gemv_transposed: b size");
    assert_eq!(x.len(), rows, "gemv_transposed: x size");
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { gemv_transposed_avx2(at, rows, cols, b, x) };
            return;
        }
    }
    gemv_transposed_generic(at, rows, cols, b, x);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gemv_transposed_avx2(at: &[f64], rows: usize, cols: usize, b: &[f64], x: &mut [f64]) {
    gemv_transposed_generic(at, rows, cols, b, x);
}

#[inline(always)]
fn gemv_transposed_generic(at: &[f64], rows: usize, cols: usize, b: &[f64], x: &mut [f64]) {
    const B: usize = 32;
    let mut i0 = 0;
    while i0 + B <= rows {
        let mut acc = [0.0f64; B];
        for (k, &bk) in b.iter().enumerate() {
            let col: &[f64; B] = at[k * rows + i0..k * rows + i0 + B].try_into().expect("block");
            for r in 0..B {
                acc[r] += col[r] * bk;
            }
        }
        x[i0..i0 + B].copy_from_slice(&acc);
        i0 += B;
    }
    if i0 < rows {
        let m = rows - i0;
        let mut acc = [0.0f64; B];
        for (k, &bk) in b.iter().enumerate().take(cols) {
            let col = &at[k * rows + i0..k * rows + rows];
            for r in 0..m {
                acc[r] += col[r] * bk;
            }
        }
        x[i0..].copy_from_slice(&acc[..m]);
    }
}

/// A dense `rows × cols` matrix stored for repeated products `x = A·b`: panels of
/// [`RowPanels::ROWS`] consecutive rows, each panel column by column. A product then streams
/// through memory once, in order (a column-major matrix would be read with a stride of a whole
/// column per entry of `b`, one page apart for large matrices). Each `x_i` is summed as the
/// plain dot product `((0 + A[i][0]·b[0]) + A[i][1]·b[1]) + …` in increasing column order, as
/// [`gemv_transposed`] does: the same bits.
#[derive(Clone, Debug, Default)]
pub struct RowPanels {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl RowPanels {
    /// Rows per panel: their sums advance together in vector lanes.
    pub const ROWS: usize = 32;

    /// From a row-major `rows × cols` matrix (`a[i * cols + k] = A[i][k]`).
    ///
    /// Panics if `a.len() != rows * cols`.
    pub fn from_row_major(a: &[f64], rows: usize, cols: usize) -> RowPanels {
        assert_eq!(a.len(), rows * cols, "RowPanels: matrix size");
        let mut data = Vec::with_capacity(a.len());
        for i0 in (0..rows).step_by(Self::ROWS) {
            let w = Self::ROWS.min(rows - i0);
            for k in 0..cols {
                data.extend((i0..i0 + w).map(|i| a[i * cols + k]));
            }
        }
        RowPanels { rows, cols, data }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// `x = A·b`.
    ///
    /// Panics if `b.len() != cols` or `x.len() != rows`.
    pub fn mul(&self, b: &[f64], x: &mut [f64]) {
        assert_eq!(b.len(), self.cols, "RowPanels::mul: b size");
        assert_eq!(x.len(), self.rows, "RowPanels::mul: x size");
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                unsafe { self.mul_avx2(b, x) };
                return;
            }
        }
        self.mul_generic(b, x);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn mul_avx2(&self, b: &[f64], x: &mut [f64]) {
        self.mul_generic(b, x);
    }

    #[inline(always)]
    fn mul_generic(&self, b: &[f64], x: &mut [f64]) {
        const B: usize = RowPanels::ROWS;
        let full = self.rows / B;
        let (panels, tail) = self.data.split_at(full * B * self.cols);
        for (panel, xs) in panels.chunks_exact(B * self.cols).zip(x.chunks_exact_mut(B)) {
            let mut acc = [0.0f64; B];
            for (col, &bk) in panel.chunks_exact(B).zip(b) {
                let col: &[f64; B] = col.try_into().expect("panel column");
                for r in 0..B {
                    acc[r] += col[r] * bk;
                }
            }
            xs.copy_from_slice(&acc);
        }
        let w = self.rows - full * B;
        if w > 0 {
            let mut acc = [0.0f64; B];
            for (col, &bk) in tail.chunks_exact(w).zip(b) {
                for r in 0..w {
                    acc[r] += col[r] * bk;
                }
            }
            x[full * B..].copy_from_slice(&acc[..w]);
        }
    }
}

/// The transpose of a dense row-major `rows × cols` matrix (row-major `cols × rows`).
pub fn transpose_dense(a: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    assert_eq!(a.len(), rows * cols, "transpose_dense: matrix size");
    let mut t = vec![0.0; a.len()];
    const T: usize = 32;
    for i0 in (0..rows).step_by(T) {
        for j0 in (0..cols).step_by(T) {
            for i in i0..(i0 + T).min(rows) {
                for j in j0..(j0 + T).min(cols) {
                    t[j * rows + i] = a[i * cols + j];
                }
            }
        }
    }
    t
}
