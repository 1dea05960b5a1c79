//! SofaPython3's own unit tests (`bindings/Sofa/tests`, `bindings/SofaRuntime/tests`), run on
//! Settee through `settee python`: they pin the Python API's exception types, names, paths,
//! numpy shapes and event semantics (spec `python.md` §9, acceptance step 1).
//!
//! Each test file runs in its own directory, in its own process, as `python -m unittest` would
//! run it; a small runner records every test's outcome. Every test must pass, except those in
//! [`SKIPS`], each with the reason it cannot pass yet. A listed test that passes fails the
//! check too, so that the list stays true. Tests the file itself skips (`@unittest.skip`) are
//! SofaPython3's own skips and count as skipped.
//!
//! The tests are read from `../shared/python-scenes/SofaPython3` (`SETTEE_SHARED` moves
//! `../shared`); without it the tests skip with a note, except under CI where they fail.

use std::collections::BTreeMap;
use std::process::Command;

// Why tests cannot pass yet.
const MOCK: &str = "needs the C++ mock component Binding_BaseObject_MockComponent of SofaPython3's test plugin";

/// Tests expected to fail on Settee: file (under `bindings/`), unittest id, reason. A module
/// that cannot be imported shows as the one test `unittest.loader._FailedTest.<module>`.
const SKIPS: &[(&str, &str, &str)] = &[
    ("Sofa/tests/Core/BaseObject.py", "BaseObject.Test.test_mockComponent", MOCK),
    ("Sofa/tests/Core/BaseObject.py", "BaseObject.Test.test_setSrc", MOCK),
];

/// Records each test's outcome as JSON: `{id: [status, detail]}`, status `ok`, `fail`, `error`
/// or `skipped` (by the test file itself).
const RUNNER: &str = r#"
import json, sys, unittest
module, out = sys.argv[1], sys.argv[2]
results = {}
class Record(unittest.TestResult):
    def addSuccess(self, t): results[t.id()] = ["ok", ""]
    def addFailure(self, t, e): results[t.id()] = ["fail", self._exc_info_to_string(e, t)]
    def addError(self, t, e): results[t.id()] = ["error", self._exc_info_to_string(e, t)]
    def addSkip(self, t, r): results[t.id()] = ["skipped", r]
    def addExpectedFailure(self, t, e): results[t.id()] = ["ok", "expected failure"]
    def addUnexpectedSuccess(self, t): results[t.id()] = ["fail", "unexpected success"]
    # A failed subtest fails its test; a test that reports nothing is an error.
    def addSubTest(self, t, sub, e):
        if e is not None:
            status = "fail" if issubclass(e[0], t.failureException) else "error"
            detail = results.get(t.id(), ["", ""])[1] if results.get(t.id(), [""])[0] in ("fail", "error") else ""
            results[t.id()] = [status, detail + sub.id() + ": " + self._exc_info_to_string(e, t)]
    def startTest(self, t):
        results[t.id()] = ["error", "the test reported no outcome"]
suite = unittest.defaultTestLoader.loadTestsFromName(module)
suite.run(Record())
with open(out, "w") as f:
    json.dump(results, f)
"#;

fn tests_root() -> Option<std::path::PathBuf> {
    let dir = settee_testkit::shared_dir("python-scenes")?.join("SofaPython3/bindings");
    assert!(dir.is_dir(), "{} is missing from the shared python-scenes", dir.display());
    Some(dir)
}

/// Runs one test file (relative to `bindings/`) and checks its outcomes against [`SKIPS`].
fn check(file: &str) {
    let Some(root) = tests_root() else { return };
    let path = root.join(file);
    let dir = path.parent().expect("a test file has a directory");
    let module = path.file_stem().and_then(|s| s.to_str()).expect("a test file name");
    let out = std::env::temp_dir().join(format!("settee-sp3-{}-{}.json", std::process::id(), file.replace('/', "_")));
    let _ = std::fs::remove_file(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_settee"))
        .args(["python", "-c", RUNNER, module])
        .arg(&out)
        .current_dir(dir)
        .output()
        .expect("run settee python");
    let Ok(text) = std::fs::read_to_string(&out) else {
        panic!(
            "{file}: the runner wrote no results (status {}):\n{}\n{}",
            run.status,
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
    };
    let _ = std::fs::remove_file(&out);
    let results: BTreeMap<String, (String, String)> = serde_json::from_str(&text).expect("the runner's JSON");
    let skips: BTreeMap<&str, &str> = SKIPS.iter().filter(|(f, _, _)| *f == file).map(|(_, id, r)| (*id, *r)).collect();
    let mut problems = Vec::new();
    let (mut passed, mut skipped, mut own_skips) = (0, 0, 0);
    for (id, (status, detail)) in &results {
        match (status.as_str(), skips.get(id.as_str())) {
            ("ok", None) => passed += 1,
            ("skipped", _) => own_skips += 1,
            ("ok", Some(reason)) => problems.push(format!("{id} passes but is on the skip list ({reason}): remove it from SKIPS")),
            (_, Some(_)) => skipped += 1,
            (_, None) => problems.push(format!("{id}: {status}\n{detail}")),
        }
    }
    for id in skips.keys() {
        if !results.contains_key(*id) {
            problems.push(format!("{id} is on the skip list but did not run"));
        }
    }
    assert!(!results.is_empty(), "{file}: no test ran\n{}", String::from_utf8_lossy(&run.stderr));
    assert!(problems.is_empty(), "{file}: {} problem(s):\n{}", problems.len(), problems.join("\n"));
    use std::io::Write;
    let _ = std::io::stderr()
        .write_all(format!("{file}: {passed} passed, {skipped} on Settee's skip list, {own_skips} skipped by SofaPython3\n").as_bytes());
}

macro_rules! sp3_tests {
    ($($name:ident => $file:literal;)*) => {
        $(
            #[test]
            fn $name() {
                check($file);
            }
        )*
    };
}

// Every test module of SofaPython3's bindings (`Core/MyRestShapeForceField.py` is a helper that
// `ForceField.py` imports, not a test module).
sp3_tests! {
    simulation_node => "Sofa/tests/Simulation/Node.py";
    simulation_simulation => "Sofa/tests/Simulation/Simulation.py";
    core_base => "Sofa/tests/Core/Base.py";
    core_base_data => "Sofa/tests/Core/BaseData.py";
    core_base_link => "Sofa/tests/Core/BaseLink.py";
    core_base_mesh_topology => "Sofa/tests/Core/BaseMeshTopology.py";
    core_base_object => "Sofa/tests/Core/BaseObject.py";
    core_controller => "Sofa/tests/Core/Controller.py";
    core_data_engine => "Sofa/tests/Core/DataEngine.py";
    core_events => "Sofa/tests/Core/Events.py";
    core_force_field => "Sofa/tests/Core/ForceField.py";
    core_mass => "Sofa/tests/Core/Mass.py";
    core_object_factory => "Sofa/tests/Core/ObjectFactory.py";
    helper_file_repository => "Sofa/tests/Helper/FileRepository.py";
    helper_message => "Sofa/tests/Helper/Message.py";
    helper_version => "Sofa/tests/Helper/Version.py";
    types_bounding_box => "Sofa/tests/Types/BoundingBox.py";
    types_rgba_color => "Sofa/tests/Types/RGBAColor.py";
    types_vec3 => "Sofa/tests/Types/Vec3.py";
    sofa_runtime_base => "SofaRuntime/tests/SofaRuntime/Base.py";
}

/// The skip list names only files that are run, and each test once.
#[test]
fn skip_list_is_well_formed() {
    let files = include_str!("sofapython3_unit_tests.rs");
    let mut seen = std::collections::BTreeSet::new();
    for (file, id, reason) in SKIPS {
        assert!(files.contains(&format!("=> \"{file}\";")), "{file} is on the skip list but not run");
        assert!(seen.insert((file, id)), "{file} {id} is listed twice");
        assert!(!reason.is_empty(), "{file} {id} needs a reason");
    }
}
