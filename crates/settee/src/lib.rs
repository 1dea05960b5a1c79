//! The `settee` library behind the command-line runner: scene loading with every component
//! registered (and `--set` Data overrides), state dumps in SOFA's regression format, the
//! regression driver, the generated component reference, inspection of initialised scenes and
//! plots.

pub mod components;
pub mod constraint_export;
pub mod doc;
pub mod dump;
pub mod inspect;
pub mod overrides;
pub mod plot;
pub mod regress;
pub mod run;

pub use components::factory;
pub use overrides::Override;
pub use run::{load, load_with, LoadOptions, LoadedScene};
