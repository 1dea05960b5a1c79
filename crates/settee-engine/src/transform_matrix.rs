//! `TranslateTransformMatrixEngine`, `ScaleTransformMatrixEngine`, `RotateTransformMatrixEngine`
//! and `InvertTransformMatrixEngine`: 4×4 homogeneous transforms (row-major `inT`/`outT`).
//!
//! Follow SOFA's engines: `outT = inT · M` with M the translation, the scale (diagonal) or the
//! rotation (SOFA's quaternion from Euler angles in degrees, ZYX composition, turned into a
//! matrix); the inverse of a rigid-and-scale transform is `[R⁻¹, −R⁻¹·t; 0 0 0 1]` (R⁻¹ by
//! cofactors over SOFA's determinant; a determinant within machine epsilon of 0 leaves those
//! entries unset, with a warning). Computed as soon as parsed (a loader's `transformation` may
//! read `outT` while the scene loads), at init and when an input changes.

use settee_core::role::Engine;
use settee_core::types::quat_from_euler;
use settee_core::{component, data_group, Component, InitCtx, SimResult};

type M4 = [f64; 16];

/// `a · b`, each entry summed over k in increasing order.
fn mul(a: &M4, b: &M4) -> M4 {
    let mut r = [0.0; 16];
    for i in 0..4 {
        for j in 0..4 {
            let mut s = a[i * 4] * b[j];
            for k in 1..4 {
                s += a[i * 4 + k] * b[k * 4 + j];
            }
            r[i * 4 + j] = s;
        }
    }
    r
}

fn identity() -> M4 {
    let mut m = [0.0; 16];
    for i in 0..4 {
        m[i * 5] = 1.0;
    }
    m
}

/// The rotation part of a quaternion `x y z w` (SOFA's `Quat::toMatrix`).
fn rotation(q: [f64; 4]) -> [[f64; 3]; 3] {
    [
        [1.0 - 2.0 * (q[1] * q[1] + q[2] * q[2]), 2.0 * (q[0] * q[1] - q[2] * q[3]), 2.0 * (q[2] * q[0] + q[1] * q[3])],
        [2.0 * (q[0] * q[1] + q[2] * q[3]), 1.0 - 2.0 * (q[2] * q[2] + q[0] * q[0]), 2.0 * (q[1] * q[2] - q[0] * q[3])],
        [2.0 * (q[2] * q[0] - q[1] * q[3]), 2.0 * (q[1] * q[2] + q[0] * q[3]), 1.0 - 2.0 * (q[1] * q[1] + q[0] * q[0])],
    ]
}

pub fn translate(t: [f64; 3]) -> M4 {
    let mut m = identity();
    m[3] = t[0];
    m[7] = t[1];
    m[11] = t[2];
    m
}

pub fn scale(s: [f64; 3]) -> M4 {
    let mut m = identity();
    m[0] = s[0];
    m[5] = s[1];
    m[10] = s[2];
    m
}

/// Euler angles in degrees.
pub fn rotate(degrees: [f64; 3]) -> M4 {
    let r = rotation(quat_from_euler(degrees.map(|a| a * std::f64::consts::PI / 180.0)));
    let mut m = identity();
    for i in 0..3 {
        m[i * 4..i * 4 + 3].copy_from_slice(&r[i]);
    }
    m
}

/// SOFA's `transformInvertMatrix` into `out`; false when the 3×3 part is singular (its entries
/// then stay as they were in `out`, the translation is computed with a zero inverse).
pub fn invert(m: &M4, out: &mut M4) -> bool {
    let f = |i: usize, j: usize| m[i * 4 + j];
    let det = f(0, 0) * f(1, 1) * f(2, 2) + f(1, 0) * f(2, 1) * f(0, 2) + f(2, 0) * f(0, 1) * f(1, 2)
        - f(0, 0) * f(2, 1) * f(1, 2)
        - f(1, 0) * f(0, 1) * f(2, 2)
        - f(2, 0) * f(1, 1) * f(0, 2);
    let ok = det.abs() > f64::EPSILON;
    let mut r = [[0.0; 3]; 3];
    if ok {
        r[0][0] = (f(1, 1) * f(2, 2) - f(2, 1) * f(1, 2)) / det;
        r[1][0] = (f(1, 2) * f(2, 0) - f(2, 2) * f(1, 0)) / det;
        r[2][0] = (f(1, 0) * f(2, 1) - f(2, 0) * f(1, 1)) / det;
        r[0][1] = (f(2, 1) * f(0, 2) - f(0, 1) * f(2, 2)) / det;
        r[1][1] = (f(2, 2) * f(0, 0) - f(0, 2) * f(2, 0)) / det;
        r[2][1] = (f(2, 0) * f(0, 1) - f(0, 0) * f(2, 1)) / det;
        r[0][2] = (f(0, 1) * f(1, 2) - f(1, 1) * f(0, 2)) / det;
        r[1][2] = (f(0, 2) * f(1, 0) - f(1, 2) * f(0, 0)) / det;
        r[2][2] = (f(0, 0) * f(1, 1) - f(1, 0) * f(0, 1)) / det;
        for i in 0..3 {
            out[i * 4..i * 4 + 3].copy_from_slice(&r[i]);
        }
    }
    for (i, row) in r.iter().enumerate() {
        out[i * 4 + 3] = -row[0] * f(0, 3) + -row[1] * f(1, 3) + -row[2] * f(2, 3);
    }
    out[12] = 0.0;
    out[13] = 0.0;
    out[14] = 0.0;
    out[15] = 1.0;
    ok
}

/// Data of every transform-matrix engine.
#[data_group(data = {
    /// input transformation if any
    inT: Fixed(16) as Reals = "1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1",
    /// output: output transformation
    outT: Fixed(16) as Reals = "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
})]
pub struct TransformMatrixData;

fn input(cx: &InitCtx) -> M4 {
    let v = cx.data().get(TransformMatrixData::IN_T);
    let mut m = [0.0; 16];
    m.copy_from_slice(&v[..16]);
    m
}

/// `outT = inT · local` (the engines composing a transform).
fn compose(cx: &mut InitCtx, local: M4) {
    let out = mul(&input(cx), &local);
    cx.data_mut().put(TransformMatrixData::OUT_T, out.to_vec());
}

/// Compose the input transform (if any) with the given translation.
///
/// The TranslateTransformMatrixEngine engine.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    create = |_| TranslateTransformMatrixEngine,
    inherit = [TransformMatrixData, Self],
    data = {
        /// translation vector
        translation: Fixed(3) as Vec3 = "0 0 0",
    },
)]
#[derive(Clone)]
pub struct TranslateTransformMatrixEngine;

impl Component for TranslateTransformMatrixEngine {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.init(cx)
    }
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        compose(cx, translate(cx.data().get(Self::TRANSLATION)));
        Ok(())
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.init(cx)
    }
}

/// Compose the input transform (if any) with the given scale transformation.
///
/// The ScaleTransformMatrixEngine engine.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    create = |_| ScaleTransformMatrixEngine,
    inherit = [TransformMatrixData, Self],
    data = {
        /// scaling values
        scale: Fixed(3) as Vec3 = "0 0 0",
    },
)]
#[derive(Clone)]
pub struct ScaleTransformMatrixEngine;

impl Component for ScaleTransformMatrixEngine {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.init(cx)
    }
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        compose(cx, scale(cx.data().get(Self::SCALE)));
        Ok(())
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.init(cx)
    }
}

/// Compose the input transform (if any) with the given rotation.
///
/// The RotateTransformMatrixEngine engine.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    create = |_| RotateTransformMatrixEngine,
    inherit = [TransformMatrixData, Self],
    data = {
        /// euler angles (degrees)
        rotation: Fixed(3) as Vec3 = "0 0 0",
    },
)]
#[derive(Clone)]
pub struct RotateTransformMatrixEngine;

impl Component for RotateTransformMatrixEngine {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.init(cx)
    }
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        compose(cx, rotate(cx.data().get(Self::ROTATION)));
        Ok(())
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.init(cx)
    }
}

/// Inverts the input transform.
///
/// The InvertTransformMatrixEngine engine.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    create = |_| InvertTransformMatrixEngine,
    inherit = [TransformMatrixData],
)]
#[derive(Clone)]
pub struct InvertTransformMatrixEngine;

impl InvertTransformMatrixEngine {
    fn update(&mut self, cx: &mut InitCtx, report: bool) {
        let mut out = [0.0; 16];
        out.copy_from_slice(&cx.data().get(TransformMatrixData::OUT_T)[..16]);
        let ok = invert(&input(cx), &mut out);
        cx.data_mut().put(TransformMatrixData::OUT_T, out.to_vec());
        if !ok && report {
            cx.warn("could not invert the matrix");
        }
    }
}

impl Component for InvertTransformMatrixEngine {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx, false);
        Ok(())
    }
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx, true);
        Ok(())
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx, true);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    fn apply(m: &M4, p: [f64; 3]) -> [f64; 3] {
        let r = |i: usize| m[i * 4] * p[0] + m[i * 4 + 1] * p[1] + m[i * 4 + 2] * p[2] + m[i * 4 + 3];
        [r(0), r(1), r(2)]
    }

    #[test]
    fn compositions_and_inverse() {
        // translate then scale: p ↦ T·S·p = S p + t
        let ts = mul(&translate([10.0, 11.0, 12.0]), &scale([2.0, 4.0, 0.5]));
        assert_eq!(apply(&ts, [1.0, 1.0, 2.0]), [12.0, 15.0, 13.0]);
        // its inverse: (p − t) / s, exactly for these powers of two
        let mut inv = [0.0; 16];
        assert!(invert(&ts, &mut inv));
        assert_eq!(apply(&inv, [12.0, 15.0, 13.0]), [1.0, 1.0, 2.0]);
        assert_eq!(&inv[12..], &[0.0, 0.0, 0.0, 1.0]);
        // 90° about z maps x to y
        let r = rotate([0.0, 0.0, 90.0]);
        let p = apply(&r, [1.0, 0.0, 0.0]);
        assert!(p[0].abs() < 1e-15 && (p[1] - 1.0).abs() < 1e-15 && p[2].abs() < 1e-15);
        // a singular matrix is refused
        assert!(!invert(&scale([1.0, 0.0, 1.0]), &mut inv));
    }

    /// The chain of TransformMatrixEngine.scn.
    #[test]
    fn scene_chain() {
        let f = factory();
        let mut s = Scene::new("root");
        let t1 = add(&mut s, &f, Scene::ROOT, "TranslateTransformMatrixEngine", &[("name", "T1"), ("translation", "10 11 12")]);
        let t2 = add(&mut s, &f, Scene::ROOT, "ScaleTransformMatrixEngine", &[("name", "T2"), ("inT", "@T1.outT"), ("scale", "2 4 0.5")]);
        let t4 = add(&mut s, &f, Scene::ROOT, "InvertTransformMatrixEngine", &[("name", "T4"), ("inT", "@T2.outT")]);
        init_scene(&mut s).unwrap();
        assert_eq!(s.entry(t1).data.reals("outT"), [1., 0., 0., 10., 0., 1., 0., 11., 0., 0., 1., 12., 0., 0., 0., 1.]);
        assert_eq!(s.entry(t2).data.reals("outT"), [2., 0., 0., 10., 0., 4., 0., 11., 0., 0., 0.5, 12., 0., 0., 0., 1.]);
        assert_eq!(s.entry(t4).data.reals("outT"), [0.5, 0., 0., -5., 0., 0.25, 0., -2.75, 0., 0., 2., -24., 0., 0., 0., 1.]);
    }
}
