//! `SphereLoader`: sphere lists (`.sph`), read as SOFA's `SphereLoader` does.
//!
//! The first line (`sph 1.0`) is skipped; then keywords: `nums n` (a size hint), `sphe i x y z r`
//! (appended in file order, `i` ignored), tokens starting with `#` comment out the rest of the
//! line, unknown keywords are skipped with a warning. When `scale`, `rotation` or `translation`
//! differ from their defaults, the centres become `T·R·S·c` (the radii are not scaled).

use std::path::Path;

use settee_core::role::Loader;
use settee_core::{component, Component, InitCtx, SimResult};

use crate::mesh::FileData;
use crate::text::{read_text, Cursor};
use crate::transform;

/// The spheres of a file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spheres {
    pub centers: Vec<[f64; 3]>,
    pub radii: Vec<f64>,
    pub warnings: Vec<String>,
}

pub fn parse(path: &Path, text: &str) -> Result<Spheres, String> {
    let mut s = Spheres::default();
    let mut c = Cursor::new(path, text);
    if c.getline().is_none() {
        return Err(c.err(1, "empty file: expected a header line `sph 1.0`"));
    }
    while let Some((tok, line)) = c.token() {
        match tok {
            "nums" => {
                c.int("the number of spheres after `nums`")?;
            }
            "sphe" => {
                c.int("the sphere index after `sphe`")?;
                let x = c.real("the centre's x")?;
                let y = c.real("the centre's y")?;
                let z = c.real("the centre's z")?;
                let r = c.real("the radius")?;
                s.centers.push([x, y, z]);
                s.radii.push(r);
            }
            t if t.starts_with('#') => {
                c.getline();
            }
            t => {
                s.warnings.push(c.err(line, format!("unknown sphere keyword '{t}' skipped")));
                c.getline();
            }
        }
    }
    Ok(s)
}

/// Loader of sphere lists (.sph files): centres and radii.
///
/// The SphereLoader component.
#[component(
    module = "Sofa.Component.IO.Mesh",
    markers = [Loader],
    inherit = [FileData, Self],
    data = {
        /// sphere centres
        #[alias("sphere_centers")]
        position: RealTuples(3),
        /// radius of each sphere
        listRadius: Reals,
        /// scale applied to the sphere centres
        #[alias("scale3d")]
        scale: Fixed(3) = "1 1 1",
        /// rotation of the centres, Euler angles in degrees
        rotation: Fixed(3) = "0 0 0",
        /// translation applied to the centres
        translation: Fixed(3) = "0 0 0",
    },
)]
#[derive(Clone, Default)]
pub struct SphereLoader {
    saved: Option<Vec<[f64; 3]>>,
}

impl SphereLoader {
    fn apply_transform(&self, cx: &mut InitCtx) {
        let Some(saved) = &self.saved else { return };
        let d = cx.data();
        let (s, r, t) = (d.get(Self::SCALE), d.get(Self::ROTATION), d.get(Self::TRANSLATION));
        let moved = transform::vec_differs(s, [1.0; 3]) || transform::vec_differs(r, [0.0; 3]) || transform::vec_differs(t, [0.0; 3]);
        let centers: Vec<[f64; 3]> = if moved {
            let m = transform::trs(t, r, s);
            saved.iter().map(|p| transform::apply(&m, *p)).collect()
        } else {
            saved.clone()
        };
        cx.data_mut().put(Self::POSITION, centers.iter().flatten().copied().collect());
    }
}

impl Component for SphereLoader {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        let name = cx.data().get(FileData::FILENAME).trim().to_string();
        if name.is_empty() {
            cx.warn("no file to load (Data 'filename' is not set)");
            self.saved = Some(crate::mesh::tuples_f(cx.data().get(Self::POSITION)));
        } else {
            let path = cx.resolve_file(&name)?;
            let spheres = read_text(&path).and_then(|t| parse(&path, &t));
            match spheres {
                Ok(sp) => {
                    for w in &sp.warnings {
                        cx.warn(w.clone());
                    }
                    cx.data_mut().put(Self::LIST_RADIUS, sp.radii);
                    self.saved = Some(sp.centers);
                }
                Err(e) => {
                    cx.data_mut().put(Self::POSITION, vec![]);
                    cx.data_mut().put(Self::LIST_RADIUS, vec![]);
                    return Err(cx.error(e).hint("the file is malformed or truncated; fix it or load another file"));
                }
            }
        }
        self.apply_transform(cx);
        Ok(())
    }

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.apply_transform(cx);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_spheres_and_comments() {
        let p = Path::new("t.sph");
        let s = parse(p, "sph 1.0\n#nums 27\nnums 2\n#sphe 1 9 9 9 9\nsphe 1 -4 1.25 0 0.85\nsphe 7 1 2 3 4\nfoo bar\n").unwrap();
        assert_eq!(s.centers, vec![[-4.0, 1.25, 0.0], [1.0, 2.0, 3.0]]);
        assert_eq!(s.radii, vec![0.85, 4.0]);
        assert_eq!(s.warnings.len(), 1);
        let e = parse(p, "sph 1.0\nsphe 1 2 3\n").unwrap_err();
        assert!(e.contains("t.sph:2: unexpected end of file: expected the centre's z"), "{e}");
        let e = parse(p, "sph 1.0\nsphe 1 2 3 x 5\n").unwrap_err();
        assert!(e.contains("t.sph:2: expected the centre's z (a number), found 'x'"), "{e}");
        assert!(parse(p, "").unwrap_err().contains("empty file"));
        let full = "sph 1.0\nnums 2\nsphe 1 -4 1.25 0 0.85\nsphe 7 1 2 3 4\n";
        for cut in 0..full.len() {
            let _ = parse(p, &full[..cut]);
        }
    }
}
