//! The companions of the dynamic containers: `*SetTopologyModifier` and
//! `*SetGeometryAlgorithms` (`DYN/`).
//!
//! The modifiers mark a container as changeable and carry the options of its changes
//! (`removeIsolated`, `propagateToDOF`); the changes themselves are the functions of
//! [`crate::modifier`], run on the container by whoever changes it (a TopologicalChangeProcessor,
//! a topological mapping following its input). The geometry algorithms answer geometric queries
//! and draw in SOFA; nothing in the supported scenes asks them, so they are accepted with their
//! Data. Neither changes anything at init.
//!
//! Topological mappings look for the modifiers by class (see [`modifier_kind`]).

use settee_core::data::{decl, decl_alias, DataKind::*};
use settee_core::{component_any, Component, ComponentClass, CreateArgs, DataDecl, Roles, TemplateRule};

use crate::set_container::SetKind;

/// A modifier or geometry-algorithms component (no behaviour).
pub struct SetAlgorithms;

impl Component for SetAlgorithms {
    component_any!();
}

fn create(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(SetAlgorithms)
}

static POINT_MODIFIER_DATA: &[DataDecl] = &[decl("propagateToDOF", Bool, "true", "propagate point changes to the mechanical state")];
static TRIANGLE_MODIFIER_DATA: &[DataDecl] = &[decl("list_Out", Indices, "", "triangles with at least one null value (unused)")];
static REMOVE_ISOLATED_DATA: &[DataDecl] = &[decl("removeIsolated", Bool, "true", "remove the points left without elements after a removal")];

// Read by the TopologicalChangeProcessor from the tetrahedron and hexahedron modifiers.
settee_core::data_refs! {
    pub(crate) static REMOVE_ISOLATED_READS;
    REMOVE_ISOLATED: Bool = "removeIsolated";
}

macro_rules! modifier_class {
    ($id:ident, $name:literal, $data:expr) => {
        modifier_class!($id, $name, $data, &[]);
    };
    ($id:ident, $name:literal, $data:expr, $reads:expr) => {
        pub static $id: ComponentClass = ComponentClass {
            name: $name,
            description:
                "Topology modifier: the container beside it can gain and lose elements while the simulation runs (see TopologicalChangeProcessor).",
            roles: Roles::TOPOLOGY_ALGORITHMS,
            templates: &[],
            default_template: "",
            template_rule: TemplateRule::Default,
            data: $data,
            links: &[],
            create,
            preparse: None,
            no_src_link: &[],
            reads: $reads,
        };
    };
}

modifier_class!(POINT_MODIFIER, "PointSetTopologyModifier", &[POINT_MODIFIER_DATA]);
modifier_class!(EDGE_MODIFIER, "EdgeSetTopologyModifier", &[POINT_MODIFIER_DATA]);
modifier_class!(TRIANGLE_MODIFIER, "TriangleSetTopologyModifier", &[POINT_MODIFIER_DATA, TRIANGLE_MODIFIER_DATA]);
modifier_class!(QUAD_MODIFIER, "QuadSetTopologyModifier", &[POINT_MODIFIER_DATA]);
modifier_class!(
    TETRA_MODIFIER,
    "TetrahedronSetTopologyModifier",
    &[POINT_MODIFIER_DATA, TRIANGLE_MODIFIER_DATA, REMOVE_ISOLATED_DATA],
    REMOVE_ISOLATED_READS
);
modifier_class!(HEXA_MODIFIER, "HexahedronSetTopologyModifier", &[POINT_MODIFIER_DATA, REMOVE_ISOLATED_DATA], REMOVE_ISOLATED_READS);

static POINT_GEO_DATA: &[DataDecl] = &[
    decl("showIndicesScale", Real, "1", "scale of the displayed indices (rendering only)"),
    decl("showPointIndices", Bool, "false", "display the point indices (rendering only)"),
    decl("tagMechanics", Str, "", "tag of the mechanical state to use (unused)"),
];
static EDGE_GEO_DATA: &[DataDecl] = &[
    decl("showEdgeIndices", Bool, "false", "display the edge indices (rendering only)"),
    decl("drawEdges", Bool, "false", "draw the edges (rendering only)"),
    decl("drawColorEdges", Fixed(4), "0.4 1 0.3 1", "edge colour (rendering only)"),
];
static TRIANGLE_GEO_DATA: &[DataDecl] = &[
    decl("showTriangleIndices", Bool, "false", "display the triangle indices (rendering only)"),
    decl("drawTriangles", Bool, "false", "draw the triangles (rendering only)"),
    decl("drawColorTriangles", Fixed(4), "0.3 0.5 0.8 1", "triangle colour (rendering only)"),
    decl("drawNormals", Bool, "false", "draw the triangle normals (rendering only)"),
    decl("drawNormalLength", Real, "10", "length of the drawn normals (rendering only)"),
    decl(
        "recomputeTrianglesOrientation",
        Bool,
        "false",
        "reorient the triangles from their normals at reinit (SOFA never does it at init; no effect here)",
    ),
    decl("flipNormals", Bool, "false", "flip the normals when reorienting (used with recomputeTrianglesOrientation)"),
];
static QUAD_GEO_DATA: &[DataDecl] = &[
    decl("showQuadIndices", Bool, "false", "display the quad indices (rendering only)"),
    decl("drawQuads", Bool, "false", "draw the quads (rendering only)"),
    decl("drawColorQuads", Fixed(4), "0 0.4 0.4 1", "quad colour (rendering only)"),
];
static TETRA_GEO_DATA: &[DataDecl] = &[
    decl_alias("showTetrahedraIndices", &["showTetrasIndices"], Bool, "false", "display the tetrahedron indices (rendering only)"),
    decl_alias("drawTetrahedra", &["drawTetra", "drawTetrahedron"], Bool, "false", "draw the tetrahedra (rendering only)"),
    decl("drawScaleTetrahedra", Real, "1", "scale of the drawn tetrahedra (rendering only)"),
    decl("drawColorTetrahedra", Fixed(4), "1 1 0 1", "tetrahedron colour (rendering only)"),
];
static HEXA_GEO_DATA: &[DataDecl] = &[
    decl("showHexaIndices", Bool, "false", "display the hexahedron indices (rendering only)"),
    decl_alias("drawHexahedra", &["drawHexa", "drawHexahedron"], Bool, "false", "draw the hexahedra (rendering only)"),
    decl("drawScaleHexahedra", Real, "1", "scale of the drawn hexahedra (rendering only)"),
    decl("drawColorHexahedra", Fixed(4), "1 0.5 0 1", "hexahedron colour (rendering only)"),
];

macro_rules! geometry_class {
    ($id:ident, $name:literal, $templates:expr, $data:expr) => {
        pub static $id: ComponentClass = ComponentClass {
            name: $name,
            description: "Geometric queries on a topology: accepted; it has no effect on the simulation here.",
            roles: Roles::TOPOLOGY_ALGORITHMS,
            templates: $templates,
            default_template: "Vec3d",
            template_rule: TemplateRule::FromState,
            data: $data,
            links: &[],
            create,
            preparse: None,
            no_src_link: &[],
            reads: &[],
        };
    };
}

const POINT_TEMPLATES: &[&str] = &["Vec3d", "Vec2d", "Vec1d"];
const EDGE_TEMPLATES: &[&str] = &["Vec3d", "Vec2d", "Vec1d", "Rigid3d", "Rigid2d"];
const SURFACE_TEMPLATES: &[&str] = &["Vec3d", "Vec2d"];

geometry_class!(POINT_GEOMETRY, "PointSetGeometryAlgorithms", POINT_TEMPLATES, &[POINT_GEO_DATA]);
geometry_class!(EDGE_GEOMETRY, "EdgeSetGeometryAlgorithms", EDGE_TEMPLATES, &[POINT_GEO_DATA, EDGE_GEO_DATA]);
geometry_class!(TRIANGLE_GEOMETRY, "TriangleSetGeometryAlgorithms", SURFACE_TEMPLATES, &[POINT_GEO_DATA, EDGE_GEO_DATA, TRIANGLE_GEO_DATA]);
geometry_class!(QUAD_GEOMETRY, "QuadSetGeometryAlgorithms", SURFACE_TEMPLATES, &[POINT_GEO_DATA, EDGE_GEO_DATA, QUAD_GEO_DATA]);
geometry_class!(
    TETRA_GEOMETRY,
    "TetrahedronSetGeometryAlgorithms",
    SURFACE_TEMPLATES,
    &[POINT_GEO_DATA, EDGE_GEO_DATA, TRIANGLE_GEO_DATA, TETRA_GEO_DATA]
);
geometry_class!(HEXA_GEOMETRY, "HexahedronSetGeometryAlgorithms", SURFACE_TEMPLATES, &[POINT_GEO_DATA, EDGE_GEO_DATA, QUAD_GEO_DATA, HEXA_GEO_DATA]);

/// All modifier and geometry-algorithms classes.
pub static CLASSES: [&ComponentClass; 12] = [
    &POINT_MODIFIER,
    &EDGE_MODIFIER,
    &TRIANGLE_MODIFIER,
    &QUAD_MODIFIER,
    &TETRA_MODIFIER,
    &HEXA_MODIFIER,
    &POINT_GEOMETRY,
    &EDGE_GEOMETRY,
    &TRIANGLE_GEOMETRY,
    &QUAD_GEOMETRY,
    &TETRA_GEOMETRY,
    &HEXA_GEOMETRY,
];

/// The element type of a modifier class (`None` for other classes).
pub fn modifier_kind(class: &ComponentClass) -> Option<SetKind> {
    Some(match class.name {
        "PointSetTopologyModifier" => SetKind::Point,
        "EdgeSetTopologyModifier" => SetKind::Edge,
        "TriangleSetTopologyModifier" => SetKind::Triangle,
        "QuadSetTopologyModifier" => SetKind::Quad,
        "TetrahedronSetTopologyModifier" => SetKind::Tetrahedron,
        "HexahedronSetTopologyModifier" => SetKind::Hexahedron,
        _ => return None,
    })
}
