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

use settee_core::data::{decl, DataKind::*};
use settee_core::{
    component_any, Component, ComponentClass, ComponentId, CreateArgs, DataDecl, InitCtx, Roles, Scene, SimError, SimResult, TemplateRule, VecId,
};

use crate::common::{context_state, push_g6, Output};

static DATA: &[DataDecl] = &[
    decl("indices", Indices, "", "Indices of the DOFs to monitor"),
    decl("ExportPositions", Bool, "false", "Write the monitored positions to <fileName>_x.txt"),
    decl("ExportVelocities", Bool, "false", "Write the monitored velocities to <fileName>_v.txt"),
    decl("ExportForces", Bool, "false", "Write the monitored forces to <fileName>_f.txt"),
    decl("fileName", FileName, "", "Prefix of the files written (default: ./<name>)"),
    decl("showPositions", Bool, "false", "Draw the monitored positions (GUI only, ignored)"),
    decl("PositionsColor", Str, "", "Colour of the positions (GUI only, ignored)"),
    decl("showVelocities", Bool, "false", "Draw the monitored velocities (GUI only, ignored)"),
    decl("VelocitiesColor", Str, "", "Colour of the velocities (GUI only, ignored)"),
    decl("showForces", Bool, "false", "Draw the monitored forces (GUI only, ignored)"),
    decl("ForcesColor", Str, "", "Colour of the forces (GUI only, ignored)"),
    decl("showMinThreshold", Real, "0.01", "Smallest vector drawn (GUI only, ignored)"),
    decl("showTrajectories", Bool, "false", "Draw the trajectories (GUI only, ignored)"),
    decl("TrajectoriesPrecision", Real, "0.1", "Time between two trajectory points (GUI only, ignored)"),
    decl("TrajectoriesColor", Str, "", "Colour of the trajectories (GUI only, ignored)"),
    decl("sizeFactor", Real, "1", "Scale of the arrows drawn (GUI only, ignored)"),
];

settee_core::data_refs! {
    static READS;
    INDICES: Indices = "indices";
    EXPORT_X: Bool = "ExportPositions";
    EXPORT_V: Bool = "ExportVelocities";
    EXPORT_F: Bool = "ExportForces";
    FILE_NAME: Text = "fileName";
}

pub static CLASS: ComponentClass = ComponentClass {
    name: "Monitor",
    description: "Writes the positions, velocities or forces of chosen DOFs at every step as gnuplot columns (<fileName>_x.txt, _v.txt, _f.txt).",
    roles: Roles::NONE,
    templates: &["Vec3d", "Vec6d", "Rigid3d"],
    default_template: "Vec3d",
    template_rule: TemplateRule::FromState,
    data: &[DATA],
    links: &[],
    create,
    preparse: None,
    no_src_link: &[],
    reads: READS,
};

fn create(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(Monitor::default())
}

/// One exported quantity: its vector, its file.
struct Channel {
    vec: VecId,
    out: Output,
}

/// The Monitor component.
#[derive(Default)]
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
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.state = context_state(cx.scene, cx.node());
        let Some(sid) = self.state.and_then(|s| cx.scene.state_of(s)) else {
            return Err(cx.error("Monitor found no mechanical state in its context").hint("put it in the node of the MechanicalObject to monitor"));
        };
        let n = cx.scene.store.get(sid).size;
        let d = cx.data();
        self.indices = d.get(INDICES).to_vec();
        if let Some(i) = self.indices.iter().find(|&&i| i >= n) {
            return Err(cx
                .error(format!("index {i} is beyond the {n} DOFs of the monitored state"))
                .hint("indices must be smaller than the state's size"));
        }
        let prefix = match d.get(FILE_NAME) {
            "" => format!("./{}", cx.entry().name),
            p => p.to_string(),
        };
        let wanted = [
            (d.get(EXPORT_X), "x", "positions", VecId::POSITION),
            (d.get(EXPORT_V), "v", "velocities", VecId::VELOCITY),
            (d.get(EXPORT_F), "f", "forces", VecId::FORCE),
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

    fn simulation_end(&mut self, _scene: &mut Scene, _me: ComponentId) -> SimResult {
        for ch in &mut self.channels {
            ch.out.flush().map_err(|e| SimError::new(format!("cannot write the monitor file: {e}")))?;
        }
        Ok(())
    }
}
