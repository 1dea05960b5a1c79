//! Time per step of the Compliant formulation on a hanging cloth of stiff distance constraints
//! (criterion). The cloth is generated here: an n×n grid of particles, structural and shear
//! links of compliance 1e-9 (a triangulated sheet of hard links would be over-constrained, its KKT
//! system singular), two corners fixed; the KKT system is solved by LDLTSolver through its Schur complement
//! and as a full KKT factorization, so the two strategies are compared on the same system.
//!
//! `cargo bench -p settee --bench compliant`

use criterion::{criterion_group, criterion_main, Criterion};

/// An `n × n` cloth of side 1 in the x–z plane, hanging under gravity from two corners.
fn cloth(n: usize, kkt: &str) -> String {
    let h = 1.0 / (n - 1) as f64;
    let mut pos = String::new();
    for j in 0..n {
        for i in 0..n {
            pos.push_str(&format!("{} 0 {}  ", i as f64 * h, j as f64 * h));
        }
    }
    let id = |i: usize, j: usize| j * n + i;
    let mut edges = String::new();
    for j in 0..n {
        for i in 0..n {
            if i + 1 < n {
                edges.push_str(&format!("{} {}  ", id(i, j), id(i + 1, j)));
            }
            if j + 1 < n {
                edges.push_str(&format!("{} {}  ", id(i, j), id(i, j + 1)));
            }
            if i + 1 < n && j + 1 < n {
                edges.push_str(&format!("{} {}  ", id(i, j), id(i + 1, j + 1)));
            }
        }
    }
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <CompliantImplicitSolver/>
  {kkt}
  <MechanicalObject name="cloth" position="{pos}"/>
  <UniformMass totalMass="1"/>
  <FixedConstraint indices="0 {}"/>
  <Node name="links">
    <MechanicalObject template="Vec1d" name="lengths"/>
    <EdgeSetTopologyContainer edges="{edges}"/>
    <DistanceMapping/>
    <UniformCompliance template="Vec1d" compliance="1e-9"/>
  </Node>
</Node>"#,
        n - 1
    )
}

fn bench_cloth(c: &mut Criterion, name: &str, text: String) {
    let path = std::env::temp_dir().join(format!("settee-bench-compliant-{}-{}.scn", std::process::id(), name.len()));
    std::fs::write(&path, text).expect("write the bench scene");
    let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
    let _ = std::fs::remove_file(&path);
    let dt = scene.root().context.dt;
    for _ in 0..3 {
        settee_core::simulation::animate(&mut scene, dt).expect("warm-up step");
    }
    c.bench_function(name, |b| b.iter(|| settee_core::simulation::animate(&mut scene, dt).expect("step")));
}

fn compliant(c: &mut Criterion) {
    for n in [10, 20] {
        bench_cloth(c, &format!("cloth {n}x{n} stiff links, LDLTSolver Schur"), cloth(n, "<LDLTSolver/>"));
        bench_cloth(c, &format!("cloth {n}x{n} stiff links, LDLTSolver KKT"), cloth(n, r#"<LDLTSolver schur="false"/>"#));
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = compliant
}
criterion_main!(benches);
