//! `SubsetTopologicalMapping` (`TMAP/SubsetTopologicalMapping.cpp`): the output topology is a
//! subset of the input one, both already filled (SOFA assumes both are initialised). The mapping
//! changes neither; at init it finds, for the points (unless `samePoints`) and for each element
//! kind it handles, the index maps between them and writes them to its Data:
//!
//! * points: by equal positions when both topologies have positions (the last input point of a
//!   position wins), else the identity when both have as many points;
//! * elements: an output element whose corners, mapped to input points and sorted, are those of
//!   an input element (sorted) is that element.
//!
//! Unmatched entries are `4294967295` (SOFA's `InvalidID`), with a warning for each output
//! element or point not found. Topological changes are not propagated.

use std::collections::HashMap;

use settee_core::role::{Topology, TopologyAlgorithms};
use settee_core::{component, Component, InitCtx, SimResult};

use crate::topological_mapping::{io_topologies, mesh_of, point_count};

/// SOFA's `InvalidID` (`sofa::Index` is 32-bit).
pub const INVALID_ID: usize = u32::MAX as usize;

/// Maps a subset topology (output) onto its source (input): index maps only.
///
/// The SubsetTopologicalMapping component.
#[component(
    module = "Sofa.Component.Topology.Mapping",
    markers = [TopologyAlgorithms],
    create = |_| SubsetTopologicalMapping,
    data = {
        /// True if the same set of points is used in both topologies
        samePoints: Bool = "false",
        /// True if edges events and mapping should be handled
        handleEdges: Bool = "false",
        /// True if triangles events and mapping should be handled
        handleTriangles: Bool = "false",
        /// True if quads events and mapping should be handled
        handleQuads: Bool = "false",
        /// True if tetrahedra events and mapping should be handled
        handleTetrahedra: Bool = "false",
        /// True if hexahedra events and mapping should be handled
        handleHexahedra: Bool = "false",
        /// Internal source -> destination topology points map
        pointS2D: Indices,
        /// Internal destination -> source topology points map (link to SubsetMapping::indices to handle the mechanical-side of the mapping
        pointD2S: Indices,
        /// Internal source -> destination topology edges map
        edgeS2D: Indices,
        /// Internal destination -> source topology edges map
        edgeD2S: Indices,
        /// Internal source -> destination topology triangles map
        triangleS2D: Indices,
        /// Internal destination -> source topology triangles map
        triangleD2S: Indices,
        /// Internal source -> destination topology quads map
        quadS2D: Indices,
        /// Internal destination -> source topology quads map
        quadD2S: Indices,
        /// Internal source -> destination topology tetrahedra map
        tetrahedronS2D: Indices,
        /// Internal destination -> source topology tetrahedra map
        tetrahedronD2S: Indices,
        /// Internal source -> destination topology hexahedra map
        hexahedronS2D: Indices,
        /// Internal destination -> source topology hexahedra map
        hexahedronD2S: Indices,
    },
    links = {
        /// input topology (default: the parent node's topology, `@../`)
        input: Topology,
        /// output topology container (default: this node's topology, `@./`)
        output: Topology,
    },
)]
#[derive(Clone)]
pub struct SubsetTopologicalMapping;

/// The maps between source elements and destination elements: `(s2d, d2s, not found)`. The
/// destination corners go through `d2s_points` first (when not empty); keys are sorted corners.
pub fn match_elements<const K: usize>(source: &[[usize; K]], dest: &[[usize; K]], d2s_points: &[usize]) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let sorted = |mut e: [usize; K]| {
        e.sort_unstable();
        e
    };
    let mut by_key: HashMap<[usize; K], usize> = HashMap::new();
    for (i, e) in source.iter().enumerate() {
        by_key.insert(sorted(*e), i);
    }
    let mut s2d = vec![INVALID_ID; source.len()];
    let mut d2s = vec![INVALID_ID; dest.len()];
    let mut missing = Vec::new();
    for (d, e) in dest.iter().enumerate() {
        let mapped = if d2s_points.is_empty() { *e } else { e.map(|p| d2s_points.get(p).copied().unwrap_or(INVALID_ID)) };
        match by_key.get(&sorted(mapped)) {
            Some(&s) => {
                d2s[d] = s;
                s2d[s] = d;
            }
            None => missing.push(d),
        }
    }
    (s2d, d2s, missing)
}

/// Position key with SOFA's equality (`-0 == 0`).
fn key(p: [f64; 3]) -> [u64; 3] {
    p.map(|c| (c + 0.0).to_bits())
}

impl Component for SubsetTopologicalMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (input, output) = io_topologies(cx)?;
        let (from, to) = (mesh_of(cx, input)?, mesh_of(cx, output)?);
        let (nps, npd) = (point_count(cx.scene, input), point_count(cx.scene, output));
        let d = cx.data();
        let same_points = d.get(Self::SAME_POINTS);
        let handle = [
            d.get(Self::HANDLE_EDGES),
            d.get(Self::HANDLE_TRIANGLES),
            d.get(Self::HANDLE_QUADS),
            d.get(Self::HANDLE_TETRAHEDRA),
            d.get(Self::HANDLE_HEXAHEDRA),
        ];
        let mut warnings = Vec::new();

        let (mut ps2d, mut pd2s) = (Vec::new(), Vec::new());
        if !same_points {
            ps2d = vec![INVALID_ID; nps];
            pd2s = vec![INVALID_ID; npd];
            if !from.points.is_empty() && !to.points.is_empty() {
                let mut by_pos: HashMap<[u64; 3], usize> = HashMap::new();
                for (i, p) in from.points.iter().enumerate().take(nps) {
                    by_pos.insert(key(*p), i);
                }
                for (pd, p) in to.points.iter().enumerate().take(npd) {
                    match by_pos.get(&key(*p)) {
                        Some(&ps) => {
                            pd2s[pd] = ps;
                            ps2d[ps] = pd;
                        }
                        None => warnings.push(format!("point {pd} not found in source topology")),
                    }
                }
            } else if nps == npd {
                ps2d = (0..nps).collect();
                pd2s = (0..npd).collect();
            } else {
                return Err(cx
                    .error(format!("the topologies have {nps} and {npd} points and no positions to match them"))
                    .hint("give both topologies positions, or set samePoints=\"true\""));
            }
        }

        // Element maps: empty unless handled; sized but unmatched when either side has none.
        let mut maps: [(Vec<usize>, Vec<usize>); 5] = Default::default();
        let names = ["edge", "triangle", "quad", "tetrahedron", "hexahedron"];
        let counts = [
            (from.edges.len(), to.edges.len()),
            (from.triangles.len(), to.triangles.len()),
            (from.quads.len(), to.quads.len()),
            (from.tetrahedra.len(), to.tetrahedra.len()),
            (from.hexahedra.len(), to.hexahedra.len()),
        ];
        for k in 0..5 {
            if !handle[k] {
                continue;
            }
            let (ns, nd) = counts[k];
            let (s2d, d2s, missing) = if ns == 0 || nd == 0 {
                (vec![0; ns], vec![0; nd], Vec::new())
            } else {
                match k {
                    0 => match_elements(&from.edges, &to.edges, &pd2s),
                    1 => match_elements(&from.triangles, &to.triangles, &pd2s),
                    2 => match_elements(&from.quads, &to.quads, &pd2s),
                    3 => match_elements(&from.tetrahedra, &to.tetrahedra, &pd2s),
                    _ => match_elements(&from.hexahedra, &to.hexahedra, &pd2s),
                }
            };
            warnings.extend(missing.iter().map(|d| format!("{} {d} not found in source topology", names[k])));
            maps[k] = (s2d, d2s);
        }

        let d = cx.data_mut();
        d.put(Self::POINT_S2_D, ps2d);
        d.put(Self::POINT_D2_S, pd2s);
        let [(es, ed), (ts, td), (qs, qd), (tes, ted), (hs, hd)] = maps;
        d.put(Self::EDGE_S2_D, es);
        d.put(Self::EDGE_D2_S, ed);
        d.put(Self::TRIANGLE_S2_D, ts);
        d.put(Self::TRIANGLE_D2_S, td);
        d.put(Self::QUAD_S2_D, qs);
        d.put(Self::QUAD_D2_S, qd);
        d.put(Self::TETRAHEDRON_S2_D, tes);
        d.put(Self::TETRAHEDRON_D2_S, ted);
        d.put(Self::HEXAHEDRON_S2_D, hs);
        d.put(Self::HEXAHEDRON_D2_S, hd);
        for w in warnings.into_iter().take(20) {
            cx.warn(w);
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_util::{add, factory_and_scene, init_scene};
    use settee_core::Scene;

    #[test]
    fn elements_are_matched_by_their_sorted_corners() {
        let src = [[0, 1, 2], [1, 3, 2], [2, 3, 4]];
        // dest triangle 0 is source 2 (rotated), dest 1 is source 0 (flipped), dest 2 is unknown
        let (s2d, d2s, missing) = match_elements(&src, &[[3, 4, 2], [0, 2, 1], [0, 1, 4]], &[]);
        assert_eq!(d2s, [2, 0, INVALID_ID]);
        assert_eq!(s2d, [1, INVALID_ID, 0]);
        assert_eq!(missing, [2]);
        // through a point map: dest points 0 1 2 are source points 2 3 4
        let (_, d2s, _) = match_elements(&src, &[[0, 1, 2]], &[2, 3, 4]);
        assert_eq!(d2s, [2]);
    }

    #[test]
    fn points_by_position_and_triangles() {
        let (f, mut scene) = factory_and_scene();
        let pos = "0 0 0  1 0 0  0 1 0  1 1 0  2 1 0";
        add(
            &f,
            &mut scene,
            Scene::ROOT,
            "TriangleSetTopologyContainer",
            &[("name", "full"), ("position", pos), ("triangles", "0 1 2  1 3 2  2 3 4")],
        );
        let child = scene.add_node(Scene::ROOT, "sub");
        // the subset keeps points 1 2 3 4 (renumbered 0..3) and triangles 1 and 2
        add(
            &f,
            &mut scene,
            child,
            "TriangleSetTopologyContainer",
            &[("name", "part"), ("position", "1 0 0  0 1 0  1 1 0  2 1 0"), ("triangles", "0 2 1  1 2 3")],
        );
        let m = add(
            &f,
            &mut scene,
            child,
            "SubsetTopologicalMapping",
            &[("input", "@../full"), ("output", "@part"), ("handleTriangles", "1"), ("handleEdges", "1")],
        );
        init_scene(&mut scene).unwrap();
        let d = &scene.entry(m).data;
        assert_eq!(d.indices("pointD2S"), &[1, 2, 3, 4]);
        assert_eq!(d.indices("pointS2D"), &[INVALID_ID, 0, 1, 2, 3]);
        assert_eq!(d.indices("triangleD2S"), &[1, 2]);
        assert_eq!(d.indices("triangleS2D"), &[INVALID_ID, 0, 1]);
        // every edge of the part is an edge of the full mesh
        assert!(d.indices("edgeD2S").iter().all(|&e| e != INVALID_ID));
        assert_eq!(d.indices("edgeD2S").len(), 5);
        assert!(d.indices("quadD2S").is_empty());
    }
}
