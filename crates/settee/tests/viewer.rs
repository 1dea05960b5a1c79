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
    let Some(browser) = settee_testkit::chromium() else {
        assert!(
            !settee_testkit::suite_required(),
            "chromium is not installed (apt-get install -y chromium; .ci/run installs it): the viewer test cannot run"
        );
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

// ----- what the page shows: visual models, topological changes, constraint spaces --------------

/// Chromium, or `None` (skip) when it is not installed and not required.
fn browser_or_skip() -> Option<PathBuf> {
    let b = settee_testkit::chromium();
    if b.is_none() {
        assert!(
            !settee_testkit::suite_required(),
            "chromium is not installed (apt-get install -y chromium; .ci/run installs it): the viewer tests cannot run"
        );
        eprintln!("skipped: chromium not found (set SETTEE_CHROMIUM or install Debian's chromium)");
    }
    b
}

/// `settee view SCENE --steps N -o OUT` with the data directories given.
fn write_page(scene: &Path, steps: usize, out: &Path, data_dirs: &[PathBuf]) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_settee"));
    cmd.arg("view").arg(scene).args(["--steps", &steps.to_string(), "-o"]).arg(out);
    for d in data_dirs {
        cmd.arg("--data-dir").arg(d);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
}

/// The page's DOM once its scripts ran (the layer labels, the frame's counts).
fn dump_dom(browser: &Path, url: &str, profile: &Path) -> String {
    let o = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--no-first-run", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stderr(Stdio::null())
        .output()
        .expect("start chromium");
    assert!(o.status.success(), "chromium --dump-dom failed on {url}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The layer list of the page's panel, in a dumped DOM (the recorded data, in the same DOM,
/// holds every frame's labels).
fn layer_panel(dom: &str) -> &str {
    let a = dom.find(r#"<div id="layers">"#).expect("the layer list");
    let b = a + dom[a..].find(r#"<div class="hint">"#).expect("the hint after the layers");
    &dom[a..b]
}

/// The pixels right of the panel.
fn view_area(img: &[[u8; 3]]) -> impl Iterator<Item = [u8; 3]> + '_ {
    (0..H).flat_map(move |y| (X0..W).map(move |x| img[y * W + x]))
}

/// Shaded from the first colour of the page's palette (0.90, 0.45, 0.25): the colour of the
/// first layer drawn without a colour of its own.
fn is_first_palette_colour(p: [u8; 3]) -> bool {
    let [r, g, b] = p.map(i32::from);
    r > 50 && 2 * g < 3 * r / 2 + 10 && g > r / 4 && 3 * b < 2 * g && r - g > 25
}

/// Shaded from the second colour of the palette (0.30, 0.65, 0.95).
fn is_second_palette_colour(p: [u8; 3]) -> bool {
    let [r, g, b] = p.map(i32::from);
    b > 60 && b > r + 40 && g > r + 20
}

/// Grey (SOFA's default material), shaded.
fn is_grey(p: [u8; 3]) -> bool {
    let [r, g, b] = p.map(i32::from);
    !is_background(p) && r > 45 && (r - g).abs() <= 10 && (g - b).abs() <= 10
}

/// The connected groups (4-neighbours) of drawn pixels right of the panel with at least
/// `min` pixels, as (pixel count, lowest row, highest row).
fn blobs(img: &[[u8; 3]], min: usize) -> Vec<(usize, usize, usize)> {
    let mut seen = vec![false; W * H];
    let mut out = Vec::new();
    for start in 0..W * H {
        if start % W < X0 || seen[start] || is_background(img[start]) {
            continue;
        }
        seen[start] = true;
        let (mut stack, mut n, mut lo, mut hi) = (vec![start], 0, H, 0);
        while let Some(i) = stack.pop() {
            n += 1;
            lo = lo.min(i / W);
            hi = hi.max(i / W);
            let (x, y) = (i % W, i / W);
            let mut push = |j: usize| {
                if !seen[j] && !is_background(img[j]) {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if x > X0 {
                push(i - 1);
            }
            if x + 1 < W {
                push(i + 1);
            }
            if y > 0 {
                push(i - W);
            }
            if y + 1 < H {
                push(i + W);
            }
        }
        if n >= min {
            out.push((n, lo, hi));
        }
    }
    out.sort_by_key(|b| b.1);
    out
}

/// The page's recorded data, to change what it shows.
fn page_data(html: &str) -> (usize, usize, serde_json::Value) {
    let open = r#"<script id="settee-data" type="application/json">"#;
    let a = html.find(open).unwrap() + open.len();
    let b = a + html[a..].find("</script>").unwrap();
    (a, b, serde_json::from_str(&html[a..b].replace("<\\/", "</")).unwrap())
}

/// Caduceus: the page opens on the snake's visual models (SOFA's default grey), not on its
/// coarse sparse grid; the same page with the grid shown instead does show the grid's colour.
#[test]
fn caduceus_page_shows_the_snake_visual_model_not_the_grid() {
    let Some(browser) = browser_or_skip() else { return };
    let Some(examples) = settee_testkit::shared_dir("sofa-examples") else { return };
    let dir = temp_dir("caduceus");
    let page = dir.join("caduceus.html");
    let dirs = [examples.join("share"), examples.join("examples")];
    write_page(&examples.join("examples/Demos/caduceus.scn"), 10, &page, &dirs);
    let html = std::fs::read_to_string(&page).unwrap();
    let (a, b, mut data) = page_data(&html);
    let layers = data["layers"].as_array().unwrap().clone();
    let grid = layers.iter().position(|l| l["label"].as_str().unwrap().starts_with("SparseGridRamificationTopology")).unwrap();
    assert_eq!(grid, 0, "the grid is the first layer: drawn in the palette's first colour");
    assert_eq!(layers[grid]["visible"], false);
    let visual: Vec<usize> = (0..layers.len()).filter(|&i| layers[i]["category"] == "visual").collect();
    assert_eq!(visual.len(), 4, "the snake's body, cornea and eyes, and the pod");
    assert!(visual.iter().all(|&i| layers[i]["visible"] == true));

    let img = screenshot(&browser, &format!("file://{}#frame=10", page.display()), &dir.join("default.png"), &dir.join("p1"));
    let area = (W - X0) * H;
    let grey = view_area(&img).filter(|p| is_grey(*p)).count();
    let grid_colour = view_area(&img).filter(|p| is_first_palette_colour(*p)).count();
    eprintln!("default page: {grey} grey pixels, {grid_colour} in the grid's colour");
    assert!(grey > area / 50, "the visual models cover only {grey} pixels of {area}");
    assert!(grid_colour < area / 1000, "{grid_colour} pixels in the grid's colour: the grid is drawn");

    // The same recording with only the grid shown: the grid's colour appears.
    for (i, l) in data["layers"].as_array_mut().unwrap().iter_mut().enumerate() {
        l["visible"] = serde_json::Value::Bool(i == grid);
    }
    let text = data.to_string().replace("</", "<\\/");
    let grid_page = dir.join("grid.html");
    std::fs::write(&grid_page, format!("{}{}{}", &html[..a], text, &html[b..])).unwrap();
    let img = screenshot(&browser, &format!("file://{}#frame=10", grid_page.display()), &dir.join("grid.png"), &dir.join("p2"));
    let grid_colour = view_area(&img).filter(|p| is_first_palette_colour(*p)).count();
    eprintln!("grid only: {grid_colour} pixels in the grid's colour");
    assert!(grid_colour > area / 100, "the grid shown alone covers only {grid_colour} pixels");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The cut beam: at the last frame the fallen part is apart from the fixed part (two blobs, one
/// above the other, background between them; one blob at frame 0), and the page's text gives
/// the tetrahedra left at that frame.
#[test]
fn cut_beam_late_frame_shows_the_fallen_part_apart() {
    let Some(browser) = browser_or_skip() else { return };
    let dir = temp_dir("cut");
    let page = dir.join("cut.html");
    let scene = repo_file("scenes/cutting/cutting_beam.scn");
    write_page(&scene, 150, &page, &[]);
    let url = |f: usize| format!("file://{}#frame={f}", page.display());
    let first = blobs(&screenshot(&browser, &url(0), &dir.join("f0.png"), &dir.join("p0")), 200);
    let last = blobs(&screenshot(&browser, &url(150), &dir.join("f150.png"), &dir.join("p150")), 200);
    eprintln!("blobs (pixels, top row, bottom row): frame 0 {first:?}, frame 150 {last:?}");
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(last.len(), 2, "{last:?}");
    assert!(last[0].2 + 10 < last[1].1, "background rows between the parts: {last:?}");

    // The tetrahedra left after 150 steps, counted in the scene itself.
    let factory = settee::factory();
    let mut loaded = settee::load(&scene, &factory, &[]).unwrap_or_else(|f| panic!("{}", f.first_error()));
    let mut observers: Vec<Box<dyn RunObserver>> = Vec::new();
    simulate(&mut loaded.scene, 150, &mut observers).unwrap();
    let topo = loaded.scene.components.iter().find(|(_, e)| e.class.name == "TetrahedronSetTopologyContainer").map(|(c, _)| c).unwrap();
    let tets = loaded.scene.mesh_of(topo).unwrap().tetrahedra.len();
    assert!(tets < 2592);
    let dom = dump_dom(&browser, &url(150), &dir.join("d150"));
    let panel = layer_panel(&dom);
    assert!(panel.contains(&format!("of {tets} tetrahedra")), "the page at frame 150 does not say {tets} tetrahedra: {panel}");
    assert!(!panel.contains("of 2592 tetrahedra"));
    let dom = dump_dom(&browser, &url(0), &dir.join("d0"));
    assert!(layer_panel(&dom).contains("of 2592 tetrahedra"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Compliant chain: its rope is drawn (the first layer's colour), the lengths of its links
/// are not (no second layer, no points in the second colour).
#[test]
fn compliant_chain_shows_its_rope_and_no_stray_points() {
    let Some(browser) = browser_or_skip() else { return };
    let dir = temp_dir("chain");
    let page = dir.join("chain.html");
    write_page(&repo_file("scenes/compliant/chain_compliant.scn"), 50, &page, &[]);
    let url = format!("file://{}#frame=50", page.display());
    let img = screenshot(&browser, &url, &dir.join("chain.png"), &dir.join("p"));
    let rope = view_area(&img).filter(|p| is_first_palette_colour(*p)).count();
    let stray = view_area(&img).filter(|p| is_second_palette_colour(*p)).count();
    eprintln!("rope pixels {rope}, pixels in the second colour {stray}");
    assert!(rope > 100, "the rope covers only {rope} pixels");
    assert_eq!(stray, 0);
    let dom = dump_dom(&browser, &url, &dir.join("d"));
    let panel = layer_panel(&dom);
    assert!(panel.contains("EdgeSetTopologyContainer 'topology': 20 edges"), "{panel}");
    assert!(!panel.contains("lengths") && !panel.contains("points"), "the links' lengths are listed: {panel}");
    let _ = std::fs::remove_dir_all(&dir);
}
