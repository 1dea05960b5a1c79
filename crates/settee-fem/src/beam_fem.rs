//! `BeamFEMForceField` (Rigid3d): 6-DOF beam elements on the edges of a line topology
//! (spec forcefields-mappings §1.10).
//!
//! Each edge `(a, b)` is a straight beam of circular (possibly hollow) section. Its 12×12 local
//! stiffness is the classical one of a 3D frame element with the shear parameters set to zero
//! (Euler–Bernoulli: SOFA never gives the effective shear areas a value). The element frame is
//! the *current* orientation of node `a`:
//!
//! * `add_force`: the translation of `b` relative to `a`, expressed in `a`'s frame, minus the
//!   same quantity at rest; the relative rotation of `b` with respect to `a`, compared with the
//!   rest relative rotation, as a rotation vector. The local force `K·u` is turned back to the
//!   world frame with `a`'s orientation and subtracted from both nodes. The normalised
//!   orientation of `a` is kept as the beam frame for the differentials.
//! * `add_dforce` / `add_k_to_matrix`: `K` rotated by the kept beam frame, block by block.
//!
//! Every expression keeps the evaluation order of SOFA's implementation (products, sums and the
//! quaternion helpers) so that forces agree to the last bit.

// Dense 3×3, 6×6 and 12×12 block arithmetic is written with explicit indices, as the formulas.
#![allow(clippy::needless_range_loop)]

use std::f64::consts::PI;

use settee_core::role::Topology;
use settee_core::types::{quat_mul, quat_normalize, quat_rotate, Quat};
use settee_core::{Component, InitCtx, Layout, MatrixAccumulator, SimError, SimResult, StateId};

use crate::common::force_field_on_one_state;
use crate::tetra_common::material_lists;

/// A 12×12 matrix, row-major.
pub type Mat12 = [[f64; 12]; 12];
type M3 = [[f64; 3]; 3];

/// Section and material of one beam, as SOFA's `BeamInfo` computes them.
#[derive(Clone, Debug, PartialEq)]
pub struct BeamSection {
    pub young: f64,
    pub poisson: f64,
    pub length: f64,
    pub shear_modulus: f64,
    pub iy: f64,
    pub iz: f64,
    /// Polar moment `Iy + Iz`.
    pub j: f64,
    pub area: f64,
}

impl BeamSection {
    pub fn new(young: f64, length: f64, poisson: f64, r: f64, r_inner: f64) -> BeamSection {
        let shear_modulus = young / (2.0 * (1.0 + poisson));
        let iz = PI * (r * r * r * r - r_inner * r_inner * r_inner * r_inner) / 4.0;
        let iy = iz;
        BeamSection { young, poisson, length, shear_modulus, iy, iz, j: iz + iy, area: PI * (r * r - r_inner * r_inner) }
    }

    /// The local stiffness matrix (node a then node b; translations then rotations; x along
    /// the beam). The shear parameters are zero: effective shear areas are never set.
    pub fn stiffness(&self) -> Mat12 {
        let (l, e, g) = (self.length, self.young, self.shear_modulus);
        let (phiy, phiz) = (0.0f64, 0.0f64);
        let l2 = l * l;
        let l3 = l2 * l;
        let eiy = e * self.iy;
        let eiz = e * self.iz;
        let mut k = [[0.0; 12]; 12];
        k[0][0] = e * self.area / l;
        k[6][6] = k[0][0];
        k[1][1] = 12.0 * eiz / (l3 * (1.0 + phiy));
        k[7][7] = k[1][1];
        k[2][2] = 12.0 * eiy / (l3 * (1.0 + phiz));
        k[8][8] = k[2][2];
        k[3][3] = g * self.j / l;
        k[9][9] = k[3][3];
        k[4][4] = (4.0 + phiz) * eiy / (l * (1.0 + phiz));
        k[10][10] = k[4][4];
        k[5][5] = (4.0 + phiy) * eiz / (l * (1.0 + phiy));
        k[11][11] = k[5][5];

        k[4][2] = -6.0 * eiy / (l2 * (1.0 + phiz));
        k[5][1] = 6.0 * eiz / (l2 * (1.0 + phiy));
        k[6][0] = -k[0][0];
        k[7][1] = -k[1][1];
        k[7][5] = -k[5][1];
        k[8][2] = -k[2][2];
        k[8][4] = -k[4][2];
        k[9][3] = -k[3][3];
        k[10][2] = k[4][2];
        k[10][4] = (2.0 - phiz) * eiy / (l * (1.0 + phiz));
        k[10][8] = -k[4][2];
        k[11][1] = k[5][1];
        k[11][5] = (2.0 - phiy) * eiz / (l * (1.0 + phiy));
        k[11][7] = -k[5][1];
        for i in 0..=10 {
            for j in i + 1..12 {
                k[i][j] = k[j][i];
            }
        }
        k
    }
}

/// One beam element.
#[derive(Clone, Debug)]
pub struct Beam {
    pub a: usize,
    pub b: usize,
    pub section: BeamSection,
    pub k_loc: Mat12,
    /// The beam frame: the normalised orientation of node `a` at the last `add_force` (before
    /// that, the mid-beam orientation computed at init).
    pub quat: Quat,
}

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        templates = ["Rigid3d"],
        default_template = "Rigid3d",
        data = {
            /// FEM Poisson Ratio in Hooke's law [0,0.5[
            poissonRatio: Reals = "0.45",
            /// FEM Young's Modulus in Hooke's law
            youngModulus: Reals = "5000",
            /// radius of the section
            radius: Real = "0.1",
            /// inner radius of the section for hollow beams
            radiusInner: Real = "0",
            /// apply the forcefield to a subset list of beam segments. If no segment defined, forcefield applies to the whole topology
            listSegment: Indices,
            /// use symmetric assembly of the matrix K
            useSymmetricAssembly: Bool = "false",
            /// Rayleigh damping coefficient related to stiffness (> 0)
            rayleighStiffness: Real = "0",
        },
        links = {
            /// link to the topology container (its edges are the beams; default: the context topology)
            topology: Topology,
        },
    }
    /// Beam finite elements (6-DOF rigid nodes) on the edges of a line topology, corotational in the frame of each beam's first node.
    ///
    /// The force field.
    #[derive(Clone, Default)]
    pub struct BeamFEMForceField {
        state: Option<StateId>,
        /// Rest coordinates (7 reals per node).
        rest: Vec<f64>,
        pub beams: Vec<Beam>,
        /// The indices of the beams that act (all of them, or `listSegment`), in SOFA's order.
        active: Vec<usize>,
        symmetric_assembly: bool,
        rayleigh_stiffness: f64,
    }
}

// ----- quaternion helpers with SOFA's exact arithmetic -------------------------------------------

#[inline]
fn quat_at(x: &[f64], i: usize) -> Quat {
    [x[7 * i + 3], x[7 * i + 4], x[7 * i + 5], x[7 * i + 6]]
}

#[inline]
fn center(x: &[f64], i: usize) -> [f64; 3] {
    [x[7 * i], x[7 * i + 1], x[7 * i + 2]]
}

#[inline]
fn sub3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Rotation by the conjugate (no normalisation), as SOFA's `inverseRotate`.
#[inline]
fn inverse_rotate(q: Quat, v: [f64; 3]) -> [f64; 3] {
    quat_rotate([-q[0], -q[1], -q[2], q[3]], v)
}

/// SOFA's `Quat::inverse`: the conjugate divided by the norm.
fn quat_inverse(q: Quat) -> Quat {
    let norm = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if norm != 0.0 {
        let s = 1.0 / norm;
        [-q[0] * s, -q[1] * s, -q[2] * s, q[3] * s]
    } else {
        [0.0; 4]
    }
}

/// `b⁻¹·a`, with `a` flipped first when it lies in the other hemisphere from `b`.
fn q_diff(mut a: Quat, b: Quat) -> Quat {
    if a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] < 0.0 {
        for c in a.iter_mut() {
            *c = -*c;
        }
    }
    quat_mul(quat_inverse(b), a)
}

fn normalized(mut q: Quat) -> Quat {
    quat_normalize(&mut q);
    q
}

/// SOFA's `quatToRotationVector`: axis times angle, with the `asin` branch for small angles.
fn rotation_vector(q: Quat) -> [f64; 3] {
    let mut q = normalized(q);
    if q[3] < 0.0 {
        for c in q.iter_mut() {
            *c *= -1.0;
        }
    }
    let (s, angle) = if q[3] > 0.999 {
        let s = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
        (s, 2.0 * s.asin())
    } else {
        let half = q[3].acos();
        (half.sin(), 2.0 * half)
    };
    if s < f64::EPSILON {
        [0.0; 3]
    } else {
        [q[0] / s * angle, q[1] / s * angle, q[2] / s * angle]
    }
}

/// SOFA's `axisToQuat` (the axis is normalised; a null axis gives the identity).
fn axis_to_quat(a: [f64; 3], phi: f64) -> Quat {
    let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    if n < f64::EPSILON {
        return [0.0, 0.0, 0.0, 1.0];
    }
    let a = [a[0] / n, a[1] / n, a[2] / n];
    let (sp, cp) = ((phi / 2.0).sin(), (phi / 2.0).cos());
    [a[0] * sp, a[1] * sp, a[2] * sp, cp]
}

/// SOFA's quaternion → rotation matrix.
fn rotation_matrix(q: Quat) -> M3 {
    [
        [1.0 - 2.0 * (q[1] * q[1] + q[2] * q[2]), 2.0 * (q[0] * q[1] - q[2] * q[3]), 2.0 * (q[2] * q[0] + q[1] * q[3])],
        [2.0 * (q[0] * q[1] + q[2] * q[3]), 1.0 - 2.0 * (q[2] * q[2] + q[0] * q[0]), 2.0 * (q[1] * q[2] - q[0] * q[3])],
        [2.0 * (q[2] * q[0] - q[1] * q[3]), 2.0 * (q[1] * q[2] + q[0] * q[3]), 1.0 - 2.0 * (q[1] * q[1] + q[0] * q[0])],
    ]
}

fn mul3(a: &M3, b: &M3) -> M3 {
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    r
}

fn transpose3(a: &M3) -> M3 {
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = a[j][i];
        }
    }
    r
}

/// `K·d` with the sums in column order.
fn mul12(k: &Mat12, d: &[f64; 12]) -> [f64; 12] {
    let mut r = [0.0; 12];
    for (ri, row) in r.iter_mut().zip(k) {
        let mut s = row[0] * d[0];
        for j in 1..12 {
            s += row[j] * d[j];
        }
        *ri = s;
    }
    r
}

/// The mid-beam orientation of SOFA's `initLarge`: `a`'s orientation turned by half the relative
/// rotation of `b`.
fn mid_beam_quat(qa: Quat, qb: Quat) -> Quat {
    let qa = normalized(qa);
    let qb = normalized(qb);
    let dq = normalized(q_diff(qb, qa));
    let w = rotation_vector(dq);
    let theta = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
    if theta > 0.0000001 {
        let wn = [w[0] / theta, w[1] / theta, w[2] / theta];
        normalized(quat_mul(qa, axis_to_quat(wn, theta / 2.0)))
    } else {
        qa
    }
}

impl BeamFEMForceField {
    /// Builds the beams directly (tests): rest coordinates (7 per node) and edges; every beam
    /// acts.
    pub fn build(state: StateId, rest: &[f64], edges: &[[usize; 2]], young: f64, poisson: f64, radius: f64, radius_inner: f64) -> BeamFEMForceField {
        let mut ff = BeamFEMForceField { state: Some(state), rest: rest.to_vec(), ..Default::default() };
        for &[a, b] in edges {
            ff.beams.push(make_beam(rest, a, b, young, poisson, radius, radius_inner));
        }
        ff.active = (0..ff.beams.len()).collect();
        ff
    }

    /// `f += F(x)` for beam `i`.
    fn accumulate_force(&mut self, f: &mut [f64], x: &[f64], i: usize) {
        let Beam { a, b, .. } = self.beams[i];
        let x0 = &self.rest;
        let qa = quat_at(x, a);
        self.beams[i].quat = normalized(qa);

        let p0 = inverse_rotate(quat_at(x0, a), sub3(center(x0, b), center(x0, a)));
        let p = inverse_rotate(qa, sub3(center(x, b), center(x, a)));
        let u = sub3(p, p0);
        let mut depl = [0.0; 12];
        depl[6] = u[0];
        depl[7] = u[1];
        depl[8] = u[2];

        let dq0 = normalized(q_diff(quat_at(x0, b), quat_at(x0, a)));
        let dq = normalized(q_diff(quat_at(x, b), qa));
        let t = normalized(q_diff(dq, dq0));
        let r = rotation_vector(t);
        depl[9] = r[0];
        depl[10] = r[1];
        depl[11] = r[2];

        let force = mul12(&self.beams[i].k_loc, &depl);
        for (node, off) in [(a, 0), (b, 6)] {
            let f1 = quat_rotate(qa, [force[off], force[off + 1], force[off + 2]]);
            let f2 = quat_rotate(qa, [force[off + 3], force[off + 4], force[off + 5]]);
            for c in 0..3 {
                f[6 * node + c] += -f1[c];
                f[6 * node + 3 + c] += -f2[c];
            }
        }
    }

    /// `df += fact·(−R K Rᵀ)·dx` for beam `i`, with the kept beam frame.
    fn apply_stiffness(&mut self, df: &mut [f64], dx: &[f64], i: usize, fact: f64) {
        let beam = &mut self.beams[i];
        quat_normalize(&mut beam.quat);
        let q = beam.quat;
        let (a, b) = (beam.a, beam.b);
        let mut local = [0.0; 12];
        for (k, node) in [a, b].into_iter().enumerate() {
            let lin = inverse_rotate(q, [dx[6 * node], dx[6 * node + 1], dx[6 * node + 2]]);
            let ang = inverse_rotate(q, [dx[6 * node + 3], dx[6 * node + 4], dx[6 * node + 5]]);
            local[6 * k..6 * k + 3].copy_from_slice(&lin);
            local[6 * k + 3..6 * k + 6].copy_from_slice(&ang);
        }
        let lf = mul12(&beam.k_loc, &local);
        for (k, node) in [a, b].into_iter().enumerate() {
            let f1 = quat_rotate(q, [lf[6 * k], lf[6 * k + 1], lf[6 * k + 2]]);
            let f2 = quat_rotate(q, [lf[6 * k + 3], lf[6 * k + 4], lf[6 * k + 5]]);
            for c in 0..3 {
                df[6 * node + c] += -f1[c] * fact;
                df[6 * node + 3 + c] += -f2[c] * fact;
            }
        }
    }

    /// The world-frame 12×12 stiffness `R K Rᵀ` (3×3 blocks) of beam `i`, symmetrised block by
    /// block when `useSymmetricAssembly` is set.
    pub fn world_stiffness(&self, i: usize) -> Mat12 {
        let beam = &self.beams[i];
        let r = rotation_matrix(normalized(beam.quat));
        let rt = transpose3(&r);
        let block = |x1: usize, y1: usize| -> M3 {
            let mut m = [[0.0; 3]; 3];
            for (i, row) in m.iter_mut().enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = beam.k_loc[x1 + i][y1 + j];
                }
            }
            mul3(&mul3(&r, &m), &rt)
        };
        let mut k = [[0.0; 12]; 12];
        if self.symmetric_assembly {
            for x1 in (0..12).step_by(3) {
                for y1 in (x1..12).step_by(3) {
                    let m = block(x1, y1);
                    for i in 0..3 {
                        for j in 0..3 {
                            k[i + x1][j + y1] += m[i][j];
                            k[j + y1][i + x1] += m[i][j];
                        }
                    }
                    if x1 == y1 {
                        for row in k.iter_mut().skip(x1).take(3) {
                            for v in row.iter_mut().skip(y1).take(3) {
                                *v *= 0.5;
                            }
                        }
                    }
                }
            }
        } else {
            for x1 in (0..12).step_by(3) {
                for y1 in (0..12).step_by(3) {
                    let m = block(x1, y1);
                    for i in 0..3 {
                        for j in 0..3 {
                            k[x1 + i][y1 + j] = m[i][j];
                        }
                    }
                }
            }
        }
        k
    }
}

fn make_beam(rest: &[f64], a: usize, b: usize, young: f64, poisson: f64, radius: f64, radius_inner: f64) -> Beam {
    let d = sub3(center(rest, a), center(rest, b));
    let length = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    let section = BeamSection::new(young, length, poisson, radius, radius_inner);
    let k_loc = section.stiffness();
    Beam { a, b, section, k_loc, quat: [0.0, 0.0, 0.0, 1.0] }
}

impl Component for BeamFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        let layout = cx.state_layout(s);
        if layout != Layout::Rigid3 {
            return Err(cx
                .error(format!("the mechanical state has template {}, but beam elements need Rigid3d nodes", layout.name()))
                .hint("attach BeamFEMForceField to a MechanicalObject with template=\"Rigid3\""));
        }
        let mesh = cx.require_mesh()?;
        if mesh.edges.is_empty() {
            return Err(cx
                .error("the topology has no edges: there is no beam to simulate")
                .hint("give the beams as lines of a MeshTopology, e.g. <MeshTopology lines=\"0 1 1 2\"/>"));
        }
        let n = cx.state_size(s);
        if let Some((k, e)) = mesh.edges.iter().enumerate().find(|(_, e)| e.iter().any(|&i| i >= n)) {
            return Err(cx
                .error(format!("edge {k} {e:?} refers to a node beyond the {n} DOFs of the mechanical state"))
                .hint("the line topology and the Rigid3 MechanicalObject must describe the same nodes"));
        }
        let rest = cx.rest_or_position(s);
        let pos = cx.read_vec(s, settee_core::VecId::POSITION).to_vec();
        if rest.len() < 7 * n || pos.len() < 7 * n {
            return Err(cx.error(format!("the mechanical state has {} rest coordinates for {n} DOFs", rest.len() / 7)));
        }
        let (young, poisson) = material_lists(cx, Self::YOUNG_MODULUS, Self::POISSON_RATIO);
        let d = cx.data();
        let radius = d.get(Self::RADIUS);
        let radius_inner = d.get(Self::RADIUS_INNER);
        self.symmetric_assembly = d.get(Self::USE_SYMMETRIC_ASSEMBLY);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        let list: Vec<usize> = d.get(Self::LIST_SEGMENT).to_vec();
        self.active = (0..mesh.edges.len()).collect();
        if !list.is_empty() {
            if list.iter().all(|&i| i < mesh.edges.len()) {
                self.active = list;
            } else {
                cx.warn(format!(
                    "listSegment refers to segments beyond the {} edges of the topology: the force field applies to every edge",
                    mesh.edges.len()
                ));
            }
        }
        self.state = Some(s);
        self.beams.clear();
        for (i, &[a, b]) in mesh.edges.iter().enumerate() {
            let e = young.get(i).copied().unwrap_or(young[0]);
            let nu = poisson.get(i).copied().unwrap_or(poisson[0]);
            let mut beam = make_beam(&rest, a, b, e, nu, radius, radius_inner);
            if beam.section.length == 0.0 {
                return Err(cx
                    .error(format!("beam {i} ({a}, {b}) has zero length at rest"))
                    .hint("the two nodes of a beam must be at different rest positions"));
            }
            beam.quat = mid_beam_quat(quat_at(&pos, a), quat_at(&pos, b));
            self.beams.push(beam);
        }
        self.rest = rest;
        Ok(())
    }
}

fn check(what: &str, v: &[f64], n: usize, k: usize) -> SimResult {
    if v.len() < n * k {
        return Err(SimError::new(format!("{what} has {} values where the beams need {} ({n} nodes of {k})", v.len(), n * k)));
    }
    Ok(())
}

impl BeamFEMForceField {
    fn n_nodes(&self) -> usize {
        self.beams.iter().map(|b| b.a.max(b.b) + 1).max().unwrap_or(0)
    }
}

force_field_on_one_state!(BeamFEMForceField);

impl BeamFEMForceField {
    fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        let n = self.n_nodes();
        check("the position vector", x, n, 7)?;
        check("the force vector", f, n, 6)?;
        for k in 0..self.active.len() {
            let i = self.active[k];
            self.accumulate_force(f, x, i);
        }
        Ok(())
    }

    fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, _b_factor: f64) -> SimResult {
        let n = self.n_nodes();
        check("the displacement vector", dx, n, 6)?;
        check("the force differential", df, n, 6)?;
        for k in 0..self.active.len() {
            let i = self.active[k];
            self.apply_stiffness(df, dx, i, k_factor);
        }
        Ok(())
    }

    fn k_matrix(&self, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        for &i in &self.active {
            let k = self.world_stiffness(i);
            let (a, b) = (self.beams[i].a, self.beams[i].b);
            for (bi, ni) in [(0usize, a), (1, b)] {
                for (bj, nj) in [(0usize, a), (1, b)] {
                    let mut data = [0.0; 36];
                    for r in 0..6 {
                        for c in 0..6 {
                            data[6 * r + c] = -k[6 * bi + r][6 * bj + c] * k_factor;
                        }
                    }
                    m.add_block(s, 6 * ni, s, 6 * nj, 6, 6, &data);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use settee_core::types::{quat_from_euler, rigid3_integrate};
    use settee_core::ForceField;
    use settee_core::{ForceIo, MechParams};

    fn params() -> MechParams {
        MechParams { dt: 0.01, time: 0.0, gravity: [0.0, 0.0, 0.0] }
    }

    /// `n` beams of length `l` along x from the origin, frames aligned with the world.
    fn straight(n: usize, l: f64) -> (Vec<f64>, Vec<[usize; 2]>) {
        let mut x = Vec::new();
        for i in 0..=n {
            x.extend_from_slice(&[i as f64 * l, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        }
        ((x), (0..n).map(|i| [i, i + 1]).collect())
    }

    fn force(ff: &mut BeamFEMForceField, x: &[f64]) -> Vec<f64> {
        let mut f = vec![0.0; x.len() / 7 * 6];
        let mut io = ForceIo { f: vec![f.as_mut_slice()].into(), x: vec![x].into(), v: vec![].into() };
        ff.add_force(&params(), &mut io).unwrap();
        drop(io);
        f
    }

    fn dforce(ff: &mut BeamFEMForceField, dx: &[f64], k: f64) -> Vec<f64> {
        let mut df = vec![0.0; dx.len()];
        let mut io = ForceIo { f: vec![df.as_mut_slice()].into(), x: vec![dx].into(), v: vec![].into() };
        ff.add_dforce(&params(), &mut io, k, 0.0).unwrap();
        drop(io);
        df
    }

    /// The dense stiffness `K` (force = −K·dx) from `add_dforce` column by column.
    fn dense_k(ff: &mut BeamFEMForceField, ndof: usize) -> Vec<Vec<f64>> {
        let mut k = vec![vec![0.0; ndof]; ndof];
        for j in 0..ndof {
            let mut e = vec![0.0; ndof];
            e[j] = 1.0;
            let col = dforce(ff, &e, -1.0);
            for i in 0..ndof {
                k[i][j] = col[i];
            }
        }
        k
    }

    /// Gaussian elimination with partial pivoting.
    fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
        let n = b.len();
        for k in 0..n {
            let p = (k..n).max_by(|&i, &j| a[i][k].abs().partial_cmp(&a[j][k].abs()).unwrap()).unwrap();
            a.swap(k, p);
            b.swap(k, p);
            for i in k + 1..n {
                let f = a[i][k] / a[k][k];
                for j in k..n {
                    a[i][j] -= f * a[k][j];
                }
                b[i] -= f * b[k];
            }
        }
        let mut x = vec![0.0; n];
        for k in (0..n).rev() {
            let mut s = b[k];
            for j in k + 1..n {
                s -= a[k][j] * x[j];
            }
            x[k] = s / a[k][k];
        }
        x
    }

    /// Static cantilever clamped at node 0: the tip displacement under end loads.
    fn cantilever(n: usize, l: f64, e: f64, nu: f64, r: f64, ri: f64, load: [f64; 6]) -> Vec<f64> {
        let (x0, edges) = straight(n, l);
        let mut ff = BeamFEMForceField::build(StateId::first_in_slot(0), &x0, &edges, e, nu, r, ri);
        let _ = force(&mut ff, &x0);
        let ndof = 6 * (n + 1);
        let k = dense_k(&mut ff, ndof);
        // clamp node 0: keep DOFs 6..
        let kr: Vec<Vec<f64>> = k[6..].iter().map(|row| row[6..].to_vec()).collect();
        let mut f = vec![0.0; ndof - 6];
        f[ndof - 12..].copy_from_slice(&load);
        solve(kr, f)
    }

    /// Beam elements are exact for end loads: tip deflection P L³/(3EI) and rotation
    /// P L²/(2EI) under a transverse force, M L/(EI) under a bending moment, P L/(EA) under an
    /// axial force and T L/(GJ) under a torque, whatever the number of elements (the shear term
    /// is zero: SOFA's elements are Euler–Bernoulli).
    #[test]
    fn cantilever_tip_matches_beam_theory() {
        let (e, nu, r, ri) = (2.0e7, 0.49, 0.1, 0.04);
        let i = PI * (r * r * r * r - ri * ri * ri * ri) / 4.0;
        let a = PI * (r * r - ri * ri);
        let g = e / (2.0 * (1.0 + nu));
        for n in [1, 3, 7] {
            let l = 1.3;
            let total = n as f64 * l;
            let p = 2.5;
            let u = cantilever(n, l, e, nu, r, ri, [0.0, p, 0.0, 0.0, 0.0, 0.0]);
            let tip = &u[u.len() - 6..];
            let defl = p * total.powi(3) / (3.0 * e * i);
            let rot = p * total.powi(2) / (2.0 * e * i);
            assert!((tip[1] - defl).abs() < 1e-12 * defl, "n={n}: {} vs {defl}", tip[1]);
            assert!((tip[5] - rot).abs() < 1e-12 * rot, "n={n}: {} vs {rot}", tip[5]);
            assert!(tip[0].abs() < 1e-14 && tip[2].abs() < 1e-14);

            // force along z bends about −y
            let u = cantilever(n, l, e, nu, r, ri, [0.0, 0.0, p, 0.0, 0.0, 0.0]);
            let tip = &u[u.len() - 6..];
            assert!((tip[2] - defl).abs() < 1e-12 * defl);
            assert!((tip[4] + rot).abs() < 1e-12 * rot);

            // end moment about z: uniform curvature
            let m = 0.7;
            let u = cantilever(n, l, e, nu, r, ri, [0.0, 0.0, 0.0, 0.0, 0.0, m]);
            let tip = &u[u.len() - 6..];
            assert!((tip[1] - m * total * total / (2.0 * e * i)).abs() < 1e-12 * m * total * total / (2.0 * e * i));
            assert!((tip[5] - m * total / (e * i)).abs() < 1e-12 * m * total / (e * i));

            // axial force and torque
            let u = cantilever(n, l, e, nu, r, ri, [p, 0.0, 0.0, m, 0.0, 0.0]);
            let tip = &u[u.len() - 6..];
            assert!((tip[0] - p * total / (e * a)).abs() < 1e-12 * p * total / (e * a));
            assert!((tip[3] - m * total / (g * 2.0 * i)).abs() < 1e-12 * m * total / (g * 2.0 * i));
        }
    }

    /// The local stiffness entries of SOFA's element (Euler–Bernoulli, circular section).
    #[test]
    fn local_stiffness_entries() {
        let s = BeamSection::new(2.0e7, 1.0, 0.49, 0.1, 0.0);
        let k = s.stiffness();
        let i = PI * (0.1f64 * 0.1 * 0.1 * 0.1) / 4.0;
        assert_eq!(s.iy, i);
        assert_eq!(s.j, 2.0 * i);
        assert_eq!(k[0][0], 2.0e7 * (PI * (0.1 * 0.1)) / 1.0);
        assert!((k[1][1] - 12.0 * 2.0e7 * i).abs() < 1e-9 * k[1][1]);
        assert!((k[5][1] - 6.0 * 2.0e7 * i).abs() < 1e-9 * k[5][1]);
        assert!((k[4][2] + 6.0 * 2.0e7 * i).abs() < 1e-9 * k[5][1]);
        assert_eq!(k[3][3], 2.0e7 / (2.0 * 1.49) * 2.0 * i);
        for a in 0..12 {
            for b in 0..12 {
                assert_eq!(k[a][b], k[b][a]);
            }
        }
        // rigid modes: translation and rotation about the beam's end are in the kernel
        let rot_z_about_a = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let f = mul12(&k, &rot_z_about_a);
        assert!(f.iter().all(|v| v.abs() < 1e-6), "{f:?}");
    }

    /// Moving the whole chain rigidly (rotation about any point and translation) leaves every
    /// force at zero, whatever the shape at rest.
    #[test]
    fn rigid_motion_gives_no_force() {
        // a bent chain with frames not aligned with the world
        let mut x0 = Vec::new();
        let pts = [[0.0, 0.0, 0.0], [1.0, 0.2, 0.0], [1.8, 0.9, 0.3], [2.5, 1.0, 1.0]];
        for (k, p) in pts.iter().enumerate() {
            let q = quat_from_euler([0.1 * k as f64, -0.2 * k as f64, 0.3]);
            x0.extend_from_slice(&[p[0], p[1], p[2], q[0], q[1], q[2], q[3]]);
        }
        let edges = [[0, 1], [1, 2], [2, 3]];
        let mut ff = BeamFEMForceField::build(StateId::first_in_slot(0), &x0, &edges, 2.0e7, 0.3, 0.1, 0.0);
        assert!(force(&mut ff, &x0).iter().all(|&v| v == 0.0));
        for (angles, t) in [([0.3, -1.1, 2.0], [1.0, -2.0, 0.5]), ([3.0, 0.2, -0.4], [0.0, 0.0, 0.0]), ([0.0, 0.0, 0.0], [5.0, 1.0, 2.0])] {
            let r = quat_from_euler(angles);
            let mut x = x0.clone();
            for node in x.chunks_exact_mut(7) {
                let c = quat_rotate(r, [node[0], node[1], node[2]]);
                let q = quat_mul(r, [node[3], node[4], node[5], node[6]]);
                node[..3].copy_from_slice(&[c[0] + t[0], c[1] + t[1], c[2] + t[2]]);
                node[3..].copy_from_slice(&q);
            }
            let f = force(&mut ff, &x);
            // forces are K·u with K ~ EA/L ~ 6e5: round-off of the displacements only
            let m = f.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(m < 1e-8, "{angles:?}: {m} {f:?}");
        }
    }

    /// At rest, `add_dforce` is the derivative of `add_force` (finite differences through the
    /// rigid exponential map), and deformed, the differential equals the assembled matrix.
    #[test]
    fn dforce_is_the_derivative_at_rest() {
        let (x0, edges) = straight(3, 0.8);
        let mut ff = BeamFEMForceField::build(StateId::first_in_slot(0), &x0, &edges, 1.0e5, 0.3, 0.05, 0.0);
        let _ = force(&mut ff, &x0);
        let mut s = 7u64;
        let dx: Vec<f64> = (0..24)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            })
            .collect();
        let df = dforce(&mut ff, &dx, 1.0);
        let h = 1e-6;
        let mut fd = vec![0.0; 24];
        for sign in [1.0, -1.0] {
            let mut x = x0.clone();
            for i in 0..4 {
                let d = &dx[6 * i..6 * i + 6];
                rigid3_integrate(
                    &mut x[7 * i..7 * i + 7],
                    [d[0] * h * sign, d[1] * h * sign, d[2] * h * sign],
                    [d[3] * h * sign, d[4] * h * sign, d[5] * h * sign],
                );
            }
            let f = force(&mut ff, &x);
            for k in 0..24 {
                fd[k] += sign * f[k] / (2.0 * h);
            }
        }
        let scale = df.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (a, b) in df.iter().zip(&fd) {
            assert!((a - b).abs() < 1e-6 * scale, "{a} vs {b}");
        }
    }

    /// `world_stiffness` (the assembled blocks) applied to dx equals `−add_dforce`, in a rotated
    /// configuration and with the symmetric assembly.
    #[test]
    fn world_stiffness_matches_dforce() {
        let (x0, edges) = straight(2, 1.0);
        for sym in [false, true] {
            let mut ff = BeamFEMForceField::build(StateId::first_in_slot(0), &x0, &edges, 1.0e5, 0.3, 0.05, 0.0);
            ff.symmetric_assembly = sym;
            let mut x = x0.clone();
            for (i, node) in x.chunks_exact_mut(7).enumerate() {
                let q = quat_from_euler([0.2 * i as f64, 0.5, -0.3 * i as f64]);
                node[3..].copy_from_slice(&q);
                node[1] += 0.1 * i as f64;
            }
            let _ = force(&mut ff, &x);
            let dx: Vec<f64> = (0..18).map(|k| ((k * 7 % 11) as f64 - 5.0) * 0.1).collect();
            let df = dforce(&mut ff, &dx, 1.0);
            let mut kdx = vec![0.0; 18];
            for b in 0..2 {
                let k = ff.world_stiffness(b);
                let nodes = [ff.beams[b].a, ff.beams[b].b];
                for r in 0..12 {
                    for c in 0..12 {
                        kdx[6 * nodes[r / 6] + r % 6] -= k[r][c] * dx[6 * nodes[c / 6] + c % 6];
                    }
                }
            }
            for (a, b) in df.iter().zip(&kdx) {
                assert!((a - b).abs() < 1e-9 * 1e3, "{sym}: {a} vs {b}");
            }
        }
    }

    fn rigid_mo(h: &mut crate::test_support::Harness, a: &[(&str, &str)]) -> settee_core::ComponentId {
        let attrs = crate::test_support::attrs(a);
        let c = h.factory.create(&mut h.scene, settee_core::Scene::ROOT, "MechanicalObject", Some("Rigid3d"), attrs, None, std::path::Path::new("."));
        assert!(!h.scene.has_errors(), "{:?}", h.scene.messages);
        c.unwrap()
    }

    /// Bad input is a positioned error with a hint, never a panic.
    #[test]
    fn bad_input_is_an_error() {
        use crate::test_support::Harness;
        use settee_core::{Attr, Scene};
        // a Vec3 state
        let mut h = Harness::new();
        h.add("MeshTopology", &[("position", "0 0 0 1 0 0"), ("lines", "0 1")]);
        h.add("MechanicalObject", &[]);
        let dir = std::path::Path::new(".");
        let attrs = vec![Attr { name: "radius".into(), value: "0.1".into(), pos: None }];
        let c = h.factory.create(&mut h.scene, Scene::ROOT, "BeamFEMForceField", None, attrs, None, dir);
        let failed = c.is_none() || h.scene.has_errors() || h.init().is_err();
        assert!(failed, "a Vec3 state must be refused");

        // no edges
        let mut h = Harness::new();
        h.add("MeshTopology", &[("position", "0 0 0 1 0 0")]);
        rigid_mo(&mut h, &[("position", "0 0 0 0 0 0 1 1 0 0 0 0 0 1")]);
        h.add("BeamFEMForceField", &[("radius", "0.1")]);
        let e = h.init().unwrap_err();
        assert!(e.to_string().contains("no edges"), "{e}");
        assert!(e.diagnostic().hint.is_some());

        // an edge beyond the state
        let mut h = Harness::new();
        h.add("MeshTopology", &[("lines", "0 1 1 2")]);
        rigid_mo(&mut h, &[("position", "0 0 0 0 0 0 1 1 0 0 0 0 0 1")]);
        h.add("BeamFEMForceField", &[("radius", "0.1")]);
        let e = h.init().unwrap_err();
        assert!(e.to_string().contains("edge 1"), "{e}");

        // a valid chain: zero force at rest, forces of the scene's beam
        let mut h = Harness::new();
        h.add("MeshTopology", &[("lines", "0 1 1 2")]);
        let mo = rigid_mo(&mut h, &[("position", "0 0 0 0 0 0 1 1 0 0 0 0 0 1 2 0 0 0 0 0 1")]);
        let ff = h.add("BeamFEMForceField", &[("radius", "0.1"), ("youngModulus", "2e7"), ("poissonRatio", "0.49"), ("listSegment", "1")]);
        h.init().unwrap();
        let rest = h.rest(mo);
        let f = {
            let mut f = vec![0.0; 18];
            let obj = h.scene.role_mut::<dyn ForceField>(ff).unwrap();
            let mut io = ForceIo { f: vec![f.as_mut_slice()].into(), x: vec![rest.as_slice()].into(), v: vec![].into() };
            obj.add_force(&params(), &mut io).unwrap();
            drop(io);
            f
        };
        assert!(f.iter().all(|&v| v == 0.0));
        // listSegment restricts the force field to beam 1: moving node 1 compresses it (and
        // would stretch beam 0, which does not act)
        let mut x = rest.clone();
        x[7] += 0.01;
        let obj = h.scene.role_mut::<dyn ForceField>(ff).unwrap();
        let mut f = vec![0.0; 18];
        let mut io = ForceIo { f: vec![f.as_mut_slice()].into(), x: vec![x.as_slice()].into(), v: vec![].into() };
        obj.add_force(&params(), &mut io).unwrap();
        drop(io);
        let ea = 2e7 * (PI * (0.1 * 0.1)) / 1.0;
        assert!(f[..6].iter().all(|&v| v == 0.0));
        assert!((f[6] + ea * 0.01).abs() < 1e-9 * ea && (f[12] - ea * 0.01).abs() < 1e-9 * ea, "{f:?}");
    }
}
