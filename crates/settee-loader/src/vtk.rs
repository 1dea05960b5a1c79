//! `MeshVTKLoader`: legacy ASCII VTK files (`# vtk DataFile`, POLYDATA or UNSTRUCTURED_GRID) and
//! XML ASCII files (`<VTKFile type="UnstructuredGrid">` / `"PolyData"`), read as SOFA's
//! `MeshVTKLoader` does.
//!
//! * Points declared `float` are read in single precision (then widened), as SOFA stores them.
//! * `POLYGONS` (when present, they take precedence over cells): 4 vertices → quad, 3 or more →
//!   triangle fan `(f0, f[j−1], f[j])`.
//! * Cells: 3 line → edge; 4 poly-line; 5 triangle; 6 triangle strip (alternating orientation);
//!   7 polygon → fan; 8 pixel → quad `(0,1,3,2)`; 9 quad; 10 tetra; 11 voxel → hexa
//!   `(0,1,3,2,4,5,7,6)`; 12 hexa; 21/22/24 quadratic edge/triangle/tetra (linear part, plus the
//!   mid-node edges with high-order records); 0–2 (vertices) ignored; others skipped with a warning.
//! * `POINT_DATA`/`CELL_DATA` blocks are parsed (so the file is checked) but only the point
//!   `NORMALS` are kept: Settee components have a fixed set of Data, so the named arrays SOFA
//!   exposes as extra Data of the loader are not available.
//! * Deviations, on purpose: poly-lines take the cell's vertex count (SOFA reads 4 indices
//!   whatever the count) and XML cells take their count from the offsets (SOFA reads the first
//!   index as the count); both only matter for variable-size cells.
//! * Binary legacy files: as SOFA reads them, each array's raw bytes follow its keyword line
//!   (points as 4- or 8-byte floats, lists as 4-byte integers), in the file's byte order: the
//!   data are swapped when the first polygon (else the first cell type) reads larger swapped
//!   than not, which tells a big-endian file (the VTK norm). Their `POINT_DATA`/`CELL_DATA`
//!   arrays are not read (a warning says so).
//! * Binary/appended XML arrays and the legacy 5.x OFFSETS/CONNECTIVITY layout are reported as
//!   unsupported.

use std::collections::HashSet;
use std::path::Path;

use settee_core::data::DataSet;

use crate::loader::{Format, Source};
use crate::mesh::{add_mid_edges, LoadedMesh, MeshLoaderData};
use crate::text::{at, parse_f32, parse_f64, parse_i64, read_text, Cursor, Fields};

pub(crate) static FORMAT: Format = Format { source: Source::File(read), subelements_by_default: false };

pub fn read(path: &Path, d: &DataSet) -> Result<LoadedMesh, String> {
    let bytes = settee_core::budget::read_file(path).map_err(|e| format!("{}: cannot read the file: {e}", path.display()))?;
    if is_binary_legacy(&bytes) {
        return to_mesh(path, parse_legacy_binary(path, &bytes)?, d.get(MeshLoaderData::FLIP_NORMALS));
    }
    let text = read_text(path)?;
    parse(path, &text, d.get(MeshLoaderData::FLIP_NORMALS))
}

/// A legacy file whose third line says BINARY.
fn is_binary_legacy(bytes: &[u8]) -> bool {
    let mut lines = bytes.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or(b"");
    let third = lines.nth(1).unwrap_or(b"");
    first.starts_with(b"# vtk DataFile") && (third == b"BINARY" || third == b"BINARY\r")
}

/// A binary legacy file: text keyword lines, each followed by the raw bytes of its array.
fn parse_legacy_binary(path: &Path, bytes: &[u8]) -> Result<VtkData, String> {
    let mut pos = 0usize;
    let line_at = |pos: usize| 1 + bytes[..pos.min(bytes.len())].iter().filter(|&&b| b == b'\n').count();
    let next_line = |pos: &mut usize| -> Option<(String, usize)> {
        if *pos >= bytes.len() {
            return None;
        }
        let start = *pos;
        let end = bytes[start..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |k| start + k);
        *pos = (end + 1).min(bytes.len());
        Some((String::from_utf8_lossy(&bytes[start..end]).trim_end_matches('\r').to_string(), line_at(start)))
    };
    let raw = |pos: &mut usize, n: usize, size: usize, what: &str, ln: usize| -> Result<Vec<[u8; 8]>, String> {
        let len = n
            .checked_mul(size)
            .filter(|&l| *pos + l <= bytes.len())
            .ok_or_else(|| at(path, ln, format!("{what}: the file ends before its {n} values")))?;
        let out = bytes[*pos..*pos + len]
            .chunks_exact(size)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..size].copy_from_slice(c);
                b
            })
            .collect();
        *pos += len;
        Ok(out)
    };
    for _ in 0..3 {
        next_line(&mut pos);
    }
    let (ds, dl) = loop {
        match next_line(&mut pos) {
            Some((l, _)) if l.trim().is_empty() => continue,
            Some(x) => break x,
            None => return Err(at(path, line_at(pos), "unexpected end of file: expected a DATASET line")),
        }
    };
    if ds != "DATASET POLYDATA" && ds != "DATASET UNSTRUCTURED_GRID" {
        return Err(at(path, dl, format!("unsupported data set '{ds}': expected DATASET POLYDATA or DATASET UNSTRUCTURED_GRID")));
    }
    // Values as read, in native (little-endian) order; swapped below when the file is big-endian.
    let mut points: Option<(Vec<[u8; 8]>, usize)> = None;
    let mut polygons: Option<(Vec<[u8; 8]>, usize)> = None;
    let mut cells: Option<(Vec<[u8; 8]>, usize, usize)> = None;
    let mut types: Option<Vec<[u8; 8]>> = None;
    let mut d = VtkData::default();
    while let Some((line, ln)) = next_line(&mut pos) {
        let mut f = Fields::new(path, &line, ln);
        let Some(kw) = f.next() else { continue };
        match kw {
            "POINTS" => {
                let n = f.count("the number of points")?;
                let size = match f.expect("the point type")? {
                    t if t.eq_ignore_ascii_case("float") => 4,
                    t if t.eq_ignore_ascii_case("double") => 8,
                    t => return Err(at(path, ln, format!("points of type '{t}' are not supported (float or double expected)"))),
                };
                points = Some((raw(&mut pos, 3 * n, size, "POINTS", ln)?, size));
            }
            "POLYGONS" => {
                f.count("the number of polygons")?;
                let size = f.count("the size of the polygon list")?;
                polygons = Some((raw(&mut pos, size, 4, "POLYGONS", ln)?, ln));
            }
            "CELLS" | "LINES" => {
                let n = f.count("the number of cells")?;
                let size = f.count("the size of the cell list")?;
                cells = Some((raw(&mut pos, size, 4, kw, ln)?, n, ln));
                if kw == "LINES" {
                    types = Some(vec![[4, 0, 0, 0, 0, 0, 0, 0]; n]);
                }
            }
            "CELL_TYPES" => {
                let n = f.count("the number of cell types")?;
                types = Some(raw(&mut pos, n, 4, "CELL_TYPES", ln)?);
            }
            "CELL_DATA" | "POINT_DATA" => {
                d.warnings.push(at(path, ln, format!("the {kw} arrays of a binary VTK file are not read")));
                break;
            }
            other => d.warnings.push(at(path, ln, format!("unknown keyword '{other}' ignored"))),
        }
    }
    let Some((points, psize)) = points else { return Err(at(path, line_at(pos), "no POINTS section found")) };
    let int = |b: &[u8; 8], swap: bool| {
        let w = [b[0], b[1], b[2], b[3]];
        (if swap { i32::from_be_bytes(w) } else { i32::from_le_bytes(w) }) as i64
    };
    let probe = polygons.as_ref().and_then(|(p, _)| p.first()).or_else(|| types.as_ref().and_then(|t| t.first()));
    let swap = probe.is_some_and(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) > u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let real = |b: &[u8; 8]| match (psize, swap) {
        (4, false) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
        (4, true) => f32::from_be_bytes([b[0], b[1], b[2], b[3]]) as f64,
        (_, false) => f64::from_le_bytes(*b),
        (_, true) => f64::from_be_bytes(*b),
    };
    d.points = points.chunks_exact(3).map(|p| [real(&p[0]), real(&p[1]), real(&p[2])]).collect();
    if let Some((list, ln)) = polygons {
        d.polygons = Some((list.iter().map(|b| int(b, swap)).collect(), ln));
    } else if let (Some((list, n, line)), Some(types)) = (cells, types) {
        let list: Vec<i64> = list.iter().map(|b| int(b, swap)).collect();
        // LINES types are written natively (4): as in SOFA they never call for a swap.
        let types: Vec<i64> = types.iter().map(|b| int(b, swap)).collect();
        split_cells(path, &mut d, &list, n, line, &types)?;
    }
    Ok(d)
}

/// Cuts a legacy cell list (count, then indices, per cell) into `d.cells`.
fn split_cells(path: &Path, d: &mut VtkData, list: &[i64], n: usize, line: usize, types: &[i64]) -> Result<(), String> {
    if n > list.len() {
        return Err(at(path, line, format!("{n} cells cannot fit in a list of {} values", list.len())));
    }
    if types.len() < n {
        return Err(at(path, line, format!("{n} cells but only {} cell types", types.len())));
    }
    d.cells_line = line;
    let mut i = 0usize;
    for (ci, &t) in types.iter().take(n).enumerate() {
        let nv = *list.get(i).ok_or_else(|| at(path, line, format!("the cell list ends before cell {ci}")))?;
        if nv < 0 || i + 1 + nv as usize > list.len() {
            return Err(at(path, line, format!("cell {ci} announces {nv} vertices, past the end of the cell list")));
        }
        d.cells.push((t, list[i + 1..i + 1 + nv as usize].to_vec()));
        i += 1 + nv as usize;
    }
    Ok(())
}

/// The arrays SOFA's VTK readers collect.
#[derive(Default)]
struct VtkData {
    points: Vec<[f64; 3]>,
    normals: Vec<[f64; 3]>,
    polygons: Option<(Vec<i64>, usize)>,
    /// Cells as (type, vertex indices, line of the cell list).
    cells: Vec<(i64, Vec<i64>)>,
    cells_line: usize,
    warnings: Vec<String>,
}

/// Parses a VTK file (legacy or XML, detected from its first lines).
pub fn parse(path: &Path, text: &str, flip: bool) -> Result<LoadedMesh, String> {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let data = if first.contains("<?xml") {
        if lines.next().unwrap_or("").contains("<VTKFile") {
            parse_xml(path, text)?
        } else {
            return Err(at(path, 2, "XML file without <VTKFile> on its second line: not a VTK file"));
        }
    } else if first.contains("<VTKFile") {
        parse_xml(path, text)?
    } else if first.contains("# vtk DataFile") {
        parse_legacy(path, text)?
    } else {
        return Err(at(path, 1, "header not recognized: expected `# vtk DataFile Version x.y` or an XML <VTKFile>"));
    };
    to_mesh(path, data, flip)
}

/// Reads `n` values as SOFA's `VTKDataIO::read` does: line by line, extra values on the last
/// line ignored.
fn read_values(c: &mut Cursor, n: usize, what: &str, parse: &dyn Fn(&str) -> Option<f64>) -> Result<Vec<f64>, String> {
    let mut out = Vec::with_capacity(n.min(1 << 20));
    while out.len() < n {
        let (line, ln) =
            c.getline().ok_or_else(|| c.err(c.eof_line(), format!("unexpected end of file: {what} needs {n} values, read {}", out.len())))?;
        for tok in line.split_ascii_whitespace() {
            if out.len() == n {
                break;
            }
            if out.is_empty() && (tok == "OFFSETS" || tok == "CONNECTIVITY") {
                return Err(c.err(ln, "the VTK 5.x cell layout (OFFSETS/CONNECTIVITY) is not supported: save the file as legacy 4.2"));
            }
            match parse(tok) {
                Some(v) => out.push(v),
                None => return Err(c.err(ln, format!("{what}: expected a number, found '{tok}'"))),
            }
        }
    }
    Ok(out)
}

/// Parser of one scalar type (`float` values are rounded to single precision).
fn scalar_parser(type_name: &str) -> Option<fn(&str) -> Option<f64>> {
    let t = type_name.to_ascii_lowercase();
    Some(match t.as_str() {
        "float" | "float32" => |s| parse_f32(s).map(f64::from),
        "double" | "float64" => parse_f64,
        "char" | "int8" | "unsigned_char" | "uint8" | "short" | "int16" | "unsigned_short" | "uint16" | "int" | "int32" | "unsigned_int"
        | "uint32" | "long" | "int64" | "unsigned_long" | "uint64" | "vtkidtype" | "vtktypeint64" => |s| parse_i64(s).map(|v| v as f64),
        _ => return None,
    })
}

fn ints(v: Vec<f64>) -> Vec<i64> {
    v.into_iter().map(|x| x as i64).collect()
}

/// Next non-empty line, `None` at the end of the file.
fn next_nonempty<'a>(c: &mut Cursor<'a>) -> Option<(&'a str, usize)> {
    loop {
        let (l, ln) = c.getline()?;
        if !l.trim().is_empty() {
            return Some((l, ln));
        }
    }
}

fn parse_legacy(path: &Path, text: &str) -> Result<VtkData, String> {
    let mut c = Cursor::new(path, text);
    let (l, ln) = c.expect_line("the `# vtk DataFile Version` line")?;
    if !l.starts_with("# vtk DataFile Version ") {
        return Err(c.err(ln, "unrecognized header: expected `# vtk DataFile Version x.y`"));
    }
    c.expect_line("the title line")?;
    let (fmt, fl) = c.expect_line("ASCII or BINARY")?;
    match fmt.trim_end() {
        "ASCII" => {}
        "BINARY" => return Err(c.err(fl, "binary legacy VTK files are not supported: save the file as ASCII")),
        other => return Err(c.err(fl, format!("expected ASCII or BINARY, found '{other}'"))),
    }
    let (ds, dl) = next_nonempty(&mut c).ok_or_else(|| c.err(c.eof_line(), "unexpected end of file: expected a DATASET line"))?;
    match ds.trim_end() {
        "DATASET POLYDATA" | "DATASET UNSTRUCTURED_GRID" => {}
        other => return Err(c.err(dl, format!("unsupported data set '{other}': expected DATASET POLYDATA or DATASET UNSTRUCTURED_GRID"))),
    }
    let mut d = VtkData::default();
    let mut have_points = false;
    let mut cells: Option<(Vec<i64>, usize, usize)> = None; // (list, count, line)
    let mut types: Option<Vec<i64>> = None;
    let mut cell_data_arrays = 0usize;
    while let Some((line, ln)) = next_nonempty(&mut c) {
        let mut f = Fields::new(path, line, ln);
        let kw = f.next().unwrap_or("");
        match kw {
            "POINTS" => {
                let n = f.count("the number of points")?;
                let ty = f.expect("the point type")?;
                let parse = match scalar_parser(ty) {
                    Some(p) if ty.eq_ignore_ascii_case("float") || ty.eq_ignore_ascii_case("double") => p,
                    _ => return Err(c.err(ln, format!("points of type '{ty}' are not supported (float or double expected)"))),
                };
                let v = read_values(&mut c, 3 * n, "POINTS", &parse)?;
                d.points = v.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
                have_points = true;
            }
            "POLYGONS" => {
                f.count("the number of polygons")?;
                let size = f.count("the size of the polygon list")?;
                let v = read_values(&mut c, size, "POLYGONS", &|s| parse_i64(s).map(|v| v as f64))?;
                d.polygons = Some((ints(v), ln));
            }
            "CELLS" | "LINES" => {
                let n = f.count("the number of cells")?;
                let size = f.count("the size of the cell list")?;
                let v = read_values(&mut c, size, kw, &|s| parse_i64(s).map(|v| v as f64))?;
                if n > size {
                    return Err(c.err(ln, format!("{n} cells cannot fit in a list of {size} values")));
                }
                cells = Some((ints(v), n, ln));
                if kw == "LINES" {
                    types = Some(vec![4; n]);
                }
            }
            "CELL_TYPES" => {
                let n = f.count("the number of cell types")?;
                types = Some(ints(read_values(&mut c, n, "CELL_TYPES", &|s| parse_i64(s).map(|v| v as f64))?));
            }
            "CELL_DATA" | "POINT_DATA" => {
                let nb = f.count("the number of values")?;
                let arrays = parse_data_block(&mut c, nb, kw == "POINT_DATA", &mut d)?;
                if kw == "CELL_DATA" {
                    cell_data_arrays += arrays;
                }
                continue;
            }
            other => d.warnings.push(at(path, ln, format!("unknown keyword '{other}' ignored"))),
        }
        if have_points && d.polygons.is_some() {
            break;
        }
        if have_points && cells.is_some() && types.is_some() && cell_data_arrays > 0 {
            break;
        }
    }
    if !have_points {
        return Err(at(path, c.eof_line(), "no POINTS section found"));
    }
    if d.polygons.is_none() {
        if let (Some((list, n, line)), Some(types)) = (cells, types) {
            split_cells(path, &mut d, &list, n, line, &types)?;
        }
    }
    Ok(d)
}

/// A `POINT_DATA`/`CELL_DATA` block: returns the number of arrays read.
fn parse_data_block(c: &mut Cursor, nb: usize, point_data: bool, d: &mut VtkData) -> Result<usize, String> {
    let mut arrays = 0;
    loop {
        let save = c.save();
        let Some((line, ln)) = next_nonempty(c) else { break };
        let mut f = Fields::new(c.path, line, ln);
        let kind = f.next().unwrap_or("");
        let path = c.path;
        let typed = |f: &mut Fields, what: &str| -> Result<fn(&str) -> Option<f64>, String> {
            f.expect("the array name")?;
            let ty = f.expect("the array type")?;
            scalar_parser(ty).ok_or_else(|| at(path, ln, format!("{what}: unknown value type '{ty}'")))
        };
        match kind {
            "SCALARS" => {
                let parse = typed(&mut f, "SCALARS")?;
                let before = c.save();
                match c.getline() {
                    Some((l, _)) if l.split_whitespace().next() == Some("LOOKUP_TABLE") => {}
                    _ => c.restore(before),
                }
                read_values(c, nb, "SCALARS", &parse)?;
                arrays += 1;
            }
            "NORMALS" | "VECTORS" => {
                let parse = typed(&mut f, kind)?;
                let v = read_values(c, 3 * nb, kind, &parse)?;
                if kind == "NORMALS" && point_data {
                    d.normals = v.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
                } else {
                    arrays += 1;
                }
            }
            "FIELD" => {
                f.expect("the field name")?;
                let n = f.count("the number of arrays")?;
                for _ in 0..n {
                    let (l, al) = next_nonempty(c).ok_or_else(|| c.err(c.eof_line(), "unexpected end of file in a FIELD"))?;
                    let mut g = Fields::new(c.path, l, al);
                    g.expect("the array name")?;
                    let ncomp = g.count("the number of components")?;
                    let ntuples = g.count("the number of tuples")?;
                    let ty = g.expect("the array type")?;
                    let parse = scalar_parser(ty).ok_or_else(|| at(c.path, al, format!("FIELD array: unknown value type '{ty}'")))?;
                    read_values(c, ncomp * ntuples, "FIELD array", &parse)?;
                    arrays += 1;
                }
            }
            "LOOKUP_TABLE" => {
                f.expect("the table name")?;
                let n = f.count("the table size")?;
                read_values(c, 4 * n, "LOOKUP_TABLE", &|s| parse_f32(s).map(f64::from))?;
            }
            _ => {
                c.restore(save);
                break;
            }
        }
    }
    Ok(arrays)
}

// ----- XML ------------------------------------------------------------------------------------

/// A minimal element tree of the XML file.
struct XmlEl {
    name: String,
    attrs: Vec<(String, String)>,
    text: String,
    children: Vec<XmlEl>,
    line: usize,
}

impl XmlEl {
    fn attr(&self, n: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str())
    }
    fn child(&self, n: &str) -> Option<&XmlEl> {
        self.children.iter().find(|c| c.name == n)
    }
}

fn xml_tree(path: &Path, text: &str) -> Result<XmlEl, String> {
    use quick_xml::events::Event;
    let line_of = |off: usize| text.as_bytes()[..off.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<XmlEl> = Vec::new();
    let mut root: Option<XmlEl> = None;
    let make = |e: &quick_xml::events::BytesStart, line: usize| -> Result<XmlEl, String> {
        let mut attrs = Vec::new();
        for a in e.attributes() {
            let a = a.map_err(|err| at(path, line, format!("bad XML attribute: {err}")))?;
            attrs.push((String::from_utf8_lossy(a.key.as_ref()).into_owned(), String::from_utf8_lossy(&a.value).into_owned()));
        }
        Ok(XmlEl { name: String::from_utf8_lossy(e.name().as_ref()).into_owned(), attrs, text: String::new(), children: Vec::new(), line })
    };
    loop {
        let before = usize::try_from(reader.buffer_position()).unwrap_or(0);
        let ev = reader
            .read_event()
            .map_err(|e| at(path, line_of(usize::try_from(reader.error_position()).unwrap_or(0)), format!("malformed XML: {e}")))?;
        match ev {
            Event::Start(e) => stack.push(make(&e, line_of(before))?),
            Event::Empty(e) => {
                let el = make(&e, line_of(before))?;
                match stack.last_mut() {
                    Some(p) => p.children.push(el),
                    None => root = root.or(Some(el)),
                }
            }
            Event::End(_) => {
                let el = stack.pop().ok_or_else(|| at(path, line_of(before), "malformed XML: unmatched end tag"))?;
                match stack.last_mut() {
                    Some(p) => p.children.push(el),
                    None => root = root.or(Some(el)),
                }
            }
            Event::Text(t) => {
                if let Some(p) = stack.last_mut() {
                    p.text.push_str(&String::from_utf8_lossy(&t));
                }
            }
            Event::CData(t) => {
                if let Some(p) = stack.last_mut() {
                    p.text.push_str(&String::from_utf8_lossy(&t));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(at(path, line_of(text.len()), format!("unexpected end of file: <{}> (line {}) is not closed", open.name, open.line)));
    }
    root.ok_or_else(|| at(path, 1, "no XML element found"))
}

/// Values of an ASCII DataArray (`count` values when given).
fn data_array(path: &Path, el: &XmlEl, forced_type: Option<&str>, count: Option<usize>) -> Result<Vec<f64>, String> {
    let name = el.attr("Name").unwrap_or("?");
    let format = el.attr("format").or_else(|| el.attr("Format")).unwrap_or("");
    if format != "ascii" {
        return Err(at(path, el.line, format!("DataArray '{name}': format '{format}' is not supported (only ascii)")));
    }
    let ty = forced_type.or_else(|| el.attr("type")).unwrap_or("");
    let parse = scalar_parser(ty).ok_or_else(|| at(path, el.line, format!("DataArray '{name}': unknown type '{ty}'")))?;
    let mut out = Vec::new();
    for tok in el.text.split_ascii_whitespace() {
        if count.is_some_and(|n| out.len() == n) {
            break;
        }
        out.push(parse(tok).ok_or_else(|| at(path, el.line, format!("DataArray '{name}': expected a number, found '{tok}'")))?);
    }
    if let Some(n) = count {
        if out.len() < n {
            return Err(at(path, el.line, format!("DataArray '{name}': {n} values expected, {} found", out.len())));
        }
    }
    Ok(out)
}

fn parse_xml(path: &Path, text: &str) -> Result<VtkData, String> {
    let root = xml_tree(path, text)?;
    if root.name != "VTKFile" {
        return Err(at(path, root.line, format!("expected a <VTKFile> root element, found <{}>", root.name)));
    }
    let kind = root.attr("type").ok_or_else(|| at(path, root.line, "<VTKFile> has no `type` (data set format)"))?;
    let (polydata, count_attr) = match kind {
        "UnstructuredGrid" => (false, "NumberOfCells"),
        "PolyData" => (true, "NumberOfPolys"),
        other => return Err(at(path, root.line, format!("VTK data set '{other}' is not supported (UnstructuredGrid or PolyData)"))),
    };
    let ds = root.child(kind).ok_or_else(|| at(path, root.line, format!("no <{kind}> element")))?;
    let pieces: Vec<&XmlEl> = ds.children.iter().filter(|c| c.name == "Piece").collect();
    let piece = *pieces.last().ok_or_else(|| at(path, ds.line, "no <Piece> element"))?;
    let mut d = VtkData::default();
    if pieces.len() > 1 {
        d.warnings.push(at(path, piece.line, "several <Piece> elements: only the last one is used"));
    }
    let int_attr = |n: &str| -> Result<usize, String> {
        let v = piece.attr(n).unwrap_or("0");
        v.trim().parse::<usize>().map_err(|_| at(path, piece.line, format!("<Piece> attribute {n}=\"{v}\" is not a count")))
    };
    let npoints = int_attr("NumberOfPoints")?;
    let ncells = int_attr(count_attr)?;
    let points_el = piece.child("Points").and_then(|p| p.child("DataArray"));
    let points_el = points_el.ok_or_else(|| at(path, piece.line, "no <Points><DataArray> in the piece"))?;
    let pts = data_array(path, points_el, Some("Float64"), Some(3 * npoints))?;
    d.points = pts.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
    let cells_el = piece.child(if polydata { "Polys" } else { "Cells" });
    if let Some(cells_el) = cells_el {
        let arrays: Vec<&XmlEl> = cells_el.children.iter().filter(|c| c.name == "DataArray").collect();
        let find = |n: &str| arrays.iter().find(|a| a.attr("Name") == Some(n)).copied();
        let conn_el = find("connectivity").ok_or_else(|| at(path, cells_el.line, "no `connectivity` DataArray"))?;
        let off_el = find("offsets").ok_or_else(|| at(path, cells_el.line, "no `offsets` DataArray"))?;
        let conn = ints(data_array(path, conn_el, None, None)?);
        let offsets = ints(data_array(path, off_el, None, Some(ncells))?);
        let types: Vec<i64> = if polydata {
            // PolyData cells take their type from their size, as SOFA does
            let mut prev = 0;
            offsets
                .iter()
                .map(|&o| {
                    let n = o - prev;
                    prev = o;
                    match n {
                        2 => 3,
                        3 => 5,
                        4 => 9,
                        _ => 4,
                    }
                })
                .collect()
        } else {
            let types_el = find("types").ok_or_else(|| at(path, cells_el.line, "no `types` DataArray"))?;
            ints(data_array(path, types_el, Some("Int32"), Some(ncells))?)
        };
        d.cells_line = conn_el.line;
        let mut start = 0i64;
        for (ci, (&end, &t)) in offsets.iter().zip(types.iter()).enumerate() {
            if end < start || end as usize > conn.len() {
                return Err(at(path, off_el.line, format!("offset {end} of cell {ci} is out of the connectivity range 0..{}", conn.len())));
            }
            d.cells.push((t, conn[start as usize..end as usize].to_vec()));
            start = end;
        }
    }
    Ok(d)
}

// ----- cells → mesh -----------------------------------------------------------------------------

fn to_mesh(path: &Path, d: VtkData, flip: bool) -> Result<LoadedMesh, String> {
    let mut m = LoadedMesh { positions: d.points, normals: d.normals, warnings: d.warnings, ..Default::default() };
    let np = m.positions.len();
    let check = |v: &[i64], line: usize, what: &str| -> Result<Vec<usize>, String> {
        v.iter()
            .map(|&i| {
                if i >= 0 && (i as usize) < np {
                    Ok(i as usize)
                } else {
                    Err(at(path, line, format!("{what} refers to point {i} but the file has {np} points")))
                }
            })
            .collect()
    };
    if let Some((list, line)) = &d.polygons {
        let mut i = 0;
        let mut poly = 0;
        while i < list.len() {
            let nv = list[i];
            if nv < 0 || i + 1 + nv as usize > list.len() {
                return Err(at(path, *line, format!("polygon {poly} announces {nv} vertices, past the end of the list")));
            }
            let f = check(&list[i + 1..i + 1 + nv as usize], *line, &format!("polygon {poly}"))?;
            if f.len() == 4 {
                m.add_quad([f[0], f[1], f[2], f[3]], flip);
            } else if f.len() >= 3 {
                for j in 2..f.len() {
                    m.add_triangle([f[0], f[j - 1], f[j]], flip);
                }
            }
            i += 1 + nv as usize;
            poly += 1;
        }
        return Ok(m);
    }
    const TRI_EDGES: [[usize; 2]; 3] = [[0, 1], [1, 2], [2, 0]];
    const TET_EDGES: [[usize; 2]; 6] = [[0, 1], [1, 2], [0, 2], [0, 3], [1, 3], [2, 3]];
    let mut edge_set: HashSet<[usize; 2]> = HashSet::new();
    let mut unsupported: Vec<i64> = Vec::new();
    for (ci, (t, verts)) in d.cells.iter().enumerate() {
        let v = check(verts, d.cells_line, &format!("cell {ci}"))?;
        let need = match t {
            3 => 2,
            5 => 3,
            8..=10 => 4,
            11 | 12 => 8,
            21 => 3,
            22 => 6,
            24 => 10,
            _ => 0,
        };
        if v.len() < need {
            return Err(at(path, d.cells_line, format!("cell {ci} of type {t} needs {need} points, has {}", v.len())));
        }
        let mut mid_edges = |m: &mut LoadedMesh, local: &[[usize; 2]], first_mid: usize| add_mid_edges(m, &v, local, first_mid, &mut edge_set);
        match t {
            0..=2 => {}
            3 => m.edges.push([v[0], v[1]]),
            4 => m.polylines.push(v.clone()),
            5 => m.add_triangle([v[0], v[1], v[2]], flip),
            6 => {
                for j in 0..v.len().saturating_sub(2) {
                    if j & 1 == 1 {
                        m.add_triangle([v[j], v[j + 1], v[j + 2]], flip);
                    } else {
                        m.add_triangle([v[j], v[j + 2], v[j + 1]], flip);
                    }
                }
            }
            7 => {
                for j in 2..v.len() {
                    m.add_triangle([v[0], v[j - 1], v[j]], flip);
                }
            }
            8 => m.add_quad([v[0], v[1], v[3], v[2]], flip),
            9 => m.add_quad([v[0], v[1], v[2], v[3]], flip),
            10 => m.tetrahedra.push([v[0], v[1], v[2], v[3]]),
            11 => m.hexahedra.push([v[0], v[1], v[3], v[2], v[4], v[5], v[7], v[6]]),
            12 => m.hexahedra.push([v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]]),
            21 => {
                m.edges.push([v[0], v[1]]);
                m.high_order_edges.push([v[2], m.edges.len() - 1, 1, 1]);
            }
            22 => {
                m.add_triangle([v[0], v[1], v[2]], flip);
                mid_edges(&mut m, &TRI_EDGES, 3);
            }
            24 => {
                m.tetrahedra.push([v[0], v[1], v[2], v[3]]);
                mid_edges(&mut m, &TET_EDGES, 4);
            }
            other => {
                if !unsupported.contains(other) {
                    unsupported.push(*other);
                }
            }
        }
    }
    if !unsupported.is_empty() {
        m.warnings.push(at(path, d.cells_line, format!("unsupported cell types {unsupported:?} skipped")));
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("test.vtk")
    }

    const LEGACY: &str = "# vtk DataFile Version 2.0\ntitle\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 5 float\n\
0 0 0 1 0 0\n0 1 0\n0 0 1 0.1 0.2 0.3\n\nCELLS 3 14\n4 0 1 2 3\n3 0 1 4\n4 0 1 4 2\nCELL_TYPES 3\n10\n5\n8\n\
POINT_DATA 5\nSCALARS s float 1\nLOOKUP_TABLE default\n1 2 3 4 5\nNORMALS n double\n0 0 1 0 0 1 0 0 1 0 0 1 0 0 1\n";

    #[test]
    fn legacy_cells_and_float_points() {
        let m = parse(p(), LEGACY, false).unwrap();
        assert_eq!(m.positions.len(), 5);
        assert_eq!(m.positions[4], [0.1f32 as f64, 0.2f32 as f64, 0.3f32 as f64]);
        assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
        assert_eq!(m.triangles, vec![[0, 1, 4]]);
        assert_eq!(m.quads, vec![[0, 1, 2, 4]]); // pixel (0,1,3,2)
        assert_eq!(m.normals.len(), 5);
    }

    #[test]
    fn legacy_polygons_fan() {
        let t = "# vtk DataFile Version 3.0\nt\nASCII\nDATASET POLYDATA\nPOINTS 5 double\n0 0 0 1 0 0 1 1 0 0 1 0 0.5 1.5 0\n\
POLYGONS 2 11\n4 0 1 2 3\n5 0 1 2 4 3\n";
        let m = parse(p(), t, true).unwrap();
        assert_eq!(m.quads, vec![[3, 2, 1, 0]]);
        assert_eq!(m.triangles, vec![[2, 1, 0], [4, 2, 0], [3, 4, 0]]);
    }

    #[test]
    fn xml_unstructured_grid() {
        let t = r#"<?xml version="1.0"?>
<VTKFile type="UnstructuredGrid" version="0.1" byte_order="LittleEndian">
  <UnstructuredGrid>
    <Piece NumberOfPoints="5" NumberOfCells="2">
      <Points>
        <DataArray type="Float32" NumberOfComponents="3" format="ascii">
          0 0 0  1 0 0  0 1 0  0 0 1  0.1 0.1 0.1
        </DataArray>
      </Points>
      <Cells>
        <DataArray type="Int32" Name="connectivity" format="ascii">0 1 2 3  0 1 4</DataArray>
        <DataArray type="Int32" Name="offsets" format="ascii">4 7</DataArray>
        <DataArray type="UInt8" Name="types" format="ascii">10 5</DataArray>
      </Cells>
    </Piece>
  </UnstructuredGrid>
</VTKFile>
"#;
        let m = parse(p(), t, false).unwrap();
        assert_eq!(m.positions.len(), 5);
        // XML points are read as doubles whatever their declared type
        assert_eq!(m.positions[4], [0.1, 0.1, 0.1]);
        assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
        assert_eq!(m.triangles, vec![[0, 1, 4]]);
    }

    /// A big-endian binary POLYDATA file (the VTK norm, like share/mesh/liver.vtk): 3 float
    /// points and one triangle, read swapped; the same file little-endian is read as is.
    #[test]
    fn binary_legacy_polydata_in_both_byte_orders() {
        for big in [true, false] {
            let mut b = b"# vtk DataFile Version 3.0\nvtk output\nBINARY\nDATASET POLYDATA\nPOINTS 3 float\n".to_vec();
            for x in [0.5f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.25, -1.0] {
                b.extend(if big { x.to_be_bytes() } else { x.to_le_bytes() });
            }
            b.extend(b"\nPOLYGONS 1 4\n");
            for i in [3i32, 0, 1, 2] {
                b.extend(if big { i.to_be_bytes() } else { i.to_le_bytes() });
            }
            b.push(b'\n');
            assert!(is_binary_legacy(&b));
            let m = to_mesh(p(), parse_legacy_binary(p(), &b).unwrap(), false).unwrap();
            assert_eq!(m.positions, vec![[0.5, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.25, -1.0]]);
            assert_eq!(m.triangles, vec![[0, 1, 2]]);
            let Err(cut) = parse_legacy_binary(p(), &b[..b.len() - 6]) else { panic!("a cut file is refused") };
            assert!(cut.contains("test.vtk:7: POLYGONS: the file ends before its 4 values"), "{cut}");
        }
    }

    #[test]
    fn malformed_files_fail_with_positions() {
        let cases: &[(&str, &str)] = &[
            ("", "test.vtk:1: header not recognized"),
            ("# vtk DataFile Version 2.0\nt\nBINARY\n", "test.vtk:3: binary legacy VTK files are not supported"),
            ("# vtk DataFile Version 2.0\nt\nASCII\nDATASET STRUCTURED_POINTS\n", "test.vtk:4: unsupported data set"),
            ("# vtk DataFile Version 2.0\nt\nASCII\nDATASET POLYDATA\nPOINTS 3 float\n0 0 0\n1 0", "unexpected end of file: POINTS needs 9 values, read 5"),
            ("# vtk DataFile Version 2.0\nt\nASCII\nDATASET POLYDATA\nPOINTS 1 float\n0 x 0\n", "test.vtk:6: POINTS: expected a number, found 'x'"),
            ("# vtk DataFile Version 2.0\nt\nASCII\nDATASET POLYDATA\nPOINTS 1 float\n0 0 0\nPOLYGONS 1 4\n3 0 1 2\n", "test.vtk:7: polygon 0 refers to point 1"),
            ("# vtk DataFile Version 2.0\nt\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 1 float\n0 0 0\nCELLS 1 5\n4 0 0 0 0\nCELL_TYPES 1\n12\n", "cell 0 of type 12 needs 8 points"),
            ("# vtk DataFile Version 2.0\nt\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 1 float\n0 0 0\nCELLS 1 5\n7 0 0 0 0\nCELL_TYPES 1\n10\n", "cell 0 announces 7 vertices"),
            ("# vtk DataFile Version 5.1\nt\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 1 float\n0 0 0\nCELLS 2 1\nOFFSETS vtktypeint64\n0 1\n", "OFFSETS/CONNECTIVITY"),
            ("<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid><Piece NumberOfPoints=\"2\">", "unexpected end of file"),
            ("<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid><Piece NumberOfPoints=\"2\" NumberOfCells=\"0\"><Points><DataArray format=\"ascii\">0 0 0</DataArray></Points></Piece></UnstructuredGrid></VTKFile>", "6 values expected, 3 found"),
            ("<VTKFile type=\"ImageData\"></VTKFile>", "not supported"),
        ];
        for (text, expected) in cases {
            let e = parse(p(), text, false).unwrap_err();
            assert!(e.contains(expected), "for {text:?}: got '{e}'");
        }
        for cut in 0..LEGACY.len() {
            let _ = parse(p(), &LEGACY[..cut], false);
        }
    }
}
