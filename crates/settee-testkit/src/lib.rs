//! What the tests of every crate share: where SOFA's regression suite and the other shared data
//! are, temporary scene files, and seeded pseudo-random numbers. A dev-dependency only.
//!
//! A test that needs the suite skips with a note when it is missing (`None`), unless CI or
//! `SETTEE_REQUIRE_SUITE` is set: then it fails, so that a run without the suite cannot pass.

use std::path::PathBuf;

pub mod alloc;

/// The repository's root (this crate lives in `crates/settee-testkit`).
pub fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The project's shared data directory (`../shared` beside the repository).
pub fn shared() -> PathBuf {
    repository().join("../shared")
}

/// True when a missing suite must fail the tests that need it: under CI (`CI` set to anything
/// but `false`/`0`, as CI services set it) or with `SETTEE_REQUIRE_SUITE=1`.
pub fn suite_required() -> bool {
    let set = |var: &str| std::env::var(var).is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"));
    set("SETTEE_REQUIRE_SUITE") || set("CI")
}

/// SOFA's suite: `$SETTEE_SUITE`, else `../shared/sofa-suite` beside the repository, when it
/// holds `scenes/`, `references/` and `data/`; else `None` with a note (or a failure when
/// [`suite_required`]).
pub fn suite() -> Option<PathBuf> {
    let dir = std::env::var_os("SETTEE_SUITE").map(PathBuf::from).unwrap_or_else(|| shared().join("sofa-suite"));
    if ["scenes", "references", "data"].iter().all(|d| dir.join(d).is_dir()) {
        return Some(dir);
    }
    skip_or_fail(&format!("SOFA suite not found at {} (set SETTEE_SUITE)", dir.display()));
    None
}

/// A directory of `../shared` (`sofa-examples`, `compliant-scenes`, …) when it exists; else
/// `None` with a note, or a failure under CI like [`suite`].
pub fn shared_dir(name: &str) -> Option<PathBuf> {
    let dir = shared().join(name);
    if dir.is_dir() {
        return Some(dir);
    }
    skip_or_fail(&format!("{} not found", dir.display()));
    None
}

fn skip_or_fail(what: &str) {
    use std::io::Write;
    assert!(!suite_required(), "{what} and CI or SETTEE_REQUIRE_SUITE is set: this test needs it");
    // Written to the stream itself, in one piece: the test harness would capture `eprintln!`.
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let _ = std::io::stderr().write_all(format!("note: {what}; skipped: {test}\n").as_bytes());
}

/// The Chromium the browser tests drive: `$SETTEE_CHROMIUM`, else `chromium`,
/// `chromium-browser` or `google-chrome` on `PATH` (`.ci/run` installs Debian's `chromium`).
/// `None` when there is none: the caller skips with a note, or fails when [`suite_required`].
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SETTEE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Writes a scene text into a fresh temporary file (one directory per process and name) and
/// returns its path.
pub fn temp_scene(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("settee-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{name}.scn"));
    std::fs::write(&path, text).expect("write the scene");
    path
}

/// Deterministic pseudo-random numbers in [-1, 1) (a linear congruential generator).
pub fn lcg(seed: &mut u64) -> f64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// SplitMix64: small, seeded, the same on every platform.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}
