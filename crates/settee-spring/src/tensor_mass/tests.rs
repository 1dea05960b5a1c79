use settee_core::mechanics::MechScope;
use settee_core::simulation::init_root;
use settee_core::{ComponentId, Scene};

use super::{TetrahedralTensorMassForceField, TriangularTensorMassForceField};
use crate::test_support::*;

fn text(v: &[f64]) -> String {
    v.iter().map(|x| format!("{x:.17e}")).collect::<Vec<_>>().join(" ")
}

fn parse(v: &str) -> Vec<f64> {
    v.split_whitespace().map(|t| t.parse().unwrap()).collect()
}

/// Positions `x + G·x` for every point of `rest`.
fn deformed(rest: &[f64], g: [[f64; 3]; 3]) -> Vec<f64> {
    rest.chunks(3).flat_map(|p| (0..3).map(move |i| p[i] + g[i][0] * p[0] + g[i][1] * p[1] + g[i][2] * p[2])).collect()
}

fn scene(class: &str, rest: &str, kind: &str, elements: &str, pos: &[f64], attrs: &[(&str, &str)]) -> (Scene, ComponentId) {
    let (f, mut s) = state_scene(&[("rest_position", rest), ("position", &text(pos))]);
    add(&mut s, &f, Scene::ROOT, "MeshTopology", &[(kind, elements)]);
    let c = add(&mut s, &f, Scene::ROOT, class, attrs);
    init_root(&mut s, &f).unwrap();
    (s, c)
}

/// A planar fan of six triangles around point 0 (interior), not regular.
const FAN: &str = "0.1 -0.05 0  1 0 0  0.6 0.9 0  -0.4 1 0  -1.1 0.1 0  -0.5 -0.8 0  0.5 -1 0";
const FAN_TRIS: &str = "0 1 2  0 2 3  0 3 4  0 4 5  0 5 6  0 6 1";

/// An octahedron around an interior point 0, as eight tetrahedra.
const OCTA: &str = "0.05 0.02 -0.03  1 0 0  -1.1 0 0  0 0.9 0  0 -1 0  0 0 1.2  0 0 -1";
const OCTA_TETS: &str = "0 1 3 5  0 3 2 5  0 2 4 5  0 4 1 5  0 3 1 6  0 2 3 6  0 4 2 6  0 1 4 6";

#[test]
fn triangle_tensors_pass_the_patch_test() {
    let rest = parse(FAN);
    // a uniform in-plane strain: the interior point is in equilibrium, and an infinitesimal
    // rotation about z gives no force at all
    let g = [[0.01, 0.004, 0.0], [-0.002, -0.006, 0.0], [0.0, 0.0, 0.0]];
    let (mut s, _) =
        scene("TriangularTensorMassForceField", FAN, "triangles", FAN_TRIS, &deformed(&rest, g), &[("youngModulus", "15"), ("poissonRatio", "0.3")]);
    let scope = MechScope::build(&s, Scene::ROOT);
    let f = forces(&mut s, &scope);
    assert!(max_abs(&f) > 1e-3);
    assert!(max_abs(&f[0..3]) < 1e-12 * max_abs(&f), "{:?}", &f[0..3]);
    let total: Vec<f64> = (0..3).map(|c| f.iter().skip(c).step_by(3).sum()).collect();
    assert!(max_abs(&total) < 1e-12 * max_abs(&f));
    let w = [[0.0, -0.01, 0.0], [0.01, 0.0, 0.0], [0.0, 0.0, 0.0]];
    let (mut s, _) = scene("TriangularTensorMassForceField", FAN, "triangles", FAN_TRIS, &deformed(&rest, w), &[]);
    let f = forces(&mut s, &scope);
    assert!(max_abs(&f) < 1e-12, "{f:?}");
}

#[test]
fn triangle_dforce_is_the_derivative() {
    let rest = parse(FAN);
    let x: Vec<f64> = rest.iter().zip(random_vec(21, 4)).map(|(a, b)| a + 0.1 * b).collect();
    let (mut s, c) = scene("TriangularTensorMassForceField", FAN, "triangles", FAN_TRIS, &x, &[("youngModulus", "15"), ("poissonRatio", "0.9")]);
    assert_eq!(s.get::<TriangularTensorMassForceField>(c).unwrap().edge_tensors().len(), 12);
    check_fd(&mut s, &random_vec(21, 7), 1e-3, 1e-11);
}

/// One right triangle with legs 1 along x and y, stretched by `e` along x: the plane-stress
/// membrane forces `−A·σ·∇N` with SOFA's constants, `σxx = (λ + μ)·e`, `σyy = λ·e`
/// (its `μ` is twice the shear modulus).
#[test]
fn triangle_uniaxial_stretch() {
    let (young, nu, e) = (15.0, 0.3, 0.01);
    let lambda = young * nu / (1.0 - nu * nu);
    let mu = young * (1.0 - nu) / (1.0 - nu * nu);
    let x = [0.0, 0.0, 0.0, 1.0 + e, 0.0, 0.0, 0.0, 1.0, 0.0];
    let (mut s, _) =
        scene("TriangularTensorMassForceField", "0 0 0  1 0 0  0 1 0", "triangles", "0 1 2", &x, &[("youngModulus", "15"), ("poissonRatio", "0.3")]);
    let scope = MechScope::build(&s, Scene::ROOT);
    let f = forces(&mut s, &scope);
    let area = 0.5;
    // ∇N1 = (1, 0), ∇N2 = (0, 1)
    let f1x = -area * (lambda + mu) * e;
    let f2y = -area * lambda * e;
    assert!((f[3] - f1x).abs() < 1e-14, "{} vs {f1x}", f[3]);
    assert!((f[7] - f2y).abs() < 1e-14, "{} vs {f2y}", f[7]);
}

#[test]
fn tetrahedron_tensors_pass_the_patch_test() {
    let rest = parse(OCTA);
    let g = [[0.01, 0.004, -0.003], [-0.002, -0.006, 0.005], [0.001, 0.002, 0.008]];
    let (mut s, _) = scene(
        "TetrahedralTensorMassForceField",
        OCTA,
        "tetrahedra",
        OCTA_TETS,
        &deformed(&rest, g),
        &[("youngModulus", "1000"), ("poissonRatio", "0.4")],
    );
    let scope = MechScope::build(&s, Scene::ROOT);
    let f = forces(&mut s, &scope);
    assert!(max_abs(&f) > 1.0);
    assert!(max_abs(&f[0..3]) < 1e-12, "{:?}", &f[0..3]);
    let w = [[0.0, -0.01, 0.02], [0.01, 0.0, -0.03], [-0.02, 0.03, 0.0]];
    let (mut s, _) = scene("TetrahedralTensorMassForceField", OCTA, "tetrahedra", OCTA_TETS, &deformed(&rest, w), &[]);
    assert!(max_abs(&forces(&mut s, &scope)) < 1e-12);
}

/// The corner tetrahedron with legs 2, stretched by `e` along x: the node at (2, 0, 0) gets
/// `−V·(λ+2μ)·e/2` along x, the node at (0, 2, 0) `−V·λ·e/2` along y.
#[test]
fn tetrahedron_uniaxial_stretch_and_derivatives() {
    let (young, nu, e) = (1000.0, 0.3, 0.01);
    let lambda = young * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    let mu = young / (2.0 * (1.0 + nu));
    let x = [0.0, 0.0, 0.0, 2.0 * (1.0 + e), 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0];
    let (mut s, c) = scene(
        "TetrahedralTensorMassForceField",
        "0 0 0  2 0 0  0 2 0  0 0 2",
        "tetrahedra",
        "0 1 2 3",
        &x,
        &[("youngModulus", "1000"), ("poissonRatio", "0.3")],
    );
    assert_eq!(s.get::<TetrahedralTensorMassForceField>(c).unwrap().edge_tensors().len(), 6);
    let scope = MechScope::build(&s, Scene::ROOT);
    let f = forces(&mut s, &scope);
    let volume = 8.0 / 6.0;
    let f1x = -volume * (lambda + 2.0 * mu) * e * 0.5;
    let f2y = -volume * lambda * e * 0.5;
    assert!((f[3] - f1x).abs() < 1e-12 * f1x.abs(), "{} vs {f1x}", f[3]);
    assert!((f[7] - f2y).abs() < 1e-12 * f2y.abs(), "{} vs {f2y}", f[7]);
    let dx = random_vec(12, 3);
    check_fd(&mut s, &dx, 1e-3, 1e-11);
    check_matrix(&mut s, &dx);
}

#[test]
fn tetrahedron_matrix_on_a_deformed_octahedron() {
    let rest = parse(OCTA);
    let x: Vec<f64> = rest.iter().zip(random_vec(21, 2)).map(|(a, b)| a + 0.2 * b).collect();
    let (mut s, _) =
        scene("TetrahedralTensorMassForceField", OCTA, "tetrahedra", OCTA_TETS, &x, &[("youngModulus", "1000"), ("poissonRatio", "0.4")]);
    check_derivatives(&mut s, &random_vec(21, 9), 1e-3, 1e-11);
}
