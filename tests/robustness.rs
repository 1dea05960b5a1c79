//! §5 of issue 9: the inputs that crashed the runner now give positioned errors, sizes are checked
//! against the memory budget before allocation, files are read with a bound, and Data values that
//! do not parse are errors unless loading is lenient.

use std::path::Path;

use settee::{load_with, LoadOptions};
use settee_core::{Diagnostic, Severity};
use settee_tests::temp_scene;

fn errors_of(path: &Path, lenient: bool) -> Vec<Diagnostic> {
    match load_with(path, &settee::factory(), &LoadOptions { lenient, ..LoadOptions::default() }) {
        Ok(_) => Vec::new(),
        Err(f) => f.diagnostics.into_iter().filter(|d| d.severity == Severity::Error).collect(),
    }
}

/// The one error of a scene, with its line and column.
fn only_error(name: &str, text: &str) -> (Diagnostic, u32, u32) {
    let p = temp_scene(name, text);
    let errs = errors_of(&p, false);
    assert_eq!(errs.len(), 1, "{name}: {errs:#?}");
    let e = errs.into_iter().next().unwrap();
    let pos = e.pos.clone().unwrap_or_else(|| panic!("{name}: error without a position: {e}"));
    assert_eq!(pos.file(), p.as_path());
    (e, pos.line, pos.column)
}

#[test]
fn non_ascii_numbers_are_positioned_errors_not_panics() {
    let (e, line, col) = only_error("dt_accents", "<Node name=\"root\" dt=\"éè\">\n</Node>\n");
    assert!(e.message.contains("'dt'") && e.message.contains("éè"), "{e}");
    assert_eq!((line, col), (1, 19));
    let (e, line, _) =
        only_error("rotation_degrees", "<Node name=\"root\">\n  <MechanicalObject position=\"0 0 0\" rotation=\"0 90° 0\"/>\n</Node>\n");
    assert!(e.message.contains("rotation") && e.message.contains("90°"), "{e}");
    assert_eq!(line, 2);
}

#[test]
fn nan_and_infinity_in_data_are_errors_at_their_position() {
    let (e, line, _) = only_error("dt_nan", "<Node name=\"root\" dt=\"nan\">\n</Node>\n");
    assert!(e.message.contains("finite"), "{e}");
    assert_eq!(line, 1);
    let (e, line, col) = only_error("pos_nan", "<Node name=\"root\">\n  <MechanicalObject position=\"nan 0 0\"/>\n</Node>\n");
    assert!(e.message.contains("position") && e.message.contains("finite"), "{e}");
    assert_eq!((line, col), (2, 21));
    let (e, _, _) =
        only_error("mass_inf", "<Node name=\"root\">\n  <MechanicalObject position=\"0 0 0\"/>\n  <UniformMass totalMass=\"inf\"/>\n</Node>\n");
    assert!(e.message.contains("totalMass"), "{e}");
}

#[test]
fn lenient_loading_warns_and_keeps_the_default() {
    let p = temp_scene(
        "lenient",
        "<Node name=\"root\" dt=\"0.01\">\n  <MechanicalObject position=\"1 2 3\" rotation=\"0 90° 0\" size=\"x\"/>\n</Node>\n",
    );
    assert_eq!(errors_of(&p, false).len(), 2);
    let loaded = load_with(&p, &settee::factory(), &LoadOptions { lenient: true, ..LoadOptions::default() }).expect("lenient load");
    let warnings: Vec<_> =
        loaded.scene.messages.iter().filter(|m| m.severity == Severity::Warning && m.message.contains("kept its default")).collect();
    assert_eq!(warnings.len(), 2, "{:#?}", loaded.scene.messages);
    assert!(warnings.iter().all(|w| w.pos.as_ref().is_some_and(|p| p.line == 2)));
    // The rotation kept its default (none): the point is where the scene put it.
    let s = loaded.scene.store.nth(0);
    assert_eq!(&s.read(settee_core::VecId::POSITION)[..3], &[1.0, 2.0, 3.0]);
}

#[test]
fn a_preconditioner_is_not_accepted_as_the_implicit_solver_linear_solver() {
    let (e, line, col) = only_error(
        "precond",
        "<Node name=\"root\" dt=\"0.01\">\n  <EulerImplicitSolver/>\n  <JacobiPreconditioner/>\n  <MechanicalObject position=\"0 0 0\"/>\n  <UniformMass totalMass=\"1\"/>\n</Node>\n",
    );
    assert!(e.message.contains("preconditioner"), "{e}");
    assert_eq!((line, col), (2, 3));
}

#[test]
fn sizes_beyond_the_memory_budget_are_refused_before_allocation() {
    let t = std::time::Instant::now();
    let (e, line, _) = only_error("big_state", "<Node name=\"root\">\n  <MechanicalObject size=\"400000000\"/>\n</Node>\n");
    assert!(e.message.contains("memory budget"), "{e}");
    assert_eq!(line, 2);
    let (e, _, _) = only_error(
        "big_range",
        "<Node name=\"root\">\n  <MechanicalObject position=\"0 0 0\"/>\n  <FixedProjectiveConstraint indices=\"0-99999999999999\"/>\n</Node>\n",
    );
    assert!(e.message.contains("memory budget"), "{e}");
    assert!(t.elapsed().as_secs() < 5, "refusals must be quick: {:?}", t.elapsed());
}

#[test]
fn sparse_grid_resolution_is_capped_by_the_budget() {
    let dir = std::env::temp_dir().join(format!("settee-test-{}-grid", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("tet.obj");
    std::fs::write(&obj, "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n").unwrap();
    for n in ["400 400 400", "99999999999 99999999999 99999999999"] {
        let text = format!("<Node name=\"root\">\n  <SparseGridTopology n=\"{n}\" fileTopology=\"{}\"/>\n</Node>\n", obj.display());
        let (e, line, _) = only_error("grid", &text);
        assert!(e.message.contains("memory budget"), "{n}: {e}");
        assert_eq!(line, 2);
    }
}

#[test]
fn device_files_named_as_mesh_or_include_are_refused_quickly() {
    let t = std::time::Instant::now();
    let p = temp_scene("devzero", "<Node name=\"root\">\n  <include href=\"/dev/zero\"/>\n  <MeshOBJLoader filename=\"/dev/zero\"/>\n</Node>\n");
    let errs = errors_of(&p, false);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    for (e, line) in errs.iter().zip([2, 3]) {
        assert!(e.message.contains("not a regular file"), "{e}");
        assert_eq!(e.pos.as_ref().map(|p| p.line), Some(line), "{e}");
    }
    assert!(t.elapsed().as_secs() < 2, "{:?}", t.elapsed());
}
