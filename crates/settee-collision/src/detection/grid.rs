//! Uniform grids over the leaf boxes of each block of a bounding tree (a *block* is the range
//! of leaf boxes under one cube-level box), used by the narrow phase to find which leaf boxes
//! of two blocks overlap without testing every pair.
//!
//! Each leaf box is binned by its min corner. Cells are at least as wide as the widest box of
//! the block (where the grid has more than one cell along an axis), and a grid has at most two
//! cells per box. A box `b` that the box test could accept against a query box `q` with margin
//! `m` (see the narrow phase's module documentation) has, on each axis `k`, its min corner in
//! `[q.min − m − w_k, q.max + m]` (`w_k` the block's widest extent). [`BlockGrid::cells`] maps
//! that interval to a range of cells through monotone operations (subtraction,
//! multiplication by a positive factor, truncation, clamping), its low end lowered by a bound
//! on the rounding of the operations involved, so no such box is missed. Blocks holding a NaN
//! coordinate have no grid (the narrow phase scans them).
//!
//! The grids depend only on the leaf boxes: they are rebuilt when a tree's leaf boxes change and
//! kept while they do not (non-moving models).

use crate::geometry::{Aabb, Vec3};

use super::tree::{CubeBox, LEAF_LEVEL};

const NONE: u32 = u32::MAX;

/// The grid of one block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockGrid {
    /// The block's leaf boxes.
    pub range: (u32, u32),
    /// Union of the block's leaf boxes.
    pub bbox: Aabb,
    /// Largest extent of a leaf box of the block, per axis.
    widest: [f64; 3],
    dims: [usize; 3],
    /// Cells per unit length (0 along axes with one cell).
    inv: [f64; 3],
    /// Rounding allowance of [`BlockGrid::cells`] independent of the query box.
    slack: [f64; 3],
    /// Position of the grid's first cell boundary in [`BlockGrids::cell_start`].
    cells_at: usize,
}

impl BlockGrid {
    /// Cell index along axis `k` of coordinate `x`: monotone in `x`.
    #[inline]
    fn index(&self, k: usize, x: f64) -> usize {
        if self.dims[k] == 1 {
            return 0;
        }
        // `as` saturates (and maps NaN to 0); the clamp keeps the order.
        (((x - self.bbox.min[k]) * self.inv[k]) as i64).clamp(0, self.dims[k] as i64 - 1) as usize
    }

    fn cell_of(&self, p: &Vec3) -> usize {
        (self.index(2, p[2]) * self.dims[1] + self.index(1, p[1])) * self.dims[0] + self.index(0, p[0])
    }

    /// Inclusive cell ranges, per axis, holding the min corner of every leaf box of the block
    /// that may meet `q` within the margin `m`.
    #[inline]
    pub fn cells(&self, q: &Aabb, m: f64) -> [(usize, usize); 3] {
        let mut r = [(0, 0); 3];
        for (k, r) in r.iter_mut().enumerate() {
            if self.dims[k] > 1 {
                // Roundings: the box test's `max + d`, the block's `max − min` (widest), this
                // subtraction and the one of the origin in `index`, each at most ε/2 of a
                // magnitude below |q.min| + m + w + the block's largest |coordinate|.
                let low = (q.min[k] - (m + self.widest[k])) - (self.slack[k] + 4.0 * f64::EPSILON * (q.min[k].abs() + m));
                *r = (self.index(k, low), self.index(k, q.max[k] + m));
            }
        }
        r
    }

    /// The ranges of [`BlockGrids::items`] holding the cells `cells` (one range per row of
    /// cells along x, which are contiguous), passed to `f`.
    #[inline]
    pub fn for_each_run(&self, grids: &BlockGrids, cells: [(usize, usize); 3], mut f: impl FnMut(std::ops::Range<usize>)) {
        let [(x0, x1), (y0, y1), (z0, z1)] = cells;
        let starts = &grids.cell_start[self.cells_at..];
        let mut z = z0;
        while z <= z1 {
            let mut y = y0;
            while y <= y1 {
                let row = (z * self.dims[1] + y) * self.dims[0];
                f(starts[row + x0] as usize..starts[row + x1 + 1] as usize);
                y += 1;
            }
            z += 1;
        }
    }
}

/// The grids of every block of a tree.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockGrids {
    /// Grid of the block starting at each leaf box (`NONE` elsewhere).
    of_start: Vec<u32>,
    grids: Vec<BlockGrid>,
    /// Cell boundaries of every grid (positions in `items`), `cells + 1` per grid.
    cell_start: Vec<u32>,
    /// Leaf box indices of each block in cell order (ascending within a cell); a block's
    /// entries occupy its own range.
    pub items: Vec<u32>,
    /// Scratch: the cell of each leaf box.
    cell_of: Vec<u32>,
}

impl BlockGrids {
    pub fn clear(&mut self) {
        self.of_start.clear();
        self.grids.clear();
        self.cell_start.clear();
        self.items.clear();
        self.cell_of.clear();
    }

    pub fn capacity(&self) -> usize {
        self.of_start.capacity() + self.grids.capacity() + self.cell_start.capacity() + self.items.capacity() + self.cell_of.capacity()
    }

    /// The grid of the block `start..end`, if there is one.
    #[inline]
    pub fn grid(&self, start: u32, end: u32) -> Option<&BlockGrid> {
        let g = self.grids.get(*self.of_start.get(start as usize)? as usize)?;
        (g.range.1 == end).then_some(g)
    }

    /// Grids for the blocks of `cubes` over `leaves` (no NaN coordinate).
    pub fn build(&mut self, cubes: &[Vec<CubeBox>], leaves: &[CubeBox]) {
        self.clear();
        let n = leaves.len();
        self.of_start.resize(n, NONE);
        self.items.resize(n, 0);
        self.cell_of.resize(n, 0);
        for level in cubes {
            for cell in level {
                let s = cell.subcells;
                if s.level == LEAF_LEVEL && s.start < s.end {
                    self.of_start[s.start as usize] = self.grids.len() as u32;
                    self.build_block(leaves, s.start, s.end);
                }
            }
        }
    }

    fn build_block(&mut self, leaves: &[CubeBox], start: u32, end: u32) {
        let boxes = &leaves[start as usize..end as usize];
        let n = boxes.len();
        let mut bbox = boxes[0].aabb;
        let mut widest = [0.0f64; 3];
        for b in boxes {
            bbox.min = bbox.min.inf(&b.aabb.min);
            bbox.max = bbox.max.sup(&b.aabb.max);
            for (k, w) in widest.iter_mut().enumerate() {
                *w = w.max(b.aabb.max[k] - b.aabb.min[k]);
            }
        }
        let mut dims = [1usize; 3];
        let mut slack = [0.0; 3];
        for k in 0..3 {
            let extent = bbox.max[k] - bbox.min[k];
            if n > 4 && extent > 0.0 && extent.is_finite() {
                // Cells no narrower than the widest box.
                let fit = if widest[k] > 0.0 { extent / widest[k] } else { n as f64 };
                dims[k] = (fit.min(n as f64) as usize).max(1);
            }
            let magnitude = bbox.min[k].abs().max(bbox.max[k].abs()) + widest[k];
            slack[k] = 4.0 * f64::EPSILON * magnitude;
        }
        while dims[0].saturating_mul(dims[1]).saturating_mul(dims[2]) > 2 * n {
            let k = (0..3).max_by_key(|&k| dims[k]).unwrap_or(0);
            dims[k] = dims[k].div_ceil(2);
        }
        let mut inv = [0.0; 3];
        for k in 0..3 {
            if dims[k] > 1 {
                inv[k] = dims[k] as f64 / (bbox.max[k] - bbox.min[k]);
            }
        }
        let grid = BlockGrid { range: (start, end), bbox, widest, dims, inv, slack, cells_at: self.cell_start.len() };
        // Counting sort of the block's leaf boxes by cell, stable.
        let cells = dims[0] * dims[1] * dims[2];
        let at = grid.cells_at;
        self.cell_start.resize(at + cells + 1, 0);
        let counts = &mut self.cell_start[at..];
        let cell_of = &mut self.cell_of[start as usize..end as usize];
        for (c, b) in cell_of.iter_mut().zip(boxes) {
            *c = grid.cell_of(&b.aabb.min) as u32;
            counts[*c as usize + 1] += 1;
        }
        counts[0] = start;
        for c in 1..=cells {
            counts[c] += counts[c - 1];
        }
        // counts[c] is the start of cell c; fill, advancing the starts, then shift them back.
        for (i, &c) in cell_of.iter().enumerate() {
            let slot = &mut counts[c as usize];
            self.items[*slot as usize] = start + i as u32;
            *slot += 1;
        }
        for c in (1..=cells).rev() {
            counts[c] = counts[c - 1];
        }
        counts[0] = start;
        self.grids.push(grid);
    }
}
