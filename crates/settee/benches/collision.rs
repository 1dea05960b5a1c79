//! Collision detection and response at growing sizes, and memory while contacts come and go.
//!
//! `cargo bench -p settee --bench collision`
//!
//! * `collision/detect/<k>×` and `collision/stage/<k>×`: the detection phase alone, and the whole
//!   collision stage (reset, detection, penalty response), of `scenes/spheres_on_sheet.scn` grown
//!   k-fold (1×: 10,082 triangles against 1,024 spheres; 4× and 16× scale both), once the spheres
//!   rest on the sheet (one contact per sphere).
//! * `collision/churn_10000_steps`: 10,000 steps of a ball bouncing through a plane's contact
//!   zone; the resident memory at steps 1,000 and 10,000 is printed (it must not grow).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use settee_core::role;
use settee_core::simulation::animate;
use settee_core::Scene;

#[path = "support/sheet.rs"]
mod sheet;

use sheet::sheet_scene;

fn load_text(name: &str, text: &str) -> Scene {
    let dir = std::env::temp_dir().join(format!("settee-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.scn"));
    std::fs::write(&path, text).unwrap();
    settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene
}

fn steps(s: &mut Scene, n: usize) {
    let dt = s.root().context.dt;
    for _ in 0..n {
        animate(s, dt).expect("step");
    }
}

fn bench_detection(c: &mut Criterion) {
    let mut group = c.benchmark_group("collision");
    group.sample_size(20);
    for k in [1, 2, 4] {
        // k = 1, 2, 4 per axis: 1×, 4× and 16× the primitives.
        let text = sheet_scene(k);
        assert!(k == 1 || !text.contains("n=\"72 1 72\""), "the scene's sheet changed: update the bench");
        let mut scene = load_text(&format!("sheet{k}"), &text);
        steps(&mut scene, 40); // the spheres have landed
        let pipeline = scene.find_down(Scene::ROOT, role::COLLISION_PIPELINE).expect("a pipeline");
        let label = format!("{}x", k * k);
        group.bench_with_input(BenchmarkId::new("detect", &label), &(), |b, _| {
            b.iter(|| scene.with_role::<dyn settee_core::CollisionPipeline, _>(pipeline, |p, s| p.detect(s, pipeline)).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("stage", &label), &(), |b, _| b.iter(|| settee_core::simulation::collision(&mut scene).unwrap()));
    }
    group.finish();
}

/// Resident memory of this process, in kB (Linux).
fn rss_kb() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4)
}

const CHURN: &str = r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <NewProximityIntersection alarmDistance="1" contactDistance="0.5"/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="ball">
    <EulerExplicitSolver symplectic="true"/>
    <MechanicalObject name="ball" position="1 2.6 -2" velocity="0 -8 0"/>
    <UniformMass totalMass="1"/>
    <RestShapeSpringsForceField stiffness="40"/>
    <SphereCollisionModel radius="1" contactStiffness="10"/>
  </Node>
  <Node name="plane">
    <MechanicalObject position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0" contactStiffness="300"/>
  </Node>
</Node>"#;

fn bench_churn(c: &mut Criterion) {
    let mut group = c.benchmark_group("collision");
    group.sample_size(10);
    let mut reported = false;
    group.bench_function("churn_10000_steps", |b| {
        b.iter(|| {
            let mut scene = load_text("churn", CHURN);
            steps(&mut scene, 1_000);
            let (rss1, live1) = (rss_kb(), scene.live_counts());
            steps(&mut scene, 9_000);
            let (rss2, live2) = (rss_kb(), scene.live_counts());
            if !reported {
                reported = true;
                eprintln!("churn: step 1,000: {live1:?}, rss {rss1:?} kB; step 10,000: {live2:?}, rss {rss2:?} kB");
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_detection, bench_churn);
criterion_main!(benches);
