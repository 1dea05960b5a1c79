//! `PreconditionedConjugateResidual`: Jacobi-preconditioned conjugate residual on `W λ = −dfree`,
//! every row treated as an equality (lagrangian-solvers spec §2.10,
//! `SOLVER/PreconditionedConjugateResidual.cpp`). The vector operations are written out in
//! SOFA's FullVector/FullMatrix order (`a + b·f`, dot products summed from index 0).

use settee_core::constraint::ConstraintProblem;

use super::generic::{built_method, dot, empty_problem, iteration_converged, result_output, SolveOutcome};

fn mat_vec(n: usize, m: &[f64], v: &[f64], out: &mut [f64]) {
    for i in 0..n {
        let mut r = 0.0;
        for k in 0..n {
            r += m[i * n + k] * v[k];
        }
        out[i] = r;
    }
}

/// SOFA's `PreconditionedConjugateResidual::doSolve`. The resolutions only give the block sizes.
/// The error reproduces SOFA's indexing slip: every line of every block adds `r[i]²`, `i` the
/// iteration index, not the line's own residual.
pub fn preconditioned_conjugate_residual(p: &mut ConstraintProblem) -> SolveOutcome {
    if let Some(done) = empty_problem(p) {
        return done;
    }
    let n = p.n;
    let w = &p.w;
    let mut mw = vec![0.0; n * n];
    for j in 0..n {
        let inv_jj = 1.0 / w.get(j, j).sqrt();
        for k in 0..n {
            let inv_kk = 1.0 / w.get(k, k).sqrt();
            mw[j * n + k] = w.get(j, k) * inv_jj * inv_kk;
        }
    }
    let mut r = vec![0.0; n];
    for j in 0..n {
        let inv_jj = 1.0 / w.get(j, j).sqrt();
        r[j] = -p.dfree[j] * inv_jj;
    }
    p.lambda.fill(0.0);
    let mut dir = r.clone();
    let mut wp = vec![0.0; n];
    let mut wr = vec![0.0; n];
    mat_vec(n, &mw, &dir, &mut wp);
    mat_vec(n, &mw, &r, &mut wr);
    let mut rwr = dot(&r, &wr);
    let mut error = 0.0;
    let mut converged = false;
    let tol = p.effective_tolerance();
    let max_it = p.max_iterations.min(n);
    let blocks = p.blocks();
    let mut count = 0;
    for i in 0..max_it {
        count += 1;
        let mut verified = true;
        let wp2 = dot(&wp, &wp);
        if wp2 == 0.0 {
            // Breakdown: W·p = 0 (solved exactly, or p in W's null space). SOFA divides by
            // zero here and fills λ with NaN; stop with the current iterate instead.
            converged = r.iter().all(|v| *v == 0.0);
            break;
        }
        let alpha = rwr / wp2;
        for j in 0..n {
            p.lambda[j] += dir[j] * alpha;
            r[j] += wp[j] * -alpha;
        }
        mat_vec(n, &mw, &r, &mut wr);
        let old = rwr;
        rwr = dot(&r, &wr);
        let beta = rwr / old;
        for j in 0..n {
            dir[j] = r[j] + dir[j] * beta;
        }
        error = 0.0;
        for &(_, nb) in &blocks {
            let mut e = 0.0;
            for _ in 0..nb {
                e += r[i] * r[i];
                verified = verified && e < tol * tol;
            }
            error += e.sqrt();
        }
        p.error_history.push(error);
        if iteration_converged(p, verified, error, tol, i > 0) {
            converged = true;
            break;
        }
        for j in 0..n {
            wp[j] = wr[j] + wp[j] * beta;
        }
    }
    for j in 0..n {
        p.lambda[j] /= p.w.get(j, j).sqrt();
    }
    result_output(p, error, count, converged)
}

built_method!(
    /// The PreconditionedConjugateResidual algorithm.
    PreconditionedConjugateResidual,
    preconditioned_conjugate_residual
);
