#![allow(clippy::needless_range_loop)]
//! The constraint solvers' algorithms on small hand-built problems: known answers (direct
//! solves, single contacts), invariants (complementarity, Coulomb cone) and SOFA's quirks
//! (iteration counts, termination on singular W).

mod common;

use settee_constraint::resolution::{Bilateral3DofResolution, BilateralResolution, UnilateralResolution, UnilateralWithFrictionResolution};
use settee_constraint::solvers::block_gauss_seidel;
use settee_core::constraint::{ConstraintProblem, ConstraintResolution, DenseMatrix};

/// A problem with W, dfree, the given resolutions (in row order) and the solver settings.
fn problem(n: usize, w: &[f64], dfree: &[f64], res: Vec<Box<dyn ConstraintResolution>>, tol: f64, max_it: usize) -> ConstraintProblem {
    let (p, line) = common::problem(DenseMatrix { n, data: w.to_vec() }, dfree, res, tol, max_it, true);
    assert_eq!(line, n);
    p
}

/// `W λ = −dfree` by Gaussian elimination with partial pivoting.
fn direct(n: usize, w: &[f64], dfree: &[f64]) -> Vec<f64> {
    let mut a = w.to_vec();
    let mut b: Vec<f64> = dfree.iter().map(|v| -v).collect();
    settee_linearsolver::testing::eliminate(&mut a, &mut b);
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|j| a[i * n + j] * x[j]).sum();
        x[i] = (b[i] - s) / a[i * n + i];
    }
    x
}

/// An SPD 6×6 matrix `BᵀB + I` with a fixed B.
fn spd6() -> Vec<f64> {
    let b = [
        [1.0, 0.2, -0.3, 0.0, 0.5, 0.1],
        [0.0, 1.2, 0.4, -0.2, 0.0, 0.3],
        [0.3, 0.0, 0.9, 0.1, -0.4, 0.0],
        [-0.1, 0.5, 0.0, 1.1, 0.2, -0.2],
        [0.2, 0.0, 0.3, 0.0, 0.8, 0.4],
        [0.0, -0.3, 0.1, 0.2, 0.0, 1.0],
    ];
    let mut w = vec![0.0; 36];
    for i in 0..6 {
        for j in 0..6 {
            w[i * 6 + j] = (0..6).map(|k| b[k][i] * b[k][j]).sum::<f64>() + if i == j { 1.0 } else { 0.0 };
        }
    }
    w
}

const DFREE6: [f64; 6] = [0.3, -0.7, 1.1, -0.2, 0.5, -0.9];

fn bilateral_blocks() -> Vec<Box<dyn ConstraintResolution>> {
    vec![Box::new(Bilateral3DofResolution::new(None)), Box::new(Bilateral3DofResolution::new(None))]
}

fn bilateral_lines() -> Vec<Box<dyn ConstraintResolution>> {
    (0..6).map(|_| Box::new(BilateralResolution::new(None)) as Box<dyn ConstraintResolution>).collect()
}

fn violation(p: &ConstraintProblem) -> Vec<f64> {
    (0..p.n).map(|i| p.dfree[i] + (0..p.n).map(|k| p.w.get(i, k) * p.lambda[k]).sum::<f64>()).collect()
}

fn assert_close(a: &[f64], b: &[f64], tol: f64) {
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < tol, "{a:?} vs {b:?}");
    }
}

#[test]
fn bgs_bilateral_matches_direct_solve() {
    let w = spd6();
    let exact = direct(6, &w, &DFREE6);
    for res in [bilateral_blocks(), bilateral_lines()] {
        let mut p = problem(6, &w, &DFREE6, res, 1e-13, 10_000);
        let out = block_gauss_seidel(&mut p);
        assert!(out.converged && out.stored);
        assert_close(&p.lambda, &exact, 1e-8);
        assert_eq!(p.current_iterations, p.error_history.len() + 1);
    }
}

#[test]
fn bgs_counts_sweeps_plus_one() {
    // Diagonal W: the first sweep solves exactly, the second measures no change and stops.
    let w = [2.0, 0.0, 0.0, 4.0];
    let mut p = problem(2, &w, &[1.0, -2.0], vec![Box::new(BilateralResolution::new(None)), Box::new(BilateralResolution::new(None))], 1e-6, 100);
    let out = block_gauss_seidel(&mut p);
    assert!(out.converged);
    assert_eq!(p.lambda, vec![-0.5, 0.5]);
    assert_eq!(p.error_history, vec![3.0, 0.0]); // |2·(−0.5)| + |4·0.5|, then 0
    assert_eq!(p.current_iterations, 3);
    assert_eq!(p.current_error, 0.0);
}

#[test]
fn bgs_warm_start_through_init() {
    // The exact answer as warm start: the first sweep changes nothing and stops.
    let w = spd6();
    let exact = direct(6, &w, &DFREE6);
    let res: Vec<Box<dyn ConstraintResolution>> = vec![
        Box::new(Bilateral3DofResolution::new(Some([exact[0], exact[1], exact[2]]))),
        Box::new(Bilateral3DofResolution::new(Some([exact[3], exact[4], exact[5]]))),
    ];
    let mut p = problem(6, &w, &DFREE6, res, 1e-10, 100);
    block_gauss_seidel(&mut p);
    assert_eq!(p.current_iterations, 2);
    assert!(p.current_error < 1e-12);
}

#[test]
fn bgs_empty_problem() {
    let mut p = problem(0, &[], &[], vec![], 1e-3, 10);
    let out = block_gauss_seidel(&mut p);
    assert!(!out.stored);
    assert_eq!((p.current_iterations, p.current_error), (0, 0.0));
}

#[test]
fn bgs_unilateral_complementarity() {
    let w = spd6();
    let res: Vec<Box<dyn ConstraintResolution>> = (0..6).map(|_| Box::new(UnilateralResolution) as Box<dyn ConstraintResolution>).collect();
    let mut p = problem(6, &w, &DFREE6, res, 1e-12, 10_000);
    assert!(block_gauss_seidel(&mut p).converged);
    let d = violation(&p);
    for i in 0..6 {
        assert!(p.lambda[i] >= 0.0);
        assert!(d[i] > -1e-9, "d = {d:?}");
        assert!((p.lambda[i] * d[i]).abs() < 1e-9);
    }
    // Rows with a negative free violation are pushed: some multiplier is active.
    assert!(p.lambda.iter().any(|&l| l > 0.1));
}

#[test]
fn bgs_friction_single_contact_known_answers() {
    let w = [2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    // Sticking: λn = 1/2·1 = 0.5, λt = −0.1 (|λt| < 0.6·0.5).
    let mut p = problem(3, &w, &[-1.0, 0.1, 0.0], vec![Box::new(UnilateralWithFrictionResolution::new(0.6))], 1e-12, 100);
    assert!(block_gauss_seidel(&mut p).converged);
    assert_close(&p.lambda, &[0.5, -0.1, 0.0], 1e-15);
    // Sliding: tangential pull (3, 4) beyond the cone: λt on the cone, opposite to the pull.
    let mut p = problem(3, &w, &[-1.0, 3.0, 4.0], vec![Box::new(UnilateralWithFrictionResolution::new(0.6))], 1e-12, 100);
    assert!(block_gauss_seidel(&mut p).converged);
    assert_close(&p.lambda, &[0.5, -0.18, -0.24], 1e-15);
    // Separating: nothing.
    let mut p = problem(3, &w, &[1.0, 3.0, 4.0], vec![Box::new(UnilateralWithFrictionResolution::new(0.6))], 1e-12, 100);
    block_gauss_seidel(&mut p);
    assert_eq!(p.lambda, vec![0.0; 3]);
}

#[test]
fn bgs_friction_cone_holds_on_coupled_contacts() {
    let w = spd6();
    let mu = 0.3;
    let res: Vec<Box<dyn ConstraintResolution>> =
        vec![Box::new(UnilateralWithFrictionResolution::new(mu)), Box::new(UnilateralWithFrictionResolution::new(mu))];
    let dfree = [-0.5, 0.8, -0.4, -0.3, -0.6, 0.9];
    let mut p = problem(6, &w, &dfree, res, 1e-10, 10_000);
    block_gauss_seidel(&mut p);
    for c in 0..2 {
        let (ln, lt, ls) = (p.lambda[3 * c], p.lambda[3 * c + 1], p.lambda[3 * c + 2]);
        assert!(ln >= 0.0);
        assert!((lt * lt + ls * ls).sqrt() <= mu * ln + 1e-12);
    }
    let d = violation(&p);
    for c in 0..2 {
        assert!(d[3 * c] > -1e-8 && (p.lambda[3 * c] * d[3 * c]).abs() < 1e-8);
    }
}

#[test]
fn bgs_singular_w_terminates_at_max_iterations() {
    // Two copies of the same row asking for different values: no solution.
    let w = [1.0, 1.0, 1.0, 1.0];
    let mut p = problem(2, &w, &[1.0, -1.0], vec![Box::new(BilateralResolution::new(None)), Box::new(BilateralResolution::new(None))], 1e-6, 50);
    let out = block_gauss_seidel(&mut p);
    assert!(!out.converged);
    assert_eq!(p.current_iterations, 51);
    assert!(p.lambda.iter().all(|v| v.is_finite()));
}

#[test]
fn bgs_sor_blends_after_the_sweep() {
    // One diagonal row: the sweep gives λ* = 1, sor 0.5 keeps half: λ = 0.5, 0.75, …
    let mut p = problem(1, &[2.0], &[-2.0], vec![Box::new(BilateralResolution::new(None))], 1e-9, 3);
    p.sor = 0.5;
    block_gauss_seidel(&mut p);
    assert_eq!(p.lambda, vec![0.875]);
    assert_eq!(p.error_history, vec![2.0, 1.0, 0.5]);
}

// ----- every solver ---------------------------------------------------------------------------

use settee_constraint::solvers::generic::DenseUnbuilt;
use settee_constraint::solvers::{
    improved_jacobi, nncg, preconditioned_conjugate_residual, unbuilt_gauss_seidel, ImprovedJacobiOptions, SolveOutcome,
};

#[derive(Clone, Copy, Debug)]
enum Solver {
    Bgs,
    Nncg,
    Pcr,
    Ugs,
    Ij,
}

const ALL: [Solver; 5] = [Solver::Bgs, Solver::Nncg, Solver::Pcr, Solver::Ugs, Solver::Ij];

fn run(s: Solver, p: &mut ConstraintProblem) -> SolveOutcome {
    match s {
        Solver::Bgs => block_gauss_seidel(p),
        Solver::Nncg => nncg(p),
        Solver::Pcr => preconditioned_conjugate_residual(p),
        Solver::Ugs => {
            let mut ops = DenseUnbuilt { w: p.w.clone(), f: vec![0.0; p.n] };
            let seq: Vec<usize> = (0..p.n).collect();
            unbuilt_gauss_seidel(p, &seq, &mut ops).unwrap()
        }
        Solver::Ij => improved_jacobi(p, &ImprovedJacobiOptions::default()),
    }
}

/// A diagonally dominant SPD matrix, on which plain (block) Jacobi converges too.
fn dominant6() -> Vec<f64> {
    let mut w = vec![0.0; 36];
    for i in 0..6 {
        for j in 0..6 {
            w[i * 6 + j] = if i == j { 4.0 + i as f64 * 0.5 } else { 0.3 / (1.0 + (i as f64 - j as f64).abs()) };
        }
    }
    w
}

#[test]
fn every_solver_reaches_the_direct_solution_of_a_bilateral_problem() {
    for w in [spd6(), dominant6()] {
        let exact = direct(6, &w, &DFREE6);
        for s in ALL {
            if matches!(s, Solver::Ij) && w != dominant6() {
                continue; // plain Jacobi need not converge on a strongly coupled W
            }
            for res in [bilateral_blocks(), bilateral_lines()] {
                let mut p = problem(6, &w, &DFREE6, res, 1e-14, 100_000);
                p.scale_tolerance = false;
                run(s, &mut p);
                assert_close(&p.lambda, &exact, 1e-8);
            }
        }
    }
}

#[test]
fn projected_solvers_satisfy_complementarity() {
    for s in [Solver::Bgs, Solver::Nncg, Solver::Ugs, Solver::Ij] {
        let w = dominant6();
        let res: Vec<Box<dyn ConstraintResolution>> = (0..6).map(|_| Box::new(UnilateralResolution) as Box<dyn ConstraintResolution>).collect();
        let mut p = problem(6, &w, &DFREE6, res, 1e-13, 100_000);
        let out = run(s, &mut p);
        // NNCG may stop on ‖Δλ‖ < tol, which SOFA does not flag as converged.
        assert!(out.converged || matches!(s, Solver::Nncg), "{s:?}");
        let d = violation(&p);
        for i in 0..6 {
            assert!(p.lambda[i] >= 0.0, "{s:?}");
            assert!(d[i] > -1e-9, "{s:?}: d = {d:?}");
            assert!((p.lambda[i] * d[i]).abs() < 1e-9, "{s:?}");
        }
        // Rows with a negative free violation are active, the others are not.
        for i in 0..6 {
            assert_eq!(p.lambda[i] > 0.0, DFREE6[i] < 0.0, "{s:?}: λ = {:?}", p.lambda);
        }
    }
}

#[test]
fn projected_solvers_keep_friction_in_the_cone() {
    let mu = 0.3;
    let dfree = [-0.5, 0.8, -0.4, -0.3, -0.6, 0.9];
    for s in [Solver::Bgs, Solver::Nncg, Solver::Ugs, Solver::Ij] {
        let res: Vec<Box<dyn ConstraintResolution>> =
            vec![Box::new(UnilateralWithFrictionResolution::new(mu)), Box::new(UnilateralWithFrictionResolution::new(mu))];
        let mut p = problem(6, &dominant6(), &dfree, res, 1e-12, 10_000);
        run(s, &mut p);
        for c in 0..2 {
            let (ln, lt, ls) = (p.lambda[3 * c], p.lambda[3 * c + 1], p.lambda[3 * c + 2]);
            assert!(ln > 0.0, "{s:?}");
            assert!((lt * lt + ls * ls).sqrt() <= mu * ln + 1e-12, "{s:?}");
        }
    }
}

#[test]
fn single_contact_sliding_answer_for_every_projected_solver() {
    let w = [2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    for s in [Solver::Bgs, Solver::Nncg, Solver::Ugs, Solver::Ij] {
        let mut p = problem(3, &w, &[-1.0, 3.0, 4.0], vec![Box::new(UnilateralWithFrictionResolution::new(0.6))], 1e-12, 100);
        run(s, &mut p);
        assert_close(&p.lambda, &[0.5, -0.18, -0.24], 1e-15);
    }
}

#[test]
fn singular_w_terminates_for_every_solver() {
    let w = [1.0, 1.0, 1.0, 1.0];
    for s in ALL {
        let mut p = problem(2, &w, &[1.0, -1.0], vec![Box::new(BilateralResolution::new(None)), Box::new(BilateralResolution::new(None))], 1e-6, 40);
        let out = run(s, &mut p);
        assert!(!out.converged, "{s:?}");
        assert!(p.current_iterations <= 41, "{s:?}");
    }
}

#[test]
fn empty_problem_for_every_solver() {
    for s in ALL {
        let mut p = problem(0, &[], &[], vec![], 1e-3, 10);
        let out = run(s, &mut p);
        assert!(!out.stored);
        assert_eq!(p.current_iterations, 0);
    }
}

#[test]
fn unbuilt_gs_ignores_warm_start_and_counts_sweeps() {
    // Diagonal W: the first sweep solves, the second measures 0 → converged at sweep index 1,
    // currentIterations = 2 (BGS would say 3).
    let w = [2.0, 0.0, 0.0, 4.0];
    let res: Vec<Box<dyn ConstraintResolution>> = vec![Box::new(BilateralResolution::new(Some(7.0))), Box::new(BilateralResolution::new(None))];
    let mut p = problem(2, &w, &[1.0, -2.0], res, 1e-6, 100);
    let out = run(Solver::Ugs, &mut p);
    assert!(out.converged);
    assert_eq!(p.lambda, vec![-0.5, 0.5]);
    assert_eq!(p.error_history, vec![3.0, 0.0]);
    assert_eq!(p.current_iterations, 2);
}

#[test]
fn pcr_error_uses_the_iteration_indexed_residual() {
    // Diagonal W: M = I, the first step solves exactly (r = 0), the error is 0 but the
    // i > 0 guard lets a second iteration run, where SOFA divides 0 by 0; here the exact
    // breakdown stops the iteration with the solution.
    let w = [4.0, 0.0, 0.0, 9.0];
    let res: Vec<Box<dyn ConstraintResolution>> = vec![Box::new(BilateralResolution::new(None)), Box::new(BilateralResolution::new(None))];
    let mut p = problem(2, &w, &[2.0, -3.0], res, 1e-9, 30);
    preconditioned_conjugate_residual(&mut p);
    assert_close(&p.lambda, &[-0.5, 1.0 / 3.0], 1e-15);
    assert!(p.current_iterations <= 3);
}

#[test]
fn improved_jacobi_same_result_for_any_thread_count() {
    let dfree = [-0.5, 0.8, -0.4, -0.3, -0.6, 0.9];
    let solve = || {
        let res: Vec<Box<dyn ConstraintResolution>> =
            vec![Box::new(UnilateralWithFrictionResolution::new(0.3)), Box::new(UnilateralWithFrictionResolution::new(0.3))];
        let mut p = problem(6, &dominant6(), &dfree, res, 1e-12, 500);
        let opt = ImprovedJacobiOptions { use_spectral_correction: true, use_conjugate_residue: true, ..Default::default() };
        improved_jacobi(&mut p, &opt);
        (p.lambda, p.error_history)
    };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(solve);
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(solve);
    assert_eq!(one, two);
}

#[test]
fn spectral_factor_uses_the_squared_largest_eigenvalue() {
    // Eigenvalues 3 and 1: r = 9, ρ = min(1, 1.8/9) = 0.2.
    let w = DenseMatrix { n: 2, data: vec![2.0, 1.0, 1.0, 2.0] };
    let rho = settee_constraint::solvers::improved_jacobi::spectral_factor(&w, 1.0);
    assert!((rho - 0.2).abs() < 1e-14, "{rho}");
}

#[test]
fn classes_register_and_generic_solver_is_refused_with_migration_message() {
    let mut f = settee_core::Factory::new();
    settee_constraint::register(&mut f);
    for name in [
        "BlockGaussSeidelConstraintSolver",
        "NNCGConstraintSolver",
        "PreconditionedConjugateResidual",
        "UnbuiltGaussSeidelConstraintSolver",
        "ImprovedJacobiConstraintSolver",
    ] {
        assert!(f.class(name).is_some(), "{name}");
    }
    assert!(f.class("GenericConstraintSolver").is_none());
    let message = settee_core::names::removed_class_message("GenericConstraintSolver").unwrap();
    assert!(message.contains("BlockGaussSeidelConstraintSolver"));
}
