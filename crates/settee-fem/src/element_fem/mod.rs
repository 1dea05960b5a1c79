//! SOFA's element-based linear FEM force fields, `LinearSmallStrainFEMForceField` and
//! `CorotationalFEMForceField` (templates `Vec3d,Tetrahedron` and `Vec3d,Hexahedron`).
//!
//! Both precompute, at init and from the rest positions, one stiffness matrix per element by
//! quadrature ([`kernel::element_stiffness`]). The linear field applies it to the displacement
//! from rest; the corotational one first removes an element rotation (by default a frame built
//! from the element's nodes, see [`kernel::RotationMethod`]) and keeps the rotations of the last
//! `add_force` for the following differentials and matrix assemblies.
//!
//! Element work runs in parallel; the element vectors are subtracted from the node vectors
//! sequentially in element order, node order inside an element, so the results are the same
//! for any number of threads (SOFA's `computeForceStrategy` only chooses whether its element
//! loop is parallel: the numbers do not depend on it).

pub mod kernel;

use rayon::prelude::*;

use settee_core::role::Topology;
use settee_core::{Component, CreateArgs, InitCtx, MatrixAccumulator, SimResult, StateId};

use crate::common::{add_element_blocks, check_elements, check_len, force_field_on_one_state, rest_positions, vec3_state};
use crate::hexa::{Mat3, Vec3};
use crate::tetra::{DEFAULT_POISSON, DEFAULT_YOUNG};
use crate::tetra_common::{material_lists, per_element, ElasticData};
use kernel::{ElementShape, RotationMethod};

fn shape_of(args: &CreateArgs) -> ElementShape {
    ElementShape::from_template(args.template).unwrap_or(ElementShape::Tetrahedron)
}

crate::common::force_field_class! {
    {
        templates = ["Vec3d,Tetrahedron", "Vec3d,Hexahedron"],
        default_template = "Vec3d,Tetrahedron",
        data = {
            /// element loop of addForce: "parallel" or "sequenced" (same numbers either way)
            computeForceStrategy: Options("parallel", "sequenced") = "parallel",
            /// element loop of addDForce: "parallel" or "sequenced" (same numbers either way)
            computeForceDerivStrategy: Options("parallel", "sequenced") = "parallel",
            /// space between the drawn elements (rendering only)
            elementSpace: Real = "0.125",
            /// output: the stiffness matrix of each element, row-major 3N×3N (N nodes per element)
            elementStiffness: Reals,
            /// Rayleigh damping coefficient related to stiffness (> 0)
            rayleighStiffness: Real = "0",
        },
        links = {
            /// topology whose elements are used (default: the context topology)
            topology: Topology,
        },
        inherit = [ElasticData, Self],
        class(
            name = "LinearSmallStrainFEMForceField", module = "Sofa.Component.SolidMechanics.FEM.Elastic",
            description = "Hooke's law assuming small strain, on tetrahedra or hexahedra (element stiffness by quadrature).",
            create = |args| ElementFEMForceField::new(shape_of(args), false),
        ),
        class(
            name = "CorotationalFEMForceField", module = "Sofa.Component.SolidMechanics.FEM.Elastic",
            description = "Hooke's law in a frame following each element's rotation (corotational), on tetrahedra or hexahedra.",
            create = |args| ElementFEMForceField::new(shape_of(args), true),
            data = {
                /// element rotation: "stable_polar", "polar", "identity", or the element's own frame, "triangle" (tetrahedra) / "hexahedron" (hexahedra), which is the default; an index 0-3 selects in that order
                rotationMethod: Str,
            },
        ),
    }
    /// `LinearSmallStrainFEMForceField` (without rotations) or `CorotationalFEMForceField`.
    #[derive(Clone)]
    pub struct ElementFEMForceField {
        shape: ElementShape,
        corotational: bool,
        rotation_method: RotationMethod,
        state: Option<StateId>,
        nb_dofs: usize,
        /// Element node indices, `N` per element.
        elements: Vec<usize>,
        /// Rest positions of the element nodes, `N` per element.
        rest: Vec<Vec3>,
        /// Element stiffness matrices, `(3N)²` reals per element.
        stiffness: Vec<f64>,
        /// Their transposes, laid out for [`kernel::mat_vec_flat_t`]; empty when every matrix is
        /// exactly symmetric (then `stiffness` serves as its own transpose).
        stiffness_t: Vec<f64>,
        /// Rest frames computed at init (corotational).
        initial_frames: Vec<Mat3>,
        /// Rotations of the last `add_force` (identity before the first one).
        rotations: Vec<Mat3>,
        rayleigh_stiffness: f64,
        /// Per-element results, `3N` reals per element, dispatched sequentially afterwards.
        scratch: Vec<f64>,
    }
}

const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

impl ElementFEMForceField {
    pub fn new(shape: ElementShape, corotational: bool) -> ElementFEMForceField {
        ElementFEMForceField {
            shape,
            corotational,
            rotation_method: if corotational { RotationMethod::default_for(shape) } else { RotationMethod::Identity },
            state: None,
            nb_dofs: 0,
            elements: Vec::new(),
            rest: Vec::new(),
            stiffness: Vec::new(),
            stiffness_t: Vec::new(),
            initial_frames: Vec::new(),
            rotations: Vec::new(),
            rayleigh_stiffness: 0.0,
            scratch: Vec::new(),
        }
    }

    pub fn shape(&self) -> ElementShape {
        self.shape
    }
    pub fn rotation_method(&self) -> RotationMethod {
        self.rotation_method
    }
    pub fn nb_elements(&self) -> usize {
        self.elements.len() / self.shape.nodes()
    }
    /// The stiffness matrix of element `e` (row-major `3N × 3N`).
    pub fn element_stiffness(&self, e: usize) -> &[f64] {
        let d = self.dofs();
        &self.stiffness[e * d * d..(e + 1) * d * d]
    }
    /// Rotations of the last `add_force` (corotational).
    pub fn rotations(&self) -> &[Mat3] {
        &self.rotations
    }

    fn dofs(&self) -> usize {
        3 * self.shape.nodes()
    }

    /// Subtracts `factor·e` of every element from the node vector `out`, element by element.
    fn dispatch(&self, out: &mut [f64], factor: Option<f64>) {
        let n = self.shape.nodes();
        for (nodes, e) in self.elements.chunks_exact(n).zip(self.scratch.chunks_exact(3 * n)) {
            for (j, &i) in nodes.iter().enumerate() {
                let o = &mut out[3 * i..3 * i + 3];
                for c in 0..3 {
                    match factor {
                        Some(k) => o[c] -= k * e[3 * j + c],
                        None => o[c] -= e[3 * j + c],
                    }
                }
            }
        }
    }
}

#[inline]
fn gather(x: &[f64], nodes: &[usize]) -> [Vec3; 8] {
    let mut out = [[0.0; 3]; 8];
    for (o, &i) in out.iter_mut().zip(nodes) {
        *o = [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
    }
    out
}

impl Component for ElementFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject")?;
        if self.corotational {
            let text = cx.data().get(Self::ROTATION_METHOD).to_string();
            self.rotation_method = if text.trim().is_empty() {
                RotationMethod::default_for(self.shape)
            } else {
                let names: Vec<&str> = RotationMethod::available(self.shape).iter().map(|m| m.sofa_name()).collect();
                RotationMethod::parse(&text, self.shape).ok_or_else(|| {
                    cx.error(format!("unknown rotationMethod '{text}' for {} elements", self.shape.name()))
                        .hint(format!("use one of: {}", names.join(", ")))
                })?
            };
            let name = self.rotation_method.sofa_name();
            cx.data_mut().put(Self::ROTATION_METHOD, name.to_string());
        }
        let mesh = cx.require_mesh()?;
        let n = self.shape.nodes();
        let elements: Vec<usize> = match self.shape {
            ElementShape::Tetrahedron => mesh.tetrahedra.iter().flatten().copied().collect(),
            ElementShape::Hexahedron => mesh.hexahedra.iter().flatten().copied().collect(),
        };
        if elements.is_empty() {
            let label = cx.topology().map(|t| cx.scene.entry(t).label()).unwrap_or_default();
            cx.warn(format!("the topology {label} has no {}: this force field does nothing", self.shape.name().to_lowercase()));
        }
        let ndofs = cx.state_size(s);
        check_elements(cx, &self.shape.name().to_lowercase(), elements.chunks_exact(n), ndofs)?;
        let rest = rest_positions(cx, s, ndofs)?;
        let (young, poisson) = material_lists(cx, ElasticData::YOUNG_MODULUS, ElasticData::POISSON_RATIO);
        self.rayleigh_stiffness = cx.data().get(Self::RAYLEIGH_STIFFNESS);

        let shape = self.shape;
        let rest_nodes: Vec<Vec3> = elements.iter().map(|&i| [rest[3 * i], rest[3 * i + 1], rest[3 * i + 2]]).collect();
        let ks: Result<Vec<Vec<f64>>, (usize, kernel::KernelError)> = rest_nodes
            .par_chunks_exact(n)
            .enumerate()
            .map(|(i, x0)| {
                let e = per_element(&young, i, DEFAULT_YOUNG);
                let nu = per_element(&poisson, i, DEFAULT_POISSON);
                kernel::element_stiffness(shape, x0, e, nu).map_err(|err| (i, err))
            })
            .collect();
        let ks = ks.map_err(|(i, err)| {
            cx.error(format!("{} {i} {:?}: {err}", shape.name().to_lowercase(), &elements[i * n..(i + 1) * n]))
                .hint("the element is flat in the rest configuration; check the node order of the topology")
        })?;
        let method = self.rotation_method;
        self.initial_frames =
            if self.corotational { rest_nodes.par_chunks_exact(n).map(|x0| kernel::initial_frame(method, x0)).collect() } else { Vec::new() };
        let ne = elements.len() / n;
        self.stiffness = ks.into_iter().flatten().collect();
        let d = 3 * n;
        let symmetric = self.stiffness.chunks_exact(d * d).all(|k| (0..d).all(|r| (0..r).all(|c| k[r * d + c].to_bits() == k[c * d + r].to_bits())));
        self.stiffness_t =
            if symmetric { Vec::new() } else { self.stiffness.chunks_exact(d * d).flat_map(|k| kernel::transpose_flat(k, d)).collect() };
        self.rotations = vec![IDENTITY; if self.corotational { ne } else { 0 }];
        self.scratch = vec![0.0; ne * 3 * n];
        self.elements = elements;
        self.rest = rest_nodes;
        self.state = Some(s);
        self.nb_dofs = ndofs;
        cx.data_mut().put(Self::ELEMENT_STIFFNESS, self.stiffness.clone());
        Ok(())
    }
}

force_field_on_one_state!(ElementFEMForceField);

impl ElementFEMForceField {
    fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        check_len("the position vector", x, self.nb_dofs)?;
        check_len("the force vector", f, self.nb_dofs)?;
        let n = self.shape.nodes();
        let d = 3 * n;
        let elements = &self.elements;
        let rest = &self.rest;
        let stiffness = if self.stiffness_t.is_empty() { &self.stiffness } else { &self.stiffness_t };
        let parallel = crate::tetra_common::parallel_loop(self.nb_elements(), crate::hexahedron_fem::HEXA_PARALLEL_MIN);
        if self.corotational {
            let method = self.rotation_method;
            let frames = &self.initial_frames;
            let body = |(e, (out, r)): (usize, (&mut [f64], &mut Mat3))| {
                let xe = gather(x, &elements[e * n..(e + 1) * n]);
                *r = kernel::corotational_force(method, &frames[e], &stiffness[e * d * d..(e + 1) * d * d], &xe[..n], &rest[e * n..(e + 1) * n], out);
            };
            if parallel {
                self.scratch.par_chunks_exact_mut(d).zip(self.rotations.par_iter_mut()).enumerate().for_each(body);
            } else {
                self.scratch.chunks_exact_mut(d).zip(self.rotations.iter_mut()).enumerate().for_each(body);
            }
        } else {
            let body = |(e, out): (usize, &mut [f64])| {
                let xe = gather(x, &elements[e * n..(e + 1) * n]);
                kernel::linear_force(&stiffness[e * d * d..(e + 1) * d * d], &xe[..n], &rest[e * n..(e + 1) * n], out);
            };
            if parallel {
                self.scratch.par_chunks_exact_mut(d).enumerate().for_each(body);
            } else {
                self.scratch.chunks_exact_mut(d).enumerate().for_each(body);
            }
        }
        self.dispatch(f, None);
        Ok(())
    }

    fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, _b_factor: f64) -> SimResult {
        check_len("the displacement vector", dx, self.nb_dofs)?;
        check_len("the force-differential vector", df, self.nb_dofs)?;
        let n = self.shape.nodes();
        let d = 3 * n;
        let elements = &self.elements;
        let stiffness = if self.stiffness_t.is_empty() { &self.stiffness } else { &self.stiffness_t };
        let parallel = crate::tetra_common::parallel_loop(self.nb_elements(), crate::hexahedron_fem::HEXA_PARALLEL_MIN);
        if self.corotational {
            let rotations = &self.rotations;
            let body = |(e, out): (usize, &mut [f64])| {
                let u = gather(dx, &elements[e * n..(e + 1) * n]);
                kernel::corotational_dforce(&rotations[e], &stiffness[e * d * d..(e + 1) * d * d], &u[..n], out);
            };
            if parallel {
                self.scratch.par_chunks_exact_mut(d).enumerate().for_each(body);
            } else {
                self.scratch.chunks_exact_mut(d).enumerate().for_each(body);
            }
        } else {
            let body = |(e, out): (usize, &mut [f64])| {
                let u = gather(dx, &elements[e * n..(e + 1) * n]);
                kernel::linear_dforce(&stiffness[e * d * d..(e + 1) * d * d], &u[..n], out);
            };
            if parallel {
                self.scratch.par_chunks_exact_mut(d).enumerate().for_each(body);
            } else {
                self.scratch.chunks_exact_mut(d).enumerate().for_each(body);
            }
        }
        self.dispatch(df, Some(k_factor));
        Ok(())
    }

    fn k_matrix(&self, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        let n = self.shape.nodes();
        let d = 3 * n;
        let block = |e: usize| {
            let k = &self.stiffness[e * d * d..(e + 1) * d * d];
            let r = if self.corotational { Some(&self.rotations[e]) } else { None };
            let mut b = Vec::with_capacity(n * n);
            for a in 0..n {
                for c in 0..n {
                    b.push(kernel::stiffness_block(r, k, d, a, c, k_factor));
                }
            }
            b
        };
        let blocks: Vec<Vec<Mat3>> = if crate::tetra_common::parallel_loop(self.nb_elements(), crate::hexahedron_fem::HEXA_PARALLEL_MIN) {
            (0..self.nb_elements()).into_par_iter().map(block).collect()
        } else {
            (0..self.nb_elements()).map(block).collect()
        };
        for (nodes, b) in self.elements.chunks_exact(n).zip(&blocks) {
            add_element_blocks(m, s, nodes, |a, c| &b[a * n + c]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
