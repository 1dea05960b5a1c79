use super::*;
use crate::hexa::{HexaMaterial, HexaMethod};
use crate::test_support::{add_elements, container_scene, grid_hexahedra, grid_points, max_abs, mul, perturb, remove_elements, Harness};
use settee_core::topology_change::ElementKind;

/// `nx` boxes of size `a×b×c` along x: points and hexahedra in SOFA's corner order.
fn bar(nx: usize, a: f64, b: f64, c: f64) -> (Vec<f64>, Vec<[usize; 8]>) {
    (grid_points([nx, 1, 1], [a, b, c]), grid_hexahedra([nx, 1, 1]))
}

fn scene(pts: &[f64], hexa: &[[usize; 8]], method: &str) -> (Harness, ComponentId, ComponentId) {
    let ff = [("youngModulus", "100"), ("poissonRatio", "0.3"), ("method", method)];
    container_scene("HexahedronSetTopologyContainer", pts, "hexahedra", hexa.iter().flatten(), "HexahedralFEMForceField", &ff)
}

/// On a cube the closed-form box stiffness is the exact integral of the trilinear element: it
/// equals the Gauss-integrated stiffness of HexahedronFEMForceField up to the single-precision
/// rounding SOFA applies.
#[test]
fn cube_stiffness_is_the_exact_trilinear_stiffness() {
    let (pts, hexa) = bar(1, 2.0, 2.0, 2.0);
    let nodes: [Vec3; 8] = std::array::from_fn(|k| [pts[3 * hexa[0][k]], pts[3 * hexa[0][k] + 1], pts[3 * hexa[0][k] + 2]]);
    let k = element_stiffness(&nodes, 100.0, 0.3);
    let reference = crate::hexa::element_stiffness(&nodes, &HexaMaterial::new(100.0, 0.3), 1.0).unwrap();
    let scale = reference.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    for r in 0..24 {
        for c in 0..24 {
            assert!((k[r][c] - reference[r][c]).abs() < 1e-6 * scale, "({r},{c}) {} vs {}", k[r][c], reference[r][c]);
            assert_eq!(k[r][c], k[c][r]);
        }
    }
    // A rigid translation is in the kernel.
    let d: [f64; 24] = std::array::from_fn(|i| [1.0, -2.0, 0.5][i % 3]);
    assert!(max_abs(&stiffness_times(&k, &d)) < 1e-5 * scale);
    let _ = HexaMethod::Large;
}

#[test]
fn zero_force_at_rest_and_dforce_matches_the_matrix_at_rest() {
    for method in ["large", "polar"] {
        let (pts, hexa) = bar(3, 1.0, 0.5, 0.7);
        let (mut h, _, ff) = scene(&pts, &hexa, method);
        assert!(max_abs(&h.force(ff, &pts)) < 1e-12, "{method}");
        let dx = perturb(&vec![0.0; pts.len()], 1.0, 3);
        let df = h.dforce(ff, &dx, -0.5);
        let kdx = mul(&h.assembled(0.0, -0.5), &dx);
        let scale = max_abs(&df);
        for (a, b) in df.iter().zip(&kdx) {
            assert!((a - b).abs() < 1e-12 * scale, "{method}");
        }
        // Deformed: restoring forces, finite.
        let x = perturb(&pts, 0.05, 7);
        let f = h.force(ff, &x);
        assert!(f.iter().all(|v| v.is_finite()) && max_abs(&f) > 0.0);
    }
}

/// Removing and adding hexahedra gives the forces of a scene built on the changed mesh.
#[test]
fn follows_hexahedron_removals_and_additions() {
    let (pts, hexa) = bar(4, 1.0, 0.8, 0.6);
    let (mut h, topo, ff) = scene(&pts, &hexa, "large");
    remove_elements(&mut h.scene, topo, ElementKind::Hexahedron, &[1, 3]);
    // SOFA's order: remove 3 (last) then 1 (the last, 2, moves into 1): [0, 2].
    let expected = vec![hexa[0], hexa[2]];
    assert_eq!(h.get_mut::<HexahedralFEMForceField>(ff).hexahedra(), &expected[..]);
    let (mut fresh, _, ff2) = scene(&pts, &expected, "large");
    let x = perturb(&pts, 0.05, 11);
    let dx = perturb(&vec![0.0; pts.len()], 1.0, 12);
    assert_eq!(h.force(ff, &x), fresh.force(ff2, &x));
    assert_eq!(h.dforce(ff, &dx, 0.3), fresh.dforce(ff2, &dx, 0.3));

    add_elements(&mut h.scene, topo, ElementKind::Hexahedron, &[hexa[3].to_vec(), hexa[1].to_vec()]);
    let expected = vec![hexa[0], hexa[2], hexa[3], hexa[1]];
    let (mut fresh, _, ff2) = scene(&pts, &expected, "large");
    assert_eq!(h.force(ff, &x), fresh.force(ff2, &x));
    assert_eq!(h.dforce(ff, &dx, 0.3), fresh.dforce(ff2, &dx, 0.3));
}

/// A log naming hexahedra that do not exist is refused with a positioned error.
#[test]
fn bad_changes_are_positioned_errors() {
    let (pts, hexa) = bar(2, 1.0, 1.0, 1.0);
    let (mut h, topo, _) = scene(&pts, &hexa, "large");
    let bad = [TopologyChange::Removed { kind: ElementKind::Hexahedron, indices: vec![5], elements: vec![] }];
    let e = settee_core::topology_change::propagate(&mut h.scene, topo, &bad).unwrap_err();
    assert!(e.to_string().contains("HexahedralFEMForceField") && e.to_string().contains("hexahedron 5"), "{e}");
}
