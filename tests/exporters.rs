//! The observer components and `--vtk` write files that read back to the simulated numbers:
//! VTKExporter's `.vtu`, the run's `.pvd` series, WriteState → ReadState, Monitor's columns.

mod support;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use quick_xml::events::Event;
use settee::run::{simulate, RunObserver};
use settee_core::gformat::{format_g6, round_g6};
use settee_core::role;
use settee_core::{Scene, VecId};

/// A small clamped hexahedral beam; `extra` is put in the beam's node.
fn beam_scene(extra: &str) -> String {
    format!(
        r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
    <DefaultAnimationLoop/>
    <Node name="Beam">
        <EulerImplicitSolver/>
        <SparseLDLSolver template="CompressedRowSparseMatrixMat3x3"/>
        <MechanicalObject name="dofs"/>
        <UniformMass totalMass="2"/>
        <RegularGridTopology name="grid" n="2 3 4" min="0 0 0" max="1 2 3"/>
        <FixedProjectiveConstraint indices="0 1 2 3 4 5"/>
        <HexahedronFEMForceField youngModulus="3000" poissonRatio="0.3" method="large"/>
        {extra}
    </Node>
</Node>"#
    )
}

/// Loads a scene text written into a fresh directory, whose output goes into that directory.
fn load(name: &str, text: &str) -> (settee::LoadedScene, PathBuf) {
    let path = support::temp_scene(name, text);
    let dir = path.parent().unwrap().to_path_buf();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p != path {
            let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
        }
    }
    let mut l = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{name}: {}", f.first_error()));
    l.scene.output_dir = dir.clone();
    (l, dir)
}

fn positions(scene: &Scene) -> Vec<f64> {
    let st = scene.store.states.values().next().expect("one state");
    st.read(VecId::POSITION).to_vec()
}

fn step(scene: &mut Scene) {
    let dt = scene.root().context.dt;
    settee_core::simulation::animate(scene, dt).unwrap();
}

/// What a `.vtu` file holds: the piece's counts and every DataArray by name (`Points` for the
/// points).
#[derive(Debug, Default)]
struct Vtu {
    points: usize,
    cells: usize,
    arrays: HashMap<String, Vec<f64>>,
}

fn attr(e: &quick_xml::events::BytesStart, name: &str) -> Option<String> {
    e.attributes().flatten().find(|a| a.key.as_ref() == name.as_bytes()).map(|a| a.unescape_value().unwrap().into_owned())
}

fn read_vtu(path: &Path) -> Vtu {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = quick_xml::Reader::from_str(&text);
    let mut out = Vtu::default();
    let mut current: Option<String> = None;
    let mut in_points = false;
    loop {
        match r.read_event().unwrap() {
            Event::Start(e) => match e.name().as_ref() {
                b"Piece" => {
                    out.points = attr(&e, "NumberOfPoints").unwrap().parse().unwrap();
                    out.cells = attr(&e, "NumberOfCells").unwrap().parse().unwrap();
                }
                b"Points" => in_points = true,
                b"DataArray" => current = Some(if in_points { "Points".into() } else { attr(&e, "Name").unwrap() }),
                _ => {}
            },
            Event::End(e) => match e.name().as_ref() {
                b"Points" => in_points = false,
                b"DataArray" => current = None,
                _ => {}
            },
            Event::Text(t) => {
                if let Some(name) = &current {
                    let s = t.unescape().unwrap();
                    let v = out.arrays.entry(name.clone()).or_default();
                    v.extend(s.split_whitespace().map(|w| w.parse::<f64>().unwrap()));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

/// VTKExporter: the file written at the start holds the initial positions and the grid's
/// hexahedra; those written every 2 steps hold the positions of those steps, to the 6 digits
/// SOFA prints; the one written at the end the final positions; velocity as a point array.
#[test]
fn vtk_exporter_files_read_back_to_the_state() {
    let exporter = r#"<VTKExporter name="exp" filename="out/beam" edges="0" hexas="1" exportAtBegin="1" exportAtEnd="1"
                 exportEveryNumberOfSteps="2" pointsDataFields="v=dofs.velocity"/>"#;
    let (mut l, dir) = load("vtk-exporter", &beam_scene(exporter));
    let grid = l.scene.components.iter().find(|(_, e)| e.plays(role::TOPOLOGY)).map(|(c, _)| c).unwrap();
    let hexas: Vec<f64> = l.scene.mesh_of(grid).unwrap().hexahedra.iter().flatten().map(|&i| i as f64).collect();
    assert_eq!(hexas.len(), 6 * 8);
    let mut expected = vec![positions(&l.scene)];
    for k in 1..=5 {
        step(&mut l.scene);
        if k % 2 == 0 {
            expected.push(positions(&l.scene));
        }
    }
    settee_core::simulation::finish(&mut l.scene).unwrap();
    expected.push(positions(&l.scene));
    let velocity = l.scene.store.states.values().next().unwrap().read(VecId::VELOCITY).to_vec();
    // begin, steps 2 and 4, end: files 0..3, numbered as SOFA numbers them.
    assert!(!dir.join("out/beam4.vtu").exists());
    for (k, x) in expected.iter().enumerate() {
        let v = read_vtu(&dir.join(format!("out/beam{k}.vtu")));
        assert_eq!((v.points, v.cells), (24, 6), "file {k}");
        let pts = &v.arrays["Points"];
        assert_eq!(pts.len(), x.len());
        for (i, (a, b)) in pts.iter().zip(x).enumerate() {
            assert_eq!(*a, round_g6(*b), "file {k}, coordinate {i}");
        }
        assert_eq!(v.arrays["connectivity"], hexas);
        assert_eq!(v.arrays["offsets"], (1..=6).map(|i| (i * 8) as f64).collect::<Vec<_>>());
        assert_eq!(v.arrays["types"], vec![12.0; 6]);
    }
    // The beam moved between the first and the last file.
    assert!(expected[0] != expected[3]);
    let v = read_vtu(&dir.join("out/beam3.vtu"));
    assert_eq!(v.arrays["v"], velocity.iter().map(|x| round_g6(*x)).collect::<Vec<_>>());
}

/// Records what the test compares with: the time and positions after each step.
type Trajectory = Vec<(f64, Vec<f64>)>;
struct Recorder(Rc<RefCell<Trajectory>>);

impl RunObserver for Recorder {
    fn after_step(&mut self, scene: &mut Scene, _k: usize, _t: f64) -> Result<(), String> {
        self.0.borrow_mut().push((scene.root().context.time, positions(scene)));
        Ok(())
    }
}

/// `--vtk`: the `.pvd` lists a file per exported step (t = 0, every 2 steps, the last step)
/// with its time, and each file holds the state's positions at that time, every digit.
#[test]
fn vtk_series_lists_files_with_their_times() {
    let (mut l, dir) = load("vtk-series", &beam_scene(""));
    let initial = positions(&l.scene);
    let out = dir.join("vtk");
    let series = settee::vtk::VtkSeries::create(&l.scene, &l.path, &out, 2, 5).unwrap();
    let mut observers: Vec<Box<dyn RunObserver>> = vec![Box::new(series)];
    let summary = simulate(&mut l.scene, 5, &mut observers).unwrap();
    let pvd = out.join("vtk-series.pvd");
    assert_eq!(summary.written, vec![pvd.clone()]);
    // Second run of the same steps for the expected values (the run is deterministic).
    let (mut l2, _) = load("vtk-series-expected", &beam_scene(""));
    let after_steps = Rc::new(RefCell::new(Vec::new()));
    let mut rec: Vec<Box<dyn RunObserver>> = vec![Box::new(Recorder(after_steps.clone()))];
    simulate(&mut l2.scene, 5, &mut rec).unwrap();
    let mut expected = vec![(0.0, initial)];
    for k in [2, 4, 5] {
        expected.push(after_steps.borrow()[k - 1].clone());
    }

    let text = std::fs::read_to_string(&pvd).unwrap();
    let mut r = quick_xml::Reader::from_str(&text);
    let mut listed = Vec::new();
    loop {
        match r.read_event().unwrap() {
            Event::Empty(e) if e.name().as_ref() == b"DataSet" => {
                listed.push((attr(&e, "timestep").unwrap().parse::<f64>().unwrap(), attr(&e, "file").unwrap()));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(listed.len(), expected.len(), "{text}");
    for ((t, file), (te, xe)) in listed.iter().zip(&expected) {
        assert_eq!(t, te, "{file}");
        let v = read_vtu(&out.join(file));
        assert_eq!(v.points, 24);
        assert_eq!(v.cells, 6, "the grid's hexahedra");
        assert_eq!(&v.arrays["Points"], xe, "{file}");
    }
    assert_eq!(listed[3].1, "Beam_dofs_000005.vtu");
}

/// WriteState then ReadState: a beam records its trajectory (positions and velocities every
/// step, gzip-compressed); a second scene with the same state and no solver replays it, and
/// each replayed step holds the record of the original step that started at the same time, to
/// the file's 6 digits (dt = 0.01: the summed times fall a rounding error short of the printed
/// ones at some steps, which must not delay a record).
#[test]
fn write_state_then_read_state_replays_the_trajectory() {
    let (mut l, dir) = load("write-state", &beam_scene(r#"<WriteState filename="traj.txt.gz" writeX="1" writeV="1"/>"#));
    let mut starts = Vec::new();
    for _ in 0..12 {
        starts.push(positions(&l.scene));
        step(&mut l.scene);
    }
    settee_core::simulation::finish(&mut l.scene).unwrap();
    let file = dir.join("traj.txt.gz");
    assert!(file.exists());

    let replay = format!(
        r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
    <DefaultAnimationLoop/>
    <Node name="Beam">
        <MechanicalObject name="dofs"/>
        <RegularGridTopology name="grid" n="2 3 4" min="0 0 0" max="1 2 3"/>
        <ReadState filename="{}"/>
    </Node>
</Node>"#,
        file.display()
    );
    let (mut r, _) = load("read-state", &replay);
    let g6 = |x: &[f64]| x.iter().map(|v| round_g6(*v)).collect::<Vec<_>>();
    // At load: the record of t = 0.
    assert_eq!(positions(&r.scene), g6(&starts[0]));
    // Replayed step k starts at t = k·dt and reads the record written at the start of the
    // original step k (SOFA reads at the start of the step, as WriteState writes).
    for (k, x) in starts.iter().enumerate() {
        step(&mut r.scene);
        assert_eq!(positions(&r.scene), g6(x), "replayed step {k}");
    }
    assert!(starts[11] != starts[0], "the recorded beam moved");
}

/// Monitor: the header names the monitored DOFs; each line is the time reached by a step and
/// the positions of those DOFs then, as C++ prints them.
#[test]
fn monitor_columns_are_the_state_at_each_step() {
    let (mut l, dir) = load(
        "monitor",
        &beam_scene(r#"<Monitor name="tip" fileName="plots/tip" indices="23 20" ExportPositions="1" showPositions="1" PositionsColor="1 0 0 1"/>"#),
    );
    assert!(l.scene.messages.iter().all(|m| m.severity < settee_core::Severity::Warning), "{:?}", l.scene.messages);
    let mut expected = Vec::new();
    for _ in 0..4 {
        step(&mut l.scene);
        let x = positions(&l.scene);
        let mut line = format!("{}\t", format_g6(l.scene.root().context.time));
        for i in [23, 20] {
            line.push_str(&x[i * 3..i * 3 + 3].iter().map(|v| format_g6(*v)).collect::<Vec<_>>().join(" "));
            line.push('\t');
        }
        expected.push(line);
    }
    settee_core::simulation::finish(&mut l.scene).unwrap();
    let text = std::fs::read_to_string(dir.join("plots/tip_x.txt")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# Gnuplot File : positions of 2 particle(s) Monitored");
    assert_eq!(lines[1], "# 1st Column : time, others : particle(s) number 23 20 ");
    assert_eq!(lines[2..], expected.iter().map(|s| s.as_str()).collect::<Vec<_>>()[..]);
    assert!(lines[2].starts_with("0.01\t"));
    assert!(!dir.join("plots/tip_v.txt").exists());
}

/// A recorder that cannot create its file stops the run before the first step, with the
/// component's position, instead of running without writing.
#[test]
fn an_unwritable_output_stops_the_run_at_its_start() {
    let (mut l, dir) = load("unwritable", &beam_scene(r#"<WriteState filename="blocker/traj.txt"/>"#));
    std::fs::write(dir.join("blocker"), "a file, not a directory").unwrap();
    let err = simulate(&mut l.scene, 3, &mut []).err().expect("the run must fail");
    let text = err.to_string();
    assert!(matches!(err, settee::run::RunError::Start(_)), "{text}");
    assert!(text.contains("unwritable.scn:") && text.contains("cannot create") && text.contains("could not start"), "{text}");
    assert_eq!(l.scene.root().context.time, 0.0, "no step ran");
}
