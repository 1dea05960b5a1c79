//! Fatal scene-loading errors (the scene cannot be loaded at all).
//!
//! Problems inside included files (missing file, malformed XML) are *not*
//! fatal in SOFA: the include element is dropped with an error message and
//! loading continues. They are reported as [`crate::Diagnostic`]s with
//! severity `Error` instead (the message text is produced by this type).

use std::path::PathBuf;

use crate::diagnostic::SourcePos;

#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// The scene file could not be read.
    #[error("cannot read scene file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The XML is not well formed. `message` is the XML parser's description
    /// of what it expected / found.
    #[error("{pos}: malformed XML: {message}")]
    Xml { pos: SourcePos, message: String },

    /// The document contains no element at all.
    #[error("{}: empty document (no root element)", file.display())]
    EmptyDocument { file: PathBuf },

    /// The document root did not produce a Node (SOFA aborts the load).
    #[error("{pos}: the document root <{tag}> does not define a Node: {reason}")]
    RootNotNode { pos: SourcePos, tag: String, reason: String },
}

impl SceneError {
    /// The message without the position (for diagnostics that carry the position themselves).
    pub fn detail(&self) -> String {
        match self {
            SceneError::Xml { message, .. } => format!("malformed XML: {message}"),
            SceneError::RootNotNode { tag, reason, .. } => format!("the document root <{tag}> does not define a Node: {reason}"),
            SceneError::Io { .. } | SceneError::EmptyDocument { .. } => self.to_string(),
        }
    }

    /// The position of the error, or the start of the file it concerns.
    pub fn pos_or_file_start(&self) -> SourcePos {
        match self {
            SceneError::Xml { pos, .. } | SceneError::RootNotNode { pos, .. } => pos.clone(),
            SceneError::Io { path, .. } => SourcePos::start_of(std::sync::Arc::new(path.clone())),
            SceneError::EmptyDocument { file } => SourcePos::start_of(std::sync::Arc::new(file.clone())),
        }
    }

    /// The source position of the error, when there is one.
    pub fn pos(&self) -> Option<&SourcePos> {
        match self {
            SceneError::Xml { pos, .. } | SceneError::RootNotNode { pos, .. } => Some(pos),
            SceneError::Io { .. } | SceneError::EmptyDocument { .. } => None,
        }
    }
}
