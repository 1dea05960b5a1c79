#![allow(clippy::disallowed_methods)] // tests check output Data by name
use super::*;
use crate::test_support::{max_abs, perturb, Harness};
use settee_core::ForceField;
use settee_core::{ComponentId, NodeId, Scene};

/// Creates a component with a template in `node`.
fn add_templated(h: &mut Harness, node: NodeId, class: &str, template: &str, a: &[(&str, &str)]) -> ComponentId {
    let c = h.factory.create(&mut h.scene, node, class, Some(template), crate::test_support::attrs(a), None, std::path::Path::new("."));
    assert!(!h.scene.has_errors(), "{:?}", h.scene.messages);
    c.unwrap()
}

const CLASSES: [&str; 2] = ["LinearSmallStrainFEMForceField", "CorotationalFEMForceField"];
const SHAPES: [&str; 2] = ["Vec3,Hexahedron", "Vec3,Tetrahedron"];

/// A `RegularGridTopology` box with the force field on its hexahedra, or on the tetrahedra of a
/// `Hexa2TetraTopologicalMapping` child, as the cantilever scenes build them.
fn setup(class: &str, template: &str, grid: &[(&str, &str)], ff: &[(&str, &str)]) -> (Harness, ComponentId, Vec<f64>) {
    let mut h = Harness::new();
    h.add("RegularGridTopology", &[&[("name", "grid")], grid].concat());
    let mo = h.add("MechanicalObject", &[("name", "state")]);
    let ffc = if template.ends_with("Hexahedron") {
        add_templated(&mut h, Scene::ROOT, class, template, &[&[("topology", "@grid")], ff].concat())
    } else {
        let fem: NodeId = h.scene.add_node(Scene::ROOT, "fem");
        h.add_in(fem, "TetrahedronSetTopologyContainer", &[("name", "Tetra_topo")]);
        h.add_in(fem, "Hexa2TetraTopologicalMapping", &[("input", "@grid"), ("output", "@Tetra_topo"), ("swapping", "true")]);
        add_templated(&mut h, fem, class, template, &[&[("topology", "@Tetra_topo")], ff].concat())
    };
    h.init().unwrap();
    let rest = h.rest(mo);
    (h, ffc, rest)
}

const BEAM: &[(&str, &str)] = &[("min", "-0.01 -0.01 0"), ("max", "0.01 0.01 0.2"), ("n", "3 3 6")];
const MATERIAL: &[(&str, &str)] = &[("youngModulus", "2e6"), ("poissonRatio", "0.45")];

fn field(h: &mut Harness, id: ComponentId) -> &mut ElementFEMForceField {
    h.get_mut::<ElementFEMForceField>(id)
}

#[test]
fn templates_select_the_elements() {
    for class in CLASSES {
        let (mut h, ff, _) = setup(class, "Vec3,Hexahedron", BEAM, MATERIAL);
        assert_eq!(field(&mut h, ff).nb_elements(), 2 * 2 * 5);
        assert_eq!(field(&mut h, ff).shape(), ElementShape::Hexahedron);
        assert_eq!(h.scene.entry(ff).data.reals("elementStiffness").len(), 20 * 576);
        let (mut h, ff, _) = setup(class, "Vec3,Tetrahedron", BEAM, MATERIAL);
        assert_eq!(field(&mut h, ff).nb_elements(), 6 * 2 * 2 * 5);
    }
    let (mut h, ff, _) = setup("CorotationalFEMForceField", "Vec3,Tetrahedron", BEAM, MATERIAL);
    assert_eq!(field(&mut h, ff).rotation_method(), RotationMethod::Triangle);
    assert_eq!(h.scene.entry(ff).data.str("rotationMethod"), "triangle");
    let (mut h, ff, _) = setup("CorotationalFEMForceField", "Vec3,Hexahedron", BEAM, MATERIAL);
    assert_eq!(field(&mut h, ff).rotation_method(), RotationMethod::Hexahedron);
}

#[test]
fn zero_force_at_rest() {
    for class in CLASSES {
        for t in SHAPES {
            let (mut h, ff, rest) = setup(class, t, BEAM, MATERIAL);
            let f = h.force(ff, &rest);
            assert!(max_abs(&f) < 1e-9, "{class} {t}: {}", max_abs(&f));
        }
    }
}

/// A rigid rotation plus translation of the whole beam: no force for the corotational field
/// (every rotation method), a non-zero one for the linear field.
///
/// The beam is metre-sized here: like SOFA's, the stable polar decomposition compares the
/// eigenvalues of `HᵀH` (`H` ~ length²) with an absolute 1e-8, so it treats the millimetric
/// elements of the cantilever scenes as degenerate.
#[test]
fn rigid_motion_gives_zero_corotational_force() {
    let (s, c) = (0.9f64.sin(), 0.9f64.cos());
    let q: Mat3 = [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]];
    let big: &[(&str, &str)] = &[("min", "-1 -1 0"), ("max", "1 1 20"), ("n", "3 3 6")];
    for t in SHAPES {
        for method in ["", "polar", "stable_polar"] {
            let (mut h, ff, rest) = setup("CorotationalFEMForceField", t, big, &[MATERIAL, &[("rotationMethod", method)]].concat());
            let x: Vec<f64> = rest
                .chunks(3)
                .flat_map(|p| {
                    let r = kernel::rot(&q, [p[0], p[1], p[2]]);
                    [r[0] + 0.3, r[1] - 1.0, r[2] + 0.05]
                })
                .collect();
            let f = h.force(ff, &x);
            // round-off scale: E·h·1e-12 ~ 1e-5 N
            assert!(max_abs(&f) < 1e-4, "{t} {method}: {}", max_abs(&f));
        }
        let (mut h, ff, rest) = setup("LinearSmallStrainFEMForceField", t, BEAM, MATERIAL);
        let x: Vec<f64> = rest.chunks(3).flat_map(|p| kernel::rot(&q, [p[0], p[1], p[2]])).collect();
        assert!(max_abs(&h.force(ff, &x)) > 1.0, "{t}");
    }
}

/// Uniaxial stress `σzz = E·ε` along the beam axis: lateral contraction `-ν·ε`, the end faces
/// carry `∓E·ε·A`, interior layers are in equilibrium, no lateral force anywhere.
#[test]
fn uniaxial_strain_gives_hooke_stress() {
    let (e, nu, eps) = (2e6, 0.45, 1e-4);
    let area = 0.02 * 0.02;
    for class in CLASSES {
        for t in SHAPES {
            let (mut h, ff, rest) = setup(class, t, BEAM, MATERIAL);
            let x: Vec<f64> = rest.chunks(3).flat_map(|p| [p[0] * (1.0 - nu * eps), p[1] * (1.0 - nu * eps), p[2] * (1.0 + eps)]).collect();
            let f = h.force(ff, &x);
            let (mut top, mut bottom) = (0.0, 0.0);
            // The triangle frame of a corotational tetrahedron turns by O(ε) under a non-rigid
            // stretch, which shows as O(ε) relative errors; the other cases are exact.
            let rel = if class.starts_with("Corot") && t.ends_with("Tetrahedron") { 10.0 * eps } else { 1e-9 };
            let tol = rel * e * area * eps;
            for (p, fp) in rest.chunks(3).zip(f.chunks(3)) {
                if p[2] == 0.2 {
                    top += fp[2];
                } else if p[2] == 0.0 {
                    bottom += fp[2];
                } else {
                    assert!(fp[2].abs() < tol, "{class} {t} {p:?}: {fp:?}");
                }
                assert!(fp[0].abs() < tol && fp[1].abs() < tol, "{class} {t} {p:?}: {fp:?}");
            }
            let expect = e * eps * area;
            assert!((top + expect).abs() < rel * expect, "{class} {t}: {top} vs {}", -expect);
            assert!((bottom - expect).abs() < rel * expect, "{class} {t}: {bottom} vs {expect}");
        }
    }
}

#[test]
fn dforce_equals_assembled_matrix_times_dx() {
    for class in CLASSES {
        for t in SHAPES {
            let (mut h, ff, rest) = setup(class, t, BEAM, &[MATERIAL, &[("rayleighStiffness", "0.1")]].concat());
            assert_eq!(field(&mut h, ff).rayleigh_stiffness(), 0.1);
            let x = perturb(&rest, 0.002, 3);
            let dx = perturb(&vec![0.0; x.len()], 1e-3, 5);
            let (df, a, kdx) = h.dforce_and_assembled(ff, &x, &dx, -0.37);
            let scale = max_abs(&df);
            assert!(scale > 1.0, "{class} {t}");
            for (i, (u, v)) in df.iter().zip(&kdx).enumerate() {
                assert!((u - v).abs() <= 1e-11 * scale, "{class} {t} row {i}: {u} vs {v}");
            }
            assert!(a.is_symmetric(1e-9 * scale), "{class} {t}");
        }
    }
}

/// The differential is the derivative of the force: for the linear field exactly, for the
/// corotational one up to the (neglected) rotation derivative, small near rest.
#[test]
fn dforce_is_the_force_derivative_near_rest() {
    for class in CLASSES {
        for t in SHAPES {
            let (mut h, ff, rest) = setup(class, t, BEAM, MATERIAL);
            let dx = perturb(&vec![0.0; rest.len()], 1e-7, 8);
            let _ = h.force(ff, &rest);
            let df = h.dforce(ff, &dx, 1.0);
            let x1: Vec<f64> = rest.iter().zip(&dx).map(|(a, b)| a + b).collect();
            let f1 = h.force(ff, &x1);
            let scale = max_abs(&f1);
            for (a, b) in df.iter().zip(&f1) {
                assert!((a - b).abs() < 1e-5 * scale, "{class} {t}: {a} vs {b}");
            }
        }
    }
}

/// 1 and 3 threads give the same bits for the force, its differential and the assembled
/// stiffness, for both classes and both element shapes. The 4×4×17-cell grid has 272 hexahedra
/// (1632 tetrahedra), above the 256 elements from which the element loops run on rayon's pool;
/// the test checks that all three loops took that branch.
#[test]
fn results_do_not_depend_on_thread_count() {
    let grid: &[(&str, &str)] = &[("min", "-0.01 -0.01 0"), ("max", "0.01 0.01 0.2"), ("n", "5 5 18")];
    for class in CLASSES {
        for template in ["Vec3,Tetrahedron", "Vec3,Hexahedron"] {
            let (mut h, ff, rest) = setup(class, template, grid, MATERIAL);
            let n = field(&mut h, ff).nb_elements();
            assert!(n >= crate::hexahedron_fem::HEXA_PARALLEL_MIN, "{class} {template}: {n} elements");
            let x = perturb(&rest, 0.0003, 1);
            let dx = perturb(&vec![0.0; x.len()], 1.0, 2);
            let (one, loops1) = h.bits_on_threads(ff, &x, &dx, 0.5, 1);
            let (three, loops3) = h.bits_on_threads(ff, &x, &dx, 0.5, 3);
            assert_eq!(loops1, (3, 0), "{class} {template}, one thread: (loops, parallel)");
            assert_eq!(loops3, (3, 3), "{class} {template}, three threads: (loops, parallel)");
            assert_eq!(one, three, "{class} {template}");
        }
    }
}

#[test]
fn bad_rotation_method_is_an_error() {
    let mut h = Harness::new();
    h.add("RegularGridTopology", &[("name", "grid"), ("n", "2 2 2")]);
    h.add("MechanicalObject", &[]);
    add_templated(&mut h, Scene::ROOT, "CorotationalFEMForceField", "Vec3,Hexahedron", &[("rotationMethod", "triangle")]);
    let e = h.init().unwrap_err();
    assert!(e.to_string().contains("rotationMethod") && e.diagnostic().hint.as_deref().is_some_and(|h| h.contains("hexahedron")), "{e}");
}
