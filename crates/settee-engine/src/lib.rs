//! Data engines: components that compute Data from other Data at init (SOFA's `DataEngine`s).

pub mod box_roi;

pub use box_roi::BoxROI;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&box_roi::CLASS);
}
