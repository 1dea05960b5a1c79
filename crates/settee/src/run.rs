//! Loading a scene file into an initialised scene.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use settee_core::{Diagnostic, Factory, Scene, Severity};
use settee_scene::DataPath;

use crate::overrides::Override;

/// A loaded and initialised scene, with the diagnostics of loading.
pub struct LoadedScene {
    pub scene: Scene,
    pub path: PathBuf,
    /// Wall-clock time of parsing and creating the components.
    pub load_time: Duration,
    /// Wall-clock time of initialisation (links, `init`, `bwdInit`, initial mappings).
    pub init_time: Duration,
}

/// Why loading stopped.
#[derive(Debug)]
pub struct LoadFailure {
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadFailure {
    /// True when some problem is a component or feature Settee does not support.
    pub fn unsupported(&self) -> bool {
        self.diagnostics.iter().any(|d| d.unsupported)
    }
    pub fn first_error(&self) -> String {
        self.diagnostics.iter().find(|d| d.severity == Severity::Error).map(|d| d.to_string()).unwrap_or_else(|| "unknown error".into())
    }
}

/// How to load a scene: where data files are searched, Data overrides, progress messages.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Extra directories searched for data files, after the scene's own directory and before
    /// `SOFA_DATA_PATH`.
    pub data_dirs: Vec<PathBuf>,
    /// `--set PATH.data=VALUE` overrides, applied to the parsed scene before any component is
    /// created (see [`crate::overrides`]).
    pub overrides: Vec<Override>,
    /// Show what is being done (loading, initialising) on stderr, when it is a terminal.
    pub progress: bool,
    /// A Data value that does not parse (garbage, NaN/∞, a non-integer where an integer is
    /// expected) is a warning and the Data keeps its default, instead of an error: `--lenient`.
    pub lenient: bool,
}

impl LoadOptions {
    pub fn with_data_dirs(dirs: &[PathBuf]) -> LoadOptions {
        LoadOptions { data_dirs: dirs.to_vec(), ..LoadOptions::default() }
    }
}

/// The data path: `SOFA_DATA_PATH`, then the given directories.
pub fn data_path(dirs: &[PathBuf]) -> DataPath {
    DataPath::from_env(dirs.iter().cloned())
}

/// Parses, creates and initialises a scene. Fails on any error message (as SOFA's regression
/// driver does); warnings stay in `scene.messages`.
pub fn load(path: &Path, factory: &Factory, data_dirs: &[PathBuf]) -> Result<LoadedScene, LoadFailure> {
    load_with(path, factory, &LoadOptions::with_data_dirs(data_dirs))
}

/// A one-line status message on a terminal's stderr, erased when dropped.
struct Status {
    on: bool,
}

impl Status {
    fn new(wanted: bool) -> Status {
        use std::io::IsTerminal;
        Status { on: wanted && std::io::stderr().is_terminal() }
    }
    fn say(&self, text: &str) {
        use std::io::Write;
        if self.on {
            eprint!("\r\x1b[K{text}");
            let _ = std::io::stderr().flush();
        }
    }
}

impl Drop for Status {
    fn drop(&mut self) {
        self.say("");
    }
}

/// [`load`] with options: Data overrides, progress messages.
pub fn load_with(path: &Path, factory: &Factory, opts: &LoadOptions) -> Result<LoadedScene, LoadFailure> {
    let status = Status::new(opts.progress);
    status.say(&format!("loading {}…", path.display()));
    let t0 = Instant::now();
    let dp = data_path(&opts.data_dirs);
    let parse_failed = |e: settee_scene::SceneError| {
        let d = Diagnostic::error(e.detail())
            .at((!matches!(e, settee_scene::SceneError::Io { .. })).then(|| e.pos_or_file_start()))
            .hint("check that the file is a SOFA XML scene whose root element is a <Node>");
        LoadFailure { diagnostics: vec![d] }
    };
    let mut scene = if settee_python::is_python_scene(path) {
        // A Python scene builds itself: its script's createScene(root), run by the embedded
        // interpreter; then it is initialised and stepped as an XML scene.
        let mut scene = settee_python::load_python_scene(path, std::sync::Arc::new(factory.clone()), &dp.dirs, &[])
            .map_err(|diagnostics| LoadFailure { diagnostics })?;
        scene.lenient = opts.lenient;
        // Its components exist once the script has run: overrides are applied to them before
        // init, as their creation would have applied them.
        if let Err(diagnostics) = crate::overrides::apply_to_scene(&mut scene, factory, &opts.overrides) {
            return Err(LoadFailure { diagnostics });
        }
        crate::overrides::promote_messages(&mut scene.messages, &opts.overrides);
        scene
    } else {
        let mut desc = settee_scene::parse_scene_file(path, &dp, &|class| factory.is_registered(class)).map_err(parse_failed)?;
        if let Err(diagnostics) = crate::overrides::apply(&mut desc, factory, &opts.overrides) {
            return Err(LoadFailure { diagnostics });
        }
        let mut scene = settee_scene::instantiate_with(&desc, factory, &dp.dirs, &settee_scene::LoadOptions { lenient: opts.lenient });
        crate::overrides::promote_messages(&mut scene.messages, &opts.overrides);
        scene
    };
    if scene.has_errors() {
        return Err(LoadFailure { diagnostics: scene.messages });
    }
    let load_time = t0.elapsed();
    status.say(&format!("initialising {} ({} components)…", path.display(), scene.components.len()));
    let t1 = Instant::now();
    if let Err(e) = settee_core::simulation::init_root(&mut scene, factory) {
        let mut diagnostics = scene.messages;
        if !diagnostics.iter().any(|d| d.severity == Severity::Error) {
            diagnostics.push((*e.0).clone());
        }
        return Err(LoadFailure { diagnostics });
    }
    if scene.has_errors() {
        return Err(LoadFailure { diagnostics: scene.messages });
    }
    crate::lint::warn_unsolved_and_massless(&mut scene);
    Ok(LoadedScene { scene, path: path.to_path_buf(), load_time, init_time: t1.elapsed() })
}

/// Refuses a time step that cannot advance a simulation: zero, negative, NaN or infinite.
/// `what` names where it came from (`--dt`, the root node's `dt`).
pub fn check_time_step(dt: f64, what: &str) -> Result<(), String> {
    if dt.is_finite() && dt > 0.0 {
        return Ok(());
    }
    let why = if dt.is_nan() {
        "is not a number"
    } else if dt.is_infinite() {
        "is infinite"
    } else if dt == 0.0 {
        "is zero: time would not advance"
    } else {
        "is negative: time would run backwards"
    };
    Err(format!("{what} = {dt} {why}; the time step must be a positive, finite number of seconds"))
}

/// Something that watches a run step by step: state dumps, constraint-problem exports, the
/// progress line, exporters and viewers. Each lives in its own module; the stepping loop
/// ([`simulate`]) only calls them in order. An observer's error stops the run.
pub trait RunObserver {
    /// Before step `k` (0-based), at the step's start time.
    fn before_step(&mut self, _scene: &mut Scene, _k: usize) -> Result<(), String> {
        Ok(())
    }
    /// After step `k` succeeded; `t_start` is the time at its start.
    fn after_step(&mut self, _scene: &mut Scene, _k: usize, _t_start: f64) -> Result<(), String> {
        Ok(())
    }
    /// The run was interrupted (Ctrl-C, SIGTERM) after `done` steps, before [`Self::finish`]:
    /// an observer that writes on a schedule writes the state where the run stopped.
    fn stopped_early(&mut self, _scene: &mut Scene, _done: usize) -> Result<(), String> {
        Ok(())
    }
    /// After the last step, or after an interruption (not called when the run failed). Returns
    /// the files written, which the runner lists.
    fn finish(&mut self, _scene: &mut Scene) -> Result<Vec<PathBuf>, String> {
        Ok(Vec::new())
    }
}

/// Why a run stopped early.
#[derive(Debug)]
pub enum RunError {
    /// A step of the simulation failed (divergence, a solver error, …).
    Step { step: usize, time: f64, error: settee_core::SimError },
    /// An observer could not do its work (a dump file could not be written, …).
    Observer { step: usize, message: String },
    /// A component failed at the start of the simulation (an exporter could not create its
    /// file, …).
    Start(settee_core::SimError),
    /// A component failed at the end of the simulation (an exporter's last file, …).
    End(settee_core::SimError),
    /// The run could not start (a time step that is not positive and finite, …).
    Setup(Diagnostic),
    /// A signal (Ctrl-C, SIGTERM) stopped the run after step `step` of `steps`, at time `time`;
    /// the outputs were closed and `written` lists them.
    Interrupted { step: usize, steps: usize, time: f64, written: Vec<PathBuf> },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Step { step, time, error } => write!(f, "{error}\nerror: step {step} (t = {time}) failed"),
            RunError::Observer { step, message } => write!(f, "error: step {step}: {message}"),
            RunError::Start(error) => write!(f, "{error}\nerror: the simulation could not start"),
            RunError::End(error) => write!(f, "{error}\nerror: the simulation could not end cleanly"),
            RunError::Setup(d) => write!(f, "{d}"),
            RunError::Interrupted { step, steps, time, .. } => {
                write!(f, "error: interrupted: stopped after step {step} of {steps} (t = {time}); the outputs are complete up to there")
            }
        }
    }
}

/// What a finished run reports.
pub struct RunSummary {
    /// Wall-clock time of the stepping loop (observers included).
    pub elapsed: std::time::Duration,
    /// Files written by the observers, in their order.
    pub written: Vec<PathBuf>,
}

/// Steps `scene` `steps` times with its own dt, calling the observers around every step (in
/// their order) and at the end. Steps are numbered from 1 in errors.
///
/// A root time step that is not positive and finite is refused before the first step. When a
/// signal asks to stop ([`crate::guard::stop_on_signals`]), the run ends after the current step:
/// the end-of-simulation event and the observers' `finish` still run, so every output is
/// complete, and the result is [`RunError::Interrupted`].
pub fn simulate(scene: &mut Scene, steps: usize, observers: &mut [Box<dyn RunObserver>]) -> Result<RunSummary, RunError> {
    let dt = scene.root().context.dt;
    if let Err(e) = check_time_step(dt, "dt") {
        let root = scene.root();
        let d = Diagnostic::error(e)
            .at(root.pos.clone())
            .subject(format!("Node '{}'", root.name))
            .hint("set the root node's dt (or pass --dt) to a positive value, e.g. dt=\"0.01\"");
        return Err(RunError::Setup(d));
    }
    let t0 = std::time::Instant::now();
    // The start-of-simulation event (exporters' `exportAtBegin`), before any observer.
    settee_core::simulation::start(scene).map_err(RunError::Start)?;
    let mut interrupted = None;
    for k in 0..steps {
        if crate::guard::stop_requested() {
            interrupted = Some(k);
            break;
        }
        for o in observers.iter_mut() {
            o.before_step(scene, k).map_err(|message| RunError::Observer { step: k + 1, message })?;
        }
        let t_start = scene.root().context.time;
        if let Err(error) = settee_core::simulation::animate(scene, dt) {
            return Err(RunError::Step { step: k + 1, time: scene.root().context.time, error });
        }
        for o in observers.iter_mut() {
            o.after_step(scene, k, t_start).map_err(|message| RunError::Observer { step: k + 1, message })?;
        }
    }
    if let Some(done) = interrupted {
        for o in observers.iter_mut() {
            o.stopped_early(scene, done).map_err(|message| RunError::Observer { step: done, message })?;
        }
    }
    // The end-of-simulation event: exporters' `exportAtEnd`, recorders close their files.
    settee_core::simulation::finish(scene).map_err(RunError::End)?;
    let elapsed = t0.elapsed();
    let last = interrupted.unwrap_or(steps);
    let mut written = Vec::new();
    for o in observers.iter_mut() {
        written.extend(o.finish(scene).map_err(|message| RunError::Observer { step: last, message })?);
    }
    if let Some(step) = interrupted {
        return Err(RunError::Interrupted { step, steps, time: scene.root().context.time, written });
    }
    Ok(RunSummary { elapsed, written })
}

/// `[====      ]`: `done` of `total` on `width` characters.
pub fn bar(done: usize, total: usize, width: usize) -> String {
    let filled = (done * width / total.max(1)).min(width);
    format!("[{}{}]", "=".repeat(filled), " ".repeat(width - filled))
}

/// The progress bar on a terminal's stderr (nothing when stderr is not a terminal).
pub struct ProgressBar {
    steps: usize,
    shown: bool,
}

impl ProgressBar {
    pub fn on_terminal(steps: usize) -> Option<ProgressBar> {
        use std::io::IsTerminal;
        std::io::stderr().is_terminal().then_some(ProgressBar { steps, shown: false })
    }

    /// Ends the bar's line, so that what follows starts on its own line.
    pub fn clear(&mut self) {
        if self.shown {
            eprintln!();
            self.shown = false;
        }
    }
}

impl RunObserver for ProgressBar {
    fn after_step(&mut self, _scene: &mut Scene, k: usize, _t_start: f64) -> Result<(), String> {
        use std::io::Write;
        if k.is_multiple_of(10) || k + 1 == self.steps {
            eprint!("\r{} {}/{} steps", bar(k + 1, self.steps, 40), k + 1, self.steps);
            let _ = std::io::stderr().flush();
            self.shown = true;
        }
        Ok(())
    }

    fn finish(&mut self, _scene: &mut Scene) -> Result<Vec<PathBuf>, String> {
        self.clear();
        Ok(Vec::new())
    }
}

impl Drop for ProgressBar {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Progress as plain lines on stderr every few seconds, for runs whose output goes to a log or a
/// pipe (stdout not a terminal) where the terminal's bar ([`ProgressBar`]) is not shown:
/// `step 1200/5000, t = 12, 3.1 ms/step`. The interval is 5 s; `SETTEE_PROGRESS_SECONDS` changes
/// it (the tests use a short one).
pub struct ProgressLines {
    steps: usize,
    interval: std::time::Duration,
    start: Instant,
    next: Instant,
}

impl ProgressLines {
    /// The default interval between two lines.
    pub const INTERVAL_SECONDS: f64 = 5.0;

    /// Lines when stdout is not a terminal and stderr does not show the bar.
    pub fn when_logged(steps: usize) -> Option<ProgressLines> {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() || std::io::stderr().is_terminal() {
            return None;
        }
        let seconds = std::env::var("SETTEE_PROGRESS_SECONDS")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(Self::INTERVAL_SECONDS);
        Some(ProgressLines::every(steps, Duration::from_secs_f64(seconds)))
    }

    pub fn every(steps: usize, interval: Duration) -> ProgressLines {
        let start = Instant::now();
        ProgressLines { steps, interval, start, next: start + interval }
    }
}

impl RunObserver for ProgressLines {
    fn after_step(&mut self, scene: &mut Scene, k: usize, _t_start: f64) -> Result<(), String> {
        let now = Instant::now();
        if now >= self.next && k + 1 < self.steps {
            let ms = now.duration_since(self.start).as_secs_f64() * 1e3 / (k + 1) as f64;
            eprintln!("step {}/{}, t = {}, {ms:.3} ms/step", k + 1, self.steps, scene.root().context.time);
            self.next = now + self.interval;
        }
        Ok(())
    }
}

/// The number of steps of `dt` that take a scene starting at `t0` to the simulated time `t_end`
/// (`--time`): ⌈(t_end − t0)/dt⌉, where a quotient within 1e-9 (relative) of an integer counts as
/// that integer, so that `--time 1 --dt 0.1` runs 10 steps and not 11.
pub fn steps_for_time(t_end: f64, t0: f64, dt: f64) -> Result<usize, String> {
    if !t_end.is_finite() {
        return Err(format!("--time {t_end}: not a finite time"));
    }
    if !(dt.is_finite() && dt > 0.0) {
        return Err(format!("--time needs a positive time step, and dt = {dt}"));
    }
    if t_end <= t0 {
        return Err(format!("--time {t_end}: the scene starts at t = {t0}; give a later end time"));
    }
    let q = (t_end - t0) / dt;
    let r = q.round();
    let n = if (q - r).abs() <= 1e-9 * r.max(1.0) { r } else { q.ceil() };
    if n > 1e12 {
        return Err(format!("--time {t_end} with dt = {dt} would take {n:e} steps"));
    }
    Ok(n as usize)
}

#[cfg(test)]
mod tests {
    use super::steps_for_time;

    #[test]
    fn end_times_round_up_to_whole_steps_with_a_tolerance() {
        assert_eq!(steps_for_time(1.0, 0.0, 0.1), Ok(10)); // 1/0.1 = 9.999999999999998
        assert_eq!(steps_for_time(0.3, 0.0, 0.1), Ok(3)); // 0.3/0.1 = 2.9999999999999996
        assert_eq!(steps_for_time(1.05, 0.0, 0.1), Ok(11));
        assert_eq!(steps_for_time(0.07, 0.0, 0.01), Ok(7)); // 0.07/0.01 = 7.000000000000001
        assert_eq!(steps_for_time(2.0, 1.0, 0.01), Ok(100));
        assert!(steps_for_time(0.5, 1.0, 0.01).is_err());
        assert!(steps_for_time(1.0, 0.0, 0.0).is_err());
        assert!(steps_for_time(f64::NAN, 0.0, 0.01).is_err());
    }
}
