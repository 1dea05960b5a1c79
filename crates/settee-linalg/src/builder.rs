//! Assembly of global matrices with a sparsity pattern reused between steps.

use crate::csr::CsrMatrix;
use crate::error::{dense_len, LinalgError, Result};

/// Assembles a [`CsrMatrix`] from scattered additions, reusing its sparsity
/// pattern from one assembly ("cycle") to the next.
///
/// # Cycle
///
/// ```text
/// b.clear_values();          // start a cycle: values := 0, pattern kept
/// b.add(i, j, v)?; ...       // add_block3 / add_block as well
/// let a = b.finish();        // &CsrMatrix with duplicates summed
/// b.apply_dirichlet(&fixed)?; // optional projective constraints
/// if b.pattern_changed() { /* redo symbolic analysis */ }
/// ```
///
/// Calling `add*` after `finish` without `clear_values` implicitly starts a
/// new cycle (as if `clear_values` had been called).
///
/// # Summation and determinism
///
/// Each stored value is `0.0 + v₁ + v₂ + ...` where `v₁, v₂, ...` are the
/// additions to that entry **in insertion order**, whatever path is taken
/// (fresh build or replay), so the result is bit-for-bit reproducible.
/// `add_block3` / `add_block` insert their entries row-major (row by row,
/// columns increasing inside a row). Every entry passed is inserted, zeros
/// included, so the pattern does not depend on the values.
///
/// # Pattern reuse (fast path)
///
/// The first cycle records the `(i, j)` insertion sequence and the sequence
/// of calls (`add`, `add_block3`, `add_block` with their origin and shape),
/// builds the CSR pattern and caches, for every insertion, the index of its
/// value slot. In later cycles every call is compared with the recorded call
/// at the same position: when it matches, its values are added straight into
/// the cached slots (one comparison per call, no search, no sort). When the
/// calls differ, the insertions are compared one by one with the recorded
/// sequence, and while they match the cached slots are still used. On the
/// first mismatching insertion (or if the cycle ends with fewer insertions)
/// the builder falls back to recording triplets and rebuilds the CSR at
/// `finish`. The values are identical in all paths.
///
/// [`Self::apply_dirichlet`] also caches the positions it clears, and
/// replays them while the constrained indices and the pattern stay the same.
#[derive(Debug, Clone)]
pub struct MatrixBuilder {
    nrows: usize,
    ncols: usize,
    csr: CsrMatrix,
    /// Insertion log (rows and columns) of the current (or last) cycle.
    ins_row: Vec<usize>,
    ins_col: Vec<usize>,
    /// Values of the insertions `prefix_len..` (recording mode only).
    ins_val: Vec<f64>,
    /// In recording mode, the first `prefix_len` insertions of the cycle were
    /// replayed: their values are summed (in insertion order) in their old
    /// slots `slots[..prefix_len]` of `csr`, not in `ins_val`.
    prefix_len: usize,
    /// `slots[k]`: position in `csr.values` of insertion `k` (valid if `replay_ready`).
    slots: Vec<usize>,
    /// Calls of the recorded cycle, in order.
    ops: Vec<Op>,
    /// Next recorded call to compare with.
    op_cursor: usize,
    /// The calls of the current cycle matched the recorded ones so far.
    ops_ok: bool,
    /// The calls of the current cycle are being (re)recorded into `ops`.
    ops_rec: bool,
    /// The slot cache matches `csr` and the insertion log.
    replay_ready: bool,
    /// Number of insertions made in the current cycle.
    cursor: usize,
    /// The current cycle deviates from the recorded sequence (recording mode).
    diverged: bool,
    /// `finish` was called and no new cycle started yet.
    finished: bool,
    /// Pattern `(row_ptr, col_idx)` at the start of the current cycle, saved the
    /// first time the pattern is modified during the cycle.
    cycle_base: Option<(Vec<usize>, Vec<usize>)>,
    rebuilds: usize,
    /// Incremented whenever the pattern of `csr` may have changed.
    pattern_version: usize,
    /// Positions written by the last `apply_dirichlet`.
    dirichlet: Option<DirichletCache>,
}

/// One recorded call: the block `rows x cols` at `(i0, j0)`, whose entries
/// are the insertions `start..start + rows * cols`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Op {
    i0: usize,
    j0: usize,
    rows: usize,
    cols: usize,
    start: usize,
}

/// What `apply_dirichlet(dofs)` did to the pattern of version
/// `pattern_version`: the values at `zero` were set to `0.0`, then those at
/// `one` to `1.0`.
#[derive(Debug, Clone)]
struct DirichletCache {
    dofs: Vec<usize>,
    pattern_version: usize,
    zero: Vec<usize>,
    one: Vec<usize>,
}

impl MatrixBuilder {
    /// A builder for an `n x n` matrix.
    pub fn new(n: usize) -> Self {
        Self::with_shape(n, n)
    }

    /// A builder for an `nrows x ncols` matrix.
    pub fn with_shape(nrows: usize, ncols: usize) -> Self {
        Self {
            nrows,
            ncols,
            csr: CsrMatrix::zeros(nrows, ncols),
            ins_row: Vec::new(),
            ins_col: Vec::new(),
            ins_val: Vec::new(),
            prefix_len: 0,
            slots: Vec::new(),
            ops: Vec::new(),
            op_cursor: 0,
            ops_ok: false,
            ops_rec: true,
            replay_ready: false,
            cursor: 0,
            diverged: true,
            finished: false,
            cycle_base: None,
            rebuilds: 0,
            pattern_version: 0,
            dirichlet: None,
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Starts a new assembly cycle: every stored value is set to `0.0`, the
    /// pattern and the cached insertion sequence are kept.
    pub fn clear_values(&mut self) {
        self.csr.fill_zero();
        self.cursor = 0;
        self.op_cursor = 0;
        self.prefix_len = 0;
        self.diverged = !self.replay_ready;
        self.ins_val.clear();
        if self.diverged {
            self.ins_row.clear();
            self.ins_col.clear();
            self.ops.clear();
            self.ops_ok = false;
            self.ops_rec = true;
        } else {
            self.ops_ok = true;
            self.ops_rec = false;
        }
        self.finished = false;
        self.cycle_base = None;
    }

    #[inline]
    fn check(&self, i: usize, j: usize) -> Result<()> {
        if i >= self.nrows || j >= self.ncols {
            return Err(LinalgError::IndexOutOfBounds { row: i, col: j, nrows: self.nrows, ncols: self.ncols });
        }
        Ok(())
    }

    /// Starts the (validated) call adding the `rows x cols` block at
    /// `(i0, j0)`. Returns the index of its first insertion when it matches
    /// the recorded call at this position: its slots are then
    /// `slots[start..start + rows * cols]` and the insertions are counted.
    /// Otherwise the caller inserts the entries one by one with [`Self::push`].
    #[inline]
    fn begin_op(&mut self, i0: usize, j0: usize, rows: usize, cols: usize) -> Option<usize> {
        if self.finished {
            self.clear_values();
        }
        let op = Op { i0, j0, rows, cols, start: self.cursor };
        if self.ops_ok {
            if self.ops.get(self.op_cursor) == Some(&op) {
                self.op_cursor += 1;
                self.cursor += rows * cols;
                return Some(op.start);
            }
            // The calls differ from here on: compare insertion by insertion
            // and record the calls of this cycle anew.
            self.ops_ok = false;
            self.ops_rec = true;
            self.ops.truncate(self.op_cursor);
        }
        if self.ops_rec {
            self.ops.push(op);
        }
        None
    }

    #[inline]
    fn push(&mut self, i: usize, j: usize, v: f64) {
        if !self.diverged {
            let k = self.cursor;
            if k < self.ins_row.len() && self.ins_row[k] == i && self.ins_col[k] == j {
                self.csr.values_mut()[self.slots[k]] += v;
                self.cursor += 1;
                return;
            }
            // Sequence differs: the matching prefix stays summed in its slots.
            self.start_recording();
        }
        self.ins_row.push(i);
        self.ins_col.push(j);
        self.ins_val.push(v);
        self.cursor += 1;
    }

    /// Switches from replay to recording mode after `cursor` replayed insertions.
    fn start_recording(&mut self) {
        let k = self.cursor;
        self.diverged = true;
        self.prefix_len = k;
        self.ins_row.truncate(k);
        self.ins_col.truncate(k);
        self.ins_val.clear();
        self.ins_val.resize(k, 0.0);
    }

    /// Adds `v` to entry `(i, j)`. Out-of-range indices give
    /// [`LinalgError::IndexOutOfBounds`] and insert nothing.
    #[inline]
    pub fn add(&mut self, i: usize, j: usize, v: f64) -> Result<()> {
        self.check(i, j)?;
        if let Some(start) = self.begin_op(i, j, 1, 1) {
            let s = self.slots[start];
            self.csr.values_mut()[s] += v;
            return Ok(());
        }
        self.push(i, j, v);
        Ok(())
    }

    /// Adds the 3x3 block `b` (`b[r][c]` goes to `(i0 + r, j0 + c)`),
    /// inserting its 9 entries row-major. Nothing is inserted if the block
    /// does not fit.
    #[inline]
    pub fn add_block3(&mut self, i0: usize, j0: usize, b: &[[f64; 3]; 3]) -> Result<()> {
        self.check_block(i0, j0, 3, 3)?;
        if let Some(start) = self.begin_op(i0, j0, 3, 3) {
            let slots: &[usize; 9] = self.slots[start..start + 9].try_into().unwrap();
            let vals = self.csr.values_mut();
            for (s3, row) in slots.chunks_exact(3).zip(b) {
                for (&s, &v) in s3.iter().zip(row) {
                    vals[s] += v;
                }
            }
            return Ok(());
        }
        for (r, row) in b.iter().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                self.push(i0 + r, j0 + c, v);
            }
        }
        Ok(())
    }

    /// Adds a dense `rows x cols` block given **row-major** in `data`
    /// (`data[r * cols + c]` goes to `(i0 + r, j0 + c)`), inserting its
    /// entries row-major. Nothing is inserted on error (wrong `data` length
    /// or block out of range).
    pub fn add_block(&mut self, i0: usize, j0: usize, rows: usize, cols: usize, data: &[f64]) -> Result<()> {
        let len = dense_len(rows, cols, data.len(), "block data (rows * cols overflows)", "block data (rows * cols)")?;
        self.check_block(i0, j0, rows, cols)?;
        if len == 0 {
            return Ok(());
        }
        if let Some(start) = self.begin_op(i0, j0, rows, cols) {
            let slots = &self.slots[start..start + len];
            let vals = self.csr.values_mut();
            for (&s, &v) in slots.iter().zip(data) {
                vals[s] += v;
            }
            return Ok(());
        }
        for r in 0..rows {
            for c in 0..cols {
                self.push(i0 + r, j0 + c, data[r * cols + c]);
            }
        }
        Ok(())
    }

    fn check_block(&self, i0: usize, j0: usize, rows: usize, cols: usize) -> Result<()> {
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let last_i = i0.checked_add(rows - 1);
        let last_j = j0.checked_add(cols - 1);
        match (last_i, last_j) {
            (Some(li), Some(lj)) if li < self.nrows && lj < self.ncols => Ok(()),
            _ => Err(LinalgError::IndexOutOfBounds {
                row: last_i.unwrap_or(usize::MAX),
                col: last_j.unwrap_or(usize::MAX),
                nrows: self.nrows,
                ncols: self.ncols,
            }),
        }
    }

    /// Ends the cycle and returns the assembled matrix (duplicates summed in
    /// insertion order). Calling `finish` twice in a row is harmless.
    pub fn finish(&mut self) -> &CsrMatrix {
        if self.finished {
            return &self.csr;
        }
        self.finished = true;
        if self.ops_ok {
            // Fewer calls than recorded: the log of this cycle ends here.
            self.ops.truncate(self.op_cursor);
        }
        if !self.diverged && self.cursor == self.ins_row.len() {
            // Fast path: values were written into their slots by `add`.
            return &self.csr;
        }
        if !self.diverged {
            // Fewer insertions than recorded: the replayed prefix stays.
            self.start_recording();
        }
        self.rebuild();
        &self.csr
    }

    fn save_cycle_base(&mut self) {
        if self.cycle_base.is_none() {
            self.cycle_base = Some((self.csr.row_ptr().to_vec(), self.csr.col_idx().to_vec()));
        }
    }

    fn rebuild(&mut self) {
        self.save_cycle_base();
        let m = self.ins_row.len();
        let nrows = self.nrows;
        // Stable counting sort of the insertions by row.
        let mut start = vec![0usize; nrows + 1];
        for &i in &self.ins_row {
            start[i + 1] += 1;
        }
        for i in 0..nrows {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut order = vec![0usize; m];
        for (k, &i) in self.ins_row.iter().enumerate() {
            order[next[i]] = k;
            next[i] += 1;
        }
        let mut slots = vec![0usize; m];
        let mut row_ptr = Vec::with_capacity(nrows + 1);
        let mut col_idx = Vec::with_capacity(m);
        row_ptr.push(0);
        for i in 0..nrows {
            let bucket = &mut order[start[i]..start[i + 1]];
            let cols = &self.ins_col;
            bucket.sort_by_key(|&k| cols[k]); // stable
            let mut last = usize::MAX;
            for &k in bucket.iter() {
                let c = cols[k];
                if c != last {
                    col_idx.push(c);
                    last = c;
                }
                slots[k] = col_idx.len() - 1;
            }
            row_ptr.push(col_idx.len());
        }
        let mut values = vec![0.0f64; col_idx.len()];
        // The replayed prefix: each of its entries holds, in its old slot, the
        // sum (in insertion order, from 0.0) of its replayed additions; it
        // comes before every recorded addition of the same entry.
        let old = self.csr.values();
        for (&s_new, &s_old) in slots[..self.prefix_len].iter().zip(&self.slots) {
            values[s_new] = old[s_old];
        }
        for (&s, &v) in slots[self.prefix_len..].iter().zip(&self.ins_val[self.prefix_len..]) {
            values[s] += v;
        }
        self.csr = CsrMatrix::from_parts_unchecked(nrows, self.ncols, row_ptr, col_idx, values);
        self.slots = slots;
        self.ins_val.clear();
        self.prefix_len = 0;
        self.replay_ready = true;
        self.diverged = false;
        self.rebuilds += 1;
        self.pattern_version += 1;
    }

    /// The matrix as currently assembled (call [`Self::finish`] first for a
    /// complete result).
    pub fn matrix(&self) -> &CsrMatrix {
        &self.csr
    }

    /// Consumes the builder and returns its matrix (finishing the cycle first).
    pub fn into_matrix(mut self) -> CsrMatrix {
        self.finish();
        self.csr
    }

    /// Applies SOFA's `applyConstraint(ZeroDirichletCondition)` to the finished
    /// matrix: see [`CsrMatrix::apply_dirichlet`] (rows and columns of `dofs`
    /// cleared, diagonal set to 1, missing diagonal slots inserted). The slot
    /// cache is kept consistent, so the next cycles still take the fast path;
    /// inserted diagonal slots stay in the pattern (holding `0.0` after
    /// `clear_values`). Finishes the current cycle first if needed.
    pub fn apply_dirichlet(&mut self, dofs: &[usize]) -> Result<()> {
        self.finish();
        // Validate before saving anything.
        for &k in dofs {
            if k >= self.nrows || k >= self.ncols {
                return Err(LinalgError::IndexOutOfBounds { row: k, col: k, nrows: self.nrows, ncols: self.ncols });
            }
        }
        if let Some(c) = &self.dirichlet {
            if c.pattern_version == self.pattern_version && c.dofs == dofs {
                let vals = self.csr.values_mut();
                for &p in &c.zero {
                    vals[p] = 0.0;
                }
                for &p in &c.one {
                    vals[p] = 1.0;
                }
                return Ok(());
            }
        }
        if let Some((remap, old_rp, old_ci)) = self.csr.apply_dirichlet_impl(dofs)? {
            if self.cycle_base.is_none() {
                self.cycle_base = Some((old_rp, old_ci));
            }
            for s in &mut self.slots {
                *s = remap[*s];
            }
            self.pattern_version += 1;
        }
        // Cache the positions (the pattern now has every diagonal of `dofs`).
        let (zero, one) = self.csr.dirichlet_positions(dofs);
        self.dirichlet = Some(DirichletCache { dofs: dofs.to_vec(), pattern_version: self.pattern_version, zero, one });
        Ok(())
    }

    /// `true` if the sparsity pattern (`row_ptr`, `col_idx`) differs from the
    /// pattern the matrix had when the current cycle started (at the last
    /// `clear_values`, or at creation for the first cycle) — through a rebuild
    /// in [`Self::finish`] or a diagonal insertion in
    /// [`Self::apply_dirichlet`]. Solvers that cache a symbolic factorization
    /// must redo it when this is `true`. (A rebuild that reproduces the same
    /// pattern reports `false`.) [`crate::DirectSolver`] also compares the
    /// pattern itself, so using this flag is an optimisation, not a requirement.
    pub fn pattern_changed(&self) -> bool {
        match &self.cycle_base {
            None => false,
            Some((rp, ci)) => rp.as_slice() != self.csr.row_ptr() || ci.as_slice() != self.csr.col_idx(),
        }
    }

    /// Number of times the CSR pattern was (re)built from triplets (the first
    /// assembly counts as one). Stays constant while the fast path is used.
    pub fn rebuild_count(&self) -> usize {
        self.rebuilds
    }

    /// Number of insertions made in the current cycle.
    pub fn insertion_count(&self) -> usize {
        self.cursor
    }
}
