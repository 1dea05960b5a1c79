#![allow(clippy::needless_range_loop)]
//! Settee's safeguarded ImprovedJacobi iteration on hand-made problems where SOFA's iterate
//! (plain block Jacobi, ω = 1) overshoots: it must reach Block Gauss–Seidel's solution, its
//! power-iteration estimate must bracket the true spectral radius as documented, its results
//! must not depend on the thread count, and the solver must leave SOFA's iterate only when
//! that one fails (with one warning).

mod common;

use settee_constraint::resolution::{BilateralResolution, UnilateralResolution, UnilateralWithFrictionResolution};
use settee_constraint::solvers::generic::{NoUnbuilt, UnbuiltProblem};
use settee_constraint::solvers::improved_jacobi::{
    safeguarded_jacobi, safeguarded_jacobi_with, scaled_spectral_estimate, sofa_iteration, symmetric_eigenvalues, PAR_MIN_ROWS,
};
use settee_constraint::solvers::{block_gauss_seidel, improved_jacobi, ImprovedJacobi, ImprovedJacobiOptions, SolverMethod};
use settee_core::constraint::{ConstraintProblem, ConstraintResolution, DenseMatrix};

fn problem(w: &DenseMatrix, dfree: &[f64], res: Vec<Box<dyn ConstraintResolution>>, tol: f64, max_it: usize) -> ConstraintProblem {
    let (p, line) = common::problem(w.clone(), dfree, res, tol, max_it, false);
    assert_eq!(line, w.n);
    p
}

fn unilateral(n: usize) -> Vec<Box<dyn ConstraintResolution>> {
    (0..n).map(|_| Box::new(UnilateralResolution) as Box<dyn ConstraintResolution>).collect()
}

fn bilateral(n: usize) -> Vec<Box<dyn ConstraintResolution>> {
    (0..n).map(|_| Box::new(BilateralResolution::new(None)) as Box<dyn ConstraintResolution>).collect()
}

fn friction(contacts: usize, mu: f64) -> Vec<Box<dyn ConstraintResolution>> {
    (0..contacts).map(|_| Box::new(UnilateralWithFrictionResolution::new(mu)) as Box<dyn ConstraintResolution>).collect()
}

/// `W_ii = 1`, `W_ij = 0.9`: D⁻¹W has eigenvalues 0.1 (×5) and 5.5, so the Jacobi step
/// `I − D⁻¹W` has spectral radius 4.5: SOFA's iterate overshoots.
fn coupled6() -> DenseMatrix {
    let mut w = DenseMatrix::zeros(6);
    for i in 0..6 {
        for j in 0..6 {
            w.data[i * 6 + j] = if i == j { 1.0 } else { 0.9 };
        }
    }
    w
}

/// A rigid body (mass 1, inertia diag(0.4, 0.5, 0.6)) resting on `k` contacts of its face z = 0,
/// rows (normal z, tangents x, y) per contact: `W = J M⁻¹ Jᵀ + ε I`. All normals push the same
/// body: the normal rows are strongly coupled, as in a beam lying on a floor.
fn rigid_contacts(points: &[[f64; 2]], eps: f64) -> DenseMatrix {
    let n = 3 * points.len();
    let dirs = [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let inv_inertia = [1.0 / 0.4, 1.0 / 0.5, 1.0 / 0.6];
    let mut j = vec![[0.0f64; 6]; n];
    for (c, pt) in points.iter().enumerate() {
        let r = [pt[0], pt[1], -0.1];
        for (l, d) in dirs.iter().enumerate() {
            let rxd = [r[1] * d[2] - r[2] * d[1], r[2] * d[0] - r[0] * d[2], r[0] * d[1] - r[1] * d[0]];
            j[3 * c + l] = [d[0], d[1], d[2], rxd[0], rxd[1], rxd[2]];
        }
    }
    let mut w = DenseMatrix::zeros(n);
    for a in 0..n {
        for b in 0..n {
            let mut s = 0.0;
            for k in 0..3 {
                s += j[a][k] * j[b][k];
            }
            for k in 0..3 {
                s += j[a][3 + k] * inv_inertia[k] * j[b][3 + k];
            }
            w.data[a * n + b] = s + if a == b { eps } else { 0.0 };
        }
    }
    w
}

fn eight_points() -> Vec<[f64; 2]> {
    vec![[-1.0, -0.5], [1.0, -0.5], [-1.0, 0.5], [1.0, 0.5], [-0.5, -0.25], [0.5, -0.25], [-0.5, 0.25], [0.5, 0.25]]
}

/// Free violations of a tilted body landing while sliding along x.
fn landing_dfree(points: &[[f64; 2]]) -> Vec<f64> {
    let mut d = Vec::new();
    for p in points {
        d.extend_from_slice(&[-0.01 - 0.002 * p[0] + 0.001 * p[1], 0.003, -0.001]);
    }
    d
}

/// A deterministic pseudo-random number in [0, 1).
fn lcg(state: &mut u64) -> f64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// `W = B Bᵀ / k + c I` with B's entries in [0.2, 1.2): an all-positive dominant mode (the
/// mode of many contacts pushing one body) above a spread of small ones.
fn positive_wishart(n: usize, k: usize, c: f64, seed: u64) -> DenseMatrix {
    let mut s = seed;
    let b: Vec<f64> = (0..n * k).map(|_| 0.2 + lcg(&mut s)).collect();
    settee_constraint::testing::gram(&b, n, k, |i, j, t| t / k as f64 + if i == j { c } else { 0.0 })
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

fn bgs_solution(w: &DenseMatrix, dfree: &[f64], res: Vec<Box<dyn ConstraintResolution>>) -> Vec<f64> {
    let mut p = problem(w, dfree, res, 1e-15, 200_000);
    assert!(block_gauss_seidel(&mut p).converged);
    p.lambda
}

#[test]
fn sofa_iterate_fails_where_the_safeguarded_one_reaches_gauss_seidel_bilateral() {
    let w = coupled6();
    let dfree = [-0.1, -0.2, -0.3, -0.15, -0.25, -0.05];
    // Plain Jacobi on bilateral rows grows by 4.5 per iteration.
    let mut p = problem(&w, &dfree, bilateral(6), 1e-14, 3000);
    let (out, diverged) = sofa_iteration(&mut p, &ImprovedJacobiOptions::default(), true);
    assert!(diverged && !out.converged);
    assert!(p.current_iterations < 20, "growth by 1e6 takes ~ln(1e6)/ln(4.5) = 9 iterations: {}", p.current_iterations);
    let mut p = problem(&w, &dfree, bilateral(6), 1e-14, 3000);
    improved_jacobi(&mut p, &ImprovedJacobiOptions::default());
    assert!(p.lambda.iter().any(|l| !l.is_finite() || l.abs() > 1e100));

    let exact = bgs_solution(&w, &dfree, bilateral(6));
    let mut p = problem(&w, &dfree, bilateral(6), 1e-14, 100_000);
    let (out, report) = safeguarded_jacobi(&mut p);
    assert!(out.converged, "error {}", p.current_error);
    assert!(max_diff(&p.lambda, &exact) < 1e-8, "{:?} vs {exact:?}", p.lambda);
    // Exact answer of W λ = −dfree: λ_i = (−dfree_i − 0.9 Σλ)/0.1 with Σλ = −Σdfree / (0.1 + 5.4).
    let sum = 1.05 / 5.5;
    for i in 0..6 {
        assert!((p.lambda[i] - (-dfree[i] - 0.9 * sum) / 0.1).abs() < 1e-8);
    }
    assert_eq!(report.halvings, 0);
    // λ_max(D⁻¹W) = 5.5, so ω ≈ 1/5.5.
    assert!((report.omega * 5.5 - 1.0).abs() < 1e-3, "ω = {}", report.omega);
}

#[test]
fn unilateral_coupled_rows_sofa_oscillates_safeguarded_reaches_gauss_seidel() {
    let w = coupled6();
    // Mixed signs: some rows end inactive.
    let dfree = [-0.3, -0.1, 0.05, -0.25, -0.02, 0.1];
    let mut p = problem(&w, &dfree, unilateral(6), 1e-14, 3000);
    let (out, failed) = sofa_iteration(&mut p, &ImprovedJacobiOptions::default(), true);
    assert!(failed && !out.converged, "SOFA's projected Jacobi oscillates here (error {:?})", &p.error_history[..4]);

    let exact = bgs_solution(&w, &dfree, unilateral(6));
    let mut p = problem(&w, &dfree, unilateral(6), 1e-14, 100_000);
    let (out, _) = safeguarded_jacobi(&mut p);
    assert!(out.converged);
    assert!(max_diff(&p.lambda, &exact) < 1e-8, "{:?} vs {exact:?}", p.lambda);
    // Complementarity of the result.
    for i in 0..6 {
        assert!(p.lambda[i] >= 0.0 && p.d[i] > -1e-10 && (p.lambda[i] * p.d[i]).abs() < 1e-10, "row {i}: λ {} d {}", p.lambda[i], p.d[i]);
    }
}

#[test]
fn frictional_contacts_on_one_body_reach_gauss_seidel() {
    let pts = eight_points();
    let w = rigid_contacts(&pts, 0.05);
    let dfree = landing_dfree(&pts);
    let m = pts.len();
    let mut p = problem(&w, &dfree, friction(m, 0.5), 1e-14, 3000);
    let (out, failed) = sofa_iteration(&mut p, &ImprovedJacobiOptions::default(), true);
    assert!(failed && !out.converged);

    let exact = bgs_solution(&w, &dfree, friction(m, 0.5));
    let mut p = problem(&w, &dfree, friction(m, 0.5), 1e-14, 100_000);
    let (out, report) = safeguarded_jacobi(&mut p);
    assert!(out.converged, "error {}", p.current_error);
    assert!(max_diff(&p.lambda, &exact) < 1e-8, "max |Δλ| = {:e}", max_diff(&p.lambda, &exact));
    // Coulomb's cone holds and some contact slides on its boundary (dfree pushes along x).
    let mut sliding = 0;
    for c in 0..m {
        let (ln, lt) = (p.lambda[3 * c], p.lambda[3 * c + 1].hypot(p.lambda[3 * c + 2]));
        assert!(ln >= 0.0 && lt <= 0.5 * ln * (1.0 + 1e-12));
        if ln > 0.0 && lt > 0.5 * ln * (1.0 - 1e-9) {
            sliding += 1;
        }
    }
    assert!(sliding > 0);
    assert!(p.current_iterations < 3000, "{} iterations", p.current_iterations);
    assert!(report.estimate.is_some());
}

#[test]
fn a_too_low_estimate_is_caught_by_the_descent_check_and_halved() {
    let pts = eight_points();
    let w = rigid_contacts(&pts, 0.05);
    let dfree = landing_dfree(&pts);
    let est = scaled_spectral_estimate(&w, 100, 1e-12);
    let exact = bgs_solution(&w, &dfree, friction(8, 0.5));
    let mut p = problem(&w, &dfree, friction(8, 0.5), 1e-14, 100_000);
    let (out, report) = safeguarded_jacobi_with(&mut p, Some(est.rayleigh / 20.0));
    assert!(out.converged);
    // A step 20× too long is halved until the steps actually taken pass the descent check:
    // at least 3 times (to 2.5× the safe step), and the step ends below the 2/λ_max beyond
    // which plain projected Jacobi diverges.
    assert!(report.halvings >= 3, "{report:?}");
    assert!(report.omega * est.rayleigh <= 2.0, "{report:?}, λ_max {}", est.rayleigh);
    assert!(max_diff(&p.lambda, &exact) < 1e-8);
}

#[test]
fn power_iteration_brackets_the_spectral_radius() {
    let cases = [coupled6(), rigid_contacts(&eight_points(), 0.05), positive_wishart(60, 20, 0.05, 7), positive_wishart(200, 40, 0.02, 11)];
    for w in cases {
        let n = w.n;
        // The true spectral radius of S W S, from a dense symmetric eigen-decomposition.
        let mut m = DenseMatrix::zeros(n);
        for i in 0..n {
            for j in 0..n {
                m.data[i * n + j] = w.get(i, j) / (w.get(i, i).sqrt() * w.get(j, j).sqrt());
            }
        }
        let rho = symmetric_eigenvalues(&m).into_iter().map(f64::abs).fold(0.0, f64::max);
        let est = scaled_spectral_estimate(&w, 40, 1e-3);
        let slack = 1e-12 * rho;
        // The documented bracket: θ ≤ ρ ≤ θ + r, and ρ ≤ Gershgorin.
        assert!(est.rayleigh <= rho + slack, "n={n}: θ {} > ρ {rho}", est.rayleigh);
        assert!(rho <= est.rayleigh + est.residual + slack, "n={n}: ρ {rho} > θ + r = {}", est.rayleigh + est.residual);
        assert!(rho <= est.gershgorin + slack);
        assert!(rho <= est.upper() + slack);
        // And the step is not needlessly short: the estimate is within 1 % of ρ.
        assert!(est.upper() <= 1.01 * rho, "n={n}: upper {} vs ρ {rho} ({est:?})", est.upper());
        assert!(est.iterations <= 40);
    }
    // coupled6: D⁻¹W has eigenvalues 0.1 and 5.5.
    let est = scaled_spectral_estimate(&coupled6(), 40, 1e-10);
    assert!((est.rayleigh - 5.5).abs() < 1e-9, "{est:?}");
}

#[test]
fn safeguarded_iteration_gives_the_same_bits_for_any_thread_count() {
    // 120 contacts = 360 rows, well above the parallel threshold.
    let contacts = 120;
    let n = 3 * contacts;
    assert!(n >= 3 * PAR_MIN_ROWS);
    let w = positive_wishart(n, 30, 0.05, 3);
    let mut s = 5u64;
    let dfree: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { -0.02 + 0.015 * lcg(&mut s) } else { 0.004 * (lcg(&mut s) - 0.5) }).collect();
    let solve = || {
        let mut p = problem(&w, &dfree, friction(contacts, 0.4), 1e-12, 400);
        let (out, report) = safeguarded_jacobi(&mut p);
        (p.lambda, p.d, p.error_history, p.current_iterations, out, report)
    };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(solve);
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(solve);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&one.0), bits(&two.0));
    assert_eq!(bits(&one.1), bits(&two.1));
    assert_eq!(bits(&one.2), bits(&two.2));
    assert_eq!((one.3, one.4), (two.3, two.4));
    assert_eq!(format!("{:?}", one.5), format!("{:?}", two.5));
    // The solve did real work: it moved λ and ran more than a handful of iterations.
    assert!(one.0.iter().any(|&l| l > 0.0) && one.3 > 10);
}

/// The solver component's logic: SOFA's iterate (bit for bit) while it works; the safeguarded
/// one, with a single warning, from the first failure on, or from the start with `safeguard`.
#[test]
fn solver_leaves_sofas_iterate_only_when_it_fails_and_warns_once() {
    let converging = || {
        // Diagonally dominant: plain Jacobi converges.
        let mut w = DenseMatrix::zeros(3);
        w.data = vec![4.0, 0.5, 0.2, 0.5, 3.0, 0.4, 0.2, 0.4, 5.0];
        problem(&w, &[-0.3, 0.2, -0.5], unilateral(3), 1e-12, 1000)
    };
    let diverging = || problem(&coupled6(), &[-0.1, -0.2, -0.3, -0.15, -0.25, -0.05], bilateral(6), 1e-12, 3000);

    let mut solver = ImprovedJacobi::default();
    let mut p = converging();
    let out = solver.solve(&mut p, &UnbuiltProblem::default(), &mut NoUnbuilt).unwrap();
    let mut q = converging();
    let reference = improved_jacobi(&mut q, &ImprovedJacobiOptions::default());
    assert_eq!(out, reference);
    assert_eq!(p.lambda, q.lambda);
    assert_eq!(p.error_history, q.error_history);
    assert!(solver.last_safeguard.is_none() && solver.take_warning().is_none());

    let mut p = diverging();
    let out = solver.solve(&mut p, &UnbuiltProblem::default(), &mut NoUnbuilt).unwrap();
    assert!(out.converged && solver.last_safeguard.is_some() && solver.sofa_diverged);
    let warning = solver.take_warning().expect("a warning when leaving SOFA's iterate");
    assert!(warning.contains("diverges (its error grew") && warning.contains("6-row"), "{warning}");
    // Later solves stay safeguarded, without a new warning.
    let mut p = converging();
    solver.solve(&mut p, &UnbuiltProblem::default(), &mut NoUnbuilt).unwrap();
    assert!(solver.last_safeguard.is_some() && solver.take_warning().is_none());

    // An oscillating (bounded) SOFA iterate is left too, with its own explanation.
    let mut oscillating = ImprovedJacobi::default();
    let mut p = problem(&coupled6(), &[-0.3, -0.1, 0.05, -0.25, -0.02, 0.1], unilateral(6), 1e-12, 3000);
    assert!(oscillating.solve(&mut p, &UnbuiltProblem::default(), &mut NoUnbuilt).unwrap().converged);
    assert!(oscillating.take_warning().unwrap().contains("does not settle"));

    let mut forced = ImprovedJacobi::with_options(ImprovedJacobiOptions { safeguard: true, ..Default::default() });
    let mut p = converging();
    assert!(forced.solve(&mut p, &UnbuiltProblem::default(), &mut NoUnbuilt).unwrap().converged);
    assert!(forced.last_safeguard.is_some());
    assert!(forced.take_warning().unwrap().contains("safeguard"));
    let mut p = converging();
    forced.solve(&mut p, &UnbuiltProblem::default(), &mut NoUnbuilt).unwrap();
    assert!(forced.take_warning().is_none());
    // Both iterations have the same fixed point.
    assert!(max_diff(&p.lambda, &q.lambda) < 1e-9);
}
