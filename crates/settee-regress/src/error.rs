//! Error type shared by all modules of the crate.

use std::path::PathBuf;

/// Errors raised while reading or writing regression files.
///
/// Every variant names the file involved; parse errors also carry the 1-based line number and
/// what was expected there.
#[derive(Debug, thiserror::Error)]
pub enum RegressError {
    /// An I/O operation (open, read, write, flush) on `path` failed.
    #[error("{}: I/O error while {action}: {source}", path.display())]
    Io {
        path: PathBuf,
        /// What was being done, e.g. "opening", "writing a record".
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// The gzip stream of `path` is corrupt (as opposed to merely truncated, which is tolerated).
    #[error("{}: corrupt gzip stream after {decoded} decoded bytes: {source}", path.display())]
    Gzip {
        path: PathBuf,
        decoded: usize,
        #[source]
        source: std::io::Error,
    },

    /// Line `line` of `path` does not have the expected form.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        path: PathBuf,
        /// 1-based line number in the (decompressed) text.
        line: usize,
        /// What was found and what was expected.
        message: String,
    },

    /// A `.regression-tests` list has no reference-directory line.
    #[error("{}: no reference directory line (the first non-comment line)", path.display())]
    MissingReferenceDir { path: PathBuf },

    /// The reference directory line uses `$REGRESSION_DIR` but no value was provided.
    #[error(
        "{}: reference directory `{line}` uses $REGRESSION_DIR, which is not set",
        path.display()
    )]
    RegressionDirUnset { path: PathBuf, line: String },

    /// A caller-provided vector does not match a declared element count.
    #[error("{what}: expected {expected} values, got {got}")]
    Length { what: &'static str, expected: usize, got: usize },
}

impl RegressError {
    pub(crate) fn io(path: impl Into<PathBuf>, action: &'static str, source: std::io::Error) -> Self {
        RegressError::Io { path: path.into(), action, source }
    }

    pub(crate) fn parse(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        RegressError::Parse { path: path.into(), line, message: message.into() }
    }
}
