//! `FixedProjectiveConstraint`: fixes a set of DOFs by zeroing their increments.

use settee_core::component::{link, ProjectiveConstraint};
use settee_core::data::{decl, DataKind::*};
use settee_core::{
    component_any, Component, ComponentClass, CreateArgs, DataDecl, InitCtx, LinkDecl, MechParams, Roles, SimResult, StateId, TemplateRule,
};

/// Data of `FixedProjectiveConstraint`, inherited by `PartialFixedProjectiveConstraint`.
pub(crate) static DATA: &[DataDecl] = &[
    decl("indices", Indices, "0", "indices of the fixed DOFs"),
    decl("fixAll", Bool, "false", "fix every DOF"),
    decl("activate_projectVelocity", Bool, "false", "also zero the velocity of fixed DOFs when velocities are projected"),
    decl("showObject", Bool, "true", "display the fixed DOFs (rendering only)"),
    decl("drawSize", Real, "0", "size of the displayed DOFs (rendering only)"),
];

pub(crate) static LINKS: &[LinkDecl] = &[link("topology", Roles::TOPOLOGY, "topology followed under topological changes")];

settee_core::data_refs! {
    static READS;
    FIX_ALL: Bool = "fixAll";
    ACTIVATE_PROJECT_VELOCITY: Bool = "activate_projectVelocity";
    END_TIME: Real = "endTime";
    INDICES: Indices = "indices";
}

pub static CLASS: ComponentClass = ComponentClass {
    name: "FixedProjectiveConstraint",
    description: "Fixes DOFs: their increments (and optionally velocities) are projected to zero.",
    roles: Roles::PROJECTIVE_CONSTRAINT,
    templates: &["Vec1d", "Vec2d", "Vec3d", "Vec6d", "Rigid2d", "Rigid3d"],
    default_template: "Vec3d",
    template_rule: TemplateRule::FromState,
    data: &[crate::PROJECTIVE_BASE, DATA],
    links: LINKS,
    create,
    preparse: None,
    no_src_link: &[],
    reads: READS,
};

fn create(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(FixedProjectiveConstraint::default())
}

#[derive(Default)]
pub struct FixedProjectiveConstraint {
    state: Option<StateId>,
    deriv_size: usize,
    /// Fixed DOFs (every DOF when `fix_all`).
    indices: Vec<usize>,
    fix_all: bool,
    project_velocity: bool,
    end_time: f64,
}

impl FixedProjectiveConstraint {
    fn active(&self, p: &MechParams) -> bool {
        self.end_time < 0.0 || p.time < self.end_time
    }

    fn zero(&self, v: &mut [f64]) {
        let ds = self.deriv_size;
        if self.fix_all {
            v.fill(0.0);
            return;
        }
        for &i in &self.indices {
            if let Some(e) = v.get_mut(i * ds..(i + 1) * ds) {
                e.fill(0.0);
            }
        }
    }

    pub fn indices(&self) -> &[usize] {
        &self.indices
    }
}

impl Component for FixedProjectiveConstraint {
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        self.deriv_size = cx.state_layout(s).deriv_size();
        let n = cx.state_size(s);
        let d = cx.data();
        self.fix_all = d.get(FIX_ALL);
        self.project_velocity = d.get(ACTIVATE_PROJECT_VELOCITY);
        self.end_time = d.get(END_TIME);
        let given = d.get(INDICES).to_vec();
        let (valid, out): (Vec<usize>, Vec<usize>) = given.into_iter().partition(|&i| i < n);
        if !out.is_empty() {
            cx.warn(format!("indices {out:?} are beyond the {n} DOFs of the state and are ignored"));
        }
        self.indices = valid;
        if self.fix_all {
            self.indices = (0..n).collect();
        }
        Ok(())
    }

    fn projective(&mut self) -> Option<&mut dyn ProjectiveConstraint> {
        Some(self)
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
        if !self.active(p) {
            return;
        }
        for &i in &self.indices {
            out.extend((0..ds).map(|c| i * ds + c));
        }
    }
}
