//! The Compliant plugin's `RigidMass` (spec compliant §11): a mass and a body-frame principal
//! inertia `(I₁, I₂, I₃)` per rigid frame (the last entry is used for the frames beyond the
//! lists). SOFA's rotational velocities are in world coordinates, so the rotational mass is
//! `R·diag(I)·Rᵀ` with `R` the frame's current orientation. The force is gravity on the
//! linear part, plus, with `inertia_forces`, the explicit gyroscopic torque `−ω × (R·diag(I)·Rᵀ·ω)`.
//!
//! The mass matrix depends on the orientations: they are read from the positions the forces are
//! computed at (each step's `add_force`) and at the start of each step.

use settee_core::component::Mass;
use settee_core::types::quat_rotate;

use crate::common;
use crate::geometry::mat_vec;
use settee_core::{
    component, Component, ComponentId, ForceField, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, Scene, SimError, SimResult, StateId,
    VecId,
};

type M3 = [[f64; 3]; 3];

/// Mass and principal inertia of rigid bodies, the rotational mass R·diag(I)·Rᵀ following each body's orientation.
///
/// The component (named so beside `uniform_mass::RigidMass`, the mass record of UniformMass).
#[component(
    name = "RigidMass", module = "Compliant",
    roles = [Mass, ForceField],
    templates = ["Rigid3d"],
    template_rule = FromState,
    data = {
        /// mass of each rigid body
        mass: Reals,
        /// inertia of each rigid body
        inertia: RealTuples(3),
        /// compute (explicit) inertia forces
        inertia_forces: Bool = "false",
        /// debug drawing of the inertia matrix
        draw: Bool = "false",
        /// Rayleigh damping coefficient related to mass
        rayleighMass: Real = "0",
    },
)]
#[derive(Clone, Default)]
pub struct CompliantRigidMass {
    state: Option<StateId>,
    mass: Vec<f64>,
    inertia: Vec<[f64; 3]>,
    inertia_forces: bool,
    rayleigh_mass: f64,
    /// Per frame: `R·diag(I)·Rᵀ` and its inverse, at the last orientations read.
    rot_mass: Vec<M3>,
    rot_inv: Vec<M3>,
}

impl CompliantRigidMass {
    /// A mass built directly (tests, programmatic use), for frames at the Rigid3 positions `x`.
    pub fn build(state: StateId, mass: Vec<f64>, inertia: Vec<[f64; 3]>, inertia_forces: bool, x: &[f64]) -> SimResult<CompliantRigidMass> {
        check(&mass, &inertia).map_err(SimError::new)?;
        let mut m = CompliantRigidMass { state: Some(state), mass, inertia, inertia_forces, ..Default::default() };
        m.update_orientations(x);
        Ok(m)
    }

    /// The index into `mass`/`inertia` of frame `i` (the last entry repeats).
    fn at(&self, i: usize) -> usize {
        i.min(self.mass.len().saturating_sub(1))
    }

    /// Recomputes the rotational masses for the Rigid3 positions `x`.
    pub fn update_orientations(&mut self, x: &[f64]) {
        let n = x.len() / 7;
        self.rot_mass.clear();
        self.rot_inv.clear();
        for i in 0..n {
            let q = [x[7 * i + 3], x[7 * i + 4], x[7 * i + 5], x[7 * i + 6]];
            let qn = (q.iter().map(|c| c * c).sum::<f64>()).sqrt();
            let q = if qn > 0.0 { q.map(|c| c / qn) } else { [0.0, 0.0, 0.0, 1.0] };
            let axes = [quat_rotate(q, [1.0, 0.0, 0.0]), quat_rotate(q, [0.0, 1.0, 0.0]), quat_rotate(q, [0.0, 0.0, 1.0])];
            let inertia = self.inertia[self.at(i)];
            let (mut m, mut inv) = ([[0.0; 3]; 3], [[0.0; 3]; 3]);
            // R·diag(I)·Rᵀ = Σ_k I_k·a_k·a_kᵀ with a_k the body axes (the columns of R).
            for (k, a) in axes.iter().enumerate() {
                let ik = inertia[k];
                let inv_k = if ik != 0.0 { 1.0 / ik } else { 0.0 };
                for r in 0..3 {
                    for c in 0..3 {
                        m[r][c] += ik * a[r] * a[c];
                        inv[r][c] += inv_k * a[r] * a[c];
                    }
                }
            }
            self.rot_mass.push(m);
            self.rot_inv.push(inv);
        }
    }

    /// The rotational mass `R·diag(I)·Rᵀ` of frame `i`.
    pub fn rotational_mass(&self, i: usize) -> Option<&M3> {
        self.rot_mass.get(i)
    }

    fn frames(&self, len: usize) -> usize {
        (len / 6).min(self.rot_mass.len())
    }
}

/// Masses given, positive; one inertia (three positive values) per mass.
fn check(mass: &[f64], inertia: &[[f64; 3]]) -> Result<(), String> {
    if mass.is_empty() {
        return Err("mass is empty: each rigid body needs a mass".into());
    }
    if let Some((i, m)) = mass.iter().enumerate().find(|(_, m)| !m.is_finite() || **m <= 0.0) {
        return Err(format!("mass[{i}] = {m}: masses must be positive"));
    }
    if inertia.len() < mass.len() {
        return Err(format!("{} masses but {} inertias: each body needs its three principal inertias", mass.len(), inertia.len()));
    }
    if let Some((i, v)) = inertia.iter().enumerate().find(|(_, v)| v.iter().any(|x| !x.is_finite() || *x <= 0.0)) {
        return Err(format!("inertia[{i}] = {v:?}: principal inertias must be positive"));
    }
    Ok(())
}

impl Component for CompliantRigidMass {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        if cx.state_layout(s) != Layout::Rigid3 {
            return Err(cx
                .error(format!("RigidMass needs a Rigid3d state, this one is {}", cx.state_layout(s).name()))
                .hint("use UniformMass for points"));
        }
        self.state = Some(s);
        let d = cx.data();
        self.mass = d.get(Self::MASS).to_vec();
        self.inertia = d.get(Self::INERTIA).chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        self.inertia_forces = d.get(Self::INERTIA_FORCES);
        self.rayleigh_mass = d.get(Self::RAYLEIGH_MASS);
        check(&self.mass, &self.inertia).map_err(|m| {
            cx.error(m).hint("set mass=\"m …\" and inertia=\"I1 I2 I3 …\" (principal inertias in the body frame), one per body; the last ones serve the bodies beyond the lists")
        })?;
        self.inertia.truncate(self.mass.len());
        let x = cx.read_vec(s, VecId::POSITION).to_vec();
        self.update_orientations(&x);
        Ok(())
    }

    fn animate_begin(&mut self, scene: &mut Scene, _me: ComponentId) -> SimResult {
        if let Some(s) = self.state {
            let x = scene.store.get(s).read(VecId::POSITION).to_vec();
            self.update_orientations(&x);
        }
        Ok(())
    }
}

common::mass_force_field!(CompliantRigidMass, |_| 0.0);

impl CompliantRigidMass {
    /// Gravity `m·g` on the linear part; with `inertia_forces`, `−ω × (R·diag(I)·Rᵀ·ω)` on the
    /// angular part.
    fn weight(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
        if let Some(x) = io.x.first() {
            self.update_orientations(x);
        }
        let f = &mut io.f[0];
        let n = self.frames(f.len());
        for i in 0..n {
            let m = self.mass[self.at(i)];
            for c in 0..3 {
                f[6 * i + c] += m * p.gravity[c];
            }
            if self.inertia_forces {
                if let Some(v) = io.v.first() {
                    let w = &v[6 * i + 3..6 * i + 6];
                    let iw = mat_vec(&self.rot_mass[i], w);
                    let t = settee_core::math::cross([w[0], w[1], w[2]], iw);
                    for c in 0..3 {
                        f[6 * i + 3 + c] -= t[c];
                    }
                }
            }
        }
        Ok(())
    }
}

impl Mass for CompliantRigidMass {
    common::mass_items!(is_diagonal: |_| false, separate_gravity: |_| false);

    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        for i in 0..self.frames(res.len().min(dx.len())) {
            let m = self.mass[self.at(i)] * factor;
            let a = mat_vec(&self.rot_mass[i], &dx[6 * i + 3..6 * i + 6]);
            for c in 0..3 {
                res[6 * i + c] += m * dx[6 * i + c];
                res[6 * i + 3 + c] += factor * a[c];
            }
        }
    }

    fn acc_from_f(&self, a: &mut [f64], f: &[f64]) -> SimResult {
        for i in 0..self.frames(a.len().min(f.len())) {
            let m = self.mass[self.at(i)];
            let w = mat_vec(&self.rot_inv[i], &f[6 * i + 3..6 * i + 6]);
            for c in 0..3 {
                a[6 * i + c] = f[6 * i + c] / m;
                a[6 * i + 3 + c] = w[c];
            }
        }
        Ok(())
    }

    fn add_gravity_to_v(&self, v: &mut [f64], g: [f64; 3], dt: f64) {
        common::add_gravity_to_v(v, 6, 3, g, dt);
    }

    fn add_m_to_matrix(&self, acc: &mut MatrixAccumulator, factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("RigidMass used before init"))?;
        for (i, rm) in self.rot_mass.iter().enumerate() {
            let m = self.mass[self.at(i)] * factor;
            for c in 0..3 {
                acc.add(s, 6 * i + c, s, 6 * i + c, m);
            }
            let block: Vec<f64> = rm.iter().flatten().map(|x| x * factor).collect();
            acc.add_block(s, 6 * i + 3, s, 6 * i + 3, 3, 3, &block);
        }
        Ok(())
    }

    /// `½ Σ (m·|v|² + ωᵀ·R·diag(I)·Rᵀ·ω)`.
    fn kinetic_energy(&self, v: &[f64]) -> f64 {
        let mut e = 0.0;
        for i in 0..self.frames(v.len()) {
            let d = &v[6 * i..6 * i + 6];
            let a = mat_vec(&self.rot_mass[i], &d[3..6]);
            e += self.mass[self.at(i)] * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + d[3] * a[0] + d[4] * a[1] + d[5] * a[2];
        }
        0.5 * e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use settee_core::types::quat_from_euler;

    const S: StateId = StateId::first_in_slot(0);

    fn frames() -> Vec<f64> {
        let mut x = Vec::new();
        for (c, a) in [([0.5, 0.0, -1.0], [0.3, -0.8, 1.2]), ([1.0, 2.0, 3.0], [-1.1, 0.4, 0.2]), ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])] {
            x.extend_from_slice(&c);
            x.extend_from_slice(&quat_from_euler(a));
        }
        x
    }

    /// The body axes are the eigenvectors of the rotational mass, with the principal inertias as
    /// eigenvalues; the last mass and inertia serve the frames beyond the lists.
    #[test]
    fn rotational_mass_is_r_diag_i_rt() {
        let x = frames();
        let m = CompliantRigidMass::build(
            S,
            vec![2.0, 15.118914645401],
            vec![[1.0, 2.0, 3.0], [0.0047246608266878, 1.2622718841968, 1.2622718841968]],
            false,
            &x,
        )
        .unwrap();
        for i in 0..3 {
            let q = [x[7 * i + 3], x[7 * i + 4], x[7 * i + 5], x[7 * i + 6]];
            let inertia = if i == 0 { [1.0, 2.0, 3.0] } else { [0.0047246608266878, 1.2622718841968, 1.2622718841968] };
            for (k, e) in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]].iter().enumerate() {
                let a = quat_rotate(q, *e);
                let mut dx = vec![0.0; 18];
                dx[6 * i + 3..6 * i + 6].copy_from_slice(&a);
                dx[6 * i] = 1.0;
                let mut r = vec![0.0; 18];
                m.add_mdx(&mut r, &dx, 2.0);
                let mass = if i == 0 { 2.0 } else { 15.118914645401 };
                assert!((r[6 * i] - 2.0 * mass).abs() < 1e-14);
                for c in 0..3 {
                    assert!((r[6 * i + 3 + c] - 2.0 * inertia[k] * a[c]).abs() < 1e-13, "frame {i} axis {k}");
                }
                // acc_from_f inverts M.
                let mut acc = vec![0.0; 18];
                m.acc_from_f(&mut acc, &r).unwrap();
                for c in 0..6 {
                    assert!((acc[6 * i + c] - 2.0 * dx[6 * i + c]).abs() < 1e-12, "frame {i} axis {k}: {acc:?}");
                }
            }
        }
        // Kinetic energy: ½(m|v|² + Σ I_k (ω·a_k)²).
        let v: Vec<f64> = (0..18).map(|k| (k as f64 * 0.37).sin()).collect();
        let mut expected = 0.0;
        for i in 0..3 {
            let q = [x[7 * i + 3], x[7 * i + 4], x[7 * i + 5], x[7 * i + 6]];
            let (mass, inertia) =
                if i == 0 { (2.0, [1.0, 2.0, 3.0]) } else { (15.118914645401, [0.0047246608266878, 1.2622718841968, 1.2622718841968]) };
            expected += mass * (v[6 * i].powi(2) + v[6 * i + 1].powi(2) + v[6 * i + 2].powi(2));
            for (k, e) in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]].iter().enumerate() {
                let a = quat_rotate(q, *e);
                let wa = a[0] * v[6 * i + 3] + a[1] * v[6 * i + 4] + a[2] * v[6 * i + 5];
                expected += inertia[k] * wa * wa;
            }
        }
        assert!((m.kinetic_energy(&v) - 0.5 * expected).abs() < 1e-12);
    }

    /// Gravity on the linear part only; the gyroscopic torque vanishes for a spin about a
    /// principal axis and is −ω × (I ω) otherwise.
    #[test]
    fn gravity_and_inertia_forces() {
        let x = frames();
        let inertia = [1.0, 2.0, 3.0];
        let mut m = CompliantRigidMass::build(S, vec![4.0], vec![inertia], true, &x).unwrap();
        let q = [x[3], x[4], x[5], x[6]];
        let a2 = quat_rotate(q, [0.0, 0.0, 1.0]);
        let mut v = vec![0.0; 18];
        v[3..6].copy_from_slice(&a2.map(|c| 5.0 * c));
        v[15..18].copy_from_slice(&[1.0, 1.0, 0.0]);
        let mut f = vec![0.0; 18];
        let p = MechParams { dt: 0.01, time: 0.0, gravity: [0.0, -9.81, 0.0] };
        {
            let mut io = ForceIo { f: vec![f.as_mut_slice()].into(), x: vec![x.as_slice()].into(), v: vec![v.as_slice()].into() };
            m.add_force(&p, &mut io).unwrap();
        }
        for i in 0..3 {
            assert_eq!(&f[6 * i..6 * i + 3], &[0.0, -9.81 * 4.0, 0.0]);
        }
        assert!(f[3..6].iter().all(|t| t.abs() < 1e-12), "{f:?}");
        // Frame 2 has the identity orientation: I ω = (1, 2, 0), ω × Iω = (0, 0, 1).
        assert!((f[15]).abs() < 1e-15 && (f[16]).abs() < 1e-15 && (f[17] + 1.0).abs() < 1e-15, "{:?}", &f[15..18]);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let x = frames();
        let e = CompliantRigidMass::build(S, vec![], vec![], false, &x).err().unwrap();
        assert!(e.to_string().contains("mass is empty"), "{e}");
        let e = CompliantRigidMass::build(S, vec![1.0, 2.0], vec![[1.0, 1.0, 1.0]], false, &x).err().unwrap();
        assert!(e.to_string().contains("2 masses but 1 inertias"), "{e}");
        let e = CompliantRigidMass::build(S, vec![1.0], vec![[1.0, 0.0, 1.0]], false, &x).err().unwrap();
        assert!(e.to_string().contains("principal inertias must be positive"), "{e}");
    }
}
