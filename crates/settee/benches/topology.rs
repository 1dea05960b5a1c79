//! The cost of removing tetrahedra from a running FEM body (criterion): the same two
//! tetrahedra are removed from the cutting beams of `scenes/cutting/` at two mesh sizes
//! (2,592 and 10,368 tetrahedra, same cross-section), with everything that follows the change —
//! the container's shells, the mechanical state, DiagonalMass, the corotational FEM's
//! per-element data and the fixed points. The removal time should not grow with the mesh (the
//! shells the container builds at its first change are built before the timing).
//!
//! `cargo bench -p settee --bench topology`

use std::path::PathBuf;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use settee_core::topology_change::ElementKind;
use settee_core::{ComponentId, Scene};

fn scene_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenes/cutting").join(file)
}

fn loaded(file: &str) -> (Scene, ComponentId) {
    let scene = settee::load(&scene_path(file), &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
    let tetras = scene.components.iter().find(|(_, e)| e.name == "tetras").map(|(id, _)| id).expect("the beam's container");
    (scene, tetras)
}

fn removal(c: &mut Criterion) {
    let mut g = c.benchmark_group("remove 2 tetrahedra");
    g.sample_size(20);
    for (label, file) in [("2592 tetrahedra", "cutting_beam.scn"), ("10368 tetrahedra", "cutting_beam_long.scn")] {
        g.bench_function(label, |b| {
            // Each iteration removes two tetrahedra from the middle of the list (both replaced by
            // the last ones); a fresh scene every 200 removals keeps the mesh near its size.
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let (mut scene, tetras) = loaded(file);
                    // The container builds its shells at its first change (SOFA: at init): not
                    // part of a removal's cost.
                    let n = scene.mesh_of(tetras).unwrap().tetrahedra.len();
                    settee_topology::change_processor::remove_items(&mut scene, tetras, ElementKind::Tetrahedron, vec![n / 4]).unwrap();
                    for _ in 0..left.min(200) {
                        let n = scene.mesh_of(tetras).unwrap().tetrahedra.len();
                        let t0 = Instant::now();
                        settee_topology::change_processor::remove_items(&mut scene, tetras, ElementKind::Tetrahedron, vec![n / 2, n / 3]).unwrap();
                        total += t0.elapsed();
                    }
                    left -= left.min(200);
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, removal);
criterion_main!(benches);
