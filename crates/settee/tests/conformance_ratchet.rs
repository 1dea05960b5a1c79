//! The conformance ratchet: every scene listed in `conformance/passing.txt` must still pass
//! `settee regress` against SOFA's suite. Running it as a test of this crate lets the README's test
//! command enforce it with the binary that command has just built.
//!
//! The suite is test data outside the repository: `SETTEE_SUITE`, else `../shared/sofa-suite`
//! beside the checkout. Without it the ratchet is skipped with a note (there is nothing to compare
//! with), except when `SETTEE_REQUIRE_SUITE` is set, as CI (`.ci/run`) does: then it fails.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn every_scene_of_the_passing_list_still_passes() {
    let root = settee_testkit::repository();
    let Some(suite) = settee_testkit::suite() else {
        return;
    };
    let passing = root.join("conformance/passing.txt");
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_settee"))
        .arg("regress")
        .arg(&suite)
        .arg("--only")
        .arg(&passing)
        .arg("--require")
        .arg(&passing)
        .arg("--json")
        .arg(target.join("conformance.json"))
        .arg("--markdown")
        .arg(target.join("conformance.md"))
        .output()
        .expect("run settee regress");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "conformance ratchet failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("ratchet: every scene of"), "no ratchet verdict in the output:\n{stdout}");
}
