//! fork in the library, with copy-on-write (paper 000 §5.2.1).
//!
//! The parent scans its own page tables through the kernel's read-only
//! self-map and builds the child's address space with `map_from`:
//! - the shared arena: the same frames, writable (files, pipes, the
//!   process table are shared, not copied);
//! - the program's writable pages: the same frames read-only in both, so
//!   the first write by either side faults and `vm` copies (or just
//!   re-enables writing once the frame table shows one mapper left);
//! - read-only pages (text): the same frames, read-only;
//! - lxrt's own writable data (its statics, stacks and private heap, which
//!   the fork code itself is using): copied now, as ExOS copies the pages
//!   fork runs on.
//!
//! The child starts at `entry::lx_fork_child`, which resumes the program
//! just after its `fork` with rax = 0.

use super::table;
use crate::errno::{EAGAIN, ENOMEM};
use crate::layout::{SCRATCH, SHARED, SHARED_SIZE};
use crate::{entry, fd, lock, shared, vm};
use abi::exception::ExceptionFrame;
use abi::layout::pte_va;
use abi::syscall::map as mf;
use abi::Error;
use user::sys;

const PRESENT: u64 = 1;
const WRITABLE: u64 = 2;
const NO_EXEC: u64 = 1 << 63;
/// Slot 254 is the self-map, 255 the kernel's exposed tables.
const USER_SLOTS: u64 = 254;

fn entry_at(va: u64, level: u32) -> u64 {
    // SAFETY: only called once the level above is known present.
    unsafe { core::ptr::read_volatile(pte_va(va, level) as *const u64) }
}

/// Calls `f(va, pte)` for every present 4 KiB page below the self-map.
fn each_page(mut f: impl FnMut(u64, u64) -> Result<(), Error>) -> Result<(), Error> {
    for l4 in 0..USER_SLOTS {
        let a4 = l4 << 39;
        if entry_at(a4, 3) & PRESENT == 0 {
            continue;
        }
        for l3 in 0..512 {
            let a3 = a4 | l3 << 30;
            if entry_at(a3, 2) & PRESENT == 0 {
                continue;
            }
            for l2 in 0..512 {
                let a2 = a3 | l2 << 21;
                if entry_at(a2, 1) & PRESENT == 0 {
                    continue;
                }
                for l1 in 0..512 {
                    let va = a2 | l1 << 12;
                    let e = entry_at(va, 0);
                    if e & PRESENT != 0 {
                        f(va, e)?;
                    }
                }
            }
        }
    }
    Ok(())
}

fn rights(pte: u64) -> u64 {
    let mut r = 0;
    if pte & WRITABLE != 0 {
        r |= mf::WRITE;
    }
    if pte & NO_EXEC == 0 {
        r |= mf::EXEC;
    }
    r
}

fn copy_page(child: u64, va: u64, pte: u64) -> Result<(), Error> {
    let f = sys::frame_alloc(child, abi::syscall::FRAME_ANY)?;
    sys::map(0, SCRATCH, f, mf::WRITE)?;
    // SAFETY: `va` is mapped in this process, SCRATCH maps the new frame.
    unsafe { crate::copy::copy_page(SCRATCH, va) };
    sys::unmap(0, SCRATCH)?;
    sys::map(child, va, f, rights(pte))?;
    Ok(())
}

fn build(child: u64) -> Result<(), Error> {
    each_page(|va, pte| {
        if (SHARED..SHARED + SHARED_SIZE).contains(&va) || va == SCRATCH {
            return Ok(());
        }
        match vm::find(va) {
            Some(_) if pte & WRITABLE != 0 => {
                sys::protect(0, va, rights(pte) & !mf::WRITE)?;
                sys::map_from(child, va, va, rights(pte) & !mf::WRITE)?;
                Ok(())
            }
            Some(_) => sys::map_from(child, va, va, rights(pte)).map(|_| ()),
            None if pte & WRITABLE != 0 => copy_page(child, va, pte),
            None => sys::map_from(child, va, va, rights(pte)).map(|_| ()),
        }
    })?;
    shared::share_with(child)
}

/// `fork`: returns the child's pid (the child sees 0).
pub fn fork() -> Result<i64, i64> {
    let child = sys::env_create().map_err(|_| EAGAIN)?;
    let me = super::me();
    let Some(slot) = table::alloc(me.pid, child as u32, table::by_pid(me.pid).map_or(0, |s| s.pgid)) else {
        let _ = sys::env_destroy(child);
        return Err(EAGAIN);
    };
    let cmd = table::by_pid(me.pid).map(|s| s.cmd).unwrap_or([0; 48]);
    slot.cmd = cmd;
    let pid = slot.pid;
    // The child's copy of lxrt's statics must start it with our fs base.
    // SAFETY: one thread; the child reads it before anything else.
    unsafe { entry::LX_CHILD_FS = fs_base() };
    let built = build(child)
        .and_then(|_| entry::install(child))
        .and_then(|_| sys::env_set_regs(child, &entry::child_start_regs()).map(|_| ()));
    if built.is_err() {
        let _ = sys::env_destroy(child);
        if let Some(s) = table::by_pid(pid) {
            s.state = table::FREE;
        }
        return Err(ENOMEM);
    }
    fd::fork_refs();
    // A runnable environment runs only in time slices it owns: the child
    // gets one, like every process.
    let _ = sys::slice_alloc(child, abi::syscall::SLICE_ANY);
    sys::env_run(child).map_err(|_| EAGAIN)?;
    Ok(pid as i64)
}

fn fs_base() -> u64 {
    let fs: u64;
    // SAFETY: CR4.FSGSBASE is enabled for user code (see docs/abi.md).
    unsafe { core::arch::asm!("rdfsbase {}", out(reg) fs, options(nomem, nostack)) };
    fs
}

/// Runs first in a new child, before it resumes the program.
pub fn child_start(frame: &mut ExceptionFrame) {
    lock::forked_child();
    frame.regs.rax = 0;
    let env = sys::self_id() as u32;
    if let Some(s) = table::table().slots.iter().find(|s| s.state == table::RUNNING && s.env == env) {
        super::me().pid = s.pid;
    }
}
