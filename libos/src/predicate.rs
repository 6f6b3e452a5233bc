//! The wakeup predicates a wait sleeps on (paper 000 §5.1), parameterised
//! and cached (paper 002 §4.6.12): a process installs one predicate per set
//! of up to `MAX_RINGS` pipe rings the first time it waits on them and
//! keeps it (up to `CACHED` of them; the least recently used is freed).
//! The predicate reads the rings' headers in the shared arena and this
//! process's `PARAMS` block, which says which terms are enabled (readable,
//! writable) for each ring; a wait writes only `PARAMS`, so nothing is
//! built or installed on the fast path. Predicates over the same number of
//! rings are the same program, so the kernel compiles that program once
//! for every process.

use crate::obj::pipe;
use abi::syscall::Region;
use alloc::vec::Vec;
use user::sys;

/// Rings one predicate reads (the kernel allows four regions; one is
/// `PARAMS`).
pub const MAX_RINGS: usize = 3;
/// Predicates a process keeps installed.
const CACHED: usize = 4;

/// Terms of a ring in `PARAMS`.
pub const WANT_READ: u64 = 1;
pub const WANT_WRITE: u64 = 2;

/// The enabled terms of each ring of the predicate being slept on
/// (`WANT_READ`, `WANT_WRITE`), read by every predicate of this process.
/// 64-byte aligned: within one page. The kernel reads it by address, so it
/// is a static of its own rather than part of `proc::Process`.
#[repr(C, align(64))]
struct Params([u64; MAX_RINGS]);

static mut PARAMS: Params = Params([0; MAX_RINGS]);

#[derive(Clone, Copy)]
struct Cached {
    rings: [u64; MAX_RINGS],
    n: usize,
    id: u64,
    last_use: u64,
}

/// A process's installed predicates (`proc::Process::predicates`).
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

#[inline]
fn with_cache<R>(f: impl FnOnce(&mut Cache) -> R) -> R {
    crate::proc::with_process(|p| f(&mut p.predicates))
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
    with_cache(|c| {
        c.uses += 1;
        let stamp = c.uses;
        let e = &mut c.entries;
        if let Some(hit) = e.iter_mut().flatten().find(|e| e.n == rings.len() && e.rings == key) {
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
        let mut regions = [Region::default(); MAX_RINGS + 1];
        regions[0] = Region { va: &raw const PARAMS as u64, len: size_of::<Params>() as u64 };
        for (r, &va) in regions[1..].iter_mut().zip(&key[..rings.len()]) {
            *r = Region { va, len: pipe::HEADER };
        }
        let id = sys::pred_install(&program(rings.len()), &regions[..rings.len() + 1]).ok()?;
        c.installs += 1;
        e[slot] = Some(Cached { rings: key, n: rings.len(), id, last_use: stamp });
        Some(id)
    })
}

/// Enables the terms `rings` ask for (address, terms), ring by ring, for
/// the sleep about to start.
pub fn enable(rings: &[(u64, u64)]) {
    // SAFETY: one thread per environment; the kernel only reads PARAMS.
    let params = unsafe { &mut *(&raw mut PARAMS) };
    for (slot, r) in params.0.iter_mut().zip(rings) {
        // SAFETY: a plain store the predicate may read at any time.
        unsafe { core::ptr::write_volatile(slot, r.1) };
    }
}

/// The predicate over `n` rings: region 0 is `PARAMS`, region i+1 ring i's
/// header. True when an enabled term holds: a ring wanted for reading
/// holds data or has no writer; one wanted for writing has room for a
/// `PIPE_BUF` write or no reader.
pub fn program(n: usize) -> Vec<u64> {
    let mut a = bpf::Asm::new();
    if n == 0 {
        // Nothing to watch (`pause`): never true; a signal or the deadline
        // ends the sleep. (The verifier refuses unreachable code.)
        a.mov64_imm(0, 0).exit();
        let insns = a.finish().expect("no labels");
        return insns.into_iter().map(|i| u64::from_le_bytes(i.to_bytes())).collect();
    }
    let yes = a.label();
    a.ld_region(6, 0, 0);
    for i in 0..n {
        let (no_read, next) = (a.label(), a.label());
        a.ld_region(7, i as u32 + 1, 0).ldx_dw(8, 6, 8 * i as i16);
        a.mov64_reg(9, 8).and64_imm(9, WANT_READ as i32).jeq_imm(9, 0, no_read);
        a.ldx_dw(2, 7, pipe::HEAD_AT).ldx_dw(3, 7, pipe::TAIL_AT).jne_reg(2, 3, yes);
        a.ldx_w(2, 7, pipe::WRITERS_AT).jeq_imm(2, 0, yes);
        a.bind(no_read);
        a.mov64_reg(9, 8).and64_imm(9, WANT_WRITE as i32).jeq_imm(9, 0, next);
        a.ldx_w(2, 7, pipe::READERS_AT).jeq_imm(2, 0, yes);
        a.ldx_dw(2, 7, pipe::HEAD_AT).ldx_dw(3, 7, pipe::TAIL_AT).sub64_reg(2, 3);
        a.jle_imm(2, (pipe::CAPACITY - pipe::PIPE_BUF) as i32, yes);
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
