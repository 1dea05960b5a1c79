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
//! * KKT solvers: direct ([`direct`]: `LDLTSolver`, `LLTSolver`, `LUSolver`, Schur complement or
//!   full KKT), Krylov ([`krylov`]: `MinresSolver`, `CgSolver`, `BiCgStabSolver`,
//!   `PreconditionedCgSolver` with the [`preconditioner`]s) and projected Gauss-Seidel
//!   ([`sequential`]: `SequentialSolver`, `NNCGSolver`);
//! * the ODE solver ([`solver`]).
//!
//! The assembly itself is shared with the rest of the engine: `settee_core::compliant`.

pub mod compliance;
pub mod diagonal;
pub mod direct;
pub mod krylov;
pub mod nonlinear;
pub mod preconditioner;
pub mod projectors;
pub mod response;
pub mod sequential;
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
    krylov::register(f);
    sequential::register(f);
    preconditioner::register(f);
    solver::register(f);
    nonlinear::register(f);
}
