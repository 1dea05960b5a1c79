//! `BTDLinearSolver` (template `BTDMatrix6d`): the block Thomas algorithm for block-tridiagonal
//! systems with 6×6 blocks — a chain of Rigid3 beams, each node coupled to its neighbours only.
//!
//! Every step the system `mM + bB + kK` is assembled as the other assembled solvers do, its
//! entries are stored as SOFA's `BTDMatrix` stores them (three blocks per block row; an entry
//! outside the band is dropped or lands in an earlier block, see [`BtdMatrix`]), the rows and
//! columns of fixed DOFs are cleared there, then
//!
//! ```text
//! α₀⁻¹ = A₀⁻¹,  λ₀ = α₀⁻¹ C₀,   αᵢ⁻¹ = (Aᵢ − Bᵢ λᵢ₋₁)⁻¹,  λᵢ = αᵢ⁻¹ Cᵢ
//! yᵢ = αᵢ⁻¹ (bᵢ − Bᵢ yᵢ₋₁),   xᵢ = yᵢ − λᵢ xᵢ₊₁
//! ```
//!
//! with `Aᵢ`, `Bᵢ`, `Cᵢ` the diagonal, lower and upper blocks of block row `i`. A block whose
//! rows have no significant entry right of the diagonal is inverted as a diagonal matrix; the
//! others by Gauss–Jordan elimination with full pivoting (SOFA's generic `invertMatrix`), with
//! every product and sum in SOFA's order.

// Dense 3×3, 6×6 and 12×12 block arithmetic is written with explicit indices, as the formulas.
#![allow(clippy::needless_range_loop)]

use settee_core::component::LinearSolver;
use settee_core::mechanics::{self as mech, AssemblyOptions, ConstraintJacobian, DenseMatrix, MechScope};
use settee_core::role::LinearSystem;
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimResult, VecId};
use settee_linalg::CsrMatrix;

use crate::common::{step_error, step_warning, AssembledSystem, MatrixSolverData};

/// Block size of `BTDMatrix6d`.
pub const BS: usize = 6;

/// A 6×6 block, row-major.
pub type Block = [[f64; BS]; BS];
type V6 = [f64; BS];

const ZERO: Block = [[0.0; BS]; BS];

/// `a·b` with the sums over `k` in increasing order.
pub fn block_mul(a: &Block, b: &Block) -> Block {
    let mut r = ZERO;
    for i in 0..BS {
        for k in 0..BS {
            let aik = a[i][k];
            for j in 0..BS {
                r[i][j] += aik * b[k][j];
            }
        }
    }
    r
}

fn block_sub(a: &Block, b: &Block) -> Block {
    let mut r = ZERO;
    for i in 0..BS {
        for j in 0..BS {
            r[i][j] = a[i][j] - b[i][j];
        }
    }
    r
}

fn block_vec(a: &Block, v: &V6) -> V6 {
    let mut r = [0.0; BS];
    for (ri, row) in r.iter_mut().zip(a) {
        let mut s = row[0] * v[0];
        for j in 1..BS {
            s += row[j] * v[j];
        }
        *ri = s;
    }
    r
}

/// Gauss–Jordan inversion with full pivoting (SOFA's generic `invertMatrix`); `None` when a
/// pivot is (numerically) zero.
pub fn invert_full_pivot(from: &Block) -> Option<Block> {
    let mut m1 = *from;
    let mut m2 = ZERO;
    for (i, row) in m2.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    let mut r = [0usize; BS];
    let mut c = [0usize; BS];
    let mut row_used = [false; BS];
    let mut col_used = [false; BS];
    for k in 0..BS {
        let mut pivot = 0.0f64;
        for i in 0..BS {
            if row_used[i] {
                continue;
            }
            for j in 0..BS {
                if col_used[j] {
                    continue;
                }
                let t = m1[i][j].abs();
                if t > pivot {
                    pivot = t;
                    r[k] = i;
                    c[k] = j;
                }
            }
        }
        if pivot.abs() <= f64::EPSILON {
            return None;
        }
        row_used[r[k]] = true;
        col_used[c[k]] = true;
        let pivot = m1[r[k]][c[k]];
        for v in m1[r[k]].iter_mut() {
            *v /= pivot;
        }
        m1[r[k]][c[k]] = 1.0;
        for v in m2[r[k]].iter_mut() {
            *v /= pivot;
        }
        for i in 0..BS {
            if i == r[k] {
                continue;
            }
            let f = m1[i][c[k]];
            let (pr1, pr2) = (m1[r[k]], m2[r[k]]);
            for j in 0..BS {
                m1[i][j] -= pr1[j] * f;
            }
            m1[i][c[k]] = 0.0;
            for j in 0..BS {
                m2[i][j] -= pr2[j] * f;
            }
        }
    }
    let mut perm = [0usize; BS];
    for (i, p) in perm.iter_mut().enumerate() {
        for j in 0..BS {
            if c[j] == i {
                *p = r[j];
            }
        }
    }
    let mut dest = ZERO;
    for i in 0..BS {
        dest[i] = m2[perm[i]];
    }
    Some(dest)
}

/// SOFA's block inversion: leading rows whose entries right of the diagonal are negligible
/// (`|mᵢⱼ| ≤ 1e-10·mᵢᵢ`) are inverted as diagonal; as soon as one is not, the whole block is
/// inverted by [`invert_full_pivot`].
pub fn invert_block(m: &Block) -> Option<Block> {
    let mut inv = ZERO;
    let mut i0 = 0;
    while i0 < BS {
        let eps = m[i0][i0] * 1.0e-10;
        let mut j0 = i0 + 1;
        while j0 < BS && m[i0][j0].abs() <= eps {
            j0 += 1;
        }
        if j0 == BS {
            inv[i0][i0] = 1.0 / m[i0][i0];
            i0 += 1;
        } else {
            break;
        }
    }
    if i0 < BS {
        return invert_full_pivot(m);
    }
    if inv.iter().flatten().any(|v| !v.is_finite()) {
        return None;
    }
    Some(inv)
}

/// The factorisation of a block-tridiagonal matrix.
#[derive(Clone, Debug, Default)]
pub struct BtdFactor {
    pub alpha_inv: Vec<Block>,
    pub lambda: Vec<Block>,
    /// Lower blocks `Bᵢ` (`B₀` unused).
    pub lower: Vec<Block>,
}

/// SOFA's `BTDMatrix<6>` storage: three blocks per block row, `data[3·bi + (bj − bi + 1)]` for
/// block `(bi, bj)`. SOFA computes that index without checking that `bj` lies in the band: an
/// entry right of the upper block is dropped, but one left of the lower block
/// (`bj < bi − 1`) lands in an earlier block of the array — block `(bi, bj)` is added to the
/// `(i mod 6, j mod 6)` entry of `data[2·bi + bj + 1]` (`BTDMatrix.inl`, `add`). Entries whose
/// index falls outside the array are dropped here (SOFA writes out of bounds).
#[derive(Clone, Debug)]
pub struct BtdMatrix {
    nb: usize,
    data: Vec<Block>,
    /// Entries stored outside their own block (left of the band) and entries dropped.
    pub aliased: usize,
    pub dropped: usize,
}

impl BtdMatrix {
    /// A zero matrix of `nb` block rows.
    pub fn new(nb: usize) -> BtdMatrix {
        BtdMatrix { nb, data: vec![ZERO; 3 * nb], aliased: 0, dropped: 0 }
    }

    /// Where entry `(i, j)` is stored: `(array index, row, column)` in SOFA's layout.
    fn slot(&self, i: usize, j: usize) -> Option<(usize, usize, usize)> {
        let (bi, bj) = ((i / BS) as i64, (j / BS) as i64);
        let bindex = bj - bi + 1;
        if bindex >= 3 {
            return None;
        }
        let flat = 3 * bi + bindex;
        if flat < 0 || flat >= 3 * self.nb as i64 {
            return None;
        }
        Some((flat as usize, i % BS, j % BS))
    }

    /// SOFA's `add(i, j, v)`.
    pub fn add(&mut self, i: usize, j: usize, v: f64) {
        match self.slot(i, j) {
            Some((k, r, c)) => {
                if j / BS + 1 < i / BS && v != 0.0 {
                    self.aliased += 1;
                }
                self.data[k][r][c] += v;
            }
            None if v != 0.0 => self.dropped += 1,
            None => {}
        }
    }

    /// The matrix of a CSR matrix's entries, added row by row.
    pub fn from_csr(a: &CsrMatrix) -> BtdMatrix {
        let mut m = BtdMatrix::new(a.nrows() / BS);
        for row in 0..a.nrows() {
            for (col, v) in a.row(row) {
                m.add(row, col, v);
            }
        }
        m
    }

    /// SOFA's `clearRowCol(r)` followed by `set(r, r, 1)` (a fixed DOF; `MatrixLinearSystem`'s
    /// `Dirichlet::discardRowCol`): row `r` is cleared in the three blocks of its block row,
    /// column `r` in the three blocks of the band.
    pub fn discard_row_col(&mut self, r: usize) {
        let (b, k) = (r / BS, r % BS);
        if b >= self.nb {
            return;
        }
        for t in 0..3 {
            self.data[3 * b + t][k] = [0.0; BS];
        }
        if b > 0 {
            for row in self.data[3 * (b - 1) + 2].iter_mut() {
                row[k] = 0.0;
            }
        }
        for row in self.data[3 * b + 1].iter_mut() {
            row[k] = 0.0;
        }
        if b + 1 < self.nb {
            for row in self.data[3 * (b + 1)].iter_mut() {
                row[k] = 0.0;
            }
        }
        self.data[3 * b + 1][k][k] = 1.0;
    }

    /// The three block diagonals `(diagonal, lower, upper)`, `lower[0]` and `upper[nb-1]` as
    /// stored (unused by the factorisation).
    pub fn diagonals(&self) -> (Vec<Block>, Vec<Block>, Vec<Block>) {
        let pick = |t: usize| (0..self.nb).map(|b| self.data[3 * b + t]).collect();
        (pick(1), pick(0), pick(2))
    }
}

impl BtdFactor {
    /// Factorises the block-tridiagonal matrix given by its diagonals; `Err(i)` when the pivot
    /// block `i` cannot be inverted.
    pub fn new(diag: &[Block], lower: &[Block], upper: &[Block]) -> Result<BtdFactor, usize> {
        let nb = diag.len();
        let mut f = BtdFactor { alpha_inv: Vec::with_capacity(nb), lambda: Vec::with_capacity(nb.saturating_sub(1)), lower: lower.to_vec() };
        if nb == 0 {
            return Ok(f);
        }
        f.alpha_inv.push(invert_block(&diag[0]).ok_or(0usize)?);
        if nb > 1 {
            f.lambda.push(block_mul(&f.alpha_inv[0], &upper[0]));
        }
        for i in 1..nb {
            let t1 = block_mul(&lower[i], &f.lambda[i - 1]);
            let t2 = block_sub(&diag[i], &t1);
            f.alpha_inv.push(invert_block(&t2).ok_or(i)?);
            if i < nb - 1 {
                let l = block_mul(&f.alpha_inv[i], &upper[i]);
                f.lambda.push(l);
            }
        }
        Ok(f)
    }

    /// Solves `A x = b` (`x` overwritten; both of length `6·nb`).
    pub fn solve(&self, b: &[f64], x: &mut [f64]) {
        let nb = self.alpha_inv.len();
        if nb == 0 {
            return;
        }
        let sub = |v: &[f64], i: usize| -> V6 {
            let mut r = [0.0; BS];
            r.copy_from_slice(&v[BS * i..BS * i + BS]);
            r
        };
        let y0 = block_vec(&self.alpha_inv[0], &sub(b, 0));
        x[..BS].copy_from_slice(&y0);
        for i in 1..nb {
            let bx = block_vec(&self.lower[i], &sub(x, i - 1));
            let bi = sub(b, i);
            let mut d = [0.0; BS];
            for k in 0..BS {
                d[k] = bi[k] - bx[k];
            }
            let yi = block_vec(&self.alpha_inv[i], &d);
            x[BS * i..BS * i + BS].copy_from_slice(&yi);
        }
        for i in (0..nb.saturating_sub(1)).rev() {
            let lx = block_vec(&self.lambda[i], &sub(x, i + 1));
            for k in 0..BS {
                x[BS * i + k] -= lx[k];
            }
        }
    }
}

/// Linear system solver using Thomas Algorithm for Block Tridiagonal matrices.
///
/// The solver component.
#[component(
    name = "BTDLinearSolver", module = "Sofa.Component.LinearSolver.Direct",
    roles = [LinearSolver],
    templates = ["BTDMatrix6d"],
    inherit = [MatrixSolverData],
    data = {
        /// Dump system state at each iteration
        verbose: Bool = "false",
        /// display debug information about subpartSolve computation
        showProblem: Bool = "false",
        /// Allows for the computation of a subpart of the system
        subpartSolve: Bool = "false",
        /// verification of the subpartSolve
        verification: Bool = "false",
    },
    links = {
        /// The linear system to solve
        linearSystem: LinearSystem,
    },
)]
#[derive(Clone, Default)]
pub struct BtdLinearSolver {
    system: AssembledSystem,
    factor: Option<BtdFactor>,
    me: Option<ComponentId>,
    warned_dropped: bool,
}

impl BtdLinearSolver {
    pub fn factor(&self) -> Option<&BtdFactor> {
        self.factor.as_ref()
    }
}

impl Component for BtdLinearSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.system.set_link(cx);
        self.factor = None;
        if cx.data().get(Self::SUBPART_SOLVE) {
            cx.warn("subpartSolve only matters to constraint corrections, which Settee does not have yet: the full system is solved");
        }
        Ok(())
    }
}

impl LinearSolver for BtdLinearSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
        let me = self.me;
        if !scope.size.is_multiple_of(BS) {
            return Err(step_error(scene, me, format!("the system has {} unknowns, not a multiple of the 6×6 blocks of BTDMatrix6d", scope.size))
                .hint("BTDLinearSolver solves chains of Rigid3 nodes; use SparseLDLSolver or CGLinearSolver for other states"));
        }
        // SOFA adds every contribution into its BTDMatrix storage, then discards the rows and
        // columns of fixed DOFs there: entries outside the band are stored (or dropped) before
        // the constraints clear anything.
        let rows_later = !mech::has_block_projections(scene, scope);
        let matrix = if rows_later {
            let opts = AssemblyOptions { projective_constraints: false, ..AssemblyOptions::default() };
            let builder = self.system.assemble_with(scene, scope, factors, &opts)?;
            let mut m = BtdMatrix::from_csr(builder.matrix());
            for r in mech::projected_rows(scene, scope) {
                m.discard_row_col(r);
            }
            m
        } else {
            BtdMatrix::from_csr(self.system.assemble(scene, scope, factors)?.matrix())
        };
        if matrix.aliased + matrix.dropped > 0 && !self.warned_dropped {
            self.warned_dropped = true;
            step_warning(
                scene,
                me,
                format!(
                    "{} entries of the system matrix lie outside the three block diagonals (the DOFs are not a chain): as SOFA's BTDMatrix does, {} of them are added to another block and {} ignored",
                    matrix.aliased + matrix.dropped,
                    matrix.aliased,
                    matrix.dropped
                ),
            );
        }
        let (diag, lower, upper) = matrix.diagonals();
        let factor = BtdFactor::new(&diag, &lower, &upper).map_err(|i| {
            step_error(scene, me, format!("the pivot block {i} of the block-tridiagonal factorisation is singular"))
                .hint("the system matrix is singular: make sure every DOF has a mass, a stiffness or a fixed constraint")
        })?;
        let sys = &mut self.system;
        mech::gather(scene, scope, rhs, &mut sys.b);
        sys.x.clear();
        sys.x.resize(sys.b.len(), 0.0);
        factor.solve(&sys.b, &mut sys.x);
        mech::scatter(scene, scope, solution, &sys.x);
        self.factor = Some(factor);
        Ok(())
    }

    fn solve_again(&mut self, scene: &mut Scene, scope: &MechScope, rhs: VecId, solution: VecId) -> SimResult {
        let factor = factorized(&self.factor, self.me, scene, scope)?;
        let sys = &mut self.system;
        mech::gather(scene, scope, rhs, &mut sys.b);
        sys.x.clear();
        sys.x.resize(sys.b.len(), 0.0);
        factor.solve(&sys.b, &mut sys.x);
        mech::scatter(scene, scope, solution, &sys.x);
        Ok(())
    }

    /// One block-tridiagonal solve per non-empty constraint row (SOFA's generic product; its
    /// BTD-specific one computes the same blocks of the inverse, up to round-off).
    fn add_jminvjt(&mut self, scene: &mut Scene, scope: &MechScope, j: &ConstraintJacobian, factor: f64, w: &mut DenseMatrix) -> SimResult {
        let f = factorized(&self.factor, self.me, scene, scope)?;
        if j.ncols != scope.size {
            return Err(step_error(scene, self.me, format!("constraint rows have {} columns but the system has {} unknowns", j.ncols, scope.size)));
        }
        j.add_jminvjt_generic(w, factor, true, |rhs, y| {
            y.clear();
            y.resize(rhs.len(), 0.0);
            f.solve(rhs, y);
            Ok(())
        })
    }
}

/// The factorization of the last solve, checked against a solve over `scope`.
fn factorized<'a>(factor: &'a Option<BtdFactor>, me: Option<ComponentId>, scene: &Scene, scope: &MechScope) -> SimResult<&'a BtdFactor> {
    match factor {
        Some(f) if f.alpha_inv.len() * BS == scope.size => Ok(f),
        Some(f) => {
            Err(step_error(scene, me, format!("the system was factorised with {} unknowns but {} are asked for", f.alpha_inv.len() * BS, scope.size)))
        }
        None => Err(step_error(scene, me, "no factorised system yet: the constraint correction runs before the free motion solved it")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// Dense Gaussian elimination with partial pivoting (reference).
    fn dense_solve(a: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
        let n = b.len();
        let mut m: Vec<Vec<f64>> = a.to_vec();
        let mut x = b.to_vec();
        for k in 0..n {
            let p = (k..n).max_by(|&i, &j| m[i][k].abs().partial_cmp(&m[j][k].abs()).unwrap()).unwrap();
            m.swap(k, p);
            x.swap(k, p);
            for i in k + 1..n {
                let f = m[i][k] / m[k][k];
                for j in k..n {
                    m[i][j] -= f * m[k][j];
                }
                x[i] -= f * x[k];
            }
        }
        for k in (0..n).rev() {
            let mut s = x[k];
            for j in k + 1..n {
                s -= m[k][j] * x[j];
            }
            x[k] = s / m[k][k];
        }
        x
    }

    #[test]
    fn full_pivot_inverse_is_an_inverse() {
        let mut s = 3;
        let mut a = ZERO;
        for row in a.iter_mut() {
            for v in row.iter_mut() {
                *v = lcg(&mut s);
            }
        }
        let inv = invert_full_pivot(&a).unwrap();
        let p = block_mul(&a, &inv);
        for (i, row) in p.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                assert!((v - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12, "{p:?}");
            }
        }
        // diagonal blocks take the diagonal path: exact reciprocals
        let mut d = ZERO;
        for (i, row) in d.iter_mut().enumerate() {
            row[i] = 3.0 + i as f64;
        }
        let di = invert_block(&d).unwrap();
        assert_eq!(di[2][2], 1.0 / 5.0);
        assert!(invert_full_pivot(&ZERO).is_none());
    }

    /// A non-symmetric, diagonally dominant block-tridiagonal system of 7 blocks: the Thomas
    /// algorithm agrees with a dense solve to round-off.
    #[test]
    fn solves_block_tridiagonal_like_dense() {
        let nb = 7;
        let n = nb * BS;
        let mut s = 11;
        let mut dense = vec![vec![0.0; n]; n];
        let (mut diag, mut lower, mut upper) = (vec![ZERO; nb], vec![ZERO; nb], vec![ZERO; nb]);
        for bi in 0..nb {
            for i in 0..BS {
                for j in 0..BS {
                    diag[bi][i][j] = lcg(&mut s) + if i == j { 12.0 } else { 0.0 };
                    if bi > 0 {
                        lower[bi][i][j] = lcg(&mut s);
                    }
                    if bi + 1 < nb {
                        upper[bi][i][j] = lcg(&mut s);
                    }
                }
            }
        }
        for bi in 0..nb {
            for i in 0..BS {
                for j in 0..BS {
                    dense[bi * BS + i][bi * BS + j] = diag[bi][i][j];
                    if bi > 0 {
                        dense[bi * BS + i][(bi - 1) * BS + j] = lower[bi][i][j];
                    }
                    if bi + 1 < nb {
                        dense[bi * BS + i][(bi + 1) * BS + j] = upper[bi][i][j];
                    }
                }
            }
        }
        let b: Vec<f64> = (0..n).map(|_| lcg(&mut s) * 10.0).collect();
        let f = BtdFactor::new(&diag, &lower, &upper).unwrap();
        let mut x = vec![0.0; n];
        f.solve(&b, &mut x);
        let xd = dense_solve(&dense, &b);
        let scale = xd.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (a, e) in x.iter().zip(&xd) {
            assert!((a - e).abs() < 1e-13 * scale, "{a} vs {e}");
        }
        // residual
        for (i, row) in dense.iter().enumerate() {
            let r: f64 = row.iter().zip(&x).map(|(a, x)| a * x).sum::<f64>() - b[i];
            assert!(r.abs() < 1e-12 * 10.0, "{r}");
        }
        // the same system through a CSR matrix
        let mut rp = vec![0];
        let (mut ci, mut vals) = (Vec::new(), Vec::new());
        for row in &dense {
            for (j, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    ci.push(j);
                    vals.push(v);
                }
            }
            rp.push(ci.len());
        }
        let csr = CsrMatrix::try_from_parts(n, n, rp, ci, vals).unwrap();
        let m = BtdMatrix::from_csr(&csr);
        assert_eq!((m.aliased, m.dropped), (0, 0));
        let (d2, l2, u2) = m.diagonals();
        assert_eq!((d2, l2[1..].to_vec(), u2[..nb - 1].to_vec()), (diag.clone(), lower[1..].to_vec(), upper[..nb - 1].to_vec()));
        // a single block
        let f1 = BtdFactor::new(&diag[..1], &[ZERO], &[ZERO]).unwrap();
        let mut x1 = vec![0.0; BS];
        f1.solve(&b[..BS], &mut x1);
        assert_eq!(x1, block_vec(&invert_block(&diag[0]).unwrap(), &b[..BS].try_into().unwrap()).to_vec());
    }

    /// SOFA's `BTDMatrix::add` stores block `(bi, bj)` at `data[3·bi + bj − bi + 1]` without a
    /// band check: right of the band it is dropped, left of it it is added to an earlier block.
    /// `discard_row_col` (a fixed DOF) then clears only the band, so aliased values survive.
    #[test]
    fn entries_left_of_the_band_alias_earlier_blocks() {
        let mut m = BtdMatrix::new(8);
        // (row 44, column 1): block (7, 0) → data[21 − 6] = data[15], the lower block of row 5.
        m.add(44, 1, 2.5);
        // (row 13, column 40): block (2, 6) → right of the band, dropped.
        m.add(13, 40, 7.0);
        // (row 20, column 2): block (3, 0) → data[9 − 2] = data[7], the diagonal block of row 2.
        m.add(20, 2, -1.25);
        m.add(14, 14, 4.0); // block (2, 2), row 2 col 2 of it: same entry as the aliased one
        m.add(14, 14, 0.5);
        // in-band entries of column 0 and row 0, cleared by the fixed DOF 0
        m.add(6, 0, 3.0);
        m.add(0, 6, 3.0);
        assert_eq!((m.aliased, m.dropped), (2, 1));
        let (d, l, u) = m.diagonals();
        assert_eq!(l[5][2][1], 2.5);
        assert_eq!(d[2][2][2], -1.25 + 4.0 + 0.5);
        assert_eq!((l[1][0][0], u[0][0][0]), (3.0, 3.0));
        for r in 0..BS {
            m.discard_row_col(r);
        }
        let (d, l, u) = m.diagonals();
        assert_eq!((l[1][0][0], u[0][0][0]), (0.0, 0.0));
        assert_eq!(l[5][2][1], 2.5, "the aliased value is not in the cleared band");
        assert_eq!(d[0], {
            let mut id = ZERO;
            for (i, row) in id.iter_mut().enumerate() {
                row[i] = 1.0;
            }
            id
        });
        let total: f64 = d.iter().chain(&l).chain(&u).flatten().flatten().sum();
        assert_eq!(total, 6.0 + 2.5 + 3.25);
    }
}
