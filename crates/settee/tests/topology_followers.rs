//! Components following a topological change in a whole scene (issue 11): a cloth on a
//! TriangleSetTopologyContainer with bending springs, a fixed point, triangle/line/point
//! collision models against a floor, a visual model and a mapped copy in child nodes. A triangle
//! is removed by hand (the change log SOFA's modifier emits) and the scene keeps stepping. (The
//! cloth has no solver and no mass: the masses follow changes in another piece of work; the
//! collision pipeline runs all the same, with the cloth resting within the floor's alarm
//! distance.)

use std::path::PathBuf;

use settee_collision::components::models::CollisionModelComponent;
use settee_collision::components::penalty::PenalityContactForceField;
use settee_core::collision::CollisionModel;
use settee_core::simulation::animate;
use settee_core::testing::edits;
use settee_core::topology_change::{propagate, ElementKind};
use settee_core::{ComponentId, Scene, VecId};
use settee_mapping::IdentityMapping;
use settee_projective::FixedProjectiveConstraint;
use settee_spring::TriangularBendingSprings;
use settee_topology::SetTopologyContainer;

const SCENE: &str = r#"<Node name="root" dt="0.01" gravity="0 0 -9.81">
  <DefaultAnimationLoop/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.3" contactDistance="0.1"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="floor">
    <MechanicalObject position="-5 -5 0  5 -5 0  5 5 0  -5 5 0"/>
    <MeshTopology triangles="0 1 2  0 2 3"/>
    <TriangleCollisionModel moving="0" simulated="0"/>
  </Node>
  <Node name="cloth">
    <MechanicalObject name="dofs" position="0 0 0.05  1 0 0.05  0 1 0.05  1 1 0.1  2 0 0.05"/>
    <TriangleSetTopologyContainer name="topo" triangles="0 1 2  1 3 2  1 4 3"/>
    <TriangularBendingSprings name="bend" stiffness="100" damping="0"/>
    <FixedProjectiveConstraint name="fixed" indices="2 4"/>
    <TriangleCollisionModel name="tri"/>
    <LineCollisionModel name="line"/>
    <PointCollisionModel name="point"/>
    <Node name="visual">
      <OglModel name="ogl"/>
      <IdentityMapping name="tovisual"/>
    </Node>
    <Node name="mapped">
      <MechanicalObject name="copy"/>
      <IdentityMapping name="tocopy"/>
    </Node>
  </Node>
</Node>
"#;

fn load() -> Scene {
    let dir = std::env::temp_dir().join(format!("settee-topology-followers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join("cloth.scn");
    std::fs::write(&path, SCENE).unwrap();
    let loaded = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|e| panic!("{:?}", e.diagnostics));
    loaded.scene
}

fn find(s: &Scene, name: &str) -> ComponentId {
    s.preorder(Scene::ROOT)
        .into_iter()
        .flat_map(|n| s.node(n).objects.clone())
        .find(|&c| s.entry(c).name == name)
        .unwrap_or_else(|| panic!("no component '{name}'"))
}

fn model<'a>(s: &'a Scene, name: &str) -> &'a CollisionModelComponent {
    s.get::<CollisionModelComponent>(find(s, name)).unwrap()
}

fn size(s: &Scene, name: &str) -> usize {
    s.store.get(s.state_of(find(s, name)).unwrap()).size
}

#[test]
fn a_cloth_losing_a_triangle_keeps_stepping_with_every_follower_updated() {
    let mut s = load();
    for _ in 0..5 {
        animate(&mut s, 0.01).unwrap();
    }
    assert_eq!(model(&s, "tri").geometry().triangles.len(), 3);
    assert_eq!(model(&s, "line").geometry().edges.len(), 7);
    assert_eq!(s.get::<TriangularBendingSprings>(find(&s, "bend")).unwrap().springs().len(), 2);

    // Triangle 0 (0 1 2) goes with its border edges (2, 0), (0, 1) and point 0: point 4 (fixed)
    // takes index 0, point 2 (fixed) keeps its index.
    let topo = find(&s, "topo");
    let t = s.get_mut::<SetTopologyContainer>(topo).unwrap().topo_mut();
    let (mut mesh, mut n) = (t.mesh.clone(), t.nb_points);
    let log = edits::remove_surface(&mut mesh, &mut n, ElementKind::Triangle, &[0]);
    (t.mesh, t.nb_points) = (mesh, n);
    propagate(&mut s, topo, &log).unwrap();

    assert_eq!(s.mesh_of(topo).unwrap().triangles, vec![[1, 0, 3], [1, 3, 2]]);
    assert_eq!(size(&s, "dofs"), 4);
    assert_eq!(size(&s, "copy"), 4, "the mapped state in the child node is resized with its input");
    assert_eq!(s.get::<FixedProjectiveConstraint>(find(&s, "fixed")).unwrap().indices(), &[2, 0]);
    let bend = s.get::<TriangularBendingSprings>(find(&s, "bend")).unwrap();
    // Only the edge (1, 3) is still shared: its spring joins 2 and 0 (the old point 4).
    assert_eq!(bend.springs().len(), 1);
    let sp = bend.springs()[0];
    assert_eq!([sp.m1.min(sp.m2), sp.m1.max(sp.m2)], [0, 2]);
    assert_eq!(model(&s, "tri").geometry().triangles.len(), 2);
    assert_eq!(model(&s, "line").geometry().edges.len(), 5);
    assert_eq!(model(&s, "tri").geometry().triangle_normals.len(), 2);

    // The step goes on (detection on the changed models included); the mapped copy follows
    // its input.
    for _ in 0..3 {
        animate(&mut s, 0.01).unwrap();
    }
    let x = s.store.get(s.state_of(find(&s, "dofs")).unwrap()).read(VecId::POSITION).to_vec();
    let copy = s.store.get(s.state_of(find(&s, "copy")).unwrap()).read(VecId::POSITION).to_vec();
    assert_eq!(x, copy);
    // The point model's positions are read from the store at each detection.
    assert_eq!(model(&s, "point").geometry().x.len(), 4);
    assert_eq!(x, [2.0, 0.0, 0.05, 1.0, 0.0, 0.05, 0.0, 1.0, 0.05, 1.0, 1.0, 0.1]);
    assert!(s.get::<IdentityMapping>(find(&s, "tovisual")).is_some());
    // Contacts against the floor were found on the changed mesh, naming existing points (the
    // contacts' force fields are data of the response, in no node).
    let contacts: Vec<_> =
        s.components.iter().filter_map(|(c, _)| s.get::<PenalityContactForceField>(c)).flat_map(|f| f.contacts().to_vec()).collect();
    assert!(!contacts.is_empty());
    assert!(contacts.iter().all(|c| c.m1 < 4 || c.m2 < 4), "{contacts:?}");
}
