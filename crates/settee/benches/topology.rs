//! The cost of removing tetrahedra from a running FEM body (criterion): the same two
//! tetrahedra are removed from the cutting beams of `scenes/cutting/` at two mesh sizes
//! (2,592 and 10,368 tetrahedra, same cross-section), with everything that follows the change —
//! the container's shells, the mechanical state, DiagonalMass, the corotational FEM's
//! per-element data and the fixed points. The removal time should not grow with the mesh.
//!
//! `cargo bench -p settee --bench topology`

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
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
    for (label, file) in [("2592 tetrahedra", "cutting_beam.scn"), ("10368 tetrahedra", "cutting_beam_long.scn")] {
        g.bench_function(label, |b| {
            b.iter_batched(
                || loaded(file),
                |(mut scene, tetras)| {
                    let n = scene.mesh_of(tetras).unwrap().tetrahedra.len();
                    // Two tetrahedra in the middle of the list: both are replaced by the last ones.
                    settee_topology::change_processor::remove_items(&mut scene, tetras, ElementKind::Tetrahedron, vec![n / 2, n / 3]).unwrap();
                    scene
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, removal);
criterion_main!(benches);
