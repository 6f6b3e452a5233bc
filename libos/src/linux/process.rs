//! Process calls: fork/clone, execve, exit, wait4, kill, ids.

use crate::errno::{LxResult, EINVAL, ENOSYS, EPERM, ESRCH};
use crate::proc::{self, exit, fork, kill, signal, table, with_process};
use crate::{entry, exec, fd, uaccess};
use abi::exception::ExceptionFrame;
use alloc::vec::Vec;

const CLONE_VM: u64 = 0x100;
const CLONE_THREAD: u64 = 0x10000;

pub fn clone(f: &mut ExceptionFrame, flags: u64, stack: u64) -> LxResult {
    if flags & CLONE_THREAD != 0 {
        crate::log::once("clone(CLONE_THREAD)", 3000);
        return Err(ENOSYS);
    }
    // A CLONE_VM child (vfork, posix_spawn) gets a copy-on-write copy: it
    // only runs until exec or exit, so a private copy behaves the same.
    let _ = flags & CLONE_VM;
    if stack != 0 {
        // The child starts on the given stack; fork copies our frame (`f`
        // is it), so swap it in just for the copy.
        let saved = core::mem::replace(&mut f.regs.rsp, stack);
        let r = fork::fork(f);
        f.regs.rsp = saved;
        return r;
    }
    fork::fork(f)
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
    // `/proc/self/exe` names it absolutely (glibc's static start-up checks).
    let exe = if path.starts_with(b"/") {
        path
    } else {
        let mut abs = crate::fs::path::absolute(proc::cwd());
        for part in path.split(|&c| c == b'/').filter(|p| !p.is_empty() && *p != b".") {
            if !abs.ends_with(b"/") {
                abs.push(b'/');
            }
            abs.extend_from_slice(part);
        }
        abs
    };
    let v = proc::vars();
    v.brk_start.set(loaded.brk);
    v.brk.set(loaded.brk);
    v.mmap_next.set(crate::layout::MMAP_BASE);
    with_process(|p| p.exe = exe);
    table::set_cmd(argv);
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
        uaccess::writable(statusp, 4)?;
    }
    if rusage != 0 {
        uaccess::zero(rusage, 144)?;
    }
    let (child, status, ns) = exit::wait(pid, options)?;
    if statusp != 0 && child != 0 {
        uaccess::put(statusp, status)?;
    }
    if rusage != 0 {
        uaccess::put(rusage, super::time::timeval(ns))?;
    }
    Ok(child)
}

pub fn kill(pid: i64, sig: u64) -> LxResult {
    // Pending signals are bits of a word: signal 64 has none.
    let sig = u32::try_from(sig).ok().filter(|&s| s < 64).ok_or(EINVAL)?;
    match pid {
        p if p > 0 => kill::process(u32::try_from(p).map_err(|_| ESRCH)?, sig),
        0 => kill::group(table::mine().pgid, sig),
        -1 => kill::all_but_init(sig),
        p => kill::group(u32::try_from(p.unsigned_abs()).map_err(|_| ESRCH)?, sig),
    }?;
    Ok(0)
}

/// `tgkill` (and `tkill`): a process has one thread, whose id is its pid.
pub fn tgkill(tgid: i64, tid: i64, sig: u64) -> LxResult {
    if tgid <= 0 || tid <= 0 {
        return Err(EINVAL);
    }
    if tid != tgid {
        return Err(ESRCH);
    }
    kill(tid, sig)
}

pub fn getppid() -> LxResult {
    Ok(table::ppid(&table::mine()) as i64)
}

/// The environment named by a process-group call's `pid`: ourselves (0 or
/// our pid) or a child of ours.
fn self_or_child(pid: i64) -> Result<u32, i64> {
    let me = proc::env();
    let env = match pid {
        0 => Some(me),
        p => u32::try_from(p).ok().and_then(proc::pid::env),
    };
    match env {
        Some(e) if e == me || exit::is_child(e) => Ok(e),
        _ => Err(ESRCH),
    }
}

pub fn setpgid(pid: i64, pgid: i64) -> LxResult {
    if pgid < 0 {
        return Err(EINVAL);
    }
    let target = self_or_child(pid)?;
    let pgid = if pgid == 0 { proc::pid::of(target) } else { pgid as u32 };
    if target == proc::env() {
        table::update_mine(|e| e.pgid = pgid);
    } else {
        table::write_child(target, |e| e.pgid = pgid).map_err(|_| ESRCH)?;
    }
    Ok(0)
}

/// The entry of process `pid` (0: this one).
fn entry_of(pid: i64) -> Result<table::Entry, i64> {
    match pid {
        0 => Ok(table::mine()),
        p => u32::try_from(p).ok().and_then(table::by_pid).copied().ok_or(ESRCH),
    }
}

pub fn getpgid(pid: i64) -> LxResult {
    Ok(entry_of(pid)?.pgid as i64)
}

pub fn getsid(pid: i64) -> LxResult {
    Ok(entry_of(pid)?.sid as i64)
}

pub fn setsid() -> LxResult {
    let pid = proc::pid();
    if table::mine().pgid == pid {
        return Err(EPERM);
    }
    table::update_mine(|me| (me.pgid, me.sid) = (pid, pid));
    Ok(pid as i64)
}
