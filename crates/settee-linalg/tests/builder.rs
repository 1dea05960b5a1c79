#![allow(clippy::needless_range_loop)]
mod common;

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
                *v = if r == s {
                    10.0 + rng.unit()
                } else {
                    rng.range(-1.0, 1.0)
                };
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
        let same = a
            .values()
            .iter()
            .zip(f.values())
            .all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "step {step}");
    }
    assert_eq!(
        b.rebuild_count(),
        1,
        "later steps must take the replay path"
    );
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
    assert_eq!(
        a.to_dense(),
        vec![1.5, 0.0, 0.0, 2.5, 0.0, 0.0, 0.0, 0.0, 3.5]
    );

    // Same set of entries in another order: rebuilt, same pattern -> not changed.
    b.clear_values();
    b.add(2, 2, 1.0).unwrap();
    b.add(1, 0, 2.0).unwrap();
    b.add(0, 0, 3.0).unwrap();
    let a = b.finish().clone();
    assert_eq!(b.rebuild_count(), 3);
    assert!(!b.pattern_changed());
    assert_eq!(
        a.to_dense(),
        vec![3.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    );

    // Fewer insertions than recorded (a prefix): rebuilt without the missing entry.
    b.clear_values();
    b.add(2, 2, 1.0).unwrap();
    b.add(1, 0, 2.0).unwrap();
    let a = b.finish().clone();
    assert_eq!(a.nnz(), 2);
    assert!(b.pattern_changed());
    assert_eq!(
        a.to_dense(),
        vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    );

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
    b.add_block(1, 1, 2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    assert!(matches!(
        b.add_block(0, 0, 2, 2, &[1.0; 3]),
        Err(LinalgError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        b.add_block(2, 2, 2, 2, &[1.0; 4]),
        Err(LinalgError::IndexOutOfBounds { .. })
    ));
    assert!(matches!(
        b.add(3, 0, 1.0),
        Err(LinalgError::IndexOutOfBounds { .. })
    ));
    assert!(matches!(
        b.add(0, 4, 1.0),
        Err(LinalgError::IndexOutOfBounds { .. })
    ));
    assert!(b.add_block3(1, 2, &[[0.0; 3]; 3]).is_err());
    assert!(b.add_block(usize::MAX, 0, 2, 1, &[1.0, 1.0]).is_err());
    assert_eq!(b.insertion_count(), 6, "failed adds insert nothing");
    let a = b.finish();
    assert_eq!(
        a.to_dense(),
        vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0]
    );
}

#[test]
fn add_block3_zeros_are_part_of_the_pattern() {
    let mut b = MatrixBuilder::new(3);
    b.add_block3(0, 0, &[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        .unwrap();
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
        assert_eq!(
            a.to_dense(),
            vec![4.0 * s, 0.0, 0.5 * s, 0.0, 1.0, 0.0, 0.5 * s, 0.0, 5.0 * s],
            "step {step}"
        );
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
