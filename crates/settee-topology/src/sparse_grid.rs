//! `SparseGridTopology` (`GRID/SparseGridTopology.cpp`): the cells of a regular grid that
//! contain matter of a closed surface mesh, as hexahedra.
//!
//! Construction from a surface (an OBJ file given by `filename`/`fileTopology`, or the
//! `position` + `triangles`/`quads` Data):
//! 1. regular grid with `n` points per axis between `min` and `max`; when both are zero, the
//!    surface's bounding box enlarged by 1% of its size on each side (`cellWidth > 0` then sets
//!    `n = ceil((max-min)/cellWidth) + 1`);
//! 2. voxelisation: every cell containing a surface vertex is BOUNDARY, and so is every cell
//!    crossed by a facet (fanned into triangles `(f0, f[j-1], f[j])`; single-precision
//!    polygon/cube test on coordinates normalised to the cell, [`crate::polygon_cube`]); a flood
//!    fill from the grid's border cells through non-boundary cells marks OUTSIDE cells; the
//!    others are INSIDE;
//! 3. hexahedra: BOUNDARY cells in grid cell order (x fastest), then INSIDE cells (BOUNDARY
//!    cells are dropped with `onlyInsideCells`); corners in the grid hexahedron order;
//! 4. points: the distinct corner positions, **sorted lexicographically by (x, y, z)**;
//! 5. per-cell stiffness and mass coefficients: 0.5 for BOUNDARY cells when `fillWeighted`,
//!    else 1 (single precision, as SOFA stores them).
//!
//! With `nbVirtualFinerLevels = L`, the grid is built as above with `(n-1)·2^L + 1` points per
//! axis, then coarsened `L` times: the coarse grid has `n_f/2 + 1` points per axis, the same
//! `min`, and `max = min + (n-1)·2·d_f`; coarse cells are visited with **z fastest** (x outermost);
//! a cell is kept if one of its 8 children is kept, INSIDE if all 8 exist and are INSIDE, else
//! BOUNDARY; its coefficients are the sums of its children's divided by 8.
//!
//! Only points and hexahedra are produced: the edge, triangle and quad lists stay empty, as in
//! SOFA. Voxel inputs (`.raw`, `.voxel`, a VoxelLoader) and the `facets` Data are not supported.
//!
//! Other crates cannot call the grid's cell search, so the built grid is also published in
//! Settee-only output Data: `cellLocator` ([`CellLocator`], read by BarycentricMapping's
//! SparseGrid mapper) and `stiffnessCoefs`/`massCoefs` (the per-hexahedron coefficients SOFA's
//! hexahedral FEM multiplies its element stiffness and mass by).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::Path;

use settee_core::math::sub;
use settee_core::role::Topology;
use settee_core::topology::{group, points_from_flat};
use settee_core::{component, InitCtx, MeshData, SimError, SimResult};

use crate::grid::{cell_coords, cell_index, hexahedron, hexahedron_count, RegularGridGeometry, Vec3};
use crate::mesh_topology::MeshTopologyData;
use crate::polygon_cube::{polygon_intersects_unit_cube, polygon_normal};

/// Filling state of a grid cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellType {
    Outside,
    Inside,
    Boundary,
}

/// A surface: vertices and polygonal facets (vertex indices).
#[derive(Clone, Debug, Default)]
pub struct Surface {
    pub vertices: Vec<Vec3>,
    pub facets: Vec<Vec<usize>>,
}

impl Surface {
    /// Adds the closed surface of the box `[lo, hi]`: its 8 corners (x fastest, then y, then z)
    /// and its 6 faces as quads with outward normals.
    pub fn add_box(&mut self, lo: Vec3, hi: Vec3) {
        let first = self.vertices.len();
        for z in [lo[2], hi[2]] {
            for y in [lo[1], hi[1]] {
                for x in [lo[0], hi[0]] {
                    self.vertices.push([x, y, z]);
                }
            }
        }
        let quads = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
        self.facets.extend(quads.iter().map(|q| q.iter().map(|&i| first + i).collect::<Vec<_>>()));
    }
}

/// Reads the `v` and `f`/`l` records of an OBJ file as SOFA's mesh reader does (a facet
/// vertex `i/j/k` contributes `i - 1`).
pub fn read_obj_surface(path: &Path) -> Result<Surface, String> {
    let text = settee_core::budget::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut s = Surface::default();
    for (no, line) in text.lines().enumerate() {
        let mut tok = line.split_whitespace();
        match tok.next() {
            Some("v") => {
                let mut v = [0.0; 3];
                for (c, t) in tok.take(3).enumerate() {
                    v[c] = t.parse().map_err(|_| format!("{}:{}: invalid vertex coordinate '{t}'", path.display(), no + 1))?;
                }
                s.vertices.push(v);
            }
            Some("f") | Some("l") => {
                let mut facet = Vec::new();
                for t in tok {
                    let first = t.split('/').next().unwrap_or("");
                    let i: i64 = first.parse().map_err(|_| format!("{}:{}: invalid vertex index '{t}'", path.display(), no + 1))?;
                    if i < 1 {
                        return Err(format!("{}:{}: vertex index {i} is not supported (indices start at 1)", path.display(), no + 1));
                    }
                    facet.push(i as usize - 1);
                }
                s.facets.push(facet);
            }
            _ => {}
        }
    }
    Ok(s)
}

/// Position key ordered as SOFA's `Vec3` (lexicographic, `-0 == 0`).
#[derive(Clone, Copy, Debug)]
struct Key(Vec3);

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> Ordering {
        for c in 0..3 {
            if self.0[c] < o.0[c] {
                return Ordering::Less;
            }
            if o.0[c] < self.0[c] {
                return Ordering::Greater;
            }
        }
        Ordering::Equal
    }
}

/// The parameters of a grid built from a surface.
#[derive(Clone, Copy, Debug)]
pub struct FinestParams {
    pub n: [usize; 3],
    pub min: Vec3,
    pub max: Vec3,
    pub cell_width: f64,
    pub fill_weighted: bool,
    pub only_inside_cells: bool,
}

/// One surface of a `SparseGridMultipleTopology`, with the stiffness and mass coefficients of
/// the matter it bounds.
#[derive(Clone, Debug)]
pub struct WeightedSurface {
    pub surface: Surface,
    pub stiffness: f32,
    pub mass: f32,
}

/// Lowest and highest coordinates of `v` (not empty).
fn bounding_box(v: &[Vec3]) -> (Vec3, Vec3) {
    let (mut lo, mut hi) = (v[0], v[0]);
    for p in &v[1..] {
        for c in 0..3 {
            if p[c] > hi[c] {
                hi[c] = p[c];
            } else if p[c] < lo[c] {
                lo[c] = p[c];
            }
        }
    }
    (lo, hi)
}

/// A built sparse grid.
#[derive(Clone, Debug)]
pub struct SparseGrid {
    /// Points per axis of the underlying regular grid.
    pub n: [usize; 3],
    pub min: Vec3,
    pub max: Vec3,
    pub regular: RegularGridGeometry,
    pub points: Vec<Vec3>,
    pub hexahedra: Vec<[usize; 8]>,
    pub types: Vec<CellType>,
    pub stiffness_coefs: Vec<f32>,
    pub mass_coefs: Vec<f32>,
    /// Sparse index of each regular-grid cell.
    pub regular_to_sparse: Vec<Option<usize>>,
    /// Regular-grid cell of each sparse cell.
    pub sparse_to_regular: Vec<usize>,
}

impl SparseGrid {
    /// Builds the grid from a surface (steps 1–5 of the module documentation).
    pub fn from_surface(p: &FinestParams, s: &Surface) -> Result<SparseGrid, String> {
        if s.vertices.is_empty() {
            return Err("the surface has no vertices".into());
        }
        let (mut min, mut max) = (p.min, p.max);
        if min == [0.0; 3] && max == [0.0; 3] {
            let (mut lo, mut hi) = (s.vertices[0], s.vertices[0]);
            for v in &s.vertices[1..] {
                for c in 0..3 {
                    if v[c] > hi[c] {
                        hi[c] = v[c];
                    } else if v[c] < lo[c] {
                        lo[c] = v[c];
                    }
                }
            }
            let diff = [(hi[0] - lo[0]) / 100.0, (hi[1] - lo[1]) / 100.0, (hi[2] - lo[2]) / 100.0];
            min = [lo[0] - diff[0], lo[1] - diff[1], lo[2] - diff[2]];
            max = [hi[0] + diff[0], hi[1] + diff[1], hi[2] + diff[2]];
        }
        let mut n = p.n;
        if p.cell_width != 0.0 {
            let d = sub(max, min);
            let k = |a: usize| ((d[a] / p.cell_width).ceil() as i64 + 1).max(0) as usize;
            n = [k(0), k(1), k(2)];
        }
        if n.iter().any(|&a| a < 2) {
            return Err(format!("grid resolution {n:?} has an axis with fewer than 2 points"));
        }
        // Every regular cell gets a type, a lookup entry and possibly a hexahedron (8 indices),
        // coefficients and points, copied into the mesh and the published Data: about 256 bytes
        // each, checked before any of it is allocated.
        let cells = n.iter().map(|&a| a as u128 - 1).product::<u128>();
        settee_core::budget::check_msg(cells, 256, &format!("SparseGridTopology grid of {} × {} × {} points", n[0], n[1], n[2]))?;
        let regular = RegularGridGeometry::from_bounds(n, min, max, None);
        let types = voxelize(&regular, min, max, s)?;
        let mut cells: Vec<(usize, CellType)> = Vec::new();
        if !p.only_inside_cells {
            cells.extend(types.iter().enumerate().filter(|(_, t)| **t == CellType::Boundary).map(|(i, t)| (i, *t)));
        }
        cells.extend(types.iter().enumerate().filter(|(_, t)| **t == CellType::Inside).map(|(i, t)| (i, *t)));
        let coef = |t: CellType| if t == CellType::Boundary && p.fill_weighted { 0.5f32 } else { 1.0 };
        let coefs: Vec<f32> = cells.iter().map(|(_, t)| coef(*t)).collect();
        Ok(assemble(n, min, max, regular, &cells, coefs))
    }

    /// SOFA's `SparseGridMultipleTopology::buildAsFinest`: every surface is voxelised on the
    /// same grid (around all of them when min = max = 0); a cell inside a surface (or on its
    /// boundary without `fillWeighted`) takes that surface's coefficients, a boundary cell the
    /// mean of its previous ones and the surface's (or the surface's with `erase_previous`);
    /// later surfaces win. The cells are those of a single surface with these types, and their
    /// coefficients the surfaces'.
    pub fn from_surfaces(p: &FinestParams, surfaces: &[WeightedSurface], erase_previous: bool) -> Result<SparseGrid, String> {
        if surfaces.is_empty() || surfaces.iter().any(|w| w.surface.vertices.is_empty()) {
            return Err("no surface, or a surface without vertices".into());
        }
        let (mut min, mut max) = (p.min, p.max);
        if min == [0.0; 3] && max == [0.0; 3] {
            let (mut lo, mut hi) = ([f64::MAX; 3], [f64::MIN; 3]);
            for w in surfaces {
                let (a, b) = bounding_box(&w.surface.vertices);
                for c in 0..3 {
                    lo[c] = lo[c].min(a[c]);
                    hi[c] = hi[c].max(b[c]);
                }
            }
            let diff = [(hi[0] - lo[0]) / 100.0, (hi[1] - lo[1]) / 100.0, (hi[2] - lo[2]) / 100.0];
            min = [lo[0] - diff[0], lo[1] - diff[1], lo[2] - diff[2]];
            max = [hi[0] + diff[0], hi[1] + diff[1], hi[2] + diff[2]];
        }
        let n = p.n;
        if n.iter().any(|&a| a < 2) {
            return Err(format!("grid resolution {n:?} has an axis with fewer than 2 points"));
        }
        let cells = n.iter().map(|&a| a as u128 - 1).product::<u128>();
        settee_core::budget::check_msg(
            cells,
            256 * surfaces.len() as u128,
            &format!("SparseGridMultipleTopology grid of {} × {} × {} points", n[0], n[1], n[2]),
        )?;
        let regular = RegularGridGeometry::from_bounds(n, min, max, None);
        let count = hexahedron_count(n);
        let (mut types, mut stiff, mut mass) = (vec![CellType::Outside; count], vec![0f32; count], vec![0f32; count]);
        for w in surfaces {
            let own = voxelize(&regular, min, max, &w.surface)?;
            for (c, t) in own.into_iter().enumerate() {
                if t == CellType::Inside || (t == CellType::Boundary && !p.fill_weighted) {
                    types[c] = CellType::Inside;
                    stiff[c] = w.stiffness;
                    mass[c] = w.mass;
                } else if t == CellType::Boundary {
                    if types[c] != CellType::Inside {
                        types[c] = CellType::Boundary;
                    }
                    stiff[c] = if erase_previous { w.stiffness } else { (stiff[c] + w.stiffness) * 0.5 };
                    mass[c] = if erase_previous { w.mass } else { (mass[c] + w.mass) * 0.5 };
                }
            }
        }
        let mut chosen: Vec<(usize, CellType)> = Vec::new();
        if !p.only_inside_cells {
            chosen.extend(types.iter().enumerate().filter(|(_, t)| **t == CellType::Boundary).map(|(i, t)| (i, *t)));
        }
        chosen.extend(types.iter().enumerate().filter(|(_, t)| **t == CellType::Inside).map(|(i, t)| (i, *t)));
        let mut g = assemble(n, min, max, regular, &chosen, vec![1.0; chosen.len()]);
        g.stiffness_coefs = g.sparse_to_regular.iter().map(|&r| stiff[r]).collect();
        g.mass_coefs = g.sparse_to_regular.iter().map(|&r| mass[r]).collect();
        Ok(g)
    }

    /// The next coarser grid (SOFA's `buildFromFiner`).
    pub fn coarsen(&self) -> SparseGrid {
        let nf = self.n;
        let min = self.min;
        let (n, max, regular) = coarser_geometry(nf, min, &self.regular);
        let mut cells = Vec::new();
        let mut coefs = Vec::new();
        let mut mass = Vec::new();
        for i in 0..n[0] - 1 {
            for j in 0..n[1] - 1 {
                for k in 0..n[2] - 1 {
                    let children = finer_children(nf, &self.regular_to_sparse, i, j, k);
                    let Some(t) = coarse_type(children, |c| self.types[c]) else { continue };
                    cells.push((cell_index(n, i, j, k), t));
                    let (mut s, mut m) = (0.0f32, 0.0f32);
                    for c in children.into_iter().flatten() {
                        s += self.stiffness_coefs[c];
                        m += self.mass_coefs[c];
                    }
                    coefs.push((s as f64 / 8.0) as f32);
                    mass.push((m as f64 / 8.0) as f32);
                }
            }
        }
        let mut g = assemble(n, min, max, regular, &cells, coefs);
        g.mass_coefs = mass;
        g
    }

    /// The kept cell containing `pos` and the coordinates of `pos` in it (SOFA's `findCube`).
    pub fn find_cube(&self, pos: Vec3) -> Option<(usize, Vec3)> {
        let (r, f) = self.regular.find_cube(pos)?;
        self.regular_to_sparse[r].map(|s| (s, f))
    }

    /// The BOUNDARY cell whose centre is nearest to `pos` (single-precision distances, first
    /// minimum in cell order; cell 0 if there is none) and the coordinates of `pos` relative to
    /// it (SOFA's `findNearestCube`).
    pub fn find_nearest_cube(&self, pos: Vec3) -> Option<(usize, Vec3)> {
        if self.hexahedra.is_empty() {
            return None;
        }
        let mut best = 0;
        let mut lgmin = 99_999_999.0f32;
        for (w, h) in self.hexahedra.iter().enumerate() {
            if self.types[w] != CellType::Boundary {
                continue;
            }
            let (p0, p7) = (self.points[h[0]], self.points[h[6]]);
            let c = [(p0[0] + p7[0]) * 0.5, (p0[1] + p7[1]) * 0.5, (p0[2] + p7[2]) * 0.5];
            let d = sub(pos, c);
            let lg = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() as f32;
            if lg < lgmin {
                lgmin = lg;
                best = w;
            }
        }
        let h = self.hexahedra[best];
        let (p0, p7) = (self.points[h[0]], self.points[h[6]]);
        let (r, d) = (sub(pos, p0), sub(p7, p0));
        Some((best, [r[0] / d[0], r[1] / d[1], r[2] / d[2]]))
    }
}

/// How a sparse grid locates a point for `BarycentricMapping`'s SparseGrid mapper (SOFA's
/// `findCube`, then `findNearestCube`), in a form another crate can read from the topology's
/// [`LOCATOR_DATA`] Data (see [`CellLocator::to_reals`]).
///
/// * **find**: the cell of `lookup` containing the point (floor of the grid coordinates, each in
///   `0..=n-2`), mapped to a hexahedron by `cells` (`None`: not found). The coordinates in the
///   hexahedron are the point's fractional grid coordinates in `fractions` if given and the
///   point lies in that grid, else in `lookup`.
/// * **nearest**: among `nearest` (corner 0, corner 6, hexahedron) the first whose centre
///   `(c0 + c6)/2` is strictly nearest in single precision (from 99999999), else `fallback`
///   (the first hexahedron; `None` for an empty grid, where nothing can be located);
///   the coordinates are `(p - c0)/(c6 - c0)`, or with `fractions` the clamped cell
///   coordinates in that grid.
#[derive(Clone, Debug, PartialEq)]
pub struct CellLocator {
    pub lookup: RegularGridGeometry,
    pub cells: Vec<Option<usize>>,
    pub fractions: Option<RegularGridGeometry>,
    pub nearest: Vec<(Vec3, Vec3, usize)>,
    pub fallback: Option<(Vec3, Vec3, usize)>,
}

/// Name of the (Settee-only, output) Data holding a sparse grid's [`CellLocator`].
pub const LOCATOR_DATA: &str = "cellLocator";

/// Names of the (Settee-only, output) Data holding the per-hexahedron stiffness and mass
/// coefficients (single-precision values widened), for the hexahedral FEM.
pub const COEF_DATA: [&str; 2] = ["stiffnessCoefs", "massCoefs"];

impl CellLocator {
    /// Flat encoding: `1` (format), `0`/`1` (fractions grid absent/present), the lookup grid
    /// (`n`, `p0`, `d`: 9 reals), the fractions grid (9 reals, zeros if absent), the number of
    /// lookup cells and for each the hexahedron or `-1`, `0`/`1` fallbacks and the fallback as
    /// (`c0`, `c6`, hexahedron), the number of nearest candidates and each as (`c0`, `c6`,
    /// hexahedron).
    pub fn to_reals(&self) -> Vec<f64> {
        let grid = |g: &RegularGridGeometry, out: &mut Vec<f64>| {
            out.extend(g.n.iter().map(|&a| a as f64));
            out.extend_from_slice(&g.p0);
            out.extend_from_slice(&g.d);
        };
        let mut v = vec![1.0, if self.fractions.is_some() { 1.0 } else { 0.0 }];
        grid(&self.lookup, &mut v);
        match &self.fractions {
            Some(g) => grid(g, &mut v),
            None => v.extend([0.0; 9]),
        }
        v.push(self.cells.len() as f64);
        v.extend(self.cells.iter().map(|c| c.map_or(-1.0, |h| h as f64)));
        let triple = |t: &(Vec3, Vec3, usize), out: &mut Vec<f64>| {
            out.extend_from_slice(&t.0);
            out.extend_from_slice(&t.1);
            out.push(t.2 as f64);
        };
        v.push(if self.fallback.is_some() { 1.0 } else { 0.0 });
        if let Some(f) = &self.fallback {
            triple(f, &mut v);
        }
        v.push(self.nearest.len() as f64);
        for t in &self.nearest {
            triple(t, &mut v);
        }
        v
    }
}

impl SparseGrid {
    /// The locator of this grid: its own regular grid and cells, its BOUNDARY cells as nearest
    /// candidates.
    pub fn locator(&self) -> CellLocator {
        let corners = |h: usize| (self.points[self.hexahedra[h][0]], self.points[self.hexahedra[h][6]], h);
        CellLocator {
            lookup: self.regular,
            cells: self.regular_to_sparse.clone(),
            fractions: None,
            nearest: (0..self.hexahedra.len()).filter(|&h| self.types[h] == CellType::Boundary).map(corners).collect(),
            fallback: (!self.hexahedra.is_empty()).then(|| corners(0)),
        }
    }
}

/// The next coarser regular grid over the same corner `min` (SOFA's `buildFromFiner`): `n/2 + 1`
/// points per axis for `nf` finer ones, cells twice as wide as the finer `regular` ones. Returns
/// the points per axis, the max corner and the geometry.
pub(crate) fn coarser_geometry(nf: [usize; 3], min: Vec3, finer: &RegularGridGeometry) -> ([usize; 3], Vec3, RegularGridGeometry) {
    let n = [nf[0] / 2 + 1, nf[1] / 2 + 1, nf[2] / 2 + 1];
    let max = [0, 1, 2].map(|a| min[a] + ((n[a] - 1) as f64 * 2.0) * finer.d[a]);
    let regular = RegularGridGeometry::from_bounds(n, min, max, None);
    (n, max, regular)
}

/// The 8 finer cells of coarse cell `(i, j, k)` (child `idx` at `(2i + idx&1, 2j + (idx&2)/2,
/// 2k + (idx&4)/4)`), as `cell_of` (indexed by finer regular cell) gives them; `None` beyond
/// the finer grid.
pub(crate) fn finer_children(nf: [usize; 3], cell_of: &[Option<usize>], i: usize, j: usize, k: usize) -> [Option<usize>; 8] {
    std::array::from_fn(|idx| {
        let (cx, cy, cz) = (2 * i + (idx & 1), 2 * j + (idx & 2) / 2, 2 * k + (idx & 4) / 4);
        if cx < nf[0] - 1 && cy < nf[1] - 1 && cz < nf[2] - 1 {
            cell_of[cell_index(nf, cx, cy, cz)]
        } else {
            None
        }
    })
}

/// The type of a coarse cell from its children's (`type_of` a present child): `None` (the cell
/// is not kept) when every child is absent or OUTSIDE, INSIDE when all 8 are INSIDE, else
/// BOUNDARY.
pub(crate) fn coarse_type(children: [Option<usize>; 8], type_of: impl Fn(usize) -> CellType) -> Option<CellType> {
    let (mut inside, mut outside) = (true, true);
    for c in children {
        match c {
            None => inside = false,
            Some(c) => match type_of(c) {
                CellType::Boundary => {
                    inside = false;
                    outside = false;
                }
                CellType::Inside => outside = false,
                CellType::Outside => {}
            },
        }
        if !inside && !outside {
            break;
        }
    }
    if outside {
        None
    } else if inside {
        Some(CellType::Inside)
    } else {
        Some(CellType::Boundary)
    }
}

/// Hexahedra and sorted points of the given cells.
fn assemble(n: [usize; 3], min: Vec3, max: Vec3, regular: RegularGridGeometry, cells: &[(usize, CellType)], coefs: Vec<f32>) -> SparseGrid {
    let corners: Vec<[Vec3; 8]> = cells
        .iter()
        .map(|(r, _)| {
            let [x, y, z] = cell_coords(n, *r);
            hexahedron(n, x, y, z).map(|p| regular.point_at(p))
        })
        .collect();
    let mut map: BTreeMap<Key, usize> = BTreeMap::new();
    for c in &corners {
        for p in c {
            map.entry(Key(*p)).or_insert(0);
        }
    }
    let mut points = Vec::with_capacity(map.len());
    for (i, (k, v)) in map.iter_mut().enumerate() {
        *v = i;
        points.push(k.0);
    }
    let hexahedra = corners.iter().map(|c| c.map(|p| map[&Key(p)])).collect();
    let mut regular_to_sparse = vec![None; hexahedron_count(n)];
    for (s, (r, _)) in cells.iter().enumerate() {
        regular_to_sparse[*r] = Some(s);
    }
    SparseGrid {
        n,
        min,
        max,
        regular,
        points,
        hexahedra,
        types: cells.iter().map(|(_, t)| *t).collect(),
        mass_coefs: coefs.clone(),
        stiffness_coefs: coefs,
        regular_to_sparse,
        sparse_to_regular: cells.iter().map(|(r, _)| *r).collect(),
    }
}

/// Cell types of the regular grid for a surface (step 2 of the module documentation).
fn voxelize(g: &RegularGridGeometry, gmin: Vec3, gmax: Vec3, s: &Surface) -> Result<Vec<CellType>, String> {
    let n = g.n;
    let mut types = vec![CellType::Inside; hexahedron_count(n)];
    let delta = [g.d[0] / 2.0, g.d[1] / 2.0, g.d[2] / 2.0];
    let eps = f32::EPSILON as f64;

    // The cell of each vertex; a vertex found outside the grid is moved half a cell inwards
    // (its cell is then used for the facet bounding boxes, not marked).
    let mut vertex_cell = Vec::with_capacity(s.vertices.len());
    for (i, v) in s.vertices.iter().enumerate() {
        if let Some((c, _)) = g.find_cube(*v) {
            types[c] = CellType::Boundary;
            vertex_cell.push(c);
            continue;
        }
        let mut v2 = *v;
        for a in 0..3 {
            if v2[a] - eps < gmin[a] {
                v2[a] = gmin[a] + delta[a];
            } else if v2[a] + eps > gmax[a] {
                v2[a] = gmax[a] - delta[a];
            }
        }
        match g.find_cube(v2) {
            Some((c, _)) => vertex_cell.push(c),
            None => return Err(format!("vertex {i} of the surface is not in the grid (check min/max)")),
        }
    }

    for (fi, facet) in s.facets.iter().enumerate() {
        if let Some(bad) = facet.iter().find(|&&v| v >= s.vertices.len()) {
            return Err(format!("facet {fi} refers to vertex {bad} but the surface has {} vertices", s.vertices.len()));
        }
        for j in 2..facet.len() {
            let (a, b, c) = (facet[0], facet[j - 1], facet[j]);
            let (c0, c1, c2) = (vertex_cell[a], vertex_cell[b], vertex_cell[c]);
            if c0 == c1 && c0 == c2 && types[c0] == CellType::Boundary {
                continue;
            }
            let (i0, i1, i2) = (cell_coords(n, c0), cell_coords(n, c1), cell_coords(n, c2));
            let lo = [0, 1, 2].map(|k| i0[k].min(i1[k]).min(i2[k]));
            let hi = [0, 1, 2].map(|k| i0[k].max(i1[k]).max(i2[k]));
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    for z in lo[2]..=hi[2] {
                        let index = cell_index(n, x, y, z);
                        if types[index] == CellType::Boundary {
                            continue;
                        }
                        let h = hexahedron(n, x, y, z);
                        let c0p = g.point_at(h[0]);
                        let diag = sub(g.point_at(h[6]), c0p);
                        let center = [c0p[0] + diag[0] * 0.5, c0p[1] + diag[1] * 0.5, c0p[2] + diag[2] * 0.5];
                        let tri = [a, b, c].map(|v| {
                            let p = s.vertices[v];
                            [0, 1, 2].map(|w| ((p[w] - center[w]) / diag[w]) as f32)
                        });
                        if polygon_intersects_unit_cube(&tri, &polygon_normal(&tri)) {
                            types[index] = CellType::Boundary;
                        }
                    }
                }
            }
        }
    }

    // Flood fill from the border cells through non-boundary cells: OUTSIDE.
    let c = [n[0] - 1, n[1] - 1, n[2] - 1];
    let mut tested = vec![false; types.len()];
    let mut stack: Vec<[usize; 3]> = Vec::new();
    for z in 0..c[2] {
        for y in 0..c[1] {
            for x in 0..c[0] {
                if x == 0 || y == 0 || z == 0 || x == c[0] - 1 || y == c[1] - 1 || z == c[2] - 1 {
                    stack.push([x, y, z]);
                }
            }
        }
    }
    while let Some([x, y, z]) = stack.pop() {
        let i = cell_index(n, x, y, z);
        if tested[i] || types[i] == CellType::Boundary {
            continue;
        }
        tested[i] = true;
        types[i] = CellType::Outside;
        if x > 0 {
            stack.push([x - 1, y, z]);
        }
        if x + 1 < c[0] {
            stack.push([x + 1, y, z]);
        }
        if y > 0 {
            stack.push([x, y - 1, z]);
        }
        if y + 1 < c[1] {
            stack.push([x, y + 1, z]);
        }
        if z > 0 {
            stack.push([x, y, z - 1]);
        }
        if z + 1 < c[2] {
            stack.push([x, y, z + 1]);
        }
    }
    Ok(types)
}

/// The surface a sparse grid voxelises: the OBJ file of `filename`, else the `position` +
/// `triangles`/`quads` Data.
pub(crate) fn read_surface(cx: &InitCtx) -> SimResult<Surface> {
    let d = cx.data();
    if !d.get(SparseGridData::FACETS).trim().is_empty() {
        return Err(SimError::unsupported(format!("{}: the `facets` input is not supported", cx.label()))
            .hint("give the surface as a file, or as position + triangles/quads"));
    }
    let file = d.get(SparseGridData::FILENAME).trim().to_string();
    if !file.is_empty() {
        let lower = file.to_lowercase();
        if lower.ends_with(".raw") || lower.ends_with(".voxel") {
            return Err(SimError::unsupported(format!("{}: voxel files ('{file}') are not supported", cx.label())).hint("use a surface mesh (.obj)"));
        }
        if !lower.ends_with(".obj") {
            return Err(SimError::unsupported(format!("{}: reading '{file}' is not supported (only .obj surfaces)", cx.label()))
                .hint("convert the surface to OBJ"));
        }
        let path = cx.resolve_file(&file)?;
        return read_obj_surface(&path).map_err(|e| cx.error(e));
    }
    let vertices = points_from_flat(d.get(MeshTopologyData::POSITION), 3);
    if vertices.is_empty() {
        return Err(cx.error("no surface: neither a file nor vertices are given").hint("set fileTopology=\"mesh/….obj\""));
    }
    let mut facets: Vec<Vec<usize>> = group::<3>(d.get(MeshTopologyData::TRIANGLES)).iter().map(|t| t.to_vec()).collect();
    facets.extend(group::<4>(d.get(MeshTopologyData::QUADS)).iter().map(|q| q.to_vec()));
    Ok(Surface { vertices, facets })
}

/// The grid parameters of the Data (`n` clamped to at least 2 per axis, as SOFA's `init` does)
/// and `nbVirtualFinerLevels`.
pub(crate) fn finest_params(cx: &InitCtx) -> (FinestParams, u32) {
    let d = cx.data();
    let nr = d.get(SparseGridData::N);
    let n = [0, 1, 2].map(|a| (nr.get(a).copied().unwrap_or(2.0) as i64).max(2) as usize);
    let levels = d.get(SparseGridData::NB_VIRTUAL_FINER_LEVELS).max(0) as u32;
    let params = FinestParams {
        n,
        min: d.get(SparseGridData::MIN),
        max: d.get(SparseGridData::MAX),
        cell_width: d.get(SparseGridData::CELL_WIDTH),
        fill_weighted: d.get(SparseGridData::FILL_WEIGHTED),
        only_inside_cells: d.get(SparseGridData::ONLY_INSIDE_CELLS),
    };
    (params, levels)
}

/// The parameters of the virtual finest level: `(n-1)·2^levels + 1` points per axis, the same
/// `min`, `max` and `fillWeighted`, the other Data at their defaults (SOFA copies only those).
pub(crate) fn virtual_finest_params(cx: &InitCtx, p: &FinestParams, levels: u32) -> SimResult<FinestParams> {
    let scale = 1usize.checked_shl(levels).filter(|s| p.n.iter().all(|&a| (a - 1).checked_mul(*s).is_some_and(|v| v < 1 << 12)));
    let Some(scale) = scale else {
        return Err(cx.error(format!("nbVirtualFinerLevels = {levels} makes the finest grid too large")));
    };
    Ok(FinestParams { n: p.n.map(|a| (a - 1) * scale + 1), cell_width: 0.0, only_inside_cells: false, ..*p })
}

/// The Data of SOFA's `SparseGridTopology` (also the base of `SparseGridRamificationTopology`),
/// after the mesh topology's.
#[settee_core::data_group(data = {
    /// surface mesh (.obj) to voxelise
    #[alias("fileTopology")]
    filename: FileName,
    /// weight the cells by their filling: 0.5 for boundary cells, 1 for inside cells
    fillWeighted: Bool = "true",
    /// keep only the inside cells (drop the boundary cells)
    onlyInsideCells: Bool = "false",
    /// grid resolution: points per axis (at least 2)
    n: Fixed(3) as Reals = "2 2 2",
    /// min corner of the grid (with max: both zero → the surface's bounding box + 1%)
    min: Fixed(3) = "0 0 0",
    /// max corner of the grid
    max: Fixed(3) = "0 0 0",
    /// if > 0: cell size; the resolution becomes ceil((max-min)/cellWidth)+1
    cellWidth: Real = "0",
    /// build the grid by coarsening finer virtual grids (better filling coefficients)
    nbVirtualFinerLevels: Int = "0",
    /// voxel input: dimension of the voxel file (not supported)
    dataResolution: Fixed(3) = "0 0 0",
    /// voxel input: size of one voxel (not supported)
    voxelSize: Fixed(3) = "1 1 1",
    /// voxel input: marching-cubes step (not supported)
    marchingCubeStep: Int = "1",
    /// voxel input: smoothing kernel size (not supported)
    convolutionSize: Int = "0",
    /// input surface facets (not supported: use a file or position + triangles/quads)
    facets: Str,
    /// (output, Settee only) stiffness coefficient of each hexahedron (SOFA's getStiffnessCoef)
    stiffnessCoefs: Reals,
    /// (output, Settee only) mass coefficient of each hexahedron (SOFA's getMassCoef)
    massCoefs: Reals,
    /// (output, Settee only) cell lookup tables of the built grid, read by BarycentricMapping's SparseGrid mapper
    cellLocator: Reals,
})]
pub struct SparseGridData;

/// Hexahedra of the regular-grid cells that contain matter of a closed surface mesh.
///
/// The SparseGridTopology component.
#[component(
    module = "Sofa.Component.Topology.Container.Grid",
    roles = [Topology],
    inherit = [MeshTopologyData, SparseGridData],
    create = |_| SparseGridTopology { mesh: MeshData::default(), grid: None },
)]
#[derive(Clone)]
pub struct SparseGridTopology {
    mesh: MeshData,
    grid: Option<SparseGrid>,
}

impl SparseGridTopology {
    /// The built grid (cell types, coefficients, cell lookups), once initialised.
    pub fn grid(&self) -> Option<&SparseGrid> {
        self.grid.as_ref()
    }
}

/// A built level as the sparse-grid components publish it: the top level of a
/// [`RamifiedGrid`](crate::sparse_grid_ramification::RamifiedGrid) or a [`SparseGrid`].
pub(crate) struct PublishedLevel<'a> {
    pub n: [usize; 3],
    pub min: Vec3,
    pub max: Vec3,
    pub points: &'a [Vec3],
    pub hexahedra: &'a [[usize; 8]],
    pub stiffness_coefs: &'a [f32],
    pub mass_coefs: &'a [f32],
}

/// The [`PublishedLevel`] of a grid level (any value with the fields of a [`SparseGrid`]).
macro_rules! published_level {
    ($g:expr) => {
        $crate::sparse_grid::PublishedLevel {
            n: $g.n,
            min: $g.min,
            max: $g.max,
            points: &$g.points,
            hexahedra: &$g.hexahedra,
            stiffness_coefs: &$g.stiffness_coefs,
            mass_coefs: &$g.mass_coefs,
        }
    };
}
pub(crate) use published_level;

/// Writes a built level into the sparse grid's output Data (with the cell lookup tables of
/// `locator`) and returns the component's mesh: the level's points and hexahedra.
pub(crate) fn publish_level(cx: &mut InitCtx, level: PublishedLevel, locator: CellLocator) -> MeshData {
    let mesh = MeshData { points: level.points.to_vec(), hexahedra: level.hexahedra.to_vec(), ..Default::default() };
    let d = cx.data_mut();
    type S = SparseGridData;
    d.put(S::N, level.n.iter().map(|&a| a as f64).collect());
    d.put(S::MIN, level.min);
    d.put(S::MAX, level.max);
    d.put(MeshTopologyData::POSITION, level.points.iter().flatten().copied().collect());
    d.put(MeshTopologyData::HEXAHEDRA, level.hexahedra.iter().flatten().copied().collect());
    d.put(S::STIFFNESS_COEFS, level.stiffness_coefs.iter().map(|&c| c as f64).collect());
    d.put(S::MASS_COEFS, level.mass_coefs.iter().map(|&c| c as f64).collect());
    d.put(S::CELL_LOCATOR, locator.to_reals());
    mesh
}

/// A component built from a surface voxelised into a grid (both sparse grids).
pub(crate) trait BuildsGrid {
    type Grid;
    /// Builds the grid from the Data and the surface.
    fn build(&self, cx: &InitCtx) -> SimResult<Self::Grid>;
    /// Keeps the grid and writes its outputs.
    fn publish(&mut self, cx: &mut InitCtx, grid: Self::Grid);
}

/// `Component` and `Topology` of a sparse-grid component (a [`BuildsGrid`] with `mesh` and
/// `grid: Option<_>` fields); the topology is the published mesh.
macro_rules! grid_component {
    ($t:ty) => {
        impl settee_core::Component for $t {
            /// SOFA builds the grid at its first use (`getNbPoints` calls `init`), so a mechanical
            /// state declared before it already sees the points: build now when the inputs allow it.
            fn parsed(&mut self, cx: &mut settee_core::InitCtx) -> settee_core::SimResult {
                if let Ok(g) = $crate::sparse_grid::BuildsGrid::build(self, cx) {
                    $crate::sparse_grid::BuildsGrid::publish(self, cx, g);
                }
                Ok(())
            }

            fn init(&mut self, cx: &mut settee_core::InitCtx) -> settee_core::SimResult {
                if self.grid.is_none() {
                    let g = $crate::sparse_grid::BuildsGrid::build(self, cx)?;
                    $crate::sparse_grid::BuildsGrid::publish(self, cx, g);
                }
                Ok(())
            }
        }

        impl settee_core::role::Topology for $t {
            fn mesh(&self) -> &settee_core::MeshData {
                &self.mesh
            }
        }
    };
}
pub(crate) use grid_component;

impl BuildsGrid for SparseGridTopology {
    type Grid = SparseGrid;

    fn build(&self, cx: &InitCtx) -> SimResult<SparseGrid> {
        let surface = read_surface(cx)?;
        let (params, levels) = finest_params(cx);
        let mut grid = if levels == 0 {
            SparseGrid::from_surface(&params, &surface).map_err(|e| cx.error(e))?
        } else {
            let fine = virtual_finest_params(cx, &params, levels)?;
            SparseGrid::from_surface(&fine, &surface).map_err(|e| cx.error(e))?
        };
        for _ in 0..levels {
            grid = grid.coarsen();
        }
        if grid.hexahedra.is_empty() {
            return Err(cx.error("the sparse grid has no cell").hint("check the surface, min/max and n"));
        }
        Ok(grid)
    }

    fn publish(&mut self, cx: &mut InitCtx, grid: SparseGrid) {
        self.mesh = publish_level(cx, published_level!(grid), grid.locator());
        self.grid = Some(grid);
    }
}

grid_component!(SparseGridTopology);

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed cube surface of side 2 centred at the origin (12 triangles).
    fn cube() -> Surface {
        let mut s = Surface::default();
        s.add_box([-1.0; 3], [1.0; 3]);
        s
    }

    /// The names other crates read the outputs by are Data of the declaration.
    #[test]
    fn output_names_are_declared() {
        assert_eq!(COEF_DATA, [SparseGridData::STIFFNESS_COEFS.name(), SparseGridData::MASS_COEFS.name()]);
        assert_eq!(LOCATOR_DATA, SparseGridData::CELL_LOCATOR.name());
    }

    #[test]
    fn cube_surface_in_a_5x5x5_grid() {
        let p = FinestParams { n: [5, 5, 5], min: [-2.0; 3], max: [2.0; 3], cell_width: 0.0, fill_weighted: true, only_inside_cells: false };
        let g = SparseGrid::from_surface(&p, &cube()).unwrap();
        // cells of side 1: the surface runs along cell faces at ±1; the 8 vertices mark the cells
        // above their corner (floor), and the faces touch the cells on both sides
        let boundary = g.types.iter().filter(|t| **t == CellType::Boundary).count();
        let inside = g.types.iter().filter(|t| **t == CellType::Inside).count();
        assert_eq!(boundary + inside, g.hexahedra.len());
        // the faces at +1 are only tested against the cells of their vertices (floor → index 3),
        // so the inner cell (2,2,2) just below them is not marked and stays INSIDE, as in SOFA
        assert_eq!(inside, 1);
        assert_eq!(g.sparse_to_regular[g.types.len() - 1], cell_index([5, 5, 5], 2, 2, 2));
        // boundary cells come first, points sorted lexicographically
        assert!(g.points.windows(2).all(|w| Key(w[0]) < Key(w[1])));
        let n = g.types.len();
        assert!(g.stiffness_coefs[..n - 1].iter().all(|&c| c == 0.5));
        assert_eq!(g.stiffness_coefs[n - 1], 1.0);
        // the 8 inner cells (−1..1) are all boundary
        for z in 1..3 {
            for y in 1..3 {
                for x in 1..3 {
                    assert!(g.regular_to_sparse[cell_index([5, 5, 5], x, y, z)].is_some());
                }
            }
        }
        let (c, f) = g.find_cube([0.5, 0.5, 0.5]).unwrap();
        assert_eq!(g.sparse_to_regular[c], cell_index([5, 5, 5], 2, 2, 2));
        assert_eq!(f, [0.5, 0.5, 0.5]);
    }

    #[test]
    fn inside_cells_and_coarsening() {
        // a cube of side 2 in a grid of cell size 0.4 (−2 .. 2, 11 points): inner cells exist
        let p = FinestParams { n: [11, 11, 11], min: [-2.0; 3], max: [2.0; 3], cell_width: 0.0, fill_weighted: true, only_inside_cells: false };
        let g = SparseGrid::from_surface(&p, &cube()).unwrap();
        let first_inside = g.types.iter().position(|t| *t == CellType::Inside).unwrap();
        assert!(g.types[..first_inside].iter().all(|t| *t == CellType::Boundary));
        assert!(g.types[first_inside..].iter().all(|t| *t == CellType::Inside));
        // −1 and 1 fall on no grid plane (multiples of 0.4 from −2 are −0.4·k): the surface
        // crosses cells 2 and 7 along each axis; cells 3..=6 are inside
        assert_eq!(g.types.len() - first_inside, 4 * 4 * 4);
        assert_eq!(first_inside, 6 * 6 * 6 - 4 * 4 * 4);
        let c = g.coarsen();
        assert_eq!(c.n, [6, 6, 6]);
        assert_eq!(c.max, [-2.0 + 5.0 * 2.0 * 0.4; 3]);
        // coefficients: sum of the children / 8
        for (i, t) in c.types.iter().enumerate() {
            let r = c.sparse_to_regular[i];
            let [x, y, z] = cell_coords(c.n, r);
            let mut sum = 0.0f32;
            let mut all_inside = true;
            for idx in 0..8 {
                let (cx, cy, cz) = (2 * x + (idx & 1), 2 * y + (idx & 2) / 2, 2 * z + (idx & 4) / 4);
                let child = if cx < 10 && cy < 10 && cz < 10 { g.regular_to_sparse[cell_index(g.n, cx, cy, cz)] } else { None };
                match child {
                    Some(k) => {
                        sum += g.stiffness_coefs[k];
                        all_inside &= g.types[k] == CellType::Inside;
                    }
                    None => all_inside = false,
                }
            }
            assert_eq!(c.stiffness_coefs[i], sum / 8.0);
            assert_eq!(*t == CellType::Inside, all_inside);
        }
        // coarse cells in x-major order (z fastest)
        let order: Vec<usize> = c
            .sparse_to_regular
            .iter()
            .map(|&r| {
                let [x, y, z] = cell_coords(c.n, r);
                (x * 5 + y) * 5 + z
            })
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]));
    }

    /// SparseGridMultipleTopology's assembly on unit cells of [0, 4]³: box A = [0.5, 3.5]³
    /// (stiffness 10, mass 2) makes the 56 outer cells BOUNDARY and the 8 central ones INSIDE;
    /// box B = [1.5, 2.5]³ (stiffness 100, mass 4) crosses the 8 central cells. Blending: outer
    /// cells (0 + 10)/2 (SOFA starts from 0), central (10 + 100)/2, which stay INSIDE; with
    /// `erase_previous`, 10 and 100.
    #[test]
    fn several_surfaces_blend_their_coefficients() {
        let boxed = |lo: f64, hi: f64, stiffness: f32, mass: f32| {
            let mut surface = Surface::default();
            surface.add_box([lo; 3], [hi; 3]);
            WeightedSurface { surface, stiffness, mass }
        };
        let surfaces = [boxed(0.5, 3.5, 10.0, 2.0), boxed(1.5, 2.5, 100.0, 4.0)];
        let p = FinestParams { n: [5; 3], min: [0.0; 3], max: [4.0; 3], cell_width: 0.0, fill_weighted: true, only_inside_cells: false };
        let g = SparseGrid::from_surfaces(&p, &surfaces, false).unwrap();
        assert_eq!(g.hexahedra.len(), 64);
        let central = |r: usize| {
            let (x, y, z) = (r % 4, (r / 4) % 4, r / 16);
            [x, y, z].iter().all(|c| (1..=2).contains(c))
        };
        for (h, &r) in g.sparse_to_regular.iter().enumerate() {
            let (stiff, mass, ty) = if central(r) { (55.0, 3.0, CellType::Inside) } else { (5.0, 1.0, CellType::Boundary) };
            assert_eq!((g.stiffness_coefs[h], g.mass_coefs[h], g.types[h]), (stiff, mass, ty), "cell {r}");
        }
        let e = SparseGrid::from_surfaces(&p, &surfaces, true).unwrap();
        for (h, &r) in e.sparse_to_regular.iter().enumerate() {
            assert_eq!(e.stiffness_coefs[h], if central(r) { 100.0 } else { 10.0 });
        }
        // Without min/max the grid spans all surfaces, 1% wider: A's box.
        let auto = SparseGrid::from_surfaces(&FinestParams { min: [0.0; 3], max: [0.0; 3], ..p }, &surfaces, false).unwrap();
        assert_eq!((auto.min[0], auto.max[0]), (0.5 - 0.03, 3.5 + 0.03));
    }
}
