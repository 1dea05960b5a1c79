//! `CubeTopology`: the surface of a box sampled on a regular `nx × ny × nz` lattice (points, edges
//! and quads, no triangles), spec forcefields-mappings §3.3b.
//!
//! Point numbering (SOFA's):
//! * `splitNormals`: six independent faces, each numbered on its own (x=0, y=0, z=0 faces first,
//!   then x=max, y=max, z=max), so corner and edge points are repeated per face;
//! * otherwise, without `internalPoints` and with at least two points per axis: the bottom
//!   layer `z = 0` (`x + nx·y`), the top layer `z = nz−1`, then for each intermediate layer its
//!   boundary ring: the `y = 0` row, the `y = ny−1` row, the `x = 0` column, the `x = nx−1`
//!   column (rows and columns without the corners);
//! * otherwise the full lattice `x + nx·(y + ny·z)`.
//!
//! Edges: lattice lines on the surface, visited by `z, y, x` with the `x`, `y`, `z` directions in
//! that order at each point. Quads: the faces z=0, z=max, y=0, y=max, x=0, x=max, each with
//! SOFA's vertex order (outward normals).

use settee_core::role::Topology;
use settee_core::{component, Component, InitCtx, MeshData, SimResult};

use crate::mesh_topology::MeshTopologyData;

/// Largest number of points accepted (a typo in nx, ny, nz must not exhaust memory).
const MAX_POINTS: i64 = 50_000_000;

fn take_attr(attrs: &mut Vec<(String, String)>, name: &str) -> Option<String> {
    let i = attrs.iter().position(|(n, _)| n == name)?;
    Some(attrs.remove(i).1)
}

/// `xmin … zmax` (scaled by `scale`) → `min`/`max` when all six are given, read as 32-bit floats
/// and multiplied in single precision, as SOFA's `CubeTopology::parse` does.
fn preparse(attrs: &mut Vec<(String, String)>) {
    let scale = take_attr(attrs, "scale").and_then(|s| s.trim().parse::<f32>().ok()).unwrap_or(1.0);
    const KEYS: [(&str, f32); 6] = [("xmin", 0.0), ("ymin", 0.0), ("zmin", 0.0), ("xmax", 1.0), ("ymax", 1.0), ("zmax", 1.0)];
    if !KEYS.iter().all(|(k, _)| attrs.iter().any(|(n, _)| n == k)) {
        return;
    }
    let mut v = [0f32; 6];
    for (i, (key, default)) in KEYS.into_iter().enumerate() {
        v[i] = take_attr(attrs, key).and_then(|t| t.trim().parse::<f32>().ok()).unwrap_or(default);
    }
    let w = v.map(|c| (c * scale) as f64);
    attrs.retain(|(k, _)| k != "min" && k != "max");
    attrs.push(("min".into(), format!("{:?} {:?} {:?}", w[0], w[1], w[2])));
    attrs.push(("max".into(), format!("{:?} {:?} {:?}", w[3], w[4], w[5])));
}

/// The face a split-normals point belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plane {
    Unknown,
    X0,
    X1,
    Y0,
    Y1,
    Z0,
    Z1,
}

/// The lattice and its numbering.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubeGrid {
    pub n: [i64; 3],
    pub internal_points: bool,
    pub split_normals: bool,
    pub p0: [f64; 3],
    /// Spacing along x, y, z (zero along an axis with a single point).
    pub d: [f64; 3],
}

impl CubeGrid {
    pub fn new(n: [i64; 3], min: [f64; 3], max: [f64; 3], internal_points: bool, split_normals: bool) -> CubeGrid {
        let mut d = [0.0; 3];
        for a in 0..3 {
            if n[a] > 1 {
                d[a] = (max[a] - min[a]) / (n[a] - 1) as f64;
            }
        }
        CubeGrid { n, internal_points, split_normals, p0: min, d }
    }

    fn surface_only(&self) -> bool {
        let [nx, ny, nz] = self.n;
        !self.internal_points && nx > 1 && ny > 1 && nz > 1
    }

    /// Number of points.
    pub fn nb_points(&self) -> i64 {
        let [nx, ny, nz] = self.n;
        if self.split_normals {
            nx * ny * if nz > 1 { 2 } else { 1 } + ny * nz * if nx > 1 { 2 } else { 1 } + nz * nx * if ny > 1 { 2 } else { 1 }
        } else if self.surface_only() {
            nx * ny * 2 + (nz - 2) * (2 * nx + 2 * ny - 4)
        } else {
            nx * ny * nz
        }
    }

    /// Index of lattice point `(x, y, z)` (on face `p` with split normals).
    fn point(&self, x: i64, y: i64, z: i64, p: Plane) -> i64 {
        let [nx, ny, nz] = self.n;
        if self.split_normals {
            let p = if p != Plane::Unknown {
                p
            } else if x == 0 {
                Plane::X0
            } else if x == nx - 1 {
                Plane::X1
            } else if y == 0 {
                Plane::Y0
            } else if y == ny - 1 {
                Plane::Y1
            } else if z == 0 {
                Plane::Z0
            } else if z == nz - 1 {
                Plane::Z1
            } else {
                Plane::Unknown
            };
            match p {
                Plane::X0 => y + ny * z,
                Plane::X1 => ny * nz + nx * nz + nx * ny + y + ny * z,
                Plane::Y0 => ny * nz + x + nx * z,
                Plane::Y1 => 2 * ny * nz + nx * nz + nx * ny + x + nx * z,
                Plane::Z0 => ny * nz + nx * nz + x + nx * y,
                Plane::Z1 => 2 * ny * nz + 2 * nx * nz + nx * ny + x + nx * y,
                Plane::Unknown => 0,
            }
        } else if self.surface_only() {
            if z == 0 {
                x + nx * y
            } else if z == nz - 1 {
                x + nx * (y + ny)
            } else {
                let base = nx * ny * 2 + (2 * nx + 2 * ny - 4) * (z - 1);
                if y == 0 {
                    base + x
                } else if y == ny - 1 {
                    base + x + nx
                } else if x == 0 {
                    base + 2 * nx + (y - 1)
                } else {
                    base + 2 * nx + (ny - 2) + (y - 1)
                }
            }
        } else {
            x + nx * (y + ny * z)
        }
    }

    /// Lattice coordinates of point `i`.
    fn lattice(&self, mut i: i64) -> [i64; 3] {
        let [nx, ny, nz] = self.n;
        if self.split_normals {
            let (mut x, mut y, mut z) = (0, 0, 0);
            if i >= ny * nz + nx * nz + nx * ny {
                i -= ny * nz + nx * nz + nx * ny;
                x = nx - 1;
                y = ny - 1;
                z = nz - 1;
            }
            if i < ny * nz {
                y = i % ny;
                z = i / ny;
            } else {
                i -= ny * nz;
                if i < nx * nz {
                    x = i % nx;
                    z = i / nx;
                } else {
                    i -= nx * nz;
                    x = i % nx;
                    y = i / nx;
                }
            }
            [x, y, z]
        } else if self.surface_only() {
            let nxny = nx * ny;
            if i < nxny {
                [i % nx, i / nx, 0]
            } else if i < 2 * nxny {
                i -= nxny;
                [i % nx, i / nx, nz - 1]
            } else {
                i -= 2 * nxny;
                let ring = 2 * nx + 2 * (ny - 2);
                let z = i / ring;
                i -= z * ring;
                let z = z + 1;
                if i < nx {
                    [i, 0, z]
                } else if i < 2 * nx {
                    [i - nx, ny - 1, z]
                } else if i < 2 * nx + (ny - 2) {
                    [0, 1 + i - 2 * nx, z]
                } else {
                    [nx - 1, 1 + i - 2 * nx - (ny - 2), z]
                }
            }
        } else {
            let x = i % nx;
            i /= nx;
            [x, i % ny, i / ny]
        }
    }

    /// Position of point `i`: `p0 + dx·x + dy·y + dz·z`, summed in that order.
    pub fn position(&self, i: i64) -> [f64; 3] {
        let [x, y, z] = self.lattice(i);
        let mut p = [0.0; 3];
        // The spacing vectors are axis-aligned: dx = (d0, 0, 0), …; their zero components are
        // added too, as SOFA adds whole vectors.
        let dx = [self.d[0], 0.0, 0.0];
        let dy = [0.0, self.d[1], 0.0];
        let dz = [0.0, 0.0, self.d[2]];
        for c in 0..3 {
            p[c] = self.p0[c] + dx[c] * x as f64 + dy[c] * y as f64 + dz[c] * z as f64;
        }
        p
    }

    pub fn points(&self) -> Vec<[f64; 3]> {
        (0..self.nb_points().max(0)).map(|i| self.position(i)).collect()
    }

    pub fn edges(&self) -> Vec<[usize; 2]> {
        let [nx, ny, nz] = self.n;
        let pt = |x, y, z| self.point(x, y, z, Plane::Unknown) as usize;
        let mut e = Vec::new();
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    if x < nx - 1 && (y == 0 || y == ny - 1 || z == 0 || z == nz - 1) {
                        e.push([pt(x, y, z), pt(x + 1, y, z)]);
                    }
                    if y < ny - 1 && (x == 0 || x == nx - 1 || z == 0 || z == nz - 1) {
                        e.push([pt(x, y, z), pt(x, y + 1, z)]);
                    }
                    if z < nz - 1 && (x == 0 || x == nx - 1 || y == 0 || y == ny - 1) {
                        e.push([pt(x, y, z), pt(x, y, z + 1)]);
                    }
                }
            }
        }
        e
    }

    pub fn quads(&self) -> Vec<[usize; 4]> {
        let [nx, ny, nz] = self.n;
        let pt = |x, y, z, p| self.point(x, y, z, p) as usize;
        let mut q = Vec::new();
        // z = 0 face
        for y in 0..ny - 1 {
            for x in 0..nx - 1 {
                let p = Plane::Z0;
                q.push([pt(x, y, 0, p), pt(x, y + 1, 0, p), pt(x + 1, y + 1, 0, p), pt(x + 1, y, 0, p)]);
            }
        }
        // z = max face
        if nz > 1 {
            let z = nz - 1;
            for y in 0..ny - 1 {
                for x in 0..nx - 1 {
                    let p = Plane::Z1;
                    q.push([pt(x, y, z, p), pt(x + 1, y, z, p), pt(x + 1, y + 1, z, p), pt(x, y + 1, z, p)]);
                }
            }
        }
        // y = 0 face
        for z in 0..nz - 1 {
            for x in 0..nx - 1 {
                let p = Plane::Y0;
                q.push([pt(x, 0, z, p), pt(x + 1, 0, z, p), pt(x + 1, 0, z + 1, p), pt(x, 0, z + 1, p)]);
            }
        }
        // y = max face
        if ny > 1 {
            let y = ny - 1;
            for z in 0..nz - 1 {
                for x in 0..nx - 1 {
                    let p = Plane::Y1;
                    q.push([pt(x, y, z, p), pt(x, y, z + 1, p), pt(x + 1, y, z + 1, p), pt(x + 1, y, z, p)]);
                }
            }
        }
        // x = 0 face
        for z in 0..nz - 1 {
            for y in 0..ny - 1 {
                let p = Plane::X0;
                q.push([pt(0, y, z, p), pt(0, y, z + 1, p), pt(0, y + 1, z + 1, p), pt(0, y + 1, z, p)]);
            }
        }
        // x = max face
        if nx > 1 {
            let x = nx - 1;
            for z in 0..nz - 1 {
                for y in 0..ny - 1 {
                    let p = Plane::X1;
                    q.push([pt(x, y, z, p), pt(x, y + 1, z, p), pt(x, y + 1, z + 1, p), pt(x, y, z + 1, p)]);
                }
            }
        }
        q
    }

    /// The mesh: points, edges and quads (no triangles, as SOFA's container).
    pub fn mesh(&self) -> MeshData {
        MeshData { points: self.points(), edges: self.edges(), quads: self.quads(), ..Default::default() }
    }
}

/// Surface topology of a cube in 3D (points, edges and quads).
///
/// The component.
#[component(
    module = "Sofa.Component.Topology.Container.Constant",
    roles = [Topology],
    inherit = [MeshTopologyData, Self],
    preparse = preparse,
    data = {
        /// x grid resolution
        nx: Int = "0",
        /// y grid resolution
        ny: Int = "0",
        /// z grid resolution
        nz: Int = "0",
        /// include internal points (allow a one-to-one mapping between points from RegularGridTopology and CubeTopology)
        internalPoints: Bool = "false",
        /// split corner points to have planar normals
        splitNormals: Bool = "false",
        /// Min
        min: Fixed(3) = "0 0 0",
        /// Max
        max: Fixed(3) = "1 1 1",
    },
)]
#[derive(Clone, Default)]
pub struct CubeTopology {
    mesh: MeshData,
    grid: Option<CubeGrid>,
}

impl CubeTopology {
    pub fn grid(&self) -> Option<&CubeGrid> {
        self.grid.as_ref()
    }

    fn build(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let n = [d.get(Self::NX), d.get(Self::NY), d.get(Self::NZ)];
        if n.iter().any(|&a| a < 0) {
            return Err(cx
                .error(format!("negative resolution nx={} ny={} nz={}", n[0], n[1], n[2]))
                .hint("nx, ny and nz are numbers of points per axis (≥ 1)"));
        }
        let grid = CubeGrid::new(n, d.get(Self::MIN), d.get(Self::MAX), d.get(Self::INTERNAL_POINTS), d.get(Self::SPLIT_NORMALS));
        let count = grid.nb_points();
        if !(0..=MAX_POINTS).contains(&count) || n.iter().any(|&a| a > MAX_POINTS) {
            return Err(cx
                .error(format!("resolution {} × {} × {} is too large", n[0], n[1], n[2]))
                .hint(format!("at most {MAX_POINTS} points are accepted; check nx, ny and nz")));
        }
        let mesh = if n.contains(&0) { MeshData::default() } else { grid.mesh() };
        let d = cx.data_mut();
        d.put(MeshTopologyData::POSITION, mesh.points.iter().flatten().copied().collect());
        d.put(MeshTopologyData::EDGES, mesh.edges.iter().flatten().copied().collect());
        d.put(MeshTopologyData::QUADS, mesh.quads.iter().flatten().copied().collect());
        self.mesh = mesh;
        self.grid = Some(grid);
        Ok(())
    }
}

impl Component for CubeTopology {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.build(cx)
    }

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.build(cx)
    }
}

mesh_field_topology!(CubeTopology);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{attrs, create, factory_and_scene, init_scene, owned_attrs, FLOAT_BOUNDS};
    use settee_core::{Scene, VecId};

    /// The collision box of BeamFEMForceField.scn: with ny = nz = 2 the numbering is the full
    /// lattice `x + nx(y + ny z)`.
    #[test]
    fn beam_scene_box_feeds_its_mechanical_object() {
        let (f, mut scene) = factory_and_scene();
        let c = create(&f, &mut scene, "CubeTopology", &[("nx", "15"), ("ny", "2"), ("nz", "2"), ("min", "0 -0.1 -0.1"), ("max", "7 0.1 0.1")]);
        let mo = create(&f, &mut scene, "MechanicalObject", &[]);
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        init_scene(&mut scene).unwrap();
        let m = scene.mesh_of(c).unwrap().clone();
        assert_eq!(m.points.len(), 60);
        assert_eq!(m.points[0], [0.0, -0.1, -0.1]);
        assert_eq!(m.points[1], [0.5, -0.1, -0.1]);
        assert_eq!(m.points[15], [0.0, 0.1, -0.1]);
        assert_eq!(m.points[30], [0.0, -0.1, 0.1]);
        assert_eq!(m.points[59], [7.0, 0.1, 0.1]);
        // surface edges: 4 lines of 14 along x, and 15 rings of 4 edges across
        assert_eq!(m.edges.len(), 4 * 14 + 15 * 4);
        assert_eq!(&m.edges[..4], &[[0, 1], [0, 15], [0, 30], [1, 2]]);
        // quads: 14 on each long face, one on each end
        assert_eq!(m.quads.len(), 4 * 14 + 2);
        assert_eq!(m.quads[0], [0, 15, 16, 1]);
        assert_eq!(m.quads[14], [30, 31, 46, 45]);
        assert_eq!(m.quads[28], [0, 1, 31, 30]);
        assert_eq!(m.quads[42], [15, 45, 46, 16]);
        assert_eq!(m.quads[56], [0, 30, 45, 15]);
        assert_eq!(m.quads[57], [14, 29, 59, 44]);
        assert!(m.triangles.is_empty());
        let s = scene.state_of(mo).unwrap();
        let x = scene.store.get(s).read(VecId::POSITION);
        assert_eq!(x.len(), 180);
        assert_eq!(&x[3 * 59..], &[7.0, 0.1, 0.1]);
    }

    /// 3×3×4 box without internal points: bottom layer, top layer, then the rings of the two
    /// intermediate layers (y=0 row, y=max row, x=0 column, x=max column).
    #[test]
    fn surface_numbering_of_a_small_box() {
        let g = CubeGrid::new([3, 3, 4], [0.0; 3], [2.0, 2.0, 3.0], false, false);
        assert_eq!(g.nb_points(), 9 * 2 + 2 * 8);
        let p = g.points();
        assert_eq!(p[4], [1.0, 1.0, 0.0]);
        assert_eq!(p[9], [0.0, 0.0, 3.0]);
        assert_eq!(p[17], [2.0, 2.0, 3.0]);
        // first ring (z = 1): y=0 row, y=2 row, x=0 column, x=2 column
        let ring: Vec<[f64; 3]> = p[18..26].to_vec();
        assert_eq!(
            ring,
            vec![
                [0.0, 0.0, 1.0],
                [1.0, 0.0, 1.0],
                [2.0, 0.0, 1.0],
                [0.0, 2.0, 1.0],
                [1.0, 2.0, 1.0],
                [2.0, 2.0, 1.0],
                [0.0, 1.0, 1.0],
                [2.0, 1.0, 1.0]
            ]
        );
        // point() inverts the numbering
        for i in 0..g.nb_points() {
            let [x, y, z] = g.lattice(i);
            assert_eq!(g.point(x, y, z, Plane::Unknown), i);
        }
        // 12 box edges of 2 segments + 2 rings of 8 segments in between… counted by SOFA's rule
        let e = g.edges();
        assert_eq!(e.len(), (3 - 1) * (2 * 3 + 2 * 4 - 4) + (3 - 1) * (2 * 3 + 2 * 4 - 4) + (4 - 1) * (2 * 3 + 2 * 3 - 4));
        assert_eq!(g.quads().len(), 2 * 4 + 2 * 6 + 2 * 6);
        // every quad vertex is a surface point and every quad is planar with unit-area cells
        for q in g.quads() {
            assert!(q.iter().all(|&i| i < 34));
        }
        // with internal points, the full lattice
        let h = CubeGrid::new([3, 3, 4], [0.0; 3], [2.0, 2.0, 3.0], true, false);
        assert_eq!(h.nb_points(), 36);
        assert_eq!(h.points()[13], [1.0, 1.0, 1.0]);
    }

    #[test]
    fn split_normals_repeat_corners_per_face() {
        let g = CubeGrid::new([2, 2, 2], [0.0; 3], [1.0; 3], false, true);
        assert_eq!(g.nb_points(), 24);
        let p = g.points();
        // x=0 face first: (0, y, z) with y fastest
        assert_eq!(&p[..4], &[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]]);
        // then y=0 face, z=0 face, then the max faces
        assert_eq!(p[4], [0.0, 0.0, 0.0]);
        assert_eq!(p[12], [1.0, 0.0, 0.0]);
        assert_eq!(g.quads().len(), 6);
        assert_eq!(g.quads()[0], [8, 10, 11, 9]);
    }

    #[test]
    fn float_bounds_and_errors() {
        let mut a = owned_attrs(FLOAT_BOUNDS);
        preparse(&mut a);
        let min = &a.iter().find(|(k, _)| k == "min").unwrap().1;
        assert_eq!(min, &format!("{:?} 0.0 0.0", -0.1f32 as f64));

        let (f, mut scene) = factory_and_scene();
        let dir = std::path::Path::new(".");
        f.create(&mut scene, Scene::ROOT, "CubeTopology", None, attrs(&[("nx", "-2"), ("ny", "2"), ("nz", "2")]), None, dir);
        assert!(scene.has_errors());
    }
}
