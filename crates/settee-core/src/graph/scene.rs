//! The scene graph: an arena of nodes and an arena of components, plus the state store.
//!
//! Nodes and components refer to each other by index ([`NodeId`], [`ComponentId`]); there are no
//! shared mutable references. A component that needs the rest of the scene while it works (an ODE
//! solver calling force fields, a linear solver calling back into the mechanics) is *taken out* of
//! its slot for the duration of the call ([`Scene::with_taken`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::arena::Arena;
use crate::data::{convert_value, DataField, DataHolder, DataLinkTarget, DataSet, Value};
use crate::diag::{Diagnostic, Severity, SimError, SimResult, SourcePos};
use crate::factory::{Attr, Factory};
use crate::graph::component::{Component, ComponentClass, LinkDecl, MechParams};
use crate::graph::role::{self, RoleId};
use crate::state::{StateId, StateStore, VecId};
use crate::topology::MeshData;
use crate::types::Layout;

crate::arena_key!(
    /// Id of a node: generational, so an id kept after its node was removed is detected as
    /// stale rather than reaching a node created later in the same slot.
    NodeId
);
crate::arena_key!(
    /// Id of a component (generational, like [`NodeId`]).
    ComponentId
);

/// Simulation context of a node. Only the root's values matter: children copy them from their
/// first parent at init and after every step, as SOFA does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Context {
    pub gravity: [f64; 3],
    pub dt: f64,
    pub time: f64,
    pub animate: bool,
}

impl Default for Context {
    fn default() -> Self {
        Context { gravity: [0.0, -9.81, 0.0], dt: 0.01, time: 0.0, animate: false }
    }
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    /// Parents in the order they were given, the first one primary: the node's path and its
    /// context come from it. More than one makes the graph a DAG (SOFA's `DAGNode`, what
    /// `addChild(<existing node>)` builds); every walk still visits such a node once.
    pub parents: Vec<NodeId>,
    pub children: Vec<NodeId>,
    /// Components in creation order.
    pub objects: Vec<ComponentId>,
    pub context: Context,
    pub activated: bool,
    pub tags: Vec<String>,
    pub pos: Option<SourcePos>,
    /// Data a script added to the node (SOFA's `Base::addData`, `node.addData` in Python); the
    /// node's own Data (name, context) are the fields above. No component reads them.
    pub data: DataSet,
}

impl Node {
    /// The primary (first) parent; `None` for a root or a detached node.
    pub fn parent(&self) -> Option<NodeId> {
        self.parents.first().copied()
    }
}

/// What a walk's callback answers on entering a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    /// Go on to the children.
    Descend,
    /// Do not go below this node (SOFA's `RESULT_PRUNE`): its children are reached only through
    /// another parent that was not pruned.
    Prune,
}

/// Which side of a node a walk's callback is called on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Before its children (its answer decides whether the walk descends).
    Enter,
    /// After the walk came back from the children it reached through this node.
    Leave,
}

/// Where a node stands in a DAG walk (SOFA's visit status).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    /// Not below the walk's start: its links are not followed and do not hold anyone back.
    Outside,
    NotVisited,
    Visited,
    /// Inactive, pruned by the callback, or with every parent pruned.
    Pruned,
}

/// What a link resolved to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkTarget {
    Component(ComponentId),
    Node(NodeId),
}

/// One object link of a component instance.
#[derive(Clone, Debug)]
pub struct LinkField {
    pub decl: &'static LinkDecl,
    /// The text given in the scene (`@../dofs`), if any.
    pub text: Option<String>,
    pub pos: Option<SourcePos>,
    pub targets: Vec<ComponentId>,
}

/// A component instance and its bookkeeping.
pub struct ComponentEntry {
    pub class: &'static ComponentClass,
    pub template: String,
    pub layout: Option<Layout>,
    pub name: String,
    pub node: NodeId,
    pub data: DataSet,
    pub links: Vec<LinkField>,
    /// The object; `None` only while it is taken out for a call.
    pub obj: Option<Box<dyn Component>>,
    /// The state created for a mechanical-state component.
    pub state: Option<StateId>,
    pub pos: Option<SourcePos>,
    /// Directory against which its relative file names resolve.
    pub dir: PathBuf,
    pub initialized: bool,
    /// The pass of [`crate::simulation::update_live_data`] that last refreshed this component.
    pub refreshed: u64,
    /// The component this one is a slave of (SOFA's `BaseObject::l_master`): a slave belongs
    /// to its master, and its context is the master's.
    pub master: Option<ComponentId>,
    /// Its slaves, in the order they were added (SOFA's `l_slaves`).
    pub slaves: Vec<ComponentId>,
}

/// The entry's bookkeeping without its object (`obj` is `None`): [`Scene::try_clone`] copies
/// the objects itself, since an object may refuse to be copied.
impl Clone for ComponentEntry {
    fn clone(&self) -> Self {
        ComponentEntry {
            class: self.class,
            template: self.template.clone(),
            layout: self.layout,
            name: self.name.clone(),
            node: self.node,
            data: self.data.clone(),
            links: self.links.clone(),
            obj: None,
            state: self.state,
            pos: self.pos.clone(),
            dir: self.dir.clone(),
            initialized: self.initialized,
            refreshed: self.refreshed,
            master: self.master,
            slaves: self.slaves.clone(),
        }
    }
}

impl ComponentEntry {
    /// A new entry of `class` in `node` with `data` and `obj`: no name, template, state,
    /// position, directory, master nor slaves yet, not initialised, one empty link per link of
    /// the class. Creation paths set what they know with struct update syntax
    /// (`ComponentEntry { name, ..ComponentEntry::new(…) }`), so a new bookkeeping field gets
    /// its default in one place.
    pub fn new(class: &'static ComponentClass, node: NodeId, data: DataSet, obj: Option<Box<dyn Component>>) -> ComponentEntry {
        ComponentEntry {
            class,
            template: String::new(),
            layout: None,
            name: String::new(),
            node,
            data,
            links: class.links.iter().map(|d| LinkField { decl: d, text: None, pos: None, targets: Vec::new() }).collect(),
            obj,
            state: None,
            pos: None,
            dir: PathBuf::new(),
            initialized: false,
            refreshed: 0,
            master: None,
            slaves: Vec::new(),
        }
    }
    /// Whether its class plays `role`.
    pub fn plays(&self, role: RoleId) -> bool {
        self.class.plays(role)
    }
    /// The object as role `R` (`None` when the class does not play it, or while the object is
    /// taken out).
    pub fn role<R: ?Sized + 'static>(&self) -> Option<&R> {
        self.class.cast::<R>(self.obj.as_deref()?)
    }
    /// The object as role `R`, mutably.
    pub fn role_mut<R: ?Sized + 'static>(&mut self) -> Option<&mut R> {
        let class = self.class;
        class.cast_mut::<R>(self.obj.as_deref_mut()?)
    }
    /// `Class 'name'`, for messages.
    pub fn label(&self) -> String {
        format!("{} '{}'", self.class.name, self.name)
    }
}

/// Accumulated wall time per step stage.
#[derive(Debug, Default, Clone)]
pub struct StageTimers {
    pub stages: Vec<(&'static str, Duration, u64)>,
}

impl StageTimers {
    pub fn add(&mut self, stage: &'static str, d: Duration) {
        if let Some(e) = self.stages.iter_mut().find(|e| e.0 == stage) {
            e.1 += d;
            e.2 += 1;
        } else {
            self.stages.push((stage, d, 1));
        }
    }
}

/// A scene: nodes, components, states, messages.
pub struct Scene {
    /// Unique among the scenes of a process (bindings tell scenes apart by it, whatever
    /// memory the scene moves to).
    pub uid: u64,
    pub nodes: Arena<NodeId, Node>,
    pub components: Arena<ComponentId, ComponentEntry>,
    pub store: StateStore,
    pub messages: Vec<Diagnostic>,
    /// Extra directories searched for data files (after the component's own directory).
    pub data_path: Vec<PathBuf>,
    pub timers: StageTimers,
    pub timing_enabled: bool,
    /// Told when a timed stage of the step begins (`true`) and ends (`false`): a profiler, or a
    /// test counting what one stage allocates.
    pub stage_observer: Option<fn(stage: &'static str, begins: bool)>,
    /// The animation loop chosen at init.
    pub animation_loop: Option<ComponentId>,
    pub initialized: bool,
    /// The factory the scene was created with, for the defaults SOFA adds at init by class name
    /// (a collision pipeline's broad and narrow phases, a FreeMotionAnimationLoop's constraint
    /// solver) and for programs that build scenes; contacts do not use it.
    pub factory: Option<Arc<Factory>>,
    /// Structural changes requested while the graph is being walked, applied at the next sync
    /// point of the step ([`Scene::apply_deferred`]).
    pub deferred: Vec<Deferred>,
    /// Counter of [`crate::simulation::update_live_data`] passes.
    pub live_data_pass: u64,
    /// A derivative vector that counts, after `force`, in every state's "total forces" (SOFA's
    /// `State::addToTotalForces`, read by the non-linear mappings' geometric stiffness through
    /// [`crate::mechanics::total_force`]). FreeMotionAnimationLoop registers its constraint
    /// solver's `Λ` here (lagrangian-solvers spec §1.2 S3, §1.8.1).
    pub total_force_contributor: Option<crate::state::VecId>,
    /// Where components write their output files (exporters, monitors, state writers) when the
    /// scene gives a relative name. Empty: the current directory, as SOFA does.
    pub output_dir: PathBuf,
    /// The start-of-simulation event was sent ([`crate::simulation::start`]).
    pub started: bool,
    /// What the divergence checks after each step remember (the scene's initial size, the
    /// kinetic energy so far); set up by `init_root`.
    pub divergence: DivergenceGuard,
    /// Data values that do not parse are warnings (the Data keeps its default) instead of
    /// errors: `--lenient`.
    pub lenient: bool,
    /// Observers outside the scene that look at it at every step start, after the components
    /// listening to the start of the step ran ([`StepProbe`]).
    pub step_probes: Vec<Box<dyn StepProbe>>,
    /// Bumped by every structural change (nodes, components, activation): the step plan is
    /// compiled again when it moved ([`Scene::touch`]).
    pub structure_version: u64,
    /// Bumped every time a topology container's changes are propagated
    /// ([`crate::topology_change::propagate`]): a viewer redraws the elements when it moved.
    pub topology_revision: u64,
    /// Where the objects of the contact responses act ([`crate::plan`]).
    pub contacts: crate::plan::ContactStore,
    pub(crate) plan: crate::plan::Plan,
    /// Vectors the stages borrow for a call and give back (zeros lent for a state outside a
    /// solver's scope), so that a step allocates nothing once warm.
    pub(crate) spare_vectors: Vec<Vec<f64>>,
    /// Lists of a node's objects the stages borrow while they visit it ([`Scene::objects_snapshot`]).
    pub(crate) spare_object_lists: Vec<Vec<ComponentId>>,
}

/// What the divergence checks (`crate::divergence`) remember between steps; reset by
/// `init_root`, set up at the first check.
#[derive(Clone, Debug, Default)]
pub struct DivergenceGuard {
    /// Steps checked since the scene was initialised.
    pub steps: usize,
    /// The scene's initial size: the largest extent of the initial bounding box of every
    /// state's positions, or the largest initial coordinate, floored at 1.
    pub scale: Option<f64>,
    /// Kinetic energy of every state at unit velocity, times (scale/dt)²: the energy of the
    /// whole scene crossing its own size in one step. Growth below it is never divergence.
    pub(crate) energy_floor: f64,
    /// Running maximum of the kinetic energy after each checked step (index 0: initial).
    pub(crate) energy_max: RunningMax,
}

/// The running maximum of a sequence, kept as the steps where it rose: memory grows with the
/// number of new maxima, not with the number of steps (a scene in a steady state stops rising).
#[derive(Clone, Debug, Default)]
pub(crate) struct RunningMax {
    len: usize,
    /// `(k, m)`: from index `k` on, the maximum is `m` (until the next rise).
    pub(crate) rises: Vec<(usize, f64)>,
}

impl RunningMax {
    /// Appends a value; the entry at the new index is the maximum so far.
    pub(crate) fn push(&mut self, value: f64) {
        match self.rises.last() {
            Some(&(_, m)) if value <= m => {}
            _ => self.rises.push((self.len, value)),
        }
        self.len += 1;
    }

    pub(crate) fn last(&self) -> Option<f64> {
        self.rises.last().map(|&(_, m)| m)
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The maximum of the values up to index `k` (`k < len`).
    pub(crate) fn at(&self, k: usize) -> f64 {
        let i = self.rises.partition_point(|&(start, _)| start <= k);
        self.rises[i - 1].1
    }

    /// Starts again from one value.
    pub(crate) fn reset(&mut self, value: f64) {
        self.rises.clear();
        self.len = 0;
        self.push(value);
    }
}

/// Looks at the scene at every step start, right after the components listening to the start
/// of the step (SOFA's AnimateBeginEvent: a TopologicalChangeProcessor) ran — where SOFA's
/// WriteTopology/CompareTopology, appended at the end of their node, see it.
pub trait StepProbe: std::any::Any + Send {
    fn after_animate_begin(&mut self, scene: &Scene);
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// Where [`Scene::graft`] put the nodes and components of the scene it took in.
#[derive(Clone, Debug, Default)]
pub struct Grafted {
    pub nodes: std::collections::HashMap<NodeId, NodeId>,
    pub components: std::collections::HashMap<ComponentId, ComponentId>,
}

impl Grafted {
    /// Where a moved Data holder went (`None` when it did not move).
    pub fn moved(&self, h: DataHolder) -> Option<DataHolder> {
        match h {
            DataHolder::Component(c) => self.components.get(&c).map(|c| DataHolder::Component(*c)),
            DataHolder::Node(n) => self.nodes.get(&n).map(|n| DataHolder::Node(*n)),
        }
    }
}

/// Points the Data links of `data` at their parents' new holders; a link whose parent is not
/// in `to`'s map any more is cut (its text stays).
fn relink_data(data: &mut DataSet, to: &dyn Fn(DataHolder) -> Option<DataHolder>) {
    for f in &mut data.fields {
        if let Some(link) = &mut f.link {
            match to(link.holder) {
                Some(h) => link.holder = h,
                None => f.link = None,
            }
        }
    }
}

/// A structural change deferred to the next sync point (a component removing a node while a
/// stage iterates over the nodes asks for it here instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deferred {
    RemoveComponent(ComponentId),
    RemoveNode(NodeId),
}

/// Live entries of the scene's arenas (what a run holds in memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveCounts {
    pub nodes: usize,
    pub components: usize,
    pub states: usize,
}

/// A uid no other scene of the process has (new scenes and copies take one).
pub(crate) fn next_uid() -> u64 {
    static NEXT_UID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Scene {
    pub fn new(root_name: &str) -> Scene {
        let mut nodes = Arena::new();
        let root = nodes.insert(Node {
            name: root_name.to_string(),
            parents: Vec::new(),
            children: Vec::new(),
            objects: Vec::new(),
            context: Context::default(),
            activated: true,
            tags: Vec::new(),
            pos: None,
            data: DataSet::default(),
        });
        debug_assert_eq!(root, Self::ROOT);
        Scene {
            uid: next_uid(),
            nodes,
            components: Arena::new(),
            store: StateStore::default(),
            messages: Vec::new(),
            data_path: Vec::new(),
            timers: StageTimers::default(),
            timing_enabled: false,
            stage_observer: None,
            animation_loop: None,
            initialized: false,
            factory: None,
            deferred: Vec::new(),
            live_data_pass: 0,
            lenient: false,
            total_force_contributor: None,
            output_dir: PathBuf::new(),
            started: false,
            divergence: Default::default(),
            step_probes: Vec::new(),
            structure_version: 0,
            topology_revision: 0,
            contacts: Default::default(),
            plan: Default::default(),
            spare_vectors: Vec::new(),
            spare_object_lists: Vec::new(),
        }
    }

    /// The root node: the first node of every scene, never removed.
    pub const ROOT: NodeId = NodeId::first_in_slot(0);

    pub fn root(&self) -> &Node {
        &self.nodes[Self::ROOT]
    }

    pub fn add_node(&mut self, parent: NodeId, name: &str) -> NodeId {
        let context = self.nodes[parent].context;
        let id = self.nodes.insert(Node {
            name: name.to_string(),
            parents: vec![parent],
            children: Vec::new(),
            objects: Vec::new(),
            context,
            activated: true,
            tags: Vec::new(),
            pos: None,
            data: DataSet::default(),
        });
        self.nodes[parent].children.push(id);
        self.touch();
        id
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id]
    }
    pub fn entry(&self, id: ComponentId) -> &ComponentEntry {
        &self.components[id]
    }
    pub fn entry_mut(&mut self, id: ComponentId) -> &mut ComponentEntry {
        &mut self.components[id]
    }

    /// Records a message.
    pub fn report(&mut self, d: Diagnostic) {
        match d.severity {
            Severity::Error => log::error!("{d}"),
            Severity::Warning => log::warn!("{d}"),
            Severity::Info => log::info!("{d}"),
        }
        self.messages.push(d);
    }

    pub fn has_errors(&self) -> bool {
        self.messages.iter().any(|m| m.severity == Severity::Error)
    }

    /// Path of a node from the root (`/root/child`).
    pub fn node_path(&self, id: NodeId) -> String {
        let mut parts = Vec::new();
        let mut cur = Some(id);
        while let Some(n) = cur {
            parts.push(self.nodes[n].name.clone());
            cur = self.nodes[n].parent();
        }
        parts.reverse();
        format!("/{}", parts.join("/"))
    }

    /// Whether `node` takes part in the simulation: it is activated, and so is a chain of
    /// parents up to a root (a deactivated node and its subtree are skipped, as in SOFA; a node
    /// with several parents is skipped only when all of them are).
    pub fn node_active(&self, node: NodeId) -> bool {
        match self.nodes.get(node) {
            Some(nd) if nd.activated => nd.parents.is_empty() || nd.parents.iter().any(|&p| self.node_active(p)),
            _ => false,
        }
    }

    /// Whether component `c` takes part in the simulation: it exists, it was initialised, and
    /// its node is active. The step's stages only reach such components.
    pub fn is_live(&self, c: ComponentId) -> bool {
        self.components.get(c).is_some_and(|e| e.initialized && e.obj.is_some() && self.node_active(e.node))
    }

    /// Active nodes below `start` (inclusive) in the walk's order ([`Scene::walk`]): depth-first
    /// pre-order, a node with several parents once, after all of them.
    pub fn preorder(&self, start: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        self.visit_preorder(start, &mut |n| out.push(n));
        out
    }

    /// A copy of node `n`'s object list, in a list the scene keeps (give it back with
    /// [`Scene::give_back_snapshot`]): a visit that lends the scene on to each object sees the
    /// objects the node had when it was reached, and allocates nothing once warm.
    pub fn objects_snapshot(&mut self, n: NodeId) -> Vec<ComponentId> {
        let mut list = self.spare_object_lists.pop().unwrap_or_default();
        list.clear();
        list.extend_from_slice(&self.nodes[n].objects);
        list
    }

    /// Gives back a list of [`Scene::objects_snapshot`].
    pub fn give_back_snapshot(&mut self, list: Vec<ComponentId>) {
        self.spare_object_lists.push(list);
    }

    /// Calls `f` on the active nodes of `start`'s subtree in pre-order (the order of
    /// [`Scene::preorder`], without a list: a compiled plan of a tree is remade without
    /// allocating). An inactive node is skipped with its subtree.
    pub fn visit_preorder(&self, start: NodeId, f: &mut impl FnMut(NodeId)) {
        self.walk(start, &mut |n, reach| {
            if reach == Reach::Enter {
                f(n);
            }
            Visit::Descend
        });
    }

    /// The one traversal of the graph, SOFA's `DAGNode` visit: depth-first from `start`,
    /// children in order, `f(n, Enter)` before the children and `f(n, Leave)` after them.
    /// Inactive nodes are skipped with what lies only below them. A node with several parents
    /// is entered once, when the last of its parents below `start` has been reached (parents
    /// outside `start`'s subtree are ignored), and skipped only when every one of them was
    /// skipped or pruned. On a tree this is the plain pre-order.
    pub fn walk(&self, start: NodeId, f: &mut impl FnMut(NodeId, Reach) -> Visit) {
        self.walk_nodes(start, false, f);
    }

    /// [`Scene::walk`] through inactive nodes too (structure: dumps, copies, moves).
    pub fn walk_all(&self, start: NodeId, f: &mut impl FnMut(NodeId, Reach) -> Visit) {
        self.walk_nodes(start, true, f);
    }

    /// [`Scene::walk`], with inactive nodes too when `all`.
    fn walk_nodes(&self, start: NodeId, all: bool, f: &mut impl FnMut(NodeId, Reach) -> Visit) {
        if self.nodes.values().all(|n| n.parents.len() < 2) {
            self.walk_tree(start, all, f);
            return;
        }
        // A DAG: statuses by slot, so a node knows whether all its parents were reached.
        let mut status = vec![Status::Outside; self.nodes.capacity()];
        let mut stack = vec![start];
        while let Some(n) = stack.pop() {
            if status[n.index()] == Status::Outside {
                status[n.index()] = Status::NotVisited;
                stack.extend(self.nodes[n].children.iter().copied());
            }
        }
        self.walk_dag(start, start, all, &mut status, f);
    }

    fn walk_tree(&self, n: NodeId, all: bool, f: &mut impl FnMut(NodeId, Reach) -> Visit) {
        let node = &self.nodes[n];
        if !all && !node.activated {
            return;
        }
        if f(n, Reach::Enter) == Visit::Descend {
            for &c in &node.children {
                self.walk_tree(c, all, f);
            }
        }
        f(n, Reach::Leave);
    }

    fn walk_dag(&self, n: NodeId, start: NodeId, all: bool, status: &mut [Status], f: &mut impl FnMut(NodeId, Reach) -> Visit) {
        if status[n.index()] != Status::NotVisited {
            return;
        }
        let node = &self.nodes[n];
        let mut reached = n == start;
        if !reached {
            for p in &node.parents {
                match status[p.index()] {
                    // Another parent below the start comes later: the node waits for it.
                    Status::NotVisited => return,
                    Status::Visited => reached = true,
                    Status::Outside | Status::Pruned => {}
                }
            }
        }
        if !reached || (!all && !node.activated) {
            // Not entered, but its children are marked so that a node below waiting for
            // another parent knows this one will not come.
            status[n.index()] = Status::Pruned;
            for &c in &node.children {
                self.walk_dag(c, start, all, status, f);
            }
            return;
        }
        let visit = f(n, Reach::Enter);
        status[n.index()] = if visit == Visit::Descend { Status::Visited } else { Status::Pruned };
        for &c in &node.children {
            self.walk_dag(c, start, all, status, f);
        }
        f(n, Reach::Leave);
    }

    /// Whether `ancestor` is `node` or lies above it through any chain of parents.
    pub fn is_ancestor(&self, ancestor: NodeId, node: NodeId) -> bool {
        node == ancestor || self.nodes[node].parents.iter().any(|&p| self.is_ancestor(ancestor, p))
    }

    /// Makes `parent` one more parent of the existing node `child` (SOFA's `addChild` of a node
    /// that already has a parent: the graph becomes a DAG). The first parent stays primary; a
    /// node without parent (detached) gets `parent` as its first. Refuses links that would make
    /// a cycle, a second link to the same parent, and the root (it stays a root).
    pub fn add_parent(&mut self, child: NodeId, parent: NodeId) -> SimResult {
        if child == Self::ROOT {
            return Err(SimError::new("the root node cannot be given a parent"));
        }
        if self.is_ancestor(child, parent) {
            return Err(SimError::new(format!(
                "node '{}' cannot be a child of '{}': it is one of its ancestors (the graph would have a cycle)",
                self.nodes[child].name, self.nodes[parent].name
            )));
        }
        if self.nodes[child].parents.contains(&parent) {
            return Err(SimError::new(format!("node '{}' is already a child of '{}'", self.nodes[child].name, self.nodes[parent].name)));
        }
        self.nodes[child].parents.push(parent);
        self.nodes[parent].children.push(child);
        self.touch();
        Ok(())
    }

    /// Cuts the link between `parent` and its child `child` only; the child keeps its other
    /// parents (a node left without any is detached, alive, and can be attached again).
    /// Returns false when they were not linked.
    pub fn remove_parent(&mut self, child: NodeId, parent: NodeId) -> bool {
        let Some(at) = self.nodes[child].parents.iter().position(|p| *p == parent) else { return false };
        self.nodes[child].parents.remove(at);
        self.nodes[parent].children.retain(|c| *c != child);
        self.touch();
        true
    }

    /// Runs `f` with component `id` taken out of its slot, so `f` may use the rest of the scene.
    pub fn with_taken<R>(&mut self, id: ComponentId, f: impl FnOnce(&mut dyn Component, &mut Scene) -> R) -> R {
        let mut obj =
            self.components[id].obj.take().unwrap_or_else(|| panic!("component {} is already in use (re-entrant call)", self.components[id].label()));
        let r = f(obj.as_mut(), self);
        // The call may have removed the component itself: then the object is dropped here.
        if let Some(e) = self.components.get_mut(id) {
            e.obj = Some(obj);
        }
        r
    }

    // ----- structural changes ----------------------------------------------------------------

    /// True while the component exists (an id of a removed component is stale).
    pub fn contains(&self, id: ComponentId) -> bool {
        self.components.contains(id)
    }

    pub fn contains_node(&self, id: NodeId) -> bool {
        self.nodes.contains(id)
    }

    /// Removes a component: out of its node, out of the arena, and its state out of the store.
    /// Returns false when the id is stale. Links of other components that pointed to it become
    /// stale too; whoever removes a component removes what depends on it.
    pub fn remove_component(&mut self, id: ComponentId) -> bool {
        let Some(entry) = self.components.remove(id) else { return false };
        self.touch();
        // No master or slave keeps a stale id: a removed slave leaves its master's list, the
        // slaves of a removed master have none any more.
        if let Some(m) = entry.master.and_then(|m| self.components.get_mut(m)) {
            m.slaves.retain(|s| *s != id);
        }
        for s in &entry.slaves {
            if let Some(e) = self.components.get_mut(*s) {
                e.master = None;
            }
        }
        self.contacts.forget(id);
        if let Some(node) = self.nodes.get_mut(entry.node) {
            node.objects.retain(|c| *c != id);
        }
        if let Some(s) = entry.state {
            self.store.states.remove(s);
        }
        if self.animation_loop == Some(id) {
            self.animation_loop = None;
        }
        true
    }

    /// Removes a node with its whole subtree (children first, components in reverse order of
    /// creation). A node below that has a parent outside the subtree stays, only losing its
    /// link to the removed part. The root cannot be removed. Returns false when the id is stale.
    pub fn remove_node(&mut self, id: NodeId) -> bool {
        assert!(id != Self::ROOT, "the root node cannot be removed");
        let Some(node) = self.nodes.get(id) else { return false };
        let (children, objects, parents) = (node.children.clone(), node.objects.clone(), node.parents.clone());
        for c in children.into_iter().rev() {
            if self.nodes[c].parents.len() > 1 {
                self.remove_parent(c, id);
            } else {
                self.remove_node(c);
            }
        }
        for c in objects.into_iter().rev() {
            self.remove_component(c);
        }
        for p in parents {
            if let Some(p) = self.nodes.get_mut(p) {
                p.children.retain(|c| *c != id);
            }
        }
        self.nodes.remove(id);
        self.touch();
        true
    }

    /// The component's bounding box, min corner then max corner (its `bbox` Data): for a
    /// mechanical state, the bounds of its positions as SOFA's `State::computeBBox` gives them
    /// (after init and after each step; SOFA's empty box for a state without points); for any
    /// other component, its `bbox` Data as it was given.
    pub fn bounding_box(&self, id: ComponentId) -> [f64; 6] {
        let e = &self.components[id];
        let Some(st) = e.state.and_then(|s| self.store.states.get(s)) else {
            let r = e.data.get(crate::graph::factory::BaseData::BBOX);
            return std::array::from_fn(|i| r.get(i).copied().unwrap_or(0.0));
        };
        let (mut lo, mut hi) = ([f64::MAX; 3], [-f64::MAX; 3]);
        let (k, dim) = (st.layout.coord_size(), st.layout.spatial_size());
        if st.size == 0 || !st.is_set(VecId::POSITION) {
            return [lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]];
        }
        for x in st.read(VecId::POSITION).chunks_exact(k) {
            for a in 0..3 {
                // A coordinate of fewer than 3 dimensions lies in the plane z = 0 (SOFA's `get`).
                let v = if a < dim { x[a] } else { 0.0 };
                lo[a] = lo[a].min(v);
                hi[a] = hi[a].max(v);
            }
        }
        [lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]]
    }

    /// Makes `slave` a slave of `master` (SOFA's `BaseObject::addSlave`): it leaves the master
    /// it had, and is appended to `master`'s slaves unless it is there already.
    pub fn add_slave(&mut self, master: ComponentId, slave: ComponentId) {
        if master == slave || self.components[slave].master == Some(master) {
            return;
        }
        if let Some(previous) = self.components[slave].master {
            self.components[previous].slaves.retain(|s| *s != slave);
        }
        self.components[slave].master = Some(master);
        self.components[master].slaves.push(slave);
        self.touch();
    }

    /// Takes a component out of its node's object list without destroying it (SOFA's
    /// `removeObject` of an object still referenced): it keeps its id, its state and its data,
    /// takes no part in the stages, and can be attached again. Returns false for a stale id.
    pub fn detach_component(&mut self, id: ComponentId) -> bool {
        let Some(entry) = self.components.get(id) else { return false };
        let node = entry.node;
        if let Some(n) = self.nodes.get_mut(node) {
            n.objects.retain(|c| *c != id);
        }
        self.touch();
        true
    }

    /// Appends a component to `node`'s objects (after detaching it from wherever it was), as
    /// SOFA's `addObject` moves an object.
    pub fn attach_component(&mut self, id: ComponentId, node: NodeId) {
        self.detach_component(id);
        self.components[id].node = node;
        self.nodes[node].objects.push(id);
        self.touch();
    }

    /// Moves the whole graph of `other`, a scene not yet initialised, under `parent`: its root
    /// becomes a child of `parent` and keeps its name, context and activation; its components
    /// keep their Data, link texts and states. What SOFA does when a script attaches a node it
    /// built on its own (`root.addChild(Sofa.Core.Node("child"))`, a loaded `.scn` file). The
    /// returned map gives every moved node's and component's new id.
    pub fn graft(&mut self, parent: NodeId, mut other: Scene) -> SimResult<Grafted> {
        if other.initialized {
            return Err(SimError::new(format!(
                "node '{}' is already initialised: only a node that was never initialised can be attached",
                other.root().name
            )));
        }
        let mut map = Grafted::default();
        // Nodes in the walk's order, so that a node's parents exist before it; the children
        // lists are rebuilt afterwards in their own order.
        let mut objects_of = Vec::new();
        let mut children_of = Vec::new();
        for old in other.subtree(Self::ROOT) {
            let mut n = other.nodes.remove(old).expect("the walk yields live nodes");
            let parents = if old == Self::ROOT { vec![parent] } else { n.parents.iter().filter_map(|p| map.nodes.get(p).copied()).collect() };
            let objects = std::mem::take(&mut n.objects);
            let children = std::mem::take(&mut n.children);
            let id = self.nodes.insert(Node { parents, ..n });
            objects_of.push((id, objects));
            children_of.push((id, children));
            map.nodes.insert(old, id);
        }
        self.nodes[parent].children.push(map.nodes[&Self::ROOT]);
        for (id, children) in children_of {
            self.nodes[id].children = children.iter().filter_map(|c| map.nodes.get(c).copied()).collect();
        }
        let old_components: Vec<ComponentId> = other.components.keys().collect();
        for old in old_components {
            let e = other.components.remove(old).expect("listed above");
            map.components.insert(old, self.components.insert(e));
        }
        for &id in map.components.values() {
            let e = &mut self.components[id];
            e.node = map.nodes.get(&e.node).copied().unwrap_or(parent);
            for l in &mut e.links {
                l.targets.retain_mut(|t| map.components.get(t).map(|n| *t = *n).is_some());
            }
            relink_data(&mut e.data, &|h| map.moved(h));
            if let Some(s) = e.state.take() {
                let mut st = other.store.states.remove(s).expect("a component's state lives in its scene's store");
                st.owner = id;
                st.node = e.node;
                e.state = Some(self.store.add(st));
            }
        }
        // Each node's objects in their order; components that were in no node's list (contact
        // objects) stay out of every list here too. Links of the nodes' own Data follow too.
        for (node, objects) in objects_of {
            self.nodes[node].objects = objects.iter().filter_map(|c| map.components.get(c).copied()).collect();
            relink_data(&mut self.nodes[node].data, &|h| map.moved(h));
        }
        self.messages.append(&mut other.messages);
        for d in other.data_path.drain(..) {
            if !self.data_path.contains(&d) {
                self.data_path.push(d);
            }
        }
        self.touch();
        Ok(map)
    }

    /// Every node below `start` (inclusive), active or not, in the walk's order (depth-first
    /// pre-order, a node with several parents once, after them).
    pub fn subtree(&self, start: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        self.walk_nodes(start, true, &mut |n, reach| {
            if reach == Reach::Enter {
                out.push(n);
            }
            Visit::Descend
        });
        out
    }

    /// Takes the subtree of `node` out of this scene, never initialised, into a scene of its own
    /// whose root it becomes: the inverse of [`Scene::graft`] (a script moving a node from one
    /// scene to another). Object and Data links between the subtree and the rest are cut; their
    /// texts stay, to be resolved at init where the subtree ends up. The map gives every moved
    /// node's and component's id in the new scene.
    pub fn prune(&mut self, node: NodeId) -> SimResult<(Scene, Grafted)> {
        if self.initialized {
            return Err(SimError::new("the scene is initialised: only a node of a scene never initialised can be moved to another scene"));
        }
        if node == Self::ROOT {
            return Err(SimError::new("a root node cannot be taken out of its scene"));
        }
        let mut out = Scene::new(&self.nodes[node].name);
        out.data_path = self.data_path.clone();
        out.factory = self.factory.clone();
        out.lenient = self.lenient;
        let moving = self.subtree(node);
        let leaving: std::collections::HashSet<NodeId> = moving.iter().copied().collect();
        // Links from parents that stay here to nodes that leave are cut.
        for &n in &moving {
            for p in self.nodes[n].parents.clone() {
                if n == node || !leaving.contains(&p) {
                    self.nodes[p].children.retain(|c| *c != n);
                }
            }
        }
        let mut map = Grafted::default();
        let mut objects_of = Vec::new();
        let mut children_of = Vec::new();
        for old in moving {
            let mut n = self.nodes.remove(old).expect("subtree yields live nodes");
            let objects = std::mem::take(&mut n.objects);
            let children = std::mem::take(&mut n.children);
            let id = if old == node {
                let root = &mut out.nodes[Self::ROOT];
                root.context = n.context;
                root.activated = n.activated;
                root.tags = n.tags;
                root.pos = n.pos;
                root.data = n.data;
                Self::ROOT
            } else {
                let parents = n.parents.iter().filter_map(|p| map.nodes.get(p).copied()).collect();
                out.nodes.insert(Node { parents, ..n })
            };
            objects_of.push((id, objects));
            children_of.push((id, children));
            map.nodes.insert(old, id);
        }
        for (id, children) in children_of {
            out.nodes[id].children = children.iter().filter_map(|c| map.nodes.get(c).copied()).collect();
        }
        let moving: Vec<ComponentId> = self.components.iter().filter(|(_, e)| map.nodes.contains_key(&e.node)).map(|(id, _)| id).collect();
        for old in moving {
            let e = self.components.remove(old).expect("listed above");
            map.components.insert(old, out.components.insert(e));
        }
        for &id in map.components.values() {
            let e = &mut out.components[id];
            e.node = map.nodes[&e.node];
            if let Some(s) = e.state.take() {
                let mut st = self.store.states.remove(s).expect("a component's state lives in its scene's store");
                st.owner = id;
                st.node = e.node;
                e.state = Some(out.store.add(st));
            }
        }
        // Links now crossing the two scenes are cut on both sides; links inside the subtree
        // follow the new ids.
        let relink = |e: &mut ComponentEntry, to: &dyn Fn(ComponentId) -> Option<ComponentId>, data: &dyn Fn(DataHolder) -> Option<DataHolder>| {
            for l in &mut e.links {
                l.targets.retain_mut(|t| to(*t).map(|n| *t = n).is_some());
            }
            relink_data(&mut e.data, data);
        };
        let staying = |h: DataHolder| match h {
            DataHolder::Component(c) => (!map.components.contains_key(&c)).then_some(h),
            DataHolder::Node(n) => (!map.nodes.contains_key(&n)).then_some(h),
        };
        for (_, e) in out.components.iter_mut() {
            relink(e, &|c| map.components.get(&c).copied(), &|h| map.moved(h));
        }
        for (_, e) in self.components.iter_mut() {
            relink(e, &|c| (!map.components.contains_key(&c)).then_some(c), &staying);
        }
        for (_, n) in self.nodes.iter_mut() {
            relink_data(&mut n.data, &staying);
        }
        for (n, objects) in objects_of {
            out.nodes[n].objects = objects.iter().filter_map(|c| map.components.get(c).copied()).collect();
            relink_data(&mut out.nodes[n].data, &|h| map.moved(h));
        }
        self.touch();
        out.touch();
        Ok((out, map))
    }

    /// Adds a component built by code, of class `class`, that belongs to no node's object list:
    /// a contact response's mapping, force field or law, which the step plan places through
    /// [`Scene::contacts`]. `node` is its context (gravity, time step, messages). The object
    /// is neither parsed nor initialised; its Data hold their defaults.
    pub fn insert_unattached(
        &mut self,
        node: NodeId,
        class: &'static ComponentClass,
        obj: Box<dyn Component>,
        layout: Option<Layout>,
        name: &str,
    ) -> ComponentId {
        let arity = layout.map(|l| l.arity()).unwrap_or(crate::data::TemplateArity { coord: 3, deriv: 3 });
        let mut tables: Vec<&'static [crate::data::DataDecl]> = vec![crate::factory::BASE_DATA];
        tables.extend_from_slice(class.data);
        let mut data = DataSet::from_decls(&tables, arity);
        data.families = class.families;
        let _ = data.resize_families();
        data.put(crate::factory::BaseData::NAME, name.to_string());
        let id = self.components.insert(ComponentEntry {
            template: layout.map(|l| l.name().to_string()).unwrap_or_default(),
            layout,
            name: name.to_string(),
            ..ComponentEntry::new(class, node, data, Some(obj))
        });
        self.touch();
        id
    }

    /// Sets the targets of an object link from code (the link then has no text to resolve).
    pub fn set_link_targets(&mut self, comp: ComponentId, name: &str, targets: Vec<ComponentId>) -> SimResult {
        let e = &mut self.components[comp];
        let label = e.label();
        let l = e.links.iter_mut().find(|l| l.decl.name == name).ok_or_else(|| SimError::new(format!("{label} has no link '{name}'")))?;
        l.text = None;
        l.targets = targets;
        Ok(())
    }

    /// Asks for a structural change at the next sync point.
    pub fn defer(&mut self, change: Deferred) {
        self.deferred.push(change);
    }

    /// Applies the deferred changes in the order they were asked for (stale ids are skipped:
    /// a node removed first takes its components with it).
    pub fn apply_deferred(&mut self) {
        for change in std::mem::take(&mut self.deferred) {
            match change {
                Deferred::RemoveComponent(c) => {
                    self.remove_component(c);
                }
                Deferred::RemoveNode(n) => {
                    if n != Self::ROOT {
                        self.remove_node(n);
                    }
                }
            }
        }
    }

    /// Creates a component while the scene runs, through the scene's factory, from a class name
    /// and text attributes as a scene file would give them. The component is parsed but not
    /// initialised: initialise it (and whatever else was created with it) with
    /// [`crate::simulation::init_components`].
    pub fn create_component(&mut self, node: NodeId, class: &str, template: Option<&str>, attrs: &[(&str, &str)]) -> SimResult<ComponentId> {
        let factory = self.factory.clone().ok_or_else(|| SimError::new(format!("cannot create a {class}: the scene has no factory")))?;
        let before = self.messages.len();
        let attrs = attrs.iter().map(|(n, v)| Attr { name: n.to_string(), value: v.to_string(), pos: None }).collect();
        let created = factory.create(self, node, class, template, attrs, None, Path::new("."));
        let first_error = self.messages[before..].iter().find(|m| m.severity == Severity::Error).cloned();
        match (created, first_error) {
            (Some(id), None) => Ok(id),
            (created, error) => {
                if let Some(id) = created {
                    self.remove_component(id);
                }
                Err(SimError(Box::new(error.unwrap_or_else(|| Diagnostic::error(format!("the factory could not create a {class}"))))))
            }
        }
    }

    /// How many nodes, components and states are alive.
    pub fn live_counts(&self) -> LiveCounts {
        LiveCounts { nodes: self.nodes.len(), components: self.components.len(), states: self.store.states.len() }
    }

    /// The object of a component (panics if it is currently taken out, which is a bug).
    pub fn obj(&self, id: ComponentId) -> &dyn Component {
        self.components[id].obj.as_deref().expect("component taken out")
    }
    pub fn obj_mut(&mut self, id: ComponentId) -> &mut dyn Component {
        self.components[id].obj.as_deref_mut().expect("component taken out")
    }

    /// Component `id` as role `R` (`None` when its class does not play it, or while it is taken
    /// out).
    pub fn role<R: ?Sized + 'static>(&self, id: ComponentId) -> Option<&R> {
        self.components.get(id)?.role::<R>()
    }

    /// Component `id` as role `R`, mutably.
    pub fn role_mut<R: ?Sized + 'static>(&mut self, id: ComponentId) -> Option<&mut R> {
        self.components.get_mut(id)?.role_mut::<R>()
    }

    /// Runs `f` with component `id` taken out of its slot and viewed as role `R`, so `f` may use
    /// the rest of the scene (a solver calling the mechanical stages). Stages call it on
    /// components their plan lists for that role: a component that does not play it is a bug.
    pub fn with_role<R: ?Sized + 'static, T>(&mut self, id: ComponentId, f: impl FnOnce(&mut R, &mut Scene) -> T) -> T {
        let class = self.components[id].class;
        self.with_taken(id, |obj, scene| {
            let r = class.cast_mut::<R>(obj).unwrap_or_else(|| panic!("{} does not play the role {}", class.name, std::any::type_name::<R>()));
            f(r, scene)
        })
    }

    /// Downcasts a component's object.
    pub fn get<T: 'static>(&self, id: ComponentId) -> Option<&T> {
        self.components[id].obj.as_ref().and_then(|o| o.as_any().downcast_ref::<T>())
    }

    /// Downcasts a component's object, mutably.
    pub fn get_mut<T: 'static>(&mut self, id: ComponentId) -> Option<&mut T> {
        self.components[id].obj.as_mut().and_then(|o| o.as_any_mut().downcast_mut::<T>())
    }

    // ----- lookups -------------------------------------------------------------------------

    /// First component of `node` (creation order) playing `role`.
    pub fn find_local(&self, node: NodeId, role: RoleId) -> Option<ComponentId> {
        self.nodes[node].objects.iter().copied().find(|c| self.components[c].plays(role))
    }

    /// Last component of `node` playing `role` (SOFA's single slots: the last added wins).
    pub fn slot(&self, node: NodeId, role: RoleId) -> Option<ComponentId> {
        self.nodes[node].objects.iter().rev().copied().find(|c| self.components[c].plays(role))
    }

    /// SOFA's `SearchUp`: local, then each parent in order, recursively.
    pub fn find_up(&self, node: NodeId, role: RoleId) -> Option<ComponentId> {
        self.find_local(node, role).or_else(|| self.nodes[node].parents.iter().find_map(|&p| self.find_up(p, role)))
    }

    /// SOFA's `SearchDown`: local, then children depth-first.
    pub fn find_down(&self, node: NodeId, role: RoleId) -> Option<ComponentId> {
        self.preorder(node).into_iter().find_map(|n| self.find_local(n, role))
    }

    /// The context mechanical state of a node: its slot, else the first state of the nearest
    /// ancestor that has one.
    pub fn context_state(&self, node: NodeId) -> Option<ComponentId> {
        self.slot(node, role::MECHANICAL_STATE).or_else(|| self.nodes[node].parents.iter().find_map(|&p| self.find_up(p, role::MECHANICAL_STATE)))
    }

    /// The context topology of a node: its slot, else the nearest ancestor's (parents in order).
    pub fn context_topology(&self, node: NodeId) -> Option<ComponentId> {
        self.slot(node, role::TOPOLOGY).or_else(|| self.nodes[node].parents.iter().find_map(|&p| self.context_topology(p)))
    }

    /// The state id of a mechanical-state component.
    pub fn state_of(&self, c: ComponentId) -> Option<StateId> {
        self.components[c].state
    }

    pub fn mesh_of(&self, c: ComponentId) -> Option<&MeshData> {
        self.components[c].role::<dyn role::Topology>().map(|t| t.mesh())
    }

    /// Simulation parameters seen from a node.
    pub fn params(&self, node: NodeId) -> MechParams {
        let c = &self.nodes[node].context;
        MechParams { dt: c.dt, time: c.time, gravity: c.gravity }
    }

    /// Copies gravity, dt, time and animate from the root down to every node, each from its
    /// first parent, then lets the node's context objects (`Gravity`) change it.
    pub fn propagate_context(&mut self) {
        // Parents come before their children in the preorder (the compiled one: this runs at
        // every step's end).
        for &n in self.preorder_plan().iter() {
            if let Some(p) = self.nodes[n].parent() {
                self.nodes[n].context = self.nodes[p].context;
            }
            self.apply_context_objects(n);
        }
    }

    /// Applies the context objects of `node` to its context, in creation order.
    pub fn apply_context_objects(&mut self, node: NodeId) {
        let mut context = self.nodes[node].context;
        for c in &self.nodes[node].objects {
            if let Some(o) = self.components[*c].role::<dyn role::ContextObject>() {
                o.apply(&mut context);
            }
        }
        self.nodes[node].context = context;
    }

    /// Where a component writes an output file named `name` in the scene: absolute names as
    /// given, relative ones under [`Scene::output_dir`].
    pub fn output_file(&self, name: &str) -> PathBuf {
        self.output_dir.join(name)
    }

    /// Resolves a file name as SOFA's data repository does: the component's directory, then the
    /// data path.
    pub fn resolve_file(&self, comp: ComponentId, name: &str) -> Option<PathBuf> {
        resolve_data_file(name, &self.components[comp].dir, &self.data_path)
    }

    // ----- paths -------------------------------------------------------------------------------

    /// Resolves an object path (without the leading `@`) from `node`, as SOFA's link resolution
    /// does. `owner` anchors index links (`[-1]`). `want` is the role the target must play
    /// (`None`: any component, or a node).
    pub fn resolve_path(&self, node: NodeId, path: &str, owner: Option<ComponentId>, want: Option<RoleId>) -> Option<LinkTarget> {
        let path = path.trim();
        if path.is_empty() || path == "[]" {
            return owner.map(LinkTarget::Component);
        }
        if let Some(inner) = path.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
            let k: i64 = inner.trim().parse().ok()?;
            let objs = &self.nodes[node].objects;
            let start = owner.and_then(|o| objs.iter().position(|c| *c == o)).unwrap_or(objs.len().saturating_sub(1)) as i64;
            let back = if k > 0 { 0 } else { -k };
            let i = start - back;
            return if i >= 0 { Some(LinkTarget::Component(objs[i as usize])) } else { None };
        }
        let mut cur = node;
        let mut master: Option<ComponentId> = None;
        let mut based = false;
        let mut rest = path;
        if let Some(r) = path.strip_prefix('/') {
            cur = Self::ROOT;
            based = true;
            rest = r;
        }
        for seg in rest.split('/') {
            match seg {
                "" => {}
                "." => based = true,
                ".." => {
                    if master.is_some() {
                        return None;
                    }
                    cur = self.nodes[cur].parent()?;
                    based = true;
                }
                name => {
                    if master.is_some() {
                        return None; // slaves of components are not modelled
                    }
                    loop {
                        let n = &self.nodes[cur];
                        if let Some(child) = n.children.iter().find(|c| self.nodes[**c].name == name) {
                            cur = *child;
                            break;
                        }
                        if let Some(c) = n.objects.iter().find(|c| self.components[**c].name == name) {
                            master = Some(*c);
                            break;
                        }
                        if based {
                            return None;
                        }
                        cur = n.parent()?;
                    }
                    based = true;
                }
            }
        }
        let Some(want) = want else {
            return Some(master.map_or(LinkTarget::Node(cur), LinkTarget::Component));
        };
        if let Some(m) = master {
            return self.components[m].plays(want).then_some(LinkTarget::Component(m));
        }
        let mut matching = self.nodes[cur].objects.iter().copied().filter(|c| self.components[c].plays(want));
        match (matching.next(), matching.next()) {
            (Some(c), None) => Some(LinkTarget::Component(c)),
            (None, _) if want == role::MECHANICAL_STATE => self.context_state(cur).map(LinkTarget::Component),
            (None, _) if want == role::TOPOLOGY => self.context_topology(cur).map(LinkTarget::Component),
            _ => None,
        }
    }

    /// Resolves the path of a mapping's `input` or `output` (without `@`) to a state: a
    /// mechanical state or, when `visual_ok`, a visual model (SOFA's `State<T>` links). A path
    /// designating a node takes its mechanical state, else (with `visual_ok`) its visual model,
    /// else the context state of that node (SOFA's defaults `@../` and `@./`).
    pub fn resolve_state_path(&self, node: NodeId, path: &str, owner: Option<ComponentId>, visual_ok: bool) -> Option<ComponentId> {
        let is_state = |c: ComponentId| {
            let e = &self.components[c];
            e.plays(role::MECHANICAL_STATE) || (visual_ok && e.plays(role::VISUAL_MODEL))
        };
        match self.resolve_path(node, path, owner, None)? {
            LinkTarget::Component(c) => is_state(c).then_some(c),
            LinkTarget::Node(n) => self
                .slot(n, role::MECHANICAL_STATE)
                .or_else(|| if visual_ok { self.slot(n, role::VISUAL_MODEL) } else { None })
                .or_else(|| self.context_state(n)),
        }
    }

    /// SOFA's node-path lookup used by `src=`: `/` from the root, `..` stays at the root, a final
    /// name is searched only among the components of the node reached.
    pub fn resolve_src(&self, node: NodeId, path: &str) -> Option<ComponentId> {
        let mut cur = node;
        let mut rest = path;
        if let Some(r) = rest.strip_prefix('/') {
            cur = Self::ROOT;
            rest = r;
        }
        let segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        for (i, seg) in segs.iter().enumerate() {
            let last = i + 1 == segs.len();
            match *seg {
                "." => {}
                ".." => cur = self.nodes[cur].parent().unwrap_or(cur),
                name if last => {
                    return self.nodes[cur].objects.iter().copied().find(|c| self.components[*c].name == name);
                }
                name => {
                    cur = *self.nodes[cur].children.iter().find(|c| self.nodes[**c].name == name)?;
                }
            }
        }
        None
    }

    // ----- data ----------------------------------------------------------------------------------

    /// The current value of a Data field; the vectors of an initialised mechanical state are read
    /// from the store.
    pub fn read_data(&self, comp: ComponentId, field: usize) -> Value {
        let e = &self.components[comp];
        let f = &e.data.fields[field];
        if let (true, Some(s)) = (e.initialized, e.state) {
            if let Some(id) = vec_id_of_data(f.decl.name) {
                let st = self.store.get(s);
                let arity = st.elem_size(id.kind);
                return Value::Reals { arity, v: st.read(id).to_vec() };
            }
        }
        f.value.clone()
    }

    /// The Data set of a component or node (`None` when it is gone).
    pub fn data_set(&self, holder: DataHolder) -> Option<&DataSet> {
        match holder {
            DataHolder::Component(c) => self.components.get(c).map(|e| &e.data),
            DataHolder::Node(n) => self.nodes.get(n).map(|n| &n.data),
        }
    }

    pub fn data_set_mut(&mut self, holder: DataHolder) -> Option<&mut DataSet> {
        match holder {
            DataHolder::Component(c) => self.components.get_mut(c).map(|e| &mut e.data),
            DataHolder::Node(n) => self.nodes.get_mut(n).map(|n| &mut n.data),
        }
    }

    /// The field `at` points to (`None` when its holder or the field is gone).
    pub fn data_field(&self, at: DataLinkTarget) -> Option<&DataField> {
        self.data_set(at.holder)?.fields.get(at.field)
    }

    /// The current value of the Data `at` ([`Scene::read_data`] for a component's).
    pub fn read_data_at(&self, at: DataLinkTarget) -> Option<Value> {
        self.data_field(at)?;
        Some(match at.holder {
            DataHolder::Component(c) => self.read_data(c, at.field),
            DataHolder::Node(n) => self.nodes[n].data.fields[at.field].value.clone(),
        })
    }

    /// The version of the Data `at` ([`Scene::data_version`] for a component's).
    pub fn version_at(&self, at: DataLinkTarget) -> Option<u64> {
        match at.holder {
            DataHolder::Component(c) => self.data_version(c, at.field),
            DataHolder::Node(_) => self.data_field(at).map(|f| f.version),
        }
    }

    /// Copies the value of every linked Data of `comp` from its parent (at creation and init).
    pub fn pull_links(&mut self, comp: ComponentId) {
        self.pull_links_if(comp, true);
    }

    /// Copies the value of the linked Data of `comp` whose parent changed since they last pulled
    /// it; returns whether any did. SOFA pulls linked values lazily when they are read; Settee
    /// pulls once per step ([`crate::simulation::update_live_data`]) and tells the component.
    pub fn refresh_links(&mut self, comp: ComponentId) -> bool {
        self.pull_links_if(comp, false)
    }

    fn pull_links_if(&mut self, comp: ComponentId, always: bool) -> bool {
        let mut changed = false;
        let n = self.components[comp].data.fields.len();
        for i in 0..n {
            changed |= self.pull_field(DataLinkTarget::component(comp, i), always);
        }
        changed
    }

    /// Copies the parent's value into the linked Data `at` when `always` or when the parent
    /// changed since the last pull; returns whether the value changed.
    fn pull_field(&mut self, at: DataLinkTarget, always: bool) -> bool {
        let Some(f) = self.data_field(at) else { return false };
        let Some(parent) = f.link else { return false };
        let seen = f.seen;
        let Some(parent_version) = self.version_at(parent) else { return false };
        if !always && seen == Some(parent_version) {
            return false;
        }
        let Some(src) = self.read_data_at(parent) else { return false };
        let data = self.data_set_mut(at.holder).expect("checked above");
        let arity = data.arity();
        let f = &mut data.fields[at.field];
        f.seen = Some(parent_version);
        match convert_value(&src, f.decl.kind, arity, &f.value) {
            Some(v) => {
                if f.value != v {
                    f.value = v;
                    f.version += 1;
                    return true;
                }
            }
            None => {
                let message = format!("Data '{}' cannot take the value of its link {}", f.decl.name, f.link_text.clone().unwrap_or_default());
                let d = match at.holder {
                    DataHolder::Component(c) => {
                        let e = &self.components[c];
                        Diagnostic::warning(message).at(e.pos.clone()).subject(e.label())
                    }
                    DataHolder::Node(n) => {
                        Diagnostic::warning(message).at(self.nodes[n].pos.clone()).subject(format!("Node '{}'", self.node_path(n)))
                    }
                };
                self.report(d);
            }
        }
        false
    }

    /// The Data `at` and the ones it follows through links, nearest first (a loop or a chain
    /// longer than 64 is cut).
    pub fn data_chain(&self, at: DataLinkTarget) -> Vec<DataLinkTarget> {
        let mut chain = vec![at];
        let mut cur = at;
        while let Some(l) = self.data_field(cur).and_then(|f| f.link) {
            if chain.len() > 64 || chain.contains(&l) || self.data_field(l).is_none() {
                break;
            }
            chain.push(l);
            cur = l;
        }
        chain
    }

    /// SOFA's `isDirty`: the Data follows a parent whose value changed since it was last
    /// pulled, directly or further up its chain of links (SOFA marks every Data downstream of a
    /// change dirty; Settee compares versions instead, which gives the same answer).
    pub fn data_is_dirty(&self, at: DataLinkTarget) -> bool {
        let chain = self.data_chain(at);
        chain.windows(2).any(|w| {
            let seen = self.data_field(w[0]).and_then(|f| f.seen);
            seen.is_none() || seen != self.version_at(w[1])
        })
    }

    /// SOFA's `updateIfDirty`: when the Data is dirty, its chain of links is pulled, farthest
    /// parent first, so that each Data takes its parent's current value converted to its own
    /// type. Returns whether the value of `at` changed.
    pub fn update_data_if_dirty(&mut self, at: DataLinkTarget) -> bool {
        if !self.data_is_dirty(at) {
            return false;
        }
        let chain = self.data_chain(at);
        let mut changed = false;
        for &d in chain.iter().rev().skip(1) {
            changed = self.pull_field(d, false);
        }
        changed
    }

    /// The version of a Data field: its own counter, or for the vectors of an initialised
    /// mechanical state, the state's revision. `None` when the component is gone.
    pub fn data_version(&self, comp: ComponentId, field: usize) -> Option<u64> {
        let e = self.components.get(comp)?;
        let f = e.data.fields.get(field)?;
        if let (true, Some(s)) = (e.initialized, e.state) {
            if vec_id_of_data(f.decl.name).is_some() {
                return self.store.states.get(s).map(|st| st.revision);
            }
        }
        Some(f.version)
    }

    /// Resolves a Data path (`path/to/object.data`, `path/to/node.data`, `/.data` for a Data of
    /// the root node; without the leading `@`) from `node`, as SOFA resolves a Data link.
    /// Only the Data in Data sets are found (not a node's name or context).
    pub fn resolve_data_path(&self, node: NodeId, text: &str, owner: Option<ComponentId>) -> Option<DataLinkTarget> {
        let (path, data) = crate::factory::split_data_link(text)?;
        let holder = match self.resolve_path(node, path, owner, None)? {
            LinkTarget::Component(c) => DataHolder::Component(c),
            LinkTarget::Node(n) => DataHolder::Node(n),
        };
        let field = self.data_set(holder)?.index_of(data)?;
        Some(DataLinkTarget { holder, field })
    }

    /// SOFA's `setParent` from a script: the Data `child` follows `parent` from now on. As in
    /// SOFA the child is dirty until it is next updated (nothing is copied now) and counts as
    /// set; `text` is the link as written, for messages. A link that would close a loop is
    /// refused.
    pub fn set_data_parent(&mut self, child: DataLinkTarget, parent: DataLinkTarget, text: &str) -> SimResult {
        if self.data_field(parent).is_none() {
            return Err(SimError::new(format!("the parent Data of the link {text} is gone")));
        }
        if self.data_chain(parent).contains(&child) {
            return Err(SimError::new(format!("linking to {text} would make a loop of Data links")));
        }
        let f = self.data_set_mut(child.holder).and_then(|d| d.fields.get_mut(child.field)).ok_or_else(|| SimError::new("the Data is gone"))?;
        f.link = Some(parent);
        f.link_text = Some(text.to_string());
        f.seen = None;
        f.is_set = true;
        f.version += 1;
        Ok(())
    }

    /// Links Data `field` of `comp` to Data `parent_field` of `parent` (what a component does
    /// for a default input, as SOFA's `setParent`): the value is pulled now and whenever the
    /// parent changes.
    pub fn link_data(&mut self, comp: ComponentId, field: &str, parent: ComponentId, parent_field: &str) -> SimResult {
        let pf = self.components[parent]
            .data
            .index_of(parent_field)
            .ok_or_else(|| SimError::new(format!("{} has no Data '{parent_field}'", self.components[parent].label())))?;
        let label = self.components[parent].name.clone();
        let e = &mut self.components[comp];
        let fi = e.data.index_of(field).ok_or_else(|| SimError::new(format!("{} has no Data '{field}'", e.label())))?;
        let f = &mut e.data.fields[fi];
        f.link = Some(DataLinkTarget::component(parent, pf));
        f.link_text = Some(format!("@{label}.{parent_field}"));
        f.seen = None;
        self.pull_links(comp);
        Ok(())
    }

    /// The components whose Data feed linked Data of `comp`.
    pub fn data_parents(&self, comp: ComponentId) -> Vec<ComponentId> {
        let mut out: Vec<ComponentId> = Vec::new();
        for f in &self.components[comp].data.fields {
            if let Some(c) = f.link.and_then(|l| l.owner_component()) {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// Resolves every object link of every component (run once after creation, so forward
    /// references work as in SOFA).
    pub fn resolve_all_links(&mut self) {
        let all: Vec<ComponentId> = self.components.keys().collect();
        self.resolve_links(&all);
    }

    /// Resolves the object links of the given components.
    pub fn resolve_links(&mut self, comps: &[ComponentId]) {
        for &cid in comps {
            let ci = cid;
            let node = self.components[ci].node;
            for li in 0..self.components[ci].links.len() {
                let (text, decl, pos) = {
                    let l = &self.components[ci].links[li];
                    (l.text.clone(), l.decl, l.pos.clone())
                };
                let Some(text) = text else { continue };
                let mut targets = Vec::new();
                for word in text.split_whitespace() {
                    let path = word.strip_prefix('@').unwrap_or(word);
                    let want = decl.target;
                    let found = self.resolve_path(node, path, Some(cid), want).or_else(|| {
                        // A node without the role: its ancestors', for links that search up.
                        let role = want.filter(|_| decl.search_up)?;
                        match self.resolve_path(node, path, Some(cid), None)? {
                            LinkTarget::Node(n) => self.find_up(n, role).map(LinkTarget::Component),
                            LinkTarget::Component(_) => None,
                        }
                    });
                    match found {
                        Some(LinkTarget::Component(c)) => targets.push(c),
                        Some(LinkTarget::Node(n)) if decl.to_node_or_state => {
                            if let Some(s) = self.slot(n, role::MECHANICAL_STATE) {
                                targets.push(s)
                            }
                        }
                        _ => {
                            let label = self.components[ci].label();
                            self.report(
                                Diagnostic::error(format!("link '{}' = \"{}\" points to nothing", decl.name, word))
                                    .at(pos.clone())
                                    .subject(label)
                                    .hint("paths are relative to the component's node: `@name`, `@../name`, `@/root/child/name`, `@[-1]`"),
                            );
                        }
                    }
                }
                self.components[ci].links[li].targets = targets;
            }
        }
    }

    /// Targets of the link `name` of `comp` (empty when unset).
    pub fn link_targets(&self, comp: ComponentId, name: &str) -> &[ComponentId] {
        self.components[comp].links.iter().find(|l| l.decl.name == name).map(|l| l.targets.as_slice()).unwrap_or(&[])
    }

    pub fn link_is_set(&self, comp: ComponentId, name: &str) -> bool {
        self.components[comp].links.iter().any(|l| l.decl.name == name && l.text.is_some())
    }

    // ----- state helpers -----------------------------------------------------------------------

    /// Reads a state vector.
    pub fn vec(&self, s: StateId, id: VecId) -> &[f64] {
        self.store.get(s).read(id)
    }
}

/// Maps a MechanicalObject Data name to the state vector it exposes.
pub fn vec_id_of_data(name: &str) -> Option<VecId> {
    Some(match name {
        "position" => VecId::POSITION,
        "rest_position" => VecId::REST_POSITION,
        "free_position" => VecId::FREE_POSITION,
        "reset_position" => VecId::RESET_POSITION,
        "velocity" => VecId::VELOCITY,
        "reset_velocity" => VecId::RESET_VELOCITY,
        "free_velocity" => VecId::FREE_VELOCITY,
        "force" => VecId::FORCE,
        "externalForce" => VecId::EXTERNAL_FORCE,
        "derivX" => VecId::DX,
        _ => return None,
    })
}

/// Gives an error the component's label and scene position when it has none.
pub fn positioned(scene: &Scene, c: ComponentId, mut e: SimError) -> SimError {
    if !scene.contains(c) {
        return e;
    }
    if e.0.subject.is_none() {
        e.0.subject = Some(scene.entry(c).label());
    }
    if e.0.pos.is_none() {
        e.0.pos = scene.entry(c).pos.clone();
    }
    e
}

/// SOFA's data-file lookup: `dir/name`; absolute names only as given; otherwise each data-path
/// directory in turn.
pub fn resolve_data_file(name: &str, dir: &Path, data_path: &[PathBuf]) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.exists().then(|| p.to_path_buf());
    }
    let local = dir.join(p);
    if local.exists() {
        return Some(local);
    }
    data_path.iter().map(|d| d.join(p)).find(|c| c.exists())
}

/// The context given to a component while it is created or initialised: the scene (with the
/// component taken out of its slot) and the component's id.
pub struct InitCtx<'a> {
    pub scene: &'a mut Scene,
    pub id: ComponentId,
}

impl InitCtx<'_> {
    pub fn entry(&self) -> &ComponentEntry {
        self.scene.entry(self.id)
    }
    pub fn data(&self) -> &DataSet {
        &self.scene.components[self.id].data
    }
    pub fn data_mut(&mut self) -> &mut DataSet {
        &mut self.scene.components[self.id].data
    }
    pub fn node(&self) -> NodeId {
        self.scene.components[self.id].node
    }
    pub fn params(&self) -> MechParams {
        self.scene.params(self.node())
    }
    pub fn label(&self) -> String {
        self.entry().label()
    }

    /// An error about this component, positioned at its element.
    pub fn error(&self, message: impl Into<String>) -> SimError {
        let e = self.entry();
        SimError(Box::new(Diagnostic::error(message).at(e.pos.clone()).subject(e.label())))
    }

    pub fn warn(&mut self, message: impl Into<String>) {
        let e = self.entry();
        let d = Diagnostic::warning(message).at(e.pos.clone()).subject(e.label());
        self.scene.report(d);
    }

    /// The mechanical state this component attaches to: its `mstate` link if set, else the
    /// context state of its node.
    pub fn mstate(&self) -> Option<ComponentId> {
        if let Some(t) = self.scene.link_targets(self.id, "mstate").first() {
            return Some(*t);
        }
        self.scene.context_state(self.node())
    }

    /// Like [`InitCtx::mstate`] but returns the store id, or an error naming what is missing.
    pub fn require_state(&self) -> SimResult<StateId> {
        self.mstate()
            .and_then(|c| self.scene.state_of(c))
            .ok_or_else(|| self.error("no mechanical state found in this node or its ancestors").hint("add a MechanicalObject before this component"))
    }

    /// The topology this component reads: its `topology` link if set, else the context topology.
    pub fn topology(&self) -> Option<ComponentId> {
        if let Some(t) = self.scene.link_targets(self.id, "topology").first() {
            return Some(*t);
        }
        self.scene.context_topology(self.node())
    }

    /// The mesh of [`InitCtx::topology`], or an error naming what is missing.
    pub fn require_mesh(&self) -> SimResult<MeshData> {
        let t = self.topology().ok_or_else(|| {
            self.error("no topology found in this node or its ancestors")
                .hint("add a topology container (e.g. MeshTopology, RegularGridTopology) or set `topology=\"@...\"`")
        })?;
        self.scene.mesh_of(t).cloned().ok_or_else(|| self.error(format!("{} provides no mesh", self.scene.entry(t).label())))
    }

    pub fn link_targets(&self, name: &str) -> Vec<ComponentId> {
        self.scene.link_targets(self.id, name).to_vec()
    }

    /// Resolves a file name of this component.
    pub fn resolve_file(&self, name: &str) -> SimResult<PathBuf> {
        self.scene.resolve_file(self.id, name).ok_or_else(|| {
            let dir = self.entry().dir.display().to_string();
            let dp: Vec<String> = self.scene.data_path.iter().map(|d| d.display().to_string()).collect();
            self.error(format!("file '{name}' not found"))
                .hint(format!("searched {dir} and the data path [{}]; add directories with --data-dir or SOFA_DATA_PATH", dp.join(", ")))
        })
    }

    /// The size (number of elements) of a state.
    pub fn state_size(&self, s: StateId) -> usize {
        self.scene.store.get(s).size
    }

    pub fn state_layout(&self, s: StateId) -> Layout {
        self.scene.store.get(s).layout
    }

    pub fn read_vec(&self, s: StateId, id: VecId) -> &[f64] {
        self.scene.store.get(s).read(id)
    }

    /// Rest positions of a state, falling back to positions when unset.
    pub fn rest_or_position(&self, s: StateId) -> Vec<f64> {
        let st = self.scene.store.get(s);
        if st.is_set(VecId::REST_POSITION) {
            st.read(VecId::REST_POSITION).to_vec()
        } else {
            st.read(VecId::POSITION).to_vec()
        }
    }
}

#[cfg(test)]
mod data_link_tests {
    use super::*;
    use crate::data::{decl, DataDecl, DataKind, TemplateArity};
    use crate::graph::component::{CreateArgs, TemplateRule};

    static NODE_REAL: DataDecl = decl("k", DataKind::Real, "", "");
    static NODE_INT: DataDecl = decl("n", DataKind::Int, "", "");
    static NODE_INT2: DataDecl = decl("m", DataKind::Int, "", "");
    static TABLE: &[DataDecl] = &[decl("stiffness", DataKind::Real, "10", ""), decl("steps", DataKind::Int, "2", "")];

    fn never(_: &CreateArgs) -> Box<dyn Component> {
        unreachable!("the tests insert their entries themselves")
    }

    static CLASS: ComponentClass = ComponentClass {
        name: "Holder",
        description: "",
        roles: &[],
        templates: &[],
        default_template: "",
        template_rule: TemplateRule::Default,
        module: "",
        data: &[TABLE],
        families: &[],
        links: &[],
        create: never,
        preparse: None,
        no_src_link: &[],
    };

    /// A scene with three Data added to the root node (`k` real, `n` and `m` integers) and a
    /// component `c` in it holding `stiffness` (real) and `steps` (integer).
    fn scene() -> (Scene, ComponentId) {
        let mut s = Scene::new("root");
        for (d, v) in [(&NODE_REAL, Value::Real(1.0)), (&NODE_INT, Value::Int(0)), (&NODE_INT2, Value::Int(0))] {
            s.nodes[Scene::ROOT].data.fields.push(DataField::new(d, v));
        }
        let data = DataSet::from_decls(&[TABLE], TemplateArity::SCALAR);
        let c = s.components.insert(ComponentEntry { name: "c".into(), ..ComponentEntry::new(&CLASS, Scene::ROOT, data, None) });
        s.nodes[Scene::ROOT].objects.push(c);
        (s, c)
    }

    fn node_field(s: &Scene, name: &str) -> DataLinkTarget {
        DataLinkTarget::node(Scene::ROOT, s.nodes[Scene::ROOT].data.index_of(name).unwrap())
    }

    fn value(s: &Scene, at: DataLinkTarget) -> Value {
        s.read_data_at(at).unwrap()
    }

    /// SOFA's test_Dirty: a node Data linked to another is dirty until updated; writing the
    /// parent makes it dirty again, not the parent; the update converts the real to an integer
    /// as SOFA's copy does (a cast).
    #[test]
    fn node_data_follow_node_data_lazily() {
        let (mut s, _) = scene();
        let (k, n) = (node_field(&s, "k"), node_field(&s, "n"));
        assert_eq!(s.resolve_data_path(Scene::ROOT, "/.k", None), Some(k));
        s.set_data_parent(n, k, "@/.k").unwrap();
        assert!(s.data_field(n).unwrap().is_set);
        assert!(s.data_is_dirty(n), "SOFA's setParent leaves the child dirty");
        assert_eq!(value(&s, n), Value::Int(0), "nothing is copied before the update");
        assert!(s.update_data_if_dirty(n));
        assert!(!s.data_is_dirty(n));
        assert_eq!(value(&s, n), Value::Int(1));
        s.nodes[Scene::ROOT].data.write_text("k", "3.7").unwrap();
        assert!(!s.data_is_dirty(k), "the parent is not dirty");
        assert!(s.data_is_dirty(n));
        assert!(s.update_data_if_dirty(n));
        assert_eq!(value(&s, n), Value::Int(3));
        assert!(!s.update_data_if_dirty(n), "clean: nothing to do");
    }

    /// A change two links up makes the end of the chain dirty at once (SOFA propagates the
    /// dirty flag downstream); the update pulls the middle first.
    #[test]
    fn dirtiness_propagates_down_a_chain() {
        let (mut s, _) = scene();
        let (k, n, m) = (node_field(&s, "k"), node_field(&s, "n"), node_field(&s, "m"));
        s.set_data_parent(n, k, "@/.k").unwrap();
        s.set_data_parent(m, n, "@/.n").unwrap();
        s.update_data_if_dirty(m);
        assert!(!s.data_is_dirty(n) && !s.data_is_dirty(m));
        s.nodes[Scene::ROOT].data.write_text("k", "5").unwrap();
        assert!(s.data_is_dirty(n) && s.data_is_dirty(m));
        s.update_data_if_dirty(m);
        assert_eq!((value(&s, n), value(&s, m)), (Value::Int(5), Value::Int(5)));
        assert!(!s.data_is_dirty(n) && !s.data_is_dirty(m));
    }

    /// Component Data and node Data link either way; a component following a node Data is
    /// refreshed by the per-step pull like one following another component.
    #[test]
    fn component_and_node_data_link_both_ways() {
        let (mut s, c) = scene();
        let (k, n) = (node_field(&s, "k"), node_field(&s, "n"));
        let stiffness = DataLinkTarget::component(c, s.components[c].data.index_of("stiffness").unwrap());
        assert_eq!(s.resolve_data_path(Scene::ROOT, "c.stiffness", None), Some(stiffness));
        s.set_data_parent(stiffness, k, "@/.k").unwrap();
        assert!(s.refresh_links(c));
        assert_eq!(value(&s, stiffness), Value::Real(1.0));
        s.nodes[Scene::ROOT].data.write_text("k", "4.5").unwrap();
        assert!(s.refresh_links(c));
        assert_eq!(value(&s, stiffness), Value::Real(4.5));
        assert!(!s.refresh_links(c), "nothing changed since");
        assert!(s.data_parents(c).is_empty(), "a node is no component to refresh first");
        s.set_data_parent(n, stiffness, "@/c.stiffness").unwrap();
        s.update_data_if_dirty(n);
        assert_eq!(value(&s, n), Value::Int(4));
    }

    #[test]
    fn loops_of_links_are_refused() {
        let (mut s, _) = scene();
        let (k, n, m) = (node_field(&s, "k"), node_field(&s, "n"), node_field(&s, "m"));
        s.set_data_parent(n, k, "@/.k").unwrap();
        s.set_data_parent(m, n, "@/.n").unwrap();
        assert!(s.set_data_parent(k, m, "@/.m").is_err());
        assert!(s.set_data_parent(k, k, "@/.k").is_err());
        assert_eq!(s.data_field(k).unwrap().link, None);
    }

    /// SOFA's defaults: persistent, not read-only. Read-only is a hint: writes still happen.
    #[test]
    fn flags_have_sofa_defaults_and_read_only_does_not_refuse_writes() {
        let (mut s, c) = scene();
        let f = &s.components[c].data.fields[0];
        assert!(f.persistent && !f.read_only);
        let k = node_field(&s, "k");
        let f = s.data_set_mut(k.holder).unwrap().fields.get_mut(k.field).unwrap();
        assert!(f.persistent && !f.read_only);
        f.read_only = true;
        f.persistent = false;
        s.nodes[Scene::ROOT].data.write_text("k", "2").unwrap();
        let f = s.data_field(k).unwrap();
        assert_eq!(f.value, Value::Real(2.0));
        assert!(f.read_only && !f.persistent, "writes keep the flags");
    }

    /// Attaching a scene under another moves its node Data links with it; taking a subtree
    /// out cuts the links that would cross the two scenes.
    #[test]
    fn node_data_links_follow_graft_and_prune() {
        let (mut s, _) = scene();
        let (mut other, c) = scene();
        let (k, n) = (node_field(&other, "k"), node_field(&other, "n"));
        let stiffness = DataLinkTarget::component(c, 0);
        other.set_data_parent(n, k, "@/.k").unwrap();
        other.set_data_parent(stiffness, k, "@/.k").unwrap();
        let map = s.graft(Scene::ROOT, other).unwrap();
        let sub = map.nodes[&Scene::ROOT];
        let (k2, n2, c2) = (DataLinkTarget::node(sub, k.field), DataLinkTarget::node(sub, n.field), map.components[&c]);
        assert_eq!(s.data_field(n2).unwrap().link, Some(k2));
        assert_eq!(s.components[c2].data.fields[0].link, Some(k2));
        // The root's own `m` follows the grafted `k`: pruning the subtree cuts it.
        let m = node_field(&s, "m");
        s.set_data_parent(m, k2, "@/root.k").unwrap();
        let (out, back) = s.prune(sub).unwrap();
        assert_eq!(s.data_field(m).unwrap().link, None);
        assert_eq!(s.data_field(m).unwrap().link_text.as_deref(), Some("@/root.k"), "the text stays");
        let n3 = DataLinkTarget::node(back.nodes[&sub], n.field);
        assert_eq!(out.data_field(n3).unwrap().link, Some(DataLinkTarget::node(Scene::ROOT, k.field)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &Scene, nodes: &[NodeId]) -> Vec<String> {
        nodes.iter().map(|n| s.nodes[*n].name.clone()).collect()
    }

    /// root → a → (a1, d), b → (d, b1), d → e: `d` has parents a and b.
    fn dag() -> (Scene, [NodeId; 4]) {
        let mut s = Scene::new("root");
        let a = s.add_node(Scene::ROOT, "a");
        s.add_node(a, "a1");
        let b = s.add_node(Scene::ROOT, "b");
        let d = s.add_node(a, "d");
        s.add_parent(d, b).unwrap();
        s.add_node(b, "b1");
        s.add_node(d, "e");
        (s, [a, b, d, Scene::ROOT])
    }

    #[test]
    fn a_node_with_two_parents_is_visited_once_after_the_last_of_them() {
        let (s, [a, b, d, _]) = dag();
        assert_eq!(names(&s, &s.preorder(Scene::ROOT)), ["root", "a", "a1", "b", "d", "e", "b1"]);
        assert_eq!(names(&s, &s.subtree(Scene::ROOT)), ["root", "a", "a1", "b", "d", "e", "b1"]);
        // From a, b is outside: it does not hold d back.
        assert_eq!(names(&s, &s.preorder(a)), ["a", "a1", "d", "e"]);
        assert_eq!(names(&s, &s.preorder(b)), ["b", "d", "e", "b1"]);
        // Leave comes after the children reached through the node.
        let mut events = Vec::new();
        s.walk(Scene::ROOT, &mut |n, r| {
            events.push(format!("{}{}", if r == Reach::Enter { "+" } else { "-" }, s.nodes[n].name));
            Visit::Descend
        });
        assert_eq!(events.join(" "), "+root +a +a1 -a1 -a +b +d +e -e -d +b1 -b1 -b -root");
        assert_eq!(s.node_path(d), "/root/a/d");
        assert!(s.is_ancestor(b, d) && s.is_ancestor(Scene::ROOT, d) && !s.is_ancestor(d, b));
    }

    #[test]
    fn a_node_is_pruned_only_when_all_its_parents_are() {
        let (mut s, [a, b, _, _]) = dag();
        let prune_at = |s: &Scene, cut: &[NodeId]| {
            let mut out = Vec::new();
            s.walk(Scene::ROOT, &mut |n, r| {
                if r == Reach::Enter {
                    out.push(n);
                    if cut.contains(&n) {
                        return Visit::Prune;
                    }
                }
                Visit::Descend
            });
            names(s, &out)
        };
        assert_eq!(prune_at(&s, &[a]), ["root", "a", "b", "d", "e", "b1"]);
        assert_eq!(prune_at(&s, &[a, b]), ["root", "a", "b"]);
        s.nodes[b].activated = false;
        assert_eq!(names(&s, &s.preorder(Scene::ROOT)), ["root", "a", "a1", "d", "e"]);
        assert!(s.node_active(s.nodes[a].children[1]));
        s.nodes[a].activated = false;
        assert_eq!(names(&s, &s.preorder(Scene::ROOT)), ["root"]);
        assert!(!s.node_active(s.nodes[b].children[0]));
    }

    #[test]
    fn a_dag_moves_between_scenes_with_its_links() {
        let (mut s, [a, _, _, _]) = dag();
        let (out, map) = s.prune(a).unwrap();
        // d leaves with a; b keeps b1 only.
        assert_eq!(names(&out, &out.subtree(Scene::ROOT)), ["a", "a1", "d", "e"]);
        assert_eq!(names(&s, &s.subtree(Scene::ROOT)), ["root", "b", "b1"]);
        assert_eq!(out.nodes[map.nodes[&s_id_of(&map, &out, "d")]].parents.len(), 1);
        let mut host = Scene::new("host");
        let h = host.add_node(Scene::ROOT, "h");
        let (s2, _) = dag();
        let g = host.graft(h, s2).unwrap();
        assert_eq!(names(&host, &host.subtree(Scene::ROOT)), ["host", "h", "root", "a", "a1", "b", "d", "e", "b1"]);
        let d = *g.nodes.values().find(|n| host.nodes[**n].name == "d").unwrap();
        assert_eq!(names(&host, &host.nodes[d].parents), ["a", "b"]);
        let a2 = host.nodes[d].parents[0];
        assert_eq!(names(&host, &host.nodes[a2].children), ["a1", "d"], "children keep their order");
    }

    /// The old id of the node named `name` in a map to `out`.
    fn s_id_of(map: &Grafted, out: &Scene, name: &str) -> NodeId {
        *map.nodes.iter().find(|(_, n)| out.nodes[**n].name == name).unwrap().0
    }
}
