//! `MeshOBJLoader`: Wavefront `.obj` files, read as SOFA's `MeshOBJLoader` does.
//!
//! * `v x y z`, `vn x y z`, `vt u v`; `f`/`l` with references `v`, `v/t`, `v//n`, `v/t/n`
//!   (1-based; negative = relative to the count read so far).
//! * A reference list of 2 gives an edge stored sorted; of 4 (without `triangulate`) a quad;
//!   otherwise a triangle fan `(v0, v[j−1], v[j])`. `flipNormals` reverses triangles and quads.
//! * `handleSeams = false`: positions as in the file; each vertex takes the texture coordinate of
//!   the face corners referencing it (the first one, or a later one lying more to the upper
//!   left), and the normalised sum of their normals.
//! * `handleSeams = true`: one vertex per distinct (texcoord, normal) pair used with a position,
//!   numbered position by position in increasing (texcoord, normal) order; unreferenced positions
//!   disappear. `vertPosIdx`/`vertNormIdx` map the new vertices back.
//! * Groups: a new group starts at each `g`/`usemtl`, per face kind (edges, triangles, quads).
//! * Materials (`mtllib`): only their names are read (for the groups' material ids and the
//!   `materials` output); colours and textures are rendering only.
//! * `faceList`, `texcoordsIndex` and `normalsIndex` are printed as SOFA prints nested lists
//!   (`[[v0,v1,v2],…]`, −1 for an absent reference).

use std::collections::BTreeMap;
use std::path::Path;

use settee_core::data::DataSet;

use crate::loader::{Format, MeshLoader, Source};
use crate::mesh::{normalize, Extra, LoadedMesh, MeshLoaderData, PrimitiveGroup};
use crate::text::{at, read_text, Fields};

pub(crate) static FORMAT: Format = Format { source: Source::File(read), subelements_by_default: false };

/// Reader options taken from the Data.
#[derive(Clone, Copy, Debug, Default)]
pub struct ObjOptions {
    pub handle_seams: bool,
    pub triangulate: bool,
    pub flip_normals: bool,
    pub load_material: bool,
}

pub fn read(path: &Path, d: &DataSet) -> Result<LoadedMesh, String> {
    let opts = ObjOptions {
        handle_seams: d.get(MeshLoader::HANDLE_SEAMS),
        triangulate: d.get(MeshLoaderData::TRIANGULATE),
        flip_normals: d.get(MeshLoaderData::FLIP_NORMALS),
        load_material: d.get(MeshLoader::LOAD_MATERIAL),
    };
    let text = read_text(path)?;
    parse(path, &text, opts)
}

/// One face as read: (position, texcoord, normal) references, −1 when absent.
struct Face {
    v: Vec<i64>,
    t: Vec<i64>,
    n: Vec<i64>,
    line: usize,
}

const EDGE: usize = 0;
const TRIANGLE: usize = 1;
const QUAD: usize = 2;

/// Material names of a `.mtl` file (`newmtl name`), in order; empty when unreadable.
fn material_names(path: &Path) -> Vec<String> {
    let Ok(text) = read_text(path) else { return Vec::new() };
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            match w.next() {
                Some(k) if k.starts_with('n') => w.next().map(str::to_string),
                _ => None,
            }
        })
        .collect()
}

fn nested_text(lists: &[Vec<i64>]) -> String {
    let inner: Vec<String> = lists.iter().map(|l| format!("[{}]", l.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","))).collect();
    format!("[{}]", inner.join(","))
}

/// Parses the text of an OBJ file.
pub fn parse(path: &Path, text: &str, o: ObjOptions) -> Result<LoadedMesh, String> {
    let mut m = LoadedMesh::default();
    let mut positions: Vec<[f64; 3]> = Vec::new();
    let mut normals: Vec<[f64; 3]> = Vec::new();
    let mut texcoords: Vec<[f64; 2]> = Vec::new();
    let mut faces: Vec<Face> = Vec::new();
    let mut materials: Vec<String> = Vec::new();
    let mut groups: [Vec<PrimitiveGroup>; 3] = Default::default();
    let mut group_name = "Default_Group".to_string();
    let mut material_name = String::new();
    let mut material_id: i64 = -1;
    let mut nb_faces = [0i64; 3];
    let mut group_first = [0i64; 3];
    let mut last_read = [0.0f64; 3];
    // First line with fewer than 3 coordinates, and how many such lines.
    let mut short_lines: Option<(usize, usize)> = None;

    let flush = |groups: &mut [Vec<PrimitiveGroup>; 3], nb: &[i64; 3], first: &mut [i64; 3], mat: &str, grp: &str, id: i64| {
        for ft in 0..3 {
            if nb[ft] > first[ft] {
                groups[ft].push(PrimitiveGroup::new(first[ft], nb[ft] - first[ft], mat, grp, id));
                first[ft] = nb[ft];
            }
        }
    };

    for (i, line) in text.split('\n').enumerate() {
        let ln = i + 1;
        let mut f = Fields::new(path, line, ln);
        let Some(key) = f.next() else { continue };
        match key {
            "v" | "vn" | "vt" => {
                // SOFA reads every vertex line into one vector kept from line to line: a
                // coordinate the line lacks keeps the previous line's value.
                let names: &[&str] = if key == "vt" { &["u", "v"] } else { &["x", "y", "z"] };
                for (c, what) in names.iter().enumerate() {
                    match f.next() {
                        Some(t) => {
                            last_read[c] =
                                crate::text::parse_f64(t).ok_or_else(|| at(path, ln, format!("expected {what} (a number), found '{t}'")))?
                        }
                        None if c == 0 => return Err(at(path, ln, format!("line ends early: expected {what}"))),
                        None => {
                            // A 1D texture coordinate is common; fewer than 3 position or normal
                            // coordinates is worth a warning.
                            if key != "vt" {
                                short_lines.get_or_insert((ln, 0)).1 += 1;
                            }
                            break;
                        }
                    }
                }
                match key {
                    "v" => positions.push(last_read),
                    "vn" => normals.push(last_read),
                    _ => texcoords.push([last_read[0], last_read[1]]),
                }
            }
            "mtllib" if o.load_material => {
                while let Some(name) = f.next() {
                    let file = path.parent().map(|d| d.join(name)).unwrap_or_else(|| name.into());
                    materials.extend(material_names(&file));
                }
            }
            "usemtl" | "g" => {
                flush(&mut groups, &nb_faces, &mut group_first, &material_name, &group_name, material_id);
                if key == "usemtl" {
                    material_name = f.next().unwrap_or("").to_string();
                    material_id = materials.iter().position(|n| *n == material_name).map(|i| i as i64).unwrap_or(-1);
                } else {
                    let mut words = Vec::new();
                    while let Some(w) = f.next() {
                        words.push(w);
                    }
                    group_name = words.join(" ");
                }
            }
            "f" | "l" => {
                let mut face = Face { v: Vec::new(), t: Vec::new(), n: Vec::new(), line: ln };
                while let Some(tok) = f.next() {
                    let mut parts = tok.splitn(3, '/');
                    let mut vtn = [-1i64; 3];
                    for (j, slot) in vtn.iter_mut().enumerate() {
                        let part = parts.next().unwrap_or("");
                        if part.is_empty() {
                            continue;
                        }
                        let Ok(k) = part.parse::<i64>() else {
                            return Err(at(path, ln, format!("invalid index '{part}' in face vertex '{tok}' (expected v, v/t, v//n or v/t/n)")));
                        };
                        let count = [positions.len(), texcoords.len(), normals.len()][j] as i64;
                        *slot = match k {
                            k if k >= 1 => k - 1,
                            k if k < 0 => k + count,
                            _ => return Err(at(path, ln, format!("invalid index 0 in face vertex '{tok}' (indices start at 1)"))),
                        };
                        if *slot < 0 {
                            return Err(at(path, ln, format!("relative index {k} in '{tok}' goes before the first definition")));
                        }
                    }
                    if vtn[0] < 0 {
                        return Err(at(path, ln, format!("face vertex '{tok}' has no position index")));
                    }
                    face.v.push(vtn[0]);
                    face.t.push(vtn[1]);
                    face.n.push(vtn[2]);
                }
                let kind = match face.v.len() {
                    2 => EDGE,
                    4 if !o.triangulate => QUAD,
                    _ => TRIANGLE,
                };
                nb_faces[kind] += 1;
                faces.push(face);
            }
            _ => {}
        }
    }
    flush(&mut groups, &nb_faces, &mut group_first, &material_name, &group_name, material_id);
    let [ge, gt, gq] = groups;
    m.groups.edges = ge;
    m.groups.triangles = gt;
    m.groups.quads = gq;

    let npos = positions.len();
    for face in &faces {
        if let Some(&bad) = face.v.iter().find(|&&v| v as usize >= npos) {
            return Err(at(path, face.line, format!("face refers to vertex {} but the file defines {npos} vertices", bad + 1)));
        }
    }

    let add_face = |m: &mut LoadedMesh, nodes: &[usize]| match nodes.len() {
        2 => m.edges.push([nodes[0].min(nodes[1]), nodes[0].max(nodes[1])]),
        4 if !o.triangulate => m.add_quad([nodes[0], nodes[1], nodes[2], nodes[3]], o.flip_normals),
        _ => {
            for j in 2..nodes.len() {
                m.add_triangle([nodes[0], nodes[j - 1], nodes[j]], o.flip_normals);
            }
        }
    };

    let mut vertex_texcoords: Vec<[f64; 2]> = Vec::new();
    if !o.handle_seams {
        for face in &faces {
            let nodes: Vec<usize> = face.v.iter().map(|&v| v as usize).collect();
            add_face(&mut m, &nodes);
        }
        m.positions = positions.clone();
        if !texcoords.is_empty() {
            vertex_texcoords = vec![[0.0; 2]; npos];
        }
        let mut vnormals = if normals.is_empty() { Vec::new() } else { vec![[0.0; 3]; npos] };
        for face in &faces {
            for k in 0..face.v.len() {
                let (pi, ti, ni) = (face.v[k] as usize, face.t[k], face.n[k]);
                if ti >= 0 && (ti as usize) < texcoords.len() {
                    let cur = vertex_texcoords[pi];
                    let new = texcoords[ti as usize];
                    let is_zero = cur[0].abs() < 1e-6 && cur[1].abs() < 1e-6;
                    // keep the coordinate lying most to the upper left: (new − cur)·(−1, 1) > 0
                    if is_zero || -(new[0] - cur[0]) + (new[1] - cur[1]) > 0.0 {
                        vertex_texcoords[pi] = new;
                    }
                }
                if ni >= 0 && (ni as usize) < normals.len() {
                    let n = normals[ni as usize];
                    for c in 0..3 {
                        vnormals[pi][c] += n[c];
                    }
                }
            }
        }
        for n in &mut vnormals {
            normalize(n);
        }
        m.normals = vnormals;
    } else {
        // one map per position: (texcoord, normal) → new vertex index, in increasing key order
        let mut maps: Vec<BTreeMap<(i64, i64), usize>> = vec![BTreeMap::new(); npos];
        for face in &faces {
            for k in 0..face.v.len() {
                maps[face.v[k] as usize].insert((face.t[k], face.n[k]), 0);
            }
        }
        let nb_out: usize = maps.iter().map(|m| m.len()).sum();
        let split = nb_out != npos;
        let mut vertices = vec![[0.0; 3]; nb_out];
        let mut vnormals = vec![[0.0; 3]; nb_out];
        vertex_texcoords = vec![[0.0; 2]; nb_out];
        let mut pos_idx = Vec::new();
        let mut norm_idx = Vec::new();
        if split {
            pos_idx = vec![0usize; nb_out];
            norm_idx = vec![0usize; nb_out];
        }
        let mut nb_normals_out = 0usize;
        let mut j = 0usize;
        for (i, map) in maps.iter_mut().enumerate() {
            let mut norm_map: BTreeMap<i64, usize> = BTreeMap::new();
            for (&(t, n), slot) in map.iter_mut() {
                if n >= 0 && (n as usize) < normals.len() {
                    vnormals[j] = normals[n as usize];
                }
                if t >= 0 && (t as usize) < texcoords.len() {
                    vertex_texcoords[j] = texcoords[t as usize];
                }
                vertices[j] = positions[i];
                if split {
                    pos_idx[j] = i;
                    norm_idx[j] = *norm_map.entry(n).or_insert_with(|| {
                        nb_normals_out += 1;
                        nb_normals_out - 1
                    });
                }
                *slot = j;
                j += 1;
            }
        }
        if split && nb_normals_out == nb_out {
            norm_idx.clear();
        }
        for face in &faces {
            let nodes: Vec<usize> = (0..face.v.len()).map(|k| maps[face.v[k] as usize][&(face.t[k], face.n[k])]).collect();
            add_face(&mut m, &nodes);
        }
        for n in &mut vnormals {
            normalize(n);
        }
        m.positions = vertices;
        m.normals = vnormals;
        m.extra.push(Extra::Indices(MeshLoader::VERT_POS_IDX, pos_idx));
        m.extra.push(Extra::Indices(MeshLoader::VERT_NORM_IDX, norm_idx));
    }

    let faces_v: Vec<Vec<i64>> = faces.iter().map(|f| f.v.clone()).collect();
    let faces_t: Vec<Vec<i64>> = faces.iter().map(|f| f.t.clone()).collect();
    let faces_n: Vec<Vec<i64>> = faces.iter().map(|f| f.n.clone()).collect();
    m.extra.push(Extra::Reals(MeshLoader::TEXCOORDS, vertex_texcoords.iter().flatten().copied().collect()));
    m.extra.push(Extra::Reals(MeshLoader::TEXCOORDS_DEFINITION, texcoords.iter().flatten().copied().collect()));
    m.extra.push(Extra::Reals(MeshLoader::NORMALS_DEFINITION, normals.iter().flatten().copied().collect()));
    m.extra.push(Extra::Text(MeshLoader::FACE_LIST, nested_text(&faces_v)));
    m.extra.push(Extra::Text(MeshLoader::TEXCOORDS_INDEX, nested_text(&faces_t)));
    m.extra.push(Extra::Text(MeshLoader::NORMALS_INDEX, nested_text(&faces_n)));
    m.extra.push(Extra::Words(MeshLoader::MATERIALS, materials));
    if let Some((first, count)) = short_lines {
        m.warnings.push(at(
            path,
            first,
            format!(
                "{count} vertex line(s) with fewer than 3 coordinates: as in SOFA, a missing coordinate keeps the value of the vertex line before"
            ),
        ));
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("test.obj")
    }

    const SQUARE: &str = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 5 5 5\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 0.5 0.5\n\
vn 0 0 1\nvn 0 0 -1\ng top\nf 1/1/1 2/2/1 3/3/1 4/4/1\ng bottom\nf 1/5/2 -2/3/2 -3/2/2\nl 3 2\n";

    #[test]
    fn faces_edges_and_groups() {
        let m = parse(p(), SQUARE, ObjOptions::default()).unwrap();
        assert_eq!(m.positions.len(), 5);
        assert_eq!(m.quads, vec![[0, 1, 2, 3]]);
        assert_eq!(m.triangles, vec![[0, 3, 2]]);
        assert_eq!(m.edges, vec![[1, 2]]);
        assert_eq!(m.groups.quads, vec![PrimitiveGroup::new(0, 1, "", "top", -1)]);
        assert_eq!(m.groups.triangles, vec![PrimitiveGroup::new(0, 1, "", "bottom", -1)]);
        // vertex 0 gets the first non-zero coordinate… (0,0) is replaced by (0.5,0.5): it is "zero"
        let tc = m.extra.iter().find(|e| e.name() == "texcoords").unwrap();
        let Extra::Reals(_, v) = tc else { panic!() };
        assert_eq!(&v[..2], &[0.5, 0.5]);
        // normals of the shared vertices cancel out; vertex 1 only has +z
        assert_eq!(m.normals[1], [0.0, 0.0, 1.0]);
        assert_eq!(m.normals[0], [0.0, 0.0, 0.0]);
    }

    #[test]
    fn triangulate_and_flip() {
        let o = ObjOptions { triangulate: true, flip_normals: true, ..Default::default() };
        let m = parse(p(), "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n", o).unwrap();
        assert_eq!(m.triangles, vec![[2, 1, 0], [3, 2, 0]]);
        assert!(m.quads.is_empty());
    }

    /// raptorTemperature.obj's `v 0` lines: SOFA reads each vertex line into one vector kept
    /// across lines (`v`, `vn` and `vt` alike), so a missing coordinate is the previous line's;
    /// one warning names the first such line.
    #[test]
    fn short_vertex_lines_keep_the_previous_coordinates() {
        let m = parse(p(), "v 1 2 3\nv 4\nvn 0 0\nvt 7\nv 5 6\n", ObjOptions::default()).unwrap();
        assert_eq!(m.positions, vec![[1.0, 2.0, 3.0], [4.0, 2.0, 3.0], [5.0, 6.0, 3.0]]);
        let Extra::Reals(_, normals) = m.extra.iter().find(|e| e.name() == "normalsDefinition").unwrap() else { panic!() };
        assert_eq!(normals, &vec![0.0, 0.0, 3.0]);
        let Extra::Reals(_, tex) = m.extra.iter().find(|e| e.name() == "texcoordsDefinition").unwrap() else { panic!() };
        assert_eq!(tex, &vec![7.0, 0.0]);
        assert_eq!(m.warnings.len(), 1);
        assert!(m.warnings[0].starts_with("test.obj:2: 3 vertex line(s) with fewer than 3 coordinates"), "{}", m.warnings[0]);
    }

    #[test]
    fn seams_split_vertices() {
        let o = ObjOptions { handle_seams: true, ..Default::default() };
        let m = parse(p(), SQUARE, o).unwrap();
        // position 0: (t0,n0), (t4,n1); position 1: (−1,−1) from the edge, (t1,n0);
        // position 2: (−1,−1), (t1,n1), (t2,n0); position 3: (t2,n1), (t3,n0); position 4: unused.
        assert_eq!(m.positions.len(), 9);
        let Extra::Indices(_, pos_idx) = m.extra.iter().find(|e| e.name() == "vertPosIdx").unwrap() else { panic!() };
        assert_eq!(pos_idx, &vec![0, 0, 1, 1, 2, 2, 2, 3, 3]);
        assert_eq!(m.edges, vec![[2, 4]]);
        assert_eq!(m.quads, vec![[0, 3, 6, 8]]);
        assert_eq!(m.triangles, vec![[1, 7, 5]]);
        assert_eq!(m.normals[1], [0.0, 0.0, -1.0]);
    }

    #[test]
    fn malformed_files_fail_with_positions() {
        let cases: &[(&str, &str)] = &[
            ("v\n", "test.obj:1: line ends early: expected x"),
            ("v 0 0 0\nv 1 x 0\n", "test.obj:2: expected y (a number), found 'x'"),
            ("v 0 0 0\nf 1 0 1\n", "test.obj:2: invalid index 0"),
            ("v 0 0 0\nf 1 2 3\n", "test.obj:2: face refers to vertex 2 but the file defines 1 vertices"),
            ("v 0 0 0\nf 1 a 1\n", "test.obj:2: invalid index 'a'"),
            ("v 0 0 0\nf -3 1 1\n", "test.obj:2: relative index -3"),
            ("v 0 0 0\nf /1/1 1 1\n", "has no position index"),
        ];
        for (text, expected) in cases {
            let e = parse(p(), text, ObjOptions::default()).unwrap_err();
            assert!(e.contains(expected), "for {text:?}: got '{e}'");
        }
        let mut state = 7u64;
        for len in 0..400 {
            let s: String = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    "vf/ 0123-\nnlgt."[(state >> 33) as usize % 15..][..1].to_string()
                })
                .collect();
            let _ = parse(p(), &s, ObjOptions::default());
            let _ = parse(p(), &s, ObjOptions { handle_seams: true, ..Default::default() });
        }
    }
}
