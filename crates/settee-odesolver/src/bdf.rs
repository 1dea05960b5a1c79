//! `BDFOdeSolver`: SOFA's velocity-based backward differentiation formulas, a linear multistep
//! method (`BaseLinearMultiStepMethod`) whose nonlinear equation a `NewtonRaphsonSolver` solves
//! (mechanics spec §3.9).
//!
//! With the stored sample times `t_0 < … < t_s` (`s` = the effective order), the method is
//! `Σ a_j x_j = h Σ b_j v_j` and `M Σ a_j v_j = h Σ b_j f_j`; BDF has `b_j = 0` for `j < s`.
//! The unknowns are `x_s, v_s`; the Newton correction is solved on the velocity and the
//! position follows.
//!
//! History vectors are kept in slots, as SOFA does: slot `s − 1` is the result vector (the
//! state's position/velocity/force), the other slots are vectors of the solver, allocated the
//! first time the slot is used. SOFA's quirk is kept on purpose: while the order ramps up
//! (`min(order, solve + 1)`), the slot that held the result vector at the previous order keeps
//! it, so from order 2 on every slot below `s` is the result vector itself. The earlier samples
//! are then the current state: with constant steps, order `s` integrates as backward Euler on a
//! step scaled by `b_s` (2/3 for order 2, 6/11 for order 3).

use std::collections::VecDeque;

use settee_core::component::{LinearSolver, OdeSolver};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimError, SimResult, VecId, VecKind};

use crate::euler_implicit::{check_solves_systems, find_linear_solver};
use crate::newton_raphson::{NonLinearFunction, NonLinearSolver};
use crate::static_solver::find_newton_solver;

/// Velocity-based ODE solver using Backward Differentiation Formula (BDF), at any order, supporting variable time step size.
#[component(
    module = "Sofa.Component.ODESolver.Backward",
    roles = [OdeSolver],
    data = {
        /// Order of the numerical method
        order: Int = "1",
        /// Rayleigh damping coefficient related to stiffness, > 0
        rayleighStiffness: Real = "0",
        /// Rayleigh damping coefficient related to mass, > 0
        rayleighMass: Real = "0",
    },
    links = {
        /// Link to a Newton-Raphson solver to solve the nonlinear equation produced by this numerical method (default: the first one found from the node downwards)
        newtonSolver: NonLinearSolver,
        /// Linear solver used by this component (default: the first linear solver found from the node downwards)
        linearSolver: LinearSolver,
    },
)]
#[derive(Clone, Default)]
pub struct BDFOdeSolver {
    order: usize,
    r_k: f64,
    r_m: f64,
    newton: Option<ComponentId>,
    linear_solver: Option<ComponentId>,
    /// The last sample times (the initial time, then `t + h` of every solve).
    times: VecDeque<f64>,
    solves: usize,
    /// History slots (SOFA's `m_position`, `m_velocity`, `m_force`); `None` is a null id.
    position: Vec<Option<VecId>>,
    velocity: Vec<Option<VecId>>,
    force: Vec<Option<VecId>>,
    r1: Option<VecId>,
    r2: Option<VecId>,
    rhs: Option<VecId>,
    dv: Option<VecId>,
    velocity_sum: Option<VecId>,
    a: Vec<f64>,
    b: Vec<f64>,
}

/// SOFA's `BDFOdeSolver::computeLinearMultiStepCoefficients`: `a_j = h·L'_j(t_s)` with `L_j` the
/// Lagrange basis on `samples` and `h` the last step, normalised so that `a_s = 1`; `b_s = 1/a_s`
/// (before normalisation), the other `b_j = 0`.
pub fn bdf_coefficients(samples: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let order = samples.len() - 1;
    let mut a = vec![0.0; order + 1];
    let mut b = vec![0.0; order + 1];
    for (j, a_j) in a.iter_mut().enumerate() {
        for i in 0..=order {
            if i == j {
                continue;
            }
            let mut product = 1.0;
            for m in 0..=order {
                if m != i && m != j {
                    product *= (samples[order] - samples[m]) / (samples[j] - samples[m]);
                }
            }
            *a_j += product / (samples[j] - samples[i]);
        }
    }
    let dt = samples[order] - samples[order - 1];
    for a_j in a.iter_mut() {
        *a_j *= dt;
    }
    for j in 0..order {
        a[j] /= a[order];
    }
    b[order] = 1.0 / a[order];
    a[order] = 1.0;
    (a, b)
}

impl Component for BDFOdeSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let order = cx.data().get(Self::ORDER);
        if order < 0 {
            return Err(cx.error(format!("order = {order}: the order of the method is a positive integer")));
        }
        if order > 6 {
            cx.warn(format!("The method with order {order} is not zero-stable"));
        } else if order == 0 {
            cx.warn("The method cannot have order 0. Setting it to 1.");
            cx.data_mut().put(Self::ORDER, 1);
        }
        self.order = (order as usize).max(1);
        self.r_k = cx.data().get(Self::RAYLEIGH_STIFFNESS);
        self.r_m = cx.data().get(Self::RAYLEIGH_MASS);
        self.linear_solver = find_linear_solver(cx);
        let Some(ls) = self.linear_solver else {
            return Err(cx.error("a linear solver is required by this component but none was found in this node or below").hint(
                "add e.g. <SparseLDLSolver template=\"CompressedRowSparseMatrixMat3x3d\"/> or <CGLinearSolver iterations=\"25\" tolerance=\"1e-9\" threshold=\"1e-9\"/> next to the solver",
            ));
        };
        check_solves_systems(cx, ls)?;
        self.newton = find_newton_solver(cx);
        if self.newton.is_none() {
            return Err(cx
                .error("A Newton-Raphson solver is required by this component but has not been found.")
                .hint("add <NewtonRaphsonSolver maxNbIterationsNewton=\"10\"/> next to the solver, or set newtonSolver=\"@...\""));
        }
        self.times.clear();
        self.times.push_back(cx.params().time);
        self.solves = 0;
        Ok(())
    }
}

/// The vector in `slot`, allocated (zero-filled) the first time, else kept with its content.
fn slot_vector(scene: &mut Scene, scope: &MechScope, slot: &mut Option<VecId>, kind: VecKind) -> VecId {
    match *slot {
        Some(id) => {
            mech::realloc(scene, scope, id);
            id
        }
        None => *slot.insert(scene.store.alloc(&scope.states, kind)),
    }
}

/// SOFA's `ResidualFunction` of `BaseLinearMultiStepMethod`: `r1 = Σ a_j x_j − h Σ b_j v_j`,
/// `r2 = M Σ a_j v_j − h Σ b_j f_j` (both projected), Newton on `r2`.
struct MultiStepResidual<'a> {
    scope: &'a MechScope,
    order: usize,
    a: &'a [f64],
    b: &'a [f64],
    dt: f64,
    r_k: f64,
    r_m: f64,
    position: Vec<VecId>,
    velocity: Vec<VecId>,
    force: Vec<VecId>,
    r1: VecId,
    r2: VecId,
    rhs: VecId,
    dv: VecId,
    velocity_sum: VecId,
    linear_solver: ComponentId,
}

impl MultiStepResidual<'_> {
    fn factors(&self) -> Mbk {
        let (a_s, b_s, dt) = (self.a[self.order], self.b[self.order], self.dt);
        Mbk { m: a_s + dt * b_s * self.r_m, b: -dt * b_s, k: -dt * b_s * (self.r_k + dt * b_s / a_s) }
    }
}

impl NonLinearFunction for MultiStepResidual<'_> {
    fn evaluate(&mut self, scene: &mut Scene) -> SimResult {
        let (scope, s) = (self.scope, self.order);
        let (xs, vs, fs) = (self.position[s], self.velocity[s], self.force[s]);
        settee_core::simulation::timed(scene, "compute force", |sc| mech::compute_force(sc, scope, fs, xs, vs))?;
        // Rayleigh damping, with the velocity as the product's vector.
        mech::add_mbkdx(scene, scope, fs, vs, Mbk { m: -self.r_m, b: 0.0, k: self.r_k }, true)?;
        mech::project_response(scene, scope, fs)?;

        mech::v_op(scene, scope, self.r1, None, None, 1.0);
        mech::v_op(scene, scope, self.r2, None, None, 1.0);
        for i in 0..=s {
            if self.a[i] != 0.0 {
                mech::v_op(scene, scope, self.r1, Some(self.r1), Some(self.position[i]), self.a[i]);
            }
        }
        for i in 0..=s {
            if self.b[i] != 0.0 {
                mech::v_op(scene, scope, self.r1, Some(self.r1), Some(self.velocity[i]), -self.dt * self.b[i]);
            }
        }
        mech::v_op(scene, scope, self.velocity_sum, None, None, 1.0);
        for i in 0..=s {
            if self.a[i] != 0.0 {
                mech::v_op(scene, scope, self.velocity_sum, Some(self.velocity_sum), Some(self.velocity[i]), self.a[i]);
            }
        }
        add_mdx(scene, scope, self.r2, self.velocity_sum);
        for i in 0..=s {
            if self.b[i] != 0.0 {
                mech::v_op(scene, scope, self.r2, Some(self.r2), Some(self.force[i]), -self.dt * self.b[i]);
            }
        }
        mech::project_response(scene, scope, self.r1)?;
        mech::project_response(scene, scope, self.r2)
    }
    fn squared_norm_last_evaluation(&self, scene: &Scene) -> f64 {
        mech::v_dot(scene, self.scope, self.r2, self.r2)
    }
    fn compute_gradient(&mut self, scene: &mut Scene) -> SimResult {
        let (a_s, b_s) = (self.a[self.order], self.b[self.order]);
        // rhs = −r2 − (h b_s / a_s)·K·r1
        mech::v_op(scene, self.scope, self.rhs, None, Some(self.r2), -1.0);
        mech::add_mbkdx(scene, self.scope, self.rhs, self.r1, Mbk { m: 0.0, b: 0.0, k: -self.dt * b_s / a_s }, true)?;
        mech::project_response(scene, self.scope, self.rhs)
    }
    fn solve_linear_equation(&mut self, scene: &mut Scene) -> SimResult {
        let (ls, scope, factors, rhs, dv) = (self.linear_solver, self.scope, self.factors(), self.rhs, self.dv);
        mech::v_op(scene, scope, dv, None, None, 1.0);
        settee_core::simulation::timed(scene, "linear solve", |s| {
            if s.role::<dyn LinearSolver>(ls).is_none() {
                return Err(SimError::new("BDFOdeSolver: its linear solver cannot solve systems (a preconditioner)"));
            }
            s.with_role::<dyn LinearSolver, _>(ls, |l, s| l.solve_system(s, scope, factors, rhs, dv))
        })
    }
    /// `v_s += α dv`, then `x_s += (h b_s/a_s) dv − r1/a_s` (SOFA scales only the velocity
    /// update by α), projected and propagated.
    fn update_guess(&mut self, scene: &mut Scene, alpha: f64) -> SimResult {
        let (scope, s) = (self.scope, self.order);
        let (a_s, b_s) = (self.a[s], self.b[s]);
        let (xs, vs) = (self.position[s], self.velocity[s]);
        mech::v_op(scene, scope, vs, Some(vs), Some(self.dv), alpha);
        mech::v_op(scene, scope, VecId::DX, None, Some(self.dv), self.dt * b_s / a_s);
        mech::v_op(scene, scope, VecId::DX, Some(VecId::DX), Some(self.r1), -1.0 / a_s);
        mech::v_op(scene, scope, xs, Some(xs), Some(VecId::DX), 1.0);
        mech::project_position_velocity(scene, scope, xs, vs)?;
        mech::propagate_position_velocity(scene, scope, xs, vs)
    }
    fn squared_norm_dx(&self, scene: &Scene) -> f64 {
        mech::v_dot(scene, self.scope, self.dv, self.dv)
    }
    fn squared_norm_guess(&self, scene: &Scene) -> f64 {
        let v = self.velocity[self.order];
        mech::v_dot(scene, self.scope, v, v)
    }
}

/// `res += M·dx` for every mass (SOFA's `addMdx` visitor with factor 1).
fn add_mdx(scene: &mut Scene, scope: &MechScope, res: VecId, dx: VecId) {
    for &c in &scope.masses {
        let Scene { components, store, .. } = &mut *scene;
        let mass = components[c].role::<dyn settee_core::component::Mass>().expect("mass role");
        let s = mass.state();
        let mut r = store.get_mut(s).take(res);
        mass.add_mdx(&mut r, store.get(s).read(dx), 1.0);
        store.get_mut(s).put(res, r);
    }
}

impl OdeSolver for BDFOdeSolver {
    /// SOFA's `OdeSolver` defaults, which the class does not override: "not implemented", 0.
    fn integration_factors(&self, _dt: f64) -> settee_core::constraint::IntegrationFactors {
        settee_core::constraint::IntegrationFactors { position: 0.0, velocity: 0.0 }
    }
    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, dt: f64, x_result: VecId, v_result: VecId) -> SimResult {
        let (Some(newton), Some(linear_solver)) = (self.newton, self.linear_solver) else {
            return Err(SimError::new("BDFOdeSolver was not initialised"));
        };
        // The order ramps up while the history fills.
        let order = self.order.min(self.solves + 1).max(1);
        self.times.push_back(scene.params(scope.node).time + dt);
        while self.times.len() > order + 1 {
            self.times.pop_front();
        }
        let samples: Vec<f64> = self.times.iter().copied().collect();
        if samples.len() != order + 1 {
            return Err(SimError::new(format!("BDFOdeSolver: {} sample times for order {order}", samples.len())));
        }
        (self.a, self.b) = bdf_coefficients(&samples);

        mech::realloc(scene, scope, VecId::DX);
        for slots in [&mut self.position, &mut self.velocity, &mut self.force] {
            slots.resize(order + 1, None);
        }
        self.position[order - 1] = Some(x_result);
        self.velocity[order - 1] = Some(v_result);
        self.force[order - 1] = Some(VecId::FORCE);
        let mut position = Vec::with_capacity(order + 1);
        let mut velocity = Vec::with_capacity(order + 1);
        let mut force = Vec::with_capacity(order + 1);
        for i in 0..=order {
            position.push(slot_vector(scene, scope, &mut self.position[i], VecKind::Coord));
            velocity.push(slot_vector(scene, scope, &mut self.velocity[i], VecKind::Deriv));
            force.push(slot_vector(scene, scope, &mut self.force[i], VecKind::Deriv));
        }
        let r1 = slot_vector(scene, scope, &mut self.r1, VecKind::Deriv);
        let r2 = slot_vector(scene, scope, &mut self.r2, VecKind::Deriv);
        let rhs = slot_vector(scene, scope, &mut self.rhs, VecKind::Deriv);
        let dv = slot_vector(scene, scope, &mut self.dv, VecKind::Deriv);
        let velocity_sum = slot_vector(scene, scope, &mut self.velocity_sum, VecKind::Deriv);

        // Initial guess: x_s = x_{s−1} + h v_{s−1}, v_s = v_{s−1}.
        let (xs, vs) = (position[order], velocity[order]);
        mech::v_op(scene, scope, xs, Some(position[order - 1]), None, 1.0);
        mech::v_op(scene, scope, vs, Some(velocity[order - 1]), None, 1.0);
        mech::v_op(scene, scope, xs, Some(xs), Some(vs), dt);
        mech::propagate_position(scene, scope, xs)?;
        mech::propagate_dx(scene, scope, vs)?;

        let mut residual = MultiStepResidual {
            scope,
            order,
            a: &self.a,
            b: &self.b,
            dt,
            r_k: self.r_k,
            r_m: self.r_m,
            position: position.clone(),
            velocity: velocity.clone(),
            force: force.clone(),
            r1,
            r2,
            rhs,
            dv,
            velocity_sum,
            linear_solver,
        };
        scene.with_role::<dyn NonLinearSolver, _>(newton, |n, s| n.solve_nonlinear(s, &mut residual))?;

        // Shift the history: the result vectors now hold the new state.
        for i in 0..order {
            mech::v_op(scene, scope, velocity[i], Some(velocity[i + 1]), None, 1.0);
            mech::v_op(scene, scope, position[i], Some(position[i + 1]), None, 1.0);
            mech::v_op(scene, scope, force[i], Some(force[i + 1]), None, 1.0);
        }
        self.solves += 1;
        Ok(())
    }
}
