//! `IndexValueMapper`: a per-index list of values, with given indices set to one value.
//!
//! Follows SOFA's `IndexValueMapper` (Vec3d): `outputValues` starts as `inputValues`; each index
//! of `indices` gets `value`, the list growing when an index is beyond its end (the new slots
//! before it take `defaultValue`). Chained mappers build heterogeneous material maps (per
//! tetrahedron Young's moduli). Computed as soon as parsed, at init and when an input changes.

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

/// The output list.
pub fn map_values(input: &[f64], indices: &[usize], value: f64, default: f64) -> Vec<f64> {
    let mut out = input.to_vec();
    for &i in indices {
        if i >= out.len() {
            out.resize(i + 1, default);
        }
        out[i] = value;
    }
    out
}

/// Input values to output values mapper. Includes indices rules, such as replacement, resize
///
/// The IndexValueMapper engine.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| IndexValueMapper,
    data = {
        /// Already existing values (can be empty)
        inputValues: Reals,
        /// Indices to map value on
        indices: Indices,
        /// Value to map indices on
        value: Real = "0",
        /// output: New map between indices and values
        outputValues: Reals,
        /// Default value for indices without any value
        defaultValue: Real = "1",
    },
)]
#[derive(Clone)]
pub struct IndexValueMapper;

impl IndexValueMapper {
    fn update(&mut self, cx: &mut InitCtx) {
        let d = cx.data();
        let out = map_values(d.get(Self::INPUT_VALUES), d.get(Self::INDICES), d.get(Self::VALUE), d.get(Self::DEFAULT_VALUE));
        cx.data_mut().put(Self::OUTPUT_VALUES, out);
    }
}

impl Component for IndexValueMapper {
    /// A force field may read `outputValues` while the scene loads.
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx);
        Ok(())
    }
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx);
        Ok(())
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    #[test]
    fn grows_with_default_values() {
        assert_eq!(map_values(&[5.0, 6.0], &[3, 0], 9.0, 1.0), [9.0, 6.0, 1.0, 9.0]);
        assert!(map_values(&[], &[], 9.0, 1.0).is_empty());
    }

    /// Two chained mappers, as Heterogeneous-TetrahedronFEMForceField.scn.
    #[test]
    fn chained() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "IndexValueMapper", &[("name", "a"), ("indices", "1 2"), ("value", "3e4")]);
        let b = add(&mut s, &f, Scene::ROOT, "IndexValueMapper", &[("indices", "4"), ("value", "3e5"), ("inputValues", "@a.outputValues")]);
        init_scene(&mut s).unwrap();
        assert_eq!(s.entry(b).data.reals("outputValues"), [1.0, 3e4, 3e4, 1.0, 3e5]);
    }
}
