//! The collision model components (spec §3.1, §8): sphere, point, line, triangle, tetrahedron and
//! cube models. One Rust type serves every class: what differs is the primitive kind, which
//! Data each class declares, and what it needs from its node (a state of the right template, a
//! topology with the right elements).

use std::sync::Arc;

use settee_core::collision::geometry::{point_normals, Vec3};
use settee_core::collision::{CollisionModel, ModelGeometry, PrimitiveKind, Sweep};
use settee_core::role::Topology;
use settee_core::topology_change::{ElementData, ElementKind, Follow, TopologyChange};
use settee_core::{component, data_group, Adjacency, Component, ComponentId, InitCtx, Layout, MeshData, Scene, SimError, SimResult, StateId, VecId};

/// Data of every collision model (SOFA's `CollisionModel`): every collision-model class includes
/// it, and the contact managers write `numberOfContacts` through it.
#[data_group(data = {
    /// inactive models take no part in detection
    active: Bool = "true",
    /// false: the bounding tree is built once and never updated (obstacles)
    moving: Bool = "true",
    /// false: an obstacle; no pair between two obstacles, responses go to the other model's node
    simulated: Bool = "true",
    /// allow collisions between models of the same node, this one included
    selfCollision: Bool = "false",
    /// skin thickness added to the alarm and contact distances of every pair with this model
    #[alias("proximity")]
    contactDistance: Real = "0",
    /// stiffness of penalty contacts (their stiffness is the product of both models' values over
    /// the contact distance)
    contactStiffness: Real = "10",
    /// friction coefficient (read by penalty contacts, without effect)
    contactFriction: Real = "0",
    /// restitution coefficient (unused by the responses in Settee)
    contactRestitution: Real = "0",
    /// response for pairs with this model, overriding the contact manager's
    contactResponse: Str,
    /// display color: 4 numbers or a name, as SOFA's RGBAColor (rendering only)
    color: Color = "1 0 0 1",
    /// collision groups: models sharing a group never collide
    group: Reals,
    /// output: number of contacts involving this model at the last response phase
    numberOfContacts: Int = "0",
})]
pub struct CollisionModelData;

/// Data of the point, line and triangle models.
#[data_group(data = {
    /// both sides of the primitives collide (LocalMinDistance filters, NewProximity normals)
    bothSide: Bool = "false",
})]
pub struct BothSideData;

/// A collision model: its settings and the geometry snapshot it gives detection.
#[component(
    roles = [CollisionModel],
    templates = ["Vec3d"],
    default_template = "Vec3d",
    template_rule = FromState,
    class(
        name = "SphereCollisionModel", module = "Sofa.Component.Collision.Geometry",
        description = "Spheres centred on the DOFs of a Vec3d or Rigid3d state (radius or listRadius).",
        templates = ["Vec3d", "Rigid3d"],
        create = |args| {
            let kind = if args.layout == Some(Layout::Rigid3) { PrimitiveKind::RigidSphere } else { PrimitiveKind::Sphere };
            CollisionModelComponent::new(kind)
        },
        inherit = [CollisionModelData, Self],
        data = {
            /// radius of each sphere (empty: every sphere has `radius`)
            listRadius: Reals,
            /// radius of the spheres not in listRadius
            radius: Real = "1",
            /// draw impostors (rendering only)
            showImpostors: Bool = "true",
        },
    ),
    class(
        name = "PointCollisionModel", module = "Sofa.Component.Collision.Geometry",
        description = "The DOFs of a Vec3d state as collision points.",
        create = |_| CollisionModelComponent::new(PrimitiveKind::Point),
        inherit = [CollisionModelData, BothSideData, Self],
        data = {
            /// compute vertex normals at each update (needed by Tetrahedron–Point)
            computeNormals: Bool = "false",
            /// draw the free positions (rendering only)
            displayFreePosition: Bool = "false",
        },
        links = {
            /// topology of the primitives (default: the node's)
            topology: Topology,
        },
    ),
    class(
        name = "LineCollisionModel", module = "Sofa.Component.Collision.Geometry",
        description = "The edges of a topology as collision segments.",
        create = |_| CollisionModelComponent::new(PrimitiveKind::Line),
        inherit = [CollisionModelData, BothSideData, Self],
        data = {
            /// draw the free positions (rendering only)
            displayFreePosition: Bool = "false",
        },
        links = {
            /// topology of the primitives (default: the node's)
            topology: Topology,
        },
    ),
    class(
        name = "TriangleCollisionModel", module = "Sofa.Component.Collision.Geometry",
        description = "The triangles (and quads, split in two) of a topology as collision triangles.",
        create = |_| CollisionModelComponent::new(PrimitiveKind::Triangle),
        inherit = [CollisionModelData, BothSideData, Self],
        data = {
            /// recompute the triangle normals at each update
            computeNormals: Bool = "true",
            /// store normal cones in the bounding tree (self-collision pruning, not supported: no
            /// effect)
            useCurvature: Bool = "false",
        },
        links = {
            /// topology of the primitives (default: the node's)
            topology: Topology,
        },
    ),
    class(
        name = "TetrahedronCollisionModel", module = "Sofa.Component.Collision.Geometry",
        description = "The tetrahedra of a topology as collision volumes (Tetrahedron–Point only).",
        create = |_| CollisionModelComponent::new(PrimitiveKind::Tetrahedron),
        inherit = [CollisionModelData],
        links = {
            /// topology of the primitives (default: the node's)
            topology: Topology,
        },
    ),
    // SOFA's `CubeCollisionModel` declared in a scene: a bounding-volume model whose boxes are
    // only ever set by code, so a declared one has no element and takes part in nothing.
    class(
        name = "CubeCollisionModel", module = "Sofa.Component.Collision.Geometry",
        description = "Axis-aligned boxes (the levels of bounding trees); a declared one has no element.",
        templates = [],
        default_template = "",
        template_rule = Default,
        create = |_| CollisionModelComponent::new(PrimitiveKind::Cube),
        inherit = [CollisionModelData],
    ),
)]
/// A collision model: its settings and the geometry snapshot it gives detection.
#[derive(Clone)]
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
        // The end of each DOF's sweep for continuous detection (SOFA's `pFree()`, or
        // `p() + v()·dt` for inertia). A state without free positions has not moved freely.
        g.x_end.clear();
        let stride = if st.layout == Layout::Rigid3 { 7 } else { 3 };
        match g.sweep {
            Sweep::None => {}
            Sweep::FreeMotion if st.is_set(VecId::FREE_POSITION) && !st.read(VecId::FREE_POSITION).is_empty() => {
                let xf = st.read(VecId::FREE_POSITION);
                g.x_end.extend(xf.chunks_exact(stride).take(st.size).map(|c| Vec3::new(c[0], c[1], c[2])));
            }
            Sweep::FreeMotion => g.x_end.extend_from_slice(&g.x),
            Sweep::Inertia { dt } => {
                let v = st.read(VecId::VELOCITY);
                let v = v.chunks_exact(if st.layout == Layout::Rigid3 { 6 } else { 3 });
                g.x_end.extend(g.x.iter().zip(v).map(|(p, v)| Vec3::new(p[0] + v[0] * dt, p[1] + v[1] * dt, p[2] + v[2] * dt)));
            }
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
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let kind = self.geometry.kind;
        let node = cx.node();
        let d = cx.data();
        let mut g = ModelGeometry::new(kind, cx.entry().name.clone(), node.to_bits());
        g.active = d.get(CollisionModelData::ACTIVE);
        g.moving = d.get(CollisionModelData::MOVING);
        g.simulated = d.get(CollisionModelData::SIMULATED);
        g.self_collision = d.get(CollisionModelData::SELF_COLLISION);
        g.contact_distance = d.get(CollisionModelData::CONTACT_DISTANCE);
        g.contact_stiffness = d.get(CollisionModelData::CONTACT_STIFFNESS);
        let mut groups: Vec<i64> = d.get(CollisionModelData::GROUP).iter().map(|v| *v as i64).collect();
        groups.sort_unstable();
        groups.dedup();
        g.groups = groups;
        self.contact_response = d.get(CollisionModelData::CONTACT_RESPONSE).trim().to_string();
        if matches!(kind, PrimitiveKind::Point | PrimitiveKind::Line | PrimitiveKind::Triangle) {
            g.both_side = d.get(BothSideData::BOTH_SIDE);
        }
        if matches!(kind, PrimitiveKind::Point | PrimitiveKind::Triangle) {
            self.compute_normals = d.get(Self::COMPUTE_NORMALS);
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
            let list = d.get(Self::LIST_RADIUS).to_vec();
            let radius = d.get(Self::RADIUS);
            // SOFA's `getRadius(i)`: the list's radius where there is one, else the default
            // radius; extra radii are never read.
            if !list.is_empty() && list.len() != n {
                cx.warn(format!(
                    "listRadius has {} radii for {n} spheres (one per DOF of the state): {}, as in SOFA",
                    list.len(),
                    if list.len() < n {
                        format!("spheres {}.. take the default radius {radius}", list.len())
                    } else {
                        "the extra radii are ignored".to_string()
                    }
                ));
            }
            self.geometry.radius = (0..n).map(|i| list.get(i).copied().unwrap_or(radius)).collect();
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
                if cx.scene.node(nd).objects.iter().any(|c| cx.scene.entry(*c).class.name == class_of(PrimitiveKind::Line)) {
                    self.geometry.has_line_model = true;
                    break;
                }
                cur = cx.scene.node(nd).parent();
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
            let radius = cx.data().get(Self::RADIUS);
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
    fn set_sweep(&mut self, sweep: Sweep) {
        self.geometry.sweep = sweep;
    }
}

/// Registers the collision model classes.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<CollisionModelComponent>();
}
