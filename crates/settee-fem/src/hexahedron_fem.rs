//! `HexahedronFEMForceField`: corotational (`large`, `polar`) or linear (`small`) elasticity on
//! the hexahedra of the topology, with the element kernel of [`crate::hexa`].
//!
//! Element work runs in parallel, but every result is accumulated sequentially in element order
//! (corner order inside an element), exactly as SOFA's loop does, so the bits of the forces do not
//! depend on the number of threads.

use rayon::prelude::*;

use settee_core::data::Value;
use settee_core::role::Topology;
use settee_core::{data_group, Component, InitCtx, MatrixAccumulator, SimError, SimResult, StateId};

use crate::common::{add_element_blocks, check_elements, check_len, force_field_on_one_state, gather, rest_positions, scatter, vec3_state};
use crate::hexa::{
    element_dforce, element_force, element_force_updating_stiffness, element_stiffness_blocks, HexaElementRest, HexaMaterial, HexaMethod, Mat3, Vec3,
};
use crate::tetra_common::{parallel_loop, per_element, ElasticData};

/// [`parallel_loop`] threshold for hexahedra (24×24 element products).
pub(crate) const HEXA_PARALLEL_MIN: usize = 256;

/// One element of the zipped per-element loops: rest data, rotation, output slot, node indices.
type ForceItem<'a> = (((&'a HexaElementRest, &'a mut Mat3), &'a mut [Vec3; 8]), &'a [usize; 8]);
type DForceItem<'a> = (((&'a HexaElementRest, &'a Mat3), &'a mut [Vec3; 8]), &'a [usize; 8]);

/// The Data of `HexahedronFEMForceField` after the [`ElasticData`], which
/// `HexahedronFEMForceFieldAndMass` has too (its `init` runs this one's, which reads and writes
/// them).
#[data_group(data = {
    /// "large" (corotational, mean-edge frame), "polar" (polar decomposition) or "small" (linear)
    method: Options("large", "polar", "small") = "large",
    /// recompute each element stiffness from its deformed, rotated shape at every force evaluation
    updateStiffnessMatrix: Bool = "false",
    /// GPU only: number of DOFs accumulated per thread (unused)
    gatherPt: Str,
    /// GPU only: block size of the gather operation (unused)
    gatherBsize: Str,
    /// draw the force field (rendering only)
    drawing: Bool = "true",
    /// shrink factor of the drawn hexahedra (rendering only)
    drawPercentageOffset: Real = "0.15",
    /// output: the 24×24 stiffness matrix of each element (row-major)
    stiffnessMatrices: RealTuples(576),
    /// output: the rest positions used at init
    initialPoints: Coords,
    /// Rayleigh damping coefficient related to stiffness (> 0)
    rayleighStiffness: Real = "0",
})]
pub struct HexahedronFemData;

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        inherit = [ElasticData, HexahedronFemData],
        links = {
            /// topology whose hexahedra are the elements (default: the context topology)
            topology: Topology,
        },
    }
    /// Linear elasticity on hexahedra, with corotational (large/polar) or small displacements.
    ///
    /// The force field.
    #[derive(Clone, Default)]
    pub struct HexahedronFEMForceField {
        state: Option<StateId>,
        /// Number of DOFs of the state at init (every element index is below it).
        nb_dofs: usize,
        elements: Vec<[usize; 8]>,
        rests: Vec<HexaElementRest>,
        /// Element rotations of the last `add_force` (initial rotations before the first one).
        rotations: Vec<Mat3>,
        update_stiffness: bool,
        rayleigh_stiffness: f64,
        /// Per-element results, scattered sequentially afterwards.
        scratch: Vec<[Vec3; 8]>,
    }
}

impl HexahedronFEMForceField {
    pub fn elements(&self) -> &[[usize; 8]] {
        &self.elements
    }

    pub fn element_rests(&self) -> &[HexaElementRest] {
        &self.rests
    }

    pub fn rotations(&self) -> &[Mat3] {
        &self.rotations
    }
}

impl Component for HexahedronFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject (use a mapping for rigid frames)")?;
        let mesh = cx.require_mesh()?;
        if mesh.hexahedra.is_empty() {
            return Err(cx
                .error("the topology has no hexahedra")
                .hint("use a topology with hexahedra (RegularGridTopology, SparseGridTopology, a MeshTopology with `hexahedra`), or a TetrahedronFEMForceField for tetrahedra"));
        }
        let n = cx.state_size(s);
        check_elements(cx, "hexahedron", &mesh.hexahedra, n)?;
        let rest = rest_positions(cx, s, n)?;

        let d = cx.data();
        let young = d.get(ElasticData::YOUNG_MODULUS).to_vec();
        let poisson = d.get(ElasticData::POISSON_RATIO).to_vec();
        let method = HexaMethod::from_sofa_name(d.get(HexahedronFemData::METHOD));
        self.update_stiffness = d.get(HexahedronFemData::UPDATE_STIFFNESS_MATRIX);
        self.rayleigh_stiffness = d.get(HexahedronFemData::RAYLEIGH_STIFFNESS);
        if young.is_empty() {
            cx.warn("youngModulus is empty: using 5000");
        }
        if poisson.is_empty() {
            cx.warn("poissonRatio is empty: using 0.45");
        }
        if young.iter().any(|&e| e < 0.0) {
            cx.warn("negative youngModulus replaced by 5000");
        }
        if poisson.iter().any(|&p| !(0.0..0.5).contains(&p)) {
            cx.warn("poissonRatio outside [0, 0.5) replaced by 0.45");
        }

        // A sparse grid weights each cell by the fraction of it inside the object; SOFA scales the
        // element stiffness by that coefficient (1 for any other topology).
        let coefs = sparse_grid_coefs(cx, "stiffnessCoefs", mesh.hexahedra.len())?;
        let mut rests = Vec::with_capacity(mesh.hexahedra.len());
        for (i, h) in mesh.hexahedra.iter().enumerate() {
            let material =
                HexaMaterial::new(per_element(&young, i, HexaMaterial::DEFAULT_YOUNG), per_element(&poisson, i, HexaMaterial::DEFAULT_POISSON))
                    .validated();
            let factor = coefs.as_ref().map_or(1.0, |c| c[i]);
            let r = HexaElementRest::with_stiffness_factor(method, material, &gather(&rest, h), factor).map_err(|e| {
                cx.error(format!("hexahedron {i} {h:?}: {e}"))
                    .hint("the element is flat or inverted in the rest configuration; check the corner order (bottom face counter-clockwise, then top face)")
            })?;
            rests.push(r);
        }

        self.state = Some(s);
        self.nb_dofs = n;
        self.rotations = rests.iter().map(|r| *r.initial_rotation()).collect();
        self.elements = mesh.hexahedra;
        self.rests = rests;
        self.scratch = vec![[[0.0; 3]; 8]; self.elements.len()];

        let ks: Vec<f64> = self.rests.iter().flat_map(|r| r.stiffness().iter().flatten().copied()).collect();
        let d = cx.data_mut();
        d.put(HexahedronFemData::STIFFNESS_MATRICES, ks);
        d.put(HexahedronFemData::INITIAL_POINTS, rest[..3 * n].to_vec());
        Ok(())
    }
}

/// The per-hexahedron coefficients of the topology when it is a sparse grid (its `stiffnessCoefs`
/// or `massCoefs` output: the fraction of each cell inside the object), `None` for other
/// topologies.
pub(crate) fn sparse_grid_coefs(cx: &InitCtx, name: &str, nb_hexahedra: usize) -> SimResult<Option<Vec<f64>>> {
    let Some(t) = cx.topology() else {
        return Ok(None);
    };
    let entry = cx.scene.entry(t);
    if !entry.class.name.starts_with("SparseGrid") {
        return Ok(None);
    }
    let Some(field) = entry.data.index_of(name) else {
        return Ok(None);
    };
    let coefs = match cx.scene.read_data(t, field) {
        Value::Reals { v, .. } => v,
        _ => return Ok(None),
    };
    if coefs.len() != nb_hexahedra {
        return Err(cx.error(format!("the sparse grid gives {} {name} for {nb_hexahedra} hexahedra", coefs.len())));
    }
    Ok(Some(coefs))
}

force_field_on_one_state!(HexahedronFEMForceField);

impl HexahedronFEMForceField {
    fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        check_len("the position vector", x, self.nb_dofs)?;
        check_len("the force vector", f, self.nb_dofs)?;
        let elements = &self.elements;
        if self.update_stiffness {
            self.rests
                .par_iter_mut()
                .zip(self.rotations.par_iter_mut())
                .zip(self.scratch.par_iter_mut())
                .zip(elements.par_iter())
                .try_for_each(|(((rest, rot), out), e)| -> Result<(), crate::hexa::HexaError> {
                    *out = element_force_updating_stiffness(rest, &gather(x, e), rot)?;
                    Ok(())
                })
                .map_err(|e| {
                    SimError::new(format!("updating an element stiffness: {e}")).hint("an element is flat or inverted in the current configuration")
                })?;
        } else {
            let body = |(((rest, rot), out), e): ForceItem| *out = element_force(rest, &gather(x, e), rot);
            if parallel_loop(elements.len(), HEXA_PARALLEL_MIN) {
                self.rests.par_iter().zip(self.rotations.par_iter_mut()).zip(self.scratch.par_iter_mut()).zip(elements.par_iter()).for_each(body);
            } else {
                self.rests.iter().zip(self.rotations.iter_mut()).zip(self.scratch.iter_mut()).zip(elements.iter()).for_each(body);
            }
        }
        scatter(f, elements.iter().zip(&self.scratch));
        Ok(())
    }

    fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, _b_factor: f64) -> SimResult {
        check_len("the displacement vector", dx, self.nb_dofs)?;
        check_len("the force-differential vector", df, self.nb_dofs)?;
        let elements = &self.elements;
        let body = |(((rest, rot), out), e): DForceItem| *out = element_dforce(rest, rot, &gather(dx, e), k_factor);
        if parallel_loop(elements.len(), HEXA_PARALLEL_MIN) {
            self.rests.par_iter().zip(self.rotations.par_iter()).zip(self.scratch.par_iter_mut()).zip(elements.par_iter()).for_each(body);
        } else {
            self.rests.iter().zip(self.rotations.iter()).zip(self.scratch.iter_mut()).zip(elements.iter()).for_each(body);
        }
        scatter(df, elements.iter().zip(&self.scratch));
        Ok(())
    }

    fn k_matrix(&self, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        let block = |(rest, rot): (&HexaElementRest, &Mat3)| element_stiffness_blocks(rest, rot, k_factor);
        let blocks: Vec<[[Mat3; 8]; 8]> = if parallel_loop(self.rests.len(), HEXA_PARALLEL_MIN) {
            self.rests.par_iter().zip(self.rotations.par_iter()).map(block).collect()
        } else {
            self.rests.iter().zip(self.rotations.iter()).map(block).collect()
        };
        for (e, b) in self.elements.iter().zip(&blocks) {
            add_element_blocks(m, s, e, |a, c| &b[a][c]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{bits, max_abs, on_grid, perturb, Harness};
    use settee_core::ComponentId;
    use settee_core::ForceField;

    fn setup(grid: &[(&str, &str)], ff_attrs: &[(&str, &str)]) -> SimResult<(Harness, ComponentId, Vec<f64>)> {
        on_grid(grid, "HexahedronFEMForceField", ff_attrs)
    }

    const FEMBAR_GRID: &[(&str, &str)] =
        &[("nx", "4"), ("ny", "4"), ("nz", "20"), ("xmin", "-9"), ("xmax", "-6"), ("ymin", "0"), ("ymax", "3"), ("zmin", "0"), ("zmax", "19")];

    fn ff(h: &mut Harness, id: ComponentId) -> &mut HexahedronFEMForceField {
        h.get_mut(id)
    }

    #[test]
    fn zero_force_at_rest() {
        for method in ["large", "polar", "small"] {
            let (mut h, id, rest) = setup(FEMBAR_GRID, &[("youngModulus", "4000"), ("poissonRatio", "0.3"), ("method", method)]).unwrap();
            assert_eq!(ff(&mut h, id).elements().len(), 171);
            let f = h.force(id, &rest);
            assert!(f.iter().all(|&v| v == 0.0), "{method}");
        }
    }

    #[test]
    fn dforce_equals_assembled_matrix_times_dx() {
        for (method, update) in [("large", "0"), ("polar", "0"), ("small", "0"), ("large", "1")] {
            let (mut h, id, rest) = setup(
                FEMBAR_GRID,
                &[
                    ("youngModulus", "4000"),
                    ("poissonRatio", "0.3"),
                    ("method", method),
                    ("updateStiffnessMatrix", update),
                    ("rayleighStiffness", "0.1"),
                ],
            )
            .unwrap();
            let x = perturb(&rest, 0.2, 7);
            let dx = perturb(&vec![0.0; x.len()], 1.0, 11);
            let (df, m, kdx) = h.dforce_and_assembled(id, &x, &dx, -1.7);
            assert_eq!(ff(&mut h, id).rayleigh_stiffness(), 0.1);
            let scale = max_abs(&df);
            assert!(scale > 1.0);
            for (i, (a, b)) in df.iter().zip(&kdx).enumerate() {
                assert!((a - b).abs() <= 1e-12 * scale, "{method} row {i}: {a} vs {b}");
            }
            assert!(m.is_symmetric(1e-9 * scale));
        }
    }

    /// Uniaxial stress σxx = E·ε on a 2×1×1 block: the x-faces carry ∓E·ε·area, every other
    /// node force vanishes.
    #[test]
    fn uniaxial_stretch_gives_hooke_forces() {
        let (e, nu, eps) = (1000.0, 0.3, 1e-4);
        for method in ["large", "polar", "small"] {
            let (mut h, id, rest) = setup(
                &[("n", "5 3 3"), ("min", "0 0 0"), ("max", "2 1 1")],
                &[("youngModulus", "1000"), ("poissonRatio", "0.3"), ("method", method)],
            )
            .unwrap();
            let x: Vec<f64> = rest.chunks(3).flat_map(|p| [p[0] * (1.0 + eps), p[1] * (1.0 - nu * eps), p[2] * (1.0 - nu * eps)]).collect();
            let f = h.force(id, &x);
            let mut right = [0.0; 3];
            let mut left = [0.0; 3];
            for (p, fp) in rest.chunks(3).zip(f.chunks(3)) {
                let side = if p[0] == 2.0 {
                    &mut right
                } else if p[0] == 0.0 {
                    &mut left
                } else {
                    &mut [0.0; 3]
                };
                for c in 0..3 {
                    side[c] += fp[c];
                }
                if p[0] > 0.0 && p[0] < 2.0 {
                    // interior x-layers are in equilibrium along x
                    assert!(fp[0].abs() < 1e-12, "{method} {p:?}: {fp:?}");
                }
                // no lateral stress: y and z forces vanish everywhere
                assert!(fp[1].abs() < 1e-12 && fp[2].abs() < 1e-12, "{method} {p:?}: {fp:?}");
            }
            assert!((right[0] + e * eps).abs() < 1e-10, "{method}: {right:?}");
            assert!((left[0] - e * eps).abs() < 1e-10, "{method}: {left:?}");
        }
    }

    /// 1 and 4 threads give the same bits for the force and its differential. The FEMBAR beam
    /// widened to 5×5 nodes has 4×4×19 = 304 hexahedra, above the 256 from which the element loops
    /// run on rayon's pool; the test checks that both loops took that branch.
    #[test]
    fn results_do_not_depend_on_thread_count() {
        let grid: &[(&str, &str)] =
            &[("nx", "5"), ("ny", "5"), ("nz", "20"), ("xmin", "-9"), ("xmax", "-6"), ("ymin", "0"), ("ymax", "3"), ("zmin", "0"), ("zmax", "19")];
        let (mut h, id, rest) = setup(grid, &[("youngModulus", "4000"), ("poissonRatio", "0.3")]).unwrap();
        let x = perturb(&rest, 0.3, 3);
        let dx = perturb(&vec![0.0; x.len()], 1.0, 5);
        let c = ff(&mut h, id);
        assert!(c.elements.len() >= HEXA_PARALLEL_MIN, "{} hexahedra", c.elements.len());
        let mut run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let before = crate::element_loop_counts();
                let out = (bits(&h.force(id, &x)), bits(&h.dforce(id, &dx, 0.37)));
                let after = crate::element_loop_counts();
                (out, (after.0 - before.0, after.1 - before.1))
            })
        };
        let (one, loops1) = run(1);
        let (four, loops4) = run(4);
        assert_eq!(loops1, (2, 0), "one thread: (loops, parallel)");
        assert_eq!(loops4, (2, 2), "four threads: (loops, parallel)");
        assert_eq!(one, four);
    }

    #[test]
    fn mesh_without_hexahedra_is_an_error() {
        let mut h = Harness::new();
        h.add("MeshTopology", &[("position", "0 0 0 1 0 0 0 1 0 0 0 1"), ("tetrahedra", "0 1 2 3")]);
        h.add("MechanicalObject", &[]);
        h.add("HexahedronFEMForceField", &[]);
        let e = h.init().unwrap_err();
        assert!(e.to_string().contains("no hexahedra") && e.diagnostic().hint.is_some(), "{e}");

        // and a flat element
        let e = setup(&[("n", "2 2 2"), ("min", "0 0 0"), ("max", "1 1 0")], &[]).err().unwrap();
        assert!(e.to_string().contains("singular"), "{e}");
    }
}
