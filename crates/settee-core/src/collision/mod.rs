//! The collision interface shared by the components of the collision family: the geometry
//! snapshot a collision model gives detection ([`ModelGeometry`]), what detection produces
//! ([`DetectionOutput`]), the intersection-method interface, and vector kernels in SOFA's
//! operation order. The algorithms and components live in the `settee-collision` crate; the
//! types live here so that every role can name them (spec: `collision.md`).

pub mod geometry;
pub mod kernels;
pub mod output;

pub use geometry::{Aabb, ModelGeometry, PrimitiveKind, Vec3};
pub use output::DetectionOutput;

/// How an intersection method handles a pair of primitive kinds (SOFA's `IntersectorMap::get`,
/// spec §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairSupport {
    /// Registered for (k1, k2) (`swap` false) or for (k2, k1) (`swap` true): the pair is then
    /// tested in the registered order.
    Supported { swap: bool },
    /// Registered as ignored: no test, no warning.
    Ignored,
    /// Not registered: SOFA warns once and never tests the pair.
    Unknown,
}

/// An intersection method: the box test used while traversing bounding trees and the
/// primitive tests of every registered pair of kinds.
pub trait IntersectionMethod: Send + Sync {
    /// SOFA's class name, for messages.
    fn name(&self) -> &'static str;
    /// The method's own alarm distance (0 for DiscreteIntersection).
    fn alarm_distance(&self) -> f64;
    /// The method's own contact distance (0 for DiscreteIntersection).
    fn contact_distance(&self) -> f64;
    /// Box overlap test between a box of model `ga` and a box of model `gb`; `same_box` is true
    /// when both are the same element of the same tree (self-collision, spec §3.2).
    fn boxes_overlap(
        &self,
        a: &Aabb,
        ga: &ModelGeometry,
        b: &Aabb,
        gb: &ModelGeometry,
        same_box: bool,
    ) -> bool;
    /// Whether the primitive pair (k1, k2) is registered.
    fn support(&self, k1: PrimitiveKind, k2: PrimitiveKind) -> PairSupport;
    /// Tests element `e1` of `g1` against element `e2` of `g2` (already in registered order)
    /// and appends the outputs it finds; returns how many it appended. Pairs not registered in
    /// this order, and element indices out of range, give nothing. The geometries must pass
    /// [`ModelGeometry::validate`]. `g1` and `g2` are the same model exactly when they are the
    /// same reference.
    fn intersect(
        &self,
        g1: &ModelGeometry,
        e1: usize,
        g2: &ModelGeometry,
        e2: usize,
        out: &mut Vec<DetectionOutput>,
    ) -> usize;
}
