//! Projective constraints: project positions, velocities and increments onto the constrained
//! subspace.

pub mod affine_movement;
mod attach;
mod fixed;
pub mod fixed_plane;
mod fixed_rotation;
mod hermite_spline;
pub mod linear_movement;
pub mod linear_velocity;
mod oscillator;
mod parabolic;
mod partial_fixed;
mod patch_test_movement;
pub mod point;
pub mod subspace;

pub use affine_movement::AffineMovementProjectiveConstraint;
pub use attach::AttachProjectiveConstraint;
pub use fixed::{FixedData, FixedProjectiveConstraint};
pub use fixed_rotation::FixedRotationProjectiveConstraint;
pub use hermite_spline::HermiteSplineProjectiveConstraint;
pub use linear_movement::LinearMovementProjectiveConstraint;
pub use linear_velocity::LinearVelocityProjectiveConstraint;
pub use oscillator::OscillatorProjectiveConstraint;
pub use parabolic::ParabolicProjectiveConstraint;
pub use partial_fixed::PartialFixedProjectiveConstraint;
pub use patch_test_movement::PatchTestMovementProjectiveConstraint;
pub use point::PointProjectiveConstraint;
pub use subspace::{Subspace, SubspaceProjectiveConstraint};

/// Data every projective constraint has.
#[settee_core::data_group(data = {
    /// the constraint stops acting after this time (-1: never)
    endTime: Real = "-1",
    /// ID of the group containing this constraint
    group: Int = "0",
})]
pub struct ProjectiveBase;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<AffineMovementProjectiveConstraint>();
    f.add::<AttachProjectiveConstraint>();
    f.add::<FixedProjectiveConstraint>();
    f.add::<fixed_plane::FixedPlaneProjectiveConstraint>();
    f.add::<PartialFixedProjectiveConstraint>();
    // Both keyed constraints (one declaration).
    f.add::<LinearMovementProjectiveConstraint>();
    f.add::<PatchTestMovementProjectiveConstraint>();
    f.add::<OscillatorProjectiveConstraint>();
    f.add::<FixedRotationProjectiveConstraint>();
    f.add::<HermiteSplineProjectiveConstraint>();
    f.add::<ParabolicProjectiveConstraint>();
    f.add::<PointProjectiveConstraint>();
    f.add::<SubspaceProjectiveConstraint>();
}

#[cfg(test)]
mod tests {
    use settee_animationloop::default_step;
    use settee_core::mechanics::{self as mech, MechScope};
    use settee_core::simulation::init_root;
    use settee_core::testing::{add, assembled};
    use settee_core::{Factory, Scene, VecId};

    use crate::PartialFixedProjectiveConstraint;

    fn factory() -> Factory {
        settee_statecontainer::factory_with(&[settee_spring::register, super::register])
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

    /// The scene of spec §6.5 (LinearVelocityProjectiveConstraint.scn, without solver and
    /// collision, which the constraint overrides): a Rigid3 DOF with keys 0 → 2, angular z
    /// velocity 0 → 0.3, continueAfterEnd, dt 0.05. Each step turns it by u(t)·dt at the step's
    /// start time t: 0.15·t for the 40 steps starting at t ≤ 1.95 (Σ = 0.15·0.05·0.05·780 =
    /// 0.2925), then 0.3 (the 41st step starts at 2.000000000000001 > 2: finished). After 99 steps
    /// (T = 4.95) the angle is 0.2925 + 59·0.015 = 1.1775; SOFA's reference orientation is
    /// (0, 0, 0.555322, 0.831635).
    #[test]
    fn linear_velocity_scene_turns_the_rigid_by_the_summed_increments() {
        let f = factory();
        let mut s = Scene::new("root");
        s.node_mut(Scene::ROOT).context.dt = 0.05;
        let ms = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3"), ("position", "0 0 0 0 0 0 1")]);
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "LinearVelocityProjectiveConstraint",
            &[("indices", "0"), ("keyTimes", "0 2"), ("velocities", "0 0 0 0 0 0 0 0 0 0 0 0.3 "), ("continueAfterEnd", "true")],
        );
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(c).template, "Rigid3d");
        let st = s.state_of(ms).unwrap();
        let angle = |s: &Scene| {
            let x = s.store.get(st).read(VecId::POSITION);
            assert_eq!(&x[..5], [0.0; 5]);
            2.0 * x[5].atan2(x[6])
        };
        for _ in 0..40 {
            default_step(&mut s, 0.05).unwrap();
        }
        assert!((angle(&s) - 0.2925).abs() < 1e-14, "{}", angle(&s));
        assert_eq!(s.root().context.time, 2.000000000000001);
        for _ in 40..99 {
            default_step(&mut s, 0.05).unwrap();
        }
        let x = s.store.get(st).read(VecId::POSITION).to_vec();
        let half: f64 = 1.1775 / 2.0;
        assert!((x[5] - half.sin()).abs() < 1e-13 && (x[6] - half.cos()).abs() < 1e-13, "{x:?}");
        assert!((x[5] - 0.555322).abs() < 5e-7 && (x[6] - 0.831635).abs() < 5e-7);
        // The velocity is the imposed one.
        let v = s.store.get(st).read(VecId::VELOCITY);
        assert_eq!(v, [0.0, 0.0, 0.0, 0.0, 0.0, 0.3]);
    }

    /// LinearMovementProjectiveConstraint on a Rigid3 DOF, as in
    /// BilateralLagrangianConstraint_Soft_Rigid_Bodies.scn (keys 0 1 2 …, movements given with
    /// Euler angles): read from XML attributes, it moves the DOF from (0, −15, 0) by the
    /// interpolated movement; default data are a single zero key.
    #[test]
    fn linear_movement_from_attributes() {
        let f = factory();
        let mut s = Scene::new("root");
        s.node_mut(Scene::ROOT).context.dt = 0.25;
        let ms = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", "0 -15 0 0 0 0 1")]);
        add(
            &mut s,
            &f,
            Scene::ROOT,
            "LinearMovementProjectiveConstraint",
            &[("template", "Rigid3"), ("keyTimes", "0 1 2 10"), ("movements", "0 0 0 0 0 0  0 -5 0 0 0 0  0 0 -1 0 0 0  0 0 -1 0 0 6.3")],
        );
        let d = add(&mut s, &f, Scene::ROOT, "LinearMovementProjectiveConstraint", &[("template", "Rigid3d")]);
        init_root(&mut s, &f).unwrap();
        let st = s.state_of(ms).unwrap();
        // Steps starting at 0, 0.25, 0.5: positions projected at those times.
        for _ in 0..3 {
            default_step(&mut s, 0.25).unwrap();
        }
        let x = s.store.get(st).read(VecId::POSITION);
        assert_eq!(x, [0.0, -15.0 - 2.5, 0.0, 0.0, 0.0, 0.0, 1.0]);
        let v = s.store.get(st).read(VecId::VELOCITY);
        assert_eq!(v, [0.0, -5.0, 0.0, 0.0, 0.0, 0.0]);
        let pc = s.obj(d).as_any().downcast_ref::<crate::LinearMovementProjectiveConstraint>().unwrap();
        assert_eq!(pc.indices(), [0]);
    }

    /// Bad key data give errors, not panics.
    #[test]
    fn key_data_errors() {
        let f = factory();
        for (class, attrs) in [
            ("LinearMovementProjectiveConstraint", vec![("keyTimes", "0 1 2"), ("movements", "0 0 0 1 1 1")]),
            ("LinearVelocityProjectiveConstraint", vec![("keyTimes", "0 1"), ("velocities", "1 1 1")]),
            ("LinearVelocityProjectiveConstraint", vec![("coordinates", "3")]),
            ("LinearVelocityProjectiveConstraint", vec![("keyTimes", "")]),
        ] {
            let mut s = Scene::new("root");
            add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0")]);
            add(&mut s, &f, Scene::ROOT, class, &attrs);
            let e = init_root(&mut s, &f).unwrap_err();
            assert!(e.diagnostic().message.contains("key") || e.diagnostic().message.contains("coordinate"), "{class}: {e:?}");
        }
    }
}
