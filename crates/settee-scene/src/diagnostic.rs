//! Source positions and diagnostics: the core's types, shared by parsing, instantiation and
//! initialisation so every stage reports problems the same way.

pub use settee_core::diag::{Diagnostic, Severity, SourcePos};
