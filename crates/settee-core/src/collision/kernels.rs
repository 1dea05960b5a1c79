//! Vector arithmetic in the operation order of SOFA's `sofa::type::Vec` and `Mat`, shared by the
//! intersection methods and the derived geometry.
//!
//! Component-wise `+`, `-` and `* scalar` of nalgebra give SOFA's bits and are used directly;
//! dot products, norms, cross products and divisions are written out here so that the order
//! (`(a0*b0 + a1*b1) + a2*b2`, division of each component rather than multiplication by an
//! inverse) is explicit.

use super::geometry::Vec3;

/// `a · b` as `Vec::operator*(Vec)`: `(a0*b0 + a1*b1) + a2*b2`.
#[inline]
pub fn dot(a: &Vec3, b: &Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `|a|²` as `Vec::norm2`.
#[inline]
pub fn norm2(a: &Vec3) -> f64 {
    a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
}

/// `|a|` as `Vec::norm` (square root of `norm2`).
#[inline]
pub fn norm(a: &Vec3) -> f64 {
    norm2(a).sqrt()
}

/// `a × b` as `sofa::type::cross`.
#[inline]
pub fn cross(a: &Vec3, b: &Vec3) -> Vec3 {
    Vec3::new(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
}

/// `a / s`: every component divided by `s` (`Vec::divscalar`).
#[inline]
pub fn div(a: &Vec3, s: f64) -> Vec3 {
    Vec3::new(a[0] / s, a[1] / s, a[2] / s)
}

/// `Vec::normalize()`: divides by the norm when it exceeds machine epsilon, else leaves the
/// vector unchanged (a zero vector stays zero, no NaN). Returns whether it divided.
#[inline]
pub fn normalize(v: &mut Vec3) -> bool {
    let n = norm(v);
    if n > f64::EPSILON {
        *v = div(v, n);
        true
    } else {
        false
    }
}

/// `Vec::normalized()` (same rule as [`normalize`]).
#[inline]
pub fn normalized(mut v: Vec3) -> Vec3 {
    normalize(&mut v);
    v
}

/// A 3×3 matrix as rows, `m[row][col]`.
pub type Mat3 = [[f64; 3]; 3];

/// `determinant(Mat<3,3>)` in SOFA's term order.
#[inline]
pub fn det3(m: &Mat3) -> f64 {
    m[0][0] * m[1][1] * m[2][2] + m[1][0] * m[2][1] * m[0][2] + m[2][0] * m[0][1] * m[1][2]
        - m[0][0] * m[2][1] * m[1][2]
        - m[1][0] * m[0][1] * m[2][2]
        - m[2][0] * m[1][1] * m[0][2]
}

/// `invertMatrix(Mat<3,3>)`: `None` when `|det| ≤ ε` (machine epsilon), else the cofactor
/// formula, each entry divided by the determinant.
pub fn invert3(f: &Mat3) -> Option<Mat3> {
    let det = det3(f);
    if det.abs() <= f64::EPSILON {
        return None;
    }
    let mut d = [[0.0; 3]; 3];
    d[0][0] = (f[1][1] * f[2][2] - f[2][1] * f[1][2]) / det;
    d[1][0] = (f[1][2] * f[2][0] - f[2][2] * f[1][0]) / det;
    d[2][0] = (f[1][0] * f[2][1] - f[2][0] * f[1][1]) / det;
    d[0][1] = (f[2][1] * f[0][2] - f[0][1] * f[2][2]) / det;
    d[1][1] = (f[2][2] * f[0][0] - f[0][2] * f[2][0]) / det;
    d[2][1] = (f[2][0] * f[0][1] - f[0][0] * f[2][1]) / det;
    d[0][2] = (f[0][1] * f[1][2] - f[1][1] * f[0][2]) / det;
    d[1][2] = (f[0][2] * f[1][0] - f[1][2] * f[0][0]) / det;
    d[2][2] = (f[0][0] * f[1][1] - f[1][0] * f[0][1]) / det;
    Some(d)
}

/// `Mat<3,3> * Vec3`: row `i` is `(m[i][0]*v0 + m[i][1]*v1) + m[i][2]*v2`.
#[inline]
pub fn mat3_mul(m: &Mat3, v: &Vec3) -> Vec3 {
    Vec3::new(
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    )
}

/// The 2×2 normal equations SOFA solves for the projection of a point on a triangle plane
/// (or for the closest points of two lines): `A = [[a00, a01], [a01, a11]]`, `b = [b0, b1]`,
/// `det = a00*a11 − a01*a01`, `α = (b0*a11 − b1*a01)/det`, `β = (b1*a00 − b0*a01)/det`.
#[derive(Clone, Copy, Debug)]
pub struct Normal2 {
    pub a00: f64,
    pub a11: f64,
    pub a01: f64,
    pub b0: f64,
    pub b1: f64,
    pub det: f64,
}

impl Normal2 {
    #[inline]
    pub fn new(a00: f64, a11: f64, a01: f64, b0: f64, b1: f64) -> Normal2 {
        // `determinant(Mat2)` is `m(0,0)*m(1,1) - m(1,0)*m(0,1)` with m(1,0) = m(0,1).
        let det = a00 * a11 - a01 * a01;
        Normal2 { a00, a11, a01, b0, b1, det }
    }

    /// The system of the projection of `q` on the plane of `(p1, p2, p3)` with `AB = p2 − p1`,
    /// `AC = p3 − p1`, `AQ = q − p1` (MinProximity/LocalMinDistance Triangle–Point and the
    /// NewProximity triangle blocks). Returns the system with `AB` and `AC`.
    #[inline]
    pub fn triangle(p1: &Vec3, p2: &Vec3, p3: &Vec3, q: &Vec3) -> (Normal2, Vec3, Vec3) {
        let ab = p2 - p1;
        let ac = p3 - p1;
        let aq = q - p1;
        (Normal2::new(dot(&ab, &ab), dot(&ac, &ac), dot(&ab, &ac), dot(&aq, &ab), dot(&aq, &ac)), ab, ac)
    }

    /// The system of the closest points of lines `(p1, p2)` and `(q1, q2)`: `AB = p2 − p1`,
    /// `CD = q2 − q1`, `AC = q1 − p1`, `a01 = −CD·AB`, `b1 = −CD·AC`. Returns it with `AB`, `CD`
    /// and `AC`.
    #[inline]
    pub fn lines(p1: &Vec3, p2: &Vec3, q1: &Vec3, q2: &Vec3) -> (Normal2, Vec3, Vec3, Vec3) {
        let ab = p2 - p1;
        let cd = q2 - q1;
        let ac = q1 - p1;
        let mcd = -cd;
        (Normal2::new(dot(&ab, &ab), dot(&cd, &cd), dot(&mcd, &ab), dot(&ab, &ac), dot(&mcd, &ac)), ab, cd, ac)
    }

    #[inline]
    pub fn alpha(&self) -> f64 {
        (self.b0 * self.a11 - self.b1 * self.a01) / self.det
    }

    #[inline]
    pub fn beta(&self) -> f64 {
        (self.b1 * self.a00 - self.b0 * self.a01) / self.det
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_leaves_tiny_vectors_unchanged() {
        let mut v = Vec3::new(1e-17, 0.0, 0.0);
        assert!(!normalize(&mut v));
        assert_eq!(v, Vec3::new(1e-17, 0.0, 0.0));
        let mut w = Vec3::new(3.0, 0.0, 4.0);
        assert!(normalize(&mut w));
        assert_eq!(w, Vec3::new(0.6, 0.0, 0.8));
    }

    #[test]
    fn invert3_of_a_diagonal_and_a_singular_matrix() {
        // diag(2, 4, 8): det 64; the cofactors are 32, 16, 8, so the inverse is diag(.5,.25,.125).
        let m = [[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 8.0]];
        let inv = invert3(&m).unwrap();
        assert_eq!(inv, [[0.5, 0.0, 0.0], [0.0, 0.25, 0.0], [0.0, 0.0, 0.125]]);
        let s = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 0.0]];
        assert!(invert3(&s).is_none());
        assert_eq!(mat3_mul(&inv, &Vec3::new(1.0, 1.0, 1.0)), Vec3::new(0.5, 0.25, 0.125));
    }

    #[test]
    fn cross_is_right_handed() {
        let z = cross(&Vec3::new(1.0, 0.0, 0.0), &Vec3::new(0.0, 1.0, 0.0));
        assert_eq!(z, Vec3::new(0.0, 0.0, 1.0));
    }
}
