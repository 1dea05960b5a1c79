//! `QuadularBendingSprings`: two crossed springs across every edge shared by exactly two quads
//! (SOFA's `QuadularBendingSprings`).
//!
//! With `edgesInQuad[q][j]` the edge `(q[j+1], q[j+2])`, quads are visited in index order and the
//! first quad `t2` visiting an edge (local index `i2`, the other quad `t1` with local index `i1`)
//! creates the springs `(t1[i1], t2[i2+3])` and `(t1[i1+3], t2[i2])` (indices modulo 4): each joins
//! the two vertices next to one end of the edge, across it. Rest lengths come from the rest
//! positions; stiffness and damping are uniform. For a spring `(e0, e1)` of length `d > 1e-4`:
//! `û = (x[e1] − x[e0])/d`, `F = ks·(d − L) + kd·û·(v[e1] − v[e0])`, `f[e0] += F·û`,
//! `f[e1] −= F·û` and the Jacobian `K = (ks − F/d)·ûûᵀ + (F/d)·I`; `addDForce` applies
//! `K·(kFactor·(dx[e1] − dx[e0]))`. The evaluation order is SOFA's (it differs slightly from
//! SpringForceField's).

use crate::RayleighStiffnessData;
use settee_core::component::ForceField;
use settee_core::role::{MechanicalState, Topology};
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, MeshData, SimError, SimResult, StateId};

use settee_core::topology_change::{ElementKind, Follow, TopologyChange};

use crate::bending_topology::{quad_rule, BendingSprings, BendingTopology, SpringRule};
use crate::topo::{self, norm3, sub3};

const MIN_LENGTH: f64 = 1.0e-4;

/// One spring of an edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuadSpring {
    pub edge: [usize; 2],
    pub rest_length: f64,
}

fn springs_of(t: &BendingTopology<4>) -> Vec<(usize, [QuadSpring; 2])> {
    let active = t.active();
    active.chunks_exact(2).map(|p| (p[0].0, [0, 1].map(|k| QuadSpring { edge: p[k].1, rest_length: p[k].2 }))).collect()
}

/// Pairs of crossed bending springs across the interior edges of a quad mesh.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    create = |_| QuadularBendingSprings::new(),
    data = {
        /// uniform stiffness of the springs
        stiffness: Real = "100000",
        /// uniform damping of the springs
        damping: Real = "1",
    },
    inherit = [Self, RayleighStiffnessData],
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
        /// quad topology (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct QuadularBendingSprings {
    state: Option<StateId>,
    ks: f64,
    kd: f64,
    springs: Vec<QuadSpring>,
    edges: Vec<usize>,
    /// Per spring, its 3×3 Jacobian of the last `addForce`.
    dfdx: Vec<[f64; 9]>,
    rayleigh_stiffness: f64,
    /// The per-edge springs, following topological changes.
    topology: Option<BendingTopology<4>>,
}

impl QuadularBendingSprings {
    pub fn new() -> QuadularBendingSprings {
        QuadularBendingSprings {
            state: None,
            ks: 0.0,
            kd: 0.0,
            springs: Vec::new(),
            edges: Vec::new(),
            dfdx: Vec::new(),
            rayleigh_stiffness: 0.0,
            topology: None,
        }
    }

    /// The springs, two per interior edge, in edge order.
    pub fn springs(&self) -> &[QuadSpring] {
        &self.springs
    }

    /// The edge of each pair of springs.
    pub fn spring_edges(&self) -> &[usize] {
        &self.edges
    }

    /// The Jacobian of spring `i` as of the last `addForce`.
    pub fn spring_jacobian(&self, i: usize) -> &[f64; 9] {
        &self.dfdx[i]
    }
}

/// The springs of a quad mesh: two crossed springs for each edge shared by exactly two quads.
impl BendingSprings<4> for QuadularBendingSprings {
    const KIND: ElementKind = ElementKind::Quad;
    const WHAT: &'static str = "quad";
    const RULE: SpringRule<4> = quad_rule;

    fn elements(mesh: &MeshData) -> &[[usize; 4]] {
        &mesh.quads
    }
    fn tracker(&mut self) -> (Option<StateId>, &mut Option<BendingTopology<4>>) {
        (self.state, &mut self.topology)
    }
    fn set_springs(&mut self, t: &BendingTopology<4>) {
        let springs = springs_of(t);
        self.edges = springs.iter().map(|(e, _)| *e).collect();
        self.springs = springs.into_iter().flat_map(|(_, s)| s).collect();
        self.dfdx = vec![[0.0; 9]; self.springs.len()];
    }
}

impl Default for QuadularBendingSprings {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for QuadularBendingSprings {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = topo::state_with_layout(cx, Layout::Vec3)?;
        let d = cx.data();
        self.ks = d.get(Self::STIFFNESS);
        self.kd = d.get(Self::DAMPING);
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        let mesh = cx.require_mesh()?;
        if mesh.quads.is_empty() {
            cx.warn("the topology has no quads: no bending springs");
        }
        self.build_springs(cx, s, &mesh)?;
        self.state = Some(s);
        Ok(())
    }

    /// SOFA's edge-data handlers (quads added/removed, points removed/renumbered) on the whole
    /// log; edges follow as edge-indexed data.
    fn topology_changed(&mut self, cx: &mut InitCtx, _topology: settee_core::ComponentId, changes: &[TopologyChange]) -> SimResult<Follow> {
        self.follow_changes(cx, changes)
    }
}

fn check(springs: &[QuadSpring], n: usize) -> SimResult {
    match springs.iter().flat_map(|s| s.edge).find(|&v| v >= n) {
        Some(v) => Err(SimError::new(format!("bending spring refers to point {v} beyond the state's {n} DOFs"))),
        None => Ok(()),
    }
}

impl ForceField for QuadularBendingSprings {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        check(&self.springs, x.len() / 3)?;
        let v: &[f64] = io.v.first().copied().unwrap_or(&[]);
        let vel = |i: usize, c: usize| v.get(3 * i + c).copied().unwrap_or(0.0);
        let f = &mut io.f[0];
        for (s, m) in self.springs.iter().zip(self.dfdx.iter_mut()) {
            *m = [0.0; 9];
            let [e0, e1] = s.edge;
            let diff = sub3(&x[3 * e1..3 * e1 + 3], &x[3 * e0..3 * e0 + 3]);
            let distance = norm3(diff);
            if distance <= MIN_LENGTH {
                continue;
            }
            let inverse_length = 1.0 / distance;
            let dir = diff.map(|c| c * inverse_length);
            let elongation = distance - s.rest_length;
            let rel = [vel(e1, 0) - vel(e0, 0), vel(e1, 1) - vel(e0, 1), vel(e1, 2) - vel(e0, 2)];
            let elongation_velocity = dir[0] * rel[0] + dir[1] * rel[1] + dir[2] * rel[2];
            let intensity = self.ks * elongation + self.kd * elongation_velocity;
            for c in 0..3 {
                let fc = dir[c] * intensity;
                f[3 * e0 + c] += fc;
                f[3 * e1 + c] -= fc;
            }
            // Jacobian (ks − F/d)·ûûᵀ + (F/d)·I with û = diff / d (a division, as SOFA), the dyad
            // formed first.
            let u = diff.map(|c| c / distance);
            let tgt = intensity * inverse_length;
            for j in 0..3 {
                for k in 0..3 {
                    m[3 * j + k] = u[j] * u[k] * (self.ks - tgt);
                }
                m[3 * j + j] += tgt;
            }
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let dx = io.x[0];
        check(&self.springs, dx.len() / 3)?;
        let df = &mut io.f[0];
        for (s, m) in self.springs.iter().zip(&self.dfdx) {
            let [e0, e1] = s.edge;
            let d = [0, 1, 2].map(|c| (dx[3 * e1 + c] - dx[3 * e0 + c]) * k_factor);
            for j in 0..3 {
                let g = m[3 * j] * d[0] + m[3 * j + 1] * d[1] + m[3 * j + 2] * d[2];
                df[3 * e0 + j] += g;
                df[3 * e1 + j] -= g;
            }
        }
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let st = self.state.ok_or_else(|| SimError::new("QuadularBendingSprings used before init"))?;
        for (s, m) in self.springs.iter().zip(&self.dfdx) {
            let [a, b] = s.edge;
            for i in 0..3 {
                for j in 0..3 {
                    let k = m[3 * i + j] * k_factor;
                    acc.add(st, 3 * a + i, st, 3 * a + j, -k);
                    acc.add(st, 3 * a + i, st, 3 * b + j, k);
                    acc.add(st, 3 * b + i, st, 3 * a + j, k);
                    acc.add(st, 3 * b + i, st, 3 * b + j, -k);
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
    use settee_core::{Scene, VecId};

    use super::QuadularBendingSprings;
    use crate::test_support::*;

    const REST: &str = "0 0 0  1 0 0  1 1 0  0 1 0  2 0 0  2 1 0";

    /// Quads (0 1 2 3) and (1 4 5 2) share the edge (1, 2); the first quad visiting it creates the
    /// springs (5, 3) and (4, 0). Folding the second quad by φ about the edge (x = 1) stretches
    /// nothing but shortens both springs to `√((1 + cos φ)² + sin² φ)`.
    #[test]
    fn one_folded_pair_of_quads() {
        let f = factory();
        let mut s = Scene::new("root");
        let phi = 0.7f64;
        let (c, sn) = (1.0 + phi.cos(), phi.sin());
        let pos = format!("0 0 0  1 0 0  1 1 0  0 1 0  {c} 0 {sn}  {c} 1 {sn}");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("rest_position", REST), ("position", &pos)]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("quads", "0 1 2 3  1 4 5 2")]);
        let id = add(&mut s, &f, Scene::ROOT, "QuadularBendingSprings", &[("stiffness", "500"), ("damping", "0")]);
        init_root(&mut s, &f).unwrap();
        let ff = s.get::<QuadularBendingSprings>(id).unwrap();
        let pairs: Vec<[usize; 2]> = ff.springs().iter().map(|p| p.edge).collect();
        assert_eq!(pairs, [[5, 3], [4, 0]]);
        assert!(ff.springs().iter().all(|p| p.rest_length == 2.0));
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        let d = (c * c + sn * sn).sqrt();
        let fmag = 500.0 * (d - 2.0);
        let u = [c / d, 0.0, sn / d]; // from the first end (3 or 0) to the second (5 or 4)
                                      // f[e0] += F·û, f[e1] −= F·û with e0 = 5 / 4 (the first end) and û from e0 to e1: −u.
        let mut expected = vec![0.0; 18];
        for (e0, e1) in [(5usize, 3usize), (4, 0)] {
            for k in 0..3 {
                expected[3 * e0 + k] += -u[k] * fmag;
                expected[3 * e1 + k] -= -u[k] * fmag;
            }
        }
        assert_close(&fv, &expected, 1e-10);
        let dx = random_vec(18, 21);
        check_fd(&mut s, &dx, 1e-6, 1e-6);
        check_matrix(&mut s, &dx);
    }

    #[test]
    fn grid_of_quads_has_consistent_derivatives() {
        let (f, mut s) = state_scene(&[]);
        add(&mut s, &f, Scene::ROOT, "RegularGridTopology", &[("n", "3 1 3"), ("min", "0 0 0"), ("max", "2 0 2")]);
        let id = add(&mut s, &f, Scene::ROOT, "QuadularBendingSprings", &[("stiffness", "300"), ("damping", "1")]);
        init_root(&mut s, &f).unwrap();
        // 4 interior edges, 2 springs each.
        assert_eq!(s.get::<QuadularBendingSprings>(id).unwrap().springs().len(), 8);
        let scope = MechScope::build(&s, Scene::ROOT);
        let mut x = Vec::new();
        settee_core::mechanics::gather(&s, &scope, VecId::POSITION, &mut x);
        let x: Vec<f64> = x.iter().zip(random_vec(27, 2)).map(|(a, b)| a + 0.2 * b).collect();
        settee_core::mechanics::scatter(&mut s, &scope, VecId::POSITION, &x);
        let dx = random_vec(27, 13);
        check_fd(&mut s, &dx, 1e-6, 1e-6);
        check_matrix(&mut s, &dx);
    }

    // ----- topological changes ------------------------------------------------------------

    use settee_core::testing::edits;
    use settee_core::topology_change::{propagate, ElementKind};
    use settee_core::ComponentId;
    use settee_topology::SetTopologyContainer;

    const GRID: &str = "0 0 0  1 0 0  2 0 0  0 1 0  1 1 0.2  2 1 0  0 2 0  1 2 0  2 2 0.1";

    fn summary(ff: &QuadularBendingSprings) -> Vec<(usize, [usize; 2], f64)> {
        let mut v: Vec<_> =
            ff.springs().chunks(2).zip(ff.spring_edges()).flat_map(|(p, &e)| p.iter().map(move |q| (e, q.edge, q.rest_length))).collect();
        v.iter_mut().for_each(|(_, p, _)| p.sort());
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v
    }

    fn scene(quads: &str, edges: Option<&str>, rest: &str) -> (Scene, ComponentId, ComponentId) {
        let (f, mut s) = state_scene(&[("position", rest)]);
        let mut a = vec![("quads", quads)];
        if let Some(e) = edges {
            a.push(("edges", e));
        }
        let t = add(&mut s, &f, Scene::ROOT, "QuadSetTopologyContainer", &a);
        let c = add(&mut s, &f, Scene::ROOT, "QuadularBendingSprings", &[("stiffness", "300"), ("damping", "0")]);
        init_root(&mut s, &f).unwrap();
        (s, t, c)
    }

    fn flat<const N: usize>(v: &[[usize; N]]) -> String {
        v.iter().flatten().map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn quads_removed_and_added_keep_the_springs_of_the_current_mesh() {
        let (mut s, t, c) = scene("0 1 4 3  1 2 5 4  3 4 7 6  4 5 8 7", None, GRID);
        assert_eq!(s.get::<QuadularBendingSprings>(c).unwrap().springs().len(), 8);
        let change = |s: &mut Scene, f: &dyn Fn(&mut settee_core::MeshData, &mut usize) -> Vec<settee_core::topology_change::TopologyChange>| {
            let tp = s.get_mut::<SetTopologyContainer>(t).unwrap().topo_mut();
            let (mut m, mut n) = (tp.mesh.clone(), tp.nb_points);
            let log = f(&mut m, &mut n);
            (tp.mesh, tp.nb_points) = (m, n);
            propagate(s, t, &log).unwrap();
        };
        // Quad 3 goes with its outer edges and point 8: the inner edges (4, 5) and (4, 7) are on
        // the border now, (1, 4) and (3, 4) keep their springs.
        change(&mut s, &|m, n| edits::remove_surface(m, n, ElementKind::Quad, &[3]));
        let ff = s.get::<QuadularBendingSprings>(c).unwrap();
        assert_eq!(ff.springs().len(), 4);
        let rest8: String = GRID.split_whitespace().take(24).collect::<Vec<_>>().join(" ");
        let mesh = s.mesh_of(t).unwrap().clone();
        let (fresh, _, fc) = scene(&flat(&mesh.quads), Some(&flat(&mesh.edges)), &rest8);
        assert_eq!(summary(ff), summary(fresh.get::<QuadularBendingSprings>(fc).unwrap()));
        // Back again (with a point at the origin: a new point without ancestors is zero).
        change(&mut s, &|m, n| edits::add_surface(m, n, ElementKind::Quad, 1, &[vec![4, 5, 8, 7]]));
        let ff = s.get::<QuadularBendingSprings>(c).unwrap();
        assert_eq!(ff.springs().len(), 8);
        let mesh = s.mesh_of(t).unwrap().clone();
        let (fresh, _, fc) = scene(&flat(&mesh.quads), Some(&flat(&mesh.edges)), &format!("{rest8}  0 0 0"));
        assert_eq!(summary(ff), summary(fresh.get::<QuadularBendingSprings>(fc).unwrap()));
    }
}
