//! `settee view`: the recorded frames are the states' positions, and the page really draws them
//! (headless Chromium with its software WebGL, checked from the screenshots' pixels).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use settee::run::{simulate, RunObserver};
use settee::view::{Recording, ViewRecorder};
use settee_core::{Scene, VecId};

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("settee-viewer-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the recorder and keeps, beside it, the positions of every state after every step.
struct Checked {
    recorder: ViewRecorder,
    /// Per step done (0 = initial), the positions of each tracked state.
    truth: Vec<Vec<Vec<f64>>>,
}

impl Checked {
    fn snapshot(&mut self, scene: &Scene) {
        let rec = self.recorder.recording();
        self.truth.push(
            rec.tracks
                .iter()
                .map(|t| match t.source {
                    settee::view::TrackSource::State(s) => scene.store.get(s).read(VecId::POSITION).to_vec(),
                    settee::view::TrackSource::Visual(_) => Vec::new(),
                })
                .collect(),
        );
    }
}

struct Shared(std::rc::Rc<std::cell::RefCell<Checked>>);

impl RunObserver for Shared {
    fn before_step(&mut self, scene: &mut Scene, k: usize) -> Result<(), String> {
        self.0.borrow_mut().recorder.before_step(scene, k)
    }
    fn after_step(&mut self, scene: &mut Scene, k: usize, t: f64) -> Result<(), String> {
        let mut c = self.0.borrow_mut();
        c.recorder.after_step(scene, k, t)?;
        c.snapshot(scene);
        Ok(())
    }
    fn finish(&mut self, scene: &mut Scene) -> Result<Vec<PathBuf>, String> {
        self.0.borrow_mut().recorder.finish(scene)
    }
}

/// Simulates `scene` for `steps` steps with a recorder of the given byte budget; returns the
/// recording and the true positions per step.
fn record(scene: &str, steps: usize, max_bytes: usize) -> (Recording, Vec<Vec<Vec<f64>>>) {
    let factory = settee::factory();
    let mut loaded = settee::load(&repo_file(scene), &factory, &[]).unwrap_or_else(|f| panic!("{}", f.first_error()));
    let recorder = ViewRecorder::new(&loaded.scene, "test", steps, None, max_bytes);
    let checked = std::rc::Rc::new(std::cell::RefCell::new(Checked { recorder, truth: Vec::new() }));
    checked.borrow_mut().snapshot(&loaded.scene);
    let mut observers: Vec<Box<dyn RunObserver>> = vec![Box::new(Shared(checked.clone()))];
    simulate(&mut loaded.scene, steps, &mut observers).unwrap();
    drop(observers);
    let c = std::rc::Rc::try_unwrap(checked).ok().unwrap().into_inner();
    (c.recorder.into_recording(), c.truth)
}

fn assert_frames_match(rec: &Recording, truth: &[Vec<Vec<f64>>]) {
    for (f, &step) in rec.frame_steps.iter().enumerate() {
        for (ti, t) in rec.tracks.iter().enumerate() {
            let x = &truth[step][ti];
            assert_eq!(t.frames[f].len(), 3 * t.vertices);
            assert_eq!(x.len(), 3 * t.vertices, "Vec3 state expected");
            for (i, (&a, &b)) in t.frames[f].iter().zip(x).enumerate() {
                assert_eq!(a, b as f32, "frame {f} (step {step}), track {}, coordinate {i}", t.name);
            }
        }
    }
}

#[test]
fn recorded_frames_are_the_states_positions() {
    let steps = 30;
    let (rec, truth) = record("scenes/beam.scn", steps, settee::view::DEFAULT_MAX_BYTES);
    assert_eq!(rec.stride, 1);
    assert_eq!(rec.frame_steps, (0..=steps).collect::<Vec<_>>());
    assert_eq!(rec.step_ms.len(), steps);
    assert_eq!(rec.frame_times.len(), steps + 1);
    assert!((rec.frame_times[steps] - steps as f64 * 0.02).abs() < 1e-12, "{}", rec.frame_times[steps]);
    // One state: the 4 × 4 × 20 grid; drawn as the boundary of its 3 × 3 × 19 hexahedra:
    // 2·9 + 4·57 = 246 quads, 492 triangles.
    assert_eq!(rec.tracks.len(), 1);
    assert_eq!(rec.tracks[0].vertices, 320);
    assert_eq!(rec.tracks[0].frames.len(), steps + 1);
    assert_eq!(rec.layers.len(), 1);
    assert_eq!(rec.layers[0].kind, settee::view::LayerKind::Triangles);
    assert_eq!(rec.layers[0].indices.len(), 3 * 492);
    assert!(rec.layers[0].label.contains("246 boundary faces"), "{}", rec.layers[0].label);
    assert_frames_match(&rec, &truth);
    // The beam moves: the free end sags.
    let tip_y = |f: usize| rec.tracks[0].frames[f][3 * 319 + 1];
    assert!(tip_y(steps) < tip_y(0) - 0.1, "{} → {}", tip_y(0), tip_y(steps));
}

#[test]
fn frames_are_decimated_over_the_byte_budget() {
    // The chain: 6 points = 72 bytes a frame (96 in base64): a budget of 1,000 bytes keeps
    // about 10 frames of the 101.
    let (rec, truth) = record("scenes/hanging_chain.scn", 100, 1000);
    assert_eq!(rec.tracks[0].vertices, 6);
    assert!(rec.stride > 1, "{}", rec.stride);
    assert!(rec.frame_steps.len() <= 11, "{:?}", rec.frame_steps);
    assert_eq!(rec.frame_steps[0], 0);
    assert_eq!(*rec.frame_steps.last().unwrap(), 100, "the last step is always kept");
    assert!(rec.frame_steps.windows(2).all(|w| w[1] - w[0] <= rec.stride));
    assert!(rec.decimation().unwrap().contains("decimated"));
    assert_frames_match(&rec, &truth);
    // Points and the springs between them.
    let kinds: Vec<_> = rec.layers.iter().map(|l| l.kind).collect();
    assert_eq!(kinds, [settee::view::LayerKind::Lines, settee::view::LayerKind::Points]);
    assert_eq!(rec.layers[0].indices, [0, 1, 1, 2, 2, 3, 3, 4, 4, 5]);
}

#[test]
fn a_failed_run_still_writes_the_frames_before_the_failure() {
    // Springs far too stiff for explicit Euler at this dt: NaN at step 20 if nothing stopped it;
    // the divergence check stops it at step 2, when a position passes 1e12 × the scene's size.
    let dir = temp_dir("blowup");
    let scn = dir.join("blowup.scn");
    std::fs::write(
        &scn,
        r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
    <DefaultAnimationLoop/>
    <EulerExplicitSolver/>
    <MechanicalObject name="particles" position="0 0 0  1 0 0  2 0 0  3 0 0"/>
    <UniformMass totalMass="0.004"/>
    <FixedProjectiveConstraint indices="0"/>
    <SpringForceField spring="0 1 1e9 0 0.5  1 2 1e9 0 0.5  2 3 1e9 0 0.5"/>
</Node>"#,
    )
    .unwrap();
    let page = dir.join("out.html");
    let out = Command::new(env!("CARGO_BIN_EXE_settee")).arg("view").arg(&scn).args(["--steps", "200", "-o"]).arg(&page).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("diverged") && stderr.contains("step 2 "), "{stderr}");
    assert!(stderr.contains(&format!("wrote {} with the 2 frames", page.display())), "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(r#""stopped":"the run stopped after step 1: "#) && html.contains("the simulation diverged at step 2"),
        "{}",
        &html[..200.min(html.len())]
    );
    assert!(html.contains(r#""frameSteps":[0,1]"#));
    let _ = std::fs::remove_dir_all(&dir);
}

// ----- the page in headless Chromium ---------------------------------------------------------

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SETTEE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") || std::env::var("SETTEE_REQUIRE_SUITE").is_ok_and(|v| v == "1")
}

const W: usize = 800;
const H: usize = 600;
/// The control panel covers x < 238; the mesh is looked for right of it.
const X0: usize = 250;
/// The page's background colour (clearColor 0.118, 0.133, 0.165).
const BG: [i32; 3] = [30, 34, 42];

/// Screenshot of `url` as RGB rows.
fn screenshot(browser: &Path, url: &str, png_path: &Path, profile: &Path) -> Vec<[u8; 3]> {
    let mut child = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars", "--mute-audio"])
        .arg("--no-first-run")
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={W},{H}"))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium failed on {url}: {status}");
            break;
        }
        if t0.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let decoder = png::Decoder::new(std::fs::File::open(png_path).expect("screenshot written"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width as usize, info.height as usize), (W, H));
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let k = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        c => panic!("unexpected PNG colour type {c:?}"),
    };
    buf[..info.buffer_size()].chunks_exact(k).map(|p| [p[0], p[1], p[2]]).collect()
}

fn is_background(p: [u8; 3]) -> bool {
    (0..3).all(|a| (p[a] as i32 - BG[a]).abs() <= 12)
}

#[test]
fn page_draws_the_beam_and_it_moves_between_two_frames() {
    let Some(browser) = chromium() else {
        assert!(!required(), "chromium is not installed (apt-get install -y chromium; .ci/run installs it): the viewer test cannot run");
        eprintln!("skipped: chromium not found (set SETTEE_CHROMIUM or install Debian's chromium)");
        return;
    };
    let dir = temp_dir("page");
    // Default output: `<scene stem>.html` in the current directory.
    let out = Command::new(env!("CARGO_BIN_EXE_settee"))
        .current_dir(&dir)
        .arg("view")
        .arg(repo_file("scenes/beam.scn"))
        .args(["--steps", "40"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let page = dir.join("beam.html");
    assert!(stdout.contains("wrote beam.html (41 frames"), "{stdout}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("http://") && !html.contains("https://"), "the page must not fetch anything");

    let url = |f: usize| format!("file://{}#frame={f}", page.display());
    let a = screenshot(&browser, &url(0), &dir.join("frame0.png"), &dir.join("profile0"));
    let b = screenshot(&browser, &url(40), &dir.join("frame40.png"), &dir.join("profile40"));
    let right = |img: &[[u8; 3]]| -> Vec<[u8; 3]> { (0..H).flat_map(|y| (X0..W).map(move |x| (y, x))).map(|(y, x)| img[y * W + x]).collect() };
    let (ra, rb) = (right(&a), right(&b));
    let drawn = |img: &[[u8; 3]]| img.iter().filter(|p| !is_background(**p)).count();
    let (na, nb) = (drawn(&ra), drawn(&rb));
    eprintln!("mesh pixels right of the panel: frame 0 {na}, frame 40 {nb}");
    // The beam covers a good part of the view (about 5 % of the area right of the panel).
    let area = (W - X0) * H;
    assert!(na > area / 100 && nb > area / 100, "mesh pixels: frame 0 {na}, frame 40 {nb} of {area}");
    // The beam sags: many pixels change between the frames.
    let changed = ra.iter().zip(&rb).filter(|(p, q)| is_background(**p) != is_background(**q)).count();
    eprintln!("pixels changed between the frames: {changed}");
    assert!(changed > area / 200, "only {changed} pixels changed between frame 0 and frame 40");
    let _ = std::fs::remove_dir_all(&dir);
}
