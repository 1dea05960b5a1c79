//! Small dense helpers (3x3 blocks) used by the preconditioners.

/// Determinant of a 3x3 matrix, with SOFA's term order
/// (`sofa::type::determinant(Mat<3,3>)`):
/// `m00 m11 m22 + m10 m21 m02 + m20 m01 m12 − m00 m21 m12 − m10 m01 m22 − m20 m11 m02`.
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
