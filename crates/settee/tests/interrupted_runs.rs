//! Runs that end well (issue 22 §3): a long `settee run --dump --vtk` or `settee view` stopped
//! with SIGINT finishes its step, closes every output and says where it stopped; long runs whose
//! output is logged print progress lines.

#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use settee_regress::reference::{parse_state_text, parse_topology_text, read_dump_text};

/// The hanging cube: 125 points, dt = 0.02, about 0.1 ms a step.
const SCENE: &str = "scenes/first_scene_1_hanging_cube.scn";
const DT: f64 = 0.02;
const POINTS: usize = 125;

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("settee-interrupt-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Starts `settee ARGS` with piped stdout/stderr and progress lines every 0.1 s; returns the
/// child and the receiver of its stderr lines (read on a thread, so the pipe never fills).
fn start(args: &[&str], cwd: &Path) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_settee"))
        .args(args)
        .current_dir(cwd)
        .env("SETTEE_PROGRESS_SECONDS", "0.1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// Waits for the first progress line (the run is stepping), sends SIGINT, and returns the exit
/// code, stdout and every stderr line. Kills the child if it does not end within a minute.
fn interrupt(mut child: Child, rx: mpsc::Receiver<String>) -> (Option<i32>, String, Vec<String>) {
    let mut lines = Vec::new();
    loop {
        let line = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("no progress line within 60 s; stderr so far: {lines:?}")
        });
        let stepping = line.starts_with("step ");
        lines.push(line);
        if stepping {
            break;
        }
    }
    // SAFETY: kill(2) with the pid of our own child and a valid signal number.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the run did not stop within 60 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    lines.extend(rx.iter());
    (status.code(), out, lines)
}

/// `… stopped after step N of M (t = T)` → (N, M, T).
fn stop_point(stderr: &[String]) -> (usize, usize, f64) {
    let line = stderr.iter().find(|l| l.contains("interrupted: stopped after step")).unwrap_or_else(|| panic!("no stop message in {stderr:?}"));
    let rest = line.split("stopped after step ").nth(1).unwrap();
    let mut w = rest.split_whitespace();
    let step = w.next().unwrap().parse().unwrap();
    assert_eq!(w.next(), Some("of"));
    let steps = w.next().unwrap().parse().unwrap();
    let t = rest.split("(t = ").nth(1).unwrap().split(')').next().unwrap().parse().unwrap();
    (step, steps, t)
}

#[test]
fn sigint_during_run_closes_the_dumps_and_the_vtk_series() {
    let dir = temp_dir("run");
    let scene = repo_file(SCENE);
    let (child, rx) =
        start(&["run", scene.to_str().unwrap(), "--steps", "100000", "--dump", "dump", "--vtk", "vtk", "--dump-topology", "topo"], &dir);
    let (code, out, err) = interrupt(child, rx);
    assert_eq!(code, Some(130), "exit code; stderr: {err:?}");
    let (step, steps, t) = stop_point(&err);
    assert_eq!(steps, 100000);
    assert!(step > 0 && step < steps, "stopped after step {step}");
    assert!((t - step as f64 * DT).abs() < 1e-9 * t.max(1.0), "t = {t} after {step} steps of {DT}");

    // The gzip dump decompresses to its end and holds T = 0 and the state where the run stopped.
    let gz = dir.join("dump/first_scene_1_hanging_cube.scn.reference_0_dofs_mstate.txt.gz");
    assert!(out.contains(&format!("wrote dump/{}", gz.file_name().unwrap().to_str().unwrap())), "{out}");
    let decoded = read_dump_text(&gz).unwrap();
    assert!(!decoded.truncated, "the gzip stream is truncated");
    let records = parse_state_text(&decoded.text, false, &gz).unwrap();
    let times: Vec<f64> = records.iter().map(|r| r.time).collect();
    assert_eq!(times.len(), 2, "{times:?}");
    assert_eq!(times[0], 0.0);
    assert!((times[1] - t).abs() < 1e-4 * t, "last record at {} vs stop at {t}", times[1]);
    assert!(records.iter().all(|r| r.x.len() == 3 * POINTS));
    // The cube hangs: after the run, its free points have moved down from the initial state.
    let dy: f64 = (0..POINTS).map(|i| records[1].x[3 * i + 1] - records[0].x[3 * i + 1]).sum();
    assert!(dy < -1e-3, "the cube did not sag: Σdy = {dy}");

    // The topology dump: complete, one record per step start (t = 0 … (step − 1)·dt).
    let gz = dir.join("topo/first_scene_1_hanging_cube.scn.reference_0_grid_topology.txt.gz");
    let decoded = read_dump_text(&gz).unwrap();
    assert!(!decoded.truncated, "the topology dump's gzip stream is truncated");
    let records = parse_topology_text(&decoded.text, false, &gz).unwrap();
    assert_eq!(records.len(), step);
    assert!((records.last().unwrap().time - (step - 1) as f64 * DT).abs() < 1e-4 * t);
    assert!(out.contains("wrote topo/"), "{out}");

    // The series: one .vtu per step from 0 to the stop, each complete, listed by the .pvd.
    let pvd = std::fs::read_to_string(dir.join("vtk/first_scene_1_hanging_cube.pvd")).unwrap();
    assert!(pvd.trim_end().ends_with("</VTKFile>"), "{pvd}");
    let files: Vec<&str> = pvd.lines().filter_map(|l| l.split("file=\"").nth(1)).map(|f| f.split('"').next().unwrap()).collect();
    assert_eq!(files.len(), step + 1);
    assert_eq!(files.last().copied(), Some(format!("cube_dofs_{step:06}.vtu").as_str()));
    let last_time: f64 = pvd.lines().rev().find_map(|l| l.split("timestep=\"").nth(1)).unwrap().split('"').next().unwrap().parse().unwrap();
    assert_eq!(last_time, t);
    for f in &files {
        let text = std::fs::read_to_string(dir.join("vtk").join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(text.trim_end().ends_with("</VTKFile>"), "{f} is incomplete");
        assert!(text.contains(&format!("NumberOfPoints=\"{POINTS}\"")), "{f}");
    }
    let on_disk = std::fs::read_dir(dir.join("vtk")).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "vtu")).count();
    assert_eq!(on_disk, files.len(), "every .vtu written is in the series");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigint_during_view_writes_the_page_with_the_frames_so_far() {
    let dir = temp_dir("view");
    let scene = repo_file(SCENE);
    let (child, rx) = start(&["view", scene.to_str().unwrap(), "--steps", "100000", "-o", "page.html"], &dir);
    let (code, _out, err) = interrupt(child, rx);
    assert_eq!(code, Some(130), "exit code; stderr: {err:?}");
    let (step, _, _) = stop_point(&err);
    let page = std::fs::read_to_string(dir.join("page.html")).unwrap();
    assert!(page.trim_end().ends_with("</html>"), "the page is incomplete");
    assert!(page.contains(&format!("the run was interrupted after step {step} of 100000")));
    // The last recorded frame is the step where the run stopped.
    let frames = page.split("\"frameSteps\":[").nth(1).unwrap().split(']').next().unwrap();
    assert_eq!(frames.split(',').next_back().unwrap().parse::<usize>().unwrap(), step);
    assert!(err.iter().any(|l| l.contains("wrote") && l.contains("page.html")), "{err:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn logged_runs_print_progress_lines() {
    let dir = temp_dir("progress");
    let scene = repo_file(SCENE);
    let out = Command::new(env!("CARGO_BIN_EXE_settee"))
        .args(["run", scene.to_str().unwrap(), "--steps", "20000"])
        .env("SETTEE_PROGRESS_SECONDS", "0.02")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    // `step K/20000, t = T, X ms/step`: K grows, T = K·dt, X > 0.
    let mut last = 0;
    let mut count = 0;
    for line in err.lines().filter(|l| l.starts_with("step ")) {
        let (k, rest) = line["step ".len()..].split_once("/20000, t = ").unwrap_or_else(|| panic!("{line}"));
        let k: usize = k.parse().unwrap();
        let (t, ms) = rest.split_once(", ").unwrap();
        let t: f64 = t.parse().unwrap();
        let ms: f64 = ms.strip_suffix(" ms/step").unwrap().parse().unwrap();
        assert!(k > last && k < 20000, "{line}");
        assert!((t - k as f64 * DT).abs() < 1e-9 * t, "{line}");
        assert!(ms > 0.0, "{line}");
        last = k;
        count += 1;
    }
    assert!(count >= 2, "expected progress lines every 0.02 s in a run of about a second: {err}");

    // With the default interval (5 s), a short run prints none.
    let out = Command::new(env!("CARGO_BIN_EXE_settee")).args(["run", scene.to_str().unwrap(), "--steps", "20"]).current_dir(&dir).output().unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).lines().any(|l| l.starts_with("step ")));
    let _ = std::fs::remove_dir_all(&dir);
}
