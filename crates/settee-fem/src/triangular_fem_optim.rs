//! `TriangularFEMForceFieldOptim`: corotational plane-stress membrane on the triangles of a
//! topology (forcefields-mappings spec §1.5, §1.8).
//!
//! Each triangle `(a, b, c)` has an in-plane frame `X = ab/|ab|`, `Y ∝ (ab × ac) × ab`, computed
//! from the rest positions at init (rest local coordinates `bx = X·ab`, `cx = X·ac`, `cy = Y·ac`,
//! optionally scaled by `restScale`) and from the current positions at every `add_force` (kept
//! for `add_dforce` and the matrix). In the current frame the displacement from rest is
//! `(dbx, dcx, dcy) = (bx − X·ab, cx − X·ac, cy − Y·ac)`; the strain is built with the rest
//! strain–displacement factors, the stress with the plane-stress law written as
//! `μ' = E/(1+ν)`, `γ = Eν/(1−ν²)` (diagonal `μ'+γ = E/(1−ν²)`, shear `μ'/2`) and the factor
//! `ss = 1/(2·bx·cy)`:
//!
//! ```text
//! e = (cy·dbx, bx·dcy, bx·dcx − cx·dbx)
//! s = (μ'e₀ + γ(e₀+e₁), μ'e₁ + γ(e₀+e₁), μ'e₂/2)·ss
//! f_b = X(cy·s₀ − cx·s₂) + Y(cy·s₂ − cx·s₁),  f_c = X(bx·s₂) + Y(bx·s₁),  f_a = −f_b − f_c
//! ```
//!
//! `s` is the stored "stress" (SOFA's `TriangleState::stress`); it equals `−σ/2` for the Cauchy
//! stress `σ` of the element (the displacement is rest minus current). `add_dforce` applies the
//! same linear map to the increments expressed in the stored frame, including their `Y`
//! component on `b` that the force itself never has; the assembled stiffness is made of the
//! `3×3` blocks `Rᵀ·(J K Jᵀ)ᵢⱼ·R` (`R` the 2×3 frame) with SOFA's `buildStiffnessMatrix`
//! arithmetic. An XML `method` attribute is ignored (SOFA only warns when it is not `large`).

use settee_core::math::{at, cross, dot, normalized, sub};
use settee_core::role::Topology;
use settee_core::{Component, InitCtx, MatrixAccumulator, SimError, SimResult, StateId, VecId};

use crate::common::{check_elements, check_indices, force_field_on_one_state, vec3_state};
use crate::decompose::transpose;
use crate::tetra_common::{material_lists, ElasticData};

/// `method` is not a Data of this class: SOFA's `parse` reads and ignores it (always corotational).
fn drop_method(attrs: &mut Vec<(String, String)>) {
    attrs.retain(|(n, _)| n != "method");
}

type V3 = [f64; 3];

/// The in-plane frame `[X, Y]` of edges `ab`, `ac` (SOFA's `normalize` of `ab` and of
/// `(ab × ac) × ab`).
pub fn triangle_frame(ab: &V3, ac: &V3) -> [V3; 2] {
    let n = cross(*ab, *ac);
    [normalized(*ab), normalized(cross(n, *ab))]
}

/// `X·s + Y·t`.
fn combine(f: &[V3; 2], s: f64, t: f64) -> V3 {
    [f[0][0] * s + f[1][0] * t, f[0][1] * s + f[1][1] * t, f[0][2] * s + f[1][2] * t]
}

/// Rest data of one triangle (SOFA's `TriangleInfo`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleRest {
    pub bx: f64,
    pub cx: f64,
    pub cy: f64,
    /// `0.5 / (bx·cy)`.
    pub ss: f64,
    /// `μ' = E/(1+ν)`.
    pub mu: f64,
    /// `γ = Eν/(1−ν²)`.
    pub gamma: f64,
}

impl TriangleRest {
    /// The stress-like vector of a strain-like vector `e`, times `scale`.
    fn stress(&self, e: [f64; 3], scale: f64) -> [f64; 3] {
        let g = self.gamma * (e[0] + e[1]);
        let mut s = [self.mu * e[0] + g, self.mu * e[1] + g, 0.5 * self.mu * e[2]];
        for x in &mut s {
            *x *= scale;
        }
        s
    }

    /// `(f_b, f_c)` of a stress-like vector in frame `f`.
    fn nodal(&self, f: &[V3; 2], s: [f64; 3]) -> (V3, V3) {
        let fb = combine(f, self.cy * s[0] - self.cx * s[2], self.cy * s[2] - self.cx * s[1]);
        let fc = combine(f, self.bx * s[2], self.bx * s[1]);
        (fb, fc)
    }

    /// The `(dfᵢ/dxⱼ)` 2×2 blocks in the element frame for `i, j ∈ {a, b, c}` (without `kFactor`),
    /// with SOFA's `buildStiffnessMatrix` arithmetic: `[00, 01, 02, 11, 12, 22]`.
    fn local_blocks(&self) -> [[[f64; 2]; 2]; 6] {
        let (bx, cx, cy) = (self.bx, self.cx, self.cy);
        let factor = -self.ss;
        let fg = factor * self.gamma;
        let fgm = factor * (self.gamma + self.mu);
        let fm2 = factor * self.mu / 2.0;
        let k = [[fgm * cy, fg * -cx, 0.0, fg * bx], [fg * cy, fgm * -cx, 0.0, fgm * bx], [fm2 * -cx, fm2 * cy, fm2 * bx, 0.0]];
        let b11_01 = cy * k[0][1] - cx * k[2][1];
        let b11 = [[cy * k[0][0] - cx * k[2][0], b11_01], [b11_01, cy * k[2][1] - cx * k[1][1]]];
        let b12 = [[-cx * k[2][2], cy * k[0][3]], [cy * k[2][2], -cx * k[1][3]]];
        let b22 = [[bx * k[2][2], 0.0], [0.0, bx * k[1][3]]];
        let mut b00 = [[0.0; 2]; 2];
        let mut b01 = [[0.0; 2]; 2];
        let mut b02 = [[0.0; 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                b00[i][j] = b11[i][j] + b12[i][j] + b22[i][j] + b12[j][i];
                b01[i][j] = -b11[i][j] - b12[j][i];
                b02[i][j] = -b12[i][j] - b22[i][j];
            }
        }
        [b00, b01, b02, b11, b12, b22]
    }
}

/// `Rᵀ·(B·R)` for the 2×3 frame `R` (SOFA's `frame.multTranspose(B*frame)`).
fn to_world(f: &[V3; 2], b: &[[f64; 2]; 2]) -> [[f64; 3]; 3] {
    let mut p = [[0.0; 3]; 2];
    for i in 0..2 {
        for j in 0..3 {
            p[i][j] = b[i][0] * f[0][j] + b[i][1] * f[1][j];
        }
    }
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = f[0][i] * p[0][j] + f[1][i] * p[1][j];
        }
    }
    r
}

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        preparse = drop_method,
        data = {
            /// Rayleigh damping coefficient related to stiffness
            rayleighStiffness: Real = "0",
            /// Ratio damping/stiffness (not used by the force computation, as in SOFA)
            damping: Real = "0",
            /// Scale factor applied to rest positions (to simulate pre-stretched materials); used only when set
            restScale: Real = "1",
            /// Compute principal stress for each triangle (diagnostics; not computed here)
            computePrincipalStress: Bool = "false",
            /// output: max stress value computed over the triangulation (not computed)
            stressMaxValue: Real = "0",
            /// Flag activating rendering of stress directions within each triangle (rendering only)
            showStressVector: Bool = "false",
            /// Threshold value to render only stress vectors higher to this threshold (rendering only)
            showStressThreshold: Real = "0",
        },
        links = {
            /// topology whose triangles are the elements (default: the context topology)
            topology: Topology,
        },
        inherit = [ElasticData, Self],
    }
    /// Corotational Triangular finite elements
    #[derive(Clone, Default)]
    pub struct TriangularFEMForceFieldOptim {
        state: Option<StateId>,
        triangles: Vec<[usize; 3]>,
        rest: Vec<TriangleRest>,
        /// Current frames (SOFA's `TriangleState::frame`), from the last `add_force`.
        frames: Vec<[V3; 2]>,
        /// Stored stress-like vectors of the last `add_force`.
        stress: Vec<[f64; 3]>,
        rayleigh_stiffness: f64,
    }
}

impl TriangularFEMForceFieldOptim {
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }
    pub fn rest(&self) -> &[TriangleRest] {
        &self.rest
    }
    /// The frame `[X, Y]` of triangle `i` from the last `add_force` (from the positions at init
    /// before the first one).
    pub fn frame(&self, i: usize) -> [V3; 2] {
        self.frames[i]
    }
    /// SOFA's stored stress of triangle `i` (`−σ/2` in the element frame, Voigt `xx, yy, xy`).
    pub fn stress(&self, i: usize) -> [f64; 3] {
        self.stress[i]
    }
}

impl Component for TriangularFEMForceFieldOptim {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject")?;
        let mesh = cx.require_mesh()?;
        if mesh.triangles.is_empty() {
            if mesh.quads.is_empty() {
                cx.warn("no triangles found in the topology: no forces");
            } else {
                cx.warn("the topology only contains quads while this force field only supports triangles: no forces");
            }
        }
        let n = cx.state_size(s);
        check_elements(cx, "triangle", &mesh.triangles, n)?;
        let (young, poisson) = material_lists(cx, ElasticData::YOUNG_MODULUS, ElasticData::POISSON_RATIO);
        let d = cx.data();
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        let rest_scale = d.is_given(Self::REST_SCALE).then(|| d.get(Self::REST_SCALE));
        let x0 = cx.rest_or_position(s);
        let x = cx.read_vec(s, VecId::POSITION).to_vec();
        let x = if x.len() >= 3 * n { x } else { x0.clone() };
        self.triangles = mesh.triangles.clone();
        self.rest.clear();
        self.frames.clear();
        for (i, t) in self.triangles.iter().enumerate() {
            let p = |v: &[f64], k: usize| at(v, t[k]);
            let a = p(&x0, 0);
            let mut ab = sub(p(&x0, 1), a);
            let mut ac = sub(p(&x0, 2), a);
            if let Some(r) = rest_scale {
                for k in 0..3 {
                    ab[k] *= r;
                    ac[k] *= r;
                }
            }
            let f0 = triangle_frame(&ab, &ac);
            let (bx, cxx, cy) = (dot(f0[0], ab), dot(f0[0], ac), dot(f0[1], ac));
            let e = young.get(i).copied().unwrap_or(young[0]);
            let nu = poisson.get(i).copied().unwrap_or(poisson[0]);
            self.rest.push(TriangleRest { bx, cx: cxx, cy, ss: 0.5 / (bx * cy), mu: e / (1.0 + nu), gamma: (e * nu) / (1.0 - nu * nu) });
            let a = p(&x, 0);
            self.frames.push(triangle_frame(&sub(p(&x, 1), a), &sub(p(&x, 2), a)));
        }
        self.stress = vec![[0.0; 3]; self.triangles.len()];
        self.state = Some(s);
        Ok(())
    }
}

force_field_on_one_state!(TriangularFEMForceFieldOptim);

impl TriangularFEMForceFieldOptim {
    fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        check_indices(&self.triangles, "triangle", x.len() / 3)?;
        for (i, t) in self.triangles.iter().enumerate() {
            let ti = &self.rest[i];
            let a = at(x, t[0]);
            let ab = sub(at(x, t[1]), a);
            let ac = sub(at(x, t[2]), a);
            let fr = triangle_frame(&ab, &ac);
            self.frames[i] = fr;
            // Displacement in the element frame (rest − current); dby = 0 by construction.
            let dbx = ti.bx - dot(fr[0], ab);
            let dcx = ti.cx - dot(fr[0], ac);
            let dcy = ti.cy - dot(fr[1], ac);
            let strain = [ti.cy * dbx, ti.bx * dcy, ti.bx * dcx - ti.cx * dbx];
            let s = ti.stress(strain, ti.ss);
            let (fb, fc) = ti.nodal(&fr, s);
            for k in 0..3 {
                f[3 * t[0] + k] += -fb[k] - fc[k];
                f[3 * t[1] + k] += fb[k];
                f[3 * t[2] + k] += fc[k];
            }
            self.stress[i] = s;
        }
        Ok(())
    }

    fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, _b_factor: f64) -> SimResult {
        check_indices(&self.triangles, "triangle", dx.len() / 3)?;
        for (i, t) in self.triangles.iter().enumerate() {
            let ti = &self.rest[i];
            let fr = &self.frames[i];
            let da = at(dx, t[0]);
            let dab = sub(at(dx, t[1]), da);
            let dac = sub(at(dx, t[2]), da);
            let (dbx, dby) = (dot(fr[0], dab), dot(fr[1], dab));
            let (dcx, dcy) = (dot(fr[0], dac), dot(fr[1], dac));
            let strain = [ti.cy * dbx, ti.bx * dcy - ti.cx * dby, ti.bx * dcx - ti.cx * dbx + ti.cy * dby];
            let s = ti.stress(strain, ti.ss * k_factor);
            let (fb, fc) = ti.nodal(fr, s);
            for k in 0..3 {
                df[3 * t[0] + k] -= -fb[k] - fc[k];
                df[3 * t[1] + k] -= fb[k];
                df[3 * t[2] + k] -= fc[k];
            }
        }
        Ok(())
    }

    /// Blocks `kFactor·Rᵀ·Bᵢⱼ·R` in SOFA's order: `aa, ab, ba, ac, ca, bb, bc, cb, cc`.
    fn k_matrix(&self, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let st = self.state.ok_or_else(|| SimError::new("TriangularFEMForceFieldOptim used before init"))?;
        for (i, t) in self.triangles.iter().enumerate() {
            let fr = &self.frames[i];
            let [b00, b01, b02, b11, b12, b22] = self.rest[i].local_blocks();
            let scaled = |b: [[f64; 3]; 3]| b.map(|r| r.map(|v| v * k_factor));
            let m01 = to_world(fr, &b01);
            let m02 = to_world(fr, &b02);
            let m12 = to_world(fr, &b12);
            m.add_block3(st, t[0], st, t[0], &scaled(to_world(fr, &b00)));
            m.add_block3(st, t[0], st, t[1], &scaled(m01));
            m.add_block3(st, t[1], st, t[0], &scaled(transpose(&m01)));
            m.add_block3(st, t[0], st, t[2], &scaled(m02));
            m.add_block3(st, t[2], st, t[0], &scaled(transpose(&m02)));
            m.add_block3(st, t[1], st, t[1], &scaled(to_world(fr, &b11)));
            m.add_block3(st, t[1], st, t[2], &scaled(m12));
            m.add_block3(st, t[2], st, t[1], &scaled(transpose(&m12)));
            m.add_block3(st, t[2], st, t[2], &scaled(to_world(fr, &b22)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
