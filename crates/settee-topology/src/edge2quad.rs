//! `Edge2QuadTopologicalMapping` (`TMAP/Edge2QuadTopologicalMapping.cpp`): the quads of a tube
//! around a line of edges, as a visual skin of a beam.
//!
//! Each input point `p` gets a circle of `N = nbPointsOnEachCircle` output points `p·N + j`;
//! each input edge `(p0, p1)` gets `N` quads `(p0·N+j, p1·N+j, p1·N+j', p0·N+j')` with
//! `j' = (j+1) mod N` (reversed, `(q3 q2 q1 q0)`, with `flipNormals`; with an `edgeList`, only
//! those edges, and the flipped order is then `(q0 q3 q2 q1)`, as SOFA writes it). The output
//! container is cleared, given `N·n` points, filled and re-initialised (see
//! [`crate::topological_mapping`]).
//!
//! When the output's node has a Vec3 mechanical state, its positions are placed as SOFA does it
//! at init: around the frame `k` of the input node's Rigid3 state, point `k·N + j` is
//! `c_k + (Y·cos θ_j + Z·sin θ_j)·radius` (`θ_j = 2πj/N`, `Y`, `Z` the frame's rotated y and z
//! axes), or an ellipse `c_k + Y·cos θ_j·radius + Z·sin θ_j·radiusFocal` when `radiusFocal > 0`
//! (then `Z` is the rotated `focalAxis` and `Y = Z × x`). A `TubularMapping` usually places them
//! again afterwards. Topological changes are not propagated.

use settee_core::role::{self, Topology, TopologyAlgorithms};
use settee_core::{component, Component, ComponentId, InitCtx, Layout, SimResult, VecId};

use crate::set_container::SetKind;
use crate::topological_mapping::{fill_output, find_modifier, io_topologies, mesh_of, point_count, topology_type, NewElements};

/// Builds the quads of a tube around the edges of the input.
///
/// The Edge2QuadTopologicalMapping component.
#[component(
    module = "Sofa.Component.Topology.Mapping",
    markers = [TopologyAlgorithms],
    create = |_| Edge2QuadTopologicalMapping,
    data = {
        /// Discretization of created circles
        nbPointsOnEachCircle: Int = "0",
        /// Radius of created circles in yz plan
        radius: Real = "1",
        /// If greater than 0., radius in focal axis of created ellipses
        radiusFocal: Real = "0",
        /// In case of ellipses
        focalAxis: Fixed(3) = "0 0 1",
        /// list of input edges for the topological mapping: by default, all considered
        edgeList: Indices,
        /// Flip Normal ? (Inverse point order when creating quad)
        flipNormals: Bool = "false",
    },
    links = {
        /// input topology (default: the parent node's topology, `@../`)
        input: Topology,
        /// output topology container (default: this node's topology, `@./`)
        output: Topology,
        /// Output container storing Quads (default: the output)
        toQuadContainer: Topology,
        /// Output modifier handling Quads (default: found in the output's context)
        toQuadModifier: TopologyAlgorithms,
    },
)]
#[derive(Clone)]
pub struct Edge2QuadTopologicalMapping;

/// The `N` quads around edge `(p0, p1)`.
pub fn tube_quads(p0: usize, p1: usize, n: usize, order: QuadOrder) -> Vec<[usize; 4]> {
    (0..n)
        .map(|j| {
            let (q0, q1, q2, q3) = (p0 * n + j, p1 * n + j, p1 * n + (j + 1) % n, p0 * n + (j + 1) % n);
            match order {
                QuadOrder::Direct => [q0, q1, q2, q3],
                QuadOrder::Reversed => [q3, q2, q1, q0],
                QuadOrder::ReversedFromFirst => [q0, q3, q2, q1],
            }
        })
        .collect()
}

/// The vertex order of the quads created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuadOrder {
    Direct,
    /// `flipNormals` over all edges.
    Reversed,
    /// `flipNormals` with an `edgeList`.
    ReversedFromFirst,
}

/// SOFA's quaternion → rotation matrix (row-major), for the same rounding as its
/// `writeRotationMatrix`.
fn rotation_matrix(q: [f64; 4]) -> [[f64; 3]; 3] {
    let [x, y, z, w] = q;
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (z * x + y * w)],
        [2.0 * (x * y + z * w), 1.0 - 2.0 * (z * z + x * x), 2.0 * (y * z - x * w)],
        [2.0 * (z * x - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (y * y + x * x)],
    ]
}

fn mat_vec(m: &[[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
}

/// The circle (or ellipse) points around Rigid3 frames `x` (7 reals each): `n` per frame.
pub fn circle_points(x: &[f64], n: usize, radius: f64, focal: Option<(f64, [f64; 3])>) -> Vec<[f64; 3]> {
    let (y0, z0) = match focal {
        Some((_, axis)) => {
            let l = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
            let z = if l > 0.0 { [axis[0] / l, axis[1] / l, axis[2] / l] } else { axis };
            // Y = Z × (1, 0, 0)
            ([0.0, z[2], -z[1]], z)
        }
        None => ([0.0, 1.0, 0.0], [0.0, 0.0, 1.0]),
    };
    let mut out = Vec::with_capacity(x.len() / 7 * n);
    for f in x.chunks_exact(7) {
        let r = rotation_matrix([f[3], f[4], f[5], f[6]]);
        let (y, z) = (mat_vec(&r, y0), mat_vec(&r, z0));
        for j in 0..n {
            let theta = 2.0 * j as f64 * std::f64::consts::PI / n as f64;
            let (s, c) = theta.sin_cos();
            let p = match focal {
                Some((rf, _)) => [0, 1, 2].map(|a| f[a] + y[a] * c * radius + z[a] * s * rf),
                None => [0, 1, 2].map(|a| f[a] + (y[a] * c + z[a] * s) * radius),
            };
            out.push(p);
        }
    }
    out
}

impl Edge2QuadTopologicalMapping {
    /// The output container: `toQuadContainer` when set, else the `output` link.
    fn container(cx: &InitCtx, output: ComponentId) -> ComponentId {
        cx.scene.link_targets(cx.id, "toQuadContainer").first().copied().unwrap_or(output)
    }
}

impl Component for Edge2QuadTopologicalMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let (radius, radius_focal) = (d.get(Self::RADIUS), d.get(Self::RADIUS_FOCAL));
        if d.is_given(Self::RADIUS) && radius < f64::MIN_POSITIVE {
            return Err(cx.error(format!("radius is zero or negative ({radius})")).hint("give a positive radius"));
        }
        let focal = (d.is_given(Self::RADIUS_FOCAL) && radius_focal >= f64::MIN_POSITIVE).then(|| (radius_focal, d.get(Self::FOCAL_AXIS)));
        let focal_ignored = d.is_given(Self::RADIUS_FOCAL) && focal.is_none();
        let n = d.get(Self::NB_POINTS_ON_EACH_CIRCLE).max(0) as usize;
        let flip = d.get(Self::FLIP_NORMALS);
        let edge_list: Vec<usize> = d.get(Self::EDGE_LIST).to_vec();
        if focal_ignored {
            cx.warn(format!("radiusFocal is zero or negative ({radius_focal}): circles are created"));
        }

        let (input, output) = io_topologies(cx)?;
        let output = Self::container(cx, output);
        for (which, id, want) in [("input", input, SetKind::Edge), ("output", output, SetKind::Quad)] {
            let got = topology_type(cx.scene, id);
            if got != want {
                return Err(cx
                    .error(format!(
                        "the {which} topology {} is a {} topology; {} elements are expected",
                        cx.scene.entry(id).label(),
                        got.name(),
                        want.name()
                    ))
                    .hint(if want == SetKind::Edge { "link `input` to a line of edges" } else { "link `output` to a QuadSetTopologyContainer" }));
            }
        }
        let out_node = cx.scene.entry(output).node;
        if cx.scene.link_targets(cx.id, "toQuadModifier").is_empty() && find_modifier(cx.scene, out_node, SetKind::Quad).is_none() {
            return Err(cx
                .error(format!("no QuadSetTopologyModifier in the output topology's context ('{}')", cx.scene.node(out_node).name))
                .hint("add a QuadSetTopologyModifier next to the output container"));
        }
        let from = mesh_of(cx, input)?;
        let nb_in = point_count(cx.scene, input);

        // The points, into the output node's Vec3 state, from the input node's Rigid3 frames.
        let in_node = cx.scene.entry(input).node;
        let to_state = cx.scene.slot(out_node, role::MECHANICAL_STATE).and_then(|c| cx.scene.state_of(c));
        if let Some(to) = to_state.filter(|s| cx.state_layout(*s) == Layout::Vec3) {
            let from_state = cx.scene.slot(in_node, role::MECHANICAL_STATE).and_then(|c| cx.scene.state_of(c));
            let Some(from_state) = from_state.filter(|s| cx.state_layout(*s) == Layout::Rigid3) else {
                return Err(cx
                    .error(format!("the input topology's node '{}' has no Rigid3 state to place the circles around", cx.scene.node(in_node).name))
                    .hint("Edge2QuadTopologicalMapping places its points around the frames of a Rigid3 MechanicalObject"));
            };
            let x = cx.read_vec(from_state, VecId::POSITION);
            if x.len() < 7 * nb_in {
                return Err(cx.error(format!("the input's Rigid3 state has {} frames but the input topology {nb_in} points", x.len() / 7)));
            }
            let points = circle_points(&x[..7 * nb_in], n, radius, focal);
            let st = cx.scene.store.get_mut(to);
            st.resize(nb_in * n);
            let pos = st.write(VecId::POSITION);
            pos.copy_from_slice(&points.iter().flatten().copied().collect::<Vec<f64>>());
        }

        let mut new = NewElements { nb_points: Some(nb_in * n), ..Default::default() };
        let edges: Vec<usize> = if edge_list.is_empty() { (0..from.edges.len()).collect() } else { edge_list.clone() };
        let order = match (flip, edge_list.is_empty()) {
            (false, _) => QuadOrder::Direct,
            (true, true) => QuadOrder::Reversed,
            (true, false) => QuadOrder::ReversedFromFirst,
        };
        for i in edges {
            let Some(e) = from.edges.get(i) else {
                return Err(cx.error(format!("edgeList names edge {i} but the input has {} edges", from.edges.len())));
            };
            new.quads.extend(tube_quads(e[0], e[1], n, order));
        }
        fill_output(cx, output, new, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{add, factory_and_scene, init_scene};
    use crate::SetTopologyContainer;
    use settee_core::Scene;

    /// Two edges along x on three Rigid3 frames, the second frame turned by 90° about x.
    fn scene(extra: &[(&str, &str)]) -> (Scene, ComponentId, ComponentId) {
        let (f, mut scene) = factory_and_scene();
        add(&f, &mut scene, Scene::ROOT, "EdgeSetTopologyContainer", &[("name", "line"), ("edges", "0 1 1 2")]);
        let h = std::f64::consts::FRAC_1_SQRT_2.to_string();
        let pos = format!("0 0 0 0 0 0 1  1 0 0 {h} 0 0 {h}  2 0 0 0 0 0 1");
        f.create(
            &mut scene,
            Scene::ROOT,
            "MechanicalObject",
            Some("Rigid3"),
            crate::test_util::attrs(&[("position", &pos)]),
            None,
            std::path::Path::new("."),
        )
        .unwrap();
        let child = scene.add_node(Scene::ROOT, "tube");
        let mo = add(&f, &mut scene, child, "MechanicalObject", &[("name", "skin")]);
        let quads = add(&f, &mut scene, child, "QuadSetTopologyContainer", &[("name", "quads")]);
        add(&f, &mut scene, child, "QuadSetTopologyModifier", &[]);
        let mut a = vec![("input", "@../line"), ("output", "@quads"), ("nbPointsOnEachCircle", "4"), ("radius", "0.5")];
        a.extend_from_slice(extra);
        add(&f, &mut scene, child, "Edge2QuadTopologicalMapping", &a);
        init_scene(&mut scene).unwrap();
        (scene, quads, mo)
    }

    #[test]
    fn quads_and_circles_around_the_frames() {
        let (scene, quads, mo) = scene(&[]);
        let m = scene.mesh_of(quads).unwrap();
        assert_eq!(m.quads.len(), 8);
        assert_eq!(m.quads[..4], [[0, 4, 5, 1], [1, 5, 6, 2], [2, 6, 7, 3], [3, 7, 4, 0]]);
        assert_eq!(m.quads[4], [4, 8, 9, 5]);
        assert_eq!(scene.get::<SetTopologyContainer>(quads).unwrap().nb_points(), 12);
        // a closed tube: every quad edge along the circles is shared, 4 per circle + 4 per edge
        assert_eq!(m.edges.len(), 3 * 4 + 2 * 4);

        let s = scene.state_of(mo).unwrap();
        let x = scene.store.get(s).read(VecId::POSITION);
        assert_eq!(x.len(), 36);
        let p = |i: usize| [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
        // frame 0 (identity): y, z, −y, −z at radius 0.5
        let close = |a: [f64; 3], b: [f64; 3]| (0..3).all(|c| (a[c] - b[c]).abs() < 1e-12);
        assert!(close(p(0), [0.0, 0.5, 0.0]) && close(p(1), [0.0, 0.0, 0.5]) && close(p(2), [0.0, -0.5, 0.0]) && close(p(3), [0.0, 0.0, -0.5]));
        // frame 1 turned by 90° about x: y → z, z → −y
        assert!(close(p(4), [1.0, 0.0, 0.5]) && close(p(5), [1.0, -0.5, 0.0]));
        // every point at the radius from its frame's centre, in the frame's yz plane
        for i in 0..12 {
            let c = [(i / 4) as f64, 0.0, 0.0];
            let r = p(i);
            assert!((r[0] - c[0]).abs() < 1e-12);
            assert!(((r[1] * r[1] + r[2] * r[2]).sqrt() - 0.5).abs() < 1e-12);
        }
    }

    #[test]
    fn flipped_quads_and_edge_list() {
        let (s, quads, _) = scene(&[("flipNormals", "1")]);
        assert_eq!(s.mesh_of(quads).unwrap().quads[0], [1, 5, 4, 0]);
        // only edge 1 = (1, 2), flipped from the first corner: (q0 q3 q2 q1)
        let (s, quads, _) = scene(&[("flipNormals", "1"), ("edgeList", "1")]);
        assert_eq!(s.mesh_of(quads).unwrap().quads, vec![[4, 5, 9, 8], [5, 6, 10, 9], [6, 7, 11, 10], [7, 4, 8, 11]]);
    }

    #[test]
    fn ellipse_and_errors() {
        let pts = circle_points(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], 4, 2.0, Some((1.0, [0.0, 0.0, 3.0])));
        // Z = (0 0 1), Y = Z × x = (0 1 0): (0 2 0) (0 0 1) (0 −2 0) (0 0 −1)
        let want = [[0.0, 2.0, 0.0], [0.0, 0.0, 1.0], [0.0, -2.0, 0.0], [0.0, 0.0, -1.0]];
        for (a, b) in pts.iter().zip(want) {
            assert!((0..3).all(|c| (a[c] - b[c]).abs() < 1e-12), "{a:?} vs {b:?}");
        }

        let (f, mut scene) = factory_and_scene();
        add(&f, &mut scene, Scene::ROOT, "TriangleSetTopologyContainer", &[("name", "tris"), ("triangles", "0 1 2")]);
        let child = scene.add_node(Scene::ROOT, "tube");
        add(&f, &mut scene, child, "QuadSetTopologyContainer", &[("name", "quads")]);
        add(&f, &mut scene, child, "QuadSetTopologyModifier", &[]);
        add(&f, &mut scene, child, "Edge2QuadTopologicalMapping", &[("input", "@../tris"), ("output", "@quads"), ("nbPointsOnEachCircle", "4")]);
        let e = init_scene(&mut scene).unwrap_err();
        assert!(e.to_string().contains("is a triangle topology; edge elements are expected"), "{e}");
    }
}
