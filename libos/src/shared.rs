//! The shared arena (paper 000 §5.2.1: ExOS keeps the process table, file
//! descriptors' objects and pipes in memory shared between processes).
//!
//! The first process sizes the arena from the machine's memory (an eighth
//! of the frames the kernel's table lists, within `SHARED_MIN..=SHARED_MAX`),
//! allocates every frame of it up front, lists them after the header
//! (`frames`) and guards
//! each with a share capability it derives for the purpose (`frame_share`),
//! so any process holding that capability may map them by name. Nobody
//! maps more of the arena than the shared heap has handed out (`backed`):
//! fork maps the used part into the child with one `map_from_range`
//! (the same frames, writable: a file one process writes is the file
//! another reads) and grants it the capability; when the heap grows, the
//! process growing it maps the new frames, and every other process maps
//! them when it next takes the lock (`sync`), before it can look at
//! anything stored there. So lxrt's handler never faults on the arena.
//! The first pages hold this header; the rest is handed out by a `Heap`
//! kept in the header. Nothing here is protected from a buggy process:
//! like ExOS's shared state it is writable by every process of the tree.

use crate::heap::Heap;
use crate::layout::{PAGE, SHARED, SHARED_MAX, SHARED_MIN};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use abi::syscall::{rights, CRED_SELF};
use core::sync::atomic::{AtomicU32, AtomicU64};
use user::sys;

#[repr(C)]
pub struct Header {
    /// The big lock (`crate::lock`).
    pub lock: AtomicU64,
    pub heap: Heap,
    /// Root of the file system (`crate::fs`).
    pub fs: crate::fs::FsRoot,
    /// Linux calls already reported as unsupported (one bit per number).
    pub logged: [u64; 8],
    /// The console terminal (`obj::console`): input taken from the kernel
    /// but not yet read, and the foreground process group.
    pub tty: crate::obj::console::Tty,
    /// The process being killed for want of memory (`oom`), or 0.
    pub oom_victim: AtomicU32,
    /// Pages in the arena; the frame behind each (owned by the first
    /// process) is listed right after this header (`frames`).
    pub pages: usize,
}

/// The frame behind each page of the arena.
fn frames() -> &'static mut [u32] {
    let at = (SHARED as usize + size_of::<Header>()).next_multiple_of(align_of::<u32>());
    // SAFETY: `create` puts the list there, inside the header's pages, which
    // every process maps; it is written only by `create`.
    unsafe { core::slice::from_raw_parts_mut(at as *mut u32, get().pages) }
}

/// Where the header and the frame list end, for an arena of `pages` pages.
fn header_end(pages: usize) -> u64 {
    (SHARED + (size_of::<Header>() + pages * size_of::<u32>()) as u64).next_multiple_of(PAGE)
}

/// The arena's size on a machine whose kernel manages `frames` frames.
fn arena_size(frames: u64) -> u64 {
    (frames * PAGE / 8).clamp(SHARED_MIN, SHARED_MAX) & !(PAGE - 1)
}

/// The capability slot (in this process's list) that covers the arena's
/// frames, and how far this process has the arena mapped.
static mut CRED: u64 = 0;
static mut MAPPED_END: u64 = SHARED;
/// The slot a child being forked receives the capability in.
static mut CHILD_CRED: u64 = 0;

/// The header, in every process at the same address.
pub fn get() -> &'static mut Header {
    // SAFETY: the arena is mapped writable in every lxrt process before any
    // code calls this; concurrent use is serialised by `crate::lock`.
    unsafe { &mut *(SHARED as *mut Header) }
}

/// Allocates `size` bytes of shared memory (not zeroed), or null when the
/// arena is full.
pub fn alloc(size: usize, align: usize) -> *mut u8 {
    get().heap.alloc(size, align)
}

/// Grows the block at `p` from `size` to `new_size` bytes where it lies.
///
/// # Safety
/// `p` came from `alloc` with `size` and `align`; `new_size >= size`.
pub unsafe fn grow(p: *mut u8, size: usize, align: usize, new_size: usize) -> bool {
    // SAFETY: passed on from the caller.
    unsafe { get().heap.grow_in_place(p, size, align, new_size) }
}

/// Bytes the arena keeps for everything but file data: a full file system
/// must leave room for pipes, open files and directories' growth, or the
/// shell could run nothing more (a 64th of the arena, at least 1 MiB).
pub fn reserve() -> usize {
    (get().heap.size() / 64).max(1 << 20)
}

/// Whether `more` bytes of file data fit, leaving `reserve` bytes.
fn data_fits(more: usize) -> bool {
    let h = &get().heap;
    h.in_use().saturating_add(more).saturating_add(reserve()) <= h.size()
}

/// Allocates `size` bytes for file data: null when that would leave less
/// than `reserve` bytes of the arena (a full file system, ENOSPC).
pub fn alloc_data(size: usize, align: usize) -> *mut u8 {
    if !data_fits(size) {
        return core::ptr::null_mut();
    }
    alloc(size, align)
}

/// Grows file data at `p` from `size` to `new_size` bytes where it lies,
/// if the arena has the room there and `alloc_data` would allow it.
///
/// # Safety
/// `p` came from `alloc_data` with `size` and `align`; `new_size >= size`.
pub unsafe fn grow_data(p: *mut u8, size: usize, align: usize, new_size: usize) -> bool {
    // SAFETY: passed on from the caller.
    data_fits(new_size - size) && unsafe { get().heap.grow_in_place(p, size, align, new_size) }
}

/// # Safety
/// `p` came from `alloc` with the same size and alignment.
pub unsafe fn free(p: *mut u8, size: usize, align: usize) {
    // SAFETY: passed on from the caller.
    unsafe { get().heap.free(p, size, align) }
}

/// Maps the arena's pages `[from, to)` into this process by frame name.
fn map_pages(from: u64, to: u64) -> bool {
    let frames = frames();
    let mut va = from;
    while va < to {
        let f = frames[((va - SHARED) / PAGE) as usize] as u64;
        // SAFETY: one thread; CRED is set before the arena is used.
        let cred = unsafe { CRED };
        if sys::map_with(ENV_SELF, va, f, mf::WRITE, CRED_SELF, cred).is_err() {
            return false;
        }
        va += PAGE;
    }
    true
}

/// The heap's growth: map what it reaches next (the frames exist already).
fn map_more(from: usize, to: usize) -> bool {
    // SAFETY: one thread per environment.
    let mapped = unsafe { &mut *(&raw mut MAPPED_END) };
    let _ = from;
    if !map_pages(*mapped, to as u64) {
        return false;
    }
    *mapped = to as u64;
    true
}

/// Maps whatever part of the arena other processes' allocations have
/// reached since this process last looked (called with the lock held).
#[inline]
pub fn sync() {
    let backed = get().heap.backed() as u64;
    // SAFETY: one thread per environment.
    let mapped = unsafe { &mut *(&raw mut MAPPED_END) };
    if backed > *mapped && map_pages(*mapped, backed) {
        *mapped = backed;
    }
}

/// Allocates the arena's frames and maps its header (first process only).
pub fn create() -> Result<(), abi::Error> {
    let cred = sys::cap_derive(CRED_SELF, rights::ALL)?;
    let size = arena_size(user::kinfo::kernel().frames);
    let pages = (size / PAGE) as usize;
    let header_end = header_end(pages);
    let mut va = SHARED;
    while va < SHARED + size {
        let f = if va < header_end {
            let f = sys::frame_alloc(ENV_SELF, FRAME_ANY)?;
            sys::map(ENV_SELF, va, f, mf::WRITE)?;
            f
        } else {
            sys::frame_alloc(ENV_SELF, FRAME_ANY)?
        };
        sys::frame_share(f, cred)?;
        va += PAGE;
        // The header (with the frame list) is mapped before the list is
        // written: record the header's frames once it is all there.
        if va == header_end {
            get().pages = pages;
            let mut h = SHARED;
            while h < header_end {
                let frame = crate::vm::frame_of(crate::vm::pte(h).ok_or(abi::Error::NotMapped)?);
                frames()[((h - SHARED) / PAGE) as usize] = frame as u32;
                h += PAGE;
            }
        } else if va > header_end {
            frames()[((va - PAGE - SHARED) / PAGE) as usize] = f as u32;
        }
    }
    // SAFETY: one thread; nothing has used the arena yet.
    unsafe {
        CRED = cred;
        MAPPED_END = header_end;
    }
    let end = (SHARED + size) as usize;
    get().heap.init(header_end as usize, end, header_end as usize, Some(map_more));
    Ok(())
}

/// Maps the part of the arena in use into child `env` at the same address
/// and grants it the capability to map the rest (fork).
pub fn share_with(env: u64) -> Result<(), abi::Error> {
    // SAFETY: one thread per environment.
    let (cred, mapped) = unsafe { (CRED, MAPPED_END) };
    crate::range::map_from(env, SHARED, SHARED, (mapped - SHARED) / PAGE, mf::WRITE)?;
    let slot = sys::cap_grant(env, cred)?;
    // SAFETY: as above; the child reads it from its copy of our statics.
    unsafe { CHILD_CRED = slot };
    Ok(())
}

/// First thing in a forked child: its capability slot for the arena.
pub fn forked_child() {
    // SAFETY: one thread per environment.
    unsafe { CRED = CHILD_CRED };
}
