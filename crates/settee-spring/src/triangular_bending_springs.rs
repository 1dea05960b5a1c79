//! `TriangularBendingSprings`: one linear spring across every edge shared by exactly two triangles,
//! joining the two vertices opposite the edge (forcefields-mappings spec §2.4).
//!
//! Triangles are visited in index order; the first triangle that visits an edge creates its
//! spring, from the vertex of the other triangle opposite the edge (`m1`) to its own opposite
//! vertex (`m2`), with the rest length of the rest positions and the uniform `stiffness` and
//! `damping`. Edges on a border or shared by more than two triangles have no spring. Forces are
//! SpringForceField's, except that a spring shorter than 1e-4 does nothing; springs are applied
//! in edge order.

use settee_core::component::{link, ForceField};
use settee_core::data::{decl, DataKind::*};
use settee_core::{
    component_any, Component, ComponentClass, CreateArgs, DataDecl, ForceIo, InitCtx, Layout, LinkDecl, MatrixAccumulator, MechParams, MeshData,
    Roles, SimError, SimResult, StateId, TemplateRule,
};

use crate::kernel::SpringKernel;
use crate::spring_force_field::LinearSpring;
use crate::topo;

static DATA: &[DataDecl] = &[
    decl("stiffness", Real, "100000", "uniform stiffness of the bending springs"),
    decl("damping", Real, "1", "uniform damping of the bending springs"),
    decl("showSprings", Bool, "true", "draw the springs (rendering only)"),
    decl("rayleighStiffness", Real, "0", "Rayleigh damping coefficient related to stiffness"),
];

static LINKS: &[LinkDecl] = &[
    link("mstate", Roles::MECHANICAL_STATE, "mechanical state (default: the node's)"),
    link("topology", Roles::TOPOLOGY, "triangle topology (default: the context topology)"),
];

settee_core::data_refs! {
    static READS;
    STIFFNESS: Real = "stiffness";
    DAMPING: Real = "damping";
    RAYLEIGH_STIFFNESS: Real = "rayleighStiffness";
}

pub static CLASS: ComponentClass = ComponentClass {
    name: "TriangularBendingSprings",
    description: "Bending springs across the interior edges of a triangle mesh, between the vertices opposite each edge.",
    roles: Roles::FORCE_FIELD,
    templates: &["Vec3d"],
    default_template: "Vec3d",
    template_rule: TemplateRule::FromState,
    data: &[DATA],
    links: LINKS,
    create,
    preparse: None,
    no_src_link: &[],
    reads: READS,
};

fn create(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(TriangularBendingSprings::new())
}

/// Below this length a bending spring produces neither force nor stiffness.
const MIN_LENGTH: f64 = 1.0e-4;

/// The bending springs of a triangle mesh, in edge order: `(edge index, spring)` for each edge
/// shared by exactly two triangles. `rest` holds 3 reals per point.
pub fn bending_springs(mesh: &MeshData, rest: &[f64], ks: f64, kd: f64) -> Result<Vec<(usize, LinearSpring)>, String> {
    let ee = topo::element_edges(mesh, &mesh.triangles, "triangle")?;
    let mut springs: Vec<Option<LinearSpring>> = vec![None; mesh.edges.len()];
    let mut initialized = vec![false; mesh.edges.len()];
    for (t, tri) in mesh.triangles.iter().enumerate() {
        for &e in &ee.edges_in[t] {
            if initialized[e] {
                continue;
            }
            initialized[e] = true;
            let shell = &ee.around_edge[e];
            if shell.len() != 2 {
                continue;
            }
            let other = if shell[0] == t { shell[1] } else { shell[0] };
            let i1 = topo::local_edge(&ee.edges_in[other], e).expect("edge of its shell's triangle");
            let i2 = topo::local_edge(&ee.edges_in[t], e).expect("edge of its triangle");
            let (m1, m2) = (mesh.triangles[other][i1], tri[i2]);
            let l = topo::norm3(topo::sub3(&rest[3 * m1..3 * m1 + 3], &rest[3 * m2..3 * m2 + 3]));
            springs[e] = Some(LinearSpring::new(m1, m2, ks, kd, l));
        }
    }
    Ok(springs.into_iter().enumerate().filter_map(|(e, s)| s.map(|s| (e, s))).collect())
}

pub struct TriangularBendingSprings {
    state: Option<StateId>,
    kernel: SpringKernel,
    /// The active springs in edge order, with their edge index.
    springs: Vec<LinearSpring>,
    edges: Vec<usize>,
    /// Per spring, the 3×3 Jacobian of the last `addForce`.
    dfdx: Vec<f64>,
    rayleigh_stiffness: f64,
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

impl Default for TriangularBendingSprings {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for TriangularBendingSprings {
    component_any!();

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = topo::state_with_layout(cx, Layout::Vec3)?;
        let d = cx.data();
        let (ks, kd) = (d.get(STIFFNESS), d.get(DAMPING));
        self.rayleigh_stiffness = d.get(RAYLEIGH_STIFFNESS);
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
        let rest = cx.rest_or_position(s);
        topo::check_points(&mesh.triangles, rest.len() / 3, "triangle").map_err(|m| cx.error(m))?;
        let springs = bending_springs(&mesh, &rest, ks, kd).map_err(|m| cx.error(m))?;
        self.edges = springs.iter().map(|(e, _)| *e).collect();
        self.springs = springs.into_iter().map(|(_, s)| s).collect();
        self.dfdx = vec![0.0; 9 * self.springs.len()];
        self.state = Some(s);
        Ok(())
    }

    settee_core::force_field_role!();
}

impl ForceField for TriangularBendingSprings {
    fn states(&self) -> Vec<StateId> {
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
        for (s, m) in self.springs.iter().zip(self.dfdx.chunks_exact(9)) {
            kernel.add_dforce(io, 0, s, m, k_factor);
        }
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
        let f = factory();
        let mut s = Scene::new("root");
        // A hexagonal fan around point 0, lifted out of plane; border edges have no spring.
        add(
            &mut s,
            &f,
            Scene::ROOT,
            "MechanicalObject",
            &[
                ("rest_position", "0 0 0  1 0 0  0.5 0.9 0  -0.5 0.9 0  -1 0 0  -0.5 -0.9 0  0.5 -0.9 0"),
                ("position", "0 0 0.3  1 0.1 0  0.4 0.9 0.2  -0.5 1 -0.1  -1.1 0 0.1  -0.5 -0.8 0.3  0.6 -0.9 -0.2"),
                ("velocity", "0 0 0  0.1 0 0  0 0.2 0  0 0 0.3  0 0 0  0.1 0.1 0  0 0 -0.1"),
            ],
        );
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
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("edges", "0 1")]);
        add(&mut s, &f, Scene::ROOT, "TriangularBendingSprings", &[]);
        let e = init_root(&mut s, &f).unwrap_err();
        assert!(e.diagnostic().message.contains("no triangles"), "{e}");
    }
}
