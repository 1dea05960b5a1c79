//! `HexahedralFEMForceFieldAndMass`: a [`HexahedralFEMForceField`] that is also the mass of its
//! state, with SOFA's mass formulas for this class:
//!
//! * each hexahedron's total mass is `|n1−n0|·|n3−n0|·|n4−n0|·ρ` over its rotated rest corners;
//!   gravity uses *particle masses*, an eighth of it on each corner;
//! * `M·dx` uses 24×24 *element mass matrices* in which every node pair has the block
//!   `m·(8/27)·I3` (`m` the element's total mass; `lumpedMass`: row sums instead);
//! * the assembled mass has the **diagonal** node blocks of the element matrices only (SOFA's
//!   `addMToMatrix` of this class);
//! * `accFromF` does nothing (SOFA does not support explicit integration with this mass).

// Index loops mirror the reference formulas.
#![allow(clippy::needless_range_loop)]

use settee_core::component::Mass;
use settee_core::role::Topology;
use settee_core::{Component, ForceField, ForceIo, InitCtx, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

use crate::hexahedral_fem::{HexahedralFEMForceField, HexahedralFemData};
use crate::hexahedron_fem_and_mass::{edge_volume, integrate_mass, ElementMass};
use crate::tetra_common::ElasticData;

crate::common::force_field_class! {
    {
        module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        roles = [ForceField, Mass],
        inherit = [ElasticData, HexahedralFemData],
        data = {
            /// density == volumetric mass in english (kg.m-3)
            density: Real = "1",
            /// Does it use lumped masses?
            lumpedMass: Bool = "false",
            /// output: mass matrices per element (24×24, row-major)
            massMatrices: RealTuples(576),
            /// output: total mass per element
            totalMass: Reals,
            /// output: mass per particle
            particleMasses: Reals,
            /// output: lumped masses (with lumpedMass)
            lumpedMasses: Coords,
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
    /// HexahedralFEMForceField that is also the mass of its state.
    ///
    /// The force field and mass. It has the Data of [`HexahedralFEMForceField`] (whose `init` it
    /// runs), then its own.
    #[derive(Clone, Default)]
    pub struct HexahedralFEMForceFieldAndMass {
        ff: HexahedralFEMForceField,
        state: Option<StateId>,
        particle_masses: Vec<f64>,
        element_masses: Vec<Box<ElementMass>>,
        lumped_masses: Vec<[f64; 3]>,
        lumped: bool,
        separate_gravity: bool,
        rayleigh_mass: f64,
    }
}

impl HexahedralFEMForceFieldAndMass {
    /// The stiffness part.
    pub fn force_field_part(&self) -> &HexahedralFEMForceField {
        &self.ff
    }

    pub fn particle_masses(&self) -> &[f64] {
        &self.particle_masses
    }

    pub fn element_masses(&self) -> &[Box<ElementMass>] {
        &self.element_masses
    }
}

/// SOFA's `computeElementMass` of this class: every `(3i+c, 3j+c)` entry is
/// `total·integrateVolume` (8/27 for the corner signs ±1).
fn element_mass(total: f64) -> ElementMass {
    let mut m = [[0.0; 24]; 24];
    let mass = total * integrate_mass(1.0);
    for i in 0..8 {
        for c in 0..3 {
            m[3 * i + c][3 * i + c] += mass;
        }
        for j in (i + 1)..8 {
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
    m
}

impl Component for HexahedralFEMForceFieldAndMass {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ff.init(cx)?;
        let s = cx.require_state()?;
        let n = cx.state_size(s);
        let d = cx.data();
        let density = d.get(Self::DENSITY);
        self.lumped = d.get(Self::LUMPED_MASS);
        self.separate_gravity = d.get(Self::SEPARATE_GRAVITY);
        self.rayleigh_mass = d.get(Self::RAYLEIGH_MASS);
        let hexahedra = self.ff.hexahedra().to_vec();
        let totals: Vec<f64> = self.ff.info().iter().map(|hi| edge_volume(&hi.rotated_rest) * density).collect();
        self.element_masses = totals.iter().map(|&t| Box::new(element_mass(t))).collect();
        self.particle_masses = vec![0.0; n];
        for (h, &t) in hexahedra.iter().zip(&totals) {
            let mass = t * 0.125;
            for &w in h {
                self.particle_masses[w] += mass;
            }
        }
        self.lumped_masses.clear();
        if self.lumped {
            self.lumped_masses = vec![[0.0; 3]; n];
            for (h, m) in hexahedra.iter().zip(&self.element_masses) {
                for (w, &node) in h.iter().enumerate() {
                    for j in 0..24 {
                        for c in 0..3 {
                            self.lumped_masses[node][c] += m[3 * w + c][j];
                        }
                    }
                }
            }
        }
        self.state = Some(s);
        let flat: Vec<f64> = self.element_masses.iter().flat_map(|m| m.iter().flatten().copied()).collect();
        let lumped: Vec<f64> = self.lumped_masses.iter().flatten().copied().collect();
        let dm = cx.data_mut();
        dm.put(Self::MASS_MATRICES, flat);
        dm.put(Self::TOTAL_MASS, totals);
        dm.put(Self::PARTICLE_MASSES, self.particle_masses.clone());
        dm.put(Self::LUMPED_MASSES, lumped);
        Ok(())
    }
}

impl ForceField for HexahedralFEMForceFieldAndMass {
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

impl Mass for HexahedralFEMForceFieldAndMass {
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
        for (h, me) in self.ff.hexahedra().iter().zip(&self.element_masses) {
            let mut d = [0.0; 24];
            for (k, &i) in h.iter().enumerate() {
                d[3 * k..3 * k + 3].copy_from_slice(&dx[3 * i..3 * i + 3]);
            }
            for (w, &i) in h.iter().enumerate() {
                for c in 0..3 {
                    let row = &me[3 * w + c];
                    let mut f = row[0] * d[0];
                    for j in 1..24 {
                        f += row[j] * d[j];
                    }
                    res[3 * i + c] += f * factor;
                }
            }
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

    /// The diagonal 3×3 block of each node of each element matrix, times `factor` (SOFA's
    /// `addMToMatrix` of this class skips the off-diagonal blocks).
    fn add_m_to_matrix(&self, m: &mut MatrixAccumulator, factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        for (h, me) in self.ff.hexahedra().iter().zip(&self.element_masses) {
            for (n, &a) in h.iter().enumerate() {
                let mut blk = [[0.0; 3]; 3];
                for (i, row) in blk.iter_mut().enumerate() {
                    for (j, v) in row.iter_mut().enumerate() {
                        *v = me[3 * n + i][3 * n + j] * factor;
                    }
                }
                m.add_block3(s, a, s, a, &blk);
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
mod tests {
    use super::*;
    use crate::test_support::{max_abs, perturb, Harness};

    /// The force field's `init` reads this component's Data: the class has every Data of
    /// `HexahedralFEMForceField`, with the same kind, in the same order, before its own.
    #[test]
    fn has_the_force_field_data() {
        use settee_core::component::Declared;
        let fields = |classes: &[&settee_core::ComponentClass]| -> Vec<(&'static str, settee_core::DataKind)> {
            classes[0].data.iter().flat_map(|t| t.iter()).map(|d| (d.name, d.kind)).collect()
        };
        let ff = fields(HexahedralFEMForceField::CLASSES);
        let both = fields(HexahedralFEMForceFieldAndMass::CLASSES);
        assert!(!ff.is_empty());
        assert_eq!(&both[..ff.len()], &ff[..]);
    }

    /// Two cells of 1 × 2 × 0.5 with density 3: each cell weighs 3 and gives each of its
    /// nodes 3/8; each row of an element matrix holds 8 entries 3·8/27, so M·1 is 64/9 per cell
    /// around the node. The force is HexahedralFEMForceField's plus the particle weights.
    #[test]
    fn masses_and_forces() {
        let mut h = Harness::new();
        let mo = h.add("MechanicalObject", &[]);
        h.add(
            "RegularGridTopology",
            &[("nx", "3"), ("ny", "2"), ("nz", "2"), ("xmin", "0"), ("xmax", "2"), ("ymin", "0"), ("ymax", "2"), ("zmin", "0"), ("zmax", "0.5")],
        );
        let c = h.add("HexahedralFEMForceFieldAndMass", &[("youngModulus", "1000"), ("poissonRatio", "0.3"), ("density", "3")]);
        let mut h2 = Harness::new();
        h2.add("MechanicalObject", &[]);
        h2.add(
            "RegularGridTopology",
            &[("nx", "3"), ("ny", "2"), ("nz", "2"), ("xmin", "0"), ("xmax", "2"), ("ymin", "0"), ("ymax", "2"), ("zmin", "0"), ("zmax", "0.5")],
        );
        let c2 = h2.add("HexahedralFEMForceField", &[("youngModulus", "1000"), ("poissonRatio", "0.3")]);
        h.init().unwrap();
        h2.init().unwrap();
        let rest = h.rest(mo);
        let ffm = h.get_mut::<HexahedralFEMForceFieldAndMass>(c);
        let pm = ffm.particle_masses().to_vec();
        // the two middle columns of nodes (x = 1) belong to both cells
        let total: f64 = pm.iter().sum();
        assert!((total - 6.0).abs() < 1e-12, "{total}");
        assert!(pm.iter().all(|&m| (m - 0.375).abs() < 1e-12 || (m - 0.75).abs() < 1e-12), "{pm:?}");
        let mut ones = vec![0.0; rest.len()];
        ffm.add_mdx(&mut ones, &vec![1.0; rest.len()], 1.0);
        let row_mass = 3.0 * 8.0 * 8.0 / 27.0;
        for (i, v) in ones.iter().enumerate() {
            let cells = if (pm[i / 3] - 0.75).abs() < 1e-12 { 2.0 } else { 1.0 };
            assert!((v - cells * row_mass).abs() < 1e-12, "{i}: {v}");
        }
        // the harness's gravity is (0, −9.81, 0)
        let x = perturb(&rest, 0.05, 2);
        let f = h.force(c, &x);
        let f2 = h2.force(c2, &x);
        let diff: Vec<f64> = f.iter().zip(&f2).map(|(a, b)| a - b).collect();
        for (i, d) in diff.iter().enumerate() {
            let g = if i % 3 == 1 { -9.81 * pm[i / 3] } else { 0.0 };
            assert!((d - g).abs() < 1e-12 * max_abs(&f2).max(1.0), "{i}: {d} vs {g}");
        }
    }
}
