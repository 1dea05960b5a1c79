//! The `settee` library behind the command-line runner.
//!
//! To embed Settee, start with [`Simulation`]: load a SOFA scene file, step it, read states as
//! nalgebra vectors. The rest is what the `settee` binary is made of: [`load`] (scene loading
//! with every component registered, [`factory`]), [`run::simulate`] (the stepping loop with its
//! observers), state dumps in SOFA's regression format ([`dump`]), the regression driver
//! ([`regress`]), the generated component reference ([`doc`]), `--set` Data overrides
//! ([`Override`], [`load_with`]), inspection of initialised scenes and plots.

pub mod bench;
pub mod check;
pub mod components;
pub mod constraint_export;
pub mod doc;
pub mod drawing;
pub mod dump;
pub mod guard;
pub mod inspect;
pub mod lint;
pub mod overrides;
pub mod plot;
pub mod regress;
pub mod run;
pub mod simulation;
pub mod studio;
pub mod topology_dump;
pub mod view;
pub mod vtk;

pub use components::factory;

pub use overrides::Override;
pub use run::{load, load_with, LoadOptions, LoadedScene};
pub use simulation::Simulation;

/// `docs/writing-components.md`, whose complete example component is compiled and run as a
/// doc-test (`cargo test -p settee --doc`), so the guide stays true of the code.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/writing-components.md")]
pub struct WritingComponentsGuide;
