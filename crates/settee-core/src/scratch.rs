//! Buffers a step keeps from one call to the next, so that the steady state allocates nothing.
//!
//! A list of borrows (`Vec<&'a T>`) cannot be kept in a struct across steps, the borrows end
//! with the call; its allocation can. [`recycle`] hands the allocation of an emptied list to a
//! list of another element type of the same size and alignment (the same borrows with another
//! lifetime).

pub use smallvec::{smallvec, SmallVec};

use crate::StateId;

/// The states of a force field or the inputs of a mapping: one to four, kept inline.
pub type StateSet = SmallVec<[StateId; 4]>;

/// A `Mutex` around what a component computes behind `&self` (a cache, scratch memory), copied
/// with its content: a copy of the component (a scene's clone or snapshot) computes what the
/// original would.
#[derive(Debug, Default)]
pub struct CopiedMutex<T>(pub std::sync::Mutex<T>);

impl<T> CopiedMutex<T> {
    pub fn new(value: T) -> Self {
        CopiedMutex(std::sync::Mutex::new(value))
    }
}

impl<T: Clone> Clone for CopiedMutex<T> {
    fn clone(&self) -> Self {
        CopiedMutex::new(self.0.lock().unwrap_or_else(|p| p.into_inner()).clone())
    }
}

impl<T> std::ops::Deref for CopiedMutex<T> {
    type Target = std::sync::Mutex<T>;
    fn deref(&self) -> &std::sync::Mutex<T> {
        &self.0
    }
}

impl<T> std::ops::DerefMut for CopiedMutex<T> {
    fn deref_mut(&mut self) -> &mut std::sync::Mutex<T> {
        &mut self.0
    }
}

/// An empty list using the allocation of `v` (its elements are dropped). `T` and `U` must have
/// the same size and alignment, checked at compile time; the standard library then collects in
/// place, keeping the capacity (the unit test below watches that it still does).
pub fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    const { assert!(std::mem::size_of::<T>() == std::mem::size_of::<U>() && std::mem::align_of::<T>() == std::mem::align_of::<U>()) };
    v.clear();
    v.into_iter().map(|_| unreachable!("the list was emptied")).collect()
}

#[cfg(test)]
mod tests {
    use super::recycle;

    #[test]
    fn a_recycled_list_keeps_its_allocation() {
        let data = [1.0f64, 2.0, 3.0];
        let mut kept: Vec<&'static [f64]> = Vec::with_capacity(8);
        for _ in 0..3 {
            let capacity = kept.capacity();
            let ptr = kept.as_ptr() as usize;
            let mut borrowed: Vec<&[f64]> = recycle(std::mem::take(&mut kept));
            assert_eq!((borrowed.capacity(), borrowed.as_ptr() as usize), (capacity, ptr), "the allocation is handed over");
            borrowed.extend([&data[..1], &data[1..]]);
            assert_eq!(borrowed.len(), 2);
            kept = recycle(borrowed);
            assert_eq!((kept.capacity(), kept.as_ptr() as usize, kept.len()), (capacity, ptr, 0), "and handed back, empty");
        }
    }
}
