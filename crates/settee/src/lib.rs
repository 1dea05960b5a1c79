//! The `settee` library behind the command-line runner: scene loading with every component
//! registered, state dumps in SOFA's regression format, the regression driver and the generated
//! component reference.

pub mod components;
pub mod constraint_export;
pub mod doc;
pub mod dump;
pub mod regress;
pub mod run;

pub use components::factory;
pub use run::{load, load_with, LoadOptions, LoadedScene};
