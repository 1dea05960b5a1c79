//! `NodalMassDensity`: a mass density per node, read by `FEMMass`.
//!
//! Node `i` has density `property[i]`; nodes beyond the list take its **last** value, and an
//! empty list means the default density 1 (SOFA's `BaseNodalProperty::getNodeProperty`).

use settee_core::{component, Component};

/// Definition of a nodal mass density (one value per DOF).
///
/// The component holds no state: its `property` Data is read by the masses that use it
/// (`NodalMassDensity::PROPERTY`).
#[component(
    module = "Sofa.Component.Mass",
    data = {
        /// mass density of each node (nodes beyond the list take its last value)
        property: Reals = "1",
    },
)]
#[derive(Clone, Default)]
pub struct NodalMassDensity;

impl Component for NodalMassDensity {}

/// Density used when the list is empty.
pub const DEFAULT_DENSITY: f64 = 1.0;

/// The density of node `i` given the `property` list.
pub fn node_density(property: &[f64], i: usize) -> f64 {
    property.get(i).or(property.last()).copied().unwrap_or(DEFAULT_DENSITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beyond_the_list_the_last_value_is_used() {
        assert_eq!(node_density(&[1100.0], 0), 1100.0);
        assert_eq!(node_density(&[1100.0], 57), 1100.0);
        assert_eq!(node_density(&[1.0, 2.0, 3.0], 1), 2.0);
        assert_eq!(node_density(&[1.0, 2.0, 3.0], 9), 3.0);
        assert_eq!(node_density(&[], 4), 1.0);
    }
}
