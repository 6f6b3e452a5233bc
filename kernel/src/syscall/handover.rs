//! `hand_over`: bytes copied from the caller straight into a buffer
//! another environment is waiting to fill (issue 26: a pipe's write into
//! a reader blocked on the empty ring, one copy instead of two through
//! the ring). The waiting environment consents by opening the record
//! after its exception save area (`abi::exception::Handover`), which only
//! it and the kernel write; the record names the buffer and a key (the
//! pipe's address), and only an environment that names the same key and
//! maps the same frame at its page (a holder of the same pipe, writing to
//! that pipe) may fill it, once.

use super::Args;
use crate::frames::Frame;
use crate::mm::{self, PhysTables};
use crate::pagetable::{self, Tables, FRAME_MASK, PRESENT, USER, WRITABLE};
use crate::state::Kernel;
use abi::exception::{handover, ExceptionFrame, Handover};
use abi::layout::{PAGE_SIZE, USER_END};
use abi::Error;
use core::sync::atomic::Ordering;

/// Pages of a range of at most `handover::MAX` bytes.
const PAGES: usize = (handover::MAX / PAGE_SIZE) as usize + 1;

/// The physical address of each page of user range `[va, va + len)` of
/// `pml4` into `out`, every page present with the `need` bits
/// (`BadPointer` otherwise); each leaf table is walked to once, not each
/// page.
fn frames(pml4: Frame, va: u64, len: u64, need: u64, out: &mut [u64]) -> Result<(), Error> {
    let end = va.checked_add(len).filter(|&e| e <= USER_END).ok_or(Error::BadPointer)?;
    let need = need | PRESENT;
    let (mut page, mut i) = (va & !(PAGE_SIZE - 1), 0);
    while page < end {
        let leaf = pagetable::leaf_of(&mut PhysTables, pml4, page).ok_or(Error::BadPointer)?;
        let mut tables = PhysTables;
        let entries = tables.table(leaf);
        // The pages of the range under this leaf table.
        let last = end.min((page | ((1 << 21) - 1)) + 1);
        while page < last {
            let e = entries[pagetable::index(page, 0)];
            if e & need != need {
                return Err(Error::BadPointer);
            }
            out[i] = e & FRAME_MASK;
            (page, i) = (page + PAGE_SIZE, i + 1);
        }
    }
    Ok(())
}

pub fn hand_over(k: &mut Kernel, Args([env, src, len, key, ..]): Args) -> Result<u64, Error> {
    if len == 0 || len > handover::MAX {
        return Err(Error::BadLength);
    }
    let me = k.current();
    let s = k.env_slot(env)?;
    if s == me {
        return Err(Error::NotPermitted);
    }
    let target = &k.envs[s];
    if target.state() == crate::env::State::Exited || target.exc.save == 0 {
        return Err(Error::BadState);
    }
    // The record follows the save area in its pinned page, or there is none.
    let at = target.exc.user_save + size_of::<ExceptionFrame>() as u64;
    if at / PAGE_SIZE != (at + size_of::<Handover>() as u64 - 1) / PAGE_SIZE {
        return Err(Error::BadState);
    }
    // SAFETY: the save area's frame is pinned while registered and the
    // record lies in the same page (above); only atomics are used on it,
    // since its owner may write it too.
    let rec = unsafe { &*((target.exc.save + size_of::<ExceptionFrame>() as u64) as *const Handover) };
    if rec.state.load(Ordering::Acquire) != handover::OPEN || rec.key.load(Ordering::Relaxed) != key {
        return Err(Error::BadState);
    }
    let (dst, n) = (rec.dst.load(Ordering::Relaxed), len.min(rec.len.load(Ordering::Relaxed)));
    if n == 0 {
        return Err(Error::BadState);
    }
    // Only a holder of what the key names (the same frame at its page).
    let (theirs, mine) = (target.pml4, k.envs[me].pml4);
    let frame_at = |pml4| {
        (key < USER_END)
            .then(|| pagetable::lookup(&mut PhysTables, pml4, key & !(PAGE_SIZE - 1)))
            .flatten()
            .map(|pte| pte & FRAME_MASK)
    };
    let frame = frame_at(theirs);
    if frame.is_none() || frame != frame_at(mine) {
        return Err(Error::NotPermitted);
    }
    // Every page of both ranges is checked before a byte moves.
    let mut pages = [0u64; 2 * PAGES];
    let (to, from) = pages.split_at_mut(PAGES);
    frames(theirs, dst, n, USER | WRITABLE, to)?;
    frames(mine, src, n, USER, from)?;
    // Past the checks nothing fails. The kernel runs on one processor, so
    // the owner cannot close the record while the bytes are copied.
    copy(to, dst, from, src, n);
    rec.len.store(n, Ordering::Relaxed);
    rec.state.store(handover::DONE, Ordering::Release);
    Ok(n)
}

/// Copies `n` bytes from user address `src` (its pages' frames in
/// `from`) to `dst` (in `to`), a piece at a time inside one page of each.
fn copy(to: &[u64], dst: u64, from: &[u64], src: u64, n: u64) {
    let mask = PAGE_SIZE - 1;
    let mut done = 0;
    while done < n {
        let (d, s) = (dst + done, src + done);
        let piece = (PAGE_SIZE - (d & mask)).min(PAGE_SIZE - (s & mask)).min(n - done);
        // Each page's place in its list: pages from the range's first.
        let dp = to[((d - (dst & !mask)) / PAGE_SIZE) as usize] + (d & mask);
        let sp = from[((s - (src & !mask)) / PAGE_SIZE) as usize] + (s & mask);
        // SAFETY: both are checked user pages seen through the physical
        // window, `piece` bytes inside each; a page may be mapped at both
        // ends (memory the two share), and `copy` allows the overlap.
        unsafe { core::ptr::copy(mm::phys::<u8>(sp), mm::phys::<u8>(dp), piece as usize) };
        done += piece;
    }
}
