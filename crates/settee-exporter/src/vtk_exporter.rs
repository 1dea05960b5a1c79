//! `VTKExporter`: writes a mesh and its point positions to VTK files ParaView opens (SOFA's
//! IO/Mesh component).
//!
//! Points are, in order of preference, the `position` Data when the scene gives it, the
//! positions of the mechanical state (`mstate` link, else the context state) at the time of
//! the export, or the topology's points. Cells are the topology's (`topology` link, else the
//! context topology), filtered by the `edges`/`triangles`/`quads`/`tetras`/`hexas` flags.
//! `pointsDataFields`/`cellsDataFields` add arrays from other components' Data
//! (`[name=]object.field`, the object found from this node as a link path would be).
//!
//! When: once the simulation starts if `exportAtBegin`, every `exportEveryNumberOfSteps` steps
//! at the end of the step, and when the simulation ends if `exportAtEnd` (SOFA's
//! BaseSimulationExporter). Each file is numbered by a counter of the files written so far, as
//! SOFA names them: XML `name<k>.vtu` (`name.vtu` becomes `name<k>.vtu`), legacy
//! `name_<k>.vtk` — or the same name each time with `overwrite`.

use settee_core::data::Value;
use settee_core::role::{MechanicalState, Topology};
use settee_core::scene::LinkTarget;
use settee_core::{component, Component, ComponentId, InitCtx, Scene, SimError, SimResult, VecId};

use crate::vtk::{self, CellSelection, DataArray, Grid, Precision};

/// The Data every SOFA simulation exporter has (BaseSimulationExporter).
#[settee_core::data_group(data = {
    /// Path or file name to write; the component's name when empty
    filename: FileName,
    /// Export every this many steps, at the end of the step (0: never)
    exportEveryNumberOfSteps: Int = "0",
    /// Export once the simulation is initialised, before the first step
    exportAtBegin: Bool = "false",
    /// Export when the simulation ends
    exportAtEnd: Bool = "false",
    /// Enable or disable the exports
    enable: Bool = "true",
})]
pub struct ExporterData;

/// The step counter and file naming every SOFA simulation exporter shares.
#[derive(Clone, Default, Debug)]
pub struct ExportSchedule {
    steps: u64,
}

impl ExportSchedule {
    /// Counts a step; true when this step's end is an export (every `every` steps, never if 0).
    pub fn step(&mut self, every: i64) -> bool {
        if every <= 0 {
            return false;
        }
        self.steps += 1;
        self.steps.is_multiple_of(every as u64)
    }

    /// Steps counted so far (SOFA's `m_stepCounter`, which counts only when exporting every
    /// k > 0 steps).
    pub fn steps(&self) -> u64 {
        self.steps
    }
}

/// One `[name=]object.field` entry of `pointsDataFields`/`cellsDataFields`.
#[derive(Clone, Debug, PartialEq)]
struct FieldRef {
    name: String,
    object: String,
    field: String,
}

fn parse_field_ref(s: &str) -> Option<FieldRef> {
    let (name, rest) = match s.split_once('=') {
        Some((n, r)) => (n.to_string(), r),
        None => (String::new(), s),
    };
    let rest = rest.strip_prefix('@').unwrap_or(rest);
    let (object, field) = rest.rsplit_once('.')?;
    let name = if name.is_empty() { field.to_string() } else { name };
    Some(FieldRef { name, object: object.to_string(), field: field.to_string() })
}

/// The file written for export number `k`, with SOFA's naming.
pub fn numbered_file_name(filename: &str, xml: bool, overwrite: bool, k: usize) -> String {
    if xml {
        let stem = filename.strip_suffix(".vtu").unwrap_or(filename);
        if overwrite {
            format!("{stem}.vtu")
        } else {
            format!("{stem}{k}.vtu")
        }
    } else {
        // Legacy: a `.vtu` or `.vtk` ending is kept; without one SOFA appends `.vtu` (sic).
        let (stem, ext) = if let Some(s) = filename.strip_suffix(".vtu") {
            (s, ".vtu")
        } else if let Some(s) = filename.strip_suffix(".vtk") {
            (s, ".vtk")
        } else {
            (filename, ".vtu")
        };
        if overwrite {
            format!("{stem}{ext}")
        } else {
            format!("{stem}_{k}{ext}")
        }
    }
}

/// Exports a mesh and its points to VTK files (XML .vtu or legacy .vtk) for ParaView.
///
/// The VTKExporter component.
#[component(
    name = "VTKExporter", module = "Sofa.Component.IO.Mesh",
    inherit = [ExporterData, Self],
    no_src_link = ["position"],
    data = {
        /// Write XML unstructured grids (.vtu); false: the legacy VTK text format
        "XMLformat" as XML_FORMAT: Bool = "true",
        /// Points to write (default: the mechanical state's positions, else the topology's points)
        position: RealTuples(3),
        /// Write the topology's edges
        edges: Bool = "true",
        /// Write the topology's triangles
        triangles: Bool = "false",
        /// Write the topology's quads
        quads: Bool = "false",
        /// Write the topology's tetrahedra
        tetras: Bool = "false",
        /// Write the topology's hexahedra
        hexas: Bool = "false",
        /// Data written as point arrays: [name=]object.field
        pointsDataFields: Strings,
        /// Data written as cell arrays: [name=]object.field
        cellsDataFields: Strings,
        /// Write the same file at each export instead of numbering the files
        overwrite: Bool = "false",
    },
    links = {
        /// Topology to export (default: the context topology)
        topology: Topology,
        /// Mechanical state whose positions are exported (default: the context state)
        mstate: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct VtkExporter {
    schedule: ExportSchedule,
    files: usize,
    topology: Option<ComponentId>,
    state: Option<ComponentId>,
    points_fields: Vec<FieldRef>,
    cells_fields: Vec<FieldRef>,
    /// The files written, in order.
    pub written: Vec<std::path::PathBuf>,
}

impl VtkExporter {
    fn parse_fields(cx: &InitCtx, list: &[String], what: &str) -> SimResult<Vec<FieldRef>> {
        list.iter()
            .map(|s| {
                parse_field_ref(s).ok_or_else(|| {
                    cx.error(format!("`{what}` entry '{s}' names no Data"))
                        .hint("write each entry as object.field or name=object.field, e.g. mecha.velocity")
                })
            })
            .collect()
    }

    fn array(&self, scene: &Scene, me: ComponentId, f: &FieldRef) -> SimResult<DataArray> {
        let node = scene.entry(me).node;
        let obj = match scene.resolve_path(node, &f.object, Some(me), None) {
            Some(LinkTarget::Component(c)) => c,
            _ => {
                return Err(SimError::new(format!("no object '{}' for the exported Data '{}.{}'", f.object, f.object, f.field))
                    .hint("name an object of this node or give a path to it, e.g. ../child/mecha.position"));
            }
        };
        let Some(idx) = scene.entry(obj).data.index_of(&f.field) else {
            return Err(
                SimError::new(format!("'{}' has no Data '{}'", scene.entry(obj).label(), f.field)).hint("see `settee doc CLASS` for its Data")
            );
        };
        let (ty, components, values) = match scene.read_data(obj, idx) {
            Value::Reals { arity, v } => ("Float64", arity.max(1), v),
            Value::Real(x) => ("Float64", 1, vec![x]),
            Value::Int(i) => ("Int32", 1, vec![i as f64]),
            Value::Bool(b) => ("Int32", 1, vec![b as i32 as f64]),
            Value::Indices { arity, v } => ("UInt32", arity.max(1), v.into_iter().map(|i| i as f64).collect()),
            Value::Str(_) | Value::Strings(_) => {
                return Err(SimError::new(format!("Data '{}.{}' is text and cannot be exported as numbers", f.object, f.field)));
            }
        };
        Ok(DataArray { name: f.name.clone(), ty, components, values })
    }

    /// Writes the next file.
    fn write(&mut self, scene: &Scene, me: ComponentId) -> SimResult {
        let d = &scene.entry(me).data;
        let (xml, overwrite) = (d.get(Self::XML_FORMAT), d.get(Self::OVERWRITE));
        let sel = CellSelection {
            edges: d.get(Self::EDGES),
            triangles: d.get(Self::TRIANGLES),
            quads: d.get(Self::QUADS),
            tetras: d.get(Self::TETRAS),
            hexas: d.get(Self::HEXAS),
        };
        let filename = match d.get(ExporterData::FILENAME) {
            "" => scene.entry(me).name.clone(),
            f => f.to_string(),
        };
        let points: Vec<[f64; 3]> = if d.is_given(Self::POSITION) {
            settee_core::topology::points_from_flat(d.get(Self::POSITION), 3)
        } else if let Some(st) = self.state.and_then(|s| scene.state_of(s)) {
            let st = scene.store.get(st);
            settee_core::topology::points_from_flat(st.read(VecId::POSITION), st.layout.coord_size())
        } else {
            self.topology.and_then(|t| scene.mesh_of(t)).map(|m| m.points.clone()).unwrap_or_default()
        };
        let mut grid = Grid::new(points);
        if let Some(mesh) = self.topology.and_then(|t| scene.mesh_of(t)) {
            grid.add_mesh(mesh, sel);
        }
        for f in &self.points_fields {
            let a = self.array(scene, me, f)?;
            grid.point_data.push(a);
        }
        for f in &self.cells_fields {
            let a = self.array(scene, me, f)?;
            grid.cell_data.push(a);
        }
        let text = if xml { vtk::vtu_text(&grid, Precision::Sofa) } else { vtk::legacy_text(&grid, Precision::Sofa) };
        let path = scene.output_file(&numbered_file_name(&filename, xml, overwrite, self.files));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        std::fs::write(&path, text)
            .map_err(|e| SimError::new(format!("cannot write {}: {e}", path.display())).hint("check that the directory exists and is writable"))?;
        self.files += 1;
        self.written.push(path);
        Ok(())
    }
}

impl Component for VtkExporter {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let node = cx.node();
        self.state = cx.link_targets("mstate").first().copied().or_else(|| crate::common::context_state(cx.scene, node));
        self.topology = cx.link_targets("topology").first().copied().or_else(|| cx.scene.context_topology(node));
        if self.topology.and_then(|t| cx.scene.mesh_of(t)).is_none() {
            return Err(cx
                .error("VTKExporter found no topology to export")
                .hint("put it in a node with a topology (MeshTopology, a grid, …) or set topology=\"@path\""));
        }
        let (p, c) = (cx.data().get(Self::POINTS_DATA_FIELDS).to_vec(), cx.data().get(Self::CELLS_DATA_FIELDS).to_vec());
        self.points_fields = Self::parse_fields(cx, &p, "pointsDataFields")?;
        self.cells_fields = Self::parse_fields(cx, &c, "cellsDataFields")?;
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

    #[test]
    fn files_are_numbered_as_sofa_names_them() {
        assert_eq!(numbered_file_name("out/beam", true, false, 3), "out/beam3.vtu");
        assert_eq!(numbered_file_name("beam.vtu", true, false, 0), "beam0.vtu");
        assert_eq!(numbered_file_name("example.vtk", true, false, 1), "example.vtk1.vtu");
        assert_eq!(numbered_file_name("beam.vtu", true, true, 7), "beam.vtu");
        assert_eq!(numbered_file_name("example.vtk", false, false, 2), "example_2.vtk");
        assert_eq!(numbered_file_name("beam", false, false, 0), "beam_0.vtu");
        assert_eq!(numbered_file_name("beam.vtk", false, true, 4), "beam.vtk");
    }

    #[test]
    fn data_field_entries_split_name_object_and_field() {
        assert_eq!(parse_field_ref("mecha.position"), Some(FieldRef { name: "position".into(), object: "mecha".into(), field: "position".into() }));
        assert_eq!(
            parse_field_ref("v=@../sub/mecha.velocity"),
            Some(FieldRef { name: "v".into(), object: "../sub/mecha".into(), field: "velocity".into() })
        );
        assert_eq!(parse_field_ref("nodot"), None);
    }

    #[test]
    fn schedule_exports_every_k_steps_and_never_for_zero() {
        let mut s = ExportSchedule::default();
        let hits: Vec<bool> = (0..6).map(|_| s.step(2)).collect();
        assert_eq!(hits, [false, true, false, true, false, true]);
        let mut z = ExportSchedule::default();
        assert!(!(0..5).any(|_| z.step(0)));
    }
}
