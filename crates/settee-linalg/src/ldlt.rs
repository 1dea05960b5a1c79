//! Up-looking simplicial sparse LDLᵀ factorization, the algorithm of SOFA's
//! `SparseLDLSolver` (Tim Davis' LDL / CSparse style).
//!
//! * Input: a square CSR matrix, read as in SOFA: "column" `k` of the
//!   permuted matrix is CSR row `perm[k]`, and only the entries whose permuted
//!   column index is `<= k` are used (the lower triangle of `P A Pᵀ` read by
//!   rows, i.e. its upper triangle read by columns — the same thing for a
//!   symmetric matrix).
//! * Symbolic phase: elimination tree (`parent`) and column counts of `L`.
//! * Numeric phase: for each `k`, the pattern of row `k` of `L` is found by
//!   walking the elimination tree from every entry (a "reach"), then a sparse
//!   triangular solve computes that row; `D(k,k)` is accumulated alongside.
//!   `D` is then stored inverted.
//! * Solve: `b' = P b`, forward substitution with unit `L` (stored by rows),
//!   multiplication by `D⁻¹`, backward substitution with `Lᵀ` (`L` by
//!   columns), `x = Pᵀ x'`.

use crate::csr::CsrMatrix;
use crate::error::{LinalgError, Result};

const NONE: usize = usize::MAX;

/// Symbolic part: permutation, elimination tree, column pointers of `L`.
#[derive(Debug, Clone)]
pub(crate) struct LdlSymbolic {
    n: usize,
    /// `perm[k]` = original index of permuted index `k`.
    perm: Vec<usize>,
    /// `invperm[perm[k]] = k`.
    invperm: Vec<usize>,
    parent: Vec<usize>,
    /// Column pointers of `L` (strictly lower part, CSC), length `n + 1`.
    l_colptr: Vec<usize>,
}

/// Numeric factors.
#[derive(Debug, Clone)]
pub(crate) struct LdlNumeric {
    /// Row indices / values of `L` by columns (rows increasing inside a column).
    l_rowind: Vec<usize>,
    l_values: Vec<f64>,
    /// `L` by rows (columns increasing inside a row).
    lt_rowptr: Vec<usize>,
    lt_colind: Vec<usize>,
    lt_values: Vec<f64>,
    /// `1 / D(k,k)`.
    inv_d: Vec<f64>,
}

impl LdlSymbolic {
    /// Symbolic analysis of `a` (square, validated by the caller) with the
    /// permutation `perm` (`perm[k]` = original index placed at `k`).
    pub(crate) fn new(a: &CsrMatrix, perm: Vec<usize>) -> Result<Self> {
        let n = a.nrows();
        if perm.len() != n {
            return Err(LinalgError::DimensionMismatch {
                what: "permutation",
                expected: n,
                found: perm.len(),
            });
        }
        let mut invperm = vec![NONE; n];
        for (k, &p) in perm.iter().enumerate() {
            if p >= n || invperm[p] != NONE {
                return Err(LinalgError::InvalidStructure(
                    "ordering is not a permutation".into(),
                ));
            }
            invperm[p] = k;
        }
        let mut parent = vec![NONE; n];
        let mut flag = vec![NONE; n];
        let mut count = vec![0usize; n];
        let row_ptr = a.row_ptr();
        let col_idx = a.col_idx();
        for k in 0..n {
            flag[k] = k;
            let kk = perm[k];
            for &c in &col_idx[row_ptr[kk]..row_ptr[kk + 1]] {
                let mut i = invperm[c];
                if i >= k {
                    continue;
                }
                // Walk up the (partial) elimination tree until a node already
                // visited for this k; every node met gets L(k, i) != 0.
                while flag[i] != k {
                    if parent[i] == NONE {
                        parent[i] = k;
                    }
                    count[i] += 1;
                    flag[i] = k;
                    i = parent[i];
                }
            }
        }
        let mut l_colptr = Vec::with_capacity(n + 1);
        l_colptr.push(0usize);
        let mut acc = 0usize;
        for &c in &count {
            acc += c;
            l_colptr.push(acc);
        }
        Ok(Self {
            n,
            perm,
            invperm,
            parent,
            l_colptr,
        })
    }

    /// Number of stored (strictly lower) entries of `L`.
    pub(crate) fn l_nnz(&self) -> usize {
        self.l_colptr[self.n]
    }

    pub(crate) fn perm(&self) -> &[usize] {
        &self.perm
    }

    /// Numeric factorization of `a`, which must have the pattern analysed by
    /// [`Self::new`].
    pub(crate) fn factorize(&self, a: &CsrMatrix) -> Result<LdlNumeric> {
        let n = self.n;
        let lnz_total = self.l_nnz();
        let mut l_rowind = vec![0usize; lnz_total];
        let mut l_values = vec![0.0f64; lnz_total];
        let mut d = vec![0.0f64; n];
        let mut y = vec![0.0f64; n];
        let mut flag = vec![NONE; n];
        let mut fill = vec![0usize; n]; // entries already written in each column of L
        let mut pattern = vec![0usize; n];
        let row_ptr = a.row_ptr();
        let col_idx = a.col_idx();
        let vals = a.values();
        for k in 0..n {
            flag[k] = k;
            let mut top = n;
            let kk = self.perm[k];
            for p in row_ptr[kk]..row_ptr[kk + 1] {
                let mut i = self.invperm[col_idx[p]];
                if i > k {
                    continue;
                }
                y[i] += vals[p];
                // Collect the path from i up to the first visited node, then
                // push it (reversed) on the pattern stack: the stack ends up in
                // a topological order of the row pattern.
                let mut len = 0usize;
                while i != NONE && flag[i] != k {
                    pattern[len] = i;
                    len += 1;
                    flag[i] = k;
                    i = self.parent[i];
                }
                while len > 0 {
                    top -= 1;
                    len -= 1;
                    pattern[top] = pattern[len];
                }
            }
            let mut dk = y[k];
            y[k] = 0.0;
            for &i in &pattern[top..n] {
                let yi = y[i];
                y[i] = 0.0;
                let start = self.l_colptr[i];
                let end = start + fill[i];
                for q in start..end {
                    y[l_rowind[q]] -= l_values[q] * yi;
                }
                let l_ki = yi / d[i];
                dk -= l_ki * yi;
                if end >= self.l_colptr[i + 1] {
                    // Only possible if the pattern differs from the analysed one.
                    return Err(LinalgError::InvalidStructure(
                        "matrix pattern differs from the symbolic analysis".into(),
                    ));
                }
                l_rowind[end] = k;
                l_values[end] = l_ki;
                fill[i] += 1;
            }
            if dk == 0.0 || !dk.is_finite() {
                return Err(LinalgError::ZeroPivot { index: k });
            }
            d[k] = dk;
        }
        // D is stored inverted.
        let inv_d: Vec<f64> = d.iter().map(|&x| 1.0 / x).collect();

        // L by rows (transpose of the column storage).
        let mut lt_rowptr = vec![0usize; n + 1];
        for &r in &l_rowind {
            lt_rowptr[r + 1] += 1;
        }
        for i in 0..n {
            lt_rowptr[i + 1] += lt_rowptr[i];
        }
        let mut next = lt_rowptr.clone();
        let mut lt_colind = vec![0usize; lnz_total];
        let mut lt_values = vec![0.0f64; lnz_total];
        for j in 0..n {
            for q in self.l_colptr[j]..self.l_colptr[j + 1] {
                let r = l_rowind[q];
                let dst = next[r];
                next[r] += 1;
                lt_colind[dst] = j;
                lt_values[dst] = l_values[q];
            }
        }
        Ok(LdlNumeric {
            l_rowind,
            l_values,
            lt_rowptr,
            lt_colind,
            lt_values,
            inv_d,
        })
    }

    /// Solves `A x = b` in place (`rhs.len() == n`, checked by the caller).
    pub(crate) fn solve_in_place(&self, num: &LdlNumeric, rhs: &mut [f64], tmp: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            tmp[i] = rhs[self.perm[i]];
        }
        // L y = b' (unit lower, by rows).
        for i in 0..n {
            let mut xi = tmp[i];
            for q in num.lt_rowptr[i]..num.lt_rowptr[i + 1] {
                xi -= num.lt_values[q] * tmp[num.lt_colind[q]];
            }
            tmp[i] = xi;
        }
        // z = D⁻¹ y.
        for (t, &id) in tmp.iter_mut().zip(&num.inv_d) {
            *t *= id;
        }
        // Lᵀ x' = z (unit upper, Lᵀ by rows = L by columns).
        for i in (0..n).rev() {
            let mut xi = tmp[i];
            for q in self.l_colptr[i]..self.l_colptr[i + 1] {
                xi -= num.l_values[q] * tmp[num.l_rowind[q]];
            }
            tmp[i] = xi;
        }
        for i in 0..n {
            rhs[self.perm[i]] = tmp[i];
        }
    }
}
