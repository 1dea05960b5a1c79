//! SOFA scene files (`.scn` / `.xml`) for Settee.
//!
//! This crate turns scene text into a [`SceneDescription`]: a tree of
//! [`Element`]s (nodes and components with their attributes and source
//! positions), with `<include>`s and `Objects/<Class>.xml` prefabs expanded
//! and legacy `<Attribute>`/`<Data>` elements folded into attributes —
//! i.e. SOFA's first loading phase (spec `scene-format.md` §1.1–§1.6).
//! Creating components from the description is a separate stage.
//!
//! ```no_run
//! use settee_scene::{parse_scene_file, DataPath};
//! use std::path::Path;
//! let dp = DataPath::from_env(["/path/to/sofa/share", "/path/to/sofa/examples"]);
//! let scene = parse_scene_file(Path::new("scene.scn"), &dp, &|_class| true).unwrap();
//! for d in &scene.diagnostics { eprintln!("{d}"); }
//! ```

pub mod datapath;
pub mod diagnostic;
pub mod element;
pub mod error;
pub mod instantiate;
mod parse;
mod xml;

pub use datapath::{DataPath, DATA_PATH_ENV};
pub use diagnostic::{Diagnostic, Severity, SourcePos};
pub use element::{Attribute, Element, ElementKind, SceneDescription};
pub use error::SceneError;
pub use instantiate::{instantiate, instantiate_with, load_scene, load_scene_with, LoadError, LoadOptions};
pub use parse::{parse_scene_file, parse_scene_str};
pub use settee_core::names::{removed_class_message, renamed_class, resolve_template, template_alias};
pub use xml::decode_attribute_value;
