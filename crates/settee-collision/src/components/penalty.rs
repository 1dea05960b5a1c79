//! `PenalityContactForceField` (spec §9.5): repulsive springs along the detection normal between
//! the contact points of two states, acting only while the points are closer than the contact
//! distance. Penalty contact responses create one per pair of colliding models; it can also be
//! declared in a scene (then it has no contact until code adds some).

use settee_core::collision::Vec3;
use settee_core::component::ForceField;
use settee_core::role::{Interaction, MechanicalState};
use settee_core::{component, Component, ForceIo, InitCtx, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// One penalty contact (SOFA's `PenalityContactForceField::Contact`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PenaltyContact {
    /// Contact point indices in the first and second state.
    pub m1: usize,
    pub m2: usize,
    /// The colliding elements of the two models.
    pub index1: usize,
    pub index2: usize,
    /// Unit normal from model 1 towards model 2 (as detected).
    pub normal: Vec3,
    /// Distance at which the contact starts to push.
    pub dist: f64,
    pub ks: f64,
    /// Steps since the contact appeared.
    pub age: u32,
    /// Penetration computed by the last `add_force` (positive: the contact pushes).
    pub pen: f64,
}

/// Penalty contact: repulsive springs along the contact normals between the contact points of two states.
///
/// The force field; `contacts` are set by the penalty response each step.
#[component(
    module = "Sofa.Component.Collision.Response.Contact",
    roles = [ForceField],
    markers = [Interaction],
    templates = ["Vec3d"],
    template_rule = FromPair,
    data = {
        /// Rayleigh damping coefficient related to stiffness
        rayleighStiffness: Real = "0",
    },
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct PenalityContactForceField {
    s1: Option<StateId>,
    s2: Option<StateId>,
    contacts: Vec<PenaltyContact>,
    previous: Vec<PenaltyContact>,
    rayleigh_stiffness: f64,
}

impl PenalityContactForceField {
    /// A force field between two states (as the penalty response creates it).
    pub fn between(s1: StateId, s2: StateId) -> PenalityContactForceField {
        PenalityContactForceField { s1: Some(s1), s2: Some(s2), ..Default::default() }
    }

    pub fn contacts(&self) -> &[PenaltyContact] {
        &self.contacts
    }

    /// Forgets every contact and their history, as a new force field has none (the penalty
    /// response keeps the force field of a pair that ended for when it collides again).
    pub fn forget_contacts(&mut self) {
        self.contacts.clear();
        self.previous.clear();
    }

    /// Starts a new contact list; the previous one is kept to carry contact ages.
    pub fn clear(&mut self, reserve: usize) {
        std::mem::swap(&mut self.previous, &mut self.contacts);
        self.contacts.clear();
        self.contacts.reserve(reserve);
    }

    /// Appends a contact; `old_index` is the 1-based position of the same contact in the previous
    /// list, 0 for a new one.
    #[allow(clippy::too_many_arguments)] // SOFA's addContact: both points, both elements, normal, distance, stiffness, history
    pub fn add_contact(&mut self, m1: usize, m2: usize, index1: usize, index2: usize, normal: Vec3, dist: f64, ks: f64, old_index: usize) {
        let age = if old_index > 0 && old_index <= self.previous.len() { self.previous[old_index - 1].age + 1 } else { 0 };
        self.contacts.push(PenaltyContact { m1, m2, index1, index2, normal, dist, ks, age, pen: 0.0 });
    }

    fn states_set(&self) -> SimResult<(StateId, StateId)> {
        self.s1.zip(self.s2).ok_or_else(|| SimError::new("the penalty force field has no states"))
    }
}

/// `a·b` in SOFA's order, on the first three components of two slices.
fn dot3(a: [f64; 3], n: &Vec3) -> f64 {
    a[0] * n[0] + a[1] * n[1] + a[2] * n[2]
}

/// `f[i] += v` (sign 1) or `f[i] −= v` (sign −1).
fn add3(f: &mut [f64], i: usize, v: [f64; 3], sign: f64) {
    for (fk, vk) in f[3 * i..3 * i + 3].iter_mut().zip(v) {
        if sign > 0.0 {
            *fk += vk;
        } else {
            *fk -= vk;
        }
    }
}

fn sub3(x: &[f64], i: usize, y: &[f64], j: usize) -> [f64; 3] {
    [x[3 * i] - y[3 * j], x[3 * i + 1] - y[3 * j + 1], x[3 * i + 2] - y[3 * j + 2]]
}

impl Component for PenalityContactForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.rayleigh_stiffness = cx.data().get(Self::RAYLEIGH_STIFFNESS);
        if self.s1.is_none() || self.s2.is_none() {
            let pick = |name: &str| -> SimResult<StateId> {
                let c = match cx.link_targets(name).first() {
                    Some(c) => *c,
                    None => cx.mstate().ok_or_else(|| cx.error("no mechanical state found in this node or its ancestors"))?,
                };
                cx.scene.state_of(c).ok_or_else(|| cx.error(format!("{name} is not a mechanical state")))
            };
            self.s1 = Some(pick("object1")?);
            self.s2 = Some(pick("object2")?);
        }
        Ok(())
    }

    /// The contacts are made again by the contact response at the next collision phase, from
    /// the changed collision models, before any force is computed: nothing to carry over.
    fn topology_changed(
        &mut self,
        _cx: &mut InitCtx,
        _topology: settee_core::ComponentId,
        _changes: &[settee_core::topology_change::TopologyChange],
    ) -> SimResult<settee_core::topology_change::Follow> {
        Ok(settee_core::topology_change::Follow::Followed)
    }
}

impl ForceField for PenalityContactForceField {
    fn states(&self) -> settee_core::StateSet {
        self.s1.into_iter().chain(self.s2).collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let (s1, s2) = self.states_set()?;
        let second = if s1 == s2 { 0 } else { 1 };
        for c in &mut self.contacts {
            let u = sub3(io.x[second], c.m2, io.x[0], c.m1);
            c.pen = c.dist - dot3(u, &c.normal);
            if c.pen > 0.0 {
                let f_n = c.ks * c.pen;
                let force = [-c.normal[0] * f_n, -c.normal[1] * f_n, -c.normal[2] * f_n];
                add3(io.f[0], c.m1, force, 1.0);
                add3(io.f[second], c.m2, force, -1.0);
            }
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let (s1, s2) = self.states_set()?;
        let second = if s1 == s2 { 0 } else { 1 };
        for c in &self.contacts {
            if c.pen > 0.0 {
                let du = sub3(io.x[second], c.m2, io.x[0], c.m1);
                let dpen = -dot3(du, &c.normal);
                let df_n = c.ks * dpen * k_factor;
                let dforce = [-c.normal[0] * df_n, -c.normal[1] * df_n, -c.normal[2] * df_n];
                add3(io.f[0], c.m1, dforce, 1.0);
                add3(io.f[second], c.m2, dforce, -1.0);
            }
        }
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let (s1, s2) = self.states_set()?;
        for c in self.contacts.iter().filter(|c| c.pen > 0.0) {
            let (p1, p2) = (3 * c.m1, 3 * c.m2);
            for i in 0..3 {
                for j in 0..3 {
                    // SOFA's `ks·(n nᵀ)`, then the factor.
                    let k = c.ks * (c.normal[i] * c.normal[j]) * k_factor;
                    acc.add(s1, p1 + i, s1, p1 + j, -k);
                    acc.add(s1, p1 + i, s2, p2 + j, k);
                    acc.add(s2, p2 + i, s1, p1 + j, k);
                    acc.add(s2, p2 + i, s2, p2 + j, -k);
                }
            }
        }
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}
