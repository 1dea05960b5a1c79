//! Micro timings (not run by default): `cargo test -p settee-linalg --release --test timing -- --ignored --nocapture`.
mod common;

use settee_linalg::{DirectKind, DirectSolver, MatrixBuilder, Ordering};
use std::time::Instant;

fn grid_assembly(b: &mut MatrixBuilder, g: usize, step: f64) {
    let idx = |x: usize, y: usize, z: usize| (x * g + y) * g + z;
    let k = [[4.0 + step, 0.5, 0.25], [0.5, 4.0 + step, 0.5], [0.25, 0.5, 4.0 + step]];
    let neg = k.map(|r| r.map(|v| -v / 6.0));
    for x in 0..g {
        for y in 0..g {
            for z in 0..g {
                let i = idx(x, y, z);
                b.add_block3(3 * i, 3 * i, &k).unwrap();
                let mut nb = |j: usize| b.add_block3(3 * i, 3 * j, &neg).unwrap();
                if x > 0 {
                    nb(idx(x - 1, y, z));
                }
                if x + 1 < g {
                    nb(idx(x + 1, y, z));
                }
                if y > 0 {
                    nb(idx(x, y - 1, z));
                }
                if y + 1 < g {
                    nb(idx(x, y + 1, z));
                }
                if z > 0 {
                    nb(idx(x, y, z - 1));
                }
                if z + 1 < g {
                    nb(idx(x, y, z + 1));
                }
            }
        }
    }
}

#[test]
#[ignore]
fn micro_timings() {
    let g = 12;
    let n = 3 * g * g * g;
    let mut b = MatrixBuilder::new(n);
    let t = Instant::now();
    grid_assembly(&mut b, g, 0.0);
    b.finish();
    println!("n = {n}, nnz = {}", b.matrix().nnz());
    println!("first assembly (record + build): {:?}", t.elapsed());
    let t = Instant::now();
    for s in 1..=10 {
        b.clear_values();
        grid_assembly(&mut b, g, s as f64);
        b.finish();
    }
    println!("replay assembly: {:?} per step", t.elapsed() / 10);
    b.apply_dirichlet(&[0, 1, 2]).unwrap();
    let a = b.matrix().clone();
    let rhs = common::random_vec(n, 1);
    for kind in [DirectKind::Ldlt, DirectKind::Llt, DirectKind::Lu, DirectKind::Qr] {
        for ord in [Ordering::Natural, Ordering::Amd] {
            let mut s = DirectSolver::new(kind, ord);
            let t = Instant::now();
            s.factorize(&a).unwrap();
            let t1 = t.elapsed();
            let t = Instant::now();
            s.factorize(&a).unwrap();
            let t2 = t.elapsed();
            let mut x = rhs.clone();
            let t = Instant::now();
            s.solve_in_place(&mut x).unwrap();
            println!("{kind:?}/{ord:?}: symbolic+numeric {t1:?}, numeric only {t2:?}, solve {:?}, L_nnz {:?}", t.elapsed(), s.l_nnz());
        }
    }
}
