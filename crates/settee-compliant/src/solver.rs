//! `CompliantImplicitSolver` (compliant spec §3): one assembled implicit step of the Compliant
//! formulation.
//!
//! Each step: forces (compliances are not evaluated) → geometric stiffness → assembly of
//! `[[H, −Jᵀ],[J, C']]` (`H = M − hαB − h²αβK`, `C' = C/(h²αβ)`) → activation masks → KKT
//! factorization → stabilization (correction) pass → dynamics pass → integration
//! `x += βh·v` → optional constraint-force output and post-stabilization.

use settee_core::compliant::{assemble_system, AssembledSystem, KktSolver};
use settee_core::component::OdeSolver;
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::role;
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimError, SimResult, VecId, VecKind};

use crate::values;

/// Registers the class.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<CompliantImplicitSolver>();
}

const STABILIZATION: &[&str] = &["no stabilization", "pre-stabilization", "post-stabilization rhs", "post-stabilization assembly"];
const FORMULATION: &[&str] = &["vel", "dv", "acc"];
const CONSTRAINT_FORCES: &[&str] = &["no", "add", "clear", "propagate"];

/// The Data of `CompliantImplicitSolver`, which `CompliantNLImplicitSolver` has too (before its
/// own).
#[settee_core::data_group(data = {
    /// α: weight of the end-of-step forces in the velocity update
    implicitVelocity: Real = "1",
    /// β: weight of the end-of-step velocity in the position update
    implicitPosition: Real = "1",
    /// how hard constraints are stabilised (a correction pass before or after the dynamics)
    stabilization: Options(STABILIZATION) = "pre-stabilization",
    /// unknown of the dynamics: the velocity (vel), its change (dv) or the acceleration (acc)
    formulation: Options(FORMULATION) = "vel",
    /// iterative KKT solvers start from the previous solution
    warm_start: Bool = "true",
    /// diagonal relaxation of the correction pass (iterative solvers only)
    stabilization_damping: Real = "1e-7",
    /// write the constraint forces into the force vectors: add, clear (replace) or propagate to the independent states
    constraint_forces: Options(CONSTRAINT_FORCES) = "no",
    /// if false, last step's constraint forces are added to the forces the mappings' geometric stiffness is computed from
    neglecting_compliance_forces_in_geometric_stiffness: Bool = "true",
    /// print the matrices (accepted, no effect)
    debug: Bool = "false",
})]
pub struct CompliantImplicitSolverData;

/// SOFA's `OptionsGroup` reads a text that is not an item name with C's `atoi` (so `"false"` and
/// `"true"` both select item 0); the deprecated `propagate_lambdas="true"` selects
/// `constraint_forces="propagate"`.
pub(crate) fn preparse(attrs: &mut Vec<(String, String)>) {
    fn atoi(s: &str) -> i64 {
        let t = s.trim_start();
        let (sign, digits) = match t.strip_prefix('-') {
            Some(r) => (-1, r),
            None => (1, t.strip_prefix('+').unwrap_or(t)),
        };
        let d: String = digits.chars().take_while(|c| c.is_ascii_digit()).collect();
        sign * d.parse::<i64>().unwrap_or(0)
    }
    let mut propagate = false;
    for (name, value) in attrs.iter_mut() {
        let items = match name.as_str() {
            "stabilization" => STABILIZATION,
            "formulation" => FORMULATION,
            "constraint_forces" => CONSTRAINT_FORCES,
            "propagate_lambdas" => {
                propagate = matches!(value.trim(), "1" | "true");
                continue;
            }
            _ => continue,
        };
        if !items.contains(&value.as_str()) {
            let i = atoi(value);
            if i >= 0 && (i as usize) < items.len() {
                *value = items[i as usize].to_string();
            }
        }
    }
    attrs.retain(|(n, _)| n != "propagate_lambdas");
    if propagate && !attrs.iter().any(|(n, _)| n == "constraint_forces") {
        attrs.push(("constraint_forces".into(), "propagate".into()));
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Stabilization {
    None,
    #[default]
    Pre,
    PostRhs,
    PostAssembly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Formulation {
    #[default]
    Vel,
    Dv,
    Acc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum ForceOutput {
    #[default]
    No,
    Add,
    Clear,
    Propagate,
}

/// Implicit integrator of the Compliant formulation: soft and hard constraints in one assembled KKT system, solved by the KKT solver of its node.
///
/// The solver.
#[component(
    module = "Compliant",
    roles = [OdeSolver],
    inherit = [CompliantImplicitSolverData],
    preparse = preparse,
)]
#[derive(Clone, Default)]
pub struct CompliantImplicitSolver {
    pub(crate) alpha: f64,
    pub(crate) beta: f64,
    pub(crate) stabilization: Stabilization,
    pub(crate) formulation: Formulation,
    warm_start: bool,
    stabilization_damping: f64,
    pub(crate) forces: ForceOutput,
    pub(crate) neglecting: bool,
    pub(crate) kkt: Option<ComponentId>,
    /// Multipliers of the last step on every state (compliant states hold λ): warm start and
    /// geometric stiffness.
    pub(crate) lagrange: Option<VecId>,
    /// The previous `dv`/`acc` solution (warm start of those formulations).
    acc: Vec<f64>,
    /// Constraint rows of the previous step.
    prev_n: usize,
    /// The last assembled system and multipliers (for inspection and tests).
    pub(crate) last: Option<AssembledSystem>,
    pub(crate) last_lambda: Vec<f64>,
}

impl CompliantImplicitSolver {
    /// The system assembled at the last step.
    pub fn last_system(&self) -> Option<&AssembledSystem> {
        self.last.as_ref()
    }

    /// The multipliers of the last dynamics solve, in the system's row order (impulses for the
    /// `vel` and `dv` formulations, forces for `acc`).
    pub fn last_lambda(&self) -> &[f64] {
        &self.last_lambda
    }
}

impl Component for CompliantImplicitSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        type D = CompliantImplicitSolverData;
        let d = cx.data();
        self.alpha = d.get(D::IMPLICIT_VELOCITY);
        self.beta = d.get(D::IMPLICIT_POSITION);
        self.stabilization = match d.get(D::STABILIZATION) {
            "no stabilization" => Stabilization::None,
            "post-stabilization rhs" => Stabilization::PostRhs,
            "post-stabilization assembly" => Stabilization::PostAssembly,
            _ => Stabilization::Pre,
        };
        self.formulation = match d.get(D::FORMULATION) {
            "dv" => Formulation::Dv,
            "acc" => Formulation::Acc,
            _ => Formulation::Vel,
        };
        self.forces = match d.get(D::CONSTRAINT_FORCES) {
            "add" => ForceOutput::Add,
            "clear" => ForceOutput::Clear,
            "propagate" => ForceOutput::Propagate,
            _ => ForceOutput::No,
        };
        self.warm_start = d.get(D::WARM_START);
        self.stabilization_damping = d.get(D::STABILIZATION_DAMPING);
        self.neglecting = d.get(D::NEGLECTING_COMPLIANCE_FORCES_IN_GEOMETRIC_STIFFNESS);
        for (name, v) in [("implicitVelocity", self.alpha), ("implicitPosition", self.beta)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(cx
                    .error(format!("{name} = {v} is outside (0, 1]"))
                    .hint("the implicit factors weigh end-of-step values: 1 is backward Euler, 0.5 the trapezoidal rule"));
            }
        }
        let node = cx.node();
        self.kkt = cx.scene.find_local(node, role::KKT_SOLVER);
        if self.kkt.is_none() {
            return Err(cx
                .error("no KKT solver in this node")
                .hint("add a KKT solver next to the CompliantImplicitSolver, e.g. <LDLTSolver/> (direct) or <MinresSolver/> (iterative)"));
        }
        Ok(())
    }
}

/// Step 4 (§3.3): the activation mask of every projected block, from its value and the current
/// positions of its compliant state.
fn filter_constraints(scene: &Scene, sys: &mut AssembledSystem) {
    for blk in &mut sys.blocks {
        if blk.projector.is_some() {
            let phi = scene.store.get(blk.state).read(VecId::POSITION);
            if let Some(mask) = values::filter(&blk.value, phi, blk.dof_size) {
                blk.mask = mask;
            }
        }
    }
}

/// Runs the KKT solver component `kkt` on `f`, labelling its errors with its position.
pub(crate) fn with_kkt<R>(scene: &mut Scene, kkt: ComponentId, f: impl FnOnce(&mut dyn KktSolver) -> SimResult<R>) -> SimResult<R> {
    let class = scene.entry(kkt).class;
    let r = scene.with_taken(kkt, |obj, _| match class.cast_mut::<dyn KktSolver>(obj) {
        Some(k) => f(k),
        None => Err(SimError::new("this component is not a KKT solver")),
    });
    r.map_err(|mut e| {
        let entry = scene.entry(kkt);
        if e.0.pos.is_none() {
            e.0.pos = entry.pos.clone();
            e.0.subject = Some(entry.label());
        }
        e
    })
}

impl CompliantImplicitSolver {
    /// The scale of the forces in the right-hand side (`h` for `vel`/`dv`, 1 for `acc`).
    fn force_scale(&self, h: f64) -> f64 {
        if self.formulation == Formulation::Acc {
            1.0
        } else {
            h
        }
    }

    /// Step 2 of the spec (§3.3): forces without the compliances, the previous constraint
    /// forces when they feed the geometric stiffness, then each mapping's geometric stiffness.
    pub(crate) fn compute_forces(&self, scene: &mut Scene, scope: &MechScope, h: f64, lagrange: VecId) -> SimResult {
        mech::compute_force(scene, scope, VecId::FORCE, VecId::POSITION, VecId::VELOCITY)?;
        if self.prev_n > 0 && !self.neglecting {
            let s = self.force_scale(h);
            let tmp = scene.store.alloc(&scope.states, VecKind::Deriv);
            let compliant: Vec<_> = self.last.as_ref().map(|sys| sys.blocks.iter().map(|b| b.state).collect()).unwrap_or_default();
            for &st in &compliant {
                if scope.contains_state(st) {
                    let l = scene.store.get(st).read(lagrange).to_vec();
                    scene.store.get_mut(st).write(tmp).copy_from_slice(&l);
                }
            }
            mech::accumulate_up(scene, scope, tmp)?;
            for &st in &scope.states {
                let t = scene.store.get(st).read(tmp).to_vec();
                for (f, l) in scene.store.get_mut(st).write(VecId::FORCE).iter_mut().zip(t) {
                    *f += l / s;
                }
            }
            scene.store.free(&scope.states, tmp);
        }
        mech::update_geometric_stiffness(scene, scope, VecId::FORCE)
    }

    /// Assembly and activation masks (steps 3 and 4).
    pub(crate) fn assemble(&self, scene: &mut Scene, scope: &MechScope, h: f64) -> SimResult<AssembledSystem> {
        let (a, b) = (self.alpha, self.beta);
        let f = Mbk { m: 1.0, b: -h * a, k: -h * h * a * b };
        let mut sys = assemble_system(scene, scope, f, 1.0 / (h * h * a * b), h)?;
        filter_constraints(scene, &mut sys);
        Ok(sys)
    }

    /// The correction right-hand side `[0; ψ_corr]` at the current mapped positions.
    fn correction_rhs(&self, scene: &Scene, sys: &AssembledSystem, h: f64) -> Vec<f64> {
        let mut rhs = vec![0.0; sys.m + sys.n];
        for blk in &sys.blocks {
            let st = scene.store.get(blk.state);
            let out = &mut rhs[sys.m + blk.offset..sys.m + blk.offset + blk.rows];
            values::correction(&blk.value, &blk.mask, st.read(VecId::POSITION), st.read(VecId::VELOCITY), blk.dof_size, h, out);
        }
        rhs
    }

    /// A correction solve: the velocity `v_s` whose integration `x += βh·v_s` corrects the
    /// violation of the stabilised constraints.
    fn correction(&self, scene: &mut Scene, sys: &AssembledSystem, kkt: ComponentId, h: f64) -> SimResult<Vec<f64>> {
        let rhs = self.correction_rhs(scene, sys, h);
        let mut x = vec![0.0; sys.m + sys.n];
        let damping = self.stabilization_damping;
        with_kkt(scene, kkt, |k| k.correct(sys, &mut x, &rhs, damping))?;
        x.truncate(sys.m);
        Ok(x)
    }

    /// `x += βh·dv` on the main states of the scope (`dv` a global vector over the masters).
    pub(crate) fn integrate_positions(&self, scene: &mut Scene, scope: &MechScope, h: f64, x: VecId, dv: &[f64]) -> SimResult {
        let bh = self.beta * h;
        for &(s, off) in &scope.offsets {
            let st = scene.store.get_mut(s);
            let layout = st.layout;
            let mut pos = st.take(x);
            let n = st.size;
            let r = integrate_coords(layout, &mut pos, &dv[off..], n, bh);
            scene.store.get_mut(s).put(x, pos);
            r?;
        }
        Ok(())
    }
}

/// `x ⊕ k·v` on `n` coordinates of `layout` (rotations of rigid frames by the rotation vector).
fn integrate_coords(layout: settee_core::Layout, x: &mut [f64], v: &[f64], n: usize, k: f64) -> SimResult {
    let (cs, ds) = (layout.coord_size(), layout.deriv_size());
    if x.len() < n * cs || v.len() < n * ds {
        return Err(SimError::new("a state changed size during the step"));
    }
    for i in 0..n {
        let (xi, vi) = (&mut x[i * cs..(i + 1) * cs], &v[i * ds..(i + 1) * ds]);
        match layout {
            settee_core::Layout::Rigid3 => {
                for c in 0..3 {
                    xi[c] += k * vi[c];
                }
                let w = [k * vi[3], k * vi[4], k * vi[5]];
                let q = rotate_quat([xi[3], xi[4], xi[5], xi[6]], w);
                xi[3..7].copy_from_slice(&q);
            }
            settee_core::Layout::Rigid2 => {
                xi[0] += k * vi[0];
                xi[1] += k * vi[1];
                xi[2] += k * vi[2];
            }
            _ => {
                for c in 0..cs {
                    xi[c] += k * vi[c];
                }
            }
        }
    }
    Ok(())
}

/// `exp(w)·q` normalised (SOFA's rigid position integration: the rotation vector `w` applied on
/// the left).
fn rotate_quat(q: [f64; 4], w: [f64; 3]) -> [f64; 4] {
    let angle = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
    if angle == 0.0 {
        return q;
    }
    let (s, c) = ((angle / 2.0).sin() / angle, (angle / 2.0).cos());
    let r = [w[0] * s, w[1] * s, w[2] * s, c];
    // Hamilton product r·q, (x, y, z, w) order.
    let p = [
        r[3] * q[0] + r[0] * q[3] + r[1] * q[2] - r[2] * q[1],
        r[3] * q[1] - r[0] * q[2] + r[1] * q[3] + r[2] * q[0],
        r[3] * q[2] + r[0] * q[1] - r[1] * q[0] + r[2] * q[3],
        r[3] * q[3] - r[0] * q[0] - r[1] * q[1] - r[2] * q[2],
    ];
    let norm = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]).sqrt();
    [p[0] / norm, p[1] / norm, p[2] / norm, p[3] / norm]
}

impl OdeSolver for CompliantImplicitSolver {
    fn integration_factors(&self, dt: f64) -> settee_core::constraint::IntegrationFactors {
        settee_core::constraint::IntegrationFactors { position: self.beta * dt, velocity: 1.0 }
    }

    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, h: f64, x_result: VecId, v_result: VecId) -> SimResult {
        let kkt = self.kkt.ok_or_else(|| SimError::new("CompliantImplicitSolver has no KKT solver"))?;
        let lagrange = match self.lagrange {
            Some(id) => {
                mech::realloc(scene, scope, id);
                id
            }
            None => *self.lagrange.insert(scene.store.alloc(&scope.states, VecKind::Deriv)),
        };
        let (alpha, beta) = (self.alpha, self.beta);
        let s = self.force_scale(h);

        // Forces and geometric stiffness; ck = s·f on the masters.
        self.compute_forces(scene, scope, h, lagrange)?;
        let mut ck = Vec::new();
        mech::gather(scene, scope, VecId::FORCE, &mut ck);
        ck.iter_mut().for_each(|v| *v *= s);

        let sys = self.assemble(scene, scope, h)?;
        let (m, n) = (sys.m, sys.n);
        with_kkt(scene, kkt, |k| k.factor(&sys))?;

        // Correction pass before the dynamics.
        let stabilized = self.stabilization != Stabilization::None;
        let v_corr = if n > 0 && self.stabilization == Stabilization::Pre { Some(self.correction(scene, &sys, kkt, h)?) } else { None };

        // Dynamics: initial guess.
        let mut x = vec![0.0; m + n];
        let mut v0 = Vec::new();
        mech::gather(scene, scope, VecId::VELOCITY, &mut v0);
        if self.warm_start {
            match self.formulation {
                Formulation::Vel => x[..m].copy_from_slice(&v0),
                _ if self.acc.len() == m => x[..m].copy_from_slice(&self.acc),
                _ => {}
            }
            for blk in &sys.blocks {
                let l = scene.store.get(blk.state).read(lagrange);
                let k = blk.rows.min(l.len());
                x[m + blk.offset..m + blk.offset + k].copy_from_slice(&l[..k]);
            }
        }

        // Right-hand side, head: ck + (m_f M + b_f B + k_f K)·v, projected.
        let mbk = match self.formulation {
            Formulation::Vel => Mbk { m: 1.0, b: h * (1.0 - alpha), k: h * h * alpha * (1.0 - beta) },
            Formulation::Dv => Mbk { m: 0.0, b: h, k: h * h * alpha },
            Formulation::Acc => Mbk { m: 0.0, b: 1.0, k: h * alpha },
        };
        let tmp = scene.store.alloc(&scope.states, VecKind::Deriv);
        mech::scatter(scene, scope, tmp, &ck);
        let r = mech::add_mbkdx(scene, scope, tmp, VecId::VELOCITY, mbk, true);
        let mut rhs = Vec::new();
        mech::gather(scene, scope, tmp, &mut rhs);
        scene.store.free(&scope.states, tmp);
        r?;
        for (r, &free) in rhs.iter_mut().zip(&sys.free) {
            if !free {
                *r = 0.0;
            }
        }
        // Tail: ψ of each constraint value, adjusted for α, β and the formulation.
        rhs.resize(m + n, 0.0);
        for blk in &sys.blocks {
            let st = scene.store.get(blk.state);
            let (phi, u) = (st.read(VecId::POSITION), st.read(VecId::VELOCITY));
            let out = &mut rhs[m + blk.offset..m + blk.offset + blk.rows];
            values::dynamics(&blk.value, &blk.mask, stabilized, phi, u, blk.dof_size, h, out).map_err(|e| {
                let entry = scene.entry(blk.compliance);
                SimError::new(e).hint(format!("constraint rows of {}", entry.label()))
            })?;
            for (k, o) in out.iter_mut().enumerate() {
                let uk = u.get(k).copied().unwrap_or(0.0);
                if alpha != 1.0 {
                    *o /= alpha;
                }
                match self.formulation {
                    Formulation::Vel => {
                        if beta != 1.0 {
                            *o = (*o - (1.0 - beta) * uk) / beta;
                        }
                    }
                    Formulation::Dv => *o = (*o - uk) / beta,
                    Formulation::Acc => *o = (*o - uk) / (beta * h),
                }
            }
        }
        with_kkt(scene, kkt, |k| k.solve(&sys, &mut x, &rhs))?;

        // Write back: multipliers, velocities, positions.
        self.last_lambda = x[m..].to_vec();
        for blk in &sys.blocks {
            let w = scene.store.get_mut(blk.state).write(lagrange);
            let k = blk.rows.min(w.len());
            w[..k].copy_from_slice(&x[m + blk.offset..m + blk.offset + k]);
        }
        let mut v_new = v0.clone();
        match self.formulation {
            Formulation::Vel => v_new.copy_from_slice(&x[..m]),
            Formulation::Dv => v_new.iter_mut().zip(&x[..m]).for_each(|(v, a)| *v += a),
            Formulation::Acc => v_new.iter_mut().zip(&x[..m]).for_each(|(v, a)| *v += h * a),
        }
        if self.formulation != Formulation::Vel {
            self.acc = x[..m].to_vec();
        }
        // Masters that take no part keep their velocity.
        for (k, &(_, off)) in sys.masters.iter().enumerate() {
            if !sys.mechanical[k] {
                let end = sys.masters.get(k + 1).map_or(m, |o| o.1);
                v_new[off..end].copy_from_slice(&v0[off..end]);
            }
        }
        if x_result != VecId::POSITION {
            mech::v_op(scene, scope, x_result, Some(VecId::POSITION), None, 1.0);
        }
        mech::scatter(scene, scope, v_result, &v_new);
        if let Some(vc) = &v_corr {
            self.integrate_positions(scene, scope, h, x_result, vc)?;
        }
        self.integrate_positions(scene, scope, h, x_result, &v_new)?;

        if n > 0 && self.forces != ForceOutput::No {
            self.write_constraint_forces(scene, scope, &sys, lagrange, h)?;
        }
        self.prev_n = n;
        self.last = Some(sys);

        if n > 0 && matches!(self.stabilization, Stabilization::PostRhs | Stabilization::PostAssembly) {
            self.post_stabilization(scene, scope, kkt, h, x_result, v_result, lagrange)?;
        }
        Ok(())
    }
}

impl CompliantImplicitSolver {
    /// §3.7: the constraint forces `λ/h` (or `λ`) written into the `force` vectors.
    pub(crate) fn write_constraint_forces(&self, scene: &mut Scene, scope: &MechScope, sys: &AssembledSystem, lagrange: VecId, h: f64) -> SimResult {
        let k = if self.formulation == Formulation::Vel { 1.0 / h } else { 1.0 };
        if self.forces == ForceOutput::Propagate {
            for &s in &scope.states {
                scene.store.get_mut(s).write(VecId::FORCE).fill(0.0);
            }
        }
        for blk in &sys.blocks {
            let l = scene.store.get(blk.state).read(lagrange).to_vec();
            let f = scene.store.get_mut(blk.state).write(VecId::FORCE);
            for (fi, li) in f.iter_mut().zip(l) {
                *fi = match self.forces {
                    ForceOutput::Add => *fi + k * li,
                    _ => k * li,
                };
            }
        }
        if self.forces == ForceOutput::Propagate {
            mech::accumulate_up(scene, scope, VecId::FORCE)?;
            mech::project_response(scene, scope, VecId::FORCE)?;
        }
        Ok(())
    }

    /// §3.5: the correction pass after the dynamics, at the new positions.
    #[allow(clippy::too_many_arguments)] // the step's vectors and the solver components
    pub(crate) fn post_stabilization(
        &mut self,
        scene: &mut Scene,
        scope: &MechScope,
        kkt: ComponentId,
        h: f64,
        x: VecId,
        v: VecId,
        lagrange: VecId,
    ) -> SimResult {
        mech::project_position_velocity(scene, scope, x, v)?;
        mech::propagate_position_velocity(scene, scope, x, v)?;
        self.compute_forces(scene, scope, h, lagrange)?;
        let mut sys = self.last.take().ok_or_else(|| SimError::new("post-stabilization without a system"))?;
        if self.stabilization == Stabilization::PostAssembly {
            sys = self.assemble(scene, scope, h)?;
            with_kkt(scene, kkt, |k| k.factor(&sys))?;
        } else {
            filter_constraints(scene, &mut sys);
        }
        let vs = self.correction(scene, &sys, kkt, h)?;
        self.integrate_positions(scene, scope, h, x, &vs)?;
        mech::project_position_velocity(scene, scope, x, v)?;
        mech::propagate_position_velocity(scene, scope, x, v)?;
        self.last = Some(sys);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_read_as_sofa_reads_them() {
        let mut a = vec![
            ("stabilization".to_string(), "false".to_string()),
            ("formulation".to_string(), "2".to_string()),
            ("propagate_lambdas".to_string(), "true".to_string()),
        ];
        preparse(&mut a);
        assert_eq!(a[0].1, "no stabilization");
        assert_eq!(a[1].1, "acc");
        assert!(a.iter().any(|(n, v)| n == "constraint_forces" && v == "propagate"));
        assert!(!a.iter().any(|(n, _)| n == "propagate_lambdas"));
    }

    #[test]
    fn quaternion_integration_turns_about_the_rotation_vector() {
        let q = rotate_quat([0.0, 0.0, 0.0, 1.0], [0.0, 0.0, std::f64::consts::FRAC_PI_2]);
        let s = std::f64::consts::FRAC_1_SQRT_2;
        assert!((q[2] - s).abs() < 1e-15 && (q[3] - s).abs() < 1e-15);
    }
}
