//! `settee`: run SOFA scenes, check them, compare them with SOFA's references.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use settee::constraint_export::{ExportObserver, SolverStatsPrinter};
use settee::regress::{self, SuiteLayout};
use settee::run::{simulate, ProgressBar, RunObserver};
use settee_core::Severity;

#[derive(Parser)]
#[command(name = "settee", version, about = "Runs SOFA XML scenes and compares them with SOFA's reference trajectories")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scene.
    Run {
        scene: PathBuf,
        /// Number of steps.
        #[arg(long, default_value_t = 100)]
        steps: usize,
        /// Time step (overrides the root node's dt).
        #[arg(long)]
        dt: Option<f64>,
        /// Extra directory searched for data files (meshes, includes); repeatable.
        #[arg(long = "data-dir")]
        data_dir: Vec<PathBuf>,
        /// Write the states SOFA's regression test selects into DIR, in SOFA's reference format.
        #[arg(long)]
        dump: Option<PathBuf>,
        /// Dump mapped states too.
        #[arg(long, requires = "dump")]
        dump_mapped: bool,
        /// Dump every K steps (default: T=0 and the start of the last step, as SOFA's references).
        #[arg(long, requires = "dump")]
        dump_every: Option<usize>,
        /// Print the time per step and per stage, and per step the constraint solvers'
        /// iterations, error, complementarity error and cone violation.
        #[arg(long)]
        timing: bool,
        /// After the constraint solve of step STEP (1-based; `7`, `3,9`, `10-20`), write the
        /// constraint problem (W, dfree, blocks, λ, error history) into DIR
        /// (format: docs/constraint-solvers.md).
        #[arg(long, num_args = 2, value_names = ["STEP", "DIR"])]
        export_constraint_problem: Option<Vec<String>>,
        /// Data values that do not parse are warnings (the Data keeps its default), not errors.
        #[arg(long)]
        lenient: bool,
    },
    /// Load and initialise scenes; report unsupported components and bad Data.
    Check {
        scenes: Vec<PathBuf>,
        #[arg(long = "data-dir")]
        data_dir: Vec<PathBuf>,
        /// Data values that do not parse are warnings (the Data keeps its default), not errors.
        #[arg(long)]
        lenient: bool,
    },
    /// Run SOFA's regression lists (a `.regression-tests` file or a directory of them).
    Regress {
        list_or_dir: PathBuf,
        /// Only scenes whose path contains this text.
        #[arg(long)]
        filter: Option<String>,
        /// Write the results as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write the conformance table as Markdown.
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// A file listing scenes that must pass (one per line); exit non-zero if one does not.
        #[arg(long)]
        require: Option<PathBuf>,
        /// Run only the scenes listed in this file (one per line, as in conformance/passing.txt).
        #[arg(long)]
        only: Option<PathBuf>,
        /// Number of scenes run in parallel (default: number of cores).
        #[arg(short, long)]
        jobs: Option<usize>,
        /// SOFA's times per step (Markdown table), shown beside Settee's with their ratio.
        /// Default: `perf/sofa-timings.md` beside the suite directory, when it exists.
        #[arg(long)]
        sofa_timings: Option<PathBuf>,
    },
    /// List components with their Data (type, default, help).
    Doc {
        component: Option<String>,
        /// Markdown output (the reference in docs/components.md).
        #[arg(long)]
        markdown: bool,
    },
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("off")).init();
    let cli = Cli::parse();
    match cli.command {
        Command::Run { scene, steps, dt, data_dir, dump, dump_mapped, dump_every, timing, export_constraint_problem, lenient } => {
            let export = match export_constraint_problem.as_deref() {
                Some([steps_arg, dir]) => match settee_constraint::export::parse_steps(steps_arg) {
                    Ok(list) => Some((list, PathBuf::from(dir))),
                    Err(e) => {
                        eprintln!("error: --export-constraint-problem {steps_arg}: {e}");
                        return ExitCode::FAILURE;
                    }
                },
                _ => None,
            };
            let options = settee::LoadOptions { lenient };
            run(scene, steps, dt, data_dir, dump, dump_mapped, dump_every, timing, export, &options)
        }
        Command::Check { scenes, data_dir, lenient } => check(scenes, data_dir, &settee::LoadOptions { lenient }),
        Command::Regress { list_or_dir, filter, json, markdown, require, only, jobs, sofa_timings } => {
            regress_cmd(list_or_dir, filter, json, markdown, require, only, jobs, sofa_timings)
        }
        Command::Doc { component, markdown } => match settee::doc::document(&settee::factory(), component.as_deref(), markdown) {
            Ok(s) => {
                print!("{s}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn print_warnings(scene: &settee_core::Scene) {
    for m in &scene.messages {
        if m.severity >= Severity::Warning {
            eprintln!("{m}");
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    scene_path: PathBuf,
    steps: usize,
    dt: Option<f64>,
    data_dir: Vec<PathBuf>,
    dump: Option<PathBuf>,
    dump_mapped: bool,
    dump_every: Option<usize>,
    timing: bool,
    export: Option<(Vec<usize>, PathBuf)>,
    options: &settee::LoadOptions,
) -> ExitCode {
    if let Some(last) = export.as_ref().and_then(|(l, _)| l.last()) {
        if *last > steps {
            eprintln!("error: --export-constraint-problem asks for step {last} but only {steps} steps are run (--steps)");
            return ExitCode::FAILURE;
        }
    }
    let factory = settee::factory();
    let mut loaded = match settee::load_with(&scene_path, &factory, &data_dir, options) {
        Ok(l) => l,
        Err(f) => {
            for d in &f.diagnostics {
                if d.severity >= Severity::Warning {
                    eprintln!("{d}");
                }
            }
            eprintln!("error: could not load {}", scene_path.display());
            return ExitCode::FAILURE;
        }
    };
    print_warnings(&loaded.scene);
    let scene = &mut loaded.scene;
    if let Some(dt) = dt {
        scene.node_mut(settee_core::Scene::ROOT).context.dt = dt;
        scene.propagate_context();
    }
    scene.timing_enabled = timing;
    let dt = scene.root().context.dt;

    // Observers run in this order around every step.
    let mut observers: Vec<Box<dyn RunObserver>> = Vec::new();
    if let Some(dir) = &dump {
        match settee::dump::DumpObserver::create(scene, &scene_path, dir, dump_mapped, steps, dump_every) {
            Ok(d) => observers.push(Box::new(d)),
            Err(e) => {
                eprintln!("error: cannot write dumps into {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if let Some((list, dir)) = export {
        observers.push(Box::new(ExportObserver::new(list, dir, scene_path.clone())));
    }
    if timing {
        observers.push(Box::new(SolverStatsPrinter));
    }
    if let Some(bar) = ProgressBar::on_terminal(steps) {
        observers.push(Box::new(bar));
    }

    let summary = match simulate(scene, steps, &mut observers) {
        Ok(s) => s,
        Err(e) => {
            drop(observers); // ends the progress line
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    for p in &summary.written {
        println!("wrote {}", p.display());
    }
    let elapsed = summary.elapsed;
    println!(
        "{} steps of {} s in {:.3} s ({:.3} ms/step), t = {}",
        steps,
        dt,
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e3 / steps.max(1) as f64,
        scene.root().context.time
    );
    if timing {
        println!("{:<24} {:>12} {:>10}", "stage", "total ms", "ms/step");
        for (stage, d, _) in &scene.timers.stages {
            println!("{:<24} {:>12.3} {:>10.4}", stage, d.as_secs_f64() * 1e3, d.as_secs_f64() * 1e3 / steps.max(1) as f64);
        }
    }
    ExitCode::SUCCESS
}

fn check(scenes: Vec<PathBuf>, data_dir: Vec<PathBuf>, options: &settee::LoadOptions) -> ExitCode {
    let factory = settee::factory();
    let mut ok = true;
    for path in scenes {
        match settee::load_with(&path, &factory, &data_dir, options) {
            Ok(l) => {
                let warnings: Vec<_> = l.scene.messages.iter().filter(|m| m.severity >= Severity::Warning).collect();
                for w in &warnings {
                    println!("{w}");
                }
                println!("{}: supported ({} components, {} warnings)", path.display(), l.scene.components.len(), warnings.len());
            }
            Err(f) => {
                ok = false;
                for d in f.diagnostics.iter().filter(|d| d.severity >= Severity::Warning) {
                    println!("{d}");
                }
                let n = f.diagnostics.iter().filter(|d| d.unsupported).count();
                println!(
                    "{}: NOT supported ({} unsupported components/features, {} errors)",
                    path.display(),
                    n,
                    f.diagnostics.iter().filter(|d| d.severity == Severity::Error).count()
                );
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn read_scene_list(path: &std::path::Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_string).collect())
}

#[allow(clippy::too_many_arguments)]
fn regress_cmd(
    path: PathBuf,
    filter: Option<String>,
    json: Option<PathBuf>,
    markdown: Option<PathBuf>,
    require: Option<PathBuf>,
    only: Option<PathBuf>,
    jobs: Option<usize>,
    sofa_timings: Option<PathBuf>,
) -> ExitCode {
    let timings = match sofa_timings {
        Some(p) => match regress::SofaTimings::load(&p) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read SOFA timings {}: {e}", p.display());
                return ExitCode::FAILURE;
            }
        },
        None => {
            let suite_dir = if path.is_file() { path.parent().map(|p| p.to_path_buf()).unwrap_or_default() } else { path.clone() };
            let guess = suite_dir.join("../perf/sofa-timings.md");
            regress::SofaTimings::load(&guess).unwrap_or_default()
        }
    };
    let only = match only.as_deref().map(read_scene_list).transpose() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(j) = jobs {
        let _ = rayon::ThreadPoolBuilder::new().num_threads(j.max(1)).build_global();
    }
    let lists = match regress::find_lists(&path) {
        Ok(l) if !l.is_empty() => l,
        Ok(_) => {
            eprintln!("error: no *.regression-tests list in {}", path.display());
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let mut jobs_list = Vec::new();
    for l in lists {
        let list = match settee_regress::RegressionList::from_file(&l) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        for p in &list.problems {
            eprintln!("warning: {}: {p}", l.display());
        }
        // Topology lists compare topologies, not states; they are not run by this driver yet.
        if l.file_name().is_some_and(|n| n.to_string_lossy().contains("Topology")) {
            eprintln!("note: {} holds topology-regression scenes; topology comparison is not supported yet", l.display());
            continue;
        }
        let layout = SuiteLayout::for_list(&list);
        for e in list.entries {
            let listed = only.as_ref().is_none_or(|o| o.contains(&e.scene));
            if listed && filter.as_deref().is_none_or(|f| e.scene.contains(f)) {
                jobs_list.push((layout.clone(), e));
            }
        }
    }
    let factory = settee::factory();
    let t0 = Instant::now();
    let mut outcomes = regress::run_all(&factory, &jobs_list);
    timings.annotate(&mut outcomes);
    for o in &outcomes {
        println!("{}", regress::format_row(o));
    }
    let pass = outcomes.iter().filter(|o| o.status == regress::Status::Pass).count();
    let unsupported = outcomes.iter().filter(|o| o.status == regress::Status::Unsupported).count();
    println!(
        "{pass} passed, {} failed, {unsupported} unsupported ({} scenes, {:.1} s)",
        outcomes.len() - pass - unsupported,
        outcomes.len(),
        t0.elapsed().as_secs_f64()
    );
    if let Some(j) = json {
        if let Err(e) = std::fs::write(&j, serde_json::to_string_pretty(&outcomes).unwrap_or_default()) {
            eprintln!("error: cannot write {}: {e}", j.display());
            return ExitCode::FAILURE;
        }
    }
    if let Some(m) = markdown {
        if let Err(e) = std::fs::write(&m, regress::markdown(&outcomes)) {
            eprintln!("error: cannot write {}: {e}", m.display());
            return ExitCode::FAILURE;
        }
    }
    if let Some(r) = require {
        let required = match read_scene_list(&r) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut missing = Vec::new();
        for line in &required {
            match outcomes.iter().find(|o| &o.scene == line) {
                Some(o) if o.status == regress::Status::Pass => {}
                Some(o) => missing.push(format!("{line}: {}", o.status)),
                None => missing.push(format!("{line}: not run (not in the lists, or filtered out)")),
            }
        }
        if !missing.is_empty() {
            eprintln!("error: {} scene(s) listed in {} no longer pass:", missing.len(), r.display());
            for m in missing {
                eprintln!("  {m}");
            }
            return ExitCode::FAILURE;
        }
        println!("ratchet: every scene of {} passes", r.display());
    }
    ExitCode::SUCCESS
}
