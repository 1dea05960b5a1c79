//! `HexahedralFEMForceField`: SOFA's corotational hexahedron for dynamic topologies (a
//! `HexahedronData` per element, created and removed with the hexahedra of a
//! `HexahedronSetTopologyContainer`).
//!
//! Unlike [`crate::hexahedron_fem`] (Gauss-integrated isoparametric element), the element
//! stiffness is SOFA's closed form for an axis-aligned box (exact only for rectangular
//! hexahedra): with the rest edge lengths `l = n6 − n0` (per axis), `Jₘ = 2/lₘ`, the rest
//! "volume" `v = |n1−n0|·|n3−n0|·|n4−n0| / 8` and the reference integrals
//! `Aₘₗ(i, j) = ∫ ∂ₘNᵢ ∂ₗNⱼ` over `[−1, 1]³` of the trilinear shape functions, block `(i, j)` is
//! * diagonal entries: `v·Jₘ²·(u·Aₘₘ + w·Σ_{k≠m} Aₖₖ)`,
//! * off-diagonal entries: `v·Jₘ·Jₗ·(λ·Aₘₗ + w·Aₗₘ)`,
//!
//! where `u = M₀₀`, `λ = M₀₁`, `w = M₃₃` are entries of the isotropic material matrix, each
//! `(i, j)` block entry rounded to single precision as SOFA does, blocks `j > i` mirrored below
//! the diagonal (and the upper triangle of the diagonal blocks mirrored too).
//!
//! **`large`/`polar` force** — the element frame `R` (rows `ex, ey, ez` of the mean edges, or
//! the polar factor of the mean-edge matrix) at rest gives the rotated rest corners `R₀·X`; at
//! each evaluation the displacement `D = R₀·X − R·x` and the local force `F = K·D`, rotated back
//! with `Rᵀ`, which is kept for the differential `df −= k·Rᵀ·K·(R·dx)`.
//!
//! **Matrix** — SOFA assembles the block `R·Kᵢⱼ·Rᵀ` (with `R` the world-to-element frame), not
//! `Rᵀ·Kᵢⱼ·R` as its differential uses; the two agree while the element is not rotated. This
//! component assembles what SOFA assembles.

use settee_core::role::Topology;
use settee_core::topology_change::{ElementData, ElementKind, Follow, TopologyChange};
use settee_core::{Component, ComponentId, InitCtx, MatrixAccumulator, SimError, SimResult, StateId};

use settee_core::math::{norm, sub};

use crate::common::{check_elements, check_indices, force_field_on_one_state, gather, vec3_state};
use crate::decompose::transpose;
use crate::follow::{apply_deferred, change_error, check_aligned, rest_for};
use crate::hexa::{mat_t_vec, mat_vec, rotation_large, rotation_polar, Mat3, Vec3, CORNER_SIGNS};
use crate::tetra_common::{material_lists, per_element, ElasticData};

/// Rotation method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    #[default]
    Large,
    Polar,
}

/// Per-hexahedron data (SOFA's `HexahedronInformation`).
#[derive(Clone, Debug, PartialEq)]
pub struct HexaInfo {
    /// Rest corners in the rest element frame.
    pub rotated_rest: [Vec3; 8],
    /// Element-to-world rotation of the last force evaluation (zero before the first one).
    pub rotation: Mat3,
    /// 24×24 element stiffness (row-major).
    pub stiffness: Box<[[f64; 24]; 24]>,
}

impl Default for HexaInfo {
    fn default() -> Self {
        HexaInfo { rotated_rest: [[0.0; 3]; 8], rotation: [[0.0; 3]; 3], stiffness: Box::new([[0.0; 24]; 24]) }
    }
}

/// `∫₋₁¹ (a₀ + a₁t)(b₀ + b₁t) dt`.
fn line_integral(a: [f64; 2], b: [f64; 2]) -> f64 {
    2.0 * a[0] * b[0] + (2.0 / 3.0) * a[1] * b[1]
}

/// `∫ ∂ₘNᵢ ∂ₗNⱼ` over the reference cube, `Nᵢ = Π_k (1 + sᵢₖ tₖ)/2`.
fn reference_integral(i: usize, m: usize, j: usize, l: usize) -> f64 {
    (0..3)
        .map(|k| {
            // Along axis k each factor is linear in t: derivative s/2 on the derived axis, else
            // (1 + s t)/2.
            let f = |c: usize, d: usize| -> [f64; 2] {
                let s = CORNER_SIGNS[c][k];
                if d == k {
                    [s * 0.5, 0.0]
                } else {
                    [0.5, s * 0.5]
                }
            };
            line_integral(f(i, m), f(j, l))
        })
        .product()
}

/// The isotropic material matrix entries `(M₀₀, M₀₁, M₃₃)` (SOFA's `computeMaterialStiffness`).
fn material(young: f64, poisson: f64) -> (f64, f64, f64) {
    let scale = (young * (1.0 - poisson)) / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
    let off = poisson / (1.0 - poisson);
    let shear = (1.0 - 2.0 * poisson) / (2.0 * (1.0 - poisson));
    (scale, off * scale, shear * scale)
}

/// The 3×3 block `(i, j)` of the element stiffness before the volume factor.
fn block(i: usize, j: usize, jac: Vec3, u: f64, lambda: f64, w: f64) -> Mat3 {
    let mut k = [[0.0; 3]; 3];
    for m in 0..3 {
        for l in 0..3 {
            let v = if m == l {
                let others: f64 = (0..3).filter(|&q| q != m).map(|q| reference_integral(i, q, j, q)).sum();
                jac[m] * jac[m] * (u * reference_integral(i, m, j, m) + w * others)
            } else {
                jac[m] * jac[l] * (lambda * reference_integral(i, m, j, l) + w * reference_integral(i, l, j, m))
            };
            // SOFA stores each entry through a single-precision cast.
            k[m][l] = v as f32 as f64;
        }
    }
    k
}

/// SOFA's `computeElementStiffness` for rest corners `nodes`.
pub fn element_stiffness(nodes: &[Vec3; 8], young: f64, poisson: f64) -> Box<[[f64; 24]; 24]> {
    let (u, lambda, w) = material(young, poisson);
    let l = sub(nodes[6], nodes[0]);
    let jac = [2.0 / l[0], 2.0 / l[1], 2.0 / l[2]];
    let vol = (norm(sub(nodes[1], nodes[0])) * norm(sub(nodes[3], nodes[0])) * norm(sub(nodes[4], nodes[0]))) / 8.0;
    let mut k = Box::new([[0.0; 24]; 24]);
    for i in 0..8 {
        for j in i..8 {
            let b = block(i, j, jac, u, lambda, w);
            for m in 0..3 {
                for l in 0..3 {
                    k[3 * i + m][3 * j + l] += vol * b[m][l];
                }
            }
        }
    }
    for a in 0..24 {
        for b in a + 1..24 {
            k[b][a] = k[a][b];
        }
    }
    k
}

fn frame(method: Method, nodes: &[Vec3; 8]) -> Mat3 {
    match method {
        Method::Large => rotation_large(nodes),
        Method::Polar => rotation_polar(nodes),
    }
}

/// `K·d` with each row summed in column order.
fn stiffness_times(k: &[[f64; 24]; 24], d: &[f64; 24]) -> [f64; 24] {
    let mut f = [0.0; 24];
    for (r, fr) in f.iter_mut().enumerate() {
        let mut s = 0.0;
        for c in 0..24 {
            s += k[r][c] * d[c];
        }
        *fr = s;
    }
    f
}

/// The Data of `HexahedralFEMForceField` after the [`ElasticData`], which
/// `HexahedralFEMForceFieldAndMass` has too (its `init` runs this one's, which reads them).
#[settee_core::data_group(data = {
    /// "large" (frame of the mean edges) or "polar" (polar decomposition) displacements
    method: Str = "large",
    /// Rayleigh damping coefficient related to stiffness
    rayleighStiffness: Real = "0",
    /// internal hexahedron data (not readable)
    hexahedronInfo: Str,
})]
pub struct HexahedralFemData;

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        links = {
            /// topology whose hexahedra are the elements (default: the context topology)
            topology: Topology,
        },
        inherit = [ElasticData, HexahedralFemData],
    }
    /// Hexahedral finite elements for dynamic topologies (corotational, SOFA's closed-form box stiffness)
    #[derive(Clone, Default)]
    pub struct HexahedralFEMForceField {
        state: Option<StateId>,
        method: Method,
        hexahedra: Vec<[usize; 8]>,
        info: Option<ElementData<HexaInfo>>,
        young: Vec<f64>,
        poisson: Vec<f64>,
        rayleigh_stiffness: f64,
    }
}

impl HexahedralFEMForceField {
    pub fn hexahedra(&self) -> &[[usize; 8]] {
        &self.hexahedra
    }
    pub fn info(&self) -> &[HexaInfo] {
        self.info.as_ref().map(|d| d.values()).unwrap_or(&[])
    }

    /// SOFA's `initLarge` / `initPolar` for element `i` with vertices `h`.
    fn rest_info(&self, i: usize, h: &[usize; 8], x0: &[f64]) -> HexaInfo {
        let nodes = gather(x0, h);
        let r = frame(self.method, &nodes);
        let e = per_element(&self.young, i, 5000.0);
        let nu = per_element(&self.poisson, i, 0.45);
        HexaInfo { rotated_rest: nodes.map(|p| mat_vec(&r, p)), rotation: [[0.0; 3]; 3], stiffness: element_stiffness(&nodes, e, nu) }
    }
}

impl Component for HexahedralFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject")?;
        let mesh = cx.require_mesh()?;
        if mesh.hexahedra.is_empty() {
            return Err(cx.error("the topology has no hexahedra").hint("HexahedralFEMForceField needs a topology with hexahedra"));
        }
        let n = cx.state_size(s);
        check_elements(cx, "hexahedron", &mesh.hexahedra, n)?;
        let (young, poisson) = material_lists(cx, ElasticData::YOUNG_MODULUS, ElasticData::POISSON_RATIO);
        let d = cx.data();
        self.method = match d.get(HexahedralFemData::METHOD) {
            "large" => Method::Large,
            "polar" => Method::Polar,
            other => {
                let other = other.to_string();
                cx.warn(format!("method \"{other}\" is not possible (\"large\" or \"polar\"): using large"));
                Method::Large
            }
        };
        self.rayleigh_stiffness = cx.data().get(HexahedralFemData::RAYLEIGH_STIFFNESS);
        self.young = young;
        self.poisson = poisson;
        let x0 = cx.rest_or_position(s);
        self.hexahedra = mesh.hexahedra.clone();
        let info = self.hexahedra.iter().enumerate().map(|(i, h)| self.rest_info(i, h, &x0)).collect();
        self.info = Some(ElementData::new(ElementKind::Hexahedron, info));
        self.state = Some(s);
        Ok(())
    }

    /// Hexahedra removed / added / renumbered: the per-hexahedron data follow (SOFA's
    /// `HexahedronData` with `createHexahedronInformation`, from the rest positions).
    fn topology_changed(&mut self, cx: &mut InitCtx, topology: ComponentId, changes: &[TopologyChange]) -> SimResult<Follow> {
        let (Some(s), Some(info)) = (self.state, self.info.as_mut()) else { return Ok(Follow::NotConcerned) };
        let mesh = cx.scene.mesh_of(topology).ok_or_else(|| cx.error(format!("{} provides no mesh", cx.scene.entry(topology).label())))?;
        let hexahedra = mesh.hexahedra.clone();
        let created = apply_deferred(info, changes, HexaInfo::default()).map_err(|e| change_error(cx, e))?;
        check_aligned(cx, ElementKind::Hexahedron, info.len(), hexahedra.len())?;
        let x0 = rest_for(cx, s, &hexahedra, &created, changes)?;
        self.hexahedra = hexahedra;
        for i in created {
            let h = self.hexahedra[i];
            let v = self.rest_info(i, &h, &x0);
            if let Some(d) = self.info.as_mut() {
                d.values_mut()[i] = v;
            }
        }
        Ok(Follow::Followed)
    }
}

force_field_on_one_state!(HexahedralFEMForceField);

impl HexahedralFEMForceField {
    fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        check_indices(&self.hexahedra, "hexahedron", x.len() / 3)?;
        let Some(info) = self.info.as_mut() else { return Ok(()) };
        for (h, hi) in self.hexahedra.iter().zip(info.values_mut().iter_mut()) {
            let nodes = gather(x, h);
            let r = frame(self.method, &nodes);
            hi.rotation = transpose(&r);
            let mut d = [0.0; 24];
            for k in 0..8 {
                let cur = mat_vec(&r, nodes[k]);
                for c in 0..3 {
                    d[3 * k + c] = hi.rotated_rest[k][c] - cur[c];
                }
            }
            let fl = stiffness_times(&hi.stiffness, &d);
            for (k, &v) in h.iter().enumerate() {
                let fw = mat_vec(&hi.rotation, [fl[3 * k], fl[3 * k + 1], fl[3 * k + 2]]);
                for c in 0..3 {
                    f[3 * v + c] += fw[c];
                }
            }
        }
        Ok(())
    }

    fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, _b_factor: f64) -> SimResult {
        check_indices(&self.hexahedra, "hexahedron", dx.len() / 3)?;
        let Some(info) = self.info.as_ref() else { return Ok(()) };
        for (h, hi) in self.hexahedra.iter().zip(info.values()) {
            let mut d = [0.0; 24];
            for (k, &v) in h.iter().enumerate() {
                let l = mat_t_vec(&hi.rotation, [dx[3 * v], dx[3 * v + 1], dx[3 * v + 2]]);
                d[3 * k..3 * k + 3].copy_from_slice(&[l[0] * k_factor, l[1] * k_factor, l[2] * k_factor]);
            }
            let fl = stiffness_times(&hi.stiffness, &d);
            for (k, &v) in h.iter().enumerate() {
                let fw = mat_vec(&hi.rotation, [fl[3 * k], fl[3 * k + 1], fl[3 * k + 2]]);
                for c in 0..3 {
                    df[3 * v + c] -= fw[c];
                }
            }
        }
        Ok(())
    }

    fn k_matrix(&self, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let st = self.state.ok_or_else(|| SimError::new("HexahedralFEMForceField used before init"))?;
        let Some(info) = self.info.as_ref() else { return Ok(()) };
        for (h, hi) in self.hexahedra.iter().zip(info.values()) {
            let rot = &hi.rotation;
            for n1 in 0..8 {
                for n2 in 0..8 {
                    let mut kb = [[0.0; 3]; 3];
                    for (a, row) in kb.iter_mut().enumerate() {
                        for (b, v) in row.iter_mut().enumerate() {
                            *v = hi.stiffness[3 * n1 + a][3 * n2 + b];
                        }
                    }
                    // rotationᵀ · Kb · rotation, as SOFA's `multTranspose` then product.
                    let mut t = [[0.0; 3]; 3];
                    for a in 0..3 {
                        for b in 0..3 {
                            t[a][b] = rot[0][a] * kb[0][b] + rot[1][a] * kb[1][b] + rot[2][a] * kb[2][b];
                        }
                    }
                    let mut out = [[0.0; 3]; 3];
                    for a in 0..3 {
                        for b in 0..3 {
                            out[a][b] = -(t[a][0] * rot[0][b] + t[a][1] * rot[1][b] + t[a][2] * rot[2][b]) * k_factor;
                        }
                    }
                    m.add_block3(st, h[n1], st, h[n2], &out);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
