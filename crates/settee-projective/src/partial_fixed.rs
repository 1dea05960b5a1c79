//! `PartialFixedProjectiveConstraint` (formerly `PartialFixedConstraint`): fixes some components
//! of a set of DOFs (mechanics spec §6.2).
//!
//! The same `fixedDirections` mask (one flag per derivative component: Rigid3 `vx vy vz ωx ωy ωz`,
//! Rigid2 `vx vy ω`) applies to every fixed DOF. Increments lose their blocked components;
//! velocities too when `projectVelocity` (the inherited `activate_projectVelocity` is ignored, as in
//! SOFA); positions are left alone. In the assembled matrix, the row and column of every blocked
//! component are cleared with a unit diagonal. With `fixAll` every DOF is fixed.

use settee_core::component::ProjectiveConstraint;
use settee_core::role::Topology;
use settee_core::{component, Component, InitCtx, MechParams, SimResult, StateId};

use crate::fixed::FixedData;
use crate::ProjectiveBase;

use crate::subspace::{active, checked_indices};

/// Attach given particles to their initial positions, in some directions only.
#[component(
    module = "Sofa.Component.Constraint.Projective",
    roles = [ProjectiveConstraint],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Vec6d", "Rigid3d", "Rigid2d"],
    template_rule = FromState,
    inherit = [ProjectiveBase, FixedData, Self],
    data = {
        // One flag per derivative component; the default text is cut to the template's size.
        /// Defines the directions in which the particles are fixed: true (or 1) for fixed, false (or 0) for free
        fixedDirections: Deriv = "1 1 1 1 1 1",
        /// activate project velocity to maintain a constant velocity
        projectVelocity: Bool = "false",
    },
    links = {
        /// topology followed under topological changes
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct PartialFixedProjectiveConstraint {
    state: Option<StateId>,
    /// The fixed DOFs (every DOF when `fixAll`).
    indices: Vec<usize>,
    /// Per derivative component: blocked or free.
    fixed: Vec<bool>,
    fix_all: bool,
    project_velocity: bool,
    end_time: f64,
}

impl PartialFixedProjectiveConstraint {
    /// The fixed DOFs, as listed (out-of-range indices removed; every DOF with `fixAll`).
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// The blocked derivative components (`fixedDirections`).
    pub fn fixed_directions(&self) -> &[bool] {
        &self.fixed
    }

    /// Zeroes the blocked components of the fixed DOFs of `v` (every DOF of `v` with `fixAll`).
    fn clear(&self, v: &mut [f64]) {
        let ds = self.fixed.len();
        if ds == 0 {
            return;
        }
        let clear_dof = |e: &mut [f64]| {
            for (c, _) in self.fixed.iter().enumerate().filter(|(_, b)| **b) {
                e[c] = 0.0;
            }
        };
        if self.fix_all {
            v.chunks_exact_mut(ds).for_each(clear_dof);
            return;
        }
        for &i in &self.indices {
            if let Some(e) = v.get_mut(i * ds..(i + 1) * ds) {
                clear_dof(e);
            }
        }
    }
}

impl Component for PartialFixedProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        let d = cx.data();
        // SOFA reads each flag as a C++ bool; any non-zero number counts as blocked.
        self.fixed = d.get(Self::FIXED_DIRECTIONS).iter().map(|&x| x != 0.0).collect();
        self.fix_all = d.get(FixedData::FIX_ALL);
        self.project_velocity = d.get(Self::PROJECT_VELOCITY);
        self.end_time = d.get(ProjectiveBase::END_TIME);
        let given = d.get(FixedData::INDICES).to_vec();
        let ds = cx.state_layout(s).deriv_size();
        if self.fixed.len() != ds {
            return Err(cx.error(format!("fixedDirections has {} flags but the state's derivatives have {ds} components", self.fixed.len())));
        }
        self.indices = checked_indices(cx, given, s);
        if self.fix_all {
            self.indices = (0..cx.state_size(s)).collect();
        }
        Ok(())
    }
}

impl ProjectiveConstraint for PartialFixedProjectiveConstraint {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        if active(self.end_time, p) {
            self.clear(dx);
        }
    }
    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]) {
        if self.project_velocity && active(self.end_time, p) {
            self.clear(v);
        }
    }
    fn project_position(&mut self, _p: &MechParams, _x: &mut [f64]) {}
    /// The blocked components of every fixed DOF, DOF by DOF in the order of `indices`.
    fn projected_rows(&self, p: &MechParams, ds: usize, out: &mut Vec<usize>) {
        if ds != self.fixed.len() || !active(self.end_time, p) {
            return;
        }
        for &i in &self.indices {
            out.extend(self.fixed.iter().enumerate().filter(|(_, b)| **b).map(|(c, _)| i * ds + c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(time: f64) -> MechParams {
        MechParams { dt: 0.1, time, gravity: [0.0; 3] }
    }

    fn constraint(indices: &[usize], fixed: &[bool]) -> PartialFixedProjectiveConstraint {
        PartialFixedProjectiveConstraint {
            state: Some(StateId::first_in_slot(0)),
            indices: indices.to_vec(),
            fixed: fixed.to_vec(),
            fix_all: false,
            project_velocity: false,
            end_time: -1.0,
        }
    }

    /// Rigid3 with `fixedDirections="1 1 1 0 0 0"` (the InteractionEllipsoidForceField scene):
    /// the translation of DOF 1 is removed, its rotation kept, DOF 0 untouched.
    #[test]
    fn rigid_translation_is_blocked_rotation_kept() {
        let mut c = constraint(&[1], &[true, true, true, false, false, false]);
        let mut dx: Vec<f64> = (1..=12).map(f64::from).collect();
        c.project_response(&params(0.0), &mut dx);
        assert_eq!(dx, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 0.0, 0.0, 10.0, 11.0, 12.0]);
        // Velocities are only projected with projectVelocity.
        let mut v = vec![0.5; 12];
        c.project_velocity(&params(0.0), &mut v);
        assert_eq!(v, [0.5; 12]);
        c.project_velocity = true;
        c.project_velocity(&params(0.0), &mut v);
        assert_eq!(v, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5]);
        // Positions (7 reals per Rigid3 DOF) are never changed.
        let mut x = vec![0.25; 14];
        c.project_position(&params(0.0), &mut x);
        assert_eq!(x, [0.25; 14]);
        let mut rows = Vec::new();
        c.projected_rows(&params(0.0), 6, &mut rows);
        assert_eq!(rows, [6, 7, 8]);
    }

    /// Vec3 with only y blocked on DOFs 2 and 0; fixAll blocks y everywhere; after endTime nothing.
    #[test]
    fn vec3_single_direction_fix_all_and_end_time() {
        let mut c = constraint(&[2, 0], &[false, true, false]);
        let mut dx = vec![1.0, -2.0, 3.0, 4.0, -5.0, 6.0, 7.0, -8.0, 9.0];
        c.project_response(&params(0.0), &mut dx);
        assert_eq!(dx, [1.0, 0.0, 3.0, 4.0, -5.0, 6.0, 7.0, 0.0, 9.0]);
        let mut rows = Vec::new();
        c.projected_rows(&params(0.0), 3, &mut rows);
        assert_eq!(rows, [7, 1]);
        // A state of another derivative size gets no rows.
        rows.clear();
        c.projected_rows(&params(0.0), 6, &mut rows);
        assert!(rows.is_empty());

        c.fix_all = true;
        c.indices = vec![0, 1, 2];
        let mut dx = vec![1.0, -2.0, 3.0, 4.0, -5.0, 6.0, 7.0, -8.0, 9.0];
        c.project_response(&params(0.0), &mut dx);
        assert_eq!(dx, [1.0, 0.0, 3.0, 4.0, 0.0, 6.0, 7.0, 0.0, 9.0]);
        c.projected_rows(&params(0.0), 3, &mut rows);
        assert_eq!(rows, [1, 4, 7]);

        c.end_time = 0.5;
        let mut dx = vec![1.0; 9];
        c.project_response(&params(0.5), &mut dx);
        assert_eq!(dx, [1.0; 9]);
        rows.clear();
        c.projected_rows(&params(0.5), 3, &mut rows);
        assert!(rows.is_empty());
    }
}
