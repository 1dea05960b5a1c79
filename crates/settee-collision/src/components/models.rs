//! The collision model components (spec §3.1, §8): sphere, point, line, triangle, tetrahedron and
//! cube models. One Rust type serves every class: what differs is the primitive kind, which
//! Data each class declares, and what it needs from its node (a state of the right template, a
//! topology with the right elements).

use std::sync::Arc;

use settee_core::collision::geometry::{point_normals, Vec3};
use settee_core::collision::{CollisionModel, ModelGeometry, PrimitiveKind};
use settee_core::component::link;
use settee_core::data::{decl, decl_alias, DataKind::*};
use settee_core::topology_change::{ElementData, ElementKind, Follow, TopologyChange};
use settee_core::{
    component_any, Adjacency, Component, ComponentClass, ComponentId, CreateArgs, DataDecl, InitCtx, Layout, LinkDecl, MeshData, Roles, Scene,
    SimError, SimResult, StateId, TemplateRule, VecId,
};

/// Data of every collision model (SOFA's `CollisionModel`).
static MODEL_DATA: &[DataDecl] = &[
    decl("active", Bool, "true", "inactive models take no part in detection"),
    decl("moving", Bool, "true", "false: the bounding tree is built once and never updated (obstacles)"),
    decl("simulated", Bool, "true", "false: an obstacle; no pair between two obstacles, responses go to the other model's node"),
    decl("selfCollision", Bool, "false", "allow collisions between models of the same node, this one included"),
    decl_alias("contactDistance", &["proximity"], Real, "0", "skin thickness added to the alarm and contact distances of every pair with this model"),
    decl(
        "contactStiffness",
        Real,
        "10",
        "stiffness of penalty contacts (their stiffness is the product of both models' values over the contact distance)",
    ),
    decl("contactFriction", Real, "0", "friction coefficient (read by penalty contacts, without effect)"),
    decl("contactRestitution", Real, "0", "restitution coefficient (unused by the responses in Settee)"),
    decl("contactResponse", Str, "", "response for pairs with this model, overriding the contact manager's"),
    decl("color", Str, "1 0 0 1", "display color: 4 numbers or a name, as SOFA's RGBAColor (rendering only)"),
    decl("group", Reals, "", "collision groups: models sharing a group never collide"),
    decl("numberOfContacts", Int, "0", "output: number of contacts involving this model at the last response phase"),
];

static BOTH_SIDE: &[DataDecl] =
    &[decl("bothSide", Bool, "false", "both sides of the primitives collide (LocalMinDistance filters, NewProximity normals)")];

static TOPOLOGY_LINK: &[LinkDecl] = &[link("topology", Roles::TOPOLOGY, "topology of the primitives (default: the node's)")];

static SPHERE_DATA: &[DataDecl] = &[
    decl("listRadius", Reals, "", "radius of each sphere (empty: every sphere has `radius`)"),
    decl("radius", Real, "1", "radius of the spheres not in listRadius"),
    decl("showImpostors", Bool, "true", "draw impostors (rendering only)"),
];

static POINT_DATA: &[DataDecl] = &[
    decl("computeNormals", Bool, "false", "compute vertex normals at each update (needed by Tetrahedron–Point)"),
    decl("displayFreePosition", Bool, "false", "draw the free positions (rendering only)"),
];

static LINE_DATA: &[DataDecl] = &[decl("displayFreePosition", Bool, "false", "draw the free positions (rendering only)")];

static TRIANGLE_DATA: &[DataDecl] = &[
    decl("computeNormals", Bool, "true", "recompute the triangle normals at each update"),
    decl("useCurvature", Bool, "false", "store normal cones in the bounding tree (self-collision pruning, not supported: no effect)"),
];

settee_core::data_refs! {
    static READS;
    ACTIVE: Bool = "active";
    MOVING: Bool = "moving";
    SIMULATED: Bool = "simulated";
    SELF_COLLISION: Bool = "selfCollision";
    CONTACT_DISTANCE: Real = "contactDistance";
    CONTACT_STIFFNESS: Real = "contactStiffness";
    CONTACT_RESPONSE: Text = "contactResponse";
    GROUP: Reals = "group";
}

settee_core::data_refs! {
    static SPHERE_READS;
    LIST_RADIUS: Reals = "listRadius";
    RADIUS: Real = "radius";
}

settee_core::data_refs! {
    static BOTH_SIDE_READS;
    BOTH_SIDE_REF: Bool = "bothSide";
}

settee_core::data_refs! {
    static NORMALS_READS;
    COMPUTE_NORMALS: Bool = "computeNormals";
}

macro_rules! model_class {
    ($name:ident, $class:literal, $desc:literal, $templates:expr, $data:expr, $links:expr, $reads:expr, $create:ident) => {
        pub static $name: ComponentClass = ComponentClass {
            name: $class,
            description: $desc,
            roles: Roles::COLLISION_MODEL,
            templates: $templates,
            default_template: "Vec3d",
            template_rule: TemplateRule::FromState,
            data: $data,
            links: $links,
            create: $create,
            preparse: None,
            no_src_link: &[],
            reads: $reads,
        };
    };
}

static SPHERE_ALL_READS: &[settee_core::DataUse] = &[
    ACTIVE.erased(),
    MOVING.erased(),
    SIMULATED.erased(),
    SELF_COLLISION.erased(),
    CONTACT_DISTANCE.erased(),
    CONTACT_STIFFNESS.erased(),
    CONTACT_RESPONSE.erased(),
    GROUP.erased(),
    LIST_RADIUS.erased(),
    RADIUS.erased(),
];
static POINT_ALL_READS: &[settee_core::DataUse] = &[
    ACTIVE.erased(),
    MOVING.erased(),
    SIMULATED.erased(),
    SELF_COLLISION.erased(),
    CONTACT_DISTANCE.erased(),
    CONTACT_STIFFNESS.erased(),
    CONTACT_RESPONSE.erased(),
    GROUP.erased(),
    BOTH_SIDE_REF.erased(),
    COMPUTE_NORMALS.erased(),
];
static LINE_ALL_READS: &[settee_core::DataUse] = &[
    ACTIVE.erased(),
    MOVING.erased(),
    SIMULATED.erased(),
    SELF_COLLISION.erased(),
    CONTACT_DISTANCE.erased(),
    CONTACT_STIFFNESS.erased(),
    CONTACT_RESPONSE.erased(),
    GROUP.erased(),
    BOTH_SIDE_REF.erased(),
];
static TRIANGLE_ALL_READS: &[settee_core::DataUse] = POINT_ALL_READS;

model_class!(
    SPHERE,
    "SphereCollisionModel",
    "Spheres centred on the DOFs of a Vec3d or Rigid3d state (radius or listRadius).",
    &["Vec3d", "Rigid3d"],
    &[MODEL_DATA, SPHERE_DATA],
    &[],
    SPHERE_ALL_READS,
    create_sphere
);
model_class!(
    POINT,
    "PointCollisionModel",
    "The DOFs of a Vec3d state as collision points.",
    &["Vec3d"],
    &[MODEL_DATA, BOTH_SIDE, POINT_DATA],
    TOPOLOGY_LINK,
    POINT_ALL_READS,
    create_point
);
model_class!(
    LINE,
    "LineCollisionModel",
    "The edges of a topology as collision segments.",
    &["Vec3d"],
    &[MODEL_DATA, BOTH_SIDE, LINE_DATA],
    TOPOLOGY_LINK,
    LINE_ALL_READS,
    create_line
);
model_class!(
    TRIANGLE,
    "TriangleCollisionModel",
    "The triangles (and quads, split in two) of a topology as collision triangles.",
    &["Vec3d"],
    &[MODEL_DATA, BOTH_SIDE, TRIANGLE_DATA],
    TOPOLOGY_LINK,
    TRIANGLE_ALL_READS,
    create_triangle
);
model_class!(
    TETRAHEDRON,
    "TetrahedronCollisionModel",
    "The tetrahedra of a topology as collision volumes (Tetrahedron–Point only).",
    &["Vec3d"],
    &[MODEL_DATA],
    TOPOLOGY_LINK,
    READS,
    create_tetra
);

/// SOFA's `CubeCollisionModel` declared in a scene: a bounding-volume model whose boxes are only
/// ever set by code, so a declared one has no element and takes part in nothing.
pub static CUBE: ComponentClass = ComponentClass {
    name: "CubeCollisionModel",
    description: "Axis-aligned boxes (the levels of bounding trees); a declared one has no element.",
    roles: Roles::COLLISION_MODEL,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[MODEL_DATA],
    links: &[],
    create: create_cube,
    preparse: None,
    no_src_link: &[],
    reads: READS,
};

fn create_sphere(args: &CreateArgs) -> Box<dyn Component> {
    let kind = if args.layout == Some(Layout::Rigid3) { PrimitiveKind::RigidSphere } else { PrimitiveKind::Sphere };
    Box::new(CollisionModelComponent::new(kind))
}
fn create_point(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(CollisionModelComponent::new(PrimitiveKind::Point))
}
fn create_line(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(CollisionModelComponent::new(PrimitiveKind::Line))
}
fn create_triangle(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(CollisionModelComponent::new(PrimitiveKind::Triangle))
}
fn create_tetra(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(CollisionModelComponent::new(PrimitiveKind::Tetrahedron))
}
fn create_cube(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(CollisionModelComponent::new(PrimitiveKind::Cube))
}

/// A collision model: its settings and the geometry snapshot it gives detection.
pub struct CollisionModelComponent {
    geometry: ModelGeometry,
    state: Option<StateId>,
    topology: Option<ComponentId>,
    /// The topology's mesh, kept for point normals.
    mesh: Option<Arc<MeshData>>,
    contact_response: String,
    compute_normals: bool,
    /// Normals are computed at least once (then again at each update when moving).
    normals_done: bool,
}

impl CollisionModelComponent {
    fn new(kind: PrimitiveKind) -> CollisionModelComponent {
        CollisionModelComponent {
            geometry: ModelGeometry::new(kind, "", 0),
            state: None,
            topology: None,
            mesh: None,
            contact_response: String::new(),
            compute_normals: false,
            normals_done: false,
        }
    }

    pub fn kind(&self) -> PrimitiveKind {
        self.geometry.kind
    }

    fn needs_topology(&self) -> bool {
        matches!(self.geometry.kind, PrimitiveKind::Line | PrimitiveKind::Triangle | PrimitiveKind::Tetrahedron)
    }

    /// Reads positions (and, for rigid spheres, orientations) of the model's state.
    fn read_positions(&mut self, scene: &Scene) {
        let Some(s) = self.state else { return };
        let st = scene.store.get(s);
        let x = st.read(VecId::POSITION);
        let g = &mut self.geometry;
        g.x.clear();
        match st.layout {
            Layout::Rigid3 => {
                g.orientations.clear();
                for c in x.chunks_exact(7).take(st.size) {
                    g.x.push(Vec3::new(c[0], c[1], c[2]));
                    g.orientations.push([c[3], c[4], c[5], c[6]]);
                }
            }
            _ => g.x.extend(x.chunks_exact(3).take(st.size).map(|c| Vec3::new(c[0], c[1], c[2]))),
        }
    }
}

/// SOFA's class name of a primitive kind, for messages.
fn class_of(kind: PrimitiveKind) -> &'static str {
    match kind {
        PrimitiveKind::Cube => "CubeCollisionModel",
        PrimitiveKind::Sphere | PrimitiveKind::RigidSphere => "SphereCollisionModel",
        PrimitiveKind::Point => "PointCollisionModel",
        PrimitiveKind::Line => "LineCollisionModel",
        PrimitiveKind::Triangle => "TriangleCollisionModel",
        PrimitiveKind::Tetrahedron => "TetrahedronCollisionModel",
    }
}

impl Component for CollisionModelComponent {
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let kind = self.geometry.kind;
        let node = cx.node();
        let d = cx.data();
        let mut g = ModelGeometry::new(kind, cx.entry().name.clone(), node.to_bits());
        g.active = d.get(ACTIVE);
        g.moving = d.get(MOVING);
        g.simulated = d.get(SIMULATED);
        g.self_collision = d.get(SELF_COLLISION);
        g.contact_distance = d.get(CONTACT_DISTANCE);
        g.contact_stiffness = d.get(CONTACT_STIFFNESS);
        let mut groups: Vec<i64> = d.get(GROUP).iter().map(|v| *v as i64).collect();
        groups.sort_unstable();
        groups.dedup();
        g.groups = groups;
        self.contact_response = d.get(CONTACT_RESPONSE).trim().to_string();
        if matches!(kind, PrimitiveKind::Point | PrimitiveKind::Line | PrimitiveKind::Triangle) {
            g.both_side = d.get(BOTH_SIDE_REF);
        }
        if matches!(kind, PrimitiveKind::Point | PrimitiveKind::Triangle) {
            self.compute_normals = d.get(COMPUTE_NORMALS);
        }
        self.geometry = g;
        if kind == PrimitiveKind::Cube {
            return Ok(());
        }

        // The state: the node's own mechanical state (SOFA's `getContext()->getMechanicalState()`).
        let class = class_of(kind);
        let state = cx.mstate().and_then(|c| cx.scene.state_of(c)).ok_or_else(|| {
            cx.error(format!("{class} needs a mechanical state: there is none in this node or above"))
                .hint("add a MechanicalObject (Vec3d, or Rigid3d for spheres) to the node before the collision model")
        })?;
        let layout = cx.state_layout(state);
        let wanted = if kind == PrimitiveKind::RigidSphere { Layout::Rigid3 } else { Layout::Vec3 };
        if layout != wanted {
            return Err(cx
                .error(format!("{class} needs a {} mechanical state, the node's is {}", wanted.name(), layout.name()))
                .hint("give the collision model its own node with a Vec3d state mapped from the object"));
        }
        self.state = Some(state);
        let n = cx.state_size(state);

        // Sphere radii.
        if matches!(kind, PrimitiveKind::Sphere | PrimitiveKind::RigidSphere) {
            let d = cx.data();
            let list = d.get(LIST_RADIUS).to_vec();
            let radius = d.get(RADIUS);
            if !list.is_empty() && list.len() != n {
                return Err(cx
                    .error(format!("listRadius has {} radii for {n} spheres (one per DOF of the state)", list.len()))
                    .hint("give one radius per DOF, or leave listRadius empty to use `radius` for every sphere"));
            }
            self.geometry.radius = if list.is_empty() { vec![radius; n] } else { list };
            if let Some(i) = self.geometry.radius.iter().position(|r| !r.is_finite() || *r < 0.0) {
                return Err(cx.error(format!("sphere {i} has radius {}: radii must be finite and non-negative", self.geometry.radius[i])));
            }
        }

        // Topology: required by line, triangle and tetrahedron models; a point model uses the
        // one of its context when it describes the model's points (self-collision pruning,
        // normals, LocalMinDistance filters); spheres have none.
        let topo = if matches!(kind, PrimitiveKind::Sphere | PrimitiveKind::RigidSphere) { None } else { cx.topology() };
        if kind == PrimitiveKind::Point {
            if let Some(t) = topo {
                if let Some(mesh) = cx.scene.mesh_of(t).cloned() {
                    let adjacency = Arc::new(Adjacency::build(&mesh, n));
                    if self.geometry.set_topology(&mesh, Some(adjacency), n).is_ok() {
                        self.topology = Some(t);
                        self.mesh = Some(Arc::new(mesh));
                    }
                }
            }
        } else if self.needs_topology() {
            match topo.and_then(|t| cx.scene.mesh_of(t).map(|m| (t, m.clone()))) {
                Some((t, mesh)) => {
                    let ok = match kind {
                        PrimitiveKind::Line => !mesh.edges.is_empty(),
                        PrimitiveKind::Triangle => !mesh.triangles.is_empty() || !mesh.quads.is_empty(),
                        PrimitiveKind::Tetrahedron => !mesh.tetrahedra.is_empty(),
                        _ => true,
                    };
                    // A dynamic container may start empty and gain its elements while the
                    // simulation runs (SOFA accepts any empty topology).
                    let dynamic = cx.scene.entry(t).class.name.ends_with("SetTopologyContainer");
                    if !ok && !dynamic {
                        let what = match kind {
                            PrimitiveKind::Line => "edges",
                            PrimitiveKind::Triangle => "triangles or quads",
                            _ => "tetrahedra",
                        };
                        return Err(cx
                            .error(format!("{class} needs a topology with {what}; {} has none", cx.scene.entry(t).label()))
                            .hint("link `topology` to a container holding the model's elements"));
                    }
                    let adjacency = Arc::new(Adjacency::build(&mesh, n));
                    self.geometry.set_topology(&mesh, Some(adjacency), n).map_err(|e| {
                        cx.error(format!("{}: {e}", cx.scene.entry(t).label())).hint("the topology must describe the points of the model's state")
                    })?;
                    self.topology = Some(t);
                    self.mesh = Some(Arc::new(mesh));
                }
                None => {
                    return Err(cx
                        .error(format!("{class} needs a topology: none in this node or above"))
                        .hint("add a topology container (MeshTopology, TriangleSetTopologyContainer…) or set `topology=\"@...\"`"));
                }
            }
        }

        // Point models: a line model in the node or above enables the LocalMinDistance filter.
        if kind == PrimitiveKind::Point {
            let mut cur = Some(node);
            while let Some(nd) = cur {
                if cx.scene.node(nd).objects.iter().any(|c| cx.scene.entry(*c).class.name == LINE.name) {
                    self.geometry.has_line_model = true;
                    break;
                }
                cur = cx.scene.node(nd).parent;
            }
        }
        self.read_positions(cx.scene);
        if kind == PrimitiveKind::Triangle {
            self.geometry.update_triangle_normals();
            self.normals_done = true;
        }
        self.geometry.validate().map_err(|e| cx.error(e.to_string()))
    }

    /// The elements are the container's: they are read again from it, with the adjacency and
    /// the per-triangle flags and normals derived from them; sphere radii follow the points.
    /// The bounding tree resets itself when the element count changes (SOFA's
    /// `cubeModel->resize(0)`).
    fn topology_changed(&mut self, cx: &mut InitCtx, topology: ComponentId, changes: &[TopologyChange]) -> SimResult<Follow> {
        let kind = self.geometry.kind;
        let Some(state) = self.state else { return Ok(Follow::NotConcerned) };
        if kind == PrimitiveKind::Cube {
            return Ok(Follow::NotConcerned);
        }
        let n = settee_core::topology_change::state_size_after(changes, cx.state_size(state));
        if matches!(kind, PrimitiveKind::Sphere | PrimitiveKind::RigidSphere) {
            let radius = cx.data().get(RADIUS);
            let mut radii = ElementData::new(ElementKind::Point, std::mem::take(&mut self.geometry.radius));
            radii.apply(changes, |_| radius).map_err(|e| cx.error(format!("cannot follow the point changes: {e}")))?;
            self.geometry.radius = radii.values().to_vec();
        } else if self.topology == Some(topology) {
            let mesh =
                cx.scene.mesh_of(topology).cloned().ok_or_else(|| cx.error(format!("{} provides no mesh", cx.scene.entry(topology).label())))?;
            let adjacency = Arc::new(Adjacency::build(&mesh, n));
            self.geometry.set_topology(&mesh, Some(adjacency), n).map_err(|e| {
                cx.error(format!("{} after its change: {e}", cx.scene.entry(topology).label()))
                    .hint("the topology must describe the points of the model's state")
            })?;
            self.mesh = Some(Arc::new(mesh));
        }
        self.read_positions(cx.scene);
        if kind == PrimitiveKind::Triangle {
            self.geometry.update_triangle_normals();
            self.normals_done = true;
        }
        if kind == PrimitiveKind::Point && self.compute_normals {
            self.geometry.point_normals = match &self.mesh {
                Some(mesh) => point_normals(&self.geometry.x, mesh),
                None => Vec::new(),
            };
        }
        self.geometry.validate().map_err(|e| cx.error(e.to_string()))?;
        Ok(Follow::Followed)
    }

    fn collision_model(&mut self) -> Option<&mut dyn CollisionModel> {
        Some(self)
    }
    fn collision_model_ref(&self) -> Option<&dyn CollisionModel> {
        Some(self)
    }
}

impl CollisionModel for CollisionModelComponent {
    fn update_geometry(&mut self, scene: &Scene) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        let n = scene
            .store
            .states
            .get(s)
            .map(|st| st.size)
            .ok_or_else(|| SimError::new(format!("the state of collision model '{}' was removed", self.geometry.name)))?;
        if n != self.geometry.x.len() && matches!(self.geometry.kind, PrimitiveKind::Sphere | PrimitiveKind::RigidSphere) {
            // SOFA pads the radius list with `radius` when the state grows.
            let last = self.geometry.radius.last().copied().unwrap_or(1.0);
            self.geometry.radius.resize(n, last);
        }
        self.read_positions(scene);
        let g = &mut self.geometry;
        match g.kind {
            PrimitiveKind::Triangle if self.compute_normals && (g.moving || !self.normals_done) => {
                g.update_triangle_normals();
                self.normals_done = true;
            }
            PrimitiveKind::Point if self.compute_normals => {
                if let Some(mesh) = &self.mesh {
                    g.point_normals = point_normals(&g.x, mesh);
                }
            }
            _ => {}
        }
        Ok(())
    }
    fn geometry(&self) -> &ModelGeometry {
        &self.geometry
    }
    fn state(&self) -> Option<StateId> {
        self.state
    }
    fn topology(&self) -> Option<ComponentId> {
        self.topology
    }
    fn contact_response(&self) -> &str {
        &self.contact_response
    }
}

/// Registers the collision model classes.
pub fn register(f: &mut settee_core::Factory) {
    for c in [&SPHERE, &POINT, &LINE, &TRIANGLE, &TETRAHEDRON, &CUBE] {
        f.register(c);
    }
}
