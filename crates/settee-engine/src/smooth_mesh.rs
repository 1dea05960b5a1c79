//! `SmoothMeshEngine`: Laplacian smoothing of positions over the vertex neighbourhoods of a
//! topology.
//!
//! Each of `nb_iterations` passes replaces every point (or only those of `input_indices`) by the
//! mean of its neighbours, all read from the previous pass; a point without neighbours keeps its
//! position. Neighbours come in SOFA's order (the edges around the vertex, in edge order, with
//! the edges of a MeshTopology made from its triangles and quads when it lists none), so sums
//! are taken in the same order.

use settee_core::role::{Engine, Topology};
use settee_core::{component, Component, InitCtx, SimResult};

/// The neighbours of each of `n` points through `edges`, in edge order.
pub fn vertices_around_vertices(n: usize, edges: &[[usize; 2]]) -> Vec<Vec<usize>> {
    let mut around = vec![Vec::new(); n];
    for &[a, b] in edges {
        if a < n && b < n {
            around[a].push(b);
            around[b].push(a);
        }
    }
    around
}

/// `iterations` passes of Laplacian smoothing of `points` (3 reals each), on the `only` points
/// (all when empty).
pub fn smooth(points: &[f64], around: &[Vec<usize>], only: &[usize], iterations: usize) -> Vec<f64> {
    let mut out = points.to_vec();
    let mean = |out: &[f64], i: usize| -> Option<[f64; 3]> {
        let v = around.get(i).filter(|v| !v.is_empty())?;
        let mut p = [0.0; 3];
        for &j in v {
            for c in 0..3 {
                p[c] += out[j * 3 + c];
            }
        }
        Some(p.map(|x| x / v.len() as f64))
    };
    for _ in 0..iterations {
        let mut t = out.clone();
        let targets: Vec<usize> = if only.is_empty() { (0..out.len() / 3).collect() } else { only.to_vec() };
        for i in targets {
            if let (Some(m), Some(ti)) = (mean(&out, i), t.get_mut(i * 3..i * 3 + 3)) {
                ti.copy_from_slice(&m);
            }
        }
        out = t;
    }
    out
}

/// Compute laplacian smoothing of a mesh.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| SmoothMeshEngine::default(),
    links = {
        /// link to the topology container
        topology: Topology,
    },
    data = {
        /// Input position
        input_position: RealTuples(3),
        /// Position indices that need to be smoothed, leave empty for all positions
        input_indices: Indices,
        /// Output position
        output_position: RealTuples(3),
        /// Number of iterations of laplacian smoothing
        nb_iterations: Int = "1",
        /// showInput (rendering only)
        showInput: Bool = "false",
        /// showOutput (rendering only)
        showOutput: Bool = "false",
    },
)]
#[derive(Clone, Default)]
pub struct SmoothMeshEngine {
    around: Vec<Vec<usize>>,
}

impl SmoothMeshEngine {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let points = d.get(Self::INPUT_POSITION).to_vec();
        let only = d.get(Self::INPUT_INDICES).to_vec();
        let iterations = d.get(Self::NB_ITERATIONS).max(0) as usize;
        let n = points.len() / 3;
        if let Some(&i) = only.iter().find(|&&i| i >= n) {
            return Err(cx.error(format!("input_indices lists {i}, beyond the {n} input positions")));
        }
        let out = smooth(&points, &self.around, &only, iterations);
        cx.data_mut().put(Self::OUTPUT_POSITION, out);
        Ok(())
    }
}

impl Component for SmoothMeshEngine {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let mesh = cx.require_mesh()?;
        let edges = if !mesh.edges.is_empty() {
            mesh.edges.clone()
        } else if !mesh.tetrahedra.is_empty() || !mesh.hexahedra.is_empty() {
            settee_topology::mesh::edges_from_volume(&mesh.tetrahedra, &mesh.hexahedra)
        } else {
            settee_topology::mesh::edges_from_surface(&mesh.triangles, &mesh.quads)
        };
        let n = (cx.data().get(Self::INPUT_POSITION).len() / 3).max(mesh.nb_points());
        self.around = vertices_around_vertices(n, &edges);
        self.update(cx)
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A square 0 (0,0) 1 (2,0) 2 (2,2) 3 (0,2) in two triangles (0 1 2), (0 2 3): the edges are
    /// 1-2, 2-0, 0-1, 2-3, 3-0, so point 0 has neighbours 2, 1, 3 → (4/3, 4/3); point 1 (2, 0)
    /// → mean of 2 and 0 = (1, 1). Only point 3 smoothed: (1, 1), the others unchanged. Two
    /// passes read the first pass's results.
    #[test]
    fn square_is_smoothed_by_neighbour_means() {
        let points = [0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 2.0, 0.0, 0.0, 2.0, 0.0];
        let edges = settee_topology::mesh::edges_from_surface(&[[0, 1, 2], [0, 2, 3]], &[]);
        assert_eq!(edges, [[1, 2], [2, 0], [0, 1], [2, 3], [3, 0]]);
        let around = vertices_around_vertices(4, &edges);
        assert_eq!(around[0], [2, 1, 3]);
        let once = smooth(&points, &around, &[], 1);
        assert_eq!(once[..6], [4.0 / 3.0, 4.0 / 3.0, 0.0, 1.0, 1.0, 0.0]);
        let only3 = smooth(&points, &around, &[3], 1);
        assert_eq!(only3[..9], points[..9]);
        assert_eq!(only3[9..], [1.0, 1.0, 0.0]);
        let twice = smooth(&points, &around, &[], 2);
        assert_eq!(twice, smooth(&once, &around, &[], 1));
        // Point 1's second pass: mean of once[2] and once[0].
        assert_eq!(twice[3], (once[6] + once[0]) / 2.0);
    }
}
