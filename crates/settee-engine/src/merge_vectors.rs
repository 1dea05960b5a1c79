//! `MergeVectors`: the concatenation of `nbInputs` vectors (SOFA's Engine/Generate).
//!
//! `output` is `input1`, then `input2`, … `inputN` (N = `nbInputs`, an indexed Data family).
//! The template names the element type (`vector<i>` = SOFA's `Data<int>`, `vector<Vec3d>`, …):
//! values are kept in groups of that many scalars, so that a link to the output reads whole
//! elements.

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

/// Apply a merge operation to combine several inputs.
#[component(
    module = "Sofa.Component.Engine.Generate",
    markers = [Engine],
    templates = [
        "vector<d>",
        "vector<i>",
        "vector<bool>",
        "vector<Vec2I>",
        "vector<Vec2d>",
        "vector<Vec3d>",
        "vector<Vec4d>",
        "vector<RigidCoord2d>",
        "vector<RigidDeriv2d>",
        "vector<RigidCoord3d>",
        "vector<RigidDeriv3d>"
    ],
    default_template = "vector<d>",
    create = |_| MergeVectors,
    data = {
        /// Number of input vectors
        nbInputs: Int = "2",
        /// Input vector i
        #[indexed(nbInputs)]
        "input" as INPUT: Coords,
        /// Output vector
        output: Coords,
    },
)]
#[derive(Clone)]
pub struct MergeVectors;

impl MergeVectors {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        if let Err((count, n)) = cx.data_mut().resize_families() {
            return Err(cx
                .error(format!("{count}={n} is too many inputs"))
                .hint(format!("{count} can be at most {}", settee_core::data::MAX_FAMILY_COUNT)));
        }
        let d = cx.data();
        let out: Vec<f64> = (1..=d.family_len(Self::INPUT)).flat_map(|i| d.get_at(Self::INPUT, i).iter().copied()).collect();
        cx.data_mut().put(Self::OUTPUT, out);
        Ok(())
    }
}

impl Component for MergeVectors {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use crate::test_support::{factory, init_scene};
    use settee_core::data::Value;
    use settee_core::testing::add;
    use settee_core::Scene;

    /// EllipsoidForceField.scn's use: two index lists (`Data<int>`) give one list, in input
    /// order, repeats kept.
    #[test]
    fn merges_index_lists_in_order() {
        let f = factory();
        let mut s = Scene::new("root");
        let e = add(
            &mut s,
            &f,
            Scene::ROOT,
            "MergeVectors",
            &[("template", "Data<int>"), ("nbInputs", "3"), ("input1", "4 5"), ("input2", "1"), ("input3", "5 0")],
        );
        init_scene(&mut s).unwrap();
        assert_eq!(s.entry(e).data.reals("output"), [4.0, 5.0, 1.0, 5.0, 0.0]);
    }

    /// `vector<Vec3d>` keeps whole points: the output is grouped by 3.
    #[test]
    fn vec3_elements_stay_grouped() {
        let f = factory();
        let mut s = Scene::new("root");
        let e = add(&mut s, &f, Scene::ROOT, "MergeVectors", &[("template", "vector<Vec3d>"), ("input1", "1 2 3"), ("input2", "4 5 6  7 8 9")]);
        init_scene(&mut s).unwrap();
        assert_eq!(s.entry(e).data.field("output").unwrap().value, Value::Reals { arity: 3, v: (1..=9).map(f64::from).collect() });
    }
}
