//! Preconditioners of `PCGLinearSolver` (mechanics spec §4.3.1): `JacobiPreconditioner`,
//! `BlockJacobiPreconditioner`, `SSORPreconditioner`, `WarpPreconditioner` (with its
//! `RotationMatrixSystem`), and any direct solver used as an exact preconditioner.
//!
//! A preconditioner keeps its own assembled matrix, rebuilt with the ODE factors on the
//! schedule of the PCG's `PreconditionedMatrixFreeSystem` (`assemblingRate`), and applies
//! `z = P⁻¹·r` to global vectors (the main states' DOFs in scope order).

use settee_core::component::link;
use settee_core::data::{decl, decl_alias, DataKind::*};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{
    component_any, Component, ComponentClass, ComponentId, CreateArgs, DataDecl, InitCtx, LinkDecl, Mbk, Roles, Scene, SimResult, TemplateRule,
};
use settee_linalg::{invert3, CsrMatrix, MatrixBuilder};

use crate::common::{step_error, unsupported, LINEAR_SYSTEM_LINK, MATRIX_SOLVER_DATA};
use crate::direct::DirectLinearSolver;

/// What PCG needs from a preconditioner.
pub trait Preconditioner {
    /// Rebuilds the preconditioner's matrix with the ODE factors.
    fn refresh(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult;
    /// `z = P⁻¹·r` on global vectors.
    fn apply(&mut self, scene: &mut Scene, r: &[f64], z: &mut [f64]) -> SimResult;
}

/// The preconditioner role of a component, if it has one.
pub fn as_preconditioner(obj: &mut dyn Component) -> Option<&mut dyn Preconditioner> {
    let any = obj.as_any_mut();
    if any.is::<JacobiPreconditioner>() {
        return any.downcast_mut::<JacobiPreconditioner>().map(|p| p as &mut dyn Preconditioner);
    }
    if any.is::<BlockJacobiPreconditioner>() {
        return any.downcast_mut::<BlockJacobiPreconditioner>().map(|p| p as &mut dyn Preconditioner);
    }
    if any.is::<SsorPreconditioner>() {
        return any.downcast_mut::<SsorPreconditioner>().map(|p| p as &mut dyn Preconditioner);
    }
    if any.is::<WarpPreconditioner>() {
        return any.downcast_mut::<WarpPreconditioner>().map(|p| p as &mut dyn Preconditioner);
    }
    if any.is::<crate::precomputed::PrecomputedWarpPreconditioner>() {
        return any.downcast_mut::<crate::precomputed::PrecomputedWarpPreconditioner>().map(|p| p as &mut dyn Preconditioner);
    }
    any.downcast_mut::<DirectLinearSolver>().map(|p| p as &mut dyn Preconditioner)
}

/// Assembles `P(mM + bB + kK)P` into `builder` and returns the matrix.
fn assemble<'a>(builder: &'a mut Option<MatrixBuilder>, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult<&'a CsrMatrix> {
    let b = builder.get_or_insert_with(|| MatrixBuilder::new(scope.size));
    mech::assemble(scene, scope, factors, b)?;
    Ok(b.matrix())
}

fn check_len(scene: &Scene, me: Option<ComponentId>, n: usize, r: &[f64], z: &[f64]) -> SimResult {
    if r.len() != n || z.len() != n {
        return Err(step_error(scene, me, format!("preconditioner built for {n} DOFs applied to vectors of {} and {}", r.len(), z.len())));
    }
    Ok(())
}

const fn class(
    name: &'static str,
    description: &'static str,
    templates: &'static [&'static str],
    data: &'static [&'static [DataDecl]],
    links: &'static [LinkDecl],
    create: fn(&CreateArgs) -> Box<dyn Component>,
    reads: &'static [settee_core::DataUse],
) -> ComponentClass {
    ComponentClass {
        name,
        description,
        roles: Roles::LINEAR_SOLVER,
        templates,
        default_template: templates[0],
        template_rule: TemplateRule::Default,
        data,
        links,
        create,
        preparse: None,
        no_src_link: &[],
        reads,
    }
}

static PRECONDITIONER_LINKS: &[LinkDecl] = &[LINEAR_SYSTEM_LINK];

// ----- Jacobi ------------------------------------------------------------------------------------

pub static JACOBI: ComponentClass = class(
    "JacobiPreconditioner",
    "Linear solver based on a diagonal matrix (Jacobi preconditioner): z_i = r_i / A_ii.",
    &["DiagonalMatrix"],
    &[MATRIX_SOLVER_DATA],
    PRECONDITIONER_LINKS,
    |_| Box::new(JacobiPreconditioner::default()),
    &[],
);

/// Keeps the inverted diagonal of the system matrix (constrained rows have a unit diagonal).
#[derive(Default)]
pub struct JacobiPreconditioner {
    me: Option<ComponentId>,
    builder: Option<MatrixBuilder>,
    inv_diag: Vec<f64>,
}

impl Component for JacobiPreconditioner {
    component_any!();
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        Ok(())
    }
}

impl Preconditioner for JacobiPreconditioner {
    fn refresh(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        let a = assemble(&mut self.builder, scene, scope, factors)?;
        self.inv_diag = a.diagonal().into_iter().map(|d| 1.0 / d).collect();
        Ok(())
    }
    fn apply(&mut self, scene: &mut Scene, r: &[f64], z: &mut [f64]) -> SimResult {
        check_len(scene, self.me, self.inv_diag.len(), r, z)?;
        for ((zi, ri), di) in z.iter_mut().zip(r).zip(&self.inv_diag) {
            *zi = di * ri;
        }
        Ok(())
    }
}

// ----- Block Jacobi --------------------------------------------------------------------------------

pub static BLOCK_JACOBI: ComponentClass = class(
    "BlockJacobiPreconditioner",
    "Linear solver based on the inverted 3x3 diagonal blocks of the system matrix (block Jacobi preconditioner).",
    &["BlockDiagonalMatrix3"],
    &[MATRIX_SOLVER_DATA],
    PRECONDITIONER_LINKS,
    |_| Box::new(BlockJacobiPreconditioner::default()),
    &[],
);

/// Keeps the inverses of the 3×3 diagonal blocks.
#[derive(Default)]
pub struct BlockJacobiPreconditioner {
    me: Option<ComponentId>,
    builder: Option<MatrixBuilder>,
    inv_blocks: Vec<[[f64; 3]; 3]>,
}

impl Component for BlockJacobiPreconditioner {
    component_any!();
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        Ok(())
    }
}

impl Preconditioner for BlockJacobiPreconditioner {
    fn refresh(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        let me = self.me;
        let a = assemble(&mut self.builder, scene, scope, factors)?;
        let n = a.nrows();
        if n % 3 != 0 {
            return Err(unsupported(step_error(scene, me, format!("3x3 blocks need a multiple of 3 DOFs, the system has {n}"))));
        }
        let mut blocks = Vec::with_capacity(n / 3);
        for b in 0..n / 3 {
            let mut m = [[0.0; 3]; 3];
            for (i, row) in m.iter_mut().enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = a.get(3 * b + i, 3 * b + j);
                }
            }
            let inv = invert3(&m).ok_or_else(|| step_error(scene, me, format!("diagonal block {b} of the system matrix is singular")))?;
            blocks.push(inv);
        }
        self.inv_blocks = blocks;
        Ok(())
    }
    fn apply(&mut self, scene: &mut Scene, r: &[f64], z: &mut [f64]) -> SimResult {
        check_len(scene, self.me, 3 * self.inv_blocks.len(), r, z)?;
        for ((b, rv), zv) in self.inv_blocks.iter().zip(r.chunks_exact(3)).zip(z.chunks_exact_mut(3)) {
            for i in 0..3 {
                let mut s = b[i][0] * rv[0];
                s += b[i][1] * rv[1];
                s += b[i][2] * rv[2];
                zv[i] = s;
            }
        }
        Ok(())
    }
}

// ----- SSOR ------------------------------------------------------------------------------------------

static SSOR_DATA: &[DataDecl] = &[decl("omega", Real, "1", "Omega coefficient")];

settee_core::data_refs! {
    static SSOR_READS;
    OMEGA: Real = "omega";
}

pub static SSOR: ComponentClass = class(
    "SSORPreconditioner",
    "Linear solver / preconditioner based on Symmetric Successive Over-Relaxation (SSOR).",
    &["CompressedRowSparseMatrixd", "CompressedRowSparseMatrixMat3x3d"],
    &[MATRIX_SOLVER_DATA, SSOR_DATA],
    PRECONDITIONER_LINKS,
    |args| Box::new(SsorPreconditioner { blocks3: args.template == "CompressedRowSparseMatrixMat3x3d", ..Default::default() }),
    SSOR_READS,
);

/// SSOR sweeps over the assembled matrix.
#[derive(Default)]
pub struct SsorPreconditioner {
    me: Option<ComponentId>,
    blocks3: bool,
    omega: f64,
    builder: Option<MatrixBuilder>,
    inv_diag: Vec<f64>,
}

impl Component for SsorPreconditioner {
    component_any!();
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.omega = cx.data().get(OMEGA);
        if self.blocks3 {
            return Err(unsupported(
                cx.error("the CompressedRowSparseMatrixMat3x3d variant of SSOR is not supported yet")
                    .hint("use the default template (CompressedRowSparseMatrixd)"),
            ));
        }
        Ok(())
    }
}

impl Preconditioner for SsorPreconditioner {
    fn refresh(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        let a = assemble(&mut self.builder, scene, scope, factors)?;
        self.inv_diag = a.diagonal().into_iter().map(|d| 1.0 / d).collect();
        Ok(())
    }
    fn apply(&mut self, scene: &mut Scene, r: &[f64], z: &mut [f64]) -> SimResult {
        let n = self.inv_diag.len();
        check_len(scene, self.me, n, r, z)?;
        let a = self.builder.as_ref().expect("refreshed").matrix();
        let w = self.omega;
        // (D/ω + U)·t = r, from the last row up, with the entries right of the diagonal.
        for j in (0..n).rev() {
            let mut temp = 0.0;
            for (i, e) in a.row(j) {
                if i > j {
                    temp += z[i] * e;
                }
            }
            z[j] = (r[j] - temp) * w * self.inv_diag[j];
        }
        // (I + ω D⁻¹ L)·z = t, from the first row down, with the entries left of the diagonal.
        for j in 0..n {
            let mut temp = 0.0;
            for (i, e) in a.row(j) {
                if i >= j {
                    break;
                }
                temp += z[i] * e;
            }
            z[j] -= temp * w * self.inv_diag[j];
        }
        if w != 1.0 {
            for x in z.iter_mut() {
                *x *= 2.0 - w;
            }
        }
        Ok(())
    }
}

// ----- Warp --------------------------------------------------------------------------------------------

static WARP_DATA: &[DataDecl] = &[
    decl("useRotationFinder", Int, "0", "deprecated: the rotations come from the RotationMatrixSystem"),
    decl_alias("update_step", &[], Int, "1", "deprecated: use assemblingRate of the RotationMatrixSystem"),
];

static WARP_LINKS: &[LinkDecl] =
    &[LINEAR_SYSTEM_LINK, link("linearSolver", Roles::LINEAR_SOLVER, "the direct linear solver applied in the rotated frame")];

pub static WARP: ComponentClass = class(
    "WarpPreconditioner",
    "Preconditioner applying a direct solver in the frame of the elements' rotations: z = R·S⁻¹·Rᵀ·r.",
    &["RotationMatrix"],
    &[MATRIX_SOLVER_DATA, WARP_DATA],
    WARP_LINKS,
    |_| Box::new(WarpPreconditioner::default()),
    &[],
);

/// With a rotation system refreshed at every step (`assemblingRate` 1), the rotations are the
/// identity and the preconditioner is the exact inverse of the current system.
#[derive(Default)]
pub struct WarpPreconditioner {
    me: Option<ComponentId>,
    solver: Option<ComponentId>,
}

impl Component for WarpPreconditioner {
    component_any!();
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.solver = cx.link_targets("linearSolver").first().copied().or_else(|| {
            cx.scene.node(cx.node()).objects.iter().copied().find(|c| {
                *c != cx.id && cx.scene.entry(*c).class.name != "PCGLinearSolver" && cx.scene.entry(*c).roles().contains(Roles::LINEAR_SOLVER)
            })
        });
        let Some(s) = self.solver else {
            return Err(cx
                .error("no direct linear solver to apply in the rotated frame")
                .hint("set linearSolver=\"@name\" to a SparseLDLSolver (or another direct solver)"));
        };
        if cx.scene.get::<DirectLinearSolver>(s).is_none() {
            return Err(unsupported(
                cx.error(format!("{} cannot be used inside a WarpPreconditioner", cx.scene.entry(s).label()))
                    .hint("link a direct solver such as SparseLDLSolver"),
            ));
        }
        if let Some(sys) = cx.link_targets("linearSystem").first() {
            let e = cx.scene.entry(*sys);
            if e.class.name == "RotationMatrixSystem" && e.data.get(ASSEMBLING_RATE) != 1 {
                return Err(unsupported(
                    cx.error(
                        "a RotationMatrixSystem with assemblingRate other than 1 is not supported yet (it needs the rotations of the force fields)",
                    )
                    .hint("use assemblingRate=\"1\""),
                ));
            }
        }
        Ok(())
    }
}

impl Preconditioner for WarpPreconditioner {
    fn refresh(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult {
        let s = self.solver.ok_or_else(|| step_error(scene, self.me, "WarpPreconditioner used before init"))?;
        scene.with_taken(s, |obj, scene| match as_preconditioner(obj) {
            Some(p) => p.refresh(scene, scope, factors),
            None => Err(step_error(scene, Some(s), "not a direct solver")),
        })
    }
    fn apply(&mut self, scene: &mut Scene, r: &[f64], z: &mut [f64]) -> SimResult {
        let s = self.solver.ok_or_else(|| step_error(scene, self.me, "WarpPreconditioner used before init"))?;
        scene.with_taken(s, |obj, scene| match as_preconditioner(obj) {
            Some(p) => p.apply(scene, r, z),
            None => Err(step_error(scene, Some(s), "not a direct solver")),
        })
    }
}

// ----- RotationMatrixSystem ------------------------------------------------------------------------------

static ROTATION_SYSTEM_DATA: &[DataDecl] = &[decl("assemblingRate", Int, "1", "Rate of update of the rotations")];

settee_core::data_refs! {
    static ROTATION_SYSTEM_READS;
    /// Also read by the WarpPreconditioner from its RotationMatrixSystem.
    ASSEMBLING_RATE: Int = "assemblingRate";
}

pub static ROTATION_MATRIX_SYSTEM: ComponentClass = ComponentClass {
    name: "RotationMatrixSystem",
    description: "Linear system holding the rotations of a WarpPreconditioner; rebuilds the main assembled system at its assembling rate.",
    roles: Roles::LINEAR_SYSTEM,
    templates: &["RotationMatrixd"],
    default_template: "RotationMatrixd",
    template_rule: TemplateRule::Default,
    data: &[ROTATION_SYSTEM_DATA],
    links: &[
        link("mainSystem", Roles::LINEAR_SYSTEM, "the assembled system rebuilt at the assembling rate"),
        link("rotationFinder", Roles::FORCE_FIELD, "component giving the rotations"),
    ],
    create: |_| Box::new(RotationMatrixSystem),
    preparse: None,
    no_src_link: &[],
    reads: ROTATION_SYSTEM_READS,
};

/// Accepted: with `assemblingRate` 1 (checked by the WarpPreconditioner) the rotations are the
/// identity.
pub struct RotationMatrixSystem;

impl Component for RotationMatrixSystem {
    component_any!();
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if cx.data().get(ASSEMBLING_RATE) < 1 {
            return Err(cx.error("assemblingRate must be at least 1"));
        }
        Ok(())
    }
}
