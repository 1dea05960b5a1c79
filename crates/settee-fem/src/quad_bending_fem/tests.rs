use super::*;
use crate::test_support::{max_abs, on_mesh, perturb, Harness};

fn setup(points: &str, quads: &str, ff: &[(&str, &str)]) -> (Harness, settee_core::ComponentId, Vec<f64>) {
    on_mesh(points, "quads", quads, "QuadBendingFEMForceField", ff)
}

/// Two 2 × 1.5 rectangles side by side in the xy plane.
const SHEET: &str = "0 0 0  2 0 0  4 0 0  0 1.5 0  2 1.5 0  4 1.5 0";
const SHEET_QUADS: &str = "0 1 4 3  1 2 5 4";
/// A warped 2 × 2 patch (not planar, not rectangular).
const WARPED: &str = "0 0 0  1 0.1 0.2  2 0 0  0 1 0.1  1.1 1 0.4  2 1.1 0  0 2 -0.1  1 2 0.2  2.1 2 0";
const WARPED_QUADS: &str = "0 1 4 3  1 2 5 4  3 4 7 6  4 5 8 7";
const MAT: &[(&str, &str)] = &[("youngModulus", "2000"), ("poissonRatio", "0.3"), ("thickness", "0.5")];

#[test]
fn zero_force_at_rest_and_under_rigid_translation() {
    for (pts, quads) in [(SHEET, SHEET_QUADS), (WARPED, WARPED_QUADS)] {
        let (mut h, ff, rest) = setup(pts, quads, MAT);
        assert_eq!(max_abs(&h.force(ff, &rest)), 0.0);
        let moved: Vec<f64> = rest.iter().enumerate().map(|(i, v)| v + [1.25, -3.5, 0.75][i % 3]).collect();
        let f = h.force(ff, &moved);
        assert!(max_abs(&f) < 1e-10, "{}", max_abs(&f));
    }
}

/// One 2l × 2h rectangle stretched along x (u = εx). The membrane part is the exactly integrated
/// bilinear element on the *current* half-sizes (l' = l(1+ε), h): with Cb₀₀ = Et/(1−ν²),
/// fᵢₓ = −mᵢ·h·Cb₀₀·ε/(1+ε) and fᵢᵧ = −nᵢ·l·ν·Cb₀₀·ε (the plane-stress Hooke resultants over the
/// element edges); no transverse force.
#[test]
fn uniform_stretch_gives_plane_stress_resultants() {
    let (l, hh, e, nu, t, eps) = (1.0, 0.75, 2000.0, 0.3, 0.5, 1e-3);
    let pts = format!("0 0 0  {} 0 0  {} {} 0  0 {} 0", 2.0 * l, 2.0 * l, 2.0 * hh, 2.0 * hh);
    let (mut h, ff, rest) = setup(&pts, "0 1 2 3", MAT);
    let x: Vec<f64> = rest.iter().enumerate().map(|(i, v)| if i % 3 == 0 { v * (1.0 + eps) } else { *v }).collect();
    let f = h.force(ff, &x);
    let c00 = e * t / (1.0 - nu * nu);
    for (i, (m, n)) in SIGNS.iter().enumerate() {
        let fx = -m * hh * c00 * eps / (1.0 + eps);
        let fy = -n * l * nu * c00 * eps;
        assert!(
            (f[3 * i] - fx).abs() < 1e-12 * c00 && (f[3 * i + 1] - fy).abs() < 1e-12 * c00 && f[3 * i + 2] == 0.0,
            "node {i}: {:?} vs {fx} {fy}",
            &f[3 * i..3 * i + 3]
        );
    }
}

/// Transverse answer: a deflection linear in x, w = a·x, with the rotations held at zero (the
/// element has no rotational DOFs in the state) is a uniform transverse shear γxz = a, so
/// fᵢ_z = −mᵢ·h·G'·a·(l/l'), G' = (5/6)·E·t/(2(1+ν)), l' = l·√(1+a²) the current half-length.
#[test]
fn linear_deflection_gives_transverse_shear_resultants() {
    let (l, hh, e, nu, t, a) = (1.0, 0.75, 2000.0, 0.3, 0.5, 0.01);
    let pts = format!("0 0 0  {} 0 0  {} {} 0  0 {} 0", 2.0 * l, 2.0 * l, 2.0 * hh, 2.0 * hh);
    let (mut h, ff, rest) = setup(&pts, "0 1 2 3", MAT);
    let mut x = rest.clone();
    for i in 0..4 {
        x[3 * i + 2] = a * rest[3 * i];
    }
    let f = h.force(ff, &x);
    let g = 5.0 / 6.0 * e * t / (2.0 + 2.0 * nu);
    let ratio = 1.0 / (1.0 + a * a).sqrt();
    for (i, (m, _)) in SIGNS.iter().enumerate() {
        let fz = -m * hh * g * a * ratio;
        assert!(f[3 * i].abs() < 1e-12 && f[3 * i + 1].abs() < 1e-12, "{f:?}");
        assert!((f[3 * i + 2] - fz).abs() < 1e-12 * g, "node {i}: {} vs {fz}", f[3 * i + 2]);
    }
}

/// At rest the force is `K(x)·D(x)` with `D = 0`, so its derivative is `−K·dx` (K annihilates the
/// centroid translation): central finite differences of `add_force` match `add_dforce`, whose
/// operator is symmetric.
#[test]
fn dforce_matches_finite_differences_and_is_symmetric() {
    for (pts, quads) in [(SHEET, SHEET_QUADS), (WARPED, WARPED_QUADS)] {
        let (mut h, ff, rest) = setup(pts, quads, MAT);
        let n = rest.len();
        for seed in 1..3 {
            let dx = perturb(&vec![0.0; n], 1.0, seed);
            let (fd, df) = h.central_differences(ff, &rest, &dx, 1e-6);
            let scale = max_abs(&df);
            assert!(scale > 1.0);
            for i in 0..n {
                assert!((fd[i] - df[i]).abs() < 1e-6 * scale, "{i}: {} vs {}", fd[i], df[i]);
            }
        }
        let cols: Vec<Vec<f64>> = (0..n)
            .map(|j| {
                let mut e = vec![0.0; n];
                e[j] = 1.0;
                h.dforce(ff, &e, 1.0)
            })
            .collect();
        let scale = cols.iter().map(|c| max_abs(c)).fold(0.0, f64::max);
        for (i, ci) in cols.iter().enumerate() {
            for (j, cj) in cols.iter().enumerate() {
                assert!((cj[i] - ci[j]).abs() < 1e-12 * scale, "({i}, {j})");
            }
        }
        // kFactor scales linearly; rigid translations give nothing.
        let dx = perturb(&vec![0.0; n], 1.0, 9);
        let (d1, d3) = (h.dforce(ff, &dx, 1.0), h.dforce(ff, &dx, 3.0));
        assert!(d1.iter().zip(&d3).all(|(a, b)| (3.0 * a - b).abs() < 1e-12 * scale));
        let tr: Vec<f64> = (0..n).map(|i| [0.3, -1.2, 0.7][i % 3]).collect();
        assert!(max_abs(&h.dforce(ff, &tr, 1.0)) < 1e-10 * scale);
    }
}

/// The assembled matrix reproduces SOFA's stride-3 block extraction of the 5-DOF element matrix:
/// block (n1, n2) = −k·K[3·n1.., 3·n2..] (so it differs from the `add_dforce` operator).
#[test]
fn assembled_matrix_uses_sofa_block_extraction() {
    let (mut h, ff, rest) = setup("0 0 0  2 0 0  2 1.5 0  0 1.5 0", "0 1 2 3", MAT);
    h.force(ff, &rest);
    let k = 2.0;
    let a = h.assembled(0.0, k).to_dense();
    let ke = h.get_mut::<QuadBendingFEMForceField>(ff).stiffness(0);
    for n1 in 0..4 {
        for n2 in 0..4 {
            for r in 0..3 {
                for c in 0..3 {
                    assert_eq!(a[(3 * n1 + r) * 12 + 3 * n2 + c], -ke[3 * n1 + r][3 * n2 + c] * k, "({n1},{n2}) [{r}][{c}]");
                }
            }
        }
    }
    // The translational (x, y, z) block of node 0 is the same in both operators.
    let mut e0 = vec![0.0; 12];
    e0[0] = 1.0;
    let d = h.dforce(ff, &e0, k);
    for r in 0..3 {
        assert_eq!(d[r], a[r * 12]);
    }
}

#[test]
fn material_constants() {
    let m = QuadMaterial::new(2000.0, 0.49, 0.5);
    let d = 1.0 - 0.49 * 0.49;
    assert!((m.cb[0] - 1000.0 / d).abs() < 1e-9 && (m.cb[1] - 490.0 / d).abs() < 1e-9);
    assert!((m.cb[4] - 1000.0 * 0.51 / (2.0 * d)).abs() < 1e-9);
    assert!((m.cs_shear[0] - 5.0 / 6.0 * 1000.0 / 2.98).abs() < 1e-9);
}

#[test]
fn missing_topology_is_an_error() {
    let mut h = Harness::new();
    h.add("MechanicalObject", &[("position", "0 0 0  1 0 0  1 1 0  0 1 0")]);
    h.add("QuadBendingFEMForceField", &[]);
    assert!(h.init().is_err());
    let mut h = Harness::new();
    h.add("MechanicalObject", &[("position", "0 0 0  1 0 0  1 1 0  0 1 0")]);
    h.add("MeshTopology", &[("quads", "0 1 2 7")]);
    h.add("QuadBendingFEMForceField", &[]);
    assert!(h.init().is_err());
}
