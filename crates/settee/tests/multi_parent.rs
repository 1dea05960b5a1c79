//! Multi-parent nodes (python spec §3.4, pitfall 26; SOFA's DAGNode): a node under two parents
//! is initialised once and stepped once per step, in the walk's order (after its last parent),
//! so its trajectory is bit for bit the one it has under its last parent alone.

use std::sync::Arc;

use settee_core::simulation::{animate, init_root};
use settee_core::testing::add;
use settee_core::{component, Component, ComponentId, Factory, InitCtx, NodeId, Scene, SimResult, VecId};

/// Counts its `init` and `animate_begin` calls (test only).
#[component(data = {})]
#[derive(Default, Clone)]
struct Counter {
    inits: usize,
    bwd_inits: usize,
    steps: usize,
}

impl Component for Counter {
    fn init(&mut self, _cx: &mut InitCtx) -> SimResult {
        self.inits += 1;
        Ok(())
    }
    fn bwd_init(&mut self, _cx: &mut InitCtx) -> SimResult {
        self.bwd_inits += 1;
        Ok(())
    }
    fn animate_begin(&mut self, _scene: &mut Scene, _me: ComponentId) -> SimResult {
        self.steps += 1;
        Ok(())
    }
}

fn factory() -> Factory {
    let mut f = settee::factory();
    f.add::<Counter>();
    f
}

/// A body of three points with a mass and springs to its rest shape.
fn body(s: &mut Scene, f: &Factory, node: NodeId, x0: f64) {
    let pos = format!("{x0} 0 0  {} 0 0  {x0} 1 0", x0 + 1.0);
    add(s, f, node, "MechanicalObject", &[("name", "dofs"), ("position", &pos), ("velocity", "0 0 1  0 0.5 0  1 0 0")]);
    add(s, f, node, "UniformMass", &[("totalMass", "0.3")]);
    add(s, f, node, "RestShapeSpringsForceField", &[("stiffness", "50")]);
}

/// root (implicit Euler + CG) → A, B, each a body; C, a body tied to A and B by springs, under
/// `parents` (in that order). Returns the scene and C's node and counter.
fn scene(f: &Factory, parents: &[&str]) -> (Scene, NodeId, ComponentId) {
    let mut s = Scene::new("root");
    s.factory = Some(Arc::new(f.clone()));
    add(&mut s, f, Scene::ROOT, "DefaultAnimationLoop", &[]);
    add(&mut s, f, Scene::ROOT, "EulerImplicitSolver", &[("rayleighStiffness", "0.1"), ("rayleighMass", "0.1")]);
    add(&mut s, f, Scene::ROOT, "CGLinearSolver", &[("iterations", "25"), ("tolerance", "1e-12"), ("threshold", "1e-12")]);
    let a = s.add_node(Scene::ROOT, "A");
    body(&mut s, f, a, 0.0);
    let b = s.add_node(Scene::ROOT, "B");
    body(&mut s, f, b, 3.0);
    let node_of = |s: &Scene, name: &str| s.node(Scene::ROOT).children.iter().copied().find(|n| s.node(*n).name == name).unwrap();
    let c = s.add_node(node_of(&s, parents[0]), "C");
    for p in &parents[1..] {
        s.add_parent(c, node_of(&s, p)).unwrap();
    }
    body(&mut s, f, c, 6.0);
    // Absolute paths: the same links whichever parents C has.
    add(&mut s, f, c, "SpringForceField", &[("object1", "@/A/dofs"), ("object2", "@dofs"), ("spring", "1 0 20 0.5 5")]);
    add(&mut s, f, c, "SpringForceField", &[("object1", "@/B/dofs"), ("object2", "@dofs"), ("spring", "0 2 30 0.5 3")]);
    let counter = add(&mut s, f, c, "Counter", &[]);
    init_root(&mut s, f).unwrap();
    (s, c, counter)
}

/// The bits of every state's positions and velocities after each of `n` steps.
fn run(s: &mut Scene, n: usize) -> Vec<Vec<u64>> {
    (0..n)
        .map(|_| {
            animate(s, 0.01).unwrap();
            s.store.states.values().flat_map(|st| st.read(VecId::POSITION).iter().chain(st.read(VecId::VELOCITY)).map(|v| v.to_bits())).collect()
        })
        .collect()
}

#[test]
fn a_node_with_two_parents_is_initialised_once_and_stepped_once_per_step() {
    let f = factory();
    let (mut two, c, counter) = scene(&f, &["A", "B"]);
    assert_eq!(two.node(c).parents.len(), 2);
    assert_eq!(two.node_path(c), "/root/A/C", "the path follows the first parent");
    let order: Vec<String> = two.preorder(Scene::ROOT).iter().map(|n| two.node(*n).name.clone()).collect();
    assert_eq!(order, ["root", "A", "B", "C"], "C once, after its last parent");
    let counts = |s: &Scene| {
        let k = s.get::<Counter>(counter).unwrap();
        (k.inits, k.bwd_inits, k.steps)
    };
    assert_eq!(counts(&two), (1, 1, 0));
    // Its state is integrated by the root's solver once: one copy in the solver's scope.
    let scope = two.scope(Scene::ROOT);
    assert_eq!(scope.states.len(), 3);

    let (mut one, _, _) = scene(&f, &["B"]);
    let steps = 60;
    let with_two = run(&mut two, steps);
    let with_one = run(&mut one, steps);
    assert_eq!(counts(&two), (1, 1, steps));
    assert_eq!(with_two, with_one, "the trajectory under two parents is the one under its last parent alone");
    // It moved: the comparison is not between two scenes at rest.
    let x = two.store.states.values().nth(2).unwrap().read(VecId::POSITION).to_vec();
    let x0 = [6.0, 0.0, 0.0, 7.0, 0.0, 0.0, 6.0, 1.0, 0.0];
    assert!(x.iter().zip(x0).any(|(a, b)| (a - b).abs() > 1e-2), "{x:?}");
}

#[test]
fn removing_one_parent_keeps_the_node_under_the_other() {
    let f = factory();
    let (mut s, c, counter) = scene(&f, &["A", "B"]);
    let a = s.node(c).parents[0];
    let b = s.node(c).parents[1];
    assert!(s.remove_parent(c, a));
    assert_eq!(s.node(c).parents, [b]);
    assert!(!s.node(a).children.contains(&c));
    assert_eq!(s.node_path(c), "/root/B/C");
    animate(&mut s, 0.01).unwrap();
    assert_eq!(s.get::<Counter>(counter).unwrap().steps, 1);
    // Removing A's subtree leaves C (now only under B) alone; removing B's takes C with it.
    s.add_parent(c, a).unwrap();
    assert!(s.remove_node(a));
    assert!(s.contains_node(c));
    assert_eq!(s.node(c).parents, [b]);
    assert!(s.remove_node(b));
    assert!(!s.contains_node(c));
    assert!(!s.contains(counter));
}

#[test]
fn a_link_making_a_cycle_is_refused() {
    let f = factory();
    let (mut s, c, _) = scene(&f, &["A", "B"]);
    let a = s.node(c).parents[0];
    let below = s.add_node(c, "below");
    let e = s.add_parent(a, below).unwrap_err().to_string();
    assert!(e.contains("cycle"), "{e}");
    assert!(s.add_parent(Scene::ROOT, c).is_err());
    assert!(s.add_parent(c, a).unwrap_err().to_string().contains("already a child"));
    assert_eq!(s.node(c).parents.len(), 2);
}
