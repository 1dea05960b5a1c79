use super::*;
use crate::test_support::{check_dforce_is_symmetric_assembled_stiffness, max_abs, mul, on_mesh, perturb, rigid, text, Harness, STRIP, STRIP_TRIS};

/// A mesh of triangles given inline, with the force field on it.
fn setup(points: &str, triangles: &str, ff: &[(&str, &str)]) -> (Harness, settee_core::ComponentId, Vec<f64>) {
    on_mesh(points, "triangles", triangles, "TriangularFEMForceField", ff)
}

#[test]
fn large_method_zero_force_at_rest_and_under_rigid_motion() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "600"), ("poissonRatio", "0.3")]);
    assert_eq!(h.get_mut::<TriangularFEMForceField>(ff).method(), Method::Large);
    let f = h.force(ff, &rest);
    assert!(max_abs(&f) < 1e-12, "{}", max_abs(&f));
    let n = (1.0f64 / 3.0).sqrt();
    for (axis, angle) in [([n, n, n], 0.7), ([0.0, 0.0, 1.0], 2.5), ([0.6, 0.0, -0.8], -1.3)] {
        let moved = rigid(&rest, axis, angle, [3.0, -2.0, 5.0]);
        let f = h.force(ff, &moved);
        assert!(max_abs(&f) < 1e-11, "{axis:?}: {}", max_abs(&f));
    }
}

/// The small method measures displacements in the world frame: a rigid in-plane rotation is seen
/// as a strain, and its forces act in x and y only.
#[test]
fn small_method_resists_rotation_in_world_xy_only() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "600"), ("poissonRatio", "0.3"), ("method", "small")]);
    assert_eq!(h.get_mut::<TriangularFEMForceField>(ff).method(), Method::Small);
    assert!(max_abs(&h.force(ff, &rest)) < 1e-12);
    let shifted: Vec<f64> = rest.iter().enumerate().map(|(i, v)| v + [0.3, -0.2, 7.0][i % 3]).collect();
    assert!(max_abs(&h.force(ff, &shifted)) < 1e-11);
    let f = h.force(ff, &rigid(&rest, [0.0, 0.0, 1.0], 0.3, [0.0; 3]));
    assert!(max_abs(&f) > 1.0);
    assert!(f.iter().skip(2).step_by(3).all(|&v| v == 0.0));
}

/// Right triangle A(0,0,0), B(L,0,0), C(0,H,0) with B moved to L(1+ε) along x. SOFA's J uses the
/// current geometry, so the measured strain is exx = ε/(1+ε), eyy = 0, and the plane-stress law
/// gives σxx = E·exx/(1−ν²), σyy = ν·σxx, no shear. The stored strain and stress are those of the
/// displacement rest − current (hence negative), the stress times the rest area A = LH/2. The
/// nodal forces `J·s` are f_B = −σxx·A/(L(1+ε))·x, f_C = −σyy·A/H·y, f_A = −f_B − f_C.
#[test]
fn uniaxial_strain_gives_plane_stress_hooke() {
    let (e, nu, l, hh, eps) = (600.0, 0.3, 2.0, 1.5, 0.01);
    let pts = format!("0 0 0  {l} 0 0  0 {hh} 0");
    for method in ["large", "small"] {
        let (mut h, ff, rest) = setup(&pts, "0 1 2", &[("youngModulus", "600"), ("poissonRatio", "0.3"), ("method", method)]);
        let mut x = rest.clone();
        x[3] = l * (1.0 + eps);
        let f = h.force(ff, &x);
        let exx = eps / (1.0 + eps);
        let sxx = e * exx / (1.0 - nu * nu);
        let syy = nu * sxx;
        let area = l * hh / 2.0;
        let ti = h.get_mut::<TriangularFEMForceField>(ff).info()[0];
        let tol = 1e-13 * sxx * area;
        assert!((ti.area - area).abs() < 1e-15, "{method}: {}", ti.area);
        assert!((ti.strain[0] + exx).abs() < 1e-15 && ti.strain[1].abs() < 1e-15 && ti.strain[2].abs() < 1e-15, "{method}: {:?}", ti.strain);
        assert!(
            (ti.stress[0] + sxx * area).abs() < tol && (ti.stress[1] + syy * area).abs() < tol && ti.stress[2].abs() < tol,
            "{method}: {:?}",
            ti.stress
        );
        // Nodal forces: B pulled back along x by the membrane resultant over the edge AC; C pulled
        // along −y by the Poisson stress over the (current) edge AB; equilibrium for A.
        let bx = l * (1.0 + eps);
        let fb = [-sxx * area / bx, 0.0, 0.0];
        let fc = [0.0, -syy * area / hh, 0.0];
        let expected = [[-fb[0], -fc[1], 0.0], fb, fc].concat();
        for (a, b) in f.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-12 * sxx, "{method}: {f:?} vs {expected:?}");
        }
        // As ε → 0 this is Hooke's law on the rest geometry: f_B → −(H/2)·Eε/(1−ν²).
        assert!((fb[0] + hh / 2.0 * e * eps / (1.0 - nu * nu)).abs() < 3.0 * eps * fb[0].abs());
    }

    // Large method: the same in any orientation (stress unchanged, forces rotated).
    let u = [0.48, -0.6, 0.64];
    let rest = [0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, hh, 0.0];
    let mut x = rest.to_vec();
    x[3] = l * (1.0 + eps);
    let (rr, xr) = (rigid(&rest, u, 1.1, [1.0, 2.0, 3.0]), rigid(&x, u, 1.1, [1.0, 2.0, 3.0]));
    let (mut h0, ff0, _) = setup(&text(&rest), "0 1 2", &[("youngModulus", "600"), ("poissonRatio", "0.3")]);
    let (mut h1, ff1, _) = setup(&text(&rr), "0 1 2", &[("youngModulus", "600"), ("poissonRatio", "0.3")]);
    let f0 = rigid(&h0.force(ff0, &x), u, 1.1, [0.0; 3]);
    let f1 = h1.force(ff1, &xr);
    let (s0, s1) = (h0.get_mut::<TriangularFEMForceField>(ff0).info()[0].stress, h1.get_mut::<TriangularFEMForceField>(ff1).info()[0].stress);
    for k in 0..3 {
        assert!((s0[k] - s1[k]).abs() < 1e-10 * max_abs(&s0), "{s0:?} vs {s1:?}");
    }
    for (a, b) in f0.iter().zip(&f1) {
        assert!((a - b).abs() < 1e-10 * max_abs(&f0), "{f0:?} vs {f1:?}");
    }
}

/// Simple shear of the right triangle (C moved by γH along x): shear stress τ = Gγ with
/// G = E/(2(1+ν)) (the material's (1−ν)/2 entry), no normal stress.
#[test]
fn simple_shear_gives_shear_modulus() {
    let (e, nu, l, hh, g) = (1000.0, 0.25, 1.0, 2.0, 1e-3);
    let pts = format!("0 0 0  {l} 0 0  0 {hh} 0");
    let (mut h, ff, rest) = setup(&pts, "0 1 2", &[("youngModulus", "1000"), ("poissonRatio", "0.25"), ("method", "small")]);
    let mut x = rest.clone();
    x[6] = g * hh;
    h.force(ff, &x);
    let ti = h.get_mut::<TriangularFEMForceField>(ff).info()[0];
    let tau = e / (2.0 * (1.0 + nu)) * g;
    let area = l * hh / 2.0;
    assert!(ti.stress[0].abs() < 1e-15 && ti.stress[1].abs() < 1e-15, "{:?}", ti.stress);
    assert!((ti.stress[2] + tau * area).abs() < 1e-12 * tau, "{:?} vs {tau}", ti.stress);
}

/// Large method: `add_dforce` is the product with the assembled stiffness (same frames and J),
/// which is symmetric and annihilates rigid translations, at a deformed state too.
#[test]
fn large_dforce_equals_symmetric_assembled_stiffness() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "600 800 900 700"), ("poissonRatio", "0.3")]);
    check_dforce_is_symmetric_assembled_stiffness(&mut h, ff, &rest);
}

/// At rest the stress vanishes, so the tangent is exactly the linear stiffness: central finite
/// differences of `add_force` match `add_dforce` (k = 1), for both methods; for `large` they also
/// match the assembled matrix.
#[test]
fn dforce_matches_finite_differences_at_rest() {
    for method in ["large", "small"] {
        let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "600"), ("poissonRatio", "0.45"), ("method", method)]);
        let dx = perturb(&vec![0.0; rest.len()], 1.0, 3);
        let (fd, df) = h.central_differences(ff, &rest, &dx, 1e-6);
        let scale = max_abs(&df);
        assert!(scale > 1.0);
        for i in 0..df.len() {
            assert!((fd[i] - df[i]).abs() < 1e-6 * scale, "{method} {i}: {} vs {}", fd[i], df[i]);
        }
        let kdx = mul(&h.assembled(0.0, 1.0), &dx);
        if method == "large" {
            for (p, q) in df.iter().zip(&kdx) {
                assert!((p - q).abs() < 1e-12 * scale, "{p} vs {q}");
            }
        } else {
            // SOFA never sets the rotation of small-method elements: their assembled blocks are zero.
            assert_eq!(max_abs(&kdx), 0.0);
        }
    }
}

/// Rest data given through `rotatedInitialElements` + `initialTransformation` replace the rest
/// positions: giving a stretched local triangle pre-stresses the mesh.
#[test]
fn given_rest_data_replace_rest_positions() {
    let pts = "0 0 0  2 0 0  0 1.5 0";
    let (mut h, ff, rest) = setup(pts, "0 1 2", &[("youngModulus", "600"), ("poissonRatio", "0.3")]);
    let computed = h.get_mut::<TriangularFEMForceField>(ff).info()[0];
    assert_eq!(computed.rest, [[0.0; 3], [2.0, 0.0, 0.0], [0.0, 1.5, 0.0]]);
    let (mut h2, ff2, _) = setup(
        pts,
        "0 1 2",
        &[
            ("youngModulus", "600"),
            ("poissonRatio", "0.3"),
            ("rotatedInitialElements", "0 0 0  2.2 0 0  0 1.5 0"),
            ("initialTransformation", "1 0 0 0 1 0 0 0 1"),
        ],
    );
    let f = h2.force(ff2, &rest);
    assert!(f[3] > 1.0 && f[0] < -1.0, "{f:?}");
    assert!(max_abs(&h.force(ff, &rest)) < 1e-12);
}

#[test]
fn bad_input_is_an_error() {
    // Flat triangle at rest.
    let mut h = Harness::new();
    h.add("MechanicalObject", &[("position", "0 0 0  1 0 0  2 0 0")]);
    h.add("MeshTopology", &[("triangles", "0 1 2")]);
    h.add("TriangularFEMForceField", &[]);
    let e = h.init().unwrap_err();
    assert!(e.to_string().contains("degenerate"), "{e}");
    // No topology at all.
    let mut h = Harness::new();
    h.add("MechanicalObject", &[("position", "0 0 0  1 0 0  0 1 0")]);
    h.add("TriangularFEMForceField", &[]);
    assert!(h.init().is_err());
    // Index beyond the state.
    let mut h = Harness::new();
    h.add("MechanicalObject", &[("position", "0 0 0  1 0 0  0 1 0")]);
    h.add("MeshTopology", &[("triangles", "0 1 5")]);
    h.add("TriangularFEMForceField", &[]);
    assert!(h.init().is_err());
}

/// Principal stress diagnostics: uniaxial stress state → the largest absolute principal value.
#[test]
fn principal_stress_diagnostics() {
    let (mut h, ff, rest) = setup("0 0 0  2 0 0  0 1.5 0", "0 1 2", &[("computePrincipalStress", "true"), ("poissonRatio", "0")]);
    let mut x = rest.clone();
    x[3] = 2.02;
    h.force(ff, &x);
    let ti = h.get_mut::<TriangularFEMForceField>(ff).info()[0];
    assert!((ti.max_stress - ti.stress[0].abs()).abs() < 1e-12 * ti.max_stress, "{ti:?}");
}
