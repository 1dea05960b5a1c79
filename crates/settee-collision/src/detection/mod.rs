//! The detection phase of SOFA's collision pipeline (spec §2.3): bounding trees (§3.2), broad
//! phase (§4), narrow phase (§5) and the outputs map (§6).
//!
//! [`Detection`] owns everything that persists from one step to the next — the trees (whose
//! partition is frozen at the first detection), the outputs map with its stable ids, and the
//! buffers — and [`Detection::run`] performs one detection over the pipeline's models:
//!
//! ```text
//! for each active model, in list order: update its bounding tree
//! broad phase over the roots → model pairs
//! narrow phase: clear the map's vectors, create/find each pair's entry, traverse,
//!               erase the entries left empty
//! ```
//!
//! Models are identified by their index in the `models` slice, which must list the same
//! models in the same order at every step (SOFA fixes the list at `init`, spec §2.1).

pub mod broad_phase;
mod grid;
pub mod narrow_phase;
pub mod outputs_map;
pub mod tree;

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

use std::fmt;

use settee_core::scratch::recycle;

use crate::geometry::{Aabb, ModelGeometry, PrimitiveKind, Vec3};
use crate::intersection::{IntersectionMethod, PairSupport};

pub use broad_phase::{box_filter_enabled, BroadPhaseKind};
pub use narrow_phase::{NarrowPhaseKind, NarrowStats};
pub use outputs_map::{OutputsMap, PairKeyed, PairOutputs, StableIds, StableOrderMap};
pub use tree::{BoundingTree, CubeBox, Span, TreeUpdate, LEAF_LEVEL};

use narrow_phase::{NarrowBuffers, PairCtx, PairJob};

/// How to run a detection.
#[derive(Clone, Debug, PartialEq)]
pub struct DetectionSettings {
    /// Depth of the bounding trees (the pipeline's `depth` when the narrow phase needs a
    /// deep tree, else 0; spec §2.3).
    pub depth: u32,
    pub broad_phase: BroadPhaseKind,
    pub narrow_phase: NarrowPhaseKind,
    /// The broad phase's `box` Data (min, max); filters only when `box[0].x < box[1].x`.
    pub box_filter: [Vec3; 2],
    /// Use rayon threads (tree updates and narrow phase). The results do not depend on it.
    pub parallel: bool,
    /// Estimated narrow-phase work (in box tests) below which it runs sequentially even when
    /// `parallel` is set.
    pub parallel_min_work: usize,
    /// Blocks of leaf boxes with more box pairs than this are searched through the trees'
    /// block grids instead of scanned pair by pair (same outputs, same order). `usize::MAX`
    /// scans every block as SOFA does.
    pub search_min: usize,
}

impl Default for DetectionSettings {
    fn default() -> Self {
        DetectionSettings {
            depth: 6,
            broad_phase: BroadPhaseKind::BruteForce,
            narrow_phase: NarrowPhaseKind::Bvh,
            box_filter: [Vec3::zeros(), Vec3::zeros()],
            parallel: false,
            parallel_min_work: 1 << 16,
            search_min: 64,
        }
    }
}

/// Bad model geometry.
#[derive(Clone, Debug, PartialEq)]
pub enum DetectionError {
    /// An element addresses a vertex the model does not have.
    BadElement { model: usize, name: String, element: usize, vertices: usize },
    /// A sphere model has fewer radii than spheres.
    MissingRadius { model: usize, name: String, spheres: usize, radii: usize },
    /// More elements than the trees can index.
    TooManyElements { model: usize, name: String, count: usize },
}

impl fmt::Display for DetectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DetectionError::BadElement { model, name, element, vertices } => write!(
                f,
                "collision model {model} ('{name}'): element {element} uses a vertex index \
                 out of range (the model has {vertices} vertices)"
            ),
            DetectionError::MissingRadius { model, name, spheres, radii } => {
                write!(f, "collision model {model} ('{name}'): {spheres} spheres but only {radii} radii")
            }
            DetectionError::TooManyElements { model, name, count } => write!(
                f,
                "collision model {model} ('{name}'): {count} elements are more than a \
                 bounding tree can index"
            ),
        }
    }
}

impl std::error::Error for DetectionError {}

/// Counters of the last [`Detection::run`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DetectionStats {
    /// Trees built (first detection, size or depth change).
    pub trees_built: usize,
    /// Trees refitted.
    pub trees_refitted: usize,
    /// Trees of non-moving models left as they were.
    pub trees_skipped: usize,
    /// Pairs the broad phase produced.
    pub broad_pairs: usize,
    /// Pairs traversed by the narrow phase.
    pub narrow_pairs: usize,
    pub narrow: NarrowStats,
}

/// The persistent state of a pipeline's detection phase.
#[derive(Clone, Debug)]
pub struct Detection {
    trees: Vec<BoundingTree>,
    map: OutputsMap,
    order: Vec<usize>,
    pairs: Vec<(usize, usize)>,
    seen: Vec<usize>,
    cross: Vec<(usize, usize)>,
    narrow: NarrowBuffers,
    box_geometry: ModelGeometry,
    unknown_pairs: Vec<(PrimitiveKind, PrimitiveKind)>,
    stats: DetectionStats,
    /// The allocation of `run`'s list of the models' geometries, kept between steps.
    model_refs: Vec<&'static ModelGeometry>,
}

impl Default for Detection {
    fn default() -> Self {
        Detection::new()
    }
}

impl Detection {
    pub fn new() -> Detection {
        Detection {
            trees: Vec::new(),
            map: OutputsMap::new(),
            order: Vec::new(),
            pairs: Vec::new(),
            seen: Vec::new(),
            cross: Vec::new(),
            narrow: NarrowBuffers::default(),
            // The broad phase's `box` is a cube model of its own: contact distance 0.
            box_geometry: ModelGeometry::new(PrimitiveKind::Cube, "box", u64::MAX),
            unknown_pairs: Vec::new(),
            stats: DetectionStats::default(),
            model_refs: Vec::new(),
        }
    }

    /// One detection (SOFA's `computeCollisionDetection`, spec §2.3). Returns the outputs map
    /// in map order: pairs (model 1, model 2) in the intersector's registered order, each with
    /// its outputs in traversal order; pairs without outputs are not listed. `models` holds the
    /// geometries themselves or references to them (the pipeline lends the snapshots its
    /// collision models keep).
    pub fn run<M: std::borrow::Borrow<ModelGeometry>>(
        &mut self,
        models: &[M],
        method: &dyn IntersectionMethod,
        settings: &DetectionSettings,
    ) -> Result<&[PairOutputs], DetectionError> {
        let mut refs: Vec<&ModelGeometry> = recycle(std::mem::take(&mut self.model_refs));
        refs.extend(models.iter().map(|m| m.borrow()));
        let done = self.run_refs(&refs, method, settings);
        self.model_refs = recycle(refs);
        done?;
        Ok(self.map.entries())
    }

    fn run_refs(&mut self, models: &[&ModelGeometry], method: &dyn IntersectionMethod, settings: &DetectionSettings) -> Result<(), DetectionError> {
        self.stats = DetectionStats::default();
        if self.trees.len() < models.len() {
            self.trees.resize_with(models.len(), BoundingTree::new);
        }
        self.order.clear();
        self.order.extend((0..models.len()).filter(|&i| models[i].active));
        self.update_trees(models, settings)?;

        let filter_box = Aabb { min: settings.box_filter[0], max: settings.box_filter[1] };
        let filter = box_filter_enabled(&settings.box_filter).then_some((&filter_box, &self.box_geometry));
        broad_phase::broad_phase(
            settings.broad_phase,
            &self.order,
            models,
            &self.trees,
            method,
            filter,
            &mut self.pairs,
            &mut self.seen,
            &mut self.cross,
        );
        self.stats.broad_pairs = self.pairs.len();

        self.narrow_phase(models, method, settings);
        Ok(())
    }

    fn update_trees(&mut self, models: &[&ModelGeometry], settings: &DetectionSettings) -> Result<(), DetectionError> {
        let depth = settings.depth;
        let tally = |u: TreeUpdate| -> [usize; 3] {
            match u {
                TreeUpdate::Built => [1, 0, 0],
                TreeUpdate::Refitted => [0, 1, 0],
                TreeUpdate::Skipped => [0, 0, 1],
                TreeUpdate::Empty => [0, 0, 0],
            }
        };
        let counts = if settings.parallel && self.order.len() > 1 {
            use rayon::prelude::*;
            // One task per active tree; on errors, the one of the first model is reported.
            self.trees[..models.len()]
                .par_iter_mut()
                .enumerate()
                .filter(|(i, _)| models[*i].active)
                .map(|(i, t)| t.update(i, models[i], depth, true).map(tally).map_err(|e| (i, e)))
                .reduce(
                    || Ok([0; 3]),
                    |a, b| match (a, b) {
                        (Ok(x), Ok(y)) => Ok([x[0] + y[0], x[1] + y[1], x[2] + y[2]]),
                        (Err(x), Err(y)) => Err(if x.0 <= y.0 { x } else { y }),
                        (Err(x), _) | (_, Err(x)) => Err(x),
                    },
                )
                .map_err(|(_, e)| e)?
        } else {
            let mut c = [0; 3];
            for &i in &self.order {
                let t = tally(self.trees[i].update(i, models[i], depth, settings.parallel)?);
                for k in 0..3 {
                    c[k] += t[k];
                }
            }
            c
        };
        self.stats.trees_built = counts[0];
        self.stats.trees_refitted = counts[1];
        self.stats.trees_skipped = counts[2];
        Ok(())
    }

    /// `beginNarrowPhase`, `addCollisionPairs`, `endNarrowPhase` (spec §5.1).
    fn narrow_phase(&mut self, models: &[&ModelGeometry], method: &dyn IntersectionMethod, settings: &DetectionSettings) {
        self.map.begin();
        let cube = method.support(PrimitiveKind::Cube, PrimitiveKind::Cube);
        let bufs = &mut self.narrow;
        bufs.jobs.clear();
        bufs.units.clear();
        // Map entries, in pair order (both variants insert in this order; processing does not
        // touch the map, so creating every entry first changes nothing).
        for &(a, b) in &self.pairs {
            let (ga, gb) = (&models[a], &models[b]);
            let skip = (!ga.simulated && !gb.simulated) || self.trees[a].root().is_none() || self.trees[b].root().is_none();
            if skip && settings.narrow_phase == NarrowPhaseKind::Bvh {
                continue;
            }
            let (m1, m2) = match method.support(ga.kind, gb.kind) {
                PairSupport::Supported { swap: false } => (a, b),
                PairSupport::Supported { swap: true } => (b, a),
                PairSupport::Ignored => continue,
                PairSupport::Unknown => {
                    if !self.unknown_pairs.contains(&(ga.kind, gb.kind)) {
                        self.unknown_pairs.push((ga.kind, gb.kind));
                    }
                    continue;
                }
            };
            self.map.entry(m1, m2);
            if skip {
                continue;
            }
            bufs.jobs.push(PairJob {
                m1,
                m2,
                entry: 0,
                self_node: models[m1].node == models[m2].node,
                cube_swap: matches!(cube, PairSupport::Supported { swap: true }),
                cube_supported: matches!(cube, PairSupport::Supported { .. }),
                units: (0, 0),
            });
        }
        self.stats.narrow_pairs = bufs.jobs.len();
        let mut stats = NarrowStats::default();
        for job in bufs.jobs.iter_mut() {
            // Every job's entry was created above; indices are final now.
            job.entry = self.map.position(job.m1, job.m2).unwrap_or(0);
            let ctx = PairCtx::new(job, &self.trees, models, method, settings.search_min);
            let start = bufs.units.len() as u32;
            narrow_phase::plan_pair(&ctx, job, &mut bufs.units, &mut bufs.stack, &mut bufs.queue, &mut stats);
            job.units = (start, bufs.units.len() as u32);
        }
        stats.units = bufs.units.len();
        narrow_phase::run_units(
            bufs,
            &self.trees,
            models,
            method,
            settings.search_min,
            settings.parallel,
            settings.parallel_min_work,
            self.map.entries_mut(),
            &mut stats,
        );
        self.stats.narrow = stats;
        self.map.end();
    }

    /// The outputs map as the last run left it.
    pub fn outputs(&self) -> &[PairOutputs] {
        self.map.entries()
    }

    /// The outputs map with its stable ids (persistent across steps).
    pub fn outputs_map(&self) -> &OutputsMap {
        &self.map
    }

    /// The broad phase's pairs of the last run (root model indices, in SOFA's order).
    pub fn broad_pairs(&self) -> &[(usize, usize)] {
        &self.pairs
    }

    /// The bounding tree of model `i`, if it was ever updated.
    pub fn tree(&self, i: usize) -> Option<&BoundingTree> {
        self.trees.get(i)
    }

    /// Forces model `i`'s tree to be rebuilt from element order at the next run (topology
    /// changed without changing the element count).
    pub fn invalidate_tree(&mut self, i: usize) {
        if let Some(t) = self.trees.get_mut(i) {
            t.invalidate();
        }
    }

    /// Pairs of primitive kinds found unregistered in the intersection method, in the order
    /// they were met (SOFA warns once for each).
    pub fn unknown_pairs(&self) -> &[(PrimitiveKind, PrimitiveKind)] {
        &self.unknown_pairs
    }

    pub fn stats(&self) -> &DetectionStats {
        &self.stats
    }

    /// Total capacity (in elements) of every buffer, to check that memory stays flat.
    pub fn capacity(&self) -> usize {
        self.trees.capacity()
            + self.trees.iter().map(|t| t.capacity()).sum::<usize>()
            + self.map.capacity()
            + self.order.capacity()
            + self.pairs.capacity()
            + self.seen.capacity()
            + self.cross.capacity()
            + self.narrow.capacity()
    }
}
