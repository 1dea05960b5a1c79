//! `FEMMass`: the consistent mass matrix of finite elements (templates `Vec3d,Tetrahedron` and
//! `Vec3d,Hexahedron`), integrating the nodal density of a `NodalMassDensity` with the elements'
//! shape functions.
//!
//! Element `e` contributes the `N×N` node matrix
//! `M_e = Σ_q w_q ρ(q) |det J_q| · N(q) N(q)ᵀ`, where `ρ(q) = Σ_i ρ_i N_i(q)` interpolates the
//! nodal densities and `J_q` is the Jacobian of the reference-to-physical map at the rest
//! positions. The quadrature is the element FEM's: one point `(¼, ¼, ¼)` of weight `1/6` for
//! tetrahedra (which makes the tetrahedron's matrix rank one, as in SOFA), the eight corners
//! scaled by `1/√3` for hexahedra (exact for parallelepipeds). The scalar node matrix acts on
//! each spatial component alike; gravity is `f_i += Σ_j M_ij·g`.
//!
//! The density comes from the `nodalMassDensity` link, else from the first `NodalMassDensity`
//! found in the node or its ancestors.

use std::collections::BTreeMap;

use settee_core::component::{CreateArgs, Mass};
use settee_core::role::Topology;
use settee_core::{
    component, Component, ComponentId, ForceField, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, NodeId, Scene, SimError, SimResult,
    StateId,
};

use settee_fem::decompose::determinant;
use settee_fem::element_fem::kernel::{jacobian, ElementShape};

use crate::common;
use crate::nodal_mass_density::{node_density, NodalMassDensity};

fn create(args: &CreateArgs) -> FEMMass {
    let shape = match args.template.split(',').nth(1).map(str::trim) {
        Some("Hexahedron") => Shape::Hexahedron,
        _ => Shape::Tetrahedron,
    };
    FEMMass::new(shape)
}

/// Reference elements (the same as the element FEM force fields').
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Tetrahedron,
    Hexahedron,
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::Tetrahedron => "tetrahedra",
            Shape::Hexahedron => "hexahedra",
        }
    }

    /// The element FEM's reference element.
    fn element(self) -> ElementShape {
        match self {
            Shape::Tetrahedron => ElementShape::Tetrahedron,
            Shape::Hexahedron => ElementShape::Hexahedron,
        }
    }

    pub fn nodes(self) -> usize {
        self.element().nodes()
    }

    fn quadrature(self) -> Vec<([f64; 3], f64)> {
        self.element().quadrature()
    }

    fn shape_functions(self, q: [f64; 3]) -> Vec<f64> {
        match self {
            Shape::Tetrahedron => vec![1.0 - q[0] - q[1] - q[2], q[0], q[1], q[2]],
            Shape::Hexahedron => {
                let (a, b, c) = (q[0], q[1], q[2]);
                vec![
                    -0.125 * (a - 1.0) * (b - 1.0) * (c - 1.0),
                    0.125 * (a + 1.0) * (b - 1.0) * (c - 1.0),
                    -0.125 * (a + 1.0) * (b + 1.0) * (c - 1.0),
                    0.125 * (a - 1.0) * (b + 1.0) * (c - 1.0),
                    0.125 * (a - 1.0) * (b - 1.0) * (c + 1.0),
                    -0.125 * (a + 1.0) * (b - 1.0) * (c + 1.0),
                    0.125 * (a + 1.0) * (b + 1.0) * (c + 1.0),
                    -0.125 * (a - 1.0) * (b + 1.0) * (c + 1.0),
                ]
            }
        }
    }

    fn reference_gradients(self, q: [f64; 3]) -> Vec<[f64; 3]> {
        self.element().reference_gradients(q)
    }
}

/// `|det J|` of the reference-to-physical map `J = Σ_i X_i ⊗ ∇_ref N_i` (Sarrus' rule in SOFA's
/// term order).
fn abs_det_jacobian(nodes: &[[f64; 3]], grads: &[[f64; 3]]) -> f64 {
    determinant(&jacobian(nodes, grads)).abs()
}

/// The `N×N` (row-major) mass matrix of one element with node positions `nodes` and node
/// densities `density`.
pub fn element_mass_matrix(shape: Shape, nodes: &[[f64; 3]], density: &[f64]) -> Vec<f64> {
    let n = shape.nodes();
    let mut m = vec![0.0; n * n];
    for (q, w) in shape.quadrature() {
        let det = abs_det_jacobian(nodes, &shape.reference_gradients(q));
        let nq = shape.shape_functions(q);
        let rho = density.iter().zip(&nq).fold(0.0, |acc, (r, s)| acc + r * s);
        let f = w * rho * det;
        for i in 0..n {
            for j in 0..n {
                m[i * n + j] += f * (nq[i] * nq[j]);
            }
        }
    }
    m
}

/// Finite-element mass (inertia and body force): consistent mass matrix of tetrahedra or hexahedra from a nodal density.
///
/// The mass.
#[component(
    module = "Sofa.Component.Mass",
    roles = [Mass, ForceField],
    templates = ["Vec3d,Tetrahedron", "Vec3d,Hexahedron"],
    template_rule = FromState,
    create = create,
    data = {
        /// add gravity to the velocity directly (not implemented by SOFA's FEMMass: gravity stays a force)
        separateGravity: Bool = "false",
        /// Rayleigh damping coefficient related to mass
        rayleighMass: Real = "0",
        /// Rayleigh damping coefficient related to stiffness (unused by masses)
        rayleighStiffness: Real = "0",
    },
    links = {
        /// topology whose elements carry the mass (default: the context topology)
        topology: Topology,
        /// the NodalMassDensity to integrate (default: the first one found in the node or its ancestors)
        nodalMassDensity: _,
    },
)]
#[derive(Clone)]
pub struct FEMMass {
    shape: Shape,
    state: Option<StateId>,
    /// Rows of the global node matrix, by increasing node index: `(row, [(column, value)])`
    /// with increasing columns.
    rows: Vec<(usize, Vec<(usize, f64)>)>,
    /// The same rows concatenated, for `add_mdx`: `(row, end of its entries in flat_entries)`.
    flat_rows: Vec<(usize, usize)>,
    /// The entries of `rows`, row after row: `(column, value)`.
    flat_entries: Vec<(usize, f64)>,
    rayleigh_mass: f64,
    rayleigh_stiffness: f64,
}

impl FEMMass {
    pub fn new(shape: Shape) -> FEMMass {
        FEMMass { shape, state: None, rows: Vec::new(), flat_rows: Vec::new(), flat_entries: Vec::new(), rayleigh_mass: 0.0, rayleigh_stiffness: 0.0 }
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The node matrix: `(row, [(column, value)])` by increasing row and column.
    pub fn node_matrix(&self) -> &[(usize, Vec<(usize, f64)>)] {
        &self.rows
    }

    /// Sum of all the entries of the node matrix (the total mass).
    pub fn total_mass(&self) -> f64 {
        self.rows.iter().flat_map(|(_, r)| r.iter().map(|e| e.1)).sum()
    }
}

/// The first `NodalMassDensity` of `node` or its ancestors (SOFA's context search upwards).
fn find_density_up(scene: &Scene, node: NodeId) -> Option<ComponentId> {
    let mut cur = Some(node);
    while let Some(n) = cur {
        if let Some(c) = scene.node(n).objects.iter().copied().find(|&c| scene.entry(c).class.name == "NodalMassDensity") {
            return Some(c);
        }
        cur = scene.node(n).parent();
    }
    None
}

impl Component for FEMMass {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        self.rayleigh_mass = d.get(Self::RAYLEIGH_MASS);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        let separate = d.get(Self::SEPARATE_GRAVITY);
        let s = cx.require_state()?;
        if cx.state_layout(s) != Layout::Vec3 {
            return Err(cx
                .error(format!("the mechanical state has template {}, but this mass needs Vec3d", cx.state_layout(s).name()))
                .hint("attach FEMMass to a Vec3d MechanicalObject"));
        }
        let mesh = cx.require_mesh()?;
        let density_comp = match cx.link_targets("nodalMassDensity").first() {
            Some(&c) => c,
            None => find_density_up(cx.scene, cx.node()).ok_or_else(|| {
                cx.error("no NodalMassDensity found")
                    .hint("add a NodalMassDensity (property=\"<density>\") in this node or an ancestor, or set nodalMassDensity=\"@...\"")
            })?,
        };
        if cx.scene.entry(density_comp).class.name != "NodalMassDensity" {
            return Err(cx
                .error(format!("nodalMassDensity points to {}, not to a NodalMassDensity", cx.scene.entry(density_comp).label()))
                .hint("link a NodalMassDensity component"));
        }
        let property = cx.scene.entry(density_comp).data.get(NodalMassDensity::PROPERTY).to_vec();
        if separate {
            cx.warn("separateGravity is not implemented by FEMMass (as in SOFA): gravity is still applied as a force");
        }

        let n = self.shape.nodes();
        let elements: Vec<usize> = match self.shape {
            Shape::Tetrahedron => mesh.tetrahedra.iter().flatten().copied().collect(),
            Shape::Hexahedron => mesh.hexahedra.iter().flatten().copied().collect(),
        };
        if elements.is_empty() {
            cx.warn(format!("the topology has no {}: the mass is zero", self.shape.name()));
        }
        let ndofs = cx.state_size(s);
        if let Some((k, e)) = elements.chunks_exact(n).enumerate().find(|(_, e)| e.iter().any(|&i| i >= ndofs)) {
            return Err(cx
                .error(format!("element {k} {e:?} refers to a point beyond the {ndofs} DOFs of the mechanical state"))
                .hint("the topology and the MechanicalObject must describe the same points"));
        }
        let rest = cx.rest_or_position(s);
        // Element matrices, summed into the global node matrix in element order.
        let mut global: Vec<BTreeMap<usize, f64>> = vec![BTreeMap::new(); ndofs];
        for e in elements.chunks_exact(n) {
            let nodes: Vec<[f64; 3]> = e.iter().map(|&i| [rest[3 * i], rest[3 * i + 1], rest[3 * i + 2]]).collect();
            let rho: Vec<f64> = e.iter().map(|&i| node_density(&property, i)).collect();
            let m = element_mass_matrix(self.shape, &nodes, &rho);
            for (a, &i) in e.iter().enumerate() {
                for (b, &j) in e.iter().enumerate() {
                    *global[i].entry(j).or_insert(0.0) += m[a * n + b];
                }
            }
        }
        self.rows = global.into_iter().enumerate().filter(|(_, r)| !r.is_empty()).map(|(i, r)| (i, r.into_iter().collect())).collect();
        self.flat_entries = self.rows.iter().flat_map(|(_, r)| r.iter().copied()).collect();
        self.flat_rows = self
            .rows
            .iter()
            .scan(0, |end, (i, r)| {
                *end += r.len();
                Some((*i, *end))
            })
            .collect();
        self.state = Some(s);
        Ok(())
    }
}

common::mass_force_field!(FEMMass);

impl FEMMass {
    /// Gravity: `f_i += M_ij·g` entry by entry.
    fn weight(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
        let f = &mut io.f[0];
        let g = p.gravity;
        for (i, row) in &self.rows {
            let o = &mut f[3 * i..3 * i + 3];
            for &(_, m) in row {
                o[0] += m * g[0];
                o[1] += m * g[1];
                o[2] += m * g[2];
            }
        }
        Ok(())
    }
}

impl Mass for FEMMass {
    common::mass_items!(is_diagonal: |_| false, separate_gravity: |_| false);

    /// `res_i += (factor·M_ij)·dx_j` entry by entry.
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        // The rows read from one contiguous array (same entries, same order).
        let mut start = 0;
        for &(i, end) in &self.flat_rows {
            let row = &self.flat_entries[start..end];
            start = end;
            // The node's three sums stay in registers over its row (same order of additions).
            let a = 3 * i;
            let mut s = [res[a], res[a + 1], res[a + 2]];
            for &(j, m) in row {
                let v = factor * m;
                let d = &dx[3 * j..3 * j + 3];
                s[0] += v * d[0];
                s[1] += v * d[1];
                s[2] += v * d[2];
            }
            res[a..a + 3].copy_from_slice(&s);
        }
    }

    fn acc_from_f(&self, _a: &mut [f64], _f: &[f64]) -> SimResult {
        Err(SimError::new("FEMMass cannot compute accelerations from forces: its mass matrix is not diagonal")
            .hint("use an implicit ODE solver (EulerImplicitSolver), which solves with the mass matrix"))
    }

    /// SOFA's FEMMass does not implement it (gravity always stays a force).
    fn add_gravity_to_v(&self, _v: &mut [f64], _gravity: [f64; 3], _dt: f64) {}

    /// `factor·M_ij` on the diagonal of each 3×3 node block.
    fn add_m_to_matrix(&self, acc: &mut MatrixAccumulator, factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("FEMMass used before init"))?;
        for (i, row) in &self.rows {
            for &(j, m) in row {
                let v = m * factor;
                for c in 0..3 {
                    acc.add(s, 3 * i + c, s, 3 * j + c, v);
                }
            }
        }
        Ok(())
    }

    /// `½ Σ_ij M_ij v_i·v_j`.
    fn kinetic_energy(&self, v: &[f64]) -> f64 {
        let mut e = 0.0;
        for (i, row) in &self.rows {
            for &(j, m) in row {
                e += v[3 * i] * (v[3 * j] * m) + v[3 * i + 1] * (v[3 * j + 1] * m) + v[3 * i + 2] * (v[3 * j + 2] * m);
            }
        }
        e / 2.0
    }
}

#[cfg(test)]
mod tests;
