//! SOFA's Python benchmark scenes and their XML twins give the same trajectory, bit for bit: the
//! Python layer only builds the scene (keyword values to Data text, unnamed objects named after
//! their class), the engine underneath is the one that runs XML.

mod common;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

fn settee() -> Command {
    Command::new(env!("CARGO_BIN_EXE_settee"))
}

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("twins", name)
}

/// Runs a scene for `steps` steps, dumping every step; returns the dumped states' text, by
/// state (file names without the scene's name).
fn trajectory(scene: &Path, steps: usize, out: &Path, extra: &[&str]) -> Vec<(String, String)> {
    let o = settee()
        .args(["run", scene.to_str().unwrap(), "--steps", &steps.to_string(), "--dump-every", "1", "--dump"])
        .arg(out)
        .args(extra)
        .env_remove("s")
        .output()
        .expect("run settee");
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{}: {all}", scene.display());
    assert!(!all.contains("error"), "{}: {all}", scene.display());
    let prefix = scene.file_name().unwrap().to_str().unwrap().to_string();
    let mut files: Vec<PathBuf> = std::fs::read_dir(out).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty(), "{}: nothing dumped", scene.display());
    files
        .iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_str().unwrap().trim_start_matches(prefix.as_str()).to_string();
            let mut text = String::new();
            flate2::read::GzDecoder::new(std::fs::File::open(f).unwrap()).read_to_string(&mut text).unwrap();
            (name, text)
        })
        .collect()
}

fn twins(python: &str, xml: &str, steps: usize) {
    twins_with(python, xml, steps, &[]);
}

/// [`twins`], both runs given the same extra options; returns the Python run's dumps.
fn twins_with(python: &str, xml: &str, steps: usize, extra: &[&str]) -> Vec<(String, String)> {
    let Some(examples) = settee_testkit::shared_dir("sofa-examples") else { return Vec::new() };
    let py = examples.join("examples/Benchmark/Performance").join(python);
    let x = settee_testkit::repository().join("scenes/python").join(xml);
    let tag = extra.len();
    let a = trajectory(&py, steps, &temp_dir(&format!("{python}-py{tag}")), extra);
    let b = trajectory(&x, steps, &temp_dir(&format!("{python}-xml{tag}")), extra);
    assert_eq!(a.len(), b.len(), "{python}: not the same states dumped");
    for ((na, ta), (nb, tb)) in a.iter().zip(&b) {
        assert_eq!(na, nb, "{python}: states named differently");
        // Every step of the trajectory, as text of the dumped doubles: equal text = equal bits.
        assert_eq!(ta.lines().count(), tb.lines().count(), "{python}: {na}");
        for (k, (la, lb)) in ta.lines().zip(tb.lines()).enumerate() {
            assert_eq!(la, lb, "{python}: {na}, line {k} differs from the XML twin's");
        }
        // The bar moved: the last dumped positions differ from the first.
        let x: Vec<&str> = ta.lines().filter(|l| l.starts_with("  X=")).collect();
        assert!(x.len() > 1 && x.first() != x.last(), "{python}: the bar did not move");
    }
    a
}

#[test]
fn bar16_fem_implicit_matches_its_xml_twin() {
    twins("Bar16-fem-implicit-Vec3d.py", "bar16_fem_implicit_vec3d.scn", 20);
}

#[test]
fn bar16_spring_rk4_matches_its_xml_twin() {
    twins("Bar16-spring-rk4-Vec3d.py", "bar16_spring_rk4_vec3d.scn", 20);
}

/// `--set` on a Python scene changes it as on its XML twin, before init: a mass, a force field's
/// stiffness, the root's dt.
#[test]
fn overrides_apply_to_python_scenes_as_to_their_xml_twins() {
    let sets = ["--set", "/M1/UniformMass.totalMass=100", "--set", "root/M1/FEM.youngModulus=5000", "--set", ".dt=0.02"];
    let dumps = twins_with("Bar16-fem-implicit-Vec3d.py", "bar16_fem_implicit_vec3d.scn", 5, &sets);
    if dumps.is_empty() {
        return; // no ../shared: twins_with said so (and fails under CI)
    }
    let (_, text) = dumps.iter().find(|(n, _)| n.contains("MechanicalObject")).expect("the bar's state is dumped");
    let t: Vec<&str> = text.lines().filter(|l| l.starts_with("T=")).take(2).collect();
    assert_eq!(t.get(1).map(|l| l.trim()), Some("T= 0.02"), "dt override: {t:?}");
}

/// A component's work at creation is redone when `--set` changes it (a grid's points, here),
/// and a bad path or value is an error naming the override, as for XML scenes.
#[test]
fn overrides_redo_what_python_components_computed_at_creation() {
    let dir = temp_dir("set-grid");
    let scene = dir.join("grid.py");
    std::fs::write(
        &scene,
        "def createScene(root):\n    b = root.addChild('body')\n    b.addObject('MechanicalObject', name='dofs')\n    b.addObject('RegularGridTopology', name='grid', n=[2, 2, 3], min=[0, 0, 0], max=[1, 1, 2])\n",
    )
    .unwrap();
    let print = |extra: &[&str]| {
        let o = settee().args(["print", scene.to_str().unwrap(), "body/dofs.position"]).args(extra).output().unwrap();
        (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
    };
    let points = |(ok, out): (bool, String)| {
        assert!(ok, "{out}");
        out.split_whitespace().count() / 3
    };
    assert_eq!(points(print(&[])), 12);
    assert_eq!(points(print(&["--set", "body/grid.n=2 2 5"])), 20);
    let (ok, out) = print(&["--set", "body/grid.n=many"]);
    assert!(!ok && out.contains("--set body/grid.n=many"), "{out}");
    let (ok, out) = print(&["--set", "body/nope.n=2"]);
    assert!(
        !ok && out
            .contains("node /body/ has no component or child node named 'nope' (components: dofs (MechanicalObject), grid (RegularGridTopology))"),
        "{out}"
    );
}
