//! Contact responses (spec §9): the contact managers `CollisionResponse` and
//! `RuleBasedContactManager`, and the penalty response with its contact mappers.
//!
//! Contacts are data of the contact manager: a contact lives for one pair of collision models as
//! long as the pair produces outputs at every step, and keeps its contact points (persistent
//! ids, the mapped points on each body, normals, distances) and the objects that act on them.
//! Its contact points live in states given by a *mapper* per side: the model's own state for
//! point and sphere models (identity), or a Vec3d state mapped from the model's state by a
//! `BarycentricMapping` (line, triangle, tetrahedron models) or a `RigidMapping` (rigid
//! spheres). The penalty response puts a `PenalityContactForceField` between the two states;
//! the Lagrangian responses an `UnilateralLagrangianConstraint` (FrictionContactConstraint) or a
//! `BilateralLagrangianConstraint` (StickContactConstraint), filled with the step's contacts and
//! solved by FreeMotionAnimationLoop's constraint solver.
//!
//! None of these objects is in the graph: they are built here in code (no factory, no class
//! name), belong to no node, and are placed in the step's order through the scene's
//! [`settee_core::plan::ContactStore`] — a mapping at the end of its model's node subtree, a
//! force field or law after the objects of the node SOFA would attach it to (the simulated
//! model's node when the other is an obstacle, integrated implicitly with that object; the
//! pipeline's node when both are simulated, an explicit external force under
//! DefaultAnimationLoop). That is where SOFA's contact nodes sit, so every sum keeps SOFA's order.

use std::borrow::Cow;
use std::collections::HashMap;

use settee_constraint::laws::{BilateralLagrangianConstraint, UnilateralLagrangianConstraint};
use settee_core::collision::kernels::{cross, dot, invert3, mat3_mul, norm2};
use settee_core::collision::{CollisionModel, ContactManager, ContactOutputs, DetectionOutput, ModelGeometry, PointMapper, PrimitiveKind, Vec3};
use settee_core::constraint::{ContactConstraint, ContactSpec};
use settee_core::diag::Diagnostic;
use settee_core::factory::BaseData;
use settee_core::mechanics::apply_mapping;
use settee_core::scene::Deferred;
use settee_core::state::MState;
use settee_core::types::quat_rotate;
use settee_core::{component, Component, ComponentClass, ComponentId, Declared, InitCtx, Layout, NodeId, Scene, SimError, SimResult, StateId, VecId};
use settee_mapping::{BarycentricMapping, RigidMapping};

use super::models::CollisionModelData;
use super::penalty::PenalityContactForceField;
use crate::detection::{PairKeyed, StableOrderMap};

/// Every response name SOFA's contact factory knows (core modules and common plugins).
pub const RESPONSE_NAMES: &[&str] = &[
    "AugmentedLagrangianResponseConstraint",
    "CompliantContact",
    "FrictionCompliantContact",
    "FrictionContactConstraint",
    "PenalityContactForceField",
    "PersistentFrictionContact",
    "RayContact",
    "StickContactConstraint",
    "StickContactForceField",
    "distanceLMConstraint",
];

/// Responses that act through Lagrange multipliers (need FreeMotionAnimationLoop).
const LAGRANGIAN_RESPONSES: &[&str] =
    &["FrictionContactConstraint", "StickContactConstraint", "AugmentedLagrangianResponseConstraint", "PersistentFrictionContact"];

/// What the managers and responses read of a collision model.
struct ModelInfo {
    kind: PrimitiveKind,
    node: NodeId,
    /// The node of the model's state (where a rigid mapper's node goes).
    state_node: NodeId,
    name: String,
    state: Option<StateId>,
    topology: Option<ComponentId>,
}

fn model_info(scene: &Scene, id: ComponentId) -> SimResult<ModelInfo> {
    let e = scene.components.get(id).ok_or_else(|| SimError::new("a collision model of a contact was removed"))?;
    let m = e.role::<dyn CollisionModel>().ok_or_else(|| SimError::new(format!("{} is not a collision model", e.label())))?;
    let g = m.geometry();
    let state_node = m.state().and_then(|s| scene.store.states.get(s)).map_or(e.node, |s| s.node);
    Ok(ModelInfo { kind: g.kind, node: e.node, state_node, name: e.name.clone(), state: m.state(), topology: m.topology() })
}

/// What the choice of a pair's response reads of a model, borrowed from the scene (nothing is
/// copied: a pair that collides again finds its response without allocating).
struct ModelView<'a> {
    name: &'a str,
    contact_response: &'a str,
    groups: &'a [i64],
}

fn model_view(scene: &Scene, id: ComponentId) -> SimResult<ModelView<'_>> {
    let e = scene.components.get(id).ok_or_else(|| SimError::new("a collision model of a contact was removed"))?;
    let m = e.role::<dyn CollisionModel>().ok_or_else(|| SimError::new(format!("{} is not a collision model", e.label())))?;
    Ok(ModelView { name: &e.name, contact_response: m.contact_response(), groups: &m.geometry().groups })
}

/// Where a model's contacts go: its node, and whether it is simulated (read at every step, so
/// without the strings of [`ModelInfo`]).
fn placement(scene: &Scene, id: ComponentId) -> SimResult<(NodeId, bool)> {
    let e = scene.components.get(id).ok_or_else(|| SimError::new("a collision model of a contact was removed"))?;
    let m = e.role::<dyn CollisionModel>().ok_or_else(|| SimError::new(format!("{} is not a collision model", e.label())))?;
    Ok((e.node, m.geometry().simulated))
}

/// A model's `contactDistance` and `contactStiffness`, read at every step.
fn contact_law_of(scene: &Scene, id: ComponentId) -> SimResult<(f64, f64)> {
    let m = scene.role::<dyn CollisionModel>(id).ok_or_else(|| SimError::new("a collision model of a contact was removed"))?;
    let g = m.geometry();
    Ok((g.contact_distance, g.contact_stiffness))
}

fn geometry_of(scene: &Scene, id: ComponentId) -> &ModelGeometry {
    scene.role::<dyn CollisionModel>(id).expect("collision model role").geometry()
}

// ----- contact mappers ----------------------------------------------------------------------------

/// Where one side's contact points live (SOFA's contact mappers, spec §9.4).
#[derive(Clone)]
enum Mapper {
    /// Point and Vec3d sphere models: the model's own state; a point is its element (vertex or
    /// sphere), and a sphere contributes its radius to the contact distance.
    Identity { model: ComponentId, state: StateId, sphere: bool },
    /// Line, triangle and tetrahedron models: a Vec3d state mapped barycentrically from the
    /// model's state (`input`) on the model's topology, anchored at the end of the model's node
    /// subtree (`anchor`).
    /// `dormant`: the mapping of a pair that ended, kept for when the pair collides again (out of
    /// the step's order, no point).
    Barycentric {
        model: ComponentId,
        input: StateId,
        anchor: NodeId,
        topology: Option<ComponentId>,
        created: Option<(StateId, ComponentId)>,
        dormant: bool,
    },
    /// Rigid spheres: a Vec3d state attached to the frames of the rigid state (`input`) by a
    /// `RigidMapping`, anchored at the end of the rigid state's node subtree; a point keeps its
    /// coordinates in the sphere's frame, and the sphere contributes its radius to the contact
    /// distance.
    Rigid { model: ComponentId, input: StateId, anchor: NodeId, created: Option<(StateId, ComponentId)>, dormant: bool },
}

impl Mapper {
    fn for_model(id: ComponentId, info: &ModelInfo) -> SimResult<Mapper> {
        let state = info.state.ok_or_else(|| SimError::new(format!("collision model '{}' has no state", info.name)))?;
        match info.kind {
            PrimitiveKind::Point => Ok(Mapper::Identity { model: id, state, sphere: false }),
            PrimitiveKind::Sphere => Ok(Mapper::Identity { model: id, state, sphere: true }),
            PrimitiveKind::Line | PrimitiveKind::Triangle | PrimitiveKind::Tetrahedron => {
                Ok(Mapper::Barycentric { model: id, input: state, anchor: info.node, topology: info.topology, created: None, dormant: false })
            }
            PrimitiveKind::RigidSphere => Ok(Mapper::Rigid { model: id, input: state, anchor: info.state_node, created: None, dormant: false }),
            k => Err(SimError::unsupported(format!("penalty contacts on {k:?} models ('{}') are not supported yet", info.name))),
        }
    }

    /// SOFA's `createMapping`: the state holding the contact points, created on first use. A
    /// dormant mapper comes back where a new one would be made: at the end of its anchor's
    /// subtree, with one point at the origin.
    fn create(&mut self, scene: &mut Scene) -> SimResult<StateId> {
        match self {
            Mapper::Identity { state, .. } => Ok(*state),
            Mapper::Barycentric { created: Some((s, map)), anchor, dormant, .. } | Mapper::Rigid { created: Some((s, map)), anchor, dormant, .. }
                if *dormant =>
            {
                *dormant = false;
                scene.store.get_mut(*s).resize(1);
                scene.contacts.add_mapper(*anchor, *map);
                Ok(*s)
            }
            Mapper::Barycentric { created: Some((s, _)), .. } | Mapper::Rigid { created: Some((s, _)), .. } => Ok(*s),
            Mapper::Rigid { input, anchor, created, .. } => {
                let (s, map) = new_contact_mapper(scene, *anchor, *input, None)?;
                *created = Some((s, map));
                Ok(s)
            }
            Mapper::Barycentric { input, anchor, topology, created, .. } => {
                let (s, map) = new_contact_mapper(scene, *anchor, *input, Some(*topology))?;
                *created = Some((s, map));
                Ok(s)
            }
        }
    }

    /// SOFA's `resize`: removes the previous points and sizes the state for `n`.
    fn resize(&mut self, scene: &mut Scene, n: usize) {
        if let Mapper::Barycentric { created: Some((s, map)), .. } | Mapper::Rigid { created: Some((s, map)), .. } = self {
            if let Some(pm) = scene.role_mut::<dyn PointMapper>(*map) {
                pm.clear_points();
            }
            scene.store.get_mut(*s).resize(n);
        }
    }

    /// SOFA's `addPoint`: places the contact point `p` of element `elem`; returns its index in
    /// the state and the radius it adds to the contact distance.
    fn add_point(&mut self, scene: &mut Scene, p: &Vec3, elem: usize) -> SimResult<(usize, f64)> {
        match self {
            Mapper::Identity { model, sphere, .. } => {
                let r = if *sphere { geometry_of(scene, *model).radius.get(elem).copied().unwrap_or(0.0) } else { 0.0 };
                Ok((elem, r))
            }
            Mapper::Barycentric { model, created: Some((_, map)), .. } => {
                let point = barycentric_point(geometry_of(scene, *model), p, elem)?;
                let pm = scene.role_mut::<dyn PointMapper>(*map).ok_or_else(|| SimError::new("the contact mapping cannot place points"))?;
                let index = match point {
                    BaryPoint::Line(e, fx) => pm.add_point_in_line(e, fx)?,
                    BaryPoint::Triangle(t, fx, fy) => pm.add_point_in_triangle(t, fx, fy)?,
                    BaryPoint::Quad(q, fx, fy) => pm.add_point_in_quad(q, fx, fy)?,
                    BaryPoint::Tetrahedron(t, f) => pm.add_point_in_tetrahedron(t, f)?,
                };
                Ok((index, 0.0))
            }
            Mapper::Rigid { model, created: Some((_, map)), .. } => {
                let g = geometry_of(scene, *model);
                let (Some(c), Some(q), Some(&r)) = (g.x.get(elem), g.orientations.get(elem), g.radius.get(elem)) else {
                    return Err(SimError::new(format!("contact on sphere {elem} of '{}', which has {} spheres", g.name, g.len())));
                };
                // SOFA's `Quat::inverseRotate` of the point relative to the frame's origin.
                let cp = p - c;
                let local = quat_rotate([-q[0], -q[1], -q[2], q[3]], [cp[0], cp[1], cp[2]]);
                let pm = scene.role_mut::<dyn PointMapper>(*map).ok_or_else(|| SimError::new("the contact mapping cannot place points"))?;
                Ok((pm.add_point_on_frame(elem, local)?, r))
            }
            Mapper::Barycentric { created: None, .. } | Mapper::Rigid { created: None, .. } => {
                Err(SimError::new("contact points added before the mapper's state was created"))
            }
        }
    }

    /// SOFA's `update`: maps positions and velocities to the contact points.
    fn update(&mut self, scene: &mut Scene) -> SimResult {
        if let Mapper::Barycentric { created: Some((_, map)), .. } | Mapper::Rigid { created: Some((_, map)), .. } = self {
            apply_mapping(scene, *map, VecId::POSITION, VecId::VELOCITY)?;
        }
        Ok(())
    }

    /// The state holding the contact points, once created.
    fn state(&self) -> Option<StateId> {
        match self {
            Mapper::Identity { state, .. } => Some(*state),
            Mapper::Barycentric { created, .. } | Mapper::Rigid { created, .. } => created.map(|(s, _)| s),
        }
    }

    /// SOFA's `updateXfree`: maps the free positions and velocities to the contact points.
    fn update_xfree(&mut self, scene: &mut Scene) -> SimResult {
        if let Mapper::Barycentric { created: Some((_, map)), .. } | Mapper::Rigid { created: Some((_, map)), .. } = self {
            apply_mapping(scene, *map, VecId::FREE_POSITION, VecId::FREE_VELOCITY)?;
        }
        Ok(())
    }

    /// The pair ended: the mapping leaves the step's order and drops its points; it and its
    /// state (with their buffers) wait for the pair to collide again.
    fn retire(&mut self, scene: &mut Scene) {
        if let Mapper::Barycentric { created: Some((s, map)), dormant, .. } | Mapper::Rigid { created: Some((s, map)), dormant, .. } = self {
            scene.contacts.forget(*map);
            if let Some(pm) = scene.role_mut::<dyn PointMapper>(*map) {
                pm.clear_points();
            }
            let st = scene.store.get_mut(*s);
            st.resize(0);
            st.constraint.clear();
            *dormant = true;
        }
    }

    /// Whether a dormant mapping still fits its model: the same number of input DOFs and, for a
    /// barycentric one, the same elements (a topological change makes the pair's objects anew).
    fn still_fits(&self, scene: &Scene) -> bool {
        match self {
            Mapper::Identity { .. } | Mapper::Barycentric { created: None, .. } | Mapper::Rigid { created: None, .. } => true,
            Mapper::Barycentric { input, topology, created: Some((_, map)), .. } => {
                let Some(st) = scene.store.states.get(*input) else { return false };
                let Some(mesh) = topology.or_else(|| scene.context_topology(st.node)).and_then(|t| scene.mesh_of(t)) else { return false };
                scene
                    .components
                    .get(*map)
                    .and_then(|e| e.obj.as_ref())
                    .and_then(|o| o.as_any().downcast_ref::<BarycentricMapping>())
                    .is_some_and(|m| m.places_on(st.size, mesh))
            }
            Mapper::Rigid { input, created: Some((_, map)), .. } => {
                let Some(st) = scene.store.states.get(*input) else { return false };
                scene
                    .components
                    .get(*map)
                    .and_then(|e| e.obj.as_ref())
                    .and_then(|o| o.as_any().downcast_ref::<RigidMapping>())
                    .is_some_and(|m| m.has_inputs(st.size))
            }
        }
    }

    /// SOFA's `cleanup`: the mapping and its state are destroyed.
    fn cleanup(&mut self, scene: &mut Scene) {
        if let Mapper::Barycentric { created, dormant, .. } | Mapper::Rigid { created, dormant, .. } = self {
            *dormant = false;
            if let Some((_, map)) = created.take() {
                destroy(scene, map);
            }
        }
    }
}

/// A contact mapper built in code: a Vec3d state, with no point yet, mapped from `input` by a
/// `BarycentricMapping` on the elements of `topology` (`Some`: the model's topology, else the
/// input's context topology) or, for `None`, a `RigidMapping`. The mapping owns the state and
/// sits at the end of `anchor`'s subtree in the step's order.
fn new_contact_mapper(scene: &mut Scene, anchor: NodeId, input: StateId, topology: Option<Option<ComponentId>>) -> SimResult<(StateId, ComponentId)> {
    let n_in = scene.store.get(input).size;
    let elements = match topology {
        Some(topology) => {
            let in_node = scene.store.get(input).node;
            let topo = topology.or_else(|| scene.context_topology(in_node)).ok_or_else(|| SimError::new("no topology to place contact points in"))?;
            Some(scene.mesh_of(topo).cloned().ok_or_else(|| SimError::new(format!("{} provides no mesh", scene.entry(topo).label())))?)
        }
        None => None,
    };
    // The state an empty Vec3d MechanicalObject gives: one DOF at the origin, at rest. Its
    // owner is the mapping, set once the mapping exists.
    let mut st = MState::new(Layout::Vec3, scene.store.get(input).owner, anchor, "contactPoints".to_string());
    st.resize(1);
    for id in [VecId::POSITION, VecId::VELOCITY, VecId::REST_POSITION] {
        st.set_vec(id, vec![0.0; 3]);
    }
    st.write(VecId::FORCE);
    st.write(VecId::DX);
    st.mapped = true;
    let s = scene.store.add(st);
    let (class, obj): (&'static ComponentClass, Box<dyn Component>) = match &elements {
        Some(mesh) => (BarycentricMapping::CLASSES[0], Box::new(BarycentricMapping::contact_points(input, s, n_in, mesh))),
        None => (RigidMapping::CLASSES[0], Box::new(RigidMapping::contact_points(input, s, n_in))),
    };
    let map = scene.insert_unattached(anchor, class, obj, Some(Layout::Vec3), "contactPoints");
    scene.store.get_mut(s).owner = map;
    let e = scene.entry_mut(map);
    e.state = Some(s);
    e.initialized = true;
    scene.contacts.add_mapper(anchor, map);
    Ok((s, map))
}

/// A contact point in an element of a line or triangle model.
enum BaryPoint {
    Line(usize, f64),
    Triangle(usize, f64, f64),
    Quad(usize, f64, f64),
    Tetrahedron(usize, [f64; 3]),
}

/// The barycentric coordinates SOFA's mesh-topology mapper gives point `p` of element `elem`
/// (`createPointInLine`, `createPointInTriangle`, `createPointInQuad`).
fn barycentric_point(g: &ModelGeometry, p: &Vec3, elem: usize) -> SimResult<BaryPoint> {
    let bad = || SimError::new(format!("contact on element {elem} of '{}', which has {} elements", g.name, g.len()));
    match g.kind {
        PrimitiveKind::Line => {
            let [a, b] = *g.edges.get(elem).ok_or_else(bad)?;
            let p0 = g.x[a];
            let pa = g.x[b] - p0;
            let pos = p - p0;
            let l2 = norm2(&pa);
            let fx = if l2 < f64::EPSILON { 0.0 } else { dot(&pos, &pa) / l2 };
            Ok(BaryPoint::Line(elem, fx))
        }
        PrimitiveKind::Triangle if elem < g.topology_triangles => {
            let [a, b, c] = *g.triangles.get(elem).ok_or_else(bad)?;
            let (fx, fy) = project_on_triangle(&g.x[a], &g.x[b], &g.x[c], p);
            Ok(BaryPoint::Triangle(elem, fx, fy))
        }
        PrimitiveKind::Triangle => {
            // Triangles 2q and 2q+1 after the topology's own are quad q split as
            // (q1, q2, q0) and (q3, q0, q2).
            let q = (elem - g.topology_triangles) / 2;
            let first = g.topology_triangles + 2 * q;
            let (t0, t1) = (g.triangles.get(first).ok_or_else(bad)?, g.triangles.get(first + 1).ok_or_else(bad)?);
            let (q0, q1, q3) = (g.x[t0[2]], g.x[t0[0]], g.x[t1[0]]);
            let pa = q1 - q0;
            let pb = q3 - q0;
            let pos = p - q0;
            // Coordinates on the dual basis of (q1 − q0, q3 − q0, their cross product).
            let n = cross(&pa, &pb);
            let mt = [[pa[0], pb[0], n[0]], [pa[1], pb[1], n[1]], [pa[2], pb[2], n[2]]];
            let base = invert3(&mt).ok_or_else(|| SimError::new(format!("degenerate quad {q} in the contact mapper of '{}'", g.name)))?;
            let b = mat3_mul(&base, &pos);
            Ok(BaryPoint::Quad(q, b[0], b[1]))
        }
        PrimitiveKind::Tetrahedron => {
            if elem >= g.tetrahedra.len() {
                return Err(bad());
            }
            // The tetrahedron's barycentric transform applied to P (SOFA's `Tetrahedron::getBary`).
            let (coord0, coord2bary) = crate::intersection::discrete::tetrahedron_coord2bary(g, elem);
            let b = mat3_mul(&coord2bary, &(p - coord0));
            Ok(BaryPoint::Tetrahedron(elem, [b[0], b[1], b[2]]))
        }
        k => Err(SimError::new(format!("no barycentric contact mapper for {k:?} models"))),
    }
}

/// SOFA's closest-point projection of `q` on triangle (a, b, c) as barycentric coordinates on b
/// and c (`createPointInTriangle`).
fn project_on_triangle(a: &Vec3, b: &Vec3, c: &Vec3, q: &Vec3) -> (f64, f64) {
    let ab = b - a;
    let ac = c - a;
    let aq = q - a;
    let a00 = dot(&ab, &ab);
    let a11 = dot(&ac, &ac);
    let a01 = dot(&ab, &ac);
    let b0 = dot(&aq, &ab);
    let b1 = dot(&aq, &ac);
    let det = a00 * a11 - a01 * a01;
    let mut fx = (b0 * a11 - b1 * a01) / det;
    let mut fy = (b1 * a00 - b0 * a01) / det;
    if fx < 0.0 || fy < 0.0 || fx + fy > 1.0 {
        let p_ab = b0 / a00;
        let p_ac = b1 / a11;
        if p_ab < 0.0 && p_ac < 0.0 {
            (fx, fy) = (0.0, 0.0);
        } else if p_ab < 1.0 && fy < 0.0 {
            (fx, fy) = (p_ab, 0.0);
        } else if p_ac < 1.0 && fx < 0.0 {
            (fx, fy) = (0.0, p_ac);
        } else {
            let p_bc = (b1 - b0 + a00 - a01) / (a00 + a11 - 2.0 * a01);
            (fx, fy) = if p_bc < 0.0 {
                (1.0, 0.0)
            } else if p_bc > 1.0 {
                (0.0, 1.0)
            } else {
                (1.0 - p_bc, p_bc)
            };
        }
    }
    (fx, fy)
}

// ----- the penalty response -----------------------------------------------------------------------

/// SOFA's `BarycentricPenalityContact`: the penalty response of one pair of models.
#[derive(Clone)]
struct PenaltyResponse {
    models: (ComponentId, ComponentId),
    name: String,
    mappers: (Mapper, Mapper),
    force_field: Option<ComponentId>,
    /// Contact id → its 1-based position in the force field's list of the last step (while a
    /// step is processed: −1 − its output index). SOFA keeps a `std::map`; only lookups by id
    /// and element-wise updates are made, never an ordered walk, so a hash map gives the same
    /// results in constant time per contact.
    contact_index: HashMap<i64, i64, IdHasher>,
    /// Per-output scratch of `set_detection_outputs` (previous position, new position).
    old: Vec<i64>,
    new_index: Vec<i64>,
}

/// Hasher of contact ids (integers): a multiplicative hash whose high bits are folded down.
#[derive(Clone, Copy, Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        let h = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x100_0000_01B3);
        }
    }

    fn write_i64(&mut self, i: i64) {
        self.0 ^= i as u64;
    }
}

impl std::hash::BuildHasher for IdHasher {
    type Hasher = IdHasher;

    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

impl PenaltyResponse {
    fn new(scene: &Scene, m1: ComponentId, m2: ComponentId) -> SimResult<PenaltyResponse> {
        let (i1, i2) = (model_info(scene, m1)?, model_info(scene, m2)?);
        Ok(PenaltyResponse {
            models: (m1, m2),
            name: format!("{}-{}", i1.name, i2.name),
            mappers: (Mapper::for_model(m1, &i1)?, Mapper::for_model(m2, &i2)?),
            force_field: None,
            contact_index: HashMap::default(),
            old: Vec::new(),
            new_index: Vec::new(),
        })
    }

    /// SOFA's `setDetectionOutputs` (spec §9.5): merges outputs with equal ids (the smallest
    /// value wins), places the contact points and sets the force field's contacts.
    fn set_detection_outputs(&mut self, scene: &mut Scene, outputs: &[DetectionOutput], intersection_contact: f64) -> SimResult {
        // The mappers first: made on first use, or back in the step's order after a retirement.
        let s1 = self.mappers.0.create(scene)?;
        let s2 = self.mappers.1.create(scene)?;
        let ff = match self.force_field {
            Some(ff) => ff,
            None => {
                let ff = scene.insert_unattached(
                    Scene::ROOT,
                    PenalityContactForceField::CLASSES[0],
                    Box::new(PenalityContactForceField::between(s1, s2)),
                    Some(Layout::Vec3),
                    &self.name,
                );
                let (o1, o2) = (scene.store.get(s1).owner, scene.store.get(s2).owner);
                // The force field carries the tags of both contact-point states (SOFA's
                // `setInteractionTags`), for tag-filtered solvers and visitors.
                let mut tags: Vec<String> = Vec::new();
                for o in [o1, o2] {
                    for tag in scene.entry(o).data.get(BaseData::TAGS) {
                        if !tags.contains(tag) {
                            tags.push(tag.clone());
                        }
                    }
                }
                scene.entry_mut(ff).data.put(BaseData::TAGS, tags);
                settee_core::simulation::init_components(scene, &[ff])?;
                self.force_field = Some(ff);
                ff
            }
        };

        // 1. Merge duplicates, keeping the earlier of equal values.
        let n = outputs.len();
        let old = &mut self.old;
        old.clear();
        old.resize(n, 0);
        for i in 0..n {
            let index = self.contact_index.entry(outputs[i].id).or_insert(0);
            if *index < 0 {
                let i2 = (-1 - *index) as usize;
                if outputs[i2].value <= outputs[i].value {
                    old[i] = -1;
                    continue;
                }
                old[i] = old[i2];
                old[i2] = -1;
            } else {
                old[i] = *index;
            }
            *index = -1 - i as i64;
        }
        // 2. Survivors are numbered 1..m in output order.
        let new_index = &mut self.new_index;
        new_index.clear();
        new_index.resize(n, 0);
        let mut size = 0;
        for i in 0..n {
            if old[i] >= 0 {
                size += 1;
                new_index[i] = size;
            }
        }
        // 3. Ids not met this step are forgotten; the others remember their new position.
        self.contact_index.retain(|_, index| *index < 0);
        for index in self.contact_index.values_mut() {
            *index = new_index[(-1 - *index) as usize];
        }

        let size = size as usize;
        penalty_ff(scene, ff).clear(size);
        self.mappers.0.resize(scene, size);
        self.mappers.1.resize(scene, size);
        let ((distance1, stiffness1), (distance2, stiffness2)) = (contact_law_of(scene, self.models.0)?, contact_law_of(scene, self.models.1)?);
        let d0 = intersection_contact + distance1 + distance2;
        for (i, o) in outputs.iter().enumerate() {
            if old[i] < 0 {
                continue;
            }
            let (e1, e2) = o.elem;
            let (j1, r1) = self.mappers.0.add_point(scene, &o.point[0], e1)?;
            let (j2, r2) = self.mappers.1.add_point(scene, &o.point[1], e2)?;
            let distance = d0 + r1 + r2;
            let mut stiffness = stiffness1 * stiffness2;
            if distance != 0.0 {
                stiffness /= distance;
            }
            penalty_ff(scene, ff).add_contact(j1, j2, e1, e2, o.normal, distance, stiffness, old[i] as usize);
        }
        self.mappers.0.update(scene)?;
        self.mappers.1.update(scene)
    }

    /// SOFA's `createResponse`: the force field acts after the objects of `node` this step.
    fn attach(&mut self, scene: &mut Scene, owner: ComponentId, node: NodeId) {
        if let Some(ff) = self.force_field {
            attach(scene, owner, node, ff);
        }
    }

    /// The pair ended: its force field and mappers wait, emptied, for the pair to collide again
    /// (SOFA makes them anew; these give the same numbers without the allocations).
    fn retire(&mut self, scene: &mut Scene) {
        if let Some(ff) = self.force_field {
            penalty_ff(scene, ff).forget_contacts();
        }
        self.contact_index.clear();
        self.mappers.0.retire(scene);
        self.mappers.1.retire(scene);
    }

    /// SOFA's `cleanup`: destroys the force field and the mappers.
    fn cleanup(&mut self, scene: &mut Scene) {
        if let Some(ff) = self.force_field.take() {
            destroy(scene, ff);
        }
        self.mappers.0.cleanup(scene);
        self.mappers.1.cleanup(scene);
    }
}

/// What a Lagrangian response puts between its two contact-point states.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LagrangianLaw {
    /// SOFA's `FrictionContact` (`FrictionContactConstraint`, lagrangian-constraints spec §6.3):
    /// an `UnilateralLagrangianConstraint` with Coulomb friction, refilled every step.
    Friction { mu: f64, tol: f64 },
    /// SOFA's `StickContactConstraint` (spec §6.5): a `BilateralLagrangianConstraint` gluing each
    /// pair of detected points with their detected offset. With `keep_alive` the contact outlives
    /// the collision: when the pair has no outputs, the glue of its last contacts stays.
    Stick { keep_alive: bool },
}

impl LagrangianLaw {
    /// The law of a Lagrangian response class with SOFA's default Data; `None` for other classes.
    fn for_response(class: &str) -> Option<LagrangianLaw> {
        match class {
            "FrictionContactConstraint" => Some(LagrangianLaw::Friction { mu: 0.8, tol: 0.0 }),
            "StickContactConstraint" => Some(LagrangianLaw::Stick { keep_alive: true }),
            _ => None,
        }
    }

    fn class(&self) -> &'static str {
        match self {
            LagrangianLaw::Friction { .. } => "FrictionContactConstraint",
            LagrangianLaw::Stick { .. } => "StickContactConstraint",
        }
    }

    /// The law with its `responseParams` (`name=value` separated by `&`) applied.
    fn with_params(mut self, params: &str) -> SimResult<LagrangianLaw> {
        let class = self.class();
        for token in params.split(['&', '?']).filter(|t| !t.is_empty()) {
            let (name, value) = token.split_once('=').unwrap_or((token, ""));
            let (name, value) = (name.trim(), value.trim());
            let number = || value.parse::<f64>().map_err(|_| SimError::new(format!("{class}: '{value}' is not a number (in \"{token}\")")));
            match (&mut self, name) {
                (LagrangianLaw::Friction { mu, .. }, "mu") => *mu = number()?,
                (LagrangianLaw::Friction { tol, .. }, "tol") => *tol = number()?,
                (LagrangianLaw::Stick { keep_alive }, "keepAlive") => {
                    *keep_alive = match value {
                        "1" | "true" => true,
                        "0" | "false" => false,
                        _ => {
                            return Err(SimError::new(format!("{class}: '{value}' is not a boolean (in \"{token}\")")).hint("use 1, 0, true or false"))
                        }
                    }
                }
                (law, other) => {
                    let known = if matches!(law, LagrangianLaw::Friction { .. }) { "mu and tol" } else { "keepAlive" };
                    return Err(SimError::new(format!("{class} has no Data '{other}' (in responseParams \"{params}\")"))
                        .hint(format!("its Data are {known}")));
                }
            }
        }
        Ok(self)
    }

    fn keep_alive(&self) -> bool {
        matches!(self, LagrangianLaw::Stick { keep_alive: true })
    }
}

/// A Lagrangian response of one pair of models: a constraint law between the two sides'
/// contact-point states, given one contact per kept detection output every step.
#[derive(Clone)]
struct LagrangianResponse {
    models: (ComponentId, ComponentId),
    name: String,
    mappers: (Mapper, Mapper),
    constraint: Option<ComponentId>,
    law: LagrangianLaw,
    /// The response's own id (SOFA's `ContactIdentifier`), part of the contacts' persistent ids.
    id: i64,
    /// Outputs kept by the deduplication of the last `set_detection_outputs`.
    kept: Vec<DetectionOutput>,
    /// The contacts handed to the constraint at every step (kept for its capacity).
    specs: Vec<ContactSpec>,
    intersection_contact: f64,
}

/// SOFA's threshold for duplicate outputs: the single-precision literal `1e-8f` widened.
const DUPLICATE_OUTPUT_DISTANCE2: f64 = 9.99999993922529e-09;

/// Cantor pairing of two non-negative ids (SOFA's `cantorPolynomia`), in 64-bit integers.
fn cantor(x: i64, y: i64) -> i64 {
    ((x + y) * (x + y) + 3 * x + y) / 2
}

/// Are two outputs the same contact (both points within 1e-4)?
fn duplicate_outputs(a: &DetectionOutput, b: &DetectionOutput) -> bool {
    norm2(&(a.point[0] - b.point[0])) + norm2(&(a.point[1] - b.point[1])) < DUPLICATE_OUTPUT_DISTANCE2
}

impl LagrangianResponse {
    fn new(scene: &Scene, m1: ComponentId, m2: ComponentId, law: LagrangianLaw, id: i64) -> SimResult<LagrangianResponse> {
        let (i1, i2) = (model_info(scene, m1)?, model_info(scene, m2)?);
        let mappers = (Mapper::for_model(m1, &i1)?, Mapper::for_model(m2, &i2)?);
        if matches!(law, LagrangianLaw::Stick { .. }) && [&mappers.0, &mappers.1].iter().any(|m| matches!(m, Mapper::Rigid { .. })) {
            // SOFA instantiates StickContactConstraint for Vec3 models only.
            return Err(SimError::new("StickContactConstraint has no response for rigid sphere models"));
        }
        Ok(LagrangianResponse {
            models: (m1, m2),
            name: format!("{}-{}", i1.name, i2.name),
            mappers,
            constraint: None,
            law,
            id,
            kept: Vec::new(),
            specs: Vec::new(),
            intersection_contact: 0.0,
        })
    }

    /// FrictionContact puts both sides' points in one state when a model collides with itself;
    /// StickContactConstraint always gives each side its own mapper.
    fn shared_mapper(&self) -> bool {
        self.models.0 == self.models.1 && matches!(self.law, LagrangianLaw::Friction { .. })
    }

    /// SOFA's `setDetectionOutputs`: outputs whose two points both repeat an earlier output's
    /// (within 1e-4) are dropped — FrictionContact compares with the kept outputs, Stick with
    /// all earlier ones; FrictionContact disables a pair with a zero contact stiffness.
    fn set_detection_outputs(&mut self, scene: &mut Scene, outputs: &[DetectionOutput], intersection_contact: f64) -> SimResult {
        self.kept.clear();
        self.intersection_contact = intersection_contact;
        match self.law {
            LagrangianLaw::Friction { .. } => {
                let ((_, stiffness1), (_, stiffness2)) = (contact_law_of(scene, self.models.0)?, contact_law_of(scene, self.models.1)?);
                if stiffness1 == 0.0 || stiffness2 == 0.0 {
                    scene.report(
                        Diagnostic::error("the contact is disabled: a collision model has contactStiffness 0")
                            .subject(format!("contact {}", self.name)),
                    );
                    return Ok(());
                }
                for o in outputs {
                    if !self.kept.iter().any(|k| duplicate_outputs(o, k)) {
                        self.kept.push(o.clone());
                    }
                }
            }
            LagrangianLaw::Stick { .. } => {
                for (i, o) in outputs.iter().enumerate() {
                    if !outputs[..i].iter().any(|k| duplicate_outputs(o, k)) {
                        self.kept.push(o.clone());
                    }
                }
            }
        }
        Ok(())
    }

    /// The constraint, created on first use between the two contact-point states.
    fn constraint(&mut self, scene: &mut Scene) -> SimResult<ComponentId> {
        // The mappers first: made on first use, or back in the step's order after a retirement.
        let s1 = self.mappers.0.create(scene)?;
        let s2 = if self.shared_mapper() { s1 } else { self.mappers.1.create(scene)? };
        if let Some(c) = self.constraint {
            return Ok(c);
        }
        let (class, law): (&'static ComponentClass, Box<dyn Component>) = match self.law {
            LagrangianLaw::Friction { .. } => (UnilateralLagrangianConstraint::CLASSES[0], Box::new(UnilateralLagrangianConstraint::between(s1, s2))),
            LagrangianLaw::Stick { .. } => {
                (BilateralLagrangianConstraint::CLASSES[0], Box::new(BilateralLagrangianConstraint::new(Layout::Vec3, s1, s2)?))
            }
        };
        let c = scene.insert_unattached(Scene::ROOT, class, law, Some(Layout::Vec3), &self.name);
        settee_core::simulation::init_components(scene, &[c])?;
        if let LagrangianLaw::Friction { tol, .. } = self.law {
            contact_constraint(scene, c)?.set_custom_tolerance(tol);
        }
        self.constraint = Some(c);
        Ok(c)
    }

    /// SOFA's `createResponse`: unless a kept-alive stick contact has no outputs (its constraint
    /// then stays as it was), places the contact points (`activateMappers`), maps the current
    /// and free states to them and fills the constraint; then it acts after the objects of
    /// `node` this step.
    fn attach(&mut self, scene: &mut Scene, owner: ComponentId, node: NodeId) -> SimResult {
        if self.kept.is_empty() && self.law.keep_alive() {
            if let Some(c) = self.constraint {
                attach(scene, owner, node, c);
            }
            return Ok(());
        }
        let c = self.constraint(scene)?;
        contact_constraint(scene, c)?.clear_contacts();
        let n = self.kept.len();
        let shared = self.shared_mapper();
        if shared {
            self.mappers.0.resize(scene, 2 * n);
        } else {
            self.mappers.0.resize(scene, n);
            self.mappers.1.resize(scene, n);
        }
        let ((distance1, _), (distance2, _)) = (contact_law_of(scene, self.models.0)?, contact_law_of(scene, self.models.1)?);
        let d0 = self.intersection_contact + distance1 + distance2;
        let mu = match self.law {
            LagrangianLaw::Friction { mu, .. } => mu,
            LagrangianLaw::Stick { .. } => 0.0,
        };
        let mut contacts = std::mem::take(&mut self.specs);
        contacts.clear();
        for o in &self.kept {
            let (e1, e2) = o.elem;
            let (j1, r1) = self.mappers.0.add_point(scene, &o.point[0], e1)?;
            let (j2, r2) =
                if shared { self.mappers.0.add_point(scene, &o.point[1], e2)? } else { self.mappers.1.add_point(scene, &o.point[1], e2)? };
            contacts.push(ContactSpec {
                mu,
                normal: [o.normal[0], o.normal[1], o.normal[2]],
                distance: d0 + r1 + r2,
                p: [o.point[0].x, o.point[0].y, o.point[0].z],
                q: [o.point[1].x, o.point[1].y, o.point[1].z],
                m1: j1,
                m2: j2,
                id: cantor(o.id, self.id),
                local_id: o.id,
            });
        }
        for m in [&mut self.mappers.0, &mut self.mappers.1] {
            m.update(scene)?;
            m.update_xfree(scene)?;
        }
        if matches!(self.law, LagrangianLaw::Friction { .. }) {
            // SOFA's unilateral `addContact` reads both points from the states' positions,
            // mapped just above; the bilateral one keeps the detected points.
            let (s1, s2) = (self.mappers.0.state(), if shared { self.mappers.0.state() } else { self.mappers.1.state() });
            for spec in &mut contacts {
                let point = |s: Option<StateId>, i: usize| -> [f64; 3] {
                    s.map(|s| scene.store.get(s).read(VecId::POSITION)).and_then(|x| x.get(3 * i..3 * i + 3)).map_or([0.0; 3], |v| [v[0], v[1], v[2]])
                };
                spec.p = point(s2, spec.m2);
                spec.q = point(s1, spec.m1);
            }
        }
        let law = contact_constraint(scene, c)?;
        for spec in contacts.drain(..) {
            law.add_contact(spec)?;
        }
        self.specs = contacts;
        attach(scene, owner, node, c);
        Ok(())
    }

    /// SOFA's `removeResponse` (the reset phase): the constraint stops acting until attached
    /// again; FrictionContact also drops its contact points.
    fn reset(&mut self, scene: &mut Scene) {
        if matches!(self.law, LagrangianLaw::Friction { .. }) {
            self.mappers.0.resize(scene, 0);
            self.mappers.1.resize(scene, 0);
        }
    }

    /// The pair ended: its constraint and mappers wait, emptied, for the pair to collide again;
    /// false when the constraint cannot be emptied (it is then destroyed).
    fn retire(&mut self, scene: &mut Scene) -> bool {
        if let Some(c) = self.constraint {
            if !contact_constraint(scene, c).is_ok_and(|law| law.forget_contacts()) {
                return false;
            }
        }
        self.kept.clear();
        self.mappers.0.retire(scene);
        self.mappers.1.retire(scene);
        true
    }

    fn cleanup(&mut self, scene: &mut Scene) {
        if let Some(c) = self.constraint.take() {
            destroy(scene, c);
        }
        self.mappers.0.cleanup(scene);
        self.mappers.1.cleanup(scene);
    }
}

fn contact_constraint(scene: &mut Scene, c: ComponentId) -> SimResult<&mut (dyn ContactConstraint + 'static)> {
    scene.role_mut::<dyn ContactConstraint>(c).ok_or_else(|| SimError::new("the contact's constraint does not take contacts"))
}

/// The response object of a pair of models.
#[derive(Clone)]
enum Response {
    Penalty(PenaltyResponse),
    Lagrangian(LagrangianResponse),
}

impl Response {
    /// Does the response outlive its pair's collision (StickContactConstraint's `keepAlive`)?
    fn keep_alive(&self) -> bool {
        matches!(self, Response::Lagrangian(r) if r.law.keep_alive())
    }
    fn models(&self) -> (ComponentId, ComponentId) {
        match self {
            Response::Penalty(r) => r.models,
            Response::Lagrangian(r) => r.models,
        }
    }
    fn set_detection_outputs(&mut self, scene: &mut Scene, outputs: &[DetectionOutput], intersection_contact: f64) -> SimResult {
        match self {
            Response::Penalty(r) => r.set_detection_outputs(scene, outputs, intersection_contact),
            Response::Lagrangian(r) => r.set_detection_outputs(scene, outputs, intersection_contact),
        }
    }
    fn attach(&mut self, scene: &mut Scene, owner: ComponentId, node: NodeId) -> SimResult {
        match self {
            Response::Penalty(r) => {
                r.attach(scene, owner, node);
                Ok(())
            }
            Response::Lagrangian(r) => r.attach(scene, owner, node),
        }
    }
    /// The reset phase: the response's objects stop acting until attached again.
    fn reset(&mut self, scene: &mut Scene) {
        if let Response::Lagrangian(r) = self {
            r.reset(scene);
        }
    }
    fn cleanup(&mut self, scene: &mut Scene) {
        match self {
            Response::Penalty(r) => r.cleanup(scene),
            Response::Lagrangian(r) => r.cleanup(scene),
        }
    }
    /// The pair ended: the response keeps its objects, emptied and out of the step's order, for
    /// when the pair collides again; false when it cannot (then it must be cleaned up).
    fn retire(&mut self, scene: &mut Scene) -> bool {
        match self {
            Response::Penalty(r) => {
                r.retire(scene);
                true
            }
            Response::Lagrangian(r) => r.retire(scene),
        }
    }
    /// Whether a retired response can serve its pair again (its models' states and topologies
    /// are as they were).
    fn still_fits(&self, scene: &Scene) -> bool {
        let mappers = match self {
            Response::Penalty(r) => &r.mappers,
            Response::Lagrangian(r) => &r.mappers,
        };
        mappers.0.still_fits(scene) && mappers.1.still_fits(scene)
    }
}

/// A retired response waiting for its pair (`key`) to collide again with the same response
/// (`name`).
#[derive(Clone)]
struct Idle {
    key: (usize, usize),
    name: String,
    response: Response,
}

/// A contact object of a pair that ended: it leaves the step's order now, and the arena at the
/// next sync point (structural changes made while a stage walks the scene wait for it).
fn destroy(scene: &mut Scene, c: ComponentId) {
    scene.contacts.forget(c);
    scene.defer(Deferred::RemoveComponent(c));
}

/// A contact object acts after the objects of `node` in this step's order (its context becomes
/// that node's, as when SOFA adds it there).
fn attach(scene: &mut Scene, owner: ComponentId, node: NodeId, c: ComponentId) {
    scene.entry_mut(c).node = node;
    scene.contacts.attach(owner, node, c);
}

fn penalty_ff(scene: &mut Scene, ff: ComponentId) -> &mut PenalityContactForceField {
    scene.obj_mut(ff).as_any_mut().downcast_mut::<PenalityContactForceField>().expect("the penalty response's force field")
}

/// Can a FrictionContactConstraint be made for this pair of kinds (in detection order)? SOFA
/// registers `FrictionContact` for these (lagrangian-constraints spec §6.3).
fn friction_supports(k1: PrimitiveKind, k2: PrimitiveKind) -> bool {
    use PrimitiveKind::*;
    matches!(
        (k1, k2),
        (Point, Point)
            | (Line, Sphere)
            | (Line, Point)
            | (Line, Line)
            | (Triangle, Sphere)
            | (Triangle, Point)
            | (Triangle, Line)
            | (Triangle, Triangle)
            | (Sphere, Sphere)
            | (Sphere, Point)
            | (RigidSphere, RigidSphere)
            | (Sphere, RigidSphere)
            | (Line, RigidSphere)
            | (Triangle, RigidSphere)
            | (RigidSphere, Point)
    )
}

/// Can a penalty response be made for this pair of kinds (in detection order)? SOFA registers
/// `BarycentricPenalityContact` for these pairs (spec §9.3).
fn penalty_supports(k1: PrimitiveKind, k2: PrimitiveKind) -> bool {
    use PrimitiveKind::*;
    matches!(
        (k1, k2),
        (Sphere, Sphere)
            | (Sphere, RigidSphere)
            | (RigidSphere, RigidSphere)
            | (Sphere, Point)
            | (RigidSphere, Point)
            | (Point, Point)
            | (Line, Point)
            | (Line, Line)
            | (Line, Sphere)
            | (Line, RigidSphere)
            | (Triangle, Sphere)
            | (Triangle, RigidSphere)
            | (Triangle, Point)
            | (Triangle, Line)
            | (Triangle, Triangle)
            | (Tetrahedron, Sphere)
            | (Tetrahedron, Point)
            | (Tetrahedron, Line)
            | (Tetrahedron, Triangle)
            | (Tetrahedron, Tetrahedron)
    )
}

// ----- contact managers ---------------------------------------------------------------------------

/// One entry of the contact map.
#[derive(Clone)]
struct ContactEntry {
    key: (usize, usize),
    /// The response's name as the manager chose it (class and parameters).
    name: String,
    response: Option<Response>,
}

impl PairKeyed for ContactEntry {
    fn pair_key(&self) -> (usize, usize) {
        self.key
    }
}

/// A rule of RuleBasedContactManager: each side is a model name, `*`, or a collision group.
#[derive(Clone, Debug, PartialEq)]
enum RuleSide {
    Name(String),
    Group(i64),
}

/// `CollisionResponse` and `RuleBasedContactManager`.
#[component(
    roles = [ContactManager],
    data = {
        /// response created for colliding pairs: PenalityContactForceField, or
        /// FrictionContactConstraint / StickContactConstraint (Lagrangian, for
        /// FreeMotionAnimationLoop)
        response: Str,
        /// parameters of the responses, `name1=value1&name2=value2`
        responseParams: Str,
    },
    class(
        name = "CollisionResponse", module = "Sofa.Component.Collision.Response.Contact",
        description = "Contact manager: creates one response of the chosen kind per pair of colliding models and keeps it while they collide.",
        create = |_| ContactManagerComponent::new(false),
    ),
    class(
        name = "RuleBasedContactManager", module = "Sofa.Component.Collision.Response.Contact",
        description = "Contact manager choosing the response of each pair of models by rules on their names or collision groups.",
        create = |_| ContactManagerComponent::new(true),
        data = {
            /// rules `model1 model2 response` (a model by name, `*` for any, or a collision group
            /// number); the first match gives the response
            rules: Str,
            /// names of string Data to create; `$name$` in a response is replaced by its value
            variables: Str,
        },
    ),
)]
#[derive(Clone)]
pub struct ContactManagerComponent {
    rule_based: bool,
    response: String,
    params: String,
    /// `response?params`: the response of a pair that no rule or model overrides.
    base: String,
    rules: Vec<(RuleSide, RuleSide, String)>,
    variables: HashMap<String, String>,
    contacts: StableOrderMap<ContactEntry>,
    /// Responses of pairs that ended, kept for when they collide again.
    idle: Vec<Idle>,
    /// Failed creations per (response, kinds), to report each at most 10 times as SOFA does.
    failures: HashMap<String, u32>,
    /// Ids given to Lagrangian responses, in creation order.
    next_response_id: i64,
    /// Its own id: the owner of the contact objects it places in the scene's order.
    me: Option<ComponentId>,
    /// Buffers of `respond`, kept so that a step with the same contacts allocates nothing.
    scratch: RespondScratch,
}

/// The working lists of one `respond`, emptied and refilled at every step.
#[derive(Clone, Default)]
struct RespondScratch {
    live: Vec<(usize, usize)>,
    dead: Vec<ContactEntry>,
    deferred: Vec<(usize, usize)>,
    /// Contacts per collision model, sorted by model id before they are written.
    counts: Vec<(ComponentId, i64)>,
}

impl ContactManagerComponent {
    fn new(rule_based: bool) -> ContactManagerComponent {
        ContactManagerComponent {
            rule_based,
            response: String::new(),
            params: String::new(),
            base: String::new(),
            rules: Vec::new(),
            variables: HashMap::new(),
            contacts: StableOrderMap::new(),
            idle: Vec::new(),
            failures: HashMap::new(),
            next_response_id: 0,
            me: None,
            scratch: RespondScratch::default(),
        }
    }

    /// The response of a pair (spec §9.1, §9.2).
    fn resolve<'a>(&'a self, m1: &ModelView<'a>, m2: &ModelView<'a>) -> Cow<'a, str> {
        if self.rule_based {
            if !m1.contact_response.is_empty() {
                return Cow::Borrowed(m1.contact_response);
            }
            if !m2.contact_response.is_empty() {
                return Cow::Borrowed(m2.contact_response);
            }
            let side = |s: &RuleSide, m: &ModelView| match s {
                RuleSide::Name(n) => n == "*" || n == m.name,
                RuleSide::Group(g) => m.groups.binary_search(g).is_ok(),
            };
            for (a, b, r) in &self.rules {
                if (side(a, m1) && side(b, m2)) || (side(a, m2) && side(b, m1)) {
                    return self.substitute(r);
                }
            }
            return self.substitute(Self::combine(&self.base, m1, m2));
        }
        Cow::Borrowed(Self::combine(&self.base, m1, m2))
    }

    fn combine<'a>(base: &'a str, m1: &ModelView<'a>, m2: &ModelView<'a>) -> &'a str {
        match (m1.contact_response.is_empty(), m2.contact_response.is_empty()) {
            (true, true) => base,
            (true, false) => m2.contact_response,
            (false, true) => m1.contact_response,
            (false, false) if m1.contact_response == m2.contact_response => m1.contact_response,
            _ => base,
        }
    }

    /// `$name$` replaced by the value of variable `name`.
    fn substitute<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if !s.contains('$') {
            return Cow::Borrowed(s);
        }
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find('$') {
            out.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            match after.find('$') {
                Some(end) => {
                    out.push_str(self.variables.get(&after[..end]).map(|v| v.as_str()).unwrap_or(""));
                    rest = &after[end + 1..];
                }
                None => {
                    out.push_str(&rest[start..]);
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        Cow::Owned(out)
    }

    /// SOFA's `Contact::Create`: a response object for the pair, or why not.
    fn create(&mut self, scene: &Scene, name: &str, m1: ComponentId, m2: ComponentId) -> SimResult<Response> {
        let (class, params) = name.split_once('?').unwrap_or((name, ""));
        let (i1, i2) = (model_info(scene, m1)?, model_info(scene, m2)?);
        match class {
            "PenalityContactForceField" | "default" => {
                if !penalty_supports(i1.kind, i2.kind) {
                    return Err(SimError::new(format!("PenalityContactForceField has no response for a {:?}–{:?} pair", i1.kind, i2.kind)));
                }
                if !params.is_empty() {
                    return Err(SimError::new(format!("PenalityContactForceField has no parameter to set from \"{params}\"")));
                }
                PenaltyResponse::new(scene, m1, m2).map(Response::Penalty)
            }
            "FrictionContactConstraint" | "StickContactConstraint" => {
                // SOFA registers both for the same pairs, Stick for Vec3 models only.
                if !friction_supports(i1.kind, i2.kind) {
                    return Err(SimError::new(format!("{class} has no response for a {:?}–{:?} pair", i1.kind, i2.kind)));
                }
                let law = LagrangianLaw::for_response(class)
                    .ok_or_else(|| SimError::new(format!("{class} is not a Lagrangian response")))?
                    .with_params(params)?;
                let id = self.next_response_id;
                self.next_response_id += 1;
                LagrangianResponse::new(scene, m1, m2, law, id).map(Response::Lagrangian)
            }
            c if LAGRANGIAN_RESPONSES.contains(&c) => Err(SimError::unsupported(format!(
                "the {c} response is not supported yet (the Lagrangian responses Settee has are FrictionContactConstraint and StickContactConstraint)"
            ))),
            c => Err(SimError::unsupported(format!("the {c} response is not supported"))),
        }
    }
}

impl Component for ContactManagerComponent {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        let d = cx.data();
        self.response = d.get(Self::RESPONSE).trim().to_string();
        self.params = d.get(Self::RESPONSE_PARAMS).trim().to_string();
        self.base = if self.params.is_empty() { self.response.clone() } else { format!("{}?{}", self.response, self.params) };
        if self.rule_based {
            let words: Vec<String> = d.get(Self::RULES).split_whitespace().map(str::to_string).collect();
            // Triplets until the stream runs out; an incomplete one is dropped, as SOFA reads it.
            for w in words.chunks_exact(3) {
                let side = |s: &str| -> RuleSide {
                    if !s.is_empty() && s.chars().all(|c| c == '-' || c.is_ascii_digit()) {
                        RuleSide::Group(s.parse().unwrap_or(0))
                    } else {
                        RuleSide::Name(s.to_string())
                    }
                };
                self.rules.push((side(&w[0]), side(&w[1]), w[2].clone()));
            }
            for v in d.get(Self::VARIABLES).split_whitespace() {
                self.variables.insert(v.to_string(), String::new());
            }
        }
        if self.response.is_empty() {
            return Err(cx.error("no response method is set").hint(format!("set `response` to one of {}", RESPONSE_NAMES.join(", "))));
        }
        if !RESPONSE_NAMES.contains(&self.response.as_str()) {
            return Err(cx.error(format!("unknown response '{}'", self.response)).hint(format!("known responses: {}", RESPONSE_NAMES.join(", "))));
        }
        // Parameters of the scene-wide response are checked here, where the error has a place
        // in the scene file; a bad one would otherwise only be reported at each contact.
        if let Some(law) = LagrangianLaw::for_response(&self.response) {
            if let Err(e) = law.with_params(&self.params) {
                let err = cx.error(format!("responseParams: {}", e.0.message));
                return Err(match &e.0.hint {
                    Some(h) => err.hint(h.clone()),
                    None => err,
                });
            }
        }
        if LAGRANGIAN_RESPONSES.contains(&self.response.as_str()) && LagrangianLaw::for_response(&self.response).is_none() {
            return Err(SimError::unsupported(format!(
                "the {} response is not supported yet (the Lagrangian responses Settee has are FrictionContactConstraint and StickContactConstraint)",
                self.response
            )));
        }
        Ok(())
    }
}

impl ContactManager for ContactManagerComponent {
    fn lagrangian_response_for(&self, model_response: &str) -> Option<String> {
        let name = |r: &str| r.split('?').next().unwrap_or_default().trim().to_string();
        // What a pair with this model may get: its own response, else the manager's (a
        // rule-based manager's rules may give any of theirs); sure only when all are Lagrangian.
        let candidates: Vec<String> = if !model_response.is_empty() {
            vec![name(model_response)]
        } else if self.rule_based {
            self.rules.iter().map(|(_, _, r)| name(&self.substitute(r))).chain(std::iter::once(name(&self.substitute(&self.base)))).collect()
        } else {
            vec![name(&self.base)]
        };
        candidates.iter().all(|c| LAGRANGIAN_RESPONSES.contains(&c.as_str())).then(|| candidates[0].clone())
    }

    fn detach_responses(&mut self, scene: &mut Scene) -> SimResult {
        scene.contacts.begin_attach(self.me.expect("initialised"));
        for e in self.contacts.entries_mut() {
            if let Some(r) = &mut e.response {
                r.reset(scene);
            }
        }
        Ok(())
    }

    fn respond(&mut self, scene: &mut Scene, outputs: &[ContactOutputs], contact: f64, pipeline_node: NodeId) -> SimResult {
        let me = self.me.expect("initialised");
        // New or continuing contacts, in outputs-map order.
        for o in outputs {
            let (i, created) = self.contacts.insert(o.key, || ContactEntry { key: o.key, name: String::new(), response: None });
            if created {
                // The pair's response: the one it had when it last collided, if it ended with
                // the same name and still fits its models, else a new one.
                let pick = {
                    let (v1, v2) = (model_view(scene, o.model1)?, model_view(scene, o.model2)?);
                    let name = self.resolve(&v1, &v2);
                    (name != "nullptr").then(|| self.idle.iter().position(|d| d.key == o.key && d.name == name).ok_or_else(|| name.into_owned()))
                };
                let Some(pick) = pick else {
                    self.contacts.erase_where(|e| e.key == o.key, |_| {});
                    continue;
                };
                let name = match pick {
                    Ok(k) => {
                        let Idle { name, mut response, .. } = self.idle.swap_remove(k);
                        if response.still_fits(scene) {
                            if let Response::Lagrangian(r) = &mut response {
                                // A new contact in SOFA: the next id.
                                r.id = self.next_response_id;
                                self.next_response_id += 1;
                            }
                            let e = &mut self.contacts.entries_mut()[i];
                            e.name = name;
                            e.response = Some(response);
                            None
                        } else {
                            response.cleanup(scene);
                            Some(name)
                        }
                    }
                    Err(name) => Some(name),
                };
                if let Some(name) = name {
                    match self.create(scene, &name, o.model1, o.model2) {
                        Ok(r) => {
                            let e = &mut self.contacts.entries_mut()[i];
                            e.name = name;
                            e.response = Some(r);
                        }
                        Err(e) => {
                            let (m1, m2) = (model_info(scene, o.model1)?, model_info(scene, o.model2)?);
                            self.contacts.erase_where(|e| e.key == o.key, |_| {});
                            let what = format!("{name} {:?}-{:?}", m1.kind, m2.kind);
                            let count = self.failures.entry(what).or_insert(0);
                            if *count < 10 {
                                *count += 1;
                                let subject = format!("contact {}-{}", m1.name, m2.name);
                                if e.0.unsupported {
                                    return Err(e);
                                }
                                scene.report(Diagnostic::error(e.0.message.clone()).subject(subject));
                            }
                            continue;
                        }
                    }
                }
            }
            let i = self.contacts.position(o.key).expect("inserted above");
            let r = self.contacts.entries_mut()[i].response.as_mut().expect("a live contact has a response");
            r.set_detection_outputs(scene, o.outputs, contact)?;
        }
        // Contacts whose pair has no output this step end (their responses retire to the pool),
        // unless kept alive (StickContactConstraint's `keepAlive`): those keep their last
        // contacts.
        let mut sc = std::mem::take(&mut self.scratch);
        sc.live.clear();
        sc.live.extend(outputs.iter().map(|o| o.key));
        for e in self.contacts.entries_mut() {
            if !sc.live.contains(&e.key) {
                if let Some(r) = e.response.as_mut().filter(|r| r.keep_alive()) {
                    r.set_detection_outputs(scene, &[], contact)?;
                }
            }
        }
        let live = &sc.live;
        let dead = &mut sc.dead;
        self.contacts.erase_where(|e| !live.contains(&e.key) && !e.response.as_ref().is_some_and(Response::keep_alive), |e| dead.push(e));
        for e in sc.dead.drain(..) {
            if let Some(mut r) = e.response {
                r.reset(scene);
                if r.retire(scene) {
                    self.idle.push(Idle { key: e.key, name: e.name, response: r });
                } else {
                    r.cleanup(scene);
                }
            }
        }
        // Attach: contacts with an obstacle in the simulated model's node, the others after
        // them in the pipeline's node.
        sc.deferred.clear();
        sc.counts.clear();
        for e in self.contacts.entries_mut() {
            let Some(r) = &mut e.response else { continue };
            let models = r.models();
            let ((node1, simulated1), (node2, simulated2)) = (placement(scene, models.0)?, placement(scene, models.1)?);
            count_contact(&mut sc.counts, models.0);
            if models.1 != models.0 {
                count_contact(&mut sc.counts, models.1);
            }
            if !simulated1 {
                r.attach(scene, me, node2)?;
            } else if !simulated2 {
                r.attach(scene, me, node1)?;
            } else {
                sc.deferred.push(e.key);
            }
        }
        for &key in &sc.deferred {
            if let Some(i) = self.contacts.position(key) {
                if let Some(r) = &mut self.contacts.entries_mut()[i].response {
                    r.attach(scene, me, pipeline_node)?;
                }
            }
        }
        scene.contacts.end_attach();
        // Collision models of any class, in id order; those without the shared Data have no
        // count to show.
        sc.counts.sort_unstable_by_key(|&(m, _)| m);
        for &(m, n) in &sc.counts {
            let data = &mut scene.entry_mut(m).data;
            if data.has(CollisionModelData::NUMBER_OF_CONTACTS) {
                data.put(CollisionModelData::NUMBER_OF_CONTACTS, n);
            }
        }
        self.scratch = sc;
        Ok(())
    }
}

/// One more contact on collision model `m`.
fn count_contact(counts: &mut Vec<(ComponentId, i64)>, m: ComponentId) {
    match counts.iter_mut().find(|(id, _)| *id == m) {
        Some((_, n)) => *n += 1,
        None => counts.push((m, 1)),
    }
}

/// Registers the contact managers and the penalty force field.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<ContactManagerComponent>();
}
