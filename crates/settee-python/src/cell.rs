//! Where a Python object finds its scene.
//!
//! Every `Sofa.Core.Node` built on its own (`Sofa.Core.Node("root")`) starts a scene of its own,
//! held by a [`SceneCell`]. Node, object and Data wrappers name their cell and an id in it.
//! While the engine runs (init, a step) the scene is out of its cell: the engine holds it as
//! `&mut Scene`. When it calls back into Python (a controller's handler, a Python force field),
//! the component that makes the call lends the scene it was handed for the length of the call
//! ([`lend`]); wrappers of that scene reach it through the loan. Outside a loan a scene that is
//! out of its cell cannot be touched from Python, and the wrappers say so instead of guessing.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use settee_core::data::DataLinkTarget;
use settee_core::{ComponentId, NodeId, Scene};

/// A scene and the Python objects that stand for its nodes and components (one object per
/// node or component, so that `root.child is root.child`).
#[pyclass(module = "settee", name = "SceneCell", unsendable)]
pub struct SceneCell {
    /// `None` while the engine holds the scene (init, a step, or a `settee run` that took it).
    pub scene: Option<Scene>,
    /// The scene's [`Scene::uid`], to recognise it when it is lent back.
    pub uid: u64,
    pub nodes: HashMap<NodeId, Py<PyAny>>,
    pub objects: HashMap<ComponentId, Py<PyAny>>,
    /// Set when the scene was attached under another one ([`Scene::graft`]): the wrappers were
    /// moved there; this cell is empty.
    pub moved_to: Option<Py<SceneCell>>,
    /// Nodes that `node.init()` initialised (SOFA's per-node `isInitialized`); `initRoot`
    /// marks the whole scene instead ([`Scene::initialized`]).
    pub initialized_nodes: HashSet<NodeId>,
    /// The state right after `Sofa.Simulation.init`, for `Sofa.Simulation.reset`.
    pub init_state: crate::copies::InitState,
    /// Data of this scene that follow a Data of another scene (another root node), which the
    /// core's links cannot name (they are ids in one scene's arenas): see [`OutsideParent`].
    pub outside_parents: HashMap<DataLinkTarget, OutsideParent>,
}

/// The parent of a Data linked across scenes (`position=otherRoot.child.dofs.position.linkpath`),
/// which SOFA links by pointer. Settee's scenes are separate arenas, so the link is kept here,
/// by the parent's Python Data object: its value is copied when the link is made and again when
/// a script updates the child (`updateIfDirty`, `hasChanged`); `getParent()` gives it back. The
/// engine of the child's scene never reaches into the other scene by itself.
pub struct OutsideParent {
    pub data: Py<crate::data::PyData>,
    /// The parent's version when its value was last copied.
    pub seen: Option<u64>,
}

impl SceneCell {
    pub fn new(scene: Scene) -> SceneCell {
        SceneCell {
            uid: scene.uid,
            scene: Some(scene),
            nodes: HashMap::new(),
            objects: HashMap::new(),
            moved_to: None,
            initialized_nodes: HashSet::new(),
            init_state: None,
            outside_parents: HashMap::new(),
        }
    }
}

thread_local! {
    /// Scenes lent to Python by the component calling it, innermost last: `(uid, scene)`.
    static LENT: RefCell<Vec<(u64, *mut Scene)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` (a call into Python) with `scene` reachable from the wrappers of its cell.
pub fn lend<R>(scene: &mut Scene, f: impl FnOnce() -> R) -> R {
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            LENT.with(|l| l.borrow_mut().pop());
        }
    }
    LENT.with(|l| l.borrow_mut().push((scene.uid, scene as *mut Scene)));
    let _pop = Pop;
    f()
}

fn lent(uid: u64) -> Option<*mut Scene> {
    LENT.with(|l| l.borrow().iter().rev().find(|(u, _)| *u == uid).map(|(_, p)| *p))
}

/// Runs `f` on the scene of `cell`: in the cell, or lent by the component calling Python.
/// `f` must not call into Python.
pub fn with_scene<R>(py: Python<'_>, cell: &Py<SceneCell>, f: impl FnOnce(&mut Scene) -> R) -> PyResult<R> {
    let bound = cell.bind(py);
    let mut c = bound.try_borrow_mut().map_err(|_| PyRuntimeError::new_err("the scene is in use (a call into it is already running)"))?;
    if let Some(s) = c.scene.as_mut() {
        return Ok(f(s));
    }
    let uid = c.uid;
    drop(c);
    match lent(uid) {
        // SAFETY: the pointer was made from the `&mut Scene` of the component that is calling
        // Python right now (`lend`), which does not touch the scene until the call returns;
        // `f` does not call Python, so no other access to the scene runs while it holds it.
        Some(p) => Ok(f(unsafe { &mut *p })),
        None => Err(PyRuntimeError::new_err(
            "the scene is being run by the engine and cannot be read or changed from here (only from its components' callbacks)",
        )),
    }
}

/// Takes the scene out of its cell for the engine (init, steps); [`put_back`] returns it.
pub fn take(py: Python<'_>, cell: &Py<SceneCell>) -> PyResult<Scene> {
    let mut c = cell.bind(py).try_borrow_mut().map_err(|_| PyRuntimeError::new_err("the scene is in use"))?;
    c.scene.take().ok_or_else(|| PyRuntimeError::new_err("the scene is already being run (init or animate called from inside a step?)"))
}

pub fn put_back(py: Python<'_>, cell: &Py<SceneCell>, scene: Scene) {
    cell.bind(py).borrow_mut().scene = Some(scene);
}

/// Runs the engine on the scene of `cell`, the scene out of the cell meanwhile (Python
/// components reach it through their loans).
pub fn run_engine<R>(py: Python<'_>, cell: &Py<SceneCell>, f: impl FnOnce(&mut Scene) -> R) -> PyResult<R> {
    let mut scene = take(py, cell)?;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut scene)));
    put_back(py, cell, scene);
    match r {
        Ok(r) => Ok(r),
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// The cell a wrapper's scene lives in now (following attachments).
pub fn current(py: Python<'_>, cell: &Py<SceneCell>) -> Py<SceneCell> {
    let mut c = cell.clone_ref(py);
    loop {
        let next = c.bind(py).borrow().moved_to.as_ref().map(|m| m.clone_ref(py));
        match next {
            Some(n) => c = n,
            None => return c,
        }
    }
}
