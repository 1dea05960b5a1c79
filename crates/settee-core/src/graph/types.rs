//! Degree-of-freedom layouts (SOFA's DataTypes) and the rigid-body arithmetic they need.

use crate::data::TemplateArity;

/// The layout of one element of a mechanical state: SOFA's `Vec1d … Vec6d`, `Rigid2d`, `Rigid3d`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    Vec1,
    Vec2,
    Vec3,
    Vec6,
    Rigid2,
    Rigid3,
}

impl Layout {
    pub const ALL: [Layout; 6] = [Layout::Vec1, Layout::Vec2, Layout::Vec3, Layout::Vec6, Layout::Rigid2, Layout::Rigid3];

    /// Number of reals of a coordinate.
    pub const fn coord_size(self) -> usize {
        match self {
            Layout::Vec1 => 1,
            Layout::Vec2 => 2,
            Layout::Vec3 => 3,
            Layout::Vec6 => 6,
            Layout::Rigid2 => 3,
            Layout::Rigid3 => 7,
        }
    }

    /// Number of reals of a derivative (velocity, force).
    pub const fn deriv_size(self) -> usize {
        match self {
            Layout::Vec1 => 1,
            Layout::Vec2 => 2,
            Layout::Vec3 => 3,
            Layout::Vec6 => 6,
            Layout::Rigid2 => 3,
            Layout::Rigid3 => 6,
        }
    }

    /// Number of spatial (translation) components: the part `get/set/add` of SOFA act on.
    pub const fn spatial_size(self) -> usize {
        match self {
            Layout::Vec1 => 1,
            Layout::Vec2 | Layout::Rigid2 => 2,
            Layout::Vec3 | Layout::Vec6 | Layout::Rigid3 => 3,
        }
    }

    pub const fn arity(self) -> TemplateArity {
        TemplateArity { coord: self.coord_size(), deriv: self.deriv_size() }
    }

    pub const fn is_rigid(self) -> bool {
        matches!(self, Layout::Rigid2 | Layout::Rigid3)
    }

    /// SOFA's template name.
    pub const fn name(self) -> &'static str {
        match self {
            Layout::Vec1 => "Vec1d",
            Layout::Vec2 => "Vec2d",
            Layout::Vec3 => "Vec3d",
            Layout::Vec6 => "Vec6d",
            Layout::Rigid2 => "Rigid2d",
            Layout::Rigid3 => "Rigid3d",
        }
    }

    pub fn from_name(name: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.name() == name)
    }

    /// `x += d·k` on one element, with the rigid exponential map for Rigid3.
    #[inline]
    pub fn coord_add_scaled(self, x: &mut [f64], d: &[f64], k: f64) {
        match self {
            Layout::Rigid3 => {
                let lin = [d[0] * k, d[1] * k, d[2] * k];
                let ang = [d[3] * k, d[4] * k, d[5] * k];
                rigid3_integrate(x, lin, ang);
            }
            _ => {
                for (xi, di) in x.iter_mut().zip(d.iter()) {
                    *xi += di * k;
                }
            }
        }
    }

    /// `x += d` on one element (no scaling: the product is not formed, as in SOFA when k = 1).
    #[inline]
    pub fn coord_add(self, x: &mut [f64], d: &[f64]) {
        match self {
            Layout::Rigid3 => rigid3_integrate(x, [d[0], d[1], d[2]], [d[3], d[4], d[5]]),
            _ => {
                for (xi, di) in x.iter_mut().zip(d.iter()) {
                    *xi += di;
                }
            }
        }
    }
}

/// Quaternion stored `x y z w`.
pub type Quat = [f64; 4];

/// Hamilton product `a ⊗ b` evaluated in SOFA's order.
#[inline]
pub fn quat_mul(a: Quat, b: Quat) -> Quat {
    [
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] + a[1] * b[3] + a[2] * b[0] - a[0] * b[2],
        a[3] * b[2] + a[2] * b[3] + a[0] * b[1] - a[1] * b[0],
        a[3] * b[3] - (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]),
    ]
}

/// SOFA's `normalize`: only rescales when the squared norm is away from 1.
pub fn quat_normalize(q: &mut Quat) {
    let m = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if m == 0.0 {
        q[3] = 1.0;
    } else if (m - 1.0).abs() > 1e-10 {
        let s = 1.0 / m.sqrt();
        for c in q.iter_mut() {
            *c *= s;
        }
    }
}

#[inline]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// Rotates a vector by a unit quaternion.
#[inline]
pub fn quat_rotate(q: Quat, v: [f64; 3]) -> [f64; 3] {
    let u = [q[0], q[1], q[2]];
    let c = cross(u, v);
    let t = [2.0 * c[0], 2.0 * c[1], 2.0 * c[2]];
    let ut = cross(u, t);
    [v[0] + q[3] * t[0] + ut[0], v[1] + q[3] * t[1] + ut[1], v[2] + q[3] * t[2] + ut[2]]
}

/// Quaternion from Euler angles in radians, SOFA's default "ZYX" composition
/// (`qz(rz) ⊗ qy(ry) ⊗ qx(rx)`).
pub fn quat_from_euler(a: [f64; 3]) -> Quat {
    let (s1, c1) = (a[0] * 0.5).sin_cos();
    let (s2, c2) = (a[1] * 0.5).sin_cos();
    let (s3, c3) = (a[2] * 0.5).sin_cos();
    [s1 * c2 * c3 - c1 * s2 * s3, c1 * s2 * c3 + s1 * c2 * s3, c1 * c2 * s3 - s1 * s2 * c3, c1 * c2 * c3 + s1 * s2 * s3]
}

/// Rigid3 `coord += (lin, ang)`: translate the center, then left-multiply the orientation by the
/// exponential of half the rotation vector (world-frame increment), without renormalising.
pub fn rigid3_integrate(x: &mut [f64], lin: [f64; 3], ang: [f64; 3]) {
    x[0] += lin[0];
    x[1] += lin[1];
    x[2] += lin[2];
    let o = [ang[0] * 0.5, ang[1] * 0.5, ang[2] * 0.5];
    let theta = (o[0] * o[0] + o[1] * o[1] + o[2] * o[2]).sqrt();
    let e: Quat = if theta < f64::EPSILON {
        let mut e = [o[0], o[1], o[2], 1.0];
        quat_normalize(&mut e);
        e
    } else {
        let s = theta.sin() / theta;
        [s * o[0], s * o[1], s * o[2], theta.cos()]
    };
    let q = [x[3], x[4], x[5], x[6]];
    let r = quat_mul(e, q);
    x[3..7].copy_from_slice(&r);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The exponential-map update keeps a unit quaternion unit (to round-off), whatever the
        /// increment.
        #[test]
        fn rigid_increment_preserves_unit_orientation(
            q in prop::array::uniform4(-1.0f64..1.0),
            w in prop::array::uniform3(-10.0f64..10.0),
            h in 1e-6f64..0.1,
        ) {
            let mut q = q;
            prop_assume!(q.iter().map(|c| c * c).sum::<f64>() > 1e-3);
            quat_normalize(&mut q);
            let mut x = [0.0, 0.0, 0.0, q[0], q[1], q[2], q[3]];
            for _ in 0..10 {
                Layout::Rigid3.coord_add_scaled(&mut x, &[0.0, 0.0, 0.0, w[0], w[1], w[2]], h);
            }
            let n: f64 = x[3..7].iter().map(|c| c * c).sum();
            prop_assert!((n - 1.0).abs() < 1e-12, "norm² {}", n);
        }

        /// Rotating by q then by its conjugate gives the vector back.
        #[test]
        fn rotation_then_inverse_is_identity(a in prop::array::uniform3(-3.0f64..3.0), v in prop::array::uniform3(-5.0f64..5.0)) {
            let q = quat_from_euler(a);
            let r = quat_rotate(q, v);
            let back = quat_rotate([-q[0], -q[1], -q[2], q[3]], r);
            for c in 0..3 {
                prop_assert!((back[c] - v[c]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn rigid_rotation_about_x_accumulates_angle() {
        // 0.1 rad/s about −x for 39.6 s in steps of 0.04 (InteractionEllipsoidForceField reference).
        let mut x = [0.0, 5.0, 3.0, 0.0, 0.0, 0.0, 1.0];
        for _ in 0..99 {
            Layout::Rigid3.coord_add_scaled(&mut x, &[0.0, 0.0, 0.0, -0.1, 0.0, 0.0], 0.04);
        }
        assert!((x[3] - (-0.196709)).abs() < 1e-6, "{x:?}");
        assert!((x[6] - 0.980462).abs() < 1e-6);
    }

    #[test]
    fn euler_quaternion_rotates_x_then_y_then_z() {
        let q = quat_from_euler([0.0, 0.0, std::f64::consts::FRAC_PI_2]);
        let v = quat_rotate(q, [1.0, 0.0, 0.0]);
        assert!((v[0]).abs() < 1e-15 && (v[1] - 1.0).abs() < 1e-15);
    }
}
