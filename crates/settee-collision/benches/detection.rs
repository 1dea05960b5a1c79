//! One detection (tree refit, broad phase, narrow phase, outputs map) of a bumpy triangulated
//! surface against a sheet of spheres lying on it, at 1×, 4× and 16× the primitive count
//! (10,082 / 40,328 / 160,178 triangles against 1,024 / 4,096 / 16,129 spheres; spacing kept,
//! so the contact count grows with the primitive count). Depth 6 (the pipeline default),
//! sequential and parallel (rayon's global pool).
//!
//! Run: `cargo bench -p settee-collision --bench detection`.
//!
//! The intersection method is local to the bench: the proximity box test, and a sphere
//! against the closest point of the triangle.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use settee_collision::detection::{Detection, DetectionSettings};
use settee_collision::testing::{closest_on_triangle, height_field};
use settee_collision::{Aabb, DetectionOutput, IntersectionMethod, ModelGeometry, PairSupport, PrimitiveKind, Vec3};
use std::time::Duration;

struct SphereTriangleProximity {
    alarm: f64,
}

impl IntersectionMethod for SphereTriangleProximity {
    fn name(&self) -> &'static str {
        "SphereTriangleProximity"
    }
    fn alarm_distance(&self) -> f64 {
        self.alarm
    }
    fn contact_distance(&self) -> f64 {
        0.0
    }
    fn boxes_overlap(&self, a: &Aabb, ga: &ModelGeometry, b: &Aabb, gb: &ModelGeometry, _same_box: bool) -> bool {
        let d = self.alarm + ga.contact_distance + gb.contact_distance;
        (0..3).all(|i| !(a.min[i] > b.max[i] + d || b.min[i] > a.max[i] + d))
    }
    fn support(&self, k1: PrimitiveKind, k2: PrimitiveKind) -> PairSupport {
        use PrimitiveKind::*;
        match (k1, k2) {
            (Cube, Cube) | (Triangle, Sphere) => PairSupport::Supported { swap: false },
            (Sphere, Triangle) => PairSupport::Supported { swap: true },
            _ => PairSupport::Unknown,
        }
    }
    fn intersect(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let [a, b, c] = g1.triangles[e1];
        let (centre, r) = (g2.x[e2], g2.radius[e2]);
        let q = closest_on_triangle(centre, g1.x[a], g1.x[b], g1.x[c]);
        let d = centre - q;
        let dist = d.norm();
        if dist - r >= self.alarm || dist == 0.0 {
            return 0;
        }
        out.push(DetectionOutput { elem: (e1, e2), id: e1 as i64, point: [q, centre], normal: d / dist, value: dist - r });
        1
    }
}

/// Surface of `n × n` squares (2n² triangles) of side 0.1, and `m × m` spheres of radius
/// 0.12 spaced 0.2 apart, resting on it.
fn scene(scale: usize) -> Vec<ModelGeometry> {
    let n = ((5000 * scale) as f64).sqrt().ceil() as usize;
    let m = ((1000 * scale) as f64).sqrt().ceil() as usize;
    let h = 0.1;
    let bump = |x: f64, y: f64| 0.05 * (3.0 * x).sin() * (2.0 * y).cos();
    let surf = height_field("surface", 1, n, n, h, bump);
    let mut balls = ModelGeometry::new(PrimitiveKind::Sphere, "spheres", 2);
    let spacing = n as f64 * h / m as f64;
    for j in 0..m {
        for i in 0..m {
            let (x, y) = ((i as f64 + 0.5) * spacing, (j as f64 + 0.5) * spacing);
            balls.x.push(Vec3::new(x, y, bump(x, y) + 0.1));
            balls.radius.push(0.12);
        }
    }
    vec![surf, balls]
}

fn detection(c: &mut Criterion) {
    let method = SphereTriangleProximity { alarm: 0.02 };
    let mut group = c.benchmark_group("detection");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    for scale in [1, 4, 16] {
        let models = scene(scale);
        for parallel in [false, true] {
            let settings = DetectionSettings { depth: 6, parallel, ..DetectionSettings::default() };
            let mut d = Detection::new();
            let contacts: usize = d.run(&models, &method, &settings).expect("valid scene").iter().map(|p| p.outputs.len()).sum();
            eprintln!(
                "{scale}x: {} triangles, {} spheres, {contacts} outputs, {} units, {} chunks",
                models[0].triangles.len(),
                models[1].x.len(),
                d.stats().narrow.units,
                d.stats().narrow.parallel_chunks
            );
            let name = if parallel { "parallel" } else { "sequential" };
            group.bench_with_input(BenchmarkId::new(name, format!("{scale}x")), &models, |b, m| {
                b.iter(|| {
                    let out = d.run(black_box(m), &method, &settings).expect("valid scene");
                    black_box(out.len())
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, detection);
criterion_main!(benches);
