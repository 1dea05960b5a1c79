//! `EulerImplicitSolver`: backward (semi-implicit) Euler with Rayleigh damping, SOFA's scheme.

use settee_core::component::{LinearSolver, OdeSolver};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::role;
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimError, SimResult, VecId};

/// Implicit time integrator using backward Euler, with Rayleigh damping.
#[component(
    module = "Sofa.Component.ODESolver.Backward",
    roles = [OdeSolver],
    data = {
        /// Rayleigh damping coefficient related to stiffness, > 0
        rayleighStiffness: Real = "0",
        /// Rayleigh damping coefficient related to mass, > 0
        rayleighMass: Real = "0",
        /// velocity decay coefficient (no decay if null)
        vdamping: Real = "0",
        /// use a first-order ODE (velocities are the unknowns, no inertia)
        firstOrder: Bool = "false",
        /// use the trapezoidal rule (factor 0.5) instead of backward Euler
        trapezoidalScheme: Bool = "false",
        /// apply the node's constraint solvers after the update
        solveConstraint: Bool = "false",
        /// allocation detail of SOFA, no numerical effect
        threadSafeVisitor: Bool = "false",
        /// compute the residual of the step (output only)
        computeResidual: Bool = "false",
        /// residual norm of the last step (output)
        residual: Real = "1.7976931348623157e308",
    },
    links = {
        /// linear solver used to solve the implicit system
        linearSolver: LinearSolver,
    },
)]
#[derive(Clone, Default)]
pub struct EulerImplicitSolver {
    r_k: f64,
    r_m: f64,
    vdamping: f64,
    first_order: bool,
    trapezoidal: bool,
    linear_solver: Option<ComponentId>,
    /// Persistent solution vector (keeps the previous Δv: the warm start of iterative solvers).
    x: Option<VecId>,
    b: Option<VecId>,
}

/// The linear solver an ODE solver uses: its `linearSolver` link, else the first linear solver
/// found searching down from its node.
/// The `linearSolver` link, else the first linear solver below the node; else a preconditioner
/// there, which [`check_solves_systems`] then refuses with the reason (a common mistake).
pub fn find_linear_solver(cx: &InitCtx) -> Option<ComponentId> {
    cx.link_targets("linearSolver")
        .first()
        .copied()
        .or_else(|| cx.scene.find_down(cx.node(), role::LINEAR_SOLVER))
        .or_else(|| cx.scene.find_down(cx.node(), settee_linearsolver::PRECONDITIONER))
}

impl Component for EulerImplicitSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        self.r_k = d.get(Self::RAYLEIGH_STIFFNESS);
        self.r_m = d.get(Self::RAYLEIGH_MASS);
        self.vdamping = d.get(Self::VDAMPING);
        self.first_order = d.get(Self::FIRST_ORDER);
        self.trapezoidal = d.get(Self::TRAPEZOIDAL_SCHEME);
        if d.get(Self::SOLVE_CONSTRAINT) {
            cx.warn("solveConstraint=true is not supported yet: constraint solvers are not called by this ODE solver");
        }
        self.linear_solver = find_linear_solver(cx);
        let Some(ls) = self.linear_solver else {
            return Err(cx
                .error("no linear solver found in this node or below")
                .hint("add e.g. <CGLinearSolver iterations=\"25\" tolerance=\"1e-9\" threshold=\"1e-9\"/> next to the solver"));
        };
        check_solves_systems(cx, ls)
    }
}

/// Refuses, at init, a linear-solver-role component that cannot solve a system on its own (a
/// preconditioner, which only serves PCGLinearSolver): stepping would have nothing to call.
pub fn check_solves_systems(cx: &mut InitCtx, ls: ComponentId) -> SimResult {
    let solves = cx.scene.entry(ls).obj.is_none() || cx.scene.role::<dyn LinearSolver>(ls).is_some();
    if solves {
        return Ok(());
    }
    let label = cx.scene.entry(ls).label();
    Err(cx
        .error(format!("{label} is a preconditioner: it cannot be the linear solver of an ODE solver"))
        .hint("use it as <PCGLinearSolver preconditioner=\"@...\"/>'s preconditioner, and give the ODE solver a linear solver (e.g. <CGLinearSolver/> or <SparseLDLSolver/>)"))
}

impl OdeSolver for EulerImplicitSolver {
    /// SOFA: `dt` and 1 whatever the scheme (the unknown is a velocity increment).
    fn integration_factors(&self, dt: f64) -> settee_core::constraint::IntegrationFactors {
        settee_core::constraint::IntegrationFactors { position: dt, velocity: 1.0 }
    }
    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, h: f64, x_result: VecId, v_result: VecId) -> SimResult {
        let tau = if self.trapezoidal { 0.5 } else { 1.0 };
        mech::realloc(scene, scope, VecId::DX);
        let x = match self.x {
            Some(id) => {
                mech::realloc(scene, scope, id);
                id
            }
            None => *self.x.insert(mech::alloc_deriv(scene, scope)),
        };
        let b = match self.b {
            Some(id) => {
                mech::realloc(scene, scope, id);
                id
            }
            None => *self.b.insert(mech::alloc_deriv(scene, scope)),
        };

        settee_core::simulation::timed(scene, "compute force", |s| mech::compute_force(s, scope, VecId::FORCE, VecId::POSITION, VecId::VELOCITY))?;
        mech::v_op(scene, scope, b, Some(VecId::FORCE), None, 1.0);
        if !self.first_order {
            // b = h·(f + (τh + r_K)·K·v − r_M·M·v)
            let f = Mbk { m: -self.r_m, b: 0.0, k: h * tau + self.r_k };
            mech::add_mbkdx(scene, scope, b, VecId::VELOCITY, f, true)?;
            mech::v_op(scene, scope, b, None, Some(b), h);
        }
        mech::project_response(scene, scope, b)?;

        let factors = if self.first_order {
            Mbk { m: 1.0, b: 0.0, k: -h * tau }
        } else {
            Mbk { m: 1.0 + tau * h * self.r_m, b: -tau * h, k: -tau * h * (tau * h + self.r_k) }
        };
        let ls = self.linear_solver.ok_or_else(|| SimError::new("EulerImplicitSolver has no linear solver"))?;
        settee_core::simulation::timed(scene, "linear solve", |s| {
            if s.role::<dyn LinearSolver>(ls).is_none() {
                return Err(SimError::new("EulerImplicitSolver: its linear solver cannot solve systems (a preconditioner)"));
            }
            s.with_role::<dyn LinearSolver, _>(ls, |l, s| l.solve_system(s, scope, factors, b, x))
        })?;

        if self.first_order {
            mech::v_op(scene, scope, v_result, Some(x), None, 1.0);
        } else {
            mech::v_op(scene, scope, v_result, Some(VecId::VELOCITY), Some(x), 1.0);
        }
        mech::v_op(scene, scope, x_result, Some(VecId::POSITION), Some(v_result), h);
        mech::add_separate_gravity(scene, scope, h, v_result);
        if self.vdamping != 0.0 {
            let decay = (-h * self.vdamping).exp();
            mech::v_op(scene, scope, v_result, None, Some(v_result), decay);
        }
        Ok(())
    }
}
