//! GenericConstraintCorrection on two free particle objects solved by one linear solver:
//! `W = cf·dt·J·A⁻¹·Jᵀ` with `J` spanning both objects and `A = (1 + dt·rayleighMass)·diag(M)`,
//! the correction `x = x_free + cf·dt·A⁻¹Jᵀλ`, `v = v_free + cf·A⁻¹Jᵀλ` on both objects.

mod common;

use common::{
    add, assert_w, compliance_of, correct_motion, cparams, euler_implicit, factory, failure, free_motion_and_rows, lambda_vector, root, DT,
    RAYLEIGH_MASS,
};
use settee_core::constraint::{ConstraintCorrection, ConstraintOrder, DenseMatrix};
use settee_core::simulation;
use settee_core::{ComponentId, Scene, SimResult, StateId, VecId};

const MASSES: [f64; 2] = [2.5, 0.75];
const NROWS: usize = 4;

struct Setup {
    scene: Scene,
    states: [StateId; 2],
    correction: ComponentId,
}

/// Root: EulerImplicitSolver, `solver_class`, the correction; two child objects (one particle
/// pair of mass 2.5 each, one single particle of mass 0.75), no gravity.
fn build(solver_class: &str, correction: &[(&str, &str)]) -> SimResult<Setup> {
    let f = factory();
    let mut scene = root(DT, [0.0; 3]);
    euler_implicit(&mut scene, &f, Scene::ROOT);
    add(&mut scene, &f, Scene::ROOT, solver_class, &[]);
    let correction = add(&mut scene, &f, Scene::ROOT, "GenericConstraintCorrection", correction);
    let a = scene.add_node(Scene::ROOT, "a");
    let ma = add(&mut scene, &f, a, "MechanicalObject", &[("template", "Vec3d"), ("position", "0 0 0  1 0.5 -2"), ("velocity", "1 -2 0.5  0 3 -1")]);
    let m0 = MASSES[0].to_string();
    add(&mut scene, &f, a, "UniformMass", &[("vertexMass", &m0)]);
    let b = scene.add_node(Scene::ROOT, "b");
    let mb = add(&mut scene, &f, b, "MechanicalObject", &[("template", "Vec3d"), ("position", "3 1 -1"), ("velocity", "-0.5 0.25 2")]);
    let m1 = MASSES[1].to_string();
    add(&mut scene, &f, b, "UniformMass", &[("vertexMass", &m1)]);
    scene.propagate_context();
    simulation::init_root(&mut scene, &f)?;
    let states = [scene_state(&scene, ma), scene_state(&scene, mb)];
    Ok(Setup { scene, states, correction })
}

fn scene_state(scene: &Scene, c: ComponentId) -> StateId {
    scene.state_of(c).unwrap()
}

/// Rows on object a (DOFs 0, 1) and object b (DOF 0): (object, row, dof, block). Row 2 is empty;
/// row 1 couples both objects.
const ROWS: &[(usize, usize, usize, [f64; 3])] =
    &[(0, 0, 0, [1.0, 2.0, 3.0]), (0, 1, 0, [0.0, 1.0, 0.0]), (1, 1, 0, [0.0, 0.0, -1.0]), (0, 3, 1, [2.0, 0.0, 1.0]), (1, 3, 0, [0.5, -0.25, 4.0])];

/// Dense J over the 9 global columns (object a's 6, then object b's 3) and the diagonal of A.
fn dense_j() -> (Vec<[f64; 9]>, [f64; 9]) {
    let mut j = vec![[0.0; 9]; NROWS];
    for &(o, r, dof, b) in ROWS {
        let off = if o == 0 { dof * 3 } else { 6 + dof * 3 };
        for c in 0..3 {
            j[r][off + c] += b[c];
        }
    }
    let mut a = [0.0; 9];
    for (k, ak) in a.iter_mut().enumerate() {
        *ak = (1.0 + DT * RAYLEIGH_MASS) * if k < 6 { MASSES[0] } else { MASSES[1] };
    }
    (j, a)
}

fn expected_w(cf: f64) -> Vec<f64> {
    let (j, a) = dense_j();
    let mut w = vec![0.0; NROWS * NROWS];
    for r in 0..NROWS {
        for s in 0..NROWS {
            let d: f64 = (0..9).map(|k| j[r][k] * j[s][k] / a[k]).sum();
            w[r * NROWS + s] = cf * DT * d;
        }
    }
    w
}

/// Free motion, the rows written by hand on both objects, then W; returns W and a Λ vector.
fn compliance(s: &mut Setup) -> SimResult<(DenseMatrix, VecId)> {
    let rows: Vec<_> = ROWS.iter().map(|&(o, r, dof, b)| (s.states[o], r, dof, b)).collect();
    free_motion_and_rows(&mut s.scene, DT, &rows)?;
    let lambda = lambda_vector(&mut s.scene, false);
    let cp = cparams(lambda, ConstraintOrder::PosAndVel, DT);
    let w = compliance_of(&mut s.scene, s.correction, &cp, NROWS)?;
    Ok((w, lambda))
}

#[test]
fn compliance_spans_every_state_of_the_linear_solver() {
    for class in ["SparseLDLSolver", "EigenSimplicialLLT", "EigenSparseLU"] {
        let mut s = build(class, &[]).unwrap();
        let (w, _) = compliance(&mut s).unwrap();
        assert_w(&w, &expected_w(1.0), 0.0);
        // The coupling row 1 = (0,1,0 | 0,0,0 | 0,0,-1) and row 3 = (0,0,0 | 2,0,1 | 0.5,-0.25,4):
        // W[1][3] = dt·(-1·4)/(1.003·0.75), through object b only.
        let want = DT * (-4.0) / (1.003 * 0.75);
        assert!((w.get(1, 3) - want).abs() < 1e-16, "{class}: W[1][3] = {} vs {want}", w.get(1, 3));
        // Both objects are the correction's states.
        let cs = s.scene.with_role::<dyn ConstraintCorrection, _>(s.correction, |cc, _| cc.states());
        assert_eq!(cs.to_vec(), s.states.to_vec());
    }
}

#[test]
fn compliance_factor_and_regularization() {
    let mut s = build("SparseLDLSolver", &[("complianceFactor", "0.5"), ("regularizationTerm", "0.125")]).unwrap();
    let (w, _) = compliance(&mut s).unwrap();
    assert_w(&w, &expected_w(0.5), 0.125);
}

#[test]
fn motion_correction_solves_again_on_both_objects() {
    let cf = 0.5;
    let mut s = build("SparseLDLSolver", &[("complianceFactor", "0.5")]).unwrap();
    let (_, lambda_vec) = compliance(&mut s).unwrap();
    let cp = cparams(lambda_vec, ConstraintOrder::PosAndVel, DT);
    let lambda = [0.5, -1.0, 7.0, 2.0];
    let free: Vec<(Vec<f64>, Vec<f64>)> = s
        .states
        .iter()
        .map(|&st| (s.scene.store.get(st).read(VecId::FREE_POSITION).to_vec(), s.scene.store.get(st).read(VecId::FREE_VELOCITY).to_vec()))
        .collect();
    correct_motion(&mut s.scene, s.correction, &cp, &lambda).unwrap();
    let (j, a) = dense_j();
    for k in 0..9 {
        let (o, i) = if k < 6 { (0, k) } else { (1, k - 6) };
        let st = s.scene.store.get(s.states[o]);
        let jtl: f64 = (0..NROWS).map(|r| j[r][k] * lambda[r]).sum();
        let c = jtl / a[k];
        assert!((st.read(VecId::VELOCITY)[i] - (free[o].1[i] + cf * c)).abs() < 1e-14, "v[{k}]");
        assert!((st.read(VecId::POSITION)[i] - (free[o].0[i] + cf * DT * c)).abs() < 1e-14, "x[{k}]");
        assert!((st.read(VecId::DX)[i] - cf * DT * c).abs() < 1e-15, "dx[{k}]");
        // Λ holds the right-hand side Jᵀλ.
        assert!((st.read(lambda_vec)[i] - jtl).abs() < 1e-15, "Λ[{k}]");
    }
    // Object b's z: Jᵀλ = -1·(-1) + 4·2 = 9.
    assert!((s.scene.store.get(s.states[1]).read(lambda_vec)[2] - 9.0).abs() < 1e-15);
}

#[test]
fn velocity_correction_ignores_the_compliance_factor() {
    let mut s = build("SparseLDLSolver", &[("complianceFactor", "0.5")]).unwrap();
    let (_, lambda_vec) = compliance(&mut s).unwrap();
    let cp = cparams(lambda_vec, ConstraintOrder::Vel, DT);
    let lambda = [1.0, 0.0, 0.0, 0.0];
    let x0 = s.scene.store.get(s.states[0]).read(VecId::POSITION).to_vec();
    let vf = s.scene.store.get(s.states[0]).read(VecId::FREE_VELOCITY).to_vec();
    s.scene
        .with_role::<dyn ConstraintCorrection, _>(s.correction, |c, scene| {
            c.compute_motion_correction_from_lambda(scene, &cp, &lambda)?;
            c.apply_velocity_correction(scene, &cp, VecId::VELOCITY, VecId::DX, VecId::DX)
        })
        .unwrap();
    let a0 = (1.0 + DT * RAYLEIGH_MASS) * MASSES[0];
    let st = s.scene.store.get(s.states[0]);
    // Row 0 = (1,2,3) on DOF 0: dv = (1,2,3)/a0 (EulerImplicit velocity factor 1, no 0.5).
    for (i, vfi) in vf.iter().enumerate().take(3) {
        let dv = (i + 1) as f64 / a0;
        assert!((st.read(VecId::VELOCITY)[i] - (vfi + dv)).abs() < 1e-14);
        assert!((st.read(VecId::DX)[i] - dv).abs() < 1e-15);
    }
    // Positions are left alone.
    assert_eq!(st.read(VecId::POSITION), &x0[..]);
}

#[test]
fn a_matrix_free_solver_is_refused() {
    let err = failure(build("CGLinearSolver", &[]).map(|s| s.scene));
    assert!(err.contains("GraphScattered"), "{err}");
}
