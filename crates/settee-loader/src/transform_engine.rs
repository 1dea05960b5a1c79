//! `TransformEngine`: `output_position` = `input_position` scaled, rotated (Euler angles, then
//! quaternion) and translated — each operation only when its parameter differs from the neutral
//! value; `inverse` applies the inverse operations in reverse order. Rigid templates rotate the
//! centre and compose the orientation (`q·orientation`); `Rigid2d` adds the z angle.
//!
//! The output is computed at creation (so components created later see it through links, as
//! SOFA's lazy engines do) and again at init, from the then-current inputs.

use settee_core::role::Engine;
use settee_core::types::{quat_mul, quat_rotate, Quat};
use settee_core::{component, Component, InitCtx, Layout, SimResult};

use crate::transform::{self, EQUALITY_THRESHOLD};

/// One operation of the chain.
#[derive(Clone, Copy, Debug)]
enum Op {
    Scale([f64; 3]),
    /// Rotation quaternion, and the z angle (radians) added to Rigid2d orientations.
    Rotate(Quat, f64),
    Translate([f64; 3]),
}

/// SOFA's `Quat::inverse`: conjugate divided by the norm.
fn quat_inverse(q: Quat) -> Quat {
    let norm = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if norm == 0.0 {
        return [0.0; 4];
    }
    let k = 1.0 / norm;
    [-q[0] * k, -q[1] * k, -q[2] * k, q[3] * k]
}

/// The operations in application order.
fn operations(s: [f64; 3], r: [f64; 3], q: Quat, t: [f64; 3], inv: bool) -> Vec<Op> {
    let mut ops: Vec<Op> = Vec::new();
    let mut add = |op: Op| if inv { ops.insert(0, op) } else { ops.push(op) };
    if transform::vec_differs(s, [1.0; 3]) {
        add(Op::Scale(if inv { [1.0 / s[0], 1.0 / s[1], 1.0 / s[2]] } else { s }));
    }
    if transform::vec_differs(r, [0.0; 3]) {
        let k = std::f64::consts::PI / 180.0;
        let mut qr = settee_core::types::quat_from_euler([r[0] * k, r[1] * k, r[2] * k]);
        let mut rot_z = r[2] * (std::f64::consts::PI / 180.0f32 as f64);
        if inv {
            qr = quat_inverse(qr);
            rot_z = -rot_z;
        }
        add(Op::Rotate(qr, rot_z));
    }
    if q.iter().zip([0.0, 0.0, 0.0, 1.0]).any(|(a, b)| (a - b).abs() > EQUALITY_THRESHOLD) {
        add(Op::Rotate(if inv { quat_inverse(q) } else { q }, 0.0));
    }
    if transform::vec_differs(t, [0.0; 3]) {
        add(Op::Translate(if inv { [-t[0], -t[1], -t[2]] } else { t }));
    }
    ops
}

/// Applies the chain to one coordinate of `layout`.
fn apply(ops: &[Op], layout: Layout, x: &mut [f64]) {
    let k = layout.spatial_size();
    for op in ops {
        let mut p = [0.0; 3];
        p[..k].copy_from_slice(&x[..k]);
        match *op {
            Op::Scale(s) => {
                for i in 0..k {
                    x[i] = p[i] * s[i];
                }
            }
            Op::Translate(t) => {
                for i in 0..k {
                    x[i] = p[i] + t[i];
                }
            }
            Op::Rotate(q, rot_z) => {
                let r = quat_rotate(q, p);
                x[..k].copy_from_slice(&r[..k]);
                match layout {
                    Layout::Rigid3 => {
                        let o = [x[3], x[4], x[5], x[6]];
                        x[3..7].copy_from_slice(&quat_mul(q, o));
                    }
                    Layout::Rigid2 => x[2] += rot_z,
                    _ => {}
                }
            }
        }
    }
}

/// Engine transforming (scale, rotation, translation) a list of coordinates.
///
/// The TransformEngine component.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    templates = ["Vec3d", "Vec1d", "Vec2d", "Rigid2d", "Rigid3d"],
    create = |args| TransformEngine { layout: args.layout.unwrap_or(Layout::Vec3) },
    data = {
        /// input array of coordinates
        input_position: Coords,
        /// output array of coordinates
        output_position: Coords,
        /// translation vector (x, y, z)
        translation: Fixed(3) = "0 0 0",
        /// rotation, Euler angles in degrees (x applied first)
        rotation: Fixed(3) = "0 0 0",
        /// rotation quaternion (qx, qy, qz, qw), applied after `rotation`
        quaternion: Fixed(4) = "0 0 0 1",
        /// scale factors
        scale: Fixed(3) = "1 1 1",
        /// apply the inverse transformation
        inverse: Bool = "false",
    },
)]
#[derive(Clone)]
pub struct TransformEngine {
    layout: Layout,
}

impl TransformEngine {
    fn update(&self, cx: &mut InitCtx) {
        let d = cx.data();
        let q = d.get(Self::QUATERNION);
        let q: Quat =
            [q.first().copied().unwrap_or(0.0), q.get(1).copied().unwrap_or(0.0), q.get(2).copied().unwrap_or(0.0), q.get(3).copied().unwrap_or(1.0)];
        let ops = operations(d.get(Self::SCALE), d.get(Self::ROTATION), q, d.get(Self::TRANSLATION), d.get(Self::INVERSE));
        let cs = self.layout.coord_size();
        let mut out = d.get(Self::INPUT_POSITION).to_vec();
        out.truncate(out.len() / cs * cs);
        for x in out.chunks_exact_mut(cs) {
            apply(&ops, self.layout, x);
        }
        cx.data_mut().put(Self::OUTPUT_POSITION, out);
    }
}

impl Component for TransformEngine {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx);
        Ok(())
    }

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(layout: Layout, x: &[f64], s: [f64; 3], r: [f64; 3], t: [f64; 3], inv: bool) -> Vec<f64> {
        let ops = operations(s, r, [0.0, 0.0, 0.0, 1.0], t, inv);
        let mut v = x.to_vec();
        apply(&ops, layout, &mut v);
        v
    }

    #[test]
    fn scale_rotate_translate_and_inverse() {
        let x = [1.0, 0.0, 0.0];
        let y = run(Layout::Vec3, &x, [2.0, 1.0, 1.0], [0.0, 0.0, 90.0], [0.0, 0.0, 5.0], false);
        assert!((y[0]).abs() < 1e-15 && (y[1] - 2.0).abs() < 1e-15 && (y[2] - 5.0).abs() < 1e-15, "{y:?}");
        let back = run(Layout::Vec3, &y, [2.0, 1.0, 1.0], [0.0, 0.0, 90.0], [0.0, 0.0, 5.0], true);
        for (a, b) in back.iter().zip(x.iter()) {
            assert!((a - b).abs() < 1e-15, "{back:?}");
        }
    }

    #[test]
    fn rigid_orientation_is_composed() {
        let x = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let y = run(Layout::Rigid3, &x, [1.0; 3], [0.0, 0.0, 90.0], [0.0; 3], false);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!((y[1] - 1.0).abs() < 1e-15 && (y[5] - h).abs() < 1e-15 && (y[6] - h).abs() < 1e-15, "{y:?}");
        let y = run(Layout::Rigid2, &[1.0, 0.0, 0.5], [1.0; 3], [0.0, 0.0, 90.0], [0.0; 3], false);
        assert!((y[1] - 1.0).abs() < 1e-15 && (y[2] - (0.5 + std::f64::consts::FRAC_PI_2)).abs() < 1e-6, "{y:?}");
    }
}
