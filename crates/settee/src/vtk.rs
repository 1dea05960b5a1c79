//! `settee run --vtk DIR`: every mechanical state of the scene written as a ParaView time
//! series — one `.vtu` per state and exported step, and one `<scene>.pvd` collection listing
//! them with their times (each state a part), which ParaView opens as one animated dataset.

use std::path::{Path, PathBuf};

use settee_core::role;
use settee_core::{ComponentId, Scene, VecId};
use settee_exporter::vtk::{pvd_text, vtu_text, CellSelection, Grid, Precision, SeriesEntry};

use crate::run::RunObserver;

/// One exported state: its file label, the state component, the topology giving its cells.
struct Part {
    label: String,
    state: ComponentId,
    topology: Option<ComponentId>,
}

/// Writes the series: at t = 0, every `every` steps, and after the last step.
pub struct VtkSeries {
    dir: PathBuf,
    pvd: PathBuf,
    every: usize,
    steps: usize,
    parts: Vec<Part>,
    entries: Vec<SeriesEntry>,
}

fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect()
}

impl VtkSeries {
    /// Chooses the states (every mechanical state, in scene order) and creates `dir`.
    pub fn create(scene: &Scene, scene_file: &Path, dir: &Path, every: usize, steps: usize) -> Result<VtkSeries, String> {
        if every == 0 {
            return Err("--vtk-every must be at least 1".into());
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let mut parts: Vec<Part> = Vec::new();
        for n in scene.preorder(Scene::ROOT) {
            for &c in &scene.node(n).objects {
                if !scene.entry(c).plays(role::MECHANICAL_STATE) || scene.state_of(c).is_none() {
                    continue;
                }
                // The node path below the root, then the state's name: `Beam_beamMO`.
                let path = scene.node_path(n);
                let mut label: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).skip(1).collect();
                label.push(&scene.entry(c).name);
                let mut label = sanitize(&label.join("_"));
                if parts.iter().any(|p| p.label == label) {
                    label = format!("{label}_{}", parts.len());
                }
                parts.push(Part { label, state: c, topology: scene.context_topology(n) });
            }
        }
        let stem = scene_file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "scene".into());
        Ok(VtkSeries { dir: dir.to_path_buf(), pvd: dir.join(format!("{stem}.pvd")), every, steps, parts, entries: Vec::new() })
    }

    /// The grid of a state: its positions, and its topology's cells of the highest dimension
    /// when they fit its points (else one vertex per point).
    fn grid(scene: &Scene, part: &Part) -> Grid {
        let st = scene.store.get(scene.state_of(part.state).expect("checked at creation"));
        let mut g = Grid::new(settee_core::topology::points_from_flat(st.read(VecId::POSITION), st.layout.coord_size()));
        if let Some(mesh) = part.topology.and_then(|t| scene.mesh_of(t)) {
            if mesh.nb_points() == 0 || mesh.nb_points() == g.points.len() {
                g.add_mesh(mesh, CellSelection::highest(mesh));
            }
        }
        if g.nb_cells() == 0 || !g.cells_in_range() {
            g = Grid::new(std::mem::take(&mut g.points));
            g.add_vertices();
        }
        g
    }

    fn export(&mut self, scene: &Scene, step: usize) -> Result<(), String> {
        let time = scene.root().context.time;
        for (i, part) in self.parts.iter().enumerate() {
            // A state removed since the series started (a contact's) has no more files.
            if !scene.contains(part.state) || scene.state_of(part.state).is_none() {
                continue;
            }
            let name = format!("{}_{step:06}.vtu", part.label);
            let path = self.dir.join(&name);
            std::fs::write(&path, vtu_text(&Self::grid(scene, part), Precision::Full))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            self.entries.push(SeriesEntry { time, part: i, file: name });
        }
        Ok(())
    }
}

impl RunObserver for VtkSeries {
    fn before_step(&mut self, scene: &mut Scene, k: usize) -> Result<(), String> {
        if k == 0 {
            self.export(scene, 0)?;
        }
        Ok(())
    }

    fn after_step(&mut self, scene: &mut Scene, k: usize, _t_start: f64) -> Result<(), String> {
        if (k + 1).is_multiple_of(self.every) || k + 1 == self.steps {
            self.export(scene, k + 1)?;
        }
        Ok(())
    }

    fn stopped_early(&mut self, scene: &mut Scene, done: usize) -> Result<(), String> {
        // The series ends where the run stopped, as it ends with the last step of a whole run.
        let t = scene.root().context.time;
        if done > 0 && self.entries.last().is_none_or(|e| e.time != t) {
            self.export(scene, done)?;
        }
        Ok(())
    }

    fn finish(&mut self, scene: &mut Scene) -> Result<Vec<PathBuf>, String> {
        if self.entries.is_empty() {
            self.export(scene, 0)?; // a run of 0 steps: the initial state
        }
        std::fs::write(&self.pvd, pvd_text(&self.entries)).map_err(|e| format!("cannot write {}: {e}", self.pvd.display()))?;
        Ok(vec![self.pvd.clone()])
    }
}
