//! Test support: a factory with the component crates the mapping scenes need, minimal stand-ins
//! for components of other crates (registered only when the real class is missing), and a
//! regression runner comparing a scene with SOFA's reference states.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use settee_core::component::{ForceField, ForceIo, MechParams};
use settee_core::mechanics::{self, MechScope};
use settee_core::role::{self, Topology, TopologyAlgorithms};
use settee_core::{component, Component, Declared, Factory, InitCtx, MatrixAccumulator, Mbk, Scene, SimResult, StateId, VecId};
use settee_linalg::MatrixBuilder;
use settee_topology::mesh_topology::{MeshTopology, MeshTopologyData};

/// The SOFA suite: `$SETTEE_SUITE`, else `../shared/sofa-suite` beside the repository, when it
/// holds `scenes/`, `references/` and `data/`. When it does not, the calling test skips with a
/// note (`None`) — unless `CI` or `SETTEE_REQUIRE_SUITE` is set, where it fails instead: a
/// test that could not compare anything must not count as passed.
pub fn suite() -> Option<PathBuf> {
    let dir = suite_dir();
    if ["scenes", "references", "data"].iter().all(|d| dir.join(d).is_dir()) {
        return Some(dir);
    }
    use std::io::Write;
    // CI services set `CI`; `.ci/run` also sets SETTEE_REQUIRE_SUITE.
    let required =
        ["SETTEE_REQUIRE_SUITE", "CI"].iter().any(|k| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false")));
    assert!(!required, "SOFA suite not found at {} (set SETTEE_SUITE) and CI or SETTEE_REQUIRE_SUITE is set: this test needs it", dir.display());
    // Written to the stream itself, in one piece: the test harness would capture `eprintln!`.
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let note = format!("note: SOFA suite not found at {} (set SETTEE_SUITE); test skipped: {test}\n", dir.display());
    let _ = std::io::stderr().write_all(note.as_bytes());
    None
}

/// Every component crate the mapping scenes use, this crate, and the stand-ins.
pub fn factory() -> Factory {
    let mut f = Factory::new();
    settee_statecontainer::register(&mut f);
    settee_mass::register(&mut f);
    settee_projective::register(&mut f);
    settee_animationloop::register(&mut f);
    settee_visual::register(&mut f);
    settee_linearsolver::register(&mut f);
    settee_odesolver::register(&mut f);
    settee_topology::register(&mut f);
    settee_loader::register(&mut f);
    settee_engine::register(&mut f);
    settee_spring::register(&mut f);
    settee_mechanicalload::register(&mut f);
    settee_mapping::register(&mut f);
    register_missing::<EdgeSetContainer>(&mut f);
    register_missing::<NoEffect>(&mut f);
    register_missing::<RestShapeSprings>(&mut f);
    register_missing::<UniformVelocityDamping>(&mut f);
    f
}

/// Registers the classes of a stand-in whose real class is missing.
fn register_missing<T: Declared>(f: &mut Factory) {
    for c in T::CLASSES {
        if f.class(c.name).is_none() {
            f.register(c);
        }
    }
}

/// Where the suite is looked for.
fn suite_dir() -> PathBuf {
    std::env::var_os("SETTEE_SUITE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join("../shared/sofa-suite"))
}

/// Loads and initialises a scene file; panics with the scene's errors. Files are also searched in
/// the suite's `data/` when it is there.
pub fn load(path: &Path, factory: &Factory) -> Scene {
    let data = vec![suite_dir().join("data")];
    let dp = settee_scene::DataPath::new(data);
    let mut scene = settee_scene::load_scene(path, factory, &dp).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(!scene.has_errors(), "{}: {:#?}", path.display(), scene.messages);
    settee_core::simulation::init_root(&mut scene, factory).unwrap_or_else(|e| panic!("{}: init: {e}\n{:#?}", path.display(), scene.messages));
    scene
}

/// Loads a scene given as text.
pub fn load_text(name: &str, text: &str, factory: &Factory) -> Scene {
    let dir = std::env::temp_dir().join(format!("settee-mapping-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.scn"));
    std::fs::write(&p, text).unwrap();
    load(&p, factory)
}

/// SOFA's dump selection: the node's own state, below an ODE solver, with no mapping in the node
/// or its ancestors.
pub fn selected_states(scene: &Scene) -> Vec<(NodeState, usize)> {
    let mut out: Vec<NodeState> = Vec::new();
    for n in scene.preorder(Scene::ROOT) {
        let Some(ms) = scene.slot(n, role::MECHANICAL_STATE) else {
            continue;
        };
        if scene.find_up(n, role::ODE_SOLVER).is_none() || scene.find_up(n, role::MAPPING).is_some() {
            continue;
        }
        out.push(NodeState { node: n, name: scene.entry(ms).name.clone(), state: scene.state_of(ms).unwrap() });
    }
    let mut weights = vec![0usize; out.len()];
    for n in scene.preorder(Scene::ROOT) {
        let mut cur = Some(n);
        while let Some(c) = cur {
            if let Some(i) = out.iter().position(|s| s.node == c) {
                weights[i] += 1;
                break;
            }
            cur = scene.node(c).parent;
        }
    }
    out.into_iter().zip(weights).collect()
}

pub struct NodeState {
    pub node: settee_core::NodeId,
    pub name: String,
    pub state: StateId,
}

/// Runs `steps` steps of a suite scene and returns SOFA's scene error (`errorByDof`) against the
/// references, and the largest absolute difference.
pub fn regression_error(scene_rel: &str, steps: usize) -> Option<(f64, f64)> {
    let suite = suite()?;
    let f = factory();
    let mut scene = load(&suite.join("scenes").join(scene_rel), &f);
    let base = suite.join("references").join(format!("{scene_rel}.reference"));
    let selected = selected_states(&scene);
    let mut comparers = Vec::new();
    for (i, (s, _)) in selected.iter().enumerate() {
        let path = settee_regress::reference::state_reference_path(&base, i, &s.name);
        let recs = settee_regress::reference::read_state_reference(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let n = scene.store.get(s.state).size;
        comparers.push(settee_regress::metric::StateComparer::new(recs, n));
    }
    let dt = scene.root().context.dt;
    for _ in 0..steps {
        let t = scene.root().context.time;
        for ((s, _), c) in selected.iter().zip(comparers.iter_mut()) {
            let st = scene.store.get(s.state);
            c.at_step_start(t, dt, st.read(VecId::POSITION), Some(st.read(VecId::VELOCITY)));
        }
        settee_core::simulation::animate(&mut scene, dt).unwrap_or_else(|e| panic!("step at t = {t}: {e}"));
    }
    let pairs: Vec<(f64, usize)> = comparers.iter().zip(&selected).map(|(c, (_, w))| (c.dof_error(), *w)).collect();
    let max = comparers.iter().map(|c| c.max_abs_diff()).fold(0.0, f64::max);
    Some((settee_regress::metric::error_by_dof(&pairs), max))
}

// ----- stand-ins ---------------------------------------------------------------------------------

/// test stand-in: a MeshTopology
///
/// Stand-in for SOFA's `EdgeSetTopologyContainer` (static lists: a MeshTopology under that name,
/// with MeshTopology's Data).
#[component(
    name = "EdgeSetTopologyContainer",
    roles = [Topology],
    type = MeshTopology,
    create = |_| MeshTopology::default(),
    inherit = [MeshTopologyData, Self],
    data = {
        /// mesh file to read (.obj/.trian), replacing the element lists
        #[alias("fileTopology")]
        filename: FileName,
    },
)]
struct EdgeSetContainer;

fn keep_name_only(attrs: &mut Vec<(String, String)>) {
    attrs.retain(|(n, _)| n == "name");
}

/// Stand-in for `EdgeSetGeometryAlgorithms` (no numerical effect).
#[component(name = "EdgeSetGeometryAlgorithms", description = "test stand-in", markers = [TopologyAlgorithms], preparse = keep_name_only)]
#[derive(Default)]
struct NoEffect;

impl Component for NoEffect {}

/// test stand-in
///
/// Stand-in for `RestShapeSpringsForceField` on vector states: `f_i −= k·(x_i − x0_i)` with the
/// state's rest positions.
#[component(
    name = "RestShapeSpringsForceField",
    roles = [ForceField],
    templates = ["Vec1d", "Vec2d", "Vec3d"],
    default_template = "Vec3d",
    template_rule = FromState,
    data = {
        /// stiffness per spring (first one used for all when fewer)
        stiffness: Reals = "1",
        /// points with a spring (all when empty)
        points: Indices,
        /// Rayleigh damping coefficient related to stiffness
        rayleighStiffness: Real = "0",
    },
)]
#[derive(Default)]
struct RestShapeSprings {
    state: Option<StateId>,
    k: Vec<f64>,
    points: Vec<usize>,
    dim: usize,
    rest: Vec<f64>,
    rs: f64,
}

impl Component for RestShapeSprings {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        self.dim = cx.state_layout(s).deriv_size();
        self.k = cx.data().get(Self::STIFFNESS).to_vec();
        self.rs = cx.data().get(Self::RAYLEIGH_STIFFNESS);
        let pts = cx.data().get(Self::POINTS).to_vec();
        self.points = if pts.is_empty() { (0..cx.state_size(s)).collect() } else { pts };
        self.rest = cx.rest_or_position(s);
        Ok(())
    }
}

impl RestShapeSprings {
    fn k(&self, i: usize) -> f64 {
        self.k[if i < self.k.len() { i } else { 0 }]
    }
}

impl ForceField for RestShapeSprings {
    fn states(&self) -> Vec<StateId> {
        self.state.into_iter().collect()
    }
    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let d = self.dim;
        for (i, &p) in self.points.iter().enumerate() {
            let k = self.k(i);
            for c in 0..d {
                let dx = io.x[0][p * d + c] - self.rest[p * d + c];
                io.f[0][p * d + c] -= dx * k;
            }
        }
        Ok(())
    }
    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b: f64) -> SimResult {
        let d = self.dim;
        for (i, &p) in self.points.iter().enumerate() {
            let k = self.k(i);
            for c in 0..d {
                io.f[0][p * d + c] -= io.x[0][p * d + c] * k * k_factor;
            }
        }
        Ok(())
    }
    fn add_k_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.unwrap();
        let d = self.dim;
        for (i, &p) in self.points.iter().enumerate() {
            for c in 0..d {
                m.add(s, p * d + c, s, p * d + c, -k_factor * self.k(i));
            }
        }
        Ok(())
    }
    fn rayleigh_stiffness(&self) -> f64 {
        self.rs
    }
}

/// test stand-in
///
/// Stand-in for `UniformVelocityDampingForceField`: `f −= c·v`, `df −= c·b·dx` when implicit.
#[component(
    name = "UniformVelocityDampingForceField",
    roles = [ForceField],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d", "Rigid3d"],
    default_template = "Vec3d",
    template_rule = FromState,
    data = {
        /// velocity damping coefficient
        dampingCoefficient: Real = "0.1",
        /// include the damping in the implicit system
        implicit: Bool = "false",
        /// Rayleigh damping coefficient related to stiffness
        rayleighStiffness: Real = "0",
    },
)]
#[derive(Default)]
struct UniformVelocityDamping {
    state: Option<StateId>,
    c: f64,
    implicit: bool,
    /// Number of scalar DOFs of the state.
    n: usize,
}

impl Component for UniformVelocityDamping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        self.n = cx.state_size(s) * cx.state_layout(s).deriv_size();
        self.c = cx.data().get(Self::DAMPING_COEFFICIENT);
        self.implicit = cx.data().get(Self::IMPLICIT);
        Ok(())
    }
}

impl ForceField for UniformVelocityDamping {
    fn states(&self) -> Vec<StateId> {
        self.state.into_iter().collect()
    }
    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        for (f, v) in io.f[0].iter_mut().zip(io.v[0]) {
            *f -= v * self.c;
        }
        Ok(())
    }
    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, _k: f64, b: f64) -> SimResult {
        if !self.implicit || b == 0.0 {
            return Ok(());
        }
        let bf = b * self.c;
        for (f, dx) in io.f[0].iter_mut().zip(io.x[0]) {
            *f -= dx * bf;
        }
        Ok(())
    }
    fn add_k_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _k: f64) -> SimResult {
        Ok(())
    }
    fn add_b_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, b: f64) -> SimResult {
        if !self.implicit {
            return Ok(());
        }
        let s = self.state.unwrap();
        for i in 0..self.n {
            m.add(s, i, s, i, -self.c * b);
        }
        Ok(())
    }
}

/// Compares the assembled matrix with the matrix-free products `A·e_j` on every unconstrained
/// column; returns the number of columns compared.
pub fn assembled_equals_matrix_free(scene: &mut Scene, f: Mbk) -> usize {
    let scope = MechScope::build(scene, Scene::ROOT);
    assert!(!scope.mappings.is_empty(), "the scene has no mechanical mapping");
    mechanics::compute_force(scene, &scope, VecId::FORCE, VecId::POSITION, VecId::VELOCITY).unwrap();
    let mut builder = MatrixBuilder::new(scope.size);
    mechanics::assemble(scene, &scope, f, &mut builder).unwrap();
    let a = builder.matrix().clone();

    let p = mechanics::alloc_deriv(scene, &scope);
    let q = mechanics::alloc_deriv(scene, &scope);
    // Constrained rows: those a projection zeroes.
    for &s in &scope.main_states {
        scene.store.get_mut(s).write(p).fill(1.0);
    }
    mechanics::project_response(scene, &scope, p).unwrap();
    let mut ones = Vec::new();
    mechanics::gather(scene, &scope, p, &mut ones);
    let mut compared = 0;
    let mut col = Vec::new();
    for j in 0..scope.size {
        if ones[j] == 0.0 {
            continue;
        }
        let mut e = vec![0.0; scope.size];
        e[j] = 1.0;
        mechanics::scatter(scene, &scope, p, &e);
        mechanics::mbk_product(scene, &scope, f, p, q).unwrap();
        mechanics::gather(scene, &scope, q, &mut col);
        let scale = col.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        for (i, &ci) in col.iter().enumerate() {
            let aij = a.get(i, j);
            assert!((aij - ci).abs() <= 1e-11 * scale, "A[{i},{j}] = {aij} but (A·e_{j})[{i}] = {ci}");
        }
        compared += 1;
    }
    mechanics::free_vec(scene, &scope, p);
    mechanics::free_vec(scene, &scope, q);
    compared
}

/// Lets the system move away from rest so forces (hence geometric stiffness) are non-zero.
pub fn run(scene: &mut Scene, steps: usize) {
    for _ in 0..steps {
        let dt = scene.root().context.dt;
        settee_core::simulation::animate(scene, dt).unwrap();
    }
}
