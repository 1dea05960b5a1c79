//! Bad input gets a clear, positioned error — never a panic.

use settee_core::Severity;
use settee_tests::temp_scene;

fn load_messages(name: &str, text: &str) -> (bool, Vec<String>) {
    let path = temp_scene(name, text);
    let factory = settee::factory();
    match settee::load(&path, &factory, &[]) {
        Ok(l) => (true, l.scene.messages.iter().filter(|m| m.severity >= Severity::Warning).map(|m| m.to_string()).collect()),
        Err(f) => (false, f.diagnostics.iter().filter(|m| m.severity >= Severity::Warning).map(|m| m.to_string()).collect()),
    }
}

#[test]
fn malformed_xml_names_file_line_and_column() {
    let (ok, msgs) = load_messages("malformed", "<Node name=\"root\">\n  <MechanicalObject position=\"0 0 0\"\n</Node>\n");
    assert!(!ok);
    let m = msgs.join("\n");
    assert!(m.contains("malformed.scn:"), "{m}");
    assert!(m.contains(":2:") || m.contains(":3:"), "line number expected: {m}");
}

#[test]
fn unknown_component_is_an_error_with_position_and_nearest_names() {
    let (ok, msgs) = load_messages("unknown", "<Node name=\"root\">\n    <MechanicalObjet position=\"0 0 0\"/>\n</Node>\n");
    assert!(!ok);
    let m = msgs.join("\n");
    assert!(m.contains("unknown.scn:2:5"), "{m}");
    assert!(m.contains("unknown component 'MechanicalObjet'"), "{m}");
    assert!(m.contains("MechanicalObject"), "nearest name expected: {m}");
}

#[test]
fn removed_component_names_its_replacement() {
    let (ok, msgs) = load_messages("removed", "<Node name=\"root\">\n  <GenericConstraintSolver/>\n</Node>\n");
    assert!(!ok);
    assert!(msgs.join("\n").contains("BlockGaussSeidelConstraintSolver"), "{msgs:?}");
}

#[test]
fn data_that_does_not_parse_is_reported_with_position_and_expected_type() {
    let (ok, msgs) =
        load_messages("baddata", "<Node name=\"root\">\n  <MechanicalObject position=\"0 0 0\"/>\n  <UniformMass totalMass=\"heavy\"/>\n</Node>\n");
    // SOFA only warns and keeps the default value; Settee refuses the scene, saying where and
    // why, unless loading is lenient (then it warns and keeps the default, as SOFA does).
    assert!(!ok, "{msgs:?}");
    let m = msgs.join("\n");
    assert!(m.contains("baddata.scn:3:") && m.contains("error:"), "{m}");
    assert!(m.contains("totalMass"), "{m}");
    assert!(m.contains("expects a real"), "{m}");
}

#[test]
fn unknown_attribute_is_a_warning_with_a_suggestion() {
    let (ok, msgs) = load_messages("attr", "<Node name=\"root\">\n  <MechanicalObject positon=\"0 0 0\"/>\n</Node>\n");
    assert!(ok);
    let m = msgs.join("\n");
    assert!(m.contains("attr.scn:2:") && m.contains("unused attribute 'positon'") && m.contains("did you mean 'position'"), "{m}");
}

/// A Data link to a missing object: SOFA logs an error and runs with the Data's default, so
/// Settee warns at the position and loads.
#[test]
fn broken_link_is_a_positioned_warning() {
    let (ok, msgs) = load_messages(
        "link",
        "<Node name=\"root\">\n  <MechanicalObject position=\"0 0 0\"/>\n  <FixedProjectiveConstraint indices=\"@nowhere.indices\"/>\n</Node>\n",
    );
    assert!(ok);
    let m = msgs.join("\n");
    assert!(m.contains("link.scn:3:") && m.contains("warning") && m.contains("'nowhere' not found") && m.contains("keeps its default"), "{m}");
}

#[test]
fn missing_include_is_an_error_naming_the_search_path() {
    let (ok, msgs) = load_messages("include", "<Node name=\"root\">\n  <include href=\"does/not/exist.xml\"/>\n</Node>\n");
    assert!(!ok);
    let m = msgs.join("\n");
    assert!(m.contains("include.scn:2:") && m.contains("does/not/exist.xml"), "{m}");
}

#[test]
fn missing_linear_solver_is_an_init_error_with_a_hint() {
    let (ok, msgs) = load_messages(
        "nosolver",
        "<Node name=\"root\">\n  <EulerImplicitSolver/>\n  <MechanicalObject position=\"0 0 0\"/>\n  <UniformMass totalMass=\"1\"/>\n</Node>\n",
    );
    assert!(!ok);
    let m = msgs.join("\n");
    assert!(m.contains("nosolver.scn:2:") && m.contains("no linear solver") && m.contains("hint"), "{m}");
}

#[test]
fn divergence_is_reported_not_silently_continued() {
    // A spring so stiff that explicit Euler explodes.
    let path = temp_scene(
        "diverge",
        r#"<Node name="root" dt="0.1" gravity="0 0 0">
  <EulerExplicitSolver/>
  <MechanicalObject position="0 0 0  1.5 0 0"/>
  <UniformMass totalMass="0.002"/>
  <SpringForceField spring="0 1 1e9 0 1"/>
</Node>"#,
    );
    let factory = settee::factory();
    let mut l = settee::load(&path, &factory, &[]).expect("loads");
    let mut err = None;
    for _ in 0..2000 {
        if let Err(e) = settee_core::simulation::animate(&mut l.scene, 0.1) {
            err = Some(e.to_string());
            break;
        }
    }
    let e = err.expect("divergence must be reported");
    assert!(e.contains("diverged"), "{e}");
}

#[test]
fn garbage_never_panics() {
    let factory = settee::factory();
    let seeds = ["<Node>", "<Node><MechanicalObject position=\"1 2\"/></Node>", "", "<<<>>>", "<Node dt=\"x\"><UniformMass/></Node>"];
    for (i, s) in seeds.iter().enumerate() {
        let p = temp_scene(&format!("garbage{i}"), s);
        let _ = settee::load(&p, &factory, &[]);
    }
}
