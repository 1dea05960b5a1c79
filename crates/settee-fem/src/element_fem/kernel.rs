//! Pure element kernels of SOFA's element-based linear FEM (`LinearSmallStrainFEMForceField`,
//! `CorotationalFEMForceField`): reference elements, the element stiffness integrated by
//! quadrature, the element rotations and the per-element force / force differential.
//!
//! # Conventions
//!
//! * An element has `N` nodes (4 for tetrahedra, 8 for hexahedra); element vectors are flat
//!   `3N` slices (`3·node + component`), element matrices flat row-major `3N × 3N` slices.
//! * A rotation [`Mat3`] is row-major. The rotation `R` of an element maps the rest orientation
//!   onto the current one (`x ≈ R·X` for a rigidly rotated element).
//! * The kernels return the *elastic* element vector `K·d` (rotated back for corotational
//!   elements); the caller subtracts it from the node forces, as SOFA does when it dispatches the
//!   element forces.
//!
//! Sums are evaluated in SOFA's order (left to right, first term not added to zero), so results
//! agree with SOFA's to round-off level.

use settee_core::math::{add, sub};

use crate::decompose;
use crate::hexa::{polar_decomposition, Mat3, Vec3};

/// `1/√3` as SOFA writes it (its constant is `1.73205080757`, not the exact root).
fn inv_sqrt3() -> f64 {
    1.0 / 1.73205080757
}

/// Corner coordinates of the reference hexahedron `[-1, 1]³`, SOFA's node order (bottom face
/// `z = -1` counter-clockwise seen from +z, then the top face).
pub use crate::hexa::CORNER_SIGNS as HEXA_CORNERS;

/// The element types of the element FEM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementShape {
    /// Linear tetrahedron on the reference simplex `(0,0,0) (1,0,0) (0,1,0) (0,0,1)`.
    Tetrahedron,
    /// Trilinear hexahedron on `[-1, 1]³`.
    Hexahedron,
}

impl ElementShape {
    /// From the second part of a template (`Vec3d,Hexahedron`).
    pub fn from_template(t: &str) -> Option<ElementShape> {
        match t.split(',').nth(1).map(str::trim) {
            Some("Tetrahedron") => Some(ElementShape::Tetrahedron),
            Some("Hexahedron") => Some(ElementShape::Hexahedron),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ElementShape::Tetrahedron => "Tetrahedron",
            ElementShape::Hexahedron => "Hexahedron",
        }
    }

    pub const fn nodes(self) -> usize {
        match self {
            ElementShape::Tetrahedron => 4,
            ElementShape::Hexahedron => 8,
        }
    }

    /// Quadrature points and weights: one point `(¼, ¼, ¼)` of weight `1/6` for tetrahedra; the
    /// eight corners scaled by `1/√3` (corner order), weight 1, for hexahedra.
    pub fn quadrature(self) -> Vec<([f64; 3], f64)> {
        match self {
            ElementShape::Tetrahedron => vec![([0.25, 0.25, 0.25], 1.0 / 6.0)],
            ElementShape::Hexahedron => {
                let s = inv_sqrt3();
                HEXA_CORNERS.iter().map(|c| ([c[0] * s, c[1] * s, c[2] * s], 1.0)).collect()
            }
        }
    }

    /// Gradients of the shape functions with respect to the reference coordinates at `q`.
    pub fn reference_gradients(self, q: [f64; 3]) -> Vec<Vec3> {
        match self {
            ElementShape::Tetrahedron => vec![[-1.0, -1.0, -1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            ElementShape::Hexahedron => {
                let [x, y, z] = q;
                HEXA_CORNERS
                    .iter()
                    .map(|&[xr, yr, zr]| {
                        [
                            0.125 * (xr * (1.0 + y * yr) * (1.0 + z * zr)),
                            0.125 * (yr * (1.0 + x * xr) * (1.0 + z * zr)),
                            0.125 * (zr * (1.0 + x * xr) * (1.0 + y * yr)),
                        ]
                    })
                    .collect()
            }
        }
    }
}

/// Why an element stiffness cannot be computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KernelError {
    /// The Jacobian of the reference-to-physical map is singular at a quadrature point.
    SingularJacobian { determinant: f64 },
}

impl std::fmt::Display for KernelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelError::SingularJacobian { determinant } => {
                write!(f, "the element is degenerate (Jacobian determinant {determinant:e} at a quadrature point)")
            }
        }
    }
}

/// Lamé coefficients `(λ, μ)` of a 3D isotropic material.
pub fn lame(young: f64, poisson: f64) -> (f64, f64) {
    let mu = young / (2.0 * (1.0 + poisson));
    let lambda = young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
    (lambda, mu)
}

/// Voigt index order of SOFA's element FEM: `xx, yy, zz, yz, xz, xy`.
const VOIGT: [(usize, usize); 6] = [(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)];

/// The 6×6 isotropic elasticity matrix (engineering shear strains): `C_ab = μ(δik δjl + δil δjk)
/// + λ δij δkl` with `(i,j)`, `(k,l)` the tensor indices of the Voigt indices `a`, `b`.
pub fn elasticity_matrix(lambda: f64, mu: f64) -> [[f64; 6]; 6] {
    let d = |a: usize, b: usize| if a == b { 1.0 } else { 0.0 };
    let mut c = [[0.0; 6]; 6];
    for (a, &(i, j)) in VOIGT.iter().enumerate() {
        for (b, &(k, l)) in VOIGT.iter().enumerate() {
            c[a][b] = mu * (d(i, k) * d(j, l) + d(i, l) * d(j, k)) + lambda * d(i, j) * d(k, l);
        }
    }
    c
}

/// Jacobian `J = Σ_i X_i ⊗ ∇_ref N_i` of the reference-to-physical map.
pub fn jacobian(nodes: &[Vec3], grads: &[Vec3]) -> Mat3 {
    let mut j = [[0.0; 3]; 3];
    for (x, g) in nodes.iter().zip(grads) {
        for a in 0..3 {
            for b in 0..3 {
                j[a][b] += x[a] * g[b];
            }
        }
    }
    j
}

/// Element stiffness `K = Σ_q w_q |det J_q| · B_qᵀ C B_q` from the rest node positions
/// (flat row-major `3N × 3N`).
pub fn element_stiffness(shape: ElementShape, nodes: &[Vec3], young: f64, poisson: f64) -> Result<Vec<f64>, KernelError> {
    let n = shape.nodes();
    debug_assert_eq!(nodes.len(), n);
    let dofs = 3 * n;
    let (lambda, mu) = lame(young, poisson);
    let c = elasticity_matrix(lambda, mu);
    let mut k = vec![0.0; dofs * dofs];
    let mut b = vec![0.0; 6 * dofs];
    let mut cb = vec![0.0; 6 * dofs];
    for (q, w) in shape.quadrature() {
        let gref = shape.reference_gradients(q);
        let j = jacobian(nodes, &gref);
        let det = decompose::determinant(&j);
        let jinv = decompose::invert(&j).ok_or(KernelError::SingularJacobian { determinant: det })?;
        let det = det.abs();
        // physical gradients ∇N_i = J⁻ᵀ ∇_ref N_i
        b.fill(0.0);
        for (node, g) in gref.iter().enumerate() {
            let mut gp = [0.0; 3];
            for (r, v) in gp.iter_mut().enumerate() {
                *v = jinv[0][r] * g[0] + jinv[1][r] * g[1] + jinv[2][r] * g[2];
            }
            for (a, &(i, jj)) in VOIGT.iter().enumerate() {
                b[a * dofs + 3 * node + i] = gp[jj];
                if i != jj {
                    b[a * dofs + 3 * node + jj] = gp[i];
                }
            }
        }
        // C·B
        for a in 0..6 {
            for col in 0..dofs {
                let mut s = c[a][0] * b[col];
                for kk in 1..6 {
                    s += c[a][kk] * b[kk * dofs + col];
                }
                cb[a * dofs + col] = s;
            }
        }
        // K += (w·|det J|)·Bᵀ(C·B)
        let f = w * det;
        for r in 0..dofs {
            for col in 0..dofs {
                let mut s = b[r] * cb[col];
                for a in 1..6 {
                    s += b[a * dofs + r] * cb[a * dofs + col];
                }
                k[r * dofs + col] += f * s;
            }
        }
    }
    Ok(k)
}

/// `out = K·v` for a flat square matrix.
#[inline]
pub fn mat_vec_flat(k: &[f64], v: &[f64], out: &mut [f64]) {
    let n = v.len();
    for (r, o) in out.iter_mut().enumerate() {
        let row = &k[r * n..(r + 1) * n];
        let mut s = row[0] * v[0];
        for c in 1..n {
            s += row[c] * v[c];
        }
        *o = s;
    }
}

crate::common::avx2_twin! {
/// `out = K·v` from `kt` = `Kᵀ` (flat, row-major): every `out_r` is `K_r0·v_0 + K_r1·v_1 + …`
/// summed left to right exactly as [`mat_vec_flat`] does (same bits), but the rows are computed
/// together, one column of `K` at a time, so the sums run in vector lanes.
pub fn mat_vec_flat_t(kt: &[f64], v: &[f64], out: &mut [f64]) {
    match v.len() {
        24 => mat_vec_flat_t_n::<24>(kt, v, out),
        12 => mat_vec_flat_t_n::<12>(kt, v, out),
        n => {
            let mut acc = [0.0f64; 24];
            let acc = &mut acc[..n];
            for (a, &k) in acc.iter_mut().zip(&kt[..n]) {
                *a = k * v[0];
            }
            for c in 1..n {
                let vc = v[c];
                for (a, &k) in acc.iter_mut().zip(&kt[c * n..(c + 1) * n]) {
                    *a += k * vc;
                }
            }
            out[..n].copy_from_slice(acc);
        }
    }
}
}

#[inline(always)]
fn mat_vec_flat_t_n<const N: usize>(kt: &[f64], v: &[f64], out: &mut [f64]) {
    let kt: &[f64] = &kt[..N * N];
    let v: &[f64; N] = v.try_into().expect("vector length");
    let mut acc = [0.0f64; N];
    for r in 0..N {
        acc[r] = kt[r] * v[0];
    }
    for c in 1..N {
        let vc = v[c];
        let col: &[f64; N] = kt[c * N..(c + 1) * N].try_into().expect("column");
        for r in 0..N {
            acc[r] += col[r] * vc;
        }
    }
    out[..N].copy_from_slice(&acc);
}

/// The transpose of a flat square matrix of side `n`.
pub fn transpose_flat(k: &[f64], n: usize) -> Vec<f64> {
    let mut t = vec![0.0; n * n];
    for r in 0..n {
        for c in 0..n {
            t[c * n + r] = k[r * n + c];
        }
    }
    t
}

// ----- rotations -----------------------------------------------------------------------------

/// How the rotation of a corotational element is computed (SOFA's `rotationMethod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RotationMethod {
    /// Polar decomposition through an SVD (robust to flat and inverted elements).
    StablePolar,
    /// Polar decomposition by Newton iterations.
    Polar,
    /// No rotation (the linear small-strain element).
    Identity,
    /// Tetrahedra: Gram–Schmidt frame of the first three nodes.
    Triangle,
    /// Hexahedra: frame of the two mean edge directions.
    Hexahedron,
}

impl RotationMethod {
    /// SOFA's default for an element type.
    pub fn default_for(shape: ElementShape) -> RotationMethod {
        match shape {
            ElementShape::Tetrahedron => RotationMethod::Triangle,
            ElementShape::Hexahedron => RotationMethod::Hexahedron,
        }
    }

    /// The methods an element type offers, in SOFA's item order (an index selects among them).
    pub fn available(shape: ElementShape) -> [RotationMethod; 4] {
        [RotationMethod::StablePolar, RotationMethod::Polar, RotationMethod::Identity, RotationMethod::default_for(shape)]
    }

    pub fn sofa_name(self) -> &'static str {
        match self {
            RotationMethod::StablePolar => "stable_polar",
            RotationMethod::Polar => "polar",
            RotationMethod::Identity => "identity",
            RotationMethod::Triangle => "triangle",
            RotationMethod::Hexahedron => "hexahedron",
        }
    }

    /// Parses a name or an index among [`RotationMethod::available`].
    pub fn parse(text: &str, shape: ElementShape) -> Option<RotationMethod> {
        let t = text.trim();
        let avail = Self::available(shape);
        if let Ok(i) = t.parse::<usize>() {
            return avail.get(i).copied();
        }
        avail.into_iter().find(|m| m.sofa_name() == t)
    }
}

/// Frame whose rows are `x = normalize(p1 - p0)`, `z = normalize(x × (p2 - p0))`, `y = z × x`
/// (the tetrahedron's `large` frame).
pub use crate::tetra::rotation_large as triangle_frame;

/// Frame of a hexahedron: rows `x = normalize(mean x-edge)`, `z = normalize(x × mean y-edge)`,
/// `y = z × x`, the mean edges summed in SOFA's order (the hexahedron's `large` frame of its
/// first eight nodes).
pub fn hexahedron_frame(n: &[Vec3]) -> Mat3 {
    crate::hexa::rotation_large(n[..8].try_into().expect("a hexahedron has eight nodes"))
}

/// Mean of the nodes (summed from zero, then divided by the count).
pub fn centroid(nodes: &[Vec3]) -> Vec3 {
    let mut c = [0.0; 3];
    for p in nodes {
        c = add(c, *p);
    }
    let n = nodes.len() as f64;
    [c[0] / n, c[1] / n, c[2] / n]
}

/// `Σ_j (x_j - c)(X_j - c0)ᵀ`, the matrix whose orthogonal factor is the polar rotation.
fn covariance(x: &[Vec3], rest: &[Vec3]) -> Mat3 {
    let t = centroid(x);
    let t0 = centroid(rest);
    let p: Vec<Vec3> = x.iter().map(|v| sub(*v, t)).collect();
    let q: Vec<Vec3> = rest.iter().map(|v| sub(*v, t0)).collect();
    let mut h = [[0.0; 3]; 3];
    for a in 0..3 {
        for b in 0..3 {
            let mut s = p[0][a] * q[0][b];
            for j in 1..p.len() {
                s += p[j][a] * q[j][b];
            }
            h[a][b] = s;
        }
    }
    h
}

const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// The rotation of an element. `initial` is the frame of the rest element computed at init by
/// [`initial_frame`] (used by the frame methods only).
pub fn element_rotation(method: RotationMethod, initial: &Mat3, x: &[Vec3], rest: &[Vec3]) -> Mat3 {
    match method {
        RotationMethod::Identity => IDENTITY,
        RotationMethod::Triangle => decompose::mat_t_mul(&triangle_frame(x[0], x[1], x[2]), initial),
        RotationMethod::Hexahedron => decompose::mat_t_mul(&hexahedron_frame(x), initial),
        RotationMethod::Polar => polar_decomposition(&covariance(x, rest)),
        RotationMethod::StablePolar => decompose::polar_decomposition_stable(&covariance(x, rest)),
    }
}

/// The initial frame SOFA stores at init: the transpose of the rotation of the rest element
/// onto itself computed with an identity initial frame. For the frame methods this is the rest
/// frame itself (rows = rest axes).
pub fn initial_frame(method: RotationMethod, rest: &[Vec3]) -> Mat3 {
    decompose::transpose(&element_rotation(method, &IDENTITY, rest, rest))
}

// ----- element forces ------------------------------------------------------------------------

/// `r·v` for a row-major rotation, and `rᵀ·v` (each sum left to right).
pub use crate::hexa::{mat_t_vec as rot_t, mat_vec as rot};

/// Linear small strain: `out = K·(x - X)`; `kt` is `Kᵀ` (see [`mat_vec_flat_t`]).
#[inline]
pub fn linear_force(kt: &[f64], x: &[Vec3], rest: &[Vec3], out: &mut [f64]) {
    let mut d = [0.0; 24];
    let d = &mut d[..3 * x.len()];
    for (j, (p, p0)) in x.iter().zip(rest).enumerate() {
        for c in 0..3 {
            d[3 * j + c] = p[c] - p0[c];
        }
    }
    mat_vec_flat_t(kt, d, out);
}

/// Corotational: computes `R` (returned) and `out = R·K·d` node by node with
/// `d_j = Rᵀ(x_j - c) - (X_j - c0)` (`c`, `c0` the centroids); `kt` is `Kᵀ`.
pub fn corotational_force(method: RotationMethod, initial: &Mat3, kt: &[f64], x: &[Vec3], rest: &[Vec3], out: &mut [f64]) -> Mat3 {
    let r = element_rotation(method, initial, x, rest);
    let t = centroid(x);
    let t0 = centroid(rest);
    let mut d = [0.0; 24];
    let d = &mut d[..3 * x.len()];
    for (j, (p, p0)) in x.iter().zip(rest).enumerate() {
        let u = rot_t(&r, sub(*p, t));
        let v = sub(*p0, t0);
        for c in 0..3 {
            d[3 * j + c] = u[c] - v[c];
        }
    }
    mat_vec_flat_t(kt, d, out);
    rotate_nodes(&r, out);
    r
}

/// Corotational differential: `out = R·K·Rᵀ·dx` node by node; `kt` is `Kᵀ`.
#[inline]
pub fn corotational_dforce(r: &Mat3, kt: &[f64], dx: &[Vec3], out: &mut [f64]) {
    let mut u = [0.0; 24];
    let u = &mut u[..3 * dx.len()];
    for (j, v) in dx.iter().enumerate() {
        u[3 * j..3 * j + 3].copy_from_slice(&rot_t(r, *v));
    }
    mat_vec_flat_t(kt, u, out);
    rotate_nodes(r, out);
}

/// Linear differential: `out = K·dx`; `kt` is `Kᵀ`.
#[inline]
pub fn linear_dforce(kt: &[f64], dx: &[Vec3], out: &mut [f64]) {
    let mut u = [0.0; 24];
    let u = &mut u[..3 * dx.len()];
    for (j, v) in dx.iter().enumerate() {
        u[3 * j..3 * j + 3].copy_from_slice(v);
    }
    mat_vec_flat_t(kt, u, out);
}

/// Replaces every node triple `e_j` of `v` by `R·e_j`.
fn rotate_nodes(r: &Mat3, v: &mut [f64]) {
    for e in v.chunks_exact_mut(3) {
        let w = rot(r, [e[0], e[1], e[2]]);
        e.copy_from_slice(&w);
    }
}

/// Block `(a, b)` of a flat `3N × 3N` matrix.
#[inline]
pub fn block(k: &[f64], dofs: usize, a: usize, b: usize) -> Mat3 {
    let mut m = [[0.0; 3]; 3];
    for (i, row) in m.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = k[(3 * a + i) * dofs + 3 * b + j];
        }
    }
    m
}

/// The block `-factor·R·K_ab·Rᵀ` of `df/dx` (`R` = identity for linear elements).
pub fn stiffness_block(r: Option<&Mat3>, k: &[f64], dofs: usize, a: usize, b: usize, factor: f64) -> Mat3 {
    let kab = block(k, dofs, a, b);
    let m = match r {
        None => kab,
        Some(r) => {
            // (-R)·K_ab·Rᵀ as SOFA groups it; the sign is applied at the end here, which is exact.
            let rk = decompose::mat_mul(r, &kab);
            decompose::mat_mul_t(&rk, r)
        }
    };
    let mut out = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = -(m[i][j]) * factor;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use settee_core::math::{cross, normalized};

    fn unit_cube() -> Vec<Vec3> {
        HEXA_CORNERS.iter().map(|c| [(c[0] + 1.0) / 2.0, (c[1] + 1.0) / 2.0, (c[2] + 1.0) / 2.0]).collect()
    }

    fn tet() -> Vec<Vec3> {
        vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    }

    #[test]
    fn stiffness_is_symmetric_with_rigid_null_space() {
        for (shape, nodes) in [(ElementShape::Hexahedron, unit_cube()), (ElementShape::Tetrahedron, tet())] {
            let k = element_stiffness(shape, &nodes, 1000.0, 0.3).unwrap();
            let n = 3 * shape.nodes();
            for i in 0..n {
                for j in 0..n {
                    assert!((k[i * n + j] - k[j * n + i]).abs() < 1e-9, "{shape:?}");
                }
            }
            // translations and infinitesimal rotations produce no force
            let mut out = vec![0.0; n];
            for c in 0..3 {
                let mut t = vec![0.0; n];
                for j in 0..shape.nodes() {
                    t[3 * j + c] = 1.0;
                }
                mat_vec_flat(&k, &t, &mut out);
                assert!(out.iter().all(|v| v.abs() < 1e-9), "{shape:?} {out:?}");
            }
            let w = [0.3, -0.2, 0.5];
            let rot: Vec<f64> = nodes.iter().flat_map(|p| cross(w, *p)).collect();
            mat_vec_flat(&k, &rot, &mut out);
            assert!(out.iter().all(|v| v.abs() < 1e-9), "{shape:?} {out:?}");
        }
    }

    /// The linear tetrahedron stiffness is `V·BᵀCB`; its trace for the unit right tetrahedron is
    /// known in closed form: `tr K = V·Σ_i |∇N_i|²·(λ + 4μ)`... checked here against the direct
    /// formula with the constant gradients.
    #[test]
    fn tetra_stiffness_matches_closed_form() {
        let (e, nu) = (1000.0, 0.3);
        let (lambda, mu) = lame(e, nu);
        let k = element_stiffness(ElementShape::Tetrahedron, &tet(), e, nu).unwrap();
        let g = [[-1.0, -1.0, -1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let v = 1.0 / 6.0;
        // K_{ia,jb} = V(λ g_ia g_jb + μ g_ib g_ja + μ δab g_i·g_j)
        for i in 0..4 {
            for j in 0..4 {
                let dot: f64 = (0..3).map(|c| g[i][c] * g[j][c]).sum();
                for a in 0..3 {
                    for b in 0..3 {
                        let expect = v * (lambda * g[i][a] * g[j][b] + mu * g[i][b] * g[j][a] + if a == b { mu * dot } else { 0.0 });
                        let got = k[(3 * i + a) * 12 + 3 * j + b];
                        assert!((got - expect).abs() < 1e-9 * e, "{i}{a} {j}{b}: {got} vs {expect}");
                    }
                }
            }
        }
    }

    #[test]
    fn rotation_of_rigidly_rotated_element_is_that_rotation() {
        // rotation about (1,2,3) by 0.7 rad
        let axis = normalized([1.0, 2.0, 3.0]);
        let (s, c) = (0.7f64.sin(), 0.7f64.cos());
        let [x, y, z] = axis;
        let q: Mat3 = [
            [c + x * x * (1.0 - c), x * y * (1.0 - c) - z * s, x * z * (1.0 - c) + y * s],
            [y * x * (1.0 - c) + z * s, c + y * y * (1.0 - c), y * z * (1.0 - c) - x * s],
            [z * x * (1.0 - c) - y * s, z * y * (1.0 - c) + x * s, c + z * z * (1.0 - c)],
        ];
        for (shape, rest) in [(ElementShape::Hexahedron, unit_cube()), (ElementShape::Tetrahedron, tet())] {
            let moved: Vec<Vec3> = rest.iter().map(|p| add(rot(&q, *p), [0.5, -1.0, 2.0])).collect();
            for m in RotationMethod::available(shape) {
                if m == RotationMethod::Identity {
                    continue;
                }
                let f0 = initial_frame(m, &rest);
                let r = element_rotation(m, &f0, &moved, &rest);
                for i in 0..3 {
                    for j in 0..3 {
                        assert!((r[i][j] - q[i][j]).abs() < 1e-12, "{shape:?} {m:?}: {r:?}");
                    }
                }
            }
        }
    }
}
