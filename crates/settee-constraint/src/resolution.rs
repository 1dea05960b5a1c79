//! Resolution objects: the local law of one block of constraint rows (SOFA's ConstraintResolution subclasses).
