//! Polygon / cube intersection test used by the sparse-grid voxelisation, in single precision as
//! SOFA evaluates it (the Graphics Gems "fast polygon-cube intersection" by Daniel Green and Don
//! Hatch, `GRID/polygon_cube_intersection/`). The cube is the unit cube centred at the origin.
//!
//! The test: trivial accept when a vertex is inside the cube, trivial reject when all vertices
//! are outside one of the 6 face planes, 12 edge planes or 8 corner planes; otherwise a polygon
//! edge crossing the cube, or the cube diagonal closest to the polygon normal crossing the
//! polygon interior, means intersection.

type P = [f32; 3];

/// Bits of the planes (`+limit` → `pos`, `-limit` → `neg`) that `value` lies outside of, among
/// the planes still in `mask`.
#[inline]
fn test_planes(outcode: &mut u32, mask: u32, pos: u32, neg: u32, value: f32, limit: f32) {
    if mask & (pos | neg) != 0 {
        if mask & pos != 0 && value > limit {
            *outcode |= pos;
        } else if mask & neg != 0 && value < -limit {
            *outcode |= neg;
        }
    }
}

fn face_plane(p: &P, mask: u32) -> u32 {
    let mut o = 0;
    test_planes(&mut o, mask, 0x001, 0x002, p[0], 0.5);
    test_planes(&mut o, mask, 0x004, 0x008, p[1], 0.5);
    test_planes(&mut o, mask, 0x010, 0x020, p[2], 0.5);
    o
}

fn bevel_2d(p: &P, mask: u32) -> u32 {
    let mut o = 0;
    test_planes(&mut o, mask, 0x001, 0x002, p[0] + p[1], 1.0);
    test_planes(&mut o, mask, 0x004, 0x008, p[0] - p[1], 1.0);
    test_planes(&mut o, mask, 0x010, 0x020, p[0] + p[2], 1.0);
    test_planes(&mut o, mask, 0x040, 0x080, p[0] - p[2], 1.0);
    test_planes(&mut o, mask, 0x100, 0x200, p[1] + p[2], 1.0);
    test_planes(&mut o, mask, 0x400, 0x800, p[1] - p[2], 1.0);
    o
}

fn bevel_3d(p: &P, mask: u32) -> u32 {
    let mut o = 0;
    test_planes(&mut o, mask, 0x001, 0x002, p[0] + p[1] + p[2], 1.5);
    test_planes(&mut o, mask, 0x004, 0x008, p[0] + p[1] - p[2], 1.5);
    test_planes(&mut o, mask, 0x010, 0x020, p[0] - p[1] + p[2], 1.5);
    test_planes(&mut o, mask, 0x040, 0x080, p[0] - p[1] - p[2], 1.5);
    o
}

/// 1: a vertex is inside the cube; 0: all vertices are outside one plane; -1: undecided.
fn trivial_vertex_tests(verts: &[P]) -> i32 {
    let mut cum_and = !0u32;
    for v in verts {
        let bits = face_plane(v, !0);
        if bits == 0 {
            return 1;
        }
        cum_and &= bits;
    }
    if cum_and != 0 {
        return 0;
    }
    for tests in [bevel_2d as fn(&P, u32) -> u32, bevel_3d] {
        let mut cum_and = !0u32;
        for v in verts {
            cum_and = tests(v, cum_and);
            if cum_and == 0 {
                break;
            }
        }
        if cum_and != 0 {
            return 0;
        }
    }
    -1
}

#[inline]
fn sign_nonzero(x: f32) -> f32 {
    if x < 0.0 {
        -1.0
    } else {
        1.0
    }
}

/// Whether segment `v0 v1` meets the cube (the origin inside the cube swept along it).
fn segment_intersects_cube(v0: &P, v1: &P) -> bool {
    let e = [v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]];
    let s = [sign_nonzero(e[0]), sign_nonzero(e[1]), sign_nonzero(e[2])];
    for i in 0..3 {
        if v0[i] * s[i] > 0.5 {
            return false;
        }
        if v1[i] * s[i] < -0.5 {
            return false;
        }
    }
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let n_dot_v0 = e[i2] * v0[i1] - e[i1] * v0[i2];
        let n_dot_edge = 0.5f32 * (e[i2] * s[i1] + e[i1] * s[i2]);
        if n_dot_v0 * n_dot_v0 > n_dot_edge * n_dot_edge {
            return false;
        }
    }
    true
}

/// `(b > x) - (a > x)`.
#[inline]
fn seg_contains_point(a: f32, b: f32, x: f32) -> i32 {
    (b > x) as i32 - (a > x) as i32
}

/// Multiplicity with which the polygon contains `point` (assumed in its plane).
fn polygon_contains_point_3d(verts: &[P], normal: &P, point: &P) -> i32 {
    let a = [normal[0].abs(), normal[1].abs(), normal[2].abs()];
    let maxdim2 = |i: usize| if a[i] > a[i + 1] { i } else { i + 1 };
    let zaxis = if a[0] > a[2] { maxdim2(0) } else { maxdim2(1) };
    let (xaxis, yaxis) = if normal[zaxis] < 0.0 { ((zaxis + 2) % 3, (zaxis + 1) % 3) } else { ((zaxis + 1) % 3, (zaxis + 2) % 3) };
    let mut count = 0;
    let n = verts.len();
    for i in 0..n {
        let v = &verts[i];
        let w = &verts[(i + 1) % n];
        let xdirection = seg_contains_point(v[xaxis], w[xaxis], point[xaxis]);
        if xdirection != 0 {
            if seg_contains_point(v[yaxis], w[yaxis], point[yaxis]) != 0 {
                let xd = xdirection as f32;
                if xd * (point[xaxis] - v[xaxis]) * (w[yaxis] - v[yaxis]) <= xd * (point[yaxis] - v[yaxis]) * (w[xaxis] - v[xaxis]) {
                    count += xdirection;
                }
            } else if v[yaxis] <= point[yaxis] {
                count += xdirection;
            }
        }
    }
    count
}

fn polygon_intersects_cube(verts: &[P], normal: &P) -> i32 {
    let n = verts.len();
    for i in 0..n {
        if segment_intersects_cube(&verts[i], &verts[(i + 1) % n]) {
            return 1;
        }
    }
    if normal[0] == 0.0 && normal[1] == 0.0 && normal[2] == 0.0 {
        return 0;
    }
    let d = [sign_nonzero(normal[0]), sign_nonzero(normal[1]), sign_nonzero(normal[2])];
    let dot = |u: &P, v: &P| u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    let t = dot(normal, &verts[0]) / dot(normal, &d);
    // IN_CLOSED_INTERVAL(-.5, t, .5): (t + .5)(t - .5) <= 0, evaluated in double (the bounds
    // are double literals)
    let td = t as f64;
    if (td - -0.5) * (td - 0.5) > 0.0 {
        return 0;
    }
    let p = [t * d[0], t * d[1], t * d[2]];
    polygon_contains_point_3d(verts, normal, &p)
}

/// Sum of the fan-triangle normals of a polygon (`get_polygon_normal`).
pub fn polygon_normal(verts: &[P]) -> P {
    let mut normal = [0.0f32; 3];
    let sub = |a: &P, b: &P| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let mut toprev = sub(&verts[1], &verts[0]);
    for v in &verts[2..] {
        let tothis = sub(v, &verts[0]);
        // VXV3 through _DET2: a[i0]*b[i1] + a[i1]*-b[i0]
        let cross = [
            toprev[1] * tothis[2] + toprev[2] * -tothis[1],
            -(toprev[0] * tothis[2] + toprev[2] * -tothis[0]),
            toprev[0] * tothis[1] + toprev[1] * -tothis[0],
        ];
        normal = [normal[0] + cross[0], normal[1] + cross[1], normal[2] + cross[2]];
        toprev = tothis;
    }
    normal
}

/// `fast_polygon_intersects_cube(n, verts, normal, 0, 0) != 0`.
pub fn polygon_intersects_unit_cube(verts: &[P], normal: &P) -> bool {
    match trivial_vertex_tests(verts) {
        -1 => polygon_intersects_cube(verts, normal) != 0,
        r => r != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(t: [P; 3]) -> bool {
        polygon_intersects_unit_cube(&t, &polygon_normal(&t))
    }

    #[test]
    fn triangles_against_the_unit_cube() {
        // a vertex inside
        assert!(hits([[0.1, 0.1, 0.1], [3.0, 0.0, 0.0], [0.0, 3.0, 0.0]]));
        // all beyond x = 0.5
        assert!(!hits([[0.6, 0.0, 0.0], [2.0, 1.0, 0.0], [2.0, 0.0, 1.0]]));
        // a big triangle through the cube, no vertex inside: the interior test decides
        assert!(hits([[-5.0, -5.0, 0.0], [5.0, -5.0, 0.0], [0.0, 5.0, 0.0]]));
        // an edge crossing the cube
        assert!(hits([[-2.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 5.0, 5.0]]));
        // close to a corner but outside the corner plane
        assert!(!hits([[0.9, 0.9, 0.0], [0.0, 0.9, 0.9], [0.9, 0.0, 0.9]]));
        // the same triangle scaled towards the cube touches it
        assert!(hits([[0.6, 0.6, 0.0], [0.0, 0.6, 0.6], [0.6, 0.0, 0.6]]));
    }
}
