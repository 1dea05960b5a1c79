//! Dense direct solvers over the assembled system: `SVDLinearSolver` (pseudo-inverse through a
//! singular value decomposition, singular values at or below `minSingularValue` treated as zero)
//! and `CholeskySolver` (dense `LLᵀ` factorisation, for symmetric positive definite systems).
//!
//! Every step: assemble `P(mM + bB + kK)P` with the ODE factors, copy it into a dense matrix,
//! decompose, and solve for the gathered right-hand side. The decompositions are nalgebra's (SOFA
//! uses Eigen's `JacobiSVD` and its own Cholesky loop): same solutions up to rounding.

use nalgebra::{DMatrix, DVector};
use settee_core::component::LinearSolver;
use settee_core::constraint::{ConstraintJacobian, DenseMatrix};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::role::LinearSystem;
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimError, SimResult, VecId};

use crate::common::{step_error, AssembledSystem, MatrixSolverData};

/// Which decomposition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DenseKind {
    Svd,
    Cholesky,
}

/// The decomposition of the last assembled matrix.
#[derive(Clone)]
enum Factors {
    Svd { u: DMatrix<f64>, v_t: DMatrix<f64>, inv_sigma: DVector<f64> },
    Cholesky(nalgebra::Cholesky<f64, nalgebra::Dyn>),
}

impl Factors {
    fn dim(&self) -> usize {
        match self {
            Factors::Svd { u, .. } => u.nrows(),
            Factors::Cholesky(c) => c.l_dirty().nrows(),
        }
    }

    fn solve(&self, b: &[f64], x: &mut [f64]) {
        let b = DVector::from_column_slice(b);
        let sol = match self {
            Factors::Svd { u, v_t, inv_sigma } => {
                let ut_b = u.tr_mul(&b).component_mul(inv_sigma);
                v_t.tr_mul(&ut_b)
            }
            Factors::Cholesky(c) => c.solve(&b),
        };
        x.copy_from_slice(sol.as_slice());
    }
}

/// One of the dense direct solvers.
#[component(
    roles = [LinearSolver],
    inherit = [MatrixSolverData],
    links = {
        /// The linear system to solve
        linearSystem: LinearSystem,
    },
    class(
        name = "SVDLinearSolver", module = "Sofa.Component.LinearSolver.Direct",
        description = "Linear system solver using a SVD decomposition of a dense matrix.",
        templates = ["FullMatrix", "CompressedRowSparseMatrixd", "CompressedRowSparseMatrixMat3x3d"],
        default_template = "FullMatrix",
        create = |_| DenseDirectSolver::new(DenseKind::Svd),
        inherit = [MatrixSolverData, Self],
        data = {
            /// Dump system state at each iteration (diagnostics only)
            verbose: Bool = "false",
            /// Threshold under which a singular value is set to 0, for the stabilization of ill-conditioned system.
            minSingularValue: Real = "1e-6",
            /// output: condition number of the matrix (largest over smallest singular value), computed at each solve
            conditionNumber: Real = "0",
        },
    ),
    class(
        name = "CholeskySolver", module = "Sofa.Component.LinearSolver.Direct",
        description = "Direct linear solver based on Cholesky factorization, for dense matrices.",
        templates = ["SparseMatrix", "FullMatrix"],
        default_template = "SparseMatrix",
        create = |_| DenseDirectSolver::new(DenseKind::Cholesky),
    ),
)]
#[derive(Clone)]
pub struct DenseDirectSolver {
    kind: DenseKind,
    min_singular_value: f64,
    system: AssembledSystem,
    factors: Option<Factors>,
    me: Option<ComponentId>,
}

impl DenseDirectSolver {
    fn new(kind: DenseKind) -> Self {
        DenseDirectSolver { kind, min_singular_value: 1e-6, system: AssembledSystem::default(), factors: None, me: None }
    }

    pub fn kind(&self) -> DenseKind {
        self.kind
    }

    /// Assembles the system, copies it into a dense matrix and decomposes it.
    fn assemble_and_decompose(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        let me = self.me;
        let builder = self.system.assemble(scene, scope, factors)?;
        let a = builder.matrix();
        let n = a.nrows();
        let dense = DMatrix::from_row_slice(n, a.ncols(), &a.to_dense());
        self.factors = Some(match self.kind {
            DenseKind::Svd => {
                let svd = dense.svd(true, true);
                let (Some(u), Some(v_t)) = (svd.u, svd.v_t) else {
                    return Err(step_error(scene, me, "the singular value decomposition did not converge"));
                };
                let s = &svd.singular_values;
                if let (Some(c), false) = (me, s.is_empty()) {
                    let condition = s.max() / s.min();
                    scene.entry_mut(c).data.put(Self::CONDITION_NUMBER, condition);
                }
                let t = self.min_singular_value;
                let inv_sigma = s.map(|v| if v > t { 1.0 / v } else { 0.0 });
                Factors::Svd { u, v_t, inv_sigma }
            }
            DenseKind::Cholesky => match dense.cholesky() {
                Some(c) => Factors::Cholesky(c),
                None => {
                    return Err(step_error(scene, me, format!("the {n}x{n} system matrix is not positive definite: no Cholesky factorization"))
                        .hint("CholeskySolver needs a symmetric positive definite system; SVDLinearSolver or SparseLDLSolver accept others"));
                }
            },
        });
        Ok(())
    }

    fn solve_into(&mut self, scene: &mut Scene, scope: &MechScope, rhs: VecId, solution: VecId) -> SimResult {
        let me = self.me;
        let factors = match &self.factors {
            Some(f) if f.dim() == scope.size => f,
            _ => return Err(step_error(scene, me, "no decomposed system of this size yet")),
        };
        let sys = &mut self.system;
        mech::gather(scene, scope, rhs, &mut sys.b);
        sys.x.clear();
        sys.x.resize(sys.b.len(), 0.0);
        factors.solve(&sys.b, &mut sys.x);
        mech::scatter(scene, scope, solution, &sys.x);
        Ok(())
    }
}

impl Component for DenseDirectSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.system.set_link(cx);
        if self.kind == DenseKind::Svd {
            self.min_singular_value = cx.data().get(Self::MIN_SINGULAR_VALUE);
        }
        self.factors = None;
        Ok(())
    }
}

impl LinearSolver for DenseDirectSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
        self.assemble_and_decompose(scene, scope, factors)?;
        self.solve_into(scene, scope, rhs, solution)
    }

    fn solve_again(&mut self, scene: &mut Scene, scope: &MechScope, rhs: VecId, solution: VecId) -> SimResult {
        self.solve_into(scene, scope, rhs, solution)
    }

    /// SOFA's generic `MatrixLinearSolver` loop: one solve per constraint row.
    fn add_jminvjt(&mut self, scene: &mut Scene, _scope: &MechScope, j: &ConstraintJacobian, factor: f64, w: &mut DenseMatrix) -> SimResult {
        let me = self.me;
        let Some(factors) = &self.factors else {
            return Err(step_error(scene, me, "no decomposed system yet: the constraint correction runs before the free motion solved it"));
        };
        if j.ncols != factors.dim() {
            return Err(step_error(scene, me, format!("constraint rows have {} columns but the system has {} unknowns", j.ncols, factors.dim())));
        }
        j.add_jminvjt_generic(w, factor, true, |rhs, y| {
            y.clear();
            y.resize(rhs.len(), 0.0);
            factors.solve(rhs, y);
            Ok::<(), SimError>(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svd_pseudo_inverse_drops_small_singular_values() {
        // diag(4, 1e-9) rotated by 30°: the second direction is dropped
        let (c, s) = (30f64.to_radians().cos(), 30f64.to_radians().sin());
        let r = DMatrix::from_row_slice(2, 2, &[c, -s, s, c]);
        let a = &r * DMatrix::from_diagonal(&DVector::from_vec(vec![4.0, 1e-9])) * r.transpose();
        let svd = a.svd(true, true);
        let inv_sigma = svd.singular_values.map(|v| if v > 1e-6 { 1.0 / v } else { 0.0 });
        let f = Factors::Svd { u: svd.u.unwrap(), v_t: svd.v_t.unwrap(), inv_sigma };
        let mut x = [0.0; 2];
        // b along the kept direction (c, s): x = b/4; along the dropped one: 0
        f.solve(&[c, s], &mut x);
        assert!((x[0] - c / 4.0).abs() < 1e-15 && (x[1] - s / 4.0).abs() < 1e-15, "{x:?}");
        f.solve(&[-s, c], &mut x);
        assert!(x.iter().all(|v| v.abs() < 1e-9), "{x:?}");
    }
}
