//! `NearestPointROI`: pairs each point of a second state with the nearest point of a first state.
//!
//! Follows SOFA's `NearestPointROI` (Vec templates):
//! * `object1`, `object2` (default: the context state); the rest positions (`useRestPosition`,
//!   default) or the positions of both;
//! * the candidates are `inputIndices1` and `inputIndices2` (when empty: every point, written
//!   back into them);
//! * for each candidate `i2` of the second state, in order, the first candidate `i1` of the first
//!   state at the smallest distance (squared, over the whole coordinate) is kept when that squared
//!   distance is below `radius²`: it adds `i1` to `indices1`, `i2` to `indices2`, the edge
//!   `(2·i2, 2·i2 + 1)` to `edges`, `0 i1 1 i2` to `indexPairs` and the distance to `distances`;
//! * computed at init and again after the child nodes are initialised (SOFA computes when the
//!   outputs are first read); the outputs are not recomputed when the positions move
//!   (`useRestPosition="false"`).

use settee_core::role::{Engine, MechanicalState};
use settee_core::{component, Component, ComponentId, InitCtx, Layout, SimResult, VecId};

/// The pairs, as SOFA's `computeNearestPointMaps`; `x1`, `x2` with `cs` reals per point.
#[derive(Debug, Default, PartialEq)]
pub struct Pairs {
    pub indices1: Vec<usize>,
    pub indices2: Vec<usize>,
    pub distances: Vec<f64>,
}

pub fn nearest_pairs(x1: &[f64], x2: &[f64], cs: usize, candidates1: &[usize], candidates2: &[usize], radius: f64) -> Pairs {
    let dist2 = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| (q - p) * (q - p)).sum::<f64>();
    let mut out = Pairs::default();
    let max2 = radius * radius;
    for &i2 in candidates2 {
        let p2 = &x2[i2 * cs..(i2 + 1) * cs];
        // the first of the nearest, as `std::min_element`
        let mut best: Option<(usize, f64)> = None;
        for &i1 in candidates1 {
            let d = dist2(&x1[i1 * cs..(i1 + 1) * cs], p2);
            if best.is_none_or(|(_, bd)| d < bd) {
                best = Some((i1, d));
            }
        }
        if let Some((i1, d)) = best {
            if d < max2 {
                out.indices1.push(i1);
                out.indices2.push(i2);
                out.distances.push(d.sqrt());
            }
        }
    }
    out
}

/// Attach given pair of particles, projecting the positions of the second particles to the first ones.
///
/// The NearestPointROI engine.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Vec6d"],
    template_rule = FromPair,
    create = |args| NearestPointROI { layout: args.layout.unwrap_or(Layout::Vec3) },
    data = {
        /// Indices of the points to consider on the first model (default: all)
        inputIndices1: Indices,
        /// Indices of the points to consider on the second model (default: all)
        inputIndices2: Indices,
        /// Radius to search corresponding fixed point
        radius: Real = "1",
        /// If true will use restPosition only at init
        useRestPosition: Bool = "true",
        /// output: Indices from the first model associated to a dof from the second model
        indices1: Indices,
        /// output: Indices from the second model associated to a dof from the first model
        indices2: Indices,
        /// output: List of edge indices
        edges: IndexTuples(2),
        /// output: list of couples (parent index + index in the parent)
        indexPairs: IndexTuples(2),
        /// output: List of distances between pairs of points
        distances: Reals,
        /// Option to draw the positions pairs computed (rendering only)
        drawPairs: Bool = "false",
    },
    links = {
        /// First object associated to this component (default: the context state)
        object1: MechanicalState,
        /// Second object associated to this component (default: the context state)
        object2: MechanicalState,
    },
)]
#[derive(Clone)]
pub struct NearestPointROI {
    layout: Layout,
}

impl NearestPointROI {
    fn state(&self, cx: &InitCtx, link: &str) -> SimResult<ComponentId> {
        let c = cx.scene.link_targets(cx.id, link).first().copied().or_else(|| cx.scene.context_state(cx.node()));
        match c {
            Some(c) if cx.scene.entry(c).layout == Some(self.layout) => Ok(c),
            Some(c) => Err(cx.error(format!("`{link}` ({}) is not a {} state", cx.scene.entry(c).label(), self.layout.name()))),
            None => Err(cx.error(format!("no state for `{link}`")).hint("set object1 and object2 to two MechanicalObjects")),
        }
    }
}

impl Component for NearestPointROI {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }

    /// The states are often in child nodes, initialised after this engine: SOFA computes when
    /// the outputs are first read, here the pairs are computed again once the children are.
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

impl NearestPointROI {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s1, s2) = (self.state(cx, "object1")?, self.state(cx, "object2")?);
        let radius = cx.data().get(Self::RADIUS);
        if radius <= 0.0 {
            return Err(cx.error(format!("radius {radius} must be positive")));
        }
        let v = if cx.data().get(Self::USE_REST_POSITION) { VecId::REST_POSITION } else { VecId::POSITION };
        let read = |c: ComponentId| cx.scene.state_of(c).map(|s| cx.scene.store.get(s).read(v).to_vec()).unwrap_or_default();
        let (x1, x2) = (read(s1), read(s2));
        if x1.is_empty() || x2.is_empty() {
            return Ok(());
        }
        let cs = self.layout.coord_size();
        let (n1, n2) = (x1.len() / cs, x2.len() / cs);
        let d = cx.data();
        let mut c1 = d.get(Self::INPUT_INDICES1).to_vec();
        let mut c2 = d.get(Self::INPUT_INDICES2).to_vec();
        if c1.is_empty() {
            c1 = (0..n1).collect();
            cx.data_mut().put(Self::INPUT_INDICES1, c1.clone());
        }
        if c2.is_empty() {
            c2 = (0..n2).collect();
            cx.data_mut().put(Self::INPUT_INDICES2, c2.clone());
        }
        if let Some(i) = c1.iter().find(|&&i| i >= n1) {
            return Err(cx.error(format!("inputIndices1 has {i}, beyond the {n1} points of object1")));
        }
        if let Some(i) = c2.iter().find(|&&i| i >= n2) {
            return Err(cx.error(format!("inputIndices2 has {i}, beyond the {n2} points of object2")));
        }
        let p = nearest_pairs(&x1, &x2, cs, &c1, &c2, radius);
        let edges: Vec<usize> = p.indices2.iter().flat_map(|&i2| [2 * i2, 2 * i2 + 1]).collect();
        let pairs: Vec<usize> = p.indices1.iter().zip(&p.indices2).flat_map(|(&a, &b)| [0, a, 1, b]).collect();
        let out = cx.data_mut();
        out.put(Self::INDICES1, p.indices1);
        out.put(Self::INDICES2, p.indices2);
        out.put(Self::EDGES, edges);
        out.put(Self::INDEX_PAIRS, pairs);
        out.put(Self::DISTANCES, p.distances);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::factory;
    use settee_core::testing::add;
    use settee_core::Scene;

    /// Points 0..3 on x at 0, 1, 2, 3 and second points at 0.1, 2.5 (tie between 2 and 3: the
    /// first wins), 9 (too far).
    #[test]
    fn nearest_first_of_ties_within_radius() {
        let x1 = [0.0, 1.0, 2.0, 3.0];
        let x2 = [0.1, 2.5, 9.0];
        let p = nearest_pairs(&x1, &x2, 1, &[0, 1, 2, 3], &[0, 1, 2], 1.0);
        assert_eq!(p.indices1, [0, 2]);
        assert_eq!(p.indices2, [0, 1]);
        assert!((p.distances[0] - 0.1).abs() < 1e-15 && (p.distances[1] - 0.5).abs() < 1e-15);
        // candidates restrict the search; the radius bound is strict
        let p = nearest_pairs(&x1, &x2, 1, &[3], &[1], 0.5);
        assert!(p.indices1.is_empty());
    }

    #[test]
    fn scene_outputs() {
        let f = factory();
        let mut s = Scene::new("root");
        let a = s.add_node(Scene::ROOT, "a");
        let b = s.add_node(Scene::ROOT, "b");
        add(&mut s, &f, a, "MechanicalObject", &[("name", "mo"), ("position", "0 0 0  1 0 0  2 0 0")]);
        add(&mut s, &f, b, "MechanicalObject", &[("name", "mo"), ("position", "2 0 0.05  0 0 0.05  5 5 5")]);
        let e =
            add(&mut s, &f, Scene::ROOT, "NearestPointROI", &[("template", "Vec3"), ("object1", "@a/mo"), ("object2", "@b/mo"), ("radius", "0.1")]);
        // the states, in child nodes, are initialised after the engine
        settee_core::simulation::init_root(&mut s, &f).unwrap();
        let d = &s.entry(e).data;
        assert_eq!(d.indices("indices1"), [2, 0]);
        assert_eq!(d.indices("indices2"), [0, 1]);
        assert_eq!(d.indices("edges"), [0, 1, 2, 3]);
        assert_eq!(d.indices("indexPairs"), [0, 2, 1, 0, 0, 0, 1, 1]);
        assert_eq!(d.indices("inputIndices2"), [0, 1, 2]);
        assert!((d.reals("distances")[1] - 0.05).abs() < 1e-15);
    }
}
