//! `BilateralLagrangianConstraint` (lagrangian-constraints spec §5.3,
//! `MODEL/BilateralLagrangianConstraint.{inl,cpp}`): attaches `first_point[i]` of `object1` to
//! `second_point[i]` of `object2`, keeping `x₂ − x₁ = rest_vector[i]`.
//!
//! Vec3: three rows per pair (object 1 `−e_j`, object 2 `+e_j`), violation
//! `x₂f − x₁f − rest`, one 3-line block per pair warm-started from the last multipliers and
//! scaled by `load`. Rigid3: six rows per pair (translation, rotation), a position violation
//! whatever the order (the rotation part is the world-frame rotation vector from 1 to 2), two
//! 3-line blocks per pair without warm start; `activate` and `load` only act on Vec3, as in SOFA.

use settee_core::constraint::{
    ConstraintBuildIo, ConstraintLaw, ConstraintOrder, ConstraintParams, ConstraintResolution, ContactConstraint, ViolationIo,
};
use settee_core::role::{MechanicalState, Topology};
use settee_core::types::{quat_mul, quat_normalize};
use settee_core::{component, Component, InitCtx, Layout, SimError, SimResult, StateId, VecId};

use super::{angular_displacement, check_indices, coord, pair_states, quat, quat_diff, rotate, second, sub, v3, LawData, RowWriter, V3};
use crate::resolution::Bilateral3DofResolution;

/// BilateralLagrangianConstraint defining an holonomic equality constraint (attachment).
#[component(
    module = "Sofa.Component.Constraint.Lagrangian.Model",
    roles = [ConstraintLaw, ContactConstraint],
    templates = ["Vec3d", "Rigid3d"],
    template_rule = FromPair,
    create = |args| {
        let layout = match args.layout {
            Some(Layout::Rigid3) => Layout::Rigid3,
            _ => Layout::Vec3,
        };
        BilateralLagrangianConstraint::empty(layout)
    },
    inherit = [LawData],
    data = {
        /// index of the constraint on the first model (object1)
        first_point: Indices,
        /// index of the constraint on the second model (object2)
        second_point: Indices,
        /// Relative position to maintain between attached points (optional)
        rest_vector: Derivs,
        /// control constraint activation (true by default)
        activate: Bool = "true",
        /// keep the initial difference in orientation (only for rigids)
        keepOrientationDifference: Bool = "false",
        /// Apply this factor to the constraint force to enable incremental loading. This value
        /// should be in the interval [0.0, 1.0].
        load: Real = "1",
    },
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
        /// link to the first topology container
        topology1: Topology,
        /// link to the second topology container
        topology2: Topology,
    },
)]
#[derive(Clone)]
pub struct BilateralLagrangianConstraint {
    /// The Jacobian entries of a build, kept for the next one.
    writer: RowWriter,
    layout: Layout,
    s1: Option<StateId>,
    s2: Option<StateId>,
    m1: Vec<usize>,
    m2: Vec<usize>,
    /// Rest offsets, flat (3 reals per pair for Vec3, 6 for Rigid3); may be shorter than the pairs.
    rest: Vec<f64>,
    activate: bool,
    keep_orientation_difference: bool,
    load: f64,
    /// Rigid3 with `keepOrientationDifference`: `(c₂ − c₁, q₁⁻¹·q₂)` per pair at `bwd_init`.
    initial_difference: Vec<[f64; 7]>,
    /// Pairs of the last build (SOFA's `cid.size()`).
    built: usize,
    /// Vec3, VEL order: `x₂ − x₁` at the build positions (SOFA reads the current positions).
    current_difference: Vec<V3>,
    /// Multipliers of the last solve per pair (Vec3; SOFA's `prevForces`).
    prev_forces: Vec<[f64; 3]>,
}

impl BilateralLagrangianConstraint {
    fn empty(layout: Layout) -> BilateralLagrangianConstraint {
        BilateralLagrangianConstraint {
            writer: RowWriter::default(),
            layout,
            s1: None,
            s2: None,
            m1: Vec::new(),
            m2: Vec::new(),
            rest: Vec::new(),
            activate: true,
            keep_orientation_difference: false,
            load: 1.0,
            initial_difference: Vec::new(),
            built: 0,
            current_difference: Vec::new(),
            prev_forces: Vec::new(),
        }
    }

    /// A law between `s1` and `s2` (for code and tests), Vec3 or Rigid3, without pairs: add
    /// them with [`BilateralLagrangianConstraint::add_contact`].
    pub fn new(layout: Layout, s1: StateId, s2: StateId) -> SimResult<BilateralLagrangianConstraint> {
        if !matches!(layout, Layout::Vec3 | Layout::Rigid3) {
            return Err(SimError::new(format!("BilateralLagrangianConstraint has no {} template", layout.name())));
        }
        Ok(BilateralLagrangianConstraint { s1: Some(s1), s2: Some(s2), ..BilateralLagrangianConstraint::empty(layout) })
    }

    fn deriv_size(&self) -> usize {
        self.layout.deriv_size()
    }

    /// Number of attached pairs (`min(|first_point|, |second_point|)`).
    pub fn pair_count(&self) -> usize {
        self.m1.len().min(self.m2.len())
    }

    /// The multipliers kept for the warm start of each pair (Vec3).
    pub fn previous_forces(&self) -> &[[f64; 3]] {
        &self.prev_forces
    }

    /// Removes every pair and rest offset (SOFA's `clear`).
    pub fn clear_contacts(&mut self) {
        self.m1.clear();
        self.m2.clear();
        self.rest.clear();
    }

    /// Attaches DOF `m1` of object 1 to DOF `m2` of object 2 (SOFA's `addContact`). The rest
    /// offset is `q − p` for Vec3, and for Rigid3 `(q.center − p.center,
    /// p.rotate(angularDisplacement(q.orient, p.orient)))`. StickContactConstraint passes the
    /// detected points on model 1 (`p`) and model 2 (`q`), so the pair starts glued at its
    /// detected offset. Note the sign of SOFA's other overloads, which pass `P = x₂[m2]`,
    /// `Q = x₁[m1]`: the violation `x₂ − x₁ − rest` then starts at `2·(x₂ − x₁)`, not 0.
    pub fn add_contact(&mut self, m1: usize, m2: usize, p: &[f64], q: &[f64]) -> SimResult {
        let cs = self.layout.coord_size();
        if p.len() != cs || q.len() != cs {
            return Err(SimError::new(format!("a {} contact needs two {cs}-real coordinates", self.layout.name())));
        }
        self.m1.push(m1);
        self.m2.push(m2);
        let lin = sub(v3(q), v3(p));
        self.rest.extend_from_slice(&lin);
        if self.layout == Layout::Rigid3 {
            let qp = quat(&p[3..7]);
            self.rest.extend_from_slice(&rotate(qp, angular_displacement(quat(&q[3..7]), qp)));
        }
        Ok(())
    }

    fn read_data(&mut self, cx: &mut InitCtx) {
        let d = cx.data();
        self.m1 = d.get(Self::FIRST_POINT).to_vec();
        self.m2 = d.get(Self::SECOND_POINT).to_vec();
        self.rest = d.get(Self::REST_VECTOR).to_vec();
        self.activate = d.get(Self::ACTIVATE);
        self.keep_orientation_difference = d.get(Self::KEEP_ORIENTATION_DIFFERENCE);
        let load = d.get(Self::LOAD);
        // SOFA's callback on `load` clamps it to [0, 1] with a warning.
        let clamped = if load < 0.0 {
            cx.warn(format!("The load cannot be negative. Setting it back to 0.0. Input value is {load}"));
            0.0
        } else if load > 1.0 {
            cx.warn(format!("The load cannot be greater than 1.0. Setting it back to 1.0. Input value is {load}"));
            1.0
        } else {
            load
        };
        if clamped != load {
            cx.data_mut().put(Self::LOAD, clamped);
        }
        self.load = clamped;
    }

    fn io_states(&self) -> SimResult<(usize, usize)> {
        let (s1, s2) = self.s1.zip(self.s2).ok_or_else(|| SimError::new("the bilateral constraint has no states"))?;
        Ok((0, second(s1, s2)))
    }

    /// Whether this law writes rows: Vec3 follows `activate`, Rigid3 ignores it (as SOFA).
    fn active(&self) -> bool {
        self.activate || self.layout == Layout::Rigid3
    }
}

impl Component for BilateralLagrangianConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        // Built by code between two states (a stick contact), else from the links.
        let (s1, s2) = match (self.s1, self.s2) {
            (Some(a), Some(b)) => (a, b),
            _ => pair_states(cx)?,
        };
        for (name, s) in [("object1", s1), ("object2", s2)] {
            let l = cx.state_layout(s);
            if l != self.layout {
                return Err(cx.error(format!("{name} is {} but the constraint's template is {}", l.name(), self.layout.name())));
            }
        }
        self.s1 = Some(s1);
        self.s2 = Some(s2);
        self.read_data(cx);
        self.prev_forces.clear();
        // The indices are checked at each build: they may come from engines computed later.
        Ok(())
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        if self.layout != Layout::Rigid3 || !self.keep_orientation_difference {
            return Ok(());
        }
        if !self.rest.is_empty() {
            cx.warn("keepOrientationDifference is activated, rest_vector will be ignored! ");
            self.rest.clear();
            cx.data_mut().put(Self::REST_VECTOR, Vec::new());
        }
        let (s1, s2) = self.s1.zip(self.s2).ok_or_else(|| cx.error("the bilateral constraint has no states"))?;
        let x1 = cx.read_vec(s1, VecId::POSITION);
        let x2 = cx.read_vec(s2, VecId::POSITION);
        let mut diffs = Vec::new();
        for p in 0..self.pair_count() {
            let (a, b) = (coord(x1, self.m1[p], 7)?, coord(x2, self.m2[p], 7)?);
            let (mut qp, mut qq) = (quat(&a[3..7]), quat(&b[3..7]));
            quat_normalize(&mut qp);
            quat_normalize(&mut qq);
            let mut dqp = quat_diff(qq, qp);
            quat_normalize(&mut dqp);
            let c = sub(v3(b), v3(a));
            diffs.push([c[0], c[1], c[2], dqp[0], dqp[1], dqp[2], dqp[3]]);
        }
        self.initial_difference.extend(diffs);
        Ok(())
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.read_data(cx);
        Ok(())
    }
}

/// StickContactConstraint's view of the law: pairs of contact points refilled by the response.
impl ContactConstraint for BilateralLagrangianConstraint {
    fn clear_contacts(&mut self) {
        BilateralLagrangianConstraint::clear_contacts(self);
    }

    fn add_contact(&mut self, c: settee_core::constraint::ContactSpec) -> SimResult {
        BilateralLagrangianConstraint::add_contact(self, c.m1, c.m2, &c.p, &c.q)
    }

    /// Bilateral blocks have no tolerance of their own.
    fn set_custom_tolerance(&mut self, _tol: f64) {}
}

impl ConstraintLaw for BilateralLagrangianConstraint {
    fn states(&self) -> settee_core::scratch::StateSet {
        self.s1.into_iter().chain(self.s2).collect()
    }

    fn build_constraint_matrix(&mut self, _cp: &ConstraintParams, io: &mut ConstraintBuildIo, first_row: usize) -> SimResult<usize> {
        self.built = 0;
        if !self.active() {
            return Ok(0);
        }
        let (k1, k2) = self.io_states()?;
        let np = self.pair_count();
        let cs = self.layout.coord_size();
        let (x1, x2) = (io.x[k1], io.x[k2]);
        check_indices("first_point", &self.m1[..np], x1.len() / cs)?;
        check_indices("second_point", &self.m2[..np], x2.len() / cs)?;
        let ds = self.deriv_size();
        let mut w = std::mem::take(&mut self.writer);
        let mut plus = vec![0.0; ds];
        let mut minus = vec![0.0; ds];
        for p in 0..np {
            let (a, b) = (self.m1[p], self.m2[p]);
            let cid = first_row + p * ds;
            for j in 0..ds {
                plus.fill(0.0);
                minus.fill(0.0);
                plus[j] = 1.0;
                minus[j] = -1.0;
                // SOFA adds the first row's entries and sets the others.
                if j == 0 {
                    w.add(k1, cid, a, &minus);
                    w.add(k2, cid, b, &plus);
                } else {
                    w.set(k1, cid + j, a, &minus);
                    w.set(k2, cid + j, b, &plus);
                }
            }
        }
        let flushed = w.flush(&mut io.rows);
        self.writer = w;
        flushed?;
        if self.layout == Layout::Vec3 {
            self.current_difference.clear();
            for p in 0..np {
                self.current_difference.push(sub(v3(&x2[3 * self.m2[p]..]), v3(&x1[3 * self.m1[p]..])));
            }
        }
        self.built = np;
        Ok(np * ds)
    }

    fn constraint_violation(&mut self, cp: &ConstraintParams, io: &ViolationIo, dfree: &mut [f64]) -> SimResult {
        if !self.active() || self.built == 0 {
            return Ok(());
        }
        let (k1, k2) = self.io_states()?;
        let np = self.built.min(self.pair_count());
        let ds = self.deriv_size();
        if self.layout == Layout::Vec3 {
            if cp.order == ConstraintOrder::Vel {
                // SOFA's getVelocityViolation: `(v₂ − v₁) + ((x₂ − x₁) − (−rest))·(1/dt)` with the
                // current positions (the rest vector enters with the opposite sign of the
                // position violation, as in SOFA).
                let inv_dt = 1.0 / cp.dt;
                for p in 0..np {
                    let mut dpos = self.current_difference[p];
                    if let Some(r) = self.rest.get(3 * p..3 * p + 3) {
                        dpos = sub(dpos, [-r[0], -r[1], -r[2]]);
                    }
                    let dpos = [dpos[0] * inv_dt, dpos[1] * inv_dt, dpos[2] * inv_dt];
                    let dv = sub(v3(coord(io.v[k2], self.m2[p], 3)?), v3(coord(io.v[k1], self.m1[p], 3)?));
                    for j in 0..3 {
                        dfree[3 * p + j] = dv[j] + dpos[j];
                    }
                }
                return Ok(());
            }
            for p in 0..np {
                let mut v = sub(v3(coord(io.x[k2], self.m2[p], 3)?), v3(coord(io.x[k1], self.m1[p], 3)?));
                if let Some(r) = self.rest.get(3 * p..3 * p + 3) {
                    v = sub(v, v3(r));
                }
                dfree[3 * p..3 * p + 3].copy_from_slice(&v);
            }
            return Ok(());
        }
        // Rigid3: always the position violation of the free poses.
        for p in 0..np {
            let c1 = coord(io.x[k1], self.m1[p], 7)?;
            let c2 = coord(io.x[k2], self.m2[p], 7)?;
            let (center1, orient1) = if self.keep_orientation_difference {
                let corr = self.initial_difference.get(p).ok_or_else(|| SimError::new(format!("no initial orientation difference for pair {p}")))?;
                let o = quat_mul(quat(&c1[3..7]), quat(&corr[3..7]));
                ([c1[0] + corr[0], c1[1] + corr[1], c1[2] + corr[2]], o)
            } else {
                (v3(c1), quat(&c1[3..7]))
            };
            let lin = sub(v3(c2), center1);
            let ang = rotate(orient1, angular_displacement(quat(&c2[3..7]), orient1));
            let out = &mut dfree[ds * p..ds * p + ds];
            out[..3].copy_from_slice(&lin);
            out[3..].copy_from_slice(&ang);
            if let Some(r) = self.rest.get(6 * p..6 * p + 6) {
                for (o, r) in out.iter_mut().zip(r) {
                    *o -= r;
                }
            }
        }
        Ok(())
    }

    fn resolutions(&mut self, _cp: &ConstraintParams, out: &mut Vec<Box<dyn ConstraintResolution>>) {
        if !self.active() {
            return;
        }
        let np = self.built;
        if self.layout == Layout::Rigid3 {
            for _ in 0..np {
                out.push(Box::new(Bilateral3DofResolution::new(None)));
                out.push(Box::new(Bilateral3DofResolution::new(None)));
            }
            return;
        }
        // SOFA resizes the stored forces to the pair count, keeping the leading ones.
        self.prev_forces.resize(np, [0.0; 3]);
        for p in &self.prev_forces {
            out.push(Box::new(Bilateral3DofResolution::with_load(Some(*p), self.load)));
        }
    }

    fn store_lambda(&mut self, _cp: &ConstraintParams, lambda: &[f64], _converged: bool) {
        if self.layout != Layout::Vec3 || !self.activate {
            return;
        }
        for (p, f) in self.prev_forces.iter_mut().enumerate() {
            if let Some(l) = lambda.get(3 * p..3 * p + 3) {
                f.copy_from_slice(l);
            }
        }
    }
}
