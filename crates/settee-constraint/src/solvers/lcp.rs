//! `LCPConstraintSolver` (lagrangian-solvers spec §2.11, SOFA's `SOLVER/LCPConstraintSolver.cpp`
//! and the kernels of `Sofa/framework/Helper/src/sofa/helper/LCPcalc.cpp`).
//!
//! Unlike the GenericConstraintSolver family it has no resolution objects: every constraint is
//! taken to be a contact of 3 rows (normal, two tangents) when the solver's `mu > 0`, of 1 row
//! otherwise, and the friction coefficient is the solver's own. It keeps its corrective motion
//! in `dx` and its `Jᵀλ` in `externalForce` (SOFA's default `getDx`/`getLambda`), and applies the
//! multipliers through the corrections' `applyContactForce`.
//!
//! Kernels (plain functions, testable without a scene):
//! - [`nlcp_gauss_seidel`]: built W, friction (`nlcp_gaussseidel`);
//! - [`gauss_seidel_lcp1`]: built W, frictionless. SOFA's `gaussSeidelLCP1` expects a buffer of
//!   `2n` (violations then forces) but receives `λ` of size `n` (undefined behaviour); this is
//!   the intended projected Gauss–Seidel with SOFA's error measure and stop test;
//! - [`nlcp_gauss_seidel_unbuilt`], [`lcp_gauss_seidel_unbuilt`]: only the diagonal blocks of W,
//!   the rest through the corrections' accumulated state ([`UnbuiltOps`]).

use std::collections::{BTreeMap, HashMap};

use settee_core::constraint::{
    build_constraint_matrix, constraint_violation, ConstraintOrder, ConstraintParams, ConstraintProblem, ConstraintSolver, DenseMatrix, LawRows,
};
use settee_core::diag::Diagnostic;
use settee_core::{component, data_group, Component, ComponentId, InitCtx, NodeId, Scene, SimError, SimResult, VecId};

use super::generic::{add_compliances, on_correction, ConstraintForcesData, SceneUnbuilt, UnbuiltOps};
use crate::corrections::{UncoupledConstraintCorrection, WithCorrection};
use crate::laws::UnilateralLagrangianConstraint;

/// What an LCP kernel reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LcpOutcome {
    pub converged: bool,
    /// Sweeps done (SOFA's "GS iterations" timer value).
    pub iterations: usize,
    /// Error after each sweep (SOFA's `graph["Error"]`).
    pub errors: Vec<f64>,
    /// Sum of the negative normal violations after each sweep (`graph["Violation"]`, NLCP only).
    pub violations: Vec<f64>,
}

/// Options of the built friction kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NlcpOptions {
    pub mu: f64,
    pub tolerance: f64,
    pub max_iterations: usize,
    /// Start from the content of `f` (otherwise `f := 0`).
    pub use_initial_f: bool,
    /// If ≠ 0, contacts with `|W_nn| ≤ min_w` get no force.
    pub min_w: f64,
    /// If ≠ 0, after convergence, contacts with `|λ_n| ≥ max_f` are zeroed.
    pub max_f: f64,
}

/// The upper triangle of a contact's 3×3 diagonal block (SOFA's `LocalBlock33::w`):
/// `[nn, nt, ns, tt, ts, ss]`.
type Block33 = [f64; 6];

fn block33(w: &DenseMatrix, r: usize) -> Block33 {
    [w.get(r, r), w.get(r, r + 1), w.get(r, r + 2), w.get(r + 1, r + 1), w.get(r + 1, r + 2), w.get(r + 2, r + 2)]
}

/// `sqrt(|a − b|²)` in SOFA's `absError` order.
fn abs_error(a: [f64; 3], b: [f64; 3]) -> f64 {
    let (x, y, z) = (b[0] - a[0], b[1] - a[1], b[2] - a[2]);
    (x * x + y * y + z * z).sqrt()
}

/// Scales the friction force onto the cone `‖(ft, fs)‖ ≤ mu·fn` (SOFA's order: `f *= mu·fn/‖f‖`).
fn project_cone(mu: f64, fn_: f64, ft: &mut f64, fs: &mut f64) {
    let norm = (*ft * *ft + *fs * *fs).sqrt();
    if norm > mu * fn_ {
        *ft *= mu * fn_ / norm;
        *fs *= mu * fn_ / norm;
    }
}

/// SOFA's `LocalBlock33::GS_State`: `d` is the contact's violation without its own force, `f`
/// the force to update (starting from its previous value). On a positive normal force, `d`
/// receives the contribution of the new force.
fn gs_state(w: &Block33, mu: f64, d: &mut [f64; 3], f: &mut [f64; 3]) {
    let d0 = w[0] * f[0] + w[1] * f[1] + w[2] * f[2] + d[0];
    f[0] -= d0 / w[0];
    if f[0] < 0.0 {
        *f = [0.0; 3];
        return;
    }
    let d1 = w[1] * f[0] + w[3] * f[1] + w[4] * f[2] + d[1];
    let d2 = w[2] * f[0] + w[4] * f[1] + w[5] * f[2] + d[2];
    tangential_step(w, mu, f, d1, d2);
    d[0] += w[0] * f[0] + w[1] * f[1] + w[2] * f[2];
    d[1] += w[1] * f[0] + w[3] * f[1] + w[4] * f[2];
    d[2] += w[2] * f[0] + w[4] * f[1] + w[5] * f[2];
}

/// SOFA's `LocalBlock33::New_GS_State`: `d` already includes the contact's current force `f`.
/// Updates `f` and adds the change of force's effect to `d`.
fn new_gs_state(w: &Block33, mu: f64, d: &mut [f64; 3], f: &mut [f64; 3]) {
    let f1 = *f;
    f[0] -= d[0] / w[0];
    if f[0] <= 0.0 {
        *f = [0.0; 3];
        if f1[0] > 0.0 {
            add_block_times(w, d, [f[0] - f1[0], f[1] - f1[1], f[2] - f1[2]]);
        }
        return;
    }
    let d1 = w[1] * (f[0] - f1[0]) + d[1];
    let d2 = w[2] * (f[0] - f1[0]) + d[2];
    tangential_step(w, mu, f, d1, d2);
    add_block_times(w, d, [f[0] - f1[0], f[1] - f1[1], f[2] - f1[2]]);
}

/// The tangential part of a Gauss-Seidel step on a contact of normal force `f[0]`: a step on the
/// tangential displacements `(d1, d2)` with the mean tangential diagonal, then the projection on
/// the friction cone.
fn tangential_step(w: &Block33, mu: f64, f: &mut [f64; 3], d1: f64, d2: f64) {
    f[1] -= 2.0 * d1 / (w[3] + w[5]);
    f[2] -= 2.0 * d2 / (w[3] + w[5]);
    let (mut ft, mut fs) = (f[1], f[2]);
    project_cone(mu, f[0], &mut ft, &mut fs);
    f[1] = ft;
    f[2] = fs;
}

fn add_block_times(w: &Block33, d: &mut [f64; 3], df: [f64; 3]) {
    d[0] += w[0] * df[0] + w[1] * df[1] + w[2] * df[2];
    d[1] += w[1] * df[0] + w[3] * df[1] + w[4] * df[2];
    d[2] += w[2] * df[0] + w[4] * df[1] + w[5] * df[2];
}

/// SOFA's `nlcp_gaussseidel`: projected block Gauss–Seidel on 3-row friction contacts of an
/// assembled `W`. Fails (leaving `f` untouched) when the row count is not a multiple of 3.
pub fn nlcp_gauss_seidel(dfree: &[f64], w: &DenseMatrix, f: &mut [f64], o: &NlcpOptions) -> SimResult<LcpOutcome> {
    let dim = w.n;
    if dfree.len() != dim || f.len() != dim {
        return Err(SimError::new("nlcp_gaussseidel: the sizes of W, dfree and f differ"));
    }
    if !dim.is_multiple_of(3) {
        return Err(SimError::new(format!(
            "nlcp_gaussseidel: {dim} constraint rows is not a multiple of 3 (LCPConstraintSolver with mu > 0 expects friction contacts only)"
        )));
    }
    let nc = dim / 3;
    if !o.use_initial_f {
        f.fill(0.0);
    }
    let mut out = LcpOutcome::default();
    let mut blocks: Vec<Option<Block33>> = vec![None; nc];
    for it in 0..o.max_iterations {
        let mut error = 0.0;
        for c in 0..nc {
            let r = 3 * c;
            let f1 = [f[r], f[r + 1], f[r + 2]];
            f[r..r + 3].fill(0.0);
            let mut d = [dfree[r], dfree[r + 1], dfree[r + 2]];
            for i in 0..dim {
                d[0] += w.get(r, i) * f[i];
                d[1] += w.get(r + 1, i) * f[i];
                d[2] += w.get(r + 2, i) * f[i];
            }
            let mut d1 = [0.0; 3];
            for l in 0..3 {
                d1[l] = d[l] + w.get(r + l, r) * f1[0] + w.get(r + l, r + 1) * f1[1] + w.get(r + l, r + 2) * f1[2];
            }
            let mut fc = [0.0; 3];
            if !(o.min_w != 0.0 && w.get(r, r).abs() <= o.min_w) {
                let b = blocks[c].get_or_insert_with(|| block33(w, r));
                fc = f1;
                gs_state(b, o.mu, &mut d, &mut fc);
            }
            error += abs_error(d, d1);
            f[r..r + 3].copy_from_slice(&fc);
        }
        out.errors.push(error);
        let mut sum = 0.0;
        for c in 0..nc {
            let mut dn = dfree[3 * c];
            for k in 0..dim {
                dn += w.get(3 * c, k) * f[k];
            }
            if dn < 0.0 {
                sum += -dn;
            }
        }
        out.violations.push(sum);
        if error < o.tolerance * (nc + 1) as f64 {
            if o.max_f != 0.0 {
                for c in 0..nc {
                    if f[3 * c].abs() >= o.max_f {
                        f[3 * c..3 * c + 3].fill(0.0);
                    }
                }
            }
            out.converged = true;
            out.iterations = it + 1;
            return Ok(out);
        }
    }
    out.iterations = o.max_iterations;
    Ok(out)
}

/// Projected Gauss–Seidel on 1-row unilateral contacts of an assembled `W`, starting from `f`
/// (what SOFA's `gaussSeidelLCP1` intends, see the module documentation): per row
/// `λ_i := max(0, −(q_i + Σ_{k≠i} W_ik λ_k)/W_ii)` (0 when `min_w ≠ 0` and `|W_ii| ≤ min_w`),
/// error `Σ|W_ii Δλ_i|`, stop when `error < tolerance`; then the `max_f` filter.
pub fn gauss_seidel_lcp1(
    q: &[f64],
    w: &DenseMatrix,
    f: &mut [f64],
    tolerance: f64,
    max_iterations: usize,
    min_w: f64,
    max_f: f64,
) -> SimResult<LcpOutcome> {
    let dim = w.n;
    if q.len() != dim || f.len() != dim {
        return Err(SimError::new("gaussSeidelLCP1: the sizes of W, dfree and f differ"));
    }
    let mut out = LcpOutcome::default();
    let mut count = 0;
    for _ in 0..max_iterations {
        count += 1;
        let mut error = 0.0;
        for i in 0..dim {
            let mut res = q[i];
            for k in 0..dim {
                res += w.get(i, k) * f[k];
            }
            res -= w.get(i, i) * f[i];
            let f1 = f[i];
            f[i] = if min_w != 0.0 && w.get(i, i).abs() <= min_w {
                0.0
            } else if res < 0.0 {
                -res / w.get(i, i)
            } else {
                0.0
            };
            error += (w.get(i, i) * (f[i] - f1)).abs();
        }
        out.errors.push(error);
        if error < tolerance {
            out.converged = true;
            break;
        }
    }
    out.iterations = count;
    if max_f != 0.0 {
        for x in f.iter_mut() {
            if x.abs() >= max_f {
                *x = 0.0;
            }
        }
    }
    Ok(out)
}

/// SOFA's `LCPConstraintSolver::nlcp_gaussseidel_unbuilt`, after the corrections were reset
/// with the warm start `f`: `wdiag` holds (at least) the contacts' 3×3 diagonal blocks,
/// `sequence` the rows in visiting order (one entry per row; every third one starts a contact),
/// `ops` the displacement from the corrections' state and takes the force increments.
#[allow(clippy::too_many_arguments)] // SOFA's kernel: problem, sequence, settings and the corrections
pub fn nlcp_gauss_seidel_unbuilt<O: UnbuiltOps + ?Sized>(
    dfree: &[f64],
    wdiag: &DenseMatrix,
    f: &mut [f64],
    sequence: &[usize],
    mu: f64,
    tolerance: f64,
    max_iterations: usize,
    ops: &mut O,
) -> SimResult<LcpOutcome> {
    nlcp_unbuilt_in(dfree, wdiag, f, sequence, mu, tolerance, max_iterations, ops, &mut UnbuiltScratch::default())
}

/// The work lists of the unbuilt kernels, kept by the solver from one step to the next.
#[derive(Clone, Debug, Default)]
struct UnbuiltScratch {
    blocks: Vec<Block33>,
    d: Vec<f64>,
    /// The error list the next outcome takes.
    errors: Vec<f64>,
}

/// [`nlcp_gauss_seidel_unbuilt`] with kept work lists.
#[allow(clippy::too_many_arguments)]
fn nlcp_unbuilt_in<O: UnbuiltOps + ?Sized>(
    dfree: &[f64],
    wdiag: &DenseMatrix,
    f: &mut [f64],
    sequence: &[usize],
    mu: f64,
    tolerance: f64,
    max_iterations: usize,
    ops: &mut O,
    scratch: &mut UnbuiltScratch,
) -> SimResult<LcpOutcome> {
    let n = f.len();
    if !n.is_multiple_of(3) {
        return Err(SimError::new(format!("nlcp_gaussseidel (unbuilt): {n} constraint rows is not a multiple of 3")));
    }
    if dfree.len() != n || wdiag.n != n {
        return Err(SimError::new("nlcp_gaussseidel (unbuilt): the sizes of W, dfree and f differ"));
    }
    let nc = n / 3;
    let UnbuiltScratch { blocks, d, errors } = scratch;
    blocks.clear();
    blocks.extend((0..nc).map(|c| block33(wdiag, 3 * c)));
    d.clear();
    d.resize(n, 0.0);
    unbuilt_sweeps(nc, tolerance, max_iterations, std::mem::take(errors), || {
        let mut error = 0.0;
        for &row in sequence.iter().step_by(3) {
            let c = row / 3;
            let r = 3 * c;
            if r + 3 > n {
                return Err(SimError::new("nlcp_gaussseidel (unbuilt): a contact row lies outside the problem"));
            }
            d[r..r + 3].copy_from_slice(&dfree[r..r + 3]);
            let f0 = [f[r], f[r + 1], f[r + 2]];
            ops.add_constraint_displacement(r, d, r, r + 2)?;
            let mut dc = [d[r], d[r + 1], d[r + 2]];
            let mut fc = f0;
            new_gs_state(&blocks[c], mu, &mut dc, &mut fc);
            error += abs_error(dc, [d[r], d[r + 1], d[r + 2]]);
            let update = !(f0[0] == 0.0 && fc[0] == 0.0);
            for l in 0..3 {
                f[r + l] = fc[l] - f[r + l];
            }
            if update {
                ops.set_constraint_dforce(r, f, r, r + 2, update)?;
            }
            f[r..r + 3].copy_from_slice(&fc);
        }
        Ok(error)
    })
}

/// The sweeps of the unbuilt Gauss-Seidel kernels: `sweep` (which returns its error) until
/// `error < tolerance·(contacts + 1)`, at most `max_iterations` times.
fn unbuilt_sweeps(
    contacts: usize,
    tolerance: f64,
    max_iterations: usize,
    mut errors: Vec<f64>,
    mut sweep: impl FnMut() -> SimResult<f64>,
) -> SimResult<LcpOutcome> {
    errors.clear();
    let mut out = LcpOutcome { errors, ..LcpOutcome::default() };
    for it in 0..max_iterations {
        let error = sweep()?;
        out.errors.push(error);
        if error < tolerance * (contacts + 1) as f64 {
            out.converged = true;
            out.iterations = it + 1;
            return Ok(out);
        }
    }
    out.iterations = max_iterations;
    Ok(out)
}

/// SOFA's `LCPConstraintSolver::lcp_gaussseidel_unbuilt` (frictionless, 1-row contacts):
/// `λ := max(0, λ₀ − d/W_ii)`, error `Σ|W_ii(λ − λ₀)|`, stop when `error < tolerance·(n + 1)`.
pub fn lcp_gauss_seidel_unbuilt<O: UnbuiltOps + ?Sized>(
    dfree: &[f64],
    wdiag: &DenseMatrix,
    f: &mut [f64],
    sequence: &[usize],
    tolerance: f64,
    max_iterations: usize,
    ops: &mut O,
) -> SimResult<LcpOutcome> {
    lcp_unbuilt_in(dfree, wdiag, f, sequence, tolerance, max_iterations, ops, &mut UnbuiltScratch::default())
}

/// [`lcp_gauss_seidel_unbuilt`] with kept work lists (`d` holds the diagonal, then the
/// displacements after it).
#[allow(clippy::too_many_arguments)]
fn lcp_unbuilt_in<O: UnbuiltOps + ?Sized>(
    dfree: &[f64],
    wdiag: &DenseMatrix,
    f: &mut [f64],
    sequence: &[usize],
    tolerance: f64,
    max_iterations: usize,
    ops: &mut O,
    scratch: &mut UnbuiltScratch,
) -> SimResult<LcpOutcome> {
    let n = f.len();
    if dfree.len() != n || wdiag.n != n {
        return Err(SimError::new("lcp_gaussseidel (unbuilt): the sizes of W, dfree and f differ"));
    }
    let UnbuiltScratch { d: wd, errors, .. } = scratch;
    wd.clear();
    wd.extend((0..n).map(|c| wdiag.get(c, c)));
    wd.resize(2 * n, 0.0);
    let (w11, d) = wd.split_at_mut(n);
    unbuilt_sweeps(n, tolerance, max_iterations, std::mem::take(errors), || {
        let mut error = 0.0;
        for &c in sequence {
            if c >= n {
                return Err(SimError::new("lcp_gaussseidel (unbuilt): a contact row lies outside the problem"));
            }
            d[c] = dfree[c];
            let f0 = f[c];
            ops.add_constraint_displacement(c, d, c, c)?;
            let mut fc = f0 - d[c] / w11[c];
            if fc < 0.0 {
                fc = 0.0;
            }
            error += (w11[c] * (fc - f0)).abs();
            let update = f0 != 0.0 || fc != 0.0;
            if update {
                f[c] = fc - f0;
                ops.set_constraint_dforce(c, f, c, c, update)?;
            }
            f[c] = fc;
        }
        Ok(error)
    })
}

// ---------------------------------------------------------------------------------------------
// Persistent-id warm start (SOFA's computeInitialGuess / keepContactForcesValue).

/// One constraint block reported by a law (SOFA's `ConstraintBlockInfo` with its ids).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockInfo {
    /// The law that reported it (SOFA's `parent`).
    pub parent: ComponentId,
    pub const0: usize,
    pub nb_lines: usize,
    /// One persistent id per group (contact).
    pub ids: Vec<i64>,
}

#[derive(Clone, Debug, Default)]
struct BlockBuf {
    nb_lines: usize,
    /// Persistent id → first row of its group in the previous problem (−1: not seen last time).
    rows: HashMap<i64, i64>,
}

/// The forces of the previous solve and where each persistent contact was.
#[derive(Clone, Debug, Default)]
pub struct ForceHistory {
    previous_forces: Vec<f64>,
    previous: BTreeMap<ComponentId, BlockBuf>,
}

impl ForceHistory {
    /// SOFA's `computeInitialGuess`: zero the contacts' forces, then copy the previous forces of
    /// every group whose law and persistent id were seen at the last solve
    /// (`min(nbLines, previous nbLines)` values written at `const0 + c·min`, SOFA's quirk).
    pub fn initial_guess(&self, infos: &[BlockInfo], mu: f64, f: &mut [f64]) {
        let n = f.len();
        let zeroed = if mu > 0.0 { 3 * (n / 3) } else { n };
        f[..zeroed].fill(0.0);
        for info in infos {
            let Some(buf) = self.previous.get(&info.parent) else { continue };
            let nbl = info.nb_lines.min(buf.nb_lines);
            for (c, id) in info.ids.iter().enumerate() {
                let Some(&prev) = buf.rows.get(id) else { continue };
                if prev >= 0 && prev as usize + nbl <= self.previous_forces.len() {
                    let prev = prev as usize;
                    for l in 0..nbl {
                        if let Some(x) = f.get_mut(info.const0 + c * nbl + l) {
                            *x = self.previous_forces[prev + l];
                        }
                    }
                }
            }
        }
    }

    /// SOFA's `keepContactForcesValue`.
    pub fn keep(&mut self, infos: &[BlockInfo], f: &[f64]) {
        self.previous_forces.clear();
        self.previous_forces.extend_from_slice(f);
        for buf in self.previous.values_mut() {
            for v in buf.rows.values_mut() {
                *v = -1;
            }
        }
        for info in infos {
            let buf = self.previous.entry(info.parent).or_default();
            buf.nb_lines = info.nb_lines;
            for (c, id) in info.ids.iter().enumerate() {
                buf.rows.insert(*id, (info.const0 + c * info.nb_lines) as i64);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The component.

/// The solver's settings for one step.
#[derive(Clone, Copy, Debug)]
struct Settings {
    initial_guess: bool,
    build_lcp: bool,
    tolerance: f64,
    max_it: usize,
    regularization: f64,
    mu: f64,
    min_w: f64,
    max_f: f64,
    compute_forces: bool,
}

/// The first Data of `LCPConstraintSolver`, before the constraint forces of every constraint
/// solver ([`ConstraintForcesData`]).
#[data_group(data = {
    /// Display debug information.
    displayDebug: Bool = "false",
    /// activate LCP results history to improve its resolution performances.
    initial_guess: Bool = "true",
    /// LCP is not fully built to increase performance in some case.
    build_lcp: Bool = "true",
    /// residual error threshold for termination of the Gauss-Seidel algorithm
    tolerance: Real = "0.001",
    /// maximal number of iterations of the Gauss-Seidel algorithm
    maxIt: Int = "1000",
    /// Add regularization factor times the identity matrix to the compliance W when solving
    /// constraints
    regularizationTerm: Real = "0",
    /// Friction coefficient
    mu: Real = "0.6",
    /// If not zero, constraints whose self-compliance (i.e. the corresponding value on the
    /// diagonal of W) is smaller than this threshold will be ignored
    minW: Real = "0",
    /// If not zero, constraints whose response force becomes larger than this threshold will be
    /// ignored
    maxF: Real = "0",
    /// removed from SOFA (multigrid resolution): accepted for old scenes, true is not supported
    multi_grid: Bool = "false",
    /// removed from SOFA (multigrid resolution): ignored
    multi_grid_levels: Int = "2",
    /// removed from SOFA (multigrid resolution): ignored
    merge_method: Int = "0",
    /// removed from SOFA (multigrid resolution): ignored
    merge_spatial_step: Real = "0.2",
    /// removed from SOFA (multigrid resolution): ignored
    merge_local_levels: Int = "2",
})]
pub struct LcpSolverData;

/// A Constraint Solver using the Linear Complementarity Problem formulation to solve BaseConstraint based components.
///
/// SOFA's `LCPConstraintSolver`.
#[component(
    name = "LCPConstraintSolver", module = "Sofa.Component.Constraint.Lagrangian.Solver",
    roles = [ConstraintSolver],
    inherit = [LcpSolverData, ConstraintForcesData, Self],
    data = {
        /// list of ID of groups of constraints to be handled by this solver.
        group: Indices = "0",
        /// OUTPUT: residual error at each iteration of the last solve (SOFA's graph "Error")
        graph: Reals,
        /// OUTPUT: sum of the negative normal violations at each iteration of the last built friction
        /// solve (SOFA's graph "Violation")
        graphViolation: Reals,
        /// Distance between each constraint cells (drawing only)
        showCellWidth: Real = "0",
        /// Position of the first cell (drawing only)
        showTranslation: Fixed(3) = "0 0 0",
    },
)]
#[derive(Clone, Default)]
pub struct LcpConstraintSolver {
    id: Option<ComponentId>,
    node: Option<NodeId>,
    corrections: Vec<ComponentId>,
    /// W (built) or the zero matrix (unbuilt), `dfree`, `λ` of the last step.
    pub problem: ConstraintProblem,
    /// The diagonal blocks of W in unbuilt mode (SOFA's `_Wdiag`).
    pub wdiag: DenseMatrix,
    /// The size of the diagonal blocks of `wdiag` the last unbuilt solve wrote (they tile its
    /// rows; 0: none): the only entries to zero before the next one.
    wdiag_block: usize,
    /// The unbuilt path's order of the rows and each contact's corrections (by first row).
    sequence: Vec<usize>,
    cclist: Vec<Vec<ComponentId>>,
    /// The corrections still in the scene at this step (a list kept between steps).
    live: Vec<ComponentId>,
    /// The unbuilt kernels' work lists.
    scratch: UnbuiltScratch,
    /// The blocks reported by the laws at the last build (with `initial_guess`).
    pub block_infos: Vec<BlockInfo>,
    history: ForceHistory,
    /// The last kernel's report.
    pub outcome: LcpOutcome,
    warned_dim: bool,
    /// The last solve assembled W (`build_lcp`): `last_problem` has something to show.
    last_built: bool,
}

impl LcpConstraintSolver {
    fn settings(&self, scene: &Scene) -> SimResult<Settings> {
        let me = self.id.ok_or_else(|| SimError::new("LCPConstraintSolver used before init"))?;
        let d = &scene.components[me].data;
        Ok(Settings {
            initial_guess: d.get(LcpSolverData::INITIAL_GUESS),
            build_lcp: d.get(LcpSolverData::BUILD_LCP),
            tolerance: d.get(LcpSolverData::TOLERANCE),
            max_it: d.get(LcpSolverData::MAX_IT).max(0) as usize,
            regularization: d.get(LcpSolverData::REGULARIZATION_TERM),
            mu: d.get(LcpSolverData::MU),
            min_w: d.get(LcpSolverData::MIN_W),
            max_f: d.get(LcpSolverData::MAX_F),
            compute_forces: d.get(ConstraintForcesData::COMPUTE_CONSTRAINT_FORCES),
        })
    }

    /// The corrections still in the scene, into the kept list `live` (no list made per step).
    fn live_corrections(&mut self, scene: &Scene) -> Vec<ComponentId> {
        let mut live = std::mem::take(&mut self.live);
        live.clear();
        live.extend(self.corrections.iter().copied().filter(|c| scene.contains(*c)));
        live
    }

    /// SOFA's `prepareStates`: `dx := 0` on every state below the solver (mapped too), then
    /// every correction's `resetContactForce`.
    fn prepare_states(&mut self, scene: &mut Scene) -> SimResult {
        let node = self.node.ok_or_else(|| SimError::new("LCPConstraintSolver used before init"))?;
        let scope = scene.scope(node);
        for &s in &scope.states {
            scene.store.get_mut(s).write(VecId::DX).fill(0.0);
        }
        let live = self.live_corrections(scene);
        let r = live.iter().try_for_each(|&c| on_correction(scene, c, |cc, scene| cc.reset_contact_force(scene)));
        self.live = live;
        r
    }

    /// SOFA's `buildSystem`: rows, violation, W (or the unbuilt diagonal's room), warm start.
    fn build_system(&mut self, scene: &mut Scene, cp: &ConstraintParams, s: &Settings) -> SimResult {
        // The laws' list is used out of the problem (not copied), then put back.
        let mut laws = std::mem::take(&mut self.problem.laws);
        let r = self.build_system_with(scene, cp, s, &mut laws);
        self.problem.laws = laws;
        r
    }

    fn build_system_with(&mut self, scene: &mut Scene, cp: &ConstraintParams, s: &Settings, laws: &mut Vec<LawRows>) -> SimResult {
        let n = build_constraint_matrix(scene, cp, laws)?;
        if s.build_lcp {
            self.problem.clear(n);
        } else {
            self.problem.clear_unassembled(n);
        }
        constraint_violation(scene, cp, laws, &mut self.problem.dfree)?;
        if s.build_lcp {
            let corrections = self.live_corrections(scene);
            let r = add_compliances(scene, cp, corrections.iter().copied(), &mut self.problem.w);
            self.live = corrections;
            r?;
            self.problem.add_regularization(s.regularization);
        } else {
            // Only the diagonal blocks the last unbuilt solve wrote are non-zero: zeroing them
            // leaves the whole buffer zero, which then takes the new size without a fill of n².
            let nb = std::mem::take(&mut self.wdiag_block);
            let old = self.wdiag.n;
            if nb > 0 {
                for r in (0..old).step_by(nb) {
                    for i in r..(r + nb).min(old) {
                        self.wdiag.data[i * old + r..i * old + (r + nb).min(old)].fill(0.0);
                    }
                }
            }
            if old != n {
                self.wdiag.n = n;
                self.wdiag.data.resize(n * n, 0.0);
            }
        }
        self.block_infos.clear();
        if s.initial_guess && n != 0 {
            for lr in laws.iter() {
                let Some(obj) = scene.components[lr.law].obj.as_mut() else { continue };
                let Some(u) = obj.as_any_mut().downcast_mut::<UnilateralLagrangianConstraint>() else { continue };
                if let Some(info) = u.constraint_info() {
                    self.block_infos.push(BlockInfo { parent: lr.law, const0: info.const0, nb_lines: info.nb_lines, ids: info.ids });
                }
            }
            self.history.initial_guess(&self.block_infos, s.mu, &mut self.problem.lambda);
        }
        Ok(())
    }

    /// SOFA's `solveSystem`.
    fn solve_system(&mut self, scene: &mut Scene, cp: &ConstraintParams, s: &Settings) -> SimResult {
        let p = &mut self.problem;
        let n = p.n;
        let result = if s.build_lcp {
            if s.mu > 0.0 {
                let o = NlcpOptions {
                    mu: s.mu,
                    tolerance: s.tolerance,
                    max_iterations: s.max_it,
                    use_initial_f: s.initial_guess,
                    min_w: s.min_w,
                    max_f: s.max_f,
                };
                nlcp_gauss_seidel(&p.dfree, &p.w, &mut p.lambda, &o)
            } else {
                gauss_seidel_lcp1(&p.dfree, &p.w, &mut p.lambda, s.tolerance, s.max_it, s.min_w, s.max_f)
            }
        } else if n == 0 {
            Ok(LcpOutcome::default())
        } else {
            self.solve_unbuilt(scene, cp, s)
        };
        match result {
            Ok(o) => self.outcome = o,
            Err(e) => {
                // SOFA logs and leaves the forces as they are.
                self.outcome = LcpOutcome::default();
                if !self.warned_dim {
                    self.warned_dim = true;
                    scene.report(Diagnostic::warning(format!("LCPConstraintSolver: {}", e.0.message)));
                }
            }
        }
        let me = self.id.ok_or_else(|| SimError::new("LCPConstraintSolver used before init"))?;
        let data = &mut scene.components[me].data;
        data.put(Self::GRAPH, self.outcome.errors.clone());
        data.put(Self::GRAPH_VIOLATION, self.outcome.violations.clone());
        if s.compute_forces {
            data.put(ConstraintForcesData::CONSTRAINT_FORCES, self.problem.lambda.clone());
        }
        Ok(())
    }

    /// The unbuilt path: reset the corrections with the warm start, find the (at most two)
    /// corrections of each contact, gather their diagonal blocks, iterate.
    fn solve_unbuilt(&mut self, scene: &mut Scene, cp: &ConstraintParams, s: &Settings) -> SimResult<LcpOutcome> {
        let n = self.problem.n;
        if s.mu != 0.0 && !n.is_multiple_of(3) {
            return Err(SimError::new(format!("nlcp_gaussseidel (unbuilt): {n} constraint rows is not a multiple of 3")));
        }
        let corrections = self.live_corrections(scene);
        let r = self.solve_unbuilt_with(scene, cp, s, &corrections);
        self.live = corrections;
        r
    }

    fn solve_unbuilt_with(&mut self, scene: &mut Scene, cp: &ConstraintParams, s: &Settings, corrections: &[ComponentId]) -> SimResult<LcpOutcome> {
        let n = self.problem.n;
        // The sequence and the per-contact lists of corrections are kept between steps.
        let sequence = &mut self.sequence;
        sequence.clear();
        sequence.extend(0..n);
        for &c in corrections {
            let f = &self.problem.lambda;
            scene.with_correction(c, |corr, scene| match corr {
                Some(cc) => cc.reset_for_unbuilt_resolution(scene, cp, f, sequence),
                None => Ok(()),
            })?;
        }
        let (step, nb) = if s.mu != 0.0 { (3, 3) } else { (1, 1) };
        let cclist = &mut self.cclist;
        cclist.iter_mut().for_each(Vec::clear);
        cclist.resize_with(n, Vec::new);
        let mut missing = Vec::new();
        for c in 0..n / step {
            let row = c * step;
            for &cc in corrections {
                if cclist[row].len() == 2 {
                    break;
                }
                let has = scene.with_correction(cc, |corr, scene| Ok(corr.is_some_and(|corr| corr.has_constraint_number(scene, row))))?;
                if has {
                    cclist[row].push(cc);
                }
            }
            if cclist[row].is_empty() {
                missing.push(c);
            }
        }
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|c| c.to_string()).collect();
            scene.report(Diagnostic::error(format!(
                "LCPConstraintSolver: the following contacts do not have an associated constraint correction component: {}",
                list.join(" ")
            )));
            if missing.len() == n / step {
                scene.report(Diagnostic::error(
                    "LCPConstraintSolver: none of the contacts has an associated constraint correction component: constraint correction is aborted",
                ));
                return Ok(LcpOutcome::default());
            }
        }
        // The blocks tile the rows (n is a multiple of `step`), so zeroing them also clears the
        // regularization added on the diagonal below.
        self.wdiag_block = nb;
        for c in 0..n / step {
            let row = c * step;
            for &cc in &cclist[row] {
                let w = &mut self.wdiag;
                scene.with_correction(cc, |corr, scene| match corr {
                    Some(corr) => corr.add_block_diagonal_compliance(scene, cp, w, row, row + nb - 1),
                    None => Ok(()),
                })?;
            }
        }
        if s.regularization > f64::EPSILON {
            for i in 0..n {
                self.wdiag.add(i, i, s.regularization);
            }
        }
        let (p, wdiag) = (&mut self.problem, &self.wdiag);
        // The last outcome's error list is refilled by this one.
        let scratch = &mut self.scratch;
        scratch.errors = std::mem::take(&mut self.outcome.errors);
        // One UncoupledConstraintCorrection handling every contact (the usual set-up) is taken
        // out of the scene once for the whole solve and called directly.
        if let [c] = *corrections {
            if scene.components[c].obj.as_ref().is_some_and(|o| o.as_any().is::<UncoupledConstraintCorrection>()) {
                return scene.with_taken(c, |obj, scene| {
                    let Some(u) = obj.as_any_mut().downcast_mut::<UncoupledConstraintCorrection>() else {
                        return Err(SimError::new("LCPConstraintSolver: the constraint correction changed class"));
                    };
                    let mut ops = u.unbuilt_ops(scene, cclist)?;
                    unbuilt_kernel(p, wdiag, sequence, s, &mut ops, scratch)
                });
            }
        }
        unbuilt_kernel(p, wdiag, sequence, s, &mut SceneUnbuilt { scene, cclist }, scratch)
    }

    /// SOFA's `applyCorrection`: remember the forces, then every correction applies them.
    fn apply_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, s: &Settings) -> SimResult {
        if s.initial_guess {
            self.history.keep(&self.block_infos, &self.problem.lambda);
        }
        let live = self.live_corrections(scene);
        let lambda = &self.problem.lambda;
        let r = live.iter().try_for_each(|&c| {
            if !scene.node(scene.components[c].node).activated {
                return Ok(());
            }
            on_correction(scene, c, |cc, scene| cc.apply_contact_force(scene, cp, lambda))
        });
        self.live = live;
        r
    }
}

/// The unbuilt kernel of the solver's settings: frictionless or with friction.
fn unbuilt_kernel<O: UnbuiltOps + ?Sized>(
    p: &mut ConstraintProblem,
    wdiag: &DenseMatrix,
    sequence: &[usize],
    s: &Settings,
    ops: &mut O,
    scratch: &mut UnbuiltScratch,
) -> SimResult<LcpOutcome> {
    if s.mu == 0.0 {
        lcp_unbuilt_in(&p.dfree, wdiag, &mut p.lambda, sequence, s.tolerance, s.max_it, ops, scratch)
    } else {
        nlcp_unbuilt_in(&p.dfree, wdiag, &mut p.lambda, sequence, s.mu, s.tolerance, s.max_it, ops, scratch)
    }
}

impl LcpConstraintSolver {
    /// Gives the problem the kernel's view for `last_problem`: one resolution per contact (not
    /// used by the kernels, which read `mu` directly), the error history and the sweep count.
    fn describe_problem(&mut self, s: &Settings) {
        use crate::resolution::{UnilateralResolution, UnilateralWithFrictionResolution};
        self.last_built = s.build_lcp;
        let p = &mut self.problem;
        p.error_history.clone_from(&self.outcome.errors);
        p.current_iterations = self.outcome.iterations;
        p.current_error = self.outcome.errors.last().copied().unwrap_or(0.0);
        p.tolerance = s.tolerance;
        p.max_iterations = s.max_it;
        p.scale_tolerance = false;
        p.all_verified = false;
        p.sor = 1.0;
        let n = p.n;
        // `last_problem` shows only built problems: an unbuilt one gets no resolution (no box
        // per contact at every step).
        if !s.build_lcp {
            return;
        }
        if s.mu > 0.0 && n.is_multiple_of(3) {
            for r in (0..n).step_by(3) {
                p.resolutions[r] = Some(Box::new(UnilateralWithFrictionResolution::new(s.mu)));
            }
        } else if s.mu <= 0.0 {
            for r in 0..n {
                p.resolutions[r] = Some(Box::new(UnilateralResolution::new()));
            }
        }
    }
}

impl Component for LcpConstraintSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.id = Some(cx.id);
        self.node = Some(cx.node());
        self.corrections = settee_core::constraint::constraint_corrections(cx.scene, cx.node());
        let d = cx.data();
        let (max_it, multi_grid, debug) = (d.get(LcpSolverData::MAX_IT), d.get(LcpSolverData::MULTI_GRID), d.get(LcpSolverData::DISPLAY_DEBUG));
        if max_it < 0 {
            return Err(cx.error("maxIt must not be negative"));
        }
        if multi_grid {
            cx.warn("multi_grid=true is not supported (SOFA removed the multigrid LCP resolution): the plain Gauss-Seidel is used and multi_grid_levels, merge_method, merge_spatial_step, merge_local_levels are ignored");
        }
        if debug {
            cx.warn("displayDebug=true is not supported (in SOFA it re-solves an unbuilt problem with the built kernel): ignored");
        }
        Ok(())
    }
}

impl ConstraintSolver for LcpConstraintSolver {
    /// SOFA's base `getDx`/`getLambda`: `dx` and `externalForce`.
    fn dx_and_lambda(&self) -> (VecId, VecId) {
        (VecId::DX, VecId::EXTERNAL_FORCE)
    }

    fn solve_constraint(&mut self, scene: &mut Scene, cp: &ConstraintParams, _res1: VecId, _res2: Option<VecId>) -> SimResult {
        let s = self.settings(scene)?;
        self.prepare_states(scene)?;
        // SOFA builds with its own ConstraintParams: free state, POS_AND_VEL, whatever the loop's.
        let own = ConstraintParams {
            x: VecId::FREE_POSITION,
            v: VecId::FREE_VELOCITY,
            dx: VecId::DX,
            lambda: VecId::EXTERNAL_FORCE,
            order: ConstraintOrder::PosAndVel,
            ..*cp
        };
        let node = self.node.ok_or_else(|| SimError::new("LCPConstraintSolver used before init"))?;
        self.build_system(scene, &own, &s)?;
        settee_core::simulation::propagate_event(scene, node, "BuildConstraintSystemEndEvent")?;
        self.solve_system(scene, &own, &s)?;
        settee_core::simulation::propagate_event(scene, node, "SolveConstraintSystemEndEvent")?;
        self.describe_problem(&s);
        self.apply_correction(scene, &own, &s)
    }

    /// The built problem, its blocks described as the kernel treats them (3-row contacts with
    /// the solver's `mu` when `mu > 0`, frictionless rows otherwise).
    fn last_problem(&self) -> Option<&ConstraintProblem> {
        self.last_built.then_some(&self.problem)
    }
}
