//! `BarycentricMapping` (Vec3d → Vec3d): each output point is a fixed combination of the nodes of
//! the input element that contains it (spec §5.4).
//!
//! At init a *mapper* chosen from the input topology's class locates every output point:
//!
//! * `RegularGridTopology` (with volume): the grid's `findCube`, else `findNearestCube`, on the
//!   grid geometry (origin and steps, not the state's positions);
//! * `SparseGridTopology`, `SparseGridRamificationTopology`: the sparse grid's `findCube`, else
//!   `findNearestCube`, through the lookup tables the topology publishes (Data `cellLocator`);
//! * dynamic containers (`…SetTopologyContainer`): the first non-empty of hexahedra, tetrahedra,
//!   quads, triangles, edges, searched through SOFA's spatial hash;
//! * anything else (`MeshTopology`, `GridTopology`, …): the Mesh mapper's exhaustive search over
//!   tetrahedra then hexahedra, else triangles then quads, else edges.
//!
//! Each point then keeps its *stencil*: the `(node, weight)` pairs in the order SOFA accumulates
//! them, so `apply`, `applyJ` and `applyJT` sum in SOFA's order. As in SOFA, nothing is mapped
//! during init (the mapper is created after the base class applied the mapping): the output keeps
//! its own positions until the first propagation.

use std::collections::HashMap;

use settee_core::collision::PointMapper;
use settee_core::component::{Mapping, SparseRows};
use settee_core::data::Value;
use settee_core::role::{MechanicalMapping, MechanicalState, Topology};
use settee_core::ConstraintRows;
use settee_core::{component, Component, InitCtx, Layout, MeshData, SimError, SimResult, StateId, VecId};

use crate::common::{
    add, apply_to_visual_at_init, check_layouts, check_len, cross, dot, invert3, mapping_ports, mat_vec, norm, resize_output, resolve_ports, scale,
    sub, v3, visual_rest_positions, MappingData, Ports, M3, V3,
};

/// The Data of the `RegularGridTopology` read here, as settee-topology's class declares them
/// (this crate does not depend on it; the crate's tests check this group against that class).
#[settee_core::data_group(data = {
    /// grid resolution: number of points per axis (attributes nx ny nz set it when all three are given)
    n: Fixed(3) as Reals = "2 2 2",
    /// min end of the diagonal (attributes xmin ymin zmin xmax ymax zmax set min and max when all six are given)
    min: Fixed(3) = "0 0 0",
    /// max end of the diagonal
    max: Fixed(3) = "1 1 1",
    /// position of grid point (0,0,0); computed from min/max unless set
    p0: Fixed(3) = "0 0 0",
})]
pub(crate) struct RegularGridData;

/// Which mapper located the points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MapperKind {
    #[default]
    None,
    RegularGrid,
    SparseGrid,
    Mesh,
    HexahedronSet,
    TetrahedronSet,
    QuadSet,
    TriangleSet,
    EdgeSet,
}

/// The location of one output point: the element found and its local coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Location {
    pub element: usize,
    pub coords: V3,
}

/// The locations of the output points and their stencils.
pub type Located = (Vec<Location>, Vec<Vec<(usize, f64)>>);

/// Maps points inside the elements of the input topology with barycentric (trilinear for hexahedra) weights.
///
/// The mapping.
#[component(
    module = "Sofa.Component.Mapping.Linear",
    roles = [Mapping, PointMapper],
    markers = [MechanicalMapping],
    templates = ["Vec3d,Vec3d"],
    template_rule = FromMapping,
    inherit = [MappingData, Self],
    data = {
        /// Use the rest position of the input and output models to initialize the mapping
        useRestPosition: Bool = "false",
    },
    links = {
        /// Input object to map (default: the state of the parent node, `@../`)
        #[node_or_state]
        input: MechanicalState,
        /// Output object to map: a mechanical state, or a visual model (default: the state of this node, `@./`)
        #[node_or_state]
        output: _,
        /// Input topology container (usually the surrounding domain).
        input_topology: Topology,
        /// Output topology container (usually the immersed domain).
        output_topology: Topology,
        /// Internal mapper created depending on the type of topology
        mapper: _,
    },
)]
#[derive(Clone, Default)]
pub struct BarycentricMapping {
    ports: Ports,
    n_in: usize,
    mapper: MapperKind,
    locations: Vec<Location>,
    /// `(input node, weight)` of each output point, in SOFA's accumulation order.
    stencils: Vec<Vec<(usize, f64)>>,
    /// The input topology's elements, for points placed while the scene runs (contact mappers).
    elements: MeshData,
    /// Points are placed by code ([`PointMapper`]), not located at init.
    placed_by_code: bool,
    /// Stencil buffers of points placed by code and cleared, reused by the next points.
    spare: Vec<Vec<(usize, f64)>>,
    /// Scratch lists of `apply_jt_constraints`: one row's DOFs, blocks and sorting order.
    jt_scratch: (Vec<usize>, Vec<f64>, Vec<usize>),
}

// ----- weights in SOFA's orders ------------------------------------------------------------------

// The stencils of one point are arrays: a contact mapper places points at every step, into
// buffers it keeps.
fn edge_stencil(e: [usize; 2], fx: f64) -> [(usize, f64); 2] {
    [(e[0], 1.0 - fx), (e[1], fx)]
}
fn triangle_stencil(t: [usize; 3], f: V3) -> [(usize, f64); 3] {
    [(t[0], 1.0 - f[0] - f[1]), (t[1], f[0]), (t[2], f[1])]
}
fn tetra_stencil(t: [usize; 4], f: V3) -> [(usize, f64); 4] {
    [(t[0], 1.0 - f[0] - f[1] - f[2]), (t[1], f[0]), (t[2], f[1]), (t[3], f[2])]
}
/// Mesh and grid mappers: corners 0, 1, 3, 2 then 4, 5, 7, 6.
fn quad_stencil_mesh(q: [usize; 4], f: V3) -> [(usize, f64); 4] {
    let (fx, fy) = (f[0], f[1]);
    [(q[0], (1.0 - fx) * (1.0 - fy)), (q[1], fx * (1.0 - fy)), (q[3], (1.0 - fx) * fy), (q[2], fx * fy)]
}
fn hexa_stencil_mesh(h: [usize; 8], f: V3) -> Vec<(usize, f64)> {
    let (fx, fy, fz) = (f[0], f[1], f[2]);
    vec![
        (h[0], (1.0 - fx) * (1.0 - fy) * (1.0 - fz)),
        (h[1], fx * (1.0 - fy) * (1.0 - fz)),
        (h[3], (1.0 - fx) * fy * (1.0 - fz)),
        (h[2], fx * fy * (1.0 - fz)),
        (h[4], (1.0 - fx) * (1.0 - fy) * fz),
        (h[5], fx * (1.0 - fy) * fz),
        (h[7], (1.0 - fx) * fy * fz),
        (h[6], fx * fy * fz),
    ]
}
/// Set mappers: corners in element order.
fn quad_stencil_set(q: [usize; 4], f: V3) -> Vec<(usize, f64)> {
    vec![(q[0], (1.0 - f[0]) * (1.0 - f[1])), (q[1], f[0] * (1.0 - f[1])), (q[2], f[0] * f[1]), (q[3], (1.0 - f[0]) * f[1])]
}
fn hexa_stencil_set(h: [usize; 8], f: V3) -> Vec<(usize, f64)> {
    vec![
        (h[0], (1.0 - f[0]) * (1.0 - f[1]) * (1.0 - f[2])),
        (h[1], f[0] * (1.0 - f[1]) * (1.0 - f[2])),
        (h[2], f[0] * f[1] * (1.0 - f[2])),
        (h[3], (1.0 - f[0]) * f[1] * (1.0 - f[2])),
        (h[4], (1.0 - f[0]) * (1.0 - f[1]) * f[2]),
        (h[5], f[0] * (1.0 - f[1]) * f[2]),
        (h[6], f[0] * f[1] * f[2]),
        (h[7], (1.0 - f[0]) * f[1] * f[2]),
    ]
}

// ----- element geometry --------------------------------------------------------------------------

/// Inverse of the matrix whose columns are the three basis edges (SOFA builds the rows, transposes
/// and inverts).
fn basis(e0: V3, e1: V3, e2: V3) -> Option<M3> {
    let rows = [e0, e1, e2];
    let mut t = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            t[i][j] = rows[j][i];
        }
    }
    invert3(&t)
}

fn pt(x: &[[f64; 3]], i: usize) -> V3 {
    x[i]
}

fn tetra_distance(v: V3) -> f64 {
    (-v[0]).max(-v[1]).max((-v[2]).max(v[0] + v[1] + v[2] - 1.0))
}
fn hexa_distance(v: V3) -> f64 {
    (-v[0]).max(-v[1]).max((-v[2]).max(v[0] - 1.0).max((v[1] - 1.0).max(v[2] - 1.0)))
}
fn triangle_distance(v: V3) -> f64 {
    (-v[0]).max(-v[1]).max((v[2].abs() - 0.01).max(v[0] + v[1] - 1.0))
}
fn quad_distance(v: V3) -> f64 {
    (-v[0]).max(-v[1]).max((v[1] - 1.0).max(v[0] - 1.0).max((v[2] - 0.01).max(-v[2] - 0.01)))
}

/// The elements of one kind, with what the point location needs.
struct Elements {
    nodes: Vec<Vec<usize>>,
    bases: Vec<M3>,
    centers: Vec<V3>,
    distance: fn(V3) -> f64,
}

fn singular(kind: &str, i: usize) -> SimError {
    SimError::new(format!("{kind} {i} is degenerate (flat or zero-size): points cannot be located in it"))
        .hint("check the input topology's element lists and the input positions")
}

/// The elements of `list`: `shape` gives each element's basis (`None` when degenerate) and centre
/// from its nodes and its first point.
fn elements<const N: usize>(
    x: &[V3],
    list: &[[usize; N]],
    kind: &str,
    distance: fn(V3) -> f64,
    shape: impl Fn(&[usize; N], V3) -> (Option<M3>, V3),
) -> SimResult<Elements> {
    let mut e = Elements { nodes: Vec::new(), bases: Vec::new(), centers: Vec::new(), distance };
    for (i, n) in list.iter().enumerate() {
        let (b, c) = shape(n, pt(x, n[0]));
        let b = b.ok_or_else(|| singular(kind, i))?;
        e.nodes.push(n.to_vec());
        e.bases.push(b);
        e.centers.push(c);
    }
    Ok(e)
}

fn tetra_elements(x: &[V3], tetras: &[[usize; 4]]) -> SimResult<Elements> {
    elements(x, tetras, "tetrahedron", tetra_distance, |t, p0| {
        let b = basis(sub(pt(x, t[1]), p0), sub(pt(x, t[2]), p0), sub(pt(x, t[3]), p0));
        (b, scale(add(add(add(p0, pt(x, t[1])), pt(x, t[2])), pt(x, t[3])), 0.25))
    })
}

fn hexa_elements(x: &[V3], hexas: &[[usize; 8]]) -> SimResult<Elements> {
    elements(x, hexas, "hexahedron", hexa_distance, |h, p0| {
        let b = basis(sub(pt(x, h[1]), p0), sub(pt(x, h[3]), p0), sub(pt(x, h[4]), p0));
        let mut c = p0;
        for &k in &h[1..] {
            c = add(c, pt(x, k));
        }
        (b, scale(c, 0.125))
    })
}

fn triangle_elements(x: &[V3], tris: &[[usize; 3]]) -> SimResult<Elements> {
    elements(x, tris, "triangle", triangle_distance, |t, p0| {
        let (a, b) = (sub(pt(x, t[1]), p0), sub(pt(x, t[2]), p0));
        let s = add(add(p0, pt(x, t[1])), pt(x, t[2]));
        (basis(a, b, cross(a, b)), [s[0] / 3.0, s[1] / 3.0, s[2] / 3.0])
    })
}

fn quad_elements(x: &[V3], quads: &[[usize; 4]]) -> SimResult<Elements> {
    elements(x, quads, "quad", quad_distance, |q, p0| {
        let (a, b) = (sub(pt(x, q[1]), p0), sub(pt(x, q[3]), p0));
        (basis(a, b, cross(a, b)), scale(add(add(add(p0, pt(x, q[1])), pt(x, q[2])), pt(x, q[3])), 0.25))
    })
}

/// SOFA's element test: local coordinates from the first node, the element's distance, the
/// squared distance to its centre when outside; the element is kept when strictly better.
fn check_element(els: &Elements, e: usize, p: V3, x: &[V3], best: &mut (f64, Option<usize>, V3)) {
    let v = mat_vec(&els.bases[e], sub(p, x[els.nodes[e][0]]));
    let mut d = (els.distance)(v);
    if d > 0.0 {
        let c = sub(p, els.centers[e]);
        d = dot(c, c);
    }
    if d < best.0 {
        *best = (d, Some(e), v);
    }
}

// ----- mappers -----------------------------------------------------------------------------------

/// One kind of element of the Mesh mapper: the elements, their nodes and their stencil.
type Kind<'a, const N: usize> = (&'a Elements, &'a [[usize; N]], fn([usize; N], V3) -> Vec<(usize, f64)>);

/// The Mesh mapper's exhaustive search over two element kinds (tetrahedra then hexahedra, or
/// triangles then quads): an element of the second kind wins when it is strictly better than the
/// best of the first; element indices of the second kind follow those of the first.
fn locate_in_two_kinds<const A: usize, const B: usize>(first: Kind<A>, second: Kind<B>, xin: &[V3], xout: &[V3]) -> SimResult<Located> {
    let mut locs = Vec::with_capacity(xout.len());
    let mut stencils = Vec::with_capacity(xout.len());
    let nt = first.1.len();
    for &p in xout {
        let mut bt = (1e10, None, [0.0; 3]);
        for t in 0..nt {
            check_element(first.0, t, p, xin, &mut bt);
        }
        let mut bs = (bt.0, None, [0.0; 3]);
        for q in 0..second.1.len() {
            check_element(second.0, q, p, xin, &mut bs);
        }
        let (element, coords) = match (bs.1, bt.1) {
            (Some(q), _) => (nt + q, bs.2),
            (None, Some(t)) => (t, bt.2),
            (None, None) => return Err(SimError::new(format!("point {p:?} is too far (> 1e5) from every element of the input topology"))),
        };
        locs.push(Location { element, coords });
        stencils.push(if element < nt { (first.2)(first.1[element], coords) } else { (second.2)(second.1[element - nt], coords) });
    }
    Ok((locs, stencils))
}

/// The Mesh mapper (MeshTopology and other constant topologies): exhaustive search.
fn mesh_mapper(mesh: &MeshData, xin: &[V3], xout: &[V3]) -> SimResult<Located> {
    if !mesh.tetrahedra.is_empty() || !mesh.hexahedra.is_empty() {
        let tets = tetra_elements(xin, &mesh.tetrahedra)?;
        let hexs = hexa_elements(xin, &mesh.hexahedra)?;
        locate_in_two_kinds((&tets, &mesh.tetrahedra, |t, f| tetra_stencil(t, f).to_vec()), (&hexs, &mesh.hexahedra, hexa_stencil_mesh), xin, xout)
    } else if !mesh.triangles.is_empty() || !mesh.quads.is_empty() {
        let tris = triangle_elements(xin, &mesh.triangles)?;
        let quads = quad_elements(xin, &mesh.quads)?;
        locate_in_two_kinds(
            (&tris, &mesh.triangles, |t, f| triangle_stencil(t, f).to_vec()),
            (&quads, &mesh.quads, |q, f| quad_stencil_mesh(q, f).to_vec()),
            xin,
            xout,
        )
    } else if !mesh.edges.is_empty() {
        let mut locs = Vec::with_capacity(xout.len());
        let mut stencils = Vec::with_capacity(xout.len());
        let lengths: Vec<f64> = mesh.edges.iter().map(|e| norm(sub(xin[e[1]], xin[e[0]]))).collect();
        let units: Vec<V3> = mesh
            .edges
            .iter()
            .map(|e| {
                let v = sub(xin[e[1]], xin[e[0]]);
                let n = norm(v);
                if n > f64::EPSILON {
                    [v[0] / n, v[1] / n, v[2] / n]
                } else {
                    v
                }
            })
            .collect();
        for &p in xout {
            let mut coef = 0.0;
            let mut chosen = None;
            for (e, edge) in mesh.edges.iter().enumerate() {
                coef = dot(units[e], sub(p, xin[edge[0]])) / lengths[e];
                if (0.0..=1.0).contains(&coef) {
                    chosen = Some(e);
                    break;
                }
            }
            let e = chosen.unwrap_or(mesh.edges.len() - 1);
            locs.push(Location { element: e, coords: [coef, 0.0, 0.0] });
            stencils.push(edge_stencil(mesh.edges[e], coef).to_vec());
        }
        Ok((locs, stencils))
    } else {
        Err(SimError::new("the input topology has no elements (no tetrahedra, hexahedra, triangles, quads or edges)"))
    }
}

/// Dynamic-container mappers: SOFA's spatial hash over the elements, cell size = mean edge length.
fn set_mapper(kind: MapperKind, mesh: &MeshData, xin: &[V3], xout: &[V3]) -> SimResult<Located> {
    let els = match kind {
        MapperKind::HexahedronSet => hexa_elements(xin, &mesh.hexahedra)?,
        MapperKind::TetrahedronSet => tetra_elements(xin, &mesh.tetrahedra)?,
        MapperKind::QuadSet => quad_elements(xin, &mesh.quads)?,
        MapperKind::TriangleSet => triangle_elements(xin, &mesh.triangles)?,
        // Edges: SOFA's EdgeSet mapper has no distance test; the Mesh mapper's edge rule is used.
        _ => return mesh_mapper(&MeshData { edges: mesh.edges.clone(), ..Default::default() }, xin, xout),
    };
    let stencil = |e: usize, f: V3| -> Vec<(usize, f64)> {
        let n = &els.nodes[e];
        match kind {
            MapperKind::HexahedronSet => hexa_stencil_set([n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]], f),
            MapperKind::TetrahedronSet => tetra_stencil([n[0], n[1], n[2], n[3]], f).to_vec(),
            MapperKind::QuadSet => quad_stencil_set([n[0], n[1], n[2], n[3]], f),
            _ => triangle_stencil([n[0], n[1], n[2]], f).to_vec(),
        }
    };

    // Cell size: mean length of the topology's edges, else of the elements' first edges.
    let mut avg = 0.0;
    if !mesh.edges.is_empty() {
        for e in &mesh.edges {
            avg += norm(sub(xin[e[0]], xin[e[1]]));
        }
        avg /= mesh.edges.len() as f64;
    } else {
        for n in &els.nodes {
            avg += norm(sub(xin[n[0]], xin[n[1]]));
        }
        avg /= els.nodes.len() as f64;
    }
    let cell = avg;
    let conv = 1.0 / cell;
    let grid = |p: V3| -> [i64; 3] { [(p[0] * conv).floor() as i64, (p[1] * conv).floor() as i64, (p[2] * conv).floor() as i64] };
    let mut table: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
    for (e, n) in els.nodes.iter().enumerate() {
        let (mut lo, mut hi) = (xin[n[0]], xin[n[0]]);
        for &k in n {
            for c in 0..3 {
                lo[c] = lo[c].min(xin[k][c]);
                hi[c] = hi[c].max(xin[k][c]);
            }
        }
        let (a, b) = (grid(lo), grid(hi));
        for i in a[0]..=b[0] {
            for j in a[1]..=b[1] {
                for k in a[2]..=b[2] {
                    table.entry([i, j, k]).or_default().push(e);
                }
            }
        }
    }

    let mut locs = Vec::with_capacity(xout.len());
    let mut stencils = Vec::with_capacity(xout.len());
    for &p in xout {
        let mut best = (f64::MAX, None, [0.0; 3]);
        let g = grid(p);
        if let Some(list) = table.get(&g) {
            for &e in list {
                check_element(&els, e, p, xin, &mut best);
            }
        }
        if best.1.is_none() {
            for e in 0..els.nodes.len() {
                check_element(&els, e, p, xin, &mut best);
            }
        } else if best.0.abs() > cell / 2.0 {
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        if let Some(list) = table.get(&[g[0] + dx, g[1] + dy, g[2] + dz]) {
                            for &e in list {
                                check_element(&els, e, p, xin, &mut best);
                            }
                        }
                    }
                }
            }
        }
        let Some(e) = best.1 else {
            return Err(SimError::new(format!("point {p:?} could not be located in the input topology")));
        };
        locs.push(Location { element: e, coords: best.2 });
        stencils.push(stencil(e, best.2));
    }
    Ok((locs, stencils))
}

/// A regular grid's geometry: points per axis, origin, steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridGeometry {
    pub n: [usize; 3],
    pub p0: V3,
    pub d: V3,
}

impl GridGeometry {
    pub fn point(&self, x: usize, y: usize, z: usize) -> V3 {
        let mut out = [0.0; 3];
        let step = [[self.d[0], 0.0, 0.0], [0.0, self.d[1], 0.0], [0.0, 0.0, self.d[2]]];
        for c in 0..3 {
            out[c] = ((self.p0[c] + step[0][c] * x as f64) + step[1][c] * y as f64) + step[2][c] * z as f64;
        }
        out
    }

    fn index(&self, x: usize, y: usize, z: usize) -> usize {
        x + self.n[0] * (y + self.n[1] * z)
    }

    /// The cell of `pos` and the local coordinates: per axis, `snap` turns the `floor` of the grid
    /// coordinate into the cell index (`None`: no cell).
    fn cell_of(&self, pos: V3, snap: impl Fn(f64, usize) -> Option<f64>) -> Option<([usize; 3], V3)> {
        let p = sub(pos, self.p0);
        let steps = [[self.d[0], 0.0, 0.0], [0.0, self.d[1], 0.0], [0.0, 0.0, self.d[2]]];
        let mut cellc = [0usize; 3];
        let mut f = [0.0; 3];
        for a in 0..3 {
            let s = steps[a];
            let inv2 = 1.0 / dot(s, s);
            let g = dot(p, s) * inv2;
            let i = snap(g.floor(), a)?;
            cellc[a] = i as usize;
            f[a] = g - i;
        }
        Some((cellc, f))
    }

    /// SOFA's `findCube`: the cell `(ix, iy, iz)` containing `pos` (each `floor` of the grid
    /// coordinate in `0..=n-2`) and the local coordinates, `None` outside the grid.
    pub fn find(&self, pos: V3) -> Option<([usize; 3], V3)> {
        self.cell_of(pos, |i, a| (i >= 0.0 && i <= self.n[a] as f64 - 2.0).then_some(i))
    }

    /// SOFA's `findCube`, then `findNearestCube`: the cell `(ix, iy, iz)` and the local coordinates.
    pub fn locate(&self, pos: V3) -> ([usize; 3], V3) {
        let nearest = self.cell_of(pos, |i, a| Some((i as i64).clamp(0, self.n[a] as i64 - 2) as f64));
        nearest.expect("the nearest cell always exists")
    }

    /// Corners of cell `(x, y, z)` in SOFA's hexahedron order.
    pub fn corners(&self, [x, y, z]: [usize; 3]) -> [usize; 8] {
        [
            self.index(x, y, z),
            self.index(x + 1, y, z),
            self.index(x + 1, y + 1, z),
            self.index(x, y + 1, z),
            self.index(x, y, z + 1),
            self.index(x + 1, y, z + 1),
            self.index(x + 1, y + 1, z + 1),
            self.index(x, y + 1, z + 1),
        ]
    }
}

/// The geometry of a `RegularGridTopology` from its Data (`n`, `p0`, `min`, `max`), checked against
/// its points.
fn grid_geometry(cx: &InitCtx, topo: settee_core::ComponentId, mesh: &MeshData) -> SimResult<GridGeometry> {
    let d = &cx.scene.entry(topo).data;
    let nr = d.get(RegularGridData::N);
    let n = [0, 1, 2].map(|a| nr.get(a).copied().unwrap_or(2.0).max(1.0) as usize);
    let p0 = d.get(RegularGridData::P0);
    let (min, max) = (d.get(RegularGridData::MIN), d.get(RegularGridData::MAX));
    let mut step = [0.0; 3];
    for a in 0..3 {
        step[a] = if n[a] > 1 { (max[a] - min[a]) / (n[a] - 1) as f64 } else { max[a] - min[a] };
    }
    let mut g = GridGeometry { n, p0, d: step };
    let count = n[0] * n[1] * n[2];
    let last = [n[0] - 1, n[1] - 1, n[2] - 1];
    let matches =
        |g: &GridGeometry| mesh.points.len() == count && g.point(last[0], last[1], last[2]) == mesh.points[g.index(last[0], last[1], last[2])];
    if !matches(&g) && mesh.points.len() == count {
        // The step was computed from another resolution (cellWidth): recover it from the points.
        let lp = mesh.points[g.index(last[0], last[1], last[2])];
        for a in 0..3 {
            if n[a] > 1 {
                g.d[a] = (lp[a] - p0[a]) / (n[a] - 1) as f64;
            }
        }
    }
    if mesh.points.len() != count {
        return Err(SimError::new(format!("the grid has {} points but its resolution {:?} gives {count}", mesh.points.len(), n)));
    }
    Ok(g)
}

fn grid_mapper(g: &GridGeometry, xout: &[V3]) -> Located {
    let mut locs = Vec::with_capacity(xout.len());
    let mut stencils = Vec::with_capacity(xout.len());
    for &p in xout {
        let (c, f) = g.locate(p);
        let element = c[0] + (g.n[0] - 1) * (c[1] + (g.n[1] - 1) * c[2]);
        locs.push(Location { element, coords: f });
        stencils.push(hexa_stencil_mesh(g.corners(c), f));
    }
    (locs, stencils)
}

// ----- SparseGrid mapper ------------------------------------------------------------------------

/// Name of the Data in which the sparse-grid topologies publish their cell lookup tables.
const SPARSE_LOCATOR: &str = "cellLocator";

/// A sparse grid's point location (SOFA's `findCube`, then `findNearestCube`), read from the
/// topology's `cellLocator` Data (written by settee-topology's `CellLocator::to_reals`):
///
/// * find: the cell of `lookup` containing the point, mapped to a hexahedron by `cells`; the
///   coordinates are the point's cell coordinates in `fractions` when given and the point lies
///   in it, else in `lookup`;
/// * nearest: the candidate `(c0, c6, hexahedron)` whose centre `(c0 + c6)/2` is strictly
///   nearest in single precision (starting from 99999999), else `fallback`; coordinates
///   `(p - c0)/(c6 - c0)`, or the clamped cell coordinates in `fractions` when given.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseLocator {
    pub lookup: GridGeometry,
    pub fractions: Option<GridGeometry>,
    pub cells: Vec<Option<usize>>,
    pub fallback: Option<(V3, V3, usize)>,
    pub nearest: Vec<(V3, V3, usize)>,
}

impl SparseLocator {
    /// Decodes the flat encoding (format 1): format, fractions flag, lookup grid (`n`, `p0`, `d`),
    /// fractions grid, cell count and cells (`-1`: none), fallback flag and fallback triple,
    /// candidate count and candidates.
    pub fn parse(v: &[f64]) -> Result<SparseLocator, String> {
        let mut at = 0usize;
        let mut next = |what: &str| -> Result<f64, String> {
            let x = v.get(at).copied().ok_or_else(|| format!("the cell lookup tables end early (reading {what})"))?;
            at += 1;
            Ok(x)
        };
        let index = |x: f64, what: &str| -> Result<usize, String> {
            if x >= 0.0 && x.fract() == 0.0 && x < 9.0e15 {
                Ok(x as usize)
            } else {
                Err(format!("invalid {what} {x} in the cell lookup tables"))
            }
        };
        if next("the format")? != 1.0 {
            return Err("unknown format of the cell lookup tables".into());
        }
        let has_fractions = next("the fractions flag")? != 0.0;
        let grid = |next: &mut dyn FnMut(&str) -> Result<f64, String>| -> Result<GridGeometry, String> {
            let mut n = [0usize; 3];
            for a in &mut n {
                *a = index(next("a resolution")?, "resolution")?;
            }
            let mut g = GridGeometry { n, p0: [0.0; 3], d: [0.0; 3] };
            for c in 0..3 {
                g.p0[c] = next("an origin")?;
            }
            for c in 0..3 {
                g.d[c] = next("a step")?;
            }
            Ok(g)
        };
        let lookup = grid(&mut next)?;
        let fractions = grid(&mut next)?;
        let count = index(next("the cell count")?, "cell count")?;
        let cells_needed = lookup.n.iter().map(|&a| a.saturating_sub(1)).product::<usize>();
        if lookup.n.iter().any(|&a| a < 2) || count != cells_needed {
            return Err(format!("the lookup grid {:?} does not match its {count} cells", lookup.n));
        }
        let mut cells = Vec::with_capacity(count);
        for _ in 0..count {
            let c = next("a cell")?;
            cells.push(if c < 0.0 { None } else { Some(index(c, "hexahedron")?) });
        }
        let triple = |next: &mut dyn FnMut(&str) -> Result<f64, String>| -> Result<(V3, V3, usize), String> {
            let mut c0 = [0.0; 3];
            let mut c6 = [0.0; 3];
            for x in &mut c0 {
                *x = next("a corner")?;
            }
            for x in &mut c6 {
                *x = next("a corner")?;
            }
            Ok((c0, c6, index(next("a hexahedron")?, "hexahedron")?))
        };
        let fallback = if next("the fallback flag")? != 0.0 { Some(triple(&mut next)?) } else { None };
        let nb = index(next("the candidate count")?, "candidate count")?;
        let mut nearest = Vec::with_capacity(nb.min(v.len()));
        for _ in 0..nb {
            nearest.push(triple(&mut next)?);
        }
        if has_fractions && fractions.n.iter().any(|&a| a < 2) {
            return Err(format!("the coordinate grid {:?} has an axis with fewer than 2 points", fractions.n));
        }
        Ok(SparseLocator { lookup, fractions: has_fractions.then_some(fractions), cells, fallback, nearest })
    }

    /// The hexahedron containing `p` and the coordinates of `p` in it (SOFA's `findCube`).
    pub fn find(&self, p: V3) -> Option<(usize, V3)> {
        let (c, mut f) = self.lookup.find(p)?;
        let h = self.cells[c[0] + (self.lookup.n[0] - 1) * (c[1] + (self.lookup.n[1] - 1) * c[2])]?;
        if let Some((_, f2)) = self.fractions.as_ref().and_then(|g| g.find(p)) {
            f = f2;
        }
        Some((h, f))
    }

    /// The nearest boundary hexahedron and the coordinates of `p` (SOFA's `findNearestCube`).
    pub fn find_nearest(&self, p: V3) -> Option<(usize, V3)> {
        let mut best = self.fallback?;
        let mut lgmin = 99_999_999.0f32;
        for cand in &self.nearest {
            let centre = [(cand.0[0] + cand.1[0]) * 0.5, (cand.0[1] + cand.1[1]) * 0.5, (cand.0[2] + cand.1[2]) * 0.5];
            let lg = norm(sub(p, centre)) as f32;
            if lg < lgmin {
                lgmin = lg;
                best = *cand;
            }
        }
        let f = match &self.fractions {
            Some(g) => g.locate(p).1,
            None => {
                let (r, d) = (sub(p, best.0), sub(best.1, best.0));
                [r[0] / d[0], r[1] / d[1], r[2] / d[2]]
            }
        };
        Some((best.2, f))
    }
}

fn sparse_grid_mapper(loc: &SparseLocator, mesh: &MeshData, xout: &[V3]) -> SimResult<Located> {
    let mut locs = Vec::with_capacity(xout.len());
    let mut stencils = Vec::with_capacity(xout.len());
    for &p in xout {
        let Some((h, f)) = loc.find(p).or_else(|| loc.find_nearest(p)) else {
            return Err(SimError::new(format!("point {p:?} could not be located in the sparse grid")));
        };
        let hexa = mesh
            .hexahedra
            .get(h)
            .ok_or_else(|| SimError::new(format!("the sparse grid's lookup refers to hexahedron {h} but it has {}", mesh.hexahedra.len())))?;
        locs.push(Location { element: h, coords: f });
        stencils.push(hexa_stencil_mesh(*hexa, f));
    }
    Ok((locs, stencils))
}

impl BarycentricMapping {
    /// A mapping with given stencils (for tests and programmatic use).
    pub fn with_stencils(input: StateId, output: StateId, n_in: usize, stencils: Vec<Vec<(usize, f64)>>) -> BarycentricMapping {
        BarycentricMapping {
            ports: Ports::direct(&[input], Layout::Vec3, output, Layout::Vec3),
            n_in,
            mapper: MapperKind::None,
            locations: Vec::new(),
            stencils,
            elements: MeshData::default(),
            placed_by_code: false,
            spare: Vec::new(),
            jt_scratch: Default::default(),
        }
    }

    /// Locates `xout` in the elements of `mesh` (positions `xin`) with the Mesh mapper.
    pub fn locate_in_mesh(mesh: &MeshData, xin: &[V3], xout: &[V3]) -> SimResult<Located> {
        mesh_mapper(mesh, xin, xout)
    }

    /// Locates `xout` with a dynamic-container mapper (spatial hash).
    pub fn locate_in_set(kind: MapperKind, mesh: &MeshData, xin: &[V3], xout: &[V3]) -> SimResult<Located> {
        set_mapper(kind, mesh, xin, xout)
    }

    /// Locates `xout` in a sparse grid (hexahedra `mesh`, lookup tables `loc`).
    pub fn locate_in_sparse_grid(loc: &SparseLocator, mesh: &MeshData, xout: &[V3]) -> SimResult<Located> {
        sparse_grid_mapper(loc, mesh, xout)
    }

    /// Locates `xout` in a regular grid.
    pub fn locate_in_grid(g: &GridGeometry, xout: &[V3]) -> Located {
        grid_mapper(g, xout)
    }

    pub fn mapper(&self) -> MapperKind {
        self.mapper
    }
    pub fn locations(&self) -> &[Location] {
        &self.locations
    }
    pub fn stencils(&self) -> &[Vec<(usize, f64)>] {
        &self.stencils
    }
}

impl Component for BarycentricMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_ports(cx, false)?;
        if self.ports.output.is_none() {
            // A visual model: located in the input from its rest positions, moved only by the
            // visual update. A mapping the drawing cannot use is a warning, never an error
            // (it does not take part in the simulation).
            let Some(rest) = visual_rest_positions(cx.scene, &self.ports) else { return Ok(()) };
            if self.ports.in_layouts.first() != Some(&Layout::Vec3) {
                self.ports.visual = None;
                return Ok(());
            }
            let xout: Vec<V3> = rest.chunks_exact(3).map(v3).collect();
            if let Err(e) = self.locate(cx, Some(xout)) {
                cx.warn(format!("the visual model is not drawn: {}", e.0.message));
                self.ports.visual = None;
                return Ok(());
            }
            return apply_to_visual_at_init(self, cx.scene);
        }
        self.locate(cx, None)
    }
}

impl BarycentricMapping {
    /// Locates the output points (`visual`: a visual model's, else the output state's) in the
    /// input topology: the mapper, the locations and the stencils.
    fn locate(&mut self, cx: &mut InitCtx, visual: Option<Vec<V3>>) -> SimResult {
        if visual.is_none() {
            check_layouts(cx, &self.ports, &[(Layout::Vec3, Layout::Vec3)])?;
        }
        let input = self.ports.inputs[0];
        self.n_in = cx.state_size(input);

        // Input topology: the link, else the topology of the input state's context.
        let topo = match cx.link_targets("input_topology").first() {
            Some(t) => *t,
            None => {
                let in_node = cx.scene.store.get(input).node;
                cx.scene.context_topology(in_node).ok_or_else(|| {
                    cx.error("no input topology found in the context of the input state").hint("set input_topology=\"@path/to/topology\"")
                })?
            }
        };
        let mesh = cx.scene.mesh_of(topo).cloned().ok_or_else(|| cx.error(format!("{} provides no mesh", cx.scene.entry(topo).label())))?;
        let class = cx.scene.entry(topo).class.name;
        if self.placed_by_code {
            self.mapper = MapperKind::Mesh;
            self.locations.clear();
            self.stencils.clear();
            self.elements = MeshData { points: Vec::new(), hexahedra: Vec::new(), ..mesh };
            resize_output(cx.scene, &self.ports, 0);
            return Ok(());
        }

        let pos_id = if cx.data().get(Self::USE_REST_POSITION) { VecId::REST_POSITION } else { VecId::POSITION };
        let read = |s: StateId| -> Vec<V3> {
            let st = cx.scene.store.get(s);
            let v = if st.is_set(pos_id) { st.read(pos_id) } else { st.read(VecId::POSITION) };
            v.chunks_exact(3).take(st.size).map(v3).collect()
        };
        let xin = read(input);
        let xout = match (visual, self.ports.output) {
            (Some(v), _) => v,
            (None, Some(output)) => read(output),
            (None, None) => return Ok(()),
        };
        if let Some((i, e)) = mesh_max_index(&mesh).filter(|&(i, _)| i >= xin.len()) {
            return Err(cx
                .error(format!("{} refers to point {i} ({e}) but the input state has {} points", cx.scene.entry(topo).label(), xin.len()))
                .hint("the input topology must describe the input state's points"));
        }

        let result = if class == "RegularGridTopology" {
            if mesh.hexahedra.is_empty() {
                return Err(cx
                    .error("the input RegularGridTopology has no volume (a resolution below 2 along some axis)")
                    .hint("use a grid with at least 2 points along each axis"));
            }
            self.mapper = MapperKind::RegularGrid;
            let g = grid_geometry(cx, topo, &mesh).map_err(|e| cx.error(e.0.message.clone()))?;
            Ok(grid_mapper(&g, &xout))
        } else if class.starts_with("SparseGrid") {
            self.mapper = MapperKind::SparseGrid;
            let entry = cx.scene.entry(topo);
            let Some(field) = entry.data.field(SPARSE_LOCATOR) else {
                return Err(SimError::unsupported(format!(
                    "BarycentricMapping over a {class}: this sparse grid provides no cell lookup (SparseGrid mapper)"
                )));
            };
            let Value::Reals { v, .. } = &field.value else {
                return Err(cx.error(format!("{}: its Data '{SPARSE_LOCATOR}' is not a list of reals", entry.label())));
            };
            if mesh.hexahedra.is_empty() {
                return Err(cx
                    .error(format!("{} has no hexahedra: points cannot be located in it", entry.label()))
                    .hint("check the sparse grid's surface, n, min and max"));
            }
            let locator = SparseLocator::parse(v).map_err(|e| cx.error(format!("{}: {e}", entry.label())))?;
            sparse_grid_mapper(&locator, &mesh, &xout)
        } else if class.ends_with("SetTopologyContainer") {
            self.mapper = if !mesh.hexahedra.is_empty() {
                MapperKind::HexahedronSet
            } else if !mesh.tetrahedra.is_empty() {
                MapperKind::TetrahedronSet
            } else if !mesh.quads.is_empty() {
                MapperKind::QuadSet
            } else if !mesh.triangles.is_empty() {
                MapperKind::TriangleSet
            } else if !mesh.edges.is_empty() {
                MapperKind::EdgeSet
            } else {
                return Err(cx.error(format!("{} has no elements", cx.scene.entry(topo).label())));
            };
            set_mapper(self.mapper, &mesh, &xin, &xout)
        } else {
            self.mapper = MapperKind::Mesh;
            mesh_mapper(&mesh, &xin, &xout)
        };
        let (locs, stencils) = result.map_err(|e| cx.error(e.0.message.clone()).hint(e.0.hint.clone().unwrap_or_default()))?;
        self.locations = locs;
        self.stencils = stencils;
        self.elements = MeshData { points: Vec::new(), hexahedra: Vec::new(), ..mesh };
        resize_output(cx.scene, &self.ports, self.stencils.len());
        Ok(())
    }
}

impl BarycentricMapping {
    /// A contact mapper (SOFA's `BarycentricContactMapper`): maps the contact points a collision
    /// response places in the elements of the input topology (`elements`) from the `n_in` points
    /// of `input` into `output`, with the weights of the mesh mapper. Built by code, it needs no
    /// `init`.
    pub fn contact_points(input: StateId, output: StateId, n_in: usize, elements: &MeshData) -> BarycentricMapping {
        BarycentricMapping {
            ports: Ports::direct(&[input], Layout::Vec3, output, Layout::Vec3),
            n_in,
            mapper: MapperKind::Mesh,
            elements: MeshData { points: Vec::new(), hexahedra: Vec::new(), ..elements.clone() },
            placed_by_code: true,
            ..BarycentricMapping::default()
        }
    }

    /// Whether this contact mapper still places its points on `elements` of an input of `n_in`
    /// points (a pooled mapper whose input topology changed is made again instead).
    pub fn places_on(&self, n_in: usize, elements: &MeshData) -> bool {
        let m = &self.elements;
        self.n_in == n_in
            && m.edges == elements.edges
            && m.triangles == elements.triangles
            && m.quads == elements.quads
            && m.tetrahedra == elements.tetrahedra
    }

    fn push_point(&mut self, element: usize, coords: V3, weights: &[(usize, f64)]) -> usize {
        self.locations.push(Location { element, coords });
        let mut stencil = self.spare.pop().unwrap_or_default();
        stencil.clear();
        stencil.extend_from_slice(weights);
        self.stencils.push(stencil);
        self.stencils.len() - 1
    }
}

fn missing(kind: &str, i: usize, n: usize) -> SimError {
    SimError::new(format!("no {kind} {i} in the input topology ({n} {kind}s)"))
}

/// Points placed at run time, as SOFA's mesh-topology barycentric mapper stores them for contact
/// mappers (the weights are those of the Mesh mapper, whatever the topology's class).
impl PointMapper for BarycentricMapping {
    fn points_placed_by_code(&mut self) {
        self.placed_by_code = true;
    }
    fn clear_points(&mut self) {
        self.locations.clear();
        self.spare.append(&mut self.stencils);
    }
    fn point_count(&self) -> usize {
        self.stencils.len()
    }
    fn add_point_in_line(&mut self, edge: usize, fx: f64) -> SimResult<usize> {
        let e = *self.elements.edges.get(edge).ok_or_else(|| missing("edge", edge, self.elements.edges.len()))?;
        Ok(self.push_point(edge, [fx, 0.0, 0.0], &edge_stencil(e, fx)))
    }
    fn add_point_in_triangle(&mut self, triangle: usize, fx: f64, fy: f64) -> SimResult<usize> {
        let tri = *self.elements.triangles.get(triangle).ok_or_else(|| missing("triangle", triangle, self.elements.triangles.len()))?;
        Ok(self.push_point(triangle, [fx, fy, 0.0], &triangle_stencil(tri, [fx, fy, 0.0])))
    }
    fn add_point_in_quad(&mut self, quad: usize, fx: f64, fy: f64) -> SimResult<usize> {
        let q = *self.elements.quads.get(quad).ok_or_else(|| missing("quad", quad, self.elements.quads.len()))?;
        Ok(self.push_point(quad, [fx, fy, 0.0], &quad_stencil_mesh(q, [fx, fy, 0.0])))
    }
    fn add_point_in_tetrahedron(&mut self, tetra: usize, f: [f64; 3]) -> SimResult<usize> {
        let t = *self.elements.tetrahedra.get(tetra).ok_or_else(|| missing("tetrahedron", tetra, self.elements.tetrahedra.len()))?;
        Ok(self.push_point(tetra, f, &tetra_stencil(t, f)))
    }
}

fn mesh_max_index(m: &MeshData) -> Option<(usize, &'static str)> {
    let mut best: Option<(usize, &'static str)> = None;
    let mut see = |i: usize, what: &'static str| match best {
        Some((b, _)) if b >= i => {}
        _ => best = Some((i, what)),
    };
    m.edges.iter().flatten().for_each(|&i| see(i, "an edge"));
    m.triangles.iter().flatten().for_each(|&i| see(i, "a triangle"));
    m.quads.iter().flatten().for_each(|&i| see(i, "a quad"));
    m.tetrahedra.iter().flatten().for_each(|&i| see(i, "a tetrahedron"));
    m.hexahedra.iter().flatten().for_each(|&i| see(i, "a hexahedron"));
    best
}

impl Mapping for BarycentricMapping {
    mapping_ports!();

    fn visual_output(&self) -> Option<settee_core::ComponentId> {
        self.ports.visual
    }

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.apply_j(out, inputs)
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        check_len("the input vector", x, self.n_in, 3)?;
        check_len("the output vector", out, self.stencils.len(), 3)?;
        for (st, o) in self.stencils.iter().zip(out.chunks_exact_mut(3)) {
            let mut p = [0.0; 3];
            for &(k, w) in st {
                // One bounds check per node, not per coordinate.
                let xk: &[f64; 3] = x[3 * k..3 * k + 3].try_into().expect("three coordinates");
                for c in 0..3 {
                    p[c] += xk[c] * w;
                }
            }
            o.copy_from_slice(&p);
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        let f = &mut *inputs[0];
        check_len("the input forces", f, self.n_in, 3)?;
        check_len("the output forces", out, self.stencils.len(), 3)?;
        for (st, v) in self.stencils.iter().zip(out.chunks_exact(3)) {
            let v = v3(v);
            for &(k, w) in st {
                let fk: &mut [f64; 3] = (&mut f[3 * k..3 * k + 3]).try_into().expect("three coordinates");
                for c in 0..3 {
                    fk[c] += v[c] * w;
                }
            }
        }
        Ok(())
    }

    /// Each row entry on a mapped point is spread over its element's vertices with the point's
    /// weights, entries in the row's order (SOFA's mesh mapper `applyJT` on a MatrixDeriv):
    /// O(entries × vertices per element).
    fn apply_jt_constraints(&mut self, inputs: &mut [&mut ConstraintRows], out: &ConstraintRows) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        let input = &mut *inputs[0];
        // A row's spread entries are gathered, then added at once (kept lists, no allocation).
        let (mut dofs, mut blocks, mut order) = std::mem::take(&mut self.jt_scratch);
        let mut r = Ok(());
        for (row, entries) in out.rows() {
            dofs.clear();
            blocks.clear();
            for (point, block) in entries {
                let Some(stencil) = self.stencils.get(point) else {
                    r = Err(SimError::new(format!(
                        "a constraint row refers to mapped point {point}, but the mapping has {} points",
                        self.stencils.len()
                    )));
                    break;
                };
                for &(k, w) in stencil {
                    dofs.push(k);
                    blocks.extend_from_slice(&[block[0] * w, block[1] * w, block[2] * w]);
                }
            }
            // The entries before a bad point are added, as one by one.
            input.add_entries(row, &dofs, &blocks, &mut order);
            if r.is_err() {
                break;
            }
        }
        self.jt_scratch = (dofs, blocks, order);
        r
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let mut j = SparseRows::new(3 * self.stencils.len(), 3 * self.n_in);
        if self.ports.map_forces {
            for (i, st) in self.stencils.iter().enumerate() {
                for c in 0..3 {
                    j.rows[3 * i + c] = st.iter().map(|&(k, w)| (3 * k + c, w)).collect();
                }
            }
        }
        Ok(vec![j])
    }
}
