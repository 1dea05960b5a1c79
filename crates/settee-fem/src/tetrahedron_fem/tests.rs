#![allow(clippy::disallowed_methods)] // tests check output Data by name
use super::*;
use crate::test_support::{max_abs, on_grid, perturb, Harness};
use settee_linalg::{DirectKind, DirectSolver, Ordering};

/// A grid with a TetrahedronFEMForceField on its hexahedra (split in 6).
fn grid_setup(grid: &[(&str, &str)], ff: &[(&str, &str)]) -> (Harness, ComponentId, Vec<f64>) {
    on_grid(grid, "TetrahedronFEMForceField", ff).unwrap()
}

const BEAM: &[(&str, &str)] = &[("n", "3 3 8"), ("min", "0 0 0"), ("max", "1 1 2.7")];
const METHODS: [&str; 4] = ["small", "large", "polar", "svd"];

fn ff_mut(h: &mut Harness, id: ComponentId) -> &mut TetrahedronFEMForceField {
    h.get_mut(id)
}

#[test]
fn grid_hexahedra_are_split_in_six() {
    let (mut h, ff, rest) = grid_setup(BEAM, &[("youngModulus", "10000"), ("poissonRatio", "0.45")]);
    let c = ff_mut(&mut h, ff);
    assert_eq!(c.tetrahedra().len(), 2 * 2 * 7 * 6);
    assert_eq!(c.method(), TetraMethod::Large);
    // the split tiles the block
    let vol: f64 = c
        .tetrahedra()
        .iter()
        .map(|t| {
            let p = t.map(|i| [rest[3 * i], rest[3 * i + 1], rest[3 * i + 2]]);
            crate::tetra::tetra_volume(p[0], p[1], p[2], p[3])
        })
        .sum();
    assert!((vol - 2.7).abs() < 1e-12, "{vol}");
    // every element stiffness annihilates rigid translations
    for i in 0..c.tetrahedra().len() {
        let k = c.element_rest(i).stiffness();
        for axis in 0..3 {
            let r: f64 = (0..12).map(|row| (0..4).map(|a| k[row][3 * a + axis]).sum::<f64>().abs()).sum();
            assert!(r < 1e-9 * k[0][0].abs(), "element {i}: {r}");
        }
    }
}

#[test]
fn zero_force_at_rest() {
    for method in METHODS {
        let (mut h, ff, rest) = grid_setup(BEAM, &[("youngModulus", "1000"), ("poissonRatio", "0.4"), ("method", method)]);
        let f = h.force(ff, &rest);
        assert!(f.iter().all(|&v| v == 0.0), "{method}: {}", max_abs(&f));
    }
}

/// Uniaxial stress σxx = E·ε on a 2×1×1 block (ν-contraction imposed): the x-faces carry
/// ∓E·ε·area, lateral forces vanish (small and, for this tiny strain, the corotational methods).
#[test]
fn uniaxial_stretch_gives_hooke_forces() {
    let (e, nu, eps) = (1000.0, 0.3, 1e-6);
    for method in METHODS {
        let (mut h, ff, rest) = grid_setup(
            &[("n", "5 3 3"), ("min", "0 0 0"), ("max", "2 1 1")],
            &[("youngModulus", "1000"), ("poissonRatio", "0.3"), ("method", method)],
        );
        let x: Vec<f64> = rest.chunks(3).flat_map(|p| [p[0] * (1.0 + eps), p[1] * (1.0 - nu * eps), p[2] * (1.0 - nu * eps)]).collect();
        let f = h.force(ff, &x);
        let (mut right, mut left) = (0.0, 0.0);
        let tol = if method == "small" { 1e-12 } else { 1e-9 };
        for (p, fp) in rest.chunks(3).zip(f.chunks(3)) {
            if p[0] == 2.0 {
                right += fp[0];
            } else if p[0] == 0.0 {
                left += fp[0];
            } else {
                assert!(fp[0].abs() < tol, "{method} {p:?}: {fp:?}");
            }
            assert!(fp[1].abs() < tol && fp[2].abs() < tol, "{method} {p:?}: {fp:?}");
        }
        assert!((right + e * eps).abs() < 1e3 * tol * e * eps, "{method}: {right}");
        assert!((left - e * eps).abs() < 1e3 * tol * e * eps, "{method}: {left}");
    }
}

#[test]
fn dforce_equals_assembled_matrix_times_dx() {
    let cases: &[&[(&str, &str)]] = &[
        &[("method", "small")],
        &[("method", "large")],
        &[("method", "polar")],
        &[("method", "svd")],
        &[("method", "large"), ("updateStiffnessMatrix", "true")],
        &[("method", "polar"), ("updateStiffnessMatrix", "true")],
        &[("method", "large"), ("computeGlobalMatrix", "true")],
        &[("method", "small"), ("assembling", "true")],
        &[("method", "large"), ("localStiffnessFactor", "1 2 3"), ("youngModulus", "500 800")],
    ];
    for extra in cases {
        let mut a = vec![("youngModulus", "4000"), ("poissonRatio", "0.3"), ("rayleighStiffness", "0.1")];
        a.extend_from_slice(extra);
        let (mut h, ff, rest) = grid_setup(BEAM, &a);
        let x = perturb(&rest, 0.1, 7);
        let dx = perturb(&vec![0.0; x.len()], 1.0, 11);
        let (df, m, kdx) = h.dforce_and_assembled(ff, &x, &dx, -1.7);
        let scale = max_abs(&df);
        assert!(scale > 1.0, "{extra:?}");
        for (i, (a, b)) in df.iter().zip(&kdx).enumerate() {
            assert!((a - b).abs() <= 1e-11 * scale, "{extra:?} row {i}: {a} vs {b}");
        }
        assert!(m.is_symmetric(1e-9 * scale), "{extra:?}");
    }
}

/// Small method: the force is exactly linear, `f = -K·u`.
#[test]
fn small_force_is_minus_k_u() {
    let (mut h, ff, rest) = grid_setup(BEAM, &[("youngModulus", "4000"), ("poissonRatio", "0.3"), ("method", "small")]);
    let x = perturb(&rest, 0.05, 3);
    let u: Vec<f64> = x.iter().zip(&rest).map(|(a, b)| a - b).collect();
    let f = h.force(ff, &x);
    let df = h.dforce(ff, &u, 1.0);
    let scale = max_abs(&f);
    for (a, b) in f.iter().zip(&df) {
        assert!((a - b).abs() < 1e-10 * scale);
    }
}

/// Corotational methods near a rigidly rotated rest state: add_dforce is the derivative of
/// add_force (the geometric term of the rotation vanishes with the strain).
#[test]
fn dforce_matches_finite_differences_of_force() {
    let g = {
        let (c, s) = (0.6f64.cos(), 0.6f64.sin());
        let rz = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]];
        let (c2, s2) = (0.3f64.cos(), 0.3f64.sin());
        let rx = [[1.0, 0.0, 0.0], [0.0, c2, -s2], [0.0, s2, c2]];
        crate::decompose::mat_mul(&rz, &rx)
    };
    for method in ["large", "polar", "svd"] {
        let (mut h, ff, rest) = grid_setup(BEAM, &[("youngModulus", "1000"), ("poissonRatio", "0.3"), ("method", method)]);
        let x: Vec<f64> = rest.chunks(3).flat_map(|p| crate::hexa::mat_vec(&g, [p[0], p[1], p[2]])).map(|v| v + 3.0).collect();
        let dir = perturb(&vec![0.0; x.len()], 1.0, 5);
        let step = 1e-6;
        let f0 = h.force(ff, &x);
        let df = h.dforce(ff, &dir, 1.0);
        let xp: Vec<f64> = x.iter().zip(&dir).map(|(a, d)| a + step * d).collect();
        let f1 = h.force(ff, &xp);
        let scale = max_abs(&df);
        for i in 0..x.len() {
            let fd = (f1[i] - f0[i]) / step;
            assert!((fd - df[i]).abs() < 1e-4 * scale, "{method} {i}: {fd} vs {}", df[i]);
        }
    }
}

#[test]
fn node_rotation_of_a_rigid_rotation() {
    let (c, s) = (0.4f64.cos(), 0.4f64.sin());
    let g = [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]];
    for method in ["large", "polar"] {
        let (mut h, ff, rest) = grid_setup(BEAM, &[("method", method)]);
        let x: Vec<f64> = rest.chunks(3).flat_map(|p| crate::hexa::mat_vec(&g, [p[0], p[1], p[2]])).collect();
        let _ = h.force(ff, &x);
        let r = ff_mut(&mut h, ff).node_rotation(5);
        for i in 0..3 {
            for j in 0..3 {
                assert!((r[i][j] - g[i][j]).abs() < 1e-12, "{method}: {r:?}");
            }
        }
    }
    let (mut h, ff, _) = grid_setup(BEAM, &[("method", "small")]);
    assert_eq!(ff_mut(&mut h, ff).node_rotation(0), [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
}

/// Plasticity: a large stretch leaves a plastic strain; back at rest (where half of it creeps
/// back) the elements still push.
#[test]
fn plasticity_leaves_a_permanent_set() {
    let (mut h, ff, rest) = grid_setup(
        BEAM,
        &[
            ("youngModulus", "1000"),
            ("poissonRatio", "0.3"),
            ("plasticMaxThreshold", "0.05"),
            ("plasticYieldThreshold", "0.001"),
            ("plasticCreep", "0.5"),
        ],
    );
    let x: Vec<f64> = rest.chunks(3).flat_map(|p| [p[0], p[1], p[2] * 1.2]).collect();
    let _ = h.force(ff, &x);
    let c = ff_mut(&mut h, ff);
    let pmax = (0..c.tetrahedra().len()).map(|i| c.plastic_strain(i).iter().map(|v| v * v).sum::<f64>().sqrt()).fold(0.0, f64::max);
    assert!(pmax > 0.0 && pmax <= 0.05 * (1.0 + 1e-12), "{pmax}");
    let f = h.force(ff, &rest);
    assert!(max_abs(&f) > 1e-3);
    // without plasticity the rest state is force-free again
    let (mut h2, ff2, rest2) = grid_setup(BEAM, &[("youngModulus", "1000"), ("poissonRatio", "0.3")]);
    let _ = h2.force(ff2, &x);
    assert_eq!(max_abs(&h2.force(ff2, &rest2)), 0.0);
}

/// 1 and 4 threads give the same bits for the force, its differential and the assembled
/// stiffness. The block has 7×7×7 cells split into 2058 tetrahedra, above the 2048 from which the
/// element loops run on rayon's pool; the test checks that all four loops (force, packing of the
/// elements for the differential, differential, stiffness) took that branch.
#[test]
fn results_do_not_depend_on_thread_count() {
    let grid: &[(&str, &str)] = &[("n", "8 8 8"), ("min", "0 0 0"), ("max", "1 1 2.7")];
    let (mut h, ff, rest) = grid_setup(grid, &[("youngModulus", "4000"), ("poissonRatio", "0.3"), ("method", "polar")]);
    let n = ff_mut(&mut h, ff).tetrahedra().len();
    assert!(n >= crate::tetra_common::TETRA_PARALLEL_MIN, "{n} tetrahedra");
    let x = perturb(&rest, 0.01, 3);
    let dx = perturb(&vec![0.0; x.len()], 1.0, 5);
    let (one, loops1) = h.bits_on_threads(ff, &x, &dx, 0.37, 1);
    let (four, loops4) = h.bits_on_threads(ff, &x, &dx, 0.37, 4);
    assert_eq!(loops1, (4, 0), "one thread: (loops, parallel)");
    assert_eq!(loops4, (4, 4), "four threads: (loops, parallel)");
    assert_eq!(one, four);
}

#[test]
fn topology_tetrahedra_are_used_directly() {
    let mut h = Harness::new();
    h.add("MeshTopology", &[("position", "0 0 0 1 0 0 0 1 0 0 0 1 1 1 1"), ("tetrahedra", "0 1 2 3 1 2 3 4")]);
    let mo = h.add("MechanicalObject", &[]);
    let ff = h.add("TetrahedronFEMForceField", &[("method", "small"), ("youngModulus", "100 200")]);
    h.init().unwrap();
    let c = ff_mut(&mut h, ff);
    assert_eq!(c.tetrahedra(), &[[0, 1, 2, 3], [1, 2, 3, 4]]);
    // element 1 uses youngModulus[1]: its material is twice element 0's (per unit volume)
    let k0 = c.element_rest(0).material()[0][0] * crate::tetra::tetra_volume([0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
    let k1 = c.element_rest(1).material()[0][0] * crate::tetra::tetra_volume([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]);
    assert!((k1 / k0 - 2.0).abs() < 1e-12);
    let rest = h.rest(mo);
    assert_eq!(h.scene.entry(ff).data.reals("initialPoints"), rest.as_slice());
}

#[test]
fn mesh_without_volume_elements_is_an_error() {
    let mut h = Harness::new();
    h.add("MeshTopology", &[("position", "0 0 0 1 0 0 0 1 0"), ("triangles", "0 1 2")]);
    h.add("MechanicalObject", &[]);
    h.add("TetrahedronFEMForceField", &[]);
    let e = h.init().unwrap_err();
    assert!(e.to_string().contains("neither tetrahedra nor hexahedra") && e.diagnostic().hint.is_some(), "{e}");
}

/// Static tip deflection of a cantilever `[0,L]×[0,1]×[0,1]` clamped at x = 0 under a tip
/// load P (direct solve with the assembled stiffness, small displacements, ν = 0): converges
/// toward Euler–Bernoulli's `PL³/3EI` (plus the small Timoshenko shear term) as the mesh is
/// refined.
#[test]
fn cantilever_converges_to_euler_bernoulli() {
    let (len, e, p) = (10.0f64, 1.0e6f64, 1.0f64);
    let inertia = 1.0 / 12.0;
    let shear = p * len / (5.0 / 6.0 * e / 2.0);
    let exact = p * len.powi(3) / (3.0 * e * inertia) + shear;
    let mut ratios = Vec::new();
    for (nl, nc) in [(10usize, 1usize), (20, 2), (40, 4), (80, 8)] {
        let n = format!("{} {} {}", nl + 1, nc + 1, nc + 1);
        let (mut h, _ff, rest) = grid_setup(
            &[("n", n.as_str()), ("min", "0 0 0"), ("max", "10 1 1")],
            &[("youngModulus", "1e6"), ("poissonRatio", "0"), ("method", "small")],
        );
        let mut k = h.assembled(0.0, -1.0);
        let nodes = rest.len() / 3;
        let fixed: Vec<usize> = (0..nodes).filter(|&i| rest[3 * i] == 0.0).flat_map(|i| [3 * i, 3 * i + 1, 3 * i + 2]).collect();
        let tip: Vec<usize> = (0..nodes).filter(|&i| rest[3 * i] == len).collect();
        k.apply_dirichlet(&fixed).unwrap();
        let mut rhs = vec![0.0; rest.len()];
        for &i in &tip {
            rhs[3 * i + 2] = -p / tip.len() as f64;
        }
        let mut solver = DirectSolver::new(DirectKind::Ldlt, Ordering::Amd);
        solver.factorize(&k).unwrap();
        let mut u = vec![0.0; rhs.len()];
        solver.solve(&rhs, &mut u).unwrap();
        let deflection = -tip.iter().map(|&i| u[3 * i + 2]).sum::<f64>() / tip.len() as f64;
        ratios.push(deflection / exact);
    }
    eprintln!("cantilever tip deflection / (PL³/3EI + shear): {ratios:?}");
    // monotone convergence from below (linear tetrahedra are too stiff in bending)
    assert!(ratios.windows(2).all(|w| w[0] < w[1]), "{ratios:?}");
    assert!(ratios[3] < 1.01, "{ratios:?}");
    let errors: Vec<f64> = ratios.iter().map(|r| 1.0 - r).collect();
    assert!(errors.windows(2).all(|w| w[1] < 0.65 * w[0]), "{ratios:?}");
    assert!(errors[3] < 0.06, "{ratios:?}");
}
