//! The step plan: the order of work of a step, compiled from the graph once per structural
//! change instead of being rediscovered by every stage.
//!
//! A step walks the same lists again and again: the solver nodes in SOFA's SolveVisitor order,
//! each solver's scope (its states, mappings, force fields, masses and projective constraints),
//! the constraint laws in traversal order. [`Plan`] keeps them, keyed by the scene's structure
//! version ([`crate::Scene::structure_version`], bumped by every change of nodes, components or
//! activation) and by the contact store's version ([`ContactStore`]). A stage asks the scene for
//! what it needs (the role index [`Scene::role_index`]; the mechanics' scopes and solve items,
//! the Lagrangian stages' laws, each compiled by its own layer through [`Scene::compiled`]); the
//! scene recompiles what is stale, at the first request after a change, and hands out shared
//! lists the stage can hold while it mutates the scene.
//!
//! Contacts are data: a contact response keeps its pairs itself and tells the store where the
//! objects of each pair act (the mappings that place contact points, at the end of their model's
//! subtree; the pair's force field or constraint law, after the objects of a node). Scopes and
//! lists splice them in there, which is where SOFA's contact nodes would sit in the graph, so
//! the order of every sum is SOFA's.

use std::any::{Any, TypeId};
use std::sync::Arc;

use crate::graph::role::RoleId;
use crate::graph::scene::{ComponentId, NodeId, Scene};

/// Where the objects of the contacts of a collision response act, as the step plan splices them
/// into the graph's order.
#[derive(Clone, Default)]
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

/// The structure and contact versions a list was compiled for.
type Version = (u64, u64);

/// One compiled list: its type, its key, the versions it was compiled for. A copy of the plan
/// shares the lists (they are never changed in place while shared, see [`Scene::compiled`]).
#[derive(Clone)]
struct Entry {
    ty: TypeId,
    key: u64,
    built_for: Version,
    list: Arc<dyn Any + Send + Sync>,
}

/// What the scene compiled for its current structure: lists of any type, each keyed by its type
/// and a number (a node's). A list compiled for another structure or other contacts is stale:
/// it is compiled again at its next request, into the memory it had (contacts come and go every
/// few steps; their lists are remade without allocating). At a structural change, the lists
/// nobody asked for since the previous one are dropped (those of a removed node).
#[derive(Clone, Default)]
pub struct Plan {
    current: Option<Version>,
    entries: Vec<Entry>,
    /// How many times a list was compiled (tests and benchmarks look at it).
    pub compilations: u64,
}

impl Plan {
    /// Moves to `version`; at a structural change, drops the lists that were not compiled since
    /// the previous one.
    fn advance(&mut self, version: Version) {
        if let Some(last) = self.current.filter(|last| last.0 != version.0) {
            self.entries.retain(|e| e.built_for.0 == last.0);
        }
        self.current = Some(version);
    }
}

/// Declares a list the plan compiles: a type of its own (the plan keeps its entries apart by
/// type), read as a slice of its items.
macro_rules! compiled_list {
    ($(#[$m:meta])* $name:ident($item:ty)) => {
        $(#[$m])*
        #[derive(Debug, Default)]
        pub struct $name(pub Vec<$item>);

        impl std::ops::Deref for $name {
            type Target = [$item];
            fn deref(&self) -> &[$item] {
                &self.0
            }
        }
    };
}
pub(crate) use compiled_list;

compiled_list! {
    /// A list of components in scene order (what [`Scene::role_index`] gives).
    #[derive(PartialEq, Eq)]
    ComponentList(ComponentId)
}

impl Scene {
    /// Records a structural change (nodes, components, links, activation): the plan is recompiled
    /// at the next request.
    pub fn touch(&mut self) {
        self.structure_version += 1;
    }

    /// A list compiled from the graph for its current structure: `build` runs at the first
    /// request after a structural change (or a change of the contacts), and again when `fresh`
    /// says the kept one no longer fits (a state changed size); `key` tells apart lists of one
    /// type (the scope of each solver node). `build` fills the list from scratch: it is handed
    /// the stale list to reuse its memory when nobody holds it any more, else an empty one.
    pub fn compiled<T: Any + Send + Sync + Default>(
        &mut self,
        key: u64,
        fresh: impl FnOnce(&T, &Scene) -> bool,
        build: impl FnOnce(&Scene, &mut T),
    ) -> Arc<T> {
        let version = (self.structure_version, self.contacts.version());
        self.plan.advance(version);
        let ty = TypeId::of::<T>();
        let found = self.plan.entries.iter().position(|e| e.ty == ty && e.key == key);
        if let Some(i) = found {
            let e = &self.plan.entries[i];
            if e.built_for == version {
                let kept = e.list.clone().downcast::<T>().expect("an entry of its type");
                if fresh(&kept, self) {
                    return kept;
                }
            }
        }
        let mut list = match found {
            Some(i) => self.plan.entries.swap_remove(i).list.downcast::<T>().expect("an entry of its type"),
            None => Arc::new(T::default()),
        };
        if Arc::get_mut(&mut list).is_none() {
            // A stage still holds the stale list: compile into a new one.
            list = Arc::new(T::default());
        }
        build(self, Arc::get_mut(&mut list).expect("held only here"));
        self.plan.compilations += 1;
        self.plan.entries.push(Entry { ty, key, built_for: version, list: list.clone() });
        list
    }

    /// The role index: every initialised component of an active node playing `role`, in scene
    /// order (top-down, object order inside a node), compiled once per structure. Any role, the
    /// core's or another crate's, has one.
    pub fn role_index(&mut self, role: RoleId) -> Arc<ComponentList> {
        let key = role_key(role);
        self.compiled(
            key,
            |_, _| true,
            |scene, list: &mut ComponentList| {
                list.0.clear();
                scene.visit_preorder(Scene::ROOT, &mut |n| {
                    list.0.extend(scene.node(n).objects.iter().copied().filter(|c| scene.entry(*c).initialized && scene.entry(*c).plays(role)));
                });
            },
        )
    }

    /// How many lists the plan compiled so far.
    pub fn plan_compilations(&self) -> u64 {
        self.plan.compilations
    }
}

/// A role as a key of [`Scene::compiled`] (its type's hash).
fn role_key(role: RoleId) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    role.type_id().hash(&mut h);
    h.finish()
}

/// A node as a key of [`Scene::compiled`].
pub fn node_key(node: NodeId) -> u64 {
    ((node.generation() as u64) << 32) | node.index() as u64
}
