//! Embedding Settee: load a scene, step it, read positions as nalgebra vectors.
//!
//! ```sh
//! cargo run --release -p settee --example embed -- scenes/first_scene_2_marker_mapping.scn markers
//! ```

use settee::Simulation;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let scene = args.next().unwrap_or_else(|| "scenes/first_scene_2_marker_mapping.scn".into());
    let state = args.next().unwrap_or_else(|| "markers".into());

    let mut sim = Simulation::open(&scene)?;
    println!("{scene}: states {:?}, dt = {} s", sim.state_names(), sim.dt());
    for _ in 0..5 {
        sim.step_n(20)?;
        let points = sim.positions(&state)?;
        let lowest = points.iter().min_by(|a, b| a.y.total_cmp(&b.y)).expect("a non-empty state");
        let speed = sim.velocities(&state)?.iter().map(|v| v.norm()).fold(0.0, f64::max);
        println!("t = {:5.2} s  lowest point of '{state}' at {lowest:.4}  fastest at {speed:.4} m/s", sim.time());
    }
    Ok(())
}
