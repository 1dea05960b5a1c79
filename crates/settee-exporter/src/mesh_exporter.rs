//! `MeshExporter` and `STLExporter`: a mesh written to files, as SOFA's IO/Mesh components do,
//! at the times every SOFA simulation exporter shares ([`ExporterData`]: at the start, every
//! `exportEveryNumberOfSteps` steps, at the end).
//!
//! File names follow SOFA: with `exportEveryNumberOfSteps` > 0 the name takes the export's
//! number on 5 digits (`outFile00001.vtk`: step counter / steps between exports); MeshExporter
//! also replaces `%n` (step counter), `%p` (points), `%E` (cells written) and `%e` (elements of
//! the highest dimension) in the name. Relative names are written under the scene's output
//! directory (`settee run --output-dir`, else the current directory, as SOFA).
//!
//! MeshExporter writes the legacy VTK format (`format="vtk"`); SOFA's other formats are not
//! offered yet. STLExporter writes ASCII STL when `binaryformat` is true and binary STL when
//! false: SOFA's switch is inverted so, and Settee keeps it so that a scene writes the same file.
//! Its binary files have the standard 80-byte header, which SOFA's lack.

use std::fmt::Write as _;

use settee_core::gformat::format_g;
use settee_core::{component, Component, ComponentId, InitCtx, Scene, SimError, SimResult, VecId};

use crate::vtk_exporter::{ExportSchedule, ExporterData};

/// SOFA's `getOrCreateTargetPath`: the name, followed by the export's number on 5 digits when
/// the exporter exports every `every` steps.
pub fn target_name(name: &str, every: i64, step_counter: u64) -> String {
    if every > 0 {
        format!("{name}{:05}", step_counter / every as u64)
    } else {
        name.to_string()
    }
}

/// The mesh written, with the cell flags applied.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExportedMesh {
    pub points: Vec<[f64; 3]>,
    pub edges: Vec<[usize; 2]>,
    pub triangles: Vec<[usize; 3]>,
    pub quads: Vec<[usize; 4]>,
    pub tetrahedra: Vec<[usize; 4]>,
    pub hexahedra: Vec<[usize; 8]>,
}

impl ExportedMesh {
    fn cells(&self) -> usize {
        self.edges.len() + self.triangles.len() + self.quads.len() + self.tetrahedra.len() + self.hexahedra.len()
    }

    /// SOFA's `%e`: the elements of the highest dimension present (else the points).
    fn elements(&self) -> usize {
        [self.tetrahedra.len() + self.hexahedra.len(), self.triangles.len() + self.quads.len(), self.edges.len(), self.points.len()]
            .into_iter()
            .find(|&n| n > 0)
            .unwrap_or(0)
    }
}

/// `%n`, `%p`, `%E`, `%e` of a MeshExporter file name; an unknown `%x` is dropped, with a
/// message.
pub fn expand_name(name: &str, step_counter: u64, mesh: &ExportedMesh) -> (String, Option<String>) {
    let mut out = String::new();
    let mut problem = None;
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push_str(&step_counter.to_string()),
            Some('p') => out.push_str(&mesh.points.len().to_string()),
            Some('E') => out.push_str(&mesh.cells().to_string()),
            Some('e') => out.push_str(&mesh.elements().to_string()),
            other => problem = Some(format!("invalid character {other:?} after % in the file name")),
        }
    }
    (out, problem)
}

/// The legacy VTK text SOFA's MeshExporter writes (9 significant digits).
pub fn legacy_vtk(mesh: &ExportedMesh) -> String {
    let mut s = String::from("# vtk DataFile Version 2.0\nSOFA Exported Mesh file\nASCII\nDATASET UNSTRUCTURED_GRID\n");
    let _ = writeln!(s, "POINTS {} float", mesh.points.len());
    for p in &mesh.points {
        let _ = writeln!(s, "{} {} {}", format_g(p[0], 9), format_g(p[1], 9), format_g(p[2], 9));
    }
    let m = mesh;
    let total = 3 * m.edges.len() + 4 * m.triangles.len() + 5 * m.quads.len() + 5 * m.tetrahedra.len() + 9 * m.hexahedra.len();
    let _ = writeln!(s, "CELLS {} {total}", m.cells());
    let mut cell = |ids: &[usize]| {
        let _ = write!(s, "{}", ids.len());
        for i in ids {
            let _ = write!(s, " {i}");
        }
        s.push('\n');
    };
    m.edges.iter().for_each(|c| cell(c));
    m.triangles.iter().for_each(|c| cell(c));
    m.quads.iter().for_each(|c| cell(c));
    m.tetrahedra.iter().for_each(|c| cell(c));
    m.hexahedra.iter().for_each(|c| cell(c));
    let _ = writeln!(s, "CELL_TYPES {}", m.cells());
    for (n, ty) in [(m.edges.len(), 3), (m.triangles.len(), 5), (m.quads.len(), 9), (m.tetrahedra.len(), 10), (m.hexahedra.len(), 12)] {
        for _ in 0..n {
            let _ = writeln!(s, "{ty}");
        }
    }
    s
}

fn write_file(scene: &Scene, name: &str, bytes: &[u8]) -> SimResult<std::path::PathBuf> {
    let path = scene.output_file(name);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(&path, bytes)
        .map_err(|e| SimError::new(format!("cannot write {}: {e}", path.display())).hint("check that the directory exists and is writable"))?;
    Ok(path)
}

fn flat3(v: &[f64]) -> Vec<[f64; 3]> {
    v.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect()
}

/// Export topology and positions into file.
#[component(
    module = "Sofa.Component.IO.Mesh",
    inherit = [ExporterData, Self],
    create = |_| MeshExporter::default(),
    data = {
        /// File format to use (Settee writes vtk, SOFA's legacy VTK)
        format: Options("ALL", "vtkxml", "vtk", "netgen", "tetgen", "gmsh", "obj") = "ALL",
        /// points position (will use points from topology or mechanical state if this is empty)
        position: RealTuples(3),
        /// write edge topology
        edges: Bool = "true",
        /// write triangle topology
        triangles: Bool = "true",
        /// write quad topology
        quads: Bool = "true",
        /// write tetra topology
        tetras: Bool = "true",
        /// write hexa topology
        hexas: Bool = "true",
    },
)]
#[derive(Clone, Default)]
pub struct MeshExporter {
    schedule: ExportSchedule,
    topology: Option<ComponentId>,
    state: Option<ComponentId>,
    /// The files written, in order.
    pub written: Vec<std::path::PathBuf>,
}

impl MeshExporter {
    fn mesh(&self, scene: &Scene, me: ComponentId) -> ExportedMesh {
        let d = &scene.entry(me).data;
        let points = if d.is_given(Self::POSITION) {
            flat3(d.get(Self::POSITION))
        } else if let Some(st) = self.state.and_then(|s| scene.state_of(s)) {
            let st = scene.store.get(st);
            settee_core::topology::points_from_flat(st.read(VecId::POSITION), st.layout.coord_size())
        } else {
            Vec::new()
        };
        let mut out = ExportedMesh { points, ..Default::default() };
        if let Some(m) = self.topology.and_then(|t| scene.mesh_of(t)) {
            if d.get(Self::EDGES) {
                out.edges = m.edges.clone();
            }
            if d.get(Self::TRIANGLES) {
                out.triangles = m.triangles.clone();
            }
            if d.get(Self::QUADS) {
                out.quads = m.quads.clone();
            }
            if d.get(Self::TETRAS) {
                out.tetrahedra = m.tetrahedra.clone();
            }
            if d.get(Self::HEXAS) {
                out.hexahedra = m.hexahedra.clone();
            }
        }
        out
    }

    fn write(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let mesh = self.mesh(scene, me);
        let d = &scene.entry(me).data;
        let name = match d.get(ExporterData::FILENAME) {
            "" => scene.entry(me).name.clone(),
            f => f.to_string(),
        };
        let every = d.get(ExporterData::EXPORT_EVERY_NUMBER_OF_STEPS);
        let (expanded, problem) = expand_name(&name, self.schedule.steps(), &mesh);
        let file = format!("{}.vtk", target_name(&expanded, every, self.schedule.steps()));
        let path = write_file(scene, &file, legacy_vtk(&mesh).as_bytes())?;
        self.written.push(path);
        if let Some(p) = problem {
            let label = scene.entry(me).label();
            scene.report(settee_core::Diagnostic::warning(p).subject(label));
        }
        Ok(())
    }
}

impl Component for MeshExporter {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let node = cx.node();
        if cx.data().get(Self::FORMAT) != "vtk" {
            return Err(cx
                .error(format!("MeshExporter format '{}' is not supported yet", cx.data().get(Self::FORMAT)))
                .hint("use format=\"vtk\" (legacy VTK), or VTKExporter for VTK XML files"));
        }
        self.topology = cx.scene.context_topology(node);
        if self.topology.is_none() {
            return Err(cx.error("MeshExporter found no topology to export").hint("put it in a node with a topology (MeshTopology, a grid, …)"));
        }
        self.state = crate::common::context_state(cx.scene, node);
        Ok(())
    }

    fn simulation_start(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let d = &scene.entry(me).data;
        if d.get(ExporterData::ENABLE) && d.get(ExporterData::EXPORT_AT_BEGIN) {
            self.write(scene, me)?;
        }
        Ok(())
    }

    fn animate_end(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let d = &scene.entry(me).data;
        if d.get(ExporterData::ENABLE) && self.schedule.step(d.get(ExporterData::EXPORT_EVERY_NUMBER_OF_STEPS)) {
            self.write(scene, me)?;
        }
        Ok(())
    }

    fn simulation_end(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let d = &scene.entry(me).data;
        if d.get(ExporterData::ENABLE) && d.get(ExporterData::EXPORT_AT_END) {
            self.write(scene, me)?;
        }
        Ok(())
    }
}

/// The triangles STLExporter writes: the triangles, else each quad cut into (0,1,2), (0,2,3).
pub fn stl_triangles(triangles: &[usize], quads: &[usize]) -> Vec<[usize; 3]> {
    if !triangles.is_empty() {
        return triangles.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
    }
    quads.chunks_exact(4).flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]]).collect()
}

/// ASCII STL as SOFA writes it (zero normals, fixed 6 decimals).
pub fn stl_ascii(points: &[[f64; 3]], tris: &[[usize; 3]]) -> String {
    let mut s = String::from("solid Exported from Sofa\n");
    for t in tris {
        s.push_str("facet normal 0 0 0\nouter loop\n");
        for &i in t {
            let p = points[i];
            let _ = writeln!(s, "vertex {:.6} {:.6} {:.6}", p[0], p[1], p[2]);
        }
        s.push_str("endloop\nendfacet\n");
    }
    s.push_str("endsolid Exported from Sofa\n");
    s
}

/// Binary STL: 80-byte header, triangle count, then per triangle a zero normal, 3 vertices
/// (single precision) and a zero attribute count.
pub fn stl_binary(points: &[[f64; 3]], tris: &[[usize; 3]]) -> Vec<u8> {
    let mut b = vec![0u8; 80];
    b[..18].copy_from_slice(b"Exported from Sofa");
    b.extend((tris.len() as u32).to_le_bytes());
    for t in tris {
        b.extend([0u8; 12]);
        for &i in t {
            for c in points[i] {
                b.extend((c as f32).to_le_bytes());
            }
        }
        b.extend([0u8; 2]);
    }
    b
}

/// Save a topology in file.
#[component(
    module = "Sofa.Component.IO.Mesh",
    inherit = [ExporterData, Self],
    create = |_| STLExporter::default(),
    data = {
        /// if true, save in ASCII format, otherwise in binary (SOFA's switch is inverted so)
        binaryformat: Bool = "true",
        /// points coordinates (default: the topology's)
        position: RealTuples(3),
        /// triangles indices (default: the topology's)
        #[alias("triangles")]
        triangle: IndexTuples(3),
        /// quads indices (default: the topology's)
        #[alias("quads")]
        quad: IndexTuples(4),
    },
)]
#[derive(Clone, Default)]
#[allow(clippy::upper_case_acronyms)] // SOFA's class name
pub struct STLExporter {
    schedule: ExportSchedule,
    topology: Option<ComponentId>,
    /// The files written, in order.
    pub written: Vec<std::path::PathBuf>,
}

impl STLExporter {
    fn write(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let d = &scene.entry(me).data;
        let label = scene.entry(me).label();
        let (points, tris) = if d.is_given(Self::POSITION) {
            (flat3(d.get(Self::POSITION)), stl_triangles(d.get(Self::TRIANGLE), d.get(Self::QUAD)))
        } else if let Some(m) = self.topology.and_then(|t| scene.mesh_of(t)) {
            let (t, q): (Vec<usize>, Vec<usize>) = (m.triangles.iter().flatten().copied().collect(), m.quads.iter().flatten().copied().collect());
            (m.points.clone(), stl_triangles(&t, &q))
        } else {
            (Vec::new(), Vec::new())
        };
        if points.is_empty() || tris.is_empty() {
            let what = if points.is_empty() { "no positions" } else { "no triangles nor quads" };
            scene.report(settee_core::Diagnostic::warning(format!("STLExporter: {what} to export; no file written")).subject(label));
            return Ok(());
        }
        if let Some(&bad) = tris.iter().flatten().find(|&&i| i >= points.len()) {
            return Err(SimError::new(format!("{label}: a triangle refers to point {bad} but there are {} points", points.len())));
        }
        let name = match d.get(ExporterData::FILENAME) {
            "" => scene.entry(me).name.clone(),
            f => f.to_string(),
        };
        let file = format!("{}.stl", target_name(&name, d.get(ExporterData::EXPORT_EVERY_NUMBER_OF_STEPS), self.schedule.steps()));
        let bytes = if d.get(Self::BINARYFORMAT) { stl_ascii(&points, &tris).into_bytes() } else { stl_binary(&points, &tris) };
        let path = write_file(scene, &file, &bytes)?;
        self.written.push(path);
        Ok(())
    }
}

impl Component for STLExporter {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let node = cx.node();
        self.topology = cx.scene.context_topology(node);
        if self.topology.is_none() && !cx.data().is_given(Self::POSITION) {
            return Err(cx
                .error("STLExporter needs a topology or position and triangle (or quad) Data")
                .hint("link position and triangle to a loader"));
        }
        Ok(())
    }

    fn simulation_start(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let d = &scene.entry(me).data;
        if d.get(ExporterData::ENABLE) && d.get(ExporterData::EXPORT_AT_BEGIN) {
            self.write(scene, me)?;
        }
        Ok(())
    }

    fn animate_end(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let d = &scene.entry(me).data;
        if d.get(ExporterData::ENABLE) && self.schedule.step(d.get(ExporterData::EXPORT_EVERY_NUMBER_OF_STEPS)) {
            self.write(scene, me)?;
        }
        Ok(())
    }

    fn simulation_end(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let d = &scene.entry(me).data;
        if d.get(ExporterData::ENABLE) && d.get(ExporterData::EXPORT_AT_END) {
            self.write(scene, me)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SOFA's names: 5-digit export number when exporting every k steps, `%` fields.
    #[test]
    fn file_names_follow_sofa() {
        assert_eq!(target_name("outFile", 5, 10), "outFile00002");
        assert_eq!(target_name("cube5x5x5", 0, 0), "cube5x5x5");
        let m = ExportedMesh { points: vec![[0.0; 3]; 5], tetrahedra: vec![[0, 1, 2, 3]; 2], triangles: vec![[0, 1, 2]], ..Default::default() };
        assert_eq!(expand_name("m_%n_%p_%E_%e", 7, &m), ("m_7_5_3_2".to_string(), None));
        assert!(expand_name("a%q", 0, &m).1.is_some());
    }

    /// A tetrahedron and a hexahedron: counts, list size (5 + 9) and types as SOFA writes them.
    #[test]
    fn legacy_vtk_text() {
        let m = ExportedMesh {
            points: vec![[0.1, 2.0, 1.0 / 3.0]],
            tetrahedra: vec![[0, 1, 2, 3]],
            hexahedra: vec![[0, 1, 2, 3, 4, 5, 6, 7]],
            ..Default::default()
        };
        let t = legacy_vtk(&m);
        assert!(t.contains("POINTS 1 float\n0.1 2 0.333333333\nCELLS 2 14\n4 0 1 2 3\n8 0 1 2 3 4 5 6 7\nCELL_TYPES 2\n10\n12\n"), "{t}");
    }

    /// Quads become two triangles; ASCII has 6 decimals, binary 50 bytes per triangle after
    /// the 84-byte header.
    #[test]
    fn stl_outputs() {
        let tris = stl_triangles(&[], &[0, 1, 2, 3]);
        assert_eq!(tris, vec![[0, 1, 2], [0, 2, 3]]);
        let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.25]];
        let a = stl_ascii(&p, &tris);
        assert!(a.starts_with("solid Exported from Sofa\nfacet normal 0 0 0\nouter loop\nvertex 0.000000 0.000000 0.000000\n"));
        assert!(a.contains("vertex 0.000000 1.000000 0.250000\nendloop\nendfacet\nendsolid Exported from Sofa\n"));
        let b = stl_binary(&p, &tris);
        assert_eq!(b.len(), 84 + 2 * 50);
        assert_eq!(u32::from_le_bytes([b[80], b[81], b[82], b[83]]), 2);
        assert_eq!(f32::from_le_bytes([b[84 + 12 + 12], b[84 + 13 + 12], b[84 + 14 + 12], b[84 + 15 + 12]]), 1.0);
    }
}
