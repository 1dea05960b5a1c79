//! `DampVelocitySolver` (mechanics spec §3.6): placed after another ODE solver of the same node,
//! it multiplies the velocities by `exp(−rate·dt)` and, when `threshold` is not 0, zeroes every
//! DOF whose velocity is shorter than `threshold` (SOFA's `vThreshold`, on whole DOFs).

use settee_core::component::OdeSolver;
use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{component, Component, InitCtx, Scene, SimResult, VecId};

/// Reduce the velocities.
#[component(
    module = "Sofa.Component.ODESolver.Forward",
    roles = [OdeSolver],
    data = {
        /// Factor used to reduce the velocities. Typically between 0 and 1.
        rate: Real = "0.99",
        /// Threshold under which the velocities are canceled.
        threshold: Real = "0",
    },
)]
#[derive(Clone, Default)]
pub struct DampVelocitySolver {
    rate: f64,
    threshold: f64,
}

impl Component for DampVelocitySolver {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.rate = cx.data().get(Self::RATE);
        self.threshold = cx.data().get(Self::THRESHOLD);
        Ok(())
    }
}

impl OdeSolver for DampVelocitySolver {
    /// SOFA: a solution of a linear system does not reach positions nor velocities through it.
    fn integration_factors(&self, _dt: f64) -> settee_core::constraint::IntegrationFactors {
        settee_core::constraint::IntegrationFactors { position: 0.0, velocity: 0.0 }
    }

    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, dt: f64, _x_result: VecId, v_result: VecId) -> SimResult {
        mech::v_op(scene, scope, v_result, None, Some(v_result), (-self.rate * dt).exp());
        if self.threshold != 0.0 {
            let t2 = self.threshold * self.threshold;
            for &s in &scope.main_states {
                let st = scene.store.get_mut(s);
                let d = st.layout.deriv_size();
                for v in st.write(v_result).chunks_exact_mut(d) {
                    let n2: f64 = v.iter().map(|c| c * c).sum();
                    if n2 < t2 {
                        v.fill(0.0);
                    }
                }
            }
        }
        Ok(())
    }
}
