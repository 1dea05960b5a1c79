#![allow(clippy::needless_range_loop)]
//! The iterative KKT solvers (compliant spec §8.4–8.6) on small random systems with an SPD
//! implicit matrix, fixed DOFs, hard and soft constraints: they reach the LDLTSolver solution,
//! the Schur and KKT modes agree, warm starts save iterations, and the projected Gauss-Seidel
//! solvers satisfy the complementarity conditions of unilateral constraints.

use settee_compliant::direct::DirectKktSolver;
use settee_compliant::krylov::{KrylovParams, KrylovSolver, Method};
use settee_compliant::response::ResponseKind;
use settee_compliant::sequential::{SequentialParams, SequentialSolver};
use settee_core::compliant::{AssembledSystem, ConstraintBlock, KktSolver, Projector, ValueKind};
use settee_core::{ComponentId, NodeId, StateId};
use settee_linalg::{CsrMatrix, DirectKind};

/// A deterministic generator of numbers in [−1, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        settee_testkit::lcg(&mut self.0)
    }
}

fn block(offset: usize, rows: usize, projector: Option<Projector>) -> ConstraintBlock {
    ConstraintBlock {
        state: StateId::first_in_slot(0),
        node: NodeId::first_in_slot(0),
        compliance: ComponentId::first_in_slot(0),
        offset,
        rows,
        dof_size: 1,
        value: ValueKind::Elastic,
        value_is_fallback: true,
        projector,
        mask: Vec::new(),
    }
}

/// `m` masters (DOFs in `fixed` are fixed), an SPD `H = BᵀB + I/2`, a dense random J, and the
/// constraint blocks `(rows, compliance)`: compliance 0 is a hard constraint.
fn system(seed: u64, m: usize, fixed: &[usize], blocks: &[(usize, f64)]) -> AssembledSystem {
    let mut rng = Rng(seed);
    let b: Vec<f64> = (0..m * m).map(|_| rng.next()).collect();
    let mut h = vec![0.0; m * m];
    for i in 0..m {
        for j in 0..m {
            h[i * m + j] = (0..m).map(|k| b[k * m + i] * b[k * m + j]).sum::<f64>() + if i == j { 0.5 } else { 0.0 };
        }
    }
    let n: usize = blocks.iter().map(|b| b.0).sum();
    let j: Vec<f64> = (0..n * m).map(|_| rng.next()).collect();
    let mut c = vec![0.0; n * n];
    let mut blks = Vec::new();
    let mut off = 0;
    for &(rows, comp) in blocks {
        for k in off..off + rows {
            c[k * n + k] = comp;
        }
        blks.push(block(off, rows, None));
        off += rows;
    }
    let mut free = vec![true; m];
    for &f in fixed {
        free[f] = false;
    }
    AssembledSystem {
        dt: 0.01,
        m,
        n,
        h: CsrMatrix::from_dense(m, m, &h).unwrap(),
        free,
        j: CsrMatrix::from_dense(n, m, &j).unwrap(),
        c: CsrMatrix::from_dense(n, n, &c).unwrap(),
        masters: Vec::new(),
        mechanical: Vec::new(),
        blocks: blks,
    }
}

/// A right-hand side with zeros on the fixed DOFs (as the ODE solver builds it).
fn rhs(sys: &AssembledSystem, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    let mut r: Vec<f64> = (0..sys.m + sys.n).map(|_| rng.next()).collect();
    for i in 0..sys.m {
        if !sys.free[i] {
            r[i] = 0.0;
        }
    }
    r
}

fn solve(s: &mut dyn KktSolver, sys: &AssembledSystem, rhs: &[f64], x0: Option<&[f64]>) -> Vec<f64> {
    s.factor(sys).unwrap();
    let mut x = x0.map(|x| x.to_vec()).unwrap_or_else(|| vec![0.0; sys.m + sys.n]);
    s.solve(sys, &mut x, rhs).unwrap();
    x
}

fn ldlt(sys: &AssembledSystem, rhs: &[f64]) -> Vec<f64> {
    solve(&mut DirectKktSolver::with(DirectKind::Ldlt, true, ResponseKind::default_for(true)), sys, rhs, None)
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

/// The residual of `[[H, −Jᵀ],[J, C']]·[v; λ] = [r_m; r_n]` on the free rows and the constraint
/// rows.
fn kkt_residual(sys: &AssembledSystem, x: &[f64], rhs: &[f64]) -> f64 {
    let (m, n) = (sys.m, sys.n);
    let h = sys.h.to_dense();
    let j = sys.j.to_dense();
    let c = sys.c.to_dense();
    let mut worst = 0.0f64;
    for i in 0..m {
        if !sys.free[i] {
            continue;
        }
        let r = (0..m).filter(|&k| sys.free[k]).map(|k| h[i * m + k] * x[k]).sum::<f64>() - (0..n).map(|k| j[k * m + i] * x[m + k]).sum::<f64>();
        worst = worst.max((r - rhs[i]).abs());
    }
    for k in 0..n {
        let r = (0..m).filter(|&i| sys.free[i]).map(|i| j[k * m + i] * x[i]).sum::<f64>() + (0..n).map(|l| c[k * n + l] * x[m + l]).sum::<f64>();
        worst = worst.max((r - rhs[m + k]).abs());
    }
    worst
}

const TIGHT: KrylovParams = KrylovParams { iterations: 500, precision: 1e-12, relative: false, restart: 0 };

/// [`mixed`], its right-hand side of seed 3, the LDLᵀ solution and its largest magnitude.
fn mixed_reference() -> (AssembledSystem, Vec<f64>, Vec<f64>, f64) {
    let sys = mixed();
    let r = rhs(&sys, 3);
    let reference = ldlt(&sys, &r);
    let scale = reference.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    (sys, r, reference, scale)
}

fn mixed() -> AssembledSystem {
    // 8 masters, two fixed; a hard block of 2 rows and a soft block of 2 rows.
    system(7, 8, &[1, 5], &[(2, 0.0), (2, 0.05)])
}

#[test]
fn reference_solution_solves_the_kkt_system() {
    let sys = mixed();
    let r = rhs(&sys, 3);
    let x = ldlt(&sys, &r);
    assert!(kkt_residual(&sys, &x, &r) < 1e-12);
    assert_eq!((x[1], x[5]), (0.0, 0.0));
}

#[test]
fn krylov_solvers_reach_the_ldlt_solution_in_both_modes() {
    let (sys, r, reference, scale) = mixed_reference();
    for method in [Method::Minres, Method::Cg, Method::BiCgStab] {
        for response in [Some(ResponseKind::default_for(true)), None] {
            let schur = response.is_some();
            // CG on the indefinite KKT operator is what SOFA does, but it has no convergence
            // guarantee: only the Schur mode is required of it.
            if method == Method::Cg && !schur {
                continue;
            }
            let mut s = KrylovSolver::with(method, TIGHT, response);
            let x = solve(&mut s, &sys, &r, None);
            let (it, res) = s.last_stats().unwrap();
            assert!(res <= 1e-12, "{method:?} schur={schur}: residual {res} after {it} iterations");
            let d = max_diff(&x, &reference);
            assert!(d < 1e-9 * scale, "{method:?} schur={schur}: {d:e} from the LDLT solution ({it} iterations)");
            assert!(kkt_residual(&sys, &x, &r) < 1e-9, "{method:?} schur={schur}");
        }
    }
}

#[test]
fn cg_in_kkt_mode_on_a_soft_system_agrees_with_schur_mode() {
    // Soft constraints only: CG on the indefinite operator still converges here.
    let sys = system(11, 6, &[0], &[(3, 0.5)]);
    let r = rhs(&sys, 5);
    let schur = solve(&mut KrylovSolver::with(Method::Cg, TIGHT, Some(ResponseKind::default_for(true))), &sys, &r, None);
    let mut s = KrylovSolver::with(Method::Cg, TIGHT, None);
    let kkt = solve(&mut s, &sys, &r, None);
    let (it, res) = s.last_stats().unwrap();
    assert!(res <= 1e-12, "residual {res} after {it} iterations");
    assert!(max_diff(&schur, &kkt) < 1e-9, "{schur:?} vs {kkt:?}");
}

#[test]
fn krylov_stops_at_its_precision() {
    // A loose precision: the solver stops early, with a residual at most the threshold, and the
    // solution is correspondingly close.
    let sys = system(21, 40, &[3], &[(20, 0.01)]);
    let r = rhs(&sys, 9);
    let reference = ldlt(&sys, &r);
    for method in [Method::Minres, Method::Cg] {
        let p = KrylovParams { iterations: 1000, precision: 1e-4, relative: false, restart: 0 };
        let mut s = KrylovSolver::with(method, p, Some(ResponseKind::default_for(true)));
        let x = solve(&mut s, &sys, &r, None);
        let (it, res) = s.last_stats().unwrap();
        assert!(res <= 1e-4 && it > 0 && it < 1000, "{method:?}: {it} iterations, residual {res}");
        // λ error ≤ ‖Σ⁻¹‖ ‖residual‖ with ‖Σ⁻¹‖ ≤ 1/c.
        let dl = max_diff(&x[sys.m..], &reference[sys.m..]);
        assert!(dl <= 1e-4 / 0.01, "{method:?}: λ off by {dl}");
    }
    // A relative precision scales the threshold by the norm of the right-hand side iterated
    // on (KKT mode: the whole [r_m; −r_n]).
    let rn = r.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(rn > 1.0);
    let abs = KrylovParams { iterations: 1000, precision: 1e-4, relative: false, restart: 0 };
    let mut s = KrylovSolver::with(Method::Minres, abs, None);
    solve(&mut s, &sys, &r, None);
    let (it_abs, _) = s.last_stats().unwrap();
    let mut s = KrylovSolver::with(Method::Minres, KrylovParams { relative: true, ..abs }, None);
    solve(&mut s, &sys, &r, None);
    let (it_rel, res_rel) = s.last_stats().unwrap();
    assert!(res_rel <= 1e-4 * rn && res_rel > 1e-4 && it_rel < it_abs, "relative: {it_rel} iterations, residual {res_rel}; absolute: {it_abs}");
}

#[test]
fn minres_restart_keeps_converging_on_the_schur_complement() {
    // Restarted MINRES decreases the residual every cycle on an SPD operator (it may stagnate
    // on the indefinite KKT one); the restarts cost iterations.
    let sys = system(31, 30, &[], &[(15, 0.02)]);
    let r = rhs(&sys, 2);
    let reference = ldlt(&sys, &r);
    let resp = Some(ResponseKind::default_for(true));
    let p = KrylovParams { iterations: 2000, precision: 1e-11, relative: false, restart: 5 };
    let mut s = KrylovSolver::with(Method::Minres, p, resp.clone());
    let x = solve(&mut s, &sys, &r, None);
    let (it, res) = s.last_stats().unwrap();
    assert!(res <= 1e-11, "{it} iterations, residual {res}");
    assert!(max_diff(&x, &reference) < 1e-8);
    let mut plain = KrylovSolver::with(Method::Minres, KrylovParams { restart: 0, ..p }, resp);
    solve(&mut plain, &sys, &r, None);
    let (it0, _) = plain.last_stats().unwrap();
    assert!(it0 < it, "restarted {it} iterations, plain {it0}");
}

#[test]
fn warm_start_saves_iterations() {
    let sys = system(41, 40, &[2, 9], &[(10, 0.0), (10, 0.01)]);
    let r = rhs(&sys, 4);
    let reference = ldlt(&sys, &r);
    // A nearby right-hand side, warm-started from the reference solution.
    let mut r2 = r.clone();
    for v in r2.iter_mut() {
        *v *= 1.001;
    }
    let p = KrylovParams { iterations: 1000, precision: 1e-9, relative: false, restart: 0 };
    for (method, response) in [
        (Method::Minres, Some(ResponseKind::default_for(true))),
        (Method::Cg, Some(ResponseKind::default_for(true))),
        (Method::Minres, None),
        (Method::BiCgStab, Some(ResponseKind::default_for(true))),
    ] {
        let schur = response.is_some();
        let mut cold = KrylovSolver::with(method, p, response.clone());
        solve(&mut cold, &sys, &r2, None);
        let mut warm = KrylovSolver::with(method, p, response);
        solve(&mut warm, &sys, &r2, Some(&reference));
        let (ic, iw) = (cold.last_stats().unwrap().0, warm.last_stats().unwrap().0);
        assert!(iw < ic, "{method:?} schur={schur}: warm {iw} iterations, cold {ic}");
    }
    let sp = SequentialParams { iterations: 10000, precision: 1e-12, ..SequentialParams::default() };
    let mut cold = SequentialSolver::with(false, sp, ResponseKind::default_for(true));
    solve(&mut cold, &sys, &r2, None);
    let mut warm = SequentialSolver::with(false, sp, ResponseKind::default_for(true));
    solve(&mut warm, &sys, &r2, Some(&reference));
    let (ic, iw) = (cold.last_stats().unwrap().0, warm.last_stats().unwrap().0);
    assert!(iw < ic, "SequentialSolver: warm {iw} sweeps, cold {ic}");
}

#[test]
fn the_damping_of_the_correction_pass_relaxes_the_constraints() {
    // correct(.., δ) solves with C' + δI: compare with the LDLT solution of that system.
    let sys = mixed();
    let r = rhs(&sys, 8);
    let delta = 0.3;
    let mut damped = sys.clone();
    let mut c = damped.c.to_dense();
    for k in 0..sys.n {
        c[k * sys.n + k] += delta;
    }
    damped.c = CsrMatrix::from_dense(sys.n, sys.n, &c).unwrap();
    let reference = ldlt(&damped, &r);
    for response in [Some(ResponseKind::default_for(true)), None] {
        let mut s = KrylovSolver::with(Method::Minres, TIGHT, response);
        s.factor(&sys).unwrap();
        let mut x = vec![0.0; sys.m + sys.n];
        s.correct(&sys, &mut x, &r, delta).unwrap();
        assert!(max_diff(&x, &reference) < 1e-9);
    }
}

#[test]
fn sequential_solvers_reach_the_ldlt_solution_on_bilateral_constraints() {
    let (sys, r, reference, scale) = mixed_reference();
    for nncg in [false, true] {
        for on_bilaterals in [true, false] {
            for omega in [1.0, 1.3] {
                let p = SequentialParams {
                    iterations: 20000,
                    precision: 1e-14,
                    omega,
                    iterate_on_bilaterals: on_bilaterals,
                    ..SequentialParams::default()
                };
                let mut s = SequentialSolver::with(nncg, p, ResponseKind::default_for(true));
                let x = solve(&mut s, &sys, &r, None);
                let (it, _) = s.last_stats().unwrap();
                let d = max_diff(&x, &reference);
                // Without projectors and with iterateOnBilaterals=false everything is factored.
                assert!(d < 1e-8 * scale, "nncg={nncg} iterateOnBilaterals={on_bilaterals} ω={omega}: {d:e} ({it} iterations)");
                if !on_bilaterals {
                    assert_eq!(it, 0, "nothing left to iterate on");
                }
            }
        }
    }
}

#[test]
fn sequential_stopping_test_divides_by_the_number_of_rows() {
    // With precision p, the solver stops after the first sweep whose sqrt(Σ‖Δλ‖²)/n ≤ p.
    let sys = system(51, 12, &[], &[(6, 0.0)]);
    let r = rhs(&sys, 1);
    let p = SequentialParams { iterations: 100000, precision: 1e-6, ..SequentialParams::default() };
    let mut s = SequentialSolver::with(false, p, ResponseKind::default_for(true));
    solve(&mut s, &sys, &r, None);
    let (it, est) = s.last_stats().unwrap();
    assert!(est <= 1e-6, "{est}");
    // One sweep fewer does not pass the test.
    let p1 = SequentialParams { iterations: it - 1, ..p };
    let mut s1 = SequentialSolver::with(false, p1, ResponseKind::default_for(true));
    solve(&mut s1, &sys, &r, None);
    let (it1, est1) = s1.last_stats().unwrap();
    assert_eq!(it1, it - 1);
    assert!(est1 > 1e-6 && est1 * 6.0 > 1e-6, "{est1}");
}

/// A contact-like system: 3 particles in 3D (m = 9) with a diagonal mass, 6 hard unilateral
/// rows (normals of random planes), `rhs` pushing some rows into violation.
fn contacts(mask: Vec<bool>) -> AssembledSystem {
    let mut rng = Rng(99);
    let m = 9;
    let n = 6;
    let h: Vec<f64> = (0..m * m).map(|k| if k % (m + 1) == 0 { 2.0 } else { 0.0 }).collect();
    let mut j = vec![0.0; n * m];
    for k in 0..n {
        let p = k % 3;
        let mut nrm = [rng.next(), rng.next(), rng.next()];
        let l = (nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]).sqrt();
        nrm.iter_mut().for_each(|v| *v /= l);
        j[k * m + 3 * p..k * m + 3 * p + 3].copy_from_slice(&nrm);
    }
    let mut blk = block(0, n, Some(Projector::Unilateral));
    blk.mask = mask;
    AssembledSystem {
        dt: 0.01,
        m,
        n,
        h: CsrMatrix::from_dense(m, m, &h).unwrap(),
        free: vec![true; m],
        j: CsrMatrix::from_dense(n, m, &j).unwrap(),
        c: CsrMatrix::zeros(n, n),
        masters: Vec::new(),
        mechanical: Vec::new(),
        blocks: vec![blk],
    }
}

fn contact_rhs() -> Vec<f64> {
    let mut r = vec![0.0; 15];
    // Gravity-like momentum on the masters.
    for p in 0..3 {
        r[3 * p + 1] = -0.2;
        r[3 * p] = 0.05 * p as f64;
    }
    // Constraint rows: some ask for separation, some allow penetration.
    r[9..15].copy_from_slice(&[0.3, -0.2, 0.1, -0.4, 0.25, 0.0]);
    r
}

/// λ ≥ 0, w = J v − r_n ≥ 0, λ·w = 0 (up to `tol`).
fn check_complementarity(sys: &AssembledSystem, x: &[f64], r: &[f64], tol: f64) -> (usize, usize) {
    let (m, n) = (sys.m, sys.n);
    let (mut active, mut separated) = (0, 0);
    for k in 0..n {
        let w: f64 = sys.j.row(k).map(|(c, v)| v * x[c]).sum::<f64>() - r[m + k];
        let l = x[m + k];
        assert!(l >= 0.0, "row {k}: λ = {l}");
        assert!(w >= -tol, "row {k}: J v − r = {w}");
        assert!((l * w).abs() <= tol, "row {k}: λ·w = {}", l * w);
        if l > tol {
            active += 1;
        } else {
            separated += 1;
        }
    }
    // The free-velocity equation holds: H v − Jᵀ λ = r_m.
    let h = sys.h.to_dense();
    for i in 0..m {
        let hv: f64 = (0..m).map(|k| h[i * m + k] * x[k]).sum();
        let jl: f64 = (0..n).map(|k| sys.j.get(k, i) * x[m + k]).sum();
        assert!((hv - jl - r[i]).abs() < 1e-12, "dynamics row {i}");
    }
    (active, separated)
}

#[test]
fn sequential_solvers_satisfy_complementarity_on_contacts() {
    let sys = contacts(Vec::new());
    let r = contact_rhs();
    for nncg in [false, true] {
        let p = SequentialParams { iterations: 5000, precision: 1e-15, ..SequentialParams::default() };
        let mut s = SequentialSolver::with(nncg, p, ResponseKind::default_for(true));
        let x = solve(&mut s, &sys, &r, None);
        let (active, separated) = check_complementarity(&sys, &x, &r, 1e-9);
        assert!(active > 0 && separated > 0, "nncg={nncg}: a mixed contact set is expected ({active} active, {separated} separated)");
    }
    // The bilateral (unprojected) solution has negative multipliers: the projection matters.
    let bilateral = ldlt(&sys, &r);
    assert!(bilateral[9..].iter().any(|&l| l < -1e-6), "{:?}", &bilateral[9..]);
}

#[test]
fn masked_blocks_get_zero_multipliers() {
    let mask = vec![true, true, false, true, true, false];
    let sys = contacts(mask.clone());
    let r = contact_rhs();
    let p = SequentialParams { iterations: 5000, precision: 1e-15, ..SequentialParams::default() };
    let mut s = SequentialSolver::with(false, p, ResponseKind::default_for(true));
    // A warm start with non-zero multipliers on the masked rows.
    let mut x0 = vec![0.0; 15];
    x0[9..].fill(1.0);
    let x = solve(&mut s, &sys, &r, Some(&x0));
    for (k, &on) in mask.iter().enumerate() {
        if !on {
            assert_eq!(x[9 + k], 0.0, "row {k}");
        } else {
            assert!(x[9 + k] >= 0.0);
        }
    }
}

#[test]
fn preconditioned_cg_solves_unconstrained_systems_and_refuses_constraints() {
    let sys = system(61, 10, &[4], &[]);
    let r = rhs(&sys, 6);
    let reference = ldlt(&sys, &r);
    let mut s = KrylovSolver::with(Method::PreconditionedCg, TIGHT, None).with_preconditioner("CompliantJacobiPreconditioner 'p'");
    let x = solve(&mut s, &sys, &r, None);
    assert!(max_diff(&x, &reference) < 1e-9, "{x:?} vs {reference:?}");
    let sys = mixed();
    let mut s = KrylovSolver::with(Method::PreconditionedCg, TIGHT, None).with_preconditioner("CompliantJacobiPreconditioner 'p'");
    s.factor(&sys).unwrap();
    let mut x = vec![0.0; sys.m + sys.n];
    let e = s.solve(&sys, &mut x, &rhs(&sys, 1)).unwrap_err().to_string();
    assert!(e.contains("CompliantJacobiPreconditioner 'p'") && e.contains("unconstrained") && e.contains("4 constraint row"), "{e}");
}
