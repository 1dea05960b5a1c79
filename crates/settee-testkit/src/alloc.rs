//! A counting global allocator for the tests that hold the step to allocating nothing.
//!
//! A test binary installs it with
//! `#[global_allocator] static A: settee_testkit::alloc::Counting = settee_testkit::alloc::Counting;`
//! and counts what a piece of code allocates with [`count`]. Allocations are counted on the
//! threads that asked for it ([`watch_this_thread`]; tests of one binary run side by side, each
//! counting its own) or, with [`count_all_threads`], on every thread (a step's parallel loops
//! run on rayon's workers).
//!
//! `SETTEE_ALLOC_TRACE=1` prints a backtrace of every counted allocation to stderr: the way to
//! find what a step allocates (`SETTEE_ALLOC_TRACE=100`: of one in 100, for a step that
//! allocates a lot).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The counting allocator: the system's, with counts.
pub struct Counting;

thread_local! {
    static WATCHED: Cell<bool> = const { Cell::new(false) };
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    /// Allocations made while [`mark`] is on.
    static MARKED: Cell<bool> = const { Cell::new(false) };
    static MARKED_ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    /// Bytes this thread allocated and has not freed yet.
    static LIVE_BYTES: Cell<i64> = const { Cell::new(0) };
    /// Set while a backtrace is being taken (it allocates itself).
    static TRACING: Cell<bool> = const { Cell::new(false) };
}

/// Counting on every thread: on, and the count.
static ALL_THREADS: AtomicBool = AtomicBool::new(false);
static ALL_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// One allocation in how many is traced: `u64::MAX` not read yet, 0 none.
static TRACE_EVERY: AtomicU64 = AtomicU64::new(u64::MAX);
static TRACE_SEEN: AtomicU64 = AtomicU64::new(0);

fn trace_wanted() -> bool {
    let mut every = TRACE_EVERY.load(Ordering::Relaxed);
    if every == u64::MAX {
        every = std::env::var("SETTEE_ALLOC_TRACE").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
        TRACE_EVERY.store(every, Ordering::Relaxed);
    }
    every > 0 && TRACE_SEEN.fetch_add(1, Ordering::Relaxed).is_multiple_of(every)
}

fn trace(bytes: i64) {
    // `try_with`: the allocator also runs while a thread's locals are being destroyed.
    let _ = TRACING.try_with(|t| {
        if t.get() {
            return;
        }
        // Reading the variable allocates too: it is read under the flag.
        t.set(true);
        if trace_wanted() {
            let bt = std::backtrace::Backtrace::force_capture();
            eprintln!("== allocation of {bytes} bytes on {:?}\n{bt}", std::thread::current().id());
        }
        t.set(false);
    });
}

/// Counts one allocation of `bytes` (negative: a release; `allocations` 0) made on this thread.
fn note(allocations: u64, bytes: i64) {
    if ALL_THREADS.load(Ordering::Relaxed) && allocations > 0 {
        if TRACING.try_with(Cell::get).unwrap_or(true) {
            return;
        }
        ALL_ALLOCATIONS.fetch_add(allocations, Ordering::Relaxed);
        trace(bytes);
        return;
    }
    let _ = WATCHED.try_with(|on| {
        if !on.get() || TRACING.with(Cell::get) {
            return;
        }
        LIVE_BYTES.with(|b| b.set(b.get() + bytes));
        if allocations > 0 && COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|c| c.set(c.get() + allocations));
            if MARKED.with(Cell::get) {
                MARKED_ALLOCATIONS.with(|c| c.set(c.get() + allocations));
            }
            trace(bytes);
        }
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(1, layout.size() as i64);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, -(layout.size() as i64));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(1, new_size as i64 - layout.size() as i64);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Counts this thread's allocations from now on (in [`count`]) and its live bytes.
pub fn watch_this_thread() {
    WATCHED.with(|t| t.set(true));
}

/// What `f` allocated on this thread (a watched one): the number of allocations (a reallocation
/// counts as one) and, of those, the ones made while [`mark`] was on.
pub fn count<R>(f: impl FnOnce() -> R) -> (R, u64, u64) {
    assert!(WATCHED.with(Cell::get), "count: call watch_this_thread first");
    ALLOCATIONS.with(|c| c.set(0));
    MARKED_ALLOCATIONS.with(|c| c.set(0));
    COUNTING.with(|c| c.set(true));
    let r = f();
    COUNTING.with(|c| c.set(false));
    (r, ALLOCATIONS.with(Cell::get), MARKED_ALLOCATIONS.with(Cell::get))
}

/// What `f` allocated on every thread of the process (its parallel loops included). Other tests
/// of the binary running at the same time would be counted too: use it in a binary with one test.
pub fn count_all_threads<R>(f: impl FnOnce() -> R) -> (R, u64) {
    ALL_ALLOCATIONS.store(0, Ordering::Relaxed);
    ALL_THREADS.store(true, Ordering::SeqCst);
    let r = f();
    ALL_THREADS.store(false, Ordering::SeqCst);
    (r, ALL_ALLOCATIONS.load(Ordering::Relaxed))
}

/// Marks a part of the counted code (a stage): its allocations are also counted apart.
pub fn mark(on: bool) {
    MARKED.with(|t| t.set(on));
}

/// Bytes this (watched) thread allocated and has not freed yet.
pub fn live_bytes() -> i64 {
    LIVE_BYTES.with(Cell::get)
}
