//! `QuadBendingFEMForceField`: SOFA's small-displacement Mindlin plate element on the quads of a
//! topology (forcefields-mappings spec §1.9).
//!
//! The element has 5 DOFs per node (`x, y, z, θx, θy`) but the rotations are never part of the
//! state: they are taken as zero, so only the membrane (`x, y`) and transverse (`z`) parts act.
//! No element frame is computed: quad `(p0, p1, p2, p3)` is treated as a rectangle parallel to the
//! world `xy` plane with `p0p1` along `x` and `p0p3` along `y`, of half-sizes
//! `l = |p1 − p0|/2`, `h = |p3 − p0|/2` measured in 3D on the current positions. On any other
//! geometry (e.g. SOFA's cylindrical example mesh) the formulas are applied literally, as SOFA does.
//!
//! With corner signs `(mᵢ, nᵢ) = (−1,−1), (1,−1), (1,1), (−1,1)`:
//! * membrane: 2×2 Gauss rule at `(g₁, g₂) ∈ {(+,+), (−,+), (+,−), (−,−)}·√3/3`, shape-function
//!   derivatives `axᵢ = mᵢ(1 + nᵢg₂)/(4l)`, `ayᵢ = nᵢ(1 + mᵢg₁)/(4h)`, plane-stress
//!   `Cb = E·t/(1−ν²)·[[1,ν,0],[ν,1,0],[0,0,(1−ν)/2]]`, blocks `l·h·Σ_g Bᵢᵀ·Cb·Bⱼ` summed per point;
//! * transverse shear and bending: one-point rule (weight 2×2) with `G' = (5/6)·E·t/(2+2ν)` on the
//!   `z` rows and the bending matrix `E·t³/(12(1−ν²))` on the (always zero) rotations.
//!
//! `add_force`: with the centroid `C = (p0 + p2)/2` and its rest value `C₀`, the displacement of
//! node `i` is `(X₀ᵢ − C₀) − (xᵢ − C)` and `fᵢ += Σⱼ Kᵢⱼ·Dⱼ` (`x, y` rows from the membrane block,
//! `z` rows from the shear block). `add_dforce`: `df −= k·K·dx` with the *absolute* `dx` and SOFA's
//! plain `kFactor` (the Rayleigh stiffness term is not applied, as in SOFA). The half-sizes come
//! from the positions of the last `add_force` (SOFA reads the state's current positions, which are
//! the same within a time step), from the positions at init before the first one.
//!
//! **Matrix** — SOFA extracts the node blocks of the 20×20 element matrix with a stride of 3 (the
//! size of a `Vec3` derivative) instead of 5, so block `(n1, n2)` is the 3×3 sub-matrix at rows
//! `3·n1`, columns `3·n2` of the 5-DOF matrix (mixing translations and rotations of different
//! nodes). This is reproduced: the assembled matrix is *not* the operator of `add_dforce`.
//! The `method` Data is accepted and ignored (only the small-displacement element exists).

use settee_core::math::{at, norm, sub};
use settee_core::role::Topology;
use settee_core::{Component, InitCtx, MatrixAccumulator, SimError, SimResult, StateId, VecId};

use crate::common::{check_elements, check_indices, force_field_on_one_state, vec3_state};

type V3 = [f64; 3];

/// Corner signs `(m, n)` of the four nodes.
const SIGNS: [(f64, f64); 4] = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];

/// Material constants of one quad.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QuadMaterial {
    /// Membrane plane-stress matrix entries `(0,0), (0,1), (1,0), (1,1), (2,2)`.
    pub cb: [f64; 5],
    /// Bending entries `(3,3), (3,4), (4,3), (4,4), (5,5)` and shear `(6,6), (7,7)`.
    pub cs_bend: [f64; 5],
    pub cs_shear: [f64; 2],
}

impl QuadMaterial {
    pub fn new(e: f64, nu: f64, t: f64) -> QuadMaterial {
        let d = 1.0 - nu * nu;
        let cb00 = e * t / d;
        let cb01 = nu * e * t / d;
        let cb22 = e * t * (1.0 - nu) / (2.0 - 2.0 * nu * nu);
        let d12 = 12.0 - 12.0 * nu * nu;
        let b33 = e * t * t * t / d12;
        let b34 = nu * e * t * t * t / d12;
        let b55 = (nu * e * t * t * t) * (1.0 - nu) / (24.0 - 24.0 * nu * nu);
        let k = 5.0 / 6.0;
        let g = k * e * t / (2.0 + 2.0 * nu);
        QuadMaterial { cb: [cb00, cb01, cb01, cb00, cb22], cs_bend: [b33, b34, b34, b33, b55], cs_shear: [g, g] }
    }
}

/// The 20×20 element stiffness (5 DOFs per node: `x, y, z, θx, θy`) of a quad of half-sizes
/// `l`, `h`, with SOFA's evaluation order.
pub fn element_stiffness(mat: &QuadMaterial, l: f64, h: f64) -> [[f64; 20]; 20] {
    let mut k = [[0.0; 20]; 20];
    let lh = l * h;
    let g = 3f64.sqrt() / 3.0;
    let [c00, c01, c10, c11, c22] = mat.cb;
    // Membrane: one matrix per Gauss point, then their sum in point order.
    let mut kb = [[[0.0; 8]; 8]; 4];
    for (q, (g1, g2)) in [(g, g), (-g, g), (g, -g), (-g, -g)].into_iter().enumerate() {
        let ax = SIGNS.map(|(m, n)| m * (1.0 + n * g2) / (4.0 * l));
        let ay = SIGNS.map(|(m, n)| n * (1.0 + m * g1) / (4.0 * h));
        for i in 0..4 {
            for j in 0..4 {
                let b = &mut kb[q];
                b[2 * i][2 * j] = lh * (ax[i] * c00 * ax[j] + ay[i] * c22 * ay[j]);
                b[2 * i][2 * j + 1] = lh * (ax[i] * c01 * ay[j] + ay[i] * c22 * ax[j]);
                b[2 * i + 1][2 * j] = lh * (ay[i] * c10 * ax[j] + ax[i] * c22 * ay[j]);
                b[2 * i + 1][2 * j + 1] = lh * (ay[i] * c11 * ay[j] + ax[i] * c22 * ax[j]);
            }
        }
    }
    for i in 0..4 {
        for j in 0..4 {
            for (a, b) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                let (r, c) = (2 * i + a, 2 * j + b);
                k[5 * i + a][5 * j + b] = kb[0][r][c] + kb[1][r][c] + kb[2][r][c] + kb[3][r][c];
            }
        }
    }
    // Shear (z) and bending (θ) terms, one-point rule with weight 2 in each direction.
    let [b33, b34, b43, b44, b55] = mat.cs_bend;
    let [s66, s77] = mat.cs_shear;
    let sx = SIGNS.map(|(m, _)| m / (4.0 * l));
    let sy = SIGNS.map(|(_, n)| n / (4.0 * h));
    let q = -1.0 / 4.0;
    let ws = 2.0;
    for i in 0..4 {
        for j in 0..4 {
            let (r, c) = (5 * i, 5 * j);
            k[r + 2][c + 2] = lh * (sx[i] * s66 * sx[j] + sy[i] * s77 * sy[j]) * ws * ws;
            k[r + 2][c + 3] = lh * (sx[i] * s66 * q) * ws * ws;
            k[r + 2][c + 4] = lh * (sy[i] * s77 * q) * ws * ws;
            k[r + 3][c + 2] = lh * (q * s66 * sx[j]) * ws * ws;
            k[r + 3][c + 3] = lh * (sx[i] * b33 * sx[j] + sy[i] * b55 * sy[j] + q * s66 * q) * ws * ws;
            k[r + 3][c + 4] = lh * (sx[i] * b34 * sy[j] + sy[i] * b55 * sx[j]) * ws * ws;
            k[r + 4][c + 2] = lh * (q * s77 * sy[j]) * ws * ws;
            k[r + 4][c + 3] = lh * (sy[i] * b43 * sx[j] + sx[i] * b55 * sy[j]) * ws * ws;
            k[r + 4][c + 4] = lh * (sy[i] * b44 * sy[j] + sx[i] * b55 * sx[j] + q * s77 * q) * ws * ws;
        }
    }
    k
}

/// `K·D` on the translational rows, with the rotational DOFs taken as zero (SOFA's term order).
fn translational_product(k: &[[f64; 20]; 20], d: &[f64; 20]) -> [[f64; 3]; 4] {
    let mut f = [[0.0; 3]; 4];
    for (i, fi) in f.iter_mut().enumerate() {
        for c in 0..2 {
            let row = &k[5 * i + c];
            let mut s = row[0] * d[0];
            for col in [1, 5, 6, 10, 11, 15, 16] {
                s += row[col] * d[col];
            }
            fi[c] = s;
        }
        let row = &k[5 * i + 2];
        fi[2] = row[2] * d[2] + row[7] * d[7] + row[12] * d[12] + row[17] * d[17];
    }
    f
}

/// Half-sizes `(l, h)` of quad `q` at positions `x`.
fn half_sizes(x: &[f64], q: &[usize; 4]) -> (f64, f64) {
    let p = |k: usize| at(x, q[k]);
    let (lv, hv) = (sub(p(1), p(0)), sub(p(3), p(0)));
    (norm(lv) / 2.0, norm(hv) / 2.0)
}

/// The four nodes of quad `q` at positions `x` relative to the centroid `(x₀ + x₂)/2`.
fn centred(x: &[f64], q: &[usize; 4]) -> [V3; 4] {
    let p = |k: usize| at(x, q[k]);
    let (a, c) = (p(0), p(2));
    let centroid = [(a[0] + c[0]) / 2.0, (a[1] + c[1]) / 2.0, (a[2] + c[2]) / 2.0];
    [0, 1, 2, 3].map(|k| sub(p(k), centroid))
}

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        data = {
            /// large: large displacements, small: small displacements (only the small-displacement element exists: ignored)
            method: Str = "small",
            /// Poisson ratio in Hooke's law, per element (element i uses entry i when present, else entry 0)
            poissonRatio: Reals = "0.45",
            /// Young modulus in Hooke's law, per element like poissonRatio
            youngModulus: Reals = "1000",
            /// Thickness of the elements
            thickness: Real = "1",
            /// Rayleigh damping coefficient related to stiffness (used by the assembled matrix only, as in SOFA)
            rayleighStiffness: Real = "0",
        },
        links = {
            /// topology whose quads are the elements (default: the context topology)
            topology: Topology,
        },
    }
    /// Bending Quad finite elements
    #[derive(Clone, Default)]
    pub struct QuadBendingFEMForceField {
        state: Option<StateId>,
        quads: Vec<[usize; 4]>,
        material: Vec<QuadMaterial>,
        /// Rest positions of the four nodes relative to the rest centroid `(X₀ + X₂)/2`.
        rest: Vec<[V3; 4]>,
        /// Half-sizes `(l, h)` from the positions of the last `add_force`.
        sizes: Vec<(f64, f64)>,
        rayleigh_stiffness: f64,
    }
}

impl QuadBendingFEMForceField {
    pub fn quads(&self) -> &[[usize; 4]] {
        &self.quads
    }
    /// The element stiffness of quad `i` with the half-sizes of the last `add_force`.
    pub fn stiffness(&self, i: usize) -> [[f64; 20]; 20] {
        let (l, h) = self.sizes[i];
        element_stiffness(&self.material[i], l, h)
    }
}

impl Component for QuadBendingFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject")?;
        let mesh = cx.require_mesh()?;
        if mesh.quads.is_empty() {
            cx.warn("no quads found in the topology: no forces");
        }
        let n = cx.state_size(s);
        check_elements(cx, "quad", &mesh.quads, n)?;
        let d = cx.data();
        let (young, poisson) = (d.get(Self::YOUNG_MODULUS).to_vec(), d.get(Self::POISSON_RATIO).to_vec());
        if young.is_empty() || poisson.is_empty() {
            return Err(cx.error("youngModulus and poissonRatio need at least one value").hint("give one value for all quads or one per quad"));
        }
        let thickness = d.get(Self::THICKNESS);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        let x0 = cx.rest_or_position(s);
        let x = cx.read_vec(s, VecId::POSITION).to_vec();
        let x = if x.len() >= 3 * n { x } else { x0.clone() };
        self.quads = mesh.quads.clone();
        self.material.clear();
        self.rest.clear();
        self.sizes.clear();
        for (i, q) in self.quads.iter().enumerate() {
            let e = young.get(i).copied().unwrap_or(young[0]);
            let nu = poisson.get(i).copied().unwrap_or(poisson[0]);
            self.material.push(QuadMaterial::new(e, nu, thickness));
            self.rest.push(centred(&x0, q));
            self.sizes.push(half_sizes(&x, q));
        }
        self.state = Some(s);
        Ok(())
    }
}

force_field_on_one_state!(QuadBendingFEMForceField);

impl QuadBendingFEMForceField {
    fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        check_indices(&self.quads, "quad", x.len() / 3)?;
        for (i, q) in self.quads.iter().enumerate() {
            let current = centred(x, q);
            let mut d = [0.0; 20];
            for (k, cur) in current.iter().enumerate() {
                for comp in 0..3 {
                    d[5 * k + comp] = self.rest[i][k][comp] - cur[comp];
                }
            }
            self.sizes[i] = half_sizes(x, q);
            let (l, h) = self.sizes[i];
            let fl = translational_product(&element_stiffness(&self.material[i], l, h), &d);
            for (k, &v) in q.iter().enumerate() {
                for comp in 0..3 {
                    f[3 * v + comp] += fl[k][comp];
                }
            }
        }
        Ok(())
    }

    fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, b_factor: f64) -> SimResult {
        check_indices(&self.quads, "quad", dx.len() / 3)?;
        // SOFA uses the plain kFactor here (no Rayleigh stiffness term).
        let k_plain = if self.rayleigh_stiffness == 0.0 { k_factor } else { k_factor - b_factor * self.rayleigh_stiffness };
        for (i, q) in self.quads.iter().enumerate() {
            let mut d = [0.0; 20];
            for (k, &v) in q.iter().enumerate() {
                d[5 * k..5 * k + 3].copy_from_slice(&dx[3 * v..3 * v + 3]);
            }
            let fl = translational_product(&self.stiffness(i), &d);
            for (k, &v) in q.iter().enumerate() {
                for comp in 0..3 {
                    df[3 * v + comp] += -fl[k][comp] * k_plain;
                }
            }
        }
        Ok(())
    }

    /// SOFA's stride-3 extraction of the 5-DOF element matrix, blocks in node order.
    fn k_matrix(&self, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let st = self.state.ok_or_else(|| SimError::new("QuadBendingFEMForceField used before init"))?;
        for (i, q) in self.quads.iter().enumerate() {
            let k = self.stiffness(i);
            for n1 in 0..4 {
                for n2 in 0..4 {
                    let mut b = [[0.0; 3]; 3];
                    for (r, row) in b.iter_mut().enumerate() {
                        for (c, v) in row.iter_mut().enumerate() {
                            *v = -k[3 * n1 + r][3 * n2 + c] * k_factor;
                        }
                    }
                    m.add_block3(st, q[n1], st, q[n2], &b);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
