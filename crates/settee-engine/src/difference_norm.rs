//! `DifferenceEngine` (`output = input − substractor`, entry by entry) and `NormEngine` (the
//! `normType`-norm of each 3-vector of `input`).
//!
//! Inputs of different sizes leave the difference as it was, with a warning (as SOFA). Norms
//! follow SOFA's `lNorm`: 2 the Euclidean norm, a negative type the largest absolute component,
//! 1 the sum of absolute components, 0 the number of non-zero components, another `l` the
//! `(Σ|xᵢ|ˡ)^(1/l)`.

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

/// SOFA's `Vec::lNorm`.
pub fn l_norm(v: &[f64], l: i64) -> f64 {
    match l {
        2 => v.iter().map(|x| x * x).sum::<f64>().sqrt(),
        l if l < 0 => v.iter().fold(0.0, |m, x| if x.abs() > m { x.abs() } else { m }),
        1 => v.iter().map(|x| x.abs()).sum(),
        0 => v.iter().filter(|x| **x != 0.0).count() as f64,
        l => v.iter().map(|x| x.abs().powi(l as i32)).sum::<f64>().powf(1.0 / l as f64),
    }
}

/// Computing the difference between two vector of dofs.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    templates = ["Vec3d", "Vec1d"],
    create = |_| DifferenceEngine,
    data = {
        /// input vector
        input: Coords,
        /// vector to subtract to input
        substractor: Coords,
        /// output vector = input-substractor
        output: Coords,
    },
)]
#[derive(Clone)]
pub struct DifferenceEngine;

impl DifferenceEngine {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let (a, b) = (d.get(Self::INPUT), d.get(Self::SUBSTRACTOR));
        if a.len() != b.len() {
            let k = d.arity().coord.max(1);
            let msg =
                format!("input ({} values) and substractor ({}) should have the same size: the output is not updated", a.len() / k, b.len() / k);
            cx.warn(msg);
            return Ok(());
        }
        let out: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
        cx.data_mut().put(Self::OUTPUT, out);
        Ok(())
    }
}

impl Component for DifferenceEngine {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

/// Convert Vec in Real
#[component(
    module = "Sofa.Component.Engine.Generate",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| NormEngine,
    data = {
        /// input array of 3d points
        input: RealTuples(3),
        /// output array of scalar norms
        output: Reals,
        /// The type of norm. Use a negative value for the infinite norm.
        normType: Int = "2",
    },
)]
#[derive(Clone)]
pub struct NormEngine;

impl NormEngine {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let l = d.get(Self::NORM_TYPE);
        let out: Vec<f64> = d.get(Self::INPUT).chunks_exact(3).map(|v| l_norm(v, l)).collect();
        cx.data_mut().put(Self::OUTPUT, out);
        Ok(())
    }
}

impl Component for NormEngine {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::factory;
    use settee_core::simulation::init_root;
    use settee_core::testing::add;
    use settee_core::Scene;

    /// The norms of (3, −4, 0): 5, 4, 7, 2 (non-zero count), and (27 + 64)^(1/3) for l = 3.
    #[test]
    fn norms_follow_sofa_l_norm() {
        let v = [3.0, -4.0, 0.0];
        assert_eq!([l_norm(&v, 2), l_norm(&v, -1), l_norm(&v, 1), l_norm(&v, 0)], [5.0, 4.0, 7.0, 2.0]);
        assert!((l_norm(&v, 3) - 91f64.cbrt()).abs() < 1e-14);
    }

    /// Chained as in rigidifiedSectionsInBeam.scn: (4, 6, 3) − (1, 2, 3) = (3, 4, 0), norm 5;
    /// a second pair (1, 1, 1) − (1, 1, 1) gives 0. Mismatched sizes keep the output empty.
    #[test]
    fn difference_then_norm() {
        let f = factory();
        let mut s = Scene::new("root");
        let d = add(&mut s, &f, Scene::ROOT, "DifferenceEngine", &[("name", "diff"), ("input", "4 6 3  1 1 1"), ("substractor", "1 2 3  1 1 1")]);
        let n = add(&mut s, &f, Scene::ROOT, "NormEngine", &[("input", "@diff.output")]);
        let bad = add(&mut s, &f, Scene::ROOT, "DifferenceEngine", &[("input", "4 6 3  1 1 1"), ("substractor", "1 2 3")]);
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(d).data.get(DifferenceEngine::OUTPUT), [3.0, 4.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(s.entry(n).data.get(NormEngine::OUTPUT), [5.0, 0.0]);
        assert!(s.entry(bad).data.get(DifferenceEngine::OUTPUT).is_empty());
    }
}
