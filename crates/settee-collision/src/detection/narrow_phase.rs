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
//!    followed by its primitive tests. Large blocks are not scanned box by box: their
//!    overlapping leaf-box pairs are found through search trees kept below SOFA's finest
//!    boxes (`tree::SearchTrees`) — a simultaneous descent of the trees of both ranges, or,
//!    for rows without a tree of their own, one descent of the columns' tree per row — and
//!    then run row by row, columns ascending: the order of SOFA's scan. Units (split into
//!    row ranges when large: row-major order is the concatenation of row ranges) are
//!    independent, so they can run in parallel, each into its own buffer, the buffers being
//!    concatenated in unit order afterwards.
//!
//! The search relies on one property of the box test (true of both of SOFA's tests, spec
//! §3.2): [`IntersectionMethod::boxes_overlap`] rejects boxes of models M1, M2 that are apart
//! on some axis by more than `max(0, alarm_distance() + cd(M1) + cd(M2))`. Trees holding a
//! NaN coordinate are scanned box by box (both SOFA tests accept NaN boxes).

use std::collections::VecDeque;

use rayon::prelude::*;

use crate::geometry::{Aabb, ModelGeometry};
use crate::intersection::IntersectionMethod;
use crate::output::DetectionOutput;

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
                if !self.self_node
                    || ((!self.same_model || p1 < p2)
                        && self
                            .g1
                            .can_collide_elements(p1, self.g2, p2, self.same_model))
                {
                    self.method.intersect(self.g1, p1, self.g2, p2, out);
                }
            }
        }
    }

    /// Scans one unit, appending its outputs in SOFA's order. Returns how: 0 box by box,
    /// 1 through both search trees, 2 row by row through the columns' search tree.
    pub fn run_unit(
        &self,
        u: Unit,
        scratch: &mut SearchScratch,
        out: &mut Vec<DetectionOutput>,
    ) -> u8 {
        let rows = (u.r1.1 - u.r1.0) as usize;
        let cols = (u.r2.1 - u.r2.0) as usize;
        if rows.saturating_mul(cols) > self.search_min {
            if let Some(root2) = self.t2.search_root(u.r2.0, u.r2.1) {
                if let Some(root1) = self.t1.search_root(u.r1.0, u.r1.1) {
                    self.search_pairs(u, root1, root2, scratch, out);
                    return 1;
                }
                if !self.t1.has_nan() {
                    self.search_rows(u, root2, scratch, out);
                    return 2;
                }
            }
        }
        let (l1, l2) = (self.t1.leaves(), self.t2.leaves());
        for e1 in u.r1.0..u.r1.1 {
            let b1 = &l1[e1 as usize];
            for e2 in u.r2.0..u.r2.1 {
                let b2 = &l2[e2 as usize];
                if self.overlap(&b1.aabb, &b2.aabb, self.same_model && e1 == e2) {
                    self.final_pairs(b1.children, b2.children, out);
                }
            }
        }
        0
    }

    /// The unit through both search trees at once: candidate pairs from a simultaneous
    /// descent, bucketed by row (counting sort), each row's columns sorted, then run in that
    /// order — the order of SOFA's scan.
    fn search_pairs(
        &self,
        u: Unit,
        root1: u32,
        root2: u32,
        s: &mut SearchScratch,
        out: &mut Vec<DetectionOutput>,
    ) {
        let (l1, l2) = (self.t1.leaves(), self.t2.leaves());
        let (tree1, tree2) = (self.t1.search_trees(), self.t2.search_trees());
        let m = self.margin;
        let near = |a: &Aabb, b: &Aabb| {
            (0..3).all(|k| a.min[k] <= b.max[k] + m && b.min[k] <= a.max[k] + m)
        };
        s.pairs.clear();
        s.node_pairs.clear();
        s.node_pairs.push((root1, root2));
        while let Some((n1, n2)) = s.node_pairs.pop() {
            let (a, b) = (&tree1.nodes[n1 as usize], &tree2.nodes[n2 as usize]);
            if !near(&a.aabb, &b.aabb) {
                continue;
            }
            match (a.leaf, b.leaf) {
                (true, true) => {
                    let (p1, p2) = (a.a as usize..a.b as usize, b.a as usize..b.b as usize);
                    let boxes2 = &tree2.boxes[p2.clone()];
                    for (&e1, b1) in tree1.perm[p1.clone()].iter().zip(&tree1.boxes[p1]) {
                        for (&e2, b2) in tree2.perm[p2.clone()].iter().zip(boxes2) {
                            if near(b1, b2) && self.overlap(b1, b2, self.same_model && e1 == e2) {
                                s.pairs.push((e1 - u.r1.0, e2));
                            }
                        }
                    }
                }
                (true, false) => {
                    s.node_pairs.push((n1, b.b));
                    s.node_pairs.push((n1, b.a));
                }
                (false, true) => {
                    s.node_pairs.push((a.b, n2));
                    s.node_pairs.push((a.a, n2));
                }
                (false, false) => {
                    // Descend the node with more leaf boxes under it.
                    if a.count >= b.count {
                        s.node_pairs.push((a.b, n2));
                        s.node_pairs.push((a.a, n2));
                    } else {
                        s.node_pairs.push((n1, b.b));
                        s.node_pairs.push((n1, b.a));
                    }
                }
            }
        }
        // Counting sort by row, then each row's columns in ascending order.
        let rows = (u.r1.1 - u.r1.0) as usize;
        s.row_start.clear();
        s.row_start.resize(rows + 1, 0);
        for &(r, _) in &s.pairs {
            s.row_start[r as usize + 1] += 1;
        }
        for r in 0..rows {
            s.row_start[r + 1] += s.row_start[r];
        }
        s.cand.clear();
        s.cand.resize(s.pairs.len(), 0);
        for &(r, c) in &s.pairs {
            let slot = &mut s.row_start[r as usize];
            s.cand[*slot as usize] = c;
            *slot += 1;
        }
        // row_start[r] now holds the end of row r.
        let mut begin = 0;
        for r in 0..rows {
            let end = s.row_start[r] as usize;
            if end > begin {
                let cols = &mut s.cand[begin..end];
                cols.sort_unstable();
                let x1 = l1[u.r1.0 as usize + r].children;
                for &e2 in cols.iter() {
                    self.final_pairs(x1, l2[e2 as usize].children, out);
                }
            }
            begin = end;
        }
    }

    /// The unit row by row: the leaf boxes of the columns that overlap the row's box are
    /// found through the columns' search tree, then run in ascending order — the order of
    /// SOFA's scan.
    fn search_rows(
        &self,
        u: Unit,
        root: u32,
        s: &mut SearchScratch,
        out: &mut Vec<DetectionOutput>,
    ) {
        let (l1, l2) = (self.t1.leaves(), self.t2.leaves());
        let tree = self.t2.search_trees();
        let m = self.margin;
        // Conservative form of the box test: `a` and `b` may overlap within the margin.
        let near = |a: &Aabb, b: &Aabb| {
            (0..3).all(|k| a.min[k] <= b.max[k] + m && b.min[k] <= a.max[k] + m)
        };
        for e1 in u.r1.0..u.r1.1 {
            let b1 = &l1[e1 as usize];
            s.cand.clear();
            s.stack.clear();
            s.stack.push(root);
            while let Some(n) = s.stack.pop() {
                let node = &tree.nodes[n as usize];
                if !near(&b1.aabb, &node.aabb) {
                    continue;
                }
                if !node.leaf {
                    s.stack.push(node.b);
                    s.stack.push(node.a);
                    continue;
                }
                let items = node.a as usize..node.b as usize;
                for (&e2, b2) in tree.perm[items.clone()].iter().zip(&tree.boxes[items]) {
                    if near(&b1.aabb, b2) && self.overlap(&b1.aabb, b2, self.same_model && e1 == e2)
                    {
                        s.cand.push(e2);
                    }
                }
            }
            s.cand.sort_unstable();
            for &e2 in &s.cand {
                self.final_pairs(b1.children, l2[e2 as usize].children, out);
            }
        }
    }
}

/// Buffers of the search, reused.
#[derive(Clone, Debug, Default)]
pub(crate) struct SearchScratch {
    stack: Vec<u32>,
    cand: Vec<u32>,
    node_pairs: Vec<(u32, u32)>,
    /// Candidate pairs (row within the unit, column leaf box).
    pairs: Vec<(u32, u32)>,
    row_start: Vec<u32>,
}

impl SearchScratch {
    fn capacity(&self) -> usize {
        self.stack.capacity()
            + self.cand.capacity()
            + self.node_pairs.capacity()
            + self.pairs.capacity()
            + self.row_start.capacity()
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
    /// Units (or row ranges of units) run through the search trees.
    pub searched_units: usize,
    /// Of those, the ones searched row by row (row ranges of split units, single rows).
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
                units.push(Unit {
                    r1: (s1.start, s1.end),
                    r2: (s2.start, s2.end),
                });
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
                        (false, true) => stack.push((
                            i1,
                            Span {
                                level: s2.level,
                                start: e2,
                                end: e2 + 1,
                            },
                        )),
                        (true, false) => stack.push((
                            Span {
                                level: s1.level,
                                start: e1,
                                end: e1 + 1,
                            },
                            i2,
                        )),
                        // Two boxes without internal children are leaf boxes; a block holding
                        // one on each side is a leaf block, planned above. Kept for safety:
                        // their primitive tests come right here in the scan.
                        (true, true) => units.push(Unit {
                            r1: (e1, e1 + 1),
                            r2: (e2, e2 + 1),
                        }),
                    }
                }
            }
        }
    }
}

/// Reused buffers of the narrow phase.
#[derive(Debug, Default)]
pub(crate) struct NarrowBuffers {
    pub jobs: Vec<PairJob>,
    pub units: Vec<Unit>,
    pub stack: Vec<(Span, Span)>,
    pub queue: VecDeque<(CellRange, CellRange)>,
    pub scratch: SearchScratch,
    /// Units split for parallel runs, and the chunks they are grouped into.
    pub items: Vec<Unit>,
    pub chunks: Vec<Chunk>,
}

#[derive(Debug, Default)]
pub(crate) struct Chunk {
    job: u32,
    searched: [usize; 3],
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
            + self
                .chunks
                .iter()
                .map(|c| c.out.capacity() + c.scratch.capacity())
                .sum::<usize>()
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
    let NarrowBuffers {
        jobs,
        units,
        scratch,
        items,
        chunks,
        ..
    } = bufs;
    let total: usize = units.iter().map(|u| unit_cost(u, search_min)).sum();
    if !parallel || total < parallel_min_work {
        for job in jobs.iter() {
            let ctx = PairCtx::new(job, trees, models, method, search_min);
            let out = &mut entries[job.entry].outputs;
            for u in &units[job.units.0 as usize..job.units.1 as usize] {
                let how = ctx.run_unit(*u, scratch, out);
                stats.searched_units += (how > 0) as usize;
                stats.row_searches += (how == 2) as usize;
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
            let pieces = if c > target {
                ((c / target + 1) as u64).min(rows)
            } else {
                1
            };
            for p in 0..pieces {
                let piece = Unit {
                    r1: (
                        u.r1.0 + (rows * p / pieces) as u32,
                        u.r1.0 + (rows * (p + 1) / pieces) as u32,
                    ),
                    r2: u.r2,
                };
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
                items.push(piece);
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
        c.searched = [0; 3];
        for u in &items[c.items.0 as usize..c.items.1 as usize] {
            c.searched[ctx.run_unit(*u, &mut c.scratch, &mut c.out) as usize] += 1;
        }
    });
    for c in &mut chunks[..n_chunks] {
        let out = &mut entries[jobs[c.job as usize].entry].outputs;
        out.extend_from_slice(&c.out);
        c.out.clear();
        stats.searched_units += c.searched[1] + c.searched[2];
        stats.row_searches += c.searched[2];
    }
}
