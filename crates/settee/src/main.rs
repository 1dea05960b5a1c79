//! `settee`: run SOFA scenes, check them, compare them with SOFA's references.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use settee::constraint_export::{ExportObserver, SolverStatsPrinter};
use settee::regress::{self, SuiteLayout};
use settee::run::{simulate, ProgressBar, ProgressLines, RunObserver};
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
        /// Run until the simulated time T (⌈(T − t0)/dt⌉ steps); not with --steps.
        #[arg(long, value_name = "T", conflicts_with = "steps", allow_negative_numbers = true)]
        time: Option<f64>,
        /// Override a Data before initialisation: PATH.data=VALUE (`root/beam/mass.totalMass=2`,
        /// `@/beam/ode.rayleighStiffness=0.1`, `.dt=0.02`); repeatable.
        #[arg(long = "set", value_name = "PATH.data=VALUE")]
        set: Vec<settee::Override>,
        /// Time step (overrides the root node's dt); must be positive and finite.
        #[arg(long, allow_negative_numbers = true)]
        dt: Option<f64>,
        /// Extra directory searched for data files (meshes, includes); repeatable.
        #[arg(long = "data-dir")]
        data_dir: Vec<PathBuf>,
        /// Write the states SOFA's regression test selects into DIR, in SOFA's reference format.
        #[arg(long)]
        dump: Option<PathBuf>,
        /// Dump mapped states (with `--dump`) or mapped nodes' topologies (with `--dump-topology`) too.
        #[arg(long)]
        dump_mapped: bool,
        /// Dump every K steps, K ≥ 1 (default: T=0 and the start of the last step, as SOFA's references).
        #[arg(long, requires = "dump", value_parser = settee::dump::parse_period)]
        dump_every: Option<usize>,
        /// Also dump the final state, after the last step (T = steps·dt).
        #[arg(long, requires = "dump")]
        dump_final: bool,
        /// Write every topology container SOFA's WriteTopology selects into DIR at every step
        /// start, in SOFA's topology reference format (nodes under a mapping only with
        /// `--dump-mapped`).
        #[arg(long, value_name = "DIR")]
        dump_topology: Option<PathBuf>,
        /// Print the time per step and per stage, and per step the constraint solvers'
        /// iterations, error, complementarity error and cone violation.
        #[arg(long)]
        timing: bool,
        /// After the constraint solve of step STEP (1-based; `7`, `3,9`, `10-20`), write the
        /// constraint problem (W, dfree, blocks, λ, error history) into DIR
        /// (format: docs/constraint-solvers.md).
        #[arg(long, num_args = 2, value_names = ["STEP", "DIR"])]
        export_constraint_problem: Option<Vec<String>>,
        /// Write every mechanical state as ParaView files into DIR: a .vtu per state and
        /// exported step, and a <scene>.pvd series listing them with their times.
        #[arg(long, value_name = "DIR")]
        vtk: Option<PathBuf>,
        /// Export every K steps for --vtk (default 1; t = 0 and the last step always).
        #[arg(long, requires = "vtk", value_name = "K", default_value_t = 1)]
        vtk_every: usize,
        /// Directory where the scene's exporters (VTKExporter, MeshExporter, STLExporter, …)
        /// write the files they name relatively (default: the current directory, as SOFA).
        #[arg(long, value_name = "DIR")]
        output_dir: Option<PathBuf>,
        /// Leave components of unknown classes out (reported as warnings) instead of refusing
        /// the scene.
        #[arg(long)]
        skip_unknown: bool,
        /// Data values that do not parse are warnings (the Data keeps its default), not errors.
        #[arg(long)]
        lenient: bool,
    },
    /// Simulate a scene and write a self-contained HTML page that replays it in 3D (WebGL).
    View {
        scene: PathBuf,
        /// Number of steps.
        #[arg(long, default_value_t = 100)]
        steps: usize,
        /// The page to write (default: `<scene file stem>.html` in the current directory).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Extra directory searched for data files (meshes, includes); repeatable.
        #[arg(long = "data-dir")]
        data_dir: Vec<PathBuf>,
    },
    /// Run a scene live in the browser: play, pause, step, reset, drag bodies with the mouse,
    /// edit Data, plots, and save the run as a replay page (a local server on 127.0.0.1).
    Studio {
        /// A SOFA XML scene or a Python scene (`.py`).
        scene: PathBuf,
        /// Port to listen on (default: a free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Do not open a browser (the address is printed in any case).
        #[arg(long)]
        no_open: bool,
        /// Extra directory searched for data files (meshes, includes); repeatable.
        #[arg(long = "data-dir")]
        data_dir: Vec<PathBuf>,
    },
    /// Load and initialise scenes; report unsupported components and bad Data.
    Check {
        scenes: Vec<PathBuf>,
        #[arg(long = "data-dir")]
        data_dir: Vec<PathBuf>,
        /// Override a Data before initialisation (as `run --set`); repeatable.
        #[arg(long = "set", value_name = "PATH.data=VALUE")]
        set: Vec<settee::Override>,
        /// Report components of unknown classes as warnings (as `run --skip-unknown` skips them).
        #[arg(long)]
        skip_unknown: bool,
        /// Data values that do not parse are warnings (the Data keeps its default), not errors.
        #[arg(long)]
        lenient: bool,
    },
    /// Print Data values of an initialised scene (`root/beam/box.indices`, `@/beam/dofs.position`).
    Print {
        scene: PathBuf,
        /// PATH.data: a node path, a component of that node and one of its Data.
        #[arg(required = true, value_name = "PATH.data")]
        data: Vec<String>,
        #[arg(long = "data-dir")]
        data_dir: Vec<PathBuf>,
        /// Override a Data before initialisation (as `run --set`); repeatable.
        #[arg(long = "set", value_name = "PATH.data=VALUE")]
        set: Vec<settee::Override>,
    },
    /// Print the scene graph: nodes, components (class, template, name) and their key Data.
    Tree {
        scene: PathBuf,
        #[arg(long = "data-dir")]
        data_dir: Vec<PathBuf>,
        /// Override a Data before initialisation (as `run --set`); repeatable.
        #[arg(long = "set", value_name = "PATH.data=VALUE")]
        set: Vec<settee::Override>,
    },
    /// Plot DOF coordinates over time from dumps (`run --dump`) or Monitor `_x.txt` files, or the
    /// kinetic energy and constraint solver iterations/residual of a run (`--run SCENE`).
    Plot {
        /// Dump files (`*_mstate.txt.gz`), dump directories, or Monitor `_x.txt` files.
        #[arg(required_unless_present = "run")]
        inputs: Vec<PathBuf>,
        /// Output file: `.svg` or `.png`.
        #[arg(short, long)]
        output: PathBuf,
        /// DOF indices to draw (`--dof 0,5`); default 0.
        #[arg(long, value_delimiter = ',', default_value = "0")]
        dof: Vec<usize>,
        /// Coordinates to draw: x, y, z, norm (`--coord y` or `--coord x,z`); default x,y,z.
        #[arg(long, value_delimiter = ',', default_value = "x,y,z")]
        coord: Vec<settee::plot::Coord>,
        /// Only the dumps of this state (its name in the dump file name).
        #[arg(long)]
        state: Option<String>,
        /// Run this scene and plot its kinetic energy (and constraint solver statistics).
        #[arg(long, value_name = "SCENE", conflicts_with_all = ["inputs", "state"])]
        run: Option<PathBuf>,
        /// Steps of `--run`.
        #[arg(long, default_value_t = 100, requires = "run")]
        steps: usize,
        #[arg(long = "data-dir", requires = "run")]
        data_dir: Vec<PathBuf>,
        /// Override a Data before initialisation (as `run --set`); repeatable.
        #[arg(long = "set", value_name = "PATH.data=VALUE", requires = "run")]
        set: Vec<settee::Override>,
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
        /// Exit non-zero when a scene is unsupported too (failures and errors always do).
        #[arg(long)]
        unsupported_fails: bool,
    },
    /// Time the step on the scene sets of SOFA's timings file, beside SOFA's recorded ms/step:
    /// the "Demo set", or with `--suite` the "Suite side by side" table. Initialisation is not
    /// timed (as SOFA's batch runner reports); each scene runs its listed number of steps.
    Bench {
        /// The suite's scenes ("Suite side by side") instead of the demo set.
        #[arg(long)]
        suite: bool,
        /// Runs per scene (round after round); the median is reported.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
        /// Only scenes whose path contains this text.
        #[arg(long)]
        filter: Option<String>,
        /// Time the steps by the process's CPU time instead of wall time (steadier on a loaded
        /// machine; use with RAYON_NUM_THREADS=1). SOFA's times are wall times.
        #[arg(long)]
        cpu: bool,
        /// The shared data directory (default: `$SETTEE_SHARED`, else `../shared` from the current
        /// directory, else `../shared` beside the repository Settee was built in).
        #[arg(long)]
        shared: Option<PathBuf>,
        /// SOFA's timings (default: `perf/sofa-timings.md` in the shared directory).
        #[arg(long)]
        timings: Option<PathBuf>,
        /// SOFA's regression suite (default: `$SETTEE_SUITE`, else `sofa-suite` in the shared directory).
        #[arg(long)]
        suite_dir: Option<PathBuf>,
        /// SOFA's examples, with `examples/` and `share/` (default: `sofa-examples` in the shared directory).
        #[arg(long)]
        examples: Option<PathBuf>,
    },
    /// Run a Python program with Settee's `Sofa` modules importable, as `python3` would run it
    /// with SofaPython3 installed: `settee python script.py [args]`, `settee python -m unittest
    /// test_file.py`, `settee python -c CODE`.
    Python {
        /// The script (or `-m MODULE`, `-c CODE`) and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<String>,
        /// Extra directory searched for data files (meshes); repeatable.
        #[arg(long = "data-dir")]
        data_dir: Vec<PathBuf>,
    },
    /// List components with their Data (type, default, help). COMPONENT may be a part of a name
    /// (case-insensitive search), or `Node` for the Data of nodes.
    Doc {
        component: Option<String>,
        /// Only the component names, one a line.
        #[arg(long, conflicts_with_all = ["component", "markdown"])]
        list: bool,
        /// Markdown output (the reference in docs/components.md).
        #[arg(long)]
        markdown: bool,
    },
}

fn main() -> ExitCode {
    settee::guard::restore_sigpipe();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("off")).init();
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            scene,
            steps,
            time,
            set,
            dt,
            data_dir,
            dump,
            dump_mapped,
            dump_every,
            dump_final,
            dump_topology,
            timing,
            export_constraint_problem,
            vtk,
            vtk_every,
            output_dir,
            skip_unknown,
            lenient,
        } => {
            if dump_mapped && dump.is_none() && dump_topology.is_none() {
                eprintln!("error: --dump-mapped needs --dump DIR or --dump-topology DIR");
                return ExitCode::from(2);
            }
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
            let length = match time {
                Some(t) => RunLength::Until(t),
                None => RunLength::Steps(steps),
            };
            let load = settee::LoadOptions { data_dirs: data_dir, overrides: set, progress: true, lenient };
            let dumps = Dumps { states: dump, mapped: dump_mapped, every: dump_every, final_state: dump_final, topology: dump_topology, output_dir };
            run(scene, length, dt, load, dumps, timing, export, vtk.map(|d| (d, vtk_every)), skip_unknown)
        }
        Command::Check { scenes, data_dir, set, skip_unknown, lenient } => {
            check(scenes, settee::LoadOptions { data_dirs: data_dir, overrides: set, progress: false, lenient }, skip_unknown)
        }
        Command::Print { scene, data, data_dir, set } => settee::inspect::print_command(
            &scene,
            &data,
            &settee::LoadOptions { data_dirs: data_dir, overrides: set, progress: true, lenient: false },
        ),
        Command::Tree { scene, data_dir, set } => {
            settee::inspect::tree_command(&scene, &settee::LoadOptions { data_dirs: data_dir, overrides: set, progress: true, lenient: false })
        }
        Command::Plot { inputs, output, dof, coord, state, run, steps, data_dir, set } => {
            use settee::plot::{plot_command, PlotSource};
            let source = match run {
                Some(scene) => PlotSource::Run {
                    scene,
                    steps,
                    load: settee::LoadOptions { data_dirs: data_dir, overrides: set, progress: true, lenient: false },
                },
                None => PlotSource::Files { inputs, dofs: dof, coords: coord, state },
            };
            match plot_command(source, &output) {
                Ok(msg) => {
                    println!("{msg}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{}", if e.contains("error:") { e } else { format!("error: {e}") });
                    ExitCode::FAILURE
                }
            }
        }
        Command::View { scene, steps, output, data_dir } => view(scene, steps, output, data_dir),
        Command::Studio { scene, port, no_open, data_dir } => {
            match settee::studio::studio(settee::studio::StudioOptions { scene, data_dirs: data_dir, port, open: !no_open }) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Regress { list_or_dir, filter, json, markdown, require, only, jobs, sofa_timings, unsupported_fails } => {
            regress_cmd(list_or_dir, filter, json, markdown, require, only, jobs, sofa_timings, unsupported_fails)
        }
        Command::Bench { suite, runs, filter, cpu, shared, timings, suite_dir, examples } => {
            let clock = if cpu { settee::bench::Clock::Cpu } else { settee::bench::Clock::Wall };
            bench_cmd(suite, runs as usize, filter, clock, shared, timings, suite_dir, examples)
        }
        Command::Python { args, data_dir } => {
            let dp = settee::run::data_path(&data_dir);
            ExitCode::from(settee_python::run_program(std::sync::Arc::new(settee::factory()), &dp.dirs, &args))
        }
        Command::Doc { component, list, markdown } => match settee::doc::document(&settee::factory(), component.as_deref(), markdown) {
            Ok(_) if list => {
                settee::inspect::write_stdout(&settee::doc::list(&settee::factory()));
                ExitCode::SUCCESS
            }
            Ok(s) => {
                settee::inspect::write_stdout(&s);
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

/// How long `run` simulates: a number of steps, or until a simulated time.
enum RunLength {
    Steps(usize),
    Until(f64),
}

/// What `run` dumps: states (`--dump`, `--dump-mapped`, `--dump-every`, `--dump-final`) and
/// topologies (`--dump-topology`).
struct Dumps {
    states: Option<PathBuf>,
    mapped: bool,
    every: Option<usize>,
    final_state: bool,
    topology: Option<PathBuf>,
    /// Where the scene's own exporters write relative file names.
    output_dir: Option<PathBuf>,
}

#[allow(clippy::too_many_arguments)]
fn run(
    scene_path: PathBuf,
    length: RunLength,
    dt: Option<f64>,
    load: settee::LoadOptions,
    dumps: Dumps,
    timing: bool,
    export: Option<(Vec<usize>, PathBuf)>,
    vtk: Option<(PathBuf, usize)>,
    skip_unknown: bool,
) -> ExitCode {
    if let Some(Err(e)) = dt.map(|dt| settee::run::check_time_step(dt, "--dt")) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let factory = settee::factory().skip_unknown(skip_unknown);
    let mut loaded = match settee::load_with(&scene_path, &factory, &load) {
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
    if let Some(dir) = &dumps.output_dir {
        scene.output_dir = dir.clone();
    }
    let dt = scene.root().context.dt;
    let steps = match length {
        RunLength::Steps(n) => n,
        RunLength::Until(t) => match settee::run::steps_for_time(t, scene.root().context.time, dt) {
            Ok(n) => n,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    if let Some(last) = export.as_ref().and_then(|(l, _)| l.last()) {
        if *last > steps {
            eprintln!("error: --export-constraint-problem asks for step {last} but only {steps} steps are run (--steps)");
            return ExitCode::FAILURE;
        }
    }

    // Observers run in this order around every step.
    let mut observers: Vec<Box<dyn RunObserver>> = Vec::new();
    if let Some(dir) = &dumps.states {
        match settee::dump::DumpObserver::create(scene, &scene_path, dir, dumps.mapped, steps, dumps.every) {
            Ok(d) => observers.push(Box::new(d.with_final_state(dumps.final_state))),
            Err(e) => {
                eprintln!("error: cannot write dumps into {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if let Some(dir) = &dumps.topology {
        match settee::topology_dump::TopologyDumpObserver::create(&mut *scene, &scene_path, dir, dumps.mapped) {
            Ok(d) => observers.push(Box::new(d)),
            Err(e) => {
                eprintln!("error: cannot write topology dumps into {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if let Some((list, dir)) = export {
        observers.push(Box::new(ExportObserver::new(list, dir, scene_path.clone())));
    }
    if let Some((dir, every)) = &vtk {
        match settee::vtk::VtkSeries::create(scene, &scene_path, dir, *every, steps) {
            Ok(v) => observers.push(Box::new(v)),
            Err(e) => {
                eprintln!("error: --vtk: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if timing {
        observers.push(Box::new(SolverStatsPrinter));
    }
    if let Some(bar) = ProgressBar::on_terminal(steps) {
        observers.push(Box::new(bar));
    }

    if let Some(lines) = ProgressLines::when_logged(steps) {
        observers.push(Box::new(lines));
    }

    settee::guard::stop_on_signals();
    let summary = match simulate(scene, steps, &mut observers) {
        Ok(s) => s,
        Err(e) => {
            drop(observers); // ends the progress line
            if let settee::run::RunError::Interrupted { written, .. } = &e {
                for p in written {
                    println!("wrote {}", p.display());
                }
                eprintln!("{e}");
                return ExitCode::from(INTERRUPTED);
            }
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    for p in &summary.written {
        println!("wrote {}", p.display());
    }
    let elapsed = summary.elapsed;
    println!(
        "{} steps of {} s in {:.3} s ({:.3} ms/step), t = {}; loaded in {:.3} s, initialised in {:.3} s",
        steps,
        dt,
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e3 / steps.max(1) as f64,
        scene.root().context.time,
        loaded.load_time.as_secs_f64(),
        loaded.init_time.as_secs_f64()
    );
    if timing {
        println!("{:<24} {:>12} {:>10}", "stage", "total ms", "ms/step");
        for (stage, d, _) in &scene.timers.stages {
            println!("{:<24} {:>12.3} {:>10.4}", stage, d.as_secs_f64() * 1e3, d.as_secs_f64() * 1e3 / steps.max(1) as f64);
        }
    }
    ExitCode::SUCCESS
}

/// The exit status of a run stopped by a signal (128 + SIGINT, as shells report it).
const INTERRUPTED: u8 = 130;

fn view(scene: PathBuf, steps: usize, output: Option<PathBuf>, data_dir: Vec<PathBuf>) -> ExitCode {
    settee::guard::stop_on_signals();
    match settee::view::view(&scene, steps, output, &data_dir) {
        Ok(v) => {
            if let Some(d) = &v.decimation {
                eprintln!("note: {d}");
            }
            println!(
                "wrote {} ({} frames, {} items drawn; {} steps in {:.3} s)",
                v.written.display(),
                v.frames,
                v.layers,
                steps,
                v.elapsed.as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(messages) => {
            for m in messages {
                eprintln!("{m}");
            }
            if settee::guard::stop_requested() {
                return ExitCode::from(INTERRUPTED);
            }
            ExitCode::FAILURE
        }
    }
}

fn check(scenes: Vec<PathBuf>, load: settee::LoadOptions, skip_unknown: bool) -> ExitCode {
    let factory = settee::factory().skip_unknown(skip_unknown);
    match settee::check::check_scenes(&mut std::io::stdout().lock(), &scenes, &factory, &load) {
        Ok(v) if v.iter().all(|v| v.is_loaded()) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The shared data directory `bench` reads when not told: `$SETTEE_SHARED`, `../shared` from the
/// current directory (the repository's root), or beside the repository Settee was built in.
fn default_shared() -> PathBuf {
    if let Some(d) = std::env::var_os("SETTEE_SHARED") {
        return PathBuf::from(d);
    }
    let here = PathBuf::from("../shared");
    if here.is_dir() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

#[allow(clippy::too_many_arguments)]
fn bench_cmd(
    suite: bool,
    runs: usize,
    filter: Option<String>,
    clock: settee::bench::Clock,
    shared: Option<PathBuf>,
    timings: Option<PathBuf>,
    suite_dir: Option<PathBuf>,
    examples: Option<PathBuf>,
) -> ExitCode {
    use settee::bench::{self, Paths, Set};
    let mut paths = Paths::under(&shared.unwrap_or_else(default_shared));
    if let Some(t) = timings {
        paths.timings = t;
    }
    if let Some(d) = suite_dir.or_else(|| std::env::var_os("SETTEE_SUITE").map(PathBuf::from)) {
        paths.suite = d;
    }
    if let Some(d) = examples {
        paths.examples = d;
    }
    let set = if suite { Set::Suite } else { Set::Demos };
    let text = match std::fs::read_to_string(&paths.timings) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read SOFA's timings {}: {e} (give --timings or --shared)", paths.timings.display());
            return ExitCode::FAILURE;
        }
    };
    let mut entries = match bench::parse_set(&text, set) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {}: {e}", paths.timings.display());
            return ExitCode::FAILURE;
        }
    };
    if let Some(f) = &filter {
        entries.retain(|e| e.scene.contains(f.as_str()));
        if entries.is_empty() {
            eprintln!("error: no scene of {} contains \"{f}\"", paths.timings.display());
            return ExitCode::FAILURE;
        }
    }
    let factory = settee::factory();
    let total = entries.len();
    let rows = bench::bench(&factory, &paths, set, &entries, runs, clock, &mut |round, i, e| {
        eprintln!("[{}/{total}] run {} of {runs}: {}", i + 1, round + 1, e.scene);
    });
    print!("{}", bench::report(&rows, runs, clock));
    if rows.iter().all(|r| r.result.is_ok()) {
        ExitCode::SUCCESS
    } else {
        for r in rows.iter().filter(|r| r.result.is_err()) {
            eprintln!("error: {}: {}", r.entry.scene, r.result.as_ref().err().map(String::as_str).unwrap_or_default());
        }
        ExitCode::FAILURE
    }
}

/// The command line as run, the program named `settee`.
fn settee_command_line() -> Vec<String> {
    std::iter::once("settee".to_string()).chain(std::env::args().skip(1)).collect()
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
    unsupported_fails: bool,
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
        let layout = SuiteLayout::for_list(&list);
        for e in list.entries {
            let listed = only.as_ref().is_none_or(|o| o.contains(&e.scene));
            if listed && filter.as_deref().is_none_or(|f| e.scene.contains(f)) {
                jobs_list.push((layout.clone(), e));
            }
        }
    }
    // A filter (or list) that selects nothing is a typo, not a passing run of zero scenes.
    if jobs_list.is_empty() {
        match (&filter, &only) {
            (Some(f), _) => eprintln!("error: --filter \"{f}\" matches no scene of the lists in {}", path.display()),
            (None, Some(_)) => eprintln!("error: no scene of the --only list is in the lists of {}", path.display()),
            (None, None) => eprintln!("error: the lists in {} name no scene", path.display()),
        }
        return ExitCode::FAILURE;
    }
    let factory = settee::factory();
    let t0 = Instant::now();
    let progress = regress::Progress::new(jobs_list.len());
    let mut outcomes = regress::run_all_with(&factory, &jobs_list, &|o| progress.finished(o));
    progress.end();
    timings.annotate(&mut outcomes);
    println!("{}", regress::table_header());
    for o in &outcomes {
        println!("{}", regress::format_row(o));
    }
    let tally = regress::Tally::of(&outcomes);
    println!("{}, {:.1} s", tally.summary(), t0.elapsed().as_secs_f64());
    if let Some(j) = json {
        if let Err(e) = std::fs::write(&j, serde_json::to_string_pretty(&outcomes).unwrap_or_default()) {
            eprintln!("error: cannot write {}: {e}", j.display());
            return ExitCode::FAILURE;
        }
    }
    if let Some(m) = markdown {
        if let Err(e) = std::fs::write(&m, regress::markdown_for(&outcomes, &regress::command_line(&settee_command_line()))) {
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
    if tally.success(unsupported_fails) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
