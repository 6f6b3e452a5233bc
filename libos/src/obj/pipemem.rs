//! Frames of a pipe's own (issue 25; paper 000 §3.3 software regions and
//! capabilities, §5.2: ExOS's protected pipes). A pipe made by `pipe(2)`
//! keeps its ring, its header and its two open file descriptions in frames
//! its creator allocates for it, outside the shared arena, mapped only into
//! the processes that hold an end: fork maps them into the child for the
//! ends its descriptor table inherits (`share_with`), and a process unmaps
//! them at its last close of the pipe (`release`).
//!
//! The creator makes the frames a range (`FRAME_RANGE`): their share
//! guard is a capability of their own, which only the range's ticket
//! lends. The ticket is kept in the pipe's header, where only its holders
//! read it; an end passed over a Unix socket carries it, and the receiver,
//! whoever it is, maps the frames with it (`take`). The batch holds the
//! range while the end is in flight (`unix.rs`), so the frames outlive
//! every mapping until it is taken; the last close of the pipe ends the
//! range (`pipe.rs`). A process that holds no end has no mapping, and no
//! capability that lets the kernel map the frames.
//!
//! Every process maps a pipe at the same address, derived from its first
//! frame's number (unique while the pipe lives): the descriptions and the
//! wakeup predicates name it by address. The creator gives the frames away
//! at its own last close (`frame_disown`): they are freed with the last
//! mapping, whoever holds it.
//!
//! System V message queues and semaphore sets keep their state in frames
//! of their own too, in the same window with the same calls (`alloc`,
//! `claim`, `release`; `linux/ipc.rs`).
//!
//! Description pages (`descpage.rs`) are frames of their own too, one page
//! each in a window of their own (`DESCS`), mapped, passed and claimed the
//! same way: the functions below that take an address or a base serve
//! both, and a description page's count of pages is always one (`span`).

use crate::layout::{DESCS, DESCS_END, DESCS_HIGH, DESCS_HIGH_END, PAGE, PIPES, PIPES_END, PIPE_SLOT};
use abi::ident::{Ident, EFFECTIVE};
use abi::syscall::{map as mf, rights, ENV_SELF, FRAME_ANY};
use user::sys;

/// The rule (`FRAME_RANGE`'s owner and mode) of frames for an object
/// with owner `uid`, group `gid` and mode bits `mode` (a FIFO's or a
/// socket file's inode, a System V object's `ipc_perm`) when `me` makes
/// them: that owner and group, and for each class read and write if the
/// bits give it any of `need` (a FIFO's reader moves the ring's positions
/// and a message queue's receiver takes messages, so read or write: 0o6;
/// a socket's sender needs write; which direction a process may take is
/// the library's check). A maker that is not root names itself, and the
/// group only if it is in it (the kernel lets only root name others).
pub fn rule(uid: u32, gid: u32, mode: u32, need: u32, me: &Ident) -> (u64, u64) {
    let (my_uid, my_gid) = (me.uid[EFFECTIVE], me.gid[EFFECTIVE]);
    let root = my_uid == 0;
    let owner = if root { uid } else { my_uid };
    let group = if root || gid == my_gid || me.groups().contains(&gid) { gid } else { my_gid };
    let mode = (0..3).filter(|c| mode >> (3 * c) & need != 0).fold(0, |m, c| m | 0o6 << (3 * c));
    (u64::from(owner) | u64::from(group) << 32, mode)
}

/// Whether `addr` (a description's or a ring's) is in a pipe's own frames.
#[inline]
pub fn guarded(addr: u64) -> bool {
    (PIPES..PIPES_END).contains(&addr)
}

/// Whether `addr` is in a description page (`descpage`).
#[inline]
pub fn in_descs(addr: u64) -> bool {
    (DESCS..DESCS_END).contains(&addr) || (DESCS_HIGH..DESCS_HIGH_END).contains(&addr)
}

/// Whether `addr` is in frames of their own: a pipe's or a description
/// page.
#[inline]
pub fn own(addr: u64) -> bool {
    guarded(addr) || in_descs(addr)
}

/// The pages of the frames at `base`: a pipe's `pages`, or one for a
/// description page.
fn span(base: u64, pages: u64) -> u64 {
    if in_descs(base) {
        1
    } else {
        pages
    }
}

/// The frame whose number places the frames at `base` (their first).
fn first_frame(base: u64) -> u64 {
    if (DESCS..DESCS_END).contains(&base) {
        (base - DESCS) / PAGE
    } else if in_descs(base) {
        (base - DESCS_HIGH) / PAGE
    } else {
        (base - PIPES) / PIPE_SLOT
    }
}

/// Whether this process maps the pipe frames holding `addr` (a process
/// that holds no end and was not passed one, `take`, does not).
pub fn mapped(addr: u64) -> bool {
    crate::selfmap::pte(base(addr)).is_some()
}

/// The start of the pipe frames (or description page) holding `addr`.
pub fn base(addr: u64) -> u64 {
    if in_descs(addr) {
        addr & !(PAGE - 1)
    } else {
        addr & !(PIPE_SLOT - 1)
    }
}

/// Allocates and maps `pages` fresh (zeroed) frames for a pipe; their
/// address, or None (no memory, or a frame past the window).
pub fn alloc(pages: u64) -> Option<u64> {
    alloc_in(pages, |first| Some(PIPES + first * PIPE_SLOT).filter(|va| va + pages * PAGE <= PIPES_END))
}

/// Allocates and maps one fresh (zeroed) frame for a description page:
/// its address, or None (`alloc`). Its place: `DESCS` for a frame
/// numbered below 512 MiB, `DESCS_HIGH` past it.
pub fn alloc_descs() -> Option<u64> {
    alloc_in(1, |frame| {
        let low = DESCS + frame * PAGE;
        let high = DESCS_HIGH + frame * PAGE;
        if low < DESCS_END {
            Some(low)
        } else {
            Some(high).filter(|&va| va < DESCS_HIGH_END)
        }
    })
}

/// `pages` fresh frames at the place `at` gives the first one's number
/// (None: it has none).
fn alloc_in(pages: u64, at: impl Fn(u64) -> Option<u64>) -> Option<u64> {
    let first = sys::frame_alloc(ENV_SELF, FRAME_ANY).ok()?;
    let Some(va) = at(first).filter(|&va| sys::map(ENV_SELF, va, first, mf::WRITE).is_ok()) else {
        let _ = sys::frame_free(first);
        return None;
    };
    for i in 1..pages {
        let ok = sys::frame_alloc(ENV_SELF, FRAME_ANY).and_then(|f| {
            sys::map(ENV_SELF, va + i * PAGE, f, mf::WRITE).or_else(|e| sys::frame_free(f).and(Err(e)))
        });
        if ok.is_err() {
            release(va, i);
            return None;
        }
    }
    Some(va)
}

/// Unmaps this process's `pages` pages of a pipe at `va` (a description
/// page's one) and gives away those of its frames it owns (freed with
/// their last mapping).
pub fn release(va: u64, pages: u64) {
    for i in 0..span(va, pages) {
        let at = va + i * PAGE;
        let Some(pte) = crate::selfmap::pte(at) else { continue };
        let _ = sys::unmap(ENV_SELF, at);
        // Refused (`NotOwner`) in every process but the creator's line.
        let _ = sys::frame_disown(abi::pte::frame_of(pte));
    }
}

/// Maps the pipes at `bases` (sorted, deduplicated), `pages` each (a
/// description page's one), into child `env` at the same addresses,
/// writable (fork).
pub fn share_with(env: u64, bases: &[u64], pages: u64) -> Result<(), abi::Error> {
    for &b in bases {
        crate::range::map_from(env, b, b, span(b, pages), mf::WRITE)?;
    }
    Ok(())
}

/// Maps the pipe at `base` (`pages` pages) with its range's `ticket`,
/// which came with an end of it over a Unix socket: whether the pipe at
/// `base` is mapped now (`claim`).
pub fn take(base: u64, ticket: u64, pages: u64) -> bool {
    claim(base, ticket, pages).is_ok()
}

/// Maps the pipe at `base` (`pages` pages) with its range's `ticket` (an
/// end's over a Unix socket, a FIFO's beside its name): claims a loan of
/// the range, maps, and drops the loan. The ticket comes through the
/// arena: one that names another range (whose frames do not belong at
/// `base`) is undone (`NotOwner`). Otherwise the kernel's refusal:
/// `Denied` when the range's rule refuses this process.
pub fn claim(base: u64, ticket: u64, pages: u64) -> Result<(), abi::Error> {
    if !own(base) || self::base(base) != base {
        return Err(abi::Error::BadAddress);
    }
    if mapped(base) {
        return Ok(());
    }
    let slot = sys::range_claim(ticket, rights::READ | rights::WRITE)?;
    let pages = span(base, pages);
    let done = sys::range_map(slot, base, 0, pages, mf::WRITE);
    let _ = sys::cap_revoke(slot);
    done?;
    if crate::selfmap::pte(base).map(abi::pte::frame_of) == Some(first_frame(base)) {
        return Ok(());
    }
    release(base, pages);
    Err(abi::Error::NotOwner)
}

/// Maps the frames at `at` (a word beside a name or in a table of the
/// arena, so anything) with `ticket` for an opener by name, a sender, a
/// connector or a System V caller, unless this process maps them already
/// (`claim`): whether it just mapped them; None when no frames of their
/// own are there any more (no such range, or not at that address). EACCES when the range's rule refuses this process, ENOMEM
/// when the kernel had no room for the loan or the mapping.
pub fn claim_named(at: u64, ticket: u64, pages: u64) -> Result<Option<bool>, crate::errno::Errno> {
    use abi::Error::{BadAddress, BadLength, Denied, NotOwner, NotPermitted};
    if !guarded(at) || base(at) != at {
        return Ok(None);
    }
    if mapped(at) {
        return Ok(Some(false));
    }
    match claim(at, ticket, pages) {
        Ok(()) => Ok(Some(true)),
        Err(Denied) => Err(crate::errno::EACCES),
        Err(NotPermitted | BadLength | NotOwner | BadAddress) => Ok(None),
        Err(_) => Err(crate::errno::ENOMEM),
    }
}
