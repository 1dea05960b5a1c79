//! State containers: SOFA's `MechanicalObject` for every DOF layout.

mod mechanical_object;

pub use mechanical_object::MechanicalObject;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<MechanicalObject>();
}

/// A factory with the classes of this crate (the state every mechanical scene has) and those the
/// given `register` functions add, in order: what scenes built by hand (tests) start from.
pub fn factory_with(registers: &[fn(&mut settee_core::Factory)]) -> settee_core::Factory {
    let mut f = settee_core::Factory::new();
    register(&mut f);
    for r in registers {
        r(&mut f);
    }
    f
}
