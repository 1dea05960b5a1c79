//! Topological changes as data (issue 11): the events a topology container emits when elements
//! are added or removed while the simulation runs, and the per-element arrays that follow them.
//!
//! SOFA's rule is kept exactly, because element numbering is observable (SOFA's topology
//! references list elements in container order): a removed element is replaced by the current
//! last one, then the array shrinks ("swap with last"), indices processed in the order given;
//! added elements are appended. Every holder of per-element data ([`ElementData`]) or of element
//! indices ([`IndexSubset`]) applies the same events in the same order, so it stays aligned with
//! the container without knowing how the change was made.

use crate::graph::role::{self, RoleId};
pub use crate::graph::topology::{ChangeError, ElementKind, Follow, TopologyChange};
use crate::{ComponentId, InitCtx, Scene, SimError, SimResult};

/// A topology modifier (SOFA's `PointSetTopologyModifier` and the levels above it): changes
/// the elements of the container it works on when asked from outside the step's own components
/// (a script's `addPoints`/`removePoints`, a controller). The change goes to the container, then
/// to the states and every follower, as a change made by a TopologicalChangeProcessor does.
pub trait TopologyModifier {
    /// The container the modifier changes: SOFA's `getContext()->get(m_container)`, the
    /// topology of the modifier's node or, failing that, of its ancestors.
    fn container(&self, scene: &Scene, me: ComponentId) -> Option<ComponentId> {
        scene.context_topology(scene.entry(me).node)
    }
    /// SOFA's `addPoints(count, ancestors, coefs, addDOF = true)`: `count` points appended,
    /// point `k` made from `ancestors[k]` weighted by `coefs[k]` (equal weights when `coefs[k]`
    /// is empty; at the origin without ancestors), in the container and in every state on it.
    fn add_points(&mut self, scene: &mut Scene, me: ComponentId, count: usize, ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) -> SimResult;
    /// SOFA's `removePoints(indices, removeDOF = true)`: each point removed by swap-with-last,
    /// in decreasing order, from the container (its elements renamed) and from every state.
    fn remove_points(&mut self, scene: &mut Scene, me: ComponentId, indices: Vec<usize>) -> SimResult;
}

/// The role of [`TopologyModifier`].
pub const TOPOLOGY_MODIFIER: RoleId = RoleId::of::<dyn TopologyModifier>("TopologyModifier");

/// Checks a change against an array of `len` elements of its kind, before anything is changed.
pub fn validate(change: &TopologyChange, len: usize) -> Result<(), ChangeError> {
    let kind = change.kind().name();
    match change {
        TopologyChange::Added { count, ancestors, coefs, .. } => {
            if ancestors.len() > *count || coefs.len() > *count {
                return Err(ChangeError(format!("{} {kind} ancestor lists for {count} added {kind}s", ancestors.len())));
            }
            for (k, a) in ancestors.iter().enumerate() {
                if let Some(&bad) = a.iter().find(|&&i| i >= len) {
                    return Err(ChangeError(format!("added {kind} {k} names ancestor {bad}, but there are {len} {kind}s")));
                }
                if coefs.get(k).is_some_and(|c| !c.is_empty() && c.len() != a.len()) {
                    return Err(ChangeError(format!("added {kind} {k} has {} ancestors and {} coefficients", a.len(), coefs[k].len())));
                }
            }
        }
        TopologyChange::Removed { indices, .. } => {
            // Each removal shrinks the array: the k-th index must exist after k removals.
            let mut seen = std::collections::HashSet::with_capacity(indices.len());
            for (k, &i) in indices.iter().enumerate() {
                if i >= len - k.min(len) {
                    return Err(ChangeError(format!(
                        "removal {} of {} names {kind} {i}, but only {} {kind}s are left at that point",
                        k + 1,
                        indices.len(),
                        len - k.min(len)
                    )));
                }
                if !seen.insert(i) && indices.len() > 1 {
                    // Removing the same index twice removes two different elements (the second
                    // time, the one swapped in); SOFA's modifiers never do it, scripts that do
                    // are wrong.
                    return Err(ChangeError(format!("{kind} {i} is removed twice in one change")));
                }
            }
        }
        TopologyChange::Renumbered { old_of_new, .. } => {
            if old_of_new.len() != len {
                return Err(ChangeError(format!("a renumbering of {} {kind}s for {len} {kind}s", old_of_new.len())));
            }
            let mut seen = vec![false; len];
            for &o in old_of_new {
                if o >= len || std::mem::replace(&mut seen[o], true) {
                    return Err(ChangeError(format!("the {kind} renumbering is not a permutation ({o})")));
                }
            }
        }
    }
    Ok(())
}

/// What a new element's value is made from.
pub struct NewElement<'a, T> {
    /// Its index in the array after the addition.
    pub index: usize,
    pub ancestors: &'a [usize],
    pub coefs: &'a [f64],
    /// The values before the addition (the ancestors' values are there).
    pub values: &'a [T],
}

/// An array with one value per element of one kind (SOFA's `TopologyData`), kept aligned with
/// its container by applying the container's changes.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementData<T> {
    kind: ElementKind,
    values: Vec<T>,
}

impl<T: Clone> ElementData<T> {
    pub fn new(kind: ElementKind, values: Vec<T>) -> ElementData<T> {
        ElementData { kind, values }
    }

    pub fn kind(&self) -> ElementKind {
        self.kind
    }

    pub fn values(&self) -> &[T] {
        &self.values
    }

    pub fn values_mut(&mut self) -> &mut Vec<T> {
        &mut self.values
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Applies the changes of this array's kind, in order (others are skipped); `create` makes
    /// the value of each added element. Nothing is changed when a change is invalid.
    pub fn apply(&mut self, changes: &[TopologyChange], mut create: impl FnMut(NewElement<'_, T>) -> T) -> Result<(), ChangeError> {
        for c in changes.iter().filter(|c| c.kind() == self.kind) {
            validate(c, self.values.len())?;
            match c {
                TopologyChange::Added { count, ancestors, coefs, .. } => {
                    let base = self.values.len();
                    let mut new = Vec::with_capacity(*count);
                    for k in 0..*count {
                        let a = ancestors.get(k).map(|v| v.as_slice()).unwrap_or(&[]);
                        let w = coefs.get(k).map(|v| v.as_slice()).unwrap_or(&[]);
                        new.push(create(NewElement { index: base + k, ancestors: a, coefs: w, values: &self.values }));
                    }
                    self.values.extend(new);
                }
                TopologyChange::Removed { indices, .. } => {
                    for &i in indices {
                        self.values.swap_remove(i);
                    }
                }
                TopologyChange::Renumbered { old_of_new, .. } => {
                    let old = std::mem::take(&mut self.values);
                    self.values = old_of_new.iter().map(|&o| old[o].clone()).collect();
                }
            }
        }
        Ok(())
    }
}

/// Where each element of an array of `len` goes when `indices` are removed by swap-with-last:
/// `Some(new index)` or `None` for a removed element.
pub fn removal_map(len: usize, indices: &[usize]) -> Vec<Option<usize>> {
    // at[p] = the original element now at position p.
    let mut at: Vec<usize> = (0..len).collect();
    for &i in indices {
        at.swap_remove(i);
    }
    let mut map = vec![None; len];
    for (p, &orig) in at.iter().enumerate() {
        map[orig] = Some(p);
    }
    map
}

/// A list of element indices that follows its container (SOFA's `TopologySubsetIndices`: a
/// projective constraint's fixed points, a ROI's selection): removed elements leave the list,
/// moved ones are renamed, order kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IndexSubset {
    pub indices: Vec<usize>,
}

impl IndexSubset {
    /// Applies the changes of `kind` to an array of `len` elements (the length before the
    /// changes); returns the length after them.
    pub fn apply(&mut self, kind: ElementKind, mut len: usize, changes: &[TopologyChange]) -> Result<usize, ChangeError> {
        for c in changes.iter().filter(|c| c.kind() == kind) {
            validate(c, len)?;
            match c {
                TopologyChange::Added { count, .. } => len += count,
                TopologyChange::Removed { indices, .. } => {
                    let map = removal_map(len, indices);
                    self.indices = self.indices.iter().filter_map(|&i| map.get(i).copied().flatten()).collect();
                    len -= indices.len();
                }
                TopologyChange::Renumbered { old_of_new, .. } => {
                    let mut new_of_old = vec![0; len];
                    for (n, &o) in old_of_new.iter().enumerate() {
                        new_of_old[o] = n;
                    }
                    for i in &mut self.indices {
                        if let Some(&n) = new_of_old.get(*i) {
                            *i = n;
                        }
                    }
                }
            }
        }
        Ok(len)
    }
}

// ----- propagation ---------------------------------------------------------------------------

/// Roles whose components hold data indexed by points or elements, so that ignoring a change is
/// an error rather than silence.
const DATA_HOLDING: [RoleId; 7] = [
    crate::mechanics::FORCE_FIELD,
    crate::mechanics::MASS,
    crate::mechanics::PROJECTIVE_CONSTRAINT,
    crate::mechanics::MAPPING,
    crate::collision::COLLISION_MODEL,
    role::ENGINE,
    crate::constraint::CONSTRAINT_LAW,
];

/// The topology whose changes component `c` follows: its `topology` link, else the `input`
/// link of a topological mapping (a component whose `input` link designates a topology), else
/// its node's context topology.
pub fn followed_topology(scene: &Scene, c: ComponentId) -> Option<ComponentId> {
    if let Some(&t) = scene.link_targets(c, "topology").first() {
        return Some(t);
    }
    if let Some(&t) = scene.link_targets(c, "input").first() {
        if scene.entry(t).plays(role::TOPOLOGY) {
            return Some(t);
        }
    }
    scene.context_topology(scene.entry(c).node)
}

/// Delivers the changes a container just went through (it already holds the changed lists) to
/// everything that depends on it, in SOFA's order: every component following the container, in
/// scene order, gets the whole log ([`crate::Component::topology_changed`]); point changes
/// resize every mechanical state whose followed topology is the container (SOFA's
/// `propagateStateChanges`) — **after** the followers for removals, so that a follower still
/// reads the rest positions of what is removed (a lumped mass subtracting a removed
/// tetrahedron's share), and **before** them for additions, so that a follower reads the
/// positions of the points it builds new elements on. A log mixing point additions and removals
/// resizes the states first. A topological mapping turns the log into changes of its output
/// container and propagates those in turn (the states are then resized once, by the container
/// they follow).
pub fn propagate(scene: &mut Scene, container: ComponentId, changes: &[TopologyChange]) -> SimResult {
    if changes.is_empty() {
        return Ok(());
    }
    scene.topology_revision += 1;
    let point = |c: &&TopologyChange| c.kind() == ElementKind::Point;
    let adds = changes.iter().filter(point).any(|c| matches!(c, TopologyChange::Added { .. }));
    let removes = changes.iter().filter(point).any(|c| !matches!(c, TopologyChange::Added { .. }));
    let states_first = adds || !removes;
    if states_first {
        resize_states(scene, container, changes)?;
    }
    deliver(scene, container, changes)?;
    if !states_first {
        resize_states(scene, container, changes)?;
    }
    Ok(())
}

/// The size a mechanical state following the changed topology has once `changes` are through,
/// seen by a follower while the log is delivered (`size_now`): [`propagate`] shrinks the states
/// after the followers but grows them before.
pub fn state_size_after(changes: &[TopologyChange], size_now: usize) -> usize {
    let mut adds = false;
    let mut removed = 0;
    for c in changes.iter().filter(|c| c.kind() == ElementKind::Point) {
        match c {
            TopologyChange::Added { .. } => adds = true,
            TopologyChange::Removed { indices, .. } => removed += indices.len(),
            TopologyChange::Renumbered { .. } => {}
        }
    }
    if adds {
        size_now
    } else {
        size_now.saturating_sub(removed)
    }
}

/// Removes blocks of `width` values from `v` by swap-with-last, in the order given (the last
/// block moves into each removed slot). An index beyond the blocks left stops the removal: the
/// change was validated against the state, which refuses it with a message.
pub fn swap_remove_blocks(v: &mut Vec<f64>, width: usize, indices: &[usize]) {
    let mut len = v.len() / width.max(1);
    for &i in indices {
        if i >= len {
            break;
        }
        len -= 1;
        if i != len {
            v.copy_within(len * width..(len + 1) * width, i * width);
        }
        v.truncate(len * width);
    }
}

/// A per-point vector (`width` values per point) as the states will hold it once `changes` are
/// through, for a follower that builds new elements on the final numbering while the log is
/// delivered (the states still hold the points being removed).
pub fn points_after(v: &[f64], width: usize, changes: &[TopologyChange]) -> Vec<f64> {
    let n = v.len() / width.max(1);
    if state_size_after(changes, n) == n {
        return v.to_vec();
    }
    let mut out = v.to_vec();
    for c in changes.iter().filter(|c| c.kind() == ElementKind::Point) {
        if let TopologyChange::Removed { indices, .. } = c {
            swap_remove_blocks(&mut out, width, indices);
        }
    }
    out
}

/// The point events of `changes`, applied to every mechanical state following `container`.
fn resize_states(scene: &mut Scene, container: ComponentId, changes: &[TopologyChange]) -> SimResult {
    if !changes.iter().any(|c| c.kind() == ElementKind::Point) {
        return Ok(());
    }
    let home = scene.entry(container).node;
    for n in scene.preorder(home) {
        let Some(ms) = scene.slot(n, role::MECHANICAL_STATE) else { continue };
        if followed_topology(scene, ms) != Some(container) {
            continue;
        }
        let Some(sid) = scene.state_of(ms) else { continue };
        for c in changes.iter().filter(|c| c.kind() == ElementKind::Point) {
            scene.store.get_mut(sid).apply_point_change(c).map_err(|e| {
                crate::graph::scene::positioned(
                    scene,
                    ms,
                    SimError::new(format!("cannot follow a point change of {}: {e}", scene.entry(container).label())),
                )
            })?;
        }
    }
    Ok(())
}

/// The log, to every component following `container` but the mechanical states.
fn deliver(scene: &mut Scene, container: ComponentId, changes: &[TopologyChange]) -> SimResult {
    for n in scene.preorder(Scene::ROOT) {
        for c in scene.node(n).objects.clone() {
            if c == container || !scene.contains(c) || scene.components[c].obj.is_none() {
                continue;
            }
            if scene.entry(c).plays(role::MECHANICAL_STATE) || followed_topology(scene, c) != Some(container) {
                continue;
            }
            let follow = scene
                .with_taken(c, |obj, scene| obj.topology_changed(&mut InitCtx { scene, id: c }, container, changes))
                .map_err(|e| crate::graph::scene::positioned(scene, c, e))?;
            if follow == Follow::Unsupported && DATA_HOLDING.iter().any(|r| scene.entry(c).plays(*r)) {
                let e = SimError::unsupported(format!(
                    "{} does not follow topological changes, and {} has just changed",
                    scene.entry(c).label(),
                    scene.entry(container).label()
                ))
                .hint("remove the component from the changing part of the scene, or keep the topology fixed");
                return Err(crate::graph::scene::positioned(scene, c, e));
            }
        }
    }
    Ok(())
}

impl crate::graph::state::MState {
    /// Follows a change of the points of its topology: removed points leave every vector by
    /// swap-with-last (SOFA's order), added points are appended, each the weighted sum of its
    /// ancestors (zero without ancestors), renumbered points are permuted.
    pub fn apply_point_change(&mut self, change: &TopologyChange) -> Result<(), ChangeError> {
        use TopologyChange as C;
        validate(change, self.size)?;
        self.revision += 1;
        let size = self.size;
        let (cs, ds) = (self.layout.coord_size(), self.layout.deriv_size());
        let each = |v: &mut Vec<f64>, w: usize| {
            if v.len() != size * w {
                // An unset or stale vector: only its length matters.
                v.resize(size * w, 0.0);
            }
            match change {
                C::Removed { indices, .. } => swap_remove_blocks(v, w, indices),
                C::Added { count, ancestors, coefs, .. } => {
                    for k in 0..*count {
                        let mut value = vec![0.0; w];
                        let a = ancestors.get(k).map(|a| a.as_slice()).unwrap_or(&[]);
                        let c = coefs.get(k).map(|c| c.as_slice()).unwrap_or(&[]);
                        for (j, &anc) in a.iter().enumerate() {
                            // SOFA's default coefficients: equal weights.
                            let wj = c.get(j).copied().unwrap_or(1.0 / a.len() as f64);
                            for (d, x) in value.iter_mut().enumerate() {
                                *x += wj * v[anc * w + d];
                            }
                        }
                        v.extend_from_slice(&value);
                    }
                }
                C::Renumbered { old_of_new, .. } => {
                    let old = v.clone();
                    for (n, &o) in old_of_new.iter().enumerate() {
                        v[n * w..(n + 1) * w].copy_from_slice(&old[o * w..(o + 1) * w]);
                    }
                }
            }
        };
        for v in self.coords.iter_mut().flatten() {
            each(v, cs);
        }
        for v in self.derivs.iter_mut().flatten() {
            each(v, ds);
        }
        self.size = match change {
            C::Removed { indices, .. } => size - indices.len(),
            C::Added { count, .. } => size + count,
            C::Renumbered { .. } => size,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn removal_swaps_with_the_last_element_in_the_order_given() {
        let mut d = ElementData::new(ElementKind::Triangle, vec!['a', 'b', 'c', 'd', 'e']);
        d.apply(&[TopologyChange::Removed { kind: ElementKind::Triangle, indices: vec![1, 0], elements: vec![] }], |_| unreachable!()).unwrap();
        // Remove 1: [a, e, c, d]; then remove 0: [d, e, c].
        assert_eq!(d.values(), &['d', 'e', 'c']);
        assert_eq!(removal_map(5, &[1, 0]), vec![None, None, Some(2), Some(0), Some(1)]);
    }

    #[test]
    fn added_elements_are_made_from_their_ancestors() {
        let mut d = ElementData::new(ElementKind::Point, vec![1.0, 3.0]);
        let add = TopologyChange::Added {
            kind: ElementKind::Point,
            count: 2,
            elements: vec![],
            ancestors: vec![vec![0, 1]],
            coefs: vec![vec![0.25, 0.75]],
        };
        d.apply(&[add], |e| {
            e.ancestors.iter().zip(e.coefs).map(|(&a, &w)| w * e.values[a]).sum::<f64>() + if e.ancestors.is_empty() { 9.0 } else { 0.0 }
        })
        .unwrap();
        assert_eq!(d.values(), &[1.0, 3.0, 2.5, 9.0]);
    }

    #[test]
    fn changes_naming_missing_elements_are_refused_untouched() {
        let mut d = ElementData::new(ElementKind::Edge, vec![0, 1, 2]);
        let e = d.apply(&[TopologyChange::Removed { kind: ElementKind::Edge, indices: vec![0, 2], elements: vec![] }], |_| 0).unwrap_err();
        assert!(e.0.contains("only 2 edges are left"), "{e}");
        assert_eq!(d.values(), &[0, 1, 2]);
        let e = d
            .apply(&[TopologyChange::Added { kind: ElementKind::Edge, count: 1, elements: vec![], ancestors: vec![vec![7]], coefs: vec![] }], |_| 0)
            .unwrap_err();
        assert!(e.0.contains("ancestor 7"), "{e}");
        // Changes of another kind are not this array's business.
        d.apply(&[TopologyChange::Removed { kind: ElementKind::Point, indices: vec![99], elements: vec![] }], |_| 0).unwrap();
    }

    /// A random sequence of additions, removals and renumberings.
    fn changes() -> impl Strategy<Value = (usize, Vec<(u8, Vec<usize>)>)> {
        (1usize..40, prop::collection::vec((0u8..3, prop::collection::vec(0usize..1000, 0..8)), 0..20))
    }

    proptest! {
        /// Every holder applying the same events stays aligned: each element's data follows the
        /// element, and an index subset keeps naming the same elements.
        #[test]
        fn data_and_subsets_follow_their_elements((n0, ops) in changes()) {
            // The "container": element identities.
            let mut ids: Vec<usize> = (0..n0).collect();
            let mut next_id = n0;
            let mut data = ElementData::new(ElementKind::Tetrahedron, ids.iter().map(|i| i * 10).collect::<Vec<usize>>());
            let mut subset = IndexSubset { indices: (0..n0).step_by(3).collect() };
            let mut subset_ids: Vec<usize> = subset.indices.iter().map(|&i| ids[i]).collect();
            for (op, raw) in ops {
                let len = ids.len();
                let change = match op {
                    0 => TopologyChange::Added { kind: ElementKind::Tetrahedron, count: raw.len(), elements: vec![], ancestors: vec![], coefs: vec![] },
                    1 if len > 0 => {
                        // Distinct valid indices for a shrinking array.
                        let mut idx = Vec::new();
                        for (k, r) in raw.iter().enumerate() {
                            if k >= len { break; }
                            let i = r % (len - k);
                            if !idx.contains(&i) { idx.push(i); }
                        }
                        TopologyChange::Removed { kind: ElementKind::Tetrahedron, indices: idx, elements: vec![] }
                    }
                    _ => {
                        let mut p: Vec<usize> = (0..len).collect();
                        p.reverse();
                        TopologyChange::Renumbered { kind: ElementKind::Tetrahedron, old_of_new: p }
                    }
                };
                // Reference model.
                match &change {
                    TopologyChange::Added { count, .. } => for _ in 0..*count { ids.push(next_id); next_id += 1; },
                    TopologyChange::Removed { indices, .. } => for &i in indices {
                        subset_ids.retain(|&x| x != ids[i]);
                        ids.swap_remove(i);
                    },
                    TopologyChange::Renumbered { old_of_new, .. } => { let old = ids.clone(); ids = old_of_new.iter().map(|&o| old[o]).collect(); }
                }
                let changes = [change];
                data.apply(&changes, |_| usize::MAX).unwrap();
                let len_after = subset.apply(ElementKind::Tetrahedron, len, &changes).unwrap();
                prop_assert_eq!(len_after, ids.len());
                prop_assert_eq!(data.len(), ids.len());
                for (k, &id) in ids.iter().enumerate() {
                    if id < n0 { prop_assert_eq!(data.values()[k], id * 10); } else { prop_assert_eq!(data.values()[k], usize::MAX); }
                }
                let named: Vec<usize> = subset.indices.iter().map(|&i| ids[i]).collect();
                prop_assert_eq!(named, subset_ids.clone());
            }
        }
    }
}
