//! Assembly + factorisation + solve of the global matrix of a hexahedral FEM
//! beam, the workload of SOFA's `FEMBAR_SparseLDLSolver` scene (4×4×20 nodes,
//! 960 unknowns) and of a larger 10×10×40 grid (12 000 unknowns).
//!
//! Run: `cargo bench -p settee-linalg --bench fem_grid`.
//!
//! Criterion (rather than the ad-hoc `tests/timing.rs`) because the
//! per-step costs measured here are in the 10 µs – 10 ms range, where one-shot
//! `Instant` timings are dominated by noise (frequency scaling, cache state of
//! the first iteration); criterion warms up, runs enough iterations for a
//! stable estimate, reports confidence intervals and compares against the
//! previous run (`--save-baseline` / `--baseline`) to show regressions.
//!
//! The matrix is built the way `settee-fem` + `settee-mass` + a fixed
//! constraint build it: per element, the 8×8 node blocks (3×3 each) of a
//! symmetric positive semi-definite element stiffness through
//! `add_block3` (row-major over the element's node pairs), then a lumped mass
//! on the diagonal, `finish`, and `apply_dirichlet` on the 3 DOFs of every
//! node of the `z = 0` end; the solver sees the matrix without its explicit
//! zeros (as `settee-linearsolver`'s direct solvers hand it over, `CsrMatrix::without_zeros`).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use settee_linalg::{DirectKind, DirectSolver, MatrixBuilder, Ordering};
use std::time::Duration;

#[path = "../tests/common/mod.rs"]
mod common;

/// A hexahedral grid of `nx × ny × nz` nodes (`(nx-1)(ny-1)(nz-1)` elements).
struct Grid {
    nodes: usize,
    elements: Vec<[usize; 8]>,
    fixed: Vec<usize>,
}

impl Grid {
    fn new(nx: usize, ny: usize, nz: usize) -> Self {
        Self { nodes: nx * ny * nz, elements: common::hex_grid_elements(nx, ny, nz), fixed: common::hex_grid_fixed(nx, ny) }
    }

    fn n(&self) -> usize {
        3 * self.nodes
    }

    /// One assembly cycle; `step` varies the values (not the pattern).
    fn assemble(&self, b: &mut MatrixBuilder, step: usize) {
        b.clear_values();
        // Element stiffness = (8 I - 1 1ᵀ) ⊗ S_e, a Kronecker product of
        // two positive semi-definite matrices.
        common::assemble_hex_grid(b, &self.elements, self.n(), 1.0 + 1e-3 * step as f64, 0.5, &self.fixed);
    }
}

fn rhs(n: usize) -> Vec<f64> {
    (0..n).map(|i| ((i as f64) * 0.37).sin()).collect()
}

fn bench_grid(c: &mut Criterion, label: &str, nx: usize, ny: usize, nz: usize, big: bool) {
    let grid = Grid::new(nx, ny, nz);
    let n = grid.n();
    let mut builder = MatrixBuilder::new(n);
    grid.assemble(&mut builder, 0);
    let a = builder.matrix().without_zeros();
    let b = rhs(n);

    let mut group = c.benchmark_group(format!("fem_grid_{label}"));
    if big {
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(8));
    } else {
        group.measurement_time(Duration::from_secs(4));
    }

    let mut step = 1;
    group.bench_function("assemble", |bch| {
        bch.iter(|| {
            grid.assemble(&mut builder, step);
            step += 1;
            black_box(builder.matrix().nnz())
        })
    });

    for kind in [DirectKind::Ldlt, DirectKind::Llt] {
        let mut solver = DirectSolver::new(kind, Ordering::Amd);
        solver.factorize(&a).unwrap();
        // Sanity: the residual of the solve is at round-off level.
        let mut x = vec![0.0; n];
        solver.solve(&b, &mut x).unwrap();
        let mut r = vec![0.0; n];
        a.mul_vec(&x, &mut r).unwrap();
        let res = r.iter().zip(&b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        assert!(res < 1e-9, "{kind:?}: residual {res}");
        if kind == DirectKind::Ldlt {
            eprintln!("{label}: n = {n}, nnz(A) = {}, nnz(L) = {:?}", a.nnz(), solver.l_nnz());
        }

        group.bench_function(BenchmarkId::new("factorize", format!("{kind:?}")), |bch| bch.iter(|| solver.factorize(black_box(&a)).unwrap()));
        group.bench_function(BenchmarkId::new("solve", format!("{kind:?}")), |bch| bch.iter(|| solver.solve(black_box(&b), &mut x).unwrap()));
        // A full linear-system step: assemble, hand over, factorise, solve.
        group.bench_function(BenchmarkId::new("step", format!("{kind:?}")), |bch| {
            bch.iter(|| {
                grid.assemble(&mut builder, step);
                step += 1;
                let m = builder.matrix().without_zeros();
                solver.factorize(&m).unwrap();
                solver.solve(&b, &mut x).unwrap();
                black_box(x[0])
            })
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    bench_grid(c, "4x4x20", 4, 4, 20, false);
    bench_grid(c, "10x10x40", 10, 10, 40, true);
}

criterion_group!(fem, benches);
criterion_main!(fem);
