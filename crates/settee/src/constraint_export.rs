//! The runner's view of the constraint solvers after a step: exporting their last problem
//! (`settee run --export-constraint-problem`) and per-step statistics (`settee run --timing`).

use std::path::{Path, PathBuf};

use settee_constraint::export::{self, ExportedProblem};
use settee_constraint::metrics::{problem_metrics, SolutionMetrics};
use settee_core::role;
use settee_core::{ComponentId, Scene};

/// The constraint solvers of a scene, in component order.
pub fn constraint_solvers(scene: &Scene) -> Vec<ComponentId> {
    scene.components.iter().filter(|(_, e)| e.plays(role::CONSTRAINT_SOLVER)).map(|(id, _)| id).collect()
}

/// Runs `f` on a solver's last problem, if it keeps one.
fn with_problem<R>(scene: &mut Scene, id: ComponentId, f: impl FnOnce(&settee_core::constraint::ConstraintProblem) -> R) -> Option<R> {
    let solver = scene.role::<dyn settee_core::constraint::ConstraintSolver>(id)?;
    solver.last_problem().map(f)
}

/// What `--timing` prints for one solver after a step.
#[derive(Clone, Debug, PartialEq)]
pub struct SolverStepStats {
    pub solver: String,
    pub rows: usize,
    pub iterations: usize,
    pub error: f64,
    pub metrics: SolutionMetrics,
}

/// The statistics of every solver that keeps its problem (an empty problem included).
pub fn step_stats(scene: &mut Scene) -> Vec<SolverStepStats> {
    let mut out = Vec::new();
    for id in constraint_solvers(scene) {
        let label = scene.components[id].label();
        if let Some(s) = with_problem(scene, id, |p| SolverStepStats {
            solver: label,
            rows: p.n,
            iterations: p.current_iterations,
            error: p.current_error,
            metrics: problem_metrics(p),
        }) {
            out.push(s);
        }
    }
    out
}

/// Writes the last problem of every constraint solver of `scene` into `dir`, as
/// `step-<step>.scp` (`step-<step>-<solver name>.scp` when the scene has several solvers).
/// `time` is the time at the start of the step. Solvers that do not assemble `W` (unbuilt) are reported as an error unless another solver
/// wrote something.
pub fn export_step(scene: &mut Scene, scene_path: &Path, step: usize, time: f64, dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let solvers = constraint_solvers(scene);
    if solvers.is_empty() {
        return Err("the scene has no constraint solver: no constraint problem to export".into());
    }
    let mut written = Vec::new();
    let mut skipped = Vec::new();
    for &id in &solvers {
        let (label, name, class) = {
            let e = &scene.components[id];
            (e.label(), e.name.clone(), e.class.name)
        };
        let Some(mut e) = with_problem(scene, id, ExportedProblem::from_problem) else {
            skipped.push(label);
            continue;
        };
        e.scene = scene_path.display().to_string();
        e.solver = class.to_string();
        e.step = step;
        e.time = time;
        let file = if solvers.len() == 1 { format!("step-{step}.scp") } else { format!("step-{step}-{name}.scp") };
        let path = dir.join(file);
        export::write(&path, &e)?;
        written.push(path);
    }
    if written.is_empty() {
        return Err(format!("no constraint solver keeps an assembled problem ({}): unbuilt solvers have no W to export", skipped.join(", ")));
    }
    Ok(written)
}

/// `--export-constraint-problem`: writes the problems of the chosen steps (1-based, sorted).
pub struct ExportObserver {
    pub steps: Vec<usize>,
    pub dir: PathBuf,
    pub scene_path: PathBuf,
    written: Vec<PathBuf>,
}

impl ExportObserver {
    pub fn new(steps: Vec<usize>, dir: PathBuf, scene_path: PathBuf) -> ExportObserver {
        ExportObserver { steps, dir, scene_path, written: Vec::new() }
    }
}

impl crate::run::RunObserver for ExportObserver {
    fn after_step(&mut self, scene: &mut Scene, k: usize, t_start: f64) -> Result<(), String> {
        if self.steps.binary_search(&(k + 1)).is_ok() {
            self.written.extend(export_step(scene, &self.scene_path, k + 1, t_start, &self.dir)?);
        }
        Ok(())
    }

    fn finish(&mut self, _scene: &mut Scene) -> Result<Vec<PathBuf>, String> {
        Ok(std::mem::take(&mut self.written))
    }
}

/// `--timing`: per step, each constraint solver's rows, iterations and solution quality.
pub struct SolverStatsPrinter;

impl crate::run::RunObserver for SolverStatsPrinter {
    fn after_step(&mut self, scene: &mut Scene, k: usize, _t_start: f64) -> Result<(), String> {
        for s in step_stats(scene).into_iter().filter(|s| s.rows > 0) {
            println!(
                "step {:>5} {}: {} rows, {} iterations, error {:.3e}, complementarity {:.3e}, cone violation {:.3e}, bilateral {:.3e}",
                k + 1,
                s.solver,
                s.rows,
                s.iterations,
                s.error,
                s.metrics.complementarity,
                s.metrics.cone,
                s.metrics.bilateral
            );
        }
        Ok(())
    }
}
