//! signalfd: a descriptor whose reads take the reader's pending signals
//! among its mask (its thread's own and its process's, as
//! `rt_sigtimedwait` takes them), each as a 128-byte `signalfd_siginfo`,
//! and which is readable (poll, select, epoll) while one is pending. The
//! signals are the process layer's, above this one: it hands its two looks
//! in at start-up (`set_signals`, as the terminal's job control is handed
//! in). A reader that finds none waits as for any file; a signal's arrival
//! ends its sleep (`wait.rs`).

use super::flags::NONBLOCK;
use super::{no_ioctl, no_seek, no_write, File, Kind, Ops, POLLIN};
use crate::errno::Errno;
use crate::errno::{EAGAIN, EINVAL};
use crate::fs::Stat;
use crate::obj::Handle;
use crate::word::Word;

/// A signal taken: its number, `si_code` and the first two words of its
/// `siginfo_t` union.
pub type Taken = (u32, i32, [u64; 2]);

/// What the process layer answers for the caller.
pub struct Signals {
    /// Whether a signal among `mask` (bit n = signal n) is pending.
    pub ready: fn(u64) -> bool,
    /// Takes one such (`proc::deliver::take_pending_in`).
    pub take: fn(u64) -> Option<Taken>,
}

static SIGNALS: Word<Option<&'static Signals>> = Word::new(None);

/// Hands in the process layer's looks (once, at start-up).
pub fn set_signals(s: &'static Signals) {
    SIGNALS.set(Some(s));
}

/// The signals a signalfd takes (bit n = signal n).
pub struct SignalFd {
    mask: u64,
}

pub static OPS: Ops = Ops { read, write: no_write, seek: no_seek, stat, ioctl: no_ioctl, close };

/// A new signalfd for `mask`; `flags` may ask for `NONBLOCK`.
pub fn create(mask: u64, flags: u32) -> Result<Handle<File>, Errno> {
    super::new_with(Kind::SignalFd, flags & NONBLOCK, SignalFd { mask })
}

/// The object behind a signalfd.
///
/// # Safety
/// No other reference to it may be live while the result is (the lock is
/// held).
unsafe fn of(f: &File) -> &'static mut SignalFd {
    // SAFETY: a signalfd's object stays while it is open; the caller makes
    // this the only reference in use.
    unsafe { f.object::<SignalFd>().get_mut() }
}

/// Changes signalfd `f`'s mask (`signalfd` on one already open).
pub fn set_mask(f: &File, mask: u64) {
    // SAFETY: `f` keeps the object live; the lock is held.
    unsafe { of(f) }.mask = mask;
}

/// Bytes of a `struct signalfd_siginfo`.
pub const INFO_SIZE: usize = 128;
/// `si_code` of a POSIX timer's signal: its union holds the timer's id
/// and overrun, then its value; the others' hold the sender's pid and uid.
const SI_TIMER: i32 = -2;

/// A `signalfd_siginfo` for signal `sig` with `si_code` `code` and union
/// words `w` (Linux's `signalfd_copyinfo`).
fn info(out: &mut [u8], sig: u32, code: i32, w: [u64; 2]) {
    out.fill(0);
    out[0..4].copy_from_slice(&sig.to_ne_bytes());
    out[8..12].copy_from_slice(&code.to_ne_bytes());
    let (lo, hi) = (w[0] as u32, (w[0] >> 32) as u32);
    if code == SI_TIMER {
        out[24..28].copy_from_slice(&lo.to_ne_bytes()); // ssi_tid
        out[32..36].copy_from_slice(&hi.to_ne_bytes()); // ssi_overrun
        out[44..48].copy_from_slice(&(w[1] as u32).to_ne_bytes()); // ssi_int
        out[48..56].copy_from_slice(&w[1].to_ne_bytes()); // ssi_ptr
    } else {
        out[12..16].copy_from_slice(&lo.to_ne_bytes()); // ssi_pid
        out[16..20].copy_from_slice(&hi.to_ne_bytes()); // ssi_uid
    }
}

/// As many pending signals of the mask as `buf` has room for; EINVAL for
/// less than one's room, EAGAIN (the caller waits) when none is pending.
fn read(f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    if buf.len() < INFO_SIZE {
        return Err(EINVAL);
    }
    let Some(s) = SIGNALS.get() else { return Err(EAGAIN) };
    // SAFETY: `f` keeps the object live; the lock is held.
    let mask = unsafe { of(f) }.mask;
    let mut n = 0;
    for out in buf.chunks_exact_mut(INFO_SIZE) {
        let Some((sig, code, w)) = (s.take)(mask) else { break };
        info(out, sig, code, w);
        n += 1;
    }
    if n == 0 {
        return Err(EAGAIN);
    }
    Ok(n * INFO_SIZE)
}

/// Readiness for `poll` (under the lock: it reads the caller's signals).
pub fn events(f: &File) -> u16 {
    // SAFETY: `f` keeps the object live; the lock is held.
    let mask = unsafe { of(f) }.mask;
    match SIGNALS.get() {
        Some(s) if (s.ready)(mask) => POLLIN,
        _ => 0,
    }
}

fn stat(_: &File, st: &mut Stat) -> Result<(), Errno> {
    st.mode = 0o600;
    st.blksize = 4096;
    Ok(())
}

fn close(f: &mut File) {
    // SAFETY: made by `create`; its only file is going.
    unsafe { f.object::<SignalFd>().free() };
}
