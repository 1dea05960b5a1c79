//! Lagrangian constraints (SOFA's Sofa.Component.Constraint.Lagrangian): constraint laws and
//! their resolutions, constraint corrections, and constraint solvers. The roles and the stages
//! they share are in `settee_core::constraint`; FreeMotionAnimationLoop, which drives them, is in
//! `settee-animationloop`.

pub mod corrections;
pub mod export;
pub mod laws;
pub mod metrics;
pub mod resolution;
pub mod solvers;
#[doc(hidden)]
pub mod testing;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    laws::register(f);
    corrections::register(f);
    solvers::register(f);
}
