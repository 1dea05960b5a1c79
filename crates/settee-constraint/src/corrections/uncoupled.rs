//! `UncoupledConstraintCorrection` (lagrangian-constraints spec §1): a block-diagonal compliance,
//! one scalar per DOF (vector types) or a translational scalar and a symmetric rotational 3×3
//! shared by every rigid DOF (Rigid3).

use settee_core::constraint::{ConstraintCorrection, ConstraintParams, DenseMatrix};
use settee_core::role::{self, Topology};
use settee_core::{component, Component, ComponentId, ConstraintRows, InitCtx, Layout, Mass, RowRef, Scene, SimError, SimResult, StateId, VecId};

use super::common::{apply_correction, ode_factors, reset_contact_force, Apply};
use crate::solvers::generic::UnbuiltOps;

/// The compliance values of one DOF (SOFA's `UncoupledConstraintCorrection_computeCompliance` /
/// `_computeDx`).
#[derive(Clone, Debug, Default)]
struct Compliance {
    rigid: bool,
    /// Vec: per DOF; Rigid3: `[c_t, r00, r01, r02, r11, r12, r22]`.
    comp: Vec<f64>,
    comp0: f64,
}

impl Compliance {
    fn scaled(&self, k: f64) -> Compliance {
        Compliance { rigid: self.rigid, comp: self.comp.iter().map(|c| c * k).collect(), comp0: self.comp0 * k }
    }

    fn of(&self, dof: usize) -> f64 {
        self.comp.get(dof).copied().unwrap_or(self.comp0)
    }

    /// `w(n1, n2)` of two Jacobian entries on the same DOF.
    fn pair(&self, dof: usize, n1: &[f64], n2: &[f64]) -> f64 {
        if self.rigid {
            let c = &self.comp;
            let (a, b) = (&n1[3..6], &n2[3..6]);
            let mut w = dot(&n1[..3], &n2[..3]) * c[0];
            w += (a[0] * c[1] + a[1] * c[2] + a[2] * c[3]) * b[0];
            w += (a[0] * c[2] + a[1] * c[4] + a[2] * c[5]) * b[1];
            w += (a[0] * c[3] + a[1] * c[5] + a[2] * c[6]) * b[2];
            w
        } else {
            dot(n1, n2) * self.of(dof)
        }
    }

    /// The displacement `Δ(f)` of a DOF force.
    fn dx(&self, dof: usize, f: &[f64], out: &mut [f64]) {
        if self.rigid {
            let c = &self.comp;
            for k in 0..3 {
                out[k] = f[k] * c[0];
            }
            out[3] = f[3] * c[1] + f[4] * c[2] + f[5] * c[3];
            out[4] = f[3] * c[2] + f[4] * c[4] + f[5] * c[5];
            out[5] = f[3] * c[3] + f[4] * c[5] + f[5] * c[6];
        } else {
            let c = self.of(dof);
            for (o, x) in out.iter_mut().zip(f) {
                *o = x * c;
            }
        }
    }
}

/// SOFA's `Vec` dot product: the products summed in index order.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut r = a[0] * b[0];
    for i in 1..a.len().min(b.len()) {
        r += a[i] * b[i];
    }
    r
}

/// Component computing constraint forces within a simulated body using the compliance method.
#[component(
    module = "Sofa.Component.Constraint.Lagrangian.Correction",
    roles = [ConstraintCorrection],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Rigid3d"],
    template_rule = FromState,
    data = {
        /// Compliance value on each dof. If Rigid compliance (7 values): 1st value for
        /// translations, 6 others for upper-triangular part of symmetric 3x3 rotation compliance
        /// matrix
        compliance: Reals,
        /// Default compliance value for new dof or if all should have the same (in which case
        /// compliance vector should be empty)
        defaultCompliance: Real = "1e-5",
        /// Dump the constraint matrix at each iteration
        verbose: Bool = "false",
        /// Factor applied to the constraint forces when correcting the velocities
        correctionVelocityFactor: Real = "1",
        /// Factor applied to the constraint forces when correcting the positions
        correctionPositionFactor: Real = "1",
        /// Use odeSolver integration factors instead of correctionVelocityFactor and
        /// correctionPositionFactor
        useOdeSolverIntegrationFactors: Bool = "true",
    },
    links = {
        /// link to the topology container
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct UncoupledConstraintCorrection {
    me: Option<ComponentId>,
    state: Option<StateId>,
    layout: Option<Layout>,
    ode: Option<ComponentId>,
    use_ode: bool,
    position_factor: f64,
    velocity_factor: f64,
    compliance: Compliance,
    /// Invalid set-ups contribute nothing (SOFA's `ComponentState::Invalid`).
    valid: bool,
    /// Rigid3 compliance still to be derived from the mass (declared after this component).
    rigid_pending: bool,
    // Unbuilt path.
    constraint_force: Vec<f64>,
    constraint_disp: Vec<f64>,
    /// By first row id: the stored index of a triple of consecutive rows over the same DOFs (a
    /// friction contact's normal and tangents), [`NO_TRIPLE`] otherwise. A list kept between steps.
    triples: Vec<usize>,
}

/// No triple of rows starts at this row.
const NO_TRIPLE: usize = usize::MAX;

impl UncoupledConstraintCorrection {
    fn state(&self) -> SimResult<StateId> {
        self.state.ok_or_else(|| SimError::new("UncoupledConstraintCorrection used before init"))
    }

    fn ds(&self) -> usize {
        self.layout.map_or(3, |l| l.deriv_size())
    }

    /// The ODE factors (1 without an ODE solver).
    fn ode(&self, scene: &mut Scene, dt: f64) -> (f64, f64) {
        match self.ode {
            Some(o) => {
                let f = ode_factors(scene, o, dt);
                (f.position, f.velocity)
            }
            None => (1.0, 1.0),
        }
    }

    /// Position and velocity factors of the motion correction (spec §1.5).
    fn factors(&self, scene: &mut Scene, cp: &ConstraintParams, what: Apply) -> (f64, f64) {
        if self.use_ode {
            return self.ode(scene, cp.dt);
        }
        match what {
            Apply::Motion => (self.position_factor, self.velocity_factor / cp.dt),
            Apply::Position => (self.position_factor, 0.0),
            Apply::Velocity => (0.0, self.velocity_factor),
        }
    }

    fn check_valid(&mut self, cx: &mut InitCtx) {
        let c = &self.compliance;
        let bad = if c.rigid {
            !c.comp.len().is_multiple_of(7) || c.comp.is_empty() || c.comp[0] == 0.0 || c.comp[1] == 0.0 || c.comp[4] == 0.0 || c.comp[6] == 0.0
        } else {
            c.comp0 == 0.0 || c.comp.contains(&0.0)
        };
        self.valid = !bad;
        if bad {
            cx.warn("invalid compliance (a zero value, or a Rigid3 compliance that is not 7 values with non-zero diagonal): this correction contributes nothing");
        }
    }

    /// Rigid3: the 7 compliance values from the node's UniformMass (spec §1.2).
    fn derive_rigid(&mut self, cx: &mut InitCtx) {
        self.rigid_pending = false;
        let given = cx.data().get(Self::COMPLIANCE).to_vec();
        if given.len() == 7 {
            self.compliance.comp = given;
            self.check_valid(cx);
            return;
        }
        let mut ode_factor = 1.0;
        if self.ode.is_some() && !self.use_ode {
            let dt = cx.params().dt;
            ode_factor = dt * dt;
        }
        let mut comp = Vec::with_capacity(7);
        let mass = cx.scene.find_local(cx.node(), role::MASS).filter(|m| cx.scene.entry(*m).class.name == "UniformMass");
        // m and the inverse inertia of one rigid DOF, asked from the mass itself.
        let rigid = mass.and_then(|m| {
            let mass = cx.scene.role::<dyn Mass>(m)?;
            let mut mm = [0.0; 6];
            mass.add_mdx(&mut mm, &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0);
            let mut inv = [[0.0; 3]; 3];
            for k in 0..3 {
                let mut f = [0.0; 6];
                f[3 + k] = 1.0;
                let mut a = [0.0; 6];
                mass.acc_from_f(&mut a, &f).ok()?;
                for r in 0..3 {
                    inv[r][k] = a[3 + r];
                }
            }
            Some((mm[0], inv))
        });
        if cx.data().is_given(Self::DEFAULT_COMPLIANCE) {
            comp.push(self.compliance.comp0);
        } else if let Some((m, _)) = rigid {
            comp.push(ode_factor / m);
        } else {
            cx.warn("no UniformMass found in the node to derive the translational compliance: this correction contributes nothing");
        }
        let inv = match (cx.data().is_given(Self::DEFAULT_COMPLIANCE), rigid) {
            (false, Some((_, inv))) => inv,
            _ => [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        };
        for (r, c) in [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)] {
            comp.push(ode_factor * inv[r][c]);
        }
        cx.data_mut().put(Self::COMPLIANCE, comp.clone());
        self.compliance.comp = comp;
        self.check_valid(cx);
    }
}

impl Component for UncoupledConstraintCorrection {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        let s = cx.require_state()?;
        self.state = Some(s);
        let layout = cx.state_layout(s);
        if !matches!(layout, Layout::Vec1 | Layout::Vec2 | Layout::Vec3 | Layout::Rigid3) {
            return Err(cx.error(format!("UncoupledConstraintCorrection has no {} template", layout.name())));
        }
        self.layout = Some(layout);
        let d = cx.data();
        self.position_factor = d.get(Self::CORRECTION_POSITION_FACTOR);
        self.velocity_factor = d.get(Self::CORRECTION_VELOCITY_FACTOR);
        self.use_ode = d.get(Self::USE_ODE_SOLVER_INTEGRATION_FACTORS);
        self.ode = cx.scene.find_up(cx.node(), role::ODE_SOLVER);
        if self.ode.is_none() && self.use_ode {
            cx.warn("no ODE solver found above this node: useOdeSolverIntegrationFactors is set to false");
            self.use_ode = false;
            cx.data_mut().put(Self::USE_ODE_SOLVER_INTEGRATION_FACTORS, false);
        }
        let d = cx.data();
        let n = cx.state_size(s);
        self.compliance =
            Compliance { rigid: layout == Layout::Rigid3, comp: d.get(Self::COMPLIANCE).to_vec(), comp0: d.get(Self::DEFAULT_COMPLIANCE) };
        if layout == Layout::Rigid3 {
            let mass = cx.scene.find_local(cx.node(), role::MASS);
            self.rigid_pending = true;
            if mass.is_none_or(|m| cx.scene.entry(m).initialized) {
                self.derive_rigid(cx);
            }
            return Ok(());
        }
        let default_set = cx.data().is_given(Self::DEFAULT_COMPLIANCE);
        if !default_set && !cx.data().is_given(Self::COMPLIANCE) {
            cx.warn("neither defaultCompliance nor compliance is set: the default compliance 1e-5 is used");
        }
        let c = &mut self.compliance;
        if c.comp.len() == 1 && default_set && c.comp0 == c.comp[0] {
            c.comp.clear();
        }
        if !c.comp.is_empty() && c.comp.len() != n {
            if !default_set {
                c.comp0 = c.comp[0];
            }
            c.comp = vec![c.comp0; n];
            let v = c.comp.clone();
            cx.data_mut().put(Self::COMPLIANCE, v);
        }
        self.check_valid(cx);
        Ok(())
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        if self.rigid_pending {
            self.derive_rigid(cx);
        }
        Ok(())
    }
}

/// `Σ w(n_a, n_b)` over the DOFs present in both rows (sorted merge).
fn row_pair(c: &Compliance, a: &RowRef, b: &RowRef) -> f64 {
    let (mut i, mut j) = (0, 0);
    let mut w = 0.0;
    while i < a.dofs.len() && j < b.dofs.len() {
        match a.dofs[i].cmp(&b.dofs[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                w += c.pair(a.dofs[i], a.block(i), b.block(j));
                i += 1;
                j += 1;
            }
        }
    }
    w
}

/// SOFA's loop of `addComplianceInConstraintSpace` over `rows` (spec §1.4), read in place from
/// the state's compressed rows.
fn add_compliance<'a>(c: &Compliance, rows: impl Iterator<Item = RowRef<'a>> + Clone, w: &mut DenseMatrix) -> SimResult {
    let beyond = |r: usize, n: usize| SimError::new(format!("constraint row {r} is beyond the {n} rows of the compliance matrix"));
    let mut rest = rows;
    while let Some(ra) = rest.next() {
        let a = ra.id;
        if a >= w.n {
            return Err(beyond(a, w.n));
        }
        let mut d = 0.0;
        for (dof, n) in ra.entries() {
            d += c.pair(dof, n, n);
        }
        w.add(a, a, d);
        for rb in rest.clone() {
            let b = rb.id;
            if b >= w.n {
                return Err(beyond(b, w.n));
            }
            let s = row_pair(c, &ra, &rb);
            if s != 0.0 {
                w.add(a, b, s);
                w.add(b, a, s);
            }
        }
    }
    Ok(())
}

/// `d[row] += row · disp` for the state's rows `begin..=end` (SOFA's `addConstraintDisplacement`):
/// each entry's block dotted with its DOF's displacement, added in the row's order.
fn add_displacement(rows: &ConstraintRows, ds: usize, disp: &[f64], d: &mut [f64], begin: usize, end: usize) {
    for row in rows.rows_in(begin..=end) {
        let Some(dr) = d.get_mut(row.id) else { break };
        if ds == 3 {
            // The common Vec3 case with the block length known: the same products and sums.
            for (dof, b) in row.entries() {
                if let Some(v) = disp.get(dof * 3..dof * 3 + 3) {
                    *dr += b[0] * v[0] + b[1] * v[1] + b[2] * v[2];
                }
            }
        } else {
            for (dof, b) in row.entries() {
                if let Some(v) = disp.get(dof * ds..dof * ds + ds) {
                    *dr += dot(b, v);
                }
            }
        }
    }
}

/// `force += rowᵀ·df[row]` for the state's rows `begin..=end`, each touched DOF's displacement
/// recomputed from its force (SOFA's `setConstraintDForce`).
#[allow(clippy::too_many_arguments)] // the rows, the compliance and the two accumulated vectors
fn add_dforce(rows: &ConstraintRows, ds: usize, c: &Compliance, force: &mut [f64], disp: &mut [f64], df: &[f64], begin: usize, end: usize) {
    for row in rows.rows_in(begin..=end) {
        let Some(&dfr) = df.get(row.id) else { break };
        for (dof, b) in row.entries() {
            let range = dof * ds..dof * ds + ds;
            let Some(f) = force.get_mut(range.clone()) else { continue };
            for (f, x) in f.iter_mut().zip(b) {
                *f += x * dfr;
            }
            c.dx(dof, &force[range.clone()], &mut disp[range]);
        }
    }
}

/// The unbuilt operations of one `UncoupledConstraintCorrection` taken out of the scene for a
/// whole solve: the same arithmetic as its trait methods, without finding the component and
/// dispatching dynamically at every contact of every sweep. `handled` (by block start) says
/// which blocks the solver gave to this correction; the others get nothing, as through the scene.
pub(crate) struct UncoupledUnbuilt<'a> {
    rows: &'a ConstraintRows,
    handled: &'a [Vec<ComponentId>],
    ds: usize,
    compliance: &'a Compliance,
    force: &'a mut [f64],
    disp: &'a mut [f64],
    triples: &'a [usize],
}

impl<'a> UncoupledUnbuilt<'a> {
    /// The three rows `begin..=begin + 2` (`end = begin + 2`, all inside `len`) when they share
    /// their DOFs (Vec3 states).
    fn triple(&self, begin: usize, end: usize, len: usize) -> Option<[RowRef<'a>; 3]> {
        let rows: &'a ConstraintRows = self.rows;
        let k = *self.triples.get(begin)?;
        if k == NO_TRIPLE || end != begin + 2 || end >= len || self.ds != 3 {
            return None;
        }
        Some([rows.stored(k), rows.stored(k + 1), rows.stored(k + 2)])
    }
}

impl UnbuiltOps for UncoupledUnbuilt<'_> {
    fn add_constraint_displacement(&mut self, block: usize, d: &mut [f64], begin: usize, end: usize) -> SimResult {
        if self.handled.get(block).is_none_or(|h| h.is_empty()) {
            return Ok(());
        }
        let Some([r0, r1, r2]) = self.triple(begin, end, d.len()) else {
            add_displacement(self.rows, self.ds, self.disp, d, begin, end);
            return Ok(());
        };
        // The three rows walked together, each DOF's displacement read once: every row's sum is
        // still its entries' products added one by one in DOF order.
        let (mut a0, mut a1, mut a2) = (d[begin], d[begin + 1], d[begin + 2]);
        for (i, &dof) in r0.dofs.iter().enumerate() {
            let Some(v) = self.disp.get(dof * 3..dof * 3 + 3) else { continue };
            let (b0, b1, b2) = (r0.block(i), r1.block(i), r2.block(i));
            a0 += b0[0] * v[0] + b0[1] * v[1] + b0[2] * v[2];
            a1 += b1[0] * v[0] + b1[1] * v[1] + b1[2] * v[2];
            a2 += b2[0] * v[0] + b2[1] * v[1] + b2[2] * v[2];
        }
        (d[begin], d[begin + 1], d[begin + 2]) = (a0, a1, a2);
        Ok(())
    }

    fn set_constraint_dforce(&mut self, block: usize, df: &[f64], begin: usize, end: usize, update: bool) -> SimResult {
        if !update || self.handled.get(block).is_none_or(|h| h.is_empty()) {
            return Ok(());
        }
        let Some([r0, r1, r2]) = self.triple(begin, end, df.len()) else {
            add_dforce(self.rows, self.ds, self.compliance, self.force, self.disp, df, begin, end);
            return Ok(());
        };
        // DOF by DOF: each DOF's force still receives the rows' terms in row order, and its
        // displacement is the compliance times its final force, as when recomputed per row.
        let (f0, f1, f2) = (df[begin], df[begin + 1], df[begin + 2]);
        for (i, &dof) in r0.dofs.iter().enumerate() {
            let range = dof * 3..dof * 3 + 3;
            let Some(f) = self.force.get_mut(range.clone()) else { continue };
            for (b, x) in [(r0.block(i), f0), (r1.block(i), f1), (r2.block(i), f2)] {
                for k in 0..3 {
                    f[k] += b[k] * x;
                }
            }
            self.compliance.dx(dof, f, &mut self.disp[range]);
        }
        Ok(())
    }
}

impl UncoupledConstraintCorrection {
    /// The direct unbuilt operations over the scene's rows of this correction's state (after
    /// [`ConstraintCorrection::reset_for_unbuilt_resolution`]); `handled` as in [`UncoupledUnbuilt`].
    pub(crate) fn unbuilt_ops<'a>(&'a mut self, scene: &'a Scene, handled: &'a [Vec<ComponentId>]) -> SimResult<UncoupledUnbuilt<'a>> {
        let ds = self.ds();
        let rows = &scene.store.get(self.state()?).constraint;
        // The triples of this step's rows.
        let count = rows.row_count();
        self.triples.clear();
        if count > 0 {
            self.triples.resize(rows.stored(count - 1).id + 1, NO_TRIPLE);
        }
        for k in 0..count.saturating_sub(2) {
            let [r0, r1, r2] = [rows.stored(k), rows.stored(k + 1), rows.stored(k + 2)];
            if r1.id == r0.id + 1 && r2.id == r0.id + 2 && r1.dofs == r0.dofs && r2.dofs == r0.dofs {
                self.triples[r0.id] = k;
            }
        }
        Ok(UncoupledUnbuilt {
            triples: &self.triples,
            rows,
            handled,
            ds,
            compliance: &self.compliance,
            force: &mut self.constraint_force,
            disp: &mut self.constraint_disp,
        })
    }
}

impl ConstraintCorrection for UncoupledConstraintCorrection {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_compliance_in_constraint_space(&mut self, scene: &mut Scene, cp: &ConstraintParams, w: &mut DenseMatrix) -> SimResult {
        if !self.valid {
            return Ok(());
        }
        let s = self.state()?;
        let factor = if self.use_ode {
            let (p, v) = self.ode(scene, cp.dt);
            settee_core::constraint::IntegrationFactors { position: p, velocity: v }.for_order(cp.order)
        } else {
            1.0
        };
        let c = self.compliance.scaled(factor);
        add_compliance(&c, scene.store.get(s).constraint.all_rows(), w)
    }

    fn compute_motion_correction(&mut self, scene: &mut Scene, _cp: &ConstraintParams, dx: VecId, f: VecId) -> SimResult {
        if !self.valid {
            return Ok(());
        }
        let s = self.state()?;
        let ds = self.ds();
        let st = scene.store.get_mut(s);
        let force = st.read(f).to_vec();
        let out = st.write(dx);
        for (i, (o, fi)) in out.chunks_exact_mut(ds).zip(force.chunks_exact(ds)).enumerate() {
            self.compliance.dx(i, fi, o);
        }
        Ok(())
    }

    fn apply_motion_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, v: VecId, dx: VecId, correction: VecId) -> SimResult {
        if !self.valid {
            return Ok(());
        }
        let (p, q) = self.factors(scene, cp, Apply::Motion);
        apply_correction(scene, self.state()?, cp, Apply::Motion, x, v, dx, correction, p, q)
    }

    fn apply_position_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, dx: VecId, correction: VecId) -> SimResult {
        if !self.valid {
            return Ok(());
        }
        let (p, q) = self.factors(scene, cp, Apply::Position);
        apply_correction(scene, self.state()?, cp, Apply::Position, x, VecId::VELOCITY, dx, correction, p, q)
    }

    fn apply_velocity_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, v: VecId, dv: VecId, correction: VecId) -> SimResult {
        if !self.valid {
            return Ok(());
        }
        let (p, q) = self.factors(scene, cp, Apply::Velocity);
        apply_correction(scene, self.state()?, cp, Apply::Velocity, VecId::POSITION, v, dv, correction, p, q)
    }

    // ----- unbuilt path (§1.7): `end` is inclusive, as SOFA's `[c, c + l − 1]`.

    fn reset_for_unbuilt_resolution(&mut self, scene: &mut Scene, _cp: &ConstraintParams, f: &[f64], _sequence: &mut Vec<usize>) -> SimResult {
        let s = self.state()?;
        let ds = self.ds();
        let n = scene.store.get(s).size * ds;
        self.constraint_disp.clear();
        self.constraint_disp.resize(n, 0.0);
        self.constraint_force.clear();
        self.constraint_force.resize(n, 0.0);
        for row in scene.store.get(s).constraint.all_rows() {
            let fr = f.get(row.id).copied().unwrap_or(0.0);
            if fr == 0.0 {
                continue;
            }
            for (dof, b) in row.entries() {
                for (k, x) in b.iter().enumerate() {
                    self.constraint_force[dof * ds + k] += x * fr;
                }
            }
        }
        Ok(())
    }

    fn has_constraint_number(&self, scene: &Scene, row: usize) -> bool {
        self.state.is_some_and(|s| scene.store.get(s).constraint.row(row).next().is_some())
    }

    fn add_block_diagonal_compliance(
        &mut self,
        scene: &mut Scene,
        _cp: &ConstraintParams,
        w: &mut DenseMatrix,
        begin: usize,
        end: usize,
    ) -> SimResult {
        if !self.valid {
            return Ok(());
        }
        add_compliance(&self.compliance, scene.store.get(self.state()?).constraint.rows_in(begin..=end), w)
    }

    // The unbuilt solvers call these two once per contact and iteration: they read the rows
    // `begin..=end` in place (one binary search into the state's compressed rows), not a copy of
    // every row of the state.
    fn add_constraint_displacement(&mut self, scene: &mut Scene, d: &mut [f64], begin: usize, end: usize) -> SimResult {
        let ds = self.ds();
        add_displacement(&scene.store.get(self.state()?).constraint, ds, &self.constraint_disp, d, begin, end);
        Ok(())
    }

    fn set_constraint_dforce(&mut self, scene: &mut Scene, df: &[f64], begin: usize, end: usize, update: bool) -> SimResult {
        if !update {
            return Ok(());
        }
        let ds = self.ds();
        let rows = &scene.store.get(self.state()?).constraint;
        add_dforce(rows, ds, &self.compliance, &mut self.constraint_force, &mut self.constraint_disp, df, begin, end);
        Ok(())
    }

    // ----- LCP path (§1.6).

    fn reset_contact_force(&mut self, scene: &mut Scene) -> SimResult {
        reset_contact_force(scene, self.state()?, VecId::EXTERNAL_FORCE)
    }

    fn apply_contact_force(&mut self, scene: &mut Scene, cp: &ConstraintParams, lambda: &[f64]) -> SimResult {
        if !self.valid {
            return Ok(());
        }
        let s = self.state()?;
        let ds = self.ds();
        let st = scene.store.get_mut(s);
        let mut ext = st.take(VecId::EXTERNAL_FORCE);
        for row in st.constraint.all_rows() {
            let l = lambda.get(row.id).copied().unwrap_or(0.0);
            if l == 0.0 {
                continue;
            }
            for (dof, b) in row.entries() {
                for (k, x) in b.iter().enumerate() {
                    ext[dof * ds + k] += x * l;
                }
            }
        }
        let out = st.write(VecId::DX);
        for (i, (o, fi)) in out.chunks_exact_mut(ds).zip(ext.chunks_exact(ds)).enumerate() {
            self.compliance.dx(i, fi, o);
        }
        st.put(VecId::EXTERNAL_FORCE, ext);
        let (p, q) = self.factors(scene, cp, Apply::Motion);
        let lcp = ConstraintParams { x: VecId::FREE_POSITION, v: VecId::FREE_VELOCITY, ..*cp };
        apply_correction(scene, s, &lcp, Apply::Motion, VecId::POSITION, VecId::VELOCITY, VecId::DX, VecId::DX, p, q)
    }
}
