//! A nester for the nesting bench rows (paper 003 §6). Off the path (like
//! the memory and process managers' limits) it runs its child under a
//! memory quota and a CPU share (`env_limit`) and otherwise stays out of
//! the way, waiting in the kernel. With `ON_PATH` in its argument it also
//! interposes on the child and lets every event through, like Fluke's
//! tracing nester (§6.2).
//!
//! Two ways to start it:
//! - spawned with `arg` = `ON_PATH? | depth << 32 | pages` (the `memtest_N`
//!   rows): with `depth` > 1 it runs a limiter of depth - 1, else `memtest`
//!   with `pages`;
//! - booted as `init=limiter @N PROGRAM WORDS...` (`@tN`: on the path): N
//!   levels of limiters around the native program `bin/PROGRAM` (spawned
//!   with argument 0), which reads the same command line (`bench_libos`
//!   ignores the words it does not know; `lxrt` would take `@N` for its
//!   program, so a Linux program cannot be wrapped this way yet).
//!
//! Exits with the child's code.
#![no_std]
#![no_main]

use user::{kinfo, nest, println, spawn, sys};

/// The quota each level gives: 256 MiB, 8 slices.
const FRAMES: u64 = 65_536;
const SLICES: u64 = 8;
/// In the argument: interpose on the child, passing every event.
const ON_PATH: u64 = 1 << 62;
/// In the argument: the innermost program is the command line's.
const CMDLINE: u64 = 1 << 61;

/// `@N` or `@tN` and the program's name, from the command line.
fn from_cmdline() -> Option<(u64, u64, &'static str)> {
    let mut words = kinfo::cmdline().split_whitespace().skip_while(|w| !w.starts_with("init=")).skip(1);
    let spec = words.next()?.strip_prefix('@')?;
    let (on_path, levels) = match spec.strip_prefix('t') {
        Some(n) => (ON_PATH, n),
        None => (0, spec),
    };
    let levels: u64 = levels.parse().ok().filter(|l| (1..=8).contains(l))?;
    Some((on_path, levels, words.next()?))
}

fn main(arg: u64) -> i32 {
    let flags = arg & (ON_PATH | CMDLINE);
    let (on_path, depth, pages, program) = if arg == 0 {
        let Some((on_path, levels, program)) = from_cmdline() else {
            println!("limiter: booted as init=limiter @N|@tN PROGRAM WORDS...");
            return 1;
        };
        (on_path, levels, 0, program)
    } else if flags & CMDLINE != 0 {
        let Some((_, _, program)) = from_cmdline() else { return -1 };
        (flags & ON_PATH, (arg & !flags) >> 32, 0, program)
    } else {
        (flags & ON_PATH, (arg & !flags) >> 32, arg & 0xFFFF_FFFF, "memtest")
    };
    let inner_flags = on_path | if arg == 0 { CMDLINE } else { flags & CMDLINE };
    let child = if depth > 1 {
        spawn::spawn_stopped("limiter", inner_flags | (depth - 1) << 32 | pages)
    } else {
        spawn::spawn_stopped(program, pages)
    };
    let Ok(child) = child else {
        println!("limiter: cannot start {program}");
        return -1;
    };
    if nest::env_limit(child, FRAMES, SLICES).is_err() {
        return -1;
    }
    if on_path != 0 {
        if nest::interpose(child, true).is_err() || spawn::start(child).is_err() {
            return -1;
        }
        let code = nest::serve(child, |_, _, _| (abi::nest::answer::PASS, 0)).unwrap_or(-1);
        let _ = sys::env_destroy(child);
        return code;
    }
    if spawn::start(child).is_err() {
        return -1;
    }
    ::nest::offpath::wait_end(child).unwrap_or(-1)
}

user::entry!(main);
