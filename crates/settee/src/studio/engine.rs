//! The studio's engine thread: the only owner of the scene. It loads the scene (XML or Python,
//! through [`crate::load_with`]), steps it while playing, answers the server's requests
//! ([`Request`]) and publishes the latest frame when a client asked for one. The scene is never
//! shared: the async side only sees channels and the [`Shared`] counters.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};
use settee_core::data::print_value;
use settee_core::{ComponentId, Diagnostic, InitCtx, Layout, NodeId, Scene, Severity, SourcePos, StateId, VecId};
use tokio::sync::{oneshot, watch};

use crate::drawing::Drawing;
use crate::drawing::TrackSource;
use crate::plot::Points;
use crate::view::{LayerChange, Recording};

/// What the server asks the engine; every request is answered on its `reply` channel with a
/// JSON value (an error is `{"error": message}`).
pub enum Request {
    Play,
    Pause,
    /// One step (pauses first).
    Step,
    /// Reloads the scene from its file.
    Reset,
    Status,
    /// Tracks, layers and the scene tree.
    SceneInfo,
    /// The Data of a node (`n<i>`) or a component (`c<i>`) of the scene tree.
    Data(String),
    /// Writes a Data: target (`n<i>` / `c<i>`), Data name, value in the scene file's syntax.
    SetData(String, String, String),
    /// Starts dragging vertex `vertex` of track `track` towards `point` with a spring of
    /// `stiffness`.
    Attach {
        track: usize,
        vertex: usize,
        point: [f64; 3],
        stiffness: f64,
    },
    /// The mouse point moves.
    MoveMouse([f64; 3]),
    Release,
    /// The position of a vertex of a track, read from the state.
    Position {
        track: usize,
        vertex: usize,
    },
    /// Kinetic energy and solver statistics recorded so far (the last [`PLOT_SAMPLES`]).
    Plots,
    /// The contacts of the last step: points on both sides and the normal.
    Contacts,
    /// The run so far as the self-contained replay page.
    Replay,
}

pub struct Call {
    pub request: Request,
    pub reply: oneshot::Sender<Json>,
}

/// What the engine publishes to the server besides the request answers.
pub struct Shared {
    /// Set by a client ready for a frame; the engine builds one at its next chance.
    pub want_frame: AtomicBool,
    /// Frames sent and nanoseconds spent sending them (the server's side of the stream cost).
    pub frames_sent: AtomicU64,
    pub send_ns: AtomicU64,
    pub quit: AtomicBool,
}

/// One frame: the header (generation u32, reserved u32, time f64, step u64), then the f32
/// positions of every track in order, all little-endian.
pub struct Frame {
    pub seq: u64,
    /// Shared by every client's send, never copied.
    pub bytes: axum::body::Bytes,
}

pub const FRAME_HEADER: usize = 24;
/// Samples kept for the plots.
pub const PLOT_SAMPLES: usize = 2000;
/// The stiffness of SOFA's mouse spring (AttachBodyButtonSetting's default).
pub const MOUSE_STIFFNESS: f64 = 1000.0;
/// Name of the node holding the mouse point, detached from the graph as SOFA's mouse node.
const MOUSE_NODE: &str = "StudioMouse";

pub struct Outputs {
    pub frames: watch::Sender<Arc<Frame>>,
    /// The status as JSON text, refreshed a few times a second and on every change.
    pub status: watch::Sender<Arc<String>>,
}

pub struct EngineOptions {
    pub scene: PathBuf,
    pub data_dirs: Vec<PathBuf>,
    pub max_bytes: usize,
}

/// The spring of a drag: the mouse node (detached), its state and the spring force field.
struct Drag {
    node: NodeId,
    mouse: StateId,
    spring: ComponentId,
    track: usize,
    vertex: usize,
}

struct Loaded {
    scene: Scene,
    drawing: Drawing,
    /// The scene tree's nodes and components, indexed as the page names them (`n<i>`, `c<i>`).
    nodes: Vec<NodeId>,
    comps: Vec<ComponentId>,
}

struct Engine {
    opts: EngineOptions,
    loaded: Option<Loaded>,
    load_error: Option<String>,
    generation: u32,
    playing: bool,
    steps: u64,
    step_error: Option<String>,
    /// Per-step wall time, for ms/step (the last second's mean) and the replay page.
    recent_ms: Vec<(Instant, f64)>,
    total_step_s: f64,
    /// Frames built and time spent reading positions and serialising them.
    frames_built: u64,
    build_s: f64,
    /// Time spent keeping frames for the replay page.
    record_s: f64,
    /// The server's counters (frames sent, send time) when this run started.
    sent_base: (u64, u64),
    last_seq: u64,
    dirty: bool,
    /// Revision of the drawn elements and vertex counts within a generation (topological
    /// changes): sent in each frame's header, the page fetches the new elements when it grows.
    shape: u32,
    /// The visual models have not followed the last step yet (they are updated only when a
    /// frame is read, never for the simulation's sake).
    visuals_stale: bool,
    drag: Option<Drag>,
    rec: Option<Recording>,
    plots: Plots,
    shared: Arc<Shared>,
    out: Outputs,
    scratch: Vec<f32>,
}

#[derive(Default)]
struct Plots {
    /// (time, kinetic energy).
    kinetic: Points,
    /// (time, kinetic energy + gravity's potential energy).
    total: Points,
    /// Per constraint solver: label, (time, iterations), (time, residual).
    solvers: Vec<(String, Points, Points)>,
}

/// The DOF a drag attaches to: the picked vertex of a state's track, or, on a visual model's
/// track, the vertex nearest to the picked point of the state the model is mapped from (SOFA
/// picks through the bodies' models; the visual surface is what one sees and clicks).
fn picked_dof(l: &Loaded, track: usize, vertex: usize, point: [f64; 3]) -> Result<(StateId, usize), String> {
    let t = l.drawing.tracks.get(track).ok_or_else(|| format!("no track {track}"))?;
    let s = &l.scene;
    match t.source {
        TrackSource::State(state) if s.store.contains(state) => Ok((state, vertex)),
        TrackSource::State(_) => Err(format!("the state of track {track} is gone")),
        TrackSource::Visual(v) => {
            let input = s
                .components
                .iter()
                .filter_map(|(_, e)| e.role::<dyn settee_core::Mapping>())
                .find(|m| m.visual_output() == Some(v))
                .and_then(|m| m.inputs().first().copied())
                .filter(|st| s.store.contains(*st))
                .ok_or_else(|| format!("{} is not mapped from a body: nothing to drag", t.name))?;
            let st = s.store.get(input);
            let (c, sp) = (st.layout.coord_size(), st.layout.spatial_size().min(3));
            let nearest = st
                .read(VecId::POSITION)
                .chunks_exact(c)
                .map(|x| (0..sp).map(|a| (x[a] - point[a]).powi(2)).sum::<f64>())
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| i)
                .ok_or_else(|| format!("the body under {} has no points", t.name))?;
            Ok((input, nearest))
        }
    }
}

/// Keeps the items whose mark is true.
fn keep_marked<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut k = keep.iter();
    v.retain(|_| *k.next().unwrap_or(&true));
}

fn trim(v: &mut Vec<(f64, f64)>) {
    if v.len() > PLOT_SAMPLES {
        v.drain(..v.len() - PLOT_SAMPLES);
    }
}

/// Runs the engine until [`Shared::quit`] is set or the request channel closes.
pub fn run(opts: EngineOptions, calls: mpsc::Receiver<Call>, shared: Arc<Shared>, out: Outputs) {
    let mut e = Engine {
        opts,
        loaded: None,
        load_error: None,
        generation: 0,
        shape: 0,
        visuals_stale: true,
        playing: false,
        steps: 0,
        step_error: None,
        recent_ms: Vec::new(),
        total_step_s: 0.0,
        frames_built: 0,
        build_s: 0.0,
        record_s: 0.0,
        sent_base: (0, 0),
        last_seq: 0,
        dirty: true,
        drag: None,
        rec: None,
        plots: Plots::default(),
        shared,
        out,
        scratch: Vec::new(),
    };
    e.load();
    let mut last_status = Instant::now();
    loop {
        if e.shared.quit.load(Ordering::Relaxed) {
            break;
        }
        // Requests first; while paused, wait for one (briefly, to serve frame requests).
        let wait = if e.playing { Duration::ZERO } else { Duration::from_millis(15) };
        match calls.recv_timeout(wait) {
            Ok(call) => {
                let answer = e.handle(call.request);
                let _ = call.reply.send(answer);
                e.publish_status();
                while let Ok(call) = calls.try_recv() {
                    let answer = e.handle(call.request);
                    let _ = call.reply.send(answer);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if e.playing {
            e.step();
        }
        e.maybe_publish_frame();
        if last_status.elapsed() > Duration::from_millis(200) {
            e.publish_status();
            last_status = Instant::now();
        }
    }
    // The mouse spring goes with the engine; Python scenes drop their scene on this thread.
    e.release();
}

impl Engine {
    fn load(&mut self) {
        self.release();
        self.loaded = None;
        self.generation += 1;
        self.shape = 0;
        self.visuals_stale = true;
        self.steps = 0;
        self.step_error = None;
        self.recent_ms.clear();
        // The statistics are those of this run of the scene.
        self.total_step_s = 0.0;
        self.frames_built = 0;
        self.build_s = 0.0;
        self.record_s = 0.0;
        self.sent_base = (self.shared.frames_sent.load(Ordering::Relaxed), self.shared.send_ns.load(Ordering::Relaxed));
        self.plots = Plots::default();
        self.rec = None;
        self.dirty = true;
        let factory = crate::factory();
        let opts = crate::LoadOptions { data_dirs: self.opts.data_dirs.clone(), ..crate::LoadOptions::default() };
        match crate::load_with(&self.opts.scene, &factory, &opts) {
            Ok(l) => {
                self.load_error = None;
                let scene = l.scene;
                let drawing = Drawing::select(&scene);
                let nodes = scene.preorder(Scene::ROOT);
                let comps = nodes.iter().flat_map(|n| scene.node(*n).objects.clone()).collect();
                self.rec = Some(self.new_recording(&scene, &drawing));
                self.loaded = Some(Loaded { scene, drawing, nodes, comps });
                self.topology_updates();
                self.record_frame(0);
                self.record_plots();
            }
            Err(f) => {
                let mut lines: Vec<String> = f.diagnostics.iter().filter(|d| d.severity >= Severity::Warning).map(|d| d.to_string()).collect();
                lines.push(format!("error: could not load {}", self.opts.scene.display()));
                self.load_error = Some(lines.join("\n"));
                self.playing = false;
            }
        }
    }

    /// The drawing follows topological changes (cutting): changed layers are kept for the
    /// replay page from the next recorded frame on, and the page is told through the frame
    /// header's shape revision.
    fn topology_updates(&mut self) {
        let Some(l) = self.loaded.as_mut() else { return };
        let before: Vec<usize> = l.drawing.tracks.iter().map(|t| t.vertices).collect();
        let changed = l.drawing.refresh(&l.scene);
        let resized = l.drawing.tracks.iter().zip(&before).any(|(t, &n)| t.vertices != n);
        if changed.is_empty() && !resized {
            return;
        }
        self.shape += 1;
        if let Some(rec) = self.rec.as_mut() {
            rec.push_layer_changes(&l.drawing, &changed);
        }
    }

    /// Moves the visual models with their bodies before positions are read (SOFA's visual
    /// update, done only when something is drawn).
    fn fresh_visuals(&mut self) {
        if !self.visuals_stale {
            return;
        }
        let Some(l) = self.loaded.as_mut() else { return };
        self.visuals_stale = false;
        if let Err(e) = l.drawing.update_visuals(&mut l.scene) {
            self.step_error = Some(format!("visual update after step {}: {}", self.steps, e.0.message));
        }
    }

    fn new_recording(&self, scene: &Scene, drawing: &Drawing) -> Recording {
        let title = self.opts.scene.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Recording::new(&title, scene, drawing, 0, 1)
    }

    /// Keeps every `stride`-th step for the replay page; over the byte budget, every other kept
    /// frame is dropped and the stride doubles (the page stays under `max_bytes`, as `view`).
    fn record_frame(&mut self, step: u64) {
        if self.rec.as_ref().is_none_or(|rec| !step.is_multiple_of(rec.stride as u64)) {
            return;
        }
        self.fresh_visuals();
        let (Some(rec), Some(l)) = (self.rec.as_mut(), self.loaded.as_ref()) else { return };
        rec.push_frame(&l.drawing, &l.scene, step as usize);
        let per_frame: usize = rec.tracks.iter().map(|t| 3 * t.vertices * 4).sum::<usize>() * 4 / 3 + 1;
        if rec.frame_steps.len() * per_frame > self.opts.max_bytes && rec.frame_steps.len() > 2 {
            rec.stride *= 2;
            let keep: Vec<bool> = rec.frame_steps.iter().map(|s| s.is_multiple_of(rec.stride)).collect();
            // A change recorded at a dropped frame applies from the next kept one (the latest
            // change of a layer at a frame wins).
            let mut kept_before = Vec::with_capacity(keep.len() + 1);
            let mut n = 0;
            for &k in &keep {
                kept_before.push(n);
                n += usize::from(k);
            }
            kept_before.push(n);
            for c in &mut rec.layer_changes {
                c.frame = kept_before[c.frame.min(keep.len())];
            }
            let mut seen = std::collections::HashSet::new();
            let mut latest_first: Vec<LayerChange> = rec.layer_changes.drain(..).rev().filter(|c| seen.insert((c.layer, c.frame))).collect();
            latest_first.reverse();
            rec.layer_changes = latest_first;
            keep_marked(&mut rec.frame_steps, &keep);
            keep_marked(&mut rec.frame_times, &keep);
            for t in &mut rec.tracks {
                keep_marked(&mut t.frames, &keep);
            }
        }
    }

    fn record_plots(&mut self) {
        let Some(l) = self.loaded.as_mut() else { return };
        let t = l.scene.root().context.time;
        let kinetic = crate::plot::kinetic_energy(&l.scene);
        self.plots.kinetic.push((t, kinetic));
        trim(&mut self.plots.kinetic);
        self.plots.total.push((t, kinetic + crate::plot::gravity_potential_energy(&l.scene)));
        trim(&mut self.plots.total);
        let mut stats: Vec<(String, usize, f64)> =
            crate::constraint_export::step_stats(&mut l.scene).into_iter().map(|s| (s.solver, s.iterations, s.error)).collect();
        stats.extend(linear_solver_stats(&l.scene));
        for (solver, iterations, residual) in stats {
            let i = match self.plots.solvers.iter().position(|(n, _, _)| *n == solver) {
                Some(i) => i,
                None => {
                    self.plots.solvers.push((solver, Vec::new(), Vec::new()));
                    self.plots.solvers.len() - 1
                }
            };
            let p = &mut self.plots.solvers[i];
            p.1.push((t, iterations as f64));
            trim(&mut p.1);
            if residual.is_finite() {
                p.2.push((t, residual));
                trim(&mut p.2);
            }
        }
    }

    fn step(&mut self) {
        let Some(l) = self.loaded.as_mut() else {
            self.playing = false;
            return;
        };
        let dt = l.scene.root().context.dt;
        let t0 = Instant::now();
        let r = settee_core::simulation::animate(&mut l.scene, dt);
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        if let Err(e) = r {
            self.step_error = Some(format!("step {} failed: {}", self.steps + 1, e));
            self.playing = false;
            return;
        }
        self.steps += 1;
        self.visuals_stale = true;
        self.total_step_s += ms / 1e3;
        let now = Instant::now();
        self.recent_ms.push((now, ms));
        if self.recent_ms.len() > 4096 || self.recent_ms.first().is_some_and(|(t, _)| now.duration_since(*t) > Duration::from_secs(1)) {
            self.recent_ms.retain(|(t, _)| now.duration_since(*t) <= Duration::from_secs(1));
        }
        if let Some(rec) = self.rec.as_mut() {
            rec.step_ms.push(ms);
        }
        self.dirty = true;
        self.topology_updates();
        let t1 = Instant::now();
        self.record_frame(self.steps);
        self.record_plots();
        self.record_s += t1.elapsed().as_secs_f64();
    }

    /// Builds and publishes the current positions when a client is ready for a frame and they
    /// changed since the last one.
    fn maybe_publish_frame(&mut self) {
        if !self.dirty || !self.shared.want_frame.load(Ordering::Acquire) {
            return;
        }
        self.fresh_visuals();
        let Some(l) = self.loaded.as_ref() else { return };
        self.shared.want_frame.store(false, Ordering::Release);
        let t0 = Instant::now();
        let floats: usize = l.drawing.tracks.iter().map(|t| 3 * t.vertices).sum();
        let mut bytes = Vec::with_capacity(FRAME_HEADER + 4 * floats);
        bytes.extend_from_slice(&self.generation.to_le_bytes());
        bytes.extend_from_slice(&self.shape.to_le_bytes());
        bytes.extend_from_slice(&l.scene.root().context.time.to_le_bytes());
        bytes.extend_from_slice(&self.steps.to_le_bytes());
        for i in 0..l.drawing.tracks.len() {
            l.drawing.read_positions(&l.scene, i, &mut self.scratch);
            for x in &self.scratch {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        self.last_seq += 1;
        self.frames_built += 1;
        self.build_s += t0.elapsed().as_secs_f64();
        self.dirty = false;
        self.out.frames.send_replace(Arc::new(Frame { seq: self.last_seq, bytes: bytes.into() }));
    }

    fn status(&self) -> Json {
        let n = self.recent_ms.len();
        let ms_per_step = if n > 0 { self.recent_ms.iter().map(|(_, m)| m).sum::<f64>() / n as f64 } else { 0.0 };
        let steps_per_s = if n > 1 {
            let span = self.recent_ms[n - 1].0.duration_since(self.recent_ms[0].0).as_secs_f64();
            if span > 0.0 {
                (n - 1) as f64 / span
            } else {
                0.0
            }
        } else {
            0.0
        };
        let sent = self.shared.frames_sent.load(Ordering::Relaxed) - self.sent_base.0;
        let send_s = (self.shared.send_ns.load(Ordering::Relaxed) - self.sent_base.1) as f64 * 1e-9;
        let build_ms = if self.frames_built > 0 { 1e3 * self.build_s / self.frames_built as f64 } else { 0.0 };
        let send_ms = if sent > 0 { 1e3 * send_s / sent as f64 } else { 0.0 };
        let (time, dt, gravity) = match &self.loaded {
            Some(l) => {
                let c = l.scene.root().context;
                (c.time, c.dt, c.gravity)
            }
            None => (0.0, 0.0, [0.0; 3]),
        };
        let mean_ms = if self.steps > 0 { 1e3 * self.total_step_s / self.steps as f64 } else { 0.0 };
        json!({
            "type": "status",
            "scene": self.opts.scene.display().to_string(),
            "generation": self.generation,
            "playing": self.playing,
            "time": time,
            "dt": dt,
            "gravity": gravity,
            "steps": self.steps,
            "msPerStep": ms_per_step,
            "meanMsPerStep": mean_ms,
            "stepsPerSecond": steps_per_s,
            "framesBuilt": self.frames_built,
            "framesSent": sent,
            "buildMsPerFrame": build_ms,
            "sendMsPerFrame": send_ms,
            // Streaming cost over stepping: the engine's frame building and the server's sends.
            "streamCostFraction": if self.total_step_s > 0.0 { (self.build_s + send_s) / self.total_step_s } else { 0.0 },
            // Keeping frames for the replay page and samples for the plots, per step.
            "recordMsPerStep": if self.steps > 0 { 1e3 * self.record_s / self.steps as f64 } else { 0.0 },
            "dragging": self.drag.is_some(),
            "error": self.load_error.clone().or_else(|| self.step_error.clone()),
            "replayStride": self.rec.as_ref().map(|r| r.stride),
        })
    }

    fn publish_status(&self) {
        self.out.status.send_replace(Arc::new(self.status().to_string()));
    }

    fn handle(&mut self, r: Request) -> Json {
        let result: Result<Json, String> = match r {
            Request::Play => {
                self.playing = self.loaded.is_some();
                Ok(self.status())
            }
            Request::Pause => {
                self.playing = false;
                Ok(self.status())
            }
            Request::Step => {
                self.playing = false;
                self.step();
                Ok(self.status())
            }
            Request::Reset => {
                let playing = self.playing;
                self.load();
                self.playing = playing && self.loaded.is_some();
                Ok(self.status())
            }
            Request::Status => Ok(self.status()),
            Request::SceneInfo => self.scene_info(),
            Request::Data(target) => self.data_of(&target),
            Request::SetData(target, name, value) => self.set_data(&target, &name, &value),
            Request::Attach { track, vertex, point, stiffness } => self.attach(track, vertex, point, stiffness),
            Request::MoveMouse(p) => self.move_mouse(p),
            Request::Release => {
                self.release();
                Ok(json!({ "released": true }))
            }
            Request::Position { track, vertex } => self.position(track, vertex),
            Request::Plots => Ok(self.plots_json()),
            Request::Contacts => Ok(self.contacts()),
            Request::Replay => self.replay(),
        };
        result.unwrap_or_else(|e| json!({ "error": e }))
    }

    fn loaded(&self) -> Result<&Loaded, String> {
        self.loaded.as_ref().ok_or_else(|| self.load_error.clone().unwrap_or_else(|| "no scene loaded".into()))
    }

    fn scene_info(&self) -> Result<Json, String> {
        let l = self.loaded()?;
        let s = &l.scene;
        let tracks: Vec<Json> = l.drawing.tracks.iter().map(|t| json!({ "name": t.name, "vertices": t.vertices })).collect();
        // By field name: the Layer struct may gain fields (visual models' colours, …).
        let layers: Vec<Json> = l
            .drawing
            .layers
            .iter()
            .map(|ly| {
                json!({
                    "node": ly.node, "label": ly.label, "track": ly.track, "kind": ly.kind.name(), "indices": ly.indices,
                    "category": ly.category.name(), "color": ly.color, "visible": ly.visible,
                })
            })
            .collect();
        let node_index = |n: NodeId| l.nodes.iter().position(|x| *x == n);
        let tree: Vec<Json> = l
            .nodes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let node = s.node(n);
                let comps: Vec<Json> = node
                    .objects
                    .iter()
                    .filter_map(|c| l.comps.iter().position(|x| x == c).map(|k| (k, *c)))
                    .map(|(k, c)| json!({ "id": format!("c{k}"), "name": s.entry(c).name, "class": s.entry(c).class.name }))
                    .collect();
                json!({
                    "id": format!("n{i}"),
                    "name": node.name,
                    "path": s.node_path(n),
                    "parent": node.parent().and_then(node_index).map(|p| format!("n{p}")),
                    "components": comps,
                })
            })
            .collect();
        let root = s.root().context;
        Ok(json!({
            "generation": self.generation,
            "shape": self.shape,
            "title": self.opts.scene.file_name().map(|f| f.to_string_lossy().into_owned()),
            "gravity": root.gravity,
            "tracks": tracks,
            "layers": layers,
            "tree": tree,
            "hasContacts": has_pipeline(s),
        }))
    }

    fn target(&self, target: &str) -> Result<Target, String> {
        let l = self.loaded()?;
        let bad = || format!("no node or component '{target}' in the scene tree");
        let (kind, idx) = target.split_at(1.min(target.len()));
        let idx: usize = idx.parse().map_err(|_| bad())?;
        match kind {
            "n" => l.nodes.get(idx).copied().filter(|n| l.scene.contains_node(*n)).map(Target::Node).ok_or_else(bad),
            "c" => l.comps.get(idx).copied().filter(|c| l.scene.contains(*c)).map(Target::Component).ok_or_else(bad),
            _ => Err(bad()),
        }
    }

    fn data_of(&self, target: &str) -> Result<Json, String> {
        let t = self.target(target)?;
        let s = &self.loaded()?.scene;
        const LONG: usize = 400;
        let shown = |text: String| -> (String, bool) {
            if text.len() > LONG {
                let mut cut = LONG;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                (format!("{} …", &text[..cut]), true)
            } else {
                (text, false)
            }
        };
        let (title, fields): (String, Vec<Json>) = match t {
            Target::Node(n) => {
                let node = s.node(n);
                let c = node.context;
                let values = [
                    ("gravity", format!("{} {} {}", c.gravity[0], c.gravity[1], c.gravity[2])),
                    ("dt", c.dt.to_string()),
                    ("time", c.time.to_string()),
                    ("animate", (c.animate as u8).to_string()),
                    ("activated", (node.activated as u8).to_string()),
                ];
                let fields = values
                    .iter()
                    .map(|(name, v)| {
                        let decl = crate::overrides::NODE_DATA.iter().find(|d| d.name == *name);
                        json!({ "name": name, "type": decl.map(|d| d.kind.type_name()), "help": decl.map(|d| d.help), "value": v, "editable": true })
                    })
                    .collect();
                (format!("Node {}", s.node_path(n)), fields)
            }
            Target::Component(c) => {
                let e = s.entry(c);
                let fields = e
                    .data
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        let (value, cut) = shown(print_value(&s.read_data(c, i)));
                        json!({
                            "name": f.decl.name,
                            "type": f.decl.kind.type_name(),
                            "help": f.decl.help,
                            "value": value,
                            "linked": f.link_text,
                            "editable": !cut && f.link.is_none() && f.decl.name != "name",
                        })
                    })
                    .collect();
                (e.label(), fields)
            }
        };
        Ok(json!({ "target": target, "title": title, "data": fields }))
    }

    /// A Data written as the scene file would have given it: the same parsing, the same
    /// positioned message (at the node's or component's element in the scene file) when the
    /// value is refused.
    fn set_data(&mut self, target: &str, name: &str, value: &str) -> Result<Json, String> {
        let t = self.target(target)?;
        let l = self.loaded.as_mut().ok_or("no scene loaded")?;
        let s = &mut l.scene;
        let mut warnings = Vec::new();
        match t {
            Target::Node(n) => {
                if !crate::overrides::NODE_DATA.iter().any(|d| d.name == name) || name == "name" {
                    return Err(format!("node '{}' has no Data '{name}' that can be changed (`settee doc Node` lists them)", s.node(n).name));
                }
                let pos = s.node(n).pos.clone().unwrap_or_else(|| SourcePos::start_of(Arc::new(self.opts.scene.clone())));
                let before = s.messages.len();
                settee_scene::instantiate::apply_node_attribute(s, n, name, value, pos);
                let new: Vec<Diagnostic> = s.messages.drain(before..).collect();
                if let Some(e) = new.iter().find(|d| d.severity >= Severity::Error) {
                    return Err(e.to_string());
                }
                warnings.extend(new.iter().filter(|d| d.severity >= Severity::Warning).map(|d| d.to_string()));
                // Children copy the root's context (gravity, dt) at every step's end; now, so
                // that the next step already uses it.
                s.propagate_context();
            }
            Target::Component(c) => {
                let e = s.entry(c);
                let label = e.label();
                let Some(fi) = e.data.index_of(name) else {
                    return Err(format!("{label} has no Data '{name}' (`settee doc {}` lists its Data)", e.class.name));
                };
                if value.trim_start().starts_with('@') {
                    return Err("links cannot be changed while the scene runs: give a value".into());
                }
                if name == "name" {
                    return Err("renaming is not supported: paths and links would no longer match".into());
                }
                let pos = e.pos.clone().or_else(|| s.node(e.node).pos.clone());
                let kind = e.data.fields[fi].decl.kind.type_name();
                let fname = e.data.fields[fi].decl.name;
                if let Some(problem) = s.entry_mut(c).data.set_text(fi, value) {
                    let d = settee_core::factory::data_problem(false, fname, &kind, &problem).at(pos).subject(label);
                    if problem.invalid {
                        return Err(d.to_string());
                    }
                    warnings.push(d.to_string());
                }
                // Components keeping values derived from their Data update them here, as for a
                // linked Data that changed.
                if let Err(e) = s.with_taken(c, |obj, scene| obj.data_changed(&mut InitCtx { scene, id: c })) {
                    warnings.push(e.to_string());
                }
            }
        }
        self.dirty = true;
        Ok(json!({ "ok": true, "warnings": warnings }))
    }

    /// SOFA's mouse interaction (AttachBodyPerformer): a one-point state in a node detached from
    /// the graph (no solver integrates it) and a spring, in the picked state's node, between
    /// that point and the picked DOF; both added through the scene's dynamic changes.
    fn attach(&mut self, track: usize, vertex: usize, point: [f64; 3], stiffness: f64) -> Result<Json, String> {
        self.release();
        if !(stiffness.is_finite() && stiffness >= 0.0) {
            return Err(format!("the mouse spring's stiffness must be a finite non-negative number, not {stiffness}"));
        }
        let l = self.loaded.as_mut().ok_or("no scene loaded")?;
        let (state, vertex) = picked_dof(l, track, vertex, point)?;
        let s = &mut l.scene;
        let st = s.store.get(state);
        if vertex >= st.size {
            return Err(format!("vertex {vertex} is outside {} ({} points)", st.name, st.size));
        }
        let layout = st.layout;
        let template = match layout {
            Layout::Vec3 => "Vec3d",
            Layout::Rigid3 => "Rigid3d",
            other => return Err(format!("dragging a {} state is not supported (Vec3d and Rigid3d are)", other.name())),
        };
        let body_node = st.node;
        let state_path = format!("@{}/{}", s.node_path(body_node).trim_end_matches('/'), st.name);
        let position = match layout {
            Layout::Rigid3 => format!("{} {} {} 0 0 0 1", point[0], point[1], point[2]),
            _ => format!("{} {} {}", point[0], point[1], point[2]),
        };
        let node = s.add_node(Scene::ROOT, MOUSE_NODE);
        let cleanup = |s: &mut Scene, e: settee_core::SimError| -> String {
            s.remove_node(node);
            e.to_string()
        };
        let mo = match s.create_component(node, "MechanicalObject", Some(template), &[("name", "MousePosition"), ("position", &position)]) {
            Ok(c) => c,
            Err(e) => return Err(cleanup(s, e)),
        };
        if let Err(e) = settee_core::simulation::init_subtree(s, node) {
            return Err(cleanup(s, e));
        }
        let Some(mouse) = s.state_of(mo) else { return Err(cleanup(s, settee_core::SimError::new("the mouse state was not created"))) };
        let spring = format!("0 {vertex} {stiffness} 0 0");
        let mouse_path = format!("@/{MOUSE_NODE}/MousePosition");
        let ff = match s.create_component(
            body_node,
            "SpringForceField",
            Some(template),
            &[("name", "Spring-Mouse-Contact"), ("object1", &mouse_path), ("object2", &state_path), ("spring", &spring)],
        ) {
            Ok(c) => c,
            Err(e) => return Err(cleanup(s, e)),
        };
        if let Err(e) = settee_core::simulation::init_components(s, &[ff]) {
            s.remove_component(ff);
            return Err(cleanup(s, e));
        }
        // Out of the graph, as SOFA's mouse node: the spring keeps its state, no visitor sees it.
        s.remove_parent(node, Scene::ROOT);
        self.drag = Some(Drag { node, mouse, spring: ff, track, vertex });
        let name = format!("{}/{}", s.node_path(body_node).trim_end_matches('/'), s.store.get(state).name);
        Ok(json!({ "attached": true, "state": name, "vertex": vertex, "stiffness": stiffness }))
    }

    fn move_mouse(&mut self, p: [f64; 3]) -> Result<Json, String> {
        let (Some(d), Some(l)) = (self.drag.as_ref(), self.loaded.as_mut()) else { return Err("nothing is dragged".into()) };
        let st = l.scene.store.get_mut(d.mouse);
        let x = st.write(VecId::POSITION);
        x[..3].copy_from_slice(&p);
        Ok(json!({ "moved": true }))
    }

    fn release(&mut self) {
        let (Some(d), Some(l)) = (self.drag.take(), self.loaded.as_mut()) else { return };
        let s = &mut l.scene;
        s.remove_component(d.spring);
        s.remove_node(d.node);
        let _ = (d.track, d.vertex);
    }

    fn position(&self, track: usize, vertex: usize) -> Result<Json, String> {
        let l = self.loaded()?;
        let t = l.drawing.tracks.get(track).ok_or_else(|| format!("no track {track}"))?;
        let Some(state) = t.state().filter(|s| l.scene.store.contains(*s)) else {
            return Err(format!("track {track} ({}) is not a mechanical state", t.name));
        };
        let st = l.scene.store.get(state);
        if vertex >= st.size {
            return Err(format!("vertex {vertex} is outside {}", t.name));
        }
        let c = st.layout.coord_size();
        let s = st.layout.spatial_size().min(3);
        let x = &st.read(VecId::POSITION)[vertex * c..vertex * c + s];
        let mouse = self.drag.as_ref().map(|d| l.scene.store.get(d.mouse).read(VecId::POSITION)[..3].to_vec());
        Ok(json!({ "position": x, "time": l.scene.root().context.time, "steps": self.steps, "mouse": mouse }))
    }

    fn plots_json(&self) -> Json {
        json!({
            "kinetic": self.plots.kinetic,
            "total": self.plots.total,
            "solvers": self.plots.solvers.iter().map(|(n, it, r)| json!({ "solver": n, "iterations": it, "residual": r })).collect::<Vec<_>>(),
        })
    }

    fn contacts(&self) -> Json {
        let Some(l) = self.loaded.as_ref() else { return json!({ "contacts": [] }) };
        let s = &l.scene;
        let mut out: Vec<f64> = Vec::new();
        for (id, _) in s.components.iter() {
            let Some(p) = s.get::<settee_collision::components::pipeline::PipelineComponent>(id) else { continue };
            for c in p.contacts() {
                out.extend(c.point[0].iter());
                out.extend(c.point[1].iter());
                out.extend(c.normal.iter());
            }
        }
        json!({ "contacts": out })
    }

    fn replay(&self) -> Result<Json, String> {
        let rec = self.rec.as_ref().ok_or("no scene loaded")?;
        let mut rec = rec.clone();
        rec.steps = self.steps as usize;
        Ok(json!({ "html": crate::view::render_html(&rec), "frames": rec.frame_steps.len() }))
    }
}

enum Target {
    Node(NodeId),
    Component(ComponentId),
}

/// The iterative linear solvers' last solve: iterations (updates of x) and the last relative
/// residual they computed (CG: ‖r‖/‖b‖ at the start of its last iteration; PCG: rᵀz/bᵀb).
fn linear_solver_stats(s: &Scene) -> Vec<(String, usize, f64)> {
    use settee_linearsolver::{CgLinearSolver, PcgLinearSolver};
    let mut out = Vec::new();
    for (id, e) in s.components.iter() {
        if let Some(r) = s.get::<CgLinearSolver>(id).and_then(|c| c.last_report()) {
            out.push((e.label(), r.updates, r.errors.last().copied().unwrap_or(f64::NAN)));
        } else if let Some(r) = s.get::<PcgLinearSolver>(id).and_then(|c| c.last_report()) {
            out.push((e.label(), r.updates, r.errors.last().copied().unwrap_or(f64::NAN)));
        }
    }
    out
}

fn has_pipeline(s: &Scene) -> bool {
    s.components.iter().any(|(_, e)| e.class.name.ends_with("Pipeline"))
}
