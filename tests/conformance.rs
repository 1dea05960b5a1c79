//! A few of SOFA's regression scenes, run through the library exactly as `settee regress` does.
//! (CI re-runs every scene of conformance/passing.txt through the binary.)

use settee::regress::{run_entry, Status, SuiteLayout};
use settee_regress::RegressionList;

/// `None` (skip with a note) when the suite is absent and not required; a suite without the list
/// or the scene is an error.
fn run(scene: &str) -> Option<settee::regress::SceneOutcome> {
    let suite = settee_tests::suite()?;
    let list = RegressionList::from_file(&suite.join("RegressionStateScenes.regression-tests")).expect("the suite's regression list");
    let entry = list.entries.iter().find(|e| e.scene == scene).unwrap_or_else(|| panic!("{scene} is not in the suite's list")).clone();
    Some(run_entry(&settee::factory(), &SuiteLayout::for_list(&list), &entry))
}

#[test]
fn fembar_sparse_ldl_matches_sofa_to_every_printed_digit() {
    let Some(o) = run("Component/LinearSolver/Direct/FEMBAR_SparseLDLSolver.scn") else {
        return;
    };
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!(o.error_by_dof, Some(0.0), "{o:?}");
}

/// Three cantilevers fall on a static floor with penalty contacts. The two BTDLinearSolver beams
/// follow two SOFA quirks (conformance/NOTES.md): the floor-side rows of each contact land on the
/// beam's own rows, and the BTD storage moves blocks left of its band into earlier blocks.
/// Without them the error is 6.6e-3 (max |Δ| 0.95 on a velocity); with them every printed digit
/// of the three beams matches.
#[test]
fn beam_fem_on_the_floor_matches_sofa_to_every_printed_digit() {
    let Some(o) = run("Component/SolidMechanics/FEM/BeamFEMForceField.scn") else {
        return;
    };
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert_eq!((o.error_by_dof, o.max_abs_diff), (Some(0.0), Some(0.0)), "{o:?}");
}

#[test]
fn pendulum_matches_sofa() {
    let Some(o) = run("Benchmark/Analysis/Pendulum.scn") else {
        return;
    };
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert!(o.error_by_dof.unwrap() <= 1e-4);
}

/// Continuous collision detection (CCDTightInclusionIntersection over the free motion): the logo
/// lands on the cube as in SOFA, within 1e-7 where SOFA allows 1e-6.
#[test]
fn falling_sofa_matches_sofa_with_continuous_detection() {
    let Some(o) = run("Demos/fallingSOFA.scn") else {
        return;
    };
    assert_eq!(o.status, Status::Pass, "{o:?}");
    assert!(o.error_by_dof.unwrap() <= 1e-7, "{o:?}");
}

#[test]
fn unsupported_scenes_are_reported_as_such_with_their_reason() {
    // The external BeamAdapter plugin.
    let Some(o) = run("Demos/SofaScene.scn") else {
        return;
    };
    assert_eq!(o.status, Status::Unsupported, "{o:?}");
    assert!(o.message.as_deref().is_some_and(|m| m.contains("BeamAdapter")), "{o:?}");
}
