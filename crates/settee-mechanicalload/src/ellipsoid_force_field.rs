//! `EllipsoidForceField`: a penalty ellipsoid keeping DOFs out of it (positive stiffness) or
//! inside it (negative stiffness) (SOFA's `MechanicalLoad/EllipsoidForceField.inl`).
//!
//! With `r` the radii and `g = ((x − c)ᵢ/rᵢ²)ᵢ` the gradient of `½·Σ((x − c)ᵢ/rᵢ)²`, a DOF whose
//! normalised squared distance `s = Σ((x − c)ᵢ/rᵢ)²` is on the wrong side (`(s − 1)·k < 0`)
//! receives `g·(−|k|·v/|g|) − v_dof·(damping·|v|)` with `v = √s − 1`, and becomes a contact whose
//! 3×3 stiffness is SOFA's:
//! `m = g·gᵀ·(−|k|/(√s·|g|) + (−|k|·v/|g|²)·diag(1/r²)) + diag((−|k|·v/|g|)/r²)`
//! (the columns of the first term scaled by `1/r_j²`). `addDForce` applies `kFactor·m`; the
//! assembled matrix adds `m`. No damping matrix, no potential energy (as SOFA).

use settee_core::component::ForceField;
use settee_core::math::at;
use settee_core::role::MechanicalState;
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

// A contact: the DOF and its 3×3 stiffness, as for the interaction ellipsoid.
use crate::interaction_ellipsoid_force_field::EllipsoidContact;

/// Penalty forces keeping DOFs on one side of an ellipsoid.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// ellipsoid center
        center: Fixed(3) = "0 0 0",
        /// ellipsoid radius (one per axis)
        vradius: Fixed(3) = "0 0 0",
        /// force stiffness (positive to repulse outward, negative inward)
        stiffness: Real = "500",
        /// force damping
        damping: Real = "5",
        /// ellipsoid color (rendering only)
        color: Fixed(4) = "0 0.5 1 1",
        /// Rayleigh damping coefficient related to stiffness
        rayleighStiffness: Real = "0",
    },
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct EllipsoidForceField {
    state: Option<StateId>,
    center: [f64; 3],
    radius: [f64; 3],
    stiffness: f64,
    damping: f64,
    contacts: Vec<EllipsoidContact>,
    rayleigh_stiffness: f64,
}

impl EllipsoidForceField {
    /// The contacts of the last `addForce`.
    pub fn contacts(&self) -> &[EllipsoidContact] {
        &self.contacts
    }
}

impl Component for EllipsoidForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::state_of_template(cx, Layout::Vec3)?;
        let d = cx.data();
        let c = d.get(Self::CENTER);
        let r = d.get(Self::VRADIUS);
        self.center = [c[0], c[1], c[2]];
        self.radius = [r[0], r[1], r[2]];
        self.stiffness = d.get(Self::STIFFNESS);
        self.damping = d.get(Self::DAMPING);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        self.state = Some(s);
        Ok(())
    }
}

impl ForceField for EllipsoidForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        let v: &[f64] = io.v.first().copied().unwrap_or(&[]);
        if v.len() < x.len() {
            return Err(SimError::new(format!("EllipsoidForceField: {} velocities for {} positions", v.len() / 3, x.len() / 3)));
        }
        let f = &mut io.f[0];
        self.contacts.clear();
        let k_abs = self.stiffness.abs();
        let inv_r2 = self.radius.map(|r| 1.0 / (r * r));
        for i in 0..x.len() / 3 {
            let p = at(x, i);
            let dp = [p[0] - self.center[0], p[1] - self.center[1], p[2] - self.center[2]];
            let s = dp[0] * dp[0] * inv_r2[0] + dp[1] * dp[1] * inv_r2[1] + dp[2] * dp[2] * inv_r2[2];
            if (s - 1.0) * self.stiffness >= 0.0 || s.is_nan() {
                continue;
            }
            let norm = s.sqrt();
            let depth = norm - 1.0;
            let grad = [dp[0] * inv_r2[0], dp[1] * inv_r2[1], dp[2] * inv_r2[2]];
            let gnorm2 = grad[0] * grad[0] + grad[1] * grad[1] + grad[2] * grad[2];
            let gnorm = gnorm2.sqrt();
            let intensity = -k_abs * depth / gnorm;
            let damping = self.damping * depth.abs();
            let vi = at(v, i);
            for c in 0..3 {
                f[3 * i + c] += grad[c] * intensity - vi[c] * damping;
            }
            let fact1 = -k_abs / (norm * gnorm);
            let fact2 = -k_abs * depth / gnorm;
            let fact3 = -k_abs * depth / gnorm2;
            let mut m = [[0.0; 3]; 3];
            for (ci, row) in m.iter_mut().enumerate() {
                for (cj, e) in row.iter_mut().enumerate() {
                    *e = grad[ci] * grad[cj] * (fact1 + fact3 * inv_r2[cj]);
                }
                row[ci] += fact2 * inv_r2[ci];
            }
            self.contacts.push(EllipsoidContact { index: i, m });
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let dx = io.x[0];
        let df = &mut io.f[0];
        for c in &self.contacts {
            if 3 * c.index + 3 > dx.len() {
                return Err(SimError::new(format!("EllipsoidForceField: contact DOF {} is beyond the state's size", c.index)));
            }
            let du = at(dx, c.index);
            for (k, row) in c.m.iter().enumerate() {
                df[3 * c.index + k] += (row[0] * du[0] + row[1] * du[1] + row[2] * du[2]) * k_factor;
            }
        }
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("EllipsoidForceField used before init"))?;
        for c in &self.contacts {
            for (l, row) in c.m.iter().enumerate() {
                for (k, &e) in row.iter().enumerate() {
                    acc.add(s, 3 * c.index + l, s, 3 * c.index + k, e * k_factor);
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
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    use super::EllipsoidForceField;
    use crate::test_support::*;

    fn scene(mo: &[(&str, &str)], ff: &[(&str, &str)]) -> (Scene, settee_core::ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", mo);
        let c = add(&mut s, &f, Scene::ROOT, "EllipsoidForceField", ff);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    /// Ellipsoid of centre (1, 2, 3), radii (2, 1, 4), k = 100, damping 4. Point 0 at
    /// (1 + 1, 2, 3): s = 1/4, so √s − 1 = −1/2, g = (1/4, 0, 0), |g| = 1/4: pushed along +x by
    /// 100·(1/2)/(1/4)·(1/4) = 50, minus 4·(1/2)·v. Point 1 at (1, 2, 3 + 2): s = 1/4, pushed
    /// along +z by 50 (g = (0, 0, 1/8)). Point 2 (s = 4) is outside: no force.
    #[test]
    fn points_inside_are_pushed_along_the_gradient() {
        let (mut s, c) = scene(
            &[("position", "2 2 3  1 2 5  5 2 3"), ("velocity", "1 -2 0.5  0 0 0  1 1 1")],
            &[("center", "1 2 3"), ("vradius", "2 1 4"), ("stiffness", "100"), ("damping", "4")],
        );
        let scope = MechScope::build(&s, Scene::ROOT);
        let f = forces(&mut s, &scope);
        assert_close(&f, &[50.0 - 2.0, 4.0, -1.0, 0.0, 0.0, 50.0, 0.0, 0.0, 0.0], 1e-12);
        assert_eq!(s.get::<EllipsoidForceField>(c).unwrap().contacts().len(), 2);
        // A negative stiffness keeps points inside: only point 2 is acted on, pulled back.
        let (mut s, _) =
            scene(&[("position", "2 2 3  5 2 3")], &[("center", "1 2 3"), ("vradius", "2 1 4"), ("stiffness", "-100"), ("damping", "0")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let f = forces(&mut s, &scope);
        // s = 4: v = 1, g = (1, 0, 0): force −100·1/1·1 = −100 along x.
        assert_close(&f, &[0.0, 0.0, 0.0, -100.0, 0.0, 0.0], 1e-12);
    }

    /// Across the gradient SOFA's contact matrix is the Jacobian of the elastic force (finite
    /// differences match `addDForce` and the assembled matrix). Along it, SOFA's third term
    /// (`−|k|·v/|g|²`, exact would be `+|k|·v/|g|³`) is reproduced: at (2, 2, 3) in the
    /// ellipsoid of radii (2, 1, 4) centred at (1, 2, 3), the radial stiffness is
    /// g₀²·(fact1 + fact3/r₀²) + fact2/r₀² = (1/16)·(−800 + 800/4) + 200/4 = 12.5, where the exact
    /// derivative of f_x = −100·((x − 1)/2 − 1) is −50.
    #[test]
    fn stiffness_across_the_gradient_is_exact_and_along_it_is_sofa_s() {
        let (mut s, _) = scene(&[("position", "2 2 3")], &[("center", "1 2 3"), ("vradius", "2 1 4"), ("stiffness", "100"), ("damping", "0")]);
        check_derivatives(&mut s, &[0.0, 0.3, -0.7], 1e-6, 1e-6);
        let scope = MechScope::build(&s, Scene::ROOT);
        forces(&mut s, &scope);
        assert_close(&dforce(&mut s, &scope, &[1.0, 0.0, 0.0], 1.0), &[12.5, 0.0, 0.0], 1e-12);
    }
}
