//! `TetrahedronHyperelasticityFEMForceField`: total-Lagrangian hyperelasticity on linear
//! tetrahedra with the materials of [`material`].
//!
//! Per tetrahedron (rest positions `P0..P3`): `vol6 = ((P2-P0)×(P3-P0))·(P1-P0)`,
//! `V0 = |vol6|/6`, shape vectors `sv_j = ∇N_j`. At positions `x`: `F = Σ_k (x_{k+1}-x_0) ⊗ sv_{k+1}`,
//! `C = FᵀF`, `J = det F`, `S = S(C)`, and `f_l -= V0·F·(S·sv_l)`.
//!
//! The tangent is stored per edge of the topology, as SOFA does: it is rebuilt lazily (first
//! `add_dforce` or matrix request after an `add_force`) from each tetrahedron's 6 edges,
//! `DfDx[e] += V0·((sv_kᵀ S sv_l)·I + N)` with row `m` of `N` equal to
//! `F·(dS[H_m]·sv_k)`, `H_m = sv_l ⊗ F_m + F_m ⊗ sv_l`; then for each edge `(v0, v1)` with
//! `δ = dx_v0 - dx_v1`: `df_v0 += k·DfDxᵀ δ`, `df_v1 -= k·DfDx δ`.
//!
//! Element work runs in parallel; every accumulation (node forces, edge tangents, `df`) is done
//! sequentially in SOFA's order.

pub mod material;

use rayon::prelude::*;

use settee_core::role::Topology;
use settee_core::{Component, InitCtx, MatrixAccumulator, SimResult, StateId};

use crate::common::{check_elements, check_len, force_field_on_one_state, gather, rest_positions, scatter, vec3_state};
use crate::hexa::{mat_t_vec, mat_vec, Mat3, Vec3};
use material::{Material, Prepared, Strain, Sym, MATERIAL_NAMES};
use settee_core::math::{cross, dot, sub};

/// Local edges of a tetrahedron (SOFA's `edgesInTetrahedronArray`).
pub const LOCAL_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];

/// Rest data of a tetrahedron.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyperRest {
    /// `|vol6| / 6`.
    pub rest_volume: f64,
    /// `1 / vol6`.
    pub vol_scale: f64,
    /// `∇N_j` at rest.
    pub shape: [Vec3; 4],
}

impl HyperRest {
    /// SOFA's `createTetrahedronRestInformation`.
    pub fn new(p: &[Vec3; 4]) -> HyperRest {
        let volume = dot(cross(sub(p[2], p[0]), sub(p[3], p[0])), sub(p[1], p[0]));
        let mut shape = [[0.0; 3]; 4];
        for (j, sv) in shape.iter_mut().enumerate() {
            let sign = if j % 2 == 1 { 1.0 } else { -1.0 };
            let c = cross(sub(p[(j + 2) % 4], p[(j + 1) % 4]), sub(p[(j + 3) % 4], p[(j + 1) % 4]));
            *sv = [c[0] * sign / volume, c[1] * sign / volume, c[2] * sign / volume];
        }
        HyperRest { rest_volume: (volume / 6.0).abs(), vol_scale: 1.0 / volume, shape }
    }
}

/// State of a tetrahedron after a force evaluation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HyperState {
    /// Deformation gradient `F`.
    pub f: Mat3,
    pub prepared: Prepared,
    /// Second Piola–Kirchhoff stress.
    pub spk: Sym,
}

/// Deformation gradient, strain and stress of a tetrahedron at node positions `x`, and the
/// 4 nodal forces to be **added** (`-V0·F·(S·sv_l)`).
pub fn element_force(rest: &HyperRest, material: &Material, x: &[Vec3; 4]) -> (HyperState, [Vec3; 4]) {
    let x0 = x[0];
    let mut f = [[0.0; 3]; 3];
    let mut dp = [[0.0; 3]; 3];
    dp[0] = sub(x[1], x0);
    let sv = rest.shape[1];
    for k in 0..3 {
        for l in 0..3 {
            f[k][l] = dp[0][k] * sv[l];
        }
    }
    for j in 1..3 {
        dp[j] = sub(x[j + 1], x0);
        let sv = rest.shape[j + 1];
        for k in 0..3 {
            for l in 0..3 {
                f[k][l] += dp[j][k] * sv[l];
            }
        }
    }
    let mut c = Sym::ZERO;
    for k in 0..3 {
        for l in k..3 {
            c.set(k, l, f[0][k] * f[0][l] + f[1][k] * f[1][l] + f[2][k] * f[2][l]);
        }
    }
    let area = cross(dp[1], dp[2]);
    let j = dot(area, dp[0]) * rest.vol_scale;
    let tr_c = c.get(0, 0) + c.get(1, 1) + c.get(2, 2);
    let prepared = material.prepare(&Strain { c, j, tr_c });
    let spk = material.spk(&prepared);
    let mut out = [[0.0; 3]; 4];
    for (o, sv) in out.iter_mut().zip(&rest.shape) {
        let v = mat_vec(&f, spk.mul_vec(*sv));
        *o = [-(v[0] * rest.rest_volume), -(v[1] * rest.rest_volume), -(v[2] * rest.rest_volume)];
    }
    (HyperState { f, prepared, spk }, out)
}

/// The 6 edge tangent contributions `V0·(M + N)` of a tetrahedron; `orient[j]` is true when the
/// topology edge of local edge `j` starts at the tetrahedron's node `LOCAL_EDGES[j][0]`.
pub fn element_edge_tangents(rest: &HyperRest, material: &Material, st: &HyperState, orient: &[bool; 6]) -> [Mat3; 6] {
    let df = &st.f;
    let mut out = [[[0.0; 3]; 3]; 6];
    for (j, o) in out.iter_mut().enumerate() {
        let (k, l) = if orient[j] { (LOCAL_EDGES[j][0], LOCAL_EDGES[j][1]) } else { (LOCAL_EDGES[j][1], LOCAL_EDGES[j][0]) };
        let svl = rest.shape[l];
        let svk = rest.shape[k];
        let mut n = [[0.0; 3]; 3];
        for (m, nrow) in n.iter_mut().enumerate() {
            let mut h = Sym::ZERO;
            for a in 0..3 {
                for b in a..3 {
                    h.set(a, b, svl[a] * df[m][b] + df[m][a] * svl[b]);
                }
            }
            let out_t = material.apply_elasticity(&st.prepared, &h);
            *nrow = mat_vec(df, out_t.mul_vec(svk));
        }
        let product_sd = dot(st.spk.mul_vec(svk), svl);
        for a in 0..3 {
            for b in 0..3 {
                let mv = if a == b { product_sd } else { 0.0 };
                o[a][b] = (mv + n[a][b]) * rest.rest_volume;
            }
        }
    }
    out
}

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.HyperElastic",
        data = {
            /// regularisation of the stiffness matrix (not used by the force and its differential)
            matrixRegularization: Bool = "false",
            /// material: ArrudaBoyce (mu k0), StVenantKirchhoff (mu lambda), NeoHookean (mu lambda), MooneyRivlin (c1 c2 k0), Ogden (mu1 alpha1 k0), StableNeoHookean (mu lambda); VerondaWestman and Costa are not implemented
            materialName: Options(MATERIAL_NAMES) = "ArrudaBoyce",
            /// the material parameters, in the order given for materialName
            ParameterSet: Reals,
            /// fibre directions of anisotropic materials (unused by the isotropic materials)
            AnisotropyDirections: Coords,
            /// Rayleigh damping coefficient related to stiffness (> 0)
            rayleighStiffness: Real = "0",
        },
        links = {
            /// topology whose tetrahedra (and edges) are used (default: the context topology)
            topology: Topology,
        },
    }
    /// Hyperelasticity (St Venant-Kirchhoff, Neo-Hookean, Mooney-Rivlin, Arruda-Boyce, Ogden) on the tetrahedra of a topology.
    ///
    /// The force field.
    #[derive(Clone, Default)]
    pub struct TetrahedronHyperelasticityFEMForceField {
        state: Option<StateId>,
        nb_dofs: usize,
        material: Option<Material>,
        tetrahedra: Vec<[usize; 4]>,
        edges: Vec<[usize; 2]>,
        /// Topology edge of each local edge of each tetrahedron, and whether it is oriented like
        /// the local edge.
        edges_in_tetra: Vec<[(usize, bool); 6]>,
        rests: Vec<HyperRest>,
        states: Vec<HyperState>,
        forces: Vec<[Vec3; 4]>,
        /// Per-edge tangent, rebuilt lazily after each `add_force` (`None` when stale).
        tangent: settee_core::scratch::CopiedMutex<Option<Vec<Mat3>>>,
        rayleigh_stiffness: f64,
    }
}

impl TetrahedronHyperelasticityFEMForceField {
    pub fn material(&self) -> Option<&Material> {
        self.material.as_ref()
    }

    pub fn tetrahedra(&self) -> &[[usize; 4]] {
        &self.tetrahedra
    }

    pub fn edges(&self) -> &[[usize; 2]] {
        &self.edges
    }

    /// Rest data of tetrahedron `i`.
    pub fn rest(&self, i: usize) -> &HyperRest {
        &self.rests[i]
    }

    /// State of tetrahedron `i` from the last `add_force`.
    pub fn element_state(&self, i: usize) -> &HyperState {
        &self.states[i]
    }

    /// The per-edge tangent of the current state (SOFA's `updateTangentMatrix`).
    fn compute_tangent(&self) -> Vec<Mat3> {
        let Some(material) = self.material.as_ref() else { return Vec::new() };
        let contributions: Vec<[Mat3; 6]> = self
            .rests
            .par_iter()
            .zip(self.states.par_iter())
            .zip(self.edges_in_tetra.par_iter())
            .map(|((r, s), te)| element_edge_tangents(r, material, s, &te.map(|(_, o)| o)))
            .collect();
        let mut tangent = vec![[[0.0; 3]; 3]; self.edges.len()];
        for (te, c) in self.edges_in_tetra.iter().zip(&contributions) {
            for (&(e, _), m) in te.iter().zip(c) {
                let d = &mut tangent[e];
                for a in 0..3 {
                    for b in 0..3 {
                        d[a][b] += m[a][b];
                    }
                }
            }
        }
        tangent
    }

    fn with_tangent<R>(&self, f: impl FnOnce(&[Mat3]) -> R) -> R {
        let mut guard = self.tangent.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            *guard = Some(self.compute_tangent());
        }
        f(guard.as_deref().unwrap_or(&[]))
    }
}

/// SOFA's `MeshTopology` edges of a tetrahedral mesh: local edges of each tetrahedron in order,
/// each new pair stored sorted.
pub fn edges_from_tetrahedra(tetrahedra: &[[usize; 4]]) -> Vec<[usize; 2]> {
    let mut seen = std::collections::HashSet::new();
    let mut edges = Vec::new();
    for t in tetrahedra {
        for [a, b] in LOCAL_EDGES {
            let (v1, v2) = (t[a], t[b]);
            let e = if v1 < v2 { [v1, v2] } else { [v2, v1] };
            if seen.insert(e) {
                edges.push(e);
            }
        }
    }
    edges
}

impl Component for TetrahedronHyperelasticityFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let name = d.get(Self::MATERIAL_NAME).to_string();
        let params = d.get(Self::PARAMETER_SET).to_vec();
        let rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        self.build(cx, &name, &params, rayleigh_stiffness)
    }
}

impl TetrahedronHyperelasticityFEMForceField {
    /// SOFA's init with the material `name`, its `params` and the Rayleigh stiffness.
    fn build(&mut self, cx: &mut InitCtx, name: &str, params: &[f64], rayleigh_stiffness: f64) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject")?;
        self.rayleigh_stiffness = rayleigh_stiffness;
        let material = Material::from_sofa(name, params).map_err(|e| {
            cx.error(e.to_string()).hint(
                "ParameterSet: ArrudaBoyce \"mu k0\", StVenantKirchhoff/NeoHookean/StableNeoHookean \"mu lambda\", MooneyRivlin \"c1 c2 k0\", Ogden \"mu1 alpha1 k0\"",
            )
        })?;
        let mesh = cx.require_mesh()?;
        if mesh.tetrahedra.is_empty() {
            return Err(cx
                .error("the topology has no tetrahedra")
                .hint("use a tetrahedral topology (MeshTopology with tetrahedra, a Hexa2TetraTopologicalMapping output, …)"));
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
        self.rests = mesh.tetrahedra.iter().map(|t| HyperRest::new(&gather(&rest, t))).collect();
        self.states = vec![HyperState::default(); mesh.tetrahedra.len()];
        self.forces = vec![[[0.0; 3]; 4]; mesh.tetrahedra.len()];
        self.tetrahedra = mesh.tetrahedra;
        self.edges = edges;
        self.edges_in_tetra = edges_in_tetra;
        self.material = Some(material);
        self.state = Some(s);
        self.nb_dofs = n;
        *self.tangent.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }
}

force_field_on_one_state!(TetrahedronHyperelasticityFEMForceField);

impl TetrahedronHyperelasticityFEMForceField {
    fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        check_len("the position vector", x, self.nb_dofs)?;
        check_len("the force vector", f, self.nb_dofs)?;
        let Some(material) = self.material else { return Ok(()) };
        let body = |(((r, st), out), t): (((&_, &mut HyperState), &mut _), &_)| {
            let (s, fe) = element_force(r, &material, &gather(x, t));
            *st = s;
            *out = fe;
        };
        // Small meshes stay on this thread (waking the pool costs more than their elements);
        // every element writes its own slot either way.
        if crate::tetra_common::parallel_loop(self.tetrahedra.len(), crate::tetra_common::TETRA_PARALLEL_MIN) {
            self.rests.par_iter().zip(self.states.par_iter_mut()).zip(self.forces.par_iter_mut()).zip(self.tetrahedra.par_iter()).for_each(body);
        } else {
            self.rests.iter().zip(self.states.iter_mut()).zip(self.forces.iter_mut()).zip(self.tetrahedra.iter()).for_each(body);
        }
        // SOFA: f -= F·(S·sv)·V0; the element forces hold the negated products.
        scatter(f, self.tetrahedra.iter().zip(&self.forces));
        *self.tangent.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }

    fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, _b_factor: f64) -> SimResult {
        check_len("the displacement vector", dx, self.nb_dofs)?;
        check_len("the force-differential vector", df, self.nb_dofs)?;
        let edges = &self.edges;
        self.with_tangent(|tangent| {
            for (e, m) in edges.iter().zip(tangent) {
                let (v0, v1) = (e[0], e[1]);
                let delta = [dx[3 * v0] - dx[3 * v1], dx[3 * v0 + 1] - dx[3 * v1 + 1], dx[3 * v0 + 2] - dx[3 * v1 + 2]];
                let dv0 = mat_vec(m, delta);
                let dv1 = mat_t_vec(m, delta);
                for c in 0..3 {
                    df[3 * v0 + c] += dv1[c] * k_factor;
                }
                for c in 0..3 {
                    df[3 * v1 + c] -= dv0[c] * k_factor;
                }
            }
        });
        Ok(())
    }

    /// Per edge `(v0, v1)`: blocks `(v0,v0) += k·Dᵀ`, `(v0,v1) -= k·Dᵀ`, `(v1,v0) -= k·D`,
    /// `(v1,v1) += k·D` (SOFA's `addKToMatrix`).
    fn k_matrix(&self, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        self.with_tangent(|tangent| {
            for (e, m) in self.edges.iter().zip(tangent) {
                let (n0, n1) = (e[0], e[1]);
                let mut b00 = [[0.0; 3]; 3];
                let mut b01 = [[0.0; 3]; 3];
                let mut b10 = [[0.0; 3]; 3];
                let mut b11 = [[0.0; 3]; 3];
                for i in 0..3 {
                    for j in 0..3 {
                        b00[i][j] = m[j][i] * k_factor;
                        b01[i][j] = -m[j][i] * k_factor;
                        b10[i][j] = -m[i][j] * k_factor;
                        b11[i][j] = m[i][j] * k_factor;
                    }
                }
                acc.add_block3(s, n0, s, n0, &b00);
                acc.add_block3(s, n0, s, n1, &b01);
                acc.add_block3(s, n1, s, n0, &b10);
                acc.add_block3(s, n1, s, n1, &b11);
            }
        });
        Ok(())
    }
}

pub mod standard;

#[cfg(test)]
mod tests;
