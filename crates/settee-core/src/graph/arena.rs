//! Typed generational arenas: the storage of nodes, components and states.
//!
//! An id is a slot and a generation. When an entry is removed its slot is reused by a later
//! insertion with a new generation, so an id kept past the removal of its entry is detected as
//! stale (`get` returns `None`, indexing panics with a message) instead of silently reaching the
//! entry that took its slot. The storage is `thunderdome`'s arena; this module only adds typed
//! keys so a `StateId` cannot index the components.

use std::marker::PhantomData;

pub use thunderdome::Index as RawIndex;

/// A typed id of an [`Arena`].
pub trait ArenaKey: Copy + Eq + std::fmt::Debug {
    fn from_raw(raw: RawIndex) -> Self;
    fn raw(self) -> RawIndex;
}

/// Declares a typed arena id wrapping a generational index.
#[macro_export]
macro_rules! arena_key {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name($crate::arena::RawIndex);

        impl $crate::arena::ArenaKey for $name {
            fn from_raw(raw: $crate::arena::RawIndex) -> Self {
                $name(raw)
            }
            fn raw(self) -> $crate::arena::RawIndex {
                self.0
            }
        }

        impl $name {
            /// The slot of this id: dense, reused after removal. Good for side tables that live
            /// no longer than one pass over the scene.
            pub fn index(self) -> usize {
                self.0.slot() as usize
            }

            /// The id slot `slot` gets at its first use (generation 1): what an arena filled
            /// without removals hands out. For components built outside of a scene (tests).
            pub const fn first_in_slot(slot: u32) -> Self {
                match $crate::arena::RawIndex::from_bits((1u64 << 32) | slot as u64) {
                    Some(i) => $name(i),
                    None => panic!("generation 1 is valid"),
                }
            }

            pub fn generation(self) -> u32 {
                self.0.generation()
            }

            /// Slot and generation as one number, unique among all ids of this kind ever
            /// handed out by one arena (an identity for plain-data snapshots).
            pub fn to_bits(self) -> u64 {
                self.0.to_bits()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}#{}v{}", stringify!($name), self.0.slot(), self.0.generation())
            }
        }
    };
}

/// A generational arena with typed keys.
pub struct Arena<K: ArenaKey, V> {
    inner: thunderdome::Arena<V>,
    _key: PhantomData<fn() -> K>,
}

impl<K: ArenaKey, V> Default for Arena<K, V> {
    fn default() -> Self {
        Arena { inner: thunderdome::Arena::new(), _key: PhantomData }
    }
}

/// A copy keeps every id: slots, generations and the order in which free slots are reused.
impl<K: ArenaKey, V: Clone> Clone for Arena<K, V> {
    fn clone(&self) -> Self {
        Arena { inner: self.inner.clone(), _key: PhantomData }
    }
}

impl<K: ArenaKey, V: std::fmt::Debug> std::fmt::Debug for Arena<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: ArenaKey, V> Arena<K, V> {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn insert(&mut self, v: V) -> K {
        K::from_raw(self.inner.insert(v))
    }
    /// Removes an entry; `None` when the id is stale.
    pub fn remove(&mut self, k: K) -> Option<V> {
        self.inner.remove(k.raw())
    }
    pub fn contains(&self, k: K) -> bool {
        self.inner.contains(k.raw())
    }
    pub fn get(&self, k: K) -> Option<&V> {
        self.inner.get(k.raw())
    }
    pub fn get_mut(&mut self, k: K) -> Option<&mut V> {
        self.inner.get_mut(k.raw())
    }
    /// Two distinct live entries at once; panics when `a == b` or an id is stale.
    pub fn get_two_mut(&mut self, a: K, b: K) -> [&mut V; 2] {
        match self.inner.get2_mut(a.raw(), b.raw()) {
            (Some(x), Some(y)) => [x, y],
            _ => panic!("get_two_mut: stale id"),
        }
    }
    /// Number of live entries.
    pub fn len(&self) -> usize {
        self.inner.len()
    }
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }
    /// Entries the arena can hold without reallocating.
    pub fn capacity(&self) -> usize {
        self.inner.capacity()
    }
    /// Live entries in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> + '_ {
        self.inner.iter().map(|(i, v)| (K::from_raw(i), v))
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (K, &mut V)> + '_ {
        self.inner.iter_mut().map(|(i, v)| (K::from_raw(i), v))
    }
    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.inner.iter().map(|(i, _)| K::from_raw(i))
    }
    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.inner.iter().map(|(_, v)| v)
    }
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> + '_ {
        self.inner.iter_mut().map(|(_, v)| v)
    }
}

impl<K: ArenaKey, V> std::ops::Index<K> for Arena<K, V> {
    type Output = V;
    fn index(&self, k: K) -> &V {
        self.inner.get(k.raw()).unwrap_or_else(|| panic!("stale id {k:?}: its entry was removed"))
    }
}

impl<K: ArenaKey, V> std::ops::IndexMut<K> for Arena<K, V> {
    fn index_mut(&mut self, k: K) -> &mut V {
        self.inner.get_mut(k.raw()).unwrap_or_else(|| panic!("stale id {k:?}: its entry was removed"))
    }
}

impl<K: ArenaKey, V> std::ops::Index<&K> for Arena<K, V> {
    type Output = V;
    fn index(&self, k: &K) -> &V {
        &self[*k]
    }
}

impl<K: ArenaKey, V> std::ops::IndexMut<&K> for Arena<K, V> {
    fn index_mut(&mut self, k: &K) -> &mut V {
        &mut self[*k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::arena_key!(TestId);

    #[test]
    fn stale_ids_are_detected_after_slot_reuse() {
        let mut a: Arena<TestId, &str> = Arena::new();
        let x = a.insert("x");
        let y = a.insert("y");
        assert_eq!(x, TestId::first_in_slot(0));
        assert_eq!(a.remove(x), Some("x"));
        let z = a.insert("z");
        // z reuses x's slot with a new generation: x stays dead.
        assert_eq!(z.index(), x.index());
        assert_ne!(z, x);
        assert_eq!((x.generation(), z.generation()), (1, 2));
        assert_ne!(z.to_bits(), x.to_bits());
        assert!(a.get(x).is_none());
        assert!(a.remove(x).is_none());
        assert_eq!(a[z], "z");
        assert_eq!(a[y], "y");
        assert_eq!(a.len(), 2);
    }

    #[test]
    #[should_panic(expected = "stale id")]
    fn indexing_with_a_stale_id_panics_with_a_message() {
        let mut a: Arena<TestId, u8> = Arena::new();
        let x = a.insert(1);
        a.remove(x);
        let _ = a[x];
    }
}
