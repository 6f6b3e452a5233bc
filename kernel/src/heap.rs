//! The kernel heap: a fixed region in .bss managed by a linked-list
//! allocator, and, once XN mounts a disk, a second region of frames sized
//! to it (`add`): XN's state (four bytes a block, its metadata's claims,
//! the registry) grows with the disk, and a machine without an XN disk
//! should not pay for it. Kernel data structures that grow at run time
//! (compiled downloaded code, XN's tables) live here.

use core::alloc::{GlobalAlloc, Layout};
use linked_list_allocator::LockedHeap;

const HEAP_SIZE: usize = 4 << 20;

#[repr(C, align(4096))]
struct Arena([u8; HEAP_SIZE]);

static mut ARENA: Arena = Arena([0; HEAP_SIZE]);

/// The .bss region, then the added one; a block is freed into the region
/// it came from.
struct Heaps {
    first: LockedHeap,
    more: LockedHeap,
}

#[global_allocator]
static HEAP: Heaps = Heaps { first: LockedHeap::empty(), more: LockedHeap::empty() };

// SAFETY: each block comes from one of two allocators and goes back to
// the one whose region holds it (the regions do not overlap).
unsafe impl GlobalAlloc for Heaps {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { self.first.alloc(layout) };
        if p.is_null() {
            // SAFETY: as above.
            unsafe { self.more.alloc(layout) }
        } else {
            p
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let first = self.first.lock();
        let mine = (first.bottom()..first.top()).contains(&ptr);
        drop(first);
        // SAFETY: `ptr` came from the allocator whose region holds it.
        unsafe {
            if mine {
                self.first.dealloc(ptr, layout)
            } else {
                self.more.dealloc(ptr, layout)
            }
        }
    }
}

pub fn init() {
    // SAFETY: the arena is used by nothing else and handed over once.
    unsafe { HEAP.first.lock().init((&raw mut ARENA).cast::<u8>(), HEAP_SIZE) }
}

/// Adds `len` bytes at `start` (kernel frames, in the physical window)
/// as the second region; once only (a second call is refused).
pub fn add(start: *mut u8, len: usize) -> bool {
    let mut more = HEAP.more.lock();
    if more.size() != 0 {
        return false;
    }
    // SAFETY: the caller hands over memory nothing else uses, for good.
    unsafe { more.init(start, len) };
    true
}
