//! Components are declared once (`#[component(...)]`): their Data, links, roles and factory entry
//! come from the declaration. These tests check what that promises from outside the core: a crate
//! (this test crate) defines a new role and a component playing it without touching the core;
//! a write by name of a Data the class does not declare, or of a value of another kind, is an
//! error; and every registered class's declaration is coherent.

use settee_core::component::ForceField;
use settee_core::data::DataError;
use settee_core::role::{self, RoleId};
use settee_core::simulation::{animate, init_root};
use settee_core::testing::add;
use settee_core::{component, Component, ComponentId, InitCtx, Scene, SimResult, Value, VecId};

/// A role no crate of Settee knows: something that warms a state's velocity every step.
trait Thermostat {
    /// Kinetic "temperature" added per step.
    fn kick(&self) -> f64;
    fn target(&self) -> ComponentId;
}

const THERMOSTAT: RoleId = RoleId::of::<dyn Thermostat>("Thermostat");

/// Adds a constant velocity to the first DOF of the node's state every step (test only).
///
/// A component of this test crate playing the new role, with Data of its own.
#[component(
    roles = [Thermostat],
    data = {
        /// velocity added to the first DOF's x every step
        kick: Real = "0.5",
        /// steps seen (output)
        steps: Int = "0",
    },
)]
#[derive(Clone, Default)]
struct TestThermostat {
    kick: f64,
    state: Option<ComponentId>,
}

impl Component for TestThermostat {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.kick = cx.data().get(Self::KICK);
        self.state = cx.mstate();
        Ok(())
    }

    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let s = scene.state_of(self.state.expect("initialised")).expect("a state");
        scene.store.get_mut(s).write(VecId::VELOCITY)[0] += self.kick;
        let steps = scene.entry(me).data.get(Self::STEPS);
        scene.entry_mut(me).data.put(Self::STEPS, steps + 1);
        Ok(())
    }
}

impl Thermostat for TestThermostat {
    fn kick(&self) -> f64 {
        self.kick
    }
    fn target(&self) -> ComponentId {
        self.state.expect("initialised")
    }
}

#[test]
fn a_crate_outside_the_core_adds_a_role_and_a_component_playing_it() {
    let mut f = settee::factory();
    f.add::<TestThermostat>();
    let mut s = Scene::new("root");
    s.node_mut(Scene::ROOT).context.gravity = [0.0; 3];
    let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0")]);
    add(&mut s, &f, Scene::ROOT, "UniformMass", &[("totalMass", "2")]);
    add(&mut s, &f, Scene::ROOT, "EulerExplicitSolver", &[("symplectic", "true")]);
    let t = add(&mut s, &f, Scene::ROOT, "TestThermostat", &[("kick", "0.25")]);
    init_root(&mut s, &f).unwrap();

    // The scene finds it by its role, and hands it out as the role's trait.
    assert_eq!(s.find_local(Scene::ROOT, THERMOSTAT), Some(t));
    assert!(s.entry(t).plays(THERMOSTAT) && !s.entry(t).plays(role::FORCE_FIELD));
    assert_eq!(s.find_local(Scene::ROOT, role::MASS).map(|c| s.entry(c).class.name), Some("UniformMass"));
    let th = s.role::<dyn Thermostat>(t).expect("plays the role");
    assert_eq!((th.kick(), th.target()), (0.25, mo));
    assert!(s.role::<dyn ForceField>(t).is_none());
    assert_eq!(s.entry(t).class.role_names(), ["Thermostat"]);

    // It takes part in the step like any component: three kicks of 0.25 on a free particle.
    for _ in 0..3 {
        animate(&mut s, 0.1).unwrap();
    }
    let st = s.state_of(mo).unwrap();
    assert_eq!(s.store.get(st).read(VecId::VELOCITY)[0], 0.75);
    // x = Σ dt·v over the three symplectic steps: 0.1·(0.25 + 0.5 + 0.75).
    assert!((s.store.get(st).read(VecId::POSITION)[0] - 0.15).abs() < 1e-15);
    #[allow(clippy::disallowed_methods)] // reading an output Data by name, as a user would
    let steps = s.entry(t).data.int("steps");
    assert_eq!(steps, 3);
}

#[test]
fn writing_an_undeclared_data_by_name_is_an_error() {
    let f = settee::factory();
    let mut s = Scene::new("root");
    let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0")]);
    let m = add(&mut s, &f, Scene::ROOT, "UniformMass", &[("totalMass", "2")]);
    let data = &mut s.entry_mut(m).data;
    match data.write_value("totalMas", Value::Real(3.0)) {
        Err(DataError::Unknown { name, known }) => {
            assert_eq!(name, "totalMas");
            assert!(known.contains(&"totalMass"), "{known:?}");
        }
        other => panic!("expected an unknown-Data error, got {other:?}"),
    }
    // A value of another kind is refused too, and nothing changes.
    let e = data.write_value("totalMass", Value::Str("heavy".into())).unwrap_err();
    assert_eq!(e.to_string(), "Data 'totalMass' is a real, not a string");
    let e = data.write_text("totalMass", "heavy").unwrap_err();
    assert!(matches!(e, DataError::Invalid { .. }), "{e}");
    #[allow(clippy::disallowed_methods)]
    let total = data.real("totalMass");
    assert_eq!(total, 2.0);
    // The checked write accepts what the kind holds.
    data.write_value("totalMass", Value::Int(4)).unwrap();
    #[allow(clippy::disallowed_methods)]
    let total = data.real("totalMass");
    assert_eq!(total, 4.0);
    // Positions of a Vec3 state are whole coordinates.
    let e = s.entry_mut(mo).data.write_value("position", Value::Reals { arity: 1, v: vec![1.0, 2.0] }).unwrap_err();
    assert!(matches!(e, DataError::WrongType { .. }), "{e}");
}

/// Every class of the full factory: Data names and aliases unique within the class, every link
/// target a role some class plays, and every class creatable with its defaults.
#[test]
fn every_declaration_is_coherent() {
    let f = settee::factory();
    let mut classes = 0;
    let played: Vec<RoleId> = f.classes().flat_map(|c| c.roles.iter().map(|p| p.role)).collect();
    for class in f.classes() {
        classes += 1;
        let mut names: Vec<&str> = settee_core::factory::BASE_DATA.iter().map(|d| d.name).collect();
        for d in class.data.iter().flat_map(|t| t.iter()) {
            assert!(!names.contains(&d.name), "{}: Data '{}' declared twice", class.name, d.name);
            names.push(d.name);
        }
        for l in class.links {
            if let Some(r) = l.target {
                assert!(played.contains(&r), "{}: link '{}' wants role {r:?}, which no class plays", class.name, l.name);
            }
        }
        assert!(!class.description.is_empty(), "{} has no description", class.name);
    }
    assert!(classes > 150, "only {classes} classes registered");
}

#[test]
fn each_class_names_the_sofa_module_that_registers_it() {
    let f = settee::factory();
    let module = |name: &str| f.class(name).unwrap_or_else(|| panic!("{name} is registered")).module;
    assert_eq!(module("MechanicalObject"), "Sofa.Component.StateContainer");
    assert_eq!(module("BoxROI"), "Sofa.Component.Engine.Select");
    assert_eq!(module("PointSetTopologyModifier"), "Sofa.Component.Topology.Container.Dynamic");
    assert_eq!(module("DefaultAnimationLoop"), "Sofa.Simulation.Core");
    assert_eq!(module("OglModel"), "Sofa.GL.Component.Rendering3D");
    assert_eq!(module("CompliantImplicitSolver"), "Compliant");
    // A module is a SOFA module or one of the plugins Settee has classes of.
    let plugins = ["Compliant", "MultiThreading", "SofaMatrix"];
    for class in f.classes() {
        let m = class.module;
        assert!(m.is_empty() || m.starts_with("Sofa.") || plugins.contains(&m), "{}: module '{m}'", class.name);
    }
}

#[test]
#[allow(clippy::disallowed_methods)] // the test reads the state's colour by name, as a script does
fn a_state_s_bounding_box_is_the_bounds_of_its_positions() {
    let f = settee::factory();
    let mut s = Scene::new("root");
    let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 1 2  -3 4 0.5  2 -1 7")]);
    let rigid = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", "1 2 3 0 0 0 1  -1 0 5 0 0 0 1")]);
    let empty = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[]);
    let other = add(&mut s, &f, Scene::ROOT, "UniformMass", &[]);
    init_root(&mut s, &f).unwrap();
    assert_eq!(s.bounding_box(mo), [-3.0, -1.0, 0.5, 2.0, 4.0, 7.0]);
    // A rigid frame's bounds are those of its origins.
    assert_eq!(s.bounding_box(rigid), [-1.0, 0.0, 3.0, 1.0, 2.0, 5.0]);
    // A MechanicalObject given no position has SOFA's one point at the origin.
    assert_eq!(s.bounding_box(empty), [0.0; 6]);
    // SOFA's empty box (min above max) for a component that computes none.
    let b = s.bounding_box(other);
    assert!((0..3).all(|i| b[i] > b[i + 3]), "{b:?}");
    // The colour Data of the state is SOFA's RGBAColor: a name reads as its 4 components.
    assert_eq!(s.entry(mo).data.reals("showColor"), [1.0, 1.0, 1.0, 1.0]);
}
