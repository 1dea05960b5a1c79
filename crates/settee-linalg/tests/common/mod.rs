//! Shared helpers for the integration tests.
#![allow(dead_code, clippy::needless_range_loop)]

use settee_linalg::{CsrMatrix, MatrixBuilder};

/// Small deterministic generator (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// 1D Laplacian `tridiag(-1, 2, -1)` of size n (SPD).
pub fn laplacian_1d(n: usize) -> CsrMatrix {
    let mut b = MatrixBuilder::new(n);
    for i in 0..n {
        if i > 0 {
            b.add(i, i - 1, -1.0).unwrap();
        }
        b.add(i, i, 2.0).unwrap();
        if i + 1 < n {
            b.add(i, i + 1, -1.0).unwrap();
        }
    }
    b.into_matrix()
}

/// Random sparse symmetric positive definite matrix: symmetric random
/// off-diagonal pattern (about `per_row` entries per row) with values in
/// [-1, 1], diagonal = sum of |off-diagonal| of the row + `shift` (strictly
/// diagonally dominant, hence SPD).
pub fn random_spd(n: usize, per_row: usize, shift: f64, seed: u64) -> CsrMatrix {
    let mut rng = Rng(seed);
    let mut b = MatrixBuilder::new(n);
    let mut rowsum = vec![0.0f64; n];
    if n > 1 {
        for i in 0..n {
            for _ in 0..per_row {
                let j = rng.below(n);
                if j == i {
                    continue;
                }
                let v = rng.range(-1.0, 1.0);
                b.add(i, j, v).unwrap();
                b.add(j, i, v).unwrap();
                rowsum[i] += v.abs();
                rowsum[j] += v.abs();
            }
        }
    }
    for (i, s) in rowsum.iter().enumerate() {
        b.add(i, i, s + shift).unwrap();
    }
    b.into_matrix()
}

/// Random vector in [-1, 1)^n.
pub fn random_vec(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    (0..n).map(|_| rng.range(-1.0, 1.0)).collect()
}

/// Dense Gaussian elimination with partial pivoting on a row-major matrix.
pub fn dense_solve(n: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut m = a.to_vec();
    let mut x = b.to_vec();
    for k in 0..n {
        let mut piv = k;
        for i in k + 1..n {
            if m[i * n + k].abs() > m[piv * n + k].abs() {
                piv = i;
            }
        }
        assert!(m[piv * n + k] != 0.0, "singular matrix in dense_solve");
        if piv != k {
            for j in 0..n {
                m.swap(k * n + j, piv * n + j);
            }
            x.swap(k, piv);
        }
        for i in k + 1..n {
            let f = m[i * n + k] / m[k * n + k];
            if f != 0.0 {
                for j in k..n {
                    m[i * n + j] -= f * m[k * n + j];
                }
                x[i] -= f * x[k];
            }
        }
    }
    for k in (0..n).rev() {
        let mut s = x[k];
        for j in k + 1..n {
            s -= m[k * n + j] * x[j];
        }
        x[k] = s / m[k * n + k];
    }
    x
}

/// max_i |a_i - b_i| / max(1, max_i |b_i|)
pub fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
}
