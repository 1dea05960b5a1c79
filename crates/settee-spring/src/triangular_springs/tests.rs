use settee_core::math::{at, cross, dot, norm, norm2, sub, V3};
use settee_core::mechanics::MechScope;
use settee_core::simulation::init_root;
use settee_core::{ComponentId, Scene};

use super::TriangularBiquadraticSpringsForceField;
use crate::test_support::*;

const REST: &str = "0 0 0  2 0 0  0.5 1.5 0  2.2 1.7 0";
const TRIS: &str = "0 1 2  1 3 2";
const E: f64 = 15.0;
const NU: f64 = 0.3;

/// The plane-stress constants SOFA uses for both models.
fn lame() -> (f64, f64) {
    (E * NU / (1.0 - NU * NU), E * (1.0 - NU) / (1.0 - NU * NU))
}

fn scene(class: &str, rest: &str, pos: &str, tris: &str, attrs: &[(&str, &str)]) -> (Scene, ComponentId) {
    let (f, mut s) = state_scene(&[("rest_position", rest), ("position", pos)]);
    add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", tris)]);
    let mut a = vec![("youngModulus", "15"), ("poissonRatio", "0.3")];
    a.extend_from_slice(attrs);
    let c = add(&mut s, &f, Scene::ROOT, class, &a);
    init_root(&mut s, &f).unwrap();
    (s, c)
}

fn text(v: &[f64]) -> String {
    v.iter().map(|x| format!("{x:.17e}")).collect::<Vec<_>>().join(" ")
}

fn parse(v: &str) -> Vec<f64> {
    v.split_whitespace().map(|t| t.parse().unwrap()).collect()
}

fn triangles(tris: &str) -> Vec<[usize; 3]> {
    parse(tris).chunks(3).map(|c| [c[0] as usize, c[1] as usize, c[2] as usize]).collect()
}

/// Rest geometry of a triangle computed independently of the force fields: area, edge lengths
/// (edge j opposite vertex j) and the cotangents of the angles (from dot and cross products).
fn rest_geometry(x0: &[f64], t: [usize; 3]) -> (f64, [f64; 3], [f64; 3]) {
    let p = t.map(|i| at(x0, i));
    let twice_area = norm(cross(sub(p[1], p[0]), sub(p[2], p[0])));
    let mut len = [0.0; 3];
    let mut cot = [0.0; 3];
    for j in 0..3 {
        let (a, b) = (sub(p[(j + 1) % 3], p[j]), sub(p[(j + 2) % 3], p[j]));
        cot[j] = dot(a, b) / twice_area;
        len[j] = norm(sub(p[(j + 1) % 3], p[(j + 2) % 3]));
    }
    (twice_area / 2.0, len, cot)
}

/// Delingette's biquadratic energy: per triangle Σⱼ kⱼ/4·(ΔL²ⱼ)² + γⱼ/2·ΔL²ₖ·ΔL²ₗ with
/// kⱼ = (2cot²ⱼ(λ+μ) + μ)/(16A), γⱼ = (2cotₖcotₗ(λ+μ) − μ)/(16A); plus, when `compressible`, the
/// area penalty 3(λ+μ)·A·(J−1)⁴/4 for J = area/A < 1.
fn biquadratic_energy(x0: &[f64], x: &[f64], tris: &[[usize; 3]], compressible: bool) -> f64 {
    let (lambda, mu) = lame();
    let mut w = 0.0;
    for &t in tris {
        let (area, len, cot) = rest_geometry(x0, t);
        let dl2: Vec<f64> = (0..3).map(|j| norm2(sub(at(x, t[(j + 1) % 3]), at(x, t[(j + 2) % 3]))) - len[j] * len[j]).collect();
        for j in 0..3 {
            let (k, l) = ((j + 1) % 3, (j + 2) % 3);
            let kj = (2.0 * cot[j] * cot[j] * (lambda + mu) + mu) / (16.0 * area);
            let gj = (2.0 * cot[k] * cot[l] * (lambda + mu) - mu) / (16.0 * area);
            w += kj / 4.0 * dl2[j] * dl2[j] + gj / 2.0 * dl2[k] * dl2[l];
        }
        let current = norm(cross(sub(at(x, t[1]), at(x, t[0])), sub(at(x, t[2]), at(x, t[0])))) / 2.0;
        let j = current / area;
        if compressible && j < 1.0 {
            w += 3.0 * (lambda + mu) * area * (j - 1.0).powi(4) / 4.0;
        }
    }
    w
}

/// The quadratic energy: per triangle Σⱼ sⱼ/2·dlⱼ² + γⱼ·dlₖ·dlₗ with dl = L − L₀,
/// sⱼ = L₀ⱼ²(2cot²ⱼ(λ+μ) + μ)/(8A), γⱼ = L₀ₖL₀ₗ(2cotₖcotₗ(λ+μ) − μ)/(8A).
fn quadratic_energy(x0: &[f64], x: &[f64], tris: &[[usize; 3]]) -> f64 {
    let (lambda, mu) = lame();
    let mut w = 0.0;
    for &t in tris {
        let (area, len, cot) = rest_geometry(x0, t);
        let dl: Vec<f64> = (0..3).map(|j| norm(sub(at(x, t[(j + 1) % 3]), at(x, t[(j + 2) % 3]))) - len[j]).collect();
        for j in 0..3 {
            let (k, l) = ((j + 1) % 3, (j + 2) % 3);
            let sj = len[j] * len[j] * (2.0 * cot[j] * cot[j] * (lambda + mu) + mu) / (8.0 * area);
            let gj = len[k] * len[l] * (2.0 * cot[k] * cot[l] * (lambda + mu) - mu) / (8.0 * area);
            w += sj / 2.0 * dl[j] * dl[j] + gj * dl[k] * dl[l];
        }
    }
    w
}

/// Central differences of an energy: −∇W.
fn minus_gradient(w: impl Fn(&[f64]) -> f64, x: &[f64], h: f64) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
            xp[i] += h;
            xm[i] -= h;
            -(w(&xp) - w(&xm)) / (2.0 * h)
        })
        .collect()
}

fn force_of(s: &mut Scene) -> Vec<f64> {
    let scope = MechScope::build(s, Scene::ROOT);
    forces(s, &scope)
}

fn assert_rel(a: &[f64], b: &[f64], tol: f64) {
    let scale = max_abs(b);
    assert!(scale > 0.0);
    for i in 0..a.len() {
        assert!((a[i] - b[i]).abs() <= tol * scale, "index {i}: {} vs {} ({a:?} vs {b:?})", a[i], b[i]);
    }
}

/// A deformed configuration out of the plane (stretched here, compressed there).
fn deformed(seed: u64, amplitude: f64) -> Vec<f64> {
    parse(REST).iter().zip(random_vec(12, seed)).map(|(x, r)| x + amplitude * r).collect()
}

/// Both models are conservative: their forces are minus the gradient of their energies (edge
/// springs plus angular springs, and the biquadratic area penalty when compressed).
#[test]
fn forces_derive_from_the_energies() {
    let rest = parse(REST);
    let tris = triangles(TRIS);
    for (seed, compressible, shrink) in [(3, false, 1.0), (5, true, 0.8), (9, true, 0.7)] {
        let x: Vec<f64> = deformed(seed, 0.3).iter().map(|v| v * shrink).collect();
        let c = if compressible { "true" } else { "false" };
        let (mut s, id) = scene("TriangularBiquadraticSpringsForceField", REST, &text(&x), TRIS, &[("compressible", c)]);
        let f = force_of(&mut s);
        assert_rel(&f, &minus_gradient(|x| biquadratic_energy(&rest, x, &tris, compressible), &x, 1e-6), 1e-7);
        if compressible {
            let js: Vec<f64> = s.get::<TriangularBiquadraticSpringsForceField>(id).unwrap().triangle_info().iter().map(|t| t.j).collect();
            assert!(js.iter().any(|&j| j < 1.0), "the penalty is exercised: {js:?}");
        }
    }
    let x = deformed(7, 0.3);
    let (mut s, _) = scene("TriangularQuadraticSpringsForceField", REST, &text(&x), TRIS, &[]);
    let f = force_of(&mut s);
    assert_rel(&f, &minus_gradient(|x| quadratic_energy(&rest, x, &tris), &x, 1e-6), 1e-7);
}

/// Saint Venant–Kirchhoff membrane forces of triangle `x0 → x` (rest in the z = 0 plane):
/// F = Ds·Dm⁻¹, E = (FᵀF − I)/2, S = λ·tr(E)·I + 2μE, f_{1,2} = −A·F·S·Dm⁻ᵀ, f₀ = −f₁ − f₂.
fn stvk_forces(x0: &[f64], x: &[f64], lambda: f64, mu: f64) -> Vec<f64> {
    let dm = [[x0[3] - x0[0], x0[6] - x0[0]], [x0[4] - x0[1], x0[7] - x0[1]]];
    let det = dm[0][0] * dm[1][1] - dm[0][1] * dm[1][0];
    let inv = [[dm[1][1] / det, -dm[0][1] / det], [-dm[1][0] / det, dm[0][0] / det]];
    let ds: Vec<V3> = vec![sub(at(x, 1), at(x, 0)), sub(at(x, 2), at(x, 0))];
    let mut f = [[0.0; 2]; 3];
    for r in 0..3 {
        for c in 0..2 {
            f[r][c] = ds[0][r] * inv[0][c] + ds[1][r] * inv[1][c];
        }
    }
    let mut e = [[0.0; 2]; 2];
    for a in 0..2 {
        for b in 0..2 {
            e[a][b] = (0..3).map(|r| f[r][a] * f[r][b]).sum::<f64>() / 2.0 - if a == b { 0.5 } else { 0.0 };
        }
    }
    let tr = e[0][0] + e[1][1];
    let sp = [[lambda * tr + 2.0 * mu * e[0][0], 2.0 * mu * e[0][1]], [2.0 * mu * e[1][0], lambda * tr + 2.0 * mu * e[1][1]]];
    let area = det.abs() / 2.0;
    let mut out = vec![0.0; 9];
    for r in 0..3 {
        for node in 0..2 {
            // (F·S·Dm⁻ᵀ)[r][node]
            let mut v = 0.0;
            for a in 0..2 {
                for b in 0..2 {
                    v += f[r][a] * sp[a][b] * inv[node][b];
                }
            }
            out[3 * (node + 1) + r] = -area * v;
            out[r] += area * v;
        }
    }
    out
}

/// The biquadratic springs are Delingette's exact rewriting of the plane-stress St Venant–Kirchhoff
/// membrane, λ = Eν/(1−ν²) and shear modulus G = E/(2(1+ν)) (half SOFA's `mu` = E(1−ν)/(1−ν²)):
/// equal forces at a finite stretch, rotated out of the plane. The quadratic springs agree with it
/// to first order, at a small strain.
#[test]
fn springs_reproduce_the_stvk_membrane() {
    let rest = [0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.5, 1.5, 0.0];
    let (lambda, mu) = lame();
    let shear = E / (2.0 * (1.0 + NU));
    assert!((shear - mu / 2.0).abs() < 1e-14);
    // x = Q·G·X with an in-plane stretch and shear G (J > 1: no area penalty) and a rotation Q.
    let g = [[1.2, 0.1], [-0.05, 1.1]];
    let q = [[0.6, 0.0, -0.8], [0.0, 1.0, 0.0], [0.8, 0.0, 0.6]];
    let map = |g: [[f64; 2]; 2]| -> Vec<f64> {
        let mut x = vec![0.0; 9];
        for p in 0..3 {
            let (px, py) = (rest[3 * p], rest[3 * p + 1]);
            let planar = [g[0][0] * px + g[0][1] * py, g[1][0] * px + g[1][1] * py, 0.0];
            for r in 0..3 {
                x[3 * p + r] = (0..3).map(|c| q[r][c] * planar[c]).sum();
            }
        }
        x
    };
    let x = map(g);
    let (mut s, _) = scene("TriangularBiquadraticSpringsForceField", &text(&rest), &text(&x), "0 1 2", &[]);
    assert_rel(&force_of(&mut s), &stvk_forces(&rest, &x, lambda, shear), 1e-12);

    let eps = 1e-5;
    let x = map([[1.0 + eps, 0.3 * eps], [0.0, 1.0 - 0.5 * eps]]);
    let (mut s, _) = scene("TriangularQuadraticSpringsForceField", &text(&rest), &text(&x), "0 1 2", &[]);
    assert_rel(&force_of(&mut s), &stvk_forces(&rest, &x, lambda, shear), 1e-4);
}

/// At rest both tangents are exact (finite differences), and at a deformed state SOFA's
/// matrices are exact too for the biquadratic model, whose energy is polynomial; the quadratic
/// one keeps the edge-direction terms of the angular springs out (a first-order difference in
/// the strain).
#[test]
fn dforce_against_finite_differences() {
    let dx = random_vec(12, 11);
    for class in ["TriangularBiquadraticSpringsForceField", "TriangularQuadraticSpringsForceField"] {
        let (mut s, _) = scene(class, REST, REST, TRIS, &[]);
        check_fd(&mut s, &dx, 1e-6, 1e-6);
    }
    let (mut s, _) = scene("TriangularBiquadraticSpringsForceField", REST, &text(&deformed(3, 0.2)), TRIS, &[("compressible", "false")]);
    check_fd(&mut s, &dx, 1e-6, 1e-6);
}

/// Largest difference between central differences of the force along `dx` and `addDForce(dx)`,
/// relative to the latter.
fn tangent_error(s: &mut Scene, dx: &[f64], h: f64) -> f64 {
    let scope = MechScope::build(s, Scene::ROOT);
    let mut x0 = Vec::new();
    settee_core::mechanics::gather(s, &scope, settee_core::VecId::POSITION, &mut x0);
    let mut at_shift = |sign: f64| {
        let x: Vec<f64> = x0.iter().zip(dx).map(|(a, d)| a + sign * h * d).collect();
        settee_core::mechanics::scatter(s, &scope, settee_core::VecId::POSITION, &x);
        forces(s, &scope)
    };
    let (fp, fm) = (at_shift(1.0), at_shift(-1.0));
    settee_core::mechanics::scatter(s, &scope, settee_core::VecId::POSITION, &x0);
    forces(s, &scope);
    let df = dforce(s, &scope, dx, 1.0);
    let err = fp.iter().zip(&fm).zip(&df).map(|((p, m), d)| ((p - m) / (2.0 * h) - d).abs()).fold(0.0, f64::max);
    err / max_abs(&df)
}

/// Off rest, SOFA's quadratic-spring matrices leave out part of the angular terms: the tangent
/// error is first order in the strain (ten times smaller deformation, ten times smaller error).
/// The biquadratic area penalty is not differentiated exactly either (a regularised matrix).
#[test]
fn approximate_tangents_off_rest() {
    let dx = random_vec(12, 11);
    let errors: Vec<f64> = [0.2, 0.02]
        .iter()
        .map(|&a| {
            let (mut s, _) = scene("TriangularQuadraticSpringsForceField", REST, &text(&deformed(3, a)), TRIS, &[]);
            tangent_error(&mut s, &dx, 1e-6)
        })
        .collect();
    assert!(errors[0] > 1e-3 && errors[0] < 0.1, "{errors:?}");
    assert!((errors[0] / errors[1] - 10.0).abs() < 3.0, "{errors:?}");
    let x: Vec<f64> = deformed(5, 0.3).iter().map(|v| v * 0.8).collect();
    let (mut s, _) = scene("TriangularBiquadraticSpringsForceField", REST, &text(&x), TRIS, &[]);
    let e = tangent_error(&mut s, &dx, 1e-6);
    // SOFA blends the penalty's Hessian with a multiple of the identity (weights J−1 and 2−J):
    // far from exact, but bounded.
    assert!(e > 1e-2 && e < 1.0, "{e}");
}

/// Without angular springs SOFA never updates the edge vectors its matrices are built from
/// (they stay zero): the matrix of edge k is −sₖ·ΔL²ₖ·I. Reproduced as is.
#[test]
fn without_angular_springs_the_matrix_is_sofas_diagonal_one() {
    let x = deformed(5, 0.2);
    let (mut s, id) =
        scene("TriangularBiquadraticSpringsForceField", REST, &text(&x), TRIS, &[("useAngularSprings", "false"), ("compressible", "false")]);
    force_of(&mut s);
    let scope = MechScope::build(&s, Scene::ROOT);
    dforce(&mut s, &scope, &random_vec(12, 1), 1.0);
    let ff = s.get::<TriangularBiquadraticSpringsForceField>(id).unwrap();
    for (t, ti) in ff.triangle_info().iter().enumerate() {
        for k in 0..3 {
            let e = ff.edge_info()[ff.topo.edges_in[t][k]];
            let d = -ti.stiffness[k] * e.delta_l2;
            assert!(d.abs() > 1e-3);
            assert_eq!(ti.dfdx[k], [[d, 0.0, 0.0], [0.0, d, 0.0], [0.0, 0.0, d]], "triangle {t} edge {k}");
        }
    }
}
