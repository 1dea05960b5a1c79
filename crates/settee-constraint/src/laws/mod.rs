//! Constraint laws (SOFA's Sofa.Component.Constraint.Lagrangian.Model, lagrangian-constraints
//! spec §5).
//!
//! Every law writes its Jacobian rows from the start-of-step positions (`position`), its
//! violation from the vectors of the constraint parameters (the free state in a step), and one
//! resolution per block of rows, in SOFA's row order and with SOFA's arithmetic order.
//!
//! Pair laws act on `object1` and `object2`; when both are the same state the build and
//! violation vectors have a single entry, and the law's entries of both objects go into that
//! state's rows (SOFA writes both through the same matrix then).

use std::collections::HashMap;

use settee_core::scratch::{smallvec, SmallVec};
use settee_core::types::{quat_mul, quat_normalize, quat_rotate, Quat};
use settee_core::{data_group, ConstraintRows, InitCtx, Layout, Scene, SimError, SimResult, StateId, VecId};

pub mod bilateral;
pub mod fixed;
pub mod sliding;
pub mod stopper;
pub mod uniform;
pub mod unilateral;

pub use bilateral::BilateralLagrangianConstraint;
pub use fixed::FixedLagrangianConstraint;
pub use sliding::SlidingLagrangianConstraint;
pub use stopper::{StopperLagrangianConstraint, StopperResolution};
pub use uniform::UniformLagrangianConstraint;
pub use unilateral::{ContactBlockInfo, UnilateralContact, UnilateralLagrangianConstraint};

/// Registers the classes of this module.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<FixedLagrangianConstraint>();
    f.add::<BilateralLagrangianConstraint>();
    f.add::<UniformLagrangianConstraint>();
    f.add::<SlidingLagrangianConstraint>();
    f.add::<UnilateralLagrangianConstraint>();
    f.add::<StopperLagrangianConstraint>();
}

/// Data of every law (SOFA's `BaseConstraintSet` and `(Pair)LagrangianConstraint`).
#[data_group(data = {
    /// ID of the group containing this constraint (solver filtering)
    group: Int = "0",
    /// index of the constraint's first row (set by the solver at each build)
    constraintIndex: Int = "0",
    /// the constraint stops acting after the given value (-1: never); not consulted by the
    /// constraint visitors
    endTime: Real = "-1",
})]
pub struct LawData;

/// The two states of a pair law: `object1`/`object2` when set, else the node's state (SOFA's
/// default link `@./`).
pub(crate) fn pair_states(cx: &InitCtx) -> SimResult<(StateId, StateId)> {
    let pick = |name: &str| -> SimResult<StateId> {
        let c = match cx.link_targets(name).first() {
            Some(c) => *c,
            None => cx.mstate().ok_or_else(|| {
                cx.error(format!("no mechanical state for {name}"))
                    .hint(format!("set {name}=\"@path/to/state\" or add a MechanicalObject to this node"))
            })?,
        };
        cx.scene.state_of(c).ok_or_else(|| cx.error(format!("{name} is not a mechanical state")))
    };
    Ok((pick("object1")?, pick("object2")?))
}

/// [`pair_states`], each checked to be of the law's `layout` (`object1`/`object2` named in the
/// error otherwise).
pub(crate) fn pair_states_of(cx: &InitCtx, layout: Layout) -> SimResult<(StateId, StateId)> {
    let (s1, s2) = pair_states(cx)?;
    for (name, s) in [("object1", s1), ("object2", s2)] {
        let l = cx.state_layout(s);
        if l != layout {
            return Err(cx.error(format!("{name} is {} but the constraint's template is {}", l.name(), layout.name())));
        }
    }
    Ok((s1, s2))
}

/// The state a single-state law was lent (its first one).
pub(crate) fn lent<'a>(vectors: &[&'a [f64]]) -> SimResult<&'a [f64]> {
    vectors.first().copied().ok_or_else(|| SimError::new("the constraint's state was not lent"))
}

/// The node's state of a single-state law, checked to be of the law's `layout`.
pub(crate) fn state_of(cx: &InitCtx, layout: Layout) -> SimResult<StateId> {
    let s = cx.require_state()?;
    let l = cx.state_layout(s);
    if l != layout {
        return Err(cx.error(format!("the state is {} but the constraint's template is {}", l.name(), layout.name())));
    }
    Ok(s)
}

/// The layout of a law with Vec3 and Rigid3 templates: Rigid3 when asked, else Vec3.
pub(crate) fn vec3_or_rigid3(layout: Option<Layout>) -> Layout {
    match layout {
        Some(Layout::Rigid3) => Layout::Rigid3,
        _ => Layout::Vec3,
    }
}

/// Refills `rest` with the state's rest positions (its positions when it has none), when the
/// state exists.
pub(crate) fn read_rest(scene: &Scene, state: Option<StateId>, rest: &mut Vec<f64>) {
    if let Some(s) = state.filter(|s| scene.store.contains(*s)) {
        let st = scene.store.get(s);
        let id = if st.is_set(VecId::REST_POSITION) { VecId::REST_POSITION } else { VecId::POSITION };
        rest.clear();
        rest.extend_from_slice(st.read(id));
    }
}

/// Index of the second state's vectors in a build or violation io (0 when both are the same).
pub(crate) fn second(s1: StateId, s2: StateId) -> usize {
    if s1 == s2 {
        0
    } else {
        1
    }
}

/// Jacobian entries written by one law with SOFA's semantics (`addCol` accumulates, `setCol`
/// overwrites the entry of the same row and DOF), then appended to the states' rows. Only a law
/// writing twice to one entry (a pair law on one state, both points on the same DOF) can tell
/// the two apart. A law keeps its writer from one step to the next: the entries' blocks live in
/// one list, and once warm a build allocates nothing.
#[derive(Clone, Default)]
pub(crate) struct RowWriter {
    /// io state, row, DOF, and the block's range in `blocks`.
    entries: Vec<(usize, usize, usize, std::ops::Range<usize>)>,
    blocks: Vec<f64>,
    at: HashMap<(usize, usize, usize), usize>,
}

impl RowWriter {
    /// `row[dof] += block` in the rows of io state `k`.
    pub fn add(&mut self, k: usize, row: usize, dof: usize, block: &[f64]) {
        match self.at.get(&(k, row, dof)) {
            Some(&i) => {
                for (e, b) in self.blocks[self.entries[i].3.clone()].iter_mut().zip(block) {
                    *e += b;
                }
            }
            None => self.push(k, row, dof, block),
        }
    }

    /// `row[dof] = block` in the rows of io state `k`.
    pub fn set(&mut self, k: usize, row: usize, dof: usize, block: &[f64]) {
        match self.at.get(&(k, row, dof)) {
            Some(&i) => self.blocks[self.entries[i].3.clone()].copy_from_slice(block),
            None => self.push(k, row, dof, block),
        }
    }

    /// One unit row per derivative component (`ds` of them) of each DOF of `dofs`, in io state 0:
    /// the `i`-th DOF's rows start at `first_row + i·ds`.
    pub fn set_unit_rows(&mut self, first_row: usize, ds: usize, dofs: impl IntoIterator<Item = usize>) {
        let mut e: SmallVec<[f64; 8]> = smallvec![0.0; ds];
        for (i, dof) in dofs.into_iter().enumerate() {
            let cid = first_row + i * ds;
            for j in 0..ds {
                e.fill(0.0);
                e[j] = 1.0;
                self.set(0, cid + j, dof, &e);
            }
        }
    }

    fn push(&mut self, k: usize, row: usize, dof: usize, block: &[f64]) {
        self.at.insert((k, row, dof), self.entries.len());
        let start = self.blocks.len();
        self.blocks.extend_from_slice(block);
        self.entries.push((k, row, dof, start..self.blocks.len()));
    }

    /// Appends the entries to the rows (each entry is new in its row: the law's rows are new),
    /// and empties the writer for the next build.
    pub fn flush(&mut self, rows: &mut [&mut ConstraintRows]) -> SimResult {
        let r = self.entries.iter().try_for_each(|(k, row, dof, range)| {
            let block = &self.blocks[range.clone()];
            let r = rows.get_mut(*k).ok_or_else(|| SimError::new("the constraint's states were not lent"))?;
            if r.deriv_size != block.len() {
                return Err(SimError::new(format!(
                    "the constraint writes {}-real entries on a state with {}-real derivatives",
                    block.len(),
                    r.deriv_size
                )));
            }
            r.add(*row, *dof, block);
            Ok(())
        });
        self.entries.clear();
        self.blocks.clear();
        self.at.clear();
        r
    }
}

/// Checks that every DOF index is below `n` (the state's size).
pub(crate) fn check_indices(what: &str, indices: &[usize], n: usize) -> SimResult {
    match indices.iter().find(|&&i| i >= n) {
        Some(i) => Err(SimError::new(format!("{what} {i} is beyond the {n} DOFs of its state"))),
        None => Ok(()),
    }
}

/// The `dof`-th coordinate of `size` reals of a flat vector, or an error.
pub(crate) fn coord(x: &[f64], dof: usize, size: usize) -> SimResult<&[f64]> {
    x.get(dof * size..dof * size + size).ok_or_else(|| SimError::new(format!("DOF {dof} is beyond the {} DOFs of its state", x.len() / size.max(1))))
}

// Small vector algebra in SOFA's operation order (`sofa::type::Vec`).

pub(crate) type V3 = [f64; 3];

pub(crate) fn v3(x: &[f64]) -> V3 {
    [x[0], x[1], x[2]]
}

pub(crate) fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(crate) fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

pub(crate) fn neg(a: V3) -> V3 {
    [-a[0], -a[1], -a[2]]
}

/// `(a0·b0 + a1·b1) + a2·b2`.
pub(crate) fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

pub(crate) fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}

/// SOFA's `normalized()`: divides by the norm when it exceeds the machine epsilon, else keeps
/// the vector.
pub(crate) fn normalized(a: V3) -> V3 {
    let n = norm(a);
    if n > f64::EPSILON {
        [a[0] / n, a[1] / n, a[2] / n]
    } else {
        a
    }
}

// Quaternions (`x y z w`) as `sofa::type::Quat` computes them.

pub(crate) fn quat(x: &[f64]) -> Quat {
    [x[0], x[1], x[2], x[3]]
}

/// `Quat::inverse`: the conjugate over the norm (zero for a zero quaternion).
pub(crate) fn quat_inverse(q: Quat) -> Quat {
    let norm = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if norm != 0.0 {
        let inv = 1.0 / norm;
        [-q[0] * inv, -q[1] * inv, -q[2] * inv, q[3] * inv]
    } else {
        [0.0; 4]
    }
}

/// `Quat::quatDiff(a, b)` = `b⁻¹·a`, `a` first flipped to the hemisphere of `b`.
pub(crate) fn quat_diff(mut a: Quat, b: Quat) -> Quat {
    if a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] < 0.0 {
        a = [-a[0], -a[1], -a[2], -a[3]];
    }
    quat_mul(quat_inverse(b), a)
}

/// `Quat::quatToRotationVector`: axis times angle of the normalised quaternion, `w ≥ 0`.
pub(crate) fn quat_to_rotation_vector(mut q: Quat) -> V3 {
    quat_normalize(&mut q);
    if q[3] < 0.0 {
        q = q.map(|c| -c); // SOFA multiplies by −1: the same bits
    }
    let (sin_half, angle) = if q[3] > 0.999 {
        let s = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
        (s, 2.0 * s.asin())
    } else {
        let half = q[3].acos();
        (half.sin(), 2.0 * half)
    };
    if sin_half < f64::EPSILON {
        [0.0; 3]
    } else {
        // `Vec3(q) / sin_half_theta * angle`.
        [q[0] / sin_half * angle, q[1] / sin_half * angle, q[2] / sin_half * angle]
    }
}

/// `Quat::angularDisplacement(a, b)`: the rotation vector of `quatDiff(a, b)`.
pub(crate) fn angular_displacement(a: Quat, b: Quat) -> V3 {
    quat_to_rotation_vector(quat_diff(a, b))
}

/// `Quat::toEulerVector`: roll, pitch, yaw of the normalised quaternion.
pub(crate) fn to_euler_vector(mut q: Quat) -> V3 {
    quat_normalize(&mut q);
    // `std::max(-1, std::min(1, v))`.
    let v = 2.0 * (q[3] * q[1] - q[2] * q[0]);
    let m = if v < 1.0 { v } else { 1.0 };
    let y = if -1.0 < m { m } else { -1.0 };
    [
        (2.0 * (q[3] * q[0] + q[1] * q[2])).atan2(1.0 - 2.0 * (q[0] * q[0] + q[1] * q[1])),
        y.asin(),
        (2.0 * (q[3] * q[2] + q[0] * q[1])).atan2(1.0 - 2.0 * (q[1] * q[1] + q[2] * q[2])),
    ]
}

/// Rotates `v` by the orientation `q` (`Quat::rotate`).
pub(crate) fn rotate(q: Quat, v: V3) -> V3 {
    quat_rotate(q, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_overwrites_and_add_accumulates_on_one_entry() {
        let mut w = RowWriter::default();
        w.add(0, 4, 1, &[-1.0, 0.0, 0.0]);
        w.add(0, 4, 1, &[1.0, 0.0, 0.0]);
        w.set(0, 5, 1, &[0.0, -1.0, 0.0]);
        w.set(0, 5, 1, &[0.0, 1.0, 0.0]);
        let mut r = ConstraintRows::new(3);
        w.flush(&mut [&mut r]).unwrap();
        type Rows = Vec<(usize, Vec<(usize, Vec<f64>)>)>;
        let rows: Rows = r.rows().map(|(i, e)| (i, e.map(|(d, b)| (d, b.to_vec())).collect())).collect();
        assert_eq!(rows, vec![(4, vec![(1, vec![0.0, 0.0, 0.0])]), (5, vec![(1, vec![0.0, 1.0, 0.0])])]);
    }

    #[test]
    fn quaternion_helpers_match_known_rotations() {
        let h = std::f64::consts::FRAC_PI_4;
        // 90° about z.
        let qz = [0.0, 0.0, h.sin(), h.cos()];
        let rv = quat_to_rotation_vector(qz);
        assert!((rv[2] - std::f64::consts::FRAC_PI_2).abs() < 1e-15 && rv[0] == 0.0 && rv[1] == 0.0);
        let e = to_euler_vector(qz);
        assert!((e[2] - std::f64::consts::FRAC_PI_2).abs() < 1e-15 && e[0].abs() < 1e-15 && e[1].abs() < 1e-15);
        // quatDiff(qz, identity) is qz; quatDiff(−qz, qz) flips first and gives identity.
        assert_eq!(quat_diff(qz, [0.0, 0.0, 0.0, 1.0]), qz);
        let d = quat_diff(qz.map(|c| -c), qz);
        assert!((d[3] - 1.0).abs() < 1e-15 && d[2].abs() < 1e-15);
        assert_eq!(quat_inverse([0.0; 4]), [0.0; 4]);
        // A small rotation takes the asin branch.
        let a: f64 = 0.01;
        let rv = quat_to_rotation_vector([(a / 2.0).sin(), 0.0, 0.0, (a / 2.0).cos()]);
        assert!((rv[0] - a).abs() < 1e-15);
    }
}
