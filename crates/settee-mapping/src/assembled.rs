//! What the assembled mappings share (the Compliant plugin's `AssembledMapping` pattern): the
//! Jacobian blocks, one per input, are built by `apply` (or at init when they are constant), and
//! `applyJ`/`applyJT` are the sparse products with them. Also the `(I − uuᵀ)·s` block of the
//! distance mappings' geometric stiffness.

use settee_core::component::SparseRows;
use settee_core::{SimError, SimResult};

use crate::common::{check_len, M3, V3};

/// `out = Σ_p J_p·in_p` (each product a row sum started from 0, the inputs added in order).
/// Nothing is written while the Jacobians are not built (SOFA skips an empty Jacobian).
pub fn mul(jac: &[SparseRows], out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
    if jac.is_empty() {
        return Ok(());
    }
    check_inputs(jac, inputs.iter().map(|v| v.len()), "the input velocities")?;
    let n = jac[0].nrows();
    check_len("the output velocities", out, n, 1)?;
    for (p, j) in jac.iter().enumerate() {
        for (i, row) in j.rows.iter().enumerate() {
            let t: f64 = row.iter().map(|&(c, v)| v * inputs[p][c]).sum();
            if p == 0 {
                out[i] = t;
            } else {
                out[i] += t;
            }
        }
    }
    Ok(())
}

/// `in_p += J_pᵀ·out` for every input.
pub fn mul_transpose(jac: &[SparseRows], inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
    if jac.is_empty() {
        return Ok(());
    }
    check_inputs(jac, inputs.iter().map(|v| v.len()), "the input forces")?;
    check_len("the output forces", out, jac[0].nrows(), 1)?;
    for (j, f) in jac.iter().zip(inputs.iter_mut()) {
        j.add_mul_transpose(f, out);
    }
    Ok(())
}

fn check_inputs(jac: &[SparseRows], lens: impl ExactSizeIterator<Item = usize>, what: &str) -> SimResult {
    if lens.len() != jac.len() {
        return Err(SimError::new(format!("{} inputs lent, {} expected", lens.len(), jac.len())));
    }
    for (n, j) in lens.zip(jac) {
        if n < j.ncols {
            return Err(SimError::new(format!("{what} have {n} values, {} expected", j.ncols))
                .hint("a state connected to the mapping was resized after init, which the mapping does not follow"));
        }
    }
    Ok(())
}

/// The `n × n` block `(I − uuᵀ)·s`, row-major (`n = u.len()`), each entry computed as
/// `(δ_jk − u_j·u_k)·s`.
pub fn orthogonal_projector(u: &[f64], s: f64) -> Vec<f64> {
    let n = u.len();
    let mut b = vec![0.0; n * n];
    for j in 0..n {
        for k in 0..n {
            b[j * n + k] = ((if j == k { 1.0 } else { 0.0 }) - u[j] * u[k]) * s;
        }
    }
    b
}

/// [`orthogonal_projector`] of a 3D direction, as a 3×3 matrix.
pub fn orthogonal_projector3(u: &V3, s: f64) -> M3 {
    let b = orthogonal_projector(u, s);
    [[b[0], b[1], b[2]], [b[3], b[4], b[5]], [b[6], b[7], b[8]]]
}

/// Zero Jacobians (a mapping with `mapForces` off takes no part in the assembly).
pub fn zeros(nrows: usize, ncols: &[usize]) -> Vec<SparseRows> {
    ncols.iter().map(|&c| SparseRows::new(nrows, c)).collect()
}

/// Sorts each row by column, sums duplicate columns (a pair whose two ends are the same DOF) and
/// drops the zero entries.
pub fn finish_rows(j: &mut SparseRows) {
    for row in &mut j.rows {
        row.sort_by_key(|e| e.0);
        let mut merged: Vec<(usize, f64)> = Vec::with_capacity(row.len());
        for &(c, v) in row.iter() {
            match merged.last_mut() {
                Some(last) if last.0 == c => last.1 += v,
                _ => merged.push((c, v)),
            }
        }
        merged.retain(|e| e.1 != 0.0);
        *row = merged;
    }
}

/// The Jacobians of a mapping that does not carry forces (`mapForces` false): empty matrices.
pub fn empty_like(jac: &[SparseRows]) -> Vec<SparseRows> {
    jac.iter().map(|j| SparseRows::new(j.nrows(), j.ncols)).collect()
}

/// The Jacobians a mapping gives from its built blocks: the blocks when it carries forces,
/// empty matrices of the same shape otherwise ([`empty_like`]).
pub fn carried(map_forces: bool, jac: &[SparseRows]) -> Vec<SparseRows> {
    if map_forces {
        jac.to_vec()
    } else {
        empty_like(jac)
    }
}

/// [`carried`], or the error `not_built` while the blocks are not built.
pub fn built(map_forces: bool, jac: &[SparseRows], not_built: &str) -> SimResult<Vec<SparseRows>> {
    if jac.is_empty() {
        return Err(SimError::new(not_built));
    }
    Ok(carried(map_forces, jac))
}

/// Keeps `j` (merged by [`finish_rows`]) as the one Jacobian block of a mapping (`apply`'s last step).
pub fn store(jac: &mut Vec<SparseRows>, mut j: SparseRows) -> SimResult {
    finish_rows(&mut j);
    *jac = vec![j];
    Ok(())
}

/// What [`built`] says of a mapping whose Jacobian is built by `apply`, before the first one.
pub const NOT_APPLIED: &str = "the Jacobian is not computed yet (the mapping was never applied)";

/// The `Mapping` methods of an assembled mapping (fields `ports` and `jac`): `applyJ` as
/// [`mul`] and `applyJT` as [`mul_transpose`] (nothing when forces are not mapped). With
/// `apply_jt`, that one only. With `applied`, also `jacobians`: the blocks built by `apply`
/// ([`built`] with [`NOT_APPLIED`]); with `ready`, also `jacobians` as [`carried`] once
/// `self.ready()` passes.
macro_rules! assembled_products {
    (applied) => {
        $crate::assembled::assembled_products!();

        fn jacobians(&self) -> settee_core::SimResult<Vec<settee_core::component::SparseRows>> {
            $crate::assembled::built(self.ports.map_forces, &self.jac, $crate::assembled::NOT_APPLIED)
        }
    };
    (ready) => {
        $crate::assembled::assembled_products!();

        fn jacobians(&self) -> settee_core::SimResult<Vec<settee_core::component::SparseRows>> {
            self.ready()?;
            Ok($crate::assembled::carried(self.ports.map_forces, &self.jac))
        }
    };
    () => {
        fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> settee_core::SimResult {
            $crate::assembled::mul(&self.jac, out, inputs)
        }
        $crate::assembled::assembled_products!(apply_jt);
    };
    (apply_jt) => {
        fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> settee_core::SimResult {
            if !self.ports.map_forces {
                return Ok(());
            }
            $crate::assembled::mul_transpose(&self.jac, inputs, out)
        }
    };
}
pub(crate) use assembled_products;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_follow_the_blocks() {
        // J0 = [[1, 0, −2]], J1 = [[0, 3]]
        let mut j0 = SparseRows::new(1, 3);
        j0.rows[0] = vec![(0, 1.0), (2, -2.0)];
        let mut j1 = SparseRows::new(1, 2);
        j1.rows[0] = vec![(1, 3.0)];
        let jac = vec![j0, j1];
        let mut out = [7.0];
        mul(&jac, &mut out, &[&[1.0, 5.0, 2.0], &[4.0, -1.0]]).unwrap();
        assert_eq!(out, [1.0 - 4.0 - 3.0]);
        let (mut a, mut b) = (vec![0.0; 3], vec![1.0, 1.0]);
        mul_transpose(&jac, &mut [&mut a, &mut b], &[2.0]).unwrap();
        assert_eq!(a, [2.0, 0.0, -4.0]);
        assert_eq!(b, [1.0, 7.0]);
        assert!(mul(&jac, &mut out, &[&[1.0, 5.0], &[4.0, -1.0]]).is_err());
        let p = orthogonal_projector(&[0.6, 0.8], 2.0);
        assert_eq!(p, [(1.0 - 0.6 * 0.6) * 2.0, -(0.6 * 0.8) * 2.0, -(0.8 * 0.6) * 2.0, (1.0 - 0.8 * 0.8) * 2.0]);
    }
}
