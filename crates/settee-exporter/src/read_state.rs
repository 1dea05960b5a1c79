//! `ReadState`: replays a trajectory recorded by `WriteState` (SOFA's state text format) into
//! the context mechanical state (SOFA's Playback component).
//!
//! At initialisation and at the start of every step, the records whose time (plus `shift`) has
//! been reached are consumed and the last of them is applied: its `X=` line becomes the
//! positions (scaled by `scalePos`, rotated by `rotation` — Euler angles in degrees — then
//! translated by `translation`), its `V=` line the velocities; projective constraints and
//! mappings then carry them down, as in SOFA. A record counts as reached when its time is within
//! a tenth of a step of the current time: the times in the file are printed with 6 digits and
//! the scene's time is a sum of steps, so an exact comparison (SOFA's) would now and then apply
//! a record one step late. With `loop`, the file starts over when it is exhausted, its times
//! shifted by the last time read. `interval` is accepted and, as in SOFA, unused.

use settee_core::types::{quat_from_euler, quat_mul, quat_rotate, Layout};
use settee_core::{component, data_group, mechanics, Component, ComponentId, InitCtx, MechScope, Scene, SimError, SimResult, VecId};

use crate::common::{context_state, read_text};

/// One record of a state file: its time and its lines (`X= …`, `V= …`).
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub time: f64,
    /// (key, numbers) of each line: `("X", [...])`.
    pub lines: Vec<(String, Vec<f64>)>,
}

/// Parses a state file. Lines before the first `T=` belong to a record at t = 0.
pub fn parse_records(text: &str) -> Result<Vec<Record>, String> {
    let mut out: Vec<Record> = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let mut words = line.split_whitespace();
        let Some(key) = words.next() else { continue };
        let Some(key) = key.strip_suffix('=') else {
            return Err(format!("line {}: expected `KEY= values` (T=, X=, V=…), found '{}'", no + 1, line.trim()));
        };
        let nums: Result<Vec<f64>, _> = words.map(|w| w.parse::<f64>()).collect();
        let nums = nums.map_err(|e| format!("line {}: {e} in '{}'", no + 1, line.trim()))?;
        if key == "T" {
            let &[t] = nums.as_slice() else { return Err(format!("line {}: `T=` takes one time", no + 1)) };
            out.push(Record { time: t, lines: Vec::new() });
        } else {
            if out.is_empty() {
                out.push(Record { time: 0.0, lines: Vec::new() });
            }
            out.last_mut().expect("pushed").lines.push((key.to_string(), nums));
        }
    }
    Ok(out)
}

/// The Data of SOFA's `ReadState`, which `CompareState` inherits.
#[data_group(data = {
    /// State file to read (gzip-compressed when it ends in .gz), as WriteState writes it
    filename: FileName,
    /// Time between inputs (accepted, unused, as in SOFA)
    interval: Real = "0",
    /// Added to the scene's time to find the record to read
    shift: Real = "0",
    /// Start the file over when its end is reached
    "loop" as LOOP: Bool = "false",
    /// Scale applied to the positions read
    scalePos: Real = "1",
    /// Rotation (Euler angles, degrees) applied to the positions read
    rotation: Fixed(3) = "0 0 0",
    /// Translation applied to the positions read
    translation: Fixed(3) = "0 0 0",
})]
pub struct ReadStateData;

/// Replays a state file written by WriteState into the context mechanical state.
///
/// The ReadState component.
#[component(
    module = "Sofa.Component.Playback",
    inherit = [ReadStateData],
)]
#[derive(Clone, Default)]
pub struct ReadState {
    state: Option<ComponentId>,
    records: Vec<Record>,
    next: usize,
    loop_time: f64,
    last_read: f64,
}

impl ReadState {
    /// The component whose state is read (the context mechanical state), once initialised.
    pub(crate) fn state(&self) -> Option<ComponentId> {
        self.state
    }

    /// The records of the file.
    pub(crate) fn records(&self) -> &[Record] {
        &self.records
    }

    /// Consumes the records reached at `time`; the index of the last one.
    pub(crate) fn read_next(&mut self, time: f64, tol: f64, looping: bool) -> Option<usize> {
        let mut valid = None;
        let mut wraps = 0;
        loop {
            if self.next == self.records.len() {
                // Start over only once the last record's time is passed, so that it is shown.
                if !looping || self.records.is_empty() || wraps > 0 || time <= self.last_read + tol {
                    break;
                }
                wraps += 1;
                self.next = 0;
                self.loop_time = self.last_read;
            }
            let t = self.records[self.next].time + self.loop_time;
            if t > time + tol {
                break;
            }
            self.last_read = t;
            valid = Some(self.next);
            self.next += 1;
        }
        valid
    }

    fn process(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let Some(sid) = self.state.and_then(|s| scene.state_of(s)) else { return Ok(()) };
        let node = scene.entry(me).node;
        let ctx = scene.node(node).context;
        let d = &scene.entry(me).data;
        let (shift, looping, scale, rot, tr) = (
            d.get(ReadStateData::SHIFT),
            d.get(ReadStateData::LOOP),
            d.get(ReadStateData::SCALE_POS),
            d.get(ReadStateData::ROTATION),
            d.get(ReadStateData::TRANSLATION),
        );
        let Some(r) = self.read_next(ctx.time + shift, 0.1 * ctx.dt, looping) else { return Ok(()) };
        let rec = &self.records[r];
        let st = scene.store.get_mut(sid);
        let layout = st.layout;
        let mut updated = false;
        for (key, nums) in &rec.lines {
            let id = match key.as_str() {
                "X" => VecId::POSITION,
                "V" => VecId::VELOCITY,
                _ => continue,
            };
            let want = st.size * st.elem_size(id.kind);
            if nums.len() != want {
                return Err(SimError::new(format!(
                    "the {key}= record at T= {} has {} values; state '{}' needs {want} ({} DOFs)",
                    rec.time,
                    nums.len(),
                    st.name,
                    st.size
                ))
                .hint("replay a file written for this same state (same number of DOFs and template)"));
            }
            let mut v = nums.clone();
            if id == VecId::POSITION {
                transform(&mut v, layout, scale, rot, tr);
            }
            st.set_vec(id, v);
            updated = true;
        }
        if updated {
            let scope = MechScope::build(scene, node);
            mechanics::project_position_velocity(scene, &scope, VecId::POSITION, VecId::VELOCITY)?;
            mechanics::propagate_position_velocity(scene, &scope, VecId::POSITION, VecId::VELOCITY)?;
        }
        Ok(())
    }
}

/// SOFA's applyScale, applyRotation (Euler degrees), applyTranslation, in that order.
fn transform(x: &mut [f64], layout: Layout, scale: f64, rot_deg: [f64; 3], tr: [f64; 3]) {
    let (cs, k) = (layout.coord_size(), layout.spatial_size().min(3));
    let q = (rot_deg != [0.0; 3]).then(|| {
        let r = std::f64::consts::PI / 180.0;
        quat_from_euler([rot_deg[0] * r, rot_deg[1] * r, rot_deg[2] * r])
    });
    for e in x.chunks_exact_mut(cs) {
        for c in e[..k].iter_mut() {
            *c *= scale;
        }
        if let Some(q) = q {
            let mut p = [0.0; 3];
            p[..k].copy_from_slice(&e[..k]);
            let r = quat_rotate(q, p);
            e[..k].copy_from_slice(&r[..k]);
            if layout == Layout::Rigid3 {
                let o = quat_mul(q, [e[3], e[4], e[5], e[6]]);
                e[3..7].copy_from_slice(&o);
            }
        }
        for (c, t) in e[..k].iter_mut().zip(tr) {
            *c += t;
        }
    }
}

impl Component for ReadState {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.state = context_state(cx.scene, cx.node());
        if self.state.is_none() {
            return Err(cx.error("ReadState found no mechanical state in its context").hint("put it in the node of the MechanicalObject to drive"));
        }
        let name = cx.data().get(ReadStateData::FILENAME).to_string();
        if name.is_empty() {
            return Err(cx.error("ReadState has no filename").hint("set filename to a file written by WriteState"));
        }
        // An input file: beside the scene or in the data path, else where WriteState would
        // have written it (the output directory).
        let path = cx.scene.resolve_file(cx.id, &name).unwrap_or_else(|| cx.scene.output_file(&name));
        let text = read_text(&path).map_err(|e| {
            cx.error(format!("cannot read {}: {e}", path.display())).hint("the file is written by a WriteState component (or settee run --dump)")
        })?;
        self.records = parse_records(&text).map_err(|e| cx.error(format!("{}: {e}", path.display())))?;
        Ok(())
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let me = cx.id;
        self.process(cx.scene, me)
    }

    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        self.process(scene, me)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_group_lines_under_their_time() {
        let r = parse_records("T= 0\n  X= 0 1 2\nT= 0.01\n  X= 3 4 5\n  V= 1 1 1\n").unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].time, 0.01);
        assert_eq!(r[1].lines, vec![("X".to_string(), vec![3.0, 4.0, 5.0]), ("V".to_string(), vec![1.0, 1.0, 1.0])]);
        assert!(parse_records("T= 0\n  X= 1 a 2\n").unwrap_err().contains("line 2"));
    }

    #[test]
    fn the_last_reached_record_is_read_once_and_loops_restart_shifted() {
        let mut rs = ReadState { records: parse_records("T= 0\nX= 0\nT= 1\nX= 1\nT= 2\nX= 2\n").unwrap(), ..ReadState::default() };
        assert_eq!(rs.read_next(0.0, 0.01, false), Some(0));
        assert_eq!(rs.read_next(0.5, 0.01, false), None);
        assert_eq!(rs.read_next(2.5, 0.01, false), Some(2));
        assert_eq!(rs.read_next(3.0, 0.01, false), None);
        let mut rs = ReadState { records: parse_records("T= 0\nX= 0\nT= 1\nX= 1\n").unwrap(), ..ReadState::default() };
        let seen: Vec<Option<usize>> = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0].iter().map(|&t| rs.read_next(t, 0.01, true)).collect();
        // Past the end the file starts over shifted by its last time: record 0 at 1 (shown once
        // t = 1 is passed), record 1 at 2, record 0 again at 2.
        assert_eq!(seen, [Some(0), None, Some(1), Some(0), Some(1), Some(0), Some(1)]);
        // A time a rounding error short of a record's still reaches it.
        let mut rs = ReadState { records: parse_records("T= 0.1\nX= 0\n").unwrap(), ..ReadState::default() };
        assert_eq!(rs.read_next(0.09999999999999999, 0.001, false), Some(0));
    }

    #[test]
    fn positions_are_scaled_rotated_then_translated() {
        let mut x = vec![1.0, 0.0, 0.0];
        transform(&mut x, Layout::Vec3, 2.0, [0.0, 0.0, 90.0], [0.0, 0.0, 1.0]);
        assert!((x[0]).abs() < 1e-12 && (x[1] - 2.0).abs() < 1e-12 && (x[2] - 1.0).abs() < 1e-12, "{x:?}");
    }
}
