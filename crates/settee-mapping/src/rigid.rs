//! `RigidMapping` (Rigid3d → Vec3d, Rigid3d → Rigid3d and Rigid2d → Vec2d): points (or frames)
//! attached to rigid frames (spec §5.5).
//!
//! Each point `i` has local coordinates `p_i` in the frame `k(i)` (its `rigidIndexPerPoint`
//! entry, else `index`). `apply` caches the rotated points `r_i = q_k·p_i`, then
//! `x_i = c_k + r_i`; `applyJ`: `v_i = v_k − r_i × ω_k`; `applyJT`: `f_k += f_i`,
//! `τ_k += r_i × f_i`; geometric stiffness (`Exact`): `τ_k −= kFactor·f_i × (dω_k × r_i)`.
//!
//! In the plane (Rigid2d frames `x y θ`, velocities `vx vy ω`) the same products hold with the
//! rotation by θ and the scalar cross product: `v_i = v_k + ω_k·(−r_y, r_x)`,
//! `τ_k += r_x·f_y − r_y·f_x`. The points are kept with z = 0. No geometric stiffness there.
//!
//! With Rigid3d outputs (SOFA's `RigidMapping<Rigid3, Rigid3>`, which replaced
//! RigidRigidMapping), each output frame also has a local orientation `o_i`: its orientation is
//! `q_k·o_i`, its angular velocity `ω_k`, and its torque goes to the input with the moment of its
//! force (`τ_k += τ_i + r_i × f_i`, SOFA's `updateOmega`). No geometric stiffness there.

use settee_core::collision::PointMapper;
use settee_core::component::{Mapping, SparseRows};
use settee_core::role::{MechanicalMapping, MechanicalState};
use settee_core::types::{quat_mul, quat_rotate};
use settee_core::ConstraintRows;
use settee_core::{component, Component, InitCtx, Layout, MatrixAccumulator, SimError, SimResult, StateId, VecId};

use crate::common::{
    apply_at_init, apply_to_visual_at_init, check_layouts, check_len, cross, frames_to_points, mapping_ports, nsd_projection, push_point_block,
    resize_output, resolve_ports, sub, v3, visual_rest_positions, FramesToPoints, GeometricStiffness, MappingData, Ports,
    GEOMETRIC_STIFFNESS_OPTIONS, M3, V3,
};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Rigid3, Layout::Vec3), (Layout::Rigid3, Layout::Rigid3), (Layout::Rigid2, Layout::Vec2)];

/// Maps points attached to rigid frames: x = c + q·p with p in the frame's local coordinates.
///
/// The mapping.
#[component(
    module = "Sofa.Component.Mapping.NonLinear",
    roles = [Mapping, PointMapper],
    markers = [MechanicalMapping],
    templates = ["Rigid3d,Vec3d", "Rigid3d,Rigid3d", "Rigid2d,Vec2d"],
    template_rule = FromMapping,
    inherit = [MappingData, Self],
    data = {
        /// Local Coordinates of the points (output coordinates: 3 reals per point, 7 per Rigid3 frame, 2 in the plane)
        initialPoints: Reals,
        /// input DOF index
        index: Int = "0",
        /// Xsp file where rigid mapping information can be loaded from.
        #[alias("fileRigidMapping")]
        filename: FileName,
        /// Use x0 instead of local copy of initial positions (to support topo changes)
        useX0: Bool = "false",
        /// input DOF index starts from the end of input DOFs vector
        indexFromEnd: Bool = "false",
        /// For each mapped point, the index of the Rigid it is mapped from
        rigidIndexPerPoint: Indices,
        /// are the output DOFs initially expressed in global coordinates
        globalToLocalCoords: Bool = "false",
        /// Method used to compute the geometric stiffness: None (not computed), Exact (non-symmetric), or Stabilized (symmetrized, negative semi-definite)
        geometricStiffness: Options(GEOMETRIC_STIFFNESS_OPTIONS) = "None",
    },
    links = {
        /// Input object to map (default: the state of the parent node, `@../`)
        #[node_or_state]
        input: MechanicalState,
        /// Output object to map: a mechanical state, or a visual model (default: the state of this node, `@./`)
        #[node_or_state]
        output: _,
    },
)]
#[derive(Clone, Default)]
pub struct RigidMapping {
    ports: Ports,
    /// Local coordinates of the points.
    points: Vec<V3>,
    /// Frame of each point.
    frame: Vec<usize>,
    n_in: usize,
    gs: GeometricStiffness,
    /// Cached by `apply`: `q_k·p_i`.
    rotated: Vec<V3>,
    /// Rigid2d → Vec2d.
    planar: bool,
    /// Rigid3d → Rigid3d: the local orientation of each output frame (empty otherwise).
    orientations: Vec<[f64; 4]>,
}

#[inline]
fn quat(x: &[f64], k: usize) -> [f64; 4] {
    [x[7 * k + 3], x[7 * k + 4], x[7 * k + 5], x[7 * k + 6]]
}

impl RigidMapping {
    /// A mapping built directly (for tests): local points, their frames, the number of frames.
    pub fn build(input: StateId, output: StateId, n_in: usize, points: Vec<V3>, frame: Vec<usize>, gs: GeometricStiffness) -> RigidMapping {
        RigidMapping {
            ports: Ports::direct(&[input], Layout::Rigid3, output, Layout::Vec3),
            points,
            frame,
            n_in,
            gs,
            rotated: Vec::new(),
            planar: false,
            orientations: Vec::new(),
        }
    }

    /// A planar mapping built directly (for tests): Rigid2d frames to Vec2d points, the local
    /// points with z = 0.
    pub fn build_2d(input: StateId, output: StateId, n_in: usize, points: Vec<[f64; 2]>, frame: Vec<usize>) -> RigidMapping {
        RigidMapping {
            ports: Ports::direct(&[input], Layout::Rigid2, output, Layout::Vec2),
            points: points.iter().map(|p| [p[0], p[1], 0.0]).collect(),
            frame,
            n_in,
            gs: GeometricStiffness::from_name("None"),
            rotated: Vec::new(),
            planar: true,
            orientations: Vec::new(),
        }
    }

    /// A mapping of rigid frames built directly (for tests): each output frame given by its
    /// local `[x y z qx qy qz qw]` in its input frame.
    pub fn build_frames(input: StateId, output: StateId, n_in: usize, local: Vec<[f64; 7]>, frame: Vec<usize>) -> RigidMapping {
        RigidMapping {
            ports: Ports::direct(&[input], Layout::Rigid3, output, Layout::Rigid3),
            points: local.iter().map(|l| [l[0], l[1], l[2]]).collect(),
            orientations: local.iter().map(|l| [l[3], l[4], l[5], l[6]]).collect(),
            frame,
            n_in,
            gs: GeometricStiffness::from_name("None"),
            rotated: Vec::new(),
            planar: false,
        }
    }

    /// A contact mapper (SOFA's `RigidContactMapper`): maps the contact points a collision
    /// response fixes on the `n_in` frames of `input` into `output`. Built by code, it needs no
    /// `init`; its geometric stiffness is the Data's default (none).
    pub fn contact_points(input: StateId, output: StateId, n_in: usize) -> RigidMapping {
        RigidMapping::build(input, output, n_in, Vec::new(), Vec::new(), GeometricStiffness::from_name("None"))
    }

    /// Whether this contact mapper still has `n_in` input frames.
    pub fn has_inputs(&self, n_in: usize) -> bool {
        self.n_in == n_in
    }

    /// Rotated points of the last `apply`.
    pub fn rotated_points(&self) -> &[V3] {
        &self.rotated
    }

    /// `Σ_i [f_i]×[r_i]×` per frame (symmetrized and projected when stabilized), as
    /// `(frame, block)` in increasing frame order.
    #[allow(clippy::needless_range_loop)] // 3×3 matrix products written with indices
    fn stiffness_blocks(&self, f_out: &[f64]) -> Vec<(usize, M3)> {
        let mut per_frame: std::collections::BTreeMap<usize, M3> = std::collections::BTreeMap::new();
        for (i, r) in self.rotated.iter().enumerate() {
            let f = v3(&f_out[3 * i..]);
            let (cf, cr) = (cross_matrix(f), cross_matrix(*r));
            let b = per_frame.entry(self.frame[i]).or_insert([[0.0; 3]; 3]);
            for j in 0..3 {
                for c in 0..3 {
                    b[j][c] += (0..3).map(|m| cf[j][m] * cr[m][c]).sum::<f64>();
                }
            }
        }
        per_frame
            .into_iter()
            .map(|(k, mut b)| {
                if self.gs == GeometricStiffness::Stabilized {
                    for j in 0..3 {
                        for c in j + 1..3 {
                            let s = (b[j][c] + b[c][j]) * 0.5;
                            b[j][c] = s;
                            b[c][j] = s;
                        }
                    }
                    b = nsd_projection(&b);
                }
                (k, b)
            })
            .collect()
    }
}

/// Rigid2d → Vec2d: frames `x y θ` (3 reals), velocities and forces `x y ω` (3), points `x y`.
impl RigidMapping {
    fn check_2d(&self, what: &str, input: &[f64], output: &[f64]) -> SimResult {
        check_len(&format!("the input {what}"), input, self.n_in, 3)?;
        check_len(&format!("the output {what}"), output, self.points.len(), 2)
    }

    fn apply_2d(&mut self, out: &mut [f64], x: &[f64]) -> SimResult {
        self.check_2d("positions", x, out)?;
        self.rotated.resize(self.points.len(), [0.0; 3]);
        for (i, p) in self.points.iter().enumerate() {
            let k = self.frame[i];
            let r = rotate_2d(x[3 * k + 2], *p);
            self.rotated[i] = r;
            out[2 * i] = x[3 * k] + r[0];
            out[2 * i + 1] = x[3 * k + 1] + r[1];
        }
        Ok(())
    }

    fn apply_j_2d(&mut self, out: &mut [f64], v: &[f64]) -> SimResult {
        self.ready()?;
        self.check_2d("velocities", v, out)?;
        for (i, r) in self.rotated.iter().enumerate() {
            let k = self.frame[i];
            let w = v[3 * k + 2];
            out[2 * i] = v[3 * k] - w * r[1];
            out[2 * i + 1] = v[3 * k + 1] + w * r[0];
        }
        Ok(())
    }

    fn apply_jt_2d(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.transposed_ready()? {
            return Ok(());
        }
        let f = &mut *inputs[0];
        self.check_2d("forces", f, out)?;
        for (i, r) in self.rotated.iter().enumerate() {
            let k = self.frame[i];
            let (fx, fy) = (out[2 * i], out[2 * i + 1]);
            f[3 * k] += fx;
            f[3 * k + 1] += fy;
            f[3 * k + 2] += r[0] * fy - r[1] * fx;
        }
        Ok(())
    }

    /// Per row and per frame (increasing), the sum of the entries and of their moments.
    fn apply_jt_constraints_2d(&mut self, inputs: &mut [&mut ConstraintRows], out: &ConstraintRows) -> SimResult {
        let mut groups: Vec<(usize, [f64; 3])> = Vec::new();
        for (row, entries) in out.rows() {
            groups.clear();
            for (point, b) in entries {
                let (Some(&k), Some(&r)) = (self.frame.get(point), self.rotated.get(point)) else {
                    return Err(SimError::new(format!(
                        "a constraint row refers to mapped point {point}, but the mapping has {} points",
                        self.points.len()
                    )));
                };
                let i = match groups.iter().position(|g| g.0 == k) {
                    Some(i) => i,
                    None => {
                        groups.push((k, [0.0; 3]));
                        groups.len() - 1
                    }
                };
                let g = &mut groups[i].1;
                g[0] += b[0];
                g[1] += b[1];
                g[2] += r[0] * b[1] - r[1] * b[0];
            }
            groups.sort_by_key(|g| g.0);
            for (k, v) in &groups {
                inputs[0].add(row, *k, v);
            }
        }
        Ok(())
    }

    /// Two rows per point: `[1 0 −r_y]` and `[0 1 r_x]` on the point's frame.
    fn jacobian_2d(&self) -> SimResult<Vec<SparseRows>> {
        let mut j = SparseRows::new(2 * self.points.len(), 3 * self.n_in);
        if !self.transposed_ready()? {
            return Ok(vec![j]);
        }
        for (i, r) in self.rotated.iter().enumerate() {
            let k = self.frame[i];
            j.rows[2 * i] = vec![(3 * k, 1.0), (3 * k + 2, -r[1])];
            j.rows[2 * i + 1] = vec![(3 * k + 1, 1.0), (3 * k + 2, r[0])];
        }
        Ok(vec![j])
    }
}

/// Rigid3d → Rigid3d: output frames `c + q_k·p_i`, `q_k·o_i`; velocities and forces `(v, ω)`.
impl RigidMapping {
    fn rigid_out(&self) -> bool {
        !self.orientations.is_empty() || self.ports.out_layout == Some(Layout::Rigid3)
    }

    fn check_frames(&self, what: &str, input: &[f64], k_in: usize, output: &[f64], k_out: usize) -> SimResult {
        check_len(&format!("the input {what}"), input, self.n_in, k_in)?;
        check_len(&format!("the output {what}"), output, self.points.len(), k_out)
    }

    fn apply_frames(&mut self, out: &mut [f64], x: &[f64]) -> SimResult {
        self.check_frames("positions", x, 7, out, 7)?;
        self.rotated.resize(self.points.len(), [0.0; 3]);
        for (i, p) in self.points.iter().enumerate() {
            let k = self.frame[i];
            let q = quat(x, k);
            let r = quat_rotate(q, *p);
            self.rotated[i] = r;
            let c = v3(&x[7 * k..]);
            let o = quat_mul(q, self.orientations.get(i).copied().unwrap_or([0.0, 0.0, 0.0, 1.0]));
            out[7 * i..7 * i + 7].copy_from_slice(&[c[0] + r[0], c[1] + r[1], c[2] + r[2], o[0], o[1], o[2], o[3]]);
        }
        Ok(())
    }

    fn apply_j_frames(&mut self, out: &mut [f64], v: &[f64]) -> SimResult {
        self.ready()?;
        self.check_frames("velocities", v, 6, out, 6)?;
        for (i, r) in self.rotated.iter().enumerate() {
            let k = self.frame[i];
            let (lin, ang) = (v3(&v[6 * k..]), v3(&v[6 * k + 3..]));
            let rw = cross(*r, ang);
            out[6 * i..6 * i + 6].copy_from_slice(&[lin[0] - rw[0], lin[1] - rw[1], lin[2] - rw[2], ang[0], ang[1], ang[2]]);
        }
        Ok(())
    }

    fn apply_jt_frames(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.transposed_ready()? {
            return Ok(());
        }
        let f = &mut *inputs[0];
        self.check_frames("forces", f, 6, out, 6)?;
        for (i, r) in self.rotated.iter().enumerate() {
            let k = self.frame[i];
            let (fi, ti) = (v3(&out[6 * i..]), v3(&out[6 * i + 3..]));
            let m = cross(*r, fi);
            for c in 0..3 {
                f[6 * k + c] += fi[c];
                // SOFA's updateOmega: the output torque plus the moment, added as one term.
                f[6 * k + 3 + c] += ti[c] + m[c];
            }
        }
        Ok(())
    }

    /// Per row and per frame (increasing), the sum of the forces and of the torques plus moments.
    fn apply_jt_constraints_frames(&mut self, inputs: &mut [&mut ConstraintRows], out: &ConstraintRows) -> SimResult {
        let mut groups: Vec<(usize, [f64; 6])> = Vec::new();
        for (row, entries) in out.rows() {
            groups.clear();
            for (point, b) in entries {
                let (Some(&k), Some(&r)) = (self.frame.get(point), self.rotated.get(point)) else {
                    return Err(SimError::new(format!(
                        "a constraint row refers to mapped frame {point}, but the mapping has {} frames",
                        self.points.len()
                    )));
                };
                let i = match groups.iter().position(|g| g.0 == k) {
                    Some(i) => i,
                    None => {
                        groups.push((k, [0.0; 6]));
                        groups.len() - 1
                    }
                };
                let m = cross(r, v3(b));
                let g = &mut groups[i].1;
                for c in 0..3 {
                    g[c] += b[c];
                    g[3 + c] += b[3 + c] + m[c];
                }
            }
            groups.sort_by_key(|g| g.0);
            for (k, v) in &groups {
                inputs[0].add(row, *k, v);
            }
        }
        Ok(())
    }

    /// Six rows per output frame: `[I | −[r]×]` then `[0 | I]` on its input frame.
    fn jacobian_frames(&self) -> SimResult<Vec<SparseRows>> {
        let mut j = SparseRows::new(6 * self.points.len(), 6 * self.n_in);
        if !self.transposed_ready()? {
            return Ok(vec![j]);
        }
        let mut block = SparseRows::new(3 * self.points.len(), 6 * self.n_in);
        for (i, r) in self.rotated.iter().enumerate() {
            let k = self.frame[i];
            push_point_block(&mut block, i, k, *r, 1.0);
            for a in 0..3 {
                j.rows[6 * i + a] = std::mem::take(&mut block.rows[3 * i + a]);
                j.rows[6 * i + 3 + a] = vec![(6 * k + 3 + a, 1.0)];
            }
        }
        Ok(vec![j])
    }
}

/// `[v]×`: the matrix of `w ↦ v × w`.
fn cross_matrix(v: V3) -> M3 {
    [[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]]
}

/// `p` rotated by the angle `theta` in the plane (z stays 0).
fn rotate_2d(theta: f64, p: V3) -> V3 {
    let (s, c) = theta.sin_cos();
    [c * p[0] - s * p[1], s * p[0] + c * p[1], 0.0]
}

/// SOFA's `inverseRotate`: rotation by the conjugate quaternion.
fn inverse_rotate(q: [f64; 4], v: V3) -> V3 {
    quat_rotate([-q[0], -q[1], -q[2], q[3]], v)
}

impl Component for RigidMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_ports(cx, false)?;
        // A visual model: its rest vertices are attached to the frames like output points,
        // and it moves only in the visual update. Only Rigid3d frames are mapped to one; a
        // mapping the viewer cannot use is left out, never an error.
        let visual_rest = match self.ports.output {
            Some(_) => None,
            None => match visual_rest_positions(cx.scene, &self.ports) {
                Some(r) if self.ports.in_layouts.first() == Some(&Layout::Rigid3) && cx.data().get(Self::FILENAME).is_empty() => Some(r),
                _ => {
                    self.ports.visual = None;
                    return Ok(());
                }
            },
        };
        if visual_rest.is_none() {
            check_layouts(cx, &self.ports, TEMPLATES)?;
        }
        self.planar = self.ports.in_layouts.first() == Some(&Layout::Rigid2);
        let rigid_out = self.ports.out_layout == Some(Layout::Rigid3);
        let input = self.ports.inputs[0];
        self.n_in = cx.state_size(input);
        let d = cx.data();
        if !d.get(Self::FILENAME).is_empty() {
            return Err(SimError::unsupported("RigidMapping: loading the points from a file (filename) is not supported yet")
                .hint("give the points as the output MechanicalObject's positions (or initialPoints)"));
        }
        self.gs = GeometricStiffness::from_name(d.get(Self::GEOMETRIC_STIFFNESS));
        let kind = if self.planar { "Rigid2d → Vec2d" } else { "Rigid3d → Rigid3d" };
        if (self.planar || rigid_out) && self.gs != GeometricStiffness::None {
            return Err(SimError::unsupported(format!("RigidMapping: the geometric stiffness of a {kind} mapping is not supported"))
                .hint("use geometricStiffness=\"None\" (the default)"));
        }
        // Output points as 3-vectors (z = 0 in the plane); output frames keep their orientation.
        let w = if self.planar {
            2
        } else if rigid_out {
            7
        } else {
            3
        };
        let point = |c: &[f64]| -> V3 {
            if w == 2 {
                [c[0], c[1], 0.0]
            } else {
                v3(c)
            }
        };
        let given: Vec<f64> = d.get(Self::INITIAL_POINTS).to_vec();
        if !given.len().is_multiple_of(w) {
            return Err(cx
                .error(format!("initialPoints has {} values, not a multiple of {w} (the output's coordinates)", given.len()))
                .hint("give one output coordinate per point"));
        }
        let mut points: Vec<V3> = given.chunks_exact(w).map(point).collect();
        let index = d.get(Self::INDEX).max(0) as usize;
        let from_end = d.get(Self::INDEX_FROM_END);
        let per_point: Vec<usize> = d.get(Self::RIGID_INDEX_PER_POINT).to_vec();
        let use_x0 = d.get(Self::USE_X0);
        let global = d.get(Self::GLOBAL_TO_LOCAL_COORDS);

        let (n_out, local): (usize, Vec<f64>) = match (&visual_rest, self.ports.output) {
            (Some(r), _) => (r.len() / 3, r.clone()),
            (None, Some(output)) => {
                let n_out = cx.state_size(output);
                (n_out, if use_x0 { cx.rest_or_position(output).to_vec() } else { cx.read_vec(output, VecId::POSITION).to_vec() })
            }
            (None, None) => return Ok(()),
        };
        if use_x0 || points.is_empty() {
            points = local.chunks_exact(w).take(n_out).map(point).collect();
        }
        let from_given = !use_x0 && !given.is_empty();
        let frames_from = if from_given { &given } else { &local };
        let mut orientations: Vec<[f64; 4]> =
            if rigid_out { frames_from.chunks_exact(7).take(points.len()).map(|c| [c[3], c[4], c[5], c[6]]).collect() } else { Vec::new() };
        let n = points.len();
        let frame_of = |i: usize| -> usize {
            if per_point.len() == n {
                per_point[i]
            } else if from_end {
                self.n_in.wrapping_sub(1).wrapping_sub(index)
            } else {
                index
            }
        };
        let frame: Vec<usize> = (0..n).map(frame_of).collect();
        if let Some((i, k)) = frame.iter().enumerate().find(|(_, &k)| k >= self.n_in) {
            return Err(cx
                .error(format!("point {i} is attached to rigid frame {k}, but the input has {} frames", self.n_in))
                .hint("check index, indexFromEnd and rigidIndexPerPoint"));
        }
        if global && d.get(Self::INITIAL_POINTS).is_empty() && !use_x0 {
            let xin = cx.read_vec(input, VecId::POSITION);
            for (i, p) in points.iter_mut().enumerate() {
                let k = frame[i];
                *p = if self.planar {
                    rotate_2d(-xin[3 * k + 2], [p[0] - xin[3 * k], p[1] - xin[3 * k + 1], 0.0])
                } else {
                    inverse_rotate(quat(xin, k), sub(*p, v3(&xin[7 * k..])))
                };
                // SOFA's getGlobalToLocalCoords for frames: q_k⁻¹·q_i.
                if let Some(o) = orientations.get_mut(i) {
                    let q = quat(xin, k);
                    *o = quat_mul([-q[0], -q[1], -q[2], q[3]], *o);
                }
            }
        }
        let written: Vec<f64> = if rigid_out {
            points.iter().zip(&orientations).flat_map(|(p, o)| [p[0], p[1], p[2], o[0], o[1], o[2], o[3]]).collect()
        } else {
            points.iter().flat_map(|p| p[..w].to_vec()).collect()
        };
        cx.data_mut().put(Self::INITIAL_POINTS, written);
        self.points = points;
        self.frame = frame;
        self.orientations = orientations;
        if visual_rest.is_some() {
            return apply_to_visual_at_init(self, cx.scene);
        }
        resize_output(cx.scene, &self.ports, n);
        let rest = cx.data().get(MappingData::APPLY_REST_POSITION);
        apply_at_init(self, cx.scene, rest)
    }
}

/// Points attached to frames at run time, as SOFA's rigid contact mapper adds them
/// (`RigidMapping::addPoint`: local coordinates and the frame index).
impl PointMapper for RigidMapping {
    fn points_placed_by_code(&mut self) {}
    fn clear_points(&mut self) {
        self.points.clear();
        self.frame.clear();
        self.rotated.clear();
    }
    fn point_count(&self) -> usize {
        self.points.len()
    }
    fn add_point_on_frame(&mut self, frame: usize, local: [f64; 3]) -> SimResult<usize> {
        if frame >= self.n_in {
            return Err(SimError::new(format!("no rigid frame {frame}: the input has {} frames", self.n_in)));
        }
        self.points.push(local);
        self.frame.push(frame);
        Ok(self.points.len() - 1)
    }
}

frames_to_points!(RigidMapping, rotated);

impl Mapping for RigidMapping {
    mapping_ports!();

    fn visual_output(&self) -> Option<settee_core::ComponentId> {
        self.ports.visual
    }

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        if self.planar {
            return self.apply_2d(out, inputs[0]);
        }
        if self.rigid_out() {
            return self.apply_frames(out, inputs[0]);
        }
        let x = self.checked_positions(out, inputs)?;
        self.rotated.resize(self.points.len(), [0.0; 3]);
        for (i, p) in self.points.iter().enumerate() {
            let k = self.frame[i];
            let r = quat_rotate(quat(x, k), *p);
            self.rotated[i] = r;
            let c = v3(&x[7 * k..]);
            out[3 * i] = c[0] + r[0];
            out[3 * i + 1] = c[1] + r[1];
            out[3 * i + 2] = c[2] + r[2];
        }
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        if self.planar {
            return self.apply_j_2d(out, inputs[0]);
        }
        if self.rigid_out() {
            return self.apply_j_frames(out, inputs[0]);
        }
        let v = self.checked_velocities(out, inputs)?;
        for (i, r) in self.rotated.iter().enumerate() {
            let k = self.frame[i];
            let lin = v3(&v[6 * k..]);
            let ang = v3(&v[6 * k + 3..]);
            let rw = cross(*r, ang);
            out[3 * i] = lin[0] - rw[0];
            out[3 * i + 1] = lin[1] - rw[1];
            out[3 * i + 2] = lin[2] - rw[2];
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if self.planar {
            return self.apply_jt_2d(inputs, out);
        }
        if self.rigid_out() {
            return self.apply_jt_frames(inputs, out);
        }
        let Some(f) = self.checked_forces(inputs, out)? else { return Ok(()) };
        for (i, r) in self.rotated.iter().enumerate() {
            let k = self.frame[i];
            let fi = v3(&out[3 * i..]);
            for c in 0..3 {
                f[6 * k + c] += fi[c];
            }
            let t = cross(*r, fi);
            for c in 0..3 {
                f[6 * k + 3 + c] += t[c];
            }
        }
        Ok(())
    }

    fn apply_djt(&mut self, inputs: &mut [&mut [f64]], dx_in: &[&[f64]], f_out: &[f64], k_factor: f64) -> SimResult {
        if self.gs == GeometricStiffness::None || self.planar || self.rigid_out() || !self.transposed_ready()? {
            return Ok(());
        }
        let df = &mut *inputs[0];
        let dx = dx_in[0];
        check_len("the input displacements", dx, self.n_in, 6)?;
        check_len("the output forces", f_out, self.points.len(), 3)?;
        match self.gs {
            GeometricStiffness::Exact => {
                for (i, r) in self.rotated.iter().enumerate() {
                    let k = self.frame[i];
                    let dw = v3(&dx[6 * k + 3..]);
                    let t = cross(v3(&f_out[3 * i..]), cross(dw, *r));
                    for c in 0..3 {
                        df[6 * k + 3 + c] -= t[c] * k_factor;
                    }
                }
            }
            _ => {
                // Stabilized: the symmetrized, projected local matrix applied to the rotations.
                for (k, b) in self.stiffness_blocks(f_out) {
                    let dw = v3(&dx[6 * k + 3..]);
                    for j in 0..3 {
                        let mut s = 0.0;
                        for c in 0..3 {
                            s += b[j][c] * dw[c];
                        }
                        df[6 * k + 3 + j] += s * k_factor;
                    }
                }
            }
        }
        Ok(())
    }

    /// Per row and per frame (frames in increasing index, SOFA's loop order), the sum of the
    /// entries of the frame's points and of their moments `r × f` (SOFA's `applyJT` on a
    /// MatrixDeriv, grouped instead of rescanned per frame: same additions in the same order).
    fn apply_jt_constraints(&mut self, inputs: &mut [&mut ConstraintRows], out: &ConstraintRows) -> SimResult {
        if !self.transposed_ready()? {
            return Ok(());
        }
        if self.planar {
            return self.apply_jt_constraints_2d(inputs, out);
        }
        if self.rigid_out() {
            return self.apply_jt_constraints_frames(inputs, out);
        }
        let mut groups: Vec<(usize, V3, V3)> = Vec::new();
        for (row, entries) in out.rows() {
            groups.clear();
            for (point, b) in entries {
                let (Some(&k), Some(&r)) = (self.frame.get(point), self.rotated.get(point)) else {
                    return Err(SimError::new(format!(
                        "a constraint row refers to mapped point {point}, but the mapping has {} points",
                        self.points.len()
                    )));
                };
                let f = v3(b);
                let g = match groups.iter().position(|g| g.0 == k) {
                    Some(i) => &mut groups[i],
                    None => {
                        groups.push((k, [0.0; 3], [0.0; 3]));
                        groups.last_mut().expect("just pushed")
                    }
                };
                let t = cross(r, f);
                for c in 0..3 {
                    g.1[c] += f[c];
                    g.2[c] += t[c];
                }
            }
            groups.sort_by_key(|g| g.0);
            for (k, v, w) in &groups {
                inputs[0].add(row, *k, &[v[0], v[1], v[2], w[0], w[1], w[2]]);
            }
        }
        Ok(())
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        if self.planar {
            return self.jacobian_2d();
        }
        if self.rigid_out() {
            return self.jacobian_frames();
        }
        let (mut j, fill) = self.jacobian_to_fill()?;
        if !fill {
            return Ok(vec![j]);
        }
        for (i, r) in self.rotated.iter().enumerate() {
            let k = self.frame[i];
            // [I | −[r]×]: v_i = v_k − r × ω_k.
            push_point_block(&mut j, i, k, *r, 1.0);
        }
        Ok(vec![j])
    }

    fn add_geometric_stiffness(&self, m: &mut MatrixAccumulator, f_out: &[f64], k_factor: f64) -> SimResult {
        if self.gs == GeometricStiffness::None || self.planar || self.rigid_out() || !self.transposed_ready()? {
            return Ok(());
        }
        check_len("the output forces", f_out, self.points.len(), 3)?;
        let s = self.ports.inputs[0];
        for (k, b) in self.stiffness_blocks(f_out) {
            let data: Vec<f64> = b.iter().flatten().map(|x| x * k_factor).collect();
            m.add_block(s, 6 * k + 3, s, 6 * k + 3, 3, 3, &data);
        }
        Ok(())
    }
}
