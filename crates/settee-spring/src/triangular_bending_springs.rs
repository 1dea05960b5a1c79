//! `TriangularBendingSprings`: one linear spring across every edge shared by exactly two triangles,
//! joining the two vertices opposite the edge (forcefields-mappings spec §2.4).
//!
//! Triangles are visited in index order; the first triangle that visits an edge creates its
//! spring, from the vertex of the other triangle opposite the edge (`m1`) to its own opposite
//! vertex (`m2`), with the rest length of the rest positions and the uniform `stiffness` and
//! `damping`. Edges on a border or shared by more than two triangles have no spring. Forces are
//! SpringForceField's, except that a spring shorter than 1e-4 does nothing; springs are applied
//! in edge order.

use crate::RayleighStiffnessData;
use settee_core::component::ForceField;
use settee_core::role::{MechanicalState, Topology};
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, MeshData, SimError, SimResult, StateId};

use settee_core::topology_change::{ElementKind, Follow, TopologyChange};

use crate::bending_topology::{triangle_rule, BendingSprings, BendingTopology, SpringRule};
use crate::kernel::SpringKernel;
use crate::spring_force_field::LinearSpring;
use crate::topo;

/// Below this length a bending spring produces neither force nor stiffness.
const MIN_LENGTH: f64 = 1.0e-4;

fn springs_of(t: &BendingTopology<3>, ks: f64, kd: f64) -> Vec<(usize, LinearSpring)> {
    t.active().into_iter().map(|(e, [m1, m2], l)| (e, LinearSpring::new(m1, m2, ks, kd, l))).collect()
}

/// Bending springs across the interior edges of a triangle mesh, between the vertices opposite each edge.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    create = |_| TriangularBendingSprings::new(),
    data = {
        /// uniform stiffness of the bending springs
        stiffness: Real = "100000",
        /// uniform damping of the bending springs
        damping: Real = "1",
        /// draw the springs (rendering only)
        showSprings: Bool = "true",
    },
    inherit = [Self, RayleighStiffnessData],
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
        /// triangle topology (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct TriangularBendingSprings {
    state: Option<StateId>,
    kernel: SpringKernel,
    /// The active springs in edge order, with their edge index.
    springs: Vec<LinearSpring>,
    edges: Vec<usize>,
    /// Per spring, the 3×3 Jacobian of the last `addForce`.
    dfdx: Vec<f64>,
    rayleigh_stiffness: f64,
    ks: f64,
    kd: f64,
    /// The per-edge springs, following topological changes.
    topology: Option<BendingTopology<3>>,
}

impl TriangularBendingSprings {
    pub fn new() -> TriangularBendingSprings {
        TriangularBendingSprings {
            state: None,
            kernel: SpringKernel::new(Layout::Vec3, MIN_LENGTH),
            springs: Vec::new(),
            edges: Vec::new(),
            dfdx: Vec::new(),
            rayleigh_stiffness: 0.0,
            ks: 0.0,
            kd: 0.0,
            topology: None,
        }
    }

    /// The springs (`m1` in the other triangle, `m2` in the first triangle visiting the edge).
    pub fn springs(&self) -> &[LinearSpring] {
        &self.springs
    }

    /// The edge of each spring.
    pub fn spring_edges(&self) -> &[usize] {
        &self.edges
    }

    /// The Jacobian of spring `i` (3×3, row-major) as of the last `addForce`.
    pub fn spring_jacobian(&self, i: usize) -> &[f64] {
        &self.dfdx[9 * i..9 * i + 9]
    }
}

/// The springs of a triangle mesh: for each edge shared by exactly two triangles, from the
/// vertex of the other triangle opposite the edge to that of the first triangle visiting it.
impl BendingSprings<3> for TriangularBendingSprings {
    const KIND: ElementKind = ElementKind::Triangle;
    const WHAT: &'static str = "triangle";
    const RULE: SpringRule<3> = triangle_rule;

    fn elements(mesh: &MeshData) -> &[[usize; 3]] {
        &mesh.triangles
    }
    fn tracker(&mut self) -> (Option<StateId>, &mut Option<BendingTopology<3>>) {
        (self.state, &mut self.topology)
    }
    fn set_springs(&mut self, t: &BendingTopology<3>) {
        let springs = springs_of(t, self.ks, self.kd);
        self.edges = springs.iter().map(|(e, _)| *e).collect();
        self.springs = springs.into_iter().map(|(_, s)| s).collect();
        // SOFA zeroes the Jacobian of new edges; every one is recomputed by the next addForce.
        self.dfdx = vec![0.0; 9 * self.springs.len()];
    }
}

impl Default for TriangularBendingSprings {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for TriangularBendingSprings {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = topo::state_with_layout(cx, Layout::Vec3)?;
        let d = cx.data();
        let (ks, kd) = (d.get(Self::STIFFNESS), d.get(Self::DAMPING));
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        if ks < 0.0 {
            cx.warn(format!("negative stiffness {ks}"));
        }
        if kd < 0.0 {
            cx.warn(format!("negative damping {kd}"));
        }
        let mesh = cx.require_mesh()?;
        if mesh.triangles.is_empty() {
            return Err(cx.error("the topology has no triangles").hint("TriangularBendingSprings needs a triangle topology"));
        }
        (self.ks, self.kd) = (ks, kd);
        self.build_springs(cx, s, &mesh)?;
        self.state = Some(s);
        Ok(())
    }

    /// SOFA's edge-data handlers (triangles added/removed, points removed/renumbered) on the
    /// whole log; edges follow as edge-indexed data.
    fn topology_changed(&mut self, cx: &mut InitCtx, _topology: settee_core::ComponentId, changes: &[TopologyChange]) -> SimResult<Follow> {
        self.follow_changes(cx, changes)
    }
}

impl ForceField for TriangularBendingSprings {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let kernel = self.kernel;
        let n = io.x[0].len() / 3;
        kernel.check_bounds(&self.springs, n, n)?;
        for (s, m) in self.springs.iter().zip(self.dfdx.chunks_exact_mut(9)) {
            kernel.add_force(io, 0, s, m);
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let kernel = self.kernel;
        let n = io.x[0].len() / 3;
        kernel.check_bounds(&self.springs, n, n)?;
        kernel.add_dforce_all(io, 0, &self.springs, &self.dfdx, k_factor);
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("TriangularBendingSprings used before init"))?;
        for (sp, m) in self.springs.iter().zip(self.dfdx.chunks_exact(9)) {
            self.kernel.add_stiffness(acc, s, s, sp, m, k_factor);
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

    use super::TriangularBendingSprings;
    use crate::test_support::*;

    /// Two triangles `(0 1 2)` and `(1 0 3)` sharing the edge (0, 1) along x, flat at rest; the
    /// first one is rotated by 60° about the edge: point 2 moves from (0.5, 1, 0) to
    /// (0.5, cos 60°, sin 60°).
    #[test]
    fn one_bent_pair_of_triangles() {
        let f = factory();
        let mut s = Scene::new("root");
        let (c60, s60) = (0.5f64, 3f64.sqrt() / 2.0);
        let pos = format!("0 0 0  1 0 0  0.5 {c60} {s60}  0.5 -1 0");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("rest_position", "0 0 0  1 0 0  0.5 1 0  0.5 -1 0"), ("position", &pos)]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 2  1 0 3")]);
        let c = add(&mut s, &f, Scene::ROOT, "TriangularBendingSprings", &[("stiffness", "1000"), ("damping", "0")]);
        init_root(&mut s, &f).unwrap();
        let ff = s.get::<TriangularBendingSprings>(c).unwrap();
        assert_eq!(ff.springs().len(), 1);
        // Created by triangle 0 for its edge (0, 1): m1 in the other triangle, m2 in its own.
        let sp = ff.springs()[0];
        assert_eq!((sp.m1, sp.m2, sp.initpos, sp.ks, sp.kd), (3, 2, 2.0, 1000.0, 0.0));
        assert_eq!(ff.spring_edges(), &[2]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        // d = |x2 − x3| = √3: F = 1000·(√3 − 2) along û = (x2 − x3)/d.
        let d = 3f64.sqrt();
        let u = [0.0, (c60 + 1.0) / d, s60 / d];
        let fmag = 1000.0 * (d - 2.0);
        let expected = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -fmag * u[0], -fmag * u[1], -fmag * u[2], fmag * u[0], fmag * u[1], fmag * u[2]];
        assert_close(&fv, &expected, 1e-10);
        let dx = random_vec(12, 3);
        check_fd(&mut s, &dx, 1e-6, 1e-6);
        check_matrix(&mut s, &dx);
    }

    #[test]
    fn fan_of_triangles_has_consistent_derivatives() {
        // A hexagonal fan around point 0, lifted out of plane; border edges have no spring.
        let (f, mut s) = state_scene(&[
            ("rest_position", "0 0 0  1 0 0  0.5 0.9 0  -0.5 0.9 0  -1 0 0  -0.5 -0.9 0  0.5 -0.9 0"),
            ("position", "0 0 0.3  1 0.1 0  0.4 0.9 0.2  -0.5 1 -0.1  -1.1 0 0.1  -0.5 -0.8 0.3  0.6 -0.9 -0.2"),
            ("velocity", "0 0 0  0.1 0 0  0 0.2 0  0 0 0.3  0 0 0  0.1 0.1 0  0 0 -0.1"),
        ]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 2  0 2 3  0 3 4  0 4 5  0 5 6  0 6 1")]);
        let c = add(&mut s, &f, Scene::ROOT, "TriangularBendingSprings", &[("stiffness", "300"), ("damping", "2")]);
        init_root(&mut s, &f).unwrap();
        let ff = s.get::<TriangularBendingSprings>(c).unwrap();
        // Six interior (spoke) edges.
        assert_eq!(ff.springs().len(), 6);
        // Spring of the spoke (0, 2): created by triangle 0, m1 = 3 (triangle 1), m2 = 1.
        assert!(ff.springs().iter().any(|p| (p.m1, p.m2) == (3, 1)));
        // Damping makes the stiffness velocity dependent: derivative check at zero velocity.
        let scope = MechScope::build(&s, Scene::ROOT);
        let v0 = vec![0.0; 21];
        settee_core::mechanics::scatter(&mut s, &scope, settee_core::VecId::VELOCITY, &v0);
        let dx = random_vec(21, 9);
        check_fd(&mut s, &dx, 1e-6, 1e-6);
        check_matrix(&mut s, &dx);
    }

    #[test]
    fn a_mesh_without_triangles_is_an_error() {
        let (f, mut s) = state_scene(&[("position", "0 0 0  1 0 0")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("edges", "0 1")]);
        add(&mut s, &f, Scene::ROOT, "TriangularBendingSprings", &[]);
        let e = init_root(&mut s, &f).unwrap_err();
        assert!(e.diagnostic().message.contains("no triangles"), "{e}");
    }

    // ----- topological changes ------------------------------------------------------------

    use settee_core::testing::edits;
    use settee_core::topology_change::{propagate, ElementKind, TopologyChange};
    use settee_core::{ComponentId, MeshData};
    use settee_topology::SetTopologyContainer;

    const FAN_REST: &str = "0 0 0  1 0 0  0.5 0.9 0  -0.5 0.9 0  -1 0 0  -0.5 -0.9 0  0.5 -0.9 0";
    const FAN: &str = "0 1 2  0 2 3  0 3 4  0 4 5  0 5 6  0 6 1";

    /// Applies a hand-made change to a set container's lists and delivers its log.
    pub(crate) fn edit(s: &mut Scene, topo: ComponentId, f: impl FnOnce(&mut MeshData, &mut usize) -> Vec<TopologyChange>) {
        let t = s.get_mut::<SetTopologyContainer>(topo).unwrap().topo_mut();
        let (mut mesh, mut n) = (t.mesh.clone(), t.nb_points);
        let log = f(&mut mesh, &mut n);
        (t.mesh, t.nb_points) = (mesh, n);
        propagate(s, topo, &log).unwrap();
    }

    fn flat<const N: usize>(v: &[[usize; N]]) -> String {
        v.iter().flatten().map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
    }

    /// `(edge, sorted ends, rest length)` of every spring.
    fn summary(ff: &TriangularBendingSprings) -> Vec<(usize, [usize; 2], f64)> {
        let mut v: Vec<_> = ff.spring_edges().iter().zip(ff.springs()).map(|(&e, p)| (e, [p.m1.min(p.m2), p.m1.max(p.m2)], p.initpos)).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v
    }

    fn fan_scene() -> (Scene, ComponentId, ComponentId, ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        let ms = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", FAN_REST)]);
        let t = add(&mut s, &f, Scene::ROOT, "TriangleSetTopologyContainer", &[("triangles", FAN)]);
        let c = add(&mut s, &f, Scene::ROOT, "TriangularBendingSprings", &[("stiffness", "300"), ("damping", "2")]);
        init_root(&mut s, &f).unwrap();
        (s, ms, t, c)
    }

    /// The springs of a new component on the scene's current mesh and rest positions.
    fn fresh(s: &Scene, ms: ComponentId, t: ComponentId) -> Vec<(usize, [usize; 2], f64)> {
        let f = factory();
        let rest = s.store.get(s.state_of(ms).unwrap()).read(settee_core::VecId::REST_POSITION).to_vec();
        let rest: Vec<String> = rest.iter().map(|x| format!("{x:?}")).collect();
        let m = s.mesh_of(t).unwrap().clone();
        let mut n = Scene::new("root");
        add(&mut n, &f, Scene::ROOT, "MechanicalObject", &[("position", &rest.join(" "))]);
        add(&mut n, &f, Scene::ROOT, "TriangleSetTopologyContainer", &[("triangles", &flat(&m.triangles)), ("edges", &flat(&m.edges))]);
        let c = add(&mut n, &f, Scene::ROOT, "TriangularBendingSprings", &[("stiffness", "300"), ("damping", "2")]);
        init_root(&mut n, &f).unwrap();
        summary(n.get::<TriangularBendingSprings>(c).unwrap())
    }

    #[test]
    fn removed_triangles_take_their_springs_and_points_with_them() {
        let (mut s, ms, t, c) = fan_scene();
        assert_eq!(s.get::<TriangularBendingSprings>(c).unwrap().springs().len(), 6);
        // Triangles 5 (0 6 1) and 0 (0 1 2) leave point 1 isolated: the border edges (1, 2),
        // (6, 1) and the spoke (0, 1) go, point 1 goes (point 6 takes its index).
        edit(&mut s, t, |m, n| edits::remove_surface(m, n, ElementKind::Triangle, &[0, 5]));
        assert_eq!(s.mesh_of(t).unwrap().triangles, vec![[0, 5, 1], [0, 2, 3], [0, 3, 4], [0, 4, 5]]);
        let ff = s.get::<TriangularBendingSprings>(c).unwrap();
        // Spokes (0, 3), (0, 4), (0, 5) remain inner edges; (0, 2) and (0, 6) are borders now.
        assert_eq!(ff.springs().len(), 3);
        let got = summary(ff);
        assert_eq!(got, fresh(&s, ms, t));
        // The spring across (0, 5) joins 4 and the old point 6, now point 1.
        assert!(got.iter().any(|(_, p, _)| *p == [1, 4]), "{got:?}");
        // Forces and derivatives stay consistent on the reduced mesh.
        let x: Vec<f64> = s.store.get(s.state_of(ms).unwrap()).read(settee_core::VecId::POSITION).to_vec();
        assert_eq!(x.len(), 18);
        let scope = MechScope::build(&s, Scene::ROOT);
        let xs: Vec<f64> = x.iter().zip(random_vec(18, 4)).map(|(a, b)| a + 0.2 * b).collect();
        settee_core::mechanics::scatter(&mut s, &scope, settee_core::VecId::POSITION, &xs);
        let dx = random_vec(18, 5);
        check_fd(&mut s, &dx, 1e-6, 1e-6);
        check_matrix(&mut s, &dx);
    }

    #[test]
    fn triangles_added_next_to_removed_ones_get_springs_again() {
        let (mut s, ms, t, c) = fan_scene();
        edit(&mut s, t, |m, n| edits::remove_surface(m, n, ElementKind::Triangle, &[5]));
        assert_eq!(s.get::<TriangularBendingSprings>(c).unwrap().springs().len(), 4);
        assert_eq!(summary(s.get::<TriangularBendingSprings>(c).unwrap()), fresh(&s, ms, t));
        // The same triangle back: its edges (0, 6) and (0, 1) were reset by the removal.
        edit(&mut s, t, |m, n| edits::add_surface(m, n, ElementKind::Triangle, 0, &[vec![0, 6, 1]]));
        let got = summary(s.get::<TriangularBendingSprings>(c).unwrap());
        assert_eq!(got.len(), 6);
        assert_eq!(got, fresh(&s, ms, t));
    }

    /// SOFA keeps an edge that was on the border when the springs were built "initialized":
    /// a triangle added across it later does not create a spring there.
    #[test]
    fn an_edge_on_the_initial_border_gets_no_spring_from_an_added_triangle() {
        let (f, mut s) = state_scene(&[("position", "0 0 0  1 0 0  0 1 0  1 1 0  1 -1 0")]);
        let t = add(&mut s, &f, Scene::ROOT, "TriangleSetTopologyContainer", &[("triangles", "0 1 2  1 3 2")]);
        let c = add(&mut s, &f, Scene::ROOT, "TriangularBendingSprings", &[]);
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.get::<TriangularBendingSprings>(c).unwrap().springs().len(), 1);
        // (1 0 4) shares the initial border edge (0, 1) with triangle 0; a new point is not
        // needed (point 4 exists).
        edit(&mut s, t, |m, n| edits::add_surface(m, n, ElementKind::Triangle, 0, &[vec![1, 0, 4]]));
        let ff = s.get::<TriangularBendingSprings>(c).unwrap();
        assert_eq!(ff.springs().len(), 1);
        assert_eq!((ff.springs()[0].m1, ff.springs()[0].m2), (3, 0));
    }
}
