//! Topology records in SOFA's `WriteTopology` / `CompareTopology` format (scene-format spec §5.8):
//! `settee run --dump-topology DIR` writes them, `settee regress` compares them for the topology
//! lists (`RegressionTopologyScenes.regression-tests`).

use std::path::{Path, PathBuf};

use settee_core::role;
use settee_core::scene::StepProbe;
use settee_core::{ComponentId, NodeId, Scene};
use settee_regress::metric::topology_errors;
use settee_regress::reference::{topology_reference_path, TopologyDumpWriter, TopologyRecord};

/// A topology container chosen for a dump or a comparison.
#[derive(Clone, Debug)]
pub struct SelectedTopology {
    /// The counter of SOFA's creator visitor (the `<i>` of the file name).
    pub index: usize,
    pub name: String,
    pub node: NodeId,
    pub component: ComponentId,
}

/// Which of SOFA's two creator visitors chooses the containers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// `WriteTopologyCreator`: every node's topology, its own or the nearest ancestor's (the same
    /// container can be written under several indices).
    Write,
    /// `CompareTopologyCreator`: only nodes holding a topology of their own (the last one added).
    Compare,
}

/// SOFA's selection, in pre-order: a node whose context holds a (non-topological) mapping — in
/// the node or an ancestor — is skipped unless `mapped`.
pub fn select_topologies(scene: &Scene, mapped: bool, selection: Selection) -> Vec<SelectedTopology> {
    let mut out = Vec::new();
    for n in scene.preorder(Scene::ROOT) {
        let topo = match selection {
            Selection::Compare => scene.slot(n, role::TOPOLOGY),
            Selection::Write => scene.slot(n, role::TOPOLOGY).or_else(|| scene.find_up(n, role::TOPOLOGY)),
        };
        let Some(topo) = topo else { continue };
        if scene.role::<dyn settee_core::role::Topology>(topo).map(|t| t.mesh()).is_none() {
            continue;
        }
        if !mapped && scene.find_up(n, role::MAPPING).is_some() {
            continue;
        }
        let name = scene.entry(topo).name.clone();
        out.push(SelectedTopology { index: out.len(), name, node: n, component: topo });
    }
    out
}

/// The current elements of a container, as a record at time `time`.
pub fn record_of(scene: &Scene, c: ComponentId, time: f64) -> TopologyRecord {
    let flat = |v: &mut Vec<u32>, it: &mut dyn Iterator<Item = usize>| v.extend(it.map(|i| i as u32));
    let mut r = TopologyRecord { time, ..TopologyRecord::default() };
    if let Some(m) = scene.role::<dyn settee_core::role::Topology>(c).map(|t| t.mesh()) {
        flat(&mut r.edges, &mut m.edges.iter().flatten().copied());
        flat(&mut r.triangles, &mut m.triangles.iter().flatten().copied());
        flat(&mut r.quads, &mut m.quads.iter().flatten().copied());
        flat(&mut r.tetrahedra, &mut m.tetrahedra.iter().flatten().copied());
        flat(&mut r.hexahedra, &mut m.hexahedra.iter().flatten().copied());
    }
    r
}

/// `DIR/<scene file name>.reference_<i>_<container name>_topology.txt.gz`.
pub fn dump_path(dir: &Path, scene_file: &Path, t: &SelectedTopology) -> PathBuf {
    let name = scene_file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    topology_reference_path(&dir.join(format!("{name}.reference")), t.index, &t.name)
}

/// Writes or compares the selected containers at every step start, after the components
/// listening to the step start (a TopologicalChangeProcessor) ran: where SOFA's WriteTopology
/// and CompareTopology, appended at the end of their node, look.
pub struct TopologyProbe {
    selected: Vec<SelectedTopology>,
    sink: Sink,
}

enum Sink {
    Write { writers: Vec<TopologyDumpWriter>, error: Option<String> },
    Compare(Vec<TopologyComparer>),
}

impl StepProbe for TopologyProbe {
    fn after_animate_begin(&mut self, scene: &Scene) {
        let t = scene.root().context.time;
        match &mut self.sink {
            Sink::Write { writers, error } => {
                for (sel, w) in self.selected.iter().zip(writers.iter_mut()) {
                    if let Err(e) = w.write(&record_of(scene, sel.component, t)) {
                        error.get_or_insert(e.to_string());
                    }
                }
            }
            Sink::Compare(comparers) => {
                for (sel, c) in self.selected.iter().zip(comparers.iter_mut()) {
                    c.at_step_start(t, &record_of(scene, sel.component, t));
                }
            }
        }
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

impl TopologyProbe {
    /// Installs a comparing probe; take it back with [`TopologyProbe::take`].
    pub fn install_comparer(scene: &mut Scene, selected: Vec<SelectedTopology>, comparers: Vec<TopologyComparer>) {
        scene.step_probes.push(Box::new(TopologyProbe { selected, sink: Sink::Compare(comparers) }));
    }

    /// Removes the probe from the scene.
    pub fn take(scene: &mut Scene) -> Option<TopologyProbe> {
        let k = scene.step_probes.iter_mut().position(|p| p.as_any_mut().is::<TopologyProbe>())?;
        let mut b = scene.step_probes.remove(k);
        let p = b.as_any_mut().downcast_mut::<TopologyProbe>()?;
        Some(TopologyProbe { selected: std::mem::take(&mut p.selected), sink: std::mem::replace(&mut p.sink, Sink::Compare(Vec::new())) })
    }

    /// The comparers, after the run.
    pub fn comparers(&self) -> &[TopologyComparer] {
        match &self.sink {
            Sink::Compare(c) => c,
            Sink::Write { .. } => &[],
        }
    }
}

/// `--dump-topology DIR`: writes every selected container at every step start.
pub struct TopologyDumpObserver {
    paths: Vec<PathBuf>,
}

impl TopologyDumpObserver {
    pub fn create(scene: &mut Scene, scene_file: &Path, dir: &Path, mapped: bool) -> std::io::Result<TopologyDumpObserver> {
        std::fs::create_dir_all(dir)?;
        let (mut writers, mut paths) = (Vec::new(), Vec::new());
        let selected = select_topologies(scene, mapped, Selection::Write);
        for t in &selected {
            let p = dump_path(dir, scene_file, t);
            let w = TopologyDumpWriter::create(&p).map_err(|e| std::io::Error::other(e.to_string()))?;
            writers.push(w);
            paths.push(p);
        }
        scene.step_probes.push(Box::new(TopologyProbe { selected, sink: Sink::Write { writers, error: None } }));
        Ok(TopologyDumpObserver { paths })
    }
}

impl crate::run::RunObserver for TopologyDumpObserver {
    fn before_step(&mut self, _scene: &mut Scene, _k: usize) -> Result<(), String> {
        Ok(())
    }
    fn finish(&mut self, scene: &mut Scene) -> Result<Vec<PathBuf>, String> {
        if let Some(p) = TopologyProbe::take(scene) {
            if let Sink::Write { writers, error } = p.sink {
                if let Some(e) = error {
                    return Err(e);
                }
                for w in writers {
                    w.finish().map_err(|e| e.to_string())?;
                }
            }
        }
        Ok(std::mem::take(&mut self.paths))
    }
}

/// `CompareTopology` for one container: consumes the reference records whose time is at most
/// the current time + 1e-8 and adds their errors per element type.
pub struct TopologyComparer {
    records: Vec<TopologyRecord>,
    next: usize,
    /// Per element type (edges, triangles, quads, tetrahedra, hexahedra).
    pub errors: [u64; 5],
}

impl TopologyComparer {
    pub fn new(records: Vec<TopologyRecord>) -> TopologyComparer {
        TopologyComparer { records, next: 0, errors: [0; 5] }
    }

    /// Compares at a step start of time `t`.
    pub fn at_step_start(&mut self, t: f64, current: &TopologyRecord) {
        while let Some(r) = self.records.get(self.next) {
            if r.time > t + 1e-8 {
                break;
            }
            for (e, d) in self.errors.iter_mut().zip(topology_errors(r, current)) {
                *e += d;
            }
            self.next += 1;
        }
    }

    pub fn total(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Reference records compared so far.
    pub fn compared(&self) -> usize {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::RunObserver;

    fn scene() -> (Scene, PathBuf) {
        let dir = std::env::temp_dir().join(format!("settee-topology-dump-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("two_triangles.scn");
        std::fs::write(
            &p,
            r#"<Node name="root" dt="0.1">
  <Node name="sheet">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="10" tolerance="1e-9" threshold="1e-9"/>
    <TriangleSetTopologyContainer name="tris" position="0 0 0  1 0 0  0 1 0  1 1 0" triangles="0 1 2  1 3 2"/>
    <MechanicalObject/>
    <UniformMass totalMass="1"/>
  </Node>
</Node>"#,
        )
        .unwrap();
        let s = crate::load(&p, &crate::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
        (s, dir)
    }

    #[test]
    fn dumps_read_back_and_compare_clean_and_differences_are_counted() {
        let (mut s, dir) = scene();
        let sel = select_topologies(&s, true, Selection::Compare);
        assert_eq!(sel.len(), 1);
        assert_eq!(sel[0].name, "tris");
        let out = dir.join("dump");
        let mut obs = TopologyDumpObserver::create(&mut s, &dir.join("two_triangles.scn"), &out, true).unwrap();
        for k in 0..3 {
            obs.before_step(&mut s, k).unwrap();
            settee_core::simulation::animate(&mut s, 0.1).unwrap();
        }
        let files = obs.finish(&mut s).unwrap();
        assert_eq!(files.len(), 1);
        assert!(files[0].ends_with("two_triangles.scn.reference_0_tris_topology.txt.gz"), "{files:?}");
        let records = settee_regress::reference::read_topology_reference(&files[0]).unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(records[0].triangles, vec![0, 1, 2, 1, 3, 2]);
        assert_eq!(records[0].edges.len(), 2 * 5, "the container's edges (built from the triangles)");

        // The same records compare clean; a changed vertex counts one element, a missing
        // element one per element of difference.
        let current = record_of(&s, sel[0].component, 0.0);
        let mut c = TopologyComparer::new(records.clone());
        c.at_step_start(0.0, &current);
        c.at_step_start(0.1, &current);
        assert_eq!((c.total(), c.compared()), (0, 2));
        let mut changed = records.clone();
        changed[0].triangles[4] = 2;
        changed[0].triangles[5] = 3;
        changed[1].triangles.truncate(3);
        let mut c = TopologyComparer::new(changed);
        c.at_step_start(0.0, &current);
        c.at_step_start(0.1 + 5e-9, &current);
        assert_eq!(c.errors, [0, 2, 0, 0, 0]);
    }
}
