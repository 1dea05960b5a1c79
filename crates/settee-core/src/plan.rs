//! The step plan: the order of work of a step, compiled from the graph once per structural
//! change instead of being rediscovered by every stage.
//!
//! A step walks the same lists again and again: the solver nodes in SOFA's SolveVisitor order,
//! each solver's scope (its states, mappings, force fields, masses and projective constraints),
//! the constraint laws in traversal order. [`Plan`] keeps them, keyed by the scene's structure
//! version ([`crate::Scene::structure_version`], bumped by every change of nodes, components or
//! activation) and by the contact store's version ([`ContactStore`]). A stage asks the scene for
//! what it needs ([`crate::Scene::scope`], [`crate::Scene::solve_plan`],
//! [`crate::Scene::constraint_laws`]); the scene recompiles what is stale, at the first request
//! after a change, and hands out shared lists the stage can hold while it mutates the scene.
//!
//! Contacts are data: a contact response keeps its pairs itself and tells the store where the
//! objects of each pair act (the mappings that place contact points, at the end of their model's
//! subtree; the pair's force field or constraint law, after the objects of a node). Scopes and
//! lists splice them in there, which is where SOFA's contact nodes would sit in the graph, so
//! the order of every sum is SOFA's.

use std::sync::Arc;

use crate::mechanics::MechScope;
use crate::role::{self, RoleId};
use crate::scene::{ComponentId, NodeId, Scene};

/// Where the objects of the contacts of a collision response act, as the step plan splices them
/// into the graph's order.
#[derive(Default)]
pub struct ContactStore {
    /// Contact mappings (the mapped contact points of one side of a pair), each anchored at the
    /// end of its model's node subtree, in creation order.
    mappers: Vec<(NodeId, ComponentId)>,
    /// The contact force fields and constraint laws acting in this step, each anchored after the
    /// objects of a node, in the order they were attached, with the contact manager that owns
    /// them.
    attached: Vec<Attached>,
    /// The list as it was when a manager began attaching (no allocation once warm).
    previous: Vec<Attached>,
    version: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Attached {
    owner: ComponentId,
    node: NodeId,
    object: ComponentId,
}

impl ContactStore {
    /// Changes whenever the spliced lists change.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// A new contact mapping at the end of `anchor`'s subtree (after those already there).
    pub fn add_mapper(&mut self, anchor: NodeId, mapping: ComponentId) {
        self.mappers.push((anchor, mapping));
        self.version += 1;
    }

    /// Forgets a contact object (mapping, force field or law) being destroyed.
    pub fn forget(&mut self, c: ComponentId) {
        let (m, a) = (self.mappers.len(), self.attached.len());
        self.mappers.retain(|(_, x)| *x != c);
        self.attached.retain(|a| a.object != c);
        if m != self.mappers.len() || a != self.attached.len() {
            self.version += 1;
        }
    }

    /// Contact manager `owner` starts this step's list of its acting contact objects: those of
    /// its last step are forgotten (the other managers' stay, in their order).
    pub fn begin_attach(&mut self, owner: ComponentId) {
        self.previous.clear();
        self.previous.extend_from_slice(&self.attached);
        self.attached.retain(|a| a.owner != owner);
    }

    /// `c`, owned by contact manager `owner`, acts in this step after the objects of `node`
    /// (and the contact objects attached there before it).
    pub fn attach(&mut self, owner: ComponentId, node: NodeId, c: ComponentId) {
        self.attached.push(Attached { owner, node, object: c });
    }

    /// Ends the manager's list; the plan is recompiled only if the lists differ from the last
    /// step's.
    pub fn end_attach(&mut self) {
        if self.attached != self.previous {
            self.version += 1;
        }
    }

    /// Contact mappings anchored at the end of `node`'s subtree, in creation order.
    pub fn mappers_at(&self, node: NodeId) -> impl Iterator<Item = ComponentId> + '_ {
        self.mappers.iter().filter(move |(n, _)| *n == node).map(|(_, c)| *c)
    }

    /// Contact objects acting after the objects of `node`, in attachment order.
    pub fn attached_at(&self, node: NodeId) -> impl Iterator<Item = ComponentId> + '_ {
        self.attached.iter().filter(move |a| a.node == node).map(|a| a.object)
    }

    /// How many contact objects act in this step.
    pub fn acting(&self) -> usize {
        self.attached.len()
    }

    /// Whether any contact object is anchored at `node` (a cheap test before the filters).
    pub fn is_empty(&self) -> bool {
        self.mappers.is_empty() && self.attached.is_empty()
    }
}

/// One item of the solve stage, in SOFA's SolveVisitor order.
#[derive(Clone, Debug)]
pub enum SolveItem {
    /// A node holding ODE solvers: they integrate its subtree, in declaration order.
    Solve { node: NodeId, solvers: Vec<ComponentId> },
    /// A node without solver: its interaction force fields (and the contact force fields attached
    /// to it) act as isolated interactions.
    Isolated { node: NodeId, interactions: Vec<ComponentId> },
}

/// What the scene compiled for its current structure.
#[derive(Default)]
pub struct Plan {
    structure: u64,
    contacts: u64,
    compiled: bool,
    scopes: Vec<(NodeId, Arc<MechScope>)>,
    solve: Option<Arc<[SolveItem]>>,
    laws: Option<Arc<[ComponentId]>>,
    /// Per role asked for: the live components playing it, in scene order.
    roles: Vec<(RoleId, Arc<[ComponentId]>)>,
    /// How many times a list was compiled (tests and benchmarks look at it).
    pub compilations: u64,
}

impl Plan {
    /// Drops what was compiled for another structure.
    fn validate(&mut self, structure: u64, contacts: u64) {
        if !self.compiled || self.structure != structure || self.contacts != contacts {
            self.scopes.clear();
            self.solve = None;
            self.laws = None;
            self.roles.clear();
            self.structure = structure;
            self.contacts = contacts;
            self.compiled = true;
        }
    }
}

impl Scene {
    /// Records a structural change (nodes, components, links, activation): the plan is recompiled
    /// at the next request.
    pub fn touch(&mut self) {
        self.structure_version += 1;
    }

    fn plan_key(&self) -> (u64, u64) {
        (self.structure_version, self.contacts.version())
    }

    /// The scope of the solver at `node`, compiled once per structure (and re-read when a state
    /// of the scope changed size).
    pub fn scope(&mut self, node: NodeId) -> Arc<MechScope> {
        let (s, c) = self.plan_key();
        self.plan.validate(s, c);
        if let Some((_, sc)) = self.plan.scopes.iter().find(|(n, _)| *n == node) {
            if sc.sizes_match(self) {
                return sc.clone();
            }
        }
        let built = Arc::new(MechScope::build(self, node));
        self.plan.compilations += 1;
        match self.plan.scopes.iter_mut().find(|(n, _)| *n == node) {
            Some(slot) => slot.1 = built.clone(),
            None => self.plan.scopes.push((node, built.clone())),
        }
        built
    }

    /// The solve stage's items (SOFA's SolveVisitor order), compiled once per structure.
    pub fn solve_plan(&mut self) -> Arc<[SolveItem]> {
        let (s, c) = self.plan_key();
        self.plan.validate(s, c);
        if let Some(p) = &self.plan.solve {
            return p.clone();
        }
        let mut items = Vec::new();
        let mut stack = vec![Scene::ROOT];
        while let Some(n) = stack.pop() {
            let node = self.node(n);
            if !node.activated {
                continue;
            }
            let solvers: Vec<ComponentId> =
                node.objects.iter().copied().filter(|c| self.entry(*c).plays(role::ODE_SOLVER) && self.entry(*c).initialized).collect();
            if !solvers.is_empty() {
                items.push(SolveItem::Solve { node: n, solvers });
                continue;
            }
            let is_interaction = |c: &ComponentId| {
                let e = self.entry(*c);
                e.initialized && e.plays(role::FORCE_FIELD) && e.plays(role::INTERACTION)
            };
            let mut interactions: Vec<ComponentId> = node.objects.iter().copied().filter(is_interaction).collect();
            interactions.extend(self.contacts.attached_at(n).filter(is_interaction));
            items.push(SolveItem::Isolated { node: n, interactions });
            for c in node.children.iter().rev() {
                stack.push(*c);
            }
        }
        self.plan.compilations += 1;
        let items: Arc<[SolveItem]> = items.into();
        self.plan.solve = Some(items.clone());
        items
    }

    /// The constraint laws in SOFA's traversal order (top-down through every active node,
    /// object order inside a node, then the contact laws attached to it), compiled once per
    /// structure.
    pub fn constraint_laws(&mut self) -> Arc<[ComponentId]> {
        let (s, c) = self.plan_key();
        self.plan.validate(s, c);
        if let Some(l) = &self.plan.laws {
            return l.clone();
        }
        let mut out = Vec::new();
        for n in self.preorder(Scene::ROOT) {
            let is_law = |c: &ComponentId| self.entry(*c).initialized && self.entry(*c).plays(role::CONSTRAINT_LAW);
            out.extend(self.node(n).objects.iter().copied().filter(is_law));
            out.extend(self.contacts.attached_at(n).filter(is_law));
        }
        self.plan.compilations += 1;
        let laws: Arc<[ComponentId]> = out.into();
        self.plan.laws = Some(laws.clone());
        laws
    }

    /// The role index: every initialised component of an active node playing `role`, in scene
    /// order (top-down, object order inside a node), compiled once per structure. Any role, the
    /// core's or another crate's, has one.
    pub fn role_index(&mut self, role: RoleId) -> Arc<[ComponentId]> {
        let (s, c) = self.plan_key();
        self.plan.validate(s, c);
        if let Some((_, l)) = self.plan.roles.iter().find(|(r, _)| *r == role) {
            return l.clone();
        }
        let mut out = Vec::new();
        for n in self.preorder(Scene::ROOT) {
            out.extend(self.node(n).objects.iter().copied().filter(|c| self.entry(*c).initialized && self.entry(*c).plays(role)));
        }
        self.plan.compilations += 1;
        let list: Arc<[ComponentId]> = out.into();
        self.plan.roles.push((role, list.clone()));
        list
    }

    /// How many lists the plan compiled so far.
    pub fn plan_compilations(&self) -> u64 {
        self.plan.compilations
    }
}
