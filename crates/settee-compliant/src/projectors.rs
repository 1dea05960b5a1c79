//! Projectors (compliant spec §7): the admissible sets of blocks of multipliers, used by the
//! sequential (projected Gauss-Seidel) solvers. Direct and Krylov solvers treat every
//! constraint as bilateral, as SOFA's do.

use settee_core::compliant::{CompliantProjector, Projector};
use settee_core::{component, Component, InitCtx, SimResult};

/// Registers the projector classes.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<ProjectorComponent>();
}

/// A projector component: its Data, read at init into a [`Projector`].
#[component(
    roles = [CompliantProjector],
    class(
        name = "UnilateralConstraint", module = "Compliant",
        description = "Unilateral constraint: every multiplier is projected onto λ ≥ 0.",
        create = |_| ProjectorComponent { class: "UnilateralConstraint", projector: Projector::Closure },
    ),
    class(
        name = "NegativeUnilateralConstraint", module = "Compliant",
        description = "Every multiplier is projected onto λ ≤ 0.",
        create = |_| ProjectorComponent { class: "NegativeUnilateralConstraint", projector: Projector::Closure },
    ),
    class(
        name = "ResistanceConstraint", module = "Compliant",
        description = "Multipliers clamped to [−threshold, threshold] (zero in the correction pass).",
        create = |_| ProjectorComponent { class: "ResistanceConstraint", projector: Projector::Closure },
        data = {
            /// bound t: each multiplier is clamped to [−t, t]
            threshold: Real = "0",
        },
    ),
    class(
        name = "ClosureConstraint", module = "Compliant",
        description = "A bilateral constraint tagged as a loop closure: no projection.",
        create = |_| ProjectorComponent { class: "ClosureConstraint", projector: Projector::Closure },
    ),
)]
#[derive(Clone)]
pub struct ProjectorComponent {
    class: &'static str,
    projector: Projector,
}

impl Component for ProjectorComponent {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.projector = match self.class {
            "UnilateralConstraint" => Projector::Unilateral,
            "NegativeUnilateralConstraint" => Projector::NegativeUnilateral,
            "ResistanceConstraint" => {
                let t = cx.data().get(Self::THRESHOLD);
                if t < 0.0 {
                    return Err(cx.error(format!("threshold = {t} is negative")));
                }
                Projector::Resistance { threshold: t }
            }
            _ => Projector::Closure,
        };
        Ok(())
    }
}

impl CompliantProjector for ProjectorComponent {
    fn projector(&self) -> Projector {
        self.projector.clone()
    }
}

/// Projects one block of multipliers onto its admissible set; `correction` is true in the
/// stabilization pass (friction is then dropped, resistances give nothing).
pub fn project(p: &Projector, block: &mut [f64], correction: bool) {
    match p {
        Projector::Unilateral => block.iter_mut().for_each(|l| *l = l.max(0.0)),
        Projector::NegativeUnilateral => block.iter_mut().for_each(|l| *l = l.min(0.0)),
        Projector::Resistance { threshold } => {
            for l in block.iter_mut() {
                *l = if correction { 0.0 } else { l.clamp(-threshold, *threshold) };
            }
        }
        Projector::Closure => {}
        Projector::Coulomb { mu, horizontal } => {
            let mu = if correction { 0.0 } else { *mu };
            let k = block.len().min(3);
            let mut l3 = [0.0; 3];
            l3[..k].copy_from_slice(&block[..k]);
            let r = if *horizontal { cone_horizontal(l3, mu) } else { cone_orthogonal(l3, mu) };
            block[..k].copy_from_slice(&r[..k]);
            for l in block.iter_mut().skip(3) {
                *l = 0.0;
            }
        }
    }
}

/// Projection onto the Coulomb cone keeping the normal part (the normal is the first axis).
pub fn cone_horizontal(l: [f64; 3], mu: f64) -> [f64; 3] {
    let ln = l[0];
    if ln < 0.0 {
        return [0.0; 3];
    }
    if mu == 0.0 {
        return [ln, 0.0, 0.0];
    }
    let t = (l[1] * l[1] + l[2] * l[2]).sqrt();
    if t <= mu * ln {
        return l;
    }
    if t == 0.0 {
        return [ln, 0.0, 0.0];
    }
    let s = mu * ln / t;
    [ln, l[1] * s, l[2] * s]
}

/// Orthogonal projection onto the double cone |λ_t| ≤ μ|λ_n|, then onto its upper half.
pub fn cone_orthogonal(l: [f64; 3], mu: f64) -> [f64; 3] {
    let ln = l[0];
    let t = (l[1] * l[1] + l[2] * l[2]).sqrt();
    if t <= mu * ln.abs() {
        return if ln >= 0.0 { l } else { [0.0; 3] };
    }
    // Generator of the cone on the side of λ.
    let s = if t > 0.0 { mu * ln.abs() / t } else { 0.0 };
    let g = [ln.signum() * ln, l[1] * s, l[2] * s];
    let beta = g[0] * l[0] + g[1] * l[1] + g[2] * l[2];
    let g2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
    if beta > 0.0 && g2 > 0.0 {
        [g[0] * beta / g2, g[1] * beta / g2, g[2] * beta / g2]
    } else {
        [0.0; 3]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unilateral_and_resistance() {
        let mut b = [-1.0, 2.0];
        project(&Projector::Unilateral, &mut b, false);
        assert_eq!(b, [0.0, 2.0]);
        let mut b = [-3.0, 0.5];
        project(&Projector::Resistance { threshold: 1.0 }, &mut b, false);
        assert_eq!(b, [-1.0, 0.5]);
        project(&Projector::Resistance { threshold: 1.0 }, &mut b, true);
        assert_eq!(b, [0.0, 0.0]);
    }

    #[test]
    fn horizontal_cone_keeps_the_normal_and_scales_the_tangent() {
        assert_eq!(cone_horizontal([-1.0, 5.0, 0.0], 0.5), [0.0; 3]);
        assert_eq!(cone_horizontal([2.0, 0.5, 0.0], 0.5), [2.0, 0.5, 0.0]);
        let r = cone_horizontal([2.0, 3.0, 4.0], 0.5);
        assert_eq!(r[0], 2.0);
        assert!(((r[1] * r[1] + r[2] * r[2]).sqrt() - 1.0).abs() < 1e-15);
        // Friction dropped in the correction pass.
        let mut b = [2.0, 3.0, 4.0];
        project(&Projector::Coulomb { mu: 0.5, horizontal: true }, &mut b, true);
        assert_eq!(b, [2.0, 0.0, 0.0]);
    }

    #[test]
    fn orthogonal_cone_projection_is_idempotent_and_in_the_cone() {
        for l in [[1.0, 3.0, 0.0], [-0.5, 2.0, 1.0], [0.3, -0.1, 0.05]] {
            let p = cone_orthogonal(l, 0.4);
            let t = (p[1] * p[1] + p[2] * p[2]).sqrt();
            assert!(t <= 0.4 * p[0] + 1e-12 && p[0] >= 0.0, "{p:?}");
            let q = cone_orthogonal(p, 0.4);
            for k in 0..3 {
                assert!((p[k] - q[k]).abs() < 1e-12);
            }
        }
    }
}
