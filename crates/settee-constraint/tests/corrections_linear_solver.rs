//! LinearSolverConstraintCorrection on a free particle pair: `W = dt·J·A⁻¹·Jᵀ` with
//! `A = (1 + dt·rayleighMass)·M`, the correction `x = x_free + dt·A⁻¹Jᵀλ`, `v = v_free + A⁻¹Jᵀλ`.

mod common;

use common::{
    add, assert_w, compliance_of, correct_motion, cparams, euler_implicit, factory, failure, free_motion_and_rows, init, lambda_vector,
    particle_pair, root, DT, MASS, RAYLEIGH_MASS,
};
use settee_core::constraint::{ConstraintOrder, ConstraintParams, DenseMatrix};
use settee_core::simulation;
use settee_core::{ComponentId, Scene, SimResult, StateId, VecId};

struct Setup {
    scene: Scene,
    state: StateId,
    correction: ComponentId,
}

/// Two Vec3 particles (free, no gravity) solved by EulerImplicitSolver + `solver`.
fn build(solver: &[(&str, &str)], solver_class: &str, correction: &[(&str, &str)]) -> SimResult<Setup> {
    let f = factory();
    let mut scene = root(DT, [0.0; 3]);
    let n = scene.add_node(Scene::ROOT, "object");
    euler_implicit(&mut scene, &f, n);
    add(&mut scene, &f, n, solver_class, solver);
    let ms = particle_pair(&mut scene, &f, n, MASS);
    let correction = add(&mut scene, &f, n, "LinearSolverConstraintCorrection", correction);
    let state = init(&mut scene, &f, ms)?;
    Ok(Setup { scene, state, correction })
}

/// J: row 0 on DOF 0, row 1 on both DOFs, row 2 empty, row 3 on DOF 1.
const ROWS: &[(usize, usize, [f64; 3])] =
    &[(0, 0, [1.0, 2.0, 3.0]), (1, 0, [0.0, 1.0, 0.0]), (1, 1, [0.0, 0.0, -1.0]), (3, 1, [2.0, 0.0, 1.0]), (3, 0, [0.5, -0.25, 0.0])];
const NROWS: usize = 4;

fn dense_j() -> Vec<[f64; 6]> {
    let mut j = vec![[0.0; 6]; NROWS];
    for &(r, dof, b) in ROWS {
        for c in 0..3 {
            j[r][dof * 3 + c] += b[c];
        }
    }
    j
}

fn pos_cparams(lambda: VecId) -> ConstraintParams {
    cparams(lambda, ConstraintOrder::PosAndVel, DT)
}

/// Free motion, then rows written by hand; returns W.
fn compliance(s: &mut Setup) -> SimResult<DenseMatrix> {
    let rows: Vec<_> = ROWS.iter().map(|&(r, dof, b)| (s.state, r, dof, b)).collect();
    free_motion_and_rows(&mut s.scene, DT, &rows)?;
    let lambda = lambda_vector(&mut s.scene, false);
    compliance_of(&mut s.scene, s.correction, &pos_cparams(lambda), NROWS)
}

fn expected_w() -> Vec<f64> {
    let j = dense_j();
    let a = (1.0 + DT * RAYLEIGH_MASS) * MASS;
    let mut w = vec![0.0; NROWS * NROWS];
    for r in 0..NROWS {
        for s in 0..NROWS {
            let d: f64 = (0..6).map(|k| j[r][k] * j[s][k]).sum();
            w[r * NROWS + s] = DT * d / a;
        }
    }
    w
}

#[test]
fn sparse_ldl_compliance_is_dt_j_ainv_jt_and_exactly_symmetric() {
    let mut s = build(&[], "SparseLDLSolver", &[]).unwrap();
    let w = compliance(&mut s).unwrap();
    assert_w(&w, &expected_w(), 0.0);
    // W[0][0] = dt·|(1,2,3)|²/((1 + dt·rm)·m) = 0.01·14/(1.003·2.5).
    assert!((w.get(0, 0) - 0.01 * 14.0 / (1.003 * 2.5)).abs() < 1e-16);
    for r in 0..NROWS {
        for c in 0..NROWS {
            assert_eq!(w.get(r, c).to_bits(), w.get(c, r).to_bits(), "W not exactly symmetric at ({r},{c})");
        }
    }
}

#[test]
fn eigen_solvers_use_the_generic_loop_with_the_same_values() {
    for class in ["EigenSparseLU", "EigenSimplicialLLT", "EigenSimplicialLDLT"] {
        let mut s = build(&[], class, &[]).unwrap();
        let w = compliance(&mut s).unwrap();
        assert_w(&w, &expected_w(), 0.0);
    }
}

#[test]
fn assembled_cg_serves_the_correction() {
    let mut s = build(
        &[("template", "CompressedRowSparseMatrixd"), ("iterations", "50"), ("tolerance", "1e-12"), ("threshold", "1e-30")],
        "CGLinearSolver",
        &[],
    )
    .unwrap();
    let w = compliance(&mut s).unwrap();
    // A is a multiple of the identity: CG converges in one iteration, to round-off.
    assert_w_close(&w, 1e-14);
}

fn assert_w_close(w: &DenseMatrix, tol: f64) {
    let e = expected_w();
    for r in 0..NROWS {
        for c in 0..NROWS {
            assert!((w.get(r, c) - e[r * NROWS + c]).abs() <= tol, "W[{r}][{c}] = {} vs {}", w.get(r, c), e[r * NROWS + c]);
        }
    }
}

#[test]
fn regularization_goes_on_the_non_empty_rows() {
    let mut s = build(&[], "SparseLDLSolver", &[("regularizationTerm", "0.125")]).unwrap();
    let w = compliance(&mut s).unwrap();
    assert_w(&w, &expected_w(), 0.125);
}

#[test]
fn motion_correction_is_a_new_solve_with_the_ode_factors() {
    for class in ["SparseLDLSolver", "EigenSparseLU"] {
        let mut s = build(&[], class, &[]).unwrap();
        compliance(&mut s).unwrap();
        let lambda_vec = lambda_vector(&mut s.scene, true);
        let cp = pos_cparams(lambda_vec);
        let lambda = [0.5, -1.0, 7.0, 2.0];
        let xf = s.scene.store.get(s.state).read(VecId::FREE_POSITION).to_vec();
        let vf = s.scene.store.get(s.state).read(VecId::FREE_VELOCITY).to_vec();
        correct_motion(&mut s.scene, s.correction, &cp, &lambda).unwrap();
        let j = dense_j();
        let a = (1.0 + DT * RAYLEIGH_MASS) * MASS;
        let st = s.scene.store.get(s.state);
        let (x, v, dx) = (st.read(VecId::POSITION), st.read(VecId::VELOCITY), st.read(VecId::DX));
        for k in 0..6 {
            let jtl: f64 = (0..NROWS).map(|r| j[r][k] * lambda[r]).sum();
            let c = jtl / a;
            assert!((v[k] - (vf[k] + c)).abs() < 1e-14, "{class} v[{k}]");
            assert!((x[k] - (xf[k] + DT * c)).abs() < 1e-14, "{class} x[{k}]");
            assert!((dx[k] - DT * c).abs() < 1e-15, "{class} dx[{k}]");
        }
        // Row 2 has no entry: its λ moves nothing, and the rows' Jᵀλ was stored in Λ.
        let stored = st.read(lambda_vec);
        assert!((stored[0] - (0.5 * 1.0 + 2.0 * 0.5)).abs() < 1e-15);
    }
}

#[test]
fn invalid_set_ups_are_positioned_errors() {
    // No linear solver in the node.
    let f = factory();
    let mut scene = Scene::new("root");
    let n = scene.add_node(Scene::ROOT, "object");
    add(&mut scene, &f, n, "EulerImplicitSolver", &[]);
    add(&mut scene, &f, n, "MechanicalObject", &[("template", "Vec3d"), ("position", "0 0 0")]);
    add(&mut scene, &f, n, "LinearSolverConstraintCorrection", &[]);
    let err = simulation::init_root(&mut scene, &f).err().map(|e| e.to_string()).unwrap_or_default()
        + &scene.messages.iter().map(|m| m.to_string()).collect::<Vec<_>>().join("\n");
    assert!(err.contains("no linear solver"), "{err}");

    // A matrix-free CG is refused.
    let err = failure(build(&[], "CGLinearSolver", &[]).map(|s| s.scene));
    assert!(err.contains("GraphScattered"), "{err}");
}
