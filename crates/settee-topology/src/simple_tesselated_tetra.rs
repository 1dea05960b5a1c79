//! `SimpleTesselatedTetraTopologicalMapping` (`LIN/SimpleTesselatedTetraTopologicalMapping.cpp`):
//! each input tetrahedron is split into 8 by the midpoints of its edges.
//!
//! The output gets the input points (same order), then one point per input edge at its
//! midpoint (edge order), then 8 tetrahedra per input tetrahedron `t` with edge midpoints
//! `m0 … m5` (SOFA's local edge order `01 02 03 12 13 23`): the four corner tetrahedra
//! `(t0 m0 m1 m2) (t1 m0 m4 m3) (t2 m1 m3 m5) (t3 m2 m5 m4)` and the four of the inner
//! octahedron `(m1 m0 m3 m5) (m1 m0 m5 m2) (m4 m0 m5 m3) (m4 m0 m2 m5)`. The output container is
//! cleared, filled and re-initialised (see [`crate::topological_mapping`]). The Data give the
//! correspondences: `pointMappedFromPoint` (identity), `pointMappedFromEdge` (`n + e`),
//! `pointSource` (`p + 1` for a copied point, `−(e + 1)` as a 32-bit unsigned value for a
//! midpoint), `tetraSource` and `tetrahedraMappedFromTetra`. Topological changes are not
//! propagated.

use std::collections::HashMap;

use settee_core::role::{Topology, TopologyAlgorithms};
use settee_core::{component, Component, InitCtx, SimResult};

use crate::mesh::EDGES_IN_TETRAHEDRON;
use crate::set_container::SetKind;
use crate::topological_mapping::{fill_output, io_topologies, mesh_of, point_count, topology_type, NewElements};

/// Splits every tetrahedron of the input into 8 at its edge midpoints.
///
/// The SimpleTesselatedTetraTopologicalMapping component.
#[component(
    module = "Sofa.Component.Mapping.Linear",
    markers = [TopologyAlgorithms],
    create = |_| SimpleTesselatedTetraTopologicalMapping,
    data = {
        /// Each Tetrahedron of the input topology is mapped to the 8 tetrahedrons in which it can be divided
        tetrahedraMappedFromTetra: IndexTuples(8),
        /// Which tetra from the input topology map to a given tetra in the output topology (sofa::InvalidID if none)
        tetraSource: Indices,
        /// Each point of the input topology is mapped to the same point
        pointMappedFromPoint: Indices,
        /// Each edge of the input topology is mapped to his midpoint
        pointMappedFromEdge: Indices,
        /// Which input topology element map to a given point in the output topology : 0 -> none, > 0 -> point index + 1, < 0 , - edge index -1
        pointSource: Indices,
    },
    links = {
        /// input topology (default: the parent node's topology, `@../`)
        input: Topology,
        /// output topology container (default: this node's topology, `@./`)
        output: Topology,
    },
)]
#[derive(Clone)]
pub struct SimpleTesselatedTetraTopologicalMapping;

/// The 8 tetrahedra of tetrahedron `t` whose edge midpoints (local edge order) are `m`.
pub fn split_tetrahedron(t: [usize; 4], m: [usize; 6]) -> [[usize; 4]; 8] {
    [
        [t[0], m[0], m[1], m[2]],
        [t[1], m[0], m[4], m[3]],
        [t[2], m[1], m[3], m[5]],
        [t[3], m[2], m[5], m[4]],
        [m[1], m[0], m[3], m[5]],
        [m[1], m[0], m[5], m[2]],
        [m[4], m[0], m[5], m[3]],
        [m[4], m[0], m[2], m[5]],
    ]
}

impl Component for SimpleTesselatedTetraTopologicalMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (input, output) = io_topologies(cx)?;
        for (which, id) in [("input", input), ("output", output)] {
            let got = topology_type(cx.scene, id);
            if got != SetKind::Tetrahedron {
                return Err(cx
                    .error(format!("the {which} topology {} is a {} topology; tetrahedra are expected", cx.scene.entry(id).label(), got.name()))
                    .hint(format!("link `{which}` to a TetrahedronSetTopologyContainer")));
            }
        }
        let from = mesh_of(cx, input)?;
        let n = point_count(cx.scene, input);
        if from.points.len() < n {
            return Err(cx
                .error(format!("the input {} has no positions for its {n} points", cx.scene.entry(input).label()))
                .hint("the midpoints are computed from the input container's positions"));
        }
        let edge_index: HashMap<[usize; 2], usize> = from.edges.iter().enumerate().map(|(i, e)| ([e[0].min(e[1]), e[0].max(e[1])], i)).collect();

        let mut new = NewElements::default();
        new.positions.extend_from_slice(&from.points[..n]);
        for e in &from.edges {
            let (a, b) = (from.points[e[0]], from.points[e[1]]);
            new.positions.push([(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0, (a[2] + b[2]) / 2.0]);
        }
        let mut mapped_from_tetra = Vec::with_capacity(8 * from.tetrahedra.len());
        let mut tetra_source = Vec::with_capacity(8 * from.tetrahedra.len());
        for (i, t) in from.tetrahedra.iter().enumerate() {
            let mut m = [0; 6];
            for (k, le) in EDGES_IN_TETRAHEDRON.iter().enumerate() {
                let (a, b) = (t[le[0]], t[le[1]]);
                let Some(&e) = edge_index.get(&[a.min(b), a.max(b)]) else {
                    return Err(cx.error(format!("edge ({a}, {b}) of input tetrahedron {i} is not in the input's edges")));
                };
                m[k] = n + e;
            }
            for tet in split_tetrahedron(*t, m) {
                mapped_from_tetra.push(new.tetrahedra.len());
                tetra_source.push(i);
                new.tetrahedra.push(tet);
            }
        }
        let nb_edges = from.edges.len();
        // −(e + 1) stored in SOFA's 32-bit unsigned index.
        let point_source: Vec<usize> = (0..n).map(|p| p + 1).chain((0..nb_edges).map(|e| (u32::MAX - e as u32) as usize)).collect();
        let d = cx.data_mut();
        d.put(Self::POINT_MAPPED_FROM_POINT, (0..n).collect());
        d.put(Self::POINT_MAPPED_FROM_EDGE, (n..n + nb_edges).collect());
        d.put(Self::POINT_SOURCE, point_source);
        d.put(Self::TETRA_SOURCE, tetra_source);
        d.put(Self::TETRAHEDRA_MAPPED_FROM_TETRA, mapped_from_tetra);
        fill_output(cx, output, new, true)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use crate::test_util::{add, factory_and_scene, init_scene};
    use settee_core::Scene;

    fn volume(p: &[[f64; 3]], t: [usize; 4]) -> f64 {
        let d = |i: usize| [p[t[i]][0] - p[t[0]][0], p[t[i]][1] - p[t[0]][1], p[t[i]][2] - p[t[0]][2]];
        let (a, b, c) = (d(1), d(2), d(3));
        (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0
    }

    #[test]
    fn eight_tetrahedra_of_the_same_orientation_filling_the_input() {
        let (f, mut scene) = factory_and_scene();
        let pos = "0 0 0  1 0 0  0 1 0  0 0 1  1 1 1";
        add(
            &f,
            &mut scene,
            Scene::ROOT,
            "TetrahedronSetTopologyContainer",
            &[("name", "coarse"), ("position", pos), ("tetrahedra", "0 1 2 3  1 2 3 4")],
        );
        let child = scene.add_node(Scene::ROOT, "fine");
        let out = add(&f, &mut scene, child, "TetrahedronSetTopologyContainer", &[("name", "fine")]);
        let m = add(&f, &mut scene, child, "SimpleTesselatedTetraTopologicalMapping", &[("input", "@../coarse"), ("output", "@fine")]);
        init_scene(&mut scene).unwrap();
        let coarse = scene.mesh_of(scene.node(Scene::ROOT).objects[0]).unwrap().clone();
        let fine = scene.mesh_of(out).unwrap();
        assert_eq!(fine.tetrahedra.len(), 16);
        assert_eq!(fine.points.len(), 5 + coarse.edges.len());
        assert_eq!(coarse.edges.len(), 9);
        for (e, edge) in coarse.edges.iter().enumerate() {
            let (a, b, m) = (coarse.points[edge[0]], coarse.points[edge[1]], fine.points[5 + e]);
            assert!((0..3).all(|c| (m[c] - (a[c] + b[c]) / 2.0).abs() < 1e-15));
        }
        for (i, t) in coarse.tetrahedra.iter().enumerate() {
            let v = volume(&coarse.points, *t);
            let parts: Vec<f64> = fine.tetrahedra[8 * i..8 * i + 8].iter().map(|s| volume(&fine.points, *s)).collect();
            // each child has the parent's orientation and an eighth of its volume
            assert!(parts.iter().all(|p| (p - v / 8.0).abs() < 1e-15), "{parts:?} vs {v}");
        }
        let d = &scene.entry(m).data;
        assert_eq!(d.indices("pointMappedFromEdge"), &(5..14).collect::<Vec<_>>()[..]);
        assert_eq!(d.indices("tetraSource")[8..], [1; 8]);
        assert_eq!(d.indices("pointSource")[..6], [1, 2, 3, 4, 5, u32::MAX as usize]);
        assert_eq!(scene.get::<crate::SetTopologyContainer>(out).unwrap().nb_points(), 14);
    }
}
