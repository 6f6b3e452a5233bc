//! The one lock over the shared arena (file system, open files, pipes,
//! process table). Every Linux call that touches shared state runs with it
//! held; a call that must wait (a pipe, wait4, the console) drops it while
//! it yields. The word (in the arena) names the holder's environment id,
//! but any process can write the arena, so the word alone is not believed:
//! the holder also claims its hold in its own exception save area
//! (`critical::HOLDS`, which only it writes), and a waiter waits only for
//! a holder the kernel vouches for (`section_holds`: alive, awake, not
//! over its bound of ticks; kernel `section.rs`, docs/protection.md).
//! A dead, forged, sleeping or spinning holder is taken over instead of
//! hanging everyone.

use crate::entry::Local;
use crate::word::Word;
use abi::exception::critical::{BROKEN, HOLDS};
use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};
use user::sys;

/// A thread's side of the lock: the threads of a process take it as
/// separate environments, so lxrt runs for one at a time.
pub struct Side {
    /// Held by this thread.
    held: Cell<bool>,
    /// The environment id it is taken with (0 until first asked: the
    /// thread's own).
    id: Cell<u64>,
    /// Whom the current call hands the CPU to when it ends (0: nobody).
    hand_off: Cell<u64>,
}

// SAFETY: `Side` is made of `Cell`s, valid all zero; the part above the
// program-memory loan's (`uaccess`).
pub const LOCAL: Local<Side> = unsafe { Local::after(crate::uaccess::LOCAL.end()) };

#[inline]
fn thread() -> &'static Side {
    LOCAL.get()
}

/// The thread's side and its critical word (`claim`), from one look at
/// the per-thread block.
#[inline]
fn thread_and_word() -> (&'static Side, &'static AtomicU64) {
    LOCAL.get_with_critical()
}

/// The process's threads other than the first (`proc::thread` counts
/// them): with none, lxrt's code outside a call needs no lock (`guarded`).
pub static OTHER_THREADS: Word<u32> = Word::new(0);

/// This environment's id (the thread's), asked of the kernel once (again
/// in a forked child and a new thread).
#[inline]
pub fn my_id() -> u64 {
    id_of(thread())
}

/// Whether the running thread is the first: the process's environment.
#[inline]
pub fn is_first_thread() -> bool {
    my_id() == crate::env::id() as u64
}

/// `my_id` for the block the caller has in hand (each `thread()` reads the
/// gs base again).
#[inline]
fn id_of(t: &Side) -> u64 {
    if t.id.get() == 0 {
        t.id.set(sys::self_id());
    }
    t.id.get()
}

fn word() -> &'static AtomicU64 {
    crate::shared::lock_word()
}

fn waiter() -> &'static AtomicU64 {
    crate::shared::lock_waiter()
}

/// How long a waiter waits before a release hands it the CPU: a few
/// slices (2 ms each).
const PATIENCE_NS: u64 = 20_000_000;

/// The tick from which a waiter starting now has waited long. Ticks, not
/// `time::now_ns`: every release while someone waits asks whether it
/// waited long (with ten processes ping-ponging, most releases: 36
/// instructions a release in `select_a`), and a tick is one load.
fn patience_ends() -> u64 {
    let tick_ns = user::kinfo::clock().tick_ns.max(1);
    user::kinfo::ticks() + PATIENCE_NS.div_ceil(tick_ns)
}

/// Whether the lock's waiter has waited long.
#[inline]
fn waited_long() -> bool {
    user::kinfo::ticks() >= crate::shared::lock_waiter_until().load(Ordering::Relaxed)
}

/// Whether the kernel vouches that environment `id`, which the word
/// names, holds the lock: anything else (no such environment, ended,
/// asleep, over its bound, a word written by someone else) may be taken
/// over.
fn vouched(id: u64) -> bool {
    sys::section_holds(id) == Ok(1)
}

/// Claims (or drops) this thread's hold where the kernel reads it. The
/// word holds nothing else of lxrt's (it sets no `IN_SECTION`, so the
/// kernel's `DEFERRED` never appears), and the kernel writes `BROKEN` only
/// while this thread is switched out holding: a plain store suffices.
#[inline]
fn claim(on: bool) {
    crate::entry::critical_word().store(if on { HOLDS } else { 0 }, Ordering::Relaxed);
}

/// Takes the lock (no-op if this process already holds it).
#[inline]
pub fn acquire() {
    let (t, critical) = thread_and_word();
    if t.held.get() {
        return;
    }
    let me = id_of(t);
    // The usual case: nobody holds it. The claim comes first, so the word
    // never names this thread while it is switched out unclaimed.
    critical.store(HOLDS, Ordering::Relaxed);
    if word().compare_exchange(0, me, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
        taken(t);
        return;
    }
    critical.store(0, Ordering::Relaxed);
    contended(me);
}

/// The lock is this thread's now: catch up with the shared arena.
#[inline]
fn taken(t: &Side) {
    t.held.set(true);
    crate::shared::sync();
}

/// Takes the lock again inside a call that dropped it to wait: also
/// catches up with what siblings did meanwhile to the buffer the call
/// fills (`uaccess::relend`).
pub fn reacquire() {
    acquire();
    crate::uaccess::relend();
}

#[cold]
fn contended(me: u64) {
    loop {
        let cur = word().load(Ordering::Acquire);
        // Our own id without our hold: a stale or forged word.
        if cur == 0 || cur == me || !vouched(cur) {
            claim(true);
            if word().compare_exchange(cur, me, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                // No longer waiting: a release must not hand the CPU to
                // this thread once it runs on (a new thread goes on to
                // spin, and the releaser's slice with it).
                let _ = waiter().compare_exchange(me, 0, Ordering::AcqRel, Ordering::Relaxed);
                taken(thread());
                return;
            }
            claim(false);
            continue;
        }
        // Ask for the CPU at a release once this has waited long: without
        // it a holder inside calls most of the time (`ps` reading /proc)
        // takes the lock again in the same slice, and a waiter that only
        // ever finds it taken waited seconds (issue 27's heartbeat). Not
        // at every release: a releaser handing its slice away each time
        // made 2,000 threads' creation and exit 3x slower. The first
        // waiter keeps the place; the release empties it.
        if waiter().compare_exchange(0, me, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            crate::shared::lock_waiter_until().store(patience_ends(), Ordering::Relaxed);
        }
        // The holder is the one to run: it may own no time slice at all
        // (it runs in spare time), and a plain yield would wait for it to
        // come round.
        if cur == 0 || sys::yield_to(cur).is_err() {
            sys::yield_now();
        }
    }
}

/// Runs `f` with the lock held if the process has several threads and
/// this one does not hold it (lxrt's code outside a call: a fault, the
/// resume path), so the threads' uses of the process's state do not mix.
/// A process with one thread runs `f` as it is.
#[inline]
pub fn guarded<R>(f: impl FnOnce() -> R) -> R {
    if held() || OTHER_THREADS.get() == 0 {
        return f();
    }
    acquire();
    let r = f();
    release();
    r
}

/// Whether this process holds the lock (inside a Linux call).
pub fn held() -> bool {
    thread().held.get()
}

#[inline]
pub fn release() {
    let (t, critical) = thread_and_word();
    release_of(t, critical);
}

/// Drops thread `t`'s hold (`critical`: its critical word). Held, its id
/// is known (`acquire` asked for it).
#[inline]
fn release_of(t: &Side, critical: &AtomicU64) {
    if t.held.replace(false) {
        // A waiter may have taken a broken hold over: then the word is not
        // ours to clear.
        let _ = word().compare_exchange(t.id.get(), 0, Ordering::Release, Ordering::Relaxed);
        if critical.swap(0, Ordering::Relaxed) & BROKEN != 0 {
            broken();
        }
        if waiter().load(Ordering::Relaxed) != 0 && waited_long() {
            hand_to_waiter(t.id.get());
        }
    }
}

/// Someone has waited long for the lock: it runs now, finds the lock free
/// and takes it (a waiter that ended or forged the word: no yield). Out of
/// line: rarely taken.
#[cold]
#[inline(never)]
fn hand_to_waiter(me: u64) {
    let w = waiter().swap(0, Ordering::AcqRel);
    if w != 0 && w != me {
        let _ = sys::yield_to(w);
    }
}

/// The kernel broke this thread's hold (it slept or ran too long inside a
/// call): others may have changed the arena under it.
#[cold]
fn broken() {
    crate::log::note(format_args!(
        "a call's hold on the lock was broken by the kernel (it slept or overran)"
    ));
}

/// Lets others run once while waiting for something shared to change.
pub fn wait() {
    release();
    sys::yield_now();
    reacquire();
}

/// Like `wait`, but gives the rest of the slice to environment `env`, the
/// one expected to make the change (a pipe's other end): a directed yield.
/// Falls back to a plain yield when `env` is unknown (0), is this
/// environment, or cannot take the slice (it has ended).
pub fn wait_for(env: u64) {
    release();
    if env == 0 || env == my_id() || sys::yield_to(env).is_err() {
        sys::yield_now();
    }
    reacquire();
}

/// Asks that environment `env`, which waits for what the current call has
/// just done (a reader of the pipe it wrote), get the rest of the slice as
/// soon as the call has ended and dropped the lock (`end_call`).
#[inline]
pub fn hand_off(env: u64) {
    thread().hand_off.set(env);
}

/// Ends a call: drops the lock, then makes the directed yield `hand_off`
/// asked for, if any (a plain return if that one cannot run).
#[inline(always)]
pub fn end_call() {
    let (t, critical) = thread_and_word();
    release_of(t, critical);
    let env = t.hand_off.replace(0);
    // A hand-off was asked inside the call, which knew the id (`acquire`).
    if env != 0 && env != t.id.get() {
        let _ = sys::yield_to(env);
    }
}

/// After fork: the child's copy says held, but the word names the parent,
/// which releases it when its `fork` returns.
pub fn forked_child() {
    thread().held.set(false);
    thread().id.set(0);
    claim(false);
}

/// A new thread's first code: it takes the lock with its own id.
pub fn thread_started() {
    thread().id.set(0);
}
