//! Linear-system components (mechanics spec §4.1). Settee's solvers assemble their own system
//! with the same algorithm, so these components only validate that their Data ask for that
//! standard behaviour — except for the systems a `CompositeLinearSystem` builds alongside the
//! solved one, which assemble their own (possibly partial) matrix.

use settee_core::mechanics::{assemble_with, AssemblyOptions, MechScope};
use settee_core::role::{LinearSystem, MechanicalState};
use settee_core::{component, data_group, Component, InitCtx, Mbk, Scene, SimResult};
use settee_linalg::{CsrMatrix, MatrixBuilder};

use crate::common::{linear_system_component, unsupported};

/// Data of SOFA's `BaseMatrixLinearSystem`.
#[data_group(data = {
    /// Size of the global matrix (output)
    matrixSize: Fixed(2) = "0 0",
    /// Allows to assemble the system matrix
    enableAssembly: Bool = "true",
})]
pub struct BaseSystemData;

linear_system_component! {
    ["GraphScattered"]
    /// An accepted `MatrixLinearSystem`: the solvers assemble `P(mM + bB + kK)P` themselves. A
    /// system built alongside the solved one by a `CompositeLinearSystem` keeps its own matrix
    /// ([`MatrixLinearSystem::build`]), restricted by its Data.
    ///
    /// Templates: the assembled-system ones (`MatrixLinearSystem` has no GraphScattered instance in
    /// Settee).
    #[component(
        markers = [LinearSystem],
        default_template = "CompressedRowSparseMatrixd",
        inherit = [BaseSystemData],
        data = {
            /// If true, the stiffness is added to the global matrix
            assembleStiffness: Bool = "true",
            /// If true, the mass is added to the global matrix
            assembleMass: Bool = "true",
            /// If true, the damping is added to the global matrix
            assembleDamping: Bool = "true",
            /// If true, the geometric stiffness of mappings is added to the global matrix
            assembleGeometricStiffness: Bool = "true",
            /// If true, projective constraints are applied on the global matrix
            applyProjectiveConstraints: Bool = "true",
            /// If true, mapped components contribute to the global matrix
            applyMappedComponents: Bool = "true",
            /// If true, indices are verified before being added in to the global matrix, favoring security over speed
            checkIndices: Bool = "false",
            /// If true, independent matrices (global matrix vs mapped matrices) are assembled in parallel
            parallelAssemblyIndependentMatrices: Bool = "false",
        },
        class(name = "MatrixLinearSystem", module = "Sofa.Component.LinearSystem", description = "Linear system"),
        class(
            name = "ConstantSparsityPatternSystem", module = "Sofa.Component.LinearSystem",
            description = "Linear system supposing the sparsity pattern of the global matrix is constant (same numbers as MatrixLinearSystem)",
        ),
    )]
    #[derive(Clone, Default)]
    pub struct MatrixLinearSystem {
        options: AssemblyOptions,
        enabled: bool,
        builder: Option<MatrixBuilder>,
        builds: usize,
    }
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
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        self.options = AssemblyOptions {
            stiffness: d.get(Self::ASSEMBLE_STIFFNESS),
            mass: d.get(Self::ASSEMBLE_MASS),
            damping: d.get(Self::ASSEMBLE_DAMPING),
            geometric_stiffness: d.get(Self::ASSEMBLE_GEOMETRIC_STIFFNESS),
            projective_constraints: d.get(Self::APPLY_PROJECTIVE_CONSTRAINTS),
            mapped_components: d.get(Self::APPLY_MAPPED_COMPONENTS),
            ignore_outside_inputs: false,
        };
        self.enabled = d.get(BaseSystemData::ENABLE_ASSEMBLY);
        self.builder = None;
        self.builds = 0;
        if crate::composite::is_side_system(cx.scene, cx.id) {
            // Built by a CompositeLinearSystem next to the solved system: any selection works.
            return Ok(());
        }
        let d = cx.data();
        for r in [
            BaseSystemData::ENABLE_ASSEMBLY,
            Self::ASSEMBLE_STIFFNESS,
            Self::ASSEMBLE_MASS,
            Self::ASSEMBLE_DAMPING,
            Self::APPLY_PROJECTIVE_CONSTRAINTS,
            Self::APPLY_MAPPED_COMPONENTS,
        ] {
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

/// Matrix-free linear system that also assembles the system of a preconditioner
///
/// An accepted `PreconditionedMatrixFreeSystem` (PCG without preconditioner needs nothing from it).
/// Its `assemblingRate` is also read by the PCGLinearSolver.
#[component(
    module = "Sofa.Component.LinearSolver.Iterative",
    markers = [LinearSystem],
    templates = ["GraphScattered"],
    default_template = "GraphScattered",
    inherit = [BaseSystemData],
    data = {
        /// Rate of update of the preconditioner matrix
        #[alias("update_step")]
        assemblingRate: Int = "1",
    },
    links = {
        /// The linear system used by the preconditioner
        preconditionerSystem: LinearSystem,
    },
)]
#[derive(Clone, Default)]
pub struct PreconditionedMatrixFreeSystem;

impl Component for PreconditionedMatrixFreeSystem {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if cx.data().get(Self::ASSEMBLING_RATE) < 0 {
            return Err(cx.error("assemblingRate must be a non-negative integer"));
        }
        Ok(())
    }
}

/// `MatrixProjectionMethod`: how SOFA projects the matrix contributions of mapped states (or of a
/// given pair of states) into the global matrix, `Jᵀ·K·J`, optionally keeping constant Jacobians.
/// Settee's assembly always projects mapped contributions with the Jacobians of the current step,
/// which for constant Jacobians are the same numbers, so the component only records its Data.
#[component(
    module = "Sofa.Component.LinearSystem",
    data = {
        /// True if the Jacobians of the mappings are constant (SOFA then computes them once): the same numbers
        areJacobiansConstant: Bool = "false",
    },
    links = {
        /// the pair of states whose matrix block is projected (default: any pair)
        #[multi]
        mechanicalStates: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct MatrixProjectionMethod;

impl Component for MatrixProjectionMethod {}
