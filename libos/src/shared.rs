//! The shared arena (paper 000 §5.2.1: ExOS keeps the process table, file
//! descriptors' objects and pipes in memory shared between processes).
//!
//! The first process allocates every frame of `[SHARED, SHARED +
//! SHARED_SIZE)` and maps it; fork maps the very same frames into each child
//! at the same address (`map_from`, not copy-on-write), so a file one
//! process writes is the file another reads. The first page holds this
//! header; the rest is handed out by a `Heap` kept in the header. Nothing
//! here is protected from a buggy process: like ExOS's shared state it is
//! writable by every process of the tree.

use crate::heap::Heap;
use crate::layout::{PAGE, SHARED, SHARED_SIZE};
use crate::proc::table::ProcTable;
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use core::sync::atomic::AtomicU64;
use user::sys;

#[repr(C)]
pub struct Header {
    /// The big lock (`crate::lock`).
    pub lock: AtomicU64,
    pub heap: Heap,
    /// Root of the file system (`crate::fs`).
    pub fs: crate::fs::FsRoot,
    pub procs: ProcTable,
    /// Linux calls already reported as unsupported (one bit per number).
    pub logged: [u64; 8],
    /// The console terminal (`obj::console`): input taken from the kernel
    /// but not yet read, and the foreground process group.
    pub tty: crate::obj::console::Tty,
}

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

/// Allocates and maps the whole arena (first process only).
pub fn create() -> Result<(), abi::Error> {
    let mut va = SHARED;
    while va < SHARED + SHARED_SIZE {
        let f = sys::frame_alloc(ENV_SELF, FRAME_ANY)?;
        sys::map(ENV_SELF, va, f, mf::WRITE)?;
        va += PAGE;
    }
    let base = SHARED as usize + core::mem::size_of::<Header>().next_multiple_of(PAGE as usize);
    let end = (SHARED + SHARED_SIZE) as usize;
    get().heap.init(base, end, end, None);
    Ok(())
}

/// Maps the arena into child `env` at the same address (fork).
pub fn share_with(env: u64) -> Result<(), abi::Error> {
    let mut va = SHARED;
    while va < SHARED + SHARED_SIZE {
        sys::map_from(env, va, va, mf::WRITE)?;
        va += PAGE;
    }
    Ok(())
}
