//! `LinearMovementProjectiveConstraint`: imposes a piecewise-linear motion, given at key times,
//! on a set of DOFs (mechanics spec §6.4).
//!
//! At every call the key times around the context time `T` are searched again: the constraint
//! acts only while `keyTimes[0] ≤ T` and a key time strictly after `T` exists. While it acts,
//! increments of the DOFs are zeroed, their velocity is the slope `(nextM − prevM)/(nextT − prevT)`
//! and their position the interpolated movement added to the position captured at the first
//! position projection (or the movement itself with `relativeMovements="false"`). Rigid3 angular
//! movements are Euler angles: the orientation is the captured one times the `slerp2` of the
//! quaternions of the two surrounding key rotations. The assembled matrix always clears the rows
//! and columns of the DOFs, whatever the time (SOFA's `applyConstraint` has no time test).
//!
//! Constraint Jacobian rows are projected as responses (SOFA's `projectJacobianMatrix` clears the
//! column blocks of the DOFs under the same condition as `projectResponse`).

use settee_core::component::ProjectiveConstraint;
use settee_core::role::Topology;
use settee_core::types::{quat_from_euler, quat_mul, Quat};
use settee_core::{component, Component, InitCtx, Layout, MechParams, SimResult, StateId};

use crate::ProjectiveBase;

use crate::subspace::{active, checked_indices, dof_rows, zero_dofs};

/// Key values (movements or velocities) read from a Data list: one `ds`-sized entry per key
/// time, an empty list meaning SOFA's default single zero entry.
pub(crate) fn key_values(cx: &InitCtx, given: &[f64], ds: usize, n_keys: usize, what: &str) -> SimResult<Vec<f64>> {
    let mut v = given.to_vec();
    if v.is_empty() {
        v = vec![0.0; ds];
    }
    let n = v.len() / ds;
    if n < n_keys {
        return Err(cx
            .error(format!("{n_keys} key times but {n} {what}: every key time needs one"))
            .hint(format!("give {n_keys} {what} of {ds} numbers each")));
    }
    Ok(v)
}

/// Checks that the state has one of the layouts the class registers.
pub(crate) fn supported_layout(cx: &InitCtx, s: StateId) -> SimResult<Layout> {
    match cx.state_layout(s) {
        Layout::Rigid2 => Err(cx.error("Rigid2d states are not supported by this constraint (as in SOFA)").hint("use a Vec or Rigid3d state")),
        l => Ok(l),
    }
}

/// The Data both keyed constraints (LinearMovement, LinearVelocity) start with.
#[settee_core::data_group(data = {
    /// Indices of the constrained points
    indices: Indices = "0",
    /// key times for the movements
    keyTimes: Reals = "0",
})]
pub struct KeyData;

/// What both keyed constraints (LinearMovement, LinearVelocity) keep: the constrained DOFs, the
/// key times with one value (movement or velocity) per key, and the keys around the current time
/// (kept between calls, as in SOFA).
#[derive(Clone, Default)]
pub(crate) struct KeyedDofs {
    pub state: Option<StateId>,
    pub layout: Option<Layout>,
    pub indices: Vec<usize>,
    pub key_times: Vec<f64>,
    /// One derivative per key time, flat.
    pub values: Vec<f64>,
    pub end_time: f64,
    /// The last key at or before the current time, and its value.
    pub prev_t: f64,
    pub prev: Vec<f64>,
    /// The first key after it, and its value.
    pub next_t: f64,
    pub next: Vec<f64>,
}

impl KeyedDofs {
    pub(crate) fn ds(&self) -> usize {
        self.layout.map_or(0, Layout::deriv_size)
    }

    /// The end of both `init`s, once the key values are read: warns about unordered key times,
    /// keeps the valid indices (`given`), the state and its layout, and resets the keys.
    pub(crate) fn finish_init(&mut self, cx: &mut InitCtx, s: StateId, layout: Layout, given: Vec<usize>) {
        if self.key_times.windows(2).any(|w| w[1] < w[0]) {
            cx.warn("keyTimes are not in increasing order; the key search assumes they are");
        }
        self.indices = checked_indices(cx, given, s);
        self.state = Some(s);
        self.layout = Some(layout);
        let ds = layout.deriv_size();
        self.prev_t = 0.0;
        self.next_t = 0.0;
        self.prev = vec![0.0; ds];
        self.next = vec![0.0; ds];
    }

    /// The key loop of SOFA's `findKeyTimes` at a time `t` within the key times: `prev` is the
    /// last key at or before `t`, `next` the first key after it (both start at the first key);
    /// true when there is a key after `t`.
    pub(crate) fn search(&mut self, t: f64) -> bool {
        let ds = self.ds();
        self.next_t = self.key_times[0];
        self.prev_t = self.key_times[0];
        for (k, &kt) in self.key_times.iter().enumerate() {
            let v = &self.values[k * ds..(k + 1) * ds];
            if kt <= t {
                self.prev_t = kt;
                self.prev.copy_from_slice(v);
            } else {
                self.next_t = kt;
                self.next.copy_from_slice(v);
                return true;
            }
        }
        false
    }

    /// Zeroes the increments of the DOFs.
    pub(crate) fn zero(&self, dx: &mut [f64]) {
        zero_dofs(dx, &self.indices, self.ds());
    }

    /// Every derivative component of every DOF (none for a state of another size).
    pub(crate) fn rows(&self, ds: usize, out: &mut Vec<usize>) {
        if ds == self.ds() {
            dof_rows(&self.indices, ds, out);
        }
    }
}

/// What differs between the keyed constraints: the kind's own Data and state, and how the key
/// values act on the DOFs.
pub trait KeyedKind: Default + Send + Sync + 'static {
    /// What the key values are called in messages.
    const VALUES: &'static str;
    /// Reads the kind's Data at init (with the checks that come before the key values are read)
    /// and returns the key values given.
    fn read(c: &mut Keyed<Self>, cx: &mut InitCtx, ds: usize) -> SimResult<Vec<f64>>;
    /// Checks the kind's Data once the key values are read, and resets its state.
    fn finish(c: &mut Keyed<Self>, cx: &mut InitCtx, ds: usize) -> SimResult;
    /// Searches the keys for the time of `p`; true when the DOFs' increments are zeroed and their
    /// velocity imposed.
    fn imposes_at(c: &mut Keyed<Self>, p: &MechParams) -> bool;
    /// Writes the imposed velocity of the DOFs (when [`Self::imposes_at`]).
    fn set_velocity(c: &Keyed<Self>, p: &MechParams, v: &mut [f64]);
    /// The position projection.
    fn project_position(c: &mut Keyed<Self>, p: &MechParams, x: &mut [f64]);
    /// The assembled matrix clears the rows and columns of the DOFs now.
    fn clears_rows(c: &Keyed<Self>) -> bool;
}

/// The keyed constraints: the DOFs, the key times and values, the keys around the current time,
/// and what the kind keeps.
#[component(
    roles = [ProjectiveConstraint],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Vec6d", "Rigid3d"],
    template_rule = FromState,
    inherit = [ProjectiveBase, KeyData, Self],
    links = {
        /// link to the topology container
        topology: Topology,
    },
    class(
        name = "LinearMovementProjectiveConstraint", module = "Sofa.Component.Constraint.Projective",
        description = "Impose a motion to given DOFs (translation and rotation).",
        type = Keyed<Movement>,
        data = {
            // SOFA's default is one zero movement; an empty list is read as that.
            /// movements corresponding to the key times
            movements: Derivs,
            /// If true, movements are relative to first position, absolute otherwise
            relativeMovements: Bool = "true",
            /// Visualization of the movement to be applied to constrained dofs (rendering only)
            showMovement: Bool = "false",
        },
    ),
    class(
        name = "LinearVelocityProjectiveConstraint", module = "Sofa.Component.Constraint.Projective",
        description = "Impose a velocity to given DOFs (translation and rotation).",
        type = Keyed<crate::linear_velocity::Velocity>,
        data = {
            /// velocities corresponding to the key times
            velocities: Derivs,
            /// coordinates on which to apply velocities
            coordinates: Indices,
            /// If set to true then the last velocity will still be applied after all the key events
            continueAfterEnd: Bool = "false",
        },
    ),
)]
#[derive(Clone, Default)]
pub struct Keyed<K: KeyedKind> {
    /// The DOFs, the key times and values, the keys around the current time.
    pub(crate) dofs: KeyedDofs,
    pub(crate) kind: K,
}

/// Impose a motion to given DOFs (translation and rotation).
pub type LinearMovementProjectiveConstraint = Keyed<Movement>;

/// What `LinearMovementProjectiveConstraint` keeps besides the keys.
#[derive(Clone, Default)]
pub struct Movement {
    relative: bool,
    /// SOFA's `finished`: a key time after the current time was found.
    found: bool,
    /// Positions captured at the first position projection (empty before).
    x0: Vec<f64>,
}

impl<K: KeyedKind> Keyed<K> {
    /// The constrained DOFs (indices beyond the state removed).
    pub fn indices(&self) -> &[usize] {
        &self.dofs.indices
    }
}

impl<K: KeyedKind> Component for Keyed<K> {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        let layout = supported_layout(cx, s)?;
        let ds = layout.deriv_size();
        let d = cx.data();
        self.dofs.end_time = d.get(ProjectiveBase::END_TIME);
        self.dofs.key_times = d.get(KeyData::KEY_TIMES).to_vec();
        let given = d.get(KeyData::INDICES).to_vec();
        let values = K::read(self, cx, ds)?;
        self.dofs.values = key_values(cx, &values, ds, self.dofs.key_times.len(), K::VALUES)?;
        K::finish(self, cx, ds)?;
        self.dofs.finish_init(cx, s, layout, given);
        Ok(())
    }
}

impl<K: KeyedKind> ProjectiveConstraint for Keyed<K> {
    fn state(&self) -> StateId {
        self.dofs.state.expect("initialised")
    }

    fn project_response(&mut self, p: &MechParams, dx: &mut [f64]) {
        if K::imposes_at(self, p) {
            self.dofs.zero(dx);
        }
    }

    fn project_velocity(&mut self, p: &MechParams, v: &mut [f64]) {
        if K::imposes_at(self, p) {
            K::set_velocity(self, p, v);
        }
    }

    fn project_position(&mut self, p: &MechParams, x: &mut [f64]) {
        K::project_position(self, p, x);
    }

    fn projected_rows(&self, _p: &MechParams, ds: usize, out: &mut Vec<usize>) {
        if K::clears_rows(self) {
            self.dofs.rows(ds, out);
        }
    }
}

/// SOFA's `Quat::slerp2`: spherical interpolation from `a` (t = 0) to `b` (t = 1), without
/// choosing the shorter arc; near-identical or opposite orientations are special-cased.
pub fn slerp2(a: Quat, b: Quat, t: f64) -> Quat {
    let cos_half = a[3] * b[3] + a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    if cos_half.abs() >= 1.0 {
        return a;
    }
    let half = cos_half.acos();
    let sin_half = (1.0 - cos_half * cos_half).sqrt();
    if sin_half.abs() < 0.001 {
        return [a[0] * 0.5 + b[0] * 0.5, a[1] * 0.5 + b[1] * 0.5, a[2] * 0.5 + b[2] * 0.5, a[3] * 0.5 + b[3] * 0.5];
    }
    let ra = ((1.0 - t) * half).sin() / sin_half;
    let rb = (t * half).sin() / sin_half;
    [a[0] * ra + b[0] * rb, a[1] * ra + b[1] * rb, a[2] * ra + b[2] * rb, a[3] * ra + b[3] * rb]
}

impl Keyed<Movement> {
    /// SOFA's `findKeyTimes` at time `t`: `prev` is the last key at or before `t`, `next` the
    /// first key after it; `found` only when both exist.
    fn find_key_times(&mut self, t: f64) {
        self.kind.found = false;
        let (Some(&first), Some(&last)) = (self.dofs.key_times.first(), self.dofs.key_times.last()) else {
            return;
        };
        if !(t >= first && t <= last) {
            return;
        }
        self.kind.found = self.dofs.search(t);
    }

    /// Searches the keys for the context time and tells whether the motion is imposed now.
    fn update(&mut self, p: &MechParams) -> bool {
        self.find_key_times(p.time);
        self.kind.found && self.dofs.next_t != self.dofs.prev_t
    }

    /// The interpolated movement at time `t` and the interpolation factor.
    fn movement(&self, t: f64) -> (Vec<f64>, f64) {
        let k = &self.dofs;
        let s = (t - k.prev_t) / (k.next_t - k.prev_t);
        let m = k.prev.iter().zip(&k.next).map(|(&a, &b)| a + (b - a) * s).collect();
        (m, s)
    }
}

impl KeyedKind for Movement {
    const VALUES: &'static str = "movements";

    fn read(c: &mut Keyed<Self>, cx: &mut InitCtx, _ds: usize) -> SimResult<Vec<f64>> {
        let d = cx.data();
        c.kind.relative = d.get(Keyed::<Self>::RELATIVE_MOVEMENTS);
        Ok(d.get(Keyed::<Self>::MOVEMENTS).to_vec())
    }

    fn finish(c: &mut Keyed<Self>, _cx: &mut InitCtx, _ds: usize) -> SimResult {
        c.kind.found = false;
        c.kind.x0.clear();
        Ok(())
    }

    fn imposes_at(c: &mut Keyed<Self>, p: &MechParams) -> bool {
        active(c.dofs.end_time, p) && c.update(p)
    }

    fn set_velocity(c: &Keyed<Self>, _p: &MechParams, v: &mut [f64]) {
        let k = &c.dofs;
        let ds = k.ds();
        let inv = 1.0 / (k.next_t - k.prev_t);
        for &i in &k.indices {
            if let Some(e) = v.get_mut(i * ds..(i + 1) * ds) {
                for (c, ec) in e.iter_mut().enumerate() {
                    *ec = (k.next[c] - k.prev[c]) * inv;
                }
            }
        }
    }

    fn project_position(c: &mut Keyed<Self>, p: &MechParams, x: &mut [f64]) {
        if !active(c.dofs.end_time, p) {
            return;
        }
        if c.kind.x0.is_empty() {
            c.kind.x0 = x.to_vec();
        }
        if !c.update(p) {
            return;
        }
        let layout = c.dofs.layout.expect("initialised");
        let cs = layout.coord_size();
        let (m, s) = c.movement(p.time);
        let (prev, next) = (&c.dofs.prev, &c.dofs.next);
        let rotation = (layout == Layout::Rigid3).then(|| {
            let qa = quat_from_euler([prev[3], prev[4], prev[5]]);
            let qb = quat_from_euler([next[3], next[4], next[5]]);
            slerp2(qa, qb, s)
        });
        let relative = c.kind.relative;
        for &i in &c.dofs.indices {
            let (Some(xi), Some(x0)) = (x.get_mut(i * cs..(i + 1) * cs), c.kind.x0.get(i * cs..(i + 1) * cs)) else {
                continue;
            };
            match rotation {
                Some(r) => {
                    for c in 0..3 {
                        xi[c] = if relative { x0[c] + m[c] } else { m[c] };
                    }
                    let q = if relative { quat_mul([x0[3], x0[4], x0[5], x0[6]], r) } else { r };
                    xi[3..7].copy_from_slice(&q);
                }
                None => {
                    for c in 0..cs {
                        xi[c] = if relative { x0[c] + m[c] } else { m[c] };
                    }
                }
            }
        }
    }

    /// Every derivative component of every constrained DOF, at any time.
    fn clears_rows(_c: &Keyed<Self>) -> bool {
        true
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn params(time: f64) -> MechParams {
        MechParams { dt: 0.1, time, gravity: [0.0; 3] }
    }

    /// Keyed DOFs of a state in slot 0, acting for ever, keys not searched yet.
    pub(crate) fn keyed(layout: Layout, indices: &[usize], key_times: &[f64], values: &[f64]) -> KeyedDofs {
        let ds = layout.deriv_size();
        KeyedDofs {
            state: Some(StateId::first_in_slot(0)),
            layout: Some(layout),
            indices: indices.to_vec(),
            key_times: key_times.to_vec(),
            values: values.to_vec(),
            end_time: -1.0,
            prev: vec![0.0; ds],
            next: vec![0.0; ds],
            ..Default::default()
        }
    }

    fn constraint(layout: Layout, indices: &[usize], key_times: &[f64], movements: &[f64]) -> LinearMovementProjectiveConstraint {
        let kind = Movement { relative: true, ..Default::default() };
        LinearMovementProjectiveConstraint { dofs: keyed(layout, indices, key_times, movements), kind }
    }

    /// Vec3, keys 0 → 1 → 3 with movements 0, (2,0,0), (2,4,−6); DOF 1 constrained, starting at
    /// (1,1,1). At T = 2 (half-way between keys 1 and 3): movement (2, 2, −3), position
    /// (3, 3, −2); velocity (0, 4, −6)/2 = (0, 2, −3); increments of DOF 1 zeroed; DOF 0 untouched.
    #[test]
    fn vec3_position_is_the_linear_interpolation() {
        let mut c = constraint(Layout::Vec3, &[1], &[0.0, 1.0, 3.0], &[0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 4.0, -6.0]);
        let mut x = vec![5.0, 5.0, 5.0, 1.0, 1.0, 1.0];
        c.project_position(&params(0.0), &mut x); // captures x0; movement 0 at T = 0
        assert_eq!(x, [5.0, 5.0, 5.0, 1.0, 1.0, 1.0]);
        x[3] = 100.0; // wherever the solver moved it, the position is imposed
        c.project_position(&params(2.0), &mut x);
        assert_eq!(x, [5.0, 5.0, 5.0, 3.0, 3.0, -2.0]);
        let mut v = vec![7.0; 6];
        c.project_velocity(&params(2.0), &mut v);
        assert_eq!(v, [7.0, 7.0, 7.0, 0.0, 2.0, -3.0]);
        // Between keys 0 and 1: slope (2, 0, 0), position x0 + (0.5, 0, 0) at T = 0.25.
        c.project_velocity(&params(0.25), &mut v);
        assert_eq!(&v[3..], [2.0, 0.0, 0.0]);
        c.project_position(&params(0.25), &mut x);
        assert_eq!(&x[3..], [1.5, 1.0, 1.0]);
        let mut dx = vec![1.0; 6];
        c.project_response(&params(2.0), &mut dx);
        assert_eq!(dx, [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);

        // Absolute movements: the position is the movement itself.
        c.kind.relative = false;
        c.project_position(&params(2.0), &mut x);
        assert_eq!(&x[3..], [2.0, 2.0, -3.0]);
    }

    /// At and after the last key (no later key) and before the first, nothing is projected, but
    /// the matrix rows are still cleared.
    #[test]
    fn outside_the_key_interval_the_dofs_are_free() {
        let mut c = constraint(Layout::Vec3, &[0], &[1.0, 2.0], &[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        for t in [0.5, 2.0, 2.5] {
            let mut dx = vec![1.0, 2.0, 3.0];
            c.project_response(&params(t), &mut dx);
            assert_eq!(dx, [1.0, 2.0, 3.0], "T = {t}");
            let mut x = vec![4.0, 5.0, 6.0];
            c.project_position(&params(t), &mut x);
            assert_eq!(x, [4.0, 5.0, 6.0], "T = {t}");
            let mut v = vec![0.5; 3];
            c.project_velocity(&params(t), &mut v);
            assert_eq!(v, [0.5; 3], "T = {t}");
            let mut rows = Vec::new();
            c.projected_rows(&params(t), 3, &mut rows);
            assert_eq!(rows, [0, 1, 2]);
        }
        // The key time itself belongs to the interval it starts: T = 1 is active (velocity 1).
        let mut v = vec![0.0; 3];
        c.project_velocity(&params(1.0), &mut v);
        assert_eq!(v, [1.0, 1.0, 1.0]);
    }

    /// Rigid3, keys 0 → 2 with movements 0 → (0, −4, 2 | 0, 0, π/2) on a DOF at (1, 0, 0) turned
    /// by π/2 about x. At T = 0.5 (s = 1/4): center (1, −1, 0.5); orientation x0.q ⊗ slerp at 1/4
    /// of a π/2 turn about z, i.e. x0.q ⊗ (0, 0, sin(π/16), cos(π/16)); velocity (0, −2, 1 | 0, 0, π/4).
    #[test]
    fn rigid3_interpolates_center_and_orientation() {
        let h = std::f64::consts::FRAC_PI_2;
        let mut c = constraint(Layout::Rigid3, &[0], &[0.0, 2.0], &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -4.0, 2.0, 0.0, 0.0, h]);
        let s45 = (h / 2.0).sin();
        let q0 = [s45, 0.0, 0.0, (h / 2.0).cos()];
        let mut x = vec![1.0, 0.0, 0.0, q0[0], q0[1], q0[2], q0[3]];
        c.project_position(&params(0.0), &mut x);
        assert_eq!(x[..3], [1.0, 0.0, 0.0]);
        c.project_position(&params(0.5), &mut x);
        assert_eq!(x[..3], [1.0, -1.0, 0.5]);
        let a = std::f64::consts::PI / 16.0;
        let expected = quat_mul(q0, [0.0, 0.0, a.sin(), a.cos()]);
        for k in 0..4 {
            assert!((x[3 + k] - expected[k]).abs() < 1e-15, "component {k}: {} vs {}", x[3 + k], expected[k]);
        }
        let mut v = vec![0.0; 6];
        c.project_velocity(&params(0.5), &mut v);
        assert_eq!(v, [0.0, -2.0, 1.0, 0.0, 0.0, h * 0.5]);
        let mut dx = vec![1.0; 6];
        c.project_response(&params(0.5), &mut dx);
        assert_eq!(dx, [0.0; 6]);
        let mut rows = Vec::new();
        c.projected_rows(&params(0.5), 6, &mut rows);
        assert_eq!(rows, [0, 1, 2, 3, 4, 5]);
    }

    /// slerp2 end points and the half-way point of a quarter turn about z; identical
    /// orientations come back unchanged.
    #[test]
    fn slerp2_known_values() {
        let q = quat_from_euler([0.0, 0.0, std::f64::consts::FRAC_PI_2]);
        let id = [0.0, 0.0, 0.0, 1.0];
        assert_eq!(slerp2(id, q, 0.0), id);
        let end = slerp2(id, q, 1.0);
        let mid = slerp2(id, q, 0.5);
        let a = std::f64::consts::PI / 8.0;
        for k in 0..4 {
            assert!((end[k] - q[k]).abs() < 1e-15);
            assert!((mid[k] - [0.0, 0.0, a.sin(), a.cos()][k]).abs() < 1e-15);
        }
        assert_eq!(slerp2(q, q, 0.3), q);
    }
}
