//! `settee plot` on dumps of a suite scene and on a run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../../tests/support/mod.rs"]
mod support;

/// The SOFA suite as the other suite tests find it (`SETTEE_SUITE`, else `../shared/sofa-suite`
/// beside the repository); `None` skips with a note, a failure when `SETTEE_REQUIRE_SUITE` is set.
fn suite() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::var_os("SETTEE_SUITE").map(PathBuf::from).unwrap_or_else(|| root.join("../shared/sofa-suite"));
    if ["scenes", "references", "data"].iter().all(|d| dir.join(d).is_dir()) {
        return Some(dir);
    }
    use std::io::Write;
    let required = std::env::var("SETTEE_REQUIRE_SUITE").is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(!required, "SOFA suite not found at {} (set SETTEE_SUITE) and SETTEE_REQUIRE_SUITE is set: this test needs it", dir.display());
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let _ = std::io::stderr().write_all(format!("note: SOFA suite not found at {}; test skipped: {test}\n", dir.display()).as_bytes());
    None
}

fn settee(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_settee")).args(args).output().expect("run settee")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn out_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-plot-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The polylines of an SVG written by plotters: each one's points as (x, y) pixels.
fn polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline")
        .skip(1)
        .map(|el| {
            let pts = el.split("points=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or("");
            pts.split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').expect("x,y");
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

#[test]
fn plot_draws_dumped_coordinates_of_a_suite_scene() {
    let Some(suite) = suite() else { return };
    let scene = suite.join("scenes/Benchmark/Analysis/Pendulum.scn");
    let dir = out_dir("pendulum");
    let dumps = dir.join("dumps");
    let o =
        settee(&["run", s(&scene), "--steps", "50", "--dump", s(&dumps), "--dump-every", "10", "--dump-final", "--data-dir", s(&suite.join("data"))]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let files: Vec<PathBuf> = std::fs::read_dir(&dumps).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 2, "two simulated states: {files:?}");

    // Both states' DOF 1, coordinate z (the root's gravity is along −z): two series of 6 records
    // (T = 0, 0.1, …, 0.5).
    let svg = dir.join("z.svg");
    let o = settee(&["plot", s(&dumps), "-o", s(&svg), "--dof", "1", "--coord", "z"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("(2 series)"));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"), "not an SVG document");
    let lines = polylines(&text);
    // Two data lines, and a legend sample (2 points) per series.
    let data: Vec<&Vec<(f64, f64)>> = lines.iter().filter(|l| l.len() > 2).collect();
    assert_eq!(data.len(), 2, "{lines:?}");
    assert!(data.iter().all(|l| l.len() == 6), "{data:?}");
    // Times increase left to right; the pendulums' ends fall: y in pixels grows (downwards).
    for l in &data {
        assert!(l.windows(2).all(|w| w[1].0 > w[0].0));
        assert!(l[5].1 > l[0].1, "the free end falls: {l:?}");
    }
    assert!(text.contains("Particles DOF 1 z"), "legend names the state, DOF and coordinate");

    // One state, three coordinates (the default), two DOFs; into a PNG.
    let png = dir.join("xyz.png");
    let o = settee(&["plot", s(&files[0]), "-o", s(&png), "--dof", "0,1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("(6 series)"));
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 960, "PNG width");

    // --state picks the dumps of one state; errors are clear.
    let o = settee(&["plot", s(&dumps), "-o", s(&dir.join("s.svg")), "--state", "Particles"]);
    assert!(o.status.success());
    let o = settee(&["plot", s(&dumps), "-o", s(&dir.join("s.svg")), "--state", "nope"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("no dump of state 'nope'"));
    let o = settee(&["plot", s(&files[0]), "-o", s(&dir.join("s.svg")), "--dof", "7"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("DOF 7 does not exist: the state has 2 DOFs"));
    let o = settee(&["plot", s(&files[0]), "-o", s(&dir.join("s.pdf"))]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains(".svg or .png"));
}

#[test]
fn plot_reads_monitor_files() {
    let dir = out_dir("monitor");
    let file = dir.join("probe_x.txt");
    std::fs::write(&file, "# Gnuplot File : positions of 2 particle(s) Monitored\n# 1st Column : time, others : particle(s) number 0 1\n0\t0 0 0\t1 0 0\n0.1\t0 -1 0\t1 -2 0\n0.2\t0 -2 0\t1 -4 0\n").unwrap();
    let svg = dir.join("m.svg");
    let o = settee(&["plot", s(&file), "-o", s(&svg), "--dof", "1", "--coord", "y,norm"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = polylines(&std::fs::read_to_string(&svg).unwrap());
    assert_eq!(lines.iter().filter(|l| l.len() == 3).count(), 2);
}

#[test]
fn plot_run_draws_kinetic_energy_and_constraint_solver_statistics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = out_dir("run");
    // Without constraints: one panel, kinetic energy from T=0 and after each of the 30 steps.
    let svg = dir.join("chain.svg");
    let o = settee(&["plot", "--run", s(&root.join("scenes/hanging_chain.scn")), "--steps", "30", "-o", s(&svg)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = polylines(&std::fs::read_to_string(&svg).unwrap());
    let data: Vec<_> = lines.iter().filter(|l| l.len() > 2).collect();
    assert_eq!(data.len(), 1);
    assert_eq!(data[0].len(), 31);
    // At rest at T=0 (the largest y in pixels is the lowest energy), moving afterwards.
    assert!(data[0][0].1 > data[0][30].1);
    // With a Lagrangian constraint solver (a suite scene): energy, iterations and residual panels,
    // the solver's series with a point per step.
    let Some(suite) = suite() else { return };
    let scene = suite.join("scenes/Component/Constraint/Lagrangian/InextensiblePendulum.scn");
    let svg = dir.join("pendulum.svg");
    let o = settee(&["plot", "--run", s(&scene), "--data-dir", s(&suite.join("data")), "--steps", "30", "-o", s(&svg)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("(3 series)"), "{}", String::from_utf8_lossy(&o.stdout));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("kinetic energy") && text.contains("constraint solver iterations") && text.contains("constraint solver residual"),
        "panels"
    );
    let data: Vec<usize> = polylines(&text).iter().map(|l| l.len()).filter(|n| *n > 2).collect();
    assert_eq!(data[..2], [31, 30], "energy from T=0, iterations after each step: {data:?}");
}

/// `settee regress` on one suite scene: progress lines on a non-terminal stderr, a header row, the
/// command line in the Markdown file.
#[test]
fn regress_reports_progress_a_header_and_its_command() {
    let Some(suite) = suite() else { return };
    let dir = out_dir("regress");
    let md = dir.join("table.md");
    let list = suite.join("RegressionStateScenes.regression-tests");
    let o = settee(&["regress", s(&list), "--filter", "Analysis/Pendulum.scn", "--markdown", s(&md)]);
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(err.contains("[1/1] pass        Benchmark/Analysis/Pendulum.scn ("), "{err}");
    let mut lines = out.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("status      scene") && header.contains("ms/step"), "{header}");
    assert!(lines.next().unwrap().starts_with("pass        Benchmark/Analysis/Pendulum.scn"), "{out}");
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains(&format!("Generated by `settee regress {} --filter Analysis/Pendulum.scn --markdown {}`", list.display(), md.display())),
        "{text}"
    );
}
