//! `Sofa.Core.Data` and its numeric, text and word-list views (spec `python.md` §4.4–§4.7).
//!
//! The vectors of an initialised mechanical state (`position`, `velocity`, …) live in the
//! engine's state store: `.value` is a read-only numpy view on that memory (no copy), and
//! `writeableArray()` a writeable one. Other Data are small and read as copies.

use numpy::ndarray::ArrayView2;
use numpy::npyffi::flags::NPY_ARRAY_WRITEABLE;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyAttributeError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use settee_core::data::{print_value, DataField, DataHolder, DataKind, DataLinkTarget, Value};
use settee_core::scene::vec_id_of_data;
use settee_core::{ComponentId, NodeId, Scene, VecId};

use crate::cell::{with_scene, OutsideParent, SceneCell};
use crate::convert::{assignment_text, scalar_to_py, to_sofa_text};
use crate::node::{node_data_kind, node_data_value, node_path_name, node_ref, set_node_data, LinkPath, PyNode};
use crate::object::{obj_ref, object_path_name, PyObj};

pub enum DataOwner {
    Node(Py<PyNode>),
    Object(Py<PyObj>),
}

impl DataOwner {
    fn clone_ref(&self, py: Python<'_>) -> DataOwner {
        match self {
            DataOwner::Node(n) => DataOwner::Node(n.clone_ref(py)),
            DataOwner::Object(o) => DataOwner::Object(o.clone_ref(py)),
        }
    }
}

#[pyclass(module = "Sofa.Core", name = "Data", subclass, unsendable)]
pub struct PyData {
    pub owner: DataOwner,
    pub name: String,
}

#[pyclass(module = "Sofa.Core", name = "DataContainer", extends = PyData, unsendable)]
pub struct DataContainer;

#[pyclass(module = "Sofa.Core", name = "DataString", extends = PyData, unsendable)]
pub struct DataString;

#[pyclass(module = "Sofa.Core", name = "DataVectorString", extends = PyData, unsendable)]
pub struct DataVectorString;

/// Where a Data lives, resolved.
enum Place {
    /// One of a node's own Data (name, context).
    Node(Py<SceneCell>, NodeId),
    /// A Data a script added to a node.
    NodeField(Py<SceneCell>, NodeId, usize),
    Field(Py<SceneCell>, ComponentId, usize),
}

impl Place {
    fn cell(&self) -> &Py<SceneCell> {
        match self {
            Place::Node(c, _) | Place::NodeField(c, ..) | Place::Field(c, ..) => c,
        }
    }

    /// The Data in the core's model of Data and links; a node's own Data (its name and
    /// context) are not in it.
    fn target(&self) -> Option<DataLinkTarget> {
        match self {
            Place::Node(..) => None,
            Place::NodeField(_, n, i) => Some(DataLinkTarget::node(*n, *i)),
            Place::Field(_, c, i) => Some(DataLinkTarget::component(*c, *i)),
        }
    }

    /// The Data in the core's model, or the error saying that a node's own Data has no place
    /// there (no flags, no links).
    fn linkable(&self, what: &str) -> PyResult<DataLinkTarget> {
        self.target().ok_or_else(|| PyRuntimeError::new_err(format!("a node's own Data (name, gravity, dt, …) {what} in Settee")))
    }
}

fn place(py: Python<'_>, d: &PyData) -> PyResult<Place> {
    match &d.owner {
        DataOwner::Node(n) => {
            let (cell, id) = node_ref(n.bind(py));
            if crate::node::NODE_DATA.contains(&d.name.as_str()) {
                return Ok(Place::Node(cell, id));
            }
            let i = with_scene(py, &cell, |s| s.node(id).data.index_of(&d.name))?
                .ok_or_else(|| PyAttributeError::new_err(format!("no Data '{}'", d.name)))?;
            Ok(Place::NodeField(cell, id, i))
        }
        DataOwner::Object(o) => {
            let (cell, id) = obj_ref(o.bind(py)).ok_or_else(|| PyRuntimeError::new_err("the component was not added to a node yet"))?;
            let i = with_scene(py, &cell, |s| s.entry(id).data.index_of(&d.name))?
                .ok_or_else(|| PyAttributeError::new_err(format!("no Data '{}'", d.name)))?;
            Ok(Place::Field(cell, id, i))
        }
    }
}

/// The state vector behind a MechanicalObject Data, once the state is initialised.
fn state_vector(s: &Scene, id: ComponentId, field: usize) -> Option<(settee_core::StateId, VecId)> {
    let e = s.entry(id);
    let st = e.state.filter(|_| e.initialized)?;
    Some((st, vec_id_of_data(e.data.fields[field].decl.name)?))
}

fn kind_of(py: Python<'_>, p: &Place, name: &str) -> PyResult<DataKind> {
    match p {
        Place::Node(..) => Ok(node_data_kind(name)),
        Place::NodeField(cell, id, i) => with_scene(py, cell, |s| s.node(*id).data.fields[*i].decl.kind),
        Place::Field(cell, id, i) => with_scene(py, cell, |s| s.entry(*id).data.fields[*i].decl.kind),
    }
}

fn is_container(kind: DataKind) -> bool {
    matches!(
        kind.storage(),
        DataKind::Fixed(_)
            | DataKind::Reals
            | DataKind::RealTuples(_)
            | DataKind::Indices
            | DataKind::IndexTuples(_)
            | DataKind::Coords
            | DataKind::Derivs
            | DataKind::Coord
            | DataKind::Deriv
    )
}

/// A Data object of the class its value calls for.
pub fn make(py: Python<'_>, owner: DataOwner, name: &str) -> PyResult<Py<PyData>> {
    let base = PyData { owner, name: name.to_string() };
    let kind = kind_of(py, &place(py, &base)?, name)?;
    let init = pyo3::PyClassInitializer::from(base);
    let obj: Py<PyAny> = match kind {
        k if is_container(k) => Py::new(py, init.add_subclass(DataContainer))?.into_any(),
        DataKind::Str | DataKind::FileName => Py::new(py, init.add_subclass(DataString))?.into_any(),
        DataKind::Strings => Py::new(py, init.add_subclass(DataVectorString))?.into_any(),
        _ => Py::new(py, init)?.into_any(),
    };
    Ok(obj.bind(py).cast::<PyData>()?.clone().unbind())
}

pub(crate) fn set_writeable(arr: &Bound<'_, PyAny>, on: bool) {
    if let Ok(a) = arr.cast::<numpy::PyUntypedArray>() {
        // SAFETY: the array object is alive (we hold a reference); only its flags change.
        unsafe {
            let p = a.as_array_ptr();
            if on {
                (*p).fields.flags |= NPY_ARRAY_WRITEABLE;
            } else {
                (*p).fields.flags &= !NPY_ARRAY_WRITEABLE;
            }
        }
    }
}

/// A Data value as Python sees it: containers as numpy arrays (writeable or not), the others
/// as Python scalars and strings.
fn field_value_to_py<'py>(py: Python<'py>, kind: DataKind, v: &Value, writeable: bool) -> PyResult<Bound<'py, PyAny>> {
    if is_container(kind) {
        let a = value_array(py, kind, v)?;
        set_writeable(&a, writeable);
        Ok(a)
    } else {
        scalar_to_py(py, v)
    }
}

/// A numpy array of a value's numbers, shaped as SOFA shapes it (`(n, k)` for lists of
/// k-tuples, `(k,)` for one fixed vector, `(n,)` for plain lists).
fn value_array<'py>(py: Python<'py>, kind: DataKind, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    let rows = |arity: usize, len: usize| -> Option<(usize, usize)> {
        match kind {
            DataKind::Coords | DataKind::Derivs | DataKind::RealTuples(_) | DataKind::IndexTuples(_) => Some((len / arity.max(1), arity)),
            _ => None,
        }
    };
    Ok(match v {
        Value::Reals { arity, v } => {
            let a = PyArray1::from_slice(py, v);
            match rows(*arity, v.len()) {
                Some(shape) => a.reshape(shape)?.into_any(),
                None => a.into_any(),
            }
        }
        Value::Indices { arity, v } => {
            // SOFA's indices are 32-bit (`int32` arrays).
            let v32: Vec<i32> = v.iter().map(|&i| i as i32).collect();
            let a = PyArray1::from_vec(py, v32);
            match rows(*arity, v.len()) {
                Some(shape) => a.reshape(shape)?.into_any(),
                None => a.into_any(),
            }
        }
        other => scalar_to_py(py, other)?,
    })
}

/// Reads the value of a Data as Python sees it through `.value`.
fn read_value<'py>(py: Python<'py>, d: &Bound<'py, PyData>, writeable: bool) -> PyResult<Bound<'py, PyAny>> {
    let p = place(py, &d.borrow())?;
    if let Place::Field(cell, id, i) = &p {
        crate::engine::refresh_sources(py, cell, *id, *i)?;
    }
    let name = d.borrow().name.clone();
    match &p {
        Place::Node(cell, id) => {
            let v = with_scene(py, cell, |s| node_data_value(s, *id, &name))?
                .ok_or_else(|| PyAttributeError::new_err(format!("no node Data '{name}'")))?;
            let kind = node_data_kind(&name);
            field_value_to_py(py, kind, &v, writeable)
        }
        Place::NodeField(cell, id, i) => {
            // As SOFA reads a Data: a linked one takes its parent's value first.
            let (kind, v) = with_scene(py, cell, |s| {
                s.update_data_if_dirty(DataLinkTarget::node(*id, *i));
                let f = &s.node(*id).data.fields[*i];
                (f.decl.kind, f.value.clone())
            })?;
            field_value_to_py(py, kind, &v, writeable)
        }
        Place::Field(cell, id, i) => {
            // A state vector: a view on the store's memory, no copy.
            let view = with_scene(py, cell, |s| {
                state_vector(s, *id, *i).map(|(st, vid)| {
                    let state = s.store.get_mut(st);
                    let k = state.elem_size(vid.kind);
                    let n = state.size;
                    let buf = state.write(vid);
                    (buf.as_mut_ptr(), n, k)
                })
            })?;
            if let Some((ptr, n, k)) = view {
                // SAFETY: the buffer belongs to the scene, which the cell (the array's base
                // object) keeps alive. As with SOFA's views, a later resize of the state (a
                // topological change, a longer array assigned) leaves this view behind.
                let arr = unsafe {
                    let v = ArrayView2::from_shape_ptr((n, k), ptr as *const f64);
                    PyArray2::borrow_from_array(&v, cell.bind(py).clone().into_any())
                }
                .into_any();
                set_writeable(&arr, writeable);
                return Ok(arr);
            }
            let (kind, v) = with_scene(py, cell, |s| {
                let f = &s.entry(*id).data.fields[*i];
                (f.decl.kind, linked_value(s, DataLinkTarget::component(*id, *i), 0))
            })?;
            field_value_to_py(py, kind, &v, writeable)
        }
    }
}

/// The value of a component's Data as a read sees it: a linked Data shows its parent's current
/// value (SOFA updates a Data from its parent when it is read). Nothing is written: the engine
/// pulls the linked values of components itself, once per step, and tells the components whose
/// inputs changed (a pull here would hide the change from them).
fn linked_value(s: &Scene, at: DataLinkTarget, depth: usize) -> Value {
    let own = || s.read_data_at(at).unwrap_or(Value::Bool(false));
    let Some(data) = s.data_set(at.holder) else { return own() };
    let f = &data.fields[at.field];
    match f.link {
        Some(l) if depth < 64 && s.data_field(l).is_some() => {
            let parent = linked_value(s, l, depth + 1);
            settee_core::data::convert_value(&parent, f.decl.kind, data.arity(), &f.value).unwrap_or_else(own)
        }
        _ => own(),
    }
}

/// The value as SOFA's text (`getValueString`).
pub fn value_string(d: &Bound<'_, PyData>) -> PyResult<String> {
    let py = d.py();
    let p = place(py, &d.borrow())?;
    if let Place::Field(cell, id, i) = &p {
        crate::engine::refresh_sources(py, cell, *id, *i)?;
    }
    let name = d.borrow().name.clone();
    match p {
        Place::Node(cell, id) => Ok(with_scene(py, &cell, |s| node_data_value(s, id, &name).map(|v| print_value(&v)).unwrap_or_default())?),
        Place::NodeField(cell, id, i) => with_scene(py, &cell, |s| {
            s.update_data_if_dirty(DataLinkTarget::node(id, i));
            print_value(&s.node(id).data.fields[i].value)
        }),
        Place::Field(cell, id, i) => with_scene(py, &cell, |s| print_value(&linked_value(s, DataLinkTarget::component(id, i), 0))),
    }
}

/// Writes a Data from a Python value with SOFA's assignment rules (spec §4.5).
pub fn set_value(d: &Bound<'_, PyData>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = d.py();
    let p = place(py, &d.borrow())?;
    let name = d.borrow().name.clone();
    // A link path or an `@path.data` string makes the Data follow another one.
    if let Ok(l) = value.cast::<LinkPath>() {
        if let Some(target) = l.get().target.as_ref().map(|t| t.bind(py)).and_then(|t| t.cast::<PyData>().ok()) {
            return set_parent_data(d, target);
        }
        let path = l.get().path.clone();
        return set_parent_path(py, &p, &path);
    }
    // A Data given as a value: its current value (a DataContainer's array).
    let value = match value.cast::<PyData>() {
        Ok(other) => read_value(py, other, false)?,
        Err(_) => value.clone(),
    };
    let kind = kind_of(py, &p, &name)?;
    if let Ok(s) = value.cast::<PyString>() {
        let s = s.to_str()?;
        if s.starts_with('@') && !matches!(kind, DataKind::Str | DataKind::FileName) {
            return set_parent_path(py, &p, s);
        }
    }
    let text = if crate::convert::is_ndarray(&value) {
        check_array(py, &p, kind, &value)?;
        to_sofa_text(&value)?
    } else if is_container(kind) && (value.cast::<PyList>().is_ok() || value.cast::<pyo3::types::PyTuple>().is_ok()) {
        to_sofa_text(&value)?
    } else {
        assignment_text(kind, &name, &value)?
    };
    match p {
        Place::Node(cell, id) => match with_scene(py, &cell, |s| set_node_data(s, id, &name, &text))? {
            Ok(_) => Ok(()),
            Err(e) => Err(PyValueError::new_err(e)),
        },
        Place::NodeField(cell, id, i) => {
            let r = with_scene(py, &cell, |s| {
                let field = s.node(id).data.fields[i].decl.name;
                s.node_mut(id).data.write_text(field, &text).map(|_| ()).map_err(|e| format!("Node '{}': {e}", s.node(id).name))
            })?;
            r.map_err(PyValueError::new_err)
        }
        Place::Field(cell, id, i) => {
            let r = with_scene(py, &cell, |s| -> Result<(), String> {
                let arity = s.entry(id).data.arity();
                if let Some((st, vid)) = state_vector(s, id, i) {
                    let kind = s.entry(id).data.fields[i].decl.kind;
                    let out = settee_core::data::parse_value(kind, arity, &text, &Value::Reals { arity: 1, v: Vec::new() });
                    let Value::Reals { v, .. } = out.value else { return Err(format!("'{text}' is not a list of numbers")) };
                    let state = s.store.get_mut(st);
                    let k = state.elem_size(vid.kind);
                    if v.len() % k != 0 {
                        return Err(format!("{} numbers do not make whole elements of {k}", v.len()));
                    }
                    if v.len() / k != state.size {
                        state.resize(v.len() / k);
                    }
                    state.write(vid).copy_from_slice(&v);
                    return Ok(());
                }
                let e = s.entry_mut(id);
                let label = e.label();
                match e.data.write_text(&name, &text) {
                    Ok(_) => {
                        if name == "name" {
                            e.name = text.clone();
                        }
                        Ok(())
                    }
                    Err(err) => Err(format!("{label}: {err}")),
                }
            })?;
            r.map_err(PyValueError::new_err)
        }
    }
}

/// SOFA's checks of an array assigned to a container Data: same number of dimensions, same
/// width, a float array (an integer array into a float Data is refused).
fn check_array(py: Python<'_>, p: &Place, kind: DataKind, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let ndim: usize = value.getattr("ndim")?.extract()?;
    let dtype: String = value.getattr("dtype")?.getattr("kind")?.extract()?;
    let current = match p {
        Place::Field(cell, id, i) => Some(with_scene(py, cell, |s| s.read_data(*id, *i))?),
        Place::NodeField(cell, id, i) => Some(with_scene(py, cell, |s| s.node(*id).data.fields[*i].value.clone())?),
        Place::Node(..) => None,
    };
    let want_ndim = match kind {
        DataKind::Coords | DataKind::Derivs | DataKind::RealTuples(_) | DataKind::IndexTuples(_) => 2,
        _ => 1,
    };
    if ndim != want_ndim {
        return Err(PyTypeError::new_err("Invalid dimension"));
    }
    let float_data = !matches!(kind, DataKind::Indices | DataKind::IndexTuples(_));
    if float_data && dtype != "f" {
        return Err(PyRuntimeError::new_err(format!("SetAttrFromArray :: unsupported fileformat '{dtype}'")));
    }
    if let (2, Some(Value::Reals { arity, .. } | Value::Indices { arity, .. })) = (ndim, &current) {
        let shape: Vec<usize> = value.getattr("shape")?.extract()?;
        if shape[1] != *arity {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "the array's rows have {} values, the Data's {arity}: it can only be resized on the first dimension",
                shape[1]
            )));
        }
    }
    Ok(())
}

/// Makes the Data at `p` follow the Data named by `path` (`@path/to/object.data`, `@/node.data`),
/// resolved from the Data's owner.
fn set_parent_path(py: Python<'_>, p: &Place, path: &str) -> PyResult<()> {
    let child = p.linkable("cannot be linked")?;
    let cell = p.cell();
    let text = path.trim_start_matches('@');
    if settee_core::factory::split_data_link(text).is_none() {
        return Err(PyRuntimeError::new_err(format!("'{path}' does not name a Data (@path/to/object.data)")));
    }
    let r = with_scene(py, cell, |s| -> Result<(), String> {
        let (node, owner) = match child.holder {
            DataHolder::Component(c) => (s.entry(c).node, Some(c)),
            DataHolder::Node(n) => (n, None),
        };
        let parent = s.resolve_data_path(node, text, owner).ok_or_else(|| format!("No datafield found with path {path}"))?;
        s.set_data_parent(child, parent, path).map_err(|e| e.0.message.clone())
    })?;
    r.map_err(PyValueError::new_err)?;
    cell.bind(py).borrow_mut().outside_parents.remove(&child);
    Ok(())
}

/// `d.setParent(parent)`, `d.value = parent.linkpath`: the Data `child` follows the Data
/// `parent`. A parent of the same scene is linked by its place in the scene; one of another
/// scene (another root node), which the scene's links cannot name, through its Python object
/// ([`OutsideParent`]): its value is copied now and whenever the child is updated.
pub fn set_parent_data(child: &Bound<'_, PyData>, parent: &Bound<'_, PyData>) -> PyResult<()> {
    let py = child.py();
    let p = place(py, &child.borrow())?;
    let q = place(py, &parent.borrow())?;
    let c = p.linkable("cannot be linked")?;
    let pt = q.linkable("cannot be a link's parent")?;
    let text = PyData::getLinkPath(parent)?;
    if q.cell().is(p.cell()) {
        with_scene(py, p.cell(), |s| s.set_data_parent(c, pt, &text))?.map_err(|e| PyValueError::new_err(e.0.message.clone()))?;
        p.cell().bind(py).borrow_mut().outside_parents.remove(&c);
        return Ok(());
    }
    let seen = with_scene(py, q.cell(), |s| s.version_at(pt))?;
    set_value(child, parent.as_any())?;
    with_scene(py, p.cell(), |s| {
        if let Some(f) = s.data_set_mut(c.holder).and_then(|d| d.fields.get_mut(c.field)) {
            f.link = None;
            f.link_text = Some(text);
            f.is_set = true;
        }
    })?;
    p.cell().bind(py).borrow_mut().outside_parents.insert(c, OutsideParent { data: parent.clone().unbind(), seen });
    Ok(())
}

/// Whether `d` is a Data of a scene other than `cell`'s (false when it has no scene yet).
pub fn of_other_scene(d: &Bound<'_, PyData>, cell: &Py<SceneCell>) -> bool {
    place(d.py(), &d.borrow()).is_ok_and(|p| !p.cell().is(cell))
}

/// A parent of another scene, and its version when last copied and now (`None`: gone).
struct OutsideState {
    parent: Py<PyData>,
    seen: Option<u64>,
    now: Option<u64>,
}

impl OutsideState {
    fn dirty(&self) -> bool {
        self.now.is_some() && self.seen != self.now
    }
}

/// The parent of another scene that `at` of `cell` follows.
fn outside_parent(py: Python<'_>, cell: &Py<SceneCell>, at: DataLinkTarget) -> PyResult<Option<OutsideState>> {
    let Some((data, seen)) = cell.bind(py).borrow().outside_parents.get(&at).map(|o| (o.data.clone_ref(py), o.seen)) else { return Ok(None) };
    let now = match place(py, &data.bind(py).borrow()) {
        Ok(q) => match q.target() {
            Some(t) => with_scene(py, q.cell(), |s| s.version_at(t))?,
            None => None,
        },
        Err(_) => None,
    };
    Ok(Some(OutsideState { parent: data, seen, now }))
}

/// SOFA's `isDirty`.
fn is_dirty(d: &Bound<'_, PyData>) -> PyResult<bool> {
    let py = d.py();
    let p = place(py, &d.borrow())?;
    let Some(at) = p.target() else { return Ok(false) };
    if let Some(o) = outside_parent(py, p.cell(), at)? {
        return Ok(o.dirty());
    }
    with_scene(py, p.cell(), |s| s.data_is_dirty(at))
}

/// SOFA's `updateIfDirty`; returns whether the Data was dirty.
fn update_if_dirty(d: &Bound<'_, PyData>) -> PyResult<bool> {
    let py = d.py();
    let p = place(py, &d.borrow())?;
    let Some(at) = p.target() else { return Ok(false) };
    if let Some(o) = outside_parent(py, p.cell(), at)? {
        if !o.dirty() {
            return Ok(false);
        }
        set_value(d, o.parent.bind(py).as_any())?;
        if let Some(entry) = p.cell().bind(py).borrow_mut().outside_parents.get_mut(&at) {
            entry.seen = o.now;
        }
        return Ok(true);
    }
    with_scene(py, p.cell(), |s| {
        let dirty = s.data_is_dirty(at);
        s.update_data_if_dirty(at);
        dirty
    })
}

/// A Data flag (`persistent`, `read_only`); a node's own Data have SOFA's defaults.
fn flag(d: &Bound<'_, PyData>, get: fn(&DataField) -> bool, default: bool) -> PyResult<bool> {
    let py = d.py();
    let p = place(py, &d.borrow())?;
    let Some(at) = p.target() else { return Ok(default) };
    with_scene(py, p.cell(), |s| s.data_field(at).map_or(default, get))
}

fn set_flag(d: &Bound<'_, PyData>, set: fn(&mut DataField, bool), on: bool) -> PyResult<()> {
    let py = d.py();
    let p = place(py, &d.borrow())?;
    let at = p.linkable("keep no flags")?;
    with_scene(py, p.cell(), |s| {
        if let Some(f) = s.data_set_mut(at.holder).and_then(|d| d.fields.get_mut(at.field)) {
            set(f, on);
        }
    })
}

/// `with d.writeableArray() as a:` — a writeable view for the block's length.
#[pyclass(module = "Sofa.Core", name = "DataContainerContext", unsendable)]
pub struct WriteContext {
    data: Py<PyData>,
    wrapper: Option<Py<PyAny>>,
    array: Option<Py<PyAny>>,
    /// What the wrapper made of the array (a `Sofa.PyTypes` view): read-only again at exit too,
    /// since a view keeps its own writeable flag.
    wrapped: Option<Py<PyAny>>,
}

#[pymethods]
impl WriteContext {
    fn __enter__(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let a = read_value(py, self.data.bind(py), true)?;
        self.array = Some(a.clone().unbind());
        match &self.wrapper {
            Some(w) => {
                let wrapped = w.bind(py).call1((a,))?.unbind();
                self.wrapped = Some(wrapped.clone_ref(py));
                Ok(wrapped)
            }
            None => Ok(a.unbind()),
        }
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        let Some(a) = self.array.take() else { return Ok(false) };
        let a = a.bind(py);
        set_writeable(a, false);
        if let Some(w) = self.wrapped.take() {
            set_writeable(w.bind(py), false);
        }
        let d = self.data.bind(py);
        let p = place(py, &d.borrow())?;
        // A view on the store was written in place: tell the readers. A copy is written back.
        let in_store = match &p {
            Place::Field(cell, id, i) => with_scene(py, cell, |s| {
                let sv = state_vector(s, *id, *i);
                if let Some((st, _)) = sv {
                    s.store.get_mut(st).revision += 1;
                }
                sv.is_some()
            })?,
            Place::Node(..) | Place::NodeField(..) => false,
        };
        if !in_store {
            set_writeable(a, true);
            let r = set_value(d, a);
            set_writeable(a, false);
            r?;
        }
        Ok(false)
    }
}

#[pymethods]
impl PyData {
    #[getter]
    fn get_value<'py>(slf: &Bound<'py, PyData>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf, false)
    }

    #[setter]
    fn set_value(slf: &Bound<'_, PyData>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        set_value(slf, value)
    }

    fn getValue<'py>(slf: &Bound<'py, PyData>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf, false)
    }

    fn setValue(slf: &Bound<'_, PyData>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        set_value(slf, value)
    }

    fn array<'py>(slf: &Bound<'py, PyData>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf, false)
    }

    fn toList<'py>(slf: &Bound<'py, PyData>) -> PyResult<Bound<'py, PyAny>> {
        let v = read_value(slf.py(), slf, false)?;
        if v.hasattr("tolist")? {
            v.call_method0("tolist")
        } else {
            Ok(v)
        }
    }

    #[pyo3(signature = (wrapper = None))]
    fn writeableArray(slf: &Bound<'_, PyData>, wrapper: Option<Py<PyAny>>) -> WriteContext {
        WriteContext { data: slf.clone().unbind(), wrapper, array: None, wrapped: None }
    }

    #[pyo3(signature = (wrapper = None))]
    fn writeable(slf: &Bound<'_, PyData>, wrapper: Option<Py<PyAny>>) -> WriteContext {
        Self::writeableArray(slf, wrapper)
    }

    fn getName(&self) -> String {
        self.name.clone()
    }

    fn setName(slf: &Bound<'_, PyData>, name: &str) -> PyResult<()> {
        rename_data(slf, name)
    }

    fn getValueString(slf: &Bound<'_, PyData>) -> PyResult<String> {
        value_string(slf)
    }

    fn getValueTypeString(slf: &Bound<'_, PyData>) -> PyResult<String> {
        let py = slf.py();
        let name = slf.borrow().name.clone();
        let p = place(py, &slf.borrow())?;
        let kind = kind_of(py, &p, &name)?;
        let template = match &p {
            Place::Field(cell, id, _) => with_scene(py, cell, |s| s.entry(*id).template.clone())?,
            Place::Node(..) | Place::NodeField(..) => String::new(),
        };
        Ok(sofa_type_name(kind, &template))
    }

    fn typeName(slf: &Bound<'_, PyData>) -> PyResult<String> {
        Self::getValueTypeString(slf)
    }

    fn getOwner(&self, py: Python<'_>) -> Py<PyAny> {
        match &self.owner {
            DataOwner::Node(n) => n.clone_ref(py).into_any(),
            DataOwner::Object(o) => o.clone_ref(py).into_any(),
        }
    }

    fn getPathName(slf: &Bound<'_, PyData>) -> PyResult<String> {
        let py = slf.py();
        let name = slf.borrow().name.clone();
        match place(py, &slf.borrow())? {
            Place::Node(cell, id) => with_scene(py, &cell, |s| {
                let p = node_path_name(s, id);
                if p == "/" {
                    format!("/.{name}")
                } else {
                    format!("{p}.{name}")
                }
            }),
            Place::NodeField(cell, id, _) => with_scene(py, &cell, |s| {
                let p = node_path_name(s, id);
                if p == "/" {
                    format!("/.{name}")
                } else {
                    format!("{p}.{name}")
                }
            }),
            Place::Field(cell, id, _) => with_scene(py, &cell, |s| format!("{}.{name}", object_path_name(s, id))),
        }
    }

    fn getLinkPath(slf: &Bound<'_, PyData>) -> PyResult<String> {
        Ok(format!("@{}", Self::getPathName(slf)?))
    }

    #[getter]
    fn linkpath(slf: &Bound<'_, PyData>) -> PyResult<LinkPath> {
        Ok(LinkPath { path: Self::getLinkPath(slf)?, target: Some(slf.clone().into_any().unbind()) })
    }

    /// Parses SOFA text into the Data; false when it does not read.
    fn read(slf: &Bound<'_, PyData>, text: &str) -> PyResult<bool> {
        let s = PyString::new(slf.py(), text);
        Ok(set_value(slf, s.as_any()).is_ok())
    }

    fn isSet(slf: &Bound<'_, PyData>) -> PyResult<bool> {
        let py = slf.py();
        match place(py, &slf.borrow())? {
            Place::Node(..) => Ok(true),
            Place::NodeField(cell, id, i) => with_scene(py, &cell, |s| s.node(id).data.fields[i].is_set),
            Place::Field(cell, id, i) => with_scene(py, &cell, |s| s.entry(id).data.fields[i].is_set),
        }
    }

    fn hasParent(slf: &Bound<'_, PyData>) -> PyResult<bool> {
        let py = slf.py();
        let p = place(py, &slf.borrow())?;
        let Some(at) = p.target() else { return Ok(false) };
        if p.cell().bind(py).borrow().outside_parents.contains_key(&at) {
            return Ok(true);
        }
        with_scene(py, p.cell(), |s| s.data_field(at).is_some_and(|f| f.link.is_some()))
    }

    fn getParentPath(slf: &Bound<'_, PyData>) -> PyResult<Option<String>> {
        let py = slf.py();
        let p = place(py, &slf.borrow())?;
        let Some(at) = p.target() else { return Ok(None) };
        with_scene(py, p.cell(), |s| s.data_field(at).and_then(|f| f.link_text.clone()))
    }

    /// The Data this one is linked to, or `None`.
    fn getParent(slf: &Bound<'_, PyData>) -> PyResult<Option<Py<PyData>>> {
        let py = slf.py();
        let p = place(py, &slf.borrow())?;
        let Some(at) = p.target() else { return Ok(None) };
        let cell = p.cell();
        if let Some(o) = cell.bind(py).borrow().outside_parents.get(&at) {
            return Ok(Some(o.data.clone_ref(py)));
        }
        let link = with_scene(py, cell, |s| {
            let l = s.data_field(at)?.link?;
            Some((l.holder, s.data_field(l)?.decl.name))
        })?;
        let Some((holder, field)) = link else { return Ok(None) };
        let owner = match holder {
            DataHolder::Component(c) => DataOwner::Object(crate::object::wrap_object(py, cell, c)?.bind(py).cast::<PyObj>()?.clone().unbind()),
            DataHolder::Node(n) => DataOwner::Node(crate::node::wrap_node(py, cell, n)?.bind(py).cast::<PyNode>()?.clone().unbind()),
        };
        Ok(Some(make(py, owner, field)?))
    }

    fn setParent(slf: &Bound<'_, PyData>, parent: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        if let Ok(d) = parent.cast::<PyData>() {
            return set_parent_data(slf, d);
        }
        let p = place(py, &slf.borrow())?;
        let path = if let Ok(l) = parent.cast::<LinkPath>() {
            if let Some(d) = l.get().target.as_ref().map(|t| t.bind(py)).and_then(|t| t.cast::<PyData>().ok()) {
                return set_parent_data(slf, d);
            }
            return Err(PyRuntimeError::new_err("The provided linkpath is not containing a linkable data"));
        } else {
            parent.extract::<String>()?
        };
        set_parent_path(py, &p, &path)
    }

    /// SOFA's `hasChanged`: true when the Data follows another one that changed since it was
    /// last updated (it is updated now).
    fn hasChanged(slf: &Bound<'_, PyData>) -> PyResult<bool> {
        update_if_dirty(slf)
    }

    /// SOFA's `isDirty`: the Data follows another one whose value changed since it was last
    /// updated (directly or further up the links).
    fn isDirty(slf: &Bound<'_, PyData>) -> PyResult<bool> {
        is_dirty(slf)
    }

    /// Takes the parent's value when the Data is dirty.
    fn updateIfDirty(slf: &Bound<'_, PyData>) -> PyResult<()> {
        update_if_dirty(slf).map(|_| ())
    }

    fn isPersistent(slf: &Bound<'_, PyData>) -> PyResult<bool> {
        flag(slf, |f| f.persistent, true)
    }

    fn setPersistent(slf: &Bound<'_, PyData>, on: bool) -> PyResult<()> {
        set_flag(slf, |f, on| f.persistent = on, on)
    }

    /// SOFA's read-only flag, a hint for editors: as in SOFA, writes are not refused.
    fn isReadOnly(slf: &Bound<'_, PyData>) -> PyResult<bool> {
        flag(slf, |f| f.read_only, false)
    }

    fn setReadOnly(slf: &Bound<'_, PyData>, on: bool) -> PyResult<()> {
        set_flag(slf, |f, on| f.read_only = on, on)
    }

    fn isRequired(&self) -> bool {
        false
    }

    fn getHelp(slf: &Bound<'_, PyData>) -> PyResult<String> {
        let py = slf.py();
        match place(py, &slf.borrow())? {
            Place::Node(..) => Ok(String::new()),
            Place::NodeField(cell, id, i) => with_scene(py, &cell, |s| s.node(id).data.fields[i].decl.help.to_string()),
            Place::Field(cell, id, i) => with_scene(py, &cell, |s| s.entry(id).data.fields[i].decl.help.to_string()),
        }
    }

    fn __eq__(slf: &Bound<'_, PyData>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Ok(o) = other.cast::<PyData>() {
            return Ok(Self::getLinkPath(slf)? == Self::getLinkPath(o)?);
        }
        read_value(slf.py(), slf, false)?.eq(other)
    }

    fn __repr__(slf: &Bound<'_, PyData>) -> PyResult<String> {
        Ok(read_value(slf.py(), slf, false)?.repr()?.to_string())
    }

    fn __str__(slf: &Bound<'_, PyData>) -> PyResult<String> {
        Ok(read_value(slf.py(), slf, false)?.str()?.to_string())
    }

    fn __float__(slf: &Bound<'_, PyData>) -> PyResult<f64> {
        read_value(slf.py(), slf, false)?.extract()
    }

    fn __int__(slf: &Bound<'_, PyData>) -> PyResult<i64> {
        read_value(slf.py(), slf, false)?.extract()
    }

    fn __bool__(slf: &Bound<'_, PyData>) -> PyResult<bool> {
        read_value(slf.py(), slf, false)?.is_truthy()
    }
}

/// SOFA's type name of a Data (`getValueTypeString`); `template` is its component's
/// (`vector<Vec3d>` for the positions of a `Vec3d` state).
pub fn sofa_type_name(kind: DataKind, template: &str) -> String {
    let vec_template = template.starts_with("Vec");
    match kind {
        DataKind::Coords if !template.is_empty() => format!("vector<{template}>"),
        DataKind::Coord if !template.is_empty() => template.to_string(),
        DataKind::Derivs if vec_template => format!("vector<{template}>"),
        DataKind::Deriv if vec_template => template.to_string(),
        DataKind::Bool => "bool".into(),
        DataKind::Int => "int".into(),
        DataKind::Real => "double".into(),
        DataKind::Str | DataKind::FileName | DataKind::Options(_) => "string".into(),
        DataKind::Fixed(n) => format!("Vec{n}d"),
        DataKind::Reals => "vector<double>".into(),
        DataKind::RealTuples(k) => format!("vector<Vec{k}d>"),
        DataKind::Indices => "vector<unsigned int>".into(),
        DataKind::IndexTuples(2) => "vector<Edge>".into(),
        DataKind::IndexTuples(3) => "vector<Triangle>".into(),
        DataKind::IndexTuples(k) => format!("vector<fixed_array<unsigned int,{k}>>"),
        DataKind::Coords => "vector<Coord>".into(),
        DataKind::Derivs => "vector<Deriv>".into(),
        DataKind::Coord => "Coord".into(),
        DataKind::Deriv => "Deriv".into(),
        DataKind::Strings => "vector<string>".into(),
        DataKind::Color => "RGBAColor".into(),
        DataKind::BoundingBox => "BoundingBox".into(),
    }
}

#[pymethods]
impl DataContainer {
    fn __len__(slf: &Bound<'_, DataContainer>) -> PyResult<usize> {
        read_value(slf.py(), slf.as_super(), false)?.len()
    }

    #[getter]
    fn shape<'py>(slf: &Bound<'py, DataContainer>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf.as_super(), false)?.getattr("shape")
    }

    #[getter]
    fn ndim<'py>(slf: &Bound<'py, DataContainer>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf.as_super(), false)?.getattr("ndim")
    }

    #[getter]
    fn size<'py>(slf: &Bound<'py, DataContainer>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf.as_super(), false)?.getattr("size")
    }

    fn __getitem__<'py>(slf: &Bound<'py, DataContainer>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf.as_super(), false)?.get_item(key)
    }

    fn __setitem__(slf: &Bound<'_, DataContainer>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let ctx = PyData::writeableArray(slf.as_super(), None);
        let ctx = Bound::new(slf.py(), ctx)?;
        let a = ctx.call_method0("__enter__")?;
        let r = a.set_item(key, value);
        ctx.call_method1("__exit__", (slf.py().None(), slf.py().None(), slf.py().None()))?;
        r
    }

    fn __iter__<'py>(slf: &Bound<'py, DataContainer>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf.as_super(), false)?.try_iter().map(|i| i.into_any())
    }

    fn __add__<'py>(slf: &Bound<'py, DataContainer>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf.as_super(), false)?.add(other)
    }

    fn __sub__<'py>(slf: &Bound<'py, DataContainer>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf.as_super(), false)?.sub(other)
    }

    fn __mul__<'py>(slf: &Bound<'py, DataContainer>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf.as_super(), false)?.mul(other)
    }

    fn __iadd__(slf: &Bound<'_, DataContainer>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let new = read_value(slf.py(), slf.as_super(), false)?.add(other)?;
        set_value(slf.as_super(), &new)
    }

    fn __isub__(slf: &Bound<'_, DataContainer>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let new = read_value(slf.py(), slf.as_super(), false)?.sub(other)?;
        set_value(slf.as_super(), &new)
    }

    fn __imul__(slf: &Bound<'_, DataContainer>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let new = read_value(slf.py(), slf.as_super(), false)?.mul(other)?;
        set_value(slf.as_super(), &new)
    }

    fn __str__(slf: &Bound<'_, DataContainer>) -> PyResult<String> {
        let d = slf.as_super();
        Ok(format!("Sofa.Core.DataContainer <name={}, address={:p}>", d.borrow().name, slf.as_ptr()))
    }
}

#[pymethods]
impl DataString {
    fn __len__(slf: &Bound<'_, DataString>) -> PyResult<usize> {
        read_value(slf.py(), slf.as_super(), false)?.len()
    }

    fn __getitem__<'py>(slf: &Bound<'py, DataString>, i: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf.as_super(), false)?.get_item(i)
    }

    fn __repr__(slf: &Bound<'_, DataString>) -> PyResult<String> {
        read_value(slf.py(), slf.as_super(), false)?.extract()
    }

    fn __str__(slf: &Bound<'_, DataString>) -> PyResult<String> {
        read_value(slf.py(), slf.as_super(), false)?.extract()
    }
}

#[pymethods]
impl DataVectorString {
    fn __len__(slf: &Bound<'_, DataVectorString>) -> PyResult<usize> {
        read_value(slf.py(), slf.as_super(), false)?.len()
    }

    fn __getitem__<'py>(slf: &Bound<'py, DataVectorString>, i: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        read_value(slf.py(), slf.as_super(), false)?.get_item(i)
    }
}

impl PyData {
    pub fn owner_ref(&self, py: Python<'_>) -> DataOwner {
        self.owner.clone_ref(py)
    }
}

/// The Data kind of an `addData` type name (spec §4.8: SofaPython3's registered names), or
/// `None` for a name that is not one of them.
fn kind_of_type_name(t: &str) -> Option<DataKind> {
    let vec_n = |s: &str| -> Option<usize> {
        let n = s.strip_prefix("Vec")?.strip_suffix(['d', 'f'])?;
        n.parse().ok().filter(|n| (2..=6).contains(n))
    };
    let mat_n = |s: &str| -> Option<usize> {
        match s.strip_suffix(['d', 'f'])? {
            "Mat2x2" => Some(4),
            "Mat3x3" => Some(9),
            "Mat3x4" => Some(12),
            "Mat4x4" => Some(16),
            _ => None,
        }
    };
    let element = |s: &str| -> Option<usize> {
        match s {
            "Edge" => Some(2),
            "Triangle" => Some(3),
            "Quad" | "Tetra" => Some(4),
            "Penta" => Some(6),
            "Hexa" => Some(8),
            _ => None,
        }
    };
    if let Some(inner) = t.strip_prefix("vector<").and_then(|r| r.strip_suffix('>')) {
        return match inner {
            "string" => Some(DataKind::Strings),
            "float" | "double" => Some(DataKind::Reals),
            "int" | "bool" => Some(DataKind::Indices),
            _ => vec_n(inner).or_else(|| mat_n(inner)).map(DataKind::RealTuples).or_else(|| element(inner).map(DataKind::IndexTuples)),
        };
    }
    match t {
        "string" | "Link" | "PrefabLink" => Some(DataKind::Str),
        "float" | "double" => Some(DataKind::Real),
        "bool" => Some(DataKind::Bool),
        "int" => Some(DataKind::Int),
        "Quatd" | "Quatf" | "Quat" => Some(DataKind::Fixed(4)),
        "Rigid3d::Coord" | "Rigid3f::Coord" | "Rigid3::Coord" => Some(DataKind::Fixed(7)),
        "Rigid3d::VecCoord" | "Rigid3f::VecCoord" | "Rigid3::VecCoord" => Some(DataKind::RealTuples(7)),
        _ => vec_n(t).or_else(|| mat_n(t)).map(DataKind::Fixed).or_else(|| element(t).map(DataKind::Fixed)),
    }
}

const TYPE_NAMES: &str =
    "string float double bool int Vec2d…Vec6d Vec2f…Vec6f Mat2x2d Mat3x3d Mat3x4d Mat4x4d (and f) Edge Triangle Quad Tetra Hexa Penta \
Quatd Quatf Quat Rigid3d::Coord Rigid3d::VecCoord (and f) vector<string|float|double|bool|int> vector<Vec2d…Vec6f> vector<Mat…> \
vector<Edge|Triangle|Quad|Tetra|Hexa|Penta> Link PrefabLink";

/// The declaration of a Data added by a script. Declarations are `'static` in Settee's Data
/// sets; added ones are interned, so that a script adding the same Data to many objects
/// allocates one declaration.
fn added_decl(name: &str, kind: DataKind, help: &str) -> &'static settee_core::DataDecl {
    static DECLS: std::sync::Mutex<Vec<&'static settee_core::DataDecl>> = std::sync::Mutex::new(Vec::new());
    let mut decls = DECLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = decls.iter().find(|d| d.name == name && d.kind == kind && d.help == help) {
        return d;
    }
    let d: &'static settee_core::DataDecl = Box::leak(Box::new(settee_core::DataDecl {
        name: Box::leak(name.to_string().into_boxed_str()),
        aliases: &[],
        kind,
        default: "",
        help: Box::leak(help.to_string().into_boxed_str()),
    }));
    decls.push(d);
    d
}

/// `x.addData(name, value, default, help, group, type)` on a node or a component (spec §4.8).
pub fn add_data(
    owner: &Bound<'_, PyAny>,
    name: &str,
    value: Option<&Bound<'_, PyAny>>,
    default: Option<&Bound<'_, PyAny>>,
    help: &str,
    type_name: &str,
) -> PyResult<()> {
    let py = owner.py();
    check_added_name(name)?;
    let base = match crate::base::owner(owner) {
        Ok(b) => b,
        Err(_) if owner.cast::<PyObj>().is_ok() => return Err(PyRuntimeError::new_err("addData: the component was not added to a node yet")),
        Err(e) => return Err(e),
    };
    let cell = base.cell().clone_ref(py);
    // A Data of another scene (the component is not in a node yet): a copy now, a link once
    // the component joins that scene (`component::attach`).
    let foreign = match value.map(|v| v.cast::<PyData>()) {
        Some(Ok(d)) => match place(py, &d.borrow())? {
            Place::Node(c, _) | Place::Field(c, ..) | Place::NodeField(c, ..) => !c.is(&cell),
        },
        _ => false,
    };
    // A link (`"@path.data"` or a Data): the new Data takes its parent's type.
    let link = match value {
        _ if foreign => None,
        Some(v) if v.cast::<PyData>().is_ok() => Some(PyData::getLinkPath(v.cast::<PyData>()?)?),
        Some(v) if v.cast::<LinkPath>().is_ok() => Some(v.cast::<LinkPath>()?.borrow().path.clone()),
        Some(v) => v.extract::<String>().ok().filter(|s| s.starts_with('@')),
        None => None,
    };
    let kind = match &link {
        Some(path) => {
            let text = path.trim_start_matches('@');
            let no_field = || PyValueError::new_err(format!("No datafield found with path {path}"));
            settee_core::factory::split_data_link(text).ok_or_else(no_field)?;
            with_scene(py, &cell, |s| {
                let (node, me) = match &base {
                    crate::base::Owner::Object(_, id) => (s.entry(*id).node, Some(*id)),
                    crate::base::Owner::Node(_, n) => (*n, None),
                };
                let at = s.resolve_data_path(node, text, me)?;
                s.data_field(at).map(|f| f.decl.kind)
            })?
            .ok_or_else(no_field)?
        }
        None if foreign => {
            let src = value.expect("a foreign Data").cast::<PyData>()?;
            let p = place(py, &src.borrow())?;
            let n = src.borrow().name.clone();
            kind_of(py, &p, &n)?
        }
        None => {
            kind_of_type_name(type_name).ok_or_else(|| PyTypeError::new_err(format!("Invalid Type string: available types are\n{TYPE_NAMES}")))?
        }
    };
    if crate::base::has_data(owner, name)? {
        // SOFA warns and adds a second Data that lookups never reach; Settee refuses it.
        return Err(PyValueError::new_err(format!("Ambiguous creation of Data '{name}': there is already a Data of that name")));
    }
    let decl = added_decl(name, kind, help);
    with_scene(py, &cell, |s| {
        let data = match &base {
            crate::base::Owner::Object(_, id) => &mut s.entry_mut(*id).data,
            crate::base::Owner::Node(_, n) => &mut s.node_mut(*n).data,
        };
        let value = settee_core::data::default_value(kind, data.arity());
        data.fields.push(DataField::new(decl, value));
    })?;
    let d = make(py, crate::base::data_owner(owner)?, name)?;
    let d = d.bind(py);
    match (&link, value) {
        (Some(path), _) => set_parent_path(py, &place(py, &d.borrow())?, path)?,
        (None, Some(v)) if !v.is_none() => {
            set_value(d, v)?;
            if foreign {
                crate::component::remember_link(owner.cast::<PyObj>()?, name, v)?;
            }
        }
        _ => {
            // `value=None`: the default, and the Data stays "not set".
            if let Some(def) = default.filter(|d| !d.is_none()) {
                set_value(d, def)?;
                match place(py, &d.borrow())? {
                    Place::Field(cell, id, i) => with_scene(py, &cell, |s| s.entry_mut(id).data.fields[i].is_set = false)?,
                    Place::NodeField(cell, id, i) => with_scene(py, &cell, |s| s.node_mut(id).data.fields[i].is_set = false)?,
                    Place::Node(..) => {}
                }
            }
        }
    }
    Ok(())
}

/// Renames a Data (`d.setName(n)`): one a script added, or one of a component that the
/// component itself does not read by name.
fn rename_data(d: &Bound<'_, PyData>, new: &str) -> PyResult<()> {
    let py = d.py();
    let p = place(py, &d.borrow())?;
    let refuse = || PyRuntimeError::new_err(format!("Data '{}' is read by its owner under that name: Settee cannot rename it", d.borrow().name));
    match p {
        Place::Node(..) => return Err(refuse()),
        Place::NodeField(cell, id, i) => with_scene(py, &cell, |s| {
            let f = &mut s.node_mut(id).data.fields[i];
            f.decl = added_decl(new, f.decl.kind, f.decl.help);
        })?,
        Place::Field(cell, id, i) => {
            let ok = with_scene(py, &cell, |s| {
                let e = s.entry_mut(id);
                let decl = e.data.fields[i].decl;
                if e.class.data.iter().any(|t| t.iter().any(|c| std::ptr::eq(c, decl))) {
                    return false;
                }
                e.data.fields[i].decl = added_decl(new, decl.kind, decl.help);
                true
            })?;
            if !ok {
                return Err(refuse());
            }
        }
    }
    d.borrow_mut().name = new.to_string();
    Ok(())
}

/// The names `addData` refuses (they are the bindings' own attributes).
pub fn check_added_name(name: &str) -> PyResult<()> {
    if crate::node::PROTECTED.contains(&name) {
        return Err(PyValueError::new_err(format!("Cannot call addData with name {name}: Protected keyword")));
    }
    Ok(())
}
