//! `DiagonalMass`: a lumped mass per vertex, integrated over the elements of the topology
//! (SOFA's `DiagonalMass`, spec mechanics §5.2).
//!
//! Element type: the first non-empty list among hexahedra, tetrahedra, quads, triangles, edges.
//! Each element adds `ρ·measure / #vertices` to each of its vertices (see [`crate::geometry`]
//! for the measures). Precedence of the mass Data: `totalMass` set → density deduced from the
//! ρ = 1 masses; else `massDensity`; else `vertexMass`; nothing set → `totalMass` = 1.
//!
//! Rigid3d: as in SOFA, the masses are the `vertexMass` list as given (11 numbers per DOF:
//! `mass volume I00 I01 … I22`, inertia per unit mass); the topology is not used.

use settee_core::component::{CreateArgs, Mass};
use settee_core::role::{MechanicalState, Topology};
use settee_core::{
    component, Component, ForceField, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, MeshData, SimError, SimResult, StateId,
};

use settee_core::topology_change::{validate, ChangeError, ElementData, ElementKind, Follow, TopologyChange};

use crate::common::{self, GravityCenterData, MassData};
use crate::geometry::{self, mat_vec, ElementType, Geometry};
use crate::RigidMass;

fn create(args: &CreateArgs) -> DiagonalMass {
    let layout = args.layout.unwrap_or(Layout::Vec3);
    let geometry = args.template.split(',').nth(1).and_then(|t| Layout::from_name(t.trim())).unwrap_or(layout);
    DiagonalMass::new(layout, geometry)
}

/// Number of reals of one Rigid3d `vertexMass` entry.
const RIGID3_MASS_SIZE: usize = 11;

/// Lumped (diagonal) mass matrix integrating a density over the elements of the topology.
#[component(
    module = "Sofa.Component.Mass",
    roles = [Mass, ForceField],
    templates = ["Vec3d", "Vec3d,Vec3d", "Vec2d", "Vec2d,Vec2d", "Vec2d,Vec3d", "Vec1d", "Vec1d,Vec1d", "Vec1d,Vec2d", "Vec1d,Vec3d", "Rigid3d", "Rigid3d,Rigid3d"],
    template_rule = FromState,
    create = create,
    preparse = crate::uniform_mass::read_inertia_brackets,
    data = {
        /// mass of each vertex (Rigid3d: `mass volume I00 … I22` per DOF, the inertia possibly written as SOFA's matrices are, `[I00 I01 I02,I10 I11 I12,I20 I21 I22]`); output when computed
        vertexMass: Reals,
        /// mass density of the elements (used when totalMass is not set)
        massDensity: Real = "1",
        /// total mass, spread by element measure (takes precedence over massDensity and vertexMass)
        totalMass: Real = "1",
        /// measure the elements at the rest positions (else at the positions)
        computeMassOnRest: Bool = "true",
        /// Xsp file giving the masses (not supported)
        #[alias("fileMass")]
        filename: FileName,
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
pub struct DiagonalMass {
    layout: Layout,
    /// Template of the geometry state (SOFA's `GeometricalTypes`).
    geometry_layout: Layout,
    state: Option<StateId>,
    /// Mass of each DOF (Vec templates).
    masses: Vec<f64>,
    /// Mass of each DOF (Rigid3d).
    rigid: Vec<RigidMass>,
    element_type: Option<ElementType>,
    mass_density: f64,
    total_mass: f64,
    separate_gravity: bool,
    rayleigh_mass: f64,
    rayleigh_stiffness: f64,
    /// Rest positions of the geometry as the change log goes (SOFA's handlers measure created
    /// and removed elements on the rest positions of the moment).
    rest: Geometry,
}

/// The element kind of a mass element type.
fn kind_of(t: ElementType) -> ElementKind {
    match t {
        ElementType::Edge => ElementKind::Edge,
        ElementType::Triangle => ElementKind::Triangle,
        ElementType::Quad => ElementKind::Quad,
        ElementType::Tetrahedron => ElementKind::Tetrahedron,
        ElementType::Hexahedron => ElementKind::Hexahedron,
    }
}

/// Masses of the vertices and their sum for density `density` (SOFA's `computeVertexMass`):
/// elements in topology order, `ρ·measure/#vertices` added to each vertex and to the total.
pub fn compute_vertex_mass(t: ElementType, mesh: &MeshData, geo: &Geometry, ndof: usize, density: f64) -> (Vec<f64>, f64) {
    let mut masses = vec![0.0; ndof];
    let mut total = 0.0;
    if geo.dim >= t.min_dimension() {
        let k = t.nb_vertices() as f64;
        for e in 0..t.count(mesh) {
            let v = t.vertices(mesh, e);
            let mass = (density * geo.measure(t, v)) / k;
            for &i in v {
                masses[i] += mass;
                total += mass;
            }
        }
    }
    (masses, total)
}

impl DiagonalMass {
    pub fn new(layout: Layout, geometry_layout: Layout) -> DiagonalMass {
        DiagonalMass {
            layout,
            geometry_layout,
            state: None,
            masses: Vec::new(),
            rigid: Vec::new(),
            element_type: None,
            mass_density: 1.0,
            total_mass: 1.0,
            separate_gravity: false,
            rayleigh_mass: 0.0,
            rayleigh_stiffness: 0.0,
            rest: Geometry::default(),
        }
    }

    /// The mass of each DOF (Vec templates; the scalar masses for Rigid3d).
    pub fn vertex_masses(&self) -> Vec<f64> {
        if self.layout == Layout::Rigid3 {
            self.rigid.iter().map(|m| m.mass).collect()
        } else {
            self.masses.clone()
        }
    }
    pub fn mass_density(&self) -> f64 {
        self.mass_density
    }
    pub fn total_mass(&self) -> f64 {
        self.total_mass
    }
    pub fn element_type(&self) -> Option<ElementType> {
        self.element_type
    }

    fn init_rigid(&mut self, cx: &mut InitCtx, ndof: usize) -> SimResult {
        let d = cx.data();
        let vm = d.get(Self::VERTEX_MASS).to_vec();
        if !vm.chunks_exact(RIGID3_MASS_SIZE).remainder().is_empty() {
            return Err(cx
                .error(format!("vertexMass has {} numbers, not a multiple of {RIGID3_MASS_SIZE}", vm.len()))
                .hint("a Rigid3d mass is written `mass volume I00 I01 I02 I10 I11 I12 I20 I21 I22` (inertia per unit mass), one per DOF"));
        }
        let ignored: Vec<&str> = [Self::TOTAL_MASS, Self::MASS_DENSITY].into_iter().filter(|r| d.is_given(*r)).map(|r| r.name()).collect();
        self.rigid = vm
            .chunks_exact(RIGID3_MASS_SIZE)
            .map(|c| RigidMass::new(c[0], c[1], [[c[2], c[3], c[4]], [c[5], c[6], c[7]], [c[8], c[9], c[10]]]))
            .collect();
        if self.rigid.len() > ndof {
            return Err(cx.error(format!("vertexMass gives {} masses for {ndof} DOFs", self.rigid.len())));
        }
        if !ignored.is_empty() {
            cx.warn(format!("{} ignored: DiagonalMass<Rigid3d> uses vertexMass as given (as SOFA does)", ignored.join(" and ")));
        }
        if self.rigid.is_empty() && ndof > 0 {
            cx.warn("vertexMass is empty: the DOFs have no mass (DiagonalMass<Rigid3d> does not compute masses from the topology)");
        } else if self.rigid.len() < ndof {
            cx.warn(format!("vertexMass gives {} masses for {ndof} DOFs: the others have no mass", self.rigid.len()));
        }
        self.total_mass = self.rigid.iter().fold(0.0, |a, m| a + m.mass);
        Ok(())
    }

    /// SOFA's `massInitialization` (Vec templates).
    fn init_masses(&mut self, cx: &mut InitCtx, t: ElementType, mesh: &MeshData, geo: &Geometry, ndof: usize) {
        let d = cx.data();
        let (tm_set, md_set, vm_set) = (d.is_given(Self::TOTAL_MASS), d.is_given(Self::MASS_DENSITY), d.is_given(Self::VERTEX_MASS));
        let total = d.get(Self::TOTAL_MASS);
        let density = d.get(Self::MASS_DENSITY);
        let mut given = d.get(Self::VERTEX_MASS).to_vec();
        // A short vertexMass is padded with its last value (DiagonalMass::init).
        if let Some(&last) = given.last() {
            if given.len() < ndof {
                given.resize(ndof, last);
            }
        }
        let mut warnings = Vec::new();
        let from_total = |this: &mut DiagonalMass, warnings: &mut Vec<String>| {
            let mut tm = total;
            if tm < 0.0 {
                warnings.push(format!("totalMass = {tm} is negative: using the default totalMass = 1"));
                tm = 1.0;
            }
            let (m, sum) = compute_vertex_mass(t, mesh, geo, ndof, 1.0);
            let rho = if sum < f64::EPSILON { 1.0 } else { tm / sum };
            this.masses = m.into_iter().map(|x| x * rho).collect();
            this.mass_density = rho;
            this.total_mass = tm;
        };
        if tm_set || (!md_set && !vm_set) {
            if tm_set && (md_set || vm_set) {
                warnings.push("totalMass overrides the other mass information (vertexMass or massDensity)".into());
            }
            from_total(self, &mut warnings);
        } else if md_set {
            if vm_set {
                warnings.push("massDensity overrides vertexMass".into());
            }
            if density < 0.0 {
                warnings.push(format!("massDensity = {density} is negative: the totalMass information is used"));
                from_total(self, &mut warnings);
            } else {
                let (m, sum) = compute_vertex_mass(t, mesh, geo, ndof, density);
                self.masses = m;
                self.mass_density = density;
                self.total_mass = sum;
            }
        } else {
            let np = geometry::nb_points(mesh);
            if given.len() != np {
                warnings
                    .push(format!("vertexMass has {} values for the {np} points of the topology: the totalMass information is used", given.len()));
                from_total(self, &mut warnings);
            } else if let Some(i) = given.iter().position(|&m| m < 0.0) {
                warnings.push(format!("vertexMass[{i}] = {} is negative: the totalMass information is used", given[i]));
                from_total(self, &mut warnings);
            } else {
                let tm = geometry::sum(&given);
                let (_, sum) = compute_vertex_mass(t, mesh, geo, ndof, 1.0);
                self.mass_density = if sum < f64::EPSILON { 1.0 } else { tm / sum };
                self.total_mass = tm;
                given.resize(ndof, 0.0);
                self.masses = given;
            }
        }
        for w in warnings {
            cx.warn(w);
        }
    }
}

impl Component for DiagonalMass {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        (self.separate_gravity, self.rayleigh_mass, self.rayleigh_stiffness) = MassData::read(d);
        let on_rest = d.get(Self::COMPUTE_MASS_ON_REST);
        let file = d.get(Self::FILENAME).trim().to_string();
        if !file.is_empty() {
            let mut e = cx
                .error(format!("filename/fileMass = '{file}': reading masses from an Xsp file is not supported"))
                .hint("give the masses with vertexMass, massDensity or totalMass instead");
            e.0.unsupported = true;
            return Err(e);
        }
        let s = common::state_of_layout(cx, self.layout, "remove the template attribute so that it is deduced from the state")?;
        self.state = Some(s);
        let ndof = cx.state_size(s);
        if self.layout == Layout::Rigid3 {
            return self.init_rigid(cx, ndof);
        }

        let (topo, mesh, t) = common::element_topology(cx, "DiagonalMass")?;
        let gs = geometry::geometry_state(cx, topo, self.geometry_layout)?;
        let geo = geometry::read_geometry(cx, gs, on_rest, &mesh, t)?;
        common::check_element_vertices(cx, t, &mesh, ndof)?;
        if geo.dim < t.min_dimension() {
            cx.warn(format!(
                "the topology has {} but the geometry is {}-dimensional: SOFA computes no mass for them, every vertex mass is 0",
                t.name(),
                geo.dim
            ));
        }
        self.element_type = Some(t);
        self.init_masses(cx, t, &mesh, &geo, ndof);
        self.rest = if on_rest { geo } else { geometry::read_geometry(cx, gs, true, &mesh, t)? };

        let dm = cx.data_mut();
        dm.put(Self::VERTEX_MASS, self.masses.clone());
        dm.put(Self::MASS_DENSITY, self.mass_density);
        dm.put(Self::TOTAL_MASS, self.total_mass);
        Ok(())
    }

    /// SOFA's handlers: a removed point takes its mass out of the total, a created point has no
    /// mass; each removed (created) element of the mass's element type takes out (adds)
    /// `ρ·measure/#vertices` on each of its vertices and `ρ·measure` on the total, measured on
    /// the rest positions. Other element kinds do not change the masses.
    fn topology_changed(&mut self, cx: &mut InitCtx, _topology: settee_core::ComponentId, changes: &[TopologyChange]) -> SimResult<Follow> {
        let Some(s) = self.state else { return Ok(Follow::NotConcerned) };
        if self.layout == Layout::Rigid3 {
            // The rigid masses are given per DOF and do not use the topology.
            if changes.iter().any(|c| c.kind() == ElementKind::Point) {
                return Err(cx
                    .error("DiagonalMass<Rigid3d> does not follow point additions or removals")
                    .hint("keep the rigid DOFs fixed, or use a UniformMass"));
            }
            return Ok(Follow::NotConcerned);
        }
        let Some(t) = self.element_type else { return Ok(Follow::NotConcerned) };
        let err = |cx: &InitCtx, e: ChangeError| cx.error(format!("cannot follow the topological change: {e}"));
        let mut masses = ElementData::new(ElementKind::Point, std::mem::take(&mut self.masses));
        let mut rest = ElementData::new(ElementKind::Point, std::mem::take(&mut self.rest.points));
        let r = self.apply_changes(t, changes, &mut masses, &mut rest);
        self.masses = std::mem::take(masses.values_mut());
        self.rest.points = std::mem::take(rest.values_mut());
        r.map_err(|e| err(cx, e))?;
        let n = settee_core::topology_change::state_size_after(changes, cx.state_size(s));
        if self.masses.len() != n {
            return Err(cx
                .error(format!("after the topological change the mass has {} vertex masses but the mechanical state has {n} DOFs", self.masses.len()))
                .hint("the mass and its mechanical state must follow the same topology"));
        }
        let dm = cx.data_mut();
        dm.put(Self::VERTEX_MASS, self.masses.clone());
        dm.put(Self::TOTAL_MASS, self.total_mass);
        Ok(Follow::Followed)
    }
}

impl DiagonalMass {
    /// Applies the log in order to the vertex masses, the rest geometry and the total mass.
    fn apply_changes(
        &mut self,
        t: ElementType,
        changes: &[TopologyChange],
        masses: &mut ElementData<f64>,
        rest: &mut ElementData<[f64; 3]>,
    ) -> Result<(), ChangeError> {
        let kind = kind_of(t);
        let nv = t.nb_vertices();
        for c in changes {
            if c.kind() == ElementKind::Point {
                if let TopologyChange::Removed { indices, .. } = c {
                    // One at a time: each removed point's mass is the one at its index then.
                    for &i in indices {
                        let one = [TopologyChange::Removed { kind: ElementKind::Point, indices: vec![i], elements: vec![] }];
                        validate(&one[0], masses.len())?;
                        self.total_mass -= masses.values()[i];
                        masses.apply(&one, |_| 0.0)?;
                        rest.apply(&one, |_| [0.0; 3])?;
                    }
                    continue;
                }
                masses.apply(std::slice::from_ref(c), |_| 0.0)?;
                // Created points: the weighted sum of their ancestors, as the state computes
                // its rest positions.
                rest.apply(std::slice::from_ref(c), |e| {
                    let mut p = [0.0; 3];
                    for (j, &a) in e.ancestors.iter().enumerate() {
                        let w = e.coefs.get(j).copied().unwrap_or(1.0 / e.ancestors.len() as f64);
                        for (d, x) in p.iter_mut().enumerate() {
                            *x += w * e.values[a][d];
                        }
                    }
                    p
                })?;
                continue;
            }
            if c.kind() != kind || self.rest.dim < t.min_dimension() {
                continue;
            }
            let (elements, sign) = match c {
                TopologyChange::Added { count, elements, .. } => {
                    if elements.len() != *count {
                        return Err(ChangeError(format!("{count} {} added without their vertices", t.name())));
                    }
                    (elements, 1.0)
                }
                TopologyChange::Removed { indices, elements, .. } => {
                    if elements.len() != indices.len() {
                        return Err(ChangeError(format!("{} {} removed without their vertices", indices.len(), t.name())));
                    }
                    (elements, -1.0)
                }
                TopologyChange::Renumbered { .. } => continue,
            };
            if let Some(v) = elements.iter().find(|v| v.len() != nv || v.iter().any(|&i| i >= masses.len())) {
                return Err(ChangeError(format!("element {v:?} is not one of the {} of {} points", t.name(), masses.len())));
            }
            // Lent, not copied: the cost stays proportional to the changed elements.
            let geo = Geometry { dim: self.rest.dim, points: std::mem::take(rest.values_mut()) };
            for v in elements {
                let share = (self.mass_density * geo.measure(t, v)) / nv as f64;
                let m = masses.values_mut();
                for &i in v {
                    if sign > 0.0 {
                        m[i] += share;
                    } else {
                        m[i] -= share;
                    }
                }
                if sign > 0.0 {
                    self.total_mass += nv as f64 * share;
                } else {
                    self.total_mass -= nv as f64 * share;
                }
            }
            *rest.values_mut() = geo.points;
        }
        Ok(())
    }
}

common::mass_force_field!(DiagonalMass);

impl DiagonalMass {
    /// Gravity: `f_i += g·m_i` (linear part only for rigids).
    fn weight(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
        if self.layout == Layout::Rigid3 {
            common::add_weights(io.f[0], self.layout, p.gravity, |n| self.rigid.iter().map(|m| m.mass).enumerate().take(n), |g, m| g * m);
        } else {
            common::add_weights(io.f[0], self.layout, p.gravity, |n| self.masses.iter().copied().enumerate().take(n), |g, m| g * m);
        }
        Ok(())
    }
}

impl Mass for DiagonalMass {
    common::mass_items!(is_diagonal: |_| true, separate_gravity: |m| m.separate_gravity);

    /// `res_i += dx_i·m_i`, times `factor` afterwards when `factor ≠ 1`.
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        let ds = self.layout.deriv_size();
        if self.layout == Layout::Rigid3 {
            let n = self.rigid.len().min(dx.len() / 6).min(res.len() / 6);
            for (i, m) in self.rigid.iter().enumerate().take(n) {
                let d = &dx[i * 6..i * 6 + 6];
                let a = mat_vec(&m.inertia_mass, &d[3..6]);
                let r = &mut res[i * 6..i * 6 + 6];
                if factor == 1.0 {
                    for c in 0..3 {
                        r[c] += d[c] * m.mass;
                        r[3 + c] += a[c];
                    }
                } else {
                    for c in 0..3 {
                        r[c] += (d[c] * m.mass) * factor;
                        r[3 + c] += a[c] * factor;
                    }
                }
            }
            return;
        }
        let n = self.masses.len().min(dx.len() / ds).min(res.len() / ds);
        if factor == 1.0 {
            for (i, &m) in self.masses.iter().enumerate().take(n) {
                for c in 0..ds {
                    res[i * ds + c] += dx[i * ds + c] * m;
                }
            }
        } else {
            for (i, &m) in self.masses.iter().enumerate().take(n) {
                for c in 0..ds {
                    res[i * ds + c] += (dx[i * ds + c] * m) * factor;
                }
            }
        }
    }

    /// `a_i = f_i / m_i`.
    fn acc_from_f(&self, a: &mut [f64], f: &[f64]) -> SimResult {
        let ds = self.layout.deriv_size();
        if self.layout == Layout::Rigid3 {
            for (i, m) in self.rigid.iter().enumerate().take(a.len() / 6) {
                m.acc_from_f(a, f, i);
            }
            return Ok(());
        }
        for (i, &m) in self.masses.iter().enumerate().take(a.len() / ds) {
            for c in 0..ds {
                a[i * ds + c] = f[i * ds + c] / m;
            }
        }
        Ok(())
    }

    /// `v_i += g·h` on every DOF.
    fn add_gravity_to_v(&self, v: &mut [f64], g: [f64; 3], dt: f64) {
        common::add_gravity_to_v(v, self.layout.deriv_size(), self.layout.spatial_size(), g, dt);
    }

    fn add_m_to_matrix(&self, acc: &mut MatrixAccumulator, factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("DiagonalMass used before init"))?;
        if self.layout == Layout::Rigid3 {
            for (i, m) in self.rigid.iter().enumerate() {
                m.add_to_matrix(acc, s, i, factor);
            }
            return Ok(());
        }
        let ds = self.layout.deriv_size();
        for (i, &m) in self.masses.iter().enumerate() {
            common::add_diagonal(acc, s, i, ds, m * factor);
        }
        Ok(())
    }

    /// `½ Σ v_i·(m_i v_i)`.
    fn kinetic_energy(&self, v: &[f64]) -> f64 {
        let ds = self.layout.deriv_size();
        let mut e = 0.0;
        if self.layout == Layout::Rigid3 {
            for (i, m) in self.rigid.iter().enumerate().take(v.len() / 6) {
                let d = &v[i * 6..i * 6 + 6];
                let a = mat_vec(&m.inertia_mass, &d[3..6]);
                let lin = (d[0] * m.mass) * d[0] + (d[1] * m.mass) * d[1] + (d[2] * m.mass) * d[2];
                let ang = a[0] * d[3] + a[1] * d[4] + a[2] * d[5];
                e += lin + ang;
            }
            return e / 2.0;
        }
        for (i, &m) in self.masses.iter().enumerate().take(v.len() / ds) {
            let d = &v[i * ds..(i + 1) * ds];
            let mut s = (d[0] * m) * d[0];
            for &x in &d[1..] {
                s += (x * m) * x;
            }
            e += s;
        }
        e / 2.0
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::geometry::testing::*;

    fn dm(b: &Built) -> &DiagonalMass {
        b.scene.get::<DiagonalMass>(b.mass).unwrap()
    }

    #[test]
    fn unit_cube_hexahedron() {
        let mut b = on_mesh("DiagonalMass", &[("position", CUBE_POS), ("hexahedra", HEXA)], &[("massDensity", "2")]).unwrap();
        let m = dm(&b);
        assert_eq!(m.element_type(), Some(ElementType::Hexahedron));
        for &mi in &m.vertex_masses() {
            assert!((mi - 0.25).abs() < 1e-15, "{mi}");
        }
        assert!((m.total_mass() - 2.0).abs() < 1e-14);
        assert_eq!(m.mass_density(), 2.0);
        // the Data show the computed values
        let d = &b.scene.entry(b.mass).data;
        assert_eq!(d.reals("vertexMass").len(), 8);
        assert_eq!(d.real("totalMass"), m.total_mass());
        // gravity = m_i·g
        let masses = m.vertex_masses();
        let f = b.gravity_force();
        let g = params().gravity;
        for i in 0..8 {
            for c in 0..3 {
                assert_eq!(f[3 * i + c], g[c] * masses[i]);
            }
        }
    }

    #[test]
    fn regular_tetrahedron_and_square() {
        let b = on_mesh("DiagonalMass", &[("position", TETRA_POS), ("tetrahedra", "0 1 2 3")], &[("massDensity", "3")]).unwrap();
        for &mi in &dm(&b).vertex_masses() {
            assert!((mi - 3.0 * TETRA_VOLUME / 4.0).abs() < 1e-14);
        }
        assert!((dm(&b).total_mass() - 3.0 * TETRA_VOLUME).abs() < 1e-14);

        let b = on_mesh("DiagonalMass", &[("position", SQUARE_POS), ("triangles", SQUARE_TRIANGLES)], &[("massDensity", "3")]).unwrap();
        assert_eq!(dm(&b).element_type(), Some(ElementType::Triangle));
        assert_close(&dm(&b).vertex_masses(), &[1.0, 0.5, 1.0, 0.5], 1e-15);
        assert_eq!(dm(&b).total_mass(), 3.0);
    }

    #[test]
    fn element_priority_hexa_over_everything() {
        // a mesh with hexahedra and (derived) quads, triangles, edges: hexahedra are used
        let b = build(
            None,
            &[],
            "RegularGridTopology",
            &[("n", "3 2 2"), ("min", "0 0 0"), ("max", "2 1 1")],
            "DiagonalMass",
            None,
            &[("massDensity", "1")],
        )
        .unwrap();
        let m = dm(&b);
        assert_eq!(m.element_type(), Some(ElementType::Hexahedron));
        assert!((m.total_mass() - 2.0).abs() < 1e-14);
        // corner vertices carry 1/8 of a cell, the middle ones 2/8
        let v = m.vertex_masses();
        assert!((v[0] - 0.125).abs() < 1e-15 && (v[1] - 0.25).abs() < 1e-15, "{v:?}");
    }

    #[test]
    fn total_mass_takes_precedence() {
        let b = on_mesh(
            "DiagonalMass",
            &[("position", TETRA_POS), ("tetrahedra", "0 1 2 3")],
            &[("massDensity", "3"), ("vertexMass", "1 1 1 1"), ("totalMass", "10")],
        )
        .unwrap();
        let m = dm(&b);
        assert_eq!(m.total_mass(), 10.0);
        assert!((m.mass_density() - 10.0 / TETRA_VOLUME).abs() < 1e-13);
        // m_i = (ρ=1 mass) · ρ*
        let rho = 10.0 / (4.0 * (TETRA_VOLUME / 4.0));
        for &mi in &m.vertex_masses() {
            assert_eq!(mi, (TETRA_VOLUME / 4.0) * rho);
        }
        assert!(b.warnings().iter().any(|w| w.contains("totalMass overrides")), "{:?}", b.warnings());
    }

    #[test]
    fn vertex_mass_and_defaults() {
        let topo = [("position", TETRA_POS), ("tetrahedra", "0 1 2 3")];
        // vertexMass as given; total = Σ; density deduced
        let b = on_mesh("DiagonalMass", &topo, &[("vertexMass", "1 2 3 4")]).unwrap();
        assert_eq!(dm(&b).vertex_masses(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(dm(&b).total_mass(), 10.0);
        assert!((dm(&b).mass_density() - 10.0 / TETRA_VOLUME).abs() < 1e-13);
        // a short vertexMass is padded with its last value
        let b = on_mesh("DiagonalMass", &topo, &[("vertexMass", "1 2")]).unwrap();
        assert_eq!(dm(&b).vertex_masses(), vec![1.0, 2.0, 2.0, 2.0]);
        // a negative one falls back to totalMass (default 1)
        let b = on_mesh("DiagonalMass", &topo, &[("vertexMass", "1 -2 1 1")]).unwrap();
        assert!((dm(&b).vertex_masses().iter().sum::<f64>() - 1.0).abs() < 1e-15);
        assert!(!b.warnings().is_empty());
        // nothing set: totalMass = 1
        let b = on_mesh("DiagonalMass", &topo, &[]).unwrap();
        assert_close(&dm(&b).vertex_masses(), &[0.25; 4], 1e-15);
        assert_eq!(dm(&b).total_mass(), 1.0);
    }

    #[test]
    fn rest_or_current_positions() {
        // positions are the unit cube scaled by 2, rest positions the unit cube
        let pos2: String = CUBE_POS.split_whitespace().map(|x| format!("{} ", 2.0 * x.parse::<f64>().unwrap())).collect();
        let mo = [("position", pos2.as_str()), ("rest_position", CUBE_POS)];
        let topo = [("hexahedra", HEXA)];
        let on_rest = build(None, &mo, "MeshTopology", &topo, "DiagonalMass", None, &[("massDensity", "1")]).unwrap();
        assert!((dm(&on_rest).total_mass() - 1.0).abs() < 1e-14);
        let current = build(None, &mo, "MeshTopology", &topo, "DiagonalMass", None, &[("massDensity", "1"), ("computeMassOnRest", "false")]).unwrap();
        assert!((dm(&current).total_mass() - 8.0).abs() < 1e-13);
    }

    #[test]
    fn planar_and_line_geometries() {
        // Vec2d: signed shoelace area (a clockwise triangle has a negative mass, as in SOFA)
        for (triangles, mass) in [("0 1 2", 1.0), ("0 2 1", -1.0)] {
            let position = [("position", "0 0  2 0  0 1")];
            let b =
                build(Some("Vec2d"), &position, "MeshTopology", &[("triangles", triangles)], "DiagonalMass", None, &[("massDensity", "3")]).unwrap();
            assert_close(&dm(&b).vertex_masses(), &[mass; 3], 1e-15);
        }
        // Vec1d on edges: half of each length to each end
        let b =
            build(Some("Vec1d"), &[("position", "0 1 3")], "MeshTopology", &[("edges", "0 1  1 2")], "DiagonalMass", None, &[("massDensity", "2")])
                .unwrap();
        assert_eq!(dm(&b).vertex_masses(), vec![1.0, 3.0, 2.0]);
        let f = {
            let mut b = b;
            b.gravity_force()
        };
        assert_eq!(f, vec![0.1 * 1.0, 0.1 * 3.0, 0.1 * 2.0]);
    }

    #[test]
    fn mdx_matrix_and_acceleration_agree() {
        let mut b = on_mesh("DiagonalMass", &[("position", CUBE_POS), ("tetrahedra", CUBE_TETRAS)], &[("totalMass", "3")]).unwrap();
        let n = b.size() * 3;
        let dx = test_vector(n);
        let m = b.matrix(1.0).unwrap();
        assert_close(&b.mdx(&dx, 1.0), &dense_mul(&m, &dx), 1e-15);
        let m2 = b.matrix(0.7).unwrap();
        assert_close(&b.mdx(&dx, 0.7), &dense_mul(&m2, &dx), 1e-15);
        // off-diagonal entries are zero
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    assert_eq!(m[i * n + j], 0.0);
                }
            }
        }
        // acc_from_f inverts add_mdx; kinetic energy = ½ vᵀMv
        let mass = b.scene.role::<dyn Mass>(b.mass).unwrap();
        let f = b.mdx(&dx, 1.0);
        let mut a = vec![0.0; n];
        mass.acc_from_f(&mut a, &f).unwrap();
        assert_close(&a, &dx, 1e-14);
        let ke = mass.kinetic_energy(&dx);
        let expected: f64 = 0.5 * dx.iter().zip(&f).map(|(x, y)| x * y).sum::<f64>();
        assert!((ke - expected).abs() < 1e-13);
        assert!(mass.is_diagonal());
        // gravity force = M·g
        let g = params().gravity;
        let gv: Vec<f64> = (0..n).map(|i| g[i % 3]).collect();
        assert_close(&b.gravity_force(), &dense_mul(&m, &gv), 1e-15);
    }

    #[test]
    fn rigid3_masses_are_given() {
        let vm = "2 1  1 0 0  0 2 0  0 0 4   3 1  1 0 0  0 1 0  0 0 1";
        let mut b = build(
            Some("Rigid3d"),
            &[("position", "0 0 0 0 0 0 1  1 0 0 0 0 0 1")],
            "MeshTopology",
            &[("edges", "0 1")],
            "DiagonalMass",
            None,
            &[("vertexMass", vm)],
        )
        .unwrap();
        assert_eq!(dm(&b).vertex_masses(), vec![2.0, 3.0]);
        let dx = test_vector(12);
        let r = b.mdx(&dx, 1.0);
        assert_eq!(&r[..3], &[dx[0] * 2.0, dx[1] * 2.0, dx[2] * 2.0]);
        assert_eq!(&r[3..6], &[dx[3] * 2.0, dx[4] * 4.0, dx[5] * 8.0]);
        let m = b.matrix(1.0).unwrap();
        assert_close(&r, &dense_mul(&m, &dx), 1e-15);
        let mass = b.scene.role::<dyn Mass>(b.mass).unwrap();
        let mut a = vec![0.0; 12];
        mass.acc_from_f(&mut a, &r).unwrap();
        assert_close(&a, &dx, 1e-14);
        let f = b.gravity_force();
        assert_eq!(&f[..6], &[0.2, -9.81 * 2.0, 0.6, 0.0, 0.0, 0.0]);
        // malformed Rigid3 masses
        let e = build(Some("Rigid3d"), &[("position", "0 0 0 0 0 0 1")], "MeshTopology", &[], "DiagonalMass", None, &[("vertexMass", "2")])
            .err()
            .unwrap();
        assert!(e.to_string().contains("multiple of 11"), "{e}");
    }

    #[test]
    fn unsupported_and_invalid_inputs() {
        let e = on_mesh("DiagonalMass", &[("position", TETRA_POS), ("tetrahedra", "0 1 2 3")], &[("fileMass", "masses.xs3")]).err().unwrap();
        assert!(e.0.unsupported && e.to_string().contains("Xsp"), "{e}");
        let e = on_mesh("DiagonalMass", &[("position", TETRA_POS)], &[]).err().unwrap();
        assert!(e.to_string().contains("empty"), "{e}");
    }
}
