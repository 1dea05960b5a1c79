//! `SphereForceField`: a penalty sphere pushing DOFs out of it (SOFA's
//! `MechanicalLoad/SphereForceField.inl`).
//!
//! Each DOF `i` of the range with `|x_i − c| < r` (every DOF when `bilateral`) receives, with
//! `d = |x_i − c| − r < 0`, the force `(x_i − c)·(−k·d/|x_i − c|) + v_i·(c_d·d)` (the damping is
//! proportional to the penetration, on the full velocity) and is recorded as a contact with the
//! normal `n = (x_i − c)/|x_i − c|` and the factor `φ = r/|x_i − c|`. The stiffness of a contact
//! is `−k·(φ·n·nᵀ + (1 − φ)·I)`, for `addDForce` and the matrix alike. No damping matrix.

use settee_core::component::ForceField;
use settee_core::math::{at, dot, norm2, scale, sub};
use settee_core::role::MechanicalState;
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// A contact of the last `addForce`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphereContact {
    pub index: usize,
    pub normal: [f64; 3],
    /// `r / |x − c|`.
    pub fact: f64,
}

/// Penalty forces pushing DOFs out of a sphere.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// sphere center
        center: Fixed(3) = "0 0 0",
        /// sphere radius
        radius: Real = "1",
        /// force stiffness
        stiffness: Real = "500",
        /// force damping
        damping: Real = "5",
        /// sphere color (rendering only)
        color: Fixed(4) = "0 0 1 1",
        /// optional range [first last] of the DOFs acted on (negative: unbounded)
        localRange: Fixed(2) = "-1 -1",
        /// if true the sphere force field is applied on both sides
        bilateral: Bool = "false",
        /// Rayleigh damping coefficient related to stiffness
        rayleighStiffness: Real = "0",
    },
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct SphereForceField {
    state: Option<StateId>,
    center: [f64; 3],
    radius: f64,
    stiffness: f64,
    damping: f64,
    bilateral: bool,
    range: [i64; 2],
    contacts: Vec<SphereContact>,
    rayleigh_stiffness: f64,
}

impl SphereForceField {
    /// The contacts of the last `addForce`.
    pub fn contacts(&self) -> &[SphereContact] {
        &self.contacts
    }

    /// `−k·kFactor·(φ·n·nᵀ + (1 − φ)·I)` applied to `du`, in SOFA's order.
    fn contact_dforce(&self, c: &SphereContact, du: [f64; 3], k_factor: f64) -> [f64; 3] {
        let fact = -self.stiffness * k_factor;
        let along = scale(c.normal, dot(du, c.normal) * c.fact);
        let across = scale(du, 1.0 - c.fact);
        [(along[0] + across[0]) * fact, (along[1] + across[1]) * fact, (along[2] + across[2]) * fact]
    }
}

impl Component for SphereForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::state_of_template(cx, Layout::Vec3)?;
        let d = cx.data();
        let c = d.get(Self::CENTER);
        self.center = [c[0], c[1], c[2]];
        self.radius = d.get(Self::RADIUS);
        self.stiffness = d.get(Self::STIFFNESS);
        self.damping = d.get(Self::DAMPING);
        self.bilateral = d.get(Self::BILATERAL);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        let r = d.get(Self::LOCAL_RANGE);
        self.range = [r[0] as i64, r[1] as i64];
        self.state = Some(s);
        Ok(())
    }
}

impl ForceField for SphereForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        let v: &[f64] = io.v.first().copied().unwrap_or(&[]);
        if v.len() < x.len() {
            return Err(SimError::new(format!("SphereForceField: {} velocities for {} positions", v.len() / 3, x.len() / 3)));
        }
        let f = &mut io.f[0];
        self.contacts.clear();
        let n = x.len() / 3;
        let begin = if self.range[0] >= 0 { self.range[0] as usize } else { 0 };
        let end = if self.range[1] >= 0 && (self.range[1] as usize) + 1 < n { self.range[1] as usize + 1 } else { n };
        let r2 = self.radius * self.radius;
        for i in begin..end {
            let dp = sub(at(x, i), self.center);
            let n2 = norm2(dp);
            if !(n2 < r2 || self.bilateral) {
                continue;
            }
            let norm = n2.sqrt();
            let d = norm - self.radius;
            let intensity = -self.stiffness * d;
            let damping_intensity = -self.damping * d;
            let push = scale(dp, intensity / norm);
            let drag = scale(at(v, i), damping_intensity);
            for c in 0..3 {
                f[3 * i + c] += push[c] - drag[c];
            }
            self.contacts.push(SphereContact { index: i, normal: dp.map(|c| c / norm), fact: self.radius / norm });
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let dx = io.x[0];
        let df = &mut io.f[0];
        for c in &self.contacts {
            if 3 * c.index + 3 > dx.len() {
                return Err(SimError::new(format!("SphereForceField: contact DOF {} is beyond the state's size", c.index)));
            }
            let d = self.contact_dforce(c, at(dx, c.index), k_factor);
            for k in 0..3 {
                df[3 * c.index + k] += d[k];
            }
        }
        Ok(())
    }

    /// `(n_l·n_c·φ + δ_lc·(1 − φ))·(−k)` per contact (SOFA's `buildStiffnessMatrix`), times `kFactor`.
    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("SphereForceField used before init"))?;
        for c in &self.contacts {
            for l in 0..3 {
                for k in 0..3 {
                    let diag = if l == k { 1.0 - c.fact } else { 0.0 };
                    let coef = (c.normal[l] * c.normal[k] * c.fact + diag) * -self.stiffness;
                    acc.add(s, 3 * c.index + l, s, 3 * c.index + k, coef * k_factor);
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

    use super::SphereForceField;
    use crate::test_support::*;

    fn scene(mo: &[(&str, &str)], ff: &[(&str, &str)]) -> (Scene, settee_core::ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", mo);
        let c = add(&mut s, &f, Scene::ROOT, "SphereForceField", ff);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    /// Sphere of centre (1, 2, 3), radius 2, k = 100, damping 4. Point 0 at distance 1.5 along
    /// (0.6, 0, 0.8) penetrates by 0.5: force 100·0.5 = 50 outwards plus the damping 4·(−0.5)·v;
    /// point 1 (distance 3) is outside; point 2 outside too but `localRange` would not matter.
    #[test]
    fn penetrating_points_are_pushed_out_radially() {
        let (mut s, c) = scene(
            &[("position", "1.9 2 4.2  4 2 3  1 -1 3"), ("velocity", "1 -2 0.5  1 1 1  0 0 0")],
            &[("center", "1 2 3"), ("radius", "2"), ("stiffness", "100"), ("damping", "4")],
        );
        let scope = MechScope::build(&s, Scene::ROOT);
        let f = forces(&mut s, &scope);
        let n = [0.6, 0.0, 0.8];
        let expected = [50.0 * n[0] - 2.0 * 1.0, 50.0 * n[1] - 2.0 * -2.0, 50.0 * n[2] - 2.0 * 0.5];
        assert_close(&f[..3], &expected, 1e-12);
        assert_eq!(&f[3..], &[0.0; 6]);
        let ff = s.get::<SphereForceField>(c).unwrap();
        assert_eq!(ff.contacts().len(), 1);
        assert!((ff.contacts()[0].fact - 2.0 / 1.5).abs() < 1e-15);
    }

    /// The stiffness is the exact Jacobian of the elastic part (no velocity): finite differences
    /// match `addDForce`, and the assembled matrix is symmetric and equal to it. Radially the
    /// stiffness is −k; tangentially −k·(1 − r/|x − c|) > 0 (the push rotates with the point).
    #[test]
    fn stiffness_matches_finite_differences_and_the_matrix() {
        let (mut s, c) =
            scene(&[("position", "1.9 2 4.2  0.2 1.5 2.8  4 2 3")], &[("center", "1 2 3"), ("radius", "2"), ("stiffness", "100"), ("damping", "0")]);
        let dx = random_vec(9, 5);
        check_derivatives(&mut s, &dx, 1e-6, 1e-7);
        let scope = MechScope::build(&s, Scene::ROOT);
        let radial = [0.6, 0.0, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let df = dforce(&mut s, &scope, &radial, 1.0);
        assert_close(&df, &radial.map(|v| -100.0 * v), 1e-12);
        let tangent = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let df = dforce(&mut s, &scope, &tangent, 1.0);
        let phi = s.get::<SphereForceField>(c).unwrap().contacts()[0].fact;
        assert!((df[1] + 100.0 * (1.0 - phi)).abs() < 1e-12 && df[1] > 0.0, "{df:?}");
    }

    /// `bilateral`: points outside are pulled back to the surface; `localRange` limits the DOFs.
    #[test]
    fn bilateral_and_local_range() {
        let (mut s, _) = scene(&[("position", "4 2 3  1 2 4")], &[("center", "1 2 3"), ("radius", "2"), ("stiffness", "10"), ("bilateral", "true")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let f = forces(&mut s, &scope);
        // Point 0 at distance 3: pulled by 10·1 towards the centre; point 1 at 1: pushed by 10.
        assert_close(&f, &[-10.0, 0.0, 0.0, 0.0, 0.0, 10.0], 1e-12);
        let (mut s, _) =
            scene(&[("position", "1 2 4  1 2 4  1 2 4")], &[("center", "1 2 3"), ("radius", "2"), ("stiffness", "10"), ("localRange", "1 1")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let f = forces(&mut s, &scope);
        assert_close(&f, &[0.0, 0.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0], 1e-12);
    }
}
