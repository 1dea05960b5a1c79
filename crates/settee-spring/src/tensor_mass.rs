//! SOFA's "tensor-mass" models (Sofa.Component.SolidMechanics.TensorMass): linear elasticity
//! written as one 3×3 stiffness tensor per edge, summed over the elements around the edge at
//! init. The force is linear in the displacement from the rest positions recorded at init:
//! per edge `(v0, v1)` with tensor `D` and `δ = (x1 − x1⁰) − (x0 − x0⁰)`, `f[v1] += D·δ` and
//! `f[v0] −= Dᵀ·δ`; `addDForce` is the same with `k·dx`.
//!
//! * `TriangularTensorMassForceField`: membranes, plane-stress Lamé constants
//!   `λ = Eν/(1−ν²)`, `μ = E(1−ν)/(1−ν²)`; per triangle with Heron area `A` and cotangents
//!   `cot_j`, edge `j` (opposite vertex `j`, `k = j+1`, `l = j+2`) gets
//!   `λ/(4A)·(p_j − p_k)⊗(p_j − p_l) + μ/(8A)·(p_j − p_l)⊗(p_j − p_k) − cot_j(λ+μ)/2·I`
//!   (transposed when the edge is stored from `k` to `l`). SOFA assembles no matrix for it.
//! * `TetrahedralTensorMassForceField`: volumes, `λ = Eν/((1−2ν)(1+ν))`, `μ = E/(2(1+ν))`;
//!   per tetrahedron with shape vectors `s` (gradients of the barycentric coordinates) and
//!   volume `V`, local edge `(k, l)` gets `V·(λ s_l⊗s_k + μ s_k⊗s_l + μ (s_k·s_l) I)`
//!   (transposed when the edge is stored from `l` to `k`).
//!
//! Neither follows topological changes here.

use settee_core::component::ForceField;
use settee_core::math::{at, cross, dot, sub, V3};
use settee_core::role::{MechanicalState, Topology};
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

use crate::topo;
use crate::triangular_springs::{heron, lame, mat_t_vec, mat_vec, triangle_edges};
use crate::RayleighStiffnessData;

type M3 = [[f64; 3]; 3];

/// The edge loop shared by `addForce` (`u` = displacements from rest) and `addDForce`
/// (`u` = `dx`, scaled by `k`): `f[v1] += k·D·(u1 − u0)`, `f[v0] −= k·Dᵀ·(u1 − u0)`.
fn apply_edges(edges: &[[usize; 2]], tensors: &[M3], u: impl Fn(usize) -> V3, f: &mut [f64], k: Option<f64>) {
    for (e, d) in edges.iter().zip(tensors) {
        let (v0, v1) = (e[0], e[1]);
        let dp = sub(u(v1), u(v0));
        let (mut a, mut b) = (mat_vec(d, dp), mat_t_vec(d, dp));
        if let Some(k) = k {
            a = a.map(|c| c * k);
            b = b.map(|c| c * k);
        }
        for c in 0..3 {
            f[3 * v1 + c] += a[c];
            f[3 * v0 + c] -= b[c];
        }
    }
}

/// Per edge `(v0, v1)`: blocks `(v0,v0) += k·Dᵀ`, `(v0,v1) −= k·Dᵀ`, `(v1,v0) −= k·D`,
/// `(v1,v1) += k·D` (the operator of [`apply_edges`]).
fn add_edge_blocks(acc: &mut MatrixAccumulator, s: StateId, edges: &[[usize; 2]], tensors: &[M3], k: f64) {
    for (e, d) in edges.iter().zip(tensors) {
        let mut dt = [[0.0; 3]; 3];
        let mut dk = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                dt[i][j] = k * d[j][i];
                dk[i][j] = k * d[i][j];
            }
        }
        let neg = |m: &M3| m.map(|r| r.map(|v| -v));
        acc.add_block3(s, e[0], s, e[0], &dt);
        acc.add_block3(s, e[0], s, e[1], &neg(&dt));
        acc.add_block3(s, e[1], s, e[0], &neg(&dk));
        acc.add_block3(s, e[1], s, e[1], &dk);
    }
}

fn check_points(edges: &[[usize; 2]], v: &[f64], what: &str) -> SimResult {
    let n = v.len() / 3;
    match edges.iter().flatten().find(|&&p| p >= n) {
        Some(p) => Err(SimError::new(format!("{what} has {n} points but the topology refers to point {p}"))),
        None => Ok(()),
    }
}

// ----- TriangularTensorMassForceField ----------------------------------------------------------

/// Linear membrane elasticity on the triangles of a topology, as one stiffness tensor per edge.
#[component(
    module = "Sofa.Component.SolidMechanics.TensorMass",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// Poisson ratio in Hooke's law
        poissonRatio: Real = "0.3",
        /// Young's modulus in Hooke's law
        youngModulus: Real = "1000",
    },
    inherit = [Self, RayleighStiffnessData],
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
        /// triangle topology, with its edges (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct TriangularTensorMassForceField {
    state: Option<StateId>,
    edges: Vec<[usize; 2]>,
    /// Stiffness tensor of each edge.
    tensors: Vec<M3>,
    /// Rest positions recorded at init (SOFA's `_initialPoints`).
    initial: Vec<f64>,
    rayleigh_stiffness: f64,
}

impl TriangularTensorMassForceField {
    /// The stiffness tensor of each edge of the topology.
    pub fn edge_tensors(&self) -> &[M3] {
        &self.tensors
    }
}

/// Adds the tensors of triangle `t` (points `p`, edges `te` opposite each vertex) to `tensors`
/// (SOFA's `applyTriangleCreation`).
fn add_triangle_tensors(tensors: &mut [M3], edges: &[[usize; 2]], t: &[usize; 3], te: &[usize; 3], p: &[V3; 3], lambda: f64, mu: f64) {
    let sq: [f64; 3] = std::array::from_fn(|j| {
        let d = sub(p[(j + 1) % 3], p[(j + 2) % 3]);
        dot(d, d)
    });
    let (area, cot) = heron(sq);
    let lambdastar = lambda / (4.0 * area);
    let mustar = mu / (8.0 * area);
    for j in 0..3 {
        let (k, l) = ((j + 1) % 3, (j + 2) % 3);
        let m = &mut tensors[te[j]];
        let dpl = sub(p[j], p[k]);
        let dpk = sub(p[j], p[l]);
        let val1 = -cot[j] * (lambda + mu) / 2.0;
        let same = edges[te[j]][0] == t[l];
        for u in 0..3 {
            for v in 0..3 {
                let term = lambdastar * dpl[u] * dpk[v] + mustar * dpk[u] * dpl[v];
                if same {
                    m[u][v] += term;
                } else {
                    m[v][u] += term;
                }
            }
            m[u][u] += val1;
        }
    }
}

impl Component for TriangularTensorMassForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s, topo, rest) = triangle_edges(cx)?;
        let d = cx.data();
        let (lambda, mu) = lame(d.get(Self::YOUNG_MODULUS), d.get(Self::POISSON_RATIO));
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        let mut tensors = vec![[[0.0; 3]; 3]; topo.edges.len()];
        for (i, (t, te)) in topo.triangles.iter().zip(&topo.edges_in).enumerate() {
            let p = t.map(|v| at(&rest, v));
            let area2 = cross(sub(p[1], p[0]), sub(p[2], p[0]));
            if dot(area2, area2) == 0.0 {
                return Err(cx.error(format!("triangle {i} {t:?} is flat at rest")).hint("remove degenerate triangles from the mesh"));
            }
            add_triangle_tensors(&mut tensors, &topo.edges, t, te, &p, lambda, mu);
        }
        self.edges = topo.edges;
        self.tensors = tensors;
        self.initial = rest;
        self.state = Some(s);
        Ok(())
    }
}

impl ForceField for TriangularTensorMassForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        check_points(&self.edges, x, "the position vector")?;
        check_points(&self.edges, &self.initial, "the rest positions")?;
        let initial = &self.initial;
        apply_edges(&self.edges, &self.tensors, |v| sub(at(x, v), at(initial, v)), io.f[0], None);
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let dx = io.x[0];
        check_points(&self.edges, dx, "the displacement vector")?;
        apply_edges(&self.edges, &self.tensors, |v| at(dx, v), io.f[0], Some(k_factor));
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

// ----- TetrahedralTensorMassForceField ---------------------------------------------------------

/// Local vertex pairs of the 6 edges of a tetrahedron.
const TETRA_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];

/// Linear elasticity on the tetrahedra of a topology, as one stiffness tensor per edge.
#[component(
    module = "Sofa.Component.SolidMechanics.TensorMass",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// Poisson ratio in Hooke's law
        poissonRatio: Real = "0.3",
        /// Young's modulus in Hooke's law
        youngModulus: Real = "1000",
    },
    inherit = [Self, RayleighStiffnessData],
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
        /// tetrahedral topology, with its edges (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct TetrahedralTensorMassForceField {
    state: Option<StateId>,
    edges: Vec<[usize; 2]>,
    tensors: Vec<M3>,
    initial: Vec<f64>,
    rayleigh_stiffness: f64,
}

impl TetrahedralTensorMassForceField {
    /// The stiffness tensor of each edge of the topology.
    pub fn edge_tensors(&self) -> &[M3] {
        &self.tensors
    }
}

/// Adds the tensors of tetrahedron `t` (points `p`; `te[j]` = topology edge of local edge `j`)
/// to `tensors` (SOFA's `applyTetrahedronCreation`).
fn add_tetrahedron_tensors(tensors: &mut [M3], edges: &[[usize; 2]], t: &[usize; 4], te: &[usize; 6], p: &[V3; 4], lambda: f64, mu: f64) {
    // minus six times the signed volume
    let volume = dot(cross(sub(p[1], p[0]), sub(p[2], p[0])), sub(p[0], p[3]));
    let sv: [V3; 4] = std::array::from_fn(|j| {
        let c = cross(sub(p[(j + 2) % 4], p[(j + 1) % 4]), sub(p[(j + 3) % 4], p[(j + 1) % 4]));
        let s = if j % 2 == 0 { 1.0 } else { -1.0 };
        [s * c[0] / volume, s * c[1] / volume, s * c[2] / volume]
    });
    let lambdastar = lambda * volume.abs() / 6.0;
    let mustar = mu * volume.abs() / 6.0;
    for (j, &[k, l]) in TETRA_EDGES.iter().enumerate() {
        let m = &mut tensors[te[j]];
        let val1 = dot(sv[k], sv[l]) * mustar;
        let same = edges[te[j]][0] != t[l];
        for u in 0..3 {
            for v in 0..3 {
                let term = lambdastar * sv[l][u] * sv[k][v] + mustar * sv[k][u] * sv[l][v];
                if same {
                    m[u][v] += term;
                } else {
                    m[v][u] += term;
                }
            }
            m[u][u] += val1;
        }
    }
}

impl Component for TetrahedralTensorMassForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = topo::state_with_layout(cx, Layout::Vec3)?;
        let d = cx.data();
        let (young, nu) = (d.get(Self::YOUNG_MODULUS), d.get(Self::POISSON_RATIO));
        let lambda = young * nu / ((1.0 - 2.0 * nu) * (1.0 + nu));
        let mu = young / (2.0 * (1.0 + nu));
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        let mesh = cx.require_mesh()?;
        if mesh.tetrahedra.is_empty() {
            cx.warn("no tetrahedra found in the topology: no forces");
        }
        let rest = cx.rest_or_position(s);
        let n = rest.len() / 3;
        topo::check_points(&mesh.tetrahedra, n, "tetrahedron").map_err(|m| cx.error(m))?;
        topo::check_points(&mesh.edges, n, "edge").map_err(|m| cx.error(m))?;
        let index = topo::EdgeIndex::new(&mesh.edges);
        let mut tensors = vec![[[0.0; 3]; 3]; mesh.edges.len()];
        for (i, t) in mesh.tetrahedra.iter().enumerate() {
            let mut te = [0usize; 6];
            for (j, [a, b]) in TETRA_EDGES.iter().enumerate() {
                te[j] = index.get(t[*a], t[*b]).ok_or_else(|| {
                    cx.error(format!("tetrahedron {i} has the edge ({}, {}) which is not in the topology's edge list", t[*a], t[*b]))
                        .hint("use a topology that lists the edges of its tetrahedra (e.g. TetrahedronSetTopologyContainer)")
                })?;
            }
            let p = t.map(|v| at(&rest, v));
            add_tetrahedron_tensors(&mut tensors, &mesh.edges, t, &te, &p, lambda, mu);
        }
        self.edges = mesh.edges.clone();
        self.tensors = tensors;
        self.initial = rest;
        self.state = Some(s);
        Ok(())
    }
}

impl ForceField for TetrahedralTensorMassForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        check_points(&self.edges, x, "the position vector")?;
        check_points(&self.edges, &self.initial, "the rest positions")?;
        let initial = &self.initial;
        apply_edges(&self.edges, &self.tensors, |v| sub(at(x, v), at(initial, v)), io.f[0], None);
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let dx = io.x[0];
        check_points(&self.edges, dx, "the displacement vector")?;
        apply_edges(&self.edges, &self.tensors, |v| at(dx, v), io.f[0], Some(k_factor));
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("TetrahedralTensorMassForceField used before init"))?;
        add_edge_blocks(acc, s, &self.edges, &self.tensors, k_factor);
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

#[cfg(test)]
mod tests;
