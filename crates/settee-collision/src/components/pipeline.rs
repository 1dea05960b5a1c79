//! The collision pipelines (spec §2): `CollisionPipeline` (one sub-pipeline over every collision
//! model of its subtree), `CompositeCollisionPipeline` with its `SubCollisionPipeline`s, and the
//! broad- and narrow-phase components whose class and Data choose how detection runs.

use settee_core::collision::{ContactOutputs, ModelGeometry};
use settee_core::component::{link, CollisionPipeline};
use settee_core::data::{decl, DataKind::*};
use settee_core::{
    component_any, Component, ComponentClass, ComponentId, CreateArgs, DataDecl, InitCtx, LinkDecl, NodeId, Roles, Scene, SimError, SimResult,
    TemplateRule,
};

use crate::detection::{BroadPhaseKind, Detection, DetectionSettings, DetectionStats, NarrowPhaseKind};
use crate::Vec3;

// ----- broad and narrow phases -------------------------------------------------------------------

static BROAD_DATA: &[DataDecl] =
    &[decl("box", Fixed(6), "0 0 0 0 0 0", "if min.x < max.x: models whose bounding box does not meet this box are ignored")];

settee_core::data_refs! {
    static BROAD_READS;
    BOX: Reals = "box";
}

macro_rules! phase_class {
    ($name:ident, $class:literal, $desc:literal, $roles:expr, $data:expr, $reads:expr) => {
        pub static $name: ComponentClass = ComponentClass {
            name: $class,
            description: $desc,
            roles: $roles,
            templates: &[],
            default_template: "",
            template_rule: TemplateRule::Default,
            data: $data,
            links: &[],
            create: |_: &CreateArgs| Box::new(Phase),
            preparse: None,
            no_src_link: &[],
            reads: $reads,
        };
    };
}

phase_class!(
    BRUTE_FORCE,
    "BruteForceBroadPhase",
    "Broad phase testing every pair of models' root boxes.",
    Roles::BROAD_PHASE,
    &[BROAD_DATA],
    BROAD_READS
);
phase_class!(
    PARALLEL_BRUTE_FORCE,
    "ParallelBruteForceBroadPhase",
    "BruteForceBroadPhase on several threads (same pairs; self pairs first).",
    Roles::BROAD_PHASE,
    &[BROAD_DATA],
    BROAD_READS
);
phase_class!(BVH, "BVHNarrowPhase", "Narrow phase traversing the models' bounding-volume trees.", Roles::NARROW_PHASE, &[], &[]);
phase_class!(
    PARALLEL_BVH,
    "ParallelBVHNarrowPhase",
    "BVHNarrowPhase on several threads (same outputs in the same order).",
    Roles::NARROW_PHASE,
    &[],
    &[]
);

/// A broad or narrow phase component: its class and Data configure the pipeline's detection.
struct Phase;

impl Component for Phase {
    component_any!();
}

/// `BruteForceDetection`: SOFA's shorthand that adds a BruteForceBroadPhase and a BVHNarrowPhase
/// to its node (before itself) and does nothing else.
pub static BRUTE_FORCE_DETECTION: ComponentClass = ComponentClass {
    name: "BruteForceDetection",
    description: "Shorthand adding a BruteForceBroadPhase and a BVHNarrowPhase to the node.",
    roles: Roles::NONE,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[],
    links: &[],
    create: |_: &CreateArgs| Box::new(BruteForceDetection),
    preparse: None,
    no_src_link: &[],
    reads: &[],
};

struct BruteForceDetection;

impl Component for BruteForceDetection {
    component_any!();

    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        let node = cx.node();
        let me = cx.id;
        for class in [BRUTE_FORCE.name, BVH.name] {
            let c = cx.scene.create_component(node, class, None, &[])?;
            // Placed before the shorthand, as SOFA creates them first.
            let objs = &mut cx.scene.node_mut(node).objects;
            objs.retain(|o| *o != c);
            let at = objs.iter().position(|o| *o == me).unwrap_or(objs.len());
            objs.insert(at, c);
        }
        Ok(())
    }
}

// ----- sub-pipelines ------------------------------------------------------------------------------

/// One detection set-up: its models (in SOFA's order), methods and the state detection keeps.
struct SubPipeline {
    models: Vec<ComponentId>,
    intersection: ComponentId,
    manager: ComponentId,
    settings: DetectionSettings,
    detection: Detection,
}

impl SubPipeline {
    fn new(
        scene: &Scene,
        models: Vec<ComponentId>,
        intersection: ComponentId,
        broad: ComponentId,
        narrow: ComponentId,
        manager: ComponentId,
        depth: u32,
    ) -> SubPipeline {
        let b = scene.entry(broad);
        let bx = b.data.get(BOX);
        let broad_phase = if b.class.name == PARALLEL_BRUTE_FORCE.name { BroadPhaseKind::ParallelBruteForce } else { BroadPhaseKind::BruteForce };
        let narrow_phase = if scene.entry(narrow).class.name == PARALLEL_BVH.name { NarrowPhaseKind::ParallelBvh } else { NarrowPhaseKind::Bvh };
        let settings = DetectionSettings {
            // BVHNarrowPhase needs deep trees (spec §2.3).
            depth,
            broad_phase,
            narrow_phase,
            box_filter: [Vec3::new(bx[0], bx[1], bx[2]), Vec3::new(bx[3], bx[4], bx[5])],
            parallel: broad_phase == BroadPhaseKind::ParallelBruteForce || narrow_phase == NarrowPhaseKind::ParallelBvh,
            ..DetectionSettings::default()
        };
        SubPipeline { models, intersection, manager, settings, detection: Detection::new() }
    }

    fn reset(&mut self, scene: &mut Scene) -> SimResult {
        scene.with_taken(self.manager, |obj, scene| obj.contact_manager().expect("contact manager role").detach_responses(scene))
    }

    fn detect(&mut self, scene: &mut Scene) -> SimResult {
        for &m in &self.models {
            scene.with_taken(m, |obj, scene| obj.collision_model().expect("collision model role").update_geometry(scene))?;
        }
        let geometries: Vec<&ModelGeometry> =
            self.models.iter().map(|m| scene.obj(*m).collision_model_ref().expect("collision model role").geometry()).collect();
        let method = scene.obj(self.intersection).intersection().expect("intersection role");
        self.detection.run(&geometries, method, &self.settings).map_err(|e| SimError::new(e.to_string()))?;
        Ok(())
    }

    fn respond(&mut self, scene: &mut Scene, pipeline_node: NodeId) -> SimResult {
        let outputs: Vec<ContactOutputs> = self
            .detection
            .outputs()
            .iter()
            .map(|p| ContactOutputs { model1: self.models[p.model1], model2: self.models[p.model2], key: (p.model1, p.model2), outputs: &p.outputs })
            .collect();
        let contact = scene.obj(self.intersection).intersection().expect("intersection role").contact_distance();
        scene.with_taken(self.manager, |obj, scene| {
            obj.contact_manager().expect("contact manager role").respond(scene, &outputs, contact, pipeline_node)
        })
    }
}

/// The components of `node`'s subtree, pre-order, each node's objects in declaration order.
fn subtree_components(scene: &Scene, node: NodeId) -> Vec<ComponentId> {
    scene.preorder(node).into_iter().flat_map(|n| scene.node(n).objects.clone()).collect()
}

// ----- CollisionPipeline --------------------------------------------------------------------------

static PIPELINE_DATA: &[DataDecl] = &[
    decl("verbose", Bool, "false", "print messages about the phases"),
    decl("draw", Bool, "false", "draw the bounding trees (rendering only)"),
    decl("depth", Int, "6", "depth of the bounding-volume trees (a negative value means 6)"),
    decl("parallelDetection", Bool, "false", "run the detection of the sub-pipelines concurrently (same results)"),
];

settee_core::data_refs! {
    static PIPELINE_READS;
    DEPTH: Int = "depth";
}

pub static COLLISION_PIPELINE: ComponentClass = ComponentClass {
    name: "CollisionPipeline",
    description: "Collision pipeline over every collision model of its subtree: bounding trees, broad and narrow phase, contact responses.",
    roles: Roles::COLLISION_PIPELINE,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[PIPELINE_DATA],
    links: &[],
    create: |_: &CreateArgs| Box::new(PipelineComponent { subs: Vec::new(), composite: false }),
    preparse: None,
    no_src_link: &[],
    reads: PIPELINE_READS,
};

static COMPOSITE_DATA: &[DataDecl] =
    &[decl("parallelDetection", Bool, "false", "run the detection of the sub-pipelines concurrently (same results)")];

static COMPOSITE_LINKS: &[LinkDecl] = &[LinkDecl {
    name: "subCollisionPipelines",
    target: Roles::NONE,
    to_node_or_state: false,
    multi: true,
    help: "the sub-pipelines, in the order their phases run",
}];

pub static COMPOSITE_PIPELINE: ComponentClass = ComponentClass {
    name: "CompositeCollisionPipeline",
    description: "Collision pipeline running several independent sub-pipelines (each with its own models, methods and contact manager).",
    roles: Roles::COLLISION_PIPELINE,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[COMPOSITE_DATA],
    links: COMPOSITE_LINKS,
    create: |_: &CreateArgs| Box::new(PipelineComponent { subs: Vec::new(), composite: true }),
    preparse: None,
    no_src_link: &[],
    reads: &[],
};

static SUB_DATA: &[DataDecl] = &[decl("depth", Int, "6", "depth of the bounding-volume trees")];

static SUB_LINKS: &[LinkDecl] = &[
    LinkDecl {
        name: "collisionModels",
        target: Roles::COLLISION_MODEL,
        to_node_or_state: false,
        multi: true,
        help: "the collision models handled, in this order",
    },
    link("intersectionMethod", Roles::INTERSECTION, "intersection method"),
    link("contactManager", Roles::CONTACT_MANAGER, "contact manager"),
    link("broadPhaseDetection", Roles::BROAD_PHASE, "broad phase"),
    link("narrowPhaseDetection", Roles::NARROW_PHASE, "narrow phase"),
];

pub static SUB_PIPELINE: ComponentClass = ComponentClass {
    name: "SubCollisionPipeline",
    description: "One detection set-up of a CompositeCollisionPipeline: its collision models, intersection method, phases and contact manager.",
    roles: Roles::NONE,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[SUB_DATA],
    links: SUB_LINKS,
    create: |_: &CreateArgs| Box::new(SubPipelineComponent),
    preparse: None,
    no_src_link: &[],
    reads: PIPELINE_READS,
};

/// A SubCollisionPipeline: its links and Data describe a set-up the composite runs.
struct SubPipelineComponent;

impl Component for SubPipelineComponent {
    component_any!();
}

/// `CollisionPipeline` and `CompositeCollisionPipeline`.
pub struct PipelineComponent {
    subs: Vec<SubPipeline>,
    composite: bool,
}

impl PipelineComponent {
    /// CollisionPipeline's hidden sub-pipeline: every model of the subtree, the first
    /// intersection method, phases and contact manager found in the same order.
    fn single(cx: &mut InitCtx) -> SimResult<Option<SubPipeline>> {
        let mut depth = cx.data().get(DEPTH);
        if depth < 0 {
            cx.warn(format!("depth {depth} is negative: 6 is used"));
            depth = 6;
        }
        let comps = subtree_components(cx.scene, cx.node());
        let first = |r: Roles| comps.iter().copied().find(|c| cx.scene.entry(*c).roles().contains(r));
        let models: Vec<ComponentId> = comps.iter().copied().filter(|c| cx.scene.entry(*c).roles().contains(Roles::COLLISION_MODEL)).collect();
        let parts = (first(Roles::INTERSECTION), first(Roles::BROAD_PHASE), first(Roles::NARROW_PHASE), first(Roles::CONTACT_MANAGER));
        let (Some(i), Some(b), Some(n), Some(m)) = parts else {
            let missing: Vec<&str> =
                [("an intersection method", parts.0), ("a broad phase", parts.1), ("a narrow phase", parts.2), ("a contact manager", parts.3)]
                    .iter()
                    .filter(|(_, c)| c.is_none())
                    .map(|(w, _)| *w)
                    .collect();
            cx.warn(format!("the pipeline does nothing: no {} in its subtree", missing.join(", no ")));
            return Ok(None);
        };
        if models.is_empty() {
            return Ok(None);
        }
        Ok(Some(SubPipeline::new(cx.scene, models, i, b, n, m, depth as u32)))
    }

    fn sub(cx: &mut InitCtx, s: ComponentId) -> SimResult<SubPipeline> {
        let scene = &*cx.scene;
        let e = scene.entry(s);
        if e.class.name != SUB_PIPELINE.name {
            return Err(cx.error(format!("subCollisionPipelines names {}, which is not a SubCollisionPipeline", e.label())));
        }
        let one = |name: &str| -> SimResult<ComponentId> {
            scene.link_targets(s, name).first().copied().ok_or_else(|| {
                SimError(Box::new(
                    settee_core::Diagnostic::error(format!("{} has no `{name}`", e.label()))
                        .at(e.pos.clone())
                        .hint("every link of a SubCollisionPipeline is required"),
                ))
            })
        };
        let (i, m, b, n) = (one("intersectionMethod")?, one("contactManager")?, one("broadPhaseDetection")?, one("narrowPhaseDetection")?);
        let models = scene.link_targets(s, "collisionModels").to_vec();
        let depth = e.data.get(DEPTH).max(0) as u32;
        Ok(SubPipeline::new(scene, models, i, b, n, m, depth))
    }
}

impl PipelineComponent {
    /// The counters of each sub-pipeline's last detection, in sub-pipeline order (one entry for
    /// a CollisionPipeline with models and methods; none before `bwd_init`).
    pub fn detection_stats(&self) -> Vec<DetectionStats> {
        self.subs.iter().map(|s| *s.detection.stats()).collect()
    }
}

impl Component for PipelineComponent {
    component_any!();

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        // After every model and method of the subtree is initialised.
        self.subs.clear();
        if self.composite {
            let subs = cx.link_targets("subCollisionPipelines");
            if subs.is_empty() {
                cx.warn("no subCollisionPipelines: the pipeline does nothing");
            }
            for s in subs {
                let sub = Self::sub(cx, s)?;
                self.subs.push(sub);
            }
        } else if let Some(sub) = Self::single(cx)? {
            self.subs.push(sub);
        }
        Ok(())
    }

    fn collision_pipeline(&mut self) -> Option<&mut dyn CollisionPipeline> {
        Some(self)
    }
}

impl CollisionPipeline for PipelineComponent {
    fn reset(&mut self, scene: &mut Scene, _me: ComponentId) -> SimResult {
        self.subs.iter_mut().try_for_each(|s| s.reset(scene))
    }

    fn detect(&mut self, scene: &mut Scene, _me: ComponentId) -> SimResult {
        self.subs.iter_mut().try_for_each(|s| s.detect(scene))
    }

    fn respond(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let node = scene.entry(me).node;
        self.subs.iter_mut().try_for_each(|s| s.respond(scene, node))
    }
}

/// Registers the pipeline and phase classes.
pub fn register(f: &mut settee_core::Factory) {
    for c in
        [&COLLISION_PIPELINE, &COMPOSITE_PIPELINE, &SUB_PIPELINE, &BRUTE_FORCE, &PARALLEL_BRUTE_FORCE, &BVH, &PARALLEL_BVH, &BRUTE_FORCE_DETECTION]
    {
        f.register(c);
    }
}
