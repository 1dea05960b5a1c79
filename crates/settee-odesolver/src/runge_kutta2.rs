//! `RungeKutta2Solver`: the explicit midpoint method, SOFA's stage sequence (mechanics spec §3.4).

use settee_core::component::OdeSolver;
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{component, Component, Scene, SimResult, VecId, VecKind};

use crate::runge_kutta4::{compute_acc, multi_op};

/// A popular explicit time integrator (second-order Runge-Kutta, the midpoint method; requires diagonal masses).
#[component(
    module = "Sofa.Component.ODESolver.Forward",
    roles = [OdeSolver],
)]
#[derive(Clone, Default)]
pub struct RungeKutta2Solver;

impl Component for RungeKutta2Solver {}

impl OdeSolver for RungeKutta2Solver {
    /// SOFA: position factor 0, velocity factor `dt/2`.
    fn integration_factors(&self, dt: f64) -> settee_core::constraint::IntegrationFactors {
        settee_core::constraint::IntegrationFactors { position: 0.0, velocity: dt / 2.0 }
    }
    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, dt: f64, x_result: VecId, v_result: VecId) -> SimResult {
        let (pos, vel) = (VecId::POSITION, VecId::VELOCITY);
        // Temporaries, in SOFA's allocation order (zero-filled, freed at the end of the step).
        let acc = mech::alloc_deriv(scene, scope);
        let new_x = scene.store.alloc(&scope.states, VecKind::Coord);
        let new_v = mech::alloc_deriv(scene, scope);
        let result = (|| -> SimResult {
            mech::add_separate_gravity(scene, scope, dt, vel);
            compute_acc(scene, scope, acc, pos, vel)?;
            // Half step along the derivative (position first: it reads the old velocity).
            multi_op(scene, scope, new_x, pos, &[(vel, dt / 2.0)]);
            multi_op(scene, scope, new_v, vel, &[(acc, dt / 2.0)]);
            compute_acc(scene, scope, acc, new_x, new_v)?;
            // Full step with the midpoint derivative.
            multi_op(scene, scope, x_result, pos, &[(new_v, dt)]);
            multi_op(scene, scope, v_result, vel, &[(acc, dt)]);
            Ok(())
        })();
        for id in [acc, new_x, new_v] {
            mech::free_vec(scene, scope, id);
        }
        result
    }
}
