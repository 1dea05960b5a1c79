//! Constraint Jacobian rows on a state (SOFA's `MatrixDeriv`).
//!
//! A Lagrangian constraint writes one row per scalar constraint on the state it acts on (often a
//! mapped collision or contact state); the rows are then carried up to the independent states
//! through the mappings (`Jᵀ` applied to each row). A row is sparse over the state's DOFs, and each
//! entry holds one derivative block (3 reals for Vec3, 6 for Rigid3).
//!
//! Entries of a row are kept sorted by DOF, and an entry added twice to the same DOF is summed in
//! the order of the additions: the compressed form SOFA's solvers read.

/// The constraint rows of one state, in compressed-row form: row ids in increasing order, each
/// row's entries in increasing DOF, every entry a block of `deriv_size` reals. The vectors are
/// kept between steps ([`ConstraintRows::clear`] keeps their capacity), so a steady number of
/// contacts builds its rows without allocating.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConstraintRows {
    /// Reals per derivative block (`Layout::deriv_size` of the state).
    pub deriv_size: usize,
    /// Row ids, increasing.
    row_ids: Vec<usize>,
    /// Entries of row `k`: `starts[k]..starts[k + 1]` (one more element than `row_ids`).
    starts: Vec<usize>,
    /// DOF of each entry.
    dofs: Vec<usize>,
    /// Blocks of the entries, `deriv_size` reals each.
    values: Vec<f64>,
}

impl ConstraintRows {
    pub fn new(deriv_size: usize) -> ConstraintRows {
        ConstraintRows { deriv_size, row_ids: Vec::new(), starts: vec![0], dofs: Vec::new(), values: Vec::new() }
    }

    /// Removes every row (SOFA clears the constraint matrix at the start of each constraint
    /// build); the storage is kept for the next build.
    pub fn clear(&mut self) {
        self.row_ids.clear();
        self.starts.clear();
        self.starts.push(0);
        self.dofs.clear();
        self.values.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.row_ids.is_empty()
    }

    /// Number of non-empty rows.
    pub fn row_count(&self) -> usize {
        self.row_ids.len()
    }

    /// Number of entries (DOF blocks) over all rows.
    pub fn entry_count(&self) -> usize {
        self.dofs.len()
    }

    /// `row[dof] += block`; `block` has `deriv_size` reals. Rows are normally written in
    /// increasing order (appending costs O(entries of the row)); an earlier row is still found
    /// and updated in place.
    pub fn add(&mut self, row: usize, dof: usize, block: &[f64]) {
        debug_assert_eq!(block.len(), self.deriv_size);
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        let k = match self.row_ids.last() {
            Some(&last) if last == row => self.row_ids.len() - 1,
            Some(&last) if last > row => match self.row_ids.binary_search(&row) {
                Ok(k) => k,
                Err(k) => {
                    // A new row before existing ones: an empty range at position k.
                    let at = self.starts[k];
                    self.row_ids.insert(k, row);
                    self.starts.insert(k, at);
                    k
                }
            },
            _ => {
                self.row_ids.push(row);
                self.starts.push(self.dofs.len());
                self.row_ids.len() - 1
            }
        };
        let (a, b) = (self.starts[k], self.starts[k + 1]);
        let ds = self.deriv_size;
        let pos = match self.dofs[a..b].binary_search(&dof) {
            Ok(i) => a + i,
            Err(i) => {
                let at = a + i;
                self.dofs.insert(at, dof);
                // A new entry starts at zero and receives the block, as a sum would. (The
                // entries after it move by one block: a shift, cheaper than a splice.)
                let len = self.values.len();
                self.values.resize(len + ds, 0.0);
                self.values.copy_within(at * ds..len, at * ds + ds);
                self.values[at * ds..at * ds + ds].fill(0.0);
                for s in &mut self.starts[k + 1..] {
                    *s += 1;
                }
                at
            }
        };
        for (e, x) in self.values[pos * ds..pos * ds + ds].iter_mut().zip(block) {
            *e += x;
        }
    }

    /// `row[dofs[i]] += blocks[i·deriv_size..]` for every `i` in order: the sums of as many
    /// [`Self::add`]s. A row not stored yet (the way mappings carry rows up, row by row) is
    /// built at once: its additions stably sorted by DOF (`order` is a scratch list), each
    /// entry's from zero in the order given, and the row put in its place with one move of the
    /// rows after it rather than one per entry.
    pub fn add_entries(&mut self, row: usize, dofs: &[usize], blocks: &[f64], order: &mut Vec<usize>) {
        let ds = self.deriv_size;
        debug_assert_eq!(blocks.len(), dofs.len() * ds);
        if dofs.is_empty() {
            return;
        }
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        let k = match self.row_ids.binary_search(&row) {
            Ok(_) => {
                for (i, &dof) in dofs.iter().enumerate() {
                    self.add(row, dof, &blocks[i * ds..i * ds + ds]);
                }
                return;
            }
            Err(k) => k,
        };
        order.clear();
        order.extend(0..dofs.len());
        order.sort_by_key(|&i| dofs[i]);
        // The row's entries are built after the last ones, then moved into place.
        let before = self.dofs.len();
        let mut last = None;
        for &i in order.iter() {
            if last != Some(dofs[i]) {
                last = Some(dofs[i]);
                self.dofs.push(dofs[i]);
                self.values.resize(self.values.len() + ds, 0.0);
            }
            let at = self.values.len() - ds;
            for (e, x) in self.values[at..].iter_mut().zip(&blocks[i * ds..i * ds + ds]) {
                *e += x;
            }
        }
        let m = self.dofs.len() - before;
        let at = self.starts[k];
        if at < before {
            self.dofs[at..].rotate_right(m);
            self.values[at * ds..].rotate_right(m * ds);
        }
        for s in &mut self.starts[k..] {
            *s += m;
        }
        self.starts.insert(k, at);
        self.row_ids.insert(k, row);
    }

    /// The rows in increasing id, each with its entries in increasing DOF.
    pub fn rows(&self) -> impl Iterator<Item = (usize, impl Iterator<Item = (usize, &[f64])>)> {
        self.all_rows().map(|r| (r.id, r.entries()))
    }

    /// The entries of row `row` (none when the state has no such row).
    pub fn row(&self, row: usize) -> impl Iterator<Item = (usize, &[f64])> {
        self.rows_in(row..=row).flat_map(|r| r.entries())
    }

    /// The stored rows whose ids lie in `range`, in increasing id, found by binary search: a
    /// contact's rows are read without walking the state's other rows.
    pub fn rows_in(&self, range: std::ops::RangeInclusive<usize>) -> impl Iterator<Item = RowRef<'_>> + Clone {
        let lo = self.row_ids.partition_point(|&r| r < *range.start());
        let hi = self.row_ids.partition_point(|&r| r <= *range.end());
        (lo..hi).map(move |k| self.stored(k))
    }

    /// Every stored row, in increasing id.
    pub fn all_rows(&self) -> impl Iterator<Item = RowRef<'_>> + Clone {
        (0..self.row_ids.len()).map(move |k| self.stored(k))
    }

    /// The `k`-th stored row (`k < row_count()`), rows in increasing id.
    #[inline]
    pub fn stored(&self, k: usize) -> RowRef<'_> {
        let ds = self.deriv_size;
        let (a, b) = (self.starts[k], self.starts[k + 1]);
        RowRef { id: self.row_ids[k], deriv_size: ds, dofs: &self.dofs[a..b], values: &self.values[a * ds..b * ds] }
    }

    /// True when the state has a row `row`.
    pub fn has_row(&self, row: usize) -> bool {
        self.row_ids.binary_search(&row).is_ok()
    }

    /// Lets `f` rewrite the entries of every row in place (entries in increasing DOF).
    pub fn map_rows(&mut self, mut f: impl FnMut(&mut [(usize, &mut [f64])])) {
        let ds = self.deriv_size.max(1);
        let mut buf: Vec<(usize, &mut [f64])> = Vec::new();
        let mut rest: &mut [f64] = &mut self.values;
        for k in 0..self.row_ids.len() {
            let (a, b) = (self.starts[k], self.starts[k + 1]);
            let (row_vals, tail) = rest.split_at_mut((b - a) * ds);
            rest = tail;
            buf.clear();
            buf.extend(self.dofs[a..b].iter().copied().zip(row_vals.chunks_exact_mut(ds)));
            f(&mut buf);
        }
    }

    /// `row · v` for a derivative vector `v` of the state (element-major).
    pub fn row_dot(&self, row: usize, v: &[f64]) -> f64 {
        let ds = self.deriv_size;
        self.row(row).map(|(d, b)| b.iter().zip(&v[d * ds..d * ds + ds]).map(|(x, y)| x * y).sum::<f64>()).sum()
    }

    /// `out += λ_row · row` for every row: the force `Jᵀ λ` of the constraint impulses.
    pub fn add_transpose_mul(&self, out: &mut [f64], lambda: impl Fn(usize) -> f64) {
        let ds = self.deriv_size;
        for (r, entries) in self.rows() {
            let l = lambda(r);
            for (d, b) in entries {
                for (o, x) in out[d * ds..d * ds + ds].iter_mut().zip(b) {
                    *o += x * l;
                }
            }
        }
    }
}

/// One stored row, borrowed: its id, its DOFs in increasing order and their blocks.
#[derive(Clone, Copy, Debug)]
pub struct RowRef<'a> {
    pub id: usize,
    pub deriv_size: usize,
    pub dofs: &'a [usize],
    /// `deriv_size` reals per DOF of `dofs`.
    pub values: &'a [f64],
}

impl<'a> RowRef<'a> {
    /// The block of the `i`-th entry.
    #[inline]
    pub fn block(&self, i: usize) -> &'a [f64] {
        &self.values[i * self.deriv_size..(i + 1) * self.deriv_size]
    }

    /// The entries `(dof, block)` in increasing DOF.
    #[inline]
    pub fn entries(&self) -> impl Iterator<Item = (usize, &'a [f64])> + 'a {
        self.dofs.iter().copied().zip(self.values.chunks_exact(self.deriv_size.max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_sorted_and_repeated_dofs_summed_whatever_the_order_of_writing() {
        let mut c = ConstraintRows::new(3);
        c.add(4, 7, &[1.0, 0.0, 0.0]);
        c.add(4, 2, &[0.0, 2.0, 0.0]);
        c.add(4, 7, &[0.5, 0.0, 1.0]);
        c.add(1, 0, &[0.0, 0.0, 3.0]);
        c.add(2, 5, &[1.0, 1.0, 1.0]);
        c.add(2, 5, &[1.0, 0.0, 0.0]);
        type Row = (usize, Vec<(usize, Vec<f64>)>);
        let rows: Vec<Row> = c.rows().map(|(r, e)| (r, e.map(|(d, b)| (d, b.to_vec())).collect())).collect();
        let expected: Vec<Row> = vec![
            (1, vec![(0, vec![0.0, 0.0, 3.0])]),
            (2, vec![(5, vec![2.0, 1.0, 1.0])]),
            (4, vec![(2, vec![0.0, 2.0, 0.0]), (7, vec![1.5, 0.0, 1.0])]),
        ];
        assert_eq!(rows, expected);
        assert_eq!((c.row_count(), c.entry_count()), (3, 4));
        c.clear();
        assert!(c.is_empty() && !c.has_row(4));
        c.add(0, 3, &[1.0, 2.0, 3.0]);
        assert_eq!(c.row(0).map(|(d, b)| (d, b.to_vec())).collect::<Vec<_>>(), vec![(3, vec![1.0, 2.0, 3.0])]);
    }

    #[test]
    fn adding_a_row_at_once_gives_the_sums_of_adding_its_entries_one_by_one() {
        let dofs = [7, 2, 7, 0, 2, 9, 7];
        let blocks: Vec<f64> = (0..dofs.len() * 2).map(|i| (i as f64 * 0.37).sin() * 10f64.powi(i as i32 % 5 - 2)).collect();
        let mut one = ConstraintRows::new(2);
        let mut all = ConstraintRows::new(2);
        let mut order = Vec::new();
        for row in [1, 4, 4, 2, 0, 7, 5] {
            for (i, &d) in dofs.iter().enumerate() {
                one.add(row, d, &blocks[2 * i..2 * i + 2]);
            }
            all.add_entries(row, &dofs, &blocks, &mut order);
        }
        assert_eq!(one, all);
        assert_eq!(all.stored(1).dofs, &[0, 2, 7, 9]);
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
