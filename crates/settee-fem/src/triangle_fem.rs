//! `TriangleFEMForceField`: SOFA's older linear membrane on triangles (forcefields-mappings spec
//! §1.5, §1.6), with a corotational (`large`, default) or a world-frame (`small`) displacement
//! measure. It shares the membrane kernels of [`crate::triangular_fem`] but has its own rest
//! data and material:
//!
//! * **Elements** — the topology's triangles; when it has none, each quad `(q0,q1,q2,q3)` is split
//!   into `(q0,q1,q2)` and `(q0,q2,q3)`.
//! * **Rest shape** — `initialPoints` (the state's rest positions when not given, written back
//!   into the Data). `large`: the frame `R₀` of the rest triangle, and the rest local
//!   coordinates `R₀·B − R₀·A`, `R₀·C − R₀·A` (each point rotated, then the difference, as SOFA
//!   does); `small`: the world edges `B − A`, `C − A`.
//! * **Material** — plane stress `E/(1−ν²)·[[1,ν,0],[ν,1,0],[0,0,(1−ν)/2]]`, or with
//!   `planeStrain` `E/((1+ν)(1−2ν))·[[1−ν,ν,0],[ν,1−ν,0],[0,0,½−ν]]`, times
//!   `thickness · ½|AB × AC|` (the rest area, unsigned).
//! * **`large` force** — exactly §1.5 (current frame `R`, `D = (0,0, b₀ₓ−bₓ, 0, c₀ₓ−cₓ, c₀ᵧ−cᵧ)`,
//!   `J` of the current local coordinates, the reduced products); `R` and `J` are kept for
//!   `add_dforce` and the matrix.
//! * **`small` force** — no rotation: `D` from the world `x, y` components of rest minus current
//!   edges, `J` from the local-frame formula applied to the world `x, y` components of the current
//!   edges (SOFA's `computeStrainDisplacementLocal`, which assumes `B − A` along `x`), full
//!   products, forces on `x, y` only. The element rotation stays the identity, so the assembled
//!   stiffness of `small` is `J·M·Jᵀ` expanded in world `x, y`.
//! * **Matrix** — for every triangle the blocks of `−k·Rᵀ·expand(J·M·Jᵀ)·R` with the stored `R`
//!   and `J` (before the first force evaluation: the rest frame and the rest `J`).
//!
//! Degenerate triangles (`|det J| < ε`) are errors, at init and during the simulation. The
//! force field does not follow topological changes (SOFA's does not either).

use settee_core::role::Topology;
use settee_core::{Component, InitCtx, MatrixAccumulator, SimError, SimResult, StateId};

use settee_core::math::{at, cross, norm, sub};

use crate::common::{check_elements, check_indices, force_field_on_one_state, vec3_state};
use crate::decompose::transpose;
use crate::hexa::mat_vec;
use crate::tetra::rotation_large;
use crate::tetra_common::{material_lists, ElasticData};
use crate::triangular_fem::{
    force_full, force_reduced, membrane_blocks, membrane_dforce, strain_displacement_local, strain_full, strain_reduced, stress_reduced, Method,
    StrainDisplacement,
};

type V3 = [f64; 3];
type M3 = [[f64; 3]; 3];

const IDENTITY: M3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Per-triangle data.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TriangleElement {
    /// Rest coordinates of `a, b, c` relative to `a` (local frame for `large`, world for `small`).
    pub rest: [V3; 3],
    /// Material matrix times thickness times rest area.
    pub material: M3,
    /// Strain–displacement matrix of the last force evaluation (of the rest shape before).
    pub j: StrainDisplacement,
    /// Local-to-world rotation of the last force evaluation (of the rest shape before; the
    /// identity for `small`).
    pub rotation: M3,
}

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        data = {
            /// Rayleigh damping coefficient related to stiffness
            rayleighStiffness: Real = "0",
            /// Initial Position (default: the state's rest positions, written back at init)
            initialPoints: Coords,
            /// large: large displacements, small: small displacements (anything else: large, with a warning)
            method: Str = "large",
            /// Thickness of the elements
            thickness: Real = "1",
            /// Plane strain or plane stress assumption
            planeStrain: Bool = "false",
        },
        links = {
            /// topology whose triangles (or quads, split in two) are the elements (default: the context topology)
            topology: Topology,
        },
        inherit = [ElasticData, Self],
    }
    /// Linear membrane on the triangles (or split quads) of a static topology, with corotational (large) or world-frame (small) displacements.
    #[derive(Clone, Default)]
    pub struct TriangleFEMForceField {
        state: Option<StateId>,
        method: Method,
        triangles: Vec<[usize; 3]>,
        elements: Vec<TriangleElement>,
        rayleigh_stiffness: f64,
    }
}

impl TriangleFEMForceField {
    pub fn method(&self) -> Method {
        self.method
    }
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }
    pub fn elements(&self) -> &[TriangleElement] {
        &self.elements
    }
}

/// SOFA's `computeMaterialStiffnesses` for one element of rest vertices `pa, pb, pc`.
fn material(young: f64, nu: f64, thickness: f64, plane_strain: bool, pa: V3, pb: V3, pc: V3) -> M3 {
    let area = 0.5 * norm(cross(sub(pb, pa), sub(pc, pa)));
    let volume = thickness * area;
    let (base, scale) = if plane_strain {
        let one_minus = 1.0 - nu;
        ([[one_minus, nu, 0.0], [nu, one_minus, 0.0], [0.0, 0.0, 0.5 - nu]], young / ((1.0 + nu) * (1.0 - 2.0 * nu)))
    } else {
        ([[1.0, nu, 0.0], [nu, 1.0, 0.0], [0.0, 0.0, 0.5 * (1.0 - nu)]], young / (1.0 - nu * nu))
    };
    let factor = scale * volume;
    base.map(|r| r.map(|v| v * factor))
}

fn degenerate(i: usize, t: &[usize; 3]) -> SimError {
    SimError::new(format!("triangle {i} {t:?} is degenerate (null determinant of its strain-displacement matrix)"))
        .hint("a triangle collapsed to a segment or a point: check the mesh, or reduce the time step / loads")
}

impl Component for TriangleFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject")?;
        let mesh = cx.require_mesh()?;
        let triangles: Vec<[usize; 3]> = if !mesh.triangles.is_empty() {
            mesh.triangles.clone()
        } else if !mesh.quads.is_empty() {
            mesh.quads.iter().flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]]).collect()
        } else {
            cx.warn("no triangles found in the topology: no forces");
            Vec::new()
        };
        let n = cx.state_size(s);
        check_elements(cx, "triangle", &triangles, n)?;
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
        let thickness = d.get(Self::THICKNESS);
        let plane_strain = d.get(Self::PLANE_STRAIN);
        let given = d.get(Self::INITIAL_POINTS).to_vec();
        let x0 = if given.is_empty() {
            let rest = cx.rest_or_position(s);
            cx.data_mut().put(Self::INITIAL_POINTS, rest.clone());
            rest
        } else {
            given
        };
        if let Some((i, t)) = triangles.iter().enumerate().find(|(_, t)| t.iter().any(|&v| 3 * v + 3 > x0.len())) {
            return Err(cx
                .error(format!("triangle {i} {t:?} refers to a point beyond the {} initialPoints", x0.len() / 3))
                .hint("initialPoints must hold the rest position of every point of the mechanical state"));
        }
        let mut elements = Vec::with_capacity(triangles.len());
        for (i, t) in triangles.iter().enumerate() {
            let (pa, pb, pc) = (at(&x0, t[0]), at(&x0, t[1]), at(&x0, t[2]));
            let mut el = TriangleElement::default();
            match self.method {
                Method::Small => {
                    el.rotation = IDENTITY;
                    el.rest = [[0.0; 3], sub(pb, pa), sub(pc, pa)];
                    // SOFA computes no strain-displacement matrix at init for `small`: the first
                    // force evaluation does (an assembly before it sees a zero J).
                }
                Method::Large => {
                    let r01 = rotation_large(pa, pb, pc);
                    el.rotation = transpose(&r01);
                    let (ra, rb, rc) = (mat_vec(&r01, pa), mat_vec(&r01, pb), mat_vec(&r01, pc));
                    el.rest = [[0.0; 3], sub(rb, ra), sub(rc, ra)];
                    el.j = strain_displacement_local(&el.rest[1], &el.rest[2]).ok_or_else(|| {
                        cx.error(format!("triangle {i} {t:?} is degenerate at rest (null determinant)")).hint("remove flat triangles from the mesh")
                    })?;
                }
            }
            let e = young.get(i).copied().unwrap_or(young[0]);
            let nu = poisson.get(i).copied().unwrap_or(poisson[0]);
            el.material = material(e, nu, thickness, plane_strain, pa, pb, pc);
            elements.push(el);
        }
        self.triangles = triangles;
        self.elements = elements;
        self.state = Some(s);
        Ok(())
    }
}

force_field_on_one_state!(TriangleFEMForceField);

impl TriangleFEMForceField {
    fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        check_indices(&self.triangles, "triangle", x.len() / 3)?;
        match self.method {
            Method::Large => self.force_large(x, f),
            Method::Small => self.force_small(x, f),
        }
    }

    fn force_large(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        for (i, t) in self.triangles.iter().enumerate() {
            let el = &mut self.elements[i];
            let (pa, pb, pc) = (at(x, t[0]), at(x, t[1]), at(x, t[2]));
            let r02 = rotation_large(pa, pb, pc);
            let lb = mat_vec(&r02, sub(pb, pa));
            let lc = mat_vec(&r02, sub(pc, pa));
            let d = [0.0, 0.0, el.rest[1][0] - lb[0], 0.0, el.rest[2][0] - lc[0], el.rest[2][1] - lc[1]];
            let j = strain_displacement_local(&lb, &lc).ok_or_else(|| degenerate(i, t))?;
            let strain = strain_reduced(&j, &d);
            let stress = stress_reduced(&el.material, &strain);
            let fl = force_reduced(&j, &stress);
            let r20 = transpose(&r02);
            for (k, &v) in t.iter().enumerate() {
                let fw = mat_vec(&r20, [fl[2 * k], fl[2 * k + 1], 0.0]);
                for c in 0..3 {
                    f[3 * v + c] += fw[c];
                }
            }
            el.j = j;
            el.rotation = r20;
        }
        Ok(())
    }

    fn force_small(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        for (i, t) in self.triangles.iter().enumerate() {
            let el = &mut self.elements[i];
            let pa = at(x, t[0]);
            let (db, dc) = (sub(at(x, t[1]), pa), sub(at(x, t[2]), pa));
            let (r1, r2) = (el.rest[1], el.rest[2]);
            let d = [0.0, 0.0, r1[0] - db[0], r1[1] - db[1], r2[0] - dc[0], r2[1] - dc[1]];
            let j = strain_displacement_local(&db, &dc).ok_or_else(|| degenerate(i, t))?;
            el.j = j;
            let strain = strain_full(&j, &d);
            let stress = mat_vec(&el.material, strain);
            let fl = force_full(&j, &stress);
            for (k, &v) in t.iter().enumerate() {
                f[3 * v] += fl[2 * k];
                f[3 * v + 1] += fl[2 * k + 1];
                f[3 * v + 2] += 0.0;
            }
        }
        Ok(())
    }

    fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, _b_factor: f64) -> SimResult {
        check_indices(&self.triangles, "triangle", dx.len() / 3)?;
        for (t, el) in self.triangles.iter().zip(&self.elements) {
            membrane_dforce(self.method, &el.j, &el.material, &el.rotation, *t, dx, df, k_factor);
        }
        Ok(())
    }

    /// Blocks `(n1, n2)` of every triangle in SOFA's order.
    fn k_matrix(&self, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let st = self.state.ok_or_else(|| SimError::new("TriangleFEMForceField used before init"))?;
        for (t, el) in self.triangles.iter().zip(&self.elements) {
            let blocks = membrane_blocks(&el.j, &el.material, &el.rotation, k_factor);
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
