//! The allocator over one address range, used twice: for lxrt's private
//! heap and for the shared arena (where its state lives inside the arena
//! itself, so every process sees the same free lists).
//!
//! Blocks come from `talc` (a binned, boundary-tagged allocator): a freed
//! block merges with free neighbours at once, so memory freed as small
//! blocks serves large requests later and the reverse (a file system
//! filled with small files and emptied can hold one large file). The
//! range is used from its start upwards: when nothing free fits, the heap
//! asks `Grow` for memory behind the next pages and extends talc's heap
//! over them. Memory, once backed, stays with the heap.

use core::alloc::Layout;
use core::ptr::NonNull;
use talc::base::Talc;
use talc::source::Source;
use talc::DefaultBinning;

const PAGE: usize = crate::layout::PAGE as usize;

/// How the range gets memory behind it as the heap rises.
pub type Grow = fn(from: usize, to: usize) -> bool;

/// Where the heap may grow, and how (talc's memory source).
#[derive(Debug)]
pub struct Range {
    base: usize,
    end: usize,
    /// Bytes below this are backed by memory.
    backed: usize,
    /// The end of talc's heap (0 until the first block is asked for).
    heap_end: usize,
    grow: Option<Grow>,
}

// SAFETY: `acquire` only claims or extends the heap over memory it has just
// made exist; it never calls back into the allocator.
unsafe impl Source for Range {
    fn acquire<B: talc::base::binning::Binning>(talc: &mut Talc<Self, B>, layout: Layout) -> Result<(), ()> {
        let r = &mut talc.source;
        let from = if r.heap_end == 0 { r.base } else { r.heap_end };
        // Room for the block, its alignment, talc's tags (and, the first
        // time, its bins), rounded to whole pages.
        let want = layout.size() + layout.align() + talc::min_first_heap_size::<B>() + 64;
        let to = from.checked_add(want).ok_or(())?.next_multiple_of(PAGE).min(r.end);
        if to <= from || to - from < layout.size() {
            return Err(());
        }
        if to > r.backed {
            match r.grow {
                Some(g) if g(r.backed, to) => r.backed = to,
                _ => return Err(()),
            }
        }
        let heap_end = r.heap_end;
        // SAFETY: `[from, to)` is backed, ours, and used by nothing else.
        let end = unsafe {
            match NonNull::new(heap_end as *mut u8) {
                None => talc.claim(from as *mut u8, to - from).ok_or(())?,
                Some(old) => talc.extend(old, to as *mut u8),
            }
        };
        talc.source.heap_end = end.as_ptr() as usize;
        Ok(())
    }
}

pub struct Heap {
    talc: Talc<Range, DefaultBinning>,
    /// Bytes handed out and not freed.
    in_use: usize,
}

impl Heap {
    pub const fn empty() -> Self {
        Heap { talc: Talc::new(Range { base: 0, end: 0, backed: 0, heap_end: 0, grow: None }), in_use: 0 }
    }

    /// Manages `[base, end)`; memory up to `backed` already exists and
    /// `grow` (if any) provides more.
    pub fn init(&mut self, base: usize, end: usize, backed: usize, grow: Option<Grow>) {
        *self = Heap::empty();
        self.talc.source = Range { base, end, backed, heap_end: 0, grow };
    }

    /// A block of `size` bytes aligned to `align`, or null.
    pub fn alloc(&mut self, size: usize, align: usize) -> *mut u8 {
        let Ok(layout) = Layout::from_size_align(size.max(1), align) else {
            return core::ptr::null_mut();
        };
        // SAFETY: the size is not zero.
        match unsafe { self.talc.allocate(layout) } {
            Some(p) => {
                self.in_use += layout.size();
                p.as_ptr()
            }
            None => core::ptr::null_mut(),
        }
    }

    /// # Safety
    /// `ptr` came from `alloc` on this heap with the same `size`/`align`.
    pub unsafe fn free(&mut self, ptr: *mut u8, size: usize, align: usize) {
        // SAFETY: the caller's promise; `alloc` accepted this layout.
        unsafe {
            let layout = Layout::from_size_align_unchecked(size.max(1), align);
            self.talc.deallocate(ptr, layout);
            self.in_use -= layout.size();
        }
    }

    /// Grows the block at `ptr` from `size` to `new_size` bytes where it
    /// lies, if the memory after it is free.
    ///
    /// # Safety
    /// As for `free`; `new_size >= size`.
    pub unsafe fn grow_in_place(&mut self, ptr: *mut u8, size: usize, align: usize, new_size: usize) -> bool {
        // SAFETY: the caller's promise.
        let grown = unsafe {
            let layout = Layout::from_size_align_unchecked(size.max(1), align);
            self.talc.try_grow_in_place(ptr, layout, new_size)
        };
        if grown {
            self.in_use += new_size - size.max(1);
        }
        grown
    }

    /// The end of the part backed by memory.
    #[inline]
    pub fn backed(&self) -> usize {
        self.talc.source.backed
    }

    /// Bytes handed out and not given back.
    pub fn in_use(&self) -> usize {
        self.in_use
    }

    /// Bytes the range holds in all.
    pub fn size(&self) -> usize {
        self.talc.source.end - self.talc.source.base
    }
}
