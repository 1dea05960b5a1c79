//! Times SOFA's ImprovedJacobi iteration (spectral correction) on an exported problem and
//! prints a digest of λ and the error history, to check that kernel changes keep the bits.
//!
//! `cargo run --release -p settee-constraint --example ij_kernel -- FILE [ITERATIONS]`

use std::time::Instant;

use settee_constraint::export;
use settee_constraint::solvers::{improved_jacobi, ImprovedJacobiOptions};

fn digest(v: &[f64]) -> u64 {
    v.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, x| (h ^ x.to_bits()).wrapping_mul(0x100_0000_01b3))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(file) = args.get(1) else {
        eprintln!("usage: ij_kernel FILE [ITERATIONS]");
        std::process::exit(2);
    };
    let iterations: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let e = match export::read(std::path::Path::new(file)) {
        Ok(e) => e,
        Err(m) => {
            eprintln!("{file}: {m}");
            std::process::exit(1);
        }
    };
    let mut p = e.to_problem().expect("problem");
    let n = p.n;
    let zeros = p.w.data.iter().filter(|x| **x == 0.0).count();
    println!("{n} rows, W {:.1} MB, {:.1} % exact zeros", (n * n * 8) as f64 / 1e6, 100.0 * zeros as f64 / (n * n) as f64);
    if std::env::var_os("IJ_COMPARE_SPECTRUM").is_some() {
        use settee_constraint::solvers::{improved_jacobi::symmetric_eigenvalues, spectrum::largest_eigenvalue_modulus};
        let t = Instant::now();
        let dense = symmetric_eigenvalues(&p.w).into_iter().map(f64::abs).fold(0.0, f64::max);
        let td = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let fast = largest_eigenvalue_modulus(&p.w);
        let tf = t.elapsed().as_secs_f64();
        println!("max |μ|: dense {dense:e} in {td:.3} s, Lanczos {fast:e} in {tf:.3} s, relative difference {:e}", (fast - dense) / dense);
    }
    p.max_iterations = iterations;
    let opt = ImprovedJacobiOptions { use_spectral_correction: true, ..Default::default() };
    let t = Instant::now();
    let out = improved_jacobi(&mut p, &opt);
    let s = t.elapsed().as_secs_f64();
    println!(
        "{} iterations in {:.3} s ({:.2} ms/iteration), converged {}, error {:e}, λ digest {:016x}, history digest {:016x}",
        p.error_history.len(),
        s,
        1e3 * s / p.error_history.len().max(1) as f64,
        out.converged,
        p.current_error,
        digest(&p.lambda),
        digest(&p.error_history)
    );
}
