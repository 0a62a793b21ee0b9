//! Test builds only: a counting global allocator that counts allocations
//! made by a thread while it is inside a hot loop ([`HotGuard`]). The
//! engine's tests use it to prove the hot loop never allocates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub struct CountingAlloc;

static HOT_ALLOCS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static IN_HOT: Cell<bool> = const { Cell::new(false) };
}

fn note() {
    if IN_HOT.try_with(|h| h.get()).unwrap_or(false) {
        HOT_ALLOCS.fetch_add(1, Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counting touches only a const-initialised thread-local and an atomic,
// neither of which allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note();
        // SAFETY: `ptr` was allocated by System with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: `ptr` was allocated by System with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Marks the current thread as inside a hot loop until dropped.
pub struct HotGuard;

impl HotGuard {
    pub fn enter() -> HotGuard {
        IN_HOT.with(|h| h.set(true));
        HotGuard
    }
}

impl Drop for HotGuard {
    fn drop(&mut self) {
        let _ = IN_HOT.try_with(|h| h.set(false));
    }
}

/// Allocations (and frees) seen inside hot loops so far.
pub fn hot_allocations() -> u64 {
    HOT_ALLOCS.load(Relaxed)
}
