//! Lagrangian constraints: the roles and the shared stages of SOFA's constraint pipeline
//! (lagrangian-solvers spec §1.6, §2.2–2.3, §4; lagrangian-constraints spec §0).
//!
//! A step of FreeMotionAnimationLoop poses `d = δfree + W·λ` with the laws of each block:
//! - [`ConstraintLaw`]s write Jacobian rows on the states they act on (often mapped states),
//!   the violation `δfree` evaluated at the free state, and one [`ConstraintResolution`] per block;
//! - the rows are carried up through the mappings to the independent states and projected by
//!   their projective constraints;
//! - [`ConstraintCorrection`]s give each object's compliance `W_obj = factor·J·A⁻¹·Jᵀ` and turn
//!   the multipliers back into motion;
//! - a [`ConstraintSolver`] drives all of it and solves for `λ`.
//!
//! The stage functions below are the parts every solver shares (building the rows, the
//! violation, the resolutions, storing `Jᵀλ`), so that a solver only says how it builds `W` and
//! how it iterates.

use crate::constraint_rows::ConstraintRows;
use crate::diag::{SimError, SimResult};
use crate::mechanics;
use crate::mechanics::{Mapping, ProjectiveConstraint};
use crate::scratch::{SmallVec, StateSet};
// Solver-side types of the constraint stages, defined with the linear-solver role they serve.
pub use crate::mechanics::{ConstraintJacobian, DenseMatrix, IntegrationFactors};
use crate::scene::{ComponentId, Scene};
use crate::state::{StateId, VecId};

/// At which level the constraint problem is posed (SOFA's `ConstraintOrder`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstraintOrder {
    Pos,
    Vel,
    PosAndVel,
}

/// What a constraint stage reads and writes (SOFA's `ConstraintParams`).
#[derive(Clone, Copy, Debug)]
pub struct ConstraintParams {
    /// Positions and velocities the violation is evaluated at (the free ones in a step).
    pub x: VecId,
    pub v: VecId,
    /// The solver's corrective-motion vector (`C`, SOFA's `constraint_dx`).
    pub dx: VecId,
    /// The solver's `Jᵀλ` vector (`Λ`, SOFA's `lambda`).
    pub lambda: VecId,
    pub order: ConstraintOrder,
    pub dt: f64,
    /// Context time during the step (SOFA keeps `t0` until the end of the step).
    pub time: f64,
}

/// What a resolution enforces on its block, for exports of the problem and for the solution
/// metrics (complementarity error, cone violation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ResolutionKind {
    /// One row, `λ ≥ 0`, `d ≥ 0`, `λ·d = 0` (frictionless contact).
    Unilateral,
    /// Rows (normal, tangent, tangent): unilateral on the normal, `‖λ_t‖ ≤ μ·λ_n`.
    Friction { mu: f64 },
    /// Equality rows, `d = 0` (any block size).
    Bilateral,
    /// Any other local law (stoppers, custom resolutions).
    Other,
}

impl ResolutionKind {
    /// The short name used in exported problems: `unilateral`, `friction`, `bilateral`, `other`.
    pub fn name(&self) -> &'static str {
        match self {
            ResolutionKind::Unilateral => "unilateral",
            ResolutionKind::Friction { .. } => "friction",
            ResolutionKind::Bilateral => "bilateral",
            ResolutionKind::Other => "other",
        }
    }
    /// The friction coefficient (0 for every kind but `Friction`).
    pub fn mu(&self) -> f64 {
        match self {
            ResolutionKind::Friction { mu } => *mu,
            _ => 0.0,
        }
    }
}

/// The local law of one block of rows (SOFA's `ConstraintResolution`): given the block's current
/// violation, update its multipliers in place.
pub trait ConstraintResolution: Send + Sync + CloneResolution {
    /// Rows of the block.
    fn nb_lines(&self) -> usize;
    /// What the block enforces (exports, metrics); `Other` unless the resolution says.
    fn describe(&self) -> ResolutionKind {
        ResolutionKind::Other
    }
    /// A block-specific tolerance for the Gauss-Seidel error measure (0: none).
    fn tolerance(&self) -> f64 {
        0.0
    }
    /// Called once per solve before iterating; may precompute from the diagonal block of `W`
    /// and write a warm start into `lambda[line..]`.
    fn init(&mut self, _line: usize, _w: &DenseMatrix, _lambda: &mut [f64]) {}
    /// `d[line..line+nb]` is the block's violation including its own current `λ`; update
    /// `lambda[line..line+nb]` (incremental form). May change `d` inside the block.
    fn resolution(&mut self, line: usize, w: &DenseMatrix, d: &mut [f64], lambda: &mut [f64], dfree: &[f64]);
}

/// Copies a boxed resolution (its warm start goes with it): written for every `Clone`
/// resolution, so that a solver's problem, and with it the scene, can be copied.
pub trait CloneResolution {
    fn clone_box(&self) -> Box<dyn ConstraintResolution>;
}

impl<T: ConstraintResolution + Clone + 'static> CloneResolution for T {
    fn clone_box(&self) -> Box<dyn ConstraintResolution> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn ConstraintResolution> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The constraint problem of one step (SOFA's `GenericConstraintProblem`).
#[derive(Clone, Default)]
pub struct ConstraintProblem {
    pub n: usize,
    pub w: DenseMatrix,
    pub dfree: Vec<f64>,
    /// The multipliers (SOFA's `f`).
    pub lambda: Vec<f64>,
    /// Working violation.
    pub d: Vec<f64>,
    /// One resolution per block, at the block's first row; `None` elsewhere.
    pub resolutions: Vec<Option<Box<dyn ConstraintResolution>>>,
    pub tolerance: f64,
    pub max_iterations: usize,
    pub scale_tolerance: bool,
    pub all_verified: bool,
    pub sor: f64,
    pub current_error: f64,
    pub current_iterations: usize,
    /// Error after each iteration of the last solve.
    pub error_history: Vec<f64>,
    /// The laws of the problem, with their first row and row count, in row order.
    pub laws: Vec<LawRows>,
}

/// Where a law's rows sit in the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LawRows {
    pub law: ComponentId,
    pub first: usize,
    pub count: usize,
}

impl ConstraintProblem {
    /// Resizes every vector to `n` rows and zero-fills them; drops the resolutions.
    pub fn clear(&mut self, n: usize) {
        self.w.clear(n);
        self.clear_vectors(n);
    }

    /// As [`ConstraintProblem::clear`] for a solver that never assembles W (SOFA's unbuilt
    /// paths): W is left empty instead of zeroed at n×n every step.
    pub fn clear_unassembled(&mut self, n: usize) {
        self.w.clear(0);
        self.clear_vectors(n);
    }

    fn clear_vectors(&mut self, n: usize) {
        self.n = n;
        for v in [&mut self.dfree, &mut self.lambda, &mut self.d] {
            v.clear();
            v.resize(n, 0.0);
        }
        self.resolutions.clear();
        self.resolutions.resize_with(n, || None);
        self.current_error = 0.0;
        self.current_iterations = 0;
        self.error_history.clear();
    }

    /// Block starts in row order with their sizes (`j := 0; while j < n: j += nb`).
    pub fn blocks(&self) -> Vec<(usize, usize)> {
        self.block_iter().collect()
    }

    /// [`Self::blocks`] without a list.
    pub fn block_iter(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mut j = 0;
        std::iter::from_fn(move || {
            let r = self.resolutions.get(j).filter(|_| j < self.n)?.as_ref()?;
            let nb = r.nb_lines().max(1);
            let block = (j, nb);
            j += nb;
            Some(block)
        })
    }

    /// SOFA's tolerance rule: `tolerance·n` when `scaleTolerance` and not `allVerified`.
    pub fn effective_tolerance(&self) -> f64 {
        if self.scale_tolerance && !self.all_verified {
            self.tolerance * self.n as f64
        } else {
            self.tolerance
        }
    }

    /// `W_ii += ε` for every row when `ε` exceeds the machine epsilon (SOFA's base regularisation).
    pub fn add_regularization(&mut self, epsilon: f64) {
        if epsilon > f64::EPSILON {
            for i in 0..self.n {
                self.w.add(i, i, epsilon);
            }
        }
    }
}

/// The vectors a law reads while it writes its rows: the positions of its states (`position`,
/// SOFA evaluates Jacobians at the start-of-step state) and their constraint rows. Two equal
/// states are lent once: the vectors then have a single entry.
pub struct ConstraintBuildIo<'a> {
    pub x: SmallVec<[&'a [f64]; 4]>,
    pub rows: SmallVec<[&'a mut ConstraintRows; 4]>,
}

/// The vectors a law reads to compute its violation: positions and velocities at the constraint
/// parameters' ids (the free state in a step), and the rows it wrote.
pub struct ViolationIo<'a> {
    pub x: SmallVec<[&'a [f64]; 4]>,
    pub v: SmallVec<[&'a [f64]; 4]>,
    pub rows: SmallVec<[&'a ConstraintRows; 4]>,
}

/// A Lagrangian constraint law (SOFA's `BaseConstraintSet` / `LagrangianConstraint`).
pub trait ConstraintLaw {
    /// The states it acts on (one, or two for pair constraints).
    fn states(&self) -> StateSet;
    /// Start of a constraint build (SOFA's `resetConstraint`).
    fn reset_constraint(&mut self) {}
    /// Appends its rows, numbered from `first_row`, to the states' rows; returns how many.
    fn build_constraint_matrix(&mut self, cp: &ConstraintParams, io: &mut ConstraintBuildIo, first_row: usize) -> SimResult<usize>;
    /// Writes the violation of its rows (`dfree` holds exactly its rows).
    fn constraint_violation(&mut self, cp: &ConstraintParams, io: &ViolationIo, dfree: &mut [f64]) -> SimResult;
    /// Its resolutions in row order; their line counts add up to its row count.
    fn resolutions(&mut self, cp: &ConstraintParams, out: &mut Vec<Box<dyn ConstraintResolution>>);
    /// The multipliers of its rows after a solve (outputs, warm starts for the next step).
    fn store_lambda(&mut self, _cp: &ConstraintParams, _lambda: &[f64], _converged: bool) {}
    /// Whether `Jᵀλ` of its states goes into the solver's `Λ` vector (SlidingLagrangianConstraint: no).
    fn stores_lambda_in_states(&self) -> bool {
        true
    }
}

impl IntegrationFactors {
    /// SOFA's `correctionFactor`: the position factor for POS and POS_AND_VEL, the velocity
    /// factor for VEL.
    pub fn for_order(self, order: ConstraintOrder) -> f64 {
        match order {
            ConstraintOrder::Pos | ConstraintOrder::PosAndVel => self.position,
            ConstraintOrder::Vel => self.velocity,
        }
    }
}

/// A constraint correction: the compliance of an object in constraint space, and the motion
/// that multipliers cause (SOFA's `BaseConstraintCorrection`).
pub trait ConstraintCorrection {
    /// The states it corrects.
    fn states(&self) -> crate::StateSet;
    /// `W += factor·J·A⁻¹·Jᵀ` (+ its regularisation), `J` the rows of its states.
    fn add_compliance_in_constraint_space(&mut self, scene: &mut Scene, cp: &ConstraintParams, w: &mut DenseMatrix) -> SimResult;
    /// `Λ += Jᵀλ` on its states, then `dx := correction(Λ)` (SOFA's default
    /// `computeMotionCorrectionFromLambda`).
    fn compute_motion_correction_from_lambda(&mut self, scene: &mut Scene, cp: &ConstraintParams, lambda: &[f64]) -> SimResult {
        for s in self.states() {
            add_jt_lambda(scene, s, cp.lambda, lambda);
        }
        self.compute_motion_correction(scene, cp, cp.dx, cp.lambda)
    }
    /// `dx := correction(f)` for a force `f` on its states (`A⁻¹·f`, a compliance times `f`…).
    fn compute_motion_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, dx: VecId, f: VecId) -> SimResult;
    /// `x := x_free ⊕ p·corr`, `v := v_free + q·corr`, `dx := p·corr`.
    fn apply_motion_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, v: VecId, dx: VecId, correction: VecId) -> SimResult;
    /// `x := x_free ⊕ p·corr`, `dx := p·corr`.
    fn apply_position_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, dx: VecId, correction: VecId) -> SimResult;
    /// `v := v_free + q·corr`, `dv := q·corr`.
    fn apply_velocity_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, v: VecId, dv: VecId, correction: VecId) -> SimResult;

    // The unbuilt path (UnbuiltGaussSeidelConstraintSolver, LCP without a built W).
    fn reset_for_unbuilt_resolution(&mut self, _scene: &mut Scene, _cp: &ConstraintParams, _f: &[f64], _sequence: &mut Vec<usize>) -> SimResult {
        Ok(())
    }
    fn has_constraint_number(&self, _scene: &Scene, _row: usize) -> bool {
        true
    }
    fn add_block_diagonal_compliance(
        &mut self,
        _scene: &mut Scene,
        _cp: &ConstraintParams,
        _w: &mut DenseMatrix,
        _begin: usize,
        _end: usize,
    ) -> SimResult {
        Ok(())
    }
    fn add_constraint_displacement(&mut self, _scene: &mut Scene, _d: &mut [f64], _begin: usize, _end: usize) -> SimResult {
        Ok(())
    }
    fn set_constraint_dforce(&mut self, _scene: &mut Scene, _df: &[f64], _begin: usize, _end: usize, _update: bool) -> SimResult {
        Ok(())
    }

    // LCPConstraintSolver's path.
    fn reset_contact_force(&mut self, _scene: &mut Scene) -> SimResult {
        Ok(())
    }
    fn apply_contact_force(&mut self, _scene: &mut Scene, _cp: &ConstraintParams, _lambda: &[f64]) -> SimResult {
        Err(SimError::unsupported("this constraint correction does not support LCPConstraintSolver"))
    }
}

/// A constraint solver, called by FreeMotionAnimationLoop once per step.
pub trait ConstraintSolver {
    /// The vectors it keeps `C` and `Λ` in (allocated on every state at init).
    fn dx_and_lambda(&self) -> (VecId, VecId);
    /// Builds, solves and applies the constraint problem: positions and velocities are written
    /// into `res1`/`res2` (POS_AND_VEL: position and velocity; VEL: velocity only).
    fn solve_constraint(&mut self, scene: &mut Scene, cp: &ConstraintParams, res1: VecId, res2: Option<VecId>) -> SimResult;
    /// The problem of the last solve with its assembled `W`, its solution and its error history
    /// (for exports and diagnostics); `None` when the solver does not assemble `W` or keeps no
    /// problem.
    fn last_problem(&self) -> Option<&ConstraintProblem> {
        None
    }
}

/// `Λ(s) += J(s)ᵀ·λ` with the rows stored on state `s`.
pub fn add_jt_lambda(scene: &mut Scene, s: StateId, lambda_vec: VecId, lambda: &[f64]) {
    let st = scene.store.get_mut(s);
    let rows = std::mem::take(&mut st.constraint);
    {
        let out = st.write(lambda_vec);
        rows.add_transpose_mul(out, |r| lambda.get(r).copied().unwrap_or(0.0));
    }
    st.constraint = rows;
    st.revision += 1;
}

/// The constraint laws of the scene in SOFA's traversal order (see [`Scene::constraint_laws`]).
pub fn constraint_laws(scene: &mut Scene) -> Vec<ComponentId> {
    scene.constraint_laws().to_vec()
}

crate::graph::plan::compiled_list! {
    /// The constraint laws in SOFA's traversal order.
    LawList(ComponentId)
}

impl Scene {
    /// The constraint laws in SOFA's traversal order (top-down through every active node, object
    /// order inside a node, then the contact laws attached to it), compiled once per structure.
    pub fn constraint_laws(&mut self) -> std::sync::Arc<LawList> {
        self.compiled(
            0,
            |_, _| true,
            |scene, laws: &mut LawList| {
                laws.0.clear();
                let is_law = |c: &ComponentId| scene.entry(*c).initialized && scene.entry(*c).plays(CONSTRAINT_LAW);
                scene.visit_preorder(Scene::ROOT, &mut |n| {
                    laws.0.extend(scene.node(n).objects.iter().copied().filter(is_law));
                    laws.0.extend(scene.contacts.attached_at(n).filter(is_law));
                });
            },
        )
    }
}

/// The constraint corrections below `node`, in scene order (SOFA's solver link order).
pub fn constraint_corrections(scene: &Scene, node: crate::NodeId) -> Vec<ComponentId> {
    let mut out = Vec::new();
    for n in scene.preorder(node) {
        for &c in &scene.node(n).objects {
            if scene.entry(c).plays(crate::constraint::CONSTRAINT_CORRECTION) {
                out.push(c);
            }
        }
    }
    out
}

/// Distinct states in first-appearance order, and for each input state its index there.
fn dedup_states(states: &[StateId]) -> (StateSet, SmallVec<[usize; 4]>) {
    let mut uniq = StateSet::new();
    let mut idx = SmallVec::new();
    for s in states {
        match uniq.iter().position(|u| u == s) {
            Some(i) => idx.push(i),
            None => {
                idx.push(uniq.len());
                uniq.push(*s);
            }
        }
    }
    (uniq, idx)
}

/// SOFA's `buildConstraintMatrix`: clears the rows of every state, lets every law append its
/// rows (numbered in traversal order), then carries them up through the mechanical mappings.
/// Returns the row count; `laws` receives where each law's rows are.
pub fn build_constraint_matrix(scene: &mut Scene, cp: &ConstraintParams, laws: &mut Vec<LawRows>) -> SimResult<usize> {
    for st in scene.store.states.values_mut() {
        st.constraint.clear();
    }
    laws.clear();
    let ids = scene.constraint_laws();
    for &c in ids.iter() {
        scene.with_role::<dyn ConstraintLaw, _>(c, |law, _| {
            law.reset_constraint();
            Ok(())
        })?;
    }
    let mut counter = 0usize;
    for &c in ids.iter() {
        let count = scene
            .with_role::<dyn ConstraintLaw, _>(c, |law, scene| {
                let (uniq, _) = dedup_states(&law.states());
                for s in &uniq {
                    if !scene.store.contains(*s) {
                        return Err(SimError::new("the constraint's mechanical state no longer exists"));
                    }
                }
                let mut rows: SmallVec<[ConstraintRows; 4]> = uniq.iter().map(|s| std::mem::take(&mut scene.store.get_mut(*s).constraint)).collect();
                let r = {
                    let x = uniq.iter().map(|s| scene.store.get(*s).read(VecId::POSITION)).collect();
                    let mut io = ConstraintBuildIo { x, rows: rows.iter_mut().collect() };
                    law.build_constraint_matrix(cp, &mut io, counter)
                };
                for (s, r) in uniq.iter().zip(rows) {
                    scene.store.get_mut(*s).constraint = r;
                }
                r
            })
            .map_err(|e| crate::graph::scene::positioned(scene, c, e))?;
        laws.push(LawRows { law: c, first: counter, count });
        counter += count;
    }
    let scope = scene.scope(Scene::ROOT);
    mechanics::propagate_constraint_rows_up(scene, &scope)?;
    Ok(counter)
}

/// SOFA's `applyProjectiveConstraintOnConstraintMatrix`: every projective constraint of an
/// independent state projects each row of that state as it projects a response.
pub fn project_constraint_rows(scene: &mut Scene) -> SimResult {
    let scope = scene.scope(Scene::ROOT);
    let p = scene.params(Scene::ROOT);
    for &c in &scope.projective {
        let pc = scene.components[c].role_mut::<dyn ProjectiveConstraint>().expect("projective role");
        // A constraint between two states leaves the constraint rows alone (SOFA's
        // AttachProjectiveConstraint::projectJacobianMatrix does nothing).
        if pc.first_state().is_some() {
            continue;
        }
        let s = pc.state();
        if scene.store.get(s).mapped || scene.store.get(s).constraint.is_empty() {
            continue;
        }
        let ds = scene.store.get(s).layout.deriv_size();
        let n = scene.store.get(s).size;
        let mut rows = std::mem::take(&mut scene.store.get_mut(s).constraint);
        let proj = scene.components[c].role_mut::<dyn ProjectiveConstraint>().expect("projective role");
        let mut dense = vec![0.0; n * ds];
        rows.map_rows(|entries| {
            for (dof, block) in entries.iter() {
                dense[dof * ds..dof * ds + ds].copy_from_slice(block);
            }
            proj.project_response(&p, &mut dense);
            for (dof, block) in entries.iter_mut() {
                block.copy_from_slice(&dense[*dof * ds..*dof * ds + ds]);
                dense[*dof * ds..*dof * ds + ds].fill(0.0);
            }
        });
        scene.store.get_mut(s).constraint = rows;
    }
    Ok(())
}

/// SOFA's `getConstraintViolation`: every law writes its rows of `dfree`, evaluated at
/// `cp.x`/`cp.v`.
pub fn constraint_violation(scene: &mut Scene, cp: &ConstraintParams, laws: &[LawRows], dfree: &mut [f64]) -> SimResult {
    for lr in laws {
        let out = &mut dfree[lr.first..lr.first + lr.count];
        scene
            .with_role::<dyn ConstraintLaw, _>(lr.law, |law, scene| {
                let (uniq, _) = dedup_states(&law.states());
                let io = ViolationIo {
                    x: uniq.iter().map(|s| scene.store.get(*s).read(cp.x)).collect(),
                    v: uniq.iter().map(|s| scene.store.get(*s).read(cp.v)).collect(),
                    rows: uniq.iter().map(|s| &scene.store.get(*s).constraint).collect(),
                };
                law.constraint_violation(cp, &io, out)
            })
            .map_err(|e| crate::graph::scene::positioned(scene, lr.law, e))?;
    }
    Ok(())
}

/// SOFA's `MechanicalGetConstraintResolutionVisitor`: each law's resolutions, stored at the
/// first row of their block.
pub fn collect_resolutions(scene: &mut Scene, cp: &ConstraintParams, problem: &mut ConstraintProblem) -> SimResult {
    let mut buf: Vec<Box<dyn ConstraintResolution>> = Vec::new();
    for i in 0..problem.laws.len() {
        let lr = problem.laws[i];
        buf.clear();
        scene.with_role::<dyn ConstraintLaw, _>(lr.law, |law, _| {
            law.resolutions(cp, &mut buf);
            Ok(())
        })?;
        let mut line = lr.first;
        for r in buf.drain(..) {
            let nb = r.nb_lines();
            if nb == 0 || line + nb > lr.first + lr.count {
                return Err(crate::graph::scene::positioned(
                    scene,
                    lr.law,
                    SimError::new(format!("the constraint's resolutions cover more rows than the {} it wrote", lr.count)),
                ));
            }
            problem.resolutions[line] = Some(r);
            line += nb;
        }
        if line != lr.first + lr.count {
            return Err(crate::graph::scene::positioned(
                scene,
                lr.law,
                SimError::new(format!("the constraint wrote {} rows but gave resolutions for {}", lr.count, line - lr.first)),
            ));
        }
    }
    Ok(())
}

/// Gives every law the multipliers of its rows (SOFA's resolution `store`).
pub fn store_law_lambdas(scene: &mut Scene, cp: &ConstraintParams, laws: &[LawRows], lambda: &[f64], converged: bool) -> SimResult {
    for lr in laws {
        let l = &lambda[lr.first..lr.first + lr.count];
        scene.with_role::<dyn ConstraintLaw, _>(lr.law, |law, _| {
            law.store_lambda(cp, l, converged);
            Ok(())
        })?;
    }
    Ok(())
}

/// SOFA's `storeConstraintLambdas`: `Λ := 0`, then every law adds `J(s)ᵀλ` for each of its
/// states with the state's whole rows (so a state under k laws receives k copies, as in SOFA),
/// then `Λ` is carried up through the mechanical mappings.
pub fn store_constraint_lambdas(scene: &mut Scene, cp: &ConstraintParams, laws: &[LawRows], lambda: &[f64]) -> SimResult {
    for st in scene.store.states.values_mut() {
        let n = st.size * st.layout.deriv_size();
        let v = st.write(cp.lambda);
        v.clear();
        v.resize(n, 0.0);
    }
    for lr in laws {
        let (states, stores) = {
            let law = scene.components[lr.law].role_mut::<dyn ConstraintLaw>().expect("constraint law role");
            (dedup_states(&law.states()).0, law.stores_lambda_in_states())
        };
        if stores {
            for s in states {
                add_jt_lambda(scene, s, cp.lambda, lambda);
            }
        }
    }
    let scope = scene.scope(Scene::ROOT);
    mechanics::accumulate_up(scene, &scope, cp.lambda)
}

/// One contact given to a contact constraint by a contact response (SOFA's `addContact`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSpec {
    /// Coulomb coefficient (0: frictionless, one row).
    pub mu: f64,
    /// Unit normal from the point on the first model towards the point on the second.
    pub normal: [f64; 3],
    /// Contact distance: the violation is `n·(x2[m2] − x1[m1]) − distance`.
    pub distance: f64,
    /// The contact points. Unilateral law: `p = position₂[m2]`, `q = position₁[m1]` at the time
    /// of the response (SOFA's `addContact` reads them from the states). Bilateral (stick) law:
    /// the detected points on model 1 (`p`) and model 2 (`q`), glued with the offset `q − p`.
    pub p: [f64; 3],
    pub q: [f64; 3],
    /// Indices of the contact points in the two states.
    pub m1: usize,
    pub m2: usize,
    /// Persistent id (stable while the same detection id is produced for the same pair).
    pub id: i64,
    /// The detection output's id.
    pub local_id: i64,
}

/// A constraint law a contact response fills with contacts every step (UnilateralLagrangianConstraint).
pub trait ContactConstraint {
    /// Forgets the contacts of the previous step.
    fn clear_contacts(&mut self);
    fn add_contact(&mut self, c: ContactSpec) -> crate::SimResult;
    /// The tolerance given to the friction resolutions (0: the solver's).
    fn set_custom_tolerance(&mut self, tol: f64);
    /// Becomes as the response made it, with no contact and no history, keeping its buffers, so
    /// that the response can keep it for when its pair collides again; false when the law
    /// cannot (the response then makes a new one).
    fn forget_contacts(&mut self) -> bool {
        false
    }
}

/// The independent states a law's rows reach: its own states, or, for mapped ones, the inputs
/// of their mappings, recursively.
pub fn independent_states_of(scene: &Scene, states: &[StateId]) -> Vec<StateId> {
    let mut out = Vec::new();
    let mut stack: Vec<StateId> = states.to_vec();
    let mut seen = Vec::new();
    while let Some(s) = stack.pop() {
        if seen.contains(&s) || !scene.store.contains(s) {
            continue;
        }
        seen.push(s);
        if !scene.store.get(s).mapped {
            out.push(s);
            continue;
        }
        for (_, e) in scene.components.iter() {
            let Some(m) = e.role::<dyn Mapping>() else { continue };
            if m.is_mechanical() && m.output() == Some(s) {
                stack.extend(m.inputs());
            }
        }
    }
    out
}

/// Constraint laws whose rows reach an independent, simulated state (one an ODE solver
/// integrates) that no constraint correction handles: under FreeMotionAnimationLoop such an
/// object is never corrected (it does not move at all). Fixed obstacles without a solver are
/// not reported.
pub fn uncorrected_laws(scene: &mut Scene) -> Vec<(ComponentId, StateId)> {
    let (simulated, corrected) = simulated_and_corrected(scene);
    let mut out = Vec::new();
    for &law in scene.constraint_laws().iter() {
        let states = match scene.components[law].role_mut::<dyn ConstraintLaw>() {
            Some(l) => l.states(),
            None => continue,
        };
        for s in independent_states_of(scene, &states) {
            if simulated.contains(&s) && !corrected.contains(&s) {
                out.push((law, s));
            }
        }
    }
    out
}

/// The independent states an ODE solver integrates, and those a constraint correction handles.
pub(crate) fn simulated_and_corrected(scene: &mut Scene) -> (Vec<StateId>, Vec<StateId>) {
    let mut simulated: Vec<StateId> = Vec::new();
    let plan = scene.solve_plan();
    for item in plan.iter() {
        if let mechanics::SolveItem::Solve { node, .. } = item {
            simulated.extend(scene.scope(*node).main_states.iter().copied());
        }
    }
    let mut corrected: Vec<StateId> = Vec::new();
    for c in constraint_corrections(scene, Scene::ROOT) {
        if let Some(cc) = scene.components[c].role_mut::<dyn ConstraintCorrection>() {
            corrected.extend(cc.states());
        }
    }
    (simulated, corrected)
}

pub const CONSTRAINT_LAW: crate::graph::role::RoleId = crate::graph::role::RoleId::of::<dyn ConstraintLaw>("ConstraintLaw");
pub const CONTACT_CONSTRAINT: crate::graph::role::RoleId = crate::graph::role::RoleId::of::<dyn ContactConstraint>("ContactConstraint");
pub const CONSTRAINT_CORRECTION: crate::graph::role::RoleId = crate::graph::role::RoleId::of::<dyn ConstraintCorrection>("ConstraintCorrection");
pub const CONSTRAINT_SOLVER: crate::graph::role::RoleId = crate::graph::role::RoleId::of::<dyn ConstraintSolver>("ConstraintSolver");
