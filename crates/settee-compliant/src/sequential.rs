//! Projected block Gauss–Seidel KKT solvers (compliant spec §8.5, §8.6): `SequentialSolver`
//! ("sequential impulses") and `NNCGSolver` (nonsmooth nonlinear conjugate gradient on top of
//! its sweep).
//!
//! One block per DOF of every compliant state. The free block `A` of H is factored by the
//! node's response, `R = S A⁻¹ Sᵀ Jᵀ` and every block's `Σ_b = (J P)_b R_b + C'_bb` (dense LDLᵀ)
//! are built once per step; a sweep then solves each block against the current net velocity
//! correction `R λ`, projects its multipliers onto the block's admissible set and updates the
//! net correction. Masked-out blocks get λ = 0.
//!
//! With `iterateOnBilaterals="false"` the rows without projector are not iterated on: they are
//! eliminated with the dynamics by factoring `[[A, −J_bᵀ],[−J_b, −C'_b − εI]]`, which then plays
//! the part of A for the remaining rows.

use settee_core::compliant::{AssembledSystem, KktSolver, Projector};
use settee_core::{component, Component, InitCtx, SimError, SimResult};
use settee_linalg::{CsrMatrix, DirectKind, DirectSolver, Ordering};

use crate::direct::{projected_rows, scatter_free, IterativeSolverData, KktSolverData};
use crate::projectors;
use crate::response::{find_response, Factor, ResponseKind};

/// Registers the sequential solvers.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<SequentialSolver>();
}

/// Settings of the sequential solvers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SequentialParams {
    pub iterations: usize,
    pub precision: f64,
    pub relative: bool,
    pub omega: f64,
    pub iterate_on_bilaterals: bool,
    pub regularization: f64,
}

impl Default for SequentialParams {
    fn default() -> Self {
        SequentialParams { iterations: 10, precision: 1e-3, relative: false, omega: 1.0, iterate_on_bilaterals: true, regularization: f64::EPSILON }
    }
}

/// A small dense LDLᵀ with symmetric diagonal pivoting; negligible pivots solve to 0 (the
/// component of the right-hand side along them is dropped).
#[derive(Clone, Debug, Default)]
struct DenseLdlt {
    n: usize,
    /// Unit lower factor, row-major, of the permuted matrix.
    l: Vec<f64>,
    /// Inverse pivots (0 for a negligible pivot).
    inv_d: Vec<f64>,
    perm: Vec<usize>,
}

impl DenseLdlt {
    fn new(n: usize, a: &[f64]) -> DenseLdlt {
        let mut m = a.to_vec();
        let mut perm: Vec<usize> = (0..n).collect();
        let scale = a.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        let tiny = scale * 1e-14;
        let mut inv_d = vec![0.0; n];
        for k in 0..n {
            // Largest remaining diagonal entry.
            let p = (k..n).max_by(|&i, &j| m[i * n + i].abs().total_cmp(&m[j * n + j].abs())).unwrap_or(k);
            if p != k {
                perm.swap(k, p);
                for c in 0..n {
                    m.swap(k * n + c, p * n + c);
                }
                for r in 0..n {
                    m.swap(r * n + k, r * n + p);
                }
            }
            let d = m[k * n + k];
            if d.abs() <= tiny {
                // The rest is negligible: no further elimination.
                for i in k + 1..n {
                    m[i * n + k] = 0.0;
                }
                continue;
            }
            inv_d[k] = 1.0 / d;
            let col: Vec<f64> = (k + 1..n).map(|i| m[i * n + k]).collect();
            for (ii, i) in (k + 1..n).enumerate() {
                let lik = col[ii] / d;
                for (jj, j) in (k + 1..=i).enumerate() {
                    m[i * n + j] -= lik * col[jj];
                }
                m[i * n + k] = lik;
            }
            // Keep the upper triangle consistent for later pivot searches (symmetric).
            for i in k + 1..n {
                for j in k + 1..i {
                    m[j * n + i] = m[i * n + j];
                }
            }
        }
        DenseLdlt { n, l: m, inv_d, perm }
    }

    /// `x = Σ⁻¹ b` (in place).
    fn solve(&self, b: &mut [f64]) {
        let n = self.n;
        let mut y: Vec<f64> = self.perm.iter().map(|&p| b[p]).collect();
        for i in 0..n {
            for k in 0..i {
                y[i] -= self.l[i * n + k] * y[k];
            }
        }
        y.iter_mut().zip(&self.inv_d).for_each(|(y, d)| *y *= d);
        for i in (0..n).rev() {
            for k in i + 1..n {
                y[i] -= self.l[k * n + i] * y[k];
            }
        }
        for (i, &p) in self.perm.iter().enumerate() {
            b[p] = y[i];
        }
    }
}

/// One block of the sweep: rows `offset..offset + size` of the iterated rows.
#[derive(Clone, Debug)]
struct GsBlock {
    offset: usize,
    size: usize,
    projector: Option<Projector>,
    active: bool,
}

/// What `factor` prepares.
#[derive(Clone)]
struct Prepared {
    /// Free DOFs (S).
    free: Vec<usize>,
    /// Constraint rows factored with the dynamics (their multipliers follow the free DOFs in
    /// the primal unknowns).
    eliminated: Vec<usize>,
    /// Constraint rows iterated on.
    iterated: Vec<usize>,
    /// Rows of `J P` of the iterated rows over the primal unknowns.
    jp: Vec<Vec<(usize, f64)>>,
    /// Rows of C' of the iterated rows over the iterated rows.
    c: Vec<Vec<(usize, f64)>>,
    /// `R = (primal matrix)⁻¹ (J P)ᵀ`, column-major, one column per iterated row.
    r: Vec<f64>,
    blocks: Vec<GsBlock>,
    inv: Vec<DenseLdlt>,
}

impl Prepared {
    fn np(&self) -> usize {
        self.free.len() + self.eliminated.len()
    }
}

/// `SequentialSolver` (and `NNCGSolver` when `nncg`).
#[component(
    roles = [KktSolver],
    inherit = [IterativeSolverData, SequentialSolverData, KktSolverData, Self],
    class(
        name = "SequentialSolver", module = "Compliant",
        description = "KKT solver of the Compliant formulation: projected block Gauss-Seidel (sequential impulses), honouring projectors and masks.",
        create = |_| SequentialSolver::new(false),
    ),
    class(
        name = "NNCGSolver", module = "Compliant",
        description = "KKT solver of the Compliant formulation: nonsmooth nonlinear conjugate gradient on the projected Gauss-Seidel sweep.",
        create = |_| SequentialSolver::new(true),
        data = {
            /// report restarts (accepted, no effect)
            verbose: Bool = "false",
        },
    ),
)]
#[derive(Clone)]
pub struct SequentialSolver {
    nncg: bool,
    params: SequentialParams,
    response: Factor,
    /// iterateOnBilaterals=false: the KKT block, factored with the primal unknowns first.
    natural: Option<DirectSolver>,
    prep: Option<Prepared>,
    stats: Option<(usize, f64)>,
}

/// The Data of `SequentialSolver` (and `NNCGSolver`) between the iterative solvers' and the KKT
/// solvers' ones.
#[settee_core::data_group(data = {
    /// SOR factor (1: Gauss-Seidel)
    omega: Real = "1",
    /// iterate on the constraints without projector too (false: factor them with the dynamics)
    iterateOnBilaterals: Bool = "true",
    /// iterateOnBilaterals=false: ε subtracted on the bilateral diagonal of the factored KKT block
    regularization: Real = "2.220446049250313e-16",
})]
pub struct SequentialSolverData;

impl SequentialSolver {
    pub fn new(nncg: bool) -> SequentialSolver {
        SequentialSolver {
            nncg,
            params: SequentialParams::default(),
            response: Factor::new(ResponseKind::default_for(true)),
            natural: None,
            prep: None,
            stats: None,
        }
    }

    /// A solver for tests and programmatic use.
    pub fn with(nncg: bool, params: SequentialParams, response: ResponseKind) -> SequentialSolver {
        let mut s = SequentialSolver::new(nncg);
        s.params = params;
        s.response = Factor::new(response);
        s
    }

    /// `x = (primal matrix)⁻¹ b`.
    fn primal_solve(&self, b: &[f64], x: &mut [f64]) -> SimResult {
        match &self.natural {
            Some(d) => d.solve(b, x).map_err(|e| SimError::new(format!("KKT block solve: {e}"))),
            None => self.response.solve(b, x),
        }
    }

    fn run(&mut self, sys: &AssembledSystem, x: &mut [f64], rhs: &[f64], correct: bool) -> SimResult {
        let prep = self.prep.as_ref().ok_or_else(|| SimError::new("KKT solver used before factor"))?;
        let (m, nf, np) = (sys.m, prep.free.len(), prep.np());
        // Free (primal) solution.
        let mut b: Vec<f64> = prep.free.iter().map(|&i| rhs[i]).collect();
        b.extend(prep.eliminated.iter().map(|&k| -rhs[m + k]));
        let mut primal = vec![0.0; np];
        self.primal_solve(&b, &mut primal)?;
        let ng = prep.iterated.len();
        let mut lambda: Vec<f64> = prep.iterated.iter().map(|&k| x[m + k]).collect();
        if !prep.blocks.is_empty() {
            let q: Vec<f64> = (0..ng).map(|g| rhs[m + prep.iterated[g]] - row_dot(&prep.jp[g], &primal)).collect();
            let eps = if self.params.relative { self.params.precision * norm(&q) } else { self.params.precision };
            let (net, stats) = if self.nncg {
                nncg(prep, &self.params, &q, &mut lambda, eps, correct)
            } else {
                gauss_seidel(prep, &self.params, &q, &mut lambda, eps, correct)
            };
            self.stats = Some(stats);
            primal.iter_mut().zip(&net).for_each(|(p, n)| *p += n);
        } else {
            self.stats = Some((0, 0.0));
        }
        scatter_free(x, m, &prep.free, &primal);
        for (k, &row) in prep.eliminated.iter().enumerate() {
            x[m + row] = primal[nf + k];
        }
        for (g, &row) in prep.iterated.iter().enumerate() {
            x[m + row] = lambda[g];
        }
        Ok(())
    }
}

fn row_dot(row: &[(usize, f64)], v: &[f64]) -> f64 {
    row.iter().map(|&(c, w)| w * v[c]).sum()
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// One projected sweep over the blocks; updates λ and `net = R λ` and returns Σ‖Δλ_b‖².
fn sweep(prep: &Prepared, omega: f64, q: &[f64], lambda: &mut [f64], net: &mut [f64], correct: bool) -> f64 {
    let np = net.len();
    let mut e2 = 0.0;
    let mut err = [0.0; 16];
    let mut big = Vec::new();
    for (b, inv) in prep.blocks.iter().zip(&prep.inv) {
        let rows = b.offset..b.offset + b.size;
        let buf: &mut [f64] = if b.size <= err.len() {
            &mut err[..b.size]
        } else {
            big.resize(b.size, 0.0);
            &mut big[..]
        };
        if b.active {
            for (i, g) in rows.clone().enumerate() {
                buf[i] = q[g] - row_dot(&prep.jp[g], net) - row_dot(&prep.c[g], lambda);
            }
            inv.solve(buf);
            for (i, g) in rows.clone().enumerate() {
                let old = lambda[g];
                lambda[g] += omega * buf[i];
                buf[i] = old;
            }
            if let Some(p) = &b.projector {
                projectors::project(p, &mut lambda[rows.clone()], correct);
            }
            for (i, g) in rows.clone().enumerate() {
                buf[i] = lambda[g] - buf[i];
            }
        } else {
            for (i, g) in rows.clone().enumerate() {
                buf[i] = -lambda[g];
                lambda[g] = 0.0;
            }
        }
        for (i, g) in rows.enumerate() {
            let d = buf[i];
            e2 += d * d;
            if d != 0.0 {
                let col = &prep.r[g * np..(g + 1) * np];
                net.iter_mut().zip(col).for_each(|(n, c)| *n += c * d);
            }
        }
    }
    e2
}

/// `net = R λ`.
fn net_of(prep: &Prepared, lambda: &[f64]) -> Vec<f64> {
    let np = prep.np();
    let mut net = vec![0.0; np];
    for (g, &l) in lambda.iter().enumerate() {
        if l != 0.0 {
            net.iter_mut().zip(&prep.r[g * np..(g + 1) * np]).for_each(|(n, c)| *n += c * l);
        }
    }
    net
}

/// The sweeps of `SequentialSolver`, with SOFA's stopping test `sqrt(e2) / n ≤ ε` (n: rows
/// iterated on). Returns the net correction and (sweeps, sqrt(e2) / n).
fn gauss_seidel(prep: &Prepared, p: &SequentialParams, q: &[f64], lambda: &mut [f64], eps: f64, correct: bool) -> (Vec<f64>, (usize, f64)) {
    let n = lambda.len() as f64;
    let mut net = net_of(prep, lambda);
    let mut k = 0;
    let mut est = f64::INFINITY;
    while k < p.iterations {
        let e2 = sweep(prep, p.omega, q, lambda, &mut net, correct);
        k += 1;
        est = e2.sqrt() / n;
        if est <= eps {
            break;
        }
    }
    (net, (k, est))
}

/// NNCG: each iteration recomputes `net = R λ`, sweeps, then conjugates the change of λ with
/// the previous direction (restart when the coefficient exceeds 1); stops when ‖Δλ‖² ≤ ε².
/// As SOFA, the velocity correction is the net of the last sweep (before conjugation).
fn nncg(prep: &Prepared, p: &SequentialParams, q: &[f64], lambda: &mut [f64], eps: f64, correct: bool) -> (Vec<f64>, (usize, f64)) {
    let ng = lambda.len();
    let mut net = vec![0.0; prep.np()];
    let mut dir = vec![0.0; ng];
    let mut grad_prev2 = 0.0;
    let mut k = 0;
    while k < p.iterations {
        let prev = lambda.to_vec();
        net = net_of(prep, lambda);
        sweep(prep, p.omega, q, lambda, &mut net, correct);
        let grad: Vec<f64> = prev.iter().zip(lambda.iter()).map(|(a, b)| a - b).collect();
        let g2: f64 = grad.iter().map(|g| g * g).sum();
        if k > 0 {
            let beta = g2 / grad_prev2;
            if beta > 1.0 {
                dir.fill(0.0);
            } else {
                for i in 0..ng {
                    lambda[i] += beta * dir[i];
                    dir[i] = beta * dir[i] - grad[i];
                }
            }
        } else {
            dir = grad.iter().map(|g| -g).collect();
        }
        grad_prev2 = g2;
        k += 1;
        if grad_prev2 <= eps * eps {
            break;
        }
    }
    (net, (k, grad_prev2.sqrt()))
}

impl Component for SequentialSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let it = d.get(IterativeSolverData::ITERATIONS);
        if it < 0 {
            return Err(cx.error(format!("iterations = {it} is negative")));
        }
        self.params = SequentialParams {
            iterations: it as usize,
            precision: d.get(IterativeSolverData::PRECISION),
            relative: d.get(IterativeSolverData::RELATIVE),
            omega: d.get(SequentialSolverData::OMEGA),
            iterate_on_bilaterals: d.get(SequentialSolverData::ITERATE_ON_BILATERALS),
            regularization: d.get(SequentialSolverData::REGULARIZATION),
        };
        Ok(())
    }

    /// The response is looked up once every component of the node is initialised (it may come
    /// after the solver and reads its Data in `init`). SOFA adds an LDLTResponse when the node
    /// has none.
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.response = Factor::new(find_response(cx.scene, cx.node()).unwrap_or_else(|| ResponseKind::default_for(true)));
        Ok(())
    }
}

impl KktSolver for SequentialSolver {
    fn factor(&mut self, sys: &AssembledSystem) -> SimResult {
        self.stats = None;
        let (a, free) = sys.free_block();
        let js = projected_rows(sys, &free);
        let nf = free.len();
        let n = sys.n;
        // Rows without projector.
        let mut bilateral = vec![false; n];
        for blk in &sys.blocks {
            if blk.projector.is_none() {
                bilateral[blk.offset..blk.offset + blk.rows].fill(true);
            }
        }
        let eliminate = !self.params.iterate_on_bilaterals && bilateral.iter().any(|&b| b);
        let (eliminated, iterated): (Vec<usize>, Vec<usize>) =
            if eliminate { (0..n).partition(|&k| bilateral[k]) } else { (Vec::new(), (0..n).collect()) };
        let mut local = vec![usize::MAX; n];
        for (g, &k) in iterated.iter().enumerate() {
            local[k] = g;
        }
        // The matrix of the primal unknowns: A, or the KKT block of the eliminated rows.
        let primal = if eliminate {
            let mut elim = vec![usize::MAX; n];
            for (e, &k) in eliminated.iter().enumerate() {
                elim[k] = nf + e;
            }
            let mut t: Vec<(usize, usize, f64)> = a.iter().collect();
            for &k in &eliminated {
                for &(c, v) in &js[k] {
                    t.push((c, elim[k], -v));
                    t.push((elim[k], c, -v));
                }
                t.push((elim[k], elim[k], -self.params.regularization));
            }
            for (i, j, v) in sys.c.iter() {
                if elim[i] != usize::MAX && elim[j] != usize::MAX {
                    t.push((elim[i], elim[j], -v));
                }
            }
            let np = nf + eliminated.len();
            CsrMatrix::from_triplets(np, np, &t).map_err(|e| SimError::new(e.to_string()))?
        } else {
            a
        };
        self.natural = None;
        if eliminate {
            // The KKT block is indefinite: a fill-reducing ordering may meet a −ε pivot of a
            // constraint row before the DOFs it couples to, and an LDLᵀ without pivoting then
            // loses everything. Eliminating the (SPD) free block first keeps every pivot away
            // from zero (the constraint pivots become −(J A⁻¹ Jᵀ + C' + ε)).
            let mut d = DirectSolver::new(DirectKind::Ldlt, Ordering::Natural);
            d.factorize(&primal).map_err(|e| crate::direct::singular_kkt(&e.to_string()))?;
            self.natural = Some(d);
        } else {
            self.response.factor(&primal)?;
        }
        let np = primal.nrows();
        let jp: Vec<Vec<(usize, f64)>> = iterated.iter().map(|&k| js[k].clone()).collect();
        let c: Vec<Vec<(usize, f64)>> =
            iterated.iter().map(|&k| sys.c.row(k).filter(|&(j, _)| local[j] != usize::MAX).map(|(j, v)| (local[j], v)).collect()).collect();
        let ng = iterated.len();
        let mut r = vec![0.0; np * ng];
        let mut col = vec![0.0; np];
        for g in 0..ng {
            col.fill(0.0);
            for &(cc, v) in &jp[g] {
                col[cc] = v;
            }
            self.primal_solve(&col, &mut r[g * np..(g + 1) * np])?;
        }
        // Blocks: one per DOF of each iterated state.
        let mut blocks = Vec::new();
        for blk in &sys.blocks {
            if local[blk.offset] == usize::MAX {
                continue;
            }
            let size = blk.dof_size.max(1);
            for k in 0..blk.rows / size {
                blocks.push(GsBlock { offset: local[blk.offset + k * size], size, projector: blk.projector.clone(), active: blk.active(k) });
            }
        }
        let mut inv = Vec::with_capacity(blocks.len());
        for b in &blocks {
            let s = b.size;
            let mut sigma = vec![0.0; s * s];
            for i in 0..s {
                let g = b.offset + i;
                for j in 0..s {
                    let h = b.offset + j;
                    sigma[i * s + j] = row_dot(&jp[g], &r[h * np..(h + 1) * np]);
                }
                for &(h, v) in &c[g] {
                    if h >= b.offset && h < b.offset + s {
                        sigma[i * s + h - b.offset] += v;
                    }
                }
            }
            inv.push(DenseLdlt::new(s, &sigma));
        }
        self.prep = Some(Prepared { free, eliminated, iterated, jp, c, r, blocks, inv });
        Ok(())
    }

    fn solve(&mut self, sys: &AssembledSystem, x: &mut [f64], rhs: &[f64]) -> SimResult {
        self.run(sys, x, rhs, false)
    }

    /// The correction pass: projectors in their correction mode; the damping is ignored, as
    /// in SOFA.
    fn correct(&mut self, sys: &AssembledSystem, x: &mut [f64], rhs: &[f64], _damping: f64) -> SimResult {
        self.run(sys, x, rhs, true)
    }

    fn last_stats(&self) -> Option<(usize, f64)> {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_ldlt_solves_spd_and_indefinite_blocks() {
        let a = [4.0, 1.0, 0.5, 1.0, 3.0, -0.2, 0.5, -0.2, 2.0];
        let f = DenseLdlt::new(3, &a);
        let mut b = [1.0, -2.0, 0.5];
        let b0 = b;
        f.solve(&mut b);
        for i in 0..3 {
            let r: f64 = (0..3).map(|j| a[i * 3 + j] * b[j]).sum();
            assert!((r - b0[i]).abs() < 1e-14, "row {i}: {r} vs {}", b0[i]);
        }
        let a = [0.0, 1.0, 1.0, -2.0];
        let f = DenseLdlt::new(2, &a);
        let mut b = [1.0, 1.0];
        f.solve(&mut b);
        assert!((b[1] - 1.0).abs() < 1e-14 && (b[0] - 3.0).abs() < 1e-14, "{b:?}");
    }

    #[test]
    fn dense_ldlt_drops_a_null_direction() {
        // Rank one: [1 1; 1 1]; the solution lies along (1, 1).
        let f = DenseLdlt::new(2, &[1.0, 1.0, 1.0, 1.0]);
        let mut b = [2.0, 2.0];
        f.solve(&mut b);
        assert!(b.iter().all(|v| v.is_finite()));
        assert!((b[0] + b[1] - 2.0).abs() < 1e-14, "{b:?}");
    }
}
