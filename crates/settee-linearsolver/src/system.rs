//! Linear-system components (mechanics spec §4.1). Settee's solvers assemble their own system
//! with the same algorithm, so these components only validate that their Data ask for that
//! standard behaviour — except for the systems a `CompositeLinearSystem` builds alongside the
//! solved one, which assemble their own (possibly partial) matrix.

use settee_core::component::link;
use settee_core::data::{decl, decl_alias, DataKind::*};
use settee_core::mechanics::{assemble_with, AssemblyOptions, MechScope};
use settee_core::{component_any, Component, ComponentClass, DataDecl, InitCtx, LinkDecl, Mbk, Roles, Scene, SimResult, TemplateRule};
use settee_linalg::{CsrMatrix, MatrixBuilder};

use crate::common::{unsupported, GRAPH_SCATTERED};

/// Data of SOFA's `BaseMatrixLinearSystem`.
static BASE_SYSTEM_DATA: &[DataDecl] = &[
    decl("matrixSize", Fixed(2), "0 0", "Size of the global matrix (output)"),
    decl("enableAssembly", Bool, "true", "Allows to assemble the system matrix"),
];

/// Data of `MatrixLinearSystem` (and `ConstantSparsityPatternSystem`).
static MATRIX_SYSTEM_DATA: &[DataDecl] = &[
    decl("assembleStiffness", Bool, "true", "If true, the stiffness is added to the global matrix"),
    decl("assembleMass", Bool, "true", "If true, the mass is added to the global matrix"),
    decl("assembleDamping", Bool, "true", "If true, the damping is added to the global matrix"),
    decl("assembleGeometricStiffness", Bool, "true", "If true, the geometric stiffness of mappings is added to the global matrix"),
    decl("applyProjectiveConstraints", Bool, "true", "If true, projective constraints are applied on the global matrix"),
    decl("applyMappedComponents", Bool, "true", "If true, mapped components contribute to the global matrix"),
    decl("checkIndices", Bool, "false", "If true, indices are verified before being added in to the global matrix, favoring security over speed"),
    decl(
        "parallelAssemblyIndependentMatrices",
        Bool,
        "false",
        "If true, independent matrices (global matrix vs mapped matrices) are assembled in parallel",
    ),
];

static SYSTEM_DATA: &[&[DataDecl]] = &[BASE_SYSTEM_DATA, MATRIX_SYSTEM_DATA];

settee_core::data_refs! {
    static SYSTEM_READS;
    ASSEMBLE_STIFFNESS: Bool = "assembleStiffness";
    ASSEMBLE_MASS: Bool = "assembleMass";
    ASSEMBLE_DAMPING: Bool = "assembleDamping";
    ASSEMBLE_GEOMETRIC_STIFFNESS: Bool = "assembleGeometricStiffness";
    APPLY_PROJECTIVE_CONSTRAINTS: Bool = "applyProjectiveConstraints";
    APPLY_MAPPED_COMPONENTS: Bool = "applyMappedComponents";
    ENABLE_ASSEMBLY: Bool = "enableAssembly";
}

/// Assembled-system templates (`MatrixLinearSystem` has no GraphScattered instance in Settee).
static SYSTEM_TEMPLATES: &[&str] = &[
    "CompressedRowSparseMatrixd",
    "CompressedRowSparseMatrixMat2x2d",
    "CompressedRowSparseMatrixMat3x3d",
    "CompressedRowSparseMatrixMat4x4d",
    "CompressedRowSparseMatrixMat6x6d",
    "CompressedRowSparseMatrixMat8x8d",
    "FullMatrix",
    "SparseMatrix",
    GRAPH_SCATTERED,
];

const fn system_class(name: &'static str, description: &'static str) -> ComponentClass {
    ComponentClass {
        name,
        description,
        roles: Roles::LINEAR_SYSTEM,
        templates: SYSTEM_TEMPLATES,
        default_template: "CompressedRowSparseMatrixd",
        template_rule: TemplateRule::Default,
        data: SYSTEM_DATA,
        links: &[],
        create: |_| Box::new(MatrixLinearSystem::default()),
        preparse: None,
        no_src_link: &[],
        reads: SYSTEM_READS,
    }
}

pub static MATRIX_LINEAR_SYSTEM: ComponentClass = system_class("MatrixLinearSystem", "Linear system");
pub static CONSTANT_SPARSITY_PATTERN_SYSTEM: ComponentClass = system_class(
    "ConstantSparsityPatternSystem",
    "Linear system supposing the sparsity pattern of the global matrix is constant (same numbers as MatrixLinearSystem)",
);

/// An accepted `MatrixLinearSystem`: the solvers assemble `P(mM + bB + kK)P` themselves. A
/// system built alongside the solved one by a `CompositeLinearSystem` keeps its own matrix
/// ([`MatrixLinearSystem::build`]), restricted by its Data.
#[derive(Default)]
pub struct MatrixLinearSystem {
    options: AssemblyOptions,
    enabled: bool,
    builder: Option<MatrixBuilder>,
    builds: usize,
}

impl MatrixLinearSystem {
    /// What the system assembles (from its `assemble*`/`apply*` Data).
    pub fn options(&self) -> &AssemblyOptions {
        &self.options
    }
    /// The matrix of the last [`Self::build`], if any.
    pub fn matrix(&self) -> Option<&CsrMatrix> {
        self.builder.as_ref().filter(|_| self.builds > 0).map(|b| b.matrix())
    }
    /// Number of builds since init.
    pub fn builds(&self) -> usize {
        self.builds
    }
    /// Assembles the selected contributions of `m·M + b·B + k·K` over `scope` (nothing when
    /// `enableAssembly` is false).
    pub fn build(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        if !self.enabled {
            return Ok(());
        }
        let b = self.builder.get_or_insert_with(|| MatrixBuilder::new(scope.size));
        assemble_with(scene, scope, factors, &self.options, b)?;
        self.builds += 1;
        Ok(())
    }
}

impl Component for MatrixLinearSystem {
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        self.options = AssemblyOptions {
            stiffness: d.get(ASSEMBLE_STIFFNESS),
            mass: d.get(ASSEMBLE_MASS),
            damping: d.get(ASSEMBLE_DAMPING),
            geometric_stiffness: d.get(ASSEMBLE_GEOMETRIC_STIFFNESS),
            projective_constraints: d.get(APPLY_PROJECTIVE_CONSTRAINTS),
            mapped_components: d.get(APPLY_MAPPED_COMPONENTS),
            ignore_outside_inputs: false,
        };
        self.enabled = d.get(ENABLE_ASSEMBLY);
        self.builder = None;
        self.builds = 0;
        if crate::composite::is_side_system(cx.scene, cx.id) {
            // Built by a CompositeLinearSystem next to the solved system: any selection works.
            return Ok(());
        }
        let d = cx.data();
        for r in [ENABLE_ASSEMBLY, ASSEMBLE_STIFFNESS, ASSEMBLE_MASS, ASSEMBLE_DAMPING, APPLY_PROJECTIVE_CONSTRAINTS, APPLY_MAPPED_COMPONENTS] {
            let name = r.name();
            if !d.get(r) {
                return Err(unsupported(cx.error(format!("{name}=false is not supported: Settee's solvers always assemble the whole system")).hint(
                    format!("remove {name}=\"false\" (the linear solvers then assemble stiffness, mass, damping and projective constraints)"),
                )));
            }
        }
        Ok(())
    }
}

// ----- PreconditionedMatrixFreeSystem -----------------------------------------------------------

static PRECONDITIONED_DATA: &[DataDecl] = &[decl_alias("assemblingRate", &["update_step"], Int, "1", "Rate of update of the preconditioner matrix")];

settee_core::data_refs! {
    pub(crate) static PRECONDITIONED_READS;
    /// Also read by the PCGLinearSolver from its PreconditionedMatrixFreeSystem.
    ASSEMBLING_RATE: Int = "assemblingRate";
}

static PRECONDITIONED_LINKS: &[LinkDecl] = &[link("preconditionerSystem", Roles::LINEAR_SYSTEM, "The linear system used by the preconditioner")];

pub static PRECONDITIONED_MATRIX_FREE_SYSTEM: ComponentClass = ComponentClass {
    name: "PreconditionedMatrixFreeSystem",
    description: "Matrix-free linear system that also assembles the system of a preconditioner",
    roles: Roles::LINEAR_SYSTEM,
    templates: &[GRAPH_SCATTERED],
    default_template: GRAPH_SCATTERED,
    template_rule: TemplateRule::Default,
    data: &[BASE_SYSTEM_DATA, PRECONDITIONED_DATA],
    links: PRECONDITIONED_LINKS,
    create: |_| Box::new(PreconditionedMatrixFreeSystem),
    preparse: None,
    no_src_link: &[],
    reads: PRECONDITIONED_READS,
};

/// An accepted `PreconditionedMatrixFreeSystem` (PCG without preconditioner needs nothing from it).
pub struct PreconditionedMatrixFreeSystem;

impl Component for PreconditionedMatrixFreeSystem {
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if cx.data().get(ASSEMBLING_RATE) < 0 {
            return Err(cx.error("assemblingRate must be a non-negative integer"));
        }
        Ok(())
    }
}
