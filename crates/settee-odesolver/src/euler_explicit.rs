//! `EulerExplicitSolver`: forward (symplectic by default) Euler, SOFA's scheme.
//!
//! One step (mechanics spec §3.2): separate gravity into the velocity result, `f = F(x, v)`,
//! `acc = M⁻¹ f` (diagonal masses: `accFromF` then `projectResponse`; otherwise `P f` and a solve
//! of the assembled, projected mass matrix by the linked linear solver), then one `vMultiOp`:
//! symplectic `v' = v + h·acc; x' = x + h·v'`, else `x' = x + h·v; v' = v + h·acc`.

use settee_core::component::{LinearSolver, OdeSolver};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::role;
use settee_core::simulation::timed;
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimError, SimResult, VecId};

/// A simple explicit time integrator (symplectic Euler by default).
#[component(
    module = "Sofa.Component.ODESolver.Forward",
    roles = [OdeSolver],
    data = {
        /// if true (default), velocities are updated before positions (semi-implicit Euler, more robust); if false, positions are updated with the old velocities (standard Euler)
        symplectic: Bool = "true",
        /// allocation detail of SOFA, no numerical effect
        threadSafeVisitor: Bool = "false",
        /// removed from SOFA (PR #4628) and ignored: the diagonal path is chosen automatically from the masses
        optimizedForDiagonalMatrix: Bool = "true",
    },
    links = {
        /// linear solver used to solve M·a = f when a mass is not diagonal (default: the first linear solver found from the node upwards)
        linearSolver: LinearSolver,
    },
)]
#[derive(Clone, Default)]
pub struct EulerExplicitSolver {
    symplectic: bool,
    linear_solver: Option<ComponentId>,
}

impl Component for EulerExplicitSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.symplectic = cx.data().get(Self::SYMPLECTIC);
        // SOFA: the `linearSolver` link, else `getContext()->get<LinearSolver>()` (upward search).
        self.linear_solver = cx.link_targets("linearSolver").first().copied().or_else(|| cx.scene.find_up(cx.node(), role::LINEAR_SOLVER));
        Ok(())
    }
}

impl OdeSolver for EulerExplicitSolver {
    /// SOFA: position factor `dt²` when symplectic (else 0), velocity factor `dt`.
    fn integration_factors(&self, dt: f64) -> settee_core::constraint::IntegrationFactors {
        settee_core::constraint::IntegrationFactors { position: if self.symplectic { dt * dt } else { 0.0 }, velocity: dt }
    }
    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, h: f64, x_result: VecId, v_result: VecId) -> SimResult {
        // The acceleration lives in `dx` (reallocated, content kept: with no mass at all it keeps
        // its previous value, as in SOFA).
        let acc = VecId::DX;
        let f = VecId::FORCE;
        mech::realloc(scene, scope, acc);

        mech::add_separate_gravity(scene, scope, h, v_result);
        timed(scene, "compute force", |s| mech::compute_force(s, scope, f, VecId::POSITION, VecId::VELOCITY))?;

        if mech::masses_are_diagonal(scene, scope) {
            mech::acc_from_f(scene, scope, acc, f)?;
            mech::project_response(scene, scope, acc)?;
        } else {
            mech::project_response(scene, scope, f)?;
            let Some(ls) = self.linear_solver else {
                return Err(SimError::new("EulerExplicitSolver: a mass is not diagonal, so M·a = f needs a linear solver, and none was found")
                    .hint("add a linear solver next to the solver (e.g. <SparseLDLSolver template=\"CompressedRowSparseMatrixd\"/>) or set linearSolver=\"@...\"; or use a diagonal mass (UniformMass, DiagonalMass, MeshMatrixMass lumping=\"true\")"));
            };
            let factors = Mbk { m: 1.0, b: 0.0, k: 0.0 };
            timed(scene, "linear solve", |s| {
                if s.role::<dyn LinearSolver>(ls).is_none() {
                    return Err(SimError::new("EulerExplicitSolver: the linked linearSolver is not a linear solver"));
                }
                s.with_role::<dyn LinearSolver, _>(ls, |l, s| l.solve_system(s, scope, factors, f, acc))
            })?;
        }

        // One vMultiOp; the operation order depends on `symplectic`.
        if self.symplectic {
            mech::v_op(scene, scope, v_result, Some(VecId::VELOCITY), Some(acc), h);
            mech::v_op(scene, scope, x_result, Some(VecId::POSITION), Some(v_result), h);
        } else {
            mech::v_op(scene, scope, x_result, Some(VecId::POSITION), Some(VecId::VELOCITY), h);
            mech::v_op(scene, scope, v_result, Some(VecId::VELOCITY), Some(acc), h);
        }
        Ok(())
    }
}
