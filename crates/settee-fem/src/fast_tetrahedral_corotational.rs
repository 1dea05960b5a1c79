//! `FastTetrahedralCorotationalForceField`: linear elasticity on tetrahedra written per edge
//! (SOFA's "fast" corotational element). Each element stores, at rest, its shape vectors, the
//! 3×3 stiffness of each of its six edges and four vertices (Lamé coefficients times the rest
//! volume) and its rest edge vectors; the force rotates the current edges back to the rest frame
//! with a per-element rotation (`qr`, `polar`, `polar2` or none), applies the edge stiffnesses
//! and rotates the result forward. `addDForce` applies the rotated edge stiffnesses summed per
//! topology edge (the diagonal blocks are implicit: each edge term acts on the difference of its
//! two displacements), without the derivative of the rotation.

// Index loops mirror the per-component formulas of the element.
#![allow(clippy::needless_range_loop)]

use rayon::prelude::*;

use settee_core::math::{cross, dot, normalized, sub};
use settee_core::role::Topology;
use settee_core::{Component, InitCtx, MatrixAccumulator, SimResult, StateId};

use crate::common::{check_elements, check_len, gather, rest_positions, vec3_state};
use crate::decompose::{mat_mul, mat_t_mul, transpose};
use crate::hexa::{polar_decomposition, Mat3, Vec3};
use crate::hyperelastic::{edges_from_tetrahedra, LOCAL_EDGES};
use crate::tetra::{DEFAULT_POISSON, DEFAULT_YOUNG};
use crate::tetra_common::{material_lists, per_element, ElasticData};

crate::common::force_field_class! {
    {
        module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        data = {
            /// rotation of each element: "qr" (alias "large"), "polar", "polar2", or "none" (aliases "linear", "small": linear elasticity)
            method: Str = "qr",
            /// draw the force field (rendering only)
            drawing: Bool = "true",
            /// colour of faces 1 (rendering only)
            drawColor1: Fixed(4) = "0 0 1 1",
            /// colour of faces 2 (rendering only)
            drawColor2: Fixed(4) = "0 0.5 1 1",
            /// colour of faces 3 (rendering only)
            drawColor3: Fixed(4) = "0 1 1 1",
            /// colour of faces 4 (rendering only)
            drawColor4: Fixed(4) = "0.5 1 1 1",
            /// Rayleigh damping coefficient related to stiffness (> 0)
            rayleighStiffness: Real = "0",
        },
        links = {
            /// topology whose tetrahedra (and edges) are used (default: the context topology)
            topology: Topology,
        },
        inherit = [ElasticData, Self],
    }
    /// Corotational linear elasticity on the tetrahedra of a topology, assembled per edge (QR or polar rotations).
    ///
    /// The force field.
    #[derive(Clone, Default)]
    pub struct FastTetrahedralCorotationalForceField {
        state: Option<StateId>,
        nb_dofs: usize,
        method: RotationMethod,
        tetrahedra: Vec<[usize; 4]>,
        edges: Vec<[usize; 2]>,
        /// Topology edge of each local edge of each tetrahedron, and whether it is oriented like
        /// the local edge.
        edges_in_tetra: Vec<[(usize, bool); 6]>,
        elements: Vec<FastTetraElement>,
        /// Per-edge rotated stiffness, rebuilt lazily after each `add_force` (`None` when stale).
        edge_stiffness: settee_core::scratch::CopiedMutex<Option<Vec<Mat3>>>,
        rayleigh_stiffness: f64,
    }
}

/// How the rotation of an element is computed (SOFA's `method`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RotationMethod {
    /// Frame of the first two edges, relative to the rest frame.
    #[default]
    Qr,
    /// Polar decomposition of the deformation gradient.
    Polar,
    /// Polar decomposition of the matrix of the first three edges, relative to the rest one.
    Polar2,
    /// No rotation: linear elasticity.
    Linear,
}

impl RotationMethod {
    /// SOFA's names (`None` when unknown).
    pub fn from_sofa_name(name: &str) -> Option<Self> {
        match name {
            "qr" | "large" => Some(Self::Qr),
            "polar" => Some(Self::Polar),
            "polar2" => Some(Self::Polar2),
            "none" | "linear" | "small" => Some(Self::Linear),
            _ => None,
        }
    }
}

/// Rest data of one tetrahedron and its rotation of the last force evaluation.
#[derive(Clone, Debug, Default)]
pub struct FastTetraElement {
    /// Gradients of the barycentric coordinates at rest.
    pub shape_vectors: [Vec3; 4],
    /// Stiffness of each local edge `(k, l)` ([`LOCAL_EDGES`]): the force on `l` per unit
    /// displacement of the edge, scaled by the rest volume.
    pub edge_stiffness: [Mat3; 6],
    /// Stiffness of each vertex (the diagonal blocks of the element matrix).
    pub vertex_stiffness: [Mat3; 4],
    pub rest_edges: [Vec3; 6],
    pub rest_rotation: Mat3,
    /// Transpose of the current rotation (current → rest frame).
    pub rotation: Mat3,
}

const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

#[inline]
fn mat_vec(m: &Mat3, v: Vec3) -> Vec3 {
    [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
}

/// `mᵀ·v`, each entry summed over the rows in order.
#[inline]
fn mat_t_vec(m: &Mat3, v: Vec3) -> Vec3 {
    let mut r = [0.0; 3];
    for (i, ri) in r.iter_mut().enumerate() {
        *ri = m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2];
    }
    r
}

fn add_assign(a: &mut Mat3, b: &Mat3) {
    for i in 0..3 {
        for j in 0..3 {
            a[i][j] += b[i][j];
        }
    }
}

/// Rows: the unit first edge, the unit vector in the plane of the first two edges orthogonal to
/// it, and their normal (SOFA's `computeQRRotation`).
fn qr_frame(e0: Vec3, e1: Vec3) -> Mat3 {
    let x = normalized(e0);
    let z = normalized(cross(x, e1));
    let y = cross(z, x);
    [x, y, z]
}

impl FastTetraElement {
    /// The element of rest points `p` with Young's modulus `young` and Poisson's ratio `nu`.
    pub fn new(method: RotationMethod, young: f64, nu: f64, p: &[Vec3; 4]) -> FastTetraElement {
        let mut mu = young / (2.0 * (1.0 + nu));
        let mut lambda = young * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
        // minus SOFA's signed volume: positive for the usual orientation of its meshes
        let volume = -(dot(cross(sub(p[1], p[0]), sub(p[2], p[0])), sub(p[3], p[0])) / 6.0);
        mu *= volume.abs();
        lambda *= volume.abs();
        let mut e = FastTetraElement { rotation: IDENTITY, ..Default::default() };
        for j in 0..4 {
            let c = cross(sub(p[(j + 2) % 4], p[(j + 1) % 4]), sub(p[(j + 3) % 4], p[(j + 1) % 4]));
            let s = if j % 2 == 0 { 1.0 } else { -1.0 };
            let d = volume * 6.0;
            e.shape_vectors[j] = [s * c[0] / d, s * c[1] / d, s * c[2] / d];
        }
        let sv = e.shape_vectors;
        for j in 0..4 {
            let val = mu * dot(sv[j], sv[j]);
            let m = &mut e.vertex_stiffness[j];
            for a in 0..3 {
                for b in a..3 {
                    m[a][b] = lambda * sv[j][b] * sv[j][a] + mu * sv[j][b] * sv[j][a];
                    if a == b {
                        m[a][a] += val;
                    } else {
                        m[b][a] = m[a][b];
                    }
                }
            }
        }
        for (j, &[k, l]) in LOCAL_EDGES.iter().enumerate() {
            e.rest_edges[j] = sub(p[l], p[k]);
            let val = mu * dot(sv[l], sv[k]);
            let m = &mut e.edge_stiffness[j];
            for a in 0..3 {
                for b in 0..3 {
                    m[a][b] = lambda * sv[k][b] * sv[l][a] + mu * sv[l][b] * sv[k][a];
                    if a == b {
                        m[a][a] += val;
                    }
                }
            }
        }
        e.rest_rotation = match method {
            RotationMethod::Qr => qr_frame(e.rest_edges[0], e.rest_edges[1]),
            RotationMethod::Polar2 => polar_decomposition(&[sub(p[1], p[0]), sub(p[2], p[0]), sub(p[3], p[0])]),
            _ => [[0.0; 3]; 3],
        };
        e
    }

    /// The nodal forces at the current points `x`; updates the rotation.
    pub fn force(&mut self, method: RotationMethod, x: &[Vec3; 4]) -> [Vec3; 4] {
        let mut displ = LOCAL_EDGES.map(|[k, l]| sub(x[l], x[k]));
        let r = match method {
            RotationMethod::Polar => {
                let mut f = [[0.0; 3]; 3];
                for j in 0..3 {
                    let sv = self.shape_vectors[j + 1];
                    for a in 0..3 {
                        for b in 0..3 {
                            if j == 0 {
                                f[a][b] = displ[0][a] * sv[b];
                            } else {
                                f[a][b] += displ[j][a] * sv[b];
                            }
                        }
                    }
                }
                polar_decomposition(&f)
            }
            RotationMethod::Qr => mat_t_mul(&qr_frame(displ[0], displ[1]), &self.rest_rotation),
            RotationMethod::Polar2 => {
                let q = polar_decomposition(&[displ[0], displ[1], displ[2]]);
                mat_mul(&transpose(&q), &self.rest_rotation)
            }
            RotationMethod::Linear => IDENTITY,
        };
        self.rotation = transpose(&r);
        let mut local = [[0.0; 3]; 4];
        for (j, &[k, l]) in LOCAL_EDGES.iter().enumerate() {
            displ[j] = sub(mat_vec(&self.rotation, displ[j]), self.rest_edges[j]);
            let fl = mat_vec(&self.edge_stiffness[j], displ[j]);
            let fk = mat_t_vec(&self.edge_stiffness[j], displ[j]);
            for c in 0..3 {
                local[l][c] += fl[c];
                local[k][c] -= fk[c];
            }
        }
        local.map(|v| mat_vec(&r, v))
    }

    /// Rotated stiffness of local edge `j`, oriented like the local edge (`same`) or reversed.
    fn rotated_edge(&self, j: usize, same: bool) -> Mat3 {
        let tmp = mat_mul(&self.edge_stiffness[j], &self.rotation);
        if same {
            mat_t_mul(&self.rotation, &tmp)
        } else {
            mat_t_mul(&tmp, &self.rotation)
        }
    }

    /// Rotated stiffness of vertex `j`.
    fn rotated_vertex(&self, j: usize) -> Mat3 {
        mat_mul(&mat_t_mul(&self.rotation, &self.vertex_stiffness[j]), &self.rotation)
    }
}

impl FastTetrahedralCorotationalForceField {
    pub fn tetrahedra(&self) -> &[[usize; 4]] {
        &self.tetrahedra
    }

    pub fn method(&self) -> RotationMethod {
        self.method
    }

    pub fn element(&self, i: usize) -> &FastTetraElement {
        &self.elements[i]
    }

    /// The per-edge stiffness of the current rotations (SOFA's edge data built in `addDForce`).
    fn compute_edge_stiffness(&self) -> Vec<Mat3> {
        let mut out = vec![[[0.0; 3]; 3]; self.edges.len()];
        for (e, te) in self.elements.iter().zip(&self.edges_in_tetra) {
            for (j, &(edge, same)) in te.iter().enumerate() {
                add_assign(&mut out[edge], &e.rotated_edge(j, same));
            }
        }
        out
    }

    fn with_edge_stiffness<R>(&self, f: impl FnOnce(&[Mat3]) -> R) -> R {
        let mut guard = self.edge_stiffness.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            *guard = Some(self.compute_edge_stiffness());
        }
        f(guard.as_deref().unwrap_or(&[]))
    }
}

impl Component for FastTetrahedralCorotationalForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject (use a mapping for rigid frames)")?;
        let name = cx.data().get(Self::METHOD).to_string();
        let method = RotationMethod::from_sofa_name(&name)
            .ok_or_else(|| cx.error(format!("unknown method \"{name}\"")).hint("method is one of qr (large), polar, polar2, none (linear, small)"))?;
        let (young, poisson) = material_lists(cx, ElasticData::YOUNG_MODULUS, ElasticData::POISSON_RATIO);
        self.rayleigh_stiffness = cx.data().get(Self::RAYLEIGH_STIFFNESS);
        let mesh = cx.require_mesh()?;
        if mesh.tetrahedra.is_empty() {
            cx.warn("no tetrahedra found in the topology: this force field adds no force");
        }
        let n = cx.state_size(s);
        check_elements(cx, "tetrahedron", &mesh.tetrahedra, n)?;
        let edges = if mesh.edges.is_empty() { edges_from_tetrahedra(&mesh.tetrahedra) } else { mesh.edges.clone() };
        // SOFA's getEdgeIndex: the first edge (lowest index) joining the two vertices
        let mut index = std::collections::HashMap::with_capacity(edges.len());
        for (i, e) in edges.iter().enumerate() {
            index.entry((e[0].min(e[1]), e[0].max(e[1]))).or_insert(i);
        }
        let mut edges_in_tetra = Vec::with_capacity(mesh.tetrahedra.len());
        for (ti, t) in mesh.tetrahedra.iter().enumerate() {
            let mut te = [(0usize, true); 6];
            for (j, [a, b]) in LOCAL_EDGES.iter().enumerate() {
                let (v1, v2) = (t[*a], t[*b]);
                let Some(&e) = index.get(&(v1.min(v2), v1.max(v2))) else {
                    return Err(cx
                        .error(format!("edge ({v1}, {v2}) of tetrahedron {ti} is not an edge of the topology"))
                        .hint("the topology's edge list must contain the edges of its tetrahedra (or be empty, to derive them)"));
                };
                te[j] = (e, edges[e][0] == v1);
            }
            edges_in_tetra.push(te);
        }
        let rest = rest_positions(cx, s, n)?;
        self.elements = mesh
            .tetrahedra
            .iter()
            .enumerate()
            .map(|(i, t)| {
                FastTetraElement::new(method, per_element(&young, i, DEFAULT_YOUNG), per_element(&poisson, i, DEFAULT_POISSON), &gather(&rest, t))
            })
            .collect();
        self.method = method;
        self.tetrahedra = mesh.tetrahedra;
        self.edges = edges;
        self.edges_in_tetra = edges_in_tetra;
        self.state = Some(s);
        self.nb_dofs = n;
        *self.edge_stiffness.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }
}

crate::common::force_field_on_one_state!(FastTetrahedralCorotationalForceField);

impl FastTetrahedralCorotationalForceField {
    fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        check_len("the position vector", x, self.nb_dofs)?;
        check_len("the force vector", f, self.nb_dofs)?;
        let method = self.method;
        // Small meshes stay on this thread: waking the pool costs more than their elements.
        // Either way the element forces are scattered in element order (the same bits).
        if crate::tetra_common::parallel_loop(self.tetrahedra.len(), crate::tetra_common::TETRA_PARALLEL_MIN) {
            let forces: Vec<[Vec3; 4]> =
                self.elements.par_iter_mut().zip(self.tetrahedra.par_iter()).map(|(e, t)| e.force(method, &gather(x, t))).collect();
            crate::common::scatter(f, self.tetrahedra.iter().zip(&forces));
        } else {
            for (e, t) in self.elements.iter_mut().zip(&self.tetrahedra) {
                let fe = e.force(method, &gather(x, t));
                crate::common::scatter(f, std::iter::once((t, &fe)));
            }
        }
        *self.edge_stiffness.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }

    /// Per topology edge `(v0, v1)` with stiffness `E`: `df[v1] += E·δ`, `df[v0] −= Eᵀ·δ` with
    /// `δ = k·(dx[v1] − dx[v0])`.
    fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, _b_factor: f64) -> SimResult {
        check_len("the displacement vector", dx, self.nb_dofs)?;
        check_len("the force-differential vector", df, self.nb_dofs)?;
        let edges = &self.edges;
        self.with_edge_stiffness(|stiffness| {
            for (e, m) in edges.iter().zip(stiffness) {
                let (v0, v1) = (e[0], e[1]);
                let delta = [
                    (dx[3 * v1] - dx[3 * v0]) * k_factor,
                    (dx[3 * v1 + 1] - dx[3 * v0 + 1]) * k_factor,
                    (dx[3 * v1 + 2] - dx[3 * v0 + 2]) * k_factor,
                ];
                let d1 = mat_vec(m, delta);
                let d0 = mat_t_vec(m, delta);
                for c in 0..3 {
                    df[3 * v1 + c] += d1[c];
                    df[3 * v0 + c] -= d0[c];
                }
            }
        });
        Ok(())
    }

    /// Diagonal blocks `−k·Σ R·D·Rᵀ` from the vertex stiffnesses, blocks `(v0,v1) −= k·Eᵀ`,
    /// `(v1,v0) −= k·E` per edge (SOFA's `addKToMatrix`).
    fn k_matrix(&self, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        let mut points = vec![[[0.0; 3]; 3]; self.nb_dofs];
        for (e, t) in self.elements.iter().zip(&self.tetrahedra) {
            for (j, &v) in t.iter().enumerate() {
                add_assign(&mut points[v], &e.rotated_vertex(j));
            }
        }
        for (i, p) in points.iter().enumerate() {
            acc.add_block3(s, i, s, i, &p.map(|r| r.map(|v| -k_factor * v)));
        }
        self.with_edge_stiffness(|stiffness| {
            for (e, m) in self.edges.iter().zip(stiffness) {
                acc.add_block3(s, e[0], s, e[1], &transpose(m).map(|r| r.map(|v| -k_factor * v)));
                acc.add_block3(s, e[1], s, e[0], &m.map(|r| r.map(|v| -k_factor * v)));
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests;
