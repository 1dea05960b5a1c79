//! Linear solvers on hand-built scenes and on plain CRS matrices, checked against dense solutions.
#![allow(clippy::disallowed_methods)] // tests check output Data by name

use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{ComponentId, Factory, LinearSolver, Mbk, Scene, SimResult, VecId};
use settee_linalg::{CsrMatrix, Ordering};
use settee_linearsolver::testing::{add_at_root as add, dense_solve, MatrixForceField};
use settee_linearsolver::{cg, minres, pcg, AssembledSpace, CgEnd, CgLinearSolver, CgParams, DirectLinearSolver};

// ----- helpers -----------------------------------------------------------------------------------

fn factory() -> Factory {
    let mut f = settee_statecontainer::factory_with(&[
        settee_mass::register,
        settee_projective::register,
        settee_odesolver::register,
        settee_animationloop::register,
        settee_linearsolver::register,
    ]);
    f.add::<MatrixForceField>();
    f
}

const NODES: usize = 4;
const N: usize = 3 * NODES;
const VERTEX_MASS: f64 = 2.0;
const FIXED: usize = 0;

/// 3×3-block stiffness of four nodes coupled by "springs" with SPD 3×3 blocks.
fn stiffness() -> Vec<f64> {
    let blocks: [(usize, usize, [[f64; 3]; 3]); 4] = [
        (0, 1, [[4.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 2.0]]),
        (1, 2, [[3.0, -0.4, 0.3], [-0.4, 5.0, 0.1], [0.3, 0.1, 4.0]]),
        (2, 3, [[6.0, 0.2, -0.2], [0.2, 2.0, 0.5], [-0.2, 0.5, 3.0]]),
        (0, 2, [[1.0, 0.1, 0.0], [0.1, 1.5, 0.2], [0.0, 0.2, 1.2]]),
    ];
    let mut k = vec![0.0; N * N];
    for (a, b, blk) in blocks {
        for r in 0..3 {
            for c in 0..3 {
                let v = blk[r][c];
                k[(3 * a + r) * N + 3 * a + c] += v;
                k[(3 * b + r) * N + 3 * b + c] += v;
                k[(3 * a + r) * N + 3 * b + c] -= v;
                k[(3 * b + r) * N + 3 * a + c] -= v;
            }
        }
    }
    k
}

fn fmt_list(v: &[f64]) -> String {
    v.iter().map(|x| format!("{x:e}")).collect::<Vec<_>>().join(" ")
}

/// A scene with 4 Vec3 nodes, uniform mass, node 0 fixed, the coupling force field, and one
/// linear solver of class `solver` (template `template`, extra attributes `attrs`).
fn scene_with(solver: &str, template: Option<&str>, attrs: &[(&str, &str)], extra: &[(&str, &[(&str, &str)])]) -> (Scene, ComponentId, SimResult) {
    let f = factory();
    let mut scene = Scene::new("root");
    for (class, a) in extra {
        add(&mut scene, &f, class, None, a);
    }
    let ls = add(&mut scene, &f, solver, template, attrs);
    add(&mut scene, &f, "MechanicalObject", Some("Vec3d"), &[("position", "0 0 0  1 0 0  2 0.5 0  3 1 0.2")]);
    let vm = VERTEX_MASS.to_string();
    add(&mut scene, &f, "UniformMass", None, &[("vertexMass", &vm)]);
    add(&mut scene, &f, "FixedProjectiveConstraint", None, &[("indices", "0")]);
    add(&mut scene, &f, "TestMatrixForceField", None, &[("stiffness", &fmt_list(&stiffness()))]);
    let r = settee_core::simulation::init_root(&mut scene, &f);
    (scene, ls, r)
}

const RHS: [f64; N] = [0.3, -1.0, 0.7, 1.5, -0.25, 2.0, -0.8, 0.9, 0.1, 0.4, 1.1, -0.6];

/// Dense `P (m M + k ∂f/∂x) P` with unit diagonal on fixed rows, and the projected rhs.
fn dense_system(f: Mbk) -> (Vec<f64>, Vec<f64>) {
    let k = stiffness();
    let mut a = vec![0.0; N * N];
    for i in 0..N {
        for j in 0..N {
            a[i * N + j] = -f.k * k[i * N + j];
        }
        a[i * N + i] += f.m * VERTEX_MASS;
    }
    let mut b = RHS.to_vec();
    for r in 3 * FIXED..3 * FIXED + 3 {
        for c in 0..N {
            a[r * N + c] = 0.0;
            a[c * N + r] = 0.0;
        }
        a[r * N + r] = 1.0;
        b[r] = 0.0;
    }
    (a, b)
}

fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
}

/// Runs one `solve_system` of component `ls` on the scene's root scope with the projected `RHS`.
fn solve_once(scene: &mut Scene, ls: ComponentId, f: Mbk, rhs_values: &[f64]) -> SimResult<Vec<f64>> {
    let scope = MechScope::build(scene, Scene::ROOT);
    let rhs = mech::alloc_deriv(scene, &scope);
    let sol = mech::alloc_deriv(scene, &scope);
    let st = scope.main_states[0];
    scene.store.get_mut(st).write(rhs).copy_from_slice(rhs_values);
    mech::project_response(scene, &scope, rhs)?;
    let r = scene.with_role::<dyn LinearSolver, _>(ls, |solver, s| solver.solve_system(s, &scope, f, rhs, sol));
    let out = scene.store.get(st).read(sol).to_vec();
    mech::free_vec(scene, &scope, rhs);
    mech::free_vec(scene, &scope, sol);
    r.map(|_| out)
}

const FACTORS: Mbk = Mbk { m: 1.0, b: 0.0, k: -0.5 };

fn csr(a: &[f64]) -> CsrMatrix {
    CsrMatrix::from_dense(N, N, a).unwrap()
}

/// The test system as a CSR matrix, its right-hand side and its dense solution.
fn assembled_system() -> (CsrMatrix, Vec<f64>, Vec<f64>) {
    let (a, b) = dense_system(FACTORS);
    let exact = dense_solve(&a, &b);
    (csr(&a), b, exact)
}

// ----- pure algorithms -----------------------------------------------------------------------------

#[test]
fn cg_converges_to_the_dense_solution() {
    let (m, b, exact) = assembled_system();
    let mut sp = AssembledSpace::new(&m, vec![0.0; N], b.clone()).unwrap();
    let params = CgParams { iterations: 100, tolerance: 1e-14, threshold: 1e-30, warm_start: false };
    let rep = cg(&mut sp, AssembledSpace::X, AssembledSpace::B, &params, true).unwrap();
    assert_eq!(rep.end, CgEnd::Tolerance, "{rep:?}");
    assert!(rep.updates <= N + 5, "{rep:?}");
    let x = sp.vec(AssembledSpace::X).to_vec();
    assert!(max_rel_diff(&x, &exact) < 1e-12, "{x:?} vs {exact:?}");
}

#[test]
fn cg_with_one_iteration_is_alpha_r0() {
    let (a, b) = dense_system(FACTORS);
    let m = csr(&a);
    let mut sp = AssembledSpace::new(&m, vec![7.0; N], b.clone()).unwrap();
    let params = CgParams { iterations: 1, tolerance: 1e-14, threshold: 1e-30, warm_start: false };
    let rep = cg(&mut sp, AssembledSpace::X, AssembledSpace::B, &params, false).unwrap();
    assert_eq!((rep.updates, rep.end), (1, CgEnd::Iterations));
    // α = r0·r0 / r0·A r0 with r0 = b, summed sequentially as SOFA's FullVector does.
    let mut ab = vec![0.0; N];
    m.mul_vec(&b, &mut ab).unwrap();
    let (mut rho, mut den) = (0.0, 0.0);
    for i in 0..N {
        rho += b[i] * b[i];
        den += b[i] * ab[i];
    }
    let alpha = rho / den;
    let expected: Vec<f64> = b.iter().map(|v| v * alpha).collect();
    assert_eq!(sp.vec(AssembledSpace::X), expected.as_slice());
}

#[test]
fn first_solve_performs_one_iteration_whatever_the_tolerance() {
    let (a, b) = dense_system(FACTORS);
    let m = csr(&a);
    for (tolerance, threshold) in [(1e10, 1e-5), (1e-5, 1e30), (1e10, 1e30)] {
        let params = CgParams { iterations: 25, tolerance, threshold, warm_start: false };
        let mut sp = AssembledSpace::new(&m, vec![0.0; N], b.clone()).unwrap();
        let first = cg(&mut sp, AssembledSpace::X, AssembledSpace::B, &params, true).unwrap();
        assert_eq!(first.updates, 1, "{first:?}");
        assert!(!first.warnings.is_empty());
        let x = sp.vec(AssembledSpace::X).to_vec();
        assert!(x.iter().any(|v| *v != 0.0));
        let mut sp = AssembledSpace::new(&m, vec![0.0; N], b.clone()).unwrap();
        let later = cg(&mut sp, AssembledSpace::X, AssembledSpace::B, &params, false).unwrap();
        assert_eq!(later.updates, 0, "{later:?}");
        assert!(later.end == CgEnd::Tolerance || later.end == CgEnd::Threshold);
        assert!(sp.vec(AssembledSpace::X).iter().all(|v| *v == 0.0));
    }
}

#[test]
fn cg_threshold_break_discards_the_last_direction() {
    let (a, b) = dense_system(FACTORS);
    let m = csr(&a);
    // Threshold between the first and the later denominators: only the first step is applied.
    let params = CgParams { iterations: 100, tolerance: 0.0, threshold: 0.0, warm_start: false };
    let mut sp = AssembledSpace::new(&m, vec![0.0; N], b.clone()).unwrap();
    let full = cg(&mut sp, AssembledSpace::X, AssembledSpace::B, &params, false).unwrap();
    let d0 = full.denominators[0].abs();
    let d1 = full.denominators[1].abs();
    assert!(d1 < d0, "{full:?}");
    let params = CgParams { threshold: (d0 + d1) / 2.0, ..params };
    let mut sp = AssembledSpace::new(&m, vec![0.0; N], b.clone()).unwrap();
    let rep = cg(&mut sp, AssembledSpace::X, AssembledSpace::B, &params, false).unwrap();
    assert_eq!((rep.updates, rep.products, rep.end), (1, 2, CgEnd::Threshold));
}

#[test]
fn cg_warm_start_from_the_solution_stops_at_once() {
    let (a, b) = dense_system(FACTORS);
    let exact = dense_solve(&a, &b);
    let m = csr(&a);
    let params = CgParams { iterations: 25, tolerance: 1e-10, threshold: 1e-30, warm_start: true };
    let mut sp = AssembledSpace::new(&m, exact.clone(), b.clone()).unwrap();
    let rep = cg(&mut sp, AssembledSpace::X, AssembledSpace::B, &params, false).unwrap();
    assert_eq!((rep.updates, rep.end), (0, CgEnd::Tolerance));
    assert_eq!(sp.vec(AssembledSpace::X), exact.as_slice());
}

#[test]
fn cg_with_zero_rhs_leaves_zero() {
    let (a, _) = dense_system(FACTORS);
    let m = csr(&a);
    let mut sp = AssembledSpace::new(&m, vec![1.0; N], vec![0.0; N]).unwrap();
    let rep = cg(&mut sp, AssembledSpace::X, AssembledSpace::B, &CgParams::default(), true).unwrap();
    assert_eq!(rep.end, CgEnd::NullRhs);
    assert!(sp.vec(AssembledSpace::X).iter().all(|v| *v == 0.0));
}

#[test]
fn pcg_without_preconditioner_converges_and_warm_starts() {
    let (m, b, exact) = assembled_system();
    let mut sp = AssembledSpace::new(&m, vec![0.0; N], b.clone()).unwrap();
    let rep = pcg(&mut sp, AssembledSpace::X, AssembledSpace::B, 200, 1e-28, None).unwrap();
    assert!(rep.updates > 0);
    assert!(max_rel_diff(sp.vec(AssembledSpace::X), &exact) < 1e-12);
    // Started at the solution: no iteration, x untouched.
    let mut sp = AssembledSpace::new(&m, exact.clone(), b.clone()).unwrap();
    let rep = pcg(&mut sp, AssembledSpace::X, AssembledSpace::B, 200, 1e-20, None).unwrap();
    assert_eq!(rep.updates, 0);
    assert_eq!(sp.vec(AssembledSpace::X), exact.as_slice());
    // The cap is honoured.
    let mut sp = AssembledSpace::new(&m, vec![0.0; N], b.clone()).unwrap();
    let rep = pcg(&mut sp, AssembledSpace::X, AssembledSpace::B, 2, 1e-28, None).unwrap();
    assert_eq!(rep.updates, 2);
}

#[test]
fn minres_converges_to_the_dense_solution() {
    let (m, b, exact) = assembled_system();
    let mut sp = AssembledSpace::new(&m, vec![0.0; N], b.clone()).unwrap();
    let rep = minres(&mut sp, AssembledSpace::X, AssembledSpace::B, 200, 1e-14).unwrap();
    assert!(rep.updates > 0);
    assert!(max_rel_diff(sp.vec(AssembledSpace::X), &exact) < 1e-10, "{:?}", rep);
    // Also on an indefinite symmetric system.
    let (ai, bi) = dense_system(Mbk { m: 1.0, b: 0.0, k: 1.0 });
    let exact = dense_solve(&ai, &bi);
    let m = csr(&ai);
    let mut sp = AssembledSpace::new(&m, vec![0.0; N], bi.clone()).unwrap();
    minres(&mut sp, AssembledSpace::X, AssembledSpace::B, 500, 1e-15).unwrap();
    assert!(max_rel_diff(sp.vec(AssembledSpace::X), &exact) < 1e-8);
}

// ----- components on a scene -----------------------------------------------------------------------

const DIRECT: [&str; 5] = ["SparseLDLSolver", "EigenSimplicialLDLT", "EigenSimplicialLLT", "EigenSparseLU", "EigenSparseQR"];

#[test]
fn every_direct_solver_solves_the_constrained_system() {
    let (a, b) = dense_system(FACTORS);
    let exact = dense_solve(&a, &b);
    for class in DIRECT {
        for template in [None, Some("CompressedRowSparseMatrixMat3x3d"), Some("CompressedRowSparseMatrix")] {
            let (mut scene, ls, r) = scene_with(class, template, &[], &[]);
            r.unwrap();
            assert!(!scene.has_errors(), "{:?}", scene.messages);
            for step in 0..2 {
                let x = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
                let d = max_rel_diff(&x, &exact);
                assert!(d < 1e-12, "{class} {template:?} step {step}: {d}");
                assert!(x[..3].iter().all(|v| *v == 0.0), "fixed DOF moved: {x:?}");
            }
            let s = scene.get::<DirectLinearSolver>(ls).unwrap();
            assert_eq!(s.factorizations(), 2);
            assert_eq!(s.symbolic_analyses(), 1, "{class}: the symbolic analysis is reused");
            assert_eq!(s.ordering(), Ordering::Amd);
        }
    }
}

#[test]
fn sparse_ldl_reports_l_nnz_and_can_redo_the_symbolic_analysis() {
    let (mut scene, ls, r) = scene_with("SparseLDLSolver", None, &[("precomputeSymbolicDecomposition", "false")], &[]);
    r.unwrap();
    let (a, b) = dense_system(FACTORS);
    let exact = dense_solve(&a, &b);
    for _ in 0..3 {
        let x = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
        assert!(max_rel_diff(&x, &exact) < 1e-12);
    }
    assert_eq!(scene.get::<DirectLinearSolver>(ls).unwrap().factorizations(), 3);
    let lnnz = scene.entry(ls).data.int("L_nnz");
    assert!(lnnz > 0, "L_nnz = {lnnz}");
}

#[test]
fn ordering_comes_from_the_link_then_the_node_then_amd() {
    let (scene, ls, r) = scene_with("SparseLDLSolver", None, &[], &[("NaturalOrderingMethod", &[])]);
    r.unwrap();
    assert_eq!(scene.get::<DirectLinearSolver>(ls).unwrap().ordering(), Ordering::Natural);

    let (scene, ls, r) = scene_with(
        "EigenSimplicialLDLT",
        None,
        &[("orderingMethod", "@colamd")],
        &[("NaturalOrderingMethod", &[]), ("COLAMDOrderingMethod", &[("name", "colamd")])],
    );
    r.unwrap();
    assert_eq!(scene.get::<DirectLinearSolver>(ls).unwrap().ordering(), Ordering::Colamd);

    let (scene, ls, r) = scene_with("SparseLDLSolver", None, &[("orderingMethod", "@nd")], &[("MetisOrderingMethod", &[("name", "nd")])]);
    r.unwrap();
    assert_eq!(scene.get::<DirectLinearSolver>(ls).unwrap().ordering(), Ordering::NestedDissection);

    let (mut scene, ls, r) = scene_with("SparseLDLSolver", None, &[], &[("COLAMDOrderingMethod", &[])]);
    r.unwrap();
    let (a, b) = dense_system(FACTORS);
    let x = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
    assert!(max_rel_diff(&x, &dense_solve(&a, &b)) < 1e-12);
}

#[test]
fn cg_components_match_the_dense_solution_and_each_other() {
    let (a, b) = dense_system(FACTORS);
    let exact = dense_solve(&a, &b);
    let attrs: &[(&str, &str)] = &[("iterations", "200"), ("tolerance", "1e-14"), ("threshold", "1e-30")];
    let mut results = Vec::new();
    for template in [None, Some("CompressedRowSparseMatrixd"), Some("CompressedRowSparseMatrixMat3x3d"), Some("FullMatrix")] {
        let (mut scene, ls, r) = scene_with("CGLinearSolver", template, attrs, &[]);
        r.unwrap();
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        assert_eq!(scene.get::<CgLinearSolver>(ls).unwrap().is_assembled(), template.is_some());
        let x = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
        assert!(max_rel_diff(&x, &exact) < 1e-12, "{template:?}");
        assert!(x[..3].iter().all(|v| *v == 0.0));
        let s = scene.get::<CgLinearSolver>(ls).unwrap();
        assert_eq!(s.solve_count(), 1);
        assert_eq!(s.last_report().unwrap().end, CgEnd::Tolerance);
        results.push(x);
    }
    // Matrix-free and assembled products only differ by round-off.
    assert!(max_rel_diff(&results[0], &results[1]) < 1e-14);
}

#[test]
fn cg_component_first_solve_exception_then_tolerance() {
    for template in [None, Some("CompressedRowSparseMatrixMat3x3d")] {
        let (mut scene, ls, r) = scene_with("CGLinearSolver", template, &[("iterations", "25"), ("tolerance", "1e10"), ("threshold", "1e-5")], &[]);
        r.unwrap();
        let x1 = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
        let rep = scene.get::<CgLinearSolver>(ls).unwrap().last_report().unwrap().clone();
        assert_eq!(rep.updates, 1, "{template:?}");
        // The first iterate is α·b (b projected).
        assert!(x1[3..].iter().any(|v| *v != 0.0));
        let msgs = scene.messages.len();
        assert!(scene.messages.iter().any(|m| m.message.contains("tolerance reached at first iteration")));
        let x2 = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
        let rep = scene.get::<CgLinearSolver>(ls).unwrap().last_report().unwrap().clone();
        assert_eq!((rep.updates, rep.end), (0, CgEnd::Tolerance));
        assert!(x2.iter().all(|v| *v == 0.0));
        assert_eq!(scene.messages.len(), msgs, "no new warning after the first solve");
    }
}

#[test]
fn cg_component_iterations_one_gives_alpha_b() {
    let (mut scene, ls, r) = scene_with("CGLinearSolver", None, &[("iterations", "1")], &[]);
    r.unwrap();
    let x = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
    let (a, b) = dense_system(FACTORS);
    let m = csr(&a);
    let mut ab = vec![0.0; N];
    m.mul_vec(&b, &mut ab).unwrap();
    let rho: f64 = b.iter().map(|v| v * v).sum();
    let den: f64 = b.iter().zip(&ab).map(|(u, v)| u * v).sum();
    let expected: Vec<f64> = b.iter().map(|v| v * (rho / den)).collect();
    assert!(max_rel_diff(&x, &expected) < 1e-14, "{x:?} vs {expected:?}");
}

#[test]
fn minres_and_pcg_components_solve_the_system() {
    let (a, b) = dense_system(FACTORS);
    let exact = dense_solve(&a, &b);
    for (class, template, attrs) in [
        ("MinResLinearSolver", None, &[("iterations", "200"), ("tolerance", "1e-15")][..]),
        ("MinResLinearSolver", Some("CompressedRowSparseMatrixd"), &[("iterations", "200"), ("tolerance", "1e-15")][..]),
        ("PCGLinearSolver", None, &[("iterations", "200"), ("tolerance", "1e-28")][..]),
        ("ShewchukPCGLinearSolver", None, &[("iterations", "200"), ("tolerance", "1e-28")][..]),
    ] {
        let (mut scene, ls, r) = scene_with(class, template, attrs, &[]);
        r.unwrap();
        let x = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
        assert!(max_rel_diff(&x, &exact) < 1e-10, "{class} {template:?}");
    }
}

#[test]
fn linear_systems_are_accepted() {
    let (mut scene, ls, r) = scene_with(
        "SparseLDLSolver",
        Some("CompressedRowSparseMatrixMat3x3d"),
        &[],
        &[("MatrixLinearSystem", &[("template", "CompressedRowSparseMatrixMat3x3d")])],
    );
    r.unwrap();
    assert!(!scene.has_errors(), "{:?}", scene.messages);
    solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
    let (_, _, r) = scene_with("SparseLDLSolver", None, &[], &[("ConstantSparsityPatternSystem", &[]), ("NaturalOrderingMethod", &[])]);
    r.unwrap();
    let (_, _, r) = scene_with("PCGLinearSolver", None, &[], &[("PreconditionedMatrixFreeSystem", &[("assemblingRate", "1")])]);
    r.unwrap();
}

// ----- errors ------------------------------------------------------------------------------------

#[test]
fn unsupported_inputs_are_clear_errors() {
    let (_, _, r) = scene_with("SparseLDLSolver", None, &[], &[("MatrixLinearSystem", &[("assembleMass", "false")])]);
    let e = r.unwrap_err();
    assert!(e.to_string().contains("assembleMass"), "{e}");
    assert!(e.diagnostic().hint.is_some());

    // An iterative solver cannot precondition PCG.
    let (_, _, r) = scene_with("PCGLinearSolver", None, &[("preconditioner", "@cg")], &[("CGLinearSolver", &[("name", "cg")])]);
    let e = r.unwrap_err();
    assert!(e.to_string().contains("cannot be used as a preconditioner"), "{e}");

    let (_, _, r) = scene_with("CGLinearSolver", None, &[("iterations", "-3")], &[]);
    assert!(r.unwrap_err().to_string().contains("negative"));

    let (_, _, r) = scene_with("SparseLDLSolver", None, &[("orderingMethod", "@nowhere")], &[]);
    assert!(r.is_err());

    // A template the class does not have: the factory reports it and falls back to the default.
    let (scene, ls, _) = scene_with("SparseLDLSolver", Some("FullMatrix"), &[], &[]);
    assert!(scene.messages.iter().any(|m| m.message.contains("not available")));
    assert_eq!(scene.entry(ls).template, "CompressedRowSparseMatrixd");
}

#[test]
fn factorization_failures_are_errors_not_panics() {
    // m·M − k·K with a large positive k is indefinite: LLᵀ must refuse it.
    let indefinite = Mbk { m: 1.0, b: 0.0, k: 50.0 };
    let (mut scene, ls, r) = scene_with("EigenSimplicialLLT", None, &[], &[]);
    r.unwrap();
    let e = solve_once(&mut scene, ls, indefinite, &RHS).unwrap_err();
    assert!(e.diagnostic().hint.is_some(), "{e}");
    assert!(e.to_string().contains("EigenSimplicialLLT"), "{e}");
    // The indefinite (non-singular) system is fine for LDLᵀ, LU and QR.
    let (a, b) = dense_system(indefinite);
    let exact = dense_solve(&a, &b);
    for class in ["SparseLDLSolver", "EigenSparseLU", "EigenSparseQR"] {
        let (mut scene, ls, r) = scene_with(class, None, &[], &[]);
        r.unwrap();
        let x = solve_once(&mut scene, ls, indefinite, &RHS).unwrap();
        assert!(max_rel_diff(&x, &exact) < 1e-10, "{class}");
    }
    // A singular system (no mass, no stiffness) is reported.
    let (mut scene, ls, r) = scene_with("SparseLDLSolver", None, &[], &[]);
    r.unwrap();
    assert!(solve_once(&mut scene, ls, Mbk { m: 0.0, b: 0.0, k: 0.0 }, &RHS).is_err());
}

// ----- whole steps -----------------------------------------------------------------------------------

/// Runs `steps` implicit Euler steps with the given linear solver and returns the positions.
fn simulate(solver: &str, template: Option<&str>, attrs: &[(&str, &str)], steps: usize) -> Vec<f64> {
    let f = factory();
    let mut scene = Scene::new("root");
    add(&mut scene, &f, "EulerImplicitSolver", None, &[("rayleighStiffness", "0.1"), ("rayleighMass", "0.1")]);
    add(&mut scene, &f, solver, template, attrs);
    let mo = add(&mut scene, &f, "MechanicalObject", Some("Vec3d"), &[("position", "0 0 0  1 0 0  2 0.5 0  3 1 0.2")]);
    add(&mut scene, &f, "UniformMass", None, &[("vertexMass", "2")]);
    add(&mut scene, &f, "FixedProjectiveConstraint", None, &[("indices", "0")]);
    add(&mut scene, &f, "TestMatrixForceField", None, &[("stiffness", &fmt_list(&stiffness()))]);
    settee_core::simulation::init_root(&mut scene, &f).unwrap();
    for _ in 0..steps {
        settee_core::simulation::animate(&mut scene, 0.05).unwrap();
    }
    let s = scene.state_of(mo).unwrap();
    scene.vec(s, VecId::POSITION).to_vec()
}

#[test]
fn implicit_euler_steps_agree_across_solvers() {
    let reference = simulate("SparseLDLSolver", None, &[], 20);
    assert!(reference[3..].iter().zip(&[1.0, 0.0, 0.0, 2.0, 0.5, 0.0, 3.0, 1.0, 0.2]).any(|(a, b)| (a - b).abs() > 1e-3), "the scene moves");
    assert_eq!(&reference[..3], &[0.0, 0.0, 0.0]);
    for class in DIRECT {
        let x = simulate(class, Some("CompressedRowSparseMatrixMat3x3d"), &[], 20);
        assert!(max_rel_diff(&x, &reference) < 1e-12, "{class}");
    }
    let tight: &[(&str, &str)] = &[("iterations", "1000"), ("tolerance", "1e-13"), ("threshold", "1e-30")];
    for template in [None, Some("CompressedRowSparseMatrixMat3x3d")] {
        let x = simulate("CGLinearSolver", template, tight, 20);
        assert!(max_rel_diff(&x, &reference) < 1e-10, "CG {template:?}");
    }
    let x = simulate("MinResLinearSolver", None, &[("iterations", "1000"), ("tolerance", "1e-15")], 20);
    assert!(max_rel_diff(&x, &reference) < 1e-9, "MinRes");
    let x = simulate("PCGLinearSolver", None, &[("iterations", "1000"), ("tolerance", "1e-26")], 20);
    assert!(max_rel_diff(&x, &reference) < 1e-9, "PCG");
    // A capped CG (the default 25 iterations would converge on 9 free DOFs; 2 does not).
    let x = simulate("CGLinearSolver", None, &[("iterations", "2"), ("tolerance", "1e-13"), ("threshold", "1e-30")], 20);
    assert!(max_rel_diff(&x, &reference) > 1e-6);
}

#[test]
fn async_sparse_ldl_is_sparse_ldl_step_for_step() {
    // Settee factorizes synchronously: the same numbers as SparseLDLSolver, bit for bit, for
    // both templates (SOFA would solve with a factorization of an earlier step).
    for template in [None, Some("CompressedRowSparseMatrixMat3x3d")] {
        let reference = simulate("SparseLDLSolver", template, &[], 20);
        let x = simulate("AsyncSparseLDLSolver", template, &[("enableAssembly", "true")], 20);
        assert_eq!(x, reference, "{template:?}");
    }
    let (mut scene, ls, r) = scene_with("AsyncSparseLDLSolver", None, &[], &[]);
    r.unwrap();
    let (a, b) = dense_system(FACTORS);
    let exact = dense_solve(&a, &b);
    for _ in 0..2 {
        let x = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
        assert!(max_rel_diff(&x, &exact) < 1e-12);
    }
    // The solution of each solve comes from its own system's factorization.
    assert_eq!(scene.get::<DirectLinearSolver>(ls).unwrap().factorizations(), 2);
    assert!(scene.entry(ls).data.get(settee_linearsolver::SparseLdlData::L_NNZ) > 0);
}

// ----- preconditioners ---------------------------------------------------------------------------

#[test]
fn pcg_with_an_exact_preconditioner_converges_in_one_iteration() {
    // A direct solver as preconditioner is the exact inverse: one PCG update reaches the solution.
    let (mut scene, ls, r) = scene_with(
        "PCGLinearSolver",
        None,
        &[("preconditioner", "@ldl"), ("tolerance", "1e-20"), ("iterations", "50")],
        &[("SparseLDLSolver", &[("name", "ldl")])],
    );
    r.unwrap();
    let x = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
    let (a, b) = dense_system(FACTORS);
    let expected = dense_solve(&a, &b);
    assert!(max_rel_diff(&x, &expected) < 1e-10, "{x:?} vs {expected:?}");
    let rep = scene.get::<settee_linearsolver::PcgLinearSolver>(ls).unwrap().last_report().unwrap().clone();
    assert!(rep.updates <= 2, "{rep:?}");
}

#[test]
fn every_preconditioner_gives_the_converged_solution() {
    for pre in ["JacobiPreconditioner", "BlockJacobiPreconditioner", "SSORPreconditioner"] {
        let (mut scene, ls, r) = scene_with(
            "PCGLinearSolver",
            None,
            &[("preconditioner", "@pre"), ("tolerance", "1e-24"), ("iterations", "500")],
            &[(pre, &[("name", "pre")])],
        );
        r.unwrap();
        let x = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
        let (a, b) = dense_system(FACTORS);
        let expected = dense_solve(&a, &b);
        assert!(max_rel_diff(&x, &expected) < 1e-9, "{pre}: {x:?} vs {expected:?}");
    }
}

/// The preconditioner role is defined by this crate, not the core: the scene finds the classes
/// that play it and hands them out as `dyn Preconditioner`; the preconditioners are not linear
/// solvers (they cannot solve a system on their own), the direct solvers are both.
#[test]
fn preconditioners_play_the_role_this_crate_defines() {
    use settee_core::role;
    use settee_linearsolver::{Preconditioner, PRECONDITIONER};
    let (mut scene, ls, r) =
        scene_with("PCGLinearSolver", None, &[("preconditioner", "@pre")], &[("JacobiPreconditioner", &[("name", "pre")]), ("SparseLDLSolver", &[])]);
    r.unwrap();
    let pre = scene.find_local(Scene::ROOT, PRECONDITIONER).expect("the Jacobi preconditioner");
    assert_eq!(scene.entry(pre).class.name, "JacobiPreconditioner");
    assert_eq!(scene.entry(pre).class.role_names(), ["Preconditioner"]);
    assert!(!scene.entry(pre).plays(role::LINEAR_SOLVER));
    assert!(scene.role::<dyn LinearSolver>(pre).is_none());
    // The first linear solver of the node is the direct solver, which is a preconditioner too.
    let ldl = scene.find_local(Scene::ROOT, role::LINEAR_SOLVER).unwrap();
    assert_eq!(scene.entry(ldl).class.name, "SparseLDLSolver");
    assert!(scene.entry(ldl).plays(PRECONDITIONER) && scene.role_mut::<dyn Preconditioner>(ldl).is_some());
    assert!(!scene.entry(ls).plays(PRECONDITIONER));
    // Refreshed and applied through the role: z = D⁻¹·r, with a unit diagonal on the fixed rows.
    let scope = MechScope::build(&scene, Scene::ROOT);
    scene.with_role::<dyn Preconditioner, _>(pre, |p, s| p.refresh(s, &scope, FACTORS)).unwrap();
    let (a, _) = dense_system(FACTORS);
    let mut z = vec![0.0; N];
    scene.with_role::<dyn Preconditioner, _>(pre, |p, s| p.apply(s, &RHS, &mut z)).unwrap();
    for i in 0..N {
        assert_eq!(z[i], (1.0 / a[i * N + i]) * RHS[i], "row {i}");
    }
}

#[test]
fn dense_direct_solvers_solve_the_constrained_system() {
    let (a, b) = dense_system(FACTORS);
    let exact = dense_solve(&a, &b);
    for (class, template) in [
        ("SVDLinearSolver", None),
        ("SVDLinearSolver", Some("CompressedRowSparseMatrixMat3x3d")),
        ("CholeskySolver", None),
        ("CholeskySolver", Some("FullMatrix")),
    ] {
        let (mut scene, ls, r) = scene_with(class, template, &[], &[]);
        r.unwrap();
        for step in 0..2 {
            let x = solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
            let d = max_rel_diff(&x, &exact);
            assert!(d < 1e-12, "{class} {template:?} step {step}: {d}");
            assert!(x[..3].iter().all(|v| v.abs() < 1e-14), "fixed DOF moved: {x:?}");
        }
    }
    // the condition number is the ratio of the extreme singular values of the dense matrix
    let (mut scene, ls, _) = scene_with("SVDLinearSolver", None, &[], &[]);
    solve_once(&mut scene, ls, FACTORS, &RHS).unwrap();
    let sv = nalgebra::DMatrix::from_row_slice(N, N, &a).singular_values();
    let expected = sv.max() / sv.min();
    let got = scene.entry(ls).data.real("conditionNumber");
    assert!((got - expected).abs() < 1e-9 * expected, "{got} vs {expected}");
}

/// Without the fixed DOFs and without mass the system `−k·K` is singular (rigid translations):
/// SVDLinearSolver returns the minimum-norm least-squares solution, CholeskySolver refuses.
#[test]
fn svd_solves_a_singular_system_in_the_least_squares_sense() {
    let f = factory();
    let mut scene = Scene::new("root");
    let ls = add(&mut scene, &f, "SVDLinearSolver", None, &[]);
    add(&mut scene, &f, "MechanicalObject", Some("Vec3d"), &[("position", "0 0 0  1 0 0  2 0.5 0  3 1 0.2")]);
    add(&mut scene, &f, "TestMatrixForceField", None, &[("stiffness", &fmt_list(&stiffness()))]);
    settee_core::simulation::init_root(&mut scene, &f).unwrap();
    let factors = Mbk { m: 0.0, b: 0.0, k: -1.0 };
    let x = solve_once(&mut scene, ls, factors, &RHS).unwrap();
    let k = nalgebra::DMatrix::from_row_slice(N, N, &stiffness());
    let expected = k.clone().pseudo_inverse(1e-6).unwrap() * nalgebra::DVector::from_column_slice(&RHS);
    assert!(max_rel_diff(&x, expected.as_slice()) < 1e-10);
    // no translation component: the minimum-norm solution
    for c in 0..3 {
        let t: f64 = x.iter().skip(c).step_by(3).sum();
        assert!(t.abs() < 1e-10, "{t}");
    }
    let mut scene = Scene::new("root");
    let ls = add(&mut scene, &f, "CholeskySolver", None, &[]);
    add(&mut scene, &f, "MechanicalObject", Some("Vec3d"), &[("position", "0 0 0  1 0 0  2 0.5 0  3 1 0.2")]);
    add(&mut scene, &f, "TestMatrixForceField", None, &[("stiffness", &fmt_list(&stiffness()))]);
    settee_core::simulation::init_root(&mut scene, &f).unwrap();
    let e = solve_once(&mut scene, ls, Mbk { m: 0.0, b: 0.0, k: 1.0 }, &RHS).unwrap_err();
    assert!(e.to_string().contains("not positive definite"), "{e}");
}

/// A 7×7×7 lattice of nodes (1,029 DOFs) coupled along the edges of a tetrahedral cube mesh by
/// SPD 3×3 blocks, node 0 fixed, solved by `SparseLDLSolver` with the ordering component
/// `ordering` in its node: enough nodes for the nested dissection to cut the graph.
fn lattice_solve(ordering: &str) -> (Vec<f64>, Vec<f64>, Vec<f64>, Ordering) {
    const G: usize = 7;
    let nodes = G * G * G;
    let n = 3 * nodes;
    let id = |x: usize, y: usize, z: usize| (x * G + y) * G + z;
    let mut k = vec![0.0; n * n];
    let mut positions = Vec::new();
    for x in 0..G {
        for y in 0..G {
            for z in 0..G {
                positions.extend([x as f64, y as f64, z as f64]);
                for (e, d) in [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1]].iter().enumerate() {
                    let (p, q, r) = (x + d[0], y + d[1], z + d[2]);
                    if p >= G || q >= G || r >= G {
                        continue;
                    }
                    let (a, b) = (id(x, y, z), id(p, q, r));
                    let s = 1.0 + 0.1 * e as f64 + 0.01 * (a % 7) as f64;
                    let blk = [[2.0 * s, 0.3, 0.1], [0.3, 3.0 * s, -0.2], [0.1, -0.2, 1.5 * s]];
                    for (i, row) in blk.iter().enumerate() {
                        for (j, v) in row.iter().enumerate() {
                            k[(3 * a + i) * n + 3 * a + j] += v;
                            k[(3 * b + i) * n + 3 * b + j] += v;
                            k[(3 * a + i) * n + 3 * b + j] -= v;
                            k[(3 * b + i) * n + 3 * a + j] -= v;
                        }
                    }
                }
            }
        }
    }
    let f = factory();
    let mut scene = Scene::new("root");
    add(&mut scene, &f, ordering, None, &[]);
    let ls = add(&mut scene, &f, "SparseLDLSolver", Some("CompressedRowSparseMatrixMat3x3d"), &[]);
    add(&mut scene, &f, "MechanicalObject", Some("Vec3d"), &[("position", &fmt_list(&positions))]);
    add(&mut scene, &f, "UniformMass", None, &[("vertexMass", "0.5")]);
    add(&mut scene, &f, "FixedProjectiveConstraint", None, &[("indices", "0")]);
    add(&mut scene, &f, "TestMatrixForceField", None, &[("stiffness", &fmt_list(&k))]);
    settee_core::simulation::init_root(&mut scene, &f).unwrap();
    let rhs: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0).collect();
    let x = solve_once(&mut scene, ls, FACTORS, &rhs).unwrap();
    // The projected system: m M + k K with the fixed node's rows and columns replaced by identity.
    let mut a: Vec<f64> = k.iter().map(|v| -FACTORS.k * v).collect();
    let mut b = rhs;
    for i in 0..n {
        a[i * n + i] += FACTORS.m * 0.5;
    }
    for r in 0..3 {
        for c in 0..n {
            a[r * n + c] = 0.0;
            a[c * n + r] = 0.0;
        }
        a[r * n + r] = 1.0;
        b[r] = 0.0;
    }
    (a, b, x, scene.get::<DirectLinearSolver>(ls).unwrap().ordering())
}

#[test]
fn metis_ordering_method_solves_as_amd_does() {
    let (a, b, nd, ord) = lattice_solve("MetisOrderingMethod");
    assert_eq!(ord, Ordering::NestedDissection);
    let (_, _, amd, ord) = lattice_solve("AMDOrderingMethod");
    assert_eq!(ord, Ordering::Amd);
    let n = b.len();
    let residual: f64 = (0..n).map(|i| (a[i * n..(i + 1) * n].iter().zip(&nd).map(|(p, q)| p * q).sum::<f64>() - b[i]).powi(2)).sum::<f64>().sqrt();
    let norm_b = b.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(residual < 1e-12 * norm_b, "residual {residual} (|b| {norm_b})");
    assert!(max_rel_diff(&nd, &amd) < 1e-10, "ND vs AMD: {}", max_rel_diff(&nd, &amd));
}
