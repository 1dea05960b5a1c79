//! One iteration (sweep) of the constraint solvers on the frictional problem of
//! `scenes/spheres_on_sheet_lagrangian.scn` at its impact step (step 19: 838 contacts, 2,514
//! rows, dense W of 50.6 MB).
//!
//! `cargo bench -p settee --bench constraint_solvers`
//!
//! The problem is made at bench time by running the scene (about 20 s), not read from a file.
//! Throughput is reported as the bytes of W one sweep streams (n²·8): a block Gauss–Seidel
//! sweep reads every row of W once, so bytes/s against the machine's memory bandwidth says how
//! far the sweep is from its bound.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use settee_constraint::export::ExportedProblem;
use settee_constraint::solvers::generic::init_resolutions;
use settee_constraint::solvers::{gauss_seidel_sweep, improved_jacobi, nncg, ImprovedJacobiOptions};
use settee_core::simulation::animate;

const STEP: usize = 19;

fn impact_problem() -> ExportedProblem {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenes/spheres_on_sheet_lagrangian.scn");
    let factory = settee::factory();
    let mut loaded = settee::load(std::path::Path::new(path), &factory, &[]).unwrap_or_else(|f| panic!("{}", f.first_error()));
    let scene = &mut loaded.scene;
    let dt = scene.root().context.dt;
    for _ in 0..STEP {
        animate(scene, dt).expect("step");
    }
    let id = settee::constraint_export::constraint_solvers(scene)[0];
    let solver = scene.role_mut::<dyn settee_core::constraint::ConstraintSolver>(id).unwrap();
    ExportedProblem::from_problem(solver.last_problem().expect("a built solver"))
}

fn bench(c: &mut Criterion) {
    let e = impact_problem();
    let n = e.n();
    let bytes = (n * n * 8) as u64;
    println!("constraint problem: {n} rows, {} contacts, W = {:.1} MB", e.blocks.len(), bytes as f64 / 1e6);
    let mut g = c.benchmark_group("constraint_solvers");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(bytes));
    // One Gauss–Seidel sweep from the solver's own λ (a mid-solve state).
    let mut p = e.to_problem().unwrap();
    init_resolutions(&mut p);
    p.lambda.copy_from_slice(&e.lambda);
    let tol = p.effective_tolerance();
    g.bench_function("block_gauss_seidel_sweep", |b| {
        b.iter(|| {
            let (mut err, mut ok) = (0.0, true);
            gauss_seidel_sweep(&mut p, true, tol, &mut err, &mut ok);
            err
        })
    });
    // One NNCG iteration = its first (unmeasured) sweep; one ImprovedJacobi iteration (the
    // Jacobi residual over all of W, the block solves, the block errors).
    let mut p1 = e.to_problem().unwrap();
    p1.max_iterations = 1;
    g.bench_function("nncg_first_iteration", |b| {
        b.iter(|| {
            p1.lambda.fill(0.0);
            nncg(&mut p1).converged
        })
    });
    let mut p2 = e.to_problem().unwrap();
    p2.max_iterations = 1;
    g.bench_function("improved_jacobi_iteration", |b| b.iter(|| improved_jacobi(&mut p2, &ImprovedJacobiOptions::default()).converged));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
