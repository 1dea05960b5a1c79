//! Mechanical loads: external forces applied to DOFs.

mod conical_force_field;
mod constant_force_field;
mod diagonal_velocity_damping_force_field;
mod edge_pressure_force_field;
mod ellipsoid_force_field;
mod gravity;
mod interaction_ellipsoid_force_field;
mod linear_force_field;
mod plane_force_field;
mod quad_pressure_force_field;
mod sphere_force_field;
mod surface_pressure_force_field;
mod tait_surface_pressure_force_field;
#[cfg(test)]
mod test_support;
mod triangle_pressure_force_field;
mod uniform_velocity_damping_force_field;

pub use conical_force_field::{ConeContact, ConicalForceField};
pub use constant_force_field::ConstantForceField;
pub use diagonal_velocity_damping_force_field::DiagonalVelocityDampingForceField;
pub use edge_pressure_force_field::EdgePressureForceField;
pub use ellipsoid_force_field::EllipsoidForceField;
pub use gravity::Gravity;
pub use interaction_ellipsoid_force_field::{EllipsoidContact, InteractionEllipsoidForceField};
pub use linear_force_field::LinearForceField;
pub use plane_force_field::PlaneForceField;
pub use quad_pressure_force_field::QuadPressureForceField;
pub use sphere_force_field::{SphereContact, SphereForceField};
pub use surface_pressure_force_field::SurfacePressureForceField;
pub use tait_surface_pressure_force_field::{mesh_volume_and_area, tait_pressure, TaitSurfacePressureForceField};
pub use triangle_pressure_force_field::{parse_matsym3, TrianglePressureForceField};
pub use uniform_velocity_damping_force_field::UniformVelocityDampingForceField;

/// The mechanical state of a single-state force field (`mstate` link, else the context state),
/// which must have the force field's template `layout`.
pub(crate) fn state_of_template(cx: &settee_core::InitCtx, layout: settee_core::Layout) -> settee_core::SimResult<settee_core::StateId> {
    let s = cx.require_state()?;
    if cx.state_layout(s) != layout {
        return Err(cx.error(format!(
            "the mechanical state is a {} state but the force field has template {}",
            cx.state_layout(s).name(),
            layout.name()
        )));
    }
    Ok(s)
}

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<ConstantForceField>();
    f.add::<EdgePressureForceField>();
    f.add::<Gravity>();
    f.add::<InteractionEllipsoidForceField>();
    f.add::<PlaneForceField>();
    f.add::<SphereForceField>();
    f.add::<EllipsoidForceField>();
    f.add::<SurfacePressureForceField>();
    f.add::<TaitSurfacePressureForceField>();
    f.add::<TrianglePressureForceField>();
    f.add::<UniformVelocityDampingForceField>();
    f.add::<LinearForceField>();
    f.add::<ConicalForceField>();
    f.add::<DiagonalVelocityDampingForceField>();
    f.add::<QuadPressureForceField>();
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use settee_core::mechanics::{self as mech, MechScope};
    use settee_core::simulation::init_root;
    use settee_core::{ComponentId, Mbk, Scene, SimResult, VecId};

    use crate::test_support::{add, factory};

    /// The force vector computed on a single state with one ConstantForceField.
    fn force_of(mo: &[(&str, &str)], cff: &[(&str, &str)]) -> SimResult<(Vec<f64>, Scene, ComponentId)> {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", mo);
        let c = add(&mut s, &f, Scene::ROOT, "ConstantForceField", cff);
        init_root(&mut s, &f)?;
        let scope = MechScope::build(&s, Scene::ROOT);
        mech::compute_force(&mut s, &scope, VecId::FORCE, VecId::POSITION, VecId::VELOCITY)?;
        let mut out = Vec::new();
        mech::gather(&s, &scope, VecId::FORCE, &mut out);
        Ok((out, s, c))
    }

    const THREE: (&str, &str) = ("position", "0 0 0  1 0 0  2 0 0");

    #[test]
    fn forces_per_index() {
        let (f, _, _) = force_of(&[THREE], &[("indices", "0 2"), ("forces", "1 2 3  4 5 6")]).unwrap();
        assert_eq!(f, vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn single_force_on_all_dofs_and_outputs() {
        let (f, s, c) = force_of(&[THREE], &[("force", "0.5 -1 0.25")]).unwrap();
        assert_eq!(f, [0.5, -1.0, 0.25].repeat(3));
        let d = &s.entry(c).data;
        assert_eq!(d.indices("indices"), &[0, 1, 2]);
        assert_eq!(d.reals("totalForce"), &[1.5, -3.0, 0.75]);
        assert_eq!(d.reals("forces"), [0.5, -1.0, 0.25].repeat(3).as_slice());
    }

    #[test]
    fn total_force_is_shared_and_forces_take_precedence() {
        let (f, _, _) = force_of(&[THREE], &[("indices", "1 2"), ("totalForce", "3 0 -1")]).unwrap();
        assert_eq!(f, vec![0.0, 0.0, 0.0, 1.5, 0.0, -0.5, 1.5, 0.0, -0.5]);
        let (f, _, _) = force_of(&[THREE], &[("indices", "1"), ("forces", "1 1 1"), ("force", "9 9 9"), ("totalForce", "7 7 7")]).unwrap();
        assert_eq!(f, vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn index_from_end() {
        let (f, _, _) = force_of(&[THREE], &[("indices", "0"), ("indexFromEnd", "true"), ("force", "1 2 3")]).unwrap();
        assert_eq!(f, vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn rigid_force_and_torque() {
        let mo = [("template", "Rigid3d"), ("position", "0 0 0 0 0 0 1  1 0 0 0 0 0 1")];
        let (f, _, _) = force_of(&mo, &[("indices", "1"), ("force", "1 2 3 4 5 6")]).unwrap();
        assert_eq!(f, vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn no_stiffness() {
        let (_, mut s, _) = force_of(&[THREE], &[("force", "1 2 3")]).unwrap();
        let scope = MechScope::build(&s, Scene::ROOT);
        mech::scatter(&mut s, &scope, VecId::DX, &[1.0; 9]);
        for &st in &scope.states {
            s.store.get_mut(st).write(VecId::DFORCE).fill(0.0);
        }
        mech::add_mbkdx(&mut s, &scope, VecId::DFORCE, VecId::DX, Mbk { m: 0.0, b: 0.0, k: 1.0 }, true).unwrap();
        assert!(s.vec(scope.states[0], VecId::DFORCE).iter().all(|v| *v == 0.0));
        let mut b = settee_linalg::MatrixBuilder::new(0);
        mech::assemble(&mut s, &scope, Mbk { m: 0.0, b: 0.0, k: 1.0 }, &mut b).unwrap();
        assert!(b.matrix().values().iter().all(|v| *v == 0.0));
    }

    #[test]
    fn invalid_inputs_are_errors() {
        let e = force_of(&[THREE], &[("indices", "0 3"), ("force", "1 0 0")]).err().expect("an error");
        assert!(e.diagnostic().message.contains("beyond"), "{e}");
        // Two forces for three indices (one would be replicated, as SOFA does).
        let e = force_of(&[THREE], &[("forces", "1 0 0  0 1 0")]).err().expect("an error");
        assert!(e.diagnostic().hint.as_deref().unwrap_or("").contains("force="), "{e}");
    }
}
