//! `Vertex2Frame`: one Rigid3 frame per vertex (SOFA's Engine/Transform).
//!
//! With `useNormals` (the default) the frame's z axis is the vertex normal (negated with
//! `invertNormals`), its x axis `y₀ × z` normalised with `y₀ = (0, 1, 0)` — or `(0, 0, 1)` when
//! the normal is within machine epsilon of ±y — and its y axis `z × x`. Without normals the x
//! axis points to the next vertex, with the z₀ = (1, 0, 0) (or (0, 0, 1)) helper, and the last
//! vertex copies the previous orientation. The orientation is SOFA's quaternion of the matrix
//! whose columns are the axes ([`quat_from_matrix`]), premultiplied by the turn of
//! `rotationAngle` degrees about the frame's axis number `rotation`.

use settee_core::role::Engine;
use settee_core::types::{quat_mul, Quat};
use settee_core::{component, Component, InitCtx, SimResult};

type V3 = [f64; 3];

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// SOFA's `Vec::normalize`: divided by the norm when it exceeds machine epsilon, else unchanged.
fn normalized(v: V3) -> V3 {
    let n = dot(v, v).sqrt();
    if n > f64::EPSILON {
        [v[0] / n, v[1] / n, v[2] / n]
    } else {
        v
    }
}

/// SOFA's `Quat::fromMatrix` (`m[row][col]`): from the trace when it is positive, else from the
/// largest diagonal term, with SOFA's tie rules.
pub fn quat_from_matrix(m: &[[f64; 3]; 3]) -> Quat {
    let mut q = [0.0; 4];
    let tr = m[0][0] + m[1][1] + m[2][2];
    if tr > 0.0 {
        let s = (tr + 1.0).sqrt();
        q[3] = s * 0.5;
        let s = 0.5 / s;
        q[0] = (m[2][1] - m[1][2]) * s;
        q[1] = (m[0][2] - m[2][0]) * s;
        q[2] = (m[1][0] - m[0][1]) * s;
    } else if m[1][1] > m[0][0] && m[2][2] <= m[1][1] {
        let mut s = ((m[1][1] - (m[2][2] + m[0][0])) + 1.0).sqrt();
        q[1] = s * 0.5;
        if s != 0.0 {
            s = 0.5 / s;
        }
        q[2] = (m[1][2] + m[2][1]) * s;
        q[0] = (m[0][1] + m[1][0]) * s;
        q[3] = (m[0][2] - m[2][0]) * s;
    } else if (m[1][1] <= m[0][0] && m[2][2] > m[0][0]) || m[2][2] > m[1][1] {
        let mut s = ((m[2][2] - (m[0][0] + m[1][1])) + 1.0).sqrt();
        q[2] = s * 0.5;
        if s != 0.0 {
            s = 0.5 / s;
        }
        q[0] = (m[2][0] + m[0][2]) * s;
        q[1] = (m[1][2] + m[2][1]) * s;
        q[3] = (m[1][0] - m[0][1]) * s;
    } else {
        let mut s = ((m[0][0] - (m[1][1] + m[2][2])) + 1.0).sqrt();
        q[0] = s * 0.5;
        if s != 0.0 {
            s = 0.5 / s;
        }
        q[1] = (m[0][1] + m[1][0]) * s;
        q[2] = (m[2][0] + m[0][2]) * s;
        q[3] = (m[2][1] - m[1][2]) * s;
    }
    q
}

/// SOFA's `axisToQuat`: the turn by `phi` about the normalised axis; a null axis gives the identity.
fn axis_to_quat(a: V3, phi: f64) -> Quat {
    let n = dot(a, a).sqrt();
    if n < f64::EPSILON {
        return [0.0, 0.0, 0.0, 1.0];
    }
    let a = [a[0] / n, a[1] / n, a[2] / n];
    let (sp, cp) = ((phi / 2.0).sin(), (phi / 2.0).cos());
    [a[0] * sp, a[1] * sp, a[2] * sp, cp]
}

/// The orientation of the frame of axes `x, y, z`, turned by `angle_deg` about axis `rotation`
/// (0, 1, 2; another value turns about nothing).
pub fn frame_orientation(x: V3, y: V3, z: V3, rotation: i64, angle_deg: f64) -> Quat {
    let axis = match rotation {
        0 => x,
        1 => y,
        2 => z,
        _ => [0.0; 3],
    };
    let turn = axis_to_quat(axis, angle_deg * std::f64::consts::PI / 180.0);
    let m = [[x[0], y[0], z[0]], [x[1], y[1], z[1]], [x[2], y[2], z[2]]];
    quat_mul(turn, quat_from_matrix(&m))
}

/// Return a rigid position from a vertex (and its normal).
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    templates = ["Rigid3d"],
    create = |_| Vertex2Frame,
    data = {
        /// Vertices of the mesh loaded
        position: RealTuples(3),
        /// TexCoords of the mesh loaded
        texCoords: RealTuples(2),
        /// Normals of the mesh loaded
        normals: RealTuples(3),
        /// Frames at output
        frames: Coords,
        /// Use normals to compute the orientations; if disabled the direction of the x axisof a vertice is the one from this vertice to the next one
        useNormals: Bool = "true",
        /// Swap normals
        invertNormals: Bool = "false",
        /// Apply a local rotation on the frames. If 0 a x-axis rotation is applied. If 1 a y-axis rotation is applied, If 2 a z-axis rotation is applied.
        rotation: Int = "0",
        /// Angle rotation
        rotationAngle: Real = "0",
    },
)]
#[derive(Clone)]
pub struct Vertex2Frame;

fn triples(v: &[f64]) -> Vec<V3> {
    v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

/// The frames of the vertices, or a message when they cannot be computed (SOFA then leaves its
/// output as it was).
pub fn frames(vertices: &[V3], normals: &[V3], use_normals: bool, invert: bool, rotation: i64, angle: f64) -> Result<Vec<f64>, &'static str> {
    let n = vertices.len();
    let mut out = Vec::with_capacity(n * 7);
    let push = |out: &mut Vec<f64>, c: V3, q: Quat| {
        out.extend_from_slice(&c);
        out.extend_from_slice(&q);
    };
    if use_normals {
        if normals.is_empty() {
            return Err("no normals found: the frames are not computed");
        }
        for (i, &v) in vertices.iter().enumerate() {
            let nrm = *normals.get(i).ok_or("fewer normals than vertices: the frames are not computed")?;
            let z = normalized(if invert { [-nrm[0], -nrm[1], -nrm[2]] } else { nrm });
            let mut y = [0.0, 1.0, 0.0];
            if 1.0 - dot(y, z).abs() <= f64::EPSILON {
                y = [0.0, 0.0, 1.0];
            }
            let x = normalized(cross(y, z));
            let y = normalized(cross(z, x));
            push(&mut out, v, frame_orientation(x, y, z, rotation, angle));
        }
    } else {
        if n <= 1 {
            return Err("not enough vertices to compute the orientations: the frames are not computed");
        }
        let mut last = [0.0, 0.0, 0.0, 1.0];
        for w in vertices.windows(2) {
            let x = normalized([w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]]);
            let mut z = [1.0, 0.0, 0.0];
            if 1.0 - dot(z, x).abs() <= f64::EPSILON {
                z = [0.0, 0.0, 1.0];
            }
            let y = normalized(cross(z, x));
            let z = normalized(cross(x, y));
            last = frame_orientation(x, y, z, rotation, angle);
            push(&mut out, w[0], last);
        }
        push(&mut out, vertices[n - 1], last);
    }
    Ok(out)
}

impl Vertex2Frame {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let vertices = triples(d.get(Self::POSITION));
        if vertices.is_empty() {
            return Ok(());
        }
        let normals = triples(d.get(Self::NORMALS));
        let (use_normals, invert) = (d.get(Self::USE_NORMALS), d.get(Self::INVERT_NORMALS));
        let (rotation, angle) = (d.get(Self::ROTATION), d.get(Self::ROTATION_ANGLE));
        match frames(&vertices, &normals, use_normals, invert, rotation, angle) {
            Ok(f) => cx.data_mut().put(Self::FRAMES, f),
            Err(why) => cx.warn(why),
        }
        Ok(())
    }
}

impl Component for Vertex2Frame {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::types::quat_rotate;
    use settee_core::Scene;

    fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < tol)
    }

    /// Each branch of `fromMatrix`: the quaternion rotates the basis vectors onto the matrix
    /// columns. Identity (trace branch); a half turn about y (y branch), about z (z branch),
    /// about x (x branch) give (0,1,0,0), (0,0,1,0), (1,0,0,0) exactly.
    #[test]
    fn quaternion_from_matrix_branches() {
        assert_eq!(quat_from_matrix(&[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(quat_from_matrix(&[[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]), [0.0, 1.0, 0.0, 0.0]);
        assert_eq!(quat_from_matrix(&[[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]]), [0.0, 0.0, 1.0, 0.0]);
        assert_eq!(quat_from_matrix(&[[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]]), [1.0, 0.0, 0.0, 0.0]);
        // A generic rotation (axes of a normal frame): the quaternion maps e_k to column k.
        let (x, y, z) = ([0.0, 0.8, -0.6], [0.0, 0.6, 0.8], [1.0, 0.0, 0.0]);
        let q = frame_orientation(x, y, z, 0, 0.0);
        assert!(close(&quat_rotate(q, [1.0, 0.0, 0.0]), &x, 1e-15));
        assert!(close(&quat_rotate(q, [0.0, 1.0, 0.0]), &y, 1e-15));
        assert!(close(&quat_rotate(q, [0.0, 0.0, 1.0]), &z, 1e-15));
    }

    /// Normal (0, 0, 2) at (1, 2, 3): z = (0, 0, 1), x = y₀ × z = (1, 0, 0), y = (0, 1, 0): the
    /// identity. Normal (0, 1, 0) (parallel to y₀): the helper is z₀, x = (0,0,1) × (0,1,0) =
    /// (−1, 0, 0), y = (0, 0, 1): the half-turn-like frame whose quaternion maps e_z to y.
    /// A 90° `rotationAngle` about x (rotation 0) turns the identity frame by a quarter turn.
    #[test]
    fn frames_from_normals() {
        let f = frames(&[[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], &[[0.0, 0.0, 2.0], [0.0, 1.0, 0.0]], true, false, 0, 0.0).unwrap();
        assert_eq!(f[..7], [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0]);
        let q = [f[10], f[11], f[12], f[13]];
        assert!(close(&quat_rotate(q, [0.0, 0.0, 1.0]), &[0.0, 1.0, 0.0], 1e-15));
        assert!(close(&quat_rotate(q, [1.0, 0.0, 0.0]), &[-1.0, 0.0, 0.0], 1e-15));
        let r = frames(&[[0.0; 3]], &[[0.0, 0.0, 1.0]], true, false, 0, 90.0).unwrap();
        let h = std::f64::consts::FRAC_PI_4;
        assert!(close(&r[3..], &[h.sin(), 0.0, 0.0, h.cos()], 1e-15), "{r:?}");
        // Inverted normal: z = −e_z, x = y₀ × z = (−1, 0, 0).
        let inv = frames(&[[0.0; 3]], &[[0.0, 0.0, 1.0]], true, true, 0, 0.0).unwrap();
        assert!(close(&quat_rotate([inv[3], inv[4], inv[5], inv[6]], [1.0, 0.0, 0.0]), &[-1.0, 0.0, 0.0], 1e-15));
        assert!(frames(&[[0.0; 3]], &[], true, false, 0, 0.0).is_err());
    }

    /// Without normals, along a line of vertices on y: x = (0, 1, 0), z₀ = (1, 0, 0),
    /// y = z₀ × x = (0, 0, 1), z = x × y = (1, 0, 0); the last vertex takes the previous
    /// orientation. Read in a scene from a grid's positions, as in ManyFrames.scn.
    #[test]
    fn frames_along_the_vertices() {
        let f = factory();
        let mut s = Scene::new("root");
        let e = add(&mut s, &f, Scene::ROOT, "Vertex2Frame", &[("template", "Rigid3"), ("position", "0 0 0  0 1 0  0 3 0"), ("useNormals", "false")]);
        init_scene(&mut s).unwrap();
        let out = s.entry(e).data.reals("frames").to_vec();
        assert_eq!(out.len(), 21);
        let q = [out[3], out[4], out[5], out[6]];
        assert!(close(&quat_rotate(q, [1.0, 0.0, 0.0]), &[0.0, 1.0, 0.0], 1e-15));
        assert!(close(&quat_rotate(q, [0.0, 1.0, 0.0]), &[0.0, 0.0, 1.0], 1e-15));
        assert_eq!(out[14..17], [0.0, 3.0, 0.0]);
        assert_eq!(out[17..21], out[10..14]);
        assert_eq!(out[10..14], out[3..7]);
    }
}
