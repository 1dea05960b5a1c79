//! Profiling aid: `scenes/spheres_on_sheet.scn` grown k times along x and z (k² times its
//! primitives, as `benches/collision.rs` grows it), run until the spheres rest, then the
//! detection phase, the collision stage or its phases called REPS times (min and median times).
//!
//! `cargo run --release -p settee --example sheet_profile -- K [REPS] [detect|stage|both|phases]
//! [THREADS]`
//!
//! The measured calls go through the marker functions `measured_detect` and `measured_stage`, so
//! callgrind can count them alone (`--dump-before=sheet_profile::measured_detect
//! --dump-after=sheet_profile::measured_detect`: every second part file is one call, all threads
//! included). The spheres settle on a one-thread pool and the measured calls run on a pool of
//! THREADS threads (default: rayon's), so with `--separate-threads=yes` the threads created last
//! did only measured work.

use settee_collision::components::pipeline::PipelineComponent;
use settee_core::role;
use settee_core::simulation::animate;
use settee_core::{ComponentId, Scene};
use std::time::Instant;

#[path = "../benches/support/sheet.rs"]
mod sheet;

use sheet::sheet_scene;

#[inline(never)]
fn measured_detect(scene: &mut Scene, p: ComponentId) {
    scene.with_role::<dyn settee_core::CollisionPipeline, _>(p, |pipeline, s| pipeline.detect(s, p)).unwrap();
}

#[inline(never)]
fn measured_stage(scene: &mut Scene) {
    settee_core::simulation::collision(scene).unwrap();
}

fn report(k: usize, what: &str, t: &mut [f64]) {
    if t.is_empty() {
        return;
    }
    t.sort_by(f64::total_cmp);
    println!("k={k} {what}: min {:.3} ms, median {:.3} ms ({} calls)", t[0], t[t.len() / 2], t.len());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let k: usize = args.get(1).map_or(1, |a| a.parse().unwrap());
    let reps: usize = args.get(2).map_or(10, |a| a.parse().unwrap());
    let what = args.get(3).map_or("both", |s| s.as_str());
    let threads: usize = args.get(4).map_or(0, |a| a.parse().unwrap());
    let path = std::env::temp_dir().join(format!("sheet_profile_{k}_{}.scn", std::process::id()));
    std::fs::write(&path, sheet_scene(k)).unwrap();
    let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
    let _ = std::fs::remove_file(&path);
    let dt = scene.root().context.dt;
    let settle = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    settle.install(|| {
        for _ in 0..40 {
            animate(&mut scene, dt).unwrap();
        }
    });
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| measure(&mut scene, k, reps, what));
}

fn measure(scene: &mut Scene, k: usize, reps: usize, what: &str) {
    let p = scene.find_down(Scene::ROOT, role::COLLISION_PIPELINE).unwrap();
    if what == "detect" || what == "both" {
        let mut t = Vec::new();
        for _ in 0..reps {
            let t0 = Instant::now();
            measured_detect(scene, p);
            t.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        report(k, "detect", &mut t);
    }
    if what == "stage" || what == "both" {
        let mut t = Vec::new();
        for _ in 0..reps {
            let t0 = Instant::now();
            measured_stage(scene);
            t.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        report(k, "stage", &mut t);
    }
    if what == "phases" {
        // The collision stage's phases timed apart: reset, detect, respond.
        let mut t = [Vec::new(), Vec::new(), Vec::new()];
        for _ in 0..reps {
            for (i, phase) in t.iter_mut().enumerate() {
                let t0 = Instant::now();
                scene
                    .with_role::<dyn settee_core::CollisionPipeline, _>(p, |pipeline, s| match i {
                        0 => pipeline.reset(s, p),
                        1 => pipeline.detect(s, p),
                        _ => pipeline.respond(s, p),
                    })
                    .unwrap();
                phase.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            scene.apply_deferred();
        }
        for (name, phase) in ["reset", "detect", "respond"].iter().zip(&mut t) {
            report(k, name, phase);
        }
    }
    let pc = scene.obj(p).as_any().downcast_ref::<PipelineComponent>().unwrap();
    println!("{:?}", pc.detection_stats());
}
