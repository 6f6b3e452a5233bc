//! Veneer's side of `cargo xtask bench`: the microbenchmarks, printed in the
//! harness's line format (see `xtask/src/bench/mod.rs`). Under QEMU's
//! `-icount shift=0` the TSC counts guest instructions, so each `BENCH` line
//! reports instructions for `iterations` operations.
#![no_std]
#![no_main]

use abi::exception::{vector, ExceptionFrame};
use abi::syscall as sc;
use core::arch::asm;
use user::{kinfo, println, spawn, sys};

const ALL: &[&str] = &[
    "calib",
    "null_syscall",
    "exception",
    "yield_pingpong",
    "pct_roundtrip",
    "interposed_1",
    "interposed_2",
    "memtest_0",
    "memtest_1",
    "memtest_2",
    "memtest_3",
    "memtest_4",
    "memtest_t1",
    "memtest_t2",
];

/// A null system call under `levels` interposers that let it through
/// (paper 003 §6.2): this program interposes on `caller` (one level) or on
/// a `passer` that interposes on it (two), and serves what is for it.
fn interposed(levels: u64, n: u64) -> u64 {
    let program = if levels == 1 { "caller" } else { "passer" };
    let child = spawn::spawn_stopped(program, n).unwrap();
    user::nest::interpose(child, true).unwrap();
    let t = rdtsc();
    spawn::start(child).unwrap();
    let code = user::nest::serve(child, |_, _, _| (abi::nest::answer::PASS, 0)).unwrap();
    let total = rdtsc() - t;
    assert_eq!(code, 0);
    sys::env_destroy(child).unwrap();
    total
}

/// Paper 003 §6's memtest on `pages` pages under `levels` nesters: not on
/// its path (`limiter`s: a quota each, then a wait in the kernel) or, with
/// `on_path`, each interposing and passing every event. The program
/// measures itself; its exit code is the instructions it took.
fn memtest(levels: u64, pages: u64, on_path: bool) -> u64 {
    const ON_PATH: u64 = 1 << 62; // limiter's flag
    let child = match levels {
        0 => spawn::spawn("memtest", pages),
        l => spawn::spawn("limiter", if on_path { ON_PATH } else { 0 } | l << 32 | pages),
    };
    let code = spawn::wait(child.unwrap()).unwrap();
    assert!(code > 0, "memtest failed");
    code as u64
}

fn rdtsc() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter; lfence keeps it
    // from moving across the measured code.
    unsafe { core::arch::x86_64::_mm_lfence() };
    // SAFETY: as above.
    unsafe { core::arch::x86_64::_rdtsc() }
}

fn calib(n: u64) {
    for _ in 0..n {
        // SAFETY: nops only; the loop's dec/jnz are the other two of 1000.
        unsafe { asm!(".rept 998", "nop", ".endr", options(nomem, nostack)) };
    }
}

fn null_syscall(n: u64) {
    for _ in 0..n {
        sys::call0(sc::SELF_ID);
    }
}

fn skip_ud2(f: &mut ExceptionFrame) -> bool {
    f.regs.rip += 2;
    f.vector == vector::INVALID_OPCODE
}

fn exception(n: u64) {
    for _ in 0..n {
        // SAFETY: the installed handler skips the ud2.
        unsafe { asm!("ud2") };
    }
}

/// Root and a child, each owning one time slice, yield to each other:
/// `2n` one-way switches through the slice vector.
fn yield_pingpong(n: u64) {
    for _ in 0..n {
        sys::yield_now();
    }
}

/// `n` synchronous transfers to the echo server and its replies, the
/// message in registers (trusted: the server saves nothing it does not use).
fn pct_roundtrip(server: u64, n: u64) {
    for _ in 0..n {
        user::pct::call_raw(server, abi::syscall::PCT_SYNC);
    }
}

fn main(_: u64) -> i32 {
    let cmdline = kinfo::cmdline();
    // Every name after the program's (a run of many rows names them all).
    let named = || {
        cmdline.split_whitespace().skip_while(|w| !w.starts_with("init=")).skip(1).filter(|w| *w != "quick")
    };
    let quick = cmdline.split_whitespace().any(|w| w == "quick");
    // The calibration runs in every boot: it proves the clock counts
    // instructions.
    let wanted = |b: &&&str| **b == "calib" || named().next().is_none() || named().any(|w| w == **b);
    user::print!("BENCH-PLAN");
    for b in ALL.iter().filter(wanted) {
        user::print!(" {b}");
    }
    println!();
    user::exc::install(skip_ud2).unwrap();
    let trials = if quick { 1 } else { 5 };
    for b in ALL.iter().filter(wanted) {
        let n: u64 = match (*b, quick) {
            ("calib", q) => {
                if q {
                    100
                } else {
                    10_000
                }
            }
            (_, true) => 100,
            // Each intercepted call is two events answered by a program.
            ("interposed_1" | "interposed_2", false) => 2_000,
            // Pages: 4 MiB, as in the paper.
            (m, false) if m.starts_with("memtest_") => 1_024,
            (_, false) => 20_000,
        };
        for _ in 0..trials {
            let (iters, total) = match *b {
                "pct_roundtrip" => {
                    let server = spawn::spawn("pct_echo", 0).unwrap();
                    user::pct::first_call(server, abi::syscall::PCT_SYNC, &user::pct::Msg::default());
                    let t = rdtsc();
                    pct_roundtrip(server, n);
                    let total = rdtsc() - t;
                    sys::env_destroy(server).unwrap();
                    (n, total)
                }
                "interposed_1" => (n, interposed(1, n)),
                "interposed_2" => (n, interposed(2, n)),
                m if m.starts_with("memtest_") => {
                    let levels = m.as_bytes()[m.len() - 1] - b'0';
                    (n, memtest(levels as u64, n, m.starts_with("memtest_t")))
                }
                "yield_pingpong" => {
                    let child = spawn::spawn("yielder", n).unwrap();
                    sys::yield_now(); // let it reach its loop
                    let t = rdtsc();
                    yield_pingpong(n);
                    let total = rdtsc() - t;
                    spawn::wait(child).unwrap();
                    (2 * n, total)
                }
                name => {
                    let f: fn(u64) = match name {
                        "calib" => calib,
                        "null_syscall" => null_syscall,
                        _ => exception,
                    };
                    let t = rdtsc();
                    f(n);
                    (n, rdtsc() - t)
                }
            };
            println!("BENCH {b} {iters} {total}");
        }
    }
    println!("BENCH-DONE");
    0
}

user::entry!(main);
