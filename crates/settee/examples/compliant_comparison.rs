//! Runs the twin scenes of `scenes/compliant/` (one built with the Lagrangian pipeline, one with
//! the Compliant formulation) and compares them: the largest distance between the tracked points
//! of the two runs over time, the largest relative link-length error of each, and the median
//! wall time per step. Prints a Markdown table; with `--write-doc FILE` also puts it between the
//! `compliant-comparison` marker comments of FILE. Run by `scripts/compliant-comparison`.
//!
//! ```sh
//! cargo run --release -p settee --example compliant_comparison -- [--runs R] [--write-doc docs/compliant.md]
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use settee::Simulation;

const BEGIN: &str = "<!-- compliant-comparison:begin -->";
const END: &str = "<!-- compliant-comparison:end -->";

/// One pair of scenes: `scenes/compliant/<name>_{lagrangian,compliant}.scn`.
struct Pair {
    name: &'static str,
    steps: usize,
    /// Indices in the compared state (named `lagrangian` or `compliant` after its pipeline).
    tracked: &'static [usize],
    tracked_label: &'static str,
    edges: Vec<(usize, usize)>,
}

/// The grid lines of an n × n cloth (point (i, k) is i + n·k), as in the scenes.
fn grid_edges(n: usize) -> Vec<(usize, usize)> {
    let along_x = (0..n).flat_map(|k| (0..n - 1).map(move |i| (i + n * k, i + 1 + n * k)));
    let along_z = (0..n - 1).flat_map(|k| (0..n).map(move |i| (i + n * k, i + n * (k + 1))));
    along_x.chain(along_z).collect()
}

fn pairs() -> Vec<Pair> {
    vec![
        Pair { name: "pendulum", steps: 300, tracked: &[1], tracked_label: "bob", edges: vec![(0, 1)] },
        Pair { name: "chain", steps: 300, tracked: &[20], tracked_label: "free end", edges: (0..20).map(|i| (i, i + 1)).collect() },
        Pair { name: "cloth", steps: 40, tracked: &[19, 380], tracked_label: "two free corners", edges: grid_edges(20) },
    ]
}

/// What one run of one scene gives.
struct Run {
    /// Tracked positions after each step.
    tracked: Vec<Vec<[f64; 3]>>,
    /// Largest |length − rest| / rest over all links and steps.
    drift: f64,
    ms_per_step: f64,
}

fn run(path: &Path, state: &str, pair: &Pair) -> Result<Run, Box<dyn std::error::Error>> {
    let mut sim = Simulation::open(path)?;
    let x0 = sim.positions(state)?;
    let rest: Vec<f64> = pair.edges.iter().map(|&(a, b)| (x0[b] - x0[a]).norm()).collect();
    let (mut tracked, mut drift, mut seconds) = (Vec::new(), 0.0_f64, 0.0);
    for _ in 0..pair.steps {
        let start = Instant::now();
        sim.step()?;
        seconds += start.elapsed().as_secs_f64();
        let x = sim.positions(state)?;
        for (&(a, b), r) in pair.edges.iter().zip(&rest) {
            drift = drift.max(((x[b] - x[a]).norm() - r).abs() / r);
        }
        tracked.push(pair.tracked.iter().map(|&i| [x[i].x, x[i].y, x[i].z]).collect());
    }
    Ok(Run { tracked, drift, ms_per_step: 1e3 * seconds / pair.steps as f64 })
}

/// Runs a scene `runs` times; keeps the first run's trajectory and the median time per step.
fn measure(dir: &Path, pair: &Pair, pipeline: &str, runs: usize) -> Result<Run, Box<dyn std::error::Error>> {
    let path = dir.join(format!("{}_{pipeline}.scn", pair.name));
    let mut all = (0..runs.max(1)).map(|_| run(&path, pipeline, pair)).collect::<Result<Vec<_>, _>>()?;
    let mut times: Vec<f64> = all.iter().map(|r| r.ms_per_step).collect();
    times.sort_by(f64::total_cmp);
    let mut first = all.swap_remove(0);
    first.ms_per_step = times[times.len() / 2];
    Ok(first)
}

fn max_difference(a: &Run, b: &Run) -> f64 {
    a.tracked
        .iter()
        .zip(&b.tracked)
        .flat_map(|(p, q)| p.iter().zip(q))
        .map(|(p, q)| ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt())
        .fold(0.0, f64::max)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut runs, mut doc) = (3, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().ok_or("--runs needs a number")?.parse()?,
            "--write-doc" => doc = Some(PathBuf::from(args.next().ok_or("--write-doc needs a file")?)),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenes/compliant");
    let mut table = String::from(
        "| scene | particles, links | steps of 0.01 s | compared | max distance between the two runs (m) | max link error, Lagrangian | max link error, Compliant | ms/step, Lagrangian | ms/step, Compliant |\n\
         |---|---|---:|---|---:|---:|---:|---:|---:|\n",
    );
    for pair in pairs() {
        let lagrangian = measure(&dir, &pair, "lagrangian", runs)?;
        let compliant = measure(&dir, &pair, "compliant", runs)?;
        let particles = pair.edges.iter().map(|&(a, b)| a.max(b)).max().unwrap_or(0) + 1;
        let line = format!(
            "| {} | {}, {} | {} | {} | {:.2e} | {:.1e} | {:.1e} | {:.3} | {:.3} |\n",
            pair.name,
            particles,
            pair.edges.len(),
            pair.steps,
            pair.tracked_label,
            max_difference(&lagrangian, &compliant),
            lagrangian.drift,
            compliant.drift,
            lagrangian.ms_per_step,
            compliant.ms_per_step
        );
        eprint!("{line}");
        table.push_str(&line);
    }
    print!("{table}");
    if let Some(doc) = doc {
        let text = std::fs::read_to_string(&doc)?;
        let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
            return Err(format!("{}: no {BEGIN} … {END} markers", doc.display()).into());
        };
        let updated = format!("{}{BEGIN}\n{table}{}", &text[..b], &text[e..]);
        std::fs::write(&doc, updated)?;
        eprintln!("wrote the table into {}", doc.display());
    }
    Ok(())
}
