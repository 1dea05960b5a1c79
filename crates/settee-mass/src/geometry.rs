//! Element measures and element/edge incidence shared by the topology-based masses
//! (`DiagonalMass`, `MeshMatrixMass`).
//!
//! The measures follow SOFA's `sofa::geometry` formulas operation by operation (the masses of
//! the reference trajectories depend on their round-off):
//!
//! * edge length `sqrt(Σ_c (p1−p0)_c²)`;
//! * triangle area `½‖(p1−p0)×(p2−p0)‖` in 3D, the **signed** shoelace area in 2D;
//! * quad area `A(p0,p1,p2) + A(p0,p2,p3)`;
//! * tetrahedron volume `|((p1−p0)×(p2−p0))·(p3−p0) / 6|`;
//! * hexahedron volume: the sum of the volumes of the tetrahedra `(0,5,1,6) (0,1,3,6) (1,3,6,2)
//!   (6,3,0,7) (6,7,0,5) (7,5,4,0)`.
//!
//! The element→edge tables follow SOFA's `MeshTopology::createEdgesIn*Array`: edge `j` of a
//! triangle is `(t[j+1], t[j+2])`, of a quad `(q[j+1], q[j+2])` (mod 4), and tetrahedra and
//! hexahedra use the local pairs of `sofa/core/topology/Topology.cpp`; each pair is looked up
//! as `getEdgeIndex` does: the first edge of the topology joining the two points, whatever its
//! orientation.

use std::collections::HashMap;

use settee_core::math::{cross, dot, sub};
use settee_core::role;
use settee_core::{ComponentId, InitCtx, Layout, MeshData, SimResult, StateId, VecId};

/// The kind of element a mass integrates over (SOFA's `ElementType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementType {
    Edge,
    Triangle,
    Quad,
    Tetrahedron,
    Hexahedron,
}

impl ElementType {
    /// The first non-empty element list among hexahedra, tetrahedra, quads, triangles, edges.
    pub fn of(mesh: &MeshData) -> Option<ElementType> {
        if !mesh.hexahedra.is_empty() {
            Some(ElementType::Hexahedron)
        } else if !mesh.tetrahedra.is_empty() {
            Some(ElementType::Tetrahedron)
        } else if !mesh.quads.is_empty() {
            Some(ElementType::Quad)
        } else if !mesh.triangles.is_empty() {
            Some(ElementType::Triangle)
        } else if !mesh.edges.is_empty() {
            Some(ElementType::Edge)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ElementType::Edge => "edges",
            ElementType::Triangle => "triangles",
            ElementType::Quad => "quads",
            ElementType::Tetrahedron => "tetrahedra",
            ElementType::Hexahedron => "hexahedra",
        }
    }

    /// Number of vertices of one element.
    pub fn nb_vertices(self) -> usize {
        match self {
            ElementType::Edge => 2,
            ElementType::Triangle => 3,
            ElementType::Quad | ElementType::Tetrahedron => 4,
            ElementType::Hexahedron => 8,
        }
    }

    /// Smallest geometric dimension for which SOFA computes this element's measure (its
    /// `if constexpr (spatial_dimensions >= …)` guards).
    pub fn min_dimension(self) -> usize {
        match self {
            ElementType::Edge => 1,
            ElementType::Triangle | ElementType::Quad => 2,
            ElementType::Tetrahedron | ElementType::Hexahedron => 3,
        }
    }

    /// Local vertex pairs of the edges of one element, in SOFA's order (empty for edges).
    pub fn local_edges(self) -> &'static [[usize; 2]] {
        match self {
            ElementType::Edge => &[],
            ElementType::Triangle => &EDGES_IN_TRIANGLE,
            ElementType::Quad => &EDGES_IN_QUAD,
            ElementType::Tetrahedron => &EDGES_IN_TETRAHEDRON,
            ElementType::Hexahedron => &EDGES_IN_HEXAHEDRON,
        }
    }

    /// Number of elements of this type in `mesh`.
    pub fn count(self, mesh: &MeshData) -> usize {
        match self {
            ElementType::Edge => mesh.edges.len(),
            ElementType::Triangle => mesh.triangles.len(),
            ElementType::Quad => mesh.quads.len(),
            ElementType::Tetrahedron => mesh.tetrahedra.len(),
            ElementType::Hexahedron => mesh.hexahedra.len(),
        }
    }

    /// The vertices of element `k`.
    pub fn vertices(self, mesh: &MeshData, k: usize) -> &[usize] {
        match self {
            ElementType::Edge => &mesh.edges[k],
            ElementType::Triangle => &mesh.triangles[k],
            ElementType::Quad => &mesh.quads[k],
            ElementType::Tetrahedron => &mesh.tetrahedra[k],
            ElementType::Hexahedron => &mesh.hexahedra[k],
        }
    }

    /// The first element (in order) with a vertex index of `n` or more: its index, its vertices
    /// and that vertex.
    pub fn first_vertex_beyond(self, mesh: &MeshData, n: usize) -> Option<(usize, &[usize], usize)> {
        (0..self.count(mesh)).find_map(|k| {
            let v = self.vertices(mesh, k);
            v.iter().find(|&&i| i >= n).map(|&bad| (k, v, bad))
        })
    }
}

/// Edge `j` of a triangle joins its vertices `j+1` and `j+2` (the edge opposite vertex `j`).
pub const EDGES_IN_TRIANGLE: [[usize; 2]; 3] = [[1, 2], [2, 0], [0, 1]];
/// Edge `j` of a quad joins its vertices `j+1` and `j+2` (mod 4).
pub const EDGES_IN_QUAD: [[usize; 2]; 4] = [[1, 2], [2, 3], [3, 0], [0, 1]];
/// SOFA's `edgesInTetrahedronArray`.
pub const EDGES_IN_TETRAHEDRON: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];
/// SOFA's `edgesInHexahedronArray`.
pub const EDGES_IN_HEXAHEDRON: [[usize; 2]; 12] = [[0, 1], [0, 3], [0, 4], [1, 2], [1, 5], [2, 3], [2, 6], [3, 7], [4, 5], [4, 7], [5, 6], [6, 7]];

/// Element→edge incidence: `edges[k * per + j]` is the topology edge index of local edge `j` of
/// element `k`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ElementEdges {
    pub per: usize,
    pub edges: Vec<usize>,
}

impl ElementEdges {
    pub fn of(&self, k: usize) -> &[usize] {
        &self.edges[k * self.per..(k + 1) * self.per]
    }
}

/// A local edge of an element that the topology's edge list does not contain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingEdge {
    pub element: usize,
    pub a: usize,
    pub b: usize,
}

/// Builds the "edges in element" table of `mesh` for element type `t` (see the module notes).
pub fn edges_in_elements(mesh: &MeshData, t: ElementType) -> Result<ElementEdges, MissingEdge> {
    let mut index: HashMap<(usize, usize), usize> = HashMap::with_capacity(mesh.edges.len());
    for (i, e) in mesh.edges.iter().enumerate() {
        index.entry((e[0].min(e[1]), e[0].max(e[1]))).or_insert(i);
    }
    let local = t.local_edges();
    let n = t.count(mesh);
    let mut edges = Vec::with_capacity(n * local.len());
    for k in 0..n {
        let v = t.vertices(mesh, k);
        for &[i, j] in local {
            let (a, b) = (v[i], v[j]);
            match index.get(&(a.min(b), a.max(b))) {
                Some(&e) => edges.push(e),
                None => return Err(MissingEdge { element: k, a, b }),
            }
        }
    }
    Ok(ElementEdges { per: local.len(), edges })
}

/// Positions seen as SOFA's `GeometricalTypes::getCPos`: the first `dim` coordinates of each
/// element of the geometry state (the center of a rigid frame).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Geometry {
    /// Spatial dimension of the geometry template (1, 2 or 3).
    pub dim: usize,
    /// Points padded with zeros beyond `dim`.
    pub points: Vec<[f64; 3]>,
}

impl Geometry {
    /// Reads the coordinates of a state of layout `layout` (flat, element-major).
    pub fn from_coords(coords: &[f64], layout: Layout) -> Geometry {
        let cs = layout.coord_size();
        let dim = layout.spatial_size();
        let points = coords
            .chunks_exact(cs)
            .map(|c| {
                let mut p = [0.0; 3];
                p[..dim].copy_from_slice(&c[..dim]);
                p
            })
            .collect();
        Geometry { dim, points }
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// `Edge::length`.
    pub fn edge_length(&self, a: usize, b: usize) -> f64 {
        let d = sub(self.points[b], self.points[a]);
        let mut n2 = d[0] * d[0];
        for c in d.iter().take(self.dim).skip(1) {
            n2 += c * c;
        }
        n2.sqrt()
    }

    /// `Triangle::area`: unsigned in 3D, signed (shoelace) in 2D.
    pub fn triangle_area(&self, a: usize, b: usize, c: usize) -> f64 {
        let (n0, n1, n2) = (self.points[a], self.points[b], self.points[c]);
        if self.dim >= 3 {
            let cr = cross(sub(n1, n0), sub(n2, n0));
            0.5 * dot(cr, cr).sqrt()
        } else {
            0.5 * (n0[0] * n1[1] + n1[0] * n2[1] + n2[0] * n0[1] - n1[0] * n0[1] - n2[0] * n1[1] - n0[0] * n2[1])
        }
    }

    /// `Quad::area`: two triangles `(0,1,2)` and `(0,2,3)`.
    pub fn quad_area(&self, q: &[usize]) -> f64 {
        self.triangle_area(q[0], q[1], q[2]) + self.triangle_area(q[0], q[2], q[3])
    }

    /// `Tetrahedron::volume` (absolute value of the signed volume).
    pub fn tetra_volume(&self, a: usize, b: usize, c: usize, d: usize) -> f64 {
        let (n0, n1, n2, n3) = (self.points[a], self.points[b], self.points[c], self.points[d]);
        (dot(cross(sub(n1, n0), sub(n2, n0)), sub(n3, n0)) / 6.0).abs()
    }

    /// `Hexahedron::volume`: sum of six tetrahedra.
    pub fn hexa_volume(&self, h: &[usize]) -> f64 {
        self.tetra_volume(h[0], h[5], h[1], h[6])
            + self.tetra_volume(h[0], h[1], h[3], h[6])
            + self.tetra_volume(h[1], h[3], h[6], h[2])
            + self.tetra_volume(h[6], h[3], h[0], h[7])
            + self.tetra_volume(h[6], h[7], h[0], h[5])
            + self.tetra_volume(h[7], h[5], h[4], h[0])
    }

    /// Length, area or volume of an element of type `t` with vertices `v`.
    pub fn measure(&self, t: ElementType, v: &[usize]) -> f64 {
        match t {
            ElementType::Edge => self.edge_length(v[0], v[1]),
            ElementType::Triangle => self.triangle_area(v[0], v[1], v[2]),
            ElementType::Quad => self.quad_area(v),
            ElementType::Tetrahedron => self.tetra_volume(v[0], v[1], v[2], v[3]),
            ElementType::Hexahedron => self.hexa_volume(v),
        }
    }
}

/// The state whose positions give the element measures: the `geometryState` link, else the
/// first mechanical state found from the topology's node upwards (SOFA's `checkTopology`). Its
/// template must be `expected` (SOFA's `GeometricalTypes`).
pub fn geometry_state(cx: &InitCtx, topology: ComponentId, expected: Layout) -> SimResult<StateId> {
    let comp = match cx.link_targets("geometryState").first() {
        Some(&c) => c,
        None => {
            let node = cx.scene.entry(topology).node;
            cx.scene.find_up(node, role::MECHANICAL_STATE).ok_or_else(|| {
                cx.error(format!("no mechanical state found for the geometry of {}", cx.scene.entry(topology).label()))
                    .hint("add a MechanicalObject in the topology's node or set `geometryState=\"@...\"`")
            })?
        }
    };
    let s = cx.scene.state_of(comp).ok_or_else(|| cx.error(format!("geometryState: {} is not a mechanical state", cx.scene.entry(comp).label())))?;
    let layout = cx.state_layout(s);
    if layout != expected {
        return Err(cx
            .error(format!(
                "the geometry state {} has template {}, but this mass expects {} (templates mismatch)",
                cx.scene.entry(comp).label(),
                layout.name(),
                expected.name()
            ))
            .hint("give the mass a template `Mass,Geometry` matching both states (e.g. template=\"Vec1d,Vec3d\")"));
    }
    Ok(s)
}

/// Reads the geometry used for the element measures: rest positions when `on_rest` (positions
/// if the state has none), else the positions; checks that every element vertex exists.
pub fn read_geometry(cx: &InitCtx, s: StateId, on_rest: bool, mesh: &MeshData, t: ElementType) -> SimResult<Geometry> {
    let layout = cx.state_layout(s);
    let coords = if on_rest && !cx.read_vec(s, VecId::REST_POSITION).is_empty() {
        cx.read_vec(s, VecId::REST_POSITION)
    } else {
        cx.read_vec(s, VecId::POSITION)
    };
    let g = Geometry::from_coords(coords, layout);
    let n = g.len();
    if let Some((k, v, bad)) = t.first_vertex_beyond(mesh, n) {
        return Err(cx
            .error(format!("{} {k} {v:?} refers to point {bad}, but the geometry state has {n} points", t.name()))
            .hint("the topology and the MechanicalObject must describe the same points (is the MechanicalObject initialised before the mass?)"));
    }
    Ok(g)
}

/// SOFA's `getNbPoints` of a mesh topology: its point count, else one more than the largest
/// index of its element lists.
pub fn nb_points(mesh: &MeshData) -> usize {
    if !mesh.points.is_empty() {
        return mesh.points.len();
    }
    let max = [
        mesh.edges.iter().flatten().max(),
        mesh.triangles.iter().flatten().max(),
        mesh.quads.iter().flatten().max(),
        mesh.tetrahedra.iter().flatten().max(),
        mesh.hexahedra.iter().flatten().max(),
    ]
    .into_iter()
    .flatten()
    .max();
    max.map_or(0, |m| m + 1)
}

/// `m·v` for a row-major 3×3 matrix, rows summed left to right.
#[inline]
pub fn mat_vec(m: &[[f64; 3]; 3], v: &[f64]) -> [f64; 3] {
    [
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    ]
}

/// Sum in index order (`std::accumulate`).
#[inline]
pub fn sum(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |a, &x| a + x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo3(points: &[[f64; 3]]) -> Geometry {
        Geometry { dim: 3, points: points.to_vec() }
    }

    const CUBE: [[f64; 3]; 8] =
        [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]];

    #[test]
    fn measures_of_unit_elements() {
        let g = geo3(&CUBE);
        assert_eq!(g.edge_length(0, 6), 3f64.sqrt());
        assert_eq!(g.triangle_area(0, 1, 2), 0.5);
        assert_eq!(g.quad_area(&[0, 1, 2, 3]), 1.0);
        assert!((g.tetra_volume(0, 1, 3, 4) - 1.0 / 6.0).abs() < 1e-16);
        assert_eq!(g.tetra_volume(0, 3, 1, 4), g.tetra_volume(0, 1, 3, 4));
        assert!((g.hexa_volume(&[0, 1, 2, 3, 4, 5, 6, 7]) - 1.0).abs() < 1e-15);
        // a box 2×3×4
        let b: Vec<[f64; 3]> = CUBE.iter().map(|p| [2.0 * p[0], 3.0 * p[1], 4.0 * p[2]]).collect();
        assert!((geo3(&b).hexa_volume(&[0, 1, 2, 3, 4, 5, 6, 7]) - 24.0).abs() < 1e-13);
    }

    #[test]
    fn planar_triangle_area_is_signed() {
        let g = Geometry { dim: 2, points: vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 1.0, 0.0]] };
        assert_eq!(g.triangle_area(0, 1, 2), 1.0);
        assert_eq!(g.triangle_area(0, 2, 1), -1.0);
    }

    #[test]
    fn geometry_from_rigid_and_1d_states() {
        let g = Geometry::from_coords(&[1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 4.0, 6.0, 3.0, 0.0, 0.0, 0.0, 1.0], Layout::Rigid3);
        assert_eq!(g.points, vec![[1.0, 2.0, 3.0], [4.0, 6.0, 3.0]]);
        assert_eq!(g.edge_length(0, 1), 5.0);
        let g = Geometry::from_coords(&[1.0, -2.0], Layout::Vec1);
        assert_eq!((g.dim, g.edge_length(0, 1)), (1, 3.0));
    }

    #[test]
    fn element_edges_follow_sofa_tables() {
        // edges given in an arbitrary order and orientation
        let mesh = MeshData {
            edges: vec![[3, 2], [0, 1], [2, 0], [1, 2], [3, 0], [1, 3], [1, 0]],
            tetrahedra: vec![[0, 1, 2, 3]],
            triangles: vec![[0, 1, 2]],
            quads: vec![[0, 1, 2, 3]],
            ..Default::default()
        };
        let t = edges_in_elements(&mesh, ElementType::Tetrahedron).unwrap();
        // (0,1) (0,2) (0,3) (1,2) (1,3) (2,3); the duplicate [1,0] is never chosen
        assert_eq!(t.of(0), &[1, 2, 4, 3, 5, 0]);
        let tri = edges_in_elements(&mesh, ElementType::Triangle).unwrap();
        assert_eq!(tri.of(0), &[3, 2, 1]);
        let q = edges_in_elements(&mesh, ElementType::Quad).unwrap();
        assert_eq!(q.of(0), &[3, 0, 4, 1]);
        let mut missing = mesh.clone();
        missing.edges.retain(|e| *e != [1, 3]);
        assert_eq!(edges_in_elements(&missing, ElementType::Tetrahedron), Err(MissingEdge { element: 0, a: 1, b: 3 }));
    }

    #[test]
    fn nb_points_without_positions() {
        let mesh = MeshData { tetrahedra: vec![[0, 1, 2, 7]], ..Default::default() };
        assert_eq!(nb_points(&mesh), 8);
        assert_eq!(nb_points(&MeshData::default()), 0);
    }
}

/// Scene-building helpers for the tests of the masses.
#[cfg(test)]
pub(crate) mod testing {
    use settee_core::mechanics::{assemble, MechScope};
    use settee_core::simulation::init_root;
    use settee_core::{Attr, ComponentId, Factory, ForceField, ForceIo, Mass, Mbk, MechParams, Scene, SimResult, StateId, VecId};
    use settee_linalg::MatrixBuilder;

    pub const CUBE_POS: &str = "0 0 0  1 0 0  1 1 0  0 1 0  0 0 1  1 0 1  1 1 1  0 1 1";
    pub const HEXA: &str = "0 1 2 3 4 5 6 7";
    /// A regular tetrahedron of edge 2√2 and volume 8/3.
    pub const TETRA_POS: &str = "1 1 1  1 -1 -1  -1 1 -1  -1 -1 1";
    pub const TETRA_VOLUME: f64 = 8.0 / 3.0;
    pub const SQUARE_POS: &str = "0 0 0  1 0 0  1 1 0  0 1 0";
    pub const SQUARE_TRIANGLES: &str = "0 1 2  0 2 3";
    /// The unit cube split into the 6 tetrahedra of SOFA's hexahedron volume formula.
    pub const CUBE_TETRAS: &str = "0 5 1 6  0 1 3 6  1 3 6 2  6 3 0 7  6 7 0 5  7 5 4 0";

    pub fn attrs(pairs: &[(&str, &str)]) -> Vec<Attr> {
        pairs.iter().map(|(n, v)| Attr { name: n.to_string(), value: v.to_string(), pos: None }).collect()
    }

    pub fn factory() -> Factory {
        settee_statecontainer::factory_with(&[crate::register, settee_topology::register, settee_animationloop::register])
    }

    pub struct Built {
        pub scene: Scene,
        pub mass: ComponentId,
        pub state: StateId,
    }

    /// One node: `MechanicalObject` (template `mo_template`), a topology and a mass.
    pub fn build(
        mo_template: Option<&str>,
        mo: &[(&str, &str)],
        topo_class: &str,
        topo: &[(&str, &str)],
        mass_class: &str,
        mass_template: Option<&str>,
        mass: &[(&str, &str)],
    ) -> SimResult<Built> {
        let f = factory();
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        let mut mo_attrs = vec![("name", "dofs")];
        mo_attrs.extend_from_slice(mo);
        let mo = f.create(&mut scene, Scene::ROOT, "MechanicalObject", mo_template, attrs(&mo_attrs), None, dir).expect("state");
        f.create(&mut scene, Scene::ROOT, topo_class, None, attrs(topo), None, dir).expect("topology");
        let mass = f.create(&mut scene, Scene::ROOT, mass_class, mass_template, attrs(mass), None, dir).expect("mass");
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        init_root(&mut scene, &f)?;
        let state = scene.state_of(mo).unwrap();
        Ok(Built { scene, mass, state })
    }

    /// A mass on a MeshTopology given by `topo` (the state takes the topology's positions).
    pub fn on_mesh(mass_class: &str, topo: &[(&str, &str)], mass: &[(&str, &str)]) -> SimResult<Built> {
        build(None, &[], "MeshTopology", topo, mass_class, None, mass)
    }

    pub fn params() -> MechParams {
        MechParams { dt: 0.01, time: 0.0, gravity: [0.1, -9.81, 0.3] }
    }

    impl Built {
        pub fn size(&self) -> usize {
            self.scene.store.get(self.state).size
        }
        pub fn deriv_size(&self) -> usize {
            self.scene.store.get(self.state).layout.deriv_size()
        }
        pub fn warnings(&self) -> Vec<String> {
            self.scene.messages.iter().filter(|m| m.severity == settee_core::Severity::Warning).map(|m| m.message.clone()).collect()
        }
        /// The assembled `factor·M`, dense row-major.
        pub fn matrix(&mut self, factor: f64) -> SimResult<Vec<f64>> {
            let scope = MechScope::build(&self.scene, Scene::ROOT);
            let mut mb = MatrixBuilder::new(scope.size);
            assemble(&mut self.scene, &scope, Mbk { m: factor, b: 0.0, k: 0.0 }, &mut mb)?;
            Ok(mb.matrix().to_dense())
        }
        /// `M·dx` through the mass's `add_mdx`.
        pub fn mdx(&self, dx: &[f64], factor: f64) -> Vec<f64> {
            let mut r = vec![0.0; dx.len()];
            self.scene.role::<dyn Mass>(self.mass).unwrap().add_mdx(&mut r, dx, factor);
            r
        }
        /// The gravity force of the mass with [`params`].
        pub fn gravity_force(&mut self) -> Vec<f64> {
            let n = self.size() * self.deriv_size();
            let mut f = vec![0.0; n];
            let x = self.scene.store.get(self.state).read(VecId::POSITION).to_vec();
            let mut io = ForceIo { f: vec![f.as_mut_slice()].into(), x: vec![x.as_slice()].into(), v: vec![x.as_slice()].into() };
            self.scene.role_mut::<dyn ForceField>(self.mass).unwrap().add_force(&params(), &mut io).unwrap();
            drop(io);
            f
        }
    }

    /// Dense `A·x`.
    pub fn dense_mul(a: &[f64], x: &[f64]) -> Vec<f64> {
        let n = x.len();
        (0..n).map(|i| (0..n).map(|j| a[i * n + j] * x[j]).sum()).collect()
    }

    /// A deterministic test vector.
    pub fn test_vector(n: usize) -> Vec<f64> {
        (0..n).map(|i| ((i * 7 + 3) % 11) as f64 * 0.25 - 1.1).collect()
    }

    pub fn assert_close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!((x - y).abs() <= tol * (1.0 + y.abs()), "entry {i}: {x} vs {y}\n{a:?}\n{b:?}");
        }
    }
}
