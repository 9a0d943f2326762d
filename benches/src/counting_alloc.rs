//! [`CountingAllocator`]: a global allocator that counts the bytes live on
//! the heap and their peak, for the benchmarks that report peak heap
//! (`--bench load`, `history-cost`). Install it in the binary:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: agentgate_benches::CountingAllocator = agentgate_benches::CountingAllocator;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting live bytes and their peak.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAllocator;

impl CountingAllocator {
    /// Bytes live now (allocated through this allocator, not yet freed).
    pub fn current() -> usize {
        CURRENT.load(Ordering::Relaxed)
    }

    /// The highest [`current`](Self::current) since the last
    /// [`reset_peak`](Self::reset_peak).
    pub fn peak() -> usize {
        PEAK.load(Ordering::Relaxed)
    }

    /// Starts a new peak from the bytes live now, and returns them.
    pub fn reset_peak() -> usize {
        let now = CURRENT.load(Ordering::Relaxed);
        PEAK.store(now, Ordering::Relaxed);
        now
    }
}

fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// A GlobalAlloc impl is unsafe by definition; each method forwards to the
// system allocator unchanged and only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The number after `name` in `args` (`--steps 80`), if any.
pub fn usize_arg(args: &[String], name: &str) -> Option<usize> {
    let at = args.iter().position(|a| a == name)?;
    args.get(at + 1)?.parse().ok()
}
