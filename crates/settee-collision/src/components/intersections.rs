//! The intersection-method components (spec §7): their Data configure one of the methods of
//! [`crate::intersection`], which the pipelines borrow through the core's intersection role.

use settee_core::collision::{Aabb, DetectionOutput, IntersectionMethod, ModelGeometry, PairSupport, PrimitiveKind};
use settee_core::{component, data_group, Component, InitCtx, SimResult};

use crate::intersection::{CcdIntersection, DiscreteIntersection, LocalMinDistance, MinProximityIntersection, NewProximityIntersection, SweepKind};

/// Data of the proximity methods (SOFA's `BaseProximityIntersection`).
#[data_group(data = {
    /// pairs farther apart than this (plus skins and radii) produce no output
    alarmDistance: Real = "1",
    /// the gap at which contacts act: subtracted from the distance of each output
    contactDistance: Real = "0.5",
})]
pub struct ProximityData;

#[derive(Clone)]
enum Method {
    Discrete(DiscreteIntersection),
    MinProximity(MinProximityIntersection),
    NewProximity(NewProximityIntersection),
    LocalMin(LocalMinDistance),
    Ccd(CcdIntersection),
}

/// An intersection method component: one struct for every class, whose Data configure the
/// method of its class.
#[component(
    roles = [IntersectionMethod],
    class(
        name = "DiscreteIntersection", module = "Sofa.Component.Collision.Detection.Intersection",
        description = "Exact intersection tests (sphere pairs, Triangle–Line, Tetrahedron–Point), no alarm distance.",
        create = |_| IntersectionComponent { method: Method::Discrete(Default::default()) },
    ),
    class(
        name = "MinProximityIntersection", module = "Sofa.Component.Collision.Detection.Intersection",
        description = "Proximity tests between the closest points of primitives (Triangle–Point, Line–Line, Line–Point, Point–Point, spheres).",
        create = |_| IntersectionComponent { method: Method::MinProximity(Default::default()) },
        inherit = [ProximityData, Self],
        data = {
            /// test spheres against triangles, lines and points
            useSphereTriangle: Bool = "true",
            /// test point pairs
            usePointPoint: Bool = "true",
            /// give Triangle–Point contacts the triangle's normal
            useSurfaceNormals: Bool = "false",
            /// test line–point pairs
            useLinePoint: Bool = "true",
            /// test line pairs
            useLineLine: Bool = "true",
        },
    ),
    class(
        name = "NewProximityIntersection", module = "Sofa.Component.Collision.Detection.Intersection",
        description = "Proximity tests with element ownership flags, including Triangle–Triangle and Triangle–Line.",
        create = |_| IntersectionComponent { method: Method::NewProximity(Default::default()) },
        inherit = [ProximityData, Self],
        data = {
            /// add edge–edge tests inside Triangle–Line and Triangle–Triangle pairs
            useLineLine: Bool = "false",
        },
    ),
    class(
        name = "LocalMinDistance", module = "Sofa.Component.Collision.Detection.Intersection",
        description = "Proximity tests keeping local minima of the distance only (cone filters from the neighbouring geometry).",
        create = |_| IntersectionComponent { method: Method::LocalMin(Default::default()) },
        inherit = [ProximityData, Self],
        data = {
            /// apply the local cone filters
            filterIntersection: Bool = "true",
            /// extra width of the filter cones (as a cosine offset)
            angleCone: Real = "0",
            /// scale of the cones computed from the neighbouring geometry
            coneFactor: Real = "0.5",
            /// use the legacy external filters, i.e. skip the cone filters
            useLMDFilters: Bool = "false",
        },
    ),
    class(
        name = "CCDTightInclusionIntersection", module = "Sofa.Component.Collision.Detection.Intersection",
        description = "Continuous collision detection (Tight Inclusion): Triangle–Point and Line–Line pairs tested over the step's motion, from the positions to the free-motion positions (FreeMotion) or along the velocities (Inertia).",
        create = |_| IntersectionComponent { method: Method::Ccd(Default::default()) },
        inherit = [ProximityData, Self],
        data = {
            /// what the primitives sweep during a step: None (tested at rest), Inertia (x to x + v·dt) or FreeMotion (x to the free-motion position)
            continuousCollisionType: Options("None", "Inertia", "FreeMotion") = "None",
            /// tolerance on the distance of the inclusion-based root finder
            tolerance: Real = "1e-10",
            /// boxes the root finder examines before answering "collides" conservatively (≤ 0: no limit)
            maxIterations: Int = "1000",
        },
    ),
)]
#[derive(Clone)]
pub struct IntersectionComponent {
    method: Method,
}

impl Component for IntersectionComponent {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        match &mut self.method {
            Method::Discrete(_) => {}
            Method::MinProximity(m) => {
                m.alarm_distance = d.get(ProximityData::ALARM_DISTANCE);
                m.contact_distance = d.get(ProximityData::CONTACT_DISTANCE);
                m.use_sphere_triangle = d.get(Self::USE_SPHERE_TRIANGLE);
                m.use_point_point = d.get(Self::USE_POINT_POINT);
                m.use_surface_normals = d.get(Self::USE_SURFACE_NORMALS);
                m.use_line_point = d.get(Self::USE_LINE_POINT);
                m.use_line_line = d.get(Self::USE_LINE_LINE);
            }
            Method::NewProximity(m) => {
                m.alarm_distance = d.get(ProximityData::ALARM_DISTANCE);
                m.contact_distance = d.get(ProximityData::CONTACT_DISTANCE);
                m.use_line_line = d.get(Self::USE_LINE_LINE);
            }
            Method::LocalMin(m) => {
                m.alarm_distance = d.get(ProximityData::ALARM_DISTANCE);
                m.contact_distance = d.get(ProximityData::CONTACT_DISTANCE);
                m.filter_intersection = d.get(Self::FILTER_INTERSECTION);
                m.angle_cone = d.get(Self::ANGLE_CONE);
                m.cone_factor = d.get(Self::CONE_FACTOR);
                m.use_lmd_filters = d.get(Self::USE_LMD_FILTERS);
            }
            Method::Ccd(m) => {
                m.alarm_distance = d.get(ProximityData::ALARM_DISTANCE);
                m.contact_distance = d.get(ProximityData::CONTACT_DISTANCE);
                m.sweep_kind = match d.get(Self::CONTINUOUS_COLLISION_TYPE) {
                    "Inertia" => SweepKind::Inertia,
                    "FreeMotion" => SweepKind::FreeMotion,
                    _ => SweepKind::None,
                };
                m.tolerance = d.get(Self::TOLERANCE);
                m.max_iterations = d.get(Self::MAX_ITERATIONS);
            }
        }
        Ok(())
    }
}

impl IntersectionComponent {
    /// The configured method.
    fn method(&self) -> &dyn IntersectionMethod {
        match &self.method {
            Method::Discrete(m) => m,
            Method::MinProximity(m) => m,
            Method::NewProximity(m) => m,
            Method::LocalMin(m) => m,
            Method::Ccd(m) => m,
        }
    }
}

/// The component is its method.
impl IntersectionMethod for IntersectionComponent {
    fn name(&self) -> &'static str {
        self.method().name()
    }
    fn alarm_distance(&self) -> f64 {
        self.method().alarm_distance()
    }
    fn contact_distance(&self) -> f64 {
        self.method().contact_distance()
    }
    fn boxes_overlap(&self, a: &Aabb, ga: &ModelGeometry, b: &Aabb, gb: &ModelGeometry, same_box: bool) -> bool {
        self.method().boxes_overlap(a, ga, b, gb, same_box)
    }
    fn support(&self, k1: PrimitiveKind, k2: PrimitiveKind) -> PairSupport {
        self.method().support(k1, k2)
    }
    fn intersect(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        self.method().intersect(g1, e1, g2, e2, out)
    }
    fn sweep(&self, dt: f64) -> settee_core::collision::Sweep {
        self.method().sweep(dt)
    }
}

/// Registers the intersection classes.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<IntersectionComponent>();
}
