//! Helper for the nesting tests: a deterministic computation over memory,
//! integer and SSE registers, long enough to be held and moved mid-way.
//! Its exit code is its result; `arg` is the number of rounds.
#![no_std]
#![no_main]

use user::sys;

const WORDS: usize = 2048;

fn main(rounds: u64) -> i32 {
    let mut mem = [0u64; WORDS];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut f: f64 = 1.0;
    for r in 0..rounds {
        for (i, w) in mem.iter_mut().enumerate() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407 ^ i as u64);
            *w ^= x >> 7;
        }
        f = f * 1.000_001 + (mem[(x as usize) % WORDS] & 0xff) as f64 / 256.0;
        if r % 8 == 0 {
            sys::yield_now();
        }
    }
    let sum = mem.iter().fold(f.to_bits(), |a, &w| a.rotate_left(5) ^ w);
    (sum & 0x3fff_ffff) as i32
}

user::entry!(main);
