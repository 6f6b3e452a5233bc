//! Description pages (issue 25; paper 000 §3.3 software regions and
//! capabilities, §5.2: state shared only by those who share it). Every
//! open file description that is not a pipe's or a socketpair's (those
//! live in the pipe's frames, `pipemem`) lives in a page of descriptions
//! outside the shared arena, mapped only into the processes whose
//! descriptors name one of its descriptions (or whose epoll sets watch
//! one, `super::pipes_of`).
//!
//! A process allocates descriptions only in its *current* page, which no
//! other process maps: a fresh frame of its own, made a frame range
//! (`FRAME_RANGE`, its maker's user, 0600) whose ticket sits in the page
//! for a description passed over a Unix socket to carry (`lend`). Fork
//! maps into the child the pages the parent's descriptors name
//! (`fd::share_pipes`, one `map_from_range` each), so the two share the
//! descriptions that existed at fork and no later one: the parent stops
//! allocating in a current page it has just shared (`shared_at_fork`),
//! the child starts with none (`forked_child`), and each makes a fresh one
//! at its next open. A page a description of which is passed stops being
//! current too. A process unmaps a page when no descriptor of its names a
//! description in it (`fd::unmap_unheld`; its current page it keeps for
//! the next open); the page's last description to close, when it is not
//! the maker's current page, ends its range; the frame is freed with its
//! last mapping (`pipemem::release` gives it away).

use super::{pipemem, File, Handle};
use crate::errno::{Errno, ENFILE};
use crate::word::Word;
use abi::syscall::frame_range::OWNER_SELF;
use core::mem::MaybeUninit;
use user::sys;

/// Descriptions in a page: as many as its bitmap has bits.
const SLOTS: usize = 64;

/// A page of descriptions: the range's ticket, the slots in use (a bit
/// each), its maker's environment, the slots.
#[repr(C)]
struct Page {
    ticket: u64,
    used: u64,
    maker: u64,
    files: [MaybeUninit<File>; SLOTS],
}

const _: () = assert!(size_of::<Page>() <= crate::layout::PAGE as usize);

/// This process's current page (0: none yet, or given up).
static CURRENT: Word<u64> = Word::new(0);
/// The process is closing everything on its way out (`exiting`).
static EXITING: Word<bool> = Word::new(false);

/// The page holding description `f`.
fn page_of(addr: u64) -> *mut Page {
    pipemem::base(addr) as *mut Page
}

/// The current page, a fresh one when there is none, it is no longer
/// mapped here, or it is full; ENFILE when the kernel has no range (or
/// frame) for another.
fn current() -> Result<*mut Page, Errno> {
    let c = CURRENT.get();
    // SAFETY: read only when mapped here; the page is this process's alone.
    if c != 0 && pipemem::mapped(c) && unsafe { (*(c as *mut Page)).used } != u64::MAX {
        return Ok(c as *mut Page);
    }
    let va = pipemem::alloc_descs().ok_or(ENFILE)?;
    let Ok(ticket) = sys::range_make(va, 1, OWNER_SELF, 0o600) else {
        pipemem::release(va, 1);
        return Err(ENFILE);
    };
    let p = va as *mut Page;
    // SAFETY: a fresh zeroed frame, mapped here alone.
    unsafe { ((*p).ticket, (*p).maker) = (ticket, crate::env::id() as u64) };
    CURRENT.set(va);
    Ok(p)
}

/// `f` placed in a free slot of the current page, with its handle.
pub fn alloc(f: File) -> Result<Handle<File>, Errno> {
    let p = current()?;
    // SAFETY: the current page is mapped, this process's alone, and has a
    // free slot (`current`); the lock is held.
    unsafe {
        let used = (*p).used;
        let i = (!used).trailing_zeros() as usize;
        (*p).used = used | 1 << i;
        let at = (*p).files[i].as_mut_ptr();
        at.write(f);
        Ok(Handle::from_raw(at))
    }
}

/// Description `f`, closed by its last holder, frees its slot; a page left
/// with none, other than this process's current one, ends its range (no
/// description in it can be passed any more).
pub fn free(f: Handle<File>) {
    let p = page_of(f.addr());
    let i = (f.addr() - (p as u64 + core::mem::offset_of!(Page, files) as u64)) as usize / size_of::<File>();
    // SAFETY: `f` is in a page mapped here (its holder's); the lock is held.
    unsafe {
        (*p).used &= !(1u64 << (i % SLOTS));
        if (*p).used == 0 && p as u64 != CURRENT.get() {
            let _ = sys::range_drop((*p).ticket, p as u64);
        }
    }
}

/// Whether `base` is this process's current page (kept mapped while no
/// descriptor names it, for the next open).
pub fn is_current(base: u64) -> bool {
    base == CURRENT.get()
}

/// The ticket of the page at `base` (mapped here), for a description in
/// it passed over a Unix socket: the page is no longer current, since the
/// receiver will map it.
pub fn lend(base: u64) -> u64 {
    if is_current(base) {
        CURRENT.set(0);
    }
    // SAFETY: mapped here (a description in it is being sent from here).
    unsafe { (*(base as *mut Page)).ticket }
}

/// fork: the pages at `bases` are mapped into the child; if the current
/// page is among them, later descriptions go in a fresh one.
pub fn shared_at_fork(bases: &[u64]) {
    if bases.contains(&CURRENT.get()) {
        CURRENT.set(0);
    }
}

/// First thing in a forked child: its parent's current page is not its
/// own.
pub fn forked_child() {
    CURRENT.set(0);
}

/// No descriptor here needs the page at `base` (mapped, not current) any
/// more: it is unmapped, and its maker gives the frame away (freed with
/// its last mapping). Another process's page is left alone on the way out:
/// the address space goes with it.
pub fn let_go(base: u64) {
    // SAFETY: mapped here; the word is only compared (a sharer that
    // changes it costs the maker its frame, or another a refused call).
    if unsafe { (*(base as *mut Page)).maker } == crate::env::id() as u64 {
        pipemem::release(base, 1);
    } else if !EXITING.get() {
        let _ = sys::unmap(abi::syscall::ENV_SELF, base);
    }
}

/// exit, before the descriptors close (`let_go`).
pub fn exiting() {
    EXITING.set(true);
}

/// exit, after the descriptors closed: the current page, if no
/// description is left in it, ends its range and goes.
pub fn exited() {
    let c = CURRENT.get();
    // SAFETY: read only when mapped; this process's alone.
    if c != 0 && pipemem::mapped(c) && unsafe { (*(c as *mut Page)).used } == 0 {
        CURRENT.set(0);
        // SAFETY: as above.
        let _ = sys::range_drop(unsafe { (*(c as *mut Page)).ticket }, c);
        pipemem::release(c, 1);
    }
}
