//! `SurfacePressureForceField`: a pressure on the triangles and quads of a surface (SOFA's class
//! of that name).
//!
//! The loaded elements are `triangleIndices` / `quadIndices`, or else every triangle / quad of
//! the topology whose vertices are all inside the box `min`–`max` (a zero box: everywhere),
//! tested on the current positions. A triangle `(a b c)` adds `P·(ab × ac)/6` to each vertex; a
//! quad `(a b c d)` adds `p1 = P·(ab × ac)/6` and `p2 = P·(ac × ad)/6`: `p1 + p2` to `a` and `c`,
//! `p1` to `b`, `p2` to `d`. With a `mainDirection`, a triangle's force is scaled by
//! `|n̂·mainDirection|`.
//!
//! `P` is `pressure`, or in `pulseMode` a value moving by `pressureSpeed·dt` at **each force
//! evaluation** between `pressureLowerBound` and `pressure`, as in SOFA. In
//! `volumeConservationMode` it is scaled by `defaultVolume / V` (the first evaluation sets
//! `defaultVolume` when it is −1).
//!
//! With `useTangentStiffness`, the stiffness is the derivative of the triangles' force with
//! respect to their vertices, without the `mainDirection` factor; quads get none. SOFA applies
//! it with `kFactor` alone: `rayleighStiffness` has no effect.

use settee_core::component::ForceField;
use settee_core::role::{MechanicalState, Topology};
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

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

fn at(x: &[f64], i: usize) -> V3 {
    [x[3 * i], x[3 * i + 1], x[3 * i + 2]]
}

/// `[u]×·s`: the matrix of `v ↦ (u × v)·s`, row-major.
fn skew(u: V3, s: f64) -> [[f64; 3]; 3] {
    [[0.0, -u[2] * s, u[1] * s], [u[2] * s, 0.0, -u[0] * s], [-u[1] * s, u[0] * s, 0.0]]
}

/// Pressure on a surface's triangles and quads.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    create = |_| SurfacePressureForceField::default(),
    data = {
        /// pressure (force per unit area)
        pressure: Real = "0",
        /// lower corner of the selection box (with max zero too: no box)
        min: Fixed(3) = "0 0 0",
        /// upper corner of the selection box
        max: Fixed(3) = "0 0 0",
        /// indices of the loaded triangles (empty: the triangles inside the box)
        triangleIndices: Indices,
        /// indices of the loaded quads (empty: the quads inside the box)
        quadIndices: Indices,
        /// cyclic pressure between pressureLowerBound and pressure
        pulseMode: Bool = "false",
        /// lower bound of the pressure in pulse mode
        pressureLowerBound: Real = "0",
        /// pressure change per second in pulse mode (0: |pressure|)
        pressureSpeed: Real = "0",
        /// pressure scaled by defaultVolume / current volume
        volumeConservationMode: Bool = "false",
        /// use the (non-symmetric) stiffness of the triangles' pressure
        useTangentStiffness: Bool = "true",
        /// reference volume of volumeConservationMode (−1: the first evaluation's)
        defaultVolume: Real = "-1",
        /// main direction: a triangle's force is scaled by |n̂·mainDirection| (zero: unused)
        mainDirection: Fixed(3) = "0 0 0",
        /// scale of the drawn forces (rendering only)
        drawForceScale: Real = "0",
        /// Rayleigh damping coefficient related to stiffness (unused by this class, as in SOFA)
        rayleighStiffness: Real = "0",
    },
    links = {
        /// mechanical state (default: the node's context state)
        mstate: MechanicalState,
        /// surface topology (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct SurfacePressureForceField {
    state: Option<StateId>,
    triangles: Vec<[usize; 3]>,
    quads: Vec<[usize; 4]>,
    triangle_indices: Vec<usize>,
    quad_indices: Vec<usize>,
    pressure: f64,
    box_min: V3,
    box_max: V3,
    pulse: bool,
    lower_bound: f64,
    speed: f64,
    volume_conservation: bool,
    tangent_stiffness: bool,
    default_volume: f64,
    main_direction: V3,
    dt: f64,
    /// Pulse mode: the current pressure and whether it is rising.
    pulse_pressure: f64,
    increasing: bool,
    /// Per point, the blocks `(column point, ∂f/∂x)` of the last evaluation.
    stiffness: Vec<Vec<(usize, [[f64; 3]; 3])>>,
}

impl SurfacePressureForceField {
    fn in_box(&self, p: V3) -> bool {
        if self.box_min == [0.0; 3] && self.box_max == [0.0; 3] {
            return true;
        }
        (0..3).all(|c| p[c] >= self.box_min[c] && p[c] <= self.box_max[c])
    }

    /// SOFA's `computePulseModePressure`: one step of the pressure cycle.
    fn next_pulse_pressure(&mut self) -> f64 {
        let step = self.speed * self.dt;
        if self.increasing {
            let upper = if self.pressure > 0.0 { self.pressure } else { self.lower_bound };
            self.pulse_pressure += step;
            if self.pulse_pressure >= upper {
                self.pulse_pressure = upper;
                self.increasing = false;
            }
        } else {
            let lower = if self.pressure > 0.0 { self.lower_bound } else { self.pressure };
            self.pulse_pressure -= step;
            if self.pulse_pressure <= lower {
                self.pulse_pressure = lower;
                self.increasing = true;
            }
        }
        self.pulse_pressure
    }

    /// `Σ (a × b)·c / 6` over the loaded (or all) triangles and quads.
    fn mesh_volume(&self, x: &[f64]) -> f64 {
        let tris: Vec<usize> = if self.triangle_indices.is_empty() { (0..self.triangles.len()).collect() } else { self.triangle_indices.clone() };
        let quads: Vec<usize> = if self.quad_indices.is_empty() { (0..self.quads.len()).collect() } else { self.quad_indices.clone() };
        let mut volume = 0.0;
        for t in tris.iter().map(|&i| self.triangles[i]) {
            volume += dot(cross(at(x, t[0]), at(x, t[1])), at(x, t[2]));
        }
        for q in quads.iter().map(|&i| self.quads[i]) {
            let (a, b, c, d) = (at(x, q[0]), at(x, q[1]), at(x, q[2]), at(x, q[3]));
            volume += dot(cross(a, b), c);
            volume += dot(cross(a, c), d);
        }
        volume / 6.0
    }
}

impl Component for SurfacePressureForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::state_of_template(cx, Layout::Vec3)?;
        self.state = Some(s);
        let mesh = cx.require_mesh()?;
        let d = cx.data();
        self.triangle_indices = d.get(Self::TRIANGLE_INDICES).to_vec();
        self.quad_indices = d.get(Self::QUAD_INDICES).to_vec();
        if let Some(&i) = self.triangle_indices.iter().find(|&&i| i >= mesh.triangles.len()) {
            return Err(cx.error(format!("triangleIndices refers to triangle {i} but the topology has {} triangles", mesh.triangles.len())));
        }
        if let Some(&i) = self.quad_indices.iter().find(|&&i| i >= mesh.quads.len()) {
            return Err(cx.error(format!("quadIndices refers to quad {i} but the topology has {} quads", mesh.quads.len())));
        }
        let n = cx.state_size(s);
        let max_point = mesh.triangles.iter().flatten().chain(mesh.quads.iter().flatten()).copied().max();
        if let Some(p) = max_point.filter(|&p| p >= n) {
            return Err(cx.error(format!("the topology refers to point {p} but the mechanical state has {n} points")));
        }
        self.triangles = mesh.triangles.clone();
        self.quads = mesh.quads.clone();
        let d = cx.data();
        self.pressure = d.get(Self::PRESSURE);
        self.box_min = d.get(Self::MIN);
        self.box_max = d.get(Self::MAX);
        self.pulse = d.get(Self::PULSE_MODE);
        self.lower_bound = d.get(Self::PRESSURE_LOWER_BOUND);
        self.speed = d.get(Self::PRESSURE_SPEED);
        self.volume_conservation = d.get(Self::VOLUME_CONSERVATION_MODE);
        self.tangent_stiffness = d.get(Self::USE_TANGENT_STIFFNESS);
        self.default_volume = d.get(Self::DEFAULT_VOLUME);
        self.main_direction = d.get(Self::MAIN_DIRECTION);
        self.dt = cx.params().dt;
        self.increasing = self.pressure > 0.0;
        self.pulse_pressure = 0.0;
        if self.pulse && self.speed == 0.0 {
            self.speed = self.pressure.abs();
            cx.warn("pressureSpeed is 0 in pulse mode: |pressure| per second is used");
            cx.data_mut().put(Self::PRESSURE_SPEED, self.speed);
        }
        Ok(())
    }
}

impl ForceField for SurfacePressureForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        let n = x.len() / 3;
        if let Some(&q) = self.triangles.iter().flatten().chain(self.quads.iter().flatten()).find(|&&q| q >= n) {
            return Err(SimError::new(format!("SurfacePressureForceField: point {q} is beyond the state's {n} points")));
        }
        self.dt = p.dt;
        let mut pressure = if self.pulse { self.next_pulse_pressure() } else { self.pressure };
        if self.volume_conservation {
            if self.default_volume == -1.0 {
                self.default_volume = self.mesh_volume(x);
            } else if self.default_volume != 0.0 {
                pressure *= self.default_volume / self.mesh_volume(x);
            }
        }
        self.stiffness.clear();
        self.stiffness.resize(n, Vec::new());
        let tris: Vec<usize> = if !self.triangle_indices.is_empty() {
            self.triangle_indices.clone()
        } else {
            (0..self.triangles.len()).filter(|&i| self.triangles[i].iter().all(|&v| self.in_box(at(x, v)))).collect()
        };
        let quads: Vec<usize> = if !self.quad_indices.is_empty() {
            self.quad_indices.clone()
        } else {
            (0..self.quads.len()).filter(|&i| self.quads[i].iter().all(|&v| self.in_box(at(x, v)))).collect()
        };
        let f = &mut io.f[0];
        let scale = pressure / 6.0;
        for t in tris.iter().map(|&i| self.triangles[i]) {
            let (a, b, c) = (at(x, t[0]), at(x, t[1]), at(x, t[2]));
            let (ab, ac, bc) = (sub(b, a), sub(c, a), sub(c, b));
            let normal = cross(ab, ac);
            let mut force = normal.map(|v| v * scale);
            if self.tangent_stiffness {
                // ∂(ab × ac)/∂a = [bc]×, ∂/∂b = −[ac]×, ∂/∂c = [ab]×.
                let blocks = [skew(bc, scale), skew(ac, -scale), skew(ab, scale)];
                for &row in &t {
                    for (k, blk) in blocks.iter().enumerate() {
                        self.stiffness[row].push((t[k], *blk));
                    }
                }
            }
            if self.main_direction != [0.0; 3] {
                let norm = dot(normal, normal).sqrt();
                let unit = if norm > 0.0 { normal.map(|v| v / norm) } else { normal };
                let s = dot(unit, self.main_direction).abs();
                force = force.map(|v| v * s);
            }
            for &v in &t {
                for c in 0..3 {
                    f[3 * v + c] += force[c];
                }
            }
        }
        for q in quads.iter().map(|&i| self.quads[i]) {
            let a = at(x, q[0]);
            let (ab, ac, ad) = (sub(at(x, q[1]), a), sub(at(x, q[2]), a), sub(at(x, q[3]), a));
            let p1 = cross(ab, ac).map(|v| v * scale);
            let p2 = cross(ac, ad).map(|v| v * scale);
            for c in 0..3 {
                f[3 * q[0] + c] += p1[c] + p2[c];
                f[3 * q[1] + c] += p1[c];
                f[3 * q[2] + c] += p1[c] + p2[c];
                f[3 * q[3] + c] += p2[c];
            }
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        if !self.tangent_stiffness {
            return Ok(());
        }
        let dx = io.x[0];
        let f = &mut io.f[0];
        for (i, row) in self.stiffness.iter().enumerate() {
            for (v, m) in row {
                let d = at(dx, *v);
                for (r, mr) in m.iter().enumerate() {
                    f[3 * i + r] += dot(*mr, d) * k_factor;
                }
            }
        }
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        if !self.tangent_stiffness {
            return Ok(());
        }
        let s = self.state.ok_or_else(|| SimError::new("SurfacePressureForceField used before init"))?;
        for (i, row) in self.stiffness.iter().enumerate() {
            for (v, m) in row {
                for (r, mr) in m.iter().enumerate() {
                    for (c, value) in mr.iter().enumerate() {
                        acc.add(s, 3 * i + r, s, 3 * v + c, k_factor * value);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use settee_core::mechanics::{self as mech, MechScope};
    use settee_core::simulation::init_root;
    use settee_core::{Mbk, Scene, VecId};

    fn scene(position: &str, topo: (&str, &str), ff: &[(&str, &str)]) -> (Scene, settee_core::ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        s.node_mut(Scene::ROOT).context.dt = 0.01;
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", position)]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[topo]);
        let c = add(&mut s, &f, Scene::ROOT, "SurfacePressureForceField", ff);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    #[test]
    fn triangle_and_quad_forces_are_the_area_vectors_times_pressure() {
        // Triangle in z = 0 with ab × ac = (0, 0, 2): each vertex gets 6·2/6 = 2 along z.
        let (mut s, _) = scene("0 0 0  2 0 0  0 1 0", ("triangles", "0 1 2"), &[("pressure", "6")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_eq!(forces(&mut s, &scope), [0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0]);
        // Unit quad: p1 = p2 = 6·(0,0,1)/6 → a, c get 2, b, d get 1 (total 6 = P·area).
        let (mut s, _) = scene("0 0 0  1 0 0  1 1 0  0 1 0", ("quads", "0 1 2 3"), &[("pressure", "6")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        let z: Vec<f64> = (0..4).map(|i| fv[3 * i + 2]).collect();
        assert_eq!(z, [2.0, 1.0, 2.0, 1.0]);
        // A box that leaves one vertex out loads nothing.
        let (mut s, _) = scene("0 0 0  2 0 0  0 1 0", ("triangles", "0 1 2"), &[("pressure", "6"), ("min", "-1 -1 -1"), ("max", "1 2 1")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_eq!(max_abs(&forces(&mut s, &scope)), 0.0);
    }

    #[test]
    fn pulse_pressure_rises_and_falls_by_speed_times_dt_per_evaluation() {
        let (mut s, c) = scene("0 0 0  1 0 0  0 1 0", ("triangles", "0 1 2"), &[("pressure", "3"), ("pulseMode", "true"), ("pressureSpeed", "100")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let mut seen = Vec::new();
        for _ in 0..6 {
            // The force on a vertex is P·1/6.
            seen.push(forces(&mut s, &scope)[2] * 6.0);
        }
        let expect = [1.0, 2.0, 3.0, 2.0, 1.0, 0.0];
        for (a, e) in seen.iter().zip(expect) {
            assert!((a - e).abs() < 1e-12, "{seen:?}");
        }
        assert!(s.get::<SurfacePressureForceField>(c).unwrap().increasing);
    }

    #[test]
    fn tangent_stiffness_is_the_force_derivative() {
        let (mut s, _) = scene(
            "0 0 0  1.1 0.1 -0.2  0.2 0.9 0.3  1.2 1.1 0.4",
            ("triangles", "0 1 2  2 1 3"),
            &[("pressure", "50"), ("volumeConservationMode", "false")],
        );
        let scope = MechScope::build(&s, Scene::ROOT);
        let st = scope.states[0];
        let x0 = s.store.get(st).read(VecId::POSITION).to_vec();
        let mut seed = 21;
        let dx: Vec<f64> = (0..12).map(|_| lcg(&mut seed)).collect();
        let eps = 1e-6;
        let eval = |s: &mut Scene, h: f64| {
            let x: Vec<f64> = x0.iter().zip(&dx).map(|(a, d)| a + h * d).collect();
            s.store.get_mut(st).write(VecId::POSITION).copy_from_slice(&x);
            forces(s, &scope)
        };
        let fp = eval(&mut s, eps);
        let fm = eval(&mut s, -eps);
        eval(&mut s, 0.0);
        let df = dforce(&mut s, &scope, &dx, 1.0);
        let scale = max_abs(&df);
        assert!(scale > 1.0);
        for i in 0..12 {
            let fd = (fp[i] - fm[i]) / (2.0 * eps);
            assert!((fd - df[i]).abs() < 1e-7 * scale, "row {i}: finite difference {fd} vs addDForce {}", df[i]);
        }
        let mut b = settee_linalg::MatrixBuilder::new(0);
        mech::assemble(&mut s, &scope, Mbk { m: 0.0, b: 0.0, k: 1.0 }, &mut b).unwrap();
        let mut kdx = vec![0.0; 12];
        b.matrix().mul_vec(&dx, &mut kdx).unwrap();
        for i in 0..12 {
            assert!((kdx[i] - df[i]).abs() < 1e-12 * scale);
        }
    }
}
