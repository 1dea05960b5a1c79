//! Preconditioners of `PreconditionedCgSolver` (compliant spec §8.6):
//! `CompliantJacobiPreconditioner`, the inverse of the diagonal of the implicit matrix.

use settee_core::compliant::AssembledSystem;
use settee_core::{component, Component, NodeId, Scene};

/// Registers the preconditioner classes.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<JacobiPreconditioner>();
}

/// Preconditioner of PreconditionedCgSolver: the inverse of the diagonal of the implicit matrix (entries below machine ε give 0).
///
/// The component: found by the `PreconditionedCgSolver` of its node.
#[component(
    module = "Compliant",
    name = "CompliantJacobiPreconditioner", module = "Compliant",
    create = |_| JacobiPreconditioner,
)]
#[derive(Clone)]
pub struct JacobiPreconditioner;

impl Component for JacobiPreconditioner {}

/// The label (`Class 'name'` at file:line:col) of the first preconditioner of `node`, if any.
pub fn find_preconditioner(scene: &Scene, node: NodeId) -> Option<String> {
    scene.node(node).objects.iter().find_map(|&c| {
        let e = scene.entry(c);
        scene.get::<JacobiPreconditioner>(c)?;
        Some(match &e.pos {
            Some(p) => format!("{} ({p})", e.label()),
            None => e.label(),
        })
    })
}

/// The Jacobi preconditioner: `diag(H)⁻¹`, or `diag(Pᵀ H P + εI)⁻¹` when some DOFs are fixed
/// (SOFA's construction); entries of magnitude below ε give 0.
#[derive(Clone, Debug, Default)]
pub struct Jacobi {
    inv_diag: Vec<f64>,
}

impl Jacobi {
    pub fn compute(&mut self, sys: &AssembledSystem) {
        let d = sys.h.diagonal();
        let all_free = sys.free.iter().all(|&f| f);
        self.inv_diag = (0..sys.m)
            .map(|i| {
                let v = if all_free {
                    d[i]
                } else if sys.free[i] {
                    d[i] + f64::EPSILON
                } else {
                    f64::EPSILON
                };
                if v.abs() < f64::EPSILON {
                    0.0
                } else {
                    1.0 / v
                }
            })
            .collect();
    }

    /// `z = diag⁻¹ r`.
    pub fn apply(&self, r: &[f64], z: &mut [f64]) {
        for ((z, r), d) in z.iter_mut().zip(r).zip(&self.inv_diag) {
            *z = r * d;
        }
    }
}
