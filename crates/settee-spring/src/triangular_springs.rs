//! SOFA's two membrane models made of edge springs plus "angular" springs coupling the edges of
//! each triangle, whose coefficients come from the plane-stress Lamé constants and the cotangents
//! of the rest triangle: `TriangularQuadraticSpringsForceField` (energy quadratic in the edge
//! lengths) and `TriangularBiquadraticSpringsForceField` (quadratic in the squared lengths, plus
//! an optional penalty on compressed areas).
//!
//! Shared rules (SOFA's `TriangularQuadraticSpringsForceField.inl` and
//! `TriangularBiquadraticSpringsForceField.inl`):
//! * `λ = Eν/(1−ν²)`, `μ = E(1−ν)/(1−ν²)`; edge `j` of a triangle is the edge opposite its
//!   vertex `j`, `k = j+1`, `l = j+2` (mod 3).
//! * Rest data from the state's rest positions (`initialPoints` is only recorded): per edge its
//!   rest (squared) length; per triangle its Heron area `A` (from the squared rest lengths `L²`),
//!   the cotangents `cot_j = (L²_k + L²_l − L²_j)/(4A)` and, per edge `j`, an elongation stiffness
//!   (added to the edge's, summed over its triangles) and an angular coefficient `γ_j`.
//! * `addForce`: first every edge spring in edge order, then (with `useAngularSprings`) every
//!   triangle's angular terms; the velocities enter through `dampingRatio`.
//! * `addDForce`: per triangle and edge `k` (between vertices `i = k+1`, `j = k+2`), a 3×3 matrix
//!   `M_k` built at the first call after an `addForce`; `df_i += kFactor·M_k·(dx_i − dx_j)` and
//!   `df_j −= kFactor·M_kᵀ·(dx_i − dx_j)`. SOFA assembles no matrix for these force fields.
//!
//! Neither follows topological changes here (SOFA's do, through their edge and triangle data).

use settee_core::component::ForceField;
use settee_core::math::{at, cross, dot, neg, norm, norm2, scale, sub, V3};
use settee_core::role::{MechanicalState, Topology};
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MechParams, SimError, SimResult, StateId};

use crate::topo;
use crate::RayleighStiffnessData;

type M3 = [[f64; 3]; 3];

/// Triangles with the edge opposite each vertex, and the edges, of the force field's topology.
#[derive(Clone, Default)]
pub(crate) struct TriangleEdges {
    pub triangles: Vec<[usize; 3]>,
    pub edges: Vec<[usize; 2]>,
    pub edges_in: Vec<[usize; 3]>,
}

/// The state, the topology's triangles and edges, and the rest positions, checked.
pub(crate) fn triangle_edges(cx: &mut InitCtx) -> SimResult<(StateId, TriangleEdges, Vec<f64>)> {
    let s = topo::state_with_layout(cx, Layout::Vec3)?;
    let mesh = cx.require_mesh()?;
    if mesh.triangles.is_empty() {
        cx.warn("no triangles found in the topology: no forces");
    }
    let rest = cx.rest_or_position(s);
    let n = rest.len() / 3;
    topo::check_points(&mesh.triangles, n, "triangle").map_err(|m| cx.error(m))?;
    topo::check_points(&mesh.edges, n, "edge").map_err(|m| cx.error(m))?;
    let edges_in = topo::element_edges(&mesh, &mesh.triangles, "triangle")
        .map_err(|m| cx.error(m).hint("use a topology that lists the edges of its triangles (e.g. TriangleSetTopologyContainer)"))?
        .edges_in;
    Ok((s, TriangleEdges { triangles: mesh.triangles.clone(), edges: mesh.edges.clone(), edges_in }, rest))
}

/// Plane-stress Lamé constants as SOFA's `updateLameCoefficients` computes them.
pub(crate) fn lame(young: f64, poisson: f64) -> (f64, f64) {
    let lambda = young * poisson / (1.0 - poisson * poisson);
    let mu = young * (1.0 - poisson) / (1.0 - poisson * poisson);
    (lambda, mu)
}

/// Heron's area from the squared edge lengths and the cotangents of the three angles.
pub(crate) fn heron(sq: [f64; 3]) -> (f64, [f64; 3]) {
    let mut area = 0.0;
    for j in 0..3 {
        area += sq[j] * (sq[(j + 1) % 3] + sq[(j + 2) % 3] - sq[j]);
    }
    let area = area.sqrt() / 4.0;
    let mut cot = [0.0; 3];
    for j in 0..3 {
        cot[j] = (sq[(j + 1) % 3] + sq[(j + 2) % 3] - sq[j]) / (4.0 * area);
    }
    (area, cot)
}

/// Records the rest positions in `initialPoints` when it is empty (SOFA does, without using it).
fn record_initial_points(cx: &mut InitCtx, data: settee_core::DataRef<settee_core::data_ref::Reals>, rest: &[f64]) {
    if cx.data().get(data).is_empty() {
        cx.data_mut().put(data, rest.to_vec());
    }
}

/// `M·v` with rows of `M` dotted with `v`.
pub(crate) fn mat_vec(m: &M3, v: V3) -> V3 {
    [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
}

/// `Mᵀ·v` as SOFA's `transposeMultiply`: `v0·M[0][c] + v1·M[1][c] + v2·M[2][c]`.
pub(crate) fn mat_t_vec(m: &M3, v: V3) -> V3 {
    let c = |k: usize| v[0] * m[0][k] + v[1] * m[1][k] + v[2] * m[2][k];
    [c(0), c(1), c(2)]
}

/// The shared `addDForce`: `df_i += k·M_k·(dx_i − dx_j)`, `df_j −= k·M_kᵀ·(dx_i − dx_j)`.
fn apply_dfdx(triangles: &[[usize; 3]], dfdx: impl Fn(usize) -> [M3; 3], dx: &[f64], df: &mut [f64], k_factor: f64) {
    for (l, t) in triangles.iter().enumerate() {
        let m = dfdx(l);
        for (k, mk) in m.iter().enumerate() {
            let (i, j) = (t[(k + 1) % 3], t[(k + 2) % 3]);
            let d = sub(at(dx, i), at(dx, j));
            let res = scale(mat_vec(mk, d), k_factor);
            let rest = scale(mat_t_vec(mk, d), k_factor);
            for c in 0..3 {
                df[3 * i + c] += res[c];
                df[3 * j + c] -= rest[c];
            }
        }
    }
}

pub(crate) fn check_len(t: &TriangleEdges, v: &[f64], what: &str) -> SimResult {
    let n = v.len() / 3;
    match t.triangles.iter().flatten().chain(t.edges.iter().flatten()).find(|&&p| p >= n) {
        Some(p) => Err(SimError::new(format!("{what} has {n} points but the topology refers to point {p}"))),
        None => Ok(()),
    }
}

// ----- TriangularQuadraticSpringsForceField ---------------------------------------------------

/// Per-edge data of the quadratic model.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QuadraticEdge {
    pub rest_length: f64,
    pub current_length: f64,
    /// `L − L₀` plus the damping term, of the last `addForce`.
    pub dl: f64,
    /// Sum of the elongation stiffnesses of the triangles around the edge.
    pub stiffness: f64,
}

/// Per-triangle data of the quadratic model.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QuadraticTriangle {
    pub gamma: [f64; 3],
    pub stiffness: [f64; 3],
    pub dfdx: [M3; 3],
}

/// Membrane of edge springs, quadratic in the edge elongations, with angular springs coupling the edges of each triangle.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// Initial Position (recorded from the rest positions when empty; the rest data come from the rest positions)
        initialPoints: Coords,
        /// Poisson ratio in Hooke's law
        poissonRatio: Real = "0.3",
        /// Young modulus in Hooke's law
        youngModulus: Real = "1000",
        /// Ratio damping/stiffness
        dampingRatio: Real = "0",
        /// If Angular Springs should be used or not
        useAngularSprings: Bool = "true",
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
pub struct TriangularQuadraticSpringsForceField {
    state: Option<StateId>,
    topo: TriangleEdges,
    edge_info: Vec<QuadraticEdge>,
    triangle_info: Vec<QuadraticTriangle>,
    damping_ratio: f64,
    angular: bool,
    rayleigh_stiffness: f64,
    /// Positions of the last `addForce` (SOFA's `addDForce` reads the state's positions).
    x: Vec<f64>,
    update_matrix: bool,
}

impl TriangularQuadraticSpringsForceField {
    pub fn edge_info(&self) -> &[QuadraticEdge] {
        &self.edge_info
    }
    pub fn triangle_info(&self) -> &[QuadraticTriangle] {
        &self.triangle_info
    }

    fn update_dfdx(&mut self) {
        let x = &self.x;
        let e = &self.edge_info;
        for (l, t) in self.topo.triangles.iter().enumerate() {
            let tea = self.topo.edges_in[l];
            let ti = &mut self.triangle_info[l];
            for k in 0..3 {
                let (i, j) = ((k + 1) % 3, (k + 2) % 3);
                let (ek, ei, ej) = (&e[tea[k]], &e[tea[i]], &e[tea[j]]);
                let dpk = sub(at(x, t[i]), at(x, t[j]));
                let lk3 = ek.current_length * ek.current_length * ek.current_length;
                let m = &mut ti.dfdx[k];
                if !self.angular {
                    let val1 = -ti.stiffness[k] * ek.dl / ek.current_length;
                    let val2 = -ti.stiffness[k] * ek.rest_length / lk3;
                    for u in 0..3 {
                        for v in 0..3 {
                            m[u][v] = dpk[u] * dpk[v] * val2;
                        }
                        m[u][u] += val1;
                    }
                } else {
                    let dpj = sub(at(x, t[i]), at(x, t[k]));
                    let dpi = sub(at(x, t[j]), at(x, t[k]));
                    let mut val1 = -(ti.stiffness[k] * ek.dl + ti.gamma[i] * ej.dl + ti.gamma[j] * ei.dl);
                    let mut val2 = -val1 - ti.stiffness[k] * ek.rest_length;
                    val1 /= ek.current_length;
                    val2 /= lk3;
                    let valk = ti.gamma[k] / (ej.current_length * ei.current_length);
                    let vali = ti.gamma[i] / (ej.current_length * ek.current_length);
                    let valj = ti.gamma[j] / (ek.current_length * ei.current_length);
                    for u in 0..3 {
                        for v in 0..3 {
                            m[u][v] = dpk[u] * dpk[v] * val2 + dpj[u] * dpi[v] * valk - dpj[u] * dpk[v] * vali + dpk[u] * dpi[v] * valj;
                        }
                        m[u][u] += val1;
                    }
                }
            }
        }
    }
}

impl Component for TriangularQuadraticSpringsForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s, topo, rest) = triangle_edges(cx)?;
        let d = cx.data();
        let (lambda, mu) = lame(d.get(Self::YOUNG_MODULUS), d.get(Self::POISSON_RATIO));
        self.damping_ratio = d.get(Self::DAMPING_RATIO);
        self.angular = d.get(Self::USE_ANGULAR_SPRINGS);
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        record_initial_points(cx, Self::INITIAL_POINTS, &rest);
        self.edge_info =
            topo.edges.iter().map(|e| QuadraticEdge { rest_length: norm(sub(at(&rest, e[1]), at(&rest, e[0]))), ..Default::default() }).collect();
        self.triangle_info = Vec::with_capacity(topo.triangles.len());
        for (t, tea) in topo.edges_in.iter().enumerate() {
            let length = tea.map(|e| self.edge_info[e].rest_length);
            let (area, cot) = heron(length.map(|l| l * l));
            if area.is_nan() || area <= 0.0 {
                return Err(cx
                    .error(format!("triangle {t} {:?} is flat at rest (area {area})", topo.triangles[t]))
                    .hint("remove degenerate triangles from the mesh"));
            }
            let mut ti = QuadraticTriangle::default();
            for j in 0..3 {
                let (k, l) = ((j + 1) % 3, (j + 2) % 3);
                ti.gamma[j] = length[k] * length[l] * (2.0 * cot[k] * cot[l] * (lambda + mu) - mu) / (8.0 * area);
                ti.stiffness[j] = length[j] * length[j] * (2.0 * cot[j] * cot[j] * (lambda + mu) + mu) / (8.0 * area);
                self.edge_info[tea[j]].stiffness += ti.stiffness[j];
            }
            self.triangle_info.push(ti);
        }
        self.topo = topo;
        self.update_matrix = true;
        self.state = Some(s);
        Ok(())
    }
}

impl ForceField for TriangularQuadraticSpringsForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let (x, v) = (io.x[0], io.v[0]);
        check_len(&self.topo, x, "the position vector")?;
        check_len(&self.topo, v, "the velocity vector")?;
        let f = &mut *io.f[0];
        for (e, ei) in self.topo.edges.iter().zip(self.edge_info.iter_mut()) {
            let dp = sub(at(x, e[0]), at(x, e[1]));
            let dv = sub(at(v, e[0]), at(v, e[1]));
            let l = norm(dp);
            ei.current_length = l;
            ei.dl = l - ei.rest_length + self.damping_ratio * dot(dv, dp) / l;
            let val = ei.stiffness * ei.dl / l;
            let force = scale(dp, val);
            for c in 0..3 {
                f[3 * e[1] + c] += force[c];
                f[3 * e[0] + c] -= force[c];
            }
        }
        if self.angular {
            let ei = &self.edge_info;
            for (t, (ta, tea)) in self.topo.triangles.iter().zip(&self.topo.edges_in).enumerate() {
                let ti = &self.triangle_info[t];
                for j in 0..3 {
                    let (k, l) = ((j + 1) % 3, (j + 2) % 3);
                    let s = ei[tea[k]].dl * ti.gamma[l] + ei[tea[l]].dl * ti.gamma[k];
                    let force = scale(sub(at(x, ta[k]), at(x, ta[l])), s).map(|c| c / ei[tea[j]].current_length);
                    for c in 0..3 {
                        f[3 * ta[l] + c] += force[c];
                        f[3 * ta[k] + c] -= force[c];
                    }
                }
            }
        }
        self.x.clear();
        self.x.extend_from_slice(x);
        self.update_matrix = true;
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        check_len(&self.topo, io.x[0], "the displacement vector")?;
        if self.update_matrix {
            if self.x.is_empty() {
                return Err(SimError::new("TriangularQuadraticSpringsForceField: addDForce before any addForce"));
            }
            self.update_dfdx();
            self.update_matrix = false;
        }
        let info = &self.triangle_info;
        apply_dfdx(&self.topo.triangles, |l| info[l].dfdx, io.x[0], io.f[0], k_factor);
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

// ----- TriangularBiquadraticSpringsForceField -------------------------------------------------

/// Per-edge data of the biquadratic model.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BiquadraticEdge {
    pub rest_square_length: f64,
    pub current_square_length: f64,
    /// `L² − L₀²` plus the damping term, of the last `addForce`.
    pub delta_l2: f64,
    /// Sum of the elongation stiffnesses of the triangles around the edge.
    pub stiffness: f64,
}

/// Per-triangle data of the biquadratic model.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BiquadraticTriangle {
    pub gamma: [f64; 3],
    pub stiffness: [f64; 3],
    pub dfdx: [M3; 3],
    pub current_normal: V3,
    pub last_valid_normal: V3,
    pub area: f64,
    pub rest_area: f64,
    pub area_vector: [V3; 3],
    /// Edge vectors `x_l − x_k` of the last `addForce` (only updated with angular springs, as in
    /// SOFA).
    pub dp: [V3; 3],
    /// Area ratio `area / rest_area` of the last `addForce` (compressible model only).
    pub j: f64,
}

/// Membrane of edge springs, quadratic in the squared edge lengths, with angular springs and an optional penalty on compressed triangles.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// Initial Position (recorded from the rest positions when empty; the rest data come from the rest positions)
        initialPoints: Coords,
        /// Poisson ratio in Hooke's law
        poissonRatio: Real = "0.3",
        /// Young modulus in Hooke's law
        youngModulus: Real = "1000",
        /// Ratio damping/stiffness
        dampingRatio: Real = "0",
        /// If Angular Springs should be used or not
        useAngularSprings: Bool = "true",
        /// If additional energy penalizing compressibility should be used (with angular springs only)
        compressible: Bool = "true",
        /// Regularization of the Stiffnes Matrix (between 0 and 1; unused, as in SOFA)
        matrixRegularization: Real = "0.4",
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
pub struct TriangularBiquadraticSpringsForceField {
    state: Option<StateId>,
    topo: TriangleEdges,
    edge_info: Vec<BiquadraticEdge>,
    triangle_info: Vec<BiquadraticTriangle>,
    lambda: f64,
    mu: f64,
    damping_ratio: f64,
    angular: bool,
    compressible: bool,
    rayleigh_stiffness: f64,
    update_matrix: bool,
    /// Triangles whose normal flipped at the last `addForce`.
    flipped: Vec<usize>,
}

impl TriangularBiquadraticSpringsForceField {
    pub fn edge_info(&self) -> &[BiquadraticEdge] {
        &self.edge_info
    }
    pub fn triangle_info(&self) -> &[BiquadraticTriangle] {
        &self.triangle_info
    }
    pub fn lame(&self) -> (f64, f64) {
        (self.lambda, self.mu)
    }
    /// Triangles whose normal flipped at the last `addForce` (SOFA warns about them).
    pub fn flipped(&self) -> &[usize] {
        &self.flipped
    }

    fn update_dfdx(&mut self) {
        let area_stiffness = (self.lambda + self.mu) * 3.0;
        let e = &self.edge_info;
        for (l, tea) in self.topo.edges_in.iter().enumerate() {
            let ti = &mut self.triangle_info[l];
            for k in 0..3 {
                let dpk = neg(ti.dp[k]);
                let m = &mut ti.dfdx[k];
                if !self.angular {
                    let val1 = -ti.stiffness[k] * e[tea[k]].delta_l2;
                    let val2 = -2.0 * ti.stiffness[k];
                    for u in 0..3 {
                        for v in 0..3 {
                            m[u][v] = dpk[u] * dpk[v] * val2;
                        }
                        m[u][u] += val1;
                    }
                } else {
                    let (i, j) = ((k + 1) % 3, (k + 2) % 3);
                    let dpj = ti.dp[j];
                    let dpi = neg(ti.dp[i]);
                    let val1 = -(ti.stiffness[k] * e[tea[k]].delta_l2 + ti.gamma[i] * e[tea[j]].delta_l2 + ti.gamma[j] * e[tea[i]].delta_l2);
                    let val2 = -2.0 * ti.stiffness[k];
                    let (valk, vali, valj) = (2.0 * ti.gamma[k], 2.0 * ti.gamma[i], 2.0 * ti.gamma[j]);
                    for u in 0..3 {
                        for v in 0..3 {
                            m[u][v] = dpk[u] * dpk[v] * val2 + dpj[u] * dpi[v] * valk - dpj[u] * dpk[v] * vali + dpk[u] * dpi[v] * valj;
                        }
                        m[u][u] += val1;
                    }
                }
            }
            // The area penalty exists only with angular springs (SOFA computes the area ratio
            // there; without them its stiffness would divide by a zero current area).
            if self.compressible && self.angular && ti.j < 1.0 {
                let jj = ti.j - 1.0;
                let h = -jj;
                let val2 = 3.0 * area_stiffness * jj * jj / ti.rest_area;
                let mut val1 = area_stiffness * jj * jj * jj / 2.0;
                let dp = scale(neg(ti.current_normal), val1);
                val1 /= 2.0 * ti.area;
                let n = ti.current_normal;
                let mut m1 = [[0.0; 3]; 3];
                for u in 0..3 {
                    for v in 0..3 {
                        m1[u][v] = n[u] * n[v] * val1;
                    }
                }
                let ls = [e[tea[0]].current_square_length, e[tea[1]].current_square_length, e[tea[2]].current_square_length];
                let total = ls[0] + ls[1] + ls[2];
                for (k, (m, lk)) in ti.dfdx.iter_mut().zip(ls).enumerate() {
                    let w = total - 2.0 * lk;
                    m[0][1] += dp[2];
                    m[0][2] -= dp[1];
                    m[1][0] -= dp[2];
                    m[1][2] += dp[0];
                    m[2][0] += dp[1];
                    m[2][1] -= dp[0];
                    let dpi = ti.area_vector[(k + 1) % 3];
                    let dpj = ti.area_vector[(k + 2) % 3];
                    let dpij = dot(dpi, dpj);
                    for u in 0..3 {
                        for v in 0..3 {
                            m[u][v] += (1.0 - h) * dpi[u] * dpj[v] * val2;
                            m[u][v] += m1[u][v] * w;
                            if u == v {
                                m[u][v] += h * val2 * dpij;
                            }
                        }
                    }
                }
            }
        }
    }
}

impl Component for TriangularBiquadraticSpringsForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s, topo, rest) = triangle_edges(cx)?;
        let d = cx.data();
        (self.lambda, self.mu) = lame(d.get(Self::YOUNG_MODULUS), d.get(Self::POISSON_RATIO));
        self.damping_ratio = d.get(Self::DAMPING_RATIO);
        self.angular = d.get(Self::USE_ANGULAR_SPRINGS);
        self.compressible = d.get(Self::COMPRESSIBLE);
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        if self.compressible && !self.angular {
            cx.warn("compressible has no effect without useAngularSprings (SOFA's area penalty lives in the angular-spring loop)");
        }
        record_initial_points(cx, Self::INITIAL_POINTS, &rest);
        self.edge_info = topo
            .edges
            .iter()
            .map(|e| BiquadraticEdge { rest_square_length: norm2(sub(at(&rest, e[1]), at(&rest, e[0]))), ..Default::default() })
            .collect();
        let (lambda, mu) = (self.lambda, self.mu);
        self.triangle_info = Vec::with_capacity(topo.triangles.len());
        for (t, (tri, tea)) in topo.triangles.iter().zip(&topo.edges_in).enumerate() {
            let sq = tea.map(|e| self.edge_info[e].rest_square_length);
            let (area, cot) = heron(sq);
            if area.is_nan() || area <= 0.0 {
                return Err(cx
                    .error(format!("triangle {t} {tri:?} is flat at rest (area {area})"))
                    .hint("remove degenerate triangles from the mesh"));
            }
            let mut ti = BiquadraticTriangle { rest_area: area, ..Default::default() };
            let (pa, pb, pc) = (at(&rest, tri[0]), at(&rest, tri[1]), at(&rest, tri[2]));
            ti.current_normal = cross(sub(pb, pa), sub(pc, pa)).map(|c| c / (2.0 * area));
            ti.last_valid_normal = ti.current_normal;
            for j in 0..3 {
                let (k, l) = ((j + 1) % 3, (j + 2) % 3);
                ti.gamma[j] = (2.0 * cot[k] * cot[l] * (lambda + mu) - mu) / (16.0 * area);
                ti.stiffness[j] = (2.0 * cot[j] * cot[j] * (lambda + mu) + mu) / (16.0 * area);
                self.edge_info[tea[j]].stiffness += ti.stiffness[j];
            }
            self.triangle_info.push(ti);
        }
        self.topo = topo;
        self.update_matrix = true;
        self.state = Some(s);
        Ok(())
    }
}

impl ForceField for TriangularBiquadraticSpringsForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let (x, v) = (io.x[0], io.v[0]);
        check_len(&self.topo, x, "the position vector")?;
        check_len(&self.topo, v, "the velocity vector")?;
        let f = &mut *io.f[0];
        for (e, ei) in self.topo.edges.iter().zip(self.edge_info.iter_mut()) {
            let dp = sub(at(x, e[0]), at(x, e[1]));
            let dv = sub(at(v, e[0]), at(v, e[1]));
            let l2 = norm2(dp);
            ei.current_square_length = l2;
            ei.delta_l2 = l2 - ei.rest_square_length + self.damping_ratio * dot(dv, dp) / l2;
            let force = scale(dp, ei.stiffness * ei.delta_l2);
            for c in 0..3 {
                f[3 * e[1] + c] += force[c];
                f[3 * e[0] + c] -= force[c];
            }
        }
        self.flipped.clear();
        if self.angular {
            let area_stiffness = (self.lambda + self.mu) * 3.0;
            let ei = &self.edge_info;
            for (t, (ta, tea)) in self.topo.triangles.iter().zip(&self.topo.edges_in).enumerate() {
                let ti = &mut self.triangle_info[t];
                for j in 0..3 {
                    let (k, l) = ((j + 1) % 3, (j + 2) % 3);
                    ti.dp[j] = sub(at(x, ta[l]), at(x, ta[k]));
                    let force = scale(neg(ti.dp[j]), ei[tea[k]].delta_l2 * ti.gamma[l] + ei[tea[l]].delta_l2 * ti.gamma[k]);
                    for c in 0..3 {
                        f[3 * ta[l] + c] += force[c];
                        f[3 * ta[k] + c] -= force[c];
                    }
                }
                if self.compressible {
                    ti.current_normal = neg(cross(ti.dp[2], ti.dp[1]));
                    ti.area = norm(ti.current_normal) / 2.0;
                    ti.j = ti.area / ti.rest_area;
                    if ti.j < 1.0 {
                        let jj = ti.j - 1.0;
                        if ti.j < 1e-2 {
                            // Too flat for its own normal: keep the last valid one.
                            ti.current_normal = ti.last_valid_normal;
                        } else {
                            ti.current_normal = ti.current_normal.map(|c| c / (2.0 * ti.area));
                            if dot(ti.current_normal, ti.last_valid_normal) > -0.5 {
                                ti.last_valid_normal = ti.current_normal;
                            } else {
                                self.flipped.push(t);
                                ti.current_normal = scale(ti.current_normal, -1.0);
                            }
                        }
                        let val = area_stiffness * jj * jj * jj;
                        for j in 0..3 {
                            ti.area_vector[j] = cross(ti.current_normal, ti.dp[j]).map(|c| c / 2.0);
                            let fj = scale(ti.area_vector[j], val);
                            for c in 0..3 {
                                f[3 * ta[j] + c] -= fj[c];
                            }
                        }
                    }
                }
            }
        }
        self.update_matrix = true;
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        check_len(&self.topo, io.x[0], "the displacement vector")?;
        if self.update_matrix {
            self.update_dfdx();
            self.update_matrix = false;
        }
        let info = &self.triangle_info;
        apply_dfdx(&self.topo.triangles, |l| info[l].dfdx, io.x[0], io.f[0], k_factor);
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

#[cfg(test)]
mod tests;
