//! `ImprovedJacobiConstraintSolver`: projected block Jacobi with an optional spectral scaling of
//! the residual and an optional momentum term (lagrangian-solvers spec §3,
//! `SOLVER/ImprovedJacobiConstraintSolver.cpp`), SOFA's quirks included (squared eigenvalue
//! modulus, mixed old/new increments in the error, warm start ignored by the first residual).
//!
//! The Jacobi residual and the block solves run in parallel (rayon); every row and block is
//! computed with the same operations in the same order as the sequential code and the block
//! errors are summed in block order, so the result does not depend on the thread count.

use rayon::prelude::*;
use settee_core::constraint::{ConstraintProblem, ConstraintResolution, DenseMatrix};
use settee_core::data::DataSet;
use settee_core::SimResult;

use super::generic::{init_resolutions, result_output, SolveOutcome, SolverMethod, UnbuiltOps, UnbuiltProblem};

/// Options of the improved Jacobi iteration (SOFA's Data, defaults off / 1 / off / 10).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImprovedJacobiOptions {
    pub use_spectral_correction: bool,
    pub spectral_correction_factor: f64,
    pub use_conjugate_residue: bool,
    pub conjugate_residue_speed_factor: f64,
}

impl Default for ImprovedJacobiOptions {
    fn default() -> Self {
        ImprovedJacobiOptions {
            use_spectral_correction: false,
            spectral_correction_factor: 1.0,
            use_conjugate_residue: false,
            conjugate_residue_speed_factor: 10.0,
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
pub fn spectral_factor(w: &DenseMatrix, factor: f64) -> f64 {
    let r = symmetric_eigenvalues(w).into_iter().map(|m| m * m).fold(0.0, f64::max);
    factor * 1.0f64.min(0.9 * 2.0 / r)
}

/// SOFA's `ImprovedJacobiConstraintSolver::doSolve`.
pub fn improved_jacobi(p: &mut ConstraintProblem, opt: &ImprovedJacobiOptions) -> SolveOutcome {
    let n = p.n;
    p.error_history.clear();
    if n == 0 {
        p.current_error = 0.0;
        p.current_iterations = 0;
        return SolveOutcome::default();
    }
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
    let local_w: Vec<DenseMatrix> = blocks
        .iter()
        .map(|&(j, nb)| {
            let mut m = DenseMatrix::zeros(nb);
            for l in 0..nb {
                m.data[l * nb..(l + 1) * nb].copy_from_slice(&p.w.row(j + l)[j..j + nb]);
            }
            m
        })
        .collect();
    let rho = if opt.use_spectral_correction { spectral_factor(&p.w, opt.spectral_correction_factor) } else { 1.0 };
    let mut error = 0.0;
    let mut converged = false;
    let mut count = 0;
    let mut block_err = vec![(0.0, true); blocks.len()];
    for i in 0..p.max_iterations {
        count += 1;
        // Single-precision ratio as in SOFA: `(float)i / maxIterations`.
        let q = (i as f32) / (p.max_iterations as f32);
        let beta = if opt.use_conjugate_residue { 1.0f64.min((q as f64).powf(opt.conjugate_residue_speed_factor)) } else { 0.0 };
        // (a) residual of every row from the previous increments.
        {
            let w = &p.w;
            let delta = &delta;
            p.d[..covered].par_iter_mut().zip(corrected[..covered].par_iter_mut()).enumerate().for_each(|(l, (d, e))| {
                let row = w.row(l);
                for k in 0..n {
                    *d += row[k] * delta[k];
                }
                *e = rho * *d;
            });
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
        // later ones the previous increments (SOFA updates Δ block by block).
        {
            let w = &p.w;
            let (delta_old, delta_new_ref) = (&delta, &delta_new);
            let tol2 = tol * tol;
            block_err.par_iter_mut().zip(blocks.par_iter()).for_each(|(out, &(j, nb))| {
                let split = j + nb;
                let mut e = 0.0;
                let mut ok = true;
                for l in j..j + nb {
                    let row = w.row(l);
                    for k in 0..n {
                        let dk = if k < split { delta_new_ref[k] } else { delta_old[k] };
                        let t = row[k] * dk;
                        e += t * t;
                    }
                    ok = ok && e < tol2;
                }
                *out = (e, ok);
            });
        }
        delta[..covered].copy_from_slice(&delta_new[..covered]);
        error = 0.0;
        let mut verified = true;
        for &(e, ok) in &block_err {
            verified = verified && ok;
            error += e.sqrt();
        }
        p.error_history.push(error);
        if p.all_verified {
            if verified {
                converged = true;
                break;
            }
        } else if error < tol && i > 0 {
            converged = true;
            break;
        }
    }
    result_output(p, error, count, converged)
}

/// The ImprovedJacobiConstraintSolver algorithm.
#[derive(Default)]
pub struct ImprovedJacobi {
    pub options: ImprovedJacobiOptions,
}

settee_core::data_refs! {
    pub static IJ_READS;
    MAX_ITERATIONS: Int = "maxIterations";
    TOLERANCE: Real = "tolerance";
    SOR: Real = "sor";
    REGULARIZATION_TERM: Real = "regularizationTerm";
    SCALE_TOLERANCE: Bool = "scaleTolerance";
    ALL_VERIFIED: Bool = "allVerified";
    COMPUTE_GRAPHS: Bool = "computeGraphs";
    COMPUTE_CONSTRAINT_FORCES: Bool = "computeConstraintForces";
    USE_SVD: Bool = "useSVDForRegularization";
    USE_SPECTRAL_CORRECTION: Bool = "useSpectralCorrection";
    SPECTRAL_CORRECTION_FACTOR: Real = "spectralCorrectionFactor";
    USE_CONJUGATE_RESIDUE: Bool = "useConjugateResidue";
    CONJUGATE_RESIDUE_SPEED_FACTOR: Real = "conjugateResidueSpeedFactor";
}

pub static IJ_DATA: &[settee_core::DataDecl] = &[
    settee_core::data::decl("useSpectralCorrection", settee_core::data::DataKind::Bool, "false", "If set to true, the residual fed to the block solves is scaled by spectralCorrectionFactor*min(1, 1.8/|eigenvalue|²max)"),
    settee_core::data::decl("spectralCorrectionFactor", settee_core::data::DataKind::Real, "1", "Factor used to modulate the spectral correction"),
    settee_core::data::decl("useConjugateResidue", settee_core::data::DataKind::Bool, "false", "If set to true, beta*(lambda^i - lambda^(i-1)) is added after each block solve, beta = min(1, (i/maxIterations)^conjugateResidueSpeedFactor)"),
    settee_core::data::decl("conjugateResidueSpeedFactor", settee_core::data::DataKind::Real, "10", "Factor used to modulate the speed in which beta used in the conjugate residue part reaches 1.0. The higher the value, the slower the reach."),
];

impl SolverMethod for ImprovedJacobi {
    fn read_data(&mut self, d: &DataSet) {
        self.options = ImprovedJacobiOptions {
            use_spectral_correction: d.get(USE_SPECTRAL_CORRECTION),
            spectral_correction_factor: d.get(SPECTRAL_CORRECTION_FACTOR),
            use_conjugate_residue: d.get(USE_CONJUGATE_RESIDUE),
            conjugate_residue_speed_factor: d.get(CONJUGATE_RESIDUE_SPEED_FACTOR),
        };
    }
    fn solve(&mut self, p: &mut ConstraintProblem, _: &UnbuiltProblem, _: &mut dyn UnbuiltOps) -> SimResult<SolveOutcome> {
        Ok(improved_jacobi(p, &self.options))
    }
}
