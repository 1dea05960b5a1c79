//! The acceptance scenes of SofaPython3's API (spec python.md §7.4) that need only SOFA
//! components run on Settee both ways a SOFA user runs them: `settee run SCENE --steps 100`
//! (runSofa's way) and a Python program doing what `python3` does with the installed package
//! (spec §9: `createScene` on `Sofa.Core.Node("root")`, `initRoot`, 100 × `animate(root,
//! root.dt.value)`), run by `settee python`, the same interpreter path as `python3` with
//! `pip install .`. Each run must end with success and no error message, and its states must
//! move as physics says: fall under gravity, or stay put when nothing acts on them.
//!
//! The scenes are test data outside the repository (`../shared/python-scenes`,
//! `../shared/sofa-examples`); without them the tests skip with a note, and fail under CI.

mod common;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use settee_regress::read_state_reference;

/// The driver of the `python3` way (createScene, initRoot, N steps; prints each state's
/// displacement and the final time).
const DRIVER: &str = include_str!("python/drive.py");
const STEPS: usize = 100;

#[derive(Clone, Copy, Debug)]
enum Motion {
    /// Nothing acts on the states (no solver, or no gravity): they stay exactly where they were.
    Still,
    /// Gravity pulls −y: the states' points go down by at least this much on average.
    Falls { min_drop: f64 },
}

struct Case {
    /// The shared directory and the scene's path in it.
    shared: &'static str,
    path: &'static str,
    /// Environment the scene reads (`s`, the benchmark's size).
    env: &'static [(&'static str, &'static str)],
    dt: f64,
    /// How many states `settee run --dump` writes (those SOFA's regression test would: the ones an
    /// ODE solver integrates) and how many mechanical states the driver finds (mapped ones too).
    dumped: usize,
    states: usize,
    /// Coordinates per point of those states (3 for Vec3d, 7 for Rigid3d), for the mean drop.
    stride: usize,
    motion: Motion,
    /// Lines the scene's controllers print over the run, and how many times each.
    prints: &'static [(&'static str, usize)],
}

const EXAMPLES: &str = "python-scenes";
const SOFA: &str = "sofa-examples";

fn scene(case: &Case) -> Option<PathBuf> {
    let dir = settee_testkit::shared_dir(case.shared)?;
    let prefix = if case.shared == EXAMPLES { "SofaPython3/examples" } else { "examples/Benchmark/Performance" };
    let path = dir.join(prefix).join(case.path);
    assert!(path.is_file(), "{} is missing from the shared data", path.display());
    Some(path)
}

/// SOFA's data repository (meshes of liver.py, springForceField.py).
fn data_dir() -> Option<PathBuf> {
    settee_testkit::shared_dir(SOFA).map(|d| d.join("share"))
}

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("python-scenes", name)
}

fn settee(case: &Case, args: &[&str]) -> (String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_settee"));
    cmd.args(args).env_remove("SOFA_DATA_PATH");
    if let Some(d) = data_dir() {
        cmd.env("SOFA_DATA_PATH", d);
    }
    for (k, v) in case.env {
        cmd.env(k, v);
    }
    let out: Output = cmd.output().expect("run settee");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "settee {args:?} failed ({:?}):\n{stdout}\n{stderr}", out.status);
    for text in [&stdout, &stderr] {
        let lower = text.to_lowercase();
        assert!(!lower.contains("error") && !lower.contains("traceback"), "settee {args:?} reported an error:\n{stdout}\n{stderr}");
    }
    (stdout, stderr)
}

fn check_prints(case: &Case, stdout: &str, way: &str) {
    for (line, n) in case.prints {
        let got = stdout.lines().filter(|l| l.starts_with(line)).count();
        assert_eq!(got, *n, "{}, {way}: `{line}` printed {got} times, expected {n}:\n{stdout}", case.path);
    }
}

fn check_motion(case: &Case, way: &str, max_displacement: f64, mean_dy: f64) {
    match case.motion {
        Motion::Still => assert_eq!(max_displacement, 0.0, "{}, {way}: a state moved with nothing acting on it", case.path),
        Motion::Falls { min_drop } => {
            assert!(mean_dy < -min_drop, "{}, {way}: a state did not fall (mean y displacement {mean_dy}, expected below -{min_drop})", case.path)
        }
    }
}

/// `settee run SCENE --steps 100`, its states dumped at the start and after the last step.
fn through_runner(case: &Case, path: &Path) {
    let dump = temp_dir(&format!("run-{}", case.path.replace('/', "_")));
    let (stdout, _) = settee(case, &["run", path.to_str().unwrap(), "--steps", &STEPS.to_string(), "--dump", dump.to_str().unwrap(), "--dump-final"]);
    let t: f64 = stdout
        .lines()
        .rev()
        .filter_map(|l| l.split("t = ").nth(1))
        .find_map(|rest| rest.split(|c: char| c == ';' || c.is_whitespace()).next()?.parse().ok())
        .unwrap_or_else(|| panic!("{}: no final time in the runner's output:\n{stdout}", case.path));
    assert!((t - STEPS as f64 * case.dt).abs() < 1e-9, "{}: settee run ended at t = {t}", case.path);
    check_prints(case, &stdout, "settee run");
    let mut dumps: Vec<PathBuf> = std::fs::read_dir(&dump).unwrap().flatten().map(|e| e.path()).collect();
    dumps.sort();
    assert_eq!(dumps.len(), case.dumped, "{}: settee run dumped {dumps:?}", case.path);
    for file in dumps {
        let records = read_state_reference(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let (first, last) = (&records[0].x, &records[records.len() - 1].x);
        assert!(!first.is_empty() && first.len() == last.len() && first.len() % case.stride == 0, "{}: odd dump", file.display());
        let max = first.iter().zip(last).map(|(a, b)| (b - a).abs()).fold(0.0, f64::max);
        let points = first.len() / case.stride;
        let mean_dy = (0..points).map(|p| last[p * case.stride + 1] - first[p * case.stride + 1]).sum::<f64>() / points as f64;
        check_motion(case, &format!("settee run, {}", file.display()), max, mean_dy);
    }
}

/// The `python3` way: the driver, run by `settee python`.
fn through_python(case: &Case, path: &Path) {
    let dir = temp_dir(&format!("py-{}", case.path.replace('/', "_")));
    let driver = dir.join("drive.py");
    std::fs::write(&driver, DRIVER).unwrap();
    let (stdout, _) = settee(case, &["python", driver.to_str().unwrap(), path.to_str().unwrap(), &STEPS.to_string()]);
    assert!(stdout.lines().any(|l| l == "driver done"), "{}: the driver did not finish:\n{stdout}", case.path);
    check_prints(case, &stdout, "settee python");
    let field = |line: &str, name: &str| -> f64 {
        let mut it = line.split_whitespace().skip_while(|w| *w != name);
        it.nth(1).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no {name} in `{line}`"))
    };
    let t = stdout.lines().find(|l| l.starts_with("time ")).map(|l| field(l, "time")).expect("the driver prints the time");
    assert!((t - STEPS as f64 * case.dt).abs() < 1e-9, "{}: the driver ended at t = {t}", case.path);
    let states: Vec<&str> = stdout.lines().filter(|l| l.starts_with("state ")).collect();
    assert_eq!(states.len(), case.states, "{}: the driver saw these states:\n{stdout}", case.path);
    for line in states {
        // Mapped states (collision spheres, visual points) follow their masters: judged alike.
        check_motion(case, &format!("settee python, {line}"), field(line, "max_displacement"), field(line, "mean_dy"));
    }
}

fn run_both_ways(case: &Case) {
    let Some(path) = scene(case) else { return };
    through_runner(case, &path);
    through_python(case, &path);
}

const NO_PRINTS: &[(&str, usize)] = &[];

#[test]
fn basic_rigid_frames_stay_put() {
    run_both_ways(&Case {
        shared: EXAMPLES,
        path: "basic.py",
        env: &[],
        dt: 0.01,
        dumped: 0,
        states: 2,
        stride: 7,
        motion: Motion::Still,
        prints: NO_PRINTS,
    });
}

#[test]
fn liver_falls_under_gravity() {
    run_both_ways(&Case {
        shared: EXAMPLES,
        path: "liver.py",
        env: &[],
        dt: 0.02,
        dumped: 1,
        states: 2,
        stride: 3,
        motion: Motion::Falls { min_drop: 0.01 },
        prints: NO_PRINTS,
    });
}

#[test]
fn spring_force_field_balls_fall() {
    run_both_ways(&Case {
        shared: EXAMPLES,
        path: "springForceField.py",
        env: &[],
        dt: 0.01,
        dumped: 2,
        states: 2,
        stride: 7,
        motion: Motion::Falls { min_drop: 0.01 },
        prints: NO_PRINTS,
    });
}

#[test]
fn loaded_xml_scene_stays_put() {
    run_both_ways(&Case {
        shared: EXAMPLES,
        path: "loadXMLfromPython.py",
        env: &[],
        dt: 0.01,
        dumped: 0,
        states: 2,
        stride: 7,
        motion: Motion::Still,
        prints: NO_PRINTS,
    });
}

#[test]
fn script_controller_sees_every_event() {
    run_both_ways(&Case {
        shared: EXAMPLES,
        path: "example-scriptcontroller.py",
        env: &[],
        dt: 0.01,
        dumped: 0,
        states: 0,
        stride: 3,
        motion: Motion::Still,
        prints: &[
            ("Handled event received: {'type': 'SimulationInitDoneEvent'", 1),
            ("Un-handled handled event received {'type': 'AnimateBeginEvent'", STEPS),
            ("Un-handled handled event received {'type': 'AnimateEndEvent'", STEPS),
        ],
    });
}

#[test]
fn empty_controller_and_key_events_step() {
    for path in ["emptyController.py", "keyEvents.py"] {
        run_both_ways(&Case {
            shared: EXAMPLES,
            path,
            env: &[],
            dt: 0.01,
            dumped: 0,
            states: 0,
            stride: 3,
            motion: Motion::Still,
            prints: NO_PRINTS,
        });
    }
}

#[test]
fn reassignment_controllers_fire_every_step() {
    run_both_ways(&Case {
        shared: EXAMPLES,
        path: "tests/testReassignmentController.py",
        env: &[],
        dt: 0.01,
        dumped: 0,
        states: 0,
        stride: 3,
        motion: Motion::Still,
        prints: &[
            ("Controller0 : onAnimateBeginEvent", STEPS),
            ("Controller1 : onAnimateBeginEvent", STEPS),
            ("Controller2 : onAnimateBeginEvent", STEPS),
        ],
    });
}

/// A Python force field (`ForceFieldVec3d`, its `addForce` writing through `writeableArray`)
/// holds two particles to their initial positions: they swing under gravity around m·g/k =
/// 0.245 below them, with a period 2π·√(m/k) ≈ 0.99 s (the script's `addDForce` adds nothing,
/// so the implicit solver barely damps it): after 100 steps they are back near the top, just
/// below it.
#[test]
fn python_rest_shape_force_field_sags() {
    run_both_ways(&Case {
        shared: EXAMPLES,
        path: "example-forcefield.py",
        env: &[],
        dt: 0.01,
        dumped: 1,
        states: 1,
        stride: 3,
        motion: Motion::Falls { min_drop: 1e-4 },
        prints: NO_PRINTS,
    });
}

/// Python components whose handlers do nothing: a force field on a massless state (its
/// `addForce`/`addDForce` are called), an engine nobody reads.
#[test]
fn empty_force_field_and_data_engine_step() {
    for (path, dumped, states) in [("emptyForceField.py", 1, 1), ("emptyDataEngine.py", 0, 0)] {
        run_both_ways(&Case { shared: EXAMPLES, path, env: &[], dt: 0.01, dumped, states, stride: 3, motion: Motion::Still, prints: NO_PRINTS });
    }
}

/// The benchmark bars: a sibling module imported by name, the size from the environment.
#[test]
fn bar16_fem_implicit_bends_down() {
    run_both_ways(&Case {
        shared: SOFA,
        path: "Bar16-fem-implicit-Vec3d.py",
        env: &[("s", "1")],
        dt: 0.04,
        dumped: 1,
        states: 1,
        stride: 3,
        motion: Motion::Falls { min_drop: 1e-4 },
        prints: NO_PRINTS,
    });
}

#[test]
fn bar16_spring_rk4_bends_down() {
    run_both_ways(&Case {
        shared: SOFA,
        path: "Bar16-spring-rk4-Vec3d.py",
        env: &[("s", "1")],
        dt: 0.001,
        dumped: 1,
        states: 1,
        stride: 3,
        motion: Motion::Falls { min_drop: 1e-5 },
        prints: NO_PRINTS,
    });
}

/// Scripts run as programs (`python3 basic.py`): their own `main()` drives the scene.
#[test]
fn scripts_run_their_main() {
    let mains = [
        ("basic.py", &[("Iteration #9", 1), ("Simulation made 10 time steps. Done", 1)][..]),
        (
            "tests/testReassignmentController.py",
            &[
                ("Controller0 : onAnimateBeginEvent", 1),
                ("Controller0 : modifiedAnimateBeginEvent", 1),
                ("Controller2 : modifiedAnimateBeginEvent", 1),
            ][..],
        ),
    ];
    for (path, prints) in mains {
        let case = Case { shared: EXAMPLES, path, env: &[], dt: 0.01, dumped: 0, states: 0, stride: 3, motion: Motion::Still, prints };
        let Some(scene) = scene(&case) else { return };
        let (stdout, _) = settee(&case, &["python", scene.to_str().unwrap()]);
        check_prints(&case, &stdout, "settee python (main)");
    }
}

/// A Python mapping (`Sofa.Core.Mapping_Vec3d_Vec3d`) under a node with two parents
/// (`root.Simulation.addChild(root.Modelling)`: the solver's node adopts the model): the mapped
/// points follow the falling ones through the script's `apply`.
#[test]
fn python_identity_mapping_follows_its_falling_input() {
    run_both_ways(&Case {
        shared: EXAMPLES,
        path: "example-mapping.py",
        env: &[],
        dt: 0.01,
        dumped: 1,
        states: 2,
        stride: 3,
        motion: Motion::Falls { min_drop: 1.0 },
        prints: NO_PRINTS,
    });
}
