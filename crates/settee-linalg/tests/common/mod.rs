//! Shared helpers for the integration tests.
#![allow(dead_code, clippy::needless_range_loop)]

use settee_linalg::{CsrMatrix, MatrixBuilder};

/// Small deterministic generator (SplitMix64).
pub use settee_testkit::SplitMix as Rng;

/// Uniform reals from a [`Rng`].
pub trait Uniform {
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64;
    /// Uniform in [lo, hi).
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

impl Uniform for Rng {
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
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

/// The hexahedra of a grid of `nx × ny × nz` nodes (node `(x, y, z)` is
/// `(z·ny + y)·nx + x`), in SOFA's corner order, x fastest.
pub fn hex_grid_elements(nx: usize, ny: usize, nz: usize) -> Vec<[usize; 8]> {
    let id = |x: usize, y: usize, z: usize| (z * ny + y) * nx + x;
    let mut elements = Vec::new();
    for z in 0..nz - 1 {
        for y in 0..ny - 1 {
            for x in 0..nx - 1 {
                elements.push([
                    id(x, y, z),
                    id(x + 1, y, z),
                    id(x + 1, y + 1, z),
                    id(x, y + 1, z),
                    id(x, y, z + 1),
                    id(x + 1, y, z + 1),
                    id(x + 1, y + 1, z + 1),
                    id(x, y + 1, z + 1),
                ]);
            }
        }
    }
    elements
}

/// The 3 DOFs of every node of the `z = 0` end of that grid.
pub fn hex_grid_fixed(nx: usize, ny: usize) -> Vec<usize> {
    (0..nx * ny).flat_map(|k| [3 * k, 3 * k + 1, 3 * k + 2]).collect()
}

/// The global matrix of FEM-like hexahedra with 3 DOFs a node, the structure of SOFA's FEM
/// systems: per element `e`, the 8×8 node blocks of `(8 I - 1 1ᵀ) ⊗ S_e` (`S_e` a fixed SPD
/// 3×3 matrix times `scale·(1 + 0.1·(e mod 7))`) through `add_block3`, row-major over the
/// element's node pairs, then `diag` on the diagonal of the `n` DOFs, `finish`, and
/// `apply_dirichlet` on `fixed`.
pub fn assemble_hex_grid(b: &mut MatrixBuilder, elements: &[[usize; 8]], n: usize, scale: f64, diag: f64, fixed: &[usize]) {
    for (e, nodes) in elements.iter().enumerate() {
        let t = scale * (1.0 + 0.1 * ((e % 7) as f64));
        let se = [[2.0 * t, 0.3 * t, 0.1 * t], [0.3 * t, 2.5 * t, 0.2 * t], [0.1 * t, 0.2 * t, 3.0 * t]];
        for (a, &na) in nodes.iter().enumerate() {
            for (c, &nc) in nodes.iter().enumerate() {
                let w = if a == c { 7.0 } else { -1.0 };
                b.add_block3(3 * na, 3 * nc, &se.map(|r| r.map(|v| w * v))).unwrap();
            }
        }
    }
    for i in 0..n {
        b.add(i, i, diag).unwrap();
    }
    b.finish();
    b.apply_dirichlet(fixed).unwrap();
}
