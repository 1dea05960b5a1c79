//! Rigid-frame kinematics shared by the Compliant rigid mappings: Rigid3 coordinates are
//! `[x y z qx qy qz qw]`, Rigid3 derivatives `[v ω]` with ω in world coordinates (SOFA's
//! convention).

use settee_core::types::{quat_mul, quat_rotate, Quat};

use crate::common::{norm, scale, M3, V3};

/// The orientation of frame `k` of a flat Rigid3 coordinate vector.
#[inline]
pub fn quat_at(x: &[f64], k: usize) -> Quat {
    [x[7 * k + 3], x[7 * k + 4], x[7 * k + 5], x[7 * k + 6]]
}

/// The centre of frame `k` of a flat Rigid3 coordinate vector.
#[inline]
pub fn centre_at(x: &[f64], k: usize) -> V3 {
    [x[7 * k], x[7 * k + 1], x[7 * k + 2]]
}

#[inline]
pub fn conjugate(q: Quat) -> Quat {
    [-q[0], -q[1], -q[2], q[3]]
}

/// `q` scaled to unit norm (left as is when null).
pub fn normalized(q: Quat) -> Quat {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if n == 0.0 {
        return [0.0, 0.0, 0.0, 1.0];
    }
    [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
}

/// The rotation matrix of a unit quaternion (row-major): its columns are the rotated axes.
pub fn rotation_matrix(q: Quat) -> M3 {
    let q = normalized(q);
    let cols = [quat_rotate(q, [1.0, 0.0, 0.0]), quat_rotate(q, [0.0, 1.0, 0.0]), quat_rotate(q, [0.0, 0.0, 1.0])];
    let mut m = [[0.0; 3]; 3];
    for (c, col) in cols.iter().enumerate() {
        for r in 0..3 {
            m[r][c] = col[r];
        }
    }
    m
}

/// A rigid frame: centre and orientation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    pub c: V3,
    pub q: Quat,
}

impl Frame {
    pub fn at(x: &[f64], k: usize) -> Frame {
        Frame { c: centre_at(x, k), q: quat_at(x, k) }
    }

    pub fn from_slice(x: &[f64]) -> Frame {
        Frame::at(x, 0)
    }

    /// SOFA's `Rigid3Types::inverse`: `(−q⁻¹·c, q⁻¹)`.
    pub fn inverse(&self) -> Frame {
        let qi = conjugate(self.q);
        let c = quat_rotate(qi, self.c);
        Frame { c: [-c[0], -c[1], -c[2]], q: qi }
    }

    /// SOFA's `Rigid3Types::mult`: `a·b = (c_a + q_a·c_b, q_a q_b)`.
    pub fn mul(&self, b: &Frame) -> Frame {
        let r = quat_rotate(self.q, b.c);
        Frame { c: [self.c[0] + r[0], self.c[1] + r[1], self.c[2] + r[2]], q: quat_mul(self.q, b.q) }
    }

    pub fn write(&self, out: &mut [f64]) {
        out[..3].copy_from_slice(&self.c);
        out[3..7].copy_from_slice(&self.q);
    }
}

/// The rotation vector of a quaternion (angle in `[0, π]` times the unit axis), computed as the
/// plugin's `SE3::log` does: normalise, flip to `w ≥ 0`, `asin` of the vector norm below ~5°,
/// `acos(w)` above.
pub fn log(q: Quat) -> V3 {
    let mut q = normalized(q);
    if q[3] < 0.0 {
        q = [-q[0], -q[1], -q[2], -q[3]];
    }
    let w = q[3].min(1.0);
    let v = [q[0], q[1], q[2]];
    let (sin_half, theta) = if w > 0.999 {
        let s = norm(v);
        (s, 2.0 * s.asin())
    } else {
        let half = w.acos();
        (half.sin(), 2.0 * half)
    };
    if sin_half < f64::EPSILON {
        return v;
    }
    scale(v, theta / sin_half)
}

/// The quaternion of a rotation vector.
pub fn exp(v: V3) -> Quat {
    let theta = norm(v);
    let half = 0.5 * theta;
    let s = if half.abs() < f64::EPSILON { 0.5 } else { half.sin() / theta };
    [v[0] * s, v[1] * s, v[2] * s, half.cos()]
}

/// `[v]×`: the matrix of `w ↦ v × w`.
pub fn hat(v: V3) -> M3 {
    [[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]]
}

#[allow(clippy::needless_range_loop)] // 3×3 products written with indices
pub fn mat_mul(a: &M3, b: &M3) -> M3 {
    let mut m = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

pub fn transpose(a: &M3) -> M3 {
    let mut m = [[0.0; 3]; 3];
    for (i, row) in a.iter().enumerate() {
        for (j, x) in row.iter().enumerate() {
            m[j][i] = *x;
        }
    }
    m
}

/// The derivative of the rotation log in body coordinates (the inverse right Jacobian of SO(3)):
/// for `R` with rotation vector `r`, `log(R·exp(δ)) = r + dlog(r)·δ + O(δ²)`, i.e.
/// `I + ½[r]× + (1/θ² − cot(θ/2)/(2θ))·[r]×²` with `θ = |r|`.
///
/// The plugin's `SE3::dlog` evaluates this formula at `2r` (it writes `[r]×` and `θ·cot θ` where
/// `½[r]×` and `(θ/2)·cot(θ/2)` belong), which is only right to first order at `r = 0`; Settee
/// uses the exact derivative, so that `exact_dlog` matches finite differences.
#[allow(clippy::needless_range_loop)]
pub fn dlog(r: V3) -> M3 {
    let theta = norm(r);
    let h = hat(r);
    let h2 = mat_mul(&h, &h);
    let c = if theta < 1e-4 {
        1.0 / 12.0 + theta * theta / 720.0
    } else {
        let half = 0.5 * theta;
        (1.0 - half * half.cos() / half.sin()) / (theta * theta)
    };
    let mut m = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = if i == j { 1.0 } else { 0.0 } + 0.5 * h[i][j] + c * h2[i][j];
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use settee_core::types::quat_from_euler;

    #[test]
    fn log_inverts_exp_and_dlog_matches_finite_differences() {
        for r in [[0.3, -0.2, 0.5], [1e-6, 2e-6, -1e-6], [2.0, 1.0, -1.5], [0.0, 0.0, 0.0]] {
            let l = log(exp(r));
            for c in 0..3 {
                assert!((l[c] - r[c]).abs() < 1e-12, "{l:?} vs {r:?}");
            }
            let d = dlog(r);
            let h = 1e-6;
            for k in 0..3 {
                let mut e = [0.0; 3];
                e[k] = h;
                let qp = quat_mul(exp(r), exp(e));
                e[k] = -h;
                let qm = quat_mul(exp(r), exp(e));
                let (lp, lm) = (log(qp), log(qm));
                for i in 0..3 {
                    let fd = (lp[i] - lm[i]) / (2.0 * h);
                    assert!((fd - d[i][k]).abs() < 1e-6, "r {r:?}: dlog[{i}][{k}] = {} vs FD {fd}", d[i][k]);
                }
            }
        }
    }

    #[test]
    fn frame_inverse_and_product() {
        let a = Frame { c: [1.0, 2.0, -3.0], q: quat_from_euler([0.3, -0.7, 1.1]) };
        let i = a.inverse().mul(&a);
        assert!(norm(i.c) < 1e-14);
        assert!((i.q[3].abs() - 1.0).abs() < 1e-14);
        let r = rotation_matrix(a.q);
        let v = [0.2, -0.4, 0.9];
        let rv = quat_rotate(a.q, v);
        for row in 0..3 {
            let m: f64 = (0..3).map(|c| r[row][c] * v[c]).sum();
            assert!((m - rv[row]).abs() < 1e-14);
        }
    }
}
