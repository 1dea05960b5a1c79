//! `GearSpringForceField`: gears between rigid frames, SOFA's `GearSpringForceField<Rigid3d>`.
//!
//! A spring `BEGIN_SPRING p1 m1 p2 m2 … END_SPRING` holds frame `m1` of `object1` on its pivot
//! (parent frame `p1`, or its initial placement when `p1 = m1`) and likewise `m2` of `object2`,
//! free to turn about their local axes `AXIS a1 a2`; the two rotations are coupled by `RATIO`.
//!
//! * Pivot: `f = KS_T·(c_p − c_m) + kd·(v_p − v_m)` and `τ = hardKsr·w + kd·(ω_p − ω_m)` on `m`
//!   (the opposite on `p` when it is another frame), with `w` the rotation vector turning the
//!   free axis of `m` onto that of `p`.
//! * Gear: the angle of each child about its axis relative to its parent (the mean of the signed
//!   angles between the two other axes) is accumulated over the evaluations; the torque
//!   `F = −softKsr·(angle1·ratio + angle2)` acts about the axis of `m1`, `F/ratio` about that of
//!   `m2`. As in SOFA, an angle jump larger than π is unwrapped by steps of `M_2_PI` (2/π, not
//!   2π).
//!
//! The stiffness, as SOFA's, uses the pivot frames of the last `addForce`: translations
//! `KS_T·δ`, rotations `R·(K ⊙ Rᵀδω)` with `K = hardKsr` except 0 about the free axis, and the
//! gear coupling of the rotations about the free axes. SOFA assembles no matrix for this class.

use crate::joint_spring_force_field::{inverse_rotate, rotate, rotation_matrix, scaled_in_frame};
use crate::spring_force_field::resolve_pair;
use crate::RayleighStiffnessData;
use settee_core::component::ForceField;
use settee_core::role::{Interaction, MechanicalState};
use settee_core::types::Quat;
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MechParams, SimError, SimResult, StateId, VecId};

use std::f64::consts::PI;

/// SOFA's `M_2_PI` (2/π), used where 2π was meant.
const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;

/// One gear spring (SOFA's `GearSpring`).
#[derive(Clone, Debug, PartialEq)]
pub struct GearSpring {
    pub m1: usize,
    pub m2: usize,
    pub p1: usize,
    pub p2: usize,
    pub free_axis: [usize; 2],
    pub kd: f64,
    pub hard_stiffness_trans: f64,
    pub soft_stiffness_rot: f64,
    pub hard_stiffness_rot: f64,
    pub ratio: f64,
    pub previous_angle: [f64; 2],
    pub angle: [f64; 2],
    /// Pivot frames (`x y z qx qy qz qw`): the initial placement of a child that is its own
    /// parent, else the parent at the last `addForce`.
    pub ini: [[f64; 7]; 2],
}

impl Default for GearSpring {
    /// SOFA's default constructor.
    fn default() -> GearSpring {
        GearSpring {
            m1: 0,
            m2: 0,
            p1: 0,
            p2: 0,
            free_axis: [0, 0],
            kd: 10000.0,
            hard_stiffness_trans: 10000.0,
            soft_stiffness_rot: 10000.0,
            hard_stiffness_rot: 10000.0,
            ratio: 1.0,
            previous_angle: [0.0; 2],
            angle: [0.0; 2],
            ini: [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]; 2],
        }
    }
}

/// Reads the `spring` Data: `BEGIN_SPRING p1 m1 p2 m2 [AXIS a1 a2] [KS_T k] [KS_R soft hard]
/// [KD kd] [RATIO r] END_SPRING`, repeated. As SOFA reads it, into one object reused from one
/// spring to the next: only `AXIS` is reset (to `0 0`) for each spring.
pub fn parse_gear_springs(text: &str) -> Result<Vec<GearSpring>, String> {
    let mut words = text.split_whitespace();
    let mut springs = Vec::new();
    let mut s = GearSpring::default();
    fn real(w: Option<&str>, what: &str) -> Result<f64, String> {
        let w = w.ok_or_else(|| format!("{what}: missing value before the end of the text"))?;
        w.parse::<f64>().map_err(|_| format!("{what}: '{w}' is not a number"))
    }
    fn index(w: Option<&str>, what: &str) -> Result<usize, String> {
        let w = w.ok_or_else(|| format!("{what}: missing index"))?;
        w.parse::<usize>().map_err(|_| format!("{what}: '{w}' is not a non-negative integer"))
    }
    while let Some(w) = words.next() {
        if w != "BEGIN_SPRING" {
            return Err(format!("expected BEGIN_SPRING, found '{w}'"));
        }
        let n = springs.len();
        s.free_axis = [0, 0];
        s.p1 = index(words.next(), &format!("spring {n}: first parent"))?;
        s.m1 = index(words.next(), &format!("spring {n}: first child"))?;
        s.p2 = index(words.next(), &format!("spring {n}: second parent"))?;
        s.m2 = index(words.next(), &format!("spring {n}: second child"))?;
        loop {
            let key = words.next().ok_or_else(|| format!("spring {n}: END_SPRING missing"))?;
            let what = format!("spring {n}: {key}");
            match key {
                "END_SPRING" => break,
                "AXIS" => {
                    for k in 0..2 {
                        let a = index(words.next(), &what)?;
                        if a > 2 {
                            return Err(format!("{what}: axis {a} is not 0, 1 or 2"));
                        }
                        s.free_axis[k] = a;
                    }
                }
                "KS_T" => s.hard_stiffness_trans = real(words.next(), &what)?,
                "KS_R" => {
                    s.soft_stiffness_rot = real(words.next(), &what)?;
                    s.hard_stiffness_rot = real(words.next(), &what)?;
                }
                "KD" => s.kd = real(words.next(), &what)?,
                "RATIO" => s.ratio = real(words.next(), &what)?,
                _ => return Err(format!("spring {n}: unknown keyword '{key}' (expected AXIS, KS_T, KS_R, KD, RATIO or END_SPRING)")),
            }
        }
        springs.push(s.clone());
    }
    Ok(springs)
}

fn quat_of(x: &[f64]) -> Quat {
    [x[3], x[4], x[5], x[6]]
}

fn column(m: &[[f64; 3]; 3], j: usize) -> [f64; 3] {
    [m[0][j], m[1][j], m[2][j]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The rotation vector turning unit vector `u` onto `v` (SOFA's `getVectorAngle`).
fn vector_angle(u: [f64; 3], v: [f64; 3]) -> [f64; 3] {
    let w = cross(u, v);
    let nw = dot(w, w).sqrt();
    if nw != 0.0 {
        let s = nw.atan2(dot(u, v)) / nw;
        w.map(|c| c * s)
    } else {
        w
    }
}

/// The signed angle of frame `child` about axis `axis` of frame `parent`: the mean of the angles
/// between their two other axes, signed by the parent's axis (SOFA's `getAngleAroundAxis`).
fn angle_around_axis(parent: Quat, child: Quat, axis: usize) -> f64 {
    let (m1, m2) = (rotation_matrix(parent), rotation_matrix(child));
    let reference = column(&m1, axis);
    let mut angle = 0.0;
    let mut count = 0.0;
    for j in (0..3).filter(|&j| j != axis) {
        let w = vector_angle(column(&m1, j), column(&m2, j));
        let norm = dot(w, w).sqrt();
        if dot(w, reference) < 0.0 {
            angle -= norm;
        } else {
            angle += norm;
        }
        count += 1.0;
    }
    angle / count
}

/// Gears between rigid frames of two states.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    markers = [Interaction],
    templates = ["Rigid3d"],
    template_rule = FromPair,
    create = |_args| GearSpringForceField::default(),
    data = {
        /// springs `BEGIN_SPRING p1 m1 p2 m2 [AXIS a1 a2] [KS_T k] [KS_R soft hard] [KD kd] [RATIO r] END_SPRING`, repeated (parents then children)
        spring: Str,
        /// output file of the gear angles and forces (debugging output, not supported)
        filename: FileName,
        /// period between outputs
        period: Real = "0",
        /// reinitialise the output file at each time step
        reinit: Bool = "false",
        /// size factor of the drawn axes (rendering only)
        showFactorSize: Real = "1",
    },
    inherit = [Self, RayleighStiffnessData],
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct GearSpringForceField {
    s1: Option<StateId>,
    s2: Option<StateId>,
    springs: Vec<GearSpring>,
    rayleigh_stiffness: f64,
}

impl GearSpringForceField {
    pub fn springs(&self) -> &[GearSpring] {
        &self.springs
    }

    fn second(&self) -> usize {
        usize::from(self.s1 != self.s2)
    }

    fn check_bounds(&self, n1: usize, n2: usize) -> SimResult {
        for (i, s) in self.springs.iter().enumerate() {
            if s.m1.max(s.p1) >= n1 || s.m2.max(s.p2) >= n2 {
                return Err(SimError::new(format!(
                    "spring {i} ({} {} {} {}) reaches beyond the states ({n1} and {n2} frames)",
                    s.p1, s.m1, s.p2, s.m2
                )));
            }
        }
        Ok(())
    }
}

impl Component for GearSpringForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s1, s2) = resolve_pair(cx, Layout::Rigid3)?;
        self.s1 = Some(s1);
        self.s2 = Some(s2);
        let d = cx.data();
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        if !d.get(Self::FILENAME).trim().is_empty() {
            return Err(SimError::unsupported("GearSpringForceField's output file (filename) is not supported yet").hint("remove the attribute"));
        }
        self.springs = parse_gear_springs(d.get(Self::SPRING)).map_err(|m| cx.error(format!("spring: {m}")))?;
        Ok(())
    }

    /// SOFA's `reinit`: the initial angles, and the pivots of children that are their own parent.
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (Some(s1), Some(s2)) = (self.s1, self.s2) else {
            return Err(SimError::new("GearSpringForceField used before init"));
        };
        self.check_bounds(cx.state_size(s1), cx.state_size(s2))
            .map_err(|e| cx.error(e.0.message).hint("spring indices are 0-based frame indices: parent and child in object1, then in object2"))?;
        let xs = [cx.read_vec(s1, VecId::POSITION), cx.read_vec(s2, VecId::POSITION)];
        for s in &mut self.springs {
            for (k, (p, m)) in [(s.p1, s.m1), (s.p2, s.m2)].into_iter().enumerate() {
                let x = xs[k];
                if p == m {
                    s.angle[k] = 0.0;
                    s.previous_angle[k] = 0.0;
                    s.ini[k].copy_from_slice(&x[7 * p..7 * p + 7]);
                } else {
                    let a = angle_around_axis(quat_of(&x[7 * p..]), quat_of(&x[7 * m..]), s.free_axis[k]);
                    s.angle[k] = a;
                    s.previous_angle[k] = a;
                }
            }
        }
        Ok(())
    }
}

impl ForceField for GearSpringForceField {
    fn states(&self) -> settee_core::StateSet {
        self.s1.into_iter().chain(self.s2).collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let j = [0, self.second()];
        self.check_bounds(io.x[0].len() / 7, io.x[j[1]].len() / 7)?;
        let zero = [0.0; 6];
        for s in &mut self.springs {
            let ends = [(s.p1, s.m1), (s.p2, s.m2)];
            let mut child_axis = [[0.0; 3]; 2];
            let mut new_angle = [0.0; 2];
            for k in 0..2 {
                let (p, m) = ends[k];
                let x = io.x[j[k]];
                let vel = |i: usize| if io.v.is_empty() { &zero[..] } else { &io.v[j[k]][6 * i..6 * i + 6] };
                let child = &x[7 * m..7 * m + 7];
                let mut dv: [f64; 6] = std::array::from_fn(|c| -vel(m)[c]);
                if p != m {
                    s.ini[k].copy_from_slice(&x[7 * p..7 * p + 7]);
                    for (d, vp) in dv.iter_mut().zip(vel(p)) {
                        *d += vp;
                    }
                }
                let pivot = s.ini[k];
                let axis = s.free_axis[k];
                let (mc, mp) = (rotation_matrix(quat_of(child)), rotation_matrix(quat_of(&pivot)));
                let w = vector_angle(column(&mc, axis), column(&mp, axis));
                let mut force = [0.0; 6];
                for c in 0..3 {
                    force[c] = (pivot[c] - child[c]) * s.hard_stiffness_trans + dv[c] * s.kd;
                    force[3 + c] = w[c] * s.hard_stiffness_rot + dv[3 + c] * s.kd;
                }
                let f = &mut io.f[j[k]];
                for c in 0..6 {
                    f[6 * m + c] += force[c];
                }
                if p != m {
                    for c in 0..6 {
                        f[6 * p + c] -= force[c];
                    }
                }
                child_axis[k] = column(&mc, axis);
                new_angle[k] = angle_around_axis(quat_of(&pivot), quat_of(child), axis);
            }
            for (k, &measured) in new_angle.iter().enumerate() {
                let mut a = measured;
                while a - s.previous_angle[k] > PI {
                    a -= TWO_OVER_PI;
                }
                while a - s.previous_angle[k] < -PI {
                    a += TWO_OVER_PI;
                }
                s.angle[k] += a - s.previous_angle[k];
                s.previous_angle[k] = a;
            }
            let f = (-s.angle[0] * s.ratio - s.angle[1]) * s.soft_stiffness_rot;
            for (k, scale) in [(0, f), (1, f / s.ratio)] {
                let m = ends[k].1;
                for (o, a) in io.f[j[k]][6 * m + 3..6 * m + 6].iter_mut().zip(child_axis[k]) {
                    *o += a * scale;
                }
            }
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let j = [0, self.second()];
        self.check_bounds(io.x[0].len() / 6, io.x[j[1]].len() / 6)?;
        for s in &self.springs {
            let ends = [(s.p1, s.m1), (s.p2, s.m2)];
            let mut dangle = [0.0; 2];
            for k in 0..2 {
                let (p, m) = ends[k];
                let dx = io.x[j[k]];
                let mut d: [f64; 6] = std::array::from_fn(|c| -dx[6 * m + c]);
                if p != m {
                    for c in 0..6 {
                        d[c] += dx[6 * p + c];
                    }
                }
                let frame = quat_of(&s.ini[k]);
                let mut kr = [s.hard_stiffness_rot; 3];
                kr[s.free_axis[k]] = 0.0;
                let dr = scaled_in_frame(frame, kr, [d[3], d[4], d[5]]);
                let df: [f64; 6] = std::array::from_fn(|c| if c < 3 { d[c] * s.hard_stiffness_trans } else { dr[c - 3] });
                dangle[k] = inverse_rotate(frame, [dx[6 * m + 3], dx[6 * m + 4], dx[6 * m + 5]])[s.free_axis[k]];
                let f = &mut io.f[j[k]];
                for c in 0..6 {
                    f[6 * m + c] += df[c] * k_factor;
                }
                if p != m {
                    for c in 0..6 {
                        f[6 * p + c] -= df[c] * k_factor;
                    }
                }
            }
            let gear = [-s.soft_stiffness_rot * (dangle[0] * s.ratio + dangle[1]), -s.soft_stiffness_rot * (dangle[0] + dangle[1] / s.ratio)];
            for k in 0..2 {
                let mut local = [0.0; 3];
                local[s.free_axis[k]] = gear[k];
                let t = rotate(quat_of(&s.ini[k]), local);
                let m = ends[k].1;
                for (o, tc) in io.f[j[k]][6 * m + 3..6 * m + 6].iter_mut().zip(t) {
                    *o += tc * k_factor;
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
    use super::*;
    use crate::test_support::*;
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    #[test]
    fn spring_text_is_read_with_sofa_defaults_and_carry_over() {
        let sp = parse_gear_springs("BEGIN_SPRING 4 0 6 2 AXIS 1 2 KS_T 2000 KD 1 RATIO 2 END_SPRING\n\t BEGIN_SPRING 4 0 5 1 KS_R 3 4 END_SPRING")
            .unwrap();
        assert_eq!(sp.len(), 2);
        assert_eq!((sp[0].p1, sp[0].m1, sp[0].p2, sp[0].m2, sp[0].free_axis), (4, 0, 6, 2, [1, 2]));
        assert_eq!(
            (sp[0].hard_stiffness_trans, sp[0].soft_stiffness_rot, sp[0].hard_stiffness_rot, sp[0].kd, sp[0].ratio),
            (2000.0, 10000.0, 10000.0, 1.0, 2.0)
        );
        // The second keeps KS_T, KD and RATIO; AXIS goes back to 0 0.
        assert_eq!((sp[1].free_axis, sp[1].hard_stiffness_trans, sp[1].kd, sp[1].ratio), ([0, 0], 2000.0, 1.0, 2.0));
        assert_eq!((sp[1].soft_stiffness_rot, sp[1].hard_stiffness_rot), (3.0, 4.0));
        assert!(parse_gear_springs("BEGIN_SPRING 0 0 1 1 AXIS 3 0 END_SPRING").unwrap_err().contains("axis 3"));
        assert!(parse_gear_springs("BEGIN_SPRING 0 0 1 1 FOO END_SPRING").unwrap_err().contains("FOO"));
    }

    #[test]
    fn angle_about_the_axis_is_signed_by_the_parent_axis() {
        let (s, c) = (0.2f64.sin(), 0.2f64.cos());
        // Child turned 0.4 about y relative to the parent: +0.4 about y, −0.4 about −y.
        assert!((angle_around_axis([0.0, 0.0, 0.0, 1.0], [0.0, s, 0.0, c], 1) - 0.4).abs() < 1e-14);
        assert!((angle_around_axis([0.0, s, 0.0, c], [0.0, 0.0, 0.0, 1.0], 1) + 0.4).abs() < 1e-14);
    }

    /// Two gears of one state: frame 0 and frame 1, each its own pivot (held at its initial
    /// placement), coupled about y with ratio 2.
    fn gear_scene(position: &str) -> (Scene, settee_core::ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", "0 0 0 0 0 0 1  3 0 0 0 0 0 1")]);
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "GearSpringForceField",
            &[("template", "Rigid3d"), ("spring", "BEGIN_SPRING 0 0 1 1 AXIS 1 1 KS_T 1000 KS_R 50 700 KD 0 RATIO 2 END_SPRING")],
        );
        init_root(&mut s, &f).unwrap();
        let scope = MechScope::build(&s, Scene::ROOT);
        let st = scope.states[0];
        let x: Vec<f64> = position.split_whitespace().map(|w| w.parse().unwrap()).collect();
        s.store.get_mut(st).write(VecId::POSITION).copy_from_slice(&x);
        (s, c)
    }

    #[test]
    fn turning_one_gear_drives_the_other_and_pivots_hold_the_centres() {
        // Frame 0 moved by (0.01, 0, 0) and turned 0.1 about y; frame 1 untouched.
        let (sn, cs) = (0.05f64.sin(), 0.05f64.cos());
        let (mut s, _) = gear_scene(&format!("0.01 0 0 0 {sn} 0 {cs}  3 0 0 0 0 0 1"));
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        // Pivot of gear 0: 1000·(−0.01) along x; its y axis still matches the pivot's (no
        // pivot torque). Gear angle of frame 0 about y: +0.1, so F = −50·(0.1·2 + 0) = −10 about
        // y on frame 0 and F/2 = −5 on frame 1.
        let expect0 = [-10.0, 0.0, 0.0, 0.0, -10.0, 0.0];
        let expect1 = [0.0, 0.0, 0.0, 0.0, -5.0, 0.0];
        for c in 0..6 {
            assert!((fv[c] - expect0[c]).abs() < 1e-9, "{fv:?}");
            assert!((fv[6 + c] - expect1[c]).abs() < 1e-9, "{fv:?}");
        }
    }

    #[test]
    fn stiffness_matches_the_force_derivative_for_small_motions_at_rest() {
        // At the initial placement, SOFA's stiffness is the exact derivative of the force for
        // translations and turns about the gear axis (the measured angle, a mean of norms, is
        // not differentiable across the other rotations there).
        let (mut s, _) = gear_scene("0 0 0 0 0 0 1  3 0 0 0 0 0 1");
        let scope = MechScope::build(&s, Scene::ROOT);
        let st = scope.states[0];
        let x0 = s.store.get(st).read(VecId::POSITION).to_vec();
        forces(&mut s, &scope);
        let mut seed = 13;
        let dx: Vec<f64> = (0..12).map(|i| if i % 6 == 3 || i % 6 == 5 { 0.0 } else { lcg(&mut seed) }).collect();
        let df = dforce(&mut s, &scope, &dx, 1.0);
        assert!(df[4].abs() > 1.0 && df[10].abs() > 1.0, "{df:?}");
        let eps = 1e-6;
        let mut fd = [0.0; 12];
        for sign in [1.0, -1.0] {
            let mut x = x0.clone();
            for fr in 0..2 {
                Layout::Rigid3.coord_add_scaled(&mut x[7 * fr..7 * fr + 7], &dx[6 * fr..6 * fr + 6], sign * eps);
            }
            // Fresh angles for each evaluation (the accumulated angles start from the rest).
            let (mut s2, _) = gear_scene(&x.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" "));
            let scope2 = MechScope::build(&s2, Scene::ROOT);
            let f = forces(&mut s2, &scope2);
            for i in 0..12 {
                fd[i] += sign * f[i] / (2.0 * eps);
            }
        }
        for i in 0..12 {
            assert!((fd[i] - df[i]).abs() < 1e-6 * 1000.0, "row {i}: finite difference {} vs addDForce {}", fd[i], df[i]);
        }
    }
}
