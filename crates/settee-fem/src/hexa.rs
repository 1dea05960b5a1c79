//! Element kernel of SOFA's `HexahedronFEMForceField` (linear elasticity on trilinear
//! hexahedra, corotational variants `large` and `polar`, and the linear `small` variant).
//!
//! The functions are pure and work on one element at a time with fixed-size arrays. They
//! reproduce SOFA's formulas *and* its floating-point evaluation order (left-to-right sums,
//! the same grouping of products) so that trajectories match SOFA's to round-off level.
//!
//! # Conventions
//!
//! * Corner `i` of an element has reference coordinates [`CORNER_SIGNS`]`[i]`
//!   (bottom face `0..4` counter-clockwise seen from +z, then top face `4..8`).
//! * DOF ordering in 24-vectors / 24×24 matrices: `3·node + component`.
//! * A rotation [`Mat3`] is row-major (`r[row][col]`) and maps **world → element frame**;
//!   its rows are the element axes expressed in world coordinates.
//! * Sign convention (SOFA): the force returned by [`element_force`] is the internal force
//!   `-K·u` to be **added** to the node forces; [`element_dforce`] returns
//!   `-k·Rᵀ K R·dx`, also to be added; [`element_stiffness_blocks`] returns the blocks of
//!   `df/dx` scaled by `k`, i.e. `-k·Rᵀ K_ij R`, to be added to the global matrix.
//!
//! # Algorithm summary
//!
//! * Material: `U = E(1-ν)/((1+ν)(1-2ν))`, `V = U·ν/(1-ν)`, `W = U·(1-2ν)/(2(1-ν))`.
//! * Stiffness ([`element_stiffness`]): 2×2×2 Gauss quadrature (points `±1/√3`, weight 1)
//!   of `Bᵢᵀ C Bⱼ det J` for `i ≤ j`, with a constant Jacobian when the element is a
//!   parallelepiped, then the lower triangle copied from the upper one.
//! * `large` rotation: frame from the mean x-edge and mean y-edge of the element.
//!   `polar` rotation: orthogonal factor of the matrix whose rows are the three mean edges.
//! * Rest state: `r_w = R0·X0_w` (rotated, not translated) and `K` built from `r_w`.
//! * Force: `R = R(x)`, `D_w = r_w - R·x_w`, `F = K·D`, `f_w = Rᵀ F_w`.

// Index loops mirror the reference formulas; NaN-aware negated comparisons are deliberate.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]

use std::fmt;

use settee_core::math::{add, cross, norm, normalized, scale, sub};

use crate::decompose::{determinant, invert, transpose};

/// A 3-vector.
pub type Vec3 = [f64; 3];
/// A 3×3 matrix, row-major (`m[row][col]`).
pub type Mat3 = [[f64; 3]; 3];
/// A 24×24 element stiffness matrix, row-major, DOF `3·node + component`.
pub type ElementStiffness = [[f64; 24]; 24];

/// Reference coordinates of the 8 corners of SOFA's hexahedron.
pub const CORNER_SIGNS: [[f64; 3]; 8] = [
    [-1.0, -1.0, -1.0],
    [1.0, -1.0, -1.0],
    [1.0, 1.0, -1.0],
    [-1.0, 1.0, -1.0],
    [-1.0, -1.0, 1.0],
    [1.0, -1.0, 1.0],
    [1.0, 1.0, 1.0],
    [-1.0, 1.0, 1.0],
];

const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Isotropic linear-elastic material of one element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HexaMaterial {
    /// Young's modulus `E`.
    pub young: f64,
    /// Poisson's ratio `ν`.
    pub poisson: f64,
}

/// The three distinct entries of the 6×6 Voigt material matrix (engineering shears):
/// `C = [[U,V,V,0,0,0],[V,U,V,0,0,0],[V,V,U,0,0,0],[0,0,0,W,0,0],...]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaterialCoefficients {
    pub u: f64,
    pub v: f64,
    pub w: f64,
}

impl HexaMaterial {
    /// SOFA's default Young's modulus (also the replacement for a negative one).
    pub const DEFAULT_YOUNG: f64 = 5000.0;
    /// SOFA's default Poisson's ratio (also the replacement for one outside `[0, 0.5)`).
    pub const DEFAULT_POISSON: f64 = 0.45;

    pub fn new(young: f64, poisson: f64) -> Self {
        HexaMaterial { young, poisson }
    }

    /// Applies the validation SOFA performs at init: a Poisson's ratio outside `[0, 0.5)`
    /// becomes 0.45 and a negative Young's modulus becomes 5000.
    pub fn validated(self) -> Self {
        let poisson = if self.poisson < 0.0 || self.poisson >= 0.5 { Self::DEFAULT_POISSON } else { self.poisson };
        let young = if self.young < 0.0 { Self::DEFAULT_YOUNG } else { self.young };
        HexaMaterial { young, poisson }
    }

    /// `U, V, W` evaluated like SOFA: the normalised matrix (diagonal 1, off-diagonal
    /// `ν/(1-ν)`, shear `(1-2ν)/(2(1-ν))`) multiplied by `E(1-ν)/((1+ν)(1-2ν))`.
    pub fn coefficients(&self) -> MaterialCoefficients {
        let p = self.poisson;
        let e = self.young;
        let scale = (e * (1.0 - p)) / ((1.0 + p) * (1.0 - 2.0 * p));
        MaterialCoefficients { u: 1.0 * scale, v: (p / (1.0 - p)) * scale, w: ((1.0 - 2.0 * p) / (2.0 * (1.0 - p))) * scale }
    }
}

/// Rotation method (`method` Data).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HexaMethod {
    /// Frame built from the mean x- and y-edges (default).
    #[default]
    Large,
    /// Polar decomposition of the mean-edge matrix.
    Polar,
    /// No rotation (linear elasticity).
    Small,
}

impl HexaMethod {
    /// Parses SOFA's `method` string: `"large"`, `"polar"`, `"small"`; anything else keeps
    /// the default `large`.
    pub fn from_sofa_name(name: &str) -> Self {
        match name {
            "polar" => HexaMethod::Polar,
            "small" => HexaMethod::Small,
            _ => HexaMethod::Large,
        }
    }

    /// SOFA's name for the method.
    pub fn sofa_name(self) -> &'static str {
        match self {
            HexaMethod::Large => "large",
            HexaMethod::Polar => "polar",
            HexaMethod::Small => "small",
        }
    }
}

/// Failure to build an element stiffness.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HexaError {
    /// The isoparametric Jacobian is singular (`|det J| <= f64::EPSILON`, SOFA's inversion
    /// threshold) or not finite. `gauss_point` is `None` for the constant Jacobian of a
    /// parallelepiped, else the index (0..8) of the quadrature point.
    SingularJacobian { gauss_point: Option<usize>, det: f64 },
}

impl fmt::Display for HexaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HexaError::SingularJacobian { gauss_point: None, det } => {
                write!(f, "hexahedron Jacobian is singular (parallelepiped, det = {det:e})")
            }
            HexaError::SingularJacobian { gauss_point: Some(g), det } => {
                write!(f, "hexahedron Jacobian is singular at Gauss point {g} (det = {det:e})")
            }
        }
    }
}

impl std::error::Error for HexaError {}

// ---------------------------------------------------------------------------------------
// Small vector / matrix helpers with SOFA's evaluation order.

/// `m · v` with each row summed left to right.
#[inline]
pub fn mat_vec(m: &Mat3, v: Vec3) -> Vec3 {
    [
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    ]
}

/// `mᵀ · v` with each column summed top to bottom.
#[inline]
pub fn mat_t_vec(m: &Mat3, v: Vec3) -> Vec3 {
    [
        m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2],
        m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2],
        m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2],
    ]
}

/// Largest absolute column sum.
#[inline]
fn one_norm(m: &Mat3) -> f64 {
    let mut best = 0.0;
    for c in 0..3 {
        let s = m[0][c].abs() + m[1][c].abs() + m[2][c].abs();
        if s > best {
            best = s;
        }
    }
    best
}

/// Largest absolute row sum.
#[inline]
fn inf_norm(m: &Mat3) -> f64 {
    let mut best = 0.0;
    for r in 0..3 {
        let s = m[r][0].abs() + m[r][1].abs() + m[r][2].abs();
        if s > best {
            best = s;
        }
    }
    best
}

/// Orthogonal factor `Q` of the polar decomposition `M = Q·S` (`S` symmetric), computed
/// with the scaled Newton iteration SOFA uses (`helper::Decompose::polarDecomposition`):
/// iterate on `Mk = Mᵀ`, averaging `Mk` with its inverse transpose (the cofactor matrix
/// divided by the determinant) with the optimal scaling `γ` built from one- and
/// infinity-norms, until the one-norm of the update is `<= 1e-8` times the one-norm of the
/// new iterate. If a zero determinant is met the iteration stops with the current iterate
/// (for a singular `M` the result is then not orthogonal — same as SOFA).
pub fn polar_decomposition(m: &Mat3) -> Mat3 {
    const TOLERANCE: f64 = 1e-8;
    // Safety net only: Newton converges quadratically, SOFA has no cap.
    const MAX_ITERATIONS: usize = 100;
    let mut mk = transpose(m);
    let mut mk_one = one_norm(&mk);
    let mut mk_inf = inf_norm(&mk);
    for _ in 0..MAX_ITERATIONS {
        // Rows of the cofactor matrix: row1×row2, row2×row0, row0×row1.
        let adj = [cross(mk[1], mk[2]), cross(mk[2], mk[0]), cross(mk[0], mk[1])];
        let det = mk[0][0] * adj[0][0] + mk[0][1] * adj[0][1] + mk[0][2] * adj[0][2];
        if det == 0.0 {
            break;
        }
        let adj_one = one_norm(&adj);
        let adj_inf = inf_norm(&adj);
        let gamma = (((adj_one * adj_inf) / (mk_one * mk_inf)).sqrt() / det.abs()).sqrt();
        let g1 = gamma * 0.5;
        let g2 = 0.5 / (gamma * det);
        let mut delta = mk;
        for i in 0..3 {
            for j in 0..3 {
                mk[i][j] = mk[i][j] * g1 + adj[i][j] * g2;
            }
        }
        for i in 0..3 {
            for j in 0..3 {
                delta[i][j] -= mk[i][j];
            }
        }
        let delta_one = one_norm(&delta);
        mk_one = one_norm(&mk);
        mk_inf = inf_norm(&mk);
        if !(delta_one > mk_one * TOLERANCE) {
            break;
        }
    }
    transpose(&mk)
}

// ---------------------------------------------------------------------------------------
// Geometry of one element.

/// Mean of the four x-directed edges, evaluated as
/// `(((((((n1-n0)+n2)-n3)+n5)-n4)+n6)-n7)·0.25`.
#[inline]
fn mean_edge_x(n: &[Vec3; 8]) -> Vec3 {
    let s = sub(add(sub(add(sub(add(sub(n[1], n[0]), n[2]), n[3]), n[5]), n[4]), n[6]), n[7]);
    scale(s, 0.25)
}

/// Mean of the four y-directed edges: `(n3-n0 + n2-n1 + n7-n4 + n6-n5)·0.25`, left to right.
#[inline]
fn mean_edge_y(n: &[Vec3; 8]) -> Vec3 {
    let s = sub(add(sub(add(sub(add(sub(n[3], n[0]), n[2]), n[1]), n[7]), n[4]), n[6]), n[5]);
    scale(s, 0.25)
}

/// Mean of the four z-directed edges: `(n4-n0 + n5-n1 + n7-n3 + n6-n2)·0.25`, left to right.
#[inline]
fn mean_edge_z(n: &[Vec3; 8]) -> Vec3 {
    let s = sub(add(sub(add(sub(add(sub(n[4], n[0]), n[5]), n[1]), n[7]), n[3]), n[6]), n[2]);
    scale(s, 0.25)
}

/// `large` rotation: `ex = normalize(mean x-edge)`, `ez = normalize(ex × mean y-edge)`,
/// `ey = ez × ex`; the result has rows `(ex, ey, ez)`.
pub fn rotation_large(nodes: &[Vec3; 8]) -> Mat3 {
    let ex = normalized(mean_edge_x(nodes));
    let ey0 = mean_edge_y(nodes);
    let ez = normalized(cross(ex, ey0));
    let ey = cross(ez, ex);
    [ex, ey, ez]
}

/// `polar` rotation: orthogonal factor of the matrix whose rows are the mean x-, y- and
/// z-edges (see [`polar_decomposition`]).
pub fn rotation_polar(nodes: &[Vec3; 8]) -> Mat3 {
    let a = [mean_edge_x(nodes), mean_edge_y(nodes), mean_edge_z(nodes)];
    polar_decomposition(&a)
}

/// The element rotation (world → element frame) of `method` for corner positions `nodes`;
/// identity for `small`.
pub fn element_rotation(method: HexaMethod, nodes: &[Vec3; 8]) -> Mat3 {
    match method {
        HexaMethod::Large => rotation_large(nodes),
        HexaMethod::Polar => rotation_polar(nodes),
        HexaMethod::Small => IDENTITY,
    }
}

/// SOFA's parallelepiped test: with `lx = n1-n0`, `ly = n3-n0`, `lz = n4-n0`, true when
/// `|n3+lx-n2| < 0.001|lx|` and `|n0+lz-n4|, |n1+lz-n5|, |n2+lz-n6|, |n3+lz-n7|` are all
/// `< 0.001|lz|`.
pub fn is_parallelepiped(nodes: &[Vec3; 8]) -> bool {
    let lx = sub(nodes[1], nodes[0]);
    let lz = sub(nodes[4], nodes[0]);
    let tx = norm(lx) * 0.001;
    let tz = norm(lz) * 0.001;
    norm(sub(add(nodes[3], lx), nodes[2])) < tx
        && norm(sub(add(nodes[0], lz), nodes[4])) < tz
        && norm(sub(add(nodes[1], lz), nodes[5])) < tz
        && norm(sub(add(nodes[2], lz), nodes[6])) < tz
        && norm(sub(add(nodes[3], lz), nodes[7])) < tz
}

/// Isoparametric Jacobian `J(c,k) = ∂X_c/∂ξ_k` at `(x1, x2, x3)` for a general hexahedron.
#[inline]
fn general_jacobian(n: &[Vec3; 8], x1: f64, x2: f64, x3: f64) -> Mat3 {
    let mut j = [[0.0; 3]; 3];
    for c in 0..3 {
        j[c][0] = (n[1][c] - n[0][c]) * (1.0 - x2) * (1.0 - x3) / 8.0
            + (n[2][c] - n[3][c]) * (1.0 + x2) * (1.0 - x3) / 8.0
            + (n[5][c] - n[4][c]) * (1.0 - x2) * (1.0 + x3) / 8.0
            + (n[6][c] - n[7][c]) * (1.0 + x2) * (1.0 + x3) / 8.0;
        j[c][1] = (n[3][c] - n[0][c]) * (1.0 - x1) * (1.0 - x3) / 8.0
            + (n[2][c] - n[1][c]) * (1.0 + x1) * (1.0 - x3) / 8.0
            + (n[7][c] - n[4][c]) * (1.0 - x1) * (1.0 + x3) / 8.0
            + (n[6][c] - n[5][c]) * (1.0 + x1) * (1.0 + x3) / 8.0;
        j[c][2] = (n[4][c] - n[0][c]) * (1.0 - x1) * (1.0 - x2) / 8.0
            + (n[5][c] - n[1][c]) * (1.0 + x1) * (1.0 - x2) / 8.0
            + (n[6][c] - n[2][c]) * (1.0 + x1) * (1.0 + x2) / 8.0
            + (n[7][c] - n[3][c]) * (1.0 - x1) * (1.0 + x2) / 8.0;
    }
    j
}

/// Element stiffness `K_e` (24×24) of the hexahedron with corner positions `nodes`
/// (the rotated rest corners for `large`/`polar`, the rest corners for `small`), scaled by
/// `stiffness_factor` (1, or the sparse-grid cell coefficient).
///
/// 2×2×2 Gauss quadrature (`ξ = ±1/√3`, loops ξ1 outer → ξ3 inner, weight 1) of
/// `Bᵢᵀ C Bⱼ · det J` for node pairs `i ≤ j`, with `det J` **signed**. The Jacobian is the
/// constant `[lx/2, ly/2, lz/2]` for a parallelepiped ([`is_parallelepiped`]) and the
/// trilinear one at each Gauss point otherwise. The lower triangle of the scalar matrix is
/// then overwritten by the upper one, so the result is exactly symmetric.
pub fn element_stiffness(nodes: &[Vec3; 8], material: &HexaMaterial, stiffness_factor: f64) -> Result<ElementStiffness, HexaError> {
    stiffness_impl(nodes, material, stiffness_factor, is_parallelepiped(nodes))
}

fn stiffness_impl(nodes: &[Vec3; 8], material: &HexaMaterial, stiffness_factor: f64, parallel: bool) -> Result<ElementStiffness, HexaError> {
    let MaterialCoefficients { u, v, w } = material.coefficients();
    let mut k = [[0.0f64; 24]; 24];

    let mut det_j = 1.0;
    let mut j_inv = IDENTITY;
    if parallel {
        let lx = sub(nodes[1], nodes[0]);
        let ly = sub(nodes[3], nodes[0]);
        let lz = sub(nodes[4], nodes[0]);
        let mut j = [[0.0; 3]; 3];
        for c in 0..3 {
            j[c][0] = lx[c] / 2.0;
            j[c][1] = ly[c] / 2.0;
            j[c][2] = lz[c] / 2.0;
        }
        det_j = determinant(&j);
        j_inv = invert(&j).ok_or(HexaError::SingularJacobian { gauss_point: None, det: det_j })?;
    }

    let inv_sqrt3 = 1.0 / 3.0f64.sqrt();
    let mut gauss_point = 0usize;
    for g1 in [-1.0f64, 1.0] {
        for g2 in [-1.0f64, 1.0] {
            for g3 in [-1.0f64, 1.0] {
                let x1 = g1 * inv_sqrt3;
                let x2 = g2 * inv_sqrt3;
                let x3 = g3 * inv_sqrt3;
                if !parallel {
                    let j = general_jacobian(nodes, x1, x2, x3);
                    det_j = determinant(&j);
                    j_inv = invert(&j).ok_or(HexaError::SingularJacobian { gauss_point: Some(gauss_point), det: det_j })?;
                }
                gauss_point += 1;

                // Physical shape-function gradients q = J⁻ᵀ ∂N/∂ξ.
                let mut qx = [0.0; 8];
                let mut qy = [0.0; 8];
                let mut qz = [0.0; 8];
                for i in 0..8 {
                    let [c0, c1, c2] = CORNER_SIGNS[i];
                    let dn1 = c0 * (1.0 + c1 * x2) * (1.0 + c2 * x3) / 8.0;
                    let dn2 = (1.0 + c0 * x1) * c1 * (1.0 + c2 * x3) / 8.0;
                    let dn3 = (1.0 + c0 * x1) * (1.0 + c1 * x2) * c2 / 8.0;
                    qx[i] = dn1 * j_inv[0][0] + dn2 * j_inv[1][0] + dn3 * j_inv[2][0];
                    qy[i] = dn1 * j_inv[0][1] + dn2 * j_inv[1][1] + dn3 * j_inv[2][1];
                    qz[i] = dn1 * j_inv[0][2] + dn2 * j_inv[1][2] + dn3 * j_inv[2][2];
                }

                for i in 0..8 {
                    // C·B_i (6×3); rows xx, yy, zz, xy, yz, zx.
                    let mb = [
                        [u * qx[i], v * qy[i], v * qz[i]],
                        [v * qx[i], u * qy[i], v * qz[i]],
                        [v * qx[i], v * qy[i], u * qz[i]],
                        [w * qy[i], w * qx[i], 0.0],
                        [0.0, w * qz[i], w * qy[i]],
                        [w * qz[i], 0.0, w * qx[i]],
                    ];
                    for jn in i..8 {
                        let (ax, ay, az) = (qx[jn], qy[jn], qz[jn]);
                        // b = B_jᵀ (C B_i), skipping the structural zeros of B_j.
                        let mut b = [
                            [ax * mb[0][0] + ay * mb[3][0] + az * mb[5][0], ax * mb[0][1] + ay * mb[3][1], ax * mb[0][2] + az * mb[5][2]],
                            [ay * mb[1][0] + ax * mb[3][0], ay * mb[1][1] + ax * mb[3][1] + az * mb[4][1], ay * mb[1][2] + az * mb[4][2]],
                            [az * mb[2][0] + ax * mb[5][0], az * mb[2][1] + ay * mb[4][1], az * mb[2][2] + ay * mb[4][2] + ax * mb[5][2]],
                        ];
                        for row in b.iter_mut() {
                            for e in row.iter_mut() {
                                *e *= det_j;
                            }
                        }
                        // Block (i, j) of K is the transpose of b.
                        for m in 0..3 {
                            for l in 0..3 {
                                k[3 * i + m][3 * jn + l] += b[l][m];
                            }
                        }
                    }
                }
            }
        }
    }

    for r in 0..24 {
        for c in (r + 1)..24 {
            k[c][r] = k[r][c];
        }
    }
    for row in k.iter_mut() {
        for e in row.iter_mut() {
            *e *= stiffness_factor;
        }
    }
    Ok(k)
}

crate::common::avx2_twin! {
/// `K · d` with each row summed left to right.
fn stiffness_times(k: &ElementStiffness, d: &[f64; 24]) -> [f64; 24] {
    // Each f[i] is summed over j in increasing order, as a row-by-row product would, but the
    // loops run column by column so the 24 independent sums advance together (vectorisable).
    // K is exactly symmetric, so column j is row j: contiguous.
    let mut f = [0.0; 24];
    for i in 0..24 {
        f[i] = k[0][i] * d[0];
    }
    for j in 1..24 {
        let (row, dj) = (&k[j], d[j]);
        for i in 0..24 {
            f[i] += row[i] * dj;
        }
    }
    f
}
}

// ---------------------------------------------------------------------------------------
// Per-element state and kernels.

/// Rest-state data of one element, computed once at (re)initialisation.
#[derive(Clone, Debug, PartialEq)]
pub struct HexaElementRest {
    method: HexaMethod,
    material: HexaMaterial,
    stiffness_factor: f64,
    initial_rotation: Mat3,
    rotated_rest: [Vec3; 8],
    stiffness: ElementStiffness,
}

impl HexaElementRest {
    /// Rest data from the rest corner positions `rest` (in element corner order):
    /// `R0 = element_rotation(method, rest)` (identity for `small`), rotated rest corners
    /// `r_w = R0·X0_w` (rotated about the world origin, not translated) and
    /// `K = element_stiffness(r, material, 1)`.
    pub fn new(method: HexaMethod, material: HexaMaterial, rest: &[Vec3; 8]) -> Result<Self, HexaError> {
        Self::with_stiffness_factor(method, material, rest, 1.0)
    }

    /// Same as [`new`](Self::new) with the stiffness multiplied by `stiffness_factor`
    /// (SparseGridTopology's per-cell `stiffnessCoef`).
    pub fn with_stiffness_factor(method: HexaMethod, material: HexaMaterial, rest: &[Vec3; 8], stiffness_factor: f64) -> Result<Self, HexaError> {
        let initial_rotation = element_rotation(method, rest);
        let mut rotated_rest = [[0.0; 3]; 8];
        for (r, x) in rotated_rest.iter_mut().zip(rest.iter()) {
            *r = mat_vec(&initial_rotation, *x);
        }
        let stiffness = element_stiffness(&rotated_rest, &material, stiffness_factor)?;
        Ok(HexaElementRest { method, material, stiffness_factor, initial_rotation, rotated_rest, stiffness })
    }

    pub fn method(&self) -> HexaMethod {
        self.method
    }

    pub fn material(&self) -> HexaMaterial {
        self.material
    }

    pub fn stiffness_factor(&self) -> f64 {
        self.stiffness_factor
    }

    /// `R0`, the rotation of the rest configuration (identity for `small`).
    pub fn initial_rotation(&self) -> &Mat3 {
        &self.initial_rotation
    }

    /// Rotated rest corners `r_w = R0·X0_w`.
    pub fn rotated_rest(&self) -> &[Vec3; 8] {
        &self.rotated_rest
    }

    /// The current element stiffness `K_e` (SOFA Data `stiffnessMatrices[i]`).
    pub fn stiffness(&self) -> &ElementStiffness {
        &self.stiffness
    }

    /// Replaces `K_e` (e.g. a user-provided `stiffnessMatrices`).
    pub fn set_stiffness(&mut self, k: ElementStiffness) {
        self.stiffness = k;
    }
}

/// Displacement 24-vector `D = r - q` and the current rotation/rotated positions.
#[inline]
fn displacement(rest: &HexaElementRest, x: &[Vec3; 8]) -> (Mat3, [Vec3; 8], [f64; 24]) {
    let rotation = element_rotation(rest.method, x);
    let mut deformed = *x;
    if rest.method != HexaMethod::Small {
        for (q, p) in deformed.iter_mut().zip(x.iter()) {
            *q = mat_vec(&rotation, *p);
        }
    }
    let mut d = [0.0; 24];
    for k in 0..8 {
        for c in 0..3 {
            d[3 * k + c] = rest.rotated_rest[k][c] - deformed[k][c];
        }
    }
    (rotation, deformed, d)
}

#[inline]
fn force_from_displacement(method: HexaMethod, k: &ElementStiffness, rotation: &Mat3, d: &[f64; 24]) -> [Vec3; 8] {
    let f = stiffness_times(k, d);
    let mut out = [[0.0; 3]; 8];
    for (wi, o) in out.iter_mut().enumerate() {
        let fw = [f[3 * wi], f[3 * wi + 1], f[3 * wi + 2]];
        *o = if method == HexaMethod::Small { fw } else { mat_t_vec(rotation, fw) };
    }
    out
}

/// Internal elastic force of one element at corner positions `x` (element corner order),
/// to be **added** to the nodal forces (`f_w += result[w]`).
///
/// `R = element_rotation(method, x)` is written to `out_rotation` (SOFA caches it for the
/// following `addDForce`/matrix calls; identity for `small`). Then `q_w = R·x_w`
/// (`q_w = x_w` for `small`), `D_w = r_w - q_w`, `F = K·D` and `result[w] = Rᵀ·F_w`
/// (`F_w` for `small`). Uses the stored `K_e` (SOFA default `updateStiffnessMatrix=false`).
pub fn element_force(rest: &HexaElementRest, x: &[Vec3; 8], out_rotation: &mut Mat3) -> [Vec3; 8] {
    let (rotation, _, d) = displacement(rest, x);
    *out_rotation = rotation;
    force_from_displacement(rest.method, &rest.stiffness, &rotation, &d)
}

/// Variant of [`element_force`] for `updateStiffnessMatrix=true`: `K_e` is first rebuilt
/// from the deformed, rotated corners `q_w` (and stored in `rest`, since SOFA keeps it for
/// `addDForce` and the matrix), then used for the force.
pub fn element_force_updating_stiffness(rest: &mut HexaElementRest, x: &[Vec3; 8], out_rotation: &mut Mat3) -> Result<[Vec3; 8], HexaError> {
    let (rotation, deformed, d) = displacement(rest, x);
    *out_rotation = rotation;
    rest.stiffness = element_stiffness(&deformed, &rest.material, rest.stiffness_factor)?;
    Ok(force_from_displacement(rest.method, &rest.stiffness, &rotation, &d))
}

crate::common::avx2_twin! {
/// Force differential of one element for a displacement increment `dx`, to be **added**
/// to `df`: `result[w] = -(Rᵀ (K·(R·dx))_w · k_factor)`, where `rotation` is the one
/// produced by the last [`element_force`] call for this element (identity for `small`)
/// and `k_factor` is SOFA's `kFactor + bFactor·rayleighStiffness`.
/// (`df + result` is bitwise equal to SOFA's `df -= Rᵀ F · k`.)
pub fn element_dforce(rest: &HexaElementRest, rotation: &Mat3, dx: &[Vec3; 8], k_factor: f64) -> [Vec3; 8] {
    let mut xr = [0.0; 24];
    for w in 0..8 {
        let r = mat_vec(rotation, dx[w]);
        xr[3 * w] = r[0];
        xr[3 * w + 1] = r[1];
        xr[3 * w + 2] = r[2];
    }
    let f = stiffness_times(&rest.stiffness, &xr);
    let mut out = [[0.0; 3]; 8];
    for (w, o) in out.iter_mut().enumerate() {
        let g = mat_t_vec(rotation, [f[3 * w], f[3 * w + 1], f[3 * w + 2]]);
        *o = [-(g[0] * k_factor), -(g[1] * k_factor), -(g[2] * k_factor)];
    }
    out
}
}

/// The 8×8 blocks (3×3 each) of this element's contribution to the global force Jacobian,
/// scaled by `k_factor`: `blocks[a][b] = (Rᵀ K_ab R)·(-k_factor)`, to be **added** at
/// block (node a, node b). `Rᵀ K_ab` is formed first, then multiplied by `R`, as SOFA's
/// `addKToMatrix`/`buildStiffnessMatrix` do. `rotation` is the one cached by the last
/// [`element_force`] call.
pub fn element_stiffness_blocks(rest: &HexaElementRest, rotation: &Mat3, k_factor: f64) -> [[Mat3; 8]; 8] {
    let k = &rest.stiffness;
    let r = rotation;
    let mut out = [[[[0.0; 3]; 3]; 8]; 8];
    for a in 0..8 {
        for b in 0..8 {
            let mut kb = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    kb[i][j] = k[3 * a + i][3 * b + j];
                }
            }
            // t = Rᵀ·kb
            let mut t = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    t[i][j] = r[0][i] * kb[0][j] + r[1][i] * kb[1][j] + r[2][i] * kb[2][j];
                }
            }
            // (t·R)·(-k)
            let blk = &mut out[a][b];
            for i in 0..3 {
                for j in 0..3 {
                    let s = t[i][0] * r[0][j] + t[i][1] * r[1][j] + t[i][2] * r[2][j];
                    blk[i][j] = s * (-k_factor);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{arb_perturbation, arb_quat, quat_to_mat};
    use proptest::prelude::*;

    fn unit_cube() -> [Vec3; 8] {
        let mut n = [[0.0; 3]; 8];
        for i in 0..8 {
            for c in 0..3 {
                n[i][c] = (CORNER_SIGNS[i][c] + 1.0) / 2.0;
            }
        }
        n
    }

    /// A box `[0,a]×[0,b]×[0,c]` translated by `t`, with per-corner perturbations.
    fn distorted(a: f64, b: f64, c: f64, t: Vec3, p: &[Vec3; 8]) -> [Vec3; 8] {
        let mut n = unit_cube();
        for i in 0..8 {
            n[i] = [n[i][0] * a + t[0] + p[i][0], n[i][1] * b + t[1] + p[i][1], n[i][2] * c + t[2] + p[i][2]];
        }
        n
    }

    fn max_abs(f: &[Vec3; 8]) -> f64 {
        f.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
        let mut r = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
            }
        }
        r
    }

    #[test]
    fn material_coefficients() {
        let m = HexaMaterial::new(4000.0, 0.3).coefficients();
        let u = 4000.0 * 0.7 / (1.3 * 0.4);
        assert!((m.u - u).abs() < 1e-9);
        assert!((m.v - 4000.0 * 0.3 / (1.3 * 0.4)).abs() < 1e-9);
        assert!((m.w - 4000.0 / 2.6).abs() < 1e-9);
        assert_eq!(HexaMaterial::new(-1.0, 0.5).validated(), HexaMaterial::new(5000.0, 0.45));
        assert_eq!(HexaMethod::from_sofa_name("bogus"), HexaMethod::Large);
        assert_eq!(HexaMethod::from_sofa_name("polar"), HexaMethod::Polar);
    }

    /// Uniaxial strain ε along x of the unit cube: σxx = Uε, σyy = σzz = Vε; the internal
    /// force on a node is minus the stress times the face area (1) split over 4 nodes,
    /// signed by the face the node lies on.
    #[test]
    fn uniaxial_strain_unit_cube() {
        let mat = HexaMaterial::new(1000.0, 0.3);
        let MaterialCoefficients { u, v, .. } = mat.coefficients();
        let eps = 1e-3;
        let rest_pos = unit_cube();
        let mut x = rest_pos;
        for p in x.iter_mut() {
            p[0] *= 1.0 + eps;
        }
        for method in [HexaMethod::Small, HexaMethod::Large, HexaMethod::Polar] {
            let rest = HexaElementRest::new(method, mat, &rest_pos).unwrap();
            let mut r = [[0.0; 3]; 3];
            let f = element_force(&rest, &x, &mut r);
            for i in 0..8 {
                let s = CORNER_SIGNS[i];
                let expected = [-s[0] * u * eps / 4.0, -s[1] * v * eps / 4.0, -s[2] * v * eps / 4.0];
                for c in 0..3 {
                    assert!((f[i][c] - expected[c]).abs() < 1e-10, "{method:?} node {i} comp {c}: {} vs {}", f[i][c], expected[c]);
                }
            }
        }
    }

    /// Simple shear u_x = γ·y: τxy = Wγ; x-forces on the y-faces, y-forces on the x-faces.
    #[test]
    fn simple_shear_unit_cube() {
        let mat = HexaMaterial::new(2500.0, 0.35);
        let w = mat.coefficients().w;
        let g = 2e-4;
        let rest_pos = unit_cube();
        let mut x = rest_pos;
        for p in x.iter_mut() {
            p[0] += g * p[1];
        }
        let rest = HexaElementRest::new(HexaMethod::Small, mat, &rest_pos).unwrap();
        let mut r = [[0.0; 3]; 3];
        let f = element_force(&rest, &x, &mut r);
        for i in 0..8 {
            let s = CORNER_SIGNS[i];
            let expected = [-s[1] * w * g / 4.0, -s[0] * w * g / 4.0, 0.0];
            for c in 0..3 {
                assert!((f[i][c] - expected[c]).abs() < 1e-11, "node {i} comp {c}");
            }
        }
    }

    #[test]
    fn rest_state_gives_exactly_zero_force() {
        let p = [[0.01, -0.02, 0.0], [0.0; 3], [0.03, 0.0, -0.01], [0.0; 3], [0.0; 3], [0.0, 0.02, 0.0], [0.0; 3], [-0.01, 0.0, 0.02]];
        let rest_pos = distorted(1.0, 0.8, 1.3, [-9.0, 0.5, 3.0], &p);
        for method in [HexaMethod::Small, HexaMethod::Large, HexaMethod::Polar] {
            let rest = HexaElementRest::new(method, HexaMaterial::new(4000.0, 0.3), &rest_pos).unwrap();
            let mut r = [[0.0; 3]; 3];
            let f = element_force(&rest, &rest_pos, &mut r);
            assert_eq!(max_abs(&f), 0.0, "{method:?}");
            assert_eq!(&r, rest.initial_rotation());
        }
    }

    #[test]
    fn general_and_parallelepiped_paths_agree() {
        // a sheared parallelepiped (constant Jacobian)
        let lx = [1.0, 0.1, 0.0];
        let ly = [0.2, 0.9, 0.05];
        let lz = [0.1, -0.1, 1.2];
        let o = [-3.0, 2.0, 1.0];
        let mut n = [[0.0; 3]; 8];
        for i in 0..8 {
            let s = CORNER_SIGNS[i].map(|c| (c + 1.0) / 2.0);
            for c in 0..3 {
                n[i][c] = o[c] + s[0] * lx[c] + s[1] * ly[c] + s[2] * lz[c];
            }
        }
        assert!(is_parallelepiped(&n));
        let mat = HexaMaterial::new(3000.0, 0.4);
        let a = stiffness_impl(&n, &mat, 1.0, true).unwrap();
        let b = stiffness_impl(&n, &mat, 1.0, false).unwrap();
        let scale = a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
        for i in 0..24 {
            for j in 0..24 {
                assert!((a[i][j] - b[i][j]).abs() <= 1e-12 * scale);
            }
        }
    }

    #[test]
    fn singular_element_is_rejected() {
        let mut n = unit_cube();
        for p in n.iter_mut() {
            p[2] = 0.0;
        }
        assert!(matches!(element_stiffness(&n, &HexaMaterial::new(1.0, 0.3), 1.0), Err(HexaError::SingularJacobian { .. })));
    }

    #[test]
    fn polar_decomposition_of_known_matrix() {
        let rot = quat_to_mat([0.9, 0.2, -0.3, 0.1]);
        let s = [[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]];
        let m = mat_mul(&rot, &s);
        let q = polar_decomposition(&m);
        for i in 0..3 {
            for j in 0..3 {
                assert!((q[i][j] - rot[i][j]).abs() < 1e-13);
            }
        }
    }

    #[test]
    fn updating_stiffness_keeps_force_and_stores_k() {
        let rest_pos = unit_cube();
        let mat = HexaMaterial::new(1000.0, 0.3);
        let mut rest = HexaElementRest::new(HexaMethod::Large, mat, &rest_pos).unwrap();
        let mut r = [[0.0; 3]; 3];
        let f0 = element_force_updating_stiffness(&mut rest, &rest_pos, &mut r).unwrap();
        assert_eq!(max_abs(&f0), 0.0);
        let mut x = rest_pos;
        x[6][0] += 0.05;
        let fixed = HexaElementRest::new(HexaMethod::Large, mat, &rest_pos).unwrap();
        let f_fixed = element_force(&fixed, &x, &mut r);
        let f_upd = element_force_updating_stiffness(&mut rest, &x, &mut r).unwrap();
        // different K (deformed geometry) but same order of magnitude and opposite-sum zero
        assert!(rest.stiffness() != fixed.stiffness());
        for c in 0..3 {
            let s: f64 = f_upd.iter().map(|v| v[c]).sum();
            assert!(s.abs() < 1e-10);
        }
        assert!((max_abs(&f_upd) / max_abs(&f_fixed) - 1.0).abs() < 0.2);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// A rigid motion of the element gives (numerically) zero force for large and polar.
        #[test]
        fn rigid_motion_gives_zero_force(
            p in arb_perturbation::<8>(),
            q in arb_quat(),
            t in prop::array::uniform3(-20.0f64..20.0),
            origin in prop::array::uniform3(-10.0f64..10.0),
            dims in prop::array::uniform3(0.5f64..2.0),
        ) {
            let rest_pos = distorted(dims[0], dims[1], dims[2], origin, &p);
            let g = quat_to_mat(q);
            let mut x = [[0.0; 3]; 8];
            for i in 0..8 {
                x[i] = add(mat_vec(&g, rest_pos[i]), t);
            }
            let mat = HexaMaterial::new(4000.0, 0.3);
            for method in [HexaMethod::Large, HexaMethod::Polar] {
                let rest = HexaElementRest::new(method, mat, &rest_pos).unwrap();
                let mut r = [[0.0; 3]; 3];
                let f = element_force(&rest, &x, &mut r);
                let kscale = rest.stiffness().iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
                // round-off of positions of magnitude ~50 amplified by K
                let tol = kscale * 50.0 * 1e-13;
                prop_assert!(max_abs(&f) < tol, "{:?}: {} >= {}", method, max_abs(&f), tol);
                // the rotation is R0·Gᵀ
                let expected = mat_mul(rest.initial_rotation(), &transpose(&g));
                for i in 0..3 { for j in 0..3 {
                    prop_assert!((r[i][j] - expected[i][j]).abs() < 1e-12);
                }}
            }
        }

        /// K_e is exactly symmetric and annihilates the 6 rigid-body modes.
        #[test]
        fn stiffness_symmetric_with_rigid_null_space(
            p in arb_perturbation::<8>(),
            origin in prop::array::uniform3(-10.0f64..10.0),
            dims in prop::array::uniform3(0.5f64..2.0),
            nu in 0.0f64..0.49,
        ) {
            let nodes = distorted(dims[0], dims[1], dims[2], origin, &p);
            let k = element_stiffness(&nodes, &HexaMaterial::new(1000.0, nu), 1.0).unwrap();
            let kscale = k.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
            for i in 0..24 { for j in 0..24 {
                prop_assert_eq!(k[i][j], k[j][i]);
            }}
            let mut modes: Vec<[f64; 24]> = Vec::new();
            for a in 0..3 {
                let mut m = [0.0; 24];
                for w in 0..8 { m[3 * w + a] = 1.0; }
                modes.push(m);
            }
            for a in 0..3 {
                let mut axis = [0.0; 3];
                axis[a] = 1.0;
                let mut m = [0.0; 24];
                for w in 0..8 {
                    let v = cross(axis, nodes[w]);
                    m[3 * w..3 * w + 3].copy_from_slice(&v);
                }
                modes.push(m);
            }
            for m in &modes {
                let mnorm = m.iter().fold(0.0f64, |s, v| s.max(v.abs()));
                let f = stiffness_times(&k, m);
                let fmax = f.iter().fold(0.0f64, |s, v| s.max(v.abs()));
                prop_assert!(fmax < 1e-12 * kscale * mnorm * 24.0, "{} vs {}", fmax, kscale * mnorm);
            }
            // positive semi-definite in a random-ish direction
            let mut d = [0.0; 24];
            for (i, v) in d.iter_mut().enumerate() { *v = ((i * 7 + 3) % 11) as f64 - 5.0; }
            let kd = stiffness_times(&k, &d);
            let e: f64 = kd.iter().zip(d.iter()).map(|(a, b)| a * b).sum();
            prop_assert!(e > 0.0);
        }

        /// element_dforce equals the assembled blocks applied to dx, for every method.
        #[test]
        fn dforce_matches_blocks(
            p in arb_perturbation::<8>(),
            q in arb_quat(),
            pert in arb_perturbation::<8>(),
            dx in prop::array::uniform8(prop::array::uniform3(-1.0f64..1.0)),
            kf in -2.0f64..2.0,
        ) {
            let rest_pos = distorted(1.0, 1.2, 0.8, [1.0, -2.0, 3.0], &p);
            let g = quat_to_mat(q);
            let mut x = [[0.0; 3]; 8];
            for i in 0..8 {
                x[i] = add(mat_vec(&g, rest_pos[i]), pert[i]);
            }
            for method in [HexaMethod::Small, HexaMethod::Large, HexaMethod::Polar] {
                let rest = HexaElementRest::new(method, HexaMaterial::new(4000.0, 0.3), &rest_pos).unwrap();
                let mut r = [[0.0; 3]; 3];
                let _ = element_force(&rest, &x, &mut r);
                let df = element_dforce(&rest, &r, &dx, kf);
                let blocks = element_stiffness_blocks(&rest, &r, kf);
                let kscale = rest.stiffness().iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
                for a in 0..8 {
                    let mut s = [0.0; 3];
                    for b in 0..8 {
                        let v = mat_vec(&blocks[a][b], dx[b]);
                        s = add(s, v);
                    }
                    for c in 0..3 {
                        prop_assert!((s[c] - df[a][c]).abs() < 1e-12 * kscale * 24.0,
                            "{:?} node {} comp {}: {} vs {}", method, a, c, s[c], df[a][c]);
                    }
                }
                // and the blocks are -k·Rᵀ K R: symmetric overall
                for a in 0..8 { for b in 0..8 { for i in 0..3 { for j in 0..3 {
                    prop_assert!((blocks[a][b][i][j] - blocks[b][a][j][i]).abs() < 1e-12 * kscale);
                }}}}
            }
        }

        /// Small method: force is linear, -K·u, and consistent with dforce.
        #[test]
        fn small_force_is_minus_k_u(
            p in arb_perturbation::<8>(),
            u in prop::array::uniform8(prop::array::uniform3(-0.1f64..0.1)),
        ) {
            let rest_pos = distorted(1.0, 1.0, 1.0, [0.0; 3], &p);
            let rest = HexaElementRest::new(HexaMethod::Small, HexaMaterial::new(500.0, 0.2), &rest_pos).unwrap();
            let mut x = rest_pos;
            for i in 0..8 { x[i] = add(x[i], u[i]); }
            let mut r = [[0.0; 3]; 3];
            let f = element_force(&rest, &x, &mut r);
            prop_assert_eq!(r, IDENTITY);
            let df = element_dforce(&rest, &r, &u, 1.0);
            for a in 0..8 { for c in 0..3 {
                prop_assert!((f[a][c] - df[a][c]).abs() < 1e-10);
            }}
        }

        /// The polar rotation is orthogonal with determinant +1 for well-shaped elements.
        #[test]
        fn polar_rotation_is_proper_orthogonal(p in arb_perturbation::<8>(), q in arb_quat()) {
            let g = quat_to_mat(q);
            let base = distorted(1.0, 2.0, 0.7, [0.3, 0.1, -0.4], &p);
            let mut x = [[0.0; 3]; 8];
            for i in 0..8 { x[i] = mat_vec(&g, base[i]); }
            for r in [rotation_polar(&x), rotation_large(&x)] {
                let rrt = mat_mul(&r, &transpose(&r));
                for i in 0..3 { for j in 0..3 {
                    let e = if i == j { 1.0 } else { 0.0 };
                    prop_assert!((rrt[i][j] - e).abs() < 1e-13);
                }}
                prop_assert!((determinant(&r) - 1.0).abs() < 1e-13);
            }
        }
    }
}
