//! `LineProjectiveConstraint` and `PlaneProjectiveConstraint`: keep a set of DOFs on a line or a
//! plane, plus helpers shared with [`crate::point`].
//!
//! Both project with a constant per-DOF block `B` (unit axis `n`): `B = n·nᵀ` onto the line
//! through `origin` along `direction`, `B = I − n·nᵀ` onto the plane through `origin` with
//! `normal`. Increments and velocities become `B·v` on the constrained DOFs (as SOFA, a
//! block-diagonal Jacobian built once at init, identity blocks elsewhere); positions are moved to
//! their orthogonal projection. The assembled matrix becomes `B̃·A·B̃ + (I − B̃)` through
//! [`ProjectiveConstraint::projection_blocks`].
//!
//! SOFA builds that Jacobian by walking the DOFs and the *sorted* index list together: an index
//! listed twice stops the walk from matching any later index, so those DOFs keep identity
//! blocks. This is reproduced ([`jacobian_flags`]); `projectPosition` uses the list itself.

use settee_core::component::ProjectiveConstraint;
use settee_core::role::Topology;
use settee_core::topology_change::{ElementKind, IndexSubset, TopologyChange};
use settee_core::{component, Component, InitCtx, Layout, MechParams, SimResult, StateId, VecId};

use crate::ProjectiveBase;

// ----- helpers ------------------------------------------------------------------------------------

/// Projective constraints act while `endTime` is negative or not reached.
pub(crate) fn active(end_time: f64, p: &MechParams) -> bool {
    end_time < 0.0 || p.time < end_time
}

/// The state of a `Vec2d`/`Vec3d` constraint and its number of reals per DOF.
pub(crate) fn vector_layout(cx: &InitCtx) -> SimResult<(StateId, usize)> {
    let s = cx.require_state()?;
    match cx.state_layout(s) {
        l @ (Layout::Vec2 | Layout::Vec3) => Ok((s, l.deriv_size())),
        l => Err(cx
            .error(format!("the mechanical state has template {}, but this constraint supports Vec2d and Vec3d", l.name()))
            .hint("attach the constraint to a Vec3d (or Vec2d) MechanicalObject")),
    }
}

/// The indices below the state's size; the others are removed (every occurrence) with a warning.
pub(crate) fn checked_indices(cx: &mut InitCtx, given: Vec<usize>, s: StateId) -> Vec<usize> {
    let n = cx.state_size(s);
    let (valid, out): (Vec<usize>, Vec<usize>) = given.into_iter().partition(|&i| i < n);
    if !out.is_empty() {
        cx.warn(format!("indices {out:?} are not valid for a state of {n} DOFs and are removed"));
    }
    valid
}

/// Zeroes the `ds` components of each listed DOF of `v` (indices beyond `v` are skipped).
pub(crate) fn zero_dofs(v: &mut [f64], indices: &[usize], ds: usize) {
    for &i in indices {
        if let Some(e) = v.get_mut(i * ds..(i + 1) * ds) {
            e.fill(0.0);
        }
    }
}

/// Appends the `ds` rows of each listed DOF, DOF by DOF.
pub(crate) fn dof_rows(indices: &[usize], ds: usize, out: &mut Vec<usize>) {
    for &i in indices {
        out.extend((0..ds).map(|c| i * ds + c));
    }
}

/// Point indices following point changes as SOFA's `TopologySubsetIndices` (a removed point
/// leaves the list, the point moved into its slot is renamed), from a state of `nb_points`
/// points. Returns the new indices and the state's new size, or an error when the changes do
/// not leave as many points as the state `s` will have.
pub(crate) fn follow_points(
    cx: &InitCtx,
    s: StateId,
    indices: Vec<usize>,
    nb_points: usize,
    changes: &[TopologyChange],
) -> SimResult<(Vec<usize>, usize)> {
    let mut subset = IndexSubset { indices };
    let len = subset.apply(ElementKind::Point, nb_points, changes).map_err(|e| cx.error(format!("cannot follow the point changes: {e}")))?;
    let n = settee_core::topology_change::state_size_after(changes, cx.state_size(s));
    if len != n {
        return Err(cx.error(format!("the point changes leave {len} points but the mechanical state has {n}")));
    }
    Ok((subset.indices, n))
}

/// Which of the `n` DOFs get the projection block in SOFA's Jacobian: the DOFs and the sorted
/// indices are walked together, a DOF matching the current index takes the block and advances
/// the index cursor (so a repeated index blocks every later match).
pub fn jacobian_flags(indices: &[usize], n: usize) -> Vec<bool> {
    let mut sorted = indices.to_vec();
    sorted.sort_unstable();
    let mut flags = vec![false; n];
    let mut it = sorted.iter().peekable();
    for (i, f) in flags.iter_mut().enumerate() {
        if it.peek() == Some(&&i) {
            *f = true;
            it.next();
        }
    }
    flags
}

/// `Σ_j a_j·b_j` left to right.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut t = a[0] * b[0];
    for k in 1..a.len() {
        t += a[k] * b[k];
    }
    t
}

// ----- the two constraints ------------------------------------------------------------------------

/// Line, plane, or a line through each DOF's initial position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subspace {
    Line,
    Plane,
    /// `DirectionProjectiveConstraint`: each DOF stays on the line along `direction` through
    /// its position at init.
    Direction,
}

/// `LineProjectiveConstraint`, `PlaneProjectiveConstraint` or `DirectionProjectiveConstraint`.
#[component(
    roles = [ProjectiveConstraint],
    templates = ["Vec3d", "Vec2d"],
    default_template = "Vec3d",
    template_rule = FromState,
    inherit = [ProjectiveBase],
    links = {
        /// link to the topology container (followed under topological changes)
        topology: Topology,
    },
    class(
        name = "LineProjectiveConstraint", module = "Sofa.Component.Constraint.Projective",
        description = "Project particles to a line",
        create = |_| SubspaceProjectiveConstraint::new(Subspace::Line),
        data = {
            /// Indices of the fixed points
            indices: Indices = "0",
            /// 0 -> point based rendering, >0 -> radius of spheres (rendering only)
            drawSize: Real = "0",
            /// A point in the line
            origin: Coord,
            /// Direction of the line
            direction: Coord,
        },
    ),
    class(
        name = "PlaneProjectiveConstraint", module = "Sofa.Component.Constraint.Projective",
        description = "Project particles to a plane",
        create = |_| SubspaceProjectiveConstraint::new(Subspace::Plane),
        data = {
            /// Indices of the fixed points
            indices: Indices = "0",
            /// A point in the plane
            origin: Coord,
            /// Normal vector to the plane
            normal: Coord,
            /// Size of the rendered particles (0 -> point based rendering, >0 -> radius of spheres; rendering only)
            drawSize: Real = "0",
        },
    ),
    class(
        name = "DirectionProjectiveConstraint", module = "Sofa.Component.Constraint.Projective",
        description = "Project particles to a line",
        create = |_| SubspaceProjectiveConstraint::new(Subspace::Direction),
        data = {
            /// Indices of the fixed points
            indices: Indices = "0",
            /// 0 -> point based rendering, >0 -> radius of spheres (rendering only)
            drawSize: Real = "0",
            /// Direction of the line
            direction: Coord,
        },
    ),
)]
#[derive(Clone)]
pub struct SubspaceProjectiveConstraint {
    kind: Subspace,
    state: Option<StateId>,
    dim: usize,
    indices: Vec<usize>,
    /// DOFs whose Jacobian block is the projection (see [`jacobian_flags`]).
    flags: Vec<bool>,
    origin: Vec<f64>,
    /// Direction: the origin of each listed DOF's line (its position at init), `dim` reals per
    /// entry of `indices`.
    origins: Vec<f64>,
    /// Unit direction (line) or normal (plane).
    axis: Vec<f64>,
    /// The projection block, row-major `dim × dim`.
    block: Vec<f64>,
    end_time: f64,
}

impl SubspaceProjectiveConstraint {
    pub fn new(kind: Subspace) -> SubspaceProjectiveConstraint {
        SubspaceProjectiveConstraint {
            kind,
            state: None,
            dim: 3,
            indices: Vec::new(),
            flags: Vec::new(),
            origin: Vec::new(),
            origins: Vec::new(),
            axis: Vec::new(),
            block: Vec::new(),
            end_time: -1.0,
        }
    }

    pub fn kind(&self) -> Subspace {
        self.kind
    }
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }
    /// The unit axis: direction of the line or normal of the plane.
    pub fn axis(&self) -> &[f64] {
        &self.axis
    }
    /// The projection block `n·nᵀ` (line) or `I − n·nᵀ` (plane), row-major.
    pub fn block(&self) -> &[f64] {
        &self.block
    }

    /// Normalises the axis as SOFA does (`n *= 1/|n|`); a zero direction becomes the x axis for
    /// a line, a zero normal stays zero for a plane (the projection is then the identity), and a
    /// zero direction of `DirectionProjectiveConstraint` stays zero (its DOFs are then fixed).
    fn unit_axis(kind: Subspace, mut n: Vec<f64>) -> Vec<f64> {
        let norm = dot(&n, &n).sqrt();
        if norm == 0.0 {
            if kind == Subspace::Line {
                n[0] = 1.0;
            }
        } else {
            let inv = 1.0 / norm;
            for x in &mut n {
                *x *= inv;
            }
        }
        n
    }

    fn projection_block(kind: Subspace, n: &[f64]) -> Vec<f64> {
        let d = n.len();
        let mut b = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                b[i * d + j] = match kind {
                    Subspace::Line | Subspace::Direction => n[i] * n[j],
                    Subspace::Plane if i == j => 1.0 - n[i] * n[j],
                    Subspace::Plane => -n[i] * n[j],
                };
            }
        }
        b
    }

    /// `v ← B·v` on the flagged DOFs (row by row, sums left to right).
    fn apply_block(&self, v: &mut [f64]) {
        let d = self.dim;
        let mut tmp = [0.0; 3];
        for (e, _) in v.chunks_exact_mut(d).zip(&self.flags).filter(|(_, f)| **f) {
            for (i, t) in tmp.iter_mut().enumerate().take(d) {
                *t = dot(&self.block[i * d..(i + 1) * d], e);
            }
            e.copy_from_slice(&tmp[..d]);
        }
    }
}

impl Component for SubspaceProjectiveConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s, dim) = vector_layout(cx)?;
        self.state = Some(s);
        self.dim = dim;
        let d = cx.data();
        self.end_time = d.get(ProjectiveBase::END_TIME);
        let axis_ref = if self.kind == Subspace::Plane { Self::NORMAL } else { Self::DIRECTION };
        let mut origin = if self.kind == Subspace::Direction { Vec::new() } else { d.get(Self::ORIGIN).to_vec() };
        origin.resize(dim, 0.0);
        let mut axis = d.get(axis_ref).to_vec();
        axis.resize(dim, 0.0);
        let given = d.get(Self::INDICES).to_vec();
        self.origin = origin;
        self.axis = Self::unit_axis(self.kind, axis);
        self.block = Self::projection_block(self.kind, &self.axis);
        self.indices = checked_indices(cx, given, s);
        self.flags = jacobian_flags(&self.indices, cx.state_size(s));
        if self.kind == Subspace::Direction {
            let x = cx.read_vec(s, VecId::POSITION);
            self.origins = self.indices.iter().flat_map(|&i| x[i * dim..(i + 1) * dim].to_vec()).collect();
        }
        Ok(())
    }
}

impl ProjectiveConstraint for SubspaceProjectiveConstraint {
    fn state(&self) -> StateId {
        self.state.expect("initialised")
    }
    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        if active(self.end_time, p) {
            self.apply_block(dx);
        }
    }
    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]) {
        self.project_response(p, v);
    }
    /// Line: `x ← o + n·((x − o)·n)`; plane: `x ← x − n·((x − o)·n)`; direction: as a line, with
    /// the DOF's own origin.
    fn project_position(&mut self, p: &MechParams, x: &mut [f64]) {
        if !active(self.end_time, p) {
            return;
        }
        let d = self.dim;
        let n = &self.axis;
        let mut rel = [0.0; 3];
        for (j, &i) in self.indices.iter().enumerate() {
            let o = match self.kind {
                Subspace::Direction => &self.origins[j * d..(j + 1) * d],
                _ => &self.origin[..],
            };
            let Some(e) = x.get_mut(i * d..(i + 1) * d) else { continue };
            for k in 0..d {
                rel[k] = e[k] - o[k];
            }
            let s = dot(&rel[..d], n);
            for k in 0..d {
                e[k] = match self.kind {
                    Subspace::Line | Subspace::Direction => o[k] + n[k] * s,
                    Subspace::Plane => e[k] - n[k] * s,
                };
            }
        }
    }
    fn projected_rows(&self, _p: &MechParams, _ds: usize, _out: &mut Vec<usize>) {}
    fn projection_blocks(&self, p: &MechParams, ds: usize, out: &mut Vec<(usize, Vec<f64>)>) {
        if ds != self.dim || !active(self.end_time, p) {
            return;
        }
        out.extend(self.flags.iter().enumerate().filter(|(_, f)| **f).map(|(i, _)| (i, self.block.clone())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random numbers in [-1, 1].
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        }
    }

    fn constraint(kind: Subspace, dim: usize, n: usize, indices: &[usize], origin: &[f64], axis: &[f64]) -> SubspaceProjectiveConstraint {
        let axis = SubspaceProjectiveConstraint::unit_axis(kind, axis.to_vec());
        SubspaceProjectiveConstraint {
            kind,
            state: Some(StateId::first_in_slot(0)),
            dim,
            indices: indices.to_vec(),
            flags: jacobian_flags(indices, n),
            origin: origin.to_vec(),
            origins: Vec::new(),
            block: SubspaceProjectiveConstraint::projection_block(kind, &axis),
            axis,
            end_time: -1.0,
        }
    }

    fn params(time: f64) -> MechParams {
        MechParams { dt: 0.1, time, gravity: [0.0; 3] }
    }

    /// Property: for random axes (2D and 3D, any length), both blocks are idempotent (`P·P = P`),
    /// symmetric, and `project_response` applied twice equals applied once.
    #[test]
    fn projections_are_idempotent() {
        let mut rng = Lcg(42);
        for case in 0..2000 {
            let dim = 2 + case % 2;
            let scale = 10f64.powf(3.0 * rng.next());
            let axis: Vec<f64> = (0..dim).map(|_| rng.next() * scale).collect();
            for kind in [Subspace::Line, Subspace::Plane] {
                let c = constraint(kind, dim, 3, &[0, 2], &vec![0.0; dim], &axis);
                let p = &c.block;
                for i in 0..dim {
                    for j in 0..dim {
                        let pp: f64 = (0..dim).map(|k| p[i * dim + k] * p[k * dim + j]).sum();
                        assert!((pp - p[i * dim + j]).abs() < 1e-14, "{kind:?} {axis:?}: P·P ≠ P at ({i}, {j})");
                        assert_eq!(p[i * dim + j], p[j * dim + i]);
                    }
                }
                let mut c = c;
                let mut v: Vec<f64> = (0..3 * dim).map(|_| rng.next()).collect();
                let orig = v.clone();
                c.project_response(&params(0.0), &mut v);
                assert_eq!(&v[dim..2 * dim], &orig[dim..2 * dim], "unconstrained DOF changed");
                let once = v.clone();
                c.project_response(&params(0.0), &mut v);
                for (a, b) in v.iter().zip(&once) {
                    assert!((a - b).abs() < 1e-14);
                }
            }
        }
    }

    /// Line along (1, 2, 2)/3 through (1, 0, 0): increments keep their component along the line,
    /// positions go to their orthogonal projection onto the line.
    #[test]
    fn line_projects_onto_the_line() {
        let mut c = constraint(Subspace::Line, 3, 2, &[1], &[1.0, 0.0, 0.0], &[1.0, 2.0, 2.0]);
        let n = [1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0];
        for (a, b) in c.axis().iter().zip(&n) {
            assert!((a - b).abs() < 1e-16);
        }
        let mut v = vec![5.0, 6.0, 7.0, 3.0, 0.0, 0.0];
        c.project_response(&params(0.0), &mut v);
        assert_eq!(&v[..3], &[5.0, 6.0, 7.0]);
        for (k, nk) in n.iter().enumerate() {
            assert!((v[3 + k] - nk * 1.0).abs() < 1e-15, "{v:?}");
        }
        // x = (1,0,0) + (3, 3, 0): along the line by (3·1 + 3·2)/3 = 3 → (2, 2, 2).
        let mut x = vec![9.0, 9.0, 9.0, 4.0, 3.0, 0.0];
        c.project_position(&params(0.0), &mut x);
        assert_eq!(&x[..3], &[9.0, 9.0, 9.0]);
        for (a, b) in x[3..].iter().zip([2.0, 2.0, 2.0]) {
            assert!((a - b).abs() < 1e-15, "{x:?}");
        }
        // A zero direction is SOFA's x axis.
        let c = constraint(Subspace::Line, 3, 1, &[0], &[0.0; 3], &[0.0; 3]);
        assert_eq!(c.axis(), &[1.0, 0.0, 0.0]);
    }

    /// Plane x + y = 1 (normal (1, 1, 0)/√2): the normal component is removed from increments and
    /// velocities, positions land on the plane; after endTime nothing is projected.
    #[test]
    fn plane_projects_onto_the_plane() {
        let mut c = constraint(Subspace::Plane, 3, 1, &[0], &[1.0, 0.0, 0.0], &[1.0, 1.0, 0.0]);
        let mut v = vec![2.0, 0.0, 5.0];
        c.project_velocity(&params(0.0), &mut v);
        for (a, b) in v.iter().zip([1.0, -1.0, 5.0]) {
            assert!((a - b).abs() < 1e-15, "{v:?}");
        }
        let mut x = vec![3.0, 2.0, -1.0];
        c.project_position(&params(0.0), &mut x);
        for (a, b) in x.iter().zip([1.0, 0.0, -1.0]) {
            assert!((a - b).abs() < 1e-15, "{x:?}");
        }
        // Zero normal: identity.
        let z = constraint(Subspace::Plane, 3, 1, &[0], &[0.0; 3], &[0.0; 3]);
        assert_eq!(z.block(), &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        c.end_time = 1.0;
        let mut v = vec![2.0, 0.0, 5.0];
        c.project_response(&params(1.0), &mut v);
        assert_eq!(v, [2.0, 0.0, 5.0]);
        let mut blocks = Vec::new();
        c.projection_blocks(&params(1.0), 3, &mut blocks);
        assert!(blocks.is_empty());
        c.projection_blocks(&params(0.5), 3, &mut blocks);
        assert_eq!(blocks, vec![(0, c.block.clone())]);
    }

    /// SOFA's Jacobian walk: sorted indices matched in one pass; a repeated index blocks the
    /// later ones.
    #[test]
    fn jacobian_flags_follow_the_sorted_walk() {
        assert_eq!(jacobian_flags(&[3, 1], 5), [false, true, false, true, false]);
        assert_eq!(jacobian_flags(&[1, 1, 3], 5), [false, true, false, false, false]);
        assert_eq!(jacobian_flags(&[], 2), [false, false]);
    }

    /// DirectionProjectiveConstraint (direction (0.5, 0.5, 0), normalised): each DOF stays on
    /// the diagonal line through its own initial position. DOF 1 at (0, 1, 0) moved to
    /// (2, 0, 5) goes back to (0, 1, 0) + n·((2, −1, 5)·n) = (0.5, 1.5, 0); an increment
    /// (1, 0, 0) becomes (0.5, 0.5, 0); DOF 0 is untouched.
    #[test]
    fn direction_lines_go_through_each_initial_position() {
        use settee_core::simulation::init_root;
        use settee_core::testing::add;
        use settee_core::Scene;
        let f = settee_statecontainer::factory_with(&[crate::register]);
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  0 1 0")]);
        let c = add(&mut s, &f, Scene::ROOT, "ProjectDirectionConstraint", &[("indices", "1"), ("direction", "0.5 0.5 0")]);
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(c).class.name, "DirectionProjectiveConstraint");
        let pc = s.get_mut::<SubspaceProjectiveConstraint>(c).unwrap();
        assert_eq!(pc.kind(), Subspace::Direction);
        let p = MechParams { dt: 0.1, time: 0.0, gravity: [0.0; 3] };
        let mut x = vec![7.0, 7.0, 7.0, 2.0, 0.0, 5.0];
        pc.project_position(&p, &mut x);
        let expected = [7.0, 7.0, 7.0, 0.5, 1.5, 0.0];
        for (k, (a, b)) in x.iter().zip(expected).enumerate() {
            assert!((a - b).abs() < 1e-15, "{k}: {a} vs {b}");
        }
        let mut dx = vec![1.0, 0.0, 0.0, 1.0, 0.0, 0.0];
        pc.project_response(&p, &mut dx);
        assert!(dx[..3] == [1.0, 0.0, 0.0] && (dx[3] - 0.5).abs() < 1e-15 && (dx[4] - 0.5).abs() < 1e-15 && dx[5] == 0.0, "{dx:?}");
        let mut blocks = Vec::new();
        pc.projection_blocks(&p, 3, &mut blocks);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].0, 1);
    }
}
