//! CompositeLinearSystem, and the assembly of block projections (line/plane constraints) checked
//! against the matrix-free product, on a 4-node scene with a constant stiffness.

use settee_core::mechanics::{self as mech, MechScope};
use settee_core::{ComponentId, Factory, LinearSolver, Mbk, Scene, SimResult, VecId};

use crate::system::MatrixLinearSystem;
use crate::testing::{add_at_root, MatrixForceField};

const N: usize = 12;
const MASS: f64 = 2.0;
const F: Mbk = Mbk { m: 1.0, b: 0.0, k: -0.5 };
const RHS: [f64; N] = [0.3, -1.0, 0.7, 1.5, -0.25, 2.0, -0.8, 0.9, 0.1, 0.4, 1.1, -0.6];

/// SPD-ish coupling of 4 nodes.
fn stiffness() -> Vec<f64> {
    let mut k = vec![0.0; N * N];
    let blocks: [(usize, usize, f64); 4] = [(0, 1, 4.0), (1, 2, 3.0), (2, 3, 5.0), (0, 3, 1.5)];
    for (a, b, s) in blocks {
        for r in 0..3 {
            for c in 0..3 {
                let v = if r == c { s } else { 0.1 * s * ((r + 2 * c) as f64 - 2.0) / 3.0 };
                let v = if r == c { v } else { 0.5 * (v + 0.1 * s * ((c + 2 * r) as f64 - 2.0) / 3.0) };
                k[(3 * a + r) * N + 3 * a + c] += v;
                k[(3 * b + r) * N + 3 * b + c] += v;
                k[(3 * a + r) * N + 3 * b + c] -= v;
                k[(3 * b + r) * N + 3 * a + c] -= v;
            }
        }
    }
    k
}

fn factory() -> Factory {
    let mut f = settee_statecontainer::factory_with(&[settee_mass::register, settee_projective::register, crate::register]);
    f.add::<MatrixForceField>();
    f
}

fn add(scene: &mut Scene, f: &Factory, class: &str, attrs: &[(&str, &str)]) -> ComponentId {
    add_at_root(scene, f, class, None, attrs)
}

/// Four nodes, uniform mass, the dense stiffness, `constraints`, then `objects` (systems, solver).
fn scene(constraints: &[(&str, &[(&str, &str)])], objects: &[(&str, &[(&str, &str)])]) -> (Scene, Vec<ComponentId>, SimResult) {
    let f = factory();
    let mut s = Scene::new("root");
    let ids = objects.iter().map(|(c, a)| add(&mut s, &f, c, a)).collect();
    add(&mut s, &f, "MechanicalObject", &[("position", "0 0 0  1 0 0  2 0.5 0  3 1 0.2")]);
    add(&mut s, &f, "UniformMass", &[("vertexMass", "2")]);
    for (c, a) in constraints {
        add(&mut s, &f, c, a);
    }
    let k: Vec<String> = stiffness().iter().map(|v| format!("{v:e}")).collect();
    add(&mut s, &f, "TestMatrixForceField", &[("stiffness", &k.join(" "))]);
    let r = settee_core::simulation::init_root(&mut s, &f);
    (s, ids, r)
}

/// [`scene`], which must initialise.
fn built(constraints: &[(&str, &[(&str, &str)])], objects: &[(&str, &[(&str, &str)])]) -> (Scene, Vec<ComponentId>) {
    let (s, ids, r) = scene(constraints, objects);
    r.unwrap();
    (s, ids)
}

fn solve(s: &mut Scene, ls: ComponentId) -> Vec<f64> {
    let scope = MechScope::build(s, Scene::ROOT);
    let rhs = mech::alloc_deriv(s, &scope);
    let sol = mech::alloc_deriv(s, &scope);
    let st = scope.main_states[0];
    s.store.get_mut(st).write(rhs).copy_from_slice(&RHS);
    mech::project_response(s, &scope, rhs).unwrap();
    s.with_role::<dyn LinearSolver, _>(ls, |solver, s| solver.solve_system(s, &scope, F, rhs, sol)).unwrap();
    s.store.get(st).read(sol).to_vec()
}

fn system(s: &Scene, c: ComponentId) -> &MatrixLinearSystem {
    s.get::<MatrixLinearSystem>(c).unwrap()
}

const SYSTEMS: &[(&str, &[(&str, &str)])] = &[
    ("MatrixLinearSystem", &[("name", "A")]),
    ("MatrixLinearSystem", &[("name", "K"), ("assembleMass", "false"), ("assembleDamping", "false"), ("applyProjectiveConstraints", "false")]),
    ("MatrixLinearSystem", &[("name", "M"), ("assembleStiffness", "false"), ("applyProjectiveConstraints", "false")]),
    ("CompositeLinearSystem", &[("name", "comp"), ("linearSystems", "@A @K @M"), ("solverLinearSystem", "@A")]),
    ("SparseLDLSolver", &[("linearSystem", "@comp")]),
];

/// The solver solves the full system; the stiffness-only and mass-only systems are built beside
/// it with the same factors and without the fixed-DOF projection.
#[test]
fn composite_solves_one_system_and_builds_the_others() {
    let fixed: &[(&str, &[(&str, &str)])] = &[("FixedProjectiveConstraint", &[("indices", "0")])];
    let (mut s, ids) = built(fixed, SYSTEMS);
    let x = solve(&mut s, ids[4]);
    // Same solution as a solver on its own.
    let (mut plain, pids) = built(fixed, &[("SparseLDLSolver", &[])]);
    assert_eq!(x, solve(&mut plain, pids[0]));
    assert!(x[..3].iter().all(|&v| v == 0.0));

    let comp = s.get::<super::CompositeLinearSystem>(ids[3]).unwrap();
    assert_eq!(comp.systems(), &ids[..3]);
    assert_eq!(comp.solver_system(), Some(ids[0]));
    assert_eq!(system(&s, ids[0]).builds(), 0, "the solved system is the solver's own matrix");
    let k = system(&s, ids[1]).matrix().expect("K built").to_dense();
    let m = system(&s, ids[2]).matrix().expect("M built").to_dense();
    let stiff = stiffness();
    for i in 0..N {
        for j in 0..N {
            let kij = -F.k * stiff[i * N + j];
            assert!((k[i * N + j] + stiff[i * N + j] * F.k).abs() < 1e-15 * kij.abs().max(1.0), "K({i}, {j})");
            assert_eq!(m[i * N + j], if i == j { F.m * MASS } else { 0.0 }, "M({i}, {j})");
        }
    }
}

#[test]
fn composite_defaults_and_errors() {
    // No solverLinearSystem: the first listed system is solved; a partial one may follow.
    let objs: &[(&str, &[(&str, &str)])] = &[
        ("MatrixLinearSystem", &[("name", "A")]),
        ("MatrixLinearSystem", &[("name", "K"), ("assembleMass", "false")]),
        ("CompositeLinearSystem", &[("name", "comp"), ("linearSystems", "@A @K")]),
        ("SparseLDLSolver", &[("linearSystem", "@comp")]),
    ];
    let (s, ids) = built(&[], objs);
    assert_eq!(s.get::<super::CompositeLinearSystem>(ids[2]).unwrap().solver_system(), Some(ids[0]));
    // A solverLinearSystem that is not listed is appended.
    let objs: &[(&str, &[(&str, &str)])] = &[
        ("MatrixLinearSystem", &[("name", "A")]),
        ("MatrixLinearSystem", &[("name", "M"), ("assembleStiffness", "false")]),
        ("CompositeLinearSystem", &[("name", "comp"), ("linearSystems", "@M"), ("solverLinearSystem", "@A")]),
    ];
    let (s, ids) = built(&[], objs);
    assert_eq!(s.get::<super::CompositeLinearSystem>(ids[2]).unwrap().systems(), &[ids[1], ids[0]]);
    // The solved system must assemble everything (Settee's solvers build the full system).
    let objs: &[(&str, &[(&str, &str)])] = &[
        ("MatrixLinearSystem", &[("name", "K"), ("assembleMass", "false")]),
        ("CompositeLinearSystem", &[("name", "comp"), ("linearSystems", "@K")]),
    ];
    let (_, _, r) = scene(&[], objs);
    assert!(r.unwrap_err().to_string().contains("assembleMass"));
    let (_, _, r) = scene(&[], &[("CompositeLinearSystem", &[])]);
    assert!(r.unwrap_err().to_string().contains("at least one linear system"));
}

/// Oblique line and plane constraints: the assembled `P̃·A·P̃ + (I − P̃)` solved directly gives
/// the solution the matrix-free CG finds in the projected subspace, and that solution is
/// projected (`P·x = x`).
#[test]
fn assembled_block_projections_match_the_matrix_free_solution() {
    let constraints: &[(&str, &[(&str, &str)])] = &[
        ("FixedProjectiveConstraint", &[("indices", "0")]),
        ("PlaneProjectiveConstraint", &[("indices", "1"), ("normal", "1 2 -0.5")]),
        ("LineProjectiveConstraint", &[("indices", "2 3"), ("direction", "0.3 -1 0.8")]),
    ];
    let (mut direct, d) = built(constraints, &[("SparseLDLSolver", &[])]);
    let xd = solve(&mut direct, d[0]);
    let (mut cg, c) = built(constraints, &[("CGLinearSolver", &[("iterations", "500"), ("tolerance", "1e-30"), ("threshold", "1e-30")])]);
    let xc = solve(&mut cg, c[0]);
    let scale = xd.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.1);
    for (a, b) in xd.iter().zip(&xc) {
        assert!((a - b).abs() < 1e-10 * scale, "{xd:?} vs {xc:?}");
    }
    // P·x = x.
    let scope = MechScope::build(&direct, Scene::ROOT);
    let st = scope.main_states[0];
    direct.store.get_mut(st).write(VecId::DX).copy_from_slice(&xd);
    mech::project_response(&mut direct, &scope, VecId::DX).unwrap();
    let px = direct.store.get(st).read(VecId::DX).to_vec();
    for (a, b) in px.iter().zip(&xd) {
        assert!((a - b).abs() < 1e-14 * scale, "{px:?} vs {xd:?}");
    }
    // The assembled matrix itself: symmetric, with A·p = P·A·p for projected p.
    let mut b = settee_linalg::MatrixBuilder::new(N);
    mech::assemble(&mut direct, &scope, F, &mut b).unwrap();
    let a = b.matrix().to_dense();
    for i in 0..N {
        for j in 0..N {
            assert!((a[i * N + j] - a[j * N + i]).abs() < 1e-14, "({i}, {j})");
        }
    }
    let mut ap = vec![0.0; N];
    b.matrix().mul_vec(&xd, &mut ap).unwrap();
    direct.store.get_mut(st).write(VecId::DX).copy_from_slice(&xd);
    let q = mech::alloc_deriv(&mut direct, &scope);
    mech::mbk_product(&mut direct, &scope, F, VecId::DX, q).unwrap();
    let free = direct.store.get(st).read(q).to_vec();
    for (a, b) in ap.iter().zip(&free) {
        assert!((a - b).abs() < 1e-12, "{ap:?} vs {free:?}");
    }
}
