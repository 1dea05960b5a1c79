//! Points added and removed through a topology modifier while a scene runs (SofaPython3's
//! `PointSetTopologyModifier.addPoints`/`removePoints`, SOFA's `addPoints(n, ancestors, coefs)`):
//! the container, the mechanical state and the solver follow, from Rust through the
//! [`TopologyModifier`] role and from Python through the modifier's methods.

mod common;

use std::path::PathBuf;

use settee_core::simulation::animate;
use settee_core::topology_change::TopologyModifier;
use settee_core::{ComponentId, Scene, SimResult, VecId};

/// Three points falling freely (implicit Euler, uniform mass): every point has the same
/// acceleration, so a point made as a copy of another (one ancestor, weight 1) follows it bit
/// for bit.
const FALLING: &str = r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <DefaultAnimationLoop/>
  <EulerImplicitSolver rayleighStiffness="0" rayleighMass="0"/>
  <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-12"/>
  <PointSetTopologyContainer name="topo" position="0 0 0  1 0 0  0 2 0"/>
  <PointSetTopologyModifier name="modifier"/>
  <MechanicalObject name="dofs" position="0 0 0  1 0 0  0 2 0" velocity="0 0 0  0.5 0 0  0 0 1"/>
  <UniformMass totalMass="0.3"/>
</Node>
"#;

/// An edge set: point 2 belongs to no edge.
const EDGES: &str = r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <DefaultAnimationLoop/>
  <EdgeSetTopologyContainer name="topo" position="0 0 0  1 0 0  5 5 5  2 0 0" edges="0 1  1 3"/>
  <EdgeSetTopologyModifier name="modifier"/>
  <MechanicalObject name="dofs"/>
</Node>
"#;

fn load(name: &str, text: &str) -> Scene {
    let dir: PathBuf = common::temp_dir("topology-modifier", name);
    let path = dir.join(format!("{name}.scn"));
    std::fs::write(&path, text).unwrap();
    settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|e| panic!("{:?}", e.diagnostics)).scene
}

fn find(s: &Scene, name: &str) -> ComponentId {
    s.preorder(Scene::ROOT).into_iter().flat_map(|n| s.node(n).objects.clone()).find(|&c| s.entry(c).name == name).unwrap()
}

fn read(s: &Scene, v: VecId) -> Vec<f64> {
    s.store.get(s.state_of(find(s, "dofs")).unwrap()).read(v).to_vec()
}

fn container_points(s: &Scene) -> Vec<[f64; 3]> {
    s.get::<settee_topology::SetTopologyContainer>(find(s, "topo")).unwrap().topo().mesh.points.clone()
}

fn add(s: &mut Scene, count: usize, ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) -> SimResult {
    let m = find(s, "modifier");
    s.with_role::<dyn TopologyModifier, _>(m, |modifier, s| modifier.add_points(s, m, count, ancestors, coefs))
}

fn remove(s: &mut Scene, ids: Vec<usize>) -> SimResult {
    let m = find(s, "modifier");
    s.with_role::<dyn TopologyModifier, _>(m, |modifier, s| modifier.remove_points(s, m, ids))
}

#[test]
fn added_points_are_their_ancestors_weighted_sum_in_the_container_and_the_state() {
    let mut s = load("weights", FALLING);
    add(&mut s, 3, vec![vec![0, 1], vec![1, 2]], vec![vec![0.25, 0.75], vec![]]).unwrap();
    // Point 3: 0.25·p0 + 0.75·p1; point 4: equal weights; point 5: no ancestors, the origin.
    let x = read(&s, VecId::POSITION);
    assert_eq!(x.len(), 18);
    assert_eq!(&x[9..], &[0.75, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0]);
    let v = read(&s, VecId::VELOCITY);
    assert_eq!(&v[9..], &[0.375, 0.0, 0.0, 0.25, 0.0, 0.5, 0.0, 0.0, 0.0]);
    assert_eq!(container_points(&s)[3..], [[0.75, 0.0, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 0.0]]);
}

#[test]
fn a_point_added_mid_run_as_a_copy_falls_with_its_ancestor_bit_for_bit() {
    let mut s = load("falling", FALLING);
    for _ in 0..5 {
        animate(&mut s, 0.01).unwrap();
    }
    add(&mut s, 2, vec![vec![2], vec![0]], vec![vec![1.0], vec![1.0]]).unwrap();
    for _ in 0..20 {
        animate(&mut s, 0.01).unwrap();
    }
    let x = read(&s, VecId::POSITION);
    let v = read(&s, VecId::VELOCITY);
    assert_eq!(x.len(), 15);
    assert_eq!(x[9..12], x[6..9], "the copy of point 2 moves as point 2");
    assert_eq!(x[12..15], x[0..3], "the copy of point 0 moves as point 0");
    assert_eq!(v[9..12], v[6..9]);
    // Free fall: 25 steps of implicit Euler with the same g, starting at rest vertically.
    let vy = -9.81 * 0.01 * 25.0;
    assert!((v[13] - vy).abs() < 1e-9, "{} vs {vy}", v[13]);
    // The removal swaps the last point (the copy of point 0) into point 1's place.
    remove(&mut s, vec![1]).unwrap();
    let x2 = read(&s, VecId::POSITION);
    assert_eq!(x2.len(), 12);
    assert_eq!(x2[3..6], x[12..15]);
    animate(&mut s, 0.01).unwrap();
    let x3 = read(&s, VecId::POSITION);
    assert_eq!(x3[3..6], x3[0..3], "the copy of point 0, now point 1, still falls with point 0");
}

#[test]
fn removing_points_renames_the_last_one_and_refuses_points_in_use_or_out_of_range() {
    let mut s = load("edges", EDGES);
    let e = remove(&mut s, vec![1]).unwrap_err().to_string();
    assert!(e.contains("point 1") && e.contains("still use"), "{e}");
    let e = remove(&mut s, vec![7]).unwrap_err().to_string();
    assert!(e.contains("point 7") && e.contains("4 points"), "{e}");
    let e = add(&mut s, 1, vec![vec![9]], vec![]).unwrap_err().to_string();
    assert!(e.contains("point 9"), "{e}");
    let e = add(&mut s, 1, vec![vec![0, 1]], vec![vec![1.0]]).unwrap_err().to_string();
    assert!(e.contains("2 ancestors but 1 coefficients"), "{e}");

    // Point 2 is isolated: point 3 takes its index, and the edge (1, 3) becomes (1, 2).
    remove(&mut s, vec![2]).unwrap();
    assert_eq!(read(&s, VecId::POSITION), [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
    assert_eq!(s.mesh_of(find(&s, "topo")).unwrap().edges, vec![[0, 1], [1, 2]]);
    animate(&mut s, 0.01).unwrap();
}

#[test]
fn python_scripts_add_and_remove_points_with_sofapython3_s_methods() {
    let out = common::python(
        r#"
import Sofa, Sofa.Core, Sofa.Simulation

class Grower(Sofa.Core.Controller):
    def __init__(self, modifier, *a, **kw):
        Sofa.Core.Controller.__init__(self, *a, **kw)
        self.modifier = modifier
        self.steps = 0
    def onAnimateBeginEvent(self, event):
        self.steps += 1
        if self.steps == 3:
            self.modifier.addPoints(4, True)

root = Sofa.Core.Node("root")
root.gravity = [0, -9.81, 0]
root.addObject("DefaultAnimationLoop")
root.addObject("EulerImplicitSolver", rayleighStiffness=0, rayleighMass=0)
root.addObject("CGLinearSolver", iterations=25, tolerance=1e-12, threshold=1e-12)
root.addObject("PointSetTopologyContainer", points=[[0, 0, 0], [1, 0, 0]])
modifier = root.addObject("PointSetTopologyModifier")
mo = root.addObject("MechanicalObject")
root.addObject("UniformMass", totalMass=1.0)
root.addObject(Grower(modifier))
Sofa.Simulation.init(root)
print("class", type(modifier).__name__, isinstance(modifier, Sofa.Core.PointSetTopologyModifier))
for _ in range(5):
    Sofa.Simulation.animate(root, 0.01)
print("size", len(mo.position.value))
# The new points start at rest at the origin and fall from there.
print("new", mo.position.value[2][1] < 0, mo.position.value[5][0] == 0.0)
modifier.removePoints([5, 4], True)
print("after", len(mo.position.value))
for call in ("modifier.removePoints([0], False)", "modifier.addPoints(1, False)", "modifier.removePoints([40], True)"):
    try:
        eval(call)
        print("accepted", call)
    except (NotImplementedError, ValueError) as e:
        print("refused", type(e).__name__)
"#,
    );
    assert!(out.contains("class PointSetTopologyModifier True"), "{out}");
    assert!(out.contains("size 6"), "{out}");
    assert!(out.contains("new True True"), "{out}");
    assert!(out.contains("after 4"), "{out}");
    assert_eq!(out.matches("refused NotImplementedError").count(), 2, "{out}");
    assert_eq!(out.matches("refused ValueError").count(), 1, "{out}");
    assert!(!out.contains("accepted"), "{out}");
}
