//! Helpers for the tests of this crate: attribute lists, a factory, adding components and a
//! minimal scene initialisation ([`crate::testing`]).

use settee_core::{ComponentId, Factory, NodeId, Scene};

pub use crate::testing::{attrs, init_scene, FEMBAR_GRID};

/// Attributes as the preparse functions see them.
pub fn owned_attrs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
}

/// Float bounds `xmin..zmax` = (-0.1, 0, 0)..(0.1, 1, 2), which the grid preparsers read in
/// single precision.
pub const FLOAT_BOUNDS: &[(&str, &str)] = &[("xmin", "-0.1"), ("ymin", "0"), ("zmin", "0"), ("xmax", "0.1"), ("ymax", "1"), ("zmax", "2")];

/// A factory with this crate's classes and the mechanical state.
pub fn factory() -> Factory {
    settee_statecontainer::factory_with(&[crate::register])
}

/// The factory of these tests and an empty root scene.
pub fn factory_and_scene() -> (Factory, Scene) {
    (factory(), Scene::new("root"))
}

/// Creates a component of `class` in the root (files resolved against `.`), whatever it reports.
pub fn create(f: &Factory, scene: &mut Scene, class: &str, a: &[(&str, &str)]) -> ComponentId {
    f.create(scene, Scene::ROOT, class, None, attrs(a), None, std::path::Path::new(".")).unwrap()
}

/// Creates a component of `class` (files resolved against `.`); panics on errors.
pub fn add(f: &Factory, scene: &mut Scene, node: NodeId, class: &str, a: &[(&str, &str)]) -> ComponentId {
    let id = f.create(scene, node, class, None, attrs(a), None, std::path::Path::new(".")).unwrap();
    assert!(!scene.has_errors(), "{:?}", scene.messages);
    id
}

/// Hexahedra (`hexahedra`, with their modifier) in the root, their border quads in the child
/// `Q` (Hexa2QuadTopologicalMapping), those quads' triangles in `Q/T`
/// (Quad2TriangleTopologicalMapping); not initialised. Returns the hexahedron, quad and
/// triangle containers and the node `T`.
pub fn hexa_quad_triangle_chain(f: &Factory, scene: &mut Scene, hexahedra: &str) -> ([ComponentId; 3], NodeId) {
    let hexa = add(f, scene, Scene::ROOT, "HexahedronSetTopologyContainer", &[("name", "Hexa_topo"), ("hexahedra", hexahedra)]);
    add(f, scene, Scene::ROOT, "HexahedronSetTopologyModifier", &[]);
    let qn = scene.add_node(Scene::ROOT, "Q");
    let quads = add(f, scene, qn, "QuadSetTopologyContainer", &[("name", "Quad_topo")]);
    add(f, scene, qn, "QuadSetTopologyModifier", &[]);
    add(f, scene, qn, "Hexa2QuadTopologicalMapping", &[("input", "@../Hexa_topo"), ("output", "@Quad_topo")]);
    let tn = scene.add_node(qn, "T");
    let tris = add(f, scene, tn, "TriangleSetTopologyContainer", &[("name", "Triangle_topo")]);
    add(f, scene, tn, "TriangleSetTopologyModifier", &[]);
    add(f, scene, tn, "Quad2TriangleTopologicalMapping", &[("input", "@../Quad_topo"), ("output", "@Triangle_topo")]);
    ([hexa, quads, tris], tn)
}
