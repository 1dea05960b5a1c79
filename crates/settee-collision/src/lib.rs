//! SOFA's collision pipeline (spec: `collision.md`).
//!
//! Detection works on [`ModelGeometry`] snapshots — plain data taken from the collision model
//! components at the start of detection — so bounding trees, broad and narrow phases and the
//! intersection methods are plain functions over immutable inputs, and can run in parallel.
//! Their products are [`DetectionOutput`]s per pair of models, in SOFA's order.

pub mod detection;
pub mod geometry;
pub mod intersection;
pub mod output;

pub use detection::{Detection, DetectionError, DetectionSettings, PairOutputs};
pub use geometry::{Aabb, ModelGeometry, PrimitiveKind, Vec3};
pub use intersection::{IntersectionMethod, PairSupport};
pub use output::DetectionOutput;
