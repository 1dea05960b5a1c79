//! `.regression-tests` list files (spec §5.1) and dump schedules (§5.4).
//!
//! ```text
//! # comment (only when `#` is the very first character)
//! $REGRESSION_DIR/references/examples        <- reference directory
//! Demos/liver.scn 100 1e-4 1 1               <- scene steps epsilon [mapped] [last_only] [period]
//! ```

use std::path::{Path, PathBuf};

use crate::error::RegressError;

/// Prefix of the reference-directory line replaced by the `REGRESSION_DIR` variable.
pub const REGRESSION_DIR_PREFIX: &str = "$REGRESSION_DIR";

/// One scene line of a list file.
#[derive(Debug, Clone, PartialEq)]
pub struct RegressionEntry {
    /// Scene path relative to the list file's directory.
    pub scene: String,
    /// Number of `animate` steps `N`.
    pub steps: usize,
    /// Failure threshold: FAIL iff `errorByDof > epsilon`.
    pub epsilon: f64,
    /// Field 4: also dump/compare mechanical states under mappings.
    pub mapped: bool,
    /// Field 5: the reference holds only the first and last frames.
    pub last_only: bool,
    /// Field 6: number of steps between dumps (0 = every step) when `last_only` is false.
    pub period: usize,
    /// 1-based line number in the list file.
    pub line: usize,
}

/// A parsed list file.
#[derive(Debug, Clone, PartialEq)]
pub struct RegressionList {
    /// The list file (scene paths are relative to its directory).
    pub path: PathBuf,
    /// The reference-directory line, verbatim (trimmed).
    pub reference_dir_line: String,
    pub entries: Vec<RegressionEntry>,
    /// Lines that were skipped, with line numbers (like the C++ driver's error messages).
    pub problems: Vec<String>,
}

/// Parses one scene line; `Err` describes why the line is skipped.
///
/// The C++ driver reads the fields with `istringstream >>` into `std::string`, `unsigned int`,
/// `double`, `bool`, `bool`, `unsigned int`; we require the same shapes but report a malformed
/// number instead of silently reading garbage.
fn parse_entry(line_text: &str, line: usize) -> Result<RegressionEntry, String> {
    let f: Vec<&str> = line_text.split_ascii_whitespace().collect();
    if f.len() < 3 {
        return Err(format!(
            "line {line}: expected `scene steps epsilon [mapped] [last_only] [period]`, \
             found {} field(s): `{}`",
            f.len(),
            line_text.trim()
        ));
    }
    let steps = f[1].parse::<usize>().map_err(|_| format!("line {line}: steps must be a non-negative integer, found `{}`", f[1]))?;
    let epsilon =
        f[2].parse::<f64>().ok().filter(|e| e.is_finite()).ok_or_else(|| format!("line {line}: epsilon must be a real number, found `{}`", f[2]))?;
    let flag = |k: usize, what: &str| -> Result<bool, String> {
        match f.get(k).copied() {
            None | Some("0") => Ok(false),
            Some("1") => Ok(true),
            Some(other) => Err(format!("line {line}: {what} must be 0 or 1, found `{other}`")),
        }
    };
    let mapped = flag(3, "mapped flag")?;
    let last_only = flag(4, "last-only flag")?;
    let period = match f.get(5) {
        None => 0,
        Some(p) => p.parse::<usize>().map_err(|_| format!("line {line}: period must be a non-negative integer, found `{p}`"))?,
    };
    Ok(RegressionEntry { scene: f[0].to_owned(), steps, epsilon, mapped, last_only, period, line })
}

impl RegressionList {
    /// Reads and parses a list file.
    pub fn from_file(path: &Path) -> Result<Self, RegressError> {
        let text = std::fs::read_to_string(path).map_err(|e| RegressError::io(path, "reading", e))?;
        Self::parse(path, &text)
    }

    /// Parses list text; `path` is the list file's location (for relative paths and messages).
    ///
    /// Malformed scene lines do not abort parsing: they are recorded in `problems`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, RegressError> {
        let mut reference_dir_line = None;
        let mut entries = Vec::new();
        let mut problems = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            // Only an empty line or a `#` in the very first column is skipped (no inline
            // comments); a line of blanks has no fields, so treat it as empty too.
            if raw.starts_with('#') || raw.trim().is_empty() {
                continue;
            }
            if reference_dir_line.is_none() {
                reference_dir_line = Some(raw.trim().to_owned());
                continue;
            }
            match parse_entry(raw, i + 1) {
                Ok(e) => entries.push(e),
                Err(p) => problems.push(p),
            }
        }
        let reference_dir_line = reference_dir_line.ok_or_else(|| RegressError::MissingReferenceDir { path: path.to_owned() })?;
        Ok(RegressionList { path: path.to_owned(), reference_dir_line, entries, problems })
    }

    /// The directory of the list file (base of scene paths).
    pub fn list_dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }

    /// Path of an entry's scene file: `<list dir>/<scene>` (§5.1). (In the conformance-suite
    /// copy the scenes live in `<suite>/scenes/` instead; join `entry.scene` there.)
    pub fn scene_path(&self, entry: &RegressionEntry) -> PathBuf {
        self.list_dir().join(&entry.scene)
    }

    /// Resolves the reference directory per §5.1 with explicit variable values:
    /// `$REGRESSION_DIR` is replaced by `regression_dir`, any other path is relative to the list
    /// directory; if the result does not exist and `references_dir_fallback`
    /// (`REGRESSION_REFERENCES_DIR`) is given, that one (absolute, or relative to the list
    /// directory) is used instead.
    pub fn resolve_reference_dir(&self, regression_dir: Option<&Path>, references_dir_fallback: Option<&Path>) -> Result<PathBuf, RegressError> {
        let line = &self.reference_dir_line;
        let primary = match line.strip_prefix(REGRESSION_DIR_PREFIX) {
            Some(rest) => match regression_dir {
                // `rest` starts with '/', so plain concatenation is what the C++ driver does.
                Some(dir) => {
                    let mut s = dir.as_os_str().to_owned();
                    s.push(rest);
                    Some(PathBuf::from(s))
                }
                None => None,
            },
            None => Some(self.list_dir().join(line)),
        };
        match (primary, references_dir_fallback) {
            (Some(p), _) if p.is_dir() => Ok(p),
            (_, Some(fallback)) => Ok(self.list_dir().join(fallback)),
            (Some(p), None) => Ok(p),
            (None, None) => Err(RegressError::RegressionDirUnset { path: self.path.clone(), line: line.clone() }),
        }
    }

    /// [`resolve_reference_dir`](Self::resolve_reference_dir) with the values of the
    /// environment variables `REGRESSION_DIR` and `REGRESSION_REFERENCES_DIR`.
    pub fn reference_dir_from_env(&self) -> Result<PathBuf, RegressError> {
        let regression_dir = std::env::var_os("REGRESSION_DIR").map(PathBuf::from);
        let fallback = std::env::var_os("REGRESSION_REFERENCES_DIR").map(PathBuf::from);
        self.resolve_reference_dir(regression_dir.as_deref(), fallback.as_deref())
    }

    /// Reference base path `<reference_dir>/<scene>.reference` (§5.1). Pass the directory from
    /// [`resolve_reference_dir`](Self::resolve_reference_dir), or any override (in the
    /// conformance suite copy the references live in `<suite>/references`).
    pub fn reference_base(&self, entry: &RegressionEntry, reference_dir: &Path) -> PathBuf {
        reference_dir.join(format!("{}.reference", entry.scene))
    }
}

/// When `WriteState` writes a record (spec §5.4), mirroring its logic exactly: a list of export
/// times, each written at the first step start with `t > τ` or `|t − τ| < 0.1·dt` (at most one
/// record per step start), then optionally every `period` after the last one.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSchedule {
    times: Vec<f64>,
    period: Option<f64>,
    next: usize,
    last: f64,
    started: bool,
}

impl ExportSchedule {
    /// Schedule used by the C++ driver for a list entry with root time step `dt`:
    /// last-only → times `{0, dt·(N−1)}`, no period; otherwise time `{0}` and period
    /// `dt` (or `period·dt` when field 6 is non-zero).
    pub fn for_entry(entry: &RegressionEntry, dt: f64) -> Self {
        if entry.last_only {
            // dt·(N−1) computed by multiplication, as the driver does.
            Self::new(vec![0.0, dt * (entry.steps as f64 - 1.0)], None)
        } else {
            let p = if entry.period == 0 { 1 } else { entry.period };
            Self::new(vec![0.0], Some(dt * p as f64))
        }
    }

    /// General schedule: explicit times, then (if `period` is set) periodic exports.
    pub fn new(times: Vec<f64>, period: Option<f64>) -> Self {
        ExportSchedule { times, period, next: 0, last: 0.0, started: false }
    }

    /// Called at each step start (`AnimateBeginEvent`) with the current time; returns whether
    /// a record is written now.
    pub fn should_write(&mut self, time: f64, dt: f64) -> bool {
        let eps = 0.1 * dt;
        if self.next < self.times.len() {
            self.last = self.times[self.next];
            if time > self.last || (time - self.last).abs() < eps {
                self.started = true;
                self.next += 1;
                return true;
            }
            false
        } else if let (true, Some(period)) = (self.started, self.period) {
            let next_time = self.last + period;
            if time > next_time || (time - next_time).abs() < eps {
                self.last += period;
                return true;
            }
            false
        } else {
            false
        }
    }

    /// The times (as accumulated by the simulation: `t += dt` per step) at which records are
    /// written during `steps` steps starting from 0.
    pub fn simulate(mut self, dt: f64, steps: usize) -> Vec<f64> {
        let mut t = 0.0;
        let mut out = Vec::new();
        for _ in 0..steps {
            if self.should_write(t, dt) {
                out.push(t);
            }
            t += dt;
        }
        out
    }
}

/// Nominal export times of an entry (§5.4) with root time step `dt`, computed by
/// multiplication: `{0, dt·(N−1)}` for last-only entries, else `k·p·dt` for every `k·p < N`
/// (`p` = period, 1 if 0).
///
/// The actual writes happen at the accumulated step-start times that reach these values (see
/// [`ExportSchedule::simulate`]), e.g. `1.9800000000000013` for `0.02·99`, printed `1.98`.
pub fn export_times(entry: &RegressionEntry, dt: f64) -> Vec<f64> {
    if entry.last_only {
        vec![0.0, dt * (entry.steps as f64 - 1.0)]
    } else {
        let p = entry.period.max(1);
        (0..entry.steps).step_by(p).map(|k| dt * k as f64).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "# header\n\
        \n\
        ### refs ###\n\
        $REGRESSION_DIR/references/examples\n\
        \n\
        Demos/liver.scn 100 1e-4 1 1\n\
        A/b.scn 30 1e-4 \n\
        \x20#not a comment: has 1 field\n\
        A/c.scn 10 1e-8 0 0 5\n\
        A/d.scn 10\n\
        A/e.scn x 1e-4\n";

    fn entry(steps: usize, last_only: bool, period: usize) -> RegressionEntry {
        RegressionEntry { scene: "s.scn".into(), steps, epsilon: 1e-4, mapped: false, last_only, period, line: 1 }
    }

    #[test]
    fn parse_sample() {
        let l = RegressionList::parse(Path::new("/ex/list.regression-tests"), SAMPLE).unwrap();
        assert_eq!(l.reference_dir_line, "$REGRESSION_DIR/references/examples");
        assert_eq!(l.entries.len(), 3);
        assert_eq!(
            l.entries[0],
            RegressionEntry { scene: "Demos/liver.scn".into(), steps: 100, epsilon: 1e-4, mapped: true, last_only: true, period: 0, line: 6 }
        );
        assert_eq!((l.entries[1].mapped, l.entries[1].last_only), (false, false));
        assert_eq!(l.entries[1].line, 7);
        assert_eq!(l.entries[2].period, 5);
        assert_eq!(l.entries[2].epsilon, 1e-8);
        assert_eq!(l.problems.len(), 3, "{:?}", l.problems);
        assert!(l.problems[0].starts_with("line 8:"));
        assert!(l.problems[1].starts_with("line 10:"));
        assert!(l.problems[2].contains("`x`"));
        assert_eq!(l.scene_path(&l.entries[0]), PathBuf::from("/ex/Demos/liver.scn"));
        assert_eq!(l.reference_base(&l.entries[0], Path::new("/suite/references")), PathBuf::from("/suite/references/Demos/liver.scn.reference"));
    }

    #[test]
    fn reference_dir_resolution() {
        let l = RegressionList::parse(Path::new("/ex/l.regression-tests"), SAMPLE).unwrap();
        assert_eq!(l.resolve_reference_dir(Some(Path::new("/reg")), None).unwrap(), PathBuf::from("/reg/references/examples"));
        assert!(matches!(l.resolve_reference_dir(None, None), Err(RegressError::RegressionDirUnset { .. })));
        // Missing primary directory -> fallback, relative to the list directory.
        assert_eq!(l.resolve_reference_dir(Some(Path::new("/nonexistent")), Some(Path::new("refs"))).unwrap(), PathBuf::from("/ex/refs"));
        let rel = RegressionList::parse(Path::new("/ex/l"), "../refs\n").unwrap();
        assert_eq!(rel.resolve_reference_dir(None, None).unwrap(), PathBuf::from("/ex/../refs"));
        assert!(matches!(RegressionList::parse(Path::new("/x"), "# only\n\n"), Err(RegressError::MissingReferenceDir { .. })));
    }

    #[test]
    fn schedules() {
        let dt = 0.02;
        assert_eq!(export_times(&entry(100, true, 0), dt), vec![0.0, 1.98]);
        // Written at the accumulated times reaching them.
        let written = ExportSchedule::for_entry(&entry(100, true, 0), dt).simulate(dt, 100);
        assert_eq!(written, vec![0.0, 1.9800000000000013]);
        // Every step: T = 0, dt, ..., (N-1)dt.
        assert_eq!(export_times(&entry(5, false, 0), 0.1), vec![0.0, 0.1, 0.2, 0.30000000000000004, 0.4]);
        let written = ExportSchedule::for_entry(&entry(5, false, 0), 0.1).simulate(0.1, 5);
        assert_eq!(written, vec![0.0, 0.1, 0.2, 0.30000000000000004, 0.4]);
        assert_eq!(export_times(&entry(10, false, 3), 0.5), vec![0.0, 1.5, 3.0, 4.5]);
        let written = ExportSchedule::for_entry(&entry(10, false, 3), 0.5).simulate(0.5, 10);
        assert_eq!(written, vec![0.0, 1.5, 3.0, 4.5]);
        // N = 1 with last-only: times {0, 0}; the second would be written at the next step
        // start, which never comes within the run.
        let written = ExportSchedule::for_entry(&entry(1, true, 0), 0.01).simulate(0.01, 1);
        assert_eq!(written, vec![0.0]);
        // At most one record per step start even if several times are due: the second
        // time 0 is written at the following step start.
        let mut s = ExportSchedule::new(vec![0.0, 0.0], None);
        assert_eq!(s.clone().simulate(0.01, 3), vec![0.0, 0.01]);
        assert!(s.should_write(0.0, 0.01));
        assert!(s.should_write(0.01, 0.01));
        assert!(!s.should_write(0.02, 0.01));
        // Within 0.1·dt below the export time counts as reached.
        let mut s = ExportSchedule::new(vec![0.0, 0.5], None);
        assert!(s.should_write(0.0, 0.1));
        assert!(!s.should_write(0.4, 0.1));
        assert!(s.should_write(0.499, 0.1));
    }

    use settee_testkit::suite;

    #[test]
    fn real_state_list() {
        let Some(suite) = suite() else { return };
        let l = RegressionList::from_file(&suite.join("RegressionStateScenes.regression-tests")).unwrap();
        assert_eq!(l.reference_dir_line, "$REGRESSION_DIR/references/examples");
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        assert_eq!(l.entries.len(), 84);
        assert!(l.entries.iter().all(|e| e.last_only && e.period == 0));
        let mapped: Vec<&str> = l.entries.iter().filter(|e| e.mapped).map(|e| e.scene.as_str()).collect();
        assert_eq!(mapped.len(), 8);
        assert!(mapped.iter().all(|s| s.starts_with("Demos/")));
        let fembar = l.entries.iter().find(|e| e.scene.ends_with("FEMBAR_SparseLDLSolver.scn")).unwrap();
        assert_eq!((fembar.steps, fembar.epsilon), (100, 1e-8));
        let count_eps = |eps: f64| l.entries.iter().filter(|e| e.epsilon == eps).count();
        assert_eq!(count_eps(1e-2), 2);
        assert_eq!(count_eps(1e-4), 60); // `1e-4` and `0.0001`
        assert_eq!(count_eps(1e-8), 19);
        assert_eq!(count_eps(1e-5), 1);
        assert_eq!(count_eps(1e-6), 1);
        assert_eq!(count_eps(1e-7), 1);
        assert_eq!(l.entries.iter().map(|e| e.steps).max(), Some(10000));
        // Every listed scene and its reference marker exist in the suite copy (whose scenes
        // live in `scenes/` rather than next to the list).
        let refs = suite.join("references");
        for e in &l.entries {
            assert!(suite.join("scenes").join(&e.scene).is_file(), "{}", e.scene);
            assert!(l.reference_base(e, &refs).is_file(), "{}", e.scene);
        }
    }

    #[test]
    fn real_topology_list() {
        let Some(suite) = suite() else { return };
        let l = RegressionList::from_file(&suite.join("RegressionTopologyScenes.regression-tests")).unwrap();
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        // (spec §5.1 says 15; this copy has 14 lines, RemovingHexa2TetraProcess is commented)
        assert_eq!(l.entries.len(), 14);
        assert!(l.entries.iter().all(|e| e.steps == 30 && e.epsilon == 1e-4));
        let short: Vec<&RegressionEntry> = l.entries.iter().filter(|e| !e.mapped).collect();
        assert_eq!(short.len(), 1);
        assert!(short[0].scene.ends_with("RemovingTriangle2EdgeProcess.scn"));
        assert!(!short[0].last_only);
        let refs = suite.join("references");
        for e in &l.entries {
            assert!(l.reference_base(e, &refs).is_file(), "{}", e.scene);
        }
    }
}
