//! `TrianglePressureForceField`: a pressure on selected triangles (SOFA's
//! `TrianglePressureForceField`, as of v24.06).
//!
//! The triangles are `triangleList` (typically a BoxROI's `triangleIndices`), indices into the
//! topology's triangles. With `useConstantForce` (default), each triangle's force is
//! `pressure·area` with the area of the **rest** triangle, fixed at init, and a third of it is
//! added to each of its vertices. Otherwise the force on each vertex is `σ·(e1 × e2)/6` with the
//! current edge vectors `e1 = x1 − x0`, `e2 = x2 − x0` and the symmetric `cauchyStress` σ
//! (`pressure` is then unused). The force has no derivative in SOFA (`addDForce` does nothing, no
//! stiffness matrix), also in the position-dependent case.
//!
//! `normal`, `dmin` and `dmax` (triangle selection by a slab, removed from SOFA in v24.06) are
//! accepted and ignored, as SOFA ignores unknown attributes.

use settee_core::component::ForceField;
use settee_core::role::{MechanicalState, Topology};
use settee_core::{component, Component, ForceIo, InitCtx, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// A symmetric 3×3 matrix stored `[xx, xy, yy, xz, yz, zz]` (SOFA's `MatSym<3>`).
pub type MatSym3 = [f64; 6];

fn sym(m: &MatSym3, i: usize, j: usize) -> f64 {
    let (a, b) = if i >= j { (i, j) } else { (j, i) };
    m[a * (a + 1) / 2 + b]
}

/// SOFA's `MatSym` text: optional brackets and commas, then 9 values row by row, each written to
/// the symmetric slot `(i, j)` (so the lower triangle wins). Missing values keep zero.
pub fn parse_matsym3(text: &str) -> Result<MatSym3, String> {
    let mut m = [0.0; 6];
    let cleaned: String = text.chars().map(|c| if c == '[' || c == ']' || c == ',' { ' ' } else { c }).collect();
    for (k, tok) in cleaned.split_whitespace().take(9).enumerate() {
        let v: f64 = tok.parse().map_err(|_| format!("'{tok}' is not a number"))?;
        let (i, j) = (k / 3, k % 3);
        let (a, b) = if i >= j { (i, j) } else { (j, i) };
        m[a * (a + 1) / 2 + b] = v;
    }
    Ok(m)
}

/// Pressure forces on a set of triangles.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    create = |_| TrianglePressureForceField::new(),
    data = {
        /// pressure force per unit area (a vector)
        pressure: Deriv as Vec3 = "0 0 0",
        /// symmetric Cauchy stress applied to the triangles' area vectors when useConstantForce is false (9 values, row by row; the lower triangle is kept)
        cauchyStress: Str,
        /// indices of the triangles the pressure acts on
        triangleList: Indices,
        /// draw the loaded triangles (rendering only)
        showForces: Bool = "false",
        /// the force is the pressure times the rest area (else: the Cauchy stress on the current area vector)
        useConstantForce: Bool = "true",
        /// removed from SOFA in v24.06 (selection of triangles by a slab): ignored
        normal: Fixed(3) as Reals = "0 0 0",
        /// removed from SOFA in v24.06: ignored
        dmin: Real = "0",
        /// removed from SOFA in v24.06: ignored
        dmax: Real = "0",
        /// Rayleigh damping coefficient related to stiffness (no effect: no stiffness)
        rayleighStiffness: Real = "0",
    },
    links = {
        /// mechanical state (default: the node's context state)
        mstate: MechanicalState,
        /// triangle topology (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct TrianglePressureForceField {
    state: Option<StateId>,
    /// The loaded triangles (vertex indices).
    triangles: Vec<[usize; 3]>,
    /// Per triangle, `pressure·area` of the rest triangle.
    forces: Vec<[f64; 3]>,
    constant: bool,
    cauchy: MatSym3,
}

impl TrianglePressureForceField {
    pub fn new() -> TrianglePressureForceField {
        TrianglePressureForceField { state: None, triangles: Vec::new(), forces: Vec::new(), constant: true, cauchy: [0.0; 6] }
    }

    /// The force of each loaded triangle (the whole triangle's; each vertex gets a third).
    pub fn triangle_forces(&self) -> &[[f64; 3]] {
        &self.forces
    }
}

impl Default for TrianglePressureForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for TrianglePressureForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        if cx.state_layout(s) != settee_core::Layout::Vec3 {
            return Err(cx.error(format!("the mechanical state is a {} state: TrianglePressureForceField needs Vec3d", cx.state_layout(s).name())));
        }
        self.state = Some(s);
        let d = cx.data();
        if d.is_given(Self::NORMAL) || d.is_given(Self::DMIN) || d.is_given(Self::DMAX) {
            cx.warn("normal/dmin/dmax (selection of triangles by a slab) were removed from SOFA in v24.06 and are ignored: list the triangles in triangleList (e.g. from a BoxROI)");
        }
        let d = cx.data();
        self.constant = d.get(Self::USE_CONSTANT_FORCE);
        self.cauchy = parse_matsym3(d.get(Self::CAUCHY_STRESS)).map_err(|m| cx.error(format!("cauchyStress: {m}")))?;
        let pressure = d.get(Self::PRESSURE);
        let list = d.get(Self::TRIANGLE_LIST).to_vec();
        self.triangles.clear();
        self.forces.clear();
        if list.is_empty() {
            return Ok(());
        }
        let mesh = cx.require_mesh()?;
        let rest = cx.rest_or_position(s);
        let n = rest.len() / 3;
        for &t in &list {
            let tri = *mesh.triangles.get(t).ok_or_else(|| {
                cx.error(format!("triangleList refers to triangle {t} but the topology has {} triangles", mesh.triangles.len()))
                    .hint("triangleList holds indices into the topology's triangles (e.g. a BoxROI's triangleIndices)")
            })?;
            if let Some(&p) = tri.iter().find(|&&p| p >= n) {
                return Err(cx.error(format!("triangle {t} refers to point {p} but the mechanical state has {n} DOFs")));
            }
            let p = |i: usize| [rest[3 * i], rest[3 * i + 1], rest[3 * i + 2]];
            let (p0, p1, p2) = (p(tri[0]), p(tri[1]), p(tri[2]));
            let a = [p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]];
            let b = [p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]];
            let c = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
            let area = 0.5 * (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
            self.triangles.push(tri);
            self.forces.push(pressure.map(|q| q * area));
        }
        Ok(())
    }
}

impl ForceField for TrianglePressureForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        let f = &mut io.f[0];
        let n = f.len() / 3;
        if let Some(&p) = self.triangles.iter().flatten().find(|&&p| p >= n) {
            return Err(SimError::new(format!("TrianglePressureForceField: point {p} is beyond the state's {n} DOFs")));
        }
        if self.constant {
            for (tri, tf) in self.triangles.iter().zip(&self.forces) {
                let force = tf.map(|c| c / 3.0);
                for &v in tri {
                    for c in 0..3 {
                        f[3 * v + c] += force[c];
                    }
                }
            }
        } else {
            for tri in &self.triangles {
                let p = |i: usize| [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
                let (p0, p1, p2) = (p(tri[0]), p(tri[1]), p(tri[2]));
                let a = [p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]];
                let b = [p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]];
                let c = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
                let area_vector = c.map(|v| v / 6.0);
                let mut force = [0.0; 3];
                for (i, fi) in force.iter_mut().enumerate() {
                    *fi = sym(&self.cauchy, i, 0) * area_vector[0]
                        + sym(&self.cauchy, i, 1) * area_vector[1]
                        + sym(&self.cauchy, i, 2) * area_vector[2];
                }
                for &v in tri {
                    for c in 0..3 {
                        f[3 * v + c] += force[c];
                    }
                }
            }
        }
        Ok(())
    }

    /// SOFA provides no derivative for this force.
    fn add_dforce(&mut self, _p: &MechParams, _io: &mut ForceIo, _k: f64, _b: f64) -> SimResult {
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _k: f64) -> SimResult {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    use super::{parse_matsym3, TrianglePressureForceField};
    use crate::test_support::*;

    /// Two triangles of the unit square in the z = 0 plane plus a third one reaching x = 2; a
    /// BoxROI around the square selects the first two.
    fn scene(ff: &[(&str, &str)]) -> (Scene, settee_core::ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0  1 1 0  0 1 0  2 0 0")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 3  1 2 3  1 4 2")]);
        add(&mut s, &f, Scene::ROOT, "BoxROI", &[("name", "roi"), ("box", "-0.1 -0.1 -0.1  1.1 1.1 0.1")]);
        let mut attrs = vec![("triangleList", "@roi.triangleIndices")];
        attrs.extend_from_slice(ff);
        let c = add(&mut s, &f, Scene::ROOT, "TrianglePressureForceField", &attrs);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    #[test]
    fn constant_pressure_on_the_selected_triangles() {
        let (mut s, c) = scene(&[("pressure", "0 0 6")]);
        let ff = s.get::<TrianglePressureForceField>(c).unwrap();
        // Triangles 0 and 1 (area ½ each) are in the box; each pushes p·A/3 = 1 on its vertices.
        assert_eq!(ff.triangle_forces(), &[[0.0, 0.0, 3.0], [0.0, 0.0, 3.0]]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        assert_close(&fv, &[0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0], 1e-15);
        // The rest area is used: moving the points changes nothing; no derivative.
        let mut x = vec![0.0; 15];
        x[3] = 5.0;
        settee_core::mechanics::scatter(&mut s, &scope, settee_core::VecId::POSITION, &x);
        assert_close(&forces(&mut s, &scope), &fv, 0.0);
        assert!(dforce_mbk(&mut s, &scope, &random_vec(15, 1), 1.0, 1.0).iter().all(|v| *v == 0.0));
    }

    #[test]
    fn cauchy_stress_on_the_current_area_vector() {
        let (mut s, _) = scene(&[("useConstantForce", "false"), ("pressure", "9 9 9"), ("cauchyStress", "[1 0 0, 0 2 0, 0 0 3]")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        // Each triangle: area vector (0, 0, 1)/6, force σ·a = (0, 0, ½) on each of its vertices.
        let fv = forces(&mut s, &scope);
        assert_close(&fv, &[0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], 1e-15);
        // MatSym text: 9 values, the lower triangle wins.
        assert_eq!(parse_matsym3("1 2 3 4 5 6 7 8 9").unwrap(), [1.0, 4.0, 5.0, 7.0, 8.0, 9.0]);
    }

    #[test]
    fn an_unknown_triangle_is_an_error() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0  0 1 0")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 2")]);
        add(&mut s, &f, Scene::ROOT, "TrianglePressureForceField", &[("triangleList", "1"), ("pressure", "1 0 0")]);
        let e = init_root(&mut s, &f).unwrap_err();
        assert!(e.diagnostic().message.contains("triangle 1"), "{e}");
    }
}
