//! The Linux personality (paper 000 §7.1: a binary emulator that runs in
//! the same address space as the program it serves, catching its system
//! calls). Every `syscall` a Linux program makes arrives here as a
//! reflected call; the result goes back in rax. Calls lxrt does not
//! implement return -ENOSYS and are reported once by name.

pub mod file;
pub mod mem;
pub mod misc;
pub mod names;
pub mod poll;
pub mod process;
pub mod stat;
pub mod time;

use crate::errno::{LxResult, EINTR, ENOSYS};
use crate::{lock, log};
use abi::exception::ExceptionFrame;

/// Log every call and its result (`lxrt -s`, like strace).
pub static mut TRACE: bool = false;

pub fn syscall(f: &mut ExceptionFrame) {
    let r = f.regs;
    let nr = r.rax;
    let (a0, a1, a2, a3, a4, a5) = (r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9);
    lock::acquire();
    crate::proc::signal::check_pending();
    let res = dispatch(f, nr, [a0, a1, a2, a3, a4, a5]);
    // SAFETY: set once at start-up.
    if unsafe { TRACE } {
        log::note(format_args!(
            "[{}] {}({:#x}, {:#x}, {:#x}, {:#x}) = {:?}",
            crate::proc::pid(),
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
        Err(e) => (-e) as u64,
    };
    // Calls Linux restarts after a handler with `SA_RESTART` (select, poll,
    // nanosleep and rt_sigsuspend end with EINTR regardless).
    let restartable = matches!(nr, 0 | 1 | 16..=20 | 61);
    crate::proc::signal::deliver(f, (res == Err(EINTR) && restartable).then_some(nr));
    lock::end_call();
}

fn dispatch(f: &mut ExceptionFrame, nr: u64, a: [u64; 6]) -> LxResult {
    use file as fl;
    // fds, pids and dirfds are C ints: only the low 32 bits count.
    let i = |x: u64| x as i32 as i64;
    const AT_FDCWD: u64 = -100i64 as u64;
    match nr {
        0 => fl::read(i(a[0]), a[1], a[2]),
        1 => fl::write(i(a[0]), a[1], a[2]),
        2 => fl::openat(i(AT_FDCWD), a[0], a[1], a[2]),
        3 => fl::close(i(a[0])),
        4 => fl::fstatat(i(AT_FDCWD), a[0], a[1], 0),
        5 => fl::fstat(i(a[0]), a[1]),
        6 => fl::fstatat(i(AT_FDCWD), a[0], a[1], 0x100),
        7 => poll::poll(a[0], a[1], a[2] as i32 as i64),
        8 => fl::lseek(i(a[0]), a[1] as i64, a[2]),
        9 => mem::mmap(a[0], a[1], a[2], a[3], i(a[4]), a[5]),
        10 => mem::mprotect(a[0], a[1], a[2]),
        11 => mem::munmap(a[0], a[1]),
        12 => mem::brk(a[0]),
        13 => misc::rt_sigaction(a[0], a[1], a[2]),
        14 => misc::rt_sigprocmask(a[0], a[1], a[2]),
        15 => crate::proc::signal::sigreturn(f),
        16 => fl::ioctl(i(a[0]), a[1], a[2]),
        17 => fl::pread(i(a[0]), a[1], a[2], a[3], false),
        18 => fl::pread(i(a[0]), a[1], a[2], a[3], true),
        19 => fl::readv(i(a[0]), a[1], a[2]),
        20 => fl::writev(i(a[0]), a[1], a[2]),
        21 => fl::faccessat(i(AT_FDCWD), a[0], a[1]),
        22 => fl::pipe2(a[0], 0),
        23 => poll::select(a[0], a[1], a[2], a[3], a[4], 1000),
        24 => {
            user::sys::yield_now();
            Ok(0)
        }
        25 => mem::mremap(a[0], a[1], a[2], a[3]),
        28 | 74 | 75 | 162 => Ok(0), // madvise, fsync, fdatasync, sync
        32 => fl::dup(i(a[0])),
        33 => fl::dup3(i(a[0]), i(a[1]), u64::MAX),
        34 => crate::proc::signal::suspend(*crate::proc::signal::mask()), // pause
        35 => misc::clock_nanosleep(time::id::MONOTONIC, 0, a[0], a[1]),
        37 => Ok(0), // alarm: no timers yet; nothing was pending
        39 | 186 => Ok(crate::proc::pid() as i64),
        56 => process::clone(f, a[0], a[1]),
        57 | 58 => crate::proc::fork::fork(),
        59 => process::execve(f, a[0], a[1], a[2]),
        60 | 231 => process::exit_group(a[0]),
        61 => process::wait4(i(a[0]), a[1], a[2], a[3]),
        62 => process::kill(i(a[0]), a[1]),
        63 => misc::uname(a[0]),
        72 => fl::fcntl(i(a[0]), a[1], a[2]),
        76 => fl::truncate(a[0], a[1]),
        77 => fl::ftruncate(i(a[0]), a[1]),
        79 => fl::getcwd(a[0], a[1]),
        80 => fl::chdir(a[0]),
        81 => fl::fchdir(i(a[0])),
        82 => fl::renameat(i(AT_FDCWD), a[0], i(AT_FDCWD), a[1]),
        83 => fl::mkdirat(i(AT_FDCWD), a[0], a[1]),
        84 => fl::unlinkat(i(AT_FDCWD), a[0], 0x200),
        85 => fl::openat(i(AT_FDCWD), a[0], 0o1101, a[1]),
        86 => fl::linkat(i(AT_FDCWD), a[0], i(AT_FDCWD), a[1]),
        87 => fl::unlinkat(i(AT_FDCWD), a[0], 0),
        88 => fl::symlinkat(a[0], i(AT_FDCWD), a[1]),
        89 => fl::readlinkat(i(AT_FDCWD), a[0], a[1], a[2]),
        90 => fl::fchmodat(i(AT_FDCWD), a[0], a[1]),
        91 => fl::fchmod(i(a[0]), a[1]),
        92..=94 | 260 => Ok(0), // chown family: everyone is root, owners not kept
        95 => {
            let old = crate::proc::me().umask;
            crate::proc::me().umask = a[0] as u32 & 0o777;
            Ok(old as i64)
        }
        96 => misc::gettimeofday(a[0]),
        97 => misc::prlimit(0, a[0], 0, a[1]),
        98 => misc::getrusage(i(a[0]), a[1]),
        99 => misc::sysinfo(a[0]),
        100 => misc::times(a[0]),
        102 | 104 | 107 | 108 => Ok(0), // uid, gid, euid, egid
        105 | 106 => Ok(0),             // setuid, setgid (to root: no-op)
        109 => process::setpgid(i(a[0]), i(a[1])),
        110 => process::getppid(),
        111 => process::getpgid(0),
        112 => process::setsid(),
        121 => process::getpgid(i(a[0])),
        124 => process::getsid(i(a[0])),
        127 => misc::rt_sigpending(a[0], a[1]),
        128 => misc::rt_sigtimedwait(a[0], a[1], a[2], a[3]),
        130 => misc::rt_sigsuspend(a[0], a[1]),
        131 => crate::proc::signal::sigaltstack(a[0], a[1], f.regs.rsp),
        158 => misc::arch_prctl(a[0], a[1]),
        160 => Ok(0),
        200 => process::tgkill(i(a[0]), i(a[0]), a[1]), // tkill
        201 => {
            let s = time::realtime().0;
            if a[0] != 0 {
                crate::uaccess::put(a[0], s)?;
            }
            Ok(s)
        }
        217 => fl::getdents64(i(a[0]), a[1], a[2]),
        218 => Ok(crate::proc::pid() as i64), // set_tid_address
        228 => misc::clock_gettime(a[0], a[1]),
        229 => misc::clock_getres(a[0], a[1]),
        230 => misc::clock_nanosleep(a[0], a[1], a[2], a[3]),
        234 => process::tgkill(i(a[0]), i(a[1]), a[2]),
        257 => fl::openat(i(a[0]), a[1], a[2], a[3]),
        258 => fl::mkdirat(i(a[0]), a[1], a[2]),
        262 => fl::fstatat(i(a[0]), a[1], a[2], a[3]),
        263 => fl::unlinkat(i(a[0]), a[1], a[2]),
        264 | 316 => fl::renameat(i(a[0]), a[1], i(a[2]), a[3]),
        265 => fl::linkat(i(a[0]), a[1], i(a[2]), a[3]),
        266 => fl::symlinkat(a[0], i(a[1]), a[2]),
        267 => fl::readlinkat(i(a[0]), a[1], a[2], a[3]),
        268 => fl::fchmodat(i(a[0]), a[1], a[2]),
        269 | 439 => fl::faccessat(i(a[0]), a[1], a[2]),
        270 => poll::select(a[0], a[1], a[2], a[3], a[4], 1),
        271 => poll::ppoll(a[0], a[1], a[2]),
        273 => Ok(0), // set_robust_list: one thread, nothing to clean up
        280 => fl::utimensat(i(a[0]), a[1], a[2], a[3]),
        292 => fl::dup3(i(a[0]), i(a[1]), a[2]),
        293 => fl::pipe2(a[0], a[1]),
        302 => misc::prlimit(a[0], a[1], a[2], a[3]),
        318 => misc::getrandom(a[0], a[1]),
        332 => fl::statx(i(a[0]), a[1], a[2], a[4]),
        _ => {
            log::unsupported_call(names::name(nr), nr);
            Err(ENOSYS)
        }
    }
}
