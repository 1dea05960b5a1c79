#![allow(clippy::needless_range_loop)]
mod common;

use common::Uniform;
use settee_linalg::{CsrMatrix, LinalgError, MatrixBuilder};

/// Emulates a FEM-like assembly: per "element" (pairs of nodes), 3x3 blocks,
/// plus scalar adds, with values depending on the step.
fn assemble(b: &mut MatrixBuilder, nodes: usize, step: u64) {
    let mut rng = common::Rng(1000 + step);
    for e in 0..nodes - 1 {
        let (a, c) = (e, e + 1);
        let mut k = [[0.0; 3]; 3];
        for (r, row) in k.iter_mut().enumerate() {
            for (s, v) in row.iter_mut().enumerate() {
                *v = if r == s { 10.0 + rng.unit() } else { rng.range(-1.0, 1.0) };
            }
        }
        let neg = k.map(|row| row.map(|v| -v));
        b.add_block3(3 * a, 3 * a, &k).unwrap();
        b.add_block3(3 * a, 3 * c, &neg).unwrap();
        b.add_block3(3 * c, 3 * a, &neg).unwrap();
        b.add_block3(3 * c, 3 * c, &k).unwrap();
    }
    for i in 0..3 * nodes {
        b.add(i, i, 0.1 * (step as f64 + 1.0)).unwrap(); // "mass"
    }
}

fn fresh(nodes: usize, step: u64) -> CsrMatrix {
    let mut b = MatrixBuilder::new(3 * nodes);
    assemble(&mut b, nodes, step);
    b.into_matrix()
}

#[test]
fn pattern_reuse_gives_identical_values_to_fresh_build() {
    let nodes = 7;
    let mut b = MatrixBuilder::new(3 * nodes);
    for step in 0..5 {
        b.clear_values();
        assemble(&mut b, nodes, step);
        let a = b.finish().clone();
        assert_eq!(b.pattern_changed(), step == 0, "step {step}");
        let f = fresh(nodes, step);
        assert_eq!(a.row_ptr(), f.row_ptr());
        assert_eq!(a.col_idx(), f.col_idx());
        // bitwise identical values
        let same = a.values().iter().zip(f.values()).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "step {step}");
    }
    assert_eq!(b.rebuild_count(), 1, "later steps must take the replay path");
}

#[test]
fn implicit_cycle_start_after_finish() {
    let mut b = MatrixBuilder::new(2);
    b.add(0, 0, 1.0).unwrap();
    b.add(1, 1, 2.0).unwrap();
    assert_eq!(b.finish().to_dense(), vec![1.0, 0.0, 0.0, 2.0]);
    // no clear_values: adding after finish starts a new cycle
    b.add(0, 0, 3.0).unwrap();
    b.add(1, 1, 4.0).unwrap();
    assert_eq!(b.finish().to_dense(), vec![3.0, 0.0, 0.0, 4.0]);
    assert_eq!(b.rebuild_count(), 1);
    assert!(!b.pattern_changed());
}

#[test]
fn divergent_sequence_falls_back_to_rebuild() {
    let mut b = MatrixBuilder::new(3);
    b.add(0, 0, 1.0).unwrap();
    b.add(0, 1, 2.0).unwrap();
    b.add(2, 2, 3.0).unwrap();
    b.finish();
    assert_eq!(b.rebuild_count(), 1);

    // Same prefix, then a different entry: new pattern.
    b.clear_values();
    b.add(0, 0, 1.5).unwrap();
    b.add(1, 0, 2.5).unwrap();
    b.add(2, 2, 3.5).unwrap();
    let a = b.finish().clone();
    assert!(b.pattern_changed());
    assert_eq!(b.rebuild_count(), 2);
    assert_eq!(a.to_dense(), vec![1.5, 0.0, 0.0, 2.5, 0.0, 0.0, 0.0, 0.0, 3.5]);

    // Same set of entries in another order: rebuilt, same pattern -> not changed.
    b.clear_values();
    b.add(2, 2, 1.0).unwrap();
    b.add(1, 0, 2.0).unwrap();
    b.add(0, 0, 3.0).unwrap();
    let a = b.finish().clone();
    assert_eq!(b.rebuild_count(), 3);
    assert!(!b.pattern_changed());
    assert_eq!(a.to_dense(), vec![3.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0]);

    // Fewer insertions than recorded (a prefix): rebuilt without the missing entry.
    b.clear_values();
    b.add(2, 2, 1.0).unwrap();
    b.add(1, 0, 2.0).unwrap();
    let a = b.finish().clone();
    assert_eq!(a.nnz(), 2);
    assert!(b.pattern_changed());
    assert_eq!(a.to_dense(), vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0]);

    // More insertions than recorded (recorded sequence is a prefix).
    b.clear_values();
    b.add(2, 2, 1.0).unwrap();
    b.add(1, 0, 2.0).unwrap();
    b.add(1, 0, 5.0).unwrap();
    let a = b.finish().clone();
    assert_eq!(a.get(1, 0), 7.0);
    assert_eq!(a.nnz(), 2);
    assert!(!b.pattern_changed());
}

#[test]
fn add_block_row_major_and_errors() {
    let mut b = MatrixBuilder::with_shape(3, 4);
    b.add_block(1, 1, 2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    assert!(matches!(b.add_block(0, 0, 2, 2, &[1.0; 3]), Err(LinalgError::DimensionMismatch { .. })));
    assert!(matches!(b.add_block(2, 2, 2, 2, &[1.0; 4]), Err(LinalgError::IndexOutOfBounds { .. })));
    assert!(matches!(b.add(3, 0, 1.0), Err(LinalgError::IndexOutOfBounds { .. })));
    assert!(matches!(b.add(0, 4, 1.0), Err(LinalgError::IndexOutOfBounds { .. })));
    assert!(b.add_block3(1, 2, &[[0.0; 3]; 3]).is_err());
    assert!(b.add_block(usize::MAX, 0, 2, 1, &[1.0, 1.0]).is_err());
    assert_eq!(b.insertion_count(), 6, "failed adds insert nothing");
    let a = b.finish();
    assert_eq!(a.to_dense(), vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0]);
}

#[test]
fn add_block3_zeros_are_part_of_the_pattern() {
    let mut b = MatrixBuilder::new(3);
    b.add_block3(0, 0, &[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).unwrap();
    assert_eq!(b.finish().nnz(), 9);
}

#[test]
fn builder_dirichlet_keeps_fast_path_consistent() {
    // Diagonal (1,1) is never assembled; dirichlet on dof 1 inserts it.
    let assemble = |b: &mut MatrixBuilder, s: f64| {
        b.add(0, 0, 4.0 * s).unwrap();
        b.add(0, 1, -s).unwrap();
        b.add(1, 0, -s).unwrap();
        b.add(1, 2, -2.0 * s).unwrap();
        b.add(2, 1, -2.0 * s).unwrap();
        b.add(2, 2, 5.0 * s).unwrap();
        b.add(0, 2, 0.5 * s).unwrap();
        b.add(2, 0, 0.5 * s).unwrap();
    };
    let mut b = MatrixBuilder::new(3);
    for step in 0..3 {
        let s = (step + 1) as f64;
        b.clear_values();
        assemble(&mut b, s);
        b.finish();
        b.apply_dirichlet(&[1]).unwrap();
        assert_eq!(b.pattern_changed(), step == 0, "step {step}");
        let a = b.matrix();
        assert_eq!(a.to_dense(), vec![4.0 * s, 0.0, 0.5 * s, 0.0, 1.0, 0.0, 0.5 * s, 0.0, 5.0 * s], "step {step}");
        assert_eq!(a.nnz(), 9);
    }
    assert_eq!(b.rebuild_count(), 1);
    assert!(b.apply_dirichlet(&[3]).is_err());
}

#[test]
fn empty_builder() {
    let mut b = MatrixBuilder::new(0);
    assert_eq!(b.finish().nnz(), 0);
    let mut b = MatrixBuilder::new(4);
    let a = b.finish();
    assert_eq!(a.nnz(), 0);
    assert_eq!(a.row_ptr(), &[0, 0, 0, 0, 0]);
}

/// One call of an assembly: `(kind, i0, j0, value seed)`, kind 0 = `add`,
/// 1 = `add_block3`, 2 = `add_block` 2x3.
type Call = (u8, usize, usize, u32);

fn play(b: &mut MatrixBuilder, calls: &[Call], scale: f64, log: &mut Vec<(usize, usize, f64)>) {
    for &(kind, i0, j0, seed) in calls {
        let v = |q: usize| ((seed as f64) * 0.37 + q as f64 * 1.3).sin() * scale;
        match kind {
            0 => {
                b.add(i0, j0, v(0)).unwrap();
                log.push((i0, j0, v(0)));
            }
            1 => {
                let blk = [[v(0), v(1), v(2)], [v(3), v(4), v(5)], [v(6), v(7), v(8)]];
                b.add_block3(i0, j0, &blk).unwrap();
                for (r, row) in blk.iter().enumerate() {
                    for (c, &x) in row.iter().enumerate() {
                        log.push((i0 + r, j0 + c, x));
                    }
                }
            }
            _ => {
                let data: Vec<f64> = (0..6).map(v).collect();
                b.add_block(i0, j0, 2, 3, &data).unwrap();
                for r in 0..2 {
                    for c in 0..3 {
                        log.push((i0 + r, j0 + c, data[r * 3 + c]));
                    }
                }
            }
        }
    }
}

/// The same insertions as `calls`, made with scalar `add`s only.
fn as_scalar_calls(calls: &[Call]) -> Vec<(usize, usize, u32, usize)> {
    let mut out = Vec::new();
    for &(kind, i0, j0, seed) in calls {
        let (rows, cols) = match kind {
            0 => (1, 1),
            1 => (3, 3),
            _ => (2, 3),
        };
        for r in 0..rows {
            for c in 0..cols {
                out.push((i0 + r, j0 + c, seed, r * cols + c));
            }
        }
    }
    out
}

fn call_strategy() -> impl Strategy<Value = Call> {
    (0u8..3, 0usize..5, 0usize..5, 0u32..1000)
}

fn assert_bitwise(a: &CsrMatrix, log: &[(usize, usize, f64)], what: &str) {
    let f = CsrMatrix::from_triplets(a.nrows(), a.ncols(), log).unwrap();
    assert!(a.same_pattern(&f), "{what}: pattern");
    assert!(a.values().iter().zip(f.values()).all(|(p, q)| p.to_bits() == q.to_bits()), "{what}: values");
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Cycles whose call sequences are the recorded one, a prefix of it, an
    /// extension, a modified copy, or the same insertions made through other
    /// calls: every cycle gives bitwise the matrix of a fresh build.
    #[test]
    fn prop_builder_cycles_equal_fresh_builds(
        base in proptest::collection::vec(call_strategy(), 0..25),
        extra in proptest::collection::vec(call_strategy(), 1..6),
        cut in 0usize..25,
        change_at in 0usize..25,
        changed in call_strategy(),
        dofs in proptest::collection::vec(0usize..7, 0..3),
    ) {
        let n = 7;
        let mut b = MatrixBuilder::new(n);
        let cut = cut.min(base.len());
        let mut modified = base.clone();
        if !modified.is_empty() {
            let at = change_at % modified.len();
            modified[at] = changed;
        }
        let mut extended = base.clone();
        extended.extend_from_slice(&extra);
        let sequences: Vec<Vec<Call>> = vec![
            base.clone(),
            base.clone(),
            base[..cut].to_vec(),
            base.clone(),
            extended.clone(),
            extended,
            modified.clone(),
            base.clone(),
            modified,
            base.clone(),
        ];
        for (step, seq) in sequences.iter().enumerate() {
            let scale = 1.0 + step as f64;
            b.clear_values();
            let mut log = Vec::new();
            play(&mut b, seq, scale, &mut log);
            let a = b.finish().clone();
            if dofs.is_empty() {
                assert_bitwise(&a, &log, &format!("step {step}"));
            } else {
                // Diagonal slots inserted by apply_dirichlet stay in the
                // pattern: compare the values only.
                let f = CsrMatrix::from_triplets(n, n, &log).unwrap();
                let bits = |m: &CsrMatrix| m.to_dense().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                prop_assert_eq!(bits(&a), bits(&f), "step {}", step);
            }
            if !dofs.is_empty() {
                // Dirichlet on the finished matrix, cached from step to step.
                b.apply_dirichlet(&dofs).unwrap();
                let mut expected = a.clone();
                expected.apply_dirichlet(&dofs).unwrap();
                prop_assert_eq!(b.matrix().to_dense(), expected.to_dense());
            }
        }
        // The same insertions through scalar calls, then block calls again.
        for step in 0..3 {
            b.clear_values();
            let mut log = Vec::new();
            if step == 1 {
                for (i, j, seed, q) in as_scalar_calls(&base) {
                    let v = ((seed as f64) * 0.37 + q as f64 * 1.3).sin();
                    b.add(i, j, v).unwrap();
                    log.push((i, j, v));
                }
            } else {
                play(&mut b, &base, 1.0, &mut log);
            }
            let a = b.finish().clone();
            let f = CsrMatrix::from_triplets(n, n, &log).unwrap();
            let bits = |m: &CsrMatrix| m.to_dense().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&a), bits(&f), "scalar step {}", step);
            if dofs.is_empty() {
                assert_bitwise(&a, &log, &format!("scalar step {step}"));
            }
        }
    }
}
