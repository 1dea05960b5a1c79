//! `UnbuiltGaussSeidelConstraintSolver`: block Gauss–Seidel without a global W; each block's
//! violation comes from the constraint corrections' accumulated state (lagrangian-solvers spec
//! §2.5, §2.7, `SOLVER/UnbuiltGaussSeidelConstraintSolver.cpp`).

use settee_core::constraint::ConstraintProblem;
use settee_core::SimResult;

use super::block_gauss_seidel::block_error;
use super::generic::{
    empty_problem, init_resolutions, iteration_converged, over_relax, result_output, SolveOutcome, SolverMethod, UnbuiltOps, UnbuiltProblem,
};

/// SOFA's `UnbuiltGaussSeidelConstraintSolver::doSolve` (no timeout). `sequence` is the row
/// visiting order (block starts, each followed by its other rows); `ops` gives the blocks'
/// displacements and receives the multiplier increments. λ starts from zero whatever `init`
/// wrote. `current_iterations` is the index of the breaking sweep + 1 (sweeps performed when
/// converged, `max_iterations + 1` otherwise).
pub fn unbuilt_gauss_seidel(p: &mut ConstraintProblem, sequence: &[usize], ops: &mut dyn UnbuiltOps) -> SimResult<SolveOutcome> {
    if let Some(done) = empty_problem(p) {
        return Ok(done);
    }
    let tol = p.effective_tolerance();
    let rows = init_resolutions(p);
    p.lambda[..rows].fill(0.0);
    let n = p.n;
    let mut temp = if p.sor != 1.0 { vec![0.0; n] } else { Vec::new() };
    let mut err_f = Vec::new();
    let mut temp_f = Vec::new();
    let mut error = 0.0;
    let mut converged = false;
    let mut iter = 0;
    while iter < p.max_iterations {
        let mut verified = true;
        if p.sor != 1.0 {
            temp.copy_from_slice(&p.lambda);
        }
        error = 0.0;
        let mut pos = 0;
        while pos < sequence.len() {
            let j = sequence[pos];
            let Some(mut res) = p.resolutions.get_mut(j).and_then(|r| r.take()) else { break };
            let nb = res.nb_lines().max(1);
            err_f.clear();
            err_f.extend_from_slice(&p.lambda[j..j + nb]);
            p.d[j..j + nb].copy_from_slice(&p.dfree[j..j + nb]);
            ops.add_constraint_displacement(j, &mut p.d, j, j + nb - 1)?;
            res.resolution(j, &p.w, &mut p.d, &mut p.lambda, &p.dfree);
            let res_tol = res.tolerance();
            p.resolutions[j] = Some(res);
            error += block_error(p, j, nb, &err_f, tol, res_tol, &mut verified);
            let update = (0..nb).any(|l| p.lambda[j + l] != 0.0 || err_f[l] != 0.0);
            if update {
                temp_f.clear();
                temp_f.extend_from_slice(&p.lambda[j..j + nb]);
                for l in 0..nb {
                    p.lambda[j + l] -= err_f[l];
                }
                ops.set_constraint_dforce(j, &p.lambda, j, j + nb - 1, update)?;
                p.lambda[j..j + nb].copy_from_slice(&temp_f);
            }
            pos += nb;
        }
        p.error_history.push(error);
        over_relax(p, &temp);
        if iteration_converged(p, verified, error, tol, true) {
            converged = true;
            break;
        }
        iter += 1;
    }
    Ok(result_output(p, error, iter, converged))
}

/// The UnbuiltGaussSeidelConstraintSolver algorithm.
#[derive(Clone, Default)]
pub struct UnbuiltGaussSeidel;

impl SolverMethod for UnbuiltGaussSeidel {
    const BUILT: bool = false;
    fn solve(&mut self, p: &mut ConstraintProblem, unbuilt: &UnbuiltProblem, ops: &mut dyn UnbuiltOps) -> SimResult<SolveOutcome> {
        unbuilt_gauss_seidel(p, &unbuilt.sequence, ops)
    }
}
