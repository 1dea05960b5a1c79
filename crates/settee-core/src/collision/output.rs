//! What detection produces for one pair of colliding primitives (SOFA's `DetectionOutput`,
//! spec §6).

use super::geometry::Vec3;

#[derive(Clone, Debug, PartialEq)]
pub struct DetectionOutput {
    /// The element of the first model and the element of the second (in the pair order fixed by
    /// the intersection method's registration, spec §5.2).
    pub elem: (usize, usize),
    /// Contact identifier, unique per intended contact for the model pair (each pair type
    /// defines it, spec §7); penalty responses merge outputs with equal ids.
    pub id: i64,
    /// Contact point on element 1 and on element 2 (world coordinates).
    pub point: [Vec3; 2],
    /// Unit vector from model 1 towards model 2.
    pub normal: Vec3,
    /// Signed gap: distance minus the pair's contact distance.
    pub value: f64,
}
