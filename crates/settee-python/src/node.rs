//! `Sofa.Core.Node` (spec `python.md` §3).

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyAttributeError, PyIndexError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use settee_core::data::{parse_value, DataKind, TemplateArity, Value};
use settee_core::diag::{Severity, SourcePos};
use settee_core::factory::Attr;
use settee_core::{ComponentId, NodeId, Scene};

use crate::base::PyBase;
use crate::cell::{current, with_scene, SceneCell};
use crate::convert::to_sofa_text;
use crate::data::DataOwner;
use crate::object::PyObj;

/// `x.linkpath`: a path to a node, an object or a Data that makes a live link when given to
/// `addObject` or assigned to a Data.
#[pyclass(module = "Sofa.Core", name = "LinkPath", frozen)]
pub struct LinkPath {
    /// `@/a/b/obj` or `@/a/b/obj.data`.
    pub path: String,
    /// What the path names (a Data, a node or an object), as SofaPython3's LinkPath holds it:
    /// a link given by it reaches its target even from another scene, where the path text
    /// would name nothing.
    pub target: Option<Py<PyAny>>,
}

#[pymethods]
impl LinkPath {
    /// The Data, node or object the path names.
    fn target(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.target.as_ref().map(|t| t.clone_ref(py))
    }

    fn __str__(&self) -> String {
        self.path.clone()
    }
    fn __repr__(&self) -> String {
        format!("LinkPath(\"{}\")", self.path)
    }
}

#[pyclass(module = "Sofa.Core", name = "Node", extends = PyBase, subclass, dict, unsendable)]
pub struct PyNode {
    pub cell: Py<SceneCell>,
    pub id: NodeId,
}

/// Node Data names (SOFA's `Context` and `Base` Data of a node).
pub const NODE_DATA: &[&str] = &["name", "gravity", "dt", "time", "animate", "activated", "tags", "bbox", "printLog", "sleeping", "componentState"];

/// The Python object of node `id` of `cell` (the same object every time).
pub fn wrap_node(py: Python<'_>, cell: &Py<SceneCell>, id: NodeId) -> PyResult<Py<PyAny>> {
    if let Some(n) = cell.bind(py).borrow().nodes.get(&id) {
        return Ok(n.clone_ref(py));
    }
    let obj: Py<PyAny> = Py::new(py, (PyNode { cell: cell.clone_ref(py), id }, PyBase::default()))?.into_any();
    cell.bind(py).borrow_mut().nodes.insert(id, obj.clone_ref(py));
    Ok(obj)
}

/// Where a node wrapper points now, registering it as its node's object when it is the first.
pub fn node_ref(slf: &Bound<'_, PyNode>) -> (Py<SceneCell>, NodeId) {
    let py = slf.py();
    let (cell, id) = {
        let n = slf.borrow();
        (current(py, &n.cell), n.id)
    };
    cell.bind(py).borrow_mut().nodes.entry(id).or_insert_with(|| slf.clone().into_any().unbind());
    (cell, id)
}

/// The Python caller's file and line (the frame that called into Settee).
pub fn caller_pos(py: Python<'_>) -> Option<SourcePos> {
    let frame = py.import("sys").ok()?.call_method1("_getframe", (0,)).ok()?;
    let line: u32 = frame.getattr("f_lineno").ok()?.extract().ok()?;
    let file: String = frame.getattr("f_code").ok()?.getattr("co_filename").ok()?.extract().ok()?;
    Some(SourcePos::new(Arc::new(PathBuf::from(file)), line, 1))
}

/// Messages a scene gathered since `before`, as the text of a Python exception.
fn errors_since(scene: &Scene, before: usize, severity: Severity) -> Vec<String> {
    scene.messages[before..].iter().filter(|m| m.severity == severity).map(|m| m.to_string()).collect()
}

/// Sets a node Data from text; `Ok(false)` for a name that is not a node Data.
pub fn set_node_data(scene: &mut Scene, id: NodeId, name: &str, text: &str) -> Result<bool, String> {
    let arity = TemplateArity::SCALAR;
    let node = scene.node_mut(id);
    let bad = |kind: DataKind| format!("'{text}' is not a valid {} for node Data '{name}'", kind.type_name());
    match name {
        "name" => node.name = text.to_string(),
        "gravity" => {
            let cur = Value::Reals { arity: 3, v: node.context.gravity.to_vec() };
            let out = parse_value(DataKind::Fixed(3), arity, text, &cur);
            match (&out.value, out.invalid) {
                (Value::Reals { v, .. }, false) if v.len() == 3 => node.context.gravity = [v[0], v[1], v[2]],
                _ => return Err(bad(DataKind::Fixed(3))),
            }
        }
        "dt" | "time" => {
            let out = parse_value(DataKind::Real, arity, text, &Value::Real(0.0));
            match (&out.value, out.invalid) {
                (Value::Real(r), false) if name == "dt" => node.context.dt = *r,
                (Value::Real(r), false) => node.context.time = *r,
                _ => return Err(bad(DataKind::Real)),
            }
        }
        "animate" | "activated" => {
            let out = parse_value(DataKind::Bool, arity, text, &Value::Bool(true));
            match (&out.value, out.invalid) {
                (Value::Bool(b), false) if name == "animate" => node.context.animate = *b,
                (Value::Bool(b), false) => node.activated = *b,
                _ => return Err(bad(DataKind::Bool)),
            }
        }
        "tags" => node.tags = text.split_whitespace().map(str::to_string).collect(),
        "bbox" | "printLog" | "sleeping" | "componentState" => {}
        _ => return Ok(false),
    }
    scene.touch();
    Ok(true)
}

/// The value of a node Data.
pub fn node_data_value(scene: &Scene, id: NodeId, name: &str) -> Option<Value> {
    let n = scene.nodes.get(id)?;
    Some(match name {
        "name" => Value::Str(n.name.clone()),
        "gravity" => Value::Reals { arity: 3, v: n.context.gravity.to_vec() },
        "dt" => Value::Real(n.context.dt),
        "time" => Value::Real(n.context.time),
        "animate" => Value::Bool(n.context.animate),
        "activated" => Value::Bool(n.activated),
        "tags" => Value::Strings(n.tags.clone()),
        "bbox" => Value::Reals { arity: 6, v: vec![0.0; 6] },
        "printLog" | "sleeping" => Value::Bool(false),
        "componentState" => Value::Str("Valid".into()),
        _ => return None,
    })
}

pub fn node_data_kind(name: &str) -> DataKind {
    match name {
        "gravity" => DataKind::Fixed(3),
        "bbox" => DataKind::Fixed(6),
        "dt" | "time" => DataKind::Real,
        "animate" | "activated" | "printLog" | "sleeping" => DataKind::Bool,
        "tags" => DataKind::Strings,
        _ => DataKind::Str,
    }
}

/// `/a/b` for a node (`/` for the root), as SOFA's `getPathName`: the root's name never appears.
pub fn node_path_name(scene: &Scene, id: NodeId) -> String {
    let mut parts = Vec::new();
    let mut cur = id;
    while let Some(p) = scene.nodes[cur].parent() {
        parts.push(scene.nodes[cur].name.clone());
        cur = p;
    }
    parts.reverse();
    format!("/{}", parts.join("/"))
}

pub const PROTECTED: &[&str] = &["children", "objects", "parents", "data", "links", "linkpath"];

#[pymethods]
impl PyNode {
    #[new]
    #[pyo3(signature = (name = "unnamed", *_args, **kw))]
    fn new(py: Python<'_>, name: &str, _args: &Bound<'_, PyTuple>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<PyClassInitializer<PyNode>> {
        let mut scene = Scene::new(name);
        scene.data_path = crate::data_path();
        scene.factory = Some(crate::factory()?);
        if let Some(kw) = kw {
            for (k, v) in kw.iter() {
                let k: String = k.extract()?;
                let text = to_sofa_text(&v)?;
                // Unknown keywords are ignored, as SOFA does for a node.
                set_node_data(&mut scene, Scene::ROOT, &k, &text).map_err(PyValueError::new_err)?;
            }
        }
        let cell = Py::new(py, SceneCell::new(scene))?;
        Ok(PyClassInitializer::from((PyNode { cell, id: Scene::ROOT }, PyBase::default())))
    }

    /// `addObject(type, **kw)` or `addObject(component)`.
    #[pyo3(signature = (what, **kw))]
    fn addObject(slf: &Bound<'_, PyNode>, what: &Bound<'_, PyAny>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        if let Ok(class) = what.cast::<PyString>() {
            return add_object(py, &cell, node, class.to_str()?, kw);
        }
        if let Ok(obj) = what.cast::<PyObj>() {
            crate::component::attach(py, &cell, node, obj)?;
            return Ok(what.clone().unbind());
        }
        Err(PyTypeError::new_err(format!("addObject takes a component type name (str) or a component, not {}", what.get_type().name()?)))
    }

    /// Deprecated name of `addObject`.
    #[pyo3(signature = (what, **kw))]
    fn createObject(slf: &Bound<'_, PyNode>, what: &Bound<'_, PyAny>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
        Self::addObject(slf, what, kw)
    }

    /// `addChild(name, **kw)` or `addChild(node)`.
    #[pyo3(signature = (what, **kw))]
    fn addChild(slf: &Bound<'_, PyNode>, what: &Bound<'_, PyAny>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        if let Ok(name) = what.cast::<PyString>() {
            let name = name.to_str()?;
            if PROTECTED.contains(&name) {
                return Err(PyValueError::new_err(format!("Cannot call addChild with name {name}: Protected keyword")));
            }
            let id = with_scene(py, &cell, |s| s.add_node(node, name))?;
            if let Some(kw) = kw {
                let mut unknown = Vec::new();
                for (k, v) in kw.iter() {
                    let k: String = k.extract()?;
                    let text = to_sofa_text(&v)?;
                    match with_scene(py, &cell, |s| set_node_data(s, id, &k, &text))? {
                        Ok(true) => {}
                        Ok(false) => unknown.push(format!("  - Unable to set attribute '{k}' with value: {text}")),
                        Err(e) => return Err(PyValueError::new_err(e)),
                    }
                }
                if !unknown.is_empty() {
                    return Err(PyTypeError::new_err(format!("Unknown Attribute(s):\n{}", unknown.join("\n"))));
                }
            }
            return wrap_node(py, &cell, id);
        }
        if let Ok(child) = what.cast::<PyNode>() {
            crate::graft::attach_node(py, &cell, node, child)?;
            return Ok(what.clone().unbind());
        }
        Err(PyTypeError::new_err("addChild takes a name (str) or a Sofa.Core.Node"))
    }

    #[pyo3(signature = (name, **_kw))]
    fn createChild(slf: &Bound<'_, PyNode>, name: &Bound<'_, PyAny>, _kw: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
        Self::addChild(slf, name, None)
    }

    fn getChild(slf: &Bound<'_, PyNode>, name: &str) -> PyResult<Option<Py<PyAny>>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let found = with_scene(py, &cell, |s| s.node(node).children.iter().copied().find(|c| s.node(*c).name == name))?;
        found.map(|c| wrap_node(py, &cell, c)).transpose()
    }

    #[pyo3(signature = (name, **_kw))]
    fn getObject(slf: &Bound<'_, PyNode>, name: &str, _kw: Option<&Bound<'_, PyDict>>) -> PyResult<Option<Py<PyAny>>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let found = with_scene(py, &cell, |s| find_object(s, node, name))?;
        found.map(|c| crate::object::wrap_object(py, &cell, c)).transpose()
    }

    fn hasObject(slf: &Bound<'_, PyNode>, name: &str) -> PyResult<bool> {
        let (cell, node) = node_ref(slf);
        with_scene(slf.py(), &cell, |s| find_object(s, node, name).is_some())
    }

    #[getter]
    fn children(slf: &Bound<'_, PyNode>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let ids = with_scene(py, &cell, |s| s.node(node).children.clone())?;
        let items = ids.into_iter().map(|c| wrap_node(py, &cell, c)).collect::<PyResult<Vec<_>>>()?;
        crate::seq::make(py, slf.clone().into_any().unbind(), crate::seq::Kind::Children, items)
    }

    #[getter]
    fn objects(slf: &Bound<'_, PyNode>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let ids = with_scene(py, &cell, |s| s.node(node).objects.clone())?;
        let items = ids.into_iter().map(|c| crate::object::wrap_object(py, &cell, c)).collect::<PyResult<Vec<_>>>()?;
        crate::seq::make(py, slf.clone().into_any().unbind(), crate::seq::Kind::Objects, items)
    }

    #[getter]
    fn parents(slf: &Bound<'_, PyNode>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let ids: Vec<NodeId> = with_scene(py, &cell, |s| s.node(node).parents.clone())?;
        let items = ids.into_iter().map(|c| wrap_node(py, &cell, c)).collect::<PyResult<Vec<_>>>()?;
        crate::seq::make(py, slf.clone().into_any().unbind(), crate::seq::Kind::Parents, items)
    }

    fn removeChild(slf: &Bound<'_, PyNode>, child: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let id = if let Ok(name) = child.extract::<String>() {
            with_scene(py, &cell, |s| s.node(node).children.iter().copied().find(|c| s.node(*c).name == name))?
                .ok_or_else(|| PyIndexError::new_err(format!("Invalid name '{name}'")))?
        } else {
            let c = child.cast::<PyNode>()?;
            node_ref(c).1
        };
        let wrapper = wrap_node(py, &cell, id)?;
        crate::graft::detach_from(py, &cell, id, node)?;
        Ok(wrapper)
    }

    fn removeObject(slf: &Bound<'_, PyNode>, obj: &Bound<'_, PyObj>) -> PyResult<()> {
        let py = slf.py();
        let (cell, _) = node_ref(slf);
        let Some((_, id)) = crate::object::obj_ref(obj) else { return Ok(()) };
        with_scene(py, &cell, |s| {
            s.detach_component(id);
        })
    }

    fn getName(slf: &Bound<'_, PyNode>) -> PyResult<String> {
        let (cell, node) = node_ref(slf);
        with_scene(slf.py(), &cell, |s| s.node(node).name.clone())
    }

    fn setName(slf: &Bound<'_, PyNode>, name: &str) -> PyResult<()> {
        let (cell, node) = node_ref(slf);
        with_scene(slf.py(), &cell, |s| s.node_mut(node).name = name.to_string())
    }

    /// SOFA merged `DAGNode` into `Node` (v24.06): a node's class name is `Node`.
    fn getClassName(&self) -> &'static str {
        "Node"
    }

    fn getTemplateName(&self) -> &'static str {
        ""
    }

    fn getRootPath(slf: &Bound<'_, PyNode>) -> PyResult<String> {
        let (cell, node) = node_ref(slf);
        let depth = with_scene(slf.py(), &cell, |s| {
            let mut d = 0;
            let mut cur = node;
            while let Some(p) = s.node(cur).parent() {
                d += 1;
                cur = p;
            }
            d
        })?;
        Ok("../".repeat(depth))
    }

    fn getRoot(slf: &Bound<'_, PyNode>) -> PyResult<Py<PyAny>> {
        let (cell, _) = node_ref(slf);
        wrap_node(slf.py(), &cell, Scene::ROOT)
    }

    fn getContext(slf: &Bound<'_, PyNode>) -> Py<PyAny> {
        slf.clone().into_any().unbind()
    }

    fn getMechanicalState(slf: &Bound<'_, PyNode>) -> PyResult<Option<Py<PyAny>>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let found = with_scene(py, &cell, |s| s.slot(node, settee_core::role::MECHANICAL_STATE))?;
        found.map(|c| crate::object::wrap_object(py, &cell, c)).transpose()
    }

    /// This node's mass, or `None` (no search up).
    fn getMass(slf: &Bound<'_, PyNode>) -> PyResult<Option<Py<PyAny>>> {
        node_slot(slf, settee_core::role::MASS)
    }

    /// This node's mechanical mapping, or `None`.
    fn getMechanicalMapping(slf: &Bound<'_, PyNode>) -> PyResult<Option<Py<PyAny>>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let found = with_scene(py, &cell, |s| {
            // SOFA fills the slot by class: any mapping of a mechanical-mapping class.
            s.slot(node, settee_core::role::MECHANICAL_MAPPING)
        })?;
        found.map(|c| crate::object::wrap_object(py, &cell, c)).transpose()
    }

    /// The `index`-th force field of this node (in object order), or `None`.
    fn getForceField(slf: &Bound<'_, PyNode>, index: usize) -> PyResult<Option<Py<PyAny>>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let found =
            with_scene(py, &cell, |s| s.node(node).objects.iter().copied().filter(|&c| s.entry(c).plays(settee_core::role::FORCE_FIELD)).nth(index))?;
        found.map(|c| crate::object::wrap_object(py, &cell, c)).transpose()
    }

    /// `sendEvent(userData, eventName)`: a `PythonScriptEvent` through this node's subtree.
    #[pyo3(name = "sendEvent")]
    fn send_event(slf: &Bound<'_, PyNode>, user_data: &Bound<'_, PyAny>, event_name: &str) -> PyResult<()> {
        let (cell, node) = node_ref(slf);
        crate::component::send_script_event(slf.py(), &cell, node, slf.as_any(), user_data, event_name)
    }

    /// `moveChild(child, oldParent)`: the child leaves `oldParent` and is attached under this node.
    #[pyo3(name = "moveChild")]
    fn move_child(slf: &Bound<'_, PyNode>, child: &Bound<'_, PyNode>, old_parent: &Bound<'_, PyNode>) -> PyResult<()> {
        let py = slf.py();
        let (old_cell, old_id) = node_ref(old_parent);
        let (child_cell, child_id) = node_ref(child);
        let is_child = child_cell.is(&old_cell) && with_scene(py, &old_cell, |s| s.node(child_id).parents.contains(&old_id))?;
        if !is_child {
            return Err(PyRuntimeError::new_err(format!("{} is not a child of {}", child.repr()?, old_parent.repr()?)));
        }
        let (cell, me) = node_ref(slf);
        if !child_cell.is(&cell) {
            return crate::graft::move_across(py, &child_cell, child_id, &cell, me);
        }
        crate::graft::detach_from(py, &child_cell, child_id, old_id)?;
        crate::graft::attach_node(py, &cell, me, child)
    }

    /// `detachFromGraph()`: the node leaves its parent (it keeps its content).
    #[pyo3(name = "detachFromGraph")]
    fn detach_from_graph(slf: &Bound<'_, PyNode>) -> PyResult<()> {
        let (cell, node) = node_ref(slf);
        crate::graft::detach_node(slf.py(), &cell, node)
    }

    fn getTime(slf: &Bound<'_, PyNode>) -> PyResult<f64> {
        let (cell, node) = node_ref(slf);
        with_scene(slf.py(), &cell, |s| s.node(node).context.time)
    }

    fn getDt(slf: &Bound<'_, PyNode>) -> PyResult<f64> {
        let (cell, node) = node_ref(slf);
        with_scene(slf.py(), &cell, |s| s.node(node).context.dt)
    }

    fn getGravity(slf: &Bound<'_, PyNode>) -> PyResult<Vec<f64>> {
        let (cell, node) = node_ref(slf);
        with_scene(slf.py(), &cell, |s| s.node(node).context.gravity.to_vec())
    }

    fn setDt(slf: &Bound<'_, PyNode>, dt: f64) -> PyResult<()> {
        let (cell, node) = node_ref(slf);
        with_scene(slf.py(), &cell, |s| s.node_mut(node).context.dt = dt)
    }

    fn setGravity(slf: &Bound<'_, PyNode>, g: [f64; 3]) -> PyResult<()> {
        let (cell, node) = node_ref(slf);
        with_scene(slf.py(), &cell, |s| s.node_mut(node).context.gravity = g)
    }

    fn isActive(slf: &Bound<'_, PyNode>) -> PyResult<bool> {
        let (cell, node) = node_ref(slf);
        with_scene(slf.py(), &cell, |s| s.node_active(node))
    }

    /// Whether the node went through an init: `initRoot` of its scene, or `init()` of it or of
    /// an ancestor.
    fn isInitialized(slf: &Bound<'_, PyNode>) -> PyResult<bool> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let inited = cell.bind(py).borrow().initialized_nodes.clone();
        with_scene(py, &cell, |s| {
            if s.initialized {
                return true;
            }
            let mut cur = Some(node);
            while let Some(n) = cur {
                if inited.contains(&n) {
                    return true;
                }
                cur = s.node(n).parent();
            }
            false
        })
    }

    /// `init()` of this node's subtree: `init` top-down, `bwdInit` bottom-up (no events).
    fn init(slf: &Bound<'_, PyNode>) -> PyResult<()> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        let before = with_scene(py, &cell, |s| s.messages.len())?;
        crate::cell::run_engine(py, &cell, |s| {
            if s.factory.is_none() {
                s.factory = crate::factory().ok();
            }
            let _ = settee_core::simulation::init_subtree(s, node);
        })?;
        cell.bind(py).borrow_mut().initialized_nodes.insert(node);
        crate::print_messages(py, &cell, before)
    }

    /// `node["a.b.obj.data"]`: down by dot-separated names.
    fn __getitem__(slf: &Bound<'_, PyNode>, path: &str) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let mut cur: Bound<'_, PyAny> = slf.clone().into_any();
        for part in path.trim_start_matches('.').split('.') {
            let next = if let Ok(n) = cur.cast::<PyNode>() {
                let (cell, node) = node_ref(n);
                let obj = with_scene(py, &cell, |s| find_object(s, node, part))?;
                let child = with_scene(py, &cell, |s| s.node(node).children.iter().copied().find(|c| s.node(*c).name == part))?;
                match (obj, child) {
                    (Some(o), _) => crate::object::wrap_object(py, &cell, o)?.into_bound(py),
                    (None, Some(c)) => wrap_node(py, &cell, c)?.into_bound(py),
                    (None, None) if crate::base::has_data(n.as_any(), part)? => {
                        crate::data::make(py, DataOwner::Node(n.clone().unbind()), part)?.into_bound(py).into_any()
                    }
                    _ => return Err(PyKeyError(format!("'{part}' is neither an object, a child nor a Data of the node"))),
                }
            } else {
                cur.getattr(part)?
            };
            cur = next;
        }
        Ok(cur.unbind())
    }

    fn __getattr__(slf: &Bound<'_, PyNode>, name: &str) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (cell, node) = node_ref(slf);
        if name == "__data__" {
            return data_dict(slf.as_any());
        }
        if name.starts_with("__") {
            return Err(PyAttributeError::new_err(name.to_string()));
        }
        if let Some(o) = with_scene(py, &cell, |s| find_object(s, node, name))? {
            return crate::object::wrap_object(py, &cell, o);
        }
        if let Some(c) = with_scene(py, &cell, |s| s.node(node).children.iter().copied().find(|c| s.node(*c).name == name))? {
            return wrap_node(py, &cell, c);
        }
        if crate::base::has_data(slf.as_any(), name)? {
            return Ok(crate::data::make(py, DataOwner::Node(slf.clone().unbind()), name)?.into_any());
        }
        if let Some(l) = crate::base::node_link(slf, name)? {
            return Ok(l.into_any());
        }
        Err(PyAttributeError::new_err(format!("Unable to find attribute: {name}")))
    }

    fn __setattr__(slf: &Bound<'_, PyNode>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        if crate::base::has_data(slf.as_any(), name)? {
            let d = crate::data::make(py, DataOwner::Node(slf.clone().unbind()), name)?;
            return crate::data::set_value(d.bind(py), value);
        }
        // Anything else is a Python attribute of the instance.
        let dict = slf.getattr("__dict__")?;
        dict.set_item(name, value)
    }

    fn __repr__(slf: &Bound<'_, PyNode>) -> PyResult<String> {
        Ok(format!("<Sofa.Core.Node '{}'>", crate::base::path_name(slf.as_any())?))
    }

    fn __eq__(slf: &Bound<'_, PyNode>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(o) = other.cast::<PyNode>() else { return Ok(false) };
        let (a, ia) = node_ref(slf);
        let (b, ib) = node_ref(o);
        Ok(a.is(&b) && ia == ib)
    }

    fn __hash__(slf: &Bound<'_, PyNode>) -> u64 {
        let (c, id) = node_ref(slf);
        (c.as_ptr() as u64) ^ id.to_bits()
    }
}

#[allow(non_snake_case)]
fn PyKeyError(message: String) -> PyErr {
    pyo3::exceptions::PyKeyError::new_err(message)
}

/// The last component of the node playing `role` (SOFA's single slots), as its Python object.
fn node_slot(slf: &Bound<'_, PyNode>, role: settee_core::RoleId) -> PyResult<Option<Py<PyAny>>> {
    let py = slf.py();
    let (cell, node) = node_ref(slf);
    let found = with_scene(py, &cell, |s| s.slot(node, role))?;
    found.map(|c| crate::object::wrap_object(py, &cell, c)).transpose()
}

/// `x.__data__`: a `Sofa.Core.DataDict` of the Data of a node or a component.
pub fn data_dict(owner: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let py = owner.py();
    Ok(py.import("Sofa.Core")?.getattr("DataDict")?.call1((owner,))?.unbind())
}

/// A message kind of `Sofa.Helper` (`Info`, `Warning`, `Deprecated`, …) as a severity.
pub fn severity_of(kind: &str) -> Severity {
    match kind {
        "Info" => Severity::Info,
        "Warning" | "Deprecated" => Severity::Warning,
        _ => Severity::Error,
    }
}

/// The first object of `node` named `name`.
pub fn find_object(s: &Scene, node: NodeId, name: &str) -> Option<ComponentId> {
    s.node(node).objects.iter().copied().find(|c| s.entry(*c).name == name)
}

/// `addObject(type, **kw)`: SOFA's pipeline (spec §3.2): keywords to text, the factory,
/// the bare class name when no name is given, then the errors as Python exceptions.
fn add_object(py: Python<'_>, cell: &Py<SceneCell>, node: NodeId, class: &str, kw: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
    let pos = caller_pos(py);
    let mut attrs: Vec<Attr> = Vec::new();
    let mut template = None;
    let mut named = false;
    // Data given the link path of a Data of another scene: linked once the object exists, as
    // SofaPython3 does for every link path (its text names nothing in this scene).
    let mut outside: Vec<(String, Py<crate::data::PyData>)> = Vec::new();
    if let Some(kw) = kw {
        for (k, v) in kw.iter() {
            let k: String = k.extract()?;
            if let Some(d) = v.cast::<LinkPath>().ok().and_then(|l| l.get().target.as_ref().map(|t| t.clone_ref(py))) {
                if let Ok(d) = d.bind(py).cast::<crate::data::PyData>() {
                    if crate::data::of_other_scene(d, cell) {
                        outside.push((k, d.clone().unbind()));
                        continue;
                    }
                }
            }
            if k == "name" {
                if let Ok(n) = v.extract::<String>() {
                    if PROTECTED.contains(&n.as_str()) {
                        return Err(PyValueError::new_err(format!("Cannot call addObject with name {n}: Protected keyword")));
                    }
                }
                named = true;
            }
            let text = to_sofa_text(&v)?;
            if k == "template" {
                template = Some(text);
                continue;
            }
            attrs.push(Attr { name: k, value: text, pos: pos.clone() });
        }
    }
    let factory = crate::factory()?;
    // SOFA's renamed classes map silently, as in XML (spec python.md §8.23); a removed class gets
    // the factory's own message from `create` below.
    let removed = settee_core::names::removed_class_message(class).is_some();
    if factory.class(class).is_none() && !removed {
        let mut message = format!(
            "Object type {class}<{}> was not created\nThe component '{class}' cannot be found in the factory.",
            template.as_deref().unwrap_or("")
        );
        let near = factory.nearest(class, 3);
        if !near.is_empty() {
            message.push_str(&format!("\nBut the following object(s) exist: {}", near.join(", ")));
        }
        if let Some(origin) = settee_core::names::external_class_origin(class) {
            message.push_str(&format!("\n'{class}' comes from {origin}, which Settee does not include"));
        }
        return Err(PyValueError::new_err(message));
    }
    let dir = pos.as_ref().and_then(|p| p.file().parent().map(|d| d.to_path_buf())).unwrap_or_else(|| PathBuf::from("."));
    let (created, before) = with_scene(py, cell, |s| {
        let before = s.messages.len();
        (factory.create(s, node, class, template.as_deref(), attrs, pos.clone(), &dir), before)
    })?;
    let Some(id) = created else {
        let errors = with_scene(py, cell, |s| errors_since(s, before, Severity::Error))?;
        return Err(PyValueError::new_err(errors.join("\n")));
    };
    // Python names an unnamed object after its class, without a number (SOFA's "python"
    // naming convention), unlike XML.
    if !named {
        with_scene(py, cell, |s| {
            let class_name = s.entry(id).class.name.to_string();
            s.entry_mut(id).name = class_name.clone();
            if let Some(i) = s.entry(id).data.index_of("name") {
                s.entry_mut(id).data.fields[i].value = Value::Str(class_name);
            }
        })?;
    }
    let (errors, unused) = with_scene(py, cell, |s| {
        let errors = errors_since(s, before, Severity::Error);
        let unused: Vec<String> = s.messages[before..]
            .iter()
            .filter(|m| m.severity == Severity::Warning && m.message.starts_with("unused attribute"))
            .map(|m| m.message.clone())
            .collect();
        (errors, unused)
    })?;
    let wrapper = crate::object::wrap_object(py, cell, id)?;
    if !unused.is_empty() {
        let lines: Vec<String> = unused
            .iter()
            .map(|m| {
                let name = m.trim_start_matches("unused attribute ").trim_matches('\'');
                let value = kw.and_then(|kw| kw.get_item(name).ok().flatten()).and_then(|v| to_sofa_text(&v).ok()).unwrap_or_default();
                format!("  - Unable to set attribute '{name}' with value: {value}")
            })
            .collect();
        return Err(PyTypeError::new_err(format!("Unknown Attribute(s):\n{}", lines.join("\n"))));
    }
    if !errors.is_empty() {
        return Err(PyValueError::new_err(errors.join("\n")));
    }
    for (name, parent) in outside {
        let obj = wrapper.bind(py).cast::<PyObj>()?.clone().unbind();
        let child = crate::data::make(py, DataOwner::Object(obj), &name).map_err(|_| {
            PyTypeError::new_err(format!("Unknown Attribute(s):\n  - Unable to set attribute '{name}' with a link to a Data of another scene"))
        })?;
        crate::data::set_parent_data(child.bind(py), parent.bind(py))?;
    }
    crate::print_messages(py, cell, before)?;
    Ok(wrapper)
}
