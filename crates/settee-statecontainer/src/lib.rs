//! State containers: SOFA's `MechanicalObject` for every DOF layout.

mod mechanical_object;

pub use mechanical_object::MechanicalObject;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<MechanicalObject>();
}
