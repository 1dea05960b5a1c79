//! `UnilateralLagrangianConstraint` (lagrangian-constraints spec §5.1,
//! `MODEL/BaseContactLagrangianConstraint.inl`, `MODEL/UnilateralLagrangianConstraint.{inl,cpp}`):
//! contacts with Coulomb friction between two Vec3 states.
//!
//! The contact list is filled by a contact response each step:
//!
//! ```text
//! law.clear_contacts(n);                  // SOFA's clear(reserve)
//! for each detection output i:
//!     law.add_contact(scene, mu, normal, distance, m1, m2, contact_id, local_id)?;
//! ```
//!
//! `add_contact` reads the contact points' current positions (`P = x₂[m2]`, `Q = x₁[m1]`, SOFA's
//! overload without points), [`UnilateralLagrangianConstraint::add_contact_with_points`] takes
//! them explicitly. `normal` points from object 1 to object 2. A contact with `mu > 0` has three
//! rows (normal, two tangents) solved by a friction-cone block with the law's custom tolerance
//! ([`UnilateralLagrangianConstraint::set_custom_tolerance`], the response's `tol`); otherwise
//! one unilateral row. The component can also be declared in a scene (`object1`, `object2`); it
//! then has no contact until code adds some.

use settee_core::constraint::{
    ConstraintBuildIo, ConstraintLaw, ConstraintOrder, ConstraintParams, ConstraintResolution, ContactConstraint, ViolationIo,
};
use settee_core::role::MechanicalState;
use settee_core::{component, Component, InitCtx, Scene, SimError, SimResult, StateId, VecId};

use super::{coord, cross, dot, neg, norm, pair_states, second, sub, v3, LawData, RowWriter, V3};
use crate::resolution::{UnilateralResolution, UnilateralWithFrictionResolution};

/// One contact (SOFA's `BaseContactLagrangianConstraint::Contact`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnilateralContact {
    /// Contact point DOFs in object 1 and object 2.
    pub m1: usize,
    pub m2: usize,
    /// Unit normal from object 1 to object 2, and the tangent basis derived from it.
    pub normal: V3,
    pub t: V3,
    pub s: V3,
    /// Target separation.
    pub contact_distance: f64,
    /// Positions at creation: `P = x₂[m2]`, `Q = x₁[m1]`.
    pub p: V3,
    pub q: V3,
    /// Coulomb coefficient; `mu > 0` gives the two tangential rows.
    pub mu: f64,
    /// Persistent id (the response's `cantor(output id, response id)`).
    pub contact_id: i64,
    /// The detection output id.
    pub local_id: i64,
    /// First row of the contact at the last build.
    pub id: usize,
    /// Normal violation of the last position-violation evaluation.
    pub dfree: f64,
}

impl UnilateralContact {
    pub fn has_tangential_component(&self) -> bool {
        self.mu > 0.0
    }

    fn rows(&self) -> usize {
        if self.has_tangential_component() {
            3
        } else {
            1
        }
    }
}

/// The block description `getConstraintInfo` gives LCPConstraintSolver's warm start.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactBlockInfo {
    /// First row of the first contact.
    pub const0: usize,
    /// Rows per contact (3 when the first contact has friction, else 1).
    pub nb_lines: usize,
    pub nb_groups: usize,
    /// Persistent ids per contact, negated the first time this constraint ever reports.
    pub ids: Vec<i64>,
}

/// Lagrangian-based inequality constraint
#[component(
    module = "Sofa.Component.Constraint.Lagrangian.Model",
    roles = [ConstraintLaw, ContactConstraint],
    templates = ["Vec3d"],
    template_rule = FromPair,
    inherit = [LawData],
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct UnilateralLagrangianConstraint {
    /// The Jacobian entries of a build, kept for the next one.
    writer: RowWriter,
    s1: Option<StateId>,
    s2: Option<StateId>,
    contacts: Vec<UnilateralContact>,
    custom_tolerance: f64,
    /// Per contact: whether the last solve left a non-zero normal force (friction contacts only).
    status: Vec<bool>,
    /// `x₂[m2] − x₁[m1]` at the build positions (the VEL violation reads the current positions).
    current_difference: Vec<V3>,
    yet_integrated: bool,
}

impl UnilateralLagrangianConstraint {
    /// A law between two Vec3 states (as a contact response creates it).
    pub fn between(s1: StateId, s2: StateId) -> UnilateralLagrangianConstraint {
        UnilateralLagrangianConstraint { s1: Some(s1), s2: Some(s2), ..Default::default() }
    }

    /// The tolerance given to the friction blocks (the response's `tol`; 0: the solver's).
    pub fn set_custom_tolerance(&mut self, tolerance: f64) {
        self.custom_tolerance = tolerance;
    }

    pub fn contacts(&self) -> &[UnilateralContact] {
        &self.contacts
    }

    /// Removes every contact (SOFA's `clear(reserve)`).
    pub fn clear_contacts(&mut self, reserve: usize) {
        self.contacts.clear();
        self.contacts.reserve(reserve);
    }

    /// Adds a contact at the current positions of its points (SOFA's `addContact(params, norm,
    /// contactDistance, m1, m2, id, localId)`): `P = position₂[m2]`, `Q = position₁[m1]`.
    #[allow(clippy::too_many_arguments)] // SOFA's addContact: friction, normal, distance, both points, both ids
    pub fn add_contact(
        &mut self,
        scene: &Scene,
        mu: f64,
        normal: V3,
        contact_distance: f64,
        m1: usize,
        m2: usize,
        contact_id: i64,
        local_id: i64,
    ) -> SimResult {
        let (s1, s2) = self.s1.zip(self.s2).ok_or_else(|| SimError::new("the unilateral constraint has no states"))?;
        for s in [s1, s2] {
            if !scene.store.contains(s) {
                return Err(SimError::new("the unilateral constraint's state no longer exists"));
            }
        }
        let p = v3(coord(scene.store.get(s2).read(VecId::POSITION), m2, 3)?);
        let q = v3(coord(scene.store.get(s1).read(VecId::POSITION), m1, 3)?);
        self.add_contact_with_points(mu, normal, p, q, contact_distance, m1, m2, contact_id, local_id);
        Ok(())
    }

    /// Adds a contact with explicit reference points `p` (on object 2) and `q` (on object 1)
    /// (SOFA's `addContact(params, norm, P, Q, contactDistance, m1, m2, …)`). The tangent basis
    /// is `t₀ = (n_z, n_x, n_y)`, `s = n × t₀ / |n × t₀|`, `t = (−n) × s`.
    #[allow(clippy::too_many_arguments)] // SOFA's addContact: friction, normal, both points, distance, both DOFs, both ids
    pub fn add_contact_with_points(
        &mut self,
        mu: f64,
        normal: V3,
        p: V3,
        q: V3,
        contact_distance: f64,
        m1: usize,
        m2: usize,
        contact_id: i64,
        local_id: i64,
    ) {
        let t0 = [normal[2], normal[0], normal[1]];
        let s = cross(normal, t0);
        let ns = norm(s);
        let s = [s[0] / ns, s[1] / ns, s[2] / ns];
        let t = cross(neg(normal), s);
        self.contacts.push(UnilateralContact { m1, m2, normal, t, s, contact_distance, p, q, mu, contact_id, local_id, id: 0, dfree: 0.0 });
    }

    /// Whether the last solve left each friction contact with a non-zero normal force (SOFA's
    /// `contactsStatus`; frictionless contacts stay false, as in SOFA).
    pub fn contacts_status(&self) -> &[bool] {
        &self.status
    }

    /// Whether some contact had a negative normal violation at the last evaluation.
    pub fn is_active(&self) -> bool {
        self.contacts.iter().any(|c| c.dfree < 0.0)
    }

    /// SOFA's `getConstraintInfo` (LCPConstraintSolver's warm start): one block over every
    /// contact; ids are negated the first time this constraint ever reports.
    pub fn constraint_info(&mut self) -> Option<ContactBlockInfo> {
        let first = self.contacts.first()?;
        let ids = self.contacts.iter().map(|c| if self.yet_integrated { c.contact_id } else { -c.contact_id }).collect();
        let info = ContactBlockInfo { const0: first.id, nb_lines: if first.mu > 0.0 { 3 } else { 1 }, nb_groups: self.contacts.len(), ids };
        self.yet_integrated = true;
        Some(info)
    }

    fn io_states(&self) -> SimResult<(usize, usize)> {
        let (s1, s2) = self.s1.zip(self.s2).ok_or_else(|| SimError::new("the unilateral constraint has no states"))?;
        Ok((0, second(s1, s2)))
    }

    /// SOFA's `getPositionViolation`.
    fn position_violation(&mut self, x1: &[f64], x2: &[f64], out: &mut [f64]) -> SimResult {
        let base = self.contacts.first().map_or(0, |c| c.id);
        for c in &mut self.contacts {
            let pf = v3(coord(x2, c.m2, 3)?);
            let qf = v3(coord(x1, c.m1, 3)?);
            let pp_free = sub(pf, c.p);
            let qq_free = sub(qf, c.q);
            let ref_dist = norm(pp_free) + norm(qq_free);
            let dfree = dot(sub(pf, qf), c.normal) - c.contact_distance;
            let delta = dot(sub(c.p, c.q), c.normal) - c.contact_distance;
            let full = |pp: V3, qq: V3| (dot(pp, c.t) - dot(qq, c.t), dot(pp, c.s) - dot(qq, c.s));
            let (dfree_t, dfree_s) = if delta.abs() < 0.00001 * ref_dist && dfree.abs() < 0.00001 * ref_dist {
                full(pp_free, qq_free)
            } else if (delta - dfree).abs() > 0.001 * delta {
                let dt = delta / (delta - dfree);
                if dt > 0.0 && dt < 1.0 {
                    let lerp = |a: V3, b: V3| [a[0] * (1.0 - dt) + b[0] * dt, a[1] * (1.0 - dt) + b[1] * dt, a[2] * (1.0 - dt) + b[2] * dt];
                    let pt = lerp(c.p, pf);
                    let qt = lerp(c.q, qf);
                    full(sub(pf, pt), sub(qf, qt))
                } else if dfree < 0.0 {
                    full(pp_free, qq_free)
                } else {
                    (0.0, 0.0)
                }
            } else {
                full(pp_free, qq_free)
            };
            let r = c.id - base;
            out[r] = dfree;
            c.dfree = dfree;
            if c.has_tangential_component() {
                out[r + 1] = dfree_t;
                out[r + 2] = dfree_s;
            }
        }
        Ok(())
    }

    /// SOFA's `getVelocityViolation`.
    fn velocity_violation(&self, v1: &[f64], v2: &[f64], dt: f64, out: &mut [f64]) -> SimResult {
        let base = self.contacts.first().map_or(0, |c| c.id);
        let inv_dt = 1.0 / dt;
        for (c, qp) in self.contacts.iter().zip(&self.current_difference) {
            let qp_inv_dt = [qp[0] * inv_dt, qp[1] * inv_dt, qp[2] * inv_dt];
            let qp_vfree = sub(v3(coord(v2, c.m2, 3)?), v3(coord(v1, c.m1, 3)?));
            let dfree_vec = [qp_vfree[0] + qp_inv_dt[0], qp_vfree[1] + qp_inv_dt[1], qp_vfree[2] + qp_inv_dt[2]];
            let r = c.id - base;
            out[r] = dot(dfree_vec, c.normal) - c.contact_distance * inv_dt;
            if c.has_tangential_component() {
                out[r + 1] = dot(qp_vfree, c.t);
                out[r + 2] = dot(qp_vfree, c.s);
            }
        }
        Ok(())
    }
}

impl Component for UnilateralLagrangianConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if self.s1.is_none() || self.s2.is_none() {
            let (s1, s2) = pair_states(cx)?;
            self.s1 = Some(s1);
            self.s2 = Some(s2);
        }
        for (name, s) in [("object1", self.s1), ("object2", self.s2)] {
            let l = cx.state_layout(s.expect("set above"));
            if l != settee_core::Layout::Vec3 {
                return Err(cx.error(format!("{name} is {} but UnilateralLagrangianConstraint acts on Vec3 states", l.name())));
            }
        }
        Ok(())
    }
}

impl ConstraintLaw for UnilateralLagrangianConstraint {
    fn states(&self) -> settee_core::scratch::StateSet {
        self.s1.into_iter().chain(self.s2).collect()
    }

    fn build_constraint_matrix(&mut self, _cp: &ConstraintParams, io: &mut ConstraintBuildIo, first_row: usize) -> SimResult<usize> {
        let (k1, k2) = self.io_states()?;
        let mut w = std::mem::take(&mut self.writer);
        let mut row = first_row;
        self.current_difference.clear();
        for c in &mut self.contacts {
            let x2 = v3(coord(io.x[k2], c.m2, 3)?);
            let x1 = v3(coord(io.x[k1], c.m1, 3)?);
            self.current_difference.push(sub(x2, x1));
            c.id = row;
            w.add(k1, row, c.m1, &neg(c.normal));
            w.add(k2, row, c.m2, &c.normal);
            if c.has_tangential_component() {
                w.set(k1, row + 1, c.m1, &neg(c.t));
                w.set(k2, row + 1, c.m2, &c.t);
                w.set(k1, row + 2, c.m1, &neg(c.s));
                w.set(k2, row + 2, c.m2, &c.s);
            }
            row += c.rows();
        }
        let flushed = w.flush(&mut io.rows);
        self.writer = w;
        flushed?;
        Ok(row - first_row)
    }

    fn constraint_violation(&mut self, cp: &ConstraintParams, io: &ViolationIo, dfree: &mut [f64]) -> SimResult {
        let (k1, k2) = self.io_states()?;
        match cp.order {
            ConstraintOrder::Pos | ConstraintOrder::PosAndVel => self.position_violation(io.x[k1], io.x[k2], dfree),
            ConstraintOrder::Vel => self.velocity_violation(io.v[k1], io.v[k2], cp.dt, dfree),
        }
    }

    fn resolutions(&mut self, _cp: &ConstraintParams, out: &mut Vec<Box<dyn ConstraintResolution>>) {
        self.status.clear();
        self.status.resize(self.contacts.len(), false);
        for c in &self.contacts {
            if c.has_tangential_component() {
                out.push(Box::new(UnilateralWithFrictionResolution::new(c.mu).with_tolerance(self.custom_tolerance)));
            } else {
                out.push(Box::new(UnilateralResolution::new()));
            }
        }
    }

    fn store_lambda(&mut self, _cp: &ConstraintParams, lambda: &[f64], _converged: bool) {
        let base = self.contacts.first().map_or(0, |c| c.id);
        for (c, st) in self.contacts.iter().zip(self.status.iter_mut()) {
            if c.has_tangential_component() {
                if let Some(l) = lambda.get(c.id - base) {
                    *st = *l != 0.0;
                }
            }
        }
    }
}

/// The contact response's view of the law: contacts given every step with their points.
impl ContactConstraint for UnilateralLagrangianConstraint {
    fn clear_contacts(&mut self) {
        UnilateralLagrangianConstraint::clear_contacts(self, 0);
    }

    fn add_contact(&mut self, c: settee_core::constraint::ContactSpec) -> SimResult {
        self.add_contact_with_points(c.mu, c.normal, c.p, c.q, c.distance, c.m1, c.m2, c.id, c.local_id);
        Ok(())
    }

    fn set_custom_tolerance(&mut self, tol: f64) {
        UnilateralLagrangianConstraint::set_custom_tolerance(self, tol);
    }

    fn forget_contacts(&mut self) -> bool {
        // The states and the response's tolerance stay; what the contacts and solves left goes.
        self.contacts.clear();
        self.status.clear();
        self.current_difference.clear();
        self.yet_integrated = false;
        true
    }
}
