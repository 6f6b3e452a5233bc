//! A bound Unix datagram socket's inbox in frames of its own (issue 25;
//! paper 000 §3.3 software regions and capabilities, as FIFOs'
//! `fifo.rs`). The inbox is a ring (`pipe`) whose bytes are the queued
//! datagrams, each with its length and its sender's name (`unix::frame`);
//! its frames are mapped into the processes that hold the socket (fork and
//! a passed socket map them, as for a socketpair's rings: `unix::any_ring`)
//! and into those that send to it.
//!
//! `bind` makes them a range whose rule is the socket file's owner, group
//! and write bits (sending to a named socket needs write permission on
//! its file, as on Linux; an abstract name's node is 0777, so anyone may
//! claim its inbox), and the node keeps the range's ticket beside the
//! name (`make`). A sender, once the library has checked the file's bits
//! (`unixaddr::find`), maps the frames with that ticket and the kernel
//! judges it by the rule (`reach`): a process the bits refuse reads the
//! ticket in the arena and cannot use it. `chmod` and `chown` of the file
//! carry the new bits to the rule (`fifo::bits_changed`).
//!
//! A sender keeps the inbox mapped while the socket lives (a send that
//! waits for room waits on the inbox's header), and lets it go at a later
//! send once it has closed (`trim`). Like a FIFO's writer, a sender maps
//! the whole ring, so it can read what other senders queued there: the
//! file's write bit is the class that may.

use super::{pipe, pipemem, File, Handle};
use crate::errno::{Errno, ECONNREFUSED};
use crate::fs::{node, Ino};
use crate::scoped::Scoped;
use alloc::vec::Vec;

/// The bits of a socket file's class that let it send (`pipemem::rule`).
pub(super) const SEND: u32 = 0o2;

/// The inboxes this process maps only to send to (their frames' bases).
static SENT_TO: Scoped<Vec<u64>> = Scoped::new("the inboxes sent to", Vec::new());

/// The inbox of a datagram socket bound at node `ino`: a ring in frames
/// of its own whose range's rule is the node's owner, group and write
/// bits, its ticket kept in the node for senders; (read end, write end).
pub fn make(ino: Ino) -> Result<(Handle<File>, Handle<File>), Errno> {
    let n = node::get(ino);
    let (owner, mode) = pipemem::rule(n.uid, n.gid, n.mode, SEND, &crate::fs::perm::me());
    let (r, w) = pipe::create_ruled(0, owner, mode)?;
    let ticket = pipe::ticket(r.addr()).unwrap_or(0);
    node::update(ino, |n| n.ticket = ticket);
    Ok((r, w))
}

/// Maps, for a send, the inbox whose write end is `end` (a bound socket's,
/// as the arena says) with the ticket kept beside its name `ino`, unless
/// this process maps it already (it holds the socket, or sent to it
/// before). EACCES when the range's rule refuses this process, ECONNREFUSED
/// when the frames are not there (the range ended, or the arena named
/// others), ENOMEM when the kernel had no room to map them.
pub fn reach(end: *mut File, ino: Ino) -> Result<(), Errno> {
    trim();
    let base = pipemem::base(end as u64);
    if pipemem::claim_named(base, node::get(ino).ticket, pipe::GUARDED_PAGES)?.ok_or(ECONNREFUSED)? {
        SENT_TO.with(|v| v.push(base));
    }
    Ok(())
}

/// Lets go of the inboxes this process mapped to send to whose socket has
/// closed everywhere (its ring has no reader left, so no descriptor here
/// names it either), and forgets those it no longer maps (a forked child's
/// copy of the list, a socket this process held and closed).
fn trim() {
    SENT_TO.with(|v| {
        v.retain(|&base| {
            if !pipemem::mapped(base) {
                return false;
            }
            // SAFETY: mapped here; a ring is the first thing in its frames.
            if unsafe { pipe::ends(base as *const pipe::Pipe) }.0 > 0 {
                return true;
            }
            pipemem::release(base, pipe::GUARDED_PAGES);
            false
        })
    });
}
