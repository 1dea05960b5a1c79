//! Runs every constraint solver's iteration on exported problems (`settee run
//! --export-constraint-problem`), prints a Markdown table (iterations, time, final error,
//! complementarity error, cone violation) and writes one SVG plot of error against iteration
//! per problem.
//!
//! `cargo run --release -p settee-constraint --example solver_report -- [--svg-dir DIR] FILE_OR_DIR...`
//!
//! Each solver starts from λ = 0 with the problem's own tolerance and tolerance scaling, at
//! most 1000 iterations. The plot is plain SVG written here (no plotting dependency).

use std::path::{Path, PathBuf};
use std::time::Instant;

use settee_constraint::export::{self, ExportedProblem};
use settee_constraint::metrics::solution_metrics;
use settee_constraint::solvers::generic::DenseUnbuilt;
use settee_constraint::solvers::{
    block_gauss_seidel, gauss_seidel_lcp1, improved_jacobi, nlcp_gauss_seidel, nncg, unbuilt_gauss_seidel, ImprovedJacobiOptions, NlcpOptions,
};
use settee_core::constraint::ResolutionKind;

struct Run {
    name: &'static str,
    iterations: usize,
    converged: bool,
    error: f64,
    ms: f64,
    lambda: Vec<f64>,
    history: Vec<f64>,
}

fn run_solvers(e: &ExportedProblem) -> Vec<Run> {
    let mut out = Vec::new();
    let mut generic = |name: &'static str, f: &dyn Fn(&mut settee_core::constraint::ConstraintProblem) -> bool| {
        let Ok(mut p) = e.to_problem() else { return };
        p.max_iterations = 1000;
        let t = Instant::now();
        let converged = f(&mut p);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        out.push(Run { name, iterations: p.error_history.len(), converged, error: p.current_error, ms, lambda: p.lambda, history: p.error_history });
    };
    generic("BlockGaussSeidel", &|p| block_gauss_seidel(p).converged);
    generic("NNCG", &|p| nncg(p).converged);
    generic("UnbuiltGaussSeidel (W·f from the dense W)", &|p| {
        let seq: Vec<usize> = (0..p.n).collect();
        let mut ops = DenseUnbuilt { w: p.w.clone(), f: vec![0.0; p.n] };
        unbuilt_gauss_seidel(p, &seq, &mut ops).map(|o| o.converged).unwrap_or(false)
    });
    let ij = |spectral: bool, cr: bool| ImprovedJacobiOptions { use_spectral_correction: spectral, use_conjugate_residue: cr, ..Default::default() };
    generic("ImprovedJacobi", &|p| improved_jacobi(p, &ij(false, false)).converged);
    generic("ImprovedJacobi + spectral", &|p| improved_jacobi(p, &ij(true, false)).converged);
    generic("ImprovedJacobi + spectral + conj. residue", &|p| improved_jacobi(p, &ij(true, true)).converged);
    // LCP kernels: one μ for every contact (friction) or frictionless rows only.
    let mus: Vec<f64> = e.blocks.iter().filter_map(|b| if let ResolutionKind::Friction { mu } = b.kind { Some(mu) } else { None }).collect();
    let all_friction = mus.len() == e.blocks.len() && mus.windows(2).all(|w| w[0] == w[1]) && !mus.is_empty();
    let all_unilateral = e.blocks.iter().all(|b| b.kind == ResolutionKind::Unilateral) && !e.blocks.is_empty();
    let tol = if e.scale_tolerance && !e.all_verified { e.tolerance * e.n() as f64 } else { e.tolerance };
    if all_friction || all_unilateral {
        let mut f = vec![0.0; e.n()];
        let t = Instant::now();
        let r = if all_friction {
            let o = NlcpOptions { mu: mus[0], tolerance: tol, max_iterations: 1000, use_initial_f: false, min_w: 0.0, max_f: 0.0 };
            nlcp_gauss_seidel(&e.dfree, &e.w, &mut f, &o)
        } else {
            gauss_seidel_lcp1(&e.dfree, &e.w, &mut f, tol, 1000, 0.0, 0.0)
        };
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if let Ok(o) = r {
            let name = if all_friction { "LCP (nlcp_gaussseidel)" } else { "LCP (gaussSeidelLCP1)" };
            out.push(Run {
                name,
                iterations: o.iterations,
                converged: o.converged,
                error: o.errors.last().copied().unwrap_or(0.0),
                ms,
                lambda: f,
                history: o.errors,
            });
        }
    }
    out
}

fn svg(title: &str, runs: &[Run]) -> String {
    let (w, h, l, r, t, b) = (760.0, 440.0, 70.0, 300.0, 40.0, 50.0);
    let max_it = runs.iter().map(|r| r.history.len()).max().unwrap_or(1).max(2) as f64;
    let pos: Vec<f64> = runs.iter().flat_map(|r| r.history.iter().copied()).filter(|x| *x > 0.0 && x.is_finite()).collect();
    let lo = pos.iter().copied().fold(f64::INFINITY, f64::min).log10().floor();
    let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max).log10().ceil().max(lo + 1.0);
    let (pw, ph) = (w - l - r, h - t - b);
    let x = |i: f64| l + pw * (i - 1.0) / (max_it - 1.0);
    let y = |v: f64| t + ph * (hi - v.max(10f64.powf(lo)).log10()) / (hi - lo);
    let colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
    let mut s = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{l}\" y=\"22\" font-size=\"14\">{title}</text>\n");
    s += &format!("<rect x=\"{l}\" y=\"{t}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"black\"/>\n");
    let mut e = lo;
    while e <= hi {
        let yy = y(10f64.powf(e));
        s += &format!(
            "<line x1=\"{l}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">1e{e}</text>\n",
            l + pw,
            l - 5.0,
            yy + 4.0
        );
        e += 1.0;
    }
    s += &format!("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">iteration (1 … {max_it})</text>\n", l + pw / 2.0, h - 15.0);
    s += &format!("<text x=\"15\" y=\"{}\" transform=\"rotate(-90 15 {})\" text-anchor=\"middle\">solver error</text>\n", t + ph / 2.0, t + ph / 2.0);
    for (k, run) in runs.iter().enumerate() {
        let c = colors[k % colors.len()];
        let pts: Vec<String> = run.history.iter().enumerate().map(|(i, v)| format!("{:.1},{:.1}", x(i as f64 + 1.0), y(*v))).collect();
        s += &format!("<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"1.5\" points=\"{}\"/>\n", pts.join(" "));
        let ly = t + 16.0 * k as f64 + 10.0;
        s += &format!(
            "<line x1=\"{}\" x2=\"{}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"{c}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
            w - r + 10.0,
            w - r + 30.0,
            w - r + 35.0,
            ly + 4.0,
            run.name
        );
    }
    s + "</svg>\n"
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut svg_dir = None;
    if let Some(i) = args.iter().position(|a| a == "--svg-dir") {
        if i + 1 >= args.len() {
            eprintln!("error: --svg-dir needs a directory");
            std::process::exit(2);
        }
        svg_dir = Some(PathBuf::from(args.remove(i + 1)));
        args.remove(i);
    }
    let mut files = Vec::new();
    for a in &args {
        let p = Path::new(a);
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "scp"))
                .collect();
            v.sort();
            files.extend(v);
        } else {
            files.push(p.to_path_buf());
        }
    }
    if files.is_empty() {
        eprintln!("usage: solver_report [--svg-dir DIR] FILE_OR_DIR...");
        std::process::exit(2);
    }
    println!("| problem | rows | contacts | solver | iterations | converged | final error | ms | complementarity | cone violation |");
    println!("|---|---:|---:|---|---:|---|---:|---:|---:|---:|");
    for f in files {
        let e = match export::read(&f) {
            Ok(e) => e,
            Err(err) => {
                eprintln!("error: {err}");
                std::process::exit(1);
            }
        };
        let scene = Path::new(&e.scene).file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        let label = format!("{scene} step {}", e.step);
        let runs = run_solvers(&e);
        for r in &runs {
            let m = solution_metrics(&e.w, &e.dfree, &r.lambda, &e.blocks);
            println!(
                "| {label} | {} | {} | {} | {} | {} | {:.2e} | {:.2} | {:.2e} | {:.2e} |",
                e.n(),
                e.blocks.len(),
                r.name,
                r.iterations,
                if r.converged { "yes" } else { "no" },
                r.error,
                r.ms,
                m.complementarity,
                m.cone
            );
        }
        if let Some(dir) = &svg_dir {
            let _ = std::fs::create_dir_all(dir);
            let path = dir.join(format!("{scene}-step{}.svg", e.step));
            if let Err(err) = std::fs::write(&path, svg(&format!("{label}: {} rows, error vs iteration", e.n()), &runs)) {
                eprintln!("error: cannot write {}: {err}", path.display());
                std::process::exit(1);
            }
            eprintln!("wrote {}", path.display());
        }
    }
}
