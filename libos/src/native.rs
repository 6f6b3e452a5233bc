//! The library's native interface: what a Veneer program linked with the
//! library calls directly (ExOS's applications call its functions; they do
//! not trap). `init` builds the library's state in a fresh first process;
//! `read` and `write` are the file operations without the Linux
//! personality's reflection; `linux` makes a Linux call from native code,
//! which the kernel reflects to the library's own handler exactly as it
//! does for a Linux binary's `syscall` (how a native program forks, waits
//! and exits through the library).

use crate::errno::Errno;
use crate::layout::PAGE;
use crate::obj::{self, Kind};
use crate::{entry, fd, fs, lock, private, proc, shared, trap};

/// Sets the library up in the first process: the first thread's block
/// (`entry::begin`), private heap, shared arena,
/// file system from the boot archive, process table, descriptors 0-2 on the
/// console, and the library's exception handler, which hands system calls
/// to `personality` (`linux::syscall` for Linux's).
pub fn init(personality: trap::Personality) -> Result<(), &'static str> {
    entry::begin();
    trap::set_personality(personality);
    // Read-only, so that every fork shares these pages rather than copying
    // them (`proc::fork`).
    if let Some((start, end)) = crate::layout::relro() {
        crate::range::protect(0, start, (end - start) / PAGE, 0)
            .map_err(|_| "cannot seal the relro pages")?;
    }
    private::init();
    crate::vm::set_frame_source(crate::oom::frame_for);
    shared::create().map_err(|_| "cannot allocate the shared arena")?;
    fs::boot::populate().map_err(|_| "cannot build the file system")?;
    fs::mount::mount(&fs::procfs::PROC);
    fs::mount::mount(&fs::sysfs::BLOCK);
    obj::console::create().map_err(|_| "no memory")?;
    obj::ldisc::set_jobs(&proc::kill::JOBS);
    obj::dnotify::set_sender(proc::kill::to_env);
    obj::signalfd::set_signals(&proc::deliver::SIGNALFD);
    crate::futex::create().map_err(|_| "no memory")?;
    crate::locks::create().map_err(|_| "no memory")?;
    proc::init_first().map_err(|_| "cannot make the process-table entry")?;
    crate::net::stack::start();
    let console = obj::new(Kind::Console, 2, 0).map_err(|_| "no memory")?;
    fd::open(console, false).map_err(|_| "fd table")?;
    for n in 1..3 {
        fd::dup_to(fd::get(0).unwrap(), n, false).map_err(|_| "fd table")?;
    }
    entry::install(0).map_err(|_| "cannot install the exception handler")
}

/// Runs `op` on descriptor `fd` with the big lock held, as the
/// personality does for a Linux call.
fn with_fd(fd: i64, op: impl FnOnce(&fd::Fd) -> Result<usize, Errno>) -> i64 {
    lock::acquire();
    let r = fd::get(fd).and_then(|d| op(&d));
    lock::end_call();
    r.map_or_else(|e| e.negated(), |n| n as i64)
}

/// Reads from descriptor `fd` through its method table (`io::read`):
/// bytes read, or a negative errno.
pub fn read(fd: i64, buf: &mut [u8]) -> i64 {
    with_fd(fd, |d| crate::io::read(d, buf))
}

/// Writes to descriptor `fd` through its method table (`io::write`).
pub fn write(fd: i64, buf: &[u8]) -> i64 {
    with_fd(fd, |d| crate::io::write(d, buf))
}

/// Linux call `nr` with arguments `a`, answered by the personality given
/// to `init` (Linux's) through the kernel's reflection; returns rax.
pub fn linux(nr: u64, a: [u64; 6]) -> i64 {
    let ret: i64;
    // SAFETY: a reflected call: the kernel hands it to the library's
    // handler, which answers in rax and restores every other register
    // (rcx and r11 as `syscall` leaves them); the handler's resume record
    // lies below the red zone, so the stack may be in use.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") nr as i64 => ret,
            inlateout("rdi") a[0] => _,
            inlateout("rsi") a[1] => _,
            inlateout("rdx") a[2] => _,
            inlateout("r10") a[3] => _,
            inlateout("r8") a[4] => _,
            inlateout("r9") a[5] => _,
            lateout("rcx") _,
            lateout("r11") _,
        )
    };
    ret
}

/// `poll` for native programs: waits until one of `entries` is ready or
/// `timeout_ns` passes (`None`: no limit), without reflection; the number
/// ready (0 on timeout) or a negative errno. See `crate::wait`.
pub fn poll(entries: &mut [crate::wait::Entry], timeout_ns: Option<u64>) -> i64 {
    // Usually something is ready already: a look needs no lock (in a
    // process with one thread: the look borrows the descriptor table).
    if lock::OTHER_THREADS.get() == 0 {
        if let Some(n) = crate::wait::ready_now(entries) {
            return n as i64;
        }
    }
    lock::acquire();
    let r = crate::wait::wait(entries, timeout_ns);
    lock::end_call();
    r.map_or_else(|e| e.negated(), |n| n as i64)
}

/// `epoll_wait` for native programs on the epoll set open as `epfd`: the
/// ready interests' (events, data) go into `out`; returns how many, or a
/// negative errno.
pub fn epoll_wait(epfd: i64, out: &mut [(u32, u64)], timeout_ns: Option<u64>) -> i64 {
    lock::acquire();
    let r = fd::get(epfd).and_then(|d| {
        if d.file.kind() != Kind::Epoll {
            return Err(crate::errno::EINVAL);
        }
        crate::wait::epoll_wait(d.file, out, timeout_ns)
    });
    lock::end_call();
    r.map_or_else(|e| e.negated(), |n| n as i64)
}

/// `select` for native programs over `fd_set`-style word bitmaps (an
/// empty slice is a null set): on return each set holds the descriptors
/// ready for it; the number of bits set or a negative errno.
pub fn select(nfds: usize, read: &mut [u64], write: &mut [u64], timeout_ns: Option<u64>) -> i64 {
    // Usually a descriptor is ready already (a pipe writer hands the CPU
    // to its reader): a look needs no lock (in a process with one thread:
    // the look borrows the descriptor table), and the sets are answered.
    if lock::OTHER_THREADS.get() == 0 {
        if let Some(r) = crate::wait::select_now(nfds, read, write, &mut []) {
            return r.map_or_else(|e| e.negated(), |n| n as i64);
        }
    }
    lock::acquire();
    let r = crate::wait::select(nfds, read, write, &mut [], timeout_ns);
    lock::end_call();
    r.map_or_else(|e| e.negated(), |n| n as i64)
}
