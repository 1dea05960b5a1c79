//! `FixedPlaneProjectiveConstraint` (formerly `FixedPlaneConstraint`): the DOFs lying between two
//! planes of normal `direction` cannot move along it.
//!
//! With `dmin ≠ dmax`, the DOFs whose position `p` satisfies `dmin < p·direction < dmax` at init
//! are added to `indices`. Increments lose their component along `direction` (`dx −= (dx·d) d`,
//! with `d` as given: SOFA does not normalise it); velocities and positions are left alone. In an
//! assembled matrix, every component where `direction` is non-zero is cleared with a unit
//! diagonal, as SOFA's `applyConstraint` does.

use settee_core::component::ProjectiveConstraint;
use settee_core::role::Topology;
use settee_core::topology_change::{Follow, TopologyChange};
use settee_core::{component, Component, ComponentId, InitCtx, MechParams, SimResult, StateId, VecId};

use crate::ProjectiveBase;

use crate::subspace::{checked_indices, follow_points};

/// Blocks the motion along a direction of the DOFs lying between two planes normal to it.
#[component(
    module = "Sofa.Component.Constraint.Projective",
    roles = [ProjectiveConstraint],
    templates = ["Vec3d", "Vec6d", "Rigid3d"],
    template_rule = FromState,
    inherit = [ProjectiveBase],
    data = {
        /// normal direction of the planes
        direction: Coord,
        /// minimum plane distance from the origin
        dmin: Real = "0",
        /// maximum plane distance from the origin
        dmax: Real = "0",
        /// indices of the fixed points (those between the planes are added at init when dmin ≠ dmax)
        indices: Indices,
    },
    links = {
        /// topology followed under topological changes
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct FixedPlaneProjectiveConstraint {
    state: Option<StateId>,
    indices: Vec<usize>,
    /// Points of the state when the indices were last made valid (for following changes).
    nb_points: usize,
    /// The direction on the translational components (3 reals).
    direction: [f64; 3],
    deriv_size: usize,
}

impl FixedPlaneProjectiveConstraint {
    /// The constrained DOFs.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }
}

impl Component for FixedPlaneProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        let layout = cx.state_layout(s);
        self.deriv_size = layout.deriv_size();
        let d = cx.data();
        let dir = d.get(Self::DIRECTION).to_vec();
        let (dmin, dmax) = (d.get(Self::DMIN), d.get(Self::DMAX));
        let given = d.get(Self::INDICES).to_vec();
        if dir.len() < 3 || dir[..3].iter().all(|&c| c == 0.0) {
            return Err(cx.error("direction is missing or zero").hint("give the planes' normal, e.g. direction=\"0 0 1\""));
        }
        self.direction = [dir[0], dir[1], dir[2]];
        self.indices = checked_indices(cx, given, s);
        if dmin != dmax {
            let cs = layout.coord_size();
            let x = cx.scene.store.get(s).read(VecId::POSITION);
            for (i, p) in x.chunks_exact(cs).enumerate() {
                let dist = p[0] * self.direction[0] + p[1] * self.direction[1] + p[2] * self.direction[2];
                if dist > dmin && dist < dmax {
                    self.indices.push(i);
                }
            }
        }
        self.nb_points = cx.state_size(s);
        Ok(())
    }

    /// The constrained points follow point changes as SOFA's `TopologySubsetIndices`: a removed
    /// point leaves the list, the point moved into its slot is renamed. Points added between
    /// the planes are not added (SOFA selects them at init only).
    fn topology_changed(&mut self, cx: &mut InitCtx, _topology: ComponentId, changes: &[TopologyChange]) -> SimResult<Follow> {
        let Some(s) = self.state else { return Ok(Follow::NotConcerned) };
        (self.indices, self.nb_points) = follow_points(cx, s, std::mem::take(&mut self.indices), self.nb_points, changes)?;
        cx.data_mut().put(Self::INDICES, self.indices.clone());
        Ok(Follow::Followed)
    }
}

impl ProjectiveConstraint for FixedPlaneProjectiveConstraint {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }
    fn project_response(&mut self, _p: &MechParams, dx: &mut [f64]) {
        let (ds, d) = (self.deriv_size, self.direction);
        for &i in &self.indices {
            if let Some(e) = dx.get_mut(i * ds..i * ds + 3) {
                let dot = e[0] * d[0] + e[1] * d[1] + e[2] * d[2];
                for c in 0..3 {
                    e[c] -= d[c] * dot;
                }
            }
        }
    }
    fn project_velocity(&mut self, _p: &MechParams, _v: &mut [f64]) {}
    fn project_position(&mut self, _p: &MechParams, _x: &mut [f64]) {}
    fn projected_rows(&self, _p: &MechParams, ds: usize, out: &mut Vec<usize>) {
        for &i in &self.indices {
            for c in 0..3 {
                if self.direction[c] != 0.0 {
                    out.push(i * ds + c);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn increments_lose_their_component_along_the_direction() {
        let mut c = FixedPlaneProjectiveConstraint { state: None, indices: vec![1], nb_points: 3, direction: [0.0, 0.0, 1.0], deriv_size: 3 };
        let p = MechParams { dt: 0.01, time: 0.0, gravity: [0.0; 3] };
        let mut dx = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        c.project_response(&p, &mut dx);
        assert_eq!(dx, vec![1.0, 2.0, 3.0, 4.0, 5.0, 0.0]);
        let mut rows = Vec::new();
        c.projected_rows(&p, 3, &mut rows);
        assert_eq!(rows, vec![5]);
    }
}
