//! `WriteState`: records the context mechanical state in SOFA's state text format, at chosen
//! times or periodically (SOFA's Playback component).
//!
//! The file holds one record per export, at the start of a step (before it runs):
//!
//! ```text
//! T= 0.01
//!   X= x0 y0 z0 x1 y1 z1 …
//!   V= …
//! ```
//!
//! with `X0=` (rest positions), `V=` and `F=` lines when `writeX0`, `writeV`, `writeF` are set;
//! numbers as C++ streams print them (6 significant digits). A name ending in `.gz` is
//! gzip-compressed. `ReadState` reads the format back; SOFA's reference trajectories are in it.
//!
//! When: at each time of `time` (reached within a tenth of a step), then every `period` after
//! the last of them when `period` is given; with neither, every step from t = 0. `stopAt`
//! stops the recording once the kinetic energy, measured every `keperiod`, changes by less than
//! it. `DOFsX`/`DOFsV` are accepted and, as in SOFA, unused.

use settee_core::component::Mass;
use settee_core::role;
use settee_core::{component, Component, ComponentId, InitCtx, Scene, SimError, SimResult, VecId};

use crate::common::{context_state, push_g6, Output};
use std::io::Write;

/// Writes the context mechanical state to a file (SOFA's T= / X= / V= text format) at given times or periodically.
///
/// The WriteState component.
#[component(
    module = "Sofa.Component.Playback",
    data = {
        /// File to write (gzip-compressed when it ends in .gz)
        filename: FileName,
        /// Write the positions (X=)
        writeX: Bool = "true",
        /// Write the rest positions (X0=)
        writeX0: Bool = "false",
        /// Write the velocities (V=)
        writeV: Bool = "false",
        /// Write the forces (F=)
        writeF: Bool = "false",
        /// Times of the exports (default: t = 0); with period, the time of the first
        time: Reals,
        /// Time between exports after the last of `time` (default without `time`: every step)
        period: Real = "0",
        /// Position DOFs to write (accepted, unused, as in SOFA)
        DOFsX: Indices,
        /// Velocity DOFs to write (accepted, unused, as in SOFA)
        DOFsV: Indices,
        /// Stop writing once the kinetic energy changes by less than this between two measures (0:
        /// never)
        stopAt: Real = "0",
        /// Time between two measures of the kinetic energy (for stopAt)
        keperiod: Real = "0",
    },
)]
#[derive(Clone, Default)]
pub struct WriteState {
    state: Option<ComponentId>,
    out: Option<Output>,
    /// The file name given in the scene (none: nothing is written).
    filename: Option<String>,
    path: Option<std::path::PathBuf>,
    times: Vec<f64>,
    period: f64,
    periodic: bool,
    next_iteration: usize,
    last_time: f64,
    first_export: bool,
    energy_reached: bool,
    time_to_test_energy: f64,
    saved_energy: f64,
}

impl WriteState {
    /// The file being written (after init).
    pub fn path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }

    /// Creates the file, once, under the scene's output directory as it is when the simulation
    /// starts.
    fn open(&mut self, scene: &Scene) -> SimResult {
        let Some(name) = self.filename.as_deref().filter(|_| self.out.is_none() && self.path.is_none()) else { return Ok(()) };
        let path = scene.output_file(name);
        let out = Output::create(&path)
            .map_err(|e| SimError::new(format!("cannot create {}: {e}", path.display())).hint("check that the directory is writable"))?;
        self.out = Some(out);
        self.path = Some(path);
        Ok(())
    }

    /// Whether the state is written at `time` (SOFA's schedule, advanced by the call).
    fn due(&mut self, time: f64, dt: f64) -> bool {
        let eps = 0.1 * dt;
        if self.next_iteration < self.times.len() {
            self.last_time = self.times[self.next_iteration];
            if time > self.last_time || (time - self.last_time).abs() < eps {
                self.first_export = true;
                self.next_iteration += 1;
                return true;
            }
        } else if self.first_export && self.periodic {
            let next = self.last_time + self.period;
            if time > next || (time - next).abs() < eps {
                self.last_time += self.period;
                return true;
            }
        }
        false
    }

    fn kinetic_energy_settled(&mut self, scene: &Scene, me: ComponentId, time: f64, stop_at: f64, ke_period: f64) -> SimResult<bool> {
        if time <= self.time_to_test_energy {
            return Ok(false);
        }
        let node = scene.entry(me).node;
        let Some(mass) = scene.find_local(node, role::MASS) else {
            return Err(SimError::new("WriteState cannot measure the kinetic energy for stopAt: its node has no mass")
                .hint("add a mass to the node or remove stopAt"));
        };
        let m = scene.role::<dyn Mass>(mass).expect("mass role");
        let ke = m.kinetic_energy(scene.vec(m.state(), VecId::VELOCITY));
        if (ke - self.saved_energy).abs() < stop_at {
            return Ok(true);
        }
        self.saved_energy = ke;
        self.time_to_test_energy += ke_period;
        Ok(false)
    }
}

impl Component for WriteState {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let node = cx.node();
        self.state = context_state(cx.scene, node);
        if self.state.is_none() {
            return Err(cx.error("WriteState found no mechanical state in its context").hint("put it in the node of the MechanicalObject to record"));
        }
        let dt = cx.params().dt;
        let d = cx.data();
        let (time_given, period_given) = (d.is_given(Self::TIME), d.is_given(Self::PERIOD));
        let mut times = d.get(Self::TIME).to_vec();
        self.period = d.get(Self::PERIOD);
        self.time_to_test_energy = d.get(Self::KEPERIOD);
        let filename = d.get(Self::FILENAME).to_string();
        self.periodic = false;
        if period_given {
            self.periodic = true;
            if times.is_empty() {
                times.push(0.0);
            }
            if times.len() > 1 {
                cx.warn(format!("with a period, only the first export time counts: {}", times[0]));
                times.truncate(1);
            }
            if self.period < dt {
                cx.warn(format!("period ({}) is smaller than the time step ({dt})", self.period));
            }
        } else if !time_given {
            self.period = dt;
            self.periodic = true;
        }
        if times.is_empty() {
            times.push(0.0);
        }
        for (i, t) in times.iter().enumerate() {
            if *t < 0.0 || (i > 0 && *t == 0.0) {
                return Err(cx.error(format!("export time {t} is not positive")).hint("export times must be positive (the first one may be 0)"));
            }
        }
        cx.data_mut().put(Self::TIME, times.clone());
        self.times = times;
        if filename.is_empty() {
            cx.warn("WriteState has no filename: nothing will be written");
            return Ok(());
        }
        self.filename = Some(filename);
        Ok(())
    }

    /// The file is created when the simulation starts (not at init, so that `settee check`
    /// writes nothing and the output directory can still be chosen after loading).
    fn simulation_start(&mut self, scene: &mut Scene, _me: ComponentId) -> SimResult {
        self.open(scene)
    }

    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        self.open(scene)?;
        let (Some(state), true) = (self.state.and_then(|s| scene.state_of(s)), self.out.is_some()) else { return Ok(()) };
        if self.energy_reached {
            return Ok(());
        }
        let node = scene.entry(me).node;
        let (time, dt) = (scene.node(node).context.time, scene.node(node).context.dt);
        let d = &scene.entry(me).data;
        let (stop_at, ke_period) = (d.get(Self::STOP_AT), d.get(Self::KEPERIOD));
        if stop_at > 0.0 && self.kinetic_energy_settled(scene, me, time, stop_at, ke_period)? {
            self.energy_reached = true;
            return Ok(());
        }
        if !self.due(time, dt) {
            return Ok(());
        }
        let d = &scene.entry(me).data;
        let st = scene.store.get(state);
        let mut rec = String::from("T= ");
        rec.push_str(&settee_core::gformat::format_g6(time));
        rec.push('\n');
        for (flag, label, id) in [
            (d.get(Self::WRITE_X), "X", VecId::POSITION),
            (d.get(Self::WRITE_X0), "X0", VecId::REST_POSITION),
            (d.get(Self::WRITE_V), "V", VecId::VELOCITY),
            (d.get(Self::WRITE_F), "F", VecId::FORCE),
        ] {
            if flag {
                rec.push_str("  ");
                rec.push_str(label);
                rec.push_str("= ");
                push_g6(&mut rec, st.read(id));
                rec.push('\n');
            }
        }
        let out = self.out.as_mut().expect("checked above");
        out.write_all(rec.as_bytes())
            .and_then(|_| out.flush())
            .map_err(|e| SimError::new(format!("cannot write the state record at t = {time}: {e}")))
    }

    /// A restored writer writes on into the file of the one it replaces.
    fn resume_from(&mut self, replaced: &mut dyn Component) {
        if let Some(r) = replaced.as_any_mut().downcast_mut::<WriteState>() {
            self.out = r.out.take();
        }
    }
    fn simulation_end(&mut self, _scene: &mut Scene, _me: ComponentId) -> SimResult {
        if let Some(out) = self.out.take() {
            out.finish().map_err(|e| SimError::new(format!("cannot finish the state file: {e}")))?;
        }
        Ok(())
    }
}

impl Drop for WriteState {
    fn drop(&mut self) {
        if let Some(out) = self.out.take() {
            let _ = out.finish();
        }
    }
}
