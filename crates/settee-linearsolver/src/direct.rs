//! Direct sparse solvers over the assembled system (mechanics spec §4.5): `SparseLDLSolver`,
//! `EigenSimplicialLDLT`, `EigenSimplicialLLT`, `EigenSparseLU`, `EigenSparseQR`.
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

/// Copies the entries of `a` that are not exactly zero (SOFA's `copyNonZeros` + `compress`).
pub fn copy_non_zeros(a: &CsrMatrix) -> Result<CsrMatrix, LinalgError> {
    let n = a.nrows();
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col_idx = Vec::with_capacity(a.nnz());
    let mut values = Vec::with_capacity(a.nnz());
    row_ptr.push(0);
    for i in 0..n {
        for (c, v) in a.row(i) {
            if v != 0.0 {
                col_idx.push(c);
                values.push(v);
            }
        }
        row_ptr.push(col_idx.len());
    }
    CsrMatrix::try_from_parts(n, a.ncols(), row_ptr, col_idx, values)
}

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
        name = "SparseLDLSolver",
        description = "Direct Linear Solver using a Sparse LDL^T factorization.",
        create = |_| DirectLinearSolver::new(DirectKind::Ldlt, true),
        data = {
            /// If true the solver will reuse the precomputed symbolic decomposition. Otherwise it will recompute it at each step.
            precomputeSymbolicDecomposition: Bool = "true",
            /// Number of non-zero values in the lower triangular matrix of the factorization. The lower, the faster the system is solved.
            L_nnz: Int = "0",
        },
    ),
    class(
        name = "EigenSimplicialLDLT",
        description = "Direct Linear Solver using a Simplicial LDLT factorization of the Eigen library",
        create = |_| DirectLinearSolver::new(DirectKind::Ldlt, false),
    ),
    class(
        name = "EigenSimplicialLLT",
        description = "Direct Linear Solver using a Simplicial LLT factorization of the Eigen library",
        create = |_| DirectLinearSolver::new(DirectKind::Llt, false),
    ),
    class(
        name = "EigenSparseLU",
        description = "Direct Linear Solver using a Sparse LU factorization of the Eigen library",
        create = |_| DirectLinearSolver::new(DirectKind::Lu, false),
    ),
    class(
        name = "EigenSparseQR",
        description = "Direct Linear Solver using a Sparse QR factorization of the Eigen library",
        create = |_| DirectLinearSolver::new(DirectKind::Qr, false),
    ),
)]
pub struct DirectLinearSolver {
    kind: DirectKind,
    /// SparseLDLSolver: has `precomputeSymbolicDecomposition` and `L_nnz`.
    has_ldl_data: bool,
    ordering: Ordering,
    reuse_symbolic: bool,
    system: AssembledSystem,
    solver: Option<DirectSolver>,
    me: Option<ComponentId>,
    factorizations: usize,
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
            me: None,
            factorizations: 0,
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
        self.reuse_symbolic = !self.has_ldl_data || cx.data().get(Self::PRECOMPUTE_SYMBOLIC_DECOMPOSITION);
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
        let solver = self.factorized(scene, scope)?;
        if j.ncols != solver.dim() {
            return Err(step_error(scene, me, format!("constraint rows have {} columns but the system has {} unknowns", j.ncols, solver.dim())));
        }
        let fail = |e: settee_linalg::LinalgError| {
            let (hint, msg) = describe(&e);
            step_error(scene, me, format!("solving the factorised system failed: {msg}")).hint(hint)
        };
        if ldl_form {
            return add_jminvjt_ldl(solver, j, factor, w).map_err(fail);
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

/// SOFA's `SparseLDLSolver::addJMInvJt`: with `PAPᵀ = LDLᵀ` and the non-empty rows `Jᵢ`,
/// `Zᵢ = L⁻¹PJᵢᵀ`, then for each pair `j ≤ i` (flat lower-triangle order)
/// `v = factor·Σₖ (Zⱼ[k]·D⁻¹[k])·Zᵢ[k]`, added to `W[j][i]` and, off the diagonal, `W[i][j]`:
/// exactly symmetric.
fn add_jminvjt_ldl(solver: &settee_linalg::DirectSolver, j: &ConstraintJacobian, factor: f64, w: &mut DenseMatrix) -> Result<(), LinalgError> {
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

impl DirectLinearSolver {
    /// The factorization of the last solve, for a solve over `scope`.
    fn factorized(&self, scene: &Scene, scope: &MechScope) -> SimResult<&settee_linalg::DirectSolver> {
        factorized(&self.solver, self.me, scene, scope)
    }

    /// Assembles `P(mM + bB + kK)P` and factorises it.
    fn assemble_and_factorize(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        let me = self.me;
        let builder = self.system.assemble(scene, scope, factors)?;
        let a = copy_non_zeros(builder.matrix()).map_err(|e| step_error(scene, me, format!("copying the system matrix: {e}")))?;
        if !self.reuse_symbolic {
            self.solver = None;
        }
        let (kind, ordering) = (self.kind, self.ordering);
        let solver = self.solver.get_or_insert_with(|| DirectSolver::new(kind, ordering));
        if let Err(e) = solver.factorize(&a) {
            let (hint, msg) = describe(&e);
            return Err(step_error(scene, me, format!("factorization of the {}x{} system failed: {msg}", a.nrows(), a.ncols())).hint(hint));
        }
        self.factorizations += 1;
        if self.has_ldl_data {
            if let (Some(n), Some(c)) = (solver.l_nnz(), me) {
                scene.entry_mut(c).data.put(Self::L_NNZ, n as i64);
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
