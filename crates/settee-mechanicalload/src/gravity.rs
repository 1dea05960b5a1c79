//! `Gravity`: sets the gravity of its node's context (SOFA's `ContextObject`), which the node's
//! descendants inherit, whatever the root node's `gravity` says.

use settee_core::role::ContextObject;
use settee_core::scene::Context;
use settee_core::{component, Component, InitCtx, SimResult};

/// Gravity in world coordinates for the node it is in and its descendants.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ContextObject],
    create = |_| Gravity { gravity: [0.0; 3] },
    data = {
        /// gravity in the world coordinate system
        gravity: Fixed(3) = "0 0 0",
    },
)]
#[derive(Clone)]
pub struct Gravity {
    gravity: [f64; 3],
}

impl Component for Gravity {
    /// Reads the vector and changes the node's context now, so that the components initialised
    /// after it, and the child nodes, which take their parent's context, see it.
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.gravity = cx.data().get(Self::GRAVITY);
        let node = cx.node();
        self.apply(&mut cx.scene.node_mut(node).context);
        Ok(())
    }
}

impl ContextObject for Gravity {
    fn apply(&self, context: &mut Context) {
        context.gravity = self.gravity;
    }
}

#[cfg(test)]
mod tests {
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    use crate::test_support::*;

    /// A Gravity in a child node changes that node's gravity and its children's, not its
    /// parent's nor its siblings', and keeps it when the context is copied down after a step.
    #[test]
    fn gravity_sets_the_context_of_its_node_and_below() {
        let f = factory();
        let mut s = Scene::new("root");
        s.node_mut(Scene::ROOT).context.gravity = [0.0, -9.81, 0.0];
        let a = s.add_node(Scene::ROOT, "a");
        add(&mut s, &f, a, "Gravity", &[("gravity", "1 2 3")]);
        let b = s.add_node(a, "b");
        let c = s.add_node(Scene::ROOT, "c");
        init_root(&mut s, &f).unwrap();
        for _ in 0..2 {
            assert_eq!(s.node(a).context.gravity, [1.0, 2.0, 3.0]);
            assert_eq!(s.node(b).context.gravity, [1.0, 2.0, 3.0]);
            assert_eq!(s.node(c).context.gravity, [0.0, -9.81, 0.0]);
            assert_eq!(s.node(Scene::ROOT).context.gravity, [0.0, -9.81, 0.0]);
            s.propagate_context();
        }
    }
}
