//! Loading a scene file into an initialised scene.

use std::path::{Path, PathBuf};

use settee_core::{Diagnostic, Factory, Scene, Severity};
use settee_scene::DataPath;
pub use settee_scene::LoadOptions;

/// A loaded and initialised scene, with the diagnostics of loading.
pub struct LoadedScene {
    pub scene: Scene,
    pub path: PathBuf,
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

/// The data path: `SOFA_DATA_PATH`, then the given directories.
pub fn data_path(dirs: &[PathBuf]) -> DataPath {
    DataPath::from_env(dirs.iter().cloned())
}

/// Parses, creates and initialises a scene. Fails on any error message (as SOFA's regression
/// driver does); warnings stay in `scene.messages`.
pub fn load(path: &Path, factory: &Factory, data_dirs: &[PathBuf]) -> Result<LoadedScene, LoadFailure> {
    load_with(path, factory, data_dirs, &LoadOptions::default())
}

/// [`load`] with options: `LoadOptions { lenient: true }` makes Data values that do not parse
/// warnings (the Data keeps its default) instead of errors, as `--lenient` does.
pub fn load_with(path: &Path, factory: &Factory, data_dirs: &[PathBuf], options: &LoadOptions) -> Result<LoadedScene, LoadFailure> {
    let dp = data_path(data_dirs);
    let mut scene = match settee_scene::load_scene_with(path, factory, &dp, options) {
        Ok(s) => s,
        Err(settee_scene::LoadError::Parse(e)) => {
            let d = Diagnostic::error(e.detail())
                .at((!matches!(e, settee_scene::SceneError::Io { .. })).then(|| e.pos_or_file_start()))
                .hint("check that the file is a SOFA XML scene whose root element is a <Node>");
            return Err(LoadFailure { diagnostics: vec![d] });
        }
    };
    if scene.has_errors() {
        return Err(LoadFailure { diagnostics: scene.messages });
    }
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
    Ok(LoadedScene { scene, path: path.to_path_buf() })
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
    /// After the last step (not called when the run failed). Returns the files written, which
    /// the runner lists.
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
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Step { step, time, error } => write!(f, "{error}\nerror: step {step} (t = {time}) failed"),
            RunError::Observer { step, message } => write!(f, "error: step {step}: {message}"),
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
pub fn simulate(scene: &mut Scene, steps: usize, observers: &mut [Box<dyn RunObserver>]) -> Result<RunSummary, RunError> {
    let dt = scene.root().context.dt;
    let t0 = std::time::Instant::now();
    for k in 0..steps {
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
    let elapsed = t0.elapsed();
    let mut written = Vec::new();
    for o in observers.iter_mut() {
        written.extend(o.finish(scene).map_err(|message| RunError::Observer { step: steps, message })?);
    }
    Ok(RunSummary { elapsed, written })
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
            let w = 40;
            let done = (k + 1) * w / self.steps.max(1);
            eprint!("\r[{}{}] {}/{} steps", "=".repeat(done), " ".repeat(w - done), k + 1, self.steps);
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
