//! The conformance ratchet: every scene listed in `conformance/passing.txt` must still pass
//! `settee regress` against SOFA's suite. Running it as a test of this crate lets the README's test
//! command enforce it with the binary that command has just built.
//!
//! The suite is test data outside the repository: `SETTEE_SUITE`, else `../shared/sofa-suite`
//! beside the checkout. Without it the ratchet is skipped with a note (there is nothing to compare
//! with), except when `SETTEE_REQUIRE_SUITE` is set, as CI (`.ci/run`) does: then it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// The SOFA suite: `$SETTEE_SUITE`, else `../shared/sofa-suite` beside the repository, when it
/// holds `scenes/`, `references/` and `data/`. When it does not, the calling test skips with a
/// note (`None`) — unless `CI` or `SETTEE_REQUIRE_SUITE` is set, where it fails instead: a
/// test that could not compare anything must not count as passed.
fn suite_dir(root: &Path) -> Option<PathBuf> {
    let dir = std::env::var_os("SETTEE_SUITE").map(PathBuf::from).unwrap_or_else(|| root.join("../shared/sofa-suite"));
    if ["scenes", "references", "data"].iter().all(|d| dir.join(d).is_dir()) {
        return Some(dir);
    }
    use std::io::Write;
    // CI services set `CI`; `.ci/run` also sets SETTEE_REQUIRE_SUITE.
    let required =
        ["SETTEE_REQUIRE_SUITE", "CI"].iter().any(|k| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false")));
    assert!(!required, "SOFA suite not found at {} (set SETTEE_SUITE) and CI or SETTEE_REQUIRE_SUITE is set: this test needs it", dir.display());
    // Written to the stream itself, in one piece: the test harness would capture `eprintln!`.
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let note = format!("note: SOFA suite not found at {} (set SETTEE_SUITE); conformance ratchet skipped: {test}\n", dir.display());
    let _ = std::io::stderr().write_all(note.as_bytes());
    None
}

#[test]
fn every_scene_of_the_passing_list_still_passes() {
    let root = workspace_root();
    let Some(suite) = suite_dir(&root) else {
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
