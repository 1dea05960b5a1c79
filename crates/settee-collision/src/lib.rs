//! SOFA's collision pipeline (spec: `collision.md`).
//!
//! Detection works on [`ModelGeometry`] snapshots — plain data taken from the collision model
//! components at the start of detection — so bounding trees, broad and narrow phases and the
//! intersection methods are plain functions over immutable inputs, and can run in parallel.
//! Their products are [`DetectionOutput`]s per pair of models, in SOFA's order.

pub mod components;
pub mod detection;
pub mod intersection;
#[doc(hidden)]
pub mod testing;

pub use detection::{Detection, DetectionError, DetectionSettings, PairOutputs};
pub use settee_core::collision::{geometry, output};
pub use settee_core::collision::{Aabb, DetectionOutput, IntersectionMethod, ModelGeometry, PairSupport, PrimitiveKind, Vec3};

pub use components::register;
