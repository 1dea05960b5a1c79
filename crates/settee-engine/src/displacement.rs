//! `DisplacementTransformEngine` and `DisplacementMatrixEngine`: the displacement of each rigid
//! frame from its rest pose, `D = X · X₀⁻¹`, as a 4×4 homogeneous matrix (row-major) or as a
//! rigid coordinate.
//!
//! As in SOFA, the inverses of the rest frames are computed at init; `DisplacementMatrixEngine`
//! also scales them first (`S · X₀⁻¹`, `scales` defaulting to 1), and names its output
//! `displaceMats`. Sizes that differ leave the output as it was, with a warning.

use settee_core::role::Engine;
use settee_core::types::{quat_mul, quat_rotate, Quat};
use settee_core::{component, Component, InitCtx, SimResult};

type M4 = [f64; 16];

/// SOFA's `Quat::toHomogeneousMatrix` with the frame's translation.
fn homogeneous(x: &[f64]) -> M4 {
    let q = [x[3], x[4], x[5], x[6]];
    let r = [
        [1.0 - 2.0 * (q[1] * q[1] + q[2] * q[2]), 2.0 * (q[0] * q[1] - q[2] * q[3]), 2.0 * (q[2] * q[0] + q[1] * q[3])],
        [2.0 * (q[0] * q[1] + q[2] * q[3]), 1.0 - 2.0 * (q[2] * q[2] + q[0] * q[0]), 2.0 * (q[1] * q[2] - q[0] * q[3])],
        [2.0 * (q[2] * q[0] - q[1] * q[3]), 2.0 * (q[1] * q[2] + q[0] * q[3]), 1.0 - 2.0 * (q[1] * q[1] + q[0] * q[0])],
    ];
    let mut m = [0.0; 16];
    for i in 0..3 {
        m[i * 4..i * 4 + 3].copy_from_slice(&r[i]);
        m[i * 4 + 3] = x[i];
    }
    m[15] = 1.0;
    m
}

fn mul(a: &M4, b: &M4) -> M4 {
    std::array::from_fn(|k| {
        let (i, j) = (k / 4, k % 4);
        let mut s = a[i * 4] * b[j];
        for l in 1..4 {
            s += a[i * 4 + l] * b[l * 4 + j];
        }
        s
    })
}

/// SOFA's `Rigid3Types::inverse`: the conjugate orientation and the center `−q⁻¹·c`.
fn rigid_inverse(x: &[f64]) -> [f64; 7] {
    let qi: Quat = [-x[3], -x[4], -x[5], x[6]];
    let c = quat_rotate(qi, [x[0], x[1], x[2]]);
    [-c[0], -c[1], -c[2], qi[0], qi[1], qi[2], qi[3]]
}

/// SOFA's `RigidCoord::multRight`: `x ∘ b`, i.e. center `c + q·b.c`, orientation `q ⊗ b.q`.
fn rigid_mult_right(x: &[f64], b: &[f64; 7]) -> [f64; 7] {
    let q = [x[3], x[4], x[5], x[6]];
    let t = quat_rotate(q, [b[0], b[1], b[2]]);
    let r = quat_mul(q, [b[3], b[4], b[5], b[6]]);
    [x[0] + t[0], x[1] + t[1], x[2] + t[2], r[0], r[1], r[2], r[3]]
}

/// The displacements of frames `x` from rest frames with inverses `inv`: 16 numbers per frame
/// (matrices) or 7 (rigid coordinates, `inv` then holding 7 numbers per frame).
fn displacements(x: &[f64], inv: &[f64], matrices: bool) -> Vec<f64> {
    if matrices {
        x.chunks_exact(7).zip(inv.chunks_exact(16)).flat_map(|(xi, m)| mul(&homogeneous(xi), m.try_into().expect("16 numbers"))).collect()
    } else {
        x.chunks_exact(7).zip(inv.chunks_exact(7)).flat_map(|(xi, b)| rigid_mult_right(xi, b.try_into().expect("7 numbers"))).collect()
    }
}

/// Converts a vector of Rigid to a vector of displacement transforms.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    templates = ["Rigid3d,Mat4x4d", "Rigid3d,Rigid3d"],
    create = |_| DisplacementTransformEngine::default(),
    data = {
        /// Rest position
        x0: Coords,
        /// Current position
        x: Coords,
        /// Displacement transforms with respect to original rigid positions
        displacements: Reals,
    },
)]
#[derive(Clone, Default)]
pub struct DisplacementTransformEngine {
    matrices: bool,
    inverses: Vec<f64>,
}

impl DisplacementTransformEngine {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let x = cx.data().get(Self::X).to_vec();
        if x.len() * if self.matrices { 16 } else { 7 } != self.inverses.len() * 7 {
            cx.warn(format!(
                "x and x0 have not the same size: {} and {} frames",
                x.len() / 7,
                self.inverses.len() / if self.matrices { 16 } else { 7 }
            ));
            return Ok(());
        }
        let d = displacements(&x, &self.inverses, self.matrices);
        cx.data_mut().put(Self::DISPLACEMENTS, d);
        Ok(())
    }
}

impl Component for DisplacementTransformEngine {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.matrices = !cx.scene.entry(cx.id).template.ends_with("Rigid3d,Rigid3d");
        let x0 = cx.data().get(Self::X0).to_vec();
        self.inverses = x0
            .chunks_exact(7)
            .flat_map(|c| {
                let inv = rigid_inverse(c);
                if self.matrices {
                    homogeneous(&inv).to_vec()
                } else {
                    inv.to_vec()
                }
            })
            .collect();
        self.update(cx)
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

/// Converts a vector of Rigid to a vector of displacement matrices.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    templates = ["Rigid3d"],
    create = |_| DisplacementMatrixEngine::default(),
    data = {
        /// Rest position
        x0: Coords,
        /// Current position
        x: Coords,
        /// Displacement matrices with respect to original rigid positions, scaled
        #[alias("displacements")]
        displaceMats: Reals,
        /// Scale transformation added to the rigid transformation
        scales: RealTuples(3),
    },
)]
#[derive(Clone, Default)]
pub struct DisplacementMatrixEngine {
    /// `S · X₀⁻¹` per frame.
    scaled_inverses: Vec<f64>,
}

impl DisplacementMatrixEngine {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let x = cx.data().get(Self::X).to_vec();
        if x.len() / 7 != self.scaled_inverses.len() / 16 {
            cx.warn(format!("x and x0 have not the same size: {} and {} frames", x.len() / 7, self.scaled_inverses.len() / 16));
            return Ok(());
        }
        let d = displacements(&x, &self.scaled_inverses, true);
        cx.data_mut().put(Self::DISPLACE_MATS, d);
        Ok(())
    }
}

impl Component for DisplacementMatrixEngine {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let x0 = cx.data().get(Self::X0).to_vec();
        let n = x0.len() / 7;
        let mut scales = cx.data().get(Self::SCALES).to_vec();
        if scales.is_empty() {
            scales = vec![1.0; 3 * n];
            cx.data_mut().put(Self::SCALES, scales.clone());
        }
        if scales.len() != 3 * n {
            return Err(cx
                .error(format!("x0 has {n} frames but scales {} triples", scales.len() / 3))
                .hint("give one scale triple per frame, or none"));
        }
        self.scaled_inverses = x0
            .chunks_exact(7)
            .zip(scales.chunks_exact(3))
            .flat_map(|(c, s)| {
                let mut sm = [0.0; 16];
                sm[0] = s[0];
                sm[5] = s[1];
                sm[10] = s[2];
                sm[15] = 1.0;
                mul(&sm, &homogeneous(&rigid_inverse(c)))
            })
            .collect();
        self.update(cx)
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame at (1, 2, 3) turned a quarter about z, moved to (1, 5, 3) turned a half turn: the
    /// displacement D = X·X₀⁻¹ maps the rest frame's points to the current ones, D·(X₀·p) = X·p
    /// for p = (1, 0, 0) and (0, 0, 2); D as a rigid coordinate does the same.
    #[test]
    fn displacement_maps_rest_points_to_current_points() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let x0 = [1.0, 2.0, 3.0, 0.0, 0.0, h, h];
        let x = [1.0, 5.0, 3.0, 0.0, 0.0, 1.0, 0.0];
        let inv = homogeneous(&rigid_inverse(&x0));
        let d = displacements(&x, &inv, true);
        let rigid = displacements(&x, &rigid_inverse(&x0), false);
        let apply = |m: &[f64], p: [f64; 3]| -> [f64; 3] {
            std::array::from_fn(|i| m[i * 4] * p[0] + m[i * 4 + 1] * p[1] + m[i * 4 + 2] * p[2] + m[i * 4 + 3])
        };
        for p in [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]] {
            let rest = apply(&homogeneous(&x0), p);
            let now = apply(&homogeneous(&x), p);
            let mapped = apply(&d, rest);
            let q = [rigid[3], rigid[4], rigid[5], rigid[6]];
            let r = quat_rotate(q, rest);
            for k in 0..3 {
                assert!((mapped[k] - now[k]).abs() < 1e-14, "{mapped:?} vs {now:?}");
                assert!((r[k] + rigid[k] - now[k]).abs() < 1e-14);
            }
        }
        // A frame at rest has the identity displacement.
        let id = displacements(&x0, &inv, true);
        for (k, v) in id.iter().enumerate() {
            let e = if k % 5 == 0 { 1.0 } else { 0.0 };
            assert!((v - e).abs() < 1e-15, "{k}: {v}");
        }
    }

    /// DisplacementMatrixEngine with scales (2, 3, 4) on a frame at rest at the origin: D = S;
    /// moved by (1, 0, 0): D = T·S. The Rigid3d,Rigid3d transform engine gives (1, 0, 0 | id).
    #[test]
    fn scaled_matrix_engine_in_a_scene() {
        use crate::test_support::factory;
        use settee_core::simulation::init_root;
        use settee_core::testing::add;
        use settee_core::Scene;
        let f = factory();
        let mut s = Scene::new("root");
        let c = add(&mut s, &f, Scene::ROOT, "DisplacementMatrixEngine", &[("x0", "0 0 0 0 0 0 1"), ("x", "1 0 0 0 0 0 1"), ("scales", "2 3 4")]);
        let t = add(
            &mut s,
            &f,
            Scene::ROOT,
            "DisplacementTransformEngine",
            &[("template", "Rigid3,Rigid3"), ("x0", "0 0 0 0 0 0 1"), ("x", "1 0 0 0 0 0 1")],
        );
        init_root(&mut s, &f).unwrap();
        assert_eq!(
            s.entry(c).data.get(DisplacementMatrixEngine::DISPLACE_MATS),
            [2.0, 0.0, 0.0, 1.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0, 1.0]
        );
        assert_eq!(s.entry(t).data.get(DisplacementTransformEngine::DISPLACEMENTS), [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    }
}
