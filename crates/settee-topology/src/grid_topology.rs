//! `GridTopology`, `RegularGridTopology`, `CylinderGridTopology` and `SphereGridTopology`:
//! structured hexahedral grids with SOFA's numbering (geometry and orderings in [`crate::grid`]).
//! The cylinder and sphere grids place the points of a square (cube) grid on a disc (ball): see
//! [`cylinder_grid_point`] and [`sphere_grid_point`].
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

/// The grid's frame for `axis`, as SOFA builds it: z along the axis, x the world x (the world y
/// when the axis is x) made orthogonal, y = z × x.
fn axis_frame(axis: [f64; 3]) -> [[f64; 3]; 3] {
    let normalize = |v: [f64; 3]| {
        let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        if n > f64::EPSILON {
            [v[0] / n, v[1] / n, v[2] / n]
        } else {
            v
        }
    };
    let cross = |a: [f64; 3], b: [f64; 3]| [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    let z = normalize(axis);
    let d = [z[0] - 1.0, z[1], z[2]];
    let x0 = if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() < 1e-6 { [0.0, 1.0, 0.0] } else { [1.0, 0.0, 0.0] };
    let y = cross(z, x0);
    let x = cross(y, z);
    [normalize(x), normalize(y), z]
}

/// `center + x·p0 + y·p1 + z·p2` in the frame of `axis`.
fn in_frame(center: [f64; 3], axis: [f64; 3], p: [f64; 3]) -> [f64; 3] {
    let [x, y, z] = axis_frame(axis);
    [0, 1, 2].map(|a| center[a] + x[a] * p[0] + y[a] * p[1] + z[a] * p[2])
}

/// Point (i, j, k) of a `n` grid on a cylinder of `radius` and `length` along `axis` from
/// `center`: (i, j) spans the square [-r, r]² which is shrunk onto the disc (a point keeps its
/// direction and goes to distance max(|x|, |y|)); k spans [0, length].
pub fn cylinder_grid_point(n: [usize; 3], ijk: [usize; 3], center: [f64; 3], axis: [f64; 3], radius: f64, length: f64) -> [f64; 3] {
    let r = radius;
    let mut p = [(2 * ijk[0]) as f64 * r / (n[0] as f64 - 1.0) - r, (2 * ijk[1]) as f64 * r / (n[1] as f64 - 1.0) - r, 0.0];
    let norm = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
    if norm > 1e-7 {
        let s = p[0].abs().max(p[1].abs()) / norm;
        p = p.map(|c| c * s);
    }
    if n[2] > 1 {
        p[2] = ijk[2] as f64 * length / (n[2] as f64 - 1.0);
    }
    in_frame(center, axis, p)
}

/// Point (i, j, k) of a `n` grid on a ball of `radius` around `center`: the cube [-r, r]³ shrunk
/// onto the ball as [`cylinder_grid_point`] does the square (distance max(|x|, |y|, |z|)).
pub fn sphere_grid_point(n: [usize; 3], ijk: [usize; 3], center: [f64; 3], axis: [f64; 3], radius: f64) -> [f64; 3] {
    let r = radius;
    let mut p = [0, 1, 2].map(|a| (2 * ijk[a]) as f64 * r / (n[a] as f64 - 1.0) - r);
    let norm = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
    if norm > 1e-7 {
        let s = p[0].abs().max(p[1].abs()).max(p[2].abs()) / norm;
        p = p.map(|c| c * s);
    }
    in_frame(center, axis, p)
}

/// Grid point `index` in SOFA's numbering: x fastest, then y, then z.
fn grid_index(n: [usize; 3], index: usize) -> [usize; 3] {
    [index % n[0], (index / n[0]) % n[1], index / (n[0] * n[1])]
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
        create = |_| GridTopology { shape: GridShape::Plain, mesh: MeshData::default(), geometry: None },
        preparse = preparse_grid,
    ),
    class(
        name = "CylinderGridTopology", module = "Sofa.Component.Topology.Container.Grid",
        description = "Cylinder grid in 3D: a grid of n points whose x-y squares are mapped onto discs along `axis`.",
        create = |_| GridTopology { shape: GridShape::Cylinder, mesh: MeshData::default(), geometry: None },
        preparse = preparse_grid,
        data = {
            /// Center of the cylinder
            center: Fixed(3) = "0 0 0",
            /// Main direction of the cylinder
            axis: Fixed(3) = "0 0 1",
            /// Radius of the cylinder
            radius: Real = "1",
            /// Length of the cylinder along its axis
            length: Real = "1",
        },
    ),
    class(
        name = "SphereGridTopology", module = "Sofa.Component.Topology.Container.Grid",
        description = "Sphere grid in 3D: a grid of n points whose cube is mapped onto a ball.",
        create = |_| GridTopology { shape: GridShape::Sphere, mesh: MeshData::default(), geometry: None },
        preparse = preparse_grid,
        data = {
            /// Center of the sphere
            center: Fixed(3) = "0 0 0",
            /// Main direction of the sphere (its grid's z axis)
            axis: Fixed(3) = "0 0 1",
            /// Radius of the sphere
            radius: Real = "1",
        },
    ),
    class(
        name = "RegularGridTopology", module = "Sofa.Component.Topology.Container.Grid",
        description = "Regular grid of hexahedra between `min` and `max` with `n` points per axis.",
        create = |_| GridTopology { shape: GridShape::Regular, mesh: MeshData::default(), geometry: None },
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
    shape: GridShape,
    mesh: MeshData,
    geometry: Option<RegularGridGeometry>,
}

/// Where a grid's points come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GridShape {
    /// Given (`position`) or zero.
    Plain,
    /// Between `min` and `max`.
    Regular,
    /// On a cylinder.
    Cylinder,
    /// In a ball.
    Sphere,
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
        let (n, points, reset) = if matches!(self.shape, GridShape::Cylinder | GridShape::Sphere) {
            let (n, reset) = sanitize_resolution(n_raw);
            too_large(cx, n)?;
            let (center, axis, radius) = (d.get(Self::CENTER), d.get(Self::AXIS), d.get(Self::RADIUS));
            let points = (0..point_count(n))
                .map(|i| match self.shape {
                    GridShape::Cylinder => cylinder_grid_point(n, grid_index(n, i), center, axis, radius, d.get(Self::LENGTH)),
                    _ => sphere_grid_point(n, grid_index(n, i), center, axis, radius),
                })
                .collect();
            (n, points, reset)
        } else if self.shape == GridShape::Regular {
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

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod shaped_grid_tests {
    use super::*;
    use crate::test_util::{create, factory_and_scene, init_scene};

    /// CylinderGridTopology.scn's grid (5 × 5 × 20, r = 3.75, length 35.56, axis y): the frame
    /// is x' = x, y' = -z, z' = y. Point 0 is the square's corner (-r, -r) pulled onto the
    /// circle, (-r/√2, -r/√2), i.e. (-r/√2, 0, r/√2) in the world; the middle point of each layer is on the axis; the last layer
    /// is at the length; every point of the square's border is at distance r from the axis.
    #[test]
    fn cylinder_points_follow_sofa_formulas() {
        let (f, mut s) = factory_and_scene();
        let g = create(
            &f,
            &mut s,
            "CylinderGridTopology",
            &[("nx", "5"), ("ny", "5"), ("nz", "20"), ("length", "35.56"), ("radius", "3.75"), ("axis", "0 1 0")],
        );
        init_scene(&mut s).unwrap();
        let x = s.entry(g).data.reals("position").to_vec();
        assert_eq!(x.len(), 500 * 3);
        let p = |i: usize| [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
        let c = 3.75 / 2f64.sqrt();
        let p0 = p(0);
        assert!((p0[0] + c).abs() < 1e-14 && p0[1] == 0.0 && (p0[2] - c).abs() < 1e-14, "{p0:?}");
        assert_eq!(p(12), [0.0, 0.0, 0.0]);
        assert!((p(25 * 19 + 12)[1] - 35.56).abs() < 1e-12);
        // Border of the square (i or j at 0 or 4): on the circle; inner ring (1 or 3): at r/2.
        for (i, j, r) in [(0, 2, 3.75), (4, 1, 3.75), (1, 1, 1.875), (3, 2, 1.875)] {
            let q = p(j * 5 + i);
            assert!(((q[0] * q[0] + q[2] * q[2]).sqrt() - r).abs() < 1e-14, "({i},{j}) {q:?}");
        }
        assert_eq!(s.entry(g).data.indices("hexahedra").len(), 4 * 4 * 19 * 8);
    }

    /// SphereGridTopology.scn's grid (10³, r = 4): every point of the cube's surface is on the
    /// sphere, opposite points are symmetric (SOFA's test), and no point is outside.
    #[test]
    fn sphere_points_follow_sofa_formulas() {
        let (f, mut s) = factory_and_scene();
        let g = create(
            &f,
            &mut s,
            "SphereGridTopology",
            &[("nx", "10"), ("ny", "10"), ("nz", "10"), ("radius", "4.0"), ("axis", "0 1 0"), ("center", "1 2 3")],
        );
        init_scene(&mut s).unwrap();
        let x = s.entry(g).data.reals("position").to_vec();
        let p = |i: usize| [x[3 * i] - 1.0, x[3 * i + 1] - 2.0, x[3 * i + 2] - 3.0];
        let norm = |q: [f64; 3]| (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
        for i in 0..1000 {
            let (a, b) = (p(i), p(999 - i));
            assert!((0..3).all(|k| (a[k] + b[k]).abs() < 1e-12), "{i}");
            let ijk = grid_index([10; 3], i);
            let on_surface = ijk.iter().any(|&c| c == 0 || c == 9);
            assert!(norm(a) <= 4.0 + 1e-12);
            if on_surface {
                assert!((norm(a) - 4.0).abs() < 1e-12, "{i}: {}", norm(a));
            }
        }
        // Point (9, 0, 0) is the cube corner (r, -r, -r) pulled onto the sphere, in the frame
        // x' = x, y' = -z, z' = y: (k, -k, k) in the world.
        let k = 4.0 / 3f64.sqrt();
        let q = p(9);
        assert!((q[0] - k).abs() < 1e-14 && (q[1] + k).abs() < 1e-14 && (q[2] - k).abs() < 1e-14, "{q:?}");
    }
}
