//! `TransformPosition`: transforms a list of 3D points (SOFA's Engine/Transform).
//!
//! Methods: `projectOnPlane` (the default, onto the plane through `origin` with `normal`),
//! `translation`, `rotation` (Euler angles in degrees, SOFA's ZYX quaternion), `scale` (about
//! `origin`), `scaleTranslation`, `scaleRotationTranslation`, `affine` (the 4×4 `matrix`, with
//! the homogeneous division; a point whose w is within 1e-10 of 0 keeps its previous output)
//! and `fromFile` (the affine matrix read from a `.tfm`, `.trm`, `.txt` or `.xfm` file, as SOFA
//! reads them — the `.tfm` translation is read from the end of the parameters backwards, as SOFA
//! does). `random` needs SOFA's random generator and is refused. The points of `fixedIndices`
//! are copied unchanged.

use std::path::Path;

use settee_core::role::Engine;
use settee_core::types::{quat_from_euler, quat_rotate};
use settee_core::{component, Component, InitCtx, SimResult};

const METHODS: &[&str] =
    &["projectOnPlane", "translation", "rotation", "random", "scale", "scaleTranslation", "scaleRotationTranslation", "affine", "fromFile"];

type V3 = [f64; 3];
type M4 = [[f64; 4]; 4];

const IDENTITY: M4 = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];

/// C's `atof` on a token: the longest numeric prefix, 0 when there is none.
fn atof(t: &str) -> f64 {
    (1..=t.len()).rev().filter(|&n| t.is_char_boundary(n)).find_map(|n| t[..n].parse::<f64>().ok()).unwrap_or(0.0)
}

/// The affine matrix of a `.tfm` file: the first line naming `Parameters`, its numeric tokens
/// (12 expected): the rotation row by row, then the translation read backwards from the end.
pub fn matrix_from_tfm(text: &str) -> Result<M4, String> {
    let line = text.lines().find(|l| l.contains("Parameters")).ok_or("no 'Parameters' line: transformation not found")?;
    let values: Vec<f64> = line.split(' ').filter(|t| !t.is_empty() && t.contains(|c: char| "1234567890.-".contains(c))).map(atof).collect();
    if values.len() != 12 {
        return Err(format!("{} parameters where 12 are expected", values.len()));
    }
    let mut m = IDENTITY;
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = values[i * 3 + j];
        }
        m[i][3] = values[values.len() - 1 - i];
    }
    Ok(m)
}

/// The affine matrix of a `.trm` file (first line: translation; then the rotation rows) or of a
/// `.txt`/`.xfm` file (4 rows of 4), blank lines skipped, short lines ignored.
fn matrix_from_rows(text: &str, trm: bool) -> Result<M4, String> {
    let mut m = IDENTITY;
    let width = if trm { 3 } else { 4 };
    let mut n = 0;
    for line in text.lines().filter(|l| !l.is_empty()) {
        n += 1;
        if n > 4 {
            return Err("more than 4 lines".into());
        }
        let tokens: Vec<&str> = line.split(' ').filter(|t| !t.is_empty()).collect();
        if tokens.len() < width {
            continue;
        }
        for (k, t) in tokens.iter().take(width).enumerate() {
            let v = atof(t);
            match (trm, n) {
                (true, 1) => m[k][3] = v,
                (true, _) => m[n - 2][k] = v,
                (false, _) => m[n - 1][k] = v,
            }
        }
    }
    Ok(m)
}

fn read_matrix_file(path: &Path) -> Result<M4, String> {
    let name = path.to_string_lossy();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    if name.ends_with(".tfm") {
        matrix_from_tfm(&text)
    } else if name.ends_with(".trm") {
        matrix_from_rows(&text, true)
    } else if name.ends_with(".txt") || name.ends_with(".xfm") {
        matrix_from_rows(&text, false)
    } else {
        Err(format!("unknown extension of {name}: supported are .trm, .tfm, .xfm and .txt"))
    }
}

/// The parameters of a transformation.
pub struct Params {
    pub origin: V3,
    pub normal: V3,
    pub translation: V3,
    pub rotation: V3,
    pub scale: V3,
    pub matrix: M4,
}

/// The transformed points (`previous` holds the outputs kept where an affine w vanishes).
pub fn transform(method: &str, p: &Params, input: &[f64], previous: &[f64]) -> Vec<f64> {
    let mut out = previous.to_vec();
    out.resize(input.len(), 0.0);
    let dot = |a: V3, b: V3| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let euler =
        [p.rotation[0] * std::f64::consts::PI / 180.0, p.rotation[1] * std::f64::consts::PI / 180.0, p.rotation[2] * std::f64::consts::PI / 180.0];
    let q = quat_from_euler(euler);
    for (o, x) in out.chunks_exact_mut(3).zip(input.chunks_exact(3)) {
        let x = [x[0], x[1], x[2]];
        let (s, t) = (p.scale, p.translation);
        let y: V3 = match method {
            "projectOnPlane" => {
                let d = dot([p.origin[0] - x[0], p.origin[1] - x[1], p.origin[2] - x[2]], p.normal);
                std::array::from_fn(|k| x[k] + p.normal[k] * d)
            }
            "translation" => std::array::from_fn(|k| x[k] + t[k]),
            "scale" => std::array::from_fn(|k| p.origin[k] + (x[k] - p.origin[k]) * s[k]),
            "scaleTranslation" => std::array::from_fn(|k| x[k] * s[k] + t[k]),
            "rotation" => quat_rotate(q, x),
            "scaleRotationTranslation" => {
                let r = quat_rotate(q, [x[0] * s[0], x[1] * s[1], x[2] * s[2]]);
                std::array::from_fn(|k| r[k] + t[k])
            }
            _ => {
                let h = [x[0], x[1], x[2], 1.0];
                let c: [f64; 4] =
                    std::array::from_fn(|r| p.matrix[r][0] * h[0] + p.matrix[r][1] * h[1] + p.matrix[r][2] * h[2] + p.matrix[r][3] * h[3]);
                if c[3].abs() > 1e-10 {
                    [c[0] / c[3], c[1] / c[3], c[2] / c[3]]
                } else {
                    [o[0], o[1], o[2]]
                }
            }
        };
        o.copy_from_slice(&y);
    }
    out
}

/// Transform the positions of a set of points.
#[component(
    module = "Sofa.Component.Engine.Transform",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| TransformPosition,
    data = {
        /// A 3d point on the plane/Center of the scale
        origin: Fixed(3) as Vec3 = "0 0 0",
        /// input array of 3d points
        #[alias("inputPosition")]
        input_position: Coords,
        /// output array of 3d points projected on a plane
        #[alias("outputPosition")]
        output_position: Coords,
        /// plane normal
        normal: Fixed(3) as Vec3 = "0 0 0",
        /// translation vector
        translation: Fixed(3) as Vec3 = "0 0 0",
        /// rotation vector
        rotation: Fixed(3) as Vec3 = "0 0 0",
        /// scale factor
        scale: Fixed(3) as Vec3 = "1 1 1",
        /// 4x4 affine matrix
        matrix: Fixed(16) = "1 0 0 0  0 1 0 0  0 0 1 0  0 0 0 1",
        /// transformation method either translation or scale or rotation or random or projectOnPlane
        method: Options(METHODS) = "projectOnPlane",
        /// the seed value for the random generator
        seedValue: Int = "0",
        /// the maximum displacement around initial position for the random transformation
        maxRandomDisplacement: Real = "1",
        /// Indices of the entries that are not transformed
        fixedIndices: Indices,
        /// filename of an affine matrix. Supported extensions are: .trm, .tfm, .xfm and .txt(read as .xfm)
        filename: FileName,
        /// Draw input points (rendering only)
        drawInput: Bool = "false",
        /// Draw output points (rendering only)
        drawOutput: Bool = "false",
        /// Point size (rendering only)
        pointSize: Real = "1",
    },
)]
#[derive(Clone)]
pub struct TransformPosition;

impl TransformPosition {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let method = d.get(Self::METHOD).to_string();
        let mut matrix = IDENTITY;
        let m = d.get(Self::MATRIX);
        for (r, row) in matrix.iter_mut().enumerate() {
            row.copy_from_slice(&m[r * 4..r * 4 + 4]);
        }
        if method == "random" {
            return Err(cx.error("method 'random' is not supported (it needs SOFA's random generator)").hint("use another method"));
        }
        if method == "fromFile" {
            let name = d.get(Self::FILENAME).trim().to_string();
            if name.is_empty() {
                cx.warn("method 'fromFile' without a filename: the affine matrix is used");
            } else {
                let path = cx.resolve_file(&name)?;
                matrix = read_matrix_file(&path).map_err(|e| cx.error(e))?;
                let flat: Vec<f64> = matrix.iter().flatten().copied().collect();
                cx.data_mut().put(Self::MATRIX, flat);
            }
        }
        let d = cx.data();
        // SOFA normalises the normal unless it is within 1e-10 of unit length; a zero normal
        // stays zero here (SOFA divides by zero).
        let mut normal = d.get(Self::NORMAL);
        let n2 = normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2];
        if (n2 - 1.0).abs() > 1e-10 && n2 > 0.0 {
            let n = n2.sqrt();
            normal = [normal[0] / n, normal[1] / n, normal[2] / n];
        }
        let p = Params {
            origin: d.get(Self::ORIGIN),
            normal,
            translation: d.get(Self::TRANSLATION),
            rotation: d.get(Self::ROTATION),
            scale: d.get(Self::SCALE),
            matrix,
        };
        let input = d.get(Self::INPUT_POSITION);
        let mut out = transform(&method, &p, input, d.get(Self::OUTPUT_POSITION));
        let n = input.len() / 3;
        for &i in d.get(Self::FIXED_INDICES) {
            if i >= n {
                return Err(cx.error(format!("fixed index {i} is beyond the {n} input points")));
            }
            out[i * 3..i * 3 + 3].copy_from_slice(&input[i * 3..i * 3 + 3]);
        }
        cx.data_mut().put(Self::OUTPUT_POSITION, out);
        Ok(())
    }
}

impl Component for TransformPosition {
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
    use settee_core::Scene;

    fn params() -> Params {
        Params {
            origin: [0.0, 0.0, 1.0],
            normal: [0.0, 0.0, 1.0],
            translation: [1.0, 2.0, 3.0],
            rotation: [0.0, 0.0, 90.0],
            scale: [2.0, 3.0, 4.0],
            matrix: IDENTITY,
        }
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-15)
    }

    /// The point (1, 1, 1) under every method with analytic answers.
    #[test]
    fn methods_on_one_point() {
        let p = params();
        let x = [1.0, 1.0, 3.0];
        assert_eq!(transform("projectOnPlane", &p, &x, &[]), [1.0, 1.0, 1.0]);
        assert_eq!(transform("translation", &p, &x, &[]), [2.0, 3.0, 6.0]);
        assert_eq!(transform("scale", &p, &x, &[]), [2.0, 3.0, 9.0]);
        assert_eq!(transform("scaleTranslation", &p, &x, &[]), [3.0, 5.0, 15.0]);
        // A quarter turn about z: (x, y) → (−y, x).
        assert!(close(&transform("rotation", &p, &x, &[]), &[-1.0, 1.0, 3.0]));
        assert!(close(&transform("scaleRotationTranslation", &p, &x, &[]), &[-3.0 + 1.0, 2.0 + 2.0, 12.0 + 3.0]));
        let mut q = params();
        q.matrix[0][3] = 5.0;
        q.matrix[3][3] = 2.0;
        assert_eq!(transform("affine", &q, &x, &[]), [3.0, 0.5, 1.5]);
        q.matrix[3][3] = 0.0;
        assert_eq!(transform("affine", &q, &x, &[7.0, 8.0, 9.0]), [7.0, 8.0, 9.0]);
    }

    /// The scene's transfo.tfm: rotation rows (1 0 0), (0 0 −1), (0 1 0) and translation read
    /// backwards from the 12 parameters, (0, 2, 0); the point (1, 2, 3) goes to (1, −1, 2).
    /// Fixed indices keep their input.
    #[test]
    fn tfm_file_and_fixed_indices() {
        let text = "#Insight Transform File V1.0\n#Transform 0\nTransform: AffineTransform_double_3_3\nParameters: 1 0 0 0 0 -1 0 1 0 0 2 0\nFixedParameters: 0 0 0\n";
        let m = matrix_from_tfm(text).unwrap();
        assert_eq!(m, [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 2.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]);
        let dir = std::env::temp_dir().join(format!("settee-tp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.tfm");
        std::fs::write(&file, text).unwrap();
        let f = factory();
        let mut s = Scene::new("root");
        let e = add(
            &mut s,
            &f,
            Scene::ROOT,
            "TransformPosition",
            &[("method", "fromFile"), ("filename", file.to_str().unwrap()), ("input_position", "1 2 3  4 5 6"), ("fixedIndices", "1")],
        );
        init_scene(&mut s).unwrap();
        assert_eq!(s.entry(e).data.reals("output_position"), [1.0, -1.0, 2.0, 4.0, 5.0, 6.0]);
        let trm = matrix_from_rows("1 2 3\n1 0 0\n\n0 1 0\n0 0 1\n", true).unwrap();
        assert_eq!(trm[0][3], 1.0);
        assert_eq!(trm[2][3], 3.0);
        assert_eq!(trm[2][2], 1.0);
        std::fs::remove_dir_all(&dir).ok();
    }
}
