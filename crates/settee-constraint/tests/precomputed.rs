//! PrecomputedConstraintCorrection on two free particles with EulerImplicitSolver: the precomputed
//! matrix is `dt·A⁻¹` with `A = (1 + dt·rayleighMass)·M`, `W = J·C·Jᵀ` (regularisation once per
//! Jacobian entry on the diagonal), the `.comp` file round-trip, and the same W and motion as
//! LinearSolverConstraintCorrection.

use settee_constraint::corrections::PrecomputedConstraintCorrection;
mod common;

use common::{
    add, compliance_of, correct_motion, cparams, euler_implicit, factory, free_motion_and_rows, init, lambda_vector, particle_pair, root, DT, MASS,
    RAYLEIGH_MASS,
};
use settee_core::constraint::{ConstraintOrder, ConstraintParams, DenseMatrix};
use settee_core::mechanics::MechScope;
use settee_core::{ComponentId, Scene, SimResult, StateId, VecId};

struct Setup {
    scene: Scene,
    state: StateId,
    precomputed: ComponentId,
    linear: ComponentId,
}

/// Two Vec3 particles under gravity (the precomputation turns it off), both corrections on them.
fn build(precomputed: &[(&str, &str)]) -> SimResult<Setup> {
    let f = factory();
    let mut scene = root(DT, [0.0, -9.81, 0.0]);
    let n = scene.add_node(Scene::ROOT, "object");
    euler_implicit(&mut scene, &f, n);
    add(&mut scene, &f, n, "SparseLDLSolver", &[]);
    let ms = particle_pair(&mut scene, &f, n, MASS);
    let precomputed = add(&mut scene, &f, n, "PrecomputedConstraintCorrection", precomputed);
    let linear = add(&mut scene, &f, n, "LinearSolverConstraintCorrection", &[]);
    let state = init(&mut scene, &f, ms)?;
    Ok(Setup { scene, state, precomputed, linear })
}

fn matrix(s: &Setup) -> Vec<f64> {
    let obj = s.scene.components[s.precomputed].obj.as_ref().unwrap();
    obj.as_any().downcast_ref::<PrecomputedConstraintCorrection>().unwrap().compliance_matrix().unwrap().to_vec()
}

const ROWS: &[(usize, usize, [f64; 3])] =
    &[(0, 0, [1.0, 2.0, 3.0]), (1, 0, [0.0, 1.0, 0.0]), (1, 1, [0.0, 0.0, -1.0]), (3, 1, [2.0, 0.0, 1.0]), (3, 0, [0.5, -0.25, 0.0])];
const NROWS: usize = 4;

fn pos_cparams(lambda: VecId) -> ConstraintParams {
    cparams(lambda, ConstraintOrder::PosAndVel, DT)
}

/// Free motion and J written by hand.
fn motion_and_rows(s: &mut Setup) -> VecId {
    let rows: Vec<_> = ROWS.iter().map(|&(r, dof, b)| (s.state, r, dof, b)).collect();
    free_motion_and_rows(&mut s.scene, DT, &rows).unwrap();
    lambda_vector(&mut s.scene, true)
}

fn w_of(s: &mut Setup, c: ComponentId, cp: &ConstraintParams) -> DenseMatrix {
    compliance_of(&mut s.scene, c, cp, NROWS).unwrap()
}

#[test]
fn the_precomputed_matrix_is_dt_times_the_inverse_system() {
    let s = build(&[]).unwrap();
    let c = matrix(&s);
    assert_eq!(c.len(), 36);
    let expect = DT / ((1.0 + DT * RAYLEIGH_MASS) * MASS);
    for i in 0..6 {
        for j in 0..6 {
            let e = if i == j { expect } else { 0.0 };
            assert!((c[i * 6 + j] - e).abs() < 1e-15, "C[{i}][{j}] = {} vs {e}", c[i * 6 + j]);
        }
    }
    // Positions and velocities restored, gravity back.
    let st = s.scene.store.get(s.state);
    assert_eq!(st.read(VecId::POSITION), &[0.0, 0.0, 0.0, 1.0, 0.5, -2.0]);
    assert_eq!(st.read(VecId::VELOCITY), &[1.0, -2.0, 0.5, 0.0, 3.0, -1.0]);
    let node = s.scene.entry(s.precomputed).node;
    assert_eq!(s.scene.node(node).context.gravity, [0.0, -9.81, 0.0]);
}

#[test]
fn w_and_the_motion_equal_the_linear_solver_correction() {
    let mut s = build(&[]).unwrap();
    let lambda_vec = motion_and_rows(&mut s);
    let cp = pos_cparams(lambda_vec);
    let p = s.precomputed;
    let wp = w_of(&mut s, p, &cp);
    let l = s.linear;
    let wl = w_of(&mut s, l, &cp);
    for i in 0..NROWS {
        for j in 0..NROWS {
            let (a, b) = (wp.get(i, j), wl.get(i, j));
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-3), "W[{i}][{j}]: {a} vs {b}");
        }
    }
    assert!(wp.get(0, 0) > 0.0 && wp.get(2, 2) == 0.0);
    // The corrective motion of the same λ.
    let lambda = [0.5, -1.0, 7.0, 2.0];
    let mut results = Vec::new();
    for c in [s.precomputed, s.linear] {
        for &st in &MechScope::build(&s.scene, Scene::ROOT).main_states {
            s.scene.store.get_mut(st).write(lambda_vec).fill(0.0);
        }
        correct_motion(&mut s.scene, c, &cp, &lambda).unwrap();
        let st = s.scene.store.get(s.state);
        results.push((st.read(VecId::POSITION).to_vec(), st.read(VecId::VELOCITY).to_vec()));
    }
    let xf = s.scene.store.get(s.state).read(VecId::FREE_POSITION).to_vec();
    for k in 0..6 {
        assert!((results[0].0[k] - results[1].0[k]).abs() < 1e-12, "x[{k}]");
        assert!((results[0].1[k] - results[1].1[k]).abs() < 1e-12, "v[{k}]");
    }
    // The correction is not zero: DOF 0 x moves by dt·A⁻¹·(Jᵀλ)_0 = C·(1·0.5 + 0.5·2).
    let c = DT / ((1.0 + DT * RAYLEIGH_MASS) * MASS);
    assert!((results[0].0[0] - (xf[0] + c * 1.5)).abs() < 1e-14);
}

#[test]
fn regularization_is_added_once_per_jacobian_entry() {
    let mut s = build(&[("regularizationTerm", "0.125")]).unwrap();
    let lambda_vec = motion_and_rows(&mut s);
    let cp = pos_cparams(lambda_vec);
    let p = s.precomputed;
    let wr = w_of(&mut s, p, &cp);
    let mut s0 = build(&[]).unwrap();
    let l0 = motion_and_rows(&mut s0);
    let p0 = s0.precomputed;
    let w0 = w_of(&mut s0, p0, &pos_cparams(l0));
    // Rows 0: one entry, 1: two, 2: none, 3: two.
    for (r, count) in [(0, 1.0), (1, 2.0), (2, 0.0), (3, 2.0)] {
        assert!((wr.get(r, r) - (w0.get(r, r) + count * 0.125)).abs() < 1e-15, "row {r}");
    }
    assert_eq!(wr.get(0, 1), w0.get(0, 1));
}

#[test]
fn the_comp_file_round_trips_through_file_dir() {
    let dir = std::env::temp_dir().join(format!("settee-precomp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap().to_string();
    let s = build(&[("fileDir", &d)]).unwrap();
    let c = matrix(&s);
    let file = dir.join("object-6-0.01.comp");
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes.len(), 36 * 8);
    // Overwrite the file with a recognisable matrix: a new scene loads it instead of computing.
    let marked: Vec<f64> = (0..36).map(|i| c[i] + i as f64).collect();
    std::fs::write(&file, marked.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>()).unwrap();
    let s2 = build(&[("fileDir", &d)]).unwrap();
    assert_eq!(matrix(&s2), marked);
    // fileCompliance names the file directly.
    let s3 = build(&[("fileCompliance", file.to_str().unwrap())]).unwrap();
    assert_eq!(matrix(&s3), marked);
    // recompute with a wrong-sized file in fileDir: a clear warning and a fresh computation.
    std::fs::write(&file, [0u8; 10]).unwrap();
    let s4 = build(&[("fileDir", &d)]).unwrap();
    assert_eq!(matrix(&s4), c);
    std::fs::remove_dir_all(&dir).unwrap();
}
