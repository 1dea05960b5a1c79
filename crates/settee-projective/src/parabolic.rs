//! `ParabolicProjectiveConstraint`: moves DOFs along the parabola through three points `P1`,
//! `P2`, `P3`, from `P1` at `BeginTime` to `P3` at `EndTime`.
//!
//! The parabola is written in its own frame: origin `P1`, x along `P1P3`, z along
//! `P1P3 × P1P2`, y completing it; with `P2 = (x2, y2, 0)` and `P3 = (x3, 0, 0)` there it is
//! `y = (−y2·X² + x3·y2·X) / (x3·x2 − x2²)`. While `BeginTime ≤ T ≤ EndTime` the position is
//! the point at abscissa `x3·(T − BeginTime)/(EndTime − BeginTime)`, the velocity the finite
//! difference between that point and the one at `T + dt`, divided by `dt` (as SOFA), and the
//! increments are zeroed. A Rigid3 DOF gets only its center and linear velocity set (SOFA assigns
//! a 3-vector to a rigid coordinate); its orientation and angular velocity are untouched. No
//! matrix projection (SOFA's class has none).

use settee_core::component::ProjectiveConstraint;
use settee_core::role::Topology;
use settee_core::{component, Component, InitCtx, Layout, MechParams, SimResult, StateId};

use crate::subspace::{checked_indices, zero_dofs};

type V3 = [f64; 3];

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn unit(a: V3) -> V3 {
    let n = dot(a, a).sqrt();
    [a[0] / n, a[1] / n, a[2] / n]
}

/// Applies a parabolic trajectory to given points.
#[component(
    module = "Sofa.Component.Constraint.Projective",
    description = "Apply a parabolic trajectory to given points.",
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
        /// first point of the parabol
        P1: Fixed(3) as Vec3 = "0 0 0",
        /// second point of the parabol
        P2: Fixed(3) as Vec3 = "0 0 0",
        /// third point of the parabol
        P3: Fixed(3) as Vec3 = "0 0 0",
        /// Begin Time of the motion
        BeginTime: Real = "0",
        /// End Time of the motion
        EndTime: Real = "0",
    },
)]
#[derive(Clone, Default)]
pub struct ParabolicProjectiveConstraint {
    state: Option<StateId>,
    layout: Option<Layout>,
    indices: Vec<usize>,
    begin: f64,
    end: f64,
    p1: V3,
    /// The parabola's frame axes in world coordinates (x, y, z).
    axes: [V3; 3],
    /// `P2` and `P3` in the parabola's frame.
    loc_p2: V3,
    loc_p3: V3,
}

impl ParabolicProjectiveConstraint {
    /// The world point of the parabola at the relative time `r` (0 at P1, 1 at P3).
    pub fn point_at(&self, r: f64) -> V3 {
        let (x2, y2, x3) = (self.loc_p2[0], self.loc_p2[1], self.loc_p3[0]);
        let den = x3 * x2 - x2 * x2;
        let px = x3 * r;
        let py = (-y2 / den) * (px * px) + ((x3 * y2) / den) * px;
        let [ax, ay, _] = self.axes;
        std::array::from_fn(|c| self.p1[c] + ax[c] * px + ay[c] * py)
    }

    fn acts_at(&self, t: f64) -> bool {
        t >= self.begin && t <= self.end
    }

    fn relative(&self, t: f64) -> f64 {
        (t - self.begin) / (self.end - self.begin)
    }
}

impl Component for ParabolicProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        let layout = cx.state_layout(s);
        if !matches!(layout, Layout::Vec3 | Layout::Rigid3) {
            return Err(cx
                .error(format!("the mechanical state has template {}, but this constraint supports Vec3d and Rigid3d", layout.name()))
                .hint("attach the constraint to a Vec3d or Rigid3d MechanicalObject"));
        }
        let d = cx.data();
        let p = |r: settee_core::data_ref::DataRef<settee_core::data_ref::Vec3>| -> V3 {
            let v = d.get(r);
            [v[0], v[1], v[2]]
        };
        let (p1, p2, p3) = (p(Self::P1), p(Self::P2), p(Self::P3));
        self.begin = d.get(Self::BEGIN_TIME);
        self.end = d.get(Self::END_TIME);
        let given = d.get(Self::INDICES).to_vec();
        if p1 == p2 || p1 == p3 || p2 == p3 {
            return Err(cx.error("P1, P2 and P3 must be three distinct points to define a parabola"));
        }
        let (p1p2, p1p3) = (sub(p2, p1), sub(p3, p1));
        let az = cross(p1p3, p1p2);
        if dot(az, az) == 0.0 {
            return Err(cx.error("P1, P2 and P3 are aligned: they do not define a parabola"));
        }
        let ay = cross(az, p1p3);
        self.axes = [unit(p1p3), unit(ay), unit(az)];
        let local = |v: V3| -> V3 { std::array::from_fn(|k| dot(self.axes[k], v)) };
        self.loc_p2 = local(p1p2);
        self.loc_p3 = local(p1p3);
        self.p1 = p1;
        self.indices = checked_indices(cx, given, s);
        self.state = Some(s);
        self.layout = Some(layout);
        Ok(())
    }
}

impl ProjectiveConstraint for ParabolicProjectiveConstraint {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        if self.acts_at(p.time) {
            zero_dofs(dx, &self.indices, self.layout.expect("initialised").deriv_size());
        }
    }
    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]) {
        if !self.acts_at(p.time) {
            return;
        }
        let ds = self.layout.expect("initialised").deriv_size();
        let (a, b) = (self.point_at(self.relative(p.time)), self.point_at(self.relative(p.time + p.dt)));
        for &i in &self.indices {
            if let Some(vi) = v.get_mut(i * ds..i * ds + 3) {
                for c in 0..3 {
                    vi[c] = (b[c] - a[c]) / p.dt;
                }
            }
        }
    }
    fn project_position(&mut self, p: &MechParams, x: &mut [f64]) {
        if !self.acts_at(p.time) {
            return;
        }
        let cs = self.layout.expect("initialised").coord_size();
        let w = self.point_at(self.relative(p.time));
        for &i in &self.indices {
            if let Some(xi) = x.get_mut(i * cs..i * cs + 3) {
                xi.copy_from_slice(&w);
            }
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

    fn params(time: f64, dt: f64) -> MechParams {
        MechParams { dt, time, gravity: [0.0; 3] }
    }

    /// The scene's parabola P1 (1,0,0), P2 (5,3,1), P3 (7,6,−5) over [0.5, 1.5] on a Rigid3 DOF:
    /// it starts at P1, ends at P3 and passes through P2 (at the relative time x2/x3); the
    /// trajectory stays in the plane of the three points. The velocity is the forward difference
    /// over dt; the orientation is untouched; outside the window nothing is projected.
    #[test]
    fn rigid_center_follows_the_parabola_through_the_three_points() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", "0 0 0 0 0 0.6 0.8")]);
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "ParabolicProjectiveConstraint",
            &[("indices", "0"), ("P1", "1 0 0"), ("P2", "5 3 1"), ("P3", "7 6 -5"), ("BeginTime", "0.5"), ("EndTime", "1.5")],
        );
        init_root(&mut s, &f).unwrap();
        let pc = s.get_mut::<ParabolicProjectiveConstraint>(c).unwrap();
        let close = |a: V3, b: V3| (0..3).all(|k| (a[k] - b[k]).abs() < 1e-12);
        let mut x = vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.6, 0.8];
        pc.project_position(&params(0.5, 0.01), &mut x);
        assert!(close([x[0], x[1], x[2]], [1.0, 0.0, 0.0]), "{x:?}");
        assert_eq!(x[3..], [0.0, 0.0, 0.6, 0.8]);
        pc.project_position(&params(1.5, 0.01), &mut x);
        assert!(close([x[0], x[1], x[2]], [7.0, 6.0, -5.0]), "{x:?}");
        // P2 is reached at the relative time x2/x3 (abscissas along P1P3).
        let (d12, d13) = (sub([5.0, 3.0, 1.0], [1.0, 0.0, 0.0]), sub([7.0, 6.0, -5.0], [1.0, 0.0, 0.0]));
        let r2 = dot(d12, d13) / dot(d13, d13);
        assert!(close(pc.point_at(r2), [5.0, 3.0, 1.0]), "{:?}", pc.point_at(r2));
        // In the plane of the three points.
        let n = cross(d13, d12);
        let q = pc.point_at(0.3);
        assert!(dot(n, sub(q, [1.0, 0.0, 0.0])).abs() < 1e-12);
        let mut v = vec![9.0; 6];
        pc.project_velocity(&params(1.0, 0.01), &mut v);
        let (a, b) = (pc.point_at(0.5), pc.point_at(0.51));
        assert_eq!(v[..3], [(b[0] - a[0]) / 0.01, (b[1] - a[1]) / 0.01, (b[2] - a[2]) / 0.01]);
        assert_eq!(v[3..], [9.0; 3]);
        let mut dx = vec![1.0; 6];
        pc.project_response(&params(1.0, 0.01), &mut dx);
        assert_eq!(dx, [0.0; 6]);
        let mut dx = vec![1.0; 6];
        pc.project_response(&params(1.6, 0.01), &mut dx);
        assert_eq!(dx, [1.0; 6]);
        let mut y = vec![3.0; 7];
        pc.project_position(&params(0.4, 0.01), &mut y);
        assert_eq!(y, [3.0; 7]);
    }

    /// Aligned points give an error.
    #[test]
    fn aligned_points_are_an_error() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0")]);
        add(&mut s, &f, Scene::ROOT, "ParabolicProjectiveConstraint", &[("P1", "0 0 0"), ("P2", "1 1 1"), ("P3", "2 2 2")]);
        let e = init_root(&mut s, &f).unwrap_err();
        assert!(e.diagnostic().message.contains("aligned"), "{e:?}");
    }
}
