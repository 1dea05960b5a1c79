//! Divergence detection after every step: NaN or infinite states, positions far beyond the
//! scene's initial extent, and kinetic energy growing by orders of magnitude. A diverging
//! explicit scene is stopped within a few steps of leaving any plausible range, instead of
//! running on to 1e159 and reporting success.

use crate::diag::{SimError, SimResult};
use crate::mechanics::Mass;
use crate::scene::Scene;
use crate::state::VecId;

/// A position is implausible beyond this many times the scene's initial size.
pub const POSITION_FACTOR: f64 = 1e12;
/// The kinetic energy is implausible when it exceeds this many times its largest value over the
/// first half of the run so far (and the floor below).
pub const ENERGY_GROWTH: f64 = 1e8;
/// Steps before the energy growth is judged (the first steps of a body starting at rest grow
/// from zero).
pub const ENERGY_WARMUP_STEPS: usize = 10;

pub use crate::graph::scene::DivergenceGuard;

impl DivergenceGuard {
    /// The largest plausible |coordinate|.
    pub fn position_limit(&self) -> Option<f64> {
        self.scale.map(|s| POSITION_FACTOR * s)
    }

    /// Records the kinetic energy after a step and returns the reference it is judged against
    /// when it grew implausibly: more than [`ENERGY_GROWTH`] times the largest value over the
    /// first half of the steps so far (so steady or polynomial growth, as of a body accelerating
    /// from rest, never trips, while exponential growth does within a few steps), and above the
    /// floor.
    pub fn observe_energy(&mut self, ke: f64) -> Option<f64> {
        let prev = self.energy_max.last().unwrap_or(0.0);
        self.energy_max.push(prev.max(ke));
        let k = self.energy_max.len() - 1;
        if k < ENERGY_WARMUP_STEPS {
            return None;
        }
        let reference = self.energy_max.at(k / 2);
        (ke > ENERGY_GROWTH * reference && ke > self.energy_floor).then_some(reference)
    }

    /// The scene's size and energy floor, from the current positions (the initial ones when
    /// called right after init).
    fn set_up(&mut self, scene: &Scene) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        let mut largest = 0.0f64;
        for st in scene.store.states.values() {
            let (cs, dims) = (st.layout.coord_size(), st.layout.spatial_size().min(3));
            let x = st.read(VecId::POSITION);
            for p in x.chunks_exact(cs.max(1)) {
                for a in 0..dims {
                    if p[a].is_finite() {
                        lo[a] = lo[a].min(p[a]);
                        hi[a] = hi[a].max(p[a]);
                    }
                }
            }
            largest = x.iter().filter(|v| v.is_finite()).fold(largest, |m, v| m.max(v.abs()));
        }
        let extent = (0..3).filter(|a| hi[*a] >= lo[*a]).map(|a| hi[a] - lo[a]).fold(0.0, f64::max);
        let scale = extent.max(largest).max(1.0);
        self.scale = Some(scale);
        let dt = scene.root().context.dt.abs();
        let speed = if dt > 0.0 { scale / dt } else { scale };
        self.energy_floor = kinetic_energy(scene, Some(1.0)).0 * speed * speed;
        self.energy_max.reset(kinetic_energy(scene, None).0);
    }
}

/// The kinetic energy of every mass (½ vᵀ M v), with each state's velocity, or with every
/// velocity component set to `unit`; with the state and DOF of the fastest velocity component.
fn kinetic_energy(scene: &Scene, unit: Option<f64>) -> (f64, Option<(crate::StateId, usize, f64)>) {
    let mut total = 0.0;
    let mut fastest: Option<(crate::StateId, usize, f64)> = None;
    for (_, e) in scene.components.iter() {
        // Only masses that are part of the simulation: initialised, in active nodes.
        if !e.plays(crate::mechanics::MASS) || !e.initialized || !scene.node_active(e.node) {
            continue;
        }
        let Some(mass) = e.role::<dyn Mass>() else { continue };
        let sid = mass.state();
        let Some(st) = scene.store.states.get(sid) else { continue };
        let v = st.read(VecId::VELOCITY);
        if v.is_empty() {
            continue;
        }
        total += match unit {
            Some(u) => mass.kinetic_energy(&vec![u; v.len()]),
            None => mass.kinetic_energy(v),
        };
        if unit.is_none() {
            let ds = st.elem_size(VecId::VELOCITY.kind).max(1);
            if let Some((i, s)) = v.iter().map(|x| x.abs()).enumerate().max_by(|a, b| a.1.total_cmp(&b.1)) {
                if fastest.is_none_or(|f| s > f.2) {
                    fastest = Some((sid, i / ds, s));
                }
            }
        }
    }
    (total, fastest)
}

/// The error, at the position of the state's MechanicalObject when known.
fn diverged(scene: &Scene, step: usize, state: Option<crate::StateId>, what: String) -> SimError {
    let mut e = SimError::new(format!("the simulation diverged at step {step} (t = {}): {what}", scene.root().context.time))
        .hint("reduce dt, increase solver iterations, or check stiffness and mass values");
    if let Some(owner) = state.and_then(|s| scene.store.states.get(s)).map(|s| s.owner).filter(|c| scene.contains(*c)) {
        let entry = scene.entry(owner);
        e.0.pos = entry.pos.clone();
        e.0.subject = Some(entry.label());
    }
    e
}

/// Forgets the previous run and takes the current positions and velocities as the initial
/// ones (called at the end of `init_root`).
pub fn start(scene: &mut Scene) {
    let mut g = DivergenceGuard::default();
    g.set_up(scene);
    scene.divergence = g;
}

/// Checks the states after a step: every position and velocity finite, every position within
/// [`POSITION_FACTOR`] × the scene's initial size, and the kinetic energy not grown by
/// [`ENERGY_GROWTH`] (see [`DivergenceGuard::observe_energy`]). The first problem stops the
/// run with the state, DOF, time and step.
pub fn check_plausible(scene: &mut Scene) -> SimResult {
    if scene.divergence.scale.is_none() {
        start(scene); // a scene stepped without init_root: its current state is the reference
    }
    scene.divergence.steps += 1;
    let step = scene.divergence.steps;
    let limit = scene.divergence.position_limit().unwrap_or(f64::INFINITY);
    for (sid, st) in scene.store.states.iter() {
        for id in [VecId::POSITION, VecId::VELOCITY] {
            let what = if id == VecId::POSITION { "position" } else { "velocity" };
            let x = st.read(id);
            let bad =
                if id == VecId::POSITION { x.iter().position(|v| v.is_nan() || v.abs() > limit) } else { x.iter().position(|v| !v.is_finite()) };
            if let Some(i) = bad {
                let dof = i / st.elem_size(id.kind).max(1);
                let why = if x[i].is_finite() {
                    format!(", beyond {limit:.3e} ({POSITION_FACTOR:e} × the scene's initial size {:.3e})", scene.divergence.scale.unwrap_or(1.0))
                } else {
                    String::new()
                };
                return Err(diverged(scene, step, Some(sid), format!("{what} of DOF {dof} of state '{}' is {:.3e}{why}", st.name, x[i])));
            }
        }
    }
    let (ke, fastest) = kinetic_energy(scene, None);
    if let Some(reference) = scene.divergence.observe_energy(ke) {
        let who =
            fastest.map(|(s, dof, v)| format!("; fastest: DOF {dof} of state '{}' at speed {v:.3e}", scene.store.get(s).name)).unwrap_or_default();
        return Err(diverged(
            scene,
            step,
            fastest.map(|f| f.0),
            format!("the kinetic energy grew to {ke:.3e}, more than {ENERGY_GROWTH:e} × its largest value {reference:.3e} over the first half of the run{who}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_and_polynomial_energy_growth_never_trips() {
        let mut g = DivergenceGuard { energy_floor: 1e-6, ..Default::default() };
        g.energy_max.push(0.0); // a body at rest
        for k in 1..100_000usize {
            // free fall from rest: v ∝ t, E ∝ t²; even t⁶ growth passes
            assert_eq!(g.observe_energy((k as f64).powi(6)), None, "step {k}");
        }
    }

    #[test]
    fn exponential_energy_growth_trips_within_a_few_steps_above_the_floor() {
        let mut g = DivergenceGuard { energy_floor: 1e3, ..Default::default() };
        g.energy_max.push(1.0);
        let mut tripped = None;
        for k in 1..100usize {
            let ke = 10f64.powi(k as i32); // ×10 per step
            if let Some(r) = g.observe_energy(ke) {
                tripped = Some((k, r));
                break;
            }
        }
        // After the warm-up, step k compares with the largest energy of step k/2: 10^k > 1e8·10^(k/2)
        // first at k = 17.
        assert_eq!(tripped, Some((17, 1e8)));
        // Below the floor, growth is not judged.
        let mut g = DivergenceGuard { energy_floor: 1e30, ..Default::default() };
        g.energy_max.push(1e-20);
        assert!((1..20).all(|k| g.observe_energy(10f64.powi(k)).is_none()));
    }

    #[test]
    fn the_running_maximum_reads_as_the_full_history_would() {
        let mut seq = crate::graph::scene::RunningMax::default();
        let mut full: Vec<f64> = Vec::new();
        let mut x = 0.5f64;
        for k in 0..2000usize {
            // a bouncing, slowly rising signal with plateaus
            x = (x * 3.7 * (1.0 - x)).clamp(0.0, 1.0);
            let v = (k / 300) as f64 + x;
            let m = full.last().map_or(v, |&p: &f64| p.max(v));
            full.push(m);
            seq.push(m);
            assert_eq!(seq.len(), full.len());
            for j in [0, k / 2, k] {
                assert_eq!(seq.at(j), full[j], "index {j} after {k}");
            }
        }
        // Memory follows the rises, not the steps.
        assert!(seq.rises.len() < 200, "{} rises kept", seq.rises.len());
    }

    #[test]
    fn positions_beyond_the_plausible_range_stop_with_state_dof_step() {
        use crate::state::MState;
        use crate::types::Layout;
        let mut scene = Scene::new("root");
        let owner = crate::ComponentId::first_in_slot(0);
        let mut st = MState::new(Layout::Vec3, owner, Scene::ROOT, "dofs".into());
        st.resize(2);
        st.write(VecId::POSITION).copy_from_slice(&[0.0, 0.0, 0.0, 3.0, 0.0, 0.0]);
        let sid = scene.store.add(st);
        check_plausible(&mut scene).unwrap();
        assert_eq!(scene.divergence.scale, Some(3.0));
        scene.store.get_mut(sid).write(VecId::POSITION)[4] = 2.9e12; // within 1e12 × 3
        check_plausible(&mut scene).unwrap();
        scene.store.get_mut(sid).write(VecId::POSITION)[4] = 3.1e12;
        let e = check_plausible(&mut scene).unwrap_err().to_string();
        assert!(e.contains("diverged at step 3 (t = 0): position of DOF 1 of state 'dofs' is 3.100e12, beyond 3.000e12"), "{e}");
        scene.store.get_mut(sid).write(VecId::POSITION)[4] = f64::NAN;
        let e = check_plausible(&mut scene).unwrap_err().to_string();
        assert!(e.contains("diverged at step 4 (t = 0): position of DOF 1 of state 'dofs' is NaN"), "{e}");
    }
}
