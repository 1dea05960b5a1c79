//! Constraint Jacobian rows on a state (SOFA's `MatrixDeriv`).
//!
//! A Lagrangian constraint writes one row per scalar constraint on the state it acts on (often a
//! mapped collision or contact state); the rows are then carried up to the independent states
//! through the mappings (`Jᵀ` applied to each row). A row is sparse over the state's DOFs, and each
//! entry holds one derivative block (3 reals for Vec3, 6 for Rigid3).
//!
//! Entries of a row are kept sorted by DOF, and an entry added twice to the same DOF is summed in
//! the order of the additions: the compressed form SOFA's solvers read.

use std::collections::BTreeMap;

/// The constraint rows of one state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConstraintRows {
    /// Reals per derivative block (`Layout::deriv_size` of the state).
    pub deriv_size: usize,
    /// Row id → (DOF → derivative block), both ordered.
    rows: BTreeMap<usize, BTreeMap<usize, Vec<f64>>>,
}

impl ConstraintRows {
    pub fn new(deriv_size: usize) -> ConstraintRows {
        ConstraintRows { deriv_size, rows: BTreeMap::new() }
    }

    /// Removes every row (SOFA clears the constraint matrix at the start of each constraint build).
    pub fn clear(&mut self) {
        self.rows.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Number of non-empty rows.
    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// `row[dof] += block`; `block` has `deriv_size` reals.
    pub fn add(&mut self, row: usize, dof: usize, block: &[f64]) {
        debug_assert_eq!(block.len(), self.deriv_size);
        let entry = self.rows.entry(row).or_default().entry(dof).or_insert_with(|| vec![0.0; block.len()]);
        for (e, b) in entry.iter_mut().zip(block) {
            *e += b;
        }
    }

    /// The rows in increasing id, each with its entries in increasing DOF.
    pub fn rows(&self) -> impl Iterator<Item = (usize, impl Iterator<Item = (usize, &[f64])>)> {
        self.rows.iter().map(|(&r, entries)| (r, entries.iter().map(|(&d, b)| (d, b.as_slice()))))
    }

    /// Lets `f` rewrite the entries of every row in place (entries in increasing DOF).
    pub fn map_rows(&mut self, mut f: impl FnMut(&mut [(usize, &mut [f64])])) {
        let mut buf: Vec<(usize, &mut [f64])> = Vec::new();
        for entries in self.rows.values_mut() {
            buf.clear();
            buf.extend(entries.iter_mut().map(|(d, b)| (*d, b.as_mut_slice())));
            f(&mut buf);
        }
    }

    /// `row · v` for a derivative vector `v` of the state (element-major).
    pub fn row_dot(&self, row: usize, v: &[f64]) -> f64 {
        let ds = self.deriv_size;
        self.rows
            .get(&row)
            .map_or(0.0, |entries| entries.iter().map(|(&d, b)| b.iter().zip(&v[d * ds..d * ds + ds]).map(|(x, y)| x * y).sum::<f64>()).sum())
    }

    /// `out += λ_row · row` for every row: the force `Jᵀ λ` of the constraint impulses.
    pub fn add_transpose_mul(&self, out: &mut [f64], lambda: impl Fn(usize) -> f64) {
        let ds = self.deriv_size;
        for (&r, entries) in &self.rows {
            let l = lambda(r);
            for (&d, b) in entries {
                for (o, x) in out[d * ds..d * ds + ds].iter_mut().zip(b) {
                    *o += x * l;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_sorted_and_repeated_dofs_summed() {
        let mut c = ConstraintRows::new(3);
        c.add(4, 7, &[1.0, 0.0, 0.0]);
        c.add(4, 2, &[0.0, 2.0, 0.0]);
        c.add(4, 7, &[0.5, 0.0, 1.0]);
        c.add(1, 0, &[0.0, 0.0, 3.0]);
        type Row = (usize, Vec<(usize, Vec<f64>)>);
        let rows: Vec<Row> = c.rows().map(|(r, e)| (r, e.map(|(d, b)| (d, b.to_vec())).collect())).collect();
        assert_eq!(rows, vec![(1, vec![(0, vec![0.0, 0.0, 3.0])]), (4, vec![(2, vec![0.0, 2.0, 0.0]), (7, vec![1.5, 0.0, 1.0])])]);
    }

    #[test]
    fn row_dot_and_transpose_product_are_adjoint() {
        let mut c = ConstraintRows::new(2);
        c.add(0, 0, &[1.0, 2.0]);
        c.add(0, 2, &[-1.0, 0.5]);
        c.add(3, 1, &[4.0, -3.0]);
        let v = [0.3, -0.7, 1.1, 0.2, -0.4, 0.9];
        let lambda = |r: usize| if r == 0 { 2.0 } else { -0.5 };
        let mut f = vec![0.0; 6];
        c.add_transpose_mul(&mut f, lambda);
        let lhs: f64 = f.iter().zip(&v).map(|(a, b)| a * b).sum();
        let rhs = lambda(0) * c.row_dot(0, &v) + lambda(3) * c.row_dot(3, &v);
        assert!((lhs - rhs).abs() < 1e-14);
        assert!((c.row_dot(0, &v) - ((0.3 - 1.4) + (0.4 + 0.45))).abs() < 1e-15);
    }
}
