//! Contacts are data: a pair of models coming into contact and separating again, every few
//! steps for thousands of steps, creates nothing in the graph (no node, no factory call), leaves
//! the memory as it was and, once warm, allocates nothing for its contacts: the collision stage
//! (detection, and the response that keeps the pair's objects, pooled while the pair is apart)
//! allocates nothing, and a step where a contact appears or vanishes allocates no more than one
//! where nothing changes (the step plan is compiled again in the memory it had). A counting
//! allocator (this test binary's global allocator) measures the allocations of the steps, those
//! of the collision stage apart, and the bytes alive.

use settee_core::Scene;
use settee_testkit::alloc;

// Per thread: the two tests run on two threads at once, each counting its own scene.
#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

/// The scene's stage observer: marks the collision stage.
fn observe_stage(stage: &'static str, begins: bool) {
    if stage == "collision" {
        alloc::mark(begins);
    }
}

/// A ball on a spring bouncing on a plane: its contact with the plane appears and vanishes
/// every few steps, forever (the benchmark `collision/churn_10000_steps`).
fn churn_scene(response: &str, animation_loop: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  {animation_loop}
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <NewProximityIntersection alarmDistance="1" contactDistance="0.5"/>
  <CollisionResponse response="{response}"/>
  <Node name="ball">
    <EulerExplicitSolver symplectic="true"/>
    <MechanicalObject name="ball" position="1 2.6 -2" velocity="0 -8 0"/>
    <UniformMass totalMass="1"/>
    <RestShapeSpringsForceField stiffness="40"/>
    <SphereCollisionModel radius="1" contactStiffness="10"/>
    {correction}
  </Node>
  <Node name="plane">
    <MechanicalObject position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0" contactStiffness="300"/>
  </Node>
</Node>"#,
        correction = if animation_loop.is_empty() { "" } else { "<UncoupledConstraintCorrection/>" }
    )
}

fn load(name: &str, text: &str) -> Scene {
    let path = std::env::temp_dir().join(format!("settee-churn-{}-{name}.scn", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let l = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    let _ = std::fs::remove_file(&path);
    l.scene
}

/// What a run of steps did.
struct Run {
    /// Allocations in all, and those of the collision stage.
    allocations: u64,
    collision_allocations: u64,
    /// Steps with a contact.
    touching: usize,
    /// The most components alive at once.
    most: usize,
    /// The most allocations of one step where a contact appeared or vanished, and of one where
    /// the contacts stayed as they were, with a contact and without.
    churn_step: u64,
    calm_step: u64,
    calm_touching: u64,
    calm_apart: u64,
    /// The most allocations of the collision stage in a step where the contacts stayed as they
    /// were, with a contact and without.
    calm_collision_touching: u64,
    calm_collision_apart: u64,
    /// Steps where a contact appeared or vanished, and the step plans compiled in all.
    churn_events: u64,
    compilations: u64,
}

/// Steps `n` times, counting allocations step by step.
fn steps(scene: &mut Scene, n: usize) -> Run {
    let dt = scene.root().context.dt;
    let mut r = Run {
        allocations: 0,
        collision_allocations: 0,
        touching: 0,
        most: 0,
        churn_step: 0,
        calm_step: 0,
        calm_touching: 0,
        calm_apart: 0,
        calm_collision_touching: 0,
        calm_collision_apart: 0,
        churn_events: 0,
        compilations: 0,
    };
    for _ in 0..n {
        let before = scene.contacts.acting();
        let compiled_before = scene.plan_compilations();
        let ((), a, in_collision) = alloc::count(|| settee_core::simulation::animate(scene, dt).unwrap());
        let after = scene.contacts.acting();
        r.allocations += a;
        r.collision_allocations += in_collision;
        r.touching += usize::from(after > 0);
        r.most = r.most.max(scene.live_counts().components);
        r.compilations += scene.plan_compilations() - compiled_before;
        if (before > 0) != (after > 0) {
            r.churn_step = r.churn_step.max(a);
            r.churn_events += 1;
        } else {
            r.calm_step = r.calm_step.max(a);
            let (step, collision) =
                if after > 0 { (&mut r.calm_touching, &mut r.calm_collision_touching) } else { (&mut r.calm_apart, &mut r.calm_collision_apart) };
            *step = (*step).max(a);
            *collision = (*collision).max(in_collision);
        }
    }
    r
}

/// `per_contact_free`: a step with a contact allocates no more than one without (the penalty
/// response; the Lagrangian constraint stages still build their rows in fresh buffers, an
/// allocation count that does not change as contacts come and go).
fn check_churn(name: &str, response: &str, animation_loop: &str, per_contact_free: bool) {
    alloc::watch_this_thread();
    let mut scene = load(name, &churn_scene(response, animation_loop));
    scene.stage_observer = Some(observe_stage);
    // Warm up: the first contacts size the store, the plan and the solvers' buffers.
    let nodes = scene.live_counts().nodes;
    let warm = steps(&mut scene, 1_000);
    let live_before = alloc::live_bytes();
    let Run {
        allocations,
        collision_allocations,
        touching,
        most,
        churn_step,
        calm_step,
        calm_touching,
        calm_apart,
        calm_collision_touching,
        calm_collision_apart,
        churn_events,
        compilations,
    } = steps(&mut scene, 4_000);
    let growth = alloc::live_bytes() - live_before;
    let most_warm = warm.most;
    // The contact really churns: it is there on some steps and not on others.
    assert!(touching > 100 && touching < 3_900, "{name}: the ball touched the plane on {touching} of 4000 steps");
    // Nothing accumulates in the graph: a contact's objects live only while it does.
    assert!(most <= most_warm, "{name}: {most} components alive at once, {most_warm} during the warm-up");
    eprintln!(
        "{name}: {allocations} allocations in 4000 steps ({collision_allocations} in the collision stage), {touching} with a contact; at most {churn_step} in a step where the contact appeared or vanished, {calm_step} in another ({calm_touching} with a contact, {calm_apart} without); live memory grew by {growth} bytes; the collision stage of a calm step allocated at most {calm_collision_touching} with a contact, {calm_collision_apart} without"
    );
    eprintln!("{name}: {compilations} step-plan lists compiled in 4000 steps, {churn_events} of which saw a contact appear or vanish");
    // The step's order is compiled when the structure or the contacts change (a pair's objects
    // joining or leaving it), not rediscovered at every step: a few lists per change, far fewer
    // than one per step.
    assert!(churn_events > 50, "{name}: only {churn_events} contacts appeared or vanished");
    assert!(compilations <= 8 * churn_events, "{name}: {compilations} plan lists compiled for {churn_events} changes");
    // The memory stays flat: 4000 more steps of churn keep no more than a few pages alive.
    assert!(growth <= 16 * 1024, "{name}: {growth} bytes more alive after 4000 steps of churn");
    // Nothing is allocated per contact once warm: not by detection and the response, not when a
    // contact appears or vanishes.
    assert_eq!(collision_allocations, 0, "{name}: the collision stage allocated {collision_allocations} times in 4000 steps");
    assert!(
        churn_step <= calm_step,
        "{name}: {churn_step} allocations in a step where a contact appeared or vanished, at most {calm_step} in another"
    );
    if per_contact_free {
        assert!(calm_touching <= calm_apart, "{name}: {calm_touching} allocations in a step with a contact, {calm_apart} without");
    }
    // No node is ever made for a contact, and the objects of a contact live only while it does.
    assert_eq!(scene.live_counts().nodes, nodes, "{name}: contacts made nodes");
}

#[test]
fn penalty_contacts_churn_and_leave_the_memory_flat() {
    check_churn("penalty", "PenalityContactForceField", "", true);
}

#[test]
fn lagrangian_contacts_churn_and_leave_the_memory_flat() {
    check_churn(
        "lagrangian",
        "FrictionContactConstraint",
        r#"<FreeMotionAnimationLoop/><BlockGaussSeidelConstraintSolver maxIterations="100" tolerance="1e-8"/>"#,
        false,
    );
}
