//! The Linux program's memory (paper 001 §5.2: virtual memory managed by
//! the application's own library). lxrt keeps a list of regions (what the
//! program was promised, with its rights); frames appear on first touch.
//! A present page that is read-only in a writable region is copy-on-write
//! (shared with a fork relative): the write fault copies it, or just makes
//! it writable when the frame table shows nobody else maps it.

use crate::layout::{page_down, page_up, INIT_STACK_BOTTOM, INIT_STACK_TOP, PAGE, SCRATCH};
use abi::layout::pte_va;
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use alloc::vec::Vec;
use user::{kinfo, sys};

pub const R: u32 = 1;
pub const W: u32 = 2;
pub const X: u32 = 4;

#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    pub prot: u32,
}

static mut REGIONS: Vec<Region> = Vec::new();

pub fn regions() -> &'static mut Vec<Region> {
    // SAFETY: one thread; only lxrt (never re-entered) touches this.
    unsafe { &mut (*(&raw mut REGIONS)) }
}

const PRESENT: u64 = 1;
const WRITABLE: u64 = 2;

/// The page-table entry mapping `va`, if the page is present.
pub fn pte(va: u64) -> Option<u64> {
    for level in (0..4).rev() {
        // SAFETY: the self-map is readable down to the first absent level,
        // which we never go past.
        let e = unsafe { core::ptr::read_volatile(pte_va(va, level) as *const u64) };
        if e & PRESENT == 0 {
            return None;
        }
        if level == 0 {
            return Some(e);
        }
    }
    None
}

pub fn frame_of(pte: u64) -> u64 {
    (pte >> 12) & 0xff_ffff_ffff
}

fn flags(prot: u32) -> u64 {
    let mut f = 0;
    if prot & W != 0 {
        f |= mf::WRITE;
    }
    if prot & X != 0 {
        f |= mf::EXEC;
    }
    f
}

pub fn find(va: u64) -> Option<Region> {
    regions().iter().copied().find(|r| r.start <= va && va < r.end)
}

/// Removes `[start, end)` from the region list, splitting at the edges.
fn carve(start: u64, end: u64) {
    let mut out = Vec::with_capacity(regions().len() + 1);
    for r in regions().iter() {
        if r.end <= start || r.start >= end {
            out.push(*r);
            continue;
        }
        if r.start < start {
            out.push(Region { end: start, ..*r });
        }
        if r.end > end {
            out.push(Region { start: end, ..*r });
        }
    }
    *regions() = out;
}

/// Promises `[start, end)` with `prot` (pages appear on first touch).
pub fn add(start: u64, end: u64, prot: u32) {
    carve(start, end);
    regions().push(Region { start, end, prot });
}

/// Unmaps one page, returning its frame to the kernel when it was ours
/// and nobody else maps it.
pub fn drop_page(va: u64) {
    if let Some(p) = pte(va) {
        let _ = sys::unmap(ENV_SELF, va);
        let f = frame_of(p);
        let info = kinfo::frame(f);
        if info.refs == 0 && info.owner as u64 == sys::self_id() {
            let _ = sys::frame_free(f);
        }
    }
}

/// Forgets `[start, end)` and frees what was behind it.
pub fn remove(start: u64, end: u64) {
    for r in regions().clone() {
        let (lo, hi) = (r.start.max(start), r.end.min(end));
        let mut va = lo;
        while va < hi {
            drop_page(va);
            va += PAGE;
        }
    }
    carve(start, end);
}

/// Changes the rights of `[start, end)`. Pages become writable lazily (the
/// first write faults) so copy-on-write sharing is never broken here.
pub fn protect(start: u64, end: u64, prot: u32) -> bool {
    let mut covered = start;
    let mut rs: Vec<Region> = regions().clone();
    rs.sort_by_key(|r| r.start);
    for r in &rs {
        if r.end > covered && r.start <= covered {
            covered = r.end;
        }
    }
    if covered < end {
        return false;
    }
    let mut pieces = Vec::new();
    for r in rs.iter().filter(|r| r.start < end && r.end > start) {
        pieces.push(Region { start: r.start.max(start), end: r.end.min(end), prot });
    }
    carve(start, end);
    regions().extend(pieces);
    let mut va = start;
    while va < end {
        if pte(va).is_some() {
            let _ = sys::protect(ENV_SELF, va, flags(prot & !W));
        }
        va += PAGE;
    }
    true
}

/// Maps a fresh zeroed frame at `va` with `prot`.
pub fn populate(va: u64, prot: u32) -> bool {
    let Ok(f) = sys::frame_alloc(ENV_SELF, FRAME_ANY) else {
        return false;
    };
    if sys::map(ENV_SELF, va, f, flags(prot)).is_err() {
        let _ = sys::frame_free(f);
        return false;
    }
    true
}

/// Gives this process its own writable copy of the page at `va`.
fn break_cow(va: u64, old: u64, prot: u32) -> bool {
    let f = frame_of(old);
    // Sole mapper of a frame we own: just allow writes again. (A frame our
    // parent owns may not be made writable here even when we are its last
    // mapper: the kernel grants at most the rights we were given.)
    let info = kinfo::frame(f);
    if info.refs <= 1
        && info.owner as u64 == sys::self_id()
        && sys::protect(ENV_SELF, va, flags(prot)).is_ok()
    {
        return true;
    }
    let Ok(new) = sys::frame_alloc(ENV_SELF, FRAME_ANY) else {
        return false;
    };
    if sys::map(ENV_SELF, SCRATCH, new, mf::WRITE).is_err() {
        let _ = sys::frame_free(new);
        return false;
    }
    // SAFETY: `va` is mapped (read-only) and SCRATCH maps the new frame.
    unsafe { crate::copy::copy_page(SCRATCH, va) };
    let _ = sys::unmap(ENV_SELF, SCRATCH);
    let _ = sys::unmap(ENV_SELF, va);
    sys::map(ENV_SELF, va, new, flags(prot)).is_ok()
}

/// Whether a native program runs on the kernel's initial stack (lxrt
/// clears it when it starts a Linux program, which has a stack of its own).
static mut NATIVE_STACK: bool = true;

/// The initial stack is dead from now on (`entry::enter`).
pub fn leave_native_stack() {
    // SAFETY: one thread.
    unsafe { NATIVE_STACK = false };
}

/// Is `va` in the live native program's stack? A forked child gets copies
/// of the pages in use and fresh zeroed ones below them on demand.
pub fn native_stack(va: u64) -> bool {
    // SAFETY: one thread.
    let live = unsafe { NATIVE_STACK };
    live && (INIT_STACK_BOTTOM..INIT_STACK_TOP).contains(&va)
}

/// Makes the page at `va` usable for a read (or write): what a page fault
/// does, and what lxrt does before touching the program's buffers itself
/// (a fault inside lxrt's handler would be fatal).
pub fn touch(va: u64, write: bool) -> bool {
    let r = match find(va) {
        Some(r) => r,
        None if native_stack(va) => Region { start: INIT_STACK_BOTTOM, end: INIT_STACK_TOP, prot: R | W },
        None => return false,
    };
    if r.prot == 0 || (write && r.prot & W == 0) {
        return false;
    }
    let va = page_down(va);
    match pte(va) {
        None => populate(va, r.prot),
        Some(p) if write && p & WRITABLE == 0 => break_cow(va, p, r.prot),
        Some(_) => true,
    }
}

/// Checks and prepares `[ptr, ptr+len)` of the program's memory.
pub fn prepare(ptr: u64, len: u64, write: bool) -> bool {
    if len == 0 {
        return true;
    }
    let Some(end) = ptr.checked_add(len) else {
        return false;
    };
    // The last page by its start: rounding `end` up can wrap to 0 for a
    // range in the top page, which would check nothing.
    let last = page_down(end - 1);
    let mut va = page_down(ptr);
    loop {
        if !touch(va, write) {
            return false;
        }
        if va == last {
            return true;
        }
        va += PAGE;
    }
}
