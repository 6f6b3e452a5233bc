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
//! - `epoll`: the one-byte pipe ping-pong with each side waiting in the
//!   library's `epoll_wait` before every read;
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
//! - `vdso_clock`: `clock_gettime(CLOCK_MONOTONIC)` through the vDSO a
//!   Linux program gets (`libos::vdso`), mapped here and called directly;
//! - `matconn`: paper 003 §6's matconn (Warshall's algorithm on matrices
//!   from 2x2 to 128x128, each sent to a forked worker and back through
//!   pipes), see `matconn.rs`;
//! - `calib`: the harness's 1000-instruction loop, which every boot runs.
#![no_std]
#![no_main]

extern crate alloc;

mod matconn;
mod procs;
mod select;
mod vm;

use abi::syscall::map as mf;
use libos::{native, trap};
use procs::{
    epoll_pingpong, fork_exec, fork_exit_wait, install_tiny, lx_getpid, pipe_pingpong, spawn_wait,
    threadbench, vdso_clock,
};
use select::{select_check, select_experiment, WORKERS};
use user::{kinfo, println};
use vm::{appel1, appel2, dirty, map_area, on_fault, prot1, prot_many, trap, unmap_area, READ_ONLY};

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
    "thread",
    "futex_threads",
    "pipe_1b",
    "pipe_8k",
    "epoll",
    "lx_getpid",
    "vdso_clock",
    "select_a",
    "select_b",
    "matconn",
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
        "pipe_1b" | "epoll" => (10_000, 100),
        "pipe_8k" => (5_000, 100),
        "fork" | "thread" => (300, 4),
        "futex_threads" => (5_000, 50),
        "fork_exec" | "spawn" => (200, 4),
        // Round trips over all processes: 5 x (4,800 + 4,800) as in paper
        // 002's Figure 8; quick: 5 x (10 + 10).
        "select_a" | "select_b" => (48_000, 100),
        "matconn" => (10, 1),
        _ => (200_000, 1000), // lx_getpid, vdso_clock
    };
    if quick {
        short
    } else {
        full
    }
}

fn rdtsc() -> u64 {
    // SAFETY: LFENCE and RDTSC only order and read the time-stamp counter.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
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
        "epoll" => epoll_pingpong(n),
        "calib" => calib(n),
        "fork" => fork_exit_wait(n),
        "fork_exec" => report(name, fork_exec(n)),
        "spawn" => spawn_wait(n),
        "select_a" | "select_b" => report(name, select_experiment(n, name == "select_a")),
        "vdso_clock" => report(name, vdso_clock(n)),
        "matconn" => report(name, matconn::matconn(n)),
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
            "select_a" => select_check().and_then(|_| select_experiment(2 * WORKERS, true).map(drop)),
            "select_b" => select_experiment(2 * WORKERS, false).map(drop),
            "fork_exec" => install_tiny(),
            _ => Ok(()),
        };
        if let Err(why) = ready {
            println!("BENCH-FAIL {b} {why}");
            continue;
        }
        if matches!(*b, "thread" | "futex_threads") {
            // A Linux program of its own prints each trial's line.
            if let Err(why) = threadbench(b, n, trials) {
                println!("BENCH-FAIL {b} {why}");
            }
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
