//! Responses (compliant spec §8.2): factorizations of the free block `A = Sᵀ H S` used by the
//! Schur-complement and sequential KKT solvers.

use settee_core::{component, Component, InitCtx, NodeId, Scene, SimError, SimResult};
use settee_linalg::{CsrMatrix, DirectKind, DirectSolver, Ordering};

/// Registers the response classes.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<Response>();
}

/// Which factorization of A, as data.
#[derive(Clone, Debug, PartialEq)]
pub enum ResponseKind {
    /// Sparse LDLᵀ / LLᵀ / LU (AMD ordering); `regularize` is added to the diagonal only when
    /// the first factorization fails.
    Direct { kind: DirectKind, regularize: f64 },
    /// `diag(A)⁻¹` (DiagonalResponse; LumpedResponse is the same as SOFA codes it).
    Diagonal,
    /// Conjugate gradients on A.
    Cg { iterations: usize, tolerance: f64 },
}

impl ResponseKind {
    /// The default response of a KKT solver that finds none: LDLᵀ for symmetric solvers, LU
    /// otherwise.
    pub fn default_for(symmetric: bool) -> ResponseKind {
        ResponseKind::Direct { kind: if symmetric { DirectKind::Ldlt } else { DirectKind::Lu }, regularize: f64::EPSILON }
    }
}

/// The Data of the direct responses (`LDLTResponse`, `LLTResponse`, `LUResponse`).
#[settee_core::data_group(data = {
    /// added to the diagonal only when the first factorization fails
    regularize: Real = "2.220446049250313e-16",
    /// factor once and reuse (accepted; Settee refactors every step)
    constant: Bool = "false",
    /// reuse the symbolic analysis while the pattern is unchanged (always done)
    trackSparsityPattern: Bool = "false",
})]
pub struct DirectResponseData;

/// A response component: its Data, read at init into a [`ResponseKind`]. Responses play no
/// role: they are found by the KKT solvers of their node ([`find_response`]).
#[component(
    class(
        name = "LDLTResponse", module = "Compliant",
        description = "Response of the KKT solvers: sparse LDLᵀ of the free block of H.",
        create = |_| Response { class: "LDLTResponse", kind: ResponseKind::Diagonal },
        inherit = [DirectResponseData],
    ),
    class(
        name = "LLTResponse", module = "Compliant",
        description = "Response of the KKT solvers: sparse Cholesky LLᵀ of the free block of H.",
        create = |_| Response { class: "LLTResponse", kind: ResponseKind::Diagonal },
        inherit = [DirectResponseData],
    ),
    class(
        name = "LUResponse", module = "Compliant",
        description = "Response of the KKT solvers: sparse LU of the free block of H.",
        create = |_| Response { class: "LUResponse", kind: ResponseKind::Diagonal },
        inherit = [DirectResponseData],
    ),
    class(
        name = "DiagonalResponse", module = "Compliant",
        description = "Response of the KKT solvers: the inverse of the diagonal of H.",
        create = |_| Response { class: "DiagonalResponse", kind: ResponseKind::Diagonal },
        data = {
            /// factor once and reuse (accepted; Settee refactors every step)
            constant: Bool = "false",
        },
    ),
    class(
        name = "LumpedResponse", module = "Compliant",
        description = "As SOFA codes it, the same as DiagonalResponse.",
        create = |_| Response { class: "LumpedResponse", kind: ResponseKind::Diagonal },
        data = {
            /// factor once and reuse (accepted; Settee refactors every step)
            constant: Bool = "false",
        },
    ),
    class(
        name = "EigenCGResponse", module = "Compliant",
        description = "Response of the KKT solvers: conjugate gradients on the free block of H.",
        create = |_| Response { class: "EigenCGResponse", kind: ResponseKind::Diagonal },
        data = {
            /// unused by CG
            regularize: Real = "2.220446049250313e-16",
            /// accepted
            constant: Bool = "false",
            /// accepted
            trackSparsityPattern: Bool = "false",
            /// CG iterations
            iterations: Int = "100",
            /// CG residual tolerance
            tolerance: Real = "1e-6",
        },
    ),
)]
#[derive(Clone)]
pub struct Response {
    class: &'static str,
    kind: ResponseKind,
}

impl Component for Response {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        self.kind = match self.class {
            "LDLTResponse" => ResponseKind::Direct { kind: DirectKind::Ldlt, regularize: d.get(DirectResponseData::REGULARIZE) },
            "LLTResponse" => ResponseKind::Direct { kind: DirectKind::Llt, regularize: d.get(DirectResponseData::REGULARIZE) },
            "LUResponse" => ResponseKind::Direct { kind: DirectKind::Lu, regularize: d.get(DirectResponseData::REGULARIZE) },
            "EigenCGResponse" => {
                let it = d.get(Self::ITERATIONS);
                if it < 1 {
                    return Err(cx.error(format!("iterations = {it}: CG needs at least one iteration")));
                }
                ResponseKind::Cg { iterations: it as usize, tolerance: d.get(Self::TOLERANCE) }
            }
            _ => ResponseKind::Diagonal,
        };
        Ok(())
    }
}

/// The response of `node`: the first response component there (`None` when there is none).
pub fn find_response(scene: &Scene, node: NodeId) -> Option<ResponseKind> {
    scene.node(node).objects.iter().find_map(|&c| scene.get::<Response>(c).map(|r| r.kind.clone()))
}

/// A factorized free block.
#[derive(Clone)]
pub struct Factor {
    kind: ResponseKind,
    direct: Option<DirectSolver>,
    inv_diag: Vec<f64>,
    /// A was diagonal (a lumped mass without stiffness): every kind solves it as its diagonal.
    diagonal: bool,
    a: Option<CsrMatrix>,
}

impl Factor {
    pub fn new(kind: ResponseKind) -> Factor {
        Factor { kind, direct: None, inv_diag: Vec::new(), diagonal: false, a: None }
    }

    /// `diag(A)⁻¹` when A is diagonal (or the response is DiagonalResponse): then `A⁻¹ b` is
    /// an entry-wise product, and solvers can apply it to sparse vectors directly.
    pub fn diagonal_inverse(&self) -> Option<&[f64]> {
        (self.diagonal || self.kind == ResponseKind::Diagonal).then_some(self.inv_diag.as_slice())
    }

    pub fn kind(&self) -> &ResponseKind {
        &self.kind
    }

    /// Factors `a`. A singular block is an error naming what makes it singular.
    pub fn factor(&mut self, a: &CsrMatrix) -> Result<(), SimError> {
        self.diagonal = (0..a.nrows()).all(|i| a.row_cols(i).iter().all(|&j| j == i));
        if self.diagonal && matches!(self.kind, ResponseKind::Direct { .. } | ResponseKind::Cg { .. }) {
            // Any factorization of a diagonal matrix is its diagonal.
            let d = a.diagonal();
            if let Some(i) = d.iter().position(|&v| v == 0.0) {
                return Err(singular_response(&format!("the diagonal of H is zero at free DOF {i}")));
            }
            self.inv_diag = d.iter().map(|&v| 1.0 / v).collect();
            return Ok(());
        }
        match self.kind.clone() {
            ResponseKind::Direct { kind, regularize } => {
                let solver = self.direct.get_or_insert_with(|| DirectSolver::new(kind, Ordering::Amd));
                if solver.factorize(a).is_err() {
                    // SOFA regularises only when the first factorization fails.
                    let n = a.nrows();
                    let mut t: Vec<(usize, usize, f64)> = a.iter().collect();
                    t.extend((0..n).map(|i| (i, i, regularize)));
                    let r = CsrMatrix::from_triplets(n, n, &t).map_err(|e| SimError::new(e.to_string()))?;
                    solver.factorize(&r).map_err(|e| singular_response(&e.to_string()))?;
                }
            }
            ResponseKind::Diagonal => {
                self.inv_diag = a.diagonal().iter().map(|&d| if d != 0.0 { 1.0 / d } else { 0.0 }).collect();
                if let Some(i) = a.diagonal().iter().position(|&d| d == 0.0) {
                    return Err(singular_response(&format!("the diagonal of H is zero at free DOF {i}")));
                }
            }
            ResponseKind::Cg { .. } => self.a = Some(a.clone()),
        }
        Ok(())
    }

    /// `x = A⁻¹ b`.
    pub fn solve(&self, b: &[f64], x: &mut [f64]) -> Result<(), SimError> {
        if self.diagonal {
            for ((xi, bi), di) in x.iter_mut().zip(b).zip(&self.inv_diag) {
                *xi = bi * di;
            }
            return Ok(());
        }
        match &self.kind {
            ResponseKind::Direct { .. } => {
                let s = self.direct.as_ref().ok_or_else(|| SimError::new("the response is not factorized"))?;
                s.solve(b, x).map_err(|e| SimError::new(format!("response solve: {e}")))
            }
            ResponseKind::Diagonal => {
                for ((xi, bi), di) in x.iter_mut().zip(b).zip(&self.inv_diag) {
                    *xi = bi * di;
                }
                Ok(())
            }
            ResponseKind::Cg { iterations, tolerance } => {
                let a = self.a.as_ref().ok_or_else(|| SimError::new("the response is not factorized"))?;
                x.fill(0.0);
                crate::direct::cg(a, b, x, *iterations, *tolerance);
                Ok(())
            }
        }
    }
}

fn singular_response(detail: &str) -> SimError {
    SimError::new(format!("the free block of the implicit matrix H cannot be factorized ({detail})"))
        .hint("a DOF has no mass or stiffness: give every independent object a mass, or fix it with a FixedConstraint")
}
