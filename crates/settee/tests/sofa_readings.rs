//! Scene text SOFA reads through, read the same way (docs/reading-scenes.md): each case loads a
//! small scene and checks the values SOFA would use, and that a warning says what happened.

use settee_collision::components::models::CollisionModelComponent;
use settee_core::collision::CollisionModel;
use settee_core::diag::Severity;
use settee_core::simulation::animate;
use settee_core::{ComponentId, Scene, VecId};

fn load(name: &str, text: &str) -> Scene {
    let path = settee_testkit::temp_scene(name, text);
    settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|e| panic!("{:?}", e.diagnostics)).scene
}

fn find(s: &Scene, name: &str) -> ComponentId {
    s.preorder(Scene::ROOT).into_iter().flat_map(|n| s.node(n).objects.clone()).find(|&c| s.entry(c).name == name).unwrap()
}

fn warnings(s: &Scene) -> Vec<String> {
    s.messages.iter().filter(|m| m.severity == Severity::Warning).map(|m| m.message.clone()).collect()
}

fn positions(s: &Scene, name: &str) -> Vec<f64> {
    s.store.get(s.state_of(find(s, name)).unwrap()).read(VecId::POSITION).to_vec()
}

/// `0-0.6` is two numbers, as SOFA's stream reads them (SOFA's examples write `0-0.707107`).
#[test]
fn numbers_written_together_are_two_numbers() {
    let s = load("together", r#"<Node name="root"><MechanicalObject name="dofs" template="Rigid3d" position="0 0 0 0 0-0.6 0.8"/></Node>"#);
    assert_eq!(positions(&s, "dofs"), [0.0, 0.0, 0.0, 0.0, 0.0, -0.6, 0.8]);
    assert!(warnings(&s).iter().any(|w| w.contains("'0-0.6' is read as 2 numbers")), "{:?}", warnings(&s));
}

/// A rigid inertia written as a bracketed matrix gives the same mass as the plain numbers.
#[test]
fn a_rigid_inertia_in_brackets_is_a_matrix() {
    let scene = |mass: &str| {
        format!(
            r#"<Node name="root" gravity="0 0 0"><EulerExplicitSolver/><MechanicalObject template="Rigid3d" position="0 0 0 0 0 0 1" velocity="0 0 0 1 2 3"/><UniformMass name="m" vertexMass="{mass}"/></Node>"#
        )
    };
    let mut a = load("brackets", &scene("15 15 [20 0 0,0 40 0,0 0 60]"));
    let mut b = load("plain", &scene("15 15 20 0 0 0 40 0 0 0 60"));
    let (ma, mb) = (
        a.entry(find(&a, "m")).data.field("vertexMass").unwrap().value.clone(),
        b.entry(find(&b, "m")).data.field("vertexMass").unwrap().value.clone(),
    );
    assert_eq!(ma, mb);
    // The same inertia, so the same (gyroscopic) motion.
    for _ in 0..5 {
        animate(&mut a, 0.01).unwrap();
        animate(&mut b, 0.01).unwrap();
    }
    assert_eq!(
        a.store.get(a.state_of(find(&a, "MechanicalObject1")).unwrap()).read(VecId::POSITION),
        b.store.get(b.state_of(find(&b, "MechanicalObject1")).unwrap()).read(VecId::POSITION)
    );
}

/// DiagonalMass reads the same bracketed inertia for each rigid DOF (SOFA's octopus tutorial
/// writes `template="Rigid3,Rigid3"` and one `mass volume [inertia]` per frame).
#[test]
fn a_diagonal_rigid_mass_reads_bracketed_inertias() {
    let scene = |mass: &str| {
        format!(
            r#"<Node name="root" gravity="0 0 0"><EulerExplicitSolver/><MechanicalObject template="Rigid3d" position="0 0 0 0 0 0 1  1 0 0 0 0 0 1" velocity="0 0 0 1 2 3  0 0 0 3 2 1"/><MeshTopology edges="0 1"/><DiagonalMass template="Rigid3,Rigid3" name="m" vertexMass="{mass}"/></Node>"#
        )
    };
    let mut a = load("diag-brackets", &scene("15 15 [20 0 0,0 40 0,0 0 60] 1 1 [1 0 0,0 2 0,0 0 3]"));
    let mut b = load("diag-plain", &scene("15 15 20 0 0 0 40 0 0 0 60 1 1 1 0 0 0 2 0 0 0 3"));
    let (ma, mb) = (
        a.entry(find(&a, "m")).data.field("vertexMass").unwrap().value.clone(),
        b.entry(find(&b, "m")).data.field("vertexMass").unwrap().value.clone(),
    );
    assert_eq!(ma, mb);
    for _ in 0..5 {
        animate(&mut a, 0.01).unwrap();
        animate(&mut b, 0.01).unwrap();
    }
    let x = |s: &Scene| s.store.get(s.state_of(find(s, "MechanicalObject1")).unwrap()).read(VecId::POSITION).to_vec();
    assert_eq!(x(&a), x(&b));
    // Both frames turn (their inertias are not spheres, so the motion is not trivial).
    assert!(x(&a)[3..7] != [0.0, 0.0, 0.0, 1.0] && x(&a)[10..14] != [0.0, 0.0, 0.0, 1.0]);
}

/// A Data link to an object that does not exist: a warning, the Data keeps its default.
#[test]
fn a_link_to_a_missing_object_keeps_the_default() {
    let s = load(
        "missing-link",
        r#"<Node name="root"><MechanicalObject position="0 0 0  1 0 0"/><SphereCollisionModel name="spheres" radius="0.25" listRadius="@SphereLoader.listRadius"/></Node>"#,
    );
    assert!(warnings(&s).iter().any(|w| w.contains("object 'SphereLoader' not found")), "{:?}", warnings(&s));
    assert_eq!(s.get::<CollisionModelComponent>(find(&s, "spheres")).unwrap().geometry().radius, [0.25, 0.25]);
}

/// Spheres beyond a short listRadius take the default radius (SOFA's `getRadius`).
#[test]
fn spheres_beyond_list_radius_take_the_default() {
    let s = load(
        "short-radii",
        r#"<Node name="root"><MechanicalObject position="0 0 0  1 0 0  2 0 0"/><SphereCollisionModel name="spheres" radius="0.5" listRadius="0.1 0.2"/></Node>"#,
    );
    assert_eq!(s.get::<CollisionModelComponent>(find(&s, "spheres")).unwrap().geometry().radius, [0.1, 0.2, 0.5]);
    assert!(warnings(&s).iter().any(|w| w.contains("listRadius has 2 radii for 3 spheres")), "{:?}", warnings(&s));
}

/// `iterations="1e4"` is one iteration in SOFA: read as 1, with a warning.
#[test]
fn an_integer_written_as_a_real_is_its_integer_prefix() {
    let s = load("int-prefix", r#"<Node name="root"><CGLinearSolver name="cg" iterations="1e4" tolerance="1e-9" threshold="1e-9"/></Node>"#);
    assert_eq!(s.entry(find(&s, "cg")).data.field("iterations").unwrap().value, settee_core::Value::Int(1));
    assert!(warnings(&s).iter().any(|w| w.contains("'1e4' is not an integer: read as 1")), "{:?}", warnings(&s));
}

/// `Gravity` in the root overrides the root's gravity: a free point falls with it (explicit
/// Euler, exact for a constant force: v = g·t).
#[test]
fn the_gravity_component_sets_the_gravity() {
    let mut s = load(
        "gravity",
        r#"<Node name="root" gravity="0 -9.81 0"><Gravity gravity="1 0 -2"/><EulerExplicitSolver/><MechanicalObject name="dofs" position="0 0 0"/><UniformMass totalMass="2"/></Node>"#,
    );
    for _ in 0..10 {
        animate(&mut s, 0.01).unwrap();
    }
    let v = s.store.get(s.state_of(find(&s, "dofs")).unwrap()).read(VecId::VELOCITY).to_vec();
    assert!((v[0] - 0.1).abs() < 1e-12 && v[1] == 0.0 && (v[2] + 0.2).abs() < 1e-12, "{v:?}");
}

/// `template=""` is no template: deduced as when the attribute is absent (SOFA's
/// RigidMapping2d-basic.scn maps a Rigid2d state to a Vec2d one this way).
#[test]
fn an_empty_template_is_deduced() {
    let s = load(
        "empty-template",
        r#"<Node name="root" gravity="0 0 0"><MechanicalObject name="frame" template="Rigid2d" position="0 0 0.5"/>
  <Node name="tip"><MechanicalObject name="dofs" template="Vec2d" position="1 0"/><RigidMapping name="map" template="" input="@.." output="@."/></Node></Node>"#,
    );
    assert_eq!(s.entry(find(&s, "map")).template, "Rigid2d,Vec2d");
    let x = positions(&s, "dofs");
    assert!((x[0] - 0.5f64.cos()).abs() < 1e-15 && (x[1] - 0.5f64.sin()).abs() < 1e-15, "{x:?}");
}

/// SOFA's standard prefab `BoxConstraint` (`Objects/BoxConstraint.xml` in SOFA's data directory)
/// works without a data directory: Settee has its own definition; the points in the box stay
/// where they are while the others fall.
#[test]
fn a_standard_prefab_runs_without_a_data_directory() {
    let mut s = load(
        "builtin-prefab",
        r#"<Node name="root" gravity="0 -10 0"><CGImplicit/><MechanicalObject name="dofs" position="0 0 0  5 5 5"/><UniformMass totalMass="2"/>
  <BoxConstraint box="-1 -1 -1 1 1 1"/></Node>"#,
    );
    assert!(s.messages.iter().any(|m| m.message.contains("Settee's definition of SOFA's standard prefab Objects/BoxConstraint.xml")));
    for _ in 0..5 {
        animate(&mut s, 0.01).unwrap();
    }
    let x = positions(&s, "dofs");
    assert_eq!(&x[..3], &[0.0, 0.0, 0.0]);
    assert!(x[4] < 5.0, "{x:?}");
}
