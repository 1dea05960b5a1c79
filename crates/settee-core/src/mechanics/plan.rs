//! The mechanics' part of the step plan: the scope of every solver node and the solve stage's
//! items, compiled through the graph's plan ([`Scene::compiled`]) once per structure.

use std::sync::Arc;

use crate::graph::plan::node_key;
use crate::graph::role;
use crate::graph::scene::{ComponentId, NodeId, Scene};
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

/// The solve stage's items, in order.
#[derive(Debug, Default)]
pub struct SolvePlan(pub Vec<SolveItem>);

impl std::ops::Deref for SolvePlan {
    type Target = [SolveItem];
    fn deref(&self) -> &[SolveItem] {
        &self.0
    }
}

impl Scene {
    /// The scope of the solver at `node`, compiled once per structure (and again when a state of
    /// the scope changed size).
    pub fn scope(&mut self, node: NodeId) -> Arc<MechScope> {
        self.compiled(node_key(node), |s: &MechScope, scene| s.sizes_match(scene), |scene| MechScope::build(scene, node))
    }

    /// The solve stage's items (SOFA's SolveVisitor order), compiled once per structure.
    pub fn solve_plan(&mut self) -> Arc<SolvePlan> {
        self.compiled(
            0,
            |_, _| true,
            |scene| {
                let mut items = Vec::new();
                let mut stack = vec![Scene::ROOT];
                while let Some(n) = stack.pop() {
                    let node = scene.node(n);
                    if !node.activated {
                        continue;
                    }
                    let live = |c: &ComponentId| scene.entry(*c).initialized;
                    let solvers: Vec<ComponentId> =
                        node.objects.iter().copied().filter(|c| live(c) && scene.entry(*c).plays(crate::mechanics::ODE_SOLVER)).collect();
                    if !solvers.is_empty() {
                        items.push(SolveItem::Solve { node: n, solvers });
                        continue;
                    }
                    let is_interaction = |c: &ComponentId| {
                        let e = scene.entry(*c);
                        e.initialized && e.plays(crate::mechanics::FORCE_FIELD) && e.plays(role::INTERACTION)
                    };
                    let mut interactions: Vec<ComponentId> = node.objects.iter().copied().filter(is_interaction).collect();
                    interactions.extend(scene.contacts.attached_at(n).filter(is_interaction));
                    items.push(SolveItem::Isolated { node: n, interactions });
                    for c in node.children.iter().rev() {
                        stack.push(*c);
                    }
                }
                SolvePlan(items)
            },
        )
    }
}
