//! `JointSpringForceField`: 6-D springs between rigid frames of `object1` and `object2`, SOFA's
//! `JointSpringForceField<Rigid3d>`.
//!
//! A spring `(a, b)` measures the frame of `x2[b]` relative to `x1[a]`: the centre offset
//! `d = c2 − c1 − initTrans` and the rotation `q = normalize(q1⁻¹·q2·initRot)`, turned into a
//! rotation vector `torsion` (angle wrapped to [−π, π]). In the frame `R = q1`:
//!
//! * force `f = R·(KT ⊙ Rᵀd) + kd·(v2 − v1)`, with `KT[i]` the soft stiffness along free
//!   translation axes, the hard one along blocked axes;
//! * torque `τ = R·τ0 + kd·(ω2 − ω1)`, with `τ0 = KR ⊙ torsion` when every rotation is blocked,
//!   a pivot law when exactly one axis is free and inside its limits, and otherwise the torsion
//!   projected onto the limits, free axes outside them being pulled back with `blocStiffness`
//!   (which then replaces their `KR`);
//! * `f1[a] += (f, τ)`, `f2[b] −= (f, τ)`.
//!
//! The stiffness, as SOFA's, keeps `R`, `KT` and `KR` of the last `addForce` and ignores how the
//! frame and the laws change: `df = R·(K ⊙ Rᵀ·(dx2 − dx1))` for the translation and rotation
//! parts. There is no damping matrix. `initTrans`/`initRot` come from `REST_T`/`REST_R`; as in
//! SOFA, giving `REST_T` makes `bwdInit` replace both by the initial relative placement.

use crate::RayleighStiffnessData;
use settee_core::component::ForceField;
use settee_core::role::{Interaction, MechanicalState};
use settee_core::types::{quat_mul, quat_normalize, Quat};
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId, VecId};

use crate::rest_shape_springs_force_field::{quat_inverse, quat_to_axis};
use crate::spring_force_field::resolve_pair;

use std::f64::consts::PI;

/// One joint spring (SOFA's `JointSpring`): its parameters, and the frame and stiffnesses of the
/// last `addForce`.
#[derive(Clone, Debug, PartialEq)]
pub struct JointSpring {
    pub m1: usize,
    pub m2: usize,
    pub kd: f64,
    /// Per axis: translations (0..3) then rotations (3..6) free (soft stiffness) or blocked (hard).
    pub free_movements: [bool; 6],
    pub soft_stiffness_trans: f64,
    pub hard_stiffness_trans: f64,
    pub soft_stiffness_rot: f64,
    pub hard_stiffness_rot: f64,
    /// Stiffness pulling a free rotation back inside its limits.
    pub bloc_stiffness_rot: f64,
    /// `min max` per rotation axis.
    pub limit_angles: [f64; 6],
    pub init_trans: [f64; 3],
    pub init_rot: Quat,
    /// Whether `bwdInit` replaces `init_trans`/`init_rot` by the initial relative placement.
    pub need_to_initialize: bool,
    /// State of the last `addForce`.
    pub torsion: [f64; 3],
    pub lawful_torsion: [f64; 3],
    pub kt: [f64; 3],
    pub kr: [f64; 3],
    pub reference: Quat,
}

impl Default for JointSpring {
    /// SOFA's constructor defaults.
    fn default() -> JointSpring {
        JointSpring {
            m1: 0,
            m2: 0,
            kd: 0.0,
            free_movements: [false, false, false, true, true, true],
            soft_stiffness_trans: 0.0,
            hard_stiffness_trans: 10000.0,
            soft_stiffness_rot: 0.0,
            hard_stiffness_rot: 10000.0,
            bloc_stiffness_rot: 100.0,
            limit_angles: [-100000.0, 100000.0, -100000.0, 100000.0, -100000.0, 100000.0],
            init_trans: [0.0; 3],
            init_rot: [0.0, 0.0, 0.0, 1.0],
            need_to_initialize: false,
            torsion: [0.0; 3],
            lawful_torsion: [0.0; 3],
            kt: [0.0; 3],
            kr: [0.0; 3],
            reference: [0.0, 0.0, 0.0, 1.0],
        }
    }
}

/// Reads the `spring` Data: `BEGIN_SPRING m1 m2 [KEYWORD values…]… END_SPRING`, repeated.
///
/// As SOFA reads it, into one spring object reused from one spring to the next: each spring
/// starts with every rotation free, no limits, no rest offset and `KS_B` unset (then
/// `hard rotation stiffness / 100`), while `KS_T`, `KS_R` and `KD` keep the previous spring's
/// values when not given. A rotation axis whose two limits are equal is blocked.
pub fn parse_joint_springs(text: &str) -> Result<Vec<JointSpring>, String> {
    let mut words = text.split_whitespace().peekable();
    let mut springs = Vec::new();
    let mut s = JointSpring::default();
    fn real(w: Option<&str>, what: &str) -> Result<f64, String> {
        let w = w.ok_or_else(|| format!("{what}: missing value before the end of the text"))?;
        w.parse::<f64>().map_err(|_| format!("{what}: '{w}' is not a number"))
    }
    fn index(w: Option<&str>, what: &str) -> Result<usize, String> {
        let w = w.ok_or_else(|| format!("{what}: missing index"))?;
        w.parse::<usize>().map_err(|_| format!("{what}: '{w}' is not a non-negative integer"))
    }
    while let Some(w) = words.next() {
        if w != "BEGIN_SPRING" {
            return Err(format!("expected BEGIN_SPRING, found '{w}'"));
        }
        let n = springs.len();
        s.free_movements = [false, false, false, true, true, true];
        s.init_trans = [0.0; 3];
        s.init_rot = [0.0, 0.0, 0.0, 1.0];
        s.bloc_stiffness_rot = 0.0;
        s.limit_angles = [-100000.0, 100000.0, -100000.0, 100000.0, -100000.0, 100000.0];
        let mut rest_trans_given = false;
        s.m1 = index(words.next(), &format!("spring {n}: first"))?;
        s.m2 = index(words.next(), &format!("spring {n}: second"))?;
        loop {
            let key = words.next().ok_or_else(|| format!("spring {n}: END_SPRING missing"))?;
            let what = format!("spring {n}: {key}");
            let mut read = || real(words.next(), &what);
            match key {
                "END_SPRING" => break,
                "FREE_AXIS" => {
                    for i in 0..6 {
                        s.free_movements[i] = read()? != 0.0;
                    }
                }
                "KS_T" => {
                    s.soft_stiffness_trans = read()?;
                    s.hard_stiffness_trans = read()?;
                }
                "KS_R" => {
                    s.soft_stiffness_rot = read()?;
                    s.hard_stiffness_rot = read()?;
                }
                "KS_B" => s.bloc_stiffness_rot = read()?,
                "KD" => s.kd = read()?,
                "R_LIM_X" | "R_LIM_Y" | "R_LIM_Z" => {
                    let axis = usize::from(key.as_bytes()[6] - b'X');
                    s.limit_angles[2 * axis] = read()?;
                    s.limit_angles[2 * axis + 1] = read()?;
                }
                "REST_T" => {
                    for i in 0..3 {
                        s.init_trans[i] = read()?;
                    }
                    rest_trans_given = true;
                }
                "REST_R" => {
                    for i in 0..4 {
                        s.init_rot[i] = read()?;
                    }
                }
                _ => {
                    return Err(format!(
                        "spring {n}: unknown keyword '{key}' (expected FREE_AXIS, KS_T, KS_R, KS_B, KD, R_LIM_X/Y/Z, REST_T, REST_R or END_SPRING)"
                    ))
                }
            }
        }
        s.need_to_initialize = rest_trans_given;
        if s.bloc_stiffness_rot == 0.0 {
            s.bloc_stiffness_rot = s.hard_stiffness_rot / 100.0;
        }
        for i in 0..3 {
            if s.limit_angles[2 * i] == s.limit_angles[2 * i + 1] {
                s.free_movements[3 + i] = false;
            }
        }
        springs.push(s.clone());
    }
    Ok(springs)
}

/// The rotation matrix of a unit quaternion (SOFA's `Quat::toMatrix`), row-major.
pub(crate) fn rotation_matrix(q: Quat) -> [[f64; 3]; 3] {
    let [x, y, z, w] = q;
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (z * x + y * w)],
        [2.0 * (x * y + z * w), 1.0 - 2.0 * (z * z + x * x), 2.0 * (y * z - x * w)],
        [2.0 * (z * x - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (y * y + x * x)],
    ]
}

pub(crate) fn rotate(q: Quat, v: [f64; 3]) -> [f64; 3] {
    let m = rotation_matrix(q);
    [0, 1, 2].map(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
}

pub(crate) fn inverse_rotate(q: Quat, v: [f64; 3]) -> [f64; 3] {
    let m = rotation_matrix(q);
    [0, 1, 2].map(|i| m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2])
}

/// `R·(k ⊙ Rᵀ·v)`.
pub(crate) fn scaled_in_frame(r: Quat, k: [f64; 3], v: [f64; 3]) -> [f64; 3] {
    let local = inverse_rotate(r, v);
    rotate(r, [k[0] * local[0], k[1] * local[1], k[2] * local[2]])
}

impl JointSpring {
    /// Brings the torsion back inside the limits of each free rotation (SOFA's `projectTorsion`):
    /// blocked axes project to 0, axes outside their limits to the nearest limit going around.
    fn project_torsion(&mut self) {
        for i in 0..3 {
            let t = self.torsion[i];
            let (lo, hi) = (self.limit_angles[2 * i], self.limit_angles[2 * i + 1]);
            self.lawful_torsion[i] = if !self.free_movements[3 + i] {
                0.0
            } else if t > lo && t < hi {
                t
            } else {
                let (d1, d2) = if t > 0.0 { (t - hi, lo + 2.0 * PI - t) } else { (t - hi + 2.0 * PI, lo - t) };
                if d1 < d2 {
                    hi
                } else {
                    lo
                }
            };
        }
    }

    /// The local torque `τ0` for the relative rotation `rel` (whose rotation vector is
    /// `self.torsion`); may replace `KR` of free axes outside their limits.
    fn local_torque(&mut self, rel: Quat) -> [f64; 3] {
        let free = &self.free_movements;
        let (t, kr, lim) = (self.torsion, self.kr, self.limit_angles);
        let pivot = |axis: usize| (0..3).all(|i| free[3 + i] == (i == axis)) && t[axis] > lim[2 * axis] && t[axis] < lim[2 * axis + 1];
        let m = rotation_matrix(rel);
        if !free[3] && !free[4] && !free[5] {
            [t[0] * kr[0], t[1] * kr[1], t[2] * kr[2]]
        } else if pivot(0) {
            let theta = (m[1][0] * m[1][0] + m[2][0] * m[2][0]).sqrt().atan2(m[0][0]);
            [t[0] * kr[0], -m[2][0] * theta * kr[1], m[1][0] * theta * kr[2]]
        } else if pivot(1) {
            let theta = (m[0][1] * m[0][1] + m[2][1] * m[2][1]).sqrt().atan2(m[1][1]);
            [m[2][1] * theta * kr[0], t[1] * kr[1], -m[0][1] * theta * kr[2]]
        } else if pivot(2) {
            let theta = (m[1][2] * m[1][2] + m[0][2] * m[0][2]).sqrt().atan2(m[2][2]);
            [-m[1][2] * theta * kr[0], m[0][2] * theta * kr[1], t[2] * kr[2]]
        } else {
            self.project_torsion();
            let extra = [0, 1, 2].map(|i| t[i] - self.lawful_torsion[i]);
            let mut psi = (extra[0] * extra[0] + extra[1] * extra[1] + extra[2] * extra[2]).sqrt();
            let unit = extra.map(|e| e / psi);
            while psi < -PI {
                psi += 2.0 * PI;
            }
            while psi > PI {
                psi -= 2.0 * PI;
            }
            let mut tau = [0.0; 3];
            for i in 0..3 {
                if self.free_movements[3 + i] && t[i] != self.lawful_torsion[i] {
                    self.kr[i] = self.bloc_stiffness_rot;
                    tau[i] = unit[i] * psi * self.kr[i];
                } else {
                    tau[i] = t[i] * self.kr[i];
                }
            }
            tau
        }
    }

    /// The force and torque `(f, τ)` added to `x1[a]` (and subtracted from `x2[b]`), given the
    /// two frames and velocities (7 and 6 numbers); stores the frame and stiffnesses.
    pub fn force(&mut self, x1: &[f64], x2: &[f64], v1: &[f64], v2: &[f64]) -> [f64; 6] {
        let q1: Quat = [x1[3], x1[4], x1[5], x1[6]];
        let q2: Quat = [x2[3], x2[4], x2[5], x2[6]];
        self.reference = q1;
        let d = [0, 1, 2].map(|i| x2[i] - x1[i] - self.init_trans[i]);
        let mut rel = quat_mul(quat_mul(quat_inverse(q1), q2), self.init_rot);
        quat_normalize(&mut rel);
        let (axis, mut phi) = quat_to_axis(rel);
        while phi < -PI {
            phi += 2.0 * PI;
        }
        while phi > PI {
            phi -= 2.0 * PI;
        }
        self.torsion = axis.map(|a| a * phi);
        for i in 0..3 {
            self.kt[i] = if self.free_movements[i] { self.soft_stiffness_trans } else { self.hard_stiffness_trans };
            self.kr[i] = if self.free_movements[3 + i] { self.soft_stiffness_rot } else { self.hard_stiffness_rot };
        }
        let f = scaled_in_frame(q1, self.kt, d);
        let tau0 = self.local_torque(rel);
        let tau = rotate(q1, tau0);
        let kd = self.kd;
        [
            f[0] + (v2[0] - v1[0]) * kd,
            f[1] + (v2[1] - v1[1]) * kd,
            f[2] + (v2[2] - v1[2]) * kd,
            tau[0] + (v2[3] - v1[3]) * kd,
            tau[1] + (v2[4] - v1[4]) * kd,
            tau[2] + (v2[5] - v1[5]) * kd,
        ]
    }

    /// `(df, dτ)` for the relative displacement `δ = dx2[b] − dx1[a]` (6 numbers).
    pub fn dforce(&self, delta: [f64; 6]) -> [f64; 6] {
        let df = scaled_in_frame(self.reference, self.kt, [delta[0], delta[1], delta[2]]);
        let dr = scaled_in_frame(self.reference, self.kr, [delta[3], delta[4], delta[5]]);
        [df[0], df[1], df[2], dr[0], dr[1], dr[2]]
    }

    /// The 3×3 blocks `R·diag(k)·Rᵀ` for translation and rotation.
    fn blocks(&self) -> [[[f64; 3]; 3]; 2] {
        let r = rotation_matrix(self.reference);
        [self.kt, self.kr].map(|k| {
            let mut b = [[0.0; 3]; 3];
            for (i, row) in b.iter_mut().enumerate() {
                for (j, e) in row.iter_mut().enumerate() {
                    *e = (0..3).map(|c| r[i][c] * k[c] * r[j][c]).sum();
                }
            }
            b
        })
    }
}

/// 6-D springs between rigid frames of two states.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    markers = [Interaction],
    templates = ["Rigid3d"],
    template_rule = FromPair,
    create = |_args| JointSpringForceField::default(),
    data = {
        /// output file of the joint forces (debugging output, not supported)
        outfile: FileName,
        /// input file of constant joint forces (not supported)
        infile: FileName,
        /// period between outputs
        period: Real = "0",
        /// reinitialise the output file at each time step
        reinit: Bool = "false",
        /// springs `BEGIN_SPRING m1 m2 [FREE_AXIS 6 flags] [KS_T soft hard] [KS_R soft hard] [KS_B bloc] [KD kd] [R_LIM_X/Y/Z min max] [REST_T x y z] [REST_R quaternion] END_SPRING`, repeated
        spring: Str,
        /// draw the lawful part of the joint rotation (rendering only)
        showLawfulTorsion: Bool = "false",
        /// draw the illicit part of the joint rotation (rendering only)
        showExtraTorsion: Bool = "false",
        /// size factor of the drawn debugging information (rendering only)
        showFactorSize: Real = "1",
    },
    inherit = [Self, RayleighStiffnessData],
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct JointSpringForceField {
    s1: Option<StateId>,
    s2: Option<StateId>,
    springs: Vec<JointSpring>,
    rayleigh_stiffness: f64,
}

impl JointSpringForceField {
    pub fn springs(&self) -> &[JointSpring] {
        &self.springs
    }

    /// Index of the second state's entry in a [`ForceIo`] (a pair on one state is lent once).
    fn second(&self) -> usize {
        usize::from(self.s1 != self.s2)
    }

    fn check_bounds(&self, n1: usize, n2: usize) -> SimResult {
        for (i, s) in self.springs.iter().enumerate() {
            if s.m1 >= n1 || s.m2 >= n2 {
                return Err(SimError::new(format!("spring {i} ({} {}) reaches beyond the states ({n1} and {n2} frames)", s.m1, s.m2)));
            }
        }
        Ok(())
    }
}

impl Component for JointSpringForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s1, s2) = resolve_pair(cx, Layout::Rigid3)?;
        self.s1 = Some(s1);
        self.s2 = Some(s2);
        let d = cx.data();
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        for (name, key) in [("infile", Self::INFILE), ("outfile", Self::OUTFILE)] {
            if !d.get(key).trim().is_empty() {
                return Err(SimError::unsupported(format!("JointSpringForceField's {name} is not supported yet")).hint("remove the attribute"));
            }
        }
        self.springs = parse_joint_springs(d.get(Self::SPRING)).map_err(|m| cx.error(format!("spring: {m}")))?;
        Ok(())
    }

    /// Checks the indices once every state is initialised, and sets the rest offsets of the
    /// springs that asked for it from the initial positions.
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (Some(s1), Some(s2)) = (self.s1, self.s2) else {
            return Err(SimError::new("JointSpringForceField used before init"));
        };
        self.check_bounds(cx.state_size(s1), cx.state_size(s2))
            .map_err(|e| cx.error(e.0.message).hint("spring indices are 0-based frame indices of object1 (first) and object2 (second)"))?;
        let (x1, x2) = (cx.read_vec(s1, VecId::POSITION), cx.read_vec(s2, VecId::POSITION));
        for s in self.springs.iter_mut().filter(|s| s.need_to_initialize) {
            let (p1, p2) = (&x1[7 * s.m1..7 * s.m1 + 7], &x2[7 * s.m2..7 * s.m2 + 7]);
            s.init_trans = [0, 1, 2].map(|i| p2[i] - p1[i]);
            s.init_rot = quat_mul([p2[3], p2[4], p2[5], p2[6]], quat_inverse([p1[3], p1[4], p1[5], p1[6]]));
        }
        Ok(())
    }
}

impl ForceField for JointSpringForceField {
    fn states(&self) -> settee_core::StateSet {
        self.s1.into_iter().chain(self.s2).collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let j2 = self.second();
        self.check_bounds(io.x[0].len() / 7, io.x[j2].len() / 7)?;
        let zero = [0.0; 6];
        for s in &mut self.springs {
            let (a, b) = (s.m1, s.m2);
            let (v1, v2) = match io.v.len() {
                0 => (&zero[..], &zero[..]),
                _ => (&io.v[0][6 * a..6 * a + 6], &io.v[j2][6 * b..6 * b + 6]),
            };
            let f = s.force(&io.x[0][7 * a..7 * a + 7], &io.x[j2][7 * b..7 * b + 7], v1, v2);
            for (o, fc) in io.f[0][6 * a..6 * a + 6].iter_mut().zip(f) {
                *o += fc;
            }
            for (o, fc) in io.f[j2][6 * b..6 * b + 6].iter_mut().zip(f) {
                *o -= fc;
            }
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let j2 = self.second();
        self.check_bounds(io.x[0].len() / 6, io.x[j2].len() / 6)?;
        for s in &self.springs {
            let (a, b) = (s.m1, s.m2);
            let delta: [f64; 6] = std::array::from_fn(|c| io.x[j2][6 * b + c] - io.x[0][6 * a + c]);
            let df = s.dforce(delta);
            for (o, d) in io.f[0][6 * a..6 * a + 6].iter_mut().zip(df) {
                *o += d * k_factor;
            }
            for (o, d) in io.f[j2][6 * b..6 * b + 6].iter_mut().zip(df) {
                *o -= d * k_factor;
            }
        }
        Ok(())
    }

    /// `∂f1[a]/∂x1[a] = −K`, `∂f1[a]/∂x2[b] = +K`, `∂f2[b]/∂x1[a] = +K`, `∂f2[b]/∂x2[b] = −K`
    /// with `K` block-diagonal (translation, rotation), times `kFactor`.
    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let (Some(s1), Some(s2)) = (self.s1, self.s2) else {
            return Err(SimError::new("JointSpringForceField used before init"));
        };
        for s in &self.springs {
            let blocks = s.blocks();
            let ends = [(s1, 6 * s.m1), (s2, 6 * s.m2)];
            for (part, b) in blocks.iter().enumerate() {
                for (i, row) in b.iter().enumerate() {
                    for (j, &k) in row.iter().enumerate() {
                        let k = k * k_factor;
                        for (ei, &(si, pi)) in ends.iter().enumerate() {
                            for (ej, &(sj, pj)) in ends.iter().enumerate() {
                                let v = if ei == ej { -k } else { k };
                                acc.add(si, pi + 3 * part + i, sj, pj + 3 * part + j, v);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests read output Data by name
mod tests {
    use super::*;
    use crate::test_support::*;
    use settee_core::mechanics::{self as mech, MechScope};
    use settee_core::simulation::init_root;
    use settee_core::{Mbk, Scene};

    /// Two rigid states in child nodes and a JointSpringForceField between them.
    fn pair_scene(x1: &str, x2: &str, springs: &str) -> (Scene, settee_core::ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        let a = s.add_node(Scene::ROOT, "A");
        let b = s.add_node(Scene::ROOT, "B");
        add(&mut s, &f, a, "MechanicalObject", &[("template", "Rigid3d"), ("name", "m1"), ("position", x1)]);
        add(&mut s, &f, b, "MechanicalObject", &[("template", "Rigid3d"), ("name", "m2"), ("position", x2)]);
        let c = add(&mut s, &f, Scene::ROOT, "JointSpringForceField", &[("object1", "@A/m1"), ("object2", "@B/m2"), ("spring", springs)]);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    fn close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for i in 0..a.len() {
            assert!((a[i] - b[i]).abs() < tol, "component {i}: {a:?} vs {b:?}");
        }
    }

    #[test]
    fn spring_text_is_read_with_sofa_defaults_and_carry_over() {
        let sp = parse_joint_springs(
            "BEGIN_SPRING 0 1 FREE_AXIS 0 0 0 0 1 0 KS_T 1 30000 KS_R 2 200000 KD 1 R_LIM_X -0.8 0.8 R_LIM_Z 0 0 END_SPRING\n \
             BEGIN_SPRING 2 3 KS_B 7 REST_T 1 2 3 END_SPRING",
        )
        .unwrap();
        assert_eq!(sp.len(), 2);
        let a = &sp[0];
        assert_eq!((a.m1, a.m2, a.kd), (0, 1, 1.0));
        assert_eq!(a.free_movements, [false, false, false, false, true, false]);
        assert_eq!((a.soft_stiffness_trans, a.hard_stiffness_trans, a.soft_stiffness_rot, a.hard_stiffness_rot), (1.0, 30000.0, 2.0, 200000.0));
        assert_eq!(a.bloc_stiffness_rot, 2000.0);
        assert_eq!(a.limit_angles, [-0.8, 0.8, -100000.0, 100000.0, 0.0, 0.0]);
        assert!(!a.need_to_initialize);
        // The second spring keeps KS_T, KS_R and KD, but not the axes, limits or KS_B.
        let b = &sp[1];
        assert_eq!((b.m1, b.m2, b.kd, b.hard_stiffness_trans, b.hard_stiffness_rot), (2, 3, 1.0, 30000.0, 200000.0));
        assert_eq!(b.free_movements, [false, false, false, true, true, true]);
        assert_eq!(b.bloc_stiffness_rot, 7.0);
        assert_eq!(b.init_trans, [1.0, 2.0, 3.0]);
        assert!(b.need_to_initialize);
        assert!(parse_joint_springs("BEGIN_SPRING 0 1 KS_X 1 END_SPRING").unwrap_err().contains("KS_X"));
        assert!(parse_joint_springs("BEGIN_SPRING 0 1 KD").unwrap_err().contains("KD"));
    }

    #[test]
    fn translation_force_acts_in_the_first_frame() {
        // Frame 1 turned 90° about z: its local x is the world y. Local x translation free (soft
        // 100), y and z hard (5000). Offset (0.1, -0.2, 0.3) → local (−0.2, −0.1, 0.3).
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let x1 = format!("0 0 0 0 0 {h} {h}");
        let (mut s, _) = pair_scene(&x1, "0.1 -0.2 0.3 0 0 0 1", "BEGIN_SPRING 0 0 FREE_AXIS 1 0 0 0 0 0 KS_T 100 5000 END_SPRING");
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        // Local force (−20, −500, 1500) → world (500, −20, 1500); the relative rotation is
        // −90° about z: all rotations blocked, τ = 10000·(−π/2)·z.
        let tau = -10000.0 * std::f64::consts::FRAC_PI_2;
        close(&fv[..6], &[500.0, -20.0, 1500.0, 0.0, 0.0, tau], 1e-9);
        close(&fv[6..], &[-500.0, 20.0, -1500.0, 0.0, 0.0, -tau], 1e-9);
    }

    #[test]
    fn pivot_about_y_resists_the_other_rotations_only() {
        // Frame 2 turned 0.3 about y (free within ±1.57, soft 0) then 0.2 about x.
        let (s2, c2) = (0.15f64.sin(), 0.15f64.cos());
        let spring = "BEGIN_SPRING 0 0 FREE_AXIS 0 0 0 0 1 0 KS_R 0 200000 R_LIM_X 0 0 R_LIM_Y -1.57 1.57 R_LIM_Z 0 0 END_SPRING";
        let (mut s, _) = pair_scene("0 0 0 0 0 0 1", &format!("0 0 0 0 {s2} 0 {c2}"), spring);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        close(&fv, &[0.0; 12], 1e-9);
        let (sx, cx) = (0.1f64.sin(), 0.1f64.cos());
        let (mut s, _) = pair_scene("0 0 0 0 0 0 1", &format!("0 0 0 {sx} 0 0 {cx}"), spring);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        // Rotation 0.2 about x: M[2][1] = sin 0.2, θ = 0.2.
        let tau = 0.2f64.sin() * 0.2 * 200000.0;
        close(&fv[..6], &[0.0, 0.0, 0.0, tau, 0.0, 0.0], 1e-8);
    }

    #[test]
    fn free_rotation_beyond_its_limit_is_pulled_back_with_the_bloc_stiffness() {
        // Free rotations, z limited to [−0.5, 0.5], frame 2 turned 0.7 about z: the extra torsion
        // 0.2 is resisted with KS_B = 300.
        let (sz, cz) = (0.35f64.sin(), 0.35f64.cos());
        let (mut s, c) =
            pair_scene("0 0 0 0 0 0 1", &format!("0 0 0 0 0 {sz} {cz}"), "BEGIN_SPRING 0 0 KS_R 5 1000 KS_B 300 R_LIM_Z -0.5 0.5 END_SPRING");
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        close(&fv[..6], &[0.0, 0.0, 0.0, 0.0, 0.0, 0.2 * 300.0], 1e-9);
        let ff = s.get::<JointSpringForceField>(c).unwrap();
        assert_eq!(ff.springs()[0].kr, [5.0, 5.0, 300.0]);
        assert!((ff.springs()[0].lawful_torsion[2] - 0.5).abs() < 1e-15);
    }

    #[test]
    fn stiffness_is_the_force_derivative_at_an_aligned_joint() {
        // Equal orientations, all axes blocked (isotropic stiffness): SOFA's stiffness is then
        // the exact derivative of the force, for every DOF of both frames.
        let q = "0.2 -0.3 0.4 0.8426149773176359";
        let (mut s, _) = pair_scene(
            &format!("0.1 0.2 0.3 {q}  1 1 1 0 0 0 1"),
            &format!("0.5 -0.2 0.9 {q}"),
            "BEGIN_SPRING 0 0 FREE_AXIS 0 0 0 0 0 0 KS_T 0 3000 KS_R 0 700 KD 2 END_SPRING",
        );
        let scope = MechScope::build(&s, Scene::ROOT);
        let states = scope.states.clone();
        let x0: Vec<Vec<f64>> = states.iter().map(|&st| s.store.get(st).read(VecId::POSITION).to_vec()).collect();
        let mut seed = 11;
        let dx: Vec<f64> = (0..18).map(|i| if (6..12).contains(&i) { 0.0 } else { lcg(&mut seed) }).collect();
        let eps = 1e-6;
        // Frames 0 and 1 in the first state, frame 2 in the second.
        let set = |s: &mut Scene, sign: f64| {
            for (k, &st) in states.iter().enumerate() {
                let mut x = x0[k].clone();
                let first = if k == 0 { 0 } else { 2 };
                for (j, c) in x.chunks_exact_mut(7).enumerate() {
                    let fr = first + j;
                    Layout::Rigid3.coord_add_scaled(c, &dx[6 * fr..6 * fr + 6], sign * eps);
                }
                s.store.get_mut(st).write(VecId::POSITION).copy_from_slice(&x);
            }
        };
        set(&mut s, 1.0);
        let fp = forces(&mut s, &scope);
        set(&mut s, -1.0);
        let fm = forces(&mut s, &scope);
        set(&mut s, 0.0);
        forces(&mut s, &scope);
        let df = dforce(&mut s, &scope, &dx, 1.0);
        assert!(df.iter().fold(0.0f64, |m, v| m.max(v.abs())) > 100.0);
        for i in 0..18 {
            let fd = (fp[i] - fm[i]) / (2.0 * eps);
            assert!((fd - df[i]).abs() < 1e-7 * 3000.0, "row {i}: finite difference {fd} vs addDForce {}", df[i]);
        }
        let mut b = settee_linalg::MatrixBuilder::new(0);
        mech::assemble(&mut s, &scope, Mbk { m: 0.0, b: 0.0, k: 1.0 }, &mut b).unwrap();
        let mut kdx = vec![0.0; 18];
        b.matrix().mul_vec(&dx, &mut kdx).unwrap();
        close(&kdx, &df, 1e-9);
    }

    #[test]
    fn stiffness_matches_assembly_in_a_turned_anisotropic_joint() {
        let (mut s, _) = pair_scene(
            "0 0 0 0.1 0.2 -0.3 0.9273618495495704",
            "0.4 0.1 -0.2 -0.2 0.1 0.3 0.9273618495495704",
            "BEGIN_SPRING 0 0 FREE_AXIS 1 0 0 0 1 0 KS_T 10 3000 KS_R 5 700 END_SPRING",
        );
        let scope = MechScope::build(&s, Scene::ROOT);
        forces(&mut s, &scope);
        let mut seed = 5;
        let dx: Vec<f64> = (0..12).map(|_| lcg(&mut seed)).collect();
        let df = dforce(&mut s, &scope, &dx, 1.0);
        let mut b = settee_linalg::MatrixBuilder::new(0);
        mech::assemble(&mut s, &scope, Mbk { m: 0.0, b: 0.0, k: 1.0 }, &mut b).unwrap();
        let k = b.matrix();
        assert!(k.is_symmetric(1e-9));
        let mut kdx = vec![0.0; 12];
        k.mul_vec(&dx, &mut kdx).unwrap();
        close(&kdx, &df, 1e-9);
        // Translation along the first frame's local x (free, 10) and y (hard, 3000).
        let q = [0.1, 0.2, -0.3, 0.9273618495495704];
        for (axis, k) in [([1.0, 0.0, 0.0], 10.0), ([0.0, 1.0, 0.0], 3000.0)] {
            let w = rotate(q, axis);
            let dx: Vec<f64> = (0..12).map(|i| if (6..9).contains(&i) { w[i - 6] } else { 0.0 }).collect();
            let df = dforce(&mut s, &scope, &dx, 1.0);
            close(&df[6..9], &w.map(|c| -k * c), 1e-9);
        }
    }

    #[test]
    fn rest_translation_asks_for_the_initial_placement() {
        let (s, c) = pair_scene("1 0 0 0 0 0 1", "1 2 0 0 0 0.3826834323650898 0.9238795325112867", "BEGIN_SPRING 0 0 REST_T 9 9 9 END_SPRING");
        let ff = s.get::<JointSpringForceField>(c).unwrap();
        let sp = &ff.springs()[0];
        assert_eq!(sp.init_trans, [0.0, 2.0, 0.0]);
        close(&sp.init_rot, &[0.0, 0.0, 0.3826834323650898, 0.9238795325112867], 1e-15);
    }

    #[test]
    fn out_of_range_spring_is_an_init_error() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", "0 0 0 0 0 0 1")]);
        add(&mut s, &f, Scene::ROOT, "JointSpringForceField", &[("template", "Rigid3d"), ("spring", "BEGIN_SPRING 0 1 END_SPRING")]);
        let e = init_root(&mut s, &f).unwrap_err();
        assert!(e.diagnostic().message.contains("beyond"), "{e}");
    }
}
