//! The largest eigenvalue modulus of a compliance matrix W (of its symmetric part), for
//! ImprovedJacobi's spectral correction.
//!
//! SOFA decomposes the whole of W (O(n³)) at every solve only to take its largest |μ|. At the
//! thousands of rows of a contact scene that costs seconds per step (16 s at 2,685 rows), more
//! than the Jacobi iterations themselves. Lanczos with full reorthogonalisation finds the two
//! ends of the spectrum to rounding in a few dozen products W·v (O(n²) each); below
//! [`DENSE_BELOW`] rows, or if Lanczos has not converged within [`MAX_LANCZOS_STEPS`], the full
//! decomposition is used as before.
//!
//! Every product is [`mat_vec`] (fixed summation order, rows in parallel) and every reduction is
//! sequential, so the value does not depend on the thread count.

use settee_core::constraint::DenseMatrix;

use super::improved_jacobi::{mat_vec, symmetric_eigenvalues};

/// Below this many rows the dense decomposition is cheap enough and is used directly.
pub const DENSE_BELOW: usize = 160;

/// Lanczos steps tried before falling back to the dense decomposition.
pub const MAX_LANCZOS_STEPS: usize = 400;

/// Lanczos steps after which a lowest Ritz value above `−θ_max/2` is taken as proof that no
/// eigenvalue reaches `−θ_max` (see [`lanczos_extremes`]).
pub const MIN_STEPS_FOR_LOWER_BOUND: usize = 24;

/// Relative bound on the Ritz residuals of both extreme Ritz values at which Lanczos stops.
/// An eigenvalue's error is at most its residual (and in practice its square over the gap),
/// so this is far below the rounding differences between eigen-solvers.
pub const LANCZOS_TOLERANCE: f64 = 1e-13;

/// `max_i |μ_i|` over the eigenvalues of `(W + Wᵀ)/2`.
pub fn largest_eigenvalue_modulus(w: &DenseMatrix) -> f64 {
    let n = w.n;
    if n == 0 {
        return 0.0;
    }
    if n < DENSE_BELOW {
        return dense_modulus(w);
    }
    let symmetric;
    let a = if is_symmetric(w) {
        w
    } else {
        let mut s = DenseMatrix::zeros(n);
        for i in 0..n {
            for j in 0..n {
                s.data[i * n + j] = 0.5 * (w.data[i * n + j] + w.data[j * n + i]);
            }
        }
        symmetric = s;
        &symmetric
    };
    lanczos_extremes(a).map(|(lo, hi)| lo.abs().max(hi.abs())).unwrap_or_else(|| dense_modulus(w))
}

fn dense_modulus(w: &DenseMatrix) -> f64 {
    symmetric_eigenvalues(w).into_iter().map(f64::abs).fold(0.0, f64::max)
}

fn is_symmetric(w: &DenseMatrix) -> bool {
    let n = w.n;
    (0..n).all(|i| (i + 1..n).all(|j| w.data[i * n + j] == w.data[j * n + i]))
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The smallest and largest eigenvalues of the symmetric matrix `a`, from Lanczos with full
/// reorthogonalisation; the smallest only as the lowest Ritz value when it is shown not to
/// matter for the largest modulus (`> −largest/2`); `None` when it has not converged (or has broken down on a start vector
/// orthogonal to an end of the spectrum, which the caller then gets from the dense solver).
pub fn lanczos_extremes(a: &DenseMatrix) -> Option<(f64, f64)> {
    let n = a.n;
    let steps = MAX_LANCZOS_STEPS.min(n);
    // Deterministic start: all positive (a contact problem's top mode pushes every contact the
    // same way) with an irregular part so it is not orthogonal to a hand-made matrix's ends.
    let mut v: Vec<f64> = (0..n).map(|i| 1.0 + 0.5 * (i as f64 * 0.618_033_988_749_895).fract()).collect();
    let nv = dot(&v, &v).sqrt();
    v.iter_mut().for_each(|x| *x /= nv);
    let mut basis: Vec<Vec<f64>> = vec![v];
    let mut alpha: Vec<f64> = Vec::new();
    let mut beta: Vec<f64> = Vec::new();
    let mut u = vec![0.0; n];
    for k in 0..steps {
        mat_vec(a, &basis[k], &mut u);
        let ak = dot(&u, &basis[k]);
        alpha.push(ak);
        // Full reorthogonalisation, twice (classical Gram-Schmidt is then as good as modified).
        for _ in 0..2 {
            for q in &basis {
                let c = dot(&u, q);
                u.iter_mut().zip(q).for_each(|(x, y)| *x -= c * y);
            }
        }
        let bk = dot(&u, &u).sqrt();
        let m = alpha.len();
        // Check the two extreme Ritz values every few steps (an m×m tridiagonal problem).
        if m >= 8 && (m.is_multiple_of(4) || bk == 0.0 || k + 1 == steps) {
            let mut t = nalgebra::DMatrix::<f64>::zeros(m, m);
            for i in 0..m {
                t[(i, i)] = alpha[i];
                if i + 1 < m {
                    t[(i, i + 1)] = beta[i];
                    t[(i + 1, i)] = beta[i];
                }
            }
            let eig = nalgebra::SymmetricEigen::new(t);
            let (mut lo, mut hi) = (0, 0);
            for i in 0..m {
                if eig.eigenvalues[i] < eig.eigenvalues[lo] {
                    lo = i;
                }
                if eig.eigenvalues[i] > eig.eigenvalues[hi] {
                    hi = i;
                }
            }
            let scale = eig.eigenvalues[lo].abs().max(eig.eigenvalues[hi].abs());
            let residual = |i: usize| (bk * eig.eigenvectors[(m - 1, i)]).abs();
            let (theta_lo, theta_hi) = (eig.eigenvalues[lo], eig.eigenvalues[hi]);
            let converged = |i: usize| residual(i) <= LANCZOS_TOLERANCE * scale;
            if scale > 0.0 && converged(lo) && converged(hi) {
                return Some((theta_lo, theta_hi));
            }
            // A compliance is positive semi-definite up to rounding: its lower end is a cluster
            // near zero that Lanczos resolves slowly, and is not needed for the largest
            // modulus. Once the top has converged and the lowest Ritz value (an upper bound of
            // λ_min) is still far above −θ_hi after MIN_STEPS_FOR_LOWER_BOUND steps, a
            // negative eigenvalue of modulus ≥ θ_hi would have shown: such an end is separated
            // from the rest of the spectrum by at least half its width, and its component grows
            // like the Chebyshev polynomial T_m(2) ≈ 3.7^m relative to the others.
            if theta_hi > 0.0 && converged(hi) && m >= MIN_STEPS_FOR_LOWER_BOUND && theta_lo > -0.5 * theta_hi {
                return Some((theta_lo, theta_hi));
            }
        }
        if bk == 0.0 || !bk.is_finite() {
            // An invariant subspace that failed the residual test above, or NaN in W.
            return None;
        }
        beta.push(bk);
        basis.push(u.iter().map(|x| x / bk).collect());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric positive semi-definite matrix `B Bᵀ` with a chosen spread, as a contact
    /// compliance (rank-deficient when `cols < n`).
    fn gram(n: usize, cols: usize, seed: u64) -> DenseMatrix {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let b: Vec<f64> = (0..n * cols).map(|_| next()).collect();
        crate::testing::gram(&b, n, cols, |_, _, acc| acc)
    }

    #[test]
    fn lanczos_matches_the_dense_decomposition() {
        for (n, cols, seed) in [(200, 200, 1), (300, 120, 2), (240, 400, 3)] {
            let w = gram(n, cols, seed);
            let dense = dense_modulus(&w);
            let (lo, hi) = lanczos_extremes(&w).expect("Lanczos converges on a Gram matrix");
            assert!(lo >= -1e-12 * hi, "n {n}: a PSD matrix's lowest eigenvalue {lo}");
            let fast = largest_eigenvalue_modulus(&w);
            assert!((fast - dense).abs() <= 1e-12 * dense, "n {n}: lanczos {fast} dense {dense}");
        }
    }

    #[test]
    fn negative_end_of_the_spectrum_counts() {
        // −(B Bᵀ) + small shift: the largest modulus is at the negative end.
        let mut w = gram(200, 150, 4);
        w.data.iter_mut().for_each(|x| *x = -*x);
        for i in 0..200 {
            w.data[i * 200 + i] += 0.01;
        }
        let dense = dense_modulus(&w);
        let (lo, _) = lanczos_extremes(&w).expect("Lanczos converges");
        assert!((lo.abs() - dense).abs() <= 1e-12 * dense, "lanczos {lo} dense {dense}");
        let fast = largest_eigenvalue_modulus(&w);
        assert!((fast - dense).abs() <= 1e-12 * dense, "lanczos {fast} dense {dense}");
    }

    #[test]
    fn a_negative_end_slightly_larger_than_the_top_is_found() {
        // B Bᵀ − c·u uᵀ with c chosen so that λ_min ≈ −1.05·λ_max of B Bᵀ.
        let n = 220;
        let mut w = gram(n, 180, 7);
        let top = dense_modulus(&w);
        let u: Vec<f64> = (0..n).map(|i| ((i * 7919) % 13) as f64 - 6.0).collect();
        let uu: f64 = u.iter().map(|x| x * x).sum();
        let c = 2.05 * top / uu;
        for i in 0..n {
            for j in 0..n {
                w.data[i * n + j] -= c * u[i] * u[j];
            }
        }
        let dense = dense_modulus(&w);
        let fast = largest_eigenvalue_modulus(&w);
        assert!(dense > top, "the negative end dominates: {dense} vs {top}");
        assert!((fast - dense).abs() <= 1e-12 * dense, "lanczos {fast} dense {dense}");
    }

    #[test]
    fn unsymmetric_input_uses_its_symmetric_part() {
        let mut w = gram(180, 180, 5);
        w.data[3 * 180 + 7] += 0.25;
        let dense = dense_modulus(&w);
        let fast = largest_eigenvalue_modulus(&w);
        assert!((fast - dense).abs() <= 1e-12 * dense, "lanczos {fast} dense {dense}");
    }

    #[test]
    fn same_value_for_any_thread_count() {
        let w = gram(400, 300, 6);
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| largest_eigenvalue_modulus(&w));
        let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap().install(|| largest_eigenvalue_modulus(&w));
        assert_eq!(one.to_bits(), three.to_bits());
    }
}
