//! What the Compliant plugin's mappings share (its `AssembledMapping`): `apply` assembles the
//! Jacobian of each input as a sparse matrix, `applyJ` and `applyJT` are products with it, and
//! the geometric stiffness, when a mapping has one, is a matrix assembled for a given output force.

use settee_core::component::SparseRows;
use settee_core::{SimError, SimResult};

use crate::common::check_len;

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

/// `out = Σ_p J_p·in_p`.
pub fn apply_j(jac: &[SparseRows], out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
    if jac.is_empty() {
        return Err(SimError::new("the mapping's Jacobian is not computed yet (the mapping was never applied)"));
    }
    if inputs.len() != jac.len() {
        return Err(SimError::new(format!("{} inputs lent, {} expected", inputs.len(), jac.len())));
    }
    let n = jac[0].nrows();
    check_len("the output velocities", out, n, 1)?;
    for (j, x) in jac.iter().zip(inputs) {
        check_len("the input velocities", x, j.ncols, 1)?;
    }
    for (i, o) in out.iter_mut().take(n).enumerate() {
        let mut t = 0.0;
        for (j, x) in jac.iter().zip(inputs) {
            for &(c, v) in &j.rows[i] {
                t += v * x[c];
            }
        }
        *o = t;
    }
    Ok(())
}

/// `in_p += J_pᵀ·out`.
pub fn apply_jt(jac: &[SparseRows], inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
    if jac.is_empty() {
        return Err(SimError::new("the mapping's Jacobian is not computed yet (the mapping was never applied)"));
    }
    if inputs.len() != jac.len() {
        return Err(SimError::new(format!("{} inputs lent, {} expected", inputs.len(), jac.len())));
    }
    check_len("the output forces", out, jac[0].nrows(), 1)?;
    for (j, f) in jac.iter().zip(inputs.iter_mut()) {
        check_len("the input forces", f, j.ncols, 1)?;
        j.add_mul_transpose(f, out);
    }
    Ok(())
}

/// The Jacobians of a mapping that does not carry forces (`mapForces` false): empty matrices.
pub fn empty_like(jac: &[SparseRows]) -> Vec<SparseRows> {
    jac.iter().map(|j| SparseRows::new(j.nrows(), j.ncols)).collect()
}

#[cfg(test)]
mod tests {
    use crate::common::MAPPING_READS;

    /// The Compliant mapping classes list the references the shared mapping code reads, and their
    /// reads pass the factory's check.
    #[test]
    fn compliant_mapping_classes_list_the_shared_references() {
        use crate::{dot_product, normalization, rigid_joint, safe_distance, winch};
        for class in [
            &rigid_joint::JOINT_CLASS,
            &rigid_joint::RIGID_RIGID_CLASS,
            &dot_product::DOT_CLASS,
            &dot_product::DOT_MULTI_CLASS,
            &dot_product::DOT_TARGET_CLASS,
            &normalization::CLASS,
            &winch::CLASS,
            &safe_distance::CLASS,
            &safe_distance::FROM_TARGET_CLASS,
        ] {
            for r in MAPPING_READS {
                assert!(class.reads.iter().any(|o| o.name == r.name && o.type_name == r.type_name), "{} does not list {r:?}", class.name);
            }
            settee_core::factory::check_reads(class).unwrap();
        }
    }
}
