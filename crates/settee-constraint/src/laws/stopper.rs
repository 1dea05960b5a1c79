//! `StopperLagrangianConstraint` (lagrangian-constraints spec §5.5,
//! `MODEL/StopperLagrangianConstraint.{h,inl}`): keeps `x[index]` of a Vec1 state inside
//! `[min, max]` with one two-sided row.

use settee_core::constraint::{ConstraintBuildIo, ConstraintLaw, ConstraintParams, ConstraintResolution, DenseMatrix, ViolationIo};
use settee_core::role::MechanicalState;
use settee_core::{component, Component, InitCtx, Layout, SimError, SimResult, StateId};

use super::{lent, LawData, RowWriter};

/// The stopper's one-row law (SOFA's `StopperLagrangianConstraintResolution1Dof`): `init`
/// caches `w = W_ll` and zeroes the multiplier; each update removes the row's own force from
/// the violation, `g = d − w·λ`, and sets `λ = (max − g)/w` above `max`, `(min − g)/w` below
/// `min`, 0 inside.
#[derive(Clone, Debug)]
pub struct StopperResolution {
    min: f64,
    max: f64,
    w: f64,
    inv_w: f64,
}

impl StopperResolution {
    pub fn new(min: f64, max: f64) -> StopperResolution {
        StopperResolution { min, max, w: 0.0, inv_w: 0.0 }
    }
}

impl ConstraintResolution for StopperResolution {
    fn nb_lines(&self) -> usize {
        1
    }
    fn init(&mut self, line: usize, w: &DenseMatrix, lambda: &mut [f64]) {
        self.w = w.get(line, line);
        self.inv_w = 1.0 / self.w;
        lambda[line] = 0.0;
    }
    fn resolution(&mut self, line: usize, _w: &DenseMatrix, d: &mut [f64], lambda: &mut [f64], _dfree: &[f64]) {
        let g = d[line] - self.w * lambda[line];
        lambda[line] = if g > self.max {
            (self.max - g) * self.inv_w
        } else if g < self.min {
            (self.min - g) * self.inv_w
        } else {
            0.0
        };
    }
}

/// Lagrangian-based stopper: keeps one Vec1 DOF inside [min, max].
#[component(
    module = "Sofa.Component.Constraint.Lagrangian.Model",
    roles = [ConstraintLaw],
    templates = ["Vec1d"],
    template_rule = FromState,
    inherit = [LawData],
    data = {
        /// index of the stop constraint
        index: Int = "0",
        /// minimum value accepted
        min: Real = "-100",
        /// maximum value accepted
        max: Real = "100",
    },
    links = {
        /// the constrained state (default: the node's)
        mstate: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct StopperLagrangianConstraint {
    /// The Jacobian entries of a build, kept for the next one.
    writer: RowWriter,
    state: Option<StateId>,
    index: usize,
    min: f64,
    max: f64,
}

impl StopperLagrangianConstraint {
    /// A stopper on DOF `index` of a Vec1 state (for code and tests).
    pub fn new(state: StateId, index: usize, min: f64, max: f64) -> StopperLagrangianConstraint {
        StopperLagrangianConstraint { state: Some(state), index, min, max, writer: RowWriter::default() }
    }
}

impl Component for StopperLagrangianConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        let layout = cx.state_layout(s);
        if layout != Layout::Vec1 {
            return Err(cx.error(format!("the state is {} but StopperLagrangianConstraint acts on Vec1 states", layout.name())));
        }
        self.state = Some(s);
        let d = cx.data();
        let index = d.get(Self::INDEX);
        self.index = usize::try_from(index).map_err(|_| cx.error(format!("index must be a DOF index, not {index}")))?;
        self.min = d.get(Self::MIN);
        self.max = d.get(Self::MAX);
        Ok(())
    }
}

impl ConstraintLaw for StopperLagrangianConstraint {
    fn states(&self) -> settee_core::scratch::StateSet {
        self.state.into_iter().collect()
    }

    fn build_constraint_matrix(&mut self, _cp: &ConstraintParams, io: &mut ConstraintBuildIo, first_row: usize) -> SimResult<usize> {
        let n = lent(&io.x)?.len();
        if self.index >= n {
            return Err(SimError::new(format!("index {} is beyond the {n} DOFs of the state", self.index)));
        }
        let mut w = std::mem::take(&mut self.writer);
        w.set(0, first_row, self.index, &[1.0]);
        let flushed = w.flush(&mut io.rows);
        self.writer = w;
        flushed?;
        Ok(1)
    }

    fn constraint_violation(&mut self, _cp: &ConstraintParams, io: &ViolationIo, dfree: &mut [f64]) -> SimResult {
        let x = lent(&io.x)?;
        dfree[0] = *x.get(self.index).ok_or_else(|| SimError::new(format!("index {} is beyond the free positions", self.index)))?;
        Ok(())
    }

    fn resolutions(&mut self, _cp: &ConstraintParams, out: &mut Vec<Box<dyn ConstraintResolution>>) {
        out.push(Box::new(StopperResolution::new(self.min, self.max)));
    }
}
