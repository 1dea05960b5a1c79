//! Direct sparse solvers over the assembled system (mechanics spec §4.5): `SparseLDLSolver` (and
//! `AsyncSparseLDLSolver`, made synchronous), `EigenSimplicialLDLT`, `EigenSimplicialLLT`, `EigenSparseLU`, `EigenSparseQR`.
//!
//! Every step: assemble `P(mM + bB + kK)P` with the ODE factors (pattern kept from step to step),
//! copy its non-zero entries into a scalar CRS matrix (SOFA's `copyNonZeros`), factorise (the
//! symbolic analysis is redone only when that pattern changes, unless
//! `precomputeSymbolicDecomposition` is false), solve for the gathered right-hand side and scatter
//! the solution into the states.

use rayon::prelude::*;
use settee_core::component::LinearSolver;
use settee_core::constraint::{ConstraintJacobian, DenseMatrix};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::role::LinearSystem;
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimError, SimResult, VecId};
use settee_linalg::{CsrMatrix, DirectKind, DirectSolver, LinalgError, Ordering};

use crate::common::{step_error, AssembledSystem, MatrixSolverData};
use crate::ordering::resolve_ordering;
use crate::preconditioner::Preconditioner;

/// The Data of SOFA's `SparseLDLSolver`, which `AsyncSparseLDLSolver` inherits.
#[settee_core::data_group(data = {
    /// If true the solver will reuse the precomputed symbolic decomposition. Otherwise it will recompute it at each step.
    precomputeSymbolicDecomposition: Bool = "true",
    /// Number of non-zero values in the lower triangular matrix of the factorization. The lower, the faster the system is solved.
    L_nnz: Int = "0",
})]
pub struct SparseLdlData;

/// One of the direct sparse solvers. They also serve as exact preconditioners of
/// `PCGLinearSolver` (and inside a `WarpPreconditioner`).
#[component(
    roles = [LinearSolver, Preconditioner],
    templates = ["CompressedRowSparseMatrixd", "CompressedRowSparseMatrixMat3x3d"],
    default_template = "CompressedRowSparseMatrixd",
    inherit = [MatrixSolverData],
    links = {
        /// The linear system to solve
        linearSystem: LinearSystem,
        /// Ordering method used by this component
        orderingMethod: settee_core::role::Ordering,
    },
    class(
        name = "SparseLDLSolver", module = "Sofa.Component.LinearSolver.Direct",
        description = "Direct Linear Solver using a Sparse LDL^T factorization.",
        create = |_| DirectLinearSolver::new(DirectKind::Ldlt, true),
        inherit = [MatrixSolverData, SparseLdlData],
    ),
    class(
        name = "AsyncSparseLDLSolver", module = "Sofa.Component.LinearSolver.Direct",
        description = "Asynchronous direct Linear Solver using a Sparse LDL^T factorization. Settee factorizes synchronously: it behaves as SparseLDLSolver. (SOFA factorizes in another thread and solves with the latest finished factorization, possibly one or more steps old, which is not deterministic.)",
        create = |_| DirectLinearSolver::new(DirectKind::Ldlt, true),
        inherit = [MatrixSolverData, SparseLdlData, Self],
        data = {
            /// Allow assembly of the linear system (SOFA pauses the assembly while a factorization runs; Settee always assembles)
            enableAssembly: Bool = "true",
        },
    ),
    class(
        name = "EigenSimplicialLDLT", module = "Sofa.Component.LinearSolver.Direct",
        description = "Direct Linear Solver using a Simplicial LDLT factorization of the Eigen library",
        create = |_| DirectLinearSolver::new(DirectKind::Ldlt, false),
    ),
    class(
        name = "EigenSimplicialLLT", module = "Sofa.Component.LinearSolver.Direct",
        description = "Direct Linear Solver using a Simplicial LLT factorization of the Eigen library",
        create = |_| DirectLinearSolver::new(DirectKind::Llt, false),
    ),
    class(
        name = "EigenSparseLU", module = "Sofa.Component.LinearSolver.Direct",
        description = "Direct Linear Solver using a Sparse LU factorization of the Eigen library",
        create = |_| DirectLinearSolver::new(DirectKind::Lu, false),
    ),
    class(
        name = "EigenSparseQR", module = "Sofa.Component.LinearSolver.Direct",
        description = "Direct Linear Solver using a Sparse QR factorization of the Eigen library",
        create = |_| DirectLinearSolver::new(DirectKind::Qr, false),
    ),
)]
#[derive(Clone)]
pub struct DirectLinearSolver {
    kind: DirectKind,
    /// SparseLDLSolver: has `precomputeSymbolicDecomposition` and `L_nnz`.
    has_ldl_data: bool,
    ordering: Ordering,
    reuse_symbolic: bool,
    system: AssembledSystem,
    solver: Option<DirectSolver>,
    /// The system's non-zero entries, as factorised (kept for its buffers).
    filtered: CsrMatrix,
    me: Option<ComponentId>,
    factorizations: usize,
    schur: SchurWork,
}

impl DirectLinearSolver {
    fn new(kind: DirectKind, has_ldl_data: bool) -> Self {
        DirectLinearSolver {
            kind,
            has_ldl_data,
            ordering: Ordering::Amd,
            reuse_symbolic: true,
            system: AssembledSystem::default(),
            solver: None,
            filtered: CsrMatrix::zeros(0, 0),
            me: None,
            factorizations: 0,
            schur: SchurWork::default(),
        }
    }
    pub fn kind(&self) -> DirectKind {
        self.kind
    }
    pub fn ordering(&self) -> Ordering {
        self.ordering
    }
    /// Number of numeric factorisations performed.
    pub fn factorizations(&self) -> usize {
        self.factorizations
    }
    /// Number of symbolic analyses performed by the current factorisation object.
    pub fn symbolic_analyses(&self) -> usize {
        self.solver.as_ref().map_or(0, |s| s.symbolic_count())
    }
}

impl Component for DirectLinearSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.system.set_link(cx);
        let (ordering, _) = resolve_ordering(cx)?;
        self.ordering = ordering;
        self.reuse_symbolic = !self.has_ldl_data || cx.data().get(SparseLdlData::PRECOMPUTE_SYMBOLIC_DECOMPOSITION);
        self.solver = None;
        self.factorizations = 0;
        Ok(())
    }
}

fn describe(e: &LinalgError) -> (&'static str, String) {
    let hint = match e {
        LinalgError::ZeroPivot { .. } | LinalgError::Singular(_) => {
            "the system matrix is singular: make sure every DOF has a mass, a stiffness or a fixed constraint"
        }
        LinalgError::NotPositiveDefinite { .. } => {
            "EigenSimplicialLLT needs a symmetric positive definite matrix; use SparseLDLSolver or EigenSparseLU for indefinite systems"
        }
        _ => "the assembled system matrix cannot be factorised",
    };
    (hint, e.to_string())
}

impl LinearSolver for DirectLinearSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
        self.assemble_and_factorize(scene, scope, factors)?;
        let me = self.me;
        let sys = &mut self.system;
        mech::gather(scene, scope, rhs, &mut sys.b);
        sys.x.clear();
        sys.x.resize(sys.b.len(), 0.0);
        let solver = self.solver.as_ref().ok_or_else(|| step_error(scene, me, "solve before factorization"))?;
        if let Err(e) = solver.solve(&sys.b, &mut sys.x) {
            let (hint, msg) = describe(&e);
            return Err(step_error(scene, me, format!("solving the factorised system failed: {msg}")).hint(hint));
        }
        mech::scatter(scene, scope, solution, &sys.x);
        Ok(())
    }

    fn solve_again(&mut self, scene: &mut Scene, scope: &MechScope, rhs: VecId, solution: VecId) -> SimResult {
        let me = self.me;
        let solver = factorized(&self.solver, me, scene, scope)?;
        let sys = &mut self.system;
        mech::gather(scene, scope, rhs, &mut sys.b);
        sys.x.clear();
        sys.x.resize(sys.b.len(), 0.0);
        if let Err(e) = solver.solve(&sys.b, &mut sys.x) {
            let (hint, msg) = describe(&e);
            return Err(step_error(scene, me, format!("solving the factorised system failed: {msg}")).hint(hint));
        }
        mech::scatter(scene, scope, solution, &sys.x);
        Ok(())
    }

    fn add_jminvjt(&mut self, scene: &mut Scene, scope: &MechScope, j: &ConstraintJacobian, factor: f64, w: &mut DenseMatrix) -> SimResult {
        let me = self.me;
        let ldl_form = self.has_ldl_data;
        let solver = factorized(&self.solver, me, scene, scope)?;
        if j.ncols != solver.dim() {
            return Err(step_error(scene, me, format!("constraint rows have {} columns but the system has {} unknowns", j.ncols, solver.dim())));
        }
        let fail = |e: settee_linalg::LinalgError| {
            let (hint, msg) = describe(&e);
            step_error(scene, me, format!("solving the factorised system failed: {msg}")).hint(hint)
        };
        if ldl_form {
            return add_jminvjt_ldl(solver, j, factor, w, &mut self.schur).map_err(fail);
        }
        // Eigen solvers: SOFA's generic loop, one solve per row (an empty row solves to 0 and
        // adds nothing, so it is skipped).
        let mut err = None;
        let r = j.add_jminvjt_generic(w, factor, true, |rhs, y| {
            y.clear();
            y.resize(rhs.len(), 0.0);
            solver.solve(rhs, y).map_err(|e| {
                err = Some(e);
                SimError::new("solve")
            })
        });
        match (r, err) {
            (_, Some(e)) => Err(fail(e)),
            (r, None) => r,
        }
    }
}

/// The factorization of the last solve, checked against a solve over `scope`.
fn factorized<'a>(solver: &'a Option<DirectSolver>, me: Option<ComponentId>, scene: &Scene, scope: &MechScope) -> SimResult<&'a DirectSolver> {
    match solver {
        Some(s) if s.is_factorized() && s.dim() == scope.size => Ok(s),
        Some(s) if s.is_factorized() => {
            Err(step_error(scene, me, format!("the system was factorised with {} unknowns but {} are asked for", s.dim(), scope.size)))
        }
        _ => Err(step_error(scene, me, "no factorised system yet: the constraint correction runs before the free motion solved it")),
    }
}

/// Buffers of [`add_jminvjt_ldl`], kept between steps.
#[derive(Clone, Debug, Default)]
struct SchurWork {
    /// Permuted position of each original index.
    position: Vec<usize>,
    /// Permuted columns some row's forward substitution can reach.
    mark: Vec<bool>,
    /// Those columns, increasing: the packed coordinates `p` of `Z`.
    cols: Vec<usize>,
    /// `Z` in panels of 4 rows, packed column-wise: row `4g + a`, packed column `p` at
    /// `g·4u + 4p + a` (`u = cols.len()`).
    zp: Vec<f64>,
    /// `Z·D⁻¹` in panels of 8 rows: row `8g + b`, packed column `p` at `g·8u + 8p + b`.
    zdp: Vec<f64>,
    /// First packed column where each row's `Z` is non-zero (`u` if none).
    start: Vec<usize>,
    /// Lower triangle of `Jᵢ A⁻¹ Jⱼᵀ` before `factor`, row `i` at `i·m`.
    vals: Vec<f64>,
}

/// SOFA's `SparseLDLSolver::addJMInvJt`: with `PAPᵀ = LDLᵀ` and the non-empty rows `Jᵢ`,
/// `Zᵢ = L⁻¹PJᵢᵀ`, then for each pair `j ≤ i` (flat lower-triangle order)
/// `v = factor·Σₖ (Zⱼ[k]·D⁻¹[k])·Zᵢ[k]`, added to `W[j][i]` and, off the diagonal, `W[i][j]`:
/// exactly symmetric.
///
/// The sums keep SOFA's order (each one over `k` increasing, from `0.0`, one product at a time)
/// but skip the products that are exact zeros: a running sum that starts at `+0.0` is never
/// `-0.0`, so adding `±0.0` leaves it unchanged. `Zᵢ` is exactly zero outside the supernodes on
/// the elimination-tree paths of `Jᵢ`'s entries ([`DirectSolver::ldlt_mark_reach`]); only the
/// union of those columns is stored (packed), and each 4×8 tile of `W` starts at the first
/// packed column where both its row groups can be non-zero. The tiles read `Z` and `Z·D⁻¹`
/// from panels laid out for streaming, and each entry is computed by one thread: the same bits
/// for any thread count, and as SOFA's dense loop.
fn add_jminvjt_ldl(
    solver: &settee_linalg::DirectSolver,
    j: &ConstraintJacobian,
    factor: f64,
    w: &mut DenseMatrix,
    work: &mut SchurWork,
) -> Result<(), LinalgError> {
    let n = solver.dim();
    let (Some(perm), Some(inv_d)) = (solver.ldlt_permutation(), solver.ldlt_inv_d()) else {
        return Err(LinalgError::NotFactorized);
    };
    let rows: Vec<&(usize, Vec<(usize, f64)>)> = j.rows.iter().filter(|(r, _)| *r < w.n).collect();
    let m = rows.len();
    if m == 0 || n == 0 {
        return Ok(());
    }
    let SchurWork { position, mark, cols, zp, zdp, start, vals } = work;
    position.resize(n, 0);
    for (k, &p) in perm.iter().enumerate() {
        position[p] = k;
    }
    mark.clear();
    mark.resize(n, false);
    for (_, line) in &rows {
        for &(c, _) in line {
            solver.ldlt_mark_reach(position[c], mark)?;
        }
    }
    cols.clear();
    cols.extend(mark.iter().enumerate().filter(|(_, m)| **m).map(|(k, _)| k));
    let u = cols.len();
    let groups8 = m.div_ceil(8);
    zp.clear();
    zp.resize(groups8 * 8 * u, 0.0);
    zdp.clear();
    zdp.resize(groups8 * 8 * u, 0.0);
    start.clear();
    start.resize(groups8 * 8, u);
    let wl = solver.ldlt_workspace_len();
    let (position, cols) = (&*position, &*cols);
    // Z and Z·D⁻¹, eight rows per task (each row by one thread, whatever the thread count).
    zp.par_chunks_mut(8 * u).zip(zdp.par_chunks_mut(8 * u)).zip(start.par_chunks_mut(8)).enumerate().try_for_each_init(
        || (vec![0.0f64; n], vec![0.0f64; wl]),
        |(x, wk), (g, ((zp8, zdp8), st8))| {
            for b in 0..8 {
                let Some((_, line)) = rows.get(8 * g + b) else { break };
                for &(c, v) in line {
                    x[position[c]] = v;
                }
                solver.ldlt_forward_with(x, wk)?;
                let (panel, a) = (&mut zp8[(b / 4) * 4 * u..(b / 4 + 1) * 4 * u], b % 4);
                for (p, &k) in cols.iter().enumerate() {
                    let z = x[k];
                    // Outside `cols` x stayed zero: only these entries need clearing.
                    x[k] = 0.0;
                    panel[4 * p + a] = z;
                    zdp8[8 * p + b] = z * inv_d[k];
                    if z != 0.0 && st8[b] == u {
                        st8[b] = p;
                    }
                }
            }
            Ok::<(), LinalgError>(())
        },
    )?;
    // Lower triangle by tiles of 4 rows i × 8 rows j (j ≤ i kept).
    vals.clear();
    vals.resize(groups8 * 8 * m, 0.0);
    let (zp, zdp, start) = (&*zp, &*zdp, &*start);
    vals.par_chunks_mut(4 * m).enumerate().for_each(|(gi, out)| {
        let i0 = 4 * gi;
        if i0 >= m {
            return;
        }
        let si = start[i0..i0 + 4].iter().copied().min().unwrap_or(u);
        let zi = &zp[gi * 4 * u..(gi + 1) * 4 * u];
        for gj in 0..=(i0 + 3).min(m - 1) / 8 {
            let sj = start[8 * gj..8 * gj + 8].iter().copied().min().unwrap_or(u);
            let from = si.max(sj);
            let acc = schur_tile(&zi[4 * from..], &zdp[gj * 8 * u + 8 * from..(gj + 1) * 8 * u]);
            for (a, acc_a) in acc.iter().enumerate() {
                let i = i0 + a;
                if i >= m {
                    break;
                }
                for (b, &v) in acc_a.iter().enumerate() {
                    let jj = 8 * gj + b;
                    if jj <= i {
                        out[a * m + jj] = v;
                    }
                }
            }
        }
    });
    for i in 0..m {
        for jj in 0..=i {
            let value = vals[i * m + jj] * factor;
            let (gi, gj) = (rows[i].0, rows[jj].0);
            w.add(gj, gi, value);
            if gi != gj {
                w.add(gi, gj, value);
            }
        }
    }
    Ok(())
}

/// `acc[a][b] = Σₚ zd[8p + b]·z[4p + a]`, each sum from `0.0` over `p` increasing, one product
/// at a time (`zd`, `z`: the panels of [`SchurWork`] from the tile's first packed column).
fn schur_tile(z: &[f64], zd: &[f64]) -> [[f64; 8]; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { schur_tile_avx2(z, zd) };
        }
    }
    schur_tile_impl(z, zd)
}

/// [`schur_tile_impl`] compiled with AVX2: element-wise multiplications and additions only (no
/// FMA), so the bits of the baseline build.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn schur_tile_avx2(z: &[f64], zd: &[f64]) -> [[f64; 8]; 4] {
    schur_tile_impl(z, zd)
}

#[inline(always)]
fn schur_tile_impl(z: &[f64], zd: &[f64]) -> [[f64; 8]; 4] {
    let mut acc = [[0.0f64; 8]; 4];
    for (zi, zj) in z.chunks_exact(4).zip(zd.chunks_exact(8)) {
        for (acc_a, &za) in acc.iter_mut().zip(zi) {
            for (x, &zb) in acc_a.iter_mut().zip(zj) {
                *x += zb * za;
            }
        }
    }
    acc
}

impl DirectLinearSolver {
    /// Assembles `P(mM + bB + kK)P` and factorises it.
    fn assemble_and_factorize(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        let me = self.me;
        let builder = self.system.assemble(scene, scope, factors)?;
        // SOFA's `copyNonZeros` + `compress`.
        builder.matrix().without_zeros_into(&mut self.filtered);
        let a = &self.filtered;
        if !self.reuse_symbolic {
            self.solver = None;
        }
        let (kind, ordering) = (self.kind, self.ordering);
        let solver = self.solver.get_or_insert_with(|| {
            let mut s = DirectSolver::new(kind, ordering);
            s.keep_analysis_across_patterns(true);
            s
        });
        if let Err(e) = solver.factorize(a) {
            let (hint, msg) = describe(&e);
            return Err(step_error(scene, me, format!("factorization of the {}x{} system failed: {msg}", a.nrows(), a.ncols())).hint(hint));
        }
        self.factorizations += 1;
        if self.has_ldl_data {
            if let (Some(n), Some(c)) = (solver.l_nnz(), me) {
                scene.entry_mut(c).data.put(SparseLdlData::L_NNZ, n as i64);
            }
        }
        Ok(())
    }
}

impl Preconditioner for DirectLinearSolver {
    fn refresh(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        self.assemble_and_factorize(scene, scope, factors)
    }
    fn apply(&mut self, scene: &mut Scene, r: &[f64], z: &mut [f64]) -> SimResult {
        let me = self.me;
        let solver = self.solver.as_ref().ok_or_else(|| step_error(scene, me, "used as a preconditioner before its matrix was built"))?;
        solver.solve(r, z).map_err(|e| {
            let (hint, msg) = describe(&e);
            step_error(scene, me, format!("solving the factorised system failed: {msg}")).hint(hint)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dense loop the packed, tiled [`add_jminvjt_ldl`] replaces (the previous
    /// implementation, itself checked against SOFA's form): both must give the same bits.
    /// SOFA's `SparseLDLSolver::addJMInvJt`: with `PAPᵀ = LDLᵀ` and the non-empty rows `Jᵢ`,
    /// `Zᵢ = L⁻¹PJᵢᵀ`, then for each pair `j ≤ i` (flat lower-triangle order)
    /// `v = factor·Σₖ (Zⱼ[k]·D⁻¹[k])·Zᵢ[k]`, added to `W[j][i]` and, off the diagonal, `W[i][j]`:
    /// exactly symmetric.
    fn add_jminvjt_ldl_reference(
        solver: &settee_linalg::DirectSolver,
        j: &ConstraintJacobian,
        factor: f64,
        w: &mut DenseMatrix,
    ) -> Result<(), LinalgError> {
        let n = solver.dim();
        let (Some(perm), Some(inv_d)) = (solver.ldlt_permutation(), solver.ldlt_inv_d()) else {
            return Err(LinalgError::NotFactorized);
        };
        let mut position = vec![0usize; n];
        for (k, &p) in perm.iter().enumerate() {
            position[p] = k;
        }
        let rows: Vec<&(usize, Vec<(usize, f64)>)> = j.rows.iter().filter(|(r, _)| *r < w.n).collect();
        let m = rows.len();
        if m == 0 || n == 0 {
            return Ok(());
        }
        // Z and Z·D⁻¹, one row per constraint row, computed in parallel (each row by one thread, in
        // the same order whatever the thread count). `start[i]`: the first non-zero of Zᵢ — `L` is
        // unit lower triangular, so Zᵢ is zero before the first (permuted) entry of its right-hand
        // side.
        let mut z = vec![0.0f64; m * n];
        let mut zd = vec![0.0f64; m * n];
        let mut start = vec![0usize; m];
        z.par_chunks_mut(n).zip(zd.par_chunks_mut(n)).zip(start.par_iter_mut()).zip(rows.par_iter()).try_for_each(
            |(((zi, zdi), first), (_, line))| {
                for &(c, v) in line {
                    zi[position[c]] = v;
                }
                solver.ldlt_forward_in_place(zi)?;
                *first = zi.iter().position(|x| *x != 0.0).unwrap_or(n);
                for ((d, &x), &id) in zdi.iter_mut().zip(zi.iter()).zip(inv_d) {
                    *d = x * id;
                }
                Ok::<(), LinalgError>(())
            },
        )?;
        // Lower triangle, row i against rows 0..=i: `factor·Σₖ (Zⱼ[k]·D⁻¹[k])·Zᵢ[k]`, summed over k in
        // increasing order. Products before the later of the two first non-zeros are exact zeros
        // and are skipped: adding them to the running 0 would leave it 0, so the bits are those of
        // the full sum.
        let values: Vec<Vec<f64>> = (0..m)
            .into_par_iter()
            .map(|i| {
                let zi = &z[i * n..(i + 1) * n];
                let mut line = Vec::with_capacity(i + 1);
                // Four rows j at a time share the loads of Zᵢ; each sum still runs over k in
                // increasing order from its own start (the earlier terms of a group are exact zeros
                // added to a zero), so every entry has the bits of its own loop.
                let mut jj = 0;
                while jj + 4 <= i + 1 {
                    let from = start[i].max(start[jj..jj + 4].iter().copied().min().unwrap_or(n));
                    let r = |q: usize| &zd[(jj + q) * n + from..(jj + q + 1) * n];
                    let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
                    let (mut v0, mut v1, mut v2, mut v3) = (0.0, 0.0, 0.0, 0.0);
                    for (k, b) in zi[from..].iter().enumerate() {
                        v0 += r0[k] * b;
                        v1 += r1[k] * b;
                        v2 += r2[k] * b;
                        v3 += r3[k] * b;
                    }
                    line.extend([v0 * factor, v1 * factor, v2 * factor, v3 * factor]);
                    jj += 4;
                }
                for jj in jj..=i {
                    let from = start[i].max(start[jj]);
                    let zj = &zd[jj * n..(jj + 1) * n];
                    let mut value = 0.0;
                    for (a, b) in zj[from..].iter().zip(&zi[from..]) {
                        value += a * b;
                    }
                    line.push(value * factor);
                }
                line
            })
            .collect();
        for (i, line) in values.iter().enumerate() {
            for (jj, &value) in line.iter().enumerate() {
                let (gi, gj) = (rows[i].0, rows[jj].0);
                w.add(gj, gi, value);
                if gi != gj {
                    w.add(gi, gj, value);
                }
            }
        }
        Ok(())
    }

    fn lcg(state: &mut u64) -> f64 {
        *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*state >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
    }

    /// A symmetric, diagonally dominant matrix with 3×3 blocks on the edges of an
    /// `nx × ny × nz` grid of nodes.
    fn grid_matrix(nx: usize, ny: usize, nz: usize, seed: u64) -> CsrMatrix {
        let nodes = nx * ny * nz;
        let n = 3 * nodes;
        let mut st = seed;
        let id = |x: usize, y: usize, z: usize| (z * ny + y) * nx + x;
        let mut dense_rows: Vec<std::collections::BTreeMap<usize, f64>> = vec![Default::default(); n];
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let a = id(x, y, z);
                    let mut nb = vec![];
                    if x + 1 < nx {
                        nb.push(id(x + 1, y, z));
                    }
                    if y + 1 < ny {
                        nb.push(id(x, y + 1, z));
                    }
                    if z + 1 < nz {
                        nb.push(id(x, y, z + 1));
                    }
                    for b in nb {
                        for r in 0..3 {
                            for c in 0..3 {
                                let v = lcg(&mut st);
                                *dense_rows[3 * a + r].entry(3 * b + c).or_default() += v;
                                *dense_rows[3 * b + c].entry(3 * a + r).or_default() += v;
                            }
                        }
                    }
                }
            }
        }
        for (i, row) in dense_rows.iter_mut().enumerate() {
            let s: f64 = row.values().map(|v| v.abs()).sum();
            *row.entry(i).or_default() += s + 1.0 + lcg(&mut st).abs();
        }
        let mut row_ptr = vec![0];
        let mut col_idx = vec![];
        let mut values = vec![];
        for row in &dense_rows {
            for (&c, &v) in row {
                col_idx.push(c);
                values.push(v);
            }
            row_ptr.push(col_idx.len());
        }
        CsrMatrix::try_from_parts(n, n, row_ptr, col_idx, values).unwrap()
    }

    #[test]
    fn packed_schur_complement_has_the_bits_of_the_dense_loop() {
        for (ordering, seed) in [(Ordering::Amd, 3u64), (Ordering::Natural, 5), (Ordering::Amd, 11)] {
            let a = grid_matrix(6, 5, 4, seed);
            let n = a.nrows();
            let mut solver = DirectSolver::new(DirectKind::Ldlt, ordering);
            solver.factorize(&a).unwrap();
            let mut st = seed * 7 + 1;
            // Contact-like rows (three per point, on a few nodes, some sharing a node), an
            // empty row and a row beyond W (ignored), with gaps in the row ids.
            let mut rows = vec![];
            let mut id = 0;
            for c in 0..13 {
                let node = (c * 37 + 5) % (n / 3);
                let node2 = (node + 1 + c % 3) % (n / 3);
                for _ in 0..3 {
                    let mut line = vec![];
                    for k in 0..3 {
                        line.push((3 * node + k, lcg(&mut st)));
                        line.push((3 * node2 + k, lcg(&mut st)));
                    }
                    rows.push((id, line));
                    id += 1 + c % 2;
                }
            }
            rows.push((id, vec![]));
            rows.push((id + 1, vec![(4, 1.0)]));
            let wn = id + 1;
            let j = ConstraintJacobian { ncols: n, rows, ..Default::default() };
            for factor in [1.0, -0.37] {
                let mut w_new = DenseMatrix::zeros(wn);
                let mut w_ref = DenseMatrix::zeros(wn);
                for (k, v) in w_new.data.iter_mut().zip(w_ref.data.iter_mut()).enumerate() {
                    let x = (k as f64 * 0.1).sin();
                    *v.0 = x;
                    *v.1 = x;
                }
                let mut work = SchurWork::default();
                add_jminvjt_ldl(&solver, &j, factor, &mut w_new, &mut work).unwrap();
                add_jminvjt_ldl_reference(&solver, &j, factor, &mut w_ref).unwrap();
                // A second call reuses the buffers.
                add_jminvjt_ldl(&solver, &j, factor, &mut w_new, &mut work).unwrap();
                add_jminvjt_ldl_reference(&solver, &j, factor, &mut w_ref).unwrap();
                let bits = |w: &DenseMatrix| w.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&w_new), bits(&w_ref));
                assert!(w_new.data.iter().any(|v| *v != 0.0));
            }
        }
    }
}
