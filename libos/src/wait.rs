//! Waiting for descriptors: the core of `poll`, `ppoll`, `select` and
//! `pselect6` (Linux personality) and of `native::poll`/`native::select`.
//!
//! A wait first looks at the descriptors (with the big lock held) and
//! returns at once if one is ready: in a ping-pong the answer is usually
//! there already, because a pipe writer hands the CPU to the reader
//! (`obj::pipe`). Otherwise it gives the rest of its slice once to the
//! environment expected to make progress (the other end of the first
//! pipe), looks again, and then sleeps in the kernel on a wakeup predicate
//! (paper 000 §5.1) until a ring changes or the deadline passes.
//!
//! The predicates are parameterised and cached (paper 002 §4.6.12): a
//! process installs one predicate per set of up to `MAX_RINGS` pipe rings
//! the first time it waits on them and keeps it (up to `CACHED` of them,
//! the least recently used is freed). The predicate reads the rings'
//! headers in the shared arena and this process's `PARAMS` block, which
//! says which terms are enabled (readable, writable) for each ring; a wait
//! writes only `PARAMS`, so nothing is built or installed on the fast
//! path. Predicates over the same number of rings are the same program, so
//! the kernel compiles that program once for every process.
//!
//! What the predicate reads stays mapped: the arena's frames are fixed for
//! the life of the system (a freed ring's header is still arena memory),
//! and `PARAMS` is lxrt's own static, whose frame a process keeps (fork
//! copies it for the child, which installs its own predicates).
//!
//! Not covered by a predicate: console input (the kernel's input buffer is
//! not exposed), more than `MAX_RINGS` rings, or a failed install (the
//! kernel's table of 64 predicates is full): such waits poll, yielding once
//! per look. Sleeps are cut into at most `MAX_SLEEP_TICKS` so a signal
//! (`kill`, Ctrl-C) ends the wait with EINTR within that time.

use crate::errno::{EBADF, EINTR, EINVAL};
use crate::obj::{self, pipe, Kind};
use crate::{fd, lock};
use abi::syscall::Region;
use alloc::vec::Vec;
use user::{kinfo, sys};

pub const POLLIN: u16 = 0x1;
pub const POLLPRI: u16 = 0x2;
pub const POLLOUT: u16 = 0x4;
pub const POLLERR: u16 = 0x8;
pub const POLLHUP: u16 = 0x10;
pub const POLLNVAL: u16 = 0x20;
pub const POLLRDNORM: u16 = 0x40;
pub const POLLWRNORM: u16 = 0x100;
/// Reported whether asked for or not.
const ALWAYS: u16 = POLLERR | POLLHUP | POLLNVAL;

/// Rings one predicate reads (the kernel allows four regions; one is
/// `PARAMS`).
pub const MAX_RINGS: usize = 3;
/// Predicates a process keeps installed.
const CACHED: usize = 4;
/// Longest single sleep (2 ms ticks): how late a signal may end a wait.
const MAX_SLEEP_TICKS: u64 = 25;

/// Terms of a ring in `PARAMS`.
const WANT_READ: u64 = 1;
const WANT_WRITE: u64 = 2;

/// One descriptor to wait for (`struct pollfd`, widened).
#[derive(Clone, Copy, Debug, Default)]
pub struct Entry {
    /// Negative: ignored.
    pub fd: i64,
    pub events: u16,
    pub revents: u16,
}

/// What descriptor `fd` is ready for now (POLLRDNORM/POLLWRNORM come with
/// POLLIN/POLLOUT).
pub fn events_of(fd: i64) -> u16 {
    let Ok(d) = fd::get(fd) else {
        return POLLNVAL;
    };
    let f = fd::file(&d);
    let ev = match f.kind {
        Kind::PipeRead | Kind::PipeWrite => pipe::poll_events(f),
        Kind::Console => POLLOUT | if obj::console::input_ready() { POLLIN } else { 0 },
        Kind::Null | Kind::Regular | Kind::Dir => POLLIN | POLLOUT,
    };
    ev | if ev & POLLIN != 0 { POLLRDNORM } else { 0 } | if ev & POLLOUT != 0 { POLLWRNORM } else { 0 }
}

/// Fills in every entry's `revents`; returns how many have any.
pub fn scan(entries: &mut [Entry]) -> usize {
    let mut ready = 0;
    for e in entries.iter_mut() {
        e.revents = if e.fd < 0 { 0 } else { events_of(e.fd) & (e.events | ALWAYS) };
        ready += (e.revents != 0) as usize;
    }
    ready
}

/// Waits (the big lock held, dropped while asleep) until an entry is ready
/// or `timeout_ns` has passed (`None`: no limit; `Some(0)`: just look).
/// Returns how many entries are ready (0 on timeout), or EINTR.
pub fn wait(entries: &mut [Entry], timeout_ns: Option<u64>) -> Result<usize, i64> {
    let until = timeout_ns.map(|t| crate::linux::time::now_ns().saturating_add(t));
    let mut yielded = false;
    loop {
        let ready = scan(entries);
        if ready > 0 || until.is_some_and(|u| crate::linux::time::now_ns() >= u) {
            return Ok(ready);
        }
        if crate::obj::console::poll_interrupt() || crate::proc::signal::pending() {
            return Err(EINTR);
        }
        if !yielded {
            // The other end may be about to answer: let it run first.
            yielded = true;
            lock::wait_for(first_peer(entries));
            continue;
        }
        block(entries, until);
    }
}

/// The environment that last used the other end of the first pipe waited
/// on (0: none).
fn first_peer(entries: &[Entry]) -> u64 {
    entries
        .iter()
        .filter(|e| e.fd >= 0)
        .filter_map(|e| fd::get(e.fd).ok())
        .map(|d| fd::file(&d))
        .find(|f| matches!(f.kind, Kind::PipeRead | Kind::PipeWrite))
        .map_or(0, |f| pipe::wait_info(f).1)
}

/// The rings a wait depends on, with their terms, sorted by address; None
/// if something else could make it ready (console input) or there are too
/// many rings for one predicate.
fn rings_of(entries: &[Entry]) -> Option<([(u64, u64); MAX_RINGS], usize)> {
    let mut rings = [(0u64, 0u64); MAX_RINGS];
    let mut n = 0;
    for e in entries.iter().filter(|e| e.fd >= 0) {
        let Ok(d) = fd::get(e.fd) else { continue };
        let f = fd::file(&d);
        let term = match f.kind {
            Kind::PipeRead => WANT_READ,
            Kind::PipeWrite => WANT_WRITE,
            Kind::Console if e.events & (POLLIN | POLLRDNORM) != 0 => return None,
            _ => continue,
        };
        let va = pipe::wait_info(f).0;
        match rings[..n].iter_mut().find(|r| r.0 == va) {
            Some(r) => r.1 |= term,
            None if n < MAX_RINGS => {
                rings[n] = (va, term);
                n += 1;
            }
            None => return None,
        }
    }
    rings[..n].sort_unstable();
    Some((rings, n))
}

/// Sleeps until the rings change or the deadline (or `MAX_SLEEP_TICKS`)
/// comes, or, when no predicate covers this wait, yields once.
fn block(entries: &[Entry], until: Option<u64>) {
    let pred = rings_of(entries).and_then(|(rings, n)| {
        let id = predicate(&rings[..n])?;
        // SAFETY: one thread per environment; the kernel only reads PARAMS.
        let params = unsafe { &mut *(&raw mut PARAMS) };
        for (slot, r) in params.0.iter_mut().zip(&rings[..n]) {
            // SAFETY: a plain store the predicate may read at any time.
            unsafe { core::ptr::write_volatile(slot, r.1) };
        }
        Some(id)
    });
    let Some(id) = pred else {
        lock::wait();
        return;
    };
    let clock = kinfo::clock();
    let mut ticks = MAX_SLEEP_TICKS;
    if let Some(u) = until {
        let left = u.saturating_sub(crate::linux::time::now_ns());
        ticks = ticks.min(left.div_ceil(clock.tick_ns.max(1)).max(1));
    }
    lock::release();
    let _ = sys::sleep(id, clock.ticks + ticks);
    lock::acquire();
}

// ---- the predicate cache ---------------------------------------------------

/// The enabled terms of each ring of the predicate being slept on
/// (`WANT_READ`, `WANT_WRITE`), read by every predicate of this process.
/// 64-byte aligned: within one page.
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

static mut CACHE: [Option<Cached>; CACHED] = [None; CACHED];
static mut USES: u64 = 0;
/// Installs done by this process (a test reads it: the fast path must not
/// install).
static mut INSTALLS: u64 = 0;

fn cache() -> &'static mut [Option<Cached>; CACHED] {
    // SAFETY: private to this process; one thread.
    unsafe { &mut *(&raw mut CACHE) }
}

/// How many predicates this process has installed so far.
pub fn installs() -> u64 {
    // SAFETY: as for `cache`.
    unsafe { INSTALLS }
}

/// The predicate for these rings (sorted addresses, terms ignored),
/// installed on first use; None if the kernel refuses.
fn predicate(rings: &[(u64, u64)]) -> Option<u64> {
    let mut key = [0u64; MAX_RINGS];
    for (k, r) in key.iter_mut().zip(rings) {
        *k = r.0;
    }
    // SAFETY: as for `cache`.
    let stamp = unsafe {
        USES += 1;
        USES
    };
    let c = cache();
    if let Some(hit) = c.iter_mut().flatten().find(|e| e.n == rings.len() && e.rings == key) {
        hit.last_use = stamp;
        return Some(hit.id);
    }
    // A free slot, or the least recently used one's predicate goes.
    let slot = match c.iter().position(Option::is_none) {
        Some(i) => i,
        None => {
            let i = (0..CACHED).min_by_key(|&i| c[i].map_or(0, |e| e.last_use)).unwrap_or(0);
            if let Some(old) = c[i].take() {
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
    // SAFETY: as for `cache`.
    unsafe { INSTALLS += 1 };
    c[slot] = Some(Cached { rings: key, n: rings.len(), id, last_use: stamp });
    Some(id)
}

/// The predicate over `n` rings: region 0 is `PARAMS`, region i+1 ring i's
/// header. True when an enabled term holds: a ring wanted for reading
/// holds data or has no writer; one wanted for writing has room for a
/// `PIPE_BUF` write or no reader.
pub fn program(n: usize) -> Vec<u64> {
    let mut a = bpf::Asm::new();
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
    // SAFETY: as for `cache`.
    unsafe {
        *(&raw mut CACHE) = [None; CACHED];
        INSTALLS = 0;
    }
}

// ---- select ------------------------------------------------------------

/// `select` over word bitmaps (`fd_set`s as 64-bit words; an empty slice
/// is a null set): waits like `wait`, then leaves in each set only the
/// descriptors ready for it; returns the number of bits set. A set bit for
/// a descriptor that is not open is EBADF.
pub fn select(
    nfds: usize,
    read: &mut [u64],
    write: &mut [u64],
    except: &mut [u64],
    timeout_ns: Option<u64>,
) -> Result<usize, i64> {
    if nfds > fd::MAX_FDS.max(1024) {
        return Err(EINVAL);
    }
    let bit = |set: &[u64], i: usize| set.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 != 0);
    let mut small = [Entry::default(); 8];
    let mut big = Vec::new();
    let mut n = 0;
    for i in 0..nfds {
        let mut events = 0;
        if bit(read, i) {
            events |= POLLIN;
        }
        if bit(write, i) {
            events |= POLLOUT;
        }
        if bit(except, i) {
            events |= POLLPRI;
        }
        if events == 0 {
            continue;
        }
        if fd::get(i as i64).is_err() {
            return Err(EBADF);
        }
        let e = Entry { fd: i as i64, events, revents: 0 };
        if n < small.len() {
            small[n] = e;
        } else {
            if big.is_empty() {
                big.extend_from_slice(&small);
            }
            big.push(e);
        }
        n += 1;
    }
    let entries = if n > small.len() { &mut big[..] } else { &mut small[..n] };
    wait(entries, timeout_ns)?;
    for set in [&mut *read, &mut *write, &mut *except] {
        set.fill(0);
    }
    let mut count = 0;
    for e in entries.iter() {
        let (w, b) = (e.fd as usize / 64, 1u64 << (e.fd % 64));
        let marks = [
            (&mut *read, POLLIN | POLLHUP | POLLERR),
            (&mut *write, POLLOUT | POLLERR),
            (&mut *except, POLLPRI),
        ];
        for (set, mask) in marks {
            if let Some(word) = set.get_mut(w) {
                // Only sets that asked for this descriptor get it back.
                let asked = match mask {
                    m if m & POLLIN != 0 => e.events & POLLIN != 0,
                    m if m & POLLOUT != 0 => e.events & POLLOUT != 0,
                    _ => e.events & POLLPRI != 0,
                };
                if asked && e.revents & mask != 0 {
                    *word |= b;
                    count += 1;
                }
            }
        }
    }
    Ok(count)
}
