//! Process calls: fork/clone, execve, exit, wait4, kill, ids.

use crate::errno::{LxResult, EINVAL, ENOSYS, EPERM, ESRCH};
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
    // `/proc/self/exe` names it absolutely (glibc's static start-up checks).
    m.exe = if path.starts_with(b"/") {
        path
    } else {
        let mut abs = crate::fs::path::absolute(m.cwd);
        for part in path.split(|&c| c == b'/').filter(|p| !p.is_empty() && *p != b".") {
            if !abs.ends_with(b"/") {
                abs.push(b'/');
            }
            abs.extend_from_slice(part);
        }
        abs
    };
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
        uaccess::bytes_mut(statusp, 4)?;
    }
    if rusage != 0 {
        uaccess::bytes_mut(rusage, 144)?.fill(0);
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
    if sig > 63 {
        return Err(EINVAL);
    }
    match pid {
        p if p > 0 => {
            // A zombie is found, but takes no signal.
            let target = u32::try_from(p).ok().and_then(table::by_pid).ok_or(ESRCH)?.env;
            if sig != 0 && target == proc::env() {
                signal::raise_self(sig as u32);
            } else if sig != 0 {
                let _ = signal::send(target, sig as u32);
            }
            Ok(0)
        }
        0 => kill_group(table::mine().pgid, sig),
        // Everyone but init and the caller.
        -1 => signal_all(sig, |e| proc::pid::of(e.env) != 1 && e.env != proc::env()),
        p => kill_group(u32::try_from(p.unsigned_abs()).map_err(|_| ESRCH)?, sig),
    }
}

/// Signal `sig` for every member of process group `pgid` (the terminal's
/// Ctrl-C, `kill` of a negative pid).
pub fn kill_group(pgid: u32, sig: u64) -> LxResult {
    signal_all(sig, |e| e.pgid == pgid)
}

/// Sends `sig` (below 64; 0: only looks) to every live process whose
/// entry `member` accepts; ESRCH if there is none. A signal for this
/// process itself is raised last.
fn signal_all(sig: u64, member: impl Fn(&table::Entry) -> bool) -> LxResult {
    if sig > 63 {
        return Err(EINVAL);
    }
    let me = proc::env();
    let (mut found, mut self_too) = (false, false);
    for (info, e) in table::all() {
        if !member(e) || info.state == abi::tables::env_state::EXITED {
            continue;
        }
        found = true;
        if e.env == me {
            self_too = true;
        } else if sig != 0 {
            // One that exits meanwhile takes no signal.
            let _ = signal::send(e.env, sig as u32);
        }
    }
    if !found {
        return Err(ESRCH);
    }
    if self_too && sig != 0 {
        signal::raise_self(sig as u32);
    }
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
    Ok(table::ppid(table::mine()) as i64)
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
        table::mine().pgid = pgid;
    } else {
        table::write_child(target, |e| e.pgid = pgid).map_err(|_| ESRCH)?;
    }
    Ok(0)
}

/// The entry of process `pid` (0: this one).
fn entry_of(pid: i64) -> Result<&'static table::Entry, i64> {
    match pid {
        0 => Ok(table::mine()),
        p => u32::try_from(p).ok().and_then(table::by_pid).ok_or(ESRCH),
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
    let me = table::mine();
    if me.pgid == pid {
        return Err(EPERM);
    }
    (me.pgid, me.sid) = (pid, pid);
    Ok(pid as i64)
}
