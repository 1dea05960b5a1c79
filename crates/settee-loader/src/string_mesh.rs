//! `StringMeshCreator`: a procedural string of `resolution` points from `(0,0,0)` to `(1,0,0)`
//! (`x = i/(n−1)`) joined by the edges `(i−1, i)`; it is a mesh loader, so `translation`,
//! `rotation` and `scale3d` apply.

use settee_core::data::{decl, DataKind::*, DataSet};
use settee_core::{Component, ComponentClass, CreateArgs, DataDecl, Roles, TemplateRule};

use crate::loader::{preparse_scale, Format, MeshLoader, Source};
use crate::mesh::{mesh_loader_reads, LoadedMesh, FILE_DATA, MESH_LOADER_DATA, NO_SRC_LINK};

const RESOLUTION: settee_core::DataRef<settee_core::data_ref::Int> = settee_core::DataRef::new("resolution");

static DATA: &[DataDecl] = &[decl("resolution", Int, "2", "number of vertices")];

static FORMAT: Format = Format { source: Source::Generated(generate), subelements_by_default: false };

pub static CLASS: ComponentClass = ComponentClass {
    name: "StringMeshCreator",
    description: "Procedural creation of a one-dimensional mesh (a string of points and edges along x).",
    roles: Roles::LOADER,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[FILE_DATA, MESH_LOADER_DATA, DATA],
    links: &[],
    create,
    preparse: Some(preparse_scale),
    no_src_link: NO_SRC_LINK,
    reads: mesh_loader_reads!(RESOLUTION),
};

fn create(_: &CreateArgs) -> Box<dyn Component> {
    MeshLoader::boxed(&FORMAT)
}

/// Points `x/(n−1)` and edges `(i−1, i)`.
pub fn generate(d: &DataSet) -> Result<LoadedMesh, String> {
    let r = d.get(RESOLUTION);
    if !(0..=10_000_000).contains(&r) {
        return Err(format!("resolution {r} is out of range (expected a number of vertices ≥ 0)"));
    }
    let n = r as usize;
    let mut m = LoadedMesh::default();
    for x in 0..n {
        // x·1.0/(n−1), evaluated left to right as in SOFA (1 vertex: 0/0)
        m.positions.push([x as f64 * 1.0 / (n as f64 - 1.0), 0.0, 0.0]);
    }
    for e in 1..n {
        m.edges.push([e - 1, e]);
    }
    Ok(m)
}
