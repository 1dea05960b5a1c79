//! `BeamLinearMapping` (Rigid3d → Vec3d): points carried by a chain of beams (spec §5.6).
//!
//! The input frames `0 … n−1` form a chain; beam `j` joins frames `j` and `j+1` and has the
//! length `L_j` measured at init (the last frame repeats the previous length). A point is given
//! in beam coordinates `p`: `floor(p.x)` selects the beam `j` (clamped to `0 … n−2`) and
//! `t = p.x − j` is the position along it; `y`, `z` are offsets across, in units of `L_j`.
//! The point is placed rigidly in both end frames,
//!
//! ```text
//! r0 = q_j·(t, y, z)·L_j,      o0 = c_j + r0
//! r1 = q_{j+1}·(t−1, y, z)·L_j, o1 = c_{j+1} + r1
//! ```
//!
//! and the two placements are blended with the smooth step `s = 3t² − 2t³`:
//! `x = (1−s)·o0 + s·o1`. The rotated offsets `r0`, `r1` are cached by `apply`; `applyJ` blends
//! the rigid velocities `v − r × ω` of both frames with the same weights and `applyJT`
//! distributes a force `f` as `(1−s)·(f, r0 × f)` and `s·(f, r1 × f)`.
//!
//! With `localCoord` (the default) the output positions found at init are these beam
//! coordinates; otherwise they are world positions, converted at init by walking the chain of
//! lengths from frame 0.

// Dense 3×3, 6×6 and 12×12 block arithmetic is written with explicit indices, as the formulas.
#![allow(clippy::needless_range_loop)]

use settee_core::component::{Mapping, SparseRows};
use settee_core::types::{quat_mul, quat_rotate};
use settee_core::{Component, ConstraintRows, InitCtx, Layout, SimError, SimResult, StateId, VecId};

use crate::common::{
    check_layouts, check_len, cross, finish_init, frames_to_points, mapping_ports, push_point_block, resolve_ports, sub, v3, FramesToPoints, Ports,
    V3,
};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Rigid3, Layout::Vec3)];

crate::common::mapping_class! {
    {
        name = "BeamLinearMapping", module = "Sofa.Component.Mapping.Linear",
        description = "Maps points along a chain of beams (Rigid3 frames) by blending their placements in the two end frames of their beam.",
        templates = ["Rigid3d,Vec3d"],
        default_template = "Rigid3d,Vec3d",
        data = {
            /// true if initial coordinates are in the beam local coordinate system (i.e. a point at (10,0,0) is on the DOF number 10, whereas if this is false it is at whatever position on the beam where the distance from the initial DOF is 10)
            localCoord: Bool = "true",
        },
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct BeamLinearMapping {
        ports: Ports,
        /// Beam coordinates of the points.
        points: Vec<V3>,
        /// Length of each beam (one per input frame; the last repeats the previous one).
        lengths: Vec<f64>,
        n_in: usize,
        /// Cached by `apply`: the point's offset in the first and second frame of its beam.
        rotated0: Vec<V3>,
        rotated1: Vec<V3>,
    }
}

#[inline]
fn quat(x: &[f64], k: usize) -> [f64; 4] {
    [x[7 * k + 3], x[7 * k + 4], x[7 * k + 5], x[7 * k + 6]]
}

/// SOFA's `rfloor`: rounds to the nearest multiple of 2⁻¹⁶ (by adding 1.5·2³⁶), then takes the
/// integer part of that fixed-point number.
pub fn rfloor(r: f64) -> i64 {
    const C: f64 = 1.5 * (1u64 << 36) as f64;
    let t = r + C;
    ((t.to_bits() as u32 as i32) >> 16) as i64
}

/// The smooth step of the blend.
#[inline]
fn smooth(t: f64) -> f64 {
    3.0 * (t * t) - 2.0 * (t * t * t)
}

impl BeamLinearMapping {
    /// A mapping built directly (tests): input frames' positions (7 reals each), beam
    /// coordinates of the points.
    pub fn build(input: StateId, output: StateId, x_in: &[f64], points: Vec<V3>) -> BeamLinearMapping {
        BeamLinearMapping {
            ports: Ports::direct(&[input], Layout::Rigid3, output, Layout::Vec3),
            points,
            lengths: beam_lengths(x_in),
            n_in: x_in.len() / 7,
            rotated0: Vec::new(),
            rotated1: Vec::new(),
        }
    }

    /// Beam coordinates of the points.
    pub fn points(&self) -> &[V3] {
        &self.points
    }

    /// Beam lengths measured at init.
    pub fn lengths(&self) -> &[f64] {
        &self.lengths
    }

    /// Beam index and position along it of point `i`.
    fn locate(&self, i: usize, n_frames: usize) -> (usize, f64) {
        let p = self.points[i];
        let mut j = rfloor(p[0]);
        let last = n_frames as i64 - 2;
        if j < 0 {
            j = 0;
        } else if j > last {
            j = last;
        }
        (j as usize, p[0] - j as f64)
    }
}

/// Lengths between consecutive frames: the norm of SOFA's rigid-coordinate difference, which
/// adds the vector part of the relative rotation `q_{i+1}⁻¹·q_i` to the distance of the centers.
fn beam_lengths(x: &[f64]) -> Vec<f64> {
    let n = x.len() / 7;
    let mut l = vec![0.0; n];
    for i in 0..n.saturating_sub(1) {
        let d = sub(v3(&x[7 * i..]), v3(&x[7 * (i + 1)..]));
        let q1 = quat(x, i + 1);
        let norm = (q1[0] * q1[0] + q1[1] * q1[1] + q1[2] * q1[2] + q1[3] * q1[3]).sqrt();
        let inv = if norm != 0.0 {
            let s = 1.0 / norm;
            [-q1[0] * s, -q1[1] * s, -q1[2] * s, q1[3] * s]
        } else {
            [0.0; 4]
        };
        let r = quat_mul(inv, quat(x, i));
        let n2 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        l[i] = n2.sqrt();
    }
    if n >= 2 {
        l[n - 1] = l[n - 2];
    }
    l
}

impl Component for BeamLinearMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_ports(cx, false)?;
        let Some(output) = self.ports.output else {
            return Ok(());
        };
        check_layouts(cx, &self.ports, TEMPLATES)?;
        let input = self.ports.inputs[0];
        self.n_in = cx.state_size(input);
        if self.n_in < 2 {
            return Err(cx
                .error(format!("the input has {} frame(s): a chain of beams needs at least 2", self.n_in))
                .hint("map onto a Rigid3 MechanicalObject holding the beam nodes"));
        }
        let xin = cx.read_vec(input, VecId::POSITION).to_vec();
        check_len("the input positions", &xin, self.n_in, 7)?;
        self.lengths = beam_lengths(&xin[..7 * self.n_in]);
        let n_out = cx.state_size(output);
        let xout: Vec<V3> = cx.read_vec(output, VecId::POSITION).chunks_exact(3).take(n_out).map(v3).collect();
        if cx.data().get(Self::LOCAL_COORD) {
            self.points = xout;
        } else {
            let c0 = v3(&xin);
            let q0 = quat(&xin, 0);
            let mut points = Vec::with_capacity(xout.len());
            for (i, x) in xout.iter().enumerate() {
                let mut p = quat_rotate([-q0[0], -q0[1], -q0[2], q0[3]], sub(*x, c0));
                let mut j = 0;
                while j < self.lengths.len() && p[0] >= self.lengths[j] {
                    p[0] -= self.lengths[j];
                    j += 1;
                }
                if j == self.lengths.len() {
                    return Err(cx
                        .error(format!("point {i} {x:?} lies beyond the end of the beam chain"))
                        .hint("with localCoord=\"false\" the output positions must lie along the beams"));
                }
                let l = self.lengths[j];
                if l == 0.0 {
                    return Err(cx.error(format!("beam {j} has zero length")).hint("consecutive input frames must be at different positions"));
                }
                p = [p[0] / l, p[1] / l, p[2] / l];
                p[0] += j as f64;
                points.push(p);
            }
            self.points = points;
        }
        let n = self.points.len();
        finish_init(cx, n, self)
    }
}

frames_to_points!(BeamLinearMapping, rotated0);

impl Mapping for BeamLinearMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let n = self.points.len();
        let x = self.checked_positions(out, inputs)?;
        self.rotated0.resize(n, [0.0; 3]);
        self.rotated1.resize(n, [0.0; 3]);
        for i in 0..n {
            let (j, t) = self.locate(i, self.n_in);
            let p = self.points[i];
            let l = self.lengths[j];
            let local0 = [t, p[1], p[2]];
            let r0 = quat_rotate(quat(x, j), local0).map(|c| c * l);
            let local1 = [t - 1.0, p[1], p[2]];
            let r1 = quat_rotate(quat(x, j + 1), local1).map(|c| c * l);
            self.rotated0[i] = r0;
            self.rotated1[i] = r1;
            let s = smooth(t);
            for c in 0..3 {
                let o0 = x[7 * j + c] + r0[c];
                let o1 = x[7 * (j + 1) + c] + r1[c];
                out[3 * i + c] = o0 * (1.0 - s) + o1 * s;
            }
        }
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let v = self.checked_velocities(out, inputs)?;
        for i in 0..self.points.len() {
            let (j, t) = self.locate(i, self.n_in);
            let w0 = cross(self.rotated0[i], v3(&v[6 * j + 3..]));
            let w1 = cross(self.rotated1[i], v3(&v[6 * (j + 1) + 3..]));
            let s = smooth(t);
            for c in 0..3 {
                let o0 = v[6 * j + c] - w0[c];
                let o1 = v[6 * (j + 1) + c] - w1[c];
                out[3 * i + c] = o0 * (1.0 - s) + o1 * s;
            }
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        let Some(f) = self.checked_forces(inputs, out)? else { return Ok(()) };
        let n_frames = f.len() / 6;
        for i in 0..self.points.len() {
            let (j, t) = self.locate(i, n_frames);
            let fi = v3(&out[3 * i..]);
            let s = smooth(t);
            let t0 = cross(self.rotated0[i], fi);
            let t1 = cross(self.rotated1[i], fi);
            for c in 0..3 {
                f[6 * j + c] += fi[c] * (1.0 - s);
            }
            for c in 0..3 {
                f[6 * j + 3 + c] += t0[c] * (1.0 - s);
            }
            for c in 0..3 {
                f[6 * (j + 1) + c] += fi[c] * s;
            }
            for c in 0..3 {
                f[6 * (j + 1) + 3 + c] += t1[c] * s;
            }
        }
        Ok(())
    }

    /// Each constraint row entry `(i, n)` on point `i` becomes the entries
    /// `(1−s)·(n, r0 × n)` on frame `j` and `s·(n, r1 × n)` on frame `j+1`, in the row's order.
    fn apply_jt_constraints(&mut self, inputs: &mut [&mut ConstraintRows], out: &ConstraintRows) -> SimResult {
        if !self.transposed_ready()? {
            return Ok(());
        }
        let input = &mut *inputs[0];
        for (row, entries) in out.rows() {
            for (i, n) in entries {
                if i >= self.points.len() || n.len() < 3 {
                    return Err(SimError::new(format!("a constraint row names point {i}, but the mapping has {} points", self.points.len())));
                }
                let (j, t) = self.locate(i, self.n_in);
                let s = smooth(t);
                let w = v3(n);
                let t0 = cross(self.rotated0[i], w);
                let t1 = cross(self.rotated1[i], w);
                let d0 = [w[0] * (1.0 - s), w[1] * (1.0 - s), w[2] * (1.0 - s), t0[0] * (1.0 - s), t0[1] * (1.0 - s), t0[2] * (1.0 - s)];
                let d1 = [w[0] * s, w[1] * s, w[2] * s, t1[0] * s, t1[1] * s, t1[2] * s];
                input.add(row, j, &d0);
                input.add(row, j + 1, &d1);
            }
        }
        Ok(())
    }

    /// `J = [(1−s)·[I | −[r0]×] , s·[I | −[r1]×]]` per point: the operator `apply_j` applies.
    ///
    /// (SOFA's `getJ` fills the translation part of both blocks with an unweighted identity and
    /// weights only the cross-product part; Settee gives the Jacobian of `applyJ`, so that the
    /// assembled and matrix-free paths agree.)
    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let (mut jac, fill) = self.jacobian_to_fill()?;
        if !fill {
            return Ok(vec![jac]);
        }
        for i in 0..self.points.len() {
            let (j, t) = self.locate(i, self.n_in);
            let s = smooth(t);
            for (frame, w, r) in [(j, 1.0 - s, self.rotated0[i]), (j + 1, s, self.rotated1[i])] {
                push_point_block(&mut jac, i, frame, r, w);
            }
        }
        Ok(vec![jac])
    }
}
