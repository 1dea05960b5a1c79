use super::*;
use crate::test_support::{check_dforce_is_symmetric_assembled_stiffness, max_abs, mul, on_mesh, perturb, rigid, text, Harness, STRIP, STRIP_TRIS};

/// A mesh of triangles given inline, with the force field on it.
fn setup(points: &str, triangles: &str, ff: &[(&str, &str)]) -> (Harness, settee_core::ComponentId, Vec<f64>) {
    on_mesh(points, "triangles", triangles, "TriangleFEMForceField", ff)
}

/// A flat strip for the small method, whose J (SOFA's local-frame formula on world x, y) needs
/// the first edge of every triangle to have a non-zero x extent.
const FLAT: &str = "0 0 0  1 0 0  2 0 0  0 1 0  1 1.2 0  2 1 0";
const FLAT_TRIS: &str = "0 1 3  4 3 1  1 2 4  5 4 2";

fn ff_of(h: &mut Harness, ff: settee_core::ComponentId) -> &mut TriangleFEMForceField {
    h.get_mut::<TriangleFEMForceField>(ff)
}

#[test]
fn large_method_zero_force_at_rest_and_under_rigid_motion() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "5000"), ("poissonRatio", "0.3")]);
    assert_eq!(ff_of(&mut h, ff).method(), Method::Large);
    let f = h.force(ff, &rest);
    assert!(max_abs(&f) < 1e-11, "{}", max_abs(&f));
    let n = (1.0f64 / 3.0).sqrt();
    for (axis, angle) in [([n, n, n], 0.7), ([0.0, 0.0, 1.0], 2.5), ([0.6, 0.0, -0.8], -1.3)] {
        let moved = rigid(&rest, axis, angle, [3.0, -2.0, 5.0]);
        let f = h.force(ff, &moved);
        assert!(max_abs(&f) < 1e-10, "{axis:?}: {}", max_abs(&f));
    }
    // A real deformation is resisted (the check above can fail).
    assert!(max_abs(&h.force(ff, &perturb(&rest, 0.05, 2))) > 1.0);
}

/// The small method measures displacements in world x, y: translations give no force, an
/// in-plane rotation does, and forces never act along z.
#[test]
fn small_method_resists_rotation_in_world_xy_only() {
    let (mut h, ff, rest) = setup(FLAT, FLAT_TRIS, &[("youngModulus", "600"), ("poissonRatio", "0.3"), ("method", "small")]);
    assert_eq!(ff_of(&mut h, ff).method(), Method::Small);
    assert!(max_abs(&h.force(ff, &rest)) < 1e-12);
    let shifted: Vec<f64> = rest.iter().enumerate().map(|(i, v)| v + [0.3, -0.2, 7.0][i % 3]).collect();
    assert!(max_abs(&h.force(ff, &shifted)) < 1e-11);
    let f = h.force(ff, &rigid(&rest, [0.0, 0.0, 1.0], 0.3, [0.0; 3]));
    assert!(max_abs(&f) > 1.0);
    assert!(f.iter().skip(2).step_by(3).all(|&v| v == 0.0));
}

/// Right triangle A(0,0,0), B(L,0,0), C(0,H,0), thickness t, with B moved to L(1+ε) along x.
/// J is built on the current geometry, so the measured strain is exx = −ε/(1+ε) (rest minus
/// current), eyy = γ = 0. Plane stress: σxx = E·exx/(1−ν²), σyy = ν·σxx; the stress vector is
/// σ·t·A (A = LH/2) and the nodal forces J·s are f_B = σxx·tA/(L(1+ε))·x, f_C = σyy·tA/H·y,
/// f_A = −f_B − f_C. Plane strain: σxx = E(1−ν)/((1+ν)(1−2ν))·exx, σyy = Eν/((1+ν)(1−2ν))·exx.
#[test]
fn uniaxial_stretch_gives_plane_stress_and_plane_strain_hooke() {
    let (e, nu, l, hh, eps, t) = (600.0, 0.3, 2.0, 1.5, 0.01, 0.5);
    let pts = format!("0 0 0  {l} 0 0  0 {hh} 0");
    for method in ["large", "small"] {
        for plane_strain in [false, true] {
            let ps = if plane_strain { "true" } else { "false" };
            let (mut h, ff, rest) = setup(
                &pts,
                "0 1 2",
                &[("youngModulus", "600"), ("poissonRatio", "0.3"), ("method", method), ("thickness", "0.5"), ("planeStrain", ps)],
            );
            let mut x = rest.clone();
            x[3] = l * (1.0 + eps);
            let f = h.force(ff, &x);
            let exx = -eps / (1.0 + eps);
            let (sxx, syy) = if plane_strain {
                let c = e / ((1.0 + nu) * (1.0 - 2.0 * nu));
                (c * (1.0 - nu) * exx, c * nu * exx)
            } else {
                (e / (1.0 - nu * nu) * exx, nu * e / (1.0 - nu * nu) * exx)
            };
            let vol = t * l * hh / 2.0;
            let fb = [sxx * vol / (l * (1.0 + eps)), 0.0, 0.0];
            let fc = [0.0, syy * vol / hh, 0.0];
            let expected = [[-fb[0], -fc[1], 0.0], fb, fc].concat();
            for (a, b) in f.iter().zip(&expected) {
                assert!((a - b).abs() < 1e-12 * sxx.abs(), "{method} {ps}: {f:?} vs {expected:?}");
            }
            // As ε → 0: the textbook resultant σ·(H·t)/2 on B with the rest strain ε.
            let textbook = if plane_strain { e * (1.0 - nu) / ((1.0 + nu) * (1.0 - 2.0 * nu)) } else { e / (1.0 - nu * nu) } * eps * hh * t / 2.0;
            assert!((f[3] + textbook).abs() < 2.0 * eps * textbook, "{method} {ps}: {} vs {}", f[3], -textbook);
        }
    }

    // Large method: the same in any orientation (forces rotated with the triangle).
    let u = [0.48, -0.6, 0.64];
    let rest = [0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, hh, 0.0];
    let mut x = rest.to_vec();
    x[3] = l * (1.0 + eps);
    let (rr, xr) = (rigid(&rest, u, 1.1, [1.0, 2.0, 3.0]), rigid(&x, u, 1.1, [1.0, 2.0, 3.0]));
    let (mut h0, ff0, _) = setup(&text(&rest), "0 1 2", &[("youngModulus", "600"), ("poissonRatio", "0.3")]);
    let (mut h1, ff1, _) = setup(&text(&rr), "0 1 2", &[("youngModulus", "600"), ("poissonRatio", "0.3")]);
    let f0 = rigid(&h0.force(ff0, &x), u, 1.1, [0.0; 3]);
    let f1 = h1.force(ff1, &xr);
    for (a, b) in f0.iter().zip(&f1) {
        assert!((a - b).abs() < 1e-10 * max_abs(&f0), "{f0:?} vs {f1:?}");
    }
}

/// Simple shear (C moved by γH along x): only the shear entry, G·γ·A with G = E/(2(1+ν)).
#[test]
fn simple_shear_gives_shear_modulus() {
    let (e, nu, l, hh, g) = (1000.0, 0.25, 1.0, 2.0, 1e-3);
    let pts = format!("0 0 0  {l} 0 0  0 {hh} 0");
    let (mut h, ff, rest) = setup(&pts, "0 1 2", &[("youngModulus", "1000"), ("poissonRatio", "0.25"), ("method", "small")]);
    let mut x = rest.clone();
    x[6] = g * hh;
    let f = h.force(ff, &x);
    // J(4,2) = bx/det = 1/H: the shear stress −τA pulls C back along x; J(3,2) = cy/det = 1/L
    // pulls B along −y; J(5,2) = 0: no y force on C.
    let tau_a = e / (2.0 * (1.0 + nu)) * g * (l * hh / 2.0);
    assert!((f[6] + tau_a / hh).abs() < 1e-12 * tau_a, "{f:?}");
    assert!((f[4] + tau_a / l).abs() < 1e-12 * tau_a, "{f:?}");
    assert!(f[7].abs() < 1e-15, "{f:?}");
}

/// At rest the stress vanishes: central differences of `add_force` match `add_dforce` (k = 1),
/// and so does the assembled stiffness, for both methods.
#[test]
fn dforce_matches_finite_differences_and_matrix_at_rest() {
    for method in ["large", "small"] {
        let (pts, tris) = if method == "large" { (STRIP, STRIP_TRIS) } else { (FLAT, FLAT_TRIS) };
        let (mut h, ff, rest) = setup(pts, tris, &[("youngModulus", "600"), ("poissonRatio", "0.45"), ("method", method)]);
        let dx = perturb(&vec![0.0; rest.len()], 1.0, 3);
        let (fd, df) = h.central_differences(ff, &rest, &dx, 1e-6);
        let scale = max_abs(&df);
        assert!(scale > 1.0);
        for i in 0..df.len() {
            assert!((fd[i] - df[i]).abs() < 1e-6 * scale, "{method} {i}: {} vs {}", fd[i], df[i]);
        }
        let kdx = mul(&h.assembled(0.0, 1.0), &dx);
        for (p, q) in df.iter().zip(&kdx) {
            assert!((p - q).abs() < 1e-12 * scale, "{method}: {p} vs {q}");
        }
    }
}

/// Away from rest SOFA's tangent omits the change of the frame and of J (the geometric terms),
/// which scale with the stress: at a strain of order δ the finite differences differ from
/// `add_dforce` by O(δ) relative, and the difference shrinks with δ.
#[test]
fn dforce_is_the_tangent_up_to_geometric_terms() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "600"), ("poissonRatio", "0.3")]);
    let dx = perturb(&vec![0.0; rest.len()], 1.0, 5);
    let mut errors = Vec::new();
    for delta in [1e-2, 1e-3] {
        let x = perturb(&rest, delta, 9);
        let (fd, df) = h.central_differences(ff, &x, &dx, 1e-7);
        let err = fd.iter().zip(&df).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max) / max_abs(&df);
        errors.push(err);
    }
    assert!(errors[0] < 0.1 && errors[1] < 0.01, "{errors:?}");
    assert!(errors[1] < 0.3 * errors[0], "{errors:?}");
}

/// At a deformed state `add_dforce` is the product with the assembled stiffness (same frames
/// and J), symmetric, annihilating translations; per-element Young's moduli.
#[test]
fn dforce_equals_symmetric_assembled_stiffness() {
    let (mut h, ff, rest) = setup(STRIP, STRIP_TRIS, &[("youngModulus", "600 800 900 700"), ("poissonRatio", "0.3")]);
    check_dforce_is_symmetric_assembled_stiffness(&mut h, ff, &rest);
    let (mut h, ff, rest) = setup(FLAT, FLAT_TRIS, &[("method", "small")]);
    check_dforce_is_symmetric_assembled_stiffness(&mut h, ff, &rest);
}

/// The material: plane stress times thickness times the unsigned rest area, per element.
#[test]
fn material_matrix_scales_with_thickness_area_and_element_modulus() {
    // Second triangle clockwise: the area is still positive.
    let (mut h, ff, _) =
        setup("0 0 0  2 0 0  0 3 0  4 0 0", "0 1 2  1 2 3", &[("youngModulus", "100 200"), ("poissonRatio", "0.2"), ("thickness", "0.1")]);
    let els = ff_of(&mut h, ff).elements().to_vec();
    for (el, (young, area)) in els.iter().zip([(100.0, 3.0), (200.0, 3.0)]) {
        let c = young / (1.0 - 0.04) * 0.1 * area;
        let expected = [[c, 0.2 * c, 0.0], [0.2 * c, c, 0.0], [0.0, 0.0, 0.4 * c]];
        for r in 0..3 {
            for k in 0..3 {
                assert!((el.material[r][k] - expected[r][k]).abs() < 1e-12 * c, "{:?} vs {expected:?}", el.material);
            }
        }
    }
    // Rest local coordinates of the first (large): b = (2, 0), c = (0, 3).
    let r = els[0].rest;
    assert!((r[1][0] - 2.0).abs() < 1e-15 && r[1][1].abs() < 1e-15 && r[2][0].abs() < 1e-15 && (r[2][1] - 3.0).abs() < 1e-15, "{r:?}");
}

/// A topology with quads and no triangles: each quad is split into (q0,q1,q2), (q0,q2,q3).
#[test]
fn quads_are_split_into_two_triangles() {
    let (mut h, ff, rest) = on_mesh("0 0 0  1 0 0  1 1 0  0 1 0  2 0 0  2 1 0", "quads", "0 1 2 3  1 4 5 2", "TriangleFEMForceField", &[]);
    assert_eq!(ff_of(&mut h, ff).triangles(), &[[0, 1, 2], [0, 2, 3], [1, 4, 5], [1, 5, 2]]);
    assert!(max_abs(&h.force(ff, &rest)) < 1e-12);
}

/// `initialPoints`: written back from the rest positions when not given; when given, it is the
/// rest shape (a longer rest triangle pre-stresses the mesh).
#[test]
fn initial_points_are_the_rest_shape() {
    let pts = "0 0 0  2 0 0  0 1.5 0";
    let (mut h, ff, rest) = setup(pts, "0 1 2", &[]);
    let written = h.scene.entry(ff).data.get(TriangleFEMForceField::INITIAL_POINTS).to_vec();
    assert_eq!(written, rest);
    assert!(max_abs(&h.force(ff, &rest)) < 1e-12);
    let (mut h2, ff2, _) = setup(pts, "0 1 2", &[("initialPoints", "0 0 0  2.2 0 0  0 1.5 0")]);
    let f = h2.force(ff2, &rest);
    // B is pushed out towards its rest position, A the other way.
    assert!(f[3] > 1.0 && f[0] < -1.0, "{f:?}");
}

#[test]
fn bad_input_is_an_error() {
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 3] = [
        ("0 0 0  1 0 0  2 0 0", "0 1 2", &[], "degenerate"),
        ("0 0 0  1 0 0  0 1 0", "0 1 5", &[], "beyond"),
        ("0 0 0  1 0 0  0 1 0", "0 1 2", &[("initialPoints", "0 0 0  1 0 0")], "initialPoints"),
    ];
    for (pts, tris, ff, expected) in cases {
        let mut h = Harness::new();
        h.add("MechanicalObject", &[("position", pts)]);
        h.add("MeshTopology", &[("triangles", tris)]);
        h.add("TriangleFEMForceField", ff);
        let e = h.init().unwrap_err();
        assert!(e.to_string().contains(expected), "{e}");
    }
    // No topology at all.
    let mut h = Harness::new();
    h.add("MechanicalObject", &[("position", "0 0 0  1 0 0  0 1 0")]);
    h.add("TriangleFEMForceField", &[]);
    assert!(h.init().is_err());
    // A triangle collapsing during the simulation.
    let (mut h, ff, _) = setup("0 0 0  1 0 0  0 1 0", "0 1 2", &[]);
    let mut io_x = vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0];
    let mut f = vec![0.0; 9];
    let err = ff_of(&mut h, ff).force(&io_x, &mut f).unwrap_err();
    assert!(err.to_string().contains("degenerate"), "{err}");
    io_x[7] = 1.0;
    assert!(ff_of(&mut h, ff).force(&io_x, &mut f).is_ok());
    // Small method: SOFA's J reads the world x extent of the first edge, so a triangle whose first
    // edge is along y is degenerate for it (at the first force evaluation: init builds no J).
    let (mut h, ff, rest) = setup("0 0 0  0 1 0  1 0 0", "0 1 2", &[("method", "small")]);
    let err = ff_of(&mut h, ff).force(&rest, &mut f).unwrap_err();
    assert!(err.to_string().contains("degenerate"), "{err}");
}
