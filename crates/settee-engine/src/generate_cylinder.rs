//! `GenerateCylinder`: a tetrahedral mesh of a cylinder along z (SOFA's Engine/Generate).
//!
//! `resHeight` layers of points from z = 0 to `height`; each layer is its center followed by
//! `resRadial` rings of `resCircumferential` points (ring j at radius j·radius/resRadial, point k
//! at angle 2πk/resCircumferential), all shifted by `origin`. Between two layers, the sector
//! next to the axis is a triangular prism cut into 3 tetrahedra and each outer cell a hexahedron
//! cut into 6, with SOFA's vertex orders. SOFA's Bezier control points and its surface triangle
//! outputs are not offered (a Bezier degree above 1 is refused).

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

/// Positions (flat xyz) and tetrahedra (flat, 4 indices each) of the cylinder.
pub fn cylinder(radius: f64, height: f64, origin: [f64; 3], n_theta: usize, n_r: usize, n_z: usize) -> (Vec<f64>, Vec<usize>) {
    let mut x = Vec::with_capacity((n_theta * n_r + 1) * n_z * 3);
    for i in 0..n_z {
        let z = i as f64 * height / (n_z as f64 - 1.0);
        x.extend_from_slice(&[origin[0], origin[1], z + origin[2]]);
        for j in 1..=n_r {
            let r = j as f64 * radius / n_r as f64;
            for k in 0..n_theta {
                let theta = k as f64 * 2.0 * std::f64::consts::PI / n_theta as f64;
                x.extend_from_slice(&[r * theta.cos() + origin[0], r * theta.sin() + origin[1], z + origin[2]]);
            }
        }
    }
    let layer = n_theta * n_r + 1;
    let mut t = Vec::new();
    for i in 1..n_z {
        let mut center = i * layer;
        let mut prev = n_theta;
        for k in 1..=n_theta {
            let p = [center, center + prev, center + k, center - layer, center + prev - layer, center + k - layer];
            t.extend_from_slice(&[p[1], p[0], p[2], p[3]]);
            t.extend_from_slice(&[p[1], p[2], p[4], p[3]]);
            t.extend_from_slice(&[p[3], p[4], p[5], p[2]]);
            prev = k;
        }
        for _ in 1..n_r {
            prev = n_theta;
            for k in 1..=n_theta {
                let h0 = [center + k, center + prev, center + k + n_theta, center + prev + n_theta];
                let h = [h0[0], h0[1], h0[2], h0[3], h0[0] - layer, h0[1] - layer, h0[2] - layer, h0[3] - layer];
                t.extend_from_slice(&[h[0], h[5], h[4], h[7]]);
                t.extend_from_slice(&[h[0], h[1], h[5], h[3]]);
                t.extend_from_slice(&[h[5], h[0], h[3], h[7]]);
                t.extend_from_slice(&[h[0], h[3], h[7], h[2]]);
                t.extend_from_slice(&[h[7], h[0], h[2], h[4]]);
                t.extend_from_slice(&[h[6], h[7], h[2], h[4]]);
                prev = k;
            }
            center += n_theta;
        }
    }
    (x, t)
}

/// Generate a Cylindrical Tetrahedral Mesh.
#[component(
    module = "Sofa.Component.Engine.Generate",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| GenerateCylinder,
    data = {
        /// output array of 3d points of tetrahedra mesh
        #[alias("position", "output_position")]
        output_TetrahedraPosition: Coords,
        /// output mesh tetrahedra
        tetrahedra: IndexTuples(4),
        /// order of Bezier triangles (only 0 or 1: no Bezier control points are generated)
        BezierTriangleDegree: Int = "0",
        /// order of Bezier tetrahedra (only 0 or 1: no Bezier control points are generated)
        BezierTetrahedronDegree: Int = "0",
        /// input cylinder radius
        radius: Real = "0.2",
        /// input cylinder height
        height: Real = "1",
        /// cylinder origin point
        origin: Fixed(3) as Vec3 = "0 0 0",
        /// if the cylinder is open at its 2 ends
        openSurface: Bool = "true",
        /// Resolution in the circumferential direction
        resCircumferential: Int = "6",
        /// Resolution in the radial direction
        resRadial: Int = "3",
        /// Resolution in the height direction
        resHeight: Int = "5",
    },
)]
#[derive(Clone)]
pub struct GenerateCylinder;

impl GenerateCylinder {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        if d.get(Self::BEZIER_TRIANGLE_DEGREE) > 1 || d.get(Self::BEZIER_TETRAHEDRON_DEGREE) > 1 {
            return Err(cx.error("Bezier degrees above 1 are not supported").hint("leave BezierTriangleDegree and BezierTetrahedronDegree unset"));
        }
        let (n_theta, n_r, n_z) = (d.get(Self::RES_CIRCUMFERENTIAL), d.get(Self::RES_RADIAL), d.get(Self::RES_HEIGHT));
        if n_theta < 1 || n_r < 1 || n_z < 2 {
            return Err(cx
                .error(format!("resolutions {n_theta} (circumferential), {n_r} (radial), {n_z} (height) make no cylinder"))
                .hint("resCircumferential and resRadial must be at least 1, resHeight at least 2"));
        }
        let (x, t) = cylinder(d.get(Self::RADIUS), d.get(Self::HEIGHT), d.get(Self::ORIGIN), n_theta as usize, n_r as usize, n_z as usize);
        cx.data_mut().put(Self::OUTPUT_TETRAHEDRA_POSITION, x);
        cx.data_mut().put(Self::TETRAHEDRA, t);
        Ok(())
    }
}

impl Component for GenerateCylinder {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Signed volume of a tetrahedron.
    fn volume(x: &[f64], t: &[usize]) -> f64 {
        let p = |i: usize| [x[t[i] * 3], x[t[i] * 3 + 1], x[t[i] * 3 + 2]];
        let (a, b, c, d) = (p(0), p(1), p(2), p(3));
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        let w = [d[0] - a[0], d[1] - a[1], d[2] - a[2]];
        (u[0] * (v[1] * w[2] - v[2] * w[1]) + u[1] * (v[2] * w[0] - v[0] * w[2]) + u[2] * (v[0] * w[1] - v[1] * w[0])) / 6.0
    }

    /// The scene's cylinder (7 × 3 × 7): (7·3 + 1)·7 = 154 points, 3·7·6 + 6·2·7·6 = 630
    /// tetrahedra; the tetrahedra fill the prism of the inscribed 7-gon: total |volume| =
    /// height · (7/2)·r²·sin(2π/7).
    #[test]
    fn counts_and_volume() {
        let (x, t) = cylinder(0.2, 1.0, [0.0; 3], 7, 3, 7);
        assert_eq!(x.len(), 154 * 3);
        assert_eq!(t.len(), 630 * 4);
        assert_eq!(x[3..6], [0.2 / 3.0, 0.0, 0.0]);
        assert_eq!(x[x.len() - 3..][2], 1.0);
        let total: f64 = t.chunks_exact(4).map(|q| volume(&x, q).abs()).sum();
        let polygon = 3.5 * 0.04 * (2.0 * std::f64::consts::PI / 7.0).sin();
        assert!((total - polygon).abs() < 1e-14, "{total} vs {polygon}");
        assert!(t.iter().all(|&i| i < 154));
    }
}
