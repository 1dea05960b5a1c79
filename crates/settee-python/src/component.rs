//! Components written in Python: `Sofa.Core.Controller` (spec `python.md` §5.1).
//!
//! A Python controller is a component like any other: a [`PythonController`] in the scene's
//! arena, whose hooks call the Python instance's methods. While a hook calls Python it lends
//! the scene it was handed ([`crate::cell::lend`]), so the handler can read and write the
//! scene's Data.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use settee_core::diag::{Diagnostic, Severity};
use settee_core::simulation::EventListener;
use settee_core::{component, Component, ComponentId, Declared, InitCtx, NodeId, Scene, SimResult};

use crate::cell::{lend, with_scene, SceneCell};
use crate::object::PyObj;

/// Data a Python component keeps before it is added to a node.
pub const PENDING_DATA: &[&str] = &["name", "listening", "printLog", "tags"];

/// A controller written in Python: its handlers (`onAnimateBeginEvent`, …) are called at the
/// events of the step, its `init` at the scene's initialisation.
#[component(data = {}, roles = [EventListener])]
#[derive(Default)]
pub struct PythonController {
    instance: Option<Py<PyAny>>,
    /// The handler of each event sent so far (`None`: the instance has none), valid while
    /// [`HANDLERS_VERSION`] is `handlers_version`: a failed attribute lookup raises and
    /// catches a Python exception, too slow to repeat at every event.
    handlers: Vec<(&'static str, Option<Py<PyAny>>)>,
    handlers_version: u64,
}

/// Bumped when a script assigns an `on…` attribute of a component: cached handlers are looked
/// up again (a script may swap a controller's handler between steps).
static HANDLERS_VERSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl PythonController {
    /// Calls `method` of the instance when its class defines it (beyond the base classes).
    fn call_defined(&self, scene: &mut Scene, me: ComponentId, method: &str) -> SimResult {
        call_defined(self.instance.as_ref(), scene, me, method);
        Ok(())
    }

    /// Sends an event: `on<Event>` if the instance has it, else `onEvent`, with the event as a
    /// dict. Exceptions are reported and the simulation goes on, as SOFA does.
    fn send(&mut self, scene: &mut Scene, me: ComponentId, event: &'static str, extra: &[(&str, f64)]) {
        let Some(instance) = &self.instance else { return };
        if !scene.entry(me).data.get(settee_core::factory::BaseData::LISTENING) {
            return;
        }
        let version = HANDLERS_VERSION.load(std::sync::atomic::Ordering::Relaxed);
        if version != self.handlers_version {
            self.handlers.clear();
            self.handlers_version = version;
        }
        Python::attach(|py| {
            let handler = match self.handlers.iter().find(|(e, _)| *e == event) {
                Some((_, h)) => h.as_ref().map(|h| h.bind(py).clone()),
                None => {
                    let h = event_handler(instance.bind(py), event);
                    self.handlers.push((event, h.as_ref().map(|h| h.clone().unbind())));
                    h
                }
            };
            let Some(handler) = handler else { return };
            let dict = event_dict(py, event);
            for (k, v) in extra {
                let _ = dict.set_item(*k, *v);
            }
            if let Err(e) = lend(scene, || handler.call1((dict,))) {
                report_exception(py, scene, me, &format!("on{event}"), e);
            }
        });
    }
}

/// Calls `method` of a Python component's instance when its class defines it (the base
/// classes' own methods do nothing: they are not called), with the scene lent. An exception
/// is reported as the component's error, and the simulation goes on.
pub fn call_defined(instance: Option<&Py<PyAny>>, scene: &mut Scene, me: ComponentId, method: &str) {
    let Some(instance) = instance else { return };
    Python::attach(|py| {
        let obj = instance.bind(py);
        let Ok(f) = obj.getattr(method) else { return };
        // A method of the base classes (written in Rust) has no `__func__`.
        if f.getattr("__func__").is_err() {
            return;
        }
        if let Err(e) = lend(scene, || f.call0()) {
            report_exception(py, scene, me, method, e);
        }
    });
}

/// The handler of `event` (`on<Event>`), else `onEvent`: the first of them that is callable (a
/// class attribute holding a string does not count).
fn event_handler<'py>(obj: &Bound<'py, PyAny>, event: &str) -> Option<Bound<'py, PyAny>> {
    obj.getattr(format!("on{event}").as_str()).ok().filter(|h| h.is_callable()).or_else(|| obj.getattr("onEvent").ok().filter(|h| h.is_callable()))
}

/// The dict every handler receives: `type` and `isHandled`, then the event's own keys.
fn event_dict<'py>(py: Python<'py>, event: &str) -> Bound<'py, PyDict> {
    let dict = PyDict::new(py);
    let _ = dict.set_item("type", event);
    let _ = dict.set_item("isHandled", false);
    dict
}

/// The Python instance behind component `id`, when it is a Python component that listens.
pub fn listening_instance(py: Python<'_>, scene: &Scene, id: ComponentId) -> Option<Py<PyAny>> {
    let c = scene.get::<PythonController>(id)?;
    if !scene.entry(id).data.get(settee_core::factory::BaseData::LISTENING) {
        return None;
    }
    c.instance.as_ref().map(|i| i.clone_ref(py))
}

/// `node.sendEvent(userData, eventName)`: a `PythonScriptEvent` sent through the subtree of `node`
/// as SOFA's PropagateEventVisitor does: depth-first, objects in node order, listening components
/// only. A handler returning a truthy value marks the event handled: the rest of that node's
/// objects and its subtree are skipped, and each later node still gives it to its first object
/// (the visitor checks the flag after each object). Exceptions are logged, as for the engine's
/// events. The scene stays in its cell: handlers reach it as usual.
pub fn send_script_event(
    py: Python<'_>,
    cell: &Py<SceneCell>,
    node: NodeId,
    sender: &Bound<'_, PyAny>,
    user_data: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<()> {
    const EVENT: &str = "PythonScriptEvent";
    let order = with_scene(py, cell, |s| s.preorder(node))?;
    let mut handled = false;
    // Nodes the event does not go below: a node is skipped when every parent it has in the
    // visited subtree is (SOFA's DAG pruning), and it is then cut too.
    let mut pruned: Vec<NodeId> = Vec::new();
    for &n in &order {
        let skip = n != node
            && with_scene(py, cell, |s| {
                let mut inside = s.node(n).parents.iter().filter(|p| order.contains(p)).peekable();
                inside.peek().is_some() && inside.all(|p| pruned.contains(p))
            })?;
        if skip {
            pruned.push(n);
            continue;
        }
        let objects = with_scene(py, cell, |s| s.node(n).objects.clone())?;
        for c in objects {
            let Some(instance) = with_scene(py, cell, |s| s.components.get(c).and_then(|_| listening_instance(py, s, c)))? else {
                continue;
            };
            let Some(handler) = event_handler(instance.bind(py), EVENT) else { continue };
            let dict = event_dict(py, EVENT);
            dict.set_item("isHandled", handled)?;
            dict.set_item("sender", sender)?;
            dict.set_item("event_name", name)?;
            dict.set_item("userData", user_data)?;
            match handler.call1((dict,)) {
                Ok(r) => {
                    if !r.is_none() && r.is_truthy().unwrap_or(false) {
                        handled = true;
                    }
                }
                Err(e) => with_scene(py, cell, |s| report_exception(py, s, c, &format!("on{EVENT}"), e))?,
            }
            if handled {
                break;
            }
        }
        if handled {
            pruned.push(n);
        }
    }
    Ok(())
}

/// A Python exception raised by a component's method: printed with its traceback and reported
/// as an error of the component (SOFA logs it and goes on).
pub fn report_exception(py: Python<'_>, scene: &mut Scene, me: ComponentId, method: &str, e: PyErr) {
    let text = e.to_string();
    let pos = crate::traceback_positions(py, &e).pop();
    e.print(py);
    let label = scene.entry(me).label();
    let d = Diagnostic::new(Severity::Error, format!("Python exception in {method}: {text}"))
        .at(pos.or_else(|| scene.entry(me).pos.clone()))
        .subject(label);
    scene.report(d);
}

impl Component for PythonController {
    /// Its state is the script's Python object: a snapshot leaves it out, a restore keeps it.
    fn kept_by_restore(&self) -> bool {
        true
    }
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let me = cx.id;
        self.call_defined(cx.scene, me, "init")
    }

    fn simulation_start(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        self.send(scene, me, "SimulationInitDoneEvent", &[]);
        Ok(())
    }

    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let dt = scene.root().context.dt;
        self.send(scene, me, "AnimateBeginEvent", &[("dt", dt)]);
        Ok(())
    }

    fn animate_end(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let dt = scene.root().context.dt;
        self.send(scene, me, "AnimateEndEvent", &[("dt", dt)]);
        Ok(())
    }
}

impl EventListener for PythonController {
    fn on_event(&mut self, scene: &mut Scene, me: ComponentId, event: &'static str) -> SimResult {
        self.send(scene, me, event, &[]);
        Ok(())
    }
}

/// Whether a component wrapper is a Python subclass (a controller written in the script).
pub fn is_python_component(obj: &Bound<'_, PyObj>) -> bool {
    !obj.get_type().is(obj.py().get_type::<PyObj>())
}

/// Assigning to an `on…` attribute of an instance replaces its handler: the cached handlers are
/// looked up again.
pub fn forget_handler_cache(_obj: &Bound<'_, PyObj>, name: &str) {
    if name.starts_with("on") {
        HANDLERS_VERSION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

thread_local! {
    /// The scenes (by uid) that hold one Python component not added to a node yet.
    static PRIVATE: std::cell::RefCell<std::collections::HashSet<u64>> = std::cell::RefCell::new(std::collections::HashSet::new());
}

/// Gives a Python component a scene of its own, from its construction until `addObject`: its
/// constructor may already add Data (`self.addData(...)`) and read them, as in SOFA, where the
/// component exists before it joins a node. `pending` Data (`name`, `listening`, …, given to the
/// base constructor) are written into it. Does nothing when it has one.
pub fn adopt(
    py: Python<'_>,
    obj: &Bound<'_, PyObj>,
    class: &'static settee_core::ComponentClass,
    comp: Box<dyn Component>,
    layout: Option<settee_core::Layout>,
) -> PyResult<()> {
    if obj.borrow().target.is_some() {
        return Ok(());
    }
    let pending = std::mem::take(&mut obj.borrow_mut().pending);
    let name = pending.iter().rev().find(|(k, _)| k == "name").map(|(_, v)| v.clone()).unwrap_or_else(|| "unnamed".into());
    let mut scene = Scene::new("unnamed");
    let id = scene.insert_unattached(Scene::ROOT, class, comp, layout, &name);
    scene.attach_component(id, Scene::ROOT);
    let e = scene.entry_mut(id);
    for (k, v) in &pending {
        if k != "name" {
            let _ = e.data.write_text(k, v);
        }
    }
    let uid = scene.uid;
    let cell = Py::new(py, SceneCell::new(scene))?;
    cell.bind(py).borrow_mut().objects.insert(id, obj.clone().into_any().unbind());
    PRIVATE.with(|p| p.borrow_mut().insert(uid));
    obj.borrow_mut().target = Some((cell, id));
    Ok(())
}

/// Whether a component wrapper's scene is the one [`adopt`] gave it (it is in no node yet).
pub fn is_unattached(py: Python<'_>, obj: &Bound<'_, PyObj>) -> bool {
    match crate::object::obj_ref(obj) {
        Some((cell, _)) => {
            let uid = cell.bind(py).borrow().uid;
            PRIVATE.with(|p| p.borrow().contains(&uid))
        }
        None => true,
    }
}

/// Name of the instance attribute listing the Data links `addData` could not make yet: the
/// component was not in the scene of the Data it was given (`(name, Data)` pairs).
const PENDING_LINKS: &str = "_settee_pending_links";

/// Remembers that Data `name` of a component not yet added to a node follows `parent`, a Data
/// of another scene: the link is made when the component joins that scene.
pub fn remember_link(obj: &Bound<'_, PyObj>, name: &str, parent: &Bound<'_, PyAny>) -> PyResult<()> {
    let dict = obj.getattr("__dict__")?;
    let list = match dict.get_item(PENDING_LINKS) {
        Ok(l) => l,
        Err(_) => {
            let l = pyo3::types::PyList::empty(obj.py()).into_any();
            dict.set_item(PENDING_LINKS, &l)?;
            l
        }
    };
    list.call_method1("append", ((name, parent.clone()),))?;
    Ok(())
}

/// `node.addObject(component)`: a Python component joins the node, leaving the scene of its
/// own ([`adopt`]) with its Data.
pub fn attach(py: Python<'_>, cell: &Py<SceneCell>, node: NodeId, obj: &Bound<'_, PyObj>) -> PyResult<()> {
    if !is_python_component(obj) {
        return Err(PyRuntimeError::new_err("only components written in Python (Sofa.Core.Controller subclasses) can be added as objects"));
    }
    if obj.borrow().target.is_none() {
        // A subclass whose constructor did not call the base one.
        if obj.cast::<PyController>().is_ok() {
            let instance = obj.clone().into_any().unbind();
            adopt(py, obj, PythonController::CLASSES[0], Box::new(PythonController { instance: Some(instance), ..Default::default() }), None)?;
            let (c, id) = crate::object::obj_ref(obj).expect("adopted");
            with_scene(py, &c, |s| {
                if !s.entry(id).data.fields.iter().any(|f| f.decl.name == "listening" && f.is_set) {
                    let _ = s.entry_mut(id).data.write_text("listening", "true");
                }
            })?;
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "{}.__init__() must call the __init__ of its Sofa.Core base class",
                obj.get_type().name()?
            )));
        }
    }
    if !is_unattached(py, obj) {
        return Err(PyRuntimeError::new_err(format!("{} already belongs to a node", obj.repr()?)));
    }
    let (own, old) = crate::object::obj_ref(obj).expect("adopted");
    let mut entry = with_scene(py, &own, |s| {
        let e = s.components.remove(old);
        s.nodes[Scene::ROOT].objects.clear();
        e
    })?
    .ok_or_else(|| PyRuntimeError::new_err("the component's own scene lost it"))?;
    PRIVATE.with(|p| p.borrow_mut().remove(&own.bind(py).borrow().uid));
    own.bind(py).borrow_mut().objects.remove(&old);
    // Links into its own scene lead nowhere now; link texts are resolved again in the new one.
    for l in &mut entry.links {
        l.targets.clear();
    }
    for f in &mut entry.data.fields {
        f.link = None;
    }
    let pos = crate::node::caller_pos(py);
    entry.pos = pos.clone();
    entry.dir = pos.as_ref().and_then(|p| p.file().parent().map(|d| d.to_path_buf())).unwrap_or_default();
    entry.node = node;
    let id = with_scene(py, cell, |s| {
        let id = s.components.insert(entry);
        s.attach_component(id, node);
        id
    })?;
    obj.borrow_mut().target = Some((cell.clone_ref(py), id));
    cell.bind(py).borrow_mut().objects.insert(id, obj.clone().into_any().unbind());
    // Data given to `addData` from this scene while the component was outside of it.
    if let Ok(links) = obj.getattr("__dict__").and_then(|d| d.get_item(PENDING_LINKS)) {
        obj.getattr("__dict__")?.del_item(PENDING_LINKS)?;
        for item in links.try_iter()? {
            let (name, parent): (String, Bound<'_, PyAny>) = item?.extract()?;
            let d = obj.call_method1("findData", (name,))?;
            if !d.is_none() {
                // A parent in yet another scene stays a copy.
                let _ = d.call_method1("setParent", (parent,));
            }
        }
    }
    Ok(())
}

/// `Sofa.Core.Controller`: subclass it in the script and add an instance to a node.
#[pyclass(module = "Sofa.Core", name = "Controller", extends = PyObj, subclass, unsendable)]
pub struct PyController;

/// What the base constructors of SofaPython3's component trampolines (force fields, mappings)
/// do with their arguments: listening from the start, a single positional argument is the name
/// (given twice, with `name=` too, is a `TypeError`), and the keywords naming base Data are set.
pub fn take_base_arguments(base: &mut PyObj, args: &Bound<'_, PyTuple>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    base.pending.push(("listening".into(), "true".into()));
    if args.len() == 1 {
        if let Some(name) = kw.and_then(|k| k.get_item("name").ok().flatten()) {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "The name is set twice as a named argument='{name}' and as a positional argument='{}'.",
                args.get_item(0)?
            )));
        }
        base.pending.push(("name".into(), args.get_item(0)?.extract::<String>()?));
    }
    take_kwargs(base, kw)
}

pub fn take_kwargs(base: &mut PyObj, kw: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    if let Some(kw) = kw {
        for (k, v) in kw.iter() {
            let k: String = k.extract()?;
            if PENDING_DATA.contains(&k.as_str()) {
                base.pending.push((k, crate::convert::to_sofa_text(&v)?));
            }
        }
    }
    Ok(())
}

#[pymethods]
impl PyController {
    /// Takes any arguments, as a subclass's constructor may (`Ctl(node=root, name="c")`); the
    /// Data among the keywords (`name`, `listening`, …) are set, the others are the subclass's.
    #[new]
    #[pyo3(signature = (*_args, **kw))]
    fn new(_args: &Bound<'_, PyTuple>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<PyClassInitializer<Self>> {
        let mut base = PyObj { target: None, pending: Vec::new() };
        take_kwargs(&mut base, kw)?;
        Ok(base.initializer().add_subclass(PyController))
    }

    /// `Sofa.Core.Controller.__init__(self, *args, **kwargs)`, called by subclasses.
    #[pyo3(signature = (*_args, **kw))]
    fn __init__(slf: &Bound<'_, PyController>, _args: &Bound<'_, PyTuple>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        let base = slf.as_super();
        if base.borrow().target.is_some() {
            return Ok(());
        }
        take_kwargs(&mut base.borrow_mut(), kw)?;
        // Listening from the start, unless the script said otherwise.
        if !base.borrow().pending.iter().any(|(k, _)| k == "listening") {
            base.borrow_mut().pending.insert(0, ("listening".into(), "true".into()));
        }
        let instance = base.clone().into_any().unbind();
        adopt(slf.py(), base, PythonController::CLASSES[0], Box::new(PythonController { instance: Some(instance), ..Default::default() }), None)
    }

    /// The base `init` does nothing (a subclass's own is called at the scene's init).
    fn init(&self) {}

    fn reinit(&self) {}
}
