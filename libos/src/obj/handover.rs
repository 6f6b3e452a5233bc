//! A blocked pipe read's buffer, filled by the writer in one copy (issue
//! 26). A read that finds a pipe's ring empty opens its thread's
//! hand-over record (`abi::exception::Handover`, after its exception save
//! area) naming its buffer, and the pipe notes the reader (`pipe::post`);
//! a writer that then finds the ring empty gives its
//! bytes with `hand_over` straight into that buffer, where they had been
//! copied into the ring and out again. The kernel lets only a process
//! mapping the same pipe frames fill the record (its key is the pipe's
//! first page), once. The record is open only while the reader yields to
//! the writer: it is closed before the reader sleeps on its wakeup
//! predicate (which watches the ring's positions, not the record) and
//! before the read returns, so no bytes land in a buffer once its read is
//! over.

use abi::exception::handover::{DONE, MAX, NONE, OPEN};
use core::sync::atomic::{AtomicU64, Ordering};

/// Reads (and writes) at least this long take this path. Below it the
/// kernel call and the reader's wait cost more than the copy they save:
/// a ping-pong of 8 KiB messages read 2,674 instructions a message
/// handed over (`pipe_8k --profile`: the kernel's walks of both ranges
/// and of the key's page, and each reader waiting in `read_slow` where
/// it had found the bytes in the ring) against 2,549 through the ring.
pub const MIN: usize = 16 * 1024;

/// Opens this thread's record for a read of `buf` from the ring named by
/// `key` (its address: only a process mapping the ring's page may fill
/// the record, and only by writing to that ring).
pub fn open(key: u64, buf: &mut [u8]) {
    let h = crate::entry::handover();
    h.key.store(key, Ordering::Relaxed);
    h.dst.store(buf.as_mut_ptr() as u64, Ordering::Relaxed);
    h.len.store((buf.len() as u64).min(MAX), Ordering::Relaxed);
    h.state.store(OPEN, Ordering::Release);
}

/// Closes the record: the bytes a writer put in the buffer meanwhile, if
/// one did.
#[inline]
pub fn close() -> Option<usize> {
    let h = crate::entry::handover();
    if h.state.load(Ordering::Relaxed) == NONE {
        return None;
    }
    (h.state.swap(NONE, Ordering::Acquire) == DONE).then(|| h.len.load(Ordering::Relaxed) as usize)
}

/// Before a sleep: closes an open record, so no writer fills it while its
/// reader sleeps on a predicate that would not see it; true if one has
/// filled it already (the read then answers at once, `close`).
pub fn filled() -> bool {
    let h = crate::entry::handover();
    h.state.compare_exchange(OPEN, NONE, Ordering::AcqRel, Ordering::Acquire) == Err(DONE)
}

/// Writes this process has handed over (a test reads it: long writes to a
/// waiting reader must take the one-copy path).
static GIVEN: AtomicU64 = AtomicU64::new(0);

/// Counts one write handed over.
pub fn given() {
    GIVEN.fetch_add(1, Ordering::Relaxed);
}

/// How many writes this process has handed over.
pub fn given_count() -> u64 {
    GIVEN.load(Ordering::Relaxed)
}
