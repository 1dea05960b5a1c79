//! `FastTriangularBendingSprings`: Volino's linear bending model on the interior edges of a
//! triangle mesh (forcefields-mappings spec §2.5).
//!
//! For an edge `(C, D)` (the topology's vertex order) shared by exactly two triangles, `A` is the
//! vertex opposite the edge in the lower-index triangle and `B` the one in the higher-index
//! triangle (every adjacent triangle rebuilds the spring; the last one wins). With rest positions
//! `P`, the weights `α` and the stiffness `λ` are fixed at init; the bending vector
//! `R = Σ αᵢ xᵢ` gives `fᵢ −= λ·αᵢ·R` and `df_j −= Σ_k dx_k·λ·kFactor·α_k·α_j`. A spring is built only
//! when `|P_B − P_A|` and `|P_D − P_C|` exceed `minDistValidity`.
//!
//! As in SOFA's `buildStiffnessMatrix`, the assembled stiffness holds the blocks `(j, k)` of
//! `A`, `B` and `C` only: the rows and columns of `D` are left out (SOFA loops over the spatial
//! dimension, 3, instead of the 4 vertices), so the assembled matrix differs from `addDForce`.

use crate::RayleighStiffnessData;
use settee_core::component::ForceField;
use settee_core::role::{MechanicalState, Topology};
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, MeshData, SimError, SimResult, StateId};

use crate::topo::{self, cross3, dot3, norm3, sub3};

/// One bending element: vertices `A, B, C, D`, weights and stiffness.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeSpring {
    pub vid: [usize; 4],
    pub alpha: [f64; 4],
    pub lambda: f64,
}

impl EdgeSpring {
    /// The weights and stiffness from positions `p` (3 reals per point).
    pub fn new(p: &[f64], a: usize, b: usize, c: usize, d: usize, bending_stiffness: f64) -> EdgeSpring {
        let pt = |i: usize| &p[3 * i..3 * i + 3];
        let na = cross3(sub3(pt(a), pt(c)), sub3(pt(a), pt(d)));
        let nb = cross3(sub3(pt(b), pt(d)), sub3(pt(b), pt(c)));
        let nc = cross3(sub3(pt(c), pt(b)), sub3(pt(c), pt(a)));
        let nd = cross3(sub3(pt(d), pt(a)), sub3(pt(d), pt(b)));
        let (la, lb, lc, ld) = (norm3(na), norm3(nb), norm3(nc), norm3(nd));
        let alpha = [lb / (la + lb), la / (la + lb), -ld / (lc + ld), -lc / (lc + ld)];
        // Unit edge direction (SOFA's normalize: unchanged when the norm is below ε).
        let mut e = sub3(pt(c), pt(d));
        let en = norm3(e);
        if en > f64::EPSILON {
            for x in &mut e {
                *x /= en;
            }
        }
        let ac = sub3(pt(c), pt(a));
        let bc = sub3(pt(c), pt(b));
        let (pa, pb) = (dot3(ac, e), dot3(bc, e));
        let ha = norm3([ac[0] - e[0] * pa, ac[1] - e[1] * pa, ac[2] - e[2] * pa]);
        let hb = norm3([bc[0] - e[0] * pb, bc[1] - e[1] * pb, bc[2] - e[2] * pb]);
        let l = norm3(sub3(pt(c), pt(d)));
        let lambda = (2.0 / 3.0) * (ha + hb) / (ha * ha * hb * hb) * l * bending_stiffness;
        EdgeSpring { vid: [a, b, c, d], alpha, lambda }
    }

    /// `R = Σ αᵢ xᵢ`; `f[vᵢ] −= R·λ·αᵢ`.
    fn add_force(&self, f: &mut [f64], x: &[f64]) {
        let [a, b, c, d] = self.vid;
        let mut r = [0.0; 3];
        for (k, rk) in r.iter_mut().enumerate() {
            *rk = x[3 * a + k] * self.alpha[0] + x[3 * b + k] * self.alpha[1] + x[3 * c + k] * self.alpha[2] + x[3 * d + k] * self.alpha[3];
        }
        for (v, al) in self.vid.iter().zip(self.alpha) {
            for k in 0..3 {
                f[3 * v + k] -= r[k] * self.lambda * al;
            }
        }
    }

    /// SOFA's optimised `addDForce`: `t_k = dx[v_k]·λ·kFactor·α_k`, then `df[v_j] −= t_k·α_j` for
    /// every `j`, `k`.
    fn add_dforce(&self, df: &mut [f64], dx: &[f64], k_factor: f64) {
        let mut t = [[0.0; 3]; 4];
        for (tk, (v, al)) in t.iter_mut().zip(self.vid.iter().zip(self.alpha)) {
            for c in 0..3 {
                tk[c] = dx[3 * v + c] * self.lambda * k_factor * al;
            }
        }
        for (v, al) in self.vid.iter().zip(self.alpha) {
            for tk in &t {
                for c in 0..3 {
                    df[3 * v + c] -= tk[c] * al;
                }
            }
        }
    }
}

/// The bending elements of a triangle mesh in edge order, `(edge index, element)`, from the rest
/// positions `rest` (3 reals per point).
pub fn bending_elements(mesh: &MeshData, rest: &[f64], bending_stiffness: f64, min_dist: f64) -> Result<Vec<(usize, EdgeSpring)>, String> {
    let ee = topo::element_edges(mesh, &mesh.triangles, "triangle")?;
    let eps2 = min_dist * min_dist;
    let mut springs: Vec<Option<EdgeSpring>> = vec![None; mesh.edges.len()];
    let pt = |i: usize| &rest[3 * i..3 * i + 3];
    for (t, tri) in mesh.triangles.iter().enumerate() {
        for &e in &ee.edges_in[t] {
            let shell = &ee.around_edge[e];
            if shell.len() != 2 {
                springs[e] = None;
                continue;
            }
            let other = if shell[0] == t { shell[1] } else { shell[0] };
            let i1 = topo::local_edge(&ee.edges_in[other], e).expect("edge of its shell's triangle");
            let i2 = topo::local_edge(&ee.edges_in[t], e).expect("edge of its triangle");
            let (v1, v2) = (mesh.triangles[other][i1], tri[i2]);
            let [e1, e2] = mesh.edges[e];
            let vp = sub3(pt(v2), pt(v1));
            let ve = sub3(pt(e2), pt(e1));
            if dot3(vp, vp) > eps2 && dot3(ve, ve) > eps2 {
                springs[e] = Some(EdgeSpring::new(rest, v1, v2, e1, e2, bending_stiffness));
            }
        }
    }
    Ok(springs.into_iter().enumerate().filter_map(|(e, s)| s.map(|s| (e, s))).collect())
}

/// Linear bending forces (Volino's model) across the interior edges of a triangle mesh.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    create = |_| FastTriangularBendingSprings::new(),
    data = {
        /// bending stiffness of the material
        bendingStiffness: Real = "1",
        /// distance under which a spring is not valid
        minDistValidity: Real = "0.000001",
    },
    inherit = [Self, RayleighStiffnessData],
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
        /// triangle topology (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct FastTriangularBendingSprings {
    state: Option<StateId>,
    springs: Vec<EdgeSpring>,
    edges: Vec<usize>,
    rayleigh_stiffness: f64,
}

impl FastTriangularBendingSprings {
    pub fn new() -> FastTriangularBendingSprings {
        FastTriangularBendingSprings { state: None, springs: Vec::new(), edges: Vec::new(), rayleigh_stiffness: 0.0 }
    }

    /// The bending elements, in edge order.
    pub fn springs(&self) -> &[EdgeSpring] {
        &self.springs
    }

    /// The edge of each element.
    pub fn spring_edges(&self) -> &[usize] {
        &self.edges
    }
}

impl Default for FastTriangularBendingSprings {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for FastTriangularBendingSprings {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = topo::state_with_layout(cx, Layout::Vec3)?;
        let d = cx.data();
        let (k, min_dist) = (d.get(Self::BENDING_STIFFNESS), d.get(Self::MIN_DIST_VALIDITY));
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        let mesh = cx.require_mesh()?;
        if mesh.triangles.is_empty() {
            cx.warn("the topology has no triangles: no bending forces");
        }
        let rest = cx.rest_or_position(s);
        topo::check_points(&mesh.triangles, rest.len() / 3, "triangle").map_err(|m| cx.error(m))?;
        let springs = bending_elements(&mesh, &rest, k, min_dist).map_err(|m| cx.error(m))?;
        self.edges = springs.iter().map(|(e, _)| *e).collect();
        self.springs = springs.into_iter().map(|(_, s)| s).collect();
        self.state = Some(s);
        Ok(())
    }
}

fn check(springs: &[EdgeSpring], n: usize) -> SimResult {
    match springs.iter().flat_map(|s| s.vid).find(|&v| v >= n) {
        Some(v) => Err(SimError::new(format!("bending element refers to point {v} beyond the state's {n} DOFs"))),
        None => Ok(()),
    }
}

impl ForceField for FastTriangularBendingSprings {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        check(&self.springs, io.x[0].len() / 3)?;
        let x = io.x[0];
        for s in &self.springs {
            s.add_force(io.f[0], x);
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        check(&self.springs, io.x[0].len() / 3)?;
        let dx = io.x[0];
        for s in &self.springs {
            s.add_dforce(io.f[0], dx, k_factor);
        }
        Ok(())
    }

    /// Blocks `−λ·α_j·α_k·I₃` for `j, k` among `A, B, C` (SOFA leaves `D` out, see the module
    /// documentation), times `kFactor`.
    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let st = self.state.ok_or_else(|| SimError::new("FastTriangularBendingSprings used before init"))?;
        for s in &self.springs {
            for j in 0..3 {
                for k in 0..3 {
                    let v = -s.lambda * s.alpha[j] * s.alpha[k] * k_factor;
                    for c in 0..3 {
                        acc.add(st, 3 * s.vid[j] + c, st, 3 * s.vid[k] + c, v);
                    }
                }
            }
        }
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

#[cfg(test)]
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    use super::FastTriangularBendingSprings;
    use crate::test_support::*;

    const REST: &str = "0 0 0  1 0 0  0.5 1 0  0.5 -1 0";

    fn pair(position: &str, k: &str) -> (Scene, settee_core::ComponentId) {
        let (f, mut s) = state_scene(&[("rest_position", REST), ("position", position)]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 2  1 0 3")]);
        let c = add(&mut s, &f, Scene::ROOT, "FastTriangularBendingSprings", &[("bendingStiffness", k)]);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    /// Edge C = 0, D = 1 along x, A = 2 in the first triangle, B = 3 in the second; symmetric rest
    /// shape: α = (½, ½, −½, −½), heights 1, edge length 1, so λ = (2/3)·2·k = 4k/3. Folding A to
    /// (0.5, cos φ, sin φ) gives R = (0, (cos φ − 1)/2, sin φ/2) and `f_i = −λ·α_i·R`.
    #[test]
    fn one_bent_pair_of_triangles() {
        let phi = std::f64::consts::FRAC_PI_3;
        let pos = format!("0 0 0  1 0 0  0.5 {} {}  0.5 -1 0", phi.cos(), phi.sin());
        let (mut s, c) = pair(&pos, "3");
        let ff = s.get::<FastTriangularBendingSprings>(c).unwrap();
        assert_eq!(ff.springs().len(), 1);
        let e = ff.springs()[0];
        assert_eq!(e.vid, [2, 3, 0, 1]);
        assert_close(&e.alpha, &[0.5, 0.5, -0.5, -0.5], 1e-15);
        assert!((e.lambda - 4.0).abs() < 1e-14);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        let r = [0.0, (phi.cos() - 1.0) / 2.0, phi.sin() / 2.0];
        let fa = r.map(|x| -4.0 * 0.5 * x);
        let fc = r.map(|x| 4.0 * 0.5 * x);
        let expected = [fc, fc, fa, fa].concat();
        assert_close(&fv, &expected, 1e-14);
        // The force is linear in the positions: finite differences are exact.
        let dx = random_vec(12, 4);
        check_fd(&mut s, &dx, 1e-3, 1e-9);
    }

    /// SOFA's assembled matrix keeps the blocks of A, B and C only.
    #[test]
    fn assembled_matrix_leaves_out_the_fourth_vertex() {
        let (mut s, c) = pair("0 0 0.1  1 0 0  0.5 0.8 0.4  0.5 -1 0.1", "3");
        let e = s.get::<FastTriangularBendingSprings>(c).unwrap().springs()[0];
        let scope = MechScope::build(&s, Scene::ROOT);
        forces(&mut s, &scope);
        let k = assembled(&mut s, &scope, 2.0, 0.0).to_dense();
        let n = 12;
        for r in 0..n {
            for col in 0..n {
                let (vr, vc) = (e.vid.iter().position(|&v| v == r / 3).unwrap(), e.vid.iter().position(|&v| v == col / 3).unwrap());
                let expected = if vr < 3 && vc < 3 && r % 3 == col % 3 { -e.lambda * e.alpha[vr] * e.alpha[vc] * 2.0 } else { 0.0 };
                assert_eq!(k[r * n + col], expected, "({r}, {col})");
            }
        }
        // addDForce has all four vertices: K·dx matches it on A, B, C rows when dx vanishes on D.
        let mut dx = random_vec(12, 8);
        dx[3..6].fill(0.0); // D = point 1
        let df = dforce(&mut s, &scope, &dx, 2.0);
        let kdx = mul(&assembled(&mut s, &scope, 2.0, 0.0), &dx);
        for r in [0, 1, 2, 6, 7, 8, 9, 10, 11] {
            assert!((kdx[r] - df[r]).abs() < 1e-12, "row {r}");
        }
        assert!(df[3..6].iter().any(|v| v.abs() > 1e-3) && kdx[3..6].iter().all(|v| *v == 0.0));
    }

    #[test]
    fn too_close_vertices_make_no_spring() {
        let (f, mut s) = state_scene(&[("position", "0 0 0  1 0 0  0.5 1 0  0.5 -1 0")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 2  1 0 3")]);
        let c = add(&mut s, &f, Scene::ROOT, "FastTriangularBendingSprings", &[("minDistValidity", "2.5")]);
        init_root(&mut s, &f).unwrap();
        assert!(s.get::<FastTriangularBendingSprings>(c).unwrap().springs().is_empty());
    }
}
