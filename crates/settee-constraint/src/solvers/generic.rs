//! The machinery shared by SOFA's modern constraint solvers (`GenericConstraintSolver`,
//! `BuiltConstraintSolver`, `UnbuiltConstraintSolver`; lagrangian-solvers spec §2.2–2.5, §2.13):
//! Data, the Λ and C vectors, building the problem, copying the results to the output Data and
//! applying the corrective motion. Each concrete solver is a [`SolverMethod`].

use settee_core::constraint::{
    build_constraint_matrix, collect_resolutions, constraint_corrections, constraint_violation, project_constraint_rows, store_constraint_lambdas,
    store_law_lambdas, ConstraintCorrection, ConstraintOrder, ConstraintParams, ConstraintProblem, ConstraintSolver, DenseMatrix,
};
use settee_core::data::DataSet;
use settee_core::mechanics::MechScope;
use settee_core::{component, data_group, Component, ComponentId, InitCtx, NodeId, Scene, SimError, SimResult, StateId, VecId, VecKind};

use super::improved_jacobi::ImprovedJacobiData;
use super::{BlockGaussSeidel, ImprovedJacobi, Nncg, PreconditionedConjugateResidual, UnbuiltGaussSeidel};
use crate::corrections::WithCorrection;

/// The constraint forces output of the constraint solvers (the generic ones and
/// `LCPConstraintSolver`).
#[data_group(data = {
    /// OUTPUT: constraint forces (stored only if computeConstraintForces=True)
    constraintForces: Reals,
    /// enable the storage of the constraintForces.
    computeConstraintForces: Bool = "false",
})]
pub struct ConstraintForcesData;

/// Data of the solvers that assemble W (spec §2.4), after the generic ones.
#[data_group(data = {
    /// Build compliances concurrently (accumulated in link order here: same bits as a sequential
    /// build)
    multithreading: Bool = "false",
    /// Use SVD decomposition of the compliance matrix to project singular values smaller than
    /// regularization to the regularization term. Only works with built
    useSVDForRegularization: Bool = "false",
    /// Fraction of the highest singular value bellow which a singular value will be supposed to
    /// belong to the nullspace
    svdSingularValueNullSpaceCriteriaFactor: Real = "0.01",
    /// Absolute value bellow which a component of a normalized base vector will be considered
    /// null
    svdSingularVectorNullSpaceCriteriaFactor: Real = "0.001",
})]
pub struct BuiltData;

/// What a solve reports besides the problem's fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SolveOutcome {
    pub converged: bool,
    /// Whether SOFA's `result_output` ran (it calls the resolutions' `store`): false when n = 0.
    pub stored: bool,
}

/// The unbuilt path's access to the constraint corrections (spec §2.5, §2.7): the displacement
/// `(W λ)` of a block from the corrections' accumulated state, and increments of `λ` given back
/// to them. `end` is inclusive, as in SOFA.
pub trait UnbuiltOps {
    fn add_constraint_displacement(&mut self, block: usize, d: &mut [f64], begin: usize, end: usize) -> SimResult;
    fn set_constraint_dforce(&mut self, block: usize, df: &[f64], begin: usize, end: usize, update: bool) -> SimResult;
}

/// Nothing to give back (the built solvers).
pub struct NoUnbuilt;

impl UnbuiltOps for NoUnbuilt {
    fn add_constraint_displacement(&mut self, _: usize, _: &mut [f64], _: usize, _: usize) -> SimResult {
        Err(SimError::new("this constraint solver has no unbuilt path"))
    }
    fn set_constraint_dforce(&mut self, _: usize, _: &[f64], _: usize, _: usize, _: bool) -> SimResult {
        Err(SimError::new("this constraint solver has no unbuilt path"))
    }
}

/// The per-solve state of the unbuilt path: the visiting order of the rows and, per block start,
/// the corrections that handle it.
#[derive(Default, Clone, Debug)]
pub struct UnbuiltProblem {
    pub sequence: Vec<usize>,
    pub cclist: Vec<Vec<ComponentId>>,
}

/// One constraint solver algorithm plugged into the generic machinery.
pub trait SolverMethod: Default + Send + Sync + 'static {
    /// Whether W is assembled (BuiltConstraintSolver) or only its diagonal blocks (Unbuilt).
    const BUILT: bool = true;
    /// Reads the solver's own Data (beyond the generic ones) before each solve.
    fn read_data(&mut self, _data: &DataSet) {}
    /// SOFA's `doSolve`.
    fn solve(&mut self, problem: &mut ConstraintProblem, unbuilt: &UnbuiltProblem, ops: &mut dyn UnbuiltOps) -> SimResult<SolveOutcome>;
    /// A warning from the last solve, reported positioned at the solver (e.g. ImprovedJacobi
    /// leaving SOFA's iterate).
    fn take_warning(&mut self) -> Option<String> {
        None
    }
}

/// A built [`SolverMethod`] without Data of its own, whose solve is the plain function `$solve`
/// of the problem: `built_method!(/// doc, Name, function)`.
macro_rules! built_method {
    ($(#[$doc:meta])* $name:ident, $solve:path) => {
        $(#[$doc])*
        #[derive(Clone, Default)]
        pub struct $name;

        impl $crate::solvers::generic::SolverMethod for $name {
            fn solve(
                &mut self,
                p: &mut settee_core::constraint::ConstraintProblem,
                _: &$crate::solvers::generic::UnbuiltProblem,
                _: &mut dyn $crate::solvers::generic::UnbuiltOps,
            ) -> settee_core::SimResult<$crate::solvers::generic::SolveOutcome> {
                Ok($solve(p))
            }
        }
    };
}
pub(crate) use built_method;

/// A GenericConstraintSolver descendant: the shared machinery and its algorithm. The shared
/// Data are those of every GenericConstraintSolver descendant (spec §2.3.1); the built solvers
/// add [`BuiltData`]. (`GenericConstraintSolver` itself is refused by the factory with SOFA's
/// migration message, `settee_core::names`.)
#[component(
    roles = [ConstraintSolver],
    data = {
        /// maximal number of iterations of iterative algorithm
        #[alias("maxIt")]
        maxIterations: Int = "1000",
        /// residual error threshold for termination of the Gauss-Seidel algorithm
        tolerance: Real = "0.001",
        /// Successive Over Relaxation parameter (0-2)
        sor: Real = "1",
        /// Add regularization factor times the identity matrix to the compliance W when solving
        /// constraints
        regularizationTerm: Real = "0",
        /// Scale the error tolerance with the number of constraints
        scaleTolerance: Bool = "true",
        /// All constraints must be verified (each constraint's error < tolerance)
        allVerified: Bool = "false",
        /// Compute graphs of errors and forces during resolution
        computeGraphs: Bool = "false",
        /// output: sum of the constraints' errors at each iteration (when computeGraphs)
        graphErrors: Reals,
        /// OUTPUT: current number of constraints
        currentNumConstraints: Int = "0",
        /// OUTPUT: current number of constraint groups
        currentNumConstraintGroups: Int = "0",
        /// OUTPUT: current number of iterations
        currentIterations: Int = "0",
        /// OUTPUT: current error
        currentError: Real = "0",
    },
    class(
        name = "BlockGaussSeidelConstraintSolver", module = "Sofa.Component.Constraint.Lagrangian.Solver",
        description = "A Constraint Solver using the Linear Complementarity Problem formulation to solve Constraint based components using a Block Gauss-Seidel iterative method",
        type = GenericConstraintSolver<BlockGaussSeidel>,
        inherit = [Self, ConstraintForcesData, BuiltData],
    ),
    class(
        name = "NNCGConstraintSolver", module = "Sofa.Component.Constraint.Lagrangian.Solver",
        description = "A Constraint Solver using the Linear Complementarity Problem formulation to solve Constraint based components using the Non-smooth Non-linear Conjugate Gradient method",
        type = GenericConstraintSolver<Nncg>,
        inherit = [Self, ConstraintForcesData, BuiltData],
    ),
    class(
        name = "PreconditionedConjugateResidual", module = "Sofa.Component.Constraint.Lagrangian.Solver",
        description = "A Constraint Solver treating every constraint as bilateral, solved by a Jacobi-preconditioned conjugate residual method",
        type = GenericConstraintSolver<PreconditionedConjugateResidual>,
        inherit = [Self, ConstraintForcesData, BuiltData],
    ),
    class(
        name = "UnbuiltGaussSeidelConstraintSolver", module = "Sofa.Component.Constraint.Lagrangian.Solver",
        description = "A Constraint Solver using the Linear Complementarity Problem formulation to solve Constraint based components using an Unbuilt Gauss-Seidel iterative method",
        type = GenericConstraintSolver<UnbuiltGaussSeidel>,
        inherit = [Self, ConstraintForcesData],
    ),
    class(
        name = "ImprovedJacobiConstraintSolver", module = "Sofa.Component.Constraint.Lagrangian.Solver",
        description = "A Constraint Solver using the Linear Complementarity Problem formulation to solve Constraint based components using a Projected Jacobi iterative method",
        type = GenericConstraintSolver<ImprovedJacobi>,
        inherit = [Self, ConstraintForcesData, BuiltData, ImprovedJacobiData],
    ),
)]
#[derive(Clone, Default)]
pub struct GenericConstraintSolver<M: SolverMethod> {
    pub method: M,
    pub problem: ConstraintProblem,
    pub unbuilt: UnbuiltProblem,
    id: Option<ComponentId>,
    node: Option<NodeId>,
    corrections: Vec<ComponentId>,
    /// The corrections of active nodes, with their index in `corrections`: listed at each
    /// solve, in this list kept between solves.
    active: Vec<(usize, ComponentId)>,
    /// The blocks of the unbuilt path's problem, listed at each solve in this list.
    blocks: Vec<(usize, usize)>,
    lambda: Option<VecId>,
    dx: Option<VecId>,
    /// `useSVDForRegularization` with its two criteria (value, vector), read at every solve.
    svd: Option<(f64, f64)>,
    /// A zero or negative diagonal of W was reported (once per solver).
    warned_singular: bool,
    /// A solve that did not converge was reported (once per solver).
    warned_unconverged: bool,
}

/// Picks the Λ and C vectors: two dynamic deriv vectors that no state of `states` uses, marked on
/// every state so that other allocations avoid them.
pub fn allocate_lambda_and_dx(scene: &mut Scene, states: &[StateId]) -> (VecId, VecId) {
    if states.is_empty() {
        return (VecId::deriv(VecId::FIRST_DYNAMIC_DERIV), VecId::deriv(VecId::FIRST_DYNAMIC_DERIV + 1));
    }
    let lambda = scene.store.alloc(states, VecKind::Deriv);
    // A state of size 0 cannot hold a set vector: keep the second id distinct anyway.
    let mut dx = scene.store.alloc(states, VecKind::Deriv);
    if dx == lambda {
        dx = VecId::deriv(lambda.index + 1);
    }
    (lambda, dx)
}

impl<M: SolverMethod> GenericConstraintSolver<M> {
    fn me(&self) -> SimResult<ComponentId> {
        self.id.ok_or_else(|| SimError::new("constraint solver used before init"))
    }

    /// SOFA's `prepareStates`: (re)allocate Λ and C on every state below the solver, zeroed.
    pub fn prepare_states(&mut self, scene: &mut Scene) -> SimResult {
        let node = self.node.ok_or_else(|| SimError::new("constraint solver used before init"))?;
        // The states of the subtree, mapped included: the compiled scope's (this runs at every
        // step).
        let scope = scene.scope(node);
        if self.lambda.is_none() {
            let (l, d) = allocate_lambda_and_dx(scene, &scope.states);
            self.lambda = Some(l);
            self.dx = Some(d);
        }
        let (l, d) = (self.lambda.unwrap(), self.dx.unwrap());
        for &s in &scope.states {
            let st = scene.store.get_mut(s);
            st.write(l).fill(0.0);
            st.write(d).fill(0.0);
        }
        Ok(())
    }

    /// The corrections of active nodes, in a list to give back to `self.active`.
    fn active_corrections(&mut self, scene: &Scene) -> Vec<(usize, ComponentId)> {
        let mut active = std::mem::take(&mut self.active);
        active.clear();
        active.extend(
            self.corrections
                .iter()
                .enumerate()
                .filter(|(_, c)| scene.contains(**c) && scene.node(scene.components[**c].node).activated)
                .map(|(i, c)| (i, *c)),
        );
        active
    }

    /// SOFA's `buildSystem` (spec §2.3.4) with the built (§2.4) or unbuilt (§2.5) assembly.
    pub fn build_system(&mut self, scene: &mut Scene, cp: &ConstraintParams, regularization: f64) -> SimResult {
        let mut laws = std::mem::take(&mut self.problem.laws);
        let n = build_constraint_matrix(scene, cp, &mut laws)?;
        project_constraint_rows(scene)?;
        self.problem.clear(n);
        self.problem.laws = laws;
        constraint_violation(scene, cp, &self.problem.laws, &mut self.problem.dfree)?;
        collect_resolutions(scene, cp, &mut self.problem)?;
        let corrections = self.active_corrections(scene);
        let r = self.build_with(scene, cp, regularization, &corrections);
        self.active = corrections;
        r
    }

    fn build_with(&mut self, scene: &mut Scene, cp: &ConstraintParams, regularization: f64, corrections: &[(usize, ComponentId)]) -> SimResult {
        let n = self.problem.n;
        if M::BUILT {
            add_compliances(scene, cp, corrections.iter().map(|&(_, c)| c), &mut self.problem.w)?;
            if !self.problem.w.is_empty() {
                match self.svd {
                    Some((value_factor, vector_factor)) => {
                        svd_regularization(&mut self.problem.w, regularization, value_factor, vector_factor);
                    }
                    None => self.problem.add_regularization(regularization),
                }
            }
        } else {
            self.unbuilt.sequence.clear();
            self.unbuilt.sequence.extend(0..n);
            for &(_, c) in corrections {
                let f = &self.problem.lambda;
                let seq = &mut self.unbuilt.sequence;
                scene.with_correction(c, |corr, scene| match corr {
                    Some(cc) => cc.reset_for_unbuilt_resolution(scene, cp, f, seq),
                    None => Ok(()),
                })?;
            }
            // Each row's list keeps its memory from the last solve.
            self.unbuilt.cclist.iter_mut().for_each(Vec::clear);
            self.unbuilt.cclist.resize_with(n, Vec::new);
            let mut blocks = std::mem::take(&mut self.blocks);
            blocks.clear();
            blocks.extend(self.problem.block_iter());
            for &(c, nb) in &blocks {
                let mut handled = false;
                for &(_, cc) in corrections {
                    let w = &mut self.problem.w;
                    let has = scene.with_correction(cc, |corr, scene| -> SimResult<bool> {
                        let Some(corr) = corr else { return Ok(false) };
                        if !corr.has_constraint_number(scene, c) {
                            return Ok(false);
                        }
                        corr.add_block_diagonal_compliance(scene, cp, w, c, c + nb - 1)?;
                        Ok(true)
                    })?;
                    if has {
                        self.unbuilt.cclist[c].push(cc);
                        handled = true;
                    }
                }
                if !handled {
                    scene.report(settee_core::diag::Diagnostic::error(format!(
                        "no constraint correction handles the constraint rows starting at {c}"
                    )));
                }
            }
            self.blocks = blocks;
            // SOFA regularises W and its copy Wdiag: here the diagonal blocks live in W only.
            self.problem.add_regularization(regularization);
        }
        Ok(())
    }

    /// SOFA's `applyCorrection` (spec §2.3.6).
    pub fn apply_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, res1: VecId, res2: Option<VecId>) -> SimResult {
        let (l, d) = (self.lambda.unwrap(), self.dx.unwrap());
        let cp = ConstraintParams { lambda: l, dx: d, ..*cp };
        let active = self.active_corrections(scene);
        let r = active.iter().try_for_each(|&(_, c)| {
            let lambda = &self.problem.lambda;
            on_correction(scene, c, |cc, scene| {
                cc.compute_motion_correction_from_lambda(scene, &cp, lambda)?;
                match cp.order {
                    ConstraintOrder::PosAndVel => {
                        let v = res2.ok_or_else(|| SimError::new("POS_AND_VEL correction needs a velocity result vector"))?;
                        cc.apply_motion_correction(scene, &cp, res1, v, d, d)
                    }
                    ConstraintOrder::Pos => cc.apply_position_correction(scene, &cp, res1, d, d),
                    ConstraintOrder::Vel => cc.apply_velocity_correction(scene, &cp, res1, d, d),
                }
            })
        });
        self.active = active;
        r?;
        store_constraint_lambdas(scene, &cp, &self.problem.laws, &self.problem.lambda)
    }
}

/// BuiltConstraintSolver's SVD regularisation (lagrangian-solvers spec §2.4): only the rows
/// taking part in W's near-null space get `W_jj += regularization`. With the singular values
/// `σ_0 ≥ σ_1 ≥ …` of W, the null space starts at the first `i` with `|σ_i| < |σ_0|·value_factor`;
/// row `j` is marked when a right singular vector `i` of that space has `|V_ji| > vector_factor`.
/// Nothing happens when `regularization ≤ ε` or no singular value is small. Returns the marked
/// rows.
///
/// SOFA hands its row-major buffer to Eigen as a column-major matrix, i.e. it decomposes `Wᵀ`;
/// the same is done here (identical for the symmetric W of a step up to the singular vectors'
/// signs, which the absolute values drop).
pub fn svd_regularization(w: &mut DenseMatrix, regularization: f64, value_factor: f64, vector_factor: f64) -> Vec<usize> {
    let n = w.n;
    if regularization <= f64::EPSILON || n == 0 {
        return Vec::new();
    }
    let wt = nalgebra::DMatrix::from_column_slice(n, n, &w.data);
    // `SVD::new` sorts the singular values in decreasing order.
    let svd = nalgebra::linalg::SVD::new(wt, false, true);
    let Some(v_t) = svd.v_t.as_ref() else { return Vec::new() };
    let sigma = &svd.singular_values;
    let threshold = sigma[0].abs() * value_factor;
    let Some(k0) = (0..n).find(|&i| sigma[i].abs() < threshold) else { return Vec::new() };
    // Column i of V is row i of Vᵀ.
    let marked: Vec<usize> = (0..n).filter(|&j| (k0..n).any(|i| v_t[(i, j)].abs() > vector_factor)).collect();
    for &j in &marked {
        w.add(j, j, regularization);
    }
    marked
}

/// Writes the solve's outputs into the solver's Data (SOFA's `solveSystem` tail).
fn publish<M: SolverMethod>(data: &mut DataSet, p: &ConstraintProblem, compute_forces: bool, graphs: bool) {
    data.put(GenericConstraintSolver::<M>::CURRENT_ERROR, p.current_error);
    data.put(GenericConstraintSolver::<M>::CURRENT_ITERATIONS, p.current_iterations as i64);
    data.put(GenericConstraintSolver::<M>::CURRENT_NUM_CONSTRAINTS, p.n as i64);
    data.put(GenericConstraintSolver::<M>::CURRENT_NUM_CONSTRAINT_GROUPS, p.block_iter().count() as i64);
    if compute_forces {
        data.put(ConstraintForcesData::CONSTRAINT_FORCES, p.lambda.clone());
    }
    if graphs {
        data.put(GenericConstraintSolver::<M>::GRAPH_ERRORS, p.error_history.clone());
    }
}

impl<M: SolverMethod> Component for GenericConstraintSolver<M> {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.id = Some(cx.id);
        self.node = Some(cx.node());
        self.corrections = constraint_corrections(cx.scene, cx.node());
        let d = cx.data();
        if d.get(Self::MAX_ITERATIONS) < 0 {
            return Err(cx.error("maxIterations must not be negative"));
        }
        Ok(())
    }

    /// After every state below exists and has its size: choose Λ and C.
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        if self.lambda.is_none() {
            // The states of the subtree, mapped included.
            let states = MechScope::build(cx.scene, cx.node()).states;
            let (l, d) = allocate_lambda_and_dx(cx.scene, &states);
            for s in states {
                let st = cx.scene.store.get_mut(s);
                st.write(l);
                st.write(d);
            }
            self.lambda = Some(l);
            self.dx = Some(d);
        }
        Ok(())
    }
}

impl<M: SolverMethod> ConstraintSolver for GenericConstraintSolver<M> {
    fn dx_and_lambda(&self) -> (VecId, VecId) {
        (self.dx.unwrap_or(VecId::deriv(VecId::FIRST_DYNAMIC_DERIV + 1)), self.lambda.unwrap_or(VecId::deriv(VecId::FIRST_DYNAMIC_DERIV)))
    }

    /// The built solvers' problem (the unbuilt one holds only the diagonal blocks of W: none).
    fn last_problem(&self) -> Option<&ConstraintProblem> {
        M::BUILT.then_some(&self.problem)
    }

    fn solve_constraint(&mut self, scene: &mut Scene, cp: &ConstraintParams, res1: VecId, res2: Option<VecId>) -> SimResult {
        let me = self.me()?;
        self.prepare_states(scene)?;
        let (regularization, compute_forces, graphs) = {
            let d = &scene.components[me].data;
            self.svd = (M::BUILT && d.get(BuiltData::USE_SVD_FOR_REGULARIZATION)).then(|| {
                (d.get(BuiltData::SVD_SINGULAR_VALUE_NULL_SPACE_CRITERIA_FACTOR), d.get(BuiltData::SVD_SINGULAR_VECTOR_NULL_SPACE_CRITERIA_FACTOR))
            });
            (d.get(Self::REGULARIZATION_TERM), d.get(ConstraintForcesData::COMPUTE_CONSTRAINT_FORCES), d.get(Self::COMPUTE_GRAPHS))
        };
        let cp_own = ConstraintParams { lambda: self.lambda.unwrap(), dx: self.dx.unwrap(), ..*cp };
        self.build_system(scene, &cp_own, regularization)?;
        let node = scene.entry(me).node;
        settee_core::simulation::propagate_event(scene, node, "BuildConstraintSystemEndEvent")?;
        // solveSystem: the Data are copied into the problem at every solve.
        {
            let d = &scene.components[me].data;
            let p = &mut self.problem;
            p.tolerance = d.get(Self::TOLERANCE);
            p.max_iterations = d.get(Self::MAX_ITERATIONS).max(0) as usize;
            p.scale_tolerance = d.get(Self::SCALE_TOLERANCE);
            p.all_verified = d.get(Self::ALL_VERIFIED);
            p.sor = d.get(Self::SOR);
            self.method.read_data(d);
        }
        if M::BUILT && !self.warned_singular {
            if let Some(row) = (0..self.problem.n).find(|&i| self.problem.w.get(i, i).partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)) {
                self.warned_singular = true;
                let law = self.problem.laws.iter().find(|l| (l.first..l.first + l.count).contains(&row)).map(|l| scene.entry(l.law).label());
                let entry = scene.entry(me);
                let d = settee_core::Diagnostic::warning(format!(
                    "row {row} of the constraint problem{} has no compliance (W[{row}][{row}] = {}): the DOFs it constrains cannot move, so its multiplier is undefined",
                    law.map(|l| format!(" (from {l})")).unwrap_or_default(),
                    self.problem.w.get(row, row)
                ))
                .at(entry.pos.clone())
                .subject(entry.label())
                .hint("give the constrained object a constraint correction, do not constrain DOFs a projective constraint fixes, or set regularizationTerm");
                scene.report(d);
            }
        }
        let outcome = if M::BUILT {
            self.method.solve(&mut self.problem, &self.unbuilt, &mut NoUnbuilt)?
        } else {
            let mut ops = SceneUnbuilt { scene, cclist: &self.unbuilt.cclist };
            self.method.solve(&mut self.problem, &self.unbuilt, &mut ops)?
        };
        if let Some(message) = self.method.take_warning() {
            let entry = scene.entry(me);
            let d = settee_core::Diagnostic::warning(message).at(entry.pos.clone()).subject(entry.label());
            scene.report(d);
        }
        if !outcome.converged && self.problem.n > 0 && !self.warned_unconverged {
            self.warned_unconverged = true;
            let entry = scene.entry(me);
            let d = settee_core::Diagnostic::warning(format!(
                "the constraint problem ({} rows) did not converge in {} iterations: error {:e} for a tolerance of {:e} (reported once)",
                self.problem.n,
                self.problem.max_iterations,
                self.problem.current_error,
                self.problem.effective_tolerance()
            ))
            .at(entry.pos.clone())
            .subject(entry.label())
            .hint("redundant or conflicting constraints make W singular: set regularizationTerm (e.g. 1e-6), or raise maxIterations");
            scene.report(d);
        }
        if outcome.stored {
            store_law_lambdas(scene, &cp_own, &self.problem.laws, &self.problem.lambda, outcome.converged)?;
        }
        publish::<M>(&mut scene.components[me].data, &self.problem, compute_forces, graphs);
        settee_core::simulation::propagate_event(scene, node, "SolveConstraintSystemEndEvent")?;
        self.apply_correction(scene, &cp_own, res1, res2)
    }
}

/// SOFA's `buildCompliance` loop: every correction of `corrections` adds its compliance to `w`
/// (an error is positioned at the correction).
pub(crate) fn add_compliances(
    scene: &mut Scene,
    cp: &ConstraintParams,
    corrections: impl IntoIterator<Item = ComponentId>,
    w: &mut DenseMatrix,
) -> SimResult {
    for c in corrections {
        on_correction(scene, c, |cc, scene| cc.add_compliance_in_constraint_space(scene, cp, w))?;
    }
    Ok(())
}

/// Runs `f` on the constraint correction `c` (nothing when its class is not one); its error is
/// positioned at the correction.
pub(crate) fn on_correction(
    scene: &mut Scene,
    c: ComponentId,
    f: impl FnOnce(&mut (dyn ConstraintCorrection + 'static), &mut Scene) -> SimResult,
) -> SimResult {
    scene
        .with_correction(c, |corr, scene| match corr {
            Some(cc) => f(cc, scene),
            None => Ok(()),
        })
        .map_err(|e| settee_core::simulation::positioned(scene, c, e))
}

/// The unbuilt operations through the scene's constraint corrections, the ones handling each
/// block (keyed by the block's first row) in `cclist`.
pub(crate) struct SceneUnbuilt<'a> {
    pub scene: &'a mut Scene,
    pub cclist: &'a [Vec<ComponentId>],
}

impl UnbuiltOps for SceneUnbuilt<'_> {
    fn add_constraint_displacement(&mut self, block: usize, d: &mut [f64], begin: usize, end: usize) -> SimResult {
        for &c in &self.cclist[block] {
            self.scene.with_correction(c, |corr, scene| match corr {
                Some(cc) => cc.add_constraint_displacement(scene, d, begin, end),
                None => Ok(()),
            })?;
        }
        Ok(())
    }
    fn set_constraint_dforce(&mut self, block: usize, df: &[f64], begin: usize, end: usize, update: bool) -> SimResult {
        for &c in &self.cclist[block] {
            self.scene.with_correction(c, |corr, scene| match corr {
                Some(cc) => cc.set_constraint_dforce(scene, df, begin, end, update),
                None => Ok(()),
            })?;
        }
        Ok(())
    }
}

/// An unbuilt path computed from a dense W, for tests and benchmarks: the "corrections' state"
/// is the accumulated force `f`, the displacement of a block is `(W f)` on its rows.
pub struct DenseUnbuilt {
    pub w: settee_core::constraint::DenseMatrix,
    pub f: Vec<f64>,
}

impl UnbuiltOps for DenseUnbuilt {
    fn add_constraint_displacement(&mut self, _block: usize, d: &mut [f64], begin: usize, end: usize) -> SimResult {
        for i in begin..=end {
            for k in 0..self.w.n {
                d[i] += self.w.get(i, k) * self.f[k];
            }
        }
        Ok(())
    }
    fn set_constraint_dforce(&mut self, _block: usize, df: &[f64], begin: usize, end: usize, update: bool) -> SimResult {
        if update {
            for i in begin..=end {
                self.f[i] += df[i];
            }
        }
        Ok(())
    }
}

/// Calls every block's `init` in ascending order; stops at the first row without a resolution
/// (SOFA: "Bad size of constraintsResolutions"). Returns the rows covered.
pub fn init_resolutions(p: &mut ConstraintProblem) -> usize {
    let mut i = 0;
    while i < p.n {
        let Some(r) = p.resolutions[i].as_mut() else { break };
        r.init(i, &p.w, &mut p.lambda);
        i += r.nb_lines().max(1);
    }
    i
}

/// The start of every solve: clears the error history; an empty problem is solved at once (zero
/// error and iterations), its outcome returned.
pub fn empty_problem(p: &mut ConstraintProblem) -> Option<SolveOutcome> {
    p.error_history.clear();
    if p.n != 0 {
        return None;
    }
    p.current_error = 0.0;
    p.current_iterations = 0;
    Some(SolveOutcome::default())
}

/// SOFA's end test of an iteration: every block verified with `allVerified`, else the summed
/// `error` below `tol` — and `may_stop` (the methods that never stop at their first iteration
/// pass `i > 0`).
pub fn iteration_converged(p: &ConstraintProblem, verified: bool, error: f64, tol: f64, may_stop: bool) -> bool {
    if p.all_verified {
        verified
    } else {
        error < tol && may_stop
    }
}

/// SOFA's successive over-relaxation after a sweep, when `sor ≠ 1`: `λ = sor·λ + (1 − sor)·λ₀`
/// with `before` the λ₀ of the sweep's start.
pub fn over_relax(p: &mut ConstraintProblem, before: &[f64]) {
    if p.sor != 1.0 {
        let sor = p.sor;
        for (f, t) in p.lambda.iter_mut().zip(before) {
            *f = sor * *f + (1.0 - sor) * t;
        }
    }
}

/// `Σ aᵢ·bᵢ` summed from index 0 (SOFA's FullVector dot product).
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut r = 0.0;
    for i in 0..a.len() {
        r += a[i] * b[i];
    }
    r
}

/// SOFA's `result_output`: error, iterations + 1.
pub fn result_output(p: &mut ConstraintProblem, error: f64, iter_count: usize, converged: bool) -> SolveOutcome {
    p.current_error = error;
    p.current_iterations = iter_count + 1;
    SolveOutcome { converged, stored: true }
}
