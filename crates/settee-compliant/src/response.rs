//! Responses (compliant spec §8.2): factorizations of the free block `A = Sᵀ H S` used by the
//! Schur-complement and sequential KKT solvers.

use settee_core::data::{decl, DataKind::*};
use settee_core::{component_any, Component, ComponentClass, CreateArgs, DataDecl, InitCtx, NodeId, Roles, Scene, SimError, SimResult, TemplateRule};
use settee_linalg::{CsrMatrix, DirectKind, DirectSolver, Ordering};

/// Registers the response classes.
pub fn register(f: &mut settee_core::Factory) {
    for c in [&LDLT_RESPONSE, &LLT_RESPONSE, &LU_RESPONSE, &DIAGONAL_RESPONSE, &LUMPED_RESPONSE, &EIGEN_CG_RESPONSE] {
        f.register(c);
    }
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

static DIRECT_DATA: &[DataDecl] = &[
    decl("regularize", Real, "2.220446049250313e-16", "added to the diagonal only when the first factorization fails"),
    decl("constant", Bool, "false", "factor once and reuse (accepted; Settee refactors every step)"),
    decl("trackSparsityPattern", Bool, "false", "reuse the symbolic analysis while the pattern is unchanged (always done)"),
];
static DIAGONAL_DATA: &[DataDecl] = &[decl("constant", Bool, "false", "factor once and reuse (accepted; Settee refactors every step)")];
static CG_DATA: &[DataDecl] = &[
    decl("regularize", Real, "2.220446049250313e-16", "unused by CG"),
    decl("constant", Bool, "false", "accepted"),
    decl("trackSparsityPattern", Bool, "false", "accepted"),
    decl("iterations", Int, "100", "CG iterations"),
    decl("tolerance", Real, "1e-6", "CG residual tolerance"),
];
settee_core::data_refs! {
    static DIRECT_READS;
    REGULARIZE: Real = "regularize";
}
settee_core::data_refs! {
    static CG_READS;
    CG_ITERATIONS: Int = "iterations";
    CG_TOLERANCE: Real = "tolerance";
}
static NO_READS: &[settee_core::DataUse] = &[];

/// Role marker: responses are found by the KKT solvers of their node.
const RESPONSE_ROLES: Roles = Roles::NONE;

macro_rules! response_class {
    ($stat:ident, $name:literal, $desc:literal, $data:expr, $reads:expr) => {
        pub static $stat: ComponentClass = ComponentClass {
            name: $name,
            description: $desc,
            roles: RESPONSE_ROLES,
            templates: &[],
            default_template: "",
            template_rule: TemplateRule::Default,
            data: &[$data],
            links: &[],
            create: |_: &CreateArgs| Box::new(Response { class: $name, kind: ResponseKind::Diagonal }),
            preparse: None,
            no_src_link: &[],
            reads: $reads,
        };
    };
}

response_class!(LDLT_RESPONSE, "LDLTResponse", "Response of the KKT solvers: sparse LDLᵀ of the free block of H.", DIRECT_DATA, DIRECT_READS);
response_class!(LLT_RESPONSE, "LLTResponse", "Response of the KKT solvers: sparse Cholesky LLᵀ of the free block of H.", DIRECT_DATA, DIRECT_READS);
response_class!(LU_RESPONSE, "LUResponse", "Response of the KKT solvers: sparse LU of the free block of H.", DIRECT_DATA, DIRECT_READS);
response_class!(DIAGONAL_RESPONSE, "DiagonalResponse", "Response of the KKT solvers: the inverse of the diagonal of H.", DIAGONAL_DATA, NO_READS);
response_class!(LUMPED_RESPONSE, "LumpedResponse", "As SOFA codes it, the same as DiagonalResponse.", DIAGONAL_DATA, NO_READS);
response_class!(EIGEN_CG_RESPONSE, "EigenCGResponse", "Response of the KKT solvers: conjugate gradients on the free block of H.", CG_DATA, CG_READS);

/// A response component: its Data, read at init into a [`ResponseKind`].
pub struct Response {
    class: &'static str,
    kind: ResponseKind,
}

impl Component for Response {
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        self.kind = match self.class {
            "LDLTResponse" => ResponseKind::Direct { kind: DirectKind::Ldlt, regularize: d.get(REGULARIZE) },
            "LLTResponse" => ResponseKind::Direct { kind: DirectKind::Llt, regularize: d.get(REGULARIZE) },
            "LUResponse" => ResponseKind::Direct { kind: DirectKind::Lu, regularize: d.get(REGULARIZE) },
            "EigenCGResponse" => {
                let it = d.get(CG_ITERATIONS);
                if it < 1 {
                    return Err(cx.error(format!("iterations = {it}: CG needs at least one iteration")));
                }
                ResponseKind::Cg { iterations: it as usize, tolerance: d.get(CG_TOLERANCE) }
            }
            _ => ResponseKind::Diagonal,
        };
        Ok(())
    }
}

/// The response of `node`: the first response component there (`None` when there is none).
pub fn find_response(scene: &Scene, node: NodeId) -> Option<ResponseKind> {
    scene.node(node).objects.iter().find_map(|&c| scene.entry(c).obj.as_ref()?.as_any().downcast_ref::<Response>().map(|r| r.kind.clone()))
}

/// A factorized free block.
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
