//! Constraint corrections (Sofa.Component.Constraint.Lagrangian.Correction).

mod common;
pub mod generic;
pub mod linear_solver;
pub mod precomputed;
pub mod uncoupled;

pub use generic::GenericConstraintCorrection;
pub use linear_solver::LinearSolverConstraintCorrection;
pub use precomputed::PrecomputedConstraintCorrection;
pub use uncoupled::UncoupledConstraintCorrection;

use settee_core::constraint::ConstraintCorrection;
use settee_core::{ComponentId, Scene};

/// Runs code on a constraint correction taken out of the scene.
pub(crate) trait WithCorrection {
    /// Runs `f` with component `c` taken out of the scene (so that it may use the rest of it),
    /// viewed as a constraint correction (`None` when its class is not one).
    fn with_correction<T>(&mut self, c: ComponentId, f: impl FnOnce(Option<&mut (dyn ConstraintCorrection + 'static)>, &mut Scene) -> T) -> T;
}

impl WithCorrection for Scene {
    fn with_correction<T>(&mut self, c: ComponentId, f: impl FnOnce(Option<&mut (dyn ConstraintCorrection + 'static)>, &mut Scene) -> T) -> T {
        let class = self.entry(c).class;
        self.with_taken(c, |obj, scene| f(class.cast_mut::<dyn ConstraintCorrection>(obj), scene))
    }
}

/// Registers the classes of this module.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<GenericConstraintCorrection>();
    f.add::<LinearSolverConstraintCorrection>();
    f.add::<PrecomputedConstraintCorrection>();
    f.add::<UncoupledConstraintCorrection>();
}
