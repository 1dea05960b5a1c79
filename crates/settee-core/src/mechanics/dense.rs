//! Dense compliance matrices and constraint Jacobians in global columns: what a linear solver
//! computes `J·A⁻¹·Jᵀ` with for a constraint correction.

use crate::diag::SimResult;
use crate::graph::constraint_rows::ConstraintRows;

/// A dense square matrix stored by rows (the compliance `W`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DenseMatrix {
    pub n: usize,
    pub data: Vec<f64>,
}

impl DenseMatrix {
    pub fn zeros(n: usize) -> DenseMatrix {
        DenseMatrix { n, data: vec![0.0; n * n] }
    }
    /// Resizes to `n × n` and zero-fills, keeping the allocation.
    pub fn clear(&mut self, n: usize) {
        self.n = n;
        self.data.clear();
        self.data.resize(n * n, 0.0);
    }
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.n + j]
    }
    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.data[i * self.n + j] = v;
    }
    #[inline]
    pub fn add(&mut self, i: usize, j: usize, v: f64) {
        self.data[i * self.n + j] += v;
    }
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.n..(i + 1) * self.n]
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

/// Constraint rows in the global scalar columns of a linear system (SOFA's `SparseMatrix` `J`
/// handed to `addJMInvJt`): the non-empty rows in increasing constraint index, each with its
/// entries in increasing column. Entries equal to zero are kept (they make a row non-empty, as
/// in SOFA).
#[derive(Clone, Debug, Default)]
pub struct ConstraintJacobian {
    /// Number of columns (the system size).
    pub ncols: usize,
    pub rows: Vec<(usize, Vec<(usize, f64)>)>,
    /// The lists of rows of a previous build, emptied, for the next rows ([`Self::reset`]).
    pub spare: Vec<Vec<(usize, f64)>>,
}

/// Two Jacobians are equal when their columns and rows are (whatever memory they keep).
impl PartialEq for ConstraintJacobian {
    fn eq(&self, other: &Self) -> bool {
        self.ncols == other.ncols && self.rows == other.rows
    }
}

impl ConstraintJacobian {
    /// Empties the Jacobian for `ncols` columns, keeping its rows' memory for the next build
    /// (a correction builds its `J` at every step).
    pub fn reset(&mut self, ncols: usize) {
        self.ncols = ncols;
        for (_, mut line) in self.rows.drain(..) {
            line.clear();
            self.spare.push(line);
        }
    }

    /// Keeps the rows whose id passes `keep` (the others' memory is kept for the next rows).
    pub fn retain_rows(&mut self, mut keep: impl FnMut(usize) -> bool) {
        for (_, mut line) in self.rows.extract_if(.., |(r, _)| !keep(*r)) {
            line.clear();
            self.spare.push(line);
        }
    }

    /// Adds the rows of one state whose DOF `k`, component `r` is global column
    /// `offset + k·deriv_size + r`; entries landing on an existing (row, column) are summed.
    pub fn add_state_rows(&mut self, rows: &ConstraintRows, offset: usize) {
        let ds = rows.deriv_size;
        for (r, entries) in rows.rows() {
            let pos = match self.rows.binary_search_by_key(&r, |(id, _)| *id) {
                Ok(p) => p,
                Err(p) => {
                    self.rows.insert(p, (r, self.spare.pop().unwrap_or_default()));
                    p
                }
            };
            let line = &mut self.rows[pos].1;
            for (dof, block) in entries {
                for (c, &v) in block.iter().enumerate() {
                    let col = offset + dof * ds + c;
                    match line.binary_search_by_key(&col, |(cc, _)| *cc) {
                        Ok(p) => line[p].1 += v,
                        Err(p) => line.insert(p, (col, v)),
                    }
                }
            }
        }
    }

    /// The row with id `r`, if not empty.
    pub fn row(&self, r: usize) -> Option<&[(usize, f64)]> {
        self.rows.binary_search_by_key(&r, |(id, _)| *id).ok().map(|p| self.rows[p].1.as_slice())
    }

    /// Writes row `r` densely into `out` (`ncols` long, zero elsewhere).
    pub fn dense_row(&self, r: usize, out: &mut Vec<f64>) {
        out.clear();
        out.resize(self.ncols, 0.0);
        if let Some(line) = self.row(r) {
            for &(c, v) in line {
                out[c] = v;
            }
        }
    }

    /// SOFA's generic `MatrixLinearSolver::addJMInvJt`: for every row index `r < w.n` (empty
    /// rows included, unless `skip_empty`), `y = solve(Jᵣᵀ)`, then for every non-empty row `s`:
    /// `W[s][r] += factor·(Jₛ·y)` (accumulated from 0 over the row's entries, then scaled). Not
    /// symmetrised. `solve(rhs, y)` writes `y` (`ncols` long).
    pub fn add_jminvjt_generic(
        &self,
        w: &mut DenseMatrix,
        factor: f64,
        skip_empty: bool,
        mut solve: impl FnMut(&[f64], &mut Vec<f64>) -> SimResult,
    ) -> SimResult {
        let mut rhs = Vec::new();
        let mut y = Vec::new();
        for r in 0..w.n {
            if skip_empty && self.row(r).is_none() {
                continue;
            }
            self.dense_row(r, &mut rhs);
            solve(&rhs, &mut y)?;
            for (s, line) in &self.rows {
                if *s >= w.n {
                    continue;
                }
                let mut acc = 0.0;
                for &(c, v) in line {
                    acc += v * y[c];
                }
                acc *= factor;
                w.add(*s, r, acc);
            }
        }
        Ok(())
    }
}
