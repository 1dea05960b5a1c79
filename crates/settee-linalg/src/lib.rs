//! # settee-linalg
//!
//! Numerical building blocks of SOFA's assembled linear systems
//! (spec `mechanics.md` §4), all in `f64` and deterministic:
//!
//! * [`CsrMatrix`] — compressed-row matrix with SOFA's CRS product
//!   ([`CsrMatrix::mul_vec`]) and `applyConstraint(ZeroDirichletCondition)`
//!   ([`CsrMatrix::apply_dirichlet`]);
//! * [`MatrixBuilder`] — scattered assembly with a sparsity pattern (and
//!   value-slot cache) reused from step to step;
//! * [`DirectSolver`] — sparse LDLᵀ and LLᵀ (own supernodal factorization,
//!   the factors of SOFA's `SparseLDLSolver` to round-off), LU / QR (faer),
//!   symbolic analysis redone only when the pattern changes; fill-reducing
//!   orderings by AMD, COLAMD or nested dissection ([`nested_dissection_ordering`]);
//!   [`dense_inverse`] for `PrecomputedLinearSolver`;
//! * [`invert3`] and friends for 3x3 block preconditioners.
//!
//! No public function panics on bad input: dimension mismatches and
//! numerical breakdowns are reported as [`LinalgError`].

#![warn(missing_docs)]

mod builder;
mod csr;
mod dense;
mod direct;
mod error;
mod ldlt;
mod nested_dissection;

pub use builder::MatrixBuilder;
pub use csr::{CsrMatrix, RowIter};
pub use dense::{det3, gemv_transposed, invert3, mul3_vec, mul3t_vec, transpose_dense, RowPanels};
pub use direct::{dense_inverse, DirectKind, DirectSolver, Ordering};
pub use error::{LinalgError, Result};
pub use nested_dissection::nested_dissection_ordering;
