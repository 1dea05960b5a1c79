//! `MeshOffLoader`: Object File Format (`.off`), read as SOFA's `MeshOffLoader` does: header
//! `OFF`, then `nv nf ne`, `nv` vertex lines, `nf` face lines `k i0 … ik−1` (3 → triangle,
//! 4 → quad; other sizes are skipped and not counted). Empty lines and `#` comments are skipped.

use std::path::Path;

use settee_core::data::DataSet;

use crate::loader::{Format, Source};
use crate::mesh::{LoadedMesh, MeshLoaderData};
use crate::text::{at, read_text, Fields};

pub(crate) static FORMAT: Format = Format { source: Source::File(read), subelements_by_default: false };

pub fn read(path: &Path, d: &DataSet) -> Result<LoadedMesh, String> {
    let text = read_text(path)?;
    parse(path, &text, d.get(MeshLoaderData::FLIP_NORMALS))
}

pub fn parse(path: &Path, text: &str, flip: bool) -> Result<LoadedMesh, String> {
    let trimmed = text.trim_start();
    let skipped = text.len() - trimmed.len();
    let first_line = text[..skipped].matches('\n').count() + 1;
    let Some(rest) = trimmed.strip_prefix("OFF").filter(|r| r.is_empty() || r.starts_with(|c: char| c.is_ascii_whitespace())) else {
        return Err(at(path, first_line, "not an OFF file: it must start with `OFF`"));
    };
    // the rest of the header line is the first line examined for the counts
    let mut lines = rest.split('\n').enumerate().map(|(i, l)| (first_line + i, l)).filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let mut m = LoadedMesh::default();
    let (ln, counts) = lines.next().ok_or_else(|| at(path, first_line, "unexpected end of file: expected the counts `nv nf ne`"))?;
    let mut f = Fields::new(path, counts, ln);
    let nv = f.count("the number of vertices")?;
    let nf = f.count("the number of faces")?;
    let mut last = ln;
    for k in 0..nv {
        let (ln, l) = lines.next().ok_or_else(|| at(path, last, format!("unexpected end of file: vertex {k} of {nv} missing")))?;
        last = ln;
        let mut f = Fields::new(path, l, ln);
        m.positions.push([f.real("x")?, f.real("y")?, f.real("z")?]);
    }
    let mut read_faces = 0;
    while read_faces < nf {
        let (ln, l) = lines.next().ok_or_else(|| at(path, last, format!("unexpected end of file: face {read_faces} of {nf} missing")))?;
        last = ln;
        let mut f = Fields::new(path, l, ln);
        let k = f.count("the number of vertices of the face")?;
        if !(3..=4).contains(&k) {
            continue;
        }
        let mut v = [0usize; 4];
        for slot in v.iter_mut().take(k) {
            let i = f.count("a vertex index")?;
            if i >= nv {
                return Err(at(path, ln, format!("face refers to vertex {i} but the file has {nv} vertices")));
            }
            *slot = i;
        }
        if k == 3 {
            m.add_triangle([v[0], v[1], v[2]], flip);
        } else {
            m.add_quad(v, flip);
        }
        read_faces += 1;
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("test.off")
    }

    #[test]
    fn reads_triangles_and_quads() {
        let t = "OFF\n# comment\n5 3 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n\n2 2 2\n4 0 1 2 3\n2 0 1\n3 0 1 4\n";
        let m = parse(p(), t, false).unwrap_err();
        // the 2-vertex face is skipped and not counted: the third face is missing
        assert!(m.contains("face 2 of 3 missing"), "{m}");
        let t = "OFF 5 2 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n2 2 2\n4 0 1 2 3\n3 0 1 4\n";
        let m = parse(p(), t, false).unwrap();
        assert_eq!(m.positions.len(), 5);
        assert_eq!(m.quads, vec![[0, 1, 2, 3]]);
        assert_eq!(m.triangles, vec![[0, 1, 4]]);
    }

    #[test]
    fn malformed_files_fail() {
        let cases: &[(&str, &str)] = &[
            ("", "test.off:1: not an OFF file"),
            ("COFF\n", "not an OFF file"),
            ("OFF\n3 1 0\n0 0 0\n1 0 0\n", "test.off:4: unexpected end of file: vertex 2 of 3 missing"),
            ("OFF\n1 1 0\n0 0 0\n3 0 0 7\n", "test.off:4: face refers to vertex 7"),
            ("OFF\n1 0 0\n0 0 q\n", "test.off:3: expected z (a number), found 'q'"),
        ];
        for (t, e) in cases {
            let err = parse(p(), t, false).unwrap_err();
            assert!(err.contains(e), "{t:?}: {err}");
        }
        let full = "OFF 5 2 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n2 2 2\n4 0 1 2 3\n3 0 1 4\n";
        for cut in 0..full.len() {
            let _ = parse(p(), &full[..cut], false);
        }
    }
}
