//! `StandardTetrahedralFEMForceField`: SOFA's older hyperelastic tetrahedron, with the force of
//! [`super::TetrahedronHyperelasticityFEMForceField`] (`f = −V₀·Bᵀ·S` per element) and the same
//! per-edge tangent `V₀·((s_k·S·s_l) I + Bₖᵀ·𝔻·B_l)` (SOFA assembles it through the 6×6 elasticity
//! tensor; the entries agree up to rounding). Its materials: ArrudaBoyce, StVenantKirchhoff,
//! NeoHookean, MooneyRivlin, Ogden (VerondaWestman and Costa are not implemented).

use settee_core::role::Topology;
use settee_core::{Component, InitCtx, SimResult};

use super::TetrahedronHyperelasticityFEMForceField;
use crate::common::force_field_on_one_state;

/// The material names SOFA's class accepts.
const STANDARD_MATERIALS: &[&str] = &["ArrudaBoyce", "StVenantKirchhoff", "NeoHookean", "MooneyRivlin", "VerondaWestman", "Costa", "Ogden"];

crate::common::force_field_class! {
    {
        module = "Sofa.Component.SolidMechanics.FEM.HyperElastic",
        data = {
            /// the name of the material to be used: ArrudaBoyce (mu k0), StVenantKirchhoff (mu lambda), NeoHookean (mu lambda), MooneyRivlin (c1 c2 k0), Ogden (mu1 alpha1 k0); VerondaWestman and Costa are not implemented
            materialName: Str = "ArrudaBoyce",
            /// The global parameters specifying the material
            ParameterSet: Reals,
            /// The global directions of anisotropy of the material (unused by the isotropic materials)
            AnisotropyDirections: Coords,
            /// the name of the file describing the material parameters for all tetrahedra (not read)
            ParameterFile: Str = "myFile.param",
            /// Rayleigh damping coefficient related to stiffness (> 0)
            rayleighStiffness: Real = "0",
        },
        links = {
            /// topology whose tetrahedra (and edges) are used (default: the context topology)
            topology: Topology,
        },
    }
    /// Generic Tetrahedral finite elements (hyperelastic materials on the tetrahedra of a topology).
    ///
    /// The force field.
    #[derive(Clone, Default)]
    pub struct StandardTetrahedralFEMForceField {
        inner: TetrahedronHyperelasticityFEMForceField,
        rayleigh_stiffness: f64,
    }
}

impl StandardTetrahedralFEMForceField {
    /// The hyperelastic element loops it runs.
    pub fn hyperelastic(&self) -> &TetrahedronHyperelasticityFEMForceField {
        &self.inner
    }
}

impl Component for StandardTetrahedralFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let name = d.get(Self::MATERIAL_NAME).to_string();
        let params = d.get(Self::PARAMETER_SET).to_vec();
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        if !STANDARD_MATERIALS.contains(&name.as_str()) {
            return Err(cx
                .error(format!("material name '{name}' is not valid"))
                .hint("materialName is one of ArrudaBoyce, StVenantKirchhoff, NeoHookean, MooneyRivlin, Ogden"));
        }
        self.inner.build(cx, &name, &params, self.rayleigh_stiffness)
    }
}

force_field_on_one_state!(StandardTetrahedralFEMForceField, via inner);

#[cfg(test)]
mod tests {
    use crate::test_support::{grid_hexahedra, grid_points, join, perturb, Harness};

    fn setup(class: &str, material: &str, params: &str) -> (Harness, settee_core::ComponentId, Vec<f64>) {
        let mut h = Harness::new();
        let cells = [2, 1, 2];
        let pos = join(grid_points(cells, [0.5, 0.5, 1.35]));
        let tets = crate::tetra::split_hexahedra(&grid_hexahedra(cells), (cells[0], cells[1]));
        h.add("MeshTopology", &[("position", pos.as_str()), ("tetrahedra", join(tets.iter().flatten()).as_str())]);
        let mo = h.add("MechanicalObject", &[]);
        let ff = h.add(class, &[("materialName", material), ("ParameterSet", params)]);
        h.init().unwrap();
        let rest = h.rest(mo);
        (h, ff, rest)
    }

    /// The scene's materials: the forces and differentials of TetrahedronHyperelasticityFEMForceField.
    #[test]
    fn same_element_as_the_hyperelasticity_force_field() {
        for (m, p) in [
            ("ArrudaBoyce", "3448.2759 31034.483"),
            ("StVenantKirchhoff", "3448.2759 31034.483"),
            ("NeoHookean", "3448.2759 31034.483"),
            ("MooneyRivlin", "5000 7000 10"),
        ] {
            let (mut a, fa, rest) = setup("StandardTetrahedralFEMForceField", m, p);
            let (mut b, fb, _) = setup("TetrahedronHyperelasticityFEMForceField", m, p);
            let x = perturb(&rest, 0.05, 3);
            let dx = perturb(&vec![0.0; x.len()], 1.0, 4);
            assert_eq!(a.force(fa, &x), b.force(fb, &x), "{m}");
            assert_eq!(a.dforce(fa, &dx, 0.7), b.dforce(fb, &dx, 0.7), "{m}");
            let (fd, df) = a.central_differences(fa, &x, &dx, 1e-6);
            let scale = crate::test_support::max_abs(&df);
            for (u, v) in fd.iter().zip(&df) {
                assert!((u - v).abs() < 2e-5 * scale, "{m}: {u} vs {v}");
            }
        }
    }

    #[test]
    fn stable_neo_hookean_is_not_one_of_its_materials() {
        let mut h = Harness::new();
        h.add("MeshTopology", &[("position", "0 0 0 1 0 0 0 1 0 0 0 1"), ("tetrahedra", "0 1 2 3")]);
        h.add("MechanicalObject", &[]);
        h.add("StandardTetrahedralFEMForceField", &[("materialName", "StableNeoHookean"), ("ParameterSet", "1 2")]);
        let e = h.init().unwrap_err();
        assert!(e.to_string().contains("is not valid"), "{e}");
    }
}
