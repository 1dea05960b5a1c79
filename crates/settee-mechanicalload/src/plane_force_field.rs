//! `PlaneForceField`: a penalty plane pushing DOFs back to its positive side (mechanics spec §7.2).
//!
//! With the plane normal `n` (not normalised) and offset `d`, each DOF `i` of the range with
//! `δ = x_i·n − d < 0` (every DOF when `bilateral`) receives `F = −k·δ·n + c·δ·v_i` (damping
//! proportional to the penetration, on the full velocity), scaled down to `maxForce` when that is
//! positive and exceeded, and is recorded as a contact. `addDForce`: `df_i += n·(−k·kFactor·(dx_i·n))`
//! on the contacts; the assembled stiffness is `−k·n·nᵀ` per contact. No damping matrix.
//! Only the positional part of each DOF is acted on (the centre of rigid frames).

use settee_core::component::ForceField;
use settee_core::role::MechanicalState;
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// Number of positional components of a DOF (SOFA's `CPos`/`DPos` size).
fn pos_size(layout: Layout) -> usize {
    match layout {
        Layout::Vec6 => 6,
        l => l.spatial_size(),
    }
}

/// Penalty forces keeping DOFs on the positive side of a plane.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d", "Rigid3d"],
    template_rule = FromState,
    create = |args| PlaneForceField::new(args.layout.unwrap_or(Layout::Vec3)),
    data = {
        /// plane normal, one value per spatial coordinate (default 0 1 0; not normalised)
        normal: Reals,
        /// plane offset: the plane is x·normal = d
        d: Real = "0",
        /// penalty stiffness
        stiffness: Real = "500",
        /// damping, proportional to the penetration
        damping: Real = "5",
        /// if positive, the largest force applied to a DOF
        maxForce: Real = "0",
        /// act on both sides of the plane
        bilateral: Bool = "false",
        /// optional range [first last] of the DOFs acted on (negative: unbounded)
        localRange: Fixed(2) = "-1 -1",
        /// draw the plane (rendering only)
        showPlane: Bool = "false",
        /// colour of the drawn plane (rendering only)
        planeColor: Fixed(4) = "0 0.5 0.2 1",
        /// size of the drawn plane (rendering only)
        showPlaneSize: Real = "10",
        /// Rayleigh damping coefficient related to stiffness
        rayleighStiffness: Real = "0",
    },
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
    },
)]
#[derive(Clone)]
pub struct PlaneForceField {
    layout: Layout,
    state: Option<StateId>,
    normal: Vec<f64>,
    d: f64,
    stiffness: f64,
    damping: f64,
    max_force: f64,
    bilateral: bool,
    range: [i64; 2],
    /// DOFs in contact at the last `addForce`.
    contacts: Vec<usize>,
    rayleigh_stiffness: f64,
}

impl PlaneForceField {
    pub fn new(layout: Layout) -> PlaneForceField {
        PlaneForceField {
            layout,
            state: None,
            normal: Vec::new(),
            d: 0.0,
            stiffness: 500.0,
            damping: 5.0,
            max_force: 0.0,
            bilateral: false,
            range: [-1, -1],
            contacts: Vec::new(),
            rayleigh_stiffness: 0.0,
        }
    }

    /// The DOFs in contact at the last `addForce`.
    pub fn contacts(&self) -> &[usize] {
        &self.contacts
    }

    /// The plane normal as used.
    pub fn normal(&self) -> &[f64] {
        &self.normal
    }
}

impl Component for PlaneForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::state_of_template(cx, self.layout)?;
        self.state = Some(s);
        let d = cx.data();
        // Default (0, 1, 0) cut to the positional size; given values overwrite it in order.
        let np = pos_size(self.layout);
        let mut normal: Vec<f64> = [0.0, 1.0, 0.0].into_iter().chain(std::iter::repeat(0.0)).take(np).collect();
        for (slot, v) in normal.iter_mut().zip(d.get(Self::NORMAL)) {
            *slot = *v;
        }
        self.normal = normal;
        self.d = d.get(Self::D);
        self.stiffness = d.get(Self::STIFFNESS);
        self.damping = d.get(Self::DAMPING);
        self.max_force = d.get(Self::MAX_FORCE);
        self.bilateral = d.get(Self::BILATERAL);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        let r = d.get(Self::LOCAL_RANGE);
        let range_set = d.is_given(Self::LOCAL_RANGE);
        self.range = [r.first().copied().unwrap_or(-1.0) as i64, r.get(1).copied().unwrap_or(-1.0) as i64];
        if self.stiffness < 0.0 {
            cx.warn(format!("stiffness {} is negative: continuing with the default 500", self.stiffness));
            self.stiffness = 500.0;
            cx.data_mut().put(Self::STIFFNESS, 500.0);
        }
        if self.damping < 0.0 {
            cx.warn(format!("damping {} is negative: continuing with the default 5", self.damping));
            self.damping = 5.0;
            cx.data_mut().put(Self::DAMPING, 5.0);
        }
        if self.max_force < 0.0 {
            cx.warn(format!("maxForce {} is negative: continuing with 0 (no limit)", self.max_force));
            self.max_force = 0.0;
            cx.data_mut().put(Self::MAX_FORCE, 0.0);
        }
        let [a, b] = self.range;
        if range_set && (a < 0 || b < 0 || a > b) {
            cx.warn(format!("localRange [{a} {b}] is not two indices in increasing order: no local range"));
            self.range = [-1, -1];
            cx.data_mut().put(Self::LOCAL_RANGE, vec![-1.0, -1.0]);
        }
        Ok(())
    }
}

impl ForceField for PlaneForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let (cs, ds, np) = (self.layout.coord_size(), self.layout.deriv_size(), self.normal.len());
        let x = io.x[0];
        let v: &[f64] = io.v.first().copied().unwrap_or(&[]);
        let f = &mut io.f[0];
        self.contacts.clear();
        let n = x.len() / cs;
        let begin = if self.range[0] >= 0 { self.range[0] as usize } else { 0 };
        let end = if self.range[1] >= 0 && (self.range[1] as usize) + 1 < n { self.range[1] as usize + 1 } else { n };
        let limit = self.max_force * self.max_force;
        let nrm = &self.normal;
        let mut force = [0.0f64; 6];
        for i in begin..end {
            let xi = &x[i * cs..];
            let mut dist = xi[0] * nrm[0];
            for c in 1..np {
                dist += xi[c] * nrm[c];
            }
            let dist = dist - self.d;
            if !(self.bilateral || dist < 0.0) {
                continue;
            }
            let intensity = -self.stiffness * dist;
            let damping_intensity = -self.damping * dist;
            for c in 0..np {
                let vc = v.get(i * ds + c).copied().unwrap_or(0.0);
                force[c] = nrm[c] * intensity - vc * damping_intensity;
            }
            let mut amplitude = force[0] * force[0];
            for fc in &force[1..np] {
                amplitude += fc * fc;
            }
            if limit > 0.0 && amplitude > limit {
                let scale = (limit / amplitude).sqrt();
                for fc in &mut force[..np] {
                    *fc *= scale;
                }
            }
            for c in 0..np {
                f[i * ds + c] += force[c];
            }
            self.contacts.push(i);
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let (ds, np) = (self.layout.deriv_size(), self.normal.len());
        let fact = -self.stiffness * k_factor;
        let dx = io.x[0];
        let df = &mut io.f[0];
        let nrm = &self.normal;
        for &p in &self.contacts {
            if (p + 1) * ds > dx.len() {
                return Err(SimError::new(format!("PlaneForceField: contact DOF {p} is beyond the state's size")));
            }
            let dxp = &dx[p * ds..];
            let mut proj = dxp[0] * nrm[0];
            for c in 1..np {
                proj += dxp[c] * nrm[c];
            }
            let t = fact * proj;
            for c in 0..np {
                df[p * ds + c] += nrm[c] * t;
            }
        }
        Ok(())
    }

    /// `−k·n·nᵀ` per contact (SOFA's `buildStiffnessMatrix`: `(n_l·n_c)·(−k)`), times `kFactor`.
    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("PlaneForceField used before init"))?;
        let (ds, np) = (self.layout.deriv_size(), self.normal.len());
        let nrm = &self.normal;
        for &p in &self.contacts {
            for l in 0..np {
                for c in 0..np {
                    acc.add(s, p * ds + l, s, p * ds + c, nrm[l] * nrm[c] * -self.stiffness * k_factor);
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
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    use super::PlaneForceField;
    use crate::test_support::*;

    fn scene(mo: &[(&str, &str)], ff: &[(&str, &str)]) -> (Scene, settee_core::ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", mo);
        let c = add(&mut s, &f, Scene::ROOT, "PlaneForceField", ff);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    #[test]
    fn a_point_below_the_plane_is_pushed_out() {
        // Plane y = 1 (normal (0,1,0), d = 1); point 0 is 0.25 below, point 1 above.
        let (mut s, c) =
            scene(&[("position", "0 0.75 0  3 2 1"), ("velocity", "1 -2 0.5  4 4 4")], &[("d", "1"), ("stiffness", "100"), ("damping", "2")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        // δ = −0.25: F = −k·δ·n + c·δ·v = 25·n − 0.5·v.
        assert_close(&fv, &[-0.5, 26.0, -0.25, 0.0, 0.0, 0.0], 1e-14);
        assert_eq!(s.get::<PlaneForceField>(c).unwrap().contacts(), &[0]);
        // df = −k·kFactor·(dx·n)·n on the contact.
        let df = dforce_mbk(&mut s, &scope, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.5, 7.0);
        assert_close(&df, &[0.0, -100.0, 0.0, 0.0, 0.0, 0.0], 1e-14);
        let k = assembled(&mut s, &scope, 0.5, 7.0);
        assert_close(&k.diagonal(), &[0.0, -50.0, 0.0, 0.0, 0.0, 0.0], 1e-14);
        // At zero velocity the force derives exactly.
        let mut s = s;
        settee_core::mechanics::scatter(&mut s, &scope, settee_core::VecId::VELOCITY, &[0.0; 6]);
        check_derivatives(&mut s, &[0.3, -0.2, 0.5, 0.1, 0.1, 0.1], 1e-7, 1e-7);
    }

    #[test]
    fn max_force_bilateral_and_unnormalised_normal() {
        // Unnormalised normal (0, 2, 0): δ = 2y − d. Bilateral: the point above is pulled back.
        let (mut s, _) = scene(&[("position", "0 1 0")], &[("normal", "0 2 0"), ("d", "1"), ("stiffness", "10"), ("bilateral", "true")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_close(&forces(&mut s, &scope), &[0.0, -20.0, 0.0], 1e-14);
        // maxForce: scaled down to length 3, same direction.
        let (mut s, _) = scene(&[("position", "0 -1 0"), ("velocity", "1 0 0")], &[("stiffness", "10"), ("damping", "1"), ("maxForce", "3")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let f = forces(&mut s, &scope);
        // Unclamped F = (−1, 10, 0): scaled by 3/√101.
        let sc = 3.0 / 101f64.sqrt();
        assert_close(&f, &[-sc, 10.0 * sc, 0.0], 1e-14);
    }

    #[test]
    fn local_range_and_rigid_frames() {
        let (mut s, c) = scene(&[("position", "0 -1 0  0 -1 0  0 -1 0  0 -1 0")], &[("localRange", "1 2"), ("stiffness", "1"), ("damping", "0")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_close(&forces(&mut s, &scope), &[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0], 1e-14);
        assert_eq!(s.get::<PlaneForceField>(c).unwrap().contacts(), &[1, 2]);
        // An invalid range falls back to all DOFs.
        let (mut s, _) = scene(&[("position", "0 -1 0  0 -1 0")], &[("localRange", "2 1"), ("stiffness", "1"), ("damping", "0")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_close(&forces(&mut s, &scope), &[0.0, 1.0, 0.0, 0.0, 1.0, 0.0], 1e-14);
        // Rigid3: the centre only.
        let (mut s, c) = scene(
            &[("template", "Rigid3d"), ("position", "0 -2 0 0 0 0.3826834323650898 0.9238795325112867")],
            &[("stiffness", "5"), ("damping", "0")],
        );
        assert_eq!(s.entry(c).template, "Rigid3d");
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_close(&forces(&mut s, &scope), &[0.0, 10.0, 0.0, 0.0, 0.0, 0.0], 1e-14);
        let dx = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
        let df = dforce_mbk(&mut s, &scope, &dx, 1.0, 0.0);
        assert_close(&df, &[0.0, -1.0, 0.0, 0.0, 0.0, 0.0], 1e-14);
        assert_close(&mul(&assembled(&mut s, &scope, 1.0, 0.0), &dx), &df, 1e-14);
    }
}
