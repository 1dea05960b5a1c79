//! `HermiteSplineProjectiveConstraint`: moves DOFs along the cubic Hermite curve from `X0`
//! (tangent `dX0`) to `X1` (tangent `dX1`) between `BeginTime` and `EndTime`.
//!
//! The curve parameter is itself eased: with `u = (T − BeginTime)/(EndTime − BeginTime)`, the
//! parameter is the y component of the 2D Hermite blend `SX0·h10(u) + (1,1)·h01(u) + SX1·h11(u)`
//! (SOFA's reading of `SX0`/`SX1`). While `BeginTime ≤ T ≤ EndTime` the position is the Hermite
//! point at that parameter, the velocity the curve's derivative with respect to the parameter
//! (SOFA neither rescales it by the time span nor by the easing's derivative), and increments are
//! zeroed. On a Rigid3 DOF only the center and the linear velocity are written, as SOFA assigns
//! a 3-vector there. No matrix projection (SOFA's class has none).

use settee_core::component::ProjectiveConstraint;
use settee_core::role::Topology;
use settee_core::{component, Component, InitCtx, Layout, MechParams, SimResult, StateId};

use crate::subspace::{checked_indices, zero_dofs};

type V3 = [f64; 3];

/// Imposes a Hermite spline trajectory on DOFs.
#[component(
    module = "Sofa.Component.Constraint.Projective",
    description = "Impose a trajectory to given Dofs following a Hermite cubic spline constraint.",
    roles = [ProjectiveConstraint],
    templates = ["Vec3d", "Rigid3d"],
    template_rule = FromState,
    links = {
        /// link to the topology container
        topology: Topology,
    },
    data = {
        /// Indices of the constrained points
        indices: Indices,
        /// Begin Time of the motion
        BeginTime: Real = "0",
        /// End Time of the motion
        EndTime: Real = "0",
        /// first control point
        X0: Fixed(3) as Vec3 = "0 0 0",
        /// first control tangente
        dX0: Fixed(3) as Vec3 = "0 0 0",
        /// second control point
        X1: Fixed(3) as Vec3 = "0 0 0",
        /// second control tangente
        dX1: Fixed(3) as Vec3 = "0 0 0",
        /// first interpolation vector
        SX0: Fixed(2) = "0 0",
        /// second interpolation vector
        SX1: Fixed(2) = "0 0",
    },
)]
#[derive(Clone, Default)]
pub struct HermiteSplineProjectiveConstraint {
    state: Option<StateId>,
    layout: Option<Layout>,
    indices: Vec<usize>,
    begin: f64,
    end: f64,
    /// X0, dX0, X1, dX1.
    control: [V3; 4],
    /// y components of SX0 and SX1 (the x components do not enter the parameter).
    sx0_y: f64,
    sx1_y: f64,
}

impl HermiteSplineProjectiveConstraint {
    /// The curve parameter at the relative time `u`.
    fn parameter(&self, u: f64) -> f64 {
        let (u2, u3) = (u * u, u * u * u);
        let h10 = u3 - 2.0 * u2 + u;
        let h01 = -2.0 * u3 + 3.0 * u2;
        let h11 = u3 - u2;
        self.sx0_y * h10 + h01 + self.sx1_y * h11
    }

    fn combine(&self, h: [f64; 4]) -> V3 {
        let c = &self.control;
        std::array::from_fn(|k| c[0][k] * h[0] + c[1][k] * h[1] + c[2][k] * h[2] + c[3][k] * h[3])
    }

    /// The imposed position at time `t` (within the motion's window).
    pub fn position_at(&self, t: f64) -> V3 {
        let s = self.parameter((t - self.begin) / (self.end - self.begin));
        let (s2, s3) = (s * s, s * s * s);
        self.combine([2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, -2.0 * s3 + 3.0 * s2, s3 - s2])
    }

    /// The imposed velocity at time `t`: the derivative of the curve by its parameter.
    pub fn velocity_at(&self, t: f64) -> V3 {
        let s = self.parameter((t - self.begin) / (self.end - self.begin));
        let s2 = s * s;
        self.combine([6.0 * s2 - 6.0 * s, 3.0 * s2 - 4.0 * s + 1.0, -6.0 * s2 + 6.0 * s, 3.0 * s2 - 2.0 * s])
    }

    fn acts_at(&self, t: f64) -> bool {
        t >= self.begin && t <= self.end
    }

    fn write(&self, v: &mut [f64], size: usize, value: V3) {
        for &i in &self.indices {
            if let Some(vi) = v.get_mut(i * size..i * size + 3) {
                vi.copy_from_slice(&value);
            }
        }
    }
}

impl Component for HermiteSplineProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        let layout = cx.state_layout(s);
        if !matches!(layout, Layout::Vec3 | Layout::Rigid3) {
            return Err(cx
                .error(format!("the mechanical state has template {}, but this constraint supports Vec3d and Rigid3d", layout.name()))
                .hint("attach the constraint to a Vec3d or Rigid3d MechanicalObject"));
        }
        let d = cx.data();
        let v3 = |r: settee_core::data_ref::DataRef<settee_core::data_ref::Vec3>| -> V3 {
            let v = d.get(r);
            [v[0], v[1], v[2]]
        };
        self.control = [v3(Self::X0), v3(Self::D_X0), v3(Self::X1), v3(Self::D_X1)];
        self.sx0_y = d.get(Self::SX0)[1];
        self.sx1_y = d.get(Self::SX1)[1];
        self.begin = d.get(Self::BEGIN_TIME);
        self.end = d.get(Self::END_TIME);
        let given = d.get(Self::INDICES).to_vec();
        self.indices = checked_indices(cx, given, s);
        self.state = Some(s);
        self.layout = Some(layout);
        Ok(())
    }
}

impl ProjectiveConstraint for HermiteSplineProjectiveConstraint {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        if self.acts_at(p.time) {
            zero_dofs(dx, &self.indices, self.layout.expect("initialised").deriv_size());
        }
    }
    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]) {
        if self.acts_at(p.time) {
            let value = self.velocity_at(p.time);
            self.write(v, self.layout.expect("initialised").deriv_size(), value);
        }
    }
    fn project_position(&mut self, p: &MechParams, x: &mut [f64]) {
        if self.acts_at(p.time) {
            let value = self.position_at(p.time);
            self.write(x, self.layout.expect("initialised").coord_size(), value);
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
        MechParams { dt: 0.01, time, gravity: [0.0; 3] }
    }

    /// The scene's spline X0 (0,0,0), dX0 (0,10,0), X1 (5,0,0), dX1 (0,5,0), SX0 (1,0),
    /// SX1 (0,2), over [0, 5]. The eased parameter is s(u) = 3u² − 2u³ + 2(u³ − u²) = u², so at
    /// T = 2.5 (u = ½, s = ¼) the point is X0·h00 + dX0·h10 + X1·h01 + dX1·h11 with
    /// h10 = 9/64, h01 = 10/64, h11 = −3/64: (25/32, 75/64, 0); the velocity uses the derivatives
    /// h00' = −9/8, h10' = 3/16, h01' = 9/8, h11' = −5/16: (45/8, 5/16, 0). At the ends: X0, X1.
    #[test]
    fn scene_spline_known_points() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 1 1")]);
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "HermiteSplineProjectiveConstraint",
            &[
                ("indices", "0"),
                ("BeginTime", "0"),
                ("EndTime", "5"),
                ("X0", "0 0 0"),
                ("dX0", "0 10 0"),
                ("X1", "5 0 0"),
                ("dX1", "0 5 0"),
                ("SX0", "1 0"),
                ("SX1", "0 2"),
            ],
        );
        init_root(&mut s, &f).unwrap();
        let pc = s.get_mut::<HermiteSplineProjectiveConstraint>(c).unwrap();
        let mut x = vec![9.0; 6];
        pc.project_position(&params(2.5), &mut x);
        assert_eq!(x, [25.0 / 32.0, 75.0 / 64.0, 0.0, 9.0, 9.0, 9.0]);
        let mut v = vec![9.0; 6];
        pc.project_velocity(&params(2.5), &mut v);
        assert_eq!(v, [45.0 / 8.0, 5.0 / 16.0, 0.0, 9.0, 9.0, 9.0]);
        assert_eq!(pc.position_at(0.0), [0.0; 3]);
        assert_eq!(pc.position_at(5.0), [5.0, 0.0, 0.0]);
        assert_eq!(pc.velocity_at(0.0), [0.0, 10.0, 0.0]);
        let mut dx = vec![1.0; 6];
        pc.project_response(&params(5.0), &mut dx);
        assert_eq!(dx, [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        let mut dx = vec![1.0; 6];
        pc.project_response(&params(5.01), &mut dx);
        assert_eq!(dx, [1.0; 6]);
    }
}
