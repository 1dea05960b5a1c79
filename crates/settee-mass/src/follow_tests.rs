//! The masses following topological changes (issue 11): after removals and additions of
//! elements and points, the vertex masses equal those of a mass built on the changed mesh.

use settee_core::topology_change::{propagate, ElementKind, TopologyChange};
use settee_core::{ComponentId, Scene, VecId};

use crate::geometry::testing::{build, Built};
use crate::{DiagonalMass, UniformMass};

type K = ElementKind;

fn container(b: &Built) -> ComponentId {
    b.scene.node(Scene::ROOT).objects.iter().copied().find(|&c| b.scene.entry(c).class.name.ends_with("SetTopologyContainer")).unwrap()
}

fn remove(b: &mut Built, kind: K, ids: &[usize]) {
    let topo = container(b);
    let mut ids = ids.to_vec();
    ids.sort_unstable_by(|a, b| b.cmp(a));
    settee_topology::modifier::modify(&mut b.scene, topo, |t| {
        t.log_removed(kind, &ids);
        for &i in &ids {
            match kind {
                K::Triangle => drop(t.mesh.triangles.swap_remove(i)),
                K::Tetrahedron => drop(t.mesh.tetrahedra.swap_remove(i)),
                K::Point => {
                    if t.mesh.points.len() == t.nb_points {
                        t.mesh.points.swap_remove(i);
                    }
                    t.nb_points -= 1;
                }
                _ => unreachable!(),
            }
        }
    })
    .unwrap();
}

fn add(b: &mut Built, kind: K, elems: &[Vec<usize>]) {
    let topo = container(b);
    settee_topology::modifier::modify(&mut b.scene, topo, |t| {
        for e in elems {
            match kind {
                K::Triangle => t.mesh.triangles.push([e[0], e[1], e[2]]),
                K::Tetrahedron => t.mesh.tetrahedra.push([e[0], e[1], e[2], e[3]]),
                _ => unreachable!(),
            }
        }
        t.log_added(kind, elems.to_vec(), elems.len(), vec![], vec![]);
    })
    .unwrap();
}

/// Adds points, each the weighted sum of its ancestors.
fn add_points(b: &mut Built, ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) {
    let topo = container(b);
    settee_topology::modifier::modify(&mut b.scene, topo, |t| {
        let n = ancestors.len();
        if t.mesh.points.len() == t.nb_points {
            for (a, c) in ancestors.iter().zip(&coefs) {
                let mut p = [0.0; 3];
                for (&i, &w) in a.iter().zip(c) {
                    for (pd, xd) in p.iter_mut().zip(t.mesh.points[i]) {
                        *pd += w * xd;
                    }
                }
                t.mesh.points.push(p);
            }
        }
        t.nb_points += n;
        t.log_added(K::Point, vec![], n, ancestors, coefs);
    })
    .unwrap();
}

fn diag(b: &mut Built) -> &mut DiagonalMass {
    b.scene.get_mut::<DiagonalMass>(b.mass).unwrap()
}

fn numbers<T: std::fmt::Debug>(v: impl IntoIterator<Item = T>) -> String {
    v.into_iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(" ")
}

/// A 3×1×1 bar of unit cubes, each split in the 6 tetrahedra of the hexahedron volume formula,
/// plus one isolated point at the end.
fn bar() -> (Vec<[f64; 3]>, Vec<[usize; 4]>) {
    let mut pts = Vec::new();
    for z in 0..2 {
        for y in 0..2 {
            for x in 0..4 {
                pts.push([x as f64 * 1.5, y as f64, z as f64 * 0.75]);
            }
        }
    }
    pts.push([9.0, 9.0, 9.0]);
    let id = |x: usize, y: usize, z: usize| x + 4 * (y + 2 * z);
    let mut tets = Vec::new();
    for x in 0..3 {
        let h = [id(x, 0, 0), id(x + 1, 0, 0), id(x + 1, 1, 0), id(x, 1, 0), id(x, 0, 1), id(x + 1, 0, 1), id(x + 1, 1, 1), id(x, 1, 1)];
        for t in [[0, 5, 1, 6], [0, 1, 3, 6], [1, 3, 6, 2], [6, 3, 0, 7], [6, 7, 0, 5], [7, 5, 4, 0]] {
            tets.push(t.map(|k| h[k]));
        }
    }
    (pts, tets)
}

fn tetra_mass(pts: &[[f64; 3]], tets: &[[usize; 4]], mass: &[(&str, &str)]) -> Built {
    let p = numbers(pts.iter().flatten());
    let t = numbers(tets.iter().flatten());
    build(None, &[], "TetrahedronSetTopologyContainer", &[("position", &p), ("tetrahedra", &t)], "DiagonalMass", None, mass).unwrap()
}

fn assert_close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= tol, "entry {i}: {x} vs {y}");
    }
}

#[test]
fn diagonal_mass_follows_tetrahedron_removals_and_additions() {
    let (pts, tets) = bar();
    for mass in [&[("massDensity", "2.5")][..], &[("totalMass", "7")][..]] {
        let mut b = tetra_mass(&pts, &tets, mass);
        let density = diag(&mut b).mass_density();
        let removed = [3, 17, 0, 9];
        remove(&mut b, K::Tetrahedron, &removed);
        // The container's list after SOFA's removals, and a fresh mass of the same density on it.
        let mut reduced = tets.clone();
        let mut sorted = removed.to_vec();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        for i in sorted {
            reduced.swap_remove(i);
        }
        let density_s = format!("{density:?}");
        let mut fresh = tetra_mass(&pts, &reduced, &[("massDensity", &density_s)]);
        let (m, f) = (diag(&mut b).vertex_masses(), diag(&mut fresh).vertex_masses());
        assert_close(&m, &f, 1e-12);
        assert!((diag(&mut b).total_mass() - diag(&mut fresh).total_mass()).abs() < 1e-12);
        assert!((m.iter().sum::<f64>() - diag(&mut b).total_mass()).abs() < 1e-12);
        // Output Data follow.
        assert_eq!(b.scene.entry(b.mass).data.reals("vertexMass"), &m[..]);

        // Adding them back gives the full mesh's masses (element order does not matter).
        add(&mut b, K::Tetrahedron, &removed.iter().map(|&i| tets[i].to_vec()).collect::<Vec<_>>());
        let mut full = tetra_mass(&pts, &tets, &[("massDensity", &density_s)]);
        assert_close(&diag(&mut b).vertex_masses(), &diag(&mut full).vertex_masses(), 1e-12);
        assert!((diag(&mut b).total_mass() - diag(&mut full).total_mass()).abs() < 1e-12);
    }
}

#[test]
fn diagonal_mass_follows_point_removals_and_additions() {
    let (pts, tets) = bar();
    let mut b = tetra_mass(&pts, &tets, &[("massDensity", "1")]);
    let before = diag(&mut b).vertex_masses();
    let total = diag(&mut b).total_mass();
    // The isolated point 16 has no mass; removing point 3 first needs its tetrahedra gone:
    // remove the isolated one (the last point: nothing moves).
    remove(&mut b, K::Point, &[16]);
    assert_eq!(diag(&mut b).vertex_masses(), &before[..16]);
    assert_eq!(diag(&mut b).total_mass(), total);
    // A new point in the middle of edge 3–7 (and on the far face), then a tetrahedron on it.
    add_points(&mut b, vec![vec![3, 7]], vec![vec![0.5, 0.5]]);
    assert_eq!(b.scene.store.get(b.state).size, 17);
    assert_eq!(diag(&mut b).vertex_masses()[16], 0.0);
    add(&mut b, K::Tetrahedron, &[vec![3, 11, 15, 16]]);
    let mut pts2 = pts[..16].to_vec();
    pts2.push([(pts[3][0] + pts[7][0]) * 0.5, (pts[3][1] + pts[7][1]) * 0.5, (pts[3][2] + pts[7][2]) * 0.5]);
    let mut tets2 = tets.clone();
    tets2.push([3, 11, 15, 16]);
    let mut fresh = tetra_mass(&pts2, &tets2, &[("massDensity", "1")]);
    assert_close(&diag(&mut b).vertex_masses(), &diag(&mut fresh).vertex_masses(), 1e-12);
    // The state's rest positions followed too.
    let rest = b.scene.store.get(b.state).read(VecId::REST_POSITION).to_vec();
    assert_close(&rest[48..51], &pts2[16], 0.0);

    // Removing a point that still has mass takes it out of the total (SOFA's point handler),
    // and the last point moves into its slot.
    remove(&mut b, K::Tetrahedron, &[tets2.len() - 1]);
    let m = diag(&mut b).vertex_masses();
    let t = diag(&mut b).total_mass();
    remove(&mut b, K::Point, &[2]);
    let m2 = diag(&mut b).vertex_masses();
    assert_eq!(m2.len(), 16);
    assert_eq!(m2[2], m[16]);
    assert!((diag(&mut b).total_mass() - (t - m[2])).abs() < 1e-15);
}

#[test]
fn diagonal_mass_on_triangles_with_a_geometry_template() {
    let p = "0 0 0  2 0 0  2 1 0  0 1 0  1 2 0";
    let tris = [[0, 1, 2], [0, 2, 3], [3, 2, 4]];
    let t = numbers(tris.iter().flatten());
    let mk = |t: &str| {
        build(
            None,
            &[],
            "TriangleSetTopologyContainer",
            &[("position", p), ("triangles", t)],
            "DiagonalMass",
            Some("Vec3d,Vec3d"),
            &[("massDensity", "3")],
        )
        .unwrap()
    };
    let mut b = mk(&t);
    remove(&mut b, K::Triangle, &[0]);
    let mut fresh = mk(&numbers([[3, 2, 4], [0, 2, 3]].iter().flatten()));
    assert_close(&diag(&mut b).vertex_masses(), &diag(&mut fresh).vertex_masses(), 1e-12);
    assert!((diag(&mut b).total_mass() - 3.0 * 2.0).abs() < 1e-12);
    add(&mut b, K::Triangle, &[vec![0, 1, 2]]);
    let mut full = mk(&t);
    assert_close(&diag(&mut b).vertex_masses(), &diag(&mut full).vertex_masses(), 1e-12);
}

#[test]
fn diagonal_mass_refuses_changes_naming_missing_elements() {
    let (pts, tets) = bar();
    let mut b = tetra_mass(&pts, &tets, &[("massDensity", "1")]);
    let topo = container(&b);
    let bad = [TopologyChange::Added { kind: K::Tetrahedron, count: 1, elements: vec![vec![0, 1, 2, 99]], ancestors: vec![], coefs: vec![] }];
    let e = propagate(&mut b.scene, topo, &bad).unwrap_err();
    assert!(e.to_string().contains("DiagonalMass") && e.to_string().contains("99"), "{e}");
}

fn uniform(b: &mut Built) -> &mut UniformMass {
    b.scene.get_mut::<UniformMass>(b.mass).unwrap()
}

#[test]
fn uniform_mass_keeps_the_vertex_mass_or_the_total_as_told() {
    let (pts, tets) = bar();
    let p = numbers(pts.iter().flatten());
    let t = numbers(tets.iter().flatten());
    for preserve in ["false", "true"] {
        let mut b = build(
            None,
            &[],
            "TetrahedronSetTopologyContainer",
            &[("position", &p), ("tetrahedra", &t)],
            "UniformMass",
            None,
            &[("totalMass", "1.7"), ("preserveTotalMass", preserve)],
        )
        .unwrap();
        let vm = uniform(&mut b).vertex_mass();
        assert_eq!(vm, 1.7 / 17.0);
        add_points(&mut b, vec![vec![0, 1], vec![]], vec![vec![0.5, 0.5], vec![]]);
        let total = b.scene.entry(b.mass).data.real("totalMass");
        if preserve == "true" {
            assert_eq!(uniform(&mut b).vertex_mass(), 1.7 / 19.0);
            assert_eq!(total, 1.7);
        } else {
            assert_eq!(uniform(&mut b).vertex_mass(), vm);
            assert_eq!(total, 19.0 * vm);
        }
        // Gravity acts on the 19 DOFs.
        let g = b.gravity_force();
        assert_eq!(g.len(), 19 * 3);
        assert_eq!(g[18 * 3 + 1], -9.81 * uniform(&mut b).vertex_mass());
        remove(&mut b, K::Point, &[18, 16, 17]);
        let n = b.scene.store.get(b.state).size;
        assert_eq!(n, 16);
        let total = b.scene.entry(b.mass).data.real("totalMass");
        if preserve == "true" {
            assert_eq!(uniform(&mut b).vertex_mass(), 1.7 / 16.0);
        } else {
            assert_eq!(total, 16.0 * vm);
        }
    }
}
