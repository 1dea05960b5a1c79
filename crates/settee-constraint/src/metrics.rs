//! Quality measures of a constraint solution, independent of any solver's own error measure:
//! the final violation `d = δfree + W·λ`, the complementarity error of the unilateral rows and
//! the Coulomb-cone violation of the friction blocks.

use settee_core::constraint::{ConstraintProblem, DenseMatrix, ResolutionKind};

/// One block of rows: first row, row count, law.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockDesc {
    pub start: usize,
    pub size: usize,
    pub kind: ResolutionKind,
    /// The block's own tolerance (`ConstraintResolution::tolerance`, 0: none).
    pub tolerance: f64,
}

/// The blocks of a problem as its resolutions describe them (row order; stops, as the solvers
/// do, at the first row without a resolution).
pub fn describe_blocks(p: &ConstraintProblem) -> Vec<BlockDesc> {
    p.blocks()
        .into_iter()
        .map(|(start, size)| {
            let r = p.resolutions[start].as_ref().expect("blocks() returns rows with a resolution");
            BlockDesc { start, size, kind: r.describe(), tolerance: r.tolerance() }
        })
        .collect()
}

/// `d = δfree + W·λ`, each row summed over the columns in increasing order.
pub fn violation(w: &DenseMatrix, dfree: &[f64], lambda: &[f64]) -> Vec<f64> {
    (0..w.n)
        .map(|i| {
            let mut d = dfree[i];
            for (wij, l) in w.row(i).iter().zip(lambda) {
                d += wij * l;
            }
            d
        })
        .collect()
}

/// `max |λ_i·d_i|` over the unilateral rows: the rows of `Unilateral` blocks and the normal
/// (first) row of `Friction` blocks. 0 when there is none.
pub fn complementarity_error(blocks: &[BlockDesc], lambda: &[f64], d: &[f64]) -> f64 {
    let mut e: f64 = 0.0;
    for b in blocks {
        let rows = match b.kind {
            ResolutionKind::Unilateral => b.start..b.start + b.size,
            ResolutionKind::Friction { .. } => b.start..b.start + 1,
            _ => continue,
        };
        for i in rows {
            // NaN (a diverged solve) propagates: f64::max would drop it.
            let v = (lambda[i] * d[i]).abs();
            e = if v.is_nan() || e.is_nan() { f64::NAN } else { e.max(v) };
        }
    }
    e
}

/// `max(0, max over friction blocks of ‖λ_t‖ − μ·λ_n)`, `λ_t` the block's rows after the first.
pub fn cone_violation(blocks: &[BlockDesc], lambda: &[f64]) -> f64 {
    let mut e: f64 = 0.0;
    for b in blocks {
        if let ResolutionKind::Friction { mu } = b.kind {
            let t = &lambda[b.start + 1..b.start + b.size];
            let norm_t = t.iter().map(|x| x * x).sum::<f64>().sqrt();
            let v = norm_t - mu * lambda[b.start];
            e = if v.is_nan() || e.is_nan() { f64::NAN } else { e.max(v) };
        }
    }
    e
}

/// The solution measures of one problem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolutionMetrics {
    pub complementarity: f64,
    pub cone: f64,
    /// `max |d_i|` over the bilateral rows (0 when none).
    pub bilateral: f64,
}

/// The measures of a problem's current `λ`.
pub fn solution_metrics(w: &DenseMatrix, dfree: &[f64], lambda: &[f64], blocks: &[BlockDesc]) -> SolutionMetrics {
    let d = violation(w, dfree, lambda);
    let mut bilateral: f64 = 0.0;
    for b in blocks.iter().filter(|b| b.kind == ResolutionKind::Bilateral) {
        for di in &d[b.start..b.start + b.size] {
            bilateral = bilateral.max(di.abs());
        }
    }
    SolutionMetrics { complementarity: complementarity_error(blocks, lambda, &d), cone: cone_violation(blocks, lambda), bilateral }
}

/// [`solution_metrics`] of a solver's problem.
pub fn problem_metrics(p: &ConstraintProblem) -> SolutionMetrics {
    solution_metrics(&p.w, &p.dfree, &p.lambda, &describe_blocks(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolution::tests::mat;
    use crate::resolution::{BilateralResolution, UnilateralWithFrictionResolution};

    #[test]
    fn violation_is_dfree_plus_w_lambda() {
        let w = mat(2, &[2.0, 1.0, 1.0, 3.0]);
        assert_eq!(violation(&w, &[-1.0, 0.5], &[1.0, 2.0]), vec![-1.0 + 2.0 + 2.0, 0.5 + 1.0 + 6.0]);
    }

    #[test]
    fn complementarity_counts_unilateral_and_normal_rows_only() {
        let blocks = [
            BlockDesc { start: 0, size: 1, kind: ResolutionKind::Unilateral, tolerance: 0.0 },
            BlockDesc { start: 1, size: 3, kind: ResolutionKind::Friction { mu: 0.5 }, tolerance: 0.0 },
            BlockDesc { start: 4, size: 1, kind: ResolutionKind::Bilateral, tolerance: 0.0 },
        ];
        let lambda = [2.0, 3.0, 100.0, 100.0, 50.0];
        let d = [0.25, -0.1, 7.0, 7.0, 9.0];
        // Row 0: 0.5; row 1: 0.3 (|negative d|); tangents and the bilateral row are ignored.
        assert_eq!(complementarity_error(&blocks, &lambda, &d), 0.5);
        let d2 = [0.0, -0.5, 7.0, 7.0, 9.0];
        assert_eq!(complementarity_error(&blocks, &lambda, &d2), 1.5);
        assert_eq!(complementarity_error(&[], &lambda, &d), 0.0);
        assert!(complementarity_error(&blocks, &[f64::NAN, 3.0, 0.0, 0.0, 0.0], &d).is_nan());
    }

    #[test]
    fn cone_violation_is_the_excess_tangential_force() {
        let blocks = [
            BlockDesc { start: 0, size: 3, kind: ResolutionKind::Friction { mu: 0.5 }, tolerance: 0.0 },
            BlockDesc { start: 3, size: 3, kind: ResolutionKind::Friction { mu: 1.0 }, tolerance: 0.0 },
        ];
        // Block 0: ‖(3,4)‖ = 5 against 0.5·4 = 2 → 3. Block 1: 5 against 10 → inside.
        let lambda = [4.0, 3.0, 4.0, 10.0, 3.0, 4.0];
        assert_eq!(cone_violation(&blocks, &lambda), 3.0);
        let inside = [10.0, 3.0, 4.0, 10.0, 3.0, 4.0];
        assert_eq!(cone_violation(&blocks, &inside), 0.0);
    }

    #[test]
    fn metrics_of_a_solved_problem_vanish() {
        // One frictional contact on W = diag(1, 2, 2), dfree = (−1, 0.2, 0): the exact solution
        // λ = (1, −0.1, 0) is inside the cone (0.1 ≤ 0.5); a bilateral row W = 4, dfree = 2 → λ = −0.5.
        let mut p = ConstraintProblem::default();
        p.clear(4);
        p.w.set(0, 0, 1.0);
        p.w.set(1, 1, 2.0);
        p.w.set(2, 2, 2.0);
        p.w.set(3, 3, 4.0);
        p.dfree.copy_from_slice(&[-1.0, 0.2, 0.0, 2.0]);
        p.resolutions[0] = Some(Box::new(UnilateralWithFrictionResolution::new(0.5)));
        p.resolutions[3] = Some(Box::new(BilateralResolution::new(None)));
        p.lambda.copy_from_slice(&[1.0, -0.1, 0.0, -0.5]);
        let m = problem_metrics(&p);
        assert_eq!(m, SolutionMetrics { complementarity: 0.0, cone: 0.0, bilateral: 0.0 });
        // A wrong λ shows in each measure.
        p.lambda.copy_from_slice(&[2.0, -1.5, 0.0, 0.0]);
        let m = problem_metrics(&p);
        // d_n = −1 + 2 = 1 → |2·1| = 2; ‖λ_t‖ = 1.5 − 0.5·2 = 0.5; bilateral d = 2.
        assert_eq!(m, SolutionMetrics { complementarity: 2.0, cone: 0.5, bilateral: 2.0 });
        let blocks = describe_blocks(&p);
        assert_eq!(blocks.len(), 2);
        assert_eq!((blocks[0].start, blocks[0].size, blocks[0].kind), (0, 3, ResolutionKind::Friction { mu: 0.5 }));
        assert_eq!((blocks[1].start, blocks[1].size, blocks[1].kind), (3, 1, ResolutionKind::Bilateral));
    }
}
