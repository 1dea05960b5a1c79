//! `VariationalSymplecticSolver` (mechanics spec §3.10): a variational midpoint integrator that
//! keeps the momentum `p` (`M v` at the first step) from step to step.
//!
//! Implicit variant: Newton iterations on the midpoint displacement `res`, each solving
//! `[(4/h² + 4 r_M/h) M − (1 + 4 r_K/h) K] res = P(f(x) + (2/h) p − K res)` (the previous `res` as
//! the initial guess) and setting `x = x₀ + res`, at least once and at most `steps` times while
//! `‖x − x_prev‖/‖x₀‖ > newtonError`. Then `v = (2/h) res`, `x = x₀ + (h/2) v`, the projected
//! force at that midpoint gives `p' = (h/2) f + M v`, and `x = x₀ + (h/2) v + (h/2) v`.
//! Explicit variant: `a = M⁻¹(f + p/h) − r_M v` (projected), `v = h a`, `x = x₀ + h v`, `p' = M v`.
//!
//! Outputs only (not computed here): the Hamiltonian and the energy file.

use settee_core::component::{LinearSolver, OdeSolver};
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{component, Component, ComponentId, InitCtx, Mbk, Scene, SimError, SimResult, VecId, VecKind};

use crate::euler_implicit::{check_solves_systems, find_linear_solver};
use crate::runge_kutta4::multi_op;

/// Implicit time integrator which conserves linear momentum and mechanical energy.
#[component(
    module = "Sofa.Component.ODESolver.Backward",
    roles = [OdeSolver],
    data = {
        /// Error tolerance for Newton iterations
        newtonError: Real = "0.01",
        /// Maximum number of Newton steps
        steps: Int = "5",
        /// Rayleigh damping coefficient related to stiffness, > 0
        rayleighStiffness: Real = "0",
        /// Rayleigh damping coefficient related to mass, > 0
        rayleighMass: Real = "0",
        /// If kinetic and potential energies should be dumped in a CSV file at each iteration (not written by Settee)
        saveEnergyInFile: Bool = "false",
        /// Use explicit integration scheme
        explicitIntegration: Bool = "false",
        /// File name where kinetic and potential energies are saved in a CSV file (not written by Settee)
        file: Str,
        /// Compute hamiltonian (output only; not computed by Settee)
        computeHamiltonian: Bool = "true",
        /// hamiltonian energy (output, not computed by Settee)
        hamiltonianEnergy: Real = "0",
        /// use real potential energy, if false use approximate potential energy
        useIncrementalPotentialEnergy: Bool = "true",
        /// allocation detail of SOFA, no numerical effect
        threadSafeVisitor: Bool = "false",
    },
    links = {
        /// Linear solver used by this component (default: the first linear solver found from the node downwards)
        linearSolver: LinearSolver,
    },
)]
#[derive(Clone, Default)]
pub struct VariationalSymplecticSolver {
    newton_error: f64,
    newton_steps: usize,
    r_k: f64,
    r_m: f64,
    explicit: bool,
    linear_solver: Option<ComponentId>,
    /// The momentum of the previous step (SOFA's `pID`).
    momentum: Option<VecId>,
    /// Number of solves (SOFA's `cpt`).
    solves: usize,
}

impl Component for VariationalSymplecticSolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        self.newton_error = d.get(Self::NEWTON_ERROR);
        self.newton_steps = d.get(Self::STEPS).max(0) as usize;
        self.r_k = d.get(Self::RAYLEIGH_STIFFNESS);
        self.r_m = d.get(Self::RAYLEIGH_MASS);
        self.explicit = d.get(Self::EXPLICIT_INTEGRATION);
        if d.get(Self::SAVE_ENERGY_IN_FILE) {
            cx.warn("saveEnergyInFile: Settee does not write the energy file");
        }
        self.linear_solver = find_linear_solver(cx);
        match self.linear_solver {
            Some(ls) => check_solves_systems(cx, ls),
            None if self.explicit => Ok(()),
            None => Err(cx.error("a linear solver is required by this component but none was found in this node or below").hint(
                "add e.g. <CGLinearSolver iterations=\"25\" tolerance=\"1e-9\" threshold=\"1e-9\"/> next to the solver, or set explicitIntegration=\"true\"",
            )),
        }
    }
}

/// The vectors of one step: the momentum at its start and at its end, and the results.
#[derive(Clone, Copy)]
struct StepVectors {
    p: VecId,
    new_p: VecId,
    x_result: VecId,
    v_result: VecId,
}

impl VariationalSymplecticSolver {
    fn implicit_step(&self, scene: &mut Scene, scope: &MechScope, h: f64, vs: StepVectors) -> SimResult {
        let StepVectors { p, new_p, x_result, v_result } = vs;
        let ls = self.linear_solver.ok_or_else(|| SimError::new("VariationalSymplecticSolver has no linear solver"))?;
        let (pos, vel, f) = (VecId::POSITION, VecId::VELOCITY, VecId::FORCE);
        let old_pos = scene.store.alloc(&scope.states, VecKind::Coord);
        let resi = scene.store.alloc(&scope.states, VecKind::Coord);
        let b = mech::alloc_deriv(scene, scope);
        let res = mech::alloc_deriv(scene, scope);
        let x0 = scene.store.alloc(&scope.states, VecKind::Coord);
        let result = (|| -> SimResult {
            mech::v_op(scene, scope, old_pos, Some(pos), None, 1.0);
            let position_norm = mech::v_norm(scene, scope, old_pos);
            mech::v_op(scene, scope, x0, Some(pos), None, 1.0);
            let mut iterations = 0;
            let mut error = 0.0;
            while iterations == 0 || (iterations < self.newton_steps && error > self.newton_error) {
                mech::v_op(scene, scope, b, None, None, 1.0);
                settee_core::simulation::timed(scene, "compute force", |s| mech::compute_force(s, scope, f, pos, vel))?;
                mech::v_op(scene, scope, b, Some(b), Some(f), 1.0);
                mech::v_op(scene, scope, b, Some(b), Some(p), 2.0 / h);
                mech::propagate_dx(scene, scope, res)?;
                mech::add_mbkdx(scene, scope, b, res, Mbk { m: 0.0, b: 0.0, k: -1.0 }, true)?;
                mech::project_response(scene, scope, b)?;
                let factors = Mbk { m: 4.0 / (h * h) + 4.0 * self.r_m / h, b: 0.0, k: -1.0 - 4.0 * self.r_k / h };
                settee_core::simulation::timed(scene, "linear solve", |s| {
                    s.with_role::<dyn LinearSolver, _>(ls, |l, s| l.solve_system(s, scope, factors, b, res))
                })?;
                // One vMultiOp: x = x₀ + res; resi = x − x_prev; x_prev = x.
                multi_op(scene, scope, x_result, old_pos, &[(res, 1.0)]);
                multi_op(scene, scope, resi, x_result, &[(x0, -1.0)]);
                mech::v_op(scene, scope, x0, Some(x_result), None, 1.0);
                mech::propagate_position(scene, scope, x_result)?;
                error = mech::v_norm(scene, scope, resi) / position_norm;
                iterations += 1;
            }
            mech::v_op(scene, scope, v_result, None, Some(res), 2.0 / h);
            multi_op(scene, scope, x_result, old_pos, &[(v_result, h / 2.0)]);
            settee_core::simulation::timed(scene, "compute force", |s| mech::compute_force(s, scope, f, pos, vel))?;
            mech::project_response(scene, scope, f)?;
            mech::v_op(scene, scope, new_p, None, None, 1.0);
            mech::v_op(scene, scope, new_p, Some(new_p), Some(f), h / 2.0);
            mech::add_mbkdx(scene, scope, new_p, v_result, Mbk { m: 1.0, b: 0.0, k: 0.0 }, true)?;
            // SOFA re-executes the midpoint operation with the velocity term given twice.
            multi_op(scene, scope, x_result, old_pos, &[(v_result, h / 2.0), (v_result, h / 2.0)]);
            Ok(())
        })();
        for id in [old_pos, resi, b, res, x0] {
            mech::free_vec(scene, scope, id);
        }
        result
    }

    fn explicit_step(&self, scene: &mut Scene, scope: &MechScope, h: f64, vs: StepVectors) -> SimResult {
        let StepVectors { p, new_p, x_result, v_result } = vs;
        let (pos, vel, f, acc) = (VecId::POSITION, VecId::VELOCITY, VecId::FORCE, VecId::DX);
        mech::realloc(scene, scope, acc);
        settee_core::simulation::timed(scene, "compute force", |s| mech::compute_force(s, scope, f, pos, vel))?;
        mech::v_op(scene, scope, f, Some(f), Some(p), 1.0 / h);
        mech::acc_from_f(scene, scope, acc, f)?;
        if self.r_m > 0.0 {
            mech::v_op(scene, scope, acc, Some(acc), Some(vel), -self.r_m);
        }
        mech::project_response(scene, scope, acc)?;
        mech::v_op(scene, scope, v_result, None, Some(acc), h);
        multi_op(scene, scope, x_result, pos, &[(v_result, h)]);
        mech::v_op(scene, scope, new_p, None, None, 1.0);
        mech::add_mbkdx(scene, scope, new_p, v_result, Mbk { m: 1.0, b: 0.0, k: 0.0 }, true)
    }
}

impl OdeSolver for VariationalSymplecticSolver {
    /// SOFA's defaults of `OdeSolver`: position factor `dt`, velocity factor 1.
    fn integration_factors(&self, dt: f64) -> settee_core::constraint::IntegrationFactors {
        settee_core::constraint::IntegrationFactors { position: dt, velocity: 1.0 }
    }

    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, h: f64, x_result: VecId, v_result: VecId) -> SimResult {
        mech::realloc(scene, scope, VecId::DX);
        // SOFA allocates the momentum at the first solve and whenever the time is 0: p = M v.
        if self.solves == 0 || scene.params(scope.node).time == 0.0 {
            if let Some(old) = self.momentum.take() {
                mech::free_vec(scene, scope, old);
            }
            let p = mech::alloc_deriv(scene, scope);
            mech::add_mbkdx(scene, scope, p, v_result, Mbk { m: 1.0, b: 0.0, k: 0.0 }, true)?;
            self.momentum = Some(p);
        }
        self.solves += 1;
        let previous = self.momentum.expect("allocated above");
        mech::realloc(scene, scope, previous);
        let p = mech::alloc_deriv(scene, scope);
        let new_p = mech::alloc_deriv(scene, scope);
        mech::v_op(scene, scope, p, Some(previous), None, 1.0);
        let vs = StepVectors { p, new_p, x_result, v_result };
        let result = if self.explicit { self.explicit_step(scene, scope, h, vs) } else { self.implicit_step(scene, scope, h, vs) };
        if result.is_ok() {
            mech::v_op(scene, scope, previous, Some(new_p), None, 1.0);
        }
        for id in [p, new_p] {
            mech::free_vec(scene, scope, id);
        }
        result
    }
}
