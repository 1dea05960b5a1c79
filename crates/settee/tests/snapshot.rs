//! Copies of a whole scene (issue 20): a snapshot restored mid-run continues bit for bit as the
//! original did, contacts, solver warm starts and topological changes included; clones stepped
//! on two threads give the trajectories of separate runs; a component that cannot be copied
//! stops the copy with its name.

use std::path::{Path, PathBuf};

use settee_core::component::CreateArgs;
use settee_core::simulation::animate;
use settee_core::types::Layout;
use settee_core::{component, Component, Factory, Scene, VecId};

fn scene_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes").join(rel)
}

fn load(rel: &str) -> Scene {
    settee::load(&scene_path(rel), &settee::factory(), &[]).unwrap_or_else(|e| panic!("{rel}: {:?}", e.diagnostics)).scene
}

/// Every state's size and the bits of its positions, velocities, free motion and forces.
fn record(s: &Scene) -> Vec<(usize, Vec<u64>)> {
    let ids = [VecId::POSITION, VecId::VELOCITY, VecId::FREE_POSITION, VecId::FREE_VELOCITY, VecId::FORCE];
    s.store
        .states
        .values()
        .map(|st| {
            let bits = ids.iter().filter(|&&id| st.is_set(id)).flat_map(|&id| st.read(id).iter().map(|v| v.to_bits())).collect();
            (st.size, bits)
        })
        .collect()
}

/// `n` steps, the record after each.
fn run(s: &mut Scene, n: usize) -> Vec<Vec<(usize, Vec<u64>)>> {
    let dt = s.root().context.dt;
    (0..n)
        .map(|_| {
            animate(s, dt).unwrap();
            record(s)
        })
        .collect()
}

fn first_difference(a: &[Vec<(usize, Vec<u64>)>], b: &[Vec<(usize, Vec<u64>)>]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y).or((a.len() != b.len()).then_some(a.len().min(b.len())))
}

#[test]
fn a_contact_scene_restored_mid_run_repeats_its_steps_bit_for_bit() {
    // FreeMotionAnimationLoop, frictional Lagrangian contact (mu = 0.5) solved by block
    // Gauss-Seidel, LinearSolverConstraintCorrection on a SparseLDLSolver.
    let mut s = load("first_scene_4_contact_constraint.scn");
    let uid = s.uid;
    run(&mut s, 40);
    assert!(s.contacts.acting() > 0, "the cube rests on the floor with contacts at the snapshot");
    let snap = s.snapshot().unwrap();
    let at_snapshot = record(&s);
    assert_eq!(snap.time(), s.root().context.time);
    let first = run(&mut s, 100);
    assert!(s.contacts.acting() > 0);
    s.restore(&snap).unwrap();
    assert_eq!(s.uid, uid, "a restored scene keeps its uid");
    assert_eq!(record(&s), at_snapshot);
    assert_eq!(s.root().context.time, snap.time());
    let again = run(&mut s, 100);
    assert_eq!(first_difference(&first, &again), None, "the steps after the restore differ from the first run");
    // A snapshot serves again: a second restore repeats the same steps once more.
    s.restore(&snap).unwrap();
    assert_eq!(first_difference(&first, &run(&mut s, 100)), None);
}

#[test]
fn clones_stepped_on_two_threads_follow_the_runs_of_separate_loads() {
    let name = "first_scene_4_contact_constraint.scn";
    // References: two loads run one after the other, the second with another gravity.
    let mut a = load(name);
    let reference_a = run(&mut a, 60);
    let mut b = load(name);
    b.node_mut(Scene::ROOT).context.gravity = [0.0, -4.0, 0.0];
    let reference_b = run(&mut b, 60);
    assert_ne!(reference_a, reference_b);

    // Two clones of one load, the second given the other gravity, stepped at the same time.
    let original = load(name);
    let mut c1 = original.try_clone().unwrap();
    let mut c2 = original.try_clone().unwrap();
    assert!(c1.uid != original.uid && c2.uid != original.uid && c1.uid != c2.uid, "every copy has a uid of its own");
    c2.node_mut(Scene::ROOT).context.gravity = [0.0, -4.0, 0.0];
    let (t1, t2) = std::thread::scope(|threads| {
        let h1 = threads.spawn(|| run(&mut c1, 60));
        let h2 = threads.spawn(|| run(&mut c2, 60));
        (h1.join().unwrap(), h2.join().unwrap())
    });
    assert_eq!(first_difference(&t1, &reference_a), None);
    assert_eq!(first_difference(&t2, &reference_b), None);
    // The original did not move.
    assert_eq!(original.root().context.time, 0.0);
}

#[test]
fn a_restore_after_topological_changes_continues_bit_for_bit() {
    // TopologicalChangeProcessor cuts the beam's tetrahedra over 100 steps.
    let mut s = load("cutting/cutting_beam.scn");
    let dofs = s.store.states.values().map(|st| st.size).collect::<Vec<_>>();
    let topo = s.components.iter().find(|(_, e)| e.class.name == "TetrahedronSetTopologyContainer").map(|(id, _)| id).unwrap();
    let tetras = |s: &Scene| s.mesh_of(topo).unwrap().tetrahedra.len();
    let initial = tetras(&s);
    run(&mut s, 50);
    let at_snapshot = tetras(&s);
    assert!(at_snapshot < initial, "the cut has begun at the snapshot");
    let snap = s.snapshot().unwrap();
    let first = run(&mut s, 30);
    assert!(tetras(&s) < at_snapshot, "the cut goes on after the snapshot");
    s.restore(&snap).unwrap();
    assert_eq!(tetras(&s), at_snapshot, "the topology is back");
    let again = run(&mut s, 30);
    assert_eq!(first_difference(&first, &again), None);
    assert_eq!(dofs.len(), s.store.len());
}

/// A component of this test that is not `Clone` (test only).
#[component(data = {})]
#[derive(Default)]
struct Opaque;

impl Component for Opaque {}

#[test]
fn a_component_that_cannot_be_copied_stops_the_copy_with_its_name() {
    let mut f = settee::factory();
    f.add::<Opaque>();
    let mut s = load("first_scene_4_contact_constraint.scn");
    let cube = s.node(Scene::ROOT).children[0];
    settee_core::testing::add(&mut s, &f, cube, "Opaque", &[("name", "secret")]);
    let e = s.try_clone().err().expect("a clone refuses");
    let text = e.to_string();
    assert!(text.contains("Opaque 'secret'") && text.contains("/root/cube") && text.contains("not Clone"), "{text}");
    assert!(s.snapshot().is_err(), "so does a snapshot");
    // The scene itself runs on.
    animate(&mut s, 0.01).unwrap();
}

#[test]
fn a_component_running_cannot_be_copied() {
    let mut s = load("first_scene_4_contact_constraint.scn");
    let lp = s.animation_loop.unwrap();
    let refused = s.with_taken(lp, |_, scene| scene.try_clone().err().map(|e| e.to_string()));
    assert!(refused.unwrap().contains("between steps"));
}

/// What a class's default object gives when copied.
fn refusals(f: &Factory) -> Vec<String> {
    let mut out = Vec::new();
    for class in f.classes() {
        let template = class.default_template;
        let layout = template.split(',').next().and_then(Layout::from_name);
        let obj = (class.create)(&CreateArgs { template, layout });
        if let Err(r) = obj.clone_component() {
            out.push(format!("{}: {r}", class.name));
        }
    }
    out
}

#[test]
fn every_registered_class_can_be_copied() {
    // Python controllers are registered by the Python bindings only; every class of the
    // engine's factory copies (docs/architecture.md, "Copies of a scene").
    let refused = refusals(&settee::factory());
    assert!(refused.is_empty(), "classes that refuse to be copied:\n{}", refused.join("\n"));
}

#[test]
fn slaves_and_masters_are_kept_by_copies_and_forgotten_with_their_component() {
    let f = settee::factory();
    let mut s = Scene::new("root");
    let master = settee_core::testing::add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("name", "master")]);
    let a = settee_core::testing::add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("name", "a")]);
    let b = settee_core::testing::add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("name", "b")]);
    s.add_slave(master, a);
    s.add_slave(master, b);
    s.add_slave(master, a); // already its slave: nothing changes
    assert_eq!(s.entry(master).slaves, vec![a, b]);
    assert_eq!(s.entry(a).master, Some(master));
    let copy = s.try_clone().unwrap();
    let snap = s.snapshot().unwrap();
    // A slave given to another master leaves the first.
    s.add_slave(b, a);
    assert_eq!(s.entry(master).slaves, vec![b]);
    assert_eq!(s.entry(b).slaves, vec![a]);
    assert_eq!(copy.entry(master).slaves, vec![a, b]);
    assert_eq!(copy.entry(b).master, Some(master));
    s.restore(&snap).unwrap();
    assert_eq!(s.entry(master).slaves, vec![a, b]);
    assert_eq!(s.entry(a).master, Some(master));
    // Removing a component removes its ids from masters and slaves.
    s.remove_component(a);
    assert_eq!(s.entry(master).slaves, vec![b]);
    s.remove_component(master);
    assert_eq!(s.entry(b).master, None);
}
