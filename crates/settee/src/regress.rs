//! The regression driver: runs the scenes of SOFA's `.regression-tests` lists and compares their
//! states with SOFA's references exactly as SOFA's C++ regression test does (spec
//! scene-format.md §5): which states, when, the error metric and the threshold.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Serialize;
use settee_core::{Factory, VecId};
use settee_regress::list::{RegressionEntry, RegressionList};
use settee_regress::metric::{error_by_dof, fails, StateComparer};
use settee_regress::reference::{read_state_reference, state_reference_path};

use crate::dump::{node_weights, select_states};

/// Where the scenes, references and data of a suite live.
#[derive(Clone, Debug)]
pub struct SuiteLayout {
    pub scenes: PathBuf,
    pub references: PathBuf,
    pub data: Vec<PathBuf>,
    /// The list compares topologies (SOFA's `RegressionTopologyScenes`), not states.
    pub topology: bool,
}

impl SuiteLayout {
    /// `../shared/sofa-suite` style: `scenes/`, `references/`, `data/` beside the lists. A list
    /// inside a SOFA checkout (no `scenes/` beside it) uses the list directory for scenes and the
    /// reference directory named by the list (`$REGRESSION_DIR`).
    pub fn for_list(list: &RegressionList) -> SuiteLayout {
        let dir = list.list_dir().to_path_buf();
        let topology = list.path.file_name().is_some_and(|n| n.to_string_lossy().contains("Topology"));
        if dir.join("scenes").is_dir() {
            SuiteLayout { scenes: dir.join("scenes"), references: dir.join("references"), data: vec![dir.join("data")], topology }
        } else {
            let references = list.reference_dir_from_env().unwrap_or_else(|_| dir.join("references"));
            SuiteLayout { scenes: dir.clone(), references, data: vec![dir.clone(), dir.join("share")], topology }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    /// The run finished but its states differ from the reference beyond epsilon.
    Fail,
    /// The scene could not be compared: it did not load, a step failed (divergence, a solver
    /// error), it panicked, or its reference is missing.
    Error,
    /// The scene uses a component or feature Settee does not support.
    Unsupported,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::Error => "ERROR",
            Status::Unsupported => "unsupported",
        })
    }
}

/// The outcome of one scene.
#[derive(Clone, Debug, Serialize)]
pub struct SceneOutcome {
    pub scene: String,
    pub status: Status,
    pub steps: usize,
    pub epsilon: f64,
    /// SOFA's scene error (`errorByDof`), when the run got that far.
    pub error_by_dof: Option<f64>,
    /// Largest absolute difference between a printed current value and the reference.
    pub max_abs_diff: Option<f64>,
    /// Time of the first reference record whose per-line error exceeded epsilon.
    pub first_exceeding_time: Option<f64>,
    pub wall_seconds: f64,
    /// Wall time per simulated step (initialisation excluded, as in SOFA's batch timings).
    pub seconds_per_step: Option<f64>,
    /// SOFA's own time per step on this scene, when a timing table names it.
    pub sofa_seconds_per_step: Option<f64>,
    pub message: Option<String>,
}

impl SceneOutcome {
    /// The outcome of a scene not run yet: `status`, no measure, no message.
    pub fn pending(scene: String, status: Status, steps: usize, epsilon: f64) -> SceneOutcome {
        SceneOutcome {
            scene,
            status,
            steps,
            epsilon,
            error_by_dof: None,
            max_abs_diff: None,
            first_exceeding_time: None,
            wall_seconds: 0.0,
            seconds_per_step: None,
            sofa_seconds_per_step: None,
            message: None,
        }
    }

    /// Settee's time per step over SOFA's (below 1: Settee is faster).
    pub fn speed_ratio(&self) -> Option<f64> {
        Some(self.seconds_per_step? / self.sofa_seconds_per_step?)
    }
}

/// SOFA's time per step per scene, read from a Markdown table whose rows read
/// `| scene | steps | ms/step | ...` (the layout of `../shared/perf/sofa-timings.md`).
/// Rows whose third cell is not a number ("did not run") are skipped.
#[derive(Clone, Debug, Default)]
pub struct SofaTimings {
    ms_per_step: HashMap<String, f64>,
}

impl SofaTimings {
    pub fn parse(text: &str) -> SofaTimings {
        let mut ms_per_step = HashMap::new();
        for line in text.lines() {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
            if cells.len() < 3 || !cells[0].ends_with(".scn") {
                continue;
            }
            if let Ok(ms) = cells[2].parse::<f64>() {
                ms_per_step.insert(cells[0].to_string(), ms);
            }
        }
        SofaTimings { ms_per_step }
    }

    pub fn load(path: &Path) -> std::io::Result<SofaTimings> {
        Ok(SofaTimings::parse(&std::fs::read_to_string(path)?))
    }

    /// SOFA's seconds per step for a scene path as written in the lists.
    pub fn seconds_per_step(&self, scene: &str) -> Option<f64> {
        self.ms_per_step.get(scene).map(|ms| ms * 1e-3)
    }

    pub fn len(&self) -> usize {
        self.ms_per_step.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ms_per_step.is_empty()
    }

    /// Fills `sofa_seconds_per_step` of every outcome the table names.
    pub fn annotate(&self, outcomes: &mut [SceneOutcome]) {
        for o in outcomes {
            o.sofa_seconds_per_step = self.seconds_per_step(&o.scene);
        }
    }
}

/// Runs one list entry.
pub fn run_entry(factory: &Factory, layout: &SuiteLayout, entry: &RegressionEntry) -> SceneOutcome {
    let t0 = Instant::now();
    let mut out = SceneOutcome::pending(entry.scene.clone(), Status::Fail, entry.steps, entry.epsilon);
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| run_entry_inner(factory, layout, entry, &mut out)));
    if let Err(p) = result {
        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        out.status = Status::Error;
        out.message = Some(format!("panic: {msg}"));
    }
    out.wall_seconds = t0.elapsed().as_secs_f64();
    out
}

fn run_entry_inner(factory: &Factory, layout: &SuiteLayout, entry: &RegressionEntry, out: &mut SceneOutcome) {
    let scene_path = layout.scenes.join(&entry.scene);
    let loaded = match crate::run::load(&scene_path, factory, &layout.data) {
        Ok(l) => l,
        Err(f) => {
            out.status = if f.unsupported() { Status::Unsupported } else { Status::Error };
            out.message = Some(f.first_error());
            return;
        }
    };
    let mut scene = loaded.scene;
    let base = layout.references.join(format!("{}.reference", entry.scene));
    if layout.topology {
        return run_topology_entry(&mut scene, &base, entry, out);
    }
    let selected = select_states(&scene, entry.mapped);
    let weights = node_weights(&scene, &selected);
    let mut comparers = Vec::new();
    for s in &selected {
        let path = state_reference_path(&base, s.index, &s.name);
        match read_state_reference(&path) {
            Ok(records) => {
                let n = scene.store.get(s.state).size;
                comparers.push(StateComparer::new(records, n).with_diagnostic_epsilon(entry.epsilon));
            }
            Err(e) => {
                out.status = Status::Error;
                out.message = Some(format!("reference of state {} '{}': {e}", s.index, s.name));
                return;
            }
        }
    }
    let dt = scene.root().context.dt;
    let t_steps = Instant::now();
    for _ in 0..entry.steps {
        let t = scene.root().context.time;
        for (s, c) in selected.iter().zip(comparers.iter_mut()) {
            let st = scene.store.get(s.state);
            c.at_step_start(t, dt, st.read(VecId::POSITION), Some(st.read(VecId::VELOCITY)));
        }
        if let Err(e) = settee_core::simulation::animate(&mut scene, dt) {
            out.status = Status::Error;
            out.message = Some(format!("step at t = {t}: {e}"));
            return;
        }
    }
    if entry.steps > 0 {
        out.seconds_per_step = Some(t_steps.elapsed().as_secs_f64() / entry.steps as f64);
    }
    let pairs: Vec<(f64, usize)> = comparers.iter().zip(&weights).map(|(c, w)| (c.dof_error(), *w)).collect();
    let e = error_by_dof(&pairs);
    out.error_by_dof = Some(e);
    out.max_abs_diff = Some(comparers.iter().map(|c| c.max_abs_diff()).fold(0.0, f64::max));
    out.first_exceeding_time = comparers.iter().filter_map(|c| c.first_exceeding_time()).reduce(f64::min);
    if scene.has_errors() {
        out.status = Status::Error;
        out.message = scene.messages.iter().find(|m| m.severity == settee_core::Severity::Error).map(|m| m.to_string());
        return;
    }
    out.status = if fails(e, entry.epsilon) { Status::Fail } else { Status::Pass };
}

/// A topology-list scene (spec §5.8): every container `CompareTopology` selects is compared at
/// every step start; the scene passes when no element differs and no error was reported. The
/// outcome's error is the total number of differing elements.
fn run_topology_entry(scene: &mut settee_core::Scene, base: &std::path::Path, entry: &RegressionEntry, out: &mut SceneOutcome) {
    use crate::topology_dump::{select_topologies, Selection, TopologyComparer, TopologyProbe};
    let selected = select_topologies(scene, entry.mapped, Selection::Compare);
    let mut comparers = Vec::new();
    for t in &selected {
        let path = settee_regress::reference::topology_reference_path(base, t.index, &t.name);
        match settee_regress::reference::read_topology_reference(&path) {
            Ok(r) => comparers.push(TopologyComparer::new(r)),
            Err(e) => {
                out.status = Status::Error;
                out.message = Some(format!("reference of topology {} '{}': {e}", t.index, t.name));
                return;
            }
        }
    }
    TopologyProbe::install_comparer(scene, selected.clone(), comparers);
    let dt = scene.root().context.dt;
    let t_steps = Instant::now();
    for _ in 0..entry.steps {
        let t = scene.root().context.time;
        if let Err(e) = settee_core::simulation::animate(scene, dt) {
            TopologyProbe::take(scene);
            out.status = Status::Error;
            out.message = Some(format!("step at t = {t}: {e}"));
            return;
        }
    }
    if entry.steps > 0 {
        out.seconds_per_step = Some(t_steps.elapsed().as_secs_f64() / entry.steps as f64);
    }
    let probe = TopologyProbe::take(scene);
    let comparers = probe.as_ref().map(|p| p.comparers()).unwrap_or(&[]);
    let total: u64 = comparers.iter().map(|c| c.total()).sum();
    out.error_by_dof = Some(total as f64);
    out.max_abs_diff = Some(total as f64);
    if scene.has_errors() {
        out.status = Status::Error;
        out.message = scene.messages.iter().find(|m| m.severity == settee_core::Severity::Error).map(|m| m.to_string());
        return;
    }
    if total > 0 {
        let worst =
            selected.iter().zip(comparers).filter(|(_, c)| c.total() > 0).map(|(s, c)| format!("{} {:?}", s.name, c.errors)).collect::<Vec<_>>();
        out.message = Some(format!("differing elements (edges, triangles, quads, tetrahedra, hexahedra): {}", worst.join("; ")));
    }
    out.status = if total == 0 { Status::Pass } else { Status::Fail };
}

/// How many scenes ended in each status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub pass: usize,
    pub fail: usize,
    pub error: usize,
    pub unsupported: usize,
}

impl Tally {
    pub fn of(outcomes: &[SceneOutcome]) -> Tally {
        let mut t = Tally::default();
        for o in outcomes {
            match o.status {
                Status::Pass => t.pass += 1,
                Status::Fail => t.fail += 1,
                Status::Error => t.error += 1,
                Status::Unsupported => t.unsupported += 1,
            }
        }
        t
    }

    pub fn total(&self) -> usize {
        self.pass + self.fail + self.error + self.unsupported
    }

    /// The exit status of `settee regress`: success only when no scene failed or errored, and
    /// (with `unsupported_fails`) none was unsupported.
    pub fn success(&self, unsupported_fails: bool) -> bool {
        self.fail == 0 && self.error == 0 && (!unsupported_fails || self.unsupported == 0)
    }

    /// `3 passed, 1 failed, 0 errors, 2 unsupported (6 scenes)`.
    pub fn summary(&self) -> String {
        format!(
            "{} passed, {} failed, {} error{}, {} unsupported ({} scenes)",
            self.pass,
            self.fail,
            self.error,
            if self.error == 1 { "" } else { "s" },
            self.unsupported,
            self.total()
        )
    }
}

/// The lists named by a path: the file itself, or every `*.regression-tests` in a directory.
pub fn find_lists(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "regression-tests"))
        .collect();
    v.sort();
    Ok(v)
}

/// Runs entries in parallel, keeping the list order in the result.
pub fn run_all(factory: &Factory, jobs: &[(SuiteLayout, RegressionEntry)]) -> Vec<SceneOutcome> {
    run_all_with(factory, jobs, &|_| {})
}

/// [`run_all`], calling `done` (from the worker threads) as each scene finishes.
pub fn run_all_with(factory: &Factory, jobs: &[(SuiteLayout, RegressionEntry)], done: &(dyn Fn(&SceneOutcome) + Sync)) -> Vec<SceneOutcome> {
    jobs.par_iter()
        .map(|(layout, entry)| {
            let o = run_entry(factory, layout, entry);
            done(&o);
            o
        })
        .collect()
}

/// Progress of a regression run on stderr: a bar on a terminal, otherwise one line per finished
/// scene (logs and CI).
pub struct Progress {
    total: usize,
    bar: bool,
    done: std::sync::Mutex<(usize, usize)>,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        use std::io::IsTerminal;
        Progress { total, bar: std::io::stderr().is_terminal(), done: std::sync::Mutex::new((0, 0)) }
    }

    /// Text of the progress after `done` scenes, `failed` of them not passing.
    pub fn line(&self, o: &SceneOutcome, done: usize, failed: usize) -> String {
        if self.bar {
            format!("{} {done}/{} scenes, {failed} not passing  {}", crate::run::bar(done, self.total, 30), self.total, ellipsize_left(&o.scene, 40))
        } else {
            format!("[{done}/{}] {:<11} {} ({:.1} s)", self.total, o.status.to_string(), o.scene, o.wall_seconds)
        }
    }

    /// Called as each scene finishes.
    pub fn finished(&self, o: &SceneOutcome) {
        use std::io::Write;
        let Ok(mut d) = self.done.lock() else { return };
        d.0 += 1;
        if o.status != Status::Pass {
            d.1 += 1;
        }
        let line = self.line(o, d.0, d.1);
        let mut err = std::io::stderr().lock();
        let _ = if self.bar { write!(err, "\r\x1b[K{line}") } else { writeln!(err, "{line}") };
        let _ = err.flush();
    }

    /// Ends the bar's line.
    pub fn end(&self) {
        if self.bar {
            eprint!("\r\x1b[K");
        }
    }
}

/// `text` cut to `width` characters, its start replaced by `…` (the end of a path says most).
pub fn ellipsize_left(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    let tail: String = text.chars().skip(n - (width - 1)).collect();
    format!("…{tail}")
}

/// `text` cut to `width` characters, its end replaced by `…`.
fn ellipsize_right(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let head: String = text.chars().take(width - 1).collect();
    format!("{head}…")
}

/// Width of the scene column of the terminal table (rows fit in [`TABLE_WIDTH`]).
const SCENE_WIDTH: usize = 48;
/// The terminal table's width.
pub const TABLE_WIDTH: usize = 120;

fn sci(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3e}")).unwrap_or_else(|| "-".into())
}

/// The header of the terminal table ([`format_row`]'s columns).
pub fn table_header() -> String {
    format!(
        "{:<11} {:<SCENE_WIDTH$} {:>9} {:>7} {:>9} {:>7} {:>9} {:>6}",
        "status", "scene", "error", "epsilon", "max|Δ|", "wall s", "ms/step", "×SOFA"
    )
}

/// One row per scene for the terminal, at most [`TABLE_WIDTH`] characters: long scene paths lose
/// their start (`…`; `--json` and `--markdown` keep them whole). A second, indented line tells
/// when the first record went over epsilon, or why the scene failed.
pub fn format_row(o: &SceneOutcome) -> String {
    let mut s = format!(
        "{:<11} {:<SCENE_WIDTH$} {:>9} {:>7} {:>9} {:>7.2} {:>9} {:>6}",
        o.status.to_string(),
        ellipsize_left(&o.scene, SCENE_WIDTH),
        sci(o.error_by_dof),
        format!("{:e}", o.epsilon),
        sci(o.max_abs_diff),
        o.wall_seconds,
        o.seconds_per_step.map(|t| format!("{:.3}", t * 1e3)).unwrap_or_else(|| "-".into()),
        o.speed_ratio().map(|r| format!("{r:.2}")).unwrap_or_else(|| "-".into()),
    );
    let mut notes = Vec::new();
    if let Some(t) = o.first_exceeding_time {
        notes.push(format!("first record over epsilon at T={t}"));
    }
    if let Some(m) = &o.message {
        notes.push(m.lines().next().unwrap_or("").to_string());
    }
    if !notes.is_empty() {
        s.push_str(&format!("\n{:<12}{}", "", ellipsize_right(&notes.join("; "), TABLE_WIDTH - 12)));
    }
    s
}

/// The conformance table (Markdown).
pub fn markdown(outcomes: &[SceneOutcome]) -> String {
    markdown_for(outcomes, "settee regress ../shared/sofa-suite --markdown docs/conformance.md")
}

/// The command line as it can be typed again: arguments with spaces or quotes quoted.
pub fn command_line(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c)) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The conformance table (Markdown), saying which command generated it.
pub fn markdown_for(outcomes: &[SceneOutcome], command: &str) -> String {
    let t = Tally::of(outcomes);
    let mut s = String::new();
    s.push_str("# Conformance with SOFA's regression suite\n\n");
    s.push_str(&format!("Generated by `{command}`: each scene runs the\n"));
    s.push_str("listed number of steps and is compared with SOFA's reference using SOFA's own metric (mean absolute\n");
    s.push_str("difference of 6-digit values, divided by the DOF count, node-weighted) and threshold.\n");
    s.push_str("Times are wall-clock milliseconds per step, initialisation excluded; \"SOFA\" is SOFA's own time from\n");
    s.push_str("`../shared/perf/sofa-timings.md` and \"ratio\" is Settee's time over SOFA's (below 1: Settee is faster).\n");
    s.push_str("Scenes run in parallel, so times are indicative; see docs/performance.md for careful measurements.\n\n");
    let verb = |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
    s.push_str(&format!(
        "**{} of {} scenes pass**; {} {} components Settee does not support yet; {} {}; {} {} with an error.\n\n",
        t.pass,
        t.total(),
        t.unsupported,
        verb(t.unsupported, "uses", "use"),
        t.fail,
        verb(t.fail, "fails", "fail"),
        t.error,
        verb(t.error, "stops", "stop")
    ));
    s.push_str(
        "| scene | status | error | epsilon | max abs diff | ms/step | SOFA ms/step | ratio | note |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let note = o.message.as_deref().unwrap_or("").lines().next().unwrap_or("").replace('|', "\\|");
        let note: String = note.chars().take(140).collect();
        s.push_str(&format!(
            "| {} | {} | {} | {:e} | {} | {} | {} | {} | {} |\n",
            o.scene,
            o.status,
            sci(o.error_by_dof),
            o.epsilon,
            sci(o.max_abs_diff),
            o.seconds_per_step.map(|t| format!("{:.3}", t * 1e3)).unwrap_or_else(|| "-".into()),
            o.sofa_seconds_per_step.map(|t| format!("{:.3}", t * 1e3)).unwrap_or_else(|| "-".into()),
            o.speed_ratio().map(|r| format!("{r:.2}")).unwrap_or_else(|| "-".into()),
            note
        ));
    }
    s
}

/// Total wall time, for the summary line.
pub fn total_time(outcomes: &[SceneOutcome]) -> Duration {
    Duration::from_secs_f64(outcomes.iter().map(|o| o.wall_seconds).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sofa_timing_table_rows_are_read_and_others_skipped() {
        let text = "# title\n\n| scene | steps | SOFA ms/step (median of 3) | min | max |\n|---|---|---|---|---|\n\
                    | Demos/a.scn | 100 | 2.464 | 2.445 | 2.527 |\n| Demos/b.scn | 120 | did not run | | |\n";
        let t = SofaTimings::parse(text);
        assert_eq!(t.len(), 1);
        assert_eq!(t.seconds_per_step("Demos/a.scn"), Some(2.464e-3));
        assert_eq!(t.seconds_per_step("Demos/b.scn"), None);
    }

    fn outcome(scene: &str, message: Option<&str>) -> SceneOutcome {
        SceneOutcome {
            scene: scene.into(),
            status: Status::Fail,
            steps: 100,
            epsilon: 1e-4,
            error_by_dof: Some(1.234567e-3),
            max_abs_diff: Some(0.5),
            first_exceeding_time: Some(0.25),
            wall_seconds: 123.456,
            seconds_per_step: Some(1.2345),
            sofa_seconds_per_step: Some(0.5),
            message: message.map(str::to_string),
        }
    }

    fn outcome_with_status(status: Status) -> SceneOutcome {
        SceneOutcome::pending("a.scn".into(), status, 1, 1e-4)
    }

    #[test]
    fn terminal_rows_fit_120_columns_under_their_header() {
        let long = "Component/SolidMechanics/FEM/Hyperelastic/TetrahedronHyperelasticityFEMForceField_MooneyRivlin_long_name.scn";
        let o = outcome(long, Some(&"a very long failure message ".repeat(10)));
        let row = format_row(&o);
        let header = table_header();
        assert!(header.chars().count() <= TABLE_WIDTH, "{header}");
        for line in row.lines() {
            assert!(line.chars().count() <= TABLE_WIDTH, "{} columns: {line}", line.chars().count());
        }
        let first = row.lines().next().unwrap();
        // The scene keeps its end; the columns line up with the header's.
        assert!(first.contains("…") && first.contains("MooneyRivlin_long_name.scn"), "{first}");
        assert_eq!(first.chars().count(), header.chars().count(), "\n{header}\n{first}");
        assert!(first.starts_with("FAIL ") && first.contains("1.235e-3") && first.contains("1e-4") && first.ends_with("  2.47"), "{first}");
        assert!(row.lines().nth(1).unwrap().starts_with("            first record over epsilon at T=0.25; a very long"));
        // Markdown keeps the whole path and names the command.
        let md = markdown_for(&[o], "settee regress suite --filter 'a b'");
        assert!(md.contains(long) && md.contains("Generated by `settee regress suite --filter 'a b'`"));
    }

    #[test]
    fn command_lines_are_quoted_where_a_shell_needs_it() {
        let args: Vec<String> = ["settee", "regress", "../suite", "--filter", "Demos/a b.scn", "--markdown", "it's.md"].map(String::from).to_vec();
        assert_eq!(command_line(&args), "settee regress ../suite --filter 'Demos/a b.scn' --markdown 'it'\\''s.md'");
    }

    #[test]
    fn exit_status_fails_on_failures_and_errors_and_optionally_on_unsupported() {
        let all = |s: &[Status]| Tally::of(&s.iter().map(|s| outcome_with_status(*s)).collect::<Vec<_>>());
        let t = all(&[Status::Pass, Status::Unsupported, Status::Pass]);
        assert_eq!(t, Tally { pass: 2, fail: 0, error: 0, unsupported: 1 });
        assert!(t.success(false));
        assert!(!t.success(true));
        assert!(!all(&[Status::Pass, Status::Fail]).success(false));
        assert!(!all(&[Status::Pass, Status::Error]).success(false));
        assert!(all(&[]).success(true));
        assert_eq!(
            all(&[Status::Pass, Status::Fail, Status::Error, Status::Unsupported]).summary(),
            "1 passed, 1 failed, 1 error, 1 unsupported (4 scenes)"
        );
    }
}
