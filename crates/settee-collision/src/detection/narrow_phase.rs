//! Narrow phase: SOFA's `BVHNarrowPhase` traversal (spec §5.1) and its parallel variant.
//!
//! Within one pair of models, SOFA's traversal emits outputs in an order fixed by its queue of
//! external cells, its LIFO stack and the row-major scan of each block of boxes (primitive
//! tests run as soon as two leaf boxes are found overlapping). The same order is produced here
//! in two steps:
//!
//! 1. *Plan* (cheap, sequential): the traversal of the cube levels, exactly as SOFA runs it,
//!    except that a block whose two ranges are both leaf boxes is not scanned but recorded as
//!    a *unit*. Leaf boxes have no internal children, so scanning such a block pushes nothing
//!    and the block's outputs are exactly what its scan emits: the list of units, in the
//!    order the traversal meets them, is the list of the pair's outputs in SOFA's order.
//! 2. *Run*: each unit is scanned — overlapping leaf-box pairs in row-major order, each
//!    followed by its primitive tests. Large blocks are not scanned box by box: each tree
//!    keeps a uniform grid over the leaf boxes of each of its blocks (`grid::BlockGrids`,
//!    rebuilt only when its leaf boxes change). The rows that may meet the columns' bounding
//!    box are looked up in the rows' grid and listed in ascending order (a bitset); each
//!    looks up the columns its box can reach in the columns' grid, tests them and runs those
//!    that overlap in ascending order: the order of SOFA's scan, at a cost linear in the
//!    boxes near the other block and the overlapping pairs rather than in rows × columns.
//!    Units (split into row ranges when large: row-major order is the concatenation of row
//!    ranges) are independent, so they can run in parallel, each into its own buffer, the
//!    buffers being concatenated in unit order afterwards.
//!
//! The search relies on one property of the box test (true of both of SOFA's tests, spec
//! §3.2): [`IntersectionMethod::boxes_overlap`] rejects boxes of models M1, M2 that are apart
//! on some axis by more than `max(0, alarm_distance() + cd(M1) + cd(M2))`. Trees holding a
//! NaN coordinate are scanned box by box (both SOFA tests accept NaN boxes).

use std::collections::VecDeque;

use rayon::prelude::*;

use crate::geometry::{Aabb, ModelGeometry, PrimitiveKind};
use crate::intersection::IntersectionMethod;
use crate::output::DetectionOutput;

use super::grid::BlockGrid;
use super::tree::{BoundingTree, Span, LEAF_LEVEL};

/// Which narrow-phase component the scene uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum NarrowPhaseKind {
    /// `BVHNarrowPhase`: map entries created pair by pair, after the pair's early checks.
    #[default]
    Bvh,
    /// `ParallelBVHNarrowPhase`: every pair's map entry created first (without the
    /// simulated/empty checks), then the pairs processed. Same outputs.
    ParallelBvh,
}

/// One pair of models to traverse, in the finest intersector's registered order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PairJob {
    pub m1: usize,
    pub m2: usize,
    /// Index of the pair's entry in the outputs map.
    pub entry: usize,
    /// Both models in one node (SOFA's `isSelfCollision`): element pairs are filtered.
    pub self_node: bool,
    /// The cube/cube intersector is registered the other way round (never in SOFA's
    /// methods; handled like SOFA's `MirrorIntersector`).
    pub cube_swap: bool,
    /// Whether a cube/cube intersector exists.
    pub cube_supported: bool,
    /// This pair's units in the unit list.
    pub units: (u32, u32),
}

/// A block of leaf boxes: rows `r1` of the first tree's leaves, columns `r2` of the second's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unit {
    pub r1: (u32, u32),
    pub r2: (u32, u32),
}

/// Everything a unit needs to run.
#[derive(Clone, Copy)]
pub(crate) struct PairCtx<'a> {
    pub t1: &'a BoundingTree,
    pub t2: &'a BoundingTree,
    pub g1: &'a ModelGeometry,
    pub g2: &'a ModelGeometry,
    pub method: &'a dyn IntersectionMethod,
    pub self_node: bool,
    pub same_model: bool,
    pub cube_swap: bool,
    /// Margin of the search's candidate test (see the module documentation).
    pub margin: f64,
    /// Blocks with more box pairs than this are searched rather than scanned.
    pub search_min: usize,
}

impl<'a> PairCtx<'a> {
    pub fn new(
        job: &PairJob,
        trees: &'a [BoundingTree],
        models: &'a [&'a ModelGeometry],
        method: &'a dyn IntersectionMethod,
        search_min: usize,
    ) -> PairCtx<'a> {
        let (g1, g2) = (&models[job.m1], &models[job.m2]);
        let d = method.alarm_distance() + g1.contact_distance + g2.contact_distance;
        // Slightly widened so that summing the three distances in another order cannot make
        // the box test accept what the search rejects.
        let margin = if d > 0.0 { d * (1.0 + 1e-9) } else { 0.0 };
        PairCtx {
            t1: &trees[job.m1],
            t2: &trees[job.m2],
            g1,
            g2,
            method,
            self_node: job.self_node,
            same_model: job.m1 == job.m2,
            cube_swap: job.cube_swap,
            margin,
            search_min,
        }
    }

    /// The coarse (cube/cube) intersector's `canIntersect`.
    #[inline]
    fn overlap(&self, a: &Aabb, b: &Aabb, same_box: bool) -> bool {
        if self.cube_swap {
            self.method.boxes_overlap(b, self.g2, a, self.g1, same_box)
        } else {
            self.method.boxes_overlap(a, self.g1, b, self.g2, same_box)
        }
    }

    /// SOFA's `finalCollisionPairs` on two ranges of primitives: every pair, filtered by the
    /// element rules for same-node pairs (spec §3.3), goes to the finest intersector.
    #[inline]
    fn final_pairs(&self, x1: (u32, u32), x2: (u32, u32), out: &mut Vec<DetectionOutput>) {
        for p1 in x1.0..x1.1 {
            for p2 in x2.0..x2.1 {
                let (p1, p2) = (p1 as usize, p2 as usize);
                if !self.self_node || ((!self.same_model || p1 < p2) && self.g1.can_collide_elements(p1, self.g2, p2, self.same_model)) {
                    self.method.intersect(self.g1, p1, self.g2, p2, out);
                }
            }
        }
    }

    /// Runs the rows `rows` (all of them, or a range of them) of one unit, appending their
    /// outputs in SOFA's order. Returns whether the block grids were used (else the rows were
    /// scanned box by box, as SOFA does).
    pub fn run_unit(&self, u: Unit, rows: (u32, u32), scratch: &mut SearchScratch, out: &mut Vec<DetectionOutput>) -> bool {
        let pairs = ((u.r1.1 - u.r1.0) as usize).saturating_mul((u.r2.1 - u.r2.0) as usize);
        if pairs > self.search_min && !self.t1.has_nan() && !self.t2.has_nan() && self.margin.is_finite() {
            let g1 = self.t1.grids().grid(u.r1.0, u.r1.1);
            let g2 = self.t2.grids().grid(u.r2.0, u.r2.1);
            if let (Some(g1), Some(g2)) = (g1, g2) {
                self.search(rows, g1, g2, scratch, out);
                return true;
            }
        }
        let (l1, l2) = (self.t1.leaves(), self.t2.leaves());
        for e1 in rows.0..rows.1 {
            let b1 = &l1[e1 as usize];
            for e2 in u.r2.0..u.r2.1 {
                let b2 = &l2[e2 as usize];
                if self.overlap(&b1.aabb, &b2.aabb, self.same_model && e1 == e2) {
                    self.final_pairs(b1.children, b2.children, out);
                }
            }
        }
        false
    }

    /// The rows `rows` of the block of `g1` against the columns of the block of `g2`: the rows
    /// that may meet the columns' bounding box are found in `g1` (cells reached by that box)
    /// and marked in a bitset, which lists them in ascending order; each such row then looks
    /// up the columns its box can reach in `g2`, tests them and runs those that overlap in
    /// ascending order — the order of SOFA's scan.
    fn search(&self, rows: (u32, u32), g1: &BlockGrid, g2: &BlockGrid, s: &mut SearchScratch, out: &mut Vec<DetectionOutput>) {
        let (l1, l2) = (self.t1.leaves(), self.t2.leaves());
        let (grids1, grids2) = (self.t1.grids(), self.t2.grids());
        let m = self.margin;
        let SearchScratch { bits, hits } = s;
        bits.clear();
        bits.resize(((rows.1 - rows.0) as usize).div_ceil(64), 0);
        let reach = &g2.bbox;
        if !near(&g1.bbox, reach, m) {
            return;
        }
        let mut touched = 0;
        g1.for_each_run(grids1, g1.cells(reach, m), |run| {
            for &e1 in &grids1.items[run] {
                let b1 = &l1[e1 as usize];
                if e1 >= rows.0 && e1 < rows.1 && near(&b1.aabb, reach, m) {
                    let i = (e1 - rows.0) as usize;
                    bits[i / 64] |= 1 << (i % 64);
                    for p in b1.children.0..b1.children.1 {
                        touched ^= touch(self.g1, p as usize);
                    }
                }
            }
        });
        std::hint::black_box(touched);
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let e1 = rows.0 + (64 * w) as u32 + word.trailing_zeros();
                word &= word - 1;
                let b1 = &l1[e1 as usize];
                let a = &b1.aabb;
                hits.clear();
                g2.for_each_run(grids2, g2.cells(a, m), |run| {
                    for &e2 in &grids2.items[run] {
                        let b2 = &l2[e2 as usize].aabb;
                        if near(a, b2, m) && self.overlap(a, b2, self.same_model && e1 == e2) {
                            hits.push(e2);
                        }
                    }
                });
                hits.sort_unstable();
                for &e2 in hits.iter() {
                    self.final_pairs(b1.children, l2[e2 as usize].children, out);
                }
            }
        }
    }
}

/// Reads what the intersection methods read of element `e` (vertex indices, triangle flags,
/// positions, radii). Called for the rows of a unit while they are gathered, it issues their
/// loads together, many in flight at once, rather than one primitive test at a time; the
/// tests then find their data in cache. Returns a value to pass to `black_box`.
#[inline]
fn touch(g: &ModelGeometry, e: usize) -> u64 {
    let pos = |v: usize| g.x.get(v).map_or(0, |p| p[0].to_bits());
    match g.kind {
        PrimitiveKind::Triangle => {
            let [a, b, c] = g.triangles.get(e).copied().unwrap_or_default();
            let flags = g.triangle_flags.get(e).copied().unwrap_or(0) as u64;
            flags ^ pos(a) ^ pos(b) ^ pos(c)
        }
        PrimitiveKind::Line => {
            let [a, b] = g.edges.get(e).copied().unwrap_or_default();
            pos(a) ^ pos(b)
        }
        PrimitiveKind::Tetrahedron => {
            let [a, b, c, d] = g.tetrahedra.get(e).copied().unwrap_or_default();
            pos(a) ^ pos(b) ^ pos(c) ^ pos(d)
        }
        _ => pos(e) ^ g.radius.get(e).map_or(0, |r| r.to_bits()),
    }
}

/// Conservative form of the box test: `a` and `b` may overlap within the margin `m`.
#[inline]
fn near(a: &Aabb, b: &Aabb, m: f64) -> bool {
    (0..3).all(|k| a.min[k] <= b.max[k] + m && b.min[k] <= a.max[k] + m)
}

/// Buffers of the search, reused.
#[derive(Clone, Debug, Default)]
pub(crate) struct SearchScratch {
    /// The rows of a unit that may meet its columns.
    bits: Vec<u64>,
    /// Columns met by the current row.
    hits: Vec<u32>,
}

impl SearchScratch {
    fn capacity(&self) -> usize {
        self.bits.capacity() + self.hits.capacity()
    }
}

/// A range of a tree level in a traversal cell: boxes, or primitives (external children).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CellRange {
    Boxes(Span),
    Primitives(u32, u32),
}

impl CellRange {
    fn is_empty(&self) -> bool {
        match *self {
            CellRange::Boxes(s) => s.is_empty(),
            CellRange::Primitives(a, b) => a == b,
        }
    }

    /// The collision model the range belongs to (a cube level, or the primitive model).
    fn model(&self) -> Option<u32> {
        match *self {
            CellRange::Boxes(s) => Some(s.level),
            CellRange::Primitives(..) => None,
        }
    }
}

/// Counters of one narrow phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NarrowStats {
    /// Units (leaf-box blocks) planned.
    pub units: usize,
    /// Units (or row ranges of units) searched through a grid over their columns rather than
    /// scanned box by box.
    pub searched_units: usize,
    /// Of those, the row ranges of units split for parallel runs.
    pub row_searches: usize,
    /// Chunks run in parallel (0 when everything ran sequentially).
    pub parallel_chunks: usize,
    /// External cells without a coarse intersector (primitive ranges: SOFA logs "Unable to
    /// find coarseIntersector" and skips them).
    pub missing_coarse: usize,
    /// External cells skipped because the previous one had the same models (SOFA passes the
    /// coarse intersector by value, spec §5.1).
    pub skipped_cells: usize,
}

/// The traversal of the cube levels of one pair (SOFA's `addCollisionPair` after the map
/// entry): appends the pair's units, in output order.
pub(crate) fn plan_pair(
    ctx: &PairCtx,
    job: &PairJob,
    units: &mut Vec<Unit>,
    stack: &mut Vec<(Span, Span)>,
    queue: &mut VecDeque<(CellRange, CellRange)>,
    stats: &mut NarrowStats,
) {
    let (Some(root1), Some(root2)) = (ctx.t1.root(), ctx.t2.root()) else {
        return;
    };
    queue.clear();
    stack.clear();
    // `initializeExternalCells`: internal/external children of both roots.
    let int1 = CellRange::Boxes(root1.subcells);
    let int2 = CellRange::Boxes(root2.subcells);
    let ext1 = CellRange::Primitives(root1.children.0, root1.children.1);
    let ext2 = CellRange::Primitives(root2.children.0, root2.children.1);
    for (a, b) in [(int1, int2), (int1, ext2), (ext1, int2), (ext1, ext2)] {
        if !a.is_empty() && !b.is_empty() {
            queue.push_back((a, b));
        }
    }
    let mut current: Option<(Option<u32>, Option<u32>)> = None;
    while let Some((c1, c2)) = queue.pop_front() {
        let models = (c1.model(), c2.model());
        if current == Some(models) {
            stats.skipped_cells += 1;
            continue;
        }
        current = Some(models);
        // SOFA's methods register no intersector between a cube model and primitives, nor the
        // primitive pairs that could meet here (depth-0 tetrahedron roots).
        let (CellRange::Boxes(s1), CellRange::Boxes(s2)) = (c1, c2) else {
            stats.missing_coarse += 1;
            continue;
        };
        if !job.cube_supported {
            stats.missing_coarse += 1;
            continue;
        }
        stack.push((s1, s2));
        while let Some((s1, s2)) = stack.pop() {
            if s1.level == LEAF_LEVEL && s2.level == LEAF_LEVEL {
                units.push(Unit { r1: (s1.start, s1.end), r2: (s2.start, s2.end) });
                continue;
            }
            let (l1, l2) = (ctx.t1.level(s1.level), ctx.t2.level(s2.level));
            let same_level = ctx.same_model && s1.level == s2.level;
            for e1 in s1.start..s1.end {
                let b1 = &l1[e1 as usize];
                for e2 in s2.start..s2.end {
                    let b2 = &l2[e2 as usize];
                    if !ctx.overlap(&b1.aabb, &b2.aabb, same_level && e1 == e2) {
                        continue;
                    }
                    let (i1, i2) = (b1.subcells, b2.subcells);
                    match (i1.is_empty(), i2.is_empty()) {
                        (false, false) => stack.push((i1, i2)),
                        (false, true) => stack.push((i1, Span { level: s2.level, start: e2, end: e2 + 1 })),
                        (true, false) => stack.push((Span { level: s1.level, start: e1, end: e1 + 1 }, i2)),
                        // Two boxes without internal children are leaf boxes; a block holding
                        // one on each side is a leaf block, planned above. Kept for safety:
                        // their primitive tests come right here in the scan.
                        (true, true) => units.push(Unit { r1: (e1, e1 + 1), r2: (e2, e2 + 1) }),
                    }
                }
            }
        }
    }
}

/// Reused buffers of the narrow phase.
#[derive(Clone, Debug, Default)]
pub(crate) struct NarrowBuffers {
    pub jobs: Vec<PairJob>,
    pub units: Vec<Unit>,
    pub stack: Vec<(Span, Span)>,
    pub queue: VecDeque<(CellRange, CellRange)>,
    pub scratch: SearchScratch,
    /// Units, or row ranges of units split for parallel runs, and the chunks they are
    /// grouped into.
    pub items: Vec<(Unit, (u32, u32))>,
    pub chunks: Vec<Chunk>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Chunk {
    job: u32,
    /// Searched items, and of those the row ranges of split units.
    searched: [usize; 2],
    items: (u32, u32),
    out: Vec<DetectionOutput>,
    scratch: SearchScratch,
}

impl NarrowBuffers {
    pub fn capacity(&self) -> usize {
        self.jobs.capacity()
            + self.units.capacity()
            + self.stack.capacity()
            + self.queue.capacity()
            + self.scratch.capacity()
            + self.items.capacity()
            + self.chunks.capacity()
            + self.chunks.iter().map(|c| c.out.capacity() + c.scratch.capacity()).sum::<usize>()
    }
}

/// Estimated cost of a unit, in box tests.
fn unit_cost(u: &Unit, search_min: usize) -> usize {
    let rows = (u.r1.1 - u.r1.0) as usize;
    let cols = (u.r2.1 - u.r2.0) as usize;
    let brute = rows.saturating_mul(cols);
    if brute > search_min {
        4 * (rows + cols)
    } else {
        brute
    }
}

/// Smallest chunk worth a task, in box tests.
const MIN_CHUNK_COST: usize = 4096;

/// Runs every job's units, writing each job's outputs into `outputs(job.entry)` in SOFA's
/// order. Uses rayon when `parallel` and the estimated work reaches `parallel_min_work`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_units(
    bufs: &mut NarrowBuffers,
    trees: &[BoundingTree],
    models: &[&ModelGeometry],
    method: &dyn IntersectionMethod,
    search_min: usize,
    parallel: bool,
    parallel_min_work: usize,
    entries: &mut [super::PairOutputs],
    stats: &mut NarrowStats,
) {
    let NarrowBuffers { jobs, units, scratch, items, chunks, .. } = bufs;
    let total: usize = units.iter().map(|u| unit_cost(u, search_min)).sum();
    if !parallel || total < parallel_min_work {
        for job in jobs.iter() {
            let ctx = PairCtx::new(job, trees, models, method, search_min);
            let out = &mut entries[job.entry].outputs;
            for u in &units[job.units.0 as usize..job.units.1 as usize] {
                stats.searched_units += ctx.run_unit(*u, u.r1, scratch, out) as usize;
            }
        }
        return;
    }
    // Chunks of consecutive units of one job, big units split into row ranges.
    let target = (total / (4 * rayon::current_num_threads())).max(MIN_CHUNK_COST);
    items.clear();
    let mut n_chunks = 0;
    for (j, job) in jobs.iter().enumerate() {
        let mut cost = 0;
        let mut chunk_open = false;
        for u in &units[job.units.0 as usize..job.units.1 as usize] {
            let c = unit_cost(u, search_min);
            let rows = (u.r1.1 - u.r1.0) as u64;
            let pieces = if c > target { ((c / target + 1) as u64).min(rows) } else { 1 };
            for p in 0..pieces {
                let piece = Unit { r1: (u.r1.0 + (rows * p / pieces) as u32, u.r1.0 + (rows * (p + 1) / pieces) as u32), r2: u.r2 };
                let piece_cost = unit_cost(&piece, search_min);
                if !chunk_open || (cost > 0 && cost + piece_cost > target) {
                    if n_chunks == chunks.len() {
                        chunks.push(Chunk::default());
                    }
                    let start = items.len() as u32;
                    let ch = &mut chunks[n_chunks];
                    ch.job = j as u32;
                    ch.items = (start, start);
                    ch.out.clear();
                    n_chunks += 1;
                    chunk_open = true;
                    cost = 0;
                }
                items.push((*u, piece.r1));
                cost += piece_cost;
                chunks[n_chunks - 1].items.1 = items.len() as u32;
            }
        }
    }
    stats.parallel_chunks = n_chunks;
    let jobs = &*jobs;
    let items = &*items;
    chunks[..n_chunks].par_iter_mut().for_each(|c| {
        let ctx = PairCtx::new(&jobs[c.job as usize], trees, models, method, search_min);
        c.searched = [0; 2];
        for &(u, rows) in &items[c.items.0 as usize..c.items.1 as usize] {
            let searched = ctx.run_unit(u, rows, &mut c.scratch, &mut c.out);
            c.searched[0] += searched as usize;
            c.searched[1] += (searched && rows != u.r1) as usize;
        }
    });
    for c in &mut chunks[..n_chunks] {
        let out = &mut entries[jobs[c.job as usize].entry].outputs;
        out.extend_from_slice(&c.out);
        c.out.clear();
        stats.searched_units += c.searched[0];
        stats.row_searches += c.searched[1];
    }
}
