//! `PointProjectiveConstraint`: pins a set of DOFs to one target point.
//!
//! Positions of the constrained DOFs are replaced by `point`; their increments and velocities are
//! projected to zero; the assembled matrix clears their rows and columns (unit diagonal), as for
//! fixed DOFs. With `fixAll` every DOF is projected in vectors, while the matrix still clears
//! only the listed `indices` (SOFA's behaviour).

use settee_core::component::ProjectiveConstraint;
use settee_core::role::Topology;
use settee_core::{component, Component, InitCtx, MechParams, SimResult, StateId};

use crate::ProjectiveBase;

use crate::subspace::{active, checked_indices, dof_rows, vector_layout};

/// Project particles to a point
#[component(
    module = "Sofa.Component.Constraint.Projective",
    roles = [ProjectiveConstraint],
    templates = ["Vec3d", "Vec2d"],
    template_rule = FromState,
    inherit = [ProjectiveBase],
    data = {
        /// Indices of the points to project
        indices: Indices = "0",
        /// Target of the projection
        point: Coord,
        /// filter all the DOF to implement a fixed object
        fixAll: Bool = "false",
        /// Size of the rendered particles (0 -> point based rendering, >0 -> radius of spheres; rendering only)
        drawSize: Real = "0",
    },
    links = {
        /// link to the topology container (followed under topological changes)
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct PointProjectiveConstraint {
    state: Option<StateId>,
    /// Reals per DOF (coordinates and derivatives have the same size for Vec templates).
    dim: usize,
    indices: Vec<usize>,
    point: Vec<f64>,
    fix_all: bool,
    end_time: f64,
}

impl PointProjectiveConstraint {
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// Applies `f` to the slice of every projected DOF of `v`.
    fn each(&self, v: &mut [f64], mut f: impl FnMut(&mut [f64])) {
        let d = self.dim;
        if self.fix_all {
            v.chunks_exact_mut(d).for_each(f);
            return;
        }
        for &i in &self.indices {
            if let Some(e) = v.get_mut(i * d..(i + 1) * d) {
                f(e);
            }
        }
    }
}

impl Component for PointProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s, dim) = vector_layout(cx)?;
        self.state = Some(s);
        self.dim = dim;
        let d = cx.data();
        self.fix_all = d.get(Self::FIX_ALL);
        self.end_time = d.get(ProjectiveBase::END_TIME);
        let mut point = d.get(Self::POINT).to_vec();
        point.resize(dim, 0.0);
        self.point = point;
        let given = d.get(Self::INDICES).to_vec();
        self.indices = checked_indices(cx, given, s);
        Ok(())
    }
}

impl ProjectiveConstraint for PointProjectiveConstraint {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        if active(self.end_time, p) {
            self.each(dx, |e| e.fill(0.0));
        }
    }
    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]) {
        self.project_response(p, v);
    }
    fn project_position(&mut self, p: &MechParams, x: &mut [f64]) {
        if active(self.end_time, p) {
            let point = self.point.clone();
            self.each(x, |e| e.copy_from_slice(&point));
        }
    }
    fn projected_rows(&self, p: &MechParams, ds: usize, out: &mut Vec<usize>) {
        if active(self.end_time, p) {
            dof_rows(&self.indices, ds, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> MechParams {
        MechParams { dt: 0.1, time: 0.0, gravity: [0.0; 3] }
    }

    #[test]
    fn points_are_pinned_to_the_target() {
        let mut c = PointProjectiveConstraint {
            state: Some(StateId::first_in_slot(0)),
            dim: 3,
            indices: vec![2, 0],
            point: vec![1.0, 2.0, 3.0],
            fix_all: false,
            end_time: -1.0,
        };
        let mut x = vec![0.5; 9];
        c.project_position(&params(), &mut x);
        assert_eq!(x, [1.0, 2.0, 3.0, 0.5, 0.5, 0.5, 1.0, 2.0, 3.0]);
        let mut v = vec![0.5; 9];
        c.project_velocity(&params(), &mut v);
        assert_eq!(v, [0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0]);
        let mut rows = Vec::new();
        c.projected_rows(&params(), 3, &mut rows);
        assert_eq!(rows, [6, 7, 8, 0, 1, 2]);
        // fixAll projects every DOF in vectors; the matrix still clears the listed indices only.
        c.fix_all = true;
        let mut dx = vec![0.5; 9];
        c.project_response(&params(), &mut dx);
        assert!(dx.iter().all(|&d| d == 0.0));
        rows.clear();
        c.projected_rows(&params(), 3, &mut rows);
        assert_eq!(rows.len(), 6);
    }
}
