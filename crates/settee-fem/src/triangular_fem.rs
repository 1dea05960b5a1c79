//! `TriangularFEMForceField`: SOFA's linear plane-stress membrane on the triangles of a topology,
//! with a corotational (`large`, default) or a world-frame (`small`) displacement measure
//! (forcefields-mappings spec §1.5, §1.7).
//!
//! **Rest data** (per triangle `(a, b, c)`, from the state's rest positions):
//! * `large`: the frame `R₀` of the rest triangle (rows `ex = ab/|ab|`, `ez = (ex × ac)/|…|`,
//!   `ey = ez × ex`), the rest local coordinates `b₀ = R₀·ab`, `c₀ = R₀·ac` (the origin is `a`)
//!   and the signed rest area `b₀ₓ·c₀ᵧ/2`;
//! * `small`: the world edge vectors `b₀ = ab`, `c₀ = ac` and the area `|ab × ac|/2`.
//!
//! Both can be given instead through `rotatedInitialElements` (3 coordinates per triangle) and,
//! for `large`, `initialTransformation` (one row-major 3×3 matrix per triangle; both must be set).
//! The material matrix is the plane-stress law `E/(1−ν²)·[[1,ν,0],[ν,1,0],[0,0,(1−ν)/2]]` times
//! the rest area.
//!
//! **`large` force** — the frame `R` of the current triangle gives the current local coordinates
//! `b = R·ab`, `c = R·ac`; the displacement (rest minus current) is
//! `D = (0, 0, b₀ₓ−bₓ, 0, c₀ₓ−cₓ, c₀ᵧ−cᵧ)`, the 6×3 strain–displacement matrix `J` is built from
//! the *current* local coordinates, strain `e = JᵀD` and stress `s = M·e` use only the
//! structurally non-zero terms, and the local nodal forces `F = J·s` are rotated back with `Rᵀ`.
//! `R` and `J` are kept for `add_dforce` and the matrix: `df −= k·Rᵀ·J·M·Jᵀ·(R·dx)ₓᵧ` with the
//! *absolute* rotated increments.
//!
//! **`small` force** — no rotation: `J` comes from the current world `x, y` edge components divided
//! by the 3D doubled area `|ab × ac|`, `D` from the `x, y` components of rest minus current
//! edges, and the forces act on `x, y` only.
//!
//! **Matrix** — for every triangle the 9×9 matrix `Rᵀ·expand(J·M·Jᵀ)·R` (block-diagonal `R`, the
//! stored frame; products in SOFA's `computeElementStiffnessMatrix` order), times `−k`. With `small`, SOFA never sets the
//! element rotation, which stays the zero matrix: its assembled stiffness is therefore zero, and so
//! is ours (matrix-free solvers use the real small-displacement stiffness).
//!
//! Degenerate triangles (`|det| < ε`) are errors, at init and during the simulation. Principal
//! stresses (`computePrincipalStress`) are diagnostics; the display Data are accepted.

use settee_core::role::Topology;
use settee_core::{Component, InitCtx, MatrixAccumulator, SimError, SimResult, StateId};

use settee_core::topology_change::{ElementData, ElementKind, Follow, TopologyChange};
use settee_core::ComponentId;

use settee_core::math::{at, cross, norm, sub};

use crate::common::{check_elements, check_indices, force_field_on_one_state, vec3_state};
use crate::decompose::transpose;
use crate::follow::{apply_deferred, change_error, check_aligned, rest_for};
use crate::hexa::mat_vec;
use crate::tetra_common::{material_lists, ElasticData};

type V3 = [f64; 3];
type M3 = [[f64; 3]; 3];
/// Strain–displacement matrix: rows `(a.x, a.y, b.x, b.y, c.x, c.y)`, columns `(exx, eyy, gxy)`.
pub type StrainDisplacement = [[f64; 3]; 6];

/// World-to-local rotation of triangle `(pa, pb, pc)`: rows `ex` along `ab`, `ey` in the plane,
/// `ez` normal.
pub use crate::tetra::rotation_large;

/// `J` of a triangle given in its local frame (`a` at the origin, `b = (bₓ, 0)`, `c = (cₓ, cᵧ)`),
/// or `None` when `|bₓ·cᵧ| < ε`.
pub fn strain_displacement_local(b: &V3, c: &V3) -> Option<StrainDisplacement> {
    let det = b[0] * c[1];
    if det.abs() < f64::EPSILON {
        return None;
    }
    let inv = 1.0 / det;
    let mut j = [[0.0; 3]; 6];
    j[0][0] = -c[1] * inv;
    j[1][2] = j[0][0];
    j[0][2] = (c[0] - b[0]) * inv;
    j[1][1] = j[0][2];
    j[2][0] = c[1] * inv;
    j[3][2] = j[2][0];
    j[2][2] = -c[0] * inv;
    j[3][1] = j[2][2];
    j[4][2] = b[0] * inv;
    j[5][1] = j[4][2];
    Some(j)
}

/// `J` from the world `x, y` components of the vertices, normalised by the 3D doubled area
/// `|ab × ac|`, or `None` when that area is below ε.
pub fn strain_displacement_global(pa: &V3, pb: &V3, pc: &V3) -> Option<StrainDisplacement> {
    let det = norm(cross(sub(*pb, *pa), sub(*pc, *pa)));
    if det.abs() < f64::EPSILON {
        return None;
    }
    let inv = 1.0 / det;
    let x13 = (pa[0] - pc[0]) * inv;
    let x21 = (pb[0] - pa[0]) * inv;
    let x32 = (pc[0] - pb[0]) * inv;
    let y12 = (pa[1] - pb[1]) * inv;
    let y23 = (pb[1] - pc[1]) * inv;
    let y31 = (pc[1] - pa[1]) * inv;
    Some([[y23, 0.0, x32], [0.0, x32, y23], [y31, 0.0, x13], [0.0, x13, y31], [y12, 0.0, x21], [0.0, x21, y12]])
}

/// `Jᵀ·D` restricted to the entries a local-frame `J` can have non-zero (SOFA's reduced product).
pub(crate) fn strain_reduced(j: &StrainDisplacement, d: &[f64; 6]) -> V3 {
    [
        j[0][0] * d[0] + j[2][0] * d[2],
        j[1][1] * d[1] + j[3][1] * d[3] + j[5][1] * d[5],
        j[0][2] * d[0] + j[1][2] * d[1] + j[2][2] * d[2] + j[3][2] * d[3] + j[4][2] * d[4],
    ]
}
/// Full `Jᵀ·D`.
pub(crate) fn strain_full(j: &StrainDisplacement, d: &[f64; 6]) -> V3 {
    let mut e = [0.0; 3];
    for (i, ei) in e.iter_mut().enumerate() {
        *ei = j[0][i] * d[0];
        for r in 1..6 {
            *ei += j[r][i] * d[r];
        }
    }
    e
}
/// `M·e` for an isotropic material (no normal–shear coupling).
pub(crate) fn stress_reduced(m: &M3, e: &V3) -> V3 {
    [m[0][0] * e[0] + m[0][1] * e[1], m[1][0] * e[0] + m[1][1] * e[1], m[2][2] * e[2]]
}
/// `J·s` restricted to the structurally non-zero entries of a local-frame `J`.
pub(crate) fn force_reduced(j: &StrainDisplacement, s: &V3) -> [f64; 6] {
    [
        j[0][0] * s[0] + j[0][2] * s[2],
        j[1][1] * s[1] + j[1][2] * s[2],
        j[2][0] * s[0] + j[2][2] * s[2],
        j[3][1] * s[1] + j[3][2] * s[2],
        j[4][2] * s[2],
        j[5][1] * s[1],
    ]
}
/// Full `J·s`.
pub(crate) fn force_full(j: &StrainDisplacement, s: &V3) -> [f64; 6] {
    let mut f = [0.0; 6];
    for (r, fr) in f.iter_mut().enumerate() {
        *fr = j[r][0] * s[0] + j[r][1] * s[1] + j[r][2] * s[2];
    }
    f
}

/// Displacement method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Method {
    #[default]
    Large,
    Small,
}

/// Per-triangle data (SOFA's `TriangleInformation`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TriangleInfo {
    /// Rest coordinates of `a, b, c` relative to `a` (local frame for `large`, world for `small`).
    pub rest: [V3; 3],
    /// Plane-stress material matrix times the rest area.
    pub material: M3,
    /// Strain–displacement matrix of the last force evaluation (of the rest shape before).
    pub j: StrainDisplacement,
    /// Local-to-world rotation of the last force evaluation (its columns are the frame axes);
    /// zero for `small`, as in SOFA.
    pub rotation: M3,
    /// Transpose of the rest frame (identity for `small`).
    pub initial_transformation: M3,
    /// Rest area (signed for `large`).
    pub area: f64,
    /// Strain `(exx, eyy, gxy)` and stress of the last force evaluation.
    pub strain: V3,
    pub stress: V3,
    /// Principal stress diagnostics (`computePrincipalStress`): the largest absolute principal
    /// stress and the Hosford criterion minus `criteriaValue`.
    pub max_stress: f64,
    pub difference_to_criteria: f64,
}

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        data = {
            /// Rayleigh damping coefficient related to stiffness
            rayleighStiffness: Real = "0",
            /// "large": corotational displacements (default); "small": small displacements in the world frame (anything else: large, with a warning)
            method: Str = "large",
            /// optional rest data: the three local rest coordinates of every triangle (replaces the rest positions)
            rotatedInitialElements: RealTuples(9),
            /// optional rest data (large, with rotatedInitialElements): the rest rotation of every triangle, row-major 3×3
            initialTransformation: RealTuples(9),
            /// Exponent in the Hosford yield criteria (diagnostics)
            hosfordExponant: Real = "1",
            /// Fracturable threshold used to draw fracturable triangles (diagnostics)
            criteriaValue: Real = "1e+15",
            /// Flag activating rendering of stress values as a color in each triangle (rendering only)
            showStressValue: Bool = "true",
            /// Flag activating rendering of stress directions within each triangle (rendering only)
            showStressVector: Bool = "false",
            /// Flag activating rendering of triangles to fracture (rendering only)
            showFracturableTriangles: Bool = "false",
            /// Compute principal stress for each triangle (diagnostics, no effect on the forces)
            computePrincipalStress: Bool = "false",
            /// older SOFA versions: fracture length (accepted, no effect)
            fractureMaxLength: Real = "0",
            /// older SOFA versions: von Mises stress diagnostics (accepted, no effect)
            computeVonMisesStress: Int = "0",
        },
        links = {
            /// topology whose triangles are the elements (default: the context topology)
            topology: Topology,
        },
        inherit = [ElasticData, Self],
    }
    /// Corotational Triangular finite elements for dynamic topology
    #[derive(Clone, Default)]
    pub struct TriangularFEMForceField {
        state: Option<StateId>,
        method: Method,
        triangles: Vec<[usize; 3]>,
        info: Vec<TriangleInfo>,
        rayleigh_stiffness: f64,
        principal_stress: bool,
        hosford: f64,
        criteria: f64,
        /// The material lists (per element, SOFA's `getYoungModulusInElement`), kept for the
        /// elements created by topological changes.
        young: Vec<f64>,
        poisson: Vec<f64>,
    }
}

impl TriangularFEMForceField {
    pub fn method(&self) -> Method {
        self.method
    }
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }
    pub fn info(&self) -> &[TriangleInfo] {
        &self.info
    }

    /// The rest data of triangle `i` with vertices `t` (SOFA's `initSmall` / `initLarge` then
    /// `computeMaterialStiffness`): from the rest positions `x0`, or from the given rest
    /// coordinates (and, for `large`, the given world-to-local rotation). `None` when degenerate.
    fn rest_info(&self, i: usize, t: &[usize; 3], x0: &[f64], given: Option<([V3; 3], Option<[V3; 3]>)>) -> Option<TriangleInfo> {
        let p = |k: usize| at(x0, t[k]);
        let mut ti = TriangleInfo::default();
        match self.method {
            Method::Small => {
                ti.initial_transformation = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
                ti.rest = match given {
                    Some((g, _)) => g,
                    None => [[0.0; 3], sub(p(1), p(0)), sub(p(2), p(0))],
                };
                ti.j = strain_displacement_global(&ti.rest[0], &ti.rest[1], &ti.rest[2])?;
                ti.area = norm(cross(ti.rest[1], ti.rest[2])) * 0.5;
            }
            Method::Large => {
                if let Some((g, Some(r))) = given {
                    // The given matrix is the world-to-local rotation; the element rotation
                    // itself is left unset (zero) until the first force evaluation, as in SOFA.
                    ti.initial_transformation = transpose(&r);
                    ti.rest = g;
                } else {
                    let (pa, pb, pc) = (p(0), p(1), p(2));
                    let r01 = rotation_large(pa, pb, pc);
                    ti.initial_transformation = transpose(&r01);
                    ti.rotation = ti.initial_transformation;
                    ti.rest = [[0.0; 3], mat_vec(&r01, sub(pb, pa)), mat_vec(&r01, sub(pc, pa))];
                }
                ti.j = strain_displacement_local(&ti.rest[1], &ti.rest[2])?;
                ti.area = ti.rest[1][0] * ti.rest[2][1] * 0.5;
            }
        }
        let e = self.young.get(i).copied().unwrap_or(self.young[0]);
        let nu = self.poisson.get(i).copied().unwrap_or(self.poisson[0]);
        let scale = (e / (1.0 - nu * nu)) * ti.area;
        let base = [[1.0, nu, 0.0], [nu, 1.0, 0.0], [0.0, 0.0, (1.0 - nu) * 0.5]];
        ti.material = base.map(|r| r.map(|v| v * scale));
        Some(ti)
    }

    /// Largest absolute principal stress and Hosford criterion of the stored stress (SOFA's
    /// `computePrincipalStress`, from the singular values of the 2×2 stress tensor).
    fn principal(&self, s: &V3) -> (f64, f64) {
        let mean = 0.5 * (s[0] + s[1]);
        let r = (0.25 * (s[0] - s[1]) * (s[0] - s[1]) + s[2] * s[2]).sqrt();
        let (l1, l2) = ((mean + r).abs(), (mean - r).abs());
        let (s0, s1) = if l1 >= l2 { (l1, l2) } else { (l2, l1) };
        let n = self.hosford;
        let crit = (0.5 * (s0.powf(n) + s1.powf(n) + (s0 - s1).abs().powf(n))).powf(1.0 / n) - self.criteria;
        (s0, crit)
    }

    fn accumulate_large(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        for (i, t) in self.triangles.iter().enumerate() {
            let ti = &mut self.info[i];
            let (pa, pb, pc) = (at(x, t[0]), at(x, t[1]), at(x, t[2]));
            let r02 = rotation_large(pa, pb, pc);
            let lb = mat_vec(&r02, sub(pb, pa));
            let lc = mat_vec(&r02, sub(pc, pa));
            let d = [0.0, 0.0, ti.rest[1][0] - lb[0], 0.0, ti.rest[2][0] - lc[0], ti.rest[2][1] - lc[1]];
            let j = strain_displacement_local(&lb, &lc).ok_or_else(|| degenerate(i, t))?;
            let strain = strain_reduced(&j, &d);
            let stress = stress_reduced(&ti.material, &strain);
            let fl = force_reduced(&j, &stress);
            let r20 = transpose(&r02);
            for (k, &v) in t.iter().enumerate() {
                let fw = mat_vec(&r20, [fl[2 * k], fl[2 * k + 1], 0.0]);
                for c in 0..3 {
                    f[3 * v + c] += fw[c];
                }
            }
            ti.j = j;
            ti.strain = strain;
            ti.stress = stress;
            ti.rotation = r20;
        }
        Ok(())
    }

    fn accumulate_small(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        for (i, t) in self.triangles.iter().enumerate() {
            let ti = &mut self.info[i];
            let pa = at(x, t[0]);
            let (db, dc) = (sub(at(x, t[1]), pa), sub(at(x, t[2]), pa));
            let (r1, r2) = (ti.rest[1], ti.rest[2]);
            let d = [0.0, 0.0, r1[0] - db[0], r1[1] - db[1], r2[0] - dc[0], r2[1] - dc[1]];
            let j = strain_displacement_global(&[0.0; 3], &db, &dc).ok_or_else(|| degenerate(i, t))?;
            let strain = strain_full(&j, &d);
            let stress = mat_vec(&ti.material, strain);
            let fl = force_full(&j, &stress);
            for (k, &v) in t.iter().enumerate() {
                f[3 * v] += fl[2 * k];
                f[3 * v + 1] += fl[2 * k + 1];
                f[3 * v + 2] += 0.0;
            }
            ti.j = j;
            ti.strain = strain;
            ti.stress = stress;
        }
        Ok(())
    }

    /// The 3×3 blocks `(n1, n2)` (over the triangle's nodes) of `−k·Rᵀ·expand(J·M·Jᵀ)·R`, where
    /// `Rᵀ = ti.rotation` is the stored local-to-world rotation.
    pub fn element_blocks(ti: &TriangleInfo, k: f64) -> [[M3; 3]; 3] {
        membrane_blocks(&ti.j, &ti.material, &ti.rotation, k)
    }
}

/// Adds one triangle's `df = k·K·dx` to `df` (SOFA's `applyStiffness` of the triangle
/// membranes): for `large`, the displacements are brought into the element frame by the
/// transpose of the local-to-world rotation `rot` and the forces back by `rot`; for `small` the
/// world components are used as they are (the z force stays zero).
#[allow(clippy::too_many_arguments)] // an element's matrices, its nodes, and the product's operands
pub(crate) fn membrane_dforce(method: Method, j: &StrainDisplacement, m: &M3, rot: &M3, t: [usize; 3], dx: &[f64], df: &mut [f64], k_factor: f64) {
    let node = |k: usize| at(dx, t[k]);
    match method {
        Method::Large => {
            let r02 = transpose(rot);
            let (u0, u1, u2) = (mat_vec(&r02, node(0)), mat_vec(&r02, node(1)), mat_vec(&r02, node(2)));
            let d = [u0[0], u0[1], u1[0], u1[1], u2[0], u2[1]];
            let strain = strain_reduced(j, &d);
            let stress = stress_reduced(m, &strain);
            let fl = force_reduced(j, &stress);
            for (k, &v) in t.iter().enumerate() {
                let fw = mat_vec(rot, [-fl[2 * k], -fl[2 * k + 1], 0.0]);
                for c in 0..3 {
                    df[3 * v + c] += fw[c] * k_factor;
                }
            }
        }
        Method::Small => {
            let (u0, u1, u2) = (node(0), node(1), node(2));
            let d = [u0[0], u0[1], u1[0], u1[1], u2[0], u2[1]];
            let strain = strain_full(j, &d);
            let stress = mat_vec(m, strain);
            let fl = force_full(j, &stress);
            for (k, &v) in t.iter().enumerate() {
                df[3 * v] += -fl[2 * k] * k_factor;
                df[3 * v + 1] += -fl[2 * k + 1] * k_factor;
                df[3 * v + 2] += 0.0 * k_factor;
            }
        }
    }
}

/// The 3×3 blocks `(n1, n2)` (over a triangle's nodes) of `−k·Rᵀ·expand(J·M·Jᵀ)·R` for the
/// strain–displacement matrix `j`, the material matrix `m` and the local-to-world rotation `rot`
/// (SOFA's `computeElementStiffnessMatrix`, shared by the triangle membranes).
pub(crate) fn membrane_blocks(j: &StrainDisplacement, m: &M3, rot: &M3, k: f64) -> [[M3; 3]; 3] {
    // J·M (6×3), then (J·M)·Jᵀ (6×6), each entry summed in index order.
    let mut jm = [[0.0; 3]; 6];
    for r in 0..6 {
        for c in 0..3 {
            jm[r][c] = j[r][0] * m[0][c] + j[r][1] * m[1][c] + j[r][2] * m[2][c];
        }
    }
    let mut jmj = [[0.0; 6]; 6];
    for r in 0..6 {
        for c in 0..6 {
            jmj[r][c] = jm[r][0] * j[c][0] + jm[r][1] * j[c][1] + jm[r][2] * j[c][2];
        }
    }
    let mut out = [[[[0.0; 3]; 3]; 3]; 3];
    for n1 in 0..3 {
        for n2 in 0..3 {
            // Left product R·Ke (the third row and column of the expanded block are zero).
            let mut s = [[0.0; 3]; 3];
            for a in 0..3 {
                for l in 0..3 {
                    let (k0, k1) = if l < 2 { (jmj[2 * n1][2 * n2 + l], jmj[2 * n1 + 1][2 * n2 + l]) } else { (0.0, 0.0) };
                    s[a][l] = rot[a][0] * k0 + rot[a][1] * k1 + rot[a][2] * 0.0;
                }
            }
            // Right product by Rᵀ, then the −k factor.
            for a in 0..3 {
                for c in 0..3 {
                    let v = s[a][0] * rot[c][0] + s[a][1] * rot[c][1] + s[a][2] * rot[c][2];
                    out[n1][n2][a][c] = -v * k;
                }
            }
        }
    }
    out
}

fn degenerate(i: usize, t: &[usize; 3]) -> SimError {
    SimError::new(format!("triangle {i} {t:?} is degenerate (null determinant of its strain-displacement matrix)"))
        .hint("a triangle collapsed to a segment or a point: check the mesh, or reduce the time step / loads")
}

impl Component for TriangularFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject")?;
        let mesh = cx.require_mesh()?;
        if mesh.triangles.is_empty() {
            cx.warn("no triangles found in the topology: no forces");
        }
        let n = cx.state_size(s);
        check_elements(cx, "triangle", &mesh.triangles, n)?;
        let (young, poisson) = material_lists(cx, ElasticData::YOUNG_MODULUS, ElasticData::POISSON_RATIO);
        let method_name = cx.data().get(Self::METHOD).to_string();
        self.method = match method_name.as_str() {
            "small" => Method::Small,
            "large" => Method::Large,
            other => {
                cx.warn(format!("method \"{other}\" is not possible (\"large\" or \"small\"): using large"));
                Method::Large
            }
        };
        let d = cx.data();
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        self.principal_stress = d.get(Self::COMPUTE_PRINCIPAL_STRESS);
        self.hosford = d.get(Self::HOSFORD_EXPONANT);
        self.criteria = d.get(Self::CRITERIA_VALUE);
        let given_rest = d.is_given(Self::ROTATED_INITIAL_ELEMENTS).then(|| d.get(Self::ROTATED_INITIAL_ELEMENTS).to_vec());
        let given_rot = d.is_given(Self::INITIAL_TRANSFORMATION).then(|| d.get(Self::INITIAL_TRANSFORMATION).to_vec());
        let nt = mesh.triangles.len();
        // SOFA reads the given rest data only for `small` (rotatedInitialElements) or for `large`
        // when both are set.
        let (given_rest, given_rot) = match (self.method, given_rest, given_rot) {
            (Method::Small, r, _) => (r, None),
            (Method::Large, Some(r), Some(g)) => (Some(r), Some(g)),
            (Method::Large, _, _) => (None, None),
        };
        for (name, v) in [("rotatedInitialElements", &given_rest), ("initialTransformation", &given_rot)] {
            if let Some(v) = v.as_ref().filter(|v| v.len() < 9 * nt) {
                return Err(cx
                    .error(format!("{name} has {} entries for {nt} triangles", v.len() / 9))
                    .hint("give 9 reals per triangle, in the order of the topology's triangles"));
            }
        }
        let x0 = cx.rest_or_position(s);
        self.triangles = mesh.triangles.clone();
        self.young = young;
        self.poisson = poisson;
        let mut info = Vec::with_capacity(nt);
        for (i, t) in self.triangles.iter().enumerate() {
            let tuple = |v: &[f64]| -> [V3; 3] {
                let q = &v[9 * i..9 * i + 9];
                [[q[0], q[1], q[2]], [q[3], q[4], q[5]], [q[6], q[7], q[8]]]
            };
            let given = given_rest.as_ref().map(|r| (tuple(r), given_rot.as_ref().map(|g| tuple(g))));
            let ti = self.rest_info(i, t, &x0, given).ok_or_else(|| {
                cx.error(format!("triangle {i} {t:?} is degenerate at rest (null determinant)"))
                    .hint("remove flat triangles from the mesh (or give non-degenerate rotatedInitialElements)")
            })?;
            info.push(ti);
        }
        self.info = info;
        self.state = Some(s);
        Ok(())
    }

    /// Triangles removed / added / renumbered: the per-triangle data follow (SOFA's
    /// `TriangleData` with `createTriangleInformation` for the new ones, computed from the rest
    /// positions). Point changes only renumber vertices, which the container's lists carry.
    fn topology_changed(&mut self, cx: &mut InitCtx, topology: ComponentId, changes: &[TopologyChange]) -> SimResult<Follow> {
        let Some(s) = self.state else { return Ok(Follow::NotConcerned) };
        let mesh = cx.scene.mesh_of(topology).ok_or_else(|| cx.error(format!("{} provides no mesh", cx.scene.entry(topology).label())))?;
        let triangles = mesh.triangles.clone();
        let mut data = ElementData::new(ElementKind::Triangle, std::mem::take(&mut self.info));
        let created = apply_deferred(&mut data, changes, TriangleInfo::default());
        self.info = std::mem::take(data.values_mut());
        let created = created.map_err(|e| change_error(cx, e))?;
        check_aligned(cx, ElementKind::Triangle, self.info.len(), triangles.len())?;
        let x0 = rest_for(cx, s, &triangles, &created, changes)?;
        self.triangles = triangles;
        for i in created {
            let t = self.triangles[i];
            self.info[i] = self.rest_info(i, &t, &x0, None).ok_or_else(|| {
                cx.error(format!("created triangle {i} {t:?} is degenerate at rest (null determinant)"))
                    .hint("the topological change created a flat triangle")
            })?;
        }
        Ok(Follow::Followed)
    }
}

force_field_on_one_state!(TriangularFEMForceField);

impl TriangularFEMForceField {
    fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        check_indices(&self.triangles, "triangle", x.len() / 3)?;
        match self.method {
            Method::Large => self.accumulate_large(x, f)?,
            Method::Small => self.accumulate_small(x, f)?,
        }
        if self.principal_stress {
            for i in 0..self.info.len() {
                let (m, c) = self.principal(&self.info[i].stress);
                self.info[i].max_stress = m;
                self.info[i].difference_to_criteria = c;
            }
        }
        Ok(())
    }

    fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, _b_factor: f64) -> SimResult {
        check_indices(&self.triangles, "triangle", dx.len() / 3)?;
        for (i, t) in self.triangles.iter().enumerate() {
            let ti = &self.info[i];
            membrane_dforce(self.method, &ti.j, &ti.material, &ti.rotation, *t, dx, df, k_factor);
        }
        Ok(())
    }

    /// Blocks `(n1, n2)` of every triangle in SOFA's order.
    fn k_matrix(&self, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let st = self.state.ok_or_else(|| SimError::new("TriangularFEMForceField used before init"))?;
        for (i, t) in self.triangles.iter().enumerate() {
            let blocks = Self::element_blocks(&self.info[i], k_factor);
            for n1 in 0..3 {
                for n2 in 0..3 {
                    m.add_block3(st, t[n1], st, t[n2], &blocks[n1][n2]);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
