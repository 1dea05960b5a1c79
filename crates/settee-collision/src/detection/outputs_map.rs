//! SOFA's maps keyed by pairs of collision models with "stable pointer" ordering (spec §6,
//! [HLP]`map_ptr_stable_compare.h`).
//!
//! SOFA orders these maps by ids given to model pointers in the order the map's comparator
//! first sees them, which depends on which comparisons the `std::map` performs. The ids are
//! kept for the map's lifetime. Models are identified here by their index in the pipeline's
//! model list.
//!
//! Comparator evaluation order: `less(a, b)` requests the ids of `a.1`, `a.0`, `b.1`, `b.0`, in
//! that order. C++ leaves it unspecified; this is what GCC does (checked with g++ 12.2, C++17
//! and C++20, -O0 and -O2, on a program using the same comparator expression and
//! `std::map::insert(end(), …)`: inserting (A,B) then (C,D) gives ids to B, A, D, C). A
//! Clang-built SOFA would differ (spec §6).
//!
//! Only the first comparison of an operation can hand out ids: a map of two or more entries
//! has ids for all its keys, and only the key inserted into an empty map has none until the
//! next operation. So the libstdc++ tree shape never matters — the emulation needs only the
//! map's size, its last key (`end()`-hinted insertion compares with the rightmost key first)
//! and, for a map of one entry, that entry (plain insertion and `find` compare with the root).

use crate::output::DetectionOutput;

/// Ids handed out to models in the order a map's comparator first presents them.
#[derive(Clone, Debug, Default)]
pub struct StableIds {
    ids: Vec<u32>,
    next: u32,
}

const UNSEEN: u32 = u32::MAX;

impl StableIds {
    /// The id of model `m`, giving it the next id if it has none.
    pub fn present(&mut self, m: usize) -> u32 {
        if m >= self.ids.len() {
            self.ids.resize(m + 1, UNSEEN);
        }
        if self.ids[m] == UNSEEN {
            self.ids[m] = self.next;
            self.next += 1;
        }
        self.ids[m]
    }

    /// The id of model `m`, if it has one.
    pub fn id(&self, m: usize) -> Option<u32> {
        self.ids.get(m).copied().filter(|&i| i != UNSEEN)
    }

    /// One call of SOFA's comparator `less(a, b)`, presenting the ids in GCC's order.
    pub fn less(&mut self, a: (usize, usize), b: (usize, usize)) -> bool {
        let a1 = self.present(a.1);
        let a0 = self.present(a.0);
        let b1 = self.present(b.1);
        let b0 = self.present(b.0);
        (a0, a1) < (b0, b1)
    }

    fn key(&self, k: (usize, usize)) -> (u32, u32) {
        (self.ids[k.0], self.ids[k.1])
    }
}

/// An entry of a [`StableOrderMap`]: something keyed by a pair of model indices.
pub trait PairKeyed {
    fn pair_key(&self) -> (usize, usize);
}

/// A map keyed by pairs of models, iterated in SOFA's stable-id order, stored as a vector of
/// entries kept in that order.
#[derive(Clone, Debug)]
pub struct StableOrderMap<V> {
    ids: StableIds,
    entries: Vec<V>,
}

impl<V> Default for StableOrderMap<V> {
    fn default() -> Self {
        StableOrderMap { ids: StableIds::default(), entries: Vec::new() }
    }
}

impl<V: PairKeyed> StableOrderMap<V> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries in map order.
    pub fn entries(&self) -> &[V] {
        &self.entries
    }

    pub fn entries_mut(&mut self) -> &mut [V] {
        &mut self.entries
    }

    pub fn ids(&self) -> &StableIds {
        &self.ids
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `map.insert(map.end(), {key, …})` (the outputs map, [CORE]`NarrowPhaseDetection.cpp`):
    /// returns the index of the entry for `key`, created with `make` if absent, and whether
    /// it was created. Indices of later entries shift by one on creation.
    pub fn insert_with_end_hint(&mut self, key: (usize, usize), make: impl FnOnce() -> V) -> (usize, bool) {
        if let Some(last) = self.entries.last() {
            // libstdc++ first compares the rightmost key with the new one.
            let r = last.pair_key();
            self.ids.less(r, key);
        }
        self.place(key, make)
    }

    /// Plain `map.insert({key, …})` or `map[key]` (the descent starts with `less(key, root)`).
    pub fn insert(&mut self, key: (usize, usize), make: impl FnOnce() -> V) -> (usize, bool) {
        self.present_against_root(key);
        self.place(key, make)
    }

    /// `map.find(key)`: the index of the entry, if any (a failed search still hands out ids).
    pub fn find(&mut self, key: (usize, usize)) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        // lower_bound compares `less(node, key)`, starting at the root.
        let root = self.entries[0].pair_key();
        if self.entries.len() == 1 {
            self.ids.less(root, key);
        } else {
            self.ids.present(key.1);
            self.ids.present(key.0);
        }
        let k = self.ids.key(key);
        self.search(k).ok()
    }

    /// Index of the entry for `key` without any comparator side effect (not a SOFA
    /// operation: for looking entries up again after they were inserted).
    pub fn position(&self, key: (usize, usize)) -> Option<usize> {
        if self.entries.len() <= 1 {
            return self.entries.iter().position(|e| e.pair_key() == key);
        }
        let k = (self.ids.id(key.0)?, self.ids.id(key.1)?);
        self.search(k).ok()
    }

    /// Removes the entries `remove` selects, in map order, handing each removed entry to
    /// `sink`. No comparison is made (erasure by iterator).
    pub fn erase_where(&mut self, mut remove: impl FnMut(&V) -> bool, mut sink: impl FnMut(V)) {
        let mut kept = 0;
        let len = self.entries.len();
        for i in 0..len {
            if remove(&self.entries[i]) {
                continue;
            }
            self.entries.swap(kept, i);
            kept += 1;
        }
        for v in self.entries.drain(kept..) {
            sink(v);
        }
    }

    fn present_against_root(&mut self, key: (usize, usize)) {
        match self.entries.len() {
            0 => {}
            1 => {
                let root = self.entries[0].pair_key();
                self.ids.less(key, root);
            }
            _ => {
                // Every key of the map already has ids: only the new key can get some.
                self.ids.present(key.1);
                self.ids.present(key.0);
            }
        }
    }

    fn place(&mut self, key: (usize, usize), make: impl FnOnce() -> V) -> (usize, bool) {
        if self.entries.is_empty() {
            // Insertion into an empty map compares nothing: the key stays without ids.
            self.entries.push(make());
            return (0, true);
        }
        let k = self.ids.key(key);
        match self.search(k) {
            Ok(i) => (i, false),
            Err(i) => {
                self.entries.insert(i, make());
                (i, true)
            }
        }
    }

    fn search(&self, k: (u32, u32)) -> Result<usize, usize> {
        let ids = &self.ids;
        self.entries.binary_search_by(|e| ids.key(e.pair_key()).cmp(&k))
    }
}

/// The outputs of one pair of finest models (one entry of SOFA's outputs map).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairOutputs {
    /// First model (index in the pipeline's model list), in the intersector's registered
    /// order (spec §5.2).
    pub model1: usize,
    pub model2: usize,
    /// Outputs in the order the narrow phase found them (spec §5.1).
    pub outputs: Vec<DetectionOutput>,
}

impl PairKeyed for PairOutputs {
    fn pair_key(&self) -> (usize, usize) {
        (self.model1, self.model2)
    }
}

/// The narrow phase's persistent outputs map ([CORE]`NarrowPhaseDetection`): entries survive
/// from step to step while their pair keeps producing outputs; output vectors of erased
/// entries are kept for reuse.
#[derive(Clone, Debug, Default)]
pub struct OutputsMap {
    map: StableOrderMap<PairOutputs>,
    spare: Vec<Vec<DetectionOutput>>,
}

impl OutputsMap {
    pub fn new() -> Self {
        Self::default()
    }

    /// `beginNarrowPhase`: clears every vector, keeping the entries.
    pub fn begin(&mut self) {
        for e in self.map.entries_mut() {
            e.outputs.clear();
        }
    }

    /// `getDetectionOutputs(m1, m2)`: the entry's index, created if absent (end-hinted
    /// insertion). Indices of later entries shift when an entry is created.
    pub fn entry(&mut self, model1: usize, model2: usize) -> usize {
        let spare = &mut self.spare;
        self.map.insert_with_end_hint((model1, model2), || PairOutputs { model1, model2, outputs: spare.pop().unwrap_or_default() }).0
    }

    /// Index of the entry of (m1, m2), if present (no comparator side effect).
    pub fn position(&self, model1: usize, model2: usize) -> Option<usize> {
        self.map.position((model1, model2))
    }

    /// `endNarrowPhase`: erases the entries with no output.
    pub fn end(&mut self) {
        let spare = &mut self.spare;
        self.map.erase_where(|e| e.outputs.is_empty(), |e| spare.push(e.outputs));
    }

    /// Entries in map order.
    pub fn entries(&self) -> &[PairOutputs] {
        self.map.entries()
    }

    pub fn entries_mut(&mut self) -> &mut [PairOutputs] {
        self.map.entries_mut()
    }

    pub fn ids(&self) -> &StableIds {
        self.map.ids()
    }

    /// Capacity of every buffer, for memory checks.
    pub fn capacity(&self) -> usize {
        self.map.entries.capacity()
            + self.map.ids.ids.capacity()
            + self.map.entries.iter().map(|e| e.outputs.capacity()).sum::<usize>()
            + self.spare.capacity()
            + self.spare.iter().map(|v| v.capacity()).sum::<usize>()
    }
}
