#![allow(clippy::needless_range_loop)]
//! ImprovedJacobi's fast iteration (one fused, interleaved, parallel pass over W per iteration)
//! against a plain sequential transcription of SOFA's loop — two passes over W, one row at a
//! time: the same bits of λ, of every error of the history and of the iteration count, on
//! problems large enough to take the parallel path, with mixed block sizes so that every
//! grouping of blocks occurs.

mod common;

use settee_constraint::resolution::{BilateralResolution, UnilateralResolution, UnilateralWithFrictionResolution};
use settee_constraint::solvers::improved_jacobi::{spectral_factor, PAR_MIN_ROWS};
use settee_constraint::solvers::{improved_jacobi, ImprovedJacobiOptions};
use settee_core::constraint::{ConstraintProblem, ConstraintResolution, DenseMatrix};

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Block sizes (1 = unilateral or bilateral row, 3 = friction contact) in a pattern that gives
/// groups of 1 to 4 equal blocks, and a compliance `B Bᵀ + diag` coupling all of them.
fn problem(seed: u64, blocks: usize) -> ConstraintProblem {
    let mut rng = Lcg(seed);
    let pattern = [3, 3, 3, 3, 3, 1, 3, 3, 1, 1, 3, 1, 1, 1, 1, 1, 3];
    let sizes: Vec<usize> = (0..blocks).map(|b| pattern[b % pattern.len()]).collect();
    let n: usize = sizes.iter().sum();
    let cols = n / 2;
    let b: Vec<f64> = (0..n * cols).map(|_| rng.next() - 0.5).collect();
    let w = settee_constraint::testing::gram(&b, n, cols, |i, j, acc| acc + if i == j { 0.05 } else { 0.0 });
    let dfree: Vec<f64> = (0..n).map(|_| rng.next() - 0.7).collect();
    let res: Vec<Box<dyn ConstraintResolution>> = sizes
        .iter()
        .enumerate()
        .map(|(k, &nb)| -> Box<dyn ConstraintResolution> {
            match (nb, k % 2) {
                (3, _) => Box::new(UnilateralWithFrictionResolution::new(0.4)),
                (_, 0) => Box::new(UnilateralResolution::new()),
                _ => Box::new(BilateralResolution::new(None)),
            }
        })
        .collect();
    common::problem(w, &dfree, res, 1e-12, 60, true).0
}

/// SOFA's `ImprovedJacobiConstraintSolver::doSolve`, written the plain way (lagrangian-solvers
/// spec §3): residual pass, block solves, then the block errors with the increments updated
/// block by block.
fn reference(p: &mut ConstraintProblem, opt: &ImprovedJacobiOptions) -> usize {
    let n = p.n;
    p.d.copy_from_slice(&p.dfree);
    p.lambda.fill(0.0);
    let tol = p.effective_tolerance();
    let mut blocks = Vec::new();
    let mut j = 0;
    while j < n {
        let r = p.resolutions[j].as_mut().unwrap();
        r.init(j, &p.w, &mut p.lambda);
        let nb = r.nb_lines();
        blocks.push((j, nb));
        j += nb;
    }
    let rho = if opt.use_spectral_correction { spectral_factor(&p.w, opt.spectral_correction_factor) } else { 1.0 };
    let mut delta = vec![0.0; n];
    let mut last_f = vec![0.0; n];
    let mut corrected = vec![0.0; n];
    p.error_history.clear();
    let mut count = 0;
    for i in 0..p.max_iterations {
        count += 1;
        let q = (i as f32) / (p.max_iterations as f32);
        let beta = if opt.use_conjugate_residue { 1.0f64.min((q as f64).powf(opt.conjugate_residue_speed_factor)) } else { 0.0 };
        for l in 0..n {
            for k in 0..n {
                p.d[l] += p.w.data[l * n + k] * delta[k];
            }
            corrected[l] = rho * p.d[l];
        }
        let mut error = 0.0;
        let mut new_delta = delta.clone();
        for &(j, nb) in &blocks {
            let mut lw = DenseMatrix::zeros(nb);
            for a in 0..nb {
                for c in 0..nb {
                    lw.data[a * nb + c] = p.w.data[(j + a) * n + j + c];
                }
            }
            let mut lf = p.lambda[j..j + nb].to_vec();
            let mut ld = corrected[j..j + nb].to_vec();
            let dfree = p.dfree[j..j + nb].to_vec();
            p.resolutions[j].as_mut().unwrap().resolution(0, &lw, &mut ld, &mut lf, &dfree);
            for l in 0..nb {
                let f = lf[l] + beta * delta[j + l];
                p.lambda[j + l] = f;
                new_delta[j + l] = f - last_f[j + l];
                last_f[j + l] = f;
            }
        }
        // Errors: block b sees the new increments of blocks up to itself.
        for &(j, nb) in &blocks {
            let mut e = 0.0;
            for l in j..j + nb {
                for k in 0..n {
                    let dk = if k < j + nb { new_delta[k] } else { delta[k] };
                    let t = p.w.data[l * n + k] * dk;
                    e += t * t;
                }
            }
            error += f64::sqrt(e);
        }
        delta = new_delta;
        p.error_history.push(error);
        if error < tol && i > 0 {
            break;
        }
    }
    count
}

#[test]
fn fused_pass_gives_sofa_bits() {
    for (seed, blocks, spectral, residue) in [(1, 60, true, false), (2, 75, false, false), (3, 90, true, true), (4, 51, false, true)] {
        let opt = ImprovedJacobiOptions { use_spectral_correction: spectral, use_conjugate_residue: residue, ..Default::default() };
        let mut fast = problem(seed, blocks);
        assert!(fast.n >= PAR_MIN_ROWS, "{} rows: the parallel path is not taken", fast.n);
        let mut slow = problem(seed, blocks);
        let count = reference(&mut slow, &opt);
        improved_jacobi(&mut fast, &opt);
        assert_eq!(fast.current_iterations, count + 1, "seed {seed}");
        assert_eq!(fast.error_history.len(), slow.error_history.len(), "seed {seed}");
        for (a, b) in fast.error_history.iter().zip(&slow.error_history) {
            assert_eq!(a.to_bits(), b.to_bits(), "seed {seed}: error {a} vs {b}");
        }
        for (a, b) in fast.lambda.iter().zip(&slow.lambda) {
            assert_eq!(a.to_bits(), b.to_bits(), "seed {seed}: λ {a} vs {b}");
        }
        assert!(fast.lambda.iter().any(|&l| l != 0.0), "seed {seed}: a trivial solution proves nothing");
    }
}

#[test]
fn fused_pass_same_bits_for_any_thread_count() {
    let opt = ImprovedJacobiOptions { use_spectral_correction: true, ..Default::default() };
    let solve = || {
        let mut p = problem(9, 80);
        improved_jacobi(&mut p, &opt);
        (p.lambda, p.error_history)
    };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(solve);
    let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap().install(solve);
    assert_eq!(one, three);
}
