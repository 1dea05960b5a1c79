//! Contacts are data: a pair of models coming into contact and separating again, every few
//! steps for thousands of steps, creates nothing in the graph (no node, no factory call) and
//! leaves the memory as it was. A counting allocator (this test binary's global allocator)
//! measures the allocations of the steps.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use settee_core::Scene;

/// Counts allocations of this thread while `COUNTING` is set.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static ON_TEST_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) && ON_TEST_THREAD.with(|t| t.get()) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) && ON_TEST_THREAD.with(|t| t.get()) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    /// Allocations in all.
    allocations: u64,
    /// Steps with a contact.
    touching: usize,
    /// The most components alive at once.
    most: usize,
    /// The most allocations of one step where a contact appeared or vanished, and of one where
    /// the contacts stayed as they were.
    churn_step: u64,
    calm_step: u64,
}

/// Steps `n` times, counting allocations step by step.
fn steps(scene: &mut Scene, n: usize) -> Run {
    let dt = scene.root().context.dt;
    let mut r = Run { allocations: 0, touching: 0, most: 0, churn_step: 0, calm_step: 0 };
    for _ in 0..n {
        let before = scene.contacts.acting();
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        settee_core::simulation::animate(scene, dt).unwrap();
        COUNTING.store(false, Ordering::Relaxed);
        let a = ALLOCATIONS.load(Ordering::Relaxed);
        let after = scene.contacts.acting();
        r.allocations += a;
        r.touching += usize::from(after > 0);
        r.most = r.most.max(scene.live_counts().components);
        if (before > 0) != (after > 0) {
            r.churn_step = r.churn_step.max(a);
        } else {
            r.calm_step = r.calm_step.max(a);
        }
    }
    r
}

fn check_churn(name: &str, response: &str, animation_loop: &str) {
    ON_TEST_THREAD.with(|t| t.set(true));
    let mut scene = load(name, &churn_scene(response, animation_loop));
    // Warm up: the first contacts size the store, the plan and the solvers' buffers.
    let nodes = scene.live_counts().nodes;
    let warm = steps(&mut scene, 1_000);
    let Run { allocations, touching, most, churn_step, calm_step } = steps(&mut scene, 4_000);
    let most_warm = warm.most;
    // The contact really churns: it is there on some steps and not on others.
    assert!(touching > 100 && touching < 3_900, "{name}: the ball touched the plane on {touching} of 4000 steps");
    // Nothing accumulates in the graph: a contact's objects live only while it does.
    assert!(most <= most_warm, "{name}: {most} components alive at once, {most_warm} during the warm-up");
    eprintln!("{name}: {allocations} allocations in 4000 steps, {touching} with a contact; at most {churn_step} in a step where the contact appeared or vanished, {calm_step} in another");
    // No node is ever made for a contact, and the objects of a contact live only while it does.
    assert_eq!(scene.live_counts().nodes, nodes, "{name}: contacts made nodes");
}

#[test]
fn penalty_contacts_churn_and_leave_the_memory_flat() {
    check_churn("penalty", "PenalityContactForceField", "");
}

#[test]
fn lagrangian_contacts_churn_and_leave_the_memory_flat() {
    check_churn(
        "lagrangian",
        "FrictionContactConstraint",
        r#"<FreeMotionAnimationLoop/><BlockGaussSeidelConstraintSolver maxIterations="100" tolerance="1e-8"/>"#,
    );
}
