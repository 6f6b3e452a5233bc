//! Waiting for descriptors: the core of `poll`, `ppoll`, `select` and
//! `pselect6` (Linux personality) and of `native::poll`/`native::select`.
//!
//! A wait first looks at the descriptors and returns at once if one is
//! ready: in a ping-pong the answer is usually there already, because a
//! pipe writer hands the CPU to the reader (`obj::pipe`). That look needs
//! neither the big lock nor any list (`select_now`, `ready_now`: a pipe's
//! header words are atomics); when it finds nothing, or a descriptor only
//! the lock lets it read, the wait goes on with the lock held: it gives
//! the rest of its slice once to the environment expected to make
//! progress (the other end of the first pipe), looks again, and then
//! sleeps in the kernel on a wakeup predicate (paper 000 §5.1) until a
//! ring changes or the deadline passes.
//!
//! The predicates are parameterised and cached (`predicate.rs`).
//!
//! What the predicate reads stays mapped: the arena's frames are fixed for
//! the life of the system (a freed ring's header is still arena memory),
//! and `PARAMS` is lxrt's own static, whose frame a process keeps (fork
//! copies it for the child, which installs its own predicates).
//!
//! Not covered by a predicate: console input (the kernel's input buffer is
//! not exposed), more than `MAX_RINGS` rings, or a failed install (the
//! kernel refuses: 8 per environment, 1024 in all): such waits poll, yielding once
//! per look. Sleeps are cut into at most `MAX_SLEEP_TICKS` so a signal
//! (`kill`, Ctrl-C) ends the wait with EINTR within that time.

use crate::errno::Errno;
use crate::errno::{EBADF, EINTR, EINVAL};
use crate::obj::{epoll, pipe, pty, timerfd, unix, File, Handle, Kind};
pub use crate::obj::{
    file_events, Look, POLLERR, POLLHUP, POLLIN, POLLNVAL, POLLOUT, POLLPRI, POLLRDNORM, POLLWRNORM,
};
use crate::predicate::{MAX_RINGS, WANT_READ, WANT_WRITE};
use crate::{fd, lock, sleep};

/// Reported whether asked for or not.
const ALWAYS: u16 = POLLERR | POLLHUP | POLLNVAL;

/// One descriptor to wait for (`struct pollfd`, widened).
#[derive(Clone, Copy, Debug, Default)]
pub struct Entry {
    /// Negative: ignored.
    pub fd: i64,
    pub events: u16,
    pub revents: u16,
}

/// Why a look gave no answer.
enum Stop {
    /// The call fails (select: a descriptor that is not open).
    Errno(Errno),
    /// A descriptor can only be looked at with the lock held.
    NeedsLock,
}

/// What descriptor `fd` is ready for now (POLLRDNORM/POLLWRNORM come with
/// POLLIN/POLLOUT; POLLNVAL if it is not open), or None if `look` cannot
/// tell without the lock.
#[inline]
fn events(fd: i64, look: Look) -> Option<u16> {
    let Ok(d) = fd::get(fd) else {
        return Some(POLLNVAL);
    };
    file_events(d.file, look)
}

/// What a wait waits for: poll's entries or select's sets.
trait Waited {
    /// Looks at every descriptor once and returns how many are ready. The
    /// answer is left in place (`revents`, the sets) when some are; with
    /// none ready, select's sets are left as they were.
    fn look(&mut self, look: Look) -> Result<usize, Stop>;
    /// The open files waited on, each with the events asked for.
    fn asked(&self) -> impl Iterator<Item = (Handle<File>, u16)> + '_;
    /// The time is up with nothing ready: leave the answer for that.
    fn none_ready(&mut self) {}
}

impl Waited for [Entry] {
    fn look(&mut self, look: Look) -> Result<usize, Stop> {
        let mut ready = 0;
        for e in self.iter_mut() {
            e.revents =
                if e.fd < 0 { 0 } else { events(e.fd, look).ok_or(Stop::NeedsLock)? & (e.events | ALWAYS) };
            ready += (e.revents != 0) as usize;
        }
        Ok(ready)
    }

    fn asked(&self) -> impl Iterator<Item = (Handle<File>, u16)> + '_ {
        self.iter().filter_map(|e| Some((fd::get(e.fd).ok()?.file, e.events)))
    }
}

/// Waits (the big lock held, dropped while asleep) until an entry is ready
/// or `timeout_ns` has passed (`None`: no limit; `Some(0)`: just look).
/// Returns how many entries are ready (0 on timeout), or EINTR.
pub fn wait(entries: &mut [Entry], timeout_ns: Option<u64>) -> Result<usize, Errno> {
    wait_on(entries, timeout_ns)
}

/// Looks at the entries once without the big lock: `Some(n)` when `n > 0`
/// are ready (`revents` filled in, as `wait` would leave them); None when
/// none is, or one needs the lock to be looked at (then `wait` decides).
pub fn ready_now(entries: &mut [Entry]) -> Option<usize> {
    entries.look(Look::LockFree).ok().filter(|&n| n > 0)
}

/// The loop behind `wait` and `select`: look; if nothing is ready, give
/// the first pipe's other end the CPU once, then sleep on a predicate.
fn wait_on<W: Waited + ?Sized>(w: &mut W, timeout_ns: Option<u64>) -> Result<usize, Errno> {
    let until = timeout_ns.map(|t| crate::time::now_ns().saturating_add(t));
    let mut yielded = false;
    loop {
        let ready = match w.look(Look::Locked) {
            Ok(n) => n,
            Err(Stop::Errno(e)) => return Err(e),
            Err(Stop::NeedsLock) => unreachable!("a look with the lock held reads everything"),
        };
        if ready > 0 {
            return Ok(ready);
        }
        if until.is_some_and(|u| crate::time::now_ns() >= u) {
            w.none_ready();
            return Ok(0);
        }
        if crate::obj::console::poll_interrupt() || crate::proc::deliver::pending() {
            return Err(EINTR);
        }
        if !yielded {
            // The other end may be about to answer: let it run first.
            yielded = true;
            lock::wait_for(first_peer(w.asked()));
            continue;
        }
        block(w.asked(), until);
    }
}

/// Waits once for open file `f` to become ready for `events` (a read or
/// write that cannot go on, `io.rs`): the first time, when `f` is a pipe
/// end, gives the rest of the slice to the environment that last used the
/// other end (a directed yield: it may be about to answer); after that,
/// or for another file, sleeps on the predicate over what `f` waits on
/// (or yields once when none covers it, `block`).
pub fn block_on(f: Handle<File>, events: u16, yielded: &mut bool) {
    if !*yielded {
        *yielded = true;
        let peer = first_peer(core::iter::once((f, events)));
        if peer != 0 {
            lock::wait_for(peer);
            return;
        }
    }
    // A pipe read's buffer is not filled while it sleeps (its predicate
    // would not see it); filled already, the read answers at once.
    if crate::obj::handover::filled() {
        return;
    }
    block(core::iter::once((f, events)), None);
}

/// The environment that last used the other end of the first pipe waited
/// on, directly or through an epoll set (0: none).
fn first_peer(asked: impl Iterator<Item = (Handle<File>, u16)>) -> u64 {
    let mut peer = 0;
    for (f, events) in asked {
        epoll::expand(f, events, &mut |f, _| {
            // SAFETY: a watched file is live; no other reference to it here.
            let f = unsafe { f.get() };
            if peer == 0 && matches!(f.kind, Kind::PipeRead | Kind::PipeWrite) {
                peer = pipe::wait_info(f).1;
            }
            true
        });
    }
    peer
}

/// What a sleep waits on: rings (with their terms, sorted by address) and
/// the earliest timer expiry.
struct Sleep {
    rings: [(u64, u64); MAX_RINGS],
    n: usize,
    timer: Option<u64>,
}

/// What a wait sleeps on; None if something else could make it ready
/// (console input, room in an eventfd) or there are too many rings for
/// one predicate.
fn sleep_of(asked: impl Iterator<Item = (Handle<File>, u16)>) -> Option<Sleep> {
    let mut s = Sleep { rings: [(0, 0); MAX_RINGS], n: 0, timer: None };
    let mut covered = true;
    for (f, events) in asked {
        covered &= epoll::expand(f, events, &mut |f, events| add_to_sleep(&mut s, f, events));
    }
    s.rings[..s.n].sort_unstable();
    covered.then_some(s)
}

/// Adds what wakes a wait for `events` on `f` (not an epoll set) to `s`;
/// false if no predicate can tell.
fn add_to_sleep(s: &mut Sleep, f: Handle<File>, events: u16) -> bool {
    // SAFETY: a waited-on file is live; no other reference to it here.
    let f = unsafe { f.get() };
    let (va, term) = match f.kind {
        Kind::PipeRead => (pipe::wait_info(f).0, WANT_READ),
        Kind::PipeWrite => (pipe::wait_info(f).0, WANT_WRITE),
        Kind::EventFd if events & POLLOUT != 0 => return false,
        Kind::EventFd => (f.object::<crate::obj::eventfd::EventFd>().addr(), WANT_READ),
        Kind::Inotify => (f.object::<crate::obj::inotify::Inotify>().addr(), WANT_READ),
        Kind::TimerFd => {
            if let Some(at) = timerfd::next_expiry(f) {
                s.timer = Some(s.timer.map_or(at, |t| t.min(at)));
            }
            return true;
        }
        Kind::Console if events & (POLLIN | POLLRDNORM) != 0 => return false,
        // A process's end changes no word a predicate can watch.
        Kind::PidFd if events & (POLLIN | POLLRDNORM) != 0 => return false,
        Kind::PtyMaster | Kind::PtySlave => {
            let read = events & (POLLIN | POLLRDNORM) != 0;
            let write = events & POLLOUT != 0;
            return (!read || add_ring(s, pty::wait_ring(f, false), WANT_READ))
                && (!write || add_ring(s, pty::wait_ring(f, true), WANT_WRITE));
        }
        Kind::Inet => {
            let (va, term, at) = crate::net::stack::wait_terms();
            if let Some(at) = at {
                s.timer = Some(s.timer.map_or(at, |t| t.min(at)));
            }
            return add_ring(s, va, term);
        }
        Kind::Socket => {
            return unix::wait_terms(f, events)
                .iter()
                .filter(|t| t.0 != 0)
                .all(|&(va, term)| add_ring(s, va, term))
        }
        _ => return true,
    };
    add_ring(s, va, term)
}

/// Adds term `term` of the ring-shaped header at `va` to `s`; false when
/// one predicate cannot take another ring.
fn add_ring(s: &mut Sleep, va: u64, term: u64) -> bool {
    match s.rings[..s.n].iter_mut().find(|r| r.0 == va) {
        Some(r) => r.1 |= term,
        None if s.n < MAX_RINGS => {
            s.rings[s.n] = (va, term);
            s.n += 1;
        }
        None => return false,
    }
    true
}

/// Sleeps until the rings change or the deadline (or `MAX_SLEEP_TICKS`)
/// comes, or, when no predicate covers this wait, yields once.
fn block(asked: impl Iterator<Item = (Handle<File>, u16)>, until: Option<u64>) {
    match sleep_of(asked) {
        Some(s) => {
            let until = match (until, s.timer) {
                (Some(u), Some(t)) => Some(u.min(t)),
                (u, t) => u.or(t),
            };
            sleep::sleep_on(Some((s.rings, s.n)), until)
        }
        None => sleep::sleep_on(None, until),
    }
}

// ---- select ------------------------------------------------------------

/// Descriptors a `select` may name (`FD_SETSIZE`).
pub const FD_SETSIZE: usize = 1024;

/// Which poll events put a descriptor in select's read, write and except
/// set (Linux's `POLLIN_SET`, `POLLOUT_SET`, `POLLEX_SET`).
const SELECT_SETS: [u16; 3] = [POLLIN | POLLHUP | POLLERR, POLLOUT | POLLERR, POLLPRI];
/// The events each set asks for (what `poll` would be asked).
const SET_EVENTS: [u16; 3] = [POLLIN, POLLOUT, POLLPRI];

/// select's read, write and except sets: `fd_set`s as 64-bit words (an
/// empty slice is a null set), asked on the way in, answered in place.
struct Sets<'a> {
    nfds: usize,
    sets: [&'a mut [u64]; 3],
}

impl Sets<'_> {
    /// Words that hold descriptors below `nfds`.
    fn words(&self) -> usize {
        self.nfds.div_ceil(64)
    }

    /// Word `i` of each set, without bits for descriptors from `nfds` on.
    #[inline]
    fn asked_word(&self, i: usize) -> [u64; 3] {
        let below = self.nfds - 64 * i;
        let mask = if below >= 64 { !0 } else { (1u64 << below) - 1 };
        self.sets.each_ref().map(|s| s.get(i).map_or(0, |w| w & mask))
    }

    /// Leaves `ready` in word `i` of each set.
    fn store(&mut self, i: usize, ready: [u64; 3]) {
        for (set, r) in self.sets.iter_mut().zip(ready) {
            if let Some(w) = set.get_mut(i) {
                *w = r;
            }
        }
    }

    /// Clears each set from word `from` on (past `nfds` too).
    fn clear_from(&mut self, from: usize) {
        for set in self.sets.iter_mut() {
            if let Some(rest) = set.get_mut(from..).filter(|r| !r.is_empty()) {
                rest.fill(0);
            }
        }
    }
}

/// Puts in `ready` the descriptors asked for in word `i` (read, write,
/// except bits) that are ready for what they are asked for; returns how
/// many bits that is.
#[inline(always)]
fn ready_in(i: usize, asked: [u64; 3], ready: &mut [u64; 3], look: Look) -> Result<usize, Stop> {
    *ready = [0; 3];
    let mut count = 0;
    let mut bits = asked[0] | asked[1] | asked[2];
    while bits != 0 {
        let bit = bits & bits.wrapping_neg();
        bits ^= bit;
        let fd = 64 * i + bit.trailing_zeros() as usize;
        let ev = events(fd as i64, look).ok_or(Stop::NeedsLock)?;
        if ev & POLLNVAL != 0 {
            return Err(Stop::Errno(EBADF));
        }
        for ((r, a), mask) in ready.iter_mut().zip(asked).zip(SELECT_SETS) {
            if ev & mask != 0 && a & bit != 0 {
                *r |= bit;
                count += 1;
            }
        }
    }
    Ok(count)
}

impl Waited for Sets<'_> {
    /// Every descriptor is checked (EBADF before anything is written); the
    /// sets are rewritten only when something is ready, so a look that
    /// finds nothing leaves the question in place for the next one.
    fn look(&mut self, look: Look) -> Result<usize, Stop> {
        let words = self.words();
        let mut ready = [0; 3];
        let mut first = None;
        for i in 0..words {
            let count = ready_in(i, self.asked_word(i), &mut ready, look)?;
            if first.is_none() && count > 0 {
                first = Some((i, ready, count));
            }
        }
        let Some((first, ready_first, mut count)) = first else {
            return Ok(0);
        };
        // The words before the first ready one hold nothing ready; those
        // after it are looked at again (every descriptor has just passed,
        // so that look answers).
        for i in 0..first {
            self.store(i, [0; 3]);
        }
        self.store(first, ready_first);
        for i in first + 1..words {
            count += ready_in(i, self.asked_word(i), &mut ready, look).unwrap_or(0);
            self.store(i, ready);
        }
        self.clear_from(words);
        Ok(count)
    }

    fn asked(&self) -> impl Iterator<Item = (Handle<File>, u16)> + '_ {
        (0..self.words()).flat_map(move |i| {
            let asked = self.asked_word(i);
            Bits(asked[0] | asked[1] | asked[2]).filter_map(move |b| {
                let events = (0..3).filter(|&s| asked[s] >> b & 1 != 0).fold(0, |ev, s| ev | SET_EVENTS[s]);
                Some((fd::get((64 * i + b as usize) as i64).ok()?.file, events))
            })
        })
    }

    fn none_ready(&mut self) {
        self.clear_from(0);
    }
}

/// The positions of a word's set bits, lowest first.
struct Bits(u64);

impl Iterator for Bits {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let b = (self.0 != 0).then(|| self.0.trailing_zeros())?;
        self.0 &= self.0 - 1;
        Some(b)
    }
}

/// `select` over word bitmaps (`fd_set`s as 64-bit words; an empty slice
/// is a null set), the big lock held: waits like `wait`, then leaves in
/// each set only the descriptors ready for it (read: data, end of file or
/// error; write: room for `PIPE_BUF` bytes or error; except: none yet);
/// returns the number of bits set. A set bit for a descriptor that is not
/// open is EBADF (the sets untouched).
pub fn select(
    nfds: usize,
    read: &mut [u64],
    write: &mut [u64],
    except: &mut [u64],
    timeout_ns: Option<u64>,
) -> Result<usize, Errno> {
    if nfds > FD_SETSIZE {
        return Err(EINVAL);
    }
    wait_on(&mut Sets { nfds, sets: [read, write, except] }, timeout_ns)
}

/// `select` without the big lock and without waiting, for descriptors
/// below 64 (the usual case: one word per set, one pass over it): `Some`
/// with the answer when a descriptor is ready (the sets as `select` leaves
/// them) or the call fails, None when `select` must decide (nothing ready
/// yet, a descriptor only a look with the lock held can read, or a larger
/// `nfds`).
#[inline]
pub fn select_now(
    nfds: usize,
    read: &mut [u64],
    write: &mut [u64],
    except: &mut [u64],
) -> Option<Result<usize, Errno>> {
    if nfds > 64 {
        return None;
    }
    let mut sets = Sets { nfds, sets: [read, write, except] };
    let mut ready = [0; 3];
    match ready_in(0, sets.asked_word(0), &mut ready, Look::LockFree) {
        Ok(0) | Err(Stop::NeedsLock) => None,
        Ok(count) => {
            sets.store(0, ready);
            sets.clear_from(1);
            Some(Ok(count))
        }
        Err(Stop::Errno(e)) => Some(Err(e)),
    }
}

// ---- epoll ---------------------------------------------------------------

/// An `epoll_wait`: the set's ready interests go into `out` as (events,
/// data).
struct EpollWait<'a> {
    set: Handle<File>,
    out: &'a mut [(u32, u64)],
}

impl Waited for EpollWait<'_> {
    fn look(&mut self, look: Look) -> Result<usize, Stop> {
        epoll::collect(self.set, look, self.out).ok_or(Stop::NeedsLock)
    }

    fn asked(&self) -> impl Iterator<Item = (Handle<File>, u16)> + '_ {
        // `epoll::expand` turns the set into what it watches.
        core::iter::once((self.set, POLLIN))
    }
}

/// Waits like `wait` until interests of epoll set `set` are ready, and
/// leaves them in `out`; returns how many.
pub fn epoll_wait(
    set: Handle<File>,
    out: &mut [(u32, u64)],
    timeout_ns: Option<u64>,
) -> Result<usize, Errno> {
    wait_on(&mut EpollWait { set, out }, timeout_ns)
}
