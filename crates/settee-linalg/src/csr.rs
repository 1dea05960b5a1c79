//! Compressed sparse row (CSR / SOFA "CRS") matrices of `f64`.

use crate::error::{dense_len, LinalgError, Result};

/// A sparse matrix in compressed-row storage.
///
/// Invariants (checked by every constructor, relied upon by every method):
/// * `row_ptr.len() == nrows + 1`, `row_ptr[0] == 0`, non-decreasing,
///   `row_ptr[nrows] == col_idx.len() == values.len()`;
/// * inside each row the column indices are **strictly increasing** (sorted,
///   no duplicates) and `< ncols`.
///
/// Stored entries may hold the value `0.0` (explicit zeros are part of the
/// sparsity pattern; e.g. [`CsrMatrix::apply_dirichlet`] keeps them).
#[derive(Debug, Clone)]
pub struct CsrMatrix {
    nrows: usize,
    ncols: usize,
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
    values: Vec<f64>,
    /// Per row `i`: rows `i..i + 3` exist and store the same columns (a node's rows in a matrix
    /// of 3×3 blocks), for [`Self::mul_vec`]; computed at its first call, from the pattern only
    /// (a pattern change makes a new matrix or clears it).
    triples: std::sync::OnceLock<Vec<bool>>,
}

/// `(remap, old_row_ptr, old_col_idx)` after a pattern change: `remap[p]` is
/// the new position of the entry formerly stored at position `p`.
pub(crate) type PatternRemap = (Vec<usize>, Vec<usize>, Vec<usize>);

/// Iterator over the stored entries `(column, value)` of one row, in
/// increasing column order. Returned by [`CsrMatrix::row`].
#[derive(Debug, Clone)]
pub struct RowIter<'a> {
    cols: core::slice::Iter<'a, usize>,
    vals: core::slice::Iter<'a, f64>,
}

impl Iterator for RowIter<'_> {
    type Item = (usize, f64);
    #[inline]
    fn next(&mut self) -> Option<(usize, f64)> {
        Some((*self.cols.next()?, *self.vals.next()?))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.cols.size_hint()
    }
}

impl ExactSizeIterator for RowIter<'_> {}

/// Equal shape, pattern and values (the product's cache is not compared).
impl PartialEq for CsrMatrix {
    fn eq(&self, other: &Self) -> bool {
        self.nrows == other.nrows
            && self.ncols == other.ncols
            && self.row_ptr == other.row_ptr
            && self.col_idx == other.col_idx
            && self.values == other.values
    }
}

impl CsrMatrix {
    /// An `nrows x ncols` matrix without any stored entry.
    pub fn zeros(nrows: usize, ncols: usize) -> Self {
        Self { nrows, ncols, row_ptr: vec![0; nrows + 1], col_idx: Vec::new(), values: Vec::new(), triples: Default::default() }
    }

    /// The `n x n` identity (one stored entry per row).
    pub fn identity(n: usize) -> Self {
        Self { nrows: n, ncols: n, row_ptr: (0..=n).collect(), col_idx: (0..n).collect(), values: vec![1.0; n], triples: Default::default() }
    }

    /// Builds a matrix from raw CSR arrays, validating every invariant
    /// (see the type documentation).
    pub fn try_from_parts(nrows: usize, ncols: usize, row_ptr: Vec<usize>, col_idx: Vec<usize>, values: Vec<f64>) -> Result<Self> {
        if row_ptr.len() != nrows + 1 {
            return Err(LinalgError::DimensionMismatch { what: "row_ptr length (nrows + 1)", expected: nrows + 1, found: row_ptr.len() });
        }
        if col_idx.len() != values.len() {
            return Err(LinalgError::DimensionMismatch { what: "values length (= col_idx length)", expected: col_idx.len(), found: values.len() });
        }
        if row_ptr[0] != 0 {
            return Err(LinalgError::InvalidStructure("row_ptr[0] != 0".into()));
        }
        if row_ptr[nrows] != col_idx.len() {
            return Err(LinalgError::InvalidStructure(format!("row_ptr[nrows] = {} but {} column indices given", row_ptr[nrows], col_idx.len())));
        }
        for i in 0..nrows {
            let (b, e) = (row_ptr[i], row_ptr[i + 1]);
            if b > e {
                return Err(LinalgError::InvalidStructure(format!("row_ptr decreases at row {i}")));
            }
            let cols = &col_idx[b..e];
            for (p, &c) in cols.iter().enumerate() {
                if c >= ncols {
                    return Err(LinalgError::IndexOutOfBounds { row: i, col: c, nrows, ncols });
                }
                if p > 0 && cols[p - 1] >= c {
                    return Err(LinalgError::InvalidStructure(format!("columns of row {i} are not strictly increasing")));
                }
            }
        }
        Ok(Self { nrows, ncols, row_ptr, col_idx, values, triples: Default::default() })
    }

    /// Builds a matrix from `(row, col, value)` triplets; duplicates are summed
    /// in the order in which they appear (starting from `0.0`), exactly as
    /// [`crate::MatrixBuilder`] does.
    pub fn from_triplets(nrows: usize, ncols: usize, triplets: &[(usize, usize, f64)]) -> Result<Self> {
        let mut b = crate::MatrixBuilder::with_shape(nrows, ncols);
        for &(i, j, v) in triplets {
            b.add(i, j, v)?;
        }
        b.finish();
        Ok(b.into_matrix())
    }

    /// Builds a matrix from a dense row-major array, storing only the entries
    /// that are not exactly `0.0`.
    pub fn from_dense(nrows: usize, ncols: usize, dense: &[f64]) -> Result<Self> {
        dense_len(nrows, ncols, dense.len(), "dense matrix (nrows * ncols overflows)", "dense row-major data")?;
        let mut row_ptr = Vec::with_capacity(nrows + 1);
        let mut col_idx = Vec::new();
        let mut values = Vec::new();
        row_ptr.push(0);
        for i in 0..nrows {
            for j in 0..ncols {
                let v = dense[i * ncols + j];
                if v != 0.0 {
                    col_idx.push(j);
                    values.push(v);
                }
            }
            row_ptr.push(col_idx.len());
        }
        Ok(Self { nrows, ncols, row_ptr, col_idx, values, triples: Default::default() })
    }

    /// The matrix without its stored entries that are exactly `0.0` (the other entries in the
    /// same order; SOFA's `copyNonZeros` + `compress`).
    pub fn without_zeros(&self) -> CsrMatrix {
        let mut out = CsrMatrix::zeros(0, 0);
        self.without_zeros_into(&mut out);
        out
    }

    /// [`Self::without_zeros`] into `out`, whose buffers are reused (no allocation once they
    /// are large enough: a direct solver copies its system so at every step).
    pub fn without_zeros_into(&self, out: &mut CsrMatrix) {
        out.nrows = self.nrows;
        out.ncols = self.ncols;
        out.triples = Default::default();
        out.row_ptr.clear();
        out.col_idx.clear();
        out.values.clear();
        out.row_ptr.reserve(self.nrows + 1);
        out.col_idx.reserve(self.nnz());
        out.values.reserve(self.nnz());
        out.row_ptr.push(0);
        for i in 0..self.nrows {
            for (c, v) in self.row(i) {
                if v != 0.0 {
                    out.col_idx.push(c);
                    out.values.push(v);
                }
            }
            out.row_ptr.push(out.col_idx.len());
        }
    }

    /// Rebuilds the matrix in place, keeping its buffers: `build` gets the three arrays emptied
    /// and fills them, and the result is validated as by [`Self::try_from_parts`]. On error the
    /// matrix is left as `zeros(nrows, ncols)`.
    pub fn rebuild(&mut self, nrows: usize, ncols: usize, build: impl FnOnce(&mut Vec<usize>, &mut Vec<usize>, &mut Vec<f64>)) -> Result<()> {
        let mut row_ptr = std::mem::take(&mut self.row_ptr);
        let mut col_idx = std::mem::take(&mut self.col_idx);
        let mut values = std::mem::take(&mut self.values);
        row_ptr.clear();
        col_idx.clear();
        values.clear();
        build(&mut row_ptr, &mut col_idx, &mut values);
        match Self::try_from_parts(nrows, ncols, row_ptr, col_idx, values) {
            Ok(m) => {
                *self = m;
                Ok(())
            }
            Err(e) => {
                *self = Self::zeros(nrows, ncols);
                Err(e)
            }
        }
    }

    /// Consumes the matrix and returns `(nrows, ncols, row_ptr, col_idx, values)`.
    pub fn into_parts(self) -> (usize, usize, Vec<usize>, Vec<usize>, Vec<f64>) {
        (self.nrows, self.ncols, self.row_ptr, self.col_idx, self.values)
    }

    /// Number of rows.
    #[inline]
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    #[inline]
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// `true` when `nrows == ncols`.
    #[inline]
    pub fn is_square(&self) -> bool {
        self.nrows == self.ncols
    }

    /// Number of stored entries (including explicit zeros).
    #[inline]
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Row pointer array (`nrows + 1` entries).
    #[inline]
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }

    /// Column index array (`nnz` entries, sorted inside each row).
    #[inline]
    pub fn col_idx(&self) -> &[usize] {
        &self.col_idx
    }

    /// Stored values (`nnz` entries, aligned with [`Self::col_idx`]).
    #[inline]
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Mutable access to the stored values (the pattern cannot be changed this way).
    #[inline]
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }

    /// Sets every stored value to `0.0`, keeping the pattern.
    pub fn fill_zero(&mut self) {
        self.values.iter_mut().for_each(|v| *v = 0.0);
    }

    #[inline]
    fn row_range(&self, i: usize) -> core::ops::Range<usize> {
        if i < self.nrows {
            self.row_ptr[i]..self.row_ptr[i + 1]
        } else {
            0..0
        }
    }

    /// Iterator over the stored entries `(col, value)` of row `i`, in
    /// increasing column order (empty if `i >= nrows`).
    pub fn row(&self, i: usize) -> RowIter<'_> {
        let r = self.row_range(i);
        RowIter { cols: self.col_idx[r.clone()].iter(), vals: self.values[r].iter() }
    }

    /// Column indices of row `i` (empty if `i >= nrows`).
    pub fn row_cols(&self, i: usize) -> &[usize] {
        &self.col_idx[self.row_range(i)]
    }

    /// Values of row `i` (empty if `i >= nrows`).
    pub fn row_values(&self, i: usize) -> &[f64] {
        &self.values[self.row_range(i)]
    }

    /// Iterator over all stored entries `(row, col, value)`, row by row.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        (0..self.nrows).flat_map(move |i| self.row(i).map(move |(j, v)| (i, j, v)))
    }

    /// Position of entry `(i, j)` in [`Self::values`], if it is stored.
    pub fn find(&self, i: usize, j: usize) -> Option<usize> {
        let r = self.row_range(i);
        let start = r.start;
        self.col_idx[r].binary_search(&j).ok().map(|p| start + p)
    }

    /// Value of entry `(i, j)`; `0.0` if it is not stored or out of range.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.find(i, j).map_or(0.0, |p| self.values[p])
    }

    /// The diagonal `(A_00, A_11, ...)` of length `min(nrows, ncols)`
    /// (`0.0` where no diagonal entry is stored).
    pub fn diagonal(&self) -> Vec<f64> {
        (0..self.nrows.min(self.ncols)).map(|i| self.get(i, i)).collect()
    }

    /// The transpose, as a new CSR matrix (columns sorted in each row).
    pub fn transpose(&self) -> CsrMatrix {
        let mut count = vec![0usize; self.ncols + 1];
        for &c in &self.col_idx {
            count[c + 1] += 1;
        }
        for j in 0..self.ncols {
            count[j + 1] += count[j];
        }
        let row_ptr = count.clone();
        let mut next = count;
        let nnz = self.nnz();
        let mut col_idx = vec![0usize; nnz];
        let mut values = vec![0.0f64; nnz];
        for i in 0..self.nrows {
            for p in self.row_ptr[i]..self.row_ptr[i + 1] {
                let c = self.col_idx[p];
                let q = next[c];
                next[c] += 1;
                col_idx[q] = i;
                values[q] = self.values[p];
            }
        }
        CsrMatrix { nrows: self.ncols, ncols: self.nrows, row_ptr, col_idx, values, triples: Default::default() }
    }

    /// Dense copy, **row-major** (`out[i * ncols + j] = A_ij`). Meant for tests
    /// and small matrices.
    pub fn to_dense(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.nrows * self.ncols];
        for i in 0..self.nrows {
            for p in self.row_ptr[i]..self.row_ptr[i + 1] {
                out[i * self.ncols + self.col_idx[p]] = self.values[p];
            }
        }
        out
    }

    /// `y = A x`, SOFA's CRS product: row by row, each row accumulated in
    /// increasing column order into an `f64` accumulator that starts at `0.0`
    /// (`acc = 0; acc += a_ij * x_j; ...; y_i = acc`). `y` is overwritten.
    pub fn mul_vec(&self, x: &[f64], y: &mut [f64]) -> Result<()> {
        if x.len() != self.ncols {
            return Err(LinalgError::DimensionMismatch { what: "mul_vec input x", expected: self.ncols, found: x.len() });
        }
        if y.len() != self.nrows {
            return Err(LinalgError::DimensionMismatch { what: "mul_vec output y", expected: self.nrows, found: y.len() });
        }
        // Several rows are summed at once: independent accumulators instead of one chain of
        // dependent additions. Each row's sum keeps its own order, so the bits are those of the
        // row-by-row product. Three consecutive rows with the same columns (a node's rows in a
        // matrix of 3×3 blocks) share each column index and `x` load: two such triples, six sums,
        // at a time; other rows go four at a time.
        let nrows = self.nrows;
        let triples = self.triples.get_or_init(|| (0..nrows).map(|i| self.triple_shares_columns(i)).collect());
        let mut i = 0;
        while i < nrows {
            if triples[i] {
                if triples.get(i + 3) == Some(&true) {
                    let (ya, yb) = y[i..i + 6].split_at_mut(3);
                    self.mul_triples(i, i + 3, x, ya, yb);
                    i += 6;
                } else {
                    let mut acc = [0.0f64; 3];
                    let cols = &self.col_idx[self.row_range(i)];
                    self.triple_tail(i, 0, cols, x, &mut acc);
                    y[i..i + 3].copy_from_slice(&acc);
                    i += 3;
                }
            } else if i + 4 <= nrows {
                self.mul_four(i, x, &mut y[i..i + 4]);
                i += 4;
            } else {
                let mut acc = 0.0f64;
                for p in self.row_range(i) {
                    acc += self.values[p] * x[self.col_idx[p]];
                }
                y[i] = acc;
                i += 1;
            }
        }
        Ok(())
    }

    /// Rows `i`, `i + 1` and `i + 2` exist and store the same columns.
    #[inline]
    fn triple_shares_columns(&self, i: usize) -> bool {
        if i + 3 > self.nrows {
            return false;
        }
        let r = &self.row_ptr[i..i + 4];
        let len = r[1] - r[0];
        len == r[2] - r[1]
            && len == r[3] - r[2]
            && len > 0
            && self.col_idx[r[0]..r[1]] == self.col_idx[r[1]..r[2]]
            && self.col_idx[r[1]..r[2]] == self.col_idx[r[2]..r[3]]
    }

    /// `y = A x` on the rows of two triples (see [`Self::triple_shares_columns`]) starting at
    /// rows `a` and `b`, each row from 0.0 in column order.
    #[inline]
    fn mul_triples(&self, a: usize, b: usize, x: &[f64], ya: &mut [f64], yb: &mut [f64]) {
        let (ra, rb) = (self.row_range(a), self.row_range(b));
        let (ca, cb) = (&self.col_idx[ra.clone()], &self.col_idx[rb.clone()]);
        let (la, lb) = (ca.len(), cb.len());
        let va = [&self.values[ra.start..ra.end], &self.values[ra.end..ra.end + la], &self.values[ra.end + la..ra.end + 2 * la]];
        let vb = [&self.values[rb.start..rb.end], &self.values[rb.end..rb.end + lb], &self.values[rb.end + lb..rb.end + 2 * lb]];
        let common = la.min(lb);
        let (mut sa, mut sb) = ([0.0f64; 3], [0.0f64; 3]);
        let (ca0, cb0) = (&ca[..common], &cb[..common]);
        let (va0, va1, va2) = (&va[0][..common], &va[1][..common], &va[2][..common]);
        let (vb0, vb1, vb2) = (&vb[0][..common], &vb[1][..common], &vb[2][..common]);
        for k in 0..common {
            let (xa, xb) = (x[ca0[k]], x[cb0[k]]);
            sa[0] += va0[k] * xa;
            sa[1] += va1[k] * xa;
            sa[2] += va2[k] * xa;
            sb[0] += vb0[k] * xb;
            sb[1] += vb1[k] * xb;
            sb[2] += vb2[k] * xb;
        }
        self.triple_tail(a, common, ca, x, &mut sa);
        self.triple_tail(b, common, cb, x, &mut sb);
        ya.copy_from_slice(&sa);
        yb.copy_from_slice(&sb);
    }

    /// Continues the three sums of the triple at row `a` from its entry `from` on.
    #[inline]
    fn triple_tail(&self, a: usize, from: usize, cols: &[usize], x: &[f64], acc: &mut [f64; 3]) {
        let start = self.row_ptr[a];
        let len = cols.len();
        let v = [&self.values[start..start + len], &self.values[start + len..start + 2 * len], &self.values[start + 2 * len..start + 3 * len]];
        for k in from..len {
            let xc = x[cols[k]];
            acc[0] += v[0][k] * xc;
            acc[1] += v[1][k] * xc;
            acc[2] += v[2][k] * xc;
        }
    }

    /// `y = A x` on rows `i..i + 4`, four sums at once.
    #[inline]
    fn mul_four(&self, i: usize, x: &[f64], out: &mut [f64]) {
        let ranges = [self.row_range(i), self.row_range(i + 1), self.row_range(i + 2), self.row_range(i + 3)];
        let common = ranges.iter().map(|r| r.len()).min().unwrap_or(0);
        let vals = ranges.clone().map(|r| &self.values[r]);
        let cols = ranges.map(|r| &self.col_idx[r]);
        let mut acc = [0.0f64; 4];
        for k in 0..common {
            for j in 0..4 {
                acc[j] += vals[j][k] * x[cols[j][k]];
            }
        }
        for j in 0..4 {
            for (v, &c) in vals[j][common..].iter().zip(&cols[j][common..]) {
                acc[j] += v * x[c];
            }
        }
        out.copy_from_slice(&acc);
    }

    /// `true` if both matrices have the same shape and the same stored pattern
    /// (values are ignored).
    pub fn same_pattern(&self, other: &CsrMatrix) -> bool {
        self.nrows == other.nrows && self.ncols == other.ncols && self.row_ptr == other.row_ptr && self.col_idx == other.col_idx
    }

    /// `true` if the matrix is square and `|A_ij - A_ji| <= tol` for every
    /// stored entry (missing entries count as `0.0`).
    pub fn is_symmetric(&self, tol: f64) -> bool {
        self.is_square() && self.iter().all(|(i, j, v)| (v - self.get(j, i)).abs() <= tol)
    }

    /// SOFA's `applyConstraint(ZeroDirichletCondition)` on the global matrix:
    /// for every `k` in `dofs`, clear the **whole row k and the whole column k**
    /// (set the stored values to `0.0`, keeping the pattern), then set the
    /// diagonal entry `(k, k)` to `1.0`. A diagonal slot is inserted if it is
    /// missing (this is the only case where the pattern changes).
    ///
    /// Returns `Ok(true)` if the pattern changed (diagonal slots inserted).
    /// Every index is validated before anything is modified:
    /// `k >= nrows` or `k >= ncols` gives [`LinalgError::IndexOutOfBounds`].
    /// Duplicate indices are harmless.
    pub fn apply_dirichlet(&mut self, dofs: &[usize]) -> Result<bool> {
        Ok(self.apply_dirichlet_impl(dofs)?.is_some())
    }

    /// Implementation of [`Self::apply_dirichlet`]; when diagonal slots had to be
    /// inserted, returns `(remap, old_row_ptr, old_col_idx)` where `remap[p]` is
    /// the new position of the entry formerly stored at position `p`.
    pub(crate) fn apply_dirichlet_impl(&mut self, dofs: &[usize]) -> Result<Option<PatternRemap>> {
        for &k in dofs {
            if k >= self.nrows || k >= self.ncols {
                return Err(LinalgError::IndexOutOfBounds { row: k, col: k, nrows: self.nrows, ncols: self.ncols });
            }
        }
        if dofs.is_empty() {
            return Ok(None);
        }
        let mut mark = vec![false; self.nrows.max(self.ncols)];
        for &k in dofs {
            mark[k] = true;
        }
        let missing: Vec<bool> = (0..self.nrows).map(|i| mark[i] && self.find(i, i).is_none()).collect();
        let changed = if missing.iter().any(|&m| m) { Some(self.insert_zero_diagonals(&missing)) } else { None };
        for i in 0..self.nrows {
            let row_marked = mark[i];
            for p in self.row_ptr[i]..self.row_ptr[i + 1] {
                if row_marked || mark[self.col_idx[p]] {
                    self.values[p] = 0.0;
                }
            }
        }
        for (k, &m) in mark.iter().enumerate() {
            if m {
                if let Some(p) = self.find(k, k) {
                    self.values[p] = 1.0;
                }
            }
        }
        Ok(changed)
    }

    /// Positions written by [`Self::apply_dirichlet`] on a pattern that
    /// already stores every diagonal `(k, k)` of `dofs` (validated): the
    /// entries of the rows and columns of `dofs` (set to `0.0`), then their
    /// diagonal entries (set to `1.0`).
    pub(crate) fn dirichlet_positions(&self, dofs: &[usize]) -> (Vec<usize>, Vec<usize>) {
        let mut mark = vec![false; self.nrows.max(self.ncols)];
        for &k in dofs {
            mark[k] = true;
        }
        let mut zero = Vec::new();
        for i in 0..self.nrows {
            let row_marked = mark[i];
            for p in self.row_ptr[i]..self.row_ptr[i + 1] {
                if row_marked || mark[self.col_idx[p]] {
                    zero.push(p);
                }
            }
        }
        let one = mark.iter().enumerate().filter(|&(_, &m)| m).filter_map(|(k, _)| self.find(k, k)).collect();
        (zero, one)
    }

    /// Inserts a stored `0.0` at `(i, i)` for every `i` with `missing[i]`
    /// (which must not already be stored). Returns `(remap, old_row_ptr, old_col_idx)`.
    fn insert_zero_diagonals(&mut self, missing: &[bool]) -> PatternRemap {
        let extra = missing.iter().filter(|&&m| m).count();
        let nnz = self.nnz();
        let mut row_ptr = Vec::with_capacity(self.nrows + 1);
        let mut col_idx = Vec::with_capacity(nnz + extra);
        let mut values = Vec::with_capacity(nnz + extra);
        let mut remap = vec![0usize; nnz];
        row_ptr.push(0);
        for (i, &miss) in missing.iter().enumerate().take(self.nrows) {
            let mut inserted = !miss;
            for (p, slot) in remap.iter_mut().enumerate().take(self.row_ptr[i + 1]).skip(self.row_ptr[i]) {
                let c = self.col_idx[p];
                if !inserted && c > i {
                    col_idx.push(i);
                    values.push(0.0);
                    inserted = true;
                }
                *slot = col_idx.len();
                col_idx.push(c);
                values.push(self.values[p]);
            }
            if !inserted {
                col_idx.push(i);
                values.push(0.0);
            }
            row_ptr.push(col_idx.len());
        }
        let old_row_ptr = core::mem::replace(&mut self.row_ptr, row_ptr);
        let old_col_idx = core::mem::replace(&mut self.col_idx, col_idx);
        self.triples = Default::default();
        self.values = values;
        (remap, old_row_ptr, old_col_idx)
    }

    /// Crate-internal constructor for structures that are valid by construction.
    pub(crate) fn from_parts_unchecked(nrows: usize, ncols: usize, row_ptr: Vec<usize>, col_idx: Vec<usize>, values: Vec<f64>) -> Self {
        debug_assert_eq!(row_ptr.len(), nrows + 1);
        debug_assert_eq!(col_idx.len(), values.len());
        Self { nrows, ncols, row_ptr, col_idx, values, triples: Default::default() }
    }
}
