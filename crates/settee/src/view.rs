//! `settee view`: simulates a scene and writes one self-contained HTML page that replays it in
//! 3D with WebGL (no network, no server).
//!
//! What is drawn is chosen by [`crate::drawing`] (shared with the studio).
//!
//! The [`ViewRecorder`] is a [`RunObserver`]: it records the positions of the drawn states
//! (as `f32`) at T = 0 and after every step, and the wall time of every step. When the frames
//! would make the page larger than its byte budget, it keeps every k-th step only (and the
//! last), and says so on the page and in [`Recording::decimation`].

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use base64::Engine;
use settee_core::Scene;

use crate::drawing::Drawing;
pub use crate::drawing::{boundary_triangles, Category, Layer, LayerKind, TrackSource};

use crate::run::{simulate, RunObserver};

/// The page's viewer (HTML, CSS and JS); the recording is put in place of its data marker.
const VIEWER_HTML: &str = include_str!("view/viewer.html");
const DATA_MARKER: &str = "/*SETTEE_DATA*/null";
/// The WebGL renderer shared with the studio's page, inlined so the page stays self-contained.
pub const RENDERER_JS: &str = include_str!("view/renderer.js");
const RENDERER_MARKER: &str = "/*SETTEE_RENDERER*/";

/// Default byte budget of the page's frame data (base64 included): about 50 MB.
pub const DEFAULT_MAX_BYTES: usize = 50_000_000;

/// The recorded positions of one mechanical state or visual model.
#[derive(Clone, Debug)]
pub struct Track {
    /// Path of the state or visual model (`/root/beam/dofs`).
    pub name: String,
    pub source: TrackSource,
    /// Vertices when recording started.
    pub vertices: usize,
    /// Per recorded frame, 3 coordinates per vertex of that frame (x, y, z; missing axes are
    /// 0; rigid frames give their origin): a state cut by topological changes has fewer
    /// vertices in later frames.
    pub frames: Vec<Vec<f32>>,
}

/// New elements of a layer from a recorded frame on (topological changes).
#[derive(Clone, Debug)]
pub struct LayerChange {
    pub layer: usize,
    /// The first recorded frame they apply to.
    pub frame: usize,
    pub indices: Vec<u32>,
    /// The layer's label with the counts from that frame on.
    pub label: String,
}

/// Everything the page shows.
#[derive(Clone, Debug)]
pub struct Recording {
    pub title: String,
    pub dt: f64,
    pub gravity: [f64; 3],
    /// Number of steps asked for.
    pub steps: usize,
    /// Steps between two recorded frames (1 unless decimated).
    pub stride: usize,
    /// Per recorded frame: the step count at which it was taken (0 = initial state) and the
    /// simulated time.
    pub frame_steps: Vec<usize>,
    pub frame_times: Vec<f64>,
    /// Wall-clock milliseconds of every step run.
    pub step_ms: Vec<f64>,
    pub tracks: Vec<Track>,
    /// The layers as of the first frame.
    pub layers: Vec<Layer>,
    /// Their changes, in frame order.
    pub layer_changes: Vec<LayerChange>,
    /// Why the run ended before `steps`, when it did.
    pub stopped: Option<String>,
}

impl Recording {
    /// An empty recording of `drawing`'s tracks and layers, for `steps` steps keeping every
    /// `stride`-th.
    pub fn new(title: &str, scene: &Scene, drawing: &Drawing, steps: usize, stride: usize) -> Recording {
        let root = scene.root().context;
        Recording {
            title: title.to_string(),
            dt: root.dt,
            gravity: root.gravity,
            steps,
            stride,
            frame_steps: Vec::new(),
            frame_times: Vec::new(),
            step_ms: Vec::with_capacity(steps),
            tracks: drawing
                .tracks
                .iter()
                .map(|t| Track { name: t.name.clone(), source: t.source, vertices: t.vertices, frames: Vec::new() })
                .collect(),
            layers: drawing.layers.clone(),
            layer_changes: Vec::new(),
            stopped: None,
        }
    }

    /// Keeps the new elements of the layers `changed` (indices into `drawing.layers`, as
    /// [`Drawing::refresh`] returns them) from the next recorded frame on.
    pub fn push_layer_changes(&mut self, drawing: &Drawing, changed: &[usize]) {
        let frame = self.frame_steps.len();
        for &layer in changed {
            let l = &drawing.layers[layer];
            self.layer_changes.retain(|c| !(c.layer == layer && c.frame == frame));
            self.layer_changes.push(LayerChange { layer, frame, indices: l.indices.clone(), label: l.label.clone() });
        }
    }

    /// Appends a frame taken at `step`: every track's positions now, and the time.
    pub fn push_frame(&mut self, drawing: &Drawing, scene: &Scene, step: usize) {
        for (i, t) in self.tracks.iter_mut().enumerate() {
            let mut f = Vec::new();
            drawing.read_positions(scene, i, &mut f);
            t.frames.push(f);
        }
        self.frame_steps.push(step);
        self.frame_times.push(scene.root().context.time);
    }

    /// A sentence saying that frames were dropped, when they were.
    pub fn decimation(&self) -> Option<String> {
        (self.stride > 1).then(|| {
            format!(
                "frames decimated: every {}th step kept ({} of {} frames) so that the page stays under about {} MB",
                self.stride,
                self.frame_steps.len(),
                self.steps + 1,
                DEFAULT_MAX_BYTES / 1_000_000
            )
        })
    }
}

/// The page written by default for a scene: `<scene file stem>.html` in the current directory.
pub fn default_output(scene: &Path) -> PathBuf {
    let stem = scene.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "scene".into());
    PathBuf::from(format!("{stem}.html"))
}

/// The run observer recording what the page shows; writes the page at the end.
pub struct ViewRecorder {
    rec: Recording,
    drawing: Drawing,
    out: Option<PathBuf>,
    step_start: Option<Instant>,
}

impl ViewRecorder {
    /// Selects what to draw and records T = 0. `out`: where [`RunObserver::finish`] writes
    /// the page (`None`: nothing is written; read [`ViewRecorder::recording`]). `max_bytes`:
    /// budget of the frame data in the page.
    pub fn new(scene: &Scene, title: &str, steps: usize, out: Option<PathBuf>, max_bytes: usize) -> ViewRecorder {
        let mut drawing = Drawing::select(scene);
        let per_frame: usize = drawing.tracks.iter().map(|t| 3 * t.vertices * 4).sum::<usize>() * 4 / 3 + 1;
        let max_frames = (max_bytes / per_frame.max(1)).max(2);
        let stride = if steps < max_frames { 1 } else { steps.div_ceil(max_frames - 1) };
        let mut rec = Recording::new(title, scene, &drawing, steps, stride);
        record(&mut rec, &mut drawing, scene, 0);
        ViewRecorder { rec, out, step_start: None, drawing }
    }

    pub fn recording(&self) -> &Recording {
        &self.rec
    }

    pub fn into_recording(self) -> Recording {
        self.rec
    }
}

/// Records a frame: the layers whose elements changed since the last frame, then every track's
/// positions.
fn record(rec: &mut Recording, drawing: &mut Drawing, scene: &Scene, step: usize) {
    if !rec.frame_steps.is_empty() {
        let changed = drawing.refresh(scene);
        rec.push_layer_changes(drawing, &changed);
    }
    rec.push_frame(drawing, scene, step);
}

impl RunObserver for ViewRecorder {
    fn before_step(&mut self, _scene: &mut Scene, _k: usize) -> Result<(), String> {
        self.step_start = Some(Instant::now());
        Ok(())
    }

    fn after_step(&mut self, scene: &mut Scene, k: usize, _t_start: f64) -> Result<(), String> {
        if let Some(t0) = self.step_start.take() {
            self.rec.step_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        let done = k + 1;
        if done.is_multiple_of(self.rec.stride) || done == self.rec.steps {
            self.drawing.update_visuals(scene).map_err(|e| format!("visual update after step {done}: {}", e.0.message))?;
            record(&mut self.rec, &mut self.drawing, scene, done);
        }
        Ok(())
    }

    fn stopped_early(&mut self, scene: &mut Scene, done: usize) -> Result<(), String> {
        // The last frame is where the run stopped, even between two decimated frames.
        if self.rec.frame_steps.last() != Some(&done) {
            self.drawing.update_visuals(scene).map_err(|e| format!("visual update after step {done}: {}", e.0.message))?;
            record(&mut self.rec, &mut self.drawing, scene, done);
        }
        self.rec.stopped = Some(format!("the run was interrupted after step {done} of {}", self.rec.steps));
        Ok(())
    }

    fn finish(&mut self, _scene: &mut Scene) -> Result<Vec<PathBuf>, String> {
        let Some(out) = &self.out else { return Ok(Vec::new()) };
        std::fs::write(out, render_html(&self.rec)).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        Ok(vec![out.clone()])
    }
}

/// A recorder shared with its caller, which reads it after a failed run.
impl RunObserver for Rc<RefCell<ViewRecorder>> {
    fn before_step(&mut self, scene: &mut Scene, k: usize) -> Result<(), String> {
        self.borrow_mut().before_step(scene, k)
    }
    fn after_step(&mut self, scene: &mut Scene, k: usize, t_start: f64) -> Result<(), String> {
        self.borrow_mut().after_step(scene, k, t_start)
    }
    fn stopped_early(&mut self, scene: &mut Scene, done: usize) -> Result<(), String> {
        self.borrow_mut().stopped_early(scene, done)
    }
    fn finish(&mut self, scene: &mut Scene) -> Result<Vec<PathBuf>, String> {
        self.borrow_mut().finish(scene)
    }
}

fn b64<T: Copy>(v: &[T], to_le: impl Fn(T) -> [u8; 4]) -> String {
    let mut bytes = Vec::with_capacity(4 * v.len());
    for &x in v {
        bytes.extend_from_slice(&to_le(x));
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The page: the viewer with the recording as JSON (positions and indices as base64 of
/// little-endian `Float32Array` / `Uint32Array`).
pub fn render_html(rec: &Recording) -> String {
    use serde_json::json;
    let tracks: Vec<_> = rec
        .tracks
        .iter()
        .map(|t| {
            let all: Vec<f32> = t.frames.iter().flatten().copied().collect();
            let counts: Vec<usize> = t.frames.iter().map(|f| f.len() / 3).collect();
            json!({ "name": t.name, "vertices": t.vertices, "counts": counts, "positions": b64(&all, f32::to_le_bytes) })
        })
        .collect();
    let layers: Vec<_> = rec
        .layers
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let changes: Vec<_> = rec
                .layer_changes
                .iter()
                .filter(|c| c.layer == i)
                .map(|c| json!({ "frame": c.frame, "label": c.label, "indices": b64(&c.indices, u32::to_le_bytes) }))
                .collect();
            json!({
                "node": l.node, "label": l.label, "track": l.track, "kind": l.kind.name(), "category": l.category.name(),
                "color": l.color, "visible": l.visible, "indices": b64(&l.indices, u32::to_le_bytes), "changes": changes,
            })
        })
        .collect();
    let data = json!({
        "title": rec.title,
        "dt": rec.dt,
        "gravity": rec.gravity,
        "steps": rec.steps,
        "stride": rec.stride,
        "decimation": rec.decimation(),
        "stopped": rec.stopped,
        "frameSteps": rec.frame_steps,
        "frameTimes": rec.frame_times,
        "stepMs": rec.step_ms,
        "tracks": tracks,
        "layers": layers,
    });
    // `</` cannot appear inside a <script> element.
    let text = data.to_string().replace("</", "<\\/");
    let title = rec.title.replace('&', "&amp;").replace('<', "&lt;");
    VIEWER_HTML.replacen(RENDERER_MARKER, RENDERER_JS, 1).replacen(DATA_MARKER, &text, 1).replacen(
        "<title>Settee</title>",
        &format!("<title>{title} — Settee</title>"),
        1,
    )
}

/// What `settee view` did.
pub struct ViewOutcome {
    pub written: PathBuf,
    pub frames: usize,
    pub layers: usize,
    pub elapsed: std::time::Duration,
    pub decimation: Option<String>,
}

/// `settee view`: loads `scene_path`, runs `steps` steps with a [`ViewRecorder`] (and the
/// progress bar on a terminal) and writes the page to `out` (default [`default_output`]).
/// Errors are the messages to print.
pub fn view(scene_path: &Path, steps: usize, out: Option<PathBuf>, data_dirs: &[PathBuf]) -> Result<ViewOutcome, Vec<String>> {
    let factory = crate::factory();
    let mut loaded = crate::load(scene_path, &factory, data_dirs).map_err(|f| {
        let mut m: Vec<String> = f.diagnostics.iter().filter(|d| d.severity >= settee_core::Severity::Warning).map(|d| d.to_string()).collect();
        m.push(format!("error: could not load {}", scene_path.display()));
        m
    })?;
    for m in loaded.scene.messages.iter().filter(|m| m.severity >= settee_core::Severity::Warning) {
        eprintln!("{m}");
    }
    let out = out.unwrap_or_else(|| default_output(scene_path));
    let title = scene_path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let scene = &mut loaded.scene;
    let recorder = ViewRecorder::new(scene, &title, steps, Some(out.clone()), DEFAULT_MAX_BYTES);
    if recorder.recording().layers.is_empty() {
        return Err(vec![format!("error: {}: nothing to draw (no mechanical state with positions)", scene_path.display())]);
    }
    let (frames, layers, decimation) = {
        let r = recorder.recording();
        (steps / r.stride + 1 + usize::from(!steps.is_multiple_of(r.stride)), r.layers.len(), r.decimation())
    };
    let recorder = Rc::new(RefCell::new(recorder));
    let mut observers: Vec<Box<dyn RunObserver>> = vec![Box::new(recorder.clone())];
    if let Some(bar) = crate::run::ProgressBar::on_terminal(steps) {
        observers.push(Box::new(bar));
    }
    if let Some(lines) = crate::run::ProgressLines::when_logged(steps) {
        observers.push(Box::new(lines));
    }
    match simulate(scene, steps, &mut observers) {
        Ok(summary) => Ok(ViewOutcome { written: out, frames, layers, elapsed: summary.elapsed, decimation }),
        Err(e @ crate::run::RunError::Interrupted { .. }) => {
            drop(observers); // ends the progress line
            let rec = recorder.borrow();
            Err(vec![
                format!("note: wrote {} with the {} frames recorded before the interruption", out.display(), rec.rec.frame_steps.len()),
                e.to_string(),
            ])
        }
        Err(e) => {
            drop(observers); // ends the progress line
                             // The frames up to the failure are what one wants to look at (a blow-up, …).
            let mut rec = recorder.borrow_mut();
            let done = rec.rec.step_ms.len();
            rec.rec.stopped = Some(format!(
                "the run stopped after step {done}: {}",
                e.to_string().lines().next().unwrap_or_default().trim_start_matches("error: ")
            ));
            let mut messages = vec![e.to_string()];
            match std::fs::write(&out, render_html(&rec.rec)) {
                Ok(()) => {
                    messages.push(format!("note: wrote {} with the {} frames recorded before the failure", out.display(), rec.rec.frame_steps.len()))
                }
                Err(w) => messages.push(format!("error: cannot write {}: {w}", out.display())),
            }
            Err(messages)
        }
    }
}
