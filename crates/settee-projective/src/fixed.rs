//! `FixedProjectiveConstraint`: fixes a set of DOFs by zeroing their increments.

use settee_core::component::ProjectiveConstraint;
use settee_core::role::Topology;
use settee_core::topology_change::{Follow, TopologyChange};
use settee_core::{component, data_group, Component, ComponentId, InitCtx, MechParams, SimResult, StateId};

use crate::subspace::{dof_rows, follow_points, zero_dofs};
use crate::ProjectiveBase;

/// Data of `FixedProjectiveConstraint`, inherited by `PartialFixedProjectiveConstraint`.
#[data_group(data = {
    /// indices of the fixed DOFs
    indices: Indices = "0",
    /// fix every DOF
    fixAll: Bool = "false",
    /// also zero the velocity of fixed DOFs when velocities are projected
    activate_projectVelocity: Bool = "false",
    /// display the fixed DOFs (rendering only)
    showObject: Bool = "true",
    /// size of the displayed DOFs (rendering only)
    drawSize: Real = "0",
})]
pub struct FixedData;

/// Fixes DOFs: their increments (and optionally velocities) are projected to zero.
#[component(
    module = "Sofa.Component.Constraint.Projective",
    roles = [ProjectiveConstraint],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d", "Rigid2d", "Rigid3d"],
    template_rule = FromState,
    inherit = [ProjectiveBase, FixedData],
    links = {
        /// topology followed under topological changes
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct FixedProjectiveConstraint {
    state: Option<StateId>,
    deriv_size: usize,
    /// Fixed DOFs (every DOF when `fix_all`).
    indices: Vec<usize>,
    fix_all: bool,
    project_velocity: bool,
    end_time: f64,
    /// The state's size as of the last topological change (the length the next point events
    /// apply to).
    nb_points: usize,
}

impl FixedProjectiveConstraint {
    fn active(&self, p: &MechParams) -> bool {
        self.end_time < 0.0 || p.time < self.end_time
    }

    fn zero(&self, v: &mut [f64]) {
        if self.fix_all {
            v.fill(0.0);
            return;
        }
        zero_dofs(v, &self.indices, self.deriv_size);
    }

    pub fn indices(&self) -> &[usize] {
        &self.indices
    }
}

/// The indices below `n`; the others are dropped with a warning.
fn within(cx: &mut InitCtx, given: Vec<usize>, n: usize) -> Vec<usize> {
    let (valid, out): (Vec<usize>, Vec<usize>) = given.into_iter().partition(|&i| i < n);
    if !out.is_empty() {
        cx.warn(format!("indices {out:?} are beyond the {n} DOFs of the state and are ignored"));
    }
    valid
}

impl Component for FixedProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        self.deriv_size = cx.state_layout(s).deriv_size();
        let n = cx.state_size(s);
        let d = cx.data();
        self.fix_all = d.get(FixedData::FIX_ALL);
        self.project_velocity = d.get(FixedData::ACTIVATE_PROJECT_VELOCITY);
        self.end_time = d.get(ProjectiveBase::END_TIME);
        let given = d.get(FixedData::INDICES).to_vec();
        self.indices = within(cx, given, n);
        if self.fix_all {
            self.indices = (0..n).collect();
        }
        self.nb_points = n;
        Ok(())
    }

    /// `indices` linked to an engine's output (BoxConstraint's BoxROI) took a new value: the
    /// fixed set is the new one, as SOFA's Data reads its parent.
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        if self.fix_all {
            return Ok(());
        }
        let n = cx.state_size(s);
        let given = cx.data().get(FixedData::INDICES).to_vec();
        self.indices = within(cx, given, n);
        Ok(())
    }

    /// The fixed indices follow point changes as SOFA's `TopologySubsetIndices`: a removed point
    /// leaves the list, the point moved into its slot is renamed; `fixAll` fixes every point
    /// after the change.
    fn topology_changed(&mut self, cx: &mut InitCtx, _topology: ComponentId, changes: &[TopologyChange]) -> SimResult<Follow> {
        let Some(s) = self.state else { return Ok(Follow::NotConcerned) };
        let (indices, n) = follow_points(cx, s, std::mem::take(&mut self.indices), self.nb_points, changes)?;
        self.indices = if self.fix_all { (0..n).collect() } else { indices };
        self.nb_points = n;
        if !self.fix_all {
            cx.data_mut().put(FixedData::INDICES, self.indices.clone());
        }
        Ok(Follow::Followed)
    }
}

impl ProjectiveConstraint for FixedProjectiveConstraint {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        if self.active(p) {
            self.zero(dx);
        }
    }
    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]) {
        if self.project_velocity && self.active(p) {
            self.zero(v);
        }
    }
    fn project_position(&mut self, _p: &MechParams, _x: &mut [f64]) {}
    fn projected_rows(&self, p: &MechParams, ds: usize, out: &mut Vec<usize>) {
        if self.active(p) {
            dof_rows(&self.indices, ds, out);
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check Data by name
mod tests {
    use settee_core::simulation::{init_root, update_live_data};
    use settee_core::testing::add;
    use settee_core::topology_change::{propagate, ElementKind, TopologyChange};
    use settee_core::{ComponentId, Factory, Scene};
    use settee_topology::SetTopologyContainer;

    use super::FixedProjectiveConstraint;

    fn factory() -> Factory {
        settee_statecontainer::factory_with(&[settee_topology::register, settee_engine::register, crate::register])
    }

    const POS: &str = "0 0 0  1 0 0  2 0 0  3 0 0  4 0 0  5 0 0";

    fn points_changed(s: &mut Scene, t: ComponentId, change: TopologyChange) {
        let topo = s.get_mut::<SetTopologyContainer>(t).unwrap().topo_mut();
        match &change {
            TopologyChange::Removed { indices, .. } => topo.nb_points -= indices.len(),
            TopologyChange::Added { count, .. } => topo.nb_points += count,
            TopologyChange::Renumbered { .. } => {}
        }
        propagate(s, t, &[change]).unwrap();
    }

    fn removed(indices: &[usize]) -> TopologyChange {
        TopologyChange::Removed { kind: ElementKind::Point, indices: indices.to_vec(), elements: vec![] }
    }

    #[test]
    fn fixed_points_follow_swap_with_last_renumbering() {
        let f = factory();
        let mut s = Scene::new("root");
        let ms = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", POS)]);
        let t = add(&mut s, &f, Scene::ROOT, "PointSetTopologyContainer", &[("position", POS)]);
        let c = add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "0 4 5")]);
        let all = add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("fixAll", "1")]);
        init_root(&mut s, &f).unwrap();
        // Removing 3 moves point 5 into slot 3; removing 1 then moves point 4 into slot 1.
        points_changed(&mut s, t, removed(&[3, 1]));
        assert_eq!(s.store.get(s.state_of(ms).unwrap()).size, 4);
        assert_eq!(s.get::<FixedProjectiveConstraint>(c).unwrap().indices(), &[0, 1, 3]);
        assert_eq!(s.entry(c).data.indices("indices"), &[0, 1, 3]);
        assert_eq!(s.get::<FixedProjectiveConstraint>(all).unwrap().indices(), &[0, 1, 2, 3]);
        // A fixed point removed leaves the list.
        points_changed(&mut s, t, removed(&[1]));
        assert_eq!(s.get::<FixedProjectiveConstraint>(c).unwrap().indices(), &[0, 1]);
        // Added points are free, except with fixAll.
        points_changed(&mut s, t, TopologyChange::Added { kind: ElementKind::Point, count: 2, elements: vec![], ancestors: vec![], coefs: vec![] });
        assert_eq!(s.get::<FixedProjectiveConstraint>(c).unwrap().indices(), &[0, 1]);
        assert_eq!(s.get::<FixedProjectiveConstraint>(all).unwrap().indices(), &[0, 1, 2, 3, 4]);
    }

    /// BoxConstraint's prefab: a BoxROI whose `indices` feed the constraint.
    #[test]
    fn a_box_selection_follows_the_points_too() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", POS)]);
        let t = add(&mut s, &f, Scene::ROOT, "PointSetTopologyContainer", &[("position", POS)]);
        let b = add(&mut s, &f, Scene::ROOT, "BoxROI", &[("name", "box"), ("box", "3.5 -1 -1  6 1 1")]);
        let c = add(&mut s, &f, Scene::ROOT, "FixedProjectiveConstraint", &[("indices", "@box.indices")]);
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.get::<FixedProjectiveConstraint>(c).unwrap().indices(), &[4, 5]);
        // Point 0 removed: point 5 (x = 5) is point 0 now, point 4 keeps its index.
        points_changed(&mut s, t, removed(&[0]));
        update_live_data(&mut s).unwrap();
        let mut got = s.get::<FixedProjectiveConstraint>(c).unwrap().indices().to_vec();
        got.sort();
        assert_eq!(got, [0, 4]);
        assert_eq!(s.entry(b).data.indices("indices"), &[0, 4]);
    }
}
