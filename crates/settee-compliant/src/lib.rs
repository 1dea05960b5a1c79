//! # settee-compliant
//!
//! SOFA's Compliant formulation (spec `compliant.md`): constraint forces `λ = −C⁻¹(φ + …)` with a
//! compliance `C` that unifies stiff springs (`C = 1/k`) and hard constraints (`C = 0`), solved in
//! one assembled KKT system `[[H, −Jᵀ],[J, C']]` by [`CompliantImplicitSolver`].
//!
//! * compliances and stiffness helpers ([`compliance`]): `UniformCompliance`, …;
//! * constraint values and projectors ([`values`], [`projectors`]): the right-hand side of each
//!   compliant state's rows and the admissible set of its multipliers, read by the assembly as
//!   data;
//! * responses ([`response`]): factorizations of the free block of `H`;
//! * KKT solvers ([`direct`]): `LDLTSolver`, `LLTSolver`, `LUSolver` (Schur complement or full
//!   KKT);
//! * the ODE solver ([`solver`]).
//!
//! The assembly itself is shared with the rest of the engine: `settee_core::compliant`.

pub mod compliance;
pub mod diagonal;
pub mod direct;
pub mod nonlinear;
pub mod projectors;
pub mod response;
pub mod solver;
pub mod stiffness;
pub mod values;

pub use solver::CompliantImplicitSolver;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    compliance::register(f);
    diagonal::register(f);
    stiffness::register(f);
    values::register(f);
    projectors::register(f);
    response::register(f);
    direct::register(f);
    solver::register(f);
    nonlinear::register(f);
}
