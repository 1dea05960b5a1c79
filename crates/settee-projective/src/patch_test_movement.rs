//! `PatchTestMovementProjectiveConstraint`: moves the border DOFs of a grid patch to targets
//! interpolated (bilinearly, or trilinearly for a 3D patch) from movements given at its corners,
//! linearly in time, as [`crate::affine_movement`] does for an affine target.
//!
//! The corners are searched at init among `constrainedPoints` with SOFA's comparisons (kept as
//! they are, including their mix of `or` tests and the `else` between the last two 3D corners);
//! they are 4, or 8 when the points do not all share their z. The target of a DOF is its
//! position at the first projection plus the interpolated movement, with the barycentric factors
//! `α = |x − c0.x| / |c1.x − c0.x|`, `β = |y − c0.y| / |c3.y − c0.y|`, `γ = |z − c0.z| / |c4.z − c0.z|`.

use settee_core::component::ProjectiveConstraint;
use settee_core::role::Topology;
use settee_core::{component, Component, InitCtx, MechParams, SimResult, StateId};

use crate::affine_movement::MovementToTargets;
use crate::subspace::active;
use crate::ProjectiveBase;

type V3 = [f64; 3];

/// SOFA's corner search over the constrained points: 4 corners, plus 4 more when the points are
/// not in one z plane.
pub fn find_corners(points: &[V3]) -> Vec<V3> {
    let Some(&first) = points.first() else { return Vec::new() };
    let in_3d = points.iter().any(|p| p[2] != first[2]);
    let mut c = [first; 8];
    for p in points {
        if p[0] < c[0][0] || p[1] < c[0][1] || p[2] < c[0][2] {
            c[0] = *p;
        }
        if p[0] > c[2][0] || p[1] > c[2][1] || p[2] < c[2][2] {
            c[2] = *p;
        }
        if p[1] < c[1][1] || p[0] > c[1][0] || p[2] < c[1][2] {
            c[1] = *p;
        }
        if p[0] < c[3][0] || p[1] > c[3][1] || p[2] < c[3][2] {
            c[3] = *p;
        }
        // SOFA compares these two with the z of corners 0 and 2, not their own.
        if in_3d && (p[0] < c[4][0] || p[1] < c[4][1] || p[2] > c[0][2]) {
            c[4] = *p;
        }
        if in_3d && (p[0] > c[6][0] || p[1] > c[6][1] || p[2] > c[2][2]) {
            c[6] = *p;
        }
        if in_3d && (p[1] < c[5][1] || p[0] > c[5][0] || p[2] > c[5][2]) {
            c[5] = *p;
        } else if in_3d && (p[0] < c[7][0] || p[1] > c[7][1] || p[2] > c[7][2]) {
            c[7] = *p;
        }
    }
    c[..if in_3d { 8 } else { 4 }].to_vec()
}

/// `m0·(1−α)·(1−β) + m1·α·(1−β) + m2·α·β + m3·(1−α)·β`, in SOFA's order.
fn bilinear(m: &[V3], a: f64, b: f64) -> V3 {
    std::array::from_fn(|k| m[0][k] * (1.0 - a) * (1.0 - b) + m[1][k] * a * (1.0 - b) + m[2][k] * a * b + m[3][k] * (1.0 - a) * b)
}

/// The movement of a point at `p` interpolated from the corner movements; `None` when there are
/// neither 4 nor 8 corners (SOFA then keeps the previous point's movement).
pub fn interpolated_movement(corners: &[V3], movements: &[V3], p: V3) -> Option<V3> {
    if corners.len() != 4 && corners.len() != 8 {
        return None;
    }
    let (c0, c1, c3) = (corners[0], corners[1], corners[3]);
    let a = (p[0] - c0[0]).abs() / (c1[0] - c0[0]).abs();
    let b = (p[1] - c0[1]).abs() / (c3[1] - c0[1]).abs();
    let low = bilinear(movements, a, b);
    if corners.len() == 4 {
        return Some(low);
    }
    let g = (p[2] - c0[2]).abs() / (corners[4][2] - c0[2]).abs();
    let high = bilinear(&movements[4..], a, b);
    Some(std::array::from_fn(|k| low[k] * (1.0 - g) + high[k] * g))
}

/// Moves the border of a patch by movements interpolated from its corners, linearly in time.
#[component(
    module = "Sofa.Component.Constraint.Projective",
    description = "bilinear constraint",
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
        /// Coordinates of the constrained points
        constrainedPoints: Coords,
        /// movements of the corners of the grid
        cornerMovements: Derivs,
        /// corner points for computing constraint (the corners found are appended at init)
        cornerPoints: Coords,
        /// draw constrained points (rendering only)
        drawConstrainedPoints: Bool = "false",
    },
    links = {
        /// link to the topology container
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct PatchTestMovementProjectiveConstraint {
    movement: MovementToTargets,
    corners: Vec<V3>,
    /// One per corner (missing ones are zero).
    corner_movements: Vec<V3>,
}

fn triples(v: &[f64]) -> Vec<V3> {
    v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

impl PatchTestMovementProjectiveConstraint {
    /// The constrained DOFs (indices beyond the state removed).
    pub fn indices(&self) -> &[usize] {
        &self.movement.indices
    }

    /// The corners: those given in `cornerPoints`, then those found.
    pub fn corners(&self) -> &[V3] {
        &self.corners
    }

    /// `x0` plus the interpolated movement of each DOF.
    fn targets(&self) -> Vec<f64> {
        let m = &self.movement;
        let mut xf = vec![0.0; m.x0.len()];
        // As in SOFA, a DOF without interpolation reuses the previous DOF's movement.
        let mut d = [0.0; 3];
        for &i in &m.indices {
            let Some(p) = m.x0.get(i * 3..i * 3 + 3) else { continue };
            if let Some(moved) = interpolated_movement(&self.corners, &self.corner_movements, [p[0], p[1], p[2]]) {
                d = moved;
            }
            for k in 0..3 {
                xf[i * 3 + k] = p[k] + d[k];
            }
        }
        xf
    }
}

impl Component for PatchTestMovementProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let begin = d.get(Self::BEGIN_CONSTRAINT_TIME);
        let end = d.get(Self::END_CONSTRAINT_TIME);
        let given = d.get(Self::INDICES).to_vec();
        let points = triples(d.get(Self::CONSTRAINED_POINTS));
        let mut corners = triples(d.get(Self::CORNER_POINTS));
        let mut movements = triples(d.get(Self::CORNER_MOVEMENTS));
        self.movement.init(cx, begin, end, given)?;
        corners.extend(find_corners(&points));
        if corners.len() != 4 && corners.len() != 8 {
            cx.warn(format!("{} corner points found (4 or 8 are needed): the constrained points do not move", corners.len()));
        } else if movements.len() < corners.len() {
            // SOFA reads past the end of its list here; a missing movement is taken as zero.
            cx.warn(format!("{} corner points but {} cornerMovements: the missing movements are zero", corners.len(), movements.len()));
            movements.resize(corners.len(), [0.0; 3]);
        }
        cx.data_mut().put(Self::CORNER_POINTS, corners.concat());
        self.corners = corners;
        self.corner_movements = movements;
        Ok(())
    }
}

impl ProjectiveConstraint for PatchTestMovementProjectiveConstraint {
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
#[allow(clippy::disallowed_methods)] // tests check Data by name
mod tests {
    use settee_core::simulation::init_root;
    use settee_core::testing::add;
    use settee_core::{Factory, Scene};

    use super::*;

    fn factory() -> Factory {
        settee_statecontainer::factory_with(&[settee_topology::register, settee_engine::register, crate::register])
    }

    fn params(time: f64) -> MechParams {
        MechParams { dt: 0.1, time, gravity: [0.0; 3] }
    }

    /// The border of a 3×3 grid of the unit square: corners (0,0), (1,0), (1,1), (0,1) in that
    /// order. The border point (1, 0.5) moves by the mean of the movements of corners 1 and 2,
    /// (0.1, −0.1)·½ + (0.1, 0.1)·½ = (0.1, 0); the point (0.5, 0) by the mean of corners 0 and
    /// 1, (−0.2, −0.1)·½ + (0.1, −0.1)·½ = (−0.05, −0.1). Half-way through the default window
    /// (T = 10) they have done half of it.
    #[test]
    fn border_points_follow_the_bilinear_corner_movements() {
        let f = factory();
        let mut s = Scene::new("root");
        add(
            &mut s,
            &f,
            Scene::ROOT,
            "RegularGridTopology",
            &[("name", "grid"), ("nx", "3"), ("ny", "3"), ("nz", "1"), ("min", "0 0 0"), ("max", "1 1 0")],
        );
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "@grid.position")]);
        add(
            &mut s,
            &f,
            Scene::ROOT,
            "PairBoxROI",
            &[("name", "pair"), ("inclusiveBox", "-0.1 -0.1 0  1.1 1.1 0"), ("includedBox", "0.1 0.1 0 0.9 0.9 0")],
        );
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "PatchTestMovementConstraint",
            &[
                ("indices", "@pair.indices"),
                ("constrainedPoints", "@pair.pointsInROI"),
                ("cornerMovements", "-0.2 -0.1 0  0.1 -0.1 0  0.1 0.1 0  -0.1 0.3 0"),
            ],
        );
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(c).data.reals("cornerPoints"), [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
        let pc = s.get_mut::<PatchTestMovementProjectiveConstraint>(c).unwrap();
        assert_eq!(pc.indices(), [0, 1, 2, 3, 5, 6, 7, 8]);
        let mut x = vec![
            0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.5, 0.5, 0.0, 1.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.0,
        ];
        pc.project_position(&params(10.0), &mut x);
        let close = |a: &[f64], b: [f64; 3]| a.iter().zip(b).all(|(p, q)| (p - q).abs() < 1e-15);
        assert!(close(&x[15..18], [1.05, 0.5, 0.0]), "{:?}", &x[15..18]);
        assert!(close(&x[3..6], [0.475, -0.05, 0.0]), "{:?}", &x[3..6]);
        // Corner 3 (0, 1) moves by its own movement: half of (−0.1, 0.3).
        assert!(close(&x[18..21], [-0.05, 1.15, 0.0]), "{:?}", &x[18..21]);
        // The center is free.
        assert_eq!(x[12..15], [0.5, 0.5, 0.0]);
        pc.project_position(&params(25.0), &mut x);
        assert!(close(&x[15..18], [1.1, 0.5, 0.0]));
    }

    /// A 3D patch (the corners of the unit cube): 8 corners. The first four are the bottom
    /// square; SOFA's test for corner 4 compares z with corner 0's, so it ends on the last point
    /// above it, (0, 1, 1). The trilinear movement at (1, 1, 0.5) is the mean of the movements
    /// of corners 2 and 6.
    #[test]
    fn a_3d_patch_has_eight_corners() {
        let cube: Vec<V3> = vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [1.0, 1.0, 1.0],
            [0.0, 1.0, 1.0],
        ];
        let corners = find_corners(&cube);
        assert_eq!(corners.len(), 8);
        assert_eq!(corners[..4], cube[..4]);
        assert_eq!(corners[4], [0.0, 1.0, 1.0]);
        let mut m = vec![[0.0; 3]; 8];
        m[2] = [0.2, 0.0, 0.0];
        m[6] = [0.0, 0.4, 0.0];
        let d = interpolated_movement(&corners, &m, [1.0, 1.0, 0.5]).unwrap();
        assert_eq!(d, [0.1, 0.2, 0.0]);
        assert_eq!(interpolated_movement(&corners[..3], &m, [1.0, 1.0, 0.5]), None);
    }
}
