//! `OglModel` and `VisualModelImpl`: a mesh for the viewer, read as SOFA's `VisualModelImpl::init`
//! reads it, and moved by the mappings that output into it in the visual update only
//! ([`settee_core::visual::update_visual_models`]).
//!
//! At init the vertices come from `filename` (a Wavefront `.obj`), else from the `position`,
//! `triangles` and `quads` Data (`src="@loader"` fills them), else from the node's topology.
//! Then, as SOFA does, `scale3d` (times the legacy `scale`), `rotation` (Euler angles in degrees)
//! and `translation` are applied in that order and reset; the result is the rest shape a
//! mapping locates in its input. The colour is `color` (a SOFA colour name, `r g b [a]` or
//! `#rrggbb[aa]`), else the diffuse colour of `material`, else SOFA's default material grey.
//! Textures, normals and shaders are rendering details Settee does not use.

use settee_core::role::{Visual, VisualModel};
use settee_core::visual::VisualGeometry;
use settee_core::{component, Component, InitCtx, MeshData, SimResult};

/// SOFA's default material diffuse colour.
pub const DEFAULT_COLOR: [f64; 4] = [0.75, 0.75, 0.75, 1.0];

/// The attributes of a visual model: the Data it declares are kept (SOFA's shorthands `scale`,
/// `dx dy dz`, `rx ry rz` and `sx sy sz` folded into `scale3d`, `translation` and `rotation`),
/// every other attribute (textures, shaders, normals, …) is accepted and dropped, since none
/// changes a simulated number.
fn visual_attributes(attrs: &mut Vec<(String, String)>) {
    let mut folded: [(&str, [Option<String>; 3]); 3] =
        [("translation", Default::default()), ("rotation", Default::default()), ("scale3d", Default::default())];
    for (n, v) in attrs.iter() {
        let slot = match n.as_str() {
            "dx" | "dy" | "dz" => Some((0, n.as_bytes()[1])),
            "rx" | "ry" | "rz" => Some((1, n.as_bytes()[1])),
            "sx" | "sy" | "sz" => Some((2, n.as_bytes()[1])),
            _ => None,
        };
        if let Some((k, axis)) = slot {
            folded[k].1[(axis - b'x') as usize] = Some(v.trim().to_string());
        }
    }
    for (k, (name, axes)) in folded.iter().enumerate() {
        if axes.iter().all(Option::is_none) || attrs.iter().any(|(n, _)| n == name) {
            continue;
        }
        let default = if k == 2 { "1" } else { "0" };
        let text = axes.iter().map(|a| a.clone().unwrap_or_else(|| default.to_string())).collect::<Vec<_>>().join(" ");
        attrs.push((name.to_string(), text));
    }
    if let Some(i) = attrs.iter().position(|(n, _)| n == "scale") {
        let (_, text) = attrs.remove(i);
        let s: f64 = text.trim().parse().unwrap_or(1.0);
        let base: Vec<f64> = match attrs.iter().position(|(n, _)| n == "scale3d") {
            Some(j) => attrs.remove(j).1.split_whitespace().map(|t| t.parse().unwrap_or(1.0)).collect(),
            None => vec![1.0; 3],
        };
        let text = (0..3).map(|a| format!("{:?}", base.get(a).copied().unwrap_or(1.0) * s)).collect::<Vec<_>>().join(" ");
        attrs.push(("scale3d".into(), text));
    }
    const KEPT: &[&str] = &[
        "name",
        "src",
        "filename",
        "fileMesh",
        "position",
        "vertices",
        "triangles",
        "quads",
        "translation",
        "rotation",
        "scale3d",
        "color",
        "material",
        "texturename",
    ];
    attrs.retain(|(n, _)| KEPT.contains(&n.as_str()));
}

/// A visual model: the mesh the viewer draws for a body.
#[component(
    markers = [Visual],
    roles = [settee_core::visual::VisualGeometry],
    preparse = visual_attributes,
    no_src_link = ["edges"],
    data = {
        /// mesh file (.obj) giving the vertices and faces (replaces position, triangles and quads)
        #[alias("fileMesh")]
        filename: Str,
        /// texture image (not used by Settee's viewer)
        texturename: Str,
        /// vertices of the model
        #[alias("vertices")]
        position: RealTuples(3),
        /// triangles of the model
        triangles: IndexTuples(3),
        /// quads of the model
        quads: IndexTuples(4),
        /// edges of the model (not linked by src, as in SOFA)
        edges: IndexTuples(2),
        /// initial translation, applied at init then reset
        translation: Fixed(3) = "0 0 0",
        /// initial rotation (Euler angles in degrees), applied at init then reset
        rotation: Fixed(3) = "0 0 0",
        /// initial scale along each axis (the attribute `scale` multiplies it), applied at init then reset
        scale3d: Fixed(3) = "1 1 1",
        /// colour: a SOFA colour name, "r g b [a]" or #rrggbb[aa] (default: the material's diffuse colour)
        color: Str,
        /// material, as SOFA writes it ("Default Diffuse 1 r g b a Ambient …"): its diffuse colour is used when color is not set
        material: Str,
    },
    class(name = "OglModel", module = "Sofa.GL.Component.Rendering3D", description = "OpenGL visual model: a mesh drawn by the viewer, moved by a mapping in the visual update (no effect on the simulation).", markers = [VisualModel]),
    class(name = "VisualModelImpl", module = "Sofa.Component.Visual", description = "Generic visual model: a mesh drawn by the viewer, moved by a mapping in the visual update (no effect on the simulation).", markers = [VisualModel]),
)]
#[derive(Clone, Default)]
pub struct OglModel {
    positions: Vec<f64>,
    rest: Vec<f64>,
    elements: MeshData,
    color: [f64; 4],
}

/// The diffuse colour of a SOFA material text (`… Diffuse 1 r g b a …`), when it is enabled.
pub fn material_diffuse(text: &str) -> Option<[f64; 4]> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let i = words.iter().position(|w| *w == "Diffuse")?;
    let v: Vec<f64> = words.get(i + 1..i + 6)?.iter().map(|w| w.parse().ok()).collect::<Option<_>>()?;
    (v[0] != 0.0).then_some([v[1], v[2], v[3], v[4]])
}

fn group<const K: usize>(v: &[usize]) -> Vec<[usize; K]> {
    v.chunks_exact(K).map(|c| c.try_into().expect("K indices")).collect()
}

impl OglModel {
    /// The vertices and faces of an `.obj` file, as SOFA's OBJ reader keeps them.
    fn read_file(cx: &mut InitCtx, file: &str) -> SimResult<(Vec<f64>, Vec<usize>, Vec<usize>)> {
        let path = cx.resolve_file(file)?;
        let name = path.to_string_lossy().to_lowercase();
        if !name.ends_with(".obj") {
            return Err(settee_core::SimError::unsupported(format!("{}: reading '{file}' is supported for .obj files only", cx.label()))
                .hint("load the mesh with a loader and write src=\"@loader\""));
        }
        let text = settee_loader::text::read_text(&path).map_err(|e| cx.error(e))?;
        let m = settee_loader::obj::parse(&path, &text, settee_loader::obj::ObjOptions::default()).map_err(|e| cx.error(e))?;
        let flat3 = |v: &[[usize; 3]]| v.iter().flatten().copied().collect::<Vec<_>>();
        let quads = m.quads.iter().flatten().copied().collect();
        Ok((m.positions.iter().flatten().copied().collect(), flat3(&m.triangles), quads))
    }
}

impl Component for OglModel {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let file = cx.data().get(Self::FILENAME).trim().to_string();
        if !file.is_empty() {
            // A file Settee cannot read leaves the model empty: it is not drawn, and the
            // simulation goes on (SOFA logs an error and goes on too).
            match Self::read_file(cx, &file) {
                Ok((x, tris, quads)) => {
                    let d = cx.data_mut();
                    d.put(Self::POSITION, x);
                    d.put(Self::TRIANGLES, tris);
                    d.put(Self::QUADS, quads);
                }
                Err(e) => cx.warn(format!("the visual model is not drawn: {}", e.0.message)),
            }
        }
        let d = cx.data();
        let mut x: Vec<f64> = d.get(Self::POSITION).to_vec();
        let mut elements = MeshData {
            triangles: group::<3>(d.get(Self::TRIANGLES)),
            quads: group::<4>(d.get(Self::QUADS)),
            edges: group::<2>(d.get(Self::EDGES)),
            ..Default::default()
        };
        if x.is_empty() {
            // No file and no vertices: the node's topology (SOFA's initFromTopology).
            let node = cx.node();
            if let Some(mesh) = cx.scene.context_topology(node).and_then(|t| cx.scene.mesh_of(t)) {
                x = mesh.points.iter().flatten().copied().collect();
                if elements.triangles.is_empty() && elements.quads.is_empty() {
                    elements.triangles = mesh.triangles.clone();
                    elements.quads = mesh.quads.clone();
                }
            }
        }
        let n = x.len() / 3;
        x.truncate(3 * n);
        // SOFA's order: scale, then rotation, then translation.
        let s: [f64; 3] = d.get(Self::SCALE3D);
        let r: [f64; 3] = d.get(Self::ROTATION);
        let t: [f64; 3] = d.get(Self::TRANSLATION);
        let color_text = d.get(Self::COLOR).trim().to_string();
        let material = d.get(Self::MATERIAL).to_string();
        if let Some(bad) = elements.triangles.iter().flatten().chain(elements.quads.iter().flatten()).find(|&&i| i >= n) {
            cx.warn(format!("a face refers to vertex {bad} but the model has {n} vertices: such faces are not drawn"));
        }
        let q = settee_loader::transform::euler_degrees_quat(r);
        let rotate = r != [0.0; 3];
        for p in x.chunks_exact_mut(3) {
            let mut v = [p[0] * s[0], p[1] * s[1], p[2] * s[2]];
            if rotate {
                v = settee_core::types::quat_rotate(q, v);
            }
            for a in 0..3 {
                p[a] = v[a] + t[a];
            }
        }
        self.color = if color_text.is_empty() {
            material_diffuse(&material).unwrap_or(DEFAULT_COLOR)
        } else {
            match settee_core::data::parse_color(&color_text) {
                Ok(c) => c,
                Err(e) => {
                    cx.warn(format!("color \"{color_text}\": {e}; the default colour is used"));
                    DEFAULT_COLOR
                }
            }
        };
        let d = cx.data_mut();
        d.put(Self::POSITION, x.clone());
        d.put(Self::TRANSLATION, [0.0; 3]);
        d.put(Self::ROTATION, [0.0; 3]);
        d.put(Self::SCALE3D, [1.0; 3]);
        self.rest = x.clone();
        self.positions = x;
        self.elements = elements;
        Ok(())
    }

    /// Nothing is kept from the topology (the model's faces are its own).
    fn topology_changed(
        &mut self,
        _cx: &mut InitCtx,
        _topology: settee_core::ComponentId,
        _changes: &[settee_core::topology_change::TopologyChange],
    ) -> SimResult<settee_core::topology_change::Follow> {
        Ok(settee_core::topology_change::Follow::NotConcerned)
    }
}

impl VisualGeometry for OglModel {
    fn positions(&self) -> &[f64] {
        &self.positions
    }
    fn set_positions(&mut self, x: &[f64]) {
        self.positions.clear();
        self.positions.extend_from_slice(x);
    }
    fn rest_positions(&self) -> &[f64] {
        &self.rest
    }
    fn elements(&self) -> &MeshData {
        &self.elements
    }
    fn color(&self) -> [f64; 4] {
        self.color
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use settee_core::simulation::init_root;
    use settee_core::testing::add;
    use settee_core::{Factory, Scene};

    fn factory() -> Factory {
        let mut f = Factory::new();
        crate::register(&mut f);
        f
    }

    fn geometry(s: &Scene, c: settee_core::ComponentId) -> &dyn VisualGeometry {
        s.role::<dyn VisualGeometry>(c).expect("a visual model")
    }

    /// A unit square read from an OBJ file, scaled by `scale3d` (2, 3, 1), rotated 90° about z,
    /// then translated: SOFA's order.
    #[test]
    fn obj_file_with_scale_rotation_and_translation() {
        let dir = std::env::temp_dir().join(format!("settee-oglmodel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let obj = dir.join("square.obj");
        std::fs::write(&obj, "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\nf 1 2 3\n").unwrap();
        let f = factory();
        let mut s = Scene::new("root");
        let file = obj.display().to_string();
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "OglModel",
            &[
                ("filename", &file),
                ("scale3d", "2 3 1"),
                ("rotation", "0 0 90"),
                ("translation", "10 0 0"),
                ("color", "red"),
                ("texturename", "t.png"),
            ],
        );
        init_root(&mut s, &f).unwrap();
        let g = geometry(&s, c);
        // (x, y) → scaled (2x, 3y) → rotated (−3y, 2x) → translated (10 − 3y, 2x).
        let want = [10.0, 0.0, 0.0, 10.0, 2.0, 0.0, 7.0, 2.0, 0.0, 7.0, 0.0, 0.0];
        assert_eq!(g.positions().len(), 12);
        for (a, b) in g.positions().iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{:?}", g.positions());
        }
        assert_eq!(g.rest_positions(), g.positions());
        assert_eq!(g.elements().quads, [[0, 1, 2, 3]]);
        assert_eq!(g.elements().triangles, [[0, 1, 2]]);
        assert_eq!(g.color(), [1.0, 0.0, 0.0, 1.0]);
        // The transformation was applied once and reset, as SOFA does.
        assert_eq!(s.entry(c).data.get(OglModel::TRANSLATION), [0.0; 3]);
        assert_eq!(s.entry(c).data.get(OglModel::SCALE3D), [1.0; 3]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Vertices given as Data, SOFA's `scale` and `dx` shorthands, the material's diffuse colour,
    /// and a translucent colour.
    #[test]
    fn data_vertices_shorthands_and_colours() {
        let f = factory();
        let mut s = Scene::new("root");
        let a = add(
            &mut s,
            &f,
            Scene::ROOT,
            "VisualModelImpl",
            &[
                ("position", "0 0 0  1 0 0  0 1 0"),
                ("triangles", "0 1 2"),
                ("scale", "2"),
                ("dx", "5"),
                ("material", "Default Diffuse 1 0.1 0.2 0.3 1 Ambient 1 0 0 0 1"),
            ],
        );
        let b = add(&mut s, &f, Scene::ROOT, "OglModel", &[("position", "0 0 0"), ("color", "0 0 1 0.5"), ("normals", "0")]);
        init_root(&mut s, &f).unwrap();
        assert_eq!(geometry(&s, a).positions(), [5.0, 0.0, 0.0, 7.0, 0.0, 0.0, 5.0, 2.0, 0.0]);
        assert_eq!(geometry(&s, a).color(), [0.1, 0.2, 0.3, 1.0]);
        assert_eq!(geometry(&s, b).color(), [0.0, 0.0, 1.0, 0.5]);
        assert_eq!(material_diffuse("Default Diffuse 0 1 1 1 1"), None, "a disabled diffuse colour is not used");
    }

    /// A file that cannot be read is a warning: the model is empty, the scene runs.
    #[test]
    fn unreadable_files_are_warnings() {
        let f = factory();
        let mut s = Scene::new("root");
        let a = add(&mut s, &f, Scene::ROOT, "OglModel", &[("filename", "/nonexistent/missing.obj")]);
        let b = add(&mut s, &f, Scene::ROOT, "OglModel", &[("filename", "/nonexistent/mesh.stl")]);
        init_root(&mut s, &f).unwrap();
        assert!(geometry(&s, a).positions().is_empty() && geometry(&s, b).positions().is_empty());
        let warned = |what: &str| s.messages.iter().any(|m| m.severity == settee_core::Severity::Warning && m.message.contains(what));
        assert!(warned("missing.obj") && warned("mesh.stl"), "{:?}", s.messages);
    }
}
