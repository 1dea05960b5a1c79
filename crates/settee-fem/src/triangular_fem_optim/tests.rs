use super::*;
use crate::test_support::{max_abs, mul, perturb, Harness};

/// A mesh of triangles given inline, with the force field on it.
fn setup(points: &str, triangles: &str, ff: &[(&str, &str)]) -> (Harness, settee_core::ComponentId, Vec<f64>) {
    let mut h = Harness::new();
    let mo = h.add("MechanicalObject", &[("position", points)]);
    h.add("MeshTopology", &[("triangles", triangles)]);
    let c = h.add("TriangularFEMForceFieldOptim", ff);
    h.init().unwrap();
    let rest = h.rest(mo);
    (h, c, rest)
}

/// A bent strip of four triangles (not planar).
const STRIP: &str = "0 0 0  1 0 0  2 0.1 0.3  0 1 0.2  1 1.1 0  2 1 -0.2";
const STRIP_TRIS: &str = "0 1 3  1 4 3  1 2 4  2 5 4";

/// Rotation by angle `t` about the unit axis `u`, applied to every point, plus a translation.
fn rigid(x: &[f64], u: [f64; 3], t: f64, shift: [f64; 3]) -> Vec<f64> {
    let (c, s) = (t.cos(), t.sin());
    x.chunks(3)
        .flat_map(|p| {
            let d = u[0] * p[0] + u[1] * p[1] + u[2] * p[2];
            let cr = [u[1] * p[2] - u[2] * p[1], u[2] * p[0] - u[0] * p[2], u[0] * p[1] - u[1] * p[0]];
            (0..3).map(move |k| p[k] * c + cr[k] * s + u[k] * d * (1.0 - c) + shift[k])
        })
        .collect()
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
    let text: Vec<String> = rr.iter().map(|v| format!("{v:.17e}")).collect();
    let (mut h2, ff2, _) = setup(&text.join(" "), "0 1 2", &[("youngModulus", "600"), ("poissonRatio", "0.3")]);
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
    let x = perturb(&rest, 0.15, 7);
    h.force(ff, &x);
    let k = 2.5;
    let a = h.assembled(0.0, k);
    let n = rest.len();
    for seed in 1..4 {
        let dx = perturb(&vec![0.0; n], 1.0, seed);
        let df = h.dforce(ff, &dx, k);
        let kdx = mul(&a, &dx);
        let scale = max_abs(&df);
        assert!(scale > 1.0);
        for (p, q) in df.iter().zip(&kdx) {
            assert!((p - q).abs() < 1e-12 * scale, "{p} vs {q}");
        }
    }
    let d = a.to_dense();
    for i in 0..n {
        for j in 0..n {
            assert!((d[i * n + j] - d[j * n + i]).abs() < 1e-12 * max_abs(&d), "({i}, {j})");
        }
    }
    let t: Vec<f64> = (0..n).map(|i| [0.3, -1.2, 0.7][i % 3]).collect();
    assert!(max_abs(&h.dforce(ff, &t, 1.0)) < 1e-11);
}

/// At rest the stress vanishes, so the corotational tangent is exactly the linear stiffness:
/// central finite differences of `add_force` match `add_dforce` (k = 1).
#[test]
fn dforce_matches_finite_differences_at_rest() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "600"), ("poissonRatio", "0.45")]);
    let dx = perturb(&vec![0.0; rest.len()], 1.0, 3);
    let eps = 1e-6;
    let xp: Vec<f64> = rest.iter().zip(&dx).map(|(x, d)| x + eps * d).collect();
    let xm: Vec<f64> = rest.iter().zip(&dx).map(|(x, d)| x - eps * d).collect();
    let (fp, fm) = (h.force(ff, &xp), h.force(ff, &xm));
    h.force(ff, &rest);
    let df = h.dforce(ff, &dx, 1.0);
    let scale = max_abs(&df);
    for i in 0..df.len() {
        let fd = (fp[i] - fm[i]) / (2.0 * eps);
        assert!((fd - df[i]).abs() < 1e-6 * scale, "{i}: {fd} vs {}", df[i]);
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
