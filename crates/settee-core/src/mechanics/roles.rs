//! The roles of the mechanical stages, as traits: force fields and masses, projective
//! constraints, mappings, ODE and linear solvers, animation loops. Numerical entry points
//! receive the vectors they work on as slices lent from the state store.

use crate::diag::SimResult;
use crate::graph::component::MechParams;
use crate::graph::constraint_rows::ConstraintRows;
use crate::graph::role::RoleId;
use crate::graph::scene::{ComponentId, Scene};
use crate::graph::state::{StateId, VecId};
use crate::mechanics::dense::{ConstraintJacobian, DenseMatrix};
use crate::mechanics::{MatrixAccumulator, MechScope};
use crate::scratch::{SmallVec, StateSet};

/// Factors of `m·M + b·B + k·K`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mbk {
    pub m: f64,
    pub b: f64,
    pub k: f64,
}

/// Vectors lent to a force field: one entry per attached state (a pair attached twice to the same
/// state gets a single entry; see [`ForceField::states`]). The lists are inline (no allocation
/// per call); build them with `smallvec![…]` or `.into()` from a `Vec`.
pub struct ForceIo<'a> {
    pub f: SmallVec<[&'a mut [f64]; 4]>,
    pub x: SmallVec<[&'a [f64]; 4]>,
    pub v: SmallVec<[&'a [f64]; 4]>,
}

/// A force field (masses are force fields too: their force is gravity).
pub trait ForceField {
    /// The states it acts on; one for ordinary force fields, two for interactions (equal ids are
    /// lent once: the slices then have a single entry).
    fn states(&self) -> StateSet;
    fn add_force(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult;
    /// `df += kFactor·K·dx (+ bFactor·B·dx)`; `io.x` holds `dx`, `io.v` is empty.
    fn add_dforce(&mut self, p: &MechParams, io: &mut ForceIo, k_factor: f64, b_factor: f64) -> SimResult;
    /// Adds `kFactor·K` into the global matrix.
    fn add_k_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _k_factor: f64) -> SimResult {
        Err(crate::diag::SimError::unsupported("this force field cannot be assembled into a matrix yet"))
    }
    /// Adds `bFactor·B` into the global matrix (velocity damping); most force fields have none.
    fn add_b_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _b_factor: f64) -> SimResult {
        Ok(())
    }
    fn rayleigh_stiffness(&self) -> f64 {
        0.0
    }
    /// True for masses: their `add_dforce` does nothing.
    fn is_mass(&self) -> bool {
        false
    }
    /// True when the component is handled as a compliance (SOFA 2021's `isCompliance`): its
    /// force is not evaluated, its stiffness is not assembled, and its compliance matrix
    /// ([`ForceField::add_compliance`]) gives rows of the Compliant KKT system.
    fn is_compliance(&self) -> bool {
        false
    }
    /// Appends the local entries `(row, column, value)` of the compliance matrix `C` on the
    /// component's (single) state of `rows` scalar rows; no entry at all means a hard
    /// constraint (`C = 0`).
    fn add_compliance(&self, _p: &MechParams, _rows: usize, _out: &mut Vec<(usize, usize, f64)>) -> SimResult {
        Ok(())
    }
    /// True for force fields written in a script (Python): their code reads its Data through
    /// the scene while it works. The stages then take the component out of its slot, lend it
    /// copies of the vectors it reads, and call the `*_in_scene` methods below instead.
    fn needs_scene(&self) -> bool {
        false
    }
    /// [`ForceField::add_force`] with the scene at hand (see [`ForceField::needs_scene`]).
    fn add_force_in_scene(&mut self, _scene: &mut Scene, _me: ComponentId, p: &MechParams, io: &mut ForceIo) -> SimResult {
        self.add_force(p, io)
    }
    /// [`ForceField::add_dforce`] with the scene at hand.
    fn add_dforce_in_scene(
        &mut self,
        _scene: &mut Scene,
        _me: ComponentId,
        p: &MechParams,
        io: &mut ForceIo,
        k_factor: f64,
        b_factor: f64,
    ) -> SimResult {
        self.add_dforce(p, io, k_factor, b_factor)
    }
    /// [`ForceField::add_k_to_matrix`] with the scene at hand.
    fn add_k_to_matrix_in_scene(
        &mut self,
        _scene: &mut Scene,
        _me: ComponentId,
        p: &MechParams,
        m: &mut MatrixAccumulator,
        k_factor: f64,
    ) -> SimResult {
        self.add_k_to_matrix(p, m, k_factor)
    }
}

/// A mass.
pub trait Mass {
    fn state(&self) -> StateId;
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64);
    fn acc_from_f(&self, a: &mut [f64], f: &[f64]) -> SimResult;
    fn add_gravity_to_v(&self, v: &mut [f64], gravity: [f64; 3], dt: f64);
    fn add_m_to_matrix(&self, m: &mut MatrixAccumulator, factor: f64) -> SimResult;
    fn is_diagonal(&self) -> bool;
    fn separate_gravity(&self) -> bool;
    fn rayleigh_mass(&self) -> f64;
    fn kinetic_energy(&self, v: &[f64]) -> f64;
}

/// A projective constraint: projects vectors into the constrained subspace.
pub trait ProjectiveConstraint {
    fn state(&self) -> StateId;
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]);
    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]);
    fn project_position(&mut self, p: &MechParams, x: &mut [f64]);
    /// Scalar rows (`dof·deriv_size + component`) whose row and column the assembled matrix clears.
    fn projected_rows(&self, p: &MechParams, deriv_size: usize, out: &mut Vec<usize>);
    /// Projections that are not a zeroing of whole components (onto a line, a plane…): per
    /// constrained DOF, its `deriv_size × deriv_size` block `P` (row-major), the one
    /// `project_response` applies to that DOF. The assembled matrix becomes `P̃·A·P̃ + (I − P̃)`
    /// (`P̃`: block-diagonal, identity elsewhere), so that solving it with a projected right-hand
    /// side gives a projected solution, as clearing rows and columns does for fixed DOFs.
    fn projection_blocks(&self, _p: &MechParams, _deriv_size: usize, _out: &mut Vec<(usize, Vec<f64>)>) {}
    /// For a constraint between two states (SOFA's `PairInteractionProjectiveConstraintSet`):
    /// the first state, whose DOFs the second ones ([`Self::state`]) follow. When both states
    /// take part in an operation, the `*_pair` methods are called with both vectors instead of
    /// the one-state methods, which then see the second state's vector alone.
    fn first_state(&self) -> Option<StateId> {
        None
    }
    /// `project_response` on both states' vectors (first, second).
    fn project_response_pair(&mut self, _p: &MechParams, _dx1: &mut [f64], _dx2: &mut [f64]) {}
    /// `project_velocity` on both states' vectors (first, second).
    fn project_velocity_pair(&mut self, _p: &MechParams, _v1: &mut [f64], _v2: &mut [f64]) {}
    /// `project_position` on both states' vectors (first, second).
    fn project_position_pair(&mut self, _p: &MechParams, _x1: &mut [f64], _x2: &mut [f64]) {}
}

/// A sparse matrix stored by rows: `rows[r]` lists the `(column, value)` entries of row `r`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseRows {
    pub ncols: usize,
    pub rows: Vec<Vec<(usize, f64)>>,
}

impl SparseRows {
    pub fn new(nrows: usize, ncols: usize) -> SparseRows {
        SparseRows { ncols, rows: vec![Vec::new(); nrows] }
    }
    pub fn nrows(&self) -> usize {
        self.rows.len()
    }
    /// `out = A·x` (`out` is overwritten).
    pub fn mul(&self, out: &mut [f64], x: &[f64]) {
        for (o, row) in out.iter_mut().zip(&self.rows) {
            let mut t = 0.0;
            for &(c, v) in row {
                t += v * x[c];
            }
            *o = t;
        }
    }
    /// `out += Aᵀ·y`, row by row.
    pub fn add_mul_transpose(&self, out: &mut [f64], y: &[f64]) {
        for (row, &yr) in self.rows.iter().zip(y) {
            for &(c, v) in row {
                out[c] += v * yr;
            }
        }
    }
}

/// A mapping from input states to an output state (or to a visual model, which has no state).
///
/// Vectors are flat slices in the element-major layout of the states (`Layout::coord_size` /
/// `deriv_size` reals per element). Non-linear mappings cache what `apply` computed (directions,
/// rotated points, the Jacobian) and use it in the other operations until the next `apply`, as
/// SOFA does.
pub trait Mapping {
    fn inputs(&self) -> &[StateId];
    /// The output state; `None` when the output is a visual model (the mapping is then not
    /// mechanical and takes no part in the mechanical stages).
    fn output(&self) -> Option<StateId>;
    /// True when forces and matrices travel through the mapping and its output is a mapped state.
    fn is_mechanical(&self) -> bool;
    /// The visual model this mapping moves, when its output is one and the mapping can map to
    /// it ([`crate::visual::update_visual_models`]); `None` otherwise.
    fn visual_output(&self) -> Option<ComponentId> {
        None
    }
    /// `out = J(in)` on positions.
    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult;
    /// `out = J·in` on velocities / displacements.
    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult;
    /// `in += Jᵀ·out` on forces.
    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult;
    /// SOFA's `updateK`: the geometric stiffness is computed once for the output force `f_out`
    /// (FreeMotionAnimationLoop passes `Λ/dt`, spec lagrangian-solvers §1.2 S9) and kept; while
    /// that matrix is not empty, [`Mapping::apply_djt`] uses it instead of its `f_out`
    /// argument (SOFA's `BaseNonLinearMapping::applyDJT`). Linear mappings do nothing.
    fn update_k(&mut self, _f_out: &[f64]) -> SimResult {
        Ok(())
    }
    /// `in += kFactor · ∂(Jᵀ f_out)/∂x_in · dx_in` (geometric stiffness); linear mappings do nothing.
    fn apply_djt(&mut self, _inputs: &mut [&mut [f64]], _dx_in: &[&[f64]], _f_out: &[f64], _k_factor: f64) -> SimResult {
        Ok(())
    }
    /// The Jacobian blocks `J_i = ∂out/∂in_i`, one per input (rows: output scalar DOFs, columns:
    /// input scalar DOFs, derivative layout), as of the last `apply`. Used to project the
    /// matrices of mapped components (`Jᵀ·K·J`) when a solver assembles.
    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        Err(crate::diag::SimError::unsupported("this mapping cannot give its Jacobian, so components below it cannot be assembled into a matrix"))
    }
    /// Carries constraint rows up: `in_i += J_iᵀ · rows` row by row (SOFA's `applyJT` on a
    /// `MatrixDeriv`). The default goes through [`Mapping::jacobians`]; a mapping may override it
    /// to follow SOFA's own order of operations.
    fn apply_jt_constraints(&mut self, inputs: &mut [&mut ConstraintRows], out: &ConstraintRows) -> SimResult {
        let js = self.jacobians()?;
        let ods = out.deriv_size;
        for (j, input) in js.iter().zip(inputs.iter_mut()) {
            let ids = input.deriv_size;
            for (row, entries) in out.rows() {
                let mut acc: std::collections::BTreeMap<usize, Vec<f64>> = std::collections::BTreeMap::new();
                for (dof, block) in entries {
                    for (c, &w) in block.iter().enumerate() {
                        if w == 0.0 {
                            continue;
                        }
                        for &(col, v) in &j.rows[dof * ods + c] {
                            acc.entry(col / ids).or_insert_with(|| vec![0.0; ids])[col % ids] += v * w;
                        }
                    }
                }
                for (dof, block) in acc {
                    input.add(row, dof, &block);
                }
            }
        }
        Ok(())
    }
    /// True for mappings written in a script (Python): their code reads its Data through the
    /// scene while it works. The stages then take the component out of its slot, lend it copies
    /// of the vectors it reads, and call the `*_in_scene` methods below instead. Such a mapping
    /// has no geometric stiffness and no Jacobian.
    fn needs_scene(&self) -> bool {
        false
    }
    /// [`Mapping::apply`] (`positions`) or [`Mapping::apply_j`] with the scene at hand (see
    /// [`Mapping::needs_scene`]).
    fn apply_in_scene(&mut self, _scene: &mut Scene, _me: ComponentId, out: &mut [f64], inputs: &[&[f64]], positions: bool) -> SimResult {
        if positions {
            self.apply(out, inputs)
        } else {
            self.apply_j(out, inputs)
        }
    }
    /// [`Mapping::apply_jt`] with the scene at hand.
    fn apply_jt_in_scene(&mut self, _scene: &mut Scene, _me: ComponentId, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        self.apply_jt(inputs, out)
    }
    /// Adds `kFactor · K_geo` into the matrix at the inputs' rows, where
    /// `K_geo = ∂(Jᵀ f_out)/∂x_in` for the output force `f_out` (the assembled counterpart of
    /// [`Mapping::apply_djt`]).
    fn add_geometric_stiffness(&self, _m: &mut MatrixAccumulator, _f_out: &[f64], _k_factor: f64) -> SimResult {
        Ok(())
    }
}

/// An ODE solver integrates the states of its node's subtree over one step.
pub trait OdeSolver {
    fn solve(&mut self, scene: &mut Scene, scope: &MechScope, dt: f64, x_result: VecId, v_result: VecId) -> SimResult;
    /// How a solution of its linear system changes position and velocity (SOFA's
    /// `getPositionIntegrationFactor` / `getVelocityIntegrationFactor`), used by the constraint
    /// corrections.
    fn integration_factors(&self, dt: f64) -> IntegrationFactors;
}

/// A linear solver solves `(m·M + b·B + k·K)·x = rhs` over the main states of a scope.
pub trait LinearSolver {
    fn solve_system(&mut self, scene: &mut Scene, scope: &MechScope, factors: Mbk, rhs: VecId, solution: VecId) -> SimResult;

    /// Solves again with the system (and factorization) of the last [`Self::solve_system`],
    /// for a new right-hand side, without reassembling (SOFA's `setRHS`, `setSystemSolution`,
    /// `solveSystem`, `dispatchSystemSolution`, used by the constraint corrections).
    fn solve_again(&mut self, _scene: &mut Scene, _scope: &MechScope, _rhs: VecId, _solution: VecId) -> SimResult {
        Err(crate::SimError::unsupported("this linear solver cannot solve again for a constraint correction"))
    }

    /// `W += factor·J·A⁻¹·Jᵀ` with the current system (SOFA's `addJMInvJt`), `J` in the scope's
    /// global scalar columns.
    fn add_jminvjt(&mut self, _scene: &mut Scene, _scope: &MechScope, _j: &ConstraintJacobian, _factor: f64, _w: &mut DenseMatrix) -> SimResult {
        Err(crate::SimError::unsupported("this linear solver cannot compute J·A⁻¹·Jᵀ for a constraint correction"))
    }
}

/// An animation loop performs one step.
pub trait AnimationLoop {
    fn step(&mut self, scene: &mut Scene, dt: f64) -> SimResult;
}

pub const FORCE_FIELD: RoleId = RoleId::of::<dyn ForceField>("ForceField");
pub const MASS: RoleId = RoleId::of::<dyn Mass>("Mass");
pub const PROJECTIVE_CONSTRAINT: RoleId = RoleId::of::<dyn ProjectiveConstraint>("ProjectiveConstraint");
pub const MAPPING: RoleId = RoleId::of::<dyn Mapping>("Mapping");
pub const ODE_SOLVER: RoleId = RoleId::of::<dyn OdeSolver>("OdeSolver");
pub const LINEAR_SOLVER: RoleId = RoleId::of::<dyn LinearSolver>("LinearSolver");
pub const ANIMATION_LOOP: RoleId = RoleId::of::<dyn AnimationLoop>("AnimationLoop");

/// The ODE solver's integration factors: how a linear-system solution changes position and
/// velocity (lagrangian-constraints spec §0.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntegrationFactors {
    pub position: f64,
    pub velocity: f64,
}
