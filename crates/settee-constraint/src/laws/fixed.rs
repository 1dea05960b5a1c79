//! `FixedLagrangianConstraint` (lagrangian-constraints spec §5.6,
//! `MODEL/FixedLagrangianConstraint.{inl,cpp}`): holds DOFs at their rest position with
//! Lagrange multipliers.
//!
//! Per fixed DOF, one row per derivative component with a unit entry (Rigid3: translation rows
//! then rotation rows); violation `x_free − x_rest` (Rigid3 rotation: Euler angles of
//! `q_free·q_rest⁻¹`). Vec3 and Rigid3 blocks are warm-started from the multipliers of the last
//! solve.

use settee_core::constraint::{ConstraintBuildIo, ConstraintLaw, ConstraintParams, ConstraintResolution, ViolationIo};
use settee_core::{component, Component, InitCtx, Layout, Scene, SimError, SimResult, StateId};

use super::{check_indices, coord, lent, quat, quat_inverse, read_rest, state_of, sub, to_euler_vector, v3, LawData, RowWriter};
use crate::resolution::{Bilateral3DofResolution, BilateralNDofResolution};
use settee_core::types::quat_mul;

/// Lagrangian-based fixation of DOFs of the model.
#[component(
    module = "Sofa.Component.Constraint.Lagrangian.Model",
    roles = [ConstraintLaw],
    templates = ["Vec6d", "Vec3d", "Vec2d", "Vec1d", "Rigid3d"],
    template_rule = FromState,
    create = |args| FixedLagrangianConstraint::empty(args.layout.unwrap_or(Layout::Vec3)),
    inherit = [LawData],
    data = {
        /// Indices of points to fix
        indices: Indices,
        /// If true, fix all points
        fixAll: Bool = "false",
    },
    links = {
        /// the constrained state (default: the node's)
        mstate: settee_core::role::MechanicalState,
    },
)]
#[derive(Clone)]
pub struct FixedLagrangianConstraint {
    /// The Jacobian entries of a build, kept for the next one.
    writer: RowWriter,
    layout: Layout,
    state: Option<StateId>,
    indices: Vec<usize>,
    fix_all: bool,
    /// Rest positions of the whole state (refreshed at each step start).
    rest: Vec<f64>,
    /// The fixed DOFs of the last build, in row order (SOFA's `m_cid` order).
    dofs: Vec<usize>,
    /// Multipliers of the last solve per fixed DOF (SOFA's `m_prevForces`: Vec3 and Rigid3 only).
    prev_forces: Vec<[f64; 6]>,
}

impl FixedLagrangianConstraint {
    fn empty(layout: Layout) -> FixedLagrangianConstraint {
        FixedLagrangianConstraint {
            writer: RowWriter::default(),
            layout,
            state: None,
            indices: Vec::new(),
            fix_all: false,
            rest: Vec::new(),
            dofs: Vec::new(),
            prev_forces: Vec::new(),
        }
    }

    /// A law on `state` (for code and tests): fixes `indices` (every DOF when `fix_all`) to the
    /// coordinates in `rest` (the whole state's rest positions).
    pub fn new(state: StateId, layout: Layout, indices: Vec<usize>, fix_all: bool, rest: Vec<f64>) -> SimResult<FixedLagrangianConstraint> {
        if !matches!(layout, Layout::Vec1 | Layout::Vec2 | Layout::Vec3 | Layout::Vec6 | Layout::Rigid3) {
            return Err(SimError::new(format!("FixedLagrangianConstraint has no {} template", layout.name())));
        }
        Ok(FixedLagrangianConstraint { state: Some(state), indices, fix_all, rest, ..FixedLagrangianConstraint::empty(layout) })
    }

    /// The multipliers kept for the warm start of each fixed DOF.
    pub fn previous_forces(&self) -> &[[f64; 6]] {
        &self.prev_forces
    }

    fn rows_per_dof(&self) -> usize {
        self.layout.deriv_size()
    }

    fn refresh_rest(&mut self, scene: &Scene) {
        read_rest(scene, self.state, &mut self.rest);
    }

    fn read_data(&mut self, cx: &InitCtx) {
        let d = cx.data();
        self.indices = d.get(Self::INDICES).to_vec();
        self.fix_all = d.get(Self::FIX_ALL);
    }
}

impl Component for FixedLagrangianConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = state_of(cx, self.layout)?;
        self.state = Some(s);
        self.read_data(cx);
        let n = cx.state_size(s);
        if let Some(i) = self.indices.iter().find(|&&i| i >= n) {
            return Err(cx.error(format!("index {i} is beyond the {n} DOFs of the state")));
        }
        self.prev_forces.clear();
        self.refresh_rest(cx.scene);
        Ok(())
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.refresh_rest(cx.scene);
        Ok(())
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.read_data(cx);
        Ok(())
    }

    fn animate_begin(&mut self, scene: &mut Scene, _me: settee_core::ComponentId) -> SimResult {
        self.refresh_rest(scene);
        Ok(())
    }
}

impl ConstraintLaw for FixedLagrangianConstraint {
    fn states(&self) -> settee_core::scratch::StateSet {
        self.state.into_iter().collect()
    }

    fn build_constraint_matrix(&mut self, _cp: &ConstraintParams, io: &mut ConstraintBuildIo, first_row: usize) -> SimResult<usize> {
        let cs = self.layout.coord_size();
        let ds = self.rows_per_dof();
        let x = lent(&io.x)?;
        let n = x.len() / cs;
        self.dofs = if self.fix_all { (0..n).collect() } else { self.indices.clone() };
        check_indices("fixed index", &self.dofs, n)?;
        let mut w = std::mem::take(&mut self.writer);
        w.set_unit_rows(first_row, ds, self.dofs.iter().copied());
        let flushed = w.flush(&mut io.rows);
        self.writer = w;
        flushed?;
        Ok(self.dofs.len() * ds)
    }

    fn constraint_violation(&mut self, _cp: &ConstraintParams, io: &ViolationIo, dfree: &mut [f64]) -> SimResult {
        let cs = self.layout.coord_size();
        let ds = self.rows_per_dof();
        let x = lent(&io.x)?;
        for (i, &dof) in self.dofs.iter().enumerate() {
            let xf = coord(x, dof, cs)?;
            let r = coord(&self.rest, dof, cs).map_err(|_| SimError::new(format!("fixed index {dof} has no rest position")))?;
            let out = &mut dfree[i * ds..(i + 1) * ds];
            if self.layout == Layout::Rigid3 {
                let p = sub(v3(xf), v3(r));
                let o = to_euler_vector(quat_mul(quat(&xf[3..7]), quat_inverse(quat(&r[3..7]))));
                out[..3].copy_from_slice(&p);
                out[3..].copy_from_slice(&o);
            } else {
                for j in 0..ds {
                    out[j] = xf[j] - r[j];
                }
            }
        }
        Ok(())
    }

    fn resolutions(&mut self, _cp: &ConstraintParams, out: &mut Vec<Box<dyn ConstraintResolution>>) {
        // SOFA resizes the stored forces to the current count, keeping the leading ones.
        self.prev_forces.resize(self.dofs.len(), [0.0; 6]);
        for p in &self.prev_forces {
            match self.layout {
                Layout::Vec3 => out.push(Box::new(Bilateral3DofResolution::new(Some([p[0], p[1], p[2]])))),
                Layout::Rigid3 => {
                    out.push(Box::new(Bilateral3DofResolution::new(Some([p[0], p[1], p[2]]))));
                    out.push(Box::new(Bilateral3DofResolution::new(Some([p[3], p[4], p[5]]))));
                }
                l => out.push(Box::new(BilateralNDofResolution::new(l.deriv_size()))),
            }
        }
    }

    fn store_lambda(&mut self, _cp: &ConstraintParams, lambda: &[f64], _converged: bool) {
        let ds = self.rows_per_dof();
        if !matches!(self.layout, Layout::Vec3 | Layout::Rigid3) {
            return;
        }
        for (i, p) in self.prev_forces.iter_mut().enumerate() {
            if let Some(l) = lambda.get(i * ds..(i + 1) * ds) {
                p[..ds].copy_from_slice(l);
            }
        }
    }
}
