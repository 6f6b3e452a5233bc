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
    let me = proc::pid();
    let my_pgid = table::mine().pgid;
    let one = |target: u32| {
        if sig == 0 || target == me {
            return;
        }
        // A zombie takes no signals; one that exits meanwhile neither.
        let _ = signal::send(target, sig as u32);
    };
    let hit = match pid {
        p if p > 0 => {
            let p = p as u32;
            if table::get(p).is_none() {
                return Err(ESRCH);
            }
            one(p);
            p == me
        }
        _ => {
            // A group (0: ours), or -1: everyone but the first process and
            // the caller (as Linux does).
            let group = match pid {
                0 => Some(my_pgid),
                -1 => None,
                p => Some(-p as u32),
            };
            let mut found = false;
            let mut self_too = false;
            for (info, e) in table::all() {
                let member = match group {
                    Some(g) => e.pgid == g,
                    None => info.parent != 0 && e.pid != me,
                };
                if member && info.state != abi::tables::env_state::EXITED {
                    found = true;
                    self_too |= e.pid == me;
                    one(e.pid);
                }
            }
            if !found {
                return Err(ESRCH);
            }
            self_too
        }
    };
    if hit && sig != 0 {
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
    let ppid = table::mine().ppid;
    Ok(if table::alive(ppid) { ppid } else { 1 } as i64)
}

/// The target of a process-group call: ourselves (0) or a child of ours.
fn self_or_child(pid: i64) -> Result<u32, i64> {
    let me = proc::pid();
    match pid {
        0 => Ok(me),
        p if p as u32 == me => Ok(me),
        p if p > 0 && exit::is_child(p as u32) => Ok(p as u32),
        _ => Err(ESRCH),
    }
}

pub fn setpgid(pid: i64, pgid: i64) -> LxResult {
    if pgid < 0 {
        return Err(EINVAL);
    }
    let target = self_or_child(pid)?;
    let pgid = if pgid == 0 { target } else { pgid as u32 };
    if target == proc::pid() {
        table::mine().pgid = pgid;
    } else {
        table::write_child(target, |e| e.pgid = pgid).map_err(|_| ESRCH)?;
    }
    Ok(0)
}

pub fn getpgid(pid: i64) -> LxResult {
    let pid = if pid == 0 { proc::pid() } else { pid as u32 };
    Ok(table::get(pid).ok_or(ESRCH)?.pgid as i64)
}

pub fn getsid(pid: i64) -> LxResult {
    let pid = if pid == 0 { proc::pid() } else { pid as u32 };
    Ok(table::get(pid).ok_or(ESRCH)?.sid as i64)
}

pub fn setsid() -> LxResult {
    let me = table::mine();
    if me.pgid == me.pid {
        return Err(EPERM);
    }
    (me.pgid, me.sid) = (me.pid, me.pid);
    Ok(me.pid as i64)
}
