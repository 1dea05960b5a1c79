//! VTK file formats: XML unstructured grids (`.vtu`), the legacy text format (`.vtk`) and
//! ParaView's time-series collections (`.pvd`), ASCII only.
//!
//! Written by hand rather than with a crate: the one Rust VTK crate (`vtkio`) has had no stable
//! release since 2021 (only a 0.7 release candidate), and brings an old parser-combinator
//! library, a second `quick-xml` and C compression libraries into the build for what is, in
//! ASCII, a few lines of text per array. The layout follows SOFA's VTKExporter.

use std::fmt::Write as _;

use settee_core::MeshData;

/// VTK cell type codes.
pub const VTK_VERTEX: u8 = 1;
pub const VTK_LINE: u8 = 3;
pub const VTK_TRIANGLE: u8 = 5;
pub const VTK_QUAD: u8 = 9;
pub const VTK_TETRA: u8 = 10;
pub const VTK_HEXAHEDRON: u8 = 12;

/// A named array of point or cell values (`components` values per point or cell).
#[derive(Clone, Debug, PartialEq)]
pub struct DataArray {
    pub name: String,
    /// VTK's type name: `Float64`, `Float32`, `Int32`, `UInt32`.
    pub ty: &'static str,
    pub components: usize,
    pub values: Vec<f64>,
}

/// An unstructured grid: points, cells (connectivity, end offsets, VTK types) and data arrays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grid {
    pub points: Vec<[f64; 3]>,
    pub connectivity: Vec<usize>,
    pub offsets: Vec<usize>,
    pub types: Vec<u8>,
    pub point_data: Vec<DataArray>,
    pub cell_data: Vec<DataArray>,
}

/// Which cells of a mesh to write (SOFA's `edges`, `triangles`, … flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellSelection {
    pub edges: bool,
    pub triangles: bool,
    pub quads: bool,
    pub tetras: bool,
    pub hexas: bool,
}

impl CellSelection {
    /// The cells of the highest dimension the mesh has (volumes, else surfaces, else edges):
    /// what a viewer should draw without doubling faces over volumes.
    pub fn highest(mesh: &MeshData) -> CellSelection {
        let volumes = !mesh.tetrahedra.is_empty() || !mesh.hexahedra.is_empty();
        let surfaces = !volumes && (!mesh.triangles.is_empty() || !mesh.quads.is_empty());
        CellSelection { edges: !volumes && !surfaces, triangles: surfaces, quads: surfaces, tetras: volumes, hexas: volumes }
    }
}

impl Grid {
    pub fn new(points: Vec<[f64; 3]>) -> Grid {
        Grid { points, ..Grid::default() }
    }

    pub fn nb_cells(&self) -> usize {
        self.types.len()
    }

    /// Appends cells of `K` points each, of VTK type `ty`.
    pub fn add_cells<const K: usize>(&mut self, cells: &[[usize; K]], ty: u8) {
        for c in cells {
            self.connectivity.extend_from_slice(c);
            self.offsets.push(self.connectivity.len());
            self.types.push(ty);
        }
    }

    /// Appends the selected cells of a mesh, in SOFA's order: edges, triangles, quads,
    /// tetrahedra, hexahedra.
    pub fn add_mesh(&mut self, mesh: &MeshData, sel: CellSelection) {
        if sel.edges {
            self.add_cells(&mesh.edges, VTK_LINE);
        }
        if sel.triangles {
            self.add_cells(&mesh.triangles, VTK_TRIANGLE);
        }
        if sel.quads {
            self.add_cells(&mesh.quads, VTK_QUAD);
        }
        if sel.tetras {
            self.add_cells(&mesh.tetrahedra, VTK_TETRA);
        }
        if sel.hexas {
            self.add_cells(&mesh.hexahedra, VTK_HEXAHEDRON);
        }
    }

    /// One vertex cell per point (a state without a topology).
    pub fn add_vertices(&mut self) {
        let cells: Vec<[usize; 1]> = (0..self.points.len()).map(|i| [i]).collect();
        self.add_cells(&cells, VTK_VERTEX);
    }

    /// True when every cell refers to an existing point.
    pub fn cells_in_range(&self) -> bool {
        self.connectivity.iter().all(|&i| i < self.points.len())
    }
}

/// How numbers are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// As SOFA's VTKExporter: C++'s default stream format (6 significant digits), points
    /// declared `Float32`.
    Sofa,
    /// Every digit needed to read the same double back, points declared `Float64`.
    Full,
}

impl Precision {
    fn num(self, x: f64) -> String {
        match self {
            Precision::Sofa => settee_core::gformat::format_g6(x),
            Precision::Full => format!("{x:?}"),
        }
    }
    fn points_type(self) -> &'static str {
        match self {
            Precision::Sofa => "Float32",
            Precision::Full => "Float64",
        }
    }
}

fn join_nums(p: Precision, v: &[f64]) -> String {
    let mut s = String::new();
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&p.num(*x));
    }
    s
}

fn write_arrays(out: &mut String, p: Precision, arrays: &[DataArray]) {
    for a in arrays {
        let _ = write!(out, "        <DataArray type=\"{}\" Name=\"{}\"", a.ty, xml_escape(&a.name));
        if a.components > 1 {
            let _ = write!(out, " NumberOfComponents=\"{}\"", a.components);
        }
        out.push_str(" format=\"ascii\">\n");
        for chunk in a.values.chunks(a.components.max(1)) {
            let _ = writeln!(out, "          {}", join_nums(p, chunk));
        }
        out.push_str("        </DataArray>\n");
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The text of an XML unstructured-grid file (`.vtu`), laid out as SOFA's VTKExporter writes it.
pub fn vtu_text(g: &Grid, p: Precision) -> String {
    let mut s = String::new();
    s.push_str("<?xml version=\"1.0\"?>\n");
    s.push_str("<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">\n");
    s.push_str("  <UnstructuredGrid>\n");
    let _ = writeln!(s, "    <Piece NumberOfPoints=\"{}\" NumberOfCells=\"{}\">", g.points.len(), g.nb_cells());
    if !g.point_data.is_empty() {
        s.push_str("      <PointData>\n");
        write_arrays(&mut s, p, &g.point_data);
        s.push_str("      </PointData>\n");
    }
    if !g.cell_data.is_empty() {
        s.push_str("      <CellData>\n");
        write_arrays(&mut s, p, &g.cell_data);
        s.push_str("      </CellData>\n");
    }
    s.push_str("      <Points>\n");
    let _ = writeln!(s, "        <DataArray type=\"{}\" NumberOfComponents=\"3\" format=\"ascii\">", p.points_type());
    for x in &g.points {
        let _ = writeln!(s, "\t{}", join_nums(p, x));
    }
    s.push_str("        </DataArray>\n      </Points>\n      <Cells>\n");
    s.push_str("        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">\n");
    let mut start = 0;
    for &end in &g.offsets {
        let ids: Vec<String> = g.connectivity[start..end].iter().map(|i| i.to_string()).collect();
        let _ = writeln!(s, "          {}", ids.join(" "));
        start = end;
    }
    s.push_str("        </DataArray>\n");
    s.push_str("        <DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">\n          ");
    for o in &g.offsets {
        let _ = write!(s, "{o} ");
    }
    s.push_str("\n        </DataArray>\n");
    s.push_str("        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n          ");
    for t in &g.types {
        let _ = write!(s, "{t} ");
    }
    s.push_str("\n        </DataArray>\n      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n");
    s
}

fn legacy_arrays(s: &mut String, p: Precision, arrays: &[DataArray]) {
    for a in arrays {
        if a.components == 3 {
            let _ = writeln!(s, "VECTORS {} double", a.name);
        } else {
            let _ = writeln!(s, "SCALARS {} double {}", a.name, a.components.max(1));
            s.push_str("LOOKUP_TABLE default\n");
        }
        for chunk in a.values.chunks(a.components.max(1)) {
            let _ = writeln!(s, "{}", join_nums(p, chunk));
        }
        s.push('\n');
    }
}

/// The text of a legacy VTK file (`# vtk DataFile Version 2.0`, unstructured grid).
pub fn legacy_text(g: &Grid, p: Precision) -> String {
    let mut s = String::from("# vtk DataFile Version 2.0\nExported VTK file\nASCII\n\nDATASET UNSTRUCTURED_GRID\n");
    let _ = writeln!(s, "POINTS {} {}", g.points.len(), if p == Precision::Sofa { "float" } else { "double" });
    for x in &g.points {
        let _ = writeln!(s, "{}", join_nums(p, x));
    }
    s.push('\n');
    let _ = writeln!(s, "CELLS {} {}", g.nb_cells(), g.nb_cells() + g.connectivity.len());
    let mut start = 0;
    for &end in &g.offsets {
        let ids: Vec<String> = g.connectivity[start..end].iter().map(|i| i.to_string()).collect();
        let _ = writeln!(s, "{} {}", end - start, ids.join(" "));
        start = end;
    }
    s.push('\n');
    let _ = writeln!(s, "CELL_TYPES {}", g.nb_cells());
    for t in &g.types {
        let _ = writeln!(s, "{t}");
    }
    s.push('\n');
    if !g.point_data.is_empty() {
        let _ = writeln!(s, "POINT_DATA {}", g.points.len());
        legacy_arrays(&mut s, p, &g.point_data);
    }
    if !g.cell_data.is_empty() {
        let _ = writeln!(s, "CELL_DATA {}", g.nb_cells());
        legacy_arrays(&mut s, p, &g.cell_data);
    }
    s
}

/// One file of a time series: its time, its part (one per exported object) and its path
/// relative to the `.pvd` file.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesEntry {
    pub time: f64,
    pub part: usize,
    pub file: String,
}

/// The text of a ParaView collection (`.pvd`) listing a time series.
pub fn pvd_text(entries: &[SeriesEntry]) -> String {
    let mut s = String::from("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n");
    for e in entries {
        let _ = writeln!(s, "    <DataSet timestep=\"{:?}\" group=\"\" part=\"{}\" file=\"{}\"/>", e.time, e.part, xml_escape(&e.file));
    }
    s.push_str("  </Collection>\n</VTKFile>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_triangles() -> Grid {
        let mut g = Grid::new(vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.1]]);
        g.add_cells(&[[0, 1, 2], [1, 3, 2]], VTK_TRIANGLE);
        g
    }

    #[test]
    fn vtu_lists_counts_offsets_and_types() {
        let t = vtu_text(&two_triangles(), Precision::Sofa);
        assert!(t.contains("<Piece NumberOfPoints=\"4\" NumberOfCells=\"2\">"), "{t}");
        assert!(t.contains("\t1 1 0.1\n"), "{t}");
        assert!(t.contains("          3 6 \n"), "{t}");
        assert!(t.contains("          5 5 \n"), "{t}");
    }

    #[test]
    fn legacy_counts_the_size_prefix_of_each_cell() {
        let t = legacy_text(&two_triangles(), Precision::Sofa);
        assert!(t.contains("CELLS 2 8\n3 0 1 2\n3 1 3 2\n"), "{t}");
        assert!(t.contains("CELL_TYPES 2\n5\n5\n"), "{t}");
    }

    #[test]
    fn full_precision_reads_back_the_same_double() {
        let g = Grid::new(vec![[0.1 + 0.2, -1e-300, 12345.678901234567]]);
        let t = vtu_text(&g, Precision::Full);
        let line = t.lines().find(|l| l.starts_with('\t')).unwrap();
        let v: Vec<f64> = line.split_whitespace().map(|x| x.parse().unwrap()).collect();
        assert_eq!(v, vec![0.1 + 0.2, -1e-300, 12345.678901234567]);
    }
}
