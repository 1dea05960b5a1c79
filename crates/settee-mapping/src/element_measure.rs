//! `AreaMapping` (triangles) and `VolumeMapping` (tetrahedra), Vec3d → Vec1d: one scalar per
//! element of a topology, its area `|N|/2` (`N = (x1 − x0) × (x2 − x0)`) or its signed volume
//! `(x1 − x0)·((x2 − x0) × (x3 − x0))/6`.
//!
//! `apply` caches the positions and the Jacobian (rows in increasing vertex order, as SOFA
//! inserts them): for a triangle `∂A/∂x0 = (x1 − x2) × N / 2|N|`, `∂A/∂x1 = (x2 − x0) × N / 2|N|`,
//! `∂A/∂x2 = −(x1 − x0) × N / 2|N|`; for a tetrahedron with `e_k = x_k − x0`,
//! `∂V/∂x1 = e2 × e3/6`, `∂V/∂x2 = e3 × e1/6`, `∂V/∂x3 = e1 × e2/6`, `∂V/∂x0` their opposite sum.
//!
//! The geometric stiffness is `f·∂²(measure)/∂x²` per element with SOFA's closed forms (the
//! volume's Hessian blocks are `[x_a − x_b]×/6`), for every element with `Exact` and only for the
//! elements whose child force is negative with `Stabilized` (the default).

use settee_core::component::{Mapping, SparseRows};
use settee_core::role::Topology;
use settee_core::{Component, InitCtx, Layout, MatrixAccumulator, SimError, SimResult, StateId};

use crate::common::{
    check_len, cross, dot, finish_init, mapping_ports, resolve_mechanical_ports, scale, sub, v3, GeometricStiffness, MappingData, Ports,
    GEOMETRIC_STIFFNESS_OPTIONS, M3, V3,
};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec3, Layout::Vec1)];

/// Which measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    Area,
    Volume,
}

crate::common::mapping_class! {
    with {
        /// link to the topology container
        topology: Topology,
    }
    {
        templates = ["Vec3d,Vec1d"],
        default_template = "Vec3d,Vec1d",
        inherit = [MappingData, Self],
        data = {
            /// Method used to compute the geometric stiffness: None (not computed), Exact, or Stabilized (only the elements whose child force is negative)
            geometricStiffness: Options(GEOMETRIC_STIFFNESS_OPTIONS) = "Stabilized",
        },
        class(
            name = "AreaMapping", module = "Sofa.Component.Mapping.NonLinear",
            description = "Maps point positions to the areas of the topology's triangles.",
            create = |_| ElementMeasureMapping::new(Measure::Area),
        ),
        class(
            name = "VolumeMapping", module = "Sofa.Component.Mapping.NonLinear",
            description = "Maps point positions to the signed volumes of the topology's tetrahedra.",
            create = |_| ElementMeasureMapping::new(Measure::Volume),
        ),
    }
    /// The two mappings.
    #[derive(Clone)]
    pub struct ElementMeasureMapping {
        measure: Measure,
        ports: Ports,
        /// Vertices of each element (3 or 4).
        elements: Vec<Vec<usize>>,
        n_in: usize,
        gs: GeometricStiffness,
        /// Cached by `apply`: the input positions and the Jacobian.
        x: Vec<f64>,
        jac: SparseRows,
        /// The output force of the last `update_k` when it kept an element; empty otherwise.
        k_force: Vec<f64>,
    }
}

/// `[v]×`, the matrix of `w ↦ v × w`.
fn skew(v: V3) -> M3 {
    [[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]]
}

fn transpose(m: &M3) -> M3 {
    [[m[0][0], m[1][0], m[2][0]], [m[0][1], m[1][1], m[2][1]], [m[0][2], m[1][2], m[2][2]]]
}

/// SOFA's second derivative of a triangle's area: block `(i, j)` is `∂²A/∂x_i∂x_j`.
pub fn area_hessian(v: [V3; 3]) -> [[M3; 3]; 3] {
    let n = cross(sub(v[1], v[0]), sub(v[2], v[0]));
    let n2 = dot(n, n);
    let ka = 1.0 / (2.0 * n2.powi(3).sqrt());
    // crossProductMatrix(1 1 1): the sign of the [N]× term of the off-diagonal blocks
    let skew_sign = skew([1.0, 1.0, 1.0]);
    let mut h = [[[[0.0; 3]; 3]; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            let (i1, i2, j1, j2) = ((i + 1) % 3, (i + 2) % 3, (j + 1) % 3, (j + 2) % 3);
            let (di, dj) = (sub(v[i1], v[i2]), sub(v[j1], v[j2]));
            let (a, b) = (cross(n, di), cross(n, dj));
            let d = dot(di, dj);
            let mut e = [[0.0; 3]; 3];
            for r in 0..3 {
                for c in 0..3 {
                    let id = if r == c { d } else { 0.0 };
                    e[r][c] = -(a[r] * b[c]) + n2 * (id - dj[r] * di[c]);
                }
            }
            if i != j {
                let s = skew_sign[i][j];
                let nx = skew(n);
                for r in 0..3 {
                    for c in 0..3 {
                        e[r][c] += s * n2 * nx[r][c];
                    }
                }
            }
            for row in e.iter_mut() {
                for x in row.iter_mut() {
                    *x *= ka;
                }
            }
            h[i][j] = e;
        }
    }
    h
}

/// SOFA's second derivative of a tetrahedron's signed volume (zero diagonal blocks).
pub fn volume_hessian(v: [V3; 4]) -> [[M3; 4]; 4] {
    let six = |m: M3| m.map(|r| r.map(|x| x / 6.0));
    let pairs = [
        (0, 1, sub(v[2], v[3])),
        (0, 2, sub(v[3], v[1])),
        (0, 3, sub(v[1], v[2])),
        (1, 2, sub(v[0], v[3])),
        (1, 3, sub(v[2], v[0])),
        (2, 3, sub(v[0], v[1])),
    ];
    let mut h = [[[[0.0; 3]; 3]; 4]; 4];
    for (a, b, d) in pairs {
        let m = six(skew(d));
        h[a][b] = m;
        h[b][a] = transpose(&m);
    }
    h
}

impl ElementMeasureMapping {
    pub fn new(measure: Measure) -> Self {
        ElementMeasureMapping {
            measure,
            ports: Ports::default(),
            elements: Vec::new(),
            n_in: 0,
            gs: GeometricStiffness::Stabilized,
            x: Vec::new(),
            jac: SparseRows::new(0, 0),
            k_force: Vec::new(),
        }
    }

    /// A mapping built directly (tests): `n_in` points, the elements (3 or 4 vertices).
    pub fn build(measure: Measure, input: StateId, output: StateId, n_in: usize, elements: Vec<Vec<usize>>, gs: GeometricStiffness) -> Self {
        ElementMeasureMapping { ports: Ports::direct(&[input], Layout::Vec3, output, Layout::Vec1), elements, n_in, gs, ..Self::new(measure) }
    }

    /// The measure and its gradient (one vector per vertex) of element `e` at positions `x`.
    fn measure_and_gradient(&self, e: &[usize], x: &[f64]) -> (f64, Vec<V3>) {
        let p: Vec<V3> = e.iter().map(|&i| v3(&x[3 * i..])).collect();
        match self.measure {
            Measure::Area => {
                let (n01, n02) = (sub(p[1], p[0]), sub(p[2], p[0]));
                let n = cross(n01, n02);
                let norm = dot(n, n).sqrt();
                let k = 1.0 / (2.0 * norm);
                (0.5 * norm, vec![scale(cross(sub(p[1], p[2]), n), k), scale(cross(n02, n), k), scale(cross(n01, n), -k)])
            }
            Measure::Volume => {
                let v = [sub(p[1], p[0]), sub(p[2], p[0]), sub(p[3], p[0])];
                let vol = dot(v[0], cross(v[1], v[2])) / 6.0;
                let c = [cross(v[1], v[2]), cross(v[2], v[0]), cross(v[0], v[1])].map(|w| w.map(|x| x / 6.0));
                let c0 = [0, 1, 2].map(|k| -(c[0][k] + c[1][k] + c[2][k]));
                (vol, vec![c0, c[0], c[1], c[2]])
            }
        }
    }

    /// The Hessian blocks of element `e` at the cached positions.
    fn hessian(&self, e: &[usize]) -> Vec<Vec<M3>> {
        let p = |k: usize| v3(&self.x[3 * e[k]..]);
        match self.measure {
            Measure::Area => area_hessian([p(0), p(1), p(2)]).iter().map(|r| r.to_vec()).collect(),
            Measure::Volume => volume_hessian([p(0), p(1), p(2), p(3)]).iter().map(|r| r.to_vec()).collect(),
        }
    }

    fn ready(&self) -> SimResult {
        if self.jac.rows.len() != self.elements.len() {
            return Err(SimError::new("the mapping was never applied (its Jacobian is not computed)"));
        }
        Ok(())
    }

    fn apply_djt_with(&self, df: &mut [f64], dx: &[f64], f_out: &[f64], k_factor: f64) -> SimResult {
        check_len("the output forces", f_out, self.elements.len(), 1)?;
        check_len("the input displacements", dx, self.n_in, 3)?;
        for (ei, e) in self.elements.iter().enumerate() {
            let f = f_out[ei];
            if !self.gs.keeps(f) {
                continue;
            }
            let h = self.hessian(e);
            for (i, &a) in e.iter().enumerate() {
                for (j, &b) in e.iter().enumerate() {
                    let m = &h[i][j];
                    let d = v3(&dx[3 * b..]);
                    for r in 0..3 {
                        df[3 * a + r] += k_factor * (m[r][0] * d[0] + m[r][1] * d[1] + m[r][2] * d[2]) * f;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Component for ElementMeasureMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, false, "a Vec1d MechanicalObject", TEMPLATES)?;
        self.gs = GeometricStiffness::from_name(cx.data().get(Self::GEOMETRIC_STIFFNESS));
        let topo = cx.link_targets("topology").first().copied().or_else(|| cx.topology());
        let Some(mesh) = topo.and_then(|t| cx.scene.mesh_of(t)) else {
            return Err(cx.error("no topology found").hint("set topology=\"@path/to/container\""));
        };
        let (what, elements, other): (&str, Vec<Vec<usize>>, usize) = match self.measure {
            Measure::Area => ("triangles", mesh.triangles.iter().map(|t| t.to_vec()).collect(), mesh.quads.len()),
            Measure::Volume => ("tetrahedra", mesh.tetrahedra.iter().map(|t| t.to_vec()).collect(), mesh.hexahedra.len()),
        };
        if elements.is_empty() {
            return Err(cx.error(format!("the topology has no {what}")).hint(format!("link `topology` to a container of {what}")));
        }
        if other > 0 {
            let (o, conv) = if self.measure == Measure::Area { ("quads", "triangles") } else { ("hexahedra", "tetrahedra") };
            return Err(cx.error(format!("the topology has {o}, which this mapping does not support")).hint(format!("convert them to {conv}")));
        }
        self.n_in = cx.state_size(self.ports.inputs[0]);
        if let Some(e) = elements.iter().find(|e| e.iter().any(|&i| i >= self.n_in)) {
            return Err(cx.error(format!("element {e:?} refers to a point beyond the input's {} points", self.n_in)));
        }
        self.elements = elements;
        self.jac = SparseRows::new(0, 0);
        let n = self.elements.len();
        finish_init(cx, n, self)
    }
}

impl Mapping for ElementMeasureMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        check_len("the input positions", x, self.n_in, 3)?;
        check_len("the output positions", out, self.elements.len(), 1)?;
        let mut jac = SparseRows::new(self.elements.len(), 3 * self.n_in);
        for (ei, e) in self.elements.iter().enumerate() {
            let (m, g) = self.measure_and_gradient(e, x);
            out[ei] = m;
            let mut entries: Vec<(usize, V3)> = e.iter().copied().zip(g).collect();
            entries.sort_by_key(|en| en.0);
            jac.rows[ei] = entries.iter().flat_map(|(i, g)| (0..3).map(move |d| (3 * i + d, g[d]))).collect();
        }
        self.jac = jac;
        self.x.clear();
        self.x.extend_from_slice(&x[..3 * self.n_in]);
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.ready()?;
        check_len("the input velocities", inputs[0], self.n_in, 3)?;
        check_len("the output velocities", out, self.elements.len(), 1)?;
        self.jac.mul(&mut out[..self.elements.len()], inputs[0]);
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        self.ready()?;
        check_len("the input forces", inputs[0], self.n_in, 3)?;
        check_len("the output forces", out, self.elements.len(), 1)?;
        self.jac.add_mul_transpose(inputs[0], out);
        Ok(())
    }

    /// SOFA's `updateK`: the stiffness for `f_out` is kept if it has an element.
    fn update_k(&mut self, f_out: &[f64]) -> SimResult {
        self.k_force.clear();
        if self.ports.map_forces
            && self.gs != GeometricStiffness::None
            && f_out.len() == self.elements.len()
            && f_out.iter().any(|&f| self.gs.keeps(f))
        {
            self.k_force.extend_from_slice(f_out);
        }
        Ok(())
    }

    fn apply_djt(&mut self, inputs: &mut [&mut [f64]], dx_in: &[&[f64]], f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || self.gs == GeometricStiffness::None || self.x.is_empty() {
            return Ok(());
        }
        let f = if self.k_force.is_empty() { f_out } else { &self.k_force };
        self.apply_djt_with(inputs[0], dx_in[0], f, k_factor)
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        if !self.ports.map_forces {
            return Ok(vec![SparseRows::new(self.elements.len(), 3 * self.n_in)]);
        }
        self.ready()?;
        Ok(vec![self.jac.clone()])
    }

    fn add_geometric_stiffness(&self, m: &mut MatrixAccumulator, f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || self.gs == GeometricStiffness::None || self.x.is_empty() {
            return Ok(());
        }
        check_len("the output forces", f_out, self.elements.len(), 1)?;
        let s = self.ports.inputs[0];
        for (ei, e) in self.elements.iter().enumerate() {
            let f = f_out[ei];
            if !self.gs.keeps(f) {
                continue;
            }
            let h = self.hessian(e);
            for (i, &a) in e.iter().enumerate() {
                for (j, &b) in e.iter().enumerate() {
                    let data: Vec<f64> = h[i][j].iter().flatten().map(|x| x * f * k_factor).collect();
                    m.add_block(s, 3 * a, s, 3 * b, 3, 3, &data);
                }
            }
        }
        Ok(())
    }
}
