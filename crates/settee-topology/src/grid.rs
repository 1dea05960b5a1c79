//! Regular-grid math with SOFA's exact numbering (`GridTopology` / `RegularGridTopology`).
//!
//! Everything here is a pure function of the grid resolution `n` (number of **points** per
//! axis) and, for the geometry, of the bounding box / origin. The orderings reproduce the
//! ones SOFA produces, because every downstream component (force fields, masses, mappings,
//! the recorded reference trajectories) depends on them:
//!
//! * point `(x, y, z)` has index `x + nx·(y + ny·z)` (x fastest);
//! * cell `(x, y, z)` has index `x + (nx-1)·(y + (ny-1)·z)`, and its 8 corners are listed in
//!   the SOFA hexahedron order (bottom face counter-clockwise, then top face):
//!   `p(x,y,z), p(x+1,y,z), p(x+1,y+1,z), p(x,y+1,z)` followed by the same four with `z+1`;
//! * quads: all XY faces (`z` over every layer), then XZ faces, then YZ faces;
//! * triangles: each quad `q` split as `(q0,q1,q2), (q0,q2,q3)`;
//! * edges: when triangles exist, extracted from them (first appearance wins, original
//!   orientation kept, so every grid face contributes one diagonal `(q2,q0)`); otherwise the
//!   axis-aligned lines (x-lines, then y-lines, then z-lines).
//!
//! Degenerate resolutions fall out of the loop bounds: an axis with a single point
//! produces no hexahedra, a 2-D grid only has the quads of its plane (and their triangles and
//! edges), a 1-D grid only has axis lines.
//!
//! Geometry ([`RegularGridGeometry`]) follows SOFA's component life cycle, including two
//! quirks (both documented on [`RegularGridGeometry::from_params`]): the spacing is computed
//! when the scene is parsed, and the origin `p0` is frozen at that moment.

use std::collections::HashSet;

/// A position in space.
pub type Vec3 = [f64; 3];

/// Index of point `(x, y, z)` in a grid with `n` points per axis: `x + nx·(y + ny·z)`.
#[inline]
pub fn point_index(n: [usize; 3], x: usize, y: usize, z: usize) -> usize {
    n[0] * (n[1] * z + y) + x
}

/// Inverse of [`point_index`]: grid coordinates `(x, y, z)` of point `i`.
#[inline]
pub fn point_coords(n: [usize; 3], i: usize) -> [usize; 3] {
    let x = i % n[0];
    let r = i / n[0];
    let y = r % n[1];
    let z = r / n[1];
    [x, y, z]
}

/// Index of the cell (hexahedron) whose lowest corner is point `(x, y, z)`:
/// `x + (nx-1)·(y + (ny-1)·z)`. Only meaningful when every `n[a] >= 2`.
#[inline]
pub fn cell_index(n: [usize; 3], x: usize, y: usize, z: usize) -> usize {
    (n[0] - 1) * ((n[1] - 1) * z + y) + x
}

/// Inverse of [`cell_index`]. Only meaningful when every `n[a] >= 2`.
#[inline]
pub fn cell_coords(n: [usize; 3], i: usize) -> [usize; 3] {
    let cx = n[0] - 1;
    let cy = n[1] - 1;
    [i % cx, (i / cx) % cy, i / (cx * cy)]
}

/// Number of points `nx·ny·nz`.
#[inline]
pub fn point_count(n: [usize; 3]) -> usize {
    n[0] * n[1] * n[2]
}

/// Number of hexahedra `(nx-1)(ny-1)(nz-1)` (0 if any axis has a single point).
#[inline]
pub fn hexahedron_count(n: [usize; 3]) -> usize {
    n[0].saturating_sub(1) * n[1].saturating_sub(1) * n[2].saturating_sub(1)
}

/// The 8 corner point indices of cell `(x, y, z)` in SOFA's hexahedron order.
#[inline]
pub fn hexahedron(n: [usize; 3], x: usize, y: usize, z: usize) -> [usize; 8] {
    let p = |a, b, c| point_index(n, a, b, c);
    [p(x, y, z), p(x + 1, y, z), p(x + 1, y + 1, z), p(x, y + 1, z), p(x, y, z + 1), p(x + 1, y, z + 1), p(x + 1, y + 1, z + 1), p(x, y + 1, z + 1)]
}

/// All hexahedra of the grid, x fastest, then y, then z.
pub fn hexahedra(n: [usize; 3]) -> Vec<[usize; 8]> {
    let mut out = Vec::with_capacity(hexahedron_count(n));
    push_lattice(&mut out, n.map(|a| a.saturating_sub(1)), |x, y, z| hexahedron(n, x, y, z));
    out
}

/// Appends `f(x, y, z)` for every `x < m[0]`, `y < m[1]`, `z < m[2]`: z outermost, x fastest.
fn push_lattice<T>(out: &mut Vec<T>, m: [usize; 3], f: impl Fn(usize, usize, usize) -> T) {
    for z in 0..m[2] {
        for y in 0..m[1] {
            for x in 0..m[0] {
                out.push(f(x, y, z));
            }
        }
    }
}

/// All grid faces as quads: the XY faces of every z layer, then the XZ faces, then the YZ
/// faces (each block looping z, then y, then x with x fastest).
pub fn quads(n: [usize; 3]) -> Vec<[usize; 4]> {
    let [nx, ny, nz] = n;
    let (mx, my, mz) = (nx.saturating_sub(1), ny.saturating_sub(1), nz.saturating_sub(1));
    let p = |a, b, c| point_index(n, a, b, c);
    let mut out = Vec::with_capacity(mx * my * nz + mx * ny * mz + nx * my * mz);
    push_lattice(&mut out, [mx, my, nz], |x, y, z| [p(x, y, z), p(x + 1, y, z), p(x + 1, y + 1, z), p(x, y + 1, z)]);
    push_lattice(&mut out, [mx, ny, mz], |x, y, z| [p(x, y, z), p(x + 1, y, z), p(x + 1, y, z + 1), p(x, y, z + 1)]);
    push_lattice(&mut out, [nx, my, mz], |x, y, z| [p(x, y, z), p(x, y + 1, z), p(x, y + 1, z + 1), p(x, y, z + 1)]);
    out
}

/// Splits every quad `q` into `(q0,q1,q2)` and `(q0,q2,q3)`, in quad order.
pub fn triangles_from_quads(quads: &[[usize; 4]]) -> Vec<[usize; 3]> {
    let mut out = Vec::with_capacity(2 * quads.len());
    for q in quads {
        out.push([q[0], q[1], q[2]]);
        out.push([q[0], q[2], q[3]]);
    }
    out
}

/// Edges extracted from triangles the way SOFA's grid does it: for each triangle `t` and
/// `j = 0, 1, 2`, the edge `(t[j+1], t[j+2])` (indices mod 3) is appended **in that
/// orientation** unless the same unordered pair was already seen.
pub fn edges_from_triangles(triangles: &[[usize; 3]]) -> Vec<[usize; 2]> {
    let mut seen: HashSet<(usize, usize)> = HashSet::with_capacity(triangles.len() * 2);
    let mut out = Vec::with_capacity(triangles.len() * 3 / 2 + 1);
    for t in triangles {
        for j in 0..3 {
            let a = t[(j + 1) % 3];
            let b = t[(j + 2) % 3];
            let key = if a < b { (a, b) } else { (b, a) };
            if seen.insert(key) {
                out.push([a, b]);
            }
        }
    }
    out
}

/// Axis-aligned grid lines: all x-lines, then all y-lines, then all z-lines (each block
/// looping z, then y, then x with x fastest). Used for the edge list when the grid has no
/// triangles (1-D grids, or triangles disabled).
pub fn axis_edges(n: [usize; 3]) -> Vec<[usize; 2]> {
    let [nx, ny, nz] = n;
    let (mx, my, mz) = (nx.saturating_sub(1), ny.saturating_sub(1), nz.saturating_sub(1));
    let p = |a, b, c| point_index(n, a, b, c);
    let mut out = Vec::with_capacity(mx * ny * nz + nx * my * nz + nx * ny * mz);
    push_lattice(&mut out, [mx, ny, nz], |x, y, z| [p(x, y, z), p(x + 1, y, z)]);
    push_lattice(&mut out, [nx, my, nz], |x, y, z| [p(x, y, z), p(x, y + 1, z)]);
    push_lattice(&mut out, [nx, ny, mz], |x, y, z| [p(x, y, z), p(x, y, z + 1)]);
    out
}

/// Which element lists to build (SOFA Data `computeHexaList`, `computeQuadList`,
/// `computeTriangleList`, `computeEdgeList`; all default to `true`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridListFlags {
    pub hexahedra: bool,
    pub quads: bool,
    pub triangles: bool,
    pub edges: bool,
}

impl Default for GridListFlags {
    fn default() -> Self {
        GridListFlags { hexahedra: true, quads: true, triangles: true, edges: true }
    }
}

/// The element lists of a grid topology.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GridLists {
    pub hexahedra: Vec<[usize; 8]>,
    pub quads: Vec<[usize; 4]>,
    pub triangles: Vec<[usize; 3]>,
    pub edges: Vec<[usize; 2]>,
}

/// Builds the element lists in SOFA's order of construction (hexahedra → quads → triangles
/// → edges) honouring the flags:
/// * triangles need quads, so requesting triangles fills the quad list even when
///   `flags.quads` is false (SOFA does the same);
/// * edges come from the triangles when the triangle list is non-empty, otherwise from the
///   axis-aligned grid lines.
pub fn grid_lists(n: [usize; 3], flags: GridListFlags) -> GridLists {
    let mut lists = GridLists::default();
    if flags.hexahedra {
        lists.hexahedra = hexahedra(n);
    }
    if flags.quads {
        lists.quads = quads(n);
    }
    if flags.triangles {
        if lists.quads.is_empty() {
            lists.quads = quads(n);
        }
        lists.triangles = triangles_from_quads(&lists.quads);
    }
    if flags.edges {
        lists.edges = if lists.triangles.is_empty() { axis_edges(n) } else { edges_from_triangles(&lists.triangles) };
    }
    lists
}

/// Sanitises a resolution the way SOFA's grid does at init: if any component is `< 1`, the
/// whole resolution becomes `(2, 2, 2)`. Returns the resolution and whether it was reset.
pub fn sanitize_resolution(n: [i32; 3]) -> ([usize; 3], bool) {
    if n.iter().any(|&a| a < 1) {
        ([2, 2, 2], true)
    } else {
        ([n[0] as usize, n[1] as usize, n[2] as usize], false)
    }
}

/// Resolution implied by a `cellWidth` `w`: `n[a] = ceil((max-min)[a] / w) + 1`
/// (the float-to-int conversion saturates where C++ would be undefined).
pub fn cell_width_resolution(min: Vec3, max: Vec3, w: f64) -> [i32; 3] {
    let mut n = [0i32; 3];
    for a in 0..3 {
        n[a] = (((max[a] - min[a]) / w).ceil() as i32).saturating_add(1);
    }
    n
}

/// Bounding box given through the legacy attributes `xmin ymin zmin xmax ymax zmax`
/// (and `scale`): SOFA reads them as 32-bit floats (`strtof`, so parse the text directly as
/// `f32`), widens each to `f64` and multiplies by the widened `scale`.
pub fn float_attribute_bounds(min: [f32; 3], max: [f32; 3], scale: f32) -> (Vec3, Vec3) {
    let s = scale as f64;
    ([min[0] as f64 * s, min[1] as f64 * s, min[2] as f64 * s], [max[0] as f64 * s, max[1] as f64 * s, max[2] as f64 * s])
}

/// The Data of a `RegularGridTopology` that determine its geometry, as they stand once the
/// scene has been parsed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RegularGridParams {
    /// `n` (after the `nx ny nz` attribute override, if any); may be invalid (`< 1`).
    pub n: [i32; 3],
    /// `min` (or the legacy float attributes, see [`float_attribute_bounds`]).
    pub min: Vec3,
    /// `max`.
    pub max: Vec3,
    /// `p0` when the scene sets it explicitly.
    pub p0: Option<Vec3>,
    /// `cellWidth` (0 = unused).
    pub cell_width: f64,
}

impl Default for RegularGridParams {
    fn default() -> Self {
        RegularGridParams { n: [2, 2, 2], min: [0.0; 3], max: [1.0; 3], p0: None, cell_width: 0.0 }
    }
}

/// Geometry of a regular grid: resolution, origin of point `(0,0,0)` and the spacing along
/// each axis (SOFA stores the three step vectors `dx = (d[0],0,0)`, `dy = (0,d[1],0)`,
/// `dz = (0,0,d[2])`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RegularGridGeometry {
    /// Points per axis (all `>= 1`).
    pub n: [usize; 3],
    /// Position of point `(0,0,0)`.
    pub p0: Vec3,
    /// Step along each axis.
    pub d: Vec3,
}

/// SOFA's `setPos`: step and default origin for a (possibly invalid) resolution.
/// For an axis with `n-1 > 0` the step is `(max-min)/(n-1)` and the origin is `min`;
/// otherwise the step is `max-min` and the origin is the middle of the range for x and y,
/// but `min` for z.
fn spacing_and_origin(n: [i32; 3], min: Vec3, max: Vec3) -> (Vec3, Vec3) {
    let mut d = [0.0; 3];
    let mut origin = min;
    for a in 0..3 {
        let cells = n[a] as i64 - 1;
        if cells > 0 {
            d[a] = (max[a] - min[a]) / cells as f64;
        } else {
            d[a] = max[a] - min[a];
            if a < 2 {
                origin[a] = (max[a] + min[a]) / 2.0;
            }
        }
    }
    (d, origin)
}

impl RegularGridGeometry {
    /// Plain construction from a valid resolution (every `n[a] >= 1`) and a bounding box,
    /// with SOFA's spacing/origin rules (see [`RegularGridGeometry::from_params`]) and no
    /// life-cycle quirks. `p0` overrides the computed origin.
    pub fn from_bounds(n: [usize; 3], min: Vec3, max: Vec3, p0: Option<Vec3>) -> Self {
        let ni = [n[0] as i32, n[1] as i32, n[2] as i32];
        let (d, origin) = spacing_and_origin(ni, min, max);
        RegularGridGeometry { n, p0: p0.unwrap_or(origin), d }
    }

    /// Geometry exactly as a SOFA `RegularGridTopology` ends up after parse + init:
    ///
    /// 1. At parse time the step and default origin are computed from the parsed `n`
    ///    (`d[a] = (max-min)[a]/(n[a]-1)` and origin `min[a]` when `n[a] > 1`; otherwise
    ///    `d[a] = (max-min)[a]` and origin `(min+max)[a]/2` for x and y but `min[a]` for z).
    ///    Assigning the origin marks SOFA's `p0` Data as set, so **`p0` is frozen here**
    ///    (the explicit `p0` wins if the scene gave one).
    /// 2. At init, a non-zero `cellWidth` replaces `n` by [`cell_width_resolution`] but does
    ///    **not** recompute the step (SOFA keeps the parse-time step).
    /// 3. A resolution with a component `< 1` is reset to `(2,2,2)` and the step is
    ///    recomputed for it (the origin stays the frozen parse-time one).
    pub fn from_params(p: &RegularGridParams) -> Self {
        let (mut d, origin) = spacing_and_origin(p.n, p.min, p.max);
        let p0 = p.p0.unwrap_or(origin);
        let mut n = p.n;
        if p.cell_width != 0.0 {
            n = cell_width_resolution(p.min, p.max, p.cell_width);
        }
        let (n, reset) = sanitize_resolution(n);
        if reset {
            d = spacing_and_origin([2, 2, 2], p.min, p.max).0;
        }
        RegularGridGeometry { n, p0, d }
    }

    /// Number of points.
    #[inline]
    pub fn point_count(&self) -> usize {
        point_count(self.n)
    }

    /// Position of grid point `(x, y, z)`, evaluated as SOFA does:
    /// `((p0 + dx·x) + dy·y) + dz·z` component-wise with the full step vectors.
    #[inline]
    pub fn point(&self, x: usize, y: usize, z: usize) -> Vec3 {
        let (fx, fy, fz) = (x as f64, y as f64, z as f64);
        let dx = [self.d[0], 0.0, 0.0];
        let dy = [0.0, self.d[1], 0.0];
        let dz = [0.0, 0.0, self.d[2]];
        let mut out = [0.0; 3];
        for c in 0..3 {
            out[c] = ((self.p0[c] + dx[c] * fx) + dy[c] * fy) + dz[c] * fz;
        }
        out
    }

    /// Position of point index `i` (see [`point_index`]).
    #[inline]
    pub fn point_at(&self, i: usize) -> Vec3 {
        let [x, y, z] = point_coords(self.n, i);
        self.point(x, y, z)
    }

    /// All point positions in index order.
    pub fn points(&self) -> Vec<Vec3> {
        (0..self.point_count()).map(|i| self.point_at(i)).collect()
    }

    /// Continuous grid coordinates of `pos`: `((pos-p0)·dx) / |dx|²` etc.
    #[inline]
    fn grid_coords(&self, pos: Vec3) -> Vec3 {
        let u = [pos[0] - self.p0[0], pos[1] - self.p0[1], pos[2] - self.p0[2]];
        let steps = [[self.d[0], 0.0, 0.0], [0.0, self.d[1], 0.0], [0.0, 0.0, self.d[2]]];
        let mut g = [0.0; 3];
        for a in 0..3 {
            let s = steps[a];
            let inv_len2 = 1.0 / (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
            g[a] = (u[0] * s[0] + u[1] * s[1] + u[2] * s[2]) * inv_len2;
        }
        g
    }

    /// The cell containing `pos` and the fractional coordinates of `pos` inside it
    /// (`None` if outside, or if the grid has an axis with fewer than 2 points).
    /// Cell `ix = floor(gx)` is inside iff `0 <= ix <= nx-2` (same for y, z).
    pub fn find_cube(&self, pos: Vec3) -> Option<(usize, Vec3)> {
        self.locate(pos, |i, last| (0..=last).contains(&i).then_some(i))
    }

    /// Like [`find_cube`](Self::find_cube) but the cell indices are clamped to the grid, so
    /// the fractional coordinates may fall outside `[0, 1]` (extrapolation).
    /// `None` only if an axis has fewer than 2 points.
    pub fn find_nearest_cube(&self, pos: Vec3) -> Option<(usize, Vec3)> {
        self.locate(pos, |i, last| Some(i.clamp(0, last)))
    }

    /// The cell of `pos` and the coordinates of `pos` relative to it, the cell index along each
    /// axis being `pick(floor(g), n - 2)` for the grid coordinate `g` (`None`: outside).
    fn locate(&self, pos: Vec3, pick: impl Fn(i64, i64) -> Option<i64>) -> Option<(usize, Vec3)> {
        if self.n.iter().any(|&a| a < 2) {
            return None;
        }
        let g = self.grid_coords(pos);
        let mut ic = [0usize; 3];
        let mut frac = [0.0; 3];
        for a in 0..3 {
            let i = pick(g[a].floor() as i64, self.n[a] as i64 - 2)?;
            ic[a] = i as usize;
            frac[a] = g[a] - i as f64;
        }
        Some((cell_index(self.n, ic[0], ic[1], ic[2]), frac))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene_grid() -> RegularGridGeometry {
        // HexahedronFEMForceField.scn: nx 4 ny 4 nz 20, xmin -9 xmax -6 ymin 0 ymax 3 zmin 0 zmax 19
        let (min, max) = float_attribute_bounds([-9.0, 0.0, 0.0], [-6.0, 3.0, 19.0], 1.0);
        RegularGridGeometry::from_params(&RegularGridParams { n: [4, 4, 20], min, max, ..Default::default() })
    }

    #[test]
    fn scene_grid_points_and_hexahedra() {
        let g = scene_grid();
        assert_eq!(g.n, [4, 4, 20]);
        assert_eq!(g.point_count(), 320);
        let pts = g.points();
        assert_eq!(pts.len(), 320);
        assert_eq!(pts[0], [-9.0, 0.0, 0.0]);
        assert_eq!(pts[1], [-8.0, 0.0, 0.0]);
        assert_eq!(pts[3], [-6.0, 0.0, 0.0]);
        assert_eq!(pts[4], [-9.0, 1.0, 0.0]);
        assert_eq!(pts[16], [-9.0, 0.0, 1.0]);
        assert_eq!(pts[21], [-8.0, 1.0, 1.0]);
        assert_eq!(pts[319], [-6.0, 3.0, 19.0]);

        let hexa = hexahedra(g.n);
        assert_eq!(hexa.len(), 171);
        assert_eq!(hexa[0], [0, 1, 5, 4, 16, 17, 21, 20]);
        assert_eq!(hexa[1], [1, 2, 6, 5, 17, 18, 22, 21]);
        assert_eq!(hexa[3], [4, 5, 9, 8, 20, 21, 25, 24]);
        assert_eq!(hexa[9], [16, 17, 21, 20, 32, 33, 37, 36]);
        assert_eq!(hexa[170], [298, 299, 303, 302, 314, 315, 319, 318]);
        assert_eq!(hexa[170], hexahedron(g.n, 2, 2, 18));
        assert_eq!(hexa[170][6], 319);
        // cell index <-> coordinates
        assert_eq!(cell_index(g.n, 2, 1, 3), 2 + 3 * (1 + 3 * 3));
        assert_eq!(cell_coords(g.n, cell_index(g.n, 2, 1, 3)), [2, 1, 3]);
        assert_eq!(point_coords(g.n, point_index(g.n, 3, 2, 17)), [3, 2, 17]);
    }

    #[test]
    fn scene_grid_lists() {
        let n = [4, 4, 20];
        let l = grid_lists(n, GridListFlags::default());
        assert_eq!(l.hexahedra.len(), 171);
        // XY: 3*3*20, XZ: 3*4*19, YZ: 3*4*19
        assert_eq!(l.quads.len(), 180 + 228 + 228);
        assert_eq!(l.quads[0], [0, 1, 5, 4]);
        assert_eq!(l.quads[180], [0, 1, 17, 16]);
        assert_eq!(l.quads[180 + 228], [0, 4, 20, 16]);
        assert_eq!(l.triangles.len(), 2 * l.quads.len());
        assert_eq!(l.triangles[0], [0, 1, 5]);
        assert_eq!(l.triangles[1], [0, 5, 4]);
        // axis lines (240 + 240 + 304) + one diagonal per face
        assert_eq!(l.edges.len(), 784 + 636);
        assert_eq!(&l.edges[..5], &[[1, 5], [5, 0], [0, 1], [5, 4], [4, 0]]);

        let no_tri = grid_lists(n, GridListFlags { triangles: false, ..Default::default() });
        assert_eq!(no_tri.edges.len(), 784);
        assert_eq!(no_tri.edges[0], [0, 1]);
        assert_eq!(no_tri.edges[240], [0, 4]);
        assert_eq!(no_tri.edges[480], [0, 16]);

        // triangles force the quad list even if quads are not requested
        let tri_only = grid_lists(n, GridListFlags { quads: false, ..Default::default() });
        assert_eq!(tri_only.quads.len(), 636);
    }

    #[test]
    fn degenerate_grids() {
        // 2-D cloth 20x1x20 (x from 12 to -12): quads only in the XZ plane, origin y centred
        let g = RegularGridGeometry::from_params(&RegularGridParams {
            n: [20, 1, 20],
            min: [12.0, 2.0, -12.0],
            max: [-12.0, 4.0, 12.0],
            ..Default::default()
        });
        assert_eq!(g.p0, [12.0, 3.0, -12.0]);
        assert_eq!(g.d, [-24.0 / 19.0, 2.0, 24.0 / 19.0]);
        let l = grid_lists(g.n, GridListFlags::default());
        assert!(l.hexahedra.is_empty());
        assert_eq!(l.quads.len(), 19 * 19);
        assert_eq!(l.quads[0], [0, 1, 21, 20]);
        assert_eq!(l.triangles.len(), 2 * 361);
        assert_eq!(l.edges.len(), 19 * 20 * 2 + 361);

        // z with a single point: origin z stays at min (not centred)
        let g = RegularGridGeometry::from_bounds([3, 3, 1], [0.0, 0.0, 1.0], [2.0, 2.0, 3.0], None);
        assert_eq!(g.p0, [0.0, 0.0, 1.0]);
        assert_eq!(g.d, [1.0, 1.0, 2.0]);
        let l = grid_lists(g.n, GridListFlags::default());
        assert_eq!(l.quads.len(), 4);
        assert!(l.hexahedra.is_empty());

        // 1-D: no faces, edges are the x lines
        let g = RegularGridGeometry::from_bounds([5, 1, 1], [0.0, -1.0, -1.0], [4.0, 1.0, 1.0], None);
        assert_eq!(g.p0, [0.0, 0.0, -1.0]);
        let l = grid_lists(g.n, GridListFlags::default());
        assert!(l.quads.is_empty() && l.triangles.is_empty());
        assert_eq!(l.edges, vec![[0, 1], [1, 2], [2, 3], [3, 4]]);
        assert_eq!(g.points()[4], [4.0, 0.0, -1.0]);
    }

    #[test]
    fn lifecycle_quirks() {
        // invalid n: reset to 2x2x2, step recomputed, origin frozen from parse time
        let g =
            RegularGridGeometry::from_params(&RegularGridParams { n: [0, 3, 3], min: [0.0, 0.0, 0.0], max: [2.0, 2.0, 2.0], ..Default::default() });
        assert_eq!(g.n, [2, 2, 2]);
        assert_eq!(g.d, [2.0, 2.0, 2.0]);
        assert_eq!(g.p0, [1.0, 0.0, 0.0]);
        // explicit p0
        let g = RegularGridGeometry::from_params(&RegularGridParams { n: [3, 3, 3], p0: Some([5.0, 6.0, 7.0]), ..Default::default() });
        assert_eq!(g.point(2, 2, 2), [6.0, 7.0, 8.0]);
        // cellWidth: n from width, step from parse-time n (default 2)
        let g = RegularGridGeometry::from_params(&RegularGridParams {
            n: [2, 2, 2],
            min: [0.0; 3],
            max: [1.0, 2.0, 0.5],
            cell_width: 0.5,
            ..Default::default()
        });
        assert_eq!(g.n, [3, 5, 2]);
        assert_eq!(g.d, [1.0, 2.0, 0.5]);
    }

    #[test]
    fn find_cube_in_scene_grid() {
        let g = scene_grid();
        let (c, f) = g.find_cube([-8.5, 1.25, 3.75]).unwrap();
        assert_eq!(c, cell_index(g.n, 0, 1, 3));
        assert!((f[0] - 0.5).abs() < 1e-15 && (f[1] - 0.25).abs() < 1e-15 && (f[2] - 0.75).abs() < 1e-15);
        assert!(g.find_cube([-10.0, 1.0, 1.0]).is_none());
        let (c, f) = g.find_nearest_cube([-10.0, 1.5, 30.0]).unwrap();
        assert_eq!(c, cell_index(g.n, 0, 1, 18));
        assert_eq!(f, [-1.0, 0.5, 12.0]);
        // a point exactly on the max face is outside for find_cube (floor gives n-1)
        assert!(g.find_cube([-6.0, 1.0, 1.0]).is_none());
    }
}
