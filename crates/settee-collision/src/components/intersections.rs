//! The intersection-method components (spec §7): their Data configure one of the methods of
//! [`crate::intersection`], which the pipelines borrow through the core's intersection role.

use settee_core::collision::{Aabb, DetectionOutput, IntersectionMethod, ModelGeometry, PairSupport, PrimitiveKind};
use settee_core::{component, data_group, Component, InitCtx, SimResult};

use crate::intersection::{DiscreteIntersection, LocalMinDistance, MinProximityIntersection, NewProximityIntersection};

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
}

/// Registers the intersection classes.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<IntersectionComponent>();
}
