//! CompareState (SOFA's Playback): a run compared with the trajectory WriteState recorded of
//! the same scene has no error; with half the mass it has one, and the error per DOF is the
//! total divided by the number of DOFs. (The beam's grid points print exactly with 6 digits:
//! as in SOFA, CompareState first applies the file's first record, as ReadState does, so
//! rounded coordinates would start the compared run from a slightly different state.)

use settee_core::simulation::animate;
use settee_core::Scene;
use settee_exporter::compare_state::CompareState;

fn beam(mass: f64, extra: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
  <DefaultAnimationLoop/>
  <Node name="Beam">
    <EulerImplicitSolver/>
    <SparseLDLSolver/>
    <MechanicalObject name="beamMO"/>
    <RegularGridTopology nx="3" ny="3" nz="9" xmin="0" xmax="3" ymin="0" ymax="3" zmin="0" zmax="8"/>
    <UniformMass totalMass="{mass}"/>
    {extra}
    <FixedProjectiveConstraint indices="0-8"/>
    <TetrahedronFEMForceField youngModulus="100" poissonRatio="0.3" method="large"/>
  </Node>
</Node>"#
    )
}

fn run(name: &str, text: &str, steps: usize) -> Scene {
    let path = settee_testkit::temp_scene(name, text);
    let mut s = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|e| panic!("{:?}", e.diagnostics)).scene;
    for _ in 0..steps {
        animate(&mut s, 0.01).unwrap();
    }
    s
}

fn comparator(s: &Scene) -> &CompareState {
    let c = s.preorder(Scene::ROOT).into_iter().flat_map(|n| s.node(n).objects.clone()).find(|&c| s.entry(c).name == "cmp").unwrap();
    s.get::<CompareState>(c).unwrap()
}

#[test]
fn the_recorded_run_compares_exactly_and_another_mass_does_not() {
    let file = std::env::temp_dir().join(format!("settee-compare-state-{}.txt.gz", std::process::id()));
    let f = file.display();
    run("cs-write", &beam(10.0, &format!(r#"<WriteState filename="{f}" period="0.01" writeX="1" writeV="1"/>"#)), 12);
    let same = run("cs-same", &beam(10.0, &format!(r#"<CompareState name="cmp" filename="{f}"/>"#)), 10);
    assert_eq!(comparator(&same).total_error(), 0.0);
    let lighter = run("cs-light", &beam(5.0, &format!(r#"<CompareState name="cmp" filename="{f}"/>"#)), 10);
    let c = comparator(&lighter);
    assert!(c.total_error() > 1e-3, "{}", c.total_error());
    // 81 DOFs: each comparison's error per DOF is its error over 63.
    assert!((c.error_by_dof() * 81.0 - c.total_error()).abs() <= 1e-12 * c.total_error());
    let _ = std::fs::remove_file(&file);
}
