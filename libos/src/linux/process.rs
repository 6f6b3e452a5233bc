//! Process calls: fork/clone, execve, exit, wait4, kill, ids.

use crate::errno::Errno;
use crate::errno::{LxResult, EAGAIN, EINVAL, ELOOP, ENOENT, EPERM, ESRCH};
use crate::proc::{self, deliver, exit, fork, kill, reap, signal, table, with_process};
use crate::{entry, exec, fd, uaccess};
use abi::exception::ExceptionFrame;
use alloc::vec::Vec;

const CLONE_VM: u64 = 0x100;
const CLONE_FS: u64 = 0x200;
const CLONE_FILES: u64 = 0x400;
const CLONE_SIGHAND: u64 = 0x800;
const CLONE_PIDFD: u64 = 0x1000;
const CLONE_VFORK: u64 = 0x4000;
const CLONE_THREAD: u64 = 0x10000;
const CLONE_SYSVSEM: u64 = 0x40000;
const CLONE_SETTLS: u64 = 0x80000;
const CLONE_PARENT_SETTID: u64 = 0x10_0000;
const CLONE_CHILD_CLEARTID: u64 = 0x20_0000;
const CLONE_DETACHED: u64 = 0x40_0000;
const CLONE_CHILD_SETTID: u64 = 0x100_0000;
/// What a thread shares with its creator: all of it (glibc's, musl's and
/// Go's threads); other sets are refused with EINVAL.
const THREAD: u64 = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
/// What may come with `THREAD`.
const THREAD_EXTRA: u64 = CLONE_SYSVSEM
    | CLONE_SETTLS
    | CLONE_PARENT_SETTID
    | CLONE_CHILD_CLEARTID
    | CLONE_DETACHED
    | CLONE_CHILD_SETTID;

/// `clone(flags, stack, parent_tid, child_tid, tls)`.
pub fn clone(f: &mut ExceptionFrame, flags: u64, stack: u64, ptid: u64, ctid: u64, tls: u64) -> LxResult {
    // As Linux: a thread shares the signal handlers, which needs the
    // memory shared.
    if flags & CLONE_THREAD != 0 && flags & CLONE_SIGHAND == 0
        || flags & CLONE_SIGHAND != 0 && flags & CLONE_VM == 0
    {
        return Err(EINVAL);
    }
    if flags & CLONE_PIDFD != 0 {
        crate::log::once("clone with CLONE_PIDFD", 3001);
        return Err(EINVAL);
    }
    if flags & CLONE_THREAD != 0 {
        return thread(f, flags & !0xff, stack, ptid, ctid, tls);
    }
    if flags & (CLONE_SIGHAND | CLONE_FS | CLONE_FILES) != 0 {
        // A process sharing its files or handlers with its parent.
        crate::log::once("clone sharing files or handlers without CLONE_THREAD", 3000);
        return Err(EINVAL);
    }
    // A CLONE_VM child (vfork, posix_spawn) runs over our memory
    // (`proc::vfork`); with CLONE_VFORK we wait for its exec or exit.
    let how = fork::Sharing { memory: flags & CLONE_VM != 0, held: flags & CLONE_VFORK != 0 };
    // The child starts on the given stack; fork copies our frame (`f` is
    // it), so swap it in just for the copy.
    let rsp = if stack != 0 { stack } else { f.regs.rsp };
    let saved = core::mem::replace(&mut f.regs.rsp, rsp);
    let r = fork::fork(f, how);
    f.regs.rsp = saved;
    let pid = r?;
    if how.held {
        if let Some(env) = proc::pid::env(pid as u32) {
            proc::vfork::hold(env);
        }
    }
    Ok(pid)
}

/// `vfork`: a child over our memory, we held until it execs or exits.
pub fn vfork(f: &mut ExceptionFrame) -> LxResult {
    clone(f, CLONE_VM | CLONE_VFORK | signal::SIGCHLD as u64, 0, 0, 0, 0)
}

/// A new thread of this process (`proc::thread`) on `stack`.
fn thread(f: &ExceptionFrame, flags: u64, stack: u64, ptid: u64, ctid: u64, tls: u64) -> LxResult {
    if flags & THREAD != THREAD || flags & !(THREAD | THREAD_EXTRA) != 0 {
        return Err(EINVAL);
    }
    if flags & CLONE_PARENT_SETTID != 0 {
        uaccess::writable(ptid, 4)?;
    }
    if flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID) != 0 {
        uaccess::writable(ctid, 4)?;
    }
    let fs = if flags & CLONE_SETTLS != 0 {
        if tls >= super::misc::TASK_SIZE_MAX {
            return Err(EPERM);
        }
        tls
    } else {
        proc::fork::fs_base()
    };
    let start = proc::thread::Start {
        rsp: if stack == 0 { f.regs.rsp } else { stack },
        fs,
        clear_tid: if flags & CLONE_CHILD_CLEARTID != 0 { ctid } else { 0 },
    };
    proc::limits::may_create()?;
    let env = proc::thread::create(f, &start).map_err(|_| EAGAIN)?;
    let tid = proc::pid::of(env);
    // Both before it runs: the new thread may read them at once.
    if flags & CLONE_PARENT_SETTID != 0 {
        uaccess::put(ptid, tid)?;
    }
    if flags & CLONE_CHILD_SETTID != 0 {
        uaccess::put(ctid, tid)?;
    }
    proc::thread::run(env).map_err(|_| EAGAIN)?;
    Ok(tid as i64)
}

/// `clone3(args, size)`: `struct clone_args` (flags, pidfd, child_tid,
/// parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size,
/// cgroup), of which the first 64 bytes are required.
pub fn clone3(f: &mut ExceptionFrame, args: u64, size: u64) -> LxResult {
    const VER0: u64 = 64;
    if !(VER0..=4096).contains(&size) {
        return Err(EINVAL);
    }
    let a: [u64; 8] = uaccess::get(args)?;
    // Fields past ours must be zero, as Linux asks of a newer caller's.
    let rest = uaccess::bytes(args + VER0, size - VER0)?;
    if rest.iter().any(|&b| b != 0) {
        return Err(EINVAL);
    }
    // `pidfd` is read only with CLONE_PIDFD, which is refused.
    let [flags, _pidfd, ctid, ptid, exit_signal, stack, stack_size, tls] = a;
    if exit_signal > 64 || flags & 0xff != 0 || (stack == 0) != (stack_size == 0) {
        return Err(EINVAL);
    }
    if flags & CLONE_THREAD != 0 && exit_signal != 0 {
        return Err(EINVAL);
    }
    clone(f, flags | exit_signal, stack.wrapping_add(stack_size), ptid, ctid, tls)
}

/// `set_tid_address`: where the thread's id is cleared when it ends.
pub fn set_tid_address(at: u64) -> LxResult {
    proc::thread::set_clear_tid(at);
    Ok(proc::thread::tid() as i64)
}

/// `set_robust_list`: the thread's list of robust locks, walked when it
/// ends (`futex::release_robust`).
pub fn set_robust_list(head: u64, len: u64) -> LxResult {
    const ROBUST_LIST_HEAD: u64 = 24;
    if len != ROBUST_LIST_HEAD {
        return Err(EINVAL);
    }
    proc::thread::set_robust(head);
    Ok(0)
}

pub fn execve(f: &mut ExceptionFrame, pathp: u64, argvp: u64, envpp: u64) -> LxResult {
    exec_path(f, uaccess::path(pathp)?.to_vec(), argvp, envpp)
}

const AT_FDCWD: i64 = -100;
const AT_SYMLINK_NOFOLLOW: u64 = 0x100;
const AT_EMPTY_PATH: u64 = 0x1000;

/// `execveat(dirfd, path, argv, envp, flags)`: `execve` of `path` from
/// directory `dirfd`, or of the file `dirfd` is open on (an empty path
/// with `AT_EMPTY_PATH`: glibc's `fexecve`), both named through
/// `/proc/self/fd`; `AT_SYMLINK_NOFOLLOW` refuses a last link (ELOOP).
pub fn execveat(
    f: &mut ExceptionFrame,
    dirfd: i64,
    pathp: u64,
    argvp: u64,
    envpp: u64,
    flags: u64,
) -> LxResult {
    if flags & !(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0 {
        return Err(EINVAL);
    }
    let p = uaccess::path(pathp)?;
    let mut path = alloc::vec::Vec::new();
    if p.is_empty() {
        if flags & AT_EMPTY_PATH == 0 {
            return Err(ENOENT);
        }
        crate::fd::get_raw(dirfd)?;
        fd_path(&mut path, dirfd);
    } else if p[0] == b'/' || dirfd == AT_FDCWD {
        path.extend_from_slice(p);
    } else {
        super::file::base(dirfd, p)?;
        fd_path(&mut path, dirfd);
        path.push(b'/');
        path.extend_from_slice(p);
    }
    if flags & AT_SYMLINK_NOFOLLOW != 0 {
        let ino = crate::fs::path::resolve(proc::cwd(), &path, false)?;
        if crate::fs::node::get(ino).mode & crate::fs::S_IFMT == crate::fs::S_IFLNK {
            return Err(ELOOP);
        }
    }
    exec_path(f, path, argvp, envpp)
}

/// Appends `/proc/self/fd/N`, the path of descriptor `n`.
fn fd_path(path: &mut alloc::vec::Vec<u8>, n: i64) {
    path.extend_from_slice(b"/proc/self/fd/");
    let start = path.len();
    let mut v = n.unsigned_abs();
    loop {
        path.insert(start, b'0' + (v % 10) as u8);
        v /= 10;
        if v == 0 {
            break;
        }
    }
}

/// `execve` of `path`.
fn exec_path(f: &mut ExceptionFrame, path: alloc::vec::Vec<u8>, argvp: u64, envpp: u64) -> LxResult {
    let mut argv = uaccess::strings(argvp)?;
    let envp = uaccess::strings(envpp)?;
    let (path, image) = exec::resolve(path, &mut argv).inspect_err(|_| exec::drop_views())?;
    let elf = exec::check(image).inspect_err(|_| exec::drop_views())?;
    // Past this point the old program is gone: failures are fatal. Its
    // other threads end first (Linux's de_thread).
    proc::thread::end_for_exec();
    fd::close_on_exec();
    signal::reset_on_exec();
    crate::alarm::exec();
    crate::filemap::forget_all();
    let loaded = exec::load(&elf, &argv, &envp, &path);
    exec::drop_views();
    let Ok(loaded) = loaded else { exit::exit(signal::SIGKILL as i32) };
    proc::vfork::release();
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
    super::mem::exec(loaded.brk);
    // The old program's robust list is gone with it.
    proc::thread::set_robust(0);
    with_process(|p| p.exe = exe);
    table::set_cmd(argv);
    f.regs = loaded.regs;
    entry::reset_fpu();
    // SAFETY: a new program starts with fs base 0 (glibc sets its own).
    unsafe { core::arch::asm!("wrfsbase {}", in(reg) 0u64, options(nomem, nostack)) };
}

pub fn exit_group(code: u64) -> ! {
    exit::exit_group(((code & 0xff) << 8) as i32)
}

/// `exit`: the calling thread ends (the process with the last one).
pub fn exit_thread(code: u64) -> ! {
    exit::exit_thread(((code & 0xff) << 8) as i32)
}

pub fn wait4(pid: i64, statusp: u64, options: u64, rusage: u64) -> LxResult {
    if options & !(reap::WNOHANG | reap::WUNTRACED | reap::WCONTINUED | reap::WTHREAD_FLAGS) != 0 {
        return Err(EINVAL);
    }
    let options = options | reap::WEXITED;
    if statusp != 0 {
        uaccess::writable(statusp, 4)?;
    }
    if rusage != 0 {
        uaccess::zero(rusage, 144)?;
    }
    let (child, status, ns) = reap::wait(pid, options)?;
    if statusp != 0 && child != 0 {
        uaccess::put(statusp, status)?;
    }
    if rusage != 0 {
        uaccess::put(rusage, super::time::timeval(ns))?;
    }
    Ok(child)
}

/// `waitid(idtype, id, infop, options, rusage)`: `wait4`'s wait, told as
/// a `siginfo_t` (signo SIGCHLD, code CLD_*, pid, uid, status); with
/// `WNOHANG` and nothing ready, those fields are zero. Every argument is
/// checked before any child is reaped.
pub fn waitid(idtype: u64, id: u64, infop: u64, options: u64, rusage: u64) -> LxResult {
    const P_ALL: u64 = 0;
    const P_PID: u64 = 1;
    const P_PGID: u64 = 2;
    const P_PIDFD: u64 = 3;
    let events = reap::WEXITED | reap::WUNTRACED | reap::WCONTINUED;
    let known = events | reap::WNOHANG | reap::WNOWAIT | reap::WTHREAD_FLAGS;
    if options & !known != 0 || options & events == 0 {
        return Err(EINVAL);
    }
    let id = id as u32 as i64;
    let pid = match idtype {
        P_ALL => -1,
        P_PID if id > 0 => id,
        // 0: the caller's own group, as `wait4`'s 0.
        P_PGID if id >= 0 => -id,
        P_PIDFD => super::pidfd::waited(id as i32 as i64)?,
        _ => return Err(EINVAL),
    };
    if infop != 0 {
        uaccess::writable(infop, 28)?;
    }
    if rusage != 0 {
        uaccess::zero(rusage, 144)?;
    }
    let (child, status, ns) = reap::wait(pid, options)?;
    if infop != 0 {
        let (code, value) = match status {
            0xffff => (CLD_CONTINUED, signal::SIGCONT as i32),
            s if s & 0xff == 0x7f => (CLD_STOPPED, (s >> 8) & 0xff),
            s if s & 0x7f == 0 => (CLD_EXITED, (s >> 8) & 0xff),
            s if s & 0x80 != 0 => (CLD_DUMPED, s & 0x7f),
            s => (CLD_KILLED, s & 0x7f),
        };
        let found = child != 0;
        let signo = if found { signal::SIGCHLD as i32 } else { 0 };
        let (code, value) = if found { (code, value) } else { (0, 0) };
        uaccess::put(infop, [signo, 0, code])?;
        uaccess::put(infop + 16, [child as i32, 0, value])?;
    }
    if rusage != 0 {
        uaccess::put(rusage, super::time::timeval(ns))?;
    }
    Ok(0)
}

/// `siginfo_t.si_code` for SIGCHLD.
const CLD_EXITED: i32 = 1;
const CLD_KILLED: i32 = 2;
const CLD_DUMPED: i32 = 3;
const CLD_STOPPED: i32 = 5;
const CLD_CONTINUED: i32 = 6;

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

/// `tgkill` (and `tkill`, with `tgid` = -1): signal `sig` to thread `tid`
/// of process `tgid`. A thread of this process gets it itself (it runs the
/// handler unless it blocks it, and no sibling takes it for it); the first
/// thread of another process, as the process (`kill`). Another process's other threads are not found.
/// `tgkill(tgid, tid, sig)`; `tkill(tid, sig)` names no group (`None`).
pub fn tgkill(tgid: Option<i64>, tid: i64, sig: u64) -> LxResult {
    if tid <= 0 || tgid.is_some_and(|g| g <= 0) || sig >= 64 {
        return Err(EINVAL);
    }
    let me = proc::pid() as i64;
    if let Some(tgid) = tgid.filter(|&g| g != me) {
        return if tid == tgid { kill(tid, sig) } else { Err(ESRCH) };
    }
    let env = u32::try_from(tid).ok().and_then(proc::thread::env_of).ok_or(ESRCH)?;
    if sig == 0 {
        return Ok(0);
    }
    if env as u64 == crate::lock::my_id() {
        deliver::raise_thread(sig as u32);
    } else {
        signal::send_thread(env, sig as u32).map_err(|_| ESRCH)?;
    }
    Ok(0)
}

pub fn getppid() -> LxResult {
    Ok(table::ppid(&table::mine()) as i64)
}

/// The environment named by a process-group call's `pid`: ourselves (0 or
/// our pid) or a child of ours.
fn self_or_child(pid: i64) -> Result<u32, Errno> {
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
    if pgid < 0 || pid < 0 {
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
fn entry_of(pid: i64) -> Result<table::Entry, Errno> {
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
