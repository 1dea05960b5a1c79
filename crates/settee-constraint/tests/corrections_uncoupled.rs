//! UncoupledConstraintCorrection: `W = dt·J·C·Jᵀ` with EulerImplicit's factors, the correction
//! `x = x_free + dt·C·Jᵀλ`, `v = v_free + C·Jᵀλ`, and the Rigid3 compliance from UniformMass.

mod common;

use common::{add, compliance_of, cparams, factory, init, lambda_vector, root};
use settee_core::constraint::{ConstraintCorrection, ConstraintOrder, ConstraintParams, DenseMatrix};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{ComponentId, Scene, StateId, VecId};

const DT: f64 = 0.02;

fn build(template: &str, position: &str, mass: &[(&str, &str)], correction: &[(&str, &str)]) -> (Scene, StateId, ComponentId) {
    let f = factory();
    let mut scene = root(DT, [0.0; 3]);
    let n = scene.add_node(Scene::ROOT, "object");
    add(&mut scene, &f, n, "EulerImplicitSolver", &[]);
    add(&mut scene, &f, n, "SparseLDLSolver", &[]);
    let ms = add(&mut scene, &f, n, "MechanicalObject", &[("template", template), ("position", position)]);
    add(&mut scene, &f, n, "UniformMass", mass);
    let c = add(&mut scene, &f, n, "UncoupledConstraintCorrection", correction);
    let s = init(&mut scene, &f, ms).unwrap();
    (scene, s, c)
}

fn pos_cparams(lambda: VecId) -> ConstraintParams {
    cparams(lambda, ConstraintOrder::PosAndVel, DT)
}

#[test]
fn vec3_compliance_motion_and_symmetry() {
    // Per-DOF compliances 0.5 and 0.25.
    let (mut scene, s, c) = build("Vec3d", "0 0 0  1 2 3", &[("vertexMass", "1")], &[("compliance", "0.5 0.25")]);
    let xf = [0.1, 0.2, 0.3, 1.0, 2.0, 3.0];
    let vf = [1.0, 0.0, -1.0, 0.5, 0.5, 0.5];
    {
        let st = scene.store.get_mut(s);
        st.write(VecId::FREE_POSITION).copy_from_slice(&xf);
        st.write(VecId::FREE_VELOCITY).copy_from_slice(&vf);
        st.constraint = settee_core::ConstraintRows::new(3);
        st.constraint.add(0, 0, &[1.0, 2.0, 3.0]);
        st.constraint.add(1, 0, &[0.0, 1.0, 0.0]);
        st.constraint.add(1, 1, &[0.0, 0.0, -1.0]);
        st.constraint.add(3, 1, &[2.0, 0.0, 1.0]);
    }
    let scope = MechScope::build(&scene, Scene::ROOT);
    let lvec = mech::alloc_deriv(&mut scene, &scope);
    scene.store.get_mut(s).write(lvec).fill(0.0);
    let cp = pos_cparams(lvec);
    let mut w = DenseMatrix::zeros(4);
    let lambda = [0.5, -1.0, 3.0, 2.0];
    scene
        .with_role::<dyn ConstraintCorrection, _>(c, |cc, scene| {
            cc.add_compliance_in_constraint_space(scene, &cp, &mut w)?;
            cc.compute_motion_correction_from_lambda(scene, &cp, &lambda)?;
            cc.apply_motion_correction(scene, &cp, VecId::POSITION, VecId::VELOCITY, VecId::DX, VecId::DX)
        })
        .unwrap();
    // W = dt·Σ_dof c_dof·n_a·n_b.
    let j = [[1.0, 2.0, 3.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0, -1.0], [0.0; 6], [0.0, 0.0, 0.0, 2.0, 0.0, 1.0]];
    let comp = [0.5, 0.5, 0.5, 0.25, 0.25, 0.25];
    for a in 0..4 {
        for b in 0..4 {
            let want: f64 = DT * (0..6).map(|k| j[a][k] * j[b][k] * comp[k]).sum::<f64>();
            assert!((w.get(a, b) - want).abs() < 1e-16, "W[{a}][{b}] = {} vs {want}", w.get(a, b));
            assert_eq!(w.get(a, b).to_bits(), w.get(b, a).to_bits());
        }
    }
    assert!((w.get(0, 0) - DT * 0.5 * 14.0).abs() < 1e-16);
    let st = scene.store.get(s);
    for k in 0..6 {
        let corr = comp[k] * (0..4).map(|r| j[r][k] * lambda[r]).sum::<f64>();
        assert!((st.read(VecId::VELOCITY)[k] - (vf[k] + corr)).abs() < 1e-15);
        assert!((st.read(VecId::POSITION)[k] - (xf[k] + DT * corr)).abs() < 1e-15);
        assert!((st.read(VecId::DX)[k] - DT * corr).abs() < 1e-16);
    }
}

#[test]
fn rigid3_compliance_comes_from_uniform_mass() {
    // Two rigid DOFs of total mass 4: m = 2 each, identity inertia → C = [1/2, 1/2, 0, 0, 1/2, 0, 1/2].
    let (mut scene, s, c) = build("Rigid3d", "0 0 0 0 0 0 1  1 0 0 0 0 0 1", &[("totalMass", "4")], &[]);
    let comp = scene.entry(c).data.field("compliance").map(|f| format!("{:?}", f.value)).unwrap();
    assert!(comp.contains("0.5, 0.5, 0.0, 0.0, 0.5, 0.0, 0.5"), "{comp}");
    let st = scene.store.get_mut(s);
    st.constraint = settee_core::ConstraintRows::new(6);
    st.constraint.add(0, 1, &[1.0, 0.0, 0.0, 0.0, 2.0, 0.0]);
    st.constraint.add(1, 1, &[0.0, 1.0, 0.0, 3.0, 0.0, 1.0]);
    let scope = MechScope::build(&scene, Scene::ROOT);
    let lvec = mech::alloc_deriv(&mut scene, &scope);
    let cp = pos_cparams(lvec);
    let w = compliance_of(&mut scene, c, &cp, 2).unwrap();
    // W = dt·(t_a·t_b/m + r_a·r_b/m).
    assert!((w.get(0, 0) - DT * (1.0 + 4.0) / 2.0).abs() < 1e-16);
    assert!((w.get(1, 1) - DT * (1.0 + 9.0 + 1.0) / 2.0).abs() < 1e-16);
    assert_eq!(w.get(0, 1), 0.0);
    // Rotational correction: a rotation about z rotates the orientation (unit quaternion kept).
    scene.store.get_mut(s).write(VecId::FREE_POSITION).copy_from_slice(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    scene.store.get_mut(s).write(VecId::FREE_VELOCITY).fill(0.0);
    scene.with_role::<dyn ConstraintCorrection, _>(c, |cc, scene| cc.reset_contact_force(scene)).unwrap();
    // A pure torque about z of 2/dt on DOF 1: Δθ = dt·(1/2)·(2/dt) = 1 rad.
    scene.store.get_mut(s).constraint = settee_core::ConstraintRows::new(6);
    let st = scene.store.get_mut(s);
    st.constraint.add(0, 1, &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    scene.with_role::<dyn ConstraintCorrection, _>(c, |cc, scene| cc.apply_contact_force(scene, &cp, &[2.0 / DT])).unwrap();
    let x = scene.store.get(s).read(VecId::POSITION);
    let (sh, ch) = (0.5f64.sin(), 0.5f64.cos());
    assert!((x[7 + 5] - sh).abs() < 1e-15 && (x[7 + 6] - ch).abs() < 1e-15, "{:?}", &x[7..]);
}

#[test]
fn zero_compliance_makes_the_correction_inert() {
    let (mut scene, s, c) = build("Vec3d", "0 0 0", &[("vertexMass", "1")], &[("defaultCompliance", "0")]);
    scene.store.get_mut(s).constraint = settee_core::ConstraintRows::new(3);
    scene.store.get_mut(s).constraint.add(0, 0, &[1.0, 0.0, 0.0]);
    let lvec = lambda_vector(&mut scene, false);
    let w = compliance_of(&mut scene, c, &pos_cparams(lvec), 1).unwrap();
    assert_eq!(w.get(0, 0), 0.0);
    assert!(scene.messages.iter().any(|m| m.to_string().contains("invalid compliance")));
}
