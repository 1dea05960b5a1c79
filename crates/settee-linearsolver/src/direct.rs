//! Direct sparse solvers over the assembled system (mechanics spec §4.5): `SparseLDLSolver`,
//! `EigenSimplicialLDLT`, `EigenSimplicialLLT`, `EigenSparseLU`, `EigenSparseQR`.
//!
//! Every step: assemble `P(mM + bB + kK)P` with the ODE factors (pattern kept from step to step),
//! copy its non-zero entries into a scalar CRS matrix (SOFA's `copyNonZeros`), factorise (the
//! symbolic analysis is redone only when that pattern changes, unless
//! `precomputeSymbolicDecomposition` is false), solve for the gathered right-hand side and scatter
//! the solution into the states.

use settee_core::data::{decl, DataKind::*};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{
    component_any, Component, ComponentClass, ComponentId, CreateArgs, DataDecl, InitCtx, LinkDecl, Mbk, Roles, Scene, SimResult, TemplateRule,
    Value, VecId,
};
use settee_linalg::{CsrMatrix, DirectKind, DirectSolver, LinalgError, Ordering};

use crate::common::{step_error, AssembledSystem, DIRECT_TEMPLATES, LINEAR_SYSTEM_LINK, MATRIX_SOLVER_DATA, ORDERING_LINK};
use crate::ordering::resolve_ordering;

static LDL_DATA: &[DataDecl] = &[
    decl(
        "precomputeSymbolicDecomposition",
        Bool,
        "true",
        "If true the solver will reuse the precomputed symbolic decomposition. Otherwise it will recompute it at each step.",
    ),
    decl(
        "L_nnz",
        Int,
        "0",
        "Number of non-zero values in the lower triangular matrix of the factorization. The lower, the faster the system is solved.",
    ),
];

settee_core::data_refs! {
    static LDL_READS;
    PRECOMPUTE_SYMBOLIC_DECOMPOSITION: Bool = "precomputeSymbolicDecomposition";
}

static LINKS: &[LinkDecl] = &[LINEAR_SYSTEM_LINK, ORDERING_LINK];

const fn class(
    name: &'static str,
    description: &'static str,
    data: &'static [&'static [DataDecl]],
    create: fn(&CreateArgs) -> Box<dyn Component>,
    reads: &'static [settee_core::DataUse],
) -> ComponentClass {
    ComponentClass {
        name,
        description,
        roles: Roles::LINEAR_SOLVER,
        templates: DIRECT_TEMPLATES,
        default_template: "CompressedRowSparseMatrixd",
        template_rule: TemplateRule::Default,
        data,
        links: LINKS,
        create,
        preparse: None,
        no_src_link: &[],
        reads,
    }
}

pub static SPARSE_LDL: ComponentClass = class(
    "SparseLDLSolver",
    "Direct Linear Solver using a Sparse LDL^T factorization.",
    &[MATRIX_SOLVER_DATA, LDL_DATA],
    |_| Box::new(DirectLinearSolver::new(DirectKind::Ldlt, true)),
    LDL_READS,
);
pub static EIGEN_LDLT: ComponentClass = class(
    "EigenSimplicialLDLT",
    "Direct Linear Solver using a Simplicial LDLT factorization of the Eigen library",
    &[MATRIX_SOLVER_DATA],
    |_| Box::new(DirectLinearSolver::new(DirectKind::Ldlt, false)),
    &[],
);
pub static EIGEN_LLT: ComponentClass = class(
    "EigenSimplicialLLT",
    "Direct Linear Solver using a Simplicial LLT factorization of the Eigen library",
    &[MATRIX_SOLVER_DATA],
    |_| Box::new(DirectLinearSolver::new(DirectKind::Llt, false)),
    &[],
);
pub static EIGEN_LU: ComponentClass = class(
    "EigenSparseLU",
    "Direct Linear Solver using a Sparse LU factorization of the Eigen library",
    &[MATRIX_SOLVER_DATA],
    |_| Box::new(DirectLinearSolver::new(DirectKind::Lu, false)),
    &[],
);
pub static EIGEN_QR: ComponentClass = class(
    "EigenSparseQR",
    "Direct Linear Solver using a Sparse QR factorization of the Eigen library",
    &[MATRIX_SOLVER_DATA],
    |_| Box::new(DirectLinearSolver::new(DirectKind::Qr, false)),
    &[],
);

/// Copies the entries of `a` that are not exactly zero (SOFA's `copyNonZeros` + `compress`).
pub fn copy_non_zeros(a: &CsrMatrix) -> Result<CsrMatrix, LinalgError> {
    let n = a.nrows();
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col_idx = Vec::with_capacity(a.nnz());
    let mut values = Vec::with_capacity(a.nnz());
    row_ptr.push(0);
    for i in 0..n {
        for (c, v) in a.row(i) {
            if v != 0.0 {
                col_idx.push(c);
                values.push(v);
            }
        }
        row_ptr.push(col_idx.len());
    }
    CsrMatrix::try_from_parts(n, a.ncols(), row_ptr, col_idx, values)
}

/// One of the direct sparse solvers.
pub struct DirectLinearSolver {
    kind: DirectKind,
    /// SparseLDLSolver: has `precomputeSymbolicDecomposition` and `L_nnz`.
    has_ldl_data: bool,
    ordering: Ordering,
    reuse_symbolic: bool,
    system: AssembledSystem,
    solver: Option<DirectSolver>,
    me: Option<ComponentId>,
    factorizations: usize,
}

impl DirectLinearSolver {
    fn new(kind: DirectKind, has_ldl_data: bool) -> Self {
        DirectLinearSolver {
            kind,
            has_ldl_data,
            ordering: Ordering::Amd,
            reuse_symbolic: true,
            system: AssembledSystem::default(),
            solver: None,
            me: None,
            factorizations: 0,
        }
    }
    pub fn kind(&self) -> DirectKind {
        self.kind
    }
    pub fn ordering(&self) -> Ordering {
        self.ordering
    }
    /// Number of numeric factorisations performed.
    pub fn factorizations(&self) -> usize {
        self.factorizations
    }
    /// Number of symbolic analyses performed by the current factorisation object.
    pub fn symbolic_analyses(&self) -> usize {
        self.solver.as_ref().map_or(0, |s| s.symbolic_count())
    }
}

impl Component for DirectLinearSolver {
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.system.set_link(cx);
        let (ordering, _) = resolve_ordering(cx)?;
        self.ordering = ordering;
        self.reuse_symbolic = !self.has_ldl_data || cx.data().get(PRECOMPUTE_SYMBOLIC_DECOMPOSITION);
        self.solver = None;
        self.factorizations = 0;
        Ok(())
    }

    fn linear_solver(&mut self) -> Option<&mut dyn settee_core::component::LinearSolver> {
        Some(self)
    }
}

fn describe(e: &LinalgError) -> (&'static str, String) {
    let hint = match e {
        LinalgError::ZeroPivot { .. } | LinalgError::Singular(_) => {
            "the system matrix is singular: make sure every DOF has a mass, a stiffness or a fixed constraint"
        }
        LinalgError::NotPositiveDefinite { .. } => {
            "EigenSimplicialLLT needs a symmetric positive definite matrix; use SparseLDLSolver or EigenSparseLU for indefinite systems"
        }
        _ => "the assembled system matrix cannot be factorised",
    };
    (hint, e.to_string())
}

impl settee_core::component::LinearSolver for DirectLinearSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult {
        self.assemble_and_factorize(scene, scope, factors)?;
        let me = self.me;
        let sys = &mut self.system;
        mech::gather(scene, scope, rhs, &mut sys.b);
        sys.x.clear();
        sys.x.resize(sys.b.len(), 0.0);
        let solver = self.solver.as_ref().ok_or_else(|| step_error(scene, me, "solve before factorization"))?;
        if let Err(e) = solver.solve(&sys.b, &mut sys.x) {
            let (hint, msg) = describe(&e);
            return Err(step_error(scene, me, format!("solving the factorised system failed: {msg}")).hint(hint));
        }
        mech::scatter(scene, scope, solution, &sys.x);
        Ok(())
    }
}

impl DirectLinearSolver {
    /// Assembles `P(mM + bB + kK)P` and factorises it.
    fn assemble_and_factorize(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        let me = self.me;
        let builder = self.system.assemble(scene, scope, factors)?;
        let a = copy_non_zeros(builder.matrix()).map_err(|e| step_error(scene, me, format!("copying the system matrix: {e}")))?;
        if !self.reuse_symbolic {
            self.solver = None;
        }
        let (kind, ordering) = (self.kind, self.ordering);
        let solver = self.solver.get_or_insert_with(|| DirectSolver::new(kind, ordering));
        if let Err(e) = solver.factorize(&a) {
            let (hint, msg) = describe(&e);
            return Err(step_error(scene, me, format!("factorization of the {}x{} system failed: {msg}", a.nrows(), a.ncols())).hint(hint));
        }
        self.factorizations += 1;
        if self.has_ldl_data {
            if let (Some(n), Some(c)) = (solver.l_nnz(), me) {
                scene.entry_mut(c).data.set("L_nnz", Value::Int(n as i64));
            }
        }
        Ok(())
    }
}

impl crate::preconditioner::Preconditioner for DirectLinearSolver {
    fn refresh(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        self.assemble_and_factorize(scene, scope, factors)
    }
    fn apply(&mut self, scene: &mut Scene, r: &[f64], z: &mut [f64]) -> SimResult {
        let me = self.me;
        let solver = self.solver.as_ref().ok_or_else(|| step_error(scene, me, "used as a preconditioner before its matrix was built"))?;
        solver.solve(r, z).map_err(|e| {
            let (hint, msg) = describe(&e);
            step_error(scene, me, format!("solving the factorised system failed: {msg}")).hint(hint)
        })
    }
}
