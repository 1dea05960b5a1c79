//! `DeformableOnRigidFrameMapping` (Vec3d + Rigid3d → Vec3d, SOFA's `Multi2Mapping`): a
//! deformable body expressed in the local frame of a rigid body.
//!
//! `input1` holds the points `p_i` in local coordinates, `input2` the rigid frames; frame `k`
//! (`index`, counted from the end with `indexFromEnd`) carries every point:
//!
//! ```text
//! x_i = R_k·p_i + c_k,        v_i = ω_k × r_i + q_k·ṗ_i + v_k     (r_i = R_k·p_i)
//! ```
//!
//! and a force `f_i` gives the point `q_k⁻¹·f_i` and the frame `(Σ f_i, Σ r_i × f_i)`. Constraint
//! rows carried to the frame are scaled by `rootLinearForceScaleFactor` and
//! `rootAngularForceScaleFactor` (SOFA scales only those). As in SOFA, the mapping has no
//! geometric stiffness (the change of `q_k⁻¹·f` and of `r_i × f` with the rotation is left out).
//!
//! SOFA's `repartition` (several frames, each carrying a run of points) only places the points:
//! its velocity and force products still use the single frame `index`. Settee refuses it rather
//! than give products inconsistent with the positions.

use settee_core::component::{Mapping, SparseRows};
use settee_core::role::{MechanicalMapping, MechanicalState};
use settee_core::types::quat_rotate;
use settee_core::ConstraintRows;
use settee_core::{component, Component, InitCtx, Layout, SimError, SimResult, StateId};

use crate::common::{check_len, cross, finish_init, mapping_ports, push_point_block, resolve_two_input_ports, v3, MappingData, Ports, V3};

/// Maps local points (input1) carried by a rigid frame (input2): x = R·p + c.
///
/// The mapping.
#[component(
    module = "Sofa.Component.Mapping.Linear",
    roles = [Mapping],
    markers = [MechanicalMapping],
    templates = ["Vec3d,Rigid3d,Vec3d"],
    default_template = "Vec3d,Rigid3d,Vec3d",
    inherit = [MappingData, Self],
    data = {
        /// input DOF index
        index: Int = "0",
        /// input DOF index starts from the end of input DOFs vector
        indexFromEnd: Bool = "false",
        /// number of dest dofs per entry dof
        repartition: Indices,
        /// are the output DOFs initially expressed in global coordinates
        globalToLocalCoords: Bool = "false",
        /// Scale factor applied on the angular force accumulated on the rigid model
        rootAngularForceScaleFactor: Real = "1",
        /// Scale factor applied on the linear force accumulated on the rigid model
        rootLinearForceScaleFactor: Real = "1",
    },
    links = {
        /// Input object to map: the points in the rigid frame (Vec3d)
        #[node_or_state]
        input1: MechanicalState,
        /// Input object to map: the rigid frames (Rigid3d)
        #[node_or_state]
        input2: MechanicalState,
        /// Output object to map (default: the state of this node, `@./`)
        #[node_or_state]
        output: _,
    },
)]
#[derive(Clone, Default)]
pub struct DeformableOnRigidFrameMapping {
    ports: Ports,
    n_points: usize,
    n_frames: usize,
    /// The frame carrying the points.
    frame: usize,
    /// Scale factors of the constraint rows carried to the frame (linear, angular).
    root_scale: (f64, f64),
    /// Cached by `apply`: `R_k·p_i`, and the frame's orientation.
    rotated: Vec<V3>,
    q: [f64; 4],
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

fn conj(q: [f64; 4]) -> [f64; 4] {
    [-q[0], -q[1], -q[2], q[3]]
}

impl DeformableOnRigidFrameMapping {
    /// A mapping built directly (tests): `n_points` local points, `n_frames` frames, the points
    /// carried by `frame`.
    pub fn build(points: StateId, frames: StateId, output: StateId, n_points: usize, n_frames: usize, frame: usize) -> Self {
        let mut ports = Ports::direct(&[points, frames], Layout::Vec3, output, Layout::Vec3);
        ports.in_layouts[1] = Layout::Rigid3;
        DeformableOnRigidFrameMapping { ports, n_points, n_frames, frame, root_scale: (1.0, 1.0), rotated: Vec::new(), q: [0.0, 0.0, 0.0, 1.0] }
    }

    fn ready(&self) -> SimResult {
        if self.rotated.len() != self.n_points {
            return Err(SimError::new("the mapping was never applied (its rotated points are not computed)"));
        }
        Ok(())
    }

    fn check(&self, what: &str, points: &[f64], frames: &[f64], k: usize, out: &[f64]) -> SimResult {
        check_len(&format!("the input1 {what}"), points, self.n_points, 3)?;
        check_len(&format!("the input2 {what}"), frames, self.n_frames, k)?;
        check_len(&format!("the output {what}"), out, self.n_points, 3)
    }
}

impl Component for DeformableOnRigidFrameMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_two_input_ports(cx, [Layout::Vec3, Layout::Rigid3, Layout::Vec3])?;
        let d = cx.data();
        if !d.get(Self::REPARTITION).is_empty() {
            return Err(SimError::unsupported("DeformableOnRigidFrameMapping: repartition is not supported")
                .hint("SOFA's velocity and force products ignore it; map each frame's points with its own mapping (index=...)"));
        }
        let global = d.get(Self::GLOBAL_TO_LOCAL_COORDS);
        let (index, from_end) = (d.get(Self::INDEX), d.get(Self::INDEX_FROM_END));
        self.root_scale = (d.get(Self::ROOT_LINEAR_FORCE_SCALE_FACTOR), d.get(Self::ROOT_ANGULAR_FORCE_SCALE_FACTOR));
        if global {
            cx.warn("globalToLocalCoords has no effect on this mapping (SOFA ignores it too)");
        }
        self.n_points = cx.state_size(self.ports.inputs[0]);
        self.n_frames = cx.state_size(self.ports.inputs[1]);
        let frame = if from_end { self.n_frames as i64 - 1 - index } else { index };
        if frame < 0 || frame as usize >= self.n_frames {
            return Err(cx
                .error(format!("the points are carried by frame {frame}, but input2 has {} frames", self.n_frames))
                .hint("check index and indexFromEnd"));
        }
        self.frame = frame as usize;
        self.rotated.clear();
        let n = self.n_points;
        finish_init(cx, n, self)
    }
}

impl Mapping for DeformableOnRigidFrameMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let (p, x) = (inputs[0], inputs[1]);
        self.check("positions", p, x, 7, out)?;
        let k = self.frame;
        let c = v3(&x[7 * k..]);
        self.q = [x[7 * k + 3], x[7 * k + 4], x[7 * k + 5], x[7 * k + 6]];
        let r = rotation_matrix(self.q);
        self.rotated.resize(self.n_points, [0.0; 3]);
        for i in 0..self.n_points {
            let pi = v3(&p[3 * i..]);
            let ri = [0, 1, 2].map(|a| r[a][0] * pi[0] + r[a][1] * pi[1] + r[a][2] * pi[2]);
            self.rotated[i] = ri;
            for a in 0..3 {
                out[3 * i + a] = ri[a] + c[a];
            }
        }
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.ready()?;
        let (dp, v) = (inputs[0], inputs[1]);
        // A frame state outside the solver's sub-tree (its own solver moves it) has none of the
        // solver's temporary vectors: it does not move in this solve.
        let still = [0.0; 6];
        let (v, k) = if v.is_empty() { (&still[..], 0) } else { (v, self.frame) };
        check_len("the input1 velocities", dp, self.n_points, 3)?;
        check_len("the input2 velocities", v, k + 1, 6)?;
        check_len("the output velocities", out, self.n_points, 3)?;
        let (lin, ang) = (v3(&v[6 * k..]), v3(&v[6 * k + 3..]));
        for i in 0..self.n_points {
            let w = cross(ang, self.rotated[i]);
            let d = quat_rotate(self.q, v3(&dp[3 * i..]));
            for a in 0..3 {
                out[3 * i + a] = w[a] + d[a] + lin[a];
            }
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        self.ready()?;
        let (fp, fx) = inputs.split_at_mut(1);
        let (fp, fx) = (&mut *fp[0], &mut *fx[0]);
        self.check("forces", fp, fx, 6, out)?;
        let (mut lin, mut ang) = ([0.0; 3], [0.0; 3]);
        for i in 0..self.n_points {
            let f = v3(&out[3 * i..]);
            let t = cross(self.rotated[i], f);
            for a in 0..3 {
                lin[a] += f[a];
                ang[a] += t[a];
            }
        }
        let k = self.frame;
        for a in 0..3 {
            fx[6 * k + a] += lin[a];
            fx[6 * k + 3 + a] += ang[a];
        }
        for i in 0..self.n_points {
            let g = quat_rotate(conj(self.q), v3(&out[3 * i..]));
            for a in 0..3 {
                fp[3 * i + a] += g[a];
            }
        }
        Ok(())
    }

    /// Per row: each entry `f` on point `i` gives the point `q⁻¹·f`; the frame receives the
    /// scaled sums `(s_lin·Σ f, s_ang·Σ r_i × f)` of the row.
    fn apply_jt_constraints(&mut self, inputs: &mut [&mut ConstraintRows], out: &ConstraintRows) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        self.ready()?;
        let (ip, ix) = inputs.split_at_mut(1);
        for (row, entries) in out.rows() {
            let (mut lin, mut ang) = ([0.0; 3], [0.0; 3]);
            let mut any = false;
            for (i, b) in entries {
                let Some(&r) = self.rotated.get(i) else {
                    return Err(SimError::new(format!("a constraint row names point {i}, but the mapping has {} points", self.n_points)));
                };
                let f = v3(b);
                let t = cross(r, f);
                for a in 0..3 {
                    lin[a] += f[a];
                    ang[a] += t[a];
                }
                ip[0].add(row, i, &quat_rotate(conj(self.q), f));
                any = true;
            }
            if any {
                let (sl, sa) = self.root_scale;
                ix[0].add(row, self.frame, &[sl * lin[0], sl * lin[1], sl * lin[2], sa * ang[0], sa * ang[1], sa * ang[2]]);
            }
        }
        Ok(())
    }

    #[allow(clippy::needless_range_loop)] // row a of the 3×3 rotation block
    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let mut jp = SparseRows::new(3 * self.n_points, 3 * self.n_points);
        let mut jx = SparseRows::new(3 * self.n_points, 6 * self.n_frames);
        if !self.ports.map_forces {
            return Ok(vec![jp, jx]);
        }
        self.ready()?;
        // The columns of q's rotation: the images of the axes.
        let cols = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]].map(|e| quat_rotate(self.q, e));
        for (i, r) in self.rotated.iter().enumerate() {
            for a in 0..3 {
                jp.rows[3 * i + a] = (0..3).map(|b| (3 * i + b, cols[b][a])).collect();
            }
            push_point_block(&mut jx, i, self.frame, *r, 1.0);
        }
        Ok(vec![jp, jx])
    }
}
