//! `LinearVelocityProjectiveConstraint`: imposes a piecewise-linear velocity, given at key times,
//! on a set of DOFs, and integrates it itself (mechanics spec §6.5).
//!
//! The key search runs only until the last key time is passed (`finished`); afterwards the last
//! velocity is kept and applied only with `continueAfterEnd`. While active: increments of the
//! DOFs are zeroed; their velocity is the interpolated `u` (or only the listed `coordinates`);
//! their position becomes the position this constraint last wrote plus `u·dt` (the Rigid3
//! exponential map for `Coord + Deriv`), so the DOFs follow the constraint's own integration
//! whatever the solver computed. The assembled matrix clears their rows and columns while active.
//!
//! The context time is the time at the start of the step, accumulated `t ← t + dt` by the loop,
//! which the key comparisons see exactly (with dt = 0.05, step 41 starts at 2.000000000000001).
//!
//! SOFA's `projectJacobianMatrix` of this class does nothing: constraint Jacobian rows are not
//! projected by it. Settee's core projects rows through `project_response`, which zeroes them.

use settee_core::{InitCtx, MechParams, SimResult};

use crate::linear_movement::{Keyed, KeyedKind};
use crate::subspace::active;

/// Impose a velocity to given DOFs (translation and rotation).
pub type LinearVelocityProjectiveConstraint = Keyed<Velocity>;

/// What `LinearVelocityProjectiveConstraint` keeps besides the keys.
#[derive(Clone, Default)]
pub struct Velocity {
    /// Components written (empty: all).
    coordinates: Vec<usize>,
    continue_after_end: bool,
    /// The last key time has been passed; the keys are not searched any more.
    finished: bool,
    /// Positions written by the last position projection (captured at the first one).
    xp: Vec<f64>,
}

impl Keyed<Velocity> {
    /// SOFA's `findKeyTimes` at time `t`; returns true once `t` is past the last key.
    fn find_key_times(&mut self, t: f64) -> bool {
        let k = &mut self.dofs;
        let (Some(&first), Some(&last)) = (k.key_times.first(), k.key_times.last()) else {
            return false;
        };
        if t > last {
            k.prev.clone_from(&k.next);
            k.next_t = f64::INFINITY;
            return true;
        }
        if t >= first && t <= last {
            k.search(t);
        }
        false
    }

    fn update(&mut self, p: &MechParams) {
        if !self.kind.finished {
            self.kind.finished = self.find_key_times(p.time);
        }
    }

    /// SOFA's `isConstraintActive`.
    fn imposing(&self) -> bool {
        (!self.kind.finished || self.kind.continue_after_end) && self.dofs.next_t != self.dofs.prev_t
    }

    /// The imposed velocity at time `t`: interpolated between the keys, the last one once
    /// finished.
    /// One DOF's derivative (at most 6 reals), kept inline: this runs at every projection.
    fn velocity(&self, t: f64) -> settee_core::scratch::SmallVec<[f64; 6]> {
        let k = &self.dofs;
        if self.kind.finished {
            return settee_core::scratch::SmallVec::from_slice(&k.prev);
        }
        let s = (t - k.prev_t) / (k.next_t - k.prev_t);
        k.prev.iter().zip(&k.next).map(|(&a, &b)| (b - a) * s + a).collect()
    }
}

impl KeyedKind for Velocity {
    const VALUES: &'static str = "velocities";

    fn read(c: &mut Keyed<Self>, cx: &mut InitCtx, _ds: usize) -> SimResult<Vec<f64>> {
        let d = cx.data();
        c.kind.continue_after_end = d.get(Keyed::<Self>::CONTINUE_AFTER_END);
        c.kind.coordinates = d.get(Keyed::<Self>::COORDINATES).to_vec();
        let velocities = d.get(Keyed::<Self>::VELOCITIES).to_vec();
        if c.dofs.key_times.is_empty() {
            return Err(cx.error("keyTimes is empty: at least one key time is needed").hint("give keyTimes and one velocity per key time"));
        }
        Ok(velocities)
    }

    fn finish(c: &mut Keyed<Self>, cx: &mut InitCtx, ds: usize) -> SimResult {
        if let Some(&k) = c.kind.coordinates.iter().find(|&&k| k >= ds) {
            return Err(cx.error(format!("coordinate {k} does not exist: the state's derivatives have {ds} components")));
        }
        c.kind.finished = false;
        c.kind.xp.clear();
        Ok(())
    }

    /// Acting (`endTime`), keys searched for the context time, and imposing the velocity.
    fn imposes_at(c: &mut Keyed<Self>, p: &MechParams) -> bool {
        if !active(c.dofs.end_time, p) {
            return false;
        }
        c.update(p);
        c.imposing()
    }

    fn set_velocity(c: &Keyed<Self>, p: &MechParams, v: &mut [f64]) {
        let u = c.velocity(p.time);
        let ds = c.dofs.ds();
        for &i in &c.dofs.indices {
            let Some(e) = v.get_mut(i * ds..(i + 1) * ds) else { continue };
            if c.kind.coordinates.is_empty() {
                e.copy_from_slice(&u);
            } else {
                for &k in &c.kind.coordinates {
                    e[k] = u[k];
                }
            }
        }
    }

    fn project_position(c: &mut Keyed<Self>, p: &MechParams, x: &mut [f64]) {
        if !active(c.dofs.end_time, p) {
            return;
        }
        if c.kind.xp.is_empty() {
            c.kind.xp = x.to_vec();
        }
        c.update(p);
        if !c.imposing() {
            return;
        }
        let layout = c.dofs.layout.expect("initialised");
        let cs = layout.coord_size();
        let u = c.velocity(p.time);
        let h = p.dt;
        let Velocity { coordinates, xp, .. } = &mut c.kind;
        for &i in &c.dofs.indices {
            let (Some(xi), Some(xp)) = (x.get_mut(i * cs..(i + 1) * cs), xp.get_mut(i * cs..(i + 1) * cs)) else {
                continue;
            };
            if coordinates.is_empty() {
                // Coord + Deriv·h: the product first, then the (Rigid3: exponential-map) sum.
                xi.copy_from_slice(xp);
                layout.coord_add_scaled(xi, &u, h);
            } else {
                // SOFA indexes the coordinate and the derivative by the same component number.
                for &k in coordinates.iter() {
                    xi[k] = xp[k] + u[k] * h;
                }
            }
            xp.copy_from_slice(xi);
        }
    }

    /// Every derivative component of every constrained DOF, while the velocity is imposed.
    fn clears_rows(c: &Keyed<Self>) -> bool {
        c.imposing()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear_movement::tests::keyed;
    use settee_core::component::ProjectiveConstraint;
    use settee_core::Layout;

    fn params(time: f64, dt: f64) -> MechParams {
        MechParams { dt, time, gravity: [0.0; 3] }
    }

    fn constraint(layout: Layout, key_times: &[f64], velocities: &[f64]) -> LinearVelocityProjectiveConstraint {
        LinearVelocityProjectiveConstraint { dofs: keyed(layout, &[0], key_times, velocities), ..Default::default() }
    }

    /// Vec3, keys 0 → 1 with velocities (0,0,0) → (2,4,0), dt 0.25: the position advances by
    /// u(t)·dt with u(t) = (2t, 4t, 0) at the step start times 0, 0.25, 0.5, 0.75, then the
    /// constraint stops after the last key (no continueAfterEnd).
    #[test]
    fn vec3_integrates_the_interpolated_velocity_then_stops() {
        let mut c = constraint(Layout::Vec3, &[0.0, 1.0], &[0.0, 0.0, 0.0, 2.0, 4.0, 0.0]);
        let mut x = vec![0.0; 3];
        let mut t = 0.0;
        for _ in 0..4 {
            c.project_position(&params(t, 0.25), &mut x);
            t += 0.25;
        }
        assert_eq!(x, [0.75, 1.5, 0.0]);
        let mut v = vec![9.0; 3];
        c.project_velocity(&params(0.75, 0.25), &mut v);
        assert_eq!(v, [1.5, 3.0, 0.0]);
        let mut dx = vec![1.0; 3];
        c.project_response(&params(0.75, 0.25), &mut dx);
        assert_eq!(dx, [0.0; 3]);
        // At T = 1 exactly (the last key, no later one) the search leaves nextT at the first key
        // (0) and prevT at 1: still active, with u = (v1 − v1)·(0/−1) + v1 = v1 = (2, 4, 0).
        c.project_position(&params(1.0, 0.25), &mut x);
        assert_eq!(x, [1.25, 2.5, 0.0]);
        assert_eq!((c.dofs.prev_t, c.dofs.next_t), (1.0, 0.0));
        // After it: finished and, without continueAfterEnd, free.
        let mut dx = vec![1.0; 3];
        c.project_response(&params(1.25, 0.25), &mut dx);
        assert!(c.kind.finished);
        assert_eq!(dx, [1.0; 3]);
        let mut rows = Vec::new();
        c.projected_rows(&params(1.25, 0.25), 3, &mut rows);
        assert!(rows.is_empty());
    }

    /// With continueAfterEnd the last velocity is applied for ever; with `coordinates="1"` only
    /// y is written (velocity and position).
    #[test]
    fn continue_after_end_and_coordinates() {
        let mut c = constraint(Layout::Vec3, &[0.0, 1.0], &[0.0, 0.0, 0.0, 2.0, 4.0, 6.0]);
        c.kind.continue_after_end = true;
        c.kind.coordinates = vec![1];
        let mut x = vec![10.0, 0.0, 0.0];
        c.project_position(&params(0.0, 0.5), &mut x); // u = 0
        c.project_position(&params(0.5, 0.5), &mut x); // u = (1, 2, 3): y += 1
        c.project_position(&params(1.5, 0.5), &mut x); // finished, u = (2, 4, 6): y += 2
        c.project_position(&params(2.0, 0.5), &mut x); // y += 2
        assert_eq!(x, [10.0, 5.0, 0.0]);
        let mut v = vec![-1.0; 3];
        c.project_velocity(&params(2.0, 0.5), &mut v);
        assert_eq!(v, [-1.0, 4.0, -1.0]);
        let mut rows = Vec::new();
        c.projected_rows(&params(2.0, 0.5), 3, &mut rows);
        assert_eq!(rows, [0, 1, 2]);
    }
}
