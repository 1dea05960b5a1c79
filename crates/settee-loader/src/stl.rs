//! `MeshSTLLoader`: STL files, ASCII (`solid`…) or binary, read as SOFA's `MeshSTLLoader` does.
//!
//! Every facet gives a triangle; identical vertices (exact coordinates) are merged, numbered in
//! order of first appearance. Facet normals go to `normals` (one per facet: at init they are
//! extended to one per vertex by the normal computation, as in SOFA). Binary files store single
//! precision coordinates; degenerate triangles (repeated vertex) are dropped there.

use std::collections::HashMap;
use std::path::Path;

use settee_core::data::DataSet;

use crate::loader::{Format, MeshLoader, Source};
use crate::mesh::{LoadedMesh, MeshLoaderData};
use crate::text::{at, Fields};

pub(crate) static FORMAT: Format = Format { source: Source::File(read), subelements_by_default: false };

pub fn read(path: &Path, d: &DataSet) -> Result<LoadedMesh, String> {
    let bytes = settee_core::budget::read_file(path).map_err(|e| format!("{}: cannot read the file: {e}", path.display()))?;
    let header = d.get(MeshLoader::HEADER_SIZE).max(0) as usize;
    parse(path, &bytes, d.get(MeshLoader::FORCE_BINARY), header, d.get(MeshLoaderData::FLIP_NORMALS))
}

/// Merges exactly equal points (−0 and +0 are equal, as with C++ comparisons).
#[derive(Default)]
struct Merger {
    map: HashMap<[u64; 3], usize>,
}

impl Merger {
    fn index(&mut self, m: &mut LoadedMesh, p: [f64; 3]) -> usize {
        let key = [(p[0] + 0.0).to_bits(), (p[1] + 0.0).to_bits(), (p[2] + 0.0).to_bits()];
        *self.map.entry(key).or_insert_with(|| {
            m.positions.push(p);
            m.positions.len() - 1
        })
    }
}

pub fn parse(path: &Path, bytes: &[u8], force_binary: bool, header_size: usize, flip: bool) -> Result<LoadedMesh, String> {
    let first_word = bytes.split(|b| b.is_ascii_whitespace()).find(|w| !w.is_empty()).unwrap_or(&[]);
    if !force_binary && first_word == b"solid" {
        parse_ascii(path, &String::from_utf8_lossy(bytes), flip)
    } else {
        parse_binary(path, bytes, header_size, flip)
    }
}

fn parse_ascii(path: &Path, text: &str, flip: bool) -> Result<LoadedMesh, String> {
    let mut m = LoadedMesh::default();
    let mut merger = Merger::default();
    let mut tri = [0usize; 3];
    let mut nv = 0usize;
    let mut facet_line = 0;
    for (i, line) in text.split('\n').enumerate() {
        let ln = i + 1;
        let mut f = Fields::new(path, line, ln);
        match f.next() {
            Some("facet") => {
                f.expect("`normal`")?;
                let n = [f.real("the normal's x")?, f.real("the normal's y")?, f.real("the normal's z")?];
                m.normals.push(n);
                facet_line = ln;
            }
            Some("vertex") => {
                let p = [f.real("x")?, f.real("y")?, f.real("z")?];
                if nv == 3 {
                    return Err(at(path, ln, "a facet has more than 3 vertices"));
                }
                tri[nv] = merger.index(&mut m, p);
                nv += 1;
            }
            Some("endfacet") => {
                if nv != 3 {
                    return Err(at(path, ln, format!("the facet started at line {facet_line} has {nv} vertices, 3 expected")));
                }
                m.add_triangle(tri, flip);
                nv = 0;
            }
            Some("endsolid") | Some("end") => return Ok(m),
            _ => {}
        }
    }
    if nv != 0 {
        return Err(at(path, text.split('\n').count(), "unexpected end of file inside a facet"));
    }
    Ok(m)
}

fn parse_binary(path: &Path, bytes: &[u8], header_size: usize, flip: bool) -> Result<LoadedMesh, String> {
    let name = path.display();
    if bytes.len() < 84 {
        return Err(format!("{name}: not an ASCII STL file (no `solid`) and too short ({} bytes) for a binary one", bytes.len()));
    }
    let declared = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as u64;
    let expected = declared * 50 + 84;
    if bytes.len() as u64 != expected {
        return Err(format!(
            "{name}: not a valid binary STL file: {declared} facets need {expected} bytes, the file has {} (an ASCII file must start with `solid`)",
            bytes.len()
        ));
    }
    if header_size + 4 > bytes.len() {
        return Err(format!("{name}: headerSize {header_size} is larger than the file"));
    }
    let n = u32::from_le_bytes([bytes[header_size], bytes[header_size + 1], bytes[header_size + 2], bytes[header_size + 3]]) as usize;
    let mut m = LoadedMesh::default();
    let mut merger = Merger::default();
    let f32_at = |o: usize| -> f64 { f32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]) as f64 };
    let mut degenerate = 0;
    let mut o = header_size + 4;
    for i in 0..n {
        if o + 50 > bytes.len() {
            return Err(format!("{name}: truncated binary STL: facet {i} of {n} is past the end of the file"));
        }
        m.normals.push([f32_at(o), f32_at(o + 4), f32_at(o + 8)]);
        let mut tri = [0usize; 3];
        for (j, t) in tri.iter_mut().enumerate() {
            let b = o + 12 + 12 * j;
            *t = merger.index(&mut m, [f32_at(b), f32_at(b + 4), f32_at(b + 8)]);
        }
        if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
            degenerate += 1;
        } else {
            m.add_triangle(tri, flip);
        }
        o += 50;
    }
    if degenerate > 0 {
        m.warnings.push(format!("{name}: {degenerate} degenerate triangles (repeated vertices) were not added"));
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("test.stl")
    }

    const ASCII: &str = "solid cube\n facet normal 0 0 -1\n  outer loop\n   vertex 0 0 0\n   vertex 1 1 0\n   vertex 1 0 0\n  endloop\n endfacet\n\
 facet normal 0 0 -1\n  outer loop\n   vertex 0 0 0\n   vertex 0 1 0\n   vertex 1 1 0\n  endloop\n endfacet\nendsolid cube\n";

    fn binary(tris: &[[[f32; 3]; 3]]) -> Vec<u8> {
        let mut b = vec![0u8; 80];
        b.extend_from_slice(&(tris.len() as u32).to_le_bytes());
        for t in tris {
            b.extend_from_slice(&[0u8; 12]);
            for v in t {
                for c in v {
                    b.extend_from_slice(&c.to_le_bytes());
                }
            }
            b.extend_from_slice(&[0u8; 2]);
        }
        b
    }

    #[test]
    fn ascii_merges_vertices() {
        let m = parse(p(), ASCII.as_bytes(), false, 80, false).unwrap();
        assert_eq!(m.positions.len(), 4);
        assert_eq!(m.triangles, vec![[0, 1, 2], [0, 3, 1]]);
        assert_eq!(m.normals.len(), 2);
    }

    #[test]
    fn binary_reads_floats_and_drops_degenerate() {
        let b = binary(&[[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.1, 1.0, 0.0]], [[0.0, 0.0, 0.0], [-0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]]);
        let m = parse(p(), &b, false, 80, false).unwrap();
        assert_eq!(m.positions.len(), 3);
        assert_eq!(m.positions[2], [0.1f32 as f64, 1.0, 0.0]);
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
        assert_eq!(m.warnings.len(), 1);
    }

    #[test]
    fn malformed_files_fail() {
        let e = parse(p(), b"solid x\nfacet normal 0 0 1\nvertex 0 0 0\nvertex 1 0\n", false, 80, false).unwrap_err();
        assert!(e.contains("test.stl:4: line ends early: expected z"), "{e}");
        let e = parse(p(), b"solid x\nfacet normal 0 0 1\nvertex 0 0 0\nendfacet\n", false, 80, false).unwrap_err();
        assert!(e.contains("test.stl:4: the facet started at line 2 has 1 vertices"), "{e}");
        let e = parse(p(), b"garbage", false, 80, false).unwrap_err();
        assert!(e.contains("too short"), "{e}");
        let b = binary(&[[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]);
        let e = parse(p(), &b[..b.len() - 1], false, 80, false).unwrap_err();
        assert!(e.contains("1 facets need 134 bytes, the file has 133"), "{e}");
        for cut in 0..ASCII.len() {
            let _ = parse(p(), &ASCII.as_bytes()[..cut], false, 80, false);
        }
        let _ = parse(p(), &b, true, 200, false).unwrap_err();
    }
}
