//! `GridMeshCreator`: a procedural `nx × ny` grid of points in the unit square of the z = 0 plane
//! (`x = i/(nx−1)`, `y = j/(ny−1)`, point `i + j·nx`), with quads or one of three triangle
//! patterns; it is a mesh loader, so `translation`, `rotation` and `scale3d` apply.
//!
//! The edges are the sides of the cells without repetition: an edge is kept in the orientation in
//! which it is first met, and the list is sorted by (first, second) end as SOFA's edge set is.

use std::collections::BTreeSet;

use settee_core::data::DataSet;

use crate::loader::{Format, MeshLoader, Source};
use crate::mesh::LoadedMesh;

pub(crate) static FORMAT: Format = Format { source: Source::Generated(generate), subelements_by_default: false };

/// The edges met so far, each in the orientation of its first occurrence.
#[derive(Default)]
struct UniqueEdges(BTreeSet<[usize; 2]>);

impl UniqueEdges {
    fn insert(&mut self, a: usize, b: usize) {
        if !self.0.contains(&[b, a]) {
            self.0.insert([a, b]);
        }
    }
    fn polygon(&mut self, v: &[usize]) {
        for k in 0..v.len() {
            self.insert(v[k], v[(k + 1) % v.len()]);
        }
    }
}

/// The grid's points, cells and edges.
pub fn generate(d: &DataSet) -> Result<LoadedMesh, String> {
    let res = d.get(MeshLoader::GRID_RESOLUTION);
    let pattern = d.get(MeshLoader::TRIANGLE_PATTERN);
    let (rx, ry) = (res.first().copied().unwrap_or(2.0), res.get(1).copied().unwrap_or(2.0));
    for r in [rx, ry] {
        if !(0.0..=10_000.0).contains(&r) || r.fract() != 0.0 {
            return Err(format!("resolution \"{rx} {ry}\" is out of range (expected two numbers of vertices ≥ 0)"));
        }
    }
    if !(0..=3).contains(&pattern) {
        return Err(format!("trianglePattern {pattern} is not one of 0 (quads), 1 (alternate), 2 (upward), 3 (downward)"));
    }
    let (nx, ny) = (rx as usize, ry as usize);
    let vert = |x: usize, y: usize| x + y * nx;
    let mut m = LoadedMesh::default();
    for y in 0..ny {
        for x in 0..nx {
            // x·1.0/(n−1), evaluated left to right as in SOFA
            m.positions.push([x as f64 * 1.0 / (nx as f64 - 1.0), y as f64 * 1.0 / (ny as f64 - 1.0), 0.0]);
        }
    }
    let mut edges = UniqueEdges::default();
    for y in 0..ny.saturating_sub(1) {
        for x in 0..nx.saturating_sub(1) {
            let (a, b, c, e) = (vert(x, y), vert(x + 1, y), vert(x + 1, y + 1), vert(x, y + 1));
            let tris: [[usize; 3]; 2] = match pattern {
                0 => {
                    m.quads.push([a, b, c, e]);
                    edges.polygon(&[a, b, c, e]);
                    continue;
                }
                1 if (x + y) % 2 == 0 => [[a, b, c], [a, c, e]],
                1 | 3 => [[a, b, e], [b, c, e]],
                _ => [[a, b, c], [a, c, e]],
            };
            for t in tris {
                m.triangles.push(t);
                edges.polygon(&t);
            }
        }
    }
    m.edges = edges.0.into_iter().collect();
    Ok(m)
}
