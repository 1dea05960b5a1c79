//! Krylov KKT solvers (compliant spec §8.4, §8.6): `MinresSolver`, `CgSolver`,
//! `BiCgStabSolver` and `PreconditionedCgSolver`.
//!
//! With a response in the node the solvers work on the Schur complement: the free velocity
//! `v_free = S A⁻¹ Sᵀ r_m` is computed once, the Krylov method solves
//! `(J P A⁻¹ P Jᵀ + C' + δI) λ = r_n − J v_free` starting from the warm-start λ, and
//! `v = v_free + S A⁻¹ Sᵀ Jᵀ λ`. Without one they iterate on the whole vector with the symmetric
//! (indefinite) operator `[[P H P, −P Jᵀ],[−J P, −C' − δI]]` and the right-hand side
//! `[r_m; −r_n]`. δ is 0 for the dynamics and the `damping` argument of the correction pass.
//! Every constraint is bilateral here: projectors and masks are ignored, as in SOFA.

use settee_core::compliant::{AssembledSystem, KktSolver};
use settee_core::{component, Component, InitCtx, SimError, SimResult};
use settee_linalg::CsrMatrix;

use crate::direct::{projected_rows, scatter_free, IterativeSolverData, KktSolverData};
use crate::preconditioner::{find_preconditioner, Jacobi};
use crate::response::{find_response, Factor, ResponseKind};

/// Registers the Krylov KKT solvers.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<KrylovSolver>();
}

/// The Krylov method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Minres,
    Cg,
    BiCgStab,
    /// CG, preconditioned by the node's preconditioner for unconstrained full-system solves.
    PreconditionedCg,
}

/// Iteration bound and thresholds of one solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KrylovParams {
    pub iterations: usize,
    pub precision: f64,
    pub relative: bool,
    pub restart: usize,
}

impl Default for KrylovParams {
    fn default() -> Self {
        KrylovParams { iterations: 10, precision: 1e-3, relative: false, restart: 0 }
    }
}

impl KrylovParams {
    /// The absolute threshold for a system of right-hand side `b`.
    fn threshold(&self, b: &[f64]) -> f64 {
        if self.relative {
            self.precision * norm(b)
        } else {
            self.precision
        }
    }
}

/// A linear operator `y = A x`.
pub type Operator<'a> = dyn FnMut(&[f64], &mut [f64]) -> SimResult + 'a;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// `b − A x`.
fn residual(a: &mut Operator, b: &[f64], x: &[f64]) -> SimResult<Vec<f64>> {
    let mut ax = vec![0.0; b.len()];
    a(x, &mut ax)?;
    Ok(b.iter().zip(&ax).map(|(b, a)| b - a).collect())
}

/// The state of MINRES (Choi 2006): the Lanczos vectors, the last two search directions and
/// the rotation that updates the QR factorization of the tridiagonal matrix.
struct MinresState {
    beta: f64,
    v_prev: Vec<f64>,
    v: Vec<f64>,
    d: Vec<f64>,
    d_prev: Vec<f64>,
    /// Residual norm estimate.
    phi: f64,
    delta_1: f64,
    c: f64,
    s: f64,
    eps: f64,
}

impl MinresState {
    fn new(r: &[f64]) -> MinresState {
        let n = r.len();
        let beta = norm(r);
        let v = if beta > 0.0 { r.iter().map(|x| x / beta).collect() } else { vec![0.0; n] };
        MinresState { beta, v_prev: vec![0.0; n], v, d: vec![0.0; n], d_prev: vec![0.0; n], phi: beta, delta_1: 0.0, c: -1.0, s: 0.0, eps: 0.0 }
    }

    /// One MINRES iteration: a Lanczos step (with a second orthogonalisation against the
    /// current vector), the next Givens rotation, the update of `x`.
    fn step(&mut self, a: &mut Operator, x: &mut [f64]) -> SimResult {
        if self.phi == 0.0 {
            return Ok(());
        }
        let n = x.len();
        let mut p = vec![0.0; n];
        a(&self.v, &mut p)?;
        let alpha = dot(&self.v, &p);
        for ((p, v), w) in p.iter_mut().zip(&self.v).zip(&self.v_prev) {
            *p -= alpha * v + self.beta * w;
        }
        let again = dot(&p, &self.v);
        p.iter_mut().zip(&self.v).for_each(|(p, v)| *p -= again * v);
        let beta = norm(&p);
        if beta > 0.0 {
            p.iter_mut().for_each(|x| *x /= beta);
        }
        self.beta = beta;

        let delta_2 = self.c * self.delta_1 + self.s * alpha;
        let gamma_1 = self.s * self.delta_1 - self.c * alpha;
        let eps_next = self.s * beta;
        let delta_1_next = -self.c * beta;
        let (c, s, gamma_2) = sym_ortho(gamma_1, beta);
        self.c = c;
        self.s = s;
        let tau = c * self.phi;
        self.phi *= s;
        if gamma_2 != 0.0 {
            let d_next: Vec<f64> = (0..n).map(|i| (self.v[i] - delta_2 * self.d[i] - self.eps * self.d_prev[i]) / gamma_2).collect();
            for i in 0..n {
                x[i] += tau * d_next[i];
            }
            self.d_prev = std::mem::replace(&mut self.d, d_next);
            self.v_prev = std::mem::replace(&mut self.v, p);
            self.eps = eps_next;
            self.delta_1 = delta_1_next;
        }
        Ok(())
    }
}

/// The Givens rotation `(c, s)` with `[c s; s −c]·[a; b] = [r; 0]`, r ≥ 0 (Choi's SymOrtho).
fn sym_ortho(a: f64, b: f64) -> (f64, f64, f64) {
    let sign = |x: f64| if x < 0.0 { -1.0 } else { 1.0 };
    if b == 0.0 {
        (if a != 0.0 { sign(a) } else { 1.0 }, 0.0, a.abs())
    } else if a == 0.0 {
        (0.0, sign(b), b.abs())
    } else if b.abs() >= a.abs() {
        let t = a / b;
        let s = sign(b) / (1.0 + t * t).sqrt();
        (s * t, s, b / s)
    } else {
        let t = b / a;
        let c = sign(a) / (1.0 + t * t).sqrt();
        (c, c * t, a / c)
    }
}

/// MINRES from the initial guess `x`: stops when the residual estimate is at most the
/// threshold or after `iterations`. Returns (iterations, residual estimate).
pub fn minres(a: &mut Operator, b: &[f64], x: &mut [f64], p: &KrylovParams) -> SimResult<(usize, f64)> {
    let thr = p.threshold(b);
    let mut st = MinresState::new(&residual(a, b, x)?);
    let mut i = 0;
    while i < p.iterations {
        if st.phi <= thr {
            break;
        }
        if p.restart > 0 && i > 0 && i % p.restart == 0 {
            st = MinresState::new(&residual(a, b, x)?);
        }
        st.step(a, x)?;
        i += 1;
    }
    Ok((i, st.phi))
}

/// Conjugate gradients from `x` (`α = r·p / p·Ap`, `β = ‖r_new‖² / ‖r_old‖²`): stops when
/// ‖r‖ ≤ threshold, after `iterations`, or when `p·Ap = 0`.
pub fn cg(a: &mut Operator, b: &[f64], x: &mut [f64], p: &KrylovParams) -> SimResult<(usize, f64)> {
    let thr = p.threshold(b);
    let n = b.len();
    let mut r = residual(a, b, x)?;
    let mut dir = r.clone();
    let mut rr = dot(&r, &r);
    let mut ap = vec![0.0; n];
    let mut i = 0;
    while i < p.iterations && rr.sqrt() > thr {
        a(&dir, &mut ap)?;
        let pap = dot(&dir, &ap);
        if pap == 0.0 {
            break;
        }
        let alpha = dot(&r, &dir) / pap;
        for k in 0..n {
            x[k] += alpha * dir[k];
            r[k] -= alpha * ap[k];
        }
        let old = rr;
        rr = dot(&r, &r);
        let beta = rr / old;
        for k in 0..n {
            dir[k] = r[k] + beta * dir[k];
        }
        i += 1;
    }
    Ok((i, rr.sqrt()))
}

/// Conjugate gradients preconditioned by `m` (`z = M r`, Fletcher–Reeves `β = r·z / r_old·z_old`):
/// stops when ‖r‖ ≤ threshold, after `iterations`, or when `p·Ap = 0`.
pub fn pcg(a: &mut Operator, m: &dyn Fn(&[f64], &mut [f64]), b: &[f64], x: &mut [f64], p: &KrylovParams) -> SimResult<(usize, f64)> {
    let thr = p.threshold(b);
    let n = b.len();
    let mut r = residual(a, b, x)?;
    let mut z = vec![0.0; n];
    m(&r, &mut z);
    let mut dir = z.clone();
    let mut rz = dot(&r, &z);
    let mut ap = vec![0.0; n];
    let mut i = 0;
    while i < p.iterations && norm(&r) > thr {
        a(&dir, &mut ap)?;
        let pap = dot(&dir, &ap);
        if pap == 0.0 {
            break;
        }
        let alpha = rz / pap;
        for k in 0..n {
            x[k] += alpha * dir[k];
            r[k] -= alpha * ap[k];
        }
        m(&r, &mut z);
        let old = rz;
        rz = dot(&r, &z);
        let beta = rz / old;
        for k in 0..n {
            dir[k] = z[k] + beta * dir[k];
        }
        i += 1;
    }
    Ok((i, norm(&r)))
}

/// BiCGSTAB from `x` (the initial residual is the shadow vector): stops when ‖r‖ ≤ threshold,
/// after `iterations`, or on a breakdown (a zero denominator).
pub fn bicgstab(a: &mut Operator, b: &[f64], x: &mut [f64], p: &KrylovParams) -> SimResult<(usize, f64)> {
    let thr = p.threshold(b);
    let n = b.len();
    let mut r = residual(a, b, x)?;
    let r0 = r.clone();
    let mut dir = r.clone();
    let mut v = vec![0.0; n];
    let mut t = vec![0.0; n];
    let mut rho = dot(&r0, &r);
    let mut phi = norm(&r);
    let mut i = 0;
    while i < p.iterations && phi > thr {
        i += 1;
        a(&dir, &mut v)?;
        let den = dot(&r0, &v);
        if den == 0.0 {
            break;
        }
        let alpha = rho / den;
        let s: Vec<f64> = (0..n).map(|k| r[k] - alpha * v[k]).collect();
        a(&s, &mut t)?;
        let tt = dot(&t, &t);
        if tt == 0.0 {
            break;
        }
        let omega = dot(&t, &s) / tt;
        for k in 0..n {
            x[k] += alpha * dir[k] + omega * s[k];
            r[k] = s[k] - omega * t[k];
        }
        phi = norm(&r);
        let rho_prev = rho;
        rho = dot(&r0, &r);
        if rho_prev == 0.0 || omega == 0.0 {
            break;
        }
        let beta = (rho / rho_prev) * (alpha / omega);
        for k in 0..n {
            dir[k] = r[k] + beta * (dir[k] - omega * v[k]);
        }
    }
    Ok((i, phi))
}

/// A Krylov KKT solver.
#[component(
    roles = [KktSolver],
    inherit = [IterativeSolverData, Self, KktSolverData],
    data = {
        /// MINRES: recompute the true residual every `restart` iterations (0: never)
        restart: Int = "0",
        /// log the iterations and residual (accepted; they are kept as the solver's statistics)
        verbose: Bool = "false",
        /// OpenMP block products in SOFA (accepted, no effect)
        parallel: Bool = "false",
    },
    class(
        name = "MinresSolver", module = "Compliant",
        description = "KKT solver of the Compliant formulation: MINRES on the Schur complement (with a response in the node) or on the full KKT system.",
        create = |_| KrylovSolver::new(Method::Minres),
    ),
    class(
        name = "CgSolver", module = "Compliant",
        description = "KKT solver of the Compliant formulation: conjugate gradients on the Schur complement (with a response) or on the full KKT system.",
        create = |_| KrylovSolver::new(Method::Cg),
    ),
    class(
        name = "BiCgStabSolver", module = "Compliant",
        description = "KKT solver of the Compliant formulation: BiCGSTAB on the Schur complement (with a response) or on the full KKT system.",
        create = |_| KrylovSolver::new(Method::BiCgStab),
    ),
    class(
        name = "PreconditionedCgSolver", module = "Compliant",
        description = "KKT solver of the Compliant formulation: CgSolver with the node's preconditioner on unconstrained systems.",
        create = |_| KrylovSolver::new(Method::PreconditionedCg),
    ),
)]
#[derive(Clone)]
pub struct KrylovSolver {
    method: Method,
    params: KrylovParams,
    /// The response of the node (Schur mode), if any.
    response: Option<Factor>,
    /// The node's preconditioner and its label (`PreconditionedCgSolver` only).
    preconditioner: Option<(Jacobi, String)>,
    /// Free DOFs and `J S` as rows over them (Schur mode).
    free: Vec<usize>,
    js: Vec<Vec<(usize, f64)>>,
    /// `Jᵀ` (KKT mode).
    jt: Option<CsrMatrix>,
    stats: Option<(usize, f64)>,
}

impl KrylovSolver {
    pub fn new(method: Method) -> KrylovSolver {
        KrylovSolver {
            method,
            params: KrylovParams::default(),
            response: None,
            preconditioner: None,
            free: Vec::new(),
            js: Vec::new(),
            jt: None,
            stats: None,
        }
    }

    /// A solver for tests and programmatic use: Schur mode with `response`, KKT mode without.
    pub fn with(method: Method, params: KrylovParams, response: Option<ResponseKind>) -> KrylovSolver {
        let mut s = KrylovSolver::new(method);
        s.params = params;
        s.response = response.map(Factor::new);
        s
    }

    /// Adds a Jacobi preconditioner (`PreconditionedCgSolver`), named `label` in messages.
    pub fn with_preconditioner(mut self, label: &str) -> KrylovSolver {
        self.preconditioner = Some((Jacobi::default(), label.to_string()));
        self
    }

    fn run(&self, a: &mut Operator, b: &[f64], x: &mut [f64]) -> SimResult<(usize, f64)> {
        match self.method {
            Method::Minres => minres(a, b, x, &self.params),
            Method::Cg | Method::PreconditionedCg => cg(a, b, x, &self.params),
            Method::BiCgStab => bicgstab(a, b, x, &self.params),
        }
    }

    /// Schur mode (spec §8.4).
    fn solve_schur(&mut self, sys: &AssembledSystem, x: &mut [f64], rhs: &[f64], damping: f64) -> SimResult {
        let (m, n, nf) = (sys.m, sys.n, self.free.len());
        let resp = self.response.as_ref().ok_or_else(|| SimError::new("KKT solver used before factor"))?;
        let b: Vec<f64> = self.free.iter().map(|&i| rhs[i]).collect();
        let mut v = vec![0.0; nf];
        resp.solve(&b, &mut v)?;
        let mut lambda = x[m..m + n].to_vec();
        if n > 0 {
            let js = &self.js;
            let q: Vec<f64> = (0..n).map(|k| rhs[m + k] - js[k].iter().map(|&(c, w)| w * v[c]).sum::<f64>()).collect();
            let (mut t, mut u) = (vec![0.0; nf], vec![0.0; nf]);
            let mut op = |y: &[f64], out: &mut [f64]| -> SimResult {
                jst_mul(js, y, &mut t);
                resp.solve(&t, &mut u)?;
                for k in 0..n {
                    out[k] = js[k].iter().map(|&(c, w)| w * u[c]).sum::<f64>() + damping * y[k];
                }
                for (k, c, w) in sys.c.iter() {
                    out[k] += w * y[c];
                }
                Ok(())
            };
            self.stats = Some(self.run(&mut op, &q, &mut lambda)?);
            let mut t = vec![0.0; nf];
            jst_mul(js, &lambda, &mut t);
            let mut dv = vec![0.0; nf];
            resp.solve(&t, &mut dv)?;
            v.iter_mut().zip(&dv).for_each(|(a, b)| *a += b);
        } else {
            self.stats = Some((0, 0.0));
        }
        scatter_free(x, m, &self.free, &v);
        x[m..m + n].copy_from_slice(&lambda);
        Ok(())
    }

    /// KKT mode (spec §8.4): the whole vector, fixed DOFs keep their initial value.
    fn solve_kkt(&mut self, sys: &AssembledSystem, x: &mut [f64], rhs: &[f64], damping: f64) -> SimResult {
        let (m, n) = (sys.m, sys.n);
        let mut b = rhs[..m + n].to_vec();
        b[m..].iter_mut().for_each(|v| *v = -*v);
        if let Some((pre, pre_label)) = &self.preconditioner {
            if n > 0 {
                return Err(preconditioned_with_constraints(pre_label, n));
            }
            let mut op = |y: &[f64], out: &mut [f64]| -> SimResult { php_mul(sys, y, out) };
            self.stats = Some(pcg(&mut op, &|r: &[f64], z: &mut [f64]| pre.apply(r, z), &b, &mut x[..m], &self.params)?);
            return Ok(());
        }
        let jt = self.jt.as_ref().ok_or_else(|| SimError::new("KKT solver used before factor"))?;
        let mut px = vec![0.0; m];
        let mut tmp = vec![0.0; m.max(n)];
        let mut op = |y: &[f64], out: &mut [f64]| -> SimResult {
            let (ym, yn) = y.split_at(m);
            let (om, on) = out.split_at_mut(m);
            php_mul(sys, ym, om)?;
            if n > 0 {
                jt.mul_vec(yn, &mut tmp[..m]).map_err(|e| SimError::new(e.to_string()))?;
                for i in 0..m {
                    if sys.free[i] {
                        om[i] -= tmp[i];
                    }
                }
                for i in 0..m {
                    px[i] = if sys.free[i] { ym[i] } else { 0.0 };
                }
                sys.j.mul_vec(&px, on).map_err(|e| SimError::new(e.to_string()))?;
                sys.c.mul_vec(yn, &mut tmp[..n]).map_err(|e| SimError::new(e.to_string()))?;
                for k in 0..n {
                    on[k] = -on[k] - tmp[k] - damping * yn[k];
                }
            }
            Ok(())
        };
        self.stats = Some(self.run(&mut op, &b, &mut x[..m + n])?);
        Ok(())
    }
}

/// `out = (J S)ᵀ y` over the free DOFs.
fn jst_mul(js: &[Vec<(usize, f64)>], y: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for (row, &yk) in js.iter().zip(y) {
        for &(c, w) in row {
            out[c] += w * yk;
        }
    }
}

/// `out = P H P y`.
fn php_mul(sys: &AssembledSystem, y: &[f64], out: &mut [f64]) -> SimResult {
    let py: Vec<f64> = y.iter().zip(&sys.free).map(|(&v, &f)| if f { v } else { 0.0 }).collect();
    sys.h.mul_vec(&py, out).map_err(|e| SimError::new(e.to_string()))?;
    out.iter_mut().zip(&sys.free).for_each(|(o, &f)| {
        if !f {
            *o = 0.0
        }
    });
    Ok(())
}

/// The error of a preconditioned full-system solve that meets constraints (the solver itself
/// is named by the error's subject, its position added by the ODE solver).
fn preconditioned_with_constraints(pre: &str, n: usize) -> SimError {
    SimError::new(format!(
        "the preconditioner {pre} restricts this solver to unconstrained systems (SOFA throws here), and this one has {n} constraint row(s)"
    ))
    .hint("add a response (e.g. <LDLTResponse/>) next to the solver to iterate on the Schur complement, or remove the preconditioner")
}

impl Component for KrylovSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let (it, restart) = (d.get(IterativeSolverData::ITERATIONS), d.get(Self::RESTART));
        let (precision, relative) = (d.get(IterativeSolverData::PRECISION), d.get(IterativeSolverData::RELATIVE));
        if it < 0 || restart < 0 {
            return Err(cx.error(format!("iterations = {it}, restart = {restart}: both must be ≥ 0")));
        }
        self.params = KrylovParams { iterations: it as usize, precision, relative, restart: restart as usize };
        Ok(())
    }

    /// The response and preconditioner are looked up once every component of the node is
    /// initialised (they may come after the solver and read their Data in `init`).
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.response = find_response(cx.scene, cx.node()).map(Factor::new);
        if self.method == Method::PreconditionedCg {
            self.preconditioner = find_preconditioner(cx.scene, cx.node()).map(|label| (Jacobi::default(), label));
        }
        Ok(())
    }
}

impl KktSolver for KrylovSolver {
    fn factor(&mut self, sys: &AssembledSystem) -> SimResult {
        self.jt = None;
        self.stats = None;
        if let Some(resp) = &mut self.response {
            let (a, free) = sys.free_block();
            resp.factor(&a)?;
            self.js = projected_rows(sys, &free);
            self.free = free;
        } else {
            self.jt = Some(sys.j.transpose());
            if let Some((pre, _)) = &mut self.preconditioner {
                pre.compute(sys);
            }
        }
        Ok(())
    }

    fn solve(&mut self, sys: &AssembledSystem, x: &mut [f64], rhs: &[f64]) -> SimResult {
        self.correct(sys, x, rhs, 0.0)
    }

    fn correct(&mut self, sys: &AssembledSystem, x: &mut [f64], rhs: &[f64], damping: f64) -> SimResult {
        if self.response.is_some() {
            self.solve_schur(sys, x, rhs, damping)
        } else {
            self.solve_kkt(sys, x, rhs, damping)
        }
    }

    fn last_stats(&self) -> Option<(usize, f64)> {
        self.stats
    }
}
