//! `InteractionEllipsoidForceField` (template `Vec3d,Rigid3d`): ellipsoids carried by one frame of
//! a Rigid3 state (`object2`) push the particles of a Vec3 state (`object1`) out of them (positive
//! `stiffness`) or keep them inside (negative) — mechanics spec §7.5.
//!
//! Every `addForce` reads the frame `C = x2[object2_dof_index]` (its inverse with
//! `object2_invert`), brings each particle and its velocity into the frame (`p = q⁻¹·(x − c)`,
//! `u = q⁻¹·v`), picks the ellipsoid with the smallest `n2 = Σ (p_j − center_j)²/r_j²` (the first
//! on ties) and, when `(n2 − 1)·stiffness < 0`, applies EllipsoidForceField's penalty: with
//! `grad_j = (p_j − center_j)/r_j²`, `ℓ = √n2`, `v = ℓ − 1`, `g = |grad|`,
//! `F = grad·(−|k|·v/g) − u·(damping·|v|)`, rotated back to the world. The frame's velocity is
//! ignored. With `object2_forces` the opposite of the sum of the contact forces goes to the frame's
//! translation (no torque, as in SOFA). Each contact keeps the 3×3 Jacobian
//! `m_ab = grad_a·grad_b·(f1 + f3/r_b²) + δ_ab·f2/r_a²` (`f1 = −|k|/(ℓ·g)`, `f2 = −|k|·v/g`,
//! `f3 = −|k|·v/g²`) for `addDForce`: `df = q·(kFactor·m·q⁻¹·(dx1 − dx2.center))`, with the frame
//! of the last `addForce` and `dx2` taken only with `object2_forces`. SOFA assembles no stiffness
//! for this class: use it with matrix-free solvers.
//!
//! `object2` often lives in another solver's subtree: a displacement of `object2` that the solver
//! does not hold (an empty slice) counts as zero, and forces on `object2` are only written where a
//! vector is lent.

use settee_core::component::ForceField;
use settee_core::role::{Interaction, MechanicalState};
use settee_core::types::{quat_rotate, Quat};
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId, VecId};

/// One particle inside (or outside, for a negative stiffness) its nearest ellipsoid at the last
/// `addForce`.
#[derive(Clone, Debug, PartialEq)]
pub struct EllipsoidContact {
    /// The particle (DOF of `object1`).
    pub index: usize,
    /// `∂F_local/∂p` in the frame of `object2`, row-major.
    pub m: [[f64; 3]; 3],
}

/// One ellipsoid, in the frame of `object2`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ellipsoid {
    center: [f64; 3],
    /// `1/r_j²`.
    inv_r2: [f64; 3],
}

/// Outward / inward repulsion applied by an ellipsoid geometry, which can possibly act on several objects.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    markers = [Interaction],
    templates = ["Vec3d,Rigid3d"],
    template_rule = FromPair,
    data = {
        /// Contacts: particle index and 3×3 stiffness per contact (output; Settee keeps them in the component, see `contacts()`)
        contacts: RealTuples(10),
        /// ellipsoid center
        center: Coords,
        /// ellipsoid radius
        vradius: Coords,
        /// force stiffness (positive to repulse outward, negative inward)
        stiffness: Real = "500",
        /// force damping
        damping: Real = "5",
        /// ellipsoid color. (default=[0.0,0.5,1.0,1.0]) (rendering only)
        color: Color = "0 0.5 1 1",
        /// enable/disable drawing of the ellipsoid (rendering only)
        draw: Bool = "true",
        /// Dof index of object 2 where the forcefield is attached
        object2_dof_index: Int = "0",
        /// enable/disable propagation of forces to object 2
        object2_forces: Bool = "true",
        /// inverse transform from object 2 (use when object 1 is in local coordinates within a frame defined by object 2)
        object2_invert: Bool = "false",
        /// Rayleigh damping coefficient related to stiffness
        rayleighStiffness: Real = "0",
    },
    links = {
        /// the Vec3 particles (default: the node's mechanical state)
        object1: MechanicalState,
        /// the Rigid3 state carrying the ellipsoids (default: the node's mechanical state)
        object2: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct InteractionEllipsoidForceField {
    s1: Option<StateId>,
    s2: Option<StateId>,
    ellipsoids: Vec<Ellipsoid>,
    stiffness: f64,
    damping: f64,
    dof: usize,
    object2_forces: bool,
    object2_invert: bool,
    rayleigh_stiffness: f64,
    /// Orientation of the frame at the last `addForce` (at init before the first one).
    frame_q: Quat,
    contacts: Vec<EllipsoidContact>,
}

use settee_core::math::sub;

fn v3(s: &[f64]) -> [f64; 3] {
    [s[0], s[1], s[2]]
}

/// Rotation by the conjugate quaternion (SOFA's `inverseRotate`: no normalisation).
fn inverse_rotate(q: Quat, v: [f64; 3]) -> [f64; 3] {
    quat_rotate([-q[0], -q[1], -q[2], q[3]], v)
}

/// SOFA's `RigidTypes::inverse` of a Rigid3 coordinate `c x y z | qx qy qz qw`: the normalised
/// conjugate orientation and the centre `−q⁻¹·c`.
fn inverse_frame(c: [f64; 3], q: Quat) -> ([f64; 3], Quat) {
    // Squared norm summed left to right, as SOFA's Quat::inverse.
    let norm = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let qi = if norm != 0.0 {
        let s = 1.0 / norm;
        [-q[0] * s, -q[1] * s, -q[2] * s, q[3] * s]
    } else {
        [0.0; 4]
    };
    let r = quat_rotate(qi, c);
    ([-r[0], -r[1], -r[2]], qi)
}

impl InteractionEllipsoidForceField {
    /// The contacts of the last `addForce`.
    pub fn contacts(&self) -> &[EllipsoidContact] {
        &self.contacts
    }

    /// Number of ellipsoids (the longer of `center` and `vradius`).
    pub fn ellipsoid_count(&self) -> usize {
        self.ellipsoids.len()
    }

    /// Index of `object2`'s entry in a [`ForceIo`] (a pair on one state is lent once).
    fn second(&self) -> usize {
        usize::from(self.s1 != self.s2)
    }

    /// The frame `(centre, orientation)` of `object2` read from its coordinates `x2`.
    fn frame(&self, x2: &[f64]) -> SimResult<([f64; 3], Quat)> {
        let c = x2
            .get(7 * self.dof..7 * self.dof + 7)
            .ok_or_else(|| SimError::new(format!("object2_dof_index {} is beyond the {} DOFs of object2", self.dof, x2.len() / 7)))?;
        let (centre, q) = (v3(c), [c[3], c[4], c[5], c[6]]);
        Ok(if self.object2_invert { inverse_frame(centre, q) } else { (centre, q) })
    }

    /// The penalty force on a particle at `p` with velocity `u` (both in the frame of object2) and
    /// its Jacobian, or `None` when it is not in contact. SOFA's `calcF`, operation by operation.
    fn contact_force(&self, p: [f64; 3], u: [f64; 3]) -> Option<([f64; 3], [[f64; 3]; 3])> {
        let mut best: Option<(usize, [f64; 3], f64)> = None;
        for (e, el) in self.ellipsoids.iter().enumerate() {
            let dp = sub(p, el.center);
            let mut n2 = 0.0;
            for (d, w) in dp.iter().zip(&el.inv_r2) {
                n2 += (d * d) * w;
            }
            if best.is_none() || best.is_some_and(|(_, _, b)| n2 < b) {
                best = Some((e, dp, n2));
            }
        }
        let (e, dp, n2) = best?;
        // SOFA's test: contact iff the product is negative (a NaN means no contact).
        let sign = (n2 - 1.0) * self.stiffness;
        if sign >= 0.0 || sign.is_nan() {
            return None;
        }
        let inv_r2 = self.ellipsoids[e].inv_r2;
        let k_abs = self.stiffness.abs();
        let norm = n2.sqrt();
        let v = norm - 1.0;
        let grad = [dp[0] * inv_r2[0], dp[1] * inv_r2[1], dp[2] * inv_r2[2]];
        let g2 = grad[0] * grad[0] + grad[1] * grad[1] + grad[2] * grad[2];
        let g = g2.sqrt();
        let force_intensity = -k_abs * v / g;
        let damping_intensity = self.damping * v.abs();
        let f = [0, 1, 2].map(|j| grad[j] * force_intensity - u[j] * damping_intensity);
        let fact1 = -k_abs / (norm * g);
        let fact2 = -k_abs * v / g;
        let fact3 = -k_abs * v / g2;
        let mut m = [[0.0; 3]; 3];
        for a in 0..3 {
            for b in 0..3 {
                m[a][b] = grad[a] * grad[b] * (fact1 + fact3 * inv_r2[b]);
            }
            m[a][a] += fact2 * inv_r2[a];
        }
        Some((f, m))
    }
}

impl Component for InteractionEllipsoidForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let context = cx.scene.context_state(cx.node());
        let mut states = [None, None];
        for (k, (name, want)) in [("object1", Layout::Vec3), ("object2", Layout::Rigid3)].into_iter().enumerate() {
            let comp = cx.link_targets(name).first().copied().or(context);
            let comp = comp.ok_or_else(|| {
                cx.error(format!("no mechanical state for {name}")).hint("set object1=\"@particles\" (Vec3d) and object2=\"@frame\" (Rigid3d)")
            })?;
            let st = cx.scene.state_of(comp).ok_or_else(|| cx.error(format!("{name} is not a mechanical state")))?;
            let l = cx.state_layout(st);
            if l != want {
                return Err(cx
                    .error(format!("{name} is a {} state; this force field needs a {} {name}", l.name(), want.name()))
                    .hint("template Vec3d,Rigid3d: object1 holds the particles, object2 the frame carrying the ellipsoids"));
            }
            states[k] = Some(st);
        }
        self.s1 = states[0];
        self.s2 = states[1];

        let d = cx.data();
        self.stiffness = d.get(Self::STIFFNESS);
        self.damping = d.get(Self::DAMPING);
        self.object2_forces = d.get(Self::OBJECT2_FORCES);
        self.object2_invert = d.get(Self::OBJECT2_INVERT);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        let dof = d.get(Self::OBJECT2_DOF_INDEX);
        let centers: Vec<[f64; 3]> = d.get(Self::CENTER).chunks_exact(3).map(v3).collect();
        let radii: Vec<[f64; 3]> = d.get(Self::VRADIUS).chunks_exact(3).map(v3).collect();
        if dof < 0 {
            return Err(cx.error(format!("object2_dof_index {dof} is negative")));
        }
        self.dof = dof as usize;
        // Missing entries repeat the last given one; no radius at all is the unit sphere.
        let n = centers.len().max(radii.len());
        self.ellipsoids = (0..n)
            .map(|e| {
                let r = radii.get(e).or(radii.last()).copied().unwrap_or([1.0; 3]);
                let center = centers.get(e).or(centers.last()).copied().unwrap_or([0.0; 3]);
                (center, r)
            })
            .map(|(center, r)| Ellipsoid { center, inv_r2: r.map(|rj| 1.0 / (rj * rj)) })
            .collect();
        if let Some(r) = radii.iter().find(|r| r.contains(&0.0)) {
            return Err(cx.error(format!("vradius {r:?} has a zero radius")).hint("each ellipsoid needs three non-zero radii"));
        }
        Ok(())
    }

    /// The frame is read once every state holds its positions.
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s2 = self.s2.ok_or_else(|| cx.error("used before init"))?;
        let (_, q) = self.frame(cx.read_vec(s2, VecId::POSITION)).map_err(|e| cx.error(e.0.message))?;
        self.frame_q = q;
        Ok(())
    }
}

impl ForceField for InteractionEllipsoidForceField {
    fn states(&self) -> settee_core::StateSet {
        self.s1.into_iter().chain(self.s2).collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let j2 = self.second();
        let (cx, q) = self.frame(io.x[j2])?;
        self.frame_q = q;
        self.contacts.clear();
        let (x1, v1) = (io.x[0], io.v.first().copied().unwrap_or(&[]));
        let mut f2 = [0.0; 3];
        for i in 0..x1.len() / 3 {
            let p = inverse_rotate(q, sub(v3(&x1[3 * i..]), cx));
            let u = inverse_rotate(q, v1.get(3 * i..3 * i + 3).map(v3).unwrap_or([0.0; 3]));
            let Some((f_local, m)) = self.contact_force(p, u) else {
                continue;
            };
            let f = quat_rotate(q, f_local);
            for c in 0..3 {
                io.f[0][3 * i + c] += f[c];
                f2[c] -= f[c];
            }
            self.contacts.push(EllipsoidContact { index: i, m });
        }
        if self.object2_forces {
            if let Some(e) = io.f[j2].get_mut(6 * self.dof..6 * self.dof + 6) {
                for c in 0..3 {
                    e[c] += f2[c];
                }
            }
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let j2 = self.second();
        let q = self.frame_q;
        // The frame's translation increment, only with object2_forces; zero when object2 is outside
        // the solver's scope (no vector lent).
        let dx2 = match (self.object2_forces, io.x[j2].get(6 * self.dof..6 * self.dof + 3)) {
            (true, Some(d)) => v3(d),
            _ => [0.0; 3],
        };
        let mut df2 = [0.0; 3];
        for c in &self.contacts {
            let Some(dx1) = io.x[0].get(3 * c.index..3 * c.index + 3) else {
                return Err(SimError::new(format!("contact on particle {} but object1 has {} particles", c.index, io.x[0].len() / 3)));
            };
            let du = inverse_rotate(q, sub(v3(dx1), dx2));
            let m = &c.m;
            let mut df = [0, 1, 2].map(|a| m[a][0] * du[0] + m[a][1] * du[1] + m[a][2] * du[2]);
            for x in &mut df {
                *x *= k_factor;
            }
            let df = quat_rotate(q, df);
            let out = &mut io.f[0][3 * c.index..3 * c.index + 3];
            for k in 0..3 {
                out[k] += df[k];
                df2[k] -= df[k];
            }
        }
        if self.object2_forces {
            if let Some(e) = io.f[j2].get_mut(6 * self.dof..6 * self.dof + 6) {
                for k in 0..3 {
                    e[k] += df2[k];
                }
            }
        }
        Ok(())
    }

    /// SOFA's class has no stiffness matrix (its assembled contribution is missing, with an error
    /// message); refusing is clearer than silently assembling without it.
    fn add_k_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _k_factor: f64) -> SimResult {
        Err(SimError::unsupported("InteractionEllipsoidForceField has no assembled stiffness (SOFA provides none either)")
            .hint("solve with a matrix-free CGLinearSolver (no linear system component)"))
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: f64 = std::f64::consts::FRAC_1_SQRT_2;
    /// Frame of object2: centre (1, 2, 3), a quarter turn about z (local x → world y, local y →
    /// world −x).
    const FRAME: [f64; 7] = [1.0, 2.0, 3.0, 0.0, 0.0, S, S];
    /// Particles at local (1, 0, 0) (inside ellipsoid 0), (0, 10.5, 0) (inside ellipsoid 1) and
    /// (5, 0, 0) (outside both), in world coordinates.
    const X1: [f64; 9] = [1.0, 3.0, 3.0, -9.5, 2.0, 3.0, 1.0, 7.0, 3.0];

    fn params() -> MechParams {
        MechParams { dt: 0.01, time: 0.0, gravity: [0.0; 3] }
    }

    /// Ellipsoid 0: centre 0, radii (2, 1, 1); ellipsoid 1: centre (0, 10, 0), unit sphere;
    /// stiffness 1000, damping 5.
    fn field(object2_forces: bool) -> InteractionEllipsoidForceField {
        InteractionEllipsoidForceField {
            s1: Some(StateId::first_in_slot(0)),
            s2: Some(StateId::first_in_slot(1)),
            ellipsoids: vec![Ellipsoid { center: [0.0; 3], inv_r2: [0.25, 1.0, 1.0] }, Ellipsoid { center: [0.0, 10.0, 0.0], inv_r2: [1.0; 3] }],
            stiffness: 1000.0,
            damping: 5.0,
            dof: 0,
            object2_forces,
            object2_invert: false,
            rayleigh_stiffness: 0.0,
            frame_q: [0.0; 4],
            contacts: Vec::new(),
        }
    }

    /// `(f1, f2)` at `x1`, `x2` with velocities `v1` (object2 at rest).
    fn force(ff: &mut InteractionEllipsoidForceField, x1: &[f64], x2: &[f64], v1: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (mut f1, mut f2) = (vec![0.0; x1.len()], vec![0.0; 6]);
        let v2 = [0.0; 6];
        let mut io = ForceIo { f: vec![f1.as_mut_slice(), f2.as_mut_slice()].into(), x: vec![x1, x2].into(), v: vec![v1, &v2].into() };
        ff.add_force(&params(), &mut io).unwrap();
        drop(io);
        (f1, f2)
    }

    fn dforce(ff: &mut InteractionEllipsoidForceField, dx1: &[f64], dx2: &[f64], k: f64) -> (Vec<f64>, Vec<f64>) {
        let (mut df1, mut df2) = (vec![0.0; dx1.len()], vec![0.0; 6]);
        let mut io = ForceIo { f: vec![df1.as_mut_slice(), df2.as_mut_slice()].into(), x: vec![dx1, dx2].into(), v: Vec::new().into() };
        ff.add_dforce(&params(), &mut io, k, 0.0).unwrap();
        drop(io);
        (df1, df2)
    }

    fn close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!((x - y).abs() <= tol, "index {i}: {x} vs {y} ({a:?} vs {b:?})");
        }
    }

    /// Particle 0: n2 = 1/4, ℓ = 1/2, v = −1/2, grad = (1/4, 0, 0), g = 1/4: the penalty is
    /// grad·(−1000·v/g) = (500, 0, 0) locally, (0, 500, 0) in the world; its velocity (0, 0, 2)
    /// (local (0, 0, 2)) adds −u·(5·|v|) = (0, 0, −5). Particle 1 (unit sphere, dp = (0, 1/2, 0)):
    /// (0, 500, 0) locally, (−500, 0, 0) in the world. Particle 2 is outside. The frame receives the
    /// opposite of the sum on its translation, and no torque.
    #[test]
    fn forces_match_hand_values() {
        let mut ff = field(true);
        let v1 = [0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let (f1, f2) = force(&mut ff, &X1, &FRAME, &v1);
        close(&f1, &[0.0, 500.0, -5.0, -500.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-10);
        close(&f2, &[500.0, -500.0, 5.0, 0.0, 0.0, 0.0], 1e-10);
        assert_eq!(ff.contacts().iter().map(|c| c.index).collect::<Vec<_>>(), [0, 1]);

        // Without object2_forces the frame gets nothing.
        let mut ff = field(false);
        let (f1b, f2b) = force(&mut ff, &X1, &FRAME, &v1);
        assert_eq!(f1b, f1);
        assert_eq!(f2b, [0.0; 6]);

        // The same frame given inverted with object2_invert: (−q⁻¹·c, q⁻¹) = ((−2, 1, −3), −90° about z).
        let mut ff = field(true);
        ff.object2_invert = true;
        let (f1c, f2c) = force(&mut ff, &X1, &[-2.0, 1.0, -3.0, 0.0, 0.0, -S, S], &v1);
        close(&f1c, &f1, 1e-9);
        close(&f2c, &f2, 1e-9);

        // A negative stiffness keeps particles inside: only particle 2 (outside) is pulled, towards
        // ellipsoid 0: local (5, 0, 0), n2 = 25/4, v = 3/2, grad = (5/4, 0, 0) → (−1000·3/2, 0, 0),
        // world (0, −1500, 0).
        let mut ff = field(true);
        ff.stiffness = -1000.0;
        let (f1d, _) = force(&mut ff, &X1, &FRAME, &[0.0; 9]);
        close(&f1d, &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1500.0, 0.0], 1e-9);
    }

    /// SOFA's contact matrices, derived by hand: particle 0, with f1 = −1000/(ℓ·g) = −8000,
    /// f2 = −1000·v/g = 2000, f3 = −1000·v/g² = 8000: m = diag(1/16·(−8000 + 8000/4) + 2000/4,
    /// 2000, 2000) = diag(125, 2000, 2000); particle 1 (f1 = −4000, f2 = 1000, f3 = 2000):
    /// diag(1000, 1/4·(−4000 + 2000) + 1000, 1000) = diag(1000, 500, 1000). `addDForce` rotates
    /// `dx1 − dx2.center` into the frame, applies `kFactor·m`, rotates back; the frame gets the
    /// opposite.
    #[test]
    fn dforce_matches_hand_values() {
        let mut ff = field(true);
        force(&mut ff, &X1, &FRAME, &[0.0; 9]);
        let m: Vec<[[f64; 3]; 3]> = ff.contacts().iter().map(|c| c.m).collect();
        let diag = |d: [f64; 3]| [[d[0], 0.0, 0.0], [0.0, d[1], 0.0], [0.0, 0.0, d[2]]];
        for (a, b) in m.iter().zip([diag([125.0, 2000.0, 2000.0]), diag([1000.0, 500.0, 1000.0])]) {
            close(a.as_flattened(), b.as_flattened(), 1e-9);
        }
        // dx1[0] = (1, 0, 0), dx2 translation (0, 1, 0): du0 = (1, −1, 0) → local (−1, −1, 0) →
        // m·du = (−125, −2000, 0) → world (2000, −125, 0); du1 = (0, −1, 0) → local (−1, 0, 0) →
        // (−1000, 0, 0) → world (0, −1000, 0). kFactor 2 doubles everything.
        let dx1 = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let dx2 = [0.0, 1.0, 0.0, 0.3, 0.2, 0.1];
        let (df1, df2) = dforce(&mut ff, &dx1, &dx2, 2.0);
        close(&df1, &[4000.0, -250.0, 0.0, 0.0, -2000.0, 0.0, 0.0, 0.0, 0.0], 1e-9);
        close(&df2, &[-4000.0, 2250.0, 0.0, 0.0, 0.0, 0.0], 1e-9);

        // object2 outside the solver's scope: no displacement lent for it counts as zero.
        // du0 = (1, 0, 0) → local (0, −1, 0) → (0, −2000, 0) → world (2000, 0, 0).
        let (df1, df2) = dforce(&mut ff, &dx1, &[], 1.0);
        close(&df1, &[2000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-9);
        close(&df2, &[-2000.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-9);
        // Without object2_forces, dx2 is ignored and the frame gets nothing.
        let mut ff = field(false);
        force(&mut ff, &X1, &FRAME, &[0.0; 9]);
        let (df1, df2) = dforce(&mut ff, &dx1, &dx2, 1.0);
        close(&df1, &[2000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-9);
        assert_eq!(df2, [0.0; 6]);
    }

    /// Central differences of addForce (particles at rest, so damping plays no part) against
    /// addDForce. SOFA's matrix differs from the exact Jacobian by its `f3` term (the derivative of
    /// `1/|grad|` is `+|k|·v/g³·grad_b/r_b²`, SOFA uses `−|k|·v/g²`), which only acts along
    /// `w = grad/r²`: along directions with `w·du = 0` both agree, and along `w` the gap is the
    /// hand-derived one (particle 0 along its normal: SOFA 125, exact −500; particle 1: SOFA 500,
    /// exact −1000). A common translation of the particles and the frame changes nothing.
    #[test]
    fn dforce_against_finite_differences() {
        let eps = 1e-6;
        let fd = |dx1: &[f64], dx2: &[f64]| {
            let mut ff = field(true);
            let shifted = |sign: f64, ff: &mut InteractionEllipsoidForceField| {
                let x1: Vec<f64> = X1.iter().zip(dx1).map(|(x, d)| x + sign * eps * d).collect();
                let mut x2 = FRAME;
                for c in 0..3 {
                    x2[c] += sign * eps * dx2[c];
                }
                force(ff, &x1, &x2, &[0.0; 9])
            };
            let (p1, p2) = shifted(1.0, &mut ff);
            let (m1, m2) = shifted(-1.0, &mut ff);
            let d = |p: &[f64], m: &[f64]| p.iter().zip(m).map(|(a, b)| (a - b) / (2.0 * eps)).collect::<Vec<f64>>();
            (d(&p1, &m1), d(&p2, &m2))
        };
        let analytic = |dx1: &[f64], dx2: &[f64]| {
            let mut ff = field(true);
            force(&mut ff, &X1, &FRAME, &[0.0; 9]);
            dforce(&mut ff, dx1, dx2, 1.0)
        };
        // Tangential directions: particle 0's normal is world y, particle 1's is world −x.
        let dx1 = [0.3, 0.0, -0.7, 0.0, 0.4, 0.9, 1.0, 1.0, 1.0];
        let zero = [0.0; 6];
        let (a1, a2) = analytic(&dx1, &zero);
        let (n1, n2) = fd(&dx1, &zero);
        assert!(a1.iter().any(|v| v.abs() > 100.0), "degenerate test: {a1:?}");
        close(&a1, &n1, 1e-5);
        close(&a2, &n2, 1e-5);
        // Along the normals: SOFA's matrix, not the derivative.
        let dx1 = [0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let (a1, _) = analytic(&dx1, &zero);
        let (n1, _) = fd(&dx1, &zero);
        close(&a1, &[0.0, 125.0, 0.0, -500.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-9);
        close(&n1, &[0.0, -500.0, 0.0, 1000.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-4);
        // Rigid translation of everything.
        let t = [0.2, -0.5, 0.7];
        let dx1: Vec<f64> = t.repeat(3);
        let dx2 = [t[0], t[1], t[2], 0.0, 0.0, 0.0];
        let (a1, a2) = analytic(&dx1, &dx2);
        let (n1, _) = fd(&dx1, &dx2);
        assert!(a1.iter().chain(&a2).all(|v| v.abs() < 1e-9), "{a1:?} {a2:?}");
        assert!(n1.iter().all(|v| v.abs() < 1e-4), "{n1:?}");
    }

    /// Through the factory: links to a frame in a sibling node, the Data (several ellipsoids with
    /// missing radii repeating the last one), and a solver scope holding only the particles (the
    /// frame's displacement is then absent and counts as zero).
    #[test]
    fn scene_with_the_frame_in_another_subtree() {
        use crate::test_support::*;
        use settee_core::mechanics::{self as mech, MechScope};
        use settee_core::simulation::init_root;
        use settee_core::Scene;

        let f = factory();
        let mut s = Scene::new("root");
        let a = s.add_node(Scene::ROOT, "Obstacle");
        let b = s.add_node(Scene::ROOT, "Cloth");
        add(
            &mut s,
            &f,
            a,
            "MechanicalObject",
            &[("template", "Rigid3d"), ("name", "frame"), ("position", "1 2 3 0 0 0.70710678118654757 0.70710678118654757")],
        );
        add(&mut s, &f, b, "MechanicalObject", &[("name", "particles"), ("position", "1 3 3  -9.5 2 3  1 7 3")]);
        let c = add(
            &mut s,
            &f,
            b,
            "InteractionEllipsoidForceField",
            &[
                ("template", "Vec3,Rigid3"),
                ("object1", "@particles"),
                ("object2", "@../Obstacle/frame"),
                ("stiffness", "1000"),
                ("damping", "5"),
                ("center", "0 0 0  0 10 0"),
                ("vradius", "2 1 1"),
            ],
        );
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(c).template, "Vec3d,Rigid3d");
        let scope = MechScope::build(&s, b);
        let f1 = forces(&mut s, &scope);
        // Ellipsoid 1 has radii (2, 1, 1) too: particle 1 at local dp = (0, 1/2, 0) gets
        // n2 = 1/4 as before, so the same force.
        close(&f1, &[0.0, 500.0, 0.0, -500.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-9);
        let ff = s.obj(c).as_any().downcast_ref::<InteractionEllipsoidForceField>().unwrap();
        assert_eq!(ff.ellipsoid_count(), 2);
        // A temporary vector of the cloth's solver: the frame holds none.
        let dx = mech::alloc_deriv(&mut s, &scope);
        mech::scatter(&mut s, &scope, dx, &[0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        let df = mech::alloc_deriv(&mut s, &scope);
        mech::add_mbkdx(&mut s, &scope, df, dx, settee_core::Mbk { m: 0.0, b: 0.0, k: 1.0 }, true).unwrap();
        let mut out = Vec::new();
        mech::gather(&s, &scope, df, &mut out);
        // Particle 1 now sits in a (2, 1, 1) ellipsoid along its local y, with grad = (0, 1/2, 0):
        // the same 500 along the normal as in the unit sphere. object2_forces is on, but the frame
        // holds no `dx`: it counts as zero.
        close(&out, &[0.0, 125.0, 0.0, -500.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-9);
    }

    #[test]
    fn bad_input_is_an_error() {
        use crate::test_support::*;
        use settee_core::simulation::init_root;
        use settee_core::Scene;

        let f = factory();
        let run = |attrs: &[(&str, &str)]| {
            let mut s = Scene::new("root");
            add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("name", "frame"), ("position", "0 0 0 0 0 0 1")]);
            add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("name", "particles"), ("position", "1 0 0")]);
            let mut a = vec![("template", "Vec3d,Rigid3d"), ("object1", "@particles"), ("object2", "@frame")];
            a.extend_from_slice(attrs);
            add(&mut s, &f, Scene::ROOT, "InteractionEllipsoidForceField", &a);
            init_root(&mut s, &f).err().map(|e| e.to_string())
        };
        assert!(run(&[("vradius", "1 1 1")]).is_none());
        assert!(run(&[("object2_dof_index", "1")]).expect("an error").contains("beyond"));
        assert!(run(&[("vradius", "1 0 1")]).expect("an error").contains("zero radius"));
        assert!(run(&[("object2_dof_index", "-1")]).expect("an error").contains("negative"));
    }
}
