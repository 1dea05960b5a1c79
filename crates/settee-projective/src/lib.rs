//! Projective constraints: project positions, velocities and increments onto the constrained
//! subspace.

mod fixed;
mod partial_fixed;
pub mod point;
pub mod subspace;

pub use fixed::FixedProjectiveConstraint;
pub use partial_fixed::PartialFixedProjectiveConstraint;
pub use point::PointProjectiveConstraint;
pub use subspace::{Subspace, SubspaceProjectiveConstraint};

/// Data every projective constraint has.
pub static PROJECTIVE_BASE: &[settee_core::DataDecl] = &[
    settee_core::data::decl("endTime", settee_core::DataKind::Real, "-1", "the constraint stops acting after this time (-1: never)"),
    settee_core::data::decl("group", settee_core::DataKind::Int, "0", "ID of the group containing this constraint"),
];

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register(&fixed::CLASS);
    f.register(&partial_fixed::CLASS);
    f.register(&point::CLASS);
    f.register(&subspace::LINE_CLASS);
    f.register(&subspace::PLANE_CLASS);
}

#[cfg(test)]
mod tests {
    use settee_core::mechanics::{self as mech, MechScope};
    use settee_core::simulation::init_root;
    use settee_core::testing::{add, assembled};
    use settee_core::{Factory, Scene, VecId};

    use crate::PartialFixedProjectiveConstraint;

    fn factory() -> Factory {
        let mut f = Factory::new();
        settee_statecontainer::register(&mut f);
        settee_spring::register(&mut f);
        super::register(&mut f);
        f
    }

    /// Two Vec3 DOFs at (0,0,0) and (3,4,0) joined by a spring at rest (ks 25, L 5): the stiffness
    /// is ±ks·ûûᵀ with û = (0.6, 0.8, 0), i.e. blocks ±[[9, 12, 0], [12, 16, 0], [0, 0, 0]].
    /// `PartialFixedConstraint` (SOFA's old name) blocking y of DOF 1 clears row and column 4 and
    /// puts 1 on their diagonal; the other entries keep their values.
    #[test]
    fn assembled_rows_of_blocked_components_are_cleared() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  3 4 0")]);
        add(&mut s, &f, Scene::ROOT, "SpringForceField", &[("spring", "0 1 25 0 5")]);
        let c = add(&mut s, &f, Scene::ROOT, "PartialFixedConstraint", &[("indices", "1"), ("fixedDirections", "0 1 0")]);
        assert_eq!(s.entry(c).class.name, "PartialFixedProjectiveConstraint");
        init_root(&mut s, &f).unwrap();
        let scope = MechScope::build(&s, Scene::ROOT);
        settee_core::testing::forces(&mut s, &scope);
        let k = assembled(&mut s, &scope, 1.0, 0.0);
        let dense = k.to_dense();
        #[rustfmt::skip]
        let expected = [
            -9.0, -12.0, 0.0,  9.0, 0.0, 0.0,
            -12.0, -16.0, 0.0, 12.0, 0.0, 0.0,
            0.0, 0.0, 0.0,     0.0, 0.0, 0.0,
            9.0, 12.0, 0.0,   -9.0, 0.0, 0.0,
            0.0, 0.0, 0.0,     0.0, 1.0, 0.0,
            0.0, 0.0, 0.0,     0.0, 0.0, 0.0,
        ];
        for (i, (a, b)) in dense.iter().zip(expected).enumerate() {
            assert!((a - b).abs() < 1e-12, "entry ({}, {}): {a} vs {b}", i / 6, i % 6);
        }

        // The matrix-free path: the y increment of DOF 1 is removed.
        mech::scatter(&mut s, &scope, VecId::DX, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        mech::project_response(&mut s, &scope, VecId::DX).unwrap();
        let mut dx = Vec::new();
        mech::gather(&s, &scope, VecId::DX, &mut dx);
        assert_eq!(dx, [1.0, 2.0, 3.0, 4.0, 0.0, 6.0]);
    }

    /// Defaults: every direction blocked, whatever the template size (Vec1 → 1 flag, Rigid2 → 3);
    /// a partial Rigid3 mask as in SOFA's InteractionEllipsoidForceField scene; indices beyond
    /// the state are removed.
    #[test]
    fn directions_follow_the_template() {
        let f = factory();
        for (template, position, n) in [("Vec1d", "0 1", 1), ("Rigid2d", "0 0 0  1 1 0", 3), ("Vec6d", "0 0 0 0 0 0", 6)] {
            let mut s = Scene::new("root");
            add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", template), ("position", position)]);
            let c = add(&mut s, &f, Scene::ROOT, "PartialFixedProjectiveConstraint", &[]);
            init_root(&mut s, &f).unwrap();
            assert_eq!(s.entry(c).template, template);
            let pc = s.obj(c).as_any().downcast_ref::<PartialFixedProjectiveConstraint>().unwrap();
            assert_eq!(pc.fixed_directions(), vec![true; n], "{template}");
            assert_eq!(pc.indices(), [0]);
        }
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", "0 5 3 0 0 0 1")]);
        let c = add(&mut s, &f, Scene::ROOT, "PartialFixedProjectiveConstraint", &[("indices", "0 4"), ("fixedDirections", "1 1 1 0 0 0")]);
        init_root(&mut s, &f).unwrap();
        let pc = s.obj(c).as_any().downcast_ref::<PartialFixedProjectiveConstraint>().unwrap();
        assert_eq!(pc.fixed_directions(), [true, true, true, false, false, false]);
        assert_eq!(pc.indices(), [0]);
        let scope = MechScope::build(&s, Scene::ROOT);
        mech::scatter(&mut s, &scope, VecId::DX, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        mech::project_response(&mut s, &scope, VecId::DX).unwrap();
        let mut dx = Vec::new();
        mech::gather(&s, &scope, VecId::DX, &mut dx);
        assert_eq!(dx, [0.0, 0.0, 0.0, 4.0, 5.0, 6.0]);
    }
}
