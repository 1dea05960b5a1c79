use super::*;
use crate::test_support::{check_dforce_is_symmetric_assembled_stiffness, max_abs, on_mesh, perturb, rigid, text, Harness, STRIP, STRIP_TRIS};

/// A mesh of triangles given inline, with the force field on it.
fn setup(points: &str, triangles: &str, ff: &[(&str, &str)]) -> (Harness, settee_core::ComponentId, Vec<f64>) {
    on_mesh(points, "triangles", triangles, "TriangularFEMForceFieldOptim", ff)
}

#[test]
fn zero_force_at_rest_and_under_rigid_motion() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "600"), ("poissonRatio", "0.3")]);
    let f = h.force(ff, &rest);
    assert!(f.iter().all(|&v| v == 0.0), "{}", max_abs(&f));
    let n = (1.0f64 / 3.0).sqrt();
    let moved = rigid(&rest, [n, n, n], 0.7, [3.0, -2.0, 5.0]);
    let f = h.force(ff, &moved);
    assert!(max_abs(&f) < 1e-11, "{}", max_abs(&f));
}

/// Right triangle A(0,0,0), B(L,0,0), C(0,H,0) stretched by ε along x: plane stress
/// σxx = Eε/(1−ν²), σyy = νσxx; the nodal forces are f_B = −(H/2)σxx·x, f_C = −(L/2)σyy·y and
/// SOFA's stored stress is −σ/2. The same holds in any orientation (forces rotate with the body).
#[test]
fn uniaxial_strain_gives_plane_stress_hooke_forces() {
    let (e, nu, l, hh, eps) = (600.0, 0.3, 2.0, 1.5, 0.01);
    let pts = format!("0 0 0  {l} 0 0  0 {hh} 0");
    let (mut h, ff, rest) = setup(&pts, "0 1 2", &[("youngModulus", "600"), ("poissonRatio", "0.3"), ("method", "large")]);
    let mut x = rest.clone();
    x[3] = l * (1.0 + eps);
    let f = h.force(ff, &x);
    let sxx = e * eps / (1.0 - nu * nu);
    let syy = nu * sxx;
    let fb = [-hh / 2.0 * sxx, 0.0, 0.0];
    let fc = [0.0, -l / 2.0 * syy, 0.0];
    let fa = [-fb[0], -fc[1], 0.0];
    let expected = [fa, fb, fc].concat();
    for (a, b) in f.iter().zip(&expected) {
        assert!((a - b).abs() < 1e-12 * sxx, "{f:?} vs {expected:?}");
    }
    let s = h.get_mut::<TriangularFEMForceFieldOptim>(ff).stress(0);
    assert!((s[0] + sxx / 2.0).abs() < 1e-12 * sxx && (s[1] + syy / 2.0).abs() < 1e-12 * sxx && s[2].abs() < 1e-15, "{s:?}");

    // Rotated and translated copy of both configurations: same forces, rotated.
    let u = [0.48, -0.6, 0.64];
    let (rr, xr) = (rigid(&rest, u, 1.1, [1.0, 2.0, 3.0]), rigid(&x, u, 1.1, [1.0, 2.0, 3.0]));
    let (mut h2, ff2, _) = setup(&text(&rr), "0 1 2", &[("youngModulus", "600"), ("poissonRatio", "0.3")]);
    let f2 = h2.force(ff2, &xr);
    let expected = rigid(&expected, u, 1.1, [0.0; 3]);
    for (a, b) in f2.iter().zip(&expected) {
        assert!((a - b).abs() < 1e-9 * sxx, "{f2:?} vs {expected:?}");
    }
}

/// Simple shear of the right triangle (C moved by γH along x): shear stress τ = Gγ with
/// G = E/(2(1+ν)), stored as −τ/2, no normal stress.
#[test]
fn simple_shear_gives_shear_modulus() {
    let (e, nu, l, hh, g) = (1000.0, 0.25, 1.0, 2.0, 1e-3);
    let pts = format!("0 0 0  {l} 0 0  0 {hh} 0");
    let (mut h, ff, rest) = setup(&pts, "0 1 2", &[("youngModulus", "1000"), ("poissonRatio", "0.25")]);
    let mut x = rest.clone();
    x[6] = g * hh;
    h.force(ff, &x);
    let s = h.get_mut::<TriangularFEMForceFieldOptim>(ff).stress(0);
    let tau = e / (2.0 * (1.0 + nu)) * g;
    assert!(s[0].abs() < 1e-15 && s[1].abs() < 1e-15, "{s:?}");
    assert!((s[2] + tau / 2.0).abs() < 1e-12 * tau, "{s:?} vs {tau}");
}

/// `add_dforce` is the product with the assembled stiffness (same frames), which is symmetric and
/// annihilates rigid translations.
#[test]
fn dforce_equals_assembled_stiffness_product() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "600 800 900 700"), ("poissonRatio", "0.3")]);
    check_dforce_is_symmetric_assembled_stiffness(&mut h, ff, &rest);
}

/// At rest the stress vanishes, so the corotational tangent is exactly the linear stiffness:
/// central finite differences of `add_force` match `add_dforce` (k = 1).
#[test]
fn dforce_matches_finite_differences_at_rest() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "600"), ("poissonRatio", "0.45")]);
    let dx = perturb(&vec![0.0; rest.len()], 1.0, 3);
    let (fd, df) = h.central_differences(ff, &rest, &dx, 1e-6);
    let scale = max_abs(&df);
    for i in 0..df.len() {
        assert!((fd[i] - df[i]).abs() < 1e-6 * scale, "{i}: {} vs {}", fd[i], df[i]);
    }
}

/// `restScale`, when set, scales the rest edges: the configuration scaled by it is at rest.
#[test]
fn rest_scale_prestretches() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("restScale", "2")]);
    assert!(max_abs(&h.force(ff, &rest)) > 1.0);
    let doubled: Vec<f64> = rest.iter().map(|v| 2.0 * v + 1.0).collect();
    assert!(max_abs(&h.force(ff, &doubled)) < 1e-10);
    let c = h.get_mut::<TriangularFEMForceFieldOptim>(ff);
    let r = c.rest()[0];
    assert!((r.bx - 2.0).abs() < 1e-15 && (r.ss - 0.5 / (r.bx * r.cy)).abs() == 0.0);
}
