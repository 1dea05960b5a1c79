//! Resolution objects: the local law of one block of constraint rows (SOFA's
//! `ConstraintResolution` subclasses, lagrangian-solvers spec §4.2).
//!
//! Every object works in the incremental form the solvers expect: `d[line..line+nb]` is the
//! block's current violation (its own `λ` included) and the object updates
//! `lambda[line..line+nb]` in place. The arithmetic follows SOFA's expression order
//! (`MODEL/UnilateralConstraintResolution.h`, `MODEL/UnilateralLagrangianConstraint.cpp`,
//! `MODEL/BilateralConstraintResolution.h`) because the solvers' results are compared bit for bit.
//!
//! SOFA persists warm starts through raw pointers written in `store`; here a law passes the
//! warm start to the constructor and receives the final multipliers in its own
//! `ConstraintLaw::store_lambda`.
#![allow(clippy::needless_range_loop)] // block loops index W, d and λ together, as SOFA writes them

use settee_core::constraint::{ConstraintResolution, DenseMatrix, ResolutionKind};

/// Frictionless contact row (SOFA's `UnilateralConstraintResolution`):
/// `λ −= d / W_ll`, then `λ := max(λ, 0)`.
#[derive(Clone, Debug, Default)]
pub struct UnilateralResolution;

impl UnilateralResolution {
    pub fn new() -> UnilateralResolution {
        UnilateralResolution
    }
}

impl ConstraintResolution for UnilateralResolution {
    fn nb_lines(&self) -> usize {
        1
    }
    fn describe(&self) -> ResolutionKind {
        ResolutionKind::Unilateral
    }
    fn resolution(&mut self, line: usize, w: &DenseMatrix, d: &mut [f64], lambda: &mut [f64], _dfree: &[f64]) {
        lambda[line] -= d[line] / w.get(line, line);
        if lambda[line] < 0.0 {
            lambda[line] = 0.0;
        }
    }
}

/// Frictional contact, rows (normal, tangent 1, tangent 2) (SOFA's
/// `UnilateralConstraintResolutionWithFriction`): a normal step, then, if the contact stays
/// closed, a tangential step with the averaged tangential compliance `(W_tt + W_ss)/2` and a
/// radial projection onto the Coulomb cone.
#[derive(Clone, Debug)]
pub struct UnilateralWithFrictionResolution {
    pub mu: f64,
    /// SOFA's `customTolerance` of the contact constraint (0: none).
    pub tolerance: f64,
    /// Warm start written by `init` (contacts created by the collision response have none).
    pub initial: Option<[f64; 3]>,
    /// `W_nn, W_nt, W_ns, W_tt, W_ts, W_ss` cached by `init`.
    w: [f64; 6],
}

impl UnilateralWithFrictionResolution {
    pub fn new(mu: f64) -> UnilateralWithFrictionResolution {
        UnilateralWithFrictionResolution { mu, tolerance: 0.0, initial: None, w: [0.0; 6] }
    }
    pub fn with_tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }
    pub fn with_initial(mut self, initial: [f64; 3]) -> Self {
        self.initial = Some(initial);
        self
    }
}

impl ConstraintResolution for UnilateralWithFrictionResolution {
    fn nb_lines(&self) -> usize {
        3
    }
    fn describe(&self) -> ResolutionKind {
        ResolutionKind::Friction { mu: self.mu }
    }
    fn tolerance(&self) -> f64 {
        self.tolerance
    }
    fn init(&mut self, line: usize, w: &DenseMatrix, lambda: &mut [f64]) {
        self.w = [
            w.get(line, line),
            w.get(line, line + 1),
            w.get(line, line + 2),
            w.get(line + 1, line + 1),
            w.get(line + 1, line + 2),
            w.get(line + 2, line + 2),
        ];
        if let Some(f) = self.initial {
            lambda[line..line + 3].copy_from_slice(&f);
        }
    }
    fn resolution(&mut self, line: usize, _w: &DenseMatrix, d: &mut [f64], lambda: &mut [f64], _dfree: &[f64]) {
        let w = &self.w;
        let f0 = lambda[line];
        lambda[line] -= d[line] / w[0];
        if lambda[line] < 0.0 {
            lambda[line] = 0.0;
            lambda[line + 1] = 0.0;
            lambda[line + 2] = 0.0;
            return;
        }
        // The tangential violations see the change of the normal force (SOFA uses the first
        // row of the block, W_nt and W_ns, for both).
        d[line + 1] += w[1] * (lambda[line] - f0);
        d[line + 2] += w[2] * (lambda[line] - f0);
        lambda[line + 1] -= 2.0 * d[line + 1] / (w[3] + w[5]);
        lambda[line + 2] -= 2.0 * d[line + 2] / (w[3] + w[5]);
        let norm_ft = (lambda[line + 1] * lambda[line + 1] + lambda[line + 2] * lambda[line + 2]).sqrt();
        let fn_ = self.mu * lambda[line];
        if norm_ft > fn_ {
            let factor = fn_ / norm_ft;
            lambda[line + 1] *= factor;
            lambda[line + 2] *= factor;
        }
    }
}

/// One bilateral row (SOFA's `BilateralConstraintResolution`): `λ −= d / W_ll`; `init` writes
/// the warm start when one is given.
#[derive(Clone, Debug, Default)]
pub struct BilateralResolution {
    pub initial: Option<f64>,
}

impl BilateralResolution {
    pub fn new(initial: Option<f64>) -> BilateralResolution {
        BilateralResolution { initial }
    }
}

impl ConstraintResolution for BilateralResolution {
    fn nb_lines(&self) -> usize {
        1
    }
    fn describe(&self) -> ResolutionKind {
        ResolutionKind::Bilateral
    }
    fn init(&mut self, line: usize, _w: &DenseMatrix, lambda: &mut [f64]) {
        if let Some(f) = self.initial {
            lambda[line] = f;
        }
    }
    fn resolution(&mut self, line: usize, w: &DenseMatrix, d: &mut [f64], lambda: &mut [f64], _dfree: &[f64]) {
        lambda[line] -= d[line] / w.get(line, line);
    }
}

/// SOFA's `determinant(Mat<3,3>)`, same term order.
fn det3(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * m[1][1] * m[2][2] + m[1][0] * m[2][1] * m[0][2] + m[2][0] * m[0][1] * m[1][2]
        - m[0][0] * m[2][1] * m[1][2]
        - m[1][0] * m[0][1] * m[2][2]
        - m[2][0] * m[1][1] * m[0][2]
}

/// SOFA's `invertMatrix(Mat<3,3>)`: cofactors over the determinant; `None` when
/// `|det| ≤ ε_machine`.
pub fn invert3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let det = det3(m);
    if det.abs() <= f64::EPSILON {
        return None;
    }
    let mut r = [[0.0; 3]; 3];
    r[0][0] = (m[1][1] * m[2][2] - m[2][1] * m[1][2]) / det;
    r[1][0] = (m[1][2] * m[2][0] - m[2][2] * m[1][0]) / det;
    r[2][0] = (m[1][0] * m[2][1] - m[2][0] * m[1][1]) / det;
    r[0][1] = (m[2][1] * m[0][2] - m[0][1] * m[2][2]) / det;
    r[1][1] = (m[2][2] * m[0][0] - m[0][2] * m[2][0]) / det;
    r[2][1] = (m[2][0] * m[0][1] - m[0][0] * m[2][1]) / det;
    r[0][2] = (m[0][1] * m[1][2] - m[1][1] * m[0][2]) / det;
    r[1][2] = (m[0][2] * m[1][0] - m[1][2] * m[0][0]) / det;
    r[2][2] = (m[0][0] * m[1][1] - m[1][0] * m[0][1]) / det;
    Some(r)
}

/// A bilateral point, three rows (SOFA's `BilateralConstraintResolution3Dof`):
/// `λ_b −= load · W_bb⁻¹ d_b`, with the exact 3×3 inverse computed in `init`. A singular block
/// (|det| ≤ ε) leaves the inverse at zero, as SOFA's release build does (its assert is off and
/// the fresh matrix is zero): the block then never moves.
#[derive(Clone, Debug)]
pub struct Bilateral3DofResolution {
    pub initial: Option<[f64; 3]>,
    pub load: f64,
    inv_w: [[f64; 3]; 3],
}

impl Bilateral3DofResolution {
    pub fn new(initial: Option<[f64; 3]>) -> Bilateral3DofResolution {
        Bilateral3DofResolution { initial, load: 1.0, inv_w: [[0.0; 3]; 3] }
    }
    pub fn with_load(initial: Option<[f64; 3]>, load: f64) -> Bilateral3DofResolution {
        Bilateral3DofResolution { initial, load, inv_w: [[0.0; 3]; 3] }
    }
}

impl ConstraintResolution for Bilateral3DofResolution {
    fn nb_lines(&self) -> usize {
        3
    }
    fn describe(&self) -> ResolutionKind {
        ResolutionKind::Bilateral
    }
    fn init(&mut self, line: usize, w: &DenseMatrix, lambda: &mut [f64]) {
        let mut m = [[0.0; 3]; 3];
        for (i, row) in m.iter_mut().enumerate() {
            for (j, e) in row.iter_mut().enumerate() {
                *e = w.get(line + i, line + j);
            }
        }
        if let Some(inv) = invert3(&m) {
            self.inv_w = inv;
        }
        if let Some(f) = self.initial {
            lambda[line..line + 3].copy_from_slice(&f);
        }
    }
    fn resolution(&mut self, line: usize, _w: &DenseMatrix, d: &mut [f64], lambda: &mut [f64], _dfree: &[f64]) {
        for i in 0..3 {
            for j in 0..3 {
                lambda[line + i] -= d[line + j] * self.inv_w[i][j] * self.load;
            }
        }
    }
}

/// A block of `N` bilateral rows solved exactly (SOFA's `BilateralConstraintResolutionNDof`):
/// `λ_b −= W_bb⁻¹ d_b` with an LDLᵀ factorisation of the diagonal block computed in `init`.
///
/// The factorisation follows Eigen's `LDLT` (diagonal pivoting on the largest remaining
/// diagonal entry, zero pivots give a zero component of the solution). Eigen vectorises its
/// inner products; this code sums in index order, so results may differ from SOFA's in the
/// last bits.
#[derive(Clone, Debug)]
pub struct BilateralNDofResolution {
    n: usize,
    ldlt: Ldlt,
}

impl BilateralNDofResolution {
    pub fn new(n: usize) -> BilateralNDofResolution {
        BilateralNDofResolution { n, ldlt: Ldlt::default() }
    }
}

impl ConstraintResolution for BilateralNDofResolution {
    fn nb_lines(&self) -> usize {
        self.n
    }
    fn describe(&self) -> ResolutionKind {
        ResolutionKind::Bilateral
    }
    fn init(&mut self, line: usize, w: &DenseMatrix, _lambda: &mut [f64]) {
        let n = self.n;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i * n..(i + 1) * n].copy_from_slice(&w.row(line + i)[line..line + n]);
        }
        self.ldlt = Ldlt::compute(n, a);
    }
    fn resolution(&mut self, line: usize, _w: &DenseMatrix, d: &mut [f64], lambda: &mut [f64], _dfree: &[f64]) {
        let n = self.n;
        let x = self.ldlt.solve(&d[line..line + n]);
        for (l, xi) in lambda[line..line + n].iter_mut().zip(x) {
            *l -= xi;
        }
    }
}

/// Pivoted LDLᵀ of a symmetric matrix as Eigen computes it (lower triangle used, row-major
/// storage here).
#[derive(Clone, Debug, Default)]
pub struct Ldlt {
    n: usize,
    /// Strictly lower part holds L (unit diagonal implied), the diagonal holds D.
    m: Vec<f64>,
    transpositions: Vec<usize>,
}

impl Ldlt {
    /// Factorises the `n × n` row-major symmetric matrix `a` (only its lower triangle is read).
    pub fn compute(n: usize, mut a: Vec<f64>) -> Ldlt {
        let at = |i: usize, j: usize| i * n + j;
        let mut transpositions = vec![0usize; n];
        let mut temp = vec![0.0; n];
        for k in 0..n {
            // Largest remaining diagonal magnitude (first one on ties, as Eigen's maxCoeff).
            let mut index = k;
            let mut biggest = a[at(k, k)].abs();
            for i in k + 1..n {
                let v = a[at(i, i)].abs();
                if v > biggest {
                    biggest = v;
                    index = i;
                }
            }
            transpositions[k] = index;
            if k != index {
                for j in 0..k {
                    a.swap(at(k, j), at(index, j));
                }
                for i in index + 1..n {
                    a.swap(at(i, k), at(i, index));
                }
                a.swap(at(k, k), at(index, index));
                for i in k + 1..index {
                    let tmp = a[at(i, k)];
                    a[at(i, k)] = a[at(index, i)];
                    a[at(index, i)] = tmp;
                }
            }
            if k > 0 {
                for j in 0..k {
                    temp[j] = a[at(j, j)] * a[at(k, j)];
                }
                let mut s = 0.0;
                for j in 0..k {
                    s += a[at(k, j)] * temp[j];
                }
                a[at(k, k)] -= s;
                for i in k + 1..n {
                    let mut s = 0.0;
                    for j in 0..k {
                        s += a[at(i, j)] * temp[j];
                    }
                    a[at(i, k)] -= s;
                }
            }
            let akk = a[at(k, k)];
            if k == 0 && akk.abs() <= 0.0 {
                // The whole diagonal is zero: nothing to factorise (Eigen stops here).
                for (j, t) in transpositions.iter_mut().enumerate() {
                    *t = j;
                }
                break;
            }
            if akk.abs() > 0.0 {
                for i in k + 1..n {
                    a[at(i, k)] /= akk;
                }
            }
        }
        Ldlt { n, m: a, transpositions }
    }

    /// Solves `A x = b` (pseudo-inverse of D: zero pivots give zero components).
    pub fn solve(&self, b: &[f64]) -> Vec<f64> {
        let n = self.n;
        let at = |i: usize, j: usize| i * n + j;
        let mut x = b.to_vec();
        for k in 0..n {
            x.swap(k, self.transpositions[k]);
        }
        // L y = P b, column by column.
        for j in 0..n {
            let xj = x[j];
            for i in j + 1..n {
                x[i] -= self.m[at(i, j)] * xj;
            }
        }
        for (i, xi) in x.iter_mut().enumerate() {
            let dii = self.m[at(i, i)];
            if dii.abs() > f64::MIN_POSITIVE {
                *xi /= dii;
            } else {
                *xi = 0.0;
            }
        }
        // Lᵀ z = y, row by row from the bottom.
        for i in (0..n).rev() {
            let mut s = 0.0;
            for j in i + 1..n {
                s += self.m[at(j, i)] * x[j];
            }
            x[i] -= s;
        }
        for k in (0..n).rev() {
            x.swap(k, self.transpositions[k]);
        }
        x
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The `n×n` matrix of the row-major values `v` (the unit tests' hand-written W).
    pub(crate) fn mat(n: usize, v: &[f64]) -> DenseMatrix {
        DenseMatrix { n, data: v.to_vec() }
    }

    #[test]
    fn unilateral_clamps() {
        let w = mat(1, &[2.0]);
        let mut l = [0.0];
        let mut d = [-4.0];
        UnilateralResolution.resolution(0, &w, &mut d, &mut l, &[-4.0]);
        assert_eq!(l[0], 2.0);
        let mut d = [6.0];
        UnilateralResolution.resolution(0, &w, &mut d, &mut l, &[6.0]);
        assert_eq!(l[0], 0.0);
    }

    #[test]
    fn bilateral3_solves_block_exactly() {
        let w = mat(3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]);
        let mut r = Bilateral3DofResolution::new(Some([1.0, 2.0, 3.0]));
        let mut l = [0.0; 3];
        r.init(0, &w, &mut l);
        assert_eq!(l, [1.0, 2.0, 3.0]);
        let dfree = [1.0, -2.0, 0.5];
        let mut d = [0.0; 3];
        for i in 0..3 {
            d[i] = dfree[i] + (0..3).map(|k| w.get(i, k) * l[k]).sum::<f64>();
        }
        r.resolution(0, &w, &mut d, &mut l, &dfree);
        for i in 0..3 {
            let di = dfree[i] + (0..3).map(|k| w.get(i, k) * l[k]).sum::<f64>();
            assert!(di.abs() < 1e-13, "{di}");
        }
    }

    #[test]
    fn ldlt_solves_spd_and_pivots() {
        let n = 4;
        let a = [4.0, 1.0, 0.0, 0.5, 1.0, 9.0, 2.0, 0.0, 0.0, 2.0, 6.0, 1.0, 0.5, 0.0, 1.0, 3.0];
        let f = Ldlt::compute(n, a.to_vec());
        assert_eq!(f.transpositions[0], 1); // 9 is the largest diagonal entry
        let b = [1.0, -1.0, 2.0, 0.25];
        let x = f.solve(&b);
        for i in 0..n {
            let r: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum::<f64>() - b[i];
            assert!(r.abs() < 1e-13, "{r}");
        }
    }

    #[test]
    fn ldlt_singular_gives_pseudo_solution_without_nan() {
        // Rank one: [1 1; 1 1].
        let f = Ldlt::compute(2, vec![1.0, 1.0, 1.0, 1.0]);
        let x = f.solve(&[2.0, 2.0]);
        assert!(x.iter().all(|v| v.is_finite()));
        assert!((x[0] + x[1] - 2.0).abs() < 1e-14);
    }

    #[test]
    fn friction_sticks_inside_cone_and_slides_on_it() {
        let w = mat(3, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        // Penetration 1, tangential violation 0.3: stick (|λt| = 0.3 ≤ 0.5·1).
        let mut r = UnilateralWithFrictionResolution::new(0.5);
        let mut l = [0.0; 3];
        r.init(0, &w, &mut l);
        let mut d = [-1.0, 0.3, 0.0];
        r.resolution(0, &w, &mut d, &mut l, &[-1.0, 0.3, 0.0]);
        assert_eq!(l, [1.0, -0.3, 0.0]);
        // Tangential violation 2: slide, λt on the cone.
        let mut l = [0.0; 3];
        let mut d = [-1.0, 2.0, 0.0];
        r.resolution(0, &w, &mut d, &mut l, &[-1.0, 2.0, 0.0]);
        assert_eq!(l, [1.0, -0.5, 0.0]);
        // Separation: all zero.
        let mut l = [0.3, 0.1, 0.1];
        let mut d = [1.0, 2.0, 0.0];
        r.resolution(0, &w, &mut d, &mut l, &[1.0, 2.0, 0.0]);
        assert_eq!(l, [0.0; 3]);
    }
}
