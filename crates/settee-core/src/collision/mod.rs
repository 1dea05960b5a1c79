//! The collision interface shared by the components of the collision family: the geometry
//! snapshot a collision model gives detection ([`ModelGeometry`]), what detection produces
//! ([`DetectionOutput`]), the intersection-method interface, and vector kernels in SOFA's
//! operation order. The algorithms and components live in the `settee-collision` crate; the
//! types live here so that every role can name them (spec: `collision.md`).

pub mod geometry;
pub mod kernels;
pub mod output;

pub use geometry::{Aabb, ModelGeometry, PrimitiveKind, Sweep, Vec3};
pub use output::DetectionOutput;

use crate::diag::SimResult;
use crate::graph::role::RoleId;
use crate::graph::scene::Scene;

/// How an intersection method handles a pair of primitive kinds (SOFA's `IntersectorMap::get`,
/// spec §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairSupport {
    /// Registered for (k1, k2) (`swap` false) or for (k2, k1) (`swap` true): the pair is then
    /// tested in the registered order.
    Supported { swap: bool },
    /// Registered as ignored: no test, no warning.
    Ignored,
    /// Not registered: SOFA warns once and never tests the pair.
    Unknown,
}

/// An intersection method: the box test used while traversing bounding trees and the
/// primitive tests of every registered pair of kinds.
pub trait IntersectionMethod: Send + Sync {
    /// SOFA's class name, for messages.
    fn name(&self) -> &'static str;
    /// The method's own alarm distance (0 for DiscreteIntersection).
    fn alarm_distance(&self) -> f64;
    /// The method's own contact distance (0 for DiscreteIntersection).
    fn contact_distance(&self) -> f64;
    /// Box overlap test between a box of model `ga` and a box of model `gb`; `same_box` is true
    /// when both are the same element of the same tree (self-collision, spec §3.2).
    fn boxes_overlap(&self, a: &Aabb, ga: &ModelGeometry, b: &Aabb, gb: &ModelGeometry, same_box: bool) -> bool;
    /// Whether the primitive pair (k1, k2) is registered.
    fn support(&self, k1: PrimitiveKind, k2: PrimitiveKind) -> PairSupport;
    /// Tests element `e1` of `g1` against element `e2` of `g2` (already in registered order)
    /// and appends the outputs it finds; returns how many it appended. Pairs not registered in
    /// this order, and element indices out of range, give nothing. The geometries must pass
    /// [`ModelGeometry::validate`]. `g1` and `g2` are the same model exactly when they are the
    /// same reference.
    fn intersect(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize;
    /// What the models sweep for this method's tests (SOFA's `useContinuous` and
    /// `continuousIntersectionType`): nothing for the discrete and proximity methods. `dt` is
    /// the step of the pipeline's node.
    fn sweep(&self, _dt: f64) -> Sweep {
        Sweep::None
    }
}

/// A collision model component (SOFA's `CollisionModel`): the primitives of a mechanical state,
/// given to detection as a [`ModelGeometry`] snapshot.
pub trait CollisionModel {
    /// Refreshes the snapshot from the scene: positions (and the normals and flags derived
    /// from them) as they are now.
    fn update_geometry(&mut self, scene: &crate::Scene) -> crate::SimResult;
    /// The snapshot as of the last update.
    fn geometry(&self) -> &ModelGeometry;
    /// The mechanical state whose DOFs the primitives are made of.
    fn state(&self) -> Option<crate::StateId>;
    /// The topology the elements come from (line, triangle and tetrahedron models).
    fn topology(&self) -> Option<crate::ComponentId>;
    /// SOFA's `contactResponse`: the response this model asks for, or "" to leave it to the
    /// contact manager.
    fn contact_response(&self) -> &str;
    /// What the model sweeps from now on (continuous detection); the next
    /// [`CollisionModel::update_geometry`] fills [`ModelGeometry::x_end`] accordingly.
    fn set_sweep(&mut self, sweep: Sweep);
}

/// The detection outputs of one pair of collision models (in the pair order of the
/// intersection method), as the contact manager receives them.
#[derive(Clone)]
pub struct ContactOutputs<'a> {
    pub model1: crate::ComponentId,
    pub model2: crate::ComponentId,
    /// The models' positions in the pipeline's model list: their identity in the contact map
    /// (whose order, like the outputs map's, follows SOFA's stable pointer ids).
    pub key: (usize, usize),
    pub outputs: &'a [DetectionOutput],
}

/// A contact manager (SOFA's `ContactManager`): turns detection outputs into contact
/// responses attached to the scene, and keeps them from one step to the next.
pub trait ContactManager {
    /// The reset phase: detaches the responses attached at the last response phase.
    fn detach_responses(&mut self, scene: &mut crate::Scene) -> crate::SimResult;
    /// The response phase: creates, updates and removes contacts from this step's outputs
    /// (given in outputs-map order) and attaches their responses, those between two simulated
    /// models in `pipeline_node`. `contact_distance` is the intersection method's own.
    fn respond(
        &mut self,
        scene: &mut crate::Scene,
        outputs: &[ContactOutputs],
        contact_distance: f64,
        pipeline_node: crate::NodeId,
    ) -> crate::SimResult;
    /// The Lagrangian response (`FrictionContactConstraint`, …) that every contact of a
    /// collision model whose own `contactResponse` is `model_response` gets, when that is sure;
    /// `None` when its contacts may be penalty forces. Lets the scene checks warn about bodies
    /// whose contacts no constraint correction would apply.
    fn lagrangian_response_for(&self, _model_response: &str) -> Option<String> {
        None
    }
}

/// A mapping whose output points are placed while the scene runs (what SOFA's contact mappers
/// do with barycentric and rigid mappings). Indices are the output points' indices, in the
/// order of the calls; the caller resizes the output state to [`PointMapper::point_count`].
pub trait PointMapper {
    /// Called before `init` by whoever creates the mapping to place its points: the mapping then
    /// locates nothing at init and keeps its input topology's elements for the points to come
    /// (SOFA's contact mappers build their mapping on a mesh-topology mapper).
    fn points_placed_by_code(&mut self);
    /// Removes every output point.
    fn clear_points(&mut self);
    fn point_count(&self) -> usize;
    /// A point on edge `edge` of the input topology, at `fx` from its first vertex.
    fn add_point_in_line(&mut self, _edge: usize, _fx: f64) -> crate::SimResult<usize> {
        Err(crate::SimError::unsupported("this mapping cannot map points in edges"))
    }
    /// A point of triangle `triangle` with barycentric coordinates `(fx, fy)` on its second and
    /// third vertices.
    fn add_point_in_triangle(&mut self, _triangle: usize, _fx: f64, _fy: f64) -> crate::SimResult<usize> {
        Err(crate::SimError::unsupported("this mapping cannot map points in triangles"))
    }
    /// A point of quad `quad` with bilinear coordinates `(fx, fy)`.
    fn add_point_in_quad(&mut self, _quad: usize, _fx: f64, _fy: f64) -> crate::SimResult<usize> {
        Err(crate::SimError::unsupported("this mapping cannot map points in quads"))
    }
    /// A point of tetrahedron `tetra` with barycentric coordinates `f` on its last three vertices.
    fn add_point_in_tetrahedron(&mut self, _tetra: usize, _f: [f64; 3]) -> crate::SimResult<usize> {
        Err(crate::SimError::unsupported("this mapping cannot map points in tetrahedra"))
    }
    /// A point fixed in frame `frame` at local coordinates `local`.
    fn add_point_on_frame(&mut self, _frame: usize, _local: [f64; 3]) -> crate::SimResult<usize> {
        Err(crate::SimError::unsupported("this mapping cannot map points attached to frames"))
    }
}

/// A collision pipeline (SOFA's `Pipeline`): the three collision phases of its node, run in
/// this order by [`crate::simulation::collision`]. `me` is the pipeline's own id (it is taken out
/// of the scene while it runs).
pub trait CollisionPipeline {
    /// Detaches last step's contact responses from the scene.
    fn reset(&mut self, scene: &mut Scene, me: crate::ComponentId) -> SimResult;
    /// Bounding trees, broad phase, narrow phase.
    fn detect(&mut self, scene: &mut Scene, me: crate::ComponentId) -> SimResult;
    /// Creates, updates or removes contact responses and attaches them to the scene.
    fn respond(&mut self, scene: &mut Scene, me: crate::ComponentId) -> SimResult;
    /// Detection while `during` works on the scene (SOFA's
    /// `parallelCollisionDetectionAndFreeMotion`): `during` must leave what detection reads (the
    /// collision models, their positions, the intersection method) unchanged. By default the
    /// detection runs first, then `during`; a pipeline may run both at once, with the same results.
    fn detect_during(&mut self, scene: &mut Scene, me: crate::ComponentId, during: &mut dyn FnMut(&mut Scene) -> SimResult) -> SimResult {
        self.detect(scene, me)?;
        during(scene)
    }
}

pub const COLLISION_PIPELINE: RoleId = RoleId::of::<dyn CollisionPipeline>("CollisionPipeline");
pub const COLLISION_MODEL: RoleId = RoleId::of::<dyn CollisionModel>("CollisionModel");
pub const INTERSECTION: RoleId = RoleId::of::<dyn IntersectionMethod>("IntersectionMethod");
pub const CONTACT_MANAGER: RoleId = RoleId::of::<dyn ContactManager>("ContactManager");
pub const POINT_MAPPER: RoleId = RoleId::of::<dyn PointMapper>("PointMapper");
