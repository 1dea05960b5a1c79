//! `TetrahedralCorotationalFEMForceField`: the tetrahedral element of
//! [`crate::tetrahedron_fem`] (same strain–displacement and material matrices, same `large` frame
//! and `polar` rotation, same differentials) with the differences of its SOFA class: methods
//! `small`, `large`, `polar` only (anything else is `large`, silently), no plasticity, rest
//! shape from the state's rest positions, elements strictly the topology's tetrahedra, and
//! `updateStiffnessMatrix` rewriting every aliased entry of `J` for `large`.

use settee_core::role::Topology;
use settee_core::{Component, InitCtx, SimResult};

use crate::common::{check_elements, force_field_on_one_state, rest_positions, vec3_state};
use crate::hexa::Mat3;
use crate::tetra::{LargeStiffnessUpdate, Plasticity, TetraMethod, TetraOptions};
use crate::tetra_common::{material_lists, ElasticData, TetraEngine};

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        data = {
            /// "small", "large" (frame of the first three nodes) or "polar" displacements (anything else: large)
            method: Str = "large",
            /// per-element factor on Young's modulus: with N elements and M values, element i uses entry i*M/N
            localStiffnessFactor: Reals,
            /// large/polar: rebuild the strain-displacement matrix from the deformed element at every force evaluation
            updateStiffnessMatrix: Bool = "false",
            /// SOFA's assembled code path (small/large; polar then adds no force)
            #[alias("assembling")]
            computeGlobalMatrix: Bool = "false",
            /// draw the force field (rendering only)
            drawing: Bool = "true",
            /// colour of faces 1 (rendering only)
            drawColor1: Fixed(4) = "0 0 1 1",
            /// colour of faces 2 (rendering only)
            drawColor2: Fixed(4) = "0 0.5 1 1",
            /// colour of faces 3 (rendering only)
            drawColor3: Fixed(4) = "0 1 1 1",
            /// colour of faces 4 (rendering only)
            drawColor4: Fixed(4) = "0.5 1 1 1",
            /// von Mises stress diagnostics (no effect on the dynamics; not computed here)
            computeVonMisesStress: Bool = "false",
            /// output: von Mises stress per element (not computed)
            vonMisesPerElement: Reals,
            /// output: von Mises stress per node (not computed)
            vonMisesPerNode: Reals,
            /// Rayleigh damping coefficient related to stiffness (> 0)
            rayleighStiffness: Real = "0",
        },
        links = {
            /// topology whose tetrahedra are the elements (default: the context topology)
            topology: Topology,
        },
        inherit = [ElasticData, Self],
    }
    /// Corotational (large/polar) or linear (small) elasticity on the tetrahedra of a topology.
    ///
    /// The force field.
    #[derive(Clone, Default)]
    pub struct TetrahedralCorotationalFEMForceField {
        engine: TetraEngine,
        rayleigh_stiffness: f64,
        /// Material lists read at init, for the elements created by topological changes.
        young: Vec<f64>,
        poisson: Vec<f64>,
        local_stiffness_factor: Vec<f64>,
    }
}

impl TetrahedralCorotationalFEMForceField {
    pub fn tetrahedra(&self) -> &[[usize; 4]] {
        &self.engine.tetrahedra
    }

    pub fn method(&self) -> TetraMethod {
        self.engine.opts.method
    }

    pub fn element_rest(&self, i: usize) -> &crate::tetra::TetraElementRest {
        &self.engine.elements[i].rest
    }

    /// Rotation (world → element frame) of element `i` from the last `add_force`.
    pub fn element_rotation(&self, i: usize) -> &Mat3 {
        &self.engine.elements[i].rotation
    }
}

impl Component for TetrahedralCorotationalFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject (use a mapping for rigid frames)")?;
        let mesh = cx.require_mesh()?;
        if mesh.tetrahedra.is_empty() {
            cx.warn("no tetrahedra found in the topology: this force field adds no force");
        }
        let n = cx.state_size(s);
        check_elements(cx, "tetrahedron", &mesh.tetrahedra, n)?;
        let rest = rest_positions(cx, s, n)?;
        let (young, poisson) = material_lists(cx, ElasticData::YOUNG_MODULUS, ElasticData::POISSON_RATIO);
        let d = cx.data();
        let method = match d.get(Self::METHOD) {
            "small" => TetraMethod::Small,
            "polar" => TetraMethod::Polar,
            _ => TetraMethod::Large,
        };
        let opts = TetraOptions {
            method,
            assembling: d.get(Self::COMPUTE_GLOBAL_MATRIX),
            update_stiffness: d.get(Self::UPDATE_STIFFNESS_MATRIX),
            large_update: LargeStiffnessUpdate::AllEntries,
            plasticity: Plasticity::DISABLED,
        };
        let lsf = d.get(Self::LOCAL_STIFFNESS_FACTOR).to_vec();
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        if opts.assembling && method == TetraMethod::Polar {
            cx.warn("computeGlobalMatrix is not supported with method \"polar\": like SOFA, this force field adds no force");
        }
        self.engine.build(s, n, mesh.tetrahedra, &rest, &young, &poisson, &lsf, opts).map_err(|(i, e)| cx.error(format!("tetrahedron {i}: {e}")))?;
        (self.young, self.poisson, self.local_stiffness_factor) = (young, poisson, lsf);
        Ok(())
    }

    /// Tetrahedra removed / added / renumbered and points renumbered: see [`TetraEngine::follow`].
    fn topology_changed(
        &mut self,
        cx: &mut InitCtx,
        topology: settee_core::ComponentId,
        changes: &[settee_core::topology_change::TopologyChange],
    ) -> SimResult<settee_core::topology_change::Follow> {
        let Some(s) = self.engine.state else { return Ok(settee_core::topology_change::Follow::NotConcerned) };
        let mesh = cx.scene.mesh_of(topology).ok_or_else(|| cx.error(format!("{} provides no mesh", cx.scene.entry(topology).label())))?;
        let n = settee_core::topology_change::state_size_after(changes, cx.state_size(s));
        let rest = || settee_core::topology_change::points_after(&cx.rest_or_position(s), 3, changes);
        self.engine
            .follow(changes, &mesh.tetrahedra, n, rest, &self.young, &self.poisson, &self.local_stiffness_factor)
            .map_err(|e| cx.error(format!("cannot follow the topological change: {e}")))?;
        Ok(settee_core::topology_change::Follow::Followed)
    }
}

force_field_on_one_state!(TetrahedralCorotationalFEMForceField, via engine);

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{max_abs, perturb, Harness};
    use settee_core::ComponentId;

    /// A grid, tetrahedralised by hand with the 6-tetra split, in a MeshTopology.
    fn setup(ff: &[(&str, &str)]) -> (Harness, ComponentId, Vec<f64>) {
        let mut h = Harness::new();
        // 2×2×3 points
        let mut pos = String::new();
        for z in 0..3 {
            for y in 0..2 {
                for x in 0..2 {
                    pos += &format!("{} {} {} ", x as f64 * 1.5, y, z as f64 * 2.0);
                }
            }
        }
        let hexa = [[0, 1, 3, 2, 4, 5, 7, 6], [4, 5, 7, 6, 8, 9, 11, 10]];
        let tets = crate::tetra::split_hexahedra(&hexa, (1, 1));
        let tstr: Vec<String> = tets.iter().flatten().map(|i| i.to_string()).collect();
        h.add("MeshTopology", &[("position", pos.as_str()), ("tetrahedra", tstr.join(" ").as_str())]);
        let mo = h.add("MechanicalObject", &[]);
        let c = h.add("TetrahedralCorotationalFEMForceField", ff);
        h.init().unwrap();
        let rest = h.rest(mo);
        (h, c, rest)
    }

    #[test]
    fn zero_force_at_rest_and_dforce_matches_matrix() {
        for method in ["small", "large", "polar", "bogus"] {
            for update in ["false", "true"] {
                let (mut h, ff, rest) =
                    setup(&[("youngModulus", "1000"), ("poissonRatio", "0.3"), ("method", method), ("updateStiffnessMatrix", update)]);
                assert_eq!(h.get_mut::<TetrahedralCorotationalFEMForceField>(ff).tetrahedra().len(), 12);
                assert_eq!(max_abs(&h.force(ff, &rest)), 0.0, "{method}");
                let x = perturb(&rest, 0.1, 1);
                let dx = perturb(&vec![0.0; x.len()], 1.0, 2);
                let (df, _, kdx) = h.dforce_and_assembled(ff, &x, &dx, -0.3);
                let scale = max_abs(&df);
                for (a, b) in df.iter().zip(&kdx) {
                    assert!((a - b).abs() < 1e-11 * scale, "{method}");
                }
            }
        }
    }

    /// Same element mathematics as TetrahedronFEMForceField: identical forces (bit for bit)
    /// without updateStiffnessMatrix.
    #[test]
    fn same_forces_as_tetrahedron_fem() {
        for method in ["small", "large", "polar"] {
            let (mut h, ff, rest) = setup(&[("youngModulus", "1000"), ("poissonRatio", "0.3"), ("method", method)]);
            let mut h2 = Harness::new();
            let topo = h.scene.entry(ComponentId::first_in_slot(0)).data.indices("tetrahedra").to_vec();
            let tstr: Vec<String> = topo.iter().map(|i| i.to_string()).collect();
            let pstr: Vec<String> = rest.iter().map(|v| format!("{v:?}")).collect();
            h2.add("MeshTopology", &[("position", pstr.join(" ").as_str()), ("tetrahedra", tstr.join(" ").as_str())]);
            h2.add("MechanicalObject", &[]);
            let ff2 = h2.add("TetrahedronFEMForceField", &[("youngModulus", "1000"), ("poissonRatio", "0.3"), ("method", method)]);
            h2.init().unwrap();
            let x = perturb(&rest, 0.2, 9);
            let dx = perturb(&vec![0.0; x.len()], 1.0, 4);
            assert_eq!(h.force(ff, &x), h2.force(ff2, &x), "{method}");
            assert_eq!(h.dforce(ff, &dx, 0.7), h2.dforce(ff2, &dx, 0.7), "{method}");
        }
    }
}
