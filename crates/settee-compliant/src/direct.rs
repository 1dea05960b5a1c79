//! Direct KKT solvers (compliant spec §8.3): `LDLTSolver`, `LLTSolver`, `LUSolver`.
//!
//! Schur mode (default): the free block `A` of H is factored by the node's response, then
//! `Φ = A⁻¹ (J S)ᵀ` and `Σ = C' + J S Φ` (sparse, n × n) is factored by the solver's own kind:
//! `λ = Σ⁻¹ (r_n − J S A⁻¹ Sᵀ r_m)`, `v = A⁻¹ Sᵀ r_m + Φ λ`. KKT mode (`schur="false"`): the
//! regularised KKT matrix `[[A, −(J S)ᵀ],[−J S, −C' − ε I]]` is factored at once. Projectors and
//! masks are ignored: every constraint is bilateral here, as in SOFA.

use settee_core::compliant::{AssembledSystem, KktSolver};
use settee_core::{component, Component, InitCtx, SimError, SimResult};
use settee_linalg::{CsrMatrix, DirectKind, DirectSolver, Ordering};

use crate::response::{find_response, Factor, ResponseKind};

/// Registers the direct KKT solvers.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<DirectKktSolver>();
}

/// A direct KKT solver.
#[component(
    roles = [KktSolver],
    inherit = [Self, KktSolverData],
    data = {
        /// solve through the Schur complement (needs a response; an LDLTResponse is made when the node has none)
        schur: Bool = "true",
        /// KKT mode: ε subtracted on every constraint diagonal entry
        regularization: Real = "2.220446049250313e-16",
        /// reuse the symbolic analysis while the pattern is unchanged (always done)
        trackSparsityPattern: Bool = "false",
    },
    class(
        name = "LDLTSolver", module = "Compliant",
        description = "KKT solver of the Compliant formulation: sparse LDLᵀ (Schur complement or full KKT system).",
        create = |_| DirectKktSolver::new(DirectKind::Ldlt),
    ),
    class(
        name = "LLTSolver", module = "Compliant",
        description = "KKT solver of the Compliant formulation: sparse Cholesky of the Schur complement.",
        create = |_| DirectKktSolver::new(DirectKind::Llt),
    ),
    class(
        name = "LUSolver", module = "Compliant",
        description = "KKT solver of the Compliant formulation: sparse LU (Schur complement or full KKT system).",
        create = |_| DirectKktSolver::new(DirectKind::Lu),
    ),
)]
#[derive(Clone)]
pub struct DirectKktSolver {
    kind: DirectKind,
    schur: bool,
    regularization: f64,
    response: Option<Factor>,
    /// Free DOFs (rows of H kept).
    free: Vec<usize>,
    /// `Φ = A⁻¹ (J S)ᵀ`, one sparse column per constraint row (entries that are exactly zero,
    /// outside the reach of the row's DOFs through A, are dropped: Σ stays sparse when A is).
    phi: Vec<Vec<(usize, f64)>>,
    /// `J S` as rows over the free DOFs.
    js: Vec<Vec<(usize, f64)>>,
    sigma: DirectSolver,
    kkt: DirectSolver,
}

impl DirectKktSolver {
    pub fn new(kind: DirectKind) -> DirectKktSolver {
        DirectKktSolver {
            kind,
            schur: true,
            regularization: f64::EPSILON,
            response: None,
            free: Vec::new(),
            phi: Vec::new(),
            js: Vec::new(),
            sigma: DirectSolver::new(kind, Ordering::Amd),
            // The free DOFs are eliminated before the constraint rows: a constraint pivot is then
            // −(J A⁻¹ Jᵀ + C' + ε), not the bare −ε a fill-reducing order can pick first.
            kkt: DirectSolver::new(kind, Ordering::Natural),
        }
    }

    /// A solver for tests and programmatic use.
    pub fn with(kind: DirectKind, schur: bool, response: ResponseKind) -> DirectKktSolver {
        let mut s = DirectKktSolver::new(kind);
        s.schur = schur;
        s.response = Some(Factor::new(response));
        s
    }
}

impl Component for DirectKktSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        self.schur = d.get(Self::SCHUR);
        self.regularization = d.get(Self::REGULARIZATION);
        if !self.schur && self.kind == DirectKind::Llt {
            cx.warn("schur=\"false\": the KKT matrix is indefinite and a Cholesky factorization of it fails as soon as there are constraints");
        }
        Ok(())
    }

    /// The response is read once every component of the node is initialised: it may come after
    /// the solver (`<LDLTSolver/><LDLTResponse/>`).
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        if self.schur {
            let kind = match find_response(cx.scene, cx.node()) {
                Some(k) => k,
                None => ResponseKind::default_for(self.kind != DirectKind::Lu),
            };
            self.response = Some(Factor::new(kind));
        }
        Ok(())
    }
}

/// Rows of `J S`: J restricted to the free DOFs, renumbered.
pub(crate) fn projected_rows(sys: &AssembledSystem, free: &[usize]) -> Vec<Vec<(usize, f64)>> {
    let mut local = vec![usize::MAX; sys.m];
    for (k, &i) in free.iter().enumerate() {
        local[i] = k;
    }
    (0..sys.n).map(|r| sys.j.row(r).filter(|&(c, _)| local[c] != usize::MAX).map(|(c, v)| (local[c], v)).collect()).collect()
}

/// The primal part of a KKT solution: `x[..m]` is zero but at the free DOFs, which take `v`.
pub(crate) fn scatter_free(x: &mut [f64], m: usize, free: &[usize], v: &[f64]) {
    x[..m].fill(0.0);
    for (k, &i) in free.iter().enumerate() {
        x[i] = v[k];
    }
}

/// The Data of Compliant's KKT solver base (`KKTSolver`), which every KKT solver has last.
#[settee_core::data_group(data = {
    /// print the matrices (accepted, no effect)
    debug: Bool = "false",
})]
pub struct KktSolverData;

/// The Data of Compliant's iterative KKT solver base (`IterativeSolver`), which the Krylov and
/// sequential solvers have first.
#[settee_core::data_group(data = {
    /// iteration bound
    iterations: Int = "10",
    /// stop threshold: the residual norm (Krylov solvers), sqrt(Σ‖Δλ_b‖²) / n (sequential solvers)
    precision: Real = "1e-3",
    /// multiply the threshold by the norm of the right-hand side iterated on
    relative: Bool = "false",
})]
pub struct IterativeSolverData;

/// An error for a KKT system that cannot be factorized.
pub(crate) fn singular_kkt(detail: &str) -> SimError {
    SimError::new(format!("the KKT system is singular ({detail})")).hint(
        "hard constraints are redundant or conflicting: give the compliances a small non-zero compliance, \
         or use schur=\"false\" with a regularization > 0",
    )
}

/// An LDLᵀ whose pivot is negligible next to the matrix's entries is singular up to round-off.
fn check_pivots(solver: &DirectSolver, scale: f64) -> SimResult {
    if let Some(inv_d) = solver.ldlt_inv_d() {
        let tiny = scale * 1e-14;
        if let Some((k, d)) = inv_d.iter().map(|&i| 1.0 / i).enumerate().find(|(_, d)| !d.is_finite() || d.abs() <= tiny) {
            return Err(singular_kkt(&format!("pivot {k} is {d:e}")));
        }
    }
    Ok(())
}

impl KktSolver for DirectKktSolver {
    fn factor(&mut self, sys: &AssembledSystem) -> SimResult {
        let (a, free) = sys.free_block();
        self.free = free;
        self.js = projected_rows(sys, &self.free);
        let nf = self.free.len();
        if self.schur || sys.n == 0 {
            let resp = self.response.get_or_insert_with(|| Factor::new(ResponseKind::default_for(true)));
            resp.factor(&a)?;
            let n = sys.n;
            self.phi.clear();
            if let Some(inv) = resp.diagonal_inverse() {
                // A diagonal: Φ has the pattern of (J S)ᵀ.
                for row in &self.js {
                    self.phi.push(row.iter().map(|&(c, v)| (c, v * inv[c])).filter(|(_, v)| *v != 0.0).collect());
                }
            } else {
                let mut col = vec![0.0; nf];
                let mut sol = vec![0.0; nf];
                for k in 0..n {
                    col.fill(0.0);
                    for &(c, v) in &self.js[k] {
                        col[c] = v;
                    }
                    resp.solve(&col, &mut sol)?;
                    self.phi.push(sol.iter().enumerate().filter(|(_, v)| **v != 0.0).map(|(i, v)| (i, *v)).collect());
                }
            }
            if n > 0 {
                // Σ = C' + (J S)·Φ, sparse: the rows of J S that touch each DOF.
                let mut rows_of_dof: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nf];
                for (k, row) in self.js.iter().enumerate() {
                    for &(c, v) in row {
                        rows_of_dof[c].push((k, v));
                    }
                }
                let mut t: Vec<(usize, usize, f64)> = sys.c.iter().collect();
                let mut acc = vec![0.0; n];
                let mut touched: Vec<usize> = Vec::new();
                for (l, phil) in self.phi.iter().enumerate() {
                    for &(i, p) in phil {
                        for &(k, v) in &rows_of_dof[i] {
                            if acc[k] == 0.0 {
                                touched.push(k);
                            }
                            acc[k] += v * p;
                        }
                    }
                    touched.sort_unstable();
                    touched.dedup();
                    for &k in &touched {
                        t.push((k, l, acc[k]));
                        acc[k] = 0.0;
                    }
                    touched.clear();
                }
                let sigma = CsrMatrix::from_triplets(n, n, &t).map_err(|e| SimError::new(e.to_string()))?;
                self.sigma.factorize(&sigma).map_err(|e| singular_kkt(&e.to_string()))?;
                let scale = sigma.values().iter().fold(0.0f64, |a, v| a.max(v.abs()));
                check_pivots(&self.sigma, scale)?;
            }
            return Ok(());
        }
        // Full KKT matrix over (free DOFs, constraint rows).
        let n = sys.n;
        let mut t: Vec<(usize, usize, f64)> = a.iter().collect();
        for (k, row) in self.js.iter().enumerate() {
            for &(c, v) in row {
                t.push((c, nf + k, -v));
                t.push((nf + k, c, -v));
            }
        }
        for (i, j, v) in sys.c.iter() {
            t.push((nf + i, nf + j, -v));
        }
        for k in 0..n {
            t.push((nf + k, nf + k, -self.regularization));
        }
        let kkt = CsrMatrix::from_triplets(nf + n, nf + n, &t).map_err(|e| SimError::new(e.to_string()))?;
        self.kkt.factorize(&kkt).map_err(|e| singular_kkt(&e.to_string()))?;
        let scale = kkt.values().iter().fold(0.0f64, |a, v| a.max(v.abs()));
        check_pivots(&self.kkt, scale)
    }

    fn solve(&mut self, sys: &AssembledSystem, x: &mut [f64], rhs: &[f64]) -> SimResult {
        let (m, n, nf) = (sys.m, sys.n, self.free.len());
        let b: Vec<f64> = self.free.iter().map(|&i| rhs[i]).collect();
        let mut v = vec![0.0; nf];
        let mut lambda = vec![0.0; n];
        if self.schur || n == 0 {
            let resp = self.response.as_ref().ok_or_else(|| SimError::new("KKT solver used before factor"))?;
            resp.solve(&b, &mut v)?;
            if n > 0 {
                let mut r: Vec<f64> = (0..n).map(|k| rhs[m + k] - self.js[k].iter().map(|&(c, w)| w * v[c]).sum::<f64>()).collect();
                self.sigma.solve_in_place(&mut r).map_err(|e| singular_kkt(&e.to_string()))?;
                lambda = r;
                for (phik, l) in self.phi.iter().zip(&lambda) {
                    for &(i, p) in phik {
                        v[i] += p * l;
                    }
                }
            }
        } else {
            let mut r = b;
            r.extend((0..n).map(|k| -rhs[m + k]));
            self.kkt.solve_in_place(&mut r).map_err(|e| singular_kkt(&e.to_string()))?;
            v.copy_from_slice(&r[..nf]);
            lambda.copy_from_slice(&r[nf..]);
        }
        scatter_free(x, m, &self.free, &v);
        x[m..m + n].copy_from_slice(&lambda);
        Ok(())
    }
}

/// Plain conjugate gradients on an SPD matrix, from the given `x`: stops when ‖r‖ ≤ `tolerance`
/// or after `iterations`. Returns (iterations, residual norm).
pub fn cg(a: &CsrMatrix, b: &[f64], x: &mut [f64], iterations: usize, tolerance: f64) -> (usize, f64) {
    let n = b.len();
    let mut ax = vec![0.0; n];
    let _ = a.mul_vec(x, &mut ax);
    let mut r: Vec<f64> = b.iter().zip(&ax).map(|(b, a)| b - a).collect();
    let mut p = r.clone();
    let mut rr: f64 = r.iter().map(|v| v * v).sum();
    let mut ap = vec![0.0; n];
    for k in 0..iterations {
        if rr.sqrt() <= tolerance {
            return (k, rr.sqrt());
        }
        let _ = a.mul_vec(&p, &mut ap);
        let pap: f64 = p.iter().zip(&ap).map(|(a, b)| a * b).sum();
        if pap == 0.0 {
            return (k, rr.sqrt());
        }
        let alpha = rr / pap;
        for i in 0..n {
            x[i] += alpha * p[i];
            r[i] -= alpha * ap[i];
        }
        let rr_new: f64 = r.iter().map(|v| v * v).sum();
        let beta = rr_new / rr;
        rr = rr_new;
        for i in 0..n {
            p[i] = r[i] + beta * p[i];
        }
    }
    (iterations, rr.sqrt())
}
