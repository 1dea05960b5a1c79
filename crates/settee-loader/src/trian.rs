//! `MeshTrianLoader`: `.trian` surface meshes, read as SOFA's `MeshTrianLoader` does: the vertex
//! count and the vertices, then the triangle count and per triangle its 3 vertices and its 3
//! neighbours (−1 on a border; neighbour k is across the edge opposite vertex k). The border
//! edges (`edgesOnBorder`, in the order of the triangle's neighbours) and the triangles with a
//! border edge (`trianglesOnBorderList`, once each) are outputs too. SOFA's `trian2` variant
//! (with a material header and normals) is not offered.

use std::path::Path;

use settee_core::data::DataSet;

use crate::loader::{Format, MeshLoader, Source};
use crate::mesh::{Extra, LoadedMesh, MeshLoaderData};
use crate::text::{read_text, Cursor};

pub(crate) static FORMAT: Format = Format { source: Source::File(read), subelements_by_default: false };

pub fn read(path: &Path, d: &DataSet) -> Result<LoadedMesh, String> {
    if d.get(MeshLoader::TRIAN2) {
        return Err(format!("{}: trian2 files are not supported yet: leave trian2 false", path.display()));
    }
    let text = read_text(path)?;
    parse(path, &text, d.get(MeshLoaderData::FLIP_NORMALS))
}

pub fn parse(path: &Path, text: &str, flip: bool) -> Result<LoadedMesh, String> {
    let mut c = Cursor::new(path, text);
    let mut m = LoadedMesh::default();
    let nv = c.count("the number of vertices")?;
    for _ in 0..nv {
        m.positions.push([c.real("x")?, c.real("y")?, c.real("z")?]);
    }
    let nt = c.count("the number of triangles")?;
    let (mut neighbours, mut border_edges, mut border_triangles) = (Vec::new(), Vec::new(), Vec::new());
    for t in 0..nt {
        let mut v = [0usize; 3];
        for slot in v.iter_mut() {
            let i = c.count("a vertex index")?;
            let line = c.line();
            if i >= nv {
                return Err(c.err(line, format!("triangle {t} refers to vertex {i} but the file has {nv} vertices")));
            }
            *slot = i;
        }
        let ngh = [c.int("a neighbour")?, c.int("a neighbour")?, c.int("a neighbour")?];
        m.add_triangle(v, flip);
        neighbours.extend(ngh.map(|n| n as f64));
        for (k, edge) in [[v[1], v[2]], [v[2], v[0]], [v[0], v[1]]].into_iter().enumerate() {
            if ngh[k] == -1 {
                border_edges.extend(edge);
            }
        }
        if ngh.contains(&-1) {
            border_triangles.push(t);
        }
    }
    m.extra.push(Extra::Reals(MeshLoader::NEIGHBOR_TABLE, neighbours));
    m.extra.push(Extra::Indices(MeshLoader::EDGES_ON_BORDER, border_edges));
    m.extra.push(Extra::Indices(MeshLoader::TRIANGLES_ON_BORDER_LIST, border_triangles));
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles sharing edge 1–2: each has two border edges, taken in the order of its
    /// neighbours (opposite vertex 0, 1, 2).
    #[test]
    fn reads_triangles_and_borders() {
        let t = "4\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n2\n0 1 2 1 -1 -1\n1 3 2 -1 0 -1\n";
        let m = parse(Path::new("t.trian"), t, false).unwrap();
        assert_eq!(m.positions.len(), 4);
        assert_eq!(m.triangles, vec![[0, 1, 2], [1, 3, 2]]);
        let find = |n: &str| m.extra.iter().find(|e| e.name() == n).unwrap();
        let Extra::Indices(_, e) = find("edgesOnBorder") else { panic!() };
        assert_eq!(e, &vec![2, 0, 0, 1, 3, 2, 1, 3]);
        let Extra::Indices(_, b) = find("trianglesOnBorderList") else { panic!() };
        assert_eq!(b, &vec![0, 1]);
        let Extra::Reals(_, n) = find("neighborTable") else { panic!() };
        assert_eq!(n, &vec![1.0, -1.0, -1.0, -1.0, 0.0, -1.0]);
        let e = parse(Path::new("t.trian"), "1\n0 0 0\n1\n0 0 5 -1 -1 -1\n", false).unwrap_err();
        assert!(e.contains("t.trian:4: triangle 0 refers to vertex 5"), "{e}");
    }
}
