//! `OscillatorProjectiveConstraint`: imposes a sinusoidal trajectory `x = mean + A·sin(ω·T + φ)`
//! on DOFs, with the velocity `A·ω·cos(ω·T + φ)`, at the context time `T`.
//!
//! Each oscillator is read as `index, mean (a coord), amplitude (a deriv), pulsation, phase`;
//! a trailing incomplete oscillator is dropped, as SOFA's list reader does. For Rigid3d the
//! position is the mean moved by the scaled amplitude with the exponential-map update of Rigid3
//! (SOFA's `RigidCoord + Deriv`). Increments of the DOFs are zeroed; as in SOFA, the assembled
//! matrix is left as it is (the class has no matrix projection).

use settee_core::component::ProjectiveConstraint;
use settee_core::{component, Component, InitCtx, Layout, MechParams, SimResult, StateId};

use crate::subspace::{active, zero_dofs};
use crate::ProjectiveBase;

/// One oscillating DOF.
#[derive(Clone, Debug, PartialEq)]
pub struct Oscillator {
    pub index: usize,
    pub mean: Vec<f64>,
    pub amplitude: Vec<f64>,
    pub pulsation: f64,
    pub phase: f64,
}

/// Applies sinusoidal trajectories to DOFs.
#[component(
    module = "Sofa.Component.Constraint.Projective",
    description = "Apply a sinusoidal trajectory to given points.",
    roles = [ProjectiveConstraint],
    templates = ["Vec3d", "Rigid3d"],
    template_rule = FromState,
    inherit = [ProjectiveBase],
    data = {
        /// Define a sequence of oscillating particules: [index, Mean(x,y,z), amplitude(x,y,z), pulsation, phase]
        oscillators: Reals,
    },
)]
#[derive(Clone, Default)]
pub struct OscillatorProjectiveConstraint {
    state: Option<StateId>,
    layout: Option<Layout>,
    oscillators: Vec<Oscillator>,
    end_time: f64,
}

impl OscillatorProjectiveConstraint {
    /// The oscillators read at init.
    pub fn oscillators(&self) -> &[Oscillator] {
        &self.oscillators
    }
}

impl Component for OscillatorProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        let layout = cx.state_layout(s);
        if !matches!(layout, Layout::Vec3 | Layout::Rigid3) {
            return Err(cx
                .error(format!("the mechanical state has template {}, but this constraint supports Vec3d and Rigid3d", layout.name()))
                .hint("attach the constraint to a Vec3d or Rigid3d MechanicalObject"));
        }
        let (cs, ds) = (layout.coord_size(), layout.deriv_size());
        let n = cx.state_size(s);
        let d = cx.data();
        self.end_time = d.get(ProjectiveBase::END_TIME);
        let values = d.get(Self::OSCILLATORS).to_vec();
        let mut oscillators = Vec::new();
        for (k, o) in values.chunks_exact(1 + cs + ds + 2).enumerate() {
            let index = o[0];
            if index < 0.0 || index.fract() != 0.0 || index >= n as f64 {
                return Err(cx
                    .error(format!("oscillator {k} has index {index}, not a DOF of the state of {n} DOFs"))
                    .hint(format!("each oscillator is: index, {cs} numbers of mean, {ds} of amplitude, pulsation, phase")));
            }
            oscillators.push(Oscillator {
                index: index as usize,
                mean: o[1..1 + cs].to_vec(),
                amplitude: o[1 + cs..1 + cs + ds].to_vec(),
                pulsation: o[1 + cs + ds],
                phase: o[2 + cs + ds],
            });
        }
        self.state = Some(s);
        self.layout = Some(layout);
        self.oscillators = oscillators;
        Ok(())
    }
}

impl ProjectiveConstraint for OscillatorProjectiveConstraint {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        if active(self.end_time, p) {
            let ds = self.layout.expect("initialised").deriv_size();
            for o in &self.oscillators {
                zero_dofs(dx, &[o.index], ds);
            }
        }
    }
    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]) {
        if !active(self.end_time, p) {
            return;
        }
        let ds = self.layout.expect("initialised").deriv_size();
        for o in &self.oscillators {
            let w = o.pulsation;
            let c = (w * p.time + o.phase).cos();
            if let Some(vi) = v.get_mut(o.index * ds..(o.index + 1) * ds) {
                for (vk, a) in vi.iter_mut().zip(&o.amplitude) {
                    *vk = a * w * c;
                }
            }
        }
    }
    fn project_position(&mut self, p: &MechParams, x: &mut [f64]) {
        if !active(self.end_time, p) {
            return;
        }
        let layout = self.layout.expect("initialised");
        let cs = layout.coord_size();
        for o in &self.oscillators {
            let s = (o.pulsation * p.time + o.phase).sin();
            let Some(xi) = x.get_mut(o.index * cs..(o.index + 1) * cs) else { continue };
            xi.copy_from_slice(&o.mean);
            let d: Vec<f64> = o.amplitude.iter().map(|a| a * s).collect();
            layout.coord_add(xi, &d);
        }
    }
    fn projected_rows(&self, _p: &MechParams, _ds: usize, _out: &mut Vec<usize>) {}
}

#[cfg(test)]
mod tests {
    use settee_core::simulation::init_root;
    use settee_core::testing::add;
    use settee_core::{Factory, Scene};

    use super::*;

    fn factory() -> Factory {
        settee_statecontainer::factory_with(&[crate::register])
    }

    fn params(time: f64) -> MechParams {
        MechParams { dt: 0.1, time, gravity: [0.0; 3] }
    }

    /// The liver scene's oscillator `15 2 0 0 1 0 0 5 10` (here on DOF 1): at T = 0.3 the DOF is at
    /// (2 + sin(11.5), 0, 0) = (1.12454..., 0, 0) with velocity (5·cos(11.5), 0, 0); the trailing
    /// incomplete oscillator is dropped; increments of DOF 1 are zeroed, the matrix untouched.
    #[test]
    fn vec3_dof_follows_the_sine() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  0 0 0")]);
        let c = add(&mut s, &f, Scene::ROOT, "OscillatorConstraint", &[("oscillators", "1 2 0 0 1 0 0 5 10  0 1")]);
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(c).class.name, "OscillatorProjectiveConstraint");
        let pc = s.get_mut::<OscillatorProjectiveConstraint>(c).unwrap();
        assert_eq!(pc.oscillators().len(), 1);
        let mut x = vec![9.0; 6];
        pc.project_position(&params(0.3), &mut x);
        assert_eq!(x, [9.0, 9.0, 9.0, 2.0 + 11.5f64.sin(), 0.0, 0.0]);
        assert!((x[3] - 1.1245478253).abs() < 1e-9, "{}", x[3]);
        let mut v = vec![9.0; 6];
        pc.project_velocity(&params(0.3), &mut v);
        assert_eq!(v, [9.0, 9.0, 9.0, 5.0 * 11.5f64.cos(), 0.0, 0.0]);
        let mut dx = vec![1.0; 6];
        pc.project_response(&params(0.3), &mut dx);
        assert_eq!(dx, [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
        let mut rows = Vec::new();
        pc.projected_rows(&params(0.3), 3, &mut rows);
        assert!(rows.is_empty());
    }

    /// The rigid scene's oscillator: mean (1, 1, 0 | identity), amplitude (0, 1, 1 | 0, 0.707,
    /// 0.707), ω 1, φ 5. At T = π/2 − 5 + 2π (sin = 1) the center is (1, 2, 1) and the
    /// orientation the exponential of the rotation vector (0, 0.707, 0.707): a turn of
    /// 0.707·√2 about (0, 1, 1)/√2.
    #[test]
    fn rigid3_mean_is_moved_by_the_rotation_vector() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", "0 0 0 0 0 0 1")]);
        let c = add(&mut s, &f, Scene::ROOT, "OscillatorProjectiveConstraint", &[("oscillators", "0  1 1 0 0 0 0 1   0 1 1 0 0.707 0.707  1 5")]);
        init_root(&mut s, &f).unwrap();
        let pc = s.get_mut::<OscillatorProjectiveConstraint>(c).unwrap();
        let t = std::f64::consts::FRAC_PI_2 - 5.0 + std::f64::consts::TAU;
        let mut x = vec![0.0; 7];
        pc.project_position(&params(t), &mut x);
        let sin = (t + 5.0).sin();
        assert!((sin - 1.0).abs() < 1e-15);
        assert_eq!(x[..3], [1.0, 1.0 + sin, sin]);
        // Half-angle |ω|/2 about (0, 1, 1)/√2.
        let half = 0.707 * sin * std::f64::consts::SQRT_2 / 2.0;
        let axis = std::f64::consts::FRAC_1_SQRT_2;
        let expected = [0.0, axis * half.sin(), axis * half.sin(), half.cos()];
        for k in 0..4 {
            assert!((x[3 + k] - expected[k]).abs() < 1e-12, "{k}: {} vs {}", x[3 + k], expected[k]);
        }
        let mut v = vec![0.0; 6];
        pc.project_velocity(&params(t), &mut v);
        let cos = (t + 5.0).cos();
        assert_eq!(v, [0.0, cos, cos, 0.0, 0.707 * cos, 0.707 * cos]);
    }

    /// An index beyond the state is an error.
    #[test]
    fn bad_index_is_an_error() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0")]);
        add(&mut s, &f, Scene::ROOT, "OscillatorProjectiveConstraint", &[("oscillators", "3 2 0 0 1 0 0 5 10")]);
        let e = init_root(&mut s, &f).unwrap_err();
        assert!(e.diagnostic().message.contains("index 3"), "{e:?}");
    }
}
