//! `CompareState`: compares the context mechanical state, at the start of every step, with a
//! trajectory recorded by `WriteState` (SOFA's Playback component, a `ReadState` that compares
//! instead of applying).
//!
//! As in SOFA it is a ReadState: at the end of initialisation it *applies* the file's first
//! record (ReadState's `bwdInit`). Then at each step start the records due at `time + shift +
//! dt/1000` are consumed and the last one's `X=` and `V=` lines are compared with the positions
//! and velocities, printed with 6 significant digits as SOFA's `compareVec` prints them: the
//! mean absolute difference of a line is added to the total error, and divided by the number of
//! DOFs to the error per DOF. With `printLog` each comparison is reported.

use settee_core::{component, Component, ComponentId, Diagnostic, InitCtx, Scene, SimResult, VecId};
use settee_regress::metric::compare_line;

use crate::read_state::{ReadState, ReadStateData};

/// Compares the context mechanical state with a recorded trajectory.
#[component(
    module = "Sofa.Component.Playback",
    inherit = [ReadStateData],
)]
#[derive(Clone, Default)]
pub struct CompareState {
    read: ReadState,
    total_x: f64,
    total_v: f64,
    dof_x: f64,
    dof_v: f64,
}

impl CompareState {
    /// Sum over the comparisons of the mean absolute differences (positions and velocities),
    /// SOFA's `getTotalError`.
    pub fn total_error(&self) -> f64 {
        self.total_x + self.total_v
    }

    /// The same, each comparison divided by the number of DOFs (SOFA's `getErrorByDof`).
    pub fn error_by_dof(&self) -> f64 {
        self.dof_x + self.dof_v
    }

    fn compare(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let Some(sid) = self.read.state().and_then(|s| scene.state_of(s)) else { return Ok(()) };
        let node = scene.entry(me).node;
        let ctx = scene.node(node).context;
        let d = &scene.entry(me).data;
        let (shift, looping) = (d.get(ReadStateData::SHIFT), d.get(ReadStateData::LOOP));
        let print = matches!(d.field("printLog").map(|f| &f.value), Some(settee_core::Value::Bool(true)));
        let Some(r) = self.read.read_next(ctx.time + shift + 0.001 * ctx.dt, 0.0, looping) else { return Ok(()) };
        let st = scene.store.get(sid);
        let n = st.size as f64;
        let mut report = Vec::new();
        for (key, reference) in &self.read.records()[r].lines {
            let (id, total, dof) = match key.as_str() {
                "X" => (VecId::POSITION, &mut self.total_x, &mut self.dof_x),
                "V" => (VecId::VELOCITY, &mut self.total_v, &mut self.dof_v),
                _ => continue,
            };
            let e = compare_line(reference, st.read(id)).error;
            *total += e;
            if n != 0.0 {
                *dof += e / n;
            }
            report.push(format!("{key}: {e:e}"));
        }
        if print {
            let label = scene.entry(me).label();
            let msg = format!("t = {}: {}; totalError_X = {}, totalError_V = {}", ctx.time, report.join(", "), self.total_x, self.total_v);
            scene.report(Diagnostic::info(msg).subject(label));
        }
        Ok(())
    }
}

impl Component for CompareState {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.total_x = 0.0;
        self.total_v = 0.0;
        self.dof_x = 0.0;
        self.dof_v = 0.0;
        self.read.init(cx)
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.read.bwd_init(cx)
    }

    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        self.compare(scene, me)
    }
}
