//! `TaitSurfacePressureForceField`: the pressure of the volume enclosed by a surface mesh,
//! following Tait's equation `P = p0 − B·((V/V0)^γ − 1)` (SOFA's class of that name).
//!
//! The surface is the topology's triangles, then each quad `(a b c d)` as `(a b c)` and
//! `(c d a)`. The volume is `Σ ((a−o)×(b−o))·(c−o) / 6` with `o` the mean of all points; the rest
//! volume `V0` is the volume of the rest positions plus the injected volume, which moves towards
//! `injectedVolume` by at most `maxInjectionRate·dt` at the beginning of each step.
//!
//! The force is `f_i = P·∇V_i` with `∇V_i = Σ_{triangles ∋ i} ((x1 − x0) × (x2 − x0)) / 6`, and
//! its derivative `df = kFactor·(dP/dV·(∇V·dx)·∇V + P·d∇V)`. `dP/dV` is `−B/V0` for `γ = 1`,
//! `−B·γ·(V/V0)^γ/V` otherwise; with `B = 0`, `γ = 0` or `V0 = 0` the pressure is `p0`. The
//! assembled matrix, as SOFA's, leaves out the `P·d∇V` diagonal blocks (zero on closed surfaces).
//!
//! The output Data `currentVolume`, `currentPressure` and `currentStiffness` are written at init
//! and at the beginning of each step (the values of the last force evaluation).

use settee_core::component::ForceField;
use settee_core::role::{MechanicalState, Topology};
use settee_core::{component, Component, ComponentId, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, Scene, SimError, SimResult, StateId};

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

/// The enclosed volume and the area of the triangles, measured from the mean of the points.
pub fn mesh_volume_and_area(triangles: &[[usize; 3]], x: &[f64]) -> (f64, f64) {
    let n = x.len() / 3;
    if n == 0 {
        return (0.0, 0.0);
    }
    let mut center = [0.0; 3];
    for i in 0..n {
        for c in 0..3 {
            center[c] += x[3 * i + c];
        }
    }
    let center = center.map(|c| c / n as f64);
    let (mut volume6, mut area2) = (0.0, 0.0);
    for t in triangles {
        let a = sub(at(x, t[0]), center);
        let b = sub(at(x, t[1]), center);
        let c = sub(at(x, t[2]), center);
        volume6 += dot(cross(a, b), c);
        let n = cross(sub(b, a), sub(c, a));
        area2 += dot(n, n).sqrt();
    }
    (volume6 / 6.0, area2 / 2.0)
}

/// Tait's law: `(pressure, dP/dV)` at volume `v` for the rest volume `v0`.
pub fn tait_pressure(p0: f64, bulk: f64, gamma: f64, v: f64, v0: f64) -> (f64, f64) {
    if bulk == 0.0 || gamma == 0.0 || v0 == 0.0 {
        (p0, 0.0)
    } else if gamma == 1.0 {
        (p0 - bulk * (v / v0 - 1.0), -bulk / v0)
    } else {
        let ratio = (v / v0).powf(gamma);
        let stiffness = if v == 0.0 { 0.0 } else { -bulk * gamma * ratio / v };
        (p0 - bulk * (ratio - 1.0), stiffness)
    }
}

/// Pressure of the volume enclosed by a surface, following Tait's equation.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    create = |_| TaitSurfacePressureForceField::default(),
    data = {
        /// rest pressure, when V = V0
        p0: Real = "0",
        /// bulk modulus (resistance to uniform compression)
        B: Real = "0",
        /// exponent of Tait's equation
        gamma: Real = "0",
        /// volume injected (or extracted) since the start of the simulation
        injectedVolume: Real = "0",
        /// maximum injection rate (volume per second)
        maxInjectionRate: Real = "1000",
        /// output: volume of the rest positions
        initialVolume: Real = "0",
        /// output: injected volume reached so far (limited by maxInjectionRate)
        currentInjectedVolume: Real = "0",
        /// output: rest volume (initialVolume + currentInjectedVolume)
        v0: Real = "0",
        /// output: volume at the last force evaluation
        currentVolume: Real = "0",
        /// output: pressure at the last force evaluation
        currentPressure: Real = "0",
        /// output: dP/dV at the last force evaluation
        currentStiffness: Real = "0",
        /// output: triangles the pressure acts on (mesh triangles, then two per quad)
        pressureTriangles: IndexTuples(3),
        /// output: area of the rest surface
        initialSurfaceArea: Real = "0",
        /// output: area of the surface at the last force evaluation
        currentSurfaceArea: Real = "0",
        /// scale of the drawn force vectors (rendering only)
        drawForceScale: Real = "0.001",
        /// colour of the drawn force vectors (rendering only)
        drawForceColor: Color = "0 1 1 1",
        /// output: volume after a topology change
        volumeAfterTC: Real = "0",
        /// output: surface area after a topology change
        surfaceAreaAfterTC: Real = "0",
        /// Rayleigh damping coefficient related to stiffness
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
pub struct TaitSurfacePressureForceField {
    state: Option<StateId>,
    triangles: Vec<[usize; 3]>,
    p0: f64,
    bulk: f64,
    gamma: f64,
    initial_volume: f64,
    current_injected: f64,
    v0: f64,
    /// Of the last force evaluation.
    volume: f64,
    area: f64,
    pressure: f64,
    stiffness: f64,
    grad_v: Vec<V3>,
    /// Positions of the last force evaluation (SOFA's stiffness reads the current positions).
    positions: Vec<f64>,
    rayleigh_stiffness: f64,
}

impl TaitSurfacePressureForceField {
    /// `(volume, pressure, dP/dV)` of the last force evaluation.
    pub fn current(&self) -> (f64, f64, f64) {
        (self.volume, self.pressure, self.stiffness)
    }

    pub fn rest_volume(&self) -> f64 {
        self.v0
    }

    fn evaluate(&mut self, x: &[f64]) {
        let (v, a) = mesh_volume_and_area(&self.triangles, x);
        self.volume = v;
        self.area = a;
        (self.pressure, self.stiffness) = tait_pressure(self.p0, self.bulk, self.gamma, v, self.v0);
    }

    fn write_outputs(&self, d: &mut settee_core::DataSet) {
        d.put(Self::CURRENT_INJECTED_VOLUME, self.current_injected);
        d.put(Self::V0, self.v0);
        d.put(Self::CURRENT_VOLUME, self.volume);
        d.put(Self::CURRENT_SURFACE_AREA, self.area);
        d.put(Self::CURRENT_PRESSURE, self.pressure);
        d.put(Self::CURRENT_STIFFNESS, self.stiffness);
    }
}

impl Component for TaitSurfacePressureForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::state_of_template(cx, Layout::Vec3)?;
        self.state = Some(s);
        let mesh = cx.require_mesh()?;
        let mut triangles = mesh.triangles.clone();
        for q in &mesh.quads {
            triangles.push([q[0], q[1], q[2]]);
            triangles.push([q[2], q[3], q[0]]);
        }
        let n = cx.state_size(s);
        if let Some(&p) = triangles.iter().flatten().find(|&&p| p >= n) {
            return Err(cx.error(format!("the surface refers to point {p} but the mechanical state has {n} points")));
        }
        self.triangles = triangles;
        let d = cx.data();
        self.p0 = d.get(Self::P0);
        self.bulk = d.get(Self::B);
        self.gamma = d.get(Self::GAMMA);
        self.current_injected = d.get(Self::CURRENT_INJECTED_VOLUME);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        let rest = cx.rest_or_position(s);
        let (v, a) = mesh_volume_and_area(&self.triangles, &rest);
        self.initial_volume = v;
        self.v0 = v + self.current_injected;
        let x = cx.read_vec(s, settee_core::VecId::POSITION).to_vec();
        self.evaluate(&x);
        let dm = cx.data_mut();
        dm.put(Self::PRESSURE_TRIANGLES, self.triangles.iter().flatten().copied().collect::<Vec<usize>>());
        dm.put(Self::INITIAL_VOLUME, v);
        dm.put(Self::VOLUME_AFTER_TC, v);
        dm.put(Self::INITIAL_SURFACE_AREA, a);
        dm.put(Self::SURFACE_AREA_AFTER_TC, a);
        self.write_outputs(dm);
        Ok(())
    }

    /// Moves the injected volume towards `injectedVolume` (SOFA's AnimateBeginEvent handler).
    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        scene.pull_links(me);
        let dt = scene.params(scene.entry(me).node).dt;
        let d = &scene.entry(me).data;
        let (target, rate) = (d.get(Self::INJECTED_VOLUME), d.get(Self::MAX_INJECTION_RATE));
        if target != self.current_injected {
            let step = rate * dt;
            if (target - self.current_injected).abs() <= step {
                self.current_injected = target;
            } else if target < self.current_injected {
                self.current_injected -= step;
            } else {
                self.current_injected += step;
            }
        }
        self.v0 = self.initial_volume + self.current_injected;
        self.write_outputs(&mut scene.entry_mut(me).data);
        Ok(())
    }
}

impl ForceField for TaitSurfacePressureForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        let n = x.len() / 3;
        if let Some(&p) = self.triangles.iter().flatten().find(|&&p| p >= n) {
            return Err(SimError::new(format!("TaitSurfacePressureForceField: point {p} is beyond the state's {n} points")));
        }
        self.evaluate(x);
        self.positions.clear();
        self.positions.extend_from_slice(x);
        self.grad_v.clear();
        self.grad_v.resize(n, [0.0; 3]);
        for t in &self.triangles {
            let x0 = at(x, t[0]);
            let normal = cross(sub(at(x, t[1]), x0), sub(at(x, t[2]), x0));
            for &v in t {
                for (g, nc) in self.grad_v[v].iter_mut().zip(normal) {
                    *g += nc;
                }
            }
        }
        let f = &mut io.f[0];
        for (i, g) in self.grad_v.iter_mut().enumerate() {
            *g = g.map(|c| c / 6.0);
            for c in 0..3 {
                f[3 * i + c] += g[c] * self.pressure;
            }
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let dx = io.x[0];
        let n = dx.len() / 3;
        if self.grad_v.len() != n {
            return Err(SimError::new("TaitSurfacePressureForceField: addDForce before addForce"));
        }
        let x = self.positions.as_slice();
        let mut dv = 0.0;
        for (i, g) in self.grad_v.iter().enumerate() {
            dv += dot(*g, at(dx, i));
        }
        let f = &mut io.f[0];
        let scale1 = k_factor * self.stiffness * dv;
        for (i, g) in self.grad_v.iter().enumerate() {
            for c in 0..3 {
                f[3 * i + c] += g[c] * scale1;
            }
        }
        let scale2 = k_factor * self.pressure / 6.0;
        for t in &self.triangles {
            let (x0, d0) = (at(x, t[0]), at(dx, t[0]));
            let a = cross(sub(at(dx, t[1]), d0), sub(at(x, t[2]), x0));
            let b = cross(sub(at(x, t[1]), x0), sub(at(dx, t[2]), d0));
            for &v in t {
                for c in 0..3 {
                    f[3 * v + c] += (a[c] + b[c]) * scale2;
                }
            }
        }
        Ok(())
    }

    /// SOFA's `buildStiffnessMatrix`: `dP/dV·∇V_i∇V_jᵀ` for every pair of points, and per
    /// triangle `(a b c)` the blocks `[x_c − x_b]×` in column `a`, `[x_a − x_c]×` in column `b`,
    /// `[x_b − x_a]×` in column `c` (times `P/6`), except on the diagonal.
    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("TaitSurfacePressureForceField used before init"))?;
        let x = self.positions.as_slice();
        if self.stiffness != 0.0 {
            let scale = k_factor * self.stiffness;
            for (i, gi) in self.grad_v.iter().enumerate() {
                for (j, gj) in self.grad_v.iter().enumerate() {
                    for (a, ga) in gi.iter().enumerate() {
                        for (b, gb) in gj.iter().enumerate() {
                            acc.add(s, 3 * i + a, s, 3 * j + b, ga * scale * gb);
                        }
                    }
                }
            }
        }
        if self.pressure != 0.0 {
            let scale = k_factor * self.pressure / 6.0;
            for t in &self.triangles {
                let p = |k: usize| at(x, t[k]);
                // Column k of the triangle's blocks: the skew matrix of the opposite edge.
                let edges = [sub(p(2), p(1)), sub(p(0), p(2)), sub(p(1), p(0))].map(|e| e.map(|c| c * scale));
                for (row, &ti) in t.iter().enumerate() {
                    for (col, &tj) in t.iter().enumerate() {
                        if row == col {
                            continue;
                        }
                        let u = edges[col];
                        let m = [[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]];
                        for (a, row) in m.iter().enumerate() {
                            for (b, v) in row.iter().enumerate() {
                                acc.add(s, 3 * ti + a, s, 3 * tj + b, *v);
                            }
                        }
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
#[allow(clippy::disallowed_methods)] // tests read output Data by name
mod tests {
    use super::*;
    use crate::test_support::*;
    use settee_core::mechanics::{self as mech, MechScope};
    use settee_core::simulation::init_root;
    use settee_core::{Mbk, VecId};

    /// The unit corner tetrahedron, outward triangles; positions scaled by `scale` from the rest.
    const TETRA: &str = "0 2 1  0 1 3  0 3 2  1 2 3";

    fn tetra_scene(position: &str, ff: &[(&str, &str)]) -> (Scene, ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", position), ("rest_position", "0 0 0  1 0 0  0 1 0  0 0 1")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", TETRA)]);
        let c = add(&mut s, &f, Scene::ROOT, "TaitSurfacePressureForceField", ff);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    #[test]
    fn tait_law_and_volume_gradient_on_a_scaled_tetrahedron() {
        let (mut s, c) = tetra_scene("0 0 0  1.1 0 0  0 1.1 0  0 0 1.1", &[("B", "10000"), ("gamma", "5"), ("p0", "2")]);
        let d = &s.entry(c).data;
        assert!((d.get(TaitSurfacePressureForceField::INITIAL_VOLUME) - 1.0 / 6.0).abs() < 1e-15);
        assert!((d.get(TaitSurfacePressureForceField::INITIAL_SURFACE_AREA) - (1.5 + 3f64.sqrt() / 2.0)).abs() < 1e-14);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        let v = 1.331 / 6.0;
        let ratio = 1.1f64.powi(15);
        let pressure = 2.0 - 10000.0 * (ratio - 1.0);
        let ff = s.get::<TaitSurfacePressureForceField>(c).unwrap();
        let (cv, cp, ck) = ff.current();
        assert!((cv - v).abs() < 1e-15 && (cp - pressure).abs() < 1e-9, "{cv} {cp}");
        assert!((ck - (-10000.0 * 5.0 * ratio / v)).abs() < 1e-7, "{ck}");
        // ∇V: the normals (each scaled by 1.21) of the faces around each vertex, over 6: −(1,1,1)
        // for vertex 0, the axis of the vertex for the others.
        let g = 1.21 / 6.0 * pressure;
        let expect = [-g, -g, -g, g, 0.0, 0.0, 0.0, g, 0.0, 0.0, 0.0, g];
        for i in 0..12 {
            assert!((fv[i] - expect[i]).abs() < 1e-9, "{fv:?} vs {expect:?}");
        }
    }

    #[test]
    fn constant_pressure_without_bulk_modulus() {
        let (mut s, _) = tetra_scene("0 0 0  1 0 0  0 1 0  0 0 1", &[("p0", "3")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        // Total force of a closed surface under uniform pressure is zero; vertex 1 gets
        // 3·((0,0,−1) + (0,−1,0) + (1,1,1))/6.
        for c in 0..3 {
            assert!((0..4).map(|i| fv[3 * i + c]).sum::<f64>().abs() < 1e-15);
        }
        for (c, e) in [0.5, 0.0, 0.0].iter().enumerate() {
            assert!((fv[3 + c] - e).abs() < 1e-15, "{fv:?}");
        }
    }

    #[test]
    fn stiffness_is_the_force_derivative_on_a_closed_surface() {
        let (mut s, _) = tetra_scene("0.05 -0.02 0.01  1.1 0.03 -0.04  -0.02 0.95 0.06  0.01 0.04 1.2", &[("B", "100"), ("gamma", "5"), ("p0", "2")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let st = scope.states[0];
        let x0 = s.store.get(st).read(VecId::POSITION).to_vec();
        let mut seed = 9;
        let dx: Vec<f64> = (0..12).map(|_| lcg(&mut seed)).collect();
        let eps = 1e-6;
        let at_shift = |s: &mut Scene, h: f64| {
            let x: Vec<f64> = x0.iter().zip(&dx).map(|(a, d)| a + h * d).collect();
            s.store.get_mut(st).write(VecId::POSITION).copy_from_slice(&x);
            forces(s, &scope)
        };
        let fp = at_shift(&mut s, eps);
        let fm = at_shift(&mut s, -eps);
        at_shift(&mut s, 0.0);
        let df = dforce(&mut s, &scope, &dx, 1.0);
        let scale = df.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 10.0, "{df:?}");
        for i in 0..12 {
            let fd = (fp[i] - fm[i]) / (2.0 * eps);
            assert!((fd - df[i]).abs() < 1e-7 * scale, "row {i}: finite difference {fd} vs addDForce {}", df[i]);
        }
        let mut b = settee_linalg::MatrixBuilder::new(0);
        mech::assemble(&mut s, &scope, Mbk { m: 0.0, b: 0.0, k: 1.0 }, &mut b).unwrap();
        let mut kdx = vec![0.0; 12];
        b.matrix().mul_vec(&dx, &mut kdx).unwrap();
        for i in 0..12 {
            assert!((kdx[i] - df[i]).abs() < 1e-12 * scale, "row {i}: K·dx {} vs addDForce {}", kdx[i], df[i]);
        }
    }

    #[test]
    fn injected_volume_ramps_at_the_maximum_rate_and_quads_are_split() {
        let f = factory();
        let mut s = Scene::new("root");
        s.node_mut(Scene::ROOT).context.dt = 0.01;
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0  1 1 0  0 1 0  0 0 1  1 0 1  1 1 1  0 1 1")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("quads", "0 3 2 1  4 5 6 7  0 1 5 4  1 2 6 5  2 3 7 6  3 0 4 7")]);
        let c = add(&mut s, &f, Scene::ROOT, "TaitSurfacePressureForceField", &[("injectedVolume", "0.025"), ("maxInjectionRate", "1")]);
        init_root(&mut s, &f).unwrap();
        let d = &s.entry(c).data;
        assert_eq!(d.get(TaitSurfacePressureForceField::PRESSURE_TRIANGLES).len(), 36);
        assert!((d.get(TaitSurfacePressureForceField::INITIAL_VOLUME) - 1.0).abs() < 1e-15);
        assert!((d.get(TaitSurfacePressureForceField::INITIAL_SURFACE_AREA) - 6.0).abs() < 1e-14);
        for expect in [0.01, 0.02, 0.025, 0.025] {
            settee_core::simulation::animate_begin(&mut s).unwrap();
            let ff = s.get::<TaitSurfacePressureForceField>(c).unwrap();
            assert!((ff.rest_volume() - (1.0 + expect)).abs() < 1e-15, "{}", ff.rest_volume());
            assert!((s.entry(c).data.get(TaitSurfacePressureForceField::CURRENT_INJECTED_VOLUME) - expect).abs() < 1e-15);
        }
    }
}
