//! 4×4 homogeneous transforms as the loaders build and apply them.
//!
//! The loaders compose `T·R·S` as full 4×4 matrix products and apply the product to each point
//! (`M(i,0)·x + M(i,1)·y + M(i,2)·z + M(i,3)`), so the arithmetic here follows that order to give
//! the same rounding.

use settee_core::types::{quat_from_euler, Quat};

/// Row-major 4×4 matrix.
pub type Mat4 = [[f64; 4]; 4];

/// Tolerance of SOFA's vector and matrix equality tests.
pub const EQUALITY_THRESHOLD: f64 = 1e-6;

pub fn identity() -> Mat4 {
    let mut m = [[0.0; 4]; 4];
    for (i, row) in m.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    m
}

/// Matrix product, accumulated over the inner index in increasing order.
pub fn mul(a: &Mat4, b: &Mat4) -> Mat4 {
    let mut r = [[0.0; 4]; 4];
    for i in 0..4 {
        for k in 0..4 {
            let aik = a[i][k];
            for j in 0..4 {
                r[i][j] += aik * b[k][j];
            }
        }
    }
    r
}

pub fn translation(t: [f64; 3]) -> Mat4 {
    let mut m = identity();
    for i in 0..3 {
        m[i][3] = t[i];
    }
    m
}

pub fn scale(s: [f64; 3]) -> Mat4 {
    let mut m = identity();
    for i in 0..3 {
        m[i][i] = s[i];
    }
    m
}

/// Homogeneous rotation matrix of a quaternion `x y z w`.
pub fn rotation(q: Quat) -> Mat4 {
    let [x, y, z, w] = q;
    let mut m = identity();
    m[0][0] = 1.0 - 2.0 * (y * y + z * z);
    m[0][1] = 2.0 * (x * y - z * w);
    m[0][2] = 2.0 * (z * x + y * w);
    m[1][0] = 2.0 * (x * y + z * w);
    m[1][1] = 1.0 - 2.0 * (z * z + x * x);
    m[1][2] = 2.0 * (y * z - x * w);
    m[2][0] = 2.0 * (z * x - y * w);
    m[2][1] = 2.0 * (y * z + x * w);
    m[2][2] = 1.0 - 2.0 * (y * y + x * x);
    m
}

/// Quaternion of Euler angles given in degrees (`angle·π/180`, x rotation applied first).
pub fn euler_degrees_quat(r: [f64; 3]) -> Quat {
    let k = |a: f64| a * std::f64::consts::PI / 180.0;
    quat_from_euler([k(r[0]), k(r[1]), k(r[2])])
}

/// `T(translation)·R(rotation in degrees)·S(scale)`.
pub fn trs(t: [f64; 3], r_degrees: [f64; 3], s: [f64; 3]) -> Mat4 {
    mul(&mul(&translation(t), &rotation(euler_degrees_quat(r_degrees))), &scale(s))
}

/// Equality within [`EQUALITY_THRESHOLD`] per entry.
pub fn approx_eq(a: &Mat4, b: &Mat4) -> bool {
    a.iter().flatten().zip(b.iter().flatten()).all(|(x, y)| (x - y).abs() < EQUALITY_THRESHOLD)
}

pub fn is_identity(m: &Mat4) -> bool {
    approx_eq(m, &identity())
}

/// True when the last row is `0 0 0 1` (within the threshold): a homogeneous transform.
pub fn is_transform(m: &Mat4) -> bool {
    m[3][..3].iter().all(|v| v.abs() <= EQUALITY_THRESHOLD) && (m[3][3] - 1.0).abs() <= EQUALITY_THRESHOLD
}

/// Applies a homogeneous transform to a point.
pub fn apply(m: &Mat4, v: [f64; 3]) -> [f64; 3] {
    let mut r = [0.0; 3];
    for (i, ri) in r.iter_mut().enumerate() {
        let mut s = m[i][0] * v[0];
        s += m[i][1] * v[1];
        s += m[i][2] * v[2];
        s += m[i][3];
        *ri = s;
    }
    r
}

/// Builds a matrix from 16 row-major reals.
pub fn from_flat(v: &[f64]) -> Mat4 {
    let mut m = identity();
    if v.len() >= 16 {
        for i in 0..4 {
            m[i].copy_from_slice(&v[4 * i..4 * i + 4]);
        }
    }
    m
}

/// Vector inequality within [`EQUALITY_THRESHOLD`] (SOFA's `Vec !=`).
pub fn vec_differs(a: [f64; 3], b: [f64; 3]) -> bool {
    a.iter().zip(b.iter()).any(|(x, y)| (x - y).abs() >= EQUALITY_THRESHOLD)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        a.iter().zip(b.iter()).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn scale_then_rotate_then_translate() {
        // p = (1, 0, 0); scale (2, 3, 4) → (2, 0, 0); Rz(90°) → (0, 2, 0); + (10, 20, 30).
        let m = trs([10.0, 20.0, 30.0], [0.0, 0.0, 90.0], [2.0, 3.0, 4.0]);
        assert!(close(apply(&m, [1.0, 0.0, 0.0]), [10.0, 22.0, 30.0]));
        // x rotation applied before z: (0, 1, 0) → Rx(90°) → (0, 0, 1) → Rz(90°) → (0, 0, 1).
        let m = trs([0.0; 3], [90.0, 0.0, 90.0], [1.0; 3]);
        assert!(close(apply(&m, [0.0, 1.0, 0.0]), [0.0, 0.0, 1.0]));
        // (1, 0, 0) → Rx → (1, 0, 0) → Rz → (0, 1, 0)
        assert!(close(apply(&m, [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0]));
    }

    #[test]
    fn identity_detection_uses_threshold() {
        assert!(is_identity(&trs([0.0; 3], [0.0; 3], [1.0; 3])));
        assert!(is_identity(&trs([1e-7, 0.0, 0.0], [0.0; 3], [1.0; 3])));
        assert!(!is_identity(&trs([1e-5, 0.0, 0.0], [0.0; 3], [1.0; 3])));
        let mut m = identity();
        m[3][0] = 1.0;
        assert!(!is_transform(&m));
    }
}
