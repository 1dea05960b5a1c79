//! What the Python tests of this crate share: running code through `settee python`, reading
//! the `key value` lines scripts print, and scratch directories.
#![allow(dead_code)] // each test binary uses part of it

use std::path::PathBuf;
use std::process::Command;

/// Runs Python code with Settee's modules (`settee python -c CODE`), `SCENES` set to the
/// repository's scene directory; returns stdout, failing the test (with both outputs) when
/// the script fails.
pub fn python(code: &str) -> String {
    let scenes = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenes");
    let code = format!("SCENES = {scenes:?}\n{code}");
    let o = Command::new(env!("CARGO_BIN_EXE_settee")).args(["python", "-c", &code]).output().expect("run settee python");
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "settee python failed:\n{stdout}\n{stderr}");
    stdout
}

/// The word after `name` on a line of words (`""` when there is none).
pub fn field(line: &str, name: &str) -> String {
    line.split_whitespace().skip_while(|w| *w != name).nth(1).unwrap_or_default().to_string()
}

/// A fresh scratch directory for one test of one run (`prefix` names the test file).
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("settee-{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
