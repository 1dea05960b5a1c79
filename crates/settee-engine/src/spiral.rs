//! `Spiral`: rolls a straight model (along x) into an Archimedean spiral.
//!
//! Follows SOFA's `Spiral` (Vec3d): for each rest point, the arc length `l = |x|` is turned into
//! the spiral parameter `t` by ten Newton steps from `√l` on `A/2 (t √(1+t²) + asinh t) = l`
//! (`A` = `curvature`); the point goes to `r (cos t, sin t, z)` with `r = ±A t` (the sign of x),
//! moved by `y` along the spiral's normal `(−A sin t − A t cos t, A cos t − A t sin t, 0)`
//! normalised (its y clamped to 0.8, in single precision as SOFA writes it, near t = 0).
//! `asinh` is Rust's, which may differ from the C library's in the last bit. Computed at init
//! and when the rest positions change.

use settee_core::math::normalized;
use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

/// The spiral image of the rest points `x0` (3 reals each).
pub fn spiral(x0: &[f64], a: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(x0.len());
    for p in x0.chunks_exact(3) {
        let t0 = p[0];
        let l = if t0 > 0.0 { t0 } else { -t0 };
        let mut t = l.sqrt();
        for _ in 0..10 {
            let l_t = a / 2.0 * (t * (1.0 + t * t).sqrt() + t.asinh());
            let dl_t = a * (1.0 + t * t).sqrt();
            t -= (l_t - l) / dl_t;
        }
        let r = if t0 > 0.0 { a * t } else { -a * t };
        let v = [r * t.cos(), r * t.sin(), p[2]];
        let mut n = normalized([-a * t.sin() - a * t * t.cos(), a * t.cos() - a * t * t.sin(), 0.0]);
        let clamp = f64::from(0.8f32);
        if t > -std::f64::consts::FRAC_PI_2 && t < std::f64::consts::FRAC_PI_2 && n[1] > clamp {
            n[1] = clamp;
            n[0] = -(1.0 - n[1] * n[1]).sqrt();
        }
        out.extend([v[0] + n[0] * p[1], v[1] + n[1] * p[1], v[2] + n[2] * p[1]]);
    }
    out
}

/// Engine turning on spiral any topological model.
///
/// The Spiral engine.
#[component(
    module = "Sofa.Component.Engine.Generate",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| Spiral,
    data = {
        /// Rest position coordinates of the degrees of freedom
        rest_position: Coords,
        /// output: Position coordinates of the degrees of freedom
        position: Coords,
        /// Spiral curvature factor
        curvature: Real = "0.2",
    },
)]
#[derive(Clone)]
pub struct Spiral;

impl Spiral {
    fn update(&mut self, cx: &mut InitCtx) {
        let d = cx.data();
        let x = spiral(d.get(Self::REST_POSITION), d.get(Self::CURVATURE));
        cx.data_mut().put(Self::POSITION, x);
    }
}

impl Component for Spiral {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx);
        Ok(())
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spiral keeps arc lengths along the x axis: the image of (l, 0, z) is at parameter t
    /// with A/2 (t √(1+t²) + asinh t) = l and radius A t.
    #[test]
    fn arc_length_is_kept() {
        let a = 0.2;
        let x = spiral(&[3.0, 0.0, 0.5, -3.0, 0.0, 0.0, 0.0, 0.0, 0.0], a);
        let (px, py) = (x[0], x[1]);
        let t = (px * px + py * py).sqrt() / a;
        let l = a / 2.0 * (t * (1.0 + t * t).sqrt() + t.asinh());
        assert!((l - 3.0).abs() < 1e-12, "{l}");
        assert!((py.atan2(px) - t).abs() < 1e-12 || (py.atan2(px) - t + 2.0 * std::f64::consts::PI).abs() < 1e-12);
        assert_eq!(x[2], 0.5);
        // negative x: the opposite radius
        assert!((x[3] + px).abs() < 1e-15 && (x[4] + py).abs() < 1e-15);
        // the origin stays
        assert_eq!(&x[6..], &[0.0, 0.0, 0.0]);
    }

    /// A point off the axis by y moves along the unit normal: its distance to the image of its
    /// axis point is |y|.
    #[test]
    fn offset_along_the_normal() {
        let x = spiral(&[4.0, 0.0, 0.0, 4.0, 0.1, 0.0], 0.2);
        let d = ((x[3] - x[0]).powi(2) + (x[4] - x[1]).powi(2)).sqrt();
        assert!((d - 0.1).abs() < 1e-12);
    }
}
