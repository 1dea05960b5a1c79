//! `settee bench`: the table's structure, its ratio column, the summary, and clear errors when
//! files are missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A small chain of particles: a scene that steps in well under a millisecond.
const CHAIN: &str = r#"<?xml version="1.0"?>
<Node name="root" gravity="0 -10 0" dt="0.01">
    <DefaultAnimationLoop/>
    <Node name="chain">
        <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
        <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-18"/>
        <MechanicalObject position="0 0 0  1 0 0  2 0 0  3 0 0"/>
        <UniformMass totalMass="4"/>
        <FixedProjectiveConstraint indices="0"/>
        <SpringForceField spring="0 1 100 0 1  1 2 100 0 1  2 3 100 0 1"/>
    </Node>
</Node>
"#;

const TIMINGS: &str = "# SOFA's timings\n\n## Demo set\n\n| scene | steps | SOFA ms/step | Settee ms/step |\n|---|---|---|---|\n\
| chain.scn | 40 | 0.500 | 9.9 |\n\n## Suite side by side (2026-11-28)\n\n\
| scene | steps | SOFA ms/step | Settee ms/step | Settee/SOFA |\n|---|---|---|---|---|\n\
| Demos/chain.scn | 30 | 0.002 | 0.1 | 50 |\n";

/// A shared directory laid out as `../shared`, with the chain as a project scene and a suite scene.
fn shared(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("settee-bench-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for d in ["perf/scenes", "sofa-suite/scenes/Demos", "sofa-suite/data", "sofa-examples/examples", "sofa-examples/share"] {
        std::fs::create_dir_all(dir.join(d)).expect("create the shared directory");
    }
    std::fs::write(dir.join("perf/sofa-timings.md"), TIMINGS).expect("write the timings");
    std::fs::write(dir.join("perf/scenes/chain.scn"), CHAIN).expect("write a scene");
    std::fs::write(dir.join("sofa-suite/scenes/Demos/chain.scn"), CHAIN).expect("write a scene");
    dir
}

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_settee"))
        .arg("bench")
        .args(args)
        .env_remove("SETTEE_SUITE")
        .env_remove("SETTEE_SHARED")
        .output()
        .expect("run settee")
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            v.extend(files(&e.path()));
        } else {
            v.push(e.path());
        }
    }
    v.sort();
    v
}

/// The cells of the table row of `scene`.
fn row<'a>(out: &'a str, scene: &str) -> Vec<&'a str> {
    let line = out.lines().find(|l| l.starts_with(&format!("| {scene} |"))).unwrap_or_else(|| panic!("no row for {scene} in\n{out}"));
    line.trim().trim_matches('|').split('|').map(str::trim).collect()
}

/// Checks a row: the steps and SOFA's time come from the table, the ratio is Settee/SOFA.
fn check_row(out: &str, scene: &str, steps: &str, sofa: f64) -> f64 {
    let cells = row(out, scene);
    assert_eq!(cells.len(), 6, "{out}");
    assert_eq!(cells[1], steps);
    assert_eq!(cells[2].parse::<f64>().unwrap(), sofa);
    let settee: f64 = cells[3].parse().unwrap_or_else(|_| panic!("Settee's time in {out}"));
    assert!(settee > 0.0);
    let ratio: f64 = cells[4].parse().unwrap();
    assert!((ratio - settee / sofa).abs() <= 0.005 + 0.0005 / sofa, "ratio {ratio} is not {settee}/{sofa}\n{out}");
    // The step's stages, the largest first.
    assert!(cells[5].contains("solve") || cells[5].contains("compute force"), "{out}");
    ratio
}

/// The demo set and the suite set each read their own table and directory (the suite's by CPU
/// time, median of 3 runs); nothing is written into the shared directory.
#[test]
fn bench_prints_times_ratios_and_their_geometric_mean() {
    let dir = shared("sets");
    let before = files(&dir);
    let o = bench(&["--shared", dir.to_str().unwrap()]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.starts_with("| scene | steps | SOFA ms/step | Settee ms/step | Settee/SOFA | top stages (ms/step) |\n"), "{out}");
    let ratio = check_row(&out, "chain.scn", "40", 0.5);
    assert!(out.contains(&format!("scenes 1, geometric mean Settee/SOFA {ratio:.2}")), "{out}");

    let o = bench(&["--suite", "--runs", "3", "--cpu", "--shared", dir.to_str().unwrap()]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.contains("| Settee ms/step (CPU, median of 3) |"), "{out}");
    assert_eq!(text(&o.stderr).matches("Demos/chain.scn").count(), 3, "three runs");
    let ratio = check_row(&out, "Demos/chain.scn", "30", 0.002);
    // 2 µs per step is out of reach: the scene is listed as slower than SOFA.
    assert!(ratio >= 1.0);
    assert!(out.contains(&format!("at or above SOFA's time: Demos/chain.scn {ratio:.2}")), "{out}");
    assert_eq!(files(&dir), before, "bench wrote into the shared directory");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Missing files are reported as errors, with the path, and the exit status says so.
#[test]
fn bench_reports_missing_files() {
    let dir = shared("missing");
    let o = bench(&["--shared", dir.to_str().unwrap(), "--timings", dir.join("nowhere.md").to_str().unwrap()]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("error: cannot read SOFA's timings") && err.contains("nowhere.md"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    std::fs::remove_file(dir.join("perf/scenes/chain.scn")).unwrap();
    let o = bench(&["--shared", dir.to_str().unwrap()]);
    assert!(!o.status.success());
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(row(&out, "chain.scn")[3] == "error", "{out}");
    assert!(err.contains("error: chain.scn: scene not found") && !err.contains("panicked"), "{err}");

    let o = bench(&["--suite", "--shared", dir.to_str().unwrap(), "--filter", "nothing"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("no scene of"), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// On SOFA's suite and timings as they are (`../shared`): a short scene of the side-by-side table.
#[test]
fn bench_runs_a_suite_scene() {
    let Some(suite) = settee_testkit::suite() else { return };
    let timings = settee_testkit::shared().join("perf/sofa-timings.md");
    let o = bench(&["--suite", "--filter", "Analysis/Pendulum", "--suite-dir", suite.to_str().unwrap(), "--timings", timings.to_str().unwrap()]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    let cells = row(&out, "Benchmark/Analysis/Pendulum.scn");
    assert_eq!(cells[1], "300");
    let (settee, sofa, ratio): (f64, f64, f64) = (cells[3].parse().unwrap(), cells[2].parse().unwrap(), cells[4].parse().unwrap());
    assert!((ratio - settee / sofa).abs() <= 0.005 + 0.0005 / sofa, "{out}");
    assert!(out.contains("scenes 1, geometric mean Settee/SOFA"), "{out}");
}
