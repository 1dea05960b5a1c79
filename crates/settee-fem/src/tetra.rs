//! Element kernel of SOFA's linear tetrahedra (`TetrahedronFEMForceField`,
//! `TetrahedralCorotationalFEMForceField`): small displacements, corotational `large`
//! (frame of the first three nodes), `polar` and `svd` (polar decomposition of the edge matrix),
//! optional plasticity, and the per-element stiffness used by the assembled paths.
//!
//! The functions are pure and work on one element. They reproduce SOFA's formulas and its
//! floating-point evaluation order (sums left to right, SOFA's grouping of products, the
//! structural zeros of the strain–displacement matrix skipped exactly where SOFA skips them) so
//! that trajectories match SOFA's to round-off level.
//!
//! # Conventions
//!
//! * Element nodes `a, b, c, d` are the 4 indices of the tetrahedron in topology order; 12-vectors
//!   are ordered `3·node + component`.
//! * A rotation [`Mat3`] is row-major and maps **world → element frame** (rows = element axes in
//!   world coordinates). SOFA stores its transpose (`rotations[i]`).
//! * `J` ([`StrainDisplacement`], 12×6) is SOFA's "unnormalised" strain–displacement matrix:
//!   row `3k+i`, Voigt column order `(xx, yy, zz, xy, yz, zx)` with engineering shears;
//!   `J = 6·V_signed·B`. The material matrix ([`MaterialStiffness`]) is divided by `36·|V0|`, so
//!   that `J·K·Jᵀ` is the usual element stiffness.
//! * Forces returned by the kernels are to be **added** to the node forces (`-K·u` for the
//!   elastic force, `-k·K·dx` for the differential).

// Index loops mirror the reference formulas.
#![allow(clippy::needless_range_loop)]

use crate::decompose::{determinant, invert, mat_mul, mat_mul_t, polar_decomposition_stable};
use crate::hexa::{mat_t_vec, mat_vec, polar_decomposition, Mat3, Vec3};

/// SOFA's `StrainDisplacement` (12×6).
pub type StrainDisplacement = [[f64; 6]; 12];
/// SOFA's `MaterialStiffness` (6×6, already divided by `36·|V0|`).
pub type MaterialStiffness = [[f64; 6]; 6];
/// A 12-vector of element displacements or forces.
pub type Displacement = [f64; 12];
/// A Voigt 6-vector (strain or stress, unnormalised).
pub type Voigt = [f64; 6];
/// A 12×12 element matrix.
pub type ElementMatrix = [[f64; 12]; 12];

const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// SOFA's default Young's modulus (also the replacement for a negative one).
pub const DEFAULT_YOUNG: f64 = 5000.0;
/// SOFA's default Poisson's ratio (also the replacement for one outside `[0, 0.5)`).
pub const DEFAULT_POISSON: f64 = 0.45;

/// The corotational method of an element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TetraMethod {
    /// Linear elasticity, no rotation.
    Small,
    /// Frame built from the first edge and the plane of the first three nodes (default).
    #[default]
    Large,
    /// Polar decomposition of the edge matrix.
    Polar,
    /// Polar decomposition, with an SVD-based rotation for inverted or flat elements.
    Svd,
}

impl TetraMethod {
    /// Parses SOFA's method name (`small`, `large`, `polar`, `svd`); `None` for anything else
    /// (SOFA then uses `large` after an error message).
    pub fn from_sofa_name(name: &str) -> Option<Self> {
        match name {
            "small" => Some(TetraMethod::Small),
            "large" => Some(TetraMethod::Large),
            "polar" => Some(TetraMethod::Polar),
            "svd" => Some(TetraMethod::Svd),
            _ => None,
        }
    }

    pub fn sofa_name(self) -> &'static str {
        match self {
            TetraMethod::Small => "small",
            TetraMethod::Large => "large",
            TetraMethod::Polar => "polar",
            TetraMethod::Svd => "svd",
        }
    }
}

/// How `updateStiffnessMatrix` rebuilds `J` for the `large` method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LargeStiffnessUpdate {
    /// `TetrahedronFEMForceField`: only one entry of each group of equal entries of `J` is
    /// rewritten (the others keep their rest values), as SOFA does.
    #[default]
    FirstEntryOnly,
    /// `TetrahedralCorotationalFEMForceField`: every aliased entry is rewritten.
    AllEntries,
}

/// Plasticity parameters ("Interactive Virtual Materials", Müller & Gross 2004). Disabled when
/// `max_threshold <= 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plasticity {
    pub max_threshold: f64,
    pub yield_threshold: f64,
    pub creep: f64,
}

impl Plasticity {
    pub const DISABLED: Plasticity = Plasticity { max_threshold: 0.0, yield_threshold: 1e-4, creep: 0.9 };

    pub fn enabled(&self) -> bool {
        self.max_threshold > 0.0
    }
}

/// Options shared by every element of a force field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TetraOptions {
    pub method: TetraMethod,
    /// `computeGlobalMatrix` (alias `assembling`).
    pub assembling: bool,
    /// `updateStiffnessMatrix`.
    pub update_stiffness: bool,
    pub large_update: LargeStiffnessUpdate,
    pub plasticity: Plasticity,
}

impl Default for TetraOptions {
    fn default() -> Self {
        TetraOptions {
            method: TetraMethod::Large,
            assembling: false,
            update_stiffness: false,
            large_update: LargeStiffnessUpdate::FirstEntryOnly,
            plasticity: Plasticity::DISABLED,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Small vector helpers with SOFA's evaluation order: `settee_core::math`.

use settee_core::math::{cross, dot, normalized, sub};

/// Absolute volume `|((b-a)×(c-a))·(d-a)| / 6` (SOFA's `geometry::Tetrahedron::volume`).
pub fn tetra_volume(a: Vec3, b: Vec3, c: Vec3, d: Vec3) -> f64 {
    (dot(cross(sub(b, a), sub(c, a)), sub(d, a)) / 6.0).abs()
}

/// SOFA's `peudo_determinant_for_coef` of the 2×3 matrix `m`.
#[inline]
fn pseudo_det(m: [[f64; 3]; 2]) -> f64 {
    m[0][1] * m[1][2] - m[1][1] * m[0][2] - m[0][0] * m[1][2] + m[1][0] * m[0][2] + m[0][0] * m[1][1] - m[1][0] * m[0][1]
}

/// The strain–displacement matrix `J` of the element with node positions `a, b, c, d`
/// (SOFA's `computeStrainDisplacement`): row block `k` holds `n_k = 6·V_s·∇N_k` in the
/// pattern `[n.x 0 0 n.y 0 n.z; 0 n.y 0 n.x n.z 0; 0 0 n.z 0 n.y n.x]`; every other entry is 0.
pub fn strain_displacement(a: Vec3, b: Vec3, c: Vec3, d: Vec3) -> StrainDisplacement {
    let mut j = [[0.0; 6]; 12];
    // one node block: `p, q, r` are the three other nodes in SOFA's cyclic order, `sign` the
    // sign of the first coefficient.
    let mut block = |row: usize, p: Vec3, q: Vec3, r: Vec3, sign: f64| {
        let mut m = [[p[1], q[1], r[1]], [p[2], q[2], r[2]]];
        let v0 = sign * pseudo_det(m);
        m[0] = [p[0], q[0], r[0]];
        let v3 = -sign * pseudo_det(m);
        m[1] = [p[1], q[1], r[1]];
        let v5 = sign * pseudo_det(m);
        j[row][0] = v0;
        j[row + 1][3] = v0;
        j[row + 2][5] = v0;
        j[row][3] = v3;
        j[row + 1][1] = v3;
        j[row + 2][4] = v3;
        j[row][5] = v5;
        j[row + 1][4] = v5;
        j[row + 2][2] = v5;
    };
    block(0, b, c, d, -1.0);
    block(3, c, d, a, 1.0);
    block(6, d, a, b, -1.0);
    block(9, a, b, c, 1.0);
    j
}

/// The material matrix of an element: the isotropic Voigt matrix of `(young, poisson)` (with
/// `young` already multiplied by the local stiffness factor) divided by `36·volume`, evaluated as
/// SOFA's `computeMaterialStiffness` (normalised matrix, times `E(1-ν)/((1+ν)(1-2ν))`, divided
/// by `volume·36`).
pub fn material_stiffness(young: f64, poisson: f64, volume: f64) -> MaterialStiffness {
    let mut k = [[0.0; 6]; 6];
    let off = poisson / (1.0 - poisson);
    let shear = (1.0 - 2.0 * poisson) / (2.0 * (1.0 - poisson));
    for i in 0..3 {
        for l in 0..3 {
            k[i][l] = if i == l { 1.0 } else { off };
        }
        k[3 + i][3 + i] = shear;
    }
    let scale = (young * (1.0 - poisson)) / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
    let div = volume * 36.0;
    for row in k.iter_mut() {
        for v in row.iter_mut() {
            *v *= scale;
            *v /= div;
        }
    }
    k
}

/// `Jᵀ·D` with SOFA's term order (structural zeros skipped).
#[inline(always)]
fn strain(j: &StrainDisplacement, d: &Displacement) -> Voigt {
    [
        j[0][0] * d[0] + j[3][0] * d[3] + j[6][0] * d[6] + j[9][0] * d[9],
        j[1][1] * d[1] + j[4][1] * d[4] + j[7][1] * d[7] + j[10][1] * d[10],
        j[2][2] * d[2] + j[5][2] * d[5] + j[8][2] * d[8] + j[11][2] * d[11],
        j[0][3] * d[0] + j[1][3] * d[1] + j[3][3] * d[3] + j[4][3] * d[4] + j[6][3] * d[6] + j[7][3] * d[7] + j[9][3] * d[9] + j[10][3] * d[10],
        j[1][4] * d[1] + j[2][4] * d[2] + j[4][4] * d[4] + j[5][4] * d[5] + j[7][4] * d[7] + j[8][4] * d[8] + j[10][4] * d[10] + j[11][4] * d[11],
        j[0][5] * d[0] + j[2][5] * d[2] + j[3][5] * d[3] + j[5][5] * d[5] + j[6][5] * d[6] + j[8][5] * d[8] + j[9][5] * d[9] + j[11][5] * d[11],
    ]
}

/// `K·e` with SOFA's term order (only the normal block and the shear diagonal).
#[inline]
fn stress(k: &MaterialStiffness, e: &Voigt) -> Voigt {
    [
        k[0][0] * e[0] + k[0][1] * e[1] + k[0][2] * e[2],
        k[1][0] * e[0] + k[1][1] * e[1] + k[1][2] * e[2],
        k[2][0] * e[0] + k[2][1] * e[1] + k[2][2] * e[2],
        k[3][3] * e[3],
        k[4][4] * e[4],
        k[5][5] * e[5],
    ]
}

/// `J·s` with SOFA's term order.
#[inline(always)]
fn nodal(j: &StrainDisplacement, s: &Voigt) -> Displacement {
    let mut f = [0.0; 12];
    for k in 0..4 {
        let r = 3 * k;
        f[r] = j[r][0] * s[0] + j[r][3] * s[3] + j[r][5] * s[5];
        f[r + 1] = j[r + 1][1] * s[1] + j[r + 1][3] * s[3] + j[r + 1][4] * s[4];
        f[r + 2] = j[r + 2][2] * s[2] + j[r + 2][4] * s[4] + j[r + 2][5] * s[5];
    }
    f
}

#[inline]
fn norm2(v: &Voigt) -> f64 {
    let mut r = v[0] * v[0];
    for x in &v[1..] {
        r += x * x;
    }
    r
}

/// Removes the plastic part of the (unnormalised) strain `e`, updating the element's plastic
/// strain `p`: `el = e - p`; if `|el|² > yield²` then `p += creep·el`; `p` is clamped to the norm
/// `max`; `e -= p`. Thresholds compare against the unnormalised `Jᵀ·D`, as SOFA does.
pub fn apply_plasticity(e: &mut Voigt, p: &mut Voigt, params: &Plasticity) {
    let mut el = *e;
    for i in 0..6 {
        el[i] -= p[i];
    }
    if norm2(&el) > params.yield_threshold * params.yield_threshold {
        for i in 0..6 {
            p[i] += el[i] * params.creep;
        }
    }
    let pn2 = norm2(p);
    if pn2 > params.max_threshold * params.max_threshold {
        let s = params.max_threshold / pn2.sqrt();
        for v in p.iter_mut() {
            *v *= s;
        }
    }
    for i in 0..6 {
        e[i] -= p[i];
    }
}

/// SOFA's `computeForce(F, D, plasticStrain, K, J)`: `F = J·K·(Jᵀ·D - plastic)`.
#[inline(always)]
pub fn element_force_from_displacement(
    j: &StrainDisplacement,
    k: &MaterialStiffness,
    d: &Displacement,
    plastic: &mut Voigt,
    params: &Plasticity,
) -> Displacement {
    let mut e = strain(j, d);
    if params.enabled() {
        apply_plasticity(&mut e, plastic, params);
    }
    nodal(j, &stress(k, &e))
}

/// SOFA's `computeForce(F, D, K, J, fact)`: `F = J·((K·Jᵀ·D)·fact)` (no plasticity).
#[inline(always)]
pub fn element_force_scaled(j: &StrainDisplacement, k: &MaterialStiffness, d: &Displacement, fact: f64) -> Displacement {
    let e = strain(j, d);
    let mut s = stress(k, &e);
    for v in s.iter_mut() {
        *v *= fact;
    }
    nodal(j, &s)
}

/// `J·K·Jᵀ` with SOFA's generic matrix products (`(J·K)·Jᵀ`, each entry accumulated from 0 over
/// the inner index).
pub fn jkjt(j: &StrainDisplacement, k: &MaterialStiffness) -> ElementMatrix {
    let mut jk = [[0.0; 6]; 12];
    for i in 0..12 {
        for l in 0..6 {
            let a = j[i][l];
            for c in 0..6 {
                jk[i][c] += a * k[l][c];
            }
        }
    }
    // Jᵀ row-major, so that the inner loop below runs over contiguous memory (same sums).
    let mut jt = [[0.0; 12]; 6];
    for c in 0..12 {
        for l in 0..6 {
            jt[l][c] = j[c][l];
        }
    }
    let mut r = [[0.0; 12]; 12];
    for i in 0..12 {
        for l in 0..6 {
            let a = jk[i][l];
            for c in 0..12 {
                r[i][c] += a * jt[l][c];
            }
        }
    }
    r
}

/// `M·D` (SOFA's matrix–vector product: first term, then the others added in column order).
fn mat12_vec(m: &ElementMatrix, d: &Displacement) -> Displacement {
    let mut r = [0.0; 12];
    for i in 0..12 {
        let mut s = m[i][0] * d[0];
        for c in 1..12 {
            s += m[i][c] * d[c];
        }
        r[i] = s;
    }
    r
}

/// `blockdiag(Rᵀ)·M` where `r` maps world → element (SOFA's `RR·JKJt` with `RR = rotations`).
fn rotate_rows(r: &Mat3, m: &ElementMatrix) -> ElementMatrix {
    let mut s = [[0.0; 12]; 12];
    for i in 0..12 {
        let (b, ii) = (3 * (i / 3), i % 3);
        for c in 0..12 {
            // RR(i, b+l) = rotations(ii, l) = r[l][ii]
            s[i][c] = r[0][ii] * m[b][c] + r[1][ii] * m[b + 1][c] + r[2][ii] * m[b + 2][c];
        }
    }
    s
}

/// `M·blockdiag(R)` (SOFA's `S·RRt`).
fn rotate_cols(m: &ElementMatrix, r: &Mat3) -> ElementMatrix {
    let mut s = [[0.0; 12]; 12];
    for i in 0..12 {
        for c in 0..12 {
            let (b, cc) = (3 * (c / 3), c % 3);
            // RRt(b+l, c) = rotations(cc, l) = r[l][cc]
            s[i][c] = m[i][b] * r[0][cc] + m[i][b + 1] * r[1][cc] + m[i][b + 2] * r[2][cc];
        }
    }
    s
}

/// `large` frame of nodes `a, b, c` (SOFA's `computeRotationLarge`): `ex = normalize(b-a)`,
/// `ez = normalize(ex × (c-a))`, `ey = ez × ex`; rows `(ex, ey, ez)`.
pub fn rotation_large(a: Vec3, b: Vec3, c: Vec3) -> Mat3 {
    let ex = normalized(sub(b, a));
    let ey0 = sub(c, a);
    let ez = normalized(cross(ex, ey0));
    let ey = cross(ez, ex);
    [ex, ey, ez]
}

/// The edge matrix whose rows are `b-a, c-a, d-a`.
#[inline]
fn edge_matrix(x: &[Vec3; 4]) -> Mat3 {
    [sub(x[1], x[0]), sub(x[2], x[0]), sub(x[3], x[0])]
}

/// Failure to build the rest data of an element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TetraError {
    /// The rest edge matrix is not invertible (`svd` needs its inverse).
    SingularRestShape { det: f64 },
}

impl std::fmt::Display for TetraError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TetraError::SingularRestShape { det } => write!(f, "the rest edge matrix is singular (det = {det:e})"),
        }
    }
}

impl std::error::Error for TetraError {}

/// Rest data of one element, computed at (re)initialisation.
#[derive(Clone, Debug, PartialEq)]
pub struct TetraElementRest {
    method: TetraMethod,
    material: MaterialStiffness,
    /// `J`; rewritten by `updateStiffnessMatrix` and (assembled `large`) partly zeroed.
    strain_displacement: StrainDisplacement,
    /// `R0` (world → element); identity for `small`.
    initial_rotation: Mat3,
    /// `small`: the rest positions; `large`: `R0·X0_k - R0·X0_a` (`r_a = 0`); `polar`/`svd`:
    /// `R0·X0_k` (rotated, not translated).
    rotated_rest: [Vec3; 4],
    /// `svd`: inverse of the rest edge matrix.
    initial_edges_inverse: Mat3,
}

impl TetraElementRest {
    /// Rest data from the rest positions `x0` of the 4 nodes (topology order), with
    /// `young` (already multiplied by `localStiffnessFactor`) and `poisson`.
    pub fn new(method: TetraMethod, young: f64, poisson: f64, x0: &[Vec3; 4]) -> Result<Self, TetraError> {
        let volume = tetra_volume(x0[0], x0[1], x0[2], x0[3]);
        let material = material_stiffness(young, poisson, volume);
        let mut initial_edges_inverse = IDENTITY;
        let (initial_rotation, rotated_rest) = match method {
            TetraMethod::Small => (IDENTITY, *x0),
            TetraMethod::Large => {
                let r0 = rotation_large(x0[0], x0[1], x0[2]);
                let mut r = x0.map(|p| mat_vec(&r0, p));
                for k in 1..4 {
                    r[k] = sub(r[k], r[0]);
                }
                r[0] = [0.0; 3];
                (r0, r)
            }
            TetraMethod::Polar | TetraMethod::Svd => {
                let a = edge_matrix(x0);
                if method == TetraMethod::Svd {
                    initial_edges_inverse = invert(&a).ok_or(TetraError::SingularRestShape { det: determinant(&a) })?;
                }
                let r0 = polar_decomposition(&a);
                (r0, x0.map(|p| mat_vec(&r0, p)))
            }
        };
        let r = &rotated_rest;
        let strain_displacement = strain_displacement(r[0], r[1], r[2], r[3]);
        Ok(TetraElementRest { method, material, strain_displacement, initial_rotation, rotated_rest, initial_edges_inverse })
    }

    pub fn method(&self) -> TetraMethod {
        self.method
    }

    /// The material matrix (divided by `36·|V0|`).
    pub fn material(&self) -> &MaterialStiffness {
        &self.material
    }

    /// Replaces the material matrix (SOFA's `updateStiffness` at each time step).
    pub fn set_material(&mut self, k: MaterialStiffness) {
        self.material = k;
    }

    pub fn strain_displacement(&self) -> &StrainDisplacement {
        &self.strain_displacement
    }

    /// `R0` (world → element frame); identity for `small`.
    pub fn initial_rotation(&self) -> &Mat3 {
        &self.initial_rotation
    }

    pub fn rotated_rest(&self) -> &[Vec3; 4] {
        &self.rotated_rest
    }

    /// The unrotated element stiffness `J·K·Jᵀ` (12×12, SOFA's generic products).
    pub fn stiffness(&self) -> ElementMatrix {
        jkjt(&self.strain_displacement, &self.material)
    }
}

/// Rewrites `J` from the deformed element in the rotated frame (`large`,
/// `updateStiffnessMatrix`): `d` holds the rotated positions after SOFA's partial subtraction
/// of node `a`.
fn update_large_strain_displacement(j: &mut StrainDisplacement, d: &[Vec3; 4], mode: LargeStiffnessUpdate) {
    let v00 = -d[2][1] * d[3][2];
    let v11 = d[2][0] * d[3][2] - d[1][0] * d[3][2];
    let v22 = d[2][1] * d[3][0] - d[2][0] * d[3][1] + d[1][0] * d[3][1] - d[1][0] * d[2][1];
    let v30 = d[2][1] * d[3][2];
    let v41 = -d[2][0] * d[3][2];
    let v52 = -d[2][1] * d[3][0] + d[2][0] * d[3][1];
    let v71 = d[1][0] * d[3][2];
    let v82 = -d[1][0] * d[3][1];
    let v11_2 = d[1][0] * d[2][1];
    j[0][0] = v00;
    j[1][1] = v11;
    j[2][2] = v22;
    j[3][0] = v30;
    j[4][1] = v41;
    j[5][2] = v52;
    j[7][1] = v71;
    j[8][2] = v82;
    j[11][2] = v11_2;
    if mode == LargeStiffnessUpdate::AllEntries {
        j[1][3] = v00;
        j[2][5] = v00;
        j[0][3] = v11;
        j[2][4] = v11;
        j[0][5] = v22;
        j[1][4] = v22;
        j[4][3] = v30;
        j[5][5] = v30;
        j[3][3] = v41;
        j[5][4] = v41;
        j[3][5] = v52;
        j[4][4] = v52;
        j[6][3] = v71;
        j[8][4] = v71;
        j[6][5] = v82;
        j[7][4] = v82;
        j[9][5] = v11_2;
        j[10][4] = v11_2;
    }
}

/// Splits a 12-vector into 4 node vectors.
#[inline]
fn split(f: &Displacement) -> [Vec3; 4] {
    [[f[0], f[1], f[2]], [f[3], f[4], f[5]], [f[6], f[7], f[8]], [f[9], f[10], f[11]]]
}

/// Internal force of one element at node positions `x` (topology order), to be added to the
/// node forces; `None` when SOFA adds no force for this element (assembled `polar`/`svd`, or
/// assembled with plasticity, which SOFA reports as errors).
///
/// `rotation` receives the current rotation (SOFA caches it for `addDForce` and the matrix);
/// it is left unchanged for `small` and for the assembled `svd` path. `plastic` is the
/// element's plastic strain, updated when plasticity is enabled. `J` is rewritten when
/// `updateStiffnessMatrix` is set.
pub fn element_force(rest: &mut TetraElementRest, opts: &TetraOptions, x: &[Vec3; 4], plastic: &mut Voigt, rotation: &mut Mat3) -> Option<[Vec3; 4]> {
    match rest.method {
        TetraMethod::Small => {
            let x0 = &rest.rotated_rest;
            let mut d = [0.0; 12];
            for k in 1..4 {
                for c in 0..3 {
                    d[3 * k + c] = x0[k][c] - x0[0][c] - x[k][c] + x[0][c];
                }
            }
            let f = if !opts.assembling {
                element_force_from_displacement(&rest.strain_displacement, &rest.material, &d, plastic, &opts.plasticity)
            } else if !opts.plasticity.enabled() {
                mat12_vec(&jkjt(&rest.strain_displacement, &rest.material), &d)
            } else {
                return None;
            };
            Some(split(&f))
        }
        TetraMethod::Large => {
            let r = rotation_large(x[0], x[1], x[2]);
            *rotation = r;
            let mut q = x.map(|p| mat_vec(&r, p));
            q[1][0] -= q[0][0];
            q[2][0] -= q[0][0];
            q[2][1] -= q[0][1];
            for c in 0..3 {
                q[3][c] -= q[0][c];
            }
            let r0 = &rest.rotated_rest;
            let mut d = [0.0; 12];
            d[3] = r0[1][0] - q[1][0];
            d[6] = r0[2][0] - q[2][0];
            d[7] = r0[2][1] - q[2][1];
            d[9] = r0[3][0] - q[3][0];
            d[10] = r0[3][1] - q[3][1];
            d[11] = r0[3][2] - q[3][2];
            if opts.update_stiffness {
                update_large_strain_displacement(&mut rest.strain_displacement, &q, opts.large_update);
            }
            if !opts.assembling {
                let f = element_force_from_displacement(&rest.strain_displacement, &rest.material, &d, plastic, &opts.plasticity);
                Some(split(&f).map(|v| mat_t_vec(&r, v)))
            } else if !opts.plasticity.enabled() {
                let j = &mut rest.strain_displacement;
                j[6][0] = 0.0;
                j[9][0] = 0.0;
                j[10][1] = 0.0;
                let s = rotate_rows(&r, &jkjt(j, &rest.material));
                Some(split(&mat12_vec(&s, &d)))
            } else {
                None
            }
        }
        TetraMethod::Polar | TetraMethod::Svd => {
            if rest.method == TetraMethod::Svd && opts.assembling {
                return None;
            }
            let a = edge_matrix(x);
            let r = if rest.method == TetraMethod::Svd {
                let f = mat_mul(&a, &rest.initial_edges_inverse);
                if determinant(&f) < 1e-6 {
                    mat_mul_t(&polar_decomposition_stable(&f), &crate::decompose::transpose(&rest.initial_rotation))
                } else {
                    polar_decomposition(&a)
                }
            } else {
                polar_decomposition(&a)
            };
            *rotation = r;
            let q = x.map(|p| mat_vec(&r, p));
            let mut d = [0.0; 12];
            for k in 0..4 {
                for c in 0..3 {
                    d[3 * k + c] = rest.rotated_rest[k][c] - q[k][c];
                }
            }
            if opts.update_stiffness {
                rest.strain_displacement = strain_displacement(q[0], q[1], q[2], q[3]);
            }
            if opts.assembling {
                return None;
            }
            let f = element_force_from_displacement(&rest.strain_displacement, &rest.material, &d, plastic, &opts.plasticity);
            Some(split(&f).map(|v| mat_t_vec(&r, v)))
        }
    }
}

/// Force differential of one element for the displacement increment `dx`, to be added to
/// `df`: `-k·Rᵀ·J·K·Jᵀ·(R·dx)` (`-k·J·K·Jᵀ·dx` for `small`), with the rotation of the last
/// [`element_force`] call. Plasticity is ignored, as in SOFA.
#[inline(always)]
pub fn element_dforce(rest: &TetraElementRest, rotation: &Mat3, dx: &[Vec3; 4], k_factor: f64) -> [Vec3; 4] {
    let mut xr = [0.0; 12];
    let small = rest.method == TetraMethod::Small;
    for k in 0..4 {
        let v = if small { dx[k] } else { mat_vec(rotation, dx[k]) };
        xr[3 * k..3 * k + 3].copy_from_slice(&v);
    }
    let f = element_force_scaled(&rest.strain_displacement, &rest.material, &xr, k_factor);
    let mut out = [[0.0; 3]; 4];
    for (k, o) in out.iter_mut().enumerate() {
        let v = [f[3 * k], f[3 * k + 1], f[3 * k + 2]];
        let w = if small { v } else { mat_t_vec(rotation, v) };
        *o = [-w[0], -w[1], -w[2]];
    }
    out
}

/// Elements per [`PackedDforce4`] group.
pub const DFORCE_LANES: usize = 4;

type Lanes = [f64; DFORCE_LANES];

/// What [`element_dforce`] reads of four elements, side by side: for each, the 36 entries of
/// `J` that are not structurally zero, the 12 of the material matrix and the rotation (under a
/// third of an element's full data: `dforce` runs over every element at every iteration of an
/// iterative solver), each number of the four in one vector (lane `l` = element `l` of the
/// group), so that one pass of [`element_dforce4`] computes the four with vector instructions:
/// every lane does [`element_dforce`]'s operations in its order, hence its bits.
#[derive(Clone, Copy, Debug)]
pub struct PackedDforce4 {
    j: [Lanes; 36],
    k: [Lanes; 12],
    rotation: [[Lanes; 3]; 3],
}

impl Default for PackedDforce4 {
    /// Four empty lanes (zero data: their results are zero and are not used).
    fn default() -> Self {
        Self { j: [[0.0; DFORCE_LANES]; 36], k: [[0.0; DFORCE_LANES]; 12], rotation: [[[0.0; DFORCE_LANES]; 3]; 3] }
    }
}

impl PackedDforce4 {
    /// Writes element `(rest, rotation)` into lane `l`: for node `n`, `j[9n..9n + 9]` =
    /// `J[3n][0], J[3n][3], J[3n][5], J[3n+1][1], J[3n+1][3], J[3n+1][4], J[3n+2][2], J[3n+2][4],
    /// J[3n+2][5]`; `k` = `K[0][0..3], K[1][0..3], K[2][0..3], K[3][3], K[4][4], K[5][5]`.
    pub fn set_lane(&mut self, l: usize, rest: &TetraElementRest, rotation: &Mat3) {
        let (jm, km) = (&rest.strain_displacement, &rest.material);
        for n in 0..4 {
            let r = 3 * n;
            let entries = [jm[r][0], jm[r][3], jm[r][5], jm[r + 1][1], jm[r + 1][3], jm[r + 1][4], jm[r + 2][2], jm[r + 2][4], jm[r + 2][5]];
            for (dst, src) in self.j[9 * n..9 * n + 9].iter_mut().zip(entries) {
                dst[l] = src;
            }
        }
        let k = [km[0][0], km[0][1], km[0][2], km[1][0], km[1][1], km[1][2], km[2][0], km[2][1], km[2][2], km[3][3], km[4][4], km[5][5]];
        for (dst, src) in self.k.iter_mut().zip(k) {
            dst[l] = src;
        }
        for i in 0..3 {
            for c in 0..3 {
                self.rotation[i][c][l] = rotation[i][c];
            }
        }
    }
}

#[inline(always)]
fn lmul(a: Lanes, b: Lanes) -> Lanes {
    std::array::from_fn(|l| a[l] * b[l])
}

#[inline(always)]
fn ladd(a: Lanes, b: Lanes) -> Lanes {
    std::array::from_fn(|l| a[l] + b[l])
}

/// `Σ a[t]·b[t]`, the first product first then the others added in order, lane by lane.
#[inline(always)]
fn ldot<const N: usize>(a: [Lanes; N], b: [Lanes; N]) -> Lanes {
    let mut s = lmul(a[0], b[0]);
    for t in 1..N {
        s = ladd(s, lmul(a[t], b[t]));
    }
    s
}

/// [`element_dforce`] of the four elements of a group; `dx[n][c]` holds coordinate `c` of
/// node `n` of each element. `small` is the force field's method (the same for all elements).
#[inline(always)]
fn element_dforce4_impl(p: &PackedDforce4, dx: &[[Lanes; 3]; 4], k_factor: f64, small: bool) -> [[Lanes; 3]; 4] {
    let r = &p.rotation;
    let mut d = [[0.0; DFORCE_LANES]; 12];
    for n in 0..4 {
        for i in 0..3 {
            d[3 * n + i] = if small { dx[n][i] } else { ldot(r[i], dx[n]) };
        }
    }
    let j = &p.j;
    let e = [
        ldot([j[0], j[9], j[18], j[27]], [d[0], d[3], d[6], d[9]]),
        ldot([j[3], j[12], j[21], j[30]], [d[1], d[4], d[7], d[10]]),
        ldot([j[6], j[15], j[24], j[33]], [d[2], d[5], d[8], d[11]]),
        ldot([j[1], j[4], j[10], j[13], j[19], j[22], j[28], j[31]], [d[0], d[1], d[3], d[4], d[6], d[7], d[9], d[10]]),
        ldot([j[5], j[7], j[14], j[16], j[23], j[25], j[32], j[34]], [d[1], d[2], d[4], d[5], d[7], d[8], d[10], d[11]]),
        ldot([j[2], j[8], j[11], j[17], j[20], j[26], j[29], j[35]], [d[0], d[2], d[3], d[5], d[6], d[8], d[9], d[11]]),
    ];
    let k = &p.k;
    let kf = [k_factor; DFORCE_LANES];
    let s = [
        lmul(ldot([k[0], k[1], k[2]], [e[0], e[1], e[2]]), kf),
        lmul(ldot([k[3], k[4], k[5]], [e[0], e[1], e[2]]), kf),
        lmul(ldot([k[6], k[7], k[8]], [e[0], e[1], e[2]]), kf),
        lmul(lmul(k[9], e[3]), kf),
        lmul(lmul(k[10], e[4]), kf),
        lmul(lmul(k[11], e[5]), kf),
    ];
    let mut out = [[[0.0; DFORCE_LANES]; 3]; 4];
    for (n, o) in out.iter_mut().enumerate() {
        let q = &j[9 * n..9 * n + 9];
        let f = [
            ldot([q[0], q[1], q[2]], [s[0], s[3], s[5]]),
            ldot([q[3], q[4], q[5]], [s[1], s[3], s[4]]),
            ldot([q[6], q[7], q[8]], [s[2], s[4], s[5]]),
        ];
        for c in 0..3 {
            // Rᵀ·f: column c of R.
            let w = if small { f[c] } else { ldot([r[0][c], r[1][c], r[2][c]], f) };
            o[c] = w.map(|v| -v);
        }
    }
    out
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn element_dforce4_avx2(p: &PackedDforce4, dx: &[[Lanes; 3]; 4], k_factor: f64, small: bool) -> [[Lanes; 3]; 4] {
    element_dforce4_impl(p, dx, k_factor, small)
}

/// [`element_dforce`] of the four elements of a group, with AVX2 where the processor has
/// it (multiplications and additions only, no fused multiply-add: the same bits either way).
#[inline]
pub fn element_dforce4(p: &PackedDforce4, dx: &[[Lanes; 3]; 4], k_factor: f64, small: bool) -> [[Lanes; 3]; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor supports AVX2 (checked just above).
            return unsafe { element_dforce4_avx2(p, dx, k_factor, small) };
        }
    }
    element_dforce4_impl(p, dx, k_factor, small)
}

/// The 4×4 blocks (3×3 each) of this element's contribution to the force Jacobian, scaled by
/// `k_factor`: `(-(Rᵀ·J·K·Jᵀ·R)_ab)·k` (SOFA's `computeStiffnessMatrix` then `addKToMatrix`),
/// with the rotation of the last [`element_force`] call (identity for `small`).
pub fn element_stiffness_blocks(rest: &TetraElementRest, rotation: &Mat3, k_factor: f64) -> [[Mat3; 4]; 4] {
    let m = jkjt(&rest.strain_displacement, &rest.material);
    let sr = if rest.method == TetraMethod::Small { m } else { rotate_cols(&rotate_rows(rotation, &m), rotation) };
    let mut out = [[[[0.0; 3]; 3]; 4]; 4];
    for a in 0..4 {
        for b in 0..4 {
            for i in 0..3 {
                for j in 0..3 {
                    out[a][b][i][j] = -sr[3 * a + i][3 * b + j] * k_factor;
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Hexahedra split on the fly.

/// Corner pairs along x, y and z of SOFA's hexahedron (`geometry::Hexahedron::{x,y,z}Edges`).
const X_EDGES: [(usize, usize); 4] = [(0, 1), (4, 5), (3, 2), (7, 6)];
const Y_EDGES: [(usize, usize); 4] = [(4, 7), (5, 6), (1, 2), (0, 3)];
const Z_EDGES: [(usize, usize); 4] = [(4, 0), (5, 1), (6, 2), (7, 3)];

/// Splits each hexahedron into 6 tetrahedra as `TetrahedronFEMForceField` does when its
/// topology has hexahedra and no tetrahedra: the corners of hexahedron `i` are first mirrored
/// along x when `i % nx` is even, along y when `(i / nx) % ny` is odd, along z when
/// `i / (nx·ny)` is odd, then cut by the fixed pattern
/// `(0,5,1,6) (0,1,3,6) (1,3,6,2) (6,3,0,7) (6,7,0,5) (7,5,4,0)`.
/// `cells` is `(nx, ny)`, the number of cells of a grid topology along x and y (SOFA uses
/// `(2, 1)` for other topologies).
pub fn split_hexahedra(hexahedra: &[[usize; 8]], cells: (usize, usize)) -> Vec<[usize; 4]> {
    let nx = cells.0.max(1);
    let ny = cells.1.max(1);
    let mut out = Vec::with_capacity(hexahedra.len() * 6);
    for (i, h) in hexahedra.iter().enumerate() {
        let mut c = *h;
        if (i % nx) & 1 == 0 {
            for (p, q) in X_EDGES {
                c.swap(p, q);
            }
        }
        if ((i / nx) % ny) & 1 == 1 {
            for (p, q) in Y_EDGES {
                c.swap(p, q);
            }
        }
        if (i / (nx * ny)) & 1 == 1 {
            for (p, q) in Z_EDGES {
                c.swap(p, q);
            }
        }
        out.push([c[0], c[5], c[1], c[6]]);
        out.push([c[0], c[1], c[3], c[6]]);
        out.push([c[1], c[3], c[6], c[2]]);
        out.push([c[6], c[3], c[0], c[7]]);
        out.push([c[6], c[7], c[0], c[5]]);
        out.push([c[7], c[5], c[4], c[0]]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{arb_perturbation, arb_quat, quat_to_mat};
    use proptest::prelude::*;
    use settee_core::math::add;

    fn max_abs(f: &[Vec3; 4]) -> f64 {
        f.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    const ALL: [TetraMethod; 4] = [TetraMethod::Small, TetraMethod::Large, TetraMethod::Polar, TetraMethod::Svd];

    fn unit_tet() -> [Vec3; 4] {
        [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    }

    fn opts(method: TetraMethod) -> TetraOptions {
        TetraOptions { method, ..Default::default() }
    }

    #[test]
    fn strain_displacement_is_six_volume_times_gradients() {
        // Σ n_k = 0 and n_k = 6·V·∇N_k for the unit tetrahedron (V = 1/6): ∇N_b = (1,0,0) …
        let x = unit_tet();
        let j = strain_displacement(x[0], x[1], x[2], x[3]);
        let n: Vec<Vec3> = (0..4).map(|k| [j[3 * k][0], j[3 * k + 1][1], j[3 * k + 2][2]]).collect();
        assert_eq!(n[1], [1.0, 0.0, 0.0]);
        assert_eq!(n[2], [0.0, 1.0, 0.0]);
        assert_eq!(n[3], [0.0, 0.0, 1.0]);
        assert_eq!(n[0], [-1.0, -1.0, -1.0]);
        // shear entries repeat the same coefficients
        for k in 0..4 {
            assert_eq!(j[3 * k][3], n[k][1]);
            assert_eq!(j[3 * k + 1][3], n[k][0]);
            assert_eq!(j[3 * k + 2][5], n[k][0]);
        }
    }

    /// Uniaxial strain ε along x of any tetrahedron: stress σxx = Uε, σyy = σzz = Vε; the nodal
    /// force is `-V0 · σ · ∇N_k`.
    #[test]
    fn uniaxial_strain_gives_hooke_stress_small() {
        let (e, nu, eps) = (1000.0, 0.3, 1e-3);
        let x0 = [[0.1, -0.2, 0.3], [1.2, 0.1, 0.0], [0.2, 0.9, 0.1], [0.3, 0.2, 1.1]];
        let u = e * (1.0 - nu) / ((1.0 + nu) * (1.0 - 2.0 * nu));
        let v = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
        let mut rest = TetraElementRest::new(TetraMethod::Small, e, nu, &x0).unwrap();
        let x = x0.map(|p| [p[0] * (1.0 + eps), p[1], p[2]]);
        let mut r = IDENTITY;
        let f = element_force(&mut rest, &opts(TetraMethod::Small), &x, &mut [0.0; 6], &mut r).unwrap();
        let vol = tetra_volume(x0[0], x0[1], x0[2], x0[3]);
        let vs = dot(cross(sub(x0[1], x0[0]), sub(x0[2], x0[0])), sub(x0[3], x0[0]));
        let j = strain_displacement(x0[0], x0[1], x0[2], x0[3]);
        let sigma = [u * eps, v * eps, v * eps];
        for k in 0..4 {
            let grad = [j[3 * k][0] / vs, j[3 * k + 1][1] / vs, j[3 * k + 2][2] / vs];
            for c in 0..3 {
                let expected = -vol * sigma[c] * grad[c];
                assert!((f[k][c] - expected).abs() < 1e-10, "node {k} comp {c}: {} vs {expected}", f[k][c]);
            }
        }
        // The corotational methods see no rotation for a stretch of the unit tetrahedron along
        // its first edge: same forces up to round-off.
        let x0 = unit_tet();
        let x = x0.map(|p| [p[0] * (1.0 + eps), p[1], p[2]]);
        let mut small = TetraElementRest::new(TetraMethod::Small, e, nu, &x0).unwrap();
        let fs = element_force(&mut small, &opts(TetraMethod::Small), &x, &mut [0.0; 6], &mut r).unwrap();
        for m in [TetraMethod::Large, TetraMethod::Polar, TetraMethod::Svd] {
            let mut rest2 = TetraElementRest::new(m, e, nu, &x0).unwrap();
            let g = element_force(&mut rest2, &opts(m), &x, &mut [0.0; 6], &mut r).unwrap();
            for k in 0..4 {
                for c in 0..3 {
                    assert!((g[k][c] - fs[k][c]).abs() < 1e-9, "{m:?} node {k}: {:?} vs {:?}", g[k], fs[k]);
                }
            }
        }
    }

    #[test]
    fn rest_state_gives_exactly_zero_force() {
        let x0 = [[-3.0, 1.0, 2.0], [-1.8, 1.1, 2.3], [-2.7, 2.2, 1.9], [-2.9, 1.4, 3.2]];
        for m in ALL {
            let mut rest = TetraElementRest::new(m, 4000.0, 0.3, &x0).unwrap();
            let mut r = IDENTITY;
            let f = element_force(&mut rest, &opts(m), &x0, &mut [0.0; 6], &mut r).unwrap();
            assert_eq!(max_abs(&f), 0.0, "{m:?}");
            assert_eq!(&r, rest.initial_rotation(), "{m:?}");
        }
    }

    #[test]
    fn plasticity_limits_the_plastic_strain() {
        let p = Plasticity { max_threshold: 0.01, yield_threshold: 1e-4, creep: 1.0 };
        let mut e = [0.1, 0.0, 0.0, 0.0, 0.0, 0.0];
        let mut pl = [0.0; 6];
        apply_plasticity(&mut e, &mut pl, &p);
        assert!((pl[0] - 0.01).abs() < 1e-15);
        assert!((e[0] - 0.09).abs() < 1e-15);
        // below the yield threshold nothing flows
        let mut e = [1e-5, 0.0, 0.0, 0.0, 0.0, 0.0];
        let mut pl = [0.0; 6];
        apply_plasticity(&mut e, &mut pl, &p);
        assert_eq!(pl, [0.0; 6]);
    }

    #[test]
    fn assembled_paths_match_the_matrix_free_ones() {
        let x0 = unit_tet();
        let x = [[0.01, 0.02, -0.01], [1.05, 0.1, 0.0], [0.0, 1.1, 0.05], [0.1, -0.02, 0.93]];
        for m in [TetraMethod::Small, TetraMethod::Large] {
            let mut a = TetraElementRest::new(m, 1000.0, 0.4, &x0).unwrap();
            let mut b = a.clone();
            let (mut ra, mut rb) = (IDENTITY, IDENTITY);
            let fa = element_force(&mut a, &opts(m), &x, &mut [0.0; 6], &mut ra).unwrap();
            let o = TetraOptions { assembling: true, ..opts(m) };
            let fb = element_force(&mut b, &o, &x, &mut [0.0; 6], &mut rb).unwrap();
            for k in 0..4 {
                for c in 0..3 {
                    assert!((fa[k][c] - fb[k][c]).abs() < 1e-10, "{m:?}");
                }
            }
        }
        // polar/svd assembled: no force, as SOFA
        for m in [TetraMethod::Polar, TetraMethod::Svd] {
            let mut a = TetraElementRest::new(m, 1000.0, 0.4, &x0).unwrap();
            let o = TetraOptions { assembling: true, ..opts(m) };
            assert!(element_force(&mut a, &o, &x, &mut [0.0; 6], &mut IDENTITY.clone()).is_none());
        }
    }

    #[test]
    fn svd_handles_inverted_elements() {
        let x0 = unit_tet();
        let mut rest = TetraElementRest::new(TetraMethod::Svd, 1000.0, 0.3, &x0).unwrap();
        // node d pushed through the opposite face
        let x = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -0.5]];
        let mut r = IDENTITY;
        let f = element_force(&mut rest, &opts(TetraMethod::Svd), &x, &mut [0.0; 6], &mut r).unwrap();
        assert!((determinant(&r) - 1.0).abs() < 1e-12);
        // the force pushes d back up
        assert!(f[3][2] > 0.0, "{f:?}");
    }

    #[test]
    fn hexahedron_split_covers_the_volume() {
        // unit cube, corner order of SOFA's hexahedron
        let p =
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]];
        let hexa = [[0, 1, 2, 3, 4, 5, 6, 7]];
        for cells in [(2, 1), (1, 1), (3, 2)] {
            let tets = split_hexahedra(&hexa, cells);
            assert_eq!(tets.len(), 6);
            let v: f64 = tets.iter().map(|t| tetra_volume(p[t[0]], p[t[1]], p[t[2]], p[t[3]])).sum();
            assert!((v - 1.0).abs() < 1e-14);
        }
        // element 0 of a grid is mirrored along x: its first tetra starts at corner 1
        assert_eq!(split_hexahedra(&hexa, (2, 1))[0], [1, 4, 0, 7]);
        assert_eq!(split_hexahedra(&[hexa[0], hexa[0]], (2, 1))[6], [0, 5, 1, 6]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// A rigid motion gives (numerically) zero force for large, polar and svd.
        #[test]
        fn rigid_motion_gives_zero_force(
            p in arb_perturbation::<4>(),
            q in arb_quat(),
            t in prop::array::uniform3(-20.0f64..20.0),
            origin in prop::array::uniform3(-10.0f64..10.0),
        ) {
            let base = unit_tet();
            let x0: [Vec3; 4] = std::array::from_fn(|k| add(add(base[k], p[k]), origin));
            let g = quat_to_mat(q);
            let x = x0.map(|v| add(mat_vec(&g, v), t));
            for m in [TetraMethod::Large, TetraMethod::Polar, TetraMethod::Svd] {
                let mut rest = TetraElementRest::new(m, 4000.0, 0.3, &x0).unwrap();
                let kscale = rest.stiffness().iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
                let mut r = IDENTITY;
                let f = element_force(&mut rest, &opts(m), &x, &mut [0.0; 6], &mut r).unwrap();
                let tol = kscale * 50.0 * 1e-13;
                prop_assert!(max_abs(&f) < tol, "{:?}: {} >= {}", m, max_abs(&f), tol);
                // R = R0·Gᵀ
                let expected = mat_mul_t(rest.initial_rotation(), &g);
                for i in 0..3 { for j in 0..3 {
                    prop_assert!((r[i][j] - expected[i][j]).abs() < 1e-10);
                }}
            }
        }

        /// Four elements in the lanes of a group give, lane by lane, element_dforce's bits.
        #[test]
        fn grouped_dforce_has_the_same_bits(
            ps in prop::array::uniform4(arb_perturbation::<4>()),
            q in arb_quat(),
            pert in arb_perturbation::<4>(),
            dxs in prop::array::uniform4(prop::array::uniform4(prop::array::uniform3(-1.0f64..1.0))),
            kf in -2.0f64..2.0,
        ) {
            let g = quat_to_mat(q);
            for m in ALL {
                let mut group = PackedDforce4::default();
                let mut dx4 = [[[0.0; DFORCE_LANES]; 3]; 4];
                let mut expected = Vec::new();
                for l in 0..DFORCE_LANES {
                    let x0: [Vec3; 4] = std::array::from_fn(|k| add(unit_tet()[k], ps[l][k]));
                    let x: [Vec3; 4] = std::array::from_fn(|k| add(mat_vec(&g, x0[k]), pert[k]));
                    let mut rest = TetraElementRest::new(m, 1000.0 * (l + 1) as f64, 0.3, &x0).unwrap();
                    let mut r = IDENTITY;
                    let _ = element_force(&mut rest, &opts(m), &x, &mut [0.0; 6], &mut r);
                    group.set_lane(l, &rest, &r);
                    for n in 0..4 { for c in 0..3 { dx4[n][c][l] = dxs[l][n][c]; } }
                    expected.push(element_dforce(&rest, &r, &dxs[l], kf));
                }
                let got = element_dforce4(&group, &dx4, kf, m == TetraMethod::Small);
                for l in 0..DFORCE_LANES {
                    for n in 0..4 { for c in 0..3 {
                        prop_assert_eq!(got[n][c][l].to_bits(), expected[l][n][c].to_bits(), "{:?} lane {}", m, l);
                    }}
                }
            }
        }

        /// element_dforce equals the blocks applied to dx, the blocks are symmetric, and the
        /// small force is -K·u.
        #[test]
        fn dforce_matches_blocks(
            p in arb_perturbation::<4>(),
            q in arb_quat(),
            pert in arb_perturbation::<4>(),
            dx in prop::array::uniform4(prop::array::uniform3(-1.0f64..1.0)),
            kf in -2.0f64..2.0,
        ) {
            let base = unit_tet();
            let x0: [Vec3; 4] = std::array::from_fn(|k| add(base[k], p[k]));
            let g = quat_to_mat(q);
            let x: [Vec3; 4] = std::array::from_fn(|k| add(mat_vec(&g, x0[k]), pert[k]));
            for m in ALL {
                let mut rest = TetraElementRest::new(m, 4000.0, 0.3, &x0).unwrap();
                let mut r = IDENTITY;
                let _ = element_force(&mut rest, &opts(m), &x, &mut [0.0; 6], &mut r);
                let df = element_dforce(&rest, &r, &dx, kf);
                let b = element_stiffness_blocks(&rest, &r, kf);
                let kscale = rest.stiffness().iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
                for a in 0..4 {
                    let mut s = [0.0; 3];
                    for c in 0..4 { s = add(s, mat_vec(&b[a][c], dx[c])); }
                    for i in 0..3 {
                        prop_assert!((s[i] - df[a][i]).abs() < 1e-11 * kscale * 12.0, "{:?}", m);
                    }
                    for c in 0..4 { for i in 0..3 { for j in 0..3 {
                        prop_assert!((b[a][c][i][j] - b[c][a][j][i]).abs() < 1e-11 * kscale);
                    }}}
                }
            }
        }

        /// Finite differences of the large/polar force agree with element_dforce (the
        /// corotational tangent omits the rotation derivative, so the agreement is to first
        /// order in the strain: tested close to a rotated rest state).
        #[test]
        fn dforce_matches_finite_differences_near_rest(
            p in arb_perturbation::<4>(),
            q in arb_quat(),
            dir in prop::array::uniform4(prop::array::uniform3(-1.0f64..1.0)),
        ) {
            let base = unit_tet();
            let x0: [Vec3; 4] = std::array::from_fn(|k| add(base[k], p[k]));
            let g = quat_to_mat(q);
            let x = x0.map(|v| mat_vec(&g, v));
            let h = 1e-6;
            for m in [TetraMethod::Large, TetraMethod::Polar, TetraMethod::Svd] {
                let mut rest = TetraElementRest::new(m, 1000.0, 0.3, &x0).unwrap();
                let mut r = IDENTITY;
                let f0 = element_force(&mut rest, &opts(m), &x, &mut [0.0; 6], &mut r).unwrap();
                let df = element_dforce(&rest, &r, &dir, 1.0);
                let xp: [Vec3; 4] = std::array::from_fn(|k| [x[k][0] + h * dir[k][0], x[k][1] + h * dir[k][1], x[k][2] + h * dir[k][2]]);
                let mut r2 = IDENTITY;
                let f1 = element_force(&mut rest, &opts(m), &xp, &mut [0.0; 6], &mut r2).unwrap();
                let kscale = rest.stiffness().iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
                for k in 0..4 { for c in 0..3 {
                    let fd = (f1[k][c] - f0[k][c]) / h;
                    prop_assert!((fd - df[k][c]).abs() < 1e-4 * kscale, "{:?}: {} vs {}", m, fd, df[k][c]);
                }}
            }
        }
    }
}
