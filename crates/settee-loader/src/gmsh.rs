//! `MeshGmshLoader`: Gmsh `.msh` files, legacy format 1 (`$NOD`/`$ELM`), format 2 ASCII and
//! format 4.1 ASCII, read as SOFA's `helper::io::MeshGmsh` does.
//!
//! * Formats 1 and 2 are read token by token. Node ids may have holes: element nodes are mapped
//!   through the table id → order of appearance.
//! * Format 4 is read line by line: node tags are skipped (nodes are numbered in order of
//!   appearance) and element node ids are taken as `id − 1`.
//! * Element types: 1 line, 2 triangle, 3 quad, 4 tetrahedron, 5 hexahedron (node order as in the
//!   file); 8/9/11 second-order line/triangle/tetrahedron keep their linear part and add the
//!   edges of their mid-nodes (with high-order point records); other types are skipped.
//! * Groups count elements per tag (format 1: none, format 2: the last tag, format 4: the element
//!   tag); the quad groups keep the tag in their first field, as SOFA leaves them.
//! * `flipNormals` has no effect on the elements read (SOFA copies them as they are);
//!   `createSubelements` is true unless the scene sets it.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use settee_core::data::DataSet;

use crate::loader::{Format, Source};
use crate::mesh::{add_in_group, add_mid_edges, normalize_groups, LoadedMesh};
use crate::text::{read_text, Cursor, Fields};

pub(crate) static FORMAT: Format = Format { source: Source::File(read), subelements_by_default: true };

/// Reads a Gmsh file.
pub fn read(path: &Path, _d: &DataSet) -> Result<LoadedMesh, String> {
    let text = read_text(path)?;
    parse(path, &text)
}

/// Number of nodes of the element types SOFA knows.
fn nodes_of_type(t: i64) -> Option<usize> {
    Some(match t {
        15 => 1,
        1 => 2,
        2 => 3,
        3 | 4 => 4,
        5 => 8,
        6 => 6,
        8 => 3,
        9 => 6,
        11 => 10,
        _ => return None,
    })
}

/// Parses the text of a Gmsh file.
pub fn parse(path: &Path, text: &str) -> Result<LoadedMesh, String> {
    let mut c = Cursor::new(path, text);
    let (first, l1) = c.expect_line("a first line `$MeshFormat` or `$NOD`")?;
    if first.starts_with("$MeshFormat") {
        let (version, vl) = c.expect_line("the version line after $MeshFormat (e.g. `2.2 0 8`)")?;
        let number = version.split(' ').next().unwrap_or("");
        let digits: String = number.chars().take_while(|ch| ch.is_ascii_digit()).collect();
        let major: u64 =
            digits.parse().map_err(|_| c.err(vl, format!("invalid mesh format version '{}': expected e.g. `2.2 0 8`", version.trim_end())))?;
        let (end, el) = c.expect_line("$EndMeshFormat")?;
        if !end.starts_with("$EndMeshFormat") {
            return Err(c.err(el, format!("expected $EndMeshFormat, found '{}'", end.trim_end())));
        }
        loop {
            let (l, _) = c.expect_line("a $Nodes section")?;
            if l.starts_with("$Nodes") {
                break;
            }
        }
        match major {
            1 | 2 => parse_v12(&mut c, major),
            4 => {
                if number.starts_with("4.0") {
                    return Err(c.err(vl, "MSH format 4.0 is not supported (SOFA reads the 4.1 layout): save the mesh as 4.1 or 2.2"));
                }
                parse_v4(&mut c)
            }
            v => Err(c.err(vl, format!("unsupported MSH format version {v} (supported: 1, 2, 4.1)"))),
        }
    } else if first.starts_with("$NOD") {
        parse_v12(&mut c, 1)
    } else {
        Err(c.err(l1, format!("not a Gmsh file: the first line should be `$MeshFormat` or `$NOD`, found '{}'", first.trim_end())))
    }
}

/// Appends the linear part and the mid-node edges of an element (shared by every format).
/// `edge_set` holds the mid-node edges already added (per element in formats 1/2, per file in 4).
fn add_element(m: &mut LoadedMesh, etype: i64, tag: i64, nodes: &[usize], edge_set: &mut HashSet<[usize; 2]>) {
    const TRI_EDGES: [[usize; 2]; 3] = [[0, 1], [1, 2], [2, 0]];
    const TET_EDGES: [[usize; 2]; 6] = [[0, 1], [1, 2], [0, 2], [0, 3], [2, 3], [1, 3]];
    let mut mid_edges = |m: &mut LoadedMesh, local: &[[usize; 2]], first_mid: usize| add_mid_edges(m, nodes, local, first_mid, edge_set);
    match etype {
        1 => {
            add_in_group(&mut m.groups.edges, tag);
            m.edges.push([nodes[0], nodes[1]]);
        }
        2 => {
            add_in_group(&mut m.groups.triangles, tag);
            m.triangles.push([nodes[0], nodes[1], nodes[2]]);
        }
        3 => {
            add_in_group(&mut m.groups.quads, tag);
            m.quads.push([nodes[0], nodes[1], nodes[2], nodes[3]]);
        }
        4 => {
            add_in_group(&mut m.groups.tetrahedra, tag);
            m.tetrahedra.push([nodes[0], nodes[1], nodes[2], nodes[3]]);
        }
        5 => {
            add_in_group(&mut m.groups.hexahedra, tag);
            let mut h = [0; 8];
            h.copy_from_slice(&nodes[..8]);
            m.hexahedra.push(h);
        }
        8 => {
            add_in_group(&mut m.groups.edges, tag);
            m.edges.push([nodes[0], nodes[1]]);
            m.high_order_edges.push([nodes[2], m.edges.len() - 1, 1, 1]);
        }
        9 => {
            add_in_group(&mut m.groups.triangles, tag);
            m.triangles.push([nodes[0], nodes[1], nodes[2]]);
            mid_edges(m, &TRI_EDGES, 3);
        }
        11 => {
            add_in_group(&mut m.groups.tetrahedra, tag);
            m.tetrahedra.push([nodes[0], nodes[1], nodes[2], nodes[3]]);
            mid_edges(m, &TET_EDGES, 4);
        }
        _ => {}
    }
}

/// Types whose nodes are used (the others are skipped).
fn is_used(etype: i64) -> bool {
    matches!(etype, 1 | 2 | 3 | 4 | 5 | 8 | 9 | 11)
}

fn finish(m: &mut LoadedMesh) {
    normalize_groups(&mut m.groups.edges);
    normalize_groups(&mut m.groups.triangles);
    normalize_groups(&mut m.groups.tetrahedra);
    normalize_groups(&mut m.groups.hexahedra);
}

fn parse_v12(c: &mut Cursor, format: u64) -> Result<LoadedMesh, String> {
    let mut m = LoadedMesh::default();
    let npoints = c.count("the number of nodes")?;
    // id → order of appearance (holes allowed; a repeated id takes the last node)
    let mut pmap: HashMap<usize, usize> = HashMap::new();
    for i in 0..npoints {
        let (tok, line) = c.expect_token("a node id")?;
        let id = match tok.parse::<i64>() {
            Ok(v) if v >= 0 => v as usize,
            _ => return Err(c.err(line, format!("expected a node id (a non-negative integer), found '{tok}'"))),
        };
        let x = c.real("the node's x coordinate")?;
        let y = c.real("the node's y coordinate")?;
        let z = c.real("the node's z coordinate")?;
        m.positions.push([x, y, z]);
        pmap.insert(id, i);
    }
    let (tok, line) = c.expect_token("$ENDNOD or $EndNodes")?;
    if !tok.starts_with("$ENDNOD") && !tok.starts_with("$EndNodes") {
        return Err(c.err(line, format!("expected $ENDNOD or $EndNodes after {npoints} nodes, found '{tok}'")));
    }
    let (tok, line) = c.expect_token("$ELM or $Elements")?;
    if !tok.starts_with("$ELM") && !tok.starts_with("$Elements") {
        return Err(c.err(line, format!("expected $ELM or $Elements, found '{tok}'")));
    }
    let nelems = c.count("the number of elements")?;
    let mut unknown: Vec<i64> = Vec::new();
    for _ in 0..nelems {
        let (tok, line) = c.expect_token("an element id")?;
        let index = crate::text::parse_i64(tok).ok_or_else(|| c.err(line, format!("expected an element id, found '{tok}'")))?;
        let etype = c.int("the element type")?;
        let mut tag = -1;
        let nnodes = if format == 1 {
            c.int("the physical region")?;
            c.int("the elementary region")?;
            let n = c.count("the number of nodes of the element")?;
            if !is_used(etype) && etype != 15 && !unknown.contains(&etype) {
                unknown.push(etype);
            }
            n
        } else {
            let ntags = c.count("the number of tags")?;
            for _ in 0..ntags {
                tag = c.int("a tag")?;
            }
            match nodes_of_type(etype) {
                Some(n) if etype != 6 => n,
                _ => {
                    if !unknown.contains(&etype) {
                        unknown.push(etype);
                    }
                    0
                }
            }
        };
        let mut nodes = Vec::with_capacity(nnodes.min(64));
        for _ in 0..nnodes {
            let (tok, nl) = c.expect_token("a node id of the element")?;
            let t = crate::text::parse_i64(tok).ok_or_else(|| c.err(nl, format!("expected a node id, found '{tok}'")))?;
            let mapped = usize::try_from(t).ok().and_then(|t| pmap.get(&t).copied());
            match mapped {
                Some(i) => nodes.push(i),
                None if is_used(etype) => {
                    return Err(c.err(nl, format!("element {index} refers to node {t}, which is not defined in the node section")))
                }
                None => nodes.push(0),
            }
        }
        if is_used(etype) {
            let need = nodes_of_type(etype).unwrap_or(0);
            if nodes.len() < need {
                return Err(c.err(line, format!("element {index} of type {etype} needs {need} nodes, has {}", nodes.len())));
            }
            add_element(&mut m, etype, tag, &nodes, &mut HashSet::new());
        } else {
            // unhandled types: the rest of the line is skipped
            c.getline();
        }
    }
    if !unknown.is_empty() {
        m.warnings.push(format!("{}: elements of type {unknown:?} are not supported and were skipped", c.path.display()));
    }
    finish(&mut m);
    let (tok, line) = c.expect_token("$ENDELM or $EndElements")?;
    if tok != "$ENDELM" && tok != "$EndElements" {
        return Err(c.err(line, format!("expected $ENDELM or $EndElements after {nelems} elements, found '{tok}'")));
    }
    Ok(m)
}

fn parse_v4(c: &mut Cursor) -> Result<LoadedMesh, String> {
    let mut m = LoadedMesh::default();
    let (header, hl) = c.expect_line("the $Nodes header `numEntityBlocks numNodes minNodeTag maxNodeTag`")?;
    let mut f = Fields::new(c.path, header, hl);
    let nblocks = f.count("the number of node entity blocks")?;
    let nnodes = f.count("the number of nodes")?;
    for _ in 0..nblocks {
        let (entity, el) = c.expect_line("a node entity line `entityDim entityTag parametric numNodesInBlock`")?;
        let mut f = Fields::new(c.path, entity, el);
        f.count("the entity dimension")?;
        f.int("the entity tag")?;
        f.count("the parametric flag")?;
        let n = f.count("the number of nodes in the block")?;
        for _ in 0..n {
            c.expect_line("a node tag line")?;
        }
        for _ in 0..n {
            let (coords, cl) = c.expect_line("a node coordinate line `x y z`")?;
            let mut f = Fields::new(c.path, coords, cl);
            let x = f.real("x")?;
            let y = f.real("y")?;
            let z = f.real("z")?;
            m.positions.push([x, y, z]);
        }
    }
    if m.positions.len() != nnodes {
        m.warnings.push(format!("{}: the $Nodes header announces {nnodes} nodes, the blocks hold {}", c.path.display(), m.positions.len()));
    }
    let (l, ll) = c.expect_line("$EndNodes")?;
    if !l.starts_with("$EndNodes") {
        return Err(c.err(ll, format!("expected $EndNodes, found '{}'", l.trim_end())));
    }
    let (l, ll) = c.expect_line("$Elements")?;
    if !l.starts_with("$Elements") {
        return Err(c.err(ll, format!("expected $Elements right after $EndNodes, found '{}'", l.trim_end())));
    }
    let (header, hl) = c.expect_line("the $Elements header `numEntityBlocks numElements minElementTag maxElementTag`")?;
    let mut f = Fields::new(c.path, header, hl);
    let nblocks = f.count("the number of element entity blocks")?;
    let npos = m.positions.len();
    let mut edge_set = HashSet::new();
    let mut unknown: Vec<i64> = Vec::new();
    for _ in 0..nblocks {
        let (entity, el) = c.expect_line("an element entity line `entityDim entityTag elementType numElementsInBlock`")?;
        let mut f = Fields::new(c.path, entity, el);
        f.count("the entity dimension")?;
        f.int("the entity tag")?;
        let etype = f.int("the element type")?;
        let n = f.count("the number of elements in the block")?;
        let nn = match nodes_of_type(etype) {
            Some(k) => {
                if etype == 6 && !unknown.contains(&etype) {
                    unknown.push(etype);
                }
                k
            }
            None => {
                if !unknown.contains(&etype) {
                    unknown.push(etype);
                }
                0
            }
        };
        for _ in 0..n {
            let (elem, line) = c.expect_line("an element line `elementTag node…`")?;
            let mut f = Fields::new(c.path, elem, line);
            let tag = f.int("the element tag")?;
            let mut nodes = Vec::with_capacity(nn);
            for _ in 0..nn {
                let id = f.int("a node id of the element")?;
                if id < 1 || id as usize > npos {
                    return Err(c.err(
                        line,
                        format!("element {tag} refers to node {id}; nodes are numbered 1..{npos} (SOFA requires contiguous node tags from 1)"),
                    ));
                }
                nodes.push(id as usize - 1);
            }
            add_element(&mut m, etype, tag, &nodes, &mut edge_set);
        }
    }
    if !unknown.is_empty() {
        m.warnings.push(format!("{}: elements of type {unknown:?} are not supported and were skipped", c.path.display()));
    }
    finish(&mut m);
    let (tok, line) = c.expect_token("$EndElements")?;
    if tok != "$EndElements" {
        return Err(c.err(line, format!("expected $EndElements, found '{tok}'")));
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("test.msh")
    }

    const V1: &str = "$NOD\n5\n1 0 0 0\n2 1 0 0\n5 0 1 0\n7 0 0 1\n9 1 1 1\n$ENDNOD\n$ELM\n3\n\
1 4 1 1 4 1 2 5 7\n2 2 1 1 3 2 5 9\n3 15 1 1 1 9\n$ENDELM\n";

    #[test]
    fn v1_renumbers_nodes_with_holes() {
        let m = parse(p(), V1).unwrap();
        assert_eq!(m.positions.len(), 5);
        assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
        assert_eq!(m.triangles, vec![[1, 2, 4]]);
        assert_eq!(m.groups.tetrahedra, vec![crate::mesh::PrimitiveGroup::new(0, 1, "", "", -1)]);
    }

    #[test]
    fn v2_reads_tags_and_quadratic_triangles() {
        let text = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n0\n$EndPhysicalNames\n$Nodes\n6\n\
1 0 0 0\n2 2 0 0\n3 0 2 0\n4 1 0 0\n5 1 1 0\n6 0 1 0\n$EndNodes\n$Elements\n2\n\
1 9 2 7 3 1 2 3 4 5 6\n2 1 2 7 3 1 2\n$EndElements\n";
        let m = parse(p(), text).unwrap();
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
        // mid-node edges, then the line element (same edge again: per-element dedup only)
        assert_eq!(m.edges, vec![[0, 1], [1, 2], [0, 2], [0, 1]]);
        assert_eq!(m.high_order_edges, vec![[3, 0, 1, 1], [4, 1, 1, 1], [5, 2, 1, 1]]);
        assert_eq!(m.groups.triangles[0].nbp, 1);
    }

    #[test]
    fn v4_numbers_nodes_in_order() {
        let text = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n0 0 0 1\n$EndEntities\n$Nodes\n2 4 1 4\n\
0 1 0 1\n1\n0 0 0\n3 1 0 3\n2\n3\n4\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n$Elements\n2 2 1 2\n\
3 1 4 1\n1 1 2 3 4\n2 1 2 1\n2 2 3 4\n$EndElements\n";
        let m = parse(p(), text).unwrap();
        assert_eq!(m.positions, vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
        assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
        assert_eq!(m.triangles, vec![[1, 2, 3]]);
    }

    #[test]
    fn truncated_and_garbage_files_fail_with_positions() {
        let cases: &[(&str, &str)] = &[
            ("", "test.msh:1: unexpected end of file"),
            ("hello\n", "test.msh:1: not a Gmsh file"),
            ("$NOD\n5\n1 0 0 0\n2 1 0", "unexpected end of file: expected the node's z coordinate"),
            ("$NOD\n2\n1 0 0 0\n2 1 0 x\n", "test.msh:4: expected the node's z coordinate (a number), found 'x'"),
            ("$NOD\n1\n1 0 0 0\n$ELM\n", "test.msh:4: expected $ENDNOD or $EndNodes"),
            ("$NOD\n1\n1 0 0 0\n$ENDNOD\n$ELM\n1\n1 2 1 1 3 1 1 8\n$ENDELM\n", "test.msh:7: element 1 refers to node 8"),
            ("$NOD\n1\n1 0 0 0\n$ENDNOD\n$ELM\n2\n1 15 1 1 1 1\n", "expected an element id"),
            ("$MeshFormat\nx\n$EndMeshFormat\n", "test.msh:2: invalid mesh format version"),
            ("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n", "expected a $Nodes section"),
            ("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2 1 2\n0 1 0 2\n1\n", "expected a node tag line"),
            ("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 1 1 1\n0 1 0 1\n1\n0 0 zz\n", "test.msh:8: expected z (a number), found 'zz'"),
            (V1.trim_end_matches("$ENDELM\n"), "expected $ENDELM or $EndElements"),
        ];
        for (text, expected) in cases {
            let e = parse(p(), text).unwrap_err();
            assert!(e.contains(expected), "for {text:?}: got '{e}', expected '{expected}'");
        }
        // random bytes never panic
        let mut state = 12345u64;
        for len in 0..300 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    b"$NOD ELM0123456789 .-\n"[(state >> 33) as usize % 22]
                })
                .collect();
            let _ = parse(p(), &String::from_utf8_lossy(&bytes));
            let mut t = V1.as_bytes()[..len.min(V1.len())].to_vec();
            t.extend_from_slice(&bytes[..len / 10]);
            let _ = parse(p(), &String::from_utf8_lossy(&t));
        }
    }
}
