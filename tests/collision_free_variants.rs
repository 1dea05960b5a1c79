//! SOFA suite scenes whose collision pipeline never fires: nothing in them ever comes within the
//! contact distance of anything else, so SOFA's reference trajectory is the trajectory of the
//! scene without its collision components. Settee has no collision pipeline yet; these tests strip
//! it (in memory, from the suite's own scene text) and compare with SOFA's reference through the
//! regression driver, with SOFA's threshold. They pin components that no fully supported suite
//! scene exercises: sparse grids (and their per-cell stiffness and mass coefficients),
//! SparseGridRamificationTopology, QuadBendingFEMForceField, TriangularFEMForceField.
//!
//! Skipped with a note when the suite is absent, failed instead when `SETTEE_REQUIRE_SUITE` is set.

mod support;

use std::path::{Path, PathBuf};

use settee::regress::{run_entry, Status, SuiteLayout};
use settee_regress::RegressionList;

/// Element names of SOFA's collision pipeline and collision models.
fn is_collision_element(name: &str) -> bool {
    matches!(
        name,
        "CollisionPipeline"
            | "BruteForceBroadPhase"
            | "BVHNarrowPhase"
            | "CollisionResponse"
            | "DefaultContactManager"
    ) || name.ends_with("Intersection")
        || name.ends_with("CollisionModel")
}

/// The scene text without its collision elements (all are one-line, self-closing in these
/// scenes), and how many were removed.
fn strip_collision(text: &str) -> (String, usize) {
    let mut out = String::new();
    let mut removed = 0;
    for line in text.lines() {
        let t = line.trim_start();
        let name: String = t
            .strip_prefix('<')
            .unwrap_or("")
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if is_collision_element(&name) {
            assert!(
                t.trim_end().ends_with("/>"),
                "collision element spanning several lines: {line}"
            );
            removed += 1;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, removed)
}

/// Runs the collision-free variant of a listed suite scene against SOFA's reference; returns SOFA's
/// error (errorByDof) after asserting the scene passes at SOFA's threshold.
fn run_variant(suite: &Path, scene: &str) -> f64 {
    let list = RegressionList::from_file(&suite.join("RegressionStateScenes.regression-tests"))
        .expect("read the list");
    let entry = list
        .entries
        .iter()
        .find(|e| e.scene == scene)
        .expect("scene listed")
        .clone();
    let original = suite.join("scenes").join(scene);
    let text = std::fs::read_to_string(&original).expect("read the scene");
    let (stripped, removed) = strip_collision(&text);
    assert!(
        removed >= 4,
        "only {removed} collision elements found in {scene}"
    );

    let root = std::env::temp_dir().join(format!(
        "settee-collision-free-{}-{}",
        std::process::id(),
        scene.replace('/', "_")
    ));
    let path = root.join(scene);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, stripped).unwrap();
    let layout = SuiteLayout {
        scenes: root.clone(),
        references: suite.join("references"),
        // Files the scene names relative to its own directory are found in the original's.
        data: vec![original.parent().unwrap().to_path_buf(), suite.join("data")],
    };
    let factory = settee::factory();
    let outcome = run_entry(&factory, &layout, &entry);
    let _ = std::fs::remove_dir_all(&root);
    println!(
        "{scene}: error {:?} (eps {}), max |Δ| {:?}",
        outcome.error_by_dof, entry.epsilon, outcome.max_abs_diff
    );
    assert_eq!(
        outcome.status,
        Status::Pass,
        "{scene} without collision: {outcome:?}"
    );
    outcome.error_by_dof.unwrap()
}

/// The suite, or `None` after a note (a failure when `SETTEE_REQUIRE_SUITE` is set).
fn suite_or_skip() -> Option<PathBuf> {
    support::suite()
}

#[test]
fn sparse_grid_dragons_match_sofa_exactly() {
    let Some(suite) = suite_or_skip() else { return };
    assert_eq!(
        run_variant(
            &suite,
            "Component/Topology/Container/Grid/SparseGridTopology.scn"
        ),
        0.0
    );
}

/// Two of its three objects need the sparse grid's per-cell stiffness and mass coefficients in
/// the hexahedral FEM to match (without them the error is ≈ 4e-3); the third, a
/// `finestConnectivity` grid, is off by about 1e-6 for a reason not found yet.
#[test]
fn sparse_grid_ramification_matches_sofa() {
    let Some(suite) = suite_or_skip() else { return };
    let e = run_variant(
        &suite,
        "Component/Topology/Container/Grid/SparseGridRamificationTopology.scn",
    );
    assert!(e < 1e-5, "error {e}");
}

#[test]
fn quad_bending_fem_plate_matches_sofa() {
    let Some(suite) = suite_or_skip() else { return };
    let e = run_variant(
        &suite,
        "Component/SolidMechanics/FEM/QuadBendingFEMForceField.scn",
    );
    assert!(e < 1e-9, "error {e}");
}

#[test]
fn triangular_fem_cloth_matches_sofa_exactly() {
    let Some(suite) = suite_or_skip() else { return };
    assert_eq!(run_variant(&suite, "Demos/TriangleSurfaceCutting.scn"), 0.0);
}

/// A rotating Rigid3 frame (PartialFixedProjectiveConstraint keeps it in place) carrying two
/// ellipsoids that push a cloth solved by another solver (InteractionEllipsoidForceField).
#[test]
fn interaction_ellipsoid_cloth_matches_sofa() {
    let Some(suite) = suite_or_skip() else { return };
    let e = run_variant(
        &suite,
        "Component/MechanicalLoad/InteractionEllipsoidForceField.scn",
    );
    assert!(e < 1e-4, "error {e}");
}

/// Six cantilevers, one per material (corotational tetrahedra, Arruda-Boyce, St Venant-Kirchhoff,
/// Neo-Hookean, Mooney-Rivlin, Ogden), labelled with Visual3DText. Three match every printed digit;
/// Arruda-Boyce, Mooney-Rivlin and Ogden differ by up to 1e-6 (a few last digits).
#[test]
fn hyperelastic_cantilevers_match_sofa() {
    let Some(suite) = suite_or_skip() else { return };
    let e = run_variant(
        &suite,
        "Component/SolidMechanics/FEM/TetrahedronHyperelasticityFEMForceField.scn",
    );
    assert!(e < 1e-9, "error {e}");
}
