use super::*;
use crate::test_support::{grid_hexahedra, grid_points, join, max_abs, mul, perturb, Harness};
use settee_core::ComponentId;

/// The materials and parameters of SOFA's TetrahedronHyperelasticityFEMForceField scenes.
const SCENE_MATERIALS: &[(&str, &str)] = &[
    ("ArrudaBoyce", "3448.2759 31034.483"),
    ("StVenantKirchhoff", "3448.2759 31034.483"),
    ("NeoHookean", "3448.2759 31034.483"),
    ("MooneyRivlin", "5000 7000 10"),
    ("Ogden", "1500 500 5000"),
    // TetrahedronHyperelasticityFEMForceField_invertedTets.scn's material
    ("StableNeoHookean", "1644295.30201342 33557.0469798658"),
];

/// A 2×2×2-cell block tetrahedralised with the 6-tetra split, in a MeshTopology.
fn setup(material: &str, params: &str) -> (Harness, ComponentId, Vec<f64>) {
    let mut h = Harness::new();
    let cells = [2, 2, 2];
    let pos = join(grid_points(cells, [0.5, 0.5, 1.35]));
    let tets = crate::tetra::split_hexahedra(&grid_hexahedra(cells), (cells[0], cells[1]));
    let t: Vec<String> = tets.iter().flatten().map(|i| i.to_string()).collect();
    h.add("MeshTopology", &[("position", pos.as_str()), ("tetrahedra", t.join(" ").as_str())]);
    let mo = h.add("MechanicalObject", &[]);
    let ff = h.add("TetrahedronHyperelasticityFEMForceField", &[("materialName", material), ("ParameterSet", params)]);
    h.init().unwrap();
    let rest = h.rest(mo);
    (h, ff, rest)
}

fn rotation() -> Mat3 {
    let (c, s) = (0.7f64.cos(), 0.7f64.sin());
    let rz = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]];
    let (c2, s2) = (0.4f64.cos(), 0.4f64.sin());
    let ry = [[c2, 0.0, s2], [0.0, 1.0, 0.0], [-s2, 0.0, c2]];
    crate::decompose::mat_mul(&rz, &ry)
}

#[test]
fn zero_force_at_rest_and_under_rigid_motion() {
    let g = rotation();
    for (m, p) in SCENE_MATERIALS {
        let (mut h, ff, rest) = setup(m, p);
        let f = h.force(ff, &rest);
        assert!(max_abs(&f) < 1e-9, "{m}: {}", max_abs(&f));
        let x: Vec<f64> =
            rest.chunks(3).flat_map(|q| mat_vec(&g, [q[0], q[1], q[2]])).enumerate().map(|(i, v)| v + [1.0, -2.0, 0.5][i % 3]).collect();
        let f = h.force(ff, &x);
        assert!(max_abs(&f) < 1e-8, "{m}: {}", max_abs(&f));
    }
}

#[test]
fn edges_follow_the_topology() {
    let (mut h, ff, _) = setup("NeoHookean", "1000 3000");
    let c = h.get_mut::<TetrahedronHyperelasticityFEMForceField>(ff);
    assert_eq!(c.tetrahedra().len(), 48);
    // the MeshTopology derives its edges; every tetrahedron edge is found
    assert!(!c.edges().is_empty());
    let edges = c.edges().to_vec();
    assert_eq!(edges.len(), edges_from_tetrahedra(c.tetrahedra()).len());
}

/// add_dforce is the exact derivative of add_force (total-Lagrangian hyperelasticity), checked
/// by central differences at a deformed configuration, for every material of the scene.
#[test]
fn dforce_matches_finite_differences() {
    for (m, p) in SCENE_MATERIALS {
        let (mut h, ff, rest) = setup(m, p);
        let x = perturb(&rest, 0.05, 17);
        let dir = perturb(&vec![0.0; x.len()], 1.0, 23);
        let (fd, df) = h.central_differences(ff, &x, &dir, 1e-6);
        let scale = max_abs(&df);
        assert!(scale > 1.0, "{m}");
        for i in 0..x.len() {
            assert!((fd[i] - df[i]).abs() < 2e-5 * scale, "{m} row {i}: {} vs {}", fd[i], df[i]);
        }
    }
}

#[test]
fn dforce_equals_assembled_matrix_times_dx() {
    for (m, p) in SCENE_MATERIALS {
        let (mut h, ff, rest) = setup(m, p);
        let x = perturb(&rest, 0.05, 5);
        let dx = perturb(&vec![0.0; x.len()], 1.0, 6);
        let _ = h.force(ff, &x);
        let k = -0.8;
        let mat = h.assembled(0.0, k);
        let df = h.dforce(ff, &dx, k);
        let kdx = mul(&mat, &dx);
        let scale = max_abs(&df);
        for (a, b) in df.iter().zip(&kdx) {
            assert!((a - b).abs() < 1e-11 * scale, "{m}: {a} vs {b}");
        }
        // a new add_force invalidates the cached tangent
        let x2 = perturb(&rest, 0.05, 9);
        let _ = h.force(ff, &x2);
        let df2 = h.dforce(ff, &dx, k);
        assert!(df2 != df, "{m}");
    }
}

/// This force field has no sequential branch: its element loops always run on rayon's pool, so
/// even these 48 tetrahedra compare a 1-thread pool with a 3-thread one.
#[test]
fn results_do_not_depend_on_thread_count() {
    let (mut h, ff, rest) = setup("Ogden", "1500 500 5000");
    let x = perturb(&rest, 0.05, 3);
    let dx = perturb(&vec![0.0; x.len()], 1.0, 4);
    let mut run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| (h.force(ff, &x), h.dforce(ff, &dx, 0.3)))
    };
    assert_eq!(run(1), run(3));
}

/// Small strains: St Venant–Kirchhoff with λ, μ of (E, ν) gives the linear-elastic forces of
/// TetrahedronFEMForceField (small) up to second-order terms.
#[test]
fn stvk_matches_linear_elasticity_for_small_strains() {
    let (e, nu) = (1000.0f64, 0.3f64);
    let mu = e / (2.0 * (1.0 + nu));
    let lambda = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    let (mut h, ff, rest) = setup("StVenantKirchhoff", &format!("{mu} {lambda}"));
    let x = perturb(&rest, 1e-6, 2);
    let f = h.force(ff, &x);
    let mut h2 = Harness::new();
    let tets = h.get_mut::<TetrahedronHyperelasticityFEMForceField>(ff).tetrahedra().to_vec();
    let t: Vec<String> = tets.iter().flatten().map(|i| i.to_string()).collect();
    let p: Vec<String> = rest.iter().map(|v| format!("{v:?}")).collect();
    h2.add("MeshTopology", &[("position", p.join(" ").as_str()), ("tetrahedra", t.join(" ").as_str())]);
    h2.add("MechanicalObject", &[]);
    let lin = h2.add("TetrahedronFEMForceField", &[("youngModulus", "1000"), ("poissonRatio", "0.3"), ("method", "small")]);
    h2.init().unwrap();
    let fl = h2.force(lin, &x);
    let scale = max_abs(&fl);
    for (a, b) in f.iter().zip(&fl) {
        assert!((a - b).abs() < 1e-5 * scale, "{a} vs {b}");
    }
}

#[test]
fn bad_material_inputs_are_errors() {
    let mut h = Harness::new();
    h.add("MeshTopology", &[("position", "0 0 0 1 0 0 0 1 0 0 0 1"), ("tetrahedra", "0 1 2 3")]);
    h.add("MechanicalObject", &[]);
    h.add("TetrahedronHyperelasticityFEMForceField", &[("materialName", "MooneyRivlin"), ("ParameterSet", "1 2")]);
    let e = h.init().unwrap_err();
    assert!(e.to_string().contains("needs 3 parameters"), "{e}");

    let mut h = Harness::new();
    h.add("MeshTopology", &[("position", "0 0 0 1 0 0 0 1 0 0 0 1"), ("tetrahedra", "0 1 2 3")]);
    h.add("MechanicalObject", &[]);
    h.add("TetrahedronHyperelasticityFEMForceField", &[("materialName", "Costa"), ("ParameterSet", "1 2 3")]);
    let e = h.init().unwrap_err();
    assert!(e.to_string().contains("not implemented"), "{e}");
}
