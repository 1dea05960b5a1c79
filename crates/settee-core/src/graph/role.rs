//! Roles: what a component does in a step, as traits.
//!
//! A role is a trait (object-safe, so the scene can hand out `&mut dyn ForceField`). A class says
//! which roles its struct plays in its declaration (`#[component(roles = [ForceField], ...)]`),
//! and the declaration records, per role, how to view the object as that trait ([`RolePlay`]).
//! The scene finds components by role ([`crate::Scene::find_local`], [`crate::Scene::role`]) and
//! the step plan keeps one list per role it needs. Nothing here enumerates the roles: any crate
//! can define a trait and use it as a role, and a role with no methods is a marker
//! (`markers = [Visual]` in a declaration).

use std::any::{Any, TypeId};
use std::fmt;

/// Identifies a role: the trait object type of its trait, and a name for messages.
#[derive(Clone, Copy)]
pub struct RoleId {
    name: &'static str,
    type_id: fn() -> TypeId,
}

impl RoleId {
    /// The role of trait `R` (written `RoleId::of::<dyn MyRole>("MyRole")`).
    pub const fn of<R: ?Sized + 'static>(name: &'static str) -> RoleId {
        RoleId { name, type_id: TypeId::of::<R> }
    }
    pub fn name(&self) -> &'static str {
        self.name
    }
    pub fn type_id(&self) -> TypeId {
        (self.type_id)()
    }
}

impl PartialEq for RoleId {
    fn eq(&self, o: &RoleId) -> bool {
        self.type_id() == o.type_id()
    }
}
impl Eq for RoleId {}

impl std::hash::Hash for RoleId {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.type_id().hash(h)
    }
}

impl fmt::Debug for RoleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// How a concrete type is viewed as the role trait `R`.
pub struct Caster<R: ?Sized + 'static> {
    pub get: fn(&dyn Any) -> Option<&R>,
    pub get_mut: fn(&mut dyn Any) -> Option<&mut R>,
}

/// One role a class plays, with its cast (written by the `#[component]` declaration).
pub struct RolePlay {
    pub role: RoleId,
    caster: &'static (dyn Any + Send + Sync),
}

impl RolePlay {
    pub const fn new<R: ?Sized + 'static>(role: RoleId, caster: &'static Caster<R>) -> RolePlay {
        RolePlay { role, caster }
    }

    fn caster<R: ?Sized + 'static>(&self) -> Option<&'static Caster<R>> {
        self.caster.downcast_ref::<Caster<R>>()
    }
}

impl fmt::Debug for RolePlay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.role.fmt(f)
    }
}

/// Finds the cast of role `R` among a class's roles.
fn find<R: ?Sized + 'static>(plays: &[RolePlay]) -> Option<&'static Caster<R>> {
    let t = TypeId::of::<R>();
    plays.iter().find(|p| p.role.type_id() == t).and_then(|p| p.caster::<R>())
}

/// Views `obj` (a component as `Any`) as role `R` if its class plays it.
pub fn cast<'a, R: ?Sized + 'static>(plays: &[RolePlay], obj: &'a dyn Any) -> Option<&'a R> {
    find::<R>(plays).and_then(|c| (c.get)(obj))
}

/// Views `obj` as role `R` if its class plays it, mutably.
pub fn cast_mut<'a, R: ?Sized + 'static>(plays: &[RolePlay], obj: &'a mut dyn Any) -> Option<&'a mut R> {
    find::<R>(plays).and_then(|c| (c.get_mut)(obj))
}

// ----- marker roles ------------------------------------------------------------------------------

/// A mechanical state (MechanicalObject): the factory gives it a state in the store.
pub trait MechanicalState {}
/// A loader (reads a file into Data).
pub trait Loader {}
/// An engine (computes output Data from input Data).
pub trait Engine {}
/// Rendering, GUI or scene-setting components: recognised, no effect on the simulation.
pub trait Visual {}
/// A visual model (a mapping may output into it).
pub trait VisualModel {}
/// The visual loop of the GUI.
pub trait VisualLoop {}
/// A sparse-matrix ordering method.
pub trait Ordering {}
/// Topology algorithms and geometry helpers (SOFA's `*SetTopologyAlgorithms`, `*GeometryAlgorithms`).
pub trait TopologyAlgorithms {}
/// A force field acting on two states (`object1` and `object2`).
pub trait Interaction {}
/// `RequiredPlugin`.
pub trait Plugin {}
/// A linear system component (SOFA's `*LinearSystem`).
pub trait LinearSystem {}
/// A mapping that may be mechanical (forces and constraints travel through it).
pub trait MechanicalMapping {}
/// A broad phase of collision detection.
pub trait BroadPhase {}
/// A narrow phase of collision detection.
pub trait NarrowPhase {}

/// A context object (SOFA's `ContextObject`, e.g. `Gravity`): it changes the context of its
/// node, which the node's descendants inherit. Applied at init, when the node takes its parent's
/// context, and again every time the context is copied down.
pub trait ContextObject {
    fn apply(&self, context: &mut crate::graph::scene::Context);
}

/// A topology container: it gives a mesh.
pub trait Topology {
    /// The mesh (valid from creation on).
    fn mesh(&self) -> &crate::graph::topology::MeshData;
}

// ----- the graph's own roles ------------------------------------------------------------------

macro_rules! role_ids {
    ($($konst:ident = $name:literal $t:ty;)*) => {
        $(pub const $konst: RoleId = RoleId::of::<$t>($name);)*
    };
}

role_ids! {
    MECHANICAL_STATE = "MechanicalState" dyn MechanicalState;
    LOADER = "Loader" dyn Loader;
    ENGINE = "Engine" dyn Engine;
    VISUAL = "Visual" dyn Visual;
    VISUAL_MODEL = "VisualModel" dyn VisualModel;
    VISUAL_LOOP = "VisualLoop" dyn VisualLoop;
    ORDERING = "Ordering" dyn Ordering;
    TOPOLOGY_ALGORITHMS = "TopologyAlgorithms" dyn TopologyAlgorithms;
    INTERACTION = "Interaction" dyn Interaction;
    PLUGIN = "Plugin" dyn Plugin;
    LINEAR_SYSTEM = "LinearSystem" dyn LinearSystem;
    MECHANICAL_MAPPING = "MechanicalMapping" dyn MechanicalMapping;
    BROAD_PHASE = "BroadPhase" dyn BroadPhase;
    NARROW_PHASE = "NarrowPhase" dyn NarrowPhase;
    TOPOLOGY = "Topology" dyn Topology;
    CONTEXT_OBJECT = "ContextObject" dyn ContextObject;
}
