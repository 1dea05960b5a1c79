//! `MeshSubsetEngine`: the sub-mesh made of chosen points, renumbered.
//!
//! Follows SOFA's `MeshSubsetEngine` (Vec3d): `position[k] = inputPosition[indices[k]]`; a point
//! listed twice takes its last place; every input element whose points are all listed is kept,
//! in input order, with its points renumbered. Computed at init and when an input changes.

use std::collections::BTreeMap;

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

/// The elements (`k` indices each) whose points all have a new number, renumbered.
fn extract(elements: &[usize], k: usize, new_index: &BTreeMap<usize, usize>) -> Vec<usize> {
    elements.chunks_exact(k).filter_map(|e| e.iter().map(|v| new_index.get(v).copied()).collect::<Option<Vec<usize>>>()).flatten().collect()
}

/// Extract a mesh subset based on selected vertices
///
/// The MeshSubsetEngine engine.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| MeshSubsetEngine,
    data = {
        /// input vertices
        inputPosition: Coords,
        /// input edges
        inputEdges: IndexTuples(2),
        /// input triangles
        inputTriangles: IndexTuples(3),
        /// input quads
        inputQuads: IndexTuples(4),
        /// input tetrahedra
        inputTetrahedra: IndexTuples(4),
        /// input hexahedra
        inputHexahedra: IndexTuples(8),
        /// Index lists of the selected vertices
        indices: Indices,
        /// output: Vertices of mesh subset
        position: Coords,
        /// output: edges of mesh subset
        edges: IndexTuples(2),
        /// output: Triangles of mesh subset
        triangles: IndexTuples(3),
        /// output: Quads of mesh subset
        quads: IndexTuples(4),
        /// output: Tetrahedra of mesh subset
        tetrahedra: IndexTuples(4),
        /// output: Hexahedra of mesh subset
        hexahedra: IndexTuples(8),
    },
)]
#[derive(Clone)]
pub struct MeshSubsetEngine;

impl Component for MeshSubsetEngine {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

impl MeshSubsetEngine {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let x = d.get(Self::INPUT_POSITION);
        let indices = d.get(Self::INDICES);
        let n = x.len() / 3;
        if let Some(i) = indices.iter().find(|&&i| i >= n) {
            return Err(cx.error(format!("index {i} is beyond the {n} points of `inputPosition`")));
        }
        let mut new_index = BTreeMap::new();
        let mut position = Vec::with_capacity(indices.len() * 3);
        for (k, &i) in indices.iter().enumerate() {
            position.extend_from_slice(&x[i * 3..i * 3 + 3]);
            new_index.insert(i, k);
        }
        let edges = extract(d.get(Self::INPUT_EDGES), 2, &new_index);
        let triangles = extract(d.get(Self::INPUT_TRIANGLES), 3, &new_index);
        let quads = extract(d.get(Self::INPUT_QUADS), 4, &new_index);
        let tetrahedra = extract(d.get(Self::INPUT_TETRAHEDRA), 4, &new_index);
        let hexahedra = extract(d.get(Self::INPUT_HEXAHEDRA), 8, &new_index);
        let out = cx.data_mut();
        out.put(Self::POSITION, position);
        out.put(Self::EDGES, edges);
        out.put(Self::TRIANGLES, triangles);
        out.put(Self::QUADS, quads);
        out.put(Self::TETRAHEDRA, tetrahedra);
        out.put(Self::HEXAHEDRA, hexahedra);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    /// Points 4, 1, 2, 5 of the strip (see SubsetTopology's tests): triangles 2 (1 2 5) and
    /// 3 (1 5 4) survive as (1 2 3) and (1 3 0); point 4 listed twice takes its last place.
    #[test]
    fn renumbered_subset() {
        let f = factory();
        let mut s = Scene::new("root");
        let e = add(
            &mut s,
            &f,
            Scene::ROOT,
            "MeshSubsetEngine",
            &[
                ("inputPosition", "0 0 0  1 0 0  2 0 0  0 1 0  1 1 0  2 1 0"),
                ("inputTriangles", "0 1 4  0 4 3  1 2 5  1 5 4"),
                ("inputEdges", "0 1  1 2"),
                ("indices", "4 1 2 5"),
            ],
        );
        let g = add(
            &mut s,
            &f,
            Scene::ROOT,
            "MeshSubsetEngine",
            &[("inputPosition", "0 0 0  1 0 0  2 0 0"), ("inputEdges", "0 1  1 2"), ("indices", "1 2 1")],
        );
        init_scene(&mut s).unwrap();
        let d = &s.entry(e).data;
        assert_eq!(d.reals("position"), [1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 1.0, 0.0]);
        assert_eq!(d.indices("triangles"), [1, 2, 3, 1, 3, 0]);
        assert_eq!(d.indices("edges"), [1, 2]);
        let d = &s.entry(g).data;
        assert_eq!(d.reals("position").len(), 9);
        assert_eq!(d.indices("edges"), [2, 1]);
    }
}
