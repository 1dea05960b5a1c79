//! `HexahedronFEMForceFieldAndMass`: a [`HexahedronFEMForceField`] that is also the mass of its
//! state, with SOFA's (physically odd, but reference-defining) mass formulas:
//!
//! * gravity uses *particle masses*: each hexahedron gives `|n1-n0|·|n3-n0|·|n4-n0|·ρ/8` to each
//!   of its 8 corners (rest positions);
//! * `M·dx` and the assembled mass use 24×24 *element mass matrices* in which every node pair
//!   (diagonal and off-diagonal) has the block `m_e·I3`, `m_e = vol·ρ·8/27` with `vol` the same
//!   edge-length product of the rotated rest corners; `massMatrices` given in the scene are
//!   kept;
//! * `lumpedMass` replaces `M·dx` by row sums of the element matrices (the assembled mass keeps
//!   the element matrices, as SOFA);
//! * `accFromF` does nothing (SOFA does not support explicit integration with this mass).

// Index loops mirror the reference formulas.
#![allow(clippy::needless_range_loop)]

use rayon::prelude::*;

use settee_core::component::Mass;
use settee_core::role::Topology;
use settee_core::{Component, ForceField, ForceIo, InitCtx, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

use settee_core::math::{norm, sub};

use crate::common::gather;
use crate::hexa::Vec3;
use crate::hexahedron_fem::{HexahedronFEMForceField, HexahedronFemData, HEXA_PARALLEL_MIN};
use crate::tetra_common::{parallel_loop, ElasticData};

/// A 24×24 element mass matrix, row-major, DOF `3·corner + component`.
pub type ElementMass = [[f64; 24]; 24];

/// SOFA's `integrateMass` for corner signs `±1` (squared, so every node pair gets the same
/// value `8/27·ρ`), evaluated term by term as SOFA does.
pub fn integrate_mass(density: f64) -> f64 {
    let (t1, t2, t3) = (1.0f64, 1.0f64, 1.0f64);
    let t9 = t1 * t2;
    (t1 * t3 / 72.0 + t2 * t3 / 72.0 + t9 * t3 / 216.0 + t3 / 24.0 + 1.0 / 8.0 + t9 / 72.0 + t1 / 24.0 + t2 / 24.0) * density
}

/// `|n1-n0|·|n3-n0|·|n4-n0|`, SOFA's "volume" of a hexahedron for its masses.
pub fn edge_volume(n: &[Vec3; 8]) -> f64 {
    norm(sub(n[1], n[0])) * norm(sub(n[3], n[0])) * norm(sub(n[4], n[0]))
}

/// SOFA's `computeElementMass` from the rotated rest corners: every `(3i+c, 3j+c)` entry equals
/// `vol·integrateMass`, scaled by `mass_coef` (sparse-grid filling ratio, else 1).
pub fn element_mass(rotated_rest: &[Vec3; 8], density: f64, mass_coef: f64) -> ElementMass {
    let vol = edge_volume(rotated_rest);
    let mut m = [[0.0; 24]; 24];
    for i in 0..8 {
        let mass = vol * integrate_mass(density);
        for c in 0..3 {
            m[3 * i + c][3 * i + c] += mass;
        }
        for j in (i + 1)..8 {
            let mass = vol * integrate_mass(density);
            for c in 0..3 {
                m[3 * i + c][3 * j + c] += mass;
            }
        }
    }
    for i in 0..24 {
        for j in (i + 1)..24 {
            m[j][i] = m[i][j];
        }
    }
    for row in m.iter_mut() {
        for v in row.iter_mut() {
            *v *= mass_coef;
        }
    }
    m
}

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        roles = [ForceField, Mass],
        inherit = [ElasticData, HexahedronFemData],
        data = {
            /// 24×24 mass matrix of each element (row-major); computed when not given
            massMatrices: RealTuples(576),
            /// mass density (kg·m⁻³)
            density: Real = "1",
            /// use row-sum lumped masses in M·dx
            lumpedMass: Bool = "false",
            /// add gravity to the velocity directly instead of as a force
            separateGravity: Bool = "false",
            /// Rayleigh damping coefficient related to mass
            rayleighMass: Real = "0",
        },
        links = {
            /// topology whose hexahedra are the elements (default: the context topology)
            topology: Topology,
        },
    }
    /// HexahedronFEMForceField that is also the mass of its state (SOFA's element mass matrices and particle masses for gravity).
    ///
    /// The force field and mass. It has the Data of [`HexahedronFEMForceField`] (whose `init` it
    /// runs), then its own.
    #[derive(Clone, Default)]
    pub struct HexahedronFEMForceFieldAndMass {
        ff: HexahedronFEMForceField,
        state: Option<StateId>,
        nb_dofs: usize,
        /// Per-node masses used for gravity.
        particle_masses: Vec<f64>,
        element_masses: Vec<Box<ElementMass>>,
        /// The element mass matrices transposed (`[j][i]` = entry `(i, j)`): the product
        /// `M_e·dx_e` then reads them column after column, contiguously.
        element_masses_t: Vec<Box<ElementMass>>,
        /// Row sums of the element matrices, per node and component (`lumpedMass`).
        lumped_masses: Vec<[f64; 3]>,
        lumped: bool,
        separate_gravity: bool,
        rayleigh_mass: f64,
    }
}

impl HexahedronFEMForceFieldAndMass {
    /// The stiffness part.
    pub fn force_field_part(&self) -> &HexahedronFEMForceField {
        &self.ff
    }

    pub fn particle_masses(&self) -> &[f64] {
        &self.particle_masses
    }

    pub fn element_masses(&self) -> &[Box<ElementMass>] {
        &self.element_masses
    }

    pub fn lumped_masses(&self) -> &[[f64; 3]] {
        &self.lumped_masses
    }
}

impl Component for HexahedronFEMForceFieldAndMass {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ff.init(cx)?;
        let s = cx.require_state()?;
        let n = cx.state_size(s);
        let rest = cx.rest_or_position(s);
        let d = cx.data();
        let density = d.get(Self::DENSITY);
        self.lumped = d.get(Self::LUMPED_MASS);
        self.separate_gravity = d.get(Self::SEPARATE_GRAVITY);
        self.rayleigh_mass = d.get(Self::RAYLEIGH_MASS);
        let given = d.get(Self::MASS_MATRICES).to_vec();
        let elements = self.ff.elements().to_vec();
        if !given.len().is_multiple_of(576) {
            cx.warn(format!("massMatrices has {} values, not a multiple of 24×24: the incomplete matrix is ignored", given.len()));
        }

        // A sparse grid scales each cell's mass by the fraction of it inside the object.
        let mass_coefs = crate::hexahedron_fem::sparse_grid_coefs(cx, "massCoefs", elements.len())?;
        let mass_coef = |i: usize| mass_coefs.as_ref().map_or(1.0, |c| c[i]);

        // element mass matrices (kept when given)
        let rests = self.ff.element_rests();
        self.element_masses = (0..elements.len())
            .into_par_iter()
            .map(|i| match given.get(576 * i..576 * (i + 1)) {
                Some(g) => {
                    let mut m = [[0.0; 24]; 24];
                    for (r, row) in m.iter_mut().enumerate() {
                        row.copy_from_slice(&g[24 * r..24 * r + 24]);
                    }
                    Box::new(m)
                }
                None => Box::new(element_mass(rests[i].rotated_rest(), density, mass_coef(i))),
            })
            .collect();
        self.element_masses_t = self
            .element_masses
            .iter()
            .map(|m| {
                let mut t = [[0.0; 24]; 24];
                for (i, row) in m.iter().enumerate() {
                    for (j, &v) in row.iter().enumerate() {
                        t[j][i] = v;
                    }
                }
                Box::new(t)
            })
            .collect();

        // particle masses from the (unrotated) rest corners
        self.particle_masses = vec![0.0; n];
        for (k, e) in elements.iter().enumerate() {
            let nodes = gather(&rest, e);
            let mut volume = edge_volume(&nodes);
            if mass_coefs.is_some() {
                volume *= mass_coef(k);
            }
            let mass = (volume * density) / 8.0;
            for &w in e {
                self.particle_masses[w] += mass;
            }
        }

        self.lumped_masses.clear();
        if self.lumped {
            self.lumped_masses = vec![[0.0; 3]; n];
            for (e, m) in elements.iter().zip(&self.element_masses) {
                for (w, &node) in e.iter().enumerate() {
                    for j in 0..24 {
                        for c in 0..3 {
                            self.lumped_masses[node][c] += m[3 * w + c][j];
                        }
                    }
                }
            }
        }
        self.state = Some(s);
        self.nb_dofs = n;
        let flat: Vec<f64> = self.element_masses.iter().flat_map(|m| m.iter().flatten().copied()).collect();
        cx.data_mut().put(Self::MASS_MATRICES, flat);
        Ok(())
    }
}

impl ForceField for HexahedronFEMForceFieldAndMass {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    /// Elastic force, then gravity `g·m_i` on the particle masses unless `separateGravity`.
    fn add_force(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
        self.ff.add_force(p, io)?;
        if self.separate_gravity {
            return Ok(());
        }
        let Some(f) = io.f.first_mut() else {
            return Err(SimError::new("no vectors lent to the force field"));
        };
        for (i, &m) in self.particle_masses.iter().enumerate() {
            for c in 0..3 {
                f[3 * i + c] += p.gravity[c] * m;
            }
        }
        Ok(())
    }

    /// The stiffness part only (the mass part is `add_mdx`).
    fn add_dforce(&mut self, p: &MechParams, io: &mut ForceIo, k_factor: f64, b_factor: f64) -> SimResult {
        self.ff.add_dforce(p, io, k_factor, b_factor)
    }

    fn add_k_to_matrix(&self, p: &MechParams, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        self.ff.add_k_to_matrix(p, m, k_factor)
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.ff.rayleigh_stiffness()
    }

    /// False: unlike pure masses, this component has a stiffness (`add_dforce` does work).
    fn is_mass(&self) -> bool {
        false
    }
}

impl Mass for HexahedronFEMForceFieldAndMass {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }

    /// `res += (M_e·dx_e)·factor` element by element (or the lumped diagonal).
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        if self.lumped {
            for (i, m) in self.lumped_masses.iter().enumerate() {
                for c in 0..3 {
                    res[3 * i + c] += m[c] * dx[3 * i + c] * factor;
                }
            }
            return;
        }
        let elements = self.ff.elements();
        // Each f[i] = Σ_j M(i, j)·d[j], summed over j in increasing order as a row-by-row
        // product does, but the 24 sums advance together (one row alone would wait on the
        // adder's latency at each term).
        let element_product = |mt: &[[f64; 24]; 24], e: &[usize; 8]| {
            let mut d = [0.0; 24];
            for (k, &i) in e.iter().enumerate() {
                d[3 * k..3 * k + 3].copy_from_slice(&dx[3 * i..3 * i + 3]);
            }
            let mut f = [0.0; 24];
            for (fi, &m) in f.iter_mut().zip(mt[0].iter()) {
                *fi = m * d[0];
            }
            for (col, &dj) in mt.iter().zip(d.iter()).skip(1) {
                for (fi, &m) in f.iter_mut().zip(col.iter()) {
                    *fi += m * dj;
                }
            }
            f
        };
        let scatter = |res: &mut [f64], e: &[usize; 8], f: &[f64; 24]| {
            for (w, &i) in e.iter().enumerate() {
                for c in 0..3 {
                    res[3 * i + c] += f[3 * w + c] * factor;
                }
            }
        };
        // Small meshes (a sparse grid's few cells) stay on this thread and allocate nothing:
        // waking the pool for them cost more than the products. Both paths accumulate in
        // element order, so the bits are the same.
        if !parallel_loop(elements.len(), HEXA_PARALLEL_MIN) {
            for (mt, e) in self.element_masses_t.iter().zip(elements) {
                scatter(res, e, &element_product(mt, e));
            }
            return;
        }
        let products: Vec<[f64; 24]> = self.element_masses_t.par_iter().zip(elements.par_iter()).map(|(mt, e)| element_product(mt, e)).collect();
        for (e, f) in elements.iter().zip(&products) {
            scatter(res, e, f);
        }
    }

    /// SOFA does not invert this mass: the acceleration is left unchanged.
    fn acc_from_f(&self, _a: &mut [f64], _f: &[f64]) -> SimResult {
        Ok(())
    }

    fn add_gravity_to_v(&self, v: &mut [f64], gravity: [f64; 3], dt: f64) {
        for i in 0..self.particle_masses.len().min(v.len() / 3) {
            for c in 0..3 {
                v[3 * i + c] += gravity[c] * dt;
            }
        }
    }

    /// Every 3×3 block of every element matrix, times `factor` (also with `lumpedMass`, as
    /// SOFA).
    fn add_m_to_matrix(&self, m: &mut MatrixAccumulator, factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        for (e, me) in self.ff.elements().iter().zip(&self.element_masses) {
            for (n1, &a) in e.iter().enumerate() {
                for (n2, &b) in e.iter().enumerate() {
                    let mut blk = [[0.0; 3]; 3];
                    for i in 0..3 {
                        for j in 0..3 {
                            blk[i][j] = me[3 * n1 + i][3 * n2 + j] * factor;
                        }
                    }
                    m.add_block3(s, a, s, b, &blk);
                }
            }
        }
        Ok(())
    }

    fn is_diagonal(&self) -> bool {
        self.lumped
    }

    fn separate_gravity(&self) -> bool {
        self.separate_gravity
    }

    fn rayleigh_mass(&self) -> f64 {
        self.rayleigh_mass
    }

    /// SOFA does not implement it (returns 0).
    fn kinetic_energy(&self, _v: &[f64]) -> f64 {
        0.0
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;

    /// The force field's `init` reads and writes this component's Data: the class has every Data
    /// of `HexahedronFEMForceField`, with the same kind, in the same order, before its own.
    #[test]
    fn has_the_force_field_data() {
        use settee_core::component::Declared;
        let fields = |classes: &[&settee_core::ComponentClass]| -> Vec<(&'static str, settee_core::DataKind)> {
            classes[0].data.iter().flat_map(|t| t.iter()).map(|d| (d.name, d.kind)).collect()
        };
        let ff = fields(HexahedronFEMForceField::CLASSES);
        let both = fields(HexahedronFEMForceFieldAndMass::CLASSES);
        assert!(!ff.is_empty());
        assert_eq!(&both[..ff.len()], &ff[..]);
        assert_eq!(both.len(), ff.len() + 5);
    }
    use crate::test_support::{max_abs, mul, perturb, Harness};
    use settee_core::ComponentId;

    const GRID: &[(&str, &str)] =
        &[("nx", "4"), ("ny", "4"), ("nz", "20"), ("xmin", "-9"), ("xmax", "-6"), ("ymin", "0"), ("ymax", "3"), ("zmin", "0"), ("zmax", "19")];

    fn setup(ff: &[(&str, &str)]) -> (Harness, ComponentId, Vec<f64>) {
        let mut h = Harness::new();
        let mo = h.add("MechanicalObject", &[]);
        h.add("RegularGridTopology", GRID);
        let c = h.add("HexahedronFEMForceFieldAndMass", ff);
        h.init().unwrap();
        let rest = h.rest(mo);
        (h, c, rest)
    }

    fn get(h: &mut Harness, id: ComponentId) -> &mut HexahedronFEMForceFieldAndMass {
        h.get_mut(id)
    }

    #[test]
    fn masses_follow_sofa_formulas() {
        let (mut h, c, _) = setup(&[("youngModulus", "40000"), ("poissonRatio", "0.3"), ("density", "2")]);
        let m = get(&mut h, c);
        // unit cells: particle mass ρ/8 per incident cell; total = ρ·(number of cells)
        let total: f64 = m.particle_masses().iter().sum();
        assert!((total - 2.0 * 171.0).abs() < 1e-10, "{total}");
        assert_eq!(m.particle_masses()[0], 2.0 / 8.0);
        // element blocks: m_e·I3 for every node pair, m_e = vol·ρ·8/27
        let me = &m.element_masses()[0];
        let expected = 2.0 * 8.0 / 27.0;
        for a in 0..8 {
            for b in 0..8 {
                for i in 0..3 {
                    for j in 0..3 {
                        let v = me[3 * a + i][3 * b + j];
                        if i == j {
                            assert!((v - expected).abs() < 1e-14);
                        } else {
                            assert_eq!(v, 0.0);
                        }
                    }
                }
            }
        }
        assert!((integrate_mass(1.0) - 8.0 / 27.0).abs() < 1e-15);
        assert_eq!(h.scene.entry(c).data.reals("massMatrices").len(), 171 * 576);
    }

    #[test]
    fn gravity_is_added_to_the_elastic_force() {
        let (mut h, c, rest) = setup(&[("youngModulus", "40000"), ("poissonRatio", "0.3")]);
        let f = h.force(c, &rest);
        let pm = get(&mut h, c).particle_masses().to_vec();
        for (i, m) in pm.iter().enumerate() {
            assert_eq!(f[3 * i], 0.0);
            assert_eq!(f[3 * i + 1], -9.81 * m);
            assert_eq!(f[3 * i + 2], 0.0);
        }
        let (mut h2, c2, rest2) = setup(&[("separateGravity", "true")]);
        assert_eq!(max_abs(&h2.force(c2, &rest2)), 0.0);
        let mut v = vec![0.0; rest2.len()];
        get(&mut h2, c2).add_gravity_to_v(&mut v, [0.0, -10.0, 0.0], 0.1);
        assert!(v.chunks(3).all(|p| p == [0.0, -1.0, 0.0]));
    }

    #[test]
    fn mdx_and_assembled_mass_agree() {
        for lumped in ["false", "true"] {
            let (mut h, c, rest) = setup(&[("youngModulus", "40000"), ("poissonRatio", "0.3"), ("lumpedMass", lumped)]);
            let dx = perturb(&vec![0.0; rest.len()], 1.0, 3);
            let mut mdx = vec![0.0; dx.len()];
            get(&mut h, c).add_mdx(&mut mdx, &dx, 0.5);
            let m = h.assembled(0.5, 0.0);
            let expected = if lumped == "true" {
                // lumped diagonal = row sums of the assembled (element) matrix
                let ones = vec![1.0; dx.len()];
                let rows = mul(&m, &ones);
                rows.iter().zip(&dx).map(|(r, d)| r * d).collect()
            } else {
                mul(&m, &dx)
            };
            let scale = max_abs(&mdx);
            for (a, b) in mdx.iter().zip(&expected) {
                assert!((a - b).abs() < 1e-12 * scale, "{lumped}: {a} vs {b}");
            }
            assert_eq!(get(&mut h, c).is_diagonal(), lumped == "true");
        }
    }

    #[test]
    fn stiffness_is_the_hexahedron_force_field() {
        let (mut h, c, rest) = setup(&[("youngModulus", "40000"), ("poissonRatio", "0.3"), ("separateGravity", "1")]);
        let mut h2 = Harness::new();
        h2.add("MechanicalObject", &[]);
        h2.add("RegularGridTopology", GRID);
        let c2 = h2.add("HexahedronFEMForceField", &[("youngModulus", "40000"), ("poissonRatio", "0.3")]);
        h2.init().unwrap();
        let x = perturb(&rest, 0.2, 8);
        let dx = perturb(&vec![0.0; x.len()], 1.0, 2);
        assert_eq!(h.force(c, &x), h2.force(c2, &x));
        assert_eq!(h.dforce(c, &dx, -0.4), h2.dforce(c2, &dx, -0.4));
        // assembled K·dx equals dforce
        let k = h.assembled(0.0, -0.4);
        let kdx = mul(&k, &dx);
        let df = h.dforce(c, &dx, -0.4);
        let scale = max_abs(&df);
        for (a, b) in df.iter().zip(&kdx) {
            assert!((a - b).abs() < 1e-12 * scale);
        }
    }
}
