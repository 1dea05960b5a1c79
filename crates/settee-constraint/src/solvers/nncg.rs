//! `NNCGConstraintSolver`: non-smooth non-linear conjugate gradient over the block Gauss–Seidel
//! sweep (lagrangian-solvers spec §2.8, `SOLVER/NNCGConstraintSolver.cpp`).

use settee_core::constraint::ConstraintProblem;

use super::block_gauss_seidel::gauss_seidel_sweep;
use super::generic::{built_method, dot, empty_problem, init_resolutions, iteration_converged, result_output, SolveOutcome};

/// SOFA's `NNCGConstraintSolver::doSolve`: a first unmeasured sweep, then up to
/// `max_iterations − 1` measured sweeps each followed by the conjugate-direction update
/// (restart when β > 1). A step with `‖Δλ‖ < tol` stops without flagging convergence.
pub fn nncg(p: &mut ConstraintProblem) -> SolveOutcome {
    if let Some(done) = empty_problem(p) {
        return done;
    }
    let n = p.n;
    let mut lam = vec![0.0; n];
    let mut delta = vec![0.0; n];
    let mut delta_new = vec![0.0; n];
    let mut dir = vec![0.0; n];
    let tol = p.effective_tolerance();
    init_resolutions(p);
    let mut error = 0.0;
    {
        let mut verified = true;
        lam.copy_from_slice(&p.lambda);
        gauss_seidel_sweep(p, false, tol, &mut error, &mut verified);
        for j in 0..n {
            delta[j] = -(p.lambda[j] - lam[j]);
            dir[j] = -delta[j];
        }
    }
    let mut converged = false;
    let mut count = 0;
    for _ in 1..p.max_iterations {
        count += 1;
        let mut verified = true;
        lam.copy_from_slice(&p.lambda);
        error = 0.0;
        gauss_seidel_sweep(p, true, tol, &mut error, &mut verified);
        p.error_history.push(error);
        if iteration_converged(p, verified, error, tol, true) {
            converged = true;
            break;
        }
        for j in 0..n {
            delta_new[j] = -(p.lambda[j] - lam[j]);
        }
        let beta = dot(&delta_new, &delta_new) / dot(&delta, &delta);
        delta.copy_from_slice(&delta_new);
        if beta > 1.0 {
            dir.fill(0.0);
        } else {
            for j in 0..n {
                p.lambda[j] += beta * dir[j];
                dir[j] = beta * dir[j] - delta[j];
            }
        }
        if dot(&delta_new, &delta_new).sqrt() < tol {
            break;
        }
    }
    result_output(p, error, count, converged)
}

built_method!(
    /// The NNCGConstraintSolver algorithm.
    Nncg,
    nncg
);
