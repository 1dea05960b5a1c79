//! Direct sparse solvers (SOFA's `SparseLDLSolver`, `EigenSimplicialLDLT/LLT`,
//! `EigenSparseLU/QR`, `PrecomputedLinearSolver`).
//!
//! | `DirectKind` | implementation | ordering honoured |
//! |---|---|---|
//! | `Ldlt` | own supernodal LDLᵀ without pivoting (the factors of SOFA's `SparseLDLSolver`, to round-off; see `ldlt.rs`) | `Natural` = identity, `Amd` = faer's AMD on the pattern of `A + Aᵀ`, `Colamd` = faer's COLAMD column ordering of `A`, applied symmetrically, `NestedDissection` = own nested dissection of `A + Aᵀ` (`nested_dissection.rs`) |
//! | `Llt` | the same supernodal LDLᵀ, requiring every pivot `D(k,k) > 0` (`L D Lᵀ = (L D½)(L D½)ᵀ`: the Cholesky factorization, without its square roots) | same four orderings |
//! | `Lu` | faer sparse LU with partial pivoting (supernodal variant forced: the simplicial one panics on an exactly zero pivot) | **ignored**: faer always applies its own COLAMD column ordering |
//! | `Qr` | faer sparse QR | **ignored**: faer always applies its own COLAMD column ordering |
//!
//! All numeric work runs on the calling thread (faer with `faer::Par::Seq`):
//! the results are deterministic and independent of the thread count.
//! Any exact factorization reproduces SOFA to round-off (spec §4.5).

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuRef, LuSymbolicParams, NumericLu, SymbolicLu};
use faer::sparse::linalg::qr::{factorize_symbolic_qr, QrRef, QrSymbolicParams, SymbolicQr};
use faer::sparse::linalg::{amd, colamd, LuError, SupernodalThreshold};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

use crate::csr::CsrMatrix;
use crate::error::{LinalgError, Result};
use crate::ldlt::{LdlNumeric, LdlSymbolic};

/// Which factorization a [`DirectSolver`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DirectKind {
    /// `P A Pᵀ = L D Lᵀ` (own implementation, SOFA's `SparseLDLSolver` / `EigenSimplicialLDLT`).
    Ldlt,
    /// `P A Pᵀ = L Lᵀ`. Fails with [`LinalgError::NotPositiveDefinite`] on non-SPD input.
    Llt,
    /// `P A Q = L U` (faer, partial pivoting).
    Lu,
    /// `A Q = Q' R` (faer).
    Qr,
}

/// Fill-reducing ordering (SOFA's `NaturalOrderingMethod`, `AMDOrderingMethod`,
/// `COLAMDOrderingMethod`, `MetisOrderingMethod`). Honoured by `Ldlt` and `Llt`; `Lu`/`Qr`
/// always use faer's COLAMD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ordering {
    /// Identity permutation.
    Natural,
    /// Approximate minimum degree (faer's AMD on the pattern of `A + Aᵀ`).
    Amd,
    /// Column approximate minimum degree (faer's COLAMD on `A`), used as a symmetric permutation.
    Colamd,
    /// Nested dissection of the pattern of `A + Aᵀ` ([`crate::nested_dissection_ordering`]),
    /// what SOFA's `MetisOrderingMethod` asks METIS for.
    NestedDissection,
}

#[derive(Debug)]
enum Symbolic {
    None,
    /// `Ldlt` and `Llt`.
    Ldlt(Box<LdlSymbolic>),
    Lu(SymbolicLu<usize>),
    Qr(Box<SymbolicQr<usize>>),
}

#[derive(Clone, Debug)]
enum Numeric {
    None,
    /// `n == 0`: nothing to factorize, solves are no-ops.
    Empty,
    /// `Ldlt` and `Llt`: the factors are in `DirectSolver::ldl`.
    Ldlt,
    Lu(Box<NumericLu<usize, f64>>),
    Qr {
        indices: Vec<usize>,
        values: Vec<f64>,
    },
}

/// A reusable direct sparse solver for square (symmetric for `Ldlt`/`Llt`)
/// matrices in CSR form.
///
/// `factorize` redoes the symbolic analysis (ordering, elimination tree /
/// structure of the factors) only when the sparsity pattern (`nrows`,
/// `row_ptr`, `col_idx`) differs from the one of the previous call; the
/// numeric factorization is recomputed on every call, like SOFA's solvers with
/// `precomputeSymbolicDecomposition = true`. Opt-in
/// ([`Self::keep_analysis_across_patterns`], SparseLDLSolver's systems): for
/// `Ldlt`/`Llt`, a changed pattern whose entries all lie in the analysed
/// factor's pattern keeps the analysis (SOFA would redo it): the factors are
/// the same up to round-off (their extra entries are zeros), the ordering is
/// the one of the pattern analysed first.
/// A copy holds the same analysis and factors (see [`Clone`] below for QR's analysis).
#[derive(Debug)]
pub struct DirectSolver {
    kind: DirectKind,
    ordering: Ordering,
    n: usize,
    pattern: Option<(Vec<usize>, Vec<usize>)>,
    symbolic: Symbolic,
    numeric: Numeric,
    /// Factors of `Ldlt` / `Llt` and their workspaces, kept between
    /// factorizations so that refactorizing allocates nothing.
    ldl: LdlNumeric,
    symbolic_count: usize,
    refit_count: usize,
    /// Keep the analysis for a pattern inside the factor's (see [`Self::keep_analysis_across_patterns`]).
    refit_patterns: bool,
    /// `Ldlt`/`Llt`: the pattern the analysis was made for (its values are not used), a
    /// superset of the factorised matrix's.
    analysed: Option<CsrMatrix>,
}

/// faer's QR analysis cannot be copied: the copy analyses again the pattern it was made for,
/// which gives the same analysis (the ordering and structure depend on the pattern only).
impl Clone for DirectSolver {
    fn clone(&self) -> Self {
        let symbolic = match &self.symbolic {
            Symbolic::None => Symbolic::None,
            Symbolic::Ldlt(s) => Symbolic::Ldlt(s.clone()),
            Symbolic::Lu(s) => Symbolic::Lu(s.clone()),
            Symbolic::Qr(_) => {
                let (rp, ci) = self.pattern.as_ref().expect("a QR analysis is made for a pattern");
                let a =
                    CsrMatrix::try_from_parts(self.n, self.n, rp.clone(), ci.clone(), vec![0.0; ci.len()]).expect("the analysed pattern is valid");
                let at = a.transpose();
                let s = SymbolicSparseColMatRef::new_checked(self.n, self.n, at.row_ptr(), None, at.col_idx());
                Symbolic::Qr(Box::new(factorize_symbolic_qr(s, QrSymbolicParams::default()).expect("the pattern was analysed before")))
            }
        };
        DirectSolver {
            kind: self.kind,
            ordering: self.ordering,
            n: self.n,
            pattern: self.pattern.clone(),
            symbolic,
            numeric: self.numeric.clone(),
            ldl: self.ldl.clone(),
            symbolic_count: self.symbolic_count,
            refit_count: self.refit_count,
            refit_patterns: self.refit_patterns,
            analysed: self.analysed.clone(),
        }
    }
}

fn faer_err(e: impl core::fmt::Debug) -> LinalgError {
    LinalgError::Faer(format!("{e:?}"))
}

/// Runs a faer numeric kernel, turning an (unexpected) panic into an error:
/// the inputs are validated beforehand, so a panic can only come from a
/// numerical corner case inside faer (e.g. an exactly zero pivot).
fn no_panic<R>(f: impl FnOnce() -> R) -> Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .map_err(|_| LinalgError::Singular("faer aborted the numeric factorization (exactly zero pivot?)".into()))
}

fn mem(req: StackReq) -> Result<MemBuffer> {
    MemBuffer::try_new(req).map_err(|_| LinalgError::Faer("out of memory".into()))
}

/// Full pattern of a CSR matrix seen as CSC (the transpose pattern; for the
/// structurally symmetric matrices used here it is the same).
fn csr_as_csc_symbolic(a: &CsrMatrix) -> SymbolicSparseColMatRef<'_, usize> {
    SymbolicSparseColMatRef::new_checked(a.ncols(), a.nrows(), a.row_ptr(), None, a.col_idx())
}

/// Fill-reducing permutation `perm` (`perm[k]` = original index placed at `k`).
fn compute_ordering(a: &CsrMatrix, ordering: Ordering) -> Result<Vec<usize>> {
    let n = a.nrows();
    let mut perm = (0..n).collect::<Vec<usize>>();
    if n == 0 {
        return Ok(perm);
    }
    let mut perm_inv = vec![0usize; n];
    match ordering {
        Ordering::Natural => {}
        Ordering::Amd => {
            let sym = csr_as_csc_symbolic(a);
            let mut buf = mem(amd::order_maybe_unsorted_scratch::<usize>(n, a.nnz()))?;
            amd::order_maybe_unsorted(&mut perm, &mut perm_inv, sym, amd::Control::default(), MemStack::new(&mut buf)).map_err(faer_err)?;
        }
        Ordering::Colamd => {
            let sym = csr_as_csc_symbolic(a);
            let mut buf = mem(colamd::order_scratch::<usize>(n, n, a.nnz()))?;
            colamd::order(&mut perm, &mut perm_inv, sym, colamd::Control::default(), MemStack::new(&mut buf)).map_err(faer_err)?;
        }
        Ordering::NestedDissection => perm = crate::nested_dissection::nested_dissection_ordering(a),
    }
    Ok(perm)
}

/// The pattern of `a` ∪ the pattern of `b` (both `n × n`), with zero values; `None` if the
/// shapes differ.
fn pattern_union(a: &CsrMatrix, b: &CsrMatrix) -> Option<CsrMatrix> {
    if a.nrows() != b.nrows() || a.ncols() != b.ncols() {
        return None;
    }
    let mut u = CsrMatrix::zeros(0, 0);
    u.rebuild(a.nrows(), a.ncols(), |row_ptr, col_idx, values| {
        row_ptr.push(0);
        for i in 0..a.nrows() {
            let (mut p, mut q) = (a.row(i).map(|(c, _)| c).peekable(), b.row(i).map(|(c, _)| c).peekable());
            loop {
                let c = match (p.peek(), q.peek()) {
                    (None, None) => break,
                    (Some(&x), None) => {
                        p.next();
                        x
                    }
                    (None, Some(&y)) => {
                        q.next();
                        y
                    }
                    (Some(&x), Some(&y)) => {
                        if x <= y {
                            p.next();
                        }
                        if y <= x {
                            q.next();
                        }
                        x.min(y)
                    }
                };
                col_idx.push(c);
            }
            row_ptr.push(col_idx.len());
        }
        values.resize(col_idx.len(), 0.0);
    })
    .ok()?;
    Some(u)
}

thread_local! {
    /// The work array of the `LDLᵀ` solves, kept per thread: a solve runs at every iteration
    /// of a preconditioned CG and for every constraint correction, and would allocate it each
    /// time. (A solve takes `&self`, so that one factorization can serve several threads.)
    static SOLVE_WORK: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's work array, at least `len` long.
fn with_work<T>(len: usize, f: impl FnOnce(&mut [f64]) -> T) -> T {
    SOLVE_WORK.with(|w| match w.try_borrow_mut() {
        Ok(mut w) => {
            if w.len() < len {
                w.resize(len, 0.0);
            }
            f(&mut w[..len])
        }
        // Re-entered on this thread (not done by the solves themselves): a fresh array.
        Err(_) => f(&mut vec![0.0; len]),
    })
}

impl DirectSolver {
    /// A solver of the given kind; nothing is computed before [`Self::factorize`].
    pub fn new(kind: DirectKind, ordering: Ordering) -> Self {
        Self {
            kind,
            ordering,
            n: 0,
            pattern: None,
            symbolic: Symbolic::None,
            numeric: Numeric::None,
            ldl: LdlNumeric::default(),
            symbolic_count: 0,
            refit_count: 0,
            refit_patterns: false,
            analysed: None,
        }
    }

    /// The factorization kind.
    pub fn kind(&self) -> DirectKind {
        self.kind
    }

    /// The requested ordering.
    pub fn ordering(&self) -> Ordering {
        self.ordering
    }

    /// Dimension of the last factorized matrix.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// `true` when the last `factorize` succeeded.
    pub fn is_factorized(&self) -> bool {
        !matches!(self.numeric, Numeric::None)
    }

    /// How many symbolic analyses were performed so far (increments only when
    /// the pattern changes).
    pub fn symbolic_count(&self) -> usize {
        self.symbolic_count
    }

    /// Opt in to keeping the analysis when the pattern changes but fits in the analysed factor
    /// (or analysing the union with the previous pattern): SparseLDLSolver's systems. Off by
    /// default: the other users keep SOFA's analysis of each new pattern.
    pub fn keep_analysis_across_patterns(&mut self, on: bool) {
        self.refit_patterns = on;
    }

    /// How many times a changed pattern was taken into the existing analysis
    /// (`Ldlt` / `Llt`: the new pattern fits in the analysed factor's).
    pub fn refit_count(&self) -> usize {
        self.refit_count
    }

    /// Number of strictly-lower entries of `L` for `Ldlt` (SOFA's `L_nnz`),
    /// `None` for other kinds or before the first analysis.
    pub fn l_nnz(&self) -> Option<usize> {
        match &self.symbolic {
            Symbolic::Ldlt(s) if self.kind == DirectKind::Ldlt => Some(s.l_nnz()),
            _ => None,
        }
    }

    /// The fill-reducing permutation used by `Ldlt` (`perm[k]` = original
    /// index at position `k`), `None` otherwise.
    pub fn ldlt_permutation(&self) -> Option<&[usize]> {
        match &self.symbolic {
            Symbolic::Ldlt(s) if self.kind == DirectKind::Ldlt => Some(s.perm()),
            _ => None,
        }
    }

    /// For `Ldlt` (and `Llt`, the same factors): `x := L⁻¹ x` in place, `x` given in the
    /// permuted order of [`Self::ldlt_permutation`] (`x[k]` belongs to original index `perm[k]`).
    /// With [`Self::ldlt_inv_d`] this gives SOFA's `SparseLDLSolver` form of `J A⁻¹ Jᵀ`,
    /// `(L⁻¹PJᵀ)ᵀ D⁻¹ (L⁻¹PJᵀ)`.
    pub fn ldlt_forward_in_place(&self, x: &mut [f64]) -> Result<()> {
        match (&self.symbolic, &self.numeric) {
            (Symbolic::Ldlt(s), Numeric::Ldlt) => {
                if x.len() != self.n {
                    return Err(LinalgError::DimensionMismatch { what: "forward substitution vector", expected: self.n, found: x.len() });
                }
                with_work(s.solve_workspace_len(), |work| s.forward_in_place(&self.ldl, x, work));
                Ok(())
            }
            (_, Numeric::Empty) if x.is_empty() => Ok(()),
            _ => Err(LinalgError::NotFactorized),
        }
    }

    /// Length of the workspace [`Self::ldlt_forward_with`] needs (0 before an `Ldlt` analysis).
    pub fn ldlt_workspace_len(&self) -> usize {
        match &self.symbolic {
            Symbolic::Ldlt(s) => s.solve_workspace_len(),
            _ => 0,
        }
    }

    /// [`Self::ldlt_forward_in_place`] with a caller-kept workspace of at least
    /// [`Self::ldlt_workspace_len`] entries (no allocation).
    pub fn ldlt_forward_with(&self, x: &mut [f64], work: &mut [f64]) -> Result<()> {
        match (&self.symbolic, &self.numeric) {
            (Symbolic::Ldlt(s), Numeric::Ldlt) => {
                if x.len() != self.n {
                    return Err(LinalgError::DimensionMismatch { what: "forward substitution vector", expected: self.n, found: x.len() });
                }
                if work.len() < s.solve_workspace_len() {
                    return Err(LinalgError::DimensionMismatch {
                        what: "forward substitution workspace",
                        expected: s.solve_workspace_len(),
                        found: work.len(),
                    });
                }
                s.forward_in_place(&self.ldl, x, work);
                Ok(())
            }
            (_, Numeric::Empty) if x.is_empty() => Ok(()),
            _ => Err(LinalgError::NotFactorized),
        }
    }

    /// For `Ldlt` / `Llt` after the symbolic analysis: marks in `mark` (length `dim()`, permuted
    /// positions) every entry [`Self::ldlt_forward_in_place`] can make non-zero from a vector
    /// non-zero only at permuted position `q` (the columns of the supernodes on the
    /// elimination-tree path from `q` to the root). Outside the union of the marks of a
    /// right-hand side's entries, its forward substitution stays exactly zero.
    pub fn ldlt_mark_reach(&self, q: usize, mark: &mut [bool]) -> Result<()> {
        match &self.symbolic {
            Symbolic::Ldlt(s) if q < self.n && mark.len() == self.n => {
                s.mark_reach(q, mark);
                Ok(())
            }
            Symbolic::Ldlt(_) => Err(LinalgError::DimensionMismatch { what: "reach marks", expected: self.n, found: mark.len() }),
            _ => Err(LinalgError::NotFactorized),
        }
    }

    /// For `Ldlt` / `Llt` after a successful factorization: `1 / D(k,k)` in permuted order.
    pub fn ldlt_inv_d(&self) -> Option<&[f64]> {
        match (&self.symbolic, &self.numeric) {
            (Symbolic::Ldlt(s), Numeric::Ldlt) => Some(s.inv_d(&self.ldl)),
            _ => None,
        }
    }

    /// Factorizes `a` (must be square; for `Ldlt`/`Llt` it is assumed
    /// symmetric: the lower triangle of the CSR rows, equivalently the upper
    /// triangle by columns, is used). On error the previous factorization is
    /// discarded (`solve` then returns [`LinalgError::NotFactorized`]).
    pub fn factorize(&mut self, a: &CsrMatrix) -> Result<()> {
        self.numeric = Numeric::None;
        if !a.is_square() {
            return Err(LinalgError::NotSquare { nrows: a.nrows(), ncols: a.ncols() });
        }
        let n = a.nrows();
        let same = matches!(&self.pattern, Some((rp, ci)) if rp.as_slice() == a.row_ptr() && ci.as_slice() == a.col_idx());
        if !same || matches!(self.symbolic, Symbolic::None) {
            // A pattern that fits in the analysed factor keeps its analysis: only where the
            // entries of A are scattered changes (exact zeros that come and go as a body
            // turns would otherwise cost an ordering and an analysis every step).
            // Only for a positive diagonal (a stiffness-like matrix): without pivoting, an
            // indefinite matrix (a saddle-point system with its constraint block) needs the
            // ordering of its own pattern, as SOFA computes it.
            let positive_diagonal = (0..n).all(|i| a.row(i).any(|(c, v)| c == i && v > 0.0));
            let refitted = self.refit_patterns
                && positive_diagonal
                && match &mut self.symbolic {
                    Symbolic::Ldlt(s) => s.refit(a),
                    _ => false,
                };
            if refitted {
                self.refit_count += 1;
            } else {
                // Analyse the union with the pattern analysed before, so that patterns which
                // alternate or grow entry by entry settle on one analysis after a few steps.
                let union = match (&self.symbolic, &self.analysed) {
                    (Symbolic::Ldlt(_), Some(old)) if old.nrows() == n && positive_diagonal && self.refit_patterns => {
                        pattern_union(old, a).filter(|u| u.nnz() <= 2 * a.nnz())
                    }
                    _ => None,
                };
                self.symbolic = Symbolic::None;
                self.pattern = None;
                self.analysed = None;
                self.n = n;
                match union {
                    Some(u) => {
                        self.analyse(&u)?;
                        let fits = match &mut self.symbolic {
                            Symbolic::Ldlt(s) => s.refit(a),
                            _ => false,
                        };
                        if !fits {
                            self.symbolic = Symbolic::None;
                            return Err(LinalgError::InvalidStructure("the analysed pattern misses an entry of the matrix".into()));
                        }
                        self.analysed = Some(u);
                    }
                    None => {
                        self.analyse(a)?;
                        if matches!(self.symbolic, Symbolic::Ldlt(_)) {
                            self.analysed = Some(a.clone());
                        }
                    }
                }
                self.symbolic_count += 1;
            }
            let (rp, ci) = self.pattern.get_or_insert_with(Default::default);
            rp.clear();
            rp.extend_from_slice(a.row_ptr());
            ci.clear();
            ci.extend_from_slice(a.col_idx());
        }
        if n == 0 {
            self.numeric = Numeric::Empty;
            return Ok(());
        }
        if let Symbolic::Ldlt(s) = &self.symbolic {
            s.factorize(a, &mut self.ldl, self.kind == DirectKind::Llt)?;
            self.numeric = Numeric::Ldlt;
            return Ok(());
        }
        self.numeric = self.numeric_factorization(a)?;
        Ok(())
    }

    fn analyse(&mut self, a: &CsrMatrix) -> Result<()> {
        let n = a.nrows();
        self.symbolic = match self.kind {
            DirectKind::Ldlt | DirectKind::Llt => Symbolic::Ldlt(Box::new(LdlSymbolic::new(a, compute_ordering(a, self.ordering)?)?)),
            _ if n == 0 => Symbolic::None,
            DirectKind::Lu => {
                let at = a.transpose(); // CSR of Aᵀ = CSC of A
                let s = SymbolicSparseColMatRef::new_checked(n, n, at.row_ptr(), None, at.col_idx());
                // faer's simplicial LU panics on an exactly zero pivot; the
                // supernodal variant reports it through non-finite factors.
                let params = LuSymbolicParams { supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL, ..Default::default() };
                Symbolic::Lu(factorize_symbolic_lu(s, params).map_err(faer_err)?)
            }
            DirectKind::Qr => {
                let at = a.transpose();
                let s = SymbolicSparseColMatRef::new_checked(n, n, at.row_ptr(), None, at.col_idx());
                Symbolic::Qr(Box::new(factorize_symbolic_qr(s, QrSymbolicParams::default()).map_err(faer_err)?))
            }
        };
        Ok(())
    }

    fn numeric_factorization(&self, a: &CsrMatrix) -> Result<Numeric> {
        let n = a.nrows();
        match &self.symbolic {
            Symbolic::None => Err(LinalgError::NotFactorized),
            Symbolic::Ldlt(_) => Err(LinalgError::NotFactorized),
            Symbolic::Lu(sym) => {
                let at = a.transpose();
                let s = SymbolicSparseColMatRef::new_checked(n, n, at.row_ptr(), None, at.col_idx());
                let mat = SparseColMatRef::new(s, at.values());
                let mut numeric = NumericLu::new();
                let mut buf = mem(sym.factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default()))?;
                let res = no_panic(|| {
                    sym.factorize_numeric_lu::<f64>(&mut numeric, mat, Par::Seq, MemStack::new(&mut buf), Default::default()).map(|_| ())
                })?;
                res.map_err(|e| match e {
                    LuError::SymbolicSingular { index } => LinalgError::Singular(format!("structurally singular at column {index}")),
                    LuError::Generic(g) => faer_err(g),
                })?;
                Ok(Numeric::Lu(Box::new(numeric)))
            }
            Symbolic::Qr(sym) => {
                let at = a.transpose();
                let s = SymbolicSparseColMatRef::new_checked(n, n, at.row_ptr(), None, at.col_idx());
                let mat = SparseColMatRef::new(s, at.values());
                let mut indices = vec![0usize; sym.len_idx()];
                let mut values = vec![0.0f64; sym.len_val()];
                let mut buf = mem(sym.factorize_numeric_qr_scratch::<f64>(Par::Seq, Default::default()))?;
                no_panic(|| {
                    sym.factorize_numeric_qr::<f64>(&mut indices, &mut values, mat, Par::Seq, MemStack::new(&mut buf), Default::default());
                })?;
                Ok(Numeric::Qr { indices, values })
            }
        }
    }

    /// Solves `A x = rhs` in place (`rhs` becomes `x`).
    ///
    /// Errors: [`LinalgError::NotFactorized`], [`LinalgError::DimensionMismatch`]
    /// if `rhs.len() != dim()`, [`LinalgError::Singular`] if a finite `rhs`
    /// produced a non-finite solution (singular `Lu`/`Qr` factors; `rhs` then
    /// holds garbage).
    pub fn solve_in_place(&self, rhs: &mut [f64]) -> Result<()> {
        self.solve_many_in_place(rhs, 1)
    }

    /// `x = A⁻¹ b` into `x` (convenience wrapper of [`Self::solve_in_place`]).
    pub fn solve(&self, b: &[f64], x: &mut [f64]) -> Result<()> {
        if b.len() != x.len() {
            return Err(LinalgError::DimensionMismatch { what: "solve output x", expected: b.len(), found: x.len() });
        }
        x.copy_from_slice(b);
        self.solve_in_place(x)
    }

    /// Solves `A X = B` in place for `ncols` right-hand sides stored
    /// **column-major** in `rhs` (`rhs.len() == dim() * ncols`; column `j` is
    /// `rhs[j*n .. (j+1)*n]`).
    pub fn solve_many_in_place(&self, rhs: &mut [f64], ncols: usize) -> Result<()> {
        if matches!(self.numeric, Numeric::None) {
            return Err(LinalgError::NotFactorized);
        }
        let n = self.n;
        let expected = n.saturating_mul(ncols);
        if rhs.len() != expected {
            return Err(LinalgError::DimensionMismatch { what: "right-hand side (dim * ncols)", expected, found: rhs.len() });
        }
        if n == 0 || ncols == 0 {
            return Ok(());
        }
        let input_finite = rhs.iter().all(|v| v.is_finite());
        match (&self.symbolic, &self.numeric) {
            (Symbolic::Ldlt(s), Numeric::Ldlt) => {
                with_work(s.solve_workspace_len(), |work| {
                    for col in rhs.chunks_exact_mut(n) {
                        s.solve_in_place(&self.ldl, col, work);
                    }
                });
            }
            (Symbolic::Lu(sym), Numeric::Lu(numeric)) => {
                let mut buf = mem(sym.solve_in_place_scratch::<f64>(ncols, Par::Seq))?;
                let mat = MatMut::from_column_major_slice_mut(rhs, n, ncols);
                // SAFETY: `numeric` was produced by `sym.factorize_numeric_lu` with this
                // very symbolic factorization (both are replaced together).
                let lu = unsafe { LuRef::new_unchecked(sym, numeric) };
                lu.solve_in_place_with_conj(Conj::No, mat, Par::Seq, MemStack::new(&mut buf));
            }
            (Symbolic::Qr(sym), Numeric::Qr { indices, values }) => {
                let mut buf = mem(sym.solve_in_place_scratch::<f64>(ncols, Par::Seq))?;
                let mat = MatMut::from_column_major_slice_mut(rhs, n, ncols);
                // SAFETY: `indices`/`values` were filled by `sym.factorize_numeric_qr`
                // with this very symbolic factorization (both are replaced together).
                let qr = unsafe { QrRef::new_unchecked(sym, indices, values) };
                qr.solve_in_place_with_conj(Conj::No, mat, Par::Seq, MemStack::new(&mut buf));
            }
            _ => return Err(LinalgError::NotFactorized),
        }
        if input_finite && rhs.iter().any(|v| !v.is_finite()) {
            return Err(LinalgError::Singular("non-finite solution".into()));
        }
        Ok(())
    }

    /// Dense inverse of the factorized matrix, **column-major**: entry
    /// `(i, j)` of `A⁻¹` is at index `j * n + i`, i.e. chunk `j` is
    /// `A⁻¹ e_j`. (Read as row-major this is SOFA's `Minv(j, i) = (A⁻¹ e_j)_i`
    /// layout; for a symmetric `A` both readings coincide.)
    pub fn dense_inverse(&self) -> Result<Vec<f64>> {
        if matches!(self.numeric, Numeric::None) {
            return Err(LinalgError::NotFactorized);
        }
        let n = self.n;
        let len =
            n.checked_mul(n).ok_or(LinalgError::DimensionMismatch { what: "dense inverse (n * n overflows)", expected: usize::MAX, found: n })?;
        let mut out = vec![0.0f64; len];
        for j in 0..n {
            out[j * n + j] = 1.0;
        }
        if let (Symbolic::Ldlt(s), Numeric::Ldlt) = (&self.symbolic, &self.numeric) {
            // Unit columns: the forward substitution skips the supernodes a column cannot reach
            // (same bits as the full solve, see `LdlSymbolic::solve_unit_in_place`).
            let mut position = vec![0usize; n];
            for (k, &p) in s.perm().iter().enumerate() {
                position[p] = k;
            }
            let mut work = vec![0.0f64; s.solve_workspace_len()];
            for (j, col) in out.chunks_exact_mut(n).enumerate() {
                s.solve_unit_in_place(&self.ldl, position[j], col, &mut work);
            }
            if out.iter().any(|v| !v.is_finite()) {
                return Err(LinalgError::Singular("non-finite solution".into()));
            }
            return Ok(out);
        }
        self.solve_many_in_place(&mut out, n)?;
        Ok(out)
    }
}

/// Dense inverse of a symmetric positive definite matrix, for SOFA's
/// `PrecomputedLinearSolver`: sparse LLᵀ (faer, AMD ordering), then one solve
/// per unit column. Result is **column-major** `n x n` (`inv[j*n + i] =
/// (A⁻¹)_ij`, chunk `j` = `A⁻¹ e_j`); see [`DirectSolver::dense_inverse`].
/// Non-SPD input gives [`LinalgError::NotPositiveDefinite`].
pub fn dense_inverse(a: &CsrMatrix) -> Result<Vec<f64>> {
    let mut s = DirectSolver::new(DirectKind::Llt, Ordering::Amd);
    s.factorize(a)?;
    s.dense_inverse()
}
