//! Time per step of SOFA's example scenes that use the components added for them (issue 21):
//! one scene per component, listed with the component it exercises in
//! `conformance/examples-bench.txt`. `docs/performance.md` keeps the figures, beside SOFA's time
//! where `../shared/perf/sofa-timings.md` records one.
//!
//! `cargo bench -p settee --bench examples [-- FILTER]` — needs ../shared/sofa-examples.

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};

fn bench_example(c: &mut Criterion, examples: &Path, scene: &str, component: &str) {
    let path = examples.join("examples").join(scene);
    let data = [examples.join("share"), examples.join("examples")];
    let mut scene_data = match settee::load(&path, &settee::factory(), &data) {
        Ok(l) => l.scene,
        Err(e) => panic!("{scene} does not load: {:?}", e.diagnostics),
    };
    // The scenes' exporters write there, never next to the scenes (read-only test data).
    scene_data.output_dir = std::env::temp_dir().join(format!("settee-bench-examples-{}", std::process::id()));
    let dt = scene_data.root().context.dt;
    for _ in 0..3 {
        settee_core::simulation::animate(&mut scene_data, dt).expect("warm-up step");
    }
    c.bench_function(&format!("{component}: {scene}"), |b| b.iter(|| settee_core::simulation::animate(&mut scene_data, dt).expect("step")));
}

fn examples(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let examples = root.join("../shared/sofa-examples");
    if !examples.is_dir() {
        eprintln!("skipping the example benches: {} not found", examples.display());
        return;
    }
    let list = std::fs::read_to_string(root.join("conformance/examples-bench.txt")).expect("conformance/examples-bench.txt");
    for line in list.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (scene, component) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        bench_example(c, &examples, scene, component.trim());
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = examples
}
criterion_main!(benches);
