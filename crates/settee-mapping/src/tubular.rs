//! `TubularMapping` (Rigid3d → Vec3d): circles of points around each input frame, the skin of a
//! tube around a beam (its quads come from `Edge2QuadTopologicalMapping`).
//!
//! Frame `k` carries the `N = nbPointsOnEachCircle` points `k·N + j` at
//! `r = (Y·cos θ_j + Z·sin θ_j)·ρ_k` from its centre (`θ_j = 2πj/N`; `Y`, `Z` the frame's rotated
//! y and z axes, read from SOFA's quaternion → matrix conversion). The radius `ρ_k` is `radius`,
//! attenuated linearly towards a tip with `peak`: `peak = p > 0` gives `ρ_k = k/p·radius` for the
//! first `p` frames, `peak = −p` gives `ρ_k = m/p·radius` for the last `p` frames (`m` frames
//! after `k`). The point moves with its frame: `v = v_k − r × ω_k`, and a force `f` on it gives
//! the frame `(f, r × f)`.
//!
//! SOFA's `applyJT` for forces does not reset its sums between frames (each frame also receives
//! the forces of the frames before it); Settee applies the transpose of `applyJ`, which SOFA's
//! constraint `applyJT` also does. The scenes that use this mapping put no force on the tube, so
//! the two agree there.

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, SimResult, StateId, VecId};

use crate::common::{
    check_layouts, cross, finish_init, frames_to_points, mapping_ports, push_point_block, resolve_ports, v3, FramesToPoints, Ports, V3,
};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Rigid3, Layout::Vec3)];

crate::common::mapping_class! {
    {
        name = "TubularMapping", module = "Sofa.Component.Mapping.Linear",
        description = "Maps circles of points around Rigid3 frames: the skin of a tube around a beam.",
        templates = ["Rigid3d,Vec3d"],
        default_template = "Rigid3d,Vec3d",
        data = {
            /// Discretization of created circles
            nbPointsOnEachCircle: Int = "0",
            /// Radius of created circles
            radius: Real = "0",
            /// =0 no peak, =1 peak on the first segment =2 peak on the two first segment, =-1 peak on the last segment
            peak: Int = "0",
        },
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct TubularMapping {
        ports: Ports,
        n_in: usize,
        /// Points per circle.
        per_circle: usize,
        radius: f64,
        peak: i64,
        /// One entry per output point (its index only matters: see `frames_to_points!`).
        points: Vec<()>,
        /// Cached by `apply`: each point's offset from its frame's centre.
        rotated: Vec<V3>,
    }
}

/// SOFA's quaternion → rotation matrix, row-major.
fn rotation_matrix(q: [f64; 4]) -> [[f64; 3]; 3] {
    let [x, y, z, w] = q;
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (z * x + y * w)],
        [2.0 * (x * y + z * w), 1.0 - 2.0 * (z * z + x * x), 2.0 * (y * z - x * w)],
        [2.0 * (z * x - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (y * y + x * x)],
    ]
}

impl TubularMapping {
    /// A mapping built directly (tests): `n_in` frames, `per_circle` points each.
    pub fn build(input: StateId, output: StateId, n_in: usize, per_circle: usize, radius: f64, peak: i64) -> TubularMapping {
        TubularMapping {
            ports: Ports::direct(&[input], Layout::Rigid3, output, Layout::Vec3),
            n_in,
            per_circle,
            radius,
            peak,
            points: vec![(); n_in * per_circle],
            rotated: Vec::new(),
        }
    }

    /// The radius of the circle of frame `k` (SOFA's attenuation towards a peak).
    pub fn circle_radius(&self, k: usize) -> f64 {
        let rho = self.radius;
        if self.peak > 0 {
            if (k as i64) < self.peak {
                return (k as f64 / self.peak as f64) * rho;
            }
        } else {
            let after = self.n_in as i64 - (k as i64 + 1);
            if after < -self.peak {
                return (-(after as f64) / self.peak as f64) * rho;
            }
        }
        rho
    }

    /// Index of the frame of output point `i`.
    fn frame_of(&self, i: usize) -> usize {
        i / self.per_circle
    }
}

impl Component for TubularMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_ports(cx, false)?;
        let d = cx.data();
        if !d.is_given(Self::RADIUS) {
            return Err(cx.error("no radius defined").hint("set radius=\"...\" (the radius of the tube)"));
        }
        self.radius = d.get(Self::RADIUS);
        self.peak = d.get(Self::PEAK);
        self.per_circle = d.get(Self::NB_POINTS_ON_EACH_CIRCLE).max(0) as usize;
        let Some(_) = self.ports.output else { return Ok(()) };
        check_layouts(cx, &self.ports, TEMPLATES)?;
        self.n_in = cx.state_size(self.ports.inputs[0]);
        let n = self.n_in * self.per_circle;
        self.points = vec![(); n];
        if cx.read_vec(self.ports.inputs[0], VecId::POSITION).len() < 7 * self.n_in {
            return Err(cx.error("the input Rigid3 state has no positions"));
        }
        finish_init(cx, n, self)
    }
}

frames_to_points!(TubularMapping, rotated);

impl Mapping for TubularMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = self.checked_positions(out, inputs)?;
        let n = self.per_circle;
        self.rotated.resize(self.points.len(), [0.0; 3]);
        for k in 0..self.n_in {
            let rho = self.circle_radius(k);
            let f = &x[7 * k..7 * k + 7];
            let r = rotation_matrix([f[3], f[4], f[5], f[6]]);
            // R·(0 1 0) and R·(0 0 1): the second and third columns.
            let (y, z) = ([r[0][1], r[1][1], r[2][1]], [r[0][2], r[1][2], r[2][2]]);
            for j in 0..n {
                let theta = 2.0 * j as f64 * std::f64::consts::PI / n as f64;
                let (s, c) = (theta.sin(), theta.cos());
                let off = [0, 1, 2].map(|a| (y[a] * c + z[a] * s) * rho);
                let i = k * n + j;
                self.rotated[i] = off;
                for a in 0..3 {
                    out[3 * i + a] = f[a] + off[a];
                }
            }
        }
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let v = self.checked_velocities(out, inputs)?;
        for (i, r) in self.rotated.iter().enumerate() {
            let k = self.frame_of(i);
            let rw = cross(*r, v3(&v[6 * k + 3..]));
            for a in 0..3 {
                out[3 * i + a] = v[6 * k + a] - rw[a];
            }
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        let Some(f) = self.checked_forces(inputs, out)? else { return Ok(()) };
        let n = self.per_circle;
        for k in 0..self.n_in {
            let (mut lin, mut ang) = ([0.0; 3], [0.0; 3]);
            for i in k * n..(k + 1) * n {
                let fi = v3(&out[3 * i..]);
                let t = cross(self.rotated[i], fi);
                for a in 0..3 {
                    lin[a] += fi[a];
                    ang[a] += t[a];
                }
            }
            for a in 0..3 {
                f[6 * k + a] += lin[a];
                f[6 * k + 3 + a] += ang[a];
            }
        }
        Ok(())
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let (mut j, fill) = self.jacobian_to_fill()?;
        if fill {
            for (i, r) in self.rotated.iter().enumerate() {
                push_point_block(&mut j, i, self.frame_of(i), *r, 1.0);
            }
        }
        Ok(vec![j])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> (StateId, StateId) {
        (StateId::first_in_slot(0), StateId::first_in_slot(1))
    }

    /// The radius falls linearly to zero at a peak at the start (`peak > 0`) or at the end.
    #[test]
    fn peak_attenuates_the_radius() {
        let (a, b) = ids();
        let radii = |peak| (0..3).map(|k| TubularMapping::build(a, b, 3, 4, 2.0, peak).circle_radius(k)).collect::<Vec<_>>();
        assert_eq!(radii(0), [2.0, 2.0, 2.0]);
        assert_eq!(radii(2), [0.0, 1.0, 2.0]);
        assert_eq!(radii(-2), [2.0, 1.0, 0.0]);
        assert_eq!(radii(-1), [2.0, 2.0, 0.0]);
    }
}
