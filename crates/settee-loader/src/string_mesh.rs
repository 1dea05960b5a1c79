//! `StringMeshCreator`: a procedural string of `resolution` points from `(0,0,0)` to `(1,0,0)`
//! (`x = i/(n−1)`) joined by the edges `(i−1, i)`; it is a mesh loader, so `translation`,
//! `rotation` and `scale3d` apply.

use settee_core::data::DataSet;

use crate::loader::{Format, MeshLoader, Source};
use crate::mesh::LoadedMesh;

pub(crate) static FORMAT: Format = Format { source: Source::Generated(generate), subelements_by_default: false };

/// Points `x/(n−1)` and edges `(i−1, i)`.
pub fn generate(d: &DataSet) -> Result<LoadedMesh, String> {
    let r = d.get(MeshLoader::STRING_RESOLUTION);
    if !(0..=10_000_000).contains(&r) {
        return Err(format!("resolution {r} is out of range (expected a number of vertices ≥ 0)"));
    }
    let n = r as usize;
    let mut m = LoadedMesh::default();
    for x in 0..n {
        // x·1.0/(n−1), evaluated left to right as in SOFA (1 vertex: 0/0)
        m.positions.push([x as f64 * 1.0 / (n as f64 - 1.0), 0.0, 0.0]);
    }
    for e in 1..n {
        m.edges.push([e - 1, e]);
    }
    Ok(m)
}
