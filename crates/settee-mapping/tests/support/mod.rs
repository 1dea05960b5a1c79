//! Test support: where SOFA's suite is ([`settee_testkit::suite`]), a factory with the component
//! crates the mapping scenes need, a regression runner comparing a scene with SOFA's reference
//! states, and a mapping's products on plain vectors.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use settee_core::component::Mapping;
use settee_core::mechanics::{self, MechScope};
use settee_core::role;
use settee_core::{Factory, Mbk, Scene, StateId, VecId};
use settee_linalg::MatrixBuilder;

pub use settee_testkit::suite;

/// Every component crate the mapping scenes use, and this crate.
pub fn factory() -> Factory {
    settee_statecontainer::factory_with(&[
        settee_mass::register,
        settee_projective::register,
        settee_animationloop::register,
        settee_visual::register,
        settee_linearsolver::register,
        settee_odesolver::register,
        settee_topology::register,
        settee_loader::register,
        settee_engine::register,
        settee_spring::register,
        settee_mechanicalload::register,
        settee_mapping::register,
    ])
}

/// Where the suite is looked for.
fn suite_dir() -> PathBuf {
    std::env::var_os("SETTEE_SUITE").map(PathBuf::from).unwrap_or_else(|| settee_testkit::shared().join("sofa-suite"))
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
    load(&settee_testkit::temp_scene(name, text), factory)
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
            cur = scene.node(c).parent();
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

// ----- a mapping's products on plain vectors ----------------------------------------------------

/// State ids for mappings built directly (their states are not in a scene).
pub const S0: StateId = StateId::first_in_slot(0);
pub const S1: StateId = StateId::first_in_slot(1);
pub const S2: StateId = StateId::first_in_slot(2);

/// `apply` on the inputs `x` (positions), or `apply_j` (`velocities`), into `out` as given (NaN
/// values: every value must be written).
pub fn map_into(m: &mut dyn Mapping, velocities: bool, mut out: Vec<f64>, x: &[Vec<f64>]) -> Vec<f64> {
    let ins: Vec<&[f64]> = x.iter().map(|v| v.as_slice()).collect();
    if velocities { m.apply_j(&mut out, &ins) } else { m.apply(&mut out, &ins) }.unwrap();
    out
}

/// `apply` on the inputs `x`, into an output of `n_out` values set to 0 first.
pub fn apply(m: &mut dyn Mapping, n_out: usize, x: &[Vec<f64>]) -> Vec<f64> {
    map_into(m, false, vec![0.0; n_out], x)
}

/// `apply_j` on the input velocities `v`, into an output of `n_out` values set to 0 first.
pub fn jv(m: &mut dyn Mapping, n_out: usize, v: &[Vec<f64>]) -> Vec<f64> {
    map_into(m, true, vec![0.0; n_out], v)
}

/// `apply_jt` of the output force `f` into zero input forces of the given sizes.
pub fn jtf(m: &mut dyn Mapping, sizes: &[usize], f: &[f64]) -> Vec<Vec<f64>> {
    let mut ins: Vec<Vec<f64>> = sizes.iter().map(|&n| vec![0.0; n]).collect();
    let mut s: Vec<&mut [f64]> = ins.iter_mut().map(|v| v.as_mut_slice()).collect();
    m.apply_jt(&mut s, f).unwrap();
    ins
}

/// `Σ_i J_i·v_i` with the assembled Jacobian blocks, each product added in input order.
pub fn jacobians_times(js: &[settee_core::component::SparseRows], v: &[Vec<f64>], n_out: usize) -> Vec<f64> {
    let mut sum = vec![0.0; n_out];
    for (j, vi) in js.iter().zip(v) {
        let mut t = vec![0.0; n_out];
        j.mul(&mut t, vi);
        for (s, y) in sum.iter_mut().zip(t) {
            *s += y;
        }
    }
    sum
}

/// Loads `text` (as file `name`), runs `steps` steps, then [`assembled_equals_matrix_free`]: the
/// number of columns compared.
pub fn columns_after_steps(name: &str, text: &str, factory: &Factory, steps: usize, f: Mbk) -> usize {
    let mut scene = load_text(name, text, factory);
    run(&mut scene, steps);
    assembled_equals_matrix_free(&mut scene, f)
}

/// Lets the system move away from rest so forces (hence geometric stiffness) are non-zero.
pub fn run(scene: &mut Scene, steps: usize) {
    for _ in 0..steps {
        let dt = scene.root().context.dt;
        settee_core::simulation::animate(scene, dt).unwrap();
    }
}
