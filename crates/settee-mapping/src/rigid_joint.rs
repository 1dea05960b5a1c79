//! The Compliant plugin's rigid mappings (spec compliant §9): `RigidJointMapping` (Rigid3 →
//! Vec6, the relative frame of each pair of frames in logarithm coordinates) and
//! `AssembledRigidRigidMapping` (Rigid3 → Rigid3, frames at fixed offsets of their parents).
//!
//! Velocities follow SOFA's Rigid3 convention: `[v ω]` with ω in world coordinates.

use settee_core::component::{Mapping, SparseRows};
use settee_core::types::quat_rotate;
use settee_core::{Component, InitCtx, Layout, MatrixAccumulator, SimError, SimResult, StateId};

use crate::assembled::{self, assembled_products};
use crate::common::{
    check_len, djt_force, finish_init, mapping_ports, nsd_projection, resolve_mechanical_ports, sub, v3, GeometricStiffness, Ports,
    GEOMETRIC_STIFFNESS_OPTIONS, M3, V3,
};
use crate::se3::{self, dlog, hat, mat_mul, rotation_matrix, transpose, Frame};

// ----- RigidJointMapping ------------------------------------------------------------------------

crate::common::mapping_class! {
    {
        name = "RigidJointMapping", module = "Compliant",
        description = "Maps pairs of rigid frames (p, c) to the logarithm coordinates of their relative frame p⁻¹·c: (translation in p's frame, rotation vector).",
        templates = ["Rigid3d,Vec6d"],
        default_template = "Rigid3d,Vec6d",
        data = {
            /// pairs of rigid frames defining joint in source dofs
            pairs: IndexTuples(2),
            /// compute relative rotation
            rotation: Bool = "true",
            /// compute relative translation
            translation: Bool = "true",
            /// compute exact rotation dlog. more precise if you know what you're doing, but gets unstable past half turn. for 1d and isotropic 3d springs, you don't need this
            exact_dlog: Bool = "false",
        },
    }
    /// `RigidJointMapping`: for each pair `(p, c)`, the relative frame `g_p⁻¹·g_c` mapped to
    /// `(R_pᵀ(c_c − c_p), log(q_p⁻¹ q_c))`. The translation rows of the Jacobian are exact; the
    /// rotation rows are `R_pᵀ(ω_c − ω_p)` (exact when the two frames have the same orientation), or
    /// with `exact_dlog` the derivative of the log, `dlog(r)·R_cᵀ(ω_c − ω_p)`.
    #[derive(Clone)]
    pub struct RigidJointMapping {
        ports: Ports,
        n_in: usize,
        pairs: Vec<[usize; 2]>,
        rotation: bool,
        translation: bool,
        exact_dlog: bool,
        /// Assembled by `apply`.
        jac: Vec<SparseRows>,
    }
}

impl Default for RigidJointMapping {
    fn default() -> Self {
        RigidJointMapping {
            ports: Ports::default(),
            n_in: 0,
            pairs: Vec::new(),
            rotation: true,
            translation: true,
            exact_dlog: false,
            jac: Vec::new(),
        }
    }
}

impl RigidJointMapping {
    /// A mapping built directly (tests, programmatic use).
    pub fn build(
        input: StateId,
        output: StateId,
        n_in: usize,
        pairs: Vec<[usize; 2]>,
        rotation: bool,
        translation: bool,
        exact_dlog: bool,
    ) -> SimResult<Self> {
        check_pairs(&pairs, n_in).map_err(SimError::new)?;
        Ok(RigidJointMapping {
            ports: Ports::direct(&[input], Layout::Rigid3, output, Layout::Vec6),
            n_in,
            pairs,
            rotation,
            translation,
            exact_dlog,
            jac: Vec::new(),
        })
    }
}

/// The first pair naming a frame the input does not have, as a message.
fn check_pairs(pairs: &[[usize; 2]], n: usize) -> Result<(), String> {
    match pairs.iter().enumerate().find(|(_, p)| p[0] >= n || p[1] >= n) {
        Some((i, p)) => Err(format!("pair {i} ({} {}) refers to frame {}, but the input has {n} frames", p[0], p[1], p[0].max(p[1]))),
        None => Ok(()),
    }
}

fn push_block(row: &mut [Vec<(usize, f64)>], col: usize, m: &M3, sign: f64) {
    for (r, line) in m.iter().enumerate() {
        for (c, &v) in line.iter().enumerate() {
            row[r].push((col + c, sign * v));
        }
    }
}

impl Component for RigidJointMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, false, "a Vec6d MechanicalObject", &[(Layout::Rigid3, Layout::Vec6)])?;
        self.n_in = cx.state_size(self.ports.inputs[0]);
        let d = cx.data();
        self.pairs = d.get(Self::PAIRS).chunks_exact(2).map(|p| [p[0], p[1]]).collect();
        self.rotation = d.get(Self::ROTATION);
        self.translation = d.get(Self::TRANSLATION);
        self.exact_dlog = d.get(Self::EXACT_DLOG);
        if self.pairs.is_empty() {
            return Err(cx
                .error("no pairs: the mapping has nothing to map")
                .hint("set pairs=\"p c …\", the indices of the two frames of each joint"));
        }
        check_pairs(&self.pairs, self.n_in).map_err(|m| cx.error(m).hint("pairs index the frames of the input state"))?;
        finish_init(cx, self.pairs.len(), self)
    }
}

impl Mapping for RigidJointMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        check_len("the input positions", x, self.n_in, 7)?;
        let n = self.pairs.len();
        check_len("the output positions", out, n, 6)?;
        let mut j = SparseRows::new(6 * n, 6 * self.n_in);
        let zero = [[0.0; 3]; 3];
        for (i, &[p, c]) in self.pairs.iter().enumerate() {
            let (gp, gc) = (Frame::at(x, p), Frame::at(x, c));
            let diff = gp.inverse().mul(&gc);
            let l = se3::log(diff.q);
            let o = &mut out[6 * i..6 * i + 6];
            o.fill(0.0);
            if self.translation {
                o[..3].copy_from_slice(&diff.c);
            }
            if self.rotation {
                o[3..].copy_from_slice(&l);
            }

            let rpt = transpose(&rotation_matrix(gp.q));
            let t = if self.translation { rpt } else { zero };
            let chunk = match (self.rotation, self.exact_dlog) {
                (false, _) => zero,
                (true, false) => rpt,
                (true, true) => mat_mul(&dlog(l), &transpose(&rotation_matrix(gc.q))),
            };
            let s = sub(gc.c, gp.c);
            let rows = &mut j.rows[6 * i..6 * i + 6];
            push_block(&mut rows[..3], 6 * p, &t, -1.0);
            push_block(&mut rows[..3], 6 * p + 3, &mat_mul(&t, &hat(s)), 1.0);
            push_block(&mut rows[3..], 6 * p + 3, &chunk, -1.0);
            push_block(&mut rows[..3], 6 * c, &t, 1.0);
            push_block(&mut rows[3..], 6 * c + 3, &chunk, 1.0);
        }
        assembled::store(&mut self.jac, j)
    }

    assembled_products!(applied);
}

// ----- AssembledRigidRigidMapping ---------------------------------------------------------------

crate::common::mapping_class! {
    {
        name = "AssembledRigidRigidMapping", module = "Compliant",
        description = "Maps rigid frames to frames at fixed offsets: g ↦ g·h, one (input index, offset h) per output frame.",
        templates = ["Rigid3d,Rigid3d"],
        default_template = "Rigid3d,Rigid3d",
        data = {
            /// input dof and rigid offset for each output dof
            source: RealTuples(8),
            /// assemble (and use) geometric stiffness (0=no GS, 1=non symmetric, 2=symmetrized)
            geometricStiffness: Options(GEOMETRIC_STIFFNESS_OPTIONS) = "None",
        },
    }
    /// `AssembledRigidRigidMapping`: output frame `i` is `g_k·h_i`; its velocity is
    /// `(v_k + ω_k × r_i, ω_k)` with `r_i = q_k·t_i` (`t_i` the offset's centre). The geometric
    /// stiffness (Exact) is `Σ_i [f_i]×[r_i]×` on the rotation block of each parent; Stabilized
    /// symmetrizes it and keeps its negative semi-definite part.
    #[derive(Clone, Default)]
    pub struct AssembledRigidRigidMapping {
        ports: Ports,
        n_in: usize,
        /// `(parent, offset)` per output frame.
        source: Vec<(usize, Frame)>,
        gs: GeometricStiffness,
        /// Cached by `apply`: `q_k·t_i`.
        rotated: Vec<V3>,
        jac: Vec<SparseRows>,
        /// The output force of the last `update_k` (used by `apply_djt` while not empty).
        k_force: Vec<f64>,
    }
}

impl AssembledRigidRigidMapping {
    /// A mapping built directly (tests, programmatic use).
    pub fn build(input: StateId, output: StateId, n_in: usize, source: Vec<(usize, Frame)>, gs: GeometricStiffness) -> SimResult<Self> {
        if let Some((i, (k, _))) = source.iter().enumerate().find(|(_, s)| s.0 >= n_in) {
            return Err(SimError::new(format!("source {i} refers to frame {k}, but the input has {n_in} frames")));
        }
        Ok(AssembledRigidRigidMapping {
            ports: Ports::direct(&[input], Layout::Rigid3, output, Layout::Rigid3),
            n_in,
            source,
            gs,
            ..Default::default()
        })
    }

    fn ready(&self) -> SimResult {
        if self.rotated.len() != self.source.len() || self.jac.is_empty() {
            return Err(SimError::new("the mapping was never applied (its Jacobian is not computed)"));
        }
        Ok(())
    }

    /// `(parent, block)` in increasing parent order.
    #[allow(clippy::needless_range_loop)]
    fn stiffness_blocks(&self, f_out: &[f64]) -> Vec<(usize, M3)> {
        let mut per: std::collections::BTreeMap<usize, M3> = std::collections::BTreeMap::new();
        for (i, r) in self.rotated.iter().enumerate() {
            let f = v3(&f_out[6 * i..]);
            let m = mat_mul(&hat(f), &hat(*r));
            let b = per.entry(self.source[i].0).or_insert([[0.0; 3]; 3]);
            for a in 0..3 {
                for c in 0..3 {
                    b[a][c] += m[a][c];
                }
            }
        }
        per.into_iter()
            .map(|(k, mut b)| {
                if self.gs == GeometricStiffness::Stabilized {
                    for a in 0..3 {
                        for c in a + 1..3 {
                            let s = 0.5 * (b[a][c] + b[c][a]);
                            b[a][c] = s;
                            b[c][a] = s;
                        }
                    }
                    b = nsd_projection(&b);
                }
                (k, b)
            })
            .collect()
    }
}

impl Component for AssembledRigidRigidMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, false, "a Rigid3d MechanicalObject", &[(Layout::Rigid3, Layout::Rigid3)])?;
        self.n_in = cx.state_size(self.ports.inputs[0]);
        let d = cx.data();
        self.gs = GeometricStiffness::from_name(d.get(Self::GEOMETRIC_STIFFNESS));
        let raw = d.get(Self::SOURCE).to_vec();
        if raw.is_empty() {
            return Err(cx
                .error("source is empty: the mapping has no output frame")
                .hint("set source=\"index x y z qx qy qz qw …\", one parent index and offset frame per output frame"));
        }
        let mut source = Vec::with_capacity(raw.len() / 8);
        for (i, s) in raw.chunks_exact(8).enumerate() {
            let k = s[0];
            if k < 0.0 || k.fract() != 0.0 || k as usize >= self.n_in {
                return Err(cx
                    .error(format!("source {i} refers to frame {k}, but the input has {} frames", self.n_in))
                    .hint("each source entry is `index x y z qx qy qz qw`, the index of a frame of the input"));
            }
            source.push((k as usize, Frame::from_slice(&s[1..])));
        }
        self.source = source;
        finish_init(cx, self.source.len(), self)
    }
}

impl Mapping for AssembledRigidRigidMapping {
    mapping_ports!();

    #[allow(clippy::needless_range_loop)] // rows a and 3 + a of the 6×6 block [[I, −[r]×], [0, I]]
    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        check_len("the input positions", x, self.n_in, 7)?;
        let n = self.source.len();
        check_len("the output positions", out, n, 7)?;
        let mut j = SparseRows::new(6 * n, 6 * self.n_in);
        self.rotated.clear();
        for (i, (k, h)) in self.source.iter().enumerate() {
            let g = Frame::at(x, *k);
            g.mul(h).write(&mut out[7 * i..7 * i + 7]);
            let r = quat_rotate(g.q, h.c);
            self.rotated.push(r);
            let m = hat(r);
            for a in 0..3 {
                let row = &mut j.rows[6 * i + a];
                row.push((6 * k + a, 1.0));
                for (c, &v) in m[a].iter().enumerate() {
                    row.push((6 * k + 3 + c, -v));
                }
                j.rows[6 * i + 3 + a].push((6 * k + 3 + a, 1.0));
            }
        }
        assembled::store(&mut self.jac, j)
    }

    assembled_products!(ready);

    fn update_k(&mut self, f_out: &[f64]) -> SimResult {
        self.k_force.clear();
        if self.ports.map_forces && self.gs != GeometricStiffness::None && f_out.len() >= 6 * self.source.len() {
            self.k_force.extend_from_slice(&f_out[..6 * self.source.len()]);
        }
        Ok(())
    }

    fn apply_djt(&mut self, inputs: &mut [&mut [f64]], dx_in: &[&[f64]], f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || self.gs == GeometricStiffness::None {
            return Ok(());
        }
        self.ready()?;
        let f = djt_force(&self.k_force, f_out, (self.source.len(), 6), dx_in[0], inputs[0], (self.n_in, 6))?;
        for (k, b) in self.stiffness_blocks(f) {
            let dw = v3(&dx_in[0][6 * k + 3..]);
            for (a, line) in b.iter().enumerate() {
                let s: f64 = (0..3).map(|c| line[c] * dw[c]).sum();
                inputs[0][6 * k + 3 + a] += k_factor * s;
            }
        }
        Ok(())
    }

    fn add_geometric_stiffness(&self, m: &mut MatrixAccumulator, f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || self.gs == GeometricStiffness::None {
            return Ok(());
        }
        self.ready()?;
        check_len("the output forces", f_out, self.source.len(), 6)?;
        let s = self.ports.inputs[0];
        for (k, b) in self.stiffness_blocks(f_out) {
            let data: Vec<f64> = b.iter().flatten().map(|x| x * k_factor).collect();
            m.add_block(s, 6 * k + 3, s, 6 * k + 3, 3, 3, &data);
        }
        Ok(())
    }
}
