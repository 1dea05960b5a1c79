//! `GridTopology` and `RegularGridTopology`: structured hexahedral grids with SOFA's numbering
//! (geometry and orderings in [`crate::grid`]).
//!
//! The mesh is computed when the scene is parsed (a `MechanicalObject` declared before the grid
//! in the same node reads the grid's points at its own init, which comes first), and again at the
//! grid's init, where `cellWidth` and the resolution check apply.

use settee_core::role::Topology;
use settee_core::topology::points_from_flat;
use settee_core::{component, Component, InitCtx, MeshData, SimResult};

use crate::grid::{float_attribute_bounds, grid_lists, point_count, sanitize_resolution, GridListFlags, RegularGridGeometry, RegularGridParams};
use crate::mesh_topology::MeshTopologyData;

/// Largest number of grid points accepted (a typo in `n` or `cellWidth` must not exhaust memory).
const MAX_POINTS: usize = 50_000_000;

fn take_attr(attrs: &mut Vec<(String, String)>, name: &str) -> Option<String> {
    let i = attrs.iter().position(|(n, _)| n == name)?;
    Some(attrs.remove(i).1)
}

/// `strtol` on the whole attribute (leading blanks allowed, nothing after the number).
fn attr_int(text: &str) -> Option<i32> {
    let v: i64 = text.trim_start().parse().ok()?;
    Some(v.clamp(i32::MIN as i64, i32::MAX as i64) as i32)
}

/// `strtof` on the whole attribute (SOFA's `getAttributeAsFloat`).
fn attr_float(text: &str) -> Option<f32> {
    text.trim_start().parse::<f32>().ok()
}

/// `nx ny nz` → `n` when all three are given (SOFA's `GridTopology::parse`); an unreadable one
/// keeps the current component.
fn fold_resolution(attrs: &mut Vec<(String, String)>) {
    if !["nx", "ny", "nz"].iter().all(|k| attrs.iter().any(|(n, _)| n == k)) {
        return;
    }
    let current: Vec<f64> =
        attrs.iter().find(|(n, _)| n == "n").map(|(_, v)| v.split_whitespace().filter_map(|t| t.parse::<f64>().ok()).collect()).unwrap_or_default();
    let mut n = [0i64; 3];
    for (a, key) in ["nx", "ny", "nz"].into_iter().enumerate() {
        let text = take_attr(attrs, key).unwrap_or_default();
        n[a] = match attr_int(&text) {
            Some(v) => v as i64,
            None => current.get(a).map(|&c| c as i64).unwrap_or(2),
        };
    }
    attrs.retain(|(k, _)| k != "n");
    attrs.push(("n".into(), format!("{} {} {}", n[0], n[1], n[2])));
}

fn preparse_grid(attrs: &mut Vec<(String, String)>) {
    fold_resolution(attrs);
}

/// `xmin … zmax` (and `scale`) → `min`/`max` when all six are given, read as 32-bit floats
/// (SOFA's `RegularGridTopology::parse`, see [`float_attribute_bounds`]).
fn preparse_regular(attrs: &mut Vec<(String, String)>) {
    fold_resolution(attrs);
    let scale = take_attr(attrs, "scale").and_then(|s| attr_float(&s)).unwrap_or(1.0);
    const KEYS: [(&str, f32); 6] = [("xmin", 0.0), ("ymin", 0.0), ("zmin", 0.0), ("xmax", 1.0), ("ymax", 1.0), ("zmax", 1.0)];
    if !KEYS.iter().all(|(k, _)| attrs.iter().any(|(n, _)| n == k)) {
        return;
    }
    let mut v = [0f32; 6];
    for (i, (key, default)) in KEYS.into_iter().enumerate() {
        v[i] = take_attr(attrs, key).and_then(|t| attr_float(&t)).unwrap_or(default);
    }
    let (min, max) = float_attribute_bounds([v[0], v[1], v[2]], [v[3], v[4], v[5]], scale);
    attrs.retain(|(k, _)| k != "min" && k != "max");
    // `{:?}` prints the shortest text that reads back to the same f64.
    attrs.push(("min".into(), format!("{:?} {:?} {:?}", min[0], min[1], min[2])));
    attrs.push(("max".into(), format!("{:?} {:?} {:?}", max[0], max[1], max[2])));
}

/// A grid topology (plain or regular). Its `n` is also read from a grid by the force fields and
/// mappings that use its cells (`GridTopology::N`), and a regular grid's `min`, `max`, `p0` and
/// `cellWidth` by the components that use its geometry.
#[component(
    roles = [Topology],
    inherit = [MeshTopologyData, Self],
    data = {
        /// grid resolution: number of points per axis (attributes nx ny nz set it when all three are given)
        n: Fixed(3) as Reals = "2 2 2",
        /// build the list of hexahedra
        computeHexaList: Bool = "true",
        /// build the list of quads
        computeQuadList: Bool = "true",
        /// build the list of triangles (two per quad; edges then come from them)
        computeTriangleList: Bool = "true",
        /// build the list of edges
        computeEdgeList: Bool = "true",
        /// build the list of points
        computePointList: Bool = "true",
        /// generate texture coordinates (rendering only)
        createTexCoords: Bool = "false",
    },
    class(
        name = "GridTopology", module = "Sofa.Component.Topology.Container.Grid",
        description = "Structured grid of hexahedra whose point positions are given (`position`) or zero.",
        create = |_| GridTopology { regular: false, mesh: MeshData::default(), geometry: None },
        preparse = preparse_grid,
    ),
    class(
        name = "RegularGridTopology", module = "Sofa.Component.Topology.Container.Grid",
        description = "Regular grid of hexahedra between `min` and `max` with `n` points per axis.",
        create = |_| GridTopology { regular: true, mesh: MeshData::default(), geometry: None },
        preparse = preparse_regular,
        data = {
            /// min end of the diagonal (attributes xmin ymin zmin xmax ymax zmax set min and max when all six are given)
            min: Fixed(3) = "0 0 0",
            /// max end of the diagonal
            max: Fixed(3) = "1 1 1",
            /// position of grid point (0,0,0); computed from min/max unless set
            p0: Fixed(3) = "0 0 0",
            /// if non-zero: size of the cells; the resolution becomes ceil((max-min)/cellWidth)+1 at init
            cellWidth: Real = "0",
        },
    ),
)]
#[derive(Clone)]
pub struct GridTopology {
    regular: bool,
    mesh: MeshData,
    geometry: Option<RegularGridGeometry>,
}

impl GridTopology {
    /// The geometry of a regular grid (spacing and origin), once computed.
    pub fn geometry(&self) -> Option<&RegularGridGeometry> {
        self.geometry.as_ref()
    }

    fn build(&mut self, cx: &mut InitCtx, at_init: bool) -> SimResult {
        let d = cx.data();
        let nr = d.get(Self::N);
        // `as` saturates, like reading an out-of-range integer fails in SOFA.
        let n_raw = [0, 1, 2].map(|a| nr.get(a).copied().unwrap_or(2.0) as i32);
        let flags = GridListFlags {
            hexahedra: d.get(Self::COMPUTE_HEXA_LIST),
            quads: d.get(Self::COMPUTE_QUAD_LIST),
            triangles: d.get(Self::COMPUTE_TRIANGLE_LIST),
            edges: d.get(Self::COMPUTE_EDGE_LIST),
        };
        let (n, points, reset) = if self.regular {
            let params = RegularGridParams {
                n: n_raw,
                min: d.get(Self::MIN),
                max: d.get(Self::MAX),
                p0: d.is_given(Self::P0).then(|| d.get(Self::P0)),
                cell_width: if at_init { d.get(Self::CELL_WIDTH) } else { 0.0 },
            };
            let mut n = params.n;
            if params.cell_width != 0.0 {
                n = crate::grid::cell_width_resolution(params.min, params.max, params.cell_width);
            }
            let reset = sanitize_resolution(n).1;
            let g = RegularGridGeometry::from_params(&params);
            too_large(cx, g.n)?;
            self.geometry = Some(g);
            (g.n, g.points(), reset)
        } else {
            let (n, reset) = sanitize_resolution(n_raw);
            too_large(cx, n)?;
            let mut points = points_from_flat(d.get(MeshTopologyData::POSITION), 3);
            points.resize(point_count(n), [0.0; 3]);
            (n, points, reset)
        };
        if reset && at_init {
            cx.warn(format!(
                "the grid resolution [{} ; {} ; {}] is outside the validity range (at least 1 point per axis); continuing with [2 ; 2 ; 2]",
                n_raw[0], n_raw[1], n_raw[2]
            ));
        }
        let lists = grid_lists(n, flags);
        let mesh = MeshData {
            points,
            edges: lists.edges,
            triangles: lists.triangles,
            quads: lists.quads,
            tetrahedra: Vec::new(),
            hexahedra: lists.hexahedra,
        };

        let d = cx.data_mut();
        if at_init {
            d.put(Self::N, n.iter().map(|&a| a as f64).collect());
        }
        if let Some(g) = &self.geometry {
            d.put(Self::P0, g.p0);
        }
        type M = MeshTopologyData;
        d.put(M::POSITION, mesh.points.iter().flatten().copied().collect());
        d.put(M::EDGES, mesh.edges.iter().flatten().copied().collect());
        d.put(M::TRIANGLES, mesh.triangles.iter().flatten().copied().collect());
        d.put(M::QUADS, mesh.quads.iter().flatten().copied().collect());
        d.put(M::HEXAHEDRA, mesh.hexahedra.iter().flatten().copied().collect());
        self.mesh = mesh;
        Ok(())
    }
}

fn too_large(cx: &InitCtx, n: [usize; 3]) -> SimResult {
    let count = n[0].checked_mul(n[1]).and_then(|p| p.checked_mul(n[2]));
    match count {
        Some(c) if c <= MAX_POINTS => Ok(()),
        _ => Err(cx
            .error(format!("grid resolution {} × {} × {} is too large", n[0], n[1], n[2]))
            .hint(format!("at most {MAX_POINTS} points are accepted; check `n` (or nx ny nz) and `cellWidth`"))),
    }
}

impl Component for GridTopology {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.build(cx, false)
    }

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.build(cx, true)
    }
}

mesh_field_topology!(GridTopology);

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_util::{attrs, create, factory, factory_and_scene, init_scene, owned_attrs, FEMBAR_GRID, FLOAT_BOUNDS};
    use settee_core::{Scene, VecId};

    #[test]
    fn fembar_grid_feeds_a_mechanical_object_declared_before_it() {
        let (f, mut scene) = factory_and_scene();
        let mo = create(&f, &mut scene, "MechanicalObject", &[("name", "DoFs")]);
        let grid = create(&f, &mut scene, "RegularGridTopology", FEMBAR_GRID);
        assert!(!scene.has_errors() && scene.messages.is_empty(), "{:?}", scene.messages);
        init_scene(&mut scene).unwrap();

        let m = scene.mesh_of(grid).unwrap();
        assert_eq!(m.points.len(), 320);
        assert_eq!(m.hexahedra.len(), 171);
        assert_eq!(m.hexahedra[0], [0, 1, 5, 4, 16, 17, 21, 20]);
        assert_eq!(m.hexahedra[170], [298, 299, 303, 302, 314, 315, 319, 318]);
        assert_eq!(m.quads.len(), 636);
        assert_eq!(m.triangles.len(), 1272);
        assert_eq!(m.edges.len(), 784 + 636);

        let s = scene.state_of(mo).unwrap();
        let st = scene.store.get(s);
        assert_eq!(st.size, 320);
        let x = st.read(VecId::POSITION);
        assert_eq!(&x[..3], &[-9.0, 0.0, 0.0]);
        assert_eq!(&x[3 * 21..3 * 22], &[-8.0, 1.0, 1.0]);
        assert_eq!(&x[3 * 319..], &[-6.0, 3.0, 19.0]);
        assert_eq!(st.read(VecId::REST_POSITION), x);

        let d = &scene.entry(grid).data;
        assert_eq!(d.reals("min"), &[-9.0, 0.0, 0.0]);
        assert_eq!(d.reals("max"), &[-6.0, 3.0, 19.0]);
        assert_eq!(d.reals("n"), &[4.0, 4.0, 20.0]);
        assert_eq!(d.indices("hexahedra").len(), 171 * 8);
    }

    #[test]
    fn resolution_linked_from_a_parent_grid() {
        let (f, mut scene) = factory_and_scene();
        let dir = std::path::Path::new(".");
        create(&f, &mut scene, "RegularGridTopology", FEMBAR_GRID);
        let child = scene.add_node(Scene::ROOT, "child");
        let g = f
            .create(
                &mut scene,
                child,
                "RegularGridTopology",
                None,
                attrs(&[
                    ("n", "@../grid.n"),
                    ("xmin", "-1.5"),
                    ("xmax", "1.5"),
                    ("ymin", "-9"),
                    ("ymax", "-6"),
                    ("zmin", "0"),
                    ("zmax", "19"),
                    ("computeTriangleList", "false"),
                ]),
                None,
                dir,
            )
            .unwrap();
        assert!(scene.messages.is_empty(), "{:?}", scene.messages);
        init_scene(&mut scene).unwrap();
        let m = scene.mesh_of(g).unwrap();
        assert_eq!(m.points.len(), 320);
        assert_eq!(m.points[1], [-0.5, -9.0, 0.0]);
        assert!(m.triangles.is_empty());
        // without triangles, the edges are the grid lines
        assert_eq!(m.edges.len(), 784);
    }

    #[test]
    fn float_attributes_are_single_precision() {
        let mut a = owned_attrs(FLOAT_BOUNDS);
        a.extend(owned_attrs(&[("scale", "2"), ("min", "5 5 5")]));
        preparse_regular(&mut a);
        let min = &a.iter().find(|(k, _)| k == "min").unwrap().1;
        let read: Vec<f64> = min.split_whitespace().map(|t| t.parse().unwrap()).collect();
        assert_eq!(read, vec![-0.1f32 as f64 * 2.0, 0.0, 0.0]);
        assert_ne!(read[0], -0.2);
        assert!(a.iter().all(|(k, _)| k != "scale" && k != "xmin"));

        // incomplete sets are left alone (SOFA ignores them)
        let mut b = vec![("nx".to_string(), "3".to_string()), ("ny".to_string(), "3".to_string())];
        preparse_regular(&mut b);
        assert_eq!(b.len(), 2);
        let mut c = vec![("nx".into(), "3".into()), ("ny".into(), "x".into()), ("nz".into(), "5".into()), ("n".into(), "7 8 9".into())];
        preparse_grid(&mut c);
        assert_eq!(c, vec![("n".to_string(), "3 8 5".to_string())]);
    }

    #[test]
    fn cell_width_invalid_resolution_and_plain_grid() {
        let f = factory();
        let dir = std::path::Path::new(".");
        let mut scene = Scene::new("root");
        let g = create(&f, &mut scene, "RegularGridTopology", &[("min", "0 0 0"), ("max", "1 2 0.5"), ("cellWidth", "0.5")]);
        let bad = create(&f, &mut scene, "RegularGridTopology", &[("n", "0 3 3"), ("max", "2 2 2")]);
        let plain = create(&f, &mut scene, "GridTopology", &[("n", "2 2 1"), ("position", "1 2 3")]);
        let huge = f.create(&mut scene, Scene::ROOT, "RegularGridTopology", None, attrs(&[("n", "100000 100000 100000")]), None, dir);
        assert!(huge.is_some());
        assert!(scene.has_errors(), "the huge grid is reported at parse time");
        let _ = init_scene(&mut scene);

        let m = scene.mesh_of(g).unwrap();
        assert_eq!(m.points.len(), 3 * 5 * 2);
        // cellWidth keeps the parse-time step (n = 2 2 2 then)
        assert_eq!(m.points[1], [1.0, 0.0, 0.0]);
        assert_eq!(scene.entry(g).data.reals("n"), &[3.0, 5.0, 2.0]);

        let m = scene.mesh_of(bad).unwrap();
        assert_eq!(m.points.len(), 8);
        assert_eq!(m.points[0], [1.0, 0.0, 0.0]);
        assert!(scene.messages.iter().any(|d| d.message.contains("validity range")));

        let m = scene.mesh_of(plain).unwrap();
        assert_eq!(m.points, vec![[1.0, 2.0, 3.0], [0.0; 3], [0.0; 3], [0.0; 3]]);
        assert_eq!(m.quads, vec![[0, 1, 3, 2]]);
        assert!(m.hexahedra.is_empty());
    }
}
