//! `RestShapeSpringsForceField`: zero-length springs pulling DOFs back to a rest shape
//! (forcefields-mappings spec §2.6).
//!
//! The rest shape is the state's own rest position, or the **position** of the state linked by
//! `external_rest_shape` (DOF `external_points[i]` for `points[i]`). `points` defaults to every
//! DOF, `external_points` to every DOF of the external state (or to `points` without an external
//! state). Spring `i` has stiffness `stiffness[i]` (or `stiffness[0]` beyond the list; empty: 100).
//!
//! * Vec: `f −= k·mask(x − x_rest)`, `df −= k·kFactor·mask(dx)`.
//! * Rigid3: the centre as above; the rotation `dq = normalize(q·q_rest⁻¹)` (sign flipped when
//!   `w < 0`) is turned into axis·angle, masked by the rotational `activeDirections`, and gives the
//!   torque `−axis·angle·k_θ`; `dω` gives `−k_θ·kFactor·dω`. `angularStiffness` is padded with 100
//!   (or truncated) to the length of `stiffness`.
//!
//! The assembled stiffness follows SOFA's `buildStiffnessMatrix`, which differs from `addDForce`
//! in two ways: the stiffness of a DOF is looked up with the **DOF index** (`stiffness[index]`, or
//! `stiffness[0]` beyond the list) instead of the spring index, and the translational
//! `activeDirections` are ignored (the rotational ones are honoured). Both coincide whenever the
//! springs cover the DOFs in order with a single stiffness or one per DOF, and all translations
//! are active.
//!
//! `pivot_points` is accepted and, as in SOFA, unused. The external rest shape is read at the
//! beginning of each step (SOFA reads it in every `addForce`; a rest-shape state moved by another
//! solver during the same step is therefore seen one step late here).

use crate::RayleighStiffnessData;
use settee_core::component::ForceField;
use settee_core::role::{MechanicalState, Topology};
use settee_core::types::{quat_mul, quat_normalize};
use settee_core::{
    component, Component, ComponentId, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, Scene, SimError, SimResult, StateId, VecId,
};

type Quat = [f64; 4];

/// SOFA's `Quat::inverse`.
pub(crate) fn quat_inverse(q: Quat) -> Quat {
    let norm = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if norm == 0.0 {
        return [0.0; 4];
    }
    let inv = 1.0 / norm;
    [-q[0] * inv, -q[1] * inv, -q[2] * inv, q[3] * inv]
}

/// SOFA's `Quat::quatToAxis`.
pub(crate) fn quat_to_axis(q: Quat) -> ([f64; 3], f64) {
    let q = if q[3] < 0.0 { q.map(|c| -c) } else { q };
    let (s, angle) = if q[3] > 0.999 {
        let s = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
        (s, 2.0 * s.asin())
    } else {
        let half = q[3].acos();
        (half.sin(), 2.0 * half)
    };
    let axis = if s < f64::EPSILON { [0.0, 1.0, 0.0] } else { [q[0] / s, q[1] / s, q[2] / s] };
    (axis, angle)
}

/// The rotation vector pulling orientation `q` back to `q_rest`, before masking: SOFA's
/// `dq = normalize(q·q_rest⁻¹)`, sign-flipped when `w < 0`, then axis and angle (zero angle when
/// `w ≥ 1`).
pub fn rotation_error(q: Quat, q_rest: Quat) -> ([f64; 3], f64) {
    let mut dq = quat_mul(q, quat_inverse(q_rest));
    quat_normalize(&mut dq);
    if dq[3] < 0.0 {
        dq = dq.map(|c| -c);
    }
    if dq[3] < 1.0 {
        quat_to_axis(dq)
    } else {
        ([0.0; 3], 0.0)
    }
}

/// Springs pulling DOFs back to their rest position or to the position of an external state.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    templates = ["Vec1d", "Vec3d", "Rigid3d"],
    template_rule = FromState,
    create = |args| RestShapeSpringsForceField::new(args.layout.unwrap_or(Layout::Vec3)),
    data = {
        /// DOFs held by the springs (empty: all)
        points: Indices,
        /// stiffness of each spring (the first value beyond the list; empty: 100)
        stiffness: Reals,
        /// rotational stiffness of each spring (Rigid3; padded with 100 to the length of `stiffness`)
        angularStiffness: Reals,
        /// global pivot points (Rigid3; unused, as in SOFA)
        pivot_points: Reals,
        /// DOFs of the external rest shape matching `points` (empty: all of them)
        external_points: Indices,
        /// rebuild the index lists at every addForce
        recompute_indices: Bool = "true",
        /// per coordinate (7 for Rigid3): whether the spring acts along it (default: all)
        activeDirections: Strings,
        /// draw the springs (rendering only)
        drawSpring: Bool = "false",
        /// colour of the drawn springs (rendering only)
        springColor: Fixed(4) = "0 1 0 1",
    },
    inherit = [Self, RayleighStiffnessData],
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
        /// state whose position is the rest shape (default: the state's own rest position)
        external_rest_shape: MechanicalState,
        /// topology (only used by SOFA for topological changes)
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct RestShapeSpringsForceField {
    layout: Layout,
    state: Option<StateId>,
    external: Option<StateId>,
    points: Vec<usize>,
    external_points: Vec<usize>,
    /// The springs: DOF of the state and DOF of the rest shape.
    indices: Vec<usize>,
    ext_indices: Vec<usize>,
    stiffness: Vec<f64>,
    angular_stiffness: Vec<f64>,
    /// One flag per coordinate component (7 for Rigid3).
    active: Vec<bool>,
    recompute: bool,
    /// The rest shape (coordinates of the rest-shape state), refreshed at each step's beginning.
    rest: Vec<f64>,
    rayleigh_stiffness: f64,
}

impl RestShapeSpringsForceField {
    pub fn new(layout: Layout) -> RestShapeSpringsForceField {
        RestShapeSpringsForceField {
            layout,
            state: None,
            external: None,
            points: Vec::new(),
            external_points: Vec::new(),
            indices: Vec::new(),
            ext_indices: Vec::new(),
            stiffness: Vec::new(),
            angular_stiffness: Vec::new(),
            active: Vec::new(),
            recompute: true,
            rest: Vec::new(),
            rayleigh_stiffness: 0.0,
        }
    }

    /// The DOFs held, and the matching rest-shape DOFs.
    pub fn indices(&self) -> (&[usize], &[usize]) {
        (&self.indices, &self.ext_indices)
    }

    fn rest_vec(&self) -> VecId {
        if self.external.is_some() {
            VecId::POSITION
        } else {
            VecId::REST_POSITION
        }
    }

    /// SOFA's `recomputeIndices` for a state of `n` DOFs and a rest shape of `n_ext` DOFs; the
    /// springs are disabled (with the reason returned) when the lists do not fit.
    fn recompute_indices(&mut self, n: usize, n_ext: usize) -> Result<(), String> {
        self.indices = if self.points.is_empty() { (0..n).collect() } else { self.points.clone() };
        self.ext_indices = if !self.external_points.is_empty() {
            self.external_points.clone()
        } else if self.external.is_some() {
            (0..n_ext).collect()
        } else {
            self.indices.clone()
        };
        let problem = if let Some(i) = self.indices.iter().find(|&&i| i >= n) {
            Some(format!("point {i} is beyond the {n} DOFs of the state"))
        } else if let Some(i) = self.ext_indices.iter().find(|&&i| i >= n_ext) {
            Some(format!("rest-shape point {i} is beyond the {n_ext} DOFs of the rest shape"))
        } else if self.indices.len() != self.ext_indices.len() {
            Some(format!("{} points but {} rest-shape points", self.indices.len(), self.ext_indices.len()))
        } else {
            None
        };
        match problem {
            Some(p) => {
                self.indices.clear();
                Err(p)
            }
            None => Ok(()),
        }
    }

    fn read_rest(&mut self, scene: &Scene) {
        let s = self.external.or(self.state).expect("initialised");
        let st = scene.store.get(s);
        let id = self.rest_vec();
        self.rest = if st.is_set(id) || id == VecId::POSITION { st.read(id).to_vec() } else { st.read(VecId::POSITION).to_vec() };
    }

    fn k(&self, i: usize) -> f64 {
        self.stiffness[if i < self.stiffness.len() { i } else { 0 }]
    }

    fn k_angular(&self, i: usize) -> f64 {
        self.angular_stiffness[if i < self.angular_stiffness.len() { i } else { 0 }]
    }
}

fn parse_flags(words: &[String], n: usize) -> Result<Vec<bool>, String> {
    let mut out = vec![true; n];
    for (slot, w) in out.iter_mut().zip(words) {
        *slot = match w.to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            t => t.parse::<i64>().map(|v| v != 0).map_err(|_| format!("'{w}' is not a boolean"))?,
        };
    }
    Ok(out)
}

impl Component for RestShapeSpringsForceField {
    /// Everything happens in `bwdInit`, as in SOFA (after the external state is initialised).
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        if let Some(e) = crate::topo::template_error(cx, s, self.layout) {
            return Err(e);
        }
        self.state = Some(s);
        let ext: Option<ComponentId> = cx.link_targets("external_rest_shape").first().copied();
        self.external = match ext {
            Some(c) => {
                let es = cx.scene.state_of(c).ok_or_else(|| cx.error("external_rest_shape is not a mechanical state"))?;
                if cx.state_layout(es) != self.layout {
                    return Err(cx.error(format!("external_rest_shape is a {} state, not {}", cx.state_layout(es).name(), self.layout.name())));
                }
                Some(es)
            }
            None => None,
        };
        let d = cx.data();
        self.points = d.get(Self::POINTS).to_vec();
        self.external_points = d.get(Self::EXTERNAL_POINTS).to_vec();
        self.recompute = d.get(Self::RECOMPUTE_INDICES);
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        let mut k = d.get(Self::STIFFNESS).to_vec();
        if k.is_empty() {
            k.push(100.0);
        }
        let mut ka = d.get(Self::ANGULAR_STIFFNESS).to_vec();
        if self.layout.is_rigid() {
            ka.resize(k.len(), 100.0);
        }
        if d.is_given(Self::PIVOT_POINTS) && !d.get(Self::PIVOT_POINTS).is_empty() {
            cx.warn("pivot_points is ignored (as in SOFA, where it is unused)");
        }
        let d = cx.data();
        self.active =
            parse_flags(d.get(Self::ACTIVE_DIRECTIONS), self.layout.coord_size()).map_err(|m| cx.error(format!("activeDirections: {m}")))?;
        self.stiffness = k.clone();
        self.angular_stiffness = ka.clone();
        let dm = cx.data_mut();
        dm.put(Self::STIFFNESS, k);
        if self.layout.is_rigid() {
            dm.put(Self::ANGULAR_STIFFNESS, ka);
        }
        self.read_rest(cx.scene);
        let n = cx.state_size(s);
        let n_ext = self.rest.len() / self.layout.coord_size();
        self.recompute_indices(n, n_ext).map_err(|m| {
            cx.error(m)
                .hint("`points` are DOFs of the state, `external_points` DOFs of external_rest_shape (or of the state itself), in equal numbers")
        })
    }

    fn animate_begin(&mut self, scene: &mut Scene, _me: ComponentId) -> SimResult {
        if self.state.is_some() {
            self.read_rest(scene);
        }
        Ok(())
    }
}

impl ForceField for RestShapeSpringsForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let (cs, ds) = (self.layout.coord_size(), self.layout.deriv_size());
        if self.recompute {
            // Failures leave no springs; they were reported at init.
            let _ = self.recompute_indices(io.x[0].len() / cs, self.rest.len() / cs);
        }
        let x = io.x[0];
        let f = &mut io.f[0];
        let p0 = &self.rest;
        for (i, (&index, &ext_index)) in self.indices.iter().zip(&self.ext_indices).enumerate() {
            let ext_index = if self.external.is_some() { ext_index } else { index };
            if index >= x.len() / cs || ext_index >= p0.len() / cs {
                return Err(SimError::new(format!("spring {i} refers to DOF {index} / rest DOF {ext_index} beyond the states' sizes")));
            }
            let k = self.k(i);
            let (xi, ri) = (&x[index * cs..(index + 1) * cs], &p0[ext_index * cs..(ext_index + 1) * cs]);
            let fi = &mut f[index * ds..(index + 1) * ds];
            if self.layout == Layout::Rigid3 {
                for c in 0..3 {
                    let dx = if self.active[c] { xi[c] - ri[c] } else { 0.0 };
                    fi[c] -= dx * k;
                }
                let (mut dir, angle) = rotation_error([xi[3], xi[4], xi[5], xi[6]], [ri[3], ri[4], ri[5], ri[6]]);
                for (d, &on) in dir.iter_mut().zip(&self.active[3..6]) {
                    if !on {
                        *d = 0.0;
                    }
                }
                let ka = self.k_angular(i);
                for c in 0..3 {
                    fi[3 + c] -= dir[c] * angle * ka;
                }
            } else {
                for c in 0..cs {
                    let dx = if self.active[c] { xi[c] - ri[c] } else { 0.0 };
                    fi[c] -= dx * k;
                }
            }
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let ds = self.layout.deriv_size();
        let dx = io.x[0];
        let df = &mut io.f[0];
        for (i, &index) in self.indices.iter().enumerate() {
            if index >= dx.len() / ds {
                return Err(SimError::new(format!("spring {i} refers to DOF {index} beyond the state's size")));
            }
            let k = self.k(i);
            let (dxi, dfi) = (&dx[index * ds..(index + 1) * ds], &mut df[index * ds..(index + 1) * ds]);
            if self.layout == Layout::Rigid3 {
                let ka = self.k_angular(i);
                for c in 0..3 {
                    let t = if self.active[c] { dxi[c] } else { 0.0 };
                    dfi[c] -= t * k * k_factor;
                }
                for c in 0..3 {
                    let r = if self.active[3 + c] { dxi[3 + c] } else { 0.0 };
                    dfi[3 + c] -= r * ka * k_factor;
                }
            } else {
                for c in 0..ds {
                    let t = if self.active[c] { dxi[c] } else { 0.0 };
                    dfi[c] -= t * k * k_factor;
                }
            }
        }
        Ok(())
    }

    /// SOFA's `buildStiffnessMatrix` (see the module documentation for how it differs from
    /// `addDForce`).
    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("RestShapeSpringsForceField used before init"))?;
        let ds = self.layout.deriv_size();
        let space = self.layout.spatial_size().min(ds);
        for &index in &self.indices {
            let vt = -self.k(index);
            for c in 0..space {
                acc.add(s, ds * index + c, s, ds * index + c, vt * k_factor);
            }
            if self.layout == Layout::Rigid3 {
                let vr = -self.k_angular(index);
                for c in 3..6 {
                    if self.active[c] {
                        acc.add(s, ds * index + c, s, ds * index + c, vr * k_factor);
                    }
                }
            }
        }
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    use super::RestShapeSpringsForceField;
    use crate::test_support::*;

    const REST: &str = "0 0 0  1 0 0  0 1 0";
    const POS: &str = "0.1 -0.2 0.3  1.5 0 0  0 1 -1";

    fn scene(ff: &[(&str, &str)]) -> (Scene, settee_core::ComponentId) {
        let (f, mut s) = state_scene(&[("rest_position", REST), ("position", POS)]);
        let c = add(&mut s, &f, Scene::ROOT, "RestShapeSpringsForceField", ff);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    #[test]
    fn pulls_back_to_the_rest_position() {
        let (mut s, c) = scene(&[]);
        // Default stiffness 100 on every point.
        assert_eq!(s.entry(c).data.reals("stiffness"), &[100.0]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        assert_close(&fv, &[-10.0, 20.0, -30.0, -50.0, 0.0, 0.0, 0.0, 0.0, 100.0], 1e-12);
        let dx = random_vec(9, 1);
        check_fd(&mut s, &dx, 1e-3, 1e-9);
        check_matrix(&mut s, &dx);
    }

    #[test]
    fn points_stiffness_list_and_active_directions() {
        // Spring i takes stiffness[i] (stiffness[0] beyond the list); direction y is inactive.
        let (mut s, _) = scene(&[("points", "2 0"), ("stiffness", "10 1000"), ("activeDirections", "1 0 1")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        assert_close(&fv, &[-100.0, 0.0, -300.0, 0.0, 0.0, 0.0, 0.0, 0.0, 10.0], 1e-12);
        let df = dforce(&mut s, &scope, &[1.0; 9], 2.0);
        assert_close(&df, &[-2000.0, 0.0, -2000.0, 0.0, 0.0, 0.0, -20.0, 0.0, -20.0], 1e-12);
        // SOFA's assembled matrix: stiffness looked up by DOF index, translations never masked.
        let k = assembled(&mut s, &scope, 2.0, 0.0);
        assert_close(&k.diagonal(), &[-20.0, -20.0, -20.0, 0.0, 0.0, 0.0, -20.0, -20.0, -20.0], 1e-12);
    }

    #[test]
    fn external_rest_shape() {
        let f = factory();
        let mut s = Scene::new("root");
        let target = s.add_node(Scene::ROOT, "target");
        let body = s.add_node(Scene::ROOT, "body");
        add(&mut s, &f, target, "MechanicalObject", &[("name", "ms"), ("position", "5 5 5  7 7 7")]);
        add(&mut s, &f, body, "MechanicalObject", &[("position", POS)]);
        let c = add(
            &mut s,
            &f,
            body,
            "RestShapeSpringsForceField",
            &[("external_rest_shape", "@../target/ms"), ("points", "1 2"), ("external_points", "1 0"), ("stiffness", "2")],
        );
        init_root(&mut s, &f).unwrap();
        let ff = s.get::<RestShapeSpringsForceField>(c).unwrap();
        assert_eq!(ff.indices(), (&[1usize, 2][..], &[1usize, 0][..]));
        let scope = MechScope::build(&s, body);
        let fv = forces(&mut s, &scope);
        assert_close(&fv, &[0.0, 0.0, 0.0, 11.0, 14.0, 14.0, 10.0, 8.0, 12.0], 1e-12);
        // Mismatched lists are an init error.
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", POS)]);
        add(&mut s, &f, Scene::ROOT, "RestShapeSpringsForceField", &[("points", "0 1"), ("external_points", "0")]);
        assert!(init_root(&mut s, &f).is_err());
    }

    #[test]
    fn rigid_frames_get_a_torque() {
        let f = factory();
        let mut s = Scene::new("root");
        let th = 0.4f64;
        let (sh, ch) = ((th / 2.0).sin(), (th / 2.0).cos());
        let pos = format!("1 2 3 0 0 {sh} {ch}  0 0 0 0 0 0 1");
        add(
            &mut s,
            &f,
            Scene::ROOT,
            "MechanicalObject",
            &[("template", "Rigid3d"), ("rest_position", "0 2 3 0 0 0 1  0 0 0 0 0 0 1"), ("position", &pos)],
        );
        let c = add(&mut s, &f, Scene::ROOT, "RestShapeSpringsForceField", &[("stiffness", "10"), ("angularStiffness", "3")]);
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(c).template, "Rigid3d");
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        assert_close(&fv, &[-10.0, 0.0, 0.0, 0.0, 0.0, -3.0 * th, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-12);
        // The derivative: −k on translations, −k_θ on rotations; the matrix agrees.
        let dx = random_vec(12, 6);
        let df = dforce(&mut s, &scope, &dx, 1.0);
        let expected: Vec<f64> = dx.iter().enumerate().map(|(i, d)| if i % 6 < 3 { -10.0 * d } else { -3.0 * d }).collect();
        assert_close(&df, &expected, 1e-12);
        check_matrix(&mut s, &dx);
        // Masked rotation about z: no torque.
        let mut s2 = Scene::new("root");
        add(
            &mut s2,
            &f,
            Scene::ROOT,
            "MechanicalObject",
            &[("template", "Rigid3d"), ("rest_position", "0 2 3 0 0 0 1  0 0 0 0 0 0 1"), ("position", &pos)],
        );
        let c2 = add(&mut s2, &f, Scene::ROOT, "RestShapeSpringsForceField", &[("stiffness", "10"), ("activeDirections", "1 1 1 1 1 0 1")]);
        init_root(&mut s2, &f).unwrap();
        let scope = MechScope::build(&s2, Scene::ROOT);
        let fv = forces(&mut s2, &scope);
        assert_eq!(fv[5], 0.0);
        // angularStiffness is padded with 100 to the length of stiffness.
        assert_eq!(s2.entry(c2).data.reals("angularStiffness"), &[100.0]);
    }

    #[test]
    fn rotation_error_matches_the_angle() {
        for th in [0.01f64, 0.5, 2.0, 3.0] {
            let q = [(th / 2.0).sin() * 0.6, 0.0, (th / 2.0).sin() * 0.8, (th / 2.0).cos()];
            let (axis, angle) = super::rotation_error(q, [0.0, 0.0, 0.0, 1.0]);
            assert!((angle - th).abs() < 1e-12, "{th}: {angle}");
            assert_close(&axis, &[0.6, 0.0, 0.8], 1e-12);
        }
        // Past π the shorter rotation is taken.
        let th = 4.0f64;
        let (axis, angle) = super::rotation_error([0.0, 0.0, (th / 2.0).sin(), (th / 2.0).cos()], [0.0, 0.0, 0.0, 1.0]);
        assert!((angle - (2.0 * std::f64::consts::PI - th)).abs() < 1e-12);
        assert_close(&axis, &[0.0, 0.0, -1.0], 1e-12);
    }

    #[test]
    fn vec1_springs() {
        let (f, mut s) = state_scene(&[("template", "Vec1d"), ("rest_position", "1 2"), ("position", "1.5 1")]);
        add(&mut s, &f, Scene::ROOT, "RestShapeSpringsForceField", &[("stiffness", "1e4")]);
        init_root(&mut s, &f).unwrap();
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_close(&forces(&mut s, &scope), &[-5000.0, 10000.0], 1e-9);
        check_matrix(&mut s, &[0.3, -0.7]);
    }
}
