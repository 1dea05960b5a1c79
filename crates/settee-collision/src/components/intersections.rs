//! The intersection-method components (spec §7): their Data configure one of the methods of
//! [`crate::intersection`], which the pipelines borrow through the core's intersection role.

use settee_core::collision::IntersectionMethod;
use settee_core::data::{decl, DataKind::*};
use settee_core::{component_any, Component, ComponentClass, CreateArgs, DataDecl, InitCtx, Roles, SimResult, TemplateRule};

use crate::intersection::{DiscreteIntersection, LocalMinDistance, MinProximityIntersection, NewProximityIntersection};

/// Data of the proximity methods (SOFA's `BaseProximityIntersection`).
static PROXIMITY_DATA: &[DataDecl] = &[
    decl("alarmDistance", Real, "1", "pairs farther apart than this (plus skins and radii) produce no output"),
    decl("contactDistance", Real, "0.5", "the gap at which contacts act: subtracted from the distance of each output"),
];

static MIN_PROXIMITY_DATA: &[DataDecl] = &[
    decl("useSphereTriangle", Bool, "true", "test spheres against triangles, lines and points"),
    decl("usePointPoint", Bool, "true", "test point pairs"),
    decl("useSurfaceNormals", Bool, "false", "give Triangle–Point contacts the triangle's normal"),
    decl("useLinePoint", Bool, "true", "test line–point pairs"),
    decl("useLineLine", Bool, "true", "test line pairs"),
];

static NEW_PROXIMITY_DATA: &[DataDecl] =
    &[decl("useLineLine", Bool, "false", "add edge–edge tests inside Triangle–Line and Triangle–Triangle pairs")];

static LOCAL_MIN_DISTANCE_DATA: &[DataDecl] = &[
    decl("filterIntersection", Bool, "true", "apply the local cone filters"),
    decl("angleCone", Real, "0", "extra width of the filter cones (as a cosine offset)"),
    decl("coneFactor", Real, "0.5", "scale of the cones computed from the neighbouring geometry"),
    decl("useLMDFilters", Bool, "false", "use the legacy external filters, i.e. skip the cone filters"),
];

settee_core::data_refs! {
    static PROXIMITY_READS;
    ALARM: Real = "alarmDistance";
    CONTACT: Real = "contactDistance";
}

settee_core::data_refs! {
    static MIN_READS;
    USE_SPHERE_TRIANGLE: Bool = "useSphereTriangle";
    USE_POINT_POINT: Bool = "usePointPoint";
    USE_SURFACE_NORMALS: Bool = "useSurfaceNormals";
    USE_LINE_POINT: Bool = "useLinePoint";
    USE_LINE_LINE: Bool = "useLineLine";
}

settee_core::data_refs! {
    static LMD_READS;
    FILTER_INTERSECTION: Bool = "filterIntersection";
    ANGLE_CONE: Real = "angleCone";
    CONE_FACTOR: Real = "coneFactor";
    USE_LMD_FILTERS: Bool = "useLMDFilters";
}

static MIN_ALL: &[settee_core::DataUse] = &[
    ALARM.erased(),
    CONTACT.erased(),
    USE_SPHERE_TRIANGLE.erased(),
    USE_POINT_POINT.erased(),
    USE_SURFACE_NORMALS.erased(),
    USE_LINE_POINT.erased(),
    USE_LINE_LINE.erased(),
];
static NEW_ALL: &[settee_core::DataUse] = &[ALARM.erased(), CONTACT.erased(), USE_LINE_LINE.erased()];
static LMD_ALL: &[settee_core::DataUse] =
    &[ALARM.erased(), CONTACT.erased(), FILTER_INTERSECTION.erased(), ANGLE_CONE.erased(), CONE_FACTOR.erased(), USE_LMD_FILTERS.erased()];

macro_rules! intersection_class {
    ($name:ident, $class:literal, $desc:literal, $data:expr, $reads:expr, $method:ident) => {
        pub static $name: ComponentClass = ComponentClass {
            name: $class,
            description: $desc,
            roles: Roles::INTERSECTION,
            templates: &[],
            default_template: "",
            template_rule: TemplateRule::Default,
            data: $data,
            links: &[],
            create: |_: &CreateArgs| Box::new(IntersectionComponent { method: Method::$method(Default::default()) }),
            preparse: None,
            no_src_link: &[],
            reads: $reads,
        };
    };
}

intersection_class!(
    DISCRETE,
    "DiscreteIntersection",
    "Exact intersection tests (sphere pairs, Triangle–Line, Tetrahedron–Point), no alarm distance.",
    &[],
    &[],
    Discrete
);
intersection_class!(
    MIN_PROXIMITY,
    "MinProximityIntersection",
    "Proximity tests between the closest points of primitives (Triangle–Point, Line–Line, Line–Point, Point–Point, spheres).",
    &[PROXIMITY_DATA, MIN_PROXIMITY_DATA],
    MIN_ALL,
    MinProximity
);
intersection_class!(
    NEW_PROXIMITY,
    "NewProximityIntersection",
    "Proximity tests with element ownership flags, including Triangle–Triangle and Triangle–Line.",
    &[PROXIMITY_DATA, NEW_PROXIMITY_DATA],
    NEW_ALL,
    NewProximity
);
intersection_class!(
    LOCAL_MIN_DISTANCE,
    "LocalMinDistance",
    "Proximity tests keeping local minima of the distance only (cone filters from the neighbouring geometry).",
    &[PROXIMITY_DATA, LOCAL_MIN_DISTANCE_DATA],
    LMD_ALL,
    LocalMin
);

enum Method {
    Discrete(DiscreteIntersection),
    MinProximity(MinProximityIntersection),
    NewProximity(NewProximityIntersection),
    LocalMin(LocalMinDistance),
}

/// An intersection method component.
pub struct IntersectionComponent {
    method: Method,
}

impl Component for IntersectionComponent {
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        match &mut self.method {
            Method::Discrete(_) => {}
            Method::MinProximity(m) => {
                m.alarm_distance = d.get(ALARM);
                m.contact_distance = d.get(CONTACT);
                m.use_sphere_triangle = d.get(USE_SPHERE_TRIANGLE);
                m.use_point_point = d.get(USE_POINT_POINT);
                m.use_surface_normals = d.get(USE_SURFACE_NORMALS);
                m.use_line_point = d.get(USE_LINE_POINT);
                m.use_line_line = d.get(USE_LINE_LINE);
            }
            Method::NewProximity(m) => {
                m.alarm_distance = d.get(ALARM);
                m.contact_distance = d.get(CONTACT);
                m.use_line_line = d.get(USE_LINE_LINE);
            }
            Method::LocalMin(m) => {
                m.alarm_distance = d.get(ALARM);
                m.contact_distance = d.get(CONTACT);
                m.filter_intersection = d.get(FILTER_INTERSECTION);
                m.angle_cone = d.get(ANGLE_CONE);
                m.cone_factor = d.get(CONE_FACTOR);
                m.use_lmd_filters = d.get(USE_LMD_FILTERS);
            }
        }
        Ok(())
    }

    fn intersection(&self) -> Option<&dyn IntersectionMethod> {
        Some(match &self.method {
            Method::Discrete(m) => m,
            Method::MinProximity(m) => m,
            Method::NewProximity(m) => m,
            Method::LocalMin(m) => m,
        })
    }
}

/// Registers the intersection classes.
pub fn register(f: &mut settee_core::Factory) {
    for c in [&DISCRETE, &MIN_PROXIMITY, &NEW_PROXIMITY, &LOCAL_MIN_DISTANCE] {
        f.register(c);
    }
}
