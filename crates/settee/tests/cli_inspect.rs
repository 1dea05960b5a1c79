//! The command line's inspection and steering: `--set`, `--time`, `print`, `tree`, `doc`, and the
//! dump options `--dump-final` and `--dump-every`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../../tests/support/mod.rs"]
mod support;

/// A chain of four particles in a child node; a BoxROI selects the first two, which are fixed.
const CHAIN: &str = r#"<?xml version="1.0"?>
<Node name="root" gravity="0 -10 0" dt="0.01">
    <DefaultAnimationLoop/>
    <Node name="chain">
        <EulerImplicitSolver name="ode" rayleighStiffness="0.1" rayleighMass="0.1"/>
        <CGLinearSolver iterations="200" tolerance="1e-14" threshold="1e-18"/>
        <MechanicalObject name="dofs" position="0 0 0  1 0 0  2 0 0  3 0 0"/>
        <UniformMass name="mass" totalMass="4"/>
        <BoxROI name="box" box="-0.5 -0.5 -0.5 1.5 0.5 0.5"/>
        <FixedProjectiveConstraint indices="@box.indices"/>
        <SpringForceField spring="0 1 100 0 1  1 2 100 0 1  2 3 100 0 1"/>
    </Node>
</Node>
"#;

/// The chain scene in a file of its own per test (tests run in parallel).
fn chain(test: &str) -> PathBuf {
    let p = support::temp_scene(test, CHAIN);
    let chain = p.with_file_name("chain.scn");
    std::fs::rename(&p, &chain).expect("rename");
    chain
}

fn settee(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_settee")).args(args).output().expect("run settee")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `settee print` with one argument prints the value alone.
fn print1(scene: &Path, data: &str, extra: &[&str]) -> String {
    let mut args = vec!["print", s(scene), data];
    args.extend_from_slice(extra);
    let o = settee(&args);
    assert!(o.status.success(), "print {data} {extra:?} failed: {}", stderr(&o));
    stdout(&o).trim().to_string()
}

#[test]
fn print_shows_data_after_init() {
    let scene = chain("print");
    assert_eq!(print1(&scene, "chain/box.indices", &[]), "0 1");
    // Outputs of init: the mass of each DOF from totalMass.
    assert_eq!(print1(&scene, "/chain/mass.vertexMass", &[]), "1");
    // SOFA's link syntax, a class name for a unique component, node Data.
    assert_eq!(print1(&scene, "@/chain/BoxROI.indices", &[]), "0 1");
    assert_eq!(print1(&scene, "root.gravity", &[]), "0 -10 0");
    // Several at once: `PATH = value` lines.
    let o = settee(&["print", s(&scene), "chain/dofs.position", "root/chain.dt"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "chain/dofs.position = 0 0 0 1 0 0 2 0 0 3 0 0\nroot/chain.dt = 0.01\n");
    // Unknown component, unknown Data: an error naming what exists.
    let o = settee(&["print", s(&scene), "chain/nope.indices"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no component or child node named 'nope'") && stderr(&o).contains("box"), "{}", stderr(&o));
    let o = settee(&["print", s(&scene), "chain/box.indice"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("has no Data 'indice'"), "{}", stderr(&o));
}

#[test]
fn set_overrides_data_before_init() {
    let scene = chain("set");
    // The box is read at init: a smaller box selects one point.
    assert_eq!(print1(&scene, "chain/box.indices", &["--set", "chain/box.box=-0.5 -0.5 -0.5 0.5 0.5 0.5"]), "0");
    // All the path forms reach the same Data.
    for set in [
        "chain/mass.totalMass=8",
        "/chain/mass.totalMass=8",
        "root/chain/mass.totalMass=8",
        "@/chain/mass.totalMass=8",
        "chain/UniformMass.totalMass=8",
    ] {
        assert_eq!(print1(&scene, "chain/mass.vertexMass", &["--set", set]), "2", "--set {set}");
    }
    // Node Data, repeated overrides.
    assert_eq!(print1(&scene, "root.dt", &["--set", "root.dt=0.5", "--set", ".dt=0.02"]), "0.02");
    assert_eq!(print1(&scene, "chain.gravity", &["--set", "root.gravity=0 0 -3"]), "0 0 -3");
}

#[test]
fn set_reports_unknown_paths_data_and_bad_values() {
    let scene = chain("errors");
    let cases = [
        ("chain/nope.totalMass=2", "node /chain/ has no component or child node named 'nope'"),
        ("other/mass.totalMass=2", "node / has no child node named 'other' (child nodes: chain; components: DefaultAnimationLoop1"),
        ("chain/mass.totalmass=2", "has no Data 'totalmass'"),
        ("chain/mass.totalMass=heavy", "--set chain/mass.totalMass=heavy: invalid value for Data 'totalMass': 'heavy' is not a number"),
        ("root.dt=fast", "--set root.dt=fast"),
        ("chain/mass=2", "no Data name"),
    ];
    for (set, message) in cases {
        let o = settee(&["run", s(&scene), "--steps", "1", "--set", set]);
        assert!(!o.status.success(), "--set {set} was accepted");
        assert!(stderr(&o).contains(message), "--set {set}: expected '{message}' in:\n{}", stderr(&o));
    }
    let o = settee(&["check", s(&scene), "--set", "chain/mass.totalmass=2"]);
    assert!(!o.status.success());
    assert!(stdout(&o).contains("did you mean 'totalMass'"), "{}", stdout(&o));
}

/// Reads every record of a dump: (time, positions).
fn dump_records(path: &Path) -> Vec<(f64, Vec<f64>)> {
    settee_regress::reference::read_state_reference(path).expect("dump").into_iter().map(|r| (r.time, r.x)).collect()
}

fn dump_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-inspect-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn set_changes_the_simulation() {
    let scene = chain("gravity");
    let last_y = |extra: &[&str]| {
        let dir = dump_dir(&format!("grav{}", extra.len()));
        let mut args = vec!["run", s(&scene), "--steps", "20", "--dump", s(&dir), "--dump-final"];
        args.extend_from_slice(extra);
        let o = settee(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let recs = dump_records(&dir.join("chain.scn.reference_0_dofs_mstate.txt.gz"));
        recs.last().unwrap().1[10] // y of DOF 3
    };
    assert!(last_y(&[]) < -0.01, "the free end falls under gravity");
    assert_eq!(last_y(&["--set", "root.gravity=0 0 0"]), 0.0);
}

#[test]
fn time_runs_until_a_simulated_time() {
    let scene = chain("time");
    let o = settee(&["run", s(&scene), "--time", "0.3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("30 steps of 0.01 s"), "{}", stdout(&o));
    assert!(stdout(&o).contains("t = 0.3") && stdout(&o).contains("initialised in"), "{}", stdout(&o));
    let o = settee(&["run", s(&scene), "--time", "0.1", "--set", ".dt=0.02"]);
    assert!(stdout(&o).starts_with("5 steps of 0.02 s"), "{}", stdout(&o));
    // 0.07/0.01 = 7.000000000000001: seven steps, not eight.
    let o = settee(&["run", s(&scene), "--time", "0.07"]);
    assert!(stdout(&o).starts_with("7 steps of 0.01 s"), "{}", stdout(&o));
    let o = settee(&["run", s(&scene), "--time", "0.1", "--steps", "3"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    let o = settee(&["run", s(&scene), "--time", "-1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("the scene starts at t = 0"), "{}", stderr(&o));
}

#[test]
fn dump_final_writes_the_state_after_the_last_step() {
    let scene = chain("final");
    let dir = dump_dir("final");
    let file = dir.join("chain.scn.reference_0_dofs_mstate.txt.gz");
    let o = settee(&["run", s(&scene), "--steps", "3", "--dump", s(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let times: Vec<f64> = dump_records(&file).iter().map(|r| r.0).collect();
    assert_eq!(times, [0.0, 0.02]);
    let o = settee(&["run", s(&scene), "--steps", "3", "--dump", s(&dir), "--dump-final"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let times: Vec<f64> = dump_records(&file).iter().map(|r| r.0).collect();
    assert_eq!(times, [0.0, 0.02, 0.03]);
    // Every step, and the final state once: not twice when the schedule has written it.
    let o = settee(&["run", s(&scene), "--steps", "4", "--dump", s(&dir), "--dump-every", "2", "--dump-final"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let times: Vec<f64> = dump_records(&file).iter().map(|r| r.0).collect();
    assert_eq!(times, [0.0, 0.02, 0.04]);
    let o = settee(&["run", s(&scene), "--steps", "3", "--dump", s(&dir), "--dump-every", "0"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--dump-every") && stderr(&o).contains('0'), "{}", stderr(&o));
}

#[test]
fn tree_shows_classes_names_sizes_and_set_data() {
    let o = settee(&["tree", s(&chain("tree"))]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("root/") && lines[0].contains("dt=0.01"), "{out}");
    assert!(lines[1].starts_with("  DefaultAnimationLoop"), "{out}");
    assert!(lines[2].starts_with("  chain/"), "{out}");
    assert!(out.contains("    MechanicalObject<Vec3d> 'dofs'  size=4\n"), "{out}");
    assert!(out.contains("    UniformMass<Vec3d> 'mass'  totalMass=4\n"), "{out}");
    assert!(out.contains("    BoxROI<Vec3d> 'box'  box=-0.5 -0.5 -0.5 1.5 0.5 0.5"), "{out}");
    assert!(out.contains("indices=@box.indices"), "{out}");
    assert!(out.contains("spring=[3 × 5]"), "{out}");
}

#[test]
fn doc_lists_searches_and_documents_nodes() {
    let o = settee(&["doc", "--list"]);
    assert!(o.status.success());
    let names: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(names[0], "Node");
    assert!(names.iter().any(|n| n == "UniformMass") && names.iter().all(|n| !n.contains(' ')), "{names:?}");
    // Case-insensitive exact names, then substrings.
    let o = settee(&["doc", "uniformmass"]);
    assert!(stdout(&o).starts_with("UniformMass\n"), "{}", stdout(&o));
    let o = settee(&["doc", "springforce"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(
        out.contains("components contain 'springforce'") && out.contains("  SpringForceField") && out.contains("  MeshSpringForceField"),
        "{out}"
    );
    let o = settee(&["doc", "zzzz"]);
    assert!(!o.status.success());
    // The node's own Data.
    let o = settee(&["doc", "Node"]);
    let out = stdout(&o);
    for d in ["gravity", "dt", "time", "animate", "activated", "bbox"] {
        assert!(out.contains(&format!("  {d} ")), "Node lacks {d}: {out}");
    }
    // UniformMass: neither mass Data has a default that SOFA would use.
    let o = settee(&["doc", "UniformMass"]);
    let out = stdout(&o);
    let line = out.lines().find(|l| l.trim_start().starts_with("totalMass")).unwrap();
    assert!(line.contains("no default"), "{line}");
}
