//! `SparseGridRamificationTopology` (`GRID/SparseGridRamificationTopology.cpp`): a sparse grid
//! whose cells are split into one hexahedron per connected part of the matter they contain, so
//! that separate parts of a surface falling into one cell (the two arms of a "C") move apart.
//!
//! Vocabulary: a *cell* is a kept cell of a level's regular grid (numbered as in
//! [`SparseGridTopology`](crate::SparseGridTopology)); a *branch* (SOFA's "connexion") is one
//! connected part of a cell; every branch becomes one hexahedron.
//!
//! **Finest level** (the grid of the Data, or the virtual finest grid when
//! `nbVirtualFinerLevels > 0`): the sparse grid of [`SparseGrid::from_surface`]; every cell is one
//! branch. When the connectivity is needed (`finestConnectivity`, or virtual levels) two face
//! neighbours are connected if both cells exist and, with `finestConnectivity`, if one of them is
//! not BOUNDARY or an edge `(f[j-1], f[j])`, `j >= 1`, of some facet of the surface crosses their
//! common face (split into the triangles `(a, b, c)` and `(a, c, d)`, segment–triangle test with a
//! 1e-10 parallelism threshold). With `finestConnectivity` the finest hexahedra are then
//! renumbered as described below (same cells, but faces without connection get their own points).
//!
//! **Coarser level** (from a finer one): cells as in `SparseGrid::coarsen` (x outermost, z
//! fastest; the children's types are read at their *unramified* cell index from the finer
//! level's per-hexahedron types, as SOFA does). In each cell, the finer branches of its children
//! (children in order 0..8, branches in order) are grouped into connected parts through their
//! neighbour links; parts are ordered by their first member; each part is a new branch, parent
//! of its members. Two branches of different cells are neighbours in direction `k` if a member
//! of the first has a member of the second as neighbour in direction `k`.
//!
//! **Numbering** (both cases): branches are numbered cell by cell; branch `h` gets the corner
//! labels `8h..8h+7`. Then, branch by branch and for its neighbours in the directions BEFORE
//! (z−1), DOWN (y−1), LEFT (x−1), in increasing branch order, each corner of the shared face
//! takes the current label of the neighbour's matching corner everywhere it appears. The points
//! are the surviving labels in increasing order, at the position of the corner that carries it.
//! Coincident points therefore exist where parts separate. (SOFA iterates the neighbours as a
//! set of pointers; increasing branch order is its allocation order.)
//!
//! **Types and coefficients** of a coarser level: a cell with one branch keeps its type and its
//! children are its unramified finer cells; a cell with several branches gives BOUNDARY
//! hexahedra whose only child is the last member of the branch (at its finer hexahedron index).
//! Coefficients are the sums of the finer coefficients at these child indices, divided by 8
//! (single precision) — children given by unramified index read the finer per-hexahedron
//! coefficients at that index, as SOFA does.
//!
//! **Point location** (BarycentricMapping): without virtual levels as the sparse grid; with
//! virtual levels, the cell of the finest grid containing the point gives the top-level branch
//! above it, and the coordinates are the point's cell coordinates in the top regular grid;
//! outside the kept cells, the nearest finest BOUNDARY cell gives the branch and the
//! coordinates are those of the clamped top-level regular cell.
//!
//! **SparseGridMultipleTopology** is this topology over several surfaces (`fileTopologies`),
//! each with a stiffness and a mass coefficient: its finest grid is
//! [`SparseGrid::from_surfaces`], its connectivity is tested against `fileTopology`. SOFA names
//! the per-surface coefficients `stiffnessCoefs` and `massCoefs`; here those attributes set
//! `fileStiffnessCoefs` and `fileMassCoefs`, since `stiffnessCoefs`/`massCoefs` are the
//! per-hexahedron outputs every sparse grid of Settee publishes (read by the hexahedron FEM).
//! Missing coefficients are 1, as SOFA pads them.

use std::collections::BTreeSet;

use settee_core::role::Topology;
use settee_core::{component, InitCtx, MeshData, SimResult};

use crate::grid::{cell_index, hexahedron, RegularGridGeometry, Vec3};
use crate::mesh_topology::MeshTopologyData;
use crate::sparse_grid::{
    coarse_type, coarser_geometry, finer_children, finest_params, grid_component, publish_level, published_level, read_surface,
    virtual_finest_params, BuildsGrid, CellLocator, CellType, FinestParams, SparseGrid, SparseGridData, Surface, WeightedSurface,
};

// Neighbour directions, in SOFA's order: UP (y+1) 0, DOWN 1, RIGHT (x+1) 2, LEFT 3,
// BEHIND (z+1) 5, BEFORE 4.
const DOWN: usize = 1;
const LEFT: usize = 3;
const BEFORE: usize = 4;

/// The opposite direction (UP ↔ DOWN, RIGHT ↔ LEFT, BEFORE ↔ BEHIND).
fn opposite(dir: usize) -> usize {
    if dir.is_multiple_of(2) {
        dir + 1
    } else {
        dir - 1
    }
}

/// One connected part of the matter of a cell.
#[derive(Clone, Debug, Default)]
pub struct Branch {
    /// Connected branches of the same level per direction (UP, DOWN, RIGHT, LEFT, BEFORE, BEHIND).
    pub neighbors: [BTreeSet<usize>; 6],
    /// `(position 0..8 of the child cell, branch of the finer level)`.
    pub children: Vec<(usize, usize)>,
    /// The branch of the next coarser level containing this one.
    pub parent: Option<usize>,
    /// The cell (unramified index) of this branch.
    pub cell: usize,
}

/// One level of the hierarchy.
#[derive(Clone, Debug)]
pub struct Level {
    /// Points per axis of the regular grid.
    pub n: [usize; 3],
    pub min: Vec3,
    pub max: Vec3,
    pub regular: RegularGridGeometry,
    /// Cell (unramified index) of each regular-grid cell.
    pub regular_to_cell: Vec<Option<usize>>,
    /// Regular-grid cell of each cell.
    pub cell_to_regular: Vec<usize>,
    /// Branches of each cell, by branch index (empty when the connectivity was not computed).
    pub cell_branches: Vec<Vec<usize>>,
    /// Branch `h` is hexahedron `h`.
    pub branches: Vec<Branch>,
    pub points: Vec<Vec3>,
    pub hexahedra: Vec<[usize; 8]>,
    /// Per hexahedron.
    pub types: Vec<CellType>,
    pub stiffness_coefs: Vec<f32>,
    pub mass_coefs: Vec<f32>,
}

impl Level {
    /// The finest level: the sparse grid of `p`, with the connectivity of its cells if
    /// `connectivity` (tested against `surface` when given), renumbered when `ramify`.
    pub fn finest(p: &FinestParams, s: &Surface, connectivity: bool, mesh_test: bool) -> Result<Level, String> {
        Level::from_grid(SparseGrid::from_surface(p, s)?, s, connectivity, mesh_test)
    }

    /// The finest level over a built sparse grid `g`, its connectivity tested against `s`.
    pub fn from_grid(g: SparseGrid, s: &Surface, connectivity: bool, mesh_test: bool) -> Result<Level, String> {
        if g.hexahedra.is_empty() {
            return Err("the sparse grid has no cell".into());
        }
        let mut level = Level {
            n: g.n,
            min: g.min,
            max: g.max,
            regular: g.regular,
            regular_to_cell: g.regular_to_sparse,
            cell_to_regular: g.sparse_to_regular,
            cell_branches: Vec::new(),
            branches: Vec::new(),
            points: g.points,
            hexahedra: g.hexahedra,
            types: g.types,
            stiffness_coefs: g.stiffness_coefs,
            mass_coefs: g.mass_coefs,
        };
        if connectivity || mesh_test {
            level.connect_finest(if mesh_test { Some(s) } else { None });
        }
        if mesh_test {
            let corners: Vec<[Vec3; 8]> = level.hexahedra.iter().map(|h| h.map(|i| level.points[i])).collect();
            let (points, hexahedra) = number_branches(&level.branches, &level.cell_branches, &corners);
            level.points = points;
            level.hexahedra = hexahedra;
        }
        Ok(level)
    }

    /// One branch per cell, linked to its LEFT, DOWN and BEFORE neighbours when they share matter.
    fn connect_finest(&mut self, surface: Option<&Surface>) {
        let nc = self.hexahedra.len();
        self.branches = (0..nc).map(|c| Branch { cell: c, ..Default::default() }).collect();
        self.cell_branches = (0..nc).map(|c| vec![c]).collect();
        let n = self.n;
        for z in 0..n[2] - 1 {
            for y in 0..n[1] - 1 {
                for x in 0..n[0] - 1 {
                    let Some(cube) = self.regular_to_cell[cell_index(n, x, y, z)] else {
                        continue;
                    };
                    let mut candidates = Vec::with_capacity(3);
                    if x > 0 {
                        candidates.push((cell_index(n, x - 1, y, z), LEFT));
                    }
                    if y > 0 {
                        candidates.push((cell_index(n, x, y - 1, z), DOWN));
                    }
                    if z > 0 {
                        candidates.push((cell_index(n, x, y, z - 1), BEFORE));
                    }
                    for (r, dir) in candidates {
                        let Some(nb) = self.regular_to_cell[r] else {
                            continue;
                        };
                        if self.faces_connected(surface, cube, nb, dir) {
                            self.branches[cube].neighbors[dir].insert(nb);
                            self.branches[nb].neighbors[opposite(dir)].insert(cube);
                        }
                    }
                }
            }
        }
    }

    /// SOFA's `sharingTriangle`: whether the face of `cube` towards its neighbour `nb` is
    /// crossed by an edge of the surface (always true without a surface or when one of the two
    /// cells is not BOUNDARY).
    fn faces_connected(&self, surface: Option<&Surface>, cube: usize, nb: usize, dir: usize) -> bool {
        let Some(s) = surface else { return true };
        if self.types[cube] != CellType::Boundary || self.types[nb] != CellType::Boundary {
            return true;
        }
        let h = self.hexahedra[cube];
        let face = match dir {
            LEFT => [h[0], h[4], h[7], h[3]],
            DOWN => [h[0], h[1], h[5], h[4]],
            _ => [h[0], h[1], h[2], h[3]],
        };
        let [a, b, c, d] = face.map(|i| self.points[i]);
        for facet in &s.facets {
            for j in 1..facet.len() {
                let (p, q) = (s.vertices[facet[j - 1]], s.vertices[facet[j]]);
                if segment_crosses_triangle(p, q, a, b, c) || segment_crosses_triangle(p, q, a, c, d) {
                    return true;
                }
            }
        }
        false
    }

    /// The next coarser level (SOFA's `SparseGridRamificationTopology::buildFromFiner`); sets
    /// the parents of this level's branches.
    pub fn coarsen(&mut self) -> Result<Level, String> {
        let nf = self.n;
        let min = self.min;
        let (n, max, regular) = coarser_geometry(nf, min, &self.regular);
        let mut regular_to_cell = vec![None; (n[0] - 1) * (n[1] - 1) * (n[2] - 1)];
        let mut cell_to_regular = Vec::new();
        let mut cell_types = Vec::new();
        let mut cell_corners: Vec<[Vec3; 8]> = Vec::new();
        let mut cell_children: Vec<[Option<usize>; 8]> = Vec::new();
        for i in 0..n[0] - 1 {
            for j in 0..n[1] - 1 {
                for k in 0..n[2] - 1 {
                    let children = finer_children(nf, &self.regular_to_cell, i, j, k);
                    // the finer per-hexahedron type at the unramified index
                    let Some(t) = coarse_type(children, |c| self.types.get(c).copied().unwrap_or(CellType::Outside)) else { continue };
                    let r = cell_index(n, i, j, k);
                    regular_to_cell[r] = Some(cell_to_regular.len());
                    cell_to_regular.push(r);
                    cell_types.push(t);
                    cell_corners.push(hexahedron(n, i, j, k).map(|p| regular.point_at(p)));
                    cell_children.push(children);
                }
            }
        }

        // Branches: the connected parts of the finer branches of each cell.
        let mut branches: Vec<Branch> = Vec::new();
        let mut cell_branches: Vec<Vec<usize>> = Vec::with_capacity(cell_children.len());
        for (cell, children) in cell_children.iter().enumerate() {
            let mut members: Vec<(usize, usize)> = Vec::new();
            for (place, child) in children.iter().enumerate() {
                if let Some(c) = child {
                    let list = self.cell_branches.get(*c).ok_or("a finer cell has no branch list")?;
                    members.extend(list.iter().map(|&b| (place, b)));
                }
            }
            let part = self.parts(&members);
            let mut numbers: Vec<usize> = part.clone();
            numbers.sort_unstable();
            numbers.dedup();
            let mut mine = Vec::with_capacity(numbers.len());
            for number in numbers {
                let id = branches.len();
                let kids: Vec<(usize, usize)> = members.iter().zip(&part).filter(|(_, p)| **p == number).map(|(m, _)| *m).collect();
                for &(_, b) in &kids {
                    self.branches[b].parent = Some(id);
                }
                branches.push(Branch { children: kids, cell, ..Default::default() });
                mine.push(id);
            }
            cell_branches.push(mine);
        }

        // Neighbours between branches of different cells, from the finer links.
        for z in 0..nf[2] - 1 {
            for y in 0..nf[1] - 1 {
                for x in 0..nf[0] - 1 {
                    let Some(fc) = self.regular_to_cell[cell_index(nf, x, y, z)] else {
                        continue;
                    };
                    for &b in self.cell_branches.get(fc).map(Vec::as_slice).unwrap_or(&[]) {
                        let c1 = self.branches[b].parent.ok_or("a finer branch has no coarser parent")?;
                        for dir in 0..6 {
                            for &nb in &self.branches[b].neighbors[dir] {
                                let c2 = self.branches[nb].parent.ok_or("a finer branch has no coarser parent")?;
                                if branches[c1].cell != branches[c2].cell {
                                    branches[c1].neighbors[dir].insert(c2);
                                    branches[c2].neighbors[opposite(dir)].insert(c1);
                                }
                            }
                        }
                    }
                }
            }
        }

        let (points, hexahedra) = number_branches(&branches, &cell_branches, &cell_corners);

        // Types and the children used for the coefficients.
        let mut types = Vec::with_capacity(branches.len());
        let mut coef_children: Vec<[Option<usize>; 8]> = Vec::with_capacity(branches.len());
        for (cell, list) in cell_branches.iter().enumerate() {
            if list.len() == 1 {
                coef_children.push(cell_children[cell]);
                types.push(cell_types[cell]);
            } else {
                for &b in list {
                    // each child overwrites the whole list: only the last one remains
                    let mut kids = [None; 8];
                    if let Some(&(_, fb)) = branches[b].children.last() {
                        let fine_cell = self.branches[fb].cell;
                        kids = std::array::from_fn(|p| (cell_children[cell][p] == Some(fine_cell)).then_some(fb));
                    }
                    coef_children.push(kids);
                    types.push(CellType::Boundary);
                }
            }
        }
        let mut stiffness_coefs = Vec::with_capacity(branches.len());
        let mut mass_coefs = Vec::with_capacity(branches.len());
        for kids in &coef_children {
            let (mut s, mut m) = (0.0f32, 0.0f32);
            for c in kids.iter().flatten() {
                m += *self.mass_coefs.get(*c).ok_or("a child index is beyond the finer hexahedra")?;
                s += *self.stiffness_coefs.get(*c).ok_or("a child index is beyond the finer hexahedra")?;
            }
            stiffness_coefs.push((s as f64 / 8.0) as f32);
            mass_coefs.push((m as f64 / 8.0) as f32);
        }

        Ok(Level {
            n,
            min,
            max,
            regular,
            regular_to_cell,
            cell_to_regular,
            cell_branches,
            branches,
            points,
            hexahedra,
            types,
            stiffness_coefs,
            mass_coefs,
        })
    }

    /// Connected parts of `members` (finer branches) through their neighbour links restricted
    /// to `members`: each member gets the position of the first member of its part.
    fn parts(&self, members: &[(usize, usize)]) -> Vec<usize> {
        let mut part = vec![usize::MAX; members.len()];
        for start in 0..members.len() {
            if part[start] != usize::MAX {
                continue;
            }
            part[start] = start;
            let mut stack = vec![start];
            while let Some(m) = stack.pop() {
                for dir in 0..6 {
                    for nb in &self.branches[members[m].1].neighbors[dir] {
                        if let Some(k) = members.iter().position(|(_, b)| b == nb) {
                            if part[k] == usize::MAX {
                                part[k] = start;
                                stack.push(k);
                            }
                        }
                    }
                }
            }
        }
        part
    }
}

/// Fresh corner labels per branch, merged across connected faces, renumbered in label order
/// (module documentation). `cell_corners[c]` are the corner positions of cell `c`.
fn number_branches(branches: &[Branch], cell_branches: &[Vec<usize>], cell_corners: &[[Vec3; 8]]) -> (Vec<Vec3>, Vec<[usize; 8]>) {
    let nb = branches.len();
    let mut labels: Vec<[usize; 8]> = (0..nb).map(|h| std::array::from_fn(|c| 8 * h + c)).collect();
    let mut carriers: Vec<Vec<(usize, usize)>> = (0..8 * nb).map(|l| vec![(l / 8, l % 8)]).collect();
    let mut relabel = |labels: &mut Vec<[usize; 8]>, old: usize, new: usize| {
        if old == new {
            return;
        }
        let moved = std::mem::take(&mut carriers[old]);
        for &(h, c) in &moved {
            labels[h][c] = new;
        }
        carriers[new].extend(moved);
    };
    // (direction, pairs (corner of the branch, corner of the neighbour))
    const FACES: [(usize, [(usize, usize); 4]); 3] =
        [(BEFORE, [(0, 4), (1, 5), (2, 6), (3, 7)]), (DOWN, [(0, 3), (4, 7), (5, 6), (1, 2)]), (LEFT, [(0, 1), (4, 5), (7, 6), (3, 2)])];
    for list in cell_branches {
        for &h in list {
            for (dir, pairs) in FACES {
                for &g in &branches[h].neighbors[dir] {
                    for (a, b) in pairs {
                        let (old, new) = (labels[h][a], labels[g][b]);
                        relabel(&mut labels, old, new);
                    }
                }
            }
        }
    }
    let mut first: Vec<Option<(usize, usize)>> = vec![None; 8 * nb];
    for (h, l) in labels.iter().enumerate() {
        for (c, &label) in l.iter().enumerate() {
            first[label].get_or_insert((h, c));
        }
    }
    let mut id = vec![usize::MAX; 8 * nb];
    let mut points = Vec::new();
    for (label, f) in first.iter().enumerate() {
        if let Some((h, c)) = f {
            id[label] = points.len();
            points.push(cell_corners[branches[*h].cell][*c]);
        }
    }
    let hexahedra = labels.iter().map(|l| l.map(|label| id[label])).collect();
    (points, hexahedra)
}

/// SOFA's segment–triangle intersection (`intersectionSegmentTriangle`): false when the
/// segment is parallel to the triangle (|d·n| ≤ 1e-10 with `d` the unit direction).
fn segment_crosses_triangle(s0: Vec3, s1: Vec3, t0: Vec3, t1: Vec3, t2: Vec3) -> bool {
    let sub = |a: Vec3, b: Vec3| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let dot = |a: Vec3, b: Vec3| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let cross = |a: Vec3, b: Vec3| [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    let diff = sub(s0, t0);
    let e1 = sub(t1, t0);
    let e2 = sub(t2, t0);
    let normal = cross(e1, e2);
    let seg = sub(s1, s0);
    let len = dot(seg, seg).sqrt();
    let dir = [seg[0] / len, seg[1] / len, seg[2] / len];
    let mut ddn = dot(dir, normal);
    let sign = if ddn > 1.0e-10 {
        1.0
    } else if ddn < -1.0e-10 {
        ddn = -ddn;
        -1.0
    } else {
        return false;
    };
    let ddqxe2 = sign * dot(dir, cross(diff, e2));
    if ddqxe2 < 0.0 {
        return false;
    }
    let dde1xq = sign * dot(dir, cross(e1, diff));
    if dde1xq < 0.0 || ddqxe2 + dde1xq > ddn {
        return false;
    }
    let qdn = -sign * dot(diff, normal);
    let ext = len * ddn;
    -ext <= qdn && qdn <= ext
}

/// The built hierarchy: the virtual levels (finest first) and the level of the component.
#[derive(Clone, Debug)]
pub struct RamifiedGrid {
    pub levels: Vec<Level>,
    /// For each cell of the finest level, the top-level hexahedron above it (virtual levels only).
    pub coarsest: Vec<usize>,
}

impl RamifiedGrid {
    /// Builds the grid of `p` (SOFA's init): with `levels` virtual levels the finest grid is
    /// `fine` and is coarsened `levels` times.
    pub fn build(p: &FinestParams, fine: &FinestParams, levels: u32, s: &Surface, finest_connectivity: bool) -> Result<RamifiedGrid, String> {
        RamifiedGrid::build_with(p, fine, levels, s, finest_connectivity, &|q| SparseGrid::from_surface(q, s))
    }

    /// [`RamifiedGrid::build`] with the finest sparse grid made by `make` from its parameters
    /// (the surfaces of a SparseGridMultipleTopology); `s` is the surface the connectivity is
    /// tested against.
    pub fn build_with(
        p: &FinestParams,
        fine: &FinestParams,
        levels: u32,
        s: &Surface,
        finest_connectivity: bool,
        make: &dyn Fn(&FinestParams) -> Result<SparseGrid, String>,
    ) -> Result<RamifiedGrid, String> {
        if levels == 0 {
            let top = Level::from_grid(make(p)?, s, false, finest_connectivity)?;
            return Ok(RamifiedGrid { levels: vec![top], coarsest: Vec::new() });
        }
        let mut all = vec![Level::from_grid(make(fine)?, s, true, finest_connectivity)?];
        for _ in 0..levels {
            let next = all.last_mut().expect("one level at least").coarsen()?;
            all.push(next);
        }
        let finest = &all[0];
        let mut coarsest = Vec::with_capacity(finest.cell_branches.len());
        for list in &finest.cell_branches {
            let (mut level, mut b) = (0, list[0]);
            while let Some(p) = all[level].branches[b].parent {
                level += 1;
                b = p;
            }
            coarsest.push(b);
        }
        Ok(RamifiedGrid { levels: all, coarsest })
    }

    /// The level of the component (the coarsest).
    pub fn top(&self) -> &Level {
        self.levels.last().expect("one level at least")
    }

    /// The point locator of the component (module documentation).
    pub fn locator(&self) -> CellLocator {
        let top = self.top();
        if self.levels.len() == 1 {
            let corners = |h: usize| (top.points[top.hexahedra[h][0]], top.points[top.hexahedra[h][6]], h);
            return CellLocator {
                lookup: top.regular,
                cells: top.regular_to_cell.clone(),
                fractions: None,
                nearest: (0..top.hexahedra.len()).filter(|&h| top.types[h] == CellType::Boundary).map(corners).collect(),
                fallback: (!top.hexahedra.is_empty()).then(|| corners(0)),
            };
        }
        let finest = &self.levels[0];
        let corners = |h: usize| (finest.points[finest.hexahedra[h][0]], finest.points[finest.hexahedra[h][6]], self.coarsest[h]);
        CellLocator {
            lookup: finest.regular,
            cells: finest.regular_to_cell.iter().map(|c| c.map(|c| self.coarsest[c])).collect(),
            fractions: Some(top.regular),
            nearest: (0..finest.hexahedra.len()).filter(|&h| finest.types[h] == CellType::Boundary).map(corners).collect(),
            fallback: (!finest.hexahedra.is_empty()).then(|| corners(0)),
        }
    }
}

/// SOFA's per-surface `stiffnessCoefs`/`massCoefs` attributes of SparseGridMultipleTopology
/// set `fileStiffnessCoefs`/`fileMassCoefs` (module documentation).
#[allow(clippy::ptr_arg)] // the signature of every preparse hook
fn preparse_multiple(attrs: &mut Vec<(String, String)>) {
    for (name, _) in attrs.iter_mut() {
        match name.as_str() {
            "stiffnessCoefs" => *name = "fileStiffnessCoefs".into(),
            "massCoefs" => *name = "fileMassCoefs".into(),
            _ => {}
        }
    }
}

/// Sparse grid whose cells are split into one hexahedron per connected part of the matter they
/// contain (SparseGridRamificationTopology), possibly over several surfaces with their own
/// coefficients (SparseGridMultipleTopology). Their surface and grid parameters are read as the
/// sparse grid's (`read_surface`, `finest_params`).
#[component(
    module = "Sofa.Component.Topology.Container.Grid",
    roles = [Topology],
    inherit = [MeshTopologyData, SparseGridData, Self],
    data = {
        /// test the connectivity at the finest level: faces between boundary cells connect only if the surface crosses them
        finestConnectivity: Bool = "true",
    },
    class(
        name = "SparseGridRamificationTopology",
        description = "Sparse grid whose cells are split into one hexahedron per connected part of the matter they contain.",
        create = |_| SparseGridRamificationTopology { mesh: MeshData::default(), grid: None, multiple: false },
    ),
    class(
        name = "SparseGridMultipleTopology",
        description = "Sparse grid in 3D over several surfaces, each with its stiffness and mass coefficients.",
        create = |_| SparseGridRamificationTopology { mesh: MeshData::default(), grid: None, multiple: true },
        preparse = preparse_multiple,
        data = {
            /// All topology filenames (.obj surfaces)
            fileTopologies: Strings,
            /// A stiffness coefficient for each topology filename (SOFA's stiffnessCoefs attribute)
            fileStiffnessCoefs: Reals,
            /// A mass coefficient for each topology filename (SOFA's massCoefs attribute)
            fileMassCoefs: Reals,
            /// Are ramifications wanted?
            computeRamifications: Bool = "true",
            /// Does a new stiffness/mass coefficient replace the previous or blend half/half with it?
            erasePreviousCoef: Bool = "false",
        },
    ),
)]
#[derive(Clone)]
pub struct SparseGridRamificationTopology {
    mesh: MeshData,
    grid: Option<RamifiedGrid>,
    /// A SparseGridMultipleTopology.
    multiple: bool,
}

impl SparseGridRamificationTopology {
    /// The built hierarchy, once initialised.
    pub fn grid(&self) -> Option<&RamifiedGrid> {
        self.grid.as_ref()
    }
}

impl BuildsGrid for SparseGridRamificationTopology {
    type Grid = RamifiedGrid;

    fn build(&self, cx: &InitCtx) -> SimResult<RamifiedGrid> {
        if self.multiple {
            return self.build_multiple(cx);
        }
        let surface = read_surface(cx)?;
        let (params, levels) = finest_params(cx);
        let fine = if levels > 0 { virtual_finest_params(cx, &params, levels)? } else { params };
        let finest_connectivity = cx.data().get(Self::FINEST_CONNECTIVITY);
        RamifiedGrid::build(&params, &fine, levels, &surface, finest_connectivity).map_err(|e| cx.error(e).hint("check the surface, min/max and n"))
    }

    fn publish(&mut self, cx: &mut InitCtx, grid: RamifiedGrid) {
        let top = grid.top();
        self.mesh = publish_level(cx, published_level!(top), grid.locator());
        self.grid = Some(grid);
    }
}

impl SparseGridRamificationTopology {
    fn build_multiple(&self, cx: &InitCtx) -> SimResult<RamifiedGrid> {
        let d = cx.data();
        let files = d.get(Self::FILE_TOPOLOGIES).to_vec();
        if files.is_empty() {
            return Err(cx.error("no file topology provided").hint("list the surfaces in fileTopologies=\"a.obj b.obj\""));
        }
        let coef = |v: &[f64], i: usize| v.get(i).map_or(1.0, |&c| c as f32);
        let (stiff, mass) = (d.get(Self::FILE_STIFFNESS_COEFS).to_vec(), d.get(Self::FILE_MASS_COEFS).to_vec());
        let mut surfaces = Vec::with_capacity(files.len());
        for (i, f) in files.iter().enumerate() {
            if !f.to_lowercase().ends_with(".obj") {
                return Err(settee_core::SimError::unsupported(format!("{}: reading '{f}' is not supported (only .obj surfaces)", cx.label())));
            }
            let path = cx.resolve_file(f)?;
            let surface = crate::sparse_grid::read_obj_surface(&path).map_err(|e| cx.error(e))?;
            surfaces.push(WeightedSurface { surface, stiffness: coef(&stiff, i), mass: coef(&mass, i) });
        }
        // The connectivity is tested against fileTopology (SOFA's findConnexionsAtFinestLevel).
        let main = match read_surface(cx) {
            Ok(s) => s,
            Err(_) => surfaces[0].surface.clone(),
        };
        let (params, levels) = finest_params(cx);
        let fine = if levels > 0 { virtual_finest_params(cx, &params, levels)? } else { params };
        let test = d.get(Self::FINEST_CONNECTIVITY) && d.get(Self::COMPUTE_RAMIFICATIONS);
        let erase = d.get(Self::ERASE_PREVIOUS_COEF);
        RamifiedGrid::build_with(&params, &fine, levels, &main, test, &|q| SparseGrid::from_surfaces(q, &surfaces, erase))
            .map_err(|e| cx.error(e).hint("check the surfaces, min/max and n"))
    }
}

grid_component!(SparseGridRamificationTopology);

#[cfg(test)]
mod tests {
    use super::*;

    /// The class has the sparse grid's Data (read through the sparse grid's readers), in the same
    /// order, then its own.
    #[test]
    fn has_the_sparse_grid_data() {
        use settee_core::component::Declared;
        let names = |c: &settee_core::ComponentClass| c.data.iter().flat_map(|t| t.iter().map(|d| d.name)).collect::<Vec<_>>();
        let mut sparse = names(<crate::SparseGridTopology as Declared>::CLASSES[0]);
        sparse.push("finestConnectivity");
        assert_eq!(names(<SparseGridRamificationTopology as Declared>::CLASSES[0]), sparse);
    }

    /// SOFA's per-surface `stiffnessCoefs`/`massCoefs` attributes land in fileStiffnessCoefs /
    /// fileMassCoefs, leaving the per-hexahedron outputs to the grid.
    #[test]
    #[allow(clippy::disallowed_methods)] // checks Data by name
    fn multiple_topology_reads_sofa_s_coefficient_attributes() {
        let (f, mut s) = crate::test_util::factory_and_scene();
        let g = crate::test_util::create(&f, &mut s, "SparseGridMultipleTopology", &[("stiffnessCoefs", "10 100 .2"), ("massCoefs", "1 2")]);
        let d = &s.entry(g).data;
        assert_eq!((d.reals("fileStiffnessCoefs"), d.reals("fileMassCoefs")), (&[10.0, 100.0, 0.2][..], &[1.0, 2.0][..]));
        assert!(d.reals("stiffnessCoefs").is_empty());
        assert!(s.messages.iter().all(|m| !m.message.contains("unused")), "{:?}", s.messages);
    }

    fn params(n: [usize; 3], max: Vec3) -> FinestParams {
        FinestParams { n, min: [0.0; 3], max, cell_width: 0.0, fill_weighted: true, only_inside_cells: false }
    }

    /// Two boxes in the single cell of a 2×2×2 grid, separated by an empty finest cell (two
    /// virtual levels): the plain sparse grid has one hexahedron, the ramified grid two, with
    /// their own 8 points each (coincident pairs).
    #[test]
    fn two_parts_in_one_cell_duplicate_the_cell() {
        let mut s = Surface::default();
        s.add_box([0.1, 0.1, 0.1], [0.9, 0.9, 0.9]);
        s.add_box([2.1, 0.1, 0.1], [2.9, 0.9, 0.9]);
        let p = params([2, 2, 2], [4.0, 1.0, 1.0]);
        let fine = FinestParams { n: [5, 5, 5], ..p };

        let mut plain = SparseGrid::from_surface(&fine, &s).unwrap();
        for _ in 0..2 {
            plain = plain.coarsen();
        }
        assert_eq!((plain.hexahedra.len(), plain.points.len()), (1, 8));

        // with finestConnectivity, boundary cells along a face of a box connect only where a
        // surface edge crosses their common face: more parts, never fewer
        let tested = RamifiedGrid::build(&p, &fine, 2, &s, true).unwrap();
        assert!(tested.top().hexahedra.len() >= 2);
        {
            let g = RamifiedGrid::build(&p, &fine, 2, &s, false).unwrap();
            assert_eq!(g.levels.len(), 3);
            // finest: 16 boundary cells per box (x cells 0 and 2), the gap and beyond are outside
            assert_eq!(g.levels[0].hexahedra.len(), 32);
            // middle level (3×3×3 points): 4 cells per box, one branch each
            assert_eq!(g.levels[1].hexahedra.len(), 8);
            let top = g.top();
            assert_eq!(top.n, [2, 2, 2]);
            assert_eq!(top.hexahedra, vec![[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]);
            assert_eq!(&top.points[..8], &top.points[8..]);
            assert_eq!(top.points[6], [4.0, 1.0, 1.0]);
            assert_eq!(top.types, vec![CellType::Boundary; 2]);
            // a cell with several branches keeps only its last child for the coefficients:
            // middle cells hold 4 finest boundary cells (4·0.5/8 = 0.25), then 0.25/8
            assert!(g.levels[1].stiffness_coefs.iter().all(|&c| c == 0.25));
            assert_eq!(top.stiffness_coefs, vec![0.03125; 2]);
            assert_eq!(top.mass_coefs, vec![0.03125; 2]);
            // each finest cell belongs to the branch of its box
            for (cell, &r) in g.levels[0].cell_to_regular.iter().enumerate() {
                let x = r % 4;
                assert_eq!(g.coarsest[cell], if x == 0 { 0 } else { 1 });
            }
        }
    }

    /// Two boxes in neighbouring finest cells of one coarse cell (one virtual level): linked by
    /// the shared face unless `finestConnectivity` finds that no surface edge crosses it (the
    /// boxes are short along x: SOFA's test also sees an edge extended backwards by its length).
    #[test]
    fn finest_connectivity_separates_touching_cells() {
        let mut s = Surface::default();
        s.add_box([0.1, 0.1, 0.1], [0.4, 0.9, 0.9]);
        s.add_box([1.6, 0.1, 0.1], [1.9, 0.9, 0.9]);
        let p = params([2, 2, 2], [2.0, 2.0, 2.0]);
        let fine = FinestParams { n: [3, 3, 3], ..p };
        let joined = RamifiedGrid::build(&p, &fine, 1, &s, false).unwrap();
        assert_eq!((joined.top().hexahedra.len(), joined.top().points.len()), (1, 8));
        let split = RamifiedGrid::build(&p, &fine, 1, &s, true).unwrap();
        assert_eq!((split.top().hexahedra.len(), split.top().points.len()), (2, 16));
        // at the finest level the two cells keep their own face points
        assert_eq!(split.levels[0].hexahedra.len(), 2);
        assert_eq!(split.levels[0].points.len(), 16);
        assert_eq!(joined.levels[0].points.len(), 12);

        // a bridge crossing the face joins them again
        s.add_box([0.3, 0.4, 0.4], [1.7, 0.6, 0.6]);
        let bridged = RamifiedGrid::build(&p, &fine, 1, &s, true).unwrap();
        assert_eq!(bridged.top().hexahedra.len(), 1);
    }

    /// Without virtual levels and with `finestConnectivity`, faces between boundary cells that
    /// the surface does not cross get their own points (same cells, more points).
    #[test]
    fn finest_level_ramification_keeps_the_cells() {
        let mut s = Surface::default();
        s.add_box([0.1, 0.1, 0.1], [0.4, 0.9, 0.9]);
        s.add_box([1.6, 0.1, 0.1], [1.9, 0.9, 0.9]);
        let p = params([3, 2, 2], [2.0, 1.0, 1.0]);
        let plain = RamifiedGrid::build(&p, &p, 0, &s, false).unwrap();
        let ramified = RamifiedGrid::build(&p, &p, 0, &s, true).unwrap();
        assert_eq!(plain.top().hexahedra.len(), 2);
        assert_eq!(ramified.top().hexahedra.len(), 2);
        assert_eq!(plain.top().points.len(), 12);
        assert_eq!(ramified.top().points.len(), 16);
        assert_eq!(ramified.top().hexahedra[1], [8, 9, 10, 11, 12, 13, 14, 15]);
    }

    #[test]
    fn segment_triangle_test() {
        let (a, b, c) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        assert!(segment_crosses_triangle([0.2, 0.2, -1.0], [0.2, 0.2, 1.0], a, b, c));
        // the segment tested is s0 ± |s1 - s0| along its direction (SOFA's extent test)
        assert!(segment_crosses_triangle([0.2, 0.2, 0.5], [0.2, 0.2, 1.0], a, b, c));
        assert!(!segment_crosses_triangle([0.2, 0.2, 0.6], [0.2, 0.2, 1.0], a, b, c));
        assert!(!segment_crosses_triangle([0.8, 0.8, -1.0], [0.8, 0.8, 1.0], a, b, c));
        // parallel: never an intersection
        assert!(!segment_crosses_triangle([-1.0, 0.2, 0.0], [2.0, 0.2, 0.0], a, b, c));
        // degenerate segment
        assert!(!segment_crosses_triangle([0.2, 0.2, 0.0], [0.2, 0.2, 0.0], a, b, c));
    }

    /// `Component/Topology/Container/Grid/SparseGridRamificationTopology.scn`: the three grids
    /// give their mechanical objects SOFA's point counts and positions at T = 0.
    #[test]
    fn ramification_scene_matches_sofa_at_t0() {
        let Some(root) = settee_testkit::suite() else {
            return;
        };
        let mut f = settee_core::Factory::new();
        crate::register(&mut f);
        let s = "Component/Topology/Container/Grid/SparseGridRamificationTopology.scn";
        let data = root.join("data");
        let obj = crate::sparse_grid::read_obj_surface(&data.join("mesh/c.obj")).unwrap();
        let cases = [([5, 2, 2], 3, false), ([5, 2, 2], 3, false), ([5, 3, 3], 0, true)];
        let shifts = [0.0, 40.0, 80.0];
        for (i, (n, levels, fc)) in cases.into_iter().enumerate() {
            let p = FinestParams { n, min: [0.0; 3], max: [0.0; 3], cell_width: 0.0, fill_weighted: true, only_inside_cells: false };
            let fine = FinestParams { n: n.map(|a| (a - 1) * (1 << levels) + 1), ..p };
            let g = RamifiedGrid::build(&p, &fine, levels, &obj, fc).unwrap();
            let file = root.join("references").join(format!("{s}.reference_{i}_MechanicalObject1_mstate.txt.gz"));
            let r = &settee_regress::reference::read_state_reference(&file).unwrap()[0];
            assert_eq!(r.time, 0.0);
            let x: Vec<f64> = g.top().points.iter().flat_map(|p| [p[0] + shifts[i], p[1], p[2]]).collect();
            assert_eq!(x.len(), r.x.len(), "grid {i}: point count");
            for (k, (a, b)) in x.iter().zip(r.x.iter()).enumerate() {
                assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "grid {i}, value {k}: {a} vs SOFA {b}");
            }
        }
    }
}
