//! `LinearForceField` (mechanics spec §7.6): a force on selected DOFs interpolated linearly
//! between key forces at key times. At time `T ≥ times[0]`: between two keys,
//! `force · (F_prev + (F_next − F_prev)/(t_next − t_prev)·(T − t_prev))`; from the last key on,
//! `forces[last]` (not multiplied by `force`, as SOFA). Before the first key: nothing. No
//! stiffness.

use settee_core::component::ForceField;
use settee_core::role::Topology;
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// Linearly-interpolated force applied to given degrees of freedom.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Vec6d", "Rigid3d"],
    template_rule = FromState,
    create = |args| LinearForceField::new(args.layout.unwrap_or(Layout::Vec3)),
    data = {
        /// points where the force is applied
        points: Indices,
        /// applied force to all points
        force: Real = "1",
        /// key times for the interpolation
        times: Reals,
        /// forces corresponding to the key times
        forces: Derivs,
        /// Size of the drawn arrows (0->no arrows, sign->direction of drawing) (rendering only)
        arrowSizeCoef: Real = "0",
        /// Rayleigh damping coefficient related to stiffness (no effect: no stiffness)
        rayleighStiffness: Real = "0",
    },
    links = {
        /// link to the topology container
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct LinearForceField {
    layout: Layout,
    state: Option<StateId>,
    points: Vec<usize>,
    factor: f64,
    times: Vec<f64>,
    /// One force per key time (`deriv_size` reals each).
    forces: Vec<f64>,
    rayleigh_stiffness: f64,
}

impl LinearForceField {
    pub fn new(layout: Layout) -> LinearForceField {
        LinearForceField { layout, state: None, points: Vec::new(), factor: 1.0, times: Vec::new(), forces: Vec::new(), rayleigh_stiffness: 0.0 }
    }

    /// The force applied to each point at time `t` (`None` before the first key).
    pub fn force_at(&self, t: f64) -> Option<Vec<f64>> {
        let ds = self.layout.deriv_size();
        let key = |k: usize| &self.forces[k * ds..(k + 1) * ds];
        let (&first, &last) = (self.times.first()?, self.times.last()?);
        if t < first {
            return None;
        }
        if t >= last {
            return Some(key(self.times.len() - 1).to_vec());
        }
        // the keys are assumed in chronological order, as SOFA does
        let next = self.times.iter().position(|&k| k > t)?;
        let prev = next - 1;
        let (tp, tn) = (self.times[prev], self.times[next]);
        let (fp, fnext) = (key(prev), key(next));
        Some((0..ds).map(|c| (((fnext[c] - fp[c]) * (1.0 / (tn - tp))) * (t - tp) + fp[c]) * self.factor).collect())
    }
}

impl Component for LinearForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::state_of_template(cx, self.layout)?;
        let d = cx.data();
        self.points = d.get(Self::POINTS).to_vec();
        self.factor = d.get(Self::FORCE);
        self.times = d.get(Self::TIMES).to_vec();
        self.forces = d.get(Self::FORCES).to_vec();
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        let ds = self.layout.deriv_size();
        if self.forces.len() != self.times.len() * ds {
            return Err(cx
                .error(format!("{} key times but {} key forces", self.times.len(), self.forces.len() / ds))
                .hint("give one force (of the state's derivative size) per key time"));
        }
        if let Some(w) = self.times.windows(2).position(|w| w[1] < w[0]) {
            return Err(cx.error(format!(
                "key time {} comes after {}: the key times must be in chronological order",
                self.times[w + 1],
                self.times[w]
            )));
        }
        let n = cx.state_size(s);
        if let Some(&p) = self.points.iter().find(|&&p| p >= n) {
            return Err(cx.error(format!("point {p} is beyond the {n} DOFs of the mechanical state")));
        }
        self.state = Some(s);
        Ok(())
    }
}

impl ForceField for LinearForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
        let Some(force) = self.force_at(p.time) else { return Ok(()) };
        let ds = self.layout.deriv_size();
        let f = &mut io.f[0];
        for &i in &self.points {
            let fi =
                f.get_mut(i * ds..(i + 1) * ds).ok_or_else(|| SimError::new(format!("LinearForceField: point {i} is beyond the state's size")))?;
            for (a, b) in fi.iter_mut().zip(&force) {
                *a += b;
            }
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, _io: &mut ForceIo, _k: f64, _b: f64) -> SimResult {
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _k: f64) -> SimResult {
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

#[cfg(test)]
mod tests {
    use settee_core::Scene;

    use super::LinearForceField;
    use crate::test_support::*;

    /// SOFA's LinearForceField.scn keys on a rigid: force 2, keys at 0 4 8 10 12.
    #[test]
    fn force_is_interpolated_between_keys() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", "2 0 0 0 0 0 1")]);
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "LinearForceField",
            &[
                ("points", "0"),
                ("force", "2"),
                ("times", "1 4 8 10 12"),
                ("forces", "0 0 0 0 0 0  1 0 0 0 0 0  -1 0 0 0 0 0  -1 0 0 0 0 0  0 0 0 0.5 0 0"),
            ],
        );
        settee_core::simulation::init_root(&mut s, &f).unwrap();
        let ff = s.get::<LinearForceField>(c).unwrap();
        assert_eq!(ff.force_at(0.5), None);
        // at t = 2.5, between keys 1 (0) and 4 (1): 2·(0.5) = 1
        assert_eq!(ff.force_at(2.5).unwrap(), vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        // at t = 7, between 4 (1) and 8 (−1): 2·(1 − 2·3/4) = −1
        assert_eq!(ff.force_at(7.0).unwrap()[0], -1.0);
        // from the last key on: the last force, not multiplied by `force`
        assert_eq!(ff.force_at(12.0).unwrap(), vec![0.0, 0.0, 0.0, 0.5, 0.0, 0.0]);
        assert_eq!(ff.force_at(100.0).unwrap(), vec![0.0, 0.0, 0.0, 0.5, 0.0, 0.0]);
    }

    /// `addForce` adds the force of the time it is given to the listed points only.
    #[test]
    fn add_force_uses_the_context_time() {
        use settee_core::component::ForceField;
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0  2 0 0")]);
        let c = add(&mut s, &f, Scene::ROOT, "LinearForceField", &[("points", "1 2"), ("times", "0 1"), ("forces", "0 0 0  4 0 -2")]);
        settee_core::simulation::init_root(&mut s, &f).unwrap();
        let x = vec![0.0; 9];
        for (t, expected) in [(-1.0, 0.0), (0.25, 1.0), (0.5, 2.0), (3.0, 4.0)] {
            let mut out = vec![1.0; 9];
            let p = settee_core::MechParams { dt: 0.01, time: t, gravity: [0.0; 3] };
            let mut io = settee_core::ForceIo { f: vec![out.as_mut_slice()].into(), x: vec![x.as_slice()].into(), v: vec![x.as_slice()].into() };
            s.role_mut::<dyn ForceField>(c).unwrap().add_force(&p, &mut io).unwrap();
            drop(io);
            let e = [1.0, 1.0, 1.0, 1.0 + expected, 1.0, 1.0 - expected / 2.0, 1.0 + expected, 1.0, 1.0 - expected / 2.0];
            assert_eq!(out, e, "t = {t}");
        }
    }
}
