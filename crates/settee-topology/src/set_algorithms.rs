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
//! Topological mappings look for the modifiers by class (see [`modifier_kind`]). Scripts reach
//! the modifiers through their [`TopologyModifier`] role (SofaPython3's `addPoints`,
//! `removePoints`).

use settee_core::role::TopologyAlgorithms;
use settee_core::topology_change::TopologyModifier;
use settee_core::{component, Component, ComponentClass, ComponentId, Scene, SimError, SimResult};

use crate::modifier::{self, DynTopo};
use crate::set_container::{SetKind, SetTopologyContainer};

/// The Data of every topology modifier (SOFA's `PointSetTopologyModifier`).
#[settee_core::data_group(data = {
    /// propagate point changes to the mechanical state
    propagateToDOF: Bool = "true",
})]
pub struct PointModifierData;

/// The Data `TriangleSetTopologyModifier` adds (also in the tetrahedron modifier).
#[settee_core::data_group(data = {
    /// triangles with at least one null value (unused)
    list_Out: Indices,
})]
pub struct TriangleModifierData;

/// `removeIsolated` of the tetrahedron and hexahedron modifiers (read by the
/// TopologicalChangeProcessor).
#[settee_core::data_group(data = {
    /// remove the points left without elements after a removal
    removeIsolated: Bool = "true",
})]
pub struct RemoveIsolatedData;

/// The Data of every geometry-algorithms class (SOFA's `PointSetGeometryAlgorithms`).
#[settee_core::data_group(data = {
    /// scale of the displayed indices (rendering only)
    showIndicesScale: Real = "1",
    /// display the point indices (rendering only)
    showPointIndices: Bool = "false",
    /// tag of the mechanical state to use (unused)
    tagMechanics: Str,
})]
pub struct PointGeometryData;

/// The Data `EdgeSetGeometryAlgorithms` adds.
#[settee_core::data_group(data = {
    /// display the edge indices (rendering only)
    showEdgeIndices: Bool = "false",
    /// draw the edges (rendering only)
    drawEdges: Bool = "false",
    /// edge colour (rendering only)
    drawColorEdges: Fixed(4) = "0.4 1 0.3 1",
})]
pub struct EdgeGeometryData;

/// The Data `TriangleSetGeometryAlgorithms` adds.
#[settee_core::data_group(data = {
    /// display the triangle indices (rendering only)
    showTriangleIndices: Bool = "false",
    /// draw the triangles (rendering only)
    drawTriangles: Bool = "false",
    /// triangle colour (rendering only)
    drawColorTriangles: Fixed(4) = "0.3 0.5 0.8 1",
    /// draw the triangle normals (rendering only)
    drawNormals: Bool = "false",
    /// length of the drawn normals (rendering only)
    drawNormalLength: Real = "10",
    /// reorient the triangles from their normals at reinit (SOFA never does it at init; no effect here)
    recomputeTrianglesOrientation: Bool = "false",
    /// flip the normals when reorienting (used with recomputeTrianglesOrientation)
    flipNormals: Bool = "false",
})]
pub struct TriangleGeometryData;

/// The Data `QuadSetGeometryAlgorithms` adds.
#[settee_core::data_group(data = {
    /// display the quad indices (rendering only)
    showQuadIndices: Bool = "false",
    /// draw the quads (rendering only)
    drawQuads: Bool = "false",
    /// quad colour (rendering only)
    drawColorQuads: Fixed(4) = "0 0.4 0.4 1",
})]
pub struct QuadGeometryData;

/// The Data `TetrahedronSetGeometryAlgorithms` adds.
#[settee_core::data_group(data = {
    /// display the tetrahedron indices (rendering only)
    #[alias("showTetrasIndices")]
    showTetrahedraIndices: Bool = "false",
    /// draw the tetrahedra (rendering only)
    #[alias("drawTetra", "drawTetrahedron")]
    drawTetrahedra: Bool = "false",
    /// scale of the drawn tetrahedra (rendering only)
    drawScaleTetrahedra: Real = "1",
    /// tetrahedron colour (rendering only)
    drawColorTetrahedra: Fixed(4) = "1 1 0 1",
})]
pub struct TetrahedronGeometryData;

/// The Data `HexahedronSetGeometryAlgorithms` adds.
#[settee_core::data_group(data = {
    /// display the hexahedron indices (rendering only)
    showHexaIndices: Bool = "false",
    /// draw the hexahedra (rendering only)
    #[alias("drawHexa", "drawHexahedron")]
    drawHexahedra: Bool = "false",
    /// scale of the drawn hexahedra (rendering only)
    drawScaleHexahedra: Real = "1",
    /// hexahedron colour (rendering only)
    drawColorHexahedra: Fixed(4) = "1 0.5 0 1",
})]
pub struct HexahedronGeometryData;

/// A topology modifier (no behaviour of its own: see [`crate::modifier`]).
#[component(
    roles = [TopologyModifier],
    markers = [TopologyAlgorithms],
    create = |_| SetModifier,
    description = "Topology modifier: the container beside it can gain and lose elements while the simulation runs (see TopologicalChangeProcessor).",
    class(name = "PointSetTopologyModifier", module = "Sofa.Component.Topology.Container.Dynamic", inherit = [PointModifierData]),
    class(name = "EdgeSetTopologyModifier", module = "Sofa.Component.Topology.Container.Dynamic", inherit = [PointModifierData]),
    class(name = "TriangleSetTopologyModifier", module = "Sofa.Component.Topology.Container.Dynamic", inherit = [PointModifierData, TriangleModifierData]),
    class(name = "QuadSetTopologyModifier", module = "Sofa.Component.Topology.Container.Dynamic", inherit = [PointModifierData]),
    class(name = "TetrahedronSetTopologyModifier", module = "Sofa.Component.Topology.Container.Dynamic", inherit = [PointModifierData, TriangleModifierData, RemoveIsolatedData]),
    class(name = "HexahedronSetTopologyModifier", module = "Sofa.Component.Topology.Container.Dynamic", inherit = [PointModifierData, RemoveIsolatedData]),
)]
#[derive(Clone)]
pub struct SetModifier;

impl Component for SetModifier {}

impl SetModifier {
    /// The dynamic container `me` changes and its number of points, or why there is none.
    fn target(&self, scene: &Scene, me: ComponentId) -> SimResult<(ComponentId, usize)> {
        let label = scene.entry(me).label();
        if !scene.entry(me).initialized {
            return Err(SimError::new(format!("{label} is not initialised yet: its container has no points to change"))
                .hint("initialise the scene first (Sofa.Simulation.init(root))"));
        }
        let Some(container) = self.container(scene, me) else {
            return Err(SimError::new(format!("{label} has no topology container in its node or above it")));
        };
        let Some(c) = scene.get::<SetTopologyContainer>(container) else {
            return Err(SimError::unsupported(format!(
                "{label} works on {}, which is not a dynamic topology container",
                scene.entry(container).label()
            ))
            .hint("use a *SetTopologyContainer (PointSetTopologyContainer, TriangleSetTopologyContainer, …)"));
        };
        Ok((container, c.topo().nb_points))
    }
}

impl TopologyModifier for SetModifier {
    fn add_points(&mut self, scene: &mut Scene, me: ComponentId, count: usize, ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) -> SimResult {
        let (container, nb_points) = self.target(scene, me)?;
        if ancestors.len() > count || coefs.len() > count {
            return Err(SimError::new(format!("addPoints({count}) was given ancestors or coefficients for more than {count} points")));
        }
        for (k, a) in ancestors.iter().enumerate() {
            if let Some(&i) = a.iter().find(|&&i| i >= nb_points) {
                return Err(SimError::new(format!("the ancestors of new point {k} name point {i}, but the container has {nb_points} points")));
            }
            let c = coefs.get(k).map_or(0, Vec::len);
            if c != 0 && c != a.len() {
                return Err(SimError::new(format!("new point {k} has {} ancestors but {c} coefficients", a.len())));
            }
        }
        modifier::modify(scene, container, |t: &mut DynTopo| modifier::point::add_points(t, count, ancestors, coefs))
    }

    fn remove_points(&mut self, scene: &mut Scene, me: ComponentId, indices: Vec<usize>) -> SimResult {
        let (container, nb_points) = self.target(scene, me)?;
        let mut seen = std::collections::HashSet::new();
        for &i in &indices {
            if i >= nb_points {
                return Err(SimError::new(format!("removePoints names point {i}, but the container has {nb_points} points")));
            }
            if !seen.insert(i) {
                return Err(SimError::new(format!("removePoints names point {i} twice")));
            }
        }
        // SOFA renames the last point into each removed one and leaves elements on a removed
        // point dangling: only points no element uses can go.
        if let Some(c) = scene.get::<SetTopologyContainer>(container) {
            let m = &c.topo().mesh;
            let used = m.edges.iter().flatten().chain(m.triangles.iter().flatten()).chain(m.quads.iter().flatten());
            let mut used = used.chain(m.tetrahedra.iter().flatten()).chain(m.hexahedra.iter().flatten());
            if let Some(&i) = used.find(|i| seen.contains(*i)) {
                return Err(SimError::new(format!("removePoints names point {i}, which elements of {} still use", scene.entry(container).label()))
                    .hint("remove the elements first (their modifier's removeItems); points left isolated go with them"));
            }
        }
        modifier::modify(scene, container, |t: &mut DynTopo| modifier::point::remove_points(t, indices))
    }
}

/// A geometry-algorithms component (no behaviour).
#[component(
    markers = [TopologyAlgorithms],
    create = |_| SetAlgorithms,
    description = "Geometric queries on a topology: accepted; it has no effect on the simulation here.",
    templates = ["Vec3d", "Vec2d"],
    default_template = "Vec3d",
    template_rule = FromState,
    class(name = "PointSetGeometryAlgorithms", module = "Sofa.Component.Topology.Container.Dynamic", templates = ["Vec3d", "Vec2d", "Vec1d"], inherit = [PointGeometryData]),
    class(name = "EdgeSetGeometryAlgorithms", module = "Sofa.Component.Topology.Container.Dynamic", templates = ["Vec3d", "Vec2d", "Vec1d", "Rigid3d", "Rigid2d"], inherit = [PointGeometryData, EdgeGeometryData]),
    class(name = "TriangleSetGeometryAlgorithms", module = "Sofa.Component.Topology.Container.Dynamic", inherit = [PointGeometryData, EdgeGeometryData, TriangleGeometryData]),
    class(name = "QuadSetGeometryAlgorithms", module = "Sofa.Component.Topology.Container.Dynamic", inherit = [PointGeometryData, EdgeGeometryData, QuadGeometryData]),
    class(name = "TetrahedronSetGeometryAlgorithms", module = "Sofa.Component.Topology.Container.Dynamic", inherit = [PointGeometryData, EdgeGeometryData, TriangleGeometryData, TetrahedronGeometryData]),
    class(name = "HexahedronSetGeometryAlgorithms", module = "Sofa.Component.Topology.Container.Dynamic", inherit = [PointGeometryData, EdgeGeometryData, QuadGeometryData, HexahedronGeometryData]),
)]
#[derive(Clone)]
pub struct SetAlgorithms;

impl Component for SetAlgorithms {}

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
