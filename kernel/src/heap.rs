//! The kernel heap: a fixed region in .bss managed by a linked-list
//! allocator, with a free list per size class in front of it. Kernel data
//! structures that grow at run time (compiled downloaded code, XN's state)
//! live here.
//!
//! Why the size classes: a first-fit walk of the hole list costs ~2,300
//! instructions once XN's state has fragmented the heap, and XN's calls
//! make and drop a few small buffers each (the I/O workload: half a
//! million a trial, a quarter of its instructions). A block of up to
//! `16 << (CLASSES - 1)` bytes (alignment at most 16) is rounded up to a
//! power of two and, once freed, kept on its class's list for the next
//! request of that class: a pop, not a walk. Blocks on the lists are not
//! returned to the hole list: the heap keeps the peak of each class.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::ptr::{null_mut, NonNull};
use linked_list_allocator::LockedHeap;

/// XN's state for the disk (four bytes a block, its metadata's claims,
/// the registry) lives here too: 32 MiB covers a disk of several GiB.
const HEAP_SIZE: usize = 32 << 20;

#[repr(C, align(4096))]
struct Arena([u8; HEAP_SIZE]);

static mut ARENA: Arena = Arena([0; HEAP_SIZE]);

static HEAP: LockedHeap = LockedHeap::empty();

/// Size classes: 16, 32, ... 8 KiB.
const CLASSES: usize = 10;
/// The alignment every class block has (and the most a classed request
/// may ask).
const CLASS_ALIGN: usize = 16;

/// Each class's free blocks, a list threaded through their first word.
struct FreeLists(UnsafeCell<[*mut u8; CLASSES]>);

// SAFETY: touched only while `HEAP`'s lock is held.
unsafe impl Sync for FreeLists {}

static FREE: FreeLists = FreeLists(UnsafeCell::new([null_mut(); CLASSES]));

/// The class serving `l`, if any.
fn class(l: Layout) -> Option<usize> {
    if l.align() > CLASS_ALIGN || l.size() > CLASS_ALIGN << (CLASSES - 1) {
        return None;
    }
    Some(l.size().max(CLASS_ALIGN).next_power_of_two().trailing_zeros() as usize - 4)
}

struct Classed;

#[global_allocator]
static ALLOCATOR: Classed = Classed;

// SAFETY: every block handed out is one the linked-list heap allocated
// for at least the layout asked (a class block: its class's size and
// `CLASS_ALIGN`, enough for any layout `class` maps to it), and goes back
// where it came from: `class` of the same layout decides both ways.
unsafe impl GlobalAlloc for Classed {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let mut heap = HEAP.lock();
        let Some(c) = class(l) else {
            return heap.allocate_first_fit(l).map_or(null_mut(), |p| p.as_ptr());
        };
        // SAFETY: `FREE` is touched only under `HEAP`'s lock, held here.
        let free = unsafe { &mut *FREE.0.get() };
        let p = free[c];
        if !p.is_null() {
            // SAFETY: a freed block of this class: its first word holds
            // the next one.
            free[c] = unsafe { *p.cast::<*mut u8>() };
            return p;
        }
        let Ok(whole) = Layout::from_size_align(CLASS_ALIGN << c, CLASS_ALIGN) else { return null_mut() };
        heap.allocate_first_fit(whole).map_or(null_mut(), |p| p.as_ptr())
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        let mut heap = HEAP.lock();
        match class(l) {
            Some(c) => {
                // SAFETY: as in `alloc`; `p` is a class block no longer in
                // use, at least a word long and aligned for one.
                unsafe {
                    let free = &mut *FREE.0.get();
                    *p.cast::<*mut u8>() = free[c];
                    free[c] = p;
                }
            }
            // SAFETY: `p` came from `allocate_first_fit` with `l`.
            None => unsafe { heap.deallocate(NonNull::new_unchecked(p), l) },
        }
    }
}

pub fn init() {
    // SAFETY: the arena is used by nothing else and handed over once.
    unsafe { HEAP.lock().init((&raw mut ARENA).cast::<u8>(), HEAP_SIZE) }
}
