//! Animation loops. `DefaultAnimationLoop` runs SOFA's plain step: begin event, ODE solvers,
//! projection, propagation through mappings, end of integration, time advance.

use settee_core::data::{decl, DataKind::*};
use settee_core::{component_any, Component, ComponentClass, CreateArgs, DataDecl, Roles, Scene, SimResult, TemplateRule};

static DATA: &[DataDecl] = &[
    decl("parallelODESolving", Bool, "false", "solve independent ODE systems in parallel (same result as sequential)"),
    decl("computeBoundingBox", Bool, "true", "compute bounding boxes after the step (rendering only)"),
];

pub static CLASS: ComponentClass = ComponentClass {
    name: "DefaultAnimationLoop",
    description: "Simulation loop: begin event, ODE solvers of every solver node, projection, mapping propagation, time advance.",
    roles: Roles::ANIMATION_LOOP,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[DATA],
    links: &[],
    create,
    preparse: None,
    no_src_link: &[],
    reads: &[],
};

fn create(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(DefaultAnimationLoop)
}

pub struct DefaultAnimationLoop;

impl Component for DefaultAnimationLoop {
    component_any!();
    fn animation_loop(&mut self) -> Option<&mut dyn settee_core::component::AnimationLoop> {
        Some(self)
    }
}

impl settee_core::component::AnimationLoop for DefaultAnimationLoop {
    fn step(&mut self, scene: &mut Scene, dt: f64) -> SimResult {
        settee_core::simulation::default_step(scene, dt)
    }
}

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&CLASS);
}
