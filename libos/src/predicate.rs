//! The wakeup predicates a wait sleeps on (paper 000 §5.1), parameterised
//! and cached (paper 002 §4.6.12): a process installs one predicate per set
//! of up to `MAX_RINGS` pipe rings the first time it waits on them and
//! keeps it (up to `CACHED` of them; the least recently used is freed).
//! The predicate reads the rings' headers in the shared arena and the
//! sleeping thread's byte of this process's `PARAMS` table (one per
//! environment slot, found through the predicate's context, so threads
//! waiting at once on different rings never overwrite each other's), which
//! says which terms are enabled (readable, writable) for each ring; a wait
//! writes only its byte, so nothing is built or installed on the fast
//! path. Predicates over the same number of
//! rings are the same program, so the kernel compiles that program once
//! for every process.

use abi::net::RingHeader;
use abi::syscall::Region;
use abi::tables::{env_slot, ENV_SLOTS};
use alloc::vec::Vec;
use core::mem::offset_of;
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use user::sys;

/// The header every ring-shaped object starts with (a pipe's ring, an
/// eventfd's counter, a socket's queue of connections), which the
/// predicates read: the offsets of its reader and writer counts and of its
/// head and tail positions, and its size.
pub const READERS_AT: i16 = 0;
pub const WRITERS_AT: i16 = 4;
pub const HEAD_AT: i16 = 8;
pub const TAIL_AT: i16 = 16;
/// The fill up to which a `PIPE_BUF` write goes in at once (the ring's
/// size less `PIPE_BUF`: `F_SETPIPE_SZ` changes it).
pub const ROOM_AT: i16 = 24;
pub const HEADER: u64 = 32;
/// A pipe ring's bytes unless `F_SETPIPE_SZ` changes them (a term
/// wanting to write holds when `PIPE_BUF` of them are free), and the
/// writes up to which a pipe never interleaves others (POSIX).
pub const CAPACITY: usize = 65536;
pub const PIPE_BUF: usize = 4096;

/// Rings one predicate reads (the kernel allows five regions: `PARAMS`,
/// the rings, and `SEEN` for a packet ring).
pub const MAX_RINGS: usize = 3;
/// Predicates a process keeps installed.
const CACHED: usize = 4;

/// Terms of a ring in `PARAMS`.
pub const WANT_READ: u64 = 1;
pub const WANT_WRITE: u64 = 2;
/// Not a term: marks a packet ring's header (`abi::net::RingHeader`)
/// among the rings of `for_rings`. Wanted for reading, it is true when a
/// frame waits (`head != tail`) or its doorbell (`owner_word`) differs
/// from what this process saw last (`set_seen`): the network stack is
/// shared, so another process may have taken the frames meant for a
/// sleeper's socket, and rings the bell (`net::stack`).
pub const PACKET: u64 = 4;

/// Per environment slot, the enabled terms of each ring of the predicate
/// its thread sleeps on (`WANT_READ`, `WANT_WRITE`; ring i's at bits 2i
/// and 2i+1), read by every predicate of this process. Aligned to its
/// size: within one page, as the kernel asks of a region. The kernel reads
/// it by address, so it is a static of its own rather than part of
/// `proc::Process`.
#[repr(C, align(4096))]
struct Params([AtomicU8; ENV_SLOTS]);
const _: () = assert!(ENV_SLOTS == 4096, "one page, the region a predicate reads");
const _: () = assert!(MAX_RINGS * 2 <= 8, "a slot's terms fit its byte");
const _: () = assert!(MAX_RINGS + 2 <= abi::syscall::PRED_REGIONS, "PARAMS, the rings and SEEN");

static PARAMS: Params = Params([const { AtomicU8::new(0) }; ENV_SLOTS]);

/// The page of `PARAMS`. A forked child needs none of its parent's bytes
/// there: a thread writes its own byte (`enable`) before every sleep on a
/// predicate, and its predicate reads no other (`proc::fork` leaves the
/// page uncopied).
pub fn params_page() -> u64 {
    &raw const PARAMS as u64
}

/// The packet ring's doorbell as this process last saw it: a region of its
/// own, after the rings', for a predicate over a packet ring (`PARAMS`
/// fills its page).
static SEEN: AtomicU64 = AtomicU64::new(0);

/// The packet ring's doorbell value this process has seen (its sleep on
/// a packet ring ends when the bell differs).
pub fn set_seen(bell: u64) {
    SEEN.store(bell, Ordering::SeqCst);
}

#[derive(Clone, Copy)]
struct Cached {
    rings: [u64; MAX_RINGS],
    /// Bit i: ring i is a packet ring.
    packet: u8,
    n: usize,
    id: u64,
    last_use: u64,
}

/// A process's installed predicates.
pub struct Cache {
    entries: [Option<Cached>; CACHED],
    uses: u64,
    /// Installs done by this process (a test reads it: the fast path must
    /// not install).
    installs: u64,
}

impl Cache {
    pub const EMPTY: Cache = Cache { entries: [None; CACHED], uses: 0, installs: 0 };
}

static CACHE: crate::scoped::Scoped<Cache> = crate::scoped::Scoped::new("the predicate cache", Cache::EMPTY);

#[inline]
fn with_cache<R>(f: impl FnOnce(&mut Cache) -> R) -> R {
    CACHE.with(f)
}

/// How many predicates this process has installed so far.
pub fn installs() -> u64 {
    with_cache(|c| c.installs)
}

/// The predicate for these rings (sorted addresses, terms ignored),
/// installed on first use; None if the kernel refuses.
pub fn for_rings(rings: &[(u64, u64)]) -> Option<u64> {
    let mut key = [0u64; MAX_RINGS];
    for (k, r) in key.iter_mut().zip(rings) {
        *k = r.0;
    }
    let packet = rings.iter().enumerate().fold(0u8, |b, (i, r)| b | ((r.1 & PACKET != 0) as u8) << i);
    with_cache(|c| {
        c.uses += 1;
        let stamp = c.uses;
        let e = &mut c.entries;
        if let Some(hit) =
            e.iter_mut().flatten().find(|e| e.n == rings.len() && e.rings == key && e.packet == packet)
        {
            hit.last_use = stamp;
            return Some(hit.id);
        }
        // A free slot, or the least recently used one's predicate goes.
        let slot = match e.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                let i = (0..CACHED).min_by_key(|&i| e[i].map_or(0, |e| e.last_use)).unwrap_or(0);
                if let Some(old) = e[i].take() {
                    let _ = sys::pred_free(old.id);
                }
                i
            }
        };
        let mut regions = [Region::default(); MAX_RINGS + 2];
        regions[0] = Region { va: &raw const PARAMS as u64, len: ENV_SLOTS as u64 };
        for (i, (r, &va)) in regions[1..].iter_mut().zip(&key[..rings.len()]).enumerate() {
            let len = if packet & 1 << i != 0 { size_of::<RingHeader>() as u64 } else { HEADER };
            *r = Region { va, len };
        }
        let mut n = rings.len() + 1;
        if packet != 0 {
            regions[n] = Region { va: &raw const SEEN as u64, len: 8 };
            n += 1;
        }
        let id = sys::pred_install(&program(rings.len(), packet), &regions[..n]).ok()?;
        c.installs += 1;
        e[slot] = Some(Cached { rings: key, packet, n: rings.len(), id, last_use: stamp });
        Some(id)
    })
}

/// Enables the terms `rings` ask for (address, terms), ring by ring, for
/// the running thread's sleep about to start.
pub fn enable(rings: &[(u64, u64)]) {
    let terms = rings.iter().enumerate().fold(0u8, |b, (i, r)| b | ((r.1 as u8 & 3) << (2 * i)));
    PARAMS.0[env_slot(crate::lock::my_id() as u32)].store(terms, Ordering::SeqCst);
}

/// The predicate over `n` rings: region 0 is `PARAMS` (the sleeper's byte
/// at its slot, from the context), region i+1 ring i's header, region n+1 `SEEN` if a ring is a packet ring. True when an enabled term holds: a ring wanted for reading
/// holds data or has no writer; one wanted for writing has room for a
/// `PIPE_BUF` write or no reader; a packet ring (bit i of `packet`)
/// wanted for reading holds a frame or rang its bell.
pub fn program(n: usize, packet: u8) -> Vec<u64> {
    let mut a = bpf::Asm::new();
    if n == 0 {
        // Nothing to watch (`pause`): never true; a signal or the deadline
        // ends the sleep. (The verifier refuses unreachable code.)
        a.mov64_imm(0, 0).exit();
        let insns = a.finish().expect("no labels");
        return insns.into_iter().map(|i| u64::from_le_bytes(i.to_bytes())).collect();
    }
    let yes = a.label();
    // r5 = the sleeper's byte: its slot is PredicateContext::env's.
    a.ldx_dw(3, 1, 8).and64_imm(3, ENV_SLOTS as i32 - 1);
    a.ld_region(6, 0, 0).add64_reg(6, 3).ldx_b(5, 6, 0);
    for i in 0..n {
        let (no_read, next) = (a.label(), a.label());
        a.ld_region(7, i as u32 + 1, 0).mov64_reg(8, 5).rsh64_imm(8, 2 * i as i32);
        a.mov64_reg(9, 8).and64_imm(9, WANT_READ as i32).jeq_imm(9, 0, no_read);
        if packet & 1 << i != 0 {
            a.ldx_w(2, 7, offset_of!(RingHeader, head) as i16);
            a.ldx_w(3, 7, offset_of!(RingHeader, tail) as i16).jne_reg(2, 3, yes);
            a.ldx_dw(2, 7, offset_of!(RingHeader, owner_word) as i16);
            a.ld_region(4, n as u32 + 1, 0).ldx_dw(3, 4, 0).jne_reg(2, 3, yes);
            a.bind(no_read).bind(next);
            continue;
        }
        a.ldx_dw(2, 7, HEAD_AT).ldx_dw(3, 7, TAIL_AT).jne_reg(2, 3, yes);
        a.ldx_w(2, 7, WRITERS_AT).jeq_imm(2, 0, yes);
        a.bind(no_read);
        a.mov64_reg(9, 8).and64_imm(9, WANT_WRITE as i32).jeq_imm(9, 0, next);
        a.ldx_w(2, 7, READERS_AT).jeq_imm(2, 0, yes);
        a.ldx_dw(2, 7, HEAD_AT).ldx_dw(3, 7, TAIL_AT).sub64_reg(2, 3);
        a.ldx_dw(3, 7, ROOM_AT).jle_reg(2, 3, yes);
        a.bind(next);
    }
    a.mov64_imm(0, 0).exit();
    a.bind(yes).mov64_imm(0, 1).exit();
    let insns = a.finish().expect("every label is bound and jumps are short");
    insns.into_iter().map(|i| u64::from_le_bytes(i.to_bytes())).collect()
}

/// After fork: the parent's predicates are not the child's (the kernel
/// keeps them per environment); the child installs its own.
pub fn forked_child() {
    with_cache(|c| *c = Cache::EMPTY);
}
