//! Following topological changes (issue 11): the per-element arrays of the FEM force fields are
//! [`ElementData`]s updated by the container's change log; created elements are computed once
//! the whole log is applied, from the container's final lists and the state's rest positions as
//! they will be once the log is through ([`settee_core::topology_change::points_after`]: the core
//! shrinks the states after the followers), so that an element created and then renumbered by a
//! later event of the same log is computed from its final vertices.

use settee_core::topology_change::{ChangeError, ElementData, ElementKind, IndexSubset, TopologyChange};
use settee_core::{InitCtx, SimError, SimResult, StateId};

/// Applies the changes of `data`'s kind in order; each created element gets `placeholder`.
/// Returns the final indices of the created elements still present (in creation order).
pub(crate) fn apply_deferred<T: Clone>(data: &mut ElementData<T>, changes: &[TopologyChange], placeholder: T) -> Result<Vec<usize>, ChangeError> {
    let kind = data.kind();
    let mut created = IndexSubset::default();
    for c in changes.iter().filter(|c| c.kind() == kind) {
        let len = data.len();
        data.apply(std::slice::from_ref(c), |_| placeholder.clone())?;
        match c {
            TopologyChange::Added { count, .. } => created.indices.extend(len..len + count),
            // Nothing created yet: nothing to rename (and no need to look at the whole array).
            _ if created.indices.is_empty() => {}
            _ => {
                created.apply(kind, len, std::slice::from_ref(c))?;
            }
        }
    }
    Ok(created.indices)
}

/// The error of a change this component cannot apply.
pub(crate) fn change_error(cx: &InitCtx, e: ChangeError) -> SimError {
    cx.error(format!("cannot follow the topological change: {e}"))
}

/// Checks that the per-element array has as many entries as the container has elements.
pub(crate) fn check_aligned(cx: &InitCtx, kind: ElementKind, data_len: usize, container_len: usize) -> SimResult {
    if data_len != container_len {
        return Err(cx
            .error(format!(
                "after the topological change this force field has {data_len} {k} data but the topology has {container_len} {k}s",
                k = kind.name()
            ))
            .hint("the change log and the container's lists disagree (a modifier logged its change incompletely)"));
    }
    Ok(())
}

/// The state's rest positions (positions when unset) and its size, checking every vertex of the
/// `elements` exists.
pub(crate) fn rest_for<const N: usize>(
    cx: &InitCtx,
    s: StateId,
    elements: &[[usize; N]],
    created: &[usize],
    changes: &[TopologyChange],
) -> SimResult<Vec<f64>> {
    let rest = settee_core::topology_change::points_after(&cx.rest_or_position(s), 3, changes);
    let n = rest.len() / 3;
    for &i in created {
        if let Some(&bad) = elements[i].iter().find(|&&v| v >= n) {
            return Err(cx.error(format!("created element {i} {:?} refers to point {bad}, but the mechanical state has {n} points", elements[i])));
        }
    }
    Ok(rest)
}

#[cfg(test)]
mod tests {
    use crate::test_support::{add_elements, container_scene, grid_hexahedra, grid_points, max_abs, perturb, remove_elements, Harness};
    use crate::triangular_fem::TriangularFEMForceField;
    use crate::TetrahedralCorotationalFEMForceField;
    use settee_core::topology_change::ElementKind;
    use settee_core::ComponentId;

    /// `nx×ny×nz` boxes, each split in 6 tetrahedra.
    fn tetra_beam(nx: usize, ny: usize, nz: usize) -> (Vec<f64>, Vec<[usize; 4]>) {
        let split = [[0, 5, 1, 6], [0, 1, 3, 6], [1, 3, 6, 2], [6, 3, 0, 7], [6, 7, 0, 5], [7, 5, 4, 0]];
        let tets = grid_hexahedra([nx, ny, nz]).iter().flat_map(|h| split.map(|t| t.map(|k| h[k]))).collect();
        (grid_points([nx, ny, nz], [0.5, 0.4, 0.3]), tets)
    }

    fn tetra_scene(pts: &[f64], tets: &[[usize; 4]], method: &str) -> (Harness, ComponentId, ComponentId) {
        let ff = [("youngModulus", "360"), ("poissonRatio", "0.3"), ("method", method)];
        container_scene("TetrahedronSetTopologyContainer", pts, "tetrahedra", tets.iter().flatten(), "TetrahedralCorotationalFEMForceField", &ff)
    }

    fn swap_removed<T: Clone>(v: &[T], ids: &[usize]) -> Vec<T> {
        let mut ids = ids.to_vec();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        let mut v = v.to_vec();
        for i in ids {
            v.swap_remove(i);
        }
        v
    }

    #[test]
    fn tetrahedral_fem_follows_removals_and_additions() {
        let (pts, tets) = tetra_beam(3, 2, 2);
        for method in ["small", "large", "polar"] {
            let (mut h, topo, ff) = tetra_scene(&pts, &tets, method);
            let removed = [5, 0, 40, 71, 12];
            remove_elements(&mut h.scene, topo, ElementKind::Tetrahedron, &removed);
            let reduced = swap_removed(&tets, &removed);
            assert_eq!(h.get_mut::<TetrahedralCorotationalFEMForceField>(ff).tetrahedra(), &reduced[..]);
            let (mut fresh, _, ff2) = tetra_scene(&pts, &reduced, method);
            let x = perturb(&pts, 0.05, 3);
            let dx = perturb(&vec![0.0; pts.len()], 1.0, 4);
            assert_eq!(h.force(ff, &x), fresh.force(ff2, &x), "{method}");
            assert_eq!(h.dforce(ff, &dx, -0.2), fresh.dforce(ff2, &dx, -0.2), "{method}");
            assert_eq!(h.assembled(0.0, -0.2).to_dense(), fresh.assembled(0.0, -0.2).to_dense(), "{method}");

            let back: Vec<Vec<usize>> = removed.iter().map(|&i| tets[i].to_vec()).collect();
            add_elements(&mut h.scene, topo, ElementKind::Tetrahedron, &back);
            let mut grown = reduced.clone();
            grown.extend(removed.iter().map(|&i| tets[i]));
            let (mut fresh, _, ff2) = tetra_scene(&pts, &grown, method);
            assert_eq!(h.force(ff, &x), fresh.force(ff2, &x), "{method}");
            assert_eq!(h.dforce(ff, &dx, -0.2), fresh.dforce(ff2, &dx, -0.2), "{method}");
        }
    }

    fn triangle_scene(pts: &[f64], tris: &[[usize; 3]], method: &str) -> (Harness, ComponentId, ComponentId) {
        let ff = [("youngModulus", "60"), ("poissonRatio", "0.3"), ("method", method)];
        container_scene("TriangleSetTopologyContainer", pts, "triangles", tris.iter().flatten(), "TriangularFEMForceField", &ff)
    }

    #[test]
    fn triangular_fem_follows_removals_and_additions() {
        // A 4×3 grid of squares, two triangles each, slightly bent out of plane.
        let mut pts = Vec::new();
        for y in 0..4 {
            for x in 0..5 {
                pts.extend([x as f64, y as f64 * 0.8, 0.05 * (x * y) as f64]);
            }
        }
        let mut tris = Vec::new();
        for y in 0..3 {
            for x in 0..4 {
                let a = x + 5 * y;
                tris.push([a, a + 1, a + 6]);
                tris.push([a, a + 6, a + 5]);
            }
        }
        for method in ["large", "small"] {
            let (mut h, topo, ff) = triangle_scene(&pts, &tris, method);
            let removed = [23, 4, 0, 11];
            remove_elements(&mut h.scene, topo, ElementKind::Triangle, &removed);
            let reduced = swap_removed(&tris, &removed);
            assert_eq!(h.get_mut::<TriangularFEMForceField>(ff).triangles(), &reduced[..]);
            let (mut fresh, _, ff2) = triangle_scene(&pts, &reduced, method);
            let x = perturb(&pts, 0.05, 5);
            let dx = perturb(&vec![0.0; pts.len()], 1.0, 6);
            assert_eq!(h.force(ff, &x), fresh.force(ff2, &x), "{method}");
            assert_eq!(h.dforce(ff, &dx, 0.4), fresh.dforce(ff2, &dx, 0.4), "{method}");
            assert_eq!(h.get_mut::<TriangularFEMForceField>(ff).info(), fresh.get_mut::<TriangularFEMForceField>(ff2).info());

            add_elements(&mut h.scene, topo, ElementKind::Triangle, &[tris[4].to_vec(), tris[0].to_vec()]);
            let mut grown = reduced.clone();
            grown.extend([tris[4], tris[0]]);
            let (mut fresh, _, ff2) = triangle_scene(&pts, &grown, method);
            assert_eq!(h.force(ff, &x), fresh.force(ff2, &x), "{method}");
            assert_eq!(h.dforce(ff, &dx, 0.4), fresh.dforce(ff2, &dx, 0.4), "{method}");
        }
    }

    /// An added degenerate triangle is a positioned error, not a NaN.
    #[test]
    fn degenerate_created_triangle_is_an_error() {
        let pts = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0];
        let (mut h, topo, _) = triangle_scene(&pts, &[[0, 1, 2]], "large");
        let r = settee_topology::modifier::modify(&mut h.scene, topo, |t| {
            t.mesh.triangles.push([0, 1, 3]);
            t.log_added(ElementKind::Triangle, vec![vec![0, 1, 3]], 1, vec![], vec![]);
        });
        let e = r.unwrap_err().to_string();
        assert!(e.contains("TriangularFEMForceField") && e.contains("degenerate"), "{e}");
    }

    /// A beam of a few hundred tetrahedra, fixed at one end, integrated explicitly while random
    /// tetrahedra are removed at every step: forces, differentials and positions stay finite.
    #[test]
    fn tetra_beam_keeps_running_while_tetrahedra_are_removed() {
        let (pts, tets) = tetra_beam(8, 3, 3);
        assert!(tets.len() > 400);
        let (mut h, topo, ff) = tetra_scene(&pts, &tets, "large");
        let n = pts.len() / 3;
        let mut x = pts.clone();
        let mut v = vec![0.0; x.len()];
        let (dt, mass) = (1e-3, 0.05);
        let mut seed = 12345u64;
        for step in 0..50 {
            let left = h.get_mut::<TetrahedralCorotationalFEMForceField>(ff).tetrahedra().len();
            if left > 3 {
                let mut ids = Vec::new();
                for _ in 0..3 {
                    let i = ((settee_core::testing::lcg(&mut seed) + 1.0) * 0.5 * left as f64) as usize % left;
                    if !ids.contains(&i) {
                        ids.push(i);
                    }
                }
                remove_elements(&mut h.scene, topo, ElementKind::Tetrahedron, &ids);
            }
            let f = h.force(ff, &x);
            let df = h.dforce(ff, &v, -dt * dt);
            assert!(f.iter().chain(&df).all(|a| a.is_finite()), "step {step}");
            for i in 0..n {
                if pts[3 * i] == 0.0 {
                    continue; // the fixed end
                }
                for c in 0..3 {
                    let g = if c == 1 { -9.81 } else { 0.0 };
                    v[3 * i + c] += dt * (f[3 * i + c] / mass + g);
                    x[3 * i + c] += dt * v[3 * i + c];
                }
            }
            assert!(x.iter().all(|a| a.is_finite()) && max_abs(&x) < 100.0, "step {step}");
        }
        assert_eq!(h.get_mut::<TetrahedralCorotationalFEMForceField>(ff).tetrahedra().len(), tets.len() - 150);
    }
}
