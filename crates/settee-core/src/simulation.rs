//! Scene initialisation (`initRoot`) and the stages of a step shared by the animation loops.

use smallvec::SmallVec;
use std::time::Instant;

use crate::collision::CollisionPipeline;
use crate::diag::{Diagnostic, SimError, SimResult};
use crate::factory::Factory;
use crate::graph::scene::{Reach, Visit};
use crate::mechanics;
use crate::mechanics::SolveItem;
use crate::mechanics::{AnimationLoop, OdeSolver};
use crate::scene::{ComponentId, InitCtx, NodeId, Scene};
use crate::state::{StateId, VecId};

/// Initialises a freshly created scene as SOFA's `initRoot` does: default animation loop, link
/// resolution, `init` top-down in object order, `bwdInit` bottom-up in reverse order, then the
/// initial projection and propagation through mappings. Errors are reported into the scene's
/// messages; the first one is returned.
pub fn init_root(scene: &mut Scene, factory: &Factory) -> SimResult {
    if scene.find_local(Scene::ROOT, crate::mechanics::ANIMATION_LOOP).is_none() {
        if let Some(id) = factory.create(scene, Scene::ROOT, "DefaultAnimationLoop", None, Vec::new(), None, std::path::Path::new(".")) {
            let objs = &mut scene.node_mut(Scene::ROOT).objects;
            objs.retain(|c| *c != id);
            objs.insert(0, id);
            scene.touch();
            scene.entry_mut(id).name = "DefaultAnimationLoop".into();
            scene.report(Diagnostic::new(crate::diag::Severity::Info, "no animation loop in the root node: a DefaultAnimationLoop was added"));
        }
    }
    scene.animation_loop = scene.find_local(Scene::ROOT, crate::mechanics::ANIMATION_LOOP);
    if scene.factory.is_none() {
        scene.factory = Some(std::sync::Arc::new(factory.clone()));
    }
    scene.resolve_all_links();
    if !scene.root().activated {
        let pos = scene.root().pos.clone();
        scene.report(
            Diagnostic::warning("the root node is deactivated (activated=\"0\"): nothing in the scene is initialised or simulated")
                .at(pos)
                .hint("remove activated=\"0\" from the root node"),
        );
    }
    init_nodes(scene, &scene.preorder(Scene::ROOT))?;
    let scope = scene.scope(Scene::ROOT);
    mechanics::project_position_velocity(scene, &scope, VecId::POSITION, VecId::VELOCITY)?;
    mechanics::propagate_position_velocity(scene, &scope, VecId::POSITION, VecId::VELOCITY)?;
    scene.initialized = true;
    crate::divergence::start(scene);
    Ok(())
}

/// Initialises a subtree created while the scene runs (contact nodes, added objects): links of
/// its components, `init` top-down, `bwdInit` bottom-up, then positions and velocities mapped
/// down through its mappings. The rest of the scene is left as it is.
pub fn init_subtree(scene: &mut Scene, node: NodeId) -> SimResult {
    let order = scene.preorder(node);
    let comps: Vec<ComponentId> = order.iter().flat_map(|n| scene.node(*n).objects.clone()).collect();
    scene.resolve_links(&comps);
    init_nodes(scene, &order)?;
    let scope = scene.scope(node);
    mechanics::propagate_position_velocity(scene, &scope, VecId::POSITION, VecId::VELOCITY)
}

/// Initialises components created while the scene runs, in the given order (`init` forward,
/// `bwdInit` backward), after resolving their links.
pub fn init_components(scene: &mut Scene, comps: &[ComponentId]) -> SimResult {
    scene.resolve_links(comps);
    let mut first_error = None;
    for &c in comps {
        init_one(scene, c, &mut first_error);
    }
    for &c in comps.iter().rev() {
        bwd_init_one(scene, c, &mut first_error);
    }
    first_error.map_or(Ok(()), Err)
}

/// `init` of the nodes' components top-down in object order (each node takes its parent's
/// context first), then `bwdInit` bottom-up in reverse order, as SOFA's `initRoot` does.
/// Errors are reported into the scene's messages; the first one is returned.
fn init_nodes(scene: &mut Scene, order: &[NodeId]) -> SimResult {
    let mut first_error: Option<SimError> = None;
    for &n in order {
        if let Some(p) = scene.node(n).parent() {
            scene.node_mut(n).context = scene.node(p).context;
        }
        for c in scene.node(n).objects.clone() {
            init_one(scene, c, &mut first_error);
        }
    }
    for &n in order.iter().rev() {
        for c in scene.node(n).objects.clone().into_iter().rev() {
            bwd_init_one(scene, c, &mut first_error);
        }
    }
    first_error.map_or(Ok(()), Err)
}

fn init_one(scene: &mut Scene, c: ComponentId, first_error: &mut Option<SimError>) {
    if !scene.contains(c) {
        return;
    }
    scene.pull_links(c);
    let r = scene.with_taken(c, |obj, scene| obj.init(&mut InitCtx { scene, id: c }));
    if let Some(e) = scene.components.get_mut(c) {
        e.initialized = true;
    }
    if let Err(e) = r {
        let e = positioned(scene, c, e);
        scene.report((*e.0).clone());
        first_error.get_or_insert(e);
    }
}

fn bwd_init_one(scene: &mut Scene, c: ComponentId, first_error: &mut Option<SimError>) {
    if !scene.contains(c) {
        return;
    }
    let r = scene.with_taken(c, |obj, scene| obj.bwd_init(&mut InitCtx { scene, id: c }));
    if let Err(e) = r {
        let e = positioned(scene, c, e);
        scene.report((*e.0).clone());
        first_error.get_or_insert(e);
    }
}

pub use crate::graph::scene::positioned;

/// Performs one step with the scene's animation loop (sending the start-of-simulation event
/// first when it was not sent yet).
pub fn animate(scene: &mut Scene, dt: f64) -> SimResult {
    let Some(al) = scene.animation_loop else {
        return Err(SimError::new("the scene has no animation loop (was it initialised?)"));
    };
    if !scene.is_live(al) {
        // A deactivated root (or loop node): SOFA's step visits nothing; time still passes.
        advance_time(scene, dt);
        return Ok(());
    }
    start(scene)?;
    scene.with_role::<dyn AnimationLoop, _>(al, |l, scene| l.step(scene, dt))
}

/// Times a stage when timing is enabled.
pub fn timed<R>(scene: &mut Scene, stage: &'static str, f: impl FnOnce(&mut Scene) -> R) -> R {
    if let Some(observe) = scene.stage_observer {
        observe(stage, true);
        let r = timed_inner(scene, stage, f);
        observe(stage, false);
        return r;
    }
    timed_inner(scene, stage, f)
}

fn timed_inner<R>(scene: &mut Scene, stage: &'static str, f: impl FnOnce(&mut Scene) -> R) -> R {
    if !scene.timing_enabled {
        return f(scene);
    }
    let t0 = Instant::now();
    let r = f(scene);
    let d = t0.elapsed();
    scene.timers.add(stage, d);
    r
}

/// Sends the start-of-step event to every component, top-down in object order.
pub fn animate_begin(scene: &mut Scene) -> SimResult {
    broadcast(scene, |obj, scene, c| obj.animate_begin(scene, c))?;
    let mut probes = std::mem::take(&mut scene.step_probes);
    for p in &mut probes {
        p.after_animate_begin(scene);
    }
    scene.step_probes = probes;
    Ok(())
}

/// Sends the end-of-step event to every component, top-down in object order (the animation
/// loops call it once the time has advanced).
pub fn animate_end(scene: &mut Scene) -> SimResult {
    broadcast(scene, |obj, scene, c| obj.animate_end(scene, c))
}

/// Sends the start-of-simulation event once (SOFA's SimulationInitDoneEvent: exporters write
/// their `exportAtBegin` files). [`animate`] calls it before the first step.
pub fn start(scene: &mut Scene) -> SimResult {
    if scene.started {
        return Ok(());
    }
    scene.started = true;
    broadcast(scene, |obj, scene, c| obj.simulation_start(scene, c))
}

/// Sends the end-of-simulation event (SOFA's `cleanup`: exporters write their `exportAtEnd`
/// files, writers flush). Whoever steps a scene calls it once when done.
pub fn finish(scene: &mut Scene) -> SimResult {
    broadcast(scene, |obj, scene, c| obj.simulation_end(scene, c))
}

/// A component told of the events the step sends from one node down (SOFA's
/// `PropagateEventVisitor`): the constraint solvers' `BuildConstraintSystemEndEvent` and
/// `SolveConstraintSystemEndEvent`, the loops' `CollisionBeginEvent`/`CollisionEndEvent`. The
/// start and end of a step have hooks of their own on [`crate::graph::component::Component`].
pub trait EventListener {
    fn on_event(&mut self, scene: &mut Scene, me: ComponentId, event: &'static str) -> SimResult;
}

pub const EVENT_LISTENER: crate::graph::role::RoleId = crate::graph::role::RoleId::of::<dyn EventListener>("EventListener");

/// Sends `event` to the listeners of `from`'s subtree, top-down in object order. A scene
/// without listeners (nearly every XML scene) pays one scan of its component classes.
pub fn propagate_event(scene: &mut Scene, from: NodeId, event: &'static str) -> SimResult {
    if !scene.components.iter().any(|(_, e)| e.class.plays(EVENT_LISTENER)) {
        return Ok(());
    }
    for n in scene.preorder(from) {
        let objs = scene.objects_snapshot(n);
        let r = objs.iter().try_for_each(|&c| {
            if !scene.is_live(c) || !scene.entry(c).class.plays(EVENT_LISTENER) {
                return Ok(());
            }
            scene.with_role::<dyn EventListener, _>(c, |l, scene| l.on_event(scene, c, event)).map_err(|e| positioned(scene, c, e))
        });
        scene.give_back_snapshot(objs);
        r?;
    }
    Ok(())
}

/// Calls `f` on every component, top-down in object order; components removed meanwhile and
/// the one currently running (the animation loop) are skipped.
fn broadcast(scene: &mut Scene, mut f: impl FnMut(&mut dyn crate::graph::component::Component, &mut Scene, ComponentId) -> SimResult) -> SimResult {
    for &n in scene.preorder_plan().iter() {
        // The node's objects as they are when it is reached, in a list the scene keeps.
        let objs = scene.objects_snapshot(n);
        let r = objs.iter().try_for_each(|&c| {
            match scene.components.get(c) {
                None => return Ok(()),                       // removed by a component before it
                Some(e) if e.obj.is_none() => return Ok(()), // the animation loop itself, currently stepping
                Some(e) if !e.initialized => return Ok(()),  // never initialised: not part of the simulation
                Some(_) => {}
            }
            scene.with_taken(c, |obj, scene| f(obj, scene, c)).map_err(|e| positioned(scene, c, e))
        });
        scene.give_back_snapshot(objs);
        r?;
    }
    Ok(())
}

/// Keeps linked Data live: every component whose linked Data changed pulls the new values and
/// is told ([`crate::graph::component::Component::data_changed`]), the components it reads from first
/// (an engine recomputes before the components reading its outputs), each once per pass.
pub fn update_live_data(scene: &mut Scene) -> SimResult {
    scene.live_data_pass += 1;
    let pass = scene.live_data_pass;
    for &n in scene.preorder_plan().iter() {
        let objs = scene.objects_snapshot(n);
        let r = objs.iter().try_for_each(|&c| refresh_component(scene, c, pass));
        scene.give_back_snapshot(objs);
        r?;
    }
    Ok(())
}

fn refresh_component(scene: &mut Scene, c: ComponentId, pass: u64) -> SimResult {
    match scene.components.get_mut(c) {
        Some(e) if e.refreshed != pass && e.obj.is_some() && e.initialized => e.refreshed = pass,
        _ => return Ok(()),
    }
    // The components feeding its linked Data, read by index (the scene is lent on); a parent
    // met twice is refreshed once, the pass marks it.
    let mut i = 0;
    while let Some(parent) = scene.components.get(c).and_then(|e| e.data.fields.get(i)).map(|f| f.link.and_then(|l| l.owner_component())) {
        if let Some(parent) = parent {
            refresh_component(scene, parent, pass)?;
        }
        i += 1;
    }
    if scene.refresh_links(c) {
        scene.with_taken(c, |obj, scene| obj.data_changed(&mut InitCtx { scene, id: c })).map_err(|e| positioned(scene, c, e))?;
    }
    Ok(())
}

/// Nodes holding ODE solvers, visited top-down without descending below a solver node, with
/// their solvers in declaration order (SOFA's SolveVisitor).
pub fn solver_nodes(scene: &Scene) -> Vec<(NodeId, Vec<ComponentId>)> {
    let mut out = Vec::new();
    scene.walk(Scene::ROOT, &mut |n, reach| {
        if reach == Reach::Leave {
            return Visit::Descend;
        }
        let solvers: Vec<ComponentId> =
            scene.node(n).objects.iter().copied().filter(|c| scene.entry(*c).plays(crate::mechanics::ODE_SOLVER)).collect();
        if solvers.is_empty() {
            return Visit::Descend;
        }
        out.push((n, solvers));
        Visit::Prune
    });
    out
}

/// What the solve stage does in nodes without an ODE solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsolatedInteractions {
    /// Interaction force fields of solver-less nodes add their force, at the current positions
    /// and velocities, into the `externalForce` of both their states before the solvers below
    /// run: SOFA's DefaultAnimationLoop (`computeForceIsolatedInteractionForceFields`). This is
    /// how a penalty contact between two independently solved objects acts: an explicit force.
    AddToExternalForce,
    /// They are left alone (FreeMotionAnimationLoop: constraints replace them).
    Ignore,
}

/// Runs every ODE solver of the scene on `(x_result, v_result)`, as SOFA's SolveVisitor does:
/// top-down, a node holding ODE solvers is solved (its solvers in declaration order) and not
/// descended into; in the other nodes, interaction force fields are handled as `isolated` says.
pub fn solve_all(scene: &mut Scene, dt: f64, x_result: VecId, v_result: VecId, isolated: IsolatedInteractions) -> SimResult {
    let plan = scene.solve_plan();
    for item in plan.iter() {
        match item {
            SolveItem::Solve { node, solvers } => {
                let scope = scene.scope(*node);
                for &s in solvers {
                    scene.with_role::<dyn OdeSolver, _>(s, |solver, scene| solver.solve(scene, &scope, dt, x_result, v_result))?;
                }
            }
            SolveItem::Isolated { interactions, .. } => {
                if isolated == IsolatedInteractions::AddToExternalForce {
                    for &c in interactions {
                        mechanics::add_force_unscoped(scene, c, VecId::EXTERNAL_FORCE, VecId::POSITION, VecId::VELOCITY)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Clears every state's external forces (SOFA's end of integration).
pub fn end_integration(scene: &mut Scene) {
    for st in scene.store.states.values_mut() {
        st.free(VecId::EXTERNAL_FORCE);
    }
}

/// Advances the root time by `dt` (accumulated, as SOFA does) and copies the context down.
pub fn advance_time(scene: &mut Scene, dt: f64) {
    let t = scene.node(Scene::ROOT).context.time;
    scene.node_mut(Scene::ROOT).context.time = t + dt;
    scene.propagate_context();
}

/// SOFA's `parallelCollisionDetectionAndFreeMotion`: every pipeline's reset, then their detection
/// while `free_motion` runs (at once where the pipeline can), then their responses. Detection
/// reads the positions, which the free motion leaves as they are, so the contacts are those of
/// the sequential order; only the responses of the last step are detached before the free
/// motion rather than after, as in SOFA.
pub fn collision_during(scene: &mut Scene, free_motion: &mut dyn FnMut(&mut Scene) -> SimResult) -> SimResult {
    let pipelines = first_pipeline_per_node(scene);
    for &p in &pipelines {
        scene.with_role::<dyn CollisionPipeline, _>(p, |pipeline, scene| pipeline.reset(scene, p)).map_err(|e| positioned(scene, p, e))?;
    }
    let mut pending = Some(free_motion);
    for &p in &pipelines {
        scene
            .with_role::<dyn CollisionPipeline, _>(p, |pipeline, scene| match pending.take() {
                Some(during) => pipeline.detect_during(scene, p, during),
                None => pipeline.detect(scene, p),
            })
            .map_err(|e| positioned(scene, p, e))?;
    }
    if let Some(during) = pending {
        during(scene)?;
    }
    for &p in &pipelines {
        scene.with_role::<dyn CollisionPipeline, _>(p, |pipeline, scene| pipeline.respond(scene, p)).map_err(|e| positioned(scene, p, e))?;
    }
    Ok(())
}

/// The collision pipelines that run: the first of each node (SOFA's context pipeline), top-down.
fn first_pipeline_per_node(scene: &mut Scene) -> SmallVec<[ComponentId; 2]> {
    let mut out = SmallVec::new();
    let mut last_node = None;
    for &p in scene.role_index(crate::collision::COLLISION_PIPELINE).iter() {
        let node = scene.entry(p).node;
        if last_node != Some(node) {
            last_node = Some(node);
            out.push(p);
        }
    }
    out
}

/// Runs the collision pipelines, node by node top-down (SOFA's CollisionVisitor): each
/// pipeline's reset, detection and response in turn. Structural changes asked for meanwhile (the
/// objects of contacts that ended) wait for the next step's sync point.
pub fn collision(scene: &mut Scene) -> SimResult {
    for p in first_pipeline_per_node(scene) {
        scene
            .with_role::<dyn CollisionPipeline, _>(p, |pipeline, scene| -> SimResult {
                pipeline.reset(scene, p)?;
                pipeline.detect(scene, p)?;
                pipeline.respond(scene, p)
            })
            .map_err(|e| positioned(scene, p, e))?;
    }
    Ok(())
}

/// Collision models whose contacts are surely Lagrangian (their contact manager's response, or
/// their own `contactResponse`, is `FrictionContactConstraint`, …) and reach an independent,
/// simulated state that no constraint correction handles: under FreeMotionAnimationLoop their
/// contacts never push that body. Returns (collision model, state, response). (Here, above both
/// the collision and the constraint layers, which it reads.)
pub fn uncorrected_contact_states(scene: &mut Scene) -> Vec<(ComponentId, StateId, String)> {
    use crate::collision::{CollisionModel, ContactManager, COLLISION_MODEL, CONTACT_MANAGER};
    use crate::constraint::{independent_states_of, simulated_and_corrected};
    let managers: Vec<ComponentId> = scene.components.iter().filter(|(_, e)| e.initialized && e.plays(CONTACT_MANAGER)).map(|(c, _)| c).collect();
    let [manager] = managers[..] else { return Vec::new() };
    let models: Vec<(ComponentId, Option<StateId>, String)> = scene
        .components
        .iter()
        .filter(|(_, e)| e.initialized && e.plays(COLLISION_MODEL))
        .filter_map(|(c, e)| e.role::<dyn CollisionModel>().map(|m| (c, m)))
        // Obstacles (`simulated="0"`) are not meant to move.
        .filter(|(_, m)| m.geometry().simulated && m.geometry().active)
        .map(|(c, m)| (c, m.state(), m.contact_response().to_string()))
        .collect();
    if models.is_empty() {
        return Vec::new();
    }
    let (simulated, corrected) = simulated_and_corrected(scene);
    let mut out = Vec::new();
    for (model, state, own) in models {
        let Some(state) = state else { continue };
        let Some(response) = scene.entry(manager).role::<dyn ContactManager>().and_then(|m| m.lagrangian_response_for(&own)) else { continue };
        for s in independent_states_of(scene, &[state]) {
            if simulated.contains(&s) && !corrected.contains(&s) {
                out.push((model, s, response.clone()));
            }
        }
    }
    out
}
