//! Components and the roles they play in a step.
//!
//! A component is a boxed [`Component`] with the lifecycle hooks; the roles it plays (force field,
//! mass, solver, …) are traits, declared with its class (`#[component(roles = [...])]`) and
//! reached through the scene ([`crate::Scene::role`]). Numerical entry points receive the vectors
//! they work on as slices lent from the state store.

use std::any::Any;

use crate::graph::role::{RoleId, RolePlay};

use crate::diag::SimResult;
use crate::graph::data::DataDecl;
use crate::graph::scene::{InitCtx, Scene};

/// How a class chooses its template when the scene does not give one (SOFA's `canCreate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplateRule {
    /// The registered default template.
    Default,
    /// The template of the mechanical state it attaches to (`mstate` link or context state).
    FromState,
    /// Mappings: `In,Out` from the input and output states.
    FromMapping,
    /// Interactions: the template of `object1`/`object2`.
    FromPair,
    /// The template of the context mechanical state, but only when the scene gives none: a given
    /// template is taken as it is (engines whose `canCreate` checks the state only then, such as
    /// SubsetTopology or PairBoxROI).
    FromStateWhenNotGiven,
}

/// Declaration of an object link (`topology="@grid"`, `linearSolver="@cg"` …).
#[derive(Debug)]
pub struct LinkDecl {
    pub name: &'static str,
    /// The role the target must play (`None` accepts any component; see `to_node_or_state`).
    pub target: Option<RoleId>,
    /// True when the link designates nodes (mapping inputs may be written `@..`).
    pub to_node_or_state: bool,
    pub multi: bool,
    /// When the path names a node without such a target, search its ancestors (SOFA's
    /// `SearchUp` for the ODE-solver links of constraint corrections).
    pub search_up: bool,
    pub help: &'static str,
}

pub const fn link(name: &'static str, target: RoleId, help: &'static str) -> LinkDecl {
    LinkDecl { name, target: Some(target), to_node_or_state: false, multi: false, search_up: false, help }
}

/// Everything a constructor may need.
pub struct CreateArgs<'a> {
    pub template: &'a str,
    pub layout: Option<crate::types::Layout>,
}

/// Rewrites a component's `(name, value)` attributes before they are parsed.
pub type PreparseFn = fn(&mut Vec<(String, String)>);

/// A registered component class: what its `#[component]` declaration says.
pub struct ComponentClass {
    pub name: &'static str,
    pub description: &'static str,
    /// The SOFA module that registers the class (its factory entry's target, e.g.
    /// `Sofa.Component.StateContainer`); empty for classes that only Settee has.
    pub module: &'static str,
    /// The roles it plays, with the casts from its object to each role's trait.
    pub roles: &'static [RolePlay],
    /// Accepted templates (after alias resolution); empty for classes without template.
    pub templates: &'static [&'static str],
    pub default_template: &'static str,
    pub template_rule: TemplateRule,
    pub data: &'static [&'static [DataDecl]],
    /// Indexed Data families (`position1..N` counted by `nbMeshes`), whose instances the factory
    /// adds to the component's Data.
    pub families: &'static [crate::data::DataFamily],
    pub links: &'static [LinkDecl],
    pub create: fn(&CreateArgs) -> Box<dyn Component>,
    /// Rewrites attributes before parsing (SOFA's per-class `parse` overrides, e.g. `dx dy dz`).
    pub preparse: Option<PreparseFn>,
    /// Data names that `src=` must not link (on top of the common ones).
    pub no_src_link: &'static [&'static str],
}

impl ComponentClass {
    /// Whether the class plays `role`.
    pub fn plays(&self, role: RoleId) -> bool {
        self.roles.iter().any(|p| p.role == role)
    }

    /// Views an object of this class as role `R`.
    pub fn cast<'a, R: ?Sized + 'static>(&self, obj: &'a dyn Component) -> Option<&'a R> {
        crate::graph::role::cast(self.roles, obj.as_any())
    }

    /// Views an object of this class as role `R`, mutably.
    pub fn cast_mut<'a, R: ?Sized + 'static>(&self, obj: &'a mut dyn Component) -> Option<&'a mut R> {
        crate::graph::role::cast_mut(self.roles, obj.as_any_mut())
    }

    /// The names of its roles, for documentation.
    pub fn role_names(&self) -> Vec<&'static str> {
        self.roles.iter().map(|p| p.role.name()).collect()
    }
}

/// A struct whose `#[component]` declaration gives the classes it implements (most structs
/// implement one; the factory registers them with [`crate::Factory::add`]).
pub trait Declared {
    const CLASSES: &'static [&'static ComponentClass];
}

/// The object behind a component as `Any` (written by the `#[component]` declaration), so that
/// role casts and [`crate::Scene::get`] can reach the concrete type.
pub trait ComponentAny: Any {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// An independent copy of the object (for [`crate::Scene::try_clone`] and snapshots): the
    /// declaration writes it as `Clone::clone` when the type is `Clone`, else as a refusal.
    fn clone_component(&self) -> Result<Box<dyn Component>, CloneRefused>;
}

/// A component that cannot be copied, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloneRefused {
    /// The Rust type of the object.
    pub type_name: &'static str,
    pub reason: String,
}

impl std::fmt::Display for CloneRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.reason, self.type_name)
    }
}

/// What `#[component]` calls to write [`ComponentAny::clone_component`]: autoref
/// specialization picks [`clone_spec::ViaClone`] for a `Clone` type and
/// [`clone_spec::ViaRefusal`] for any other, so a type that is not `Clone` still builds and
/// says at run time that it cannot be copied.
#[doc(hidden)]
pub mod clone_spec {
    use super::{CloneRefused, Component};

    pub struct Probe<'a, T>(pub &'a T);

    pub trait ViaClone {
        fn clone_component(&self) -> Result<Box<dyn Component>, CloneRefused>;
    }
    impl<T: Component + Clone> ViaClone for Probe<'_, T> {
        fn clone_component(&self) -> Result<Box<dyn Component>, CloneRefused> {
            Ok(Box::new(self.0.clone()))
        }
    }

    pub trait ViaRefusal {
        fn clone_component(&self) -> Result<Box<dyn Component>, CloneRefused>;
    }
    impl<T: Component> ViaRefusal for &Probe<'_, T> {
        fn clone_component(&self) -> Result<Box<dyn Component>, CloneRefused> {
            Err(CloneRefused { type_name: std::any::type_name::<T>(), reason: "its type cannot be copied (not Clone)".into() })
        }
    }

    /// A generic declaration lists its concrete types; an instance of another one refuses.
    pub fn unlisted(type_name: &'static str) -> CloneRefused {
        CloneRefused { type_name, reason: "its type is not one the declaration lists".into() }
    }
}

/// Simulation-wide parameters passed to numerical entry points.
#[derive(Clone, Copy, Debug)]
pub struct MechParams {
    pub dt: f64,
    /// Context time (beginning of the step).
    pub time: f64,
    pub gravity: [f64; 3],
}

/// A component instance.
/// A component instance: the lifecycle hooks every component may have. What a component does
/// in a step is given by the role traits it plays (see [`crate::role`]), not by this trait.
pub trait Component: ComponentAny + Send {
    /// Called at creation, right after the attributes are parsed (SOFA computes some outputs at
    /// parse time, e.g. grid topologies and loaders).
    fn parsed(&mut self, _cx: &mut InitCtx) -> SimResult {
        Ok(())
    }
    fn init(&mut self, _cx: &mut InitCtx) -> SimResult {
        Ok(())
    }
    fn bwd_init(&mut self, _cx: &mut InitCtx) -> SimResult {
        Ok(())
    }
    /// Start-of-step hook (SOFA's AnimateBeginEvent for listening components).
    /// Some of this component's linked Data changed since it last saw them (an engine output it
    /// reads was recomputed, a state it links to moved): components that keep values derived
    /// from their Data update them here; engines recompute their outputs. Called by
    /// [`crate::simulation::update_live_data`], after the components it reads from.
    fn data_changed(&mut self, _cx: &mut InitCtx) -> SimResult {
        Ok(())
    }
    /// The topology this component follows (`topology` link, a topological mapping's `input`,
    /// else the context topology) went through `changes`, in order; the container already holds
    /// the result. Components holding per-point or per-element data update it here, with the
    /// shared rules of [`crate::topology_change`] ([`crate::graph::topology::ElementData`],
    /// [`crate::graph::topology::IndexSubset`]).
    fn topology_changed(
        &mut self,
        _cx: &mut InitCtx,
        _topology: crate::ComponentId,
        _changes: &[crate::graph::topology::TopologyChange],
    ) -> SimResult<crate::graph::topology::Follow> {
        Ok(crate::graph::topology::Follow::Unsupported)
    }
    fn animate_begin(&mut self, _scene: &mut Scene, _me: crate::ComponentId) -> SimResult {
        Ok(())
    }
    /// End-of-step hook (SOFA's AnimateEndEvent), after the time advanced: observers (exporters,
    /// monitors) record the state reached by the step.
    fn animate_end(&mut self, _scene: &mut Scene, _me: crate::ComponentId) -> SimResult {
        Ok(())
    }
    /// The simulation is about to start (SOFA's SimulationInitDoneEvent): sent once, before the
    /// first step, by [`crate::simulation::start`].
    fn simulation_start(&mut self, _scene: &mut Scene, _me: crate::ComponentId) -> SimResult {
        Ok(())
    }
    /// The simulation is over (SOFA's `cleanup`): sent by [`crate::simulation::finish`].
    fn simulation_end(&mut self, _scene: &mut Scene, _me: crate::ComponentId) -> SimResult {
        Ok(())
    }
    /// Whether a snapshot leaves this object out and a restore keeps the one the scene has:
    /// for a component whose state is not the scene's (a Python controller's is its script's).
    /// Such a component still refuses [`crate::Scene::try_clone`] unless it is `Clone`.
    fn kept_by_restore(&self) -> bool {
        false
    }
    /// A restore puts this object (a copy of the snapshot's) in place of `replaced`, the one
    /// the scene had, of the same class: it may take over what lives outside the scene and
    /// was not copied (an exporter's open file). Copies do not share such resources.
    fn resume_from(&mut self, _replaced: &mut dyn Component) {}
}
