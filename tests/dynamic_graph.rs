//! The scene graph while it runs: components, states and nodes created through the factory
//! and removed again, with ids that go stale instead of being reused silently, and interaction
//! force fields whose two states belong to different solvers.

mod common;

use common::load;
use settee_core::simulation::{animate, init_subtree};
use settee_core::{Scene, VecId};

fn find_node(scene: &Scene, name: &str) -> settee_core::NodeId {
    scene.nodes.iter().find(|(_, n)| n.name == name).map(|(id, _)| id).unwrap_or_else(|| panic!("no node {name}"))
}

fn state_named(scene: &Scene, name: &str) -> settee_core::StateId {
    scene.store.states.iter().find(|(_, s)| s.name == name).map(|(id, _)| id).unwrap_or_else(|| panic!("no state {name}"))
}

/// A falling 4-particle object under its own solver.
const FALLING: &str = r#"<Node name="root" dt="0.01" gravity="0 -10 0">
  <Node name="body">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-20"/>
    <MechanicalObject name="dofs" position="0 0 0  1 0 0  0 1 0  0 0 1"/>
    <UniformMass totalMass="4"/>
  </Node>
</Node>"#;

#[test]
fn subtrees_created_while_running_are_mapped_and_removed_without_leaks() {
    let mut s = load("dyn-subtree", FALLING);
    let body = find_node(&s, "body");
    let dofs = state_named(&s, "dofs");
    let dt = s.root().context.dt;
    let baseline = s.live_counts();
    let mut counts_at = Vec::new();
    let mut live: Option<(settee_core::NodeId, Vec<settee_core::ComponentId>, settee_core::StateId)> = None;
    let mut dead = Vec::new();
    for step in 1..=10_000 {
        // Every three steps a "contact" subtree appears for two steps: a mapped state that
        // follows the body through an identity mapping, as a contact mapper's would.
        match step % 3 {
            1 => {
                let node = s.add_node(body, "contact");
                let mo = s.create_component(node, "MechanicalObject", Some("Vec3d"), &[("name", "points")]).expect("state");
                let map = s.create_component(node, "IdentityMapping", None, &[("input", "@.."), ("output", "@.")]).expect("mapping");
                init_subtree(&mut s, node).expect("init");
                let st = s.state_of(mo).expect("a state");
                assert_eq!(s.vec(st, VecId::POSITION), s.vec(dofs, VecId::POSITION), "mapped at creation");
                live = Some((node, vec![mo, map], st));
            }
            0 => {
                let (node, comps, st) = live.take().expect("created two steps ago");
                assert_eq!(s.vec(st, VecId::POSITION), s.vec(dofs, VecId::POSITION), "followed the body");
                assert!(s.remove_node(node));
                assert!(!s.contains_node(node) && comps.iter().all(|c| !s.contains(*c)));
                dead.push((node, comps, st));
            }
            _ => {}
        }
        animate(&mut s, dt).expect("step");
        if step == 1_000 || step == 10_000 {
            counts_at.push(s.live_counts());
        }
    }
    // Same number of live objects at step 1,000 and 10,000, and at step 10,000 (whose subtree
    // was created this step) one subtree more than the loaded scene.
    assert_eq!(counts_at[0], counts_at[1]);
    assert_eq!(counts_at[1].nodes, baseline.nodes + 1);
    assert_eq!(counts_at[1].components, baseline.components + 2);
    assert_eq!(counts_at[1].states, baseline.states + 1);
    // Slots were reused thousands of times, yet no dead id reaches a live entry.
    let (node, comps, st) = dead.last().unwrap();
    assert!(!s.contains_node(*node) && comps.iter().all(|c| !s.contains(*c)) && s.store.states.get(*st).is_none());
    assert!(dead.iter().all(|(n, _, _)| !s.contains_node(*n)));
    let reused = dead.iter().filter(|(n, _, _)| s.nodes.keys().any(|k| k.index() == n.index())).count();
    assert!(reused > 0, "slots of removed nodes are reused");
}

#[test]
fn removing_a_component_removes_its_state_and_leaves_a_stale_id() {
    let mut s = load("dyn-remove", FALLING);
    let mass = s.components.iter().find(|(_, e)| e.class.name == "UniformMass").map(|(id, _)| id).unwrap();
    let mo = s.components.iter().find(|(_, e)| e.class.name == "MechanicalObject").map(|(id, _)| id).unwrap();
    let st = s.state_of(mo).unwrap();
    let body = find_node(&s, "body");
    assert!(s.remove_component(mass));
    assert!(s.remove_component(mo));
    assert!(!s.remove_component(mo), "a second removal finds a stale id");
    assert!(s.store.states.get(st).is_none());
    assert!(!s.node(body).objects.contains(&mo));
    // A new state may take the freed slot; the old id still does not reach it.
    let again = s.create_component(body, "MechanicalObject", Some("Vec3d"), &[("position", "1 2 3")]).unwrap();
    let st2 = s.state_of(again).unwrap();
    assert_eq!(st2.index(), st.index());
    assert_ne!(st2, st);
    assert!(s.store.states.get(st).is_none());
}

#[test]
fn runtime_creation_reports_unknown_classes_and_bad_values() {
    let mut s = load("dyn-errors", FALLING);
    let body = find_node(&s, "body");
    let before = s.live_counts();
    let e = s.create_component(body, "NoSuchComponent", None, &[]).unwrap_err();
    assert!(e.to_string().contains("unknown component 'NoSuchComponent'"), "{e}");
    assert_eq!(s.live_counts(), before);
}

/// Two particles, each under its own implicit solver, joined by a spring declared in the
/// root (a node without solver).
const TWO_SOLVERS: &str = r#"<Node name="root" dt="0.1" gravity="0 0 0">
  <Node name="A">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="10" tolerance="1e-20" threshold="1e-30"/>
    <MechanicalObject name="a" position="0 0 0"/>
    <UniformMass totalMass="2"/>
  </Node>
  <Node name="B">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="10" tolerance="1e-20" threshold="1e-30"/>
    <MechanicalObject name="b" position="3 0 0"/>
    <UniformMass totalMass="5"/>
  </Node>
  <SpringForceField object1="@A/a" object2="@B/b" spring="0 0 40 0 1"/>
</Node>"#;

#[test]
fn a_spring_between_two_solvers_acts_as_an_explicit_external_force() {
    // The spring (k = 40, rest length 1, stretched to 3) pulls with |F| = 80 at x_n. As an
    // external force it gets no stiffness term, so each implicit solve is M·Δv = h·F:
    // v_a = 0.1·80/2 = 4, v_b = −0.1·80/5 = −1.6; x = h·v.
    let mut s = load("dyn-isolated", TWO_SOLVERS);
    animate(&mut s, 0.1).unwrap();
    let (a, b) = (state_named(&s, "a"), state_named(&s, "b"));
    let close = |x: f64, y: f64| (x - y).abs() < 1e-12;
    assert!(close(s.vec(a, VecId::VELOCITY)[0], 4.0), "{:?}", s.vec(a, VecId::VELOCITY));
    assert!(close(s.vec(b, VecId::VELOCITY)[0], -1.6), "{:?}", s.vec(b, VecId::VELOCITY));
    assert!(close(s.vec(a, VecId::POSITION)[0], 0.4));
    assert!(close(s.vec(b, VecId::POSITION)[0], 3.0 - 0.16));
    // Momentum is conserved: the forces are equal and opposite.
    assert!((2.0 * s.vec(a, VecId::VELOCITY)[0] + 5.0 * s.vec(b, VecId::VELOCITY)[0]).abs() < 1e-12);
    // External forces are cleared at the end of the step.
    assert!(s.vec(a, VecId::EXTERNAL_FORCE).is_empty());
}

/// A particle under an implicit solver tied by a zero-length spring declared in its own node
/// to a point of another node that no solver integrates.
fn anchored(linear_solver: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.1" gravity="0 0 0">
  <Node name="anchor">
    <MechanicalObject name="fixed" position="1 2 2"/>
  </Node>
  <Node name="A">
    <EulerImplicitSolver rayleighStiffness="0" rayleighMass="0"/>
    {linear_solver}
    <MechanicalObject name="a" position="0 0 0"/>
    <UniformMass totalMass="2"/>
    <SpringForceField object1="@a" object2="@/anchor/fixed" spring="0 0 50 0 0"/>
  </Node>
</Node>"#
    )
}

#[test]
fn an_interaction_with_a_state_outside_the_solver_treats_it_as_fixed() {
    // Zero rest length: F = k·(x_b − x_a) and K_aa = −k·I, so the implicit step solves
    // (m + h²k)·Δv = h·k·(x_b − x_a): Δv = 0.1·50·d/(2 + 0.5) = 2·d with d = (1, 2, 2).
    for solver in [r#"<CGLinearSolver iterations="10" tolerance="1e-20" threshold="1e-30"/>"#, r#"<SparseLDLSolver/>"#] {
        let mut s = load("dyn-anchor", &anchored(solver));
        animate(&mut s, 0.1).unwrap();
        let (a, fixed) = (state_named(&s, "a"), state_named(&s, "fixed"));
        let v = s.vec(a, VecId::VELOCITY).to_vec();
        for (c, d) in [1.0, 2.0, 2.0].iter().enumerate() {
            assert!((v[c] - 2.0 * d).abs() < 1e-12, "{solver}: {v:?}");
        }
        // The other side is not touched: no force, no displacement written into it.
        assert_eq!(s.vec(fixed, VecId::POSITION), &[1.0, 2.0, 2.0]);
        assert!(s.vec(fixed, VecId::FORCE).iter().all(|f| *f == 0.0));
    }
}

/// `FALLING`'s body as a scene of its own (its root is the body node), not initialised.
fn body_alone(factory: &settee_core::Factory) -> Scene {
    let body = r#"<Node name="body">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-20"/>
    <MechanicalObject name="dofs" position="0 0 0  1 0 0  0 1 0  0 0 1"/>
    <UniformMass totalMass="4"/>
</Node>"#;
    let dp = settee_scene::DataPath { dirs: Vec::new() };
    let desc = settee_scene::parse_scene_str(body, std::path::Path::new("body.scn"), &dp, &|c| factory.is_registered(c)).expect("parse");
    settee_scene::instantiate(&desc, factory, &[])
}

#[test]
fn a_grafted_scene_runs_as_the_same_scene_loaded_whole() {
    // What a Python script does when it builds a node on its own and attaches it:
    // the same scene as one loaded whole, bit for bit.
    let mut whole = load("graft-whole", FALLING);
    common::steps(&mut whole, 20);

    let factory = settee::factory();
    let mut root = Scene::new("root");
    let context = &mut root.node_mut(Scene::ROOT).context;
    context.dt = 0.01;
    context.gravity = [0.0, -10.0, 0.0];
    let body = body_alone(&factory);
    let map = root.graft(Scene::ROOT, body).expect("graft");
    assert_eq!(map.nodes.len(), 1);
    assert_eq!(map.components.len(), 4);
    let moved = root.node(Scene::ROOT).children[0];
    assert_eq!(root.node(moved).name, "body");
    assert_eq!(root.node(moved).objects.len(), 4);
    for &c in &root.node(moved).objects {
        assert_eq!(root.entry(c).node, moved);
    }
    let dofs = state_named(&root, "dofs");
    assert_eq!(root.store.get(dofs).node, moved);
    settee_core::simulation::init_root(&mut root, &factory).expect("init");
    common::steps(&mut root, 20);
    assert_eq!(common::state(&root, "dofs").read(VecId::POSITION), common::state(&whole, "dofs").read(VecId::POSITION));
    assert!(common::state(&root, "dofs").read(VecId::POSITION)[1] < -0.01, "the body fell");
}

#[test]
fn an_initialised_scene_cannot_be_grafted() {
    let factory = settee::factory();
    let mut body = body_alone(&factory);
    settee_core::simulation::init_root(&mut body, &factory).expect("init");
    let mut root = Scene::new("root");
    let e = root.graft(Scene::ROOT, body).expect_err("an initialised scene was grafted");
    assert!(e.to_string().contains("already initialised"), "{e}");
    assert_eq!(root.live_counts().components, 0);
}

#[test]
fn a_pruned_subtree_grafted_elsewhere_runs_as_the_scene_loaded_whole() {
    // What `newRoot.moveChild(child, oldParent)` does across two scenes: the subtree leaves one
    // scene, whole (an inactive node below it included), and runs in the other as if loaded there.
    let mut whole = load("prune-whole", FALLING);
    common::steps(&mut whole, 20);

    let factory = settee::factory();
    let with_idle = FALLING.replace(
        "<UniformMass totalMass=\"4\"/>",
        "<UniformMass totalMass=\"4\"/>\n<Node name=\"idle\" activated=\"false\"><MechanicalObject name=\"spare\"/></Node>",
    );
    let dp = settee_scene::DataPath { dirs: Vec::new() };
    let desc = settee_scene::parse_scene_str(&with_idle, std::path::Path::new("a.scn"), &dp, &|c| factory.is_registered(c)).expect("parse");
    let mut first = settee_scene::instantiate(&desc, &factory, &[]);
    let body = find_node(&first, "body");
    let before = first.live_counts();
    let (pruned, map) = first.prune(body).expect("prune");
    assert_eq!((map.nodes.len(), map.components.len()), (2, 5), "body, idle and their components move");
    assert!(first.node(Scene::ROOT).children.is_empty());
    assert_eq!(first.live_counts().components, before.components - 5);
    assert_eq!(pruned.root().name, "body");
    assert_eq!(pruned.node(Scene::ROOT).objects.len(), 4);
    assert!(first.prune(Scene::ROOT).is_err(), "a root cannot be pruned");

    let mut second = Scene::new("root");
    let context = &mut second.node_mut(Scene::ROOT).context;
    context.dt = 0.01;
    context.gravity = [0.0, -10.0, 0.0];
    let map = second.graft(Scene::ROOT, pruned).expect("graft");
    assert_eq!((map.nodes.len(), map.components.len()), (2, 5), "the inactive node is grafted too");
    settee_core::simulation::init_root(&mut second, &factory).expect("init");
    common::steps(&mut second, 20);
    assert_eq!(common::state(&second, "dofs").read(VecId::POSITION), common::state(&whole, "dofs").read(VecId::POSITION));
    assert!(common::state(&second, "dofs").read(VecId::POSITION)[1] < -0.01, "the body fell");
}
