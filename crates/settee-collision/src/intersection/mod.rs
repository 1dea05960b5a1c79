//! Intersection methods (spec §7): tables of proximity queries keyed by pairs of primitive
//! kinds, producing [`DetectionOutput`]s.

mod ccd;
mod common;
pub(crate) mod discrete;
mod local_min_distance;
mod min_proximity;
mod new_proximity;

#[cfg(test)]
mod tests;

pub(crate) use settee_core::collision::kernels;
pub use settee_core::collision::{IntersectionMethod, PairSupport};

pub use ccd::{CcdIntersection, CcdSettings, Impact, SweepKind, SweptPair};
pub use discrete::DiscreteIntersection;
pub use local_min_distance::LocalMinDistance;
pub use min_proximity::MinProximityIntersection;
pub use new_proximity::{NewProximityIntersection, StoredNormalWrite};
