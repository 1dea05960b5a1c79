//! `AttachProjectiveConstraint`: attaches DOFs `indices2` of `object2` to DOFs `indices1` of
//! `object1` by projection (SOFA's pair-interaction projective constraint).
//!
//! For vector templates, SOFA moves both DOFs of a pair towards each other: positions by
//! `(x2 − x1)·(½·positionFactor·f)` (added to `x1`, removed from `x2`), velocities likewise with
//! `velocityFactor`, where `f` is the pair's `constraintFactor` (1 when none is given). Responses
//! (increments) of `object2`'s DOFs are zeroed, or with `twoWay` moved together by
//! `(dx2 − dx1)·½·responseFactor·f`. Rigid templates copy the center (and the orientation unless
//! `freeRotations`, or `lastFreeRotation` for the last attached pair) of `object1` onto `object2`.
//! A pair whose distance exceeds `minDistance` (unless −1) is released until it comes back.
//! With `lastDir`, a pair whose `object1` point lies beyond the plane through `lastPos` normal to
//! it is inactive, or with `clamp` attached to `lastPos` instead.
//!
//! Settee calls the two-state projections when both states take part in the operation (the end
//! of step, or a solver whose scope holds both); a solver that sees `object2` alone gets its
//! responses zeroed in one-way mode, as SOFA's matrix projection does (SOFA's vector projection
//! would read `object1`'s unrelated temporary vector there). The assembled matrix of one-way
//! attachments clears the rows and columns of `object2`'s attached DOFs.

use settee_core::component::ProjectiveConstraint;
use settee_core::role::MechanicalState;
use settee_core::{component, Component, InitCtx, Layout, MechParams, SimResult, StateId};

/// Attaches DOFs of one state to DOFs of another.
#[component(
    module = "Sofa.Component.Constraint.Projective",
    description = "Attach given pair of particles, projecting the positions of the second particles to the first ones.",
    roles = [ProjectiveConstraint],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Rigid3d", "Rigid2d"],
    template_rule = FromPair,
    inherit = [crate::ProjectiveBase, Self],
    links = {
        /// First object to constrain
        object1: MechanicalState,
        /// Second object to constrain
        object2: MechanicalState,
    },
    data = {
        /// Indices of the source points on the first model
        indices1: Indices,
        /// Indices of the fixed points on the second model
        indices2: Indices,
        /// if true, projects the constraint vertices of both object1 and object2 towards their average degrees of freedom and derivatives. If false, the position of the object1 are projected onto the object2. Therefore, object2 only follows object1 without affecting the motion of object1
        twoWay: Bool = "false",
        /// true to keep rotations free (only used for Rigid DOFs)
        freeRotations: Bool = "false",
        /// true to keep rotation of the last attached point free (only used for Rigid DOFs)
        lastFreeRotation: Bool = "false",
        /// true to use rest rotations local offsets (only used for Rigid DOFs)
        restRotations: Bool = "false",
        /// position at which the attach constraint should become inactive
        lastPos: Fixed(3) as Vec3 = "0 0 0",
        /// direction from lastPos at which the attach coustraint should become inactive
        lastDir: Fixed(3) as Vec3 = "0 0 0",
        /// true to clamp particles at lastPos instead of freeing them.
        clamp: Bool = "false",
        /// the constraint become inactive if the distance between the points attached is bigger than minDistance.
        minDistance: Real = "-1",
        /// IN: Factor applied to projection of position
        positionFactor: Real = "1",
        /// IN: Factor applied to projection of velocity
        velocityFactor: Real = "1",
        /// IN: Factor applied to projection of force/acceleration
        responseFactor: Real = "1",
        /// Vector of factors adapting the application of the constraint per pair of points (0 -> the constraint is released. 1 -> the constraint is fully constrained)
        constraintFactor: Reals,
    },
)]
#[derive(Clone, Default)]
pub struct AttachProjectiveConstraint {
    s1: Option<StateId>,
    s2: Option<StateId>,
    layout: Option<Layout>,
    /// The attached pairs (index in object1, index in object2).
    pairs: Vec<(usize, usize)>,
    two_way: bool,
    free_rotations: bool,
    last_free_rotation: bool,
    last_pos: [f64; 3],
    /// `lastDir` when it is not zero.
    last_dir: Option<[f64; 3]>,
    clamp: bool,
    min_distance: f64,
    position_factor: f64,
    velocity_factor: f64,
    response_factor: f64,
    constraint_factor: Vec<f64>,
    /// Per pair: attached (else beyond `lastPos`), and released for being too far apart.
    active: Vec<bool>,
    released: Vec<bool>,
    end_time: f64,
}

impl AttachProjectiveConstraint {
    fn layout(&self) -> Layout {
        self.layout.expect("initialised")
    }

    fn is_rigid(&self) -> bool {
        matches!(self.layout(), Layout::Rigid3 | Layout::Rigid2)
    }

    /// SOFA's `isActive`: before `endTime` (or always when it is negative).
    fn acts(&self, p: &MechParams) -> bool {
        crate::subspace::active(self.end_time, p)
    }

    fn factor(&self, i: usize) -> f64 {
        self.constraint_factor.get(i).copied().unwrap_or(1.0)
    }

    /// Whether pair `i` keeps its rotation free: `freeRotations`, or `lastFreeRotation` for the
    /// last active pair.
    fn rotation_free(&self, i: usize) -> bool {
        self.free_rotations || (self.last_free_rotation && !self.active.get(i + 1).copied().unwrap_or(false))
    }

    /// Number of leading derivative components a projection touches on a DOF.
    fn constrained_size(&self, free: bool) -> usize {
        let l = self.layout();
        if self.is_rigid() && free {
            l.spatial_size()
        } else {
            l.deriv_size()
        }
    }

    /// The attached pairs, with the ones beyond `lastPos` marked inactive from `x1`.
    fn update_active(&mut self, x1: &[f64]) {
        let Some(dir) = self.last_dir else { return };
        let cs = self.layout().coord_size();
        let k = self.layout().spatial_size().min(3);
        for (i, &(a, _)) in self.pairs.iter().enumerate() {
            let mut p = [0.0; 3];
            p[..k].copy_from_slice(&x1[a * cs..a * cs + k]);
            let d = (p[0] - self.last_pos[0]) * dir[0] + (p[1] - self.last_pos[1]) * dir[1] + (p[2] - self.last_pos[2]) * dir[2];
            self.active[i] = d <= 0.0;
        }
    }

    /// SOFA's `doProjectPosition` on one pair (`p1` is a copy of object1's coordinate or the
    /// clamp point).
    fn position_pair(&mut self, i: usize, p1: &mut [f64], p2: &mut [f64], free: bool) {
        let k = self.layout().spatial_size();
        if self.min_distance != -1.0 {
            let d2: f64 = (0..k).map(|c| (p2[c] - p1[c]) * (p2[c] - p1[c])).sum();
            if d2.sqrt() > self.min_distance {
                self.released[i] = true;
                return;
            }
        }
        self.released[i] = false;
        if self.is_rigid() {
            p2[..k].copy_from_slice(&p1[..k]);
            if !free {
                p2[k..].copy_from_slice(&p1[k..]);
            }
        } else {
            let s = 0.5 * self.position_factor * self.factor(i);
            for c in 0..p1.len() {
                let corr = (p2[c] - p1[c]) * s;
                p1[c] += corr;
                p2[c] -= corr;
            }
        }
    }

    /// SOFA's `doProjectVelocity` on one pair.
    fn velocity_pair(&self, i: usize, v1: &mut [f64], v2: &mut [f64], free: bool) {
        if self.released[i] {
            return;
        }
        if self.is_rigid() {
            let k = self.layout().spatial_size();
            let n = if free { k } else { v1.len() };
            v2[..n].copy_from_slice(&v1[..n]);
        } else {
            let s = 0.5 * self.velocity_factor * self.factor(i);
            for c in 0..v1.len() {
                let corr = (v2[c] - v1[c]) * s;
                v1[c] += corr;
                v2[c] -= corr;
            }
        }
    }

    /// SOFA's `doProjectResponse` on one pair.
    fn response_pair(&self, i: usize, d1: &mut [f64], d2: &mut [f64], free: bool, two_way: bool) {
        if self.released[i] {
            return;
        }
        let n = self.constrained_size(free);
        if !two_way {
            d2[..n].fill(0.0);
        } else if self.is_rigid() {
            for (a, b) in d1[..n].iter_mut().zip(&d2[..n]) {
                *a += b;
            }
            d2[..n].copy_from_slice(&d1[..n]);
        } else {
            let s = self.response_factor * self.factor(i);
            for c in 0..d1.len() {
                let corr = (d2[c] - d1[c]) * 0.5 * s;
                d1[c] += corr;
                d2[c] -= corr;
            }
        }
    }
}

impl Component for AttachProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let context = cx.scene.context_state(cx.node());
        let mut states = [None, None];
        for (k, name) in ["object1", "object2"].into_iter().enumerate() {
            let comp = cx.link_targets(name).first().copied().or(context).ok_or_else(|| {
                cx.error(format!("no mechanical state for {name}")).hint("set object1=\"@...\" and object2=\"@...\" to the two states to attach")
            })?;
            states[k] = Some(cx.scene.state_of(comp).ok_or_else(|| cx.error(format!("{name} is not a mechanical state")))?);
        }
        let (s1, s2) = (states[0].expect("set above"), states[1].expect("set above"));
        let layout = cx.state_layout(s1);
        if cx.state_layout(s2) != layout {
            return Err(cx.error(format!("object1 is a {} state but object2 a {} one", layout.name(), cx.state_layout(s2).name())));
        }
        if !matches!(layout, Layout::Vec1 | Layout::Vec2 | Layout::Vec3 | Layout::Rigid2 | Layout::Rigid3) {
            return Err(cx.error(format!("template {} is not supported by this constraint", layout.name())));
        }
        let d = cx.data();
        if d.get(Self::REST_ROTATIONS) {
            return Err(cx.error("restRotations is not supported yet").hint("remove restRotations"));
        }
        let (i1, i2) = (d.get(Self::INDICES1).to_vec(), d.get(Self::INDICES2).to_vec());
        self.two_way = d.get(Self::TWO_WAY);
        self.free_rotations = d.get(Self::FREE_ROTATIONS);
        self.last_free_rotation = d.get(Self::LAST_FREE_ROTATION);
        let (lp, ld) = (d.get(Self::LAST_POS), d.get(Self::LAST_DIR));
        self.last_pos = [lp[0], lp[1], lp[2]];
        let dir = [ld[0], ld[1], ld[2]];
        self.last_dir = ((dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]).sqrt() > 1e-10).then_some(dir);
        self.clamp = d.get(Self::CLAMP);
        self.end_time = d.get(crate::ProjectiveBase::END_TIME);
        self.min_distance = d.get(Self::MIN_DISTANCE);
        self.position_factor = d.get(Self::POSITION_FACTOR);
        self.velocity_factor = d.get(Self::VELOCITY_FACTOR);
        self.response_factor = d.get(Self::RESPONSE_FACTOR);
        self.constraint_factor = d.get(Self::CONSTRAINT_FACTOR).to_vec();
        if i1.len() != i2.len() {
            cx.warn(format!("indices1 has {} indices but indices2 {}: the extra ones are ignored", i1.len(), i2.len()));
        }
        if !self.constraint_factor.is_empty() && self.constraint_factor.len() != i2.len() {
            cx.warn(format!(
                "constraintFactor has {} values for {} attached points: the missing ones count as 1",
                self.constraint_factor.len(),
                i2.len()
            ));
        }
        self.pairs = i1.into_iter().zip(i2).collect();
        self.active = vec![true; self.pairs.len()];
        self.released = vec![false; self.pairs.len()];
        self.s1 = Some(s1);
        self.s2 = Some(s2);
        self.layout = Some(layout);
        Ok(())
    }

    /// The indices are checked once both states are initialised (they may sit in later nodes).
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (Some(s1), Some(s2)) = (self.s1, self.s2) else { return Ok(()) };
        let (n1, n2) = (cx.state_size(s1), cx.state_size(s2));
        if let Some(&(a, b)) = self.pairs.iter().find(|&&(a, b)| a >= n1 || b >= n2) {
            return Err(cx.error(format!("the pair ({a}, {b}) is beyond the states ({n1} and {n2} DOFs)")));
        }
        Ok(())
    }
}

impl ProjectiveConstraint for AttachProjectiveConstraint {
    /// The attached state, the one whose matrix rows a one-way attachment clears.
    fn state(&self) -> StateId {
        self.s2.expect("initialised")
    }
    fn first_state(&self) -> Option<StateId> {
        self.s1
    }
    /// Object2's vector alone: a one-way attachment zeroes its attached increments.
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        if self.two_way || !self.acts(p) {
            return;
        }
        let ds = self.layout().deriv_size();
        let mut none = vec![0.0; ds];
        for i in 0..self.pairs.len() {
            if !self.active[i] && !self.clamp {
                continue;
            }
            let free = if self.active[i] { self.rotation_free(i) } else { self.free_rotations };
            let b = self.pairs[i].1;
            if let Some(d2) = dx.get_mut(b * ds..(b + 1) * ds) {
                self.response_pair(i, &mut none, d2, free, false);
            }
        }
    }
    fn project_velocity(&mut self, _p: &MechParams, _v: &mut [f64]) {}
    fn project_position(&mut self, _p: &MechParams, _x: &mut [f64]) {}
    fn projected_rows(&self, _p: &MechParams, ds: usize, out: &mut Vec<usize>) {
        if self.two_way || ds != self.layout().deriv_size() {
            return;
        }
        for (i, &(_, b)) in self.pairs.iter().enumerate() {
            if !self.clamp && !self.active[i] {
                continue;
            }
            let n = self.constrained_size(self.rotation_free(i));
            out.extend((0..n).map(|c| b * ds + c));
        }
    }
    fn project_response_pair(&mut self, p: &MechParams, dx1: &mut [f64], dx2: &mut [f64]) {
        if !self.acts(p) {
            return;
        }
        let ds = self.layout().deriv_size();
        for i in 0..self.pairs.len() {
            let (a, b) = self.pairs[i];
            if dx1.len() < (a + 1) * ds || dx2.len() < (b + 1) * ds {
                continue;
            }
            if self.active[i] {
                let free = self.rotation_free(i);
                let mut d1 = dx1[a * ds..(a + 1) * ds].to_vec();
                self.response_pair(i, &mut d1, &mut dx2[b * ds..(b + 1) * ds], free, self.two_way);
                dx1[a * ds..(a + 1) * ds].copy_from_slice(&d1);
            } else if self.clamp {
                let mut none = vec![0.0; ds];
                self.response_pair(i, &mut none, &mut dx2[b * ds..(b + 1) * ds], self.free_rotations, false);
            }
        }
    }
    fn project_velocity_pair(&mut self, p: &MechParams, v1: &mut [f64], v2: &mut [f64]) {
        if !self.acts(p) {
            return;
        }
        let ds = self.layout().deriv_size();
        for i in 0..self.pairs.len() {
            let (a, b) = self.pairs[i];
            if v1.len() < (a + 1) * ds || v2.len() < (b + 1) * ds {
                continue;
            }
            if self.active[i] {
                let free = self.rotation_free(i);
                let mut w1 = v1[a * ds..(a + 1) * ds].to_vec();
                self.velocity_pair(i, &mut w1, &mut v2[b * ds..(b + 1) * ds], free);
                v1[a * ds..(a + 1) * ds].copy_from_slice(&w1);
            } else if self.clamp {
                // The clamped point does not move: object2's DOF follows a zero velocity.
                let mut zero = vec![0.0; ds];
                self.velocity_pair(i, &mut zero, &mut v2[b * ds..(b + 1) * ds], self.free_rotations);
            }
        }
    }
    fn project_position_pair(&mut self, p: &MechParams, x1: &mut [f64], x2: &mut [f64]) {
        if !self.acts(p) {
            return;
        }
        let cs = self.layout().coord_size();
        if self.pairs.iter().any(|&(a, b)| x1.len() < (a + 1) * cs || x2.len() < (b + 1) * cs) {
            return;
        }
        self.update_active(x1);
        for i in 0..self.pairs.len() {
            let (a, b) = self.pairs[i];
            if self.active[i] {
                let free = self.rotation_free(i);
                // SOFA projects a copy of object1's coordinate: object1 itself is not moved.
                let mut p1 = x1[a * cs..(a + 1) * cs].to_vec();
                self.position_pair(i, &mut p1, &mut x2[b * cs..(b + 1) * cs], free);
            } else if self.clamp {
                let mut p1 = x1[a * cs..(a + 1) * cs].to_vec();
                let k = self.layout().spatial_size().min(3);
                p1[..k].copy_from_slice(&self.last_pos[..k]);
                self.position_pair(i, &mut p1, &mut x2[b * cs..(b + 1) * cs], self.free_rotations);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use settee_core::mechanics::{self as mech, MechScope};
    use settee_core::simulation::init_root;
    use settee_core::testing::add;
    use settee_core::{Factory, Scene, VecId};

    use super::*;

    fn factory() -> Factory {
        settee_statecontainer::factory_with(&[crate::register])
    }

    fn params() -> MechParams {
        MechParams { dt: 0.1, time: 0.0, gravity: [0.0; 3] }
    }

    /// Two Vec3 states in child nodes A (2 DOFs) and B (2 DOFs), B's DOF 0 attached to A's DOF 1
    /// by a constraint in the root. With both states in the scope: B's DOF goes half-way to A's
    /// at each projection (x1 (1,1,1), x2 (3,5,7) → (2,3,4) at init → (1.5,2,2.5)), A is not moved; velocities (1,0,0) and (3,2,0) both
    /// become their mean (2,1,0); one-way responses zero B's DOF only. A scope holding B alone
    /// zeroes B's attached increments; the matrix rows 0..3 of B are cleared.
    #[test]
    fn vec3_one_way_pair_projections() {
        let f = factory();
        let mut s = Scene::new("root");
        let (na, nb) = (s.add_node(Scene::ROOT, "A"), s.add_node(Scene::ROOT, "B"));
        let a = add(&mut s, &f, na, "MechanicalObject", &[("position", "0 0 0  1 1 1")]);
        let b = add(&mut s, &f, nb, "MechanicalObject", &[("position", "3 5 7  9 9 9")]);
        let c =
            add(&mut s, &f, Scene::ROOT, "AttachProjectiveConstraint", &[("object1", "@A"), ("object2", "@B"), ("indices1", "1"), ("indices2", "0")]);
        init_root(&mut s, &f).unwrap();
        let (sa, sb) = (s.state_of(a).unwrap(), s.state_of(b).unwrap());
        // The projection at init already moved B half-way.
        assert_eq!(s.store.get(sb).read(VecId::POSITION), [2.0, 3.0, 4.0, 9.0, 9.0, 9.0]);
        s.store.get_mut(sa).write(VecId::VELOCITY).copy_from_slice(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        s.store.get_mut(sb).write(VecId::VELOCITY).copy_from_slice(&[3.0, 2.0, 0.0, 5.0, 5.0, 5.0]);
        let scope = MechScope::build(&s, Scene::ROOT);
        mech::project_position_velocity(&mut s, &scope, VecId::POSITION, VecId::VELOCITY).unwrap();
        assert_eq!(s.store.get(sa).read(VecId::POSITION), [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        assert_eq!(s.store.get(sb).read(VecId::POSITION), [1.5, 2.0, 2.5, 9.0, 9.0, 9.0]);
        assert_eq!(s.store.get(sa).read(VecId::VELOCITY), [0.0, 0.0, 0.0, 2.0, 1.0, 0.0]);
        assert_eq!(s.store.get(sb).read(VecId::VELOCITY), [2.0, 1.0, 0.0, 5.0, 5.0, 5.0]);

        mech::scatter(&mut s, &scope, VecId::DX, &[1.0; 12]);
        mech::project_response(&mut s, &scope, VecId::DX).unwrap();
        assert_eq!(s.store.get(sa).read(VecId::DX), [1.0; 6]);
        assert_eq!(s.store.get(sb).read(VecId::DX), [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);

        let only_b = MechScope::build(&s, nb);
        mech::scatter(&mut s, &only_b, VecId::DX, &[2.0; 6]);
        let pc = s.get_mut::<AttachProjectiveConstraint>(c).unwrap();
        let mut dx = vec![2.0; 6];
        pc.project_response(&params(), &mut dx);
        assert_eq!(dx, [0.0, 0.0, 0.0, 2.0, 2.0, 2.0]);
        let mut rows = Vec::new();
        pc.projected_rows(&params(), 3, &mut rows);
        assert_eq!(rows, [0, 1, 2]);
    }

    /// Two-way: increments (1,2,3) and (3,2,1) both become (2,2,2); no matrix rows. With
    /// minDistance 1 a pair 2 apart is released: nothing moves. constraintFactor 0.5 moves B a
    /// quarter of the way.
    #[test]
    fn two_way_min_distance_and_factors() {
        let mut c = AttachProjectiveConstraint {
            layout: Some(Layout::Vec3),
            pairs: vec![(0, 0)],
            two_way: true,
            min_distance: -1.0,
            position_factor: 1.0,
            velocity_factor: 1.0,
            response_factor: 1.0,
            active: vec![true],
            released: vec![false],
            end_time: -1.0,
            ..Default::default()
        };
        let (mut d1, mut d2) = (vec![1.0, 2.0, 3.0], vec![3.0, 2.0, 1.0]);
        c.project_response_pair(&params(), &mut d1, &mut d2);
        assert_eq!((d1, d2), (vec![2.0; 3], vec![2.0; 3]));
        let mut rows = Vec::new();
        c.projected_rows(&params(), 3, &mut rows);
        assert!(rows.is_empty());

        c.min_distance = 1.0;
        let (mut x1, mut x2) = (vec![0.0; 3], vec![2.0, 0.0, 0.0]);
        c.project_position_pair(&params(), &mut x1, &mut x2);
        assert_eq!(x2, [2.0, 0.0, 0.0]);
        let (mut v1, mut v2) = (vec![0.0; 3], vec![4.0; 3]);
        c.project_velocity_pair(&params(), &mut v1, &mut v2);
        assert_eq!((v1, v2), (vec![0.0; 3], vec![4.0; 3]), "a released pair keeps its velocities");

        c.min_distance = -1.0;
        c.constraint_factor = vec![0.5];
        c.project_position_pair(&params(), &mut x1, &mut x2);
        assert_eq!(x2, [1.5, 0.0, 0.0]);
    }

    /// Rigid3: object2's frame takes object1's center and orientation, or only its center with
    /// freeRotations (velocity likewise); one-way responses clear the 6 (or 3) components.
    #[test]
    fn rigid_copies_center_and_orientation() {
        let mut c = AttachProjectiveConstraint {
            layout: Some(Layout::Rigid3),
            pairs: vec![(0, 0)],
            min_distance: -1.0,
            position_factor: 1.0,
            velocity_factor: 1.0,
            response_factor: 1.0,
            active: vec![true],
            released: vec![false],
            end_time: -1.0,
            ..Default::default()
        };
        let x1 = vec![1.0, 2.0, 3.0, 0.0, 0.6, 0.0, 0.8];
        let mut x2 = vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        c.project_position_pair(&params(), &mut x1.clone(), &mut x2);
        assert_eq!(x2, x1);
        c.free_rotations = true;
        let mut x2 = vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        c.project_position_pair(&params(), &mut x1.clone(), &mut x2);
        assert_eq!(x2, [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0]);
        let (mut v1, mut v2) = (vec![1.0; 6], vec![5.0; 6]);
        c.project_velocity_pair(&params(), &mut v1, &mut v2);
        assert_eq!(v2, [1.0, 1.0, 1.0, 5.0, 5.0, 5.0]);
        let mut dx = vec![1.0; 6];
        c.project_response(&params(), &mut dx);
        assert_eq!(dx, [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        c.free_rotations = false;
        let mut dx = vec![1.0; 6];
        c.project_response(&params(), &mut dx);
        assert_eq!(dx, [0.0; 6]);
    }

    /// Mismatched templates and out-of-range indices are errors.
    #[test]
    fn bad_pairs_are_errors() {
        let f = factory();
        for (tb, pb, idx, want) in [("Rigid3d", "0 0 0 0 0 0 1", "0", "Rigid3d"), ("Vec3d", "0 0 0", "4", "beyond")] {
            let mut s = Scene::new("root");
            let (na, nb) = (s.add_node(Scene::ROOT, "A"), s.add_node(Scene::ROOT, "B"));
            add(&mut s, &f, na, "MechanicalObject", &[("position", "0 0 0")]);
            add(&mut s, &f, nb, "MechanicalObject", &[("template", tb), ("position", pb)]);
            add(
                &mut s,
                &f,
                Scene::ROOT,
                "AttachProjectiveConstraint",
                &[("object1", "@A"), ("object2", "@B"), ("indices1", "0"), ("indices2", idx), ("template", "Vec3d")],
            );
            let e = init_root(&mut s, &f).unwrap_err();
            assert!(e.diagnostic().message.contains(want), "{e:?}");
        }
    }
}
