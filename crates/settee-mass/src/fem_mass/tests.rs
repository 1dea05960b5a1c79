use super::*;
use crate::geometry::testing::*;
use settee_core::simulation::init_root;

/// `FEMMass` with a `NodalMassDensity` (`property`) on a topology.
fn fem_mass(template: &str, topo_class: &str, topo: &[(&str, &str)], property: &str) -> SimResult<Built> {
    let f = factory();
    let mut scene = Scene::new("root");
    let dir = std::path::Path::new(".");
    let mo = f.create(&mut scene, Scene::ROOT, "MechanicalObject", None, attrs(&[("name", "dofs")]), None, dir).unwrap();
    f.create(&mut scene, Scene::ROOT, topo_class, None, attrs(topo), None, dir).unwrap();
    f.create(&mut scene, Scene::ROOT, "NodalMassDensity", None, attrs(&[("property", property)]), None, dir).unwrap();
    let mass = f.create(&mut scene, Scene::ROOT, "FEMMass", Some(template), attrs(&[]), None, dir).unwrap();
    assert!(!scene.has_errors(), "{:?}", scene.messages);
    init_root(&mut scene, &f)?;
    let state = scene.state_of(mo).unwrap();
    Ok(Built { scene, mass, state })
}

fn femm(b: &Built) -> &FEMMass {
    b.scene.get::<FEMMass>(b.mass).unwrap()
}

/// Checks the assembled matrix against `add_mdx`, gravity and the kinetic energy, and returns
/// it (dense).
fn check_consistency(b: &mut Built) -> Vec<f64> {
    let n = b.size() * 3;
    let m = b.matrix(1.0).unwrap();
    for i in 0..n {
        for j in 0..n {
            assert_eq!(m[i * n + j], m[j * n + i]);
            if i % 3 != j % 3 {
                assert_eq!(m[i * n + j], 0.0);
            }
        }
    }
    let g = params().gravity;
    let gv: Vec<f64> = (0..n).map(|i| g[i % 3]).collect();
    assert_close(&b.gravity_force(), &dense_mul(&m, &gv), 1e-13);
    let dx = test_vector(n);
    let m2 = b.matrix(-0.35).unwrap();
    assert_close(&b.mdx(&dx, -0.35), &dense_mul(&m2, &dx), 1e-14);
    let mdx = b.mdx(&dx, 1.0);
    let ke = b.scene.role::<dyn Mass>(b.mass).unwrap().kinetic_energy(&dx);
    let expected = 0.5 * dx.iter().zip(&mdx).map(|(x, y)| x * y).sum::<f64>();
    assert!((ke - expected).abs() < 1e-13 * expected.abs().max(1.0));
    m
}

#[test]
fn unit_cube_has_the_trilinear_consistent_matrix() {
    let mut b = fem_mass("Vec3,Hexahedron", "MeshTopology", &[("position", CUBE_POS), ("hexahedra", HEXA)], "1100").unwrap();
    assert_eq!(femm(&b).shape(), Shape::Hexahedron);
    let total = 1100.0;
    assert!((femm(&b).total_mass() - total).abs() < 1e-12 * total);
    let m = check_consistency(&mut b);
    assert!((m.iter().sum::<f64>() / 3.0 - total).abs() < 1e-12 * total);
    // M_ij = ρV·2^(number of shared coordinates)/216: 8 (same node), 4 (edge), 2 (face diagonal), 1
    let n = 24;
    let entry = |i: usize, j: usize| m[(3 * i) * n + 3 * j];
    for (j, w) in [(0, 8.0), (1, 4.0), (3, 4.0), (4, 4.0), (2, 2.0), (5, 2.0), (7, 2.0), (6, 1.0)] {
        assert!((entry(0, j) - total * w / 216.0).abs() < 1e-12 * total, "M_0{j} = {}", entry(0, j));
    }
}

#[test]
fn total_mass_is_density_times_volume() {
    // the cantilever beam, coarser
    let grid = [("min", "-0.01 -0.01 0"), ("max", "0.01 0.01 0.2"), ("n", "3 3 6")];
    let mut b = fem_mass("Vec3,Hexahedron", "RegularGridTopology", &grid, "1100").unwrap();
    let total = 1100.0 * 0.02 * 0.02 * 0.2;
    assert!((femm(&b).total_mass() - total).abs() < 1e-12 * total, "{}", femm(&b).total_mass());
    let m = check_consistency(&mut b);
    assert!((m.iter().sum::<f64>() / 3.0 - total).abs() < 1e-12 * total);
    // gravity sums to the weight
    let f = b.gravity_force();
    let fy: f64 = f.chunks(3).map(|v| v[1]).sum();
    assert!((fy - total * params().gravity[1]).abs() < 1e-12 * total * 9.81);
}

/// One quadrature point: every entry of the tetrahedron's node matrix is `ρV/16`.
#[test]
fn tetrahedron_uses_the_one_point_rule() {
    let mut b = fem_mass("Vec3,Tetrahedron", "MeshTopology", &[("position", TETRA_POS), ("tetrahedra", "0 1 2 3")], "2").unwrap();
    let total = 2.0 * TETRA_VOLUME;
    assert!((femm(&b).total_mass() - total).abs() < 1e-13 * total);
    let m = check_consistency(&mut b);
    for i in 0..4 {
        for j in 0..4 {
            assert!((m[(3 * i) * 12 + 3 * j] - total / 16.0).abs() < 1e-14 * total);
        }
    }
}

/// The density is interpolated from the nodes; nodes beyond the `property` list take its last
/// value: node 0 has density 1, the 7 others 2, so the cube weighs (1 + 7·2)/8.
#[test]
fn nodal_density_is_interpolated() {
    let b = fem_mass("Vec3,Hexahedron", "MeshTopology", &[("position", CUBE_POS), ("hexahedra", HEXA)], "1 2").unwrap();
    assert!((femm(&b).total_mass() - 15.0 / 8.0).abs() < 1e-14);
}

#[test]
fn missing_density_is_an_error_and_acc_from_f_refuses() {
    let e = build(None, &[], "MeshTopology", &[("position", CUBE_POS), ("hexahedra", HEXA)], "FEMMass", Some("Vec3,Hexahedron"), &[]).err().unwrap();
    assert!(e.to_string().contains("NodalMassDensity") && e.diagnostic().hint.is_some(), "{e}");
    let b = fem_mass("Vec3,Hexahedron", "MeshTopology", &[("position", CUBE_POS), ("hexahedra", HEXA)], "1").unwrap();
    let mut a = vec![0.0; 24];
    assert!(b.scene.role::<dyn Mass>(b.mass).unwrap().acc_from_f(&mut a, &[1.0; 24]).is_err());
}
