//! Preconditioners of `PCGLinearSolver` (mechanics spec §4.3.1): `JacobiPreconditioner`,
//! `BlockJacobiPreconditioner`, `SSORPreconditioner`, `WarpPreconditioner` (with its
//! `RotationMatrixSystem`), and any direct solver used as an exact preconditioner.
//!
//! A preconditioner keeps its own assembled matrix, rebuilt with the ODE factors on the
//! schedule of the PCG's `PreconditionedMatrixFreeSystem` (`assemblingRate`), and applies
//! `z = P⁻¹·r` to global vectors (the main states' DOFs in scope order).

use settee_core::component::{ForceField, LinearSolver};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::role::{self, LinearSystem, RoleId};
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimResult};
use settee_linalg::{invert3, CsrMatrix, MatrixBuilder};

use crate::common::{step_error, unsupported, MatrixSolverData};
use crate::direct::DirectLinearSolver;

/// The preconditioner role: what `PCGLinearSolver` (and a `WarpPreconditioner`, for the direct
/// solver it applies in the rotated frame) needs from a preconditioner. Classes list it in
/// `roles = [Preconditioner]`; the scene finds them with [`PRECONDITIONER`] and hands them out
/// as `dyn Preconditioner` (`scene.role_mut::<dyn Preconditioner>(id)`).
pub trait Preconditioner {
    /// Rebuilds the preconditioner's matrix with the ODE factors.
    fn refresh(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk) -> SimResult;
    /// `z = P⁻¹·r` on global vectors.
    fn apply(&mut self, scene: &mut Scene, r: &[f64], z: &mut [f64]) -> SimResult;
}

/// The [`Preconditioner`] role, for lookups (`scene.find_local(node, PRECONDITIONER)`,
/// `entry.plays(PRECONDITIONER)`).
pub const PRECONDITIONER: RoleId = RoleId::of::<dyn Preconditioner>("Preconditioner");

/// Runs `f` with preconditioner `id` taken out of the scene and viewed as a [`Preconditioner`];
/// `None` when its class does not play the role.
fn with_preconditioner<T>(scene: &mut Scene, id: ComponentId, f: impl FnOnce(&mut dyn Preconditioner, &mut Scene) -> T) -> Option<T> {
    let class = scene.entry(id).class;
    scene.with_taken(id, |obj, scene| class.cast_mut::<dyn Preconditioner>(obj).map(|p| f(p, scene)))
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

// ----- Jacobi ------------------------------------------------------------------------------------

/// Linear solver based on a diagonal matrix (Jacobi preconditioner): z_i = r_i / A_ii.
///
/// Keeps the inverted diagonal of the system matrix (constrained rows have a unit diagonal).
#[component(
    module = "Sofa.Component.LinearSolver.Preconditioner",
    roles = [Preconditioner],
    templates = ["DiagonalMatrix"],
    inherit = [MatrixSolverData],
    links = {
        /// The linear system to solve
        linearSystem: LinearSystem,
    },
)]
#[derive(Clone, Default)]
pub struct JacobiPreconditioner {
    me: Option<ComponentId>,
    builder: Option<MatrixBuilder>,
    inv_diag: Vec<f64>,
}

impl Component for JacobiPreconditioner {
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

/// Linear solver based on the inverted 3x3 diagonal blocks of the system matrix (block Jacobi preconditioner).
///
/// Keeps the inverses of the 3×3 diagonal blocks.
#[component(
    module = "Sofa.Component.LinearSolver.Preconditioner",
    roles = [Preconditioner],
    templates = ["BlockDiagonalMatrix3"],
    inherit = [MatrixSolverData],
    links = {
        /// The linear system to solve
        linearSystem: LinearSystem,
    },
)]
#[derive(Clone, Default)]
pub struct BlockJacobiPreconditioner {
    me: Option<ComponentId>,
    builder: Option<MatrixBuilder>,
    inv_blocks: Vec<[[f64; 3]; 3]>,
}

impl Component for BlockJacobiPreconditioner {
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

/// Linear solver / preconditioner based on Symmetric Successive Over-Relaxation (SSOR).
///
/// SSOR sweeps over the assembled matrix.
#[component(
    name = "SSORPreconditioner", module = "Sofa.Component.LinearSolver.Preconditioner",
    roles = [Preconditioner],
    templates = ["CompressedRowSparseMatrixd", "CompressedRowSparseMatrixMat3x3d"],
    create = |args| SsorPreconditioner { blocks3: args.template == "CompressedRowSparseMatrixMat3x3d", ..Default::default() },
    inherit = [MatrixSolverData],
    data = {
        /// Omega coefficient
        omega: Real = "1",
    },
    links = {
        /// The linear system to solve
        linearSystem: LinearSystem,
    },
)]
#[derive(Clone, Default)]
pub struct SsorPreconditioner {
    me: Option<ComponentId>,
    blocks3: bool,
    omega: f64,
    builder: Option<MatrixBuilder>,
    inv_diag: Vec<f64>,
}

impl Component for SsorPreconditioner {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.omega = cx.data().get(Self::OMEGA);
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

/// Preconditioner applying a direct solver in the frame of the elements' rotations: z = R·S⁻¹·Rᵀ·r.
///
/// With a rotation system refreshed at every step (`assemblingRate` 1), the rotations are the
/// identity and the preconditioner is the exact inverse of the current system.
#[component(
    module = "Sofa.Component.LinearSolver.Preconditioner",
    roles = [Preconditioner],
    templates = ["RotationMatrix"],
    inherit = [MatrixSolverData],
    data = {
        /// deprecated: the rotations come from the RotationMatrixSystem
        useRotationFinder: Int = "0",
        /// deprecated: use assemblingRate of the RotationMatrixSystem
        update_step: Int = "1",
    },
    links = {
        /// The linear system to solve
        linearSystem: LinearSystem,
        /// the direct linear solver applied in the rotated frame
        linearSolver: LinearSolver,
    },
)]
#[derive(Clone, Default)]
pub struct WarpPreconditioner {
    me: Option<ComponentId>,
    solver: Option<ComponentId>,
}

impl Component for WarpPreconditioner {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.solver = cx.link_targets("linearSolver").first().copied().or_else(|| {
            cx.scene
                .node(cx.node())
                .objects
                .iter()
                .copied()
                .find(|c| *c != cx.id && cx.scene.entry(*c).class.name != "PCGLinearSolver" && cx.scene.entry(*c).plays(role::LINEAR_SOLVER))
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
            if e.class.name == "RotationMatrixSystem" && e.data.get(RotationMatrixSystem::ASSEMBLING_RATE) != 1 {
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
        with_preconditioner(scene, s, |p, scene| p.refresh(scene, scope, factors))
            .unwrap_or_else(|| Err(step_error(scene, Some(s), "not a direct solver")))
    }
    fn apply(&mut self, scene: &mut Scene, r: &[f64], z: &mut [f64]) -> SimResult {
        let s = self.solver.ok_or_else(|| step_error(scene, self.me, "WarpPreconditioner used before init"))?;
        with_preconditioner(scene, s, |p, scene| p.apply(scene, r, z)).unwrap_or_else(|| Err(step_error(scene, Some(s), "not a direct solver")))
    }
}

// ----- RotationMatrixSystem ------------------------------------------------------------------------------

/// Linear system holding the rotations of a WarpPreconditioner; rebuilds the main assembled system at its assembling rate.
///
/// Accepted: with `assemblingRate` 1 (checked by the WarpPreconditioner) the rotations are the
/// identity. Its `assemblingRate` is also read by the WarpPreconditioner.
#[component(
    module = "Sofa.Component.LinearSolver.Preconditioner",
    markers = [LinearSystem],
    templates = ["RotationMatrixd"],
    data = {
        /// Rate of update of the rotations
        assemblingRate: Int = "1",
    },
    links = {
        /// the assembled system rebuilt at the assembling rate
        mainSystem: LinearSystem,
        /// component giving the rotations
        rotationFinder: ForceField,
    },
)]
#[derive(Clone, Default)]
pub struct RotationMatrixSystem;

impl Component for RotationMatrixSystem {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if cx.data().get(Self::ASSEMBLING_RATE) < 1 {
            return Err(cx.error("assemblingRate must be at least 1"));
        }
        Ok(())
    }
}
