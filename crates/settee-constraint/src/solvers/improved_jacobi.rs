//! `ImprovedJacobiConstraintSolver`: projected block Jacobi with an optional spectral scaling of
//! the residual and an optional momentum term (lagrangian-solvers spec §3,
//! `SOLVER/ImprovedJacobiConstraintSolver.cpp`), SOFA's quirks included (squared eigenvalue
//! modulus, mixed old/new increments in the error, warm start ignored by the first residual).
//!
//! The Jacobi residual and the block solves run in parallel (rayon); every row and block is
//! computed with the same operations in the same order as the sequential code and the block
//! errors are summed in block order, so the result does not depend on the thread count.
//!
//! Settee adds a safeguarded iteration ([`safeguarded_jacobi`]): Data `safeguard="true"` selects
//! it from the start; by default SOFA's iterate runs and is abandoned for it (for the rest of the
//! run, with one warning) only when it diverges or ends without having reduced its error at all,
//! where SOFA's own run ends in NaN.

use rayon::prelude::*;
use settee_core::constraint::{ConstraintProblem, ConstraintResolution, DenseMatrix};
use settee_core::data::DataSet;
use settee_core::SimResult;

use super::generic::{empty_problem, init_resolutions, iteration_converged, result_output, SolveOutcome, SolverMethod, UnbuiltOps, UnbuiltProblem};

/// Options of the improved Jacobi iteration (SOFA's Data, defaults off / 1 / off / 10).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImprovedJacobiOptions {
    pub use_spectral_correction: bool,
    pub spectral_correction_factor: f64,
    pub use_conjugate_residue: bool,
    pub conjugate_residue_speed_factor: f64,
    /// Settee's `safeguard`: use the safeguarded iteration ([`safeguarded_jacobi`]) from the
    /// first iteration instead of SOFA's (which is still abandoned for it when it diverges).
    pub safeguard: bool,
}

impl Default for ImprovedJacobiOptions {
    fn default() -> Self {
        ImprovedJacobiOptions {
            use_spectral_correction: false,
            spectral_correction_factor: 1.0,
            use_conjugate_residue: false,
            conjugate_residue_speed_factor: 10.0,
            safeguard: false,
        }
    }
}

/// Eigenvalues of the symmetric part of W (Householder tridiagonalisation and implicit QR,
/// nalgebra's `symmetric_eigenvalues`: O(n³) with a small constant, where SOFA runs a general
/// eigen-solver; W is symmetric, so both give its real spectrum, to rounding).
pub fn symmetric_eigenvalues(w: &DenseMatrix) -> Vec<f64> {
    let n = w.n;
    let a = nalgebra::DMatrix::from_fn(n, n, |i, j| 0.5 * (w.data[i * n + j] + w.data[j * n + i]));
    a.symmetric_eigenvalues().iter().copied().collect()
}

/// SOFA's ρ: `factor · min(1, 1.8 / max_i |μ_i|²)` (the squared modulus, as SOFA's `std::norm`).
/// The largest modulus comes from [`super::spectrum::largest_eigenvalue_modulus`] (Lanczos, not
/// SOFA's full decomposition: the same value to rounding, in O(n²) per product).
pub fn spectral_factor(w: &DenseMatrix, factor: f64) -> f64 {
    let m = super::spectrum::largest_eigenvalue_modulus(w);
    let r = m * m;
    factor * 1.0f64.min(0.9 * 2.0 / r)
}

/// SOFA's `ImprovedJacobiConstraintSolver::doSolve`, to the last iteration whatever happens.
pub fn improved_jacobi(p: &mut ConstraintProblem, opt: &ImprovedJacobiOptions) -> SolveOutcome {
    sofa_iteration(p, opt, false).0
}

/// Growth of SOFA's error over its first value (or the tolerance, if larger) taken as proof that
/// its iterate diverges. Jacobi's iteration matrix `I − D⁻¹W` is symmetric in the metric of D, so a
/// converging iterate cannot grow transiently by anything near this factor.
pub const DIVERGENCE_GROWTH: f64 = 1e6;

/// An unconverged SOFA run whose last error is at least this fraction of `Σ_blocks ‖(W λ)_b‖`
/// is taken as oscillating (see [`sofa_iteration`]).
pub const OSCILLATION_FRACTION: f64 = 0.1;

/// SOFA's iteration; with `stop_on_divergence`, gives up (second value true) as soon as its error
/// is not finite or has grown by [`DIVERGENCE_GROWTH`], and also flags a run that reaches
/// `maxIterations` still oscillating ([`OSCILLATION_FRACTION`]; the projections keep a
/// diverging Jacobi step bounded). The tests only read the error, so an iterate that does not diverge gets
/// SOFA's bits.
pub fn sofa_iteration(p: &mut ConstraintProblem, opt: &ImprovedJacobiOptions, stop_on_divergence: bool) -> (SolveOutcome, bool) {
    if let Some(done) = empty_problem(p) {
        return (done, false);
    }
    let n = p.n;
    p.d.copy_from_slice(&p.dfree);
    p.lambda.fill(0.0);
    let mut last_f = vec![0.0; n];
    let mut delta = vec![0.0; n];
    let mut delta_new = vec![0.0; n];
    let mut corrected = vec![0.0; n];
    let tol = p.effective_tolerance();
    init_resolutions(p);
    let blocks = p.blocks();
    let covered = blocks.last().map_or(0, |(j, nb)| j + nb);
    // The diagonal blocks, for the block solves run on local copies.
    let local_w = diagonal_blocks(&p.w, &blocks);
    let rho = if opt.use_spectral_correction { spectral_factor(&p.w, opt.spectral_correction_factor) } else { 1.0 };
    let mut error = 0.0;
    let mut converged = false;
    let mut count = 0;
    let mut block_err = vec![(0.0, true); blocks.len()];
    let mut d_next = vec![0.0; n];
    let groups = block_groups(&blocks);
    for i in 0..p.max_iterations {
        count += 1;
        // Single-precision ratio as in SOFA: `(float)i / maxIterations`.
        let q = (i as f32) / (p.max_iterations as f32);
        let beta = if opt.use_conjugate_residue { 1.0f64.min((q as f64).powf(opt.conjugate_residue_speed_factor)) } else { 0.0 };
        // (a) residual of every row from the previous increments. After the first iteration
        // the fused pass of the previous one has computed it already (`d_next`).
        if i == 0 {
            let w = &p.w;
            let delta = &delta;
            p.d[..covered].par_iter_mut().zip(corrected[..covered].par_iter_mut()).enumerate().for_each(|(l, (d, e))| {
                let row = w.row(l);
                for k in 0..n {
                    *d += row[k] * delta[k];
                }
                *e = rho * *d;
            });
        } else {
            std::mem::swap(&mut p.d, &mut d_next);
            corrected[..covered].iter_mut().zip(&p.d[..covered]).for_each(|(e, d)| *e = rho * *d);
        }
        // (b) block solves, each on its own rows.
        let mut res: Vec<Option<Box<dyn ConstraintResolution>>> = std::mem::take(&mut p.resolutions);
        {
            let mut work: Vec<(usize, usize, &mut Box<dyn ConstraintResolution>, &DenseMatrix)> = Vec::with_capacity(blocks.len());
            let mut rest: &mut [Option<Box<dyn ConstraintResolution>>] = &mut res;
            let mut base = 0;
            for (b, &(j, nb)) in blocks.iter().enumerate() {
                let (_, tail) = rest.split_at_mut(j - base);
                let (head, tail) = tail.split_at_mut(nb);
                work.push((j, nb, head[0].as_mut().expect("block start"), &local_w[b]));
                rest = tail;
                base = j + nb;
            }
            let lambda = &p.lambda;
            let dfree = &p.dfree;
            let corrected_ref = &corrected;
            let updated: Vec<Vec<f64>> = work
                .into_par_iter()
                .map(|(j, nb, r, lw)| {
                    let mut lf = lambda[j..j + nb].to_vec();
                    let mut ld = corrected_ref[j..j + nb].to_vec();
                    r.resolution(0, lw, &mut ld, &mut lf, &dfree[j..j + nb]);
                    lf
                })
                .collect();
            for (&(j, nb), lf) in blocks.iter().zip(updated) {
                for l in 0..nb {
                    let f = lf[l] + beta * delta[j + l];
                    p.lambda[j + l] = f;
                    delta_new[j + l] = f - last_f[j + l];
                    last_f[j + l] = f;
                }
            }
        }
        p.resolutions = res;
        // Block errors: rows of blocks up to and including j see the new increments, the
        // later ones the previous increments (SOFA updates Δ block by block). The same pass
        // over W gives the next iteration's residual (step (a)) into `d_next`.
        d_next[..covered].copy_from_slice(&p.d[..covered]);
        fused_error_and_residual(&p.w, &groups, &delta, &delta_new, &mut d_next[..covered], &mut block_err, tol * tol);
        delta[..covered].copy_from_slice(&delta_new[..covered]);
        let (summed, verified) = summed_block_error(&block_err);
        error = summed;
        p.error_history.push(error);
        if stop_on_divergence && (!error.is_finite() || error > DIVERGENCE_GROWTH * p.error_history[0].max(tol)) {
            return (result_output(p, error, count, false), true);
        }
        if iteration_converged(p, verified, error, tol, i > 0) {
            converged = true;
            break;
        }
    }
    // A run that ends unconverged with its last iteration still changing W·λ by a sizeable
    // fraction of W·λ itself (a bounded oscillation of the projected iterate, e.g. a 2-cycle
    // between all-clamped and overshooting multipliers) has not settled on anything: as
    // useless as a diverging one. A slow but settling run (SOFA's spectral correction with its
    // tiny step) changes W·λ by far less and is kept.
    let mut stalled = false;
    if stop_on_divergence && !converged {
        let mut wl = vec![0.0; n];
        mat_vec(&p.w, &p.lambda, &mut wl);
        let size: f64 = blocks.iter().map(|&(j, nb)| wl[j..j + nb].iter().map(|v| v * v).sum::<f64>().sqrt()).sum();
        let settling = error < OSCILLATION_FRACTION * size; // false for NaN too
        stalled = !settling;
    }
    (result_output(p, error, count, converged), stalled)
}

// ----- The fused pass over W of SOFA's iteration ----------------------------------------------

/// Blocks interleaved by one task of [`fused_error_and_residual`]: independent sums in flight at
/// once, so that the pass runs at the speed of reading W rather than of one addition's latency.
const GROUP: usize = 4;

/// Consecutive blocks of equal size, at most [`GROUP`] per group: `(first block, blocks, rows
/// per block)`.
fn block_groups(blocks: &[(usize, usize)]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut b = 0;
    while b < blocks.len() {
        let nb = blocks[b].1;
        let mut g = 1;
        while g < GROUP && b + g < blocks.len() && blocks[b + g].1 == nb {
            g += 1;
        }
        out.push((b, g, nb));
        b += g;
    }
    out
}

/// One pass over the rows of W covered by blocks, for every block b:
/// - SOFA's block error `Σ_rows Σ_k (W_lk Δ_k)²` with `Δ_k` new for `k` before the end of b and
///   old after it, and whether it stayed below `tol2` after each row (`block_err[b]`);
/// - the next residual `d_l + Σ_k W_lk Δnew_k` of each of its rows, accumulated into `d_next`
///   (which holds `d` on entry).
///
/// Each sum adds its terms in SOFA's order (row by row, `k` increasing) with the same
/// operations as the two separate passes it replaces, so the bits are SOFA's; several blocks
/// are interleaved ([`GROUP`]) and groups run in parallel, which changes no sum.
fn fused_error_and_residual(
    w: &DenseMatrix,
    groups: &[(usize, usize, usize)],
    delta_old: &[f64],
    delta_new: &[f64],
    d_next: &mut [f64],
    block_err: &mut [(f64, bool)],
    tol2: f64,
) {
    // Split the outputs along the groups (they cover consecutive rows and blocks from 0).
    let mut work: Vec<GroupWork> = Vec::with_capacity(groups.len());
    let (mut d_rest, mut e_rest, mut j0) = (d_next, block_err, 0);
    for &(_, g, nb) in groups {
        let (d, d_tail) = d_rest.split_at_mut(g * nb);
        let (e, e_tail) = e_rest.split_at_mut(g);
        work.push(GroupWork { j0, g, nb, d, e });
        (d_rest, e_rest, j0) = (d_tail, e_tail, j0 + g * nb);
    }
    let run = |x: GroupWork| match x.g {
        4 => fused_group::<4>(w, x.j0, x.nb, delta_old, delta_new, x.d, x.e, tol2),
        3 => fused_group::<3>(w, x.j0, x.nb, delta_old, delta_new, x.d, x.e, tol2),
        2 => fused_group::<2>(w, x.j0, x.nb, delta_old, delta_new, x.d, x.e, tol2),
        _ => fused_group::<1>(w, x.j0, x.nb, delta_old, delta_new, x.d, x.e, tol2),
    };
    if w.n >= PAR_MIN_ROWS {
        work.into_par_iter().for_each(run);
    } else {
        work.into_iter().for_each(run);
    }
}

/// One group's share of [`fused_error_and_residual`]: its first row, its blocks and their
/// size, and its part of the outputs.
struct GroupWork<'a> {
    j0: usize,
    g: usize,
    nb: usize,
    d: &'a mut [f64],
    e: &'a mut [(f64, bool)],
}

/// [`fused_error_and_residual`] for `G` consecutive blocks of `nb` rows starting at row `j0`.
#[allow(clippy::too_many_arguments)]
fn fused_group<const G: usize>(
    w: &DenseMatrix,
    j0: usize,
    nb: usize,
    delta_old: &[f64],
    delta_new: &[f64],
    d: &mut [f64],
    out: &mut [(f64, bool)],
    tol2: f64,
) {
    let n = w.n;
    // Block g uses the new increments before its end `j0 + (g+1)·nb`, the old ones after: the
    // columns split into segments in which every block's choice is fixed.
    let ends: [usize; G] = std::array::from_fn(|g| j0 + (g + 1) * nb);
    let mut e = [0.0f64; G];
    let mut ok = [true; G];
    for r in 0..nb {
        let rows: [&[f64]; G] = std::array::from_fn(|g| w.row(j0 + g * nb + r));
        let mut acc: [f64; G] = std::array::from_fn(|g| d[g * nb + r]);
        let mut start = 0;
        for seg in 0..=G {
            let stop = if seg < G { ends[seg] } else { n };
            // In this segment blocks g < seg are past their end (old increments).
            let src: [&[f64]; G] = std::array::from_fn(|g| if g < seg { &delta_old[start..stop] } else { &delta_new[start..stop] });
            let rws: [&[f64]; G] = std::array::from_fn(|g| &rows[g][start..stop]);
            let dn = &delta_new[start..stop];
            for k in 0..dn.len() {
                let x = dn[k];
                for g in 0..G {
                    let wv = rws[g][k];
                    let t = wv * src[g][k];
                    e[g] += t * t;
                    acc[g] += wv * x;
                }
            }
            start = stop;
        }
        for g in 0..G {
            d[g * nb + r] = acc[g];
            ok[g] = ok[g] && e[g] < tol2;
        }
    }
    for g in 0..G {
        out[g] = (e[g], ok[g]);
    }
}

// ----- Settee's safeguarded iteration ---------------------------------------------------------

/// Below this many rows the O(n²) loops run on the calling thread (rayon's overhead would
/// dominate); the results are the same bits either way.
pub const PAR_MIN_ROWS: usize = 96;

/// One row of `W·x`: four interleaved partial sums over `k ≡ 0,1,2,3 (mod 4)`, combined as
/// `(s0 + s1) + (s2 + s3)`, then the tail. A fixed order, whatever the thread count.
#[inline]
fn row_dot(row: &[f64], x: &[f64]) -> f64 {
    let mut s = [0.0f64; 4];
    let rc = row.chunks_exact(4);
    let xc = x.chunks_exact(4);
    let (rt, xt) = (rc.remainder(), xc.remainder());
    for (r, v) in rc.zip(xc) {
        s[0] += r[0] * v[0];
        s[1] += r[1] * v[1];
        s[2] += r[2] * v[2];
        s[3] += r[3] * v[3];
    }
    let mut t = (s[0] + s[1]) + (s[2] + s[3]);
    for (r, v) in rt.iter().zip(xt) {
        t += r * v;
    }
    t
}

/// Copies of the diagonal blocks of `w`, one per block `(start, lines)`, for block solves run
/// on local copies.
fn diagonal_blocks(w: &DenseMatrix, blocks: &[(usize, usize)]) -> Vec<DenseMatrix> {
    blocks
        .iter()
        .map(|&(j, nb)| {
            let mut m = DenseMatrix::zeros(nb);
            for l in 0..nb {
                m.data[l * nb..(l + 1) * nb].copy_from_slice(&w.row(j + l)[j..j + nb]);
            }
            m
        })
        .collect()
}

/// SOFA's error of an iteration from the blocks' `(squared error, verified)`: the sum of the
/// blocks' errors, in block order, and whether every block is verified.
fn summed_block_error(block_err: &[(f64, bool)]) -> (f64, bool) {
    let mut error = 0.0;
    let mut verified = true;
    for &(e, ok) in block_err {
        verified = verified && ok;
        error += e.sqrt();
    }
    (error, verified)
}

/// `out = W·x`, each row computed by one thread with [`row_dot`]'s fixed order, rows in
/// parallel when `n ≥ PAR_MIN_ROWS`: identical bits for any thread count.
pub fn mat_vec(w: &DenseMatrix, x: &[f64], out: &mut [f64]) {
    let n = w.n;
    if n >= PAR_MIN_ROWS {
        out[..n].par_iter_mut().enumerate().with_min_len(8).for_each(|(i, o)| *o = row_dot(w.row(i), &x[..n]));
    } else {
        for (i, o) in out[..n].iter_mut().enumerate() {
            *o = row_dot(w.row(i), &x[..n]);
        }
    }
}

/// The largest eigenvalue of the Jacobi-scaled compliance `M = S W S`, `S = diag(W_ii^-1/2)`
/// (rows with `W_ii ≤ 0` left out), from power iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpectralEstimate {
    /// The Rayleigh quotient `θ = vᵀMv` of the last unit iterate `v`: `θ ≤ λ_max(M)` always.
    pub rayleigh: f64,
    /// `r = ‖Mv − θv‖`: for a symmetric M some eigenvalue lies in `[θ − r, θ + r]`, and it is
    /// λ_max once `v` leans on the top eigenvector (what power iteration converges to).
    pub residual: f64,
    /// Gershgorin's bound `max_i Σ_j |M_ij| ≥ ρ(M)`, always.
    pub gershgorin: f64,
    /// Power iterations run (`M·v` products).
    pub iterations: usize,
}

impl SpectralEstimate {
    /// The estimate the step is taken from: `min(θ + r, Gershgorin)`, an upper bound of
    /// `λ_max(M)` whenever the power iterate has found the top eigenvector.
    pub fn upper(&self) -> f64 {
        (self.rayleigh + self.residual).min(self.gershgorin)
    }
}

/// Power iteration on `M = S W S` (see [`SpectralEstimate`]): at most `max_iterations`
/// products, each O(n²) (no eigen-decomposition), stopping once `r ≤ rel_tol·θ`. The start
/// vector is deterministic, all positive (contact problems' top mode pushes every contact the
/// same way) with a small irregular part so that it is not orthogonal to the top eigenvector
/// of a hand-made symmetric matrix.
pub fn scaled_spectral_estimate(w: &DenseMatrix, max_iterations: usize, rel_tol: f64) -> SpectralEstimate {
    let n = w.n;
    let s: Vec<f64> = (0..n).map(|i| if w.get(i, i) > 0.0 { 1.0 / w.get(i, i).sqrt() } else { 0.0 }).collect();
    let gershgorin_row = |i: usize| -> f64 {
        let row = w.row(i);
        let mut a = 0.0;
        for j in 0..n {
            a += (s[i] * row[j] * s[j]).abs();
        }
        a
    };
    let gershgorin = if n >= PAR_MIN_ROWS {
        (0..n).into_par_iter().with_min_len(8).map(gershgorin_row).reduce(|| 0.0, f64::max)
    } else {
        (0..n).map(gershgorin_row).fold(0.0, f64::max)
    };
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut v: Vec<f64> = (0..n).map(|i| if s[i] > 0.0 { 1.0 + 0.5 * ((i as f64 * 0.618_033_988_749_895).fract()) } else { 0.0 }).collect();
    let mut est = SpectralEstimate { rayleigh: 0.0, residual: 0.0, gershgorin, iterations: 0 };
    let nv = norm(&v);
    if nv == 0.0 {
        return est;
    }
    v.iter_mut().for_each(|x| *x /= nv);
    let mut z = vec![0.0; n];
    let mut u = vec![0.0; n];
    for it in 0..max_iterations.max(1) {
        for i in 0..n {
            z[i] = s[i] * v[i];
        }
        mat_vec(w, &z, &mut u);
        for i in 0..n {
            u[i] *= s[i];
        }
        let theta: f64 = v.iter().zip(&u).map(|(a, b)| a * b).sum();
        let r = v.iter().zip(&u).map(|(a, b)| (b - theta * a) * (b - theta * a)).sum::<f64>().sqrt();
        est = SpectralEstimate { rayleigh: theta, residual: r, gershgorin, iterations: it + 1 };
        let nu = norm(&u);
        if r <= rel_tol * theta.abs() || nu == 0.0 || !nu.is_finite() {
            break;
        }
        for i in 0..n {
            v[i] = u[i] / nu;
        }
    }
    est
}

/// What a safeguarded solve did, besides the problem's fields.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SafeguardReport {
    pub estimate: Option<SpectralEstimate>,
    /// The step (in the metric of W's diagonal) of the last iteration.
    pub omega: f64,
    /// Times the step was halved because it failed the descent-lemma check (the estimate of the
    /// spectral radius was too low).
    pub halvings: usize,
    /// Times the momentum was reset (gradient restart).
    pub restarts: usize,
}

/// Power iterations per solve, and the relative residual that stops them early.
pub const POWER_ITERATIONS: usize = 40;
pub const POWER_TOLERANCE: f64 = 1e-3;
/// Relative rounding allowance of the descent-lemma check.
pub const CURVATURE_SLACK: f64 = 1e-9;

/// Every block's resolution on its own rows: `out[block] ← res(λ = lambda_in[block], e[block])`,
/// blocks in parallel (each touches only its rows; `e` may be changed inside the block, as
/// SOFA's friction resolution does). Rows after the last block keep `out`'s values.
#[allow(clippy::too_many_arguments)]
fn solve_blocks(
    res: &mut [Option<Box<dyn ConstraintResolution>>],
    blocks: &[(usize, usize)],
    local_w: &[DenseMatrix],
    lambda_in: &[f64],
    e: &mut [f64],
    dfree: &[f64],
    out: &mut [f64],
    parallel: bool,
) {
    type Work<'a> = (&'a mut Box<dyn ConstraintResolution>, &'a DenseMatrix, &'a mut [f64], &'a mut [f64], &'a [f64], &'a [f64]);
    let mut work: Vec<Work> = Vec::with_capacity(blocks.len());
    let (mut rr, mut ro, mut re) = (res, out, e);
    let mut base = 0;
    for (b, &(j, nb)) in blocks.iter().enumerate() {
        let (_, r_tail) = std::mem::take(&mut rr).split_at_mut(j - base);
        let (r_head, r_tail) = r_tail.split_at_mut(nb);
        let (_, o_tail) = std::mem::take(&mut ro).split_at_mut(j - base);
        let (o_head, o_tail) = o_tail.split_at_mut(nb);
        let (_, e_tail) = std::mem::take(&mut re).split_at_mut(j - base);
        let (e_head, e_tail) = e_tail.split_at_mut(nb);
        let r = r_head[0].as_mut().expect("a resolution at every block start");
        work.push((r, &local_w[b], o_head, e_head, &lambda_in[j..j + nb], &dfree[j..j + nb]));
        (rr, ro, re) = (r_tail, o_tail, e_tail);
        base = j + nb;
    }
    let one = |(r, lw, o, e, l, df): Work| {
        o.copy_from_slice(l);
        r.resolution(0, lw, e, o, df);
    };
    if parallel {
        work.into_par_iter().with_min_len(4).for_each(one);
    } else {
        work.into_iter().for_each(one);
    }
}

/// Settee's safeguarded projected block Jacobi (the `safeguard` mode, and the fallback when
/// SOFA's iterate diverges). Same blocks and resolutions as SOFA's iteration, but
/// * the residual fed to the resolutions is `ω·(d_free + W y)` with `ω = 1/L`, `L` the
///   power-iteration upper estimate of `λ_max(D^-1/2 W D^-1/2)` (D = diagonal of W): the step of
///   a projected gradient method in D's metric, which converges where SOFA's ω = 1 overshoots;
/// * Nesterov's momentum on the projected iterate (`y = x + β(x − x_prev)`, FISTA's β) with the
///   gradient restart of O'Donoghue & Candès, which brings the iteration count from O(κ) to
///   O(√κ) on the ill-conditioned W of many coupled contacts;
/// * a descent-lemma guard: a step with `gᵀWg > ‖g‖²_D/ω` (g = x⁺ − y), impossible when `1/ω`
///   bounds the spectral radius, proves the estimate too low: ω is halved, the momentum dropped
///   and the iteration redone (the check costs O(n): `W x⁺` and `W y` are kept up to date);
/// * a consistent warm start (the first residual includes `W λ⁰`).
///
/// The fixed points are those of SOFA's iteration (and of Gauss–Seidel's): every block satisfies
/// its law given the others, whatever ω > 0. The error is SOFA's measure applied to the
/// natural residual `W(x⁺ − y)/ω`, so the tolerance means what it means for ω = 1. Everything
/// is computed row by row or block by block and reduced in index order: identical bits for
/// any thread count.
pub fn safeguarded_jacobi(p: &mut ConstraintProblem) -> (SolveOutcome, SafeguardReport) {
    safeguarded_jacobi_with(p, None)
}

/// [`safeguarded_jacobi`] with the spectral-radius estimate `L` (step `1/L`) given instead of
/// computed, e.g. a deliberately low one to exercise the halving.
pub fn safeguarded_jacobi_with(p: &mut ConstraintProblem, given_estimate: Option<f64>) -> (SolveOutcome, SafeguardReport) {
    let mut report = SafeguardReport { omega: 1.0, ..Default::default() };
    if let Some(done) = empty_problem(p) {
        return (done, report);
    }
    let n = p.n;
    let parallel = n >= PAR_MIN_ROWS;
    p.lambda.fill(0.0);
    let tol = p.effective_tolerance();
    init_resolutions(p);
    let blocks = p.blocks();
    let local_w = diagonal_blocks(&p.w, &blocks);
    let l = match given_estimate {
        Some(l) => l,
        None => {
            let est = scaled_spectral_estimate(&p.w, POWER_ITERATIONS, POWER_TOLERANCE);
            report.estimate = Some(est);
            est.upper()
        }
    };
    let mut omega = if l.is_finite() && l > 0.0 { 1.0 / l } else { 1.0 };

    let mut x = p.lambda.clone();
    let mut wx = vec![0.0; n];
    mat_vec(&p.w, &x, &mut wx);
    let mut x_prev = x.clone();
    let mut wx_prev = wx.clone();
    let (mut y, mut wy, mut e, mut xn, mut delta, mut wdelta) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut block_err = vec![(0.0, true); blocks.len()];
    let mut t = 1.0f64;
    let mut best_error = f64::INFINITY;
    let mut best_x = x.clone();
    let mut error = 0.0;
    let mut converged = false;
    let mut count = 0;
    let mut res = std::mem::take(&mut p.resolutions);
    for k in 0..p.max_iterations {
        count += 1;
        let t_next = 0.5 * (1.0 + (1.0 + 4.0 * t * t).sqrt());
        let beta = (t - 1.0) / t_next;
        for i in 0..n {
            y[i] = x[i] + beta * (x[i] - x_prev[i]);
            wy[i] = wx[i] + beta * (wx[i] - wx_prev[i]);
            e[i] = omega * (p.dfree[i] + wy[i]);
        }
        xn.copy_from_slice(&x);
        solve_blocks(&mut res, &blocks, &local_w, &y, &mut e, &p.dfree, &mut xn, parallel);
        for i in 0..n {
            delta[i] = xn[i] - x[i];
        }
        mat_vec(&p.w, &delta, &mut wdelta);
        // Descent-lemma check of the step along g = x⁺ − y: gᵀWg ≤ ‖g‖²_D / ω holds for every g
        // when 1/ω ≥ λ_max(D^-1/2 W D^-1/2); if it fails the estimate was too low.
        // Gradient restart, in the metric of D: the step x⁺ − y points against the progress
        // x⁺ − x.
        let (mut curvature, mut metric, mut progress) = (0.0, 0.0, 0.0);
        for i in 0..n {
            let g = xn[i] - y[i];
            let wg = (wx[i] + wdelta[i]) - wy[i];
            curvature += g * wg;
            metric += p.w.get(i, i) * g * g;
            progress += p.w.get(i, i) * g * delta[i];
        }
        let descends = curvature * omega <= metric * (1.0 + CURVATURE_SLACK); // false for NaN too
        if !descends {
            // Too long a step (or a non-finite one): halve it, drop the momentum, redo the
            // iteration from the current iterate.
            omega *= 0.5;
            report.halvings += 1;
            x_prev.copy_from_slice(&x);
            wx_prev.copy_from_slice(&wx);
            t = 1.0;
            continue;
        }
        std::mem::swap(&mut x_prev, &mut x);
        std::mem::swap(&mut x, &mut xn);
        std::mem::swap(&mut wx_prev, &mut wx);
        for i in 0..n {
            wx[i] = wx_prev[i] + wdelta[i];
        }
        // SOFA's block error measure on the natural residual W(x⁺ − y)/ω.
        {
            let (wx, wy) = (&wx, &wy);
            let tol2 = tol * tol;
            let one = |(out, &(j, nb)): (&mut (f64, bool), &(usize, usize))| {
                let mut s = 0.0;
                let mut ok = true;
                for l in j..j + nb {
                    let g = (wx[l] - wy[l]) / omega;
                    s += g * g;
                    ok = ok && s < tol2;
                }
                *out = (s, ok);
            };
            if parallel {
                block_err.par_iter_mut().zip(blocks.par_iter()).with_min_len(8).for_each(one);
            } else {
                block_err.iter_mut().zip(blocks.iter()).for_each(one);
            }
        }
        let (summed, verified) = summed_block_error(&block_err);
        error = summed;
        p.error_history.push(error);
        if error < best_error {
            best_error = error;
            best_x.copy_from_slice(&x);
        }
        if iteration_converged(p, verified, error, tol, k > 0) {
            converged = true;
            break;
        }
        if progress < 0.0 {
            report.restarts += 1;
            t = 1.0;
        } else {
            t = t_next;
        }
    }
    p.resolutions = res;
    report.omega = omega;
    if converged {
        p.lambda.copy_from_slice(&x);
    } else {
        p.lambda.copy_from_slice(&best_x);
        mat_vec(&p.w, &best_x, &mut wx);
    }
    for i in 0..n {
        p.d[i] = p.dfree[i] + wx[i];
    }
    (result_output(p, error, count, converged), report)
}

/// The ImprovedJacobiConstraintSolver algorithm.
#[derive(Clone, Default)]
pub struct ImprovedJacobi {
    pub options: ImprovedJacobiOptions,
    /// SOFA's iterate diverged in an earlier solve: the later ones go straight to the
    /// safeguarded iteration (SOFA's own run would be NaN from there on).
    pub sofa_diverged: bool,
    /// The report of the last safeguarded solve, if the last solve was one.
    pub last_safeguard: Option<SafeguardReport>,
    warning: Option<String>,
    warned: bool,
}

impl ImprovedJacobi {
    pub fn with_options(options: ImprovedJacobiOptions) -> ImprovedJacobi {
        ImprovedJacobi { options, ..Default::default() }
    }
    fn warn_once(&mut self, message: String) {
        if !self.warned {
            self.warned = true;
            self.warning = Some(message);
        }
    }
}
/// ImprovedJacobiConstraintSolver's own Data, after the generic and the built solvers' ones.
#[settee_core::data_group(data = {
    /// If set to true, the residual fed to the block solves is scaled by
    /// spectralCorrectionFactor*min(1, 1.8/|eigenvalue|²max)
    useSpectralCorrection: Bool = "false",
    /// Factor used to modulate the spectral correction
    spectralCorrectionFactor: Real = "1",
    /// If set to true, beta*(lambda^i - lambda^(i-1)) is added after each block solve, beta =
    /// min(1, (i/maxIterations)^conjugateResidueSpeedFactor)
    useConjugateResidue: Bool = "false",
    /// Factor used to modulate the speed in which beta used in the conjugate residue part reaches
    /// 1.0. The higher the value, the slower the reach.
    conjugateResidueSpeedFactor: Real = "10",
    /// Settee only: solve with the safeguarded iteration (step from a power-iteration estimate of
    /// the spectral radius, momentum with restart, step halving on growth) instead of SOFA's;
    /// without it SOFA's iterate is used and abandoned for the safeguarded one only when it
    /// diverges
    safeguard: Bool = "false",
})]
pub struct ImprovedJacobiData;

impl SolverMethod for ImprovedJacobi {
    fn read_data(&mut self, d: &DataSet) {
        self.options = ImprovedJacobiOptions {
            use_spectral_correction: d.get(ImprovedJacobiData::USE_SPECTRAL_CORRECTION),
            spectral_correction_factor: d.get(ImprovedJacobiData::SPECTRAL_CORRECTION_FACTOR),
            use_conjugate_residue: d.get(ImprovedJacobiData::USE_CONJUGATE_RESIDUE),
            conjugate_residue_speed_factor: d.get(ImprovedJacobiData::CONJUGATE_RESIDUE_SPEED_FACTOR),
            safeguard: d.get(ImprovedJacobiData::SAFEGUARD),
        };
    }
    fn solve(&mut self, p: &mut ConstraintProblem, _: &UnbuiltProblem, _: &mut dyn UnbuiltOps) -> SimResult<SolveOutcome> {
        self.last_safeguard = None;
        if !self.options.safeguard && !self.sofa_diverged {
            let (out, diverged) = sofa_iteration(p, &self.options, true);
            if !diverged {
                return Ok(out);
            }
            self.sofa_diverged = true;
            let (first, last, k) = (p.error_history[0], p.current_error, p.error_history.len());
            let how = if k < p.max_iterations || !last.is_finite() {
                format!("diverges (its error grew from {first:.3e} to {last:.3e} in {k} iterations)")
            } else {
                format!("does not settle (after {k} iterations its last step still changes W·λ by more than a tenth of W·λ; error {last:.3e} against {first:.3e} at the first one)")
            };
            self.warn_once(format!(
                "SOFA's improved Jacobi iterate {how} on this {}-row problem: from here on Settee solves with its safeguarded \
                 iteration (step from a power-iteration estimate of the spectral radius, momentum with restart, step halving), \
                 so the results depart from SOFA's, whose run would end in NaN or oscillate (reported once; safeguard=\"true\" \
                 skips SOFA's attempt)",
                p.n
            ));
        } else if self.options.safeguard {
            self.warn_once(
                "safeguard=\"true\": Settee solves with its safeguarded iteration instead of SOFA's improved Jacobi iterate, \
                 so the results depart from SOFA's (reported once)"
                    .to_string(),
            );
        }
        let (out, report) = safeguarded_jacobi(p);
        self.last_safeguard = Some(report);
        Ok(out)
    }
    fn take_warning(&mut self) -> Option<String> {
        self.warning.take()
    }
}
