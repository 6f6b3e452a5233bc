//! The library OS's side of `cargo xtask bench` (booted as `init=bench_libos
//! [quick] [NAME ...]`, printing the harness's `BENCH` lines; see
//! `xtask/src/bench/mod.rs`). Everything here goes through the library and
//! the kernel's primitives, as an ExOS application would:
//!
//! - virtual memory (paper 001 §5.2, after Appel and Li): the library's own
//!   exception handler passes protection faults to this program's handler
//!   (`trap::set_fault_handler`), which changes rights with `sys::protect`;
//!   `dirty` reads the page-table entry through the kernel's read-only
//!   self-map. A Veneer mapping is always readable, so "protected" means
//!   write-protected and an access is a write;
//! - pipes: the library's pipes called natively (`native::read`/`write`)
//!   between two processes of the library, ping-pong, halved;
//! - `fork`, `lx_getpid`: Linux calls made from this program and answered
//!   by the library's Linux personality through the kernel's reflection,
//!   the very path a Linux binary's `syscall` takes;
//! - `select_a`, `select_b`: paper 002's Figure 8 (§4.6.12, §5.1): five
//!   processes each ping-pong 200-byte then 5-byte messages through their
//!   own `cat` (a forked child copying one pipe to another), calling
//!   `native::select` before every read (A) or reading at once (B);
//! - `fork_exec`: fork, the child executes a tiny static Linux program
//!   (written to `/tmp/tiny` first: one segment whose code is `exit(0)`, as
//!   Linux's `bench/linux/tiny.c`), the parent waits: all through the Linux
//!   personality;
//! - `spawn`: loading a small static program from the boot file system into
//!   a new environment and waiting for it (`user::spawn`), no fork;
//! - `calib`: the harness's 1000-instruction loop, which every boot runs.
#![no_std]
#![no_main]

extern crate alloc;

use abi::exception::ExceptionFrame;
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use core::hint::black_box;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use libos::layout::PAGE;
use libos::linux::file::{O_CREAT, O_TRUNC, O_WRONLY};
use libos::linux::nr::{
    SYS_CLOSE, SYS_EXECVE, SYS_EXIT, SYS_FORK, SYS_GETPID, SYS_NANOSLEEP, SYS_OPEN, SYS_WAIT4,
};
use libos::native::{self, linux};
use libos::{fd, lock, obj, trap, vm};
use user::{kinfo, println, spawn, sys};

const ALL: &[&str] = &[
    "calib",
    "dirty",
    "prot1",
    "prot100",
    "unprot100",
    "trap",
    "appel1",
    "appel2",
    // Fork copies the library's private heap eagerly, which the pipe and
    // select experiments grow: the process experiments run first, so they
    // measure the program as `cargo xtask bench fork` alone does (Linux
    // runs every experiment in a fresh process).
    "fork",
    "fork_exec",
    "spawn",
    "pipe_1b",
    "pipe_8k",
    "lx_getpid",
    "select_a",
    "select_b",
];

/// Iterations per trial (full run, quick run); the full counts are those
/// of the Linux side (`bench/linux/init.c`).
fn iterations(name: &str, quick: bool) -> u64 {
    let (full, short) = match name {
        "calib" => (10_000, 100),
        "dirty" => (50_000, 100),
        "prot1" | "trap" => (20_000, 100),
        "prot100" | "unprot100" => (2_000, 10),
        "appel1" => (5_000, 50),
        "appel2" => (5_000, 100),
        "pipe_1b" => (10_000, 100),
        "pipe_8k" => (5_000, 100),
        "fork" => (300, 4),
        "fork_exec" | "spawn" => (200, 4),
        // Round trips over all processes: 5 x (4,800 + 4,800) as in paper
        // 002's Figure 8; quick: 5 x (10 + 10).
        "select_a" | "select_b" => (48_000, 100),
        _ => (200_000, 1000), // lx_getpid
    };
    if quick {
        short
    } else {
        full
    }
}

const NPAGES: u64 = 100;
/// The pages the virtual-memory experiments protect: far from the
/// library's own ranges (`libos::layout`).
const AREA: u64 = 0x2000_0000_0000;
const READ_ONLY: u64 = 0;

fn rdtsc() -> u64 {
    // SAFETY: LFENCE and RDTSC only order and read the time-stamp counter.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

/// Linux's benchmark's xorshift: a fixed, cheap sequence of pages.
static RNG: AtomicU64 = AtomicU64::new(2463534242);

fn next_random() -> u64 {
    let mut x = RNG.load(Relaxed) as u32;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    RNG.store(x as u64, Relaxed);
    x as u64
}

fn page(i: u64) -> u64 {
    AREA + i * PAGE
}

fn protect(va: u64, flags: u64) {
    sys::protect(ENV_SELF, va, flags).expect("protect");
}

/// All pages at once, with one batched call (as Linux's one `mprotect`).
fn protect_all(flags: u64) {
    sys::protect_range(0, page(0), NPAGES, flags).expect("protect_range");
}

/// A write to `va` (the access the experiments make).
fn touch(va: u64) {
    // SAFETY: `va` is one of AREA's pages, mapped for the whole run; when
    // it is write-protected the fault handler makes it writable and the
    // write is retried.
    unsafe { core::ptr::write_volatile(va as *mut u8, 1) };
}

/// The calibration loop: 998 nops, dec and jnz per iteration.
#[inline(never)] // a symbol of its own in profiles (`cargo xtask bench --profile`)
fn calib(n: u64) -> u64 {
    let t = rdtsc();
    for _ in 0..n {
        // SAFETY: nops only; the loop's dec/jnz are the other two of 1000.
        unsafe { core::arch::asm!(".rept 998", "nop", ".endr", options(nomem, nostack)) };
    }
    rdtsc() - t
}

// ---- the fault handler -------------------------------------------------

const TRAP: u64 = 0;
const APPEL1: u64 = 1;
const APPEL2: u64 = 2;

/// What the handler does (one of the constants above).
static MODE: AtomicU64 = AtomicU64::new(TRAP);
/// appel1: the one page left writable.
static OPEN: AtomicU64 = AtomicU64::new(0);
/// trap: instructions spent in the handler's `protect`, subtracted.
static HANDLER_TIME: AtomicU64 = AtomicU64::new(0);

fn on_fault(f: &mut ExceptionFrame) -> bool {
    let va = f.fault_addr & !(PAGE - 1);
    if !(AREA..page(NPAGES)).contains(&va) {
        return false;
    }
    match MODE.load(Relaxed) {
        TRAP => {
            let t = rdtsc();
            protect(va, mf::WRITE);
            HANDLER_TIME.fetch_add(rdtsc() - t, Relaxed);
        }
        APPEL1 => {
            protect(OPEN.load(Relaxed), READ_ONLY);
            protect(va, mf::WRITE);
            OPEN.store(va, Relaxed);
        }
        _ => protect(va, mf::WRITE),
    }
    true
}

// ---- virtual memory ----------------------------------------------------

fn map_area() {
    for i in 0..NPAGES {
        let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).expect("frame");
        sys::map(ENV_SELF, page(i), f, mf::WRITE).expect("map");
        touch(page(i));
    }
}

fn unmap_area() {
    for i in 0..NPAGES {
        vm::drop_page(page(i));
    }
}

/// dirty: is a random page of the 100 dirty? A walk of the page table
/// through the self-map to the entry, and its dirty bit.
fn dirty(n: u64) -> u64 {
    let mut dirty = 0;
    let t = rdtsc();
    for _ in 0..n {
        let pte = vm::pte(page(next_random() % NPAGES)).expect("mapped");
        dirty += (pte & abi::pte::DIRTY != 0) as u64;
    }
    let total = rdtsc() - t;
    black_box(dirty);
    total
}

/// prot1: write-protect one page, then unprotect it; n counts calls.
fn prot1(n: u64) -> u64 {
    let t = rdtsc();
    for i in 0..n {
        protect(page(0), if i & 1 == 1 { mf::WRITE } else { READ_ONLY });
    }
    let total = rdtsc() - t;
    protect(page(0), mf::WRITE);
    total
}

/// prot100 / unprot100: change all 100 pages; the other direction untimed.
fn prot_many(n: u64, timed: u64, other: u64) -> u64 {
    let mut total = 0;
    for _ in 0..n {
        protect_all(other);
        let t = rdtsc();
        protect_all(timed);
        total += rdtsc() - t;
    }
    protect_all(mf::WRITE);
    total
}

/// trap: a write to a protected page; the handler unprotects it, and the
/// time of that `protect` is subtracted.
fn trap(n: u64) -> u64 {
    MODE.store(TRAP, Relaxed);
    HANDLER_TIME.store(0, Relaxed);
    let mut total = 0;
    for _ in 0..n {
        protect(page(0), READ_ONLY);
        let t = rdtsc();
        touch(page(0));
        total += rdtsc() - t;
    }
    total - HANDLER_TIME.load(Relaxed)
}

/// appel1: write a random protected page of 100; the handler protects the
/// page it opened last time and unprotects the faulting one.
fn appel1(n: u64) -> u64 {
    MODE.store(APPEL1, Relaxed);
    for i in 1..NPAGES {
        protect(page(i), READ_ONLY);
    }
    OPEN.store(page(0), Relaxed);
    let t = rdtsc();
    for _ in 0..n {
        let mut va = page(next_random() % NPAGES);
        while va == OPEN.load(Relaxed) {
            va = page(next_random() % NPAGES);
        }
        touch(va);
    }
    let total = rdtsc() - t;
    protect_all(mf::WRITE);
    total
}

/// appel2: protect 100 pages, write each in a random order; the handler
/// unprotects the faulting page. n counts pages.
fn appel2(n: u64) -> u64 {
    MODE.store(APPEL2, Relaxed);
    let mut order = [0u64; NPAGES as usize];
    let mut total = 0;
    let mut done = 0;
    while done < n {
        for (i, o) in order.iter_mut().enumerate() {
            *o = i as u64;
        }
        for i in (1..NPAGES as usize).rev() {
            let j = (next_random() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let t = rdtsc();
        protect_all(READ_ONLY);
        for &i in &order {
            touch(page(i));
        }
        total += rdtsc() - t;
        done += NPAGES;
    }
    total
}

// ---- processes ---------------------------------------------------------

fn fork() -> i64 {
    let pid = linux(SYS_FORK, [0; 6]);
    assert!(pid >= 0, "fork: {pid}");
    pid
}

fn exit(code: u64) -> ! {
    linux(SYS_EXIT, [code, 0, 0, 0, 0, 0]);
    unreachable!("exit returned")
}

fn reap(pid: i64) {
    let r = linux(SYS_WAIT4, [pid as u64, 0, 0, 0, 0, 0]);
    assert_eq!(r, pid, "wait4");
}

fn lx_getpid(n: u64) -> u64 {
    let t = rdtsc();
    for _ in 0..n {
        black_box(linux(SYS_GETPID, [0; 6]));
    }
    rdtsc() - t
}

/// fork, the child exits at once, wait.
fn fork_exit_wait(n: u64) -> u64 {
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
fn install_tiny() -> Result<(), &'static str> {
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
fn fork_exec(n: u64) -> Result<u64, &'static str> {
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
fn spawn_wait(n: u64) -> u64 {
    let t = rdtsc();
    for _ in 0..n {
        let child = spawn::spawn("yielder", 0).expect("spawn");
        assert_eq!(spawn::wait(child), Ok(0));
    }
    rdtsc() - t
}

/// A new pipe as two descriptors (read, write).
fn pipe() -> (i64, i64) {
    lock::acquire();
    let (r, w) = obj::pipe::create(0).expect("pipe");
    let ends = (fd::open(r, false).expect("fd"), fd::open(w, false).expect("fd"));
    lock::release();
    ends
}

fn close(fds: &[i64]) {
    lock::acquire();
    for &f in fds {
        let _ = fd::close(f);
    }
    lock::release();
}

fn transfer(fd: i64, buf: &mut [u8], writing: bool) {
    let mut done = 0;
    while done < buf.len() {
        let r = if writing { native::write(fd, &buf[done..]) } else { native::read(fd, &mut buf[done..]) };
        assert!(r > 0, "pipe: {r}");
        done += r as usize;
    }
}

/// Ping-pong of `size` bytes between two processes over two pipes; n
/// counts one-way messages.
fn pipe_pingpong(n: u64, size: usize) -> u64 {
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

// ---- select: paper 002's Figure 8 ---------------------------------------

const PROCS: u64 = 5;

fn wait_status(pid: i64) -> i32 {
    let mut status = 0i32;
    let r = linux(SYS_WAIT4, [pid as u64, &raw mut status as u64, 0, 0, 0, 0]);
    assert_eq!(r, pid, "wait4");
    status
}

/// An external `cat`: copies `from` to `to` until end of file.
fn cat(from: i64, to: i64) {
    let mut buf = [0u8; 4096];
    loop {
        let n = native::read(from, &mut buf);
        if n <= 0 {
            return;
        }
        transfer(to, &mut buf[..n as usize], true);
    }
}

/// Waits until `fd` is readable (select with one descriptor, no timeout).
fn select_read(fd: i64) {
    let mut set = [1u64 << fd];
    let r = native::select(fd as usize + 1, &mut set, &mut [], None);
    assert!(r == 1 && set[0] == 1 << fd, "select: {r}");
}

/// One process of Figure 8: `per` 200-byte then `per` 5-byte messages to
/// its own cat and back. Exit status 0, or 1 if waiting installed more
/// than two predicates (the fast path must install nothing): one over the
/// reply ring (select, and a blocked read, sleep on it) and one for
/// waiting for the child (`wait4` sleeps on the empty one).
fn through_cat(per: u64, use_select: bool) -> u64 {
    let (to_r, to_w) = pipe();
    let (from_r, from_w) = pipe();
    let pid = fork();
    if pid == 0 {
        close(&[to_w, from_r]);
        cat(to_r, from_w);
        close(&[to_r, from_w]);
        exit(0);
    }
    close(&[to_r, from_w]);
    let mut buf = [7u8; 200];
    for size in [200, 5] {
        for _ in 0..per {
            transfer(to_w, &mut buf[..size], true);
            if use_select {
                select_read(from_r);
            }
            transfer(from_r, &mut buf[..size], false);
        }
    }
    close(&[to_w]);
    let cat_status = wait_status(pid);
    close(&[from_r]);
    (cat_status != 0 || libos::predicate::installs() > 2) as u64
}

/// Figure 8: n counts round trips over all five processes.
fn select_experiment(n: u64, use_select: bool) -> Result<u64, &'static str> {
    let per = (n / (2 * PROCS)).max(1);
    let mut pids = [0i64; PROCS as usize];
    let t = rdtsc();
    for p in pids.iter_mut() {
        *p = fork();
        if *p == 0 {
            exit(through_cat(per, use_select));
        }
    }
    let failed = pids.iter().any(|&p| wait_status(p) != 0);
    let total = rdtsc() - t;
    if failed {
        Err("a process failed (or installed more than two predicates)")
    } else {
        Ok(total)
    }
}

/// Before timing select: a wait on an empty pipe times out no earlier
/// than asked, and a wait ends when another process writes; both sleep on
/// one predicate, installed once.
fn select_check() -> Result<(), &'static str> {
    let (r, w) = pipe();
    let mut set = [1u64 << r];
    let before = libos::predicate::installs();
    let t = libos::time::now_ns();
    let got = native::select(r as usize + 1, &mut set, &mut [], Some(20_000_000));
    if got != 0 || set[0] != 0 || libos::time::now_ns() - t < 20_000_000 {
        return Err("select on an empty pipe did not time out after 20 ms");
    }
    let pid = fork();
    if pid == 0 {
        let pause = [0i64, 30_000_000];
        linux(SYS_NANOSLEEP, [&raw const pause as u64, 0, 0, 0, 0, 0]);
        transfer(w, &mut [1], true);
        exit(0);
    }
    set = [1u64 << r];
    let got = native::select(r as usize + 1, &mut set, &mut [], Some(5_000_000_000));
    // Both waits slept on the same predicate, installed by the first.
    let installed = libos::predicate::installs() - before;
    wait_status(pid);
    close(&[r, w]);
    match (got, installed) {
        (1, 1) => Ok(()),
        (1, _) => Err("the two waits did not share one installed predicate"),
        _ => Err("select did not wake when the pipe was written"),
    }
}

// ---- driver ------------------------------------------------------------

/// What runs while AREA is mapped (the first in `ALL`): the calibration
/// and the experiments on AREA.
const VM: &[&str] = &["calib", "dirty", "prot1", "prot100", "unprot100", "trap", "appel1", "appel2"];

fn run(name: &str, n: u64) -> u64 {
    match name {
        "dirty" => dirty(n),
        "prot1" => prot1(n),
        "prot100" => prot_many(n, READ_ONLY, mf::WRITE),
        "unprot100" => prot_many(n, mf::WRITE, READ_ONLY),
        "trap" => trap(n),
        "appel1" => appel1(n),
        "appel2" => appel2(n),
        "pipe_1b" => pipe_pingpong(n, 1),
        "pipe_8k" => pipe_pingpong(n, 8192),
        "calib" => calib(n),
        "fork" => fork_exit_wait(n),
        "fork_exec" => report(name, fork_exec(n)),
        "spawn" => spawn_wait(n),
        "select_a" | "select_b" => report(name, select_experiment(n, name == "select_a")),
        _ => lx_getpid(n),
    }
}

/// An experiment's total, or 0 after saying why it failed.
fn report(name: &str, r: Result<u64, &'static str>) -> u64 {
    r.unwrap_or_else(|why| {
        println!("BENCH-FAIL {name} {why}");
        0
    })
}

fn main(_: u64) -> i32 {
    if let Err(e) = native::init(libos::linux::syscall) {
        println!("BENCH-FAIL all {e}");
        println!("BENCH-DONE");
        return 1;
    }
    let cmdline = kinfo::cmdline();
    let words = || cmdline.split_whitespace().skip_while(|w| !w.starts_with("init=")).skip(1);
    let quick = words().any(|w| w == "quick");
    let named = || words().filter(|w| *w != "quick");
    // The calibration runs in every boot: it proves the clock counts
    // instructions.
    let selected: alloc::vec::Vec<&str> = ALL
        .iter()
        .copied()
        .filter(|b| *b == "calib" || named().next().is_none() || named().any(|w| w == *b))
        .collect();
    user::print!("BENCH-PLAN");
    for b in &selected {
        user::print!(" {b}");
    }
    println!();
    trap::set_fault_handler(Some(on_fault));
    map_area();
    let trials = if quick { 1 } else { 3 };
    let mut area_mapped = true;
    for b in &selected {
        // The process experiments fork, which would copy the area.
        if area_mapped && VM.iter().all(|v| v != b) {
            unmap_area();
            area_mapped = false;
        }
        let n = iterations(b, quick);
        let ready = match *b {
            // One untimed round of the experiment first (one message per
            // process each way), as Linux's side does: the first round
            // grows the library's tables for eleven processes, which a
            // one-trial quick run would otherwise charge to whichever of
            // A and B runs first.
            "select_a" => select_check().and_then(|_| select_experiment(2 * PROCS, true).map(drop)),
            "select_b" => select_experiment(2 * PROCS, false).map(drop),
            "fork_exec" => install_tiny(),
            _ => Ok(()),
        };
        if let Err(why) = ready {
            println!("BENCH-FAIL {b} {why}");
            continue;
        }
        for _ in 0..trials {
            // 0: the experiment failed and said so (BENCH-FAIL).
            let total = run(b, n);
            if total > 0 {
                println!("BENCH {b} {n} {total}");
            }
        }
    }
    println!("BENCH-DONE");
    0
}

user::entry!(main);
