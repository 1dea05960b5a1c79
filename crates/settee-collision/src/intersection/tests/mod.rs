//! Known-answer and property tests of the intersection methods. Expected numbers are derived by
//! hand in the comments next to each case; most inputs are dyadic so the arithmetic is exact.

use std::sync::Arc;

use settee_core::{Adjacency, MeshData};

use super::IntersectionMethod;
use crate::geometry::{triangle_flags as tf, ModelGeometry, PrimitiveKind, Vec3};
use crate::output::DetectionOutput;

mod ccd;
mod discrete;
mod local_min_distance;
mod min_proximity;
mod new_proximity;
mod properties;

/// Every ownership flag.
pub(super) const ALL_FLAGS: u32 = tf::P1 | tf::P2 | tf::P3 | tf::E12 | tf::E23 | tf::E31 | tf::BE12 | tf::BE23 | tf::BE31;

pub(super) fn v(x: f64, y: f64, z: f64) -> Vec3 {
    Vec3::new(x, y, z)
}

fn model(kind: PrimitiveKind, name: &str, node: u64, x: &[Vec3]) -> ModelGeometry {
    let mut g = ModelGeometry::new(kind, name, node);
    g.x = x.to_vec();
    g
}

/// A `SphereCollisionModel<Vec3d>`.
pub(super) fn spheres(node: u64, centres: &[Vec3], radii: &[f64]) -> ModelGeometry {
    let mut g = model(PrimitiveKind::Sphere, "spheres", node, centres);
    g.radius = radii.to_vec();
    g
}

/// A `SphereCollisionModel<Rigid3d>` with identity orientations.
pub(super) fn rigid_spheres(node: u64, centres: &[Vec3], radii: &[f64]) -> ModelGeometry {
    let mut g = model(PrimitiveKind::RigidSphere, "rigid", node, centres);
    g.radius = radii.to_vec();
    g.orientations = vec![[0.0, 0.0, 0.0, 1.0]; centres.len()];
    g
}

pub(super) fn points(node: u64, x: &[Vec3]) -> ModelGeometry {
    model(PrimitiveKind::Point, "points", node, x)
}

pub(super) fn lines(node: u64, x: &[Vec3], edges: &[[usize; 2]]) -> ModelGeometry {
    let mut g = model(PrimitiveKind::Line, "lines", node, x);
    g.edges = edges.to_vec();
    g
}

/// A triangle model whose triangles all carry `flags`, with stored normals.
pub(super) fn triangles(node: u64, x: &[Vec3], tris: &[[usize; 3]], flags: u32) -> ModelGeometry {
    let mut g = model(PrimitiveKind::Triangle, "triangles", node, x);
    g.triangles = tris.to_vec();
    g.topology_triangles = tris.len();
    g.triangle_flags = vec![flags; tris.len()];
    g.update_triangle_normals();
    g
}

/// The unit triangle A = (0,0,0), B = (1,0,0), C = (0,1,0) (normal +z).
pub(super) fn unit_triangle(flags: u32) -> ModelGeometry {
    triangles(1, &[v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0)], &[[0, 1, 2]], flags)
}

/// A model of `kind` built from a mesh through `set_topology`, with adjacency.
pub(super) fn from_mesh(kind: PrimitiveKind, node: u64, x: &[Vec3], mesh: &MeshData) -> ModelGeometry {
    let mut g = model(kind, "mesh", node, x);
    let adj = Arc::new(Adjacency::build(mesh, x.len()));
    g.set_topology(mesh, Some(adj), x.len()).unwrap();
    g.update_triangle_normals();
    g.validate().unwrap();
    g
}

pub(super) fn run(m: &dyn IntersectionMethod, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize) -> Vec<DetectionOutput> {
    let mut out = Vec::new();
    let n = m.intersect(g1, e1, g2, e2, &mut out);
    assert_eq!(n, out.len(), "returned count differs from outputs appended");
    out
}

#[track_caller]
pub(super) fn close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol, "{a} vs {b} (tol {tol})");
}

#[track_caller]
pub(super) fn close_v(a: &Vec3, b: &Vec3, tol: f64) {
    for i in 0..3 {
        assert!((a[i] - b[i]).abs() <= tol, "{a:?} vs {b:?} (component {i}, tol {tol})");
    }
}
