//! Which mechanical states SOFA's regression test dumps, and writing them in its format.

use std::path::{Path, PathBuf};

use settee_core::role;
use settee_core::{ComponentId, NodeId, Scene, StateId, VecId};
use settee_regress::list::ExportSchedule;
use settee_regress::reference::StateDumpWriter;

/// A state selected for dumping or comparison.
#[derive(Clone, Debug)]
pub struct SelectedState {
    pub index: usize,
    pub name: String,
    pub node: NodeId,
    pub component: ComponentId,
    pub state: StateId,
}

/// SOFA's selection (`WriteStateCreator`/`CompareStateCreator`): in pre-order, the node's own
/// mechanical state, if the node or an ancestor has an ODE solver and, unless `mapped`, neither
/// the node nor an ancestor has a mapping.
pub fn select_states(scene: &Scene, mapped: bool) -> Vec<SelectedState> {
    let mut out = Vec::new();
    for n in scene.preorder(Scene::ROOT) {
        let Some(ms) = scene.slot(n, role::MECHANICAL_STATE) else { continue };
        if scene.find_up(n, role::ODE_SOLVER).is_none() {
            continue;
        }
        if !mapped && scene.find_up(n, role::MAPPING).is_some() {
            continue;
        }
        let Some(state) = scene.state_of(ms) else { continue };
        out.push(SelectedState { index: out.len(), name: scene.entry(ms).name.clone(), node: n, component: ms, state });
    }
    out
}

/// Node weights of SOFA's scene error: for each selected state, the number of active nodes whose
/// nearest selected state (in the node or its ancestors) is that one.
pub fn node_weights(scene: &Scene, selected: &[SelectedState]) -> Vec<usize> {
    let mut w = vec![0; selected.len()];
    for n in scene.preorder(Scene::ROOT) {
        let mut cur = Some(n);
        while let Some(c) = cur {
            if let Some(i) = selected.iter().position(|s| s.node == c) {
                w[i] += 1;
                break;
            }
            cur = scene.node(c).parent();
        }
    }
    w
}

/// The dump file of a state: `<dir>/<scene file name>.reference_<i>_<name>_mstate.txt.gz`.
pub fn dump_path(dir: &Path, scene_file: &Path, s: &SelectedState) -> PathBuf {
    let base = dir.join(format!("{}.reference", scene_file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()));
    settee_regress::reference::state_reference_path(&base, s.index, &s.name)
}

/// `--dump-every K`: a whole number of steps, at least 1.
pub fn parse_period(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("the dump period must be at least 1 step (0 would never advance)".into()),
        Ok(k) => Ok(k),
        Err(_) => Err(format!("'{text}' is not a number of steps")),
    }
}

/// Writes the selected states at the start of steps, on SOFA's export schedule.
pub struct Dumper {
    writers: Vec<(SelectedState, StateDumpWriter)>,
    schedule: ExportSchedule,
    /// Time of the last record written, so that the final state is not written twice.
    last_written: Option<f64>,
}

impl Dumper {
    /// `every`: `None` = SOFA's last-step-only references ({0, dt·(steps−1)}); `Some(k)`: every
    /// k steps from T = 0 (`Some(0)` is refused: it would never advance).
    pub fn create(scene: &Scene, scene_file: &Path, dir: &Path, mapped: bool, steps: usize, every: Option<usize>) -> std::io::Result<Dumper> {
        if every == Some(0) {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "--dump-every 0: the dump period must be at least 1 step"));
        }
        std::fs::create_dir_all(dir)?;
        let dt = scene.root().context.dt;
        let schedule = match every {
            None => ExportSchedule::new(vec![0.0, dt * (steps as f64 - 1.0)], None),
            Some(k) => ExportSchedule::new(vec![0.0], Some(dt * k as f64)),
        };
        let mut writers = Vec::new();
        for s in select_states(scene, mapped) {
            let path = dump_path(dir, scene_file, &s);
            let w = StateDumpWriter::create(&path).map_err(|e| std::io::Error::other(e.to_string()))?;
            writers.push((s, w));
        }
        Ok(Dumper { writers, schedule, last_written: None })
    }

    /// Called at the start of every step.
    pub fn at_step_start(&mut self, scene: &Scene) -> std::io::Result<()> {
        let t = scene.root().context.time;
        let dt = scene.root().context.dt;
        if !self.schedule.should_write(t, dt) {
            return Ok(());
        }
        self.write_now(scene)
    }

    /// Writes the selected states at the scene's current time, whatever the schedule says
    /// (the final state, after the last step); nothing when that time was just written.
    pub fn write_now(&mut self, scene: &Scene) -> std::io::Result<()> {
        let t = scene.root().context.time;
        if self.last_written == Some(t) {
            return Ok(());
        }
        self.last_written = Some(t);
        for (s, w) in &mut self.writers {
            let st = scene.store.get(s.state);
            w.write_record(t, st.read(VecId::POSITION), Some(st.read(VecId::VELOCITY))).map_err(|e| std::io::Error::other(e.to_string()))?;
        }
        Ok(())
    }

    pub fn paths(&self, dir: &Path, scene_file: &Path) -> Vec<PathBuf> {
        self.writers.iter().map(|(s, _)| dump_path(dir, scene_file, s)).collect()
    }

    pub fn finish(self) -> std::io::Result<()> {
        for (_, w) in self.writers {
            w.finish().map_err(|e| std::io::Error::other(e.to_string()))?;
        }
        Ok(())
    }
}

/// The dumper as a run observer: writes at each step start, closes the files at the end.
pub struct DumpObserver {
    dumper: Option<Dumper>,
    paths: Vec<PathBuf>,
    /// Also write the state after the last step (T = steps·dt).
    final_state: bool,
}

impl DumpObserver {
    pub fn create(scene: &Scene, scene_file: &Path, dir: &Path, mapped: bool, steps: usize, every: Option<usize>) -> std::io::Result<DumpObserver> {
        let dumper = Dumper::create(scene, scene_file, dir, mapped, steps, every)?;
        let paths = dumper.paths(dir, scene_file);
        Ok(DumpObserver { dumper: Some(dumper), paths, final_state: false })
    }

    /// Also writes the final state, after the last step (`--dump-final`).
    pub fn with_final_state(mut self, yes: bool) -> DumpObserver {
        self.final_state = yes;
        self
    }
}

impl crate::run::RunObserver for DumpObserver {
    fn before_step(&mut self, scene: &mut Scene, _k: usize) -> Result<(), String> {
        match self.dumper.as_mut() {
            Some(d) => d.at_step_start(scene).map_err(|e| format!("writing dumps: {e}")),
            None => Ok(()),
        }
    }

    fn stopped_early(&mut self, scene: &mut Scene, _done: usize) -> Result<(), String> {
        // The schedule's last record (the last step's start) will never come: the state where
        // the run stopped takes its place.
        match self.dumper.as_mut() {
            Some(d) => d.write_now(scene).map_err(|e| format!("writing dumps: {e}")),
            None => Ok(()),
        }
    }

    fn finish(&mut self, scene: &mut Scene) -> Result<Vec<PathBuf>, String> {
        if let Some(mut d) = self.dumper.take() {
            if self.final_state {
                d.write_now(scene).map_err(|e| format!("writing dumps: {e}"))?;
            }
            d.finish().map_err(|e| format!("writing dumps: {e}"))?;
        }
        Ok(std::mem::take(&mut self.paths))
    }
}
