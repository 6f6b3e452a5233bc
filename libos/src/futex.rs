//! Futexes: threads (and processes, over shared memory) wait for a word
//! to change and wake each other (Linux's `futex(2)`, the core under
//! `linux/futex.rs`). Waiting sleeps in the kernel on a wakeup predicate
//! (paper 000 §5.1), one per process: it reads the byte of `WAKE` at the
//! sleeping environment's slot (the kernel tells it who sleeps), which the
//! waker sets. Nothing spins.
//!
//! The waiters are one table in the shared arena (`shared::futexes`),
//! read and changed under the big lock, so a check of the futex word and
//! the enqueue that follows it are one step for every waker. A futex is
//! named by its process and address: a program's memory is private to its
//! process (lxrt's `MAP_SHARED` anonymous memory is copied at fork), so
//! Linux's "shared" futexes name the same words as private ones, as
//! Linux's do on private memory.

use crate::errno::Errno;
use crate::errno::{EAGAIN, EINTR, ENOMEM, ETIMEDOUT};
use crate::lock;
use abi::tables::env_state;
use abi::tables::{env_slot, ENV_SLOTS};
use core::sync::atomic::{AtomicU8, Ordering};
use user::{kinfo, sys};

/// A bitset matching every waiter.
pub const ALL: u32 = u32::MAX;

/// Waiters at once, over all processes.
pub const WAITERS: usize = 256;

/// What a futex is: the word at `addr` of process `space` (its
/// environment).
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Key {
    space: u64,
    addr: u64,
}

/// The `space` of a key naming a word by the frame that holds it.
const BY_FRAME: u64 = u64::MAX;

impl Key {
    /// The word at `addr` of this process.
    pub fn private(addr: u64) -> Key {
        Key { space: crate::env::id() as u64, addr }
    }

    /// The word at `addr` as every process mapping it sees it: in a
    /// `MAP_SHARED` mapping (which fork shares), the frame behind it and
    /// the offset; elsewhere this process's word.
    pub fn shared(addr: u64) -> Key {
        match crate::vm::pte(addr).filter(|_| crate::vm::fork_shared(addr)) {
            Some(pte) => Key { space: BY_FRAME, addr: pte & abi::pte::FRAME_MASK | addr & 0xfff },
            None => Key::private(addr),
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Waiter {
    key: Key,
    bitset: u32,
    /// The waiting thread's environment (0: a free entry).
    env: u32,
    /// Set by the waker.
    woken: u32,
}

/// The waiters (in the arena's header: zero, as the arena starts, is
/// every entry free).
#[repr(C)]
pub struct Table([Waiter; WAITERS]);

/// One byte per environment slot, set when the thread in that slot is
/// woken: what the predicate reads. In the arena (`WAKE`), so that a waker
/// in another process (a futex in `MAP_SHARED` memory) can set it.
#[repr(C, align(4096))]
pub struct Wake([AtomicU8; ENV_SLOTS]);
const _: () = assert!(ENV_SLOTS == 4096, "one page, the region a predicate reads");

/// The predicate futex waits sleep on, once installed.
static PRED: crate::word::Word<Option<u64>> = crate::word::Word::new(None);

fn wake_byte(env: u32) -> &'static AtomicU8 {
    // SAFETY: the header is mapped in every process for its whole life;
    // the bytes are atomics, shared by design.
    unsafe { &(*WAKE.get()).0[env_slot(env)] }
}

/// The predicate "my byte of `WAKE` is set", installed on the process's
/// first wait.
fn predicate() -> Result<u64, Errno> {
    if let Some(p) = PRED.get() {
        return Ok(p);
    }
    let mut a = bpf::Asm::new();
    let no = a.label();
    // r3 = the sleeper's slot (PredicateContext::env), r2 = its byte.
    a.ldx_dw(3, 1, 8).and64_imm(3, ENV_SLOTS as i32 - 1);
    a.ld_region(2, 0, 0).add64_reg(2, 3).ldx_b(4, 2, 0);
    a.mov64_imm(0, 0).jeq_imm(4, 0, no).mov64_imm(0, 1);
    a.bind(no).exit();
    let insns: alloc::vec::Vec<u64> = a
        .finish()
        .expect("every label is bound")
        .into_iter()
        .map(|i| u64::from_le_bytes(i.to_bytes()))
        .collect();
    let region = abi::syscall::Region { va: WAKE.get() as u64, len: ENV_SLOTS as u64 };
    let p = sys::pred_install(&insns, &[region]).map_err(|_| ENOMEM)?;
    PRED.set(Some(p));
    Ok(p)
}

/// After fork: the parent's predicate is not the child's.
pub fn forked_child() {
    PRED.set(None);
}

/// The waiters and the wakers' bytes, in the arena.
static TABLE: crate::shared::Root<Table> = crate::shared::Root::new(2);
static WAKE: crate::shared::Root<Wake> = crate::shared::Root::new(3);

/// Makes the waiters' table and the wake bytes (first process, at start).
pub fn create() -> Result<(), abi::Error> {
    // SAFETY: an entry with `env` 0 is free: all zero is an empty table;
    // all zero is nobody woken.
    unsafe { TABLE.create_zeroed().and_then(|_| WAKE.create_zeroed()) }
}

/// Runs `f` on the table: under the big lock, one use at a time.
fn with_table<R>(f: impl FnOnce(&mut [Waiter; WAITERS]) -> R) -> R {
    debug_assert!(lock::held());
    // SAFETY: the table is in the arena, mapped in every process; the big
    // lock keeps every other thread and process out while `f` runs, and no
    // other reference to it is made.
    f(unsafe { &mut (*TABLE.get()).0 })
}

/// An entry whose waiter has gone (killed while it waited) is free too.
fn free(w: &Waiter) -> bool {
    w.env == 0 || kinfo::env_by_id(w.env as u64).is_none_or(|e| e.state == env_state::EXITED)
}

/// Waits on `key` while the word at `addr` holds `val`, until woken with a
/// bitset meeting `bitset`, the caller's `interrupted` (a signal: EINTR)
/// or the monotonic clock's `deadline` in nanoseconds (ETIMEDOUT). The
/// word changed already: EAGAIN. Called with the big lock held, which it
/// drops while asleep.
pub fn wait(
    key: Key,
    addr: u64,
    val: u32,
    bitset: u32,
    deadline: Option<u64>,
    interrupted: impl Fn() -> bool,
) -> Result<(), Errno> {
    if crate::uaccess::get::<u32>(addr)? != val {
        return Err(EAGAIN);
    }
    let pred = predicate()?;
    let me = lock::my_id() as u32;
    wake_byte(me).store(0, Ordering::SeqCst);
    let at = with_table(|t| {
        let i = t.iter().position(free)?;
        t[i] = Waiter { key, bitset, env: me, woken: 0 };
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
        if interrupted() {
            break Err(EINTR);
        }
        lock::release();
        let _ = sys::sleep(pred, ticks.unwrap_or(0));
        lock::reacquire();
    };
    with_table(|t| t[at].env = 0);
    r
}

/// Replaces the word at `addr` with `f` of it (`None`: leaves it),
/// atomically against the program's threads (which change it without
/// lxrt); returns the old value.
pub fn update(addr: u64, f: impl Fn(u32) -> Option<u32>) -> Result<u32, Errno> {
    if !addr.is_multiple_of(4) {
        return Err(crate::errno::EINVAL);
    }
    crate::uaccess::writable(addr, 4)?;
    // SAFETY: `writable` made the aligned word present and writable; the
    // program's other threads reach it only atomically or racily, as on
    // Linux.
    let word = unsafe { &*(addr as *const core::sync::atomic::AtomicU32) };
    Ok(word.fetch_update(Ordering::SeqCst, Ordering::SeqCst, f).unwrap_or_else(|v| v))
}

/// Walks the robust list at `head` (`set_robust_list`: a `struct
/// robust_list_head` of the list's first entry, the offset from an entry
/// to its lock word, and the entry being locked or unlocked now) of
/// thread `tid`, which is ending: each lock it still holds is marked
/// owner-died and one waiter woken, as Linux's `exit_robust_list` does, so
/// the next locker gets EOWNERDEAD. A list that is bad or loops ends the
/// walk (after `LIMIT` entries), as on Linux.
pub fn release_robust(head: u64, tid: u32) {
    const LIMIT: usize = 2048;
    // Bit 0 of an entry's address marks a PI lock; lxrt has none.
    let Ok([first, offset, pending]) = crate::uaccess::get::<[u64; 3]>(head) else {
        return;
    };
    let (offset, pending) = (offset as i64, pending & !1);
    let mut entry = first & !1;
    for _ in 0..LIMIT {
        if entry == head {
            break;
        }
        let Ok(next) = crate::uaccess::get::<u64>(entry) else {
            break;
        };
        if entry != pending {
            owner_died(entry.wrapping_add_signed(offset), tid);
        }
        entry = next & !1;
    }
    if pending != 0 {
        owner_died(pending.wrapping_add_signed(offset), tid);
    }
}

/// The lock word at `addr`, if `tid` holds it: marked owner-died (its
/// waiters bit kept), one waiter woken.
fn owner_died(addr: u64, tid: u32) {
    const WAITERS: u32 = 0x8000_0000;
    const OWNER_DIED: u32 = 0x4000_0000;
    const TID: u32 = 0x3fff_ffff;
    let held = |v: u32| v & TID == tid;
    if let Ok(old) = update(addr, |v| held(v).then_some(v & WAITERS | OWNER_DIED)) {
        if held(old) && old & WAITERS != 0 {
            wake(Key::private(addr), 1, ALL);
        }
    }
}

/// Wakes up to `n` waiters on `key` whose bitset meets `bitset`; returns
/// how many.
pub fn wake(key: Key, n: u32, bitset: u32) -> u32 {
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
            // The waiter's byte, in the arena (it may be another process's
            // thread, for a key by frame).
            wake_byte(w.env).store(1, Ordering::SeqCst);
            if first == 0 {
                first = w.env;
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
