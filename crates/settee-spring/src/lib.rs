//! Spring force fields.

mod bending_topology;
mod fast_triangular_bending_springs;
mod gear_spring_force_field;
mod joint_spring_force_field;
mod kernel;
mod mesh_spring_force_field;
mod polynomial_rest_shape_springs_force_field;
mod polynomial_springs_force_field;
mod quad_bending_springs;
mod quadular_bending_springs;
mod regular_grid_spring_force_field;
mod rest_shape_springs_force_field;
mod spring_force_field;
mod tensor_mass;
#[cfg(test)]
mod test_support;
mod topo;
mod triangle_bending_springs;
mod triangular_bending_springs;
mod triangular_springs;

pub use fast_triangular_bending_springs::{EdgeSpring, FastTriangularBendingSprings};
pub use gear_spring_force_field::{parse_gear_springs, GearSpring, GearSpringForceField};
pub use joint_spring_force_field::{parse_joint_springs, JointSpring, JointSpringForceField};
pub use mesh_spring_force_field::{mesh_springs, KindCoefficients, MeshSpringForceField, MeshSpringParams};
pub use polynomial_rest_shape_springs_force_field::PolynomialRestShapeSpringsForceField;
pub use polynomial_springs_force_field::PolynomialSpringsForceField;
pub use quad_bending_springs::{quad_bending_pairs, QuadBendingSprings};
pub use quadular_bending_springs::{QuadSpring, QuadularBendingSprings};
pub use regular_grid_spring_force_field::{grid_springs, GridCells, GridSpringCoefficients, RegularGridSpringForceField};
pub use rest_shape_springs_force_field::{rotation_error, RestShapeSpringsForceField};
pub use spring_force_field::{spring_dim, LinearSpring, SpringData, SpringForceField};
pub use tensor_mass::{TetrahedralTensorMassForceField, TriangularTensorMassForceField};
pub use triangle_bending_springs::{triangle_bending_pairs, TriangleBendingSprings};
pub use triangular_bending_springs::TriangularBendingSprings;
pub use triangular_springs::{
    BiquadraticEdge, BiquadraticTriangle, QuadraticEdge, QuadraticTriangle, TriangularBiquadraticSpringsForceField,
    TriangularQuadraticSpringsForceField,
};

/// SOFA's ForceField Data `rayleighStiffness`, as the force fields of this crate that end with it
/// declare it.
#[settee_core::data_group(data = {
    /// Rayleigh damping coefficient related to stiffness
    rayleighStiffness: Real = "0",
})]
pub struct RayleighStiffnessData;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<SpringForceField>();
    f.add::<MeshSpringForceField>();
    f.add::<RegularGridSpringForceField>();
    f.add::<TriangularBendingSprings>();
    f.add::<FastTriangularBendingSprings>();
    f.add::<QuadularBendingSprings>();
    f.add::<QuadBendingSprings>();
    f.add::<RestShapeSpringsForceField>();
    f.add::<TriangularQuadraticSpringsForceField>();
    f.add::<TriangularBiquadraticSpringsForceField>();
    f.add::<JointSpringForceField>();
    f.add::<TriangleBendingSprings>();
    f.add::<GearSpringForceField>();
    f.add::<PolynomialSpringsForceField>();
    f.add::<PolynomialRestShapeSpringsForceField>();
    f.add::<TriangularTensorMassForceField>();
    f.add::<TetrahedralTensorMassForceField>();
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use settee_core::mechanics::{self as mech, MechScope};
    use settee_core::simulation::init_root;
    use settee_core::{Mbk, Scene, StateId, VecId};

    use super::SpringForceField;
    use crate::test_support::*;

    /// The classes whose `init` runs SpringForceField's on their own Data (or writes its springs)
    /// declare every SpringForceField Data, with the same kind, before their own.
    #[test]
    fn classes_built_on_spring_force_field_declare_its_data() {
        use settee_core::{DataGroup, Declared};
        let classes = [
            SpringForceField::CLASSES[0],
            crate::QuadBendingSprings::CLASSES[0],
            crate::RegularGridSpringForceField::CLASSES[0],
            crate::MeshSpringForceField::CLASSES[0],
            crate::TriangleBendingSprings::CLASSES[0],
        ];
        for class in classes {
            let decls: Vec<_> = class.data.iter().flat_map(|t| t.iter()).collect();
            for (i, r) in <crate::SpringData as DataGroup>::TABLE.iter().enumerate() {
                let d = decls.get(i).unwrap_or_else(|| panic!("{} has fewer Data than SpringForceField", class.name));
                assert_eq!((d.name, d.kind, d.default, d.aliases), (r.name, r.kind, r.default, r.aliases), "{}", class.name);
            }
        }
    }

    /// Central differences of the force against `addDForce`, and the assembled matrix against
    /// `addDForce`.
    fn check_derivatives(s: &mut Scene) {
        let scope = MechScope::build(s, Scene::ROOT);
        let mut x0 = Vec::new();
        mech::gather(s, &scope, VecId::POSITION, &mut x0);
        let mut seed = 7;
        let dx: Vec<f64> = (0..x0.len()).map(|_| lcg(&mut seed)).collect();
        let eps = 1e-6;
        let shifted = |s: &mut Scene, sign: f64| {
            let x: Vec<f64> = x0.iter().zip(&dx).map(|(a, d)| a + sign * eps * d).collect();
            mech::scatter(s, &scope, VecId::POSITION, &x);
            forces(s, &scope)
        };
        let fp = shifted(s, 1.0);
        let fm = shifted(s, -1.0);
        mech::scatter(s, &scope, VecId::POSITION, &x0);
        forces(s, &scope);
        let df = dforce(s, &scope, &dx, 1.0);
        let scale = df.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 1.0, "degenerate test: {df:?}");
        for i in 0..df.len() {
            let fd = (fp[i] - fm[i]) / (2.0 * eps);
            assert!((fd - df[i]).abs() < 1e-6 * scale, "row {i}: finite difference {fd} vs addDForce {}", df[i]);
        }
        // kFactor scales linearly.
        let df2 = dforce(s, &scope, &dx, -2.5);
        for i in 0..df.len() {
            assert!((df2[i] + 2.5 * df[i]).abs() < 1e-12 * scale);
        }
        // Assembled K·dx equals addDForce; K is symmetric.
        let mut b = settee_linalg::MatrixBuilder::new(0);
        mech::assemble(s, &scope, Mbk { m: 0.0, b: 0.0, k: 1.0 }, &mut b).unwrap();
        let k = b.matrix();
        assert!(k.is_symmetric(1e-12 * scale));
        let mut kdx = vec![0.0; dx.len()];
        k.mul_vec(&dx, &mut kdx).unwrap();
        for i in 0..df.len() {
            assert!((kdx[i] - df[i]).abs() < 1e-12 * scale, "row {i}: K·dx {} vs addDForce {}", kdx[i], df[i]);
        }
    }

    const SPRINGS: &str = "0 1 50 2 0.8  1 2 30 1 1.1  2 3 70 0 0.5  3 0 20 3 1.3  0 2 10 0 0";

    #[test]
    fn stiffness_is_the_force_derivative_on_one_state() {
        let (f, mut s) = state_scene(&[("position", "0 0 0  1 0.1 0  1.2 1 0.3  -0.1 0.9 -0.4")]);
        add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", SPRINGS)]);
        init_root(&mut s, &f).unwrap();
        check_derivatives(&mut s);
    }

    #[test]
    fn stiffness_is_the_force_derivative_between_two_states() {
        let f = factory();
        let mut s = Scene::new("root");
        let a = s.add_node(Scene::ROOT, "A");
        let b = s.add_node(Scene::ROOT, "B");
        add(&mut s, &f, a, "MechanicalObject", &[("name", "m1"), ("position", "0 0 0  1 0.1 0  1.2 1 0.3")]);
        add(&mut s, &f, b, "MechanicalObject", &[("name", "m2"), ("position", "0.5 0.2 0.1  -0.1 0.9 -0.4")]);
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "StiffSpringForceField",
            &[("object1", "@A/m1"), ("object2", "@B/m2"), ("spring", "0 0 50 2 0.8  1 1 30 1 1.1  2 0 70 0 0.5  2 1 20 3 1.3")],
        );
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(c).template, "Vec3d");
        check_derivatives(&mut s);
    }

    #[test]
    fn stiffness_of_rigid_frames_acts_on_centers() {
        let (f, mut s) =
            state_scene(&[("template", "Rigid3d"), ("position", "0 0 0 0 0 0 1  1 0.1 0.2 0 0 0.38268343 0.92387953  0.3 1.1 -0.5 0 0 0 1")]);
        let c = add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", "0 1 50 0 0.8  1 2 30 0 1.1  0 2 10 0 0.2")]);
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(c).template, "Rigid3d");
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        // Torques untouched.
        for i in 0..3 {
            assert_eq!(&fv[6 * i + 3..6 * i + 6], &[0.0, 0.0, 0.0]);
        }
        // The derivative check with translation-only increments (rotations do not move centres).
        let mut seed = 3;
        let dx: Vec<f64> = (0..18).map(|i| if i % 6 < 3 { lcg(&mut seed) } else { 0.0 }).collect();
        let df = dforce(&mut s, &scope, &dx, 1.0);
        let mut b = settee_linalg::MatrixBuilder::new(0);
        mech::assemble(&mut s, &scope, Mbk { m: 0.0, b: 0.0, k: 1.0 }, &mut b).unwrap();
        let mut kdx = vec![0.0; 18];
        b.matrix().mul_vec(&dx, &mut kdx).unwrap();
        for i in 0..18 {
            assert!((kdx[i] - df[i]).abs() < 1e-12, "{kdx:?} vs {df:?}");
        }
    }

    #[test]
    fn force_with_damping_matches_hand_computation() {
        let f = factory();
        let mut s = Scene::new("root");
        let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  3 4 0"), ("velocity", "0 0 0  1 0 0")]);
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "SpringForceField",
            &[("indices1", "0"), ("indices2", "1"), ("stiffness", "10"), ("damping", "2"), ("lengths", "4")],
        );
        init_root(&mut s, &f).unwrap();
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        // û = (0.6, 0.8, 0), elongation 1, elongation velocity 0.6: F = 10·1 + 2·0.6 = 11.2.
        let expect = [6.72, 8.96, 0.0, -6.72, -8.96, 0.0];
        for i in 0..6 {
            assert!((fv[i] - expect[i]).abs() < 1e-14, "{fv:?}");
        }
        // K_s = (ks − F/d)·ûûᵀ + (F/d)·I with F/d = 2.24.
        let ff = s.get::<SpringForceField>(c).unwrap();
        let m = ff.spring_jacobian(0);
        let u = [0.6, 0.8, 0.0];
        for j in 0..3 {
            for k in 0..3 {
                let e = (10.0 - 2.24) * u[j] * u[k] + if j == k { 2.24 } else { 0.0 };
                assert!((m[3 * j + k] - e).abs() < 1e-14);
            }
        }
        // The `spring` Data reflects the springs built from the lists.
        let st: StateId = s.state_of(mo).unwrap();
        assert_eq!(s.store.get(st).size, 2);
        assert_eq!(s.entry(c).data.reals("spring"), &[0.0, 1.0, 10.0, 2.0, 4.0]);
        // No damping matrix: the b factor alone adds nothing.
        let df = dforce(&mut s, &scope, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], 0.0);
        assert!(df.iter().all(|v| *v == 0.0), "{df:?}");
    }

    #[test]
    fn per_spring_lists_are_resized_with_their_last_value() {
        let (f, mut s) = state_scene(&[("position", "0 0 0  1 0 0  3 0 0")]);
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "SpringForceField",
            &[("indices1", "0 1"), ("indices2", "1 2"), ("stiffness", "7"), ("lengths", "2"), ("elongationOnly", "1")],
        );
        init_root(&mut s, &f).unwrap();
        let ff = s.get::<SpringForceField>(c).unwrap();
        let sp = ff.springs();
        assert_eq!(sp.len(), 2);
        assert!(sp.iter().all(|p| p.ks == 7.0 && p.kd == 5.0 && p.initpos == 2.0 && p.elongation_only && p.enabled));
        // Spring 0 is compressed (d = 1 < 2) and only acts in elongation: no force on DOF 0.
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        assert_eq!(&fv[..3], &[0.0, 0.0, 0.0]);
        // Spring 1 is at rest length: zero force too (d = 2 is not > 2).
        assert!(fv.iter().all(|v| *v == 0.0), "{fv:?}");
    }

    #[test]
    fn out_of_range_spring_is_an_init_error() {
        let (f, mut s) = state_scene(&[("position", "0 0 0  1 0 0")]);
        add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", "0 2 10 0 1")]);
        let e = init_root(&mut s, &f).unwrap_err();
        assert!(e.diagnostic().message.contains("beyond"), "{e}");
    }
}
