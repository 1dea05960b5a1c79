//! `ConicalForceField`: a penalty cone (apex `coneCenter`, axis and length `coneHeight`,
//! half-angle `coneAngle` in degrees) holding DOFs inside it (SOFA's
//! `MechanicalLoad/ConicalForceField.inl`).
//!
//! A DOF outside the cone, with `c = x − apex`:
//! * beyond the cone's length (`|c| > |height|`): pulled back towards the apex,
//!   `c·(−k·d/|c|) + v·(c_d·d)` with `d = |c| − |height|` (damping on the full velocity);
//! * else, on the cone's side (`c·axis > 0`): pushed towards the point of the cone's surface
//!   obtained by rotating `c` onto it (about `axis × c`) and projecting, along the unit direction
//!   `u` to it, `u·(k·d) − u·(c_d·(u·v))`;
//! * else (behind the apex): pulled to the apex the same way, `u = −c/|c|`, `d = |c|`.
//!
//! Each is a contact with normal `n` (`c/|c|`, `u`); `addDForce` and the matrix use `−k·n·nᵀ`.

use settee_core::component::ForceField;
use settee_core::math::{at, cross, dot, norm, scale, sub};
use settee_core::role::MechanicalState;
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// A contact of the last `addForce`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConeContact {
    pub index: usize,
    pub normal: [f64; 3],
}

/// Penalty forces holding DOFs inside a cone.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// cone center
        coneCenter: Fixed(3) = "0 0 0",
        /// cone height
        coneHeight: Fixed(3) = "0 0 0",
        /// cone angle
        coneAngle: Real = "10",
        /// force stiffness
        stiffness: Real = "500",
        /// force damping
        damping: Real = "5",
        /// cone color (rendering only)
        color: Fixed(4) = "0 0 1 1",
        /// Rayleigh damping coefficient related to stiffness
        rayleighStiffness: Real = "0",
    },
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct ConicalForceField {
    state: Option<StateId>,
    center: [f64; 3],
    height: [f64; 3],
    angle: f64,
    stiffness: f64,
    damping: f64,
    contacts: Vec<ConeContact>,
    rayleigh_stiffness: f64,
}

impl ConicalForceField {
    /// The contacts of the last `addForce`.
    pub fn contacts(&self) -> &[ConeContact] {
        &self.contacts
    }

    /// SOFA's `isIn`: within the cone's length and half-angle.
    fn is_in(&self, p: [f64; 3]) -> bool {
        let h = norm(self.height);
        let c = sub(p, self.center);
        let dist = norm(c);
        if dist > h {
            return false;
        }
        (dot(c, self.height) / (h * dist)).acos() * 180.0 / std::f64::consts::PI <= self.angle
    }
}

/// `v` rotated by `angle` about the unit `axis` (SOFA's `Quat(axis, angle).rotate(v)`).
fn rotate(axis: [f64; 3], angle: f64, v: [f64; 3]) -> [f64; 3] {
    let (s, c) = ((angle / 2.0).sin(), (angle / 2.0).cos());
    settee_core::graph::types::quat_rotate([axis[0] * s, axis[1] * s, axis[2] * s, c], v)
}

impl Component for ConicalForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::state_of_template(cx, Layout::Vec3)?;
        let d = cx.data();
        let c = d.get(Self::CONE_CENTER);
        self.center = [c[0], c[1], c[2]];
        let h = d.get(Self::CONE_HEIGHT);
        self.height = [h[0], h[1], h[2]];
        self.angle = d.get(Self::CONE_ANGLE);
        self.stiffness = d.get(Self::STIFFNESS);
        self.damping = d.get(Self::DAMPING);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        if norm(self.height) == 0.0 {
            return Err(cx.error("coneHeight is zero: the cone has no axis").hint("coneHeight is the vector from the apex to the base's center"));
        }
        self.state = Some(s);
        Ok(())
    }
}

impl ForceField for ConicalForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        let v: &[f64] = io.v.first().copied().unwrap_or(&[]);
        if v.len() < x.len() {
            return Err(SimError::new(format!("ConicalForceField: {} velocities for {} positions", v.len() / 3, x.len() / 3)));
        }
        let f = &mut io.f[0];
        self.contacts.clear();
        let h = norm(self.height);
        let n = {
            let l = norm(self.height);
            [self.height[0] / l, self.height[1] / l, self.height[2] / l]
        };
        let (k, kd) = (self.stiffness, self.damping);
        for i in 0..x.len() / 3 {
            let p = at(x, i);
            if self.is_in(p) {
                continue;
            }
            let vi = at(v, i);
            let cp = sub(p, self.center);
            let cpn = norm(cp);
            let (force, normal) = if cpn > h {
                let d = cpn - h;
                let push = scale(cp, -k * d / cpn);
                let drag = scale(vi, -kd * d);
                (sub(push, drag), [cp[0] / cpn, cp[1] / cpn, cp[2] / cpn])
            } else {
                let (d, dir) = if dot(cp, n) > 0.0 {
                    let ncp = [cp[0] / cpn, cp[1] / cpn, cp[2] / cpn];
                    let alpha = dot(ncp, n).acos() - self.angle * std::f64::consts::PI / 180.0;
                    let t = cross(n, cp);
                    let tn = norm(t);
                    let t = [t[0] / tn, t[1] / tn, t[2] / tn];
                    let on_side = settee_core::math::normalized(rotate(t, -alpha, cp));
                    let surface = scale(on_side, dot(on_side, cp));
                    let pp = sub(surface, cp);
                    let d = norm(pp);
                    (d, [pp[0] / d, pp[1] / d, pp[2] / d])
                } else {
                    (cpn, [-cp[0] / cpn, -cp[1] / cpn, -cp[2] / cpn])
                };
                let mut force = scale(dir, k * d);
                let damp = scale(dir, kd * -dot(dir, vi));
                for c in 0..3 {
                    force[c] += damp[c];
                }
                (force, dir)
            };
            for c in 0..3 {
                f[3 * i + c] += force[c];
            }
            self.contacts.push(ConeContact { index: i, normal });
        }
        Ok(())
    }

    /// `df += −k·n·(n·du)·kFactor` per contact.
    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let dx = io.x[0];
        let df = &mut io.f[0];
        for c in &self.contacts {
            if 3 * c.index + 3 > dx.len() {
                return Err(SimError::new(format!("ConicalForceField: contact DOF {} is beyond the state's size", c.index)));
            }
            let d = scale(scale(c.normal, dot(at(dx, c.index), c.normal)), -self.stiffness);
            for k in 0..3 {
                df[3 * c.index + k] += d[k] * k_factor;
            }
        }
        Ok(())
    }

    /// `−k·n·nᵀ` per contact, times `kFactor`.
    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("ConicalForceField used before init"))?;
        for c in &self.contacts {
            for l in 0..3 {
                for m in 0..3 {
                    acc.add(s, 3 * c.index + l, s, 3 * c.index + m, -self.stiffness * c.normal[l] * c.normal[m] * k_factor);
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

    use super::ConicalForceField;
    use crate::test_support::*;

    /// Cone with apex at the origin, axis +y of length 10, half-angle 45°, k = 100, damping 2.
    /// Point 0 inside: no force. Point 1 beyond the base (|c| = 12): pulled back by 100·2 towards
    /// the apex, plus damping 2·2·v. Point 2 at (3, 1, 0) outside the side: the closest point of
    /// the side line y = x is (2, 2, 0), at distance √2 along (−1, 1)/√2. Point 3 behind the apex
    /// at (0, −1, 0): pulled to the apex by 100·1.
    #[test]
    fn outside_points_are_pushed_back_into_the_cone() {
        let f = factory();
        let mut s = Scene::new("root");
        add(
            &mut s,
            &f,
            Scene::ROOT,
            "MechanicalObject",
            &[("position", "0.5 3 0  0 12 0  3 1 0  0 -1 0"), ("velocity", "1 1 1  0 1 0  1 0 0  0 0 0")],
        );
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "ConicalForceField",
            &[("coneHeight", "0 10 0"), ("coneAngle", "45"), ("stiffness", "100"), ("damping", "2")],
        );
        init_root(&mut s, &f).unwrap();
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        let r = 0.5f64.sqrt();
        // point 2: 100·√2 along (−r, r), damping −2·(u·v)·u with u·v = −r
        let side = [-100.0 * 2f64.sqrt() * r - 2.0 * r * r, 100.0 * 2f64.sqrt() * r + 2.0 * r * r, 0.0];
        let expected = [0.0, 0.0, 0.0, 0.0, -200.0 + 4.0, 0.0, side[0], side[1], side[2], 0.0, 100.0, 0.0];
        assert_close(&fv, &expected, 1e-10);
        let ff = s.get::<ConicalForceField>(c).unwrap();
        assert_eq!(ff.contacts().iter().map(|c| c.index).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_close(&ff.contacts()[1].normal, &[-r, r, 0.0], 1e-12);
        let dx = random_vec(12, 5);
        let df = dforce_mbk(&mut s, &scope, &dx, 1.5, 0.0);
        let m = assembled(&mut s, &scope, 1.5, 0.0);
        assert_close(&mul(&m, &dx), &df, 1e-12);
        // along the normal of contact 2 the stiffness is −k; across it, none
        assert_close(&dforce_mbk(&mut s, &scope, &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], 1.0, 0.0), &[0.0; 12], 1e-15);
    }
}
