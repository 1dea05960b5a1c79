//! `BlockGaussSeidelConstraintSolver`: projected block Gauss–Seidel on the assembled W
//! (lagrangian-solvers spec §2.6, SOFA's `SOLVER/BlockGaussSeidelConstraintSolver.cpp`).

use settee_core::constraint::ConstraintProblem;

use super::generic::{built_method, empty_problem, init_resolutions, iteration_converged, over_relax, result_output, SolveOutcome};

/// One block's error after its resolution (the sweep's error measure): for a multi-line block
/// `Σ_l sqrt(Σ_m (W_lm Δλ_m)²)`, each line checked against `tol`; for one line `|W_jj Δλ_j|`; a
/// block tolerance rescales it. Returns the error; clears `verified` when a check fails.
pub fn block_error(p: &ConstraintProblem, j: usize, nb: usize, lambda_prev: &[f64], tol: f64, res_tolerance: f64, verified: &mut bool) -> f64 {
    let w = &p.w;
    let f = &p.lambda;
    let mut e = 0.0;
    if nb > 1 {
        for l in 0..nb {
            let mut line = 0.0;
            for m in 0..nb {
                let dof = w.get(j + l, j + m) * (f[j + m] - lambda_prev[m]);
                line += dof * dof;
            }
            line = line.sqrt();
            if line > tol {
                *verified = false;
            }
            e += line;
        }
    } else {
        e = (w.get(j, j) * (f[j] - lambda_prev[0])).abs();
        if e > tol {
            *verified = false;
        }
    }
    if res_tolerance != 0.0 {
        if e > res_tolerance {
            *verified = false;
        }
        e *= tol / res_tolerance;
    }
    e
}

/// `d[j..j+nb] += W[j..j+nb, :]·λ`. Each line sums over `k` in increasing order, as SOFA's
/// column-outer loop does; walking the rows contiguously, and the three lines of a contact
/// together (independent sums), gives the same bits with far fewer cache misses.
fn block_violation(p: &mut ConstraintProblem, j: usize, nb: usize) {
    let lambda = &p.lambda;
    if nb == 3 {
        let (r0, r1, r2) = (p.w.row(j), p.w.row(j + 1), p.w.row(j + 2));
        let (mut d0, mut d1, mut d2) = (p.d[j], p.d[j + 1], p.d[j + 2]);
        for (k, &l) in lambda.iter().enumerate() {
            d0 += r0[k] * l;
            d1 += r1[k] * l;
            d2 += r2[k] * l;
        }
        p.d[j] = d0;
        p.d[j + 1] = d1;
        p.d[j + 2] = d2;
        return;
    }
    for l in 0..nb {
        let row = p.w.row(j + l);
        let mut d = p.d[j + l];
        for (w, x) in row.iter().zip(lambda) {
            d += w * x;
        }
        p.d[j + l] = d;
    }
}

/// SOFA's `gaussSeidel_increment`: one sweep over the blocks in ascending order. Each block's
/// violation is rebuilt from `dfree` and the whole current `λ`, then its resolution updates it.
/// With `measure_error`, adds the block errors to `error` and clears `verified` on a failed check.
pub fn gauss_seidel_sweep(p: &mut ConstraintProblem, measure_error: bool, tol: f64, error: &mut f64, verified: &mut bool) {
    let n = p.n;
    let mut j = 0;
    let mut prev = Vec::new();
    while j < n {
        let Some(mut res) = p.resolutions[j].take() else { break };
        let nb = res.nb_lines().max(1);
        prev.clear();
        prev.extend_from_slice(&p.lambda[j..j + nb]);
        p.d[j..j + nb].copy_from_slice(&p.dfree[j..j + nb]);
        block_violation(p, j, nb);
        res.resolution(j, &p.w, &mut p.d, &mut p.lambda, &p.dfree);
        let res_tol = res.tolerance();
        p.resolutions[j] = Some(res);
        if measure_error {
            *error += block_error(p, j, nb, &prev, tol, res_tol, verified);
        } else {
            *verified = true;
        }
        j += nb;
    }
}

/// SOFA's `BlockGaussSeidelConstraintSolver::doSolve` on a built problem (no timeout).
/// Fills `current_error`, `current_iterations` (sweeps + 1) and `error_history`.
pub fn block_gauss_seidel(p: &mut ConstraintProblem) -> SolveOutcome {
    if let Some(done) = empty_problem(p) {
        return done;
    }
    let n = p.n;
    let tol = p.effective_tolerance();
    init_resolutions(p);
    let mut temp = if p.sor != 1.0 { vec![0.0; n] } else { Vec::new() };
    let mut error = 0.0;
    let mut converged = false;
    let mut count = 0;
    for _ in 0..p.max_iterations {
        count += 1;
        let mut verified = true;
        if p.sor != 1.0 {
            temp.copy_from_slice(&p.lambda);
        }
        error = 0.0;
        gauss_seidel_sweep(p, true, tol, &mut error, &mut verified);
        p.error_history.push(error);
        over_relax(p, &temp);
        if iteration_converged(p, verified, error, tol, true) {
            converged = true;
            break;
        }
    }
    result_output(p, error, count, converged)
}

built_method!(
    /// The BlockGaussSeidelConstraintSolver algorithm.
    BlockGaussSeidel,
    block_gauss_seidel
);
