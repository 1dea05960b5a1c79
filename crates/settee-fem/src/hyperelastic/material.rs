//! Hyperelastic materials of SOFA's `TetrahedronHyperelasticityFEMForceField`: the second
//! Piola–Kirchhoff stress `S(C)` and the action of the elasticity tensor on a symmetric
//! direction, `dS[H]`, written as SOFA's material classes evaluate them (expression by
//! expression, with SOFA's symmetric-matrix storage and operator order) so that results match
//! to round-off level.
//!
//! Materials: St Venant–Kirchhoff, compressible Neo-Hookean, Mooney–Rivlin, Arruda–Boyce and
//! Ogden (one term) — the ones of SOFA's regression scenes.

// Index loops mirror the reference formulas.
#![allow(clippy::needless_range_loop)]

use std::ops::{Add, Div, Mul, Sub};

use crate::decompose::{mat_mul, self_adjoint_eigen, transpose};
use crate::hexa::{Mat3, Vec3};

/// A symmetric 3×3 matrix in SOFA's `MatSym` storage order `[xx, xy, yy, xz, yz, zz]`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sym(pub [f64; 6]);

impl Sym {
    pub const ZERO: Sym = Sym([0.0; 6]);
    pub const IDENTITY: Sym = Sym([1.0, 0.0, 1.0, 0.0, 0.0, 1.0]);

    /// Storage index of entry `(i, j)`.
    #[inline]
    pub const fn index(i: usize, j: usize) -> usize {
        if i >= j {
            i * (i + 1) / 2 + j
        } else {
            j * (j + 1) / 2 + i
        }
    }

    /// The `(i, j)` pairs of the storage order (`MatSym::fromVoigt`).
    pub const PAIRS: [(usize, usize); 6] = [(0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2)];

    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.0[Self::index(i, j)]
    }

    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.0[Self::index(i, j)] = v;
    }

    /// `m(0,0) + m(1,1) + m(2,2)`.
    #[inline]
    pub fn trace(&self) -> f64 {
        self.0[0] + self.0[2] + self.0[5]
    }

    /// Determinant with SOFA's term order.
    pub fn determinant(&self) -> f64 {
        let m = |i, j| self.get(i, j);
        m(0, 0) * m(1, 1) * m(2, 2) + m(1, 0) * m(2, 1) * m(0, 2) + m(2, 0) * m(0, 1) * m(1, 2)
            - m(0, 0) * m(2, 1) * m(1, 2)
            - m(1, 0) * m(0, 1) * m(2, 2)
            - m(2, 0) * m(1, 1) * m(0, 2)
    }

    /// SOFA's `invertMatrix(MatSym<3>)`: zero when `|det| <= 1e-100` (the destination of a
    /// failed inversion keeps its zero initial value in the materials).
    pub fn inverse(&self) -> Sym {
        let det = self.determinant();
        if (-1.0e-100..=1.0e-100).contains(&det) {
            return Sym::ZERO;
        }
        let m = |i, j| self.get(i, j);
        let mut r = Sym::ZERO;
        r.set(0, 0, (m(1, 1) * m(2, 2) - m(2, 1) * m(1, 2)) / det);
        r.set(1, 0, (m(1, 2) * m(2, 0) - m(2, 2) * m(1, 0)) / det);
        r.set(2, 0, (m(1, 0) * m(2, 1) - m(2, 0) * m(1, 1)) / det);
        r.set(1, 1, (m(2, 2) * m(0, 0) - m(0, 2) * m(2, 0)) / det);
        r.set(2, 1, (m(2, 0) * m(0, 1) - m(0, 0) * m(2, 1)) / det);
        r.set(2, 2, (m(0, 0) * m(1, 1) - m(1, 0) * m(0, 1)) / det);
        r
    }

    /// `m · v`.
    #[inline]
    pub fn mul_vec(&self, v: Vec3) -> Vec3 {
        let mut r = [0.0; 3];
        for i in 0..3 {
            r[i] = self.get(i, 0) * v[0] + self.get(i, 1) * v[1] + self.get(i, 2) * v[2];
        }
        r
    }

    /// `self · o` (a full matrix).
    pub fn sym_sym(&self, o: &Sym) -> Mat3 {
        let mut r = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                r[i][j] = self.get(i, 0) * o.get(0, j) + self.get(i, 1) * o.get(1, j) + self.get(i, 2) * o.get(2, j);
            }
        }
        r
    }

    /// `self · m`.
    pub fn sym_mat(&self, m: &Mat3) -> Mat3 {
        let mut r = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                r[i][j] = self.get(i, 0) * m[0][j] + self.get(i, 1) * m[1][j] + self.get(i, 2) * m[2][j];
            }
        }
        r
    }

    /// SOFA's `Mat2Sym`: `(M(i,j) + M(j,i)) / 2`.
    pub fn from_mat(m: &Mat3) -> Sym {
        let mut w = Sym::ZERO;
        for j in 0..3 {
            for i in 0..=j {
                w.set(i, j, (m[i][j] + m[j][i]) / 2.0);
            }
        }
        w
    }

    /// `C⁻¹ H C⁻¹` symmetrised, as the materials compute it: `Mat2Sym(C⁻¹·(H·C⁻¹))`.
    pub fn sandwich(inv: &Sym, h: &Sym) -> Sym {
        Sym::from_mat(&inv.sym_mat(&h.sym_sym(inv)))
    }

    /// The contraction `A : B` as the materials write it: `a0b0 + a2b2 + a5b5 + 2a1b1 + 2a3b3 + 2a4b4`.
    pub fn contract(a: &Sym, b: &Sym) -> f64 {
        let (a, b) = (&a.0, &b.0);
        a[0] * b[0] + a[2] * b[2] + a[5] * b[5] + 2.0 * a[1] * b[1] + 2.0 * a[3] * b[3] + 2.0 * a[4] * b[4]
    }
}

impl Add for Sym {
    type Output = Sym;
    #[inline]
    fn add(self, o: Sym) -> Sym {
        Sym(std::array::from_fn(|i| self.0[i] + o.0[i]))
    }
}

impl Sub for Sym {
    type Output = Sym;
    #[inline]
    fn sub(self, o: Sym) -> Sym {
        Sym(std::array::from_fn(|i| self.0[i] - o.0[i]))
    }
}

impl Mul<f64> for Sym {
    type Output = Sym;
    #[inline]
    fn mul(self, f: f64) -> Sym {
        Sym(self.0.map(|v| v * f))
    }
}

impl Div<f64> for Sym {
    type Output = Sym;
    #[inline]
    fn div(self, f: f64) -> Sym {
        Sym(self.0.map(|v| v / f))
    }
}

/// The strain measures a material reads (SOFA's `StrainInformation`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Strain {
    /// Right Cauchy–Green tensor `C = FᵀF`.
    pub c: Sym,
    /// `J = det F`.
    pub j: f64,
    /// `tr C`.
    pub tr_c: f64,
}

/// Quantities of a strain state that several evaluations share (computed once per element;
/// SOFA recomputes them in every call, with the same result).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prepared {
    pub strain: Strain,
    /// `C⁻¹` (zero if `C` is singular).
    pub inv_c: Sym,
    /// Ogden only: spectral data of `C`.
    pub ogden: Option<OgdenState>,
}

impl Prepared {
    /// What the stress and elasticity formulas read: `C⁻¹`, `C`, `I₁ = tr C` and `J`.
    fn terms(&self) -> (Sym, Sym, f64, f64) {
        (self.inv_c, self.strain.c, self.strain.tr_c, self.strain.j)
    }
}

/// Ogden's precomputed variables (SOFA's `Ogden::precomputeVariables`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OgdenState {
    /// `J^(-α/3)`.
    pub fj: f64,
    pub log_j: f64,
    /// `tr C^(α/2)`.
    pub tr_ca: f64,
    /// `C^(α/2 - 1)`.
    pub ca: Sym,
    pub eigenvalues: [f64; 3],
    /// Eigenvectors in the columns.
    pub eigenvectors: Mat3,
}

/// Names accepted by `materialName`, in SOFA's option order.
pub const MATERIAL_NAMES: &[&str] =
    &["ArrudaBoyce", "StVenantKirchhoff", "NeoHookean", "MooneyRivlin", "VerondaWestman", "Costa", "Ogden", "StableNeoHookean"];

/// A material with its parameters (`ParameterSet`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Material {
    /// `S = (λ·tr E - μ) I + μ C`; parameters `μ λ`.
    StVenantKirchhoff { mu: f64, lambda: f64 },
    /// `S = μ I + (λ ln J - μ) C⁻¹`; parameters `μ λ`.
    NeoHookean { mu: f64, lambda: f64 },
    /// Parameters `c1 c2 k0`.
    MooneyRivlin { c1: f64, c2: f64, k0: f64 },
    /// Five-term Arruda–Boyce series (with `I1 = tr C`); parameters `μ k0`.
    ArrudaBoyce { mu: f64, k0: f64 },
    /// One-term Ogden; parameters `μ1 α1 k0`.
    Ogden { mu1: f64, alpha1: f64, k0: f64 },
    /// Smith, de Goes and Kim's stable Neo-Hookean (no log barrier: inverted elements keep a
    /// finite, restoring stress): `S = μ I + (λ+μ) J (J − α) C⁻¹`, `α = 1 + μ/(λ+μ)`;
    /// parameters `μ λ`.
    StableNeoHookean { mu: f64, lambda: f64 },
}

/// Why a material cannot be built.
#[derive(Clone, Debug, PartialEq)]
pub enum MaterialError {
    Unsupported(String),
    MissingParameters { material: &'static str, needed: usize, given: usize, names: &'static str },
}

impl std::fmt::Display for MaterialError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaterialError::Unsupported(n) => write!(f, "material '{n}' is not implemented"),
            MaterialError::MissingParameters { material, needed, given, names } => {
                write!(f, "material {material} needs {needed} parameters ({names}) in ParameterSet, {given} given")
            }
        }
    }
}

impl Material {
    /// Builds a material from its SOFA name and `ParameterSet`.
    pub fn from_sofa(name: &str, p: &[f64]) -> Result<Material, MaterialError> {
        let need = |material: &'static str, needed: usize, names: &'static str| -> Result<(), MaterialError> {
            if p.len() < needed {
                Err(MaterialError::MissingParameters { material, needed, given: p.len(), names })
            } else {
                Ok(())
            }
        };
        Ok(match name {
            "StVenantKirchhoff" => {
                need("StVenantKirchhoff", 2, "mu lambda")?;
                Material::StVenantKirchhoff { mu: p[0], lambda: p[1] }
            }
            "NeoHookean" => {
                need("NeoHookean", 2, "mu lambda")?;
                Material::NeoHookean { mu: p[0], lambda: p[1] }
            }
            "MooneyRivlin" => {
                need("MooneyRivlin", 3, "c1 c2 k0")?;
                Material::MooneyRivlin { c1: p[0], c2: p[1], k0: p[2] }
            }
            "ArrudaBoyce" => {
                need("ArrudaBoyce", 2, "mu k0")?;
                Material::ArrudaBoyce { mu: p[0], k0: p[1] }
            }
            "Ogden" => {
                need("Ogden", 3, "mu1 alpha1 k0")?;
                Material::Ogden { mu1: p[0], alpha1: p[1], k0: p[2] }
            }
            "StableNeoHookean" => {
                need("StableNeoHookean", 2, "mu lambda")?;
                Material::StableNeoHookean { mu: p[0], lambda: p[1] }
            }
            other => return Err(MaterialError::Unsupported(other.to_string())),
        })
    }

    /// Precomputes `C⁻¹` (and Ogden's spectral data) for a strain state.
    pub fn prepare(&self, strain: &Strain) -> Prepared {
        let inv_c = strain.c.inverse();
        let ogden = match *self {
            Material::Ogden { alpha1, .. } => Some(ogden_state(strain, alpha1)),
            _ => None,
        };
        Prepared { strain: *strain, inv_c, ogden }
    }

    /// The second Piola–Kirchhoff stress (SOFA's `deriveSPKTensor`).
    pub fn spk(&self, p: &Prepared) -> Sym {
        let id = Sym::IDENTITY;
        let (inv, c, i1, j) = p.terms();
        match *self {
            Material::StVenantKirchhoff { mu, lambda } => {
                let tr_e = 0.5 * (i1 - 3.0);
                id * (lambda * tr_e - mu) + c * mu
            }
            Material::NeoHookean { mu, lambda } => id * mu + inv * (lambda * j.ln() - mu),
            Material::MooneyRivlin { c1, c2, k0 } => {
                let i2 = mooney_i2(&c, i1);
                (inv * -1.0 * i1 / 3.0 + id) * (2.0 * c1 * j.powf(-2.0 / 3.0))
                    + (inv * -1.0 * 2.0 * i2 / 3.0 + id * i1 - c) * (2.0 * c2 * j.powf(-4.0 / 3.0))
                    + inv * k0 * j.ln()
            }
            Material::ArrudaBoyce { mu, k0 } => {
                ((inv * (-1.0 / 3.0) * i1 + id) * (1.0 / 2.0) * j.powf(-2.0 / 3.0)
                    + (inv * (-2.0 / 3.0) * i1 * i1 + id * 2.0 * i1) * (1.0 / 160.0) * j.powf(-4.0 / 3.0)
                    + (id * 3.0 * i1 * i1 - inv * i1 * i1 * i1) * AB_C3 * j.powf(-2.0)
                    + (inv * (-4.0 / 3.0) * i1.powf(4.0) + id * 4.0 * i1.powf(3.0)) * AB_C4 * j.powf(-8.0 / 3.0)
                    + (inv * (-5.0 / 3.0) * i1.powf(5.0) + id * 5.0 * i1.powf(4.0)) * AB_C5 * j.powf(-10.0 / 3.0))
                    * 2.0
                    * mu
                    + inv * k0 * j.ln()
            }
            Material::Ogden { mu1, alpha1, k0 } => {
                let o = p.ogden.expect("prepared for Ogden");
                let s_iso = o.ca * o.fj * mu1 / alpha1 - inv * o.fj * mu1 / (3.0 * alpha1) * o.tr_ca;
                let s_vol = inv * k0 * o.log_j;
                s_iso + s_vol
            }
            Material::StableNeoHookean { mu, lambda } => {
                let alpha = 1.0 + mu / (lambda + mu);
                id * mu + inv * ((lambda + mu) * j * (j - alpha))
            }
        }
    }

    /// `dS[H]`, the elasticity tensor applied to the symmetric direction `h` (SOFA's
    /// `applyElasticityTensor`).
    pub fn apply_elasticity(&self, p: &Prepared, h: &Sym) -> Sym {
        let id = Sym::IDENTITY;
        let (inv, c, i1, j) = p.terms();
        match *self {
            Material::StVenantKirchhoff { mu, lambda } => {
                let tr_h = h.trace();
                id * (tr_h * lambda / 2.0) + *h * mu
            }
            Material::NeoHookean { mu, lambda } => {
                let tr_hc = Sym::contract(h, &inv);
                let first = Sym::sandwich(&inv, h);
                first * (mu - lambda * j.ln()) + inv * (lambda * tr_hc / 2.0)
            }
            Material::MooneyRivlin { c1, c2, k0 } => {
                let i2 = mooney_i2(&c, i1);
                let tr_hc_inv = Sym::contract(h, &inv);
                let first = Sym::sandwich(&inv, h);
                let tr_hc = Sym::contract(h, &c);
                let tr_h = h.0[0] + h.0[2] + h.0[5];
                ((id - inv * i1 / 3.0) * (-tr_hc_inv) / 3.0 + first * i1 / 3.0 - inv * tr_h / 3.0) * 2.0 * c1 * j.powf(-2.0 / 3.0)
                    + ((inv * (-2.0) * i2 / 3.0 + id * i1 - c) * (-2.0) * tr_hc_inv / 3.0 + first * 2.0 * i2 / 3.0
                        - inv * 2.0 * (i1 * tr_h - tr_hc) / 3.0
                        + id * tr_h
                        - *h)
                        * 2.0
                        * c2
                        * j.powf(-4.0 / 3.0)
                    + inv * tr_hc_inv * k0 / 2.0
                    - first * k0 * j.ln()
            }
            Material::ArrudaBoyce { mu, k0 } => {
                let tr_hc = Sym::contract(h, &inv);
                let first = Sym::sandwich(&inv, h);
                let tr_h = h.0[0] + h.0[2] + h.0[5];
                (((inv * (-1.0 / 3.0) * i1 + id) * (-1.0 / 3.0) * tr_hc - inv * (1.0 / 3.0) * tr_h + first * (1.0 / 3.0) * i1)
                    * (1.0 / 2.0)
                    * j.powf(-2.0 / 3.0)
                    + ((inv * (-2.0 / 3.0) * i1 * i1 + id * 2.0 * i1) * (-2.0 / 3.0) * tr_hc - inv * (4.0 / 3.0) * i1 * tr_h
                        + first * (2.0 / 3.0) * i1 * i1
                        + id * 2.0 * tr_h)
                        * (1.0 / 160.0)
                        * j.powf(-4.0 / 3.0)
                    + ((inv * (-i1) * i1 * i1 + id * 3.0 * i1 * i1) * (-tr_hc) - inv * 3.0 * i1 * i1 * tr_h
                        + first * i1 * i1 * i1
                        + id * 6.0 * i1 * tr_h)
                        * AB_C3
                        * j.powf(-2.0)
                    + ((inv * (-4.0 / 3.0) * i1.powf(4.0) + id * 4.0 * i1.powf(3.0)) * (-4.0 / 3.0) * tr_hc
                        - inv * (16.0 / 3.0) * i1.powf(3.0) * tr_h
                        + first * (4.0 / 3.0) * i1.powf(4.0)
                        + id * 12.0 * i1 * i1 * tr_h)
                        * AB_C4
                        * j.powf(-8.0 / 3.0)
                    + ((inv * (-5.0 / 3.0) * i1.powf(5.0) + id * 5.0 * i1.powf(4.0)) * (-5.0 / 3.0) * tr_hc
                        - inv * (25.0 / 3.0) * i1.powf(4.0) * tr_h
                        + first * (5.0 / 3.0) * i1.powf(5.0)
                        + id * 20.0 * i1.powf(3.0) * tr_h)
                        * AB_C5
                        * j.powf(-10.0 / 3.0))
                    * 2.0
                    * mu
                    + inv * (k0 / 2.0) * tr_hc
                    - first * (k0 * j.ln())
            }
            Material::Ogden { mu1, alpha1, k0 } => {
                let t = ogden_tensor(p.ogden.as_ref().expect("prepared for Ogden"), &inv, mu1, alpha1, k0);
                let mut out = Sym::ZERO;
                for i in 0..6 {
                    let mut v = t[i][0] * h.0[0];
                    for k in 1..6 {
                        v += t[i][k] * h.0[k];
                    }
                    out.0[i] = v / 2.0;
                }
                out
            }
            Material::StableNeoHookean { mu, lambda } => {
                let alpha = 1.0 + mu / (lambda + mu);
                let tr_hc = Sym::contract(h, &inv);
                let first = Sym::sandwich(&inv, h);
                (first * (-2.0 * j * (j - alpha)) + inv * (j * (2.0 * j - alpha) * tr_hc)) * (0.5 * (lambda + mu))
            }
        }
    }
}

/// Arruda–Boyce series coefficients as SOFA writes them.
const AB_C3: f64 = 11.0 / (1050.0 * 8.0 * 8.0);
const AB_C4: f64 = 19.0 / (7000.0 * 8.0 * 8.0 * 8.0);
const AB_C5: f64 = 519.0 / (673750.0 * 8.0 * 8.0 * 8.0 * 8.0);

/// Mooney–Rivlin's second invariant `(I1² - tr C²)/2` as SOFA evaluates it.
fn mooney_i2(c: &Sym, i1: f64) -> f64 {
    let c = &c.0;
    let i1square = c[0] * c[0] + c[2] * c[2] + c[5] * c[5] + 2.0 * (c[1] * c[1] + c[3] * c[3] + c[4] * c[4]);
    (i1.powf(2.0) - i1square) / 2.0
}

/// Ogden's spectral quantities of `C` (eigen-decomposition as Eigen 3.4 computes it).
fn ogden_state(s: &Strain, alpha1: f64) -> OgdenState {
    let fj = s.j.powf(-alpha1 / 3.0);
    let log_j = s.j.ln();
    let mut full = [[0.0; 3]; 3];
    for i in 0..3 {
        for k in 0..3 {
            full[i][k] = s.c.get(i, k);
        }
    }
    let eig = self_adjoint_eigen(&full);
    let a_by2 = alpha1 / 2.0;
    let mut tr_ca = 0.0;
    for v in eig.values {
        tr_ca += v.powf(a_by2);
    }
    let a_by2_minus1 = a_by2 - 1.0;
    let d = Sym([eig.values[0].powf(a_by2_minus1), 0.0, eig.values[1].powf(a_by2_minus1), 0.0, 0.0, eig.values[2].powf(a_by2_minus1)]);
    let basis = eig.vectors;
    let ca = mat_mul(&basis, &d.sym_mat(&transpose(&basis)));
    OgdenState { fj, log_j, tr_ca, ca: Sym::from_mat(&ca), eigenvalues: eig.values, eigenvectors: basis }
}

/// Ogden's 6×6 elasticity tensor as coded in SOFA (`Ogden::ElasticityTensor`), including the
/// final factor 2 and the doubling of the off-diagonal columns.
fn ogden_tensor(o: &OgdenState, inv: &Sym, mu1: f64, alpha1: f64, k0: f64) -> [[f64; 6]; 6] {
    let a_by2 = alpha1 / 2.0;
    let a_by2_minus1 = a_by2 - 1.0;
    let a_by2_minus2 = a_by2 - 2.0;
    let ev = &o.eigenvalues;
    let v = &o.eigenvectors;
    let (fj, tr_ca, log_j) = (o.fj, o.tr_ca, o.log_j);
    let ca = &o.ca;
    let mut t = [[0.0; 6]; 6];
    for m in 0..6 {
        let (i, j) = Sym::PAIRS[m];
        for n in 0..6 {
            let (k, l) = Sym::PAIRS[n];
            for ei in 0..3 {
                let eval_pow_i2 = ev[ei].powf(a_by2_minus2);
                t[m][n] += fj * mu1 / alpha1 * a_by2_minus1 * eval_pow_i2 * v[i][ei] * v[j][ei] * v[k][ei] * v[l][ei];
                let eval_pow_i = ev[ei].powf(a_by2_minus1);
                for ej in 0..3 {
                    if ej == ei {
                        continue;
                    }
                    const TOL: f64 = 1e-8;
                    let max_eval = ev[ei].abs().max(ev[ej].abs());
                    let degenerate = (ev[ei] - ev[ej]).abs() < max_eval * TOL;
                    let coef_rot = if degenerate { a_by2_minus1 * eval_pow_i2 } else { (eval_pow_i - ev[ej].powf(a_by2_minus1)) / (ev[ei] - ev[ej]) };
                    t[m][n] +=
                        0.5 * fj * mu1 / alpha1 * coef_rot * (v[i][ei] * v[j][ej] * v[k][ej] * v[l][ei] + v[i][ei] * v[j][ej] * v[k][ei] * v[l][ej]);
                }
            }
            t[m][n] += -fj * mu1 / 6.0 * (ca.get(i, j) * inv.get(l, k) + ca.get(k, l) * inv.get(j, i))
                + fj * mu1 * tr_ca / 18.0 * inv.get(j, i) * inv.get(l, k)
                + fj * mu1 / (6.0 * alpha1) * tr_ca * (inv.get(k, i) * inv.get(l, j) + inv.get(l, i) * inv.get(k, j));
            t[m][n] += 0.5 * k0 * inv.get(j, i) * inv.get(l, k) - 0.5 * k0 * log_j * (inv.get(j, k) * inv.get(l, i) + inv.get(j, l) * inv.get(k, i));
        }
    }
    let mut out = [[0.0; 6]; 6];
    for m in 0..6 {
        for n in 0..6 {
            out[m][n] = t[m][n] * 2.0;
        }
        out[m][1] *= 2.0;
        out[m][3] *= 2.0;
        out[m][4] *= 2.0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn strain_of(f: &Mat3) -> Strain {
        let mut c = Sym::ZERO;
        for k in 0..3 {
            for l in k..3 {
                c.set(k, l, f[0][k] * f[0][l] + f[1][k] * f[1][l] + f[2][k] * f[2][l]);
            }
        }
        Strain { c, j: crate::decompose::determinant(f), tr_c: c.trace() }
    }

    fn all(p: &[f64; 3]) -> Vec<Material> {
        vec![
            Material::StVenantKirchhoff { mu: p[0], lambda: p[1] },
            Material::NeoHookean { mu: p[0], lambda: p[1] },
            Material::MooneyRivlin { c1: p[0], c2: p[1] * 0.5, k0: p[2] },
            Material::ArrudaBoyce { mu: p[0], k0: p[1] },
            Material::Ogden { mu1: p[0], alpha1: 2.5, k0: p[2] },
            Material::StableNeoHookean { mu: p[0], lambda: p[1] },
        ]
    }

    #[test]
    fn stress_free_at_rest_for_volumetric_consistent_materials() {
        let s = strain_of(&[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
        for m in all(&[3448.2759, 31034.483, 5000.0]) {
            let st = m.spk(&m.prepare(&s));
            let tol = match m {
                // Arruda–Boyce with I1 = tr C is not stress free at rest (SOFA's formulation).
                Material::ArrudaBoyce { .. } => continue,
                _ => 1e-9,
            };
            assert!(st.0.iter().all(|v| v.abs() < tol), "{m:?}: {st:?}");
        }
    }

    #[test]
    fn sym_inverse_and_products() {
        let a = Sym([2.0, 0.3, 1.5, -0.1, 0.2, 1.1]);
        let inv = a.inverse();
        let p = a.sym_sym(&inv);
        for i in 0..3 {
            for j in 0..3 {
                assert!((p[i][j] - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14);
            }
        }
        assert_eq!(Sym([0.0; 6]).inverse(), Sym::ZERO);
        assert_eq!(Sym::index(2, 1), 4);
        assert_eq!(Sym::index(0, 2), 3);
    }

    #[test]
    fn unknown_material_and_missing_parameters() {
        assert!(matches!(Material::from_sofa("Costa", &[1.0, 2.0]), Err(MaterialError::Unsupported(_))));
        assert!(matches!(Material::from_sofa("MooneyRivlin", &[1.0, 2.0]), Err(MaterialError::MissingParameters { needed: 3, .. })));
        assert_eq!(Material::from_sofa("NeoHookean", &[1.0, 2.0]), Ok(Material::NeoHookean { mu: 1.0, lambda: 2.0 }));
        assert_eq!(Material::from_sofa("StableNeoHookean", &[1.0, 2.0]), Ok(Material::StableNeoHookean { mu: 1.0, lambda: 2.0 }));
    }

    /// The stable Neo-Hookean stress of an inverted element (J < 0) is finite and pushes it back:
    /// under a reflection of one axis, the stress along that axis is μ + (λ+μ)·J(J−α) with
    /// J = −1, i.e. μ + (λ+μ)(1+α) > 0 (the Neo-Hookean one needs ln J and is undefined).
    #[test]
    fn stable_neo_hookean_handles_inverted_elements() {
        let (mu, lambda) = (1000.0, 3000.0);
        let m = Material::StableNeoHookean { mu, lambda };
        let s = strain_of(&[[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
        assert_eq!(s.j, -1.0);
        let st = m.spk(&m.prepare(&s));
        let alpha = 1.0 + mu / (lambda + mu);
        let j = -1.0;
        let expected = mu + (lambda + mu) * j * (j - alpha);
        for (i, v) in st.0.iter().enumerate() {
            let e = if matches!(i, 0 | 2 | 5) { expected } else { 0.0 };
            assert!((v - e).abs() < 1e-9, "entry {i}: {v} vs {e}");
        }
    }

    proptest! {
        /// dS[H] is the directional derivative of S(C) along dC = H, checked by central
        /// differences of the stress for every material.
        #[test]
        fn elasticity_is_the_derivative_of_the_stress(
            g in prop::array::uniform3(prop::array::uniform3(-0.2f64..0.2)),
            hd in prop::array::uniform6(-1.0f64..1.0),
        ) {
            let mut f = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
            for i in 0..3 { for j in 0..3 { f[i][j] += g[i][j]; } }
            let s0 = strain_of(&f);
            prop_assume!(s0.j > 0.3);
            let h = Sym(hd);
            for m in all(&[1000.0, 3000.0, 2000.0]) {
                let eps = 1e-6;
                // C ± eps·H; J from det C = J²
                let shift = |sign: f64| {
                    let c = s0.c + h * (eps * sign);
                    let mut full = [[0.0; 3]; 3];
                    for i in 0..3 { for k in 0..3 { full[i][k] = c.get(i, k); } }
                    let j = crate::decompose::determinant(&full).sqrt();
                    Strain { c, j, tr_c: c.trace() }
                };
                let sp = m.spk(&m.prepare(&shift(1.0)));
                let sm = m.spk(&m.prepare(&shift(-1.0)));
                let ds = m.apply_elasticity(&m.prepare(&s0), &h);
                let scale = ds.0.iter().fold(1.0f64, |a, v| a.max(v.abs()));
                for i in 0..6 {
                    let fd = (sp.0[i] - sm.0[i]) / (2.0 * eps);
                    prop_assert!((fd - ds.0[i]).abs() < 1e-5 * scale, "{:?} entry {}: {} vs {}", m, i, fd, ds.0[i]);
                }
            }
        }
    }
}
