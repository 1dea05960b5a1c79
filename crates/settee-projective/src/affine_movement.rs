//! `AffineMovementProjectiveConstraint`: moves a set of DOFs from their positions to an affine
//! image of them (`R·x0 + t`) between two times, linearly in time.
//!
//! The positions `x0` of the DOFs and their targets `xf` are captured at the first position
//! projection. At root time `T` with `begin < T ≤ end` the position is
//! `((xf − x0)·T + (x0·end − xf·begin)) / (end − begin)`; after `end` it is `xf`; up to `begin`
//! it is left alone. Increments and velocities of the DOFs are zeroed at every time, and the
//! assembled matrix clears their rows and columns (SOFA's `projectMatrix`, without time test).
//! `meshIndices` only serves SOFA's `getFinalPositions` (a query for other components) and is
//! kept as Data.

use settee_core::component::ProjectiveConstraint;
use settee_core::role::Topology;
use settee_core::{component, Component, InitCtx, Layout, MechParams, SimResult, StateId};

use crate::subspace::{active, checked_indices, dof_rows, zero_dofs};
use crate::ProjectiveBase;

/// The DOFs moved from `x0` to `xf` between two times: what the affine and the patch-test
/// constraints share.
#[derive(Clone, Default)]
pub(crate) struct MovementToTargets {
    pub state: Option<StateId>,
    pub dim: usize,
    pub indices: Vec<usize>,
    pub begin: f64,
    pub end: f64,
    pub end_time: f64,
    /// Positions of the DOFs at the first projection (the state's size; other entries zero).
    pub x0: Vec<f64>,
    /// Their targets, same layout.
    pub xf: Vec<f64>,
}

impl MovementToTargets {
    /// Reads the common Data of a Vec3 state and keeps the valid indices.
    pub(crate) fn init(&mut self, cx: &mut InitCtx, begin: f64, end: f64, given: Vec<usize>) -> SimResult {
        let s = cx.require_state()?;
        let layout = cx.state_layout(s);
        if layout != Layout::Vec3 {
            return Err(cx
                .error(format!("the mechanical state has template {}, but this constraint supports Vec3d", layout.name()))
                .hint("attach the constraint to a Vec3d MechanicalObject"));
        }
        self.state = Some(s);
        self.dim = 3;
        self.begin = begin;
        self.end = end;
        self.end_time = cx.data().get(ProjectiveBase::END_TIME);
        self.indices = checked_indices(cx, given, s);
        self.x0.clear();
        self.xf.clear();
        Ok(())
    }

    /// Captures `x0` (when not done yet) and tells whether `xf` has to be computed.
    pub(crate) fn capture(&mut self, x: &[f64]) -> bool {
        if self.x0.is_empty() {
            self.x0 = vec![0.0; x.len()];
            for &i in &self.indices {
                let r = i * self.dim..(i + 1) * self.dim;
                if let Some(src) = x.get(r.clone()) {
                    self.x0[r].copy_from_slice(src);
                }
            }
        }
        self.xf.is_empty()
    }

    /// The interpolated (or final) positions of the DOFs at root time `t`.
    pub(crate) fn project(&self, t: f64, x: &mut [f64]) {
        let (begin, end) = (self.begin, self.end);
        let total = end - begin;
        let d = self.dim;
        if t > begin && t <= end && total > 0.0 {
            for &i in &self.indices {
                for c in i * d..(i + 1) * d {
                    if let (Some(xi), Some(&a), Some(&b)) = (x.get_mut(c), self.x0.get(c), self.xf.get(c)) {
                        *xi = ((b - a) * t + (a * end - b * begin)) / total;
                    }
                }
            }
        } else if t > end {
            for &i in &self.indices {
                for c in i * d..(i + 1) * d {
                    if let (Some(xi), Some(&b)) = (x.get_mut(c), self.xf.get(c)) {
                        *xi = b;
                    }
                }
            }
        }
    }
}

impl ProjectiveConstraint for MovementToTargets {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        if active(self.end_time, p) {
            zero_dofs(dx, &self.indices, self.dim);
        }
    }
    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]) {
        if active(self.end_time, p) {
            zero_dofs(v, &self.indices, self.dim);
        }
    }
    fn project_position(&mut self, _p: &MechParams, _x: &mut [f64]) {
        unreachable!("each constraint computes its own targets")
    }
    fn projected_rows(&self, p: &MechParams, ds: usize, out: &mut Vec<usize>) {
        if active(self.end_time, p) {
            dof_rows(&self.indices, ds, out);
        }
    }
}

/// Moves DOFs by a rigid (affine) transform, linearly in time.
#[component(
    module = "Sofa.Component.Constraint.Projective",
    description = "Constraint the movement by a rigid transform.",
    roles = [ProjectiveConstraint],
    templates = ["Vec3d"],
    template_rule = FromState,
    inherit = [ProjectiveBase],
    data = {
        /// Indices of the mesh
        meshIndices: Indices,
        /// Indices of the constrained points
        indices: Indices,
        /// Begin time of the bilinear constraint
        beginConstraintTime: Real = "0",
        /// End time of the bilinear constraint
        endConstraintTime: Real = "20",
        // SOFA's default matrix is zero: without `rotation` every point goes to `translation`.
        /// rotation applied to border points (3×3 matrix, row by row; `[a b c,d e f,g h i]` is read too)
        rotation: Fixed(9) = "0 0 0 0 0 0 0 0 0",
        /// quaternion applied to border points (Rigid3d states only)
        quaternion: Fixed(4) = "0 0 0 1",
        /// translation applied to border points
        translation: Fixed(3) as Vec3 = "0 0 0",
        /// draw constrained points (rendering only)
        drawConstrainedPoints: Bool = "false",
    },
    links = {
        /// link to the topology container
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct AffineMovementProjectiveConstraint {
    movement: MovementToTargets,
    /// Row-major.
    rotation: [f64; 9],
    translation: [f64; 3],
}

impl AffineMovementProjectiveConstraint {
    /// The constrained DOFs (indices beyond the state removed).
    pub fn indices(&self) -> &[usize] {
        &self.movement.indices
    }

    /// `R·x0 + t` for every DOF.
    fn targets(&self) -> Vec<f64> {
        let m = &self.movement;
        let mut xf = vec![0.0; m.x0.len()];
        let r = &self.rotation;
        for &i in &m.indices {
            let Some(p) = m.x0.get(i * 3..i * 3 + 3) else { continue };
            for row in 0..3 {
                xf[i * 3 + row] = r[row * 3] * p[0] + r[row * 3 + 1] * p[1] + r[row * 3 + 2] * p[2] + self.translation[row];
            }
        }
        xf
    }
}

impl Component for AffineMovementProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let begin = d.get(Self::BEGIN_CONSTRAINT_TIME);
        let end = d.get(Self::END_CONSTRAINT_TIME);
        let given = d.get(Self::INDICES).to_vec();
        self.rotation.copy_from_slice(d.get(Self::ROTATION));
        self.translation = d.get(Self::TRANSLATION);
        self.movement.init(cx, begin, end, given)
    }
}

impl ProjectiveConstraint for AffineMovementProjectiveConstraint {
    fn state(&self) -> StateId {
        self.movement.state()
    }
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        self.movement.project_response(p, dx);
    }
    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]) {
        self.movement.project_velocity(p, v);
    }
    fn project_position(&mut self, p: &MechParams, x: &mut [f64]) {
        if !active(self.movement.end_time, p) {
            return;
        }
        if self.movement.capture(x) {
            self.movement.xf = self.targets();
        }
        self.movement.project(p.time, x);
    }
    fn projected_rows(&self, p: &MechParams, ds: usize, out: &mut Vec<usize>) {
        self.movement.projected_rows(p, ds, out);
    }
}

#[cfg(test)]
mod tests {
    use settee_animationloop::default_step;
    use settee_core::simulation::init_root;
    use settee_core::testing::add;
    use settee_core::{Factory, Scene, VecId};

    use super::*;

    fn factory() -> Factory {
        settee_statecontainer::factory_with(&[settee_engine::register, crate::register])
    }

    fn params(time: f64) -> MechParams {
        MechParams { dt: 0.1, time, gravity: [0.0; 3] }
    }

    /// A quarter turn about z plus (1, 0, 0), from T = 1 to T = 3, on DOF 1 at (2, 0, 0): the
    /// target is (1, 2, 0). At T = 2 (half-way) the DOF is at (1.5, 1, 0); at T = 1 it is left
    /// where it is; after T = 3 it stays at the target. DOF 0 is free; increments and velocity
    /// of DOF 1 are zeroed whatever the time.
    #[test]
    fn dofs_move_linearly_to_the_transformed_positions() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "5 5 5  2 0 0")]);
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "AffineMovementConstraint",
            &[
                ("indices", "1 7"),
                ("beginConstraintTime", "1"),
                ("endConstraintTime", "3"),
                ("rotation", "[0 -1 0,1 0 0,0 0 1]"),
                ("translation", "1 0 0"),
            ],
        );
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(c).class.name, "AffineMovementProjectiveConstraint");
        let pc = s.get_mut::<AffineMovementProjectiveConstraint>(c).unwrap();
        assert_eq!(pc.indices(), [1]);
        let mut x = vec![5.0, 5.0, 5.0, 2.0, 0.0, 0.0];
        pc.project_position(&params(1.0), &mut x);
        assert_eq!(x, [5.0, 5.0, 5.0, 2.0, 0.0, 0.0]);
        x[3] = 40.0; // the captured start stays (2, 0, 0)
        pc.project_position(&params(2.0), &mut x);
        assert_eq!(x, [5.0, 5.0, 5.0, 1.5, 1.0, 0.0]);
        pc.project_position(&params(3.5), &mut x);
        assert_eq!(x, [5.0, 5.0, 5.0, 1.0, 2.0, 0.0]);
        let mut v = vec![1.0; 6];
        pc.project_velocity(&params(0.0), &mut v);
        assert_eq!(v, [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
        let mut dx = vec![1.0; 6];
        pc.project_response(&params(10.0), &mut dx);
        assert_eq!(dx, [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
        let mut rows = Vec::new();
        pc.projected_rows(&params(0.0), 3, &mut rows);
        assert_eq!(rows, [3, 4, 5]);
    }

    /// Through the animation loop (dt 0.5, no solver): positions are projected at the time a
    /// step starts, so after 3 steps of the default window 0 → 20 the DOF has done 1/20 of its
    /// way from x0 = (1, 1, 0) to R·x0 + t = (0.1, 1.4, 0), with the scene's rotation
    /// `[0.7 -0.7 0,0.7 0.7 0,0 0 1]` and t = (0.1, 0, 0): it is at (0.955, 1.02, 0).
    #[test]
    fn scene_rotation_and_default_window() {
        let f = factory();
        let mut s = Scene::new("root");
        let ms = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "1 1 0")]);
        add(
            &mut s,
            &f,
            Scene::ROOT,
            "AffineMovementProjectiveConstraint",
            &[("indices", "0"), ("translation", "0.1 0 0"), ("rotation", "[0.7 -0.7 0,0.7 0.7 0,0 0 1]")],
        );
        init_root(&mut s, &f).unwrap();
        let mut times = Vec::new();
        for _ in 0..3 {
            default_step(&mut s, 0.5).unwrap();
            times.push(s.root().context.time);
        }
        let x = s.store.get(s.state_of(ms).unwrap()).read(VecId::POSITION).to_vec();
        assert_eq!(times, [0.5, 1.0, 1.5]);
        let t = times[1];
        let expect = |a: f64, b: f64| ((b - a) * t + (a * 20.0 - b * 0.0)) / 20.0;
        let target = [0.7 - 0.7 + 0.1, 0.7 + 0.7, 0.0];
        for (k, (a, b)) in [1.0, 1.0, 0.0].into_iter().zip(target).enumerate() {
            assert!((x[k] - expect(a, b)).abs() < 1e-15, "component {k}: {} vs {}", x[k], expect(a, b));
        }
        assert!((x[0] - 0.955).abs() < 1e-15 && (x[1] - 1.02).abs() < 1e-15, "{x:?}");
    }
}
