//! Copies of a whole scene from Python (issue 20): the module `settee` (`settee.snapshot`,
//! `settee.restore`, `settee.clone`) and `Sofa.Simulation.reset`, over
//! [`Scene::snapshot`], [`Scene::restore`] and [`Scene::try_clone`].
//!
//! Wrappers name their scene's cell and an id in it; a restore keeps the scene (its cell, its
//! uid) and puts back the ids the snapshot had, so the wrappers of what existed at the snapshot
//! stay valid. A Python controller is the script's: a snapshot leaves it out and a restore keeps
//! the same Python object (its Python attributes are not rolled back). A clone is a new scene in
//! a cell of its own; a scene with a Python controller refuses to be cloned, since two scenes
//! would share one Python object.

use std::rc::Rc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use settee_core::{Scene, Snapshot};

use crate::cell::{with_scene, SceneCell};
use crate::node::{node_ref, wrap_node, PyNode};

/// The whole state of a scene at one moment (`settee.snapshot(root)`), to go back to with
/// `settee.restore(root, snap)`.
#[pyclass(module = "settee", name = "Snapshot", unsendable)]
pub struct PySnapshot {
    snap: Rc<Snapshot>,
}

#[pymethods]
impl PySnapshot {
    /// The simulation time at which it was taken.
    #[getter]
    fn time(&self) -> f64 {
        self.snap.time()
    }

    fn __repr__(&self) -> String {
        format!("<settee.Snapshot at time {}>", self.snap.time())
    }
}

/// The cell and the scene of a root node, refusing other nodes.
fn root_cell(root: &Bound<'_, PyNode>, what: &str) -> PyResult<Py<SceneCell>> {
    let (cell, id) = node_ref(root);
    if id != Scene::ROOT {
        return Err(PyValueError::new_err(format!("{what} takes the root node of a scene (the whole scene is copied)")));
    }
    Ok(cell)
}

/// `settee.snapshot(root)`: the scene's whole state now (between steps).
#[pyfunction]
fn snapshot(root: &Bound<'_, PyNode>) -> PyResult<PySnapshot> {
    let cell = root_cell(root, "settee.snapshot")?;
    let snap = with_scene(root.py(), &cell, |s| s.snapshot())?.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(PySnapshot { snap: Rc::new(snap) })
}

/// Puts the scene of `cell` back in the state of `snap`; wrappers of nodes and objects the
/// snapshot does not have are dropped from the cell.
fn restore_cell(py: Python<'_>, cell: &Py<SceneCell>, snap: &Snapshot) -> PyResult<()> {
    with_scene(py, cell, |s| s.restore(snap))?.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let (nodes, objects) = with_scene(py, cell, |s| (s.nodes.keys().collect::<Vec<_>>(), s.components.keys().collect::<Vec<_>>()))?;
    let mut c = cell.bind(py).borrow_mut();
    c.nodes.retain(|id, _| nodes.contains(id));
    c.objects.retain(|id, _| objects.contains(id));
    c.initialized_nodes.retain(|id| nodes.contains(id));
    Ok(())
}

/// `settee.restore(root, snap)`: back to the state of `snap`; the run goes on from there bit
/// for bit as it did the first time.
#[pyfunction]
fn restore(root: &Bound<'_, PyNode>, snap: &Bound<'_, PySnapshot>) -> PyResult<()> {
    let cell = root_cell(root, "settee.restore")?;
    let snap = snap.borrow().snap.clone();
    restore_cell(root.py(), &cell, &snap)
}

/// `settee.clone(root)`: an independent copy of the scene, with a root node of its own.
#[pyfunction]
fn clone(root: &Bound<'_, PyNode>) -> PyResult<Py<PyAny>> {
    let py = root.py();
    let cell = root_cell(root, "settee.clone")?;
    let copy = with_scene(py, &cell, |s| s.try_clone())?.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let (initialized, init_state) = {
        let c = cell.bind(py).borrow();
        (c.initialized_nodes.clone(), c.init_state.clone())
    };
    let mut new_cell = SceneCell::new(copy);
    new_cell.initialized_nodes = initialized;
    new_cell.init_state = init_state;
    let new_cell = Py::new(py, new_cell)?;
    wrap_node(py, &new_cell, Scene::ROOT)
}

/// What `Sofa.Simulation.init`/`initRoot` keep for `reset`: the state right after init, or
/// why it could not be kept.
pub type InitState = Option<Rc<Result<Snapshot, String>>>;

/// Keeps the state of the freshly initialised scene of `cell` for [`reset`].
pub fn keep_init_state(py: Python<'_>, cell: &Py<SceneCell>) -> PyResult<()> {
    let snap = with_scene(py, cell, |s| s.snapshot().map_err(|e| e.to_string()))?;
    cell.bind(py).borrow_mut().init_state = Some(Rc::new(snap));
    Ok(())
}

/// `Sofa.Simulation.reset(root)`: back to the state right after `init`/`initRoot`, time 0
/// (spec `python.md` §2.5; SOFA's components restore their reset state, here the whole scene
/// goes back).
pub fn reset(root: &Bound<'_, PyNode>) -> PyResult<()> {
    let py = root.py();
    let cell = root_cell(root, "Sofa.Simulation.reset")?;
    let kept = cell.bind(py).borrow().init_state.clone();
    match kept.as_deref() {
        Some(Ok(snap)) => restore_cell(py, &cell, snap),
        Some(Err(why)) => Err(PyRuntimeError::new_err(format!("Sofa.Simulation.reset: the state after init could not be kept: {why}"))),
        None => Err(PyRuntimeError::new_err("Sofa.Simulation.reset: the scene was not initialised (call Sofa.Simulation.initRoot(root) first)")),
    }
}

pub fn add_functions(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySnapshot>()?;
    m.add_function(wrap_pyfunction!(snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(restore, m)?)?;
    m.add_function(wrap_pyfunction!(clone, m)?)?;
    Ok(())
}
