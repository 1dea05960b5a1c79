//! Helpers for the tests of component crates: adding components to a scene by class name, the
//! force, force differential and assembled matrix of a scope, and the checks every force field
//! should pass (finite differences against `addDForce`, a symmetric assembled stiffness equal to
//! `addDForce`). Each crate builds its own [`Factory`] with the classes it needs.

use std::path::Path;

use crate::mechanics::{self as mech, MechScope};
use crate::{Attr, ComponentId, Factory, Mbk, NodeId, Scene, VecId};

/// Creates a component of `class` in `node`; a `template` pair in `attrs` selects the template.
/// Panics on creation errors (tests only).
pub fn add(scene: &mut Scene, f: &Factory, node: NodeId, class: &str, attrs: &[(&str, &str)]) -> ComponentId {
    let template = attrs.iter().find(|(n, _)| *n == "template").map(|(_, v)| *v);
    let attrs = attrs.iter().filter(|(n, _)| *n != "template").map(|(n, v)| Attr { name: n.to_string(), value: v.to_string(), pos: None }).collect();
    let id = f.create(scene, node, class, template, attrs, None, Path::new(".")).expect("component created");
    assert!(!scene.has_errors(), "{:?}", scene.messages);
    id
}

/// The force at the current positions and velocities.
pub fn forces(s: &mut Scene, scope: &MechScope) -> Vec<f64> {
    mech::compute_force(s, scope, VecId::FORCE, VecId::POSITION, VecId::VELOCITY).unwrap();
    let mut out = Vec::new();
    mech::gather(s, scope, VecId::FORCE, &mut out);
    out
}

/// `df = (b·B + k·K)·dx` through the generic `addMBKdx` stage (at the last `addForce`).
pub fn dforce_mbk(s: &mut Scene, scope: &MechScope, dx: &[f64], k: f64, b: f64) -> Vec<f64> {
    mech::scatter(s, scope, VecId::DX, dx);
    for &st in &scope.states {
        s.store.get_mut(st).write(VecId::DFORCE).fill(0.0);
    }
    mech::add_mbkdx(s, scope, VecId::DFORCE, VecId::DX, Mbk { m: 0.0, b, k }, true).unwrap();
    let mut out = Vec::new();
    mech::gather(s, scope, VecId::DFORCE, &mut out);
    out
}

pub fn dforce(s: &mut Scene, scope: &MechScope, dx: &[f64], k: f64) -> Vec<f64> {
    dforce_mbk(s, scope, dx, k, 0.0)
}

/// The assembled `b·B + k·K`.
pub fn assembled(s: &mut Scene, scope: &MechScope, k: f64, b: f64) -> settee_linalg::CsrMatrix {
    let mut m = settee_linalg::MatrixBuilder::new(0);
    mech::assemble(s, scope, Mbk { m: 0.0, b, k }, &mut m).unwrap();
    m.into_matrix()
}

pub fn mul(m: &settee_linalg::CsrMatrix, x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    m.mul_vec(x, &mut y).unwrap();
    y
}

/// Deterministic pseudo-random numbers in [-1, 1).
pub fn lcg(seed: &mut u64) -> f64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

pub fn random_vec(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n).map(|_| lcg(&mut s)).collect()
}

pub fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// Central differences of the force along `dx` against `addDForce` (kFactor 1), relative
/// tolerance `tol`; then `addDForce` is linear in kFactor. Returns `addDForce·dx`. The scene's
/// positions are restored and a final `addForce` leaves the Jacobians at the base configuration.
pub fn check_fd(s: &mut Scene, dx: &[f64], eps: f64, tol: f64) -> Vec<f64> {
    let scope = MechScope::build(s, Scene::ROOT);
    let mut x0 = Vec::new();
    mech::gather(s, &scope, VecId::POSITION, &mut x0);
    let shifted = |s: &mut Scene, sign: f64| {
        let x: Vec<f64> = x0.iter().zip(dx).map(|(a, d)| a + sign * eps * d).collect();
        mech::scatter(s, &scope, VecId::POSITION, &x);
        forces(s, &scope)
    };
    let fp = shifted(s, 1.0);
    let fm = shifted(s, -1.0);
    mech::scatter(s, &scope, VecId::POSITION, &x0);
    forces(s, &scope);
    let df = dforce(s, &scope, dx, 1.0);
    let scale = max_abs(&df);
    assert!(scale > 0.0, "degenerate test: {df:?}");
    for i in 0..df.len() {
        let fd = (fp[i] - fm[i]) / (2.0 * eps);
        assert!((fd - df[i]).abs() <= tol * scale, "row {i}: finite difference {fd} vs addDForce {} (scale {scale})", df[i]);
    }
    let df2 = dforce(s, &scope, dx, -2.5);
    for i in 0..df.len() {
        assert!((df2[i] + 2.5 * df[i]).abs() <= 1e-12 * scale, "kFactor scaling, row {i}");
    }
    df
}

/// The assembled stiffness is symmetric and its product with `dx` equals `addDForce`.
pub fn check_matrix(s: &mut Scene, dx: &[f64]) {
    let scope = MechScope::build(s, Scene::ROOT);
    let df = dforce(s, &scope, dx, 1.0);
    let scale = max_abs(&df).max(1e-300);
    let k = assembled(s, &scope, 1.0, 0.0);
    assert!(k.is_symmetric(1e-12 * scale), "assembled stiffness is not symmetric");
    let kdx = mul(&k, dx);
    for i in 0..df.len() {
        assert!((kdx[i] - df[i]).abs() <= 1e-12 * scale, "row {i}: K·dx {} vs addDForce {}", kdx[i], df[i]);
    }
    // kFactor scaling of the assembly.
    let k2 = assembled(s, &scope, -3.0, 0.0);
    let k2dx = mul(&k2, dx);
    for i in 0..df.len() {
        assert!((k2dx[i] + 3.0 * kdx[i]).abs() <= 1e-12 * scale);
    }
}

pub fn assert_close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for i in 0..a.len() {
        assert!((a[i] - b[i]).abs() <= tol, "index {i}: {} vs {} ({a:?} vs {b:?})", a[i], b[i]);
    }
}

/// Both force-field checks: [`check_fd`] then [`check_matrix`].
pub fn check_derivatives(s: &mut Scene, dx: &[f64], eps: f64, tol: f64) {
    check_fd(s, dx, eps, tol);
    check_matrix(s, dx);
}

/// Hand-made topological changes for the tests of components that follow them, without the
/// modifiers: SOFA's removal of surface elements (triangles or quads) with the edges and points
/// they leave isolated, and the addition of surface elements with their missing edges. Each
/// returns the change log in SOFA's order; the caller sets the lists back into the container
/// and calls [`crate::topology_change::propagate`].
pub mod edits {
    use crate::topology_change::{ElementKind, TopologyChange};
    use crate::MeshData;

    fn surface(mesh: &MeshData, kind: ElementKind) -> Vec<Vec<usize>> {
        match kind {
            ElementKind::Triangle => mesh.triangles.iter().map(|t| t.to_vec()).collect(),
            ElementKind::Quad => mesh.quads.iter().map(|q| q.to_vec()).collect(),
            _ => panic!("surface elements only"),
        }
    }

    fn set_surface(mesh: &mut MeshData, kind: ElementKind, els: Vec<Vec<usize>>) {
        match kind {
            ElementKind::Triangle => mesh.triangles = els.iter().map(|e| [e[0], e[1], e[2]]).collect(),
            _ => mesh.quads = els.iter().map(|e| [e[0], e[1], e[2], e[3]]).collect(),
        }
    }

    fn element_edges(e: &[usize]) -> Vec<[usize; 2]> {
        let k = e.len();
        (0..k).map(|j| [e[(j + 1) % k], e[(j + 2) % k]]).collect()
    }

    fn same_edge(a: [usize; 2], b: [usize; 2]) -> bool {
        a == b || a == [b[1], b[0]]
    }

    /// Removes the surface elements `ids` (sorted in decreasing order first), then the edges no
    /// element uses any more, then the points no edge uses any more, each by swap-with-last.
    pub fn remove_surface(mesh: &mut MeshData, nb_points: &mut usize, kind: ElementKind, ids: &[usize]) -> Vec<TopologyChange> {
        let mut log = Vec::new();
        let mut ids = ids.to_vec();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        let mut els = surface(mesh, kind);
        let removed: Vec<Vec<usize>> = ids.iter().map(|&i| els[i].clone()).collect();
        log.push(TopologyChange::Removed { kind, indices: ids.clone(), elements: removed.clone() });
        for &i in &ids {
            els.swap_remove(i);
        }
        set_surface(mesh, kind, els.clone());
        // Edges of the removed elements that no remaining element has.
        let mut dead: Vec<usize> = Vec::new();
        for r in &removed {
            for e in element_edges(r) {
                let used = els.iter().any(|el| element_edges(el).iter().any(|&x| same_edge(x, e)));
                if let Some(i) = mesh.edges.iter().position(|&x| same_edge(x, e)) {
                    if !used && !dead.contains(&i) {
                        dead.push(i);
                    }
                }
            }
        }
        dead.sort_unstable_by(|a, b| b.cmp(a));
        if !dead.is_empty() {
            log.push(TopologyChange::Removed {
                kind: ElementKind::Edge,
                indices: dead.clone(),
                elements: dead.iter().map(|&i| mesh.edges[i].to_vec()).collect(),
            });
            let gone: Vec<[usize; 2]> = dead.iter().map(|&i| mesh.edges[i]).collect();
            for &i in &dead {
                mesh.edges.swap_remove(i);
            }
            let mut pts: Vec<usize> = gone.iter().flatten().copied().filter(|&p| !mesh.edges.iter().flatten().any(|&q| q == p)).collect();
            pts.sort_unstable_by(|a, b| b.cmp(a));
            pts.dedup();
            if !pts.is_empty() {
                log.push(TopologyChange::Removed { kind: ElementKind::Point, indices: pts.clone(), elements: vec![] });
                let with_points = mesh.points.len() == *nb_points;
                for &p in &pts {
                    let last = *nb_points - 1;
                    let rename = |v: &mut usize| {
                        if *v == last {
                            *v = p
                        }
                    };
                    mesh.edges.iter_mut().flatten().for_each(rename);
                    mesh.triangles.iter_mut().flatten().for_each(rename);
                    mesh.quads.iter_mut().flatten().for_each(rename);
                    if with_points {
                        mesh.points.swap_remove(p);
                    }
                    *nb_points -= 1;
                }
            }
        }
        log
    }

    /// Appends `new_points` points (without ancestors: their state values are zero), the edges
    /// of `elements` not in the mesh yet, then `elements`.
    pub fn add_surface(
        mesh: &mut MeshData,
        nb_points: &mut usize,
        kind: ElementKind,
        new_points: usize,
        elements: &[Vec<usize>],
    ) -> Vec<TopologyChange> {
        let mut log = Vec::new();
        if new_points > 0 {
            *nb_points += new_points;
            log.push(TopologyChange::Added { kind: ElementKind::Point, count: new_points, elements: vec![], ancestors: vec![], coefs: vec![] });
        }
        let mut new_edges: Vec<Vec<usize>> = Vec::new();
        for el in elements {
            for e in element_edges(el) {
                if !mesh.edges.iter().any(|&x| same_edge(x, e)) {
                    mesh.edges.push(e);
                    new_edges.push(e.to_vec());
                }
            }
        }
        if !new_edges.is_empty() {
            log.push(TopologyChange::Added {
                kind: ElementKind::Edge,
                count: new_edges.len(),
                elements: new_edges,
                ancestors: vec![],
                coefs: vec![],
            });
        }
        let mut els = surface(mesh, kind);
        els.extend(elements.iter().cloned());
        set_surface(mesh, kind, els);
        log.push(TopologyChange::Added { kind, count: elements.len(), elements: elements.to_vec(), ancestors: vec![], coefs: vec![] });
        log
    }
}
