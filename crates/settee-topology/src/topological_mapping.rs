//! Topological mappings (`TMAP/`): they fill an output topology container from an input one at
//! init — `Hexa2TetraTopologicalMapping`, `Hexa2QuadTopologicalMapping`,
//! `Tetra2TriangleTopologicalMapping`, `Quad2TriangleTopologicalMapping`,
//! `Triangle2EdgeTopologicalMapping` and `Hexa2PrismTopologicalMapping` (and `Mesh2PointTopologicalMapping` in
//! [`crate::mesh2point`]).
//!
//! Links: `input` defaults to `@../` (the parent node's topology) and `output` to `@./` (this
//! node's topology), as SOFA's `TopologicalMapping::create` sets them; a path naming a node
//! resolves to the node's single topology object.
//!
//! **Init order.** SOFA initialises objects in declaration order, so the output container
//! (usually declared before the mapping) is initialised first, empty. The mapping's `init` then
//! does what SOFA's does: it clears the output (`clear()`), gives it the input's number of points
//! (`setNbPoints`), appends the elements (`addXxx`) and calls the output's `init()` again, which
//! derives the lower lists (e.g. the edges of the mapped triangles). Here the mapping writes the
//! output's Data (cutting any Data link on them, since `clear()` overwrites the values) and runs
//! the output component's `init` itself, so every component initialised after the mapping —
//! force fields, masses, `@Container.triangles` links — sees the filled lists. An output declared
//! after the mapping is initialised again later, on the filled Data, as in SOFA.
//!
//! Topological changes are not propagated (no changes happen yet).

use crate::mapping_changes::{self, IndexMaps};
use settee_core::data::Value;
use settee_core::role::{self, Topology, TopologyAlgorithms};
use settee_core::scene::LinkTarget;
use settee_core::topology_change::{Follow, TopologyChange};
use settee_core::{component, Component, ComponentId, InitCtx, MeshData, Scene, SimResult};

use crate::elements::{
    count_points, hexahedra_around_quads, hexahedra_to_tetrahedra, on_border, quads_to_triangles, tetrahedra_around_triangles,
    triangles_around_edges, MissingSide,
};
use crate::grid_topology::GridTopology;
use crate::set_algorithms::modifier_kind;
use crate::set_container::{upper_element_type, PointSetData, SetKind, SetTopologyContainer};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Hexa2Tetra,
    Hexa2Quad,
    Tetra2Triangle,
    Quad2Triangle,
    Triangle2Edge,
    Hexa2Prism,
}

/// One of the element-extracting topological mappings.
#[component(
    markers = [TopologyAlgorithms],
    links = {
        /// input topology (default: the parent node's topology, `@../`)
        input: Topology,
        /// output topology container (default: this node's topology, `@./`)
        output: Topology,
    },
    class(
        name = "Hexa2TetraTopologicalMapping", module = "Sofa.Component.Topology.Mapping",
        description = "Fills a tetrahedron container with 6 tetrahedra per hexahedron of the input.",
        create = |_| TopologicalMapping { kind: Kind::Hexa2Tetra, maps: None },
        data = {
            /// exchange the corners of the hexahedra by grid position (alternating split, avoids a directional bias)
            swapping: Bool = "false",
        },
    ),
    class(
        name = "Hexa2QuadTopologicalMapping", module = "Sofa.Component.Topology.Mapping",
        description = "Fills a quad container with the boundary quads of a hexahedral input.",
        create = |_| TopologicalMapping { kind: Kind::Hexa2Quad, maps: None },
        data = {
            /// reverse the vertex order of the quads created
            flipNormals: Bool = "false",
        },
    ),
    class(
        name = "Tetra2TriangleTopologicalMapping", module = "Sofa.Component.Topology.Mapping",
        description = "Fills a triangle container with the boundary triangles of a tetrahedral input.",
        create = |_| TopologicalMapping { kind: Kind::Tetra2Triangle, maps: None },
        data = {
            /// reverse the orientation of the triangles created: (t0, t2, t1)
            flipNormals: Bool = "false",
            /// create no triangles when tetrahedra are later added or removed
            noNewTriangles: Bool = "false",
            /// start with an empty output (only triangles created by later changes are added)
            noInitialTriangles: Bool = "false",
        },
        links = {
            /// input topology (default: the parent node's topology, `@../`)
            input: Topology,
            /// output topology container (default: this node's topology, `@./`)
            output: Topology,
            /// modifier of the output topology (default: found in the output's context)
            modifier: TopologyAlgorithms,
        },
    ),
    class(
        name = "Quad2TriangleTopologicalMapping", module = "Sofa.Component.Topology.Mapping",
        description = "Fills a triangle container with 2 triangles per quad of the input.",
        create = |_| TopologicalMapping { kind: Kind::Quad2Triangle, maps: None },
        data = {
            /// alternate the diagonal of the quads in a checkerboard pattern (avoids a directional bias)
            swapping: Bool = "true",
        },
    ),
    class(
        name = "Hexa2PrismTopologicalMapping", module = "Sofa.Component.Topology.Mapping",
        description = "Fills a topology with 2 triangular prisms per hexahedron of the input.",
        create = |_| TopologicalMapping { kind: Kind::Hexa2Prism, maps: None },
    ),
    class(
        name = "Triangle2EdgeTopologicalMapping", module = "Sofa.Component.Topology.Mapping",
        description = "Fills an edge container with the boundary edges of a triangular input.",
        create = |_| TopologicalMapping { kind: Kind::Triangle2Edge, maps: None },
    ),
)]
#[derive(Clone)]
pub struct TopologicalMapping {
    kind: Kind,
    /// The index maps between input and output elements, built on the first change.
    maps: Option<IndexMaps>,
}

impl TopologicalMapping {
    /// The index maps between input and output elements (None before the first change).
    pub fn maps(&self) -> Option<&IndexMaps> {
        self.maps.as_ref()
    }
}

// ----- helpers shared with Mesh2PointTopologicalMapping -----------------------------------------

/// The input and output topologies of a topological mapping: the `input`/`output` links, else
/// `@../` and `@./`.
pub(crate) fn io_topologies(cx: &InitCtx) -> SimResult<(ComponentId, ComponentId)> {
    let get =
        |name: &str, default: &str, what: &str| -> SimResult<ComponentId> {
            if cx.scene.link_is_set(cx.id, name) {
                return cx.scene.link_targets(cx.id, name).first().copied().ok_or_else(|| {
                    cx.error(format!("the {name} link does not point to a topology")).hint(format!("set `{name}=\"@path/to/{what}\"`"))
                });
            }
            match cx.scene.resolve_path(cx.node(), default, Some(cx.id), Some(role::TOPOLOGY)) {
                Some(LinkTarget::Component(c)) => Ok(c),
                _ => Err(cx
                    .error(format!("no {name} topology: `{name}` is not set and `@{default}` designates no single topology"))
                    .hint(format!("set `{name}=\"@path/to/{what}\"`"))),
            }
        };
    let input = get("input", "../", "inputTopology")?;
    let output = get("output", "./", "outputContainer")?;
    if input == output {
        return Err(cx
            .error(format!("input and output are the same topology ({})", cx.scene.entry(input).label()))
            .hint("the output must be another container, usually in a child node"));
    }
    Ok((input, output))
}

/// The mesh of a topology component (cloned), or an error.
pub(crate) fn mesh_of(cx: &InitCtx, id: ComponentId) -> SimResult<MeshData> {
    cx.scene.mesh_of(id).cloned().ok_or_else(|| cx.error(format!("{} provides no mesh", cx.scene.entry(id).label())))
}

/// SOFA's `getNbPoints()` of a topology: a set container's point count, else the number of
/// positions, else 1 + the largest index used.
pub fn point_count(scene: &Scene, id: ComponentId) -> usize {
    if let Some(c) = scene.get::<SetTopologyContainer>(id) {
        return c.nb_points();
    }
    let Some(m) = scene.mesh_of(id) else { return 0 };
    if !m.points.is_empty() {
        return m.points.len();
    }
    [count_points(&m.edges), count_points(&m.triangles), count_points(&m.quads), count_points(&m.tetrahedra), count_points(&m.hexahedra)]
        .into_iter()
        .max()
        .unwrap_or(0)
}

/// SOFA's `getTopologyType()`: a set container's class, else the mesh's highest elements.
pub fn topology_type(scene: &Scene, id: ComponentId) -> SetKind {
    match scene.get::<SetTopologyContainer>(id) {
        Some(c) => c.kind(),
        None => scene.mesh_of(id).map(upper_element_type).unwrap_or(SetKind::Point),
    }
}

/// Cells per axis `(nx-1, ny-1)` of a grid topology (`None` for other topologies).
pub fn grid_cells(scene: &Scene, id: ComponentId) -> Option<(i64, i64)> {
    scene.get::<GridTopology>(id)?;
    let n = scene.entry(id).data.get(GridTopology::N);
    Some((n.first().copied().unwrap_or(2.0) as i64 - 1, n.get(1).copied().unwrap_or(2.0) as i64 - 1))
}

/// The first modifier found from `node` upwards whose class derives from `base` (SOFA's
/// `getContext()->get<XxxSetTopologyModifier>()`).
pub(crate) fn find_modifier(scene: &Scene, node: settee_core::NodeId, base: SetKind) -> Option<ComponentId> {
    let mut cur = Some(node);
    while let Some(n) = cur {
        let found = scene.node(n).objects.iter().copied().find(|c| modifier_kind(scene.entry(*c).class).is_some_and(|k| k.derives_from(base)));
        if found.is_some() {
            return found;
        }
        cur = scene.node(n).parent();
    }
    None
}

/// What a mapping adds to its output after clearing it.
#[derive(Default)]
pub(crate) struct NewElements {
    /// `setNbPoints` right after `clear()` (`None`: not called).
    pub nb_points: Option<usize>,
    /// Points appended with `addPoint`.
    pub positions: Vec<[f64; 3]>,
    pub edges: Vec<[usize; 2]>,
    pub triangles: Vec<[usize; 3]>,
    pub quads: Vec<[usize; 4]>,
    pub tetrahedra: Vec<[usize; 4]>,
    pub hexahedra: Vec<[usize; 8]>,
    pub prisms: Vec<[usize; 6]>,
}

/// Clears the output topology, fills it with `new` and, when `init_output`, runs its `init` (see
/// the module documentation).
///
/// `clear()` as SOFA's containers do it: a set container keeps its positions and point count
/// unless it is a plain point set; other topologies (`MeshTopology`) lose everything.
pub(crate) fn fill_output(cx: &mut InitCtx, out: ComponentId, new: NewElements, init_output: bool) -> SimResult {
    let kind = cx.scene.get::<SetTopologyContainer>(out).map(|c| c.kind());
    let label = cx.scene.entry(out).label();

    // The lists to write: (Data name, value, element count).
    let mut writes: Vec<(&'static str, Value)> = Vec::new();
    let clear_all = ["edges", "triangles", "quads", "tetrahedra", "hexahedra", "prisms", "pyramids"];
    for name in clear_all {
        let arity = match name {
            "edges" => 2,
            "triangles" => 3,
            "quads" | "tetrahedra" => 4,
            "hexahedra" => 8,
            "prisms" => 6,
            _ => 5,
        };
        writes.push((name, Value::Indices { arity, v: Vec::new() }));
    }
    let clears_points = !matches!(kind, Some(k) if k != SetKind::Point);
    let d = &cx.scene.entry(out).data;
    let mut positions: Vec<f64> = if clears_points { Vec::new() } else { d.get(PointSetData::POSITION).to_vec() };
    if clears_points {
        writes.push(("uv", Value::Reals { arity: 2, v: Vec::new() }));
    }
    for name in ["edges", "triangles", "quads", "tetrahedra", "hexahedra", "prisms"] {
        let (count, value) = match name {
            "edges" => (new.edges.len(), flat(&new.edges)),
            "triangles" => (new.triangles.len(), flat(&new.triangles)),
            "quads" => (new.quads.len(), flat(&new.quads)),
            "tetrahedra" => (new.tetrahedra.len(), flat(&new.tetrahedra)),
            "hexahedra" => (new.hexahedra.len(), flat(&new.hexahedra)),
            _ => (new.prisms.len(), flat(&new.prisms)),
        };
        if count == 0 {
            continue;
        }
        if d.index_of(name).is_none() {
            return Err(cx
                .error(format!("the output {label} cannot hold {name}"))
                .hint(format!("use a container that has {name} (e.g. a {}SetTopologyContainer)", set_class_prefix(name))));
        }
        writes.retain(|(n, _)| *n != name);
        writes.push((name, value));
    }
    if !new.positions.is_empty() {
        if d.index_of("position").is_none() {
            return Err(cx.error(format!("the output {label} cannot hold positions")));
        }
        positions.extend(new.positions.iter().flatten());
    }
    if clears_points || !new.positions.is_empty() {
        writes.push(("position", Value::Reals { arity: 3, v: positions.clone() }));
    }

    // Point count: clear() (point sets and other topologies restart from 0), setNbPoints, then
    // each addPoint grows it to the number of positions and each addXxx to the indices it adds.
    let old_nb = if clears_points { 0 } else { d.get(PointSetData::NB_POINTS).max(0) as usize };
    let nb = [
        new.nb_points.unwrap_or(old_nb),
        if new.positions.is_empty() { 0 } else { positions.len() / 3 },
        count_points(&new.edges),
        count_points(&new.triangles),
        count_points(&new.quads),
        count_points(&new.tetrahedra),
        count_points(&new.hexahedra),
        count_points(&new.prisms),
    ]
    .into_iter()
    .max()
    .unwrap_or(0);

    let e = cx.scene.entry_mut(out);
    for (name, value) in writes {
        if let Some(i) = e.data.index_of(name) {
            let f = &mut e.data.fields[i];
            f.value = value;
            f.is_set = true;
            f.link = None;
            f.link_text = None;
        }
    }
    if kind.is_some() {
        e.data.put(PointSetData::NB_POINTS, nb as i64);
    }

    if init_output {
        cx.scene.with_taken(out, |obj, scene| obj.init(&mut InitCtx { scene, id: out }))
    } else {
        let e = cx.scene.entry_mut(out);
        let data = &e.data;
        if let Some(c) = e.obj.as_mut().and_then(|o| o.as_any_mut().downcast_mut::<SetTopologyContainer>()) {
            c.refresh(data);
            Ok(())
        } else {
            cx.scene.with_taken(out, |obj, scene| obj.init(&mut InitCtx { scene, id: out }))
        }
    }
}

/// Flat index value of a list, for the direct writes of [`fill_output`].
fn flat<const K: usize>(v: &[[usize; K]]) -> Value {
    Value::Indices { arity: K, v: v.iter().flatten().copied().collect() }
}

fn set_class_prefix(list: &str) -> &'static str {
    match list {
        "edges" => "Edge",
        "triangles" => "Triangle",
        "quads" => "Quad",
        "tetrahedra" => "Tetrahedron",
        "prisms" => "Prism",
        _ => "Hexahedron",
    }
}

fn inconsistent(cx: &InitCtx, input: ComponentId, what: &str, e: MissingSide) -> settee_core::SimError {
    cx.error(format!("cannot find the adjacency of the input {}: {what}: {e}", cx.scene.entry(input).label()))
        .hint("the input's element lists are inconsistent (SOFA reports this error at the input container's init)")
}

impl TopologicalMapping {
    /// SOFA's `checkTopologyInputTypes` (Hexa2Quad, Quad2Triangle, Triangle2Edge) and the
    /// modifier they require in the output's context.
    fn check_types(&self, cx: &InitCtx, input: ComponentId, output: ComponentId, from: SetKind, to: SetKind) -> SimResult {
        for (which, id, want) in [("input", input, from), ("output", output, to)] {
            let got = topology_type(cx.scene, id);
            if got != want {
                return Err(cx
                    .error(format!(
                        "the {which} topology {} is a {} topology, not a {} topology",
                        cx.scene.entry(id).label(),
                        got.name(),
                        want.name()
                    ))
                    .hint(format!(
                        "link `{which}` to a {}SetTopologyContainer",
                        set_class_prefix(match want {
                            SetKind::Edge => "edges",
                            SetKind::Triangle => "triangles",
                            SetKind::Quad => "quads",
                            SetKind::Tetrahedron => "tetrahedra",
                            _ => "hexahedra",
                        })
                    )));
            }
        }
        let node = cx.scene.entry(output).node;
        if find_modifier(cx.scene, node, to).is_none() {
            return Err(cx
                .error(format!(
                    "no {}SetTopologyModifier in the output topology's node '{}'",
                    set_class_prefix(match to {
                        SetKind::Edge => "edges",
                        SetKind::Triangle => "triangles",
                        _ => "quads",
                    }),
                    cx.scene.node(node).name
                ))
                .hint("add the modifier next to the output container"));
        }
        Ok(())
    }

    fn run(&self, cx: &mut InitCtx) -> SimResult {
        let (input, output) = io_topologies(cx)?;
        let from = mesh_of(cx, input)?;
        let mut new = NewElements { nb_points: Some(point_count(cx.scene, input)), ..Default::default() };
        let mut init_output = true;
        match self.kind {
            Kind::Hexa2Tetra => {
                let (nx, ny) = grid_cells(cx.scene, input).unwrap_or((2, 1));
                new.tetrahedra = hexahedra_to_tetrahedra(&from.hexahedra, cx.data().get(Self::SWAPPING), nx.max(0) as usize, ny.max(0) as usize);
            }
            Kind::Hexa2Quad => {
                self.check_types(cx, input, output, SetKind::Hexahedron, SetKind::Quad)?;
                let counts =
                    hexahedra_around_quads(&from.quads, &from.hexahedra).map_err(|e| inconsistent(cx, input, "quads around hexahedra", e))?;
                let flip = cx.data().get(Self::FLIP_NORMALS);
                new.quads = on_border(&counts)
                    .into_iter()
                    .map(|i| {
                        let q = from.quads[i];
                        if flip {
                            [q[3], q[2], q[1], q[0]]
                        } else {
                            q
                        }
                    })
                    .collect();
            }
            Kind::Tetra2Triangle => {
                let modifier = cx.scene.link_targets(cx.id, "modifier").first().copied();
                let out_node = cx.scene.entry(output).node;
                if modifier.is_none() && find_modifier(cx.scene, out_node, SetKind::Triangle).is_none() {
                    let name = cx.scene.node(out_node).name.clone();
                    cx.warn(format!(
                        "no TriangleSetTopologyModifier found in the output topology's context ({name}); dynamic topological changes will not be supported"
                    ));
                }
                if cx.data().get(Self::NO_INITIAL_TRIANGLES) {
                    init_output = false;
                } else {
                    let counts = tetrahedra_around_triangles(&from.triangles, &from.tetrahedra)
                        .map_err(|e| inconsistent(cx, input, "tetrahedra around triangles", e))?;
                    let flip = cx.data().get(Self::FLIP_NORMALS);
                    new.triangles = on_border(&counts)
                        .into_iter()
                        .map(|i| {
                            let t = from.triangles[i];
                            if flip {
                                [t[0], t[2], t[1]]
                            } else {
                                t
                            }
                        })
                        .collect();
                }
            }
            Kind::Quad2Triangle => {
                self.check_types(cx, input, output, SetKind::Quad, SetKind::Triangle)?;
                let (nx, ny) = grid_cells(cx.scene, input).unwrap_or((2, 1));
                if nx == 0 && ny == 0 {
                    return Err(cx.error("the input topology is only 1D: it cannot be mapped into a triangulation"));
                }
                let scale = if nx == 0 { ny } else { nx };
                new.triangles = quads_to_triangles(&from.quads, cx.data().get(Self::SWAPPING), scale.max(1) as usize);
            }
            Kind::Hexa2Prism => {
                // Prisms (bottom triangle, top triangle) (c0 c5 c1 | c3 c6 c2) and (c0 c4 c5 | c3 c7 c6):
                // the same split on the shared faces of neighbouring hexahedra.
                new.prisms =
                    from.hexahedra.iter().flat_map(|c| [[c[0], c[5], c[1], c[3], c[6], c[2]], [c[0], c[4], c[5], c[3], c[7], c[6]]]).collect();
            }
            Kind::Triangle2Edge => {
                self.check_types(cx, input, output, SetKind::Triangle, SetKind::Edge)?;
                let counts =
                    triangles_around_edges(&from.edges, &from.triangles).map_err(|e| inconsistent(cx, input, "triangles around edges", e))?;
                new.edges = on_border(&counts).into_iter().map(|i| from.edges[i]).collect();
            }
        }
        fill_output(cx, output, new, init_output)
    }
}

impl Component for TopologicalMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.maps = None;
        self.run(cx)
    }

    /// The input changed: the output container follows, with the mapping's own rules.
    fn topology_changed(&mut self, cx: &mut InitCtx, input: ComponentId, changes: &[TopologyChange]) -> SimResult<Follow> {
        let (_, output) = io_topologies(cx)?;
        let following = mapping_changes::Following { maps: &mut self.maps, input, output, changes };
        match self.kind {
            Kind::Tetra2Triangle => mapping_changes::tetra2triangle::follow(cx, following),
            Kind::Triangle2Edge => mapping_changes::triangle2edge::follow(cx, following),
            Kind::Hexa2Quad => mapping_changes::hexa2quad::follow(cx, following),
            Kind::Quad2Triangle => mapping_changes::quad2triangle::follow(cx, following),
            Kind::Hexa2Prism => Err(cx
                .error("Hexa2PrismTopologicalMapping does not follow topological changes (SOFA's does not either)")
                .hint("keep the hexahedra fixed")),
            Kind::Hexa2Tetra => Err(cx
                .error("Hexa2TetraTopologicalMapping does not follow topological changes (SOFA's does not either)")
                .hint("keep the hexahedra fixed, or map them once and change the tetrahedra")),
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use crate::set_container::SetTopologyContainer;
    use crate::test_util::{add, factory_and_scene, hexa_quad_triangle_chain, init_scene};
    use settee_core::{ComponentId, Scene};

    fn signed_volume(p: &[[f64; 3]], t: [usize; 4]) -> f64 {
        let d = |i: usize| [p[t[i]][0] - p[t[0]][0], p[t[i]][1] - p[t[0]][1], p[t[i]][2] - p[t[0]][2]];
        let (a, b, c) = (d(1), d(2), d(3));
        a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])
    }

    /// A 2×2×2-cell grid (3 points per axis) in the parent node and a tetrahedron container
    /// filled by Hexa2TetraTopologicalMapping in a child node (the cantilever-beam layout).
    fn hexa2tetra(swapping: &str) -> (Scene, ComponentId, ComponentId) {
        let (f, mut scene) = factory_and_scene();
        let grid = add(&f, &mut scene, Scene::ROOT, "RegularGridTopology", &[("name", "grid"), ("n", "3 3 3"), ("min", "0 0 0"), ("max", "2 2 2")]);
        add(&f, &mut scene, Scene::ROOT, "MechanicalObject", &[]);
        let child = scene.add_node(Scene::ROOT, "fem");
        let tet = add(&f, &mut scene, child, "TetrahedronSetTopologyContainer", &[("name", "Tetra_topo")]);
        add(&f, &mut scene, child, "TetrahedronSetTopologyModifier", &[]);
        add(&f, &mut scene, child, "TetrahedronSetGeometryAlgorithms", &[("template", "Vec3")]);
        add(&f, &mut scene, child, "Hexa2TetraTopologicalMapping", &[("input", "@grid"), ("output", "@Tetra_topo"), ("swapping", swapping)]);
        init_scene(&mut scene).unwrap();
        (scene, grid, tet)
    }

    #[test]
    fn hexa2tetra_without_swapping() {
        let (scene, grid, tet) = hexa2tetra("false");
        let m = scene.mesh_of(tet).unwrap();
        assert_eq!(m.tetrahedra.len(), 48);
        // hexa 0 = (0 1 4 3 9 10 13 12): pattern (0,5,1,6) (0,1,3,6) (1,3,6,2) (6,3,0,7) (6,7,0,5) (7,5,4,0)
        assert_eq!(m.tetrahedra[..6], [[0, 10, 1, 13], [0, 1, 3, 13], [1, 3, 13, 4], [13, 3, 0, 12], [13, 12, 0, 10], [12, 10, 9, 0]]);
        // hexa 7 = (13 14 17 16 22 23 26 25)
        assert_eq!(m.tetrahedra[42], [13, 23, 14, 26]);
        // the container has no positions but the grid's 27 points, and derived edges/triangles
        assert!(m.points.is_empty());
        assert_eq!(scene.get::<SetTopologyContainer>(tet).unwrap().nb_points(), 27);
        assert_eq!(m.edges[..6], [[0, 10], [0, 1], [0, 13], [1, 10], [10, 13], [1, 13]]);
        // faces (t1,t2,t3) (t0,t3,t2) (t1,t3,t0) (t0,t2,t1) of (0,10,1,13), min-rotated
        assert_eq!(m.triangles[..4], [[1, 13, 10], [0, 13, 1], [0, 10, 13], [0, 1, 10]]);
        let p = &scene.mesh_of(grid).unwrap().points;
        assert!(m.tetrahedra.iter().all(|&t| signed_volume(p, t) > 0.0));
        let total: f64 = m.tetrahedra.iter().map(|&t| signed_volume(p, t) / 6.0).sum();
        assert!((total - 8.0).abs() < 1e-12);
    }

    #[test]
    fn hexa2tetra_with_swapping_alternates_and_keeps_orientation() {
        let (scene, grid, tet) = hexa2tetra("true");
        let m = scene.mesh_of(tet).unwrap();
        assert_eq!(m.tetrahedra.len(), 48);
        // hexa 0: x-swap (i % 2 even) → corners (1 0 3 4 10 9 12 13), one swap → swapped pattern
        // (0,5,6,1) (0,1,6,3) (1,3,2,6) (6,3,7,0) (6,7,5,0) (7,5,0,4)
        assert_eq!(m.tetrahedra[..6], [[1, 9, 12, 0], [1, 0, 12, 4], [0, 4, 3, 12], [12, 4, 13, 1], [12, 13, 9, 1], [13, 9, 1, 10]]);
        // hexa 1 (i=1): no swap → plain pattern on (1 2 5 4 10 11 14 13)
        assert_eq!(m.tetrahedra[6..12], [[1, 11, 2, 14], [1, 2, 4, 14], [2, 4, 14, 5], [14, 4, 1, 13], [14, 13, 1, 11], [13, 11, 10, 1]]);
        // hexa 3 (i=3): y-swap only ((3/2)%2 odd) on (4 5 8 7 13 14 17 16) → (7 8 5 4 16 17 14 13), swapped pattern
        assert_eq!(m.tetrahedra[18..20], [[7, 17, 14, 8], [7, 8, 14, 4]]);
        // hexa 6 (i=6): x, y and z swaps on (12 13 16 15 21 22 25 24) → (4 3 0 1 ...) odd count
        // hexa 7 (i=7): y and z swaps, even count → plain pattern on (25 26 23 22 16 17 14 13)
        assert_eq!(m.tetrahedra[42], [25, 17, 26, 14]);
        let p = &scene.mesh_of(grid).unwrap().points;
        assert!(m.tetrahedra.iter().all(|&t| signed_volume(p, t) > 0.0), "the swapped pattern restores the orientation");
    }

    #[test]
    fn hexa2tetra_into_a_mesh_topology_of_a_child_node() {
        // TetrahedronHyperelasticityFEMForceField.scn: input="@../" output="@Container" (MeshTopology)
        let (f, mut scene) = factory_and_scene();
        add(&f, &mut scene, Scene::ROOT, "RegularGridTopology", &[("name", "hexaGrid"), ("n", "3 3 8"), ("min", "0 0 0"), ("max", "1 1 2.7")]);
        add(&f, &mut scene, Scene::ROOT, "MechanicalObject", &[]);
        let child = scene.add_node(Scene::ROOT, "tetras");
        let c = add(&f, &mut scene, child, "MeshTopology", &[("name", "Container")]);
        add(&f, &mut scene, child, "Hexa2TetraTopologicalMapping", &[("input", "@../"), ("output", "@Container"), ("swapping", "true")]);
        init_scene(&mut scene).unwrap();
        let m = scene.mesh_of(c).unwrap();
        assert_eq!(m.tetrahedra.len(), 2 * 2 * 7 * 6);
        assert!(m.points.is_empty());
        assert!(!m.edges.is_empty() && !m.triangles.is_empty());
        // the same split as into a set container
        let (nx, ny) = (2, 2);
        let grid = crate::grid::hexahedra([3, 3, 8]);
        assert_eq!(m.tetrahedra, crate::elements::hexahedra_to_tetrahedra(&grid, true, nx, ny));
    }

    /// One tetrahedron (positive volume) in the parent node; the child's triangle container is
    /// filled by Tetra2TriangleTopologicalMapping with the given extra attributes.
    fn tetra2triangle(extra: &[(&str, &str)], tets: &str) -> (Scene, ComponentId, ComponentId) {
        let (f, mut scene) = factory_and_scene();
        add(
            &f,
            &mut scene,
            Scene::ROOT,
            "TetrahedronSetTopologyContainer",
            &[("name", "Container"), ("position", "0 0 0 1 0 0 0 1 0 0 0 1 1 1 1"), ("tetrahedra", tets)],
        );
        add(&f, &mut scene, Scene::ROOT, "TetrahedronSetTopologyModifier", &[]);
        add(&f, &mut scene, Scene::ROOT, "MechanicalObject", &[("name", "Volume")]);
        let t = scene.add_node(Scene::ROOT, "T");
        let out = add(&f, &mut scene, t, "TriangleSetTopologyContainer", &[("name", "Container")]);
        add(&f, &mut scene, t, "TriangleSetTopologyModifier", &[]);
        let mut a = vec![("input", "@../Container"), ("output", "@Container")];
        a.extend_from_slice(extra);
        add(&f, &mut scene, t, "Tetra2TriangleTopologicalMapping", &a);
        // a component initialised after the mapping reads the mapped triangles through a link
        let later = add(&f, &mut scene, t, "TriangleSetTopologyContainer", &[("name", "Copy"), ("triangles", "@Container.triangles")]);
        init_scene(&mut scene).unwrap();
        (scene, out, later)
    }

    fn normal(p: &[[f64; 3]], t: [usize; 3]) -> [f64; 3] {
        let a = [p[t[1]][0] - p[t[0]][0], p[t[1]][1] - p[t[0]][1], p[t[1]][2] - p[t[0]][2]];
        let b = [p[t[2]][0] - p[t[0]][0], p[t[2]][1] - p[t[0]][1], p[t[2]][2] - p[t[0]][2]];
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    }

    #[test]
    fn tetra2triangle_of_one_tetrahedron() {
        let (scene, out, later) = tetra2triangle(&[], "0 1 2 3");
        let m = scene.mesh_of(out).unwrap();
        // faces (1,2,3) (0,3,2) (1,3,0)→(0,1,3) (0,2,1), all on the border, input orientation
        assert_eq!(m.triangles, vec![[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]]);
        // edges of the output derived from its triangles, oriented, first appearance
        assert_eq!(m.edges, vec![[2, 3], [3, 1], [1, 2], [2, 0], [0, 3], [0, 1]]);
        assert_eq!(scene.get::<SetTopologyContainer>(out).unwrap().nb_points(), 5);
        // outward normals (the centroid is inside)
        let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        for t in &m.triangles {
            let n = normal(&p, *t);
            let out_dir = [p[t[0]][0] - 0.25, p[t[0]][1] - 0.25, p[t[0]][2] - 0.25];
            assert!(n[0] * out_dir[0] + n[1] * out_dir[1] + n[2] * out_dir[2] > 0.0);
        }
        assert_eq!(scene.mesh_of(later).unwrap().triangles, m.triangles);
        assert_eq!(scene.entry(out).data.indices("triangles"), &[1, 2, 3, 0, 3, 2, 0, 1, 3, 0, 2, 1]);

        let (scene, out, _) = tetra2triangle(&[("flipNormals", "true")], "0 1 2 3");
        assert_eq!(scene.mesh_of(out).unwrap().triangles, vec![[1, 3, 2], [0, 2, 3], [0, 3, 1], [0, 1, 2]]);

        let (scene, out, _) = tetra2triangle(&[("noInitialTriangles", "1")], "0 1 2 3");
        let m = scene.mesh_of(out).unwrap();
        assert!(m.triangles.is_empty() && m.edges.is_empty());
        assert_eq!(scene.get::<SetTopologyContainer>(out).unwrap().nb_points(), 5);
    }

    #[test]
    fn tetra2triangle_skips_inner_faces() {
        let (scene, out, _) = tetra2triangle(&[], "0 1 2 3 1 2 3 4");
        // input triangles (1,2,3) (0,3,2) (0,1,3) (0,2,1) (2,3,4) (1,4,3) (1,2,4): the first is shared
        assert_eq!(scene.mesh_of(out).unwrap().triangles, vec![[0, 3, 2], [0, 1, 3], [0, 2, 1], [2, 3, 4], [1, 4, 3], [1, 2, 4]]);
    }

    #[test]
    fn output_declared_after_the_mapping_and_default_links() {
        let (f, mut scene) = factory_and_scene();
        add(&f, &mut scene, Scene::ROOT, "TetrahedronSetTopologyContainer", &[("tetrahedra", "0 1 2 3")]);
        let t = scene.add_node(Scene::ROOT, "T");
        add(&f, &mut scene, t, "Tetra2TriangleTopologicalMapping", &[]);
        let out = add(&f, &mut scene, t, "TriangleSetTopologyContainer", &[]);
        init_scene(&mut scene).unwrap();
        assert_eq!(scene.mesh_of(out).unwrap().triangles.len(), 4);
        assert_eq!(scene.mesh_of(out).unwrap().edges.len(), 6);
        // no modifier: a warning, as in SOFA
        assert!(scene.messages.iter().any(|d| d.message.contains("TriangleSetTopologyModifier")));
    }

    #[test]
    fn hexa2quad_quad2triangle_triangle2edge() {
        let (f, mut scene) = factory_and_scene();
        // two hexahedra side by side
        let ([_, quads, tris], tn) = hexa_quad_triangle_chain(&f, &mut scene, "0 1 4 3 6 7 10 9  1 2 5 4 7 8 11 10");
        let en = scene.add_node(tn, "E");
        let edges = add(&f, &mut scene, en, "EdgeSetTopologyContainer", &[("name", "Edge_topo")]);
        add(&f, &mut scene, en, "EdgeSetTopologyModifier", &[]);
        add(&f, &mut scene, en, "Triangle2EdgeTopologicalMapping", &[("input", "@../Triangle_topo"), ("output", "@Edge_topo")]);
        init_scene(&mut scene).unwrap();

        let hexa_quads = crate::mesh::quads_from_hexahedra(&[[0, 1, 4, 3, 6, 7, 10, 9], [1, 2, 5, 4, 7, 8, 11, 10]]);
        // the shared face (1,4,10,7) is quad 3 of the first hexahedron
        assert_eq!(hexa_quads[3], [1, 4, 10, 7]);
        let q = &scene.mesh_of(quads).unwrap().quads;
        let mut expect = hexa_quads.clone();
        expect.remove(3);
        assert_eq!(q, &expect);
        assert_eq!(scene.get::<SetTopologyContainer>(quads).unwrap().nb_points(), 12);

        // quads of a non-grid input: scale 2, checkerboard over the quad index
        let t = &scene.mesh_of(tris).unwrap().triangles;
        assert_eq!(t.len(), 20);
        assert_eq!(t[..4], [[3, 4, 0], [1, 0, 4], [6, 7, 9], [10, 9, 7]]);
        assert_eq!(*t, crate::elements::quads_to_triangles(q, true, 2));

        // a closed surface has no border edges
        let e = scene.mesh_of(edges).unwrap();
        assert!(e.edges.is_empty());
        assert_eq!(scene.get::<SetTopologyContainer>(edges).unwrap().nb_points(), 12);
    }

    #[test]
    fn triangle2edge_keeps_border_edges_in_input_order() {
        let (f, mut scene) = factory_and_scene();
        add(&f, &mut scene, Scene::ROOT, "TriangleSetTopologyContainer", &[("name", "Triangle_topo"), ("triangles", "0 1 2 2 1 3")]);
        let en = scene.add_node(Scene::ROOT, "E");
        let out = add(&f, &mut scene, en, "EdgeSetTopologyContainer", &[("name", "Edge_topo")]);
        add(&f, &mut scene, en, "EdgeSetTopologyModifier", &[]);
        add(&f, &mut scene, en, "Triangle2EdgeTopologicalMapping", &[("input", "@../Triangle_topo"), ("output", "@Edge_topo")]);
        init_scene(&mut scene).unwrap();
        // input edges (1,2) (2,0) (0,1) (1,3) (3,2); (1,2) is shared
        assert_eq!(scene.mesh_of(out).unwrap().edges, vec![[2, 0], [0, 1], [1, 3], [3, 2]]);
    }

    #[test]
    fn quad2triangle_on_a_grid_uses_its_width() {
        let (f, mut scene) = factory_and_scene();
        add(&f, &mut scene, Scene::ROOT, "RegularGridTopology", &[("name", "grid"), ("n", "4 3 1")]);
        let tn = scene.add_node(Scene::ROOT, "T");
        let out = add(&f, &mut scene, tn, "TriangleSetTopologyContainer", &[("name", "Triangle_topo")]);
        add(&f, &mut scene, tn, "TriangleSetTopologyModifier", &[]);
        add(&f, &mut scene, tn, "Quad2TriangleTopologicalMapping", &[("input", "@../grid"), ("output", "@Triangle_topo")]);
        init_scene(&mut scene).unwrap();
        let q = crate::grid::quads([4, 3, 1]);
        assert_eq!(q.len(), 6);
        let t = &scene.mesh_of(out).unwrap().triangles;
        assert_eq!(*t, crate::elements::quads_to_triangles(&q, true, 3));
        // quad 3 = (4 5 9 8): (3 % 3) ^ (3 / 3) = 1 → (q0,q1,q3) (q2,q3,q1)
        assert_eq!(t[6..8], [[4, 5, 8], [9, 8, 5]]);
    }

    /// One unit cube of a grid into two prisms into a MeshTopology: the split of SOFA's
    /// Hexa2PrismTopologicalMapping, and the two prisms fill the cube (half volume each).
    #[test]
    fn hexa2prism_splits_each_hexahedron_in_two() {
        let (f, mut scene) = factory_and_scene();
        let grid = add(&f, &mut scene, Scene::ROOT, "RegularGridTopology", &[("name", "grid"), ("n", "2 2 2"), ("min", "0 0 0"), ("max", "1 1 1")]);
        let child = scene.add_node(Scene::ROOT, "prisms");
        let out = add(&f, &mut scene, child, "MeshTopology", &[("name", "prism_topology")]);
        add(&f, &mut scene, child, "Hexa2PrismTopologicalMapping", &[("input", "@../grid"), ("output", "@prism_topology")]);
        init_scene(&mut scene).unwrap();
        let hexa = scene.mesh_of(grid).unwrap().hexahedra[0];
        let prisms = scene.entry(out).data.indices("prisms").to_vec();
        let c = hexa;
        assert_eq!(prisms, vec![c[0], c[5], c[1], c[3], c[6], c[2], c[0], c[4], c[5], c[3], c[7], c[6]]);
        // a prism (a b c | d e f) is the tetrahedra (a b c d) (b c d e) (c d e f)
        let p = &scene.mesh_of(grid).unwrap().points;
        for pr in prisms.chunks(6) {
            let v: f64 = [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5]].iter().map(|t| signed_volume(p, t.map(|k| pr[k])).abs() / 6.0).sum();
            assert!((v - 0.5).abs() < 1e-12, "{v}");
        }
    }

    #[test]
    fn type_and_modifier_errors() {
        let (f, mut scene) = factory_and_scene();
        add(&f, &mut scene, Scene::ROOT, "TetrahedronSetTopologyContainer", &[("name", "tets"), ("tetrahedra", "0 1 2 3")]);
        let tn = scene.add_node(Scene::ROOT, "T");
        add(&f, &mut scene, tn, "TriangleSetTopologyContainer", &[("name", "tris")]);
        add(&f, &mut scene, tn, "TriangleSetTopologyModifier", &[]);
        add(&f, &mut scene, tn, "Quad2TriangleTopologicalMapping", &[("input", "@../tets"), ("output", "@tris")]);
        let e = init_scene(&mut scene).unwrap_err();
        assert!(e.to_string().contains("not a quad topology"), "{e}");

        let mut scene = Scene::new("root");
        add(&f, &mut scene, Scene::ROOT, "HexahedronSetTopologyContainer", &[("name", "hexa"), ("hexahedra", "0 1 2 3 4 5 6 7")]);
        let qn = scene.add_node(Scene::ROOT, "Q");
        add(&f, &mut scene, qn, "QuadSetTopologyContainer", &[("name", "quads")]);
        add(&f, &mut scene, qn, "Hexa2QuadTopologicalMapping", &[("input", "@../hexa"), ("output", "@quads")]);
        let e = init_scene(&mut scene).unwrap_err();
        assert!(e.to_string().contains("QuadSetTopologyModifier"), "{e}");

        // a tetrahedron into a triangle container
        let mut scene = Scene::new("root");
        add(&f, &mut scene, Scene::ROOT, "RegularGridTopology", &[("name", "grid")]);
        add(&f, &mut scene, Scene::ROOT, "TriangleSetTopologyContainer", &[("name", "tris")]);
        add(&f, &mut scene, Scene::ROOT, "Hexa2TetraTopologicalMapping", &[("input", "@grid"), ("output", "@tris")]);
        let e = init_scene(&mut scene).unwrap_err();
        assert!(e.to_string().contains("cannot hold tetrahedra"), "{e}");
    }
}
