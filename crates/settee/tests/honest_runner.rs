//! A runner that never lies: exit codes follow what happened, a closed output pipe is no panic,
//! bad time steps and Python scenes are refused with their reason, and scenes that load but
//! cannot do what was meant are warned about. Every test runs the built binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn settee(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_settee")).args(args).output().expect("run settee")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A fresh temporary directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("settee-honest-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(path: &Path, text: &str) -> String {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Two particles joined by a spring, falling under gravity, with an implicit solver.
fn falling_pair(gravity_y: f64) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 {gravity_y} 0">
  <EulerImplicitSolver rayleighStiffness="0" rayleighMass="0"/>
  <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-12"/>
  <MechanicalObject name="dofs" position="0 0 0  1 0 0"/>
  <UniformMass totalMass="2"/>
  <SpringForceField spring="0 1 100 0.1 1"/>
</Node>
"#
    )
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

// ----- closed output pipe ------------------------------------------------------------------------

/// Runs settee with its stdout a pipe whose reading end is closed before settee writes, and
/// checks it ended quietly: success, or killed by SIGPIPE as `cat` would be; never a panic.
fn assert_quiet_on_closed_pipe(args: &[&str]) {
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_settee")).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn settee");
    drop(child.stdout.take()); // the reader goes away, as `head` does after its lines
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "settee {args:?} panicked on a closed pipe:\n{stderr}");
    assert_ne!(out.status.code(), Some(101), "settee {args:?}: {stderr}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert!(out.status.success() || out.status.signal() == Some(libc_sigpipe()), "settee {args:?}: {:?}\n{stderr}", out.status);
    }
}

#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13 // SIGPIPE on every Unix Settee builds on
}

#[test]
fn a_closed_stdout_pipe_ends_doc_run_check_and_regress_quietly() {
    assert_quiet_on_closed_pipe(&["doc"]);
    assert_quiet_on_closed_pipe(&["doc", "--markdown"]);
    let chain = manifest_dir().join("../../scenes/hanging_chain.scn");
    assert_quiet_on_closed_pipe(&["run", chain.to_str().unwrap(), "--steps", "3"]);
    assert_quiet_on_closed_pipe(&["check", chain.to_str().unwrap()]);
    let suite = regress_suite("pipe", 9.81);
    assert_quiet_on_closed_pipe(&["regress", &suite]);
}

// ----- regress exit codes ------------------------------------------------------------------------

/// A one-scene suite (`scenes/`, `references/`, a list) whose reference was recorded with
/// gravity -9.81 and whose scene now has `-gravity`: it passes for 9.81 and fails otherwise.
fn regress_suite(name: &str, gravity: f64) -> String {
    let dir = temp_dir(&format!("suite-{name}"));
    let scene = write(&dir.join("scenes/pair.scn"), &falling_pair(-9.81));
    let out = settee(&["run", &scene, "--steps", "20", "--dump", dir.join("references").to_str().unwrap()]);
    assert!(out.status.success(), "{:?}", text(&out));
    write(&dir.join("scenes/pair.scn"), &falling_pair(-gravity));
    write(&dir.join("suite.regression-tests"), "references\npair.scn 20 1e-6 0 1\n")
}

#[test]
fn regress_exits_non_zero_on_a_failing_scene_and_zero_when_all_pass() {
    let pass = settee(&["regress", &regress_suite("pass", 9.81)]);
    let (stdout, stderr) = text(&pass);
    assert!(pass.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed, 0 failed, 0 errors, 0 unsupported (1 scenes)"), "{stdout}");

    let fail = settee(&["regress", &regress_suite("fail", 5.0)]);
    let (stdout, stderr) = text(&fail);
    assert_eq!(fail.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("FAIL") && stdout.contains("0 passed, 1 failed, 0 errors"), "{stdout}");
}

#[test]
fn a_regress_filter_that_matches_no_scene_is_an_error() {
    let list = regress_suite("filter", 9.81);
    let out = settee(&["regress", &list, "--filter", "no-such-scene"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("--filter \"no-such-scene\" matches no scene"), "{stderr}");
    assert!(!stdout.contains("passed"), "no table for zero scenes: {stdout}");
    // The same filter matching the scene runs it.
    let out = settee(&["regress", &list, "--filter", "pair"]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(text(&out).0.contains("1 passed, 0 failed"), "{:?}", text(&out));
}

#[test]
fn regress_exits_non_zero_on_an_error_and_reports_unsupported_apart() {
    let list = regress_suite("error", 9.81);
    let dir = Path::new(&list).parent().unwrap().to_path_buf();
    // A second scene with no reference (error) and a third with an unknown component.
    write(&dir.join("scenes/noref.scn"), &falling_pair(-9.81));
    write(&dir.join("scenes/unknown.scn"), "<Node name=\"root\"><NoSuchComponent/></Node>\n");
    write(&dir.join("suite.regression-tests"), "references\npair.scn 20 1e-6 0 1\nnoref.scn 20 1e-6 0 1\nunknown.scn 20 1e-6 0 1\n");
    let out = settee(&["regress", &list]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed, 0 failed, 1 error, 1 unsupported (3 scenes)"), "{stdout}");
    assert!(stdout.contains("ERROR") && stdout.contains("unsupported"), "{stdout}");

    // Only unsupported: success, unless --unsupported-fails.
    write(&dir.join("suite.regression-tests"), "references\npair.scn 20 1e-6 0 1\nunknown.scn 20 1e-6 0 1\n");
    let out = settee(&["regress", &list]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(text(&out).0.contains("1 passed, 0 failed, 0 errors, 1 unsupported"), "{:?}", text(&out));
    let out = settee(&["regress", &list, "--unsupported-fails"]);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
}

// ----- time steps --------------------------------------------------------------------------------

#[test]
fn non_positive_or_non_finite_time_steps_are_refused_with_the_reason() {
    let dir = temp_dir("dt");
    let scene = write(&dir.join("pair.scn"), &falling_pair(-9.81));
    for (dt, why) in [("-0.01", "is negative"), ("0", "is zero"), ("nan", "is not a number"), ("inf", "is infinite")] {
        let out = settee(&["run", &scene, "--steps", "2", "--dt", dt]);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "--dt {dt}: {stderr}");
        assert!(stderr.contains("error: --dt = ") && stderr.contains(why), "--dt {dt}: {stderr}");
        assert!(!stderr.contains("unexpected argument"), "--dt {dt} was not parsed as a value: {stderr}");
    }
    let out = settee(&["run", &scene, "--steps", "2", "--dt", "0.02"]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(text(&out).0.contains("2 steps of 0.02 s"), "{:?}", text(&out));

    for (dt, why) in [("0", "is zero"), ("-1", "is negative")] {
        let scene = write(&dir.join("root_dt.scn"), &falling_pair(-9.81).replace("dt=\"0.01\"", &format!("dt=\"{dt}\"")));
        let out = settee(&["run", &scene, "--steps", "2"]);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "dt=\"{dt}\": {stderr}");
        assert!(stderr.contains("root_dt.scn:1:1: error: Node 'root': dt = ") && stderr.contains(why), "dt=\"{dt}\": {stderr}");
    }
}

// ----- check -------------------------------------------------------------------------------------

#[test]
fn check_says_what_happened_per_scene_and_in_total_and_fails_on_errors() {
    let dir = temp_dir("check");
    let good = write(&dir.join("good.scn"), &falling_pair(-9.81));
    let bad = write(
        &dir.join("bad.scn"),
        &falling_pair(-9.81).replace("<UniformMass totalMass=\"2\"/>", "<UniformMass totalMass=\"2\"/>\n  <MeshOBJLoader filename=\"missing.obj\"/>"),
    );
    let unknown = write(&dir.join("unknown.scn"), "<Node name=\"root\"><NoSuchComponent/></Node>\n");

    let out = settee(&["check", &good]);
    let (stdout, _) = text(&out);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("good.scn: loaded, 0 warnings"), "{stdout}");
    assert!(stdout.ends_with("checked 1 scene: 1 loaded, 0 failed, 0 unsupported; 0 errors, 0 warnings\n"), "{stdout}");

    let out = settee(&["check", &good, &bad, &unknown]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("bad.scn: FAILED: 1 error"), "{stdout}");
    assert!(stdout.contains("unknown.scn: unsupported: unknown component 'NoSuchComponent'"), "{stdout}");
    assert!(stdout.contains("checked 3 scenes: 1 loaded, 1 failed, 1 unsupported"), "{stdout}");
}

#[test]
fn python_scene_errors_point_at_the_script_line() {
    let dir = temp_dir("python");
    let bad = write(
        &dir.join("bad.py"),
        "import Sofa\n\ndef createScene(root):\n    root.addObject('MechanicalObject')\n    root.addObject('NoSuchComponent')\n",
    );
    let no_create = write(&dir.join("none.py"), "import Sofa\n");
    let syntax = write(&dir.join("syntax.py"), "import Sofa\ndef createScene(root)\n    pass\n");
    let raises = write(&dir.join("raises.py"), "def helper():\n    raise RuntimeError('boom')\n\ndef createScene(root):\n    helper()\n");
    let cases: [(&str, &str); 4] = [
        (&bad, "bad.py:5:1: error: createScene raised an exception: ValueError: Object type NoSuchComponent<> was not created"),
        (&no_create, "none.py:1:1: error: the script defines no createScene(rootNode) function"),
        (&syntax, "syntax.py:2:"),
        (&raises, "raises.py:2:1: error: createScene raised an exception: RuntimeError: boom"),
    ];
    for (scene, expected) in cases {
        for cmd in ["run", "check"] {
            let out = settee(&[cmd, scene]);
            let (stdout, stderr) = text(&out);
            let all = format!("{stdout}{stderr}");
            assert_eq!(out.status.code(), Some(1), "{all}");
            assert!(all.contains(expected), "expected `{expected}` in:\n{all}");
        }
    }
    let good = write(&dir.join("good.py"), "import Sofa\n\ndef createScene(root):\n    root.addObject('DefaultAnimationLoop')\n    root.addObject('MechanicalObject', position=[[0, 0, 0]])\n");
    let out = settee(&["run", &good, "--steps", "3"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
}

// ----- warnings ----------------------------------------------------------------------------------

#[test]
fn scenes_that_cannot_do_what_was_meant_get_positioned_warnings_in_check_and_run() {
    let dir = temp_dir("warnings");
    let no_solver = write(
        &dir.join("no_solver.scn"),
        "<Node name=\"root\" dt=\"0.01\">\n  <Node name=\"ball\">\n    <MechanicalObject name=\"dofs\" position=\"0 0 0\"/>\n    <UniformMass totalMass=\"1\"/>\n  </Node>\n</Node>\n",
    );
    let no_mass = write(&dir.join("no_mass.scn"), &falling_pair(-9.81).replace("  <UniformMass totalMass=\"2\"/>\n", ""));
    let empty_box = write(
        &dir.join("empty_box.scn"),
        &falling_pair(-9.81)
            .replace("<UniformMass totalMass=\"2\"/>", "<UniformMass totalMass=\"2\"/>\n  <BoxROI name=\"box\" box=\"5 5 5 6 6 6\"/>"),
    );
    let cases = [
        (&no_solver, "no_solver.scn:3:5: warning: MechanicalObject 'dofs': this state has a mass but no ODE solver in its node or above it"),
        (&no_mass, "no_mass.scn:4:3: warning: MechanicalObject 'dofs': an ODE solver integrates this state but it has no mass"),
        (&empty_box, "empty_box.scn:6:3: warning: BoxROI 'box': the box selects none of the 2 points"),
    ];
    for (scene, warning) in cases {
        let out = settee(&["check", scene]);
        let (stdout, _) = text(&out);
        assert!(out.status.success(), "a warning is no failure: {stdout}");
        assert!(stdout.contains(warning), "check {scene}:\n{stdout}");
        assert!(stdout.contains("loaded, 1 warning\n"), "check {scene}:\n{stdout}");
        let out = settee(&["run", scene, "--steps", "2"]);
        let (_, stderr) = text(&out);
        assert!(stderr.contains(warning), "run {scene}:\n{stderr}");
    }
    // The well-formed scene says nothing.
    let good = write(&dir.join("good.scn"), &falling_pair(-9.81));
    let out = settee(&["run", &good, "--steps", "2"]);
    assert!(out.status.success() && !text(&out).1.contains("warning"), "{:?}", text(&out));
}

/// Balls that fall onto a fixed floor with Lagrangian (or `response`) contacts; `correction` is
/// the ball node's constraint correction element, or "".
fn balls_on_a_floor(response: &str, correction: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver maxIterations="100" tolerance="1e-8"/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <NewProximityIntersection alarmDistance="0.1" contactDistance="0.05"/>
  <CollisionResponse response="{response}"/>
  <Node name="floor">
    <RegularGridTopology n="3 1 3" min="-2 0 -2" max="2 0 2"/>
    <MechanicalObject name="floorDofs"/>
    <TriangleCollisionModel simulated="0" moving="0"/>
  </Node>
  <Node name="balls">
    <EulerImplicitSolver/>
    <SparseLDLSolver template="CompressedRowSparseMatrixd"/>
    <MechanicalObject name="ballDofs" position="0 0.5 0  0.5 0.5 0.5"/>
    <UniformMass totalMass="1"/>
    <SphereCollisionModel name="spheres" radius="0.2"/>
    {correction}
  </Node>
</Node>
"#
    )
}

#[test]
fn a_body_with_lagrangian_contacts_and_no_constraint_correction_is_warned_about_at_its_state() {
    let dir = temp_dir("no-correction");
    let bare = write(&dir.join("bare.scn"), &balls_on_a_floor("FrictionContactConstraint", ""));
    let warning = "bare.scn:17:5: warning: MechanicalObject 'ballDofs': this state gets FrictionContactConstraint contacts through \
                   SphereCollisionModel 'spheres' but has no constraint correction";
    let out = settee(&["check", &bare]);
    let (stdout, _) = text(&out);
    assert!(out.status.success(), "a warning is no failure: {stdout}");
    assert!(stdout.contains(warning), "{stdout}");
    assert!(stdout.contains("loaded, 1 warning\n"), "{stdout}");
    // What the warning says is true: the balls stay where they are (y = 0.5) instead of falling.
    let out = settee(&["run", &bare, "--steps", "20", "--dump", dir.join("dump").to_str().unwrap(), "--dump-final"]);
    let (_, stderr) = text(&out);
    assert!(out.status.success() && stderr.contains(warning), "{stderr}");
    let gz = dir.join("dump/bare.scn.reference_0_ballDofs_mstate.txt.gz");
    let records = settee_regress::reference::read_state_reference(&gz).unwrap();
    assert_eq!(records.last().unwrap().time, 0.2);
    assert_eq!(records.last().unwrap().x[1], 0.5);

    // With a correction, or with penalty contacts, nothing to say.
    for (name, scene) in [
        ("corrected.scn", balls_on_a_floor("FrictionContactConstraint", "<UncoupledConstraintCorrection defaultCompliance=\"1e-3\"/>")),
        ("penalty.scn", balls_on_a_floor("PenalityContactForceField", "")),
    ] {
        let path = write(&dir.join(name), &scene);
        let out = settee(&["check", &path]);
        let (stdout, _) = text(&out);
        assert!(out.status.success() && stdout.contains("loaded, 0 warnings"), "{name}: {stdout}");
    }
}

// ----- divergence --------------------------------------------------------------------------------

/// Three particles in a chain of springs far too stiff for the explicit solver's time step.
fn exploding_chain(stiffness: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.1" gravity="0 -9.81 0">
  <EulerExplicitSolver/>
  <MechanicalObject name="dofs" position="0 0 0  1 0 0  2 0 0"/>
  <UniformMass totalMass="1"/>
  <FixedProjectiveConstraint indices="0"/>
  <SpringForceField spring="0 1 {stiffness} 0 1   1 2 {stiffness} 0 1"/>
</Node>
"#
    )
}

#[test]
fn a_diverging_explicit_scene_stops_early_naming_state_dof_time_and_step() {
    let dir = temp_dir("divergence");
    // Huge stiffness: positions leave 1e12 × the scene's size (2) within a few steps.
    let scene = write(&dir.join("stiff.scn"), &exploding_chain("1e6"));
    let out = settee(&["run", &scene, "--steps", "1000"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("stiff.scn:3:3: error: MechanicalObject 'dofs': the simulation diverged at step 5 (t = 0.5): position of DOF 1 of state 'dofs' is 5.003e16, beyond 2.000e12"),
        "{stderr}"
    );
    // Milder: the kinetic energy grows ×1e8 over half the run long before any position does.
    let scene = write(&dir.join("mild.scn"), &exploding_chain("100"));
    let out = settee(&["run", &scene, "--steps", "1000"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("diverged at step 12 (t = 1.2): the kinetic energy grew to 8.677e9"), "{stderr}");
    assert!(stderr.contains("fastest: DOF 1 of state 'dofs'"), "{stderr}");
    // Stable (ω·dt < 2): the same chain runs its 1000 steps.
    let scene = write(&dir.join("stable.scn"), &exploding_chain("30"));
    let out = settee(&["run", &scene, "--steps", "1000"]);
    assert!(out.status.success(), "{:?}", text(&out));
    // A body falling from rest for a long time accelerates steadily: no divergence.
    let scene = write(&dir.join("fall.scn"), &falling_pair(-9.81));
    let out = settee(&["run", &scene, "--steps", "20000"]);
    assert!(out.status.success(), "{:?}", text(&out));
}

// ----- unknown components ------------------------------------------------------------------------

#[test]
fn skip_unknown_runs_a_scene_without_its_unknown_components_reported_as_warnings() {
    let dir = temp_dir("unknown");
    let scene = write(
        &dir.join("unknown.scn"),
        &falling_pair(-9.81).replace("<UniformMass totalMass=\"2\"/>", "<UniformMass totalMass=\"2\"/>\n  <SomeExporterFromAPlugin filename=\"x\"/>"),
    );
    // Refused without the flag…
    let out = settee(&["run", &scene, "--steps", "5"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("unknown.scn:6:3: error: unknown component 'SomeExporterFromAPlugin'"), "{stderr}");
    // …run with it, the unknown component reported at its position.
    let out = settee(&["run", &scene, "--steps", "5", "--skip-unknown"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("unknown.scn:6:3: warning: unknown component 'SomeExporterFromAPlugin' skipped (--skip-unknown)"), "{stderr}");
    assert!(stdout.contains("5 steps of 0.01 s"), "{stdout}");
    let out = settee(&["check", &scene, "--skip-unknown"]);
    let (stdout, _) = text(&out);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("unknown.scn: loaded, 1 warning"), "{stdout}");
    let out = settee(&["check", &scene]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).0.contains("unknown.scn: unsupported: unknown component 'SomeExporterFromAPlugin'"), "{:?}", text(&out));
}

#[test]
fn gui_helpers_never_block_a_run() {
    let helpers = [
        "VisualStyle displayFlags=\"showVisual showBehaviorModels\"",
        "OglSceneFrame style=\"Arrows\" alignment=\"TopRight\"",
        "LightManager",
        "DirectionalLight direction=\"0 0 -1\"",
        "BackgroundSetting color=\"0 0 0\"",
        "InteractiveCamera position=\"0 0 10\"",
        "RecordedCamera position=\"0 0 10\"",
        "VisualGrid size=\"10\"",
        "LineAxis size=\"1\"",
        "OglViewport screenPosition=\"0 0\"",
        "OrderIndependentTransparencyManager",
        "VisualBoundingBox",
        "AddFrameButtonSetting",
        "MouseButtonSetting button=\"Left\"",
        "ViewerSetting resolution=\"800 600\"",
    ];
    let extra: String = helpers.iter().map(|h| format!("  <{h}/>\n")).collect();
    let dir = temp_dir("gui");
    let scene = write(&dir.join("gui.scn"), &falling_pair(-9.81).replace("  <EulerImplicitSolver", &format!("{extra}  <EulerImplicitSolver")));
    let out = settee(&["run", &scene, "--steps", "3"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("warning") && !stderr.contains("error"), "{stderr}");
}
