//! A nested Linux world (paper 003 §5; like a container): runs the library
//! OS's Linux personality, `lxrt`, with the boot command line's program,
//! in a child with its own share of the CPU (`SLICES` slices at most) and
//! memory (`env_limit`). The library OS builds its process table, with
//! its first process as pid 1, and its file system from the boot archive
//! inside the child, so the world sees nothing of any other. `arg` is
//! `depth << 32 | frames`: with `depth` > 0 the world runs a world of
//! depth - 1 (a world nested in a world); `frames` 0 means `FRAMES`.
//! Exits with the world's exit code.
#![no_std]
#![no_main]

use user::{nest, spawn};

/// The memory a world may hold by default: 128 MiB.
const FRAMES: u64 = 32_768;
/// The slices of the CPU a world may own.
const SLICES: u64 = 2;

fn main(arg: u64) -> i32 {
    let (depth, frames) = (arg >> 32, arg & 0xFFFF_FFFF);
    let frames = if frames == 0 { FRAMES } else { frames };
    let inner = if depth > 0 {
        spawn::spawn_stopped("world", (depth - 1) << 32 | frames)
    } else {
        spawn::spawn_stopped("lxrt", 0)
    };
    let Ok(child) = inner else { return 1 };
    if nest::env_limit(child, frames, SLICES).is_err() || spawn::start(child).is_err() {
        return 1;
    }
    // Off its path: the world's spare time goes to its processes beyond
    // its slices.
    ::nest::offpath::wait_end(child).unwrap_or(1)
}

user::entry!(main);
