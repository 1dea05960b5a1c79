//! Constraint values (compliant spec §6): what the rows of a compliant state prescribe, in the
//! dynamics pass (ψ) and in the stabilization pass (ψ_corr).
//!
//! The components only carry their Data; the assembly reads them as a [`ValueKind`], and the
//! functions of this module compute the right-hand sides from it.

use settee_core::compliant::{ConstraintValue, ValueKind};
use settee_core::{component, Component, InitCtx, SimResult};

/// Registers the constraint value classes.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<Value>();
}

/// The velocity under which a Restitution contact is taken as resting (SOFA's hard-coded value).
const RESTITUTION_REST_VELOCITY: f64 = 1e-5;

/// A constraint value component: its Data, read at init into a [`ValueKind`].
#[component(
    roles = [ConstraintValue],
    class(
        name = "ConstraintValue", module = "Compliant",
        description = "Elastic constraint value: ψ = −φ/h, no correction (the default of an elastic compliance).",
        create = |_| Value { class: "ConstraintValue", kind: ValueKind::Elastic },
    ),
    class(
        name = "Stabilization", module = "Compliant",
        description = "Hard constraint value stabilised by a correction pass: ψ = 0 with stabilization on, −φ/h otherwise (the default of a hard compliance).",
        create = |_| Value { class: "Stabilization", kind: ValueKind::Elastic },
        data = {
            /// per-block activation (violated blocks); computed each step when empty
            mask: Strings,
        },
    ),
    class(
        name = "HolonomicConstraintValue", module = "Compliant",
        description = "Stabilization whose dynamics value is always that of the stabilised case.",
        create = |_| Value { class: "HolonomicConstraintValue", kind: ValueKind::Elastic },
        data = {
            /// per-block activation (violated blocks); computed each step when empty
            mask: Strings,
        },
    ),
    class(
        name = "Restitution", module = "Compliant",
        description = "Constraint value of a unilateral contact with restitution.",
        create = |_| Value { class: "Restitution", kind: ValueKind::Elastic },
        data = {
            /// per-block activation (violated blocks); computed each step when empty
            mask: Strings,
            /// restitution coefficient e: a violated block leaves with −e times its incoming normal velocity
            restitution: Real = "0",
        },
    ),
    class(
        name = "VelocityConstraintValue", module = "Compliant",
        description = "Prescribes the velocities of the constraint rows.",
        create = |_| Value { class: "VelocityConstraintValue", kind: ValueKind::Elastic },
        data = {
            /// prescribed velocities, one per scalar row of the state
            velocities: Reals,
        },
    ),
    class(
        name = "OffsettedConstraintValue", module = "Compliant",
        description = "Elastic constraint value with an offset: ψ = −(φ + offset)/h.",
        create = |_| Value { class: "OffsettedConstraintValue", kind: ValueKind::Elastic },
        data = {
            /// offset added to the violation: ψ = −(φ + offset)/h
            offset: Real = "0",
        },
    ),
    class(
        name = "DampingValue", module = "Compliant",
        description = "Constraint value of a damper: ψ = −u (pair it with DampingCompliance).",
        create = |_| Value { class: "DampingValue", kind: ValueKind::Elastic },
    ),
    class(
        name = "BaumgarteStabilization", module = "Compliant",
        description = "Baumgarte-stabilised constraint value: ψ = −alpha·φ.",
        create = |_| Value { class: "BaumgarteStabilization", kind: ValueKind::Elastic },
        data = {
            /// Baumgarte factor: ψ = −alpha·φ
            alpha: Real = "0",
        },
    ),
)]
#[derive(Clone)]
pub struct Value {
    class: &'static str,
    kind: ValueKind,
}

/// SOFA's `vector<bool>` text: `1`/`0`/`true`/`false` per entry.
fn parse_mask(words: &[String]) -> Result<Vec<bool>, String> {
    words
        .iter()
        .map(|w| match w.as_str() {
            "1" | "true" => Ok(true),
            "0" | "false" => Ok(false),
            other => Err(format!("mask entry '{other}' is not a boolean (1, 0, true or false)")),
        })
        .collect()
}

impl Component for Value {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let words: &[String] = match self.class {
            "Stabilization" | "HolonomicConstraintValue" | "Restitution" => d.get(Self::MASK),
            _ => &[],
        };
        let mask = parse_mask(words).map_err(|e| cx.error(e))?;
        self.kind = match self.class {
            "ConstraintValue" => ValueKind::Elastic,
            "Stabilization" => ValueKind::Stabilization { mask },
            "HolonomicConstraintValue" => ValueKind::Holonomic { mask },
            "Restitution" => {
                let e = d.get(Self::RESTITUTION);
                if !(0.0..=1.0).contains(&e) {
                    cx.warn(format!("restitution = {e} is outside [0, 1]"));
                }
                ValueKind::Restitution { mask, restitution: e }
            }
            "VelocityConstraintValue" => ValueKind::Velocity { velocities: d.get(Self::VELOCITIES).to_vec() },
            "OffsettedConstraintValue" => ValueKind::Offsetted { offset: d.get(Self::OFFSET) },
            "DampingValue" => ValueKind::Damping,
            "BaumgarteStabilization" => ValueKind::Baumgarte { alpha: d.get(Self::ALPHA) },
            other => unreachable!("value class {other}"),
        };
        Ok(())
    }
}

impl ConstraintValue for Value {
    fn value_kind(&self) -> ValueKind {
        self.kind.clone()
    }
}

/// The mask a stabilised value starts from: its scene mask when given, else the activation
/// computed by [`filter`] (empty when the node has no projector).
fn value_mask<'a>(kind: &'a ValueKind, computed: &'a [bool]) -> &'a [bool] {
    match kind {
        ValueKind::Stabilization { mask } | ValueKind::Holonomic { mask } | ValueKind::Restitution { mask, .. } if !mask.is_empty() => mask,
        _ => computed,
    }
}

/// SOFA's `filterConstraints`, called when the node has a projector: the per-block activation
/// of the projector (violated blocks, φ of the block's first row < 0), or `None` when the value
/// keeps the projector unmasked (no filter, or a mask given in the scene).
pub fn filter(kind: &ValueKind, phi: &[f64], dof: usize) -> Option<Vec<bool>> {
    match kind {
        ValueKind::Stabilization { mask } | ValueKind::Holonomic { mask } | ValueKind::Restitution { mask, .. } if mask.is_empty() => {
            Some(phi.chunks(dof.max(1)).map(|b| b[0] < 0.0).collect())
        }
        _ => None,
    }
}

/// ψ of the dynamics pass for one compliant state: `phi` its positions, `u` its velocities,
/// `computed` the activation from [`filter`], `stabilized` true when a stabilization pass
/// exists. Errors only for a VelocityConstraintValue of the wrong size.
#[allow(clippy::too_many_arguments)] // SOFA's `dynamics(…)` signature: the value, its state's vectors and the step
pub fn dynamics(
    kind: &ValueKind,
    computed: &[bool],
    stabilized: bool,
    phi: &[f64],
    u: &[f64],
    dof: usize,
    h: f64,
    out: &mut [f64],
) -> Result<(), String> {
    let dof = dof.max(1);
    let elastic = |out: &mut [f64]| {
        for (o, p) in out.iter_mut().zip(phi) {
            *o = -p / h;
        }
    };
    match kind {
        ValueKind::Elastic => elastic(out),
        ValueKind::Offsetted { offset } => {
            for (o, p) in out.iter_mut().zip(phi) {
                *o = -(p + offset) / h;
            }
        }
        ValueKind::Damping => {
            for (o, v) in out.iter_mut().zip(u) {
                *o = -v;
            }
        }
        ValueKind::Baumgarte { alpha } => {
            for (o, p) in out.iter_mut().zip(phi) {
                *o = -alpha * p;
            }
        }
        ValueKind::Velocity { velocities } => {
            if velocities.len() != out.len() {
                return Err(format!("VelocityConstraintValue has {} velocities for {} constraint rows", velocities.len(), out.len()));
            }
            out.copy_from_slice(velocities);
        }
        ValueKind::Stabilization { .. } | ValueKind::Holonomic { .. } => {
            let on = stabilized || matches!(kind, ValueKind::Holonomic { .. });
            if !on {
                elastic(out);
            } else {
                let mask = value_mask(kind, computed);
                if mask.is_empty() {
                    out.fill(0.0);
                } else {
                    for (b, chunk) in out.chunks_mut(dof).enumerate() {
                        let violated = mask.get(b).copied().unwrap_or(false);
                        for (k, o) in chunk.iter_mut().enumerate() {
                            *o = if violated { 0.0 } else { -phi[b * dof + k] / h };
                        }
                    }
                }
            }
        }
        ValueKind::Restitution { restitution, .. } => {
            let mask = value_mask(kind, computed);
            for (b, chunk) in out.chunks_mut(dof).enumerate() {
                let violated = mask.is_empty() || mask.get(b).copied().unwrap_or(false);
                let r0 = b * dof;
                if !violated {
                    chunk.copy_from_slice(&u[r0..r0 + chunk.len()]);
                    continue;
                }
                let bouncing = u[r0].abs() > RESTITUTION_REST_VELOCITY;
                for (k, o) in chunk.iter_mut().enumerate() {
                    *o = if bouncing && k == 0 {
                        -restitution * u[r0]
                    } else if stabilized {
                        0.0
                    } else {
                        -phi[r0 + k] / h
                    };
                }
            }
        }
    }
    Ok(())
}

/// ψ_corr of the stabilization pass (0 for values that need no correction).
pub fn correction(kind: &ValueKind, computed: &[bool], phi: &[f64], u: &[f64], dof: usize, h: f64, out: &mut [f64]) {
    let dof = dof.max(1);
    match kind {
        ValueKind::Stabilization { .. } | ValueKind::Holonomic { .. } => {
            let mask = value_mask(kind, computed);
            for (r, o) in out.iter_mut().enumerate() {
                let on = mask.is_empty() || mask.get(r / dof).copied().unwrap_or(false);
                *o = if on { -phi[r] / h } else { 0.0 };
            }
        }
        ValueKind::Restitution { .. } => {
            let mask = value_mask(kind, computed);
            for (b, chunk) in out.chunks_mut(dof).enumerate() {
                let r0 = b * dof;
                let violated = mask.is_empty() || mask.get(b).copied().unwrap_or(false);
                let resting = u[r0].abs() <= RESTITUTION_REST_VELOCITY;
                for (k, o) in chunk.iter_mut().enumerate() {
                    *o = if violated && resting { -phi[r0 + k] / h } else { 0.0 };
                }
            }
        }
        _ => out.fill(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stabilization_zeroes_violated_blocks_and_corrects_them() {
        let k = ValueKind::Stabilization { mask: Vec::new() };
        let phi = [-0.25, 0.5];
        let mask = filter(&k, &phi, 1).unwrap();
        assert_eq!(mask, vec![true, false]);
        let mut out = [9.0; 2];
        dynamics(&k, &mask, true, &phi, &[0.0; 2], 1, 0.5, &mut out).unwrap();
        assert_eq!(out, [0.0, -1.0]);
        correction(&k, &mask, &phi, &[0.0; 2], 1, 0.5, &mut out);
        assert_eq!(out, [0.5, 0.0]);
        // Without a stabilization pass the dynamics value is elastic.
        dynamics(&k, &mask, false, &phi, &[0.0; 2], 1, 0.5, &mut out).unwrap();
        assert_eq!(out, [0.5, -1.0]);
    }

    #[test]
    fn restitution_bounces_the_normal_velocity() {
        let k = ValueKind::Restitution { mask: Vec::new(), restitution: 0.5 };
        let (phi, u) = ([-0.01, 0.0, 0.0], [-2.0, 1.0, 0.0]);
        let mut out = [0.0; 3];
        dynamics(&k, &[true], true, &phi, &u, 3, 0.01, &mut out).unwrap();
        assert_eq!(out, [1.0, 0.0, 0.0]);
        // A resting contact is corrected instead.
        let u = [1e-6, 0.0, 0.0];
        correction(&k, &[true], &phi, &u, 3, 0.01, &mut out);
        assert_eq!(out, [1.0, 0.0, 0.0]);
    }

    #[test]
    fn velocity_value_checks_its_size() {
        let k = ValueKind::Velocity { velocities: vec![1.0] };
        let mut out = [0.0; 2];
        assert!(dynamics(&k, &[], true, &[0.0; 2], &[0.0; 2], 1, 0.1, &mut out).is_err());
    }
}
