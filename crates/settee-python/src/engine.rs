//! Engines written in Python: `Sofa.Core.DataEngine` (spec `python.md` §5.2).
//!
//! The script declares its inputs and outputs (`self.addInput(self.d_in)`,
//! `self.addOutput(self.d_out)`, usually in `init`). Its `update()` runs when an output is read
//! while an input changed since the last update (SOFA's lazy `DataEngine`): reading a Data from
//! Python first brings the Python engines it depends on up to date ([`refresh_sources`]); in a
//! step, Settee's live-Data pass tells the engine when a linked input changed
//! ([`Component::data_changed`]), as it tells Rust engines.

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use settee_core::role::Engine;
use settee_core::{component, Component, ComponentId, Declared, InitCtx, Scene, SimResult};

use crate::cell::{lend, with_scene, SceneCell};
use crate::data::PyData;
use crate::object::{obj_ref, PyObj};

/// A Python engine in the scene: it calls the instance; what the engine reads and writes is
/// kept on the instance ([`PyDataEngine`]).
#[component(markers = [Engine], data = {})]
#[derive(Default)]
pub struct PythonDataEngine {
    instance: Option<Py<PyAny>>,
}

impl Component for PythonDataEngine {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let me = cx.id;
        crate::component::call_defined(self.instance.as_ref(), cx.scene, me, "init");
        Ok(())
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        let Some(instance) = &self.instance else { return Ok(()) };
        Python::attach(|py| {
            let obj = instance.bind(py);
            if let Ok(obj) = obj.cast::<PyObj>() {
                let r = lend(cx.scene, || update_if_dirty(py, obj));
                if let Err(e) = r {
                    e.print(py);
                }
            }
        });
        Ok(())
    }
}

/// `Sofa.Core.DataEngine`: subclass it in the script and add an instance to a node.
#[pyclass(module = "Sofa.Core", name = "DataEngine", extends = PyObj, subclass, unsendable)]
pub struct PyDataEngine {
    inputs: Vec<String>,
    outputs: Vec<String>,
    /// The inputs' versions when `update()` last ran (`None`: never ran, the inputs count as
    /// changed, as SOFA's engines start dirty).
    seen: Option<Vec<u64>>,
    /// `update()` is running: reading its own outputs does not call it again.
    updating: bool,
}

/// The name of a Data of `engine` given to `addInput`/`addOutput`.
fn own_data_name(engine: &Bound<'_, PyDataEngine>, data: &Bound<'_, PyData>) -> PyResult<String> {
    let d = data.borrow();
    match &d.owner {
        crate::data::DataOwner::Object(o) if o.bind(engine.py()).is(engine.as_super()) => Ok(d.name.clone()),
        _ => Err(PyRuntimeError::new_err(format!("Data '{}' does not belong to this engine", d.name))),
    }
}

#[pymethods]
impl PyDataEngine {
    /// Takes any arguments, as a subclass's constructor may; `name` (and the other base Data)
    /// among the keywords are set, the others are the subclass's.
    #[new]
    #[pyo3(signature = (*_args, **_kw))]
    fn new(_args: &Bound<'_, PyTuple>, _kw: Option<&Bound<'_, PyDict>>) -> PyClassInitializer<Self> {
        PyObj { target: None, pending: Vec::new() }.initializer().add_subclass(PyDataEngine {
            inputs: Vec::new(),
            outputs: Vec::new(),
            seen: None,
            updating: false,
        })
    }

    #[pyo3(signature = (*_args, **kw))]
    fn __init__(slf: &Bound<'_, PyDataEngine>, _args: &Bound<'_, PyTuple>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        let base = slf.as_super();
        if base.borrow().target.is_some() {
            return Ok(());
        }
        crate::component::take_kwargs(&mut base.borrow_mut(), kw)?;
        let instance = base.clone().into_any().unbind();
        let comp = PythonDataEngine { instance: Some(instance) };
        crate::component::adopt(slf.py(), base, PythonDataEngine::CLASSES[0], Box::new(comp), None)
    }

    /// The base `init` does nothing (a subclass's own is called at the scene's init).
    fn init(&self) {}

    fn addInput(slf: &Bound<'_, PyDataEngine>, data: &Bound<'_, PyData>) -> PyResult<()> {
        let name = own_data_name(slf, data)?;
        let mut e = slf.borrow_mut();
        if !e.inputs.contains(&name) {
            e.inputs.push(name);
            e.seen = None;
        }
        Ok(())
    }

    fn addOutput(slf: &Bound<'_, PyDataEngine>, data: &Bound<'_, PyData>) -> PyResult<()> {
        let name = own_data_name(slf, data)?;
        let mut e = slf.borrow_mut();
        if !e.outputs.contains(&name) {
            e.outputs.push(name);
        }
        Ok(())
    }
}

/// Calls the engine's `update()` when one of its inputs changed since the last call (linked
/// inputs pulled first, the engines they come from brought up to date). An exception raised
/// by `update()` is reported as the engine's error, not raised (SofaPython3's
/// `executePython`); an engine without `update` is a `TypeError`, reported the same way.
fn update_if_dirty(py: Python<'_>, obj: &Bound<'_, PyObj>) -> PyResult<()> {
    let Ok(engine) = obj.cast::<PyDataEngine>() else { return Ok(()) };
    let Some((cell, id)) = obj_ref(obj) else { return Ok(()) };
    let inputs = {
        let e = engine.borrow();
        if e.updating {
            return Ok(());
        }
        e.inputs.clone()
    };
    let fields: Vec<usize> = with_scene(py, &cell, |s| inputs.iter().filter_map(|n| s.entry(id).data.index_of(n)).collect())?;
    for &f in &fields {
        refresh_sources(py, &cell, id, f)?;
    }
    let versions = with_scene(py, &cell, |s| {
        s.refresh_links(id);
        fields.iter().map(|&f| s.data_version(id, f).unwrap_or(0)).collect::<Vec<u64>>()
    })?;
    {
        let mut e = engine.borrow_mut();
        if e.seen.as_ref() == Some(&versions) {
            return Ok(());
        }
        e.seen = Some(versions);
        e.updating = true;
    }
    let r = match obj.getattr("update") {
        Ok(f) => f.call0().map(|_| ()),
        Err(_) => Err(PyTypeError::new_err(format!("{} has no update() method.", obj.call_method0("getName")?))),
    };
    engine.borrow_mut().updating = false;
    if let Err(e) = r {
        with_scene(py, &cell, |s| report(py, s, id, e))?;
    }
    Ok(())
}

fn report(py: Python<'_>, s: &mut Scene, id: ComponentId, e: PyErr) {
    crate::component::report_exception(py, s, id, "update", e);
}

/// Before Data `field` of component `id` is read from Python: the Python engines whose
/// outputs it is (or follows through links) run their `update()` if their inputs changed.
pub fn refresh_sources(py: Python<'_>, cell: &Py<SceneCell>, id: ComponentId, field: usize) -> PyResult<()> {
    // The Data and the ones it follows, nearest first.
    let chain = with_scene(py, cell, |s| {
        let chain = s.data_chain(settee_core::data::DataLinkTarget::component(id, field));
        chain.into_iter().filter_map(|d| d.owner_component().map(|c| (c, d.field))).collect::<Vec<_>>()
    })?;
    for (c, f) in chain.into_iter().rev() {
        let obj = cell.bind(py).borrow().objects.get(&c).map(|o| o.clone_ref(py));
        let Some(obj) = obj else { continue };
        let obj = obj.bind(py);
        let Ok(engine) = obj.cast::<PyDataEngine>() else { continue };
        let name = with_scene(py, cell, |s| s.entry(c).data.fields.get(f).map(|x| x.decl.name))?;
        if name.is_some_and(|n| engine.borrow().outputs.iter().any(|o| o == n)) {
            update_if_dirty(py, engine.as_super())?;
        }
    }
    Ok(())
}
