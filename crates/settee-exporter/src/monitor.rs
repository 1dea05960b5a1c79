//! `Monitor`: writes the positions, velocities or forces of chosen DOFs of the context
//! mechanical state as gnuplot columns, one line per step (SOFA's SofaValidation component).
//!
//! With `ExportPositions`, `<fileName>_x.txt` gets (likewise `_v.txt` for `ExportVelocities`
//! and `_f.txt` for `ExportForces`):
//!
//! ```text
//! # Gnuplot File : positions of 2 particle(s) Monitored
//! # 1st Column : time, others : particle(s) number 0 5
//! 0.01→0 -0.000981 0→1 -0.000981 0→
//! ```
//!
//! a line at the end of every step: the time reached, then each monitored DOF's coordinates,
//! each followed by a tab (→ above), numbers as C++ streams print them. `fileName` defaults to
//! `./<name>`. The drawing Data (`showPositions`, colours, trajectories, …) are accepted and
//! ignored.

use std::io::Write;

use settee_core::{component, Component, ComponentId, InitCtx, Scene, SimError, SimResult, VecId};

use crate::common::{context_state, push_g6, Output};

/// One exported quantity: its vector, its file.
#[derive(Clone)]
struct Channel {
    vec: VecId,
    out: Output,
}

/// Writes the positions, velocities or forces of chosen DOFs at every step as gnuplot columns (<fileName>_x.txt, _v.txt, _f.txt).
///
/// The Monitor component.
#[component(
    templates = ["Vec3d", "Vec6d", "Rigid3d"],
    template_rule = FromState,
    data = {
        /// Indices of the DOFs to monitor
        indices: Indices,
        /// Write the monitored positions to <fileName>_x.txt
        ExportPositions: Bool = "false",
        /// Write the monitored velocities to <fileName>_v.txt
        ExportVelocities: Bool = "false",
        /// Write the monitored forces to <fileName>_f.txt
        ExportForces: Bool = "false",
        /// Prefix of the files written (default: ./<name>)
        fileName: FileName,
        /// Draw the monitored positions (GUI only, ignored)
        showPositions: Bool = "false",
        /// Colour of the positions (GUI only, ignored)
        PositionsColor: Str,
        /// Draw the monitored velocities (GUI only, ignored)
        showVelocities: Bool = "false",
        /// Colour of the velocities (GUI only, ignored)
        VelocitiesColor: Str,
        /// Draw the monitored forces (GUI only, ignored)
        showForces: Bool = "false",
        /// Colour of the forces (GUI only, ignored)
        ForcesColor: Str,
        /// Smallest vector drawn (GUI only, ignored)
        showMinThreshold: Real = "0.01",
        /// Draw the trajectories (GUI only, ignored)
        showTrajectories: Bool = "false",
        /// Time between two trajectory points (GUI only, ignored)
        TrajectoriesPrecision: Real = "0.1",
        /// Colour of the trajectories (GUI only, ignored)
        TrajectoriesColor: Str,
        /// Scale of the arrows drawn (GUI only, ignored)
        sizeFactor: Real = "1",
    },
)]
#[derive(Clone, Default)]
pub struct Monitor {
    state: Option<ComponentId>,
    indices: Vec<usize>,
    /// (file name, quantity, vector) of each export asked for.
    wanted: Vec<(String, &'static str, VecId)>,
    channels: Vec<Channel>,
    /// The files written.
    pub files: Vec<std::path::PathBuf>,
}

impl Monitor {
    fn open(&mut self, scene: &Scene) -> SimResult {
        if !self.channels.is_empty() {
            return Ok(());
        }
        for (name, what, vec) in &self.wanted {
            let path = scene.output_file(name);
            let mut out = Output::create(&path)
                .map_err(|e| SimError::new(format!("cannot create {}: {e}", path.display())).hint("check that the directory is writable"))?;
            let mut head =
                format!("# Gnuplot File : {what} of {} particle(s) Monitored\n# 1st Column : time, others : particle(s) number ", self.indices.len());
            for i in &self.indices {
                head.push_str(&format!("{i} "));
            }
            head.push('\n');
            out.write_all(head.as_bytes()).map_err(|e| SimError::new(format!("cannot write {}: {e}", path.display())))?;
            self.channels.push(Channel { vec: *vec, out });
            self.files.push(path);
        }
        Ok(())
    }
}

impl Component for Monitor {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.state = context_state(cx.scene, cx.node());
        let Some(sid) = self.state.and_then(|s| cx.scene.state_of(s)) else {
            return Err(cx.error("Monitor found no mechanical state in its context").hint("put it in the node of the MechanicalObject to monitor"));
        };
        let n = cx.scene.store.get(sid).size;
        let d = cx.data();
        self.indices = d.get(Self::INDICES).to_vec();
        if let Some(i) = self.indices.iter().find(|&&i| i >= n) {
            return Err(cx
                .error(format!("index {i} is beyond the {n} DOFs of the monitored state"))
                .hint("indices must be smaller than the state's size"));
        }
        let prefix = match d.get(Self::FILE_NAME) {
            "" => format!("./{}", cx.entry().name),
            p => p.to_string(),
        };
        let wanted = [
            (d.get(Self::EXPORT_POSITIONS), "x", "positions", VecId::POSITION),
            (d.get(Self::EXPORT_VELOCITIES), "v", "velocities", VecId::VELOCITY),
            (d.get(Self::EXPORT_FORCES), "f", "forces", VecId::FORCE),
        ];
        self.wanted = wanted.into_iter().filter(|w| w.0).map(|(_, suffix, what, vec)| (format!("{prefix}_{suffix}.txt"), what, vec)).collect();
        Ok(())
    }

    /// The files are created when the simulation starts (not at init, so that `settee check`
    /// writes nothing and the output directory can still be chosen after loading).
    fn simulation_start(&mut self, scene: &mut Scene, _me: ComponentId) -> SimResult {
        self.open(scene)
    }

    fn animate_end(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        self.open(scene)?;
        let Some(sid) = self.state.and_then(|s| scene.state_of(s)) else { return Ok(()) };
        let time = scene.node(scene.entry(me).node).context.time;
        let st = scene.store.get(sid);
        for ch in &mut self.channels {
            let v = st.read(ch.vec);
            let k = st.elem_size(ch.vec.kind);
            // SOFA skips velocities and forces while their vector is empty.
            if v.is_empty() && ch.vec != VecId::POSITION {
                continue;
            }
            let mut line = settee_core::gformat::format_g6(time);
            line.push('\t');
            for &i in &self.indices {
                let Some(e) = v.get(i * k..(i + 1) * k) else {
                    return Err(SimError::new(format!("monitored DOF {i} is beyond the {} DOFs of state '{}'", v.len() / k.max(1), st.name)));
                };
                push_g6(&mut line, e);
                line.push('\t');
            }
            line.push('\n');
            ch.out
                .write_all(line.as_bytes())
                .and_then(|_| ch.out.flush())
                .map_err(|e| SimError::new(format!("cannot write the monitor file: {e}")))?;
        }
        Ok(())
    }

    /// A restored monitor writes on into the files of the one it replaces.
    fn resume_from(&mut self, replaced: &mut dyn Component) {
        if let Some(r) = replaced.as_any_mut().downcast_mut::<Monitor>() {
            for (ch, old) in self.channels.iter_mut().zip(&mut r.channels) {
                ch.out.take_over(&mut old.out);
            }
        }
    }
    fn simulation_end(&mut self, _scene: &mut Scene, _me: ComponentId) -> SimResult {
        for ch in &mut self.channels {
            ch.out.flush().map_err(|e| SimError::new(format!("cannot write the monitor file: {e}")))?;
        }
        Ok(())
    }
}
