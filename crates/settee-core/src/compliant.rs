//! The core of the Compliant formulation (compliant spec §4): the assembled system
//! `[[H, −Jᵀ],[J, C']]` of a solver's sub-tree, with the compliant states kept as unknowns.
//!
//! The assembly shares everything with the assembled solvers of the rest of the engine: `H` is
//! [`mechanics::assemble_with`] (compliances contribute only their damping there), `J` is the
//! global Jacobian of each compliant state built through the mapping hierarchy (multi-mappings
//! included), `C` comes from [`crate::ForceField::add_compliance`]. The right-hand sides and
//! the admissible sets of the multipliers are data ([`ValueKind`], [`Projector`]) read from the
//! components of each compliant node, so KKT solvers are plain functions of an
//! [`AssembledSystem`].

use settee_linalg::{CsrMatrix, MatrixBuilder};

use crate::diag::{Diagnostic, SimError, SimResult};
use crate::mechanics::{self, label_error, AssemblyOptions, MechScope};
use crate::mechanics::{ForceField, Mbk};
use crate::scene::{ComponentId, NodeId, Scene};
use crate::state::StateId;

/// What a constraint value component prescribes (compliant spec §6), as data.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueKind {
    /// `ConstraintValue`: elastic, ψ = −φ/h; no correction.
    Elastic,
    /// `Stabilization`: hard constraints stabilised by a correction pass; `mask` (per block,
    /// empty = all) is the scene's initial mask.
    Stabilization { mask: Vec<bool> },
    /// `HolonomicConstraintValue`: as [`ValueKind::Stabilization`] with stabilization always on.
    Holonomic { mask: Vec<bool> },
    /// `Restitution`: a violated block bounces back with `restitution`·(incoming velocity).
    Restitution { mask: Vec<bool>, restitution: f64 },
    /// `VelocityConstraintValue`: the prescribed velocities, one per scalar row.
    Velocity { velocities: Vec<f64> },
    /// `OffsettedConstraintValue`: ψ = −(φ + offset)/h.
    Offsetted { offset: f64 },
    /// `DampingValue`: ψ = −u.
    Damping,
    /// `BaumgarteStabilization`: ψ = −alpha·φ.
    Baumgarte { alpha: f64 },
}

/// The admissible set of a block of multipliers (compliant spec §7), as data.
#[derive(Clone, Debug, PartialEq)]
pub enum Projector {
    /// λ ≥ 0 entry-wise.
    Unilateral,
    /// λ ≤ 0 entry-wise.
    NegativeUnilateral,
    /// Coulomb cone of coefficient `mu` on blocks of 3 or 6 (normal first); `horizontal` selects
    /// the projection that keeps the normal part.
    Coulomb { mu: f64, horizontal: bool },
    /// |λ| ≤ threshold entry-wise (zero in the correction pass).
    Resistance { threshold: f64 },
    /// `ClosureConstraint`: no projection (a bilateral constraint), but the node counts as
    /// having a projector (its value's activation mask is computed).
    Closure,
}

/// The rows of one compliant state in the system.
#[derive(Clone, Debug)]
pub struct ConstraintBlock {
    pub state: StateId,
    pub node: NodeId,
    /// The compliance component that made the state compliant.
    pub compliance: ComponentId,
    /// First row in λ (and in `J`, `C`).
    pub offset: usize,
    /// Number of scalar rows.
    pub rows: usize,
    /// Scalar rows per DOF (the block size of projectors and sequential solvers).
    pub dof_size: usize,
    pub value: ValueKind,
    /// True when the value is the assembly's fallback (no value component in the node).
    pub value_is_fallback: bool,
    pub projector: Option<Projector>,
    /// Per-DOF activation (empty: every DOF active), set by the values' `filterConstraints`.
    pub mask: Vec<bool>,
}

impl ConstraintBlock {
    /// True when DOF `k` of the block takes part (inactive DOFs get λ = 0 in solvers that
    /// honour masks).
    pub fn active(&self, k: usize) -> bool {
        self.projector.is_none() || self.mask.is_empty() || self.mask.get(k).copied().unwrap_or(false)
    }
}

/// The assembled system of a solver's sub-tree (SOFA's `AssembledSystem`).
#[derive(Clone, Debug)]
pub struct AssembledSystem {
    /// Time step h.
    pub dt: f64,
    /// Scalar sizes of the master (independent) and compliant unknowns.
    pub m: usize,
    pub n: usize,
    /// `m·M + b·B + k·K` over the masters (mapped stiffness and geometric stiffness folded in
    /// with `Jᵀ·K·J`), without projection.
    pub h: CsrMatrix,
    /// Diagonal of the projector P: true for a free scalar DOF, false for a fixed one (or one of
    /// a state that takes no part in the mechanics).
    pub free: Vec<bool>,
    /// `n × m` Jacobian from the masters to the compliant states.
    pub j: CsrMatrix,
    /// `n × n` compliance, already scaled (`C' = C / (h²αβ)`).
    pub c: CsrMatrix,
    /// Master states and their first row; `mechanical[i]` false for a master with neither mass,
    /// stiffness nor a compliant descendant (SOFA leaves it out: its velocity is kept).
    pub masters: Vec<(StateId, usize)>,
    pub mechanical: Vec<bool>,
    pub blocks: Vec<ConstraintBlock>,
}

impl AssembledSystem {
    /// Indices of the free scalar DOFs, in order (the selection basis S of the spec §8.1).
    pub fn free_indices(&self) -> Vec<usize> {
        (0..self.m).filter(|&i| self.free[i]).collect()
    }

    /// `J·P`: the Jacobian with the columns of fixed DOFs removed (zeroed).
    pub fn jp(&self) -> CsrMatrix {
        let mut t = Vec::with_capacity(self.j.nnz());
        for (i, j, v) in self.j.iter() {
            if self.free[j] {
                t.push((i, j, v));
            }
        }
        CsrMatrix::from_triplets(self.n, self.m, &t).expect("entries of J are in range")
    }

    /// The free block `A = Sᵀ H S` (rows and columns renumbered over the free DOFs) and the
    /// map from free index to master row. Entries that are exactly zero off the diagonal (the
    /// geometric stiffness of unloaded mappings) are dropped: they carry nothing, and a
    /// diagonal A keeps its factor diagonal.
    pub fn free_block(&self) -> (CsrMatrix, Vec<usize>) {
        let idx = self.free_indices();
        let mut local = vec![usize::MAX; self.m];
        for (k, &i) in idx.iter().enumerate() {
            local[i] = k;
        }
        let mut t = Vec::with_capacity(self.h.nnz());
        for (i, j, v) in self.h.iter() {
            if local[i] != usize::MAX && local[j] != usize::MAX && (v != 0.0 || i == j) {
                t.push((local[i], local[j], v));
            }
        }
        (CsrMatrix::from_triplets(idx.len(), idx.len(), &t).expect("entries of H are in range"), idx)
    }

    /// The block (state) and local DOF of constraint row `r`.
    pub fn block_of_row(&self, r: usize) -> Option<(usize, usize)> {
        let b = self.blocks.partition_point(|b| b.offset + b.rows <= r);
        let blk = self.blocks.get(b)?;
        (r >= blk.offset).then(|| (b, (r - blk.offset) / blk.dof_size.max(1)))
    }
}

/// A Compliant constraint value: what it prescribes, as data.
pub trait ConstraintValue {
    fn value_kind(&self) -> ValueKind;
}

/// A Compliant projector: the admissible set it projects multipliers onto, as data.
pub trait CompliantProjector {
    fn projector(&self) -> Projector;
}

/// A KKT solver (compliant spec §8): solves `[[H, −Jᵀ],[J, C']]·[v; λ] = [r_m; r_n]` with the
/// rows of fixed DOFs removed (their `v` is 0).
pub trait KktSolver {
    /// Prepares the solves of one step (factorizations, Schur complements).
    fn factor(&mut self, sys: &AssembledSystem) -> SimResult;
    /// `x` (size m + n) holds the initial guess (warm start) and receives the solution.
    fn solve(&mut self, sys: &AssembledSystem, x: &mut [f64], rhs: &[f64]) -> SimResult;
    /// The correction (stabilization) solve, with a diagonal relaxation `damping` that
    /// iterative solvers may use; direct solvers solve exactly.
    fn correct(&mut self, sys: &AssembledSystem, x: &mut [f64], rhs: &[f64], _damping: f64) -> SimResult {
        self.solve(sys, x, rhs)
    }
    /// Statistics of the last solve (iterations, residual) for reports; `None` for direct
    /// solvers.
    fn last_stats(&self) -> Option<(usize, f64)> {
        None
    }
}

/// The compliance component of a mapped state: the first force field acting on `s` alone that
/// is a compliance.
fn compliance_of(scene: &Scene, scope: &MechScope, s: StateId) -> Option<ComponentId> {
    scope.force_fields.iter().copied().find(|&c| scene.role::<dyn ForceField>(c).is_some_and(|ff| ff.is_compliance() && ff.states()[..] == [s]))
}

/// Assembles the system of `scope` (compliant spec §4): `H = m·M + b·B + k·K` with the factors
/// `f` (compliances contribute `b·B` only), P from the projective constraints, `J` the global
/// Jacobians of the mapped states that carry a compliance, `C' = c_scale·C`.
///
/// Errors: a compliance whose state has no mapping path to a solved state, a projective
/// constraint that is not diagonal (the selection basis cannot represent it).
pub fn assemble_system(scene: &mut Scene, scope: &MechScope, f: Mbk, c_scale: f64, dt: f64) -> SimResult<AssembledSystem> {
    let m = scope.size;
    // H, with the mapped contributions and geometric stiffness carried to the masters.
    let mut builder = MatrixBuilder::new(m);
    let opts = AssemblyOptions { projective_constraints: false, ignore_outside_inputs: true, ..AssemblyOptions::default() };
    mechanics::assemble_with(scene, scope, f, &opts, &mut builder)?;
    let h = builder.into_matrix();
    if mechanics::has_block_projections(scene, scope) {
        let c = scope.projective.iter().copied().find(|&c| scene.entry(c).obj.is_some());
        let e = SimError::unsupported("the Compliant solvers need a diagonal projection (fixed DOFs); this projective constraint projects blocks")
            .hint("use FixedProjectiveConstraint / FixedConstraint, or an EulerImplicitSolver for this object");
        return Err(match c {
            Some(c) => label_error(scene, c, e),
            None => e,
        });
    }
    let mut free = vec![true; m];
    for r in mechanics::projected_rows(scene, scope) {
        if r < m {
            free[r] = false;
        }
    }

    // Compliant states, in scope (top-down) order.
    let g = mechanics::global_jacobians(scene, scope, true)?;
    let mut blocks = Vec::new();
    let mut j_t: Vec<(usize, usize, f64)> = Vec::new();
    let mut c_t: Vec<(usize, usize, f64)> = Vec::new();
    let mut n = 0;
    for &s in &scope.main_states {
        if let Some(c) = compliance_of(scene, scope, s) {
            let e = scene.entry(c);
            let d = Diagnostic::warning("a compliance on an independent state is ignored by the Compliant assembly (SOFA does the same)")
                .at(e.pos.clone())
                .subject(e.label())
                .hint("put the compliance under an IdentityMapping of the state, or set isCompliance=\"false\" to use it as a stiffness");
            if !scene.messages.iter().any(|m| m.message == d.message && m.pos == d.pos) {
                scene.report(d);
            }
        }
    }
    for &s in &scope.mapped_states {
        let Some(comp) = compliance_of(scene, scope, s) else { continue };
        let st = scene.store.get(s);
        let (rows, dof_size, node) = (st.size * st.layout.deriv_size(), st.layout.deriv_size(), st.node);
        if rows == 0 {
            continue;
        }
        let grows = g.get(&s).map(|v| v.as_slice()).unwrap_or(&[]);
        if grows.iter().all(|r| r.is_empty()) {
            let e = SimError::new(format!(
                "the compliance acts on '{}', which no mechanical mapping connects to a state this solver integrates",
                scene.store.get(s).name
            ))
            .hint("map the compliance's state from the solved objects (DistanceMapping, IdentityMapping…) inside the solver's node");
            return Err(label_error(scene, comp, e));
        }
        for (r, row) in grows.iter().enumerate().take(rows) {
            for &(col, v) in row {
                if v != 0.0 {
                    j_t.push((n + r, col, v));
                }
            }
        }
        let mut local = Vec::new();
        let p = scene.params(scene.entry(comp).node);
        scene
            .role::<dyn ForceField>(comp)
            .expect("force field role")
            .add_compliance(&p, rows, &mut local)
            .map_err(|e| label_error(scene, comp, e))?;
        let hard = local.iter().all(|&(_, _, v)| v == 0.0);
        for (i, jj, v) in local {
            if i >= rows || jj >= rows {
                return Err(label_error(scene, comp, SimError::new(format!("compliance entry ({i}, {jj}) is beyond its state's {rows} rows"))));
            }
            if v != 0.0 {
                c_t.push((n + i, n + jj, v * c_scale));
            }
        }
        let value_c = scene.find_local(node, crate::compliant::CONSTRAINT_VALUE);
        let (value, value_is_fallback) = match value_c.and_then(|c| scene.role::<dyn ConstraintValue>(c)).map(|v| v.value_kind()) {
            Some(v) => (v, false),
            None if hard => (ValueKind::Stabilization { mask: Vec::new() }, true),
            None => (ValueKind::Elastic, true),
        };
        let projector = scene
            .find_local(node, crate::compliant::COMPLIANT_PROJECTOR)
            .and_then(|c| scene.role::<dyn CompliantProjector>(c))
            .map(|p| p.projector());
        blocks.push(ConstraintBlock {
            state: s,
            node,
            compliance: comp,
            offset: n,
            rows,
            dof_size,
            value,
            value_is_fallback,
            projector,
            mask: Vec::new(),
        });
        n += rows;
    }
    let j = CsrMatrix::from_triplets(n, m, &j_t).map_err(|e| SimError::new(format!("assembling J: {e}")))?;
    let c = CsrMatrix::from_triplets(n, n, &c_t).map_err(|e| SimError::new(format!("assembling C: {e}")))?;

    // A master takes part when it has a non-zero in H or a column in J.
    let mut touched = vec![false; m];
    for (i, jj, v) in h.iter() {
        if v != 0.0 {
            touched[i] = true;
            touched[jj] = true;
        }
    }
    for (_, jj, v) in j.iter() {
        if v != 0.0 {
            touched[jj] = true;
        }
    }
    let mut mechanical = Vec::with_capacity(scope.offsets.len());
    for (k, &(s, off)) in scope.offsets.iter().enumerate() {
        let st = scene.store.get(s);
        let size = st.size * st.layout.deriv_size();
        let next = scope.offsets.get(k + 1).map_or(m, |o| o.1).max(off);
        let mech = size > 0 && touched[off..next.min(m)].iter().any(|&t| t);
        if !mech {
            for f in free.iter_mut().take(next.min(m)).skip(off) {
                *f = false;
            }
        }
        mechanical.push(mech);
    }
    Ok(AssembledSystem { dt, m, n, h, free, j, c, masters: scope.offsets.clone(), mechanical, blocks })
}

pub const CONSTRAINT_VALUE: crate::graph::role::RoleId = crate::graph::role::RoleId::of::<dyn ConstraintValue>("ConstraintValue");
pub const COMPLIANT_PROJECTOR: crate::graph::role::RoleId = crate::graph::role::RoleId::of::<dyn CompliantProjector>("CompliantProjector");
pub const KKT_SOLVER: crate::graph::role::RoleId = crate::graph::role::RoleId::of::<dyn KktSolver>("KktSolver");

#[cfg(test)]
mod tests {
    use super::*;

    fn sys() -> AssembledSystem {
        let blk = |offset, rows| ConstraintBlock {
            state: StateId::first_in_slot(0),
            node: NodeId::first_in_slot(0),
            compliance: ComponentId::first_in_slot(0),
            offset,
            rows,
            dof_size: 1,
            value: ValueKind::Elastic,
            value_is_fallback: true,
            projector: None,
            mask: Vec::new(),
        };
        AssembledSystem {
            dt: 0.1,
            m: 3,
            n: 3,
            h: CsrMatrix::from_dense(3, 3, &[2.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0, 1.0, 2.0]).unwrap(),
            free: vec![true, false, true],
            j: CsrMatrix::from_dense(3, 3, &[1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]).unwrap(),
            c: CsrMatrix::zeros(3, 3),
            masters: Vec::new(),
            mechanical: Vec::new(),
            blocks: vec![blk(0, 1), blk(1, 2)],
        }
    }

    #[test]
    fn free_block_and_projected_jacobian_drop_fixed_dofs() {
        let s = sys();
        let (a, idx) = s.free_block();
        assert_eq!(idx, vec![0, 2]);
        assert_eq!(a.to_dense(), vec![2.0, 0.0, 0.0, 2.0]);
        assert_eq!(s.jp().to_dense(), vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0]);
    }

    #[test]
    fn rows_find_their_block() {
        let s = sys();
        assert_eq!(s.block_of_row(0), Some((0, 0)));
        assert_eq!(s.block_of_row(2), Some((1, 1)));
        assert_eq!(s.block_of_row(3), None);
    }
}
