//! 3×3 matrix decompositions used by the tetrahedral force fields, evaluated in the same order
//! as SOFA's `helper::Decompose` (the "stable" polar decomposition through an SVD of `FᵀF`) and
//! as Eigen 3.4's `SelfAdjointEigenSolver` for fixed 3×3 matrices (used by the Ogden material).
//!
//! Conventions: [`Mat3`] is row-major (`m[row][col]`); products are summed left to right as
//! SOFA's `type::Mat` operators do.

// Index loops mirror the reference formulas; NaN-aware negated comparisons are deliberate; the
// `a = c * a` forms keep SOFA's/Eigen's operand order visible.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord, clippy::assign_op_pattern)]

use settee_core::math::cross;

use crate::hexa::Mat3;

/// Threshold below which a squared singular value counts as zero (SOFA's
/// `Decompose<double>::zeroTolerance()`).
pub const ZERO_TOLERANCE: f64 = 1e-8;

const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Determinant by the rule of Sarrus in SOFA's term order.
pub use settee_linalg::det3 as determinant;

/// `a · b` (3×3 product, each entry summed over k = 0, 1, 2).
#[inline]
pub fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    r
}

/// `aᵀ · b` (SOFA's `multTranspose`).
#[inline]
pub fn mat_t_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = a[0][i] * b[0][j] + a[1][i] * b[1][j] + a[2][i] * b[2][j];
        }
    }
    r
}

/// `a · bᵀ` (SOFA's `multTransposed`).
#[inline]
pub fn mat_mul_t(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = a[i][0] * b[j][0] + a[i][1] * b[j][1] + a[i][2] * b[j][2];
        }
    }
    r
}

#[inline]
pub fn transpose(m: &Mat3) -> Mat3 {
    [[m[0][0], m[1][0], m[2][0]], [m[0][1], m[1][1], m[2][1]], [m[0][2], m[1][2], m[2][2]]]
}

/// Inverse through the adjugate divided by the determinant; `None` when `|det| ≤ ε` or the
/// determinant is not finite (SOFA's `invertMatrix` for 3×3 matrices).
pub use settee_linalg::invert3 as invert;

/// Eigen-decomposition of a symmetric 3×3 matrix by tridiagonalisation (one Householder
/// reflection) and the implicit QL algorithm (at most 32 iterations per eigenvalue); SOFA's
/// `Decompose::eigenDecomposition_iterative`. Returns `(V, λ)` with the eigenvectors in the
/// columns of `V`, not sorted.
pub fn eigen_decomposition_iterative(m: &Mat3) -> (Mat3, [f64; 3]) {
    let mut diag = [0.0; 3];
    let mut sub = [0.0; 3];
    let mut v;
    let (m00, mut m01, mut m02, m11, m12, m22) = (m[0][0], m[0][1], m[0][2], m[1][1], m[1][2], m[2][2]);
    diag[0] = m00;
    sub[2] = 0.0;
    if m02 != 0.0 {
        let length = (m01 * m01 + m02 * m02).sqrt();
        let inv = 1.0 / length;
        m01 *= inv;
        m02 *= inv;
        let q = 2.0 * m01 * m12 + m02 * (m22 - m11);
        diag[1] = m11 + m02 * q;
        diag[2] = m22 - m02 * q;
        sub[0] = length;
        sub[1] = m12 - m01 * q;
        v = [[1.0, 0.0, 0.0], [0.0, m01, m02], [0.0, m02, -m01]];
    } else {
        diag[1] = m11;
        diag[2] = m22;
        sub[0] = m01;
        sub[1] = m12;
        v = IDENTITY;
    }
    ql_algorithm(&mut diag, &mut sub, &mut v);
    (v, diag)
}

/// Implicit QL iterations on a symmetric tridiagonal matrix (`diag`, `sub`), accumulating the
/// rotations into the columns of `v` (Numerical Recipes' `tqli`, as in SOFA).
fn ql_algorithm(diag: &mut [f64; 3], sub: &mut [f64; 3], v: &mut Mat3) {
    const MAX_ITER: usize = 32;
    const N: usize = 3;
    for i0 in 0..N {
        let mut i1 = 0;
        while i1 < MAX_ITER {
            let mut i2 = i0;
            while i2 < N - 1 {
                let tmp = diag[i2].abs() + diag[i2 + 1].abs();
                if sub[i2].abs() + tmp == tmp {
                    break;
                }
                i2 += 1;
            }
            if i2 == i0 {
                break;
            }
            let mut g = (diag[i0 + 1] - diag[i0]) / (2.0 * sub[i0]);
            let mut r = (g * g + 1.0).sqrt();
            if g < 0.0 {
                g = diag[i2] - diag[i0] + sub[i0] / (g - r);
            } else {
                g = diag[i2] - diag[i0] + sub[i0] / (g + r);
            }
            let mut sin = 1.0;
            let mut cos = 1.0;
            let mut p = 0.0;
            for i3 in (i0..i2).rev() {
                let mut f = sin * sub[i3];
                let b = cos * sub[i3];
                if f.abs() >= g.abs() {
                    cos = g / f;
                    r = (cos * cos + 1.0).sqrt();
                    sub[i3 + 1] = f * r;
                    sin = 1.0 / r;
                    cos *= sin;
                } else {
                    sin = f / g;
                    r = (sin * sin + 1.0).sqrt();
                    sub[i3 + 1] = g * r;
                    cos = 1.0 / r;
                    sin *= cos;
                }
                g = diag[i3 + 1] - p;
                r = (diag[i3] - g) * sin + 2.0 * b * cos;
                p = sin * r;
                diag[i3 + 1] = g + p;
                g = cos * r - b;
                for i4 in 0..N {
                    f = v[i4][i3 + 1];
                    v[i4][i3 + 1] = sin * v[i4][i3] + cos * f;
                    v[i4][i3] = cos * v[i4][i3] - sin * f;
                }
            }
            diag[i0] -= p;
            sub[i0] = g;
            sub[i2] = 0.0;
            i1 += 1;
        }
        if i1 == MAX_ITER {
            return;
        }
    }
}

/// SOFA's `SVD_stable`: `F = U·diag(S)·Vᵀ` with `U`, `V` rotations; degenerate (flat, collapsed)
/// and inverted configurations are completed into proper rotations, the smallest singular value
/// taking the sign of the inversion. Returns `(U, S, V, degenerated_or_inverted)`.
pub fn svd_stable(f: &Mat3) -> (Mat3, [f64; 3], Mat3, bool) {
    let ftf = mat_t_mul(f, f);
    let (mut v, mut s) = eigen_decomposition_iterative(&ftf);
    if determinant(&v) < 0.0 {
        for row in v.iter_mut() {
            row[0] = -row[0];
        }
    }
    let mut degenerated = 0;
    let mut s_1 = [0.0; 3];
    for i in 0..3 {
        if s[i] < ZERO_TOLERANCE {
            degenerated += 1;
            s[i] = 0.0;
            s_1[i] = 1.0;
        } else {
            s[i] = s[i].sqrt();
            s_1[i] = 1.0 / s[i];
        }
    }
    // order of the singular values, smallest first
    let order: [usize; 3] = if s[0] < s[1] {
        if s[0] < s[2] {
            if s[1] < s[2] {
                [0, 1, 2]
            } else {
                [0, 2, 1]
            }
        } else {
            [2, 0, 1]
        }
    } else if s[1] < s[2] {
        if s[0] < s[2] {
            [1, 0, 2]
        } else {
            [1, 2, 0]
        }
    } else {
        [2, 1, 0]
    };

    // U = F · (V·diag(S⁻¹))
    let mut vd = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            vd[i][j] = v[i][j] * s_1[j];
        }
    }
    let mut u = match degenerated {
        3 => IDENTITY,
        _ => mat_mul(f, &vd),
    };
    match degenerated {
        1 => {
            let c = cross([u[0][order[1]], u[1][order[1]], u[2][order[1]]], [u[0][order[2]], u[1][order[2]], u[2][order[2]]]);
            for r in 0..3 {
                u[r][order[0]] = c[r];
            }
        }
        2 => {
            // SOFA builds this vector from mixed columns; reproduced as is.
            let edge2 = [u[0][order[2]], u[1][order[0]], u[2][order[0]]];
            let (a0, a1, a2) = (edge2[0].abs(), edge2[1].abs(), edge2[2].abs());
            let mut edge0 = if a0 > a1 {
                if a0 > a2 {
                    [0.0, 1.0, 0.0]
                } else {
                    [1.0, 0.0, 0.0]
                }
            } else if a1 > a2 {
                [0.0, 0.0, 1.0]
            } else {
                [1.0, 0.0, 0.0]
            };
            let mut edge1 = cross(edge2, edge0);
            let n = (edge1[0] * edge1[0] + edge1[1] * edge1[1] + edge1[2] * edge1[2]).sqrt();
            if n > f64::EPSILON {
                edge1 = [edge1[0] / n, edge1[1] / n, edge1[2] / n];
            }
            edge0 = cross(edge1, edge2);
            for r in 0..3 {
                u[r][order[0]] = edge0[r];
                u[r][order[1]] = edge1[r];
            }
        }
        _ => {}
    }
    let inverted = determinant(&u) < 0.0;
    if inverted {
        for row in u.iter_mut() {
            row[order[0]] *= -1.0;
        }
        s[order[0]] *= -1.0;
    }
    (u, s, v, degenerated != 0 || inverted)
}

/// Rotation part of `M` computed through [`svd_stable`] (`Q = U·Vᵀ`); robust to flat and
/// inverted matrices (SOFA's `polarDecomposition_stable`).
pub fn polar_decomposition_stable(m: &Mat3) -> Mat3 {
    let (u, _, v, _) = svd_stable(m);
    mat_mul_t(&u, &v)
}

// ---------------------------------------------------------------------------------------------
// Eigen 3.4 SelfAdjointEigenSolver<Matrix3d>, iterative path (constructor with
// ComputeEigenvectors).

/// Result of [`self_adjoint_eigen`]: eigenvalues in increasing order and the matching unit
/// eigenvectors in the columns of `vectors`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SymmetricEigen {
    pub values: [f64; 3],
    pub vectors: Mat3,
    /// False when the QR iterations did not converge (Eigen's `NoConvergence`).
    pub converged: bool,
}

/// Eigen-decomposition of the symmetric matrix whose lower triangle is `a`, as Eigen 3.4's
/// `SelfAdjointEigenSolver<Matrix3d>(a, ComputeEigenvectors)` computes it: scaling by the
/// largest absolute lower coefficient, closed-form tridiagonalisation of 3×3 matrices, implicit
/// symmetric QR steps with Wilkinson shift (at most 30·3 steps), selection sort of the
/// eigenvalues (eigenvector columns swapped alongside), rescaling of the eigenvalues.
pub fn self_adjoint_eigen(a: &Mat3) -> SymmetricEigen {
    // lower triangle, scaled to [-1, 1]
    let mut mat = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..=i {
            mat[i][j] = a[i][j];
        }
    }
    let mut scale = 0.0f64;
    // Eigen's maxCoeff visits the column-major storage; the maximum value does not depend on
    // the visiting order.
    for j in 0..3 {
        for i in 0..3 {
            let v = mat[i][j].abs();
            if v > scale {
                scale = v;
            }
        }
    }
    if scale == 0.0 {
        scale = 1.0;
    }
    for i in 0..3 {
        for j in 0..=i {
            mat[i][j] /= scale;
        }
    }

    // tridiagonalization_inplace_selector<MatrixType, 3, false>
    let mut diag = [0.0; 3];
    let mut sub = [0.0; 2];
    let tol = f64::MIN_POSITIVE;
    diag[0] = mat[0][0];
    let v1norm2 = mat[2][0] * mat[2][0];
    let mut q: Mat3;
    if v1norm2 <= tol {
        diag[1] = mat[1][1];
        diag[2] = mat[2][2];
        sub[0] = mat[1][0];
        sub[1] = mat[2][1];
        q = IDENTITY;
    } else {
        let beta = (mat[1][0] * mat[1][0] + v1norm2).sqrt();
        let inv_beta = 1.0 / beta;
        let m01 = mat[1][0] * inv_beta;
        let m02 = mat[2][0] * inv_beta;
        let qq = 2.0 * m01 * mat[2][1] + m02 * (mat[2][2] - mat[1][1]);
        diag[1] = mat[1][1] + m02 * qq;
        diag[2] = mat[2][2] - m02 * qq;
        sub[0] = beta;
        sub[1] = mat[2][1] - m01 * qq;
        q = [[1.0, 0.0, 0.0], [0.0, m01, m02], [0.0, m02, -m01]];
    }

    // computeFromTridiagonal_impl
    const MAX_ITERATIONS: usize = 30;
    let n = 3usize;
    let mut end = n - 1;
    let mut start = 0usize;
    let mut iter = 0usize;
    let consider_as_zero = f64::MIN_POSITIVE;
    let precision_inv = 1.0 / f64::EPSILON;
    while end > 0 {
        for i in start..end {
            if sub[i].abs() < consider_as_zero {
                sub[i] = 0.0;
            } else {
                let scaled = precision_inv * sub[i];
                if scaled * scaled <= diag[i].abs() + diag[i + 1].abs() {
                    sub[i] = 0.0;
                }
            }
        }
        while end > 0 && sub[end - 1] == 0.0 {
            end -= 1;
        }
        if end == 0 {
            break;
        }
        iter += 1;
        if iter > MAX_ITERATIONS * n {
            break;
        }
        start = end - 1;
        while start > 0 && sub[start - 1] != 0.0 {
            start -= 1;
        }
        tridiagonal_qr_step(&mut diag, &mut sub, start, end, &mut q);
    }
    let converged = iter <= MAX_ITERATIONS * n;
    if converged {
        for i in 0..n - 1 {
            // index of the minimum of diag[i..] (first one on ties)
            let mut k = 0;
            for j in 1..(n - i) {
                if diag[i + j] < diag[i + k] {
                    k = j;
                }
            }
            if k > 0 {
                diag.swap(i, k + i);
                for row in q.iter_mut() {
                    row.swap(i, k + i);
                }
            }
        }
    }
    for d in diag.iter_mut() {
        *d *= scale;
    }
    SymmetricEigen { values: diag, vectors: q, converged }
}

/// Eigen's `numext::hypot` for reals: `p·sqrt(1 + (q/p)²)` with `p = max(|x|, |y|)`.
fn hypot(x: f64, y: f64) -> f64 {
    let (x, y) = (x.abs(), y.abs());
    if x.is_infinite() || y.is_infinite() {
        return f64::INFINITY;
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    let p = if x < y { y } else { x };
    if p == 0.0 {
        return 0.0;
    }
    let qp = (if y < x { y } else { x }) / p;
    p * (1.0 + qp * qp).sqrt()
}

/// Givens rotation `(c, s)` of Eigen's `JacobiRotation::makeGivens` for reals.
fn make_givens(p: f64, q: f64) -> (f64, f64) {
    if q == 0.0 {
        (if p < 0.0 { -1.0 } else { 1.0 }, 0.0)
    } else if p == 0.0 {
        (0.0, if q < 0.0 { 1.0 } else { -1.0 })
    } else if p.abs() > q.abs() {
        let t = q / p;
        let mut u = (1.0 + t * t).sqrt();
        if p < 0.0 {
            u = -u;
        }
        let c = 1.0 / u;
        (c, -t * c)
    } else {
        let t = p / q;
        let mut u = (1.0 + t * t).sqrt();
        if q < 0.0 {
            u = -u;
        }
        let s = -1.0 / u;
        (-t * s, s)
    }
}

/// One implicit symmetric QR step with Wilkinson shift on the block `start..=end`, applying the
/// rotations on the right of `q` (Eigen's `tridiagonal_qr_step`).
fn tridiagonal_qr_step(diag: &mut [f64; 3], sub: &mut [f64; 2], start: usize, end: usize, q: &mut Mat3) {
    let td = (diag[end - 1] - diag[end]) * 0.5;
    let e = sub[end - 1];
    let mut mu = diag[end];
    if td == 0.0 {
        mu -= e.abs();
    } else if e != 0.0 {
        let e2 = e * e;
        let h = hypot(td, e);
        if e2 == 0.0 {
            mu -= e / ((td + if td > 0.0 { h } else { -h }) / e);
        } else {
            mu -= e2 / (td + if td > 0.0 { h } else { -h });
        }
    }
    let mut x = diag[start] - mu;
    let mut z = sub[start];
    let mut k = start;
    while k < end && z != 0.0 {
        let (c, s) = make_givens(x, z);
        let sdk = s * diag[k] + c * sub[k];
        let dkp1 = s * sub[k] + c * diag[k + 1];
        diag[k] = c * (c * diag[k] - s * sub[k]) - s * (c * sub[k] - s * diag[k + 1]);
        diag[k + 1] = s * sdk + c * dkp1;
        sub[k] = c * sdk - s * dkp1;
        if k > start {
            sub[k - 1] = c * sub[k - 1] - s * z;
        }
        x = sub[k];
        if k < end - 1 {
            z = -s * sub[k + 1];
            sub[k + 1] = c * sub[k + 1];
        }
        // Q = Q·G: applyOnTheRight(k, k+1, rot) applies the transposed rotation (c, -s) to the
        // column pair; skipped for the identity rotation, as Eigen does.
        if !(c == 1.0 && s == 0.0) {
            let (ct, st) = (c, -s);
            for row in q.iter_mut() {
                let xi = row[k];
                let yi = row[k + 1];
                row[k] = ct * xi + st * yi;
                row[k + 1] = -st * xi + ct * yi;
            }
        }
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::quat_to_mat;
    use proptest::prelude::*;

    #[test]
    fn eigen_of_diagonal_and_known_matrix() {
        let e = self_adjoint_eigen(&[[3.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]);
        assert_eq!(e.values, [1.0, 2.0, 3.0]);
        assert!(e.converged);
        // a rotated diagonal matrix
        let r = quat_to_mat([0.8, 0.1, -0.4, 0.3]);
        let d = [[0.5, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 7.0]];
        let a = mat_mul(&mat_mul(&r, &d), &transpose(&r));
        let e = self_adjoint_eigen(&a);
        for (v, x) in e.values.iter().zip([0.5, 2.0, 7.0]) {
            assert!((v - x).abs() < 1e-13, "{:?}", e.values);
        }
        for c in 0..3 {
            let v = [e.vectors[0][c], e.vectors[1][c], e.vectors[2][c]];
            let av = [
                a[0][0] * v[0] + a[0][1] * v[1] + a[0][2] * v[2],
                a[1][0] * v[0] + a[1][1] * v[1] + a[1][2] * v[2],
                a[2][0] * v[0] + a[2][1] * v[1] + a[2][2] * v[2],
            ];
            for i in 0..3 {
                assert!((av[i] - e.values[c] * v[i]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn stable_polar_of_inverted_matrix_is_a_rotation() {
        let f = [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let q = polar_decomposition_stable(&f);
        assert!((determinant(&q) - 1.0).abs() < 1e-12);
        // flat matrix
        let f = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]];
        let q = polar_decomposition_stable(&f);
        assert!((determinant(&q) - 1.0).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn svd_reconstructs_well_conditioned_matrices(
            q in prop::array::uniform4(-1.0f64..1.0).prop_filter("norm", |q| q.iter().map(|v| v * v).sum::<f64>() > 0.1),
            s in prop::array::uniform3(0.3f64..3.0),
        ) {
            let r = quat_to_mat(q);
            let d = [[s[0], 0.0, 0.0], [0.0, s[1], 0.0], [0.0, 0.0, s[2]]];
            let f = mat_mul(&r, &d);
            let (u, sv, v, bad) = svd_stable(&f);
            prop_assert!(!bad);
            let mut us = u;
            for row in us.iter_mut() { for j in 0..3 { row[j] *= sv[j]; } }
            let back = mat_mul_t(&us, &v);
            for i in 0..3 { for j in 0..3 {
                prop_assert!((back[i][j] - f[i][j]).abs() < 1e-9);
            }}
            let pq = polar_decomposition_stable(&f);
            for i in 0..3 { for j in 0..3 {
                prop_assert!((pq[i][j] - r[i][j]).abs() < 1e-9);
            }}
        }

        #[test]
        fn eigen_solver_diagonalises(
            q in prop::array::uniform4(-1.0f64..1.0).prop_filter("norm", |q| q.iter().map(|v| v * v).sum::<f64>() > 0.1),
            l in prop::array::uniform3(-5.0f64..5.0),
        ) {
            let r = quat_to_mat(q);
            let d = [[l[0], 0.0, 0.0], [0.0, l[1], 0.0], [0.0, 0.0, l[2]]];
            let a = mat_mul(&mat_mul(&r, &d), &transpose(&r));
            let e = self_adjoint_eigen(&a);
            let mut sorted = l;
            sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
            for i in 0..3 { prop_assert!((e.values[i] - sorted[i]).abs() < 1e-11); }
            let vtv = mat_t_mul(&e.vectors, &e.vectors);
            for i in 0..3 { for j in 0..3 {
                let id = if i == j { 1.0 } else { 0.0 };
                prop_assert!((vtv[i][j] - id).abs() < 1e-12);
            }}
        }
    }
}
