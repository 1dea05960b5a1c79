//! The per-spring kernel shared by the spring force fields: force and Jacobian of one linear
//! spring, its `addDForce` product and its matrix blocks (forcefields-mappings spec §2.1).
//!
//! For spring `(a, b, ks, kd, L)` between DOF `a` of the first state and DOF `b` of the second:
//! `u = x2[b] − x1[a]`, `d = |u|`, `û = u/d`, `F = ks·(d − L) + kd·û·(v2[b] − v1[a])`,
//! `f1[a] += F·û`, `f2[b] −= F·û`, and the Jacobian `K_s = (ks − F/d)·ûûᵀ + (F/d)·I` (F includes
//! the damping part) is stored for the products that follow. The arithmetic is written in SOFA's
//! evaluation order so that trajectories match to the last bit.

use settee_core::{ForceIo, Layout, MatrixAccumulator, SimError, SimResult, StateId};

use crate::spring_force_field::{spring_dim, LinearSpring};

/// SpringForceField's activity threshold on the spring length.
pub(crate) const SPRING_MIN_LENGTH: f64 = 1.0e-9;

/// Dimensions of the positional part a spring acts on, and the length below which a spring is
/// ignored.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SpringKernel {
    /// Positional dimension N.
    pub n: usize,
    /// Coordinate and derivative sizes of the state's elements.
    pub cs: usize,
    pub ds: usize,
    /// A spring acts only when strictly longer than this.
    pub min_length: f64,
}

impl SpringKernel {
    pub fn new(layout: Layout, min_length: f64) -> SpringKernel {
        SpringKernel { n: spring_dim(layout), cs: layout.coord_size(), ds: layout.deriv_size(), min_length }
    }

    /// Number of reals of one stored Jacobian.
    pub fn nn(&self) -> usize {
        self.n * self.n
    }

    /// Checks that every spring's ends are DOFs of the states (`n1`, `n2` DOFs).
    pub fn check_bounds<'a>(&self, springs: impl IntoIterator<Item = &'a LinearSpring>, n1: usize, n2: usize) -> SimResult {
        for (i, s) in springs.into_iter().enumerate() {
            if s.m1 >= n1 || s.m2 >= n2 {
                return Err(SimError::new(format!("spring {i} ({} {}) refers to a DOF beyond the states' sizes ({n1} and {n2} DOFs)", s.m1, s.m2)));
            }
        }
        Ok(())
    }

    /// Adds the force of `s` (first end in `io` entry 0, second end in entry `j2`) and writes its
    /// N×N Jacobian into `m` (zero when the spring does not act).
    pub fn add_force(&self, io: &mut ForceIo, j2: usize, s: &LinearSpring, m: &mut [f64]) {
        let (n, cs, ds) = (self.n, self.cs, self.ds);
        let mut u = [0.0f64; 6];
        let mut force = [0.0f64; 6];
        let (a, b) = (s.m1, s.m2);
        {
            let (x1, x2) = (io.x[0], io.x[j2]);
            for c in 0..n {
                u[c] = x2[b * cs + c] - x1[a * cs + c];
            }
        }
        let mut norm2 = u[0] * u[0];
        for c in &u[1..n] {
            norm2 += c * c;
        }
        let d = norm2.sqrt();
        if !(s.enabled && d > self.min_length && (!s.elongation_only || d > s.initpos)) {
            m.fill(0.0);
            return;
        }
        let inverse_length = 1.0 / d;
        for c in u.iter_mut().take(n) {
            *c *= inverse_length;
        }
        let elongation = d - s.initpos;
        // Relative velocity along the spring (no velocity vector: zero).
        let vel = |v: &[f64], k: usize, c: usize| v.get(k * ds + c).copied().unwrap_or(0.0);
        let (v1, v2): (&[f64], &[f64]) = match io.v.len() {
            0 => (&[], &[]),
            _ => (io.v[0], io.v[j2]),
        };
        let mut rel = [0.0f64; 6];
        for (c, r) in rel.iter_mut().enumerate().take(n) {
            *r = vel(v2, b, c) - vel(v1, a, c);
        }
        let mut elongation_velocity = u[0] * rel[0];
        for (uc, rc) in u[1..n].iter().zip(&rel[1..n]) {
            elongation_velocity += uc * rc;
        }
        let intensity = s.ks * elongation + s.kd * elongation_velocity;
        for c in 0..n {
            force[c] = u[c] * intensity;
        }
        let tgt = intensity * inverse_length;
        for j in 0..n {
            for k in 0..n {
                m[j * n + k] = (s.ks - tgt) * u[j] * u[k];
            }
            m[j * n + j] += tgt;
        }
        {
            let f1 = &mut io.f[0];
            for c in 0..n {
                f1[a * ds + c] += force[c];
            }
        }
        let f2 = &mut io.f[j2];
        for c in 0..n {
            f2[b * ds + c] += -force[c];
        }
    }

    /// For every spring, `g = (K_s·δ)·kFactor` with `δ = dx2[b] − dx1[a]`; `df1[a] += g`,
    /// `df2[b] −= g`; `dfdx` holds the springs' stiffness blocks one after the other. The layout
    /// is matched and the state vectors are looked up once for the whole loop (it runs once per
    /// CG iteration); the common layouts get a copy with compile-time sizes (unrolled loops,
    /// same operations in the same order, same bits).
    pub fn add_dforce_all(&self, io: &mut ForceIo, j2: usize, springs: &[LinearSpring], dfdx: &[f64], k_factor: f64) {
        match (self.n, self.ds) {
            (3, 3) => add_dforce_loop::<3, 3>(io, j2, springs, dfdx, k_factor),
            (2, 2) => add_dforce_loop::<2, 2>(io, j2, springs, dfdx, k_factor),
            (1, 1) => add_dforce_loop::<1, 1>(io, j2, springs, dfdx, k_factor),
            _ => {
                for (s, m) in springs.iter().zip(dfdx.chunks_exact(self.nn())) {
                    self.add_dforce_any(io, j2, s, m, k_factor);
                }
            }
        }
    }

    fn add_dforce_any(&self, io: &mut ForceIo, j2: usize, s: &LinearSpring, m: &[f64], k_factor: f64) {
        let (n, ds) = (self.n, self.ds);
        let mut dx = [0.0f64; 6];
        let mut g = [0.0f64; 6];
        let (a, b) = (s.m1, s.m2);
        {
            let (dx1, dx2) = (io.x[0], io.x[j2]);
            for c in 0..n {
                dx[c] = dx2[b * ds + c] - dx1[a * ds + c];
            }
        }
        // (K_s · δ) · kFactor, rows accumulated left to right.
        for j in 0..n {
            let row = &m[j * n..(j + 1) * n];
            let mut r = row[0] * dx[0];
            for k in 1..n {
                r += row[k] * dx[k];
            }
            g[j] = r * k_factor;
        }
        {
            let df1 = &mut io.f[0];
            for c in 0..n {
                df1[a * ds + c] += g[c];
            }
        }
        let df2 = &mut io.f[j2];
        for c in 0..n {
            df2[b * ds + c] -= g[c];
        }
    }

    /// Adds the blocks of `s` scaled by `kFactor`: `∂f1[a]/∂x1[a] = −K_s`, `∂f1[a]/∂x2[b] = +K_s`,
    /// `∂f2[b]/∂x1[a] = +K_s`, `∂f2[b]/∂x2[b] = −K_s`.
    pub fn add_stiffness(&self, acc: &mut MatrixAccumulator, s1: StateId, s2: StateId, s: &LinearSpring, m: &[f64], k_factor: f64) {
        let (n, ds) = (self.n, self.ds);
        let (p1, p2) = (ds * s.m1, ds * s.m2);
        if s1 == s2 {
            for i in 0..n {
                for j in 0..n {
                    let k = m[i * n + j] * k_factor;
                    acc.add(s1, p1 + i, s1, p1 + j, -k);
                    acc.add(s1, p1 + i, s1, p2 + j, k);
                    acc.add(s1, p2 + i, s1, p1 + j, k);
                    acc.add(s1, p2 + i, s1, p2 + j, -k);
                }
            }
        } else {
            let blocks = [(s1, p1, s1, p1, -1.0), (s1, p1, s2, p2, 1.0), (s2, p2, s1, p1, 1.0), (s2, p2, s2, p2, -1.0)];
            for (si, pi, sj, pj, sign) in blocks {
                for i in 0..n {
                    for j in 0..n {
                        let k = m[i * n + j] * k_factor;
                        acc.add(si, pi + i, sj, pj + j, if sign < 0.0 { -k } else { k });
                    }
                }
            }
        }
    }
}

/// The loop of [`SpringKernel::add_dforce_all`] for one layout (`N` coordinates per point,
/// `DS` numbers per point in the state vectors).
fn add_dforce_loop<const N: usize, const DS: usize>(io: &mut ForceIo, j2: usize, springs: &[LinearSpring], dfdx: &[f64], k_factor: f64) {
    let spring = |x1: &[f64], x2: &[f64], s: &LinearSpring, m: &[f64]| -> [f64; N] {
        let (a, b) = (s.m1, s.m2);
        let (dx1, dx2) = (&x1[a * DS..a * DS + N], &x2[b * DS..b * DS + N]);
        let dx: [f64; N] = std::array::from_fn(|c| dx2[c] - dx1[c]);
        let m = &m[..N * N];
        std::array::from_fn(|j| {
            let row = &m[j * N..(j + 1) * N];
            let mut r = row[0] * dx[0];
            for k in 1..N {
                r += row[k] * dx[k];
            }
            r * k_factor
        })
    };
    let blocks = dfdx.chunks_exact(N * N);
    if j2 == 0 {
        let x = io.x[0];
        let f = &mut *io.f[0];
        for (s, m) in springs.iter().zip(blocks) {
            let g = spring(x, x, s, m);
            for (fc, gc) in f[s.m1 * DS..s.m1 * DS + N].iter_mut().zip(&g) {
                *fc += gc;
            }
            for (fc, gc) in f[s.m2 * DS..s.m2 * DS + N].iter_mut().zip(&g) {
                *fc -= gc;
            }
        }
    } else {
        let (x1, x2) = (io.x[0], io.x[j2]);
        let (head, tail) = io.f.split_at_mut(j2);
        let (f1, f2) = (&mut *head[0], &mut *tail[0]);
        for (s, m) in springs.iter().zip(blocks) {
            let g = spring(x1, x2, s, m);
            for (fc, gc) in f1[s.m1 * DS..s.m1 * DS + N].iter_mut().zip(&g) {
                *fc += gc;
            }
            for (fc, gc) in f2[s.m2 * DS..s.m2 * DS + N].iter_mut().zip(&g) {
                *fc -= gc;
            }
        }
    }
}
