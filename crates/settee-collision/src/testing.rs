//! Helpers shared by the tests and benches of this crate (no part of a simulation): closest
//! points and triangulated height fields.

use crate::geometry::{ModelGeometry, PrimitiveKind, Vec3};

/// Closest point to `p` on triangle (a, b, c) (Ericson's region tests).
pub fn closest_on_triangle(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> Vec3 {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(&ap);
    let d2 = ac.dot(&ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let d3 = ab.dot(&bp);
    let d4 = ac.dot(&bp);
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let d5 = ab.dot(&cp);
    let d6 = ac.dot(&cp);
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}

/// A triangulated `nx × ny` grid of squares of side `h` (two triangles a square), vertex
/// `(i, j)` at `(i·h, j·h, z(i·h, j·h))`.
pub fn height_field(name: &str, node: u64, nx: usize, ny: usize, h: f64, z: impl Fn(f64, f64) -> f64) -> ModelGeometry {
    let mut g = ModelGeometry::new(PrimitiveKind::Triangle, name, node);
    for j in 0..=ny {
        for i in 0..=nx {
            let (x, y) = (i as f64 * h, j as f64 * h);
            g.x.push(Vec3::new(x, y, z(x, y)));
        }
    }
    let id = |i: usize, j: usize| j * (nx + 1) + i;
    for j in 0..ny {
        for i in 0..nx {
            g.triangles.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            g.triangles.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    g.topology_triangles = g.triangles.len();
    g
}
