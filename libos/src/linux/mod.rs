//! The Linux personality (paper 000 §7.1: a binary emulator that runs in
//! the same address space as the program it serves, catching its system
//! calls). Every `syscall` a Linux program makes arrives here as a
//! reflected call; the result goes back in rax. Calls lxrt does not
//! implement return -ENOSYS and are reported once by name.

pub mod attr;
pub mod cheetah;
pub mod copyrange;
pub mod cred;
pub mod event;
pub mod fallocate;
pub mod fdrange;
pub mod file;
pub mod flock;
pub mod fsinfo;
pub mod futex;
pub mod inet;
pub mod inetaddr;
pub mod inetcmsg;
pub mod inotify;
pub mod ipc;
pub mod ipcmsg;
pub mod ipcsem;
pub mod itimer;
pub mod mem;
pub mod memfd;
pub mod misc;
pub mod mknod;
pub mod netlink;
pub mod nr;
pub mod pidfd;
pub mod poll;
pub mod prctl;
pub mod process;
pub mod ptimer;
pub mod rlimit;
pub mod sched;
pub mod sendfile;
pub mod socket;
pub mod splice;
pub mod stat;
pub mod time;
pub mod unixaddr;
pub mod vector;
pub mod xattr;

use crate::errno::{LxResult, EINTR, ENOSYS};
use crate::{lock, log};
use abi::exception::ExceptionFrame;
use abi::ident::{EFFECTIVE, REAL};
use core::sync::atomic::{AtomicBool, Ordering};
use cred::Ids::{Group, User};
use nr::{
    SYS_ACCEPT, SYS_ACCEPT4, SYS_ACCESS, SYS_ALARM, SYS_ARCH_PRCTL, SYS_BIND, SYS_BRK, SYS_CHDIR, SYS_CHMOD,
    SYS_CHOWN, SYS_CLOCK_GETRES, SYS_CLOCK_GETTIME, SYS_CLOCK_NANOSLEEP, SYS_CLONE, SYS_CLONE3, SYS_CLOSE,
    SYS_CONNECT, SYS_CREAT, SYS_DUP, SYS_DUP2, SYS_DUP3, SYS_EPOLL_CREATE, SYS_EPOLL_CREATE1, SYS_EPOLL_CTL,
    SYS_EPOLL_PWAIT, SYS_EPOLL_PWAIT2, SYS_EPOLL_WAIT, SYS_EVENTFD, SYS_EVENTFD2, SYS_EXECVE, SYS_EXIT,
    SYS_EXIT_GROUP, SYS_FACCESSAT, SYS_FACCESSAT2, SYS_FCHDIR, SYS_FCHMOD, SYS_FCHMODAT, SYS_FCHOWN,
    SYS_FCHOWNAT, SYS_FCNTL, SYS_FDATASYNC, SYS_FORK, SYS_FSTAT, SYS_FSYNC, SYS_FTRUNCATE, SYS_FUTEX,
    SYS_GETCPU, SYS_GETCWD, SYS_GETDENTS64, SYS_GETEGID, SYS_GETEUID, SYS_GETGID, SYS_GETPEERNAME,
    SYS_GETPGID, SYS_GETPGRP, SYS_GETPID, SYS_GETPPID, SYS_GETRANDOM, SYS_GETRLIMIT, SYS_GETRUSAGE,
    SYS_GETSID, SYS_GETSOCKNAME, SYS_GETSOCKOPT, SYS_GETTID, SYS_GETTIMEOFDAY, SYS_GETUID, SYS_IOCTL,
    SYS_KILL, SYS_LCHOWN, SYS_LINK, SYS_LINKAT, SYS_LISTEN, SYS_LSEEK, SYS_LSTAT, SYS_MADVISE, SYS_MKDIR,
    SYS_MKDIRAT, SYS_MMAP, SYS_MPROTECT, SYS_MREMAP, SYS_MSYNC, SYS_MUNMAP, SYS_NANOSLEEP, SYS_NEWFSTATAT,
    SYS_OPEN, SYS_OPENAT, SYS_PAUSE, SYS_PIPE, SYS_PIPE2, SYS_POLL, SYS_PPOLL, SYS_PREAD64, SYS_PRLIMIT64,
    SYS_PSELECT6, SYS_PWRITE64, SYS_READ, SYS_READLINK, SYS_READLINKAT, SYS_READV, SYS_RECVFROM, SYS_RECVMSG,
    SYS_RENAME, SYS_RENAMEAT, SYS_RENAMEAT2, SYS_RMDIR, SYS_RT_SIGACTION, SYS_RT_SIGPENDING,
    SYS_RT_SIGPROCMASK, SYS_RT_SIGRETURN, SYS_RT_SIGSUSPEND, SYS_RT_SIGTIMEDWAIT, SYS_SCHED_GETAFFINITY,
    SYS_SCHED_YIELD, SYS_SELECT, SYS_SENDMSG, SYS_SENDTO, SYS_SETGID, SYS_SETPGID, SYS_SETRLIMIT, SYS_SETSID,
    SYS_SETSOCKOPT, SYS_SETUID, SYS_SET_ROBUST_LIST, SYS_SET_TID_ADDRESS, SYS_SHUTDOWN, SYS_SIGALTSTACK,
    SYS_SOCKET, SYS_SOCKETPAIR, SYS_STAT, SYS_STATX, SYS_SYMLINK, SYS_SYMLINKAT, SYS_SYNC, SYS_SYSINFO,
    SYS_TGKILL, SYS_TIME, SYS_TIMERFD_CREATE, SYS_TIMERFD_GETTIME, SYS_TIMERFD_SETTIME, SYS_TIMES, SYS_TKILL,
    SYS_TRUNCATE, SYS_UMASK, SYS_UNAME, SYS_UNLINK, SYS_UNLINKAT, SYS_UTIMENSAT, SYS_VFORK, SYS_WAIT4,
    SYS_WAITID, SYS_WRITE, SYS_WRITEV,
};
use nr::{
    SYS_CLOSE_RANGE, SYS_COPY_FILE_RANGE, SYS_MEMFD_CREATE, SYS_PREADV, SYS_PREADV2, SYS_PWRITEV,
    SYS_PWRITEV2, SYS_SIGNALFD, SYS_SIGNALFD4, SYS_SPLICE, SYS_TEE, SYS_TIMER_CREATE, SYS_TIMER_DELETE,
    SYS_TIMER_GETOVERRUN, SYS_TIMER_GETTIME, SYS_TIMER_SETTIME,
};
use nr::{SYS_FADVISE64, SYS_FSTATFS, SYS_MKNOD, SYS_MKNODAT, SYS_PRCTL, SYS_SENDFILE, SYS_STATFS};
use nr::{
    SYS_FALLOCATE, SYS_FLOCK, SYS_GETPRIORITY, SYS_SCHED_GETPARAM, SYS_SCHED_GETSCHEDULER,
    SYS_SCHED_GET_PRIORITY_MAX, SYS_SCHED_GET_PRIORITY_MIN, SYS_SCHED_RR_GET_INTERVAL, SYS_SCHED_SETAFFINITY,
    SYS_SCHED_SETPARAM, SYS_SCHED_SETSCHEDULER, SYS_SETPRIORITY,
};
use nr::{
    SYS_FGETXATTR, SYS_FLISTXATTR, SYS_FREMOVEXATTR, SYS_FSETXATTR, SYS_GETXATTR, SYS_LGETXATTR,
    SYS_LISTXATTR, SYS_LLISTXATTR, SYS_LREMOVEXATTR, SYS_LSETXATTR, SYS_REMOVEXATTR, SYS_SETXATTR,
};
use nr::{SYS_FUTIMESAT, SYS_GETITIMER, SYS_SETITIMER, SYS_UTIME, SYS_UTIMES};
use nr::{
    SYS_GETGROUPS, SYS_GETRESGID, SYS_GETRESUID, SYS_SETFSGID, SYS_SETFSUID, SYS_SETGROUPS, SYS_SETREGID,
    SYS_SETRESGID, SYS_SETRESUID, SYS_SETREUID,
};
use nr::{SYS_INOTIFY_ADD_WATCH, SYS_INOTIFY_INIT, SYS_INOTIFY_INIT1, SYS_INOTIFY_RM_WATCH};
use nr::{SYS_PIDFD_OPEN, SYS_PIDFD_SEND_SIGNAL};
use xattr::Target::{Fd, Path};

/// Log every call and its result (`lxrt -s`, like strace): set once at
/// start-up.
static TRACE: AtomicBool = AtomicBool::new(false);

/// Logs every call and its result from now on.
pub fn trace() {
    TRACE.store(true, Ordering::Relaxed);
}

/// Calls a C library tries at start-up and goes on without, as Linux
/// answers them when built without them (glibc registers `rseq` in every
/// thread): refused quietly unless `lxrt -v` asked for every note.
const QUIET: &[u64] = &[nr::SYS_RSEQ];
static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Notes every unsupported call, the quiet ones too (`lxrt -v`).
pub fn verbose() {
    VERBOSE.store(true, Ordering::Relaxed);
}

pub fn syscall(f: &mut ExceptionFrame) {
    // Calls that only read this process's own words need no lock; with no
    // signal waiting there is nothing to act on before or after them. This
    // path stays small (no frame of `call`'s size to set up).
    let nr = f.regs.rax;
    if matches!(nr, SYS_GETPID | SYS_GETTID)
        && !TRACE.load(Ordering::Relaxed)
        && crate::proc::deliver::quiet()
    {
        let id = if nr == SYS_GETPID { crate::proc::pid() } else { crate::proc::thread::tid() };
        f.regs.rax = id as u64;
        return;
    }
    call(f);
}

/// A call on a socket descriptor: Internet and Unix sockets answer
/// (`socket.rs`); a descriptor they call no socket may be a netlink one,
/// looked for only then (the common sockets pay nothing for it).
fn socket_call(nr: u64, a: &[u64; 6]) -> LxResult {
    let i = |x: u64| x as i32 as i64;
    let r = match nr {
        SYS_BIND => socket::bind(i(a[0]), a[1], a[2]),
        SYS_LISTEN => socket::listen(i(a[0]), a[1]),
        SYS_CONNECT => socket::connect(i(a[0]), a[1], a[2]),
        SYS_ACCEPT => socket::accept4(i(a[0]), a[1], a[2], 0),
        SYS_ACCEPT4 => socket::accept4(i(a[0]), a[1], a[2], a[3]),
        SYS_GETSOCKNAME => socket::getsockname(i(a[0]), a[1], a[2], false),
        SYS_GETPEERNAME => socket::getsockname(i(a[0]), a[1], a[2], true),
        SYS_SHUTDOWN => socket::shutdown(i(a[0]), a[1]),
        SYS_GETSOCKOPT => socket::getsockopt(i(a[0]), a[1], a[2], a[3], a[4]),
        SYS_SETSOCKOPT => socket::setsockopt(i(a[0]), a[1], a[2], a[3], a[4]),
        SYS_SENDMSG => socket::sendmsg(i(a[0]), a[1], a[2]),
        SYS_RECVMSG => socket::recvmsg(i(a[0]), a[1], a[2]),
        SYS_SENDTO => socket::sendto(i(a[0]), a[1], a[2], a[3], a[4], a[5]),
        _ => socket::recvfrom(i(a[0]), a[1], a[2], a[3], a[4], a[5]),
    };
    match r {
        Err(crate::errno::ENOTSOCK) => netlink::sock(i(a[0])).map_or(r, |f| netlink::call(f, nr, a)),
        r => r,
    }
}

/// Every other call: with the lock, signals acted on at its start and
/// delivered at its end.
#[inline(never)]
fn call(f: &mut ExceptionFrame) {
    let r = f.regs;
    let nr = r.rax;
    let (a0, a1, a2, a3, a4, a5) = (r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9);
    lock::acquire();
    crate::proc::deliver::check_pending();
    crate::filemap::sync();
    crate::fs::disk::expire();
    let res = dispatch(f, nr, [a0, a1, a2, a3, a4, a5]);
    if TRACE.load(Ordering::Relaxed) {
        log::note(format_args!(
            "[{}/{} {}] {}({:#x}, {:#x}, {:#x}, {:#x}) = {:?}",
            crate::proc::pid(),
            crate::proc::thread::tid(),
            crate::time::now_ns() / 1000,
            nr,
            a0,
            a1,
            a2,
            a3,
            res
        ));
    }
    f.regs.rax = match res {
        Ok(v) => v as u64,
        Err(e) => e.negated() as u64,
    };
    // Calls Linux restarts after a handler with `SA_RESTART` (select, poll,
    // nanosleep and rt_sigsuspend end with EINTR regardless).
    let restartable = matches!(
        nr,
        SYS_READ
            | SYS_WRITE
            | SYS_IOCTL
            | SYS_PREAD64
            | SYS_PWRITE64
            | SYS_READV
            | SYS_WRITEV
            | SYS_PREADV
            | SYS_PWRITEV
            | SYS_PREADV2
            | SYS_PWRITEV2
            | SYS_WAIT4
            | SYS_WAITID
            | SYS_ACCEPT
            | SYS_ACCEPT4
            | SYS_SENDMSG
            | SYS_RECVMSG
            | SYS_SENDTO
            | SYS_RECVFROM
    );
    crate::proc::deliver::deliver(f, (res == Err(EINTR) && restartable).then_some(nr));
    lock::end_call();
}

fn dispatch(f: &mut ExceptionFrame, nr: u64, a: [u64; 6]) -> LxResult {
    use file as fl;
    // fds, pids and dirfds are C ints: only the low 32 bits count.
    let i = |x: u64| x as i32 as i64;
    const CWD: i64 = fl::AT_FDCWD;
    match nr {
        SYS_READ => fl::read(i(a[0]), a[1], a[2]),
        SYS_WRITE => fl::write(i(a[0]), a[1], a[2]),
        SYS_OPEN => fl::openat(CWD, a[0], a[1], a[2]),
        SYS_CLOSE => fl::close(i(a[0])),
        SYS_STAT => fl::fstatat(CWD, a[0], a[1], 0),
        SYS_FSTAT => fl::fstat(i(a[0]), a[1]),
        SYS_LSTAT => fl::fstatat(CWD, a[0], a[1], fl::AT_SYMLINK_NOFOLLOW),
        SYS_POLL => poll::poll(a[0], a[1], a[2] as i32 as i64),
        SYS_LSEEK => fl::lseek(i(a[0]), a[1] as i64, a[2]),
        SYS_MMAP => mem::mmap(a[0], a[1], a[2], a[3], i(a[4]), a[5]),
        SYS_MPROTECT => mem::mprotect(a[0], a[1], a[2]),
        SYS_MUNMAP => mem::munmap(a[0], a[1]),
        SYS_GETXATTR | SYS_SETXATTR | SYS_REMOVEXATTR => xattr::one(Path { ptr: a[0], follow: true }, a[1]),
        SYS_LGETXATTR | SYS_LSETXATTR | SYS_LREMOVEXATTR => {
            xattr::one(Path { ptr: a[0], follow: false }, a[1])
        }
        SYS_FGETXATTR | SYS_FSETXATTR | SYS_FREMOVEXATTR => xattr::one(Fd(a[0] as i64), a[1]),
        SYS_LISTXATTR => xattr::list(Path { ptr: a[0], follow: true }),
        SYS_LLISTXATTR => xattr::list(Path { ptr: a[0], follow: false }),
        SYS_FLISTXATTR => xattr::list(Fd(a[0] as i64)),
        SYS_MSYNC => mem::msync(a[0], a[1], a[2]),
        SYS_BRK => mem::brk(a[0]),
        SYS_RT_SIGACTION => misc::rt_sigaction(a[0], a[1], a[2], a[3]),
        SYS_RT_SIGPROCMASK => misc::rt_sigprocmask(a[0], a[1], a[2], a[3]),
        SYS_RT_SIGRETURN => crate::proc::deliver::sigreturn(f),
        SYS_IOCTL => fl::ioctl(i(a[0]), a[1], a[2]),
        SYS_PREAD64 => fl::pread(i(a[0]), a[1], a[2], a[3], false),
        SYS_PWRITE64 => fl::pread(i(a[0]), a[1], a[2], a[3], true),
        SYS_READV => fl::readv(i(a[0]), a[1], a[2]),
        SYS_WRITEV => fl::writev(i(a[0]), a[1], a[2]),
        SYS_ACCESS => fl::faccessat(CWD, a[0], a[1], 0),
        SYS_PIPE => fl::pipe2(a[0], 0),
        SYS_SELECT => poll::select(a[0], a[1], a[2], a[3], a[4], 1000),
        // Without the big lock: a thread spinning on sched_yield (Erlang's
        // idle schedulers) kept its siblings out of every call, so the one
        // it waited for could not go on until the spin ran out.
        SYS_SCHED_YIELD => {
            lock::wait();
            Ok(0)
        }
        SYS_MREMAP => mem::mremap(a[0], a[1], a[2], a[3], a[4]),
        SYS_MADVISE => mem::madvise(a[0], a[1], a[2]),
        nr::SYS_MLOCK => mem::mlock(a[0], a[1], 0),
        nr::SYS_MLOCK2 => mem::mlock(a[0], a[1], a[2]),
        nr::SYS_MUNLOCK => mem::munlock(a[0], a[1]),
        nr::SYS_MLOCKALL => mem::mlockall(a[0]),
        nr::SYS_MUNLOCKALL => Ok(0),
        nr::SYS_MINCORE => mem::mincore(a[0], a[1], a[2]),
        SYS_SYNC => crate::fs::disk::sync().map(|_| 0),
        SYS_FSYNC => fallocate::fsync(i(a[0]), false),
        SYS_FDATASYNC => fallocate::fsync(i(a[0]), true),
        nr::SYS_SYNCFS => fallocate::syncfs(i(a[0])),
        SYS_FALLOCATE => fallocate::fallocate(i(a[0]), a[1], a[2], a[3]),
        SYS_FLOCK => flock::flock(i(a[0]), a[1] as u32 as u64),
        SYS_DUP => fl::dup(i(a[0])),
        SYS_DUP2 => fl::dup3(i(a[0]), i(a[1]), u64::MAX),
        SYS_PAUSE => crate::proc::deliver::suspend(crate::proc::signal::mask()),
        SYS_NANOSLEEP => misc::clock_nanosleep(time::id::MONOTONIC, 0, a[0], a[1]),
        SYS_ALARM => itimer::alarm(a[0]),
        SYS_GETITIMER => itimer::getitimer(a[0], a[1]),
        SYS_SETITIMER => itimer::setitimer(a[0], a[1], a[2]),
        SYS_GETPID => Ok(crate::proc::pid() as i64),
        SYS_GETTID => Ok(crate::proc::thread::tid() as i64),
        SYS_CLONE => process::clone(f, a[0], a[1], a[2], a[3], a[4]),
        SYS_CLONE3 => process::clone3(f, a[0], a[1]),
        SYS_FUTEX => futex::futex(a[0], a[1], a[2], a[3], a[4], a[5]),
        SYS_SCHED_GETAFFINITY => sched::sched_getaffinity(a[0] as i32 as i64, a[1], a[2]),
        SYS_SCHED_SETAFFINITY => sched::sched_setaffinity(a[0] as i32 as i64, a[1], a[2]),
        SYS_SCHED_GET_PRIORITY_MAX => sched::sched_get_priority_max(a[0] as i32 as i64 as u64),
        SYS_SCHED_GET_PRIORITY_MIN => sched::sched_get_priority_min(a[0] as i32 as i64 as u64),
        SYS_SCHED_GETSCHEDULER => sched::sched_getscheduler(a[0] as i32 as i64),
        SYS_SCHED_GETPARAM => sched::sched_getparam(a[0] as i32 as i64, a[1]),
        SYS_SCHED_SETSCHEDULER => {
            sched::sched_setscheduler(a[0] as i32 as i64, Some(a[1] as i32 as i64 as u64), a[2])
        }
        SYS_SCHED_SETPARAM => sched::sched_setscheduler(a[0] as i32 as i64, None, a[1]),
        SYS_SCHED_RR_GET_INTERVAL => sched::sched_rr_get_interval(a[0] as i32 as i64, a[1]),
        SYS_GETPRIORITY => sched::getpriority(a[0] as i32 as i64 as u64, a[1] as u32 as u64),
        SYS_SETPRIORITY => {
            sched::setpriority(a[0] as i32 as i64 as u64, a[1] as u32 as u64, a[2] as i32 as i64)
        }
        SYS_FORK => crate::proc::fork::fork(f, crate::proc::fork::Sharing::FORK),
        SYS_VFORK => process::vfork(f),
        SYS_EXECVE => process::execve(f, a[0], a[1], a[2]),
        nr::SYS_EXECVEAT => process::execveat(f, i(a[0]), a[1], a[2], a[3], a[4]),
        nr::SYS_MSGGET => ipcmsg::msgget(a[0] as i32, a[1]),
        nr::SYS_MSGSND => ipcmsg::msgsnd(i(a[0]), a[1], a[2], a[3]),
        nr::SYS_MSGRCV => ipcmsg::msgrcv(i(a[0]), a[1], a[2], a[3] as i64, a[4]),
        nr::SYS_MSGCTL => ipcmsg::msgctl(i(a[0]), a[1], a[2]),
        nr::SYS_SEMGET => ipcsem::semget(a[0] as i32, a[1], a[2]),
        nr::SYS_SEMOP => ipcsem::semtimedop(i(a[0]), a[1], a[2], 0),
        nr::SYS_SEMTIMEDOP => ipcsem::semtimedop(i(a[0]), a[1], a[2], a[3]),
        nr::SYS_SEMCTL => ipcsem::semctl(i(a[0]), a[1], a[2], a[3]),
        SYS_EXIT => process::exit_thread(a[0]),
        SYS_EXIT_GROUP => process::exit_group(a[0]),
        SYS_WAIT4 => process::wait4(i(a[0]), a[1], a[2], a[3]),
        SYS_WAITID => process::waitid(a[0], a[1], a[2], a[3], a[4]),
        SYS_KILL => process::kill(i(a[0]), a[1]),
        SYS_PIDFD_OPEN => pidfd::open(a[0], a[1]),
        SYS_PIDFD_SEND_SIGNAL => pidfd::send_signal(i(a[0]) as i32 as i64, a[1], a[2], a[3]),
        SYS_UNAME => misc::uname(a[0]),
        nr::SYS_SETHOSTNAME => misc::set_name(0, a[0], a[1]),
        nr::SYS_SETDOMAINNAME => misc::set_name(1, a[0], a[1]),
        SYS_FCNTL => fl::fcntl(i(a[0]), a[1], a[2]),
        SYS_TRUNCATE => fl::truncate(a[0], a[1]),
        SYS_FTRUNCATE => fl::ftruncate(i(a[0]), a[1]),
        SYS_GETCWD => fl::getcwd(a[0], a[1]),
        SYS_CHDIR => fl::chdir(a[0]),
        SYS_FCHDIR => fl::fchdir(i(a[0])),
        SYS_RENAME => fl::renameat(CWD, a[0], CWD, a[1], 0),
        SYS_MKDIR => fl::mkdirat(CWD, a[0], a[1]),
        SYS_RMDIR => fl::unlinkat(CWD, a[0], fl::AT_REMOVEDIR),
        SYS_CREAT => fl::openat(CWD, a[0], fl::O_CREAT | fl::O_WRONLY | fl::O_TRUNC, a[1]),
        SYS_LINK => fl::linkat(CWD, a[0], CWD, a[1]),
        SYS_UNLINK => fl::unlinkat(CWD, a[0], 0),
        SYS_SYMLINK => fl::symlinkat(a[0], CWD, a[1]),
        SYS_READLINK => fl::readlinkat(CWD, a[0], a[1], a[2]),
        SYS_CHMOD => fl::fchmodat(CWD, a[0], a[1]),
        SYS_FCHMOD => fl::fchmod(i(a[0]), a[1]),
        SYS_CHOWN => attr::fchownat(CWD, a[0], a[1], a[2], 0, false),
        SYS_LCHOWN => attr::fchownat(CWD, a[0], a[1], a[2], fl::AT_SYMLINK_NOFOLLOW, false),
        SYS_FCHOWN => attr::fchownat(i(a[0]), 0, a[1], a[2], 0, true),
        SYS_FCHOWNAT => attr::fchownat(i(a[0]), a[1], a[2], a[3], a[4], false),
        SYS_UTIME => attr::utime(a[0], a[1]),
        SYS_UTIMES => attr::futimesat(CWD, a[0], a[1]),
        SYS_FUTIMESAT => attr::futimesat(i(a[0]), a[1], a[2]),
        SYS_UMASK => {
            let new = a[0] as u32 & 0o777;
            Ok(crate::proc::UMASK.replace(new) as i64)
        }
        SYS_GETTIMEOFDAY => misc::gettimeofday(a[0]),
        SYS_GETRLIMIT => rlimit::getrlimit(a[0], a[1]),
        SYS_GETRUSAGE => misc::getrusage(i(a[0]), a[1]),
        SYS_SYSINFO => misc::sysinfo(a[0]),
        SYS_TIMES => misc::times(a[0]),
        // The kernel's identity of this process (`cred.rs`).
        SYS_GETUID => cred::get(User, REAL),
        SYS_GETEUID => cred::get(User, EFFECTIVE),
        SYS_GETGID => cred::get(Group, REAL),
        SYS_GETEGID => cred::get(Group, EFFECTIVE),
        SYS_SETUID => cred::set_one(User, a[0]),
        SYS_SETGID => cred::set_one(Group, a[0]),
        SYS_SETREUID => cred::setre(User, a[0], a[1]),
        SYS_SETREGID => cred::setre(Group, a[0], a[1]),
        SYS_SETRESUID => cred::setres(User, a[0], a[1], a[2]),
        SYS_SETRESGID => cred::setres(Group, a[0], a[1], a[2]),
        SYS_SETFSUID => cred::setfs(User),
        SYS_SETFSGID => cred::setfs(Group),
        SYS_GETRESUID => cred::getres(User, a[0], a[1], a[2]),
        SYS_GETRESGID => cred::getres(Group, a[0], a[1], a[2]),
        SYS_GETGROUPS => cred::getgroups(a[0], a[1]),
        SYS_SETGROUPS => cred::setgroups(a[0], a[1]),
        SYS_SETPGID => process::setpgid(i(a[0]), i(a[1])),
        SYS_GETPPID => process::getppid(),
        SYS_GETPGRP => process::getpgid(0),
        SYS_SETSID => process::setsid(),
        SYS_GETPGID => process::getpgid(i(a[0])),
        SYS_GETSID => process::getsid(i(a[0])),
        SYS_RT_SIGPENDING => misc::rt_sigpending(a[0], a[1]),
        SYS_RT_SIGTIMEDWAIT => misc::rt_sigtimedwait(a[0], a[1], a[2], a[3]),
        SYS_RT_SIGSUSPEND => misc::rt_sigsuspend(a[0], a[1]),
        SYS_SIGALTSTACK => crate::proc::signal::sigaltstack(a[0], a[1], f.regs.rsp),
        SYS_ARCH_PRCTL => misc::arch_prctl(a[0], a[1]),
        SYS_SETRLIMIT => rlimit::setrlimit(a[0], a[1]),
        SYS_TKILL => process::tgkill(None, i(a[0]), a[1]),
        SYS_TIME => {
            let s = time::realtime().0;
            if a[0] != 0 {
                crate::uaccess::put(a[0], s)?;
            }
            Ok(s)
        }
        SYS_GETDENTS64 => fl::getdents64(i(a[0]), a[1], a[2]),
        SYS_SET_TID_ADDRESS => process::set_tid_address(a[0]),
        SYS_CLOCK_GETTIME => misc::clock_gettime(a[0], a[1]),
        SYS_CLOCK_GETRES => misc::clock_getres(a[0], a[1]),
        nr::SYS_CLOCK_SETTIME => misc::clock_settime(a[0], a[1]),
        nr::SYS_SETTIMEOFDAY => misc::settimeofday(a[0], a[1]),
        SYS_GETCPU => misc::getcpu(a[0], a[1]),
        SYS_CLOCK_NANOSLEEP => misc::clock_nanosleep(a[0], a[1], a[2], a[3]),
        SYS_TGKILL => process::tgkill(Some(i(a[0])), i(a[1]), a[2]),
        SYS_OPENAT => fl::openat(i(a[0]), a[1], a[2], a[3]),
        SYS_MKDIRAT => fl::mkdirat(i(a[0]), a[1], a[2]),
        SYS_NEWFSTATAT => fl::fstatat(i(a[0]), a[1], a[2], a[3]),
        SYS_UNLINKAT => fl::unlinkat(i(a[0]), a[1], a[2]),
        SYS_RENAMEAT => fl::renameat(i(a[0]), a[1], i(a[2]), a[3], 0),
        SYS_RENAMEAT2 => fl::renameat(i(a[0]), a[1], i(a[2]), a[3], a[4] as u32 as u64),
        SYS_LINKAT => fl::linkat(i(a[0]), a[1], i(a[2]), a[3]),
        SYS_SYMLINKAT => fl::symlinkat(a[0], i(a[1]), a[2]),
        SYS_READLINKAT => fl::readlinkat(i(a[0]), a[1], a[2], a[3]),
        SYS_FCHMODAT => fl::fchmodat(i(a[0]), a[1], a[2]),
        SYS_FACCESSAT => fl::faccessat(i(a[0]), a[1], a[2], 0),
        SYS_FACCESSAT2 => fl::faccessat(i(a[0]), a[1], a[2], a[3]),
        SYS_PSELECT6 => poll::pselect6(a[0], a[1], a[2], a[3], a[4], a[5]),
        SYS_PPOLL => poll::ppoll(a[0], a[1], a[2], a[3], a[4]),
        SYS_EPOLL_CREATE => event::epoll_create(i(a[0])),
        SYS_EPOLL_CREATE1 => event::epoll_create1(a[0]),
        SYS_EPOLL_CTL => event::epoll_ctl(i(a[0]), a[1], i(a[2]), a[3]),
        SYS_EPOLL_WAIT => event::epoll_pwait(i(a[0]), a[1], a[2], a[3] as i32 as i64, 0, 0),
        SYS_EPOLL_PWAIT => event::epoll_pwait(i(a[0]), a[1], a[2], a[3] as i32 as i64, a[4], a[5]),
        SYS_EPOLL_PWAIT2 => event::epoll_pwait2(i(a[0]), a[1], a[2], a[3], a[4], a[5]),
        SYS_EVENTFD => event::eventfd2(a[0], 0),
        SYS_EVENTFD2 => event::eventfd2(a[0], a[1]),
        SYS_INOTIFY_INIT => inotify::inotify_init1(0),
        SYS_INOTIFY_INIT1 => inotify::inotify_init1(a[0]),
        SYS_INOTIFY_ADD_WATCH => inotify::inotify_add_watch(a[0] as i64, a[1], a[2]),
        SYS_INOTIFY_RM_WATCH => inotify::inotify_rm_watch(a[0] as i64, a[1] as i64),
        SYS_TIMERFD_CREATE => event::timerfd_create(a[0], a[1]),
        SYS_SIGNALFD => event::signalfd4(i(a[0]), a[1], a[2], 0),
        SYS_SIGNALFD4 => event::signalfd4(i(a[0]), a[1], a[2], a[3]),
        SYS_TIMER_CREATE => ptimer::timer_create(a[0], a[1], a[2]),
        SYS_TIMER_SETTIME => ptimer::timer_settime(a[0], a[1], a[2], a[3]),
        SYS_TIMER_GETTIME => ptimer::timer_gettime(a[0], a[1]),
        SYS_TIMER_GETOVERRUN => ptimer::timer_getoverrun(a[0]),
        SYS_TIMER_DELETE => ptimer::timer_delete(a[0]),
        SYS_TIMERFD_SETTIME => event::timerfd_settime(i(a[0]), a[1], a[2], a[3]),
        SYS_TIMERFD_GETTIME => event::timerfd_gettime(i(a[0]), a[1]),
        SYS_SOCKET if a[0] == netlink::AF_NETLINK => netlink::socket(a[1], a[2]),
        SYS_SOCKETPAIR if a[0] == netlink::AF_NETLINK => Err(crate::errno::EOPNOTSUPP),
        SYS_SOCKET => socket::socket(a[0], a[1], a[2]),
        SYS_SOCKETPAIR => socket::socketpair(a[0], a[1], a[2], a[3]),
        SYS_BIND | SYS_LISTEN | SYS_CONNECT | SYS_ACCEPT | SYS_ACCEPT4 | SYS_GETSOCKNAME
        | SYS_GETPEERNAME | SYS_SHUTDOWN | SYS_GETSOCKOPT | SYS_SETSOCKOPT | SYS_SENDMSG | SYS_RECVMSG
        | SYS_SENDTO | SYS_RECVFROM => socket_call(nr, &a),
        SYS_SET_ROBUST_LIST => process::set_robust_list(a[0], a[1]),
        SYS_UTIMENSAT => attr::utimensat(i(a[0]), a[1], a[2], a[3]),
        SYS_DUP3 => fl::dup3(i(a[0]), i(a[1]), a[2]),
        SYS_PIPE2 => fl::pipe2(a[0], a[1]),
        SYS_PRLIMIT64 => rlimit::prlimit(a[0], a[1], a[2], a[3]),
        SYS_GETRANDOM => misc::getrandom(a[0], a[1], a[2]),
        SYS_STATX => fl::statx(i(a[0]), a[1], a[2], a[4]),
        SYS_SENDFILE => sendfile::sendfile(i(a[0]), i(a[1]), a[2], a[3]),
        SYS_PRCTL => prctl::prctl(a[0], a[1], a[2], a[3], a[4]),
        SYS_STATFS => fsinfo::statfs(a[0], a[1]),
        SYS_FSTATFS => fsinfo::fstatfs(i(a[0]), a[1]),
        SYS_PREADV => vector::preadv(i(a[0]), a[1], a[2], a[3] as i64, 0, false, false),
        SYS_PWRITEV => vector::preadv(i(a[0]), a[1], a[2], a[3] as i64, 0, false, true),
        SYS_PREADV2 => vector::preadv(i(a[0]), a[1], a[2], a[3] as i64, a[5], true, false),
        SYS_PWRITEV2 => vector::preadv(i(a[0]), a[1], a[2], a[3] as i64, a[5], true, true),
        SYS_COPY_FILE_RANGE => copyrange::copy_file_range(i(a[0]), a[1], i(a[2]), a[3], a[4], a[5]),
        SYS_SPLICE => splice::splice(i(a[0]), a[1], i(a[2]), a[3], a[4], a[5]),
        SYS_TEE => splice::tee(i(a[0]), i(a[1]), a[2], a[3]),
        SYS_CLOSE_RANGE => fdrange::close_range(a[0], a[1], a[2]),
        SYS_MEMFD_CREATE => memfd::memfd_create(a[0], a[1]),
        SYS_MKNOD => mknod::mknodat(CWD, a[0], a[1], a[2]),
        SYS_MKNODAT => mknod::mknodat(i(a[0]), a[1], a[2], a[3]),
        SYS_FADVISE64 => fsinfo::fadvise64(i(a[0]), a[1] as i64, a[2] as i64, a[3]),
        _ => {
            if !QUIET.contains(&nr) || VERBOSE.load(Ordering::Relaxed) {
                log::unsupported_call(nr::name(nr), nr);
            }
            Err(ENOSYS)
        }
    }
}
