//! Futexes: threads (and processes, over shared memory) wait for a word
//! to change and wake each other (Linux's `futex(2)`, the core under
//! `linux/futex.rs`). Waiting sleeps in the kernel on a wakeup predicate
//! (paper 000 §5.1) over a word of the waiting thread's own block, which
//! a waker in the same process sets; a waker in another process (a
//! shared futex) interrupts the sleeper instead. Nothing spins.
//!
//! The waiters are one table in the shared arena (`shared::futexes`),
//! read and changed under the big lock, so a check of the futex word and
//! the enqueue that follows it are one step for every waker.

use crate::errno::{EAGAIN, EINTR, ENOMEM, ETIMEDOUT};
use crate::lock;
use abi::tables::env_state;
use user::{kinfo, sys};

/// A bitset matching every waiter.
pub const ALL: u32 = u32::MAX;

/// Waiters at once, over all processes.
pub const WAITERS: usize = 256;

/// What a futex is: a word of one process (`space` = its environment) or
/// of a physical frame (`space` = 0: shared memory, `addr` = the frame's
/// address plus the offset).
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Key {
    space: u64,
    addr: u64,
}

impl Key {
    /// The word at `addr` of this process.
    pub fn private(addr: u64) -> Key {
        Key { space: crate::proc::env() as u64, addr }
    }

    /// The word at `addr` as every process mapping its frame sees it
    /// (`None` if nothing is mapped there).
    pub fn shared(addr: u64) -> Option<Key> {
        let pte = crate::vm::pte(addr & !0xfff)?;
        Some(Key { space: 0, addr: abi::pte::frame_of(pte) << 12 | (addr & 0xfff) })
    }
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Waiter {
    key: Key,
    bitset: u32,
    /// The waiting thread's environment (0: a free entry), and its
    /// process's.
    env: u32,
    process: u32,
    /// Set by the waker.
    woken: u32,
    /// The address of the waiter's wake word, in its process.
    word: u64,
}

/// The waiters (in the arena's header: zero, as the arena starts, is
/// every entry free).
#[repr(C)]
pub struct Table([Waiter; WAITERS]);

/// Runs `f` on the table: under the big lock, one use at a time.
fn with_table<R>(f: impl FnOnce(&mut [Waiter; WAITERS]) -> R) -> R {
    debug_assert!(lock::held());
    // SAFETY: the table is in the arena, mapped in every process; the big
    // lock keeps every other thread and process out while `f` runs, and no
    // other reference to it is made.
    f(unsafe { &mut (*crate::shared::futexes()).0 })
}

/// An entry whose waiter has gone (killed while it waited) is free too.
fn free(w: &Waiter) -> bool {
    w.env == 0 || kinfo::env_by_id(w.env as u64).is_none_or(|e| e.state == env_state::EXITED)
}

/// Waits on `key` while the word at `addr` holds `val`, until woken with a
/// bitset meeting `bitset`, a signal (EINTR) or the monotonic clock's
/// `deadline` in nanoseconds (ETIMEDOUT). The word changed already:
/// EAGAIN. Called with the big lock held, which it drops while asleep.
pub fn wait(key: Key, addr: u64, val: u32, bitset: u32, deadline: Option<u64>) -> Result<(), i64> {
    if crate::uaccess::get::<u32>(addr)? != val {
        return Err(EAGAIN);
    }
    let (word, pred) = crate::proc::thread::wake_word()?;
    // SAFETY: the running thread's own word, in its block.
    unsafe { (*word).store(0, core::sync::atomic::Ordering::SeqCst) };
    let me = lock::my_id() as u32;
    let at = with_table(|t| {
        let i = t.iter().position(free)?;
        let process = crate::proc::env();
        t[i] = Waiter { key, bitset, env: me, process, woken: 0, word: word as u64 };
        Some(i)
    })
    .ok_or(ENOMEM)?;
    let ticks = deadline.map(|d| {
        let now = crate::time::now_ns();
        let tick = kinfo::clock().tick_ns.max(1);
        kinfo::ticks() + d.saturating_sub(now).div_ceil(tick).max(1)
    });
    let r = loop {
        if with_table(|t| t[at].woken != 0) {
            break Ok(());
        }
        if deadline.is_some_and(|d| crate::time::now_ns() >= d) {
            break Err(ETIMEDOUT);
        }
        if crate::proc::signal::pending() {
            break Err(EINTR);
        }
        lock::release();
        let _ = sys::sleep(pred, ticks.unwrap_or(0));
        lock::acquire();
    };
    with_table(|t| t[at].env = 0);
    r
}

/// Wakes up to `n` waiters on `key` whose bitset meets `bitset`; returns
/// how many.
pub fn wake(key: Key, n: u32, bitset: u32) -> u32 {
    let me = crate::proc::env();
    let mut woken = 0;
    let mut first = 0;
    with_table(|t| {
        for w in t.iter_mut() {
            if woken == n {
                break;
            }
            if w.env == 0 || w.woken != 0 || w.key != key || w.bitset & bitset == 0 {
                continue;
            }
            w.woken = 1;
            woken += 1;
            if w.process == me {
                // SAFETY: the waiter's wake word, in its block, in our
                // address space (a thread of this process); an atomic.
                unsafe {
                    (*(w.word as *const core::sync::atomic::AtomicU64))
                        .store(1, core::sync::atomic::Ordering::SeqCst)
                };
                if first == 0 {
                    first = w.env;
                }
            } else {
                // Another process: its sleep ends on an interrupt (which
                // means "look again", not a signal).
                let _ = sys::interrupt(
                    w.env as u64,
                    crate::proc::signal::CONSOLE_INPUT,
                    crate::proc::table::cred(),
                );
            }
        }
    });
    // The first one woken runs as soon as this call ends.
    if first != 0 {
        lock::hand_off(first as u64);
    }
    woken
}

/// Wakes up to `n` waiters on `from`, then moves up to `moved` more of
/// them to wait on `to`; returns how many of each.
pub fn requeue(from: Key, to: Key, n: u32, moved: u32) -> (u32, u32) {
    let woken = wake(from, n, ALL);
    let mut m = 0;
    with_table(|t| {
        for w in t.iter_mut() {
            if m == moved {
                break;
            }
            if w.env != 0 && w.woken == 0 && w.key == from {
                w.key = to;
                m += 1;
            }
        }
    });
    (woken, m)
}
