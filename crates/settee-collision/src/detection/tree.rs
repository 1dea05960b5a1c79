//! Bounding trees: SOFA's hierarchy of `CubeCollisionModel` levels above each primitive model
//! (spec §3.2), with the leaf boxes each primitive model computes (spec §8).
//!
//! A tree is a list of cube levels, root first, above one leaf box per primitive element.
//! Every box of a cube level has internal children (a range of boxes one or more levels down);
//! every leaf box has external children (the primitive elements it bounds, one per leaf box).
//! The partition of elements into boxes is decided at the first build and then only refitted
//! (spec §3.2), so the order of detection outputs stays the one SOFA produces.

use crate::geometry::{Aabb, ModelGeometry, PrimitiveKind, Vec3};

use super::grid::BlockGrids;
use super::DetectionError;

/// The level of [`Span`]s that address leaf boxes.
pub const LEAF_LEVEL: u32 = u32::MAX;

/// A half-open range of boxes of one level of a tree (`level` is a cube level index, root = 0,
/// or [`LEAF_LEVEL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub level: u32,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const EMPTY: Span = Span { level: LEAF_LEVEL, start: 0, end: 0 };

    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// One box of a tree (SOFA's `CubeData` without the normal cone, which only `useCurvature`
/// uses).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubeBox {
    pub aabb: Aabb,
    /// Internal children: boxes of a finer level; empty for leaf boxes.
    pub subcells: Span,
    /// External children: half-open range of primitive elements; one element for leaf boxes,
    /// empty for the boxes of cube levels.
    pub children: (u32, u32),
}

impl CubeBox {
    fn leaf(element: u32) -> CubeBox {
        CubeBox { aabb: Aabb::point(Vec3::zeros()), subcells: Span::EMPTY, children: (element, element + 1) }
    }
}

/// What [`BoundingTree::update`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeUpdate {
    /// Non-moving model with an existing tree: nothing recomputed (spec §3.2).
    Skipped,
    /// Leaf boxes recomputed, levels refitted over the frozen partition.
    Refitted,
    /// Levels built (first detection, element count change, depth change or forced).
    Built,
    /// The model has no element: the tree is empty.
    Empty,
}

/// The bounding tree of one collision model.
#[derive(Clone, Debug, Default)]
pub struct BoundingTree {
    kind: Option<PrimitiveKind>,
    /// Element count the leaf boxes were made for.
    n: usize,
    /// Depth of the built levels, `None` before the first build (or after a reset).
    built_depth: Option<u32>,
    /// Cube levels above the leaf boxes, root level first.
    cubes: Vec<Vec<CubeBox>>,
    /// Leaf boxes, in the order the builds left them.
    leaves: Vec<CubeBox>,
    /// Element index → leaf box index.
    parent_of: Vec<u32>,
    /// Tetrahedron model with depth 0: the root is a single leaf box holding every element
    /// (spec §8.7) and there is no cube level.
    root_is_leaf: bool,
    /// Set by [`BoundingTree::invalidate`]: the next update starts again from element order.
    reset_pending: bool,
    /// A leaf box holds a NaN coordinate (the narrow phase then scans every block box by box).
    has_nan: bool,
    /// Grids over the leaf boxes of each block (empty when `has_nan`).
    grids: BlockGrids,
}

/// Above this many leaf boxes, leaf boxes are computed in parallel chunks when asked to.
const PARALLEL_LEAVES: usize = 1 << 14;

/// The deepest level a tree can fill (see `build`).
const MAX_FILLED_DEPTH: u32 = 64;

impl BoundingTree {
    pub fn new() -> BoundingTree {
        BoundingTree::default()
    }

    /// Cube levels, root level first (empty for an empty tree and for the depth-0 tetrahedron
    /// tree, whose root is its single leaf box).
    pub fn levels(&self) -> &[Vec<CubeBox>] {
        &self.cubes
    }

    /// Leaf boxes in their current order.
    pub fn leaves(&self) -> &[CubeBox] {
        &self.leaves
    }

    /// SOFA's `parentOf`: the leaf box of each element.
    pub fn parent_of(&self) -> &[u32] {
        &self.parent_of
    }

    /// Whether the root is a leaf box (depth-0 tetrahedron tree).
    pub fn root_is_leaf(&self) -> bool {
        self.root_is_leaf
    }

    /// The root box (SOFA's `first()` model's only element), `None` when the model has no
    /// element.
    pub fn root(&self) -> Option<&CubeBox> {
        if self.root_is_leaf {
            self.leaves.first()
        } else {
            self.cubes.first().and_then(|l| l.first())
        }
    }

    /// The level the root box belongs to.
    pub fn root_level(&self) -> u32 {
        if self.root_is_leaf {
            LEAF_LEVEL
        } else {
            0
        }
    }

    /// The boxes of a level.
    #[inline]
    pub fn level(&self, level: u32) -> &[CubeBox] {
        if level == LEAF_LEVEL {
            &self.leaves
        } else {
            &self.cubes[level as usize]
        }
    }

    /// Whether a leaf box holds a NaN coordinate.
    pub(crate) fn has_nan(&self) -> bool {
        self.has_nan
    }

    /// The grids over the leaf boxes of each block (see [`BlockGrids`]).
    pub(crate) fn grids(&self) -> &BlockGrids {
        &self.grids
    }

    /// Forces the next update to rebuild from element order (SOFA does this when the model's
    /// topology changes without changing its element count).
    pub fn invalidate(&mut self) {
        self.reset_pending = true;
    }

    /// Capacity of every buffer, for memory checks.
    pub fn capacity(&self) -> usize {
        self.cubes.capacity()
            + self.cubes.iter().map(|l| l.capacity()).sum::<usize>()
            + self.leaves.capacity()
            + self.parent_of.capacity()
            + self.grids.capacity()
    }

    /// SOFA's `computeBoundingTree(depth)` of the model (spec §3.2, §8): leaf boxes from the
    /// current geometry, then build or refit. `model` only labels errors.
    pub fn update(&mut self, model: usize, g: &ModelGeometry, depth: u32, parallel: bool) -> Result<TreeUpdate, DetectionError> {
        let n = g.len();
        if n >= u32::MAX as usize {
            return Err(DetectionError::TooManyElements { model, name: g.name.clone(), count: n });
        }
        if matches!(g.kind, PrimitiveKind::Sphere | PrimitiveKind::RigidSphere) && g.radius.len() < n {
            return Err(DetectionError::MissingRadius { model, name: g.name.clone(), spheres: n, radii: g.radius.len() });
        }
        let changed = self.kind != Some(g.kind) || self.n != n || self.reset_pending;
        let has_boxes = !self.leaves.is_empty();
        // Non-moving models never update an existing tree, unless their element count
        // changed. (SOFA's tetrahedron model returns early even then, keeping a tree over
        // elements that may no longer exist; we rebuild.)
        if !g.moving && has_boxes && !changed {
            return Ok(TreeUpdate::Skipped);
        }
        if changed {
            // Sphere, point, line and triangle models reset their leaf level to element order
            // when their size (topology) changes (`cubeModel->resize(0)`), which also empties
            // the levels above. (SOFA's tetrahedron model only resizes it, keeping the old
            // leaf order on growth and breaking on shrinkage; we reset it too.)
            self.kind = Some(g.kind);
            self.n = n;
            self.reset_pending = false;
            self.built_depth = None;
            self.root_is_leaf = false;
            self.leaves.clear();
            self.parent_of.clear();
            for l in &mut self.cubes {
                l.clear();
            }
        }
        if n == 0 {
            self.built_depth = None;
            self.root_is_leaf = false;
            self.leaves.clear();
            for l in &mut self.cubes {
                l.clear();
            }
            self.has_nan = false;
            self.grids.clear();
            return Ok(TreeUpdate::Empty);
        }
        if g.kind == PrimitiveKind::Tetrahedron && depth == 0 {
            return self.tetrahedra_single_box(model, g);
        }
        if self.root_is_leaf || self.leaves.len() != n {
            // First build, size change, or leaving the depth-0 tetrahedron shape: element order.
            self.root_is_leaf = false;
            self.built_depth = None;
            self.leaves.clear();
            self.leaves.extend((0..n as u32).map(CubeBox::leaf));
            self.parent_of.clear();
            self.parent_of.extend(0..n as u32);
        }
        self.has_nan = self.compute_leaf_boxes(model, g, parallel)?;
        let update = if self.built_depth == Some(depth) {
            self.refit();
            TreeUpdate::Refitted
        } else {
            // A depth change rebuilds from the current leaf order, as SOFA does (its leaf
            // level is not reset then).
            self.build(depth);
            TreeUpdate::Built
        };
        if self.has_nan {
            self.grids.clear();
        } else {
            self.grids.build(&self.cubes, &self.leaves);
        }
        Ok(update)
    }

    /// The leaf box of every element, written in leaf order (each leaf box knows its
    /// element), with each model's own arithmetic (spec §8). Returns whether a box holds a
    /// NaN.
    fn compute_leaf_boxes(&mut self, model: usize, g: &ModelGeometry, parallel: bool) -> Result<bool, DetectionError> {
        let fill = |boxes: &mut [CubeBox]| -> Result<bool, usize> {
            let mut nan = false;
            for b in boxes {
                let e = b.children.0 as usize;
                b.aabb = leaf_box(g, e).ok_or(e)?;
                nan |= b.aabb.min.iter().chain(b.aabb.max.iter()).any(|v| v.is_nan());
            }
            Ok(nan)
        };
        let result = if parallel && self.leaves.len() >= PARALLEL_LEAVES {
            use rayon::prelude::*;
            self.leaves.par_chunks_mut(PARALLEL_LEAVES / 4).map(fill).try_reduce(|| false, |a, b| Ok(a | b))
        } else {
            fill(&mut self.leaves)
        };
        // The first bad element in element-box order, also when chunks ran in parallel.
        result.or_else(|_| fill(&mut self.leaves)).map_err(|element| bad_element(model, g, element))
    }

    /// Depth-0 tetrahedron tree (SOFA's `TetrahedronCollisionModel::computeBoundingTree` with
    /// `maxDepth == 0`): one box around every DOF of the state (not only the tetrahedra's
    /// vertices, and not inflated by the contact distance) whose external children are all
    /// the tetrahedra.
    fn tetrahedra_single_box(&mut self, model: usize, g: &ModelGeometry) -> Result<TreeUpdate, DetectionError> {
        let n = g.len();
        if let Some(e) = g.tetrahedra.iter().position(|t| t.iter().any(|&v| v >= g.x.len())) {
            return Err(bad_element(model, g, e));
        }
        let mut min = g.x[0];
        let mut max = g.x[0];
        for p in &g.x[1..] {
            for c in 0..3 {
                if p[c] > max[c] {
                    max[c] = p[c];
                } else if p[c] < min[c] {
                    min[c] = p[c];
                }
            }
        }
        for l in &mut self.cubes {
            l.clear();
        }
        self.leaves.clear();
        self.leaves.push(CubeBox { aabb: Aabb { min, max }, subcells: Span::EMPTY, children: (0, n as u32) });
        self.parent_of.clear();
        self.has_nan = false;
        self.grids.clear();
        self.root_is_leaf = true;
        self.built_depth = None;
        Ok(TreeUpdate::Built)
    }

    /// SOFA's build (`CubeCollisionModel::computeBoundingTree` when the root is empty): a root
    /// box over all leaf boxes, then each level's boxes with more than 4 leaf boxes split in
    /// two halves along their longest side, after a stable sort of their leaf boxes by
    /// `min + max` on that axis.
    fn build(&mut self, depth: u32) {
        // A box with more than 4 leaf boxes splits in halves, so no tree has a box below level
        // 64 (2⁶⁴ leaf boxes would be split down to 4 by then): deeper levels would stay empty.
        // Keeping at most 64 of them gives the same tree for any depth a scene asks for, in
        // bounded memory and time.
        let levels = depth.min(MAX_FILLED_DEPTH) as usize + 1;
        self.cubes.resize_with(levels, Vec::new);
        self.cubes.truncate(levels);
        for l in &mut self.cubes {
            l.clear();
        }
        let n = self.leaves.len() as u32;
        let root = union_box(&self.leaves, 0, n);
        self.cubes[0].push(root);
        for lvl in 0..levels - 1 {
            let (upper, lower) = self.cubes.split_at_mut(lvl + 1);
            let level = &mut upper[lvl];
            let next = &mut lower[0];
            for cell in level.iter_mut() {
                // At this point every box of the level has leaf boxes as children.
                let Span { start, end, .. } = cell.subcells;
                let count = end - start;
                if count <= 4 {
                    continue;
                }
                let ext = cell.aabb.max - cell.aabb.min;
                let axis = if ext[0] > ext[1] {
                    if ext[0] > ext[2] {
                        0
                    } else {
                        2
                    }
                } else if ext[1] > ext[2] {
                    1
                } else {
                    2
                };
                // SOFA's `first + (ncells + 1) / 2`.
                #[allow(clippy::manual_div_ceil)]
                let middle = start + (count + 1) / 2;
                // Stable sort on the key SOFA's `CubeSortPredicate` compares with `<`. Adding
                // 0.0 maps -0 to +0 so the total order agrees with `<` on every non-NaN key;
                // NaN keys (diverged positions) go last instead of being undefined behaviour.
                self.leaves[start as usize..end as usize].sort_by(|a, b| {
                    let ka = (a.aabb.min[axis] + a.aabb.max[axis]) + 0.0;
                    let kb = (b.aabb.min[axis] + b.aabb.max[axis]) + 0.0;
                    ka.total_cmp(&kb)
                });
                let c1 = next.len() as u32;
                next.push(union_box(&self.leaves, start, middle));
                next.push(union_box(&self.leaves, middle, end));
                cell.subcells = Span { level: lvl as u32 + 1, start: c1, end: c1 + 2 };
            }
        }
        for (i, leaf) in self.leaves.iter().enumerate() {
            self.parent_of[leaf.children.0 as usize] = i as u32;
        }
        self.built_depth = Some(depth);
    }

    /// SOFA's update of an existing tree: each level, finest first, recomputes its boxes from
    /// their internal children.
    fn refit(&mut self) {
        for lvl in (0..self.cubes.len()).rev() {
            let (upper, lower) = self.cubes.split_at_mut(lvl + 1);
            let leaves = &self.leaves;
            for cell in upper[lvl].iter_mut() {
                let s = cell.subcells;
                let source: &[CubeBox] = if s.level == LEAF_LEVEL { leaves } else { &lower[s.level as usize - lvl - 1] };
                cell.aabb = union_box(source, s.start, s.end).aabb;
            }
        }
    }
}

/// A new cube-level box over `boxes[start..end]` (SOFA's `addCube` + `updateCube`: first
/// child's box, then strict comparisons per component).
fn union_box(boxes: &[CubeBox], start: u32, end: u32) -> CubeBox {
    let first = &boxes[start as usize].aabb;
    let mut min = first.min;
    let mut max = first.max;
    for b in &boxes[start as usize + 1..end as usize] {
        for j in 0..3 {
            if b.aabb.max[j] > max[j] {
                max[j] = b.aabb.max[j];
            }
            if b.aabb.min[j] < min[j] {
                min[j] = b.aabb.min[j];
            }
        }
    }
    CubeBox { aabb: Aabb { min, max }, subcells: Span { level: LEAF_LEVEL, start, end }, children: (0, 0) }
}

/// Min/max of a few points, in SOFA's order: start from the first point, then per component
/// `if p > max … else if p < min …` (line, triangle and tetrahedron models).
#[inline]
fn points_box(points: &[Vec3]) -> Aabb {
    let mut min = points[0];
    let mut max = points[0];
    for p in &points[1..] {
        for c in 0..3 {
            if p[c] > max[c] {
                max[c] = p[c];
            } else if p[c] < min[c] {
                min[c] = p[c];
            }
        }
    }
    Aabb { min, max }
}

/// The leaf box of element `e` (spec §8), `None` if the element addresses a missing vertex.
#[inline]
pub fn leaf_box(g: &ModelGeometry, e: usize) -> Option<Aabb> {
    if !g.x_end.is_empty() && !matches!(g.kind, PrimitiveKind::Tetrahedron | PrimitiveKind::Cube) {
        return swept_leaf_box(g, e);
    }
    discrete_leaf_box(g, e)
}

/// The leaf box of element `e` at the positions `x`.
fn discrete_leaf_box(g: &ModelGeometry, e: usize) -> Option<Aabb> {
    let cd = g.contact_distance;
    let x = &g.x;
    match g.kind {
        PrimitiveKind::Sphere | PrimitiveKind::RigidSphere => {
            // SphereCollisionModel: `r = radius + contactDistance`, box `center ∓ r`.
            let c = x.get(e)?;
            let r = g.radius.get(e)? + cd;
            Some(Aabb { min: Vec3::new(c[0] - r, c[1] - r, c[2] - r), max: Vec3::new(c[0] + r, c[1] + r, c[2] + r) })
        }
        PrimitiveKind::Point => {
            let p = x.get(e)?;
            Some(Aabb { min: Vec3::new(p[0] - cd, p[1] - cd, p[2] - cd), max: Vec3::new(p[0] + cd, p[1] + cd, p[2] + cd) })
        }
        PrimitiveKind::Line => {
            let [a, b] = *g.edges.get(e)?;
            let mut bx = points_box(&[*x.get(a)?, *x.get(b)?]);
            bx.inflate(cd);
            Some(bx)
        }
        PrimitiveKind::Triangle => {
            let [a, b, c] = *g.triangles.get(e)?;
            let mut bx = points_box(&[*x.get(a)?, *x.get(b)?, *x.get(c)?]);
            bx.inflate(cd);
            Some(bx)
        }
        PrimitiveKind::Tetrahedron => {
            // TetrahedronCollisionModel does not add its contact distance.
            let [a, b, c, d] = *g.tetrahedra.get(e)?;
            Some(points_box(&[*x.get(a)?, *x.get(b)?, *x.get(c)?, *x.get(d)?]))
        }
        PrimitiveKind::Cube => None,
    }
}

/// The leaf box of element `e` swept from `x` to `x_end` (SOFA's
/// `computeContinuousBoundingTree`): the element's vertices at both ends, in SOFA's order (all
/// start points, then all end points), inflated by the contact distance (spheres: by radius
/// plus contact distance). Tetrahedra have no swept box in SOFA: theirs stays discrete.
fn swept_leaf_box(g: &ModelGeometry, e: usize) -> Option<Aabb> {
    let cd = g.contact_distance;
    let (x, xe) = (&g.x, &g.x_end);
    let mut bx = match g.kind {
        PrimitiveKind::Sphere | PrimitiveKind::RigidSphere => {
            let mut bx = points_box(&[*x.get(e)?, *xe.get(e)?]);
            bx.inflate(g.radius.get(e)? + cd);
            return Some(bx);
        }
        PrimitiveKind::Point => points_box(&[*x.get(e)?, *xe.get(e)?]),
        PrimitiveKind::Line => {
            let [a, b] = *g.edges.get(e)?;
            points_box(&[*x.get(a)?, *x.get(b)?, *xe.get(a)?, *xe.get(b)?])
        }
        PrimitiveKind::Triangle => {
            let [a, b, c] = *g.triangles.get(e)?;
            points_box(&[*x.get(a)?, *x.get(b)?, *x.get(c)?, *xe.get(a)?, *xe.get(b)?, *xe.get(c)?])
        }
        PrimitiveKind::Tetrahedron | PrimitiveKind::Cube => return discrete_leaf_box(g, e),
    };
    bx.inflate(cd);
    Some(bx)
}

fn bad_element(model: usize, g: &ModelGeometry, element: usize) -> DetectionError {
    DetectionError::BadElement { model, name: g.name.clone(), element, vertices: g.x.len() }
}
