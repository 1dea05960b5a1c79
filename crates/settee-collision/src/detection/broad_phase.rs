//! Broad phase: SOFA's `BruteForceBroadPhase` and `ParallelBruteForceBroadPhase` (spec §4.1):
//! which pairs of model roots go to the narrow phase, and in which order.

use crate::geometry::{Aabb, ModelGeometry, PrimitiveKind, Vec3};
use crate::intersection::{IntersectionMethod, PairSupport};

use super::tree::BoundingTree;

/// Which broad-phase component the scene uses (they differ only in pair order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BroadPhaseKind {
    /// `BruteForceBroadPhase`: each model against the earlier ones, model by model.
    #[default]
    BruteForce,
    /// `ParallelBruteForceBroadPhase`: all self pairs first, then the cross pairs in the
    /// brute-force order.
    ParallelBruteForce,
}

/// The `box` Data of the broad phase as given (min, max). It filters only when
/// `box[0].x < box[1].x` ([ALG]`BruteForceBroadPhase.cpp` `reinit`).
pub fn box_filter_enabled(b: &[Vec3; 2]) -> bool {
    b[0][0] < b[1][0]
}

/// Roots of the models taking part (active, in pipeline order) and the pairs they form.
/// `order` lists the model indices; `models[i]` pairs with `trees[i]`. Pairs are `(first
/// root, second root)` model indices, in SOFA's order. `seen` and `cross` are scratch lists.
#[allow(clippy::too_many_arguments)]
pub(crate) fn broad_phase(
    kind: BroadPhaseKind,
    order: &[usize],
    models: &[&ModelGeometry],
    trees: &[BoundingTree],
    method: &dyn IntersectionMethod,
    filter: Option<(&Aabb, &ModelGeometry)>,
    pairs: &mut Vec<(usize, usize)>,
    seen: &mut Vec<usize>,
    cross: &mut Vec<(usize, usize)>,
) {
    pairs.clear();
    seen.clear();
    cross.clear();
    let cube = method.support(PrimitiveKind::Cube, PrimitiveKind::Cube);
    // The root-box test of the cube/cube intersector (SOFA's `canIntersect(cm1->begin(),
    // cm2->begin())`), after the swap the lookup asked for.
    let roots_overlap = |a: usize, b: usize| -> bool {
        let (Some(ra), Some(rb)) = (trees[a].root(), trees[b].root()) else {
            return false;
        };
        method.boxes_overlap(&ra.aabb, models[a], &rb.aabb, models[b], a == b)
    };
    for &m in order {
        let Some(root) = trees[m].root() else {
            continue;
        };
        let g = &models[m];
        if let Some((fbox, fgeom)) = filter {
            // `intersectWithBoxModel`: no cube/cube intersector keeps the model.
            let keep = match cube {
                PairSupport::Supported { swap: false } => method.boxes_overlap(&root.aabb, g, fbox, fgeom, false),
                PairSupport::Supported { swap: true } => method.boxes_overlap(fbox, fgeom, &root.aabb, g, false),
                _ => true,
            };
            if !keep {
                continue;
            }
        }
        // Self pair: a simulated model allowed to collide with itself.
        if g.simulated && g.can_collide_with(g) && matches!(cube, PairSupport::Supported { .. }) && roots_overlap(m, m) {
            pairs.push((m, m));
        }
        for &prev in seen.iter() {
            match kind {
                BroadPhaseKind::BruteForce => {
                    if let Some(p) = cross_pair(m, prev, models, cube, &roots_overlap) {
                        pairs.push(p);
                    }
                }
                BroadPhaseKind::ParallelBruteForce => cross.push((m, prev)),
            }
        }
        seen.push(m);
    }
    if kind == BroadPhaseKind::ParallelBruteForce {
        for &(m, prev) in cross.iter() {
            if let Some(p) = cross_pair(m, prev, models, cube, &roots_overlap) {
                pairs.push(p);
            }
        }
    }
}

/// The test of a later model `m` against an earlier one `prev`.
fn cross_pair(
    m: usize,
    prev: usize,
    models: &[&ModelGeometry],
    cube: PairSupport,
    roots_overlap: &impl Fn(usize, usize) -> bool,
) -> Option<(usize, usize)> {
    let (a, b) = (&models[m], &models[prev]);
    if !a.simulated && !b.simulated {
        return None;
    }
    if !(a.can_collide_with(b) && b.can_collide_with(a)) {
        return None;
    }
    let (first, second) = match cube {
        PairSupport::Supported { swap: false } => (m, prev),
        PairSupport::Supported { swap: true } => (prev, m),
        _ => return None,
    };
    roots_overlap(first, second).then_some((first, second))
}
