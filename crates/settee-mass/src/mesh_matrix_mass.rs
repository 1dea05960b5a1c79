//! `MeshMatrixMass`: the consistent (or lumped) mass matrix of linear elements (SOFA's
//! `MeshMatrixMass`, spec mechanics §5.3).
//!
//! The matrix is stored as a diagonal term per vertex `vm_i` and an off-diagonal term per
//! topology edge `em_e` (at `(a,b)` and `(b,a)`), accumulated over the elements of the highest
//! type present (hexahedra > tetrahedra > quads > triangles > edges) with density `ρ_k`:
//!
//! | element | vertex term | edge term | lumping coefficient `c` |
//! |---|---|---|---|
//! | triangle | `ρA/6` | `ρA/12` | 2 |
//! | quad | `ρA/8` | `ρA/16` | 2 |
//! | tetrahedron | `ρV/10` | `ρV/20` | 2.5 |
//! | hexahedron | `ρV/20` | `ρV/40` | 2.5 |
//!
//! Pure edge topologies get no mass (SOFA computes nothing for them). Lumped, DOF `i` has mass
//! `c·vm_i`; gravity is always `g·vm_i·c`, which is the row sum of the consistent matrix.

use settee_core::component::{CreateArgs, Mass};
use settee_core::role::{MechanicalState, Topology};
use settee_core::{
    component, data_group, Component, Diagnostic, ForceField, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, MeshData, SimError, SimResult,
    StateId,
};

use crate::common::{self, GravityCenterData, MassData};
use crate::geometry::{self, ElementEdges, ElementType, Geometry};

fn create(args: &CreateArgs) -> MeshMatrixMass {
    let layout = args.layout.unwrap_or(Layout::Vec3);
    let geometry = args.template.split(',').nth(1).and_then(|t| Layout::from_name(t.trim())).unwrap_or(layout);
    MeshMatrixMass::new(layout, geometry)
}

/// A typed reference to `printLog`, a Data every component has (`settee_core::factory::BASE_DATA`;
/// `BaseData` gives no reference to it). Not included in any class: the base table declares it.
#[data_group(data = {
    /// if true, emits extra messages at runtime
    printLog: Bool = "false",
})]
struct BasePrintLog;

/// Result of SOFA's `computeMass` for given element densities.
#[derive(Clone, Debug, PartialEq)]
pub struct ComputedMass {
    pub vertex: Vec<f64>,
    pub edge: Vec<f64>,
    /// Lumping coefficient `c` (0 when nothing was computed).
    pub coeff: f64,
    /// The total accumulated as `computeMass` does into `totalMass` (starting from 0).
    pub total: f64,
}

/// Vertex divisor, edge divisor and lumping coefficient of an element type.
fn terms(t: ElementType) -> Option<(f64, f64, f64)> {
    match t {
        ElementType::Triangle => Some((6.0, 12.0, 2.0)),
        ElementType::Quad => Some((8.0, 16.0, 2.0)),
        ElementType::Tetrahedron => Some((10.0, 20.0, 2.5)),
        ElementType::Hexahedron => Some((20.0, 40.0, 2.5)),
        ElementType::Edge => None,
    }
}

/// SOFA's `computeMass`: vertex and edge terms of every element with density `density[k]`
/// (edge terms first, skipped when lumped; then vertex terms).
pub fn compute_mass(
    t: ElementType,
    mesh: &MeshData,
    elem_edges: &ElementEdges,
    geo: &Geometry,
    ndof: usize,
    density: &[f64],
    lumped: bool,
) -> ComputedMass {
    let mut out = ComputedMass { vertex: vec![0.0; ndof], edge: vec![0.0; mesh.edges.len()], coeff: 0.0, total: 0.0 };
    let Some((vdiv, ediv, coeff)) = terms(t) else { return out };
    if geo.dim < t.min_dimension() {
        return out;
    }
    out.coeff = coeff;
    let n = t.count(mesh);
    let nv = t.nb_vertices() as f64;
    if !lumped {
        let ne = elem_edges.per as f64;
        for (k, &rho) in density.iter().enumerate().take(n) {
            let mass = (rho * geo.measure(t, t.vertices(mesh, k))) / ediv;
            for &e in elem_edges.of(k) {
                out.edge[e] += mass;
            }
            out.total += ne * mass * 2.0;
        }
    }
    for (k, &rho) in density.iter().enumerate().take(n) {
        let v = t.vertices(mesh, k);
        let mass = (rho * geo.measure(t, v)) / vdiv;
        for &i in v {
            out.vertex[i] += mass;
        }
        if lumped {
            out.total += nv * mass * coeff;
        } else {
            out.total += nv * mass;
        }
    }
    out
}

/// Consistent (or lumped) mass matrix of linear elements, integrating a density over the topology.
#[component(
    module = "Sofa.Component.Mass",
    roles = [Mass, ForceField],
    templates = ["Vec3d", "Vec2d", "Vec2d,Vec3d", "Vec1d", "Vec1d,Vec2d", "Vec1d,Vec3d"],
    template_rule = FromState,
    create = create,
    data = {
        /// mass density: one value, or one per element
        massDensity: Reals,
        /// total mass, spread by element measure (takes precedence over the other mass Data)
        totalMass: Real = "1",
        /// diagonal terms of the mass matrix, per vertex (output; input with lumping or edgeMass)
        vertexMass: Reals,
        /// off-diagonal terms of the mass matrix, per topology edge (output; input with vertexMass)
        edgeMass: Reals,
        /// measure the elements at the rest positions (else at the positions at init)
        computeMassOnRest: Bool = "false",
        /// lump the matrix: each row summed on the diagonal
        lumping: Bool = "false",
        /// print mass diagnostics
        printMass: Bool = "false",
    },
    links = {
        /// topology whose elements carry the mass (default: the context topology)
        topology: Topology,
        /// state whose positions measure the elements (default: the state of the topology's node)
        geometryState: MechanicalState,
    },
    inherit = [Self, GravityCenterData, MassData],
)]
#[derive(Clone)]
pub struct MeshMatrixMass {
    layout: Layout,
    /// Template of the geometry state (SOFA's `GeometricalTypes`).
    geometry_layout: Layout,
    state: Option<StateId>,
    vertex_mass: Vec<f64>,
    edge_mass: Vec<f64>,
    /// The topology's edges (the support of the off-diagonal terms).
    edges: Vec<[usize; 2]>,
    /// Lumping coefficient `c`.
    coeff: f64,
    lumping: bool,
    element_type: Option<ElementType>,
    mass_density: Vec<f64>,
    total_mass: f64,
    separate_gravity: bool,
    rayleigh_mass: f64,
    rayleigh_stiffness: f64,
}

/// Whether the mass list `name` has one value per `what` of the topology (`n`) and none negative;
/// a warning in `w` when not.
fn check_masses(w: &mut Vec<String>, name: &str, values: &[f64], n: usize, what: &str) -> bool {
    if values.len() != n {
        w.push(format!("{name} has {} values for the {n} {what} of the topology", values.len()));
        false
    } else if let Some(i) = values.iter().position(|&m| m < 0.0) {
        w.push(format!("{name}[{i}] = {} is negative", values[i]));
        false
    } else {
        true
    }
}

/// What the mass Data let `massInitialization` do.
struct Inputs<'a> {
    t: ElementType,
    mesh: &'a MeshData,
    elem_edges: &'a ElementEdges,
    geo: &'a Geometry,
    ndof: usize,
    lumped: bool,
}

impl Inputs<'_> {
    fn compute(&self, density: &[f64]) -> ComputedMass {
        compute_mass(self.t, self.mesh, self.elem_edges, self.geo, self.ndof, density, self.lumped)
    }
    /// Number of elements the densities refer to (SOFA's `checkMassDensity`; 0 for edges).
    fn nb_density_elements(&self) -> usize {
        match self.t {
            ElementType::Edge => 0,
            t => t.count(self.mesh),
        }
    }
}

impl MeshMatrixMass {
    pub fn new(layout: Layout, geometry_layout: Layout) -> MeshMatrixMass {
        MeshMatrixMass {
            layout,
            geometry_layout,
            state: None,
            vertex_mass: Vec::new(),
            edge_mass: Vec::new(),
            edges: Vec::new(),
            coeff: 0.0,
            lumping: false,
            element_type: None,
            mass_density: Vec::new(),
            total_mass: 1.0,
            separate_gravity: false,
            rayleigh_mass: 0.0,
            rayleigh_stiffness: 0.0,
        }
    }

    /// Diagonal terms `vm_i` (the lumped mass of DOF `i` is `c·vm_i`).
    pub fn vertex_mass(&self) -> &[f64] {
        &self.vertex_mass
    }
    /// Off-diagonal terms `em_e`, per topology edge.
    pub fn edge_mass(&self) -> &[f64] {
        &self.edge_mass
    }
    pub fn lumping_coefficient(&self) -> f64 {
        self.coeff
    }
    pub fn is_lumped(&self) -> bool {
        self.lumping
    }
    pub fn mass_density(&self) -> &[f64] {
        &self.mass_density
    }
    pub fn total_mass(&self) -> f64 {
        self.total_mass
    }
    pub fn element_type(&self) -> Option<ElementType> {
        self.element_type
    }

    /// `initFromTotalMass`: masses for density 1, scaled so they sum to `total`.
    fn init_from_total_mass(&mut self, inp: &Inputs, total: f64, warnings: &mut Vec<String>) {
        let mut tm = total;
        if tm < 0.0 {
            warnings.push(format!("totalMass = {tm} is negative: using the default totalMass = 1"));
            tm = 1.0;
        }
        let ones = vec![1.0; inp.nb_density_elements()];
        let c = inp.compute(&ones);
        let md = if c.total > f64::EPSILON { tm / c.total } else { 1.0 };
        self.mass_density = vec![md; inp.nb_density_elements()];
        self.total_mass = tm;
        self.coeff = c.coeff;
        self.vertex_mass = c.vertex.into_iter().map(|m| m * md).collect();
        self.edge_mass = c.edge.into_iter().map(|m| m * md).collect();
    }

    /// The density list, validated and expanded as `checkMassDensity` does.
    fn checked_density(inp: &Inputs, given: &[f64]) -> Result<Vec<f64>, String> {
        let n = inp.nb_density_elements();
        if given.is_empty() {
            return Err("massDensity is empty".into());
        }
        if inp.t != ElementType::Edge && given.len() != n && given.len() != 1 {
            return Err(format!("massDensity has {} values, it should have 1 or {n} (one per element)", given.len()));
        }
        if let Some(i) = given.iter().position(|&r| r < 0.0) {
            return Err(format!("massDensity[{i}] = {} is negative", given[i]));
        }
        Ok(if given.len() == 1 { vec![given[0]; n] } else { given.to_vec() })
    }

    /// SOFA's `massInitialization`.
    fn init_masses(&mut self, cx: &mut InitCtx, inp: &Inputs) {
        let d = cx.data();
        let (tm_set, md_set, vm_set, em_set) =
            (d.is_given(Self::TOTAL_MASS), d.is_given(Self::MASS_DENSITY), d.is_given(Self::VERTEX_MASS), d.is_given(Self::EDGE_MASS));
        let total = d.get(Self::TOTAL_MASS);
        let density = d.get(Self::MASS_DENSITY).to_vec();
        let vm = d.get(Self::VERTEX_MASS).to_vec();
        let em = d.get(Self::EDGE_MASS).to_vec();
        let np = geometry::nb_points(inp.mesh);
        let mut warnings = Vec::new();
        let check_vm = |w: &mut Vec<String>| check_masses(w, "vertexMass", &vm, np, "points");
        if tm_set || (!md_set && !vm_set) {
            if tm_set && (md_set || vm_set) {
                warnings.push("totalMass overrides the other mass information (vertexMass or massDensity)".into());
            }
            self.init_from_total_mass(inp, total, &mut warnings);
        } else if md_set {
            if vm_set {
                warnings.push("massDensity overrides vertexMass".into());
            }
            match Self::checked_density(inp, &density) {
                Ok(rho) => {
                    let c = inp.compute(&rho);
                    let mut sum = geometry::sum(&c.vertex);
                    if !inp.lumped {
                        sum += geometry::sum(&c.edge) * 2.0;
                    } else {
                        sum *= c.coeff;
                    }
                    self.mass_density = rho;
                    self.total_mass = sum;
                    self.coeff = c.coeff;
                    self.vertex_mass = c.vertex;
                    self.edge_mass = c.edge;
                }
                Err(e) => {
                    warnings.push(format!("{e}: the totalMass information is used"));
                    self.init_from_total_mass(inp, total, &mut warnings);
                }
            }
        } else if em_set || inp.lumped {
            let check_em = |w: &mut Vec<String>| check_masses(w, "edgeMass", &em, inp.mesh.edges.len(), "edges");
            // SOFA checks vertexMass first, edgeMass only if vertexMass is valid.
            let ok = check_vm(&mut warnings) && (!em_set || check_em(&mut warnings));
            if !ok {
                warnings.push("the totalMass information is used".into());
                self.init_from_total_mass(inp, total, &mut warnings);
            } else {
                // vertexMass (and edgeMass) used as given; the density is deduced from the
                // ρ = 1 measure, and totalMass = Σ vertexMass (+ Σ edgeMass, counted once).
                let mut tm = geometry::sum(&vm);
                if em_set {
                    tm = em.iter().fold(tm, |a, &x| a + x);
                }
                let ones = vec![1.0; inp.nb_density_elements()];
                let c = inp.compute(&ones);
                let volume = c.vertex.iter().fold(0.0, |a, &m| a + m * c.coeff);
                self.coeff = c.coeff;
                let md = tm / volume;
                // setMassDensity keeps the previous (unit) density when the new one is negative.
                self.mass_density = if md < 0.0 { ones } else { vec![md; inp.nb_density_elements()] };
                self.total_mass = tm;
                let mut v = vm.clone();
                v.resize(inp.ndof, 0.0);
                self.vertex_mass = v;
                self.edge_mass = if em_set { em.clone() } else { c.edge };
            }
        } else {
            warnings.push(
                "initialisation from vertexMass needs lumping=\"true\" or edgeMass (SOFA reports an error): the totalMass information is used".into(),
            );
            self.init_from_total_mass(inp, total, &mut warnings);
        }
        for w in warnings {
            cx.warn(w);
        }
    }
}

impl Component for MeshMatrixMass {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        (self.separate_gravity, self.rayleigh_mass, self.rayleigh_stiffness) = MassData::read(d);
        self.lumping = d.get(Self::LUMPING);
        let on_rest = d.get(Self::COMPUTE_MASS_ON_REST);
        let s = common::state_of_layout(cx, self.layout, "MeshMatrixMass supports Vec1d, Vec2d and Vec3d states")?;
        self.state = Some(s);
        let ndof = cx.state_size(s);

        let (topo, mesh, t) = common::element_topology(cx, "MeshMatrixMass")?;
        let gs = geometry::geometry_state(cx, topo, self.geometry_layout)?;
        let geo = geometry::read_geometry(cx, gs, on_rest, &mesh, t)?;
        if let Some((k, e)) = mesh.edges.iter().enumerate().find(|(_, e)| e.iter().any(|&i| i >= ndof)) {
            return Err(cx
                .error(format!("edge {k} {e:?} refers to a point beyond the {ndof} DOFs of the mechanical state"))
                .hint("the topology and the MechanicalObject must describe the same points"));
        }
        common::check_element_vertices(cx, t, &mesh, ndof)?;
        let elem_edges = geometry::edges_in_elements(&mesh, t).map_err(|m| {
            cx.error(format!("{} {} has an edge ({}, {}) that is not in the topology's edge list", t.name(), m.element, m.a, m.b))
                .hint("give the topology every edge of its elements, or let it derive the edges (leave `edges` empty)")
        })?;
        if t == ElementType::Edge {
            cx.warn("the topology has only edges: SOFA's MeshMatrixMass computes no mass for them, every mass is 0");
        } else if geo.dim < t.min_dimension() {
            cx.warn(format!(
                "the topology has {} but the geometry is {}-dimensional: SOFA computes no mass for them, every mass is 0",
                t.name(),
                geo.dim
            ));
        }
        self.element_type = Some(t);
        self.edges = mesh.edges.clone();
        let inp = Inputs { t, mesh: &mesh, elem_edges: &elem_edges, geo: &geo, ndof, lumped: self.lumping };
        self.init_masses(cx, &inp);

        if cx.data().get(Self::PRINT_MASS) || cx.data().get(BasePrintLog::PRINT_LOG) {
            let (min, max) = self.vertex_mass.iter().fold((f64::INFINITY, 0.0f64), |(a, b), &m| (a.min(m), b.max(m)));
            let msg = format!(
                "totalMass = {}, {} {}, vertexMass in [{min}, {max}], lumping coefficient {}",
                self.total_mass,
                t.count(&mesh),
                t.name(),
                self.coeff
            );
            let d = Diagnostic::info(msg).subject(cx.label());
            cx.scene.report(d);
        }
        let dm = cx.data_mut();
        dm.put(Self::VERTEX_MASS, self.vertex_mass.clone());
        dm.put(Self::EDGE_MASS, self.edge_mass.clone());
        dm.put(Self::MASS_DENSITY, self.mass_density.clone());
        dm.put(Self::TOTAL_MASS, self.total_mass);
        Ok(())
    }
}

common::mass_force_field!(MeshMatrixMass);

impl MeshMatrixMass {
    /// Gravity `f_i += g·vm_i·c`, lumped or not (`c·vm_i` is the row sum of the consistent
    /// matrix, so this is `M·g`).
    fn weight(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
        let coeff = self.coeff;
        common::add_weights(io.f[0], self.layout, p.gravity, |n| self.vertex_mass.iter().copied().enumerate().take(n), |g, m| g * m * coeff);
        Ok(())
    }
}

impl Mass for MeshMatrixMass {
    common::mass_items!(is_diagonal: |m| m.lumping, separate_gravity: |m| m.separate_gravity);

    /// Lumped: `res_i += dx_i·vm_i·c·factor`. Consistent: `res_i += dx_i·vm_i·factor` for every
    /// DOF, then for each edge `(a,b)`: `res_a += dx_b·em·factor`, `res_b += dx_a·em·factor`.
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        let ds = self.layout.deriv_size();
        let n = self.vertex_mass.len().min(dx.len() / ds).min(res.len() / ds);
        if self.lumping {
            for (i, &m) in self.vertex_mass.iter().enumerate().take(n) {
                for c in 0..ds {
                    res[i * ds + c] += dx[i * ds + c] * m * self.coeff * factor;
                }
            }
            return;
        }
        if ds == 3 {
            // The same operations in the same order, with the node triples as fixed-size arrays.
            let res3 = &mut res[..3 * n];
            let dx3 = &dx[..3 * n];
            for ((r, d), &m) in res3.chunks_exact_mut(3).zip(dx3.chunks_exact(3)).zip(&self.vertex_mass) {
                for c in 0..3 {
                    r[c] += d[c] * m * factor;
                }
            }
            for (e, &em) in self.edges.iter().zip(&self.edge_mass) {
                let t = em * factor;
                let (a, b) = (e[0], e[1]);
                if a >= n || b >= n {
                    continue;
                }
                let xb: [f64; 3] = dx3[3 * b..3 * b + 3].try_into().expect("triple");
                let ra: &mut [f64; 3] = (&mut res3[3 * a..3 * a + 3]).try_into().expect("triple");
                for c in 0..3 {
                    ra[c] += xb[c] * t;
                }
                let xa: [f64; 3] = dx3[3 * a..3 * a + 3].try_into().expect("triple");
                let rb: &mut [f64; 3] = (&mut res3[3 * b..3 * b + 3]).try_into().expect("triple");
                for c in 0..3 {
                    rb[c] += xa[c] * t;
                }
            }
            return;
        }
        for (i, &m) in self.vertex_mass.iter().enumerate().take(n) {
            for c in 0..ds {
                res[i * ds + c] += dx[i * ds + c] * m * factor;
            }
        }
        for (e, &em) in self.edges.iter().zip(&self.edge_mass) {
            let t = em * factor;
            let (a, b) = (e[0], e[1]);
            if a >= n || b >= n {
                continue;
            }
            for c in 0..ds {
                res[a * ds + c] += dx[b * ds + c] * t;
            }
            for c in 0..ds {
                res[b * ds + c] += dx[a * ds + c] * t;
            }
        }
    }

    /// Lumped only: `a_i = f_i / (vm_i·c)`.
    fn acc_from_f(&self, a: &mut [f64], f: &[f64]) -> SimResult {
        if !self.lumping {
            return Err(SimError::new("accFromF needs a diagonal mass: this MeshMatrixMass is not lumped").hint(
                "set lumping=\"true\" on the MeshMatrixMass (or use a DiagonalMass), or use an implicit ODE solver that solves with the full matrix",
            ));
        }
        let ds = self.layout.deriv_size();
        for (i, &m) in self.vertex_mass.iter().enumerate().take(a.len() / ds) {
            let mc = m * self.coeff;
            for c in 0..ds {
                a[i * ds + c] = f[i * ds + c] / mc;
            }
        }
        Ok(())
    }

    /// `v_i += g·h` on every DOF.
    fn add_gravity_to_v(&self, v: &mut [f64], g: [f64; 3], dt: f64) {
        common::add_gravity_to_v(v, self.layout.deriv_size(), self.layout.spatial_size(), g, dt);
    }

    /// Lumped: `vm_i·c` on the diagonal; consistent: `vm_i` on the diagonal and `em_e·I` on the
    /// blocks `(a,b)` and `(b,a)` of each edge.
    fn add_m_to_matrix(&self, acc: &mut MatrixAccumulator, factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("MeshMatrixMass used before init"))?;
        let ds = self.layout.deriv_size();
        if self.lumping {
            for (i, &m) in self.vertex_mass.iter().enumerate() {
                common::add_diagonal(acc, s, i, ds, (m * self.coeff) * factor);
            }
            return Ok(());
        }
        for (i, &m) in self.vertex_mass.iter().enumerate() {
            common::add_diagonal(acc, s, i, ds, m * factor);
        }
        for (e, &em) in self.edges.iter().zip(&self.edge_mass) {
            let v = em * factor;
            let (a, b) = (e[0], e[1]);
            for c in 0..ds {
                acc.add(s, a * ds + c, s, b * ds + c, v);
            }
            for c in 0..ds {
                acc.add(s, b * ds + c, s, a * ds + c, v);
            }
        }
        Ok(())
    }

    /// `½[Σ (v_i·v_i) vm_i c_L + Σ_e 2 (v_a·v_b) em_e]`, `c_L = c` when lumped (no edge term)
    /// else 1.
    fn kinetic_energy(&self, v: &[f64]) -> f64 {
        let ds = self.layout.deriv_size();
        let n = v.len() / ds;
        let dot = |a: usize, b: usize| -> f64 {
            let (x, y) = (&v[a * ds..(a + 1) * ds], &v[b * ds..(b + 1) * ds]);
            let mut s = x[0] * y[0];
            for c in 1..ds {
                s += x[c] * y[c];
            }
            s
        };
        let cl = if self.lumping { self.coeff } else { 1.0 };
        let mut e = 0.0;
        for (i, &m) in self.vertex_mass.iter().enumerate().take(n) {
            e += dot(i, i) * m * cl;
        }
        if !self.lumping {
            for (edge, &em) in self.edges.iter().zip(&self.edge_mass) {
                if edge[0] < n && edge[1] < n {
                    e += 2.0 * dot(edge[0], edge[1]) * em;
                }
            }
        }
        e / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::testing::*;
    use crate::DiagonalMass;

    fn mmm(b: &Built) -> &MeshMatrixMass {
        b.scene.get::<MeshMatrixMass>(b.mass).unwrap()
    }

    /// Row sums of the assembled matrix, one per DOF (first component).
    fn row_sums(m: &[f64], n: usize, ds: usize) -> Vec<f64> {
        let nn = n * ds;
        (0..n).map(|i| (0..nn).map(|j| m[i * ds * nn + j]).sum()).collect()
    }

    /// Checks a body of mass `total`: consistent and lumped matrices, their row sums, gravity,
    /// `add_mdx` against the assembled matrix, kinetic energy.
    fn check_body(topo: &[(&str, &str)], rho: f64, total: f64, per_vertex: Option<f64>) {
        let rho_s = rho.to_string();
        let mut cons = on_mesh("MeshMatrixMass", topo, &[("massDensity", &rho_s)]).unwrap();
        let mut lump = on_mesh("MeshMatrixMass", topo, &[("massDensity", &rho_s), ("lumping", "true")]).unwrap();
        let (n, ds) = (cons.size(), cons.deriv_size());
        let nn = n * ds;
        let mc = cons.matrix(1.0).unwrap();
        let ml = lump.matrix(1.0).unwrap();
        // the body's mass
        assert!((mc.iter().sum::<f64>() / ds as f64 - total).abs() < 1e-13 * total, "consistent sum");
        assert!((ml.iter().sum::<f64>() / ds as f64 - total).abs() < 1e-13 * total, "lumped sum");
        assert!((mmm(&cons).total_mass() - total).abs() < 1e-13 * total);
        assert!((mmm(&lump).total_mass() - total).abs() < 1e-13 * total);
        // row sums of the consistent matrix = lumped masses
        let rc = row_sums(&mc, n, ds);
        let lumped: Vec<f64> = (0..n).map(|i| ml[i * ds * nn + i * ds]).collect();
        assert_close(&rc, &lumped, 1e-14);
        if let Some(pv) = per_vertex {
            assert_close(&lumped, &vec![pv; n], 1e-14);
        }
        // the consistent matrix is symmetric, with em·I off-diagonal blocks
        for i in 0..nn {
            for j in 0..nn {
                assert_eq!(mc[i * nn + j], mc[j * nn + i]);
                if i % ds != j % ds {
                    assert_eq!(mc[i * nn + j], 0.0);
                }
            }
        }
        let g = params().gravity;
        let gv: Vec<f64> = (0..nn).map(|i| g[i % ds]).collect();
        for b in [&mut cons, &mut lump] {
            let m = b.matrix(1.0).unwrap();
            // gravity = M·g, lumped or not
            assert_close(&b.gravity_force(), &dense_mul(&m, &gv), 1e-13);
            // add_mdx = M·dx, with and without factor
            let dx = test_vector(nn);
            assert_close(&b.mdx(&dx, 1.0), &dense_mul(&m, &dx), 1e-14);
            let m2 = b.matrix(-0.35).unwrap();
            assert_close(&b.mdx(&dx, -0.35), &dense_mul(&m2, &dx), 1e-14);
            // kinetic energy = ½ vᵀMv
            let mdx = b.mdx(&dx, 1.0);
            let ke = b.scene.role::<dyn Mass>(b.mass).unwrap().kinetic_energy(&dx);
            let expected = 0.5 * dx.iter().zip(&mdx).map(|(x, y)| x * y).sum::<f64>();
            assert!((ke - expected).abs() < 1e-13 * (1.0 + expected.abs()), "{ke} vs {expected}");
        }
        assert!(!cons.scene.role::<dyn Mass>(cons.mass).unwrap().is_diagonal());
        assert!(lump.scene.role::<dyn Mass>(lump.mass).unwrap().is_diagonal());
    }

    #[test]
    fn unit_cube_hexahedron() {
        check_body(&[("position", CUBE_POS), ("hexahedra", HEXA)], 2.0, 2.0, Some(0.25));
        let b = on_mesh("MeshMatrixMass", &[("position", CUBE_POS), ("hexahedra", HEXA)], &[("massDensity", "2")]).unwrap();
        let m = mmm(&b);
        assert_eq!(m.element_type(), Some(ElementType::Hexahedron));
        assert_eq!(m.lumping_coefficient(), 2.5);
        assert_eq!(m.edge_mass().len(), 12);
        assert_close(m.vertex_mass(), &[0.1; 8], 1e-15);
        assert_close(m.edge_mass(), &[0.05; 12], 1e-15);
    }

    #[test]
    fn regular_tetrahedron() {
        let v = TETRA_VOLUME;
        check_body(&[("position", TETRA_POS), ("tetrahedra", "0 1 2 3")], 3.0, 3.0 * v, Some(3.0 * v / 4.0));
        let b = on_mesh("MeshMatrixMass", &[("position", TETRA_POS), ("tetrahedra", "0 1 2 3")], &[("massDensity", "3")]).unwrap();
        assert_close(mmm(&b).vertex_mass(), &[3.0 * v / 10.0; 4], 1e-15);
        assert_close(mmm(&b).edge_mass(), &[3.0 * v / 20.0; 6], 1e-15);
        assert_eq!(mmm(&b).mass_density(), &[3.0]);
    }

    #[test]
    fn unit_square_of_two_triangles() {
        check_body(&[("position", SQUARE_POS), ("triangles", SQUARE_TRIANGLES)], 3.0, 3.0, None);
        let b = on_mesh("MeshMatrixMass", &[("position", SQUARE_POS), ("triangles", SQUARE_TRIANGLES)], &[("massDensity", "3")]).unwrap();
        let m = mmm(&b);
        assert_eq!(m.lumping_coefficient(), 2.0);
        // the diagonal (0,2) is shared by both triangles
        let mesh_edges = &m.edges;
        let diag = mesh_edges.iter().position(|e| (e[0].min(e[1]), e[0].max(e[1])) == (0, 2)).unwrap();
        for (k, &em) in m.edge_mass().iter().enumerate() {
            let expected = if k == diag { 2.0 * 3.0 * 0.5 / 12.0 } else { 3.0 * 0.5 / 12.0 };
            assert!((em - expected).abs() < 1e-15);
        }
        // lumped masses equal DiagonalMass's
        let d = on_mesh("DiagonalMass", &[("position", SQUARE_POS), ("triangles", SQUARE_TRIANGLES)], &[("massDensity", "3")]).unwrap();
        let dm = d.scene.get::<DiagonalMass>(d.mass).unwrap().vertex_masses();
        let lumped: Vec<f64> = m.vertex_mass().iter().map(|v| v * m.lumping_coefficient()).collect();
        assert_close(&lumped, &dm, 1e-15);
    }

    #[test]
    fn quads_and_grids() {
        check_body(&[("position", SQUARE_POS), ("quads", "0 1 2 3")], 1.5, 1.5, Some(1.5 / 4.0));
        // a 3×2×2 grid: hexahedra win over its quads, triangles and edges (diagonal edges get 0)
        let mut b = build(
            None,
            &[],
            "RegularGridTopology",
            &[("n", "3 2 2"), ("min", "0 0 0"), ("max", "2 1 1")],
            "MeshMatrixMass",
            None,
            &[("totalMass", "4")],
        )
        .unwrap();
        let m = mmm(&b);
        assert_eq!(m.element_type(), Some(ElementType::Hexahedron));
        assert!(m.edge_mass().contains(&0.0));
        assert!((m.mass_density()[0] - 2.0).abs() < 1e-14);
        let mat = b.matrix(1.0).unwrap();
        assert!((mat.iter().sum::<f64>() / 3.0 - 4.0).abs() < 1e-13);
    }

    #[test]
    fn tetrahedral_mesh_scene() {
        // the unit cube as 6 tetrahedra, from a hand-made MeshTopology
        let topo = [("position", CUBE_POS), ("tetrahedra", CUBE_TETRAS)];
        check_body(&topo, 1000.0, 1000.0, None);
        let b = on_mesh("MeshMatrixMass", &topo, &[("totalMass", "5"), ("lumping", "true")]).unwrap();
        let m = mmm(&b);
        assert_eq!(m.element_type(), Some(ElementType::Tetrahedron));
        // edges derived by the MeshTopology from the tetrahedra: 12 cube edges + 6 face diagonals + 1 inner diagonal
        assert_eq!(m.edges.len(), 19);
        assert!(m.edge_mass().iter().all(|&e| e == 0.0), "lumped: no edge terms");
        // lumped MeshMatrixMass = DiagonalMass for tetrahedra
        let d = on_mesh("DiagonalMass", &topo, &[("totalMass", "5")]).unwrap();
        let dm = d.scene.get::<DiagonalMass>(d.mass).unwrap().vertex_masses();
        let lumped: Vec<f64> = m.vertex_mass().iter().map(|v| v * 2.5).collect();
        assert_close(&lumped, &dm, 1e-14);
        assert_eq!(m.total_mass(), 5.0);
        // each tetrahedron has volume 1/6; vertices 0 and 6 belong to 5 of them, vertex 2 to 1
        assert!((dm[0] - 25.0 / 24.0).abs() < 1e-14 && (dm[6] - 25.0 / 24.0).abs() < 1e-14, "{dm:?}");
        assert!((dm[2] - 5.0 / 24.0).abs() < 1e-14, "{dm:?}");
    }

    #[test]
    fn mass_data_precedence() {
        let topo = [("position", TETRA_POS), ("tetrahedra", "0 1 2 3")];
        let v = TETRA_VOLUME;
        // totalMass wins
        let b = on_mesh("MeshMatrixMass", &topo, &[("totalMass", "7"), ("massDensity", "3")]).unwrap();
        assert_eq!(mmm(&b).total_mass(), 7.0);
        assert!((mmm(&b).mass_density()[0] - 7.0 / v).abs() < 1e-13);
        assert!(b.warnings().iter().any(|w| w.contains("totalMass overrides")));
        // SOFA's arithmetic: ρ* = T / (Σ_e 6·(V/20)·2 + 4·(V/10)), then vm = (V/10)·ρ*
        let s = 6.0 * (v / 20.0) * 2.0 + 4.0 * (v / 10.0);
        assert_eq!(mmm(&b).vertex_mass()[0], (v / 10.0) * (7.0 / s));
        // nothing set: totalMass = 1
        let b = on_mesh("MeshMatrixMass", &topo, &[]).unwrap();
        assert_eq!(mmm(&b).total_mass(), 1.0);
        // one density per element
        let b = on_mesh("MeshMatrixMass", &[("position", CUBE_POS), ("tetrahedra", CUBE_TETRAS)], &[("massDensity", "1 1 1 1 1 7")]).unwrap();
        assert!((mmm(&b).total_mass() - 2.0).abs() < 1e-14);
        // a wrong-sized density list falls back to totalMass
        let b = on_mesh("MeshMatrixMass", &[("position", CUBE_POS), ("tetrahedra", CUBE_TETRAS)], &[("massDensity", "1 2")]).unwrap();
        assert_eq!(mmm(&b).total_mass(), 1.0);
        assert!(!b.warnings().is_empty());
    }

    #[test]
    fn vertex_and_edge_mass_inputs() {
        let topo = [("position", TETRA_POS), ("tetrahedra", "0 1 2 3")];
        // lumped with vertexMass: used as raw diagonal terms, times c
        let mut b = on_mesh("MeshMatrixMass", &topo, &[("vertexMass", "1 2 3 4"), ("lumping", "true")]).unwrap();
        assert_eq!(mmm(&b).vertex_mass(), &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(mmm(&b).total_mass(), 10.0);
        let m = b.matrix(1.0).unwrap();
        assert_eq!((m[0], m[3 * 12 + 3]), (2.5, 5.0));
        // vertexMass and edgeMass as given; totalMass counts each edge once (as SOFA)
        let b = on_mesh("MeshMatrixMass", &topo, &[("vertexMass", "1 1 1 1"), ("edgeMass", "0.5 0.5 0.5 0.5 0.5 0.5")]).unwrap();
        assert_eq!(mmm(&b).edge_mass(), &[0.5; 6]);
        assert_eq!(mmm(&b).total_mass(), 7.0);
        // vertexMass alone without lumping: falls back to totalMass
        let b = on_mesh("MeshMatrixMass", &topo, &[("vertexMass", "1 1 1 1")]).unwrap();
        assert_eq!(mmm(&b).total_mass(), 1.0);
        assert!(b.warnings().iter().any(|w| w.contains("lumping")), "{:?}", b.warnings());
    }

    #[test]
    fn acc_from_f_needs_lumping() {
        let topo = [("position", TETRA_POS), ("tetrahedra", "0 1 2 3")];
        let b = on_mesh("MeshMatrixMass", &topo, &[]).unwrap();
        let mut a = vec![0.0; 12];
        let e = b.scene.role::<dyn Mass>(b.mass).unwrap().acc_from_f(&mut a, &[1.0; 12]).err().unwrap();
        assert!(e.to_string().contains("lumped"), "{e}");
        let b = on_mesh("MeshMatrixMass", &topo, &[("lumping", "true")]).unwrap();
        let dx = test_vector(12);
        let f = b.mdx(&dx, 1.0);
        b.scene.role::<dyn Mass>(b.mass).unwrap().acc_from_f(&mut a, &f).unwrap();
        assert_close(&a, &dx, 1e-14);
    }

    #[test]
    fn through_the_mechanical_stages() {
        use settee_core::mechanics::{add_mbkdx, MechScope};
        use settee_core::{Mbk, Scene, VecId};
        let mut b = on_mesh("MeshMatrixMass", &[("position", CUBE_POS), ("tetrahedra", CUBE_TETRAS)], &[("totalMass", "2"), ("rayleighMass", "0.1")])
            .unwrap();
        let scope = MechScope::build(&b.scene, Scene::ROOT);
        let n = b.size() * 3;
        let dx = test_vector(n);
        b.scene.store.get_mut(b.state).set_vec(VecId::DX, dx.clone());
        b.scene.store.get_mut(b.state).write(VecId::DFORCE).fill(0.0);
        // m·M + b·B with Rayleigh mass: mEff = m − b·rayleighMass
        let f = Mbk { m: 1.0, b: 2.0, k: 0.0 };
        add_mbkdx(&mut b.scene, &scope, VecId::DFORCE, VecId::DX, f, false).unwrap();
        let got = b.scene.store.get(b.state).read(VecId::DFORCE).to_vec();
        assert_close(&got, &b.mdx(&dx, 1.0 - 2.0 * 0.1), 0.0);
    }

    #[test]
    fn invalid_topologies() {
        // an explicit edge list missing an edge of the tetrahedron
        let e =
            on_mesh("MeshMatrixMass", &[("position", TETRA_POS), ("tetrahedra", "0 1 2 3"), ("edges", "0 1 0 2 0 3 1 2 1 3")], &[]).err().unwrap();
        assert!(e.to_string().contains("(2, 3)"), "{e}");
        // pure edge topology: SOFA computes no mass
        let b = build(Some("Vec1d"), &[("position", "0 1 3")], "MeshTopology", &[("edges", "0 1  1 2")], "MeshMatrixMass", None, &[]).unwrap();
        assert!(mmm(&b).vertex_mass().iter().all(|&m| m == 0.0));
        assert_eq!(mmm(&b).lumping_coefficient(), 0.0);
        assert!(b.warnings().iter().any(|w| w.contains("only edges")));
    }

    #[test]
    fn geometry_template_of_another_state() {
        // Vec1d DOFs measured on the Vec3d geometry of the topology's state: templates mismatch
        // unless the mass says `Vec1d,Vec3d` and points at it
        let f = factory();
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        f.create(&mut scene, Scene::ROOT, "MeshTopology", None, attrs(&[("position", TETRA_POS), ("tetrahedra", "0 1 2 3")]), None, dir).unwrap();
        f.create(&mut scene, Scene::ROOT, "MechanicalObject", None, attrs(&[("name", "geo")]), None, dir).unwrap();
        let child = scene.add_node(Scene::ROOT, "temperature");
        let mo = f.create(&mut scene, child, "MechanicalObject", Some("Vec1d"), attrs(&[("position", "0 0 0 0")]), None, dir).unwrap();
        let mass = f
            .create(&mut scene, child, "MeshMatrixMass", Some("Vec1d,Vec3d"), attrs(&[("massDensity", "2"), ("lumping", "true")]), None, dir)
            .unwrap();
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        settee_core::simulation::init_root(&mut scene, &f).unwrap();
        let m = scene.get::<MeshMatrixMass>(mass).unwrap();
        assert!((m.total_mass() - 2.0 * TETRA_VOLUME).abs() < 1e-13);
        assert_eq!(scene.store.get(scene.state_of(mo).unwrap()).layout, Layout::Vec1);
    }

    use settee_core::Scene;
}
