//! The geometry detection works on: one [`ModelGeometry`] per collision model, refreshed from
//! the scene at the start of each detection, and axis-aligned boxes.

use std::sync::Arc;

use settee_core::Adjacency;

/// Points and vectors of collision geometry.
pub type Vec3 = nalgebra::Vector3<f64>;

/// The primitive type of a collision model. Intersection methods are tables keyed by pairs of
/// kinds (SOFA keys them by model class, spec §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PrimitiveKind {
    /// A level of a bounding tree (SOFA's `CubeCollisionModel`).
    Cube,
    /// `SphereCollisionModel<Vec3d>`: centres are DOF positions.
    Sphere,
    /// `SphereCollisionModel<Rigid3d>`: centres are frame origins.
    RigidSphere,
    Point,
    Line,
    Triangle,
    Tetrahedron,
}

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    /// The box of a single point.
    pub fn point(p: Vec3) -> Aabb {
        Aabb { min: p, max: p }
    }

    /// Grows the box to contain `p`, component by component.
    pub fn add_point(&mut self, p: &Vec3) {
        for a in 0..3 {
            if p[a] < self.min[a] {
                self.min[a] = p[a];
            }
            if p[a] > self.max[a] {
                self.max[a] = p[a];
            }
        }
    }

    /// Grows the box by `d` on every side.
    pub fn inflate(&mut self, d: f64) {
        for a in 0..3 {
            self.min[a] -= d;
            self.max[a] += d;
        }
    }
}

/// Triangle ownership flags (spec §7.5): each vertex and each edge of a mesh is owned by exactly
/// one of its triangles.
pub mod triangle_flags {
    pub const P1: u32 = 1;
    pub const P2: u32 = 2;
    pub const P3: u32 = 4;
    pub const E23: u32 = 8;
    pub const E31: u32 = 16;
    pub const E12: u32 = 32;
    pub const BE23: u32 = 64;
    pub const BE31: u32 = 128;
    pub const BE12: u32 = 256;
}

/// Everything detection needs to know about one collision model, as plain data.
#[derive(Clone, Debug)]
pub struct ModelGeometry {
    pub kind: PrimitiveKind,
    /// The component's name (contact names are `name1-name2`).
    pub name: String,
    /// Identity of the model's node: models of one node never collide unless both allow
    /// self-collision (spec §3.3).
    pub node: u64,
    pub active: bool,
    pub moving: bool,
    pub simulated: bool,
    pub self_collision: bool,
    /// Collision groups, sorted.
    pub groups: Vec<i64>,
    /// The model's `contactDistance` (skin thickness).
    pub contact_distance: f64,
    pub contact_stiffness: f64,
    /// `bothSide` of point, line and triangle models.
    pub both_side: bool,
    /// Positions of the model's DOFs (for rigid spheres: frame origins).
    pub x: Vec<Vec3>,
    /// Frame orientations (x, y, z, w) of rigid spheres; empty otherwise.
    pub orientations: Vec<[f64; 4]>,
    /// Sphere radii, one per sphere; empty for other kinds.
    pub radius: Vec<f64>,
    /// Line elements (vertex pairs), in the topology's edge order.
    pub edges: Vec<[usize; 2]>,
    /// Triangle elements: the topology's triangles, then two per quad (spec §8.3).
    pub triangles: Vec<[usize; 3]>,
    /// How many of `triangles` are the topology's own (the rest come from quads).
    pub topology_triangles: usize,
    /// Ownership flags of `triangles` (spec §7.5; 0 for triangles made from quads).
    pub triangle_flags: Vec<u32>,
    /// Unit normals of `triangles`, as the triangle model stores them.
    pub triangle_normals: Vec<Vec3>,
    pub tetrahedra: Vec<[usize; 4]>,
    /// Per-vertex normals of point models with `computeNormals` (else empty).
    pub point_normals: Vec<Vec3>,
    /// The topology's cross-element lists, when the model has a topology.
    pub adjacency: Option<Arc<Adjacency>>,
    /// Point models: whether a line model is found in the node or its ancestors (the
    /// LocalMinDistance point filter is skipped otherwise, spec §7.6).
    pub has_line_model: bool,
}

impl ModelGeometry {
    /// An empty model of the given kind with SOFA's default flags.
    pub fn new(kind: PrimitiveKind, name: impl Into<String>, node: u64) -> ModelGeometry {
        ModelGeometry {
            kind,
            name: name.into(),
            node,
            active: true,
            moving: true,
            simulated: true,
            self_collision: false,
            groups: Vec::new(),
            contact_distance: 0.0,
            contact_stiffness: 10.0,
            both_side: false,
            x: Vec::new(),
            orientations: Vec::new(),
            radius: Vec::new(),
            edges: Vec::new(),
            triangles: Vec::new(),
            topology_triangles: 0,
            triangle_flags: Vec::new(),
            triangle_normals: Vec::new(),
            tetrahedra: Vec::new(),
            point_normals: Vec::new(),
            adjacency: None,
            has_line_model: false,
        }
    }

    /// Number of elements (primitives) of the model.
    pub fn len(&self) -> usize {
        match self.kind {
            PrimitiveKind::Cube => 0,
            PrimitiveKind::Sphere | PrimitiveKind::RigidSphere | PrimitiveKind::Point => {
                self.x.len()
            }
            PrimitiveKind::Line => self.edges.len(),
            PrimitiveKind::Triangle => self.triangles.len(),
            PrimitiveKind::Tetrahedron => self.tetrahedra.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Model-level pair rule (SOFA's `CollisionModel::canCollideWith`, spec §3.3), to be
    /// evaluated both ways.
    pub fn can_collide_with(&self, other: &ModelGeometry) -> bool {
        if self.node == other.node {
            return self.self_collision;
        }
        if self.groups.is_empty() || other.groups.is_empty() {
            return true;
        }
        !self
            .groups
            .iter()
            .any(|g| other.groups.binary_search(g).is_ok())
    }

    /// Element-level rule for pairs of models of one node (SOFA's `canCollideWithElement` of
    /// point, line and triangle models, spec §3.3): whether element `i` of `self` may be tested
    /// against element `j` of `other`. `same_model` tells that both are the same model. The
    /// generic `i < j` rule for a model against itself is the caller's.
    pub fn can_collide_elements(
        &self,
        i: usize,
        other: &ModelGeometry,
        j: usize,
        same_model: bool,
    ) -> bool {
        if self.node != other.node {
            return true;
        }
        match self.kind {
            PrimitiveKind::Point => {
                if !same_model {
                    return other.can_collide_elements(j, self, i, false);
                }
                if !self.self_collision || i <= j {
                    return false;
                }
                // No shared neighbour: no vertex adjacent (by an edge) to both points.
                match &self.adjacency {
                    Some(adj) => {
                        let neighbours = |v: usize| -> Vec<usize> {
                            adj.edges_around_vertex
                                .get(v)
                                .map(|es| {
                                    es.iter().map(|&e| self.edges_vertex_other(e, v)).collect()
                                })
                                .unwrap_or_default()
                        };
                        let ni = neighbours(i);
                        !neighbours(j).iter().any(|n| ni.contains(n))
                    }
                    None => true,
                }
            }
            PrimitiveKind::Line => {
                let [a, b] = self.edges[i];
                if same_model {
                    let [c, d] = other.edges[j];
                    if a == c || a == d || b == c || b == d {
                        return false;
                    }
                    if let Some(adj) = &self.adjacency {
                        let around = |v: usize| {
                            adj.edges_around_vertex
                                .get(v)
                                .map(|s| s.as_slice())
                                .unwrap_or(&[])
                        };
                        let first: Vec<usize> =
                            around(a).iter().chain(around(b)).copied().collect();
                        if around(c).iter().chain(around(d)).any(|e| first.contains(e)) {
                            return false;
                        }
                    }
                    return true;
                }
                if other.kind == PrimitiveKind::Point {
                    if j == a || j == b {
                        return false;
                    }
                    if let Some(adj) = &self.adjacency {
                        for &v in &[a, b] {
                            for &e in adj
                                .edges_around_vertex
                                .get(v)
                                .map(|s| s.as_slice())
                                .unwrap_or(&[])
                            {
                                if self.edges.get(e).is_some_and(|ed| ed[0] == j || ed[1] == j) {
                                    return false;
                                }
                            }
                        }
                    }
                    return true;
                }
                other.can_collide_elements(j, self, i, false)
            }
            PrimitiveKind::Triangle => {
                if other.kind == PrimitiveKind::Point && !same_model {
                    return !self.triangles[i].contains(&j);
                }
                true
            }
            _ => true,
        }
    }

    /// The other end of topology edge `e` seen from vertex `v` (the topology's edge list is
    /// the line model's element list).
    fn edges_vertex_other(&self, e: usize, v: usize) -> usize {
        match self.edges.get(e) {
            Some(&[p, q]) => {
                if p == v {
                    q
                } else {
                    p
                }
            }
            None => usize::MAX,
        }
    }
}
