//! `Sofa.Core.Object`: a component seen from Python (spec `python.md` §4.2, §4.3).

use pyo3::exceptions::{PyAttributeError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use settee_core::data::DataKind;
use settee_core::{ComponentId, Scene};

use crate::base::PyBase;
use crate::cell::{current, with_scene, SceneCell};
use crate::data::DataOwner;
use crate::node::{node_path_name, wrap_node, LinkPath};

/// A component. Python components (`Sofa.Core.Controller` subclasses, …) are instances of
/// subclasses; before `addObject` they belong to no scene yet.
#[pyclass(module = "Sofa.Core", name = "Object", extends = PyBase, subclass, dict, unsendable)]
pub struct PyObj {
    pub target: Option<(Py<SceneCell>, ComponentId)>,
    /// Data given to a Python component before it was added to a node (`name`, `listening`, …).
    pub pending: Vec<(String, String)>,
}

/// The Python object of component `id` (the same object every time; a Python component's own
/// instance).
pub fn wrap_object(py: Python<'_>, cell: &Py<SceneCell>, id: ComponentId) -> PyResult<Py<PyAny>> {
    if let Some(o) = cell.bind(py).borrow().objects.get(&id) {
        return Ok(o.clone_ref(py));
    }
    let base = PyObj { target: Some((cell.clone_ref(py), id)), pending: Vec::new() }.initializer();
    // SofaPython3's downcasts: a topology container is a `Sofa.Core.BaseMeshTopology`, a
    // topology modifier a `Sofa.Core.PointSetTopologyModifier`.
    let (is_topology, is_modifier) = with_scene(py, cell, |s| {
        let e = s.entry(id);
        (e.plays(settee_core::role::TOPOLOGY), e.plays(settee_core::role::TOPOLOGY_MODIFIER))
    })?;
    let obj: Py<PyAny> = if is_topology {
        Py::new(py, base.add_subclass(crate::topology::PyMeshTopology))?.into_any()
    } else if is_modifier {
        Py::new(py, base.add_subclass(crate::topology::PyTopologyModifier))?.into_any()
    } else {
        Py::new(py, base)?.into_any()
    };
    cell.bind(py).borrow_mut().objects.insert(id, obj.clone_ref(py));
    Ok(obj)
}

impl PyObj {
    /// The initializer of a component wrapper, with its `Sofa.Core.Base` part (subclasses add
    /// theirs: `PyObj { .. }.initializer().add_subclass(…)`).
    pub fn initializer(self) -> PyClassInitializer<PyObj> {
        PyClassInitializer::from((self, PyBase::default()))
    }
}

/// Where a component wrapper points now (`None` before it was added to a node).
pub fn obj_ref(obj: &Bound<'_, PyObj>) -> Option<(Py<SceneCell>, ComponentId)> {
    let py = obj.py();
    let o = obj.borrow();
    let (cell, id) = o.target.as_ref()?;
    Some((current(py, cell), *id))
}

fn attached(obj: &Bound<'_, PyObj>) -> PyResult<(Py<SceneCell>, ComponentId)> {
    obj_ref(obj).ok_or_else(|| PyRuntimeError::new_err("this component was not added to a node yet (node.addObject(component))"))
}

/// `/a/b/obj` (an object of the root: `/obj`).
pub fn object_path_name(s: &Scene, id: ComponentId) -> String {
    let e = s.entry(id);
    let node = node_path_name(s, e.node);
    if node == "/" {
        format!("/{}", e.name)
    } else {
        format!("{node}/{}", e.name)
    }
}

/// SOFA's categories of a component class (`ObjectFactory` and SofaPython3's `getCategories`),
/// from the roles it plays, in SOFA's order; `Miscellaneous` when none applies.
pub fn categories(class: &settee_core::ComponentClass) -> Vec<&'static str> {
    use settee_core::role::*;
    let p = |r| class.plays(r);
    let python_controller = std::ptr::eq(class, <crate::component::PythonController as settee_core::Declared>::CLASSES[0]);
    let rules: [(bool, &str); 22] = [
        (p(VISUAL_MODEL), "VisualModel"),
        (p(COLLISION_MODEL), "CollisionModel"),
        (p(MECHANICAL_STATE), "MechanicalState"),
        // A mass is a force field, but SOFA keeps it out of that category.
        (p(FORCE_FIELD) && !p(MASS), "ForceField"),
        (p(INTERACTION), "InteractionForceField"),
        (p(PROJECTIVE_CONSTRAINT), "ProjectiveConstraintSet"),
        (p(CONSTRAINT_LAW), "ConstraintSet"),
        (p(MAPPING), "Mapping"),
        (p(ENGINE), "Engine"),
        (p(MASS), "Mass"),
        (p(ODE_SOLVER), "OdeSolver"),
        (p(CONSTRAINT_SOLVER), "ConstraintSolver"),
        (p(CONSTRAINT_CORRECTION), "ConstraintSolver"),
        (p(LINEAR_SOLVER), "LinearSolver"),
        (p(ANIMATION_LOOP), "AnimationLoop"),
        (p(TOPOLOGY) && !p(TOPOLOGY_ALGORITHMS), "Topology"),
        (p(TOPOLOGY_ALGORITHMS), "TopologyObject"),
        (python_controller, "Controller"),
        (p(LOADER), "Loader"),
        (p(BROAD_PHASE) || p(NARROW_PHASE) || p(CONTACT_MANAGER), "CollisionAlgorithm"),
        (p(COLLISION_PIPELINE), "CollisionAlgorithm"),
        (p(INTERSECTION), "CollisionAlgorithm"),
    ];
    let mut out: Vec<&'static str> = rules.iter().filter(|(on, _)| *on).map(|(_, c)| *c).collect();
    if out.is_empty() {
        out.push("Miscellaneous");
    }
    out
}

/// The bounding box of the component owning the `bbox` Data `data` (min corner then max
/// corner), as the engine has it now (for a mechanical state, the bounds of its positions).
#[pyfunction]
pub fn bounding_box(data: &Bound<'_, crate::data::PyData>) -> PyResult<[f64; 6]> {
    let DataOwner::Object(o) = &data.borrow().owner else { return Err(PyRuntimeError::new_err("not a component's bounding box")) };
    let (cell, id) = attached(o.bind(data.py()))?;
    with_scene(data.py(), &cell, |s| s.bounding_box(id))
}

/// `SofaRuntime.getCategories(className)`: the categories of a class of the factory (an empty
/// list for a class it does not have).
#[pyfunction]
pub fn class_categories(name: &str) -> PyResult<Vec<&'static str>> {
    Ok(crate::factory()?.class(name).map(categories).unwrap_or_default())
}

/// What `Sofa.Core.ObjectFactory` shows of every class of the factory, as dicts: `className`,
/// `description`, `target` (the SOFA module), `templates`, `defaultTemplate`, `categories`, `data` (`name`, `group`, `help`,
/// `type`, `defaultValue`) and `link` (`name`, `help`, `destinationTypeName`).
#[pyfunction]
pub fn factory_entries(py: Python<'_>) -> PyResult<Vec<Py<PyDict>>> {
    let factory = crate::factory()?;
    let mut out = Vec::new();
    for class in factory.classes() {
        let d = PyDict::new(py);
        d.set_item("className", class.name)?;
        d.set_item("description", class.description)?;
        d.set_item("target", class.module)?;
        d.set_item("templates", class.templates.to_vec())?;
        d.set_item("defaultTemplate", class.default_template)?;
        d.set_item("categories", categories(class))?;
        let data = pyo3::types::PyList::empty(py);
        for decl in class.data.iter().flat_map(|t| t.iter()) {
            let f = PyDict::new(py);
            f.set_item("name", decl.name)?;
            f.set_item("group", "")?;
            f.set_item("help", decl.help)?;
            f.set_item("type", crate::data::sofa_type_name(decl.kind, class.default_template))?;
            f.set_item("defaultValue", decl.default)?;
            data.append(f)?;
        }
        d.set_item("data", data)?;
        let links = pyo3::types::PyList::empty(py);
        for l in class.links {
            let f = PyDict::new(py);
            f.set_item("name", l.name)?;
            f.set_item("help", l.help)?;
            f.set_item("destinationTypeName", l.target.map_or("Base", |r| r.name()))?;
            links.append(f)?;
        }
        d.set_item("link", links)?;
        out.push(d.unbind());
    }
    Ok(out)
}

#[pymethods]
impl PyObj {
    /// SOFA's categories of the component's class (`["MechanicalState"]`, `["Topology"]`, …).
    fn getCategories(slf: &Bound<'_, PyObj>) -> PyResult<Vec<&'static str>> {
        let (cell, id) = attached(slf)?;
        with_scene(slf.py(), &cell, |s| categories(s.entry(id).class))
    }

    /// The SOFA module that registers the component's class (SOFA's factory target, e.g.
    /// `Sofa.Component.StateContainer`); empty for a Python component or a class only Settee has.
    fn getTarget(slf: &Bound<'_, PyObj>) -> PyResult<&'static str> {
        if crate::component::is_python_component(slf) {
            return Ok("");
        }
        let (cell, id) = attached(slf)?;
        with_scene(slf.py(), &cell, |s| s.entry(id).class.module)
    }

    #[new]
    #[pyo3(signature = (*_args, **_kw))]
    fn new(_args: &Bound<'_, pyo3::types::PyTuple>, _kw: Option<&Bound<'_, PyDict>>) -> PyClassInitializer<PyObj> {
        PyObj { target: None, pending: Vec::new() }.initializer()
    }

    fn getName(slf: &Bound<'_, PyObj>) -> PyResult<String> {
        match obj_ref(slf) {
            Some((cell, id)) => with_scene(slf.py(), &cell, |s| s.entry(id).name.clone()),
            None => Ok(slf.borrow().pending.iter().rev().find(|(k, _)| k == "name").map(|(_, v)| v.clone()).unwrap_or_else(|| "unnamed".into())),
        }
    }

    fn setName(slf: &Bound<'_, PyObj>, name: &str) -> PyResult<()> {
        match obj_ref(slf) {
            Some((cell, id)) => with_scene(slf.py(), &cell, |s| {
                s.entry_mut(id).name = name.to_string();
                let _ = s.entry_mut(id).data.write_text("name", name);
            }),
            None => {
                slf.borrow_mut().pending.push(("name".into(), name.into()));
                Ok(())
            }
        }
    }

    fn getClassName(slf: &Bound<'_, PyObj>) -> PyResult<String> {
        if crate::component::is_python_component(slf) {
            return Ok(slf.get_type().name()?.to_string());
        }
        let (cell, id) = attached(slf)?;
        with_scene(slf.py(), &cell, |s| s.entry(id).class.name.to_string())
    }

    fn getTemplateName(slf: &Bound<'_, PyObj>) -> PyResult<String> {
        let Some((cell, id)) = obj_ref(slf) else { return Ok(String::new()) };
        with_scene(slf.py(), &cell, |s| s.entry(id).template.clone())
    }

    /// Its node; a slave's context is its master's (SOFA's `addSlave` sets it so).
    fn getContext(slf: &Bound<'_, PyObj>) -> PyResult<Py<PyAny>> {
        let (cell, id) = attached(slf)?;
        let node = with_scene(slf.py(), &cell, |s| s.entry(s.entry(id).master.unwrap_or(id)).node)?;
        wrap_node(slf.py(), &cell, node)
    }

    /// Makes `slave` a slave of this component (SOFA's `BaseObject::addSlave`).
    fn addSlave(slf: &Bound<'_, PyObj>, slave: &Bound<'_, PyObj>) -> PyResult<()> {
        let (cell, id) = attached(slf)?;
        let (slave_cell, slave_id) = attached(slave)?;
        if !slave_cell.is(&cell) {
            return Err(PyRuntimeError::new_err("a slave must belong to the same scene as its master"));
        }
        with_scene(slf.py(), &cell, |s| s.add_slave(id, slave_id))
    }

    /// Its slaves, in the order they were added.
    fn getSlaves(slf: &Bound<'_, PyObj>) -> PyResult<Vec<Py<PyAny>>> {
        let (cell, id) = attached(slf)?;
        let slaves = with_scene(slf.py(), &cell, |s| s.entry(id).slaves.clone())?;
        slaves.into_iter().map(|c| wrap_object(slf.py(), &cell, c)).collect()
    }

    /// The component it is a slave of, or None.
    fn getMaster(slf: &Bound<'_, PyObj>) -> PyResult<Py<PyAny>> {
        let (cell, id) = attached(slf)?;
        match with_scene(slf.py(), &cell, |s| s.entry(id).master)? {
            Some(m) => wrap_object(slf.py(), &cell, m),
            None => Ok(slf.py().None()),
        }
    }

    /// `init()` of this component alone (links resolved first), as SOFA's `init` called from a
    /// script (scenes do it to read a BoxROI's indices while they build).
    fn init(slf: &Bound<'_, PyObj>) -> PyResult<()> {
        let py = slf.py();
        let (cell, id) = attached(slf)?;
        let before = with_scene(py, &cell, |s| s.messages.len())?;
        let r = crate::cell::run_engine(py, &cell, |s| settee_core::simulation::init_components(s, &[id]))?;
        crate::print_messages(py, &cell, before)?;
        let _ = r;
        Ok(())
    }

    fn reinit(slf: &Bound<'_, PyObj>) -> PyResult<()> {
        Self::init(slf)
    }

    fn bwdInit(&self) {}

    /// `obj["data"]` (a leading `.` allowed); `obj["."]` and `obj[""]` are the object itself.
    fn __getitem__(slf: &Bound<'_, PyObj>, name: &str) -> PyResult<Py<PyAny>> {
        let name = name.strip_prefix('.').unwrap_or(name);
        if name.is_empty() {
            return Ok(slf.clone().into_any().unbind());
        }
        Self::__getattr__(slf, name)
    }

    fn __getattr__(slf: &Bound<'_, PyObj>, name: &str) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if name == "__data__" {
            return crate::node::data_dict(slf.as_any());
        }
        if name.starts_with("__") {
            return Err(PyAttributeError::new_err(name.to_string()));
        }
        let Some((cell, id)) = obj_ref(slf) else {
            return Err(PyAttributeError::new_err(format!("Unable to find attribute: {name}")));
        };
        enum Found {
            Data,
            Link(Vec<ComponentId>, Option<String>),
            Nothing(Vec<&'static str>),
        }
        let found = with_scene(py, &cell, |s| {
            let e = s.entry(id);
            if e.data.index_of(name).is_some() {
                return Found::Data;
            }
            if let Some(li) = e.links.iter().position(|l| l.decl.name == name) {
                if e.links[li].targets.is_empty() && e.links[li].text.is_some() {
                    // SOFA resolves a link's path as soon as its target exists (at creation,
                    // spec §8.9); Settee resolves paths at init. Resolve it now when it can be:
                    // what is still missing is reported by the init, not here.
                    let before = s.messages.len();
                    s.resolve_links(&[id]);
                    s.messages.truncate(before);
                }
                let l = &s.entry(id).links[li];
                return Found::Link(l.targets.clone(), l.text.clone());
            }
            Found::Nothing(e.data.fields.iter().map(|f| f.decl.name).collect())
        })?;
        match found {
            Found::Data => {
                let d = crate::data::make(py, DataOwner::Object(slf.clone().unbind()), name)?;
                // SofaPython3 binds a Data<BoundingBox> as `Sofa.Types.BoundingBox`.
                let is_box =
                    with_scene(py, &cell, |s| s.entry(id).data.fields.iter().any(|f| f.decl.name == name && f.decl.kind == DataKind::BoundingBox))?;
                if is_box {
                    return Ok(py.import("Sofa.Types")?.getattr("BoundingBox")?.call_method1("_of_data", (d,))?.unbind());
                }
                Ok(d.into_any())
            }
            Found::Link(targets, text) => match targets.first() {
                Some(t) => wrap_object(py, &cell, *t),
                None => Ok(text.map(|t| t.into_pyobject(py).map(|s| s.into_any().unbind())).transpose()?.unwrap_or_else(|| py.None())),
            },
            Found::Nothing(_) if name == "mstate" => match with_scene(py, &cell, |s| crate::matrix::mstate_of(s, id))? {
                Some(t) => wrap_object(py, &cell, t),
                None => Ok(py.None()),
            },
            Found::Nothing(names) => {
                let mut message = format!("Unable to find attribute: {name}");
                if let Some(n) = names
                    .iter()
                    .min_by_key(|n| settee_core::factory::edit_distance(n, name))
                    .filter(|n| settee_core::factory::edit_distance(n, name) <= 2)
                {
                    message.push_str(&format!("\nYou possibly wanted to access: {n}"));
                }
                Err(PyAttributeError::new_err(message))
            }
        }
    }

    fn __setattr__(slf: &Bound<'_, PyObj>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        if let Some((cell, id)) = obj_ref(slf) {
            let (is_data, is_link) = with_scene(py, &cell, |s| {
                let e = s.entry(id);
                (e.data.index_of(name).is_some(), e.links.iter().any(|l| l.decl.name == name))
            })?;
            if is_data {
                let d = crate::data::make(py, DataOwner::Object(slf.clone().unbind()), name)?;
                return crate::data::set_value(d.bind(py), value);
            }
            if is_link {
                // A path string or a LinkPath points the link; anything else is ignored, as
                // SOFA does.
                let text = if let Ok(l) = value.cast::<LinkPath>() { Some(l.borrow().path.clone()) } else { value.extract::<String>().ok() };
                if let Some(text) = text {
                    with_scene(py, &cell, |s| {
                        if let Some(l) = s.entry_mut(id).links.iter_mut().find(|l| l.decl.name == name) {
                            l.text = Some(text);
                        }
                        s.resolve_links(&[id]);
                    })?;
                }
                return Ok(());
            }
        } else if crate::component::PENDING_DATA.contains(&name) && !value.is_callable() {
            let text = crate::convert::to_sofa_text(value)?;
            slf.borrow_mut().pending.push((name.to_string(), text));
            return Ok(());
        }
        crate::component::forget_handler_cache(slf, name);
        slf.getattr("__dict__")?.set_item(name, value)
    }

    /// A force field's stiffness matrix alone, as a `scipy.sparse.csr_matrix` (spec §5.3).
    fn assembleKMatrix(slf: &Bound<'_, PyObj>) -> PyResult<Py<PyAny>> {
        let (cell, id) = attached(slf)?;
        crate::matrix::assemble_csr(slf.py(), &cell, id, crate::matrix::Which::Stiffness)
    }

    /// A mass's matrix alone, as a `scipy.sparse.csr_matrix`.
    fn assembleMMatrix(slf: &Bound<'_, PyObj>) -> PyResult<Py<PyAny>> {
        let (cell, id) = attached(slf)?;
        crate::matrix::assemble_csr(slf.py(), &cell, id, crate::matrix::Which::Mass)
    }

    fn __repr__(slf: &Bound<'_, PyObj>) -> PyResult<String> {
        let class = Self::getClassName(slf).unwrap_or_else(|_| "Object".into());
        let path = crate::base::path_name(slf.as_any()).unwrap_or_else(|_| Self::getName(slf).unwrap_or_default());
        Ok(format!("<Sofa.Core.Object {class} '{path}'>"))
    }
}
