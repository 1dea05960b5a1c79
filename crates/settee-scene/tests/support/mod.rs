//! Where the tests of this crate find SOFA's suite ([`settee_testkit::suite`]).

use std::path::PathBuf;

pub use settee_testkit::suite;

/// Where the suite is looked for.
#[allow(dead_code)] // not every test file needs it
pub fn suite_dir() -> PathBuf {
    std::env::var_os("SETTEE_SUITE").map(PathBuf::from).unwrap_or_else(|| settee_testkit::shared().join("sofa-suite"))
}
