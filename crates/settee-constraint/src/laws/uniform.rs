//! `UniformLagrangianConstraint` (lagrangian-constraints spec §5.7,
//! `MODEL/UniformLagrangianConstraint.inl`): every component of every DOF held at zero (or at
//! its rest value), e.g. the lengths of a `DistanceMapping` output to make them inextensible.
//!
//! One unit row per DOF component; violation `x_free` (or `x_free − x_rest`), VEL
//! `v_free + (1/dt)·x` (or `(1/dt)·(x − x_rest)`) with the current positions. `iterative` gives
//! one bilateral row block per row, otherwise one block over all rows solved exactly.

use settee_core::constraint::{ConstraintBuildIo, ConstraintLaw, ConstraintOrder, ConstraintParams, ConstraintResolution, ViolationIo};
use settee_core::role::MechanicalState;
use settee_core::{component, Component, InitCtx, Layout, Scene, SimError, SimResult, StateId};

use super::{lent, read_rest, state_of, LawData, RowWriter};
use crate::resolution::{BilateralNDofResolution, BilateralResolution};

/// A constraint equation applied on all dofs.
#[component(
    module = "Sofa.Component.Constraint.Lagrangian.Model",
    roles = [ConstraintLaw],
    templates = ["Vec1d"],
    template_rule = FromState,
    create = |args| UniformLagrangianConstraint::empty(args.layout.unwrap_or(Layout::Vec1)),
    inherit = [LawData],
    data = {
        /// Iterate over the bilateral constraints, otherwise a block factorisation is computed.
        iterative: Bool = "true",
        /// if false, constrains the pos to be zero / if true constraint the current position to
        /// stay at rest position
        constrainToRestPos: Bool = "false",
    },
    links = {
        /// the constrained state (default: the node's)
        mstate: MechanicalState,
    },
)]
#[derive(Clone)]
pub struct UniformLagrangianConstraint {
    /// The Jacobian entries of a build, kept for the next one.
    writer: RowWriter,
    layout: Layout,
    state: Option<StateId>,
    iterative: bool,
    constrain_to_rest: bool,
    /// Rest positions (refreshed at each step start) when constraining to them.
    rest: Vec<f64>,
    /// Rows of the last build.
    rows: usize,
    /// Current positions at the last build (the VEL violation reads them).
    current: Vec<f64>,
}

impl UniformLagrangianConstraint {
    fn empty(layout: Layout) -> UniformLagrangianConstraint {
        UniformLagrangianConstraint {
            writer: RowWriter::default(),
            layout,
            state: None,
            iterative: true,
            constrain_to_rest: false,
            rest: Vec::new(),
            rows: 0,
            current: Vec::new(),
        }
    }

    /// A law on a vector state (for code and tests); `rest` is only read when `constrain_to_rest`.
    pub fn new(state: StateId, layout: Layout, iterative: bool, constrain_to_rest: bool, rest: Vec<f64>) -> SimResult<UniformLagrangianConstraint> {
        if !matches!(layout, Layout::Vec1 | Layout::Vec2 | Layout::Vec3 | Layout::Vec6) {
            return Err(SimError::new(format!("UniformLagrangianConstraint has no {} template", layout.name())));
        }
        Ok(UniformLagrangianConstraint { state: Some(state), iterative, constrain_to_rest, rest, ..UniformLagrangianConstraint::empty(layout) })
    }

    fn refresh_rest(&mut self, scene: &Scene) {
        if !self.constrain_to_rest {
            return;
        }
        read_rest(scene, self.state, &mut self.rest);
    }

    fn rest_at(&self, i: usize) -> SimResult<f64> {
        self.rest.get(i).copied().ok_or_else(|| SimError::new("the constrained state has no rest position for every DOF"))
    }
}

impl Component for UniformLagrangianConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = state_of(cx, self.layout)?;
        self.state = Some(s);
        let d = cx.data();
        self.iterative = d.get(Self::ITERATIVE);
        self.constrain_to_rest = d.get(Self::CONSTRAIN_TO_REST_POS);
        self.refresh_rest(cx.scene);
        Ok(())
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.refresh_rest(cx.scene);
        Ok(())
    }

    fn animate_begin(&mut self, scene: &mut Scene, _me: settee_core::ComponentId) -> SimResult {
        self.refresh_rest(scene);
        Ok(())
    }
}

impl ConstraintLaw for UniformLagrangianConstraint {
    fn states(&self) -> settee_core::scratch::StateSet {
        self.state.into_iter().collect()
    }

    fn build_constraint_matrix(&mut self, _cp: &ConstraintParams, io: &mut ConstraintBuildIo, first_row: usize) -> SimResult<usize> {
        let ds = self.layout.deriv_size();
        let x = lent(&io.x)?;
        let n = x.len() / ds;
        let mut w = std::mem::take(&mut self.writer);
        w.set_unit_rows(first_row, ds, 0..n);
        self.current.clear();
        self.current.extend_from_slice(x);
        let flushed = w.flush(&mut io.rows);
        self.writer = w;
        flushed?;
        self.rows = n * ds;
        Ok(self.rows)
    }

    fn constraint_violation(&mut self, cp: &ConstraintParams, io: &ViolationIo, dfree: &mut [f64]) -> SimResult {
        let n = self.rows;
        if cp.order == ConstraintOrder::Vel {
            let v = lent(&io.v)?;
            let inv_dt = 1.0 / cp.dt;
            for (k, out) in dfree.iter_mut().enumerate().take(n) {
                let vf = *v.get(k).ok_or_else(|| SimError::new("the free velocity is shorter than the state"))?;
                let pos = self.current[k];
                *out = if self.constrain_to_rest { vf + inv_dt * (pos - self.rest_at(k)?) } else { vf + inv_dt * pos };
            }
        } else {
            let x = lent(&io.x)?;
            for (k, out) in dfree.iter_mut().enumerate().take(n) {
                let xf = *x.get(k).ok_or_else(|| SimError::new("the free position is shorter than the state"))?;
                *out = if self.constrain_to_rest { xf - self.rest_at(k)? } else { xf };
            }
        }
        Ok(())
    }

    fn resolutions(&mut self, _cp: &ConstraintParams, out: &mut Vec<Box<dyn ConstraintResolution>>) {
        if self.rows == 0 {
            return;
        }
        if self.iterative {
            for _ in 0..self.rows {
                out.push(Box::new(BilateralResolution::new(None)));
            }
        } else {
            out.push(Box::new(BilateralNDofResolution::new(self.rows)));
        }
    }
}
