//! Support for SOFA's regression suite (spec `scene-format.md` §5).
//!
//! * [`gformat`]: C `%g` number formatting, which SOFA dumps (and the metric) depend on;
//! * [`reference`](mod@reference): reading/writing state (`*_mstate.txt.gz`) and topology
//!   (`*_topology.txt.gz`) dump files, tolerant of truncated gzip streams;
//! * [`list`]: parsing `.regression-tests` list files and computing dump schedules;
//! * [`metric`]: the exact error metric and comparison timing of SOFA's C++ `Regression_test`.
//!
//! The crate is pure: it knows nothing about scenes or simulation; the harness feeds it times and
//! flat state vectors.

pub mod error;
pub use settee_core::gformat;
pub mod list;
pub mod metric;
pub mod reference;

pub use error::RegressError;
pub use gformat::{format_g, format_g6};
pub use list::{RegressionEntry, RegressionList};
pub use metric::{error_by_dof, StateComparer};
pub use reference::{read_state_reference, read_topology_reference, StateRecord, TopologyRecord};
