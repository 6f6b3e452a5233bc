//! A small allocator over one address range, used twice: for lxrt's
//! private heap and for the shared arena (where its state lives inside the
//! arena itself, so every process sees the same free lists).
//!
//! Blocks up to 2 KiB come from power-of-two size classes; larger ones are
//! runs of whole pages, found first-fit in a list of freed runs or cut from
//! the top. Freed blocks hold the list links, so the allocator needs no
//! memory of its own.

const CLASSES: usize = 8; // 16 B .. 2 KiB
const MAX_SMALL: usize = 16 << (CLASSES - 1);
const PAGE: usize = 4096;

/// How the range gets memory behind it as `top` rises.
pub type Grow = fn(from: usize, to: usize) -> bool;

#[repr(C)]
pub struct Heap {
    top: usize,
    end: usize,
    /// Bytes below this are backed by frames.
    backed: usize,
    small: [usize; CLASSES],
    /// Freed page runs: each starts with `[next, pages]`.
    runs: usize,
    grow: Option<Grow>,
}

fn class(size: usize) -> Option<usize> {
    (size <= MAX_SMALL).then(|| size.max(16).next_power_of_two().trailing_zeros() as usize - 4)
}

impl Heap {
    pub const fn empty() -> Self {
        Heap { top: 0, end: 0, backed: 0, small: [0; CLASSES], runs: 0, grow: None }
    }

    /// Manages `[base, end)`; memory up to `backed` already exists and
    /// `grow` (if any) provides more.
    pub fn init(&mut self, base: usize, end: usize, backed: usize, grow: Option<Grow>) {
        *self = Heap { top: base, end, backed, grow, ..Heap::empty() };
    }

    fn bump(&mut self, size: usize, align: usize) -> *mut u8 {
        let start = (self.top + align - 1) & !(align - 1);
        let Some(new_top) = start.checked_add(size).filter(|&t| t <= self.end) else {
            return core::ptr::null_mut();
        };
        if new_top > self.backed {
            let to = (new_top + PAGE - 1) & !(PAGE - 1);
            match self.grow {
                Some(g) if g(self.backed, to) => self.backed = to,
                _ => return core::ptr::null_mut(),
            }
        }
        self.top = new_top;
        start as *mut u8
    }

    pub fn alloc(&mut self, size: usize, align: usize) -> *mut u8 {
        if align > PAGE {
            return core::ptr::null_mut();
        }
        let size = size.max(align);
        if let Some(c) = class(size) {
            let head = self.small[c];
            if head != 0 {
                // SAFETY: a freed block of this class holds the next link.
                self.small[c] = unsafe { *(head as *const usize) };
                return head as *mut u8;
            }
            let n = 16 << c;
            return self.bump(n, n);
        }
        let pages = size.div_ceil(PAGE);
        let mut prev: *mut usize = &mut self.runs;
        // SAFETY: every run in the list is a freed block we own, starting
        // with its `[next, pages]` header.
        unsafe {
            while *prev != 0 {
                let run = *prev as *mut usize;
                let have = *run.add(1);
                if have >= pages {
                    if have == pages {
                        *prev = *run;
                    } else {
                        let rest = (run as usize + pages * PAGE) as *mut usize;
                        *rest = *run;
                        *rest.add(1) = have - pages;
                        *prev = rest as usize;
                    }
                    return run as *mut u8;
                }
                prev = run;
            }
        }
        self.bump(pages * PAGE, PAGE)
    }

    /// # Safety
    /// `ptr` came from `alloc` on this heap with the same `size`/`align`.
    pub unsafe fn free(&mut self, ptr: *mut u8, size: usize, align: usize) {
        let size = size.max(align);
        let p = ptr as *mut usize;
        // SAFETY: the caller hands the block back; we reuse it for links.
        unsafe {
            if let Some(c) = class(size) {
                *p = self.small[c];
                self.small[c] = p as usize;
            } else {
                *p = self.runs;
                *p.add(1) = size.div_ceil(PAGE);
                self.runs = p as usize;
            }
        }
    }

    /// The end of the part backed by memory.
    #[inline]
    pub fn backed(&self) -> usize {
        self.backed
    }

    /// Bytes between the start and the highest allocation so far.
    pub fn used(&self, base: usize) -> usize {
        self.top - base
    }
}
