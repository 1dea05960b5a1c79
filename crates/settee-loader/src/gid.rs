//! `GIDMeshLoader`: GiD mesh files (`.gidmsh`), read as SOFA's `GIDMeshLoader` does.
//!
//! * Header line: `MESH dimension D ElemType T Nnode N` (T: Linear, Triangle, Quadrilateral,
//!   Tetrahedra, Hexahedra; Prism, Pyramid, Sphere and Circle are refused, as in SOFA, and N
//!   must be one of the counts SOFA accepts for T).
//! * `Coordinates` … `End Coordinates`: `id x y [z]` per line (D coordinates, the others 0).
//! * `Elements` … `End Elements`: `id n1 n2 …` per line, 1-based; only the corner nodes of
//!   higher-order elements are kept (a warning says so), as in SOFA.
//! * Keywords are compared case-insensitively on whole lines; Settee also ignores trailing
//!   blanks there (a Windows line end would make SOFA miss the keyword).

use std::path::Path;

use settee_core::data::DataSet;

use crate::loader::{Format, Source};
use crate::mesh::{LoadedMesh, MeshLoaderData};
use crate::text::{at, parse_f64, read_text};

pub(crate) static FORMAT: Format = Format { source: Source::File(read), subelements_by_default: false };

pub fn read(path: &Path, d: &DataSet) -> Result<LoadedMesh, String> {
    let text = read_text(path)?;
    parse(path, &text, d.get(MeshLoaderData::FLIP_NORMALS))
}

/// Element types: name, corner count, accepted node counts.
const TYPES: [(&str, usize, &[usize]); 5] =
    [("Linear", 2, &[2, 3]), ("Triangle", 3, &[3, 6]), ("Quadrilateral", 4, &[4, 8, 9]), ("Tetrahedra", 4, &[4, 10]), ("Hexahedra", 8, &[8, 20, 27])];

pub fn parse(path: &Path, text: &str, flip: bool) -> Result<LoadedMesh, String> {
    let mut lines = text.split('\n').enumerate().map(|(i, l)| (i + 1, l.trim_end()));
    let (_, header) = lines.next().unwrap_or((1, ""));
    let mut w = header.split_whitespace();
    if w.next() != Some("MESH") {
        return Err(at(path, 1, "bad GID mesh header: expected `MESH dimension D ElemType T Nnode N`"));
    }
    let bad = |what: &str| at(path, 1, format!("bad GID mesh header: {what}"));
    if !w.by_ref().any(|t| t == "dimension") {
        return Err(bad("missing dimension tag"));
    }
    let dim: usize =
        w.next().and_then(|t| t.parse().ok()).filter(|d| (1..=3).contains(d)).ok_or_else(|| bad("missing dimension information (1, 2 or 3)"))?;
    if w.next() != Some("ElemType") {
        return Err(bad("missing ElemType tag"));
    }
    let ty = w.next().ok_or_else(|| bad("unknown element type"))?;
    let Some(&(_, corners, counts)) = TYPES.iter().find(|(n, _, _)| *n == ty) else {
        return Err(bad(&format!("element type {ty} is not supported (as in SOFA)")));
    };
    if w.next() != Some("Nnode") {
        return Err(bad("expecting Nnode tag"));
    }
    let nnode: usize = w.next().and_then(|t| t.parse().ok()).ok_or_else(|| bad("missing node count"))?;
    if !counts.contains(&nnode) {
        return Err(bad(&format!("incompatible node count for element type {ty}: expected one of {counts:?}, found {nnode}")));
    }
    let mut m = LoadedMesh::default();
    if nnode != corners {
        m.warnings.push(at(path, 1, format!("{nnode}-node {ty} elements: only their {corners} corner nodes are used, as in SOFA")));
    }
    let mut last = 1;
    let mut find = |lines: &mut dyn Iterator<Item = (usize, &str)>, key: &str| -> Result<(), String> {
        for (ln, l) in &mut *lines {
            last = ln;
            if l.eq_ignore_ascii_case(key) {
                return Ok(());
            }
        }
        Err(at(path, last, format!("unexpected end of file: no `{key}` line")))
    };
    find(&mut lines, "coordinates")?;
    let mut end = false;
    for (ln, l) in lines.by_ref() {
        if l.eq_ignore_ascii_case("end coordinates") {
            end = true;
            break;
        }
        let mut f = l.split_whitespace();
        f.next();
        let mut p = [0.0; 3];
        for (c, v) in p.iter_mut().enumerate().take(dim) {
            let t = f.next().ok_or_else(|| at(path, ln, format!("expected coordinate {c} of the vertex")))?;
            *v = parse_f64(t).ok_or_else(|| at(path, ln, format!("expected a number, found '{t}'")))?;
        }
        m.positions.push(p);
    }
    if !end {
        return Err(at(path, text.lines().count(), "unexpected end of file: no `End Coordinates` line"));
    }
    find(&mut lines, "elements")?;
    let nv = m.positions.len();
    for (ln, l) in lines.by_ref() {
        if l.eq_ignore_ascii_case("end elements") {
            return Ok(m);
        }
        let mut f = l.split_whitespace();
        f.next();
        let mut v = [0usize; 8];
        for slot in v.iter_mut().take(corners) {
            let t = f.next().ok_or_else(|| at(path, ln, "reading GID file: expecting node index"))?;
            let i: usize = t.parse().map_err(|_| at(path, ln, format!("expecting a node index, found '{t}'")))?;
            if i == 0 || i > nv {
                return Err(at(path, ln, format!("node {i} is not one of the {nv} vertices (1-based)")));
            }
            *slot = i - 1;
        }
        match corners {
            2 => m.edges.push([v[0], v[1]]),
            3 => m.add_triangle([v[0], v[1], v[2]], flip),
            4 if ty == "Quadrilateral" => m.add_quad([v[0], v[1], v[2], v[3]], flip),
            4 => m.tetrahedra.push([v[0], v[1], v[2], v[3]]),
            _ => m.hexahedra.push(v),
        }
    }
    Err(at(path, text.lines().count(), "unexpected end of file: no `End Elements` line"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2D triangle mesh: coordinates beyond the dimension are 0, nodes are 1-based.
    #[test]
    fn reads_coordinates_and_elements() {
        let t =
            "MESH dimension 2 ElemType Triangle Nnode 3\nCoordinates\n 1 0 0\n 2 1.5 0\n 3 0 2\nEnd Coordinates\n\nElements\n1 1 2 3\nEnd Elements\n";
        let m = parse(Path::new("m.gidmsh"), t, false).unwrap();
        assert_eq!(m.positions, vec![[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [0.0, 2.0, 0.0]]);
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
        let t =
            "MESH dimension 3 ElemType Tetrahedra Nnode 10\nCoordinates\n1 0 0 0\nEnd Coordinates\nElements\n1 1 1 1 1 9 9 9 9 9 9\nEnd Elements\n";
        let m = parse(Path::new("m.gidmsh"), t, false).unwrap();
        assert_eq!((m.tetrahedra.clone(), m.warnings.len()), (vec![[0; 4]], 1));
        for (bad, msg) in [
            ("MESH dimension 3 ElemType Prism Nnode 6\n", "Prism is not supported"),
            ("MESH dimension 3 ElemType Hexahedra Nnode 9\n", "incompatible node count"),
            (
                "MESH dimension 3 ElemType Linear Nnode 2\nCoordinates\n1 0 0 0\nEnd Coordinates\nElements\n1 1 2\nEnd Elements\n",
                "m.gidmsh:6: node 2",
            ),
        ] {
            let e = parse(Path::new("m.gidmsh"), bad, false).unwrap_err();
            assert!(e.contains(msg), "{e}");
        }
    }
}
