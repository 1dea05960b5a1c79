//! `RungeKutta4Solver`: the classical explicit 4th-order Runge-Kutta scheme, SOFA's stage sequence
//! (mechanics spec §3.3).
//!
//! Each stage evaluates `computeAcc(x, v)`: project the stage positions and velocities, propagate
//! them to mapped states, compute the forces at the stage state (into `force`, as SOFA does),
//! divide by the (diagonal) masses and project the acceleration.

use settee_core::component::OdeSolver;
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::simulation::timed;
use settee_core::{component, Component, Scene, SimResult, VecId, VecKind};

/// A popular explicit time integrator (classical 4th-order Runge-Kutta; requires diagonal masses).
#[component(
    module = "Sofa.Component.ODESolver.Forward",
    roles = [OdeSolver],
)]
#[derive(Clone, Default)]
pub struct RungeKutta4Solver;

impl Component for RungeKutta4Solver {}
/// SOFA's `MechanicalOperations::computeAcc(t, a, x, v)` (visitor engine): the forces are
/// computed into the state's `force` vector.
pub(crate) fn compute_acc(scene: &mut Scene, scope: &MechScope, a: VecId, x: VecId, v: VecId) -> SimResult {
    mech::project_position_velocity(scene, scope, x, v)?;
    mech::propagate_position_velocity(scene, scope, x, v)?;
    timed(scene, "compute force", |s| mech::compute_force(s, scope, VecId::FORCE, x, v))?;
    mech::acc_from_f(scene, scope, a, VecId::FORCE)?;
    mech::project_response(scene, scope, a)
}

/// `r = a + b·k` as the first two operands of a generic `vMultiOp`, then `r += opⱼ·kⱼ`.
pub(crate) fn multi_op(scene: &mut Scene, scope: &MechScope, r: VecId, first: VecId, rest: &[(VecId, f64)]) {
    let mut it = rest.iter();
    match it.next() {
        Some(&(b, k)) => mech::v_op(scene, scope, r, Some(first), Some(b), k),
        None => mech::v_op(scene, scope, r, Some(first), None, 1.0),
    }
    for &(b, k) in it {
        mech::v_op(scene, scope, r, Some(r), Some(b), k);
    }
}

impl OdeSolver for RungeKutta4Solver {
    /// SOFA: position factor 0, velocity factor `dt/2`.
    fn integration_factors(&self, dt: f64) -> settee_core::constraint::IntegrationFactors {
        settee_core::constraint::IntegrationFactors { position: 0.0, velocity: dt / 2.0 }
    }
    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, dt: f64, x_result: VecId, v_result: VecId) -> SimResult {
        let pos = VecId::POSITION;
        let vel = VecId::VELOCITY;

        // Temporaries, in SOFA's allocation order (zero-filled, freed at the end of the step).
        let k1a = mech::alloc_deriv(scene, scope);
        let k2a = mech::alloc_deriv(scene, scope);
        let k3a = mech::alloc_deriv(scene, scope);
        let k4a = mech::alloc_deriv(scene, scope);
        let k1v = vel;
        let k2v = mech::alloc_deriv(scene, scope);
        let k3v = mech::alloc_deriv(scene, scope);
        let k4v = mech::alloc_deriv(scene, scope);
        let new_x = scene.store.alloc(&scope.states, VecKind::Coord);

        let result = (|| -> SimResult {
            let step_by2 = dt / 2.0;
            let step_by3 = dt / 3.0;
            let step_by6 = dt / 6.0;

            // v += g·dt for masses that integrate gravity separately (on the state's velocity).
            mech::add_separate_gravity(scene, scope, dt, vel);

            // Stage 1: k1v = v.
            compute_acc(scene, scope, k1a, pos, vel)?;

            // Stage 2.
            mech::v_op(scene, scope, new_x, Some(pos), Some(k1v), step_by2);
            mech::v_op(scene, scope, k2v, Some(vel), Some(k1a), step_by2);
            compute_acc(scene, scope, k2a, new_x, k2v)?;

            // Stage 3.
            mech::v_op(scene, scope, new_x, Some(pos), Some(k2v), step_by2);
            mech::v_op(scene, scope, k3v, Some(vel), Some(k2a), step_by2);
            compute_acc(scene, scope, k3a, new_x, k3v)?;

            // Stage 4.
            mech::v_op(scene, scope, new_x, Some(pos), Some(k3v), dt);
            mech::v_op(scene, scope, k4v, Some(vel), Some(k3a), dt);
            compute_acc(scene, scope, k4a, new_x, k4v)?;

            // Final combination: position first (k1v is the old velocity), then velocity.
            multi_op(scene, scope, x_result, pos, &[(k1v, step_by6), (k2v, step_by3), (k3v, step_by3), (k4v, step_by6)]);
            multi_op(scene, scope, v_result, vel, &[(k1a, step_by6), (k2a, step_by3), (k3a, step_by3), (k4a, step_by6)]);
            Ok(())
        })();

        for id in [k1a, k2a, k3a, k4a, k2v, k3v, k4v, new_x] {
            mech::free_vec(scene, scope, id);
        }
        result
    }
}
