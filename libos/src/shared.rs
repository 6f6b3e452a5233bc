//! The shared arena (paper 000 §5.2.1: ExOS keeps the process table, file
//! descriptors' objects and pipes in memory shared between processes).
//!
//! The first process allocates every frame of `[SHARED, SHARED +
//! SHARED_SIZE)` up front, lists them in the header (`frames`) and guards
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
use crate::layout::{PAGE, SHARED, SHARED_SIZE};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use abi::syscall::{rights, CRED_SELF};
use core::sync::atomic::AtomicU64;
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
    /// The frame behind each page of the arena (owned by the first process).
    pub frames: [u32; PAGES],
}

const PAGES: usize = (SHARED_SIZE / PAGE) as usize;

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

/// # Safety
/// `p` came from `alloc` with the same size and alignment.
pub unsafe fn free(p: *mut u8, size: usize, align: usize) {
    // SAFETY: passed on from the caller.
    unsafe { get().heap.free(p, size, align) }
}

/// Maps the arena's pages `[from, to)` into this process by frame name.
fn map_pages(from: u64, to: u64) -> bool {
    let frames = &get().frames;
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
fn grow(from: usize, to: usize) -> bool {
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
    let header_end = SHARED + size_of::<Header>().next_multiple_of(PAGE as usize) as u64;
    let mut va = SHARED;
    while va < SHARED + SHARED_SIZE {
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
            let mut h = SHARED;
            while h < header_end {
                let frame = crate::vm::frame_of(crate::vm::pte(h).ok_or(abi::Error::NotMapped)?);
                get().frames[((h - SHARED) / PAGE) as usize] = frame as u32;
                h += PAGE;
            }
        } else if va > header_end {
            get().frames[((va - PAGE - SHARED) / PAGE) as usize] = f as u32;
        }
    }
    // SAFETY: one thread; nothing has used the arena yet.
    unsafe {
        CRED = cred;
        MAPPED_END = header_end;
    }
    let end = (SHARED + SHARED_SIZE) as usize;
    get().heap.init(header_end as usize, end, header_end as usize, Some(grow));
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
