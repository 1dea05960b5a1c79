//! The vector spaces iterative solvers run in.
//!
//! SOFA writes its iterative solvers once over an abstract `(Matrix, Vector)` pair and instantiates
//! them for `GraphScattered` (matrix-free, vectors scattered over the mechanical states) and for
//! assembled matrices (`FullVector` + CRS matrix). [`VectorSpace`] plays that role here: the
//! algorithms of [`crate::cg`], [`crate::pcg`] and [`crate::minres`] are written against it, with
//! SOFA's `vOp` arithmetic, and run unchanged on a [`GraphSpace`] or an [`AssembledSpace`].

use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{Mbk, Scene, SimError, SimResult, VecId};
use settee_linalg::CsrMatrix;

/// Vectors and the operator `A` of a linear system.
pub trait VectorSpace {
    /// A handle to one vector.
    type V: Copy + PartialEq;
    /// A new temporary vector, zero-filled.
    fn alloc(&mut self) -> Self::V;
    /// Releases a temporary.
    fn free(&mut self, v: Self::V);
    /// SOFA's `vOp(r, a, b, k)`: `r = a + b·k` with `None` operands meaning zero (see the mechanics
    /// spec §1.5; `r = r + b·k` does not form `b·1`, `r = a + r·k` scales `r` in place first).
    fn v_op(&mut self, r: Self::V, a: Option<Self::V>, b: Option<Self::V>, k: f64);
    /// `a·b`.
    fn dot(&mut self, a: Self::V, b: Self::V) -> f64;
    /// `q = A·p`.
    fn mul(&mut self, p: Self::V, q: Self::V) -> SimResult;
}

/// SOFA's `GraphScattered` vectors: multi-vectors of the scope's states, `A = P(mM + bB + kK)`
/// applied matrix-free through the force fields.
pub struct GraphSpace<'a> {
    pub scene: &'a mut Scene,
    pub scope: &'a MechScope,
    pub factors: Mbk,
}

impl<'a> GraphSpace<'a> {
    pub fn new(scene: &'a mut Scene, scope: &'a MechScope, factors: Mbk) -> Self {
        GraphSpace { scene, scope, factors }
    }
}

impl VectorSpace for GraphSpace<'_> {
    type V = VecId;
    fn alloc(&mut self) -> VecId {
        mech::alloc_deriv(self.scene, self.scope)
    }
    fn free(&mut self, v: VecId) {
        mech::free_vec(self.scene, self.scope, v)
    }
    fn v_op(&mut self, r: VecId, a: Option<VecId>, b: Option<VecId>, k: f64) {
        mech::v_op(self.scene, self.scope, r, a, b, k)
    }
    fn dot(&mut self, a: VecId, b: VecId) -> f64 {
        mech::v_dot(self.scene, self.scope, a, b)
    }
    fn mul(&mut self, p: VecId, q: VecId) -> SimResult {
        mech::mbk_product(self.scene, self.scope, self.factors, p, q)
    }
}

/// SOFA's `FullVector`s with an assembled CRS matrix: the product is the row-by-row CRS product,
/// dot products are sequential sums over all entries.
pub struct AssembledSpace<'a> {
    a: &'a CsrMatrix,
    vecs: Vec<Vec<f64>>,
    live: Vec<bool>,
}

impl<'a> AssembledSpace<'a> {
    /// Handle of the solution vector given to [`AssembledSpace::new`].
    pub const X: usize = 0;
    /// Handle of the right-hand side given to [`AssembledSpace::new`].
    pub const B: usize = 1;

    /// A space over the square matrix `a` holding the solution `x` (handle [`Self::X`]) and the
    /// right-hand side `b` (handle [`Self::B`]).
    pub fn new(a: &'a CsrMatrix, x: Vec<f64>, b: Vec<f64>) -> SimResult<Self> {
        Self::reusing(a, x, b, KeptVectors::default())
    }

    /// As [`Self::new`], the temporaries taken from `kept` (the vectors of an earlier space,
    /// [`Self::into_all`]): a solver that keeps them allocates nothing per solve.
    pub fn reusing(a: &'a CsrMatrix, x: Vec<f64>, b: Vec<f64>, kept: KeptVectors) -> SimResult<Self> {
        let n = a.nrows();
        if a.ncols() != n || x.len() != n || b.len() != n {
            return Err(SimError::new(format!(
                "linear system dimensions do not match: matrix {}x{}, solution {}, right-hand side {}",
                a.nrows(),
                a.ncols(),
                x.len(),
                b.len()
            )));
        }
        let KeptVectors { vecs: mut kept, mut live } = kept;
        if kept.len() < 2 {
            kept.resize_with(2, Vec::new);
        }
        kept[Self::X] = x;
        kept[Self::B] = b;
        live.clear();
        live.extend((0..kept.len()).map(|i| i <= Self::B));
        Ok(AssembledSpace { a, vecs: kept, live })
    }

    /// Reads a vector.
    pub fn vec(&self, v: usize) -> &[f64] {
        &self.vecs[v]
    }

    /// Gives back the solution and right-hand side vectors.
    pub fn into_parts(mut self) -> (Vec<f64>, Vec<f64>) {
        (std::mem::take(&mut self.vecs[Self::X]), std::mem::take(&mut self.vecs[Self::B]))
    }

    /// Gives back the solution, the right-hand side and every vector (for [`Self::reusing`]).
    pub fn into_all(mut self) -> (Vec<f64>, Vec<f64>, KeptVectors) {
        let (x, b) = (std::mem::take(&mut self.vecs[Self::X]), std::mem::take(&mut self.vecs[Self::B]));
        (x, b, KeptVectors { vecs: self.vecs, live: self.live })
    }
}

/// The vectors of a finished [`AssembledSpace`], for the next one to reuse.
#[derive(Clone, Debug, Default)]
pub struct KeptVectors {
    vecs: Vec<Vec<f64>>,
    live: Vec<bool>,
}

fn scale(v: &mut [f64], k: f64) {
    for x in v {
        *x *= k;
    }
}

fn add_scaled(r: &mut [f64], b: &[f64], k: f64) {
    if k == 1.0 {
        for (x, y) in r.iter_mut().zip(b) {
            *x += *y;
        }
    } else {
        for (x, y) in r.iter_mut().zip(b) {
            *x += *y * k;
        }
    }
}

impl VectorSpace for AssembledSpace<'_> {
    type V = usize;
    fn alloc(&mut self) -> usize {
        let n = self.a.nrows();
        if let Some(i) = self.live.iter().position(|l| !l) {
            self.live[i] = true;
            self.vecs[i].clear();
            self.vecs[i].resize(n, 0.0);
            return i;
        }
        self.vecs.push(vec![0.0; n]);
        self.live.push(true);
        self.vecs.len() - 1
    }
    fn free(&mut self, v: usize) {
        if v > Self::B {
            self.live[v] = false;
        }
    }
    fn v_op(&mut self, r: usize, a: Option<usize>, b: Option<usize>, k: f64) {
        let mut rv = std::mem::take(&mut self.vecs[r]);
        match (a, b) {
            (None, None) => rv.fill(0.0),
            (None, Some(b)) if b == r => scale(&mut rv, k),
            (None, Some(b)) => {
                rv.copy_from_slice(&self.vecs[b]);
                scale(&mut rv, k);
            }
            (Some(a), None) => {
                if a != r {
                    rv.copy_from_slice(&self.vecs[a]);
                }
            }
            (Some(a), Some(b)) if a == r => {
                if b == r {
                    let tmp = rv.clone();
                    add_scaled(&mut rv, &tmp, k);
                } else {
                    add_scaled(&mut rv, &self.vecs[b], k);
                }
            }
            (Some(a), Some(b)) if b == r => {
                if k != 1.0 {
                    scale(&mut rv, k);
                }
                add_scaled(&mut rv, &self.vecs[a], 1.0);
            }
            (Some(a), Some(b)) => {
                rv.copy_from_slice(&self.vecs[a]);
                add_scaled(&mut rv, &self.vecs[b], k);
            }
        }
        self.vecs[r] = rv;
    }
    fn dot(&mut self, a: usize, b: usize) -> f64 {
        let mut s = 0.0;
        for (x, y) in self.vecs[a].iter().zip(&self.vecs[b]) {
            s += x * y;
        }
        s
    }
    fn mul(&mut self, p: usize, q: usize) -> SimResult {
        if p == q {
            return Err(SimError::new("internal error: matrix product in place"));
        }
        let mut qv = std::mem::take(&mut self.vecs[q]);
        let r = self.a.mul_vec(&self.vecs[p], &mut qv);
        self.vecs[q] = qv;
        r.map_err(|e| SimError::new(format!("matrix-vector product: {e}")))
    }
}

/// Allocates `N` temporaries, runs `f`, frees them (also when `f` fails).
pub(crate) fn with_temps<S: VectorSpace, const N: usize, R>(s: &mut S, f: impl FnOnce(&mut S, [S::V; N]) -> SimResult<R>) -> SimResult<R> {
    let arr: [S::V; N] = std::array::from_fn(|_| s.alloc());
    let r = f(s, arr);
    for v in arr.into_iter().rev() {
        s.free(v);
    }
    r
}
