//! Named pipes (FIFOs): an `S_IFIFO` inode whose `data` names the ring
//! its open ends share, made on the first open and dropped, with whatever
//! it still held, when the last end closes, as on Linux. Opening follows
//! Linux: a reader waits for a writer and a writer for a reader (each
//! until the other side has opened once since it started waiting);
//! `O_NONBLOCK` readers never wait and `O_NONBLOCK` writers without a
//! reader fail with ENXIO; `O_RDWR` never waits and holds both sides. The
//! opener's waiting is its caller's (`io::open_fifo`): `open` says what to
//! wait for, `other_side` when it has come.
//!
//! The ring, its header and its open descriptions are in frames of their
//! own, as a pipe's (`pipemem`, issue 25), mapped only into the processes
//! that hold the FIFO open. The first opener makes them a range whose
//! rule is the inode's owner and mode bits (`rule`), and the inode keeps
//! their address and the range's ticket (`ticket`): a later opener, once
//! the library has checked the file's bits, maps them with the ticket,
//! and the kernel judges it by the rule (`pipemem::claim`). A process that
//! may not open the FIFO reads the ticket in the arena and cannot use it.
//! Fork maps them into a child that inherits a descriptor, and a process's
//! last close unmaps them (`fd`), as for pipes.

use super::flags::{ACCMODE, NONBLOCK, RDWR, WRONLY};
use super::pipe::{self, Pipe};
use super::{pipemem, File, Kind};
use crate::errno::Errno;
use crate::errno::{EACCES, EINVAL, ENOMEM, ENXIO};
use crate::fs::node::{self, Inode};
use crate::fs::Ino;
use crate::obj::Handle;
use abi::ident::{Ident, EFFECTIVE};

/// How often an opener waiting for the other side looks again (it sleeps
/// in between; no ring term says "an end was opened").
pub const RECHECK_NS: u64 = 5_000_000;

/// Opens FIFO `ino` with status flags `status` (access mode, nonblock):
/// the new end, and, when the opener must wait for the other side, how
/// many of its ends had been opened (`other_side` compares). The caller
/// has checked the file's bits.
pub fn open(ino: Ino, status: u32) -> Result<(Handle<File>, Option<u64>), Errno> {
    let acc = status & ACCMODE;
    if acc == ACCMODE {
        return Err(EINVAL);
    }
    let n = node::get(ino);
    let found = reach(&n, ino)?;
    // SAFETY: a ring mapped here that the inode names is live while it does.
    let readers = found.map_or(0, |(r, _)| unsafe { pipe::ends(r.as_ptr()) }.0);
    if acc == WRONLY && status & NONBLOCK != 0 && readers == 0 {
        if let Some((r, true)) = found {
            pipemem::release(r.addr(), pipe::GUARDED_PAGES);
        }
        return Err(ENXIO);
    }
    let (ring, mapped_now, made) = match found {
        Some((r, mapped_now)) => (r, mapped_now, None),
        None => {
            let (owner, mode) = rule(&n, &crate::fs::perm::me(), 0o6);
            let (ring, ticket) = pipe::make_fifo(ino, owner, mode)?;
            (ring, true, Some(ticket))
        }
    };
    let kind = if acc == WRONLY { Kind::PipeWrite } else { Kind::PipeRead };
    let f = match pipe::open_end(ring, kind, status, ino) {
        Ok(f) => f,
        Err(e) => {
            if made.is_some() {
                pipe::unmake_fifo(ring);
            } else if mapped_now {
                pipemem::release(ring.addr(), pipe::GUARDED_PAGES);
            }
            return Err(e);
        }
    };
    node::update(ino, |n| {
        n.opens += 1;
        if let Some(ticket) = made {
            n.data = ring.as_ptr() as *mut u8;
            n.ticket = ticket;
            n.borrowed = true;
        }
    });
    if acc == RDWR || status & NONBLOCK != 0 {
        return Ok((f, None));
    }
    // SAFETY: just made; no other reference to it here.
    Ok((f, Some(other(unsafe { f.get() }).1)))
}

/// The ring FIFO inode `n` (number `ino`) names, mapped here with the
/// ticket kept beside it if it was not already (and whether it was just
/// mapped); None if no end is open, or the ring it names is gone (its
/// holders ended without closing it) or is not this FIFO's. EACCES when the
/// range's rule refuses this process (the inode's bits changed since the
/// first open made it), ENOMEM when the kernel had no room to map it.
fn reach(n: &Inode, ino: Ino) -> Result<Option<(Handle<Pipe>, bool)>, Errno> {
    let at = n.data as u64;
    if at == 0 {
        return Ok(None);
    }
    let before = pipemem::mapped(at);
    if !before {
        use abi::Error::{BadAddress, BadLength, Denied, NotOwner, NotPermitted};
        match pipemem::claim(at, n.ticket, pipe::GUARDED_PAGES) {
            Ok(()) => {}
            Err(Denied) => return Err(EACCES),
            // No such range any more, or not at that address.
            Err(NotPermitted | BadLength | NotOwner | BadAddress) => return Ok(None),
            // No room for the loan or the mapping: not a reason to start
            // another ring beside the one the FIFO's holders use.
            Err(_) => return Err(ENOMEM),
        }
    }
    let ring = pipe::fifo_at(at, ino);
    if ring.is_none() && !before {
        pipemem::release(at, pipe::GUARDED_PAGES);
    }
    Ok(ring.map(|r| (r, !before)))
}

/// The rule of the frames `me` makes for inode `n` (`FRAME_RANGE`'s
/// owner and mode): the inode's owner and group, and for each class read
/// and write if the inode gives it any of `bits` (a FIFO's ring: read or
/// write, `0o6`, since a reader moves the ring's positions too and the
/// direction is the library's check; a listener's queue: write, `0o2`,
/// what `connect` needs). A maker that is not root names itself, and the
/// inode's group only if it is in it (the kernel lets only root name
/// others).
pub fn rule(n: &Inode, me: &Ident, bits: u32) -> (u64, u64) {
    let (uid, gid) = (me.uid[EFFECTIVE], me.gid[EFFECTIVE]);
    let root = uid == 0;
    let owner = if root { n.uid } else { uid };
    let group = if root || n.gid == gid || me.groups().contains(&n.gid) { n.gid } else { gid };
    let mode = (0..3).filter(|c| n.mode >> (3 * c) & bits != 0).fold(0, |m, c| m | 0o6 << (3 * c));
    (u64::from(owner) | u64::from(group) << 32, mode)
}

/// FIFO end `f`'s other side: its open count now, and its ends ever opened.
fn other(f: &File) -> (u32, u64) {
    let reads = f.kind == Kind::PipeRead && f.flags & ACCMODE != RDWR;
    // SAFETY: `f` is a live FIFO end; it keeps the ring live.
    let (readers, writers, opened) = unsafe { pipe::ends(f.object::<Pipe>().as_ptr()) };
    if reads {
        (writers, opened[1])
    } else {
        (readers, opened[0])
    }
}

/// Whether the other side of FIFO end `f` is open, or has been opened
/// since `open` counted `start` of its ends.
pub fn other_side(f: &File, start: u64) -> bool {
    let (open_now, opened) = other(f);
    open_now > 0 || opened != start
}
