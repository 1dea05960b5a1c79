//! Attaching and detaching nodes: `parent.addChild(node)`, `removeChild`.
//!
//! A node built on its own is the root of a scene of its own. Attaching it moves its scene's
//! nodes and components into the parent's scene ([`Scene::graft`]); the Python objects that
//! stood for them are pointed at their new ids, so references the script holds keep working.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use settee_core::data::DataLinkTarget;
use settee_core::scene::Grafted;
use settee_core::{NodeId, Scene};

use crate::cell::{with_scene, SceneCell};
use crate::node::{node_ref, PyNode};
use crate::object::PyObj;

pub fn attach_node(py: Python<'_>, cell: &Py<SceneCell>, parent: NodeId, child: &Bound<'_, PyNode>) -> PyResult<()> {
    let (child_cell, child_id) = node_ref(child);
    if child_cell.is(cell) {
        // A node of the same scene: one without a parent (removed earlier) is attached again,
        // one with parents gets `parent` as one more (SOFA's DAG: Rigidify-like scenes).
        return with_scene(py, cell, |s| s.add_parent(child_id, parent).map_err(|e| PyRuntimeError::new_err(e.to_string())))?;
    }
    if child_id != Scene::ROOT {
        return Err(PyRuntimeError::new_err(
            "this node belongs to another graph: a node can have parents in one graph only in Settee (attach its root, or remove it there first)",
        ));
    }
    let other = crate::cell::take(py, &child_cell)?;
    let map = match with_scene(py, cell, |s| s.graft(parent, other)) {
        Ok(Ok(map)) => map,
        Ok(Err(e)) => return Err(PyRuntimeError::new_err(e.to_string())),
        Err(e) => return Err(e),
    };
    // Point every wrapper of the moved scene at its new place.
    move_wrappers(py, &child_cell, cell, &map);
    child_cell.bind(py).borrow_mut().moved_to = Some(cell.clone_ref(py));
    Ok(())
}

/// Points the wrappers of the nodes and components `map` moved from `from`'s scene to `to`'s
/// at their new ids, so that the script's references keep working.
fn move_wrappers(py: Python<'_>, from: &Py<SceneCell>, to: &Py<SceneCell>, map: &Grafted) {
    for (old, &new) in &map.nodes {
        let Some(w) = from.bind(py).borrow_mut().nodes.remove(old) else { continue };
        if let Ok(n) = w.bind(py).cast::<PyNode>() {
            let mut n = n.borrow_mut();
            n.cell = to.clone_ref(py);
            n.id = new;
        }
        to.bind(py).borrow_mut().nodes.insert(new, w);
    }
    for (old, &new) in &map.components {
        let Some(w) = from.bind(py).borrow_mut().objects.remove(old) else { continue };
        if let Ok(o) = w.bind(py).cast::<PyObj>() {
            o.borrow_mut().target = Some((to.clone_ref(py), new));
        }
        to.bind(py).borrow_mut().objects.insert(new, w);
    }
    // Links to Data of other scenes follow their Data too.
    let moved: Vec<DataLinkTarget> = from.bind(py).borrow().outside_parents.keys().copied().collect();
    for old in moved {
        let Some(holder) = map.moved(old.holder) else { continue };
        let Some(p) = from.bind(py).borrow_mut().outside_parents.remove(&old) else { continue };
        to.bind(py).borrow_mut().outside_parents.insert(DataLinkTarget { holder, field: old.field }, p);
    }
}

/// `newParent.moveChild(child, oldParent)` across scenes: the child's subtree leaves its scene
/// ([`Scene::prune`]) and is attached under `new_parent` ([`Scene::graft`]); the script's
/// references follow it.
pub fn move_across(py: Python<'_>, from: &Py<SceneCell>, child: NodeId, to: &Py<SceneCell>, new_parent: NodeId) -> PyResult<()> {
    let (pruned, out) = match with_scene(py, from, |s| s.prune(child))? {
        Ok(r) => r,
        Err(e) => return Err(PyRuntimeError::new_err(e.to_string())),
    };
    let into = match with_scene(py, to, |s| s.graft(new_parent, pruned))? {
        Ok(m) => m,
        Err(e) => return Err(PyRuntimeError::new_err(e.to_string())),
    };
    let composed = Grafted {
        nodes: out.nodes.iter().filter_map(|(a, x)| into.nodes.get(x).map(|b| (*a, *b))).collect(),
        components: out.components.iter().filter_map(|(a, x)| into.components.get(x).map(|b| (*a, *b))).collect(),
    };
    move_wrappers(py, from, to, &composed);
    Ok(())
}

/// `parent.removeChild(node)`: only the link between the two is cut; the node keeps its other
/// parents and its content, and can be attached again.
pub fn detach_from(py: Python<'_>, cell: &Py<SceneCell>, id: NodeId, parent: NodeId) -> PyResult<()> {
    with_scene(py, cell, |s| {
        s.remove_parent(id, parent);
    })
}

/// `detachFromGraph()`: the node leaves all its parents (it keeps its content).
pub fn detach_node(py: Python<'_>, cell: &Py<SceneCell>, id: NodeId) -> PyResult<()> {
    with_scene(py, cell, |s| {
        for p in s.node(id).parents.clone() {
            s.remove_parent(id, p);
        }
    })
}
