//! `ValuesFromIndices`: the values of a list at given indices (SOFA's Engine/Select).
//!
//! `out` lists `in[i]` for every `i` of `indices`, in order, repeats included; an index beyond
//! `in` is skipped with an error message, as SOFA does. `outStr` is `out` as text.

use settee_core::gformat::format_g6;
use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

/// The selected values (`k` reals each) and the indices beyond `values`.
pub fn select(values: &[f64], k: usize, indices: &[usize]) -> (Vec<f64>, Vec<usize>) {
    let n = values.len() / k;
    let mut out = Vec::with_capacity(indices.len() * k);
    let mut invalid = Vec::new();
    for &i in indices {
        if i < n {
            out.extend_from_slice(&values[i * k..(i + 1) * k]);
        } else {
            invalid.push(i);
        }
    }
    (out, invalid)
}

/// Find the values given a list of indices.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Vec6d", "Rigid3d"],
    create = |_| ValuesFromIndices,
    data = {
        /// input values
        #[alias("input")]
        "in" as IN: Coords,
        /// Indices of the values
        indices: Indices,
        /// Output values corresponding to the indices
        #[alias("output")]
        out: Coords,
        /// Output values corresponding to the indices, converted as a string
        outStr: Str,
    },
)]
#[derive(Clone)]
pub struct ValuesFromIndices;

impl ValuesFromIndices {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let k = cx.data().arity().coord.max(1);
        let d = cx.data();
        let n = d.get(Self::IN).len() / k;
        let (out, invalid) = select(d.get(Self::IN), k, d.get(Self::INDICES));
        if !invalid.is_empty() {
            cx.warn(format!("indices {invalid:?} are beyond the {n} input values and are skipped"));
        }
        let text = out.iter().map(|&x| format_g6(x)).collect::<Vec<_>>().join(" ");
        cx.data_mut().put(Self::OUT, out);
        cx.data_mut().put(Self::OUT_STR, text);
        Ok(())
    }
}

impl Component for ValuesFromIndices {
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
    use super::*;
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    /// rigidifiedSectionsInBeam.scn's selection: indices 2 2 0 1 of three Vec3 points give
    /// those points in order, repeats kept; an index beyond is skipped.
    #[test]
    fn selects_values_in_order_with_repeats() {
        let f = factory();
        let mut s = Scene::new("root");
        let e = add(&mut s, &f, Scene::ROOT, "ValuesFromIndices", &[("template", "Vec3"), ("in", "0 1 2  3 4 5  6 7 8.5"), ("indices", "2 2 0 1 9")]);
        init_scene(&mut s).unwrap();
        let d = &s.entry(e).data;
        assert_eq!(d.reals("out"), [6.0, 7.0, 8.5, 6.0, 7.0, 8.5, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(d.str("outStr"), "6 7 8.5 6 7 8.5 0 1 2 3 4 5");
        assert_eq!(select(&[1.0, 2.0, 3.0], 1, &[2, 0]), (vec![3.0, 1.0], vec![]));
    }
}
