use super::*;
use crate::test_support::{grid_hexahedra, grid_points, join, max_abs, perturb, rigid, Harness};
use settee_core::ComponentId;

const METHODS: [&str; 4] = ["qr", "polar", "polar2", "none"];

/// A 2×1×2-cell block tetrahedralised with the 6-tetra split, in a MeshTopology, with the force
/// field `class` (attributes `ff`).
fn setup_class(class: &str, ff: &[(&str, &str)]) -> (Harness, ComponentId, Vec<f64>) {
    let mut h = Harness::new();
    let cells = [2, 1, 2];
    let pos = join(grid_points(cells, [0.5, 0.7, 1.3]));
    let tets = crate::tetra::split_hexahedra(&grid_hexahedra(cells), (cells[0], cells[1]));
    h.add("MeshTopology", &[("position", pos.as_str()), ("tetrahedra", join(tets.iter().flatten()).as_str())]);
    let mo = h.add("MechanicalObject", &[]);
    let c = h.add(class, ff);
    h.init().unwrap();
    let rest = h.rest(mo);
    (h, c, rest)
}

fn setup(method: &str) -> (Harness, ComponentId, Vec<f64>) {
    setup_class("FastTetrahedralCorotationalForceField", &[("youngModulus", "1000"), ("poissonRatio", "0.4"), ("method", method)])
}

#[test]
fn no_force_at_rest_nor_under_rigid_motion() {
    for method in METHODS {
        let (mut h, ff, rest) = setup(method);
        assert_eq!(h.get_mut::<FastTetrahedralCorotationalForceField>(ff).tetrahedra().len(), 24);
        assert!(max_abs(&h.force(ff, &rest)) < 1e-12, "{method}");
        let moved = rigid(&rest, [0.0, 0.6, 0.8], if method == "none" { 0.0 } else { 1.1 }, [0.3, -2.0, 5.0]);
        assert!(max_abs(&h.force(ff, &moved)) < 1e-10, "{method}: {}", max_abs(&h.force(ff, &moved)));
    }
}

/// Without rotation this is the linear element of TetrahedronFEMForceField (method small): the
/// same forces up to rounding, and the force is linear so dForce is its exact derivative.
#[test]
fn linear_method_is_the_linear_tetrahedron() {
    let (mut h, ff, rest) = setup("none");
    let (mut h2, ff2, _) = setup_class("TetrahedronFEMForceField", &[("youngModulus", "1000"), ("poissonRatio", "0.4"), ("method", "small")]);
    let x = perturb(&rest, 0.1, 3);
    let (f, f2) = (h.force(ff, &x), h2.force(ff2, &x));
    let scale = max_abs(&f2);
    assert!(scale > 1.0);
    for (a, b) in f.iter().zip(&f2) {
        assert!((a - b).abs() < 1e-12 * scale, "{a} vs {b}");
    }
    let dx = perturb(&vec![0.0; x.len()], 1.0, 5);
    let (fd, df) = h.central_differences(ff, &x, &dx, 1e-3);
    for (a, b) in fd.iter().zip(&df) {
        assert!((a - b).abs() < 1e-10 * max_abs(&df), "{a} vs {b}");
    }
}

/// At a rigidly moved configuration the element displacements vanish in the rotated frames, so the
/// derivative of the rotations adds nothing: dForce is the exact Jacobian of the force.
#[test]
fn dforce_matches_finite_differences_after_a_rotation() {
    for method in METHODS {
        let (mut h, ff, rest) = setup(method);
        let x = rigid(&rest, [0.48, 0.6, 0.64], 0.8, [1.0, 0.0, -1.0]);
        let dx = perturb(&vec![0.0; x.len()], 1.0, 11);
        let (fd, df) = h.central_differences(ff, &x, &dx, 1e-6);
        let scale = max_abs(&df);
        assert!(scale > 10.0, "{method}");
        let err = fd.iter().zip(&df).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-6 * scale, "{method}: {err} of {scale}");
    }
}

/// Near rest, dForce differs from the finite differences only by the neglected derivative of the
/// rotation, of the order of the deformation.
#[test]
fn dforce_is_close_to_finite_differences_near_rest() {
    for method in ["qr", "polar", "polar2"] {
        let (mut h, ff, rest) = setup(method);
        let x = perturb(&rest, 1e-4, 2);
        let dx = perturb(&vec![0.0; x.len()], 1.0, 4);
        let (fd, df) = h.central_differences(ff, &x, &dx, 1e-7);
        let err = fd.iter().zip(&df).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 2e-3 * max_abs(&df), "{method}: {err}");
    }
}

/// The assembled matrix is the operator of dForce (the diagonal blocks, built from the vertex
/// stiffnesses, equal minus the sum of the edge blocks of their row).
#[test]
fn assembled_matrix_is_the_dforce_operator() {
    for method in METHODS {
        let (mut h, ff, rest) = setup(method);
        let x = perturb(&rest, 0.1, 6);
        let dx = perturb(&vec![0.0; x.len()], 1.0, 8);
        let (df, _, kdx) = h.dforce_and_assembled(ff, &x, &dx, -0.7);
        let scale = max_abs(&df);
        for (a, b) in df.iter().zip(&kdx) {
            assert!((a - b).abs() < 1e-11 * scale, "{method}: {a} vs {b}");
        }
    }
}

/// Uniaxial stretch of one tetrahedron by `s` along x (linear method): the force on the node at
/// x = L is `−V·(λ+2μ)·s·∂N/∂x` with the shape gradients of the corner tetrahedron.
#[test]
fn corner_tetrahedron_stretch_is_hooke() {
    let (young, nu) = (1000.0, 0.3);
    let p = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]];
    let mut e = FastTetraElement::new(RotationMethod::Linear, young, nu, &p);
    let s = 0.01;
    let x = p.map(|q| [q[0] * (1.0 + s), q[1], q[2]]);
    let f = e.force(RotationMethod::Linear, &x);
    let lambda = young * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    let mu = young / (2.0 * (1.0 + nu));
    let volume = 8.0 / 6.0;
    // σxx = (λ+2μ)s, σyy = σzz = λs; nodal force = −V·σ·∇N, ∇N1 = (1/2, 0, 0)
    let expected = -volume * (lambda + 2.0 * mu) * s * 0.5;
    assert!((f[1][0] - expected).abs() < 1e-12 * expected.abs(), "{} vs {expected}", f[1][0]);
    let fy = -volume * lambda * s * 0.5;
    assert!((f[2][1] - fy).abs() < 1e-12 * fy.abs(), "{} vs {fy}", f[2][1]);
}

#[test]
fn unknown_method_is_refused() {
    let mut h = Harness::new();
    h.add("MeshTopology", &[("position", "0 0 0 1 0 0 0 1 0 0 0 1"), ("tetrahedra", "0 1 2 3")]);
    h.add("MechanicalObject", &[]);
    h.add("FastTetrahedralCorotationalForceField", &[("method", "svd")]);
    let e = h.init().unwrap_err();
    assert!(e.to_string().contains("unknown method"), "{e}");
}
