//! `Sofa.Core.Base`, what nodes and components share (spec `python.md` §4.2), and
//! `Sofa.Core.Link`, their links seen as objects (SofaPython3's `BaseLink` binding).
//!
//! `Sofa.Core.Node` and `Sofa.Core.Object` derive from `Base`; its methods find out which of the
//! two they were called on and reach the node or the component behind it.

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use settee_core::{role, ComponentId, NodeId, RoleId, Scene};

use crate::cell::{with_scene, SceneCell};
use crate::data::{DataOwner, PyData};
use crate::node::{node_path_name, node_ref, LinkPath, PyNode, NODE_DATA};
use crate::object::{obj_ref, object_path_name, PyObj};

/// The common base of nodes and components.
#[pyclass(module = "Sofa.Core", name = "Base", subclass, unsendable)]
#[derive(Default)]
pub struct PyBase {
    /// The `Sofa.Core.Link` objects handed out so far, one per link: a link renamed or given a
    /// new help text keeps them (the node or component wrapper is unique, so this is too).
    pub links: Vec<Py<PyLink>>,
}

/// A node or a component, resolved.
pub enum Owner {
    Node(Py<SceneCell>, NodeId),
    Object(Py<SceneCell>, ComponentId),
}

impl Owner {
    pub fn cell(&self) -> &Py<SceneCell> {
        match self {
            Owner::Node(c, _) | Owner::Object(c, _) => c,
        }
    }
}

/// What `slf` (a node or a component wrapper) stands for; a component not added to a node yet
/// is an error.
pub fn owner(slf: &Bound<'_, PyAny>) -> PyResult<Owner> {
    if let Ok(n) = slf.cast::<PyNode>() {
        let (cell, id) = node_ref(n);
        return Ok(Owner::Node(cell, id));
    }
    if let Ok(o) = slf.cast::<PyObj>() {
        return obj_ref(o)
            .map(|(cell, id)| Owner::Object(cell, id))
            .ok_or_else(|| PyRuntimeError::new_err("this component was not added to a node yet (node.addObject(component))"));
    }
    Err(PyTypeError::new_err(format!("{} is neither a Sofa.Core.Node nor a Sofa.Core.Object", slf.get_type().name()?)))
}

/// The owner of the Data of a node or component wrapper.
pub fn data_owner(slf: &Bound<'_, PyAny>) -> PyResult<DataOwner> {
    if let Ok(n) = slf.cast::<PyNode>() {
        return Ok(DataOwner::Node(n.clone().unbind()));
    }
    Ok(DataOwner::Object(slf.cast::<PyObj>()?.clone().unbind()))
}

/// `/a/b` for a node, `/a/b/obj` for a component.
pub fn path_name(slf: &Bound<'_, PyAny>) -> PyResult<String> {
    match owner(slf)? {
        Owner::Node(cell, id) => with_scene(slf.py(), &cell, |s| node_path_name(s, id)),
        Owner::Object(cell, id) => with_scene(slf.py(), &cell, |s| object_path_name(s, id)),
    }
}

/// The names of the Data of a node (its own, then those a script added) or a component.
fn data_names(slf: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(o) = slf.cast::<PyObj>() {
        if obj_ref(o).is_none() {
            return Ok(Vec::new());
        }
    }
    match owner(slf)? {
        Owner::Node(cell, id) => with_scene(slf.py(), &cell, |s| {
            NODE_DATA.iter().map(|n| n.to_string()).chain(s.node(id).data.fields.iter().map(|f| f.decl.name.to_string())).collect()
        }),
        Owner::Object(cell, id) => with_scene(slf.py(), &cell, |s| s.entry(id).data.fields.iter().map(|f| f.decl.name.to_string()).collect()),
    }
}

/// Whether a node or a component has a Data named `name`.
pub fn has_data(slf: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    if let Ok(o) = slf.cast::<PyObj>() {
        if obj_ref(o).is_none() {
            return Ok(false);
        }
    }
    match owner(slf)? {
        Owner::Node(cell, id) => Ok(NODE_DATA.contains(&name) || with_scene(slf.py(), &cell, |s| s.node(id).data.index_of(name).is_some())?),
        Owner::Object(cell, id) => with_scene(slf.py(), &cell, |s| s.entry(id).data.index_of(name).is_some()),
    }
}

/// The subject of a node's or component's own messages in the scene's message list.
fn log_subject(s: &Scene, o: &Owner) -> String {
    match o {
        Owner::Node(_, id) => format!("Node {}", node_path_name(s, *id)),
        Owner::Object(_, id) => s.entry(*id).label(),
    }
}

#[pymethods]
impl PyBase {
    fn getPathName(slf: &Bound<'_, PyBase>) -> PyResult<String> {
        path_name(slf.as_any())
    }

    fn getLinkPath(slf: &Bound<'_, PyBase>) -> PyResult<String> {
        Ok(format!("@{}", path_name(slf.as_any())?))
    }

    fn getAsACreateObjectParameter(slf: &Bound<'_, PyBase>) -> PyResult<String> {
        Self::getLinkPath(slf)
    }

    #[getter]
    fn linkpath(slf: &Bound<'_, PyBase>) -> PyResult<LinkPath> {
        Ok(LinkPath { path: Self::getLinkPath(slf)?, target: Some(slf.clone().into_any().unbind()) })
    }

    /// The Data named `name`, or `None`.
    fn findData(slf: &Bound<'_, PyBase>, name: &str) -> PyResult<Option<Py<PyData>>> {
        if !has_data(slf.as_any(), name)? {
            return Ok(None);
        }
        Ok(Some(crate::data::make(slf.py(), data_owner(slf.as_any())?, name)?))
    }

    fn getData(slf: &Bound<'_, PyBase>, name: &str) -> PyResult<Option<Py<PyData>>> {
        Self::findData(slf, name)
    }

    fn getDataFields(slf: &Bound<'_, PyBase>) -> PyResult<Vec<Py<PyData>>> {
        if let Ok(o) = slf.cast::<PyObj>() {
            if obj_ref(o).is_none() {
                return Err(PyRuntimeError::new_err("this component was not added to a node yet (node.addObject(component))"));
            }
        }
        let names = data_names(slf.as_any())?;
        names.iter().map(|n| crate::data::make(slf.py(), data_owner(slf.as_any())?, n)).collect()
    }

    /// `addData(name, value=None, default=None, help="", group="", type="")` (spec §4.8).
    #[pyo3(signature = (name, value = None, default = None, help = "", group = "", r#type = ""))]
    fn addData(
        slf: &Bound<'_, PyBase>,
        name: &str,
        value: Option<&Bound<'_, PyAny>>,
        default: Option<&Bound<'_, PyAny>>,
        help: &str,
        group: &str,
        r#type: &str,
    ) -> PyResult<()> {
        let _ = group; // Data groups only sort the GUI's tabs.
        crate::data::add_data(slf.as_any(), name, value, default, help, r#type)
    }

    /// `setDataValues(name=value, …)`: sets several Data at once.
    #[pyo3(signature = (**kw))]
    fn setDataValues(slf: &Bound<'_, PyBase>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        let Some(kw) = kw else { return Ok(()) };
        for (k, v) in kw.iter() {
            let k: String = k.extract()?;
            match Self::findData(slf, &k)? {
                Some(d) => crate::data::set_value(d.bind(slf.py()), &v)?,
                None => return Err(pyo3::exceptions::PyAttributeError::new_err(format!("There is no data field named: {k}"))),
            }
        }
        Ok(())
    }

    /// The link named `name` (`Sofa.Core.Link`), or `None`.
    fn findLink(slf: &Bound<'_, PyBase>, name: &str) -> PyResult<Option<Py<PyLink>>> {
        let py = slf.py();
        if let Some(l) = slf.borrow().links.iter().find(|l| l.borrow(py).name == name) {
            return Ok(Some(l.clone_ref(py)));
        }
        let Some(decl) = link_decls(slf.as_any())?.into_iter().find(|d| d.name == name) else { return Ok(None) };
        // A link renamed earlier is only found by its new name.
        if slf.borrow().links.iter().any(|l| l.borrow(py).decl == decl.name) {
            return Ok(None);
        }
        Ok(Some(link_object(slf, decl)?))
    }

    /// Every link of the node or component.
    fn getLinks(slf: &Bound<'_, PyBase>) -> PyResult<Vec<Py<PyLink>>> {
        let py = slf.py();
        let mut out = Vec::new();
        for decl in link_decls(slf.as_any())? {
            let cached = slf.borrow().links.iter().find(|l| l.borrow(py).decl == decl.name).map(|l| l.clone_ref(py));
            out.push(match cached {
                Some(l) => l,
                None => link_object(slf, decl)?,
            });
        }
        Ok(out)
    }

    fn getLoggedMessagesAsString(slf: &Bound<'_, PyBase>) -> PyResult<String> {
        let o = owner(slf.as_any())?;
        with_scene(slf.py(), o.cell(), |s| {
            let subject = log_subject(s, &o);
            s.messages.iter().filter(|m| m.subject.as_deref() == Some(subject.as_str())).map(|m| format!("{m}\n")).collect()
        })
    }

    fn countLoggedMessages(slf: &Bound<'_, PyBase>) -> PyResult<usize> {
        let o = owner(slf.as_any())?;
        with_scene(slf.py(), o.cell(), |s| {
            let subject = log_subject(s, &o);
            s.messages.iter().filter(|m| m.subject.as_deref() == Some(subject.as_str())).count()
        })
    }

    fn clearLoggedMessages(slf: &Bound<'_, PyBase>) -> PyResult<()> {
        let o = owner(slf.as_any())?;
        with_scene(slf.py(), o.cell(), |s| {
            let subject = log_subject(s, &o);
            s.messages.retain(|m| m.subject.as_deref() != Some(subject.as_str()));
        })
    }

    /// A message a script sent to this node or component (`Sofa.msg_info(x, …)`): kept in its
    /// log. A component not added to a node yet has no log: the message is dropped.
    fn _log_message(slf: &Bound<'_, PyBase>, kind: &str, text: &str) -> PyResult<()> {
        let Ok(o) = owner(slf.as_any()) else { return Ok(()) };
        with_scene(slf.py(), o.cell(), |s| {
            let subject = log_subject(s, &o);
            s.report(settee_core::Diagnostic::new(crate::node::severity_of(kind), text).subject(subject));
        })
    }

    /// The names of the Data (what SofaPython3 lists).
    fn __dir__(slf: &Bound<'_, PyBase>) -> PyResult<Vec<String>> {
        data_names(slf.as_any())
    }
}

// ----- links ------------------------------------------------------------------------------

/// What a node link holds (SOFA's `Node` links, `Sofa/framework/Simulation/Core/.../Node.cpp`).
#[derive(Clone, Copy)]
enum NodeLinkKind {
    Children,
    Objects,
    Parents,
    /// The node's last component playing the role (SOFA's single links keep the last added).
    Slot(RoleId),
    /// Every component of the node playing the first role and not the second.
    All(RoleId, Option<RoleId>),
}

struct NodeLinkDecl {
    name: &'static str,
    help: &'static str,
    kind: NodeLinkKind,
    /// SOFA's class name of what it points to (`getValueTypeString`).
    type_name: &'static str,
}

/// The node links Settee can fill: those whose content maps to its roles (SOFA's others, such
/// as `shaders` or `visualStyle`, have no counterpart here).
const NODE_LINKS: &[NodeLinkDecl] = {
    use NodeLinkKind::*;
    &[
        NodeLinkDecl { name: "child", help: "Child nodes", kind: Children, type_name: "Node" },
        NodeLinkDecl { name: "object", help: "All objects attached to this node", kind: Objects, type_name: "BaseObject" },
        NodeLinkDecl {
            name: "mapping",
            help: "The (non-mechanical) Mapping(s) attached to this node (only valid for root node)",
            kind: All(role::MAPPING, Some(role::MECHANICAL_MAPPING)),
            type_name: "BaseMapping",
        },
        NodeLinkDecl {
            name: "odeSolver",
            help: "The OdeSolver(s) attached to this node (controlling the mechanical time integration of this branch)",
            kind: All(role::ODE_SOLVER, None),
            type_name: "OdeSolver",
        },
        NodeLinkDecl {
            name: "constraintSolver",
            help: "The ConstraintSolver(s) attached to this node",
            kind: All(role::CONSTRAINT_SOLVER, None),
            type_name: "ConstraintSolver",
        },
        NodeLinkDecl {
            name: "linearSolver",
            help: "The LinearSolver(s) attached to this node",
            kind: All(role::LINEAR_SOLVER, None),
            type_name: "BaseLinearSolver",
        },
        NodeLinkDecl {
            name: "forceField",
            help: "The (non-interaction) ForceField(s) attached to this node",
            kind: All(role::FORCE_FIELD, Some(role::INTERACTION)),
            type_name: "BaseForceField",
        },
        NodeLinkDecl {
            name: "interactionForceField",
            help: "The InteractionForceField(s) attached to this node",
            kind: All(role::INTERACTION, None),
            type_name: "BaseInteractionForceField",
        },
        NodeLinkDecl {
            name: "projectiveConstraintSet",
            help: "The ProjectiveConstraintSet(s) attached to this node",
            kind: All(role::PROJECTIVE_CONSTRAINT, None),
            type_name: "BaseProjectiveConstraintSet",
        },
        NodeLinkDecl {
            name: "visualModel",
            help: "The VisualModel(s) attached to this node",
            kind: All(role::VISUAL_MODEL, None),
            type_name: "VisualModel",
        },
        NodeLinkDecl {
            name: "collisionModel",
            help: "The CollisionModel(s) attached to this node",
            kind: All(role::COLLISION_MODEL, None),
            type_name: "CollisionModel",
        },
        NodeLinkDecl {
            name: "animationLoop",
            help: "The AnimationLoop attached to this node (only valid for root node)",
            kind: Slot(role::ANIMATION_LOOP),
            type_name: "BaseAnimationLoop",
        },
        NodeLinkDecl {
            name: "visualLoop",
            help: "The VisualLoop attached to this node (only valid for root node)",
            kind: Slot(role::VISUAL_LOOP),
            type_name: "VisualLoop",
        },
        NodeLinkDecl { name: "topology", help: "The Topology attached to this node", kind: Slot(role::TOPOLOGY), type_name: "Topology" },
        NodeLinkDecl {
            name: "meshTopology",
            help: "The MeshTopology / TopologyContainer attached to this node",
            kind: Slot(role::TOPOLOGY),
            type_name: "BaseMeshTopology",
        },
        NodeLinkDecl {
            name: "state",
            help: "The State attached to this node (storing vectors such as position, velocity)",
            kind: Slot(role::MECHANICAL_STATE),
            type_name: "BaseState",
        },
        NodeLinkDecl {
            name: "mechanicalState",
            help: "The MechanicalState attached to this node (storing all state vectors)",
            kind: Slot(role::MECHANICAL_STATE),
            type_name: "BaseMechanicalState",
        },
        NodeLinkDecl {
            name: "mechanicalMapping",
            help: "The MechanicalMapping attached to this node",
            kind: Slot(role::MECHANICAL_MAPPING),
            type_name: "BaseMapping",
        },
        NodeLinkDecl { name: "mass", help: "The Mass attached to this node", kind: Slot(role::MASS), type_name: "BaseMass" },
        NodeLinkDecl {
            name: "collisionPipeline",
            help: "The collision Pipeline attached to this node",
            kind: Slot(role::COLLISION_PIPELINE),
            type_name: "Pipeline",
        },
        NodeLinkDecl { name: "parents", help: "Parents nodes in the graph", kind: Parents, type_name: "BaseNode" },
    ]
};

/// A link of a node or a component, as declared.
#[derive(Clone, Copy)]
pub struct LinkDeclRef {
    name: &'static str,
    help: &'static str,
    multi: bool,
    /// Node links are not saved with the scene (SOFA: not persistent, read-only); component
    /// links keep the path the scene gave.
    persistent: bool,
}

/// The links a node or a component declares.
fn link_decls(slf: &Bound<'_, PyAny>) -> PyResult<Vec<LinkDeclRef>> {
    if slf.cast::<PyNode>().is_ok() {
        return Ok(NODE_LINKS
            .iter()
            .map(|d| LinkDeclRef {
                name: d.name,
                help: d.help,
                multi: matches!(d.kind, NodeLinkKind::Children | NodeLinkKind::Objects | NodeLinkKind::Parents | NodeLinkKind::All(..)),
                persistent: false,
            })
            .collect());
    }
    if let Ok(o) = slf.cast::<PyObj>() {
        if obj_ref(o).is_none() {
            return Ok(Vec::new());
        }
    }
    match owner(slf)? {
        Owner::Object(cell, id) => with_scene(slf.py(), &cell, |s| {
            s.entry(id).links.iter().map(|l| LinkDeclRef { name: l.decl.name, help: l.decl.help, multi: l.decl.multi, persistent: true }).collect()
        }),
        Owner::Node(..) => Ok(Vec::new()),
    }
}

/// A new `Sofa.Core.Link` for `decl` of `slf`, remembered by `slf`.
fn link_object(slf: &Bound<'_, PyBase>, decl: LinkDeclRef) -> PyResult<Py<PyLink>> {
    let py = slf.py();
    let link = Py::new(
        py,
        PyLink {
            owner: slf.clone().into_any().unbind(),
            decl: decl.name,
            name: decl.name.to_string(),
            help: decl.help.to_string(),
            multi: decl.multi,
            persistent: decl.persistent,
        },
    )?;
    slf.borrow_mut().links.push(link.clone_ref(py));
    Ok(link)
}

/// What a link points to.
enum Linked {
    Node(NodeId),
    Object(ComponentId),
}

/// A link of a node or a component (`Sofa.Core.Link`): its targets are read from the scene at
/// each call. Attribute reads and writes go to its first target (`node.mechanicalState.position`).
#[pyclass(module = "Sofa.Core", name = "Link", unsendable)]
pub struct PyLink {
    owner: Py<PyAny>,
    /// The name the link was declared with (how the scene knows it).
    decl: &'static str,
    name: String,
    help: String,
    multi: bool,
    persistent: bool,
}

impl PyLink {
    /// The link's targets in its order, and the path text of each when the scene gave one.
    fn targets(&self, py: Python<'_>) -> PyResult<(Py<SceneCell>, Vec<Linked>, Option<String>)> {
        let owner_obj = self.owner.bind(py);
        match owner(owner_obj)? {
            Owner::Node(cell, node) => {
                let kind =
                    NODE_LINKS.iter().find(|d| d.name == self.decl).map(|d| d.kind).ok_or_else(|| PyRuntimeError::new_err("unknown node link"))?;
                let linked = with_scene(py, &cell, |s| node_link_targets(s, node, kind))?;
                Ok((cell, linked, None))
            }
            Owner::Object(cell, id) => {
                let decl = self.decl;
                let (targets, text) = with_scene(py, &cell, |s| {
                    // Resolve a path given before its target existed, as attribute access does.
                    if let Some(li) = s.entry(id).links.iter().position(|l| l.decl.name == decl) {
                        if s.entry(id).links[li].targets.is_empty() && s.entry(id).links[li].text.is_some() {
                            let before = s.messages.len();
                            s.resolve_links(&[id]);
                            s.messages.truncate(before);
                        }
                    }
                    s.entry(id).links.iter().find(|l| l.decl.name == decl).map(|l| (l.targets.clone(), l.text.clone())).unwrap_or_default()
                })?;
                Ok((cell, targets.into_iter().map(Linked::Object).collect(), text))
            }
        }
    }

    fn target_path(py: Python<'_>, cell: &Py<SceneCell>, t: &Linked) -> PyResult<String> {
        with_scene(py, cell, |s| match t {
            Linked::Node(n) => format!("@{}", node_path_name(s, *n)),
            Linked::Object(c) => format!("@{}", object_path_name(s, *c)),
        })
    }

    /// The path of target `index`: the text the scene gave (a single target), else the
    /// target's absolute path.
    fn linked_path(&self, py: Python<'_>, index: usize) -> PyResult<String> {
        let (cell, targets, text) = self.targets(py)?;
        if let (Some(text), false) = (&text, self.multi) {
            if index == 0 {
                return Ok(text.clone());
            }
        }
        match targets.get(index) {
            Some(t) => Self::target_path(py, &cell, t),
            None => Ok(String::new()),
        }
    }

    fn first_target(slf: &Bound<'_, PyLink>) -> PyResult<Option<Py<PyAny>>> {
        Self::getLinkedBase(slf, 0)
    }
}

fn node_link_targets(s: &Scene, node: NodeId, kind: NodeLinkKind) -> Vec<Linked> {
    let n = s.node(node);
    match kind {
        NodeLinkKind::Children => n.children.iter().map(|&c| Linked::Node(c)).collect(),
        NodeLinkKind::Objects => n.objects.iter().map(|&c| Linked::Object(c)).collect(),
        NodeLinkKind::Parents => n.parents.iter().map(|&p| Linked::Node(p)).collect(),
        NodeLinkKind::Slot(r) => s.slot(node, r).into_iter().map(Linked::Object).collect(),
        NodeLinkKind::All(r, not) => {
            n.objects.iter().copied().filter(|&c| s.entry(c).plays(r) && !not.is_some_and(|x| s.entry(c).plays(x))).map(Linked::Object).collect()
        }
    }
}

#[pymethods]
impl PyLink {
    fn getName(&self) -> String {
        self.name.clone()
    }

    fn setName(&mut self, name: &str) {
        self.name = name.to_string();
    }

    fn getHelp(&self) -> String {
        self.help.clone()
    }

    fn setHelp(&mut self, help: &str) {
        self.help = help.to_string();
    }

    fn isMultiLink(&self) -> bool {
        self.multi
    }

    fn isPersistent(&self) -> bool {
        self.persistent
    }

    fn setPersistent(&mut self, on: bool) {
        self.persistent = on;
    }

    /// A link that is not saved with the scene cannot be set by the user.
    fn isReadOnly(&self) -> bool {
        !self.persistent
    }

    fn getSize(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.targets(py)?.1.len())
    }

    /// The targets' paths, separated by spaces.
    fn getValueString(&self, py: Python<'_>) -> PyResult<String> {
        let n = self.targets(py)?.1.len().max(usize::from(!self.multi));
        let paths = (0..n).map(|i| self.linked_path(py, i)).collect::<PyResult<Vec<_>>>()?;
        Ok(paths.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" "))
    }

    /// SOFA's class name of what the link points to.
    fn getValueTypeString(slf: &Bound<'_, PyLink>) -> PyResult<String> {
        let py = slf.py();
        let l = slf.borrow();
        if let Some(d) = NODE_LINKS.iter().find(|d| d.name == l.decl).filter(|_| l.owner.bind(py).cast::<PyNode>().is_ok()) {
            return Ok(d.type_name.to_string());
        }
        let Owner::Object(cell, id) = owner(l.owner.bind(py))? else { return Ok("Base".into()) };
        with_scene(py, &cell, |s| {
            s.entry(id)
                .links
                .iter()
                .find(|f| f.decl.name == l.decl)
                .and_then(|f| f.decl.target)
                .map(|r| r.name().to_string())
                .unwrap_or_else(|| "Base".into())
        })
    }

    fn getOwnerBase(&self, py: Python<'_>) -> Py<PyAny> {
        self.owner.clone_ref(py)
    }

    /// Target `index` (a node or a component), or `None`.
    #[pyo3(signature = (index = 0))]
    fn getLinkedBase(slf: &Bound<'_, PyLink>, index: usize) -> PyResult<Option<Py<PyAny>>> {
        let py = slf.py();
        let (cell, targets, _) = slf.borrow().targets(py)?;
        match targets.get(index) {
            Some(Linked::Node(n)) => Ok(Some(crate::node::wrap_node(py, &cell, *n)?)),
            Some(Linked::Object(c)) => Ok(Some(crate::object::wrap_object(py, &cell, *c)?)),
            None => Ok(None),
        }
    }

    /// Points the link at `base` (a component link only: a node's links follow its content).
    fn setLinkedBase(slf: &Bound<'_, PyLink>, base: &Bound<'_, PyAny>) -> PyResult<bool> {
        let path = format!("@{}", path_name(base)?);
        Self::read(slf, &path)
    }

    #[pyo3(signature = (index = 0))]
    fn getLinkedPath(&self, py: Python<'_>, index: usize) -> PyResult<String> {
        self.linked_path(py, index)
    }

    /// `/path/to/owner.linkName`.
    fn getPathName(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("{}.{}", path_name(self.owner.bind(py))?, self.name))
    }

    /// Sets a component link from a path (`@../dofs`); false when nothing is found there or
    /// the link is a node's.
    fn read(slf: &Bound<'_, PyLink>, text: &str) -> PyResult<bool> {
        let py = slf.py();
        let l = slf.borrow();
        let Owner::Object(cell, id) = owner(l.owner.bind(py))? else { return Ok(false) };
        let decl = l.decl;
        with_scene(py, &cell, |s| {
            let Some(li) = s.entry(id).links.iter().position(|f| f.decl.name == decl) else { return false };
            s.entry_mut(id).links[li].text = Some(text.to_string());
            let before = s.messages.len();
            s.resolve_links(&[id]);
            s.messages.truncate(before);
            !s.entry(id).links[li].targets.is_empty()
        })
    }

    fn __getattr__(slf: &Bound<'_, PyLink>, name: &str) -> PyResult<Py<PyAny>> {
        if name.starts_with("__") {
            return Err(pyo3::exceptions::PyAttributeError::new_err(name.to_string()));
        }
        match Self::first_target(slf)? {
            Some(t) => Ok(t.bind(slf.py()).getattr(name)?.unbind()),
            None => Err(PyRuntimeError::new_err("Unable to find attribute on an empty link.")),
        }
    }

    fn __setattr__(slf: &Bound<'_, PyLink>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        match Self::first_target(slf)? {
            Some(t) => t.bind(slf.py()).setattr(name, value),
            None => Err(PyRuntimeError::new_err("Unable to find and set an attribute on an empty link.")),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("<Sofa.Core.Link '{}'>", self.getPathName(py)?))
    }
}

/// The Python object of node link `name` of a node, when the node has such a link (for
/// attribute access: `node.mechanicalState`).
pub fn node_link(slf: &Bound<'_, PyNode>, name: &str) -> PyResult<Option<Py<PyLink>>> {
    if !NODE_LINKS.iter().any(|d| d.name == name) {
        return Ok(None);
    }
    PyBase::findLink(slf.as_super(), name)
}
