//! The kernel heap: a fixed region in .bss managed by a linked-list
//! allocator. Kernel data structures that grow at run time (compiled
//! downloaded code, for instance) live here.

use linked_list_allocator::LockedHeap;

/// XN's state for the disk (four bytes a block, its metadata's claims,
/// the registry) lives here too: 32 MiB covers a disk of several GiB.
const HEAP_SIZE: usize = 32 << 20;

#[repr(C, align(4096))]
struct Arena([u8; HEAP_SIZE]);

static mut ARENA: Arena = Arena([0; HEAP_SIZE]);

#[global_allocator]
static HEAP: LockedHeap = LockedHeap::empty();

pub fn init() {
    // SAFETY: the arena is used by nothing else and handed over once.
    unsafe { HEAP.lock().init((&raw mut ARENA).cast::<u8>(), HEAP_SIZE) }
}
