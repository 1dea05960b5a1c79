//! `SkinningMapping` (Rigid3d → Vec3d): linear blend skinning of points on several rigid frames.
//!
//! Each point `i` is influenced by `nbRef` frames `k_ij` with weights `w_ij` (summing to 1).
//! Unless given, the weights are computed at init from the rest positions of the frames
//! (positions with `computeWeightsFromPosition`): the `nbRef` frames of largest `1/d²` (`d` the
//! distance from the point's initial position), normalised. With the point's initial position
//! `p` expressed in each frame, `l_ij = w_ij·q_k⁻¹(p − c_k)`,
//!
//! ```text
//! x_i = Σ_j  w_ij·c_k + r_ij,      r_ij = q_k·l_ij
//! v_i = Σ_j  w_ij·v_k + ω_k × r_ij
//! ```
//!
//! and a force `f` on point `i` gives frame `k_ij` the force `w_ij·f` and the torque `r_ij × f`.
//! As in SOFA, a point's influences stop at its first non-positive weight.
//!
//! `weight` and `indices` are flat lists, `nbRef` entries per point (one `nbRef` for all points,
//! or one per point).

use settee_core::component::{Mapping, SparseRows};
use settee_core::types::quat_rotate;
use settee_core::{Component, InitCtx, Layout, SimError, SimResult, StateId, VecId};

use crate::common::{check_layouts, cross, finish_init, mapping_ports, push_point_block, resolve_ports, v3, Ports, V3};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Rigid3, Layout::Vec3)];

crate::common::mapping_class! {
    {
        name = "SkinningMapping", module = "Sofa.Component.Mapping.Linear",
        description = "Linear blend skinning: points follow a weighted blend of several Rigid3 frames.",
        templates = ["Rigid3d,Vec3d"],
        default_template = "Rigid3d,Vec3d",
        data = {
            /// initial child coordinates in the world reference frame.
            initPos: RealTuples(3),
            /// Number of primitives influencing each point.
            nbRef: Indices = "4",
            /// parent indices for each child (nbRef per child).
            indices: Indices,
            /// influence weights of the Dofs (nbRef per child).
            weight: Reals,
            /// Displayed From Index.
            showFromIndex: Int = "0",
            /// By default, the weights are computed w.r.t the rest positions of the input model. Set to true to compute them from the position instead.
            computeWeightsFromPosition: Bool = "false",
            /// Show influence.
            showWeights: Bool = "false",
        },
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct SkinningMapping {
        ports: Ports,
        n_in: usize,
        /// Per point, its influences: (frame, weight, weighted local position).
        influences: Vec<Vec<(usize, f64, V3)>>,
        /// Cached by `apply`: the rotated weighted local positions, as `influences`.
        rotated: Vec<Vec<V3>>,
    }
}

/// SOFA's `updateWeights`: for each point, the `nbref` frames of largest `1/d²`, in decreasing
/// weight (a later frame of equal weight goes first), then normalised. Unfilled entries keep
/// frame 0 and weight 0.
pub fn nearest_frame_weights(points: &[V3], frames: &[V3], nbref: usize) -> (Vec<Vec<usize>>, Vec<Vec<f64>>) {
    let mut index = vec![vec![0usize; nbref]; points.len()];
    let mut weight = vec![vec![0.0f64; nbref]; points.len()];
    for (i, p) in points.iter().enumerate() {
        let (ix, wx) = (&mut index[i], &mut weight[i]);
        for (j, c) in frames.iter().enumerate() {
            let d = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
            let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let w = if d2 != 0.0 { 1.0 / d2 } else { f64::MAX };
            let mut m = 0;
            while m != nbref && wx[m] > w {
                m += 1;
            }
            if m != nbref {
                for k in (m + 1..nbref).rev() {
                    wx[k] = wx[k - 1];
                    ix[k] = ix[k - 1];
                }
                wx[m] = w;
                ix[m] = j;
            }
        }
        normalize(wx);
    }
    (index, weight)
}

fn normalize(w: &mut [f64]) {
    let s: f64 = w.iter().sum();
    if s != 0.0 {
        for x in w.iter_mut() {
            *x /= s;
        }
    }
}

impl SkinningMapping {
    /// A mapping built directly (tests): per point, its frames and weights (normalised here),
    /// the points' initial positions and the frames' reference coordinates (7 reals each).
    pub fn build(input: StateId, output: StateId, index: &[Vec<usize>], weight: &[Vec<f64>], init_pos: &[V3], frames: &[f64]) -> SkinningMapping {
        let mut m =
            SkinningMapping { ports: Ports::direct(&[input], Layout::Rigid3, output, Layout::Vec3), n_in: frames.len() / 7, ..Default::default() };
        m.set_influences(index, weight, init_pos, frames);
        m
    }

    /// SOFA's `reinit`: normalised weights, and the initial positions in the frames, weighted.
    fn set_influences(&mut self, index: &[Vec<usize>], weight: &[Vec<f64>], init_pos: &[V3], frames: &[f64]) {
        self.influences = index
            .iter()
            .zip(weight)
            .zip(init_pos)
            .map(|((ix, w), p)| {
                let mut w = w.clone();
                normalize(&mut w);
                ix.iter()
                    .zip(&w)
                    .map(|(&k, &wk)| {
                        let c = v3(&frames[7 * k..]);
                        let q = [frames[7 * k + 3], frames[7 * k + 4], frames[7 * k + 5], frames[7 * k + 6]];
                        let l = quat_rotate([-q[0], -q[1], -q[2], q[3]], [p[0] - c[0], p[1] - c[1], p[2] - c[2]]);
                        (k, wk, [l[0] * wk, l[1] * wk, l[2] * wk])
                    })
                    .collect()
            })
            .collect();
        self.rotated = Vec::new();
    }

    /// The influences of point `i` that act: up to its first non-positive weight.
    fn active(&self, i: usize) -> impl Iterator<Item = (usize, &(usize, f64, V3))> {
        self.influences[i].iter().enumerate().take_while(|(_, (_, w, _))| *w > 0.0)
    }

    fn ready(&self) -> SimResult {
        if self.rotated.len() != self.influences.len() {
            return Err(SimError::new("the mapping was never applied (its rotated points are not computed)"));
        }
        Ok(())
    }

    fn check(&self, what: &str, input: &[f64], k: usize, output: &[f64]) -> SimResult {
        crate::common::check_len(&format!("the input {what}"), input, self.n_in, k)?;
        crate::common::check_len(&format!("the output {what}"), output, self.influences.len(), 3)
    }
}

impl Component for SkinningMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_ports(cx, false)?;
        let Some(output) = self.ports.output else { return Ok(()) };
        check_layouts(cx, &self.ports, TEMPLATES)?;
        let input = self.ports.inputs[0];
        self.n_in = cx.state_size(input);
        let n_out = cx.state_size(output);
        let d = cx.data();
        let mut init_pos: Vec<V3> = d.get(Self::INIT_POS).chunks_exact(3).map(v3).collect();
        if init_pos.len() != n_out {
            init_pos = cx.read_vec(output, VecId::POSITION).chunks_exact(3).take(n_out).map(v3).collect();
        }
        let frames =
            if d.get(Self::COMPUTE_WEIGHTS_FROM_POSITION) { cx.read_vec(input, VecId::POSITION).to_vec() } else { cx.rest_or_position(input) };
        if frames.len() < 7 * self.n_in {
            return Err(cx.error("the input Rigid3 state has no positions"));
        }
        let nb_ref: Vec<usize> = d.get(Self::NB_REF).to_vec();
        let Some(&nb0) = nb_ref.first() else {
            return Err(cx.error("nbRef is empty").hint("give the number of frames influencing each point, e.g. nbRef=\"4\""));
        };
        let per_point = |i: usize| if nb_ref.len() == n_out { nb_ref[i] } else { nb0 };
        let (given_ix, given_w) = (d.get(Self::INDICES).to_vec(), d.get(Self::WEIGHT).to_vec());
        let expected: usize = (0..n_out).map(per_point).sum();
        let (index, weight) = if given_ix.len() == expected && given_w.len() == expected && n_out > 0 {
            let (mut ix, mut w, mut at) = (Vec::new(), Vec::new(), 0);
            for i in 0..n_out {
                let n = per_point(i);
                ix.push(given_ix[at..at + n].to_vec());
                w.push(given_w[at..at + n].to_vec());
                at += n;
            }
            if let Some(k) = ix.iter().flatten().find(|&&k| k >= self.n_in) {
                return Err(cx.error(format!("indices names frame {k} but the input has {} frames", self.n_in)));
            }
            (ix, w)
        } else {
            let centres: Vec<V3> = frames.chunks_exact(7).take(self.n_in).map(v3).collect();
            let (ix, w) = nearest_frame_weights(&init_pos, &centres, nb0);
            let d = cx.data_mut();
            d.put(Self::INDICES, ix.iter().flatten().copied().collect());
            d.put(Self::WEIGHT, w.iter().flatten().copied().collect());
            (ix, w)
        };
        cx.data_mut().put(Self::INIT_POS, init_pos.iter().flatten().copied().collect());
        self.set_influences(&index, &weight, &init_pos, &frames);
        finish_init(cx, n_out, self)
    }
}

impl Mapping for SkinningMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        self.check("positions", x, 7, out)?;
        let mut rotated = Vec::with_capacity(self.influences.len());
        for i in 0..self.influences.len() {
            let mut o = [0.0; 3];
            let mut r_i = Vec::with_capacity(self.influences[i].len());
            for (_, &(k, w, l)) in self.active(i) {
                let q = [x[7 * k + 3], x[7 * k + 4], x[7 * k + 5], x[7 * k + 6]];
                let r = quat_rotate(q, l);
                for a in 0..3 {
                    o[a] += x[7 * k + a] * w + r[a];
                }
                r_i.push(r);
            }
            out[3 * i..3 * i + 3].copy_from_slice(&o);
            rotated.push(r_i);
        }
        self.rotated = rotated;
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.ready()?;
        let v = inputs[0];
        self.check("velocities", v, 6, out)?;
        for i in 0..self.influences.len() {
            let mut o = [0.0; 3];
            for (j, &(k, w, _)) in self.active(i) {
                let t = cross(v3(&v[6 * k + 3..]), self.rotated[i][j]);
                for a in 0..3 {
                    o[a] += v[6 * k + a] * w + t[a];
                }
            }
            out[3 * i..3 * i + 3].copy_from_slice(&o);
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        self.ready()?;
        let f = &mut *inputs[0];
        self.check("forces", f, 6, out)?;
        for i in 0..self.influences.len() {
            let fi = v3(&out[3 * i..]);
            for (j, &(k, w, _)) in self.active(i) {
                let t = cross(self.rotated[i][j], fi);
                for a in 0..3 {
                    f[6 * k + a] += fi[a] * w;
                    f[6 * k + 3 + a] += t[a];
                }
            }
        }
        Ok(())
    }

    /// Per point and influence, `[w·I | −[r]×]` on the frame.
    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let mut jac = SparseRows::new(3 * self.influences.len(), 6 * self.n_in);
        if !self.ports.map_forces {
            return Ok(vec![jac]);
        }
        self.ready()?;
        for i in 0..self.influences.len() {
            for (j, &(k, w, _)) in self.active(i) {
                let r = self.rotated[i][j];
                // push_point_block scales the whole block: give it the rotational part unscaled.
                let before = jac.rows[3 * i..3 * i + 3].iter().map(Vec::len).collect::<Vec<_>>();
                push_point_block(&mut jac, i, k, r, 1.0);
                for (a, start) in before.into_iter().enumerate() {
                    jac.rows[3 * i + a][start].1 = w;
                }
            }
        }
        Ok(vec![jac])
    }
}
