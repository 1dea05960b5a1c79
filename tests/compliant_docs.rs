//! The twin scenes of `docs/compliant.md` (`scenes/compliant/`): each physical scene built with the
//! Lagrangian pipeline and with the Compliant formulation. Both versions agree up to the methods'
//! errors, Compliant keeps its hard links at their lengths, and every scene in a subdirectory of
//! `scenes/` loads cleanly (tests/example_scenes.rs covers only the files directly in `scenes/`).

use std::path::{Path, PathBuf};

use settee::Simulation;
use settee_core::Severity;

fn scenes_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenes")
}

/// Runs `steps` steps of `scenes/compliant/<name>_<pipeline>.scn`; returns the positions of the
/// state named after the pipeline and the largest relative link-length error after any step.
fn run(name: &str, pipeline: &str, steps: usize, edges: &[(usize, usize)]) -> (Vec<[f64; 3]>, f64) {
    let path = scenes_dir().join(format!("compliant/{name}_{pipeline}.scn"));
    let mut sim = Simulation::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let x0 = sim.positions(pipeline).expect("the state");
    let rest: Vec<f64> = edges.iter().map(|&(a, b)| (x0[b] - x0[a]).norm()).collect();
    let mut drift = 0.0_f64;
    for _ in 0..steps {
        sim.step().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let x = sim.positions(pipeline).expect("the state");
        for (&(a, b), r) in edges.iter().zip(&rest) {
            drift = drift.max(((x[b] - x[a]).norm() - r).abs() / r);
        }
    }
    let x = sim.positions(pipeline).expect("the state");
    (x.iter().map(|p| [p.x, p.y, p.z]).collect(), drift)
}

struct Agreement {
    /// Largest distance between the same particle in the two runs.
    distance: f64,
    lagrangian_drift: f64,
    compliant_drift: f64,
}

fn compare(name: &str, steps: usize, edges: &[(usize, usize)]) -> Agreement {
    let (xl, lagrangian_drift) = run(name, "lagrangian", steps, edges);
    let (xc, compliant_drift) = run(name, "compliant", steps, edges);
    assert_eq!(xl.len(), xc.len(), "{name}: both versions have the same particles");
    let distance =
        xl.iter().zip(&xc).map(|(p, q)| ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()).fold(0.0, f64::max);
    eprintln!("{name}, {steps} steps: max distance {distance:.3e} m, link error Lagrangian {lagrangian_drift:.2e}, Compliant {compliant_drift:.2e}");
    Agreement { distance, lagrangian_drift, compliant_drift }
}

// Measured after the stated steps of 0.01 s (largest distance over all particles; largest
// relative link error, Lagrangian / Compliant): pendulum 3.3e-3 m, 8.4e-4 / 2.2e-16; chain
// 1.2e-2 m, 5.1e-2 / 6.3e-4 (the free end whips near 0.5 s); cloth 5.4e-4 m, 5.4e-3 / 4.2e-5.
// The upper bounds are about three times these: a change of either pipeline that moves a
// trajectory by more than the two methods' difference fails here. The lower bounds (a tenth of
// the measure) make sure the two runs are really two different methods.

#[test]
fn pendulum_agrees_over_50_steps() {
    let a = compare("pendulum", 50, &[(0, 1)]);
    assert!(a.distance > 3e-4 && a.distance < 1e-2, "{}", a.distance);
    assert!(a.compliant_drift < 1e-12, "{}", a.compliant_drift);
    assert!(a.lagrangian_drift < 2.5e-3, "{}", a.lagrangian_drift);
}

#[test]
fn chain_agrees_over_50_steps() {
    let edges: Vec<_> = (0..20).map(|i| (i, i + 1)).collect();
    let a = compare("chain", 50, &edges);
    assert!(a.distance > 1e-3 && a.distance < 4e-2, "{}", a.distance);
    assert!(a.compliant_drift < 2e-3, "{}", a.compliant_drift);
    assert!(a.lagrangian_drift < 0.15, "{}", a.lagrangian_drift);
}

#[test]
fn cloth_agrees_over_10_steps() {
    // Ten steps only: the Lagrangian cloth (766 rows, Gauss–Seidel on a dense W) costs about a
    // second per step on a loaded machine.
    let n = 20;
    let along_x = (0..n).flat_map(|k| (0..n - 1).map(move |i| (i + n * k, i + 1 + n * k)));
    let along_z = (0..n - 1).flat_map(|k| (0..n).map(move |i| (i + n * k, i + n * (k + 1))));
    let edges: Vec<_> = along_x.chain(along_z).collect();
    assert_eq!(edges.len(), 760);
    let a = compare("cloth", 10, &edges);
    assert!(a.distance > 5e-5 && a.distance < 2e-3, "{}", a.distance);
    assert!(a.compliant_drift < 1.5e-4, "{}", a.compliant_drift);
    assert!(a.lagrangian_drift < 1.5e-2, "{}", a.lagrangian_drift);
}

fn scenes_in_subdirectories(dir: &Path, top: bool, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            scenes_in_subdirectories(&path, false, out);
        } else if !top && path.extension().is_some_and(|e| e == "scn") {
            out.push(path);
        }
    }
}

#[test]
fn scenes_in_subdirectories_load_cleanly_and_run() {
    let mut scenes = Vec::new();
    scenes_in_subdirectories(&scenes_dir(), true, &mut scenes);
    assert!(scenes.len() >= 6, "{scenes:?}");
    let factory = settee::factory();
    for path in &scenes {
        let mut l = settee::load(path, &factory, &[]).unwrap_or_else(|f| panic!("{}: {}", path.display(), f.first_error()));
        let warnings: Vec<_> = l.scene.messages.iter().filter(|m| m.severity >= Severity::Warning).collect();
        assert!(warnings.is_empty(), "{}: {warnings:?}", path.display());
        let dt = l.scene.root().context.dt;
        for _ in 0..3 {
            settee_core::simulation::animate(&mut l.scene, dt).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}
