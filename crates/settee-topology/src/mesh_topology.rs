//! `MeshTopology`: a constant topology given by explicit lists (usually linked from a loader with
//! `src="@loader"`); missing edges, triangles and quads are derived as SOFA does (see
//! [`crate::mesh`]).

use settee_core::data::{decl, decl_alias, DataKind::*, Value};
use settee_core::topology::{group, points_from_flat};
use settee_core::{
    component_any, Component, ComponentClass, CreateArgs, DataDecl, DataSet, InitCtx, MeshData, Roles, SimError, SimResult, TemplateRule,
};

use crate::mesh::{complete_lists, DerivedLists};

/// The Data every mesh topology container has (SOFA's `MeshTopology`, base of the grids).
pub static MESH_DATA: &[DataDecl] = &[
    decl_alias("position", &["points"], RealTuples(3), "", "list of point positions"),
    decl_alias("edges", &["lines"], IndexTuples(2), "", "list of edge indices"),
    decl("triangles", IndexTuples(3), "", "list of triangle indices"),
    decl("quads", IndexTuples(4), "", "list of quad indices"),
    decl_alias("tetrahedra", &["tetras"], IndexTuples(4), "", "list of tetrahedron indices"),
    decl_alias("hexahedra", &["hexas"], IndexTuples(8), "", "list of hexahedron indices"),
    decl("prisms", IndexTuples(6), "", "list of prism indices (stored, unused)"),
    decl("pyramids", IndexTuples(5), "", "list of pyramid indices (stored, unused)"),
    decl_alias("uv", &["texcoords"], RealTuples(2), "", "list of uv coordinates (rendering only)"),
    decl("computeAllBuffers", Bool, "false", "compute all cross-element buffers at init (no effect here)"),
    decl("drawEdges", Bool, "false", "draw the edges (rendering only)"),
    decl("drawTriangles", Bool, "false", "draw the triangles (rendering only)"),
    decl("drawQuads", Bool, "false", "draw the quads (rendering only)"),
    decl("drawTetrahedra", Bool, "false", "draw the tetrahedra (rendering only)"),
    decl("drawHexahedra", Bool, "false", "draw the hexahedra (rendering only)"),
];

static FILE_DATA: &[DataDecl] =
    &[decl_alias("filename", &["fileTopology"], FileName, "", "mesh file to read (not supported: use a loader and src=\"@loader\")")];

settee_core::data_refs! {
    static READS;
    POSITION: Reals = "position";
    EDGES: Indices = "edges";
    TRIANGLES: Indices = "triangles";
    QUADS: Indices = "quads";
    TETRAHEDRA: Indices = "tetrahedra";
    HEXAHEDRA: Indices = "hexahedra";
    FILENAME: Text = "filename";
}

pub static CLASS: ComponentClass = ComponentClass {
    name: "MeshTopology",
    description: "Generic constant topology given by explicit element lists (typically linked from a mesh loader).",
    roles: Roles::TOPOLOGY,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[MESH_DATA, FILE_DATA],
    links: &[],
    create,
    preparse: None,
    no_src_link: &[],
    reads: READS,
};

fn create(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(MeshTopology::default())
}

/// The MeshTopology component.
#[derive(Default)]
pub struct MeshTopology {
    mesh: MeshData,
    /// Lists this component derived itself (and wrote into its Data) at the last computation.
    derived: DerivedLists,
}

/// Reads the element lists of a mesh-topology DataSet.
pub fn mesh_from_data(d: &DataSet) -> MeshData {
    MeshData {
        points: points_from_flat(d.get(POSITION), 3),
        edges: group::<2>(d.get(EDGES)),
        triangles: group::<3>(d.get(TRIANGLES)),
        quads: group::<4>(d.get(QUADS)),
        tetrahedra: group::<4>(d.get(TETRAHEDRA)),
        hexahedra: group::<8>(d.get(HEXAHEDRA)),
    }
}

fn flat<const K: usize>(v: &[[usize; K]]) -> Value {
    Value::Indices { arity: K, v: v.iter().flatten().copied().collect() }
}

/// Writes the lists of `mesh` selected by `which` into the Data of the component (so that Data
/// links such as `@topo.edges` see the derived lists).
pub fn write_lists(d: &mut DataSet, mesh: &MeshData, which: DerivedLists) {
    if which.edges {
        d.set("edges", flat(&mesh.edges));
    }
    if which.triangles {
        d.set("triangles", flat(&mesh.triangles));
    }
    if which.quads {
        d.set("quads", flat(&mesh.quads));
    }
}

impl MeshTopology {
    fn compute(&mut self, cx: &mut InitCtx) {
        let d = cx.data();
        let mut mesh = mesh_from_data(d);
        // Lists derived at a previous call are outputs, not inputs, unless a link refilled them.
        let unlinked = |name: &str| d.field(name).is_some_and(|f| f.link.is_none());
        if self.derived.edges && unlinked("edges") {
            mesh.edges.clear();
        }
        if self.derived.triangles && unlinked("triangles") {
            mesh.triangles.clear();
        }
        if self.derived.quads && unlinked("quads") {
            mesh.quads.clear();
        }
        self.derived = complete_lists(&mut mesh);
        write_lists(cx.data_mut(), &mesh, self.derived);
        self.mesh = mesh;
    }

    fn check_indices(&self, cx: &InitCtx) -> SimResult {
        let n = self.mesh.points.len();
        if n == 0 {
            return Ok(());
        }
        let m = &self.mesh;
        let lists: [(&str, Option<usize>); 5] = [
            ("edges", m.edges.iter().flatten().max().copied()),
            ("triangles", m.triangles.iter().flatten().max().copied()),
            ("quads", m.quads.iter().flatten().max().copied()),
            ("tetrahedra", m.tetrahedra.iter().flatten().max().copied()),
            ("hexahedra", m.hexahedra.iter().flatten().max().copied()),
        ];
        for (name, max) in lists {
            if let Some(max) = max.filter(|&i| i >= n) {
                return Err(cx
                    .error(format!("{name} refer to point {max} but the topology has only {n} points"))
                    .hint("check that the element lists and `position` come from the same mesh"));
            }
        }
        Ok(())
    }
}

impl Component for MeshTopology {
    component_any!();

    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.compute(cx);
        Ok(())
    }

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let file = cx.data().get(FILENAME).trim().to_string();
        if !file.is_empty() {
            return Err(SimError::unsupported(format!("{}: reading the mesh file '{file}' directly is not supported", cx.label()))
                .hint("load the file with a loader (MeshOBJLoader, MeshGmshLoader, …) and write <MeshTopology src=\"@loader\"/>"));
        }
        self.compute(cx);
        self.check_indices(cx)
    }

    fn mesh(&self) -> Option<&MeshData> {
        Some(&self.mesh)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use crate::test_util::{attrs, init_scene};
    use settee_core::{Factory, Scene};

    fn factory() -> Factory {
        let mut f = Factory::new();
        crate::register(&mut f);
        settee_statecontainer::register(&mut f);
        f
    }

    #[test]
    fn derives_lists_and_feeds_src_links() {
        let f = factory();
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        let a = f
            .create(
                &mut scene,
                Scene::ROOT,
                "MeshTopology",
                None,
                attrs(&[("name", "a"), ("position", "0 0 0 1 0 0 0 1 0 0 0 1 1 1 1"), ("tetras", "0 1 2 3 1 2 3 4")]),
                None,
                dir,
            )
            .unwrap();
        let b = f.create(&mut scene, Scene::ROOT, "MeshTopology", None, attrs(&[("name", "b"), ("src", "@a")]), None, dir).unwrap();
        let mo = f.create(&mut scene, Scene::ROOT, "MechanicalObject", None, attrs(&[("name", "dofs")]), None, dir).unwrap();
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        init_scene(&mut scene).unwrap();
        let ma = scene.mesh_of(a).unwrap().clone();
        assert_eq!(ma.points.len(), 5);
        assert_eq!(ma.tetrahedra.len(), 2);
        assert_eq!(ma.edges.len(), 9);
        assert_eq!(ma.triangles.len(), 7);
        assert!(ma.quads.is_empty());
        // b sees a's derived lists through the src= links
        assert_eq!(scene.mesh_of(b).unwrap(), &ma);
        assert_eq!(scene.entry(b).data.indices("edges").len(), 18);
        // the MechanicalObject takes the topology of its node (the last one added)
        let s = scene.state_of(mo).unwrap();
        assert_eq!(scene.store.get(s).size, 5);
    }

    #[test]
    fn bad_indices_and_files_are_errors() {
        let f = factory();
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        f.create(&mut scene, Scene::ROOT, "MeshTopology", None, attrs(&[("position", "0 0 0 1 0 0"), ("edges", "0 1 1 2")]), None, dir).unwrap();
        let e = init_scene(&mut scene).unwrap_err();
        assert!(e.to_string().contains("point 2"), "{e}");

        let mut scene = Scene::new("root");
        f.create(&mut scene, Scene::ROOT, "MeshTopology", None, attrs(&[("filename", "mesh/cube.obj")]), None, dir).unwrap();
        let e = init_scene(&mut scene).unwrap_err();
        assert!(e.diagnostic().unsupported);
    }
}
