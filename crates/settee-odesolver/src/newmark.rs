//! `NewmarkImplicitSolver`: the implicit Newmark scheme on the acceleration, SOFA's algorithm
//! (mechanics spec §3.7).
//!
//! The solver keeps the previous acceleration `a` (computed explicitly, `M⁻¹ f`, at the first
//! step), solves `[(1 + hγ r_M) M − hγ B − (h²β + h γ r_K) K] a' = b` for the new one and
//! updates `x' = x + h v + h²(½ − β) a + h²β a'`, `v' = v + h(1 − γ) a + hγ a'`.

use settee_core::component::{LinearSolver, OdeSolver};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimError, SimResult, VecId};

use crate::euler_implicit::{check_solves_systems, find_linear_solver};
use crate::runge_kutta4::{compute_acc, multi_op};

/// Implicit time integrator using Newmark scheme.
#[component(
    module = "Sofa.Component.ODESolver.Backward",
    roles = [OdeSolver],
    data = {
        /// Rayleigh damping coefficient related to stiffness
        rayleighStiffness: Real = "0",
        /// Rayleigh damping coefficient related to mass
        rayleighMass: Real = "0",
        /// Velocity decay coefficient (no decay if null)
        vdamping: Real = "0",
        /// Newmark scheme gamma coefficient
        gamma: Real = "0.5",
        /// Newmark scheme beta coefficient
        beta: Real = "0.25",
        /// allocation detail of SOFA, no numerical effect
        threadSafeVisitor: Bool = "false",
    },
    links = {
        /// Linear solver used by this component (default: the first linear solver found from the node downwards)
        linearSolver: LinearSolver,
    },
)]
#[derive(Clone, Default)]
pub struct NewmarkImplicitSolver {
    r_k: f64,
    r_m: f64,
    vdamping: f64,
    gamma: f64,
    beta: f64,
    linear_solver: Option<ComponentId>,
    /// The acceleration of the previous step (SOFA's `pID`).
    a: Option<VecId>,
    /// Number of solves (SOFA's `cpt`).
    solves: usize,
}

impl Component for NewmarkImplicitSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        self.r_k = d.get(Self::RAYLEIGH_STIFFNESS);
        self.r_m = d.get(Self::RAYLEIGH_MASS);
        self.vdamping = d.get(Self::VDAMPING);
        self.gamma = d.get(Self::GAMMA);
        self.beta = d.get(Self::BETA);
        self.linear_solver = find_linear_solver(cx);
        let Some(ls) = self.linear_solver else {
            return Err(cx.error("a linear solver is required by this component but none was found in this node or below").hint(
                "add e.g. <SparseLDLSolver/> or <CGLinearSolver iterations=\"25\" tolerance=\"1e-9\" threshold=\"1e-9\"/> next to the solver",
            ));
        };
        check_solves_systems(cx, ls)
    }
}

impl OdeSolver for NewmarkImplicitSolver {
    /// SOFA: velocity factor 1, position factor `dt`.
    fn integration_factors(&self, dt: f64) -> settee_core::constraint::IntegrationFactors {
        settee_core::constraint::IntegrationFactors { position: dt, velocity: 1.0 }
    }
    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, h: f64, x_result: VecId, v_result: VecId) -> SimResult {
        let ls = self.linear_solver.ok_or_else(|| SimError::new("NewmarkImplicitSolver has no linear solver"))?;
        let (pos, vel) = (VecId::POSITION, VecId::VELOCITY);
        let (gamma, beta, r_m, r_k) = (self.gamma, self.beta, self.r_m, self.r_k);
        let b = mech::alloc_deriv(scene, scope);
        let a_result = mech::alloc_deriv(scene, scope);
        mech::realloc(scene, scope, VecId::DX);
        // SOFA allocates a new acceleration vector at the first solve and whenever the time is 0.
        if self.solves == 0 || scene.params(scope.node).time == 0.0 {
            if let Some(old) = self.a.take() {
                mech::free_vec(scene, scope, old);
            }
            self.a = Some(mech::alloc_deriv(scene, scope));
        }
        let a = self.a.expect("allocated above");
        mech::realloc(scene, scope, a);

        let result = (|| -> SimResult {
            if self.solves == 0 {
                mech::v_op(scene, scope, a, None, None, 1.0);
                compute_acc(scene, scope, a, pos, vel)?;
            }
            self.solves += 1;

            settee_core::simulation::timed(scene, "compute force", |s| mech::compute_force(s, scope, b, pos, vel))?;
            if r_m != 0.0 || r_k != 0.0 || beta != 0.5 {
                mech::propagate_dx(scene, scope, a)?;
                let f = Mbk { m: -h * (1.0 - gamma) * r_m, b: h * (1.0 - gamma), k: h * (1.0 - gamma) * r_k + h * h * (1.0 - 2.0 * beta) / 2.0 };
                mech::add_mbkdx(scene, scope, b, a, f, true)?;
            }
            mech::add_mbkdx(scene, scope, b, vel, Mbk { m: -r_m, b: 1.0, k: r_k + h }, true)?;
            mech::project_response(scene, scope, b)?;

            let factors = Mbk { m: 1.0 + h * gamma * r_m, b: (-h) * gamma, k: -h * h * beta - h * r_k * gamma };
            settee_core::simulation::timed(scene, "linear solve", |s| {
                if s.role::<dyn LinearSolver>(ls).is_none() {
                    return Err(SimError::new("NewmarkImplicitSolver: its linear solver cannot solve systems (a preconditioner)"));
                }
                s.with_role::<dyn LinearSolver, _>(ls, |l, s| l.solve_system(s, scope, factors, b, a_result))
            })?;

            // One vMultiOp: the position first (it reads the old velocity).
            multi_op(scene, scope, x_result, pos, &[(vel, h), (a, h * h * (0.5 - beta)), (a_result, h * h * beta)]);
            multi_op(scene, scope, v_result, vel, &[(a, h * (1.0 - gamma)), (a_result, h * gamma)]);
            mech::add_separate_gravity(scene, scope, h, v_result);
            if self.vdamping != 0.0 {
                let decay = (-h * self.vdamping).exp();
                mech::v_op(scene, scope, v_result, None, Some(v_result), decay);
            }
            mech::v_op(scene, scope, a, Some(a_result), None, 1.0);
            Ok(())
        })();
        for id in [b, a_result] {
            mech::free_vec(scene, scope, id);
        }
        result
    }
}
