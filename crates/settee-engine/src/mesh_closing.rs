//! `MeshClosingEngine`: closes the holes of a surface mesh, each with a fan of triangles around
//! the centroid of its border loop.
//!
//! As SOFA: the border is made of the oriented edges of triangles (`p[j−1] → p[j]`) and quads
//! whose reverse edge is not met, kept in an ordered set; a map from each border edge's start to
//! its end (ordered, later edges of a start overriding earlier ones) is walked from its smallest
//! key into loops. Each loop of more than two points gets its centroid appended to the positions
//! and, per loop edge, a triangle (centroid, point, previous point); the closing parts alone are
//! output too (`closingPosition`, `closingTriangles`, and `indices` as `[i j …]` lists).

use std::collections::{BTreeMap, BTreeSet};

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

/// What the closing adds: the closed mesh's new points and triangles, the closing parts alone,
/// and the index lists of each closing part.
#[derive(Debug, Default, PartialEq)]
pub struct Closing {
    pub positions: Vec<[f64; 3]>,
    pub triangles: Vec<[usize; 3]>,
    pub closing_positions: Vec<[f64; 3]>,
    pub closing_triangles: Vec<[usize; 3]>,
    pub indices: Vec<Vec<usize>>,
}

/// SOFA's loops of the border edges (each closed loop ends with its first point again).
fn border_loops(triangles: &[[usize; 3]], quads: &[[usize; 4]]) -> Vec<Vec<usize>> {
    let mut edges: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut add = |p1: usize, p2: usize| {
        if !edges.remove(&(p2, p1)) {
            edges.insert((p1, p2));
        }
    };
    for t in triangles {
        for j in 0..3 {
            add(t[if j == 0 { 2 } else { j - 1 }], t[j]);
        }
    }
    for q in quads {
        for j in 0..4 {
            add(q[if j == 0 { 3 } else { j - 1 }], q[j]);
        }
    }
    let mut emap: BTreeMap<usize, usize> = BTreeMap::new();
    for &(a, b) in &edges {
        emap.insert(a, b);
    }
    let Some(&first) = emap.keys().next() else { return Vec::new() };
    let mut loops = vec![vec![first]];
    let mut cur = first;
    while let Some(i) = emap.remove(&cur) {
        let current = loops.last_mut().expect("a loop is open");
        current.push(i);
        if emap.is_empty() {
            break;
        }
        if i == current[0] {
            loops.push(Vec::new());
        }
        if emap.contains_key(&i) {
            cur = i;
        } else {
            cur = *emap.keys().next().expect("not empty");
            loops.last_mut().expect("a loop is open").push(cur);
        }
    }
    loops
}

/// Closes the holes of the mesh made of `positions`, `triangles` and `quads`.
pub fn close(positions: &[[f64; 3]], triangles: &[[usize; 3]], quads: &[[usize; 4]]) -> Closing {
    let mut c = Closing { positions: positions.to_vec(), triangles: triangles.to_vec(), ..Closing::default() };
    for l in border_loops(triangles, quads).iter().filter(|l| l.len() > 2) {
        let m = l.len() - 1;
        let index_centroid = c.closing_positions.len() + m;
        let mut ind = Vec::with_capacity(l.len());
        let mut centroid = [0.0; 3];
        for j in 0..m {
            let p = l[j];
            ind.push(p);
            c.closing_positions.push(positions[p]);
            for k in 0..3 {
                centroid[k] += positions[p][k];
            }
            let last = c.closing_positions.len() - 1;
            c.closing_triangles.push([index_centroid, last, if j > 0 { last - 1 } else { index_centroid - 1 }]);
            c.triangles.push([c.positions.len(), p, if j > 0 { l[j - 1] } else { l[l.len() - 2] }]);
        }
        let centroid = centroid.map(|x| x / m as f64);
        c.closing_positions.push(centroid);
        ind.push(c.positions.len());
        c.positions.push(centroid);
        c.indices.push(ind);
    }
    c
}

/// Close a given mesh.
#[component(
    module = "Sofa.Component.Engine.Generate",
    description = "Close a given mesh.",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| MeshClosingEngine,
    data = {
        /// input vertices
        inputPosition: RealTuples(3),
        /// input triangles
        inputTriangles: IndexTuples(3),
        /// input quads
        inputQuads: IndexTuples(4),
        /// Vertices of closed mesh
        position: RealTuples(3),
        /// Triangles of closed mesh
        triangles: IndexTuples(3),
        /// Quads of closed mesh (=input quads with current method)
        quads: IndexTuples(4),
        /// Index lists of the closing parts
        indices: Str,
        /// Vertices of the closing parts
        closingPosition: RealTuples(3),
        /// Triangles of the closing parts
        closingTriangles: IndexTuples(3),
    },
)]
#[derive(Clone)]
pub struct MeshClosingEngine;

impl MeshClosingEngine {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let positions: Vec<[f64; 3]> = d.get(Self::INPUT_POSITION).chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
        let triangles: Vec<[usize; 3]> = d.get(Self::INPUT_TRIANGLES).chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        let quads: Vec<[usize; 4]> = d.get(Self::INPUT_QUADS).chunks_exact(4).map(|q| [q[0], q[1], q[2], q[3]]).collect();
        let n = positions.len();
        if let Some(&i) = triangles.iter().flatten().chain(quads.iter().flatten()).find(|&&i| i >= n) {
            return Err(cx.error(format!("an element uses point {i}, beyond the {n} input vertices")));
        }
        let c = close(&positions, &triangles, &quads);
        let text =
            c.indices.iter().map(|l| format!("[{}]", l.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" "))).collect::<Vec<_>>().join(" ");
        let dm = cx.data_mut();
        dm.put(Self::POSITION, c.positions.concat());
        dm.put(Self::TRIANGLES, c.triangles.concat());
        dm.put(Self::QUADS, quads.concat());
        dm.put(Self::INDICES, text);
        dm.put(Self::CLOSING_POSITION, c.closing_positions.concat());
        dm.put(Self::CLOSING_TRIANGLES, c.closing_triangles.concat());
        Ok(())
    }
}

impl Component for MeshClosingEngine {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An open box (the unit cube without its top, z = 1, as 4 side quads and a bottom quad,
    /// outward normals): one border loop, the top square, closed by a fan around its centroid
    /// (0.5, 0.5, 1) whose 4 triangles are oriented outward (+z), so the closed mesh has no
    /// border left. A closed mesh is left as it is.
    #[test]
    fn open_box_gets_its_lid() {
        let p =
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]];
        let quads = [[0, 3, 2, 1], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]];
        let c = close(&p, &[], &quads);
        assert_eq!(c.positions.len(), 9);
        assert_eq!(c.positions[8], [0.5, 0.5, 1.0]);
        // The border runs against the sides' orientation: 4 → 7 → 6 → 5.
        assert_eq!(c.indices, [vec![4, 7, 6, 5, 8]]);
        assert_eq!(c.closing_positions.len(), 5);
        assert_eq!(c.closing_triangles.len(), 4);
        let added = &c.triangles[..];
        assert_eq!(added.len(), 4);
        for t in added {
            let (a, b, cc) = (p.get(t[0]).copied().unwrap_or([0.5, 0.5, 1.0]), p[t[1]], p[t[2]]);
            let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            let v = [cc[0] - a[0], cc[1] - a[1], cc[2] - a[2]];
            let nz = u[0] * v[1] - u[1] * v[0];
            assert!(nz > 0.0, "{t:?} faces down");
        }
        // Closed now: no border loop.
        assert!(border_loops(&c.triangles, &quads).is_empty());
        assert_eq!(close(&c.positions, &c.triangles, &quads).positions.len(), 9);
    }
}
