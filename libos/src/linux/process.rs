//! Process calls: fork/clone, execve, exit, wait4, kill, ids.

use crate::errno::*;
use crate::proc::{self, exit, fork, me, signal, table};
use crate::{entry, exec, fd, uaccess};
use abi::exception::ExceptionFrame;
use alloc::vec::Vec;

const CLONE_VM: u64 = 0x100;
const CLONE_THREAD: u64 = 0x10000;

pub fn clone(f: &ExceptionFrame, flags: u64, stack: u64) -> LxResult {
    if flags & CLONE_THREAD != 0 {
        crate::log::once("clone(CLONE_THREAD)", 3000);
        return Err(ENOSYS);
    }
    // A CLONE_VM child (vfork, posix_spawn) gets a copy-on-write copy: it
    // only runs until exec or exit, so a private copy behaves the same.
    let _ = flags & CLONE_VM;
    if stack != 0 {
        // The child starts on the given stack; fork copies our frame, so
        // swap it in just for the copy.
        let saved = entry::frame().regs.rsp;
        entry::frame().regs.rsp = stack;
        let r = fork::fork();
        entry::frame().regs.rsp = saved;
        let _ = f;
        return r;
    }
    fork::fork()
}

pub fn execve(f: &mut ExceptionFrame, pathp: u64, argvp: u64, envpp: u64) -> LxResult {
    let path = uaccess::path(pathp)?.to_vec();
    let mut argv = uaccess::strings(argvp)?;
    let envp = uaccess::strings(envpp)?;
    let (path, image) = exec::resolve(&path, &mut argv)?;
    let elf = exec::check(image)?;
    // Past this point the old program is gone: failures are fatal.
    fd::close_on_exec();
    signal::reset_on_exec();
    let loaded = match exec::load(&elf, &argv, &envp, &path) {
        Ok(l) => l,
        Err(_) => exit::exit(signal::SIGKILL as i32),
    };
    start(f, loaded, path, &argv);
    Ok(0)
}

/// Points this process at a freshly loaded program.
pub fn start(f: &mut ExceptionFrame, loaded: exec::Loaded, path: Vec<u8>, argv: &[Vec<u8>]) {
    let m = me();
    m.brk_start = loaded.brk;
    m.brk = loaded.brk;
    m.mmap_next = crate::layout::MMAP_BASE;
    m.exe = path;
    if let Some(s) = table::by_pid(m.pid) {
        table::set_cmd(s, argv);
    }
    f.regs = loaded.regs;
    entry::reset_fpu();
    // SAFETY: a new program starts with fs base 0 (glibc sets its own).
    unsafe { core::arch::asm!("wrfsbase {}", in(reg) 0u64, options(nomem, nostack)) };
}

pub fn exit_group(code: u64) -> ! {
    exit::exit(((code & 0xff) << 8) as i32)
}

pub fn wait4(pid: i64, statusp: u64, options: u64, rusage: u64) -> LxResult {
    if statusp != 0 {
        uaccess::bytes_mut(statusp, 4)?;
    }
    if rusage != 0 {
        uaccess::bytes_mut(rusage, 144)?.fill(0);
    }
    let (child, status) = exit::wait(pid, options)?;
    if statusp != 0 && child != 0 {
        uaccess::put(statusp, status)?;
    }
    Ok(child)
}

pub fn kill(pid: i64, sig: u64) -> LxResult {
    if sig > 64 {
        return Err(EINVAL);
    }
    let me_pid = proc::pid();
    let my_pgid = table::by_pid(me_pid).map_or(0, |s| s.pgid);
    let mut hit = false;
    let mut self_too = false;
    for s in table::table().slots.iter_mut() {
        if s.state != table::RUNNING {
            continue;
        }
        let m = match pid {
            p if p > 0 => s.pid as i64 == p,
            0 => s.pgid == my_pgid,
            -1 => s.pid != 1,
            p => s.pgid as i64 == -p,
        };
        if m {
            hit = true;
            if sig != 0 {
                if s.pid == me_pid {
                    self_too = true;
                } else {
                    s.pending |= 1 << sig;
                }
            }
        }
    }
    if !hit {
        return Err(ESRCH);
    }
    if self_too {
        signal::raise_self(sig as u32);
    }
    Ok(0)
}

pub fn getppid() -> LxResult {
    Ok(table::by_pid(proc::pid()).map_or(0, |s| if s.ppid == 0 { 1 } else { s.ppid }) as i64)
}

pub fn setpgid(pid: i64, pgid: i64) -> LxResult {
    let pid = if pid == 0 { proc::pid() } else { pid as u32 };
    let s = table::by_pid(pid).ok_or(ESRCH)?;
    s.pgid = if pgid == 0 { pid } else { pgid as u32 };
    Ok(0)
}

pub fn getpgid(pid: i64) -> LxResult {
    let pid = if pid == 0 { proc::pid() } else { pid as u32 };
    Ok(table::by_pid(pid).ok_or(ESRCH)?.pgid as i64)
}

pub fn setsid() -> LxResult {
    let pid = proc::pid();
    if let Some(s) = table::by_pid(pid) {
        s.pgid = pid;
    }
    Ok(pid as i64)
}
