//! Processes and pipes: Linux calls made from this program and answered
//! by the library's personality through the kernel's reflection (fork,
//! exec, wait, getpid), `user::spawn`, and the library's pipes called
//! natively.

use super::rdtsc;
use core::hint::black_box;
use libos::linux::file::{O_CREAT, O_TRUNC, O_WRONLY};
use libos::linux::nr::{
    SYS_CLOSE, SYS_EPOLL_CREATE1, SYS_EPOLL_CTL, SYS_EXECVE, SYS_EXIT, SYS_FORK, SYS_GETPID, SYS_OPEN,
    SYS_WAIT4,
};
use libos::native::{self, linux};
use libos::{fd, lock, obj};
use user::spawn;

pub fn fork() -> i64 {
    let pid = linux(SYS_FORK, [0; 6]);
    assert!(pid >= 0, "fork: {pid}");
    pid
}

pub fn exit(code: u64) -> ! {
    linux(SYS_EXIT, [code, 0, 0, 0, 0, 0]);
    unreachable!("exit returned")
}

pub fn reap(pid: i64) {
    let r = linux(SYS_WAIT4, [pid as u64, 0, 0, 0, 0, 0]);
    assert_eq!(r, pid, "wait4");
}

/// Waits for child `pid`; its wait status.
pub fn wait_status(pid: i64) -> i32 {
    let mut status = 0i32;
    let r = linux(SYS_WAIT4, [pid as u64, &raw mut status as u64, 0, 0, 0, 0]);
    assert_eq!(r, pid, "wait4");
    status
}

pub fn lx_getpid(n: u64) -> u64 {
    let t = rdtsc();
    for _ in 0..n {
        black_box(linux(SYS_GETPID, [0; 6]));
    }
    rdtsc() - t
}

/// `clock_gettime(CLOCK_MONOTONIC)` through the vDSO, mapped into this
/// program as into a Linux one.
pub fn vdso_clock(n: u64) -> Result<u64, &'static str> {
    let gettime = libos::vdso::map_clock_gettime().ok_or("the vDSO could not be mapped")?;
    let mut ts = [0i64; 2];
    let t = rdtsc();
    for _ in 0..n {
        black_box(gettime(1, &mut ts));
    }
    Ok(rdtsc() - t)
}

/// fork, the child exits at once, wait.
pub fn fork_exit_wait(n: u64) -> u64 {
    let t = rdtsc();
    for _ in 0..n {
        let pid = fork();
        if pid == 0 {
            exit(0);
        }
        reap(pid);
    }
    rdtsc() - t
}

/// The program `fork_exec` executes: an ELF header, one program header
/// (a read+execute segment at 0x400000 covering the file) and the code
/// `mov $60, %eax; xor %edi, %edi; syscall` (exit(0)) right after them.
fn tiny_elf() -> [u8; 129] {
    const CODE: [u8; 9] = [0xb8, 60, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05];
    const BASE: u64 = 0x40_0000;
    const HEADERS: usize = 64 + 56;
    const SIZE: u64 = (HEADERS + CODE.len()) as u64;
    let mut f = [0u8; HEADERS + CODE.len()];
    let mut put = |at: usize, bytes: &[u8]| f[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, b"\x7fELF\x02\x01\x01"); // 64-bit, little-endian, version 1
    put(16, &2u16.to_le_bytes()); // ET_EXEC
    put(18, &62u16.to_le_bytes()); // x86-64
    put(20, &1u32.to_le_bytes());
    put(24, &(BASE + HEADERS as u64).to_le_bytes()); // entry
    put(32, &64u64.to_le_bytes()); // program headers
    put(52, &64u16.to_le_bytes());
    put(54, &56u16.to_le_bytes());
    put(56, &1u16.to_le_bytes());
    put(64, &1u32.to_le_bytes()); // PT_LOAD
    put(68, &5u32.to_le_bytes()); // R + X
    put(80, &BASE.to_le_bytes()); // vaddr
    put(88, &BASE.to_le_bytes()); // paddr
    put(96, &SIZE.to_le_bytes()); // file size
    put(104, &SIZE.to_le_bytes()); // memory size
    put(112, &0x1000u64.to_le_bytes()); // alignment
    put(HEADERS, &CODE);
    f
}

/// Where the tiny program goes. The Linux personality reads a call's
/// arguments from the program's memory (the stack, not this image), so
/// callers copy it to the stack first.
const TINY: [u8; 10] = *b"/tmp/tiny\0";

/// Writes the tiny program to `/tmp/tiny`, executable.
pub fn install_tiny() -> Result<(), &'static str> {
    let path = TINY;
    let fd = linux(SYS_OPEN, [path.as_ptr() as u64, O_WRONLY | O_CREAT | O_TRUNC, 0o755, 0, 0, 0]);
    if fd < 0 {
        return Err("cannot create /tmp/tiny");
    }
    let elf = tiny_elf();
    let written = native::write(fd, &elf);
    linux(SYS_CLOSE, [fd as u64, 0, 0, 0, 0, 0]);
    if written != elf.len() as i64 {
        return Err("cannot write /tmp/tiny");
    }
    Ok(())
}

/// fork_exec: fork, the child executes the tiny program, the parent waits
/// for it (its status must say it exited with 0).
pub fn fork_exec(n: u64) -> Result<u64, &'static str> {
    let path = TINY;
    let argv = [path.as_ptr() as u64, 0];
    let envp = [0u64];
    let t = rdtsc();
    for _ in 0..n {
        let pid = fork();
        if pid == 0 {
            linux(SYS_EXECVE, [path.as_ptr() as u64, argv.as_ptr() as u64, envp.as_ptr() as u64, 0, 0, 0]);
            exit(127);
        }
        if wait_status(pid) != 0 {
            return Err("the child did not execute the tiny program and exit with 0");
        }
    }
    Ok(rdtsc() - t)
}

/// spawn: load a program that exits at once into a new environment, start
/// it, wait for it.
pub fn spawn_wait(n: u64) -> u64 {
    let t = rdtsc();
    for _ in 0..n {
        let child = spawn::spawn("yielder", 0).expect("spawn");
        assert_eq!(spawn::wait(child), Ok(0));
    }
    rdtsc() - t
}

/// A new pipe as two descriptors (read, write).
pub fn pipe() -> (i64, i64) {
    lock::acquire();
    let (r, w) = obj::pipe::create(0).expect("pipe");
    let ends = (fd::open(r, false).expect("fd"), fd::open(w, false).expect("fd"));
    lock::release();
    ends
}

pub fn close(fds: &[i64]) {
    lock::acquire();
    for &f in fds {
        let _ = fd::close(f);
    }
    lock::release();
}

pub fn transfer(fd: i64, buf: &mut [u8], writing: bool) {
    let mut done = 0;
    while done < buf.len() {
        let r = if writing { native::write(fd, &buf[done..]) } else { native::read(fd, &mut buf[done..]) };
        assert!(r > 0, "pipe: {r}");
        done += r as usize;
    }
}

/// Ping-pong of `size` bytes between two processes over two pipes; n
/// counts one-way messages.
pub fn pipe_pingpong(n: u64, size: usize) -> u64 {
    let mut bytes = [0u8; 8192];
    let buf = &mut bytes[..size];
    let (there_r, there_w) = pipe();
    let (back_r, back_w) = pipe();
    let pid = fork();
    if pid == 0 {
        for _ in 0..n / 2 {
            transfer(there_r, buf, false);
            transfer(back_w, buf, true);
        }
        exit(0);
    }
    let t = rdtsc();
    for _ in 0..n / 2 {
        transfer(there_w, buf, true);
        transfer(back_r, buf, false);
    }
    let total = rdtsc() - t;
    reap(pid);
    close(&[there_r, there_w, back_r, back_w]);
    total
}

/// thread, futex_threads: the program Linux runs for these rows
/// (`libos/tests/c/threadbench.c`), a static glibc program, under lxrt (`cbin/threadbench`,
/// forked and executed from here), which prints its own `BENCH` lines, one
/// per trial.
pub fn threadbench(name: &str, n: u64, trials: u64) -> Result<(), &'static str> {
    let path = *b"/cbin/threadbench\0";
    // Everything execve reads on this stack: the library's own heap is not
    // program memory.
    let mut name0 = [0u8; 32];
    name0[..name.len().min(31)].copy_from_slice(&name.as_bytes()[..name.len().min(31)]);
    let (n0, trials0) = (decimal(n), decimal(trials));
    let argv = [path.as_ptr() as u64, name0.as_ptr() as u64, n0.as_ptr() as u64, trials0.as_ptr() as u64, 0];
    let envp = [0u64];
    let pid = fork();
    if pid == 0 {
        linux(SYS_EXECVE, [path.as_ptr() as u64, argv.as_ptr() as u64, envp.as_ptr() as u64, 0, 0, 0]);
        exit(127);
    }
    if wait_status(pid) != 0 {
        return Err("cbin/threadbench did not run every trial and exit with 0");
    }
    Ok(())
}

/// `n` in decimal, NUL-terminated.
fn decimal(mut n: u64) -> [u8; 24] {
    let mut digits = [0u8; 20];
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut out = [0u8; 24];
    for (o, d) in out.iter_mut().zip(digits[..len].iter().rev()) {
        *o = *d;
    }
    out
}

/// A new epoll set watching `fd` for input (Linux calls through the
/// personality: setup, not timed).
fn epoll_on(fd: i64) -> i64 {
    let ep = linux(SYS_EPOLL_CREATE1, [0; 6]);
    assert!(ep >= 0, "epoll_create1: {ep}");
    // struct epoll_event, packed: events (EPOLLIN), data.
    let mut ev = [0u8; 12];
    ev[0] = 1;
    let r = linux(SYS_EPOLL_CTL, [ep as u64, 1, fd as u64, ev.as_ptr() as u64, 0, 0]);
    assert_eq!(r, 0, "epoll_ctl");
    ep
}

/// The one-byte ping-pong of `pipe_pingpong`, each side waiting in
/// `epoll_wait` (the library's, called natively) on its read end before
/// every read; n counts one-way messages.
pub fn epoll_pingpong(n: u64) -> u64 {
    let mut byte = [0u8; 1];
    let (there_r, there_w) = pipe();
    let (back_r, back_w) = pipe();
    let mut got = [(0u32, 0u64); 1];
    let pid = fork();
    if pid == 0 {
        let ep = epoll_on(there_r);
        for _ in 0..n / 2 {
            assert_eq!(native::epoll_wait(ep, &mut got, None), 1, "epoll_wait");
            transfer(there_r, &mut byte, false);
            transfer(back_w, &mut byte, true);
        }
        exit(0);
    }
    let ep = epoll_on(back_r);
    let t = rdtsc();
    for _ in 0..n / 2 {
        transfer(there_w, &mut byte, true);
        assert_eq!(native::epoll_wait(ep, &mut got, None), 1, "epoll_wait");
        transfer(back_r, &mut byte, false);
    }
    let total = rdtsc() - t;
    reap(pid);
    close(&[ep, there_r, there_w, back_r, back_w]);
    total
}
