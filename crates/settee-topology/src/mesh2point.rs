//! `Mesh2PointTopologicalMapping` (`LIN/Mesh2PointTopologicalMapping.cpp`): creates output
//! points from the input's points, edges, triangles, quads, tetrahedra and hexahedra at given
//! local coordinates, optionally copying the input's edges, triangles and tetrahedra onto the
//! points generated from the input points.
//!
//! Output point order: for each input point, one point per `pointBaryCoords` entry (position
//! `p + offset`); then for each input edge one point per `edgeBaryCoords` entry (`p0(1-f) + p1 f`,
//! `f` the first coordinate); then triangles (`p0(1-fx-fy) + p1 fx + p2 fy`), quads, tetrahedra
//! (`p0(1-fx-fy-fz) + p1 fx + p2 fy + p3 fz`) and hexahedra (trilinear over corners
//! `h0 h1 h3 h2 h4 h5 h7 h6`). Quads use SOFA's weights literally: `q2` gets `(1-fx)·fy` and `q3`
//! gets `fx·fy` (corners 2 and 3 exchanged with respect to the usual bilinear map).
//!
//! The points are appended to the output container's `position` list (`addPoint`) after it was
//! cleared; SOFA does not re-initialise the output afterwards, so neither does this mapping (a
//! `MechanicalObject` declared after it in the output node copies the new positions at its
//! init). See [`crate::topological_mapping`] for links and init order. No mechanical mapping of
//! positions happens here (SOFA's `Mesh2PointMechanicalMapping` does that); topological changes
//! are not propagated.

use settee_core::role::{Topology, TopologyAlgorithms};
use settee_core::{component, Component, InitCtx, SimResult};

use crate::topological_mapping::{fill_output, io_topologies, mesh_of, point_count, NewElements};

/// Creates output points from the input's points and elements at given local coordinates.
///
/// The Mesh2PointTopologicalMapping component.
#[component(
    module = "Sofa.Component.Mapping.Linear",
    markers = [TopologyAlgorithms],
    create = |_| Mesh2PointTopologicalMapping,
    data = {
        /// offsets of the output points created from each input point
        pointBaryCoords: RealTuples(3),
        /// coordinates (first one used) of the output points created from each input edge
        edgeBaryCoords: RealTuples(3),
        /// barycentric coordinates (first two used) of the output points created from each input triangle
        triangleBaryCoords: RealTuples(3),
        /// local coordinates (first two used) of the output points created from each input quad
        quadBaryCoords: RealTuples(3),
        /// barycentric coordinates of the output points created from each input tetrahedron
        tetraBaryCoords: RealTuples(3),
        /// local coordinates of the output points created from each input hexahedron
        hexaBaryCoords: RealTuples(3),
        /// copy the input edges onto the points created from the input points (needs pointBaryCoords)
        copyEdges: Bool = "false",
        /// copy the input triangles onto the points created from the input points (needs pointBaryCoords)
        copyTriangles: Bool = "false",
        /// copy the input tetrahedra onto the points created from the input points (needs pointBaryCoords)
        copyTetrahedra: Bool = "false",
    },
    links = {
        /// input topology (default: the parent node's topology, `@../`)
        input: Topology,
        /// output topology container (default: this node's topology, `@./`)
        output: Topology,
    },
)]
#[derive(Clone)]
pub struct Mesh2PointTopologicalMapping;

use settee_core::math::{add, scale, V3};

fn coords(flat: &[f64]) -> Vec<V3> {
    flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

impl Component for Mesh2PointTopologicalMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (input, output) = io_topologies(cx)?;
        let from = mesh_of(cx, input)?;
        let d = cx.data();
        let [pb, eb, tb, qb, teb, hb] = [
            Self::POINT_BARY_COORDS,
            Self::EDGE_BARY_COORDS,
            Self::TRIANGLE_BARY_COORDS,
            Self::QUAD_BARY_COORDS,
            Self::TETRA_BARY_COORDS,
            Self::HEXA_BARY_COORDS,
        ]
        .map(|r| coords(d.get(r)));
        let copies = [
            ("copyEdges", d.get(Self::COPY_EDGES)),
            ("copyTriangles", d.get(Self::COPY_TRIANGLES)),
            ("copyTetrahedra", d.get(Self::COPY_TETRAHEDRA)),
        ];
        if pb.is_empty() {
            if let Some((name, _)) = copies.iter().find(|(_, on)| *on) {
                return Err(cx.error(format!("{name} requires at least one item in pointBaryCoords")).hint("add e.g. pointBaryCoords=\"0 0 0\""));
            }
        }
        let [copy_edges, copy_triangles, copy_tetrahedra] = copies.map(|(_, on)| on);
        let p = |i: usize| from.points.get(i).copied().unwrap_or([0.0; 3]);
        let npb = pb.len();
        // The first output point created from input point i (`pointsMappedFrom[POINT][i][0]`).
        let first = |i: usize| i * npb;

        let mut new = NewElements::default();
        let out = &mut new.positions;
        for i in 0..point_count(cx.scene, input) {
            for b in &pb {
                out.push(add(p(i), *b));
            }
        }
        for e in &from.edges {
            let (p0, p1) = (p(e[0]), p(e[1]));
            for b in &eb {
                let fx = b[0];
                out.push(add(scale(p0, 1.0 - fx), scale(p1, fx)));
            }
        }
        if copy_edges {
            new.edges = from.edges.iter().map(|e| e.map(first)).collect();
        }
        for t in &from.triangles {
            let (p0, p1, p2) = (p(t[0]), p(t[1]), p(t[2]));
            for b in &tb {
                let (fx, fy) = (b[0], b[1]);
                out.push(add(add(scale(p0, 1.0 - fx - fy), scale(p1, fx)), scale(p2, fy)));
            }
        }
        if copy_triangles {
            new.triangles = from.triangles.iter().map(|t| t.map(first)).collect();
        }
        for q in &from.quads {
            for b in &qb {
                let (p0, p1, p2, p3) = (p(q[0]), p(q[1]), p(q[2]), p(q[3]));
                let (fx, fy) = (b[0], b[1]);
                let r = add(add(add(scale(p0, (1.0 - fx) * (1.0 - fy)), scale(p1, fx * (1.0 - fy))), scale(p2, (1.0 - fx) * fy)), scale(p3, fx * fy));
                out.push(r);
            }
        }
        for t in &from.tetrahedra {
            let (p0, p1, p2, p3) = (p(t[0]), p(t[1]), p(t[2]), p(t[3]));
            for b in &teb {
                let (fx, fy, fz) = (b[0], b[1], b[2]);
                out.push(add(add(add(scale(p0, 1.0 - fx - fy - fz), scale(p1, fx)), scale(p2, fy)), scale(p3, fz)));
            }
        }
        if copy_tetrahedra {
            new.tetrahedra = from.tetrahedra.iter().map(|t| t.map(first)).collect();
        }
        for h in &from.hexahedra {
            for b in &hb {
                let c = [h[0], h[1], h[3], h[2], h[4], h[5], h[7], h[6]].map(p);
                let (fx, fy, fz) = (b[0], b[1], b[2]);
                let w = [
                    (1.0 - fx) * (1.0 - fy) * (1.0 - fz),
                    fx * (1.0 - fy) * (1.0 - fz),
                    (1.0 - fx) * fy * (1.0 - fz),
                    fx * fy * (1.0 - fz),
                    (1.0 - fx) * (1.0 - fy) * fz,
                    fx * (1.0 - fy) * fz,
                    (1.0 - fx) * fy * fz,
                    fx * fy * fz,
                ];
                let mut r = scale(c[0], w[0]);
                for k in 1..8 {
                    r = add(r, scale(c[k], w[k]));
                }
                out.push(r);
            }
        }
        fill_output(cx, output, new, false)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use crate::test_util::{attrs, create, init_scene};
    use settee_core::{Scene, VecId};

    #[test]
    fn points_then_edge_midpoints_feed_a_later_mechanical_object() {
        let f = settee_statecontainer::factory_with(&[crate::register]);
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        create(
            &f,
            &mut scene,
            "TetrahedronSetTopologyContainer",
            &[("name", "Container1"), ("position", "0 0 0 2 0 0 0 2 0 0 0 2"), ("tetrahedra", "0 1 2 3")],
        );
        let child = scene.add_node(Scene::ROOT, "points");
        let c2 = f.create(&mut scene, child, "PointSetTopologyContainer", None, attrs(&[("name", "Container2")]), None, dir).unwrap();
        f.create(
            &mut scene,
            child,
            "Mesh2PointTopologicalMapping",
            None,
            attrs(&[
                ("input", "@../Container1"),
                ("output", "@Container2"),
                ("pointBaryCoords", "0 0 0"),
                ("edgeBaryCoords", "0.5 0.5 0"),
                ("quadBaryCoords", "0.5 0.5 0"),
            ]),
            None,
            dir,
        )
        .unwrap();
        let mo = f.create(&mut scene, child, "MechanicalObject", None, attrs(&[]), None, dir).unwrap();
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        init_scene(&mut scene).unwrap();

        let m = scene.mesh_of(c2).unwrap();
        // 4 points, then the midpoints of the 6 derived edges (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
        assert_eq!(m.points.len(), 10);
        assert_eq!(m.points[4], [1.0, 0.0, 0.0]);
        assert_eq!(m.points[7], [1.0, 1.0, 0.0]);
        assert_eq!(m.points[9], [0.0, 1.0, 1.0]);
        assert_eq!(scene.entry(c2).data.int("nbPoints"), 10);
        let s = scene.state_of(mo).unwrap();
        let st = scene.store.get(s);
        assert_eq!(st.size, 10);
        assert_eq!(&st.read(VecId::POSITION)[3 * 8..3 * 9], &[1.0, 0.0, 1.0]);
    }
}
