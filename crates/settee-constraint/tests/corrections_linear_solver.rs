//! LinearSolverConstraintCorrection on a free particle pair: `W = dt·J·A⁻¹·Jᵀ` with
//! `A = (1 + dt·rayleighMass)·M`, the correction `x = x_free + dt·A⁻¹Jᵀλ`, `v = v_free + A⁻¹Jᵀλ`.

use settee_core::constraint::{ConstraintCorrection, ConstraintOrder, ConstraintParams, DenseMatrix};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::simulation::{self, IsolatedInteractions};
use settee_core::{ComponentId, Factory, NodeId, Scene, SimResult, StateId, VecId};

const DT: f64 = 0.01;
const MASS: f64 = 2.5;
const RAYLEIGH_MASS: f64 = 0.3;

fn factory() -> Factory {
    let mut f = Factory::new();
    settee_statecontainer::register(&mut f);
    settee_mass::register(&mut f);
    settee_odesolver::register(&mut f);
    settee_linearsolver::register(&mut f);
    settee_constraint::register(&mut f);
    f
}

struct Setup {
    scene: Scene,
    state: StateId,
    correction: ComponentId,
}

fn add(scene: &mut Scene, f: &Factory, node: NodeId, class: &str, attrs: &[(&str, &str)]) -> ComponentId {
    settee_core::testing::add(scene, f, node, class, attrs)
}

/// Two Vec3 particles (free, no gravity) solved by EulerImplicitSolver + `solver`.
fn build(solver: &[(&str, &str)], solver_class: &str, correction: &[(&str, &str)]) -> SimResult<Setup> {
    let f = factory();
    let mut scene = Scene::new("root");
    scene.node_mut(Scene::ROOT).context.dt = DT;
    scene.node_mut(Scene::ROOT).context.gravity = [0.0; 3];
    let n = scene.add_node(Scene::ROOT, "object");
    let rm = RAYLEIGH_MASS.to_string();
    add(&mut scene, &f, n, "EulerImplicitSolver", &[("rayleighMass", &rm), ("rayleighStiffness", "0")]);
    add(&mut scene, &f, n, solver_class, solver);
    let ms = add(&mut scene, &f, n, "MechanicalObject", &[("template", "Vec3d"), ("position", "0 0 0  1 0.5 -2"), ("velocity", "1 -2 0.5  0 3 -1")]);
    let m = MASS.to_string();
    add(&mut scene, &f, n, "UniformMass", &[("vertexMass", &m)]);
    let correction = add(&mut scene, &f, n, "LinearSolverConstraintCorrection", correction);
    scene.propagate_context();
    simulation::init_root(&mut scene, &f)?;
    let state = scene.state_of(ms).unwrap();
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

fn cparams(lambda: VecId) -> ConstraintParams {
    ConstraintParams { x: VecId::FREE_POSITION, v: VecId::FREE_VELOCITY, dx: VecId::DX, lambda, order: ConstraintOrder::PosAndVel, dt: DT, time: 0.0 }
}

/// Free motion, then rows written by hand; returns W.
fn compliance(s: &mut Setup) -> SimResult<DenseMatrix> {
    simulation::solve_all(&mut s.scene, DT, VecId::FREE_POSITION, VecId::FREE_VELOCITY, IsolatedInteractions::AddToExternalForce)?;
    let st = s.scene.store.get_mut(s.state);
    st.constraint = settee_core::ConstraintRows::new(3);
    for &(r, dof, b) in ROWS {
        st.constraint.add(r, dof, &b);
    }
    let mut w = DenseMatrix::zeros(NROWS);
    let scope = MechScope::build(&s.scene, Scene::ROOT);
    let lambda = mech::alloc_deriv(&mut s.scene, &scope);
    let cp = cparams(lambda);
    s.scene.with_role::<dyn ConstraintCorrection, _>(s.correction, |cc, scene| cc.add_compliance_in_constraint_space(scene, &cp, &mut w))?;
    Ok(w)
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

fn assert_w(w: &DenseMatrix, regularization: f64) {
    let e = expected_w();
    for r in 0..NROWS {
        for s in 0..NROWS {
            let mut want = e[r * NROWS + s];
            if r == s && r != 2 {
                want += regularization;
            }
            let got = w.get(r, s);
            assert!((got - want).abs() <= 1e-15 * want.abs().max(1e-3), "W[{r}][{s}] = {got}, expected {want}");
        }
    }
    // Row and column 2 have no entry: nothing is added there.
    for k in 0..NROWS {
        assert_eq!(w.get(2, k), 0.0);
        assert_eq!(w.get(k, 2), 0.0);
    }
}

#[test]
fn sparse_ldl_compliance_is_dt_j_ainv_jt_and_exactly_symmetric() {
    let mut s = build(&[], "SparseLDLSolver", &[]).unwrap();
    let w = compliance(&mut s).unwrap();
    assert_w(&w, 0.0);
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
        assert_w(&w, 0.0);
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
    assert_w(&w, 0.125);
}

#[test]
fn motion_correction_is_a_new_solve_with_the_ode_factors() {
    for class in ["SparseLDLSolver", "EigenSparseLU"] {
        let mut s = build(&[], class, &[]).unwrap();
        compliance(&mut s).unwrap();
        let scope = MechScope::build(&s.scene, Scene::ROOT);
        let lambda_vec = mech::alloc_deriv(&mut s.scene, &scope);
        for &st in &scope.main_states {
            s.scene.store.get_mut(st).write(lambda_vec).fill(0.0);
        }
        let cp = cparams(lambda_vec);
        let lambda = [0.5, -1.0, 7.0, 2.0];
        let xf = s.scene.store.get(s.state).read(VecId::FREE_POSITION).to_vec();
        let vf = s.scene.store.get(s.state).read(VecId::FREE_VELOCITY).to_vec();
        s.scene
            .with_role::<dyn ConstraintCorrection, _>(s.correction, |c, scene| {
                c.compute_motion_correction_from_lambda(scene, &cp, &lambda)?;
                c.apply_motion_correction(scene, &cp, VecId::POSITION, VecId::VELOCITY, VecId::DX, VecId::DX)
            })
            .unwrap();
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
    let r = build(&[], "CGLinearSolver", &[]);
    let err = match r {
        Err(e) => e.to_string(),
        Ok(s) => s.scene.messages.iter().map(|m| m.to_string()).collect::<Vec<_>>().join("\n"),
    };
    assert!(err.contains("GraphScattered"), "{err}");
}
