//! The collision pipelines (spec §2): `CollisionPipeline` (one sub-pipeline over every collision
//! model of its subtree), `CompositeCollisionPipeline` with its `SubCollisionPipeline`s, and the
//! broad- and narrow-phase components whose class and Data choose how detection runs.

use settee_core::collision::{CollisionModel, ContactManager, ContactOutputs, IntersectionMethod, ModelGeometry};
use settee_core::component::CollisionPipeline;
use settee_core::role::{self, BroadPhase, NarrowPhase};
use settee_core::scratch::recycle;
use settee_core::{component, data_group, Component, ComponentClass, ComponentId, Declared, InitCtx, NodeId, RoleId, Scene, SimError, SimResult};

use crate::detection::{BroadPhaseKind, Detection, DetectionSettings, DetectionStats, NarrowPhaseKind};
use crate::Vec3;

// ----- broad and narrow phases -------------------------------------------------------------------

/// The Data of every broad phase (SOFA's `BroadPhaseDetection`).
#[data_group(data = {
    /// if min.x < max.x: models whose bounding box does not meet this box are ignored
    "box" as BOX: Fixed(6) = "0 0 0 0 0 0",
})]
pub struct BroadPhaseData;

/// A broad or narrow phase component: its class and Data configure the pipeline's detection.
#[component(
    create = |_| Phase,
    class(
        name = "BruteForceBroadPhase", module = "Sofa.Component.Collision.Detection.Algorithm",
        description = "Broad phase testing every pair of models' root boxes.",
        markers = [BroadPhase],
        inherit = [BroadPhaseData],
    ),
    class(
        name = "ParallelBruteForceBroadPhase", module = "MultiThreading",
        description = "BruteForceBroadPhase on several threads (same pairs; self pairs first).",
        markers = [BroadPhase],
        inherit = [BroadPhaseData],
    ),
    class(
        name = "BVHNarrowPhase", module = "Sofa.Component.Collision.Detection.Algorithm",
        description = "Narrow phase traversing the models' bounding-volume trees.",
        markers = [NarrowPhase],
    ),
    class(
        name = "ParallelBVHNarrowPhase", module = "MultiThreading",
        description = "BVHNarrowPhase on several threads (same outputs in the same order).",
        markers = [NarrowPhase],
    ),
)]
#[derive(Clone)]
struct Phase;

impl Component for Phase {}

/// Shorthand adding a BruteForceBroadPhase and a BVHNarrowPhase to the node.
///
/// `BruteForceDetection`: SOFA's shorthand that adds a BruteForceBroadPhase and a BVHNarrowPhase
/// to its node (before itself) and does nothing else.
#[component(
    module = "Sofa.Component.Collision.Detection.Algorithm",
    create = |_| BruteForceDetection,
)]
#[derive(Clone)]
struct BruteForceDetection;

impl Component for BruteForceDetection {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        let node = cx.node();
        let me = cx.id;
        for class in ["BruteForceBroadPhase", "BVHNarrowPhase"] {
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
/// The lists of borrows are always empty between calls ([`settee_core::scratch::recycle`]):
/// a copy holds no reference into the original.
#[derive(Clone)]
struct SubPipeline {
    models: Vec<ComponentId>,
    intersection: ComponentId,
    manager: ComponentId,
    settings: DetectionSettings,
    detection: Detection,
    /// Allocations of the per-step lists of borrows, kept between steps.
    geometries: Vec<&'static ModelGeometry>,
    outputs: Vec<ContactOutputs<'static>>,
}

/// A component lent to the detection thread, with its class to view it in its roles.
struct TakenObject {
    id: ComponentId,
    class: &'static ComponentClass,
    obj: Box<dyn Component>,
}

/// Gives the lent components back to the scene (a component removed meanwhile is dropped).
fn put_back(scene: &mut Scene, taken: &mut Vec<TakenObject>) {
    for t in taken.drain(..) {
        if let Some(e) = scene.components.get_mut(t.id) {
            e.obj = Some(t.obj);
        }
    }
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
        let bx = b.data.get(BroadPhaseData::BOX);
        let broad_phase =
            if b.class.name == "ParallelBruteForceBroadPhase" { BroadPhaseKind::ParallelBruteForce } else { BroadPhaseKind::BruteForce };
        let narrow_phase =
            if scene.entry(narrow).class.name == "ParallelBVHNarrowPhase" { NarrowPhaseKind::ParallelBvh } else { NarrowPhaseKind::Bvh };
        let settings = DetectionSettings {
            // BVHNarrowPhase needs deep trees (spec §2.3).
            depth,
            broad_phase,
            narrow_phase,
            box_filter: [Vec3::new(bx[0], bx[1], bx[2]), Vec3::new(bx[3], bx[4], bx[5])],
            parallel: broad_phase == BroadPhaseKind::ParallelBruteForce || narrow_phase == NarrowPhaseKind::ParallelBvh,
            ..DetectionSettings::default()
        };
        SubPipeline { models, intersection, manager, settings, detection: Detection::new(), geometries: Vec::new(), outputs: Vec::new() }
    }

    fn reset(&mut self, scene: &mut Scene) -> SimResult {
        scene.with_role::<dyn ContactManager, _>(self.manager, |manager, scene| manager.detach_responses(scene))
    }

    /// The models read their geometry from their states.
    /// Continuous methods make them read the end of each DOF's sweep too.
    fn update_geometry(&self, scene: &mut Scene) -> SimResult {
        let dt = scene.root().context.dt;
        let sweep = scene.role::<dyn IntersectionMethod>(self.intersection).expect("intersection role").sweep(dt);
        for &m in &self.models {
            scene.with_role::<dyn CollisionModel, _>(m, |model, scene| {
                model.set_sweep(sweep);
                model.update_geometry(scene)
            })?;
        }
        Ok(())
    }

    /// The detection over models and methods taken out of the scene (`objects`).
    fn detect_taken(&mut self, objects: &[TakenObject]) -> SimResult {
        let find = |id: ComponentId| objects.iter().find(|t| t.id == id).expect("detection object taken out of the scene");
        let mut geometries: Vec<&ModelGeometry> = recycle(std::mem::take(&mut self.geometries));
        for &m in &self.models {
            let t = find(m);
            geometries.push(t.class.cast::<dyn CollisionModel>(t.obj.as_ref()).expect("collision model role").geometry());
        }
        let t = find(self.intersection);
        let method = t.class.cast::<dyn IntersectionMethod>(t.obj.as_ref()).expect("intersection role");
        let done = self.detection.run(&geometries, method, &self.settings).map(|_| ()).map_err(|e| SimError::new(e.to_string()));
        self.geometries = recycle(geometries);
        done
    }

    fn detect(&mut self, scene: &mut Scene) -> SimResult {
        self.update_geometry(scene)?;
        let mut geometries: Vec<&ModelGeometry> = recycle(std::mem::take(&mut self.geometries));
        geometries.extend(self.models.iter().map(|m| scene.role::<dyn CollisionModel>(*m).expect("collision model role").geometry()));
        let method = scene.role::<dyn IntersectionMethod>(self.intersection).expect("intersection role");
        let done = self.detection.run(&geometries, method, &self.settings).map(|_| ()).map_err(|e| SimError::new(e.to_string()));
        self.geometries = recycle(geometries);
        done
    }

    fn respond(&mut self, scene: &mut Scene, pipeline_node: NodeId) -> SimResult {
        let mut outputs: Vec<ContactOutputs> = recycle(std::mem::take(&mut self.outputs));
        outputs.extend(self.detection.outputs().iter().map(|p| ContactOutputs {
            model1: self.models[p.model1],
            model2: self.models[p.model2],
            key: (p.model1, p.model2),
            outputs: &p.outputs,
        }));
        let contact = scene.role::<dyn IntersectionMethod>(self.intersection).expect("intersection role").contact_distance();
        let done = scene.with_role::<dyn ContactManager, _>(self.manager, |manager, scene| manager.respond(scene, &outputs, contact, pipeline_node));
        self.outputs = recycle(outputs);
        done
    }
}

/// The components of `node`'s subtree, pre-order, each node's objects in declaration order.
fn subtree_components(scene: &Scene, node: NodeId) -> Vec<ComponentId> {
    scene.preorder(node).into_iter().flat_map(|n| scene.node(n).objects.clone()).collect()
}

// ----- CollisionPipeline --------------------------------------------------------------------------

/// One detection set-up of a CompositeCollisionPipeline: its collision models, intersection method, phases and contact manager.
///
/// A SubCollisionPipeline: its links and Data describe a set-up the composite runs.
#[component(
    name = "SubCollisionPipeline", module = "Sofa.Component.Collision.Detection.Algorithm",
    create = |_| SubPipelineComponent,
    data = {
        /// depth of the bounding-volume trees
        depth: Int = "6",
    },
    links = {
        /// the collision models handled, in this order
        #[multi]
        collisionModels: CollisionModel,
        /// intersection method
        intersectionMethod: IntersectionMethod,
        /// contact manager
        contactManager: ContactManager,
        /// broad phase
        broadPhaseDetection: BroadPhase,
        /// narrow phase
        narrowPhaseDetection: NarrowPhase,
    },
)]
#[derive(Clone)]
struct SubPipelineComponent;

impl Component for SubPipelineComponent {}

/// `CollisionPipeline` and `CompositeCollisionPipeline`.
#[component(
    roles = [CollisionPipeline],
    class(
        name = "CollisionPipeline", module = "Sofa.Component.Collision.Detection.Algorithm",
        description = "Collision pipeline over every collision model of its subtree: bounding trees, broad and narrow phase, contact responses.",
        create = |_| PipelineComponent { subs: Vec::new(), composite: false, taken: Vec::new() },
        data = {
            /// print messages about the phases
            verbose: Bool = "false",
            /// draw the bounding trees (rendering only)
            draw: Bool = "false",
            /// depth of the bounding-volume trees (a negative value means 6)
            depth: Int = "6",
            /// run the detection of the sub-pipelines concurrently (same results)
            parallelDetection: Bool = "false",
        },
    ),
    class(
        name = "CompositeCollisionPipeline", module = "Sofa.Component.Collision.Detection.Algorithm",
        description = "Collision pipeline running several independent sub-pipelines (each with its own models, methods and contact manager).",
        create = |_| PipelineComponent { subs: Vec::new(), composite: true, taken: Vec::new() },
        data = {
            /// run the detection of the sub-pipelines concurrently (same results)
            parallelDetection: Bool = "false",
        },
        links = {
            /// the sub-pipelines, in the order their phases run
            #[multi]
            subCollisionPipelines: _,
        },
    ),
)]
pub struct PipelineComponent {
    subs: Vec<SubPipeline>,
    composite: bool,
    /// The list of components lent to the detection thread, kept between steps.
    taken: Vec<TakenObject>,
}

/// A copy between steps: the lent components are back in the scene by then, the list is empty.
impl Clone for PipelineComponent {
    fn clone(&self) -> Self {
        debug_assert!(self.taken.is_empty(), "copied during a detection");
        PipelineComponent { subs: self.subs.clone(), composite: self.composite, taken: Vec::new() }
    }
}

/// A bounding-tree depth from scene text (the tree itself never builds more levels than its
/// elements can fill, see [`crate::detection::tree`]).
fn tree_depth(depth: i64) -> u32 {
    depth.clamp(0, u32::MAX as i64) as u32
}

impl PipelineComponent {
    /// CollisionPipeline's hidden sub-pipeline: every model of the subtree, the first
    /// intersection method, phases and contact manager found in the same order.
    fn single(cx: &mut InitCtx) -> SimResult<Option<SubPipeline>> {
        let mut depth = cx.data().get(Self::DEPTH);
        if depth < 0 {
            cx.warn(format!("depth {depth} is negative: 6 is used"));
            depth = 6;
        }
        let comps = subtree_components(cx.scene, cx.node());
        let first = |r: RoleId| comps.iter().copied().find(|c| cx.scene.entry(*c).plays(r));
        let models: Vec<ComponentId> = comps.iter().copied().filter(|c| cx.scene.entry(*c).plays(role::COLLISION_MODEL)).collect();
        let parts = (first(role::INTERSECTION), first(role::BROAD_PHASE), first(role::NARROW_PHASE), first(role::CONTACT_MANAGER));
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
        Ok(Some(SubPipeline::new(cx.scene, models, i, b, n, m, tree_depth(depth))))
    }

    fn sub(cx: &mut InitCtx, s: ComponentId) -> SimResult<SubPipeline> {
        let scene = &*cx.scene;
        let e = scene.entry(s);
        if e.class.name != SubPipelineComponent::CLASSES[0].name {
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
        let depth = tree_depth(e.data.get(SubPipelineComponent::DEPTH));
        Ok(SubPipeline::new(scene, models, i, b, n, m, depth))
    }
}

impl PipelineComponent {
    /// The counters of each sub-pipeline's last detection, in sub-pipeline order (one entry for
    /// a CollisionPipeline with models and methods; none before `bwd_init`).
    pub fn detection_stats(&self) -> Vec<DetectionStats> {
        self.subs.iter().map(|s| *s.detection.stats()).collect()
    }

    /// The contacts the last detection found, sub-pipeline by sub-pipeline and pair by pair: the
    /// point on each element and the normal (what `settee studio` draws when asked).
    pub fn contacts(&self) -> impl Iterator<Item = &settee_core::collision::DetectionOutput> {
        self.subs.iter().flat_map(|s| s.detection.outputs().iter().flat_map(|p| p.outputs.iter()))
    }
}

impl Component for PipelineComponent {
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
}

impl CollisionPipeline for PipelineComponent {
    fn reset(&mut self, scene: &mut Scene, _me: ComponentId) -> SimResult {
        self.subs.iter_mut().try_for_each(|s| s.reset(scene))
    }

    fn detect(&mut self, scene: &mut Scene, _me: ComponentId) -> SimResult {
        self.subs.iter_mut().try_for_each(|s| s.detect(scene))
    }

    // The geometry is read from the states first; then the models and intersection methods leave
    // the scene for a second thread, which detects while `during` (the free motion) has the scene.
    fn detect_during(&mut self, scene: &mut Scene, _me: ComponentId, during: &mut dyn FnMut(&mut Scene) -> SimResult) -> SimResult {
        for s in &self.subs {
            s.update_geometry(scene)?;
        }
        let mut taken = std::mem::take(&mut self.taken);
        for s in &self.subs {
            for &id in s.models.iter().chain([&s.intersection]) {
                if taken.iter().any(|t| t.id == id) {
                    continue;
                }
                let e = &mut scene.components[id];
                match e.obj.take() {
                    Some(obj) => taken.push(TakenObject { id, class: e.class, obj }),
                    None => {
                        let label = e.label();
                        put_back(scene, &mut taken);
                        self.taken = taken;
                        return Err(SimError::new(format!("{label} is in use: it cannot detect collisions during the free motion")));
                    }
                }
            }
        }
        let subs = &mut self.subs;
        let (found, moved) = std::thread::scope(|threads| {
            let detection = threads.spawn(move || {
                let found = subs.iter_mut().try_for_each(|s| s.detect_taken(&taken));
                (found, taken)
            });
            let moved = during(scene);
            (detection.join(), moved)
        });
        let (found, mut taken) = found.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        put_back(scene, &mut taken);
        self.taken = taken;
        moved?;
        found
    }

    fn respond(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let node = scene.entry(me).node;
        self.subs.iter_mut().try_for_each(|s| s.respond(scene, node))
    }
}

/// Registers the pipeline and phase classes.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<PipelineComponent>();
    f.add::<SubPipelineComponent>();
    f.add::<Phase>();
    f.add::<BruteForceDetection>();
}
