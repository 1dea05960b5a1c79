//! `FixedRotationProjectiveConstraint`: prevents Rigid3 DOFs from turning about the chosen world
//! axes, keeping the rotation about those axes they had at init.
//!
//! The position projection works on each DOF's orientation `Q` and its initial orientation
//! `Q₀`: for each fixed axis in the order x, y, z, the twist about the axis (the quaternion
//! whose vector part is the projection of the vector part on the axis, normalised; the identity
//! when it vanishes) is removed from what is left of `Q` (`Q ← Q·twist⁻¹`, normalised) and the
//! twist of `Q₀` is kept aside (`keep ← twist₀·keep`, `Q₀` loses it likewise). The orientation
//! becomes `Q·keep`. Velocities and increments are left free (SOFA's class only projects
//! positions).

use settee_core::component::ProjectiveConstraint;
use settee_core::types::{quat_mul, quat_normalize, Quat};
use settee_core::{component, Component, InitCtx, Layout, MechParams, SimResult, StateId, VecId};

/// SOFA's `Quat::inverse`: the conjugate divided by the norm.
fn inverse(q: Quat) -> Quat {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if n == 0.0 {
        return q;
    }
    let n = 1.0 / n;
    [-q[0] * n, -q[1] * n, -q[2] * n, q[3] * n]
}

/// Splits `q` into its twist about the unit `axis` and the swing `q·twist⁻¹`, both normalised.
fn twist_swing(q: Quat, axis: [f64; 3]) -> (Quat, Quat) {
    let d = q[0] * axis[0] + q[1] * axis[1] + q[2] * axis[2];
    let mut twist = [d * axis[0], d * axis[1], d * axis[2], q[3]];
    if twist.iter().all(|&c| c == 0.0) {
        twist = [0.0, 0.0, 0.0, 1.0];
    }
    quat_normalize(&mut twist);
    let mut swing = quat_mul(q, inverse(twist));
    quat_normalize(&mut swing);
    (twist, swing)
}

/// Keeps Rigid3 DOFs from turning about chosen world axes.
#[component(
    module = "Sofa.Component.Constraint.Projective",
    description = "Prevents rotation around x or/and y or/and z axis",
    roles = [ProjectiveConstraint],
    templates = ["Rigid3d"],
    template_rule = FromState,
    data = {
        /// Prevent Rotation around X axis
        FixedXRotation: Bool = "false",
        /// Prevent Rotation around Y axis
        FixedYRotation: Bool = "false",
        /// Prevent Rotation around Z axis
        FixedZRotation: Bool = "false",
    },
)]
#[derive(Clone, Default)]
pub struct FixedRotationProjectiveConstraint {
    state: Option<StateId>,
    /// The fixed axes among x, y, z.
    fixed: [bool; 3],
    /// The orientation of each DOF at init.
    initial: Vec<Quat>,
}

impl FixedRotationProjectiveConstraint {
    /// The orientation `q` once the rotations about the fixed axes are brought back to those of
    /// `initial`.
    pub fn project_orientation(&self, q: Quat, initial: Quat) -> Quat {
        let (mut rest, mut rest0, mut keep) = (q, initial, [0.0, 0.0, 0.0, 1.0]);
        for (axis, _) in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]].into_iter().zip(self.fixed).filter(|(_, f)| *f) {
            rest = twist_swing(rest, axis).1;
            let (twist0, swing0) = twist_swing(rest0, axis);
            rest0 = swing0;
            keep = quat_mul(twist0, keep);
        }
        quat_mul(rest, keep)
    }
}

impl Component for FixedRotationProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        if cx.state_layout(s) != Layout::Rigid3 {
            return Err(cx
                .error(format!("the mechanical state has template {}, but this constraint supports Rigid3d", cx.state_layout(s).name()))
                .hint("attach the constraint to a Rigid3d MechanicalObject"));
        }
        let d = cx.data();
        self.fixed = [d.get(Self::FIXED_X_ROTATION), d.get(Self::FIXED_Y_ROTATION), d.get(Self::FIXED_Z_ROTATION)];
        self.initial = cx.read_vec(s, VecId::POSITION).chunks_exact(7).map(|c| [c[3], c[4], c[5], c[6]]).collect();
        self.state = Some(s);
        Ok(())
    }
}

impl ProjectiveConstraint for FixedRotationProjectiveConstraint {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }
    fn project_response(&mut self, _p: &MechParams, _dx: &mut [f64]) {}
    fn project_velocity(&mut self, _p: &MechParams, _v: &mut [f64]) {}
    fn project_position(&mut self, _p: &MechParams, x: &mut [f64]) {
        for (xi, &q0) in x.chunks_exact_mut(7).zip(&self.initial) {
            let q = self.project_orientation([xi[3], xi[4], xi[5], xi[6]], q0);
            xi[3..7].copy_from_slice(&q);
        }
    }
    fn projected_rows(&self, _p: &MechParams, _ds: usize, _out: &mut Vec<usize>) {}
}

#[cfg(test)]
mod tests {
    use settee_core::simulation::init_root;
    use settee_core::testing::add;
    use settee_core::types::{quat_from_euler, quat_rotate};
    use settee_core::{Factory, Scene};

    use super::*;

    fn factory() -> Factory {
        settee_statecontainer::factory_with(&[crate::register])
    }

    fn about(axis: [f64; 3], angle: f64) -> Quat {
        let (s, c) = (angle * 0.5).sin_cos();
        [axis[0] * s, axis[1] * s, axis[2] * s, c]
    }

    /// Z fixed, DOF starting at 0.3 rad about z: an orientation `rz(0.7)·rx(0.4)` (z turn
    /// applied after the x turn) comes back to `rz(0.3)·rx(0.4)`-like: its z twist is 0.3, i.e. it
    /// is `swing·rz(0.3)` where `swing = q·twist⁻¹`; a pure z turn comes back to the initial one;
    /// the result is a unit quaternion; a free-axes constraint changes nothing.
    #[test]
    fn z_twist_is_brought_back_to_the_initial_one() {
        let f = factory();
        let mut s = Scene::new("root");
        let q0 = about([0.0, 0.0, 1.0], 0.3);
        let pos = format!("0 0 0 {} {} {} {}", q0[0], q0[1], q0[2], q0[3]);
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", pos.as_str())]);
        let c = add(&mut s, &f, Scene::ROOT, "FixedRotationProjectiveConstraint", &[("FixedZRotation", "1")]);
        init_root(&mut s, &f).unwrap();
        let pc = s.get_mut::<FixedRotationProjectiveConstraint>(c).unwrap();

        let mut x = vec![1.0, 2.0, 3.0];
        let qz = about([0.0, 0.0, 1.0], 1.1);
        x.extend(qz);
        pc.project_position(&MechParams { dt: 0.1, time: 0.0, gravity: [0.0; 3] }, &mut x);
        assert_eq!(x[..3], [1.0, 2.0, 3.0]);
        for k in 0..4 {
            assert!((x[3 + k] - q0[k]).abs() < 1e-15, "{x:?}");
        }

        // A turn about x only has no z twist: the result is swing·rz(0.3), the x turn then the
        // initial z turn; it maps the x axis like rz(0.3).
        let qx = about([1.0, 0.0, 0.0], 0.4);
        let r = pc.project_orientation(qx, q0);
        let expected = quat_mul(qx, q0);
        for k in 0..4 {
            assert!((r[k] - expected[k]).abs() < 1e-15, "{r:?} vs {expected:?}");
        }
        let ex = quat_rotate(r, [1.0, 0.0, 0.0]);
        assert!((ex[0] - 0.3f64.cos()).abs() < 1e-15 && (ex[1] - 0.3f64.sin() * 0.4f64.cos()).abs() < 1e-15, "{ex:?}");

        // A general orientation: unit result whose z twist is the initial one.
        let q = quat_from_euler([0.2, -0.5, 0.9]);
        let r = pc.project_orientation(q, q0);
        let n: f64 = r.iter().map(|c| c * c).sum();
        assert!((n - 1.0).abs() < 1e-14);
        let (twist, _) = twist_swing(r, [0.0, 0.0, 1.0]);
        let (twist_q0, _) = twist_swing(q0, [0.0, 0.0, 1.0]);
        for k in 0..4 {
            assert!((twist[k] - twist_q0[k]).abs() < 1e-14, "{twist:?} vs {twist_q0:?}");
        }

        pc.fixed = [false; 3];
        assert_eq!(pc.project_orientation(q, q0), q);
    }
}
