//! The mechanics' part of the step plan: the scope of every solver node and the solve stage's
//! items, compiled through the graph's plan ([`Scene::compiled`]) once per structure.

use std::sync::Arc;

use crate::graph::plan::{compiled_list, node_key};
use crate::graph::role;
use crate::graph::scene::{ComponentId, NodeId, Reach, Scene, Visit};
use crate::mechanics::MechScope;

/// One item of the solve stage, in SOFA's SolveVisitor order.
#[derive(Clone, Debug)]
pub enum SolveItem {
    /// A node holding ODE solvers: they integrate its subtree, in declaration order.
    Solve { node: NodeId, solvers: Vec<ComponentId> },
    /// A node without solver: its interaction force fields (and the contact force fields attached
    /// to it) act as isolated interactions.
    Isolated { node: NodeId, interactions: Vec<ComponentId> },
}

compiled_list! {
    /// Nodes in order.
    NodeList(NodeId)
}

compiled_list! {
    /// The solve stage's items, in order.
    SolvePlan(SolveItem)
}

impl Scene {
    /// The scope of the solver at `node`, compiled once per structure (and again when a state of
    /// the scope changed size).
    pub fn scope(&mut self, node: NodeId) -> Arc<MechScope> {
        self.compiled(node_key(node), |s: &MechScope, scene| s.sizes_match(scene), |scene, s: &mut MechScope| s.rebuild(scene, node))
    }

    /// The active nodes of the scene in pre-order (what [`Scene::preorder`] gives from the
    /// root), compiled once per structure.
    pub fn preorder_plan(&mut self) -> Arc<NodeList> {
        self.compiled(
            0,
            |_, _| true,
            |scene, list: &mut NodeList| {
                list.0.clear();
                scene.visit_preorder(Scene::ROOT, &mut |n| list.0.push(n));
            },
        )
    }

    /// The solve stage's items (SOFA's SolveVisitor order), compiled once per structure.
    pub fn solve_plan(&mut self) -> Arc<SolvePlan> {
        self.compiled(
            0,
            |_, _| true,
            |scene, plan: &mut SolvePlan| {
                let mut used = 0;
                plan.collect(scene, Scene::ROOT, &mut used);
                plan.0.truncate(used);
            },
        )
    }
}

impl SolvePlan {
    /// The items of `n`'s subtree from position `*used` on, reusing the lists of the items there:
    /// a node holding ODE solvers is solved and not descended into; another node's interaction
    /// force fields (and the contact force fields attached to it) act as isolated interactions.
    fn collect(&mut self, scene: &Scene, start: NodeId, used: &mut usize) {
        scene.walk(start, &mut |n, reach| match reach {
            Reach::Enter if self.collect_node(scene, n, used) => Visit::Prune,
            _ => Visit::Descend,
        });
    }

    /// Adds the item of node `n` at position `*used`; true when the node is solved (the walk
    /// does not descend below it).
    fn collect_node(&mut self, scene: &Scene, n: NodeId, used: &mut usize) -> bool {
        let node = scene.node(n);
        let mut list = match self.0.get_mut(*used) {
            Some(SolveItem::Solve { solvers: l, .. } | SolveItem::Isolated { interactions: l, .. }) => std::mem::take(l),
            None => Vec::new(),
        };
        list.clear();
        list.extend(node.objects.iter().copied().filter(|c| scene.entry(*c).initialized && scene.entry(*c).plays(crate::mechanics::ODE_SOLVER)));
        let solved = !list.is_empty();
        let item = if solved {
            SolveItem::Solve { node: n, solvers: list }
        } else {
            let is_interaction = |c: &ComponentId| {
                let e = scene.entry(*c);
                e.initialized && e.plays(crate::mechanics::FORCE_FIELD) && e.plays(role::INTERACTION)
            };
            list.extend(node.objects.iter().copied().filter(is_interaction));
            list.extend(scene.contacts.attached_at(n).filter(is_interaction));
            SolveItem::Isolated { node: n, interactions: list }
        };
        match self.0.get_mut(*used) {
            Some(slot) => *slot = item,
            None => self.0.push(item),
        }
        *used += 1;
        solved
    }
}
