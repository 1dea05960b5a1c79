//! `settee view`: simulates a scene and writes one self-contained HTML page that replays it in
//! 3D with WebGL (no network, no server).
//!
//! What is drawn is found through the scene's components, once, after init: for every node
//! with a mechanical state, the surface of its topology (the node's own, a collision model's,
//! or an ancestor's whose points are this state's): triangles, quads split in two, the
//! boundary faces of tetrahedra and hexahedra, else the edges, else the state's points (with
//! the node's `SpringForceField` springs as lines). Nodes
//! without a state draw the collision models they hold, on the state those models use.
//! Visual models (`OglModel`) carry no geometry in Settee (they take no part in the
//! simulation), so the viewer shows the mechanical and collision geometry instead.
//!
//! The [`ViewRecorder`] is a [`RunObserver`]: it records the positions of the drawn states
//! (as `f32`) at T = 0 and after every step, and the wall time of every step. When the frames
//! would make the page larger than its byte budget, it keeps every k-th step only (and the
//! last), and says so on the page and in [`Recording::decimation`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use base64::Engine;
use settee_core::role;
use settee_core::{ComponentId, MeshData, NodeId, Scene, StateId, VecId};

use crate::run::{simulate, RunObserver};

/// The page's viewer (HTML, CSS and JS); the recording is put in place of its data marker.
const VIEWER_HTML: &str = include_str!("view/viewer.html");
const DATA_MARKER: &str = "/*SETTEE_DATA*/null";
/// The WebGL renderer shared with the studio's page, inlined so the page stays self-contained.
pub const RENDERER_JS: &str = include_str!("view/renderer.js");
const RENDERER_MARKER: &str = "/*SETTEE_RENDERER*/";

/// Default byte budget of the page's frame data (base64 included): about 50 MB.
pub const DEFAULT_MAX_BYTES: usize = 50_000_000;

/// How a layer's indices are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    /// Index triples.
    Triangles,
    /// Index pairs.
    Lines,
    /// Every vertex of the track.
    Points,
}

impl LayerKind {
    fn name(self) -> &'static str {
        match self {
            LayerKind::Triangles => "triangles",
            LayerKind::Lines => "lines",
            LayerKind::Points => "points",
        }
    }
}

/// One drawable item: elements over the vertices of one track.
#[derive(Clone, Debug)]
pub struct Layer {
    /// Path of the node it belongs to (`/root/beam`).
    pub node: String,
    /// What it shows (`RegularGridTopology 'grid': 246 boundary quads`).
    pub label: String,
    /// Index into [`Recording::tracks`].
    pub track: usize,
    pub kind: LayerKind,
    /// Vertex indices into the track (empty for points).
    pub indices: Vec<u32>,
}

/// The recorded positions of one mechanical state.
#[derive(Clone, Debug)]
pub struct Track {
    /// Path of the state (`/root/beam/dofs`).
    pub name: String,
    pub state: StateId,
    /// Vertices per frame (the state's size when recording started).
    pub vertices: usize,
    /// Per recorded frame, `3 · vertices` coordinates (x, y, z; missing axes are 0; rigid
    /// frames give their origin).
    pub frames: Vec<Vec<f32>>,
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
    pub layers: Vec<Layer>,
    /// Why the run ended before `steps`, when it did.
    pub stopped: Option<String>,
}

impl Recording {
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

/// The boundary faces of a mesh's volumes, as triangles (quads of hexahedra split in two):
/// faces used by exactly one element, in element order.
pub fn boundary_triangles(mesh: &MeshData) -> (Vec<[usize; 3]>, usize) {
    // Faces of a tetrahedron (a, b, c, d) and of a hexahedron in SOFA's vertex order (bottom
    // face 0-1-2-3, top face 4-5-6-7).
    const TET: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];
    const HEX: [[usize; 4]; 6] = [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]];
    let mut faces: Vec<Vec<usize>> = Vec::new();
    for t in &mesh.tetrahedra {
        faces.extend(TET.iter().map(|f| f.iter().map(|&i| t[i]).collect()));
    }
    for h in &mesh.hexahedra {
        faces.extend(HEX.iter().map(|f| f.iter().map(|&i| h[i]).collect()));
    }
    let key = |f: &[usize]| {
        let mut k = f.to_vec();
        k.sort_unstable();
        k
    };
    let mut count: HashMap<Vec<usize>, usize> = HashMap::with_capacity(faces.len());
    for f in &faces {
        *count.entry(key(f)).or_default() += 1;
    }
    let mut tris = Vec::new();
    let mut n = 0;
    for f in faces.iter().filter(|f| count[&key(f)] == 1) {
        n += 1;
        tris.push([f[0], f[1], f[2]]);
        if f.len() == 4 {
            tris.push([f[0], f[2], f[3]]);
        }
    }
    (tris, n)
}

/// The elements of `mesh` to draw over `vertices` points, with a description; `None` when it
/// has nothing drawable. Elements with an index outside the state are left out.
fn mesh_layer(mesh: &MeshData, vertices: usize) -> Option<(LayerKind, Vec<u32>, String)> {
    let ok = |f: &[usize]| f.iter().all(|&i| i < vertices);
    let flat = |tris: &[[usize; 3]]| -> Vec<u32> { tris.iter().filter(|t| ok(&t[..])).flatten().map(|&i| i as u32).collect() };
    if !mesh.tetrahedra.is_empty() || !mesh.hexahedra.is_empty() {
        let (tris, faces) = boundary_triangles(mesh);
        let what = if mesh.hexahedra.is_empty() { "tetrahedra" } else { "hexahedra" };
        let idx = flat(&tris);
        if !idx.is_empty() {
            return Some((LayerKind::Triangles, idx, format!("{faces} boundary faces of {} {what}", mesh.tetrahedra.len() + mesh.hexahedra.len())));
        }
    }
    if !mesh.triangles.is_empty() || !mesh.quads.is_empty() {
        let mut tris = mesh.triangles.clone();
        for q in &mesh.quads {
            tris.push([q[0], q[1], q[2]]);
            tris.push([q[0], q[2], q[3]]);
        }
        let idx = flat(&tris);
        if !idx.is_empty() {
            return Some((LayerKind::Triangles, idx, format!("{} triangles, {} quads", mesh.triangles.len(), mesh.quads.len())));
        }
    }
    let idx: Vec<u32> = mesh.edges.iter().filter(|e| ok(&e[..])).flatten().map(|&i| i as u32).collect();
    (!idx.is_empty()).then(|| (LayerKind::Lines, idx, format!("{} edges", mesh.edges.len())))
}

/// Collision models of a node, with the state and topology they use.
fn collision_models(scene: &Scene, n: NodeId) -> Vec<(ComponentId, Option<StateId>, Option<ComponentId>)> {
    scene
        .node(n)
        .objects
        .iter()
        .copied()
        .filter(|&c| scene.entry(c).plays(role::COLLISION_MODEL))
        .filter_map(|c| {
            let cm = scene.role::<dyn settee_core::collision::CollisionModel>(c)?;
            Some((c, cm.state(), cm.topology()))
        })
        .collect()
}

/// What to draw: tracks (states) and their layers, in pre-order of the nodes.
pub fn select(scene: &Scene) -> (Vec<Track>, Vec<Layer>) {
    let mut tracks: Vec<Track> = Vec::new();
    let mut layers: Vec<Layer> = Vec::new();
    let mut drawn: Vec<(StateId, Option<ComponentId>)> = Vec::new();
    let track_of = |tracks: &mut Vec<Track>, s: StateId| -> usize {
        if let Some(i) = tracks.iter().position(|t| t.state == s) {
            return i;
        }
        let st = scene.store.get(s);
        let name = format!("{}/{}", scene.node_path(st.node).trim_end_matches('/'), st.name);
        tracks.push(Track { name, state: s, vertices: st.size, frames: Vec::new() });
        tracks.len() - 1
    };
    let topo_label = |c: ComponentId| scene.entry(c).label();
    for n in scene.preorder(Scene::ROOT) {
        if !scene.node(n).activated {
            continue;
        }
        let node = scene.node_path(n);
        let cms = collision_models(scene, n);
        if let Some(state) = scene.slot(n, role::MECHANICAL_STATE).and_then(|ms| scene.state_of(ms)) {
            let size = scene.store.get(state).size;
            if size == 0 {
                continue;
            }
            // The node's own topology, then its collision models', then an ancestor's whose
            // points are this state's.
            let mut candidates: Vec<ComponentId> = scene.slot(n, role::TOPOLOGY).into_iter().collect();
            candidates.extend(cms.iter().filter(|(_, s, _)| *s == Some(state)).filter_map(|(_, _, t)| *t));
            if let Some(t) = scene.context_topology(n).filter(|t| !candidates.contains(t)) {
                if scene.mesh_of(t).is_some_and(|m| m.points.len() == size) {
                    candidates.push(t);
                }
            }
            let found = candidates.iter().find_map(|&t| Some((t, mesh_layer(scene.mesh_of(t)?, size)?)));
            let track = track_of(&mut tracks, state);
            match found {
                Some((t, (kind, indices, what))) => {
                    drawn.push((state, Some(t)));
                    layers.push(Layer { node: node.clone(), label: format!("{}: {what}", topo_label(t)), track, kind, indices });
                }
                None => {
                    drawn.push((state, None));
                    // Springs inside the state (a chain, a cloth without topology) as lines.
                    let springs: Vec<u32> = scene
                        .node(n)
                        .objects
                        .iter()
                        .filter_map(|&c| Some((c, scene.get::<settee_spring::SpringForceField>(c)?)))
                        .filter(|(_, ff)| ff.state_ids() == Some((state, state)))
                        .flat_map(|(_, ff)| ff.springs().iter().filter(|s| s.m1 < size && s.m2 < size).flat_map(|s| [s.m1 as u32, s.m2 as u32]))
                        .collect();
                    if !springs.is_empty() {
                        let label = format!("SpringForceField: {} springs", springs.len() / 2);
                        layers.push(Layer { node: node.clone(), label, track, kind: LayerKind::Lines, indices: springs });
                    }
                    let label = format!("{} '{}': {size} points", scene.entry(scene.store.get(state).owner).class.name, scene.store.get(state).name);
                    layers.push(Layer { node: node.clone(), label, track, kind: LayerKind::Points, indices: Vec::new() });
                }
            }
        }
        // Collision models drawing a state of another node (no state of their own here).
        for (c, s, t) in cms {
            let (Some(s), Some(t)) = (s, t) else { continue };
            if drawn.iter().any(|d| d.0 == s && (d.1 == Some(t) || scene.store.get(s).node == n)) {
                continue;
            }
            let size = scene.store.get(s).size;
            let Some((kind, indices, what)) = scene.mesh_of(t).and_then(|m| mesh_layer(m, size)) else { continue };
            drawn.push((s, Some(t)));
            let track = track_of(&mut tracks, s);
            layers.push(Layer { node: node.clone(), label: format!("{}: {what}", scene.entry(c).label()), track, kind, indices });
        }
    }
    (tracks, layers)
}

/// Reads the positions of a track's state now, as `f32` (x, y, z per vertex).
fn snapshot(scene: &Scene, track: &Track) -> Vec<f32> {
    let st = scene.store.get(track.state);
    let x = st.read(VecId::POSITION);
    let (c, s) = (st.layout.coord_size(), st.layout.spatial_size().min(3));
    let mut out = vec![0f32; 3 * track.vertices];
    for (i, p) in x.chunks_exact(c).take(track.vertices).enumerate() {
        for a in 0..s {
            out[3 * i + a] = p[a] as f32;
        }
    }
    out
}

/// The run observer recording what the page shows; writes the page at the end.
pub struct ViewRecorder {
    rec: Recording,
    out: Option<PathBuf>,
    step_start: Option<Instant>,
}

impl ViewRecorder {
    /// Selects what to draw and records T = 0. `out`: where [`RunObserver::finish`] writes
    /// the page (`None`: nothing is written; read [`ViewRecorder::recording`]). `max_bytes`:
    /// budget of the frame data in the page.
    pub fn new(scene: &Scene, title: &str, steps: usize, out: Option<PathBuf>, max_bytes: usize) -> ViewRecorder {
        let (tracks, layers) = select(scene);
        let per_frame: usize = tracks.iter().map(|t| 3 * t.vertices * 4).sum::<usize>() * 4 / 3 + 1;
        let max_frames = (max_bytes / per_frame.max(1)).max(2);
        let stride = if steps < max_frames { 1 } else { steps.div_ceil(max_frames - 1) };
        let root = scene.root().context;
        let mut rec = Recording {
            title: title.to_string(),
            dt: root.dt,
            gravity: root.gravity,
            steps,
            stride,
            frame_steps: Vec::new(),
            frame_times: Vec::new(),
            step_ms: Vec::with_capacity(steps),
            tracks,
            layers,
            stopped: None,
        };
        record(&mut rec, scene, 0);
        ViewRecorder { rec, out, step_start: None }
    }

    pub fn recording(&self) -> &Recording {
        &self.rec
    }

    pub fn into_recording(self) -> Recording {
        self.rec
    }
}

fn record(rec: &mut Recording, scene: &Scene, step: usize) {
    for i in 0..rec.tracks.len() {
        let f = snapshot(scene, &rec.tracks[i]);
        rec.tracks[i].frames.push(f);
    }
    rec.frame_steps.push(step);
    rec.frame_times.push(scene.root().context.time);
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
            record(&mut self.rec, scene, done);
        }
        Ok(())
    }

    fn stopped_early(&mut self, scene: &mut Scene, done: usize) -> Result<(), String> {
        // The last frame is where the run stopped, even between two decimated frames.
        if self.rec.frame_steps.last() != Some(&done) {
            record(&mut self.rec, scene, done);
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
            json!({ "name": t.name, "vertices": t.vertices, "positions": b64(&all, f32::to_le_bytes) })
        })
        .collect();
    let layers: Vec<_> = rec
        .layers
        .iter()
        .map(|l| json!({ "node": l.node, "label": l.label, "track": l.track, "kind": l.kind.name(), "indices": b64(&l.indices, u32::to_le_bytes) }))
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
    VIEWER_HTML.replacen(RENDERER_MARKER, RENDERER_JS, 1).replacen(DATA_MARKER, &text, 1).replacen("<title>Settee</title>", &format!("<title>{title} — Settee</title>"), 1)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_faces_drop_shared_faces() {
        // Two tetrahedra sharing face (1, 2, 3): 8 faces, 6 on the boundary.
        let mesh = MeshData { tetrahedra: vec![[0, 1, 2, 3], [4, 1, 2, 3]], ..Default::default() };
        let (tris, n) = boundary_triangles(&mesh);
        assert_eq!(n, 6);
        assert_eq!(tris.len(), 6);
        assert!(tris.iter().all(|t| t.contains(&0) || t.contains(&4)), "{tris:?}");
        // Two hexahedra side by side along x (a 3 × 2 × 2 grid) share one quad: 10 of their 12
        // faces are on the boundary, 20 triangles.
        let hex = |o: usize| [o, o + 1, o + 4, o + 3, o + 6, o + 7, o + 10, o + 9];
        let mesh = MeshData { hexahedra: vec![hex(0), hex(1)], ..Default::default() };
        let (tris, n) = boundary_triangles(&mesh);
        assert_eq!((n, tris.len()), (10, 20));
    }

    #[test]
    fn elements_outside_the_state_are_left_out() {
        let mesh = MeshData { triangles: vec![[0, 1, 2], [1, 2, 9]], quads: vec![[0, 1, 3, 2]], ..Default::default() };
        let (kind, idx, what) = mesh_layer(&mesh, 4).unwrap();
        assert_eq!(kind, LayerKind::Triangles);
        assert_eq!(idx, [0, 1, 2, 0, 1, 3, 0, 3, 2]);
        assert_eq!(what, "2 triangles, 1 quads");
        let edges = MeshData { edges: vec![[0, 1], [1, 5]], ..Default::default() };
        assert_eq!(mesh_layer(&edges, 2).map(|l| (l.0, l.1)), Some((LayerKind::Lines, vec![0, 1])));
        assert!(mesh_layer(&MeshData::default(), 4).is_none());
    }
}
