//! A mapped file's data as whole pages of the arena that never move (the
//! one page cache: `docs/libos.md`). A file is first one contiguous
//! buffer (`node::reserve` grows it by doubling, moving it); the first
//! shared mapping turns it into a list of page-aligned arena pages, so
//! the page at each offset stays where every process maps it however the
//! file grows or shrinks. The list itself may move (it is lxrt's to read,
//! under the big lock); the pages do not. While any process maps the
//! file (`Inode::maps`), pages a truncation cut off stay the file's,
//! zeroed, and are freed when the last mapping goes (`trim`): an old
//! mapping never shows memory another file got.
//!
//! Pages come in runs, each one block of the arena's heap (a run at
//! least doubles the file's pages, up to `MAX_RUN`): the heap's tag after
//! a block leaves the rest of a page unusable to the next page-aligned
//! block, which one page per block would pay each time. A run is freed
//! whole, so a truncation into a run keeps the run's later pages (zeroed)
//! as room to grow. The list is the inode's `data`: its first word is its
//! room, then an entry per page (their number is `cap` / 4096), each a
//! page's address with `HEAD` set on the first page of its run.

use super::inode::Inode;
use crate::errno::{Errno, EFBIG, ENOSPC};
use crate::layout::{page_up, PAGE};
use crate::shared;
use alloc::vec::Vec;

const P: usize = PAGE as usize;

/// Marks the first page of a run in the list.
const HEAD: u64 = 1;

/// The most pages a run takes when it grows ahead of what is asked
/// (1 MiB); a larger request is one run of its own size.
const MAX_RUN: u64 = 256;

/// Whether the file's data is a page list.
pub fn paged(n: &Inode) -> bool {
    n.paged
}

/// How many pages the file has.
pub fn count(n: &Inode) -> u64 {
    n.cap / PAGE
}

/// The address (in the arena) of the file's page `i`, if it has one.
pub fn page(n: &Inode, i: u64) -> Option<u64> {
    (i < count(n)).then(|| entry(n, i) & !HEAD)
}

/// The list's words (its room, then the entries).
fn list(n: &Inode) -> *mut u64 {
    n.data as *mut u64
}

/// How many entries the list has room for.
fn room(n: &Inode) -> u64 {
    if n.data.is_null() {
        return 0;
    }
    // SAFETY: a list's first word is its room.
    unsafe { *list(n) }
}

/// Entry `i` of the list (below `count`).
fn entry(n: &Inode, i: u64) -> u64 {
    // SAFETY: the list has `count` entries after its room.
    unsafe { *list(n).add(1 + i as usize) }
}

/// Sets entry `i` (below `room`).
fn set_entry(n: &Inode, i: u64, v: u64) {
    // SAFETY: the list has room for entry `i`.
    unsafe { *list(n).add(1 + i as usize) = v }
}

/// Gives `n` (which has no pages yet) pages holding `old`, its bytes.
pub fn convert(n: &mut Inode, old: &[u8]) -> Result<(), Errno> {
    if let Err(e) = reserve(n, old.len() as u64) {
        free_all(n);
        return Err(e);
    }
    write(n, 0, old);
    Ok(())
}

/// Has pages (zeroed when new) for the first `len` bytes.
pub fn reserve(n: &mut Inode, len: u64) -> Result<(), Errno> {
    if len > crate::layout::SHARED_MAX {
        return Err(EFBIG);
    }
    let want = page_up(len) / PAGE;
    if want > room(n) {
        // Room for a run that doubles the file.
        grow_list(n, (want + want.min(MAX_RUN)).max(room(n) * 2).max(4))?;
    }
    while count(n) < want {
        let (have, need) = (count(n), want - count(n));
        // Doubling where it fits in the list and the arena, else what is
        // asked, else ever smaller runs.
        let mut run = need.max(have.min(MAX_RUN)).min(room(n) - have);
        let p = loop {
            let p = shared::alloc_data(run as usize * P, P);
            if !p.is_null() || run == 1 {
                break p;
            }
            run = if run > need { need } else { run.div_ceil(2) };
        };
        if p.is_null() {
            return Err(ENOSPC);
        }
        // SAFETY: a fresh run of `run` pages of the arena.
        unsafe { p.write_bytes(0, run as usize * P) };
        for i in 0..run {
            set_entry(n, have + i, p as u64 + i * PAGE + (i == 0) as u64 * HEAD);
        }
        n.cap = (have + run) * PAGE;
    }
    Ok(())
}

/// Moves the list to room for `cap` entries.
fn grow_list(n: &mut Inode, cap: u64) -> Result<(), Errno> {
    let p = shared::alloc((cap as usize + 1) * 8, 8) as *mut u64;
    if p.is_null() {
        return Err(ENOSPC);
    }
    // SAFETY: the new list has room for its room and `cap` entries, more
    // than the old one's `count`; the old one came from the shared heap
    // with its own room.
    unsafe {
        *p = cap;
        if !n.data.is_null() {
            core::ptr::copy_nonoverlapping(list(n).add(1), p.add(1), count(n) as usize);
            shared::free(n.data, (room(n) as usize + 1) * 8, 8);
        }
    }
    n.data = p as *mut u8;
    Ok(())
}

/// Runs `f` on each piece of `[off, off + len)` within one page: the
/// page's address at `off`, the piece's length, its offset in the range.
fn pieces(n: &Inode, off: u64, len: usize, mut f: impl FnMut(*mut u8, usize, usize)) {
    let mut done = 0;
    while done < len {
        let at = off + done as u64;
        let Some(p) = page(n, at / PAGE) else { return };
        let k = (len - done).min(P - (at % PAGE) as usize);
        f((p + at % PAGE) as *mut u8, k, done);
        done += k;
    }
}

/// Reads up to the file's size from `off`; returns the byte count.
pub fn read(n: &Inode, off: u64, buf: &mut [u8]) -> usize {
    if off >= n.size {
        return 0;
    }
    let k = buf.len().min((n.size - off) as usize);
    // SAFETY: each piece lies in one of the file's pages.
    pieces(n, off, k, |p, len, at| unsafe { core::ptr::copy_nonoverlapping(p, buf[at..].as_mut_ptr(), len) });
    k
}

/// Writes `buf` at `off` into pages `reserve` provided.
pub fn write(n: &Inode, off: u64, buf: &[u8]) {
    // SAFETY: each piece lies in one of the file's pages.
    pieces(n, off, buf.len(), |p, len, at| unsafe {
        core::ptr::copy_nonoverlapping(buf[at..].as_ptr(), p, len)
    });
}

/// Zeroes `[from, to)` of the pages the file has.
pub fn zero(n: &Inode, from: u64, to: u64) {
    let to = to.min(n.cap);
    if from < to {
        // SAFETY: each piece lies in one of the file's pages.
        pieces(n, from, (to - from) as usize, |p, len, _| unsafe { p.write_bytes(0, len) });
    }
}

/// Frees the pages past the file's end (nobody maps the file now).
pub fn trim(n: &mut Inode) {
    trim_to(n, page_up(n.size) / PAGE);
}

/// Frees the runs that start at page `keep` or later (a run that holds
/// page `keep - 1` stays whole).
fn trim_to(n: &mut Inode, keep: u64) {
    while count(n) > keep {
        let Some(head) = (0..count(n)).rev().find(|&i| entry(n, i) & HEAD != 0) else {
            break;
        };
        if head < keep {
            break;
        }
        let pages = (count(n) - head) as usize;
        // SAFETY: a run from `alloc_data`, of `pages` pages.
        unsafe { shared::free((entry(n, head) & !HEAD) as *mut u8, pages * P, P) };
        n.cap = head * PAGE;
    }
}

/// Frees every page and the list.
pub fn free_all(n: &mut Inode) {
    trim_to(n, 0);
    if !n.data.is_null() {
        // SAFETY: the list, with its room, from the shared heap.
        unsafe { shared::free(n.data, (room(n) as usize + 1) * 8, 8) };
    }
    (n.data, n.cap, n.paged) = (core::ptr::null_mut(), 0, false);
}

/// A copy of the file's bytes (for what needs them contiguous: the disk's
/// write-back).
pub fn gather(n: &Inode) -> Vec<u8> {
    let mut v = alloc::vec![0; n.size as usize];
    read(n, 0, &mut v);
    v
}
