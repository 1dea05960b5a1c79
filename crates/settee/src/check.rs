//! `settee check`: load and initialise scenes, print every warning and error with its position,
//! and say per scene and in total what happened.

use std::io::Write;
use std::path::PathBuf;

use settee_core::{Diagnostic, Factory, Severity};

/// What happened to one scene.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Loaded and initialised; it can run.
    Loaded { warnings: usize },
    /// Stopped by errors in the scene (bad values, missing files, failed init…).
    Failed { errors: usize, warnings: usize },
    /// Uses components or features Settee does not support; `what` lists them.
    Unsupported { what: Vec<String>, errors: usize, warnings: usize },
}

impl Verdict {
    pub fn is_loaded(&self) -> bool {
        matches!(self, Verdict::Loaded { .. })
    }

    fn counts(&self) -> (usize, usize) {
        match self {
            Verdict::Loaded { warnings } => (0, *warnings),
            Verdict::Failed { errors, warnings } | Verdict::Unsupported { errors, warnings, .. } => (*errors, *warnings),
        }
    }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Loaded { warnings } => write!(f, "loaded, {}", plural(*warnings, "warning")),
            Verdict::Failed { errors, warnings } => {
                write!(f, "FAILED: {}", plural(*errors, "error"))?;
                if *warnings > 0 {
                    write!(f, ", {}", plural(*warnings, "warning"))?;
                }
                Ok(())
            }
            Verdict::Unsupported { what, .. } => {
                let shown: Vec<&str> = what.iter().take(3).map(String::as_str).collect();
                write!(f, "unsupported: {}", shown.join("; "))?;
                if what.len() > shown.len() {
                    write!(f, "; and {} more", what.len() - shown.len())?;
                }
                Ok(())
            }
        }
    }
}

fn verdict_of_failure(diagnostics: &[Diagnostic]) -> Verdict {
    let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
    let mut what: Vec<String> = Vec::new();
    for d in diagnostics.iter().filter(|d| d.unsupported) {
        let m = d.message.lines().next().unwrap_or("").to_string();
        if !what.contains(&m) {
            what.push(m);
        }
    }
    if what.is_empty() {
        Verdict::Failed { errors, warnings }
    } else {
        Verdict::Unsupported { what, errors, warnings }
    }
}

/// Checks every scene, writing diagnostics, a line per scene and a final count into `out`.
/// Returns the verdicts, in order.
pub fn check_scenes(out: &mut dyn Write, scenes: &[PathBuf], factory: &Factory, load: &crate::LoadOptions) -> std::io::Result<Vec<Verdict>> {
    let mut verdicts = Vec::new();
    for path in scenes {
        let verdict = match crate::load_with(path, factory, load) {
            Ok(l) => {
                let warnings: Vec<_> = l.scene.messages.iter().filter(|m| m.severity >= Severity::Warning).collect();
                for w in &warnings {
                    writeln!(out, "{w}")?;
                }
                Verdict::Loaded { warnings: warnings.len() }
            }
            Err(f) => {
                for d in f.diagnostics.iter().filter(|d| d.severity >= Severity::Warning) {
                    writeln!(out, "{d}")?;
                }
                verdict_of_failure(&f.diagnostics)
            }
        };
        writeln!(out, "{}: {verdict}", path.display())?;
        verdicts.push(verdict);
    }
    writeln!(out, "{}", summary(&verdicts))?;
    Ok(verdicts)
}

/// `checked 3 scenes: 1 loaded, 1 failed, 1 unsupported; 2 errors, 4 warnings`.
pub fn summary(verdicts: &[Verdict]) -> String {
    let loaded = verdicts.iter().filter(|v| v.is_loaded()).count();
    let failed = verdicts.iter().filter(|v| matches!(v, Verdict::Failed { .. })).count();
    let unsupported = verdicts.len() - loaded - failed;
    let (errors, warnings) = verdicts.iter().map(Verdict::counts).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    format!(
        "checked {}: {loaded} loaded, {failed} failed, {unsupported} unsupported; {}, {}",
        plural(verdicts.len(), "scene"),
        plural(errors, "error"),
        plural(warnings, "warning")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_say_what_happened() {
        assert_eq!(Verdict::Loaded { warnings: 3 }.to_string(), "loaded, 3 warnings");
        assert_eq!(Verdict::Loaded { warnings: 1 }.to_string(), "loaded, 1 warning");
        assert_eq!(Verdict::Failed { errors: 2, warnings: 0 }.to_string(), "FAILED: 2 errors");
        let u = verdict_of_failure(&[
            Diagnostic::error("unknown component 'Foo'").unsupported(),
            Diagnostic::error("unknown component 'Foo'").unsupported(),
            Diagnostic::error("bad value"),
            Diagnostic::warning("w"),
        ]);
        assert_eq!(u, Verdict::Unsupported { what: vec!["unknown component 'Foo'".into()], errors: 3, warnings: 1 });
        assert_eq!(u.to_string(), "unsupported: unknown component 'Foo'");
        assert_eq!(
            summary(&[Verdict::Loaded { warnings: 2 }, Verdict::Failed { errors: 1, warnings: 1 }, u]),
            "checked 3 scenes: 1 loaded, 1 failed, 1 unsupported; 4 errors, 4 warnings"
        );
    }
}
