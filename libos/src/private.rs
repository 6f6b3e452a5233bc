//! lxrt's private heap: Rust's global allocator for state that belongs to
//! one process (its fd table, memory map, cwd). Frames are allocated as the
//! heap grows; fork copies them like the rest of lxrt's own data.

use crate::heap::Heap;
use crate::layout::{PAGE, PRIVATE_HEAP, PRIVATE_HEAP_SIZE};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use user::sys;

struct Private(UnsafeCell<Heap>);

// SAFETY: a process's threads share its private heap but run lxrt's code
// one at a time, under the big lock (see `scoped::Scoped`'s `Sync`), and
// lxrt's handler never interrupts lxrt itself on one thread, so the heap
// is never used concurrently.
unsafe impl Sync for Private {}

#[global_allocator]
static HEAP: Private = Private(UnsafeCell::new(Heap::empty()));

fn grow(from: usize, to: usize) -> bool {
    let mut va = from as u64;
    while va < to as u64 {
        let Ok(f) = sys::frame_alloc(crate::env::id() as u64, FRAME_ANY) else {
            return false;
        };
        if sys::map(ENV_SELF, va, f, mf::WRITE).is_err() {
            let _ = sys::frame_free(f);
            return false;
        }
        va += PAGE;
    }
    true
}

/// Sets the heap up; call once before allocating.
pub fn init() {
    let base = PRIVATE_HEAP as usize;
    // SAFETY: called once at start, before any allocation.
    unsafe { (*HEAP.0.get()).init(base, base + PRIVATE_HEAP_SIZE as usize, base, Some(grow)) };
}

/// The end of the heap's memory (fork copies `[PRIVATE_HEAP, backed)`).
pub fn backed() -> u64 {
    // SAFETY: single-threaded, see `Sync` above.
    unsafe { (*HEAP.0.get()).backed() as u64 }
}

/// Whether Rust's allocations go to the shared arena instead (`in_arena`).
static IN_ARENA: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Runs `f` with every allocation it makes (`Vec`, `Box`, ...) taken from
/// the shared arena instead of this process's heap, so that what it builds
/// can be used by every process (the network stack, `net::stack`). The
/// big lock must be held: the arena's heap is shared. Blocks are given
/// back to whichever heap holds their address, so a structure built here
/// may be dropped anywhere.
pub fn in_arena<R>(f: impl FnOnce() -> R) -> R {
    let was = IN_ARENA.swap(true, core::sync::atomic::Ordering::Relaxed);
    let r = f();
    IN_ARENA.store(was, core::sync::atomic::Ordering::Relaxed);
    r
}

fn in_shared(p: *mut u8) -> bool {
    use crate::layout::{SHARED, SHARED_MAX};
    (SHARED..SHARED + SHARED_MAX).contains(&(p as u64))
}

// SAFETY: `Heap` hands out disjoint blocks of at least the requested size
// and alignment (or null); so does the arena's.
unsafe impl GlobalAlloc for Private {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if IN_ARENA.load(core::sync::atomic::Ordering::Relaxed) {
            return crate::shared::alloc(l.size(), l.align());
        }
        // SAFETY: single-threaded, see `Sync` above.
        unsafe { (*self.0.get()).alloc(l.size(), l.align()) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if in_shared(p) {
            // SAFETY: a block `alloc` took from the arena (its address).
            return unsafe { crate::shared::free(p, l.size(), l.align()) };
        }
        // SAFETY: as in `alloc`; the caller returns a block it got from us.
        unsafe { (*self.0.get()).free(p, l.size(), l.align()) }
    }
    /// A block stays in the heap it is in, whichever `in_arena` says: a
    /// process's own `Vec` grown inside `in_arena` must not move into the
    /// arena (a forked child would share it), nor a structure of the
    /// arena's grown outside it into this process's heap (another process
    /// would free it into its own).
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        let shared = in_shared(p);
        if new_size >= l.size() {
            // SAFETY: `p` is the caller's block of layout `l`, from the heap
            // its address names.
            let grown = unsafe {
                if shared {
                    crate::shared::grow(p, l.size(), l.align(), new_size)
                } else {
                    (*self.0.get()).grow_in_place(p, l.size(), l.align(), new_size)
                }
            };
            if grown {
                return p;
            }
        }
        let new = if shared {
            crate::shared::alloc(new_size, l.align())
        } else {
            // SAFETY: single-threaded, see `Sync` above.
            unsafe { (*self.0.get()).alloc(new_size, l.align()) }
        };
        if !new.is_null() {
            // SAFETY: both blocks hold at least the bytes copied and are
            // distinct; the old one is given back to its heap.
            unsafe {
                core::ptr::copy_nonoverlapping(p, new, l.size().min(new_size));
                self.dealloc(p, l);
            }
        }
        new
    }
}
