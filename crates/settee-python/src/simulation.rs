//! The functions behind `Sofa.Simulation` (spec `python.md` §2.5).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use settee_core::scene::{Reach, Visit};
use settee_core::Scene;

use crate::cell::{run_engine, with_scene, SceneCell};
use crate::node::{node_ref, wrap_node, PyNode};

/// `initRoot(root)`: SOFA's `initRoot` (a DefaultAnimationLoop added when missing, links
/// resolved, init top-down, bwdInit bottom-up, the first projection and mapping).
#[pyfunction]
fn initRoot(root: &Bound<'_, PyNode>) -> PyResult<()> {
    let py = root.py();
    let (cell, id) = node_ref(root);
    if id != Scene::ROOT {
        return init_subtree(py, &cell, id);
    }
    let factory = crate::factory()?;
    let before = with_scene(py, &cell, |s| s.messages.len())?;
    run_engine(py, &cell, |s| {
        if s.factory.is_none() {
            s.factory = Some(factory.clone());
        }
        let _ = settee_core::simulation::init_root(s, &factory);
    })?;
    crate::copies::keep_init_state(py, &cell)?;
    crate::print_messages(py, &cell, before)
}

fn init_subtree(py: Python<'_>, cell: &Py<SceneCell>, id: settee_core::NodeId) -> PyResult<()> {
    let before = with_scene(py, cell, |s| s.messages.len())?;
    run_engine(py, cell, |s| {
        let _ = settee_core::simulation::init_subtree(s, id);
    })?;
    crate::print_messages(py, cell, before)
}

/// `init(node)`: since SOFA v24.12 the init visitor alone; scripts written before expect
/// `initRoot`, so a node without a parent is initialised as a root (the spec's compat rule).
#[pyfunction]
fn init(node: &Bound<'_, PyNode>) -> PyResult<()> {
    initRoot(node)
}

/// One step of `dt` (0: the root's `dt`).
#[pyfunction]
fn animate(root: &Bound<'_, PyNode>, dt: f64) -> PyResult<()> {
    let py = root.py();
    let (cell, _) = node_ref(root);
    let (initialized, root_dt) = with_scene(py, &cell, |s| (s.initialized, s.root().context.dt))?;
    if !initialized {
        // SOFA's loop does nothing until it is initialised; say so rather than step nothing.
        eprintln!("[WARNING] [Settee] animate: the scene was not initialised (call Sofa.Simulation.initRoot(root) first): nothing happens");
        return Ok(());
    }
    let dt = if dt == 0.0 { root_dt } else { dt };
    let before = with_scene(py, &cell, |s| s.messages.len())?;
    let r = run_engine(py, &cell, |s| settee_core::simulation::animate(s, dt))?;
    crate::print_messages(py, &cell, before)?;
    r.map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

#[pyfunction]
#[pyo3(signature = (root_node, n_steps = 1, dt = 0.0))]
fn animateNSteps(root_node: &Bound<'_, PyNode>, n_steps: usize, dt: f64) -> PyResult<()> {
    for _ in 0..n_steps {
        animate(root_node, dt)?;
    }
    Ok(())
}

/// `load(filename)`: an XML scene file, loaded and not initialised (its root node), or `None`
/// when it cannot be read.
#[pyfunction]
fn load(py: Python<'_>, filename: &str) -> PyResult<Option<Py<PyAny>>> {
    let path = std::path::Path::new(filename);
    if !path.exists() {
        eprintln!("[ERROR] [Settee] load: file '{filename}' not found");
        return Ok(None);
    }
    let factory = crate::factory()?;
    let dp = settee_scene::DataPath { dirs: crate::data_path() };
    let scene = match settee_scene::load_scene(path, &factory, &dp) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("[ERROR] [Settee] load: {e}");
            return Ok(None);
        }
    };
    for m in &scene.messages {
        eprintln!("{m}");
    }
    let mut scene = scene;
    scene.factory = Some(factory);
    let cell = Py::new(py, SceneCell::new(scene))?;
    Ok(Some(wrap_node(py, &cell, Scene::ROOT)?))
}

#[pyfunction]
fn unload(_root: &Bound<'_, PyNode>) {}

/// `reset(root)`: back to the state right after `init`, time 0 ([`crate::copies::reset`]).
#[pyfunction]
fn reset(root: &Bound<'_, PyNode>) -> PyResult<()> {
    crate::copies::reset(root)
}

/// `print(node)`: the graph below a node.
#[pyfunction(name = "print")]
fn print_graph(node: &Bound<'_, PyNode>) -> PyResult<()> {
    let py = node.py();
    let (cell, id) = node_ref(node);
    let text = with_scene(py, &cell, |s| {
        let mut out = String::new();
        let mut depth = 0;
        s.walk_all(id, &mut |n, reach| {
            match reach {
                Reach::Enter => {
                    out.push_str(&format!("{}Node {}\n", "  ".repeat(depth), s.node(n).name));
                    for &c in &s.node(n).objects {
                        let e = s.entry(c);
                        out.push_str(&format!("{}  {} {}\n", "  ".repeat(depth), e.class.name, e.name));
                    }
                    depth += 1;
                }
                Reach::Leave => depth -= 1,
            }
            Visit::Descend
        });
        out
    })?;
    print!("{text}");
    Ok(())
}

/// Visual-loop functions: Settee draws nothing while it runs headless.
#[pyfunction]
#[pyo3(signature = (*_args))]
fn no_visual(_args: &Bound<'_, pyo3::types::PyTuple>) {}

pub fn add_functions(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(initRoot, m)?)?;
    m.add_function(wrap_pyfunction!(init, m)?)?;
    m.add_function(wrap_pyfunction!(animate, m)?)?;
    m.add_function(wrap_pyfunction!(animateNSteps, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(unload, m)?)?;
    m.add_function(wrap_pyfunction!(reset, m)?)?;
    m.add_function(wrap_pyfunction!(print_graph, m)?)?;
    m.add_function(wrap_pyfunction!(no_visual, m)?)?;
    m.add_function(wrap_pyfunction!(add_data_path_py, m)?)?;
    m.add_function(wrap_pyfunction!(data_path_py, m)?)?;
    Ok(())
}

#[pyfunction(name = "add_data_path")]
fn add_data_path_py(dir: &str) {
    crate::add_data_path(dir.into());
}

#[pyfunction(name = "data_path")]
fn data_path_py() -> Vec<String> {
    crate::data_path().iter().map(|p| p.to_string_lossy().to_string()).collect()
}
