//! `settee bench`: Settee's time per step beside SOFA's recorded one, on the scene sets of
//! `../shared/perf/sofa-timings.md` ("Demo set", or "Suite side by side" with `--suite`).
//!
//! A scene is loaded and initialised, then only the stepping is timed (as SOFA's batch runner
//! reports it). Scenes are found relative to their set's directory and read their data files
//! from their own directory first, as when run from there; whatever a scene writes goes into a
//! temporary directory, never beside the scene.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use settee_core::Factory;

/// The sets of scenes the timings file names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// SOFA's demos and the project's large scenes ("## Demo set").
    Demos,
    /// SOFA's regression suite side by side ("## Suite side by side").
    Suite,
}

impl Set {
    /// The start of the heading of the set's section in the timings file.
    fn heading(self) -> &'static str {
        match self {
            Set::Demos => "## Demo set",
            Set::Suite => "## Suite side by side",
        }
    }
}

/// One row of a set: a scene as the timings file names it, SOFA's step count and time.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub scene: String,
    pub steps: usize,
    pub sofa_ms: f64,
}

/// The rows of one section's table: `| scene | steps | SOFA ms/step | ... |`, up to the next
/// heading. Rows whose SOFA time is not a number are left out.
pub fn parse_set(text: &str, set: Set) -> Result<Vec<Entry>, String> {
    let mut lines = text.lines().skip_while(|l| !l.trim_start().starts_with(set.heading()));
    if lines.next().is_none() {
        return Err(format!("no section \"{}\"", set.heading().trim_start_matches("## ")));
    }
    let mut entries = Vec::new();
    for line in lines.take_while(|l| !l.trim_start().starts_with('#')) {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 3 || !cells[0].ends_with(".scn") {
            continue;
        }
        let (Ok(steps), Ok(sofa_ms)) = (cells[1].parse::<usize>(), cells[2].parse::<f64>()) else { continue };
        entries.push(Entry { scene: cells[0].to_string(), steps, sofa_ms });
    }
    if entries.is_empty() {
        return Err(format!("the section \"{}\" lists no scene", set.heading().trim_start_matches("## ")));
    }
    Ok(entries)
}

/// Where the scenes of the sets and their data are.
#[derive(Clone, Debug)]
pub struct Paths {
    /// SOFA's timings (`perf/sofa-timings.md`).
    pub timings: PathBuf,
    /// SOFA's regression suite (`scenes/`, `data/`).
    pub suite: PathBuf,
    /// SOFA's examples (`examples/`, `share/`).
    pub examples: PathBuf,
    /// The project's own large scenes (`perf/scenes`).
    pub perf_scenes: PathBuf,
}

impl Paths {
    /// Everything under one shared directory, laid out as `../shared`.
    pub fn under(shared: &Path) -> Paths {
        Paths {
            timings: shared.join("perf/sofa-timings.md"),
            suite: shared.join("sofa-suite"),
            examples: shared.join("sofa-examples"),
            perf_scenes: shared.join("perf/scenes"),
        }
    }

    /// The file of a scene of a set and the data directories it reads. The demo set names
    /// SOFA's examples (`Demos/...`), the project's scenes (a bare file name) and suite scenes;
    /// the suite set names suite scenes only.
    pub fn locate(&self, set: Set, scene: &str) -> Result<(PathBuf, Vec<PathBuf>), String> {
        let suite = (self.suite.join("scenes").join(scene), vec![self.suite.join("data")]);
        let candidates = match set {
            Set::Suite => vec![suite],
            Set::Demos => {
                vec![(self.examples.join("examples").join(scene), vec![self.examples.join("share")]), (self.perf_scenes.join(scene), vec![]), suite]
            }
        };
        let tried: Vec<String> = candidates.iter().map(|(p, _)| p.display().to_string()).collect();
        candidates.into_iter().find(|(p, _)| p.is_file()).ok_or_else(|| format!("scene not found (looked for {})", tried.join(", ")))
    }
}

/// What the step is timed by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// Wall-clock time, as SOFA's batch runner reports it.
    #[default]
    Wall,
    /// The process's CPU time (every thread's): steadier than wall time on a loaded machine;
    /// with one thread (`RAYON_NUM_THREADS=1`) it is the stepping thread's time.
    Cpu,
}

impl Clock {
    /// The clock's reading.
    fn now(self) -> Result<Duration, String> {
        match self {
            Clock::Wall => Ok(WALL_ORIGIN.with(|o| o.elapsed())),
            Clock::Cpu => process_cpu_time(),
        }
    }
}

thread_local! {
    static WALL_ORIGIN: Instant = Instant::now();
}

#[cfg(unix)]
fn process_cpu_time() -> Result<Duration, String> {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to write into.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } != 0 {
        return Err(format!("cannot read the process's CPU time: {}", std::io::Error::last_os_error()));
    }
    Ok(Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
}

#[cfg(not(unix))]
fn process_cpu_time() -> Result<Duration, String> {
    Err("--cpu needs a Unix system".into())
}

/// One timed run of a scene.
#[derive(Clone, Debug)]
pub struct Run {
    pub ms_per_step: f64,
    /// The stages of the step, by time spent in the stage itself (nested stages excluded), in
    /// ms per step, largest first.
    pub stages: Vec<(&'static str, f64)>,
}

/// Open stages of the step being timed: (stage, start, time of the stages nested in it).
type OpenStages = Vec<(&'static str, Instant, Duration)>;

thread_local! {
    static OPEN: RefCell<OpenStages> = const { RefCell::new(Vec::new()) };
    static SELF_TIME: RefCell<Vec<(&'static str, Duration)>> = const { RefCell::new(Vec::new()) };
}

/// The scene's stage observer: accounts each stage's own time (its time minus its nested stages').
fn observe_stage(stage: &'static str, begins: bool) {
    if begins {
        OPEN.with_borrow_mut(|o| o.push((stage, Instant::now(), Duration::ZERO)));
        return;
    }
    let Some((name, t0, nested)) = OPEN.with_borrow_mut(|o| o.pop()) else { return };
    let total = t0.elapsed();
    OPEN.with_borrow_mut(|o| {
        if let Some(parent) = o.last_mut() {
            parent.2 += total;
        }
    });
    let own = total.saturating_sub(nested);
    SELF_TIME.with_borrow_mut(|s| match s.iter_mut().find(|e| e.0 == name) {
        Some(e) => e.1 += own,
        None => s.push((name, own)),
    });
}

/// Loads, initialises and steps a scene `steps` times; times the stepping only, by `clock` (the
/// stages by wall time).
pub fn run_scene(factory: &Factory, scene: &Path, data_dirs: &[PathBuf], steps: usize, output_dir: &Path, clock: Clock) -> Result<Run, String> {
    let load = crate::LoadOptions { data_dirs: data_dirs.to_vec(), ..Default::default() };
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> Result<Run, String> {
        let mut loaded = crate::load_with(scene, factory, &load).map_err(|f| format!("does not load: {}", f.first_error()))?;
        let scene = &mut loaded.scene;
        scene.output_dir = output_dir.to_path_buf();
        scene.stage_observer = Some(observe_stage);
        OPEN.with_borrow_mut(Vec::clear);
        SELF_TIME.with_borrow_mut(Vec::clear);
        let t0 = clock.now()?;
        crate::run::simulate(scene, steps, &mut []).map_err(|e| e.to_string())?;
        let elapsed = clock.now()?.saturating_sub(t0);
        let per_step = |d: Duration| d.as_secs_f64() * 1e3 / steps.max(1) as f64;
        let mut stages: Vec<(&'static str, f64)> = SELF_TIME.with_borrow(|s| s.iter().map(|&(n, d)| (n, per_step(d))).collect());
        stages.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(Run { ms_per_step: per_step(elapsed), stages })
    }));
    caught.unwrap_or_else(|p| {
        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        Err(format!("panic: {msg}"))
    })
}

/// A scene's result over the runs: the median run, or why it could not run.
#[derive(Clone, Debug)]
pub struct Row {
    pub entry: Entry,
    pub result: Result<Run, String>,
}

impl Row {
    /// Settee's time over SOFA's.
    pub fn ratio(&self) -> Option<f64> {
        self.result.as_ref().ok().map(|r| r.ms_per_step / self.entry.sofa_ms)
    }
}

/// The run of median time (the lower middle one for an even count).
pub fn median(mut runs: Vec<Run>) -> Option<Run> {
    runs.sort_by(|a, b| a.ms_per_step.total_cmp(&b.ms_per_step));
    let mid = runs.len().saturating_sub(1) / 2;
    runs.into_iter().nth(mid)
}

/// Runs every entry `runs` times, round after round (so that a change of the machine's load
/// touches every scene alike); `progress` is told of each run (round, index of the entry).
pub fn bench(
    factory: &Factory,
    paths: &Paths,
    set: Set,
    entries: &[Entry],
    runs: usize,
    clock: Clock,
    progress: &mut dyn FnMut(usize, usize, &Entry),
) -> Vec<Row> {
    let output_dir = std::env::temp_dir().join(format!("settee-bench-{}", std::process::id()));
    let mut results: Vec<Result<Vec<Run>, String>> = entries.iter().map(|e| paths.locate(set, &e.scene).map(|_| Vec::new())).collect();
    for round in 0..runs.max(1) {
        for (i, (e, res)) in entries.iter().zip(results.iter_mut()).enumerate() {
            let Ok(done) = res else { continue };
            progress(round, i, e);
            let Ok((file, data)) = paths.locate(set, &e.scene) else { continue };
            match run_scene(factory, &file, &data, e.steps, &output_dir, clock) {
                Ok(r) => done.push(r),
                Err(msg) => *res = Err(msg),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&output_dir);
    entries
        .iter()
        .zip(results)
        .map(|(e, r)| Row { entry: e.clone(), result: r.and_then(|runs| median(runs).ok_or_else(|| "not run".to_string())) })
        .collect()
}

/// The Markdown table of the rows, then a summary line (and the scenes at or above SOFA's time).
pub fn report(rows: &[Row], runs: usize, clock: Clock) -> String {
    let mut s = String::new();
    let mut how: Vec<String> = Vec::new();
    if clock == Clock::Cpu {
        how.push("CPU".into());
    }
    if runs > 1 {
        how.push(format!("median of {runs}"));
    }
    let how = if how.is_empty() { String::new() } else { format!(" ({})", how.join(", ")) };
    s.push_str(&format!("| scene | steps | SOFA ms/step | Settee ms/step{how} | Settee/SOFA | top stages (ms/step) |\n"));
    s.push_str("|---|---|---|---|---|---|\n");
    for row in rows {
        let e = &row.entry;
        match &row.result {
            Ok(r) => {
                let stages: Vec<String> = r.stages.iter().take(3).map(|(n, ms)| format!("{n} {ms:.3}")).collect();
                s.push_str(&format!(
                    "| {} | {} | {:.3} | {:.3} | {:.2} | {} |\n",
                    e.scene,
                    e.steps,
                    e.sofa_ms,
                    r.ms_per_step,
                    r.ms_per_step / e.sofa_ms,
                    stages.join(", ")
                ));
            }
            Err(msg) => s.push_str(&format!("| {} | {} | {:.3} | error | | {} |\n", e.scene, e.steps, e.sofa_ms, msg.replace('|', "/"))),
        }
    }
    let ratios: Vec<f64> = rows.iter().filter_map(Row::ratio).collect();
    if ratios.is_empty() {
        s.push_str("\nno scene ran\n");
        return s;
    }
    let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
    let worst = ratios.iter().copied().fold(f64::MIN, f64::max);
    let best = ratios.iter().copied().fold(f64::MAX, f64::min);
    let failed = rows.len() - ratios.len();
    s.push_str(&format!("\nscenes {}, geometric mean Settee/SOFA {geo:.2}, worst {worst:.2}, best {best:.2}", ratios.len()));
    if failed > 0 {
        s.push_str(&format!(", {failed} did not run"));
    }
    s.push('\n');
    let slow: Vec<String> = rows.iter().filter_map(|r| r.ratio().filter(|&x| x >= 1.0).map(|x| format!("{} {x:.2}", r.entry.scene))).collect();
    if slow.is_empty() {
        s.push_str("at or above SOFA's time: none\n");
    } else {
        s.push_str(&format!("at or above SOFA's time: {}\n", slow.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMINGS: &str = "# SOFA\n\n| scene | steps | SOFA ms/step | min | max |\n|---|---|---|---|---|\n\
| A.scn | 100 | 1.0 | 1 | 1 |\n\n## Demo set\n\ntext\n\n| scene | steps | SOFA ms/step | Settee |\n|---|---|---|---|\n\
| Demos/x.scn | 100 | 3.027 | 190 |\n| y.scn | 60 | did not run | |\n\n## Suite side by side (2026)\n\n\
| scene | steps | SOFA ms/step | Settee ms/step | Settee/SOFA |\n|---|---|---|---|---|\n| A.scn | 300 | 0.145 | 0.017 | 0.12 |\n";

    #[test]
    fn each_set_reads_its_own_table() {
        assert_eq!(parse_set(TIMINGS, Set::Demos).unwrap(), vec![Entry { scene: "Demos/x.scn".into(), steps: 100, sofa_ms: 3.027 }]);
        assert_eq!(parse_set(TIMINGS, Set::Suite).unwrap(), vec![Entry { scene: "A.scn".into(), steps: 300, sofa_ms: 0.145 }]);
        assert!(parse_set("| A.scn | 1 | 2 |", Set::Suite).unwrap_err().contains("no section"));
    }

    #[test]
    fn median_takes_the_middle_run_and_report_sums_up() {
        let run = |ms| Run { ms_per_step: ms, stages: vec![("solve", ms)] };
        assert_eq!(median(vec![run(3.0), run(1.0), run(2.0)]).unwrap().ms_per_step, 2.0);
        let rows = vec![
            Row { entry: Entry { scene: "a.scn".into(), steps: 1, sofa_ms: 2.0 }, result: Ok(run(1.0)) },
            Row { entry: Entry { scene: "b.scn".into(), steps: 1, sofa_ms: 1.0 }, result: Ok(run(2.0)) },
            Row { entry: Entry { scene: "c.scn".into(), steps: 1, sofa_ms: 1.0 }, result: Err("missing".into()) },
        ];
        let text = report(&rows, 3, Clock::Wall);
        assert!(text.contains("| a.scn | 1 | 2.000 | 1.000 | 0.50 | solve 1.000 |"), "{text}");
        assert!(text.contains("scenes 2, geometric mean Settee/SOFA 1.00, worst 2.00, best 0.50, 1 did not run"), "{text}");
        assert!(text.contains("at or above SOFA's time: b.scn 2.00"), "{text}");
    }
}
