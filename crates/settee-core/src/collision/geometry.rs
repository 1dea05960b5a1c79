//! The geometry detection works on: one [`ModelGeometry`] per collision model, refreshed from
//! the scene at the start of each detection, and axis-aligned boxes.

use std::sync::Arc;

use crate::topology::{Adjacency, MeshData};

use super::kernels::{cross, norm, normalized};

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

/// What continuous detection sweeps each primitive over during a step (SOFA's
/// `ContinuousIntersectionTypeFlag`, chosen by the intersection method).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Sweep {
    /// Discrete detection: the primitives at their positions.
    #[default]
    None,
    /// From the position to `x + v·dt`.
    Inertia { dt: f64 },
    /// From the position to the free-motion position (`freePosition`).
    FreeMotion,
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
    /// What the model sweeps for continuous detection (set by the pipeline from its
    /// intersection method).
    pub sweep: Sweep,
    /// The end of each DOF's sweep (see [`Sweep`]); empty for discrete detection. Leaf boxes
    /// then hold both ends.
    pub x_end: Vec<Vec3>,
    /// Frame orientations (x, y, z, w) of rigid spheres; empty otherwise.
    pub orientations: Vec<[f64; 4]>,
    /// Sphere radii, one per sphere; empty for other kinds.
    pub radius: Vec<f64>,
    /// Line elements (vertex pairs), in the topology's edge order. Point models keep the
    /// topology's edges here too (self-collision pruning, LocalMinDistance filter).
    pub edges: Vec<[usize; 2]>,
    /// Triangle elements: the topology's triangles, then two per quad (spec §8.3). Point and
    /// line models keep them too: their LocalMinDistance filters read the topology's triangles
    /// (the first `topology_triangles`).
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
            sweep: Sweep::None,
            x_end: Vec::new(),
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
            PrimitiveKind::Sphere | PrimitiveKind::RigidSphere | PrimitiveKind::Point => self.x.len(),
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
        !self.groups.iter().any(|g| other.groups.binary_search(g).is_ok())
    }

    /// Element-level rule for pairs of models of one node (SOFA's `canCollideWithElement` of
    /// point, line and triangle models, spec §3.3): whether element `i` of `self` may be tested
    /// against element `j` of `other`. `same_model` tells that both are the same model. The
    /// generic `i < j` rule for a model against itself is the caller's.
    ///
    /// As in SOFA ([GEO]`PointCollisionModel.inl`, `LineCollisionModel.inl`,
    /// `TriangleCollisionModel.inl`), each rule first accepts when `self` has no self-collision
    /// or when the models are in different nodes. The line and triangle rules recognise "the
    /// node's point model" as any point model of the node (SOFA keeps the first one found in the
    /// node). Where SOFA would delegate back and forth forever (two point models, or a line model
    /// and a second point model of one node: a stack overflow there), the pair is accepted.
    pub fn can_collide_elements(&self, i: usize, other: &ModelGeometry, j: usize, same_model: bool) -> bool {
        self.can_collide_elements_rule(i, other, j, same_model, true)
    }

    fn can_collide_elements_rule(&self, i: usize, other: &ModelGeometry, j: usize, same_model: bool, may_delegate: bool) -> bool {
        let delegate = || {
            if may_delegate {
                other.can_collide_elements_rule(j, self, i, false, false)
            } else {
                true
            }
        };
        match self.kind {
            PrimitiveKind::Point => {
                if !self.self_collision || self.node != other.node {
                    return true;
                }
                if !same_model {
                    return delegate();
                }
                // Keep only i > j, so that a pair is not tested twice.
                if i <= j {
                    return false;
                }
                let Some(adj) = &self.adjacency else {
                    return true;
                };
                // SOFA compares the two neighbour lists (`getVerticesAroundVertex`) inside a
                // double loop: a shared neighbour, or one point being a neighbour of the other,
                // rejects the pair — but only when both points have neighbours.
                let ni = self.vertex_neighbours(adj, i);
                let nj = self.vertex_neighbours(adj, j);
                for &v1 in &ni {
                    for &v2 in &nj {
                        if v1 == v2 || v1 == j || i == v2 {
                            return false;
                        }
                    }
                }
                true
            }
            PrimitiveKind::Line => {
                if !self.self_collision || self.node != other.node {
                    return true;
                }
                // SOFA accepts every pair when the line model has no topology (before any of the
                // tests below).
                let Some(adj) = &self.adjacency else {
                    return true;
                };
                let Some(&[p11, p12]) = self.edges.get(i) else {
                    return true;
                };
                let around = |v: usize| -> &[usize] { adj.edges_around_vertex.get(v).map(|s| s.as_slice()).unwrap_or(&[]) };
                if same_model {
                    let Some(&[p21, p22]) = self.edges.get(j) else {
                        return true;
                    };
                    if p11 == p21 || p11 == p22 || p12 == p21 || p12 == p22 {
                        return false;
                    }
                    // An edge around an end of the first line that is also around an end of the
                    // second.
                    return !around(p11).iter().chain(around(p12)).any(|e| around(p21).contains(e) || around(p22).contains(e));
                }
                if other.kind == PrimitiveKind::Point {
                    if j == p11 || j == p12 {
                        return false;
                    }
                    // The point is an end of an edge around one of the line's ends.
                    return !around(p11).iter().chain(around(p12)).any(|&e| self.edges.get(e).is_some_and(|ed| ed[0] == j || ed[1] == j));
                }
                delegate()
            }
            PrimitiveKind::Triangle => {
                if !self.self_collision || self.node != other.node {
                    return true;
                }
                if other.kind == PrimitiveKind::Point && !same_model {
                    return !self.triangles.get(i).is_some_and(|t| t.contains(&j));
                }
                // No delegation in SOFA: Triangle–Line and Triangle–Triangle pairs are accepted
                // (NewProximity prunes neighbouring triangles itself, §7.5).
                true
            }
            // `CollisionModel::canCollideWithElement` default.
            _ => true,
        }
    }

    /// SOFA's `getVerticesAroundVertex(v)`: the other end of every edge around `v`, in the
    /// edge-around-vertex order.
    fn vertex_neighbours(&self, adj: &Adjacency, v: usize) -> Vec<usize> {
        adj.edges_around_vertex
            .get(v)
            .map(|es| es.iter().filter_map(|&e| self.edges.get(e)).map(|&[p, q]| if p == v { q } else { p }).collect())
            .unwrap_or_default()
    }

    /// Sets the model's element lists from its topology, as each SOFA model does in `init` /
    /// `updateFromTopology`, and (triangle models) the ownership flags:
    /// * every kind keeps the topology's `edges` (line elements; point models use them for
    ///   self-collision pruning and the LocalMinDistance filter);
    /// * `triangles` = [`triangle_elements`] (the topology's triangles, then two per quad), with
    ///   `topology_triangles` the number of the topology's own; point and line models read the
    ///   first `topology_triangles` of them for the LocalMinDistance filters;
    /// * `tetrahedra` = the topology's tetrahedra;
    /// * `triangle_flags` = [`triangle_flags`] for triangle models (zeros without adjacency).
    ///
    /// Fails when an element refers to a vertex that the topology does not have (at least
    /// `nb_points`, the size of the model's state); the model is left unchanged then.
    pub fn set_topology(&mut self, mesh: &MeshData, adjacency: Option<Arc<Adjacency>>, nb_points: usize) -> Result<(), GeometryError> {
        check_indices("edge", mesh.edges.iter().map(|e| e.as_slice()), nb_points)?;
        check_indices("triangle", mesh.triangles.iter().map(|e| e.as_slice()), nb_points)?;
        check_indices("quad", mesh.quads.iter().map(|e| e.as_slice()), nb_points)?;
        check_indices("tetrahedron", mesh.tetrahedra.iter().map(|e| e.as_slice()), nb_points)?;
        self.edges = mesh.edges.clone();
        self.triangles = triangle_elements(&mesh.triangles, &mesh.quads);
        self.topology_triangles = mesh.triangles.len();
        self.tetrahedra = mesh.tetrahedra.clone();
        self.triangle_flags = if self.kind == PrimitiveKind::Triangle {
            match &adjacency {
                Some(adj) => triangle_flags(&self.triangles, self.topology_triangles, adj),
                None => vec![0; self.triangles.len()],
            }
        } else {
            Vec::new()
        };
        self.adjacency = adjacency;
        Ok(())
    }

    /// Recomputes `triangle_normals` from the current positions (TriangleCollisionModel's
    /// `updateNormals` and the `computeNormals` step of its bounding-tree update).
    pub fn update_triangle_normals(&mut self) {
        // Into the list of the last update (this runs at every step).
        self.triangle_normals.clear();
        self.triangle_normals.extend(self.triangles.iter().map(|t| triangle_normal(&self.x, t)));
    }

    /// Checks that everything the intersection methods index is in range: element vertex
    /// indices against `x`, one radius per sphere, one orientation per rigid sphere, one flag and
    /// one normal per triangle when present, one normal per point when present. The intersection
    /// methods assume a geometry that passes this check.
    pub fn validate(&self) -> Result<(), GeometryError> {
        let n = self.x.len();
        check_indices("edge", self.edges.iter().map(|e| e.as_slice()), n)?;
        check_indices("triangle", self.triangles.iter().map(|e| e.as_slice()), n)?;
        check_indices("tetrahedron", self.tetrahedra.iter().map(|e| e.as_slice()), n)?;
        let sizes = |what: &str, got: usize, want: usize| {
            if got == want {
                Ok(())
            } else {
                Err(GeometryError(format!("model '{}': {got} {what} for {want} elements", self.name)))
            }
        };
        match self.kind {
            PrimitiveKind::Sphere => sizes("radii", self.radius.len(), n)?,
            PrimitiveKind::RigidSphere => {
                sizes("radii", self.radius.len(), n)?;
                sizes("orientations", self.orientations.len(), n)?;
            }
            _ => {}
        }
        if !self.triangle_flags.is_empty() {
            sizes("triangle flags", self.triangle_flags.len(), self.triangles.len())?;
        }
        if !self.triangle_normals.is_empty() {
            sizes("triangle normals", self.triangle_normals.len(), self.triangles.len())?;
        }
        if !self.point_normals.is_empty() {
            sizes("point normals", self.point_normals.len(), n)?;
        }
        Ok(())
    }
}

/// A geometry snapshot that the intersection methods cannot use (an index out of range, a list
/// of the wrong length).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeometryError(pub String);

impl std::fmt::Display for GeometryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GeometryError {}

fn check_indices<'a>(what: &str, elements: impl Iterator<Item = &'a [usize]>, nb_points: usize) -> Result<(), GeometryError> {
    for (k, e) in elements.enumerate() {
        if let Some(&v) = e.iter().find(|&&v| v >= nb_points) {
            return Err(GeometryError(format!("{what} {k} uses vertex {v}, but there are only {nb_points} points")));
        }
    }
    Ok(())
}

/// TriangleCollisionModel's element list (spec §8.3): the topology's triangles in order, then
/// two triangles per quad `(q1, q2, q0)` and `(q3, q0, q2)`, in quad order.
pub fn triangle_elements(triangles: &[[usize; 3]], quads: &[[usize; 4]]) -> Vec<[usize; 3]> {
    let mut out = Vec::with_capacity(triangles.len() + 2 * quads.len());
    out.extend_from_slice(triangles);
    for q in quads {
        out.push([q[1], q[2], q[0]]);
        out.push([q[3], q[0], q[2]]);
    }
    out
}

/// Triangle ownership flags ([GEO]`TriangleCollisionModel.inl` `getTriangleFlags`, spec §7.5):
/// for triangle `i < topology_triangles` with vertices `t` and edges-in-triangle `e` (edge `j`
/// opposite vertex `j`), `P1 << j` when `i` is the first triangle around `t[j]`, `E23 << j` when
/// it is the first triangle around `e[j]`, `BE23 << j` when `e[j]` has a single triangle.
/// Triangles made from quads get 0. A missing edge (`usize::MAX` in the adjacency) gives no edge
/// flag.
pub fn triangle_flags(triangles: &[[usize; 3]], topology_triangles: usize, adjacency: &Adjacency) -> Vec<u32> {
    use triangle_flags::{BE23, E23, P1};
    triangles
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut f = 0;
            if i >= topology_triangles {
                return f;
            }
            for (j, &v) in t.iter().enumerate() {
                let first = adjacency.triangles_around_vertex.get(v).and_then(|l| l.first());
                if first == Some(&i) {
                    f |= P1 << j;
                }
            }
            if let Some(edges) = adjacency.edges_in_triangle.get(i) {
                for (j, &e) in edges.iter().enumerate() {
                    let Some(tae) = adjacency.triangles_around_edge.get(e) else {
                        continue;
                    };
                    if tae.first() == Some(&i) {
                        f |= E23 << j;
                    }
                    if tae.len() == 1 {
                        f |= BE23 << j;
                    }
                }
            }
            f
        })
        .collect()
}

/// Triangle normals as TriangleCollisionModel stores them: `(p2 − p1) × (p3 − p1)` normalised
/// with SOFA's `Vec::normalize` (a vector whose norm is at most machine epsilon — a degenerate
/// triangle — is left as it is, not turned into NaN).
pub fn triangle_normals(x: &[Vec3], triangles: &[[usize; 3]]) -> Vec<Vec3> {
    triangles.iter().map(|t| triangle_normal(x, t)).collect()
}

/// The normal of one triangle, as [`triangle_normals`] computes it.
fn triangle_normal(x: &[Vec3], t: &[usize; 3]) -> Vec3 {
    let (p1, p2, p3) = (&x[t[0]], &x[t[1]], &x[t[2]]);
    normalized(cross(&(p2 - p1), &(p3 - p1)))
}

/// Per-vertex normals of a point model with `computeNormals` ([GEO]`PointCollisionModel.inl`
/// `updateNormals`, spec §8.2), from the positions `x` and the model's topology `mesh`:
/// * if the topology has tetrahedra or hexahedra: the unit normals of the 4 faces of each
///   tetrahedron are added to the face's vertices, faces in the order
///   `(p3−p1)×(p2−p1)` on (1,2,3), `(p4−p1)×(p3−p1)` on (1,3,4), `(p2−p1)×(p4−p1)` on (1,4,2),
///   `(p3−p2)×(p4−p2)` on (2,4,3) (hexahedra contribute nothing);
/// * else the unit normal `(p2−p1)×(p3−p1)` of each triangle is added to its 3 vertices, then
///   the unit normal `(p3−p1)×(p4−p2)` of each quad to its 4 vertices;
/// * finally each sum is multiplied by `1/|n|` when `|n| > 1e-3`, else set to zero.
///
/// Elements referring to vertices beyond `x` are skipped.
pub fn point_normals(x: &[Vec3], mesh: &MeshData) -> Vec<Vec3> {
    let n = x.len();
    let mut normals = vec![Vec3::zeros(); n];
    let inside = |e: &[usize]| e.iter().all(|&v| v < n);
    if !mesh.tetrahedra.is_empty() || !mesh.hexahedra.is_empty() {
        for e in mesh.tetrahedra.iter().filter(|e| inside(&e[..])) {
            let (p1, p2, p3, p4) = (&x[e[0]], &x[e[1]], &x[e[2]], &x[e[3]]);
            let faces = [
                (normalized(cross(&(p3 - p1), &(p2 - p1))), [e[0], e[1], e[2]]),
                (normalized(cross(&(p4 - p1), &(p3 - p1))), [e[0], e[2], e[3]]),
                (normalized(cross(&(p2 - p1), &(p4 - p1))), [e[0], e[3], e[1]]),
                (normalized(cross(&(p3 - p2), &(p4 - p2))), [e[1], e[3], e[2]]),
            ];
            for (f, vs) in faces {
                for v in vs {
                    normals[v] += f;
                }
            }
        }
    } else {
        for e in mesh.triangles.iter().filter(|e| inside(&e[..])) {
            let (p1, p2, p3) = (&x[e[0]], &x[e[1]], &x[e[2]]);
            let f = normalized(cross(&(p2 - p1), &(p3 - p1)));
            for &v in e {
                normals[v] += f;
            }
        }
        for e in mesh.quads.iter().filter(|e| inside(&e[..])) {
            let (p1, p2, p3, p4) = (&x[e[0]], &x[e[1]], &x[e[2]], &x[e[3]]);
            let f = normalized(cross(&(p3 - p1), &(p4 - p2)));
            for &v in e {
                normals[v] += f;
            }
        }
    }
    for nv in &mut normals {
        let l = norm(nv);
        if l > 1.0e-3 {
            // SOFA multiplies by the inverse here (`normals[i] *= 1/l`), unlike `normalize`.
            *nv *= 1.0 / l;
        } else {
            *nv = Vec3::zeros();
        }
    }
    normals
}

#[cfg(test)]
mod tests {
    use super::triangle_flags::*;
    use super::*;

    fn v(x: f64, y: f64, z: f64) -> Vec3 {
        Vec3::new(x, y, z)
    }

    /// Square (0,1,3,2) split along (1,2): triangle 0 = (0,1,2), triangle 1 = (2,1,3).
    fn square() -> MeshData {
        MeshData {
            points: vec![[0.0; 3]; 4],
            edges: vec![[1, 2], [2, 0], [0, 1], [1, 3], [3, 2]],
            triangles: vec![[0, 1, 2], [2, 1, 3]],
            ..Default::default()
        }
    }

    fn square_x() -> Vec<Vec3> {
        vec![v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0), v(1.0, 1.0, 0.0)]
    }

    #[test]
    fn triangle_elements_append_two_per_quad() {
        let t = triangle_elements(&[[0, 1, 2]], &[[3, 4, 5, 6], [7, 8, 9, 10]]);
        assert_eq!(t, vec![[0, 1, 2], [4, 5, 3], [6, 3, 5], [8, 9, 7], [10, 7, 9]]);
    }

    #[test]
    fn ownership_flags_of_a_split_square() {
        // Triangle 0 = (0,1,2): first around vertices 0, 1, 2 → P1|P2|P3; its edges (opposite
        // vertices 0,1,2) are e0 = (1,2) [shared, 0 first] → E23; e1 = (2,0) [alone] →
        // E31|BE31; e2 = (0,1) [alone] → E12|BE12: 1+2+4+8+16+32+128+256 = 447.
        // Triangle 1 = (2,1,3): first only around vertex 3 (j = 2) → P3; its edges are
        // e3 = (1,3) → E23|BE23, e4 = (3,2) → E31|BE31, e0 → not first: 4+8+64+16+128 = 220.
        let mesh = square();
        let adj = Adjacency::build(&mesh, 4);
        let tris = triangle_elements(&mesh.triangles, &[[0, 1, 3, 2]]);
        let flags = triangle_flags(&tris, 2, &adj);
        assert_eq!(flags, vec![447, 220, 0, 0]);
        assert_eq!(flags[0], P1 | P2 | P3 | E23 | E31 | E12 | BE31 | BE12);
        assert_eq!(flags[1], P3 | E23 | E31 | BE23 | BE31);
    }

    #[test]
    fn every_vertex_and_edge_has_exactly_one_owner() {
        // A 3×3-vertex grid of 8 triangles with MeshTopology-like edges.
        let n = 3;
        let id = |i: usize, j: usize| i * n + j;
        let mut triangles = Vec::new();
        for i in 0..n - 1 {
            for j in 0..n - 1 {
                triangles.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
                triangles.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
            }
        }
        let mut edges: Vec<[usize; 2]> = Vec::new();
        for t in &triangles {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                if !edges.iter().any(|e| (e[0] == a && e[1] == b) || (e[0] == b && e[1] == a)) {
                    edges.push([a, b]);
                }
            }
        }
        let mesh = MeshData { points: vec![[0.0; 3]; n * n], edges: edges.clone(), triangles: triangles.clone(), ..Default::default() };
        let adj = Adjacency::build(&mesh, n * n);
        let flags = triangle_flags(&triangles, triangles.len(), &adj);
        let mut vertex_owners = vec![0; n * n];
        let mut edge_owners = vec![0; edges.len()];
        for (t, tri) in triangles.iter().enumerate() {
            for j in 0..3 {
                if flags[t] & (P1 << j) != 0 {
                    vertex_owners[tri[j]] += 1;
                }
                if flags[t] & (E23 << j) != 0 {
                    edge_owners[adj.edges_in_triangle[t][j]] += 1;
                }
            }
        }
        assert!(vertex_owners.iter().all(|&c| c == 1), "{vertex_owners:?}");
        assert!(edge_owners.iter().all(|&c| c == 1), "{edge_owners:?}");
    }

    #[test]
    fn triangle_normals_keep_degenerate_ones() {
        // (2,0,0) × (0,3,0) = (0,0,6) → (0,0,1); a flat triangle keeps its zero cross product.
        let x = [v(0.0, 0.0, 0.0), v(2.0, 0.0, 0.0), v(0.0, 3.0, 0.0), v(4.0, 0.0, 0.0)];
        let n = triangle_normals(&x, &[[0, 1, 2], [0, 1, 3]]);
        assert_eq!(n, vec![v(0.0, 0.0, 1.0), Vec3::zeros()]);
    }

    #[test]
    fn point_normals_from_triangles_quads_and_tetrahedra() {
        // One triangle: each vertex gets (0,0,1); an isolated vertex stays zero.
        let mut x = square_x();
        x.push(v(5.0, 5.0, 5.0));
        let mesh = MeshData { triangles: vec![[0, 1, 2]], ..Default::default() };
        let n = point_normals(&x, &mesh);
        assert_eq!(&n[..3], &[v(0.0, 0.0, 1.0); 3]);
        assert_eq!(n[3], Vec3::zeros());
        assert_eq!(n[4], Vec3::zeros());
        // A quad (0,1,3,2): (p3 − p1) × (p4 − p2) = (1,1,0) × (−1,1,0) = (0,0,2) → (0,0,1).
        let quad = MeshData { quads: vec![[0, 1, 3, 2]], ..Default::default() };
        assert_eq!(point_normals(&x, &quad)[3], v(0.0, 0.0, 1.0));
        // Unit tetrahedron: faces (1,2,3) → (0,0,−1), (1,3,4) → (−1,0,0), (1,4,2) → (0,−1,0),
        // (2,4,3) → (1,1,1)/√3. Vertex 0 sums the first three: (−1,−1,−1), times 1/√3.
        // Vertex 1 = (1,0,0) sums (0,0,−1), (0,−1,0), (1,1,1)/√3.
        let tx = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0), v(0.0, 0.0, 1.0)];
        let tet = MeshData { tetrahedra: vec![[0, 1, 2, 3]], triangles: vec![[0, 1, 2]], ..Default::default() };
        let n = point_normals(&tx, &tet);
        let s = 1.0 / 3f64.sqrt();
        assert_eq!(n[0], v(-1.0, -1.0, -1.0) * s);
        let a = 1.0 / 3f64.sqrt();
        let sum = v(a, a - 1.0, a - 1.0);
        let expected = sum / sum.norm();
        for k in 0..3 {
            assert!((n[1][k] - expected[k]).abs() < 1e-15);
        }
        // Hexahedra only: no normal at all (SOFA does not handle them).
        let hexa = MeshData { hexahedra: vec![[0, 1, 2, 3, 0, 1, 2, 3]], triangles: vec![[0, 1, 2]], ..Default::default() };
        assert!(point_normals(&tx, &hexa).iter().all(|n| *n == Vec3::zeros()));
    }

    #[test]
    fn set_topology_fills_elements_and_rejects_bad_indices() {
        let mesh = MeshData { quads: vec![[0, 1, 3, 2]], ..square() };
        let adj = Arc::new(Adjacency::build(&mesh, 4));
        let mut g = ModelGeometry::new(PrimitiveKind::Triangle, "t", 1);
        g.x = square_x();
        g.set_topology(&mesh, Some(adj.clone()), 4).unwrap();
        g.update_triangle_normals();
        assert_eq!(g.triangles.len(), 4);
        assert_eq!(g.topology_triangles, 2);
        assert_eq!(g.triangle_flags, vec![447, 220, 0, 0]);
        assert_eq!(g.len(), 4);
        g.validate().unwrap();
        // Line and point models keep the edges and the topology triangles, no flags.
        let mut l = ModelGeometry::new(PrimitiveKind::Line, "l", 1);
        l.x = square_x();
        l.set_topology(&mesh, Some(adj), 4).unwrap();
        assert_eq!((l.len(), l.triangles.len()), (5, 4));
        assert!(l.triangle_flags.is_empty());
        // An index beyond the state: an error, the model untouched.
        let bad = MeshData { triangles: vec![[0, 1, 7]], ..Default::default() };
        let err = g.set_topology(&bad, None, 4).unwrap_err();
        assert!(err.to_string().contains("vertex 7"), "{err}");
        assert_eq!(g.triangles.len(), 4);
        // validate: positions shrunk under the elements; a sphere without radius.
        g.x.truncate(2);
        assert!(g.validate().is_err());
        let mut s = ModelGeometry::new(PrimitiveKind::Sphere, "s", 1);
        s.x = vec![Vec3::zeros()];
        assert!(s.validate().is_err());
        s.radius = vec![1.0];
        s.validate().unwrap();
    }

    fn path_model(kind: PrimitiveKind, self_collision: bool) -> ModelGeometry {
        // Path 0–1–2–3–4 along x.
        let mesh = MeshData { edges: vec![[0, 1], [1, 2], [2, 3], [3, 4]], ..Default::default() };
        let mut g = ModelGeometry::new(kind, "path", 7);
        g.x = (0..5).map(|i| v(i as f64, 0.0, 0.0)).collect();
        g.self_collision = self_collision;
        g.set_topology(&mesh, Some(Arc::new(Adjacency::build(&mesh, 5))), 5).unwrap();
        g
    }

    #[test]
    fn point_self_collision_rule() {
        let p = path_model(PrimitiveKind::Point, true);
        // Only i > j is kept.
        assert!(!p.can_collide_elements(0, &p, 4, true));
        assert!(!p.can_collide_elements(2, &p, 2, true));
        // 4 and 0: neighbours {3} and {1}, nothing shared: accepted.
        assert!(p.can_collide_elements(4, &p, 0, true));
        // 2 and 0 share neighbour 1; 1 and 0 are neighbours: rejected.
        assert!(!p.can_collide_elements(2, &p, 0, true));
        assert!(!p.can_collide_elements(1, &p, 0, true));
        // 3 and 0: neighbours {2,4} and {1}: accepted.
        assert!(p.can_collide_elements(3, &p, 0, true));
        // Without self-collision, or against another node, everything passes.
        let q = path_model(PrimitiveKind::Point, false);
        assert!(q.can_collide_elements(1, &q, 0, true));
        let mut other = p.clone();
        other.node = 8;
        assert!(p.can_collide_elements(1, &other, 0, false));
    }

    #[test]
    fn line_self_collision_rule() {
        let l = path_model(PrimitiveKind::Line, true);
        let p = path_model(PrimitiveKind::Point, true);
        // Lines sharing a vertex, or joined by an edge (0 = (0,1) and 2 = (2,3) through
        // edge 1): rejected; lines 0 and 3 = (3,4): accepted.
        assert!(!l.can_collide_elements(0, &l, 1, true));
        assert!(!l.can_collide_elements(0, &l, 2, true));
        assert!(l.can_collide_elements(0, &l, 3, true));
        // Against the node's point model: the line's ends and the ends of the edges around
        // them are rejected (line 0 = (0,1): points 0, 1, 2), point 3 accepted.
        for j in 0..3 {
            assert!(!l.can_collide_elements(0, &p, j, false), "point {j}");
        }
        assert!(l.can_collide_elements(0, &p, 3, false));
        // The point model delegates to the line model's rule.
        assert!(!p.can_collide_elements(2, &l, 0, false));
        assert!(p.can_collide_elements(3, &l, 0, false));
        // Without a topology SOFA accepts every pair, shared vertices included.
        let mut bare = l.clone();
        bare.adjacency = None;
        assert!(bare.can_collide_elements(0, &bare, 1, true));
    }

    #[test]
    fn triangle_self_collision_rule() {
        let mut t = ModelGeometry::new(PrimitiveKind::Triangle, "t", 7);
        t.x = square_x();
        t.triangles = vec![[0, 1, 2], [2, 1, 3]];
        t.self_collision = true;
        let p = path_model(PrimitiveKind::Point, true);
        let l = path_model(PrimitiveKind::Line, true);
        assert!(!t.can_collide_elements(0, &p, 2, false));
        assert!(t.can_collide_elements(0, &p, 3, false));
        // Triangle–Line and Triangle–Triangle pairs are not pruned here.
        assert!(t.can_collide_elements(0, &l, 0, false));
        assert!(t.can_collide_elements(0, &t, 1, true));
        // The point model delegates to the triangle's rule.
        assert!(!p.can_collide_elements(1, &t, 0, false));
        // Two point models of one node delegate to each other: accepted, no endless recursion.
        let p2 = path_model(PrimitiveKind::Point, true);
        assert!(p.can_collide_elements(1, &p2, 0, false));
    }
}
