//! Loading a program from the boot file system into a new child
//! environment, entirely in user space: the parent allocates frames charged
//! to the child, fills them through a temporary mapping of its own, and maps
//! them into the child.

use crate::sys;
use abi::exception::Regs;
use abi::layout::{INIT_STACK_PAGES, INIT_STACK_TOP, USER_END, USER_MIN};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use abi::tables::env_state;
use abi::Error;
use binfmt::elf::{Elf, ElfError, PF_W, PF_X, PT_LOAD};

/// Where the parent maps a child's page while filling it.
const SCRATCH: u64 = 0x7E00_0000_0000;

#[derive(Debug)]
pub enum SpawnError {
    NotFound,
    BadElf(ElfError),
    Sys(Error),
}

impl From<Error> for SpawnError {
    fn from(e: Error) -> Self {
        SpawnError::Sys(e)
    }
}

/// Starts `bin/NAME` in a new child with `arg` in `rdi`; returns its id.
pub fn spawn(name: &str, arg: u64) -> Result<u64, SpawnError> {
    let child = spawn_stopped(name, arg)?;
    start(child)?;
    Ok(child)
}

/// Makes a child loaded by `spawn_stopped` runnable, with one time slice.
pub fn start(child: u64) -> Result<(), Error> {
    // One slice, like its parent's share, before it runs: runnable, it
    // takes turns in its parent's slices at once, and a short program
    // could end before a slice given afterwards (`BadState`: test_debug's
    // `steppee`, now and then).
    sys::slice_alloc(child, abi::syscall::SLICE_ANY)?;
    sys::env_run(child)?;
    Ok(())
}

/// Loads `bin/NAME` into a new, stopped child with `arg` in `rdi` (so the
/// parent can give it capabilities before it runs); returns its id.
pub fn spawn_stopped(name: &str, arg: u64) -> Result<u64, SpawnError> {
    spawn_stopped_in(ENV_SELF, name, arg)
}

/// `spawn_stopped`, the new environment a child of `parent` (the caller or
/// a descendant, `sys::env_create_in`).
pub fn spawn_stopped_in(parent: u64, name: &str, arg: u64) -> Result<u64, SpawnError> {
    let mut path = [0u8; 64];
    let n = name.len().min(60);
    path[..4].copy_from_slice(b"bin/");
    path[4..4 + n].copy_from_slice(&name.as_bytes()[..n]);
    let path = core::str::from_utf8(&path[..4 + n]).map_err(|_| SpawnError::NotFound)?;
    let data = crate::bootfs::find(path).ok_or(SpawnError::NotFound)?;
    let elf = Elf::parse(data, USER_MIN, USER_END, 0).map_err(SpawnError::BadElf)?;
    let child = sys::env_create_in(parent)?;
    match load(child, &elf) {
        Ok(()) => {}
        Err(e) => {
            let _ = sys::env_destroy(child);
            return Err(e);
        }
    }
    let regs = Regs { rip: elf.entry, rsp: INIT_STACK_TOP, rdi: arg, ..Regs::default() };
    sys::env_set_regs(child, &regs)?;
    Ok(child)
}

fn load(child: u64, elf: &Elf) -> Result<(), SpawnError> {
    // Segments are sorted by address; neighbours may share a page.
    let mut last: Option<(u64, u64, u64)> = None; // (va, frame, flags)
    for seg in elf.segments().filter(|s| s.kind == PT_LOAD) {
        let mut flags = 0;
        if seg.flags & PF_W != 0 {
            flags |= mf::WRITE;
        }
        if seg.flags & PF_X != 0 {
            flags |= mf::EXEC;
        }
        let data = elf.file_bytes(&seg);
        let mut va = seg.vaddr & !4095;
        while va < seg.vaddr + seg.memsz {
            let frame = match last {
                Some((lva, f, lflags)) if lva == va => {
                    sys::protect(child, va, lflags | flags)?;
                    f
                }
                _ => {
                    let f = sys::frame_alloc(child, FRAME_ANY)?;
                    sys::map(child, va, f, flags)?;
                    f
                }
            };
            let (lo, hi) = (va.max(seg.vaddr), (va + 4096).min(seg.vaddr + seg.filesz));
            if lo < hi {
                sys::map(ENV_SELF, SCRATCH, frame, mf::WRITE)?;
                let src = &data[(lo - seg.vaddr) as usize..(hi - seg.vaddr) as usize];
                // SAFETY: SCRATCH maps the child's frame writable for the
                // duration of this copy; `src` is in the boot file system.
                unsafe {
                    core::ptr::copy_nonoverlapping(src.as_ptr(), (SCRATCH + (lo - va)) as *mut u8, src.len())
                };
                sys::unmap(ENV_SELF, SCRATCH)?;
            }
            last = Some((va, frame, flags));
            va += 4096;
        }
    }
    sys::map_fresh(child, INIT_STACK_TOP - INIT_STACK_PAGES * 4096, INIT_STACK_PAGES, mf::WRITE)?;
    Ok(())
}

/// Waits (yielding) until child `id` has exited; reaps it and returns its
/// exit code.
pub fn wait(id: u64) -> Result<i32, Error> {
    loop {
        let e = crate::kinfo::env_by_id(id).ok_or(Error::BadEnv)?;
        if e.state == env_state::EXITED {
            sys::env_destroy(id)?;
            return Ok(e.exit_code);
        }
        sys::yield_now();
    }
}
