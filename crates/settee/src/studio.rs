//! `settee studio SCENE`: a local web application that runs a scene live. An HTTP server on
//! 127.0.0.1 (axum on tokio) serves the page (embedded in the binary with the shared WebGL
//! renderer), a small JSON API and a WebSocket carrying frames (binary, f32 positions per track)
//! and status (JSON text). The scene lives on one engine thread ([`engine`]) that owns it; the
//! server talks to it through channels.
//!
//! Frames follow the page: a client asks for one (`next`) when it has drawn the previous one,
//! and gets the latest positions; frames the page had no time for are never built or queued.

pub mod engine;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::Instant;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::{oneshot, watch};

use engine::{Call, EngineOptions, Frame, Outputs, Request, Shared};

/// The studio's page; the renderer is served beside it (`/renderer.js`).
const PAGE_HTML: &str = include_str!("studio/studio.html");

/// How `settee studio` starts.
pub struct StudioOptions {
    pub scene: PathBuf,
    pub data_dirs: Vec<PathBuf>,
    /// 0: a free port.
    pub port: u16,
    /// Open the page in a browser (`$BROWSER`, else `xdg-open`).
    pub open: bool,
}

#[derive(Clone)]
struct App {
    calls: mpsc::Sender<Call>,
    shared: Arc<Shared>,
    frames: watch::Receiver<Arc<Frame>>,
    status: watch::Receiver<Arc<String>>,
}

impl App {
    async fn ask(&self, request: Request) -> Value {
        let (tx, rx) = oneshot::channel();
        if self.calls.send(Call { request, reply: tx }).is_err() {
            return json!({ "error": "the engine has stopped" });
        }
        rx.await.unwrap_or_else(|_| json!({ "error": "the engine has stopped" }))
    }
}

/// Runs the studio until Ctrl-C (or SIGTERM). Errors are messages to print.
pub fn studio(opts: StudioOptions) -> Result<(), String> {
    if !opts.scene.is_file() {
        return Err(format!("error: {}: no such scene file", opts.scene.display()));
    }
    let (call_tx, call_rx) = mpsc::channel::<Call>();
    let shared =
        Arc::new(Shared { want_frame: Default::default(), frames_sent: Default::default(), send_ns: Default::default(), quit: Default::default() });
    let (frame_tx, frame_rx) = watch::channel(Arc::new(Frame { seq: 0, bytes: Default::default() }));
    let (status_tx, status_rx) = watch::channel(Arc::new(String::from("{}")));
    let engine_opts = EngineOptions { scene: opts.scene.clone(), data_dirs: opts.data_dirs.clone(), max_bytes: crate::view::DEFAULT_MAX_BYTES };
    let engine_shared = shared.clone();
    // The engine thread owns the scene (loaded there: a scene need not be Send).
    let engine = std::thread::Builder::new()
        .name("settee-engine".into())
        .spawn(move || engine::run(engine_opts, call_rx, engine_shared, Outputs { frames: frame_tx, status: status_tx }))
        .map_err(|e| format!("error: cannot start the engine thread: {e}"))?;
    let app = App { calls: call_tx, shared: shared.clone(), frames: frame_rx, status: status_rx };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("error: cannot start the server: {e}"))?;
    let served = rt.block_on(serve(app, opts.port, opts.open));
    shared.quit.store(true, Ordering::Relaxed);
    let _ = engine.join();
    served
}

async fn serve(app: App, port: u16, open: bool) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .map_err(|e| format!("error: cannot listen on 127.0.0.1:{port}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let url = format!("http://{addr}/");
    println!("settee studio: {url}  (Ctrl-C to stop)");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    if open {
        open_browser(&url);
    }
    let router = Router::new()
        .route("/", get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE_HTML) }))
        .route("/renderer.js", get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], crate::view::RENDERER_JS) }))
        .route("/ws", get(ws_handler))
        .route("/api/status", get(api_status))
        .route("/api/scene", get(api_scene))
        .route("/api/control", post(api_control))
        .route("/api/data", get(api_data).post(api_set_data))
        .route("/api/mouse", post(api_mouse))
        .route("/api/position", get(api_position))
        .route("/api/plots", get(api_plots))
        .route("/api/contacts", get(api_contacts))
        .route("/api/replay", get(api_replay))
        .with_state(app);
    axum::serve(listener, router).with_graceful_shutdown(shutdown_signal()).await.map_err(|e| format!("error: the server stopped: {e}"))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    eprintln!("settee studio: stopping");
}

/// `$BROWSER` (as Python's webbrowser reads it), else `xdg-open`; failures are only reported.
fn open_browser(url: &str) {
    let cmd = std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty()).unwrap_or_else(|| "xdg-open".into());
    let spawned = std::process::Command::new(&cmd)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        eprintln!("note: could not open a browser with '{cmd}' ({e}); open {url} yourself");
    }
}

fn reply(v: Value) -> Response {
    let code =
        if v.get("error").is_some_and(|e| !e.is_null()) && v.get("type").is_none() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    (code, Json(v)).into_response()
}

async fn api_status(State(app): State<App>) -> Response {
    reply(app.ask(Request::Status).await)
}

async fn api_scene(State(app): State<App>) -> Response {
    reply(app.ask(Request::SceneInfo).await)
}

#[derive(Deserialize)]
struct Control {
    action: String,
}

async fn api_control(State(app): State<App>, Json(c): Json<Control>) -> Response {
    let request = match c.action.as_str() {
        "play" => Request::Play,
        "pause" => Request::Pause,
        "step" => Request::Step,
        "reset" => Request::Reset,
        other => return reply(json!({ "error": format!("unknown action '{other}' (play, pause, step, reset)") })),
    };
    reply(app.ask(request).await)
}

#[derive(Deserialize)]
struct DataQuery {
    target: String,
}

async fn api_data(State(app): State<App>, Query(q): Query<DataQuery>) -> Response {
    reply(app.ask(Request::Data(q.target)).await)
}

#[derive(Deserialize)]
struct SetData {
    target: String,
    data: String,
    value: String,
}

async fn api_set_data(State(app): State<App>, Json(s): Json<SetData>) -> Response {
    reply(app.ask(Request::SetData(s.target, s.data, s.value)).await)
}

#[derive(Deserialize)]
struct Mouse {
    op: String,
    track: Option<usize>,
    vertex: Option<usize>,
    point: Option<[f64; 3]>,
    stiffness: Option<f64>,
}

async fn api_mouse(State(app): State<App>, Json(m): Json<Mouse>) -> Response {
    let request = match (m.op.as_str(), m.track, m.vertex, m.point) {
        ("attach", Some(track), Some(vertex), Some(point)) => {
            Request::Attach { track, vertex, point, stiffness: m.stiffness.unwrap_or(engine::MOUSE_STIFFNESS) }
        }
        ("move", _, _, Some(p)) => Request::MoveMouse(p),
        ("release", ..) => Request::Release,
        _ => return reply(json!({ "error": "mouse: give op attach (track, vertex, point[, stiffness]), move (point) or release" })),
    };
    reply(app.ask(request).await)
}

#[derive(Deserialize)]
struct PositionQuery {
    track: usize,
    vertex: usize,
}

async fn api_position(State(app): State<App>, Query(q): Query<PositionQuery>) -> Response {
    reply(app.ask(Request::Position { track: q.track, vertex: q.vertex }).await)
}

async fn api_plots(State(app): State<App>) -> Response {
    reply(app.ask(Request::Plots).await)
}

async fn api_contacts(State(app): State<App>) -> Response {
    reply(app.ask(Request::Contacts).await)
}

/// The replay page, as a download named after the scene.
async fn api_replay(State(app): State<App>) -> Response {
    let v = app.ask(Request::Replay).await;
    let Some(html) = v.get("html").and_then(|h| h.as_str()) else { return reply(v) };
    let status = app.ask(Request::Status).await;
    let stem = status
        .get("scene")
        .and_then(|s| s.as_str())
        .and_then(|s| std::path::Path::new(s).file_stem().map(|f| f.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "scene".into());
    let disposition = format!("attachment; filename=\"{}.html\"", stem.replace(['"', '\\'], "_"));
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()), (header::CONTENT_DISPOSITION, disposition)], html.to_string()).into_response()
}

async fn ws_handler(State(app): State<App>, ws: WebSocketUpgrade) -> Response {
    ws.on_upgrade(move |socket| client(app, socket))
}

/// One page: status messages as they change; a frame each time the page asks (`next`), the
/// latest one, built by the engine on demand.
async fn client(app: App, mut socket: WebSocket) {
    let mut frames = app.frames.clone();
    let mut status = app.status.clone();
    let mut last_sent = 0u64;
    let mut wants = false;
    frames.mark_changed();
    status.mark_changed();
    loop {
        tokio::select! {
            msg = socket.recv() => match msg {
                Some(Ok(Message::Text(t))) => {
                    if t.as_str().trim() == "next" {
                        wants = true;
                        app.shared.want_frame.store(true, Ordering::Release);
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
            changed = frames.changed(), if wants => {
                if changed.is_err() {
                    break;
                }
                let f = frames.borrow_and_update().clone();
                if f.seq == last_sent || f.bytes.is_empty() {
                    app.shared.want_frame.store(true, Ordering::Release);
                    continue;
                }
                let t0 = Instant::now();
                if socket.send(Message::Binary(f.bytes.clone())).await.is_err() {
                    break;
                }
                app.shared.send_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                app.shared.frames_sent.fetch_add(1, Ordering::Relaxed);
                last_sent = f.seq;
                wants = false;
            },
            changed = status.changed() => {
                if changed.is_err() {
                    break;
                }
                let s = status.borrow_and_update().clone();
                if socket.send(Message::Text(s.as_str().into())).await.is_err() {
                    break;
                }
            }
        }
    }
}
