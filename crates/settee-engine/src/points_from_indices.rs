//! `PointsFromIndices`: the positions of a list of points (SOFA's Engine/Select, Vec3 only).
//!
//! `indices_position` lists `position[i]` for every `i` of `indices`, in order, skipping a point
//! equal (every coordinate within 1e-6, SOFA's `Vec` equality) to one already listed. Without
//! `position`, the positions of the nearest Vec3 mechanical state (this node, then its
//! ancestors) are linked in, so the output follows them as they move. With no positions at all
//! the output is left as it was, as in SOFA. An index beyond the positions is an error (SOFA
//! reads past its array).

use settee_core::role::{self, Engine};
use settee_core::{component, Component, ComponentId, InitCtx, SimResult};

/// SOFA's `Vec` equality: every component differs by less than 1e-6.
fn same_point(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
}

/// The selected points of `position` (3 reals each), duplicates skipped; `Err(i)` names the
/// first index beyond the points.
pub fn select(position: &[f64], indices: &[usize]) -> Result<Vec<f64>, usize> {
    let n = position.len() / 3;
    let mut out: Vec<f64> = Vec::with_capacity(indices.len() * 3);
    for &i in indices {
        if i >= n {
            return Err(i);
        }
        let p = &position[i * 3..i * 3 + 3];
        if !out.chunks_exact(3).any(|q| same_point(q, p)) {
            out.extend_from_slice(p);
        }
    }
    Ok(out)
}

/// Find the points given a list of indices.
///
/// The PointsFromIndices engine.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| PointsFromIndices,
    data = {
        /// Position coordinates of the degrees of freedom (default: the context Vec3 state's positions)
        position: Coords,
        /// Indices of the points
        indices: Indices,
        /// output: Coordinates of the points contained in indices
        indices_position: Coords,
    },
)]
#[derive(Clone)]
pub struct PointsFromIndices;

impl PointsFromIndices {
    /// SOFA's `getContext()->get(mstate)` for a Vec3 state: this node, then each ancestor.
    fn context_vec3_state(cx: &InitCtx) -> Option<ComponentId> {
        let scene = &*cx.scene;
        let mut cur = Some(cx.node());
        while let Some(n) = cur {
            let found = scene.node(n).objects.iter().copied().find(|&c| {
                let e = scene.entry(c);
                e.plays(role::MECHANICAL_STATE) && e.template == "Vec3d"
            });
            if found.is_some() {
                return found;
            }
            cur = scene.node(n).parent();
        }
        None
    }

    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let position = d.get(Self::POSITION);
        if position.is_empty() {
            return Ok(());
        }
        let indices = d.get(Self::INDICES);
        let n = position.len() / 3;
        let out = select(position, indices).map_err(|i| {
            cx.error(format!("index {i} is beyond the {n} points of `position`")).hint("indices must be smaller than the number of positions")
        })?;
        cx.data_mut().put(Self::INDICES_POSITION, out);
        Ok(())
    }
}

impl Component for PointsFromIndices {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if cx.data().get(Self::POSITION).is_empty() && !cx.data().is_given(Self::POSITION) {
            if let Some(ms) = Self::context_vec3_state(cx) {
                cx.scene.link_data(cx.id, "position", ms, "position")?;
            }
        }
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

    /// Indices 2, 0, 2 of three points: points 2 and 0 in that order, the repeated one once; a
    /// point within 1e-6 of a listed one is skipped too.
    #[test]
    fn selects_points_in_order_without_duplicates() {
        let x = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        assert_eq!(select(&x, &[2, 0, 2]).unwrap(), [6.0, 7.0, 8.0, 0.0, 1.0, 2.0]);
        let close = [1.0, 1.0, 1.0, 1.0 + 5e-7, 1.0, 1.0, 1.0 + 2e-6, 1.0, 1.0];
        assert_eq!(select(&close, &[0, 1, 2]).unwrap(), [1.0, 1.0, 1.0, 1.0 + 2e-6, 1.0, 1.0]);
        assert_eq!(select(&x, &[1, 3]), Err(3));
    }

    /// In a child node, without `position`: the parent's Vec3 positions, as in
    /// InextensiblePendulum.scn (`indices="19"` there); explicit positions otherwise.
    #[test]
    fn reads_the_context_state_or_explicit_positions() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Vec1d"), ("position", "7 8")]);
        let child = s.add_node(Scene::ROOT, "visual");
        let grand = s.add_node(child, "deeper");
        add(&mut s, &f, child, "MechanicalObject", &[("position", "0 0 0  1 2 3  4 5 6")]);
        let e = add(&mut s, &f, grand, "PointsFromIndices", &[("indices", "2 1")]);
        let g = add(&mut s, &f, grand, "PointsFromIndices", &[("position", "9 9 9  -1 -2 -3"), ("indices", "1")]);
        init_scene(&mut s).unwrap();
        assert_eq!(s.entry(e).data.reals("indices_position"), [4.0, 5.0, 6.0, 1.0, 2.0, 3.0]);
        assert_eq!(s.entry(g).data.reals("indices_position"), [-1.0, -2.0, -3.0]);
    }

    #[test]
    fn out_of_range_index_is_an_error() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "PointsFromIndices", &[("position", "0 0 0  1 1 1"), ("indices", "0 5")]);
        let err = init_scene(&mut s).unwrap_err();
        let d = err.diagnostic();
        assert!(d.message.contains("index 5 is beyond the 2 points"), "{}", d.message);
        assert!(d.hint.is_some());
    }

    /// The default position is a live link: when the state moves, the output follows at the
    /// next live-data pass (SOFA's engine updates when its input is read after a change).
    #[test]
    fn output_follows_the_moving_state() {
        let f = factory();
        let mut s = Scene::new("root");
        let ms = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 2 3")]);
        let e = add(&mut s, &f, Scene::ROOT, "PointsFromIndices", &[("indices", "1")]);
        settee_core::simulation::init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(e).data.reals("indices_position"), [1.0, 2.0, 3.0]);
        let st = s.state_of(ms).unwrap();
        s.store.get_mut(st).write(settee_core::VecId::POSITION)[4] = 20.0;
        settee_core::simulation::update_live_data(&mut s).unwrap();
        assert_eq!(s.entry(e).data.reals("indices_position"), [1.0, 20.0, 3.0]);
    }
}
