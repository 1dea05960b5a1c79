//! Diagnostics: positioned messages, and the error type of simulation stages.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// A position in a scene file (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourcePos {
    pub file: Arc<PathBuf>,
    pub line: u32,
    pub column: u32,
}

impl SourcePos {
    pub fn new(file: Arc<PathBuf>, line: u32, column: u32) -> SourcePos {
        SourcePos { file, line, column }
    }
    /// Line 1, column 1 of `file`, when nothing more precise is known.
    pub fn start_of(file: Arc<PathBuf>) -> SourcePos {
        SourcePos { file, line: 1, column: 1 }
    }
    pub fn file(&self) -> &std::path::Path {
        &self.file
    }
}

impl fmt::Display for SourcePos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// What went wrong where, and what to do about it.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub pos: Option<SourcePos>,
    /// The component concerned, as `Class 'name'`.
    pub subject: Option<String>,
    pub message: String,
    pub hint: Option<String>,
    /// Set for "this feature is not supported by Settee" messages, so `settee check` can list them.
    pub unsupported: bool,
}

impl Diagnostic {
    pub fn new(severity: Severity, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity, pos: None, subject: None, message: message.into(), hint: None, unsupported: false }
    }
    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, message)
    }
    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, message)
    }
    pub fn at(mut self, pos: Option<SourcePos>) -> Diagnostic {
        self.pos = pos;
        self
    }
    pub fn hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }
    pub fn subject(mut self, s: impl Into<String>) -> Diagnostic {
        self.subject = Some(s.into());
        self
    }
    pub fn info(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Info, message)
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
    pub fn unsupported(mut self) -> Diagnostic {
        self.unsupported = true;
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.pos {
            write!(f, "{p}: ")?;
        }
        write!(f, "{}: ", self.severity)?;
        if let Some(s) = &self.subject {
            write!(f, "{s}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

/// An error that stops a stage (init or step).
#[derive(Clone, Debug)]
pub struct SimError(pub Box<Diagnostic>);

impl SimError {
    pub fn new(message: impl Into<String>) -> SimError {
        SimError(Box::new(Diagnostic::error(message)))
    }
    pub fn unsupported(message: impl Into<String>) -> SimError {
        SimError(Box::new(Diagnostic::error(message).unsupported()))
    }
    pub fn hint(mut self, hint: impl Into<String>) -> SimError {
        self.0.hint = Some(hint.into());
        self
    }
    pub fn diagnostic(&self) -> &Diagnostic {
        &self.0
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SimError {}

pub type SimResult<T = ()> = Result<T, SimError>;
